/*
 * The Delete of a local actor, as Mastodon's DeleteAccountService sends it
 * when an account goes: one Delete to its followers' inboxes and to every
 * other server that knows it (the accounts it follows or asked to, and
 * the authors of statuses it replied to, boosted or favourited, and the
 * accounts it mentioned; shared inboxes first). It runs as the
 * "ap_delete_actor" job, queued with the owner's deletion
 * (src/api/account_life.c) and by the suspended accounts' cleanup before
 * a staff suspension is purged (src/queue/accounts.c); both leave the
 * account's rows, and its key, for at least the grace the deliveries need
 * to be signed.
 */
#include "eunha/apdeliver.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

enum { DELETE_ACTOR_ACCOUNT, DELETE_ACTOR_INBOXES };

const struct eu_sql eu_ap_delete_actor_sql[] = {
    /* $2 account: its username, if it is local. */
    [DELETE_ACTOR_ACCOUNT] = {"ap_delete_actor.account",
                              "SELECT username FROM accounts WHERE tenant_id = $1"
                              " AND id = $2::bigint AND domain IS NULL"},
    /* $2 account: the inboxes of the servers that know it beyond its
     * followers (those the follower audience reaches). */
    [DELETE_ACTOR_INBOXES] =
        {"ap_delete_actor.inboxes",
         "SELECT DISTINCT coalesce(r.shared_inbox_url, r.inbox_url) FROM ("
         " SELECT f.target_account_id AS id FROM follows f"
         "  WHERE f.tenant_id = $1 AND f.account_id = $2::bigint"
         " UNION SELECT fr.target_account_id FROM follow_requests fr"
         "  WHERE fr.tenant_id = $1 AND fr.account_id = $2::bigint"
         " UNION SELECT p.account_id FROM statuses s"
         "  JOIN statuses p ON p.tenant_id = $1 AND p.id = coalesce(s.in_reply_to_id, "
         "s.reblog_of_id)"
         "  WHERE s.tenant_id = $1 AND s.account_id = $2::bigint"
         " UNION SELECT p.account_id FROM favourites fv"
         "  JOIN statuses p ON p.tenant_id = $1 AND p.id = fv.status_id"
         "  WHERE fv.tenant_id = $1 AND fv.account_id = $2::bigint"
         " UNION SELECT m.account_id FROM mentions m"
         "  JOIN statuses s ON s.tenant_id = $1 AND s.id = m.status_id"
         "  WHERE m.tenant_id = $1 AND s.account_id = $2::bigint) k"
         " JOIN accounts r ON r.tenant_id = $1 AND r.id = k.id"
         " WHERE r.domain IS NOT NULL AND coalesce(r.shared_inbox_url, r.inbox_url) <> ''"},
    {0},
};

struct delete_actor {
    struct eu_job *job;
    int64_t account_id;
    char *username;
};

static void
finish(struct delete_actor *d, const char *error)
{
    struct eu_job *job = d->job;
    free(d->username);
    free(d);
    eu_job_done(job, error);
}

static void
on_inboxes(PGresult *res, enum eu_db_status st, void *arg)
{
    struct delete_actor *d = arg;
    if (st != EU_DB_OK) {
        finish(d, "database unavailable");
        return;
    }
    struct eu_app *app = eu_job_app(d->job);
    struct eu_tenant *t = eu_job_tenant(d->job);
    char *actor = eu_xasprintf("%s://%s/users/%s", app->cfg->scheme, t->domain, d->username);
    char *id = eu_xasprintf("%s#delete", actor);
    json_t *activity =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:[s]}", "@context",
                  "https://www.w3.org/ns/activitystreams", "id", id, "type", "Delete", "actor",
                  actor, "object", actor, "to", "https://www.w3.org/ns/activitystreams#Public");
    eu_ap_deliver_to_followers(app, t, d->account_id, json_deep_copy(activity), NULL);
    for (int i = 0; i < PQntuples(res); i++)
        eu_ap_deliver_to_inbox(app, t, d->account_id, json_deep_copy(activity),
                               PQgetvalue(res, i, 0));
    json_decref(activity);
    eu_log_info("ap", "Delete of account %lld ('%s') sent to its followers and %d more inboxes",
                (long long)d->account_id, d->username, PQntuples(res));
    free(id);
    free(actor);
    finish(d, NULL);
}

static void
on_account(PGresult *res, enum eu_db_status st, void *arg)
{
    struct delete_actor *d = arg;
    if (st != EU_DB_OK) {
        finish(d, "database unavailable");
        return;
    }
    if (PQntuples(res) != 1) {
        finish(d, NULL); /* gone already, or not ours */
        return;
    }
    d->username = eu_xstrdup(PQgetvalue(res, 0, 0));
    char aid[24];
    snprintf(aid, sizeof(aid), "%lld", (long long)d->account_id);
    const char *p[] = {aid};
    eu_job_stmt(d->job, &eu_ap_delete_actor_sql[DELETE_ACTOR_INBOXES], 1, p, on_inboxes, d);
}

void
eu_ap_delete_actor_run(struct eu_job *job)
{
    const char *id = json_string_value(json_object_get(eu_job_payload(job), "account_id"));
    if (!id || !eu_id_is_valid(id)) {
        eu_job_done(job, "payload has no account_id");
        return;
    }
    struct delete_actor *d = eu_xcalloc(1, sizeof(*d));
    d->job = job;
    d->account_id = strtoll(id, NULL, 10);
    const char *p[] = {id};
    eu_job_stmt(job, &eu_ap_delete_actor_sql[DELETE_ACTOR_ACCOUNT], 1, p, on_account, d);
}
