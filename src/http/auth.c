/*
 * Token lookup with a per-tenant cache. The cache is a table of 64 slots
 * keyed by token hash, in sets of 4 (a token may sit in any slot of its
 * set): a bound small enough that a tenant's cache stays under 20 KiB (a
 * small instance has few live tokens). With one slot per token, two of a
 * ten-user tenant's tokens shared a slot about half the time and pushed
 * each other out on every request.
 *
 * Several processes may serve one tenant, and a revoke or a suspension in
 * one must stop the token in all of them at once. Each process subscribes
 * to "<prefix>:{t*}:auth" in Redis; whoever revokes a token publishes its
 * hash on the tenant's channel, and whoever suspends an account publishes
 * "*" (forget the tenant's whole cache). The cache is trusted only while
 * that subscription is live: while it is down a message could be missed,
 * so every request goes to the database, and when it comes back every
 * cache is dropped. A lookup that raced an invalidation is not cached. The
 * 1-minute TTL is only a backstop for a publish that never reached Redis.
 */
#include "eunha/auth.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/redis.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

#define CACHE_SLOTS 64
#define CACHE_WAYS 4
#define CACHE_TTL_SECONDS 60
#define CHANNEL "auth"

enum {
    AUTH_TOKEN,
};

const struct eu_sql eu_auth_sql[] = {
    [AUTH_TOKEN] = {"auth.token",
                    "SELECT t.id, t.application_id, t.user_id, u.account_id, t.scopes,"
                    " coalesce(a.suspended_at IS NOT NULL, false), coalesce(u.approved, true),"
                    " coalesce(a.moved_to_account_id IS NOT NULL, false),"
                    " coalesce(u.disabled, false),"
                    " CASE WHEN u.id IS NULL THEN 0 ELSE"
                    "  (SELECT r.permissions FROM eunha_role($1, u.role_id) r) END,"
                    " coalesce(u.confirmed_at IS NOT NULL, true)"
                    " FROM oauth_access_tokens t"
                    " LEFT JOIN users u ON u.tenant_id = $1 AND u.id = t.user_id"
                    " LEFT JOIN accounts a ON a.tenant_id = $1 AND a.id = u.account_id"
                    " WHERE t.tenant_id = $1 AND t.token_hash = $2 AND t.revoked_at IS NULL"},
    {0},
};

struct entry {
    char hash[65];
    time_t expires;
    int64_t token_id, app_id, user_id, account_id;
    bool moved;          /* the account moved away: most routes refuse it */
    bool disabled;       /* the staff disabled the login: every user route refuses it */
    int64_t permissions; /* EU_PERM_* of the user's role; a role change clears the cache */
    /* Bit i: eu_auth_known_scopes[i] was granted. A set, not the granted text, so
     * no list is too long to keep whole (a cut "write:favourites" once read
     * as "write", every write scope). */
    uint64_t scopes;
};

struct eu_auth_cache {
    struct entry slots[CACHE_SLOTS];
};

/* Bumped by every invalidation this process hears of (any tenant): a
 * database lookup that started before one may have read a row that is no
 * longer true, so it is not cached. The loop is single-threaded. */
static uint64_t invalidations;

/* Every scope Mastodon knows, in the order its server metadata lists them
 * (the OAuth metadata endpoint publishes this list). Bit i of a token's
 * cached scope set stands for entry i. */
const char *const eu_auth_known_scopes[] = {"read",
                                            "write",
                                            "write:accounts",
                                            "write:blocks",
                                            "write:bookmarks",
                                            "write:conversations",
                                            "write:favourites",
                                            "write:filters",
                                            "write:follows",
                                            "write:lists",
                                            "write:media",
                                            "write:mutes",
                                            "write:notifications",
                                            "write:reports",
                                            "write:statuses",
                                            "read:accounts",
                                            "read:blocks",
                                            "read:bookmarks",
                                            "read:favourites",
                                            "read:filters",
                                            "read:follows",
                                            "read:lists",
                                            "read:mutes",
                                            "read:notifications",
                                            "read:search",
                                            "read:statuses",
                                            "follow",
                                            "push",
                                            "profile",
                                            "admin:read",
                                            "admin:read:accounts",
                                            "admin:read:reports",
                                            "admin:read:domain_blocks",
                                            "admin:read:domain_allows",
                                            "admin:read:email_domain_blocks",
                                            "admin:read:canonical_email_blocks",
                                            "admin:read:ip_blocks",
                                            "admin:write",
                                            "admin:write:accounts",
                                            "admin:write:reports",
                                            "admin:write:domain_blocks",
                                            "admin:write:domain_allows",
                                            "admin:write:email_domain_blocks",
                                            "admin:write:canonical_email_blocks",
                                            "admin:write:ip_blocks",
                                            NULL};

/* The known scopes named in list (words separated by spaces or '+'); any
 * other word grants nothing. */
static uint64_t
scope_bits(const char *list)
{
    _Static_assert(sizeof(eu_auth_known_scopes) / sizeof(eu_auth_known_scopes[0]) - 1 <= 64,
                   "scopes must fit a uint64_t");
    uint64_t bits = 0;
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == '+')
            p++;
        size_t n = strcspn(p, " +");
        for (int i = 0; n && eu_auth_known_scopes[i]; i++)
            if (strlen(eu_auth_known_scopes[i]) == n && strncmp(eu_auth_known_scopes[i], p, n) == 0)
                bits |= (uint64_t)1 << i;
        p += n;
    }
    return bits;
}

/* The scopes of bits as a space-separated list, in eu_auth_known_scopes order.
 * Owned by the arena. */
static const char *
scope_text(struct eu_arena *a, uint64_t bits)
{
    size_t len = 1;
    for (int i = 0; eu_auth_known_scopes[i]; i++)
        if (bits & ((uint64_t)1 << i))
            len += strlen(eu_auth_known_scopes[i]) + 1;
    char *out = eu_arena_alloc(a, len), *o = out;
    for (int i = 0; eu_auth_known_scopes[i]; i++) {
        if (!(bits & ((uint64_t)1 << i)))
            continue;
        if (o != out)
            *o++ = ' ';
        size_t n = strlen(eu_auth_known_scopes[i]);
        memcpy(o, eu_auth_known_scopes[i], n);
        o += n;
    }
    *o = '\0';
    return out;
}

static bool
has_word(const char *list, const char *word, size_t wlen)
{
    const char *p = list;
    while (p && *p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == wlen && strncmp(p, word, wlen) == 0)
            return true;
        p += n;
    }
    return false;
}

bool
eu_auth_scope_allows(const char *granted, const char *required)
{
    if (!required || !*required)
        return true;
    if (!granted)
        return false;
    size_t rlen = strlen(required);
    if (has_word(granted, required, rlen))
        return true;
    /* "read" covers "read:x"; "admin:read" covers "admin:read:x". */
    const char *colon = strrchr(required, ':');
    if (colon && has_word(granted, required, (size_t)(colon - required)))
        return true;
    static const char *const follow_covers[] = {
        "read:follows", "write:follows", "read:blocks", "write:blocks",
        "read:mutes",   "write:mutes",   NULL};
    for (int i = 0; follow_covers[i]; i++)
        if (strcmp(required, follow_covers[i]) == 0 && has_word(granted, "follow", 6))
            return true;
    return false;
}

bool
eu_auth_scopes_are_valid(const char *scopes)
{
    const char *p = scopes;
    bool any = false;
    while (*p) {
        while (*p == ' ' || *p == '+')
            p++;
        size_t n = strcspn(p, " +");
        if (n == 0)
            break;
        bool ok = false;
        for (int i = 0; eu_auth_known_scopes[i] && !ok; i++)
            ok =
                strlen(eu_auth_known_scopes[i]) == n && strncmp(eu_auth_known_scopes[i], p, n) == 0;
        if (!ok)
            return false;
        any = true;
        p += n;
    }
    return any;
}

/* The first slot of hash's set. */
static struct entry *
set_for(struct eu_auth_cache *c, const char *hash)
{
    /* The hash is already uniform: its first hex digits pick the set. */
    unsigned v = (unsigned)strtoul((char[]){hash[0], hash[1], hash[2], 0}, NULL, 16);
    return &c->slots[(v % (CACHE_SLOTS / CACHE_WAYS)) * CACHE_WAYS];
}

/* hash's entry, or NULL. */
static struct entry *
slot_find(struct eu_auth_cache *c, const char *hash)
{
    struct entry *set = set_for(c, hash);
    for (int i = 0; i < CACHE_WAYS; i++)
        if (strcmp(set[i].hash, hash) == 0)
            return &set[i];
    return NULL;
}

/* Where hash's entry goes: its own slot, else a free one, else the one
 * closest to expiring. */
static struct entry *
slot_for(struct eu_auth_cache *c, const char *hash)
{
    struct entry *e = slot_find(c, hash);
    if (e)
        return e;
    struct entry *set = set_for(c, hash);
    e = &set[0];
    for (int i = 0; i < CACHE_WAYS && e->hash[0]; i++)
        if (!set[i].hash[0] || set[i].expires < e->expires)
            e = &set[i];
    return e;
}

static void
cache_dispose(void *data)
{
    free(data);
}

/* The cache is a tenant slot: freed with the tenant or when it sleeps. */
static const struct eu_tenant_slot_ops cache_ops = {cache_dispose, NULL};

static void
forget_here(struct eu_tenant *t, const char *token_hash)
{
    invalidations++;
    struct eu_auth_cache *c = eu_tenant_slot(t, EU_SLOT_AUTH);
    if (!c)
        return;
    struct entry *e = slot_find(c, token_hash);
    if (e)
        memset(e, 0, sizeof(*e));
}

static void
clear_here(struct eu_tenant *t)
{
    invalidations++;
    eu_tenant_slot_release(t, EU_SLOT_AUTH);
}

/* Tells the other processes (and this one, harmlessly) through Redis. */
static void
publish(struct eu_app *app, const struct eu_tenant *t, const char *what)
{
    char channel[EU_TENANT_KEY_PREFIX_SIZE + sizeof(CHANNEL)];
    snprintf(channel, sizeof(channel), "%s" CHANNEL, t->key_prefix);
    const char *argv[] = {"PUBLISH", channel, what};
    if (eu_redis_command(eu_tenant_redis(app, t), NULL, NULL, 3, argv, NULL) < 0)
        eu_log_warn("auth",
                    "cannot tell other processes of a revocation: redis is down; "
                    "their caches expire within %d s",
                    CACHE_TTL_SECONDS);
}

void
eu_auth_cache_forget(struct eu_app *app, struct eu_tenant *t, const char *token_hash)
{
    forget_here(t, token_hash);
    publish(app, t, token_hash);
}

void
eu_auth_cache_clear(struct eu_app *app, struct eu_tenant *t)
{
    clear_here(t);
    publish(app, t, "*");
}

static void
clear_one(struct eu_tenant *t, void *arg)
{
    clear_here(t);
}

static void
on_subscribed(void *arg)
{
    struct eu_app *app = arg;
    eu_registry_each(app->registry, clear_one, NULL);
}

/* channel is "<prefix>:{t<ID>}:auth"; the pattern already matched the
 * rest, so only the id is read. */
static void
on_message(const char *channel, const char *msg, size_t len, void *arg)
{
    struct eu_app *app = arg;
    const char *brace = strstr(channel, ":{t");
    if (!brace)
        return;
    char *end;
    long long id = strtoll(brace + 3, &end, 10);
    if (*end != '}')
        return;
    struct eu_tenant *t = eu_registry_find_id(app->registry, id);
    if (!t)
        return; /* not loaded here: nothing cached */
    if (len == 1 && msg[0] == '*')
        clear_here(t);
    else if (len == 64)
        forget_here(t, msg);
}

/* Revocations travel on each tenant's own Redis, so this process listens
 * on every Redis: the main one from the start, a placement's as the
 * registry makes it. A cache is used only while its tenant's Redis's
 * subscription is up (eu_auth_authenticate()). */
static void
listen_on(struct eu_redis *redis, void *arg)
{
    struct eu_app *app = arg;
    /* The prefix holds no glob characters (config refuses them). */
    char pattern[EU_REDIS_PREFIX_MAX + 16];
    snprintf(pattern, sizeof(pattern), "%s:{t*}:" CHANNEL, app->cfg->redis_prefix);
    eu_redis_psubscribe(redis, pattern, on_message, on_subscribed, app);
}

void
eu_auth_listen(struct eu_app *app)
{
    listen_on(app->redis, app);
    eu_registry_on_redis(app->registry, listen_on, app);
}

static void
fill_from_entry(struct eu_req *req, const struct entry *e)
{
    req->auth.present = true;
    req->auth.token_id = e->token_id;
    req->auth.app_id = e->app_id;
    req->auth.user_id = e->user_id;
    req->auth.account_id = e->account_id;
    req->auth.moved = e->moved;
    req->auth.disabled = e->disabled;
    req->auth.permissions = e->permissions;
    req->auth.scopes = scope_text(req->arena, e->scopes);
}

struct lookup {
    struct eu_req *req;
    eu_auth_done_cb done;
    uint64_t invalidations; /* when the lookup started */
};

static int64_t
ll(const PGresult *r, int col)
{
    return PQgetisnull(r, 0, col) ? 0 : strtoll(PQgetvalue(r, 0, col), NULL, 10);
}

static void
on_token(PGresult *res, enum eu_db_status st, void *arg)
{
    struct lookup *l = arg;
    struct eu_req *req = l->req;
    eu_req_enter(req);
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    /* A suspended user's tokens stop working at once. */
    if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 5), "f") == 0) {
        struct entry e = {0};
        memcpy(e.hash, req->auth.token_hash, sizeof(e.hash));
        e.expires = time(NULL) + CACHE_TTL_SECONDS;
        e.token_id = ll(res, 0);
        e.app_id = ll(res, 1);
        e.user_id = ll(res, 2);
        e.account_id = ll(res, 3);
        e.scopes = scope_bits(PQgetvalue(res, 0, 4));
        e.moved = strcmp(PQgetvalue(res, 0, 7), "t") == 0;
        e.disabled = strcmp(PQgetvalue(res, 0, 8), "t") == 0;
        e.permissions = ll(res, 9);
        fill_from_entry(req, &e);
        /* Not cached while pending or unconfirmed, so approval and
         * confirmation take effect at once; nor when an invalidation came
         * in since the row was read. */
        bool pending = strcmp(PQgetvalue(res, 0, 6), "t") != 0;
        bool unconfirmed = strcmp(PQgetvalue(res, 0, 10), "t") != 0;
        req->auth.pending_approval = pending;
        req->auth.unconfirmed = unconfirmed;
        if (pending || unconfirmed) {
            /* not cached */
        } else if (l->invalidations == invalidations) {
            struct eu_tenant *t = req->tenant;
            struct eu_auth_cache *c = eu_tenant_slot(t, EU_SLOT_AUTH);
            if (!c) {
                c = eu_xcalloc(1, sizeof(*c));
                eu_tenant_slot_set(t, EU_SLOT_AUTH, c, &cache_ops);
            }
            *slot_for(c, e.hash) = e;
        }
    }
    l->done(req);
}

void
eu_auth_authenticate(struct eu_req *req, eu_auth_done_cb done)
{
    const char *h = eu_req_header(req, "Authorization");
    const char *token = NULL;
    if (h && strncasecmp(h, "Bearer ", 7) == 0)
        token = h + 7;
    else
        token = eu_req_query(req, "access_token");
    /* Browsers cannot set headers on a WebSocket: the streaming API takes
     * the token as the subprotocol too (Mastodon's streaming server does). */
    if (!token)
        token = eu_req_header(req, "Sec-WebSocket-Protocol");
    while (token && *token == ' ')
        token++;
    if (!token || !*token || strlen(token) > 512) {
        done(req);
        return;
    }
    eu_auth_token_hash(token, req->auth.token_hash);
    struct eu_tenant *t = req->tenant;
    /* Without the subscription this process could miss a revocation. */
    struct eu_auth_cache *cache = eu_redis_is_subscribed(eu_tenant_redis(req->app, t))
                                      ? eu_tenant_slot(t, EU_SLOT_AUTH)
                                      : NULL;
    if (cache) {
        struct entry *e = slot_find(cache, req->auth.token_hash);
        if (e && e->expires > time(NULL)) {
            fill_from_entry(req, e);
            done(req);
            return;
        }
    }
    struct lookup *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->req = req;
    l->done = done;
    l->invalidations = invalidations;
    const char *params[] = {req->auth.token_hash};
    eu_db_pool_stmt(eu_tenant_pool(req->app->registry, t), &eu_auth_sql[AUTH_TOKEN], 1, params,
                    on_token, l);
}

bool
eu_auth_permit(struct eu_req *req, int64_t any_of)
{
    if (req->auth.user_id && (req->auth.permissions & any_of))
        return true;
    eu_req_reply_error(req, 403, "This action is not allowed");
    return false;
}
