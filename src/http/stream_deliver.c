/*
 * The streaming hub's delivery: an event a listener is to hear, from the
 * moment streaming.c hands it over (eu_stream_client_queue()) to its
 * bytes in the client's output. Apart from streaming.c, which holds the
 * connections, channels and revocations, since none of this cares how a
 * client is connected or what it listens to, only what it is owed and in
 * which order.
 *
 * A client's events wait in its own queue and are rendered one at a time,
 * so they arrive in the order of the channel; at most [limits]
 * stream_max_renders renders run in the process, and the clients that
 * found none free wait in line for one. A client more than
 * EU_STREAM_MAX_QUEUE events behind is ended rather than sent less, so it
 * reconnects and re-reads the timeline instead of believing it saw
 * everything. Verbatim events (deletes, announcement reactions,
 * filters_changed) carry their payload and are sent as they came.
 *
 * Render once, send many: a new status ("update") on the public, hashtag,
 * user and list streams is rendered once for every listener of the
 * process (struct eu_stream_ops in streaming.h); an edit ("status.update")
 * once for the listeners of one publication of it (streaming.c's edit
 * batches), as a second edit of the same status is another. The shared
 * render starts when the
 * event is first queued, and counts the signed-in listeners it is queued
 * for while it runs (a reblog's or a reply's flags are read for them, in
 * one statement: every listener one Redis message reaches is queued
 * before the render's first statement answers). The listeners wait on it
 * without taking one of the process's renders, and each gets its payload
 * spliced from it and its viewer's state (blocks, mutes, domain blocks,
 * filters), loaded when a stream opens and again when they change. The
 * renders are kept for the last SHARED_KEEP statuses, for the listeners
 * that reach them later.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wslay/wslay.h>

#include <jansson.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"

#include "streaming_internal.h"

/* Events one client may have waiting for their render: past it the client
 * has fallen too far behind to catch up, and is told by being closed. */
#define EU_STREAM_MAX_QUEUE 256
/* Shared renders kept for listeners still behind: at a status per
 * listener's turn, a few dozen cover any client within its queue bound of
 * the rest unless statuses come faster than it reads. */
#define SHARED_KEEP 64

/* An event waiting its turn to be rendered for one client. */
struct eu_stream_queued {
    char stream[24];
    char *param;
    char event[24];
    char *id;                /* or a verbatim event's payload */
    unsigned long long edit; /* an edit's batch (streaming.c's edit_batch()); 0: none */
    struct eu_stream_queued *next;
};

/* A listener waiting for a shared render; holds a reference to c. */
struct shared_waiter {
    struct eu_stream_client *c;
    struct shared_waiter *next;
};

/* One status rendered for every listener of its tenant here: a new one
 * for all the channels it came on, an edit for the listeners of one batch
 * (another edit of it is another batch). */
struct shared {
    int64_t tenant_id;
    char id[24];
    unsigned long long edit; /* the edit's batch; 0: a new status */
    bool ready, failed;
    bool orphan;                 /* the hub is gone: the render frees it when done */
    struct eu_stream_shared *sh; /* NULL when ready: nobody gets it */
    struct shared_waiter *waiters;
    /* The signed-in listeners that had it queued before it was ready: a
     * reblog's flags are read for them (struct eu_stream_audience). */
    struct eu_stream_audience aud;
    struct shared *next; /* newest first */
};

/* What the hub's delivery keeps, from eu_stream_deliver_start() to
 * eu_stream_deliver_stop(). */
struct line {
    struct eu_app *app;
    struct shared *shared;
    int n_shared;
    struct eu_stream_stats stats;
    int renders;
    /* Clients with an event to render and no render free, in order. */
    struct eu_stream_client *wait_head, *wait_tail;
};

static struct line *line;
/* The wiring's renderers: outside the line, as a shared render still in
 * flight when the hub is freed frees what it made with them. */
static struct eu_stream_ops ops;

/* ------------------------------------------------------------------ output */

/* False when c is going or has let too much output pile up (closed
 * here): nothing more is queued for it. */
static bool
can_send(struct eu_stream_client *c)
{
    if (c->closing)
        return false;
    if (eu_stream_client_over_limit(c)) {
        eu_log_info("stream", "closing a stream: over %zu bytes unread",
                    line->app->cfg->stream_max_output_bytes);
        eu_stream_client_close(c);
        return false;
    }
    return true;
}

/* An SSE event: its name, then its payload (none for filters_changed) as
 * its data line; the payload is JSON text, never holding a newline. */
static void
send_sse(struct eu_stream_client *c, const char *event, const char *payload, size_t len)
{
    struct evbuffer *out = bufferevent_get_output(c->bev);
    evbuffer_add_printf(out, "event: %s\ndata: ", event);
    if (payload)
        evbuffer_add(out, payload, len);
    evbuffer_add(out, "\n\n", 2);
}

/* Queues Mastodon's {"stream":[...],"event":...,"payload":"..."} on c's
 * WebSocket; escaped is the payload as a JSON string's content already
 * (NULL: the event has none, as filters_changed). */
static void
send_ws(struct eu_stream_client *c, const struct eu_stream_sub *s, const char *event,
        const char *escaped, size_t len)
{
    size_t n = sizeof("{\"stream\":,\"event\":\"\",\"payload\":\"\"}") + strlen(s->names) +
               strlen(event) + len;
    char *text = eu_xmalloc(n);
    int k = snprintf(text, n, "{\"stream\":%s,\"event\":\"%s\"%s", s->names, event,
                     escaped ? ",\"payload\":\"" : "}");
    size_t total = (size_t)k;
    if (escaped) {
        memcpy(text + total, escaped, len);
        memcpy(text + total + len, "\"}", 2);
        total += len + 2;
    }
    struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)text, total};
    wslay_event_queue_msg(c->wctx, &m);
    wslay_event_send(c->wctx);
    free(text);
}

/* Sends one event to a client: its payload (JSON text; NULL: none) in a
 * WebSocket frame (send_ws()) or an SSE event. */
static void
send_event(struct eu_stream_client *c, const struct eu_stream_sub *s, const char *event,
           const char *payload, size_t len)
{
    if (!can_send(c))
        return;
    if (!c->ws) {
        send_sse(c, event, payload, len);
        return;
    }
    if (!payload) {
        send_ws(c, s, event, NULL, 0);
        return;
    }
    /* jansson escapes it as a string: the text between its quotes. */
    json_t *str = json_stringn(payload, len);
    char *quoted = json_dumps(str, JSON_ENCODE_ANY | JSON_COMPACT);
    json_decref(str);
    if (quoted)
        send_ws(c, s, event, quoted + 1, strlen(quoted) - 2);
    free(quoted);
}

/* Sends a payload spliced for c, escaped as a JSON string's content for a
 * WebSocket already: its parts are JSON, and nothing is built as an
 * object. */
static void
send_spliced(struct eu_stream_client *c, const struct eu_stream_sub *s, const char *event,
             const char *payload, size_t len)
{
    if (!can_send(c))
        return;
    if (c->ws)
        send_ws(c, s, event, payload, len);
    else
        send_sse(c, event, payload, len);
}

/* --------------------------------------------------------- the render line */

static void
queued_free(struct eu_stream_queued *q)
{
    free(q->param);
    free(q->id);
    free(q);
}

/* The subscription of c that (stream, param) names, or NULL once gone: an
 * unsubscribe may come while an event waits. The param too: two hashtag
 * or list streams differ only by it. */
static struct eu_stream_sub *
sub_find(struct eu_stream_client *c, const char *stream, const char *param)
{
    for (struct eu_stream_sub *s = c->subs; s; s = s->next)
        if (strcmp(s->stream, stream) == 0 &&
            strcmp(s->param ? s->param : "", param ? param : "") == 0)
            return s;
    return NULL;
}

/* Events whose message carries the payload itself, the same for every
 * listener: sent as they came, not rendered per viewer. */
static bool
is_verbatim(const char *event)
{
    return strcmp(event, "delete") == 0 || strcmp(event, "announcement.delete") == 0 ||
           strcmp(event, "announcement.reaction") == 0 || strcmp(event, "filters_changed") == 0;
}

static void
wait_add(struct eu_stream_client *c)
{
    if (c->waiting)
        return;
    c->waiting = true;
    c->wait_next = NULL;
    if (line->wait_tail)
        line->wait_tail->wait_next = c;
    else
        line->wait_head = c;
    line->wait_tail = c;
}

static void
wait_remove(struct eu_stream_client *c)
{
    if (!c->waiting)
        return;
    struct eu_stream_client *prev = NULL;
    for (struct eu_stream_client *w = line->wait_head; w; prev = w, w = w->wait_next)
        if (w == c) {
            if (prev)
                prev->wait_next = c->wait_next;
            else
                line->wait_head = c->wait_next;
            if (line->wait_tail == c)
                line->wait_tail = prev;
            break;
        }
    c->waiting = false;
    c->wait_next = NULL;
}

struct delivery {
    struct eu_stream_client *c; /* holds a ref */
    struct eu_stream_queued *q;
};

static void pump(struct eu_stream_client *c);

/* Renders are free again: the clients waiting for one get their turn, in
 * the order they came. */
static void
wake_waiters(void)
{
    while (line->wait_head && line->renders < line->app->cfg->stream_max_renders) {
        struct eu_stream_client *c = line->wait_head;
        wait_remove(c);
        pump(c);
    }
}

static void
on_rendered(const char *json, size_t len, bool failed, void *arg)
{
    struct delivery *d = arg;
    struct eu_stream_client *c = d->c;
    struct eu_stream_queued *q = d->q;
    free(d);
    line->renders--;
    c->rendering = false;
    if (failed && !c->closing) {
        /* As when too far behind: a client left open would believe it saw
         * everything; closed, it reconnects and re-reads. */
        eu_log_warn("stream", "closing a stream: an event could not be rendered");
        eu_stream_client_end(c, WSLAY_CODE_INTERNAL_SERVER_ERROR,
                             "An event could not be rendered; reconnect");
    }
    struct eu_stream_sub *s = json && !c->closing ? sub_find(c, q->stream, q->param) : NULL;
    if (s)
        send_event(c, s, q->event, json, len);
    queued_free(q);
    pump(c);
    wake_waiters();
    eu_stream_client_unref(c);
}

/* ---------------------------------------------------------- shared renders */

static struct shared *
shared_find(int64_t tenant_id, const char *id, unsigned long long edit)
{
    for (struct shared *e = line->shared; e; e = e->next)
        if (e->tenant_id == tenant_id && e->edit == edit && strcmp(e->id, id) == 0)
            return e;
    return NULL;
}

/* Drops the oldest renders past SHARED_KEEP that nobody waits for. */
static void
shared_trim(void)
{
    struct shared **p = &line->shared;
    int kept = 0;
    while (*p) {
        struct shared *e = *p;
        if (++kept > SHARED_KEEP && e->ready && !e->waiters) {
            *p = e->next;
            ops.shared_free(e->sh);
            free(e->aud.ids);
            free(e);
            line->n_shared--;
            continue;
        }
        p = &e->next;
    }
}

static void
on_shared_done(struct eu_stream_shared *sh, bool failed, void *arg)
{
    struct shared *e = arg;
    if (e->orphan) {
        ops.shared_free(sh);
        free(e->aud.ids);
        free(e);
        return;
    }
    e->ready = true;
    e->failed = failed;
    e->sh = sh;
    /* Read by the render only: a listener that comes now is rendered for
     * alone if it needs flags. */
    free(e->aud.ids);
    memset(&e->aud, 0, sizeof(e->aud));
    line->stats.shared_renders++;
    struct shared_waiter *w = e->waiters;
    e->waiters = NULL;
    /* e may be trimmed from here on: the waiters find it again by id. */
    while (w) {
        struct shared_waiter *next = w->next;
        struct eu_stream_client *c = w->c;
        free(w);
        c->rendering = false;
        pump(c);
        eu_stream_client_unref(c);
        w = next;
    }
}

/* A new or edited status on a stream of statuses. */
static bool
shared_kind(const char *stream, const char *event)
{
    return (strcmp(event, "update") == 0 || strcmp(event, "status.update") == 0) &&
           (strcmp(stream, "user") == 0 || strcmp(stream, "list") == 0 ||
            strncmp(stream, "public", 6) == 0 || strncmp(stream, "hashtag", 7) == 0);
}

/* Whether q can be served from a shared render for c: a new status on a
 * stream of statuses, for a viewer whose state is at hand or on its way. */
static bool
shareable(const struct eu_stream_client *c, const struct eu_stream_queued *q)
{
    if (c->v.account_id && !c->vs && !c->vs_loading)
        return false;
    return shared_kind(q->stream, q->event);
}

static void
audience_add(struct shared *e, int64_t account_id)
{
    struct eu_stream_audience *a = &e->aud;
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->ids = eu_xrealloc(a->ids, a->cap * sizeof(*a->ids));
    }
    a->ids[a->n++] = account_id;
}

/* Starts the shared render of status id for t's listeners, first of the
 * renders kept; viewer (0: none) counted among them. w, when given, waits
 * for it (and holds a reference to its client): attached first, as the
 * render may be done before it returns, and with it the client. */
static void
shared_start(struct eu_tenant *t, const char *id, unsigned long long edit, struct shared_waiter *w,
             int64_t viewer)
{
    struct shared *e = eu_xcalloc(1, sizeof(*e));
    e->tenant_id = t->id;
    e->edit = edit;
    snprintf(e->id, sizeof(e->id), "%s", id);
    e->next = line->shared;
    line->shared = e;
    line->n_shared++;
    e->waiters = w;
    if (viewer)
        audience_add(e, viewer);
    ops.shared_render(line->app, t, id, &e->aud, on_shared_done, e);
    shared_trim();
}

/* c has a new status queued: the shared render is started now if it is
 * not under way, and c's viewer counted among those it is for, so that
 * the listeners one event reaches at once are all known to it before
 * its statements run (they are asynchronous). */
static void
shared_note(struct eu_stream_client *c, const struct eu_stream_sub *s, const char *event,
            const char *id, unsigned long long edit)
{
    /* A viewer whose state failed to load is rendered for alone. */
    if (!shared_kind(s->stream, event) || (c->v.account_id && !c->vs && !c->vs_loading))
        return;
    struct shared *e = shared_find(c->t->id, id, edit);
    if (!e)
        shared_start(c->t, id, edit, NULL, c->v.account_id);
    else if (!e->ready && c->v.account_id)
        audience_add(e, c->v.account_id);
}

/* Serves q, c's first event, from the shared render of its status: 1 done
 * (sent, or nothing for this viewer), 0 c waits for the render to come,
 * -1 q must be rendered for c alone. */
static int
try_shared(struct eu_stream_client *c, struct eu_stream_queued *q)
{
    if (!shareable(c, q))
        return -1;
    if (c->v.account_id && c->vs_loading) {
        /* The state is being (re)loaded, after a block or a new filter
         * say: what comes next waits for it, in order. */
        c->vs_waiting = true;
        c->rendering = true;
        return 0;
    }
    struct shared *e = shared_find(c->t->id, q->id, q->edit);
    if (!e) {
        /* Trimmed before c came to it: rendered again, for c at least. */
        struct shared_waiter *w = eu_xcalloc(1, sizeof(*w));
        w->c = c;
        c->refs++;
        c->rendering = true;
        shared_start(c->t, q->id, q->edit, w, c->v.account_id);
        return 0;
    }
    if (!e->ready) {
        struct shared_waiter *w = eu_xcalloc(1, sizeof(*w));
        w->c = c;
        w->next = e->waiters;
        e->waiters = w;
        c->refs++;
        c->rendering = true;
        return 0;
    }
    if (e->failed)
        return -1; /* its own render may fare better, or closes it */
    if (!e->sh)
        return 1;
    struct eu_stream_sub *s = sub_find(c, q->stream, q->param);
    if (!s)
        return 1;
    char *out = NULL;
    size_t len = 0;
    int r =
        ops.shared_payload(e->sh, c->vs, c->v.account_id, q->stream, q->param, c->ws, &out, &len);
    if (r == -2 && !c->vs_renewed) {
        /* Once: a state just loaded and out of date already (clocks that
         * disagree) is not loaded again for every event. */
        c->vs_renewed = true;
        eu_stream_client_vstate_reload(c);
        c->vs_waiting = true;
        c->rendering = true;
        return 0;
    }
    if (r < 0)
        return -1;
    c->vs_renewed = false;
    line->stats.spliced++;
    if (r > 0)
        send_spliced(c, s, q->event, out, len);
    free(out);
    return 1;
}

/* ------------------------------------------------------------ viewer state */

struct vs_load {
    struct eu_stream_client *c; /* holds a ref */
    unsigned gen;
};

static void
on_vstate(struct eu_stream_vstate *vs, void *arg)
{
    struct vs_load *l = arg;
    struct eu_stream_client *c = l->c;
    if (!line) {
        /* At exit, after the clients went. */
        ops.vstate_free(vs);
        free(l);
        return;
    }
    if (l->gen != c->vs_gen || c->closing) {
        /* A later load is on its way, or nobody needs this one. */
        ops.vstate_free(vs);
    } else {
        /* A failed load leaves none, not a stale one: its events are then
         * rendered for it alone, by the statements. */
        ops.vstate_free(c->vs);
        c->vs = vs;
        c->vs_loading = false;
        if (c->vs_waiting) {
            c->vs_waiting = false;
            c->rendering = false;
            pump(c);
        }
    }
    free(l);
    eu_stream_client_unref(c);
}

/* (Re)loads what shared renders need of c's viewer; meanwhile its events
 * are rendered for it alone. */
void
eu_stream_client_vstate_reload(struct eu_stream_client *c)
{
    if (!c->v.account_id || c->closing)
        return;
    struct vs_load *l = eu_xmalloc(sizeof(*l));
    l->c = c;
    l->gen = ++c->vs_gen;
    c->refs++;
    c->vs_loading = true;
    line->stats.vstate_loads++;
    ops.vstate_load(line->app, c->t, c->v.account_id, on_vstate, l);
}

void
eu_stream_stats(struct eu_stream_stats *out)
{
    if (line)
        *out = line->stats;
    else
        memset(out, 0, sizeof(*out));
}

/* ------------------------------------------------------------ the queue */

/* Sends or renders c's waiting events in order, one render at a time;
 * without a free render, c waits in line (wake_waiters()). */
static void
pump(struct eu_stream_client *c)
{
    while (!c->closing && !c->rendering && c->q_head) {
        struct eu_stream_queued *q = c->q_head;
        bool verbatim = is_verbatim(q->event);
        int shared = verbatim ? -1 : try_shared(c, q);
        if (shared == 0)
            return;
        if (shared > 0) {
            c->q_head = q->next;
            if (!c->q_head)
                c->q_tail = NULL;
            c->q_len--;
            queued_free(q);
            continue;
        }
        if (!verbatim && line->renders >= line->app->cfg->stream_max_renders) {
            wait_add(c);
            return;
        }
        c->q_head = q->next;
        if (!c->q_head)
            c->q_tail = NULL;
        c->q_len--;
        if (verbatim) {
            struct eu_stream_sub *s = sub_find(c, q->stream, q->param);
            /* filters_changed has no payload. */
            bool none = strcmp(q->event, "filters_changed") == 0;
            if (s)
                send_event(c, s, q->event, none ? NULL : q->id, none ? 0 : strlen(q->id));
            queued_free(q);
            continue;
        }
        struct delivery *d = eu_xmalloc(sizeof(*d));
        d->c = c;
        d->q = q;
        c->refs++;
        c->rendering = true;
        line->renders++;
        c->v.scopes = c->scopes;
        line->stats.renders++;
        /* The render may answer before it returns: on_rendered() has then
         * pumped already, and the loop finds c as it left it. */
        ops.render(line->app, c->t, &c->v, q->stream, q->param, q->event, q->id, on_rendered, d);
    }
}

void
eu_stream_client_queue(struct eu_stream_sub *s, const char *event, const char *id,
                       unsigned long long edit)
{
    struct eu_stream_client *c = s->c;
    if (c->q_len >= EU_STREAM_MAX_QUEUE) {
        /* Dropping the event would leave a client that stays connected
         * believing it saw everything; closed, it reconnects and re-reads. */
        eu_log_warn("stream", "closing a stream: %d events waiting to be rendered", c->q_len);
        eu_stream_client_end(c, WSLAY_CODE_INTERNAL_SERVER_ERROR, "Too far behind; reconnect");
        return;
    }
    /* Event names are ours ("update", "status.update"...); one that did
     * not fit would be a bug, not a client's doing. */
    if (strlen(event) >= sizeof(((struct eu_stream_queued *)0)->event)) {
        eu_log_error("stream", "event name '%s' too long", event);
        return;
    }
    struct eu_stream_queued *q = eu_xcalloc(1, sizeof(*q));
    snprintf(q->stream, sizeof(q->stream), "%s", s->stream);
    q->param = s->param ? eu_xstrdup(s->param) : NULL;
    memcpy(q->event, event, strlen(event) + 1);
    q->id = eu_xstrdup(id);
    q->edit = edit;
    if (c->q_tail)
        c->q_tail->next = q;
    else
        c->q_head = q;
    c->q_tail = q;
    c->q_len++;
    shared_note(c, s, event, id, q->edit);
    pump(c);
}

void
eu_stream_client_forget(struct eu_stream_client *c)
{
    wait_remove(c);
    while (c->q_head) {
        struct eu_stream_queued *q = c->q_head;
        c->q_head = q->next;
        queued_free(q);
    }
    c->q_tail = NULL;
    c->q_len = 0;
    ops.vstate_free(c->vs);
    c->vs = NULL;
}

/* ------------------------------------------------------------ lifetime */

void
eu_stream_deliver_start(struct eu_app *app, const struct eu_stream_ops *o)
{
    line = eu_xcalloc(1, sizeof(*line));
    line->app = app;
    ops = *o;
}

void
eu_stream_deliver_stop(void)
{
    if (!line)
        return;
    /* Shared renders in flight free themselves when done; their waiters
     * went with the clients. */
    while (line->shared) {
        struct shared *e = line->shared;
        line->shared = e->next;
        while (e->waiters) {
            struct shared_waiter *w = e->waiters;
            e->waiters = w->next;
            free(w);
        }
        if (e->ready) {
            ops.shared_free(e->sh);
            free(e->aud.ids);
            free(e);
        } else {
            e->orphan = true;
        }
    }
    free(line);
    line = NULL;
}
