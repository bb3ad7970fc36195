/*
 * The inboxes (src/ap/inbox.c): POST /inbox (the tenant's shared inbox),
 * POST /users/:username/inbox and POST /actor/inbox. A delivery is taken
 * only with a valid HTTP signature whose key belongs to the activity's
 * actor; it is then queued as an "ap_inbox" job, payload
 * {"activity": {...}, "actor": "<verified actor URI>",
 *  "recipient": "<local account id>" or null, "host": "<the actor's host>"},
 * and answered 202. A host with [federation] inbox_max_queued_per_host
 * activities still waiting for the tenant, or
 * inbox_max_queued_per_host_process for the whole process, gets 429 with
 * Retry-After.
 */
#ifndef EUNHA_APINBOX_H
#define EUNHA_APINBOX_H

#include "eunha/router.h"
#include "eunha/sql.h"

struct eu_app;
struct eu_job;
struct eu_tenant;
struct json_t;

/* Bodies past this are refused (413) whatever [limits] max_body_bytes. */
#define EU_AP_INBOX_MAX_BODY (1024 * 1024)
/* Deliveries of one tenant signed with a key this process knows, being
 * checked at once; past it 503 with Retry-After, so one tenant's flood
 * holds neither the CPU pool nor the fetch slots others need. */
#define EU_AP_INBOX_MAX_PENDING 32
/* Deliveries of one tenant whose key must be fetched first, at once, and
 * of those the ones whose key is on one host. A budget apart from the one
 * above: deliveries from a host that answers slowly (or from keys that
 * point at one) wait on it, and must not take the room of senders whose
 * key is known. Past either cap 503 with Retry-After. */
#define EU_AP_INBOX_MAX_KEY_FETCHES 8
#define EU_AP_INBOX_MAX_KEY_FETCHES_PER_HOST 2

/*
 * Called by the "ap_inbox" job when it is done for good with payload (its
 * job's, not taken): the activity no longer counts against its host's
 * process-wide cap ([federation] inbox_max_queued_per_host_process). A job
 * queued by an earlier run of the process, or by another process, is left
 * alone. On the loop thread only.
 */
void eu_ap_inbox_job_ended(struct json_t *payload);
/*
 * Called by the "ap_inbox" job when it failed its last attempt: the mark
 * that answers later copies of its Create or Announce unprocessed is
 * dropped, so the sender's next delivery of it is taken again (its job
 * revived: a dead job keeps its dedupe key, which stops only jobs still
 * waiting or running). On the loop thread only.
 */
void eu_ap_inbox_job_dead(struct eu_app *app, struct eu_tenant *t, struct json_t *payload);

extern const struct eu_route eu_ap_inbox_routes[];
extern const struct eu_sql eu_ap_inbox_sql[];

#endif
