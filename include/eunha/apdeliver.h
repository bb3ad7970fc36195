/*
 * Outgoing ActivityPub: delivering activities to remote inboxes (src/ap/
 * deliver.c) and building the activities of local actions (src/ap/
 * outbox.c).
 *
 * Delivery is a durable job per target inbox, kind "ap_deliver" on the
 * "deliver" queue, payload {"inbox": URL, "activity": {...}, "actor_id":
 * "<local account id that signs>"}. A run signs the POST with the actor's
 * key on the CPU pool (draft-cavage with Digest; RFC 9421 for hosts known to
 * take it) and sends it through the fetch client with the tenant as owner,
 * so tenants share the outbound capacity round-robin. What the answer means:
 *   2xx                      done
 *   401                      signed the other way once (RFC 9421 is tried
 *                            first); the form that works is remembered
 *                            per host (process-wide, bounded)
 *   401, 403 (after that)    the host refuses this tenant: recorded in
 *                            delivery_refusals (per tenant and host), dropped;
 *                            for EU_AP_REFUSAL_HOLD_S after the last refusal
 *                            new deliveries to the host are dropped unsent
 *                            (counted there), then one is tried again: a
 *                            2xx ends the refusal, another renews it
 *   408, 429, 3xx, 5xx,      retried after attempt^4 + 15 + random seconds
 *   no answer                (Mastodon's backoff), dead with its last error
 *                            after EU_AP_DELIVER_ATTEMPTS attempts (~a week)
 *   other 4xx                dropped (logged)
 * A host the fetch client has seen failing for days is skipped (the job
 * ends done, logged); its next success resets that. A host in a domain the
 * tenant suspended (domain_blocks) is sent nothing.
 *
 * Everything here runs on the loop thread.
 */
#ifndef EUNHA_APDELIVER_H
#define EUNHA_APDELIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "eunha/sql.h"

struct eu_app;
struct eu_tenant;
struct eu_job;
struct eu_db_conn;
struct json_t;

/* Attempts before a delivery stays dead: with attempt^4 backoff, 19
 * attempts span about 6.5 days, the week the issue asks for (Mastodon's 16
 * span under three). */
#define EU_AP_DELIVER_ATTEMPTS 19
/* How long a host's 401/403 to a tenant holds back that tenant's next
 * deliveries there: a server that blocked us answers every one the same,
 * and six hours lets an unblock (or a fixed key) be noticed the same day.
 * The statements read it as eunha_refusal_hold() (tenant migration 0041),
 * which must say the same. */
#define EU_AP_REFUSAL_HOLD_S 21600

/* The statements of deliver.c and outbox.c (registered in statements.c). */
extern const struct eu_sql eu_ap_deliver_sql[];
extern const struct eu_sql eu_ap_outbox_sql[];
extern const struct eu_sql eu_ap_quotes_outbox_sql[]; /* quotes_outbox.c */

/* The "ap_deliver" job's handler, for src/app/kinds.c. */
void eu_ap_deliver_run(struct eu_job *job);

/* What the deliveries cost in crypto since the process started, for
 * /metrics and the tests: signatures made, signers' keys parsed from PEM
 * (once per signer while its key stays in the cache), body digests
 * computed (once per activity while it stays in the cache), and deliveries
 * that went without the signer statement (its answer kept for the signer
 * and host). Event loop only. */
struct eu_ap_deliver_stats {
    unsigned long long signatures, key_parses, digests, signers_kept;
};
void eu_ap_deliver_stats(struct eu_ap_deliver_stats *out);

/* ------------------------------------------------------------ enqueueing */

/* Whom an activity goes to; any combination, inboxes merged so each gets
 * one job. Only remote accounts (domain not NULL) are ever addressed. */
struct eu_ap_audience {
    bool followers;           /* the actor's remote followers: shared inbox, else inbox */
    const char *mentioned_in; /* a status id: its mentioned accounts, likewise */
    const char *account;      /* an account id: its own inbox (Follow, Like, Block...) */
    const char *inbox;        /* an inbox URL as is */
    const char *voters_of;    /* a poll id: its remote voters, shared inbox else inbox */
    /* The followers' inboxes already known (a PostgreSQL text[]), read
     * instead of the followers when followers is false. */
    const char *follower_inboxes;
};

/*
 * Enqueues activity (a JSON object with its "@context"; the reference is
 * taken) from local account actor_id to the audience: one statement that
 * inserts one ap_deliver job per distinct inbox, however many followers
 * share them. Strings of to are copied.
 *
 * conn NULL: on t's pool, after the caller's change committed (the usual
 * case: Eunha's writes are single statements). conn not NULL: on that
 * connection, which may be inside the caller's transaction; the caller
 * must then call eu_queue_wake(t, EU_QUEUE_DELIVER, 0) after its commit, or
 * the jobs wait for the next safety poll.
 *
 * Returns 0, or -1 (activity released, nothing queued) when actor_id is 0.
 * Failure to insert is logged; no callback: like notifications, delivery
 * follows the change it announces and never fails it.
 */
int eu_ap_deliver(struct eu_app *app, struct eu_tenant *t, struct eu_db_conn *conn,
                  int64_t actor_id, struct json_t *activity, const struct eu_ap_audience *to);
/* The same to the actor's followers and, when mentioned_in is not NULL,
 * the remote accounts that status mentions. */
int eu_ap_deliver_to_followers(struct eu_app *app, struct eu_tenant *t, int64_t actor_id,
                               struct json_t *activity, const char *mentioned_in);
/* The same to one inbox URL. */
int eu_ap_deliver_to_inbox(struct eu_app *app, struct eu_tenant *t, int64_t actor_id,
                           struct json_t *activity, const char *inbox);

/* ---------------------------------------------------------- local actions */

/*
 * The activities of local actions, built and enqueued after the action's
 * statement committed (each costs one or two statements of its own, on t's
 * pool, and never fails the action). Ids are decimal text, copied. Nothing
 * is sent where every target is local.
 */
enum eu_ap_outbox_status_event {
    EU_AP_STATUS_CREATE, /* Create (Announce for a reblog) */
    EU_AP_STATUS_UPDATE, /* Update of an edited Note */
};
/* author's status status_id was posted or edited, or is author's reblog:
 * to the author's followers (not for a direct one), the mentioned, and for
 * a reblog original_author (the boosted status's author id; may be NULL). */
void eu_ap_outbox_status(struct eu_app *app, struct eu_tenant *t, int64_t author,
                         const char *status_id, enum eu_ap_outbox_status_event ev,
                         const char *original_author);
/* The same for a new status whose followers' inboxes the caller knows
 * (a PostgreSQL text[] as statuses.insert_plain answers it, copied), so
 * they are not read again; NULL: as eu_ap_outbox_status(). */
void eu_ap_outbox_status_to(struct eu_app *app, struct eu_tenant *t, int64_t author,
                            const char *status_id, const char *follower_inboxes);
/* actor deleted its status status_id (Delete with a Tombstone), or its
 * reblog (Undo Announce). The row must still be there (deleted_at set), as
 * Eunha's deletes leave it. */
void eu_ap_outbox_status_deleted(struct eu_app *app, struct eu_tenant *t, int64_t actor,
                                 const char *status_id);

/* author's new status status_id quotes a remote post, pending: a
 * QuoteRequest to the quoted author (src/ap/quotes_outbox.c). */
void eu_ap_outbox_quote_request(struct eu_app *app, struct eu_tenant *t, int64_t author,
                                const char *status_id);
/* actor revoked quote quote_id of its status quoted_id: a Delete of the
 * QuoteAuthorization to the quoting author when remote. */
void eu_ap_outbox_quote_revoked(struct eu_app *app, struct eu_tenant *t, int64_t actor,
                                const char *quoted_id, const char *quote_id);

enum eu_ap_outbox_kind {
    EU_AP_FOLLOW,   /* Follow, id kept in the follow request's uri */
    EU_AP_UNFOLLOW, /* Undo Follow */
    EU_AP_BLOCK,
    EU_AP_UNBLOCK,
    EU_AP_LIKE,   /* target is a status id: to its author */
    EU_AP_UNLIKE, /* Undo Like */
    EU_AP_ACCEPT, /* target's Follow of actor: Accept; follow_uri its id, or NULL */
    EU_AP_REJECT,
};
/* actor changed its profile (update_credentials, avatar or header): an
 * Update of the actor document, as it is served, to its followers. */
void eu_ap_outbox_profile(struct eu_app *app, struct eu_tenant *t, int64_t actor);
/* actor moved to target_uri (an actor id, its row's moved_to_* already
 * written): Move{actor, object: actor, target} to its remote followers,
 * shared inboxes once. The caller sends the actor's Update as well
 * (eu_ap_outbox_profile()), which now carries movedTo. */
void eu_ap_outbox_move(struct eu_app *app, struct eu_tenant *t, int64_t actor,
                       const char *target_uri);
/* actor pinned (pinned true) or unpinned its status status_id: an Add or
 * Remove of the status to or from its featured collection, to its
 * followers, as Mastodon's PinsController sends it. */
void eu_ap_outbox_pin(struct eu_app *app, struct eu_tenant *t, int64_t actor, const char *status_id,
                      bool pinned);
/* actor featured (featured true) or unfeatured the hashtag name (as its
 * owner typed it): an Add or Remove of the Hashtag to or from its
 * featuredTags collection (BASE/users/NAME/collections/tags), to its
 * followers, as Mastodon's featured-tag services send it. */
void eu_ap_outbox_featured_tag(struct eu_app *app, struct eu_tenant *t, int64_t actor,
                               const char *name, bool featured);
/* A report (reports row report_id, written) to forward to its remote
 * target's server: a Flag from the tenant's instance actor, so the
 * reporter stays anonymous, with object [account URI, status URIs...] and
 * the comment as content, to the target's shared inbox (else its inbox).
 * Nothing is sent for a local target. */
void eu_ap_outbox_flag(struct eu_app *app, struct eu_tenant *t, const char *report_id);
/* actor_id did kind to target (an account id, or a status id for likes). */
void eu_ap_outbox_account(struct eu_app *app, struct eu_tenant *t, int64_t actor_id,
                          const char *target, enum eu_ap_outbox_kind kind, const char *follow_uri);
/* voter voted on remote poll poll_id (its poll_votes row is written): one
 * Create of a Note per chosen option to the poll's author. Nothing is sent
 * for a local poll. */
void eu_ap_outbox_poll_vote(struct eu_app *app, struct eu_tenant *t, int64_t voter,
                            const char *poll_id);

/* Local poll poll_id got remote votes: an Update of its Question, with the
 * new counts, to its author's followers, the accounts it mentions and its
 * remote voters (Mastodon's DistributePollUpdateWorker), after [federation]
 * poll_update_delay_seconds so a burst of votes makes one Update. Queues
 * the "ap_poll_update" job (src/ap/process_poll.c); nothing else. */
void eu_ap_poll_update_later(struct eu_app *app, struct eu_tenant *t, const char *poll_id);
/* The "ap_poll_update" job's handler, for src/app/kinds.c. */
void eu_ap_poll_update_run(struct eu_job *job);
/* The "ap_delete_actor" job (src/ap/delete_actor.c): payload
 * {"account_id"}, a local account going away; the Delete of its actor to
 * its followers and the other servers that know it. */
void eu_ap_delete_actor_run(struct eu_job *job);
extern const struct eu_sql eu_ap_delete_actor_sql[];

#endif
