/*
 * The streaming API's listening end (src/http/streaming.c, and
 * stream_deliver.c for what reaches each listener): the hub that
 * holds the WebSocket and SSE connections and hears the Redis channels
 * stream.h publishes on. It lives in the request layer, beside the
 * connections it takes from evhttp; what one listener gets of an event is
 * rendered above it, by the REST handler of the timeline in question
 * (src/api/stream_render.c), which the wiring hands to eu_stream_start()
 * as a callback, so the hub includes nothing of the rooms above.
 */
#ifndef EUNHA_STREAMING_H
#define EUNHA_STREAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/router.h"

struct eu_app;
struct eu_req;
struct eu_tenant;

/* ------------------------------------------------------------ rendering */

/* Who a stream is for: the token's account, user and scopes. */
struct eu_stream_viewer {
    int64_t account_id, user_id, token_id, app_id;
    const char *scopes; /* borrowed for the call */
};

/* json: the payload (an entity's JSON) or NULL when this viewer must not
 * get the event, or when failed: the render could not be made (the
 * database busy or down), so the event is lost unless the stream says so.
 * json is borrowed for the call. */
typedef void (*eu_stream_rendered_cb)(const char *json, size_t len, bool failed, void *arg);
/*
 * Renders what event ("update", "notification") about id means on stream
 * ("user", "public:local", "hashtag", ...; param: the tag) for v. cb must
 * run exactly once, and may run before the renderer returns. v and the
 * strings are borrowed for the call. eu_stream_render() (api.h) is the one
 * the process uses.
 */
typedef void (*eu_stream_render_cb)(struct eu_app *app, struct eu_tenant *t,
                                    const struct eu_stream_viewer *v, const char *stream,
                                    const char *param, const char *event, const char *id,
                                    eu_stream_rendered_cb cb, void *arg);

/* -------------------------------------------------------- shared renders */

/*
 * Render once, send many: a new status ("update") on the public, hashtag
 * and user streams is rendered once without a viewer, and each listener's
 * payload is spliced from that render and what the hub keeps of its viewer
 * (blocks, mutes, domain blocks and filters, loaded when the stream opens
 * and again when they change), with no statement per listener: a reblog's
 * or a reply's flags are read for all its listeners at once. Both types
 * are the renderer's (src/api/stream_render.c); the hub only holds them.
 */
struct eu_stream_shared;
struct eu_stream_vstate;

/* The signed-in listeners a shared render is for, as far as the hub knows
 * them while it runs (their account ids, repeats allowed). The renderer
 * reads it once, for the flags a reblog's listeners need; a listener it
 * did not hold then is rendered for alone. The hub's, valid until the
 * render's callback. */
struct eu_stream_audience {
    int64_t *ids;
    size_t n, cap;
};

/* sh: the render, NULL when nobody gets the status (gone meanwhile), or
 * when failed (the database busy or down). sh is the callback's, to
 * free with the ops' shared_free. */
typedef void (*eu_stream_shared_cb)(struct eu_stream_shared *sh, bool failed, void *arg);
/* vs: NULL when failed; the callback's, to free with vstate_free. */
typedef void (*eu_stream_vstate_cb)(struct eu_stream_vstate *vs, void *arg);

/* What the wiring gives the hub: every callback is needed. */
struct eu_stream_ops {
    /* One listener's render (eu_stream_render()). */
    eu_stream_render_cb render;
    /* Renders status id once for every listener of t, aud among them; cb
     * runs once, maybe before this returns. */
    void (*shared_render)(struct eu_app *app, struct eu_tenant *t, const char *id,
                          const struct eu_stream_audience *aud, eu_stream_shared_cb cb, void *arg);
    /*
     * The payload of sh for viewer account_id (0: a token without an
     * account) with state vs (NULL with account_id 0) on stream (param:
     * a list's id or a tag, NULL for the others): 1 and
     * *out (malloc'd, the caller's; JSON string-escaped without its quotes
     * when escaped, for a WebSocket message) and *len; 0 when this viewer
     * gets nothing (blocks, mutes, a "hide" filter); -1 when sh cannot
     * serve this viewer: render for it alone; -2 when vs is out of date (a
     * filter expired): load it again, then ask again.
     */
    int (*shared_payload)(const struct eu_stream_shared *sh, struct eu_stream_vstate *vs,
                          int64_t account_id, const char *stream, const char *param, bool escaped,
                          char **out, size_t *len);
    void (*shared_free)(struct eu_stream_shared *sh);
    /* Loads what shared_payload needs of account_id; cb runs once, later. */
    void (*vstate_load)(struct eu_app *app, struct eu_tenant *t, int64_t account_id,
                        eu_stream_vstate_cb cb, void *arg);
    void (*vstate_free)(struct eu_stream_vstate *vs);
};

/* Figures of the hub since start, for tests and /metrics. */
struct eu_stream_stats {
    unsigned long long shared_renders; /* statuses rendered once for many */
    unsigned long long spliced;        /* payloads made from one of them */
    unsigned long long renders;        /* renders for one listener */
    unsigned long long vstate_loads;   /* viewer states (re)loaded */
};
void eu_stream_stats(struct eu_stream_stats *out);

/* ------------------------------------------------------------ listening */

/* The streaming routes, ending with {0}. */
extern const struct eu_route eu_stream_routes[];

/* Starts the hub: the channel subscriptions on app->redis, every event
 * rendered through ops (copied). Once. */
void eu_stream_start(struct eu_app *app, const struct eu_stream_ops *ops);
/* Closes every stream (SIGTERM: streams never end by themselves). */
void eu_stream_close_all(void);
/* Frees the hub at exit, after eu_stream_close_all(). */
void eu_stream_free(void);
/* Open streaming connections in this process. */
int eu_stream_count(void);
/*
 * Closes the streams a revocation covers, here at once and, through Redis,
 * in every process: those opened with token_hash (a token's SHA-256 in
 * hex) when it is not NULL, else those of account_id when it is not 0,
 * else every stream of t. A WebSocket client gets close code 1008 and the
 * reason. Call after the change is committed; fire and forget.
 */
void eu_stream_close_for(struct eu_app *app, const struct eu_tenant *t, int64_t account_id,
                         const char *token_hash);

/* Route handlers: GET /api/v1/streaming (WebSocket upgrade, or SSE with
 * ?stream=), GET /api/v1/streaming/health, GET /api/v1/streaming/:kind... */
void eu_stream_handle_ws(struct eu_req *req);
void eu_stream_handle_sse(struct eu_req *req);
void eu_stream_handle_health(struct eu_req *req);

#endif
