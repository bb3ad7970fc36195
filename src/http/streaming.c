/*
 * The streaming hub: long-lived client connections (WebSocket framed by
 * libwslay, or server-sent events) and the Redis channels they listen to.
 *
 * A connection is taken from evhttp once its request has been
 * authenticated (eu_req_take_connection()); from then on it is a plain
 * bufferevent of ours. Each subscription is a (tenant, channel) listener;
 * a channel is SUBSCRIBEd on the subscriber connection of its tenant's
 * Redis (eu_tenant_redis(): its placement's, or the main one) when its
 * first listener comes and UNSUBSCRIBEd when its last goes, so a tenant
 * nobody streams has no subscription and no state here. The hub listens
 * on every Redis the registry makes, so a Redis that is down or restarts
 * costs only its own tenants' streams their events meanwhile. While a
 * tenant has listeners, the hub keeps "<prefix>stream:live" set in Redis
 * (a short TTL, refreshed), which is what publishers check before doing
 * any work (src/social/stream_events.c).
 *
 * A message names an event and an id; each listener gets it rendered for
 * its own viewer, by the renderer the wiring gave eu_stream_start() (the
 * REST handlers', which stand above this room), or spliced from a status
 * rendered once for every listener of the process. This file decides who
 * hears a message (deliver()); how it reaches them (each client's queue,
 * the line for the process's [limits] stream_max_renders renders, shared
 * renders and the viewer state they need) is stream_deliver.c's, which
 * shares the client with this file through streaming_internal.h. The
 * viewer state is loaded when a stream opens and again when the viewer's
 * blocks, mutes, domain blocks or filters change ("viewer <id>" on the
 * tenant's close channel). Nothing is dropped silently: a client too far
 * behind is disconnected, so it reconnects and re-reads the timeline
 * instead of believing it saw everything.
 *
 * A stream ends with what it was opened with: revoking its token,
 * suspending its account, or suspending or deleting its tenant closes it
 * (eu_stream_close_for()), in every process, through the tenant's
 * "<prefix>stream:close" channel, to which a process listens while it has
 * a stream of the tenant. A tenant no longer active (as the registry of
 * this process sees it) loses its streams at its next event or live-mark
 * refresh, whichever comes first.
 *
 * Connections count against the connection caps for as long as they
 * stream (conns.c's holds), and per tenant against max_streams_per_tenant.
 * A WebSocket message from the client is at most EU_STREAM_MAX_COMMAND
 * bytes: wslay refuses a longer one with close code 1009 before reading
 * its payload.
 *
 * Output is bounded: a client whose unsent output passes
 * EU_STREAM_MAX_OUTPUT is disconnected, so a reader that stalls costs at
 * most that much. Each connection is pinged (WebSocket) or sent a ":thump"
 * comment (SSE, as Mastodon does) every EU_STREAM_HEARTBEAT_S seconds.
 *
 * A client is freed from a zero-delay event once marked closing, since
 * wslay and bufferevent callbacks may still be on the stack.
 */
#include "eunha/streaming.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wslay/wslay.h>

#include <jansson.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/redis.h"
#include "eunha/router.h"
#include "eunha/tenant.h"

#include "conns_internal.h"
#include "streaming_internal.h"

#define EU_STREAM_MAX_SUBS 32
/* A client's message: {"type":"subscribe","stream":"hashtag","tag":...}
 * with a tag of at most 200 bytes fits many times over. */
#define EU_STREAM_MAX_COMMAND 4096
/* A revocation on a tenant's control channel: "token <hash>",
 * "account <id>" or "tenant". */
#define CLOSE_CHANNEL "stream:close"
/* A channel message: "<event> <id>", or an announcement reaction's JSON
 * (its name is at most 64 bytes, see src/api/announcements.c). */
#define EU_STREAM_MAX_MESSAGE 512
#define LIVE_TTL_S "90"
#define LIVE_REFRESH_S 30
#define CHAN_BUCKETS 1024

struct eu_stream_chan {
    char *name;             /* the Redis channel */
    struct eu_redis *redis; /* where it is subscribed: its tenant's then */
    struct eu_stream_sub *subs;
    struct eu_stream_chan *next;   /* hash chain */
    unsigned long long edit_batch; /* the last edit batch it carried (on_message()) */
};

/* Streams of one tenant in this process: for its cap and its live mark. */
struct tcount {
    int64_t id;
    struct eu_tenant *t;    /* holds a ref */
    struct eu_redis *redis; /* where its channels are: its Redis at its first stream */
    int n;
    struct tcount *next;
};

struct hub {
    struct eu_app *app;
    struct tcount *tenants;
    struct eu_stream_chan *chans[CHAN_BUCKETS];
    struct eu_stream_client *clients;
    int n_clients;
    struct event *live_timer;
    /* The edit batch the last message began or went on (edit_batch()). */
    struct {
        unsigned long long n;
        int64_t tenant_id;
        char id[24];
    } batch;
};

static struct hub *hub;

static struct tcount *tcount_find(int64_t id);
static void client_drain(struct eu_stream_client *c);

/* ------------------------------------------------------------------ output */

bool
eu_stream_client_over_limit(struct eu_stream_client *c)
{
    return evbuffer_get_length(bufferevent_get_output(c->bev)) >
           hub->app->cfg->stream_max_output_bytes;
}

/* ---------------------------------------------------------------- channels */

static size_t
chan_bucket(const char *name)
{
    uint64_t h = 1469598103934665603ull;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return (size_t)(h % CHAN_BUCKETS);
}

static struct eu_stream_chan *
chan_find(const char *name)
{
    for (struct eu_stream_chan *ch = hub->chans[chan_bucket(name)]; ch; ch = ch->next)
        if (strcmp(ch->name, name) == 0)
            return ch;
    return NULL;
}

/* A channel's name holds its tenant's key prefix, so one name is one
 * tenant's and one Redis's. */
static struct eu_stream_chan *
chan_get(const char *name, struct eu_redis *redis)
{
    struct eu_stream_chan *ch = chan_find(name);
    if (ch)
        return ch;
    ch = eu_xcalloc(1, sizeof(*ch));
    ch->name = eu_xstrdup(name);
    ch->redis = redis;
    size_t b = chan_bucket(name);
    ch->next = hub->chans[b];
    hub->chans[b] = ch;
    eu_redis_subscribe(redis, name);
    return ch;
}

static void
chan_release(struct eu_stream_chan *ch)
{
    if (ch->subs)
        return;
    eu_redis_unsubscribe(ch->redis, ch->name);
    struct eu_stream_chan **p = &hub->chans[chan_bucket(ch->name)];
    while (*p != ch)
        p = &(*p)->next;
    *p = ch->next;
    free(ch->name);
    free(ch);
}

static void
sub_free(struct eu_stream_sub *s)
{
    struct eu_stream_chan *ch = s->ch;
    if (s->ch_prev)
        s->ch_prev->ch_next = s->ch_next;
    else
        ch->subs = s->ch_next;
    if (s->ch_next)
        s->ch_next->ch_prev = s->ch_prev;
    chan_release(ch);
    free(s->param);
    free(s->names);
    free(s);
}

/* The query parameter (WebSocket: the command's member) naming what a
 * stream is about: a list's id or a tag. */
static const char *
param_key(const char *stream)
{
    return strcmp(stream, "list") == 0 ? "list" : "tag";
}

/* The direct stream's channel: the viewer's own, so nobody else's
 * conversations can be named. */
static int
direct_channel(const char *prefix, int64_t account_id, char *buf, size_t len)
{
    snprintf(buf, len, "%sstream:direct:%lld", prefix, (long long)account_id);
    return 0;
}

/* NULL, or why a token with scopes may not have stream: Mastodon's
 * streaming server asks read:notifications for user:notification,
 * read:statuses for the other streams of an account ("read" covers both)
 * and nothing for the public ones. */
static const char *
scope_refusal(const char *scopes, const char *stream)
{
    if (strncmp(stream, "public", 6) == 0 || strncmp(stream, "hashtag", 7) == 0)
        return NULL;
    const char *need =
        strcmp(stream, "user:notification") == 0 ? "read:notifications" : "read:statuses";
    return eu_auth_scope_allows(scopes, need) ? NULL
                                              : "Access token does not have the required scopes";
}

/* The Redis channel name of a stream of tenant t for account_id (0: none)
 * into buf: 0, or the HTTP status (401, 400) and *err when the stream is
 * unknown or needs what is missing (a user, a tag, a list). */
static int
channel_of(const struct eu_tenant *t, int64_t account_id, const char *stream, const char *param,
           char *buf, size_t len, const char **err)
{
    const char *pre = t->key_prefix;
    bool user = strcmp(stream, "user") == 0 || strcmp(stream, "user:notification") == 0;
    if ((user || strcmp(stream, "list") == 0 || strcmp(stream, "direct") == 0) && !account_id) {
        *err = "This stream requires an authenticated user";
        return 401;
    }
    if (user) {
        snprintf(buf, len, "%sstream:user:%lld", pre, (long long)account_id);
        return 0;
    }
    if (strcmp(stream, "direct") == 0)
        return direct_channel(pre, account_id, buf, len);
    if (strcmp(stream, "public") == 0 || strcmp(stream, "public:local") == 0 ||
        strcmp(stream, "public:remote") == 0) {
        snprintf(buf, len, "%sstream:%s", pre, stream);
        return 0;
    }
    if (strcmp(stream, "hashtag") == 0 || strcmp(stream, "hashtag:local") == 0) {
        if (!param || !*param || strlen(param) > 200) {
            *err = "No tag for stream provided";
            return 400;
        }
        char low[201];
        size_t i = 0;
        for (; param[i]; i++) {
            unsigned char ch = (unsigned char)param[i];
            if (ch == ':' || ch == ' ' || ch == '*') {
                *err = "No tag for stream provided";
                return 400;
            }
            low[i] = (char)(ch < 0x80 && ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        low[i] = '\0';
        snprintf(buf, len, "%sstream:%s:%s", pre, stream, low);
        return 0;
    }
    if (strcmp(stream, "list") == 0) {
        /* Anyone may name a list; only its owner's renders hold anything
         * (the list timeline's own ownership check, in the renderer). */
        if (!param || !eu_id_is_valid(param)) {
            *err = "Missing list";
            return 400;
        }
        snprintf(buf, len, "%sstream:list:%s", pre, param);
        return 0;
    }
    *err = "Unknown stream type";
    return 400;
}

static int
subscribe(struct eu_stream_client *c, const char *stream, const char *param, const char **err)
{
    char name[EU_TENANT_KEY_PREFIX_SIZE + 256];
    if (channel_of(c->t, c->v.account_id, stream, param, name, sizeof(name), err))
        return -1;
    if ((*err = scope_refusal(c->scopes, stream)))
        return -1;
    for (struct eu_stream_sub *s = c->subs; s; s = s->next)
        if (strcmp(s->stream, stream) == 0 && strcmp(s->ch->name, name) == 0)
            return 0;
    if (c->n_subs >= EU_STREAM_MAX_SUBS) {
        *err = "Too many streams on one connection";
        return -1;
    }
    struct eu_stream_sub *s = eu_xcalloc(1, sizeof(*s));
    s->c = c;
    snprintf(s->stream, sizeof(s->stream), "%s", stream);
    s->param = param && (strncmp(stream, "hashtag", 7) == 0 || strcmp(stream, "list") == 0)
                   ? eu_xstrdup(param)
                   : NULL;
    s->notes_only = strcmp(stream, "user:notification") == 0;
    json_t *names = json_array();
    json_array_append_new(names, json_string(s->stream));
    if (s->param)
        json_array_append_new(names, json_string(s->param));
    s->names = json_dumps(names, JSON_COMPACT);
    json_decref(names);
    if (!s->names)
        s->names = eu_xstrdup("[]");
    s->ch = chan_get(name, tcount_find(c->t->id)->redis);
    s->ch_next = s->ch->subs;
    if (s->ch_next)
        s->ch_next->ch_prev = s;
    s->ch->subs = s;
    s->next = c->subs;
    c->subs = s;
    c->n_subs++;
    return 0;
}

static void
unsubscribe(struct eu_stream_client *c, const char *stream, const char *param)
{
    char name[EU_TENANT_KEY_PREFIX_SIZE + 256];
    const char *err;
    if (channel_of(c->t, c->v.account_id, stream, param, name, sizeof(name), &err))
        return;
    for (struct eu_stream_sub **p = &c->subs; *p; p = &(*p)->next) {
        struct eu_stream_sub *s = *p;
        if (strcmp(s->stream, stream) == 0 && strcmp(s->ch->name, name) == 0) {
            *p = s->next;
            c->n_subs--;
            sub_free(s);
            return;
        }
    }
}

/* ------------------------------------------------------------ liveness */

static void
on_set(struct redisReply *reply, void *arg)
{
    (void)reply;
    (void)arg;
}

/* The channel on which revocations of tenant t's streams travel. */
static void
close_channel(const struct eu_tenant *t, char *buf, size_t len)
{
    snprintf(buf, len, "%s" CLOSE_CHANNEL, t->key_prefix);
}

/* False once t must serve no more streams: suspended, being deleted or
 * gone. A move suspends its tenant for a moment; its streams outlive it. */
static bool
tenant_is_open(const struct eu_tenant *t)
{
    if (t->moving)
        return true;
    return t->state == EU_TENANT_ACTIVE && !t->removed;
}

/* Ends every stream of tenant tenant_id here that a revocation covers:
 * those of token_hash if given, else of account_id if not 0, else all. */
static void
close_matching(int64_t tenant_id, int64_t account_id, const char *token_hash, const char *why)
{
    /* eu_stream_client_end() frees nothing now, so the walk is safe. */
    for (struct eu_stream_client *c = hub->clients; c; c = c->next) {
        if (c->closing || c->t->id != tenant_id)
            continue;
        if (token_hash && strcmp(c->token_hash, token_hash) != 0)
            continue;
        if (!token_hash && account_id && c->v.account_id != account_id)
            continue;
        eu_stream_client_end(c, WSLAY_CODE_POLICY_VIOLATION, why);
    }
}

static void
mark_live(const struct eu_tenant *t)
{
    char key[EU_TENANT_KEY_PREFIX_SIZE + 16];
    snprintf(key, sizeof(key), "%sstream:live", t->key_prefix);
    const char *argv[] = {"SET", key, "1", "EX", LIVE_TTL_S};
    eu_redis_command(eu_tenant_redis(hub->app, t), on_set, NULL, 5, argv, NULL);
}

/* Refreshes the live mark of each tenant with a stream here, and ends the
 * streams of a tenant closed meanwhile (by another process, say), even if
 * no event came to find it out. */
static void
on_live_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    for (struct tcount *tc = hub->tenants; tc; tc = tc->next) {
        if (!tenant_is_open(tc->t))
            close_matching(tc->id, 0, NULL, "This instance is no longer available");
        else if (tc->redis != eu_tenant_redis(hub->app, tc->t))
            /* Moved to a placement on another Redis: its events are
             * published there now. A client reconnects onto it. */
            close_matching(tc->id, 0, NULL, "This instance moved; reconnect");
        else
            mark_live(tc->t);
    }
}

static struct tcount *
tcount_find(int64_t id)
{
    for (struct tcount *tc = hub->tenants; tc; tc = tc->next)
        if (tc->id == id)
            return tc;
    return NULL;
}

/* The first stream of a tenant here subscribes to its revocations. */
static void
tcount_add(struct eu_tenant *t)
{
    struct tcount *tc = tcount_find(t->id);
    if (!tc) {
        tc = eu_xcalloc(1, sizeof(*tc));
        tc->id = t->id;
        tc->t = t;
        tc->redis = eu_tenant_redis(hub->app, t);
        eu_tenant_ref(t);
        tc->next = hub->tenants;
        hub->tenants = tc;
        char name[EU_TENANT_KEY_PREFIX_SIZE + sizeof(CLOSE_CHANNEL)];
        close_channel(t, name, sizeof(name));
        eu_redis_subscribe(tc->redis, name);
    }
    tc->n++;
}

static void
tcount_remove(int64_t id)
{
    for (struct tcount **p = &hub->tenants; *p; p = &(*p)->next) {
        struct tcount *tc = *p;
        if (tc->id == id) {
            if (--tc->n == 0) {
                char name[EU_TENANT_KEY_PREFIX_SIZE + sizeof(CLOSE_CHANNEL)];
                close_channel(tc->t, name, sizeof(name));
                eu_redis_unsubscribe(tc->redis, name);
                *p = tc->next;
                eu_tenant_unref(tc->t);
                free(tc);
            }
            return;
        }
    }
}

/* ------------------------------------------------------------- messages */

/* edit: the batch of a status.update (edit_batch()), 0 for the rest. */
static void
deliver(struct eu_stream_sub *s, const char *event, const char *id, unsigned long long edit)
{
    struct eu_stream_client *c = s->c;
    if (c->closing)
        return;
    if (!tenant_is_open(c->t)) {
        eu_stream_client_end(c, WSLAY_CODE_POLICY_VIOLATION,
                             "This instance is no longer available");
        return;
    }
    /* A user channel carries statuses and notifications; user:notification
     * takes only the latter. */
    if (s->notes_only && strcmp(event, "notification") != 0)
        return;
    /* A read:statuses token has the user stream without its notifications,
     * as in Mastodon. */
    if (strcmp(event, "notification") == 0 &&
        !eu_auth_scope_allows(c->scopes, "read:notifications"))
        return;
    eu_stream_client_queue(s, event, id, edit);
}

/* Account account_id of tenant tenant_id changed what shared renders
 * need of it (stream.h's eu_stream_viewer_changed()). */
static void
reload_viewer(int64_t tenant_id, int64_t account_id)
{
    for (struct eu_stream_client *c = hub->clients; c; c = c->next)
        if (!c->closing && c->t->id == tenant_id && c->v.account_id == account_id)
            eu_stream_client_vstate_reload(c);
}

/* Ends the streams of tenant tenant_id that revocation what covers:
 * "tenant", "account <id>" or "token <hash>". */
static void
revoke(int64_t tenant_id, const char *what)
{
    if (strcmp(what, "tenant") == 0)
        close_matching(tenant_id, 0, NULL, "This instance is no longer available");
    else if (strncmp(what, "account ", 8) == 0 && strtoll(what + 8, NULL, 10) > 0)
        close_matching(tenant_id, strtoll(what + 8, NULL, 10), NULL, "This account is suspended");
    else if (strncmp(what, "token ", 6) == 0 && strlen(what + 6) == 64)
        close_matching(tenant_id, 0, what + 6, "The access token was revoked");
    else if (strncmp(what, "viewer ", 7) == 0 && strtoll(what + 7, NULL, 10) > 0)
        reload_viewer(tenant_id, strtoll(what + 7, NULL, 10));
}

/* A revocation on a tenant's close channel (see eu_stream_close_for()). */
static void
on_close_message(const char *channel, const char *msg, size_t len)
{
    size_t n = strlen(channel), k = strlen(CLOSE_CHANNEL);
    const char *brace = strstr(channel, ":{t");
    if (n < k || strcmp(channel + n - k, CLOSE_CHANNEL) != 0 || !brace || len > 100)
        return;
    char *end;
    long long id = strtoll(brace + 3, &end, 10);
    if (*end != '}' || !tcount_find(id))
        return;
    char buf[101];
    memcpy(buf, msg, len);
    buf[len] = '\0';
    revoke(id, buf);
}

/*
 * The edit batch of a message on ch about event and id, 0 when it is not
 * an edit: the messages one publication of an edit sent (one EVAL, so
 * they arrive one after another, each on a channel of its own) share a
 * render. A message of another status, of anything else, or on a channel
 * the batch has had already (the next edit of the same status) begins
 * another, so a later edit is never sent an earlier one's render.
 */
static unsigned long long
edit_batch(struct eu_stream_chan *ch, const char *event, const char *id)
{
    if (strcmp(event, "status.update") != 0 || !ch->subs) {
        hub->batch.id[0] = '\0'; /* anything between two edits' messages parts them */
        return 0;
    }
    int64_t tenant_id = ch->subs->c->t->id;
    if (hub->batch.tenant_id != tenant_id || strcmp(hub->batch.id, id) != 0 ||
        ch->edit_batch == hub->batch.n) {
        hub->batch.n++;
        hub->batch.tenant_id = tenant_id;
        snprintf(hub->batch.id, sizeof(hub->batch.id), "%s", id);
    }
    ch->edit_batch = hub->batch.n;
    return hub->batch.n;
}

static void
on_message(const char *channel, const char *msg, size_t len, void *arg)
{
    (void)arg;
    struct eu_stream_chan *ch = chan_find(channel);
    if (!ch) {
        on_close_message(channel, msg, len);
        return;
    }
    if (len > EU_STREAM_MAX_MESSAGE)
        return;
    char buf[EU_STREAM_MAX_MESSAGE + 1];
    memcpy(buf, msg, len);
    buf[len] = '\0';
    char *sp = strchr(buf, ' ');
    if (!sp)
        return;
    *sp = '\0';
    const char *event = buf, *id = sp + 1;
    unsigned long long edit = edit_batch(ch, event, id);
    /* deliver() never frees a sub or a channel: closing is deferred. */
    for (struct eu_stream_sub *s = ch->subs; s; s = s->ch_next)
        deliver(s, event, id, edit);
}

/* Redis is back: it may have restarted without its data, and publishers
 * send nothing to a tenant without its live mark, so the marks are set
 * again at once rather than at the next refresh (half a minute of lost
 * events). */
static void
on_redis_connected(void *arg)
{
    struct eu_redis *redis = arg;
    if (!hub)
        return;
    for (struct tcount *tc = hub->tenants; tc; tc = tc->next)
        if (tc->redis == redis)
            mark_live(tc->t);
}

/* The subscriber connection of arg is (back) up: every live channel on it
 * again. */
static void
on_redis_ready(void *arg)
{
    struct eu_redis *redis = arg;
    if (!hub)
        return;
    for (size_t b = 0; b < CHAN_BUCKETS; b++)
        for (struct eu_stream_chan *ch = hub->chans[b]; ch; ch = ch->next)
            if (ch->redis == redis)
                eu_redis_subscribe(redis, ch->name);
    for (struct tcount *tc = hub->tenants; tc; tc = tc->next) {
        if (tc->redis != redis)
            continue;
        char name[EU_TENANT_KEY_PREFIX_SIZE + sizeof(CLOSE_CHANNEL)];
        close_channel(tc->t, name, sizeof(name));
        eu_redis_subscribe(redis, name);
    }
}

/* The hub hears every Redis: the main one from the start, a placement's
 * as the registry makes it. */
static void
listen_on(struct eu_redis *redis, void *arg)
{
    (void)arg;
    eu_redis_channels_listen(redis, on_message, on_redis_ready, redis);
    eu_redis_on_connect(redis, on_redis_connected, redis);
}

/* --------------------------------------------------------------- clients */

static void
client_free(struct eu_stream_client *c)
{
    while (c->subs) {
        struct eu_stream_sub *s = c->subs;
        c->subs = s->next;
        sub_free(s);
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        hub->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    hub->n_clients--;
    tcount_remove(c->t->id);
    eu_stream_client_forget(c);
    eu_conns_hold_release(c->hold);
    if (c->wctx)
        wslay_event_context_free(c->wctx);
    if (c->heartbeat)
        event_free(c->heartbeat);
    event_free(c->free_ev);
    bufferevent_free(c->bev);
    eu_tenant_unref(c->t);
    free(c->scopes);
    free(c);
}

void
eu_stream_client_unref(struct eu_stream_client *c)
{
    if (--c->refs == 0)
        client_free(c);
}

/* Drops the connection's own reference, once: a render in flight may keep
 * the client a while longer, but its socket is done with. */
static void
on_free_ev(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct eu_stream_client *c = arg;
    if (c->released)
        return;
    c->released = true;
    bufferevent_disable(c->bev, EV_READ | EV_WRITE);
    if (c->heartbeat)
        event_del(c->heartbeat);
    eu_stream_client_unref(c);
}

void
eu_stream_client_close(struct eu_stream_client *c)
{
    if (c->closing)
        return;
    c->closing = true;
    bufferevent_disable(c->bev, EV_READ | EV_WRITE);
    if (c->heartbeat)
        event_del(c->heartbeat);
    /* Its subscriptions stay until the free: this may run while a channel's
     * listeners are being walked. Being closing, it gets nothing more. */
    event_active(c->free_ev, EV_TIMEOUT, 0);
}

/* Closes c once what is already in its output (a WebSocket close frame
 * that says why) has gone out, or at the next heartbeat if the client does
 * not read it. Nothing more is read from it meanwhile. */
static void
client_drain(struct eu_stream_client *c)
{
    if (c->closing)
        return;
    c->closing = true;
    bufferevent_disable(c->bev, EV_READ);
    struct evbuffer *in = bufferevent_get_input(c->bev);
    evbuffer_drain(in, evbuffer_get_length(in));
    if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
        event_active(c->free_ev, EV_TIMEOUT, 0);
}

/* Ends c's stream for why: a WebSocket gets a close frame with code and
 * why (at most 123 bytes), an SSE client the end of the connection. */
void
eu_stream_client_end(struct eu_stream_client *c, uint16_t code, const char *why)
{
    if (c->closing)
        return;
    eu_log_info("stream", "closing a stream: %s", why);
    if (c->ws) {
        wslay_event_queue_close(c->wctx, code, (const uint8_t *)why, strlen(why));
        wslay_event_send(c->wctx);
    }
    client_drain(c);
}

/* ------------------------------------------------------------- WebSocket */

static ssize_t
ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *arg)
{
    (void)flags;
    (void)ctx;
    struct eu_stream_client *c = arg;
    /* Always taken: the bound is checked before a message is queued
     * (send_event), so what waits is in one place, the output buffer, and
     * not in wslay's queue where it would grow unseen. */
    bufferevent_write(c->bev, data, len);
    return (ssize_t)len;
}

static ssize_t
ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *arg)
{
    (void)flags;
    struct eu_stream_client *c = arg;
    size_t n = bufferevent_read(c->bev, buf, len);
    if (n == 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    return (ssize_t)n;
}

static void
ws_error(struct eu_stream_client *c, const char *error)
{
    json_t *m = json_pack("{s:s}", "error", error);
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    struct wslay_event_msg msg = {WSLAY_TEXT_FRAME, (const uint8_t *)text, strlen(text)};
    wslay_event_queue_msg(c->wctx, &msg);
    free(text);
}

/* {"type":"subscribe"|"unsubscribe","stream":"...","tag":"..."|"list":"..."}. */
static void
ws_command(struct eu_stream_client *c, const uint8_t *data, size_t len)
{
    json_t *cmd = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, NULL);
    const char *type = json_string_value(json_object_get(cmd, "type"));
    const char *stream = json_string_value(json_object_get(cmd, "stream"));
    const char *tag = stream ? json_string_value(json_object_get(cmd, param_key(stream))) : NULL;
    if (!type || !stream) {
        ws_error(c, "Invalid JSON");
    } else if (strcmp(type, "subscribe") == 0) {
        const char *err = NULL;
        if (subscribe(c, stream, tag, &err) < 0)
            ws_error(c, err);
    } else if (strcmp(type, "unsubscribe") == 0) {
        unsubscribe(c, stream, tag);
    } else {
        ws_error(c, "Unknown message type");
    }
    json_decref(cmd);
}

static void
ws_on_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg, void *data)
{
    (void)ctx;
    struct eu_stream_client *c = data;
    if (arg->opcode == WSLAY_TEXT_FRAME && !c->closing)
        ws_command(c, arg->msg, arg->msg_length);
}

static const struct wslay_event_callbacks ws_callbacks = {
    ws_recv, ws_send, NULL, NULL, NULL, NULL, ws_on_msg,
};

/* ------------------------------------------------------------ connection */

static void
after_io(struct eu_stream_client *c)
{
    if (c->closing)
        return;
    if (c->ws) {
        if (eu_stream_client_over_limit(c))
            eu_stream_client_close(c);
        else if (!wslay_event_get_read_enabled(c->wctx) ||
                 (wslay_event_want_read(c->wctx) == 0 && wslay_event_want_write(c->wctx) == 0))
            /* Closing, or refused an oversized message (1009): nothing more
             * is read; the close frame goes out first. */
            client_drain(c);
    }
}

static void
on_read(struct bufferevent *bev, void *arg)
{
    (void)bev;
    struct eu_stream_client *c = arg;
    if (c->closing)
        return;
    if (!c->ws) {
        /* SSE clients have nothing to say. */
        evbuffer_drain(bufferevent_get_input(bev), evbuffer_get_length(bufferevent_get_input(bev)));
        return;
    }
    if (wslay_event_recv(c->wctx) != 0 || wslay_event_send(c->wctx) != 0) {
        eu_stream_client_close(c);
        return;
    }
    after_io(c);
}

static void
on_write(struct bufferevent *bev, void *arg)
{
    (void)bev;
    struct eu_stream_client *c = arg;
    if (c->closing) {
        /* Called once the output is empty: a draining client is done. */
        event_active(c->free_ev, EV_TIMEOUT, 0);
        return;
    }
    if (c->ws && wslay_event_want_write(c->wctx))
        wslay_event_send(c->wctx);
    after_io(c);
}

static void
on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    (void)what;
    struct eu_stream_client *c = arg;
    if (c->closing) /* draining: nothing more will go out */
        event_active(c->free_ev, EV_TIMEOUT, 0);
    else
        eu_stream_client_close(c); /* EOF, error */
}

static void
on_heartbeat(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct eu_stream_client *c = arg;
    if (c->closing) {
        /* Draining for a whole interval: the client does not read. */
        event_active(c->free_ev, EV_TIMEOUT, 0);
        return;
    }
    if (eu_stream_client_over_limit(c)) {
        eu_stream_client_close(c);
        return;
    }
    if (c->ws) {
        struct wslay_event_msg m = {WSLAY_PING, (const uint8_t *)"", 0};
        wslay_event_queue_msg(c->wctx, &m);
        wslay_event_send(c->wctx);
    } else {
        bufferevent_write(c->bev, ":thump\n\n", 8);
    }
}

/* What a stream handler knew before the connection was taken. */
struct pending {
    struct eu_app *app;
    struct eu_tenant *t; /* holds a ref */
    struct eu_stream_viewer v;
    char *scopes;
    char token_hash[65];
    bool ws;
    char *head;   /* the response head to write */
    char *stream; /* SSE: the stream, WebSocket: one given in the query */
    char *param;
};

static void
pending_free(struct pending *p)
{
    eu_tenant_unref(p->t);
    free(p->scopes);
    free(p->head);
    free(p->stream);
    free(p->param);
    free(p);
}

static void
on_taken(struct bufferevent *bev, struct eu_conns_hold *hold, void *arg)
{
    struct pending *p = arg;
    if (!bev || !hub || p->app->stopping) {
        if (bev)
            bufferevent_free(bev);
        eu_conns_hold_release(hold);
        pending_free(p);
        return;
    }
    struct eu_stream_client *c = eu_xcalloc(1, sizeof(*c));
    c->bev = bev;
    c->t = p->t;
    eu_tenant_ref(c->t);
    c->v = p->v;
    c->scopes = p->scopes;
    p->scopes = NULL;
    memcpy(c->token_hash, p->token_hash, sizeof(c->token_hash));
    c->hold = hold;
    c->ws = p->ws;
    c->refs = 1;
    c->free_ev = event_new(hub->app->base, -1, 0, on_free_ev, c);
    c->next = hub->clients;
    if (c->next)
        c->next->prev = c;
    hub->clients = c;
    hub->n_clients++;
    tcount_add(c->t);
    bufferevent_setcb(bev, on_read, on_write, on_event, c);
    bufferevent_write(bev, p->head, strlen(p->head));
    if (c->ws) {
        wslay_event_context_server_init(&c->wctx, &ws_callbacks, c);
        wslay_event_config_set_max_recv_msg_length(c->wctx, EU_STREAM_MAX_COMMAND);
    }
    c->heartbeat = event_new(hub->app->base, -1, EV_PERSIST, on_heartbeat, c);
    struct timeval tv = {hub->app->cfg->stream_heartbeat_s, 0};
    event_add(c->heartbeat, &tv);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
    mark_live(c->t);
    eu_stream_client_vstate_reload(c);
    if (p->stream) {
        const char *err = NULL;
        if (subscribe(c, p->stream, p->param, &err) < 0 && c->ws)
            ws_error(c, err);
    }
    pending_free(p);
    /* Frames that came with the request. */
    if (c->ws && evbuffer_get_length(bufferevent_get_input(bev)))
        on_read(bev, c);
}

/* ------------------------------------------------------------- handlers */

static struct pending *
pending_new(struct eu_req *req, bool ws)
{
    struct pending *p = eu_xcalloc(1, sizeof(*p));
    p->app = req->app;
    p->t = req->tenant;
    eu_tenant_ref(p->t);
    p->v.account_id = req->auth.account_id;
    p->v.user_id = req->auth.user_id;
    p->v.token_id = req->auth.token_id;
    p->v.app_id = req->auth.app_id;
    p->scopes = eu_xstrdup(req->auth.scopes ? req->auth.scopes : "");
    memcpy(p->token_hash, req->auth.token_hash, sizeof(p->token_hash));
    p->ws = ws;
    return p;
}

/* Streams stay in the connection counts (conns.c's holds); they have caps
 * of their own as well: in all, and per tenant so one cannot take them all. */
static bool
streaming_full(struct eu_req *req)
{
    const struct eu_config *cfg = req->app->cfg;
    struct tcount *tc = hub ? tcount_find(req->tenant->id) : NULL;
    if (!hub || (cfg->max_streams && hub->n_clients >= cfg->max_streams) ||
        (cfg->max_connections && hub->n_clients >= cfg->max_connections) ||
        (cfg->max_streams_per_tenant && tc && tc->n >= cfg->max_streams_per_tenant)) {
        eu_req_add_header(req, "Retry-After", "5");
        eu_req_reply_error(req, 503, "Too many streaming connections; try again shortly");
        return true;
    }
    return false;
}

/* Sec-WebSocket-Accept of key (RFC 6455 section 4.2.2) into out (29 bytes). */
static void
ws_accept(const char *key, char out[32])
{
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    char buf[128];
    snprintf(buf, sizeof(buf), "%s%s", key, guid);
    unsigned char md[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)buf, strlen(buf), md);
    EVP_EncodeBlock((unsigned char *)out, md, SHA_DIGEST_LENGTH);
}

static bool
header_has(const char *v, const char *token)
{
    if (!v)
        return false;
    size_t n = strlen(token);
    for (const char *p = v; (p = strcasestr(p, token)); p += n) {
        bool start = p == v || p[-1] == ',' || p[-1] == ' ';
        bool end = !p[n] || p[n] == ',' || p[n] == ' ';
        if (start && end)
            return true;
    }
    return false;
}

void
eu_stream_handle_ws(struct eu_req *req)
{
    const char *upgrade = eu_req_header(req, "Upgrade");
    if (!header_has(upgrade, "websocket")) {
        /* Mastodon serves SSE here too, with ?stream=. */
        eu_stream_handle_sse(req);
        return;
    }
    const char *key = eu_req_header(req, "Sec-WebSocket-Key");
    if (!key || strlen(key) > 64 || !header_has(eu_req_header(req, "Connection"), "upgrade")) {
        eu_req_reply_error(req, 400, "A WebSocket upgrade needs Sec-WebSocket-Key");
        return;
    }
    if (!req->auth.present) {
        eu_req_reply_error(req, 401, "Missing access token");
        return;
    }
    if (streaming_full(req))
        return;
    struct pending *p = pending_new(req, true);
    const char *stream = eu_req_query(req, "stream");
    if (stream && *stream) {
        p->stream = eu_xstrdup(stream);
        const char *tag = eu_req_query(req, param_key(stream));
        p->param = tag ? eu_xstrdup(tag) : NULL;
    }
    char accept[32];
    ws_accept(key, accept);
    /* A token sent as the subprotocol is echoed, as browsers require. */
    const char *proto = eu_req_header(req, "Sec-WebSocket-Protocol");
    if (proto && strlen(proto) >= 600)
        proto = NULL;
    char head[1024];
    snprintf(head, sizeof(head),
             "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Accept: %s\r\n%s%s%s\r\n",
             accept, proto ? "Sec-WebSocket-Protocol: " : "", proto ? proto : "",
             proto ? "\r\n" : "");
    p->head = eu_xstrdup(head);
    eu_req_take_connection(req, on_taken, p);
}

/* The stream of an SSE path: "/api/v1/streaming/public/local" is
 * "public:local"; "/api/v1/streaming" takes ?stream=. */
static const char *
sse_stream(struct eu_req *req, char *buf, size_t len)
{
    const char *base = "/api/v1/streaming";
    const char *rest = req->path + strlen(base);
    if (!*rest || strcmp(rest, "/") == 0)
        return eu_req_query(req, "stream");
    snprintf(buf, len, "%s", rest + 1);
    for (char *s = buf; *s; s++)
        if (*s == '/')
            *s = ':';
    return buf;
}

void
eu_stream_handle_sse(struct eu_req *req)
{
    if (!req->auth.present) {
        eu_req_reply_error(req, 401, "Missing access token");
        return;
    }
    char buf[64];
    const char *stream = sse_stream(req, buf, sizeof(buf));
    if (!stream)
        stream = "";
    const char *tag = eu_req_query(req, param_key(stream));
    /* Checked now with the subscription's own rules, so a bad stream gets
     * a 4xx rather than an empty stream. */
    char name[EU_TENANT_KEY_PREFIX_SIZE + 256];
    const char *err = NULL;
    int status =
        channel_of(req->tenant, req->auth.account_id, stream, tag, name, sizeof(name), &err);
    if (!status && (err = scope_refusal(req->auth.scopes, stream)))
        status = 401;
    if (status) {
        eu_req_reply_error(req, status, "%s", err);
        return;
    }
    if (streaming_full(req))
        return;
    struct pending *p = pending_new(req, false);
    p->stream = eu_xstrdup(stream);
    p->param = tag ? eu_xstrdup(tag) : NULL;
    p->head = eu_xstrdup("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                         "Cache-Control: no-store\r\nAccess-Control-Allow-Origin: *\r\n"
                         "Connection: close\r\n\r\n");
    eu_req_take_connection(req, on_taken, p);
}

void
eu_stream_handle_health(struct eu_req *req)
{
    eu_req_reply_raw(req, 200, "text/plain", "OK", 2);
}

/* ------------------------------------------------------------ lifetime */

void
eu_stream_start(struct eu_app *app, const struct eu_stream_ops *o)
{
    if (hub)
        return;
    hub = eu_xcalloc(1, sizeof(*hub));
    hub->app = app;
    eu_stream_deliver_start(app, o);
    hub->live_timer = event_new(app->base, -1, EV_PERSIST, on_live_timer, NULL);
    struct timeval tv = {LIVE_REFRESH_S, 0};
    event_add(hub->live_timer, &tv);
    listen_on(app->redis, NULL);
    eu_registry_on_redis(app->registry, listen_on, NULL);
}

void
eu_stream_close_all(void)
{
    if (!hub)
        return;
    for (struct eu_stream_client *c = hub->clients; c; c = c->next)
        if (!c->closing) {
            if (c->ws) {
                wslay_event_queue_close(c->wctx, WSLAY_CODE_GOING_AWAY, NULL, 0);
                wslay_event_send(c->wctx);
            }
            eu_stream_client_close(c);
        }
}

void
eu_stream_free(void)
{
    if (!hub)
        return;
    /* Renders still in flight hold their clients; what is left is freed. */
    while (hub->clients) {
        struct eu_stream_client *c = hub->clients;
        c->refs = 1;
        client_free(c);
    }
    eu_stream_deliver_stop();
    for (size_t b = 0; b < CHAN_BUCKETS; b++)
        while (hub->chans[b]) {
            struct eu_stream_chan *ch = hub->chans[b];
            hub->chans[b] = ch->next;
            free(ch->name);
            free(ch);
        }
    while (hub->tenants) {
        struct tcount *tc = hub->tenants;
        hub->tenants = tc->next;
        eu_tenant_unref(tc->t);
        free(tc);
    }
    event_free(hub->live_timer);
    free(hub);
    hub = NULL;
}

void
eu_stream_close_for(struct eu_app *app, const struct eu_tenant *t, int64_t account_id,
                    const char *token_hash)
{
    char msg[80];
    if (token_hash)
        snprintf(msg, sizeof(msg), "token %s", token_hash);
    else if (account_id)
        snprintf(msg, sizeof(msg), "account %lld", (long long)account_id);
    else
        snprintf(msg, sizeof(msg), "tenant");
    /* Here at once; the message comes back to this process too, harmlessly. */
    if (hub && tcount_find(t->id))
        revoke(t->id, msg);
    char name[EU_TENANT_KEY_PREFIX_SIZE + sizeof(CLOSE_CHANNEL)];
    close_channel(t, name, sizeof(name));
    const char *argv[] = {"PUBLISH", name, msg};
    if (eu_redis_command(eu_tenant_redis(app, t), NULL, NULL, 3, argv, NULL) < 0)
        eu_log_warn("stream", "cannot tell other processes to close streams: redis is down");
}

int
eu_stream_count(void)
{
    return hub ? hub->n_clients : 0;
}

/* No route scope: each stream asks its own (scope_refusal()). */
const struct eu_route eu_stream_routes[] = {
    {EU_HTTP_GET, "/api/v1/streaming", eu_stream_handle_ws, NULL, EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/streaming/health", eu_stream_handle_health, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/streaming/:a", eu_stream_handle_sse, NULL,
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/streaming/:a/:b", eu_stream_handle_sse, NULL,
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {0},
};
