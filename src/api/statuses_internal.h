/*
 * Declarations shared by the statuses group's files (statuses.c,
 * status_render.c, timelines.c, feeds.c) and nobody else.
 */
#ifndef EUNHA_API_STATUSES_INTERNAL_H
#define EUNHA_API_STATUSES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/statuses.h"

struct eu_req;
struct eu_app;
struct eu_tenant;
struct json_t;

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

/* Mastodon's answer to a visibility it does not know (or may not use). */
#define EU_STATUS_BAD_VISIBILITY "Validation failed: Visibility is not included in the list"

/* Calls fn for each element of a PostgreSQL bigint[]'s text ("{1,2}"). */
void eu_statuses_each_array_id(const char *text, void (*fn)(struct eu_req *, int64_t, void *),
                               struct eu_req *req, void *arg);

/* Thread, source and history handlers (statuses_thread.c) and the viewer's
 * interactions (statuses_actions.c), routed from statuses.c's table. */
void eu_statuses_source(struct eu_req *req);
void eu_statuses_history(struct eu_req *req);
void eu_statuses_context(struct eu_req *req);
void eu_statuses_favourite(struct eu_req *req);
void eu_statuses_unfavourite(struct eu_req *req);
void eu_statuses_bookmark(struct eu_req *req);
void eu_statuses_unbookmark(struct eu_req *req);
void eu_statuses_mute(struct eu_req *req);
void eu_statuses_unmute(struct eu_req *req);
void eu_statuses_pin(struct eu_req *req);
void eu_statuses_unpin(struct eu_req *req);
void eu_statuses_reblog(struct eu_req *req);
void eu_statuses_unreblog(struct eu_req *req);
void eu_statuses_favourited_by(struct eu_req *req);
void eu_statuses_reblogged_by(struct eu_req *req);

/* Timeline handlers (timelines.c), routed from statuses.c's table. */
void eu_timelines_home(struct eu_req *req);
void eu_timelines_public(struct eu_req *req);
void eu_timelines_tag(struct eu_req *req);
void eu_timelines_account(struct eu_req *req);

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

/* ------------------------------------------- publishing without a request */

/*
 * A status ready to be inserted: what posting resolved from the request
 * (author defaults, mentioned accounts, reply parent, formatted HTML).
 * statuses.c builds one for a POST; scheduled.c stores one and publishes it
 * when due. Strings are borrowed for the duration of the call they go to.
 */
struct eu_status_draft {
    int64_t account_id;
    int64_t application_id; /* 0: none */
    const char *text, *html, *spoiler;
    const char *language; /* NULL: none */
    bool sensitive;
    bool sensitive_default;    /* the author's default_sensitive instead (plain posts) */
    int visibility;            /* 0..3, or -1: the author's default_privacy (plain posts) */
    const char *reply_to;      /* parent status id, or NULL */
    const char *reply_account; /* parent's author, with reply_to */
    const char *conversation;  /* parent's conversation, with reply_to */
    const char *mention_ids;   /* bigint[] literal, "{}" for none */
    const char *tags;          /* text[] literal */
    /* {"options":[...],"expires_in":S,"multiple":B,"hide_totals":B} as
     * validated by eu_poll_params_read(), or NULL. */
    const char *poll;
    /* The media to attach, bigint[] literal in order ("{}" or NULL: none),
     * checked by the caller; the insert attaches only the author's
     * unattached ones (or the scheduled status's own). */
    const char *media_ids;
    /* When publishing a scheduled status: its id. The row is deleted in the
     * statement that inserts the status, and nothing is inserted when it is
     * already gone (cancelled, or published by another process). */
    const char *scheduled_id;
    /* The tenant's base URL, for the mentions and tags of the POST's
     * answer; NULL when nobody is answered (publishing a scheduled one). */
    const char *base_url;
};

/* status_id: the new status, or NULL when nothing was inserted (st
 * EU_DB_OK: the scheduled status was gone; otherwise a failure, error says
 * why). res: the insert's result, for eu_statuses_reply_inserted(). All
 * borrowed for the call. */
typedef void (*eu_status_published_cb)(const char *status_id, enum eu_db_status st,
                                       const char *error, const struct pg_result *res, void *arg);

/*
 * Inserts d as a status with its mentions, tags and poll in one statement,
 * on conn (NULL: a connection of t's pool); once it has committed, notifies
 * mentioned accounts and followers who asked, fans it out to home feeds and
 * wakes the poll task; then calls cb (later, never from inside this call).
 * Needs no request, so the scheduled-status publisher shares the path of
 * POST /api/v1/statuses.
 */
void eu_status_publish(struct eu_app *app, struct eu_tenant *t, struct eu_db_conn *conn,
                       const struct eu_status_draft *d, eu_status_published_cb cb, void *arg);

/* scheduled.c: reads a client's scheduled_at (ISO 8601). Returns 1 with *iso
 * (arena-owned, UTC) when it lies at least [workers]
 * scheduled_status_min_lead_seconds ahead, 0 when it is in the past (Mastodon
 * then posts at once), -1 after answering 422. */
int eu_scheduled_at_read(struct eu_req *req, const char *text, const char **iso);
/* scheduled.c: stores d to be published at iso (from eu_scheduled_at_read())
 * and answers the request with the ScheduledStatus; params (JSON object text)
 * is Mastodon's "params" of the entity. */
void eu_scheduled_create(struct eu_req *req, const struct eu_status_draft *d, const char *iso,
                         const char *params);

/* polls.c: validates the poll[...] parameters (poll: the "poll" object, may
 * be NULL). Returns 0 with *draft NULL (no poll) or the draft's poll JSON
 * (arena-owned), or -1 after answering 422. */
int eu_poll_params_read(struct eu_req *req, struct json_t *poll, const char **draft);
/* polls.c: the Poll entity from eunha_poll_json()'s text, for req's viewer
 * (without "voted" and "own_votes" for an anonymous one). New reference, or
 * NULL when text is not JSON. */
struct json_t *eu_poll_json_finish(struct eu_req *req, const char *text);
/* polls.c: GET /api/v1/polls/:id and POST /api/v1/polls/:id/votes, routed
 * from scheduled.c's table. */
void eu_polls_show(struct eu_req *req);
void eu_polls_vote(struct eu_req *req);

#endif
