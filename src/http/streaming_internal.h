/*
 * Shared by the two halves of the streaming hub, and nobody else:
 * streaming.c holds the connections, the Redis channels and who listens
 * to which, revocations and the handlers; stream_deliver.c takes an event
 * a listener is to hear from there to its output (the client's queue, the
 * render line, shared renders and the viewer state they need). They meet
 * at a client and its subscriptions, which streaming.c makes and frees.
 */
#ifndef EUNHA_HTTP_STREAMING_INTERNAL_H
#define EUNHA_HTTP_STREAMING_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <wslay/wslay.h>

#include "eunha/streaming.h"

struct bufferevent;
struct event;
struct eu_app;
struct eu_conns_hold;
struct eu_tenant;

struct eu_stream_chan;   /* a Redis channel and its listeners (streaming.c) */
struct eu_stream_queued; /* an event waiting for its render (stream_deliver.c) */
struct eu_stream_client;

/* One stream a client listens to. */
struct eu_stream_sub {
    struct eu_stream_client *c;
    struct eu_stream_chan *ch;
    char stream[24];                         /* Mastodon's name: "user", "public:local"... */
    char *param;                             /* the tag, or NULL */
    char *names;                             /* ["stream", param] as a message's JSON */
    bool notes_only;                         /* user:notification */
    struct eu_stream_sub *next;              /* in the client */
    struct eu_stream_sub *ch_next, *ch_prev; /* in the channel */
};

struct eu_stream_client {
    struct bufferevent *bev;
    struct eu_tenant *t; /* holds a ref */
    struct eu_stream_viewer v;
    char *scopes;
    char token_hash[65]; /* what a revocation names */
    struct eu_conns_hold *hold;
    bool ws;
    wslay_event_context_ptr wctx;
    struct event *heartbeat;
    struct event *free_ev;
    bool closing;
    bool released; /* free_ev ran: its reference is gone */
    int refs;      /* free_ev and the render in flight hold one each */
    struct eu_stream_sub *subs;
    int n_subs;
    struct eu_stream_queued *q_head, *q_tail;
    int q_len;
    bool rendering; /* a render for it alone, or a shared one, is awaited */
    bool waiting;   /* in the hub's line for a render */
    /* The viewer's blocks, mutes and filters for shared renders (NULL:
     * none yet, or its load failed: its events are rendered for it
     * alone); a reload in flight, gen the latest asked. */
    struct eu_stream_vstate *vs;
    bool vs_loading;
    bool vs_waiting; /* an event waits for the load (rendering is set) */
    bool vs_renewed; /* reloaded as out of date, and not served since */
    unsigned vs_gen;
    struct eu_stream_client *wait_next;
    struct eu_stream_client *prev, *next;
};

/* --------------------------------------------- streaming.c, for delivery */

/* Whether c's unsent output is past [limits] stream_max_output_bytes. */
bool eu_stream_client_over_limit(struct eu_stream_client *c);
/* Closes c at once, its output unsent; freed from a zero-delay event, so
 * c stays valid until the caller returns to the loop. */
void eu_stream_client_close(struct eu_stream_client *c);
/* Ends c's stream for why (a WebSocket close frame with code, at most 123
 * bytes), once what is in its output has gone. Frees nothing now. */
void eu_stream_client_end(struct eu_stream_client *c, uint16_t code, const char *why);
/* Drops a reference to c (a render's, a shared render waiter's, a viewer
 * state load's), freeing c with the last. */
void eu_stream_client_unref(struct eu_stream_client *c);

/* ----------------------------------------- stream_deliver.c, for the hub */

/* The delivery side starts with the hub, rendering through ops (copied,
 * and kept after eu_stream_deliver_stop() for the renders still in
 * flight). */
void eu_stream_deliver_start(struct eu_app *app, const struct eu_stream_ops *ops);
/* At the hub's end, before its clients are freed: shared renders still in
 * flight free themselves when done, a viewer state load its state. */
void eu_stream_deliver_stop(void);

/* Queues event about id (or a verbatim event's payload) on s for s->c,
 * which hears it: it goes out after what c waits for already, rendered
 * for c or spliced from a shared render. An edit's batch (0: not an edit)
 * says which of its shared renders it takes: one per publication of it.
 * A client too far behind is ended instead. The strings are copied. */
void eu_stream_client_queue(struct eu_stream_sub *s, const char *event, const char *id,
                            unsigned long long edit);
/* (Re)loads what shared renders need of c's viewer (its blocks, mutes,
 * domain blocks and filters); meanwhile its events are rendered for it
 * alone. Takes a reference to c until the load is back. */
void eu_stream_client_vstate_reload(struct eu_stream_client *c);
/* c is being freed: out of the render line, its waiting events and its
 * viewer state freed. */
void eu_stream_client_forget(struct eu_stream_client *c);

#endif
