/*
 * The operator's hand on a tenant's custom emoji:
 * /admin/v1/tenants/:domain/custom_emojis (list, upload) and .../:id
 * (show, PATCH, DELETE), the same operations as the tenant's staff have
 * through /api/v1/admin/custom_emojis (src/api/custom_emojis.c, which
 * does the work once the tenant is named here).
 */
#include "eunha/admin.h"

#include "admin_internal.h"
#include "eunha/api.h"
#include "eunha/http.h"
#include "eunha/router.h"

static void
emojis_list(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_custom_emojis_list(req);
}

static void
emojis_create(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_custom_emojis_create(req);
}

static void
emojis_show(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_custom_emojis_show(req);
}

static void
emojis_update(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_custom_emojis_update(req);
}

static void
emojis_delete(struct eu_req *req)
{
    if (eu_admin_tenant_writable(req))
        eu_custom_emojis_delete(req);
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
#define OPERATOR (EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT)

const struct eu_route eu_admin_custom_emojis_routes[] = {
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/custom_emojis", emojis_list, NULL, OPERATOR},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/custom_emojis", emojis_create, NULL, OPERATOR},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/custom_emojis/:id", emojis_show, NULL, OPERATOR},
    {EU_HTTP_PATCH, "/admin/v1/tenants/:domain/custom_emojis/:id", emojis_update, NULL, OPERATOR},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/custom_emojis/:id", emojis_delete, NULL, OPERATOR},
    {0},
};
