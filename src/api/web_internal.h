/*
 * Server-rendered HTML of the public listener, shared by the OAuth pages
 * (oauth.c) and the public profile and status pages (web.c).
 */
#ifndef EUNHA_API_WEB_INTERNAL_H
#define EUNHA_API_WEB_INTERNAL_H

#include <stdbool.h>

struct eu_req;

/* Finishes req with a complete HTML page: title (text) and body (already
 * escaped HTML) inside the tenant's frame (web_page.c), with headers that
 * keep the page out of caches and frames (Content-Security-Policy allows no
 * script and no inline style). Below 500 the frame reads the tenant's
 * settings first, so the request must have no statement pending. */
void eu_web_reply_page(struct eu_req *req, int status, const char *title, const char *body);
/* The same with head (HTML: meta and link elements) added to the page's
 * head, or NULL. */
void eu_web_reply_page_head(struct eu_req *req, int status, const char *title, const char *head,
                            const char *body);
/* Whether s is an accent colour the frame takes: "#rrggbb". */
bool eu_web_color_is_valid(const char *s);
/* GET /assets/:file (web_page.c). */
void eu_web_asset(struct eu_req *req);
/* GET /about, /privacy-policy, /terms-of-service (web_about.c). */
void eu_web_about(struct eu_req *req);
void eu_web_privacy(struct eu_req *req);
void eu_web_terms(struct eu_req *req);

/* GET /@:username, /@:username/:id and /users/:username (web.c). */
void eu_web_profile(struct eu_req *req);
void eu_web_status(struct eu_req *req);
void eu_web_users(struct eu_req *req);

#endif
