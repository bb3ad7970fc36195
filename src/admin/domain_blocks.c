/*
 * A tenant's domain blocks, set by the operator: /admin/v1/tenants/
 * {domain}/domain_blocks (list, create, show, update, delete), with the
 * fields of Mastodon's admin DomainBlock. The statements, input rules and
 * entity are the ones the tenant's staff use (src/social/domain_blocks.c);
 * here the tenant is named by the path and no audit row is written, the
 * operator being no account of the tenant.
 *
 * Also here: the delivery refusals src/ap/deliver.c records (a host that
 * answered 401/403 to the tenant, and the deliveries held back since),
 * listed and cleared by the operator.
 */
#include "eunha/admin.h"
#include "eunha/domainblock.h"
#include "eunha/error.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_internal.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

enum {
    ADMIN_DELIVERY_REFUSALS_LIST,
    ADMIN_DELIVERY_REFUSALS_DELETE,
};

const struct eu_sql eu_admin_domain_blocks_sql[] = {
    /* The refusals, the most recent first (at most $2). */
    [ADMIN_DELIVERY_REFUSALS_LIST] =
        {"admin_delivery_refusals.list",
         "SELECT r.host, r.status, r.refusals, r.skipped, eunha_ts(r.first_at),"
         " eunha_ts(r.last_at), CASE WHEN r.last_skipped_at IS NULL THEN NULL ELSE"
         " eunha_ts(r.last_skipped_at) END,"
         " CASE WHEN r.last_at > now() - eunha_refusal_hold() THEN"
         " eunha_ts(r.last_at + eunha_refusal_hold()) END"
         " FROM delivery_refusals r WHERE r.tenant_id = $1 ORDER BY r.last_at DESC"
         " LIMIT $2::int"},
    /* $2 host: deliveries there start again at once. */
    [ADMIN_DELIVERY_REFUSALS_DELETE] =
        {"admin_delivery_refusals.delete",
         "DELETE FROM delivery_refusals WHERE tenant_id = $1 AND host = $2 RETURNING host"},
    {0},
};

static json_t *
text_or_null(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* ---- GET /admin/v1/tenants/:domain/domain_blocks?max_id=&limit= ---- */

void
eu_admin_domain_blocks_list(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *max_id, *limit;
    if (eu_admin_list_page(req, "domain block", 500, &max_id, &limit) < 0)
        return;
    struct eu_page page = {.max_id = max_id, .limit = atoi(limit)};
    snprintf(page.limit_s, sizeof(page.limit_s), "%s", limit);
    eu_domain_block_list(req, &page, false);
}

/* ---- GET /admin/v1/tenants/:domain/domain_blocks/:id ---- */

void
eu_admin_domain_blocks_show(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (id)
        eu_domain_block_show(req, id);
}

/* ---- POST /admin/v1/tenants/:domain/domain_blocks ---- */

void
eu_admin_domain_blocks_create(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    json_t *body = eu_req_json_or_reply(req);
    struct eu_domain_block_input in;
    struct eu_error err = {0};
    if (!body)
        return;
    if (eu_domain_block_input_read(req, body, true, &in, &err) < 0) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    eu_domain_block_create(req, &in, NULL);
}

/* ---- PUT /admin/v1/tenants/:domain/domain_blocks/:id ---- */

void
eu_admin_domain_blocks_update(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    json_t *body = eu_req_json_or_reply(req);
    struct eu_domain_block_input in;
    struct eu_error err = {0};
    if (!body)
        return;
    if (eu_domain_block_input_read(req, body, false, &in, &err) < 0) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    eu_domain_block_update(req, id, &in, NULL);
}

/* ---- DELETE /admin/v1/tenants/:domain/domain_blocks/:id ---- */

void
eu_admin_domain_blocks_delete(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *id = eu_req_id_param(req, "id");
    if (id)
        eu_domain_block_delete(req, id, NULL);
}

/* ---- GET /admin/v1/tenants/:domain/delivery_refusals?limit= ---- */

static void
on_refusals(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *arr = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(
            arr,
            json_pack("{s:s, s:i, s:I, s:I, s:s, s:s, s:o, s:o}", "host", PQgetvalue(res, i, 0),
                      "status", atoi(PQgetvalue(res, i, 1)), "refusals",
                      (json_int_t)atoll(PQgetvalue(res, i, 2)), "skipped",
                      (json_int_t)atoll(PQgetvalue(res, i, 3)), "first_at", PQgetvalue(res, i, 4),
                      "last_at", PQgetvalue(res, i, 5), "last_skipped_at", text_or_null(res, i, 6),
                      "held_until", text_or_null(res, i, 7)));
    eu_req_reply_json(req, 200, arr);
}

void
eu_admin_delivery_refusals_list(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *max_id, *limit;
    if (eu_admin_list_page(req, "refusal", 1000, &max_id, &limit) < 0)
        return;
    const char *params[] = {limit};
    eu_req_stmt(req, &eu_admin_domain_blocks_sql[ADMIN_DELIVERY_REFUSALS_LIST], 1, params,
                on_refusals, NULL);
}

/* ---- DELETE /admin/v1/tenants/:domain/delivery_refusals/:host ---- */

static void
on_refusal_deleted(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, json_object());
}

void
eu_admin_delivery_refusals_delete(struct eu_req *req)
{
    if (!eu_admin_tenant_writable(req))
        return;
    const char *host = eu_req_param(req, "host");
    if (!host || !*host) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *params[] = {host};
    eu_req_stmt(req, &eu_admin_domain_blocks_sql[ADMIN_DELIVERY_REFUSALS_DELETE], 1, params,
                on_refusal_deleted, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_domain_blocks_routes[] = {
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/domain_blocks", eu_admin_domain_blocks_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/domain_blocks", eu_admin_domain_blocks_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/domain_blocks/:id", eu_admin_domain_blocks_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_PUT, "/admin/v1/tenants/:domain/domain_blocks/:id", eu_admin_domain_blocks_update,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/domain_blocks/:id", eu_admin_domain_blocks_delete,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/delivery_refusals", eu_admin_delivery_refusals_list,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/delivery_refusals/:host",
     eu_admin_delivery_refusals_delete, NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
