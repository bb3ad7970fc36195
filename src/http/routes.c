/*
 * Every route the process serves, as data. Flags are documented in
 * include/eunha/router.h. The admin listener serves only EU_ROUTE_ADMIN and
 * EU_ROUTE_ADMIN_OPEN routes; the public listener serves only the others.
 */
#include "eunha/routes.h"

#include "eunha/admin.h"
#include "eunha/ap.h"
#include "eunha/api.h"
#include "eunha/apinbox.h"
#include "eunha/domainblock.h"

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST
#define PATCH EU_HTTP_PATCH
#define DELETE EU_HTTP_DELETE

const struct eu_route eu_routes[] = {
    /* admin listener */
    {GET, "/healthz", eu_admin_health, NULL, EU_ROUTE_ADMIN_OPEN | EU_ROUTE_NO_TENANT},
    {GET, "/metrics", eu_admin_metrics, NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants", eu_admin_tenants_create, NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {GET, "/admin/v1/tenants", eu_admin_tenants_list, NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {GET, "/admin/v1/tenants/:domain", eu_admin_tenants_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {PATCH, "/admin/v1/tenants/:domain", eu_admin_tenants_update, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {DELETE, "/admin/v1/tenants/:domain", eu_admin_tenants_delete, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/import", eu_admin_tenants_import, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/:domain/export", eu_admin_tenants_export, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/:domain/move", eu_admin_tenants_move, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/:domain/accounts", eu_admin_accounts_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/:domain/accounts/:id/suspend", eu_admin_accounts_suspend, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/:domain/accounts/:id/unsuspend", eu_admin_accounts_unsuspend, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {GET, "/admin/v1/tenants/:domain/jobs", eu_admin_jobs_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/:domain/jobs", eu_admin_jobs_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {GET, "/admin/v1/tenants/:domain/jobs/:id", eu_admin_jobs_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {DELETE, "/admin/v1/tenants/:domain/jobs/:id", eu_admin_jobs_delete, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/:domain/jobs/:id/retry", eu_admin_jobs_retry, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {GET, "/admin/v1/tenants/:domain/reports", eu_admin_reports_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    /* src/admin/announcements.c */
    {GET, "/admin/v1/tenants/:domain/announcements", eu_admin_announcements_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/:domain/announcements", eu_admin_announcements_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {GET, "/admin/v1/tenants/:domain/announcements/:id", eu_admin_announcements_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {PATCH, "/admin/v1/tenants/:domain/announcements/:id", eu_admin_announcements_update, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {DELETE, "/admin/v1/tenants/:domain/announcements/:id", eu_admin_announcements_delete, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    /* src/admin/domain_blocks.c: the tenant's domain blocks, delivery refusals */
    {GET, "/admin/v1/tenants/:domain/domain_blocks", eu_admin_domain_blocks_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {POST, "/admin/v1/tenants/:domain/domain_blocks", eu_admin_domain_blocks_create, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {GET, "/admin/v1/tenants/:domain/domain_blocks/:id", eu_admin_domain_blocks_show, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {DELETE, "/admin/v1/tenants/:domain/domain_blocks/:id", eu_admin_domain_blocks_delete, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {GET, "/admin/v1/tenants/:domain/delivery_refusals", eu_admin_delivery_refusals_list, NULL,
     EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {DELETE, "/admin/v1/tenants/:domain/delivery_refusals/:host", eu_admin_delivery_refusals_delete,
     NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},

    /* public listener: discovery */
    {GET, "/.well-known/nodeinfo", eu_api_nodeinfo_links, NULL, EU_ROUTE_CORS},
    {GET, "/.well-known/host-meta", eu_api_host_meta, NULL, EU_ROUTE_CORS},
    {GET, "/nodeinfo/2.0", eu_api_nodeinfo, NULL, EU_ROUTE_CORS},
    {GET, "/nodeinfo/2.1", eu_api_nodeinfo_2_1, NULL, EU_ROUTE_CORS},

    /* public listener: Mastodon REST */
    {GET, "/api/v1/instance", eu_api_instance_v1, NULL, EU_ROUTE_CORS},
    {GET, "/api/v2/instance", eu_api_instance_v2, NULL, EU_ROUTE_CORS},
};

const size_t eu_routes_count = sizeof(eu_routes) / sizeof(eu_routes[0]);

const struct eu_route *const eu_route_tables[] = {
    eu_oauth_routes,
    eu_accounts_routes,
    eu_statuses_routes,
    eu_social_routes,
    eu_timed_routes,
    eu_ap_routes,            /* src/ap/actors.c: WebFinger and the ActivityPub documents */
    eu_ap_inbox_routes,      /* src/ap/inbox.c: the inboxes */
    eu_media_routes,         /* src/api/media.c: uploads and the local /system/ files */
    eu_stream_routes,        /* src/http/streaming.c: WebSocket and SSE */
    eu_announcements_routes, /* src/api/announcements.c */
    NULL,
};
