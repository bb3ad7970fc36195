/*
 * The signed-in browser of a tenant's staff member, for the moderation
 * pages (web_staff.c): the web session, then the role's permission bits,
 * put in req->auth as a token's would be so that the admin API's code
 * (staff_internal.h) acts as that moderator.
 */
#ifndef EUNHA_API_WEB_STAFF_INTERNAL_H
#define EUNHA_API_WEB_STAFF_INTERNAL_H

#include <stdint.h>

struct eu_req;
struct eu_web_session;
struct json_t;

/* params: the query's or the form's fields (the request's). */
typedef void (*eu_web_staff_cb)(struct eu_req *req, const struct eu_web_session *s,
                                struct json_t *params, void *arg);

/*
 * Loads the session (a browser not signed in is sent to sign in) and its
 * role, and calls cb when the role has any of the permissions any_of and,
 * for a POST, the form carries the session's CSRF token; otherwise answers
 * 403 or 422 with a page.
 */
void eu_web_staff_require(struct eu_req *req, int64_t any_of, eu_web_staff_cb cb, void *arg);

#endif
