/*
 * Statuses as other groups see them: the Status entity renderer, and the
 * SQL predicate that decides whether a viewer may see a status. Every read of
 * a status anywhere in the API goes through one or the other, so visibility
 * is enforced in one place.
 */
#ifndef EUNHA_STATUSES_H
#define EUNHA_STATUSES_H

#include <stddef.h>

struct eu_req;
struct eu_task_run;
struct json_t;

/*
 * SQL truth value: may viewer v (an SQL expression of type bigint, 0 for
 * anonymous, e.g. "$3::bigint") see the statuses row aliased s? False for a
 * deleted status or a suspended author. The author sees everything of their
 * own; anyone the author blocks sees nothing; public and unlisted are for
 * everyone else, private for followers and mentioned accounts, direct for
 * mentioned accounts only. A reblog's original must be checked on its own.
 */
#define EU_STATUS_VISIBLE_SQL(s, v)                                                                \
    "(" s ".deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM accounts vsa WHERE vsa.tenant_id = "  \
    "$1 AND vsa.id = " s                                                                           \
    ".account_id AND vsa.suspended_at IS NOT NULL) AND " EU_STATUS_AUDIENCE_SQL(s, v) ")"

/* The same, where the author's accounts row is already joined as a: one
 * index probe a status fewer on every page. */
#define EU_STATUS_VISIBLE_BY_SQL(s, a, v)                                                          \
    "(" s ".deleted_at IS NULL AND " a ".suspended_at IS NULL AND " EU_STATUS_AUDIENCE_SQL(s, v) ")"

/* The part of the rule that depends on the viewer: author, blocks,
 * visibility, follows and mentions. */
#define EU_STATUS_AUDIENCE_SQL(s, v)                                                               \
    "(" s ".account_id = " v                                                                       \
    " OR (NOT EXISTS (SELECT 1 FROM blocks vsb WHERE vsb.tenant_id = $1 AND vsb.account_id = " s   \
    ".account_id AND vsb.target_account_id = " v ") AND (" s ".visibility <= 1 OR (" s             \
    ".visibility = 2 AND EXISTS (SELECT 1 FROM follows vsf WHERE vsf.tenant_id = $1 AND "          \
    "vsf.account_id = " v " AND vsf.target_account_id = " s                                        \
    ".account_id)) OR EXISTS (SELECT 1 FROM mentions vsm"                                          \
    " WHERE vsm.tenant_id = $1 AND vsm.status_id = " s ".id AND vsm.account_id = " v "))))"

/*
 * SQL truth value: is the author (the accounts row aliased a) shown to
 * viewer v in lists of statuses? Not when the viewer blocks the author's
 * domain (Mastodon's domain_blocking?), nor when the tenant silenced the
 * author and the viewer does not follow them: the domain half of
 * Mastodon's StatusFilter. Only a remote author costs the probes, each a
 * primary-key lookup. Timelines, threads and status search use it; a status
 * asked for by id does not, as in Mastodon.
 */
#define EU_STATUS_NOT_DOMAIN_HIDDEN_SQL(a, v)                                                      \
    "(" a ".domain IS NULL OR (NOT EXISTS (SELECT 1 FROM account_domain_blocks xd"                 \
    " WHERE xd.tenant_id = $1 AND xd.account_id = " v " AND xd.domain = " a ".domain)"             \
    " AND (" a ".silenced_at IS NULL OR EXISTS (SELECT 1 FROM follows xf WHERE xf.tenant_id = $1"  \
    " AND xf.account_id = " v " AND xf.target_account_id = " a ".id))))"

/*
 * SQL truth value: is a status by the account whose id is the SQL
 * expression aid shown to viewer v in threads and status search? Not when
 * the viewer blocks the author or mutes them (a mute not yet expired), nor
 * when the author blocks the viewer: the account half of Mastodon's
 * StatusFilter, which never hides the viewer's own statuses. It goes in the
 * statements that choose a page, so a page is not cut short afterwards; the
 * status asked for by id (a thread's own) is not filtered, as in Mastodon.
 */
#define EU_STATUS_NOT_SHUNNED_SQL(aid, v)                                                          \
    "(" aid " = " v " OR (NOT EXISTS (SELECT 1 FROM blocks yb WHERE yb.tenant_id = $1"             \
    " AND ((yb.account_id = " v " AND yb.target_account_id = " aid ")"                             \
    " OR (yb.account_id = " aid " AND yb.target_account_id = " v ")))"                             \
    " AND NOT EXISTS (SELECT 1 FROM mutes ym WHERE ym.tenant_id = $1 AND ym.account_id = " v       \
    " AND ym.target_account_id = " aid " AND (ym.expires_at IS NULL OR ym.expires_at > now()))))"

/* array: a new reference the callback owns (json_decref it or pass it on to
 * eu_req_reply_json, which steals it). */
typedef void (*eu_statuses_rendered_cb)(struct eu_req *req, struct json_t *array, void *arg);

/*
 * Loads the statuses with these ids (decimal strings, in this order), drops
 * the ones the viewer (req->auth.account_id, 0 = anonymous) may not see or
 * that are deleted (and reblogs whose original is hidden), and renders
 * Mastodon Status entities: account, reblog nested, mentions, tags, emojis
 * [], media_attachments (in order), counts, favourited/reblogged/bookmarked/muted/
 * pinned for an authenticated viewer, the poll (for the viewer), card null,
 * filtered []. The array keeps the order of ids. ids and its strings are only
 * read during the call. One database query whatever n is. On a database failure it answers
 * the request itself (eu_req_reply_db_error) and does not call cb. cb runs
 * later, never from inside this call; must be called on the loop thread.
 */
void eu_statuses_render(struct eu_req *req, const char *const *ids, size_t n,
                        eu_statuses_rendered_cb cb, void *arg);

/* The rendered-entity cache's figures (src/api/render_cache.c), for
 * /metrics. */
struct eu_rc_stats {
    size_t entries;
    unsigned long long hits, misses; /* statuses and accounts served, or built */
};
void eu_rc_stats(struct eu_rc_stats *out);
/* Empties the cache (at exit, and when it is turned off). */
void eu_rc_free(void);

/*
 * The statuses' timed tasks (eu_task_kinds[] in src/app/kinds.c). The
 * scheduled-status publisher (scheduled.c) posts the statuses that are due
 * and sleeps until the next; the poll closer (polls.c) closes expired polls,
 * notifies their authors and voters, and sleeps until the next expiry.
 */
void eu_scheduled_task_run(struct eu_task_run *run);
void eu_polls_task_run(struct eu_task_run *run);

#endif
