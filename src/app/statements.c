/*
 * The statement registry's table of tables (see sql.h): every resource
 * group's statements, so a test and `eunha statements` reach them all.
 */
#include "eunha/sql.h"

#include "eunha/ap.h"
#include "eunha/apdeliver.h"
#include "eunha/apinbox.h"
#include "eunha/approcess.h"
#include "eunha/apresolve.h"
#include "eunha/cards.h"
#include "eunha/domainblock.h"
#include "eunha/mailer.h"
#include "eunha/mediaclean.h"
#include "eunha/notify.h"
#include "eunha/polls.h"
#include "eunha/push.h"
#include "eunha/trends.h"

const struct eu_sql *const eu_sql_tables[] = {
    eu_lists_sql,
    /* accounts group */
    eu_accounts_sql,
    eu_relationships_sql,
    eu_search_sql,
    eu_migration_sql,

    /* statuses group */
    eu_statuses_sql,
    eu_statuses_publish_sql,
    eu_statuses_actions_sql,
    eu_quotes_sql,
    eu_statuses_thread_sql,
    eu_status_render_sql,
    eu_timelines_sql,
    eu_feeds_sql,
    eu_conversations_sql,

    /* social group */
    eu_social_sql,
    eu_featured_sql, /* featured hashtags and endorsements */
    eu_oembed_sql,
    eu_notifications_sql,
    eu_notification_requests_sql,
    eu_notify_sql,
    eu_filters_sql,
    eu_filters_match_sql,
    eu_instance_sql,
    eu_instance_info_sql,
    eu_admin_rules_sql,
    eu_custom_emojis_sql,
    eu_admin_dashboard_sql,
    eu_admin_dimensions_sql,
    eu_admin_retention_sql,
    eu_trends_sql,
    eu_suggestions_sql,
    eu_cards_sql, /* social/cards.c: preview cards */
    eu_nodeinfo_sql,
    eu_web_sql,
    eu_web_page_sql,
    eu_web_about_sql,
    eu_web_staff_sql,
    eu_web_settings_sql,
    eu_reports_sql,
    eu_staff_accounts_sql,
    eu_staff_blocks_sql,
    eu_staff_reports_sql,
    eu_staff_roles_sql,
    eu_staff_action_logs_sql,
    eu_appeals_sql,
    eu_mailer_sql, /* social/mailer.c */

    /* oauth and timed group */
    eu_oauth_sql,
    eu_oauth_apps_sql,
    eu_oauth_token_sql,
    eu_oauth_signup_sql,
    eu_websession_sql,
    eu_otp_sql,
    eu_settings_otp_sql,
    eu_account_life_sql,
    eu_oauth_mail_sql,
    eu_notification_mail_prefs_sql,
    eu_notification_mail_sql, /* social/notification_mail.c */
    eu_takeout_sql,
    eu_takeout_import_sql,
    eu_takeout_archive_sql,
    eu_scheduled_sql,
    eu_polls_sql,       /* src/social/polls.c: REST and inbox votes alike */
    eu_trends_task_sql, /* src/social/trends_task.c */
    eu_auth_sql,
    eu_admin_accounts_sql,
    eu_admin_jobs_sql,
    eu_admin_tenants_sql,
    eu_admin_reports_sql,
    eu_announcements_sql,       /* api/announcements.c */
    eu_admin_announcements_sql, /* admin/announcements.c */
    eu_admin_instance_sql,      /* api/admin_instance.c */

    /* queue group */
    eu_queue_sql,
    eu_queue_job_sql,
    eu_queue_accounts_sql,
    eu_queue_ping_sql,

    /* ActivityPub (src/ap/) */
    eu_ingest_sql,
    eu_ap_account_keys_sql,
    eu_media_sql, /* api/media.c */
    eu_emoji_fetch_sql,
    eu_ap_actors_sql,
    eu_ap_objects_sql,
    eu_ap_collections_sql,
    eu_ap_note_collections_sql,
    eu_ap_followers_sync_sql,
    eu_ap_instance_actor_sql,
    /* inbox processing */
    eu_ap_process_sql,
    eu_ap_process_follow_sql,
    eu_ap_process_status_sql,
    eu_ap_quotes_sql,
    eu_ap_process_poll_sql,     /* a local poll's Update */
    eu_ap_process_featured_sql, /* a remote actor's featured hashtags */
    eu_ap_delete_actor_sql,     /* a local actor's Delete */
    eu_ap_deliver_sql,          /* delivery */
    eu_ap_outbox_sql,
    eu_ap_quotes_outbox_sql,
    eu_ap_resolve_sql,    /* src/ap/resolve.c */
    eu_ap_inbox_sql,      /* src/ap/inbox.c */
    eu_stream_sql,        /* src/social/stream_events.c */
    eu_stream_render_sql, /* src/api/stream_render.c: render once, send many */

    /* domain blocks: an account's and the tenant's (include/eunha/domainblock.h) */
    eu_domain_blocks_sql,
    eu_tenant_domain_blocks_sql,
    eu_admin_domain_blocks_sql,
    eu_ap_domain_policy_sql,

    /* media attached where used, and removed when not (src/media/cleanup.c) */
    eu_media_cleanup_sql,

    /* Web Push: subscriptions and their deliveries (include/eunha/push.h) */
    eu_push_sql,
    eu_push_deliver_sql,

    NULL,
};
