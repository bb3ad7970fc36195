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
 * inserted: from res when the statement returned it under
 * status_render.statuses's column names, else rendered by a statement.
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

/* Timeline handlers (timelines.c), routed from statuses.c's table. */
void eu_timelines_home(struct eu_req *req);
void eu_timelines_public(struct eu_req *req);
void eu_timelines_tag(struct eu_req *req);
void eu_timelines_account(struct eu_req *req);

/*
 * Whether status s belongs in account v's home feed is the SQL function
 * eunha_home_feed_takes() (migration 0040), shared by fan-out
 * (feeds.recipients), rebuild and streaming so they agree;
 * statuses.insert_plain has its own case of it for a new plain status, and
 * test_timelines checks the two agree.
 */

/*
 * The Status entity's mentions and tags, shared by the render and the
 * insert that answers with what it inserted, are built by the SQL
 * functions eunha_mention_json() and eunha_tag_json() (migration 0040).
 */

/*
 * statuses.insert and statuses.insert_plain answer a POST with the status
 * they inserted, under status_render.statuses's column names (see
 * eu_statuses_reply_inserted()), so the status needs no statement of its
 * own to render.
 */

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
