/*
 * Custom emoji: the public list a client's picker shows
 * (GET /api/v1/custom_emojis, Mastodon's CustomEmoji entity) and the
 * tenant's staff managing them (/api/v1/admin/custom_emojis: list, show,
 * upload, change, delete). Mastodon manages emoji in its web admin only;
 * the staff API here follows its admin API's pattern (admin:read /
 * admin:write, the role's manage_custom_emojis permission, an
 * admin_action_logs row for every change in the statement that makes it),
 * and the operator's /admin/v1/tenants/:domain/custom_emojis
 * (src/admin/custom_emojis.c), which names the tenant and calls the
 * eu_custom_emojis_* functions below; its audit rows name account 0.
 *
 * An upload (at most 256 KB, as Mastodon's CustomEmoji validates) is
 * processed and stored as include/eunha/mediaemoji.h says: two files, the
 * image and its still version, under "<tenant>/custom_emojis/<random>/"
 * (the /system/ route's four parts). The row holds their store keys
 * (tenant migration 0054).
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/media.h"
#include "eunha/mediaemoji.h"
#include "eunha/mediastore.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "staff_internal.h"

/* Mastodon's shortcode rule is [a-zA-Z0-9_]{2,}; the column caps it. */
#define SHORTCODE_MAX 128
#define CATEGORY_MAX 64
#define LIST_LIMIT_MAX 200

enum {
    EMOJIS_PUBLIC,
    EMOJIS_LIST,
    EMOJIS_SHOW,
    EMOJIS_CREATE,
    EMOJIS_UPDATE,
    EMOJIS_DELETE,
};

/* One emoji as a JSON object: what eu_custom_emoji_json() reads, and the
 * admin entity's own fields. */
#define EMOJI_OBJECT                                                                               \
    "json_build_object('id', e.id::text, 'shortcode', e.shortcode, 'domain', e.domain,"            \
    " 'image', e.image, 'static_image', e.static_image, 'visible_in_picker',"                      \
    " e.visible_in_picker, 'category', e.category, 'disabled', e.disabled, 'created_at',"          \
    " eunha_ts(e.created_at), 'updated_at', eunha_ts(e.updated_at), 'uri', e.uri,"                 \
    " 'image_remote_url', e.image_remote_url)::text AS emoji"

/* The audit row of a change to the emoji e: $2 the staff member, action. */
#define EMOJI_AUDIT(action)                                                                        \
    " INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type, target_id,"       \
    " human_identifier) SELECT $1, $2::bigint, " action ", 'CustomEmoji', e.id, e.shortcode"       \
    " FROM e"

const struct eu_sql eu_custom_emojis_sql[] = {
    /* The picker's list: the tenant's enabled emoji, as one JSON array. */
    [EMOJIS_PUBLIC] =
        {"custom_emojis.public",
         "SELECT json_agg(json_build_object('shortcode', e.shortcode, 'image',"
         " e.image, 'static_image', e.static_image, 'visible_in_picker',"
         " e.visible_in_picker, 'category', e.category) ORDER BY e.shortcode)::text"
         " FROM custom_emojis e WHERE e.tenant_id = $1 AND coalesce(e.domain, '') = ''"
         " AND NOT e.disabled"},
    /* $2 'local', 'remote' or NULL (all), $3 a domain or NULL, $4 the limit,
     * $5 max_id or NULL: newest first. */
    [EMOJIS_LIST] = {"custom_emojis.list",
                     "SELECT " EMOJI_OBJECT " FROM custom_emojis e WHERE e.tenant_id = $1"
                     " AND ($2::text IS NULL OR ($2 = 'local') = (e.domain IS NULL))"
                     " AND ($3::text IS NULL OR e.domain = $3)"
                     " AND ($5::bigint IS NULL OR e.id < $5::bigint)"
                     " ORDER BY e.id DESC LIMIT $4::int"},
    [EMOJIS_SHOW] = {"custom_emojis.show", "SELECT " EMOJI_OBJECT " FROM custom_emojis e"
                                           " WHERE e.tenant_id = $1 AND e.id = $2::bigint"},
    /* $2 the staff member, $3 shortcode, $4 image key, $5 still key, $6
     * content type, $7 bytes, $8 category or NULL, $9 visible_in_picker.
     * No row when the shortcode is taken. */
    [EMOJIS_CREATE] =
        {"custom_emojis.create",
         "WITH e AS (INSERT INTO custom_emojis (tenant_id, shortcode, image, static_image,"
         " content_type, file_size, category, visible_in_picker)"
         " VALUES ($1, $3, $4, $5, $6, $7::int, nullif($8, ''), $9::boolean)"
         " ON CONFLICT DO NOTHING RETURNING *),"
         " l AS (" EMOJI_AUDIT("'create'") ")"
                                           " SELECT " EMOJI_OBJECT " FROM e"},
    /* $3 the id; $4 disabled, $5 visible_in_picker, $6 category ('' for
     * none), each NULL to keep it. The audit says enable or disable when
     * that is what changed, as Mastodon's log does. */
    [EMOJIS_UPDATE] =
        {"custom_emojis.update",
         "WITH e AS (UPDATE custom_emojis SET disabled = coalesce($4::boolean, disabled),"
         " visible_in_picker = coalesce($5::boolean, visible_in_picker),"
         " category = CASE WHEN $6::text IS NULL THEN category ELSE nullif($6, '') END,"
         " updated_at = now() WHERE tenant_id = $1 AND id = $3::bigint RETURNING *),"
         " l AS (" EMOJI_AUDIT("CASE $4::boolean WHEN true THEN 'disable' WHEN false THEN 'enable'"
                               " ELSE 'update' END") ")"
                                                     " SELECT " EMOJI_OBJECT " FROM e"},
    [EMOJIS_DELETE] = {"custom_emojis.delete",
                       "WITH e AS (DELETE FROM custom_emojis WHERE tenant_id = $1"
                       " AND id = $3::bigint RETURNING *),"
                       " l AS (" EMOJI_AUDIT("'destroy'") ")"
                                                          " SELECT " EMOJI_OBJECT " FROM e"},
    {0},
};

/* ------------------------------------------------------------ rendering */

/* The admin entity of an EMOJI_OBJECT text: the CustomEmoji entity with
 * the row's id, domain, disabled, stamps and remote addresses. New
 * reference; NULL for a text that is not an object. */
static json_t *
admin_emoji_json(struct eu_req *req, const char *text)
{
    json_t *row = json_loads(text, 0, NULL);
    if (!json_is_object(row)) {
        json_decref(row);
        return NULL;
    }
    json_t *o = eu_custom_emoji_json(req, row);
    static const char *const keys[] = {"id",         "domain", "disabled",        "created_at",
                                       "updated_at", "uri",    "image_remote_url"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_t *v = json_object_get(row, keys[i]);
        json_object_set(o, keys[i], v ? v : json_null());
    }
    json_decref(row);
    return o;
}

static void
on_public(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    const char *rows = PQntuples(res) && !PQgetisnull(res, 0, 0) ? PQgetvalue(res, 0, 0) : NULL;
    eu_req_reply_json(req, 200, eu_custom_emojis_json(req, rows));
}

static void
public_list(struct eu_req *req)
{
    eu_req_stmt(req, &eu_custom_emojis_sql[EMOJIS_PUBLIC], 0, NULL, on_public, NULL);
}

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++) {
        json_t *o = admin_emoji_json(req, PQgetvalue(res, i, 0));
        if (o)
            json_array_append_new(out, o);
    }
    eu_req_reply_json(req, 200, out);
}

static void
on_one(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *o = PQntuples(res) ? admin_emoji_json(req, PQgetvalue(res, 0, 0)) : NULL;
    if (!o) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, o);
}

/* ------------------------------------------------------ staff handlers */

/* The :id parameter when it is a number; NULL after answering 404. */
static const char *
emoji_id(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!id || !*id || strspn(id, "0123456789") != strlen(id) || strlen(id) > 19) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return id;
}

void
eu_custom_emojis_list(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    bool local = false, remote = false;
    long long limit = 100;
    if (eu_param_bool(params, "local", &local) < 0 ||
        eu_param_bool(params, "remote", &remote) < 0 || eu_param_int(params, "limit", &limit) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: local, remote and limit are invalid");
        return;
    }
    if (limit < 1 || limit > LIST_LIMIT_MAX)
        limit = limit < 1 ? 1 : LIST_LIMIT_MAX;
    const char *max_id = eu_param_str(params, "max_id");
    if (max_id &&
        (!*max_id || strspn(max_id, "0123456789") != strlen(max_id) || strlen(max_id) > 19))
        max_id = NULL;
    const char *domain = eu_param_str(params, "by_domain");
    const char *p[] = {local != remote ? (local ? "local" : "remote") : NULL,
                       domain && *domain ? domain : NULL,
                       eu_arena_sprintf(req->arena, "%lld", limit), max_id};
    eu_req_stmt(req, &eu_custom_emojis_sql[EMOJIS_LIST], 4, p, on_list, NULL);
}

void
eu_custom_emojis_show(struct eu_req *req)
{
    const char *id = emoji_id(req);
    if (!id)
        return;
    const char *p[] = {id};
    eu_req_stmt(req, &eu_custom_emojis_sql[EMOJIS_SHOW], 1, p, on_one, NULL);
}

/* An upload in flight: what the request said, then what the pool made. */
struct upload {
    struct eu_req *req;
    eu_staff_emoji_made_cb made; /* a page's ending; NULL: the API's answer */
    void *made_arg;
    const char *shortcode, *category, *visible;
    const unsigned char *data; /* the request's params', borrowed */
    size_t len;
    struct eu_emoji_image *e;
};

static void
work_free(void *p)
{
    eu_emoji_image_free(p);
}

/* A refused upload: the API's error answer, or the page's ending. */
static int
upload_fail(struct upload *up, int status, const char *message)
{
    if (up->made)
        up->made(up->req, status, eu_arena_strdup(up->req->arena, message), up->made_arg);
    else
        eu_req_reply_error(up->req, status, "%s", message);
    return -1;
}

/* When the shortcode was taken meanwhile, the files stored go again. */
static void
on_created(struct eu_req *req, PGresult *res, void *arg)
{
    struct upload *up = arg;
    if (PQntuples(res) == 0) {
        eu_emoji_image_unstore(up->e);
        upload_fail(up, 422, "Validation failed: Shortcode has already been taken");
        return;
    }
    if (up->made)
        up->made(req, 200, NULL, up->made_arg);
    else
        on_one(req, res, NULL);
}

static void
on_stored(struct eu_emoji_image *e)
{
    struct upload *up = e->arg;
    struct eu_req *req = up->req;
    eu_req_enter(req);
    if (e->rc == -1) {
        upload_fail(up, 422, e->err);
        return;
    }
    if (e->rc != 0) {
        upload_fail(up, 500, "The emoji could not be stored");
        return;
    }
    const char *p[] = {
        eu_req_viewer(req), up->shortcode, e->image_key,
        e->static_key,      e->mime,       eu_arena_sprintf(req->arena, "%zu", e->size),
        up->category,       up->visible};
    eu_req_stmt(req, &eu_custom_emojis_sql[EMOJIS_CREATE], 8, p, on_created, up);
}

static bool
shortcode_is_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n >= 2 && n <= SHORTCODE_MAX &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

/* Reads the upload's fields into up; refuses (upload_fail) with 422 and
 * returns -1 on bad input, before any work is done. */
static int
read_upload(json_t *params, struct upload *up)
{
    up->shortcode = eu_param_str(params, "shortcode");
    if (!shortcode_is_valid(up->shortcode))
        return upload_fail(up, 422,
                           "Validation failed: Shortcode must be at least 2 characters"
                           " and only letters, digits and underscores");
    up->category = eu_param_str(params, "category");
    if (up->category && !*up->category)
        up->category = NULL; /* a form's empty field */
    if (up->category && strlen(up->category) > CATEGORY_MAX)
        return upload_fail(up, 422, "Validation failed: Category is too long");
    bool visible = true;
    if (eu_param_bool(params, "visible_in_picker", &visible) < 0)
        return upload_fail(up, 422, "Validation failed: visible_in_picker must be a boolean");
    up->visible = visible ? "true" : "false";
    json_t *file = json_object_get(params, "image");
    json_t *data = json_is_object(file) ? json_object_get(file, "data") : NULL;
    up->len = json_string_length(data);
    if (!json_is_string(data) || up->len == 0)
        return upload_fail(up, 422, "Validation failed: Image can't be blank");
    if (up->len > EU_EMOJI_FILE_LIMIT)
        return upload_fail(up, 422, "Validation failed: Image file size must be less than 256 KB");
    up->data = (const unsigned char *)json_string_value(data);
    if (!eu_emoji_image_acceptable(up->data, up->len))
        return upload_fail(up, 422, "Validation failed: Image content type is invalid");
    return 0;
}

static void
upload_start(struct eu_req *req, json_t *params, struct upload *up)
{
    up->req = req;
    if (read_upload(params, up) < 0)
        return;
    if (!req->app->store) {
        upload_fail(up, 503, "Media storage is unavailable");
        return;
    }
    /* The request's arena frees the work and its pixels however the
     * request ends. */
    up->e = eu_emoji_image_new(req->app, req->tenant->id, up->data, up->len, on_stored, up);
    eu_arena_on_free(req->arena, work_free, up->e);
    eu_emoji_image_start(up->e);
}

void
eu_custom_emojis_create(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    upload_start(req, params, eu_arena_calloc(req->arena, sizeof(struct upload)));
}

void
eu_staff_emoji_create(struct eu_req *req, json_t *params, eu_staff_emoji_made_cb made, void *arg)
{
    if (!(req->auth.permissions & EU_PERM_MANAGE_CUSTOM_EMOJIS)) {
        made(req, 403, "Not allowed", arg);
        return;
    }
    struct upload *up = eu_arena_calloc(req->arena, sizeof(*up));
    up->made = made;
    up->made_arg = arg;
    upload_start(req, params, up);
}

void
eu_custom_emojis_update(struct eu_req *req)
{
    const char *id = emoji_id(req);
    if (!id)
        return;
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    bool disabled, visible;
    int has_disabled = eu_param_bool(params, "disabled", &disabled);
    int has_visible = eu_param_bool(params, "visible_in_picker", &visible);
    const char *category = eu_param_str(params, "category");
    if (has_disabled < 0 || has_visible < 0) {
        eu_req_reply_error(req, 422,
                           "Validation failed: disabled and visible_in_picker must be booleans");
        return;
    }
    if (category && strlen(category) > CATEGORY_MAX) {
        eu_req_reply_error(req, 422, "Validation failed: Category is too long");
        return;
    }
    const char *p[] = {eu_req_viewer(req), id, has_disabled ? (disabled ? "true" : "false") : NULL,
                       has_visible ? (visible ? "true" : "false") : NULL, category};
    eu_req_stmt(req, &eu_custom_emojis_sql[EMOJIS_UPDATE], 5, p, on_one, NULL);
}

/* A deleted local emoji's files go too; a remote one's are its server's. */
static void
on_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *row = PQntuples(res) ? json_loads(PQgetvalue(res, 0, 0), 0, NULL) : NULL;
    if (row && json_is_null(json_object_get(row, "domain")) && req->app->store) {
        const char *keys[] = {json_string_value(json_object_get(row, "image")),
                              json_string_value(json_object_get(row, "static_image"))};
        for (int i = 0; i < 2; i++)
            if (keys[i] && *keys[i] && !strstr(keys[i], "://"))
                eu_store_del(req->app->store, keys[i], NULL, NULL);
    }
    json_decref(row);
    on_one(req, res, NULL);
}

void
eu_custom_emojis_delete(struct eu_req *req)
{
    const char *id = emoji_id(req);
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_custom_emojis_sql[EMOJIS_DELETE], 2, p, on_deleted, NULL);
}

/* ------------------------------------------------------ for the pages */

struct page_emojis {
    eu_staff_json_cb cb;
    eu_staff_done_cb done;
    void *arg;
};

static void
on_page_list(struct eu_req *req, PGresult *res, void *arg)
{
    struct page_emojis *pe = arg;
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++) {
        json_t *o = admin_emoji_json(req, PQgetvalue(res, i, 0));
        if (o)
            json_array_append_new(out, o);
    }
    pe->cb(req, out, pe->arg);
    json_decref(out);
}

void
eu_staff_emojis_load(struct eu_req *req, eu_staff_json_cb cb, void *arg)
{
    struct page_emojis *pe = eu_arena_calloc(req->arena, sizeof(*pe));
    pe->cb = cb;
    pe->arg = arg;
    const char *p[] = {"local", NULL, "200", NULL};
    eu_req_stmt(req, &eu_custom_emojis_sql[EMOJIS_LIST], 4, p, on_page_list, pe);
}

static void
on_page_changed(struct eu_req *req, PGresult *res, void *arg)
{
    struct page_emojis *pe = arg;
    pe->done(req, PQntuples(res) ? 200 : 404, pe->arg);
}

void
eu_staff_emoji_set_disabled(struct eu_req *req, const char *id, bool disabled,
                            eu_staff_done_cb done, void *arg)
{
    if (!(req->auth.permissions & EU_PERM_MANAGE_CUSTOM_EMOJIS)) {
        done(req, 403, arg);
        return;
    }
    struct page_emojis *pe = eu_arena_calloc(req->arena, sizeof(*pe));
    pe->done = done;
    pe->arg = arg;
    const char *p[] = {eu_req_viewer(req), id, disabled ? "true" : "false", NULL, NULL};
    eu_req_stmt(req, &eu_custom_emojis_sql[EMOJIS_UPDATE], 5, p, on_page_changed, pe);
}

/* ------------------------------------------------- the staff's permission */

/*
 * Mastodon's manage_custom_emojis, from the user's role (src/http/auth.c);
 * the token's admin:read / admin:write scope is the route's, checked before
 * the handler runs. Answers 403 itself when the role lacks it. The
 * operator's routes (src/admin/custom_emojis.c) call the functions above
 * directly.
 */
static void
may_manage(struct eu_req *req, void (*then)(struct eu_req *req))
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_CUSTOM_EMOJIS))
        then(req);
}

static void
staff_list(struct eu_req *req)
{
    may_manage(req, eu_custom_emojis_list);
}

static void
staff_show(struct eu_req *req)
{
    may_manage(req, eu_custom_emojis_show);
}

static void
staff_create(struct eu_req *req)
{
    may_manage(req, eu_custom_emojis_create);
}

static void
staff_update(struct eu_req *req)
{
    may_manage(req, eu_custom_emojis_update);
}

static void
staff_delete(struct eu_req *req)
{
    may_manage(req, eu_custom_emojis_delete);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_custom_emojis_routes[] = {
    {EU_HTTP_GET, "/api/v1/custom_emojis", public_list, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/admin/custom_emojis", staff_list, "admin:read",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_POST, "/api/v1/admin/custom_emojis", staff_create, "admin:write",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_GET, "/api/v1/admin/custom_emojis/:id", staff_show, "admin:read",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_PATCH, "/api/v1/admin/custom_emojis/:id", staff_update, "admin:write",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {EU_HTTP_DELETE, "/api/v1/admin/custom_emojis/:id", staff_delete, "admin:write",
     EU_ROUTE_API | EU_ROUTE_AUTH},
    {0},
};
