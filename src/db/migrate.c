/*
 * Applying migrations. A migration is sent as one simple-protocol batch:
 * BEGIN, the version insert, the file's SQL, COMMIT. The version row goes
 * first so that a second process migrating the same database at the same time
 * blocks on it and then fails with a unique violation, rolling back its copy
 * instead of applying the SQL twice.
 */
#include "eunha/migrate.h"

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"

static const char schema_table_sql[] = "CREATE TABLE IF NOT EXISTS eunha_schema ("
                                       " version integer PRIMARY KEY,"
                                       " name text NOT NULL,"
                                       " applied_at timestamptz NOT NULL DEFAULT now())";

int
eu_migrate_tenant_latest(void)
{
    return eu_tenant_migrations_count ? eu_tenant_migrations[eu_tenant_migrations_count - 1].version
                                      : 0;
}

/* Returns a batch the caller frees with free(). */
static char *
batch_sql(const struct eu_migration *m)
{
    return eu_xasprintf("BEGIN;\nINSERT INTO eunha_schema (version, name) VALUES (%d, '%s');\n"
                        "%s\n;COMMIT;",
                        m->version, m->name, m->sql);
}

/* Applied versions as text, "{1,2,5}": a migration missing from the middle
 * (one that landed after a later one was applied) still gets applied. */
static const char applied_sql[] =
    "SELECT coalesce(array_agg(version)::text, '{}') FROM eunha_schema";

static bool
is_applied(const char *list, int version)
{
    char buf[16];
    size_t n = (size_t)snprintf(buf, sizeof(buf), "%d", version);
    for (const char *p = list; (p = strstr(p, buf)); p += n) {
        char before = p == list ? '{' : p[-1];
        char after = p[n];
        if ((before == '{' || before == ',') && (after == '}' || after == ','))
            return true;
    }
    return false;
}

/*
 * The applied versions, read once: a version another process applies
 * meanwhile is one this process's insert then conflicts with, and skips.
 * The schema table is made only when the read finds none (a CREATE ...
 * IF NOT EXISTS on every start cost a catalog lock per database).
 * Returns a result the caller PQclear-s, or NULL after logging.
 */
static PGresult *
applied_versions(PGconn *pg, const char *what)
{
    PGresult *r = PQexec(pg, applied_sql);
    if (PQresultStatus(r) == PGRES_TUPLES_OK)
        return r;
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    bool missing = state && strcmp(state, "42P01") == 0;
    PQclear(r);
    r = missing ? PQexec(pg, schema_table_sql) : NULL;
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
        eu_log_error("migrate", "cannot read or create the schema table in '%s': %s", what,
                     r ? PQresultErrorMessage(r) : PQerrorMessage(pg));
        PQclear(r);
        return NULL;
    }
    PQclear(r);
    r = PQexec(pg, applied_sql);
    if (PQresultStatus(r) == PGRES_TUPLES_OK)
        return r;
    eu_log_error("migrate", "cannot read the schema table in '%s': %s", what,
                 PQresultErrorMessage(r));
    PQclear(r);
    return NULL;
}

char *
eu_migrate_stamp(const struct eu_migration *set, int count)
{
    /* FNV-1a over the versions and names: a migration added below the
     * newest (merged from a branch) changes it too. */
    unsigned long long h = 1469598103934665603ULL;
    for (int i = 0; i < count; i++) {
        char buf[16];
        int n = snprintf(buf, sizeof(buf), "%d:", set[i].version);
        for (int k = 0; k < n; k++)
            h = (h ^ (unsigned char)buf[k]) * 1099511628211ULL;
        for (const char *c = set[i].name; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    }
    return eu_xasprintf("eunha schema %d %016llx", count ? set[count - 1].version : 0, h);
}

int
eu_migrate_blocking(PGconn *pg, const struct eu_migration *set, int count, const char *what)
{
    PGresult *applied = applied_versions(pg, what);
    if (!applied)
        return -1;
    PGresult *r;
    for (int i = 0; i < count; i++) {
        if (is_applied(PQgetvalue(applied, 0, 0), set[i].version))
            continue;
        char *sql = batch_sql(&set[i]);
        r = PQexec(pg, sql);
        free(sql);
        ExecStatusType st = PQresultStatus(r);
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        if (st != PGRES_COMMAND_OK && !(state && strcmp(state, "23505") == 0)) {
            eu_log_error("migrate", "migration '%s' failed on '%s': %s", set[i].name, what,
                         PQresultErrorMessage(r));
            PQclear(r);
            PQclear(PQexec(pg, "ROLLBACK"));
            PQclear(applied);
            return -1;
        }
        if (st != PGRES_COMMAND_OK)
            PQclear(PQexec(pg, "ROLLBACK"));
        else
            eu_log_info("migrate", "applied '%s' to '%s'", set[i].name, what);
        PQclear(r);
    }
    PQclear(applied);
    return 0;
}

/* ---- asynchronous, for tenant databases ---- */

struct hook_state {
    struct eu_db_conn *conn;
    const char *what;
    int next; /* index into eu_tenant_migrations */
    char applied[1024];
    bool made_table; /* eunha_schema was missing and has been made */
};

static void apply_next(struct hook_state *h);

static void
hook_finish(struct hook_state *h, int rc)
{
    struct eu_db_conn *conn = h->conn;
    free(h);
    eu_db_conn_ready_done(conn, rc);
}

static void
on_rolled_back(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook_state *h = arg;
    if (st != EU_DB_OK) {
        hook_finish(h, -1);
        return;
    }
    apply_next(h);
}

static void
on_applied(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook_state *h = arg;
    if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23505") == 0) {
        /* Another process applied it first; the batch rolled back. */
        h->next++;
        eu_db_conn_exec(h->conn, "ROLLBACK", on_rolled_back, h);
        return;
    }
    if (st != EU_DB_OK) {
        eu_log_error("migrate", "migration '%s' failed on '%s': %s",
                     eu_tenant_migrations[h->next].name, h->what,
                     res ? PQresultErrorMessage(res) : eu_db_conn_error(h->conn));
        hook_finish(h, -1);
        return;
    }
    eu_log_info("migrate", "applied '%s' to '%s'", eu_tenant_migrations[h->next].name, h->what);
    h->next++;
    apply_next(h);
}

static void
apply_next(struct hook_state *h)
{
    while (h->next < eu_tenant_migrations_count &&
           is_applied(h->applied, eu_tenant_migrations[h->next].version))
        h->next++;
    if (h->next >= eu_tenant_migrations_count) {
        hook_finish(h, 0);
        return;
    }
    char *sql = batch_sql(&eu_tenant_migrations[h->next]);
    eu_db_conn_exec(h->conn, sql, on_applied, h);
    free(sql);
}

static void on_version(PGresult *res, enum eu_db_status st, void *arg);

static void
on_schema_table(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook_state *h = arg;
    if (st != EU_DB_OK) {
        eu_log_error("migrate", "cannot make the schema table of '%s': %s", h->what,
                     res ? PQresultErrorMessage(res) : eu_db_conn_error(h->conn));
        hook_finish(h, -1);
        return;
    }
    eu_db_conn_query(h->conn, applied_sql, 0, NULL, on_version, h);
}

static void
on_version(PGresult *res, enum eu_db_status st, void *arg)
{
    struct hook_state *h = arg;
    if (st == EU_DB_ERROR && !h->made_table && strcmp(eu_db_result_sqlstate(res), "42P01") == 0) {
        /* An empty database (a placement just registered on another
         * server, which has no template to copy): migrated from scratch. */
        h->made_table = true;
        eu_db_conn_exec(h->conn, schema_table_sql, on_schema_table, h);
        return;
    }
    if (st != EU_DB_OK) {
        eu_log_error("migrate", "cannot read schema version of '%s': %s", h->what,
                     res ? PQresultErrorMessage(res) : eu_db_conn_error(h->conn));
        hook_finish(h, -1);
        return;
    }
    snprintf(h->applied, sizeof(h->applied), "%s", PQgetvalue(res, 0, 0));
    apply_next(h);
}

void
eu_migrate_tenant_hook(struct eu_db_conn *conn, void *arg)
{
    struct hook_state *h = eu_xcalloc(1, sizeof(*h));
    h->conn = conn;
    h->what = arg;
    /* Databases made from the template are current: one cheap read. */
    eu_db_conn_query(conn, applied_sql, 0, NULL, on_version, h);
}
