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
 * statement that applied the home rules itself (EU_NEW_STATUS_FEEDS_SQL).
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
 * SQL truth value: does status s belong in account v's home feed (v an SQL
 * bigint expression)? Shared by fan-out and rebuild so they agree;
 * EU_NEW_STATUS_FEEDS_SQL is its case for a new plain status, and
 * test_timelines checks the two agree.
 */
#define EU_HOME_FEED_SQL(s, v)                                                                     \
    "(" s ".deleted_at IS NULL AND (" s ".account_id = " v " OR (EXISTS (SELECT 1 FROM follows hf" \
    " WHERE hf.tenant_id = $1 AND hf.account_id = " v " AND hf.target_account_id = " s             \
    ".account_id AND (" s ".reblog_of_id IS NULL OR hf.show_reblogs)) AND " EU_STATUS_VISIBLE_SQL( \
        s,                                                                                         \
        v) " AND (" s ".visibility < 3 OR EXISTS (SELECT 1 FROM mentions hm WHERE hm.tenant_id = " \
           "$1 AND hm.status_id = " s ".id AND hm.account_id = " v ")) AND (" s                    \
           ".in_reply_to_account_id IS NULL OR " s ".in_reply_to_account_id = " s                  \
           ".account_id OR " s ".in_reply_to_account_id = " v                                      \
           " OR EXISTS (SELECT 1 FROM follows hr WHERE hr.tenant_id = $1 AND hr.account_id = " v   \
           " AND hr.target_account_id = " s                                                        \
           ".in_reply_to_account_id)) AND NOT EXISTS (SELECT 1 FROM"                               \
           " mutes hu WHERE hu.tenant_id = $1 AND hu.account_id = " v                              \
           " AND hu.target_account_id IN (" s ".account_id, "                                      \
           "(SELECT ro.account_id FROM statuses ro WHERE ro.tenant_id = $1 AND ro.id = " s         \
           ".reblog_of_id)) AND"                                                                   \
           " (hu.expires_at IS NULL OR hu.expires_at > now())) AND NOT EXISTS (SELECT 1 FROM "     \
           "blocks hb"                                                                             \
           " WHERE hb.tenant_id = $1 AND ((hb.account_id = " v " AND hb.target_account_id IN (" s  \
           ".account_id, (SELECT"                                                                  \
           " ro.account_id FROM statuses ro WHERE ro.tenant_id = $1 AND ro.id = " s                \
           ".reblog_of_id))) OR (hb.target_account_id"                                             \
           " = " v " AND hb.account_id = (SELECT ro.account_id FROM statuses ro WHERE "            \
           "ro.tenant_id = $1 AND ro.id = " s ".reblog_of_id)))))))"

/*
 * FROM-list item: the accounts whose home feed may take status s (its
 * author and its local followers), as v(id); the caller's WHERE applies
 * EU_HOME_FEED_SQL(s, "v.id"). Used by feeds.recipients; the plain
 * insert has its own for a new status (EU_NEW_STATUS_FEEDS_SQL).
 */
#define EU_FEED_CANDIDATES_SQL(s)                                                                  \
    "LATERAL (SELECT " s ".account_id AS id UNION SELECT f.account_id FROM follows f"              \
    " JOIN accounts fa ON fa.tenant_id = $1 AND fa.id = f.account_id AND fa.domain IS NULL"        \
    " WHERE f.tenant_id = $1 AND f.target_account_id = " s ".account_id) v"

/*
 * EU_FEED_CANDIDATES_SQL and EU_HOME_FEED_SQL for a status that
 * statuses.insert_plain (CTE s) has just inserted, over the author's
 * followers fl(account_id, local) read once for the whole statement: as
 * v(id), the author and every local follower whose feed takes it. What
 * the general rule tests and cannot hold here is left out (a deleted
 * status, a reblog and its original's author, mentions, which a plain
 * status has none of); the rest is the same: direct reaches nobody else, a
 * reply only followers of the account replied to (or that account), and
 * no follower who blocks, is blocked by or mutes the author, nor any of
 * a suspended author. The general one was a third of the statement's
 * PostgreSQL CPU, a dozen subplans set up for every post.
 */
#define EU_NEW_STATUS_FEEDS_SQL(s)                                                                 \
    "(SELECT " s ".account_id AS id UNION ALL SELECT fl.account_id FROM fl WHERE fl.local"         \
    " AND fl.account_id <> " s ".account_id AND " s ".visibility < 3 AND (" s                      \
    ".in_reply_to_account_id IS NULL OR " s ".in_reply_to_account_id IN (" s ".account_id,"        \
    " fl.account_id) OR EXISTS (SELECT 1 FROM follows hr WHERE hr.tenant_id = $1"                  \
    " AND hr.account_id = fl.account_id AND hr.target_account_id = " s ".in_reply_to_account_id))" \
    " AND NOT EXISTS (SELECT 1 FROM blocks hb WHERE hb.tenant_id = $1"                             \
    " AND hb.account_id = fl.account_id AND hb.target_account_id = " s ".account_id)"              \
    " AND NOT EXISTS (SELECT 1 FROM blocks vb WHERE vb.tenant_id = $1"                             \
    " AND vb.account_id = " s ".account_id AND vb.target_account_id = fl.account_id)"              \
    " AND NOT EXISTS (SELECT 1 FROM mutes hu WHERE hu.tenant_id = $1"                              \
    " AND hu.account_id = fl.account_id AND hu.target_account_id = " s ".account_id"               \
    " AND (hu.expires_at IS NULL OR hu.expires_at > now()))"                                       \
    " AND NOT EXISTS (SELECT 1 FROM accounts sa WHERE sa.tenant_id = $1"                           \
    " AND sa.id = " s ".account_id AND sa.suspended_at IS NOT NULL)) v"

#endif
