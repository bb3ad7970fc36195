/*
 * Shared by the tenant lifecycle's files: the engine (lifecycle.c:
 * snapshot, restore and removal of one tenant's rows; lifecycle_live.c:
 * the changes made while a tenant moves, and its Redis keys) and the flows
 * that use it (lifecycle_archive.c: export and import; lifecycle_move.c:
 * move between placements). Nobody else includes it.
 */
#ifndef EUNHA_ADMIN_LIFECYCLE_INTERNAL_H
#define EUNHA_ADMIN_LIFECYCLE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "admin_internal.h"
#include "eunha/db.h"

struct eu_app;
struct eu_error;
struct eu_req;
struct pg_result;

/* One table's rows of one tenant. */
struct eu_admin_table_rows {
    char *json; /* JSON array of row objects without tenant_id; NULL: no rows */
    long long count;
    char **columns; /* the rows' keys, NULL-terminated; NULL: all the table's columns */
};

/* Rows of every tenant table, indexed like eu_db_tenant_tables. */
struct eu_admin_tables {
    int n;
    struct eu_admin_table_rows *t;
};

/* Returns empty rows for every tenant table; the caller frees them with
 * eu_admin_tables_free(). */
struct eu_admin_tables *eu_admin_tables_new(void);
void eu_admin_tables_free(struct eu_admin_tables *ts);
/* Rows in all tables. */
long long eu_admin_tables_rows(const struct eu_admin_tables *ts);
/* The index of tenant table name in eu_db_tenant_tables, or -1. */
int eu_admin_table_index(const char *name);
/* Whether the NULL-terminated v (may be NULL) holds s. */
bool eu_admin_strv_has(char *const *v, const char *s);
/* Appends a copy of s to v, which holds n entries; returns v. The caller
 * frees v with its entries (eu_admin_tables_free() does, for columns). */
char **eu_admin_strv_add(char **v, int n, const char *s);

/* PostgreSQL's one-line message for a failed statement, or none when there
 * was none. Borrowed from res. */
const char *eu_admin_db_message(const struct pg_result *res, const char *none);
/* Fills err from a failed statement or acquire; what says what was being
 * done ("restore table 'accounts'"): 503 for a busy or unavailable
 * database, 422 for data that does not fit the schema (an archive's
 * fault), else 500 after logging. */
void eu_admin_error_set_db(struct eu_error *err, enum eu_db_status st, const struct pg_result *res,
                           const char *what);
/* Answers err, with Retry-After on a 503. */
void eu_admin_reply_eu_error(struct eu_req *req, const struct eu_error *err);

/* rows is NULL unless st is EU_DB_OK; the callback owns it. */
typedef void (*eu_admin_snapshot_done_cb)(struct eu_admin_tables *rows, enum eu_db_status st,
                                          void *arg);
/* Reads the rows of pool's tenant (a tenant pool) in one REPEATABLE READ
 * transaction and calls done later. */
void eu_admin_snapshot_start(struct eu_db_pool *pool, eu_admin_snapshot_done_cb done, void *arg);

/* err->status is 0 on success. err is borrowed for the call. */
typedef void (*eu_admin_restore_done_cb)(const struct eu_error *err, void *arg);
/*
 * Writes rows (borrowed until done runs) into placement database db on the
 * server url as tenant tenant_id's, replacing whatever rows of that tenant
 * the placement held, in one transaction. Calls done later.
 */
void eu_admin_restore_start(struct eu_app *app, const char *url, const char *db, int64_t tenant_id,
                            const struct eu_admin_tables *rows, eu_admin_restore_done_cb done,
                            void *arg);

/* Removes tenant_id's rows from pooled placement database db on the server
 * url in batches, then calls done. */
void eu_admin_removal_start(struct eu_app *app, const char *url, const char *db, int64_t tenant_id,
                            eu_admin_done_cb done, void *arg);

/*
 * Returns a pool of one connection over placement database db (on the
 * server url), without prepared statements; bound to tenant_id unless it is
 * 0. The caller frees it with eu_db_pool_free() once its connection is back.
 */
struct eu_db_pool *eu_admin_placement_pool_new(struct eu_app *app, const char *url, const char *db,
                                               int64_t tenant_id);
/* Moves the conversation sequence past the tenant's ($1) conversations and
 * rebuilds its counters from its rows: the last step of a restore. */
extern const char eu_admin_sequence_sql[];

/* ---- a live move (lifecycle_live.c) ---- */

struct eu_admin_live;
/* err->status is 0 on success; err is borrowed for the call. */
typedef void (*eu_admin_live_cb)(const struct eu_error *err, void *arg);
/* Returns the state of tenant_id's move from placement database src_db (on
 * server src_url) to dst_db (on dst_url); nothing is sent yet. Ended (and
 * freed) by eu_admin_live_end(). The strings are copied. */
struct eu_admin_live *eu_admin_live_new(struct eu_app *app, const char *src_url, const char *src_db,
                                        const char *dst_url, const char *dst_db, int64_t tenant_id);
/* Takes the tenant's move lock on the source (409 when another move holds
 * it) and starts noting its changed rows there; calls done later. Rows
 * committed from the time done is called are noted. */
void eu_admin_live_watch(struct eu_admin_live *l, eu_admin_live_cb done, void *arg);
/* From now until eu_admin_live_end(), the source's triggers refuse the
 * tenant's writes (an error PostgreSQL reports as a cancelled statement,
 * which eunha answers 503 or retries): writes of other processes, which do
 * not know of the pause. */
void eu_admin_live_pause(struct eu_admin_live *l, eu_admin_live_cb done, void *arg);
/* Copies the rows noted as changed from the source to the target, as they
 * are on the source now, until a batch takes every note there was (or,
 * with until_empty, until none is left: the tenant writes nothing then). */
void eu_admin_live_catch_up(struct eu_admin_live *l, bool until_empty, eu_admin_live_cb done,
                            void *arg);
/* Rows the last catch-up copied. */
long long eu_admin_live_round_rows(const struct eu_admin_live *l);
/* Runs eu_admin_sequence_sql on the target after the last catch-up. */
void eu_admin_live_finish_target(struct eu_admin_live *l, eu_admin_live_cb done, void *arg);
/* Stops noting (drops the triggers, the notes, the pause and the lock;
 * failures are logged), frees l and calls done (may be NULL) later or now.
 * failed: the move did not take effect, so the pause ends first rather
 * than last. l may be NULL. */
void eu_admin_live_end(struct eu_admin_live *l, bool failed, eu_admin_done_cb done, void *arg);

/* err->status is 0 on success (keys: how many were copied). */
typedef void (*eu_admin_redis_cb)(const struct eu_error *err, long long keys, void *arg);
/* Copies every key under prefix from the Redis at src_url to the one at
 * dst_url (MIGRATE ... COPY REPLACE, so the source keeps them), over a
 * connection of its own; calls done later. */
void eu_admin_redis_copy(struct eu_app *app, const char *src_url, const char *dst_url,
                         const char *prefix, eu_admin_redis_cb done, void *arg);
/* Removes every key under prefix from the Redis at url (SCAN, UNLINK), as
 * a move does on its source's Redis once the target serves the tenant;
 * keys: how many were removed. */
void eu_admin_redis_remove(struct eu_app *app, const char *url, const char *prefix,
                           eu_admin_redis_cb done, void *arg);
/* Whether the Redis at url answers PING within 5 s, over a connection of
 * its own: err->status 422 with why (for the operator) when it does not. */
void eu_admin_redis_ping(struct eu_app *app, const char *url, eu_admin_redis_cb done, void *arg);

#endif
