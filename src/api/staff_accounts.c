/*
 * Mastodon's admin API for accounts, for a tenant's own staff on the
 * tenant's public host (/api/v1/admin/accounts, /api/v2/admin/accounts):
 * list and filter, show, approve and reject a sign-up, act on an account
 * (warn, mark sensitive, disable, silence, suspend) and undo it, delete a
 * suspended account's data. The operator's API (src/admin/) is a separate
 * door with its own token; the two never accept each other's tokens.
 *
 * Who may do what is Mastodon's: the route asks for the OAuth scope
 * (admin:read:accounts or admin:write:accounts, which admin:read and
 * admin:write cover), then the handler asks the user's role for the
 * permission Mastodon's AccountPolicy and UserPolicy ask for, and where
 * they compare roles, whether the moderator's role is above the target's.
 * A refusal is 403 "This action is not allowed".
 *
 * Every change writes an admin_action_logs row in the statement that
 * makes it, and an action an account_warnings row (a strike), so the audit
 * cannot miss a change that happened.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounts_internal.h"
#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"
#include "mail_internal.h"
#include "staff_internal.h"

/* Mastodon's LIMIT for both versions of the list; a client may ask twice. */
#define PAGE_DEFAULT 100
#define PAGE_MAX 200
/* Most ids one load of Admin::Accounts takes: a page of reports names four
 * accounts each. */
#define LOAD_MAX (4 * PAGE_MAX)
/* Mastodon caps a warning's text only by its column; ours is a request's. */
#define WARNING_TEXT_MAX 5000

enum {
    STAFF_ACCOUNTS_LIST,
    STAFF_ACCOUNTS_SHOW,
    STAFF_ACCOUNTS_BY_IDS,
    STAFF_ACCOUNTS_TARGET,
    STAFF_ACCOUNTS_APPROVE,
    STAFF_ACCOUNTS_REJECT,
    STAFF_ACCOUNTS_ENABLE,
    STAFF_ACCOUNTS_UNSILENCE,
    STAFF_ACCOUNTS_UNSENSITIVE,
    STAFF_ACCOUNTS_UNSUSPEND,
    STAFF_ACCOUNTS_DESTROY,
    STAFF_ACCOUNTS_ACTION,
};

/* Columns of the Admin::Account entity before its Account, for an accounts
 * row a and its users row u (NULL for a remote account). One select list
 * for the three statements that render it; struct staff_cols reads it. The
 * staff_ names keep clear of eunha_account()'s, which follow. */
#define STAFF_COLUMNS                                                                              \
    "a.id::text AS staff_id, a.username AS staff_username, a.domain AS staff_domain,"              \
    " eunha_ts(a.created_at) AS staff_created_at, u.email AS staff_email,"                         \
    " CASE WHEN u.id IS NOT NULL THEN (SELECT j::text FROM eunha_role_json($1, u.role_id) j) END"  \
    " AS staff_role, u.confirmed_at IS NOT NULL AS staff_confirmed,"                               \
    " a.suspended_at IS NOT NULL AS staff_suspended, a.silenced_at IS NOT NULL AS staff_silenced," \
    " a.sensitized_at IS NOT NULL AS staff_sensitized,"                                            \
    " coalesce(u.disabled, false) AS staff_disabled, coalesce(u.approved, false) AS "              \
    "staff_approved,"                                                                              \
    " u.locale AS staff_locale, u.reason AS staff_reason, (eunha_account(a)).*"

#define STAFF_FROM " FROM accounts a LEFT JOIN users u ON u.tenant_id = $1 AND u.account_id = a.id"

/* The audit row of a change: $3 is the moderator's account, target the
 * changed row's id. */
#define LOG_INSERT                                                                                 \
    "INSERT INTO admin_action_logs (tenant_id, account_id, action, target_type, target_id,"        \
    " human_identifier)"

const struct eu_sql eu_staff_accounts_sql[] = {
    /*
     * Mastodon's AccountFilter: $2 origin, $3 status, $4 staff only, $5
     * role ids (bigint[] text), $6 username prefix, $7 display name
     * prefix, $8 domain part, $9 e-mail prefix (LIKE patterns, escaped),
     * $10 an IP (no IP is kept, so it matches nobody), $11 invited by (no
     * invites yet: nobody); NULL for a filter not asked. The page's four
     * from $12.
     */
    [STAFF_ACCOUNTS_LIST] =
        {"staff_accounts.list",
         "SELECT " STAFF_COLUMNS STAFF_FROM
         " WHERE a.tenant_id = $1 AND a.username <> 'instance.actor'"
         " AND ($2::text IS NULL OR ($2 = 'local') = (a.domain IS NULL))"
         " AND ($3::text IS NULL OR CASE $3"
         "  WHEN 'active' THEN a.suspended_at IS NULL"
         "  WHEN 'pending' THEN u.approved IS FALSE"
         "  WHEN 'disabled' THEN u.disabled IS TRUE AND a.suspended_at IS NULL"
         "  WHEN 'silenced' THEN a.silenced_at IS NOT NULL"
         "  WHEN 'suspended' THEN a.suspended_at IS NOT NULL"
         "  WHEN 'sensitized' THEN a.sensitized_at IS NOT NULL END)"
         " AND ($4::bool IS NOT TRUE OR (u.role_id IS NOT NULL AND EXISTS (SELECT FROM"
         "  eunha_role($1, u.role_id) r WHERE r.permissions & 16 <> 0)))"
         " AND ($5::bigint[] IS NULL OR u.role_id = ANY($5::bigint[]))"
         " AND ($6::text IS NULL OR lower(a.username) LIKE lower($6))"
         " AND ($7::text IS NULL OR lower(a.display_name) LIKE lower($7))"
         " AND ($8::text IS NULL OR lower(a.domain) LIKE lower($8))"
         " AND ($9::text IS NULL OR lower(u.email) LIKE lower($9))"
         " AND $10::text IS NULL AND $11::text IS NULL",
         "a.id", 12},
    [STAFF_ACCOUNTS_SHOW] = {"staff_accounts.show",
                             "SELECT " STAFF_COLUMNS STAFF_FROM
                             " WHERE a.tenant_id = $1 AND a.id = $2::bigint"},
    /* $2 ids (bigint[] text). */
    [STAFF_ACCOUNTS_BY_IDS] = {"staff_accounts.by_ids",
                               "SELECT " STAFF_COLUMNS STAFF_FROM
                               " WHERE a.tenant_id = $1 AND a.id = ANY($2::bigint[])"},
    /*
     * What the policies ask about account $2 before moderator $3 acts on
     * it: whether it is local with a user, its states, and the positions of
     * both roles (Mastodon's overrides?: a remote account has no role, -1).
     */
    [STAFF_ACCOUNTS_TARGET] =
        {"staff_accounts.target",
         "SELECT a.username, u.id IS NOT NULL AND a.domain IS NULL AS local_user, u.email,"
         " coalesce(u.approved, false) AS approved, a.suspended_at IS NOT NULL AS suspended,"
         " a.username = 'instance.actor' AS instance_actor,"
         " CASE WHEN u.id IS NULL THEN -1"
         "  ELSE (SELECT r.position FROM eunha_role($1, u.role_id) r) END AS position,"
         " (SELECT r.position FROM users mu CROSS JOIN LATERAL eunha_role($1, mu.role_id) r"
         "  WHERE mu.tenant_id = $1 AND mu.account_id = $3::bigint) AS my_position" STAFF_FROM
         " WHERE a.tenant_id = $1 AND a.id = $2::bigint"},
    /* Each change below: $2 the account, $3 the moderator; a row when it
     * changed something (and logged it). */
    [STAFF_ACCOUNTS_APPROVE] =
        {"staff_accounts.approve",
         "WITH c AS (UPDATE users SET approved = true, updated_at = now()"
         "  WHERE tenant_id = $1 AND account_id = $2::bigint AND NOT approved RETURNING id)"
         " " LOG_INSERT " SELECT $1, $3::bigint, 'approve', 'User', c.id,"
         " (SELECT username FROM accounts WHERE tenant_id = $1 AND id = $2::bigint) FROM c"
         " RETURNING id"},
    /* A rejected sign-up goes whole, as Mastodon's DeleteAccountService
     * without reserving the name; its tokens go with its user row. */
    [STAFF_ACCOUNTS_REJECT] =
        {"staff_accounts.reject",
         "WITH c AS (DELETE FROM accounts a USING users u WHERE a.tenant_id = $1"
         "  AND a.id = $2::bigint AND u.tenant_id = $1 AND u.account_id = a.id AND NOT u.approved"
         "  RETURNING u.id, a.username)"
         " " LOG_INSERT " SELECT $1, $3::bigint, 'reject', 'User', c.id, c.username FROM c"
         " RETURNING id"},
    [STAFF_ACCOUNTS_ENABLE] =
        {"staff_accounts.enable",
         "WITH c AS (UPDATE users SET disabled = false, updated_at = now()"
         "  WHERE tenant_id = $1 AND account_id = $2::bigint AND disabled RETURNING id)"
         " " LOG_INSERT " SELECT $1, $3::bigint, 'enable', 'User', c.id,"
         " (SELECT username FROM accounts WHERE tenant_id = $1 AND id = $2::bigint) FROM c"
         " RETURNING id"},
    [STAFF_ACCOUNTS_UNSILENCE] =
        {"staff_accounts.unsilence",
         "WITH c AS (UPDATE accounts SET silenced_at = NULL, updated_at = now()"
         "  WHERE tenant_id = $1 AND id = $2::bigint AND silenced_at IS NOT NULL"
         "  RETURNING id, username)"
         " " LOG_INSERT " SELECT $1, $3::bigint, 'unsilence', 'Account', c.id, c.username FROM c"
         " RETURNING id"},
    [STAFF_ACCOUNTS_UNSENSITIVE] =
        {"staff_accounts.unsensitive",
         "WITH c AS (UPDATE accounts SET sensitized_at = NULL, updated_at = now()"
         "  WHERE tenant_id = $1 AND id = $2::bigint AND sensitized_at IS NOT NULL"
         "  RETURNING id, username)"
         " " LOG_INSERT " SELECT $1, $3::bigint, 'unsensitive', 'Account', c.id, c.username FROM c"
         " RETURNING id"},
    /* The purge a suspension scheduled is dropped unless it is running. */
    [STAFF_ACCOUNTS_UNSUSPEND] =
        {"staff_accounts.unsuspend",
         "WITH c AS (UPDATE accounts SET suspended_at = NULL, updated_at = now()"
         "  WHERE tenant_id = $1 AND id = $2::bigint AND suspended_at IS NOT NULL"
         "  RETURNING id, username),"
         " d AS (DELETE FROM jobs WHERE tenant_id = $1"
         "  AND dedupe_key = 'purge_account:' || $2::bigint"
         "  AND (locked_until IS NULL OR locked_until <= now()) AND EXISTS (SELECT 1 FROM c))"
         " " LOG_INSERT " SELECT $1, $3::bigint, 'unsuspend', 'Account', c.id, c.username FROM c"
         " RETURNING id"},
    /*
     * Mastodon deletes a suspended account's data at once on request; ours
     * is the purge the suspension scheduled, brought forward: $4 is the
     * retention in seconds, so the account is due now.
     */
    [STAFF_ACCOUNTS_DESTROY] =
        {"staff_accounts.destroy",
         "WITH c AS (UPDATE accounts SET suspended_at = now() - make_interval(secs => $4::float8)"
         "  WHERE tenant_id = $1 AND id = $2::bigint AND suspended_at IS NOT NULL"
         "  RETURNING id, username)"
         " " LOG_INSERT " SELECT $1, $3::bigint, 'destroy', 'Account', c.id, c.username FROM c"
         " RETURNING id"},
    /*
     * Mastodon's Admin::AccountAction: $4 type, $5 text, $6 report id or
     * NULL, $7 whether to tell the user (a moderation_warning notification
     * of the strike, which carries the report's statuses). The strike is written whatever the type;
     * a type other than none resolves every open report on the account, none only the one named.
     * Rows: ('account', whether it is now suspended, whether the login is disabled) and one
     * 'report' row per resolved report.
     */
    [STAFF_ACCOUNTS_ACTION] =
        {"staff_accounts.action",
         "WITH w AS (INSERT INTO account_warnings (tenant_id, account_id, target_account_id,"
         "  action, text, report_id, status_ids) VALUES ($1, $3::bigint, $2::bigint, $4, $5,"
         "  $6::bigint, coalesce((SELECT rp.status_ids FROM reports rp WHERE rp.tenant_id = $1"
         "  AND rp.id = $6::bigint), '{}'))"
         "  RETURNING id),"
         /* Mastodon's warnable?: a local user is told, unless the moderator
          * said not to; the notification is from the account itself. */
         " nw AS (INSERT INTO notifications (tenant_id, account_id, from_account_id, type,"
         "  account_warning_id) SELECT $1, $2::bigint, $2::bigint, 'moderation_warning', w.id"
         "  FROM w WHERE $7::bool AND EXISTS (SELECT 1 FROM users nu WHERE nu.tenant_id = $1"
         "  AND nu.account_id = $2::bigint)),"
         " s AS (UPDATE accounts SET"
         "  suspended_at = CASE WHEN $4 = 'suspend' THEN coalesce(suspended_at, now())"
         "   ELSE suspended_at END,"
         "  silenced_at = CASE WHEN $4 = 'silence' THEN coalesce(silenced_at, now())"
         "   ELSE silenced_at END,"
         "  sensitized_at = CASE WHEN $4 = 'sensitive' THEN coalesce(sensitized_at, now())"
         "   ELSE sensitized_at END, updated_at = now()"
         "  WHERE tenant_id = $1 AND id = $2::bigint AND $4 IN ('suspend', 'silence', 'sensitive')"
         "  RETURNING id),"
         " d AS (UPDATE users SET disabled = true, updated_at = now() WHERE tenant_id = $1"
         "  AND account_id = $2::bigint AND $4 = 'disable' RETURNING id),"
         " r AS (UPDATE reports SET action_taken_at = now(), action_taken_by_account_id = "
         "$3::bigint,"
         "  updated_at = now() WHERE tenant_id = $1 AND action_taken_at IS NULL"
         "  AND (($4 = 'none' AND id = $6::bigint) OR ($4 <> 'none' AND target_account_id = "
         "$2::bigint))"
         "  RETURNING id),"
         " t AS (SELECT username FROM accounts WHERE tenant_id = $1 AND id = $2::bigint),"
         " l AS (" LOG_INSERT " SELECT $1, $3::bigint, CASE $4 WHEN 'none' THEN 'warn' ELSE $4 END,"
         "  CASE $4 WHEN 'disable' THEN 'User' ELSE 'Account' END,"
         "  coalesce((SELECT id FROM d), $2::bigint), (SELECT username FROM t)"
         "  UNION ALL SELECT $1, $3::bigint, 'resolve', 'Report', r.id, NULL FROM r)"
         " SELECT 'account' AS kind, $4 = 'suspend' AS suspended, $4 = 'disable' AS disabled FROM w"
         " UNION ALL SELECT 'report', false, false FROM r"},
    {0},
};

/* ------------------------------------------------------------ the entity */

static json_t *
text_or_null(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

static bool
is_true(const PGresult *res, int row, int col)
{
    return PQgetvalue(res, row, col)[0] == 't';
}

/* Where STAFF_COLUMNS' columns are in a result, looked up once per result. */
struct staff_cols {
    int id, username, domain, created_at, email, role, confirmed, suspended, silenced, sensitized,
        disabled, approved, locale, reason;
    struct eu_account_cols account;
};

static void
staff_cols_find(struct staff_cols *c, const PGresult *res)
{
    c->id = PQfnumber(res, "staff_id");
    c->username = PQfnumber(res, "staff_username");
    c->domain = PQfnumber(res, "staff_domain");
    c->created_at = PQfnumber(res, "staff_created_at");
    c->email = PQfnumber(res, "staff_email");
    c->role = PQfnumber(res, "staff_role");
    c->confirmed = PQfnumber(res, "staff_confirmed");
    c->suspended = PQfnumber(res, "staff_suspended");
    c->silenced = PQfnumber(res, "staff_silenced");
    c->sensitized = PQfnumber(res, "staff_sensitized");
    c->disabled = PQfnumber(res, "staff_disabled");
    c->approved = PQfnumber(res, "staff_approved");
    c->locale = PQfnumber(res, "staff_locale");
    c->reason = PQfnumber(res, "staff_reason");
    eu_account_cols_find(&c->account, res);
}

/* Mastodon's Admin::Account for row of res (STAFF_COLUMNS, found as c).
 * New reference. No IP is kept per user, so ip is null and ips empty. */
static json_t *
staff_account_json(struct eu_req *req, const PGresult *res, int row, struct staff_cols *c)
{
    json_t *role = PQgetisnull(res, row, c->role)
                       ? json_null()
                       : json_loads(PQgetvalue(res, row, c->role), 0, NULL);
    return json_pack(
        "{s:s, s:s, s:o, s:s, s:o, s:n, s:[], s:o, s:b, s:b, s:b, s:b, s:b, s:b, s:o, s:o, s:o}",
        "id", PQgetvalue(res, row, c->id), "username", PQgetvalue(res, row, c->username), "domain",
        text_or_null(res, row, c->domain), "created_at", PQgetvalue(res, row, c->created_at),
        "email", text_or_null(res, row, c->email), "ip", "ips", "role", role ? role : json_null(),
        "confirmed", is_true(res, row, c->confirmed), "suspended", is_true(res, row, c->suspended),
        "silenced", is_true(res, row, c->silenced), "sensitized", is_true(res, row, c->sensitized),
        "disabled", is_true(res, row, c->disabled), "approved", is_true(res, row, c->approved),
        "locale", text_or_null(res, row, c->locale), "invite_request",
        text_or_null(res, row, c->reason), "account",
        eu_accounts_render(req, res, row, &c->account));
}

/* ------------------------------------------------------------ parameters */

/* params of the request; NULL after answering the error. */
static json_t *
params_or_reply(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p)
        eu_req_reply_eu_error(req, &err);
    return p;
}

/* Rails' present?: given and not blank. */
static bool
present(json_t *p, const char *key)
{
    const char *v = eu_param_str(p, key);
    return v && v[strspn(v, " \t")];
}

/* A LIKE pattern matching what starts with s (anywhere when anywhere is
 * set), its wildcards escaped, as Mastodon's sanitize_sql_like; NULL for
 * an absent or blank s. Arena-owned. */
static const char *
like_pattern(struct eu_req *req, json_t *p, const char *key, bool anywhere)
{
    if (!present(p, key))
        return NULL;
    const char *s = eu_param_str(p, key);
    size_t n = strlen(s);
    char *out = eu_arena_alloc(req->arena, 2 * n + 3), *w = out;
    if (anywhere)
        *w++ = '%';
    for (; *s; s++) {
        if (*s == '%' || *s == '_' || *s == '\\')
            *w++ = '\\';
        *w++ = *s;
    }
    *w++ = '%';
    *w = '\0';
    return out;
}

/* ids (a JSON array of decimal strings or numbers) as a bigint[] literal
 * in the arena; NULL when one is not an id. */
static const char *
id_array(struct eu_req *req, json_t *ids)
{
    size_t n = json_array_size(ids);
    char *out = eu_arena_alloc(req->arena, n * 21 + 3), *w = out;
    *w++ = '{';
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(ids, i);
        char num[24];
        const char *id = json_string_value(v);
        if (json_is_integer(v)) {
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
            id = num;
        }
        if (!id || !eu_id_is_valid(id))
            return NULL;
        if (i)
            *w++ = ',';
        size_t len = strlen(id);
        memcpy(w, id, len);
        w += len;
    }
    *w++ = '}';
    *w = '\0';
    return out;
}

/* ------------------------------------------------------------ list */

struct list {
    struct eu_page page;
    eu_staff_json_cb cb; /* a page's, instead of the JSON answer; NULL for the API */
    void *cb_arg;
};

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    struct list *l = arg;
    int n = PQntuples(res);
    bool asc = eu_page_is_ascending(&l->page);
    json_t *out = json_array();
    struct staff_cols c;
    staff_cols_find(&c, res);
    for (int i = 0; i < n; i++)
        json_array_append_new(out, staff_account_json(req, res, asc ? n - 1 - i : i, &c));
    if (l->cb) {
        l->cb(req, out, l->cb_arg);
        json_decref(out);
        return;
    }
    if (n > 0)
        eu_page_link(req, PQgetvalue(res, asc ? n - 1 : 0, c.id),
                     PQgetvalue(res, asc ? 0 : n - 1, c.id));
    eu_req_reply_json(req, 200, out);
}

/* The filters both versions share: params[4..9] ($6..$11). */
static void
common_filters(struct eu_req *req, json_t *p, const char **params)
{
    params[4] = like_pattern(req, p, "username", false);
    params[5] = like_pattern(req, p, "display_name", false);
    params[6] = like_pattern(req, p, "by_domain", true);
    params[7] = like_pattern(req, p, "email", false);
    params[8] = present(p, "ip") ? eu_param_str(p, "ip") : NULL;
    params[9] = present(p, "invited_by") ? eu_param_str(p, "invited_by") : NULL;
}

static void
run_list(struct eu_req *req, const char **params)
{
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    if (eu_page_parse(req, &l->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    eu_page_params(&l->page, params + 10);
    eu_req_stmt_page(req, &eu_staff_accounts_sql[STAFF_ACCOUNTS_LIST], &l->page, 14, params,
                     on_list, l);
}

void
eu_staff_accounts_pending(struct eu_req *req, eu_staff_json_cb cb, void *arg)
{
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->cb = cb;
    l->cb_arg = arg;
    l->page.limit = PAGE_DEFAULT;
    snprintf(l->page.limit_s, sizeof(l->page.limit_s), "%d", PAGE_DEFAULT);
    const char *params[14] = {"local", "pending"};
    eu_page_params(&l->page, params + 10);
    eu_req_stmt_page(req, &eu_staff_accounts_sql[STAFF_ACCOUNTS_LIST], &l->page, 14, params,
                     on_list, l);
}

/* GET /api/v1/admin/accounts: local and active unless asked otherwise, as
 * Mastodon's translated_filter_params; the last status flag given wins. */
static void
list_v1(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_USERS))
        return;
    json_t *p = params_or_reply(req);
    if (!p)
        return;
    const char *params[14] = {present(p, "remote") ? "remote" : "local", "active"};
    static const char *const statuses[] = {"active",   "pending",   "disabled",
                                           "silenced", "suspended", "sensitized"};
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
        if (present(p, statuses[i]))
            params[1] = statuses[i];
    params[2] = present(p, "staff") ? "true" : NULL;
    common_filters(req, p, params);
    run_list(req, params);
}

static bool
is_one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(s, *set) == 0)
            return true;
    return false;
}

/* GET /api/v2/admin/accounts: Mastodon's AccountFilter as it is, nothing
 * by default. */
static void
list_v2(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_USERS))
        return;
    json_t *p = params_or_reply(req);
    if (!p)
        return;
    const char *params[14] = {0};
    static const char *const origins[] = {"local", "remote", NULL};
    static const char *const statuses[] = {"active",    "pending",    "disabled", "silenced",
                                           "suspended", "sensitized", NULL};
    const char *origin = present(p, "origin") ? eu_param_str(p, "origin") : NULL;
    const char *status = present(p, "status") ? eu_param_str(p, "status") : NULL;
    const char *perms = present(p, "permissions") ? eu_param_str(p, "permissions") : NULL;
    if (origin && !is_one_of(origin, origins)) {
        eu_req_reply_error(req, 400, "Unknown origin: %s", origin);
        return;
    }
    if (status && !is_one_of(status, statuses)) {
        eu_req_reply_error(req, 400, "Unknown status: %s", status);
        return;
    }
    if (perms && strcmp(perms, "staff") != 0) {
        eu_req_reply_error(req, 400, "Unknown permissions: %s", perms);
        return;
    }
    params[0] = origin;
    params[1] = status;
    params[2] = perms ? "true" : NULL;
    json_t *roles = eu_param_array(p, "role_ids");
    if (json_array_size(roles) > 0) {
        params[3] = id_array(req, roles);
        /* A role id that is no number names no role: nobody has it. */
        if (!params[3])
            params[3] = "{}";
    }
    json_decref(roles);
    common_filters(req, p, params);
    run_list(req, params);
}

/* ------------------------------------------------------------ show */

static void
on_show(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct staff_cols c;
    staff_cols_find(&c, res);
    eu_req_reply_json(req, 200, staff_account_json(req, res, 0, &c));
}

static void
reply_account(struct eu_req *req, const char *id)
{
    const char *params[] = {id};
    eu_req_stmt(req, &eu_staff_accounts_sql[STAFF_ACCOUNTS_SHOW], 1, params, on_show, NULL);
}

static void
show(struct eu_req *req)
{
    if (!eu_auth_permit(req, EU_PERM_MANAGE_USERS))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (id)
        reply_account(req, id);
}

/* ------------------------------------------------------------ by ids */

struct load {
    eu_staff_accounts_cb cb;
    void *arg;
};

static void
on_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct load *l = arg;
    json_t *by_id = json_object();
    struct staff_cols c;
    staff_cols_find(&c, res);
    for (int i = 0; i < PQntuples(res); i++)
        json_object_set_new(by_id, PQgetvalue(res, i, c.id), staff_account_json(req, res, i, &c));
    l->cb(req, by_id, l->arg);
}

void
eu_staff_accounts_load(struct eu_req *req, const char *const *ids, size_t n,
                       eu_staff_accounts_cb cb, void *arg)
{
    struct load *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->cb = cb;
    l->arg = arg;
    if (n > LOAD_MAX)
        n = LOAD_MAX;
    char *arr = eu_arena_alloc(req->arena, n * 21 + 3), *w = arr;
    *w++ = '{';
    for (size_t i = 0; i < n; i++)
        w += sprintf(w, "%s%s", i ? "," : "", ids[i]);
    *w++ = '}';
    *w = '\0';
    const char *params[] = {arr};
    eu_req_stmt(req, &eu_staff_accounts_sql[STAFF_ACCOUNTS_BY_IDS], 1, params, on_loaded, l);
}

/* ------------------------------------------------------------ changes */

/* What a change needs of its target before it runs (Mastodon's policies). */
enum need {
    NEED_LOCAL = 1 << 0,     /* require_local_account!: local, with a user */
    NEED_PENDING = 1 << 1,   /* approve?/reject?: not approved yet */
    NEED_SUSPENDED = 1 << 2, /* destroy?: suspended_temporarily? */
    NEED_OUTRANK = 1 << 3,   /* overrides?: the moderator's role is above the target's */
};

enum change_kind {
    CHANGE_APPROVE,
    CHANGE_REJECT,
    CHANGE_ENABLE,
    CHANGE_UNSILENCE,
    CHANGE_UNSENSITIVE,
    CHANGE_UNSUSPEND,
    CHANGE_DESTROY,
    CHANGE_ACTION,
};

static const struct {
    int stmt;
    int64_t perms; /* any of */
    unsigned need;
    bool reply_account; /* answer Admin::Account; else {} */
} changes[] = {
    [CHANGE_APPROVE] = {STAFF_ACCOUNTS_APPROVE, EU_PERM_MANAGE_USERS, NEED_LOCAL | NEED_PENDING,
                        true},
    [CHANGE_REJECT] = {STAFF_ACCOUNTS_REJECT, EU_PERM_MANAGE_USERS, NEED_LOCAL | NEED_PENDING,
                       false},
    [CHANGE_ENABLE] = {STAFF_ACCOUNTS_ENABLE, EU_PERM_MANAGE_USERS, NEED_LOCAL, true},
    [CHANGE_UNSILENCE] = {STAFF_ACCOUNTS_UNSILENCE, EU_PERM_MANAGE_USERS, 0, true},
    [CHANGE_UNSENSITIVE] = {STAFF_ACCOUNTS_UNSENSITIVE, EU_PERM_MANAGE_USERS, 0, true},
    [CHANGE_UNSUSPEND] = {STAFF_ACCOUNTS_UNSUSPEND, EU_PERM_MANAGE_USERS, 0, true},
    [CHANGE_DESTROY] = {STAFF_ACCOUNTS_DESTROY, EU_PERM_DELETE_USER_DATA, NEED_SUSPENDED, false},
    [CHANGE_ACTION] = {STAFF_ACCOUNTS_ACTION, EU_PERM_MANAGE_USERS, NEED_OUTRANK, false},
};

struct change {
    enum change_kind kind;
    const char *id;
    const char *type, *text, *report_id, *notify; /* CHANGE_ACTION only */
    const char *email, *username;                 /* the target's (arena); email NULL when remote */
    eu_staff_done_cb done; /* a page's, instead of the JSON answer; NULL for the API */
    void *done_arg;
};

static const char *const change_names[] = {
    [CHANGE_APPROVE] = "approve",         [CHANGE_REJECT] = "reject",
    [CHANGE_ENABLE] = "enable",           [CHANGE_UNSILENCE] = "unsilence",
    [CHANGE_UNSENSITIVE] = "unsensitive", [CHANGE_UNSUSPEND] = "unsuspend",
    [CHANGE_DESTROY] = "destroy",         [CHANGE_ACTION] = "action",
};

static void
on_changed(struct eu_req *req, PGresult *res, void *arg)
{
    struct change *c = arg;
    struct eu_app *app = req->app;
    struct eu_tenant *t = req->tenant;
    int64_t account = strtoll(c->id, NULL, 10);
    bool changed = PQntuples(res) > 0;
    switch (c->kind) {
    case CHANGE_REJECT:
    case CHANGE_ENABLE:
        /* The tokens went with a rejected row; an enabled login's are
         * cached as disabled. */
        if (changed)
            eu_auth_cache_clear(app, t);
        break;
    case CHANGE_UNSUSPEND:
        if (changed) {
            /* The next purge may now be later; followers get the actor back. */
            eu_queue_task_wake(t, EU_TASK_ACCOUNT_CLEANUP, -1);
            eu_ap_outbox_profile(app, t, account);
        }
        break;
    case CHANGE_DESTROY:
        if (changed)
            eu_queue_task_wake(t, EU_TASK_ACCOUNT_CLEANUP, 0);
        break;
    case CHANGE_ACTION: {
        int kind_col = PQfnumber(res, "kind"), suspended_col = PQfnumber(res, "suspended"),
            disabled_col = PQfnumber(res, "disabled");
        for (int i = 0; i < PQntuples(res); i++) {
            if (strcmp(PQgetvalue(res, i, kind_col), "account") != 0)
                continue;
            /* A suspension or a disabled login ends the account's tokens
             * now, in every process, and its open streams. */
            bool suspended = is_true(res, i, suspended_col);
            if (suspended || is_true(res, i, disabled_col)) {
                eu_auth_cache_clear(app, t);
                eu_stream_close_for(app, t, account, NULL);
            }
            if (suspended) {
                eu_ap_outbox_profile(app, t, account);
                int64_t due_ms = (int64_t)app->cfg->suspended_retention_s * 1000;
                eu_queue_task_wake(t, EU_TASK_ACCOUNT_CLEANUP, due_ms);
            }
        }
        break;
    }
    default:
        break;
    }
    /* The user is told by mail: a sign-up decided, or a strike the
     * moderator did not ask to keep quiet (send_email_notification). */
    if (changed && c->email &&
        (c->kind == CHANGE_APPROVE || c->kind == CHANGE_REJECT ||
         (c->kind == CHANGE_ACTION && strcmp(c->notify, "true") == 0)))
        eu_api_mail_staff(req, c->email, c->username,
                          c->kind == CHANGE_ACTION ? c->type : change_names[c->kind], c->text);
    if (changed)
        eu_log_info("staff", "%s by account %lld on account %s", change_names[c->kind],
                    (long long)req->auth.account_id, c->id);
    if (c->done)
        c->done(req, 200, c->done_arg);
    else if (changes[c->kind].reply_account)
        reply_account(req, c->id);
    else
        eu_req_reply_json(req, 200, json_object());
}

/* A refusal: the page's callback, or the API's error. */
static void
refuse(struct eu_req *req, struct change *c, int status)
{
    if (c->done)
        c->done(req, status, c->done_arg);
    else if (status == 404)
        eu_req_reply_error(req, 404, "Record not found");
    else
        eu_req_reply_error(req, 403, "This action is not allowed");
}

static void
on_target(struct eu_req *req, PGresult *res, void *arg)
{
    struct change *c = arg;
    if (PQntuples(res) == 0) {
        refuse(req, c, 404);
        return;
    }
    unsigned need = changes[c->kind].need;
    if (c->kind == CHANGE_ACTION && strcmp(c->type, "disable") == 0)
        need |= NEED_LOCAL;
    int my = PQfnumber(res, "my_position");
    int my_pos = PQgetisnull(res, 0, my) ? -1 : atoi(PQgetvalue(res, 0, my));
    int pos = atoi(PQgetvalue(res, 0, PQfnumber(res, "position")));
    bool refused = ((need & NEED_LOCAL) && !is_true(res, 0, PQfnumber(res, "local_user"))) ||
                   ((need & NEED_PENDING) && is_true(res, 0, PQfnumber(res, "approved"))) ||
                   ((need & NEED_SUSPENDED) && !is_true(res, 0, PQfnumber(res, "suspended"))) ||
                   ((need & NEED_OUTRANK) && my_pos <= pos) ||
                   (c->kind == CHANGE_ACTION && is_true(res, 0, PQfnumber(res, "instance_actor")));
    if (refused) {
        refuse(req, c, 403);
        return;
    }
    int email_col = PQfnumber(res, "email");
    if (is_true(res, 0, PQfnumber(res, "local_user")) && !PQgetisnull(res, 0, email_col)) {
        c->email = eu_arena_strdup(req->arena, PQgetvalue(res, 0, email_col));
        c->username = eu_arena_strdup(req->arena, PQgetvalue(res, 0, PQfnumber(res, "username")));
    }
    const char *retention =
        eu_arena_sprintf(req->arena, "%d", req->app->cfg->suspended_retention_s);
    const char *params[] = {
        c->id,   eu_req_viewer(req), c->kind == CHANGE_ACTION ? c->type : retention,
        c->text, c->report_id,       c->notify};
    int n = c->kind == CHANGE_ACTION ? 6 : c->kind == CHANGE_DESTROY ? 3 : 2;
    eu_req_stmt(req, &eu_staff_accounts_sql[changes[c->kind].stmt], n, params, on_changed, c);
}

/* Checks the permission and the :id, then the target, then changes it.
 * c is arena-owned. */
static void
change_target(struct eu_req *req, struct change *c)
{
    const char *params[] = {c->id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_staff_accounts_sql[STAFF_ACCOUNTS_TARGET], 2, params, on_target, c);
}

static void
change(struct eu_req *req, struct change *c)
{
    if (!eu_auth_permit(req, changes[c->kind].perms))
        return;
    c->id = eu_req_id_param(req, "id");
    if (!c->id)
        return;
    change_target(req, c);
}

void
eu_staff_account_change(struct eu_req *req, const char *id, const char *what, const char *text,
                        const char *report_id, eu_staff_done_cb done, void *arg)
{
    static const char *const simple[] = {
        [CHANGE_APPROVE] = "approve",         [CHANGE_REJECT] = "reject",
        [CHANGE_ENABLE] = "enable",           [CHANGE_UNSILENCE] = "unsilence",
        [CHANGE_UNSENSITIVE] = "unsensitive", [CHANGE_UNSUSPEND] = "unsuspend"};
    static const char *const types[] = {"none", "sensitive", "disable", "silence", "suspend", NULL};
    struct change *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->id = id;
    c->done = done;
    c->done_arg = arg;
    c->kind = CHANGE_ACTION;
    for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
        if (strcmp(what, simple[i]) == 0)
            c->kind = (enum change_kind)i;
    if (c->kind == CHANGE_ACTION) {
        if (!is_one_of(what, types)) {
            done(req, 404, arg);
            return;
        }
        c->type = what;
        c->text = text ? text : "";
        if (strlen(c->text) > WARNING_TEXT_MAX) {
            done(req, 422, arg);
            return;
        }
        c->report_id = report_id;
        c->notify = "true";
    }
    if (!(req->auth.permissions & changes[c->kind].perms)) {
        done(req, 403, arg);
        return;
    }
    change_target(req, c);
}

static void
change_simple(struct eu_req *req, enum change_kind kind)
{
    struct change *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->kind = kind;
    change(req, c);
}

static void
approve(struct eu_req *req)
{
    change_simple(req, CHANGE_APPROVE);
}

static void
reject(struct eu_req *req)
{
    change_simple(req, CHANGE_REJECT);
}

static void
enable(struct eu_req *req)
{
    change_simple(req, CHANGE_ENABLE);
}

static void
unsilence(struct eu_req *req)
{
    change_simple(req, CHANGE_UNSILENCE);
}

static void
unsensitive(struct eu_req *req)
{
    change_simple(req, CHANGE_UNSENSITIVE);
}

static void
unsuspend(struct eu_req *req)
{
    change_simple(req, CHANGE_UNSUSPEND);
}

static void
destroy(struct eu_req *req)
{
    change_simple(req, CHANGE_DESTROY);
}

/* POST /api/v1/admin/accounts/:id/action: Mastodon's AccountAction.
 * warning_preset_id names a preset whose text Mastodon would use when
 * none is given; there are no presets yet, so it adds nothing.
 * send_email_notification=false keeps the strike from the user; otherwise
 * a local user gets a moderation_warning notification and a mail
 * (mail_internal.h). */
static void
action(struct eu_req *req)
{
    json_t *p = params_or_reply(req);
    if (!p)
        return;
    struct change *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->kind = CHANGE_ACTION;
    static const char *const types[] = {"none", "sensitive", "disable", "silence", "suspend", NULL};
    const char *type = eu_param_str(p, "type");
    if (!type || !*type)
        type = "none";
    if (!is_one_of(type, types)) {
        eu_req_reply_error(req, 422, "Validation failed: Type is not included in the list");
        return;
    }
    const char *text = eu_param_str(p, "text");
    if (text && strlen(text) > WARNING_TEXT_MAX) {
        eu_req_reply_error(req, 422, "Validation failed: Text is too long");
        return;
    }
    const char *report = eu_param_str(p, "report_id");
    if (report && *report && !eu_id_is_valid(report)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    c->type = type;
    c->text = eu_arena_strdup(req->arena, text ? text : "");
    c->report_id = report && *report ? eu_arena_strdup(req->arena, report) : NULL;
    bool notify = true;
    if (eu_param_bool(p, "send_email_notification", &notify) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: send_email_notification is not a boolean");
        return;
    }
    c->notify = notify ? "true" : "false";
    change(req, c);
}

/* ------------------------------------------------------------ route table */

#define READ "admin:read:accounts"
#define WRITE "admin:write:accounts"
#define STAFF (EU_ROUTE_AUTH | EU_ROUTE_API)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_staff_accounts_routes[] = {
    {EU_HTTP_GET, "/api/v1/admin/accounts", list_v1, READ, STAFF},
    {EU_HTTP_GET, "/api/v2/admin/accounts", list_v2, READ, STAFF},
    {EU_HTTP_GET, "/api/v1/admin/accounts/:id", show, READ, STAFF},
    {EU_HTTP_DELETE, "/api/v1/admin/accounts/:id", destroy, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/accounts/:id/approve", approve, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/accounts/:id/reject", reject, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/accounts/:id/action", action, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/accounts/:id/enable", enable, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/accounts/:id/unsilence", unsilence, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/accounts/:id/unsensitive", unsensitive, WRITE, STAFF},
    {EU_HTTP_POST, "/api/v1/admin/accounts/:id/unsuspend", unsuspend, WRITE, STAFF},
    {0},
};
