/*
 * The social group's route table and its small resources: favourites and
 * bookmarks lists, markers, preferences, hashtags (show, follow, followed
 * tags) and the list timeline. Notifications, filters, search,
 * conversations, reports, featured tags and suggestions have files of
 * their own.
 */

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/filters.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/tenant.h"
#include "social_internal.h"
#include "statuses_internal.h"

/* Mastodon's default and maximum page sizes for status lists. */
#define STATUSES_LIMIT 20
#define STATUSES_LIMIT_MAX 40
/* Tags: Mastodon pages followed tags by 100 at most. */
#define TAGS_LIMIT 100
#define TAG_NAME_MAX 200

#define MARKER_COLUMNS(m)                                                                          \
    m ".timeline, " m ".last_read_id::text, " m ".version, eunha_ts(" m ".updated_at)"

#define TAG_COLUMNS                                                                                \
    "t.id::text, lower(t.name), EXISTS (SELECT 1 FROM tag_follows tf WHERE tf.tenant_id = $1"      \
    " AND tf.tag_id = t.id AND tf.account_id = $2::bigint)"

enum {
    SOCIAL_FAVOURITES,
    SOCIAL_BOOKMARKS,
    SOCIAL_LIST_TIMELINE,
    SOCIAL_LIST_OWNED,
    SOCIAL_MARKERS,
    SOCIAL_MARKERS_SAVE,
    SOCIAL_PREFERENCES,
    SOCIAL_TAG,
    SOCIAL_TAG_FOLLOW,
    SOCIAL_TAG_UNFOLLOW,
    SOCIAL_FOLLOWED_TAGS,
};

/* The favourites and bookmarks pages are (page id, status id) rows. */
const struct eu_sql eu_social_sql[] = {
    [SOCIAL_FAVOURITES] = {"social.favourites",
                           "SELECT f.id::text, f.status_id::text FROM favourites f"
                           " WHERE f.tenant_id = $1 AND f.account_id = $2::bigint",
                           "f.id", 3},
    [SOCIAL_BOOKMARKS] = {"social.bookmarks",
                          "SELECT b.id::text, b.status_id::text FROM bookmarks b"
                          " WHERE b.tenant_id = $1 AND b.account_id = $2::bigint",
                          "b.id", 3},
    /* Statuses of the list's members the owner may see, their reblogs
     * included, replies per the list's replies_policy ("list": to members
     * or the owner; "followed": to anyone the owner follows; "none": none
     * but self-replies), without muted or blocked authors. No row when the
     * list is not the viewer's: the page's ORDER BY and LIMIT end the
     * statement, so it cannot also return a row saying whether the list
     * exists, and an empty page asks social.list_owned. */
    [SOCIAL_LIST_TIMELINE] =
        {"social.list_timeline",
         "SELECT s.id::text FROM statuses s"
         " JOIN list_accounts la ON la.tenant_id = $1 AND la.account_id = s.account_id"
         " JOIN lists l ON l.tenant_id = $1 AND l.id = la.list_id"
         "  AND l.id = $3::bigint AND l.account_id = $2::bigint"
         " CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility, s.deleted_at,"
         " $2::bigint) vis"
         " WHERE s.tenant_id = $1 AND vis.ok AND (s.visibility < 3 OR EXISTS "
         "(SELECT 1 FROM mentions m"
         " WHERE m.tenant_id = $1 AND m.status_id = s.id"
         "   AND m.account_id = $2::bigint))"
         "  AND (s.in_reply_to_account_id IS NULL"
         " OR s.in_reply_to_account_id = s.account_id"
         "   OR (l.replies_policy = 'list'"
         " AND (s.in_reply_to_account_id = $2::bigint"
         "    OR EXISTS (SELECT 1 FROM list_accounts r WHERE r.tenant_id = $1"
         "     AND r.list_id = l.id"
         "     AND r.account_id = s.in_reply_to_account_id)))"
         "   OR (l.replies_policy = 'followed'"
         " AND (s.in_reply_to_account_id = $2::bigint"
         "    OR EXISTS (SELECT 1 FROM follows r WHERE r.tenant_id = $1"
         "     AND r.account_id = $2::bigint"
         "     AND r.target_account_id = s.in_reply_to_account_id))))"
         "  AND NOT EXISTS (SELECT 1 FROM mutes mu WHERE mu.tenant_id = $1"
         "   AND mu.account_id = $2::bigint"
         "   AND mu.target_account_id = s.account_id"
         "   AND (mu.expires_at IS NULL OR mu.expires_at > now()))"
         "  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.tenant_id = $1"
         "   AND b.account_id = $2::bigint"
         "   AND b.target_account_id = s.account_id)",
         "s.id", 4},
    [SOCIAL_LIST_OWNED] = {"social.list_owned",
                           "SELECT 1 FROM lists WHERE tenant_id = $1 AND account_id = $2::bigint"
                           " AND id = $3::bigint"},
    [SOCIAL_MARKERS] = {"social.markers",
                        "SELECT " MARKER_COLUMNS(
                            "m") " FROM markers m WHERE m.tenant_id = $1"
                                 " AND m.account_id = $2::bigint AND m.timeline IN ($3, $4)"},
    /* No "AS m" on the target: the pool's tenant check wants the column
     * list right after the table name. */
    [SOCIAL_MARKERS_SAVE] =
        {"social.markers_save",
         "INSERT INTO markers (tenant_id, account_id, timeline, last_read_id)"
         " SELECT $1::bigint, $2::bigint, x.t, x.id FROM (VALUES ('home', $3::bigint),"
         " ('notifications', $4::bigint)) x(t, id) WHERE x.id IS NOT NULL"
         " ON CONFLICT (tenant_id, account_id, timeline) DO UPDATE SET"
         " last_read_id = EXCLUDED.last_read_id, version = markers.version + 1,"
         " updated_at = now() RETURNING " MARKER_COLUMNS("markers")},
    [SOCIAL_PREFERENCES] = {"social.preferences",
                            "SELECT default_privacy, default_sensitive, default_language FROM users"
                            " WHERE tenant_id = $1 AND account_id = $2::bigint"},
    [SOCIAL_TAG] = {"social.tag",
                    "SELECT " TAG_COLUMNS
                    " FROM tags t WHERE t.tenant_id = $1 AND lower(t.name) = lower($3)"},
    /* The tag is made on first follow, as Mastodon's find_or_create does. */
    [SOCIAL_TAG_FOLLOW] =
        {"social.tag_follow",
         "WITH ins AS (INSERT INTO tags (tenant_id, name) VALUES ($1, lower($3))"
         "  ON CONFLICT (tenant_id, (lower(name))) DO NOTHING RETURNING id, name),"
         " t AS (SELECT id, name FROM ins UNION ALL SELECT id, name FROM tags"
         "  WHERE tenant_id = $1 AND lower(name) = lower($3)),"
         " f AS (INSERT INTO tag_follows (tenant_id, account_id, tag_id)"
         "  SELECT $1::bigint, $2::bigint, id FROM t LIMIT 1 ON CONFLICT DO NOTHING)"
         " SELECT t.id::text, lower(t.name), true FROM t LIMIT 1"},
    [SOCIAL_TAG_UNFOLLOW] = {"social.tag_unfollow",
                             "WITH t AS (SELECT id, name FROM tags WHERE tenant_id = $1"
                             "  AND lower(name) = lower($3)),"
                             " d AS (DELETE FROM tag_follows tf USING t WHERE tf.tenant_id = $1"
                             "  AND tf.tag_id = t.id"
                             "  AND tf.account_id = $2::bigint)"
                             " SELECT t.id::text, lower(t.name), false FROM t"},
    [SOCIAL_FOLLOWED_TAGS] = {"social.followed_tags",
                              "SELECT tf.id::text, t.id::text, lower(t.name) FROM"
                              " tag_follows tf JOIN tags t ON t.tenant_id = $1"
                              " AND t.id = tf.tag_id"
                              " WHERE tf.tenant_id = $1 AND tf.account_id = $2::bigint",
                              "tf.id", 3},
    {0},
};

struct status_list {
    const char *first_id, *last_id, *context;
    json_t *array;
};

static void
send_status_list(struct eu_req *req, struct status_list *sl)
{
    eu_page_link(req, sl->first_id, sl->last_id);
    eu_req_reply_json(req, 200, sl->array);
}

static void
on_list_filters_loaded(struct eu_req *req, void *arg)
{
    struct status_list *sl = arg;
    json_t *kept = json_array();
    size_t i;
    json_t *st;
    json_array_foreach(sl->array, i, st)
    {
        json_t *reblog = json_object_get(st, "reblog");
        if (!eu_filters_apply(req, json_is_object(reblog) ? reblog : st, sl->context))
            json_array_append(kept, st);
    }
    json_decref(sl->array);
    sl->array = kept;
    send_status_list(req, sl);
}

static void
on_statuses_rendered(struct eu_req *req, json_t *array, void *arg)
{
    struct status_list *sl = arg;
    eu_req_enter(req);
    sl->array = array;
    if (sl->context && req->auth.account_id && json_array_size(array)) {
        eu_filters_load(req, on_list_filters_loaded, sl);
        return;
    }
    send_status_list(req, sl);
}

void
eu_social_reply_statuses(struct eu_req *req, const char *const *ids, size_t n, const char *first_id,
                         const char *last_id, const char *filter_context)
{
    struct status_list *sl = eu_arena_calloc(req->arena, sizeof(*sl));
    sl->first_id = first_id ? eu_arena_strdup(req->arena, first_id) : NULL;
    sl->last_id = last_id ? eu_arena_strdup(req->arena, last_id) : NULL;
    sl->context = filter_context;
    /* A list timeline (filter context set) hides blocked domains' statuses
     * as the other timelines do; favourites and bookmarks keep them. */
    eu_statuses_render_opts(req, ids, n, filter_context ? EU_RENDER_HIDE_DOMAIN_BLOCKED : 0,
                            on_statuses_rendered, sl);
}

/*
 * A page of (page id, status id) rows, newest first unless ascending: the
 * statuses are rendered in page order and the Link header uses the page
 * ids (a favourite's id, not its status's, as Mastodon pages favourites).
 */
struct paged {
    struct eu_page page;
    const char *context;
};

static void
on_paged_rows(struct eu_req *req, PGresult *res, void *arg)
{
    struct paged *pg = arg;
    int n = PQntuples(res);
    const char **ids = eu_arena_alloc(req->arena, sizeof(char *) * (size_t)(n ? n : 1));
    bool asc = eu_page_is_ascending(&pg->page);
    for (int i = 0; i < n; i++)
        ids[i] = eu_arena_strdup(req->arena, PQgetvalue(res, asc ? n - 1 - i : i, 1));
    const char *first = n ? PQgetvalue(res, asc ? n - 1 : 0, 0) : NULL;
    const char *last = n ? PQgetvalue(res, asc ? 0 : n - 1, 0) : NULL;
    eu_social_reply_statuses(req, ids, (size_t)n, first, last, pg->context);
}

/* Runs the paged statement s, whose $2 is the viewer and $3..$6 the page. */
static void
reply_paged_statuses(struct eu_req *req, const struct eu_sql *s, const char *context)
{
    struct paged *pg = eu_arena_calloc(req->arena, sizeof(*pg));
    pg->context = context;
    eu_page_parse(req, &pg->page, STATUSES_LIMIT, STATUSES_LIMIT_MAX);
    const char *p[5] = {eu_req_viewer(req)};
    eu_page_params(&pg->page, p + 1);
    eu_req_stmt_page(req, s, &pg->page, 5, p, on_paged_rows, pg);
}

/* ------------------------------------------------ favourites, bookmarks */

static void
favourites_index(struct eu_req *req)
{
    reply_paged_statuses(req, &eu_social_sql[SOCIAL_FAVOURITES], NULL);
}

static void
bookmarks_index(struct eu_req *req)
{
    reply_paged_statuses(req, &eu_social_sql[SOCIAL_BOOKMARKS], NULL);
}

/* -------------------------------------------------------- list timeline */

/* res: the page's rows, NULL for none. */
static void
reply_list_statuses(struct eu_req *req, struct paged *pg, PGresult *res)
{
    int n = res ? PQntuples(res) : 0;
    const char **ids = eu_arena_alloc(req->arena, sizeof(char *) * (size_t)(n ? n : 1));
    bool asc = eu_page_is_ascending(&pg->page);
    for (int i = 0; i < n; i++)
        ids[i] = eu_arena_strdup(req->arena, PQgetvalue(res, asc ? n - 1 - i : i, 0));
    eu_social_reply_statuses(req, ids, (size_t)n, n ? ids[0] : NULL, n ? ids[n - 1] : NULL, "home");
}

static void
on_list_owned(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    reply_list_statuses(req, arg, NULL);
}

static void
on_list_timeline(struct eu_req *req, PGresult *res, void *arg)
{
    struct paged *pg = arg;
    /* Rows come only from the viewer's own list: only an empty page may
     * be a missing list's 404. */
    if (PQntuples(res) > 0) {
        reply_list_statuses(req, pg, res);
        return;
    }
    const char *p[] = {eu_req_viewer(req), eu_req_param(req, "id")};
    eu_req_stmt(req, &eu_social_sql[SOCIAL_LIST_OWNED], 2, p, on_list_owned, pg);
}

/* GET /api/v1/timelines/list/:id (see social.list_timeline). */
static void
list_timeline(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct paged *pg = eu_arena_calloc(req->arena, sizeof(*pg));
    eu_page_parse(req, &pg->page, STATUSES_LIMIT, STATUSES_LIMIT_MAX);
    const char *p[6] = {eu_req_viewer(req), id};
    eu_page_params(&pg->page, p + 2);
    eu_req_stmt_page(req, &eu_social_sql[SOCIAL_LIST_TIMELINE], &pg->page, 6, p, on_list_timeline,
                     pg);
}

void
eu_timelines_list(struct eu_req *req)
{
    list_timeline(req);
}

/* -------------------------------------------------------------- markers */

static json_t *
markers_json(const PGresult *res)
{
    json_t *out = json_object();
    for (int i = 0; i < PQntuples(res); i++)
        json_object_set_new(out, PQgetvalue(res, i, 0),
                            json_pack("{s:s, s:i, s:s}", "last_read_id", PQgetvalue(res, i, 1),
                                      "version", atoi(PQgetvalue(res, i, 2)), "updated_at",
                                      PQgetvalue(res, i, 3)));
    return out;
}

static void
on_markers(struct eu_req *req, PGresult *res, void *arg)
{
    eu_req_reply_json(req, 200, markers_json(res));
}

/* GET /api/v1/markers?timeline[]=home&timeline[]=notifications. As in
 * Mastodon, no timeline asked means none answered. */
static void
markers_index(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    json_t *tl = eu_param_array(params, "timeline");
    bool home = false, notes = false;
    size_t i;
    json_t *v;
    json_array_foreach(tl, i, v)
    {
        const char *s = json_string_value(v);
        home = home || (s && strcmp(s, "home") == 0);
        notes = notes || (s && strcmp(s, "notifications") == 0);
    }
    json_decref(tl);
    const char *p[] = {eu_req_viewer(req), home ? "home" : "", notes ? "notifications" : ""};
    eu_req_stmt(req, &eu_social_sql[SOCIAL_MARKERS], 3, p, on_markers, NULL);
}

/* The last_read_id of home[last_read_id] / {"home": {"last_read_id": ..}}.
 * Returns 0 (absent: *out NULL) or -1 after answering 422. */
static int
read_marker(struct eu_req *req, json_t *params, const char *timeline, const char **out)
{
    *out = NULL;
    json_t *obj = eu_param_object(params, timeline);
    if (!obj)
        return 0;
    const char *id = eu_param_str(obj, "last_read_id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 422, "Validation failed: Last read id can't be blank");
        return -1;
    }
    *out = id;
    return 0;
}

/* POST /api/v1/markers: each given timeline's marker is saved and its
 * version goes up by one. */
static void
markers_create(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *home, *notes;
    if (read_marker(req, params, "home", &home) < 0 ||
        read_marker(req, params, "notifications", &notes) < 0)
        return;
    const char *p[] = {eu_req_viewer(req), home, notes};
    eu_req_stmt(req, &eu_social_sql[SOCIAL_MARKERS_SAVE], 3, p, on_markers, NULL);
}

/* ---------------------------------------------------------- preferences */

static void
on_preferences(struct eu_req *req, PGresult *res, void *arg)
{
    bool found = PQntuples(res) > 0;
    json_t *out = json_pack("{s:s, s:b, s:o, s:s, s:b}", "posting:default:visibility",
                            found ? PQgetvalue(res, 0, 0) : "public", "posting:default:sensitive",
                            found && PQgetvalue(res, 0, 1)[0] == 't', "posting:default:language",
                            found && !PQgetisnull(res, 0, 2) ? json_string(PQgetvalue(res, 0, 2))
                                                             : json_null(),
                            "reading:expand:media", "default", "reading:expand:spoilers", false);
    eu_req_reply_json(req, 200, out);
}

static void
preferences_show(struct eu_req *req)
{
    const char *p[] = {eu_req_viewer(req)};
    eu_req_stmt(req, &eu_social_sql[SOCIAL_PREFERENCES], 1, p, on_preferences, NULL);
}

/* ----------------------------------------------------------------- tags */

/* Hashtag names as the formatter indexes them: letters, digits, '_' and
 * any non-ASCII character, not only digits. */
static bool
tag_name_is_valid(const char *s)
{
    if (!s || !*s || strlen(s) > TAG_NAME_MAX)
        return false;
    bool digits_only = true;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool digit = *p >= '0' && *p <= '9';
        bool letter =
            (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || *p >= 0x80;
        if (!digit && !letter)
            return false;
        digits_only = digits_only && digit;
    }
    return !digits_only;
}

/* The Tag entity; following is omitted for an anonymous viewer. */
static json_t *
tag_json(struct eu_req *req, const char *id, const char *name, bool following)
{
    json_t *t = json_pack("{s:s, s:s, s:[]}", "name", name, "url",
                          eu_arena_sprintf(req->arena, "%s/tags/%s", eu_req_base_url(req), name),
                          "history");
    if (id)
        json_object_set_new(t, "id", json_string(id));
    if (req->auth.account_id)
        json_object_set_new(t, "following", json_boolean(following));
    return t;
}

static void
on_tag(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        /* Mastodon shows a hashtag nobody used yet as a fresh one. */
        const char *name = eu_req_param(req, "name");
        char *lower = eu_arena_strdup(req->arena, name);
        for (char *c = lower; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        eu_req_reply_json(req, 200, tag_json(req, NULL, lower, false));
        return;
    }
    eu_req_reply_json(req, 200,
                      tag_json(req, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1),
                               PQgetvalue(res, 0, 2)[0] == 't'));
}

/* Checks the :name parameter; answers 404 and returns NULL when invalid. */
static const char *
tag_param(struct eu_req *req)
{
    const char *name = eu_req_param(req, "name");
    if (!tag_name_is_valid(name)) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return name;
}

static void
tags_show(struct eu_req *req)
{
    const char *name = tag_param(req);
    if (!name)
        return;
    const char *p[] = {eu_req_viewer(req), name};
    eu_req_stmt(req, &eu_social_sql[SOCIAL_TAG], 2, p, on_tag, NULL);
}

static void
tags_follow(struct eu_req *req)
{
    const char *name = tag_param(req);
    if (!name)
        return;
    const char *p[] = {eu_req_viewer(req), name};
    eu_req_stmt(req, &eu_social_sql[SOCIAL_TAG_FOLLOW], 2, p, on_tag, NULL);
}

static void
tags_unfollow(struct eu_req *req)
{
    const char *name = tag_param(req);
    if (!name)
        return;
    const char *p[] = {eu_req_viewer(req), name};
    eu_req_stmt(req, &eu_social_sql[SOCIAL_TAG_UNFOLLOW], 2, p, on_tag, NULL);
}

/* For featured.c, which shows and features hashtags the same way. */
bool
eu_social_tag_name_is_valid(const char *name)
{
    return tag_name_is_valid(name);
}

json_t *
eu_social_tag_json(struct eu_req *req, const char *id, const char *name, bool following)
{
    return tag_json(req, id, name, following);
}

const struct eu_sql *
eu_social_tag_stmt(void)
{
    return &eu_social_sql[SOCIAL_TAG];
}

struct tag_page {
    struct eu_page page;
};

static void
on_followed_tags(struct eu_req *req, PGresult *res, void *arg)
{
    struct tag_page *tp = arg;
    int n = PQntuples(res);
    bool asc = eu_page_is_ascending(&tp->page);
    json_t *out = json_array();
    for (int k = 0; k < n; k++) {
        int i = asc ? n - 1 - k : k;
        json_array_append_new(out,
                              tag_json(req, PQgetvalue(res, i, 1), PQgetvalue(res, i, 2), true));
    }
    if (n)
        eu_page_link(req, PQgetvalue(res, asc ? n - 1 : 0, 0), PQgetvalue(res, asc ? 0 : n - 1, 0));
    eu_req_reply_json(req, 200, out);
}

static void
followed_tags_index(struct eu_req *req)
{
    struct tag_page *tp = eu_arena_calloc(req->arena, sizeof(*tp));
    eu_page_parse(req, &tp->page, TAGS_LIMIT, TAGS_LIMIT);
    const char *p[5] = {eu_req_viewer(req)};
    eu_page_params(&tp->page, p + 1);
    eu_req_stmt_page(req, &eu_social_sql[SOCIAL_FOLLOWED_TAGS], &tp->page, 5, p, on_followed_tags,
                     tp);
}

/* ---------------------------------------------------------------- table */

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST
#define PUT EU_HTTP_PUT
#define DEL EU_HTTP_DELETE
#define AUTH (EU_ROUTE_AUTH | EU_ROUTE_API)
#define OPT (EU_ROUTE_AUTH_OPT | EU_ROUTE_API)

const struct eu_route eu_social_routes[] = {
    {GET, "/api/v1/favourites", favourites_index, "read:favourites", AUTH},
    {GET, "/api/v1/bookmarks", bookmarks_index, "read:bookmarks", AUTH},
    {GET, "/api/v1/timelines/list/:id", list_timeline, "read:lists", AUTH},
    {GET, "/api/v1/markers", markers_index, "read:statuses", AUTH},
    {POST, "/api/v1/markers", markers_create, "write:statuses", AUTH},
    {GET, "/api/v1/preferences", preferences_show, "read:accounts", AUTH},
    {GET, "/api/v1/followed_tags", followed_tags_index, "read:follows", AUTH},
    {GET, "/api/v1/tags/:name", tags_show, "read:follows", OPT},
    {POST, "/api/v1/tags/:name/follow", tags_follow, "write:follows", AUTH},
    {POST, "/api/v1/tags/:name/unfollow", tags_unfollow, "write:follows", AUTH},
    /* Tags, statuses and links trend in trends.c. */
    /* Featured tags are featured.c's, suggestions suggestions.c's. */
    {0},
};
