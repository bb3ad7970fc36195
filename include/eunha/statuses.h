/*
 * Statuses as other groups see them: the Status entity renderer, and the
 * SQL predicate that decides whether a viewer may see a status. Every read of
 * a status anywhere in the API goes through one or the other, so visibility
 * is enforced in one place. The social core's (src/social/status_render.c,
 * render_cache.c): the REST handlers, inbox processing and the admin API
 * all render through it.
 */
#ifndef EUNHA_STATUSES_H
#define EUNHA_STATUSES_H

#include <stddef.h>

#include <stdbool.h>
#include <stdint.h>

#include "eunha/entities.h"

struct eu_req;
struct pg_result;
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

/* The rendered-entity cache's figures (src/social/render_cache.c), for
 * /metrics. */
struct eu_rc_stats {
    size_t entries;
    unsigned long long hits, misses; /* statuses and accounts served, or built */
};
void eu_rc_stats(struct eu_rc_stats *out);
/* Empties the cache (at exit, and when it is turned off). */
void eu_rc_free(void);

/* The Poll entity from eunha_poll_json()'s text (the
 * statements' function), for req's viewer
 * (without "voted" and "own_votes" for an anonymous one). New reference, or
 * NULL when text is not JSON. */
struct json_t *eu_poll_json_finish(struct eu_req *req, const char *text);

/* ------------------------------------------------ rendering options */

/* Flags of eu_statuses_render_opts(). */
enum {
    EU_RENDER_SOURCE = 1 << 0,      /* add "text" (the source) as DELETE answers it */
    EU_RENDER_KEEP_HIDDEN = 1 << 1, /* skip the visibility check (the caller did it) */
    /* drop statuses (and reblogs of statuses) by accounts of a domain the
     * viewer blocks: timelines, lists and streams, not a status asked for */
    EU_RENDER_HIDE_DOMAIN_BLOCKED = 1 << 2,
};

/* eu_statuses_render() with flags. */
void eu_statuses_render_opts(struct eu_req *req, const char *const *ids, size_t n, unsigned flags,
                             eu_statuses_rendered_cb cb, void *arg);

/* Renders status id for req's viewer and answers with it (404 when the
 * viewer may not see it). */
void eu_statuses_reply_one(struct eu_req *req, const char *id);

/*
 * Answers req (its viewer the author) with the status eu_status_publish()
 * inserted: from res when the statement returned it as
 * EU_NEW_STATUS_RENDER_SQL lays out, else rendered by a statement.
 */
void eu_statuses_reply_inserted(struct eu_req *req, const char *status_id,
                                const struct pg_result *res);

/* Mastodon's name of a visibility code (0..3), or NULL. */
const char *eu_status_visibility_name(int v);
/* The code of a visibility name, or -1. */
int eu_status_visibility_code(const char *name);

/* Renders the statuses and replies 200 with the array, the Link header
 * computed from first_id/last_id (NULL: none). Used by every list endpoint.
 * filter_context ("home", "public", "account", "thread") applies the viewer's
 * filters when the viewer is signed in; NULL applies none. */
void eu_statuses_reply_list(struct eu_req *req, const char *const *ids, size_t n,
                            const char *first_id, const char *last_id, const char *filter_context);

/*
 * The Status entity's mentions and tags as JSON arrays, one element for
 * the accounts row ma a mention names / for the tag called name, base the
 * tenant's base URL: shared by the render and the insert that answers with
 * what it inserted.
 */
#define EU_MENTION_JSON_SQL(ma, base)                                                              \
    "json_build_object('id', " ma ".id::text, 'username', " ma ".username, 'url', coalesce(" ma    \
    ".url, " base " || '/@' || " ma ".username), 'acct', " ma ".username || coalesce('@' || " ma   \
    ".domain, ''))"
#define EU_TAG_JSON_SQL(name, base)                                                                \
    "json_build_object('name', lower(" name "), 'url', " base " || '/tags/' || lower(" name "))"

/*
 * The select list that answers a POST with the status it inserted, laid
 * out as status_render.statuses's row (see eu_statuses_reply_inserted()),
 * so the status needs no statement of its own to render:
 * EU_NEW_STATUS_NCOLS columns for the new row s (RETURNING *, and its
 * xmin::text as sx), seen by its author $2, with mentions, tags and media
 * the JSON arrays the statement built from what it inserted, and a, the
 * author's row as EU_NEW_STATUS_AUTHOR_SQL locks it. Nobody can have
 * favourited, boosted, bookmarked or pinned a status not yet committed;
 * its conversation may be muted. Both stamps are the transaction's: the
 * counters trigger updates the author's row in it. No poll: a post with
 * one is rendered by the render statement.
 */
/* Laid out by hand: clang-format splits SQL text after a fragment macro. */
/* clang-format off */
#define EU_NEW_STATUS_RENDER_SQL(mentions, tags, media)                                            \
    "s.id, true, false, s.reblog_of_id, s.sx, s.sx, s.account_id, s.visibility, false, false,"     \
    " false, false, EXISTS (SELECT 1 FROM conversation_mutes cm WHERE cm.tenant_id = $1"           \
    " AND cm.account_id = $2::bigint"                                                              \
    " AND cm.conversation_id = coalesce(s.conversation_id, s.id)),"                                \
    " false, false, (SELECT json_build_object('name', oa.name, 'website', oa.website)::text"       \
    " FROM oauth_applications oa WHERE oa.tenant_id = $1 AND oa.id = s.application_id),"           \
    " NULL, NULL, NULL, " EU_SQL_TS("s.created_at") ", s.in_reply_to_id,"                          \
    " s.in_reply_to_account_id, s.sensitive, s.spoiler_text, s.language, s.uri, s.url, s.local,"   \
    " s.content, NULL, s.replies_count, s.reblogs_count, s.favourites_count, " mentions ", "       \
    tags ", " media ", " EU_ACCOUNT_COLUMNS("a")

/* The CTE a for EU_NEW_STATUS_RENDER_SQL: the author's row, locked so that
 * the counters trigger adds to this version of it and no other, with what
 * the trigger will add. The render cache may then keep it under the
 * transaction's stamp. */
#define EU_NEW_STATUS_AUTHOR_SQL                                                                   \
    " a AS (SELECT x.id, x.username, x.domain, x.display_name, x.note, x.url, x.uri,"              \
    "  x.avatar_url, x.header_url, x.locked, x.bot, x.discoverable, x.fields, x.created_at,"       \
    "  x.followers_count, x.following_count, x.statuses_count + 1 AS statuses_count,"              \
    "  greatest(x.last_status_at, s.created_at) AS last_status_at, x.suspended_at"                 \
    "  FROM accounts x, s WHERE x.tenant_id = $1 AND x.id = $2::bigint FOR NO KEY UPDATE OF x)"
/* clang-format on */
#define EU_NEW_STATUS_NCOLS (36 + EU_ACCOUNT_NCOLS)

#endif
