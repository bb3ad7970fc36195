/*
 * Declarations shared by the statuses group's REST files (statuses.c,
 * timelines.c, scheduled.c, polls.c) and nobody else. Rendering and the
 * feed rules they share with inbox processing are the social core's
 * (statuses.h, feeds.h).
 */
#ifndef EUNHA_API_STATUSES_INTERNAL_H
#define EUNHA_API_STATUSES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/feeds.h"
#include "eunha/statuses.h"

struct eu_req;
struct eu_app;
struct eu_tenant;
struct json_t;

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

/* Mastodon's answers to a quote it refuses (src/api/quotes.c). */
#define EU_QUOTE_NOT_FOUND "The post you are trying to quote does not appear to exist."
#define EU_QUOTE_BAD_POLICY "Validation failed: Quote approval policy is not included in the list"

/* What eu_statuses_quote_check() found: the status to quote (a reblog's
 * original), its author, whether it is local, and the state the new
 * quote starts in. Arena strings. */
struct eu_quote_target {
    const char *id, *account_id, *state;
    bool local;
};
typedef void (*eu_quote_checked_cb)(struct eu_req *req, const struct eu_quote_target *q, void *arg);
/* Whether req's viewer may quote status id (Mastodon's StatusPolicy#quote?:
 * the author, or a public or unlisted post whose policy lets the viewer
 * quote it; a remote one is asked of its author and starts pending).
 * Calls cb, or answers 404 with Mastodon's text itself. */
void eu_statuses_quote_check(struct eu_req *req, const char *id, eu_quote_checked_cb cb, void *arg);

/* What eu_statuses_quote_recheck() found. */
enum eu_quote_recheck {
    EU_QUOTE_RECHECK_ALLOWED, /* as the API would let it: q's state is the new quote's */
    EU_QUOTE_RECHECK_REFUSED, /* there, but the API would refuse it: q's state is "pending" */
    EU_QUOTE_RECHECK_GONE,    /* deleted, or never there: q is NULL */
    EU_QUOTE_RECHECK_ERROR,   /* the database failed: q is NULL */
};
/* q's strings are borrowed for the call only. */
typedef void (*eu_quote_rechecked_cb)(enum eu_quote_recheck verdict,
                                      const struct eu_quote_target *q, void *arg);
/* eu_statuses_quote_check()'s decision without a request, for viewer on
 * conn (the scheduled statuses' publisher, when a quote checked as it was
 * scheduled is made). Calls cb once. */
void eu_statuses_quote_recheck(struct eu_db_conn *conn, int64_t viewer, const char *id,
                               eu_quote_rechecked_cb cb, void *arg);

/* Timeline handlers (timelines.c), routed from statuses.c's table. */
void eu_timelines_home(struct eu_req *req);
void eu_timelines_public(struct eu_req *req);
void eu_timelines_tag(struct eu_req *req);
void eu_timelines_account(struct eu_req *req);

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
    /* The author's quote_approval_policy (EU_QUOTE_POLICY_*), or -1: public
     * (nobody for a private or direct status), as Mastodon's default. */
    int quote_policy;
    /* The status it quotes (its id and author's, decimal), or NULL; the
     * quote's state as src/api/quotes.c decided it ("accepted", or
     * "pending" for a remote post until its author answers). */
    const char *quoted_id, *quoted_account, *quote_state;
    bool quoted_local; /* the quoted status is local: its author is told */
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
/* polls.c: GET /api/v1/polls/:id and POST /api/v1/polls/:id/votes, routed
 * from scheduled.c's table. */
void eu_polls_show(struct eu_req *req);
void eu_polls_vote(struct eu_req *req);

#endif
