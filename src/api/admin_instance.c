/*
 * The instance's public description as its staff and the operator edit it
 * (docs/instance.md): the settings row 'instance' (its texts and
 * switches), the thumbnail (an uploaded image) and the terms of service's
 * dated versions. src/api/instance.c and instance_info.c serve what is
 * written here.
 *
 * The eu_instance_settings_* and eu_instance_terms_* functions act on
 * req->tenant once the caller has decided who may: the operator's
 * /admin/v1/tenants/:domain/instance and .../terms_of_service
 * (src/admin/instance.c) after naming the tenant, and the staff's
 * /api/v1/admin/instance and /api/v1/admin/terms_of_service below with
 * Mastodon's manage_settings. Mastodon edits these in its web admin only;
 * the staff's paths are eunha's. A staff change writes an audit row; the
 * switches that are the host's to make (limited_federation_mode) are the
 * operator's alone.
 */
#include "eunha/api.h"
#include "eunha/isotime.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/media.h"
#include "eunha/mediaapi.h"
#include "eunha/mediastore.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "eunha/utf8.h"
#include "staff_internal.h"
#include "web_internal.h"

enum {
    ADMIN_INSTANCE_SHOW,
    ADMIN_INSTANCE_UPDATE,
    ADMIN_TERMS_LIST,
    ADMIN_TERMS_CREATE,
    ADMIN_TERMS_DELETE,
    ADMIN_INSTANCE_AUDIT,
};

/* A version's columns, read by name (struct terms_cols). */
#define TERMS_COLUMNS                                                                              \
    "to_char(t.effective_date, 'YYYY-MM-DD') AS effective_date,"                                   \
    " t.effective_date <= current_date AS effective, t.text, t.changelog,"                         \
    " eunha_ts(t.created_at) AS created_at"

const struct eu_sql eu_admin_instance_sql[] = {
    [ADMIN_INSTANCE_SHOW] =
        {"admin_instance.show",
         "SELECT coalesce((SELECT s.value::text FROM settings s WHERE s.tenant_id = $1"
         " AND s.key = 'instance'), '{}') AS settings"},
    /*
     * $2 the members to change, a JSON object; a null removes one. A text
     * with a date (the about text, the privacy policy) is stamped with the
     * change, as Mastodon's updated_at is. Read, merge and write in one
     * statement; two operators patching at once may lose one's change,
     * which a second PATCH repairs.
     */
    [ADMIN_INSTANCE_UPDATE] =
        {"admin_instance.update",
         "WITH cur AS (SELECT coalesce((SELECT s.value FROM settings s WHERE s.tenant_id = $1"
         "  AND s.key = 'instance'), '{}'::jsonb) AS v),"
         " stamps AS (SELECT coalesce(jsonb_object_agg(k || '_updated_at',"
         "  CASE WHEN $2::jsonb -> k = 'null'::jsonb THEN 'null'::jsonb"
         "  ELSE to_jsonb(eunha_ts(now())) END), '{}'::jsonb) AS v"
         "  FROM jsonb_object_keys($2::jsonb) k"
         "  WHERE k IN ('extended_description', 'privacy_policy'))"
         " INSERT INTO settings (tenant_id, key, value)"
         " SELECT $1, 'instance', jsonb_strip_nulls(cur.v || $2::jsonb || stamps.v)"
         " FROM cur, stamps ON CONFLICT (tenant_id, key) DO UPDATE SET value = excluded.value"
         " RETURNING value::text AS settings"},
    [ADMIN_TERMS_LIST] = {"admin_instance.terms_list",
                          "SELECT " TERMS_COLUMNS " FROM terms_of_service t WHERE t.tenant_id = $1"
                          " ORDER BY t.effective_date DESC"},
    /* $2 date, $3 text, $4 changelog; a date taken is a unique violation. */
    [ADMIN_TERMS_CREATE] =
        {"admin_instance.terms_create",
         "WITH t AS (INSERT INTO terms_of_service (tenant_id, effective_date, text, changelog)"
         " VALUES ($1, $2::date, $3, coalesce($4, '')) RETURNING *) SELECT " TERMS_COLUMNS
         " FROM t"},
    [ADMIN_TERMS_DELETE] =
        {"admin_instance.terms_delete",
         "DELETE FROM terms_of_service WHERE tenant_id = $1 AND effective_date = $2::date"
         " RETURNING id"},
    /* $2 the staff account, $3 the action, $4 the target's type, $5 its
     * id (0 for the instance itself), $6 what names it to a person. */
    [ADMIN_INSTANCE_AUDIT] =
        {"admin_instance.audit",
         "INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type, target_id,"
         " human_identifier) VALUES ($1, $2::bigint, $3, $4, $5::bigint, $6) RETURNING id"},
    {0},
};

/* --------------------------------------------------- the settings' members */

enum member_kind {
    TEXT,      /* a string of at most max characters */
    SWITCH,    /* true or false */
    AUDIENCE,  /* "all", "users" or "disabled" */
    LANGUAGES, /* an array of ISO 639 codes */
    AGE,       /* an integer from 1 to max (years) */
    COLOR,     /* "#rrggbb" */
};

/* What PATCH .../instance accepts; docs/instance.md says what each does. */
static const struct member {
    const char *name;
    enum member_kind kind;
    int max;
    bool operator_only; /* the host's to set, not the tenant's staff's */
} members[] = {
    {"description", TEXT, 5000, false},
    {"contact_email", TEXT, 320, false},
    {"contact_username", TEXT, 30, false},
    {"registrations_message", TEXT, 5000, false},
    {"extended_description", TEXT, 100000, false},
    {"privacy_policy", TEXT, 100000, false},
    {"thumbnail_url", TEXT, 2000, false},
    {"thumbnail_blurhash", TEXT, 100, false},
    /* the pages' accent colour (src/api/web_page.c) */
    {"accent_color", COLOR, 0, false},
    {"languages", LANGUAGES, 20, false},
    /* Mastodon 4.4's registrations.min_age: sign-ups give a date_of_birth */
    {"min_age", AGE, 120, false},
    {"peers_api_enabled", SWITCH, 0, false},
    {"activity_api_enabled", SWITCH, 0, false},
    {"show_domain_blocks", AUDIENCE, 0, false},
    {"show_domain_blocks_rationale", AUDIENCE, 0, false},
    /* Mastodon's Setting.trends and Setting.trendable_by_default
     * (src/api/trends.c, docs/trends.md) */
    {"trends", SWITCH, 0, false},
    {"trendable_by_default", SWITCH, 0, false},
    /* docs/blocks.md: only allowed domains federate */
    {"limited_federation_mode", SWITCH, 0, true},
};

static bool
is_language(json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;
    if (n < 2 || n > 3)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]))
            return false;
    return true;
}

/* NULL when v is acceptable for m (null always is: it removes m). */
static const char *
member_problem(const struct member *m, json_t *v)
{
    if (json_is_null(v))
        return NULL;
    switch (m->kind) {
    case TEXT:
        if (!json_is_string(v) || eu_utf8_chars(json_string_value(v)) > (size_t)m->max)
            return "a string of limited length";
        return NULL;
    case SWITCH:
        return json_is_boolean(v) ? NULL : "true or false";
    case AUDIENCE: {
        const char *s = json_string_value(v);
        if (s && (!strcmp(s, "all") || !strcmp(s, "users") || !strcmp(s, "disabled")))
            return NULL;
        return "all, users or disabled";
    }
    case COLOR:
        return eu_web_color_is_valid(json_string_value(v)) ? NULL : "a colour as \"#rrggbb\"";
    case AGE:
        return json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= m->max
                   ? NULL
                   : "an integer from 1 to 120";
    case LANGUAGES: {
        if (!json_is_array(v) || json_array_size(v) > (size_t)m->max)
            return "an array of at most 20 ISO 639 codes";
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (!is_language(x))
                return "an array of ISO 639 codes (\"en\", \"ko\")";
        }
        return NULL;
    }
    }
    return "unknown";
}

/* ------------------------------------------------------------ the audit */

/* A signed-in staff member's request, not the operator's (who has no
 * account). */
static bool
by_staff(const struct eu_req *req)
{
    return req->auth.account_id != 0;
}

static void
body_free(void *p)
{
    json_decref(p);
}

/* What a staff change answers once its audit row is in. */
struct audited {
    int status;
    json_t *body;          /* owned until the reply */
    eu_staff_done_cb done; /* a page's, instead of the JSON answer */
    void *done_arg;
};

static void
on_audited(struct eu_req *req, PGresult *res, void *arg)
{
    (void)res;
    struct audited *a = arg;
    if (a->done)
        a->done(req, a->status, a->done_arg);
    else
        eu_req_reply_json(req, a->status, json_incref(a->body));
}

void
eu_staff_audit(struct eu_req *req, const char *action, const char *type, const char *id,
               const char *human, eu_staff_done_cb done, void *arg)
{
    struct audited *a = eu_arena_calloc(req->arena, sizeof(*a));
    a->status = 200;
    a->done = done;
    a->done_arg = arg;
    const char *p[] = {eu_req_viewer(req), action, type, id, human};
    eu_req_stmt(req, &eu_admin_instance_sql[ADMIN_INSTANCE_AUDIT], 5, p, on_audited, a);
}

/* staff_internal.h; the operator's changes (no signed-in account) are not
 * the tenant's staff's to audit and answer at once. */
void
eu_staff_reply_audited(struct eu_req *req, int status, json_t *body, const char *action,
                       const char *type, const char *id, const char *human)
{
    if (!by_staff(req)) {
        eu_req_reply_json(req, status, body);
        return;
    }
    const char *who = eu_req_viewer(req);
    struct audited *a = eu_arena_calloc(req->arena, sizeof(*a));
    a->status = status;
    a->body = body;
    /* The arena holds the reference, so a request whose statement fails
     * (answered there) or that ends first frees it too. */
    eu_arena_on_free(req->arena, body_free, body);
    const char *p[] = {who, action, type, id, human};
    eu_req_stmt(req, &eu_admin_instance_sql[ADMIN_INSTANCE_AUDIT], 5, p, on_audited, a);
}

/* ------------------------------------------------------------ /instance */

/* arg: NULL for a read, else the action of the change ("update"). */
static void
on_settings(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *o = json_loads(PQgetvalue(res, 0, PQfnumber(res, "settings")), 0, NULL);
    if (!o)
        o = json_object();
    if (arg)
        eu_staff_reply_audited(req, 200, o, arg, "Instance", "0", req->tenant->domain);
    else
        eu_req_reply_json(req, 200, o);
}

void
eu_instance_settings_show(struct eu_req *req)
{
    eu_req_stmt(req, &eu_admin_instance_sql[ADMIN_INSTANCE_SHOW], 0, NULL, on_settings, NULL);
}

void
eu_instance_settings_update(struct eu_req *req)
{
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *key;
    json_t *val;
    json_object_foreach(body, key, val)
    {
        const struct member *m = NULL;
        for (size_t i = 0; i < sizeof(members) / sizeof(members[0]) && !m; i++)
            if (strcmp(members[i].name, key) == 0)
                m = &members[i];
        if (!m) {
            eu_req_reply_error(req, 422, "Validation failed: unknown field '%s'", key);
            return;
        }
        if (m->operator_only && by_staff(req)) {
            eu_req_reply_error(req, 403, "This action is not allowed");
            return;
        }
        const char *problem = member_problem(m, val);
        if (problem) {
            eu_req_reply_error(req, 422, "Validation failed: %s must be %s", key, problem);
            return;
        }
    }
    char *text = json_dumps(body, JSON_COMPACT);
    const char *p[] = {eu_arena_strdup(req->arena, text)};
    free(text);
    eu_log_info("admin", "instance description of '%s' changed", req->tenant->domain);
    eu_req_stmt(req, &eu_admin_instance_sql[ADMIN_INSTANCE_UPDATE], 1, p, on_settings,
                (void *)"update");
}

/* ---------------------------------------------------- /instance/thumbnail */

/* Mastodon's thumbnail is 1200x630 at @1x; it is fitted, not cropped. */
#define THUMB_WIDTH 1200
#define THUMB_HEIGHT 630
#define THUMB_LIMIT (8 * 1024 * 1024)

struct thumb {
    struct eu_req *req;
    const unsigned char *data; /* the request's, borrowed */
    size_t len;
    struct eu_image_limits lim;
    struct eu_image_result img;
    int rc;
    char err[256];
    const char *key; /* arena */
};

static void
thumb_result_free(void *p)
{
    eu_image_result_free(p);
}

/* The stored key and blurhash go into the settings in place of a
 * thumbnail_url; src/api/instance.c makes the key the store's URL. */
static void
on_thumb_stored(int rc, void *arg)
{
    struct thumb *t = arg;
    struct eu_req *req = t->req;
    eu_req_enter(req);
    if (rc != 0) {
        eu_req_reply_error(req, 500, "The thumbnail could not be stored");
        return;
    }
    json_t *patch = json_pack("{s:s, s:s, s:n}", "thumbnail_key", t->key, "thumbnail_blurhash",
                              t->img.blurhash, "thumbnail_url");
    char *text = json_dumps(patch, JSON_COMPACT);
    json_decref(patch);
    const char *p[] = {eu_arena_strdup(req->arena, text)};
    free(text);
    eu_log_info("admin", "thumbnail of '%s' stored as '%s'", req->tenant->domain, t->key);
    eu_req_stmt(req, &eu_admin_instance_sql[ADMIN_INSTANCE_UPDATE], 1, p, on_settings,
                (void *)"update");
}

/* On a pool thread. */
static void
thumb_work(void *arg)
{
    struct thumb *t = arg;
    t->rc = eu_image_process(t->data, t->len, &t->lim, &t->img, t->err, sizeof(t->err));
}

static void
thumb_done(void *arg)
{
    struct thumb *t = arg;
    struct eu_req *req = t->req;
    eu_req_enter(req);
    if (t->rc != 0) {
        eu_req_reply_error(req, 422, "%s", t->err);
        return;
    }
    eu_arena_on_free(req->arena, thumb_result_free, &t->img);
    t->key =
        eu_arena_sprintf(req->arena, "%lld/site/instance/thumbnail-%08x%08x.webp",
                         (long long)req->tenant->id, randombytes_random(), randombytes_random());
    eu_store_put(req->app->store, t->key, t->img.small, t->img.small_len, "image/webp",
                 on_thumb_stored, t);
}

/* A multipart "file": decoded and scaled on the CPU pool (never on the
 * loop), stored as WebP with its blurhash. The file it replaces stays in
 * the store. */
void
eu_instance_thumbnail_put(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    json_t *data = json_object_get(json_object_get(params, "file"), "data");
    size_t len = json_string_length(data);
    struct eu_media_sniff sn;
    if (!json_is_string(data) || len == 0 || len > THUMB_LIMIT ||
        eu_media_sniff((const unsigned char *)json_string_value(data), len, &sn) < 0 ||
        sn.type != EU_MEDIA_TYPE_IMAGE) {
        eu_req_reply_error(req, 422,
                           "Validation failed: file must be an image (JPEG, PNG, WebP, GIF) of at "
                           "most 8 MB");
        return;
    }
    if (!req->app->store) {
        eu_req_reply_error(req, 503, "Media storage is unavailable");
        return;
    }
    struct thumb *t = eu_arena_calloc(req->arena, sizeof(*t));
    t->req = req;
    t->data = (const unsigned char *)json_string_value(data);
    t->len = len;
    t->lim = eu_media_image_limits(req->app->cfg, THUMB_WIDTH);
    t->lim.preview_max_height = THUMB_HEIGHT;
    eu_cpupool_submit_for(req->app->cpu, req->tenant->id, thumb_work, thumb_done, t);
}

void
eu_instance_thumbnail_delete(struct eu_req *req)
{
    const char *p[] = {
        "{\"thumbnail_key\":null,\"thumbnail_blurhash\":null,\"thumbnail_url\":null}"};
    eu_req_stmt(req, &eu_admin_instance_sql[ADMIN_INSTANCE_UPDATE], 1, p, on_settings,
                (void *)"update");
}

/* ----------------------------------------------------- /terms_of_service */

/* Where a result holds TERMS_COLUMNS, found by name once per result. */
struct terms_cols {
    int date, effective, text, changelog, created;
};

static void
terms_cols_find(struct terms_cols *c, const PGresult *res)
{
    c->date = PQfnumber(res, "effective_date");
    c->effective = PQfnumber(res, "effective");
    c->text = PQfnumber(res, "text");
    c->changelog = PQfnumber(res, "changelog");
    c->created = PQfnumber(res, "created_at");
}

/* The version of row i, its columns where c says. Caller owns it. */
static json_t *
terms_json(const PGresult *res, int i, const struct terms_cols *c)
{
    return json_pack("{s:s, s:b, s:s, s:s, s:s}", "effective_date", PQgetvalue(res, i, c->date),
                     "effective", PQgetvalue(res, i, c->effective)[0] == 't', "text",
                     PQgetvalue(res, i, c->text), "changelog", PQgetvalue(res, i, c->changelog),
                     "created_at", PQgetvalue(res, i, c->created));
}

static void
on_terms_list(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    struct terms_cols c;
    terms_cols_find(&c, res);
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, terms_json(res, i, &c));
    eu_req_reply_json(req, 200, out);
}

void
eu_instance_terms_list(struct eu_req *req)
{
    eu_req_stmt(req, &eu_admin_instance_sql[ADMIN_TERMS_LIST], 0, NULL, on_terms_list, NULL);
}

/* YYYY-MM-DD with a month and day in range; PostgreSQL checks the rest
 * (a 30 February is a 422 from the statement). */
static bool
is_date(const char *s)
{
    return eu_time_day_prefix(s) && strlen(s) == 10;
}

static void
on_terms_created(struct eu_req *req, PGresult *res, enum eu_db_status st, void *arg)
{
    (void)arg;
    if (st == EU_DB_ERROR) {
        const char *state = eu_db_result_sqlstate(res);
        if (strcmp(state, "23505") == 0)
            eu_req_reply_error(req, 422, "Validation failed: a version with that date exists");
        else if (strncmp(state, "22", 2) == 0 || strcmp(state, "23514") == 0)
            eu_req_reply_error(req, 422, "Validation failed: effective_date or text");
        else
            eu_req_reply_db_error(req, st);
        return;
    }
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    struct terms_cols c;
    terms_cols_find(&c, res);
    eu_staff_reply_audited(req, 201, terms_json(res, 0, &c), "create", "TermsOfService", "0",
                           PQgetvalue(res, 0, c.date));
}

void
eu_instance_terms_create(struct eu_req *req)
{
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    const char *date = json_string_value(json_object_get(body, "effective_date"));
    const char *text = json_string_value(json_object_get(body, "text"));
    json_t *log_j = json_object_get(body, "changelog");
    if (!is_date(date) || !text || !*text || (log_j && !json_is_string(log_j))) {
        eu_req_reply_error(req, 422,
                           "Validation failed: effective_date (YYYY-MM-DD) and text are required;"
                           " changelog is a string");
        return;
    }
    const char *p[] = {date, text, json_string_value(log_j)};
    eu_req_stmt_or_error(req, &eu_admin_instance_sql[ADMIN_TERMS_CREATE], 3, p, on_terms_created,
                         NULL);
}

static void
on_terms_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_staff_reply_audited(req, 200, json_object(), "destroy", "TermsOfService", "0",
                           eu_req_param(req, "date"));
}

void
eu_instance_terms_delete(struct eu_req *req)
{
    const char *date = eu_req_param(req, "date");
    if (!is_date(date)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {date};
    eu_req_stmt(req, &eu_admin_instance_sql[ADMIN_TERMS_DELETE], 1, p, on_terms_deleted, NULL);
}

/* -------------------------------------------------------- the staff's paths */

/* Mastodon's manage_settings (403 without it); the route checked the
 * token's admin scope. */
static void
staff(struct eu_req *req, void (*then)(struct eu_req *req))
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_SETTINGS))
        then(req);
}

static void
staff_show(struct eu_req *req)
{
    staff(req, eu_instance_settings_show);
}

static void
staff_update(struct eu_req *req)
{
    staff(req, eu_instance_settings_update);
}

static void
staff_thumbnail_put(struct eu_req *req)
{
    staff(req, eu_instance_thumbnail_put);
}

static void
staff_thumbnail_delete(struct eu_req *req)
{
    staff(req, eu_instance_thumbnail_delete);
}

static void
staff_terms_list(struct eu_req *req)
{
    staff(req, eu_instance_terms_list);
}

static void
staff_terms_create(struct eu_req *req)
{
    staff(req, eu_instance_terms_create);
}

static void
staff_terms_delete(struct eu_req *req)
{
    staff(req, eu_instance_terms_delete);
}

/* ------------------------------------------------------------ route table */

#define STAFF (EU_ROUTE_API | EU_ROUTE_AUTH)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_instance_staff_routes[] = {
    {EU_HTTP_GET, "/api/v1/admin/instance", staff_show, "admin:read", STAFF},
    {EU_HTTP_PATCH, "/api/v1/admin/instance", staff_update, "admin:write", STAFF},
    /* A thumbnail is a file: the upload body limit. */
    {EU_HTTP_PUT, "/api/v1/admin/instance/thumbnail", staff_thumbnail_put, "admin:write",
     STAFF | EU_ROUTE_UPLOAD},
    {EU_HTTP_DELETE, "/api/v1/admin/instance/thumbnail", staff_thumbnail_delete, "admin:write",
     STAFF},
    {EU_HTTP_GET, "/api/v1/admin/terms_of_service", staff_terms_list, "admin:read", STAFF},
    {EU_HTTP_POST, "/api/v1/admin/terms_of_service", staff_terms_create, "admin:write", STAFF},
    {EU_HTTP_DELETE, "/api/v1/admin/terms_of_service/:date", staff_terms_delete, "admin:write",
     STAFF},
    {0},
};
