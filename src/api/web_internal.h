/*
 * Server-rendered HTML of the public listener, shared by the OAuth pages
 * (oauth.c) and the public profile and status pages (web.c).
 */
#ifndef EUNHA_API_WEB_INTERNAL_H
#define EUNHA_API_WEB_INTERNAL_H

#include <stdbool.h>

struct eu_req;

/* What a page shows of its tenant, from its settings (web_page.c): kept on
 * the request (req->web_frame) once read, so the page's texts know their
 * language before the body is built. Strings in the request's arena. */
struct eu_web_frame {
    const char *thumb;         /* the thumbnail's URL, or NULL */
    const char *accent;        /* "#rrggbb", or NULL */
    const char *lang;          /* the tenant's first language; "en" by default */
    const char *registrations; /* "open", "approval" or "closed" */
};

/* Reads the tenant's frame into the request (once), then calls then(req,
 * arg); a DB failure is answered and then is not called. */
void eu_web_frame_then(struct eu_req *req, void (*then)(struct eu_req *req, void *arg), void *arg);
/* The same for a route handler: every page's route goes through it
 * (EU_WEB_PAGE), so eu_web_t() answers in the tenant's language and
 * eu_web_reply_page() reads nothing more. */
void eu_web_framed(struct eu_req *req, void (*handler)(struct eu_req *req));
/* Defines name, a route handler running handler inside the frame. */
#define EU_WEB_PAGE(name, handler)                                                                 \
    static void name(struct eu_req *req)                                                           \
    {                                                                                              \
        eu_web_framed(req, handler);                                                               \
    }
/* The page's language ("en" before the frame is read). */
const char *eu_web_lang(struct eu_req *req);
/* The tenant's registrations mode ("open" before the frame is read). */
const char *eu_web_registrations(struct eu_req *req);

/* Finishes req with a complete HTML page: title (text) and body (already
 * escaped HTML) inside the tenant's frame (web_page.c), with headers that
 * keep the page out of caches and frames (Content-Security-Policy allows no
 * script and no inline style). Below 500, a request whose frame was not
 * read yet reads the tenant's settings first, so it must have no statement
 * pending. */
void eu_web_reply_page(struct eu_req *req, int status, const char *title, const char *body);
/* The same with head (HTML: meta and link elements) added to the page's
 * head, or NULL. */
void eu_web_reply_page_head(struct eu_req *req, int status, const char *title, const char *head,
                            const char *body);
/* Finishes req with the bare page of an embedded post (200): title (text)
 * and body (escaped HTML), no site frame, frameable by any site
 * (src/api/web.c's /@user/:id/embed, which oEmbed's html points at). */
void eu_web_reply_embed(struct eu_req *req, const char *title, const char *body);
/* The page for a form whose CSRF token did not match (422), with a link
 * to again, a local path, to start over. */
void eu_web_reply_expired_form(struct eu_req *req, const char *again);
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
/* The blurhash hash as a small PNG in a data: URL (arena), or NULL when
 * it is not a blurhash (web_blurhash.c). */
const char *eu_web_blurhash_data_url(struct eu_req *req, const char *hash);
/* GET /tags/:name (web.c). */
void eu_web_tag(struct eu_req *req);

#endif
