/*
 * Shared by the tenant staff's admin API files (staff_accounts.c,
 * staff_reports.c, admin_rules.c, admin_instance.c): Mastodon's
 * Admin::Account entity, which a report embeds four times, and the audit
 * of who did what.
 */
#ifndef EUNHA_API_STAFF_INTERNAL_H
#define EUNHA_API_STAFF_INTERNAL_H

#include <stddef.h>

struct eu_req;
struct json_t;

/* The Admin::Account entities of the accounts with ids (decimal strings,
 * read during the call), as an object from id to entity (a new reference
 * the callback owns; ids not found are missing from it). */
typedef void (*eu_staff_accounts_cb)(struct eu_req *req, struct json_t *by_id, void *arg);

/*
 * Loads and renders the accounts with these ids in one statement, then
 * calls cb later (never from inside this call). On a database failure the
 * request is answered and cb is not called.
 */
void eu_staff_accounts_load(struct eu_req *req, const char *const *ids, size_t n,
                            eu_staff_accounts_cb cb, void *arg);

/*
 * Answers status with body (the reference is taken) after writing the
 * audit row of a change by the tenant's staff: action ("create",
 * "update", "destroy") on the target named by type, id ("0" for the
 * instance itself) and human, the text that names it to a person.
 * (admin_instance.c)
 */
void eu_staff_reply_audited(struct eu_req *req, int status, struct json_t *body, const char *action,
                            const char *type, const char *id, const char *human);

#endif
