/*
 * The settings pages' layout (web_settings.c), for every file that serves
 * a page under /settings (account_life.c, settings_otp.c, takeout.c,
 * web_settings.c), and the CSRF field every form of a signed-in page
 * carries.
 */
#ifndef EUNHA_API_WEB_SETTINGS_INTERNAL_H
#define EUNHA_API_WEB_SETTINGS_INTERNAL_H

struct eu_req;
struct eu_web_session;

/* Finishes req with body (escaped HTML, with its h1) inside the settings
 * layout: the navigation of the settings pages, current (a path) marked
 * with aria-current, in the tenant's frame (eu_web_reply_page). */
void eu_web_settings_reply(struct eu_req *req, int status, const char *current, const char *title,
                           const char *body);

/* The hidden input with the session's CSRF token (arena). */
const char *eu_web_csrf_field(struct eu_req *req, const struct eu_web_session *s);

#endif
