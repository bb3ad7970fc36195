/*
 * The route table: method + path pattern -> handler + required OAuth scope +
 * flags. One router for the whole process, built once at start from the
 * tables each handler file owns (src/app/routes.c lists them); a tenant adds
 * nothing to it. Patterns are literal segments and ":name" parameters, e.g.
 * "/api/v1/accounts/:id/follow". A literal segment wins over a parameter at
 * the same depth, so "/api/v1/accounts/lookup" beats "/api/v1/accounts/:id".
 *
 * A pattern whose last segment is "*" is an area, not a route ("/api/"
 * then "*" is the area under /api/): it takes no request (methods 0,
 * handler NULL), but its flags are those of any path under it that no route
 * takes, so that the 404 for an unknown "/api/..." path, and the CORS
 * preflight for it, carry CORS headers as Mastodon's do.
 */
#ifndef EUNHA_ROUTER_H
#define EUNHA_ROUTER_H

#include <stdbool.h>
#include <stddef.h>

struct eu_arena;
struct eu_req;

/* HTTP methods as bits so a route can be matched against a set. */
enum eu_http_method {
    EU_HTTP_GET = 1 << 0,
    EU_HTTP_POST = 1 << 1,
    EU_HTTP_PUT = 1 << 2,
    EU_HTTP_PATCH = 1 << 3,
    EU_HTTP_DELETE = 1 << 4,
    EU_HTTP_HEAD = 1 << 5,
    EU_HTTP_OPTIONS = 1 << 6,
};

typedef void (*eu_route_handler_cb)(struct eu_req *req);

/*
 * Route flags, what the server does for a route before and after its
 * handler runs (src/http/server.c, src/http/ratelimit.c):
 *
 *   EU_ROUTE_NO_TENANT  runs without a tenant (admin listener, health)
 *   EU_ROUTE_AUTH       needs a valid bearer token (the scope is checked too)
 *   EU_ROUTE_AUTH_OPT   reads the token if one is sent, works without
 *   EU_ROUTE_ADMIN      admin listener only; needs the admin token
 *   EU_ROUTE_CORS       adds Mastodon's CORS headers to every answer on the
 *                       path, errors too, and answers its OPTIONS preflight
 *                       (Mastodon's rack-cors covers /api/, /.well-known/,
 *                       /nodeinfo/, /oauth/token and /oauth/revoke)
 *   EU_ROUTE_ADMIN_OPEN admin listener only, no token (health, metrics)
 *   EU_ROUTE_APP_TOKEN  needs a valid token, but an app-only one (from the
 *                       client_credentials grant) will do; EU_ROUTE_AUTH
 *                       needs a token that belongs to a user
 *   EU_ROUTE_UPLOAD     takes files: its body may hold up to [limits]
 *                       max_upload_bytes instead of max_body_bytes. Every
 *                       connection of the listener may then buffer that
 *                       much before its route is known, so flag only routes
 *                       that need it.
 *   EU_ROUTE_MOVED_OK   an EU_ROUTE_AUTH route a moved account may still
 *                       use (its migration routes); others answer it 403,
 *                       as Mastodon's require_user! does
 *   EU_ROUTE_LIMIT_API  counts against the API rate limit (300 requests per
 *                       5 minutes per token, or per IP without one), with
 *                       X-RateLimit-* headers: Mastodon's limit on /api/,
 *                       /oauth/ and /auth/
 *   EU_ROUTE_LIMIT_SIGNUP also counts against the sign-up limit (5 per 30
 *                       minutes per IP): account creation
 *   EU_ROUTE_UNCONFIRMED_OK an EU_ROUTE_AUTH route a user whose e-mail is
 *                       not confirmed (or whose sign-up awaits approval)
 *                       may call: resending the confirmation, as Mastodon's
 *                       confirmations controller skips require_user!
 *   EU_ROUTE_API        shorthand for CORS | LIMIT_API, what every route
 *                       under /api/ has
 * Every other flag is about the route, not the path; an area sets only
 * EU_ROUTE_CORS, the one flag a request no route takes can use.
 */
enum {
    EU_ROUTE_NO_TENANT = 1 << 0,
    EU_ROUTE_AUTH = 1 << 1,
    EU_ROUTE_AUTH_OPT = 1 << 2,
    EU_ROUTE_ADMIN = 1 << 3,
    EU_ROUTE_CORS = 1 << 4,
    EU_ROUTE_ADMIN_OPEN = 1 << 5,      /* admin listener without a token (health, metrics) */
    EU_ROUTE_APP_TOKEN = 1 << 6,       /* any valid token, app-only ones too */
    EU_ROUTE_UPLOAD = 1 << 7,          /* body up to max_upload_bytes */
    EU_ROUTE_MOVED_OK = 1 << 8,        /* a moved account may still call it */
    EU_ROUTE_LIMIT_API = 1 << 9,       /* the API rate limit counts it */
    EU_ROUTE_LIMIT_SIGNUP = 1 << 10,   /* the sign-up rate limit counts it too */
    EU_ROUTE_UNCONFIRMED_OK = 1 << 11, /* an unconfirmed or pending user may call it */
    EU_ROUTE_API = EU_ROUTE_CORS | EU_ROUTE_LIMIT_API,
};

struct eu_route {
    unsigned methods; /* set of enum eu_http_method */
    const char *pattern;
    eu_route_handler_cb handler;
    const char *scope; /* required OAuth scope ("read:statuses") or NULL */
    unsigned flags;
};

#define EU_ROUTE_MAX_PARAMS 8

struct eu_route_params {
    size_t n;
    struct {
        const char *name; /* borrowed from the route pattern's storage */
        char *value;      /* percent-decoded, owned by the arena given to match */
    } p[EU_ROUTE_MAX_PARAMS];
};

enum eu_route_match {
    EU_ROUTE_FOUND,
    EU_ROUTE_NOT_FOUND,
    EU_ROUTE_METHOD_NOT_ALLOWED,
};

struct eu_router;

/* Builds a router over routes (borrowed; must outlive the router, normally a
 * static table). Returns NULL with a message in err on a malformed or
 * duplicate pattern or area. Free with eu_router_free(). */
struct eu_router *eu_router_new(const struct eu_route *routes, size_t n, char *err, size_t errlen);
/* Adds more routes from another static table (e.g. one per subsystem). */
int eu_router_add(struct eu_router *r, const struct eu_route *routes, size_t n, char *err,
                  size_t errlen);
void eu_router_free(struct eu_router *r);
/* The union of the flags of every route added, e.g. to learn whether any
 * route takes uploads. */
unsigned eu_router_flags(const struct eu_router *r);

/*
 * Matches path (without query string) for method. On EU_ROUTE_FOUND, *out is
 * the route and params holds the parameters, their values allocated in arena.
 * On EU_ROUTE_METHOD_NOT_ALLOWED, allow holds the allowed methods as an
 * "Allow" header value ("GET, POST"). A path with an empty segment in the
 * middle, or trailing slash, matches as if the slash were absent. A path
 * only an area takes is EU_ROUTE_NOT_FOUND.
 */
enum eu_route_match eu_router_match(const struct eu_router *r, unsigned method, const char *path,
                                    struct eu_arena *arena, const struct eu_route **out,
                                    struct eu_route_params *params, char *allow, size_t allowlen);
/*
 * The flags that apply to path whatever the method: the union of the flags
 * of the routes eu_router_match() would pick for it under any method, or, if
 * an area takes it, the area's flags; 0 when nothing does. What the server
 * reads before (or without) matching a route, e.g. for CORS on a 404.
 */
unsigned eu_router_path_flags(const struct eu_router *r, const char *path);
/* Returns the parameter's value or NULL. */
const char *eu_route_params_get(const struct eu_route_params *params, const char *name);
/* "GET" etc for one method bit; "" for anything else. */
const char *eu_http_method_name(unsigned method);

#endif
