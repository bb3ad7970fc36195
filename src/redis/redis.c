/*
 * The shared Redis connection. hiredis's libevent adapter puts the socket on
 * our loop. A disconnect schedules a reconnect with exponential backoff
 * (100 ms doubling to 5 s), so a Redis restart costs a few failed cache reads
 * and nothing else.
 *
 * hiredis 0.14 has no command timeout, and a Redis that accepts but never
 * answers (stopped, swapping, a dead peer behind a live proxy) would hold
 * every request that reads from it. Each command therefore carries a
 * deadline: when one passes, the caller gets NULL (its fallback) at once,
 * and the connection is dropped and re-made with backoff, so the commands
 * behind it fail fast instead of each waiting out its own deadline.
 */
#include "eunha/redis.h"

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/log.h"
#include "eunha/mem.h"

struct eu_redis {
    struct event_base *base;
    char *host;
    char *unix_path;
    int port;
    int db;
    redisAsyncContext *ac;
    bool connected;
    bool freeing;
    int backoff_ms;
    int timeout_ms;
    struct event *retry;
};

struct pending {
    struct eu_redis *r;
    eu_redis_reply_cb cb; /* NULL once answered by the deadline */
    void *arg;
    struct event *deadline;
};

static void start_connect(struct eu_redis *r);

static void
schedule_retry(struct eu_redis *r)
{
    if (r->freeing)
        return;
    r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : 100;
    if (r->backoff_ms > 5000)
        r->backoff_ms = 5000;
    struct timeval tv = {r->backoff_ms / 1000, (r->backoff_ms % 1000) * 1000};
    event_add(r->retry, &tv);
}

static void
on_connect(const redisAsyncContext *ac, int status)
{
    struct eu_redis *r = ac->data;
    if (status != REDIS_OK) {
        eu_log_warn("redis", "cannot connect: %s", ac->errstr);
        r->ac = NULL; /* hiredis frees the context after this callback */
        schedule_retry(r);
        return;
    }
    r->connected = true;
    r->backoff_ms = 0;
    eu_log_info("redis", "connected");
    if (r->db) {
        char db[16];
        snprintf(db, sizeof(db), "%d", r->db);
        redisAsyncCommand(r->ac, NULL, NULL, "SELECT %s", db);
    }
}

static void
on_disconnect(const redisAsyncContext *ac, int status)
{
    struct eu_redis *r = ac->data;
    r->connected = false;
    r->ac = NULL;
    if (r->freeing)
        return;
    eu_log_warn("redis", "disconnected: %s", status == REDIS_OK ? "closed" : ac->errstr);
    schedule_retry(r);
}

static void
on_retry(evutil_socket_t fd, short what, void *arg)
{
    start_connect(arg);
}

static void
start_connect(struct eu_redis *r)
{
    redisAsyncContext *ac =
        r->unix_path ? redisAsyncConnectUnix(r->unix_path) : redisAsyncConnect(r->host, r->port);
    if (!ac || ac->err) {
        eu_log_warn("redis", "cannot connect: %s", ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        schedule_retry(r);
        return;
    }
    ac->data = r;
    redisLibeventAttach(ac, r->base);
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    r->ac = ac;
}

static int
parse_url(struct eu_redis *r, const char *url, char *err, size_t errlen)
{
    if (strncmp(url, "unix://", 7) == 0) {
        r->unix_path = eu_xstrdup(url + 7);
        return 0;
    }
    if (strncmp(url, "redis://", 8) != 0) {
        snprintf(err, errlen, "redis url '%s' must start with redis:// or unix://", url);
        return -1;
    }
    const char *p = url + 8;
    const char *at = strchr(p, '@');
    if (at)
        p = at + 1; /* no AUTH support yet: loopback servers */
    const char *slash = strchr(p, '/');
    size_t hostport_len = slash ? (size_t)(slash - p) : strlen(p);
    char hostport[256];
    if (hostport_len == 0 || hostport_len >= sizeof(hostport)) {
        snprintf(err, errlen, "redis url '%s' has no host", url);
        return -1;
    }
    memcpy(hostport, p, hostport_len);
    hostport[hostport_len] = '\0';
    char *colon = strrchr(hostport, ':');
    r->port = 6379;
    if (colon) {
        *colon = '\0';
        r->port = atoi(colon + 1);
        if (r->port <= 0 || r->port > 65535) {
            snprintf(err, errlen, "redis url '%s' has a bad port", url);
            return -1;
        }
    }
    r->host = eu_xstrdup(hostport);
    r->db = slash && slash[1] ? atoi(slash + 1) : 0;
    return 0;
}

struct eu_redis *
eu_redis_new(struct event_base *base, const char *url, int timeout_ms, char *err, size_t errlen)
{
    struct eu_redis *r = eu_xcalloc(1, sizeof(*r));
    r->base = base;
    r->timeout_ms = timeout_ms > 0 ? timeout_ms : 1000;
    if (parse_url(r, url, err, errlen) < 0) {
        free(r->host);
        free(r->unix_path);
        free(r);
        return NULL;
    }
    r->retry = evtimer_new(base, on_retry, r);
    start_connect(r);
    return r;
}

void
eu_redis_free(struct eu_redis *r)
{
    if (!r)
        return;
    r->freeing = true;
    if (r->ac)
        redisAsyncFree(r->ac); /* runs pending callbacks with NULL */
    event_free(r->retry);
    free(r->host);
    free(r->unix_path);
    free(r);
}

bool
eu_redis_is_connected(const struct eu_redis *r)
{
    return r && r->connected;
}

static void
on_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct pending *p = privdata;
    event_free(p->deadline);
    if (p->cb)
        p->cb(reply, p->arg);
    free(p);
}

/* The command is overdue: answer its caller now and drop the connection.
 * hiredis still owns p and hands it to on_reply (with NULL) as it frees the
 * context, which is where p is freed. */
static void
on_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct pending *p = arg;
    struct eu_redis *r = p->r;
    eu_redis_reply_cb cb = p->cb;
    p->cb = NULL;
    if (cb)
        cb(NULL, p->arg);
    if (r->ac && !r->freeing) {
        eu_log_warn("redis", "no reply within %d ms: dropping the connection", r->timeout_ms);
        redisAsyncContext *ac = r->ac;
        /* Callers run during the free; their new commands must fail fast. */
        r->ac = NULL;
        r->connected = false;
        redisAsyncFree(ac);
        if (!evtimer_pending(r->retry, NULL))
            schedule_retry(r);
    }
}

struct deferred {
    eu_redis_reply_cb cb;
    void *arg;
};

static void
on_deferred(evutil_socket_t fd, short what, void *arg)
{
    struct deferred *d = arg;
    d->cb(NULL, d->arg);
    free(d);
}

int
eu_redis_command(struct eu_redis *r, eu_redis_reply_cb cb, void *arg, int argc, const char **argv,
                 const size_t *argvlen)
{
    if (r && r->connected && r->ac) {
        struct pending *p = eu_xmalloc(sizeof(*p));
        p->r = r;
        p->cb = cb;
        p->arg = arg;
        p->deadline = evtimer_new(r->base, on_deadline, p);
        if (redisAsyncCommandArgv(r->ac, on_reply, p, argc, argv, argvlen) == REDIS_OK) {
            struct timeval tv = {r->timeout_ms / 1000, (r->timeout_ms % 1000) * 1000};
            event_add(p->deadline, &tv);
            return 0;
        }
        event_free(p->deadline);
        free(p);
    }
    if (cb) {
        struct deferred *d = eu_xmalloc(sizeof(*d));
        d->cb = cb;
        d->arg = arg;
        event_base_once(r->base, -1, EV_TIMEOUT, on_deferred, d, NULL);
    }
    return -1;
}
