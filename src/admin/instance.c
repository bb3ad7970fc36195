/*
 * The operator's hand on a tenant's public description
 * (docs/instance.md): /admin/v1/tenants/:domain/instance (GET, PATCH the
 * texts and switches; PUT or DELETE .../instance/thumbnail), .../rules and
 * .../terms_of_service. The tenant's staff do the same through
 * /api/v1/admin/...; both go through src/api/admin_instance.c and
 * src/api/admin_rules.c once the caller is allowed, here by naming a
 * tenant the operator may write.
 */
#include "eunha/admin.h"

#include "admin_internal.h"
#include "eunha/api.h"
#include "eunha/http.h"
#include "eunha/router.h"

/* Runs then for the tenant the path names, if the operator may write it
 * (answers 404 or 409 itself otherwise). */
static void
for_tenant(struct eu_req *req, void (*then)(struct eu_req *req))
{
    if (eu_admin_tenant_writable(req))
        then(req);
}

static void
instance_show(struct eu_req *req)
{
    for_tenant(req, eu_instance_settings_show);
}

static void
instance_update(struct eu_req *req)
{
    for_tenant(req, eu_instance_settings_update);
}

static void
thumbnail_put(struct eu_req *req)
{
    for_tenant(req, eu_instance_thumbnail_put);
}

static void
thumbnail_delete(struct eu_req *req)
{
    for_tenant(req, eu_instance_thumbnail_delete);
}

static void
rules_list(struct eu_req *req)
{
    for_tenant(req, eu_instance_rules_list);
}

static void
rules_create(struct eu_req *req)
{
    for_tenant(req, eu_instance_rules_create);
}

static void
rules_show(struct eu_req *req)
{
    for_tenant(req, eu_instance_rules_show);
}

static void
rules_update(struct eu_req *req)
{
    for_tenant(req, eu_instance_rules_update);
}

static void
rules_delete(struct eu_req *req)
{
    for_tenant(req, eu_instance_rules_delete);
}

static void
terms_list(struct eu_req *req)
{
    for_tenant(req, eu_instance_terms_list);
}

static void
terms_create(struct eu_req *req)
{
    for_tenant(req, eu_instance_terms_create);
}

static void
terms_delete(struct eu_req *req)
{
    for_tenant(req, eu_instance_terms_delete);
}

/* ------------------------------------------------------------ route table */

#define OPERATOR (EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT)

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_instance_routes[] = {
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/instance", instance_show, NULL, OPERATOR},
    {EU_HTTP_PATCH, "/admin/v1/tenants/:domain/instance", instance_update, NULL, OPERATOR},
    /* A thumbnail is a file: the upload body limit. */
    {EU_HTTP_PUT, "/admin/v1/tenants/:domain/instance/thumbnail", thumbnail_put, NULL,
     OPERATOR | EU_ROUTE_UPLOAD},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/instance/thumbnail", thumbnail_delete, NULL,
     OPERATOR},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/rules", rules_list, NULL, OPERATOR},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/rules", rules_create, NULL, OPERATOR},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/rules/:id", rules_show, NULL, OPERATOR},
    {EU_HTTP_PATCH, "/admin/v1/tenants/:domain/rules/:id", rules_update, NULL, OPERATOR},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/rules/:id", rules_delete, NULL, OPERATOR},
    {EU_HTTP_GET, "/admin/v1/tenants/:domain/terms_of_service", terms_list, NULL, OPERATOR},
    {EU_HTTP_POST, "/admin/v1/tenants/:domain/terms_of_service", terms_create, NULL, OPERATOR},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain/terms_of_service/:date", terms_delete, NULL,
     OPERATOR},
    {0},
};
