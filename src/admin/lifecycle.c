/*
 * The engine under a tenant's life beyond create and delete (export to an
 * archive and import from one in lifecycle_archive.c, moves between
 * placements in lifecycle_move.c): snapshot, restore and removal of one
 * tenant's rows.
 *
 * All three flows rest on two steps. A snapshot reads one tenant's rows of every
 * tenant table in one REPEATABLE READ transaction on one connection, each
 * table as one JSON array that PostgreSQL builds (so nothing here parses
 * rows on the loop). A restore writes such arrays into a placement under a
 * tenant id, in one transaction, parents first, with
 * json_populate_recordset(): ids stay as they were, which is safe because
 * they only need to be unique per tenant and every key leads with tenant_id.
 *
 * Export writes a snapshot as one JSON file in [admin] archive_dir, on the
 * CPU pool. Import reads and checks such a file on the CPU pool (an archive
 * is untrusted: its tables and columns are checked against the real ones
 * before they are named in SQL), makes a tenant as POST /admin/v1/tenants
 * does and restores into it. Move (lifecycle_move.c) restores a snapshot
 * into the target placement while the tenant keeps serving, then copies
 * the rows changed meanwhile (lifecycle_live.c), pauses the tenant's
 * writes for the last of them, points the control row at the target and
 * only then removes the rows from the source. Ids, tokens and Redis key
 * names do not change.
 *
 * Restores and removals run on a short-lived pool of one connection over the
 * placement, bound to the tenant id, without prepared statements: these
 * one-off statements would otherwise sit in the prepared-statement slots of
 * the connections the placement's tenants share. (A live move's pools are
 * not bound: they call only the eunha_move functions, given the id.)
 */
#include "lifecycle_internal.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admin_internal.h"
#include "eunha/admin.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/migrate.h"
#include "eunha/queue.h"
#include "eunha/tenant.h"

/* Rows removed per statement from the placement a tenant left: a few
 * milliseconds each, so its neighbours keep their share of the database. */
#define REMOVE_BATCH 500

/* A snapshot reads through the tenant's pool, whose placement connections
 * prepare a statement that starts with a verb (include/eunha/db.h): the
 * leading comment keeps these once-per-snapshot statements out of the slots
 * the API's statements use on connections the placement's tenants share. */
#define NOT_PREPARED "-- once per snapshot\n"

/* ------------------------------------------------------------ tables */

static int
tables_count(void)
{
    int n = 0;
    while (eu_db_tenant_tables[n])
        n++;
    return n;
}

int
eu_admin_table_index(const char *name)
{
    for (int i = 0; eu_db_tenant_tables[i]; i++)
        if (strcmp(eu_db_tenant_tables[i], name) == 0)
            return i;
    return -1;
}

static void
strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

bool
eu_admin_strv_has(char *const *v, const char *s)
{
    for (; v && *v; v++)
        if (strcmp(*v, s) == 0)
            return true;
    return false;
}

/* Appends a copy of s to v, which holds n entries; returns v. Caller frees
 * with strv_free(). */
char **
eu_admin_strv_add(char **v, int n, const char *s)
{
    v = eu_xrealloc(v, (size_t)(n + 2) * sizeof(*v));
    v[n] = eu_xstrdup(s);
    v[n + 1] = NULL;
    return v;
}

/* Returns empty rows for every tenant table; the caller frees them with
 * eu_admin_tables_free(). */
struct eu_admin_tables *
eu_admin_tables_new(void)
{
    struct eu_admin_tables *ts = eu_xcalloc(1, sizeof(*ts));
    ts->n = tables_count();
    ts->t = eu_xcalloc((size_t)ts->n, sizeof(*ts->t));
    return ts;
}

void
eu_admin_tables_free(struct eu_admin_tables *ts)
{
    if (!ts)
        return;
    for (int i = 0; i < ts->n; i++) {
        free(ts->t[i].json);
        strv_free(ts->t[i].columns);
    }
    free(ts->t);
    free(ts);
}

long long
eu_admin_tables_rows(const struct eu_admin_tables *ts)
{
    long long n = 0;
    for (int i = 0; i < ts->n; i++)
        n += ts->t[i].count;
    return n;
}

/* PostgreSQL's one-line message for a failed statement, or why there was
 * none. Borrowed from res. */
const char *
eu_admin_db_message(const PGresult *res, const char *none)
{
    const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    return msg ? msg : none;
}

/* Fills err from a failed statement or acquire; what says what was being
 * done ("restore table 'accounts'"). */
void
eu_admin_error_set_db(struct eu_error *err, enum eu_db_status st, const PGresult *res,
                      const char *what)
{
    if (st == EU_DB_TIMEOUT) {
        eu_error_set(err, 503, "The database is busy; try again shortly");
        return;
    }
    if (st != EU_DB_ERROR) {
        eu_error_set(err, 503, "The database is unavailable; try again shortly");
        return;
    }
    const char *state = eu_db_result_sqlstate(res);
    const char *msg = eu_admin_db_message(res, "bad data");
    /* Classes 22 and 23: data that does not fit the schema, which for an
     * archive is the archive's fault (and the caller's to log). */
    if (state[0] == '2' && (state[1] == '2' || state[1] == '3')) {
        eu_error_set(err, 422, "Validation failed: cannot %s: %s", what, msg);
        return;
    }
    eu_log_error("admin", "cannot %s: %s", what, msg);
    eu_error_set(err, 500, "Cannot %s", what);
}

void
eu_admin_reply_eu_error(struct eu_req *req, const struct eu_error *err)
{
    if (err->status == 503)
        eu_req_add_header(req, "Retry-After", "1");
    eu_req_reply_eu_error(req, err);
}

/*
 * Returns a pool of one connection over placement database db (on the
 * server url), without prepared statements; bound to tenant_id unless it is
 * 0. The caller frees it with eu_db_pool_free() once its connection is back.
 */
struct eu_db_pool *
eu_admin_placement_pool_new(struct eu_app *app, const char *url, const char *db, int64_t tenant_id)
{
    const struct eu_config *cfg = app->cfg;
    struct eu_db_pool_limits lim = {
        .max_connections = 1,
        .min_connections = 0,
        .acquire_timeout_s = cfg->pool_acquire_timeout_s,
        .idle_timeout_s = cfg->pool_idle_timeout_s,
    };
    struct eu_db_pool *pool = eu_db_pool_new(app->base, db, url, db, &lim);
    if (tenant_id)
        eu_db_pool_set_tenant(pool, tenant_id);
    eu_db_pool_set_prepared(pool, false);
    eu_db_pool_set_budget(pool, eu_registry_budget(app->registry));
    /* Made by another process since we migrated the placements, perhaps. */
    eu_db_pool_set_ready_hook(pool, eu_migrate_tenant_hook, "a placement being written to");
    return pool;
}

/* ----------------------------------------------------------- snapshot */

struct snapshot {
    struct eu_db_conn *conn;
    struct eu_admin_tables *rows;
    int next; /* index into eu_db_tenant_tables */
    enum eu_db_status st;
    eu_admin_snapshot_done_cb done;
    void *arg;
};

static void
snapshot_finish(struct snapshot *s)
{
    if (s->conn)
        eu_db_conn_release(s->conn);
    if (s->st != EU_DB_OK) {
        eu_admin_tables_free(s->rows);
        s->rows = NULL;
    }
    s->done(s->rows, s->st, s->arg);
    free(s);
}

static void
on_snapshot_closed(PGresult *res, enum eu_db_status st, void *arg)
{
    struct snapshot *s = arg;
    if (s->st == EU_DB_OK && st != EU_DB_OK) {
        eu_log_error("admin", "cannot end the snapshot: %s",
                     eu_admin_db_message(res, eu_db_conn_error(s->conn)));
        s->st = st;
    }
    snapshot_finish(s);
}

static void
snapshot_fail(struct snapshot *s, PGresult *res, enum eu_db_status st)
{
    eu_log_error("admin", "cannot read the tenant's rows of '%s': %s",
                 s->next < s->rows->n ? eu_db_tenant_tables[s->next] : "(all)",
                 eu_admin_db_message(res, eu_db_conn_error(s->conn)));
    s->st = st;
    eu_db_conn_exec(s->conn, "ROLLBACK", on_snapshot_closed, s);
}

static void snapshot_next(struct snapshot *s);

static void
on_snapshot_rows(PGresult *res, enum eu_db_status st, void *arg)
{
    struct snapshot *s = arg;
    if (st != EU_DB_OK) {
        snapshot_fail(s, res, st);
        return;
    }
    struct eu_admin_table_rows *tr = &s->rows->t[s->next];
    tr->count = atoll(PQgetvalue(res, 0, 0));
    if (tr->count > 0)
        tr->json = eu_xstrdup(PQgetvalue(res, 0, 1));
    s->next++;
    snapshot_next(s);
}

static void
snapshot_next(struct snapshot *s)
{
    if (s->next == s->rows->n) {
        eu_db_conn_exec(s->conn, "COMMIT", on_snapshot_closed, s);
        return;
    }
    /* Without tenant_id: an archive does not depend on the id it had. */
    char *sql = eu_xasprintf(NOT_PREPARED "SELECT count(*), coalesce(jsonb_agg(to_jsonb(x) -"
                                          " 'tenant_id'), '[]')::text FROM %s x"
                                          " WHERE x.tenant_id = $1",
                             eu_db_tenant_tables[s->next]);
    eu_db_conn_query(s->conn, sql, 0, NULL, on_snapshot_rows, s);
    free(sql);
}

static void
on_snapshot_begun(PGresult *res, enum eu_db_status st, void *arg)
{
    struct snapshot *s = arg;
    if (st != EU_DB_OK) {
        snapshot_fail(s, res, st);
        return;
    }
    snapshot_next(s);
}

static void
on_snapshot_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct snapshot *s = arg;
    if (!conn) {
        s->st = st;
        snapshot_finish(s);
        return;
    }
    s->conn = conn;
    /* One snapshot for every table: the archive is consistent without
     * locking anyone out. */
    eu_db_conn_exec(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", on_snapshot_begun, s);
}

/* Reads the rows of pool's tenant (a tenant pool) and calls done later. */
void
eu_admin_snapshot_start(struct eu_db_pool *pool, eu_admin_snapshot_done_cb done, void *arg)
{
    struct snapshot *s = eu_xcalloc(1, sizeof(*s));
    s->rows = eu_admin_tables_new();
    s->done = done;
    s->arg = arg;
    eu_db_pool_acquire(pool, on_snapshot_conn, s);
}

/* ------------------------------------------------------------ restore */

/* The placement's own columns of each tenant table, and where their names
 * come from: PostgreSQL's catalog, so an archive's keys can be checked. */
static const char CATALOG_SQL[] =
    "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
    " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'"
    " AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped ORDER BY c.relname, a.attnum";

/* New conversations are numbered from a sequence per placement; the
 * tenant's must not be handed out again in the placement it came to. And
 * the counters (migrations/tenant/0013) are rebuilt from the rows: the
 * archive's values plus what the triggers added as the rows went in would
 * count everything twice. */
const char eu_admin_sequence_sql[] =
    "SELECT setval('conversations_id_seq', greatest((SELECT last_value FROM"
    " conversations_id_seq), (SELECT coalesce(max(s.conversation_id), 1) FROM statuses s"
    " WHERE s.tenant_id = $1))), eunha_recount($1)";

/*
 * Media keys of the restored rows ($1: the tenant), each moved under the
 * tenant's own prefix "<id>/" when it names another: an archive is
 * untrusted (and one exported from another tenant names that tenant's
 * keys), and a row of this tenant naming another's file would let this
 * tenant's media jobs read it and its deletion delete it. The archive
 * holds no files; a rewritten key names a file the operator copies from
 * the old prefix or that is missing, never someone else's. URLs (remote
 * media, default avatars) are not keys and stay.
 */
static const char OWN_KEYS_SQL[] =
    "WITH m AS (UPDATE media_attachments SET"
    " file_key = CASE WHEN file_key LIKE '%://%' THEN file_key"
    " ELSE regexp_replace(file_key, '^([0-9]*/)?', $1::bigint::text || '/') END,"
    " preview_key = CASE WHEN preview_key LIKE '%://%' THEN preview_key"
    " ELSE regexp_replace(preview_key, '^([0-9]*/)?', $1::bigint::text || '/') END"
    " WHERE tenant_id = $1::bigint AND (file_key NOT LIKE $1::bigint::text || '/%'"
    " OR preview_key NOT LIKE $1::bigint::text || '/%') RETURNING 1),"
    " a AS (UPDATE accounts SET"
    " avatar_url = CASE WHEN avatar_url LIKE '%://%' THEN avatar_url"
    " ELSE regexp_replace(avatar_url, '^([0-9]*/)?', $1::bigint::text || '/') END,"
    " header_url = CASE WHEN header_url LIKE '%://%' THEN header_url"
    " ELSE regexp_replace(header_url, '^([0-9]*/)?', $1::bigint::text || '/') END"
    " WHERE tenant_id = $1::bigint AND domain IS NULL"
    " AND (avatar_url NOT LIKE $1::bigint::text || '/%' OR header_url NOT LIKE"
    " $1::bigint::text || '/%') RETURNING 1)"
    " SELECT (SELECT count(*) FROM m) + (SELECT count(*) FROM a)";

/* Rows that triggers write when statuses and mentions go in (see
 * migrations/tenant/0006_social.sql); the restored rows replace them. */
static const char TRIGGER_TABLE[] = "account_conversations";

struct restore {
    struct eu_db_pool *pool;
    struct eu_db_conn *conn;
    const struct eu_admin_tables *rows; /* borrowed */
    char ***columns;                    /* per table, from the catalog */
    int next;                           /* index into eu_db_tenant_tables */
    bool in_tx;
    bool triggered_cleared;
    struct eu_error err;
    eu_admin_restore_done_cb done;
    void *arg;
};

static void
restore_finish(struct restore *r)
{
    if (r->conn)
        eu_db_conn_release(r->conn);
    eu_db_pool_free(r->pool);
    for (int i = 0; r->columns && i < r->rows->n; i++)
        strv_free(r->columns[i]);
    free(r->columns);
    struct eu_error err = r->err;
    eu_admin_restore_done_cb done = r->done;
    void *arg = r->arg;
    free(r);
    done(&err, arg);
}

static void
on_restore_rolled_back(PGresult *res, enum eu_db_status st, void *arg)
{
    restore_finish(arg);
}

/* Ends the restore with r->err set. */
static void
restore_abort(struct restore *r)
{
    if (!r->in_tx) {
        restore_finish(r);
        return;
    }
    r->in_tx = false;
    eu_db_conn_exec(r->conn, "ROLLBACK", on_restore_rolled_back, r);
}

static void
restore_fail(struct restore *r, PGresult *res, enum eu_db_status st, const char *what)
{
    eu_admin_error_set_db(&r->err, st, res, what);
    restore_abort(r);
}

static void
on_restore_committed(PGresult *res, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    r->in_tx = false;
    if (st != EU_DB_OK)
        eu_admin_error_set_db(&r->err, st, res, "commit the restored rows");
    restore_finish(r);
}

static void
on_sequence_set(PGresult *res, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    if (st != EU_DB_OK) {
        restore_fail(r, res, st, "move the conversation sequence on");
        return;
    }
    eu_db_conn_exec(r->conn, "COMMIT", on_restore_committed, r);
}

static void
on_keys_owned(PGresult *res, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    if (st != EU_DB_OK) {
        restore_fail(r, res, st, "keep the media keys under the tenant");
        return;
    }
    long long moved = PQntuples(res) == 1 ? atoll(PQgetvalue(res, 0, 0)) : 0;
    if (moved)
        eu_log_warn("admin",
                    "%lld restored rows named media files of another tenant; their keys now lie "
                    "under this one's",
                    moved);
    eu_db_conn_query(r->conn, eu_admin_sequence_sql, 0, NULL, on_sequence_set, r);
}

/* Writes ident double-quoted, as SQL wants a name that came from data. */
static void
put_ident(FILE *f, const char *ident)
{
    fputc('"', f);
    for (const char *c = ident; *c; c++) {
        if (*c == '"')
            fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

/*
 * Returns the INSERT for table i (the caller frees it), or NULL with r->err
 * set when the rows name a column the table does not have. Only columns the
 * rows have are named, so a column an older archive lacks gets its default.
 * tenant_id is the restore's, never the archive's.
 */
static char *
insert_sql(struct restore *r, int i)
{
    const char *table = eu_db_tenant_tables[i];
    char **have = r->columns[i];
    char **want = r->rows->t[i].columns ? r->rows->t[i].columns : have;
    if (!have) {
        eu_error_set(&r->err, 500, "The placement has no table '%s'", table);
        return NULL;
    }
    for (char **c = want; *c; c++) {
        if (!eu_admin_strv_has(have, *c)) {
            eu_error_set(&r->err, 422,
                         "Validation failed: the archive's table '%s' has a column '%.64s' that "
                         "this server does not know",
                         table, *c);
            return NULL;
        }
    }
    char *sql = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&sql, &len);
    fprintf(f, "INSERT INTO %s (tenant_id", table);
    for (char **c = want; *c; c++) {
        if (strcmp(*c, "tenant_id") == 0)
            continue;
        fputs(", ", f);
        put_ident(f, *c);
    }
    fputs(") SELECT $1", f);
    for (char **c = want; *c; c++) {
        if (strcmp(*c, "tenant_id") == 0)
            continue;
        fputs(", r.", f);
        put_ident(f, *c);
    }
    fprintf(f, " FROM json_populate_recordset(NULL::%s, $2::json) r", table);
    fclose(f);
    return sql;
}

static void restore_insert_next(struct restore *r);

static void
on_rows_inserted(PGresult *res, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    if (st != EU_DB_OK) {
        char what[80];
        snprintf(what, sizeof(what), "restore table '%s'", eu_db_tenant_tables[r->next]);
        restore_fail(r, res, st, what);
        return;
    }
    r->next--;
    restore_insert_next(r);
}

static void
on_triggered_cleared(PGresult *res, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    if (st != EU_DB_OK) {
        restore_fail(r, res, st, "clear the rows triggers wrote");
        return;
    }
    r->triggered_cleared = true;
    restore_insert_next(r);
}

/* Inserts the next table's rows, parents before the tables that refer to
 * them (eu_db_tenant_tables backwards), then moves the sequence on. */
static void
restore_insert_next(struct restore *r)
{
    for (; r->next >= 0; r->next--) {
        const char *table = eu_db_tenant_tables[r->next];
        if (strcmp(table, TRIGGER_TABLE) == 0 && !r->triggered_cleared) {
            char *sql = eu_xasprintf("DELETE FROM %s WHERE tenant_id = $1", table);
            eu_db_conn_query(r->conn, sql, 0, NULL, on_triggered_cleared, r);
            free(sql);
            return;
        }
        const struct eu_admin_table_rows *tr = &r->rows->t[r->next];
        if (!tr->json || tr->count == 0)
            continue;
        char *sql = insert_sql(r, r->next);
        if (!sql) {
            restore_abort(r);
            return;
        }
        const char *params[] = {tr->json};
        eu_db_conn_query(r->conn, sql, 1, params, on_rows_inserted, r);
        free(sql);
        return;
    }
    eu_db_conn_query(r->conn, OWN_KEYS_SQL, 0, NULL, on_keys_owned, r);
}

static void restore_clear_next(struct restore *r);

static void
on_leftovers_cleared(PGresult *res, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    if (st != EU_DB_OK) {
        restore_fail(r, res, st, "clear the placement's rows of the tenant");
        return;
    }
    r->next++;
    restore_clear_next(r);
}

/*
 * Empties the tenant's rows in the placement, children first. A new tenant
 * has none; a tenant moving here has none unless an earlier move to here
 * stopped half-way, and those rows are garbage: the control row names the
 * source, which a move never writes to.
 */
static void
restore_clear_next(struct restore *r)
{
    if (r->next == r->rows->n) {
        r->next = r->rows->n - 1;
        restore_insert_next(r);
        return;
    }
    char *sql = eu_xasprintf("DELETE FROM %s WHERE tenant_id = $1", eu_db_tenant_tables[r->next]);
    eu_db_conn_query(r->conn, sql, 0, NULL, on_leftovers_cleared, r);
    free(sql);
}

static void
on_restore_begun(PGresult *res, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    if (st != EU_DB_OK) {
        restore_fail(r, res, st, "begin the restore");
        return;
    }
    r->in_tx = true;
    r->next = 0;
    restore_clear_next(r);
}

static void
on_catalog(PGresult *res, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    if (st != EU_DB_OK) {
        restore_fail(r, res, st, "read the placement's columns");
        return;
    }
    int counts[r->rows->n];
    memset(counts, 0, sizeof(counts));
    for (int row = 0; row < PQntuples(res); row++) {
        int i = eu_admin_table_index(PQgetvalue(res, row, 0));
        if (i < 0)
            continue;
        r->columns[i] = eu_admin_strv_add(r->columns[i], counts[i]++, PQgetvalue(res, row, 1));
    }
    eu_db_conn_exec(r->conn, "BEGIN", on_restore_begun, r);
}

static void
on_restore_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    if (!conn) {
        eu_admin_error_set_db(&r->err, st, NULL, "connect to the placement");
        restore_finish(r);
        return;
    }
    r->conn = conn;
    eu_db_conn_query(conn, CATALOG_SQL, 0, NULL, on_catalog, r);
}

/*
 * Writes rows (borrowed until done runs) into placement database db on the
 * server url as tenant tenant_id's, replacing whatever rows of that tenant
 * the placement held, in one transaction. Calls done later.
 */
void
eu_admin_restore_start(struct eu_app *app, const char *url, const char *db, int64_t tenant_id,
                       const struct eu_admin_tables *rows, eu_admin_restore_done_cb done, void *arg)
{
    struct restore *r = eu_xcalloc(1, sizeof(*r));
    r->pool = eu_admin_placement_pool_new(app, url, db, tenant_id);
    r->rows = rows;
    r->columns = eu_xcalloc((size_t)rows->n, sizeof(*r->columns));
    r->done = done;
    r->arg = arg;
    eu_db_pool_acquire(r->pool, on_restore_conn, r);
}

/* ------------------------------------------------------------ removal */

/* Removes a tenant's rows from a placement it no longer lives in. */
struct removal {
    struct eu_db_pool *pool;
    int table; /* index into eu_db_tenant_tables */
    long long rows;
    eu_admin_done_cb done;
    void *arg;
};

static void
removal_finish(struct removal *rm, int rc)
{
    eu_db_pool_free(rm->pool);
    eu_admin_done_cb done = rm->done;
    void *arg = rm->arg;
    free(rm);
    done(rc, arg);
}

static void removal_next(struct removal *rm);

static void
on_removal_batch(PGresult *res, enum eu_db_status st, void *arg)
{
    struct removal *rm = arg;
    if (st != EU_DB_OK) {
        eu_log_error("admin", "cannot remove rows of '%s': %s", eu_db_tenant_tables[rm->table],
                     eu_admin_db_message(res, "placement unavailable"));
        removal_finish(rm, -1);
        return;
    }
    long n = atol(PQcmdTuples(res));
    rm->rows += n;
    if (n < REMOVE_BATCH)
        rm->table++;
    removal_next(rm);
}

static void
removal_next(struct removal *rm)
{
    const char *table = eu_db_tenant_tables[rm->table];
    if (!table) {
        removal_finish(rm, 0);
        return;
    }
    /* The batch statement of src/admin/purge.c, children first. */
    char *sql = eu_xasprintf("DELETE FROM %s WHERE tenant_id = $1 AND ctid = ANY (ARRAY("
                             "SELECT ctid FROM %s WHERE tenant_id = $1 LIMIT %d))",
                             table, table, REMOVE_BATCH);
    eu_db_pool_query(rm->pool, sql, 0, NULL, on_removal_batch, rm);
    free(sql);
}

/* Removes tenant_id's rows from pooled placement database db on the server
 * url in batches, then calls done. */
void
eu_admin_removal_start(struct eu_app *app, const char *url, const char *db, int64_t tenant_id,
                       eu_admin_done_cb done, void *arg)
{
    struct removal *rm = eu_xcalloc(1, sizeof(*rm));
    rm->pool = eu_admin_placement_pool_new(app, url, db, tenant_id);
    rm->done = done;
    rm->arg = arg;
    removal_next(rm);
}
