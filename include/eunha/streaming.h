/*
 * The streaming API's listening end (src/http/streaming.c): the hub that
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

/* ------------------------------------------------------------ listening */

/* The streaming routes, ending with {0}. */
extern const struct eu_route eu_stream_routes[];

/* Starts the hub: the channel subscriptions on app->redis, every event
 * rendered through render (not NULL). Once. */
void eu_stream_start(struct eu_app *app, eu_stream_render_cb render);
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
