/*
 * The statement registry. Every statement a tenant's requests, jobs and
 * timed tasks run is a named entry of one table per resource group, kept
 * beside the handlers that run it (lists.c's eu_lists_sql[], ...), and
 * eu_sql_tables lists the tables. So one place knows every statement:
 * `eunha statements [name]` prints any of them as text to paste into psql
 * for EXPLAIN, and test_statements checks each one has a tenant predicate
 * for every tenant table it touches (sqlcheck.c) and that PostgreSQL
 * prepares it against the placement schema.
 *
 * In every statement $1 is the tenant id: the tenant's pool sends it.
 */
#ifndef EUNHA_SQL_H
#define EUNHA_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_page;

struct eu_sql {
    const char *name; /* "group.what", unique in the process */
    const char *text;
    /*
     * A paged statement (eu_req_sql_page()) leaves its ORDER BY and LIMIT
     * to the registry: text ends where the page's conditions are appended
     * (after a WHERE clause), page_col is the id column it pages on, and
     * page_param the number of the first of the page's four parameters:
     * $n max_id, $n+1 since_id, $n+2 min_id, $n+3 limit. The conditions and
     * the direction are chosen by the page rather than in SQL, so each
     * variant's plan walks an index with the bounds it has.
     */
    const char *page_col;
    int page_param;
    /*
     * Runs on a placement's own pool across its tenants (the queue's
     * claimer and safety poll), naming tenants itself: $1 is not the
     * tenant, and the tenant-predicate check does not apply.
     */
    bool cross_tenant;
};

/* Each group's table ends with an all-zero entry. */
extern const struct eu_sql eu_lists_sql[]; /* lists.c */
/* accounts.c, relationships.c, search.c */
extern const struct eu_sql eu_accounts_sql[];
extern const struct eu_sql eu_relationships_sql[];
extern const struct eu_sql eu_search_sql[];
extern const struct eu_sql eu_migration_sql[]; /* migration.c */

/* statuses.c, status_render.c, timelines.c, feeds.c, conversations.c */
extern const struct eu_sql eu_statuses_sql[];         /* statuses.c */
extern const struct eu_sql eu_statuses_publish_sql[]; /* statuses_publish.c */
extern const struct eu_sql eu_statuses_actions_sql[]; /* statuses_actions.c */
extern const struct eu_sql eu_quotes_sql[];           /* quotes.c */
extern const struct eu_sql eu_statuses_thread_sql[];  /* statuses_thread.c */
extern const struct eu_sql eu_status_render_sql[];    /* status_render.c */
extern const struct eu_sql eu_timelines_sql[];        /* timelines.c */
extern const struct eu_sql eu_feeds_sql[];            /* feeds.c */
extern const struct eu_sql eu_stream_sql[];           /* stream_events.c */
extern const struct eu_sql eu_stream_render_sql[];    /* src/api/stream_render.c */
extern const struct eu_sql eu_conversations_sql[];    /* conversations.c */

/* social.c, notifications.c, notify.c, filters.c, instance.c, nodeinfo.c, web.c,
 * reports.c */
extern const struct eu_sql eu_social_sql[];        /* social.c */
extern const struct eu_sql eu_featured_sql[];      /* featured.c */
extern const struct eu_sql eu_oembed_sql[];        /* oembed.c */
extern const struct eu_sql eu_notifications_sql[]; /* notifications.c */

/* notification_requests.c */
extern const struct eu_sql eu_notification_requests_sql[];

extern const struct eu_sql eu_notify_sql[];           /* notify.c */
extern const struct eu_sql eu_filters_sql[];          /* filters.c */
extern const struct eu_sql eu_filters_match_sql[];    /* filters_match.c */
extern const struct eu_sql eu_instance_sql[];         /* instance.c */
extern const struct eu_sql eu_instance_info_sql[];    /* instance_info.c */
extern const struct eu_sql eu_admin_rules_sql[];      /* admin_rules.c */
extern const struct eu_sql eu_custom_emojis_sql[];    /* custom_emojis.c */
extern const struct eu_sql eu_nodeinfo_sql[];         /* nodeinfo.c */
extern const struct eu_sql eu_web_sql[];              /* web.c */
extern const struct eu_sql eu_web_page_sql[];         /* web_page.c */
extern const struct eu_sql eu_web_about_sql[];        /* web_about.c */
extern const struct eu_sql eu_web_staff_sql[];        /* web_staff.c */
extern const struct eu_sql eu_web_settings_sql[];     /* web_settings.c */
extern const struct eu_sql eu_reports_sql[];          /* reports.c */
extern const struct eu_sql eu_staff_accounts_sql[];   /* staff_accounts.c */
extern const struct eu_sql eu_staff_reports_sql[];    /* staff_reports.c */
extern const struct eu_sql eu_admin_dashboard_sql[];  /* admin_dashboard.c */
extern const struct eu_sql eu_admin_dimensions_sql[]; /* admin_dashboard.c */
extern const struct eu_sql eu_admin_retention_sql[];  /* admin_dashboard.c */
extern const struct eu_sql eu_trends_sql[];           /* trends.c */
extern const struct eu_sql eu_suggestions_sql[];      /* suggestions.c */
/* staff_roles.c, staff_action_logs.c, appeals.c */
extern const struct eu_sql eu_staff_roles_sql[];
extern const struct eu_sql eu_staff_action_logs_sql[];
extern const struct eu_sql eu_appeals_sql[];
extern const struct eu_sql eu_staff_blocks_sql[]; /* staff_blocks.c */

/* oauth.c, scheduled.c, http/auth.c, admin/ (polls: eunha/polls.h) */
extern const struct eu_sql eu_oauth_sql[];                   /* oauth.c */
extern const struct eu_sql eu_oauth_apps_sql[];              /* oauth_apps.c */
extern const struct eu_sql eu_oauth_token_sql[];             /* oauth_token.c */
extern const struct eu_sql eu_oauth_signup_sql[];            /* oauth_signup.c */
extern const struct eu_sql eu_websession_sql[];              /* websession.c */
extern const struct eu_sql eu_takeout_sql[];                 /* takeout.c */
extern const struct eu_sql eu_takeout_import_sql[];          /* takeout_import.c */
extern const struct eu_sql eu_takeout_archive_sql[];         /* takeout_archive.c */
extern const struct eu_sql eu_otp_sql[];                     /* otp.c */
extern const struct eu_sql eu_settings_otp_sql[];            /* settings_otp.c */
extern const struct eu_sql eu_account_life_sql[];            /* account_life.c */
extern const struct eu_sql eu_oauth_mail_sql[];              /* oauth_mail.c */
extern const struct eu_sql eu_notification_mail_prefs_sql[]; /* notification_mail_prefs.c */
extern const struct eu_sql eu_notification_mail_sql[];       /* social/notification_mail.c */
extern const struct eu_sql eu_scheduled_sql[];               /* scheduled.c */
extern const struct eu_sql eu_auth_sql[];                    /* http/auth.c */
extern const struct eu_sql eu_admin_accounts_sql[];          /* admin/accounts.c */
extern const struct eu_sql eu_admin_jobs_sql[];              /* admin/jobs.c */
extern const struct eu_sql eu_admin_tenants_sql[];           /* admin/tenants.c */
extern const struct eu_sql eu_admin_reports_sql[];           /* admin/reports.c */
/* api/announcements.c, admin/announcements.c */
extern const struct eu_sql eu_announcements_sql[];
extern const struct eu_sql eu_admin_announcements_sql[];
extern const struct eu_sql eu_admin_instance_sql[]; /* api/admin_instance.c */

/* queue/ */
extern const struct eu_sql eu_queue_sql[];     /* queue/queue.c: claims, inserts, the poll */
extern const struct eu_sql eu_queue_job_sql[]; /* queue/job.c: a held job's end and lock */
extern const struct eu_sql eu_queue_accounts_sql[];
extern const struct eu_sql eu_queue_ping_sql[];

/* ap/ */
extern const struct eu_sql eu_ingest_sql[];          /* ap/ingest_store.c */
extern const struct eu_sql eu_ap_account_keys_sql[]; /* ap/account_keys.c */

/* media/: api/media.c (uploads, the media_process job) */
extern const struct eu_sql eu_media_sql[];
extern const struct eu_sql eu_emoji_fetch_sql[]; /* media/emoji_fetch.c */

/* The tables above, NULL-terminated (src/app/statements.c). */
extern const struct eu_sql *const eu_sql_tables[];

/* Statements on the control database (tenants, placements), not a
 * placement's: they name no tenant and are not in eu_sql_tables. Ends with
 * an all-zero entry (admin/tenants.c). */
extern const struct eu_sql eu_admin_control_sql[];
/* The same for a move's (admin/lifecycle_move.c) and the placements API's
 * (admin/placements.c). */
extern const struct eu_sql eu_admin_move_control_sql[];
extern const struct eu_sql eu_admin_placements_sql[];

/* Which bounds a page has, for a paged statement's variant (see
 * eu_sql_text()); min_id pages run oldest first. */
#define EU_SQL_PAGE_MAX 1u
#define EU_SQL_PAGE_SINCE 2u
#define EU_SQL_PAGE_MIN 4u
#define EU_SQL_PAGE_VARIANTS 8u

/*
 * The text to send for s: s->text itself, or for a paged statement its
 * text with the conditions of a page that has the bounds in variant
 * (EU_SQL_PAGE_* bits) and its ORDER BY, newest first unless min_id is
 * among them. The composed texts are built once on first use and live
 * until eu_sql_free(). Loop thread only.
 */
const char *eu_sql_text(const struct eu_sql *s, unsigned variant);

/* eu_sql_text(), with the text's eu_db_sql_hash(), computed once per text. */
const char *eu_sql_text_hashed(const struct eu_sql *s, unsigned variant, uint64_t *hash);

/* The registered statement called name, or NULL. */
const struct eu_sql *eu_sql_find(const char *name);

/* Frees the composed texts of paged statements (at exit). */
void eu_sql_free(void);

/*
 * What a move carries besides follows, as Mastodon's MoveWorker: CTEs
 * (after others, before the final SELECT) of a statement with $1 the
 * tenant, $2 the old account and $3 the new one. Local accounts blocking
 * the old account block the new one (ob, nb; follows, requests and list
 * places between them end: bf, br, bl); those muting it mute the new one
 * for good with the same hide_notifications (nm); neither where they
 * already do or follow it. nb and nm return the accounts that gained a
 * block or a mute. One text for a Move received (ap_process.move) and a
 * local account moving away (migration.local_followers).
 */
#define EU_MOVE_CARRY_SQL                                                                          \
    /* Not followers: a blocker of the old account follows neither. */                             \
    " ob AS (SELECT b.account_id FROM blocks b JOIN accounts la ON la.tenant_id = $1"              \
    "  AND la.id = b.account_id AND la.domain IS NULL WHERE b.tenant_id = $1"                      \
    "  AND b.target_account_id = $2::bigint AND b.account_id <> $3::bigint"                        \
    "  AND NOT EXISTS (SELECT 1 FROM blocks x WHERE x.tenant_id = $1"                              \
    "  AND x.account_id = b.account_id AND x.target_account_id = $3::bigint)"                      \
    "  AND NOT EXISTS (SELECT 1 FROM follows x WHERE x.tenant_id = $1"                             \
    "  AND x.account_id = b.account_id AND x.target_account_id = $3::bigint)),"                    \
    " nb AS (INSERT INTO blocks (tenant_id, account_id, target_account_id)"                        \
    "  SELECT $1, account_id, $3::bigint FROM ob ON CONFLICT DO NOTHING"                           \
    "  RETURNING account_id),"                                                                     \
    " bf AS (DELETE FROM follows WHERE tenant_id = $1 AND account_id = $3::bigint"                 \
    "  AND target_account_id IN (SELECT account_id FROM ob)),"                                     \
    " br AS (DELETE FROM follow_requests WHERE tenant_id = $1"                                     \
    "  AND ((account_id = $3::bigint AND target_account_id IN (SELECT account_id FROM ob))"        \
    "  OR (target_account_id = $3::bigint AND account_id IN (SELECT account_id FROM ob)))),"       \
    " bl AS (DELETE FROM list_accounts m USING lists l WHERE m.tenant_id = $1"                     \
    "  AND l.tenant_id = $1 AND l.id = m.list_id AND ((l.account_id = $3::bigint"                  \
    "  AND m.account_id IN (SELECT account_id FROM ob)) OR (m.account_id = $3::bigint"             \
    "  AND l.account_id IN (SELECT account_id FROM ob)))),"                                        \
    " nm AS (INSERT INTO mutes (tenant_id, account_id, target_account_id,"                         \
    "  hide_notifications) SELECT $1, m.account_id, $3::bigint, m.hide_notifications"              \
    "  FROM mutes m JOIN accounts la ON la.tenant_id = $1 AND la.id = m.account_id"                \
    "  AND la.domain IS NULL WHERE m.tenant_id = $1 AND m.target_account_id = $2::bigint"          \
    "  AND m.account_id <> $3::bigint AND (m.expires_at IS NULL OR m.expires_at > now())"          \
    "  AND NOT EXISTS (SELECT 1 FROM follows x WHERE x.tenant_id = $1"                             \
    "  AND x.account_id = m.account_id AND x.target_account_id = $3::bigint)"                      \
    "  ON CONFLICT (tenant_id, account_id, target_account_id) DO NOTHING"                          \
    "  RETURNING account_id)"

#endif
