/*
 * The notification policy (/api/v1 and /api/v2/notifications/policy) and
 * notification requests (/api/v1/notifications/requests), Mastodon 4.3's
 * answer to unwanted mentions: a recipient says, per kind of sender (not
 * followed, not a follower, a new account, a private mention, an account
 * the moderators limited), whether notifications are accepted, filtered or
 * dropped. eu_notify() (src/social/notify.c) applies the policy through
 * eunha_notification_verdict() (migration 0053); a filtered mention opens a
 * request per sender. Accepting a request unfilters that sender's
 * notifications and lets the later ones through (a notification
 * permission); dismissing it deletes them.
 *
 * Both run as one statement, so "merged" (Mastodon's answer to whether the
 * asynchronous unfiltering has finished) is always true here.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"

/* Mastodon's page sizes for requests. */
#define REQUESTS_LIMIT 40
#define REQUESTS_LIMIT_MAX 80
/* Ids one bulk accept or dismiss takes: a client sends a page's worth. */
#define BULK_MAX 100

enum {
    POLICY_SHOW,
    POLICY_UPDATE,
    REQUESTS_INDEX,
    REQUESTS_SHOW,
    REQUESTS_ACCEPT,
    REQUESTS_DISMISS,
};

/* The request's columns, read by name, and the sender's. */
#define REQUEST_COLUMNS                                                                            \
    "r.id::text AS id, eunha_ts(r.created_at) AS created_at,"                                      \
    " eunha_ts(r.updated_at) AS updated_at, r.notifications_count::text AS notifications_count,"   \
    " r.last_status_id::text AS last_status_id, (eunha_account(a)).*"

/* Requests from suspended senders are hidden, as Mastodon's
 * without_suspended. */
#define REQUEST_FROM                                                                               \
    " FROM notification_requests r JOIN accounts a ON a.tenant_id = $1"                            \
    "  AND a.id = r.from_account_id"                                                               \
    " WHERE r.tenant_id = $1 AND r.account_id = $2::bigint AND a.suspended_at IS NULL"

const struct eu_sql eu_notification_requests_sql[] = {
    /* The five settings (defaults without a row), named as the v2 keys, and
     * the summary, whose
     * counts stop at Mastodon's MAX_MEANINGFUL_COUNT of 100 requests. */
    [POLICY_SHOW] = {"notification_policy.show",
                     "SELECT coalesce(np.for_not_following, 'accept') AS for_not_following,"
                     " coalesce(np.for_not_followers, 'accept') AS for_not_followers,"
                     " coalesce(np.for_new_accounts, 'accept') AS for_new_accounts,"
                     " coalesce(np.for_private_mentions, 'filter') AS for_private_mentions,"
                     " coalesce(np.for_limited_accounts, 'filter') AS for_limited_accounts,"
                     " s.n AS pending_requests_count, s.total AS pending_notifications_count"
                     " FROM (SELECT count(*) AS n, coalesce(sum(x.c), 0) AS total"
                     "  FROM (SELECT r.notifications_count AS c" REQUEST_FROM " LIMIT 100) x) s"
                     " LEFT JOIN notification_policies np ON np.tenant_id = $1"
                     "  AND np.account_id = $2::bigint"},
    /* $3..$7 the five settings, NULL to keep one. */
    [POLICY_UPDATE] =
        {"notification_policy.update",
         "INSERT INTO notification_policies (tenant_id, account_id, for_not_following,"
         " for_not_followers, for_new_accounts, for_private_mentions, for_limited_accounts)"
         " VALUES ($1, $2::bigint, coalesce($3, 'accept'), coalesce($4, 'accept'),"
         " coalesce($5, 'accept'), coalesce($6, 'filter'), coalesce($7, 'filter'))"
         " ON CONFLICT (tenant_id, account_id) DO UPDATE SET"
         " for_not_following = coalesce($3, notification_policies.for_not_following),"
         " for_not_followers = coalesce($4, notification_policies.for_not_followers),"
         " for_new_accounts = coalesce($5, notification_policies.for_new_accounts),"
         " for_private_mentions = coalesce($6, notification_policies.for_private_mentions),"
         " for_limited_accounts = coalesce($7, notification_policies.for_limited_accounts),"
         " updated_at = now()"},
    [REQUESTS_INDEX] = {"notification_requests.index", "SELECT " REQUEST_COLUMNS REQUEST_FROM,
                        "r.id", 3},
    [REQUESTS_SHOW] = {"notification_requests.show",
                       "SELECT " REQUEST_COLUMNS REQUEST_FROM " AND r.id = $3::bigint"},
    /* $3: a JSON array of request ids. The sender's filtered notifications
     * join the list and the permission lets the later ones through. */
    [REQUESTS_ACCEPT] =
        {"notification_requests.accept",
         "WITH gone AS (DELETE FROM notification_requests r WHERE r.tenant_id = $1"
         "  AND r.account_id = $2::bigint"
         "  AND r.id IN (SELECT json_array_elements_text($3::json)::bigint)"
         "  RETURNING r.from_account_id),"
         " pm AS (INSERT INTO notification_permissions (tenant_id, account_id, from_account_id)"
         "  SELECT $1::bigint, $2::bigint, gone.from_account_id FROM gone ON CONFLICT DO NOTHING),"
         " u AS (UPDATE notifications n SET filtered = false WHERE n.tenant_id = $1"
         "  AND n.account_id = $2::bigint AND n.filtered"
         "  AND n.from_account_id IN (SELECT gone.from_account_id FROM gone))"
         " SELECT count(*) FROM gone"},
    /* As Mastodon's FilteredNotificationCleanupWorker: the held-back
     * notifications go with the request. */
    [REQUESTS_DISMISS] = {"notification_requests.dismiss",
                          "WITH gone AS (DELETE FROM notification_requests r WHERE r.tenant_id = $1"
                          "  AND r.account_id = $2::bigint"
                          "  AND r.id IN (SELECT json_array_elements_text($3::json)::bigint)"
                          "  RETURNING r.from_account_id),"
                          " dn AS (DELETE FROM notifications n WHERE n.tenant_id = $1"
                          "  AND n.account_id = $2::bigint AND n.filtered"
                          "  AND n.from_account_id IN (SELECT gone.from_account_id FROM gone))"
                          " SELECT count(*) FROM gone"},
    {0},
};

/* ---------------------------------------------------------------- policy */

enum { POL_NOT_FOLLOWING, POL_NOT_FOLLOWERS, POL_NEW_ACCOUNTS, POL_PRIVATE, POL_LIMITED, POL_N };

static const char *const POLICY_V2_KEYS[POL_N] = {"for_not_following", "for_not_followers",
                                                  "for_new_accounts", "for_private_mentions",
                                                  "for_limited_accounts"};
/* v1 has no limited accounts; its booleans say "not accept". */
static const char *const POLICY_V1_KEYS[POL_N - 1] = {"filter_not_following",
                                                      "filter_not_followers", "filter_new_accounts",
                                                      "filter_private_mentions"};
/* How Mastodon names a setting in a validation error. */
static const char *const POLICY_LABELS[POL_N] = {"For not following", "For not followers",
                                                 "For new accounts", "For private mentions",
                                                 "For limited accounts"};

static void
on_policy(struct eu_req *req, PGresult *res, void *arg)
{
    bool v1 = arg != NULL;
    json_t *summary = json_object();
    const char *counts[] = {"pending_requests_count", "pending_notifications_count"};
    for (size_t i = 0; i < 2; i++)
        json_object_set_new(summary, counts[i],
                            json_integer(atoll(PQgetvalue(res, 0, PQfnumber(res, counts[i])))));
    json_t *out = json_object();
    for (int i = 0; i < POL_N; i++) {
        const char *v = PQgetvalue(res, 0, PQfnumber(res, POLICY_V2_KEYS[i]));
        if (!v1)
            json_object_set_new(out, POLICY_V2_KEYS[i], json_string(v));
        else if (i < POL_N - 1)
            json_object_set_new(out, POLICY_V1_KEYS[i], json_boolean(strcmp(v, "accept") != 0));
    }
    json_object_set_new(out, "summary", summary);
    eu_req_reply_json(req, 200, out);
}

/* arg non-NULL: the v1 entity. */
static void
show_policy(struct eu_req *req, void *v1)
{
    const char *p[] = {eu_req_viewer(req)};
    eu_req_stmt(req, &eu_notification_requests_sql[POLICY_SHOW], 1, p, on_policy, v1);
}

static void
policy_v1_show(struct eu_req *req)
{
    show_policy(req, req);
}

static void
policy_v2_show(struct eu_req *req)
{
    show_policy(req, NULL);
}

static void
on_policy_updated(struct eu_req *req, PGresult *res, void *arg)
{
    show_policy(req, arg);
}

/*
 * Reads the settings a PATCH carries into set[] (NULL: unchanged).
 * Returns false after replying 422 to a value Mastodon would refuse.
 */
static bool
read_policy(struct eu_req *req, bool v1, const char *set[POL_N])
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return false;
    }
    for (int i = 0; i < POL_N; i++) {
        set[i] = NULL;
        if (v1) {
            bool on = false;
            int got = i < POL_N - 1 ? eu_param_bool(params, POLICY_V1_KEYS[i], &on) : 0;
            if (got < 0) {
                eu_req_reply_error(req, 422, "Validation failed: %s is not included in the list",
                                   POLICY_LABELS[i]);
                return false;
            }
            if (got == 1)
                set[i] = on ? "filter" : "accept";
            continue;
        }
        const char *v = eu_param_str(params, POLICY_V2_KEYS[i]);
        if (v && strcmp(v, "accept") != 0 && strcmp(v, "filter") != 0 && strcmp(v, "drop") != 0) {
            eu_req_reply_error(req, 422, "Validation failed: %s is not included in the list",
                               POLICY_LABELS[i]);
            return false;
        }
        set[i] = v;
    }
    return true;
}

static void
update_policy(struct eu_req *req, bool v1)
{
    const char *set[POL_N];
    if (!read_policy(req, v1, set))
        return;
    const char *p[] = {eu_req_viewer(req), set[0], set[1], set[2], set[3], set[4]};
    eu_req_stmt(req, &eu_notification_requests_sql[POLICY_UPDATE], 6, p, on_policy_updated,
                v1 ? req : NULL);
}

static void
policy_v1_update(struct eu_req *req)
{
    update_policy(req, true);
}

static void
policy_v2_update(struct eu_req *req)
{
    update_policy(req, false);
}

/* -------------------------------------------------------------- requests */

struct request_row {
    const char *id, *created_at, *updated_at, *count, *status_id;
    json_t *account; /* owned by the page's holder */
};

struct request_page {
    struct eu_page page;
    struct request_row *rows;
    size_t n;
    bool single;
    json_t *holder;
};

static void
decref_json(void *p)
{
    json_decref(p);
}

static void
on_request_statuses(struct eu_req *req, json_t *statuses, void *arg)
{
    struct request_page *rp = arg;
    eu_req_enter(req);
    json_t *by_id = json_object();
    size_t i;
    json_t *st;
    json_array_foreach(statuses, i, st)
    {
        const char *id = json_string_value(json_object_get(st, "id"));
        if (id)
            json_object_set(by_id, id, st);
    }
    json_decref(statuses);
    json_t *out = json_array();
    for (i = 0; i < rp->n; i++) {
        struct request_row *r = &rp->rows[i];
        json_t *o = json_pack("{s:s, s:s, s:s, s:O, s:s}", "id", r->id, "created_at", r->created_at,
                              "updated_at", r->updated_at, "account", r->account,
                              "notifications_count", r->count);
        json_t *last = r->status_id ? json_object_get(by_id, r->status_id) : NULL;
        json_object_set(o, "last_status", last ? last : json_null());
        json_array_append_new(out, o);
    }
    json_decref(by_id);
    if (rp->single) {
        eu_req_reply_json(req, 200, json_incref(json_array_get(out, 0)));
        json_decref(out);
        return;
    }
    if (rp->n)
        eu_page_link(req, rp->rows[0].id, rp->rows[rp->n - 1].id);
    eu_req_reply_json(req, 200, out);
}

static void
on_requests(struct eu_req *req, PGresult *res, void *arg)
{
    struct request_page *rp = arg;
    int n = PQntuples(res);
    if (rp->single && n == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    bool asc = !rp->single && eu_page_is_ascending(&rp->page);
    rp->holder = json_array();
    eu_arena_on_free(req->arena, decref_json, rp->holder);
    rp->rows = eu_arena_calloc(req->arena, sizeof(*rp->rows) * (size_t)(n ? n : 1));
    const char **ids = eu_arena_alloc(req->arena, sizeof(char *) * (size_t)(n ? n : 1));
    size_t k = 0;
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    int c_id = PQfnumber(res, "id"), c_created = PQfnumber(res, "created_at");
    int c_updated = PQfnumber(res, "updated_at"), c_count = PQfnumber(res, "notifications_count");
    int c_status = PQfnumber(res, "last_status_id");
    for (int j = 0; j < n; j++) {
        int i = asc ? n - 1 - j : j;
        struct request_row *r = &rp->rows[rp->n++];
        r->id = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_id));
        r->created_at = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_created));
        r->updated_at = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_updated));
        r->count = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_count));
        r->status_id = PQgetisnull(res, i, c_status)
                           ? NULL
                           : eu_arena_strdup(req->arena, PQgetvalue(res, i, c_status));
        r->account = eu_account_json(req, res, i, &ac);
        json_array_append_new(rp->holder, r->account);
        if (r->status_id)
            ids[k++] = r->status_id;
    }
    if (k == 0) {
        on_request_statuses(req, json_array(), rp);
        return;
    }
    /* Rendering also drops a last status the viewer may no longer see. */
    eu_statuses_render(req, ids, k, on_request_statuses, rp);
}

static void
requests_index(struct eu_req *req)
{
    struct request_page *rp = eu_arena_calloc(req->arena, sizeof(*rp));
    if (eu_page_parse(req, &rp->page, REQUESTS_LIMIT, REQUESTS_LIMIT_MAX) < 0)
        return;
    const char *p[5] = {eu_req_viewer(req)};
    eu_page_params(&rp->page, p + 1);
    eu_req_stmt_page(req, &eu_notification_requests_sql[REQUESTS_INDEX], &rp->page, 5, p,
                     on_requests, rp);
}

static void
requests_show(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct request_page *rp = eu_arena_calloc(req->arena, sizeof(*rp));
    rp->single = true;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_notification_requests_sql[REQUESTS_SHOW], 2, p, on_requests, rp);
}

/* arg non-NULL: one request by id, 404 when the viewer has none such. */
static void
on_handled(struct eu_req *req, PGresult *res, void *arg)
{
    if (arg && atoll(PQgetvalue(res, 0, 0)) == 0)
        eu_req_reply_error(req, 404, "Record not found");
    else
        eu_req_reply_json(req, 200, json_object());
}

static void
handle_one(struct eu_req *req, int stmt)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), eu_arena_sprintf(req->arena, "[\"%s\"]", id)};
    eu_req_stmt(req, &eu_notification_requests_sql[stmt], 2, p, on_handled, req);
}

/* Bulk: id[] of the viewer's requests; unknown ones are skipped, as in
 * Mastodon. */
static void
handle_many(struct eu_req *req, int stmt)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    json_t *ids = eu_param_array(params, "id");
    json_t *valid = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v)
    {
        const char *s = json_string_value(v);
        if (s && eu_id_is_valid(s) && json_array_size(valid) < BULK_MAX)
            json_array_append(valid, v);
    }
    json_decref(ids);
    char *text = json_dumps(valid, JSON_COMPACT);
    json_decref(valid);
    const char *p[] = {eu_req_viewer(req), eu_arena_strdup(req->arena, text)};
    free(text);
    eu_req_stmt(req, &eu_notification_requests_sql[stmt], 2, p, on_handled, NULL);
}

static void
requests_accept(struct eu_req *req)
{
    handle_one(req, REQUESTS_ACCEPT);
}

static void
requests_dismiss(struct eu_req *req)
{
    handle_one(req, REQUESTS_DISMISS);
}

static void
requests_accept_many(struct eu_req *req)
{
    handle_many(req, REQUESTS_ACCEPT);
}

static void
requests_dismiss_many(struct eu_req *req)
{
    handle_many(req, REQUESTS_DISMISS);
}

static void
requests_merged(struct eu_req *req)
{
    eu_req_reply_json(req, 200, json_pack("{s:b}", "merged", true));
}

/* ------------------------------------------------------------ route table */

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST
#define PATCH EU_HTTP_PATCH
#define AUTH (EU_ROUTE_AUTH | EU_ROUTE_API)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_notification_requests_routes[] = {
    {GET, "/api/v1/notifications/policy", policy_v1_show, "read:notifications", AUTH},
    {PATCH, "/api/v1/notifications/policy", policy_v1_update, "write:notifications", AUTH},
    {GET, "/api/v2/notifications/policy", policy_v2_show, "read:notifications", AUTH},
    {PATCH, "/api/v2/notifications/policy", policy_v2_update, "write:notifications", AUTH},
    {GET, "/api/v1/notifications/requests", requests_index, "read:notifications", AUTH},
    {GET, "/api/v1/notifications/requests/merged", requests_merged, "read:notifications", AUTH},
    {POST, "/api/v1/notifications/requests/accept", requests_accept_many, "write:notifications",
     AUTH},
    {POST, "/api/v1/notifications/requests/dismiss", requests_dismiss_many, "write:notifications",
     AUTH},
    {GET, "/api/v1/notifications/requests/:id", requests_show, "read:notifications", AUTH},
    {POST, "/api/v1/notifications/requests/:id/accept", requests_accept, "write:notifications",
     AUTH},
    {POST, "/api/v1/notifications/requests/:id/dismiss", requests_dismiss, "write:notifications",
     AUTH},
    {0},
};
