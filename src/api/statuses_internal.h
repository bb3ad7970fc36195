/*
 * Declarations shared by the statuses group's files (statuses.c,
 * status_render.c, timelines.c, feeds.c) and nobody else.
 */
#ifndef EUNHA_API_STATUSES_INTERNAL_H
#define EUNHA_API_STATUSES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/statuses.h"

struct eu_req;

/* Flags of eu_statuses_render_opts(). */
enum {
    EU_RENDER_SOURCE = 1 << 0, /* add "text" (the source) as DELETE answers it */
    EU_RENDER_KEEP_HIDDEN = 1 << 1, /* skip the visibility check (the caller did it) */
};

/* eu_statuses_render() with flags. */
void eu_statuses_render_opts(struct eu_req *req, const char *const *ids, size_t n, unsigned flags,
                             eu_statuses_rendered_cb cb, void *arg);

/* Mastodon's name of a visibility code (0..3), or NULL. */
const char *eu_status_visibility_name(int v);
/* The code of a visibility name, or -1. */
int eu_status_visibility_code(const char *name);

/* Renders the statuses and replies 200 with the array, the Link header
 * computed from first_id/last_id (NULL: none). Used by every list endpoint.
 * filter_context ("home", "public", "account", "thread") applies the viewer's
 * filters when the viewer is signed in; NULL applies none. */
void eu_statuses_reply_list(struct eu_req *req, const char *const *ids, size_t n,
                            const char *first_id, const char *last_id,
                            const char *filter_context);

/*
 * Pushes status_id into the home feeds that should hold it (the author's,
 * and followers' per the home rules), or removes it from them when remove is
 * set. Feeds that are not in Redis are left missing (they will be rebuilt).
 * Fire and forget; failures are logged.
 */
void eu_feed_status_fanout(struct eu_req *req, int64_t status_id, bool remove);

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

/* Timeline handlers (timelines.c), routed from statuses.c's table. */
void eu_timelines_home(struct eu_req *req);
void eu_timelines_public(struct eu_req *req);
void eu_timelines_tag(struct eu_req *req);
void eu_timelines_account(struct eu_req *req);

/*
 * SQL truth value: does status s belong in account v's home feed (v an SQL
 * bigint expression)? Shared by fan-out and rebuild so they agree.
 */
#define EU_HOME_FEED_SQL(s, v)                                                                     \
    "(" s ".deleted_at IS NULL AND (" s ".account_id = " v " OR (EXISTS (SELECT 1 FROM follows hf" \
    " WHERE hf.account_id = " v " AND hf.target_account_id = " s ".account_id AND (" s             \
    ".reblog_of_id IS NULL OR hf.show_reblogs)) AND " EU_STATUS_VISIBLE_SQL(s, v)                  \
    " AND (" s ".visibility < 3 OR EXISTS (SELECT 1 FROM mentions hm WHERE hm.status_id = " s     \
    ".id AND hm.account_id = " v ")) AND (" s ".in_reply_to_account_id IS NULL OR " s             \
    ".in_reply_to_account_id = " s ".account_id OR " s ".in_reply_to_account_id = " v             \
    " OR EXISTS (SELECT 1 FROM follows hr WHERE hr.account_id = " v                               \
    " AND hr.target_account_id = " s ".in_reply_to_account_id)) AND NOT EXISTS (SELECT 1 FROM"     \
    " mutes hu WHERE hu.account_id = " v " AND hu.target_account_id IN (" s ".account_id, "       \
    "(SELECT ro.account_id FROM statuses ro WHERE ro.id = " s ".reblog_of_id)) AND"               \
    " (hu.expires_at IS NULL OR hu.expires_at > now())) AND NOT EXISTS (SELECT 1 FROM blocks hb"  \
    " WHERE (hb.account_id = " v " AND hb.target_account_id IN (" s ".account_id, (SELECT"        \
    " ro.account_id FROM statuses ro WHERE ro.id = " s ".reblog_of_id))) OR (hb.target_account_id" \
    " = " v " AND hb.account_id = (SELECT ro.account_id FROM statuses ro WHERE ro.id = " s        \
    ".reblog_of_id))))))"

#endif
