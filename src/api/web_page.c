/*
 * The frame every HTML page of a tenant shares (sign-in and consent, the
 * settings pages, public profiles and posts): the tenant's name, thumbnail,
 * accent colour and language around the page's own body, one stylesheet,
 * and headers that keep pages out of caches and frames with a strict
 * Content-Security-Policy (no script, no inline style).
 *
 * The stylesheet (src/api/assets/eunha.css, compiled in by
 * cmake/embed_assets.cmake) is served at /assets/eunha-<hash>.css, its
 * name carrying the first bytes of its SHA-256, so it is cached for a year
 * and a new build's pages ask for the new one. The accent colour cannot be
 * an inline style under that policy; it is a second stylesheet,
 * /assets/accent-<rrggbb>.css, made from the colour in its name (with a text
 * colour for buttons and a link colour readable on the light and the dark
 * background), cached the same way.
 *
 * What the frame shows of the tenant (thumbnail, accent colour, language,
 * registrations) lives in its settings rows: one small indexed read per
 * page, skipped for 5xx pages, which must not depend on the database. A
 * page's route reads it before anything else (eu_web_framed), and keeps it
 * on the request, so the page's texts (web_text.c) are in the tenant's
 * language from the start and the reply reads nothing more.
 */
#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "web_internal.h"
#include "web_text.h"

/* The stylesheet's bytes (web_assets_data.c, generated). */
extern const char eu_web_css[];
extern const size_t eu_web_css_len;

enum {
    PAGE_FRAME,
};

const struct eu_sql eu_web_page_sql[] = {
    /* What the frame shows of the tenant: thumbnail (uploaded key or URL),
     * accent colour, first language, and whether it takes sign-ups (the
     * sign-in page links to the sign-up page). One row always. */
    [PAGE_FRAME] = {"web_page.frame",
                    "SELECT s.value ->> 'thumbnail_key', s.value ->> 'thumbnail_url',"
                    " s.value ->> 'accent_color', s.value -> 'languages' ->> 0,"
                    " coalesce((SELECT r.value #>> '{}' FROM settings r WHERE r.tenant_id = $1"
                    "  AND r.key = 'registrations_mode'), 'open')"
                    " FROM (SELECT 1) one LEFT JOIN settings s ON s.tenant_id = $1"
                    " AND s.key = 'instance'"},
    {0},
};

/* "eunha-<16 hex>.css", made once. */
static char css_name[64];

static const char *
stylesheet_name(void)
{
    if (css_name[0])
        return css_name;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(eu_web_css, eu_web_css_len, md, &n, EVP_sha256(), NULL);
    char *p = css_name + snprintf(css_name, sizeof(css_name), "eunha-");
    for (int i = 0; i < 8; i++)
        p += snprintf(p, 3, "%02x", md[i]);
    snprintf(p, sizeof(css_name) - (size_t)(p - css_name), ".css");
    return css_name;
}

/* Whether s is six hex digits (an accent colour without its '#'). */
static bool
is_rgb_hex(const char *s)
{
    for (int i = 0; i < 6; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return s[6] == '\0';
}

bool
eu_web_color_is_valid(const char *s)
{
    return s && s[0] == '#' && is_rgb_hex(s + 1);
}

static void
set_page_headers(struct eu_req *req)
{
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_add_header(req, "X-Frame-Options", "DENY");
    eu_req_add_header(req, "X-Content-Type-Options", "nosniff");
    eu_req_add_header(req, "Referrer-Policy", "same-origin");
    /* Images may be remote (avatars, media of other servers); over plain
     * http only where the server itself is (development, tests). */
    bool http = strcmp(req->app->cfg->scheme, "http") == 0;
    eu_req_add_header(req, "Content-Security-Policy",
                      http ? "default-src 'none'; style-src 'self'; img-src 'self' https: http: "
                             "data:; media-src 'self' https: http:; frame-ancestors 'none'; "
                             "base-uri 'none'"
                           : "default-src 'none'; style-src 'self'; img-src 'self' https: data:; "
                             "media-src 'self' https:; frame-ancestors 'none'; base-uri 'none'");
}

/* A page waiting for the frame's read. */
struct page {
    int status;
    const char *title, *head, *body; /* the request's arena */
};

/* Language codes are two or three lowercase letters (admin_instance.c
 * checks them); anything else is English. */
static const char *
page_lang(const char *lang)
{
    if (!lang)
        return "en";
    size_t n = strlen(lang);
    if (n < 2 || n > 3)
        return "en";
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)lang[i]))
            return "en";
    return lang;
}

static const struct eu_web_frame default_frame = {NULL, NULL, "en", "open"};

static const struct eu_web_frame *
frame_of(struct eu_req *req)
{
    return req->web_frame ? req->web_frame : &default_frame;
}

const char *
eu_web_lang(struct eu_req *req)
{
    return frame_of(req)->lang;
}

const char *
eu_web_registrations(struct eu_req *req)
{
    return frame_of(req)->registrations;
}

static void
render(struct eu_req *req, const struct page *pg)
{
    const struct eu_web_frame *fr = frame_of(req);
    const char *site = req->tenant ? req->tenant->title : "Eunha";
    const char *accent_links = "";
    if (eu_web_color_is_valid(fr->accent))
        accent_links = eu_arena_sprintf(req->arena,
                                        "<link rel=\"stylesheet\" href=\"/assets/accent-%s.css\">"
                                        "<meta name=\"theme-color\" content=\"%s\">",
                                        fr->accent + 1, fr->accent);
    const char *logo = fr->thumb ? eu_arena_sprintf(req->arena, "<img src=\"%s\" alt=\"\">",
                                                    eu_html_escape(req, fr->thumb))
                                 : "";
    const char *html = eu_arena_sprintf(
        req->arena,
        "<!DOCTYPE html>\n<html lang=\"%s\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<title>%s - %s</title><link rel=\"stylesheet\" href=\"/assets/%s\">%s%s</head>"
        "<body><a class=\"skip\" href=\"#main\">%s</a>"
        "<header class=\"site\"><div class=\"site-inner\"><a class=\"site-title\" "
        "href=\"/about\">%s<span>%s</span></a></div></header>"
        "<main id=\"main\">%s</main>"
        "<footer class=\"footer\"><ul><li><a href=\"/about\">%s</a></li>"
        "<li><a href=\"/privacy-policy\">%s</a></li>"
        "<li><a href=\"/terms-of-service\">%s</a></li>"
        "<li>%s</li></ul></footer></body></html>\n",
        fr->lang, eu_html_escape(req, pg->title), eu_html_escape(req, site), stylesheet_name(),
        accent_links, pg->head, eu_html_escape(req, eu_web_t(req, "Skip to content")), logo,
        eu_html_escape(req, site), pg->body, eu_html_escape(req, eu_web_t(req, "About")),
        eu_html_escape(req, eu_web_t(req, "Privacy policy")),
        eu_html_escape(req, eu_web_t(req, "Terms of service")),
        eu_html_escape(req, eu_web_t(req, "Powered by Eunha")));
    eu_req_reply_raw(req, pg->status, "text/html; charset=utf-8", html, strlen(html));
}

/* The frame from a row of PAGE_FRAME, kept on the request. */
static void
read_frame(struct eu_req *req, PGresult *res)
{
    struct eu_web_frame *fr = eu_arena_calloc(req->arena, sizeof(*fr));
    *fr = default_frame;
    if (PQntuples(res) == 1) {
        if (!PQgetisnull(res, 0, 0)) {
            char *url = eu_profile_image_url(req->app, eu_req_base_url(req), PQgetvalue(res, 0, 0));
            fr->thumb = eu_arena_strdup(req->arena, url);
            free(url);
        } else if (!PQgetisnull(res, 0, 1)) {
            fr->thumb = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
        }
        if (!PQgetisnull(res, 0, 2))
            fr->accent = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 2));
        if (!PQgetisnull(res, 0, 3))
            fr->lang = eu_arena_strdup(req->arena, page_lang(PQgetvalue(res, 0, 3)));
        fr->registrations = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 4));
    }
    req->web_frame = fr;
}

static void
on_frame(struct eu_req *req, PGresult *res, void *arg)
{
    read_frame(req, res);
    render(req, arg);
}

struct then {
    void (*then)(struct eu_req *req, void *arg);
    void *arg;
};

static void
on_framed(struct eu_req *req, PGresult *res, void *arg)
{
    read_frame(req, res);
    const struct then *t = arg;
    t->then(req, t->arg);
}

void
eu_web_frame_then(struct eu_req *req, void (*then)(struct eu_req *req, void *arg), void *arg)
{
    if (!req->tenant || req->web_frame) {
        then(req, arg);
        return;
    }
    struct then *t = eu_arena_alloc(req->arena, sizeof(*t));
    *t = (struct then){then, arg};
    eu_req_stmt(req, &eu_web_page_sql[PAGE_FRAME], 0, NULL, on_framed, t);
}

struct handler {
    void (*handler)(struct eu_req *req);
};

static void
run_handler(struct eu_req *req, void *arg)
{
    const struct handler *h = arg;
    h->handler(req);
}

void
eu_web_framed(struct eu_req *req, void (*handler)(struct eu_req *req))
{
    struct handler *h = eu_arena_alloc(req->arena, sizeof(*h));
    h->handler = handler;
    eu_web_frame_then(req, run_handler, h);
}

void
eu_web_reply_expired_form(struct eu_req *req, const char *again)
{
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>%s</h1><p class=\"error\" role=\"alert\">%s</p>"
        "<p><a href=\"%s\">%s</a></p></div>",
        eu_web_th(req, "The form has expired"),
        eu_web_th(req, "Invalid authenticity token: the page was open too long or came from "
                       "elsewhere."),
        eu_html_escape(req, again), eu_web_th(req, "Start again"));
    eu_web_reply_page(req, 422, eu_web_t(req, "Invalid authenticity token"), body);
}

void
eu_web_reply_page_head(struct eu_req *req, int status, const char *title, const char *head,
                       const char *body)
{
    set_page_headers(req);
    struct page *pg = eu_arena_alloc(req->arena, sizeof(*pg));
    *pg = (struct page){status, title, head ? head : "", body};
    if (!req->tenant || status >= 500 || req->web_frame) {
        render(req, pg);
        return;
    }
    eu_req_stmt(req, &eu_web_page_sql[PAGE_FRAME], 0, NULL, on_frame, pg);
}

/* web_internal.h. The embed page is made to be framed by other sites, as
 * Mastodon's /embed is: no X-Frame-Options and frame-ancestors open, and
 * still no script and no inline style. */
void
eu_web_reply_embed(struct eu_req *req, const char *title, const char *body)
{
    eu_req_add_header(req, "Cache-Control", "public, max-age=300");
    eu_req_add_header(req, "X-Content-Type-Options", "nosniff");
    eu_req_add_header(req, "Referrer-Policy", "same-origin");
    bool http = strcmp(req->app->cfg->scheme, "http") == 0;
    eu_req_add_header(req, "Content-Security-Policy",
                      http ? "default-src 'none'; style-src 'self'; img-src 'self' https: http: "
                             "data:; media-src 'self' https: http:; frame-ancestors *; "
                             "base-uri 'none'"
                           : "default-src 'none'; style-src 'self'; img-src 'self' https: data:; "
                             "media-src 'self' https:; frame-ancestors *; base-uri 'none'");
    const char *html =
        eu_arena_sprintf(req->arena,
                         "<!DOCTYPE html>\n<html lang=\"%s\"><head><meta charset=\"utf-8\">"
                         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                         "<meta name=\"robots\" content=\"noindex\">"
                         "<title>%s</title><link rel=\"stylesheet\" href=\"/assets/%s\"></head>"
                         "<body class=\"embed\"><main>%s</main></body></html>\n",
                         frame_of(req)->lang, eu_html_escape(req, title), stylesheet_name(), body);
    eu_req_reply_raw(req, 200, "text/html; charset=utf-8", html, strlen(html));
}

void
eu_web_reply_page(struct eu_req *req, int status, const char *title, const char *body)
{
    eu_web_reply_page_head(req, status, title, NULL, body);
}

/* ------------------------------------------------------------- assets */

/* sRGB channel (0-255) to linear light, for WCAG's relative luminance. */
static double
linear(double c)
{
    c /= 255.0;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double
luminance(const double rgb[3])
{
    return 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2]);
}

static double
contrast(const double a[3], const double b[3])
{
    double la = luminance(a), lb = luminance(b);
    return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

/* The colour moved toward target (0 black, 255 white) until it reads at
 * 4.5:1 (WCAG AA) on background bg, as "#rrggbb" in out. */
static void
readable_on(const double rgb[3], const double bg[3], double target, char out[8])
{
    double c[3] = {rgb[0], rgb[1], rgb[2]};
    for (int step = 0; step < 40 && contrast(c, bg) < 4.5; step++)
        for (int i = 0; i < 3; i++)
            c[i] += (target - c[i]) * 0.1;
    snprintf(out, 8, "#%02x%02x%02x", (int)lround(c[0]), (int)lround(c[1]), (int)lround(c[2]));
}

/* /assets/accent-rrggbb.css: the accent and the colours made from it. */
static void
reply_accent(struct eu_req *req, const char *hex)
{
    unsigned r, g, b;
    sscanf(hex, "%2x%2x%2x", &r, &g, &b);
    const double rgb[3] = {r, g, b};
    static const double white[3] = {255, 255, 255}, black[3] = {0, 0, 0};
    /* The stylesheet's light background and dark card (eunha.css). */
    static const double light_bg[3] = {0xf6, 0xf6, 0xf9}, dark_card[3] = {0x1f, 0x20, 0x29};
    const char *on = contrast(rgb, white) >= contrast(rgb, black) ? "#ffffff" : "#000000";
    char link[8], link_dark[8];
    readable_on(rgb, light_bg, 0, link);
    readable_on(rgb, dark_card, 255, link_dark);
    const char *css = eu_arena_sprintf(req->arena,
                                       ":root{--accent:#%s;--on-accent:%s;--link:%s}"
                                       "@media (prefers-color-scheme: dark){:root{--link:%s}}\n",
                                       hex, on, link, link_dark);
    eu_req_reply_raw(req, 200, "text/css; charset=utf-8", css, strlen(css));
}

/* GET /assets/:file: the stylesheet under its current name, or an accent
 * stylesheet; both never change under their name. */
void
eu_web_asset(struct eu_req *req)
{
    const char *file = eu_req_param(req, "file");
    size_t n = strlen(file);
    bool accent = n == strlen("accent-rrggbb.css") && strncmp(file, "accent-", 7) == 0 &&
                  strcmp(file + 13, ".css") == 0;
    char hex[7] = "";
    if (accent) {
        memcpy(hex, file + 7, 6);
        accent = is_rgb_hex(hex);
    }
    if (!accent && strcmp(file, stylesheet_name()) != 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_add_header(req, "Cache-Control", "public, max-age=31536000, immutable");
    eu_req_add_header(req, "X-Content-Type-Options", "nosniff");
    if (accent)
        reply_accent(req, hex);
    else
        eu_req_reply_raw(req, 200, "text/css; charset=utf-8", eu_web_css, eu_web_css_len);
}

/* The picture of an account without an avatar or header, where Mastodon
 * serves its own (every entity names these URLs, and clients and the
 * pages showed a broken image for them): a flat grey 4x4 PNG, drawn
 * at any size. */
static const unsigned char missing_png[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
    0x52, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x04, 0x08, 0x02, 0x00, 0x00, 0x00, 0x26,
    0x93, 0x09, 0x29, 0x00, 0x00, 0x00, 0x11, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xb8,
    0x79, 0xf3, 0x01, 0x1c, 0x31, 0x10, 0xc7, 0x01, 0x00, 0x2d, 0x40, 0x29, 0x21, 0x84, 0x2c,
    0x4c, 0xda, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

/* GET /avatars/original/missing.png and /headers/original/missing.png. */
static void
missing_image(struct eu_req *req)
{
    eu_req_add_header(req, "Cache-Control", "public, max-age=86400");
    eu_req_add_header(req, "X-Content-Type-Options", "nosniff");
    eu_req_reply_raw(req, 200, "image/png", (const char *)missing_png, sizeof(missing_png));
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_web_page_routes[] = {
    {EU_HTTP_GET, "/assets/:file", eu_web_asset, NULL, 0},
    {EU_HTTP_GET, "/avatars/original/missing.png", missing_image, NULL, 0},
    {EU_HTTP_GET, "/headers/original/missing.png", missing_image, NULL, 0},
    {0},
};
