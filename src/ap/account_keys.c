/*
 * The "account_keys" job: gives local accounts without an RSA key pair one
 * (include/eunha/apkeys.h). Accounts made before federation existed have
 * none; migration 0018 queues one such job per tenant that has them, and
 * code that finds an account without keys can queue another
 * (eu_ap_account_keys_enqueue()).
 *
 * A run takes at most BATCH accounts and makes their keys one at a time on
 * the CPU pool (tens to hundreds of milliseconds each), so the pool's other
 * work (sign-ins) waits behind at most one key, and the tenant's turn is
 * short. While accounts remain it queues its successor before it ends. The
 * successor needs the dedupe key "account_keys" that this job holds, so the
 * job first lets go of it: there is at most one such job waiting per
 * tenant, and one queued by hand meanwhile simply merges.
 *
 * Running twice is harmless: a key is only written where there still is
 * none, so a pair made twice loses one copy.
 */
#include "eunha/apkeys.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"

/* Accounts per run: a few, so a run costs about a second of one pool
 * thread at most. */
#define BATCH 4
#define BATCH_TEXT "4"

enum { KEYS_TODO, KEYS_SET, KEYS_RELEASE, KEYS_NEXT };

/* Local accounts that lack either half. */
#define KEYLESS                                                                                    \
    " FROM accounts WHERE tenant_id = $1 AND domain IS NULL"                                       \
    " AND (private_key IS NULL OR public_key IS NULL)"

const struct eu_sql eu_ap_account_keys_sql[] = {
    [KEYS_TODO] = {"ap_account_keys.todo",
                   "SELECT id::text" KEYLESS " ORDER BY id LIMIT " BATCH_TEXT},
    /* Only where there still is no pair: a key peers may have cached is
     * never replaced. updated_at stays: the key is in no API reply, so no
     * cached rendering of the account goes stale. */
    [KEYS_SET] = {"ap_account_keys.set",
                  "UPDATE accounts SET public_key = $3, private_key = $4"
                  " WHERE tenant_id = $1 AND id = $2::bigint AND domain IS NULL"
                  " AND (private_key IS NULL OR public_key IS NULL)"},
    [KEYS_RELEASE] = {"ap_account_keys.release",
                      "UPDATE jobs SET dedupe_key = NULL WHERE tenant_id = $1 AND id = $2::bigint"},
    /* The successor, when keyless accounts remain; returns its id. */
    [KEYS_NEXT] = {"ap_account_keys.next",
                   "INSERT INTO jobs (tenant_id, queue, kind, dedupe_key)"
                   " SELECT $1, 'default', 'account_keys', 'account_keys'"
                   " WHERE EXISTS (SELECT 1" KEYLESS ")"
                   " ON CONFLICT (tenant_id, dedupe_key) DO NOTHING RETURNING id::text"},
    {0},
};

struct run {
    struct eu_job *job;
    int n, next, made;
    char ids[BATCH][24];
    char *pub_pem, *priv_pem; /* the pair being made or written; NULL on failure */
};

static void make_next(struct run *r);

static void
finish(struct run *r, const char *error)
{
    struct eu_job *job = r->job;
    free(r->pub_pem);
    free(r->priv_pem);
    free(r);
    eu_job_done(job, error);
}

static void
fail_db(struct run *r, PGresult *res, const char *what)
{
    char msg[400];
    snprintf(msg, sizeof(msg), "cannot %s: %s", what,
             res ? PQresultErrorMessage(res) : "database unavailable");
    finish(r, msg);
}

static void
on_next(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        fail_db(r, res, "queue the next batch of account keys");
        return;
    }
    bool more = PQntuples(res) > 0;
    struct eu_tenant *t = eu_job_tenant(r->job);
    finish(r, NULL);
    if (more)
        eu_queue_wake(t, EU_QUEUE_DEFAULT, 0);
}

static void
on_released(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        fail_db(r, res, "release the account keys job's key");
        return;
    }
    eu_db_conn_stmt(eu_job_conn(r->job), &eu_ap_account_keys_sql[KEYS_NEXT], 0, NULL, on_next, r);
}

static void
on_set(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    free(r->pub_pem);
    free(r->priv_pem);
    r->pub_pem = r->priv_pem = NULL;
    if (st != EU_DB_OK) {
        fail_db(r, res, "store an account's keys");
        return;
    }
    r->made += atoi(PQcmdTuples(res));
    make_next(r);
}

static void
generate_work(void *arg)
{
    struct run *r = arg;
    eu_ap_rsa_generate(&r->pub_pem, &r->priv_pem);
}

static void
generate_done(void *arg)
{
    struct run *r = arg;
    if (!r->pub_pem) {
        finish(r, "cannot generate an RSA key pair");
        return;
    }
    const char *params[] = {r->ids[r->next - 1], r->pub_pem, r->priv_pem};
    eu_db_conn_stmt(eu_job_conn(r->job), &eu_ap_account_keys_sql[KEYS_SET], 3, params, on_set, r);
}

/* Makes the next account's pair, or ends the batch. */
static void
make_next(struct run *r)
{
    if (r->next < r->n) {
        r->next++;
        eu_cpupool_submit(eu_job_app(r->job)->cpu, generate_work, generate_done, r);
        return;
    }
    eu_log_info("ap", "made RSA keys for %d local accounts", r->made);
    if (r->n < BATCH) {
        finish(r, NULL); /* that was the last of them */
        return;
    }
    const char *params[] = {eu_job_id(r->job)};
    eu_db_conn_stmt(eu_job_conn(r->job), &eu_ap_account_keys_sql[KEYS_RELEASE], 1, params,
                    on_released, r);
}

static void
on_todo(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (st != EU_DB_OK) {
        fail_db(r, res, "list accounts without keys");
        return;
    }
    r->n = PQntuples(res) < BATCH ? PQntuples(res) : BATCH;
    for (int i = 0; i < r->n; i++)
        snprintf(r->ids[i], sizeof(r->ids[i]), "%s", PQgetvalue(res, i, 0));
    if (r->n == 0) {
        finish(r, NULL);
        return;
    }
    make_next(r);
}

void
eu_ap_account_keys_run(struct eu_job *job)
{
    struct run *r = eu_xcalloc(1, sizeof(*r));
    r->job = job;
    eu_db_conn_stmt(eu_job_conn(job), &eu_ap_account_keys_sql[KEYS_TODO], 0, NULL, on_todo, r);
}

int
eu_ap_account_keys_enqueue(struct eu_app *app, struct eu_tenant *t)
{
    return eu_queue_enqueue(app, t, "account_keys", NULL, 0, "account_keys", NULL, NULL);
}
