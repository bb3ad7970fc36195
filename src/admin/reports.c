/*
 * Reports (Mastodon's Flag, received by src/ap/process_status.c) as the
 * operator reads them: GET /admin/v1/tenants/:domain/reports, newest
 * first, paged by max_id.
 */
#include "eunha/admin.h"

#include <jansson.h>
#include <libpq-fe.h>

#include "admin_internal.h"
#include "eunha/app.h"
#include "eunha/db.h"
#include "eunha/http.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

enum { REPORTS_LIST };

const struct eu_sql eu_admin_reports_sql[] = {
    /* $2 max_id or NULL, $3 limit. */
    [REPORTS_LIST] =
        {"admin_reports.list",
         "SELECT r.id::text, r.account_id::text, a.username || coalesce('@' || a.domain, ''), "
         "a.uri,"
         " r.target_account_id::text, t.username, array_to_json(r.status_ids::text[])::text,"
         " r.comment, r.uri, to_char(r.created_at AT TIME ZONE 'UTC',"
         " 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), r.action_taken_at IS NOT NULL,"
         " r.category, r.forwarded"
         " FROM reports r JOIN accounts a ON a.tenant_id = $1 AND a.id = r.account_id"
         " JOIN accounts t ON t.tenant_id = $1 AND t.id = r.target_account_id"
         " WHERE r.tenant_id = $1 AND ($2::bigint IS NULL OR r.id < $2::bigint)"
         " ORDER BY r.id DESC LIMIT $3::int"},
    {0},
};

static json_t *
nullable(PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

static void
on_reports(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *arr = json_array();
    for (int i = 0; i < PQntuples(res); i++) {
        json_t *ids = json_loads(PQgetvalue(res, i, 6), 0, NULL);
        json_array_append_new(
            arr,
            json_pack("{s:s, s:{s:s, s:s, s:o}, s:{s:s, s:s}, s:o, s:s, s:o, s:s, s:b, s:s,"
                      " s:b}",
                      "id", PQgetvalue(res, i, 0), "account", "id", PQgetvalue(res, i, 1), "acct",
                      PQgetvalue(res, i, 2), "uri", nullable(res, i, 3), "target_account", "id",
                      PQgetvalue(res, i, 4), "username", PQgetvalue(res, i, 5), "status_ids",
                      ids ? ids : json_array(), "comment", PQgetvalue(res, i, 7), "uri",
                      nullable(res, i, 8), "created_at", PQgetvalue(res, i, 9), "action_taken",
                      PQgetvalue(res, i, 10)[0] == 't', "category", PQgetvalue(res, i, 11),
                      "forwarded", PQgetvalue(res, i, 12)[0] == 't'));
    }
    eu_req_reply_json(req, 200, arr);
}

void
eu_admin_reports_list(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *max_id, *limit;
    if (eu_admin_list_page(req, "report", 200, &max_id, &limit) < 0)
        return;
    const char *params[] = {max_id, limit};
    eu_req_stmt(req, &eu_admin_reports_sql[REPORTS_LIST], 2, params, on_reports, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_reports_routes[] = {
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/reports", eu_admin_reports_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
