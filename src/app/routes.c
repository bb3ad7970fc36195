/*
 * The list of the process's route tables, assembled once at start into the
 * one router (as src/http/statements.c lists the statement tables). Each
 * table lives at the end of the file whose handlers it routes, so a route is
 * read beside its handler; flags are documented in include/eunha/router.h.
 * The admin listener serves only EU_ROUTE_ADMIN and EU_ROUTE_ADMIN_OPEN
 * routes; the public listener serves only the others.
 */
#include "eunha/routes.h"

#include "eunha/admin.h"
#include "eunha/ap.h"
#include "eunha/api.h"
#include "eunha/apinbox.h"
#include "eunha/http.h"
#include "eunha/mediaapi.h"
#include "eunha/push.h"
#include "eunha/streaming.h"

const struct eu_route *const eu_route_tables[] = {
    /* admin listener (src/admin/) */
    eu_admin_health_routes,
    eu_admin_tenants_routes,
    eu_admin_placements_routes,
    eu_admin_lifecycle_archive_routes,
    eu_admin_lifecycle_move_routes,
    eu_admin_accounts_routes,
    eu_admin_jobs_routes,
    eu_admin_reports_routes,
    eu_admin_announcements_routes,
    eu_admin_domain_blocks_routes,
    eu_admin_instance_routes,
    eu_admin_custom_emojis_routes,
    eu_admin_staff_routes,

    /* public listener: discovery and the instance */
    eu_nodeinfo_routes,
    eu_instance_routes,
    eu_instance_info_routes,
    eu_admin_rules_routes,
    eu_admin_instance_staff_routes,
    eu_custom_emojis_routes, /* the picker's list and the staff's */
    eu_admin_dashboard_routes,
    eu_trends_routes,
    eu_suggestions_routes,
    eu_cards_routes, /* a status's preview card */

    /* Mastodon's REST API and the web pages (src/api/) */
    eu_oauth_routes,
    eu_oauth_apps_routes,
    eu_oauth_token_routes,
    eu_oauth_signup_routes,
    eu_settings_otp_routes,
    eu_account_life_routes,
    eu_oauth_mail_routes,
    eu_notification_mail_prefs_routes,
    eu_web_page_routes,
    eu_web_about_routes,
    eu_web_staff_routes,        /* the staff's moderation pages */
    eu_web_staff_blocks_routes, /* ... and its domain blocks page */
    eu_web_settings_routes,
    eu_web_routes,
    eu_accounts_routes,
    eu_relationships_routes,
    eu_lists_routes,
    eu_domain_blocks_routes,
    eu_migration_routes,
    eu_statuses_routes,
    eu_statuses_actions_routes,
    eu_quotes_routes,
    eu_statuses_thread_routes,
    eu_timelines_routes,
    eu_social_routes,
    eu_featured_routes, /* featured hashtags and endorsements */
    eu_oembed_routes,
    eu_notifications_routes,
    eu_notification_requests_routes,
    eu_conversations_routes,
    eu_filters_routes,
    eu_search_routes,
    eu_reports_routes,
    eu_staff_accounts_routes, /* the tenant staff's admin API */
    eu_staff_reports_routes,
    eu_staff_roles_routes,
    eu_staff_action_logs_routes,
    eu_appeals_routes,
    eu_takeout_routes, /* the settings pages' exports and imports */
    eu_takeout_archive_routes,
    eu_staff_blocks_routes,
    eu_scheduled_routes,
    eu_polls_routes,
    eu_media_routes,
    eu_announcements_routes,
    eu_push_routes,        /* src/api/push.c: Web Push subscriptions */
    eu_media_serve_routes, /* src/media/serve.c: the local /system/ files */
    eu_stream_routes,      /* src/http/streaming.c: WebSocket and SSE */

    /* ActivityPub (src/ap/) */
    eu_ap_webfinger_routes,
    eu_ap_instance_actor_routes,
    eu_ap_collections_routes,
    eu_ap_objects_routes,
    eu_ap_quotes_routes,
    eu_ap_note_collections_routes,
    eu_ap_followers_sync_routes,
    eu_ap_inbox_routes,

    /* paths no route takes: the CORS areas (src/http/server.c) */
    eu_http_areas,
    NULL,
};

struct eu_router *
eu_routes_router_new(char *err, size_t errlen)
{
    struct eu_router *r = eu_router_new(NULL, 0, err, errlen);
    for (size_t i = 0; r && eu_route_tables[i]; i++) {
        size_t n = 0;
        while (eu_route_tables[i][n].pattern)
            n++;
        if (eu_router_add(r, eu_route_tables[i], n, err, errlen) < 0) {
            eu_router_free(r);
            r = NULL;
        }
    }
    return r;
}
