/*
 * The placements of a fleet (/admin/v1/placements): where tenants' rows
 * live. A placement is a database on any PostgreSQL server (its
 * database_url names the server and the database), the Redis its tenants
 * are to use, a kind (pooled: many tenants; dedicated: one), a capacity in
 * tenants and a state: open (takes new tenants), draining (takes none
 * while its tenants are moved away) or closed.
 *
 * Registering one (POST) checks the server before anything is written:
 * it must answer, run the control server's PostgreSQL major version and
 * offer the extensions the control database has, and its Redis (when
 * redis_url names one) must answer PING. Then the database is
 * created if it is missing and migrated (the placement pool's own
 * migration hook, as on any placement's first use), and only then is its
 * row added, so a placement that is listed is one tenants can go to. All
 * of it is asynchronous on throwaway one-connection pools: nothing here
 * blocks the loop, however slow the server.
 *
 * Retiring one (DELETE) removes its row once it holds no tenant; its
 * database is left on its server for the operator.
 */
#include "eunha/admin.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_internal.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/migrate.h"
#include "eunha/sql.h"
#include "lifecycle_internal.h"

#define NAME_MAX_LEN 63

enum {
    PLACEMENTS_LIST,
    PLACEMENTS_SHOW,
    PLACEMENTS_CONTROL_FACTS,
    PLACEMENTS_INSERT,
    PLACEMENTS_UPDATE,
    PLACEMENTS_DELETE,
};

/* A placement as the API shows it, from placements p. */
#define PLACEMENT_COLUMNS                                                                          \
    "p.id::text, p.name, p.kind, p.database, p.database_url, p.redis_url, p.capacity, p.state,"    \
    " (SELECT count(*) FROM tenants x WHERE x.placement_id = p.id),"                               \
    " to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"              \
    " to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* On the control database (see eu_admin_control_sql[]). */
const struct eu_sql eu_admin_placements_sql[] = {
    [PLACEMENTS_LIST] = {"admin_placements.list",
                         "SELECT " PLACEMENT_COLUMNS " FROM placements p ORDER BY p.id"},
    [PLACEMENTS_SHOW] = {"admin_placements.show",
                         "SELECT " PLACEMENT_COLUMNS " FROM placements p WHERE p.name = $1"},
    /* $1 a new placement's name: the control server's major version, the
     * extensions of the control database a placement's server must offer
     * too, and whether the name is taken. */
    [PLACEMENTS_CONTROL_FACTS] =
        {"admin_placements.control_facts",
         "SELECT current_setting('server_version_num')::int / 10000,"
         " coalesce((SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension"
         "  WHERE extname <> 'plpgsql'), ''),"
         " EXISTS (SELECT 1 FROM placements WHERE name = $1)"},
    [PLACEMENTS_INSERT] =
        {"admin_placements.insert",
         "WITH p AS (INSERT INTO placements (name, kind, database, database_url, redis_url,"
         " capacity) VALUES ($1, $2, $3, $4, $5, $6::int) RETURNING *)"
         " SELECT " PLACEMENT_COLUMNS " FROM p"},
    /* $2 capacity (NULL: unchanged), $3 whether to set it ($2 NULL then
     * removes the cap), $4 state (NULL: unchanged). */
    [PLACEMENTS_UPDATE] =
        {"admin_placements.update",
         "WITH p AS (UPDATE placements SET capacity = CASE WHEN $3::boolean THEN $2::int"
         " ELSE capacity END, state = coalesce($4, state), updated_at = now()"
         " WHERE name = $1 RETURNING *)"
         " SELECT " PLACEMENT_COLUMNS " FROM p"},
    /* Only while it holds no tenant; the count says why it stayed. */
    [PLACEMENTS_DELETE] = {"admin_placements.delete",
                           "WITH c AS (SELECT p.id, (SELECT count(*) FROM tenants x"
                           "  WHERE x.placement_id = p.id) AS n FROM placements p"
                           "  WHERE p.name = $1),"
                           " d AS (DELETE FROM placements p USING c WHERE p.id = c.id"
                           "  AND c.n = 0 RETURNING p.id)"
                           " SELECT c.n, EXISTS (SELECT 1 FROM d) FROM c"},
    {0},
};

/* A connection string without its password, for answers and logs
 * (arena). */
static json_t *
redacted(struct eu_req *req, const PGresult *res, int row, int col)
{
    if (PQgetisnull(res, row, col))
        return json_null();
    char *r = eu_log_redact_url(PQgetvalue(res, row, col));
    json_t *v = json_string(r ? r : "");
    free(r);
    return v;
}

static json_t *
placement_json(struct eu_req *req, const PGresult *res, int row)
{
    json_t *capacity = PQgetisnull(res, row, 6)
                           ? json_null()
                           : json_integer(strtoll(PQgetvalue(res, row, 6), NULL, 10));
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:s, s:I, s:s, s:s}", "id",
                     PQgetvalue(res, row, 0), "name", PQgetvalue(res, row, 1), "kind",
                     PQgetvalue(res, row, 2), "database", PQgetvalue(res, row, 3), "database_url",
                     redacted(req, res, row, 4), "redis_url", redacted(req, res, row, 5),
                     "capacity", capacity, "state", PQgetvalue(res, row, 7), "tenants",
                     (json_int_t)strtoll(PQgetvalue(res, row, 8), NULL, 10), "created_at",
                     PQgetvalue(res, row, 9), "updated_at", PQgetvalue(res, row, 10));
}

/* ---------------------------------------------------- GET (list, show) */

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *arr = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(arr, placement_json(req, res, i));
    eu_req_reply_json(req, 200, arr);
}

static void
placements_list(struct eu_req *req)
{
    eu_req_control_stmt(req, &eu_admin_placements_sql[PLACEMENTS_LIST], 0, NULL, on_list, NULL);
}

static void
on_one(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) != 1) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, (int)(intptr_t)arg, placement_json(req, res, 0));
}

static void
placements_show(struct eu_req *req)
{
    const char *p[] = {eu_req_param(req, "name")};
    eu_req_control_stmt(req, &eu_admin_placements_sql[PLACEMENTS_SHOW], 1, p, on_one,
                        (void *)(intptr_t)200);
}

/* ------------------------------------------------------------ POST */

/* A registration under way. */
struct reg {
    struct eu_req *req;
    const char *name, *kind, *url, *database, *redis_url, *capacity; /* arena */
    int control_major;
    const char *extensions;    /* the control database's, "a,b" (arena) */
    struct eu_db_pool *server; /* the server's maintenance database */
    struct eu_db_pool *target; /* the placement's database */
};

static void
reg_release(struct reg *r)
{
    /* Each frees itself once its connection is back. */
    if (r->server)
        eu_db_pool_free(r->server);
    if (r->target)
        eu_db_pool_free(r->target);
    r->server = r->target = NULL;
}

/* Refuses the registration with 422 and what the server said. */
static void
reg_refuse(struct reg *r, const char *why)
{
    struct eu_req *req = r->req;
    reg_release(r);
    eu_req_reply_error(req, 422, "Validation failed: database_url: %s", why);
}

static const char *
result_reason(struct eu_req *req, const PGresult *res, enum eu_db_status st)
{
    if (res && PQresultErrorMessage(res)[0]) {
        char *m = eu_arena_strdup(req->arena, PQresultErrorMessage(res));
        m[strcspn(m, "\n")] = '\0';
        return m;
    }
    return st == EU_DB_TIMEOUT ? "the server did not answer in time"
                               : "the server cannot be reached";
}

static struct eu_db_pool *
throwaway_pool(struct eu_app *app, const char *url, const char *db)
{
    struct eu_db_pool_limits lim = {
        .max_connections = 1,
        .min_connections = 0,
        .acquire_timeout_s = app->cfg->pool_acquire_timeout_s,
        .idle_timeout_s = 1,
    };
    struct eu_db_pool *pool = eu_db_pool_new(app->base, "placement-registration", url, db, &lim);
    eu_db_pool_set_prepared(pool, false);
    return pool;
}

static void
on_inserted(PGresult *res, enum eu_db_status st, void *arg)
{
    struct reg *r = arg;
    struct eu_req *req = r->req;
    eu_req_enter(req);
    if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23505") == 0) {
        eu_req_reply_error(req, 409, "Name has already been taken");
        return;
    }
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        eu_req_reply_db_error(req, st == EU_DB_OK ? EU_DB_ERROR : st);
        return;
    }
    eu_log_info("admin", "registered placement '%s' (%s, database '%s')", r->name, r->kind,
                r->database);
    eu_req_reply_json(req, 201, placement_json(req, res, 0));
}

static void
on_migrated(PGresult *res, enum eu_db_status st, void *arg)
{
    struct reg *r = arg;
    eu_req_enter(r->req);
    if (st != EU_DB_OK) {
        reg_refuse(r, eu_arena_sprintf(r->req->arena, "its database cannot be migrated: %s",
                                       result_reason(r->req, res, st)));
        return;
    }
    reg_release(r);
    const char *p[] = {r->name, r->kind, r->database, r->url, r->redis_url, r->capacity};
    eu_db_pool_query(r->req->app->control, eu_admin_placements_sql[PLACEMENTS_INSERT].text, 6, p,
                     on_inserted, r);
}

/* The database exists: its first connection migrates it (the hook every
 * placement pool has), which this statement waits for. */
static void
migrate(struct reg *r)
{
    r->target = throwaway_pool(r->req->app, r->url, r->database);
    eu_db_pool_set_ready_hook(r->target, eu_migrate_tenant_hook, "a placement being registered");
    eu_db_pool_query(r->target, "SELECT 1", 0, NULL, on_migrated, r);
}

static void
on_created(PGresult *res, enum eu_db_status st, void *arg)
{
    struct reg *r = arg;
    eu_req_enter(r->req);
    /* 42P04: made meanwhile by someone else, which is as good. */
    if (st != EU_DB_OK &&
        !(st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "42P04") == 0)) {
        reg_refuse(r, eu_arena_sprintf(r->req->arena, "cannot create database '%s': %s",
                                       r->database, result_reason(r->req, res, st)));
        return;
    }
    migrate(r);
}

/* Whether every name of the comma-separated list want is in have. */
static const char *
missing_extension(struct eu_arena *a, const char *want, const char *have)
{
    char *list = eu_arena_strdup(a, want);
    for (char *save = NULL, *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        const char *h = have;
        size_t n = strlen(e);
        bool found = false;
        while (*h && !found) {
            size_t m = strcspn(h, ",");
            found = m == n && strncmp(h, e, n) == 0;
            h += m + (h[m] == ',');
        }
        if (!found)
            return e;
    }
    return NULL;
}

static void
on_server_facts(PGresult *res, enum eu_db_status st, void *arg)
{
    struct reg *r = arg;
    struct eu_req *req = r->req;
    eu_req_enter(req);
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        reg_refuse(r,
                   eu_arena_sprintf(req->arena, "cannot connect: %s", result_reason(req, res, st)));
        return;
    }
    int major = atoi(PQgetvalue(res, 0, 0));
    if (major != r->control_major) {
        reg_refuse(r, eu_arena_sprintf(req->arena,
                                       "the server runs PostgreSQL %d, the control database's %d",
                                       major, r->control_major));
        return;
    }
    const char *missing = missing_extension(req->arena, r->extensions, PQgetvalue(res, 0, 2));
    if (missing) {
        reg_refuse(r, eu_arena_sprintf(req->arena, "the server lacks the extension '%s'", missing));
        return;
    }
    if (PQgetvalue(res, 0, 1)[0] == 't') {
        migrate(r);
        return;
    }
    const char *sql = eu_arena_sprintf(req->arena, "CREATE DATABASE %s%s",
                                       eu_admin_quote_ident(req->arena, r->database),
                                       eu_config_create_db_clause(req->app->cfg));
    eu_db_pool_query(r->server, sql, 0, NULL, on_created, r);
}

static void
on_control_facts(struct eu_req *req, PGresult *res, void *arg)
{
    struct reg *r = arg;
    if (PQgetvalue(res, 0, 2)[0] == 't') {
        eu_req_reply_error(req, 409, "Name has already been taken");
        return;
    }
    r->control_major = atoi(PQgetvalue(res, 0, 0));
    r->extensions = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
    /* The server's maintenance database: the placement's may not exist yet. */
    r->server = throwaway_pool(req->app, r->url, "postgres");
    const char *p[] = {r->database};
    eu_db_pool_query(r->server,
                     "SELECT current_setting('server_version_num')::int / 10000,"
                     " EXISTS (SELECT 1 FROM pg_database WHERE datname = $1),"
                     " coalesce((SELECT string_agg(name, ',') FROM pg_available_extensions), '')",
                     1, p, on_server_facts, r);
}

static bool
name_is_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > NAME_MAX_LEN || !isalnum((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-' &&
            s[i] != '_')
            return false;
    /* Named after their tenant's domain by POST /admin/v1/tenants. */
    return strncmp(s, "dedicated-", 10) != 0;
}

/* capacity from the body: a positive integer, or null for none. Returns
 * false after answering 422. *text is its decimal form or NULL. */
static bool
read_capacity(struct eu_req *req, json_t *v, const char **text)
{
    *text = NULL;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 10000000) {
        eu_req_reply_error(req, 422,
                           "Validation failed: capacity must be a whole number of tenants from 1");
        return false;
    }
    *text = eu_arena_sprintf(req->arena, "%lld", (long long)json_integer_value(v));
    return true;
}

/* The placement's Redis answered PING, or not: a Redis that does not would
 * leave its tenants without streaming, rate limits or caches. */
static void
on_redis_pinged(const struct eu_error *err, long long unused, void *arg)
{
    (void)unused;
    struct reg *r = arg;
    struct eu_req *req = r->req;
    eu_req_enter(req);
    if (err->status) {
        eu_req_reply_error(req, 422, "Validation failed: redis_url: %s", err->message);
        return;
    }
    const char *p[] = {r->name};
    eu_req_control_stmt(req, &eu_admin_placements_sql[PLACEMENTS_CONTROL_FACTS], 1, p,
                        on_control_facts, r);
}

static void
placements_create(struct eu_req *req)
{
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    struct reg *r = eu_arena_calloc(req->arena, sizeof(*r));
    r->req = req;
    r->name = json_string_value(json_object_get(body, "name"));
    r->kind = json_string_value(json_object_get(body, "kind"));
    r->url = json_string_value(json_object_get(body, "database_url"));
    json_t *redis = json_object_get(body, "redis_url");
    if (!name_is_valid(r->name)) {
        eu_req_reply_error(req, 422,
                           "Validation failed: name must be 1-63 lower-case letters, digits, "
                           "'-' or '_', not starting with 'dedicated-'");
        return;
    }
    if (!r->kind)
        r->kind = "pooled";
    if (strcmp(r->kind, "pooled") != 0 && strcmp(r->kind, "dedicated") != 0) {
        eu_req_reply_error(req, 422, "Validation failed: kind must be 'pooled' or 'dedicated'");
        return;
    }
    char *db = r->url ? eu_db_conninfo_dbname(r->url) : NULL;
    r->database = db ? eu_arena_strdup(req->arena, db) : NULL;
    free(db);
    if (!r->database) {
        eu_req_reply_error(req, 422,
                           "Validation failed: database_url must be a PostgreSQL connection "
                           "string that names its database");
        return;
    }
    if (redis && !json_is_null(redis)) {
        r->redis_url = json_string_value(redis);
        if (!r->redis_url || (strncmp(r->redis_url, "redis://", 8) != 0 &&
                              strncmp(r->redis_url, "rediss://", 9) != 0)) {
            eu_req_reply_error(req, 422,
                               "Validation failed: redis_url must be a redis:// or rediss:// URL");
            return;
        }
    }
    if (!read_capacity(req, json_object_get(body, "capacity"), &r->capacity))
        return;
    if (strcmp(r->kind, "dedicated") == 0)
        r->capacity = "1";
    if (r->redis_url) {
        eu_admin_redis_ping(req->app, r->redis_url, on_redis_pinged, r);
        return;
    }
    const char *p[] = {r->name};
    eu_req_control_stmt(req, &eu_admin_placements_sql[PLACEMENTS_CONTROL_FACTS], 1, p,
                        on_control_facts, r);
}

/* ------------------------------------------------------------ PATCH */

static void
placements_update(struct eu_req *req)
{
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    json_t *capacity = json_object_get(body, "capacity");
    const char *cap = NULL;
    if (capacity && !read_capacity(req, capacity, &cap))
        return;
    json_t *state_j = json_object_get(body, "state");
    const char *state = json_string_value(state_j);
    if (state_j && (!state || (strcmp(state, "open") != 0 && strcmp(state, "draining") != 0 &&
                               strcmp(state, "closed") != 0))) {
        eu_req_reply_error(req, 422,
                           "Validation failed: state must be 'open', 'draining' or 'closed'");
        return;
    }
    const char *p[] = {eu_req_param(req, "name"), cap, capacity ? "true" : "false", state};
    eu_req_control_stmt(req, &eu_admin_placements_sql[PLACEMENTS_UPDATE], 4, p, on_one,
                        (void *)(intptr_t)200);
}

/* ------------------------------------------------------------ DELETE */

static void
on_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) != 1) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (PQgetvalue(res, 0, 1)[0] != 't') {
        eu_req_reply_error(req, 409, "Placement still holds %s tenants: move them first",
                           PQgetvalue(res, 0, 0));
        return;
    }
    eu_log_info("admin", "retired placement '%s'", eu_req_param(req, "name"));
    eu_req_reply_json(req, 200, json_object());
}

static void
placements_delete(struct eu_req *req)
{
    const char *p[] = {eu_req_param(req, "name")};
    eu_req_control_stmt(req, &eu_admin_placements_sql[PLACEMENTS_DELETE], 1, p, on_deleted, NULL);
}

const struct eu_route eu_admin_placements_routes[] = {
    {EU_HTTP_GET, "/admin/v1/placements", placements_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/placements", placements_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/placements/:name", placements_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_PATCH, "/admin/v1/placements/:name", placements_update, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_DELETE, "/admin/v1/placements/:name", placements_delete, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
