/*
 * Fixed-window rate limits in Redis, as Mastodon's rack-attack setup has
 * them: 300 API requests per 5 minutes per token (per IP for requests
 * without one) and 5 sign-ups per 30 minutes per IP, for the routes flagged
 * EU_ROUTE_LIMIT_API and EU_ROUTE_LIMIT_SIGNUP; sign-in handlers add
 * their own per-IP and per-login limits through eu_ratelimit_check(). A
 * counter is one INCR on "<tenant prefix>rl:<what>:<who>:<window number>",
 * given a TTL when it is created, so an idle client costs nothing once its
 * window has passed. Fixed windows let a client burst twice the limit
 * across a boundary; that is what Mastodon does too, and it needs one
 * command per request instead of a sorted set per client.
 */
#include "eunha/ratelimit.h"

#include <arpa/inet.h>
#include <assert.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/http.h"
#include "eunha/redis.h"
#include "eunha/tenant.h"

#define API_PERIOD_S 300
#define SIGNUP_PERIOD_S 1800

struct limit {
    const char *what; /* "api", "signup", or a caller's family */
    const char *who;  /* "t<token id>", "ip:<address>", or a caller's */
    int max;
    int period_s;
    bool headers; /* X-RateLimit-* describe this limit */
};

struct check {
    struct eu_req *req;
    eu_ratelimit_done_cb done;
    void *arg;
    struct limit limits[EU_RATELIMIT_MAX];
    int n, next;
    time_t now;
    const char *key; /* arena-owned: "who" may be long, and a cut key is another's */
};

static void run_next(struct check *c);

static void
add_headers(struct eu_req *req, const struct limit *l, long long count, time_t now)
{
    char v[40];
    long long remaining = l->max - count;
    snprintf(v, sizeof(v), "%d", l->max);
    eu_req_add_header(req, "X-RateLimit-Limit", v);
    snprintf(v, sizeof(v), "%lld", remaining > 0 ? remaining : 0);
    eu_req_add_header(req, "X-RateLimit-Remaining", v);
    time_t reset = (now / l->period_s + 1) * l->period_s;
    struct tm tm;
    gmtime_r(&reset, &tm);
    strftime(v, sizeof(v), "%Y-%m-%dT%H:%M:%S.000Z", &tm);
    eu_req_add_header(req, "X-RateLimit-Reset", v);
}

static void
on_counted(redisReply *reply, void *arg)
{
    struct check *c = arg;
    struct eu_req *req = c->req;
    const struct limit *l = &c->limits[c->next];
    eu_req_enter(req);
    /* No reply (Redis down) or a strange one: let the request through. */
    if (reply && reply->type == REDIS_REPLY_INTEGER) {
        long long count = reply->integer;
        if (count == 1) {
            char ttl[16];
            snprintf(ttl, sizeof(ttl), "%d", l->period_s + 5);
            const char *argv[] = {"EXPIRE", c->key, ttl};
            eu_redis_command(eu_tenant_redis(req->app, req->tenant), NULL, NULL, 3, argv, NULL);
        }
        if (l->headers)
            add_headers(req, l, count, c->now);
        if (count > l->max) {
            int retry = (int)((c->now / l->period_s + 1) * l->period_s - c->now);
            char v[16];
            snprintf(v, sizeof(v), "%d", retry);
            eu_req_add_header(req, "Retry-After", v);
            c->done(req, retry, c->arg);
            return;
        }
    }
    c->next++;
    run_next(c);
}

static void
run_next(struct check *c)
{
    if (c->next >= c->n) {
        c->done(c->req, 0, c->arg);
        return;
    }
    struct eu_req *req = c->req;
    const struct limit *l = &c->limits[c->next];
    c->key = eu_arena_sprintf(req->arena, "%srl:%s:%s:%lld", req->tenant->key_prefix, l->what,
                              l->who, (long long)(c->now / l->period_s));
    const char *argv[] = {"INCR", c->key};
    eu_redis_command(eu_tenant_redis(req->app, req->tenant), on_counted, c, 2, argv, NULL);
}

static struct check *
check_new(struct eu_req *req, eu_ratelimit_done_cb done, void *arg)
{
    struct check *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->req = req;
    c->done = done;
    c->arg = arg;
    c->now = time(NULL);
    return c;
}

void
eu_ratelimit_check(struct eu_req *req, const struct eu_ratelimit *limits, int n,
                   eu_ratelimit_done_cb done, void *arg)
{
    assert(req->tenant && n <= EU_RATELIMIT_MAX);
    struct check *c = check_new(req, done, arg);
    for (int i = 0; i < n; i++) {
        if (limits[i].max <= 0)
            continue;
        assert(limits[i].period_s > 0);
        struct limit *l = &c->limits[c->n++];
        l->what = eu_arena_strdup(req->arena, limits[i].what);
        l->who = eu_arena_strdup(req->arena, limits[i].who);
        l->max = limits[i].max;
        l->period_s = limits[i].period_s;
    }
    run_next(c);
}

const char *
eu_ratelimit_client(struct eu_req *req)
{
    struct in6_addr a6;
    if (inet_pton(AF_INET6, req->remote_ip, &a6) == 1) {
        memset(a6.s6_addr + 8, 0, 8);
        char text[INET6_ADDRSTRLEN];
        if (inet_ntop(AF_INET6, &a6, text, sizeof(text)))
            return eu_arena_sprintf(req->arena, "ip:%s/64", text);
    }
    return eu_arena_sprintf(req->arena, "ip:%s", req->remote_ip);
}

/* The route's handler, or a 429 for the limits eu_ratelimit_run() counted. */
static void
on_route_checked(struct eu_req *req, int retry_after_s, void *arg)
{
    const eu_route_handler_cb *handler = arg;
    if (retry_after_s > 0) {
        eu_req_reply_error(req, 429, "Too many requests");
        return;
    }
    (*handler)(req);
}

void
eu_ratelimit_run(struct eu_req *req, eu_route_handler_cb handler)
{
    const struct eu_config *cfg = req->app->cfg;
    unsigned flags = req->route ? req->route->flags : 0;
    if (!req->tenant || !(flags & (EU_ROUTE_LIMIT_API | EU_ROUTE_LIMIT_SIGNUP))) {
        handler(req);
        return;
    }
    eu_route_handler_cb *h = eu_arena_alloc(req->arena, sizeof(*h));
    *h = handler;
    struct check *c = check_new(req, on_route_checked, h);
    const char *ip = eu_ratelimit_client(req);
    if (cfg->api_requests_per_5min > 0 && (flags & EU_ROUTE_LIMIT_API)) {
        struct limit *l = &c->limits[c->n++];
        l->what = "api";
        l->who = req->auth.present
                     ? eu_arena_sprintf(req->arena, "t%lld", (long long)req->auth.token_id)
                     : ip;
        l->max = cfg->api_requests_per_5min;
        l->period_s = API_PERIOD_S;
        l->headers = true;
    }
    if (cfg->registrations_per_30min > 0 && (flags & EU_ROUTE_LIMIT_SIGNUP)) {
        struct limit *l = &c->limits[c->n++];
        l->what = "signup";
        l->who = ip;
        l->max = cfg->registrations_per_30min;
        l->period_s = SIGNUP_PERIOD_S;
        l->headers = false;
    }
    run_next(c);
}
