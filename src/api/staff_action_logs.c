/*
 * The audit log (issue 28): every staff change writes an admin_action_logs
 * row in the statement that makes it (staff_accounts.c, staff_reports.c,
 * appeals.c, staff_roles.c). Mastodon shows the log in its web admin only;
 * GET /api/v1/admin/action_logs is eunha's, for staff with view_audit_log,
 * and the operator's /admin/v1/tenants/:domain/action_logs
 * (src/admin/staff.c) calls eu_staff_action_logs_list() below.
 *
 * The entity follows Mastodon's Admin::ActionLog: id, action, target_type,
 * target_id, human_identifier (the target's name when it was written, so
 * a row still reads after its target goes), account (the staff member's
 * Account, null once that account is gone) and created_at. Newest first,
 * paginated with a Link header; account_id, action and target_type
 * filter it.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"

#define PAGE_DEFAULT 40
#define PAGE_MAX 200

enum { ACTION_LOGS_LIST };

const struct eu_sql eu_staff_action_logs_sql[] = {
    /*
     * $2 the staff member, $3 the action, $4 the target type, each NULL
     * when not asked; the page's four from $5. The account is joined by
     * primary key, one probe a row.
     */
    [ACTION_LOGS_LIST] = {"staff_action_logs.list",
                          "SELECT l.id::text AS log_id, l.action AS log_action,"
                          " l.target_type AS log_target_type, l.target_id::text AS log_target_id,"
                          " l.human_identifier AS log_human, eunha_ts(l.created_at) AS log_at,"
                          " a.id IS NOT NULL AS log_has_account, (eunha_account(a)).*"
                          " FROM admin_action_logs l LEFT JOIN accounts a ON a.tenant_id = $1"
                          " AND a.id = l.account_id WHERE l.tenant_id = $1"
                          " AND ($2::bigint IS NULL OR l.account_id = $2::bigint)"
                          " AND ($3::text IS NULL OR l.action = $3)"
                          " AND ($4::text IS NULL OR l.target_type = $4)",
                          "l.id", 5},
    {0},
};

struct list {
    struct eu_page page;
    bool ascending;
};

static json_t *
text_or_null(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

static void
on_list(struct eu_req *req, PGresult *res, void *arg)
{
    struct list *l = arg;
    int n = PQntuples(res);
    int c_id = PQfnumber(res, "log_id"), c_action = PQfnumber(res, "log_action"),
        c_type = PQfnumber(res, "log_target_type"), c_target = PQfnumber(res, "log_target_id"),
        c_human = PQfnumber(res, "log_human"), c_at = PQfnumber(res, "log_at"),
        c_has = PQfnumber(res, "log_has_account");
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    json_t *out = json_array();
    for (int k = 0; k < n; k++) {
        int i = l->ascending ? n - 1 - k : k;
        json_t *account =
            PQgetvalue(res, i, c_has)[0] == 't' ? eu_account_json(req, res, i, &ac) : json_null();
        json_array_append_new(
            out, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s}", "id", PQgetvalue(res, i, c_id),
                           "action", PQgetvalue(res, i, c_action), "target_type",
                           PQgetvalue(res, i, c_type), "target_id", PQgetvalue(res, i, c_target),
                           "human_identifier", text_or_null(res, i, c_human), "account", account,
                           "created_at", PQgetvalue(res, i, c_at)));
    }
    if (n > 0)
        eu_page_link(req, PQgetvalue(res, l->ascending ? n - 1 : 0, c_id),
                     PQgetvalue(res, l->ascending ? 0 : n - 1, c_id));
    eu_req_reply_json(req, 200, out);
}

/* A filter's value, or NULL when absent or empty. */
static const char *
filter(json_t *p, const char *key)
{
    const char *v = eu_param_str(p, key);
    return v && *v ? v : NULL;
}

void
eu_staff_action_logs_list(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *account = filter(p, "account_id");
    if (account && !eu_id_is_valid(account)) {
        eu_req_reply_json(req, 200, json_array());
        return;
    }
    struct list *l = eu_arena_calloc(req->arena, sizeof(*l));
    if (eu_page_parse(req, &l->page, PAGE_DEFAULT, PAGE_MAX) < 0)
        return;
    l->ascending = eu_page_is_ascending(&l->page);
    const char *params[7] = {account, filter(p, "action"), filter(p, "target_type")};
    eu_page_params(&l->page, params + 3);
    eu_req_stmt_page(req, &eu_staff_action_logs_sql[ACTION_LOGS_LIST], &l->page, 7, params, on_list,
                     l);
}

static void
staff_list(struct eu_req *req)
{
    if (eu_auth_permit(req, EU_PERM_VIEW_AUDIT_LOG))
        eu_staff_action_logs_list(req);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_staff_action_logs_routes[] = {
    {EU_HTTP_GET, "/api/v1/admin/action_logs", staff_list, "admin:read",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
