/*
 * Processing received activities: the "ap_inbox" job (src/ap/process*.c).
 *
 * The inbox verifies a delivery's signature, makes sure the actor has a
 * row, and queues one job with the payload
 *   {"activity": {...}, "actor": "<verified actor URI>",
 *    "recipient": "<local account id>" or null}.
 * The job then does what Mastodon's ActivityPub::Activity classes do with
 * it, in the tenant's rows: follows and their Accept/Reject, Undo, Create,
 * Update and Delete of notes and of the actor, Like, Announce, Block, Flag,
 * Add/Remove (featured) and Move, with notifications, home feed fan-out
 * and counters. Running a job twice changes nothing the second time.
 */
#ifndef EUNHA_APPROCESS_H
#define EUNHA_APPROCESS_H

#include "eunha/sql.h"

struct eu_app;
struct eu_job;
struct eu_tenant;

/* The "ap_inbox" job kind's handler (eu_job_kinds[] in src/app/kinds.c). */
void eu_ap_process_run(struct eu_job *job);

/*
 * Followers synchronization received (FEP-8fcf, src/ap/followers_sync.c):
 * a verified delivery from actor with a Collection-Synchronization header
 * queues an "ap_followers_sync" job when the header names the actor's
 * own collection on its own server; the job compares digests and, when
 * they differ, fetches the partial collection and ends the local follows
 * it does not list. Copies what it keeps; does nothing for a NULL header.
 */
struct eu_app;
struct eu_tenant;
void eu_ap_followers_sync_received(struct eu_app *app, struct eu_tenant *t, const char *actor,
                                   const char *header);
/* The "ap_followers_sync" job kind's handler. */
void eu_ap_followers_sync_run(struct eu_job *job);

/* The statements of src/ap/process*.c, for the registry (sql.h). */
extern const struct eu_sql eu_ap_process_sql[];
extern const struct eu_sql eu_ap_process_follow_sql[];
extern const struct eu_sql eu_ap_process_status_sql[];
extern const struct eu_sql eu_ap_quotes_sql[]; /* process_quote.c */
extern const struct eu_sql eu_ap_process_poll_sql[];
extern const struct eu_sql eu_ap_process_featured_sql[]; /* process_featured.c */

/* Reads remote account account_id's featuredTags collection url (only when
 * on the host of its actor_uri) and makes its featured tags what it lists,
 * in the background: nothing is answered, a failure is logged. */
void eu_ap_featured_tags_fetch(struct eu_app *app, struct eu_tenant *t, const char *account_id,
                               const char *actor_uri, const char *url);

#endif
