/*
 * Home feeds: a Redis sorted set of status ids per account under the
 * tenant's prefix ("<prefix>:{t<ID>}:feed:home:<account id>"), scored by
 * id, trimmed to EU_FEED_MAX entries, plus a member "0" (score 0) that
 * marks it as built. Statuses fan out into followers' feeds when they are
 * written (feeds not in Redis are left alone); a missing feed is rebuilt
 * from PostgreSQL on read, so Redis losing data loses nothing. A feed not
 * read for two weeks expires. Deleting the key is the one way to change
 * what a feed holds other than posting (see src/social/feeds.c).
 */
#ifndef EUNHA_FEEDS_H
#define EUNHA_FEEDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/statuses.h"

struct eu_app;
struct eu_req;
struct eu_tenant;

#define EU_FEED_MAX 800
/* Bytes a home feed key needs: prefix, "feed:home:", a 20-character id. */
#define EU_FEED_KEY_SIZE 160

/* Writes the home feed key of account_id into buf of len bytes (at least
 * EU_FEED_KEY_SIZE, so it is never cut). */
void eu_feed_home_key(const struct eu_tenant *t, int64_t account_id, char *buf, size_t len);
/* Drops account_id's home feed so the next read rebuilds it (after a
 * follow, unfollow, block, mute or list change). Fire and forget. */
void eu_feed_home_invalidate(struct eu_app *app, const struct eu_tenant *t, int64_t account_id);

/*
 * Pushes status_id into the home feeds that should hold it (the author's,
 * and local followers' per the home rules), or removes it from them when
 * remove is set. Feeds that are not in Redis are left missing (they will be
 * rebuilt). Fire and forget; failures are logged. Holds a reference to t
 * until done, so a job or request may end meanwhile.
 */
void eu_feed_status_fanout(struct eu_app *app, struct eu_tenant *t, int64_t status_id, bool remove);
/*
 * eu_feed_status_fanout (adding) when the recipients are already known:
 * ids, the text of a bigint[] ("{1,2}"; NULL or "{}": none) from a
 * statement that applied the home rules itself (statuses.insert_plain).
 */
void eu_feed_status_fanout_ids(struct eu_app *app, struct eu_tenant *t, int64_t status_id,
                               const char *ids);

/* ------------------------------------------------ pages and rules */

struct eu_page;
/* ids: the page's status ids, newest first, arena-owned. */
typedef void (*eu_feed_page_cb)(struct eu_req *req, char **ids, size_t n, void *arg);
/*
 * Reads one page of the viewer's home feed from Redis, rebuilding the feed
 * from PostgreSQL when it is missing, and reading PostgreSQL directly when
 * Redis is down. On a database failure the request is answered here and cb
 * is not called.
 */
void eu_feed_home_page(struct eu_req *req, const struct eu_page *page, eu_feed_page_cb cb,
                       void *arg);

/*
 * Whether status s belongs in account v's home feed is the SQL function
 * eunha_is_home_feed_status() (migration 0042), shared by fan-out
 * (feeds.recipients), rebuild and streaming so they agree;
 * statuses.insert_plain has its own case of it for a new plain status, and
 * test_timelines checks the two agree.
 */

#endif
