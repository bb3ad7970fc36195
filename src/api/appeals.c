/*
 * A user's strikes and their appeals (issue 28). Mastodon tells a user of a
 * strike (an account_warnings row, written by src/api/staff_accounts.c)
 * through a moderation_warning notification and lets them appeal it in its
 * web pages only; these REST paths are eunha's, on the same pattern:
 *
 *   GET  /api/v1/account_warnings/:id         the user's own strike
 *   POST /api/v1/account_warnings/:id/appeal  {text}: one appeal a strike,
 *                                             within 20 days of it
 *   GET  /api/v1/admin/appeals                the staff's queue (pending
 *                                             unless status= says otherwise)
 *   POST /api/v1/admin/appeals/:id/approve    undoes the strike's action
 *   POST /api/v1/admin/appeals/:id/reject
 *
 * The staff need manage_appeals (Mastodon's AppealPolicy). Approving does
 * what Mastodon's ApproveAppealService does as far as eunha keeps the
 * state: the strike is overruled and its suspension, silence, sensitive
 * mark or disabled login lifted, each change with its audit row, in the
 * statement that makes it.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "eunha/utf8.h"

/* Mastodon's Appeal::TEXT_LENGTH_LIMIT. */
#define APPEAL_TEXT_MAX 2000
#define PAGE_DEFAULT 40
#define PAGE_MAX 80

enum {
    APPEALS_WARNING,
    APPEALS_CREATE,
    APPEALS_LIST,
    APPEALS_SHOW,
    APPEALS_APPROVE,
    APPEALS_REJECT,
};

/* An appeal's columns on a row ap with its appellant a, read by name. */
#define APPEAL_COLUMNS                                                                             \
    "ap.id::text AS appeal_id, ap.text AS appeal_text,"                                            \
    " CASE WHEN ap.approved_at IS NOT NULL THEN 'approved'"                                        \
    "  WHEN ap.rejected_at IS NOT NULL THEN 'rejected' ELSE 'pending' END AS appeal_state,"        \
    " eunha_ts(ap.created_at) AS appeal_created_at,"                                               \
    " eunha_account_warning_json($1, ap.account_warning_id)::text AS warning,"                     \
    " (eunha_account(a)).*"

#define APPEAL_FROM " FROM appeals ap JOIN accounts a ON a.tenant_id = $1 AND a.id = ap.account_id"

/* The audit row of a change by moderator $3. */
#define LOG_INSERT                                                                                 \
    "INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type, target_id,"        \
    " human_identifier)"

const struct eu_sql eu_appeals_sql[] = {
    /* Strike $2 of account $3, with that account. */
    [APPEALS_WARNING] = {"appeals.warning",
                         "SELECT eunha_account_warning_json($1, w.id)::text AS warning,"
                         " (eunha_account(a)).* FROM account_warnings w JOIN accounts a"
                         " ON a.tenant_id = $1 AND a.id = w.target_account_id"
                         " WHERE w.tenant_id = $1 AND w.id = $2::bigint"
                         " AND w.target_account_id = $3::bigint"},
    /*
     * Account $3 appeals its strike $2 with text $4. A row when the strike
     * is the account's: verdict ok, too_late (over 20 days old) or taken
     * (appealed before).
     */
    [APPEALS_CREATE] =
        {"appeals.create",
         "WITH w AS (SELECT id, created_at >= now() - interval '20 days' AS in_time"
         "  FROM account_warnings WHERE tenant_id = $1 AND id = $2::bigint"
         "  AND target_account_id = $3::bigint),"
         " i AS (INSERT INTO appeals (tenant_id, account_id, account_warning_id, text)"
         "  SELECT $1, $3::bigint, w.id, $4 FROM w WHERE w.in_time"
         "  ON CONFLICT (tenant_id, account_warning_id) DO NOTHING RETURNING id)"
         " SELECT CASE WHEN EXISTS (SELECT 1 FROM i) THEN 'ok' WHEN NOT w.in_time THEN 'too_late'"
         " ELSE 'taken' END AS verdict FROM w"},
    /* $2 the state asked for; the page's four from $3. */
    [APPEALS_LIST] = {"appeals.list",
                      "SELECT " APPEAL_COLUMNS APPEAL_FROM " WHERE ap.tenant_id = $1 AND CASE $2"
                      " WHEN 'approved' THEN ap.approved_at IS NOT NULL"
                      " WHEN 'rejected' THEN ap.rejected_at IS NOT NULL"
                      " ELSE ap.approved_at IS NULL AND ap.rejected_at IS NULL END",
                      "ap.id", 3},
    [APPEALS_SHOW] = {"appeals.show", "SELECT " APPEAL_COLUMNS APPEAL_FROM
                                      " WHERE ap.tenant_id = $1 AND ap.id = $2::bigint"},
    /*
     * Moderator $3 approves pending appeal $2: the appeal and its strike
     * are marked, the strike's action undone (a scheduled purge dropped
     * unless it runs), and each change logged. A row when the appeal
     * exists: whether it changed now, what the strike did, to whom.
     */
    [APPEALS_APPROVE] =
        {"appeals.approve",
         "WITH cur AS (SELECT id FROM appeals WHERE tenant_id = $1 AND id = $2::bigint),"
         " ap AS (UPDATE appeals SET approved_at = now(), approved_by_account_id = $3::bigint,"
         "  updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint AND approved_at IS NULL"
         "  AND rejected_at IS NULL RETURNING id, account_warning_id, account_id),"
         " w AS (UPDATE account_warnings aw SET overruled_at = now(), updated_at = now() FROM ap"
         "  WHERE aw.tenant_id = $1 AND aw.id = ap.account_warning_id"
         "  RETURNING aw.action, aw.target_account_id),"
         " t AS (SELECT ta.id, ta.username FROM accounts ta JOIN w ON ta.id = w.target_account_id"
         "  WHERE ta.tenant_id = $1),"
         " ac AS (UPDATE accounts SET"
         "  suspended_at = CASE WHEN w.action = 'suspend' THEN NULL ELSE suspended_at END,"
         "  silenced_at = CASE WHEN w.action = 'silence' THEN NULL ELSE silenced_at END,"
         "  sensitized_at = CASE WHEN w.action = 'sensitive' THEN NULL ELSE sensitized_at END,"
         "  updated_at = now() FROM w WHERE accounts.tenant_id = $1"
         "  AND accounts.id = w.target_account_id AND w.action IN ('suspend', 'silence',"
         "  'sensitive') RETURNING accounts.id),"
         " u AS (UPDATE users SET disabled = false, updated_at = now() FROM w"
         "  WHERE users.tenant_id = $1 AND users.account_id = w.target_account_id"
         "  AND w.action = 'disable' RETURNING users.id),"
         " j AS (DELETE FROM jobs WHERE tenant_id = $1 AND dedupe_key IN (SELECT"
         "  'purge_account:' || w.target_account_id FROM w WHERE w.action = 'suspend')"
         "  AND (locked_until IS NULL OR locked_until <= now())),"
         " l AS (" LOG_INSERT " SELECT $1, $3::bigint, 'approve', 'Appeal', ap.id,"
         "  (SELECT username FROM t) FROM ap"
         "  UNION ALL SELECT $1, $3::bigint, CASE w.action WHEN 'suspend' THEN 'unsuspend'"
         "   WHEN 'silence' THEN 'unsilence' WHEN 'sensitive' THEN 'unsensitive' ELSE 'enable' END,"
         "  CASE w.action WHEN 'disable' THEN 'User' ELSE 'Account' END,"
         "  coalesce((SELECT id FROM u), w.target_account_id), (SELECT username FROM t) FROM w"
         "  WHERE w.action <> 'none')"
         " SELECT EXISTS (SELECT 1 FROM ap) AS changed, (SELECT action FROM w) AS action,"
         " (SELECT target_account_id FROM w)::text AS target FROM cur"},
    /* Moderator $3 rejects pending appeal $2; a row when it exists. */
    [APPEALS_REJECT] =
        {"appeals.reject",
         "WITH cur AS (SELECT id FROM appeals WHERE tenant_id = $1 AND id = $2::bigint),"
         " ap AS (UPDATE appeals SET rejected_at = now(), rejected_by_account_id = $3::bigint,"
         "  updated_at = now() WHERE tenant_id = $1 AND id = $2::bigint AND approved_at IS NULL"
         "  AND rejected_at IS NULL RETURNING id, account_id),"
         " l AS (" LOG_INSERT " SELECT $1, $3::bigint, 'reject', 'Appeal', ap.id,"
         "  (SELECT username FROM accounts WHERE tenant_id = $1 AND id = ap.account_id) FROM ap)"
         " SELECT EXISTS (SELECT 1 FROM ap) AS changed, NULL AS action, NULL AS target FROM cur"},
    {0},
};

/* ------------------------------------------------------------ entities */

/* The AccountWarning text of column col of row i with its target_account
 * (new reference, borrowed); the entity, a new reference, or null. */
static json_t *
warning_json(const PGresult *res, int i, int col, json_t *target)
{
    json_t *w = PQgetisnull(res, i, col) ? NULL : json_loads(PQgetvalue(res, i, col), 0, NULL);
    if (!json_is_object(w)) {
        json_decref(w);
        json_decref(target);
        return json_null();
    }
    json_object_set_new(w, "target_account", target);
    return w;
}

/* Where APPEAL_COLUMNS are in a result. */
struct appeal_cols {
    int id, text, state, created_at, warning;
    struct eu_account_cols account;
};

static void
appeal_cols_find(struct appeal_cols *c, const PGresult *res)
{
    c->id = PQfnumber(res, "appeal_id");
    c->text = PQfnumber(res, "appeal_text");
    c->state = PQfnumber(res, "appeal_state");
    c->created_at = PQfnumber(res, "appeal_created_at");
    c->warning = PQfnumber(res, "warning");
    eu_account_cols_find(&c->account, res);
}

/* The staff's view of an appeal: Mastodon's Appeal (text, state) with its
 * id, time, appellant and the strike appealed. New reference. */
static json_t *
appeal_json(struct eu_req *req, const PGresult *res, int i, const struct appeal_cols *c)
{
    json_t *account = eu_account_json(req, res, i, &c->account);
    json_t *w = warning_json(res, i, c->warning, json_incref(account));
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "id", PQgetvalue(res, i, c->id), "text",
                     PQgetvalue(res, i, c->text), "state", PQgetvalue(res, i, c->state),
                     "created_at", PQgetvalue(res, i, c->created_at), "account", account,
                     "account_warning", w);
}

/* ------------------------------------------------------------ the user */

static void
on_warning(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    eu_req_reply_json(
        req, 200,
        warning_json(res, 0, PQfnumber(res, "warning"), eu_account_json(req, res, 0, &ac)));
}

static void
reply_warning(struct eu_req *req, const char *id)
{
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_appeals_sql[APPEALS_WARNING], 2, params, on_warning, NULL);
}

/* GET /api/v1/account_warnings/:id: one's own strike; another's is 404. */
static void
warning_show(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (id)
        reply_warning(req, id);
}

static void
on_appealed(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *verdict = PQgetvalue(res, 0, 0);
    if (strcmp(verdict, "too_late") == 0) {
        eu_req_reply_error(req, 422, "Validation failed: It is too late to appeal this strike");
        return;
    }
    if (strcmp(verdict, "taken") == 0) {
        eu_req_reply_error(req, 422, "Validation failed: This strike has already been appealed");
        return;
    }
    eu_log_info("appeals", "account %lld appealed strike %s", (long long)req->auth.account_id,
                (const char *)arg);
    reply_warning(req, arg);
}

/* POST /api/v1/account_warnings/:id/appeal {text}: answers the strike
 * with its appeal. */
static void
appeal_create(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *text = eu_param_str(p, "text");
    if (!text || !*text) {
        eu_req_reply_error(req, 422, "Validation failed: Text can't be blank");
        return;
    }
    if (eu_utf8_chars(text) > APPEAL_TEXT_MAX) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Text is too long (maximum is %d characters)",
                           APPEAL_TEXT_MAX);
        return;
    }
    const char *params[] = {id, eu_req_viewer(req), text};
    eu_req_stmt(req, &eu_appeals_sql[APPEALS_CREATE], 3, params, on_appealed, (void *)id);
}

/* ------------------------------------------------------------ the staff */

struct list {
    struct eu_page page;
    bool ascending;
};

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    struct list *l = arg;
    int n = PQntuples(res);
    struct appeal_cols c;
    appeal_cols_find(&c, res);
    json_t *out = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(out, appeal_json(req, res, l->ascending ? n - 1 - k : k, &c));
    if (n > 0)
        eu_page_link(req, PQgetvalue(res, l->ascending ? n - 1 : 0, c.id),
                     PQgetvalue(res, l->ascending ? 0 : n - 1, c.id));
    eu_req_reply_json(req, 200, out);
}

/* GET /api/v1/admin/appeals[?status=pending|approved|rejected]. */
static void
list(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_APPEALS))
        return;
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *status = eu_param_str(p, "status");
    if (!status || !*status)
        status = "pending";
    if (strcmp(status, "pending") != 0 && strcmp(status, "approved") != 0 &&
        strcmp(status, "rejected") != 0) {
        eu_req_reply_error(req, 400, "Unknown status: %s", status);
        return;
    }
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    if (eu_page_parse(req, &l->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    l->ascending = eu_page_is_ascending(&l->page);
    const char *params[5] = {status};
    eu_page_params(&l->page, params + 1);
    eu_req_stmt_page(req, &eu_appeals_sql[APPEALS_LIST], &l->page, 5, params, on_list, l);
}

static void
on_show(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct appeal_cols c;
    appeal_cols_find(&c, res);
    eu_req_reply_json(req, 200, appeal_json(req, res, 0, &c));
}

static void
on_decided(struct eu_req *req, PGresult *res, void *arg)
{
    const char *id = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (PQgetvalue(res, 0, 0)[0] != 't') {
        eu_req_reply_error(req, 422, "Validation failed: This appeal has already been decided");
        return;
    }
    const char *action = PQgetisnull(res, 0, 1) ? "" : PQgetvalue(res, 0, 1);
    int64_t target = PQgetisnull(res, 0, 2) ? 0 : strtoll(PQgetvalue(res, 0, 2), NULL, 10);
    struct eu_app *app = req->app;
    struct eu_tenant *t = req->tenant;
    if (strcmp(action, "suspend") == 0) {
        /* As an unsuspension: the purge may be later now, and followers
         * get the actor back. */
        eu_queue_task_wake(t, EU_TASK_ACCOUNT_CLEANUP, -1);
        eu_ap_outbox_profile(app, t, target);
    } else if (strcmp(action, "disable") == 0) {
        /* The login's tokens are cached as disabled. */
        eu_auth_cache_clear(app, t);
    }
    eu_log_info("appeals", "appeal %s decided by account %lld", id,
                (long long)req->auth.account_id);
    const char *params[] = {id};
    eu_req_stmt(req, &eu_appeals_sql[APPEALS_SHOW], 1, params, on_show, NULL);
}

static void
decide(struct eu_req *req, int stmt)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_APPEALS))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_appeals_sql[stmt], 2, params, on_decided, (void *)id);
}

static void
approve(struct eu_req *req)
{
    decide(req, APPEALS_APPROVE);
}

static void
reject(struct eu_req *req)
{
    decide(req, APPEALS_REJECT);
}

/* ------------------------------------------------------------ route table */

#define USER (EU_ROUTE_AUTH | EU_ROUTE_API)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_appeals_routes[] = {
    {EU_HTTP_GET, "/api/v1/account_warnings/:id", warning_show, "read:accounts", USER},
    {EU_HTTP_POST, "/api/v1/account_warnings/:id/appeal", appeal_create, "write:accounts", USER},
    {EU_HTTP_GET, "/api/v1/admin/appeals", list, "admin:read", USER},
    {EU_HTTP_POST, "/api/v1/admin/appeals/:id/approve", approve, "admin:write", USER},
    {EU_HTTP_POST, "/api/v1/admin/appeals/:id/reject", reject, "admin:write", USER},
    {0},
};
