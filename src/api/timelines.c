/*
 * Timelines: home (from the Redis feed, see feeds.c), public, hashtag, and
 * an account's statuses. Each handler finds one page of status ids with one
 * query (visibility, blocks and mutes applied in SQL), then hands them to
 * eu_statuses_reply_list(), which renders them, applies the viewer's filters
 * and adds the Link header.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/tenant.h"
#include "statuses_internal.h"

#define PAGE_DEFAULT 20
#define PAGE_MAX 40

enum {
    TIMELINES_PUBLIC,
    TIMELINES_TAG,
    TIMELINES_ACCOUNT,
    TIMELINES_LINK,
};

const struct eu_sql eu_timelines_sql[] = {
    /* $2 local, $3 remote, $4 only_media, $5 viewer. No media attachments
     * exist yet, so only_media matches nothing. Like Mastodon, replies to
     * others stay out of the public timeline. */
    [TIMELINES_PUBLIC] =
        {"timelines.public",
         "SELECT s.id FROM statuses s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
         /* Nothing from accounts the viewer blocks, mutes or is blocked by;
          * nothing by accounts of a domain the viewer blocks, nor by
          * silenced accounts the viewer does not follow (migration 0042). */
         " CROSS JOIN LATERAL eunha_is_not_shunned($1, s.account_id, $5::bigint) ns"
         " CROSS JOIN LATERAL eunha_is_not_domain_hidden($1, a.id, a.domain, a.silenced_at, "
         "$5::bigint) nh"
         " WHERE s.tenant_id = $1 AND s.deleted_at IS NULL AND s.visibility = 0"
         " AND s.reblog_of_id IS NULL AND a.suspended_at IS NULL"
         " AND (s.in_reply_to_account_id IS NULL OR s.in_reply_to_account_id = s.account_id)"
         " AND (NOT $2::bool OR s.local) AND (NOT $3::bool OR NOT s.local) AND NOT $4::bool"
         " AND ns.ok AND nh.ok",
         "s.id", 6},
    /* $2 local, $3 remote, $4 only_media, $5 viewer, $6 any (with the
     * path's tag), $7 all (NULL: no condition), $8 none. */
    [TIMELINES_TAG] =
        {"timelines.tag",
         "SELECT s.id FROM statuses s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
         /* Nothing from accounts the viewer blocks, mutes or is blocked by;
          * nothing by accounts of a domain the viewer blocks, nor by
          * silenced accounts the viewer does not follow (migration 0042). */
         " CROSS JOIN LATERAL eunha_is_not_shunned($1, s.account_id, $5::bigint) ns"
         " CROSS JOIN LATERAL eunha_is_not_domain_hidden($1, a.id, a.domain, a.silenced_at, "
         "$5::bigint) nh"
         " WHERE s.tenant_id = $1 AND s.id IN (SELECT st.status_id FROM statuses_tags st JOIN tags "
         "t"
         "  ON t.tenant_id = $1 AND t.id = st.tag_id WHERE st.tenant_id = $1"
         "  AND lower(t.name) IN (SELECT lower(x) FROM unnest($6::text[]) x))"
         " AND ($7::text[] IS NULL OR (SELECT count(DISTINCT lower(t.name)) FROM statuses_tags st"
         "  JOIN tags t ON t.tenant_id = $1 AND t.id = st.tag_id WHERE st.tenant_id = $1"
         "  AND st.status_id = s.id AND lower(t.name) IN"
         "  (SELECT lower(x) FROM unnest($7::text[]) x)) = (SELECT count(DISTINCT lower(x))"
         "  FROM unnest($7::text[]) x))"
         " AND NOT EXISTS (SELECT 1 FROM statuses_tags st JOIN tags t ON t.tenant_id = $1"
         "  AND t.id = st.tag_id WHERE st.tenant_id = $1 AND st.status_id = s.id"
         "  AND lower(t.name) IN (SELECT lower(x) FROM unnest($8::text[]) x))"
         " AND s.deleted_at IS NULL AND s.visibility = 0 AND s.reblog_of_id IS NULL"
         " AND a.suspended_at IS NULL"
         " AND (NOT $2::bool OR s.local) AND (NOT $3::bool OR NOT s.local) AND NOT $4::bool"
         " AND ns.ok AND nh.ok",
         "s.id", 9},
    /* $2 account, $3 viewer, $4 exclude_replies, $5 exclude_reblogs,
     * $6 only_media, $7 tagged (NULL: any), $8 pinned. The first branch keeps
     * "no such account" (a row with a NULL id, only when the account does not
     * exist, and so has no statuses) apart from "no statuses" (no row): the
     * page's conditions bind only the last branch, and its ORDER BY and LIMIT
     * the union, which is why they name the output column id. */
    [TIMELINES_ACCOUNT] =
        {"timelines.account",
         "SELECT NULL::bigint AS id WHERE NOT EXISTS (SELECT 1 FROM accounts a"
         "  WHERE a.tenant_id = $1 AND a.id = $2::bigint)"
         " UNION ALL SELECT s.id FROM statuses s"
         " CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility, "
         "s.deleted_at, $3::bigint) vis"
         " WHERE s.tenant_id = $1 AND s.account_id = $2::bigint"
         " AND vis.ok AND (NOT $4::bool OR s.in_reply_to_id IS NULL OR "
         "s.in_reply_to_account_id = s.account_id)"
         " AND (NOT $5::bool OR s.reblog_of_id IS NULL) AND NOT $6::bool"
         " AND ($7::text IS NULL OR EXISTS (SELECT 1 FROM statuses_tags st JOIN tags t"
         "  ON t.tenant_id = $1 AND t.id = st.tag_id WHERE st.tenant_id = $1"
         "  AND st.status_id = s.id AND lower(t.name) = lower($7::text)))"
         " AND (NOT $8::bool OR EXISTS (SELECT 1 FROM status_pins sp WHERE sp.tenant_id = $1"
         "  AND sp.status_id = s.id AND sp.account_id = s.account_id))",
         "id", 9},
    /* $2 a preview card's URL, $3 the viewer: the public statuses showing
     * the card, as Mastodon's LinkFeed, with the NULL row of
     * timelines.account when there is no such card or the staff rejected it
     * from trends. */
    [TIMELINES_LINK] =
        {"timelines.link",
         "SELECT NULL::bigint AS id WHERE NOT EXISTS (SELECT 1 FROM preview_cards c"
         "  WHERE c.tenant_id = $1 AND c.url = $2 AND c.trendable IS NOT false)"
         /* the paged branch names one "id" only: the page's conditions
          * bind it unqualified */
         " UNION ALL SELECT s.id FROM statuses s"
         " CROSS JOIN LATERAL (SELECT a.domain AS a_domain, a.silenced_at AS a_silenced,"
         "  a.suspended_at AS a_suspended FROM accounts a WHERE a.tenant_id = $1"
         "  AND a.id = s.account_id) au"
         " CROSS JOIN LATERAL eunha_is_not_shunned($1, s.account_id, $3::bigint) ns"
         " CROSS JOIN LATERAL eunha_is_not_domain_hidden($1, s.account_id, au.a_domain,"
         " au.a_silenced, $3::bigint) nh"
         " WHERE s.tenant_id = $1 AND s.id IN (SELECT pcs.status_id FROM preview_cards c"
         "  JOIN preview_cards_statuses pcs ON pcs.tenant_id = $1 AND pcs.preview_card_id = c.id"
         "  WHERE c.tenant_id = $1 AND c.url = $2 AND c.trendable IS NOT false)"
         " AND s.deleted_at IS NULL AND s.visibility = 0 AND s.reblog_of_id IS NULL"
         " AND au.a_suspended IS NULL AND ns.ok AND nh.ok",
         "id", 4},
    {0},
};

struct list_ctx {
    struct eu_page page;
    const char *context; /* filter context */
};

static int
cmp_desc(const void *a, const void *b)
{
    long long x = strtoll(*(char *const *)a, NULL, 10), y = strtoll(*(char *const *)b, NULL, 10);
    return x < y ? 1 : x > y ? -1 : 0;
}

static void
reply_ids(struct eu_req *req, char **ids, size_t n, const char *context)
{
    eu_statuses_reply_list(req, (const char *const *)ids, n, n ? ids[0] : NULL,
                           n ? ids[n - 1] : NULL, context);
}

static void
on_ids(struct eu_req *req, PGresult *res, void *arg)
{
    struct list_ctx *lc = arg;
    int rows = PQntuples(res);
    /* Only timelines.account answers a NULL id: its account does not exist. */
    if (rows > 0 && PQgetisnull(res, 0, 0)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    char **ids = eu_arena_alloc(req->arena, ((size_t)rows + 1) * sizeof(char *));
    size_t n = 0;
    for (int i = 0; i < rows; i++)
        ids[n++] = eu_arena_strdup(req->arena, PQgetvalue(res, i, 0));
    /* min_id pages come back oldest first; clients want newest first. */
    qsort(ids, n, sizeof(char *), cmp_desc);
    reply_ids(req, ids, n, lc->context);
}

/* A boolean query parameter as SQL text ("true"/"false"); -1 after
 * answering 422 when it is not a boolean. */
static int
bool_param(struct eu_req *req, json_t *p, const char *key, const char **out)
{
    bool b = false;
    if (eu_param_bool(p, key, &b) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: %s is not a boolean", key);
        return -1;
    }
    *out = b ? "true" : "false";
    return 0;
}

static json_t *
params_or_reply(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p)
        eu_req_reply_eu_error(req, &err);
    return p;
}

/* ------------------------------------------------------------------- home */

static void
on_home_ids(struct eu_req *req, char **ids, size_t n, void *arg)
{
    reply_ids(req, ids, n, "home");
}

void
eu_timelines_home(struct eu_req *req)
{
    struct eu_page page;
    if (eu_page_parse(req, &page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    eu_feed_home_page(req, &page, on_home_ids, NULL);
}

/* ----------------------------------------------------------------- public */

void
eu_timelines_public(struct eu_req *req)
{
    json_t *p = params_or_reply(req);
    if (!p)
        return;
    struct list_ctx *lc = eu_arena_calloc(req->arena, sizeof(*lc));
    lc->context = "public";
    if (eu_page_parse(req, &lc->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    const char *params[8];
    if (bool_param(req, p, "local", &params[0]) < 0 ||
        bool_param(req, p, "remote", &params[1]) < 0 ||
        bool_param(req, p, "only_media", &params[2]) < 0)
        return;
    params[3] = eu_req_viewer(req);
    eu_page_params(&lc->page, params + 4);
    eu_req_stmt_page(req, &eu_timelines_sql[TIMELINES_PUBLIC], &lc->page, 8, params, on_ids, lc);
}

/* -------------------------------------------------------------------- tag */

/* Hashtag names are word characters only; anything else cannot match. */
static bool
is_tag_name(const char *s)
{
    if (!s || !*s || strlen(s) > 256)
        return false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c >= 0x80))
            return false;
    }
    return true;
}

/* A text[] literal of the valid names in arr (plus first, if not NULL);
 * *bad counts the invalid ones. Arena-owned. */
static const char *
tag_array(struct eu_req *req, const char *first, json_t *arr, int *bad)
{
    size_t cap = 3 + (first ? strlen(first) + 3 : 0);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) cap += (json_is_string(v) ? json_string_length(v) : 0) + 3;
    char *out = eu_arena_alloc(req->arena, cap), *o = out;
    *o++ = '{';
    if (first)
        o += sprintf(o, "\"%s\"", first);
    json_array_foreach(arr, i, v)
    {
        const char *s = json_string_value(v);
        if (!is_tag_name(s)) {
            (*bad)++;
            continue;
        }
        o += sprintf(o, "%s\"%s\"", o[-1] == '{' ? "" : ",", s);
    }
    *o++ = '}';
    *o = '\0';
    return out;
}

void
eu_timelines_tag(struct eu_req *req)
{
    json_t *p = params_or_reply(req);
    if (!p)
        return;
    struct list_ctx *lc = eu_arena_calloc(req->arena, sizeof(*lc));
    lc->context = "public";
    if (eu_page_parse(req, &lc->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    const char *tag = eu_req_param(req, "hashtag");
    if (!is_tag_name(tag)) {
        reply_ids(req, NULL, 0, NULL);
        return;
    }
    const char *params[11];
    if (bool_param(req, p, "local", &params[0]) < 0 ||
        bool_param(req, p, "remote", &params[1]) < 0 ||
        bool_param(req, p, "only_media", &params[2]) < 0)
        return;
    params[3] = eu_req_viewer(req);
    json_t *any = eu_param_array(p, "any"), *all = eu_param_array(p, "all"),
           *none = eu_param_array(p, "none");
    int bad_any = 0, bad_all = 0, bad_none = 0;
    params[4] = tag_array(req, tag, any, &bad_any);
    params[5] = json_array_size(all) ? tag_array(req, NULL, all, &bad_all) : NULL;
    params[6] = tag_array(req, NULL, none, &bad_none);
    json_decref(any);
    json_decref(all);
    json_decref(none);
    if (bad_all) {
        /* A required tag that cannot exist: nothing matches. */
        reply_ids(req, NULL, 0, NULL);
        return;
    }
    eu_page_params(&lc->page, params + 7);
    eu_req_stmt_page(req, &eu_timelines_sql[TIMELINES_TAG], &lc->page, 11, params, on_ids, lc);
}

/* ---------------------------------------------------- account's statuses */

void
eu_timelines_account(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *p = params_or_reply(req);
    if (!p)
        return;
    struct list_ctx *lc = eu_arena_calloc(req->arena, sizeof(*lc));
    lc->context = "account";
    if (eu_page_parse(req, &lc->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    const char *params[11];
    params[0] = id;
    params[1] = eu_req_viewer(req);
    if (bool_param(req, p, "exclude_replies", &params[2]) < 0 ||
        bool_param(req, p, "exclude_reblogs", &params[3]) < 0 ||
        bool_param(req, p, "only_media", &params[4]) < 0 ||
        bool_param(req, p, "pinned", &params[6]) < 0)
        return;
    const char *tagged = eu_param_str(p, "tagged");
    if (tagged && *tagged && !is_tag_name(tagged)) {
        reply_ids(req, NULL, 0, NULL);
        return;
    }
    params[5] = tagged && *tagged ? tagged : NULL;
    eu_page_params(&lc->page, params + 7);
    eu_req_stmt_page(req, &eu_timelines_sql[TIMELINES_ACCOUNT], &lc->page, 11, params, on_ids, lc);
}

/* ------------------------------------------------------------ route table */

/* ------------------------------------------------------------------- link */

/* GET /api/v1/timelines/link?url= (Mastodon 4.3): the public statuses that
 * share a link, for a trending link's page; 404 for a URL with no card. */
static void
timelines_link(struct eu_req *req)
{
    const char *url = eu_req_query(req, "url");
    if (!url || !*url) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct list_ctx *lc = eu_arena_calloc(req->arena, sizeof(*lc));
    lc->context = "public";
    if (eu_page_parse(req, &lc->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    const char *params[6] = {url, eu_req_viewer(req)};
    eu_page_params(&lc->page, params + 2);
    eu_req_stmt_page(req, &eu_timelines_sql[TIMELINES_LINK], &lc->page, 6, params, on_ids, lc);
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_timelines_routes[] = {
    {EU_HTTP_GET, "/api/v1/accounts/:id/statuses", eu_timelines_account, "read:statuses",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/timelines/home", eu_timelines_home, "read:statuses",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/timelines/public", eu_timelines_public, "read:statuses",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/timelines/tag/:hashtag", eu_timelines_tag, "read:statuses",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/timelines/link", timelines_link, "read:statuses",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {0},
};
