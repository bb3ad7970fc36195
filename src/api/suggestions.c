/*
 * Follow suggestions: GET /api/v2/suggestions (Mastodon 4.3's Suggestion
 * entities: sources and the deprecated source, and the account), GET
 * /api/v1/suggestions (the accounts alone) and DELETE
 * /api/v1/suggestions/:account_id (dismissed for good, tenant migration
 * 0069's suggestion_dismissals).
 *
 * Sources, as Mastodon's: "featured", the accounts the tenant's staff
 * feature (Mastodon's admin "follow recommendations"; here GET, POST and
 * DELETE /api/v1/admin/suggestions[/:account_id], permission
 * manage_taxonomies, each change with its audit row), and
 * "friends_of_friends", discoverable accounts followed by the accounts
 * the viewer follows, the most shared first, then Mastodon's global
 * sources, "most_followed" and "most_interactions", which the trends task
 * computes per tenant into follow_recommendations (tenant migration
 * 0071, src/social/trends_task.c), by their rank. Left out, as Mastodon leaves
 * them out: the viewer, accounts they follow or asked to follow, block
 * (either way) or mute, accounts of a domain they block, suspended ones
 * and dismissed ones. docs/trends.md has the details.
 *
 * One statement a list: the viewer's latest FOLLOWS_SCANNED follows, each
 * followed's latest FOLLOWS_SCANNED follows (both through the follows
 * key), so a list costs at most that square of index rows.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "accounts_internal.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/params.h"
#include "eunha/sql.h"

/* Mastodon's page: 40 by default, 80 at most. */
#define SUGGESTIONS_LIMIT 40
#define SUGGESTIONS_LIMIT_MAX 80
#define FOLLOWS_SCANNED "200"
/* The global sources' best rows read (the task keeps 100). */
#define GLOBAL_SCANNED "100"

enum {
    SUGGESTIONS_LIST,
    SUGGESTIONS_DISMISS,
    SUGGESTIONS_FEATURED,
    SUGGESTIONS_FEATURE,
    SUGGESTIONS_UNFEATURE,
};

const struct eu_sql eu_suggestions_sql[] = {
    /* $2 the viewer, $3 the limit. Extra columns: featured, fof (the
     * number of the viewer's follows that follow the account, or NULL)
     * and global (the reasons of the global sources, a JSON array, or
     * NULL). */
    [SUGGESTIONS_LIST] =
        {"suggestions.list",
         "WITH f1 AS (SELECT f.target_account_id AS id FROM follows f WHERE f.tenant_id = $1"
         "  AND f.account_id = $2::bigint ORDER BY f.id DESC LIMIT " FOLLOWS_SCANNED "),"
         " fof AS (SELECT f2.id, count(*) AS n FROM f1 CROSS JOIN LATERAL (SELECT"
         "  f.target_account_id AS id FROM follows f WHERE f.tenant_id = $1"
         "  AND f.account_id = f1.id ORDER BY f.id DESC LIMIT " FOLLOWS_SCANNED ") f2"
         "  GROUP BY f2.id),"
         " sf AS (SELECT s.account_id AS id FROM suggestion_features s WHERE s.tenant_id = $1),"
         " g AS (SELECT r.account_id AS id, r.rank, r.reason FROM follow_recommendations r"
         "  WHERE r.tenant_id = $1 ORDER BY r.rank DESC LIMIT " GLOBAL_SCANNED "),"
         " ids AS (SELECT sf.id FROM sf UNION SELECT fof.id FROM fof UNION SELECT g.id FROM g),"
         " c AS (SELECT ids.id, sf.id IS NOT NULL AS featured, fof.n, g.rank, g.reason"
         "  FROM ids LEFT JOIN sf ON sf.id = ids.id LEFT JOIN fof ON fof.id = ids.id"
         "  LEFT JOIN g ON g.id = ids.id)"
         " SELECT (eunha_account(a)).*, c.featured::text AS featured, c.n::text AS fof,"
         " array_to_json(c.reason)::text AS global"
         " FROM c JOIN accounts a ON a.tenant_id = $1 AND a.id = c.id"
         " WHERE a.id <> $2::bigint AND a.suspended_at IS NULL AND (c.featured OR a.discoverable)"
         " AND NOT EXISTS (SELECT 1 FROM follows x WHERE x.tenant_id = $1"
         "  AND x.account_id = $2::bigint AND x.target_account_id = a.id)"
         " AND NOT EXISTS (SELECT 1 FROM follow_requests x WHERE x.tenant_id = $1"
         "  AND x.account_id = $2::bigint AND x.target_account_id = a.id)"
         " AND NOT EXISTS (SELECT 1 FROM blocks x WHERE x.tenant_id = $1"
         "  AND x.account_id = $2::bigint AND x.target_account_id = a.id)"
         " AND NOT EXISTS (SELECT 1 FROM blocks x WHERE x.tenant_id = $1"
         "  AND x.account_id = a.id AND x.target_account_id = $2::bigint)"
         " AND NOT EXISTS (SELECT 1 FROM mutes x WHERE x.tenant_id = $1"
         "  AND x.account_id = $2::bigint AND x.target_account_id = a.id)"
         " AND NOT EXISTS (SELECT 1 FROM suggestion_dismissals x WHERE x.tenant_id = $1"
         "  AND x.account_id = $2::bigint AND x.target_account_id = a.id)"
         " AND (a.domain IS NULL OR NOT EXISTS (SELECT 1 FROM account_domain_blocks x"
         "  WHERE x.tenant_id = $1 AND x.account_id = $2::bigint AND x.domain = a.domain))"
         " ORDER BY c.featured DESC, c.n DESC NULLS LAST, c.rank DESC NULLS LAST, a.id DESC"
         " LIMIT $3::int"},
    /* $2 the viewer, $3 the account dismissed (of this tenant). */
    [SUGGESTIONS_DISMISS] = {"suggestions.dismiss",
                             "INSERT INTO suggestion_dismissals (tenant_id, account_id,"
                             " target_account_id) SELECT $1, $2::bigint, a.id FROM accounts a"
                             " WHERE a.tenant_id = $1 AND a.id = $3::bigint"
                             " ON CONFLICT DO NOTHING"},
    /* The featured accounts, the latest first. */
    [SUGGESTIONS_FEATURED] = {"suggestions.featured",
                              "SELECT (eunha_account(a)).* FROM suggestion_features s"
                              " JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
                              " WHERE s.tenant_id = $1 ORDER BY s.created_at DESC LIMIT 1000"},
    /* $2 the account, $3 the staff's account. Returns the account. */
    [SUGGESTIONS_FEATURE] =
        {"suggestions.feature",
         "WITH a AS (SELECT * FROM accounts a WHERE a.tenant_id = $1 AND a.id = $2::bigint),"
         " i AS (INSERT INTO suggestion_features (tenant_id, account_id) SELECT $1, a.id FROM a"
         "  ON CONFLICT DO NOTHING RETURNING account_id),"
         " l AS (INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type,"
         "  target_id, human_identifier) SELECT $1, $3::bigint, 'feature', 'Account', i.account_id,"
         "  a.username FROM i, a)"
         " SELECT (eunha_account(a)).* FROM a"},
    [SUGGESTIONS_UNFEATURE] =
        {"suggestions.unfeature",
         "WITH a AS (SELECT * FROM accounts a WHERE a.tenant_id = $1 AND a.id = $2::bigint),"
         " d AS (DELETE FROM suggestion_features s WHERE s.tenant_id = $1"
         "  AND s.account_id = $2::bigint RETURNING account_id),"
         " l AS (INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type,"
         "  target_id, human_identifier) SELECT $1, $3::bigint, 'unfeature', 'Account',"
         "  d.account_id, a.username FROM d, a)"
         " SELECT (eunha_account(a)).* FROM a"},
    {0},
};

/* ------------------------------------------------------------------ lists */

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    bool v2 = arg != NULL;
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    int c_featured = PQfnumber(res, "featured"), c_fof = PQfnumber(res, "fof"),
        c_global = PQfnumber(res, "global");
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++) {
        json_t *account = eu_accounts_render(req, res, i, &ac);
        if (!v2) {
            json_array_append_new(out, account);
            continue;
        }
        json_t *sources = json_array();
        if (PQgetvalue(res, i, c_featured)[0] == 't')
            json_array_append_new(sources, json_string("featured"));
        if (!PQgetisnull(res, i, c_fof))
            json_array_append_new(sources, json_string("friends_of_friends"));
        if (!PQgetisnull(res, i, c_global)) {
            json_t *reasons = json_loads(PQgetvalue(res, i, c_global), 0, NULL);
            json_array_extend(sources, reasons ? reasons : json_array());
            json_decref(reasons);
        }
        /* Mastodon's older single source, from the first of sources (its
         * LEGACY_SOURCE_TYPE_MAP). */
        const char *first = json_string_value(json_array_get(sources, 0));
        const char *source = "past_interactions";
        if (first && strcmp(first, "featured") == 0)
            source = "staff";
        else if (first && strncmp(first, "most_", 5) == 0)
            source = "global";
        json_array_append_new(out, json_pack("{s:s, s:o, s:o}", "source", source, "sources",
                                             sources, "account", account));
    }
    eu_req_reply_json(req, 200, out);
}

static void
list(struct eu_req *req, bool v2)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    long long limit = SUGGESTIONS_LIMIT;
    if (eu_param_int(params, "limit", &limit) < 0) {
        eu_req_reply_error(req, 422, "limit must be an integer");
        return;
    }
    if (limit < 1)
        limit = SUGGESTIONS_LIMIT;
    if (limit > SUGGESTIONS_LIMIT_MAX)
        limit = SUGGESTIONS_LIMIT_MAX;
    const char *p[] = {eu_req_viewer(req), eu_arena_sprintf(req->arena, "%lld", limit)};
    eu_req_stmt(req, &eu_suggestions_sql[SUGGESTIONS_LIST], 2, p, on_list, v2 ? (void *)req : NULL);
}

static void
list_v1(struct eu_req *req)
{
    list(req, false);
}

static void
list_v2(struct eu_req *req)
{
    list(req, true);
}

/* The :account_id parameter when it is a number; NULL after answering
 * 404. */
static const char *
account_param(struct eu_req *req)
{
    const char *id = eu_req_param(req, "account_id");
    if (!id || !*id || strspn(id, "0123456789") != strlen(id) || strlen(id) > 18) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return id;
}

static void
on_dismissed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)res;
    (void)arg;
    eu_req_reply_json(req, 200, json_object());
}

/* Mastodon answers 200 {} whether or not the account was suggested. */
static void
dismiss(struct eu_req *req)
{
    const char *id = account_param(req);
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_suggestions_sql[SUGGESTIONS_DISMISS], 2, p, on_dismissed, NULL);
}

/* -------------------------------------------------------------- the staff */

static void
on_featured(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, eu_accounts_render(req, res, i, &ac));
    eu_req_reply_json(req, 200, out);
}

static void
staff_featured(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_MANAGE_TAXONOMIES))
        eu_req_stmt(req, &eu_suggestions_sql[SUGGESTIONS_FEATURED], 0, NULL, on_featured, NULL);
}

static void
on_changed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    eu_req_reply_json(req, 200, eu_accounts_render(req, res, 0, &ac));
}

static void
change(struct eu_req *req, int stmt)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_TAXONOMIES))
        return;
    const char *id = account_param(req);
    if (!id)
        return;
    const char *p[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_suggestions_sql[stmt], 2, p, on_changed, NULL);
}

static void
staff_feature(struct eu_req *req)
{
    change(req, SUGGESTIONS_FEATURE);
}

static void
staff_unfeature(struct eu_req *req)
{
    change(req, SUGGESTIONS_UNFEATURE);
}

/* ------------------------------------------------------------ route table */

#define AUTH (EU_ROUTE_API | EU_ROUTE_AUTH)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_suggestions_routes[] = {
    {EU_HTTP_GET, "/api/v1/suggestions", list_v1, "read:accounts", AUTH},
    {EU_HTTP_GET, "/api/v2/suggestions", list_v2, "read:accounts", AUTH},
    {EU_HTTP_DELETE, "/api/v1/suggestions/:account_id", dismiss, "write:accounts", AUTH},
    {EU_HTTP_GET, "/api/v1/admin/suggestions", staff_featured, "admin:read", AUTH},
    {EU_HTTP_POST, "/api/v1/admin/suggestions/:account_id", staff_feature, "admin:write", AUTH},
    {EU_HTTP_DELETE, "/api/v1/admin/suggestions/:account_id", staff_unfeature, "admin:write", AUTH},
    {0},
};
