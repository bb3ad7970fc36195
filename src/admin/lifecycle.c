/*
 * A tenant's life beyond create and delete: export to an archive, import
 * from one, and move between placements.
 *
 * All three rest on two steps. A snapshot reads one tenant's rows of every
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
 * does and restores into it. Move marks the tenant moving (public requests
 * answer 503, admin writes 409, its workers take no turn), waits for its
 * requests and background turns in flight to end, takes a snapshot, restores
 * it into the target placement under the same tenant id, points the control
 * row at the target and only then removes the rows from the source. Ids,
 * tokens and Redis keys (named by the tenant id) do not change. Since
 * nothing writes while it moves, both copies are complete at every step:
 * whichever the control row names is the tenant, the other is garbage.
 *
 * Restores and removals run on a short-lived pool of one connection over the
 * placement, bound to the tenant id, without prepared statements: these
 * one-off statements would otherwise sit in the prepared-statement slots of
 * the connections the placement's tenants share.
 */
#include "eunha/admin.h"

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

#define ARCHIVE_FORMAT "eunha-tenant-archive"
#define ARCHIVE_VERSION 1
/* An import holds an archive several times over while it checks it (the
 * file, jansson's tree, one JSON text per table), so the cap is far below
 * what PostgreSQL could take. */
#define ARCHIVE_MAX_BYTES (256L * 1024 * 1024)
/* Distinct keys an archive's rows of one table may have; the widest table
 * has fewer than 30 columns. */
#define MAX_COLUMNS 64
/* Rows removed per statement from the placement a tenant left: a few
 * milliseconds each, so its neighbours keep their share of the database. */
#define REMOVE_BATCH 500
/* How long a move waits for the tenant's requests and background turns in
 * flight, polling every DRAIN_POLL_MS. */
#define DRAIN_MS 10000
#define DRAIN_POLL_MS 10
/* Tries, a second apart, to learn whether a switch the control database
 * did not answer took effect. */
#define RESOLVE_TRIES 30
/* A move holds the registry's reference and its request's; more are
 * requests or background turns still running. */
#define IDLE_REFS 2

/* A snapshot reads through the tenant's pool, whose placement connections
 * prepare a statement that starts with a verb (include/eunha/db.h): the
 * leading comment keeps these once-per-snapshot statements out of the slots
 * the API's statements use on connections the placement's tenants share. */
#define NOT_PREPARED "-- once per snapshot\n"

/* ------------------------------------------------------------ tables */

/* One table's rows of one tenant. */
struct table_rows {
    char *json; /* JSON array of row objects without tenant_id; NULL: no rows */
    long long count;
    char **columns; /* the rows' keys, NULL-terminated; NULL: all the table's columns */
};

/* Rows of every tenant table, indexed like eu_db_tenant_tables. */
struct tables {
    int n;
    struct table_rows *t;
};

static int
tables_count(void)
{
    int n = 0;
    while (eu_db_tenant_tables[n])
        n++;
    return n;
}

static int
table_index(const char *name)
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

static bool
strv_has(char *const *v, const char *s)
{
    for (; v && *v; v++)
        if (strcmp(*v, s) == 0)
            return true;
    return false;
}

/* Appends a copy of s to v, which holds n entries; returns v. Caller frees
 * with strv_free(). */
static char **
strv_add(char **v, int n, const char *s)
{
    v = eu_xrealloc(v, (size_t)(n + 2) * sizeof(*v));
    v[n] = eu_xstrdup(s);
    v[n + 1] = NULL;
    return v;
}

/* Returns empty rows for every tenant table; the caller frees them with
 * tables_free(). */
static struct tables *
tables_new(void)
{
    struct tables *ts = eu_xcalloc(1, sizeof(*ts));
    ts->n = tables_count();
    ts->t = eu_xcalloc((size_t)ts->n, sizeof(*ts->t));
    return ts;
}

static void
tables_free(struct tables *ts)
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

static long long
tables_rows(const struct tables *ts)
{
    long long n = 0;
    for (int i = 0; i < ts->n; i++)
        n += ts->t[i].count;
    return n;
}

/* PostgreSQL's one-line message for a failed statement, or why there was
 * none. Borrowed from res. */
static const char *
db_message(const PGresult *res, const char *none)
{
    const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    return msg ? msg : none;
}

/* Fills err from a failed statement or acquire; what says what was being
 * done ("restore table 'accounts'"). */
static void
set_db_error(struct eu_error *err, enum eu_db_status st, const PGresult *res, const char *what)
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
    const char *msg = db_message(res, "bad data");
    /* Classes 22 and 23: data that does not fit the schema, which for an
     * archive is the archive's fault (and the caller's to log). */
    if (state[0] == '2' && (state[1] == '2' || state[1] == '3')) {
        eu_error_set(err, 422, "Validation failed: cannot %s: %s", what, msg);
        return;
    }
    eu_log_error("admin", "cannot %s: %s", what, msg);
    eu_error_set(err, 500, "Cannot %s", what);
}

static void
reply_error(struct eu_req *req, const struct eu_error *err)
{
    if (err->status == 503)
        eu_req_add_header(req, "Retry-After", "1");
    eu_req_reply_eu_error(req, err);
}

static long long
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Returns a pool of one connection over placement database db (on the
 * server url), bound to tenant_id, without prepared statements. The caller
 * frees it with eu_db_pool_free() once its connection is back.
 */
static struct eu_db_pool *
placement_pool_new(struct eu_app *app, const char *url, const char *db, int64_t tenant_id)
{
    const struct eu_config *cfg = app->cfg;
    struct eu_db_pool_limits lim = {
        .max_connections = 1,
        .min_connections = 0,
        .acquire_timeout_s = cfg->pool_acquire_timeout_s,
        .idle_timeout_s = cfg->pool_idle_timeout_s,
    };
    struct eu_db_pool *pool = eu_db_pool_new(app->base, db, url, db, &lim);
    eu_db_pool_set_tenant(pool, tenant_id);
    eu_db_pool_set_prepared(pool, false);
    eu_db_pool_set_budget(pool, eu_registry_budget(app->registry));
    /* Made by another process since we migrated the placements, perhaps. */
    eu_db_pool_set_ready_hook(pool, eu_migrate_tenant_hook, "a placement being written to");
    return pool;
}

/* ----------------------------------------------------------- snapshot */

/* rows is NULL unless st is EU_DB_OK; the callback owns it. */
typedef void (*snapshot_done_cb)(struct tables *rows, enum eu_db_status st, void *arg);

struct snapshot {
    struct eu_db_conn *conn;
    struct tables *rows;
    int next; /* index into eu_db_tenant_tables */
    enum eu_db_status st;
    snapshot_done_cb done;
    void *arg;
};

static void
snapshot_finish(struct snapshot *s)
{
    if (s->conn)
        eu_db_conn_release(s->conn);
    if (s->st != EU_DB_OK) {
        tables_free(s->rows);
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
                     db_message(res, eu_db_conn_error(s->conn)));
        s->st = st;
    }
    snapshot_finish(s);
}

static void
snapshot_fail(struct snapshot *s, PGresult *res, enum eu_db_status st)
{
    eu_log_error("admin", "cannot read the tenant's rows of '%s': %s",
                 s->next < s->rows->n ? eu_db_tenant_tables[s->next] : "(all)",
                 db_message(res, eu_db_conn_error(s->conn)));
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
    struct table_rows *tr = &s->rows->t[s->next];
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
static void
snapshot_start(struct eu_db_pool *pool, snapshot_done_cb done, void *arg)
{
    struct snapshot *s = eu_xcalloc(1, sizeof(*s));
    s->rows = tables_new();
    s->done = done;
    s->arg = arg;
    eu_db_pool_acquire(pool, on_snapshot_conn, s);
}

/* ------------------------------------------------------------ restore */

/* err->status is 0 on success. err is borrowed for the call. */
typedef void (*restore_done_cb)(const struct eu_error *err, void *arg);

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
static const char SEQUENCE_SQL[] =
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
    const struct tables *rows; /* borrowed */
    char ***columns;           /* per table, from the catalog */
    int next;                  /* index into eu_db_tenant_tables */
    bool in_tx;
    bool triggered_cleared;
    struct eu_error err;
    restore_done_cb done;
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
    restore_done_cb done = r->done;
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
    set_db_error(&r->err, st, res, what);
    restore_abort(r);
}

static void
on_restore_committed(PGresult *res, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    r->in_tx = false;
    if (st != EU_DB_OK)
        set_db_error(&r->err, st, res, "commit the restored rows");
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
    eu_db_conn_query(r->conn, SEQUENCE_SQL, 0, NULL, on_sequence_set, r);
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
        if (!strv_has(have, *c)) {
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
        const struct table_rows *tr = &r->rows->t[r->next];
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
        int i = table_index(PQgetvalue(res, row, 0));
        if (i < 0)
            continue;
        r->columns[i] = strv_add(r->columns[i], counts[i]++, PQgetvalue(res, row, 1));
    }
    eu_db_conn_exec(r->conn, "BEGIN", on_restore_begun, r);
}

static void
on_restore_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct restore *r = arg;
    if (!conn) {
        set_db_error(&r->err, st, NULL, "connect to the placement");
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
static void
restore_start(struct eu_app *app, const char *url, const char *db, int64_t tenant_id,
              const struct tables *rows, restore_done_cb done, void *arg)
{
    struct restore *r = eu_xcalloc(1, sizeof(*r));
    r->pool = placement_pool_new(app, url, db, tenant_id);
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
                     db_message(res, "placement unavailable"));
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
static void
removal_start(struct eu_app *app, const char *url, const char *db, int64_t tenant_id,
              eu_admin_done_cb done, void *arg)
{
    struct removal *rm = eu_xcalloc(1, sizeof(*rm));
    rm->pool = placement_pool_new(app, url, db, tenant_id);
    rm->done = done;
    rm->arg = arg;
    removal_next(rm);
}

/* ---------------------------------------------------------- handlers */

/* ---- POST /admin/v1/tenants/:domain/export ---- */

struct export_call {
    struct eu_req *req;
    struct tables *rows;
    /* Read by the pool thread: copies, since a SIGHUP may replace the
     * config and a PATCH rename the tenant meanwhile. */
    char *dir, *domain, *manifest;
    char *path; /* the archive written */
    struct eu_error err;
};

/* Writes the manifest with the tables after it; returns 0 or -1 (errno). */
static int
write_archive(FILE *f, const struct export_call *e)
{
    /* The manifest is an object; the tables go in before its closing brace,
     * so a reader finds the schema version first. */
    size_t mlen = strlen(e->manifest);
    if (fwrite(e->manifest, 1, mlen - 1, f) != mlen - 1 || fputs(",\"tables\":{", f) < 0)
        return -1;
    /* Parents first, the order an importer inserts in. */
    bool first = true;
    for (int i = e->rows->n - 1; i >= 0; i--) {
        const char *json = e->rows->t[i].json ? e->rows->t[i].json : "[]";
        if (fprintf(f, "%s\"%s\":", first ? "" : ",", eu_db_tenant_tables[i]) < 0 ||
            fputs(json, f) < 0)
            return -1;
        first = false;
    }
    return fputs("}}\n", f) < 0 ? -1 : 0;
}

/* Runs on a CPU pool thread: the archive goes to a hidden temporary file,
 * then is linked under its name, so no reader sees half an archive and no
 * archive is overwritten. */
static void
export_work(void *arg)
{
    struct export_call *e = arg;
    char why[128];
    if (mkdir(e->dir, 0700) < 0 && errno != EEXIST) {
        eu_error_set(&e->err, 500, "Cannot create the archive directory '%s': %s", e->dir,
                     strerror_r(errno, why, sizeof(why)));
        return;
    }
    char *tmp = eu_xasprintf("%s/.export-XXXXXX", e->dir);
    int fd = mkstemp(tmp); /* 0600: archives hold password hashes and keys */
    if (fd < 0) {
        eu_error_set(&e->err, 500, "Cannot write to the archive directory '%s': %s", e->dir,
                     strerror_r(errno, why, sizeof(why)));
        free(tmp);
        return;
    }
    FILE *f = fdopen(fd, "w");
    int rc = f ? write_archive(f, e) : -1;
    if (rc == 0 && (fflush(f) != 0 || fsync(fd) < 0))
        rc = -1;
    int saved = errno;
    if (f)
        fclose(f);
    else
        close(fd);
    if (rc < 0) {
        eu_error_set(&e->err, 500, "Cannot write the archive: %s",
                     strerror_r(saved, why, sizeof(why)));
        goto out_unlink;
    }
    long long now = (long long)time(NULL);
    for (int n = 1; n < 100 && !e->path; n++) {
        char *path = n == 1 ? eu_xasprintf("%s/%s-%lld.json", e->dir, e->domain, now)
                            : eu_xasprintf("%s/%s-%lld-%d.json", e->dir, e->domain, now, n);
        if (link(tmp, path) == 0) {
            e->path = path;
            break;
        }
        saved = errno;
        free(path);
        if (saved != EEXIST) {
            eu_error_set(&e->err, 500, "Cannot name the archive: %s",
                         strerror_r(saved, why, sizeof(why)));
            break;
        }
    }
    if (!e->path && !e->err.status)
        eu_error_set(&e->err, 500, "Cannot name the archive: too many in one second");
out_unlink:
    unlink(tmp);
    free(tmp);
}

static void
export_done(void *arg)
{
    struct export_call *e = arg;
    struct eu_req *req = e->req;
    eu_req_enter(req);
    if (e->err.status) {
        eu_log_error("admin", "cannot export tenant '%s': %s", e->domain, e->err.message);
        reply_error(req, &e->err);
        return;
    }
    json_t *counts = json_object();
    for (int i = e->rows->n - 1; i >= 0; i--)
        json_object_set_new(counts, eu_db_tenant_tables[i], json_integer(e->rows->t[i].count));
    long long rows = tables_rows(e->rows);
    eu_log_info("admin", "exported tenant '%s' (%lld rows) to '%s'", e->domain, rows, e->path);
    eu_req_reply_json(
        req, 201,
        json_pack("{s:s, s:I, s:o}", "path", e->path, "rows", (json_int_t)rows, "tables", counts));
}

/* Returns the manifest: what the archive is, of which schema, of whom. The
 * caller frees it. */
static char *
manifest_new(const struct eu_tenant *t)
{
    char id[24], at[32];
    snprintf(id, sizeof(id), "%lld", (long long)t->id);
    time_t now = time(NULL);
    struct tm tm;
    strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    json_t *m = json_pack("{s:s, s:i, s:i, s:{s:s, s:s, s:s, s:s, s:s}, s:s}", "format",
                          ARCHIVE_FORMAT, "version", ARCHIVE_VERSION, "schema_version",
                          eu_migrate_tenant_latest(), "tenant", "id", id, "domain", t->domain,
                          "title", t->title, "placement", t->placement ? t->placement : "",
                          "created_at", t->created_at ? t->created_at : "", "exported_at", at);
    char *text = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(m);
    return text;
}

static void
on_export_snapshot(struct tables *rows, enum eu_db_status st, void *arg)
{
    struct export_call *e = arg;
    struct eu_req *req = e->req;
    eu_req_enter(req);
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    e->rows = rows;
    e->manifest = manifest_new(req->tenant);
    e->dir = eu_xstrdup(req->app->cfg->archive_dir);
    e->domain = eu_xstrdup(req->tenant->domain);
    eu_cpupool_submit(req->app->cpu, export_work, export_done, e);
}

static void
export_cleanup(void *p)
{
    struct export_call *e = p;
    tables_free(e->rows);
    free(e->dir);
    free(e->domain);
    free(e->manifest);
    free(e->path);
}

void
eu_admin_tenants_export(struct eu_req *req)
{
    struct eu_tenant *t = eu_admin_tenant_writable(req);
    if (!t)
        return;
    struct export_call *e = eu_arena_calloc(req->arena, sizeof(*e));
    e->req = req;
    eu_arena_on_free(req->arena, export_cleanup, e);
    snapshot_start(eu_tenant_pool(req->app->registry, t), on_export_snapshot, e);
}

/* ---- POST /admin/v1/tenants/import ---- */

struct import {
    struct eu_req *req;
    /* For the pool thread: copies, since a SIGHUP may replace the config. */
    char *dir, *path;
    /* From the pool thread. */
    struct tables *rows;
    char *domain, *title; /* the archive's tenant */
    struct eu_error err;
    /* On the loop. */
    const char *want_domain, *placement; /* from the body, or NULL */
    struct eu_tenant *t;
};

/* Returns the real path of path (absolute, or relative to dir) in *out (the
 * caller frees it), or -1 with err set when it cannot be read or is not
 * inside dir (symbolic links are followed before that is decided). */
static int
archive_resolve(const char *dir, const char *path, char **out, struct eu_error *err)
{
    char real_dir[PATH_MAX], real[PATH_MAX], why[128];
    if (!realpath(dir, real_dir))
        return eu_error_set(err, 422, "Validation failed: cannot read archive '%s': %s", path,
                            strerror_r(errno, why, sizeof(why)));
    char *full = path[0] == '/' ? eu_xstrdup(path) : eu_xasprintf("%s/%s", real_dir, path);
    bool found = realpath(full, real) != NULL;
    int saved = errno;
    free(full);
    if (!found)
        return eu_error_set(err, 422, "Validation failed: cannot read archive '%s': %s", path,
                            strerror_r(saved, why, sizeof(why)));
    size_t n = strlen(real_dir);
    if (strncmp(real, real_dir, n) != 0 || real[n] != '/')
        return eu_error_set(
            err, 422, "Validation failed: archive '%s' is not in the archive directory", path);
    *out = eu_xstrdup(real);
    return 0;
}

/* Returns the file's bytes (the caller frees them) and their count in *len,
 * or NULL with err set. */
static char *
archive_read(const char *file, const char *path, size_t *len, struct eu_error *err)
{
    char why[128];
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        eu_error_set(err, 422, "Validation failed: cannot read archive '%s': %s", path,
                     strerror_r(errno, why, sizeof(why)));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > ARCHIVE_MAX_BYTES) {
        eu_error_set(err, 422, "Validation failed: archive '%s' is not a file of at most %ld MiB",
                     path, ARCHIVE_MAX_BYTES / (1024 * 1024));
        close(fd);
        return NULL;
    }
    size_t cap = (size_t)st.st_size, n = 0;
    char *buf = eu_xmalloc(cap + 1);
    for (;;) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            eu_error_set(err, 422, "Validation failed: cannot read archive '%s': %s", path,
                         strerror_r(errno, why, sizeof(why)));
            free(buf);
            close(fd);
            return NULL;
        }
        n += (size_t)got;
        if (got == 0 || n == cap)
            break; /* a file still growing is read as far as it was */
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Takes one table of the archive into im->rows; -1 with im->err set when it
 * is not an array of row objects. */
static int
archive_take_table(struct import *im, const char *name, json_t *rows)
{
    int i = table_index(name);
    if (i < 0)
        return eu_error_set(&im->err, 422,
                            "Validation failed: the archive's table '%.64s' is not a tenant table",
                            name);
    if (!json_is_array(rows))
        return eu_error_set(&im->err, 422,
                            "Validation failed: the archive's table '%s' is not "
                            "an array of rows",
                            name);
    struct table_rows *tr = &im->rows->t[i];
    int ncols = 0;
    size_t k;
    json_t *row;
    json_array_foreach(rows, k, row)
    {
        if (!json_is_object(row))
            return eu_error_set(&im->err, 422,
                                "Validation failed: row %zu of the archive's table '%s' is not "
                                "an object",
                                k, name);
        const char *key;
        json_t *v;
        json_object_foreach(row, key, v)
        {
            if (strv_has(tr->columns, key))
                continue;
            if (ncols == MAX_COLUMNS)
                return eu_error_set(&im->err, 422,
                                    "Validation failed: the archive's table '%s' has more than "
                                    "%d columns",
                                    name, MAX_COLUMNS);
            tr->columns = strv_add(tr->columns, ncols++, key);
        }
    }
    tr->count = (long long)json_array_size(rows);
    if (tr->count > 0 && !(tr->json = json_dumps(rows, JSON_COMPACT)))
        return eu_error_set(&im->err, 500, "Cannot re-encode the archive's table '%s'", name);
    return 0;
}

/* Checks what the archive says it is and takes its tables; -1 with im->err
 * set when it is not an archive this server can import. */
static int
archive_check(struct import *im, json_t *root)
{
    const char *format = json_string_value(json_object_get(root, "format"));
    if (!format || strcmp(format, ARCHIVE_FORMAT) != 0)
        return eu_error_set(&im->err, 422, "Validation failed: '%s' is not a tenant archive",
                            im->path);
    json_t *v = json_object_get(root, "version");
    if (!json_is_integer(v) || json_integer_value(v) != ARCHIVE_VERSION)
        return eu_error_set(&im->err, 422,
                            "Validation failed: the archive's format version is not %d",
                            ARCHIVE_VERSION);
    json_t *sv = json_object_get(root, "schema_version");
    if (!json_is_integer(sv) || json_integer_value(sv) < 1)
        return eu_error_set(&im->err, 422, "Validation failed: the archive has no schema version");
    /* Its rows may have columns, or mean things, that this server does not
     * know: refuse rather than drop them. */
    if (json_integer_value(sv) > eu_migrate_tenant_latest())
        return eu_error_set(&im->err, 422,
                            "Validation failed: the archive's schema version %lld is newer than "
                            "this server's %d",
                            (long long)json_integer_value(sv), eu_migrate_tenant_latest());
    json_t *tenant = json_object_get(root, "tenant");
    const char *domain = json_string_value(json_object_get(tenant, "domain"));
    if (!domain)
        return eu_error_set(&im->err, 422, "Validation failed: the archive names no domain");
    im->domain = eu_xstrdup(domain);
    im->title = eu_xstrdup(json_string_value(json_object_get(tenant, "title")));
    json_t *tables = json_object_get(root, "tables");
    if (!json_is_object(tables))
        return eu_error_set(&im->err, 422, "Validation failed: the archive has no tables");
    const char *name;
    json_t *rows;
    json_object_foreach(tables, name, rows)
    {
        if (archive_take_table(im, name, rows) < 0)
            return -1;
    }
    return 0;
}

/* Runs on a CPU pool thread: reads, parses and checks the archive. */
static void
import_work(void *arg)
{
    struct import *im = arg;
    char *file;
    size_t len;
    if (archive_resolve(im->dir, im->path, &file, &im->err) < 0)
        return;
    char *text = archive_read(file, im->path, &len, &im->err);
    free(file);
    if (!text)
        return;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!root) {
        eu_error_set(&im->err, 422, "Validation failed: archive '%s' is not JSON: %s (line %d)",
                     im->path, jerr.text, jerr.line);
        return;
    }
    if (!json_is_object(root)) {
        eu_error_set(&im->err, 422, "Validation failed: '%s' is not a tenant archive", im->path);
        json_decref(root);
        return;
    }
    im->rows = tables_new();
    archive_check(im, root);
    json_decref(root);
}

static void
on_import_undone(PGresult *res, enum eu_db_status st, void *arg)
{
    struct import *im = arg;
    struct eu_req *req = im->req;
    struct eu_tenant *t = im->t;
    eu_req_enter(req);
    if (st != EU_DB_OK) {
        /* An empty tenant is left; it can be deleted like any other. */
        eu_log_error("admin", "cannot remove tenant '%s' after its import failed: %s", t->domain,
                     db_message(res, "control database unavailable"));
        t->moving = false;
    } else {
        if (t->dedicated)
            eu_admin_placement_drop(req->app, t->placement, t->database, NULL, NULL);
        eu_registry_remove(req->app->registry, t); /* req still holds a ref */
    }
    reply_error(req, &im->err);
}

static void
on_imported(const struct eu_error *err, void *arg)
{
    struct import *im = arg;
    struct eu_req *req = im->req;
    struct eu_tenant *t = im->t;
    eu_req_enter(req);
    if (err->status) {
        /* The restore rolled back: the tenant has no rows, only its row in
         * the control database (and a dedicated placement) to undo. */
        eu_log_warn("admin", "import into tenant '%s' failed: %s", t->domain, err->message);
        im->err = *err;
        char id[24];
        snprintf(id, sizeof(id), "%lld", (long long)t->id);
        const char *params[] = {id};
        eu_db_pool_query(req->app->control, "DELETE FROM tenants WHERE id = $1", 1, params,
                         on_import_undone, im);
        return;
    }
    t->moving = false;
    eu_log_info("admin", "imported tenant '%s' (%lld rows)", t->domain, tables_rows(im->rows));
    eu_req_reply_json(req, 201, eu_admin_tenant_json(req->app->registry, t, false));
}

static void
on_import_tenant(struct eu_req *req, struct eu_tenant *t, void *arg)
{
    struct import *im = arg;
    eu_tenant_ref(t);
    req->tenant = t; /* released with the request */
    im->t = t;
    /* Nobody uses it before its rows are in. */
    t->moving = true;
    restore_start(req->app, t->database_url ? t->database_url : req->app->cfg->database_url,
                  t->database, t->id, im->rows, on_imported, im);
}

static void
import_done(void *arg)
{
    struct import *im = arg;
    struct eu_req *req = im->req;
    eu_req_enter(req);
    if (im->err.status) {
        reply_error(req, &im->err);
        return;
    }
    const char *domain = im->want_domain ? im->want_domain : eu_admin_domain_check(req, im->domain);
    if (!domain)
        return;
    const char *title = im->title && strlen(im->title) <= 200 ? im->title : domain;
    if (eu_registry_find(req->app->registry, domain)) {
        eu_req_reply_error(req, 409, "Domain has already been taken");
        return;
    }
    eu_admin_tenant_make(req, domain, eu_arena_strdup(req->arena, title), im->placement,
                         on_import_tenant, im);
}

static void
import_cleanup(void *p)
{
    struct import *im = p;
    tables_free(im->rows);
    free(im->dir);
    free(im->path);
    free(im->domain);
    free(im->title);
}

void
eu_admin_tenants_import(struct eu_req *req)
{
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *path = json_string_value(json_object_get(body, "path"));
    json_t *domain_j = json_object_get(body, "domain");
    json_t *placement_j = json_object_get(body, "placement");
    if (!path || !path[0]) {
        eu_req_reply_error(req, 422, "Validation failed: path is required");
        return;
    }
    if (domain_j && !json_is_null(domain_j) && !json_is_string(domain_j)) {
        eu_req_reply_error(req, 422, "Validation failed: domain must be a string");
        return;
    }
    if (placement_j && !json_is_null(placement_j) && !json_is_string(placement_j)) {
        eu_req_reply_error(req, 422, "Validation failed: placement must be a string");
        return;
    }
    struct import *im = eu_arena_calloc(req->arena, sizeof(*im));
    im->req = req;
    /* Before reading what may be a large file. */
    if (json_string_value(domain_j) &&
        !(im->want_domain = eu_admin_domain_check(req, json_string_value(domain_j))))
        return;
    im->placement = json_string_value(placement_j);
    im->dir = eu_xstrdup(req->app->cfg->archive_dir);
    im->path = eu_xstrdup(path);
    eu_arena_on_free(req->arena, import_cleanup, im);
    eu_cpupool_submit(req->app->cpu, import_work, import_done, im);
}

/* ---- POST /admin/v1/tenants/:domain/move ---- */

/* Where a tenant's rows live. Owned by the request's arena. */
struct place {
    const char *name, *url, *db;
    bool dedicated;
};

struct move {
    struct eu_req *req;
    struct eu_tenant *t; /* req->tenant */
    struct place from, to;
    bool made;     /* to is a dedicated placement made for this move */
    bool restored; /* to holds a committed copy */
    /* Set while this move holds t: moving, and its state kept here while
     * t->state reads suspended, since the queue takes turns for active
     * tenants only (the upsert that switches it sets the real one again). */
    bool held;
    enum eu_tenant_state state;
    struct event *timer;
    long long drain_until;
    int resolve_tries;
    struct tables *rows;
    struct eu_error err;
};

/* Stops t's requests and background work from starting; see struct move. */
static void
move_hold(struct move *m)
{
    m->held = true;
    m->t->moving = true;
    m->state = m->t->state;
    m->t->state = EU_TENANT_SUSPENDED;
}

/* Lets t serve again. Its workers skipped it meanwhile: what fell due runs
 * now rather than at the next poll. */
static void
move_release(struct move *m)
{
    struct eu_tenant *t = m->t;
    if (!m->held)
        return;
    m->held = false;
    t->moving = false;
    for (int q = 0; q < EU_QUEUE_MAX; q++)
        eu_queue_wake(t, (enum eu_queue_id)q, 0);
    for (int k = 0; k < EU_TASK_MAX; k++)
        eu_queue_task_wake(t, (enum eu_task_id)k, -1);
}

static void
on_move_undone(int rc, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    reply_error(m->req, &m->err);
}

/* The move failed before the control row named the target: the tenant goes
 * on where it was, and the target's copy (if any) is removed. m->err says
 * why. */
static void
move_undo(struct move *m)
{
    struct eu_req *req = m->req;
    struct eu_tenant *t = m->t;
    eu_log_warn("admin", "moving tenant '%s' to '%s' failed: %s", t->domain, m->to.name,
                m->err.message);
    if (m->held)
        t->state = m->state;
    move_release(m);
    if (m->made) {
        eu_admin_placement_drop(req->app, m->to.name, m->to.db, on_move_undone, m);
        return;
    }
    if (m->restored) {
        removal_start(req->app, m->to.url, m->to.db, t->id, on_move_undone, m);
        return;
    }
    on_move_undone(0, m);
}

static void
on_source_removed(int rc, void *arg)
{
    struct move *m = arg;
    struct eu_req *req = m->req;
    eu_req_enter(req);
    if (rc < 0)
        eu_log_error("admin", "tenant '%s' moved, but its rows in '%s' could not all be removed",
                     m->t->domain, m->from.db);
    eu_req_reply_json(req, 200, eu_admin_tenant_json(req->app->registry, m->t, false));
}

/* The control row names the target (res holds it): the move took effect. */
static void
move_switched(struct move *m, PGresult *res)
{
    struct eu_req *req = m->req;
    struct eu_tenant row;
    eu_tenant_from_row(res, 0, &row);
    /* Closes its pool over the source and sets its state from the row; the
     * next request opens a pool over the target. */
    struct eu_tenant *t = eu_registry_upsert(req->app->registry, &row);
    move_release(m);
    eu_log_info("admin", "moved tenant '%s' from placement '%s' to '%s'", t->domain, m->from.name,
                m->to.name);
    if (m->from.dedicated)
        eu_admin_placement_drop(req->app, m->from.name, m->from.db, on_source_removed, m);
    else
        removal_start(req->app, m->from.url, m->from.db, t->id, on_source_removed, m);
}

static void move_resolve(struct move *m);

static void
on_resolve_tick(evutil_socket_t fd, short what, void *arg)
{
    move_resolve(arg);
}

static void
on_resolved(PGresult *res, enum eu_db_status st, void *arg)
{
    struct move *m = arg;
    struct eu_req *req = m->req;
    eu_req_enter(req);
    if (st == EU_DB_OK && PQntuples(res) == 1) {
        struct eu_tenant row;
        eu_tenant_from_row(res, 0, &row);
        if (strcmp(row.placement, m->to.name) == 0) {
            move_switched(m, res);
        } else {
            eu_error_set(&m->err, 503, "The control database was unavailable; try again");
            move_undo(m);
        }
        return;
    }
    if (st != EU_DB_OK && ++m->resolve_tries < RESOLVE_TRIES) {
        struct timeval tv = {1, 0};
        evtimer_add(m->timer, &tv);
        return;
    }
    /* Serving from either copy now could lose whatever is written next, so
     * it stays unavailable; a start reads the control row afresh. */
    eu_log_error("admin",
                 "cannot tell whether tenant '%s' moved to '%s'; it stays unavailable "
                 "until the server restarts",
                 m->t->domain, m->to.name);
    m->held = false; /* for good */
    eu_req_add_header(req, "Retry-After", "60");
    eu_req_reply_error(req, 503, "Cannot tell whether the move took effect; restart the server");
}

/* The switch was sent but not answered: ask the control row which
 * placement the tenant is in now. */
static void
move_resolve(struct move *m)
{
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)m->t->id);
    const char *params[] = {id};
    eu_db_pool_query(m->req->app->control,
                     "SELECT " EU_TENANT_COLUMNS " FROM " EU_TENANT_FROM " WHERE t.id = $1", 1,
                     params, on_resolved, m);
}

static void
on_switch(PGresult *res, enum eu_db_status st, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    if (st == EU_DB_OK && PQntuples(res) == 1) {
        move_switched(m, res);
        return;
    }
    if (st == EU_DB_OK) {
        eu_error_set(&m->err, 409, "Tenant '%s' is being deleted", m->t->domain);
    } else if (st == EU_DB_UNAVAILABLE || st == EU_DB_CLOSED) {
        /* The statement may have committed before the connection broke. */
        evtimer_assign(m->timer, m->req->app->base, on_resolve_tick, m);
        move_resolve(m);
        return;
    } else {
        set_db_error(&m->err, st, res, "point the tenant at its new placement");
    }
    move_undo(m);
}

static void
on_move_restored(const struct eu_error *err, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    tables_free(m->rows);
    m->rows = NULL;
    if (err->status) {
        m->err = *err;
        move_undo(m);
        return;
    }
    m->restored = true;
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)m->t->id);
    const char *params[] = {id, m->to.name};
    eu_db_pool_query(m->req->app->control,
                     "WITH t AS (UPDATE tenants SET placement_id = (SELECT p.id FROM placements p"
                     " WHERE p.name = $2), updated_at = now() WHERE id = $1 AND state <> 'deleting'"
                     " RETURNING *)"
                     " SELECT " EU_TENANT_COLUMNS
                     " FROM t JOIN placements p ON p.id = t.placement_id",
                     2, params, on_switch, m);
}

static void
on_move_snapshot(struct tables *rows, enum eu_db_status st, void *arg)
{
    struct move *m = arg;
    eu_req_enter(m->req);
    if (st != EU_DB_OK) {
        set_db_error(&m->err, st, NULL, "read the tenant's rows");
        move_undo(m);
        return;
    }
    m->rows = rows;
    restore_start(m->req->app, m->to.url, m->to.db, m->t->id, rows, on_move_restored, m);
}

static void
on_drain_tick(evutil_socket_t fd, short what, void *arg)
{
    struct move *m = arg;
    struct eu_tenant *t = m->t;
    eu_req_enter(m->req);
    if (t->refs > IDLE_REFS) {
        if (now_ms() < m->drain_until) {
            struct timeval tv = {0, DRAIN_POLL_MS * 1000};
            evtimer_add(m->timer, &tv);
            return;
        }
        eu_error_set(&m->err, 503, "Tenant '%s' is still busy; try again", t->domain);
        move_undo(m);
        return;
    }
    /* Nothing of the tenant runs now (a queue waiting for or taking a turn
     * holds a reference too), and nothing new starts. */
    snapshot_start(eu_tenant_pool(m->req->app->registry, t), on_move_snapshot, m);
}

static void
free_event_cleanup(void *p)
{
    event_free(p);
}

/* The target is known (and made): mark the tenant moving and wait for what
 * is running to end. */
static void
move_begin(struct move *m)
{
    struct eu_req *req = m->req;
    struct eu_tenant *t = m->t;
    /* A move, delete or rename may have come while the target was made. */
    if (t->moving || t->removed || t->state == EU_TENANT_DELETING) {
        eu_error_set(&m->err, 409, "Tenant '%s' is being moved or deleted", t->domain);
        move_undo(m);
        return;
    }
    m->from.name = eu_arena_strdup(req->arena, t->placement);
    m->from.url = eu_arena_strdup(req->arena,
                                  t->database_url ? t->database_url : req->app->cfg->database_url);
    m->from.db = eu_arena_strdup(req->arena, t->database);
    m->from.dedicated = t->dedicated;
    /* Clearing the target's rows of the tenant would clear the source's. */
    if (strcmp(m->from.url, m->to.url) == 0 && strcmp(m->from.db, m->to.db) == 0) {
        eu_error_set(&m->err, 422,
                     "Validation failed: placement '%s' is the database '%s' "
                     "tenant '%s' is in",
                     m->to.name, m->to.db, t->domain);
        move_undo(m);
        return;
    }
    move_hold(m);
    eu_log_info("admin", "moving tenant '%s' from placement '%s' to '%s'", t->domain, m->from.name,
                m->to.name);
    m->timer = evtimer_new(req->app->base, on_drain_tick, m);
    eu_arena_on_free(req->arena, free_event_cleanup, m->timer);
    m->drain_until = now_ms() + DRAIN_MS;
    on_drain_tick(-1, 0, m);
}

static void
on_dedicated_target(struct eu_req *req, const char *name, const char *database, void *arg)
{
    struct move *m = arg;
    m->to.name = name;
    m->to.db = database;
    m->to.url = req->app->cfg->database_url;
    m->to.dedicated = true;
    m->made = true;
    move_begin(m);
}

static void
on_target_row(PGresult *res, enum eu_db_status st, void *arg)
{
    struct move *m = arg;
    struct eu_req *req = m->req;
    eu_req_enter(req);
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 422,
                           "Validation failed: placement '%s' does not exist or is a dedicated "
                           "placement that already holds a tenant",
                           m->to.name);
        return;
    }
    m->to.db = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0));
    m->to.url = PQgetisnull(res, 0, 1) ? req->app->cfg->database_url
                                       : eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
    m->to.dedicated = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
    move_begin(m);
}

static void
move_cleanup(void *p)
{
    struct move *m = p;
    tables_free(m->rows);
}

void
eu_admin_tenants_move(struct eu_req *req)
{
    struct eu_tenant *t = eu_admin_tenant_writable(req);
    if (!t)
        return;
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *target = json_string_value(json_object_get(body, "placement"));
    if (!target || !target[0]) {
        eu_req_reply_error(req, 422, "Validation failed: placement is required");
        return;
    }
    if (strcmp(target, t->placement) == 0 || (strcmp(target, "dedicated") == 0 && t->dedicated)) {
        eu_req_reply_error(req, 422, "Validation failed: tenant '%s' is already in placement '%s'",
                           t->domain, t->placement);
        return;
    }
    struct move *m = eu_arena_calloc(req->arena, sizeof(*m));
    m->req = req;
    m->t = t;
    m->to.name = eu_arena_strdup(req->arena, target);
    eu_arena_on_free(req->arena, move_cleanup, m);
    /* A new database is made before the tenant stops answering: copying
     * the template takes a while, and nobody need wait for it. */
    if (strcmp(target, "dedicated") == 0) {
        eu_admin_placement_make_dedicated(req, t->domain, on_dedicated_target, m);
        return;
    }
    const char *params[] = {target, eu_arena_sprintf(req->arena, "%lld", (long long)t->id)};
    eu_db_pool_query(req->app->control,
                     "SELECT p.database, p.database_url, p.kind = 'dedicated' FROM placements p"
                     " WHERE p.name = $1 AND NOT (p.kind = 'dedicated' AND EXISTS (SELECT 1"
                     " FROM tenants x WHERE x.placement_id = p.id AND x.id <> $2::bigint))",
                     2, params, on_target_row, m);
}

/* ===================================================== route table: begin
 * The routes of this file's handlers, as one block so that they can move
 * with their handlers when the file is split. Flags: include/eunha/router.h. */

const struct eu_route eu_admin_lifecycle_routes[] = {
    {EU_HTTP_POST, "/admin/v1/tenants/import", eu_admin_tenants_import, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/export", eu_admin_tenants_export, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/move", eu_admin_tenants_move, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
/* ======================================================= route table: end */
