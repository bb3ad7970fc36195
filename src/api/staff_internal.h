/*
 * Shared by the tenant staff's admin API files (staff_accounts.c,
 * staff_reports.c, admin_rules.c, admin_instance.c): Mastodon's
 * Admin::Account entity, which a report embeds four times, and the audit
 * of who did what.
 */
#ifndef EUNHA_API_STAFF_INTERNAL_H
#define EUNHA_API_STAFF_INTERNAL_H

#include <stdbool.h>
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

/*
 * For the moderation pages (web_staff.c): the same reads and changes as
 * the API's handlers, ending in a callback instead of a JSON answer.
 * req->auth must name the moderator (user, account and role permissions);
 * the page checks the permission before it asks, and the change functions
 * check it again.
 */

/* Entities (an array or one object) the callback reads during the call;
 * the request's arena holds them. */
typedef void (*eu_staff_json_cb)(struct eu_req *req, struct json_t *entities, void *arg);
/* The end of a change: 200 made (or there was nothing to change), 403 not
 * allowed by the policy, 404 no such row in the tenant. */
typedef void (*eu_staff_done_cb)(struct eu_req *req, int status, void *arg);

/* Writes the audit row of a change made for a page (as
 * eu_staff_reply_audited) and then calls done with 200. (admin_instance.c) */
void eu_staff_audit(struct eu_req *req, const char *action, const char *type, const char *id,
                    const char *human, eu_staff_done_cb done, void *arg);

/* The live rules, as admin Rule entities in an array. (admin_rules.c) */
void eu_staff_rules_load(struct eu_req *req, eu_staff_json_cb cb, void *arg);
/* what: "create" (id NULL), "update" or "destroy" (text and hint NULL),
 * checked as the API checks them: done gets 422 for a blank or too long
 * text or hint, and the change writes the API's audit row. */
void eu_staff_rules_change(struct eu_req *req, const char *what, const char *id, const char *text,
                           const char *hint, eu_staff_done_cb done, void *arg);

/* The tenant's own custom emoji, newest first (at most 200), as admin
 * entities in an array; and one enabled or disabled, with the API's audit
 * row. (custom_emojis.c) */
void eu_staff_emojis_load(struct eu_req *req, eu_staff_json_cb cb, void *arg);
void eu_staff_emoji_set_disabled(struct eu_req *req, const char *id, bool disabled,
                                 eu_staff_done_cb done, void *arg);
/* A new emoji from params' shortcode, category and image file, checked and
 * made as POST /api/v1/admin/custom_emojis makes it (its audit row too):
 * made gets 200, or 403, 422, 500, 503 with the API's error text. */
typedef void (*eu_staff_emoji_made_cb)(struct eu_req *req, int status, const char *error,
                                       void *arg);
void eu_staff_emoji_create(struct eu_req *req, struct json_t *params, eu_staff_emoji_made_cb made,
                           void *arg);

/* The newest 100 Admin::Reports, resolved ones or open ones, as an array;
 * or, with id, that one report (NULL when the tenant has none such). A
 * database failure is answered and cb is not called. (staff_reports.c) */
void eu_staff_reports_load(struct eu_req *req, bool resolved, const char *id, eu_staff_json_cb cb,
                           void *arg);
/* what: "assign" (to req's account), "unassign", "resolve" or "reopen",
 * with the API's audit row. */
void eu_staff_report_change(struct eu_req *req, const char *id, const char *what,
                            eu_staff_done_cb done, void *arg);

/* The newest 100 local sign-ups awaiting approval, as an array of
 * Admin::Accounts. (staff_accounts.c) */
void eu_staff_accounts_pending(struct eu_req *req, eu_staff_json_cb cb, void *arg);
/*
 * The API's change of account id: what is "approve", "reject", "enable",
 * "unsilence", "unsuspend", or an action ("none" for a warning,
 * "sensitive", "disable", "silence", "suspend") with text and the report
 * it answers (or NULL); the user is told as the API tells it. A text
 * longer than the API takes is refused with 422.
 */
void eu_staff_account_change(struct eu_req *req, const char *id, const char *what, const char *text,
                             const char *report_id, eu_staff_done_cb done, void *arg);

#endif
