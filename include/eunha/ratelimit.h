/*
 * Mastodon's API rate limits, per tenant, counted in Redis with fixed
 * windows: every /api/ and /oauth/ request counts against its token (or,
 * without one, its client IP), and sign-ups (POST /api/v1/accounts) also
 * count against the IP in a longer window. Limited responses carry
 * X-RateLimit-Limit, -Remaining and -Reset; over the limit the answer is
 * 429 {"error": "Too many requests"}. While Redis is down nothing is
 * limited: the limiter protects the service, it must not stop it.
 */
#ifndef EUNHA_RATELIMIT_H
#define EUNHA_RATELIMIT_H

#include "eunha/router.h"

struct eu_req;

/*
 * Runs handler(req) now or after the counters answer, unless the request is
 * over a limit, in which case it answers 429 itself and handler never runs.
 * Call it once per request, after authentication (req->auth is read) and on
 * the loop thread. Requests without a tenant, or outside /api/ and /oauth/,
 * go straight to the handler.
 */
void eu_ratelimit_run(struct eu_req *req, eu_route_handler_cb handler);

#endif
