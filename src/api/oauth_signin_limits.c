/*
 * Counting sign-in attempts, for the sign-in form (oauth.c) and the
 * password grant (oauth_token.c) alike, as Mastodon throttles them: per
 * client address first, then, once the lookup found the account, per
 * account and address together and per account over all addresses it has
 * not signed in from before. The known addresses are a Redis set per
 * account on the tenant's Redis; counting fails open when Redis is away.
 */
#include "oauth_internal.h"

#include <ctype.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdio.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/http.h"
#include "eunha/ratelimit.h"
#include "eunha/redis.h"
#include "eunha/tenant.h"

/* Mastodon's windows for its sign-in throttles; the counts are config. */
#define SIGN_IN_IP_PERIOD_S 300
#define SIGN_IN_LOGIN_PERIOD_S 3600
/* The per-account cap over all addresses not known to the account, as a
 * multiple of the per-account-and-IP limit: a few addresses' worth, so a
 * guesser who rotates addresses gains little, and the owner's own address
 * never meets it. */
#define SIGN_IN_ACCOUNT_FACTOR 4
/* How long an address the account signed in from stays known. */
#define SIGN_IN_KNOWN_TTL_S (30 * 24 * 3600)

/* The account a sign-in attempt counts against (arena): "u<id>" once the
 * lookup found the user, so its e-mail address and username share one
 * counter; for a login that names nobody a hash of it folded as the lookup
 * folds it, so guesses at absent logins are throttled alike (no answer
 * tells which exist), a long login makes no long key and no address is
 * kept in Redis. */
static const char *
account_key(struct eu_req *req, int64_t user_id, const char *login)
{
    if (user_id)
        return eu_arena_sprintf(req->arena, "u%lld", (long long)user_id);
    char *folded = eu_arena_strdup(req->arena, login);
    for (char *c = folded; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    char hash[65];
    eu_auth_token_hash(folded, hash);
    return eu_arena_sprintf(req->arena, "login:%s", hash);
}

/* Counts one sign-in attempt, by the HTML form or the password grant
 * alike, against the client's IP, then calls done as eu_ratelimit_check()
 * does. The account's counters come after the lookup (eu_oauth_count_account). */
void
eu_oauth_count_sign_in(struct eu_req *req, eu_ratelimit_done_cb done, void *arg)
{
    const struct eu_config *cfg = req->app->cfg;
    struct eu_ratelimit ip = {"signin", eu_ratelimit_client(req), cfg->sign_ins_per_ip_per_5min,
                              SIGN_IN_IP_PERIOD_S};
    eu_ratelimit_check(req, &ip, 1, done, arg);
}

/* The Redis set of the addresses account signed in from (arena). */
static const char *
known_key(struct eu_req *req, const char *account)
{
    return eu_arena_sprintf(req->arena, "%ssignin_known:%s", req->tenant->key_prefix, account);
}

struct account_count {
    struct eu_req *req;
    const char *account, *client;
    eu_ratelimit_done_cb done;
    void *arg;
};

static void
on_known_checked(struct redisReply *reply, void *arg)
{
    struct account_count *c = arg;
    struct eu_req *req = c->req;
    eu_req_enter(req);
    const struct eu_config *cfg = req->app->cfg;
    /* Redis down (NULL): counting fails open below as well. */
    bool known = reply && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
    int per = cfg->sign_ins_per_login_per_hour;
    struct eu_ratelimit limits[2] = {
        {"signin", eu_arena_sprintf(req->arena, "%s:%s", c->account, c->client), per,
         SIGN_IN_LOGIN_PERIOD_S},
        {"signin", c->account, per > 0 ? per * SIGN_IN_ACCOUNT_FACTOR : 0, SIGN_IN_LOGIN_PERIOD_S},
    };
    eu_ratelimit_check(req, limits, known ? 1 : 2, c->done, c->arg);
}

/* Counts one attempt on the account the lookup found (user_id, or 0 and
 * the login as typed) from this client: per account and address together,
 * and, unless the account signed in from this address before, per account
 * in all. Then done as eu_ratelimit_check() does. */
void
eu_oauth_count_account(struct eu_req *req, int64_t user_id, const char *login,
                       eu_ratelimit_done_cb done, void *arg)
{
    struct account_count *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->req = req;
    c->account = account_key(req, user_id, login);
    c->client = eu_ratelimit_client(req);
    c->done = done;
    c->arg = arg;
    if (req->app->cfg->sign_ins_per_login_per_hour <= 0) {
        done(req, 0, arg);
        return;
    }
    const char *argv[] = {"SISMEMBER", known_key(req, c->account), c->client};
    eu_redis_command(eu_tenant_redis(req->app, req->tenant), on_known_checked, c, 3, argv, NULL);
}

/* After a successful sign-in: this address is the owner's, and the
 * account's cap over all addresses no longer applies to it. */
void
eu_oauth_remember_address(struct eu_req *req, int64_t user_id)
{
    const char *key = known_key(req, account_key(req, user_id, NULL));
    const char *add[] = {"SADD", key, eu_ratelimit_client(req)};
    eu_redis_command(eu_tenant_redis(req->app, req->tenant), NULL, NULL, 3, add, NULL);
    char ttl[16];
    snprintf(ttl, sizeof(ttl), "%d", SIGN_IN_KNOWN_TTL_S);
    const char *expire[] = {"EXPIRE", key, ttl};
    eu_redis_command(eu_tenant_redis(req->app, req->tenant), NULL, NULL, 3, expire, NULL);
}
