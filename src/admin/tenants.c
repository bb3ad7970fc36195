/*
 * The tenant admin API. Creating a tenant in a pooled placement is a row in
 * the control table; a dedicated placement is first a database copied from
 * the migrated template. Either answers at once, with no restart. Deleting
 * marks the row first, so the domain stops answering at once, then removes
 * the tenant's rows in the background.
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
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mediaapi.h"
#include "eunha/mem.h"
#include "eunha/net.h"
#include "eunha/sql.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"

static const char *const state_names[] = {"active", "suspended", "deleting"};

/* The registry holds tenant statements only. Those on the control database
 * (tenants, placements) are in eu_admin_control_sql[] below, which
 * test_plans explains against a control database holding thousands of
 * tenants. */
enum {
    ADMIN_TENANTS_REGISTRATIONS,
    ADMIN_TENANTS_MEDIA_USAGE,
};

const struct eu_sql eu_admin_tenants_sql[] = {
    [ADMIN_TENANTS_REGISTRATIONS] =
        {"admin_tenants.registrations",
         "INSERT INTO settings (tenant_id, key, value) VALUES ($1,"
         " 'registrations_mode', to_jsonb($2::text)) ON CONFLICT (tenant_id, key)"
         " DO UPDATE SET value = excluded.value"},
    /* Kept by the media_attachments trigger (tenant migration 0025). Run
     * on the placement's own pool, naming the tenant itself ($1), so an
     * admin GET does not wake a dormant tenant's pool. */
    [ADMIN_TENANTS_MEDIA_USAGE] = {"admin_tenants.media_usage",
                                   "SELECT coalesce((SELECT c.media_bytes FROM instance_counters c"
                                   " WHERE c.tenant_id = $1::bigint), 0)",
                                   .cross_tenant = true},
    {0},
};

enum {
    CONTROL_PLACEMENT_DROP,
    CONTROL_TENANT_INSERT,
    CONTROL_PLACEMENT_DEDICATED,
    CONTROL_TENANT_LIST,
    CONTROL_TENANT_UPDATE,
    CONTROL_TENANT_DELETING,
};

const struct eu_sql eu_admin_control_sql[] = {
    /* Only while no tenant is in it, in case one was put there after all. */
    [CONTROL_PLACEMENT_DROP] =
        {"admin_control.placement_drop",
         "DELETE FROM placements p WHERE p.name = $1 AND p.kind = 'dedicated'"
         " AND NOT EXISTS (SELECT 1 FROM tenants x WHERE x.placement_id = p.id)"},
    /* The open pooled placement with the most room (capacity less its
     * tenants; no capacity counts as room for 2^31), or the one named. A
     * placement that is draining, closed or full takes none, even named;
     * a dedicated one takes one tenant only. */
    [CONTROL_TENANT_INSERT] =
        {"admin_control.tenant_insert",
         "WITH p AS (SELECT p.id FROM placements p CROSS JOIN LATERAL (SELECT count(*) AS n"
         "  FROM tenants x WHERE x.placement_id = p.id) c"
         " WHERE CASE WHEN $3::text IS NULL THEN p.kind = 'pooled' ELSE p.name = $3 END"
         " AND p.state = 'open' AND c.n < coalesce(p.capacity, 2147483647)"
         " AND NOT (p.kind = 'dedicated' AND c.n > 0)"
         " ORDER BY coalesce(p.capacity, 2147483647) - c.n DESC, p.id LIMIT 1),"
         " t AS (INSERT INTO tenants (domain, title, placement_id)"
         " SELECT $1, $2, p.id FROM p RETURNING *)"
         " SELECT " EU_TENANT_COLUMNS " FROM t JOIN placements p ON p.id = t.placement_id"},
    /* Named after the domain, so a second request for the same domain stops
     * here with a unique violation. */
    [CONTROL_PLACEMENT_DEDICATED] = {"admin_control.placement_dedicated",
                                     "WITH n AS (SELECT nextval('placements_id_seq') AS id)"
                                     " INSERT INTO placements (id, name, kind, database)"
                                     " SELECT n.id, 'dedicated-' || $1, 'dedicated',"
                                     " $2 || '_p' || n.id FROM n RETURNING name, database"},
    [CONTROL_TENANT_LIST] = {"admin_control.tenant_list",
                             "SELECT " EU_TENANT_COLUMNS " FROM " EU_TENANT_FROM
                             " ORDER BY t.id LIMIT $1 OFFSET $2"},
    /* A tenant being deleted cannot be brought back by a PATCH. */
    [CONTROL_TENANT_UPDATE] =
        {"admin_control.tenant_update",
         "WITH t AS (UPDATE tenants SET state = coalesce($2, state),"
         " title = coalesce($3, title),"
         " max_connections = coalesce($4::int, max_connections),"
         " min_connections = coalesce($5::int, min_connections),"
         " acquire_timeout_seconds = coalesce($6::int, acquire_timeout_seconds),"
         " idle_timeout_seconds = coalesce($7::int, idle_timeout_seconds),"
         " media_quota_bytes = CASE WHEN $8::boolean THEN $9::bigint"
         " ELSE media_quota_bytes END,"
         " authorized_fetch = coalesce($10::boolean, authorized_fetch),"
         " updated_at = now() WHERE id = $1 AND state <> 'deleting' RETURNING *)"
         " SELECT " EU_TENANT_COLUMNS " FROM t JOIN placements p ON p.id = t.placement_id"},
    [CONTROL_TENANT_DELETING] =
        {"admin_control.tenant_deleting",
         "WITH t AS (UPDATE tenants SET state = 'deleting', updated_at = now()"
         " WHERE id = $1 RETURNING *)"
         " SELECT " EU_TENANT_COLUMNS " FROM t JOIN placements p ON p.id = t.placement_id"},
    {0},
};

json_t *
eu_admin_tenant_json(struct eu_registry *reg, const struct eu_tenant *t, bool with_pool)
{
    char id[24];
    snprintf(id, sizeof(id), "%lld", (long long)t->id);
    struct eu_db_pool_limits lim;
    eu_tenant_effective_limits(reg, t, &lim);
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:s}", "id", id, "domain",
        t->domain, "title", t->title, "state", state_names[t->state], "placement",
        t->placement ? t->placement : "", "database", t->database, "max_connections",
        lim.max_connections, "min_connections", lim.min_connections, "acquire_timeout_seconds",
        lim.acquire_timeout_s, "idle_timeout_seconds", lim.idle_timeout_s, "created_at",
        t->created_at ? t->created_at : "", "updated_at", t->updated_at ? t->updated_at : "");
    if (with_pool) {
        struct eu_db_pool_stats st = {0};
        if (t->pool)
            eu_db_pool_stats(t->pool, &st);
        json_object_set_new(
            o, "pool",
            json_pack("{s:i,s:i,s:i}", "open", st.open, "busy", st.busy, "waiting", st.waiting));
    }
    json_object_set_new(o, "authorized_fetch", json_boolean(t->authorized_fetch));
    if (t->moving)
        json_object_set_new(o, "moving", json_true());
    json_object_set_new(o, "dormant", json_boolean(t->dormant));
    if (t->state == EU_TENANT_DELETING) {
        json_t *progress = eu_admin_purge_json(t);
        if (progress)
            json_object_set_new(o, "deletion", progress);
    }
    return o;
}

const char *
eu_admin_quote_ident(struct eu_arena *a, const char *s)
{
    size_t n = strlen(s);
    char *out = eu_arena_alloc(a, 2 * n + 3), *p = out;
    *p++ = '"';
    for (; *s; s++) {
        if (*s == '"')
            *p++ = '"';
        *p++ = *s;
    }
    *p++ = '"';
    *p = '\0';
    return out;
}

static struct eu_tenant *
tenant_from_param(struct eu_req *req)
{
    char domain[256];
    const char *raw = eu_req_param(req, "domain");
    if (!raw || eu_host_normalize(raw, domain, sizeof(domain)) < 0)
        return NULL;
    return eu_registry_find(req->app->registry, domain);
}

/* ---- POST /admin/v1/tenants ---- */

/*
 * A tenant goes into a placement: the one named in the body, a new dedicated
 * one ("dedicated": a database copied from the migrated template, made
 * before the tenant row), or by default the pooled placement with the fewest
 * tenants. In a pooled placement creating a tenant is one row in the control
 * database: its tables already exist, and a new tenant simply has no rows.
 * Import (src/admin/lifecycle.c) makes its tenant the same way.
 */
struct create {
    struct eu_req *req;
    const char *domain, *title;
    const char *placement;    /* NULL: the emptiest pooled placement */
    const char *dedicated_db; /* the database made for a dedicated placement */
    eu_admin_tenant_made_cb done;
    void *arg;
};

/* A dedicated placement being dropped: its database, then its row. */
struct drop {
    struct eu_app *app;
    char *name, *database;
    eu_admin_done_cb done;
    void *arg;
};

static void
drop_finish(struct drop *d, int rc)
{
    if (d->done)
        d->done(rc, d->arg);
    free(d->name);
    free(d->database);
    free(d);
}

static void
on_placement_row_dropped(PGresult *res, enum eu_db_status st, void *arg)
{
    struct drop *d = arg;
    if (st != EU_DB_OK)
        eu_log_warn("admin", "cannot remove placement '%s': %s", d->name,
                    res ? PQresultErrorMessage(res) : "control database unavailable");
    drop_finish(d, st == EU_DB_OK ? 0 : -1);
}

static void
on_database_dropped(PGresult *res, enum eu_db_status st, void *arg)
{
    struct drop *d = arg;
    if (st != EU_DB_OK) {
        /* Keep the row, so the placements table still shows the leftover. */
        eu_log_warn("admin", "cannot drop database '%s': %s", d->database,
                    res ? PQresultErrorMessage(res) : "control database unavailable");
        drop_finish(d, -1);
        return;
    }
    const char *params[] = {d->name};
    eu_db_pool_query(d->app->control, eu_admin_control_sql[CONTROL_PLACEMENT_DROP].text, 1, params,
                     on_placement_row_dropped, d);
}

void
eu_admin_placement_drop(struct eu_app *app, const char *name, const char *database,
                        eu_admin_done_cb done, void *arg)
{
    struct drop *d = eu_xcalloc(1, sizeof(*d));
    d->app = app;
    d->name = eu_xstrdup(name);
    d->database = eu_xstrdup(database);
    d->done = done;
    d->arg = arg;
    struct eu_arena *a = eu_arena_new();
    /* FORCE: a pool that was closed may still be closing its connections. */
    const char *sql = eu_arena_sprintf(a, "DROP DATABASE IF EXISTS %s WITH (FORCE)",
                                       eu_admin_quote_ident(a, database));
    eu_db_pool_query(app->control, sql, 0, NULL, on_database_dropped, d);
    eu_arena_free(a); /* the pool copied the statement */
}

static void
on_tenant_row(PGresult *res, enum eu_db_status st, void *arg)
{
    struct create *c = arg;
    struct eu_req *req = c->req;
    eu_req_enter(req);
    if (st != EU_DB_OK && c->dedicated_db)
        eu_admin_placement_drop(req->app, c->placement, c->dedicated_db, NULL, NULL);
    if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23505") == 0) {
        eu_req_reply_error(req, 409, "Domain has already been taken");
        return;
    }
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 422,
                           "Validation failed: placement '%s' does not exist, is not open, is "
                           "full, or is a dedicated placement that already holds a tenant",
                           c->placement ? c->placement : "(pooled)");
        return;
    }
    struct eu_tenant row;
    eu_tenant_from_row(res, 0, &row);
    struct eu_tenant *t = eu_registry_upsert(req->app->registry, &row);
    eu_log_info("admin", "created tenant '%s' in placement '%s'", t->domain, t->placement);
    c->done(req, t, c->arg);
}

static void
insert_tenant(struct create *c)
{
    const char *params[] = {c->domain, c->title, c->placement};
    /* Not eu_req_control_stmt(): every failure, a timeout too, must also
     * drop the dedicated placement made for this tenant. */
    eu_db_pool_query(c->req->app->control, eu_admin_control_sql[CONTROL_TENANT_INSERT].text, 3,
                     params, on_tenant_row, c);
}

/* A dedicated placement being made: its row first (the name is unique, so
 * two requests for one domain cannot both get here), then its database. */
struct dedicated {
    struct eu_req *req;
    const char *name, *database;
    eu_admin_placement_made_cb done;
    void *arg;
};

static void
on_database_created(PGresult *res, enum eu_db_status st, void *arg)
{
    struct dedicated *d = arg;
    struct eu_req *req = d->req;
    eu_req_enter(req);
    if (st != EU_DB_OK) {
        eu_log_error("admin", "cannot create database '%s': %s", d->database,
                     res ? PQresultErrorMessage(res) : "database unavailable");
        eu_admin_placement_drop(req->app, d->name, d->database, NULL, NULL);
        if (st == EU_DB_ERROR)
            eu_req_reply_error(req, 500, "Cannot create the tenant's database");
        else
            eu_req_reply_db_error(req, st);
        return;
    }
    d->done(req, d->name, d->database, d->arg);
}

static void
on_placement_row(struct eu_req *req, PGresult *res, enum eu_db_status st, void *arg)
{
    struct dedicated *d = arg;
    if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23505") == 0) {
        eu_req_reply_error(req, 409, "Domain has already been taken");
        return;
    }
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    d->name = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0));
    d->database = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
    /* Not usable until its database exists, and no tenant is in it yet. */
    const char *sql =
        eu_arena_sprintf(req->arena, "CREATE DATABASE %s TEMPLATE %s%s",
                         eu_admin_quote_ident(req->arena, d->database),
                         eu_admin_quote_ident(req->arena, req->app->cfg->database_template),
                         eu_config_create_db_clause(req->app->cfg));
    eu_db_pool_query(req->app->control, sql, 0, NULL, on_database_created, d);
}

void
eu_admin_placement_make_dedicated(struct eu_req *req, const char *domain,
                                  eu_admin_placement_made_cb done, void *arg)
{
    struct dedicated *d = eu_arena_calloc(req->arena, sizeof(*d));
    d->req = req;
    d->done = done;
    d->arg = arg;
    const char *params[] = {domain, req->app->control_dbname};
    eu_req_control_stmt_or_error(req, &eu_admin_control_sql[CONTROL_PLACEMENT_DEDICATED], 2, params,
                                 on_placement_row, d);
}

static void
on_dedicated_made(struct eu_req *req, const char *name, const char *database, void *arg)
{
    struct create *c = arg;
    c->placement = name;
    c->dedicated_db = database;
    insert_tenant(c);
}

void
eu_admin_tenant_make(struct eu_req *req, const char *domain, const char *title,
                     const char *placement, eu_admin_tenant_made_cb done, void *arg)
{
    struct create *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->req = req;
    c->domain = domain;
    c->title = title;
    c->placement = placement;
    c->done = done;
    c->arg = arg;
    if (placement && strcmp(placement, "dedicated") == 0)
        eu_admin_placement_make_dedicated(req, domain, on_dedicated_made, c);
    else
        insert_tenant(c);
}

/*
 * Whether domain is an IP address rather than a host name: an IPv6 literal
 * (bracketed or not), or a name whose last label is a number, which URL
 * parsers and resolvers read as IPv4 in any of its spellings (192.0.2.1,
 * 127.1, 0x7f.0.0.1, 2130706433). A tenant named so would publish actor
 * ids and keys on a bare address that no TLS certificate or WebFinger
 * peer treats as a domain, and could shadow the server's own address.
 */
static bool
is_ip_literal(const char *domain)
{
    if (strchr(domain, ':'))
        return true; /* no host name holds a colon; every IPv6 literal does */
    const char *dot = strrchr(domain, '.');
    const char *last = dot ? dot + 1 : domain;
    if (last[0] == '0' && last[1] == 'x') {
        last += 2;
        return last[strspn(last, "0123456789abcdef")] == '\0';
    }
    return *last && last[strspn(last, "0123456789")] == '\0';
}

const char *
eu_admin_domain_check(struct eu_req *req, const char *in)
{
    char *domain = eu_arena_strdup(req->arena, in);
    for (char *p = domain; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (is_ip_literal(domain)) {
        eu_req_reply_error(req, 422,
                           "Validation failed: domain '%s' is an IP address, not a host name", in);
        return NULL;
    }
    if (!eu_domain_is_valid(domain)) {
        eu_req_reply_error(req, 422, "Validation failed: domain '%s' is not a valid host name", in);
        return NULL;
    }
    return domain;
}

struct eu_tenant *
eu_admin_tenant_writable(struct eu_req *req)
{
    struct eu_tenant *t = tenant_from_param(req);
    /* A deleting tenant's rows are being removed table by table: a row
     * written now, behind the purge, would be left behind. */
    if (!t || t->state == EU_TENANT_DELETING) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    eu_tenant_ref(t);
    req->tenant = t; /* released with the request */
    eu_req_enter(req);
    if (eu_admin_tenant_check_idle(req, t) < 0)
        return NULL;
    return t;
}

int
eu_admin_tenant_check_idle(struct eu_req *req, const struct eu_tenant *t)
{
    if (!t->moving)
        return 0;
    eu_req_add_header(req, "Retry-After", "1");
    eu_req_reply_error(req, 409, "Tenant '%s' is being moved or imported; try again shortly",
                       t->domain);
    return -1;
}

static void
on_created(struct eu_req *req, struct eu_tenant *t, void *arg)
{
    eu_req_reply_json(req, 201, eu_admin_tenant_json(req->app->registry, t, false));
}

void
eu_admin_tenants_create(struct eu_req *req)
{
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *domain_in = json_string_value(json_object_get(body, "domain"));
    json_t *title_j = json_object_get(body, "title");
    json_t *placement_j = json_object_get(body, "placement");
    if (!domain_in) {
        eu_req_reply_error(req, 422, "Validation failed: domain is required");
        return;
    }
    const char *domain = eu_admin_domain_check(req, domain_in);
    if (!domain)
        return;
    if (title_j && !json_is_string(title_j)) {
        eu_req_reply_error(req, 422, "Validation failed: title must be a string");
        return;
    }
    if (placement_j && !json_is_null(placement_j) && !json_is_string(placement_j)) {
        eu_req_reply_error(req, 422, "Validation failed: placement must be a string");
        return;
    }
    const char *title = title_j ? json_string_value(title_j) : domain;
    if (strlen(title) > 200) {
        eu_req_reply_error(req, 422, "Validation failed: title is too long (at most 200)");
        return;
    }
    if (eu_registry_find(req->app->registry, domain)) {
        eu_req_reply_error(req, 409, "Domain has already been taken");
        return;
    }
    eu_admin_tenant_make(req, domain, title, json_string_value(placement_j), on_created, NULL);
}

/* ---- GET /admin/v1/tenants ---- */

struct list {
    struct eu_req *req;
    long limit, offset;
};

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    struct list *l = arg;
    json_t *arr = json_array();
    int n = PQntuples(res);
    /* One extra row was asked for to learn whether a next page exists. */
    bool more = n > l->limit;
    for (int i = 0; i < n && i < l->limit; i++) {
        struct eu_tenant row;
        eu_tenant_from_row(res, i, &row);
        struct eu_tenant *live = eu_registry_find_id(req->app->registry, row.id);
        json_array_append_new(arr,
                              eu_admin_tenant_json(req->app->registry, live ? live : &row, false));
    }
    if (more) {
        const char *link =
            eu_arena_sprintf(req->arena, "</admin/v1/tenants?limit=%ld&offset=%ld>; rel=\"next\"",
                             l->limit, l->offset + l->limit);
        eu_req_add_header(req, "Link", link);
    }
    eu_req_reply_json(req, 200, arr);
}

static int
parse_nonneg(const char *s, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

void
eu_admin_tenants_list(struct eu_req *req)
{
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->req = req;
    l->limit = 40;
    const char *v;
    if ((v = eu_req_query(req, "limit")) && parse_nonneg(v, 1000, &l->limit) < 0) {
        eu_req_reply_error(req, 422, "limit must be an integer from 0 to 1000");
        return;
    }
    if ((v = eu_req_query(req, "offset")) && parse_nonneg(v, 1L << 40, &l->offset) < 0) {
        eu_req_reply_error(req, 422, "offset must be a non-negative integer");
        return;
    }
    const char *limit = eu_arena_sprintf(req->arena, "%ld", l->limit + 1);
    const char *offset = eu_arena_sprintf(req->arena, "%ld", l->offset);
    const char *params[] = {limit, offset};
    eu_req_control_stmt(req, &eu_admin_control_sql[CONTROL_TENANT_LIST], 2, params, on_list, l);
}

/* ---- GET /admin/v1/tenants/:domain ---- */

/* The tenant with its media quota and, when usage is not NULL, the bytes
 * its media files take. New reference. */
static json_t *
tenant_media_json(struct eu_req *req, struct eu_tenant *t, const char *usage)
{
    json_t *o = eu_admin_tenant_json(req->app->registry, t, true);
    json_object_set_new(o, "media_quota_bytes", json_integer(eu_media_quota(req->app->cfg, t)));
    json_object_set_new(o, "media_usage_bytes",
                        usage ? json_integer(strtoll(usage, NULL, 10)) : json_null());
    return o;
}

static void
on_media_usage(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_req *req = arg;
    eu_req_enter(req);
    /* Without its database the rest of the answer still stands. */
    const char *usage = st == EU_DB_OK && PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : NULL;
    eu_req_reply_json(req, 200, tenant_media_json(req, req->tenant, usage));
}

/* Answers 200 with the tenant, reading its media usage from its placement
 * first unless it is being deleted or moved. */
static void
reply_with_usage(struct eu_req *req, struct eu_tenant *t)
{
    if (t->state == EU_TENANT_DELETING || t->moving) {
        eu_req_reply_json(req, 200, tenant_media_json(req, t, NULL));
        return;
    }
    if (!req->tenant) {
        eu_tenant_ref(t);
        req->tenant = t; /* released with the request */
    }
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)t->id)};
    eu_db_pool_stmt(eu_tenant_placement_pool(req->app->registry, t),
                    &eu_admin_tenants_sql[ADMIN_TENANTS_MEDIA_USAGE], 1, p, on_media_usage, req);
}

void
eu_admin_tenants_show(struct eu_req *req)
{
    struct eu_tenant *t = tenant_from_param(req);
    if (!t) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    reply_with_usage(req, t);
}

/* ---- PATCH /admin/v1/tenants/:domain ---- */

/* A PATCH in flight: "registrations" lives in the tenant's own database
 * (settings 'registrations_mode'), so it is written after the control row. */
struct update_call {
    struct eu_req *req;
    const char *registrations; /* NULL when not asked to change */
};

static void
on_registrations_saved(struct eu_req *req, PGresult *res, void *arg)
{
    struct update_call *c = arg;
    json_t *o = eu_admin_tenant_json(req->app->registry, req->tenant, true);
    json_object_set_new(o, "registrations", json_string(c->registrations));
    eu_req_reply_json(req, 200, o);
}

static void
on_updated(struct eu_req *req, PGresult *res, enum eu_db_status st, void *arg)
{
    struct update_call *c = arg;
    if (st != EU_DB_OK) {
        if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23514") == 0)
            eu_req_reply_error(req, 422, "Validation failed: a limit is out of range");
        else
            eu_req_reply_db_error(req, st);
        return;
    }
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct eu_tenant row;
    eu_tenant_from_row(res, 0, &row);
    struct eu_tenant *t = eu_registry_upsert(req->app->registry, &row);
    eu_log_info("admin", "updated tenant '%s'", t->domain);
    if (t->state != EU_TENANT_ACTIVE)
        eu_stream_close_for(req->app, t, 0, NULL);
    if (c->registrations) {
        if (!req->tenant) {
            eu_tenant_ref(t);
            req->tenant = t; /* released with the request */
        }
        const char *p[] = {c->registrations};
        eu_req_stmt(req, &eu_admin_tenants_sql[ADMIN_TENANTS_REGISTRATIONS], 1, p,
                    on_registrations_saved, c);
        return;
    }
    json_t *o = eu_admin_tenant_json(req->app->registry, t, true);
    json_object_set_new(o, "media_quota_bytes", json_integer(eu_media_quota(req->app->cfg, t)));
    eu_req_reply_json(req, 200, o);
}

/* Reads an optional integer field into a decimal string in the arena
 * (NULL when absent). Returns -1 after replying 422 when it is not an
 * integer in [min, max]. */
static int
int_field(struct eu_req *req, json_t *body, const char *name, long min, long max, const char **out)
{
    json_t *v = json_object_get(body, name);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        eu_req_reply_error(req, 422, "Validation failed: %s must be an integer from %ld to %ld",
                           name, min, max);
        return -1;
    }
    *out = eu_arena_sprintf(req->arena, "%lld", (long long)json_integer_value(v));
    return 0;
}

void
eu_admin_tenants_update(struct eu_req *req)
{
    struct eu_tenant *t = tenant_from_param(req);
    if (!t) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (eu_admin_tenant_check_idle(req, t) < 0)
        return;
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    static const char *const known[] = {"state",
                                        "title",
                                        "max_connections",
                                        "min_connections",
                                        "acquire_timeout_seconds",
                                        "idle_timeout_seconds",
                                        "registrations",
                                        "authorized_fetch",
                                        "media_quota_bytes"};
    const char *key;
    json_t *val;
    json_object_foreach(body, key, val)
    {
        bool ok = false;
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
            ok = ok || strcmp(key, known[i]) == 0;
        if (!ok) {
            eu_req_reply_error(req, 422, "Validation failed: unknown field '%s'", key);
            return;
        }
    }
    json_t *state_j = json_object_get(body, "state");
    const char *state = NULL;
    if (state_j) {
        state = json_string_value(state_j);
        if (!state || (strcmp(state, "active") != 0 && strcmp(state, "suspended") != 0)) {
            eu_req_reply_error(req, 422, "Validation failed: state must be active or suspended");
            return;
        }
    }
    json_t *title_j = json_object_get(body, "title");
    if (title_j && (!json_is_string(title_j) || strlen(json_string_value(title_j)) > 200)) {
        eu_req_reply_error(req, 422, "Validation failed: title must be a string of at most 200");
        return;
    }
    json_t *af_j = json_object_get(body, "authorized_fetch");
    if (af_j && !json_is_boolean(af_j)) {
        eu_req_reply_error(req, 422, "Validation failed: authorized_fetch must be true or false");
        return;
    }
    struct update_call *call = eu_arena_calloc(req->arena, sizeof(*call));
    call->req = req;
    json_t *reg_j = json_object_get(body, "registrations");
    if (reg_j) {
        call->registrations = json_string_value(reg_j);
        const char *r = call->registrations;
        if (!r || (strcmp(r, "open") && strcmp(r, "approval") && strcmp(r, "closed"))) {
            eu_req_reply_error(req, 422,
                               "Validation failed: registrations must be open, approval or closed");
            return;
        }
    }
    const char *maxc, *minc, *acq, *idle;
    if (int_field(req, body, "max_connections", 1, 100, &maxc) < 0 ||
        int_field(req, body, "min_connections", 0, 100, &minc) < 0 ||
        int_field(req, body, "acquire_timeout_seconds", 1, 3600, &acq) < 0 ||
        int_field(req, body, "idle_timeout_seconds", 1, 86400, &idle) < 0)
        return;
    struct eu_db_pool_limits lim;
    eu_tenant_effective_limits(req->app->registry, t, &lim);
    long want_max = maxc ? atol(maxc) : lim.max_connections;
    long want_min = minc ? atol(minc) : lim.min_connections;
    if (want_min > want_max) {
        eu_req_reply_error(req, 422,
                           "Validation failed: min_connections must not exceed max_connections");
        return;
    }
    /* media_quota_bytes: bytes, 0 unlimited, null back to the config's. */
    json_t *quota_j = json_object_get(body, "media_quota_bytes");
    const char *quota = NULL;
    if (quota_j && !json_is_null(quota_j)) {
        if (!json_is_integer(quota_j) || json_integer_value(quota_j) < 0) {
            eu_req_reply_error(req, 422,
                               "Validation failed: media_quota_bytes must be an integer of at "
                               "least 0, or null");
            return;
        }
        quota = eu_arena_sprintf(req->arena, "%lld", (long long)json_integer_value(quota_j));
    }
    const char *id = eu_arena_sprintf(req->arena, "%lld", (long long)t->id);
    const char *af = af_j ? (json_is_true(af_j) ? "true" : "false") : NULL;
    const char *params[] = {id,
                            state,
                            title_j ? json_string_value(title_j) : NULL,
                            maxc,
                            minc,
                            acq,
                            idle,
                            quota_j ? "true" : "false",
                            quota,
                            af};
    eu_req_control_stmt_or_error(req, &eu_admin_control_sql[CONTROL_TENANT_UPDATE], 10, params,
                                 on_updated, call);
}

/* ---- DELETE /admin/v1/tenants/:domain?confirm=:domain ---- */

/*
 * The row turns 'deleting' first, so the domain answers 404 at once; its
 * rows then go in the background (src/admin/purge.c), after which the row
 * itself goes. GET shows the progress meanwhile.
 */
static void
on_deleting(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct eu_tenant row;
    eu_tenant_from_row(res, 0, &row);
    struct eu_tenant *t = eu_registry_upsert(req->app->registry, &row);
    eu_log_info("admin", "deleting tenant '%s'", t->domain);
    eu_stream_close_for(req->app, t, 0, NULL);
    eu_admin_purge_start(req->app, t);
    eu_req_reply_json(req, 202, eu_admin_tenant_json(req->app->registry, t, false));
}

void
eu_admin_tenants_delete(struct eu_req *req)
{
    struct eu_tenant *t = tenant_from_param(req);
    if (!t) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (eu_admin_tenant_check_idle(req, t) < 0)
        return;
    const char *confirm = eu_req_query(req, "confirm");
    if (!confirm || strcmp(confirm, t->domain) != 0) {
        eu_req_reply_error(req, 422, "Pass confirm=%s to delete this tenant and its data",
                           t->domain);
        return;
    }
    const char *id = eu_arena_sprintf(req->arena, "%lld", (long long)t->id);
    const char *params[] = {id};
    eu_req_control_stmt(req, &eu_admin_control_sql[CONTROL_TENANT_DELETING], 1, params, on_deleting,
                        NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_tenants_routes[] = {
    {EU_HTTP_POST, "/admin/v1/tenants", eu_admin_tenants_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/tenants", eu_admin_tenants_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain", eu_admin_tenants_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_PATCH, "/admin/v1/tenants/:domain", eu_admin_tenants_update, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain", eu_admin_tenants_delete, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
