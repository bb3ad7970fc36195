/*
 * A tenant's announcements as the operator writes them:
 * /admin/v1/tenants/:domain/announcements (list, newest first, paged by
 * max_id; create) and .../announcements/:id (show, PATCH, DELETE). Bodies
 * are JSON: "text" (plain text, 1 to 5000 characters), "published"
 * (default true), "all_day", "starts_at" and "ends_at" (ISO 8601, both or
 * neither, as Mastodon validates; null clears them).
 *
 * Listeners hear of it at once (include/eunha/stream.h): a published
 * announcement, new or changed, is an "announcement" event; one
 * unpublished or deleted, "announcement.delete". Clients read them through
 * src/api/announcements.c.
 */
#include "eunha/admin.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "admin_internal.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/isotime.h"
#include "eunha/log.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"
#include "eunha/utf8.h"

/* Characters of an announcement's text (the schema holds the same cap):
 * every client shows it whole at the top of its home timeline. */
#define TEXT_MAX 5000

/* The select list announcement_json() reads, for announcements a: each
 * column named for the member it becomes. */
#define ANN_ADMIN_COLUMNS                                                                          \
    "a.id::text AS id, a.text, a.published, a.all_day, eunha_ts(a.starts_at) AS starts_at,"        \
    " eunha_ts(a.ends_at) AS ends_at, eunha_ts(a.published_at) AS published_at,"                   \
    " eunha_ts(a.created_at) AS created_at, eunha_ts(a.updated_at) AS updated_at,"                 \
    " (SELECT coalesce(json_agg(json_build_object('name', r.name, 'count', r.n)"                   \
    "  ORDER BY r.first, r.name), '[]')::text FROM (SELECT x.name,"                                \
    "  count(*) AS n, min(x.created_at) AS first FROM announcement_reactions x"                    \
    "  WHERE x.tenant_id = $1 AND x.announcement_id = a.id GROUP BY x.name) r) AS reactions,"      \
    " (SELECT count(*) FROM announcement_dismissals d WHERE d.tenant_id = $1"                      \
    "  AND d.announcement_id = a.id) AS dismissals"

enum {
    ADMIN_ANN_LIST,
    ADMIN_ANN_SHOW,
    ADMIN_ANN_CREATE,
    ADMIN_ANN_UPDATE,
    ADMIN_ANN_DELETE,
};

const struct eu_sql eu_admin_announcements_sql[] = {
    /* $2 max_id or NULL, $3 limit. */
    [ADMIN_ANN_LIST] =
        {"admin_announcements.list",
         "SELECT " ANN_ADMIN_COLUMNS " FROM announcements a WHERE a.tenant_id = $1"
         " AND ($2::bigint IS NULL OR a.id < $2::bigint) ORDER BY a.id DESC LIMIT $3::int"},
    [ADMIN_ANN_SHOW] = {"admin_announcements.show",
                        "SELECT " ANN_ADMIN_COLUMNS " FROM announcements a WHERE a.tenant_id = $1"
                        " AND a.id = $2::bigint"},
    /* $2 text, $3 published, $4 all_day, $5 starts_at, $6 ends_at. */
    [ADMIN_ANN_CREATE] =
        {"admin_announcements.create",
         "WITH a AS (INSERT INTO announcements (tenant_id, text, published, all_day, starts_at,"
         "  ends_at, published_at) VALUES ($1, $2::text, $3::bool, $4::bool, $5::timestamptz,"
         "  $6::timestamptz, CASE WHEN $3::bool THEN now() END) RETURNING *)"
         " SELECT " ANN_ADMIN_COLUMNS " FROM a"},
    /* $2 id; each of $3 text, $4 published, $5 all_day NULL to keep it;
     * $6 whether $7 starts_at and $8 ends_at replace the times. Publishing
     * again stamps published_at anew, as Mastodon's publish! does. */
    [ADMIN_ANN_UPDATE] =
        {"admin_announcements.update",
         "WITH a AS (UPDATE announcements SET text = coalesce($3::text, text),"
         "  published = coalesce($4::bool, published), all_day = coalesce($5::bool, all_day),"
         "  starts_at = CASE WHEN $6::bool THEN $7::timestamptz ELSE starts_at END,"
         "  ends_at = CASE WHEN $6::bool THEN $8::timestamptz ELSE ends_at END,"
         "  published_at = CASE WHEN coalesce($4::bool, published) AND NOT published THEN now()"
         "   ELSE published_at END, updated_at = now()"
         "  WHERE tenant_id = $1 AND id = $2::bigint RETURNING *)"
         " SELECT " ANN_ADMIN_COLUMNS " FROM a"},
    /* Reactions and dismissals go with it (ON DELETE CASCADE). */
    [ADMIN_ANN_DELETE] =
        {"admin_announcements.delete",
         "DELETE FROM announcements WHERE tenant_id = $1 AND id = $2::bigint RETURNING published"},
    {0},
};

static json_t *
nullable(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* The columns of ANN_ADMIN_COLUMNS. */
enum {
    A_ID,
    A_TEXT,
    A_PUBLISHED,
    A_ALL_DAY,
    A_STARTS_AT,
    A_ENDS_AT,
    A_PUBLISHED_AT,
    A_CREATED_AT,
    A_UPDATED_AT,
    A_REACTIONS,
    A_DISMISSALS,
    A_NFIELDS
};

static const char *const ann_fields[A_NFIELDS] = {
    [A_ID] = "id",
    [A_TEXT] = "text",
    [A_PUBLISHED] = "published",
    [A_ALL_DAY] = "all_day",
    [A_STARTS_AT] = "starts_at",
    [A_ENDS_AT] = "ends_at",
    [A_PUBLISHED_AT] = "published_at",
    [A_CREATED_AT] = "created_at",
    [A_UPDATED_AT] = "updated_at",
    [A_REACTIONS] = "reactions",
    [A_DISMISSALS] = "dismissals",
};

/* Where res has each column, found once a result. */
static void
ann_cols_find(const PGresult *res, int c[A_NFIELDS])
{
    for (int f = 0; f < A_NFIELDS; f++)
        c[f] = PQfnumber(res, ann_fields[f]);
}

/* The operator's view of row i, its columns where c says. Caller owns it. */
static json_t *
announcement_json(const PGresult *res, int i, const int c[A_NFIELDS])
{
    json_t *reactions = json_loads(PQgetvalue(res, i, c[A_REACTIONS]), 0, NULL);
    return json_pack("{s:s, s:s, s:b, s:b, s:o, s:o, s:o, s:s, s:s, s:o, s:I}", "id",
                     PQgetvalue(res, i, c[A_ID]), "text", PQgetvalue(res, i, c[A_TEXT]),
                     "published", PQgetvalue(res, i, c[A_PUBLISHED])[0] == 't', "all_day",
                     PQgetvalue(res, i, c[A_ALL_DAY])[0] == 't', "starts_at",
                     nullable(res, i, c[A_STARTS_AT]), "ends_at", nullable(res, i, c[A_ENDS_AT]),
                     "published_at", nullable(res, i, c[A_PUBLISHED_AT]), "created_at",
                     PQgetvalue(res, i, c[A_CREATED_AT]), "updated_at",
                     PQgetvalue(res, i, c[A_UPDATED_AT]), "reactions",
                     reactions ? reactions : json_array(), "dismissals",
                     (json_int_t)strtoll(PQgetvalue(res, i, c[A_DISMISSALS]), NULL, 10));
}

/* The announcement of a one-row result, as announcement_json() shows it. */
static json_t *
announcement_json_one(const PGresult *res)
{
    int c[A_NFIELDS];
    ann_cols_find(res, c);
    return announcement_json(res, 0, c);
}

/* --------------------------------------------------------------- input */

/* What a create or PATCH body says; NULL members are left as they are. */
struct ann_input {
    const char *text;
    const char *published; /* "true" / "false" */
    const char *all_day;
    bool times; /* starts_at and ends_at were given */
    const char *starts_at, *ends_at;
};

static bool
is_blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

/* An optional boolean member into *out ("true"/"false", or NULL when
 * absent); -1 after replying 422. */
static int
read_bool(struct eu_req *req, json_t *body, const char *key, const char **out)
{
    json_t *v = json_object_get(body, key);
    if (!v)
        return 0;
    if (!json_is_boolean(v)) {
        eu_req_reply_error(req, 422, "Validation failed: %s must be true or false", key);
        return -1;
    }
    *out = json_is_true(v) ? "true" : "false";
    return 0;
}

/* An ISO 8601 time member (null: none) into *out as the arena's
 * normalised text; -1 after replying 422. */
static int
read_time(struct eu_req *req, json_t *v, const char *key, const char **out, int64_t *ms)
{
    *out = NULL;
    if (json_is_null(v))
        return 0;
    const char *s = json_string_value(v);
    if (!s || eu_time_parse_iso8601(s, ms) < 0 || *ms < 0) {
        eu_req_reply_error(req, 422, "Validation failed: %s must be an ISO 8601 time", key);
        return -1;
    }
    char iso[EU_ISOTIME_SIZE];
    eu_time_format_iso8601(*ms, iso);
    *out = eu_arena_strdup(req->arena, iso);
    return 0;
}

static int
read_times(struct eu_req *req, json_t *body, struct ann_input *in)
{
    json_t *starts = json_object_get(body, "starts_at"), *ends = json_object_get(body, "ends_at");
    if (!starts && !ends)
        return 0;
    int64_t s_ms = 0, e_ms = 0;
    if (read_time(req, starts ? starts : json_null(), "starts_at", &in->starts_at, &s_ms) < 0 ||
        read_time(req, ends ? ends : json_null(), "ends_at", &in->ends_at, &e_ms) < 0)
        return -1;
    if (!in->starts_at != !in->ends_at) {
        eu_req_reply_error(req, 422, "Validation failed: starts_at and ends_at go together");
        return -1;
    }
    if (in->starts_at && e_ms < s_ms) {
        eu_req_reply_error(req, 422, "Validation failed: ends_at must not be before starts_at");
        return -1;
    }
    in->times = true;
    return 0;
}

/* Reads body into in; create requires text. -1 after replying 422: an
 * unknown member too, so an operator's typo shows rather than being
 * ignored. */
static int
read_input(struct eu_req *req, json_t *body, bool create, struct ann_input *in)
{
    static const char *const known[] = {"text",      "published", "all_day",
                                        "starts_at", "ends_at",   NULL};
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v)
    {
        int k = 0;
        while (known[k] && strcmp(known[k], key) != 0)
            k++;
        if (!known[k]) {
            eu_req_reply_error(req, 422, "Validation failed: unknown member '%.64s'", key);
            return -1;
        }
    }
    json_t *text = json_object_get(body, "text");
    if (text || create) {
        in->text = json_string_value(text);
        if (!in->text || is_blank(in->text)) {
            eu_req_reply_error(req, 422, "Validation failed: Text can't be blank");
            return -1;
        }
        if (eu_utf8_chars(in->text) > TEXT_MAX) {
            eu_req_reply_error(req, 422,
                               "Validation failed: Text is too long (maximum is %d characters)",
                               TEXT_MAX);
            return -1;
        }
    }
    if (read_bool(req, body, "published", &in->published) < 0 ||
        read_bool(req, body, "all_day", &in->all_day) < 0 || read_times(req, body, in) < 0)
        return -1;
    return 0;
}

/* The tenant and a numeric :id; NULL after replying. */
static const char *
target_id(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return NULL;
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return id;
}

/* Tells listeners about the announcement in row 0 as it now is. */
static void
stream_changed(struct eu_req *req, const PGresult *res)
{
    int64_t id = strtoll(PQgetvalue(res, 0, PQfnumber(res, "id")), NULL, 10);
    bool published = PQgetvalue(res, 0, PQfnumber(res, "published"))[0] == 't';
    eu_stream_announcement(req->app, req->tenant, id, !published);
}

/* ------------------------------------------------------------- handlers */

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *arr = json_array();
    int c[A_NFIELDS];
    ann_cols_find(res, c);
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(arr, announcement_json(res, i, c));
    eu_req_reply_json(req, 200, arr);
}

void
eu_admin_announcements_list(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *max_id, *limit;
    if (eu_admin_list_page(req, "announcement", 200, &max_id, &limit) < 0)
        return;
    const char *p[] = {max_id, limit};
    eu_req_stmt(req, &eu_admin_announcements_sql[ADMIN_ANN_LIST], 2, p, on_list, NULL);
}

static void
on_one(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, announcement_json_one(res));
}

void
eu_admin_announcements_show(struct eu_req *req)
{
    const char *id = target_id(req);
    if (!id)
        return;
    const char *p[] = {id};
    eu_req_stmt(req, &eu_admin_announcements_sql[ADMIN_ANN_SHOW], 1, p, on_one, NULL);
}

static void
on_created(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    eu_log_info("admin", "announcement %s created", PQgetvalue(res, 0, PQfnumber(res, "id")));
    if (PQgetvalue(res, 0, PQfnumber(res, "published"))[0] == 't')
        stream_changed(req, res);
    eu_req_reply_json(req, 201, announcement_json_one(res));
}

void
eu_admin_announcements_create(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    struct ann_input in = {0};
    if (read_input(req, body, true, &in) < 0)
        return;
    const char *p[] = {in.text, in.published ? in.published : "true",
                       in.all_day ? in.all_day : "false", in.starts_at, in.ends_at};
    eu_req_stmt(req, &eu_admin_announcements_sql[ADMIN_ANN_CREATE], 5, p, on_created, NULL);
}

static void
on_updated(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* Unpublished or not, listeners are told: a client drops an id it
     * does not show. */
    stream_changed(req, res);
    eu_req_reply_json(req, 200, announcement_json_one(res));
}

void
eu_admin_announcements_update(struct eu_req *req)
{
    const char *id = target_id(req);
    if (!id)
        return;
    json_t *body = eu_req_json_or_reply(req);
    if (!body)
        return;
    struct ann_input in = {0};
    if (read_input(req, body, false, &in) < 0)
        return;
    const char *p[] = {
        id,           in.text,   in.published, in.all_day, in.times ? "true" : "false",
        in.starts_at, in.ends_at};
    eu_req_stmt(req, &eu_admin_announcements_sql[ADMIN_ANN_UPDATE], 7, p, on_updated, NULL);
}

static void
on_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *id = eu_req_param(req, "id");
    if (PQgetvalue(res, 0, 0)[0] == 't')
        eu_stream_announcement(req->app, req->tenant, strtoll(id, NULL, 10), true);
    eu_log_info("admin", "announcement %s deleted", id);
    eu_req_reply_json(req, 200, json_object());
}

void
eu_admin_announcements_delete(struct eu_req *req)
{
    const char *id = target_id(req);
    if (!id)
        return;
    const char *p[] = {id};
    eu_req_stmt(req, &eu_admin_announcements_sql[ADMIN_ANN_DELETE], 1, p, on_deleted, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_announcements_routes[] = {
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/announcements", eu_admin_announcements_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/announcements", eu_admin_announcements_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/announcements/:id", eu_admin_announcements_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_PATCH, "/admin/v1/tenants/:domain/announcements/:id", eu_admin_announcements_update,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/announcements/:id", eu_admin_announcements_delete,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
