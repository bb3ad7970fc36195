/*
 * Trends and the staff's review of them: GET /api/v1/trends (an alias of
 * /trends/tags), /api/v1/trends/tags and /api/v1/trends/statuses for
 * everyone, and Mastodon's admin side, GET /api/v1/admin/trends/tags and
 * /statuses (every candidate, with requires_review) and POST .../:id/
 * approve|reject (permission manage_taxonomies, each with its audit row).
 *
 * The lists read the scores the trends task keeps (src/social/trends_task.c,
 * tenant migration 0069; docs/trends.md): Mastodon's scoring by distinct
 * accounts with decay, so a list is a walk down one index, and a score
 * keeps decaying between the task's runs. Nothing shows publicly before
 * the staff approved it (tags.trendable and status_trend_reviews, tenant
 * migration 0056), as Mastodon requires review by default, unless the
 * tenant's trendable_by_default lets tags and statuses show until the
 * staff reject them; with its trends switched off the public lists are
 * empty and only the staff see the candidates (Mastodon's Setting.trends
 * and Setting.trendable_by_default, kept in the instance settings).
 *
 * Links (preview cards, src/social/cards.c) trend as tags do, by the
 * distinct accounts whose public statuses carried the card, and show
 * publicly once the staff approved the link or its publisher (preview_card_providers, migration
 * 0065), as Mastodon's PreviewCard#trendable? falls back to its provider's; trendable_by_default
 * does not reach links, as it does not in Mastodon (by design, mastodon/mastodon#23783). The staff
 * list them at
 * /api/v1/admin/trends/links and review publishers at
 * .../links/publishers, each review with its audit row.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/cards.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/trends.h"

/* Mastodon's limits for trends: 10 by default, 20 at most. */
#define TRENDS_LIMIT 10
#define TRENDS_LIMIT_MAX 20

enum {
    TRENDS_TAGS,
    TRENDS_STATUSES,
    TRENDS_TAG_REVIEW,
    TRENDS_STATUS_REVIEW,
    TRENDS_LINKS,
    TRENDS_LINK_REVIEW,
    TRENDS_PUBLISHERS,
    TRENDS_PUBLISHER_REVIEW,
};

/* A tag's Mastodon history: the last seven days (UTC), today first, each
 * with its uses and distinct accounts, from the tag's range of the
 * statuses_tags key. ID is the tag id's column. */
#define TAG_HISTORY(ID)                                                                            \
    "(SELECT json_agg(json_build_object('day', extract(epoch FROM "                                \
    "d.day::timestamp)::bigint::text,"                                                             \
    " 'uses', d.uses::text, 'accounts', d.accounts::text) ORDER BY d.day DESC)"                    \
    " FROM (SELECT (now() AT TIME ZONE 'UTC')::date - i AS day FROM generate_series(0, 6) i) dd"   \
    " CROSS JOIN LATERAL (SELECT dd.day, count(*) AS uses, count(DISTINCT s.account_id)"           \
    "  AS accounts FROM statuses_tags t JOIN statuses s ON s.tenant_id = t.tenant_id"              \
    "  AND s.id = t.status_id WHERE t.tenant_id = $1 AND t.tag_id = " ID                           \
    "  AND t.status_id >= eunha_day_first_id(dd.day)"                                              \
    "  AND t.status_id < eunha_day_first_id(dd.day + 1) AND s.deleted_at IS NULL) d)::text"        \
    " AS history"

/* A link's history, as TAG_HISTORY, from the card's range of
 * preview_cards_statuses. */
#define LINK_HISTORY(ID)                                                                           \
    "(SELECT json_agg(json_build_object('day', extract(epoch FROM "                                \
    "d.day::timestamp)::bigint::text,"                                                             \
    " 'uses', d.uses::text, 'accounts', d.accounts::text) ORDER BY d.day DESC)"                    \
    " FROM (SELECT (now() AT TIME ZONE 'UTC')::date - i AS day FROM generate_series(0, 6) i) dd"   \
    " CROSS JOIN LATERAL (SELECT dd.day, count(*) AS uses, count(DISTINCT s.account_id)"           \
    "  AS accounts FROM preview_cards_statuses t JOIN statuses s ON s.tenant_id = t.tenant_id"     \
    "  AND s.id = t.status_id WHERE t.tenant_id = $1 AND t.preview_card_id = " ID                  \
    "  AND t.status_id >= eunha_day_first_id(dd.day)"                                              \
    "  AND t.status_id < eunha_day_first_id(dd.day + 1) AND s.deleted_at IS NULL"                  \
    "  AND s.visibility = 0) d)::text AS history"

/* A publisher's Admin entity's columns, from p. */
#define PUBLISHER_COLS                                                                             \
    "p.id::text AS id, p.domain, p.trendable::text AS trendable,"                                  \
    " CASE WHEN p.reviewed_at IS NULL THEN NULL ELSE eunha_ts(p.reviewed_at) END AS reviewed_at,"  \
    " CASE WHEN p.requested_review_at IS NULL THEN NULL ELSE eunha_ts(p.requested_review_at) END"  \
    " AS requested_review_at"

/* The tenant's switches from its instance settings (docs/instance.md):
 * Mastodon's Setting.trends (on unless set false) and
 * Setting.trendable_by_default (off unless set true), as one row cfg. */
#define TRENDS_CFG                                                                                 \
    "cfg AS (SELECT coalesce((s.value ->> 'trends')::bool, true) AS enabled,"                      \
    " coalesce((s.value ->> 'trendable_by_default')::bool, false) AS by_default"                   \
    " FROM (SELECT 1) one LEFT JOIN settings s ON s.tenant_id = $1 AND s.key = 'instance')"

const struct eu_sql eu_trends_sql[] = {
    /*
     * $2 true for every candidate (the staff), false for the approved
     * only; $3 limit, $4 offset. The tags the trends task scored
     * (src/social/trends_task.c), by their rank, while their score
     * decayed to now is at least Mastodon's threshold. A tag not yet
     * reviewed shows publicly when the tenant trends by default.
     */
    [TRENDS_TAGS] = {"trends.tags",
                     "WITH " TRENDS_CFG " SELECT g.id::text AS id, g.name,"
                     " g.trendable::text AS trendable, cfg.by_default::text AS by_default,"
                     " " TAG_HISTORY(
                         "g.id") " FROM cfg, trend_scores r JOIN tags g"
                                 " ON g.tenant_id = $1 AND g.id = r.target_id"
                                 " WHERE r.tenant_id = $1 AND r.kind = 0"
                                 " AND r.rank >= " EU_TREND_TAG_FLOOR
                                 " + extract(epoch FROM now())::float8 / " EU_TREND_TAG_HALFLIFE
                                 " AND ($2::bool OR (cfg.enabled"
                                 " AND coalesce(g.trendable, cfg.by_default)))"
                                 " ORDER BY r.rank DESC, r.target_id DESC"
                                 " LIMIT $3::int OFFSET $4::int"},
    /* $2..$4 as above. The statuses scored, still public and not
     * deleted, with their review. */
    [TRENDS_STATUSES] =
        {"trends.statuses",
         "WITH " TRENDS_CFG " SELECT s.id::text AS id, v.trendable::text AS trendable"
         " FROM cfg, trend_scores r JOIN statuses s ON s.tenant_id = $1 AND s.id = r.target_id"
         " LEFT JOIN status_trend_reviews v ON v.tenant_id = $1 AND v.status_id = s.id"
         " WHERE r.tenant_id = $1 AND r.kind = 1 AND r.rank >= " EU_TREND_STATUS_FLOOR
         " + extract(epoch FROM now())::float8 / " EU_TREND_STATUS_HALFLIFE
         " AND s.visibility = 0 AND s.deleted_at IS NULL"
         " AND ($2::bool OR (cfg.enabled AND coalesce(v.trendable, cfg.by_default)))"
         " ORDER BY r.rank DESC, r.target_id DESC LIMIT $3::int OFFSET $4::int"},
    /* $2 the tag, $3 trendable, $4 the staff's account. */
    [TRENDS_TAG_REVIEW] =
        {"trends.tag_review",
         "WITH g AS (UPDATE tags SET trendable = $3::bool, reviewed_at = now()"
         "  WHERE tenant_id = $1 AND id = $2::bigint RETURNING id, name, trendable),"
         " l AS (INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type,"
         "  target_id, human_identifier) SELECT $1, $4::bigint, CASE WHEN $3::bool"
         "  THEN 'approve' ELSE 'reject' END, 'Tag', g.id, g.name FROM g)"
         " SELECT g.id::text AS id, g.name, g.trendable::text AS trendable, " TAG_HISTORY(
             "g.id") " FROM g"},
    /* $2 the status (public, not a reblog), $3 trendable, $4 the staff's
     * account. */
    [TRENDS_STATUS_REVIEW] =
        {"trends.status_review",
         "WITH s AS (SELECT s.id FROM statuses s WHERE s.tenant_id = $1 AND s.id = $2::bigint"
         "  AND s.deleted_at IS NULL AND s.visibility = 0 AND s.reblog_of_id IS NULL),"
         " v AS (INSERT INTO status_trend_reviews (tenant_id, status_id, trendable)"
         "  SELECT $1, s.id, $3::bool FROM s ON CONFLICT (tenant_id, status_id)"
         "  DO UPDATE SET trendable = excluded.trendable, reviewed_at = now()"
         "  RETURNING status_id),"
         " l AS (INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type,"
         "  target_id) SELECT $1, $4::bigint, CASE WHEN $3::bool THEN 'approve' ELSE 'reject'"
         "  END, 'Status', v.status_id FROM v)"
         " SELECT v.status_id::text AS id FROM v"},
    /* $2..$4 as for tags. The links scored, by rank as tags; a link
     * shows publicly when it or else its publisher was approved. */
    [TRENDS_LINKS] = {"trends.links",
                      "WITH " TRENDS_CFG " SELECT eunha_card_json(c)::text AS card,"
                      " (c.trendable IS NULL AND p.trendable IS NULL)::text AS requires_review,"
                      " " LINK_HISTORY(
                          "c.id") " FROM cfg, trend_scores r JOIN preview_cards c"
                                  " ON c.tenant_id = $1 AND c.id = r.target_id"
                                  " LEFT JOIN preview_card_providers p"
                                  " ON p.tenant_id = $1 AND p.domain = c.domain"
                                  " WHERE r.tenant_id = $1 AND r.kind = 2"
                                  " AND r.rank >= " EU_TREND_LINK_FLOOR
                                  " + extract(epoch FROM now())::float8 / " EU_TREND_LINK_HALFLIFE
                                  " AND ($2::bool OR (cfg.enabled AND coalesce(c.trendable,"
                                  " p.trendable, false)))"
                                  " ORDER BY r.rank DESC, r.target_id DESC"
                                  " LIMIT $3::int OFFSET $4::int"},
    /* $2 the card, $3 trendable, $4 the staff's account. */
    [TRENDS_LINK_REVIEW] =
        {"trends.link_review",
         "WITH c AS (UPDATE preview_cards SET trendable = $3::bool, reviewed_at = now(),"
         "  updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint RETURNING *),"
         " l AS (INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type,"
         "  target_id, human_identifier) SELECT $1, $4::bigint, CASE WHEN $3::bool"
         "  THEN 'approve' ELSE 'reject' END, 'PreviewCard', c.id, c.url FROM c)"
         " SELECT eunha_card_json(c)::text AS card, 'false' AS requires_review, " LINK_HISTORY(
             "c.id") " FROM c"},
    /* Every publisher of the tenant's cards, newest first. */
    [TRENDS_PUBLISHERS] = {"trends.publishers",
                           "SELECT " PUBLISHER_COLS " FROM preview_card_providers p"
                           " WHERE p.tenant_id = $1 ORDER BY p.id DESC LIMIT 1000"},
    /* $2 the publisher, $3 trendable, $4 the staff's account. */
    [TRENDS_PUBLISHER_REVIEW] =
        {"trends.publisher_review",
         "WITH p AS (UPDATE preview_card_providers SET trendable = $3::bool,"
         "  reviewed_at = now(), updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint"
         "  RETURNING *),"
         " l AS (INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type,"
         "  target_id, human_identifier) SELECT $1, $4::bigint, CASE WHEN $3::bool"
         "  THEN 'approve' ELSE 'reject' END, 'PreviewCardProvider', p.id, p.domain FROM p)"
         " SELECT " PUBLISHER_COLS " FROM p"},
    {0},
};

/* ------------------------------------------------------------------ tags */

/* Reads limit and offset into out[0], out[1] (arena strings); replies 422
 * and returns -1 when they are not numbers. */
static int
read_page(struct eu_req *req, const char *out[2])
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return -1;
    }
    long long limit = TRENDS_LIMIT, offset = 0;
    if (eu_param_int(params, "limit", &limit) < 0 || eu_param_int(params, "offset", &offset) < 0) {
        eu_req_reply_error(req, 422, "limit and offset must be integers");
        return -1;
    }
    if (limit < 1)
        limit = TRENDS_LIMIT;
    if (limit > TRENDS_LIMIT_MAX)
        limit = TRENDS_LIMIT_MAX;
    if (offset < 0 || offset > 1000)
        offset = offset < 0 ? 0 : 1000;
    out[0] = eu_arena_sprintf(req->arena, "%lld", limit);
    out[1] = eu_arena_sprintf(req->arena, "%lld", offset);
    return 0;
}

/* The Tag entity of row i (Admin::Tag for the staff, with its review). */
static json_t *
tag_json(struct eu_req *req, const PGresult *res, int i, bool staff)
{
    const char *name = PQgetvalue(res, i, PQfnumber(res, "name"));
    json_t *history = json_loads(PQgetvalue(res, i, PQfnumber(res, "history")), 0, NULL);
    json_t *t = json_pack("{s:s, s:s, s:s, s:o}", "id", PQgetvalue(res, i, PQfnumber(res, "id")),
                          "name", name, "url",
                          eu_arena_sprintf(req->arena, "%s/tags/%s", eu_req_base_url(req), name),
                          "history", history ? history : json_array());
    if (staff) {
        int c = PQfnumber(res, "trendable"), d = PQfnumber(res, "by_default");
        bool reviewed = !PQgetisnull(res, i, c);
        /* Mastodon's Tag#trendable?: an unreviewed tag follows the
         * tenant's trendable_by_default (a review's answer has no such
         * column, and is reviewed). */
        bool trendable =
            reviewed ? PQgetvalue(res, i, c)[0] == 't' : d >= 0 && PQgetvalue(res, i, d)[0] == 't';
        json_object_set_new(t, "trendable", json_boolean(trendable));
        json_object_set_new(t, "usable", json_true());
        json_object_set_new(t, "listable", json_true());
        json_object_set_new(t, "requires_review", json_boolean(!reviewed));
    }
    return t;
}

static void
on_tags(struct eu_req *req, PGresult *res, void *arg)
{
    bool staff = arg != NULL;
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, tag_json(req, res, i, staff));
    eu_req_reply_json(req, 200, out);
}

static void
list_tags(struct eu_req *req, bool staff)
{
    const char *page[2];
    if (read_page(req, page) < 0)
        return;
    const char *p[] = {staff ? "true" : "false", page[0], page[1]};
    eu_req_stmt(req, &eu_trends_sql[TRENDS_TAGS], 3, p, on_tags, staff ? (void *)req : NULL);
}

static void
public_tags(struct eu_req *req)
{
    list_tags(req, false);
}

/* -------------------------------------------------------------- statuses */

/* The rows' ids and, for the staff, which still need review. */
struct status_rows {
    bool staff;
    json_t *review; /* id -> requires_review; owned here */
};

static void
on_rendered(struct eu_req *req, json_t *array, void *arg)
{
    struct status_rows *rows = arg;
    if (rows->staff) {
        size_t i;
        json_t *s;
        json_array_foreach(array, i, s)
        {
            json_t *r = json_object_get(rows->review, json_string_value(json_object_get(s, "id")));
            json_object_set(s, "requires_review", r ? r : json_false());
        }
    }
    json_decref(rows->review);
    rows->review = NULL;
    eu_req_reply_json(req, 200, array);
}

static void
on_statuses(struct eu_req *req, PGresult *res, void *arg)
{
    struct status_rows *rows = arg;
    int n = PQntuples(res);
    const char **ids = eu_arena_alloc(req->arena, sizeof(*ids) * (size_t)(n ? n : 1));
    int c_id = PQfnumber(res, "id"), c_trendable = PQfnumber(res, "trendable");
    rows->review = json_object();
    for (int i = 0; i < n; i++) {
        ids[i] = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_id));
        json_object_set_new(rows->review, ids[i], json_boolean(PQgetisnull(res, i, c_trendable)));
    }
    eu_statuses_render(req, ids, (size_t)n, on_rendered, rows);
}

static void
rows_release(void *arg)
{
    struct status_rows *rows = arg;
    json_decref(rows->review);
}

static void
list_statuses(struct eu_req *req, bool staff)
{
    const char *page[2];
    if (read_page(req, page) < 0)
        return;
    struct status_rows *rows = eu_arena_calloc(req->arena, sizeof(*rows));
    rows->staff = staff;
    eu_arena_on_free(req->arena, rows_release, rows);
    const char *p[] = {staff ? "true" : "false", page[0], page[1]};
    eu_req_stmt(req, &eu_trends_sql[TRENDS_STATUSES], 3, p, on_statuses, rows);
}

static void
public_statuses(struct eu_req *req)
{
    list_statuses(req, false);
}

/* ------------------------------------------------------------ the staff */

static void
staff_tags(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_TAXONOMIES))
        list_tags(req, true);
}

static void
staff_statuses(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_TAXONOMIES))
        list_statuses(req, true);
}

/* The :id parameter when it is a number; NULL after answering 404. */
static const char *
trend_id(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!id || !*id || strspn(id, "0123456789") != strlen(id) || strlen(id) > 18) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return id;
}

static void
on_tag_reviewed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, tag_json(req, res, 0, true));
}

static void
on_status_rendered(struct eu_req *req, json_t *array, void *arg)
{
    (void)arg;
    json_t *s = json_array_get(array, 0);
    if (!s) {
        json_decref(array);
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_incref(s);
    json_decref(array);
    json_object_set_new(s, "requires_review", json_false());
    eu_req_reply_json(req, 200, s);
}

static void
on_status_reviewed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *ids[] = {eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0))};
    eu_statuses_render(req, ids, 1, on_status_rendered, NULL);
}

/* Approves or rejects the tag or status :id with statement stmt (its
 * review row and audit row), then cb answers the reviewed trend. */
static void
review(struct eu_req *req, int stmt, eu_req_rows_cb cb, bool approve)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_TAXONOMIES))
        return;
    const char *id = trend_id(req);
    if (!id)
        return;
    const char *p[] = {id, approve ? "true" : "false", eu_req_viewer(req)};
    eu_req_stmt(req, &eu_trends_sql[stmt], 3, p, cb, NULL);
}

static void
approve_tag(struct eu_req *req)
{
    review(req, TRENDS_TAG_REVIEW, on_tag_reviewed, true);
}

static void
reject_tag(struct eu_req *req)
{
    review(req, TRENDS_TAG_REVIEW, on_tag_reviewed, false);
}

static void
approve_status(struct eu_req *req)
{
    review(req, TRENDS_STATUS_REVIEW, on_status_reviewed, true);
}

static void
reject_status(struct eu_req *req)
{
    review(req, TRENDS_STATUS_REVIEW, on_status_reviewed, false);
}

/* ------------------------------------------------------------------ links */

/* A Trends::Link of row i: the PreviewCard and its history; for the staff
 * also the card's id and whether it awaits review. */
static json_t *
link_json(struct eu_req *req, const PGresult *res, int i, bool staff)
{
    const char *text = PQgetvalue(res, i, PQfnumber(res, "card"));
    json_t *raw = json_loads(text, 0, NULL);
    json_t *link = eu_card_json(req->app, eu_req_base_url(req), text);
    if (!link)
        link = json_object();
    json_t *history = json_loads(PQgetvalue(res, i, PQfnumber(res, "history")), 0, NULL);
    json_object_set_new(link, "history", history ? history : json_array());
    if (staff) {
        json_object_set(link, "id", json_object_get(raw, "id"));
        json_object_set_new(
            link, "requires_review",
            json_boolean(PQgetvalue(res, i, PQfnumber(res, "requires_review"))[0] == 't'));
    }
    json_decref(raw);
    return link;
}

static void
on_links(struct eu_req *req, PGresult *res, void *arg)
{
    bool staff = arg != NULL;
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, link_json(req, res, i, staff));
    eu_req_reply_json(req, 200, out);
}

static void
list_links(struct eu_req *req, bool staff)
{
    const char *page[2];
    if (read_page(req, page) < 0)
        return;
    const char *p[] = {staff ? "true" : "false", page[0], page[1]};
    eu_req_stmt(req, &eu_trends_sql[TRENDS_LINKS], 3, p, on_links, staff ? (void *)req : NULL);
}

static void
public_links(struct eu_req *req)
{
    list_links(req, false);
}

static void
staff_links(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_TAXONOMIES))
        list_links(req, true);
}

static void
on_link_reviewed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, link_json(req, res, 0, true));
}

static void
approve_link(struct eu_req *req)
{
    review(req, TRENDS_LINK_REVIEW, on_link_reviewed, true);
}

static void
reject_link(struct eu_req *req)
{
    review(req, TRENDS_LINK_REVIEW, on_link_reviewed, false);
}

/* Admin::Trends::Links::PreviewCardProvider of row i. */
static json_t *
publisher_json(const PGresult *res, int i)
{
    int t = PQfnumber(res, "trendable"), rv = PQfnumber(res, "reviewed_at"),
        rq = PQfnumber(res, "requested_review_at");
    bool reviewed = !PQgetisnull(res, i, t);
    return json_pack("{s:s, s:s, s:b, s:o, s:o, s:b}", "id",
                     PQgetvalue(res, i, PQfnumber(res, "id")), "domain",
                     PQgetvalue(res, i, PQfnumber(res, "domain")), "trendable",
                     reviewed && PQgetvalue(res, i, t)[0] == 't', "reviewed_at",
                     PQgetisnull(res, i, rv) ? json_null() : json_string(PQgetvalue(res, i, rv)),
                     "requested_review_at",
                     PQgetisnull(res, i, rq) ? json_null() : json_string(PQgetvalue(res, i, rq)),
                     "requires_review", !reviewed);
}

static void
on_publishers(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, publisher_json(res, i));
    eu_req_reply_json(req, 200, out);
}

static void
staff_publishers(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_TAXONOMIES))
        eu_req_stmt(req, &eu_trends_sql[TRENDS_PUBLISHERS], 0, NULL, on_publishers, NULL);
}

static void
on_publisher_reviewed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, publisher_json(res, 0));
}

static void
approve_publisher(struct eu_req *req)
{
    review(req, TRENDS_PUBLISHER_REVIEW, on_publisher_reviewed, true);
}

static void
reject_publisher(struct eu_req *req)
{
    review(req, TRENDS_PUBLISHER_REVIEW, on_publisher_reviewed, false);
}

/* ------------------------------------------------------------ route table */

#define STAFF (EU_ROUTE_API | EU_ROUTE_AUTH)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_trends_routes[] = {
    {EU_HTTP_GET, "/api/v1/trends", public_tags, NULL, EU_ROUTE_API | EU_ROUTE_AUTH_OPT},
    {EU_HTTP_GET, "/api/v1/trends/tags", public_tags, NULL, EU_ROUTE_API | EU_ROUTE_AUTH_OPT},
    {EU_HTTP_GET, "/api/v1/trends/statuses", public_statuses, NULL,
     EU_ROUTE_API | EU_ROUTE_AUTH_OPT},
    {EU_HTTP_GET, "/api/v1/admin/trends/tags", staff_tags, "admin:read", STAFF},
    {EU_HTTP_GET, "/api/v1/admin/trends/statuses", staff_statuses, "admin:read", STAFF},
    {EU_HTTP_POST, "/api/v1/admin/trends/tags/:id/approve", approve_tag, "admin:write", STAFF},
    {EU_HTTP_POST, "/api/v1/admin/trends/tags/:id/reject", reject_tag, "admin:write", STAFF},
    {EU_HTTP_POST, "/api/v1/admin/trends/statuses/:id/approve", approve_status, "admin:write",
     STAFF},
    {EU_HTTP_POST, "/api/v1/admin/trends/statuses/:id/reject", reject_status, "admin:write", STAFF},
    {EU_HTTP_GET, "/api/v1/trends/links", public_links, NULL, EU_ROUTE_API | EU_ROUTE_AUTH_OPT},
    {EU_HTTP_GET, "/api/v1/admin/trends/links", staff_links, "admin:read", STAFF},
    {EU_HTTP_POST, "/api/v1/admin/trends/links/:id/approve", approve_link, "admin:write", STAFF},
    {EU_HTTP_POST, "/api/v1/admin/trends/links/:id/reject", reject_link, "admin:write", STAFF},
    {EU_HTTP_GET, "/api/v1/admin/trends/links/publishers", staff_publishers, "admin:read", STAFF},
    {EU_HTTP_POST, "/api/v1/admin/trends/links/publishers/:id/approve", approve_publisher,
     "admin:write", STAFF},
    {EU_HTTP_POST, "/api/v1/admin/trends/links/publishers/:id/reject", reject_publisher,
     "admin:write", STAFF},
    {0},
};
