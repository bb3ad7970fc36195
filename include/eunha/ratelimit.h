/*
 * Mastodon's API rate limits, per tenant, counted in Redis with fixed
 * windows: every request whose route is flagged EU_ROUTE_LIMIT_API (those
 * under /api/, /oauth/ and /auth/, as Mastodon's) counts against its token
 * (or, without one, its client IP), and sign-ups (EU_ROUTE_LIMIT_SIGNUP,
 * POST /api/v1/accounts) also count against the IP in a longer window. Limited responses carry
 * X-RateLimit-Limit, -Remaining and -Reset; over the limit the answer is
 * 429 {"error": "Too many requests"}. Handlers that know more than the path
 * (the login a sign-in is for) count their own limits with
 * eu_ratelimit_check(). While Redis is down nothing is limited: the limiter
 * protects the service, it must not stop it.
 */
#ifndef EUNHA_RATELIMIT_H
#define EUNHA_RATELIMIT_H

#include "eunha/router.h"

struct eu_req;

/* Most limits one eu_ratelimit_check() call counts. */
#define EU_RATELIMIT_MAX 4

/* One fixed-window limit for eu_ratelimit_check(). */
struct eu_ratelimit {
    const char *what; /* the counter's family, e.g. "signin_ip"; part of the Redis key */
    const char *who;  /* whom it counts in that family; hash what a client may make long */
    int max;          /* hits allowed per window; <= 0 turns this limit off */
    int period_s;     /* the window, in seconds (> 0) */
};

/*
 * What eu_ratelimit_check() found: retry_after_s is 0 when the request is
 * within every limit, otherwise the seconds until the window of the limit
 * it exceeded ends (and a Retry-After header with it is already on req).
 * The callback must finish the request, now or later.
 */
typedef void (*eu_ratelimit_done_cb)(struct eu_req *req, int retry_after_s, void *arg);

/*
 * Runs handler(req) now or after the counters answer, unless the request is
 * over a limit, in which case it answers 429 itself and handler never runs.
 * Call it once per request, after authentication (req->auth is read) and on
 * the loop thread, with req->route set. Requests without a tenant, or whose
 * route has no EU_ROUTE_LIMIT_* flag, go straight to the handler.
 */
void eu_ratelimit_run(struct eu_req *req, eu_route_handler_cb handler);

/*
 * Counts one hit against each of the n (at most EU_RATELIMIT_MAX) limits,
 * in order, under the request's tenant, then calls done: once Redis has
 * answered, or from inside this call when every limit is off. Counting
 * stops at the first limit exceeded, so a client that is refused does not
 * also run up the later counters. While Redis is down every limit passes.
 * The limits and their strings are copied. Loop thread only; req must have
 * a tenant.
 */
void eu_ratelimit_check(struct eu_req *req, const struct eu_ratelimit *limits, int n,
                        eu_ratelimit_done_cb done, void *arg);

/*
 * The client as per-IP limits count it: its IPv4 address, or the /64 of its
 * IPv6 address (one customer's allocation, so a host cannot get a fresh
 * counter by changing its interface id), e.g. "ip:2001:db8:1:2::/64".
 * Owned by the request's arena.
 */
const char *eu_ratelimit_client(struct eu_req *req);

#endif
