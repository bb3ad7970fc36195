/*
 * Announcements as clients read them (Mastodon's announcements API):
 * GET /api/v1/announcements, POST /api/v1/announcements/:id/dismiss and
 * PUT/DELETE /api/v1/announcements/:id/reactions/:name. The operator writes
 * them through the admin API (src/admin/announcements.c).
 *
 * Shown are the published ones that have not ended, oldest event first,
 * each with the viewer's read flag and the reactions grouped by name. The
 * list includes dismissed ones (read true), as Mastodon does since 3.2;
 * with_dismissed=false leaves them out, as older clients asked for.
 *
 * A reaction is a Unicode emoji (ICU's RGI_Emoji set). Eunha has no
 * custom emojis, so any other name is refused with Mastodon's 422. The
 * schema caps the different names per announcement
 * (migrations/tenant/0028_announcements.sql). Each change of a count is
 * streamed to every listener ("announcement.reaction").
 */
#include "announcements_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>

#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"
#include "eunha/text.h"

/* Bytes of a reaction's name: the longest RGI emoji sequences (family and
 * flag ZWJ sequences) take about 35; the schema holds the same cap. */
#define REACTION_NAME_MAX 64
/* Announcements one list shows at most: an operator's, so few, but the
 * list is unpaged (as Mastodon's) and rendered on the loop. */
#define LIST_MAX 200

#define UNKNOWN_EMOJI "Validation failed: Name is not a recognized emoji"

/* The entity's columns for announcements a and viewer $2, as
 * announcement_json() reads them: each named for the member it becomes. */
#define ANN_COLUMNS                                                                                \
    "a.id::text AS id, a.text, eunha_ts(a.starts_at) AS starts_at,"                                \
    " eunha_ts(a.ends_at) AS ends_at, a.all_day,"                                                  \
    " eunha_ts(coalesce(a.published_at, a.created_at)) AS published_at,"                           \
    " eunha_ts(a.updated_at) AS updated_at,"                                                       \
    " EXISTS (SELECT 1 FROM announcement_dismissals d WHERE d.tenant_id = $1"                      \
    "  AND d.account_id = $2::bigint AND d.announcement_id = a.id) AS read,"                       \
    " (SELECT coalesce(json_agg(json_build_object('name', r.name, 'count', r.n,"                   \
    "  'me', r.me) ORDER BY r.first, r.name), '[]')::text FROM (SELECT x.name,"                    \
    "  count(*) AS n, bool_or(x.account_id = $2::bigint) AS me,"                                   \
    "  min(x.created_at) AS first FROM announcement_reactions x"                                   \
    "  WHERE x.tenant_id = $1 AND x.announcement_id = a.id GROUP BY x.name) r) AS reactions"

enum {
    ANN_LIST,
    ANN_DISMISS,
    ANN_REACT,
    ANN_UNREACT,
};

const struct eu_sql eu_announcements_sql[] = {
    /* $2 viewer, $3 with dismissed ones, $4 one announcement or NULL. */
    [ANN_LIST] =
        {"announcements.list",
         "SELECT " ANN_COLUMNS " FROM announcements a WHERE a.tenant_id = $1"
         " AND eunha_announcement_shown(a.published, a.ends_at)"
         " AND ($4::bigint IS NULL OR a.id = $4::bigint)"
         " AND ($3::bool OR NOT EXISTS (SELECT 1 FROM announcement_dismissals m"
         "  WHERE m.tenant_id = $1 AND m.account_id = $2::bigint AND m.announcement_id = a.id))"
         " ORDER BY coalesce(a.starts_at, a.published_at, a.created_at), a.id"
         " LIMIT 200"}, /* LIST_MAX */
    /* $2 viewer, $3 announcement: whether it is shown. */
    [ANN_DISMISS] =
        {"announcements.dismiss",
         "WITH a AS (SELECT id FROM announcements WHERE tenant_id = $1 AND id = $3::bigint"
         "  AND eunha_announcement_shown(published, ends_at)),"
         " i AS (INSERT INTO announcement_dismissals (tenant_id, account_id, announcement_id)"
         "  SELECT $1, $2::bigint, a.id FROM a ON CONFLICT DO NOTHING)"
         " SELECT count(*) FROM a"},
    /* $2 viewer, $3 announcement, $4 name: whether it is shown, whether a
     * row was added, and the name's count before. */
    [ANN_REACT] =
        {"announcements.react",
         "WITH a AS (SELECT id FROM announcements WHERE tenant_id = $1 AND id = $3::bigint"
         "  AND eunha_announcement_shown(published, ends_at)),"
         " i AS (INSERT INTO announcement_reactions (tenant_id, announcement_id, name, account_id)"
         "  SELECT $1, a.id, $4::text, $2::bigint FROM a ON CONFLICT DO NOTHING RETURNING 1)"
         " SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM i),"
         " (SELECT count(*) FROM announcement_reactions r WHERE r.tenant_id = $1"
         "  AND r.announcement_id = $3::bigint AND r.name = $4::text)"},
    /* The same for taking the viewer's reaction back. */
    [ANN_UNREACT] =
        {"announcements.unreact",
         "WITH a AS (SELECT id FROM announcements WHERE tenant_id = $1 AND id = $3::bigint"
         "  AND eunha_announcement_shown(published, ends_at)),"
         " d AS (DELETE FROM announcement_reactions WHERE tenant_id = $1"
         "  AND announcement_id = $3::bigint AND name = $4::text AND account_id = $2::bigint"
         "  AND EXISTS (SELECT 1 FROM a) RETURNING 1)"
         " SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM d),"
         " (SELECT count(*) FROM announcement_reactions r WHERE r.tenant_id = $1"
         "  AND r.announcement_id = $3::bigint AND r.name = $4::text)"},
    {0},
};

/* ----------------------------------------------------------------- entity */

static json_t *
nullable(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* The hashtags of text as the entity's tags: lower-cased, linked. */
static json_t *
tags_json(struct eu_req *req, const struct eu_text_scan *scan)
{
    json_t *tags = json_array();
    const char *base = eu_req_base_url(req);
    for (size_t k = 0; k < scan->n_tags; k++) {
        char *name = eu_arena_strdup(req->arena, scan->tags[k]);
        for (char *c = name; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        json_array_append_new(tags,
                              json_pack("{s:s, s:s}", "name", name, "url",
                                        eu_arena_sprintf(req->arena, "%s/tags/%s", base, name)));
    }
    return tags;
}

/* The columns of ANN_COLUMNS. */
enum {
    A_ID,
    A_TEXT,
    A_STARTS_AT,
    A_ENDS_AT,
    A_ALL_DAY,
    A_PUBLISHED_AT,
    A_UPDATED_AT,
    A_READ,
    A_REACTIONS,
    A_NFIELDS
};

static const char *const ann_fields[A_NFIELDS] = {
    [A_ID] = "id",
    [A_TEXT] = "text",
    [A_STARTS_AT] = "starts_at",
    [A_ENDS_AT] = "ends_at",
    [A_ALL_DAY] = "all_day",
    [A_PUBLISHED_AT] = "published_at",
    [A_UPDATED_AT] = "updated_at",
    [A_READ] = "read",
    [A_REACTIONS] = "reactions",
};

/* Where res has each column, found once a result. */
static void
ann_cols_find(const PGresult *res, int c[A_NFIELDS])
{
    for (int f = 0; f < A_NFIELDS; f++)
        c[f] = PQfnumber(res, ann_fields[f]);
}

/* The Announcement entity of row i, its columns where c says. Caller owns
 * it. */
static json_t *
announcement_json(struct eu_req *req, const PGresult *res, int i, const int c[A_NFIELDS])
{
    const char *text = PQgetvalue(res, i, c[A_TEXT]);
    const char *domain = req->tenant->domain;
    struct eu_text_scan scan;
    eu_text_scan(req->arena, text, domain, &scan);
    const char *html = eu_text_format(req->arena, text, domain, eu_req_base_url(req), NULL, 0);
    json_t *reactions = json_loads(PQgetvalue(res, i, c[A_REACTIONS]), 0, NULL);
    return json_pack(
        "{s:s, s:s, s:o, s:o, s:b, s:s, s:s, s:b, s:[], s:[], s:o, s:[], s:o}", "id",
        PQgetvalue(res, i, c[A_ID]), "content", html, "starts_at", nullable(res, i, c[A_STARTS_AT]),
        "ends_at", nullable(res, i, c[A_ENDS_AT]), "all_day",
        PQgetvalue(res, i, c[A_ALL_DAY])[0] == 't', "published_at",
        PQgetvalue(res, i, c[A_PUBLISHED_AT]), "updated_at", PQgetvalue(res, i, c[A_UPDATED_AT]),
        "read", PQgetvalue(res, i, c[A_READ])[0] == 't', "mentions", "statuses", "tags",
        tags_json(req, &scan), "emojis", "reactions", reactions ? reactions : json_array());
}

/* ------------------------------------------------------------------- list */

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *out = json_array();
    int c[A_NFIELDS];
    ann_cols_find(res, c);
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, announcement_json(req, res, i, c));
    eu_req_reply_json(req, 200, out);
}

static void
announcements_index(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    bool with_dismissed = true;
    if (eu_param_bool(params, "with_dismissed", &with_dismissed) < 0) {
        eu_req_reply_error(req, 422, "with_dismissed must be true or false");
        return;
    }
    const char *p[] = {eu_req_viewer(req), with_dismissed ? "true" : "false", NULL};
    eu_req_stmt(req, &eu_announcements_sql[ANN_LIST], 3, p, on_list, NULL);
}

static void
on_one(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    int c[A_NFIELDS];
    ann_cols_find(res, c);
    eu_req_reply_json(req, 200, announcement_json(req, res, 0, c));
}

void
eu_announcements_show_one(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {eu_req_viewer(req), "true", id};
    eu_req_stmt(req, &eu_announcements_sql[ANN_LIST], 3, p, on_one, NULL);
}

/* ---------------------------------------------------------------- dismiss */

static void
on_dismissed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (strcmp(PQgetvalue(res, 0, 0), "0") == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, json_object());
}

static void
announcements_dismiss(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_announcements_sql[ANN_DISMISS], 2, p, on_dismissed, NULL);
}

/* -------------------------------------------------------------- reactions */

/*
 * Whether name is one Unicode emoji: an RGI emoji (sequences included), or
 * one written without its emoji presentation selector (U+FE0F), as
 * keyboards often send "❤" for "❤️".
 */
static bool
emoji_is_known(const char *name)
{
    UChar buf[REACTION_NAME_MAX + 2];
    int32_t n = 0;
    UErrorCode err = U_ZERO_ERROR;
    u_strFromUTF8(buf, REACTION_NAME_MAX, &n, name, -1, &err);
    if (U_FAILURE(err) || err == U_STRING_NOT_TERMINATED_WARNING || n == 0)
        return false;
    if (u_stringHasBinaryProperty(buf, n, UCHAR_RGI_EMOJI))
        return true;
    buf[n] = 0xFE0F;
    return u_stringHasBinaryProperty(buf, n + 1, UCHAR_RGI_EMOJI);
}

/* What a reaction request names; NULL after replying. */
static const char *
reaction_target(struct eu_req *req, const char **name)
{
    const char *id = eu_req_param(req, "id");
    *name = eu_req_param(req, "name");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    if (!*name || strlen(*name) > REACTION_NAME_MAX || !emoji_is_known(*name)) {
        eu_req_reply_error(req, 422, UNKNOWN_EMOJI);
        return NULL;
    }
    return id;
}

/* Columns: shown, rows changed, the name's count before; delta is +1 for
 * an added reaction, -1 for one taken back. */
static void
on_reaction(struct eu_req *req, PGresult *res, int delta)
{
    if (strcmp(PQgetvalue(res, 0, 0), "0") == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    bool changed = strcmp(PQgetvalue(res, 0, 1), "0") != 0;
    if (!changed && delta < 0) {
        /* Mastodon's find_by!: no such reaction of the viewer's. */
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (changed) {
        long long count = strtoll(PQgetvalue(res, 0, 2), NULL, 10) + delta;
        eu_stream_announcement_reaction(req->app, req->tenant,
                                        strtoll(eu_req_param(req, "id"), NULL, 10),
                                        eu_req_param(req, "name"), count < 0 ? 0 : count);
    }
    eu_req_reply_json(req, 200, json_object());
}

static void
on_reacted(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    on_reaction(req, res, 1);
}

static void
on_unreacted(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    on_reaction(req, res, -1);
}

/* PUT: adding a reaction the viewer already gave changes nothing and
 * answers 200, as a repeated PUT should. */
static void
reactions_update(struct eu_req *req)
{
    const char *name;
    const char *id = reaction_target(req, &name);
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id, name};
    eu_req_stmt(req, &eu_announcements_sql[ANN_REACT], 3, p, on_reacted, NULL);
}

static void
reactions_destroy(struct eu_req *req)
{
    const char *name;
    const char *id = reaction_target(req, &name);
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id, name};
    eu_req_stmt(req, &eu_announcements_sql[ANN_UNREACT], 3, p, on_unreacted, NULL);
}

/* ------------------------------------------------------------------ table */

#define AUTH (EU_ROUTE_AUTH | EU_ROUTE_API)

const struct eu_route eu_announcements_routes[] = {
    {EU_HTTP_GET, "/api/v1/announcements", announcements_index, "read", AUTH},
    {EU_HTTP_POST, "/api/v1/announcements/:id/dismiss", announcements_dismiss, "write:accounts",
     AUTH},
    {EU_HTTP_PUT, "/api/v1/announcements/:id/reactions/:name", reactions_update, "write:favourites",
     AUTH},
    {EU_HTTP_DELETE, "/api/v1/announcements/:id/reactions/:name", reactions_destroy,
     "write:favourites", AUTH},
    {0},
};
