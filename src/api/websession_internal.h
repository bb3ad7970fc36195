/*
 * The signed-in browser, for the pages beside the OAuth flow that a
 * person uses in a browser as on Mastodon (two-factor set-up, exports and
 * imports, account deletion, password and e-mail changes): the session
 * the cookie names, the user it signed in, and its CSRF token. The OAuth
 * pages (oauth.c) keep the session; this only reads it.
 */
#ifndef EUNHA_API_WEBSESSION_INTERNAL_H
#define EUNHA_API_WEBSESSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

struct eu_req;
struct json_t;

#define EU_WEB_SESSION_COOKIE "_eunha_session"

/* A signed-in session; its strings live in the request's arena. */
struct eu_web_session {
    int64_t user_id, account_id;
    const char *username, *csrf;
};

typedef void (*eu_web_session_cb)(struct eu_req *req, const struct eu_web_session *s, void *arg);

/* The session cookie's value (arena), or "" (which never matches a stored
 * hash). */
const char *eu_web_session_cookie(struct eu_req *req);

/*
 * Loads the session the request's cookie names and calls cb with it. A
 * browser that has not signed in (no session, an anonymous one, an expired
 * one, or a user since suspended or not approved) is sent to the sign-in
 * page instead, with the path it asked for as return_to, and cb is not
 * called.
 */
void eu_web_session_require(struct eu_req *req, eu_web_session_cb cb, void *arg);

/* Whether the form's authenticity_token is the session's CSRF token. */
bool eu_web_session_csrf_ok(const struct eu_web_session *s, struct json_t *params);

#endif
