/*
 * The operator's door to a tenant's staff matters (issue 28): its roles
 * (/admin/v1/tenants/:domain/roles, the same operations as the tenant's
 * staff have through /api/v1/admin/roles, src/api/staff_roles.c) and its
 * audit log (/admin/v1/tenants/:domain/action_logs, as
 * /api/v1/admin/action_logs, src/api/staff_action_logs.c). The operator is
 * above every role, so no position or permission check applies, and its
 * changes are not in the tenant's audit log (that names a staff account;
 * the operator's own log line records them).
 */
#include "eunha/admin.h"

#include "admin_internal.h"
#include "eunha/api.h"
#include "eunha/http.h"

static void
roles_list(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_staff_roles_list(req);
}

static void
roles_create(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_staff_roles_create(req);
}

static void
roles_show(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_staff_roles_show(req);
}

static void
roles_update(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_staff_roles_update(req);
}

static void
roles_delete(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_staff_roles_delete(req);
}

static void
action_logs(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_staff_action_logs_list(req);
}

/* ------------------------------------------------------------ route table */

#define OPERATOR (EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_staff_routes[] = {
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/roles", roles_list, NULL, OPERATOR},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/roles", roles_create, NULL, OPERATOR},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/roles/:id", roles_show, NULL, OPERATOR},
    {EU_HTTP_PUT, "/admin/v1/tenants/:domain/roles/:id", roles_update, NULL, OPERATOR},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/roles/:id", roles_delete, NULL, OPERATOR},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/action_logs", action_logs, NULL, OPERATOR},
    {0},
};
