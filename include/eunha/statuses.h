/*
 * Statuses as other groups see them: the Status entity renderer, and where
 * the rule that decides whether a viewer may see a status lives (SQL
 * functions, migration 0040). Every read of a status anywhere in the API
 * goes through one or the other, so visibility is enforced in one place.
 * The social core's (src/social/status_render.c, render_cache.c): the REST
 * handlers, inbox processing and the admin API all render through it.
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
 * Whether a viewer may see a status, and whether a status's author is shown
 * in lists of statuses, are SQL functions (migration 0042):
 * eunha_is_visible() and eunha_is_in_audience() for a status,
 * eunha_is_not_domain_hidden() and eunha_is_not_shunned() for its author.
 * Every statement that reads statuses for a viewer joins them
 * (CROSS JOIN LATERAL) and tests their ok column.
 */

/*
 * The author's Account fields as the Status render reads them (its columns
 * from "account_id" on, src/social/status_render.c), from an accounts row
 * aliased a: for statements that answer a status with its author already
 * at hand (the post's insert, the render's own lateral). SQL text, each
 * item led by a space, ending with account_emojis and no comma.
 */
#define EU_STATUS_AUTHOR_COLUMNS_OF_A                                                              \
    " a.id AS account_id, a.username AS account_username, a.domain AS account_domain,"             \
    " a.display_name AS account_display_name, a.note AS account_note, a.url AS account_url,"       \
    " a.uri AS account_uri, a.avatar_url AS account_avatar, a.header_url AS account_header,"       \
    " a.locked AS account_locked, a.bot AS account_bot,"                                           \
    " a.discoverable AS account_discoverable, a.fields::text AS account_fields,"                   \
    " to_char(date_trunc('day', a.created_at AT TIME ZONE 'UTC'),"                                 \
    " 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS account_created_at,"                                 \
    " a.followers_count AS account_followers_count,"                                               \
    " a.following_count AS account_following_count,"                                               \
    " a.statuses_count AS account_statuses_count,"                                                 \
    " to_char(a.last_status_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS account_last_status_at,"       \
    " a.suspended_at IS NOT NULL AS account_suspended, a.roles::text AS account_roles,"            \
    " eunha_emojis_in($1, a.domain, a.display_name || ' ' || a.note || ' ' || a.fields::text)"     \
    " AS account_emojis"

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
 * inserted: from res when the statement returned it under
 * status_render.statuses's column names, else rendered by a statement.
 */
void eu_statuses_reply_inserted(struct eu_req *req, const char *status_id,
                                const struct pg_result *res);

/* Mastodon's name of a visibility code (0..3), or NULL. */
const char *eu_status_visibility_name(int v);
/* The code of a visibility name, or -1. */
int eu_status_visibility_code(const char *name);

/* Who may quote a status (statuses.quote_policy, migration 0067): the
 * API's quote_approval_policy values. */
enum {
    EU_QUOTE_POLICY_PUBLIC = 0,
    EU_QUOTE_POLICY_FOLLOWERS = 1,
    EU_QUOTE_POLICY_NOBODY = 2,
};

/* The code of a quote_approval_policy name, or -1. */
int eu_quote_policy_code(const char *name);

/* Renders the statuses and replies 200 with the array, the Link header
 * computed from first_id/last_id (NULL: none). Used by every list endpoint.
 * filter_context ("home", "public", "account", "thread") applies the viewer's
 * filters when the viewer is signed in; NULL applies none. */
void eu_statuses_reply_list(struct eu_req *req, const char *const *ids, size_t n,
                            const char *first_id, const char *last_id, const char *filter_context);

/*
 * The Status entity's mentions and tags, shared by the render and the
 * insert that answers with what it inserted, are built by the SQL
 * functions eunha_mention_json() and eunha_tag_json() (migration 0040).
 * statuses.insert and statuses.insert_plain answer a POST with the status
 * they inserted, under status_render.statuses's column names (see
 * eu_statuses_reply_inserted()), so the status needs no statement of its
 * own to render.
 */

#endif
