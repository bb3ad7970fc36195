/*
 * Home feed storage in Redis (see feeds.h). A feed is a sorted set of status
 * ids scored by id, plus a sentinel member "0" (score 0) that marks the feed
 * as built: an empty set would vanish in Redis, and a feed that is missing
 * must be rebuilt from PostgreSQL rather than read as empty. Fan-out only
 * touches feeds that exist, so a flushed feed is never half-filled; the next
 * read rebuilds it whole.
 *
 * Scores are doubles, which cannot hold a 64-bit id exactly, so reads ask
 * Redis for a few more members than needed with inclusive bounds and apply
 * the exact bounds and order in C on the member strings.
 */
#include "eunha/feeds.h"

#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/redis.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"
#include "eunha/trends.h"

/* Members asked beyond the page to absorb score rounding (ids closer than
 * 2^5 may share a score). */
#define SCORE_SLACK 32
/* A feed nobody reads for this long leaves Redis (reads renew it); the
 * next read rebuilds it, so idle accounts of idle tenants cost no memory. */
#define FEED_TTL_S "1209600"
/* Keys per fan-out script call, to keep one call short. */
#define FANOUT_BATCH 256

/* A constant as SQL text: a statement's text is fixed when it is compiled. */
#define STR_(x) #x
#define STR(x) STR_(x)

enum {
    FEEDS_RECIPIENTS,
    FEEDS_REBUILD,
    FEEDS_HOME,
};

const struct eu_sql eu_feeds_sql[] = {
    /* Recipients: the author and local followers whose home rules admit the
     * status ($3 true when removing: every candidate). */
    [FEEDS_RECIPIENTS] =
        {"feeds.recipients",
         /* The candidates, as v(id): its author and its local followers
          * (follows.local, migration 0074: the remote ones' rows are not
          * read at all, however many there are). */
         "SELECT v.id FROM statuses s, LATERAL (SELECT s.account_id AS id UNION SELECT"
         " f.account_id FROM follows f WHERE f.tenant_id = $1 AND f.target_account_id ="
         " s.account_id AND f.local) v"
         " CROSS JOIN LATERAL eunha_is_home_feed_status($1, s.id, s.account_id, s.reblog_of_id,"
         " s.visibility, s.deleted_at, s.in_reply_to_account_id, v.id) hft"
         " WHERE s.tenant_id = $1 AND s.id = $2::bigint AND ($3::bool OR hft.ok)"},
    /* The whole feed as Redis keeps it, newest first: statuses of account
     * $2's home feed; the author set keeps the scan on the
     * statuses_account index. */
    [FEEDS_REBUILD] =
        {"feeds.rebuild",
         "SELECT s.id FROM statuses s CROSS JOIN LATERAL eunha_is_home_feed_status($1, s.id,"
         " s.account_id, s.reblog_of_id, s.visibility, s.deleted_at, s.in_reply_to_account_id,"
         " $2::bigint) hft WHERE s.tenant_id = $1 AND s.account_id IN (SELECT"
         " $2::bigint UNION SELECT target_account_id FROM follows WHERE tenant_id = $1 AND"
         " account_id = $2::bigint) AND hft.ok ORDER BY s.id DESC LIMIT " STR(EU_FEED_MAX)},
    /* One page straight from PostgreSQL, for when Redis is down: the same
     * statuses. */
    [FEEDS_HOME] =
        {"feeds.home",
         "SELECT s.id FROM statuses s CROSS JOIN LATERAL eunha_is_home_feed_status($1, s.id,"
         " s.account_id, s.reblog_of_id, s.visibility, s.deleted_at, s.in_reply_to_account_id,"
         " $2::bigint) hft WHERE s.tenant_id = $1 AND s.account_id IN (SELECT"
         " $2::bigint UNION SELECT target_account_id FROM follows WHERE tenant_id = $1 AND"
         " account_id = $2::bigint) AND hft.ok",
         "s.id", 3},
    {0},
};

void
eu_feed_home_key(const struct eu_tenant *t, int64_t account_id, char *buf, size_t len)
{
    _Static_assert(EU_FEED_KEY_SIZE >= EU_TENANT_KEY_PREFIX_SIZE + sizeof("feed:home:") + 20,
                   "a home feed key must fit");
    snprintf(buf, len, "%sfeed:home:%lld", t->key_prefix, (long long)account_id);
}

void
eu_feed_home_invalidate(struct eu_app *app, const struct eu_tenant *t, int64_t account_id)
{
    char key[EU_FEED_KEY_SIZE];
    eu_feed_home_key(t, account_id, key, sizeof(key));
    const char *argv[] = {"DEL", key};
    eu_redis_command(eu_tenant_redis(app, t), NULL, NULL, 2, argv, NULL);
    /* Whatever empties a home feed (blocks, mutes, domain blocks...) is
     * what a stream's shared renders filter by too. */
    eu_stream_viewer_changed(app, t, account_id);
}

/* ---------------------------------------------------------------- fan-out */

/* KEYS: feeds; ARGV: "add"|"rem", status id, EU_FEED_MAX. */
static const char FANOUT_LUA[] = "for _, k in ipairs(KEYS) do"
                                 " if redis.call('EXISTS', k) == 1 then"
                                 "  if ARGV[1] == 'add' then"
                                 "   redis.call('ZADD', k, ARGV[2], ARGV[2])"
                                 "   redis.call('ZREMRANGEBYRANK', k, 1, -(tonumber(ARGV[3]) + 1))"
                                 "  else redis.call('ZREM', k, ARGV[2]) end"
                                 " end "
                                 "end return 0";

struct fanout {
    struct eu_app *app;
    struct eu_tenant *tenant; /* holds a ref: this outlives the request */
    char status_id[24];
    bool remove;
};

static void
on_fanout_done(redisReply *reply, void *arg)
{
    if (!reply || reply->type == REDIS_REPLY_ERROR)
        eu_log_warn("feeds", "cannot fan out status: %s", reply ? reply->str : "redis unavailable");
}

/* One EVAL for ids[0..n-1]'s feeds. */
static void
send_fanout(struct fanout *fo, const int64_t *ids, size_t n)
{
    const char **argv = eu_xcalloc(n + 6, sizeof(char *));
    char **keys = eu_xcalloc(n, sizeof(char *));
    char numkeys[24], max[16];
    snprintf(numkeys, sizeof(numkeys), "%zu", n);
    snprintf(max, sizeof(max), "%d", EU_FEED_MAX);
    int argc = 0;
    argv[argc++] = "EVAL";
    argv[argc++] = FANOUT_LUA;
    argv[argc++] = numkeys;
    for (size_t i = 0; i < n; i++) {
        keys[i] = eu_xmalloc(EU_FEED_KEY_SIZE);
        eu_feed_home_key(fo->tenant, ids[i], keys[i], EU_FEED_KEY_SIZE);
        argv[argc++] = keys[i];
    }
    argv[argc++] = fo->remove ? "rem" : "add";
    argv[argc++] = fo->status_id;
    argv[argc++] = max;
    eu_redis_command(eu_tenant_redis(fo->app, fo->tenant), on_fanout_done, NULL, argc, argv, NULL);
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
    free(argv);
}

/* The feeds of ids[0..n-1], FANOUT_BATCH to an EVAL. */
static void
send_all(struct fanout *fo, const int64_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i += FANOUT_BATCH)
        send_fanout(fo, ids + i, n - i < FANOUT_BATCH ? n - i : FANOUT_BATCH);
}

static void
on_recipients(PGresult *res, enum eu_db_status st, void *arg)
{
    struct fanout *fo = arg;
    if (st != EU_DB_OK) {
        eu_log_warn("feeds", "cannot list recipients of status %s: %s", fo->status_id,
                    res ? PQresultErrorMessage(res) : "database unavailable");
    } else {
        size_t n = (size_t)PQntuples(res);
        int64_t *ids = eu_xcalloc(n ? n : 1, sizeof(*ids));
        for (size_t i = 0; i < n; i++)
            ids[i] = strtoll(PQgetvalue(res, (int)i, 0), NULL, 10);
        send_all(fo, ids, n);
        free(ids);
    }
    eu_tenant_unref(fo->tenant);
    free(fo);
}

void
eu_feed_status_fanout_ids(struct eu_app *app, struct eu_tenant *t, int64_t status_id,
                          const char *ids)
{
    eu_stream_status(app, t, status_id, false);
    /* A new status, as eu_feed_status_fanout()'s: the trends may move. */
    eu_trends_touch(app, t);
    struct fanout fo = {.app = app, .tenant = t};
    snprintf(fo.status_id, sizeof(fo.status_id), "%lld", (long long)status_id);
    size_t n;
    int64_t *list = eu_db_bigint_array(ids, &n);
    send_all(&fo, list, n);
    free(list);
}

void
eu_feed_status_fanout(struct eu_app *app, struct eu_tenant *t, int64_t status_id, bool remove)
{
    eu_stream_status(app, t, status_id, remove);
    /* Every new status or reblog may move the trends (src/social/trends_task.c). */
    if (!remove)
        eu_trends_touch(app, t);
    struct fanout *fo = eu_xcalloc(1, sizeof(*fo));
    fo->app = app;
    fo->tenant = t;
    eu_tenant_ref(fo->tenant);
    fo->remove = remove;
    snprintf(fo->status_id, sizeof(fo->status_id), "%lld", (long long)status_id);
    const char *params[] = {fo->status_id, remove ? "true" : "false"};
    eu_db_pool_stmt(eu_tenant_pool(app->registry, t), &eu_feeds_sql[FEEDS_RECIPIENTS], 2, params,
                    on_recipients, fo);
}

/* ------------------------------------------------------------------ reads */

/* KEYS[1]: feed; ARGV: "asc"|"desc", first bound, second bound, count, TTL.
 * nil when the feed is missing. */
static const char READ_LUA[] =
    "if redis.call('EXPIRE', KEYS[1], ARGV[5]) == 0 then return false end "
    "local ids "
    "if ARGV[1] == 'asc' then"
    " ids = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[3], 'LIMIT', 0, ARGV[4]) "
    "else"
    " ids = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[3], 'LIMIT', 0, ARGV[4]) "
    "end "
    /* One string, not an array: each element of a reply is two
     * allocations in hiredis, and a page's were a tenth of eunha's. */
    "return table.concat(ids, ',')";

struct home_read {
    struct eu_req *req;
    struct eu_page page;
    char key[EU_FEED_KEY_SIZE];
    eu_feed_page_cb cb;
    void *arg;
};

static int
cmp_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* A positive id in decimal, in the arena. */
static char *
id_text(struct eu_arena *a, int64_t id)
{
    char *p = eu_arena_alloc(a, 21);
    p[eu_id_text(id, p)] = '\0';
    return p;
}

/* Applies the page's exact bounds to candidate ids (any order), keeps the
 * newest (or, with min_id, the oldest) page->limit of them, and hands them
 * to the callback newest first. */
static void
finish_page(struct home_read *hr, int64_t *ids, size_t n)
{
    struct eu_page *p = &hr->page;
    int64_t max = p->max_id ? strtoll(p->max_id, NULL, 10) : INT64_MAX;
    int64_t since = p->since_id ? strtoll(p->since_id, NULL, 10) : 0;
    int64_t min = p->min_id ? strtoll(p->min_id, NULL, 10) : 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] > 0 && ids[i] < max && ids[i] > since && ids[i] > min)
            ids[k++] = ids[i];
    qsort(ids, k, sizeof(int64_t), cmp_desc);
    size_t lim = (size_t)p->limit, start = 0;
    if (k > lim) {
        /* min_id pages forward: the oldest entries above it. */
        start = p->min_id ? k - lim : 0;
        k = lim;
    }
    char **out = eu_arena_alloc(hr->req->arena, (k ? k : 1) * sizeof(char *));
    for (size_t i = 0; i < k; i++)
        out[i] = id_text(hr->req->arena, ids[start + i]);
    hr->cb(hr->req, out, k, hr->arg);
}

static void
on_rebuilt(struct eu_req *req, PGresult *res, void *arg)
{
    struct home_read *hr = arg;
    int n = PQntuples(res);
    /* Store the whole feed, sentinel first, in one ZADD. */
    const char **argv = eu_arena_alloc(req->arena, ((size_t)n * 2 + 4) * sizeof(char *));
    int argc = 0;
    argv[argc++] = "ZADD";
    argv[argc++] = hr->key;
    argv[argc++] = "0";
    argv[argc++] = "0";
    int64_t *ids = eu_arena_alloc(req->arena, ((size_t)n + 1) * sizeof(int64_t));
    for (int i = 0; i < n; i++) {
        const char *id = eu_arena_strdup(req->arena, PQgetvalue(res, i, 0));
        argv[argc++] = id;
        argv[argc++] = id;
        ids[i] = strtoll(id, NULL, 10);
    }
    eu_redis_command(eu_tenant_redis(req->app, req->tenant), NULL, NULL, argc, argv, NULL);
    const char *expire[] = {"EXPIRE", hr->key, FEED_TTL_S};
    eu_redis_command(eu_tenant_redis(req->app, req->tenant), NULL, NULL, 3, expire, NULL);
    finish_page(hr, ids, (size_t)n);
}

static void
rebuild(struct home_read *hr)
{
    struct eu_req *req = hr->req;
    const char *viewer = eu_req_viewer(req);
    const char *params[] = {viewer};
    eu_req_stmt(req, &eu_feeds_sql[FEEDS_REBUILD], 1, params, on_rebuilt, hr);
}

static void
on_page_sql(struct eu_req *req, PGresult *res, void *arg)
{
    struct home_read *hr = arg;
    int n = PQntuples(res);
    int64_t *ids = eu_arena_alloc(req->arena, ((size_t)n + 1) * sizeof(int64_t));
    for (int i = 0; i < n; i++)
        ids[i] = strtoll(PQgetvalue(res, i, 0), NULL, 10);
    finish_page(hr, ids, (size_t)n);
}

/* Redis is down: read the page straight from PostgreSQL. */
static void
read_from_sql(struct home_read *hr)
{
    struct eu_req *req = hr->req;
    const char *params[5];
    params[0] = eu_req_viewer(req);
    eu_page_params(&hr->page, params + 1);
    eu_req_stmt_page(req, &eu_feeds_sql[FEEDS_HOME], &hr->page, 5, params, on_page_sql, hr);
}

static void
on_read(redisReply *reply, void *arg)
{
    struct home_read *hr = arg;
    eu_req_enter(hr->req);
    if (!reply || reply->type == REDIS_REPLY_ERROR) {
        if (reply)
            eu_log_warn("feeds", "cannot read home feed: %s", reply->str);
        read_from_sql(hr);
        return;
    }
    if (reply->type != REDIS_REPLY_STRING) {
        rebuild(hr); /* no feed (false, a nil reply) */
        return;
    }
    /* "id,id,...": at most one id a comma and one more. */
    size_t cap = 1;
    for (size_t i = 0; i < reply->len; i++)
        cap += reply->str[i] == ',';
    int64_t *ids = eu_arena_alloc(hr->req->arena, cap * sizeof(int64_t));
    size_t n = 0;
    for (const char *p = reply->str, *end = p + reply->len; p < end && n < cap;) {
        const char *next;
        ids[n++] = eu_id_parse(p, &next);
        p = next < end && *next == ',' ? next + 1 : end;
    }
    finish_page(hr, ids, n);
}

void
eu_feed_home_page(struct eu_req *req, const struct eu_page *page, eu_feed_page_cb cb, void *arg)
{
    struct home_read *hr = eu_arena_calloc(req->arena, sizeof(*hr));
    hr->req = req;
    hr->page = *page;
    hr->cb = cb;
    hr->arg = arg;
    eu_feed_home_key(req->tenant, req->auth.account_id, hr->key, sizeof(hr->key));
    char count[16];
    snprintf(count, sizeof(count), "%d", page->limit + SCORE_SLACK);
    const char *argv[9] = {"EVAL", READ_LUA, "1", hr->key};
    if (page->min_id) {
        argv[4] = "asc";
        argv[5] = page->min_id;
        argv[6] = "+inf";
    } else {
        argv[4] = "desc";
        argv[5] = page->max_id ? page->max_id : "+inf";
        argv[6] = page->since_id ? page->since_id : "(0";
    }
    argv[7] = count;
    argv[8] = FEED_TTL_S;
    eu_redis_command(eu_tenant_redis(req->app, req->tenant), on_read, hr, 9, argv, NULL);
}
