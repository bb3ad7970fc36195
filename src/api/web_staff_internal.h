/*
 * The signed-in browser of a tenant's staff member, for the moderation
 * pages (web_staff.c): the web session, then the role's permission bits,
 * put in req->auth as a token's would be so that the admin API's code
 * (staff_internal.h) acts as that moderator.
 */
#ifndef EUNHA_API_WEB_STAFF_INTERNAL_H
#define EUNHA_API_WEB_STAFF_INTERNAL_H

#include <stdbool.h>
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

/* The frame of a moderation page: the navigation of the pages the role may
 * use (nav_current marked), the title as its heading, then body. */
void eu_web_staff_reply(struct eu_req *req, int status, const char *nav_current, const char *title,
                        const char *body);
/* A 403 ("not allowed") or 404 page. */
void eu_web_staff_refused(struct eu_req *req, int status);
/* 303 to location: a change's answer, so a reload repeats nothing. */
void eu_web_staff_redirect(struct eu_req *req, const char *location);
/* One button's form, posting do=what to action with the session's CSRF
 * token; label is English, translated here. In the request's arena. */
const char *eu_web_staff_button(struct eu_req *req, const struct eu_web_session *s,
                                const char *action, const char *what, const char *label,
                                bool danger);

#endif
