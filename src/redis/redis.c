/*
 * The shared Redis connection, on our loop through an adapter of our own
 * (see "Loop adapter" below). A disconnect schedules a reconnect with
 * exponential backoff (100 ms doubling to 1 s), so a Redis restart costs a
 * few failed cache reads and nothing else. The cap is short because every
 * second the subscriber is away, stream events are lost; a refused connect
 * a second costs nothing. Who keeps state in Redis that a restart may lose
 * hears of each new command connection (eu_redis_on_connect()).
 *
 * hiredis 0.14 has no command timeout, and a Redis that accepts but never
 * answers (stopped, swapping, a dead peer behind a live proxy) would hold
 * every request that reads from it. Each command therefore carries a
 * deadline: when one passes, the caller gets NULL (its fallback) at once,
 * and the connection is dropped and re-made with backoff, so the commands
 * behind it fail fast instead of each waiting out its own deadline.
 *
 * A connection in subscribe mode can send nothing else, so the one pattern
 * subscription gets a second connection (a "link" like the first, with its
 * own backoff). A link sends AUTH first when the URL has a password, and
 * counts as up only once Redis accepted it, so no command can race ahead
 * of AUTH.
 */
#include "eunha/redis.h"

#include <ctype.h>
#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/log.h"
#include "eunha/mem.h"

/* One connection and its reconnect state. */
struct link {
    struct eu_redis *r;
    const char *what; /* "commands" or "subscriber", for logs */
    redisAsyncContext *ac;
    bool ready; /* connected, authenticated, database selected */
    int backoff_ms;
    /* Reconnect backoff while down; while AUTH is unanswered, its deadline. */
    struct event *retry;
    void (*on_ready)(struct link *l);
};

struct eu_redis {
    struct event_base *base;
    struct eu_redis_target target;
    char name[96]; /* "host:port" or the socket, for logs: a fleet has several */
    bool freeing;
    int timeout_ms;
    struct link cmd;
    /* The subscription, once eu_redis_psubscribe() made it. */
    struct link sub;
    char *pattern;
    eu_redis_message_cb on_message;
    eu_redis_subscribed_cb on_subscribed;
    void *sub_arg;
    bool subscribed; /* Redis confirmed the pattern on the live link */
    /* Plain channels (eu_redis_channels_listen()), on the same link. */
    eu_redis_message_cb on_channel;
    eu_redis_subscribed_cb on_channels_ready;
    void *channel_arg;
    /* eu_redis_on_connect(): each time the command link is up. */
    eu_redis_subscribed_cb on_cmd_ready;
    void *cmd_ready_arg;
};

struct pending {
    struct eu_redis *r;
    eu_redis_reply_cb cb; /* NULL once answered by the deadline */
    void *arg;
    struct event *deadline;
};

static void start_connect(struct link *l);

static void
schedule_retry(struct link *l)
{
    if (l->r->freeing)
        return;
    l->backoff_ms = l->backoff_ms ? l->backoff_ms * 2 : 100;
    if (l->backoff_ms > 1000)
        l->backoff_ms = 1000;
    struct timeval tv = {l->backoff_ms / 1000, (l->backoff_ms % 1000) * 1000};
    event_add(l->retry, &tv);
}

/* Closes a link's connection from our side once its pending replies are
 * in (so it may be called from one of its reply callbacks); on_disconnect
 * then schedules the retry. */
static void
drop(struct link *l)
{
    if (l->ac && !l->r->freeing)
        redisAsyncDisconnect(l->ac);
}

static void
on_select(redisAsyncContext *ac, void *reply, void *privdata)
{
    redisReply *rep = reply;
    struct link *l = privdata;
    if (rep && rep->type == REDIS_REPLY_ERROR) {
        eu_log_warn("redis", "cannot select database %d: %s", l->r->target.db, rep->str);
        drop(l);
    }
}

static void
become_ready(struct link *l)
{
    l->ready = true;
    l->backoff_ms = 0;
    event_del(l->retry); /* the AUTH deadline */
    eu_log_info("redis", "connected (%s) to '%s'", l->what, l->r->name);
    if (l->on_ready)
        l->on_ready(l);
}

static void
on_auth(redisAsyncContext *ac, void *reply, void *privdata)
{
    redisReply *rep = reply;
    struct link *l = privdata;
    if (!rep)
        return; /* disconnected: on_disconnect retries */
    if (rep->type == REDIS_REPLY_ERROR) {
        /* Retried with backoff: the password may be fixed on the server. */
        eu_log_error("redis", "authentication refused (%s): %s", l->what, rep->str);
        drop(l);
        return;
    }
    become_ready(l);
}

static void
on_connect(const redisAsyncContext *ac, int status)
{
    struct link *l = ac->data;
    if (status != REDIS_OK) {
        eu_log_warn("redis", "cannot connect (%s) to '%s': %s", l->what, l->r->name, ac->errstr);
        l->ac = NULL; /* hiredis frees the context after this callback */
        schedule_retry(l);
        return;
    }
    const struct eu_redis_target *t = &l->r->target;
    /* hiredis sends in order, so AUTH and SELECT go before anything else. */
    if (t->password) {
        /* A peer that accepts but never answers would leave the link half
         * up for good, as no command deadline covers AUTH. */
        struct timeval tv = {l->r->timeout_ms / 1000, (l->r->timeout_ms % 1000) * 1000};
        event_add(l->retry, &tv);
        const char *argv[] = {"AUTH", t->user ? t->user : t->password, t->password};
        redisAsyncCommandArgv(l->ac, on_auth, l, t->user ? 3 : 2, argv, NULL);
    }
    /* A subscriber needs no database: channels are server-wide. */
    if (t->db && l == &l->r->cmd) {
        char db[16];
        snprintf(db, sizeof(db), "%d", t->db);
        const char *argv[] = {"SELECT", db};
        redisAsyncCommandArgv(l->ac, on_select, l, 2, argv, NULL);
    }
    if (!t->password)
        become_ready(l);
}

static void
on_disconnect(const redisAsyncContext *ac, int status)
{
    struct link *l = ac->data;
    struct eu_redis *r = l->r;
    l->ready = false;
    l->ac = NULL;
    if (l == &r->sub)
        r->subscribed = false;
    if (r->freeing)
        return;
    eu_log_warn("redis", "disconnected (%s) from '%s': %s", l->what, l->r->name,
                status == REDIS_OK ? "closed" : ac->errstr);
    schedule_retry(l);
}

static void
on_retry(evutil_socket_t fd, short what, void *arg)
{
    struct link *l = arg;
    if (l->ac) {
        eu_log_warn("redis", "no answer to AUTH within %d ms (%s): reconnecting", l->r->timeout_ms,
                    l->what);
        redisAsyncContext *ac = l->ac;
        l->ac = NULL;
        redisAsyncFree(ac); /* on_disconnect schedules the retry */
        if (!evtimer_pending(l->retry, NULL))
            schedule_retry(l);
        return;
    }
    start_connect(l);
}

/* ------------------------------------------------------------ loop adapter */

/*
 * Why not hiredis's libevent adapter: in 0.14 its read and write events are
 * one-shot, so each command cost four epoll_ctl calls (write interest on,
 * off again when it fired, read interest off when the reply came, on
 * again): a third of the system calls of a timeline page, at a few
 * microseconds each in a VM. Here the read event stays registered, and a
 * command is written at the end of the loop's current round by an event
 * made active (no system call; commands queued in the same round go out in
 * one write). Only a socket still connecting, or one that did not take a
 * whole write, waits for EV_WRITE.
 */
struct adapter {
    redisAsyncContext *ac;
    struct event *rev;   /* EV_READ | EV_PERSIST */
    struct event *wev;   /* EV_WRITE, one-shot */
    struct event *flush; /* no socket: made active to write */
    bool in_flush;       /* redisAsyncHandleWrite() running from flush */
};

static void
ad_on_read(evutil_socket_t fd, short what, void *arg)
{
    struct adapter *a = arg;
    redisAsyncHandleRead(a->ac);
}

static void
ad_on_write(evutil_socket_t fd, short what, void *arg)
{
    struct adapter *a = arg;
    redisAsyncHandleWrite(a->ac);
}

static void
ad_on_flush(evutil_socket_t fd, short what, void *arg)
{
    struct adapter *a = arg;
    /* Cleared by ad_add_read(), which hiredis calls last when the write
     * went well; on an error a is freed before this returns. */
    a->in_flush = true;
    redisAsyncHandleWrite(a->ac);
}

static void
ad_add_read(void *data)
{
    struct adapter *a = data;
    a->in_flush = false;
    if (!event_pending(a->rev, EV_READ, NULL))
        event_add(a->rev, NULL);
}

static void
ad_del_read(void *data)
{
    struct adapter *a = data;
    event_del(a->rev);
}

static void
ad_add_write(void *data)
{
    struct adapter *a = data;
    /* A write that did not finish (in_flush) waits for the socket; so
     * does a connect, whose completion hiredis learns from EV_WRITE. */
    if ((a->ac->c.flags & REDIS_CONNECTED) && !a->in_flush)
        event_active(a->flush, EV_WRITE, 0);
    else
        event_add(a->wev, NULL);
}

static void
ad_del_write(void *data)
{
    struct adapter *a = data;
    event_del(a->wev);
}

static void
ad_cleanup(void *data)
{
    struct adapter *a = data;
    event_free(a->rev);
    event_free(a->wev);
    event_free(a->flush);
    free(a);
}

static void
ad_attach(redisAsyncContext *ac, struct event_base *base)
{
    struct adapter *a = eu_xcalloc(1, sizeof(*a));
    a->ac = ac;
    a->rev = event_new(base, ac->c.fd, EV_READ | EV_PERSIST, ad_on_read, a);
    a->wev = event_new(base, ac->c.fd, EV_WRITE, ad_on_write, a);
    a->flush = event_new(base, -1, 0, ad_on_flush, a);
    ac->ev.addRead = ad_add_read;
    ac->ev.delRead = ad_del_read;
    ac->ev.addWrite = ad_add_write;
    ac->ev.delWrite = ad_del_write;
    ac->ev.cleanup = ad_cleanup;
    ac->ev.data = a;
    /* As hiredis's own adapter: read and wait for the connect. */
    event_add(a->rev, NULL);
    event_add(a->wev, NULL);
}

static void
start_connect(struct link *l)
{
    const struct eu_redis_target *t = &l->r->target;
    if (!t->host && !t->unix_path)
        return; /* eu_redis_new_down(): never up */
    redisAsyncContext *ac =
        t->unix_path ? redisAsyncConnectUnix(t->unix_path) : redisAsyncConnect(t->host, t->port);
    if (!ac || ac->err) {
        eu_log_warn("redis", "cannot connect (%s): %s", l->what, ac ? ac->errstr : "out of memory");
        if (ac)
            redisAsyncFree(ac);
        schedule_retry(l);
        return;
    }
    ac->data = l;
    ad_attach(ac, l->r->base);
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    l->ac = ac;
}

static void
link_init(struct eu_redis *r, struct link *l, const char *what, void (*on_ready)(struct link *))
{
    l->r = r;
    l->what = what;
    l->on_ready = on_ready;
    l->retry = evtimer_new(r->base, on_retry, l);
}

static void
link_release(struct link *l)
{
    if (l->ac)
        redisAsyncFree(l->ac); /* runs pending callbacks with NULL */
    if (l->retry)
        event_free(l->retry);
}

/* ------------------------------------------------------------ URLs */

/* Decodes %XX escapes of n bytes at s; NULL for a bad escape. Caller frees. */
static char *
percent_decode(const char *s, size_t n)
{
    char *out = eu_xmalloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            *o++ = s[i];
            continue;
        }
        if (i + 2 >= n || !isxdigit((unsigned char)s[i + 1]) ||
            !isxdigit((unsigned char)s[i + 2])) {
            free(out);
            return NULL;
        }
        char hex[3] = {s[i + 1], s[i + 2], 0};
        *o++ = (char)strtol(hex, NULL, 16);
        i += 2;
    }
    *o = '\0';
    return out;
}

void
eu_redis_target_release(struct eu_redis_target *t)
{
    free(t->host);
    free(t->unix_path);
    free(t->user);
    if (t->password) {
        /* Not left behind in freed memory. */
        memset(t->password, 0, strlen(t->password));
        free(t->password);
    }
    memset(t, 0, sizeof(*t));
}

static int
parse_fail(struct eu_redis_target *t, const char *url, const char *why, char *err, size_t errlen)
{
    char *shown = eu_log_redact_url(url);
    snprintf(err, errlen, "redis url '%s' %s", shown, why);
    free(shown);
    eu_redis_target_release(t);
    return -1;
}

int
eu_redis_url_parse(const char *url, struct eu_redis_target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    if (strncmp(url, "unix://", 7) == 0) {
        if (!url[7])
            return parse_fail(t, url, "has no socket path", err, errlen);
        t->unix_path = eu_xstrdup(url + 7);
        return 0;
    }
    if (strncmp(url, "redis://", 8) != 0)
        return parse_fail(t, url, "must start with redis:// or unix://", err, errlen);
    const char *p = url + 8;
    size_t authority = strcspn(p, "/?#");
    /* The last '@' ends the userinfo: a password may hold one unescaped. */
    const char *at = NULL;
    for (size_t i = 0; i < authority; i++)
        if (p[i] == '@')
            at = p + i;
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (!colon) {
            /* Not echoed: what stands there may well be a password. */
            snprintf(err, errlen,
                     "redis url has a user but no password (write ':password@' or "
                     "'user:password@')");
            eu_redis_target_release(t);
            return -1;
        }
        if (colon > p && !(t->user = percent_decode(p, (size_t)(colon - p))))
            return parse_fail(t, url, "has a bad %-escape in its user", err, errlen);
        t->password = percent_decode(colon + 1, (size_t)(at - colon - 1));
        if (!t->password)
            return parse_fail(t, url, "has a bad %-escape in its password", err, errlen);
        if (!t->password[0])
            return parse_fail(t, url, "has an empty password", err, errlen);
        authority -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    char hostport[256];
    if (authority == 0 || authority >= sizeof(hostport))
        return parse_fail(t, url, "has no host", err, errlen);
    memcpy(hostport, p, authority);
    hostport[authority] = '\0';
    char *colon = strrchr(hostport, ':');
    t->port = 6379;
    if (colon) {
        *colon = '\0';
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (*end || port <= 0 || port > 65535)
            return parse_fail(t, url, "has a bad port", err, errlen);
        t->port = (int)port;
    }
    if (!hostport[0])
        return parse_fail(t, url, "has no host", err, errlen);
    t->host = eu_xstrdup(hostport);
    const char *slash = p + authority;
    t->db = *slash == '/' && slash[1] ? atoi(slash + 1) : 0;
    return 0;
}

/* -------------------------------------------------------- lifetime */

static void
on_cmd_ready(struct link *l)
{
    struct eu_redis *r = l->r;
    if (r->on_cmd_ready)
        r->on_cmd_ready(r->cmd_ready_arg);
}

struct eu_redis *
eu_redis_new(struct event_base *base, const char *url, int timeout_ms, char *err, size_t errlen)
{
    struct eu_redis *r = eu_xcalloc(1, sizeof(*r));
    r->base = base;
    r->timeout_ms = timeout_ms > 0 ? timeout_ms : 1000;
    if (eu_redis_url_parse(url, &r->target, err, errlen) < 0) {
        free(r);
        return NULL;
    }
    if (r->target.unix_path)
        snprintf(r->name, sizeof(r->name), "%s", r->target.unix_path);
    else
        snprintf(r->name, sizeof(r->name), "%s:%d", r->target.host, r->target.port);
    link_init(r, &r->cmd, "commands", on_cmd_ready);
    start_connect(&r->cmd);
    return r;
}

struct eu_redis *
eu_redis_new_down(struct event_base *base)
{
    struct eu_redis *r = eu_xcalloc(1, sizeof(*r));
    r->base = base;
    r->timeout_ms = 1000;
    snprintf(r->name, sizeof(r->name), "(unusable url)");
    link_init(r, &r->cmd, "commands", on_cmd_ready);
    return r;
}

void
eu_redis_on_connect(struct eu_redis *r, eu_redis_subscribed_cb cb, void *arg)
{
    r->on_cmd_ready = cb;
    r->cmd_ready_arg = arg;
}

void
eu_redis_free(struct eu_redis *r)
{
    if (!r)
        return;
    r->freeing = true;
    link_release(&r->cmd);
    link_release(&r->sub);
    eu_redis_target_release(&r->target);
    free(r->pattern);
    free(r);
}

bool
eu_redis_is_connected(const struct eu_redis *r)
{
    return r && r->cmd.ready;
}

/* -------------------------------------------------------- commands */

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
    if (r->cmd.ac && !r->freeing) {
        eu_log_warn("redis", "no reply from '%s' within %d ms: dropping the connection", r->name,
                    r->timeout_ms);
        redisAsyncContext *ac = r->cmd.ac;
        /* Callers run during the free; their new commands must fail fast. */
        r->cmd.ac = NULL;
        r->cmd.ready = false;
        redisAsyncFree(ac);
        if (!evtimer_pending(r->cmd.retry, NULL))
            schedule_retry(&r->cmd);
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
    if (r && r->cmd.ready && r->cmd.ac) {
        struct pending *p = eu_xmalloc(sizeof(*p));
        p->r = r;
        p->cb = cb;
        p->arg = arg;
        p->deadline = evtimer_new(r->base, on_deadline, p);
        if (redisAsyncCommandArgv(r->cmd.ac, on_reply, p, argc, argv, argvlen) == REDIS_OK) {
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

/* ---------------------------------------------------- subscription */

/* hiredis calls this for the subscription's confirmation, for every
 * message, and with NULL when the connection goes. */
static void
on_pmessage(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct eu_redis *r = privdata;
    redisReply *rep = reply;
    if (!rep) {
        r->subscribed = false;
        return;
    }
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 3 ||
        rep->element[0]->type != REDIS_REPLY_STRING)
        return;
    const char *kind = rep->element[0]->str;
    if (strcmp(kind, "psubscribe") == 0) {
        r->subscribed = true;
        if (r->on_subscribed)
            r->on_subscribed(r->sub_arg);
    } else if (strcmp(kind, "pmessage") == 0 && rep->elements == 4 &&
               rep->element[2]->type == REDIS_REPLY_STRING &&
               rep->element[3]->type == REDIS_REPLY_STRING) {
        r->on_message(rep->element[2]->str, rep->element[3]->str, rep->element[3]->len, r->sub_arg);
    }
}

static void
on_sub_ready(struct link *l)
{
    struct eu_redis *r = l->r;
    if (r->pattern) {
        const char *argv[] = {"PSUBSCRIBE", r->pattern};
        redisAsyncCommandArgv(l->ac, on_pmessage, r, 2, argv, NULL);
    }
    if (r->on_channels_ready)
        r->on_channels_ready(r->channel_arg);
}

static void
start_sub(struct eu_redis *r)
{
    if (r->sub.r)
        return;
    link_init(r, &r->sub, "subscriber", on_sub_ready);
    start_connect(&r->sub);
}

int
eu_redis_psubscribe(struct eu_redis *r, const char *pattern, eu_redis_message_cb on_message,
                    eu_redis_subscribed_cb on_subscribed, void *arg)
{
    if (r->pattern)
        return -1;
    r->pattern = eu_xstrdup(pattern);
    r->on_message = on_message;
    r->on_subscribed = on_subscribed;
    r->sub_arg = arg;
    start_sub(r);
    return 0;
}

bool
eu_redis_is_subscribed(const struct eu_redis *r)
{
    return r && r->subscribed;
}

/* ------------------------------------------------- channel subscriptions */

/* hiredis calls this with each message of a channel, with the (un)subscribe
 * confirmations, and with NULL when the connection goes. */
static void
on_cmessage(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct eu_redis *r = privdata;
    redisReply *rep = reply;
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 3 ||
        rep->element[0]->type != REDIS_REPLY_STRING ||
        strcmp(rep->element[0]->str, "message") != 0 ||
        rep->element[1]->type != REDIS_REPLY_STRING || rep->element[2]->type != REDIS_REPLY_STRING)
        return;
    if (r->on_channel)
        r->on_channel(rep->element[1]->str, rep->element[2]->str, rep->element[2]->len,
                      r->channel_arg);
}

void
eu_redis_channels_listen(struct eu_redis *r, eu_redis_message_cb on_message,
                         eu_redis_subscribed_cb on_ready, void *arg)
{
    r->on_channel = on_message;
    r->on_channels_ready = on_ready;
    r->channel_arg = arg;
    if (r->sub.r && r->sub.ready && r->on_channels_ready)
        r->on_channels_ready(r->channel_arg);
    start_sub(r);
}

int
eu_redis_subscribe(struct eu_redis *r, const char *channel)
{
    if (!r->sub.ready || !r->sub.ac)
        return -1;
    const char *argv[] = {"SUBSCRIBE", channel};
    return redisAsyncCommandArgv(r->sub.ac, on_cmessage, r, 2, argv, NULL) == REDIS_OK ? 0 : -1;
}

void
eu_redis_unsubscribe(struct eu_redis *r, const char *channel)
{
    if (!r->sub.ready || !r->sub.ac)
        return;
    const char *argv[] = {"UNSUBSCRIBE", channel};
    redisAsyncCommandArgv(r->sub.ac, NULL, NULL, 2, argv, NULL);
}
