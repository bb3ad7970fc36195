/*
 * The streaming API (Mastodon's /api/v1/streaming): WebSocket and
 * server-sent events, fed through Redis pub/sub so that any eunha process
 * may publish and every process with listeners hears it.
 *
 * What travels through Redis is "<event> <id>" on a channel
 * "<tenant prefix>stream:<name>" (names below), never a rendered entity:
 * each listener gets the entity as the REST handler that serves the same
 * timeline shows it to its viewer, so visibility, blocks, mutes, filters
 * and the viewer's flags are the REST ones. A new status is rendered once
 * per process and spliced for each listener (streaming.h, "render once,
 * send many").
 *
 * Channel names: "public", "public:local", "public:remote",
 * "hashtag:<lower tag>", "hashtag:local:<lower tag>", "user:<account id>",
 * "list:<list id>", "direct:<account id>" (carrying "conversation" and
 * "delete" of the direct statuses the account takes part in). Announcement
 * events are the exception: they go to every user channel of the tenant that
 * has a listener, and the reaction counts travel whole
 * ("announcement.reaction {json}"), being the same for all.
 *
 * This header is the publishing end, the social core's
 * (src/social/stream_events.c): every change that a stream shows calls it,
 * from the REST handlers and from inbox processing alike. The hub that
 * listens is in streaming.h, the rendering for one listener in api.h
 * (eu_stream_render()).
 */
#ifndef EUNHA_STREAM_H
#define EUNHA_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_app;
struct eu_req;
struct eu_tenant;

/* ---------------------------------------------------------- publishing */

/*
 * A status was committed (removed false: "update" on the author's and
 * each home recipient's user stream, and on the public and hashtag
 * streams it belongs to; a direct one, "conversation" on its local
 * participants' direct streams) or deleted or unreblogged (removed:
 * "delete" on the same). Costs one Redis round trip when no process listens to the
 * tenant, and one statement more when one does. Fire and forget; holds a
 * reference to t until done.
 */
void eu_stream_status(struct eu_app *app, struct eu_tenant *t, int64_t status_id, bool removed);
/* Status status_id was edited: "status.update" where "update" went. */
void eu_stream_status_edited(struct eu_app *app, struct eu_tenant *t, int64_t status_id);
/* req changes its viewer's filters: "filters_changed" on their user stream
 * once req ends (after its statement committed). */
void eu_stream_filters_changed(struct eu_req *req);
/*
 * Account account_id of t changed what its streams filter statuses by: its
 * blocks (either way), mutes, domain blocks or filters. Every process with
 * a stream of the account reloads its state for render once, send many
 * (src/http/stream_deliver.c). Call after the change committed; fire and forget.
 */
void eu_stream_viewer_changed(struct eu_app *app, const struct eu_tenant *t, int64_t account_id);
/* Notification notification_id of local account account_id was stored
 * (the process's app, as notify.c has none at hand; nothing before
 * eu_stream_start()). */
void eu_stream_notification(struct eu_tenant *t, int64_t account_id, int64_t notification_id);
/*
 * Announcement announcement_id of t was published or changed (removed
 * false: "announcement", rendered for each listener as its REST list shows
 * it) or unpublished or deleted (removed: "announcement.delete" with the
 * id), on the user stream of every listener of t, in any process. Fire and
 * forget.
 */
void eu_stream_announcement(struct eu_app *app, const struct eu_tenant *t, int64_t announcement_id,
                            bool removed);
/* The reactions name (copied) of announcement_id now number count:
 * "announcement.reaction" {"name","count","announcement_id"} likewise. */
void eu_stream_announcement_reaction(struct eu_app *app, const struct eu_tenant *t,
                                     int64_t announcement_id, const char *name, long long count);
/*
 * Gives the publishers the process (eu_stream_notification() is called
 * without one) from start-up to eu_stream_publish_stop(); until then, and
 * after, a notification is not published. The wiring calls it beside
 * eu_stream_start().
 */
void eu_stream_publish_start(struct eu_app *app);
void eu_stream_publish_stop(void);
/* Publishes "<event> <payload>" on the tenant's channel name. Fire and
 * forget; strings are copied. */
void eu_stream_publish(struct eu_app *app, const struct eu_tenant *t, const char *channel,
                       const char *event, const char *payload);

#endif
