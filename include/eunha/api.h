/*
 * Handlers of the public listener (src/api/): Mastodon's REST API, the
 * discovery documents and the public web pages. Each finishes its request.
 */
#ifndef EUNHA_API_H
#define EUNHA_API_H

#include "eunha/router.h"
#include "eunha/streaming.h"
struct eu_task_run;

struct eu_req;

/* The route tables of src/api/, one per handler file, each ending with {0};
 * src/app/routes.c lists them. */
extern const struct eu_route eu_accounts_routes[];                /* accounts.c */
extern const struct eu_route eu_admin_dashboard_routes[];         /* admin_dashboard.c */
extern const struct eu_route eu_trends_routes[];                  /* trends.c */
extern const struct eu_route eu_suggestions_routes[];             /* suggestions.c */
extern const struct eu_route eu_cards_routes[];                   /* cards.c */
extern const struct eu_route eu_admin_rules_routes[];             /* admin_rules.c */
extern const struct eu_route eu_admin_instance_staff_routes[];    /* admin_instance.c */
extern const struct eu_route eu_announcements_routes[];           /* announcements.c */
extern const struct eu_route eu_conversations_routes[];           /* conversations.c */
extern const struct eu_route eu_custom_emojis_routes[];           /* custom_emojis.c */
extern const struct eu_route eu_domain_blocks_routes[];           /* domain_blocks.c */
extern const struct eu_route eu_filters_routes[];                 /* filters.c */
extern const struct eu_route eu_instance_routes[];                /* instance.c */
extern const struct eu_route eu_instance_info_routes[];           /* instance_info.c */
extern const struct eu_route eu_lists_routes[];                   /* lists.c */
extern const struct eu_route eu_media_routes[];                   /* media.c */
extern const struct eu_route eu_migration_routes[];               /* migration.c */
extern const struct eu_route eu_nodeinfo_routes[];                /* nodeinfo.c */
extern const struct eu_route eu_notifications_routes[];           /* notifications.c */
extern const struct eu_route eu_oauth_routes[];                   /* oauth.c */
extern const struct eu_route eu_settings_otp_routes[];            /* settings_otp.c */
extern const struct eu_route eu_account_life_routes[];            /* account_life.c */
extern const struct eu_route eu_oauth_apps_routes[];              /* oauth_apps.c */
extern const struct eu_route eu_oauth_token_routes[];             /* oauth_token.c */
extern const struct eu_route eu_oauth_signup_routes[];            /* oauth_signup.c */
extern const struct eu_route eu_oauth_mail_routes[];              /* oauth_mail.c */
extern const struct eu_route eu_notification_mail_prefs_routes[]; /* notification_mail_prefs.c */
extern const struct eu_route eu_polls_routes[];                   /* polls.c */
extern const struct eu_route eu_relationships_routes[];           /* relationships.c */
extern const struct eu_route eu_reports_routes[];                 /* reports.c */
extern const struct eu_route eu_scheduled_routes[];               /* scheduled.c */
extern const struct eu_route eu_search_routes[];                  /* search.c */
extern const struct eu_route eu_social_routes[];                  /* social.c */
extern const struct eu_route eu_featured_routes[];                /* featured.c */
extern const struct eu_route eu_oembed_routes[];                  /* oembed.c */
extern const struct eu_route eu_staff_accounts_routes[];          /* staff_accounts.c */
extern const struct eu_route eu_staff_reports_routes[];           /* staff_reports.c */
extern const struct eu_route eu_staff_blocks_routes[];            /* staff_blocks.c */
extern const struct eu_route eu_statuses_routes[];                /* statuses.c */
extern const struct eu_route eu_statuses_actions_routes[];        /* statuses_actions.c */
extern const struct eu_route eu_quotes_routes[];                  /* quotes.c */
extern const struct eu_route eu_statuses_thread_routes[];         /* statuses_thread.c */
extern const struct eu_route eu_timelines_routes[];               /* timelines.c */
extern const struct eu_route eu_web_routes[];                     /* web.c */
extern const struct eu_route eu_web_page_routes[];                /* web_page.c */
extern const struct eu_route eu_web_about_routes[];               /* web_about.c */
extern const struct eu_route eu_web_staff_routes[];               /* web_staff.c */
extern const struct eu_route eu_web_staff_blocks_routes[];        /* web_staff_blocks.c */
extern const struct eu_route eu_web_settings_routes[];            /* web_settings.c */
/* notification_requests.c: the notification policy and requests */
extern const struct eu_route eu_notification_requests_routes[];
/* the tenant staff's roles, audit log and appeals (staff_roles.c,
 * staff_action_logs.c, appeals.c) */
extern const struct eu_route eu_staff_roles_routes[];
extern const struct eu_route eu_staff_action_logs_routes[];
extern const struct eu_route eu_appeals_routes[];
/* the settings pages that export and import a user's data (takeout.c) */
extern const struct eu_route eu_takeout_routes[];
/* The "bulk_import" job's handler (takeout_import.c), for src/app/kinds.c. */
struct eu_job;
void eu_takeout_import_run(struct eu_job *job);
/* A user's archive (takeout_archive.c): its routes, the job that builds it
 * and the one that removes it after 7 days. */
extern const struct eu_route eu_takeout_archive_routes[];
void eu_takeout_archive_run(struct eu_job *job);
void eu_takeout_archive_remove_run(struct eu_job *job);

/*
 * The instance's rules for req->tenant, once the caller has decided who may
 * (the operator's API names the tenant; /api/v1/admin/rules asks the
 * staff's permission): list, show :id, create and update from the
 * parameters text, hint and priority, delete :id. Each finishes req.
 * (admin_rules.c)
 */
void eu_instance_rules_list(struct eu_req *req);
void eu_instance_rules_show(struct eu_req *req);
void eu_instance_rules_create(struct eu_req *req);
void eu_instance_rules_update(struct eu_req *req);
void eu_instance_rules_delete(struct eu_req *req);

/*
 * The instance's description for req->tenant, once the caller has decided
 * who may (the operator's API names the tenant; /api/v1/admin/instance
 * asks the staff's manage_settings): show and update the settings row
 * (docs/instance.md lists its members), put (a multipart "file") and
 * delete the thumbnail, list, create and delete :date the dated terms of
 * service. Each finishes req; a staff change writes its audit row.
 * (admin_instance.c)
 */
void eu_instance_settings_show(struct eu_req *req);
void eu_instance_settings_update(struct eu_req *req);
void eu_instance_thumbnail_put(struct eu_req *req);
void eu_instance_thumbnail_delete(struct eu_req *req);
void eu_instance_terms_list(struct eu_req *req);
void eu_instance_terms_create(struct eu_req *req);
void eu_instance_terms_delete(struct eu_req *req);

/*
 * The tenant's custom emoji for req->tenant, once the caller has decided
 * who may (the operator's API names the tenant; /api/v1/admin/custom_emojis
 * asks the staff's manage_custom_emojis): list (local, remote, by_domain,
 * limit, max_id), show :id, create (multipart: shortcode, image, category,
 * visible_in_picker), update :id (disabled, visible_in_picker, category),
 * delete :id. Each finishes req and writes its audit row as
 * req->auth.account_id (0 for the operator). (custom_emojis.c)
 */
void eu_custom_emojis_list(struct eu_req *req);
void eu_custom_emojis_show(struct eu_req *req);
void eu_custom_emojis_create(struct eu_req *req);
void eu_custom_emojis_update(struct eu_req *req);
void eu_custom_emojis_delete(struct eu_req *req);

/*
 * The tenant's roles for req->tenant (staff_roles.c), once the caller has
 * decided who may: list, show :id, create and update from the parameters
 * name, color, position, permissions and highlighted, delete :id. A
 * request with a signed-in user is held to that user's role (Mastodon's
 * UserRole checks) and audited; one without (the operator's) is not. Each
 * finishes req.
 */
void eu_staff_roles_list(struct eu_req *req);
void eu_staff_roles_show(struct eu_req *req);
void eu_staff_roles_create(struct eu_req *req);
void eu_staff_roles_update(struct eu_req *req);
void eu_staff_roles_delete(struct eu_req *req);
/* The tenant's audit log, a page of it (staff_action_logs.c); finishes req. */
void eu_staff_action_logs_list(struct eu_req *req);

void eu_api_instance_v1(struct eu_req *req);
void eu_api_instance_v2(struct eu_req *req);
void eu_api_nodeinfo_links(struct eu_req *req);
void eu_api_nodeinfo(struct eu_req *req);
void eu_api_nodeinfo_2_1(struct eu_req *req);
void eu_api_host_meta(struct eu_req *req);

/*
 * The streaming hub's renderer (an eu_stream_render_cb, handed to
 * eu_stream_start() by the wiring; src/api/stream_render.c): what event
 * about id means on stream for v, through the REST handler of the
 * matching timeline on a detached request, so a listener gets exactly what
 * a REST page would hold for that viewer. cb runs exactly once.
 */
void eu_stream_render(struct eu_app *app, struct eu_tenant *t, const struct eu_stream_viewer *v,
                      const char *stream, const char *param, const char *event, const char *id,
                      eu_stream_rendered_cb cb, void *arg);

/*
 * What the wiring hands eu_stream_start() (src/api/stream_render.c):
 * eu_stream_render() for one listener, and the render shared by every
 * listener of a new status with the viewer states it is spliced for (see
 * struct eu_stream_ops).
 */
extern const struct eu_stream_ops eu_stream_ops;
void eu_stream_shared_render(struct eu_app *app, struct eu_tenant *t, const char *id,
                             const struct eu_stream_audience *aud, eu_stream_shared_cb cb,
                             void *arg);
int eu_stream_shared_payload(const struct eu_stream_shared *sh, struct eu_stream_vstate *vs,
                             int64_t account_id, const char *stream, const char *param,
                             bool escaped, char **out, size_t *len);
void eu_stream_shared_free(struct eu_stream_shared *sh);
void eu_stream_vstate_load(struct eu_app *app, struct eu_tenant *t, int64_t account_id,
                           eu_stream_vstate_cb cb, void *arg);
void eu_stream_vstate_free(struct eu_stream_vstate *vs);

/*
 * The scheduled-status publisher (src/api/scheduled.c), a timed task
 * (eu_task_kinds[] in src/app/kinds.c): posts the statuses that are due
 * and sleeps until the next. (The poll closer is the social core's,
 * polls.h.)
 */
void eu_scheduled_task_run(struct eu_task_run *run);

#endif
