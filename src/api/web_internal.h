/*
 * Server-rendered HTML of the public listener, shared by the OAuth pages
 * (oauth.c) and the public profile and status pages (web.c).
 */
#ifndef EUNHA_API_WEB_INTERNAL_H
#define EUNHA_API_WEB_INTERNAL_H

struct eu_req;

/* Finishes req with a complete HTML page: title and body (already escaped
 * HTML) inside the common layout, with headers that keep the page out of
 * caches and frames (Content-Security-Policy allows no script). */
void eu_web_reply_page(struct eu_req *req, int status, const char *title, const char *body);

/* GET /@:username, /@:username/:id and /users/:username (web.c). */
void eu_web_profile(struct eu_req *req);
void eu_web_status(struct eu_req *req);
void eu_web_users(struct eu_req *req);

#endif
