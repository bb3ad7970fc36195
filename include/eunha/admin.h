/*
 * Handlers of the admin listener (src/admin/). Each finishes its request.
 */
#ifndef EUNHA_ADMIN_H
#define EUNHA_ADMIN_H

#include "eunha/router.h"

struct eu_app;
struct eu_req;

/* The route tables of the admin listener, one per handler file, each ending
 * with {0}; src/app/routes.c lists them. */
extern const struct eu_route eu_admin_accounts_routes[];          /* accounts.c */
extern const struct eu_route eu_admin_announcements_routes[];     /* announcements.c */
extern const struct eu_route eu_admin_domain_blocks_routes[];     /* domain_blocks.c */
extern const struct eu_route eu_admin_health_routes[];            /* health.c */
extern const struct eu_route eu_admin_instance_routes[];          /* instance.c */
extern const struct eu_route eu_admin_custom_emojis_routes[];     /* custom_emojis.c */
extern const struct eu_route eu_admin_staff_routes[];             /* staff.c */
extern const struct eu_route eu_admin_jobs_routes[];              /* jobs.c */
extern const struct eu_route eu_admin_lifecycle_archive_routes[]; /* lifecycle_archive.c */
extern const struct eu_route eu_admin_lifecycle_move_routes[];    /* lifecycle_move.c */
extern const struct eu_route eu_admin_reports_routes[];           /* reports.c */
extern const struct eu_route eu_admin_tenants_routes[];           /* tenants.c */
extern const struct eu_route eu_admin_placements_routes[];        /* placements.c */

/* Starts removing the rows of every tenant left in state 'deleting' (by a
 * process that stopped mid-way); call once the registry is loaded. */
void eu_admin_purge_resume(struct eu_app *app);
/* Forgets purges under way (at shutdown; they resume at the next start). */
void eu_admin_purge_stop_all(void);

void eu_admin_health(struct eu_req *req);
void eu_admin_metrics(struct eu_req *req);
void eu_admin_tenants_create(struct eu_req *req);
void eu_admin_tenants_list(struct eu_req *req);
void eu_admin_tenants_show(struct eu_req *req);
void eu_admin_tenants_update(struct eu_req *req);
void eu_admin_tenants_delete(struct eu_req *req);
void eu_admin_accounts_create(struct eu_req *req);
/* PUT /admin/v1/tenants/:domain/accounts/:id/role {"role": "owner"|"admin"|
 * "moderator"|"user"}: sets a local user's role. */
void eu_admin_accounts_set_role(struct eu_req *req);
/* POST /admin/v1/tenants/:domain/accounts/:id/confirm: confirms a local
 * user waiting for its confirmation link (404 for anything else). */
void eu_admin_accounts_confirm(struct eu_req *req);
/* src/admin/lifecycle.c: export, import and move between placements */
void eu_admin_tenants_export(struct eu_req *req);
void eu_admin_tenants_import(struct eu_req *req);
void eu_admin_tenants_move(struct eu_req *req);
/* src/admin/jobs.c: a tenant's jobs, and account suspension */
void eu_admin_jobs_list(struct eu_req *req);
void eu_admin_jobs_show(struct eu_req *req);
void eu_admin_jobs_create(struct eu_req *req);
void eu_admin_jobs_retry(struct eu_req *req);
/* GET /admin/v1/tenants/:domain/reports (src/admin/reports.c) */
void eu_admin_reports_list(struct eu_req *req);
void eu_admin_jobs_delete(struct eu_req *req);
void eu_admin_accounts_suspend(struct eu_req *req);
void eu_admin_accounts_unsuspend(struct eu_req *req);
/* src/admin/announcements.c: a tenant's announcements */
void eu_admin_announcements_list(struct eu_req *req);
void eu_admin_announcements_create(struct eu_req *req);
void eu_admin_announcements_show(struct eu_req *req);
void eu_admin_announcements_update(struct eu_req *req);
void eu_admin_announcements_delete(struct eu_req *req);

#endif
