/*
 * Suspended accounts: the timed task that notices when an account's
 * retention ([workers] suspended_retention_seconds) has passed, and the
 * "purge_account" job that then deletes its data.
 *
 * The task enqueues one purge job per due account with the dedupe key
 * "purge_account:ID", so several processes running it enqueue one job, and
 * an account whose purge job waits or is dead is not due again (a dead one
 * would otherwise make the task spin). The same statement returns when the
 * next suspension comes due, which is how long the task sleeps; suspending or
 * unsuspending an account wakes it (src/admin/jobs.c).
 *
 * The job checks again that the account is still suspended and due, so an
 * account unsuspended after its job was queued survives. A local account
 * is first announced gone (the Delete of its actor, queued by the task)
 * and purged a grace later, while its key can still sign the deliveries.
 */
#include "eunha/queue.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mediaclean.h"
#include "eunha/mem.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* This file's statements, in eu_queue_accounts_sql[] below. */
enum { ACCOUNTS_CLEANUP, ACCOUNTS_PURGE_DATA, ACCOUNTS_PURGE_ACCOUNT };

/* Accounts queued per run; more due ones make the task run again at once. */
#define CLEANUP_BATCH "100"

/* How long a local account's rows (and key) stay after the Delete of its
 * actor was queued, so the deliveries can be signed: an hour, or the
 * retention when that is shorter (the tests'). */
#define GRACE_OF(retention) "least(" retention "::float8, 3600)"
#define GRACE GRACE_OF("$2")

/* Accounts due for purging with no purge job yet. */
#define DUE_ACCOUNTS                                                                               \
    " FROM accounts a WHERE a.tenant_id = $1 AND a.suspended_at IS NOT NULL"                       \
    " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = $1"                                 \
    " AND j.dedupe_key = 'purge_account:' || a.id)"

/* When an account's purge is due: its retention, and for a local one whose
 * Delete went out, the grace after it too. */
#define DUE_AT                                                                                     \
    "greatest(a.suspended_at + make_interval(secs => $2::float8),"                                 \
    " coalesce(a.delete_sent_at + make_interval(secs => " GRACE "), '-infinity'))"

/*
 * A due local account whose Delete was never queued gets it first (the
 * "ap_delete_actor" job, src/ap/delete_actor.c, as Mastodon's
 * DeleteAccountService sends it) and its purge a grace later; a remote
 * one, or a local one past that grace, gets its purge job. The second
 * column says when the next one is due.
 */
static const char cleanup_sql[] =
    "WITH due AS (SELECT a.id, a.domain IS NULL AND a.delete_sent_at IS NULL AS "
    "announce" DUE_ACCOUNTS "  AND " DUE_AT " <= now()"
    "  ORDER BY a.suspended_at LIMIT " CLEANUP_BATCH "),"
    " mark AS (UPDATE accounts SET delete_sent_at = now() WHERE tenant_id = $1"
    "  AND id IN (SELECT id FROM due WHERE announce) RETURNING id),"
    " ann AS (INSERT INTO jobs (tenant_id, queue, kind, payload, dedupe_key)"
    "  SELECT $1, 'default', 'ap_delete_actor', json_build_object('account_id', id::text),"
    "  'ap_delete_actor:' || id FROM mark ON CONFLICT (tenant_id, dedupe_key) DO NOTHING"
    "  RETURNING 1),"
    " ins AS (INSERT INTO jobs (tenant_id, queue, kind, payload, dedupe_key)"
    "  SELECT $1, 'default', 'purge_account', json_build_object('account_id', id::text),"
    "  'purge_account:' || id FROM due WHERE NOT announce"
    "  ON CONFLICT (tenant_id, dedupe_key) DO NOTHING RETURNING 1)"
    " SELECT (SELECT count(*) FROM ins) + (SELECT count(*) FROM ann),"
    " least((SELECT (extract(epoch FROM min(" DUE_AT ") - now()) * 1000)::bigint" DUE_ACCOUNTS
    " AND a.id NOT IN (SELECT id FROM due)),"
    " (SELECT (" GRACE " * 1000)::bigint WHERE EXISTS (SELECT 1 FROM mark)))";

static void
on_cleanup(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_task_run *run = arg;
    if (st != EU_DB_OK) {
        eu_log_warn("queue", "cannot look for suspended accounts to purge: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
        eu_task_run_fail(run);
        return;
    }
    long queued = strtol(PQgetvalue(res, 0, 0), NULL, 10);
    if (queued > 0) {
        eu_log_info("queue", "queued the Delete or the purge of %ld suspended accounts", queued);
        eu_queue_wake(eu_task_run_tenant(run), EU_QUEUE_DEFAULT, 0);
    }
    int64_t next = -1; /* nobody suspended: sleep the idle poll */
    if (!PQgetisnull(res, 0, 1)) {
        next = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
        if (next < 0)
            next = 0; /* due already (more than a batch): again at once */
    }
    eu_task_run_done(run, next);
}

void
eu_queue_account_cleanup_run(struct eu_task_run *run)
{
    char retention[16];
    snprintf(retention, sizeof(retention), "%d", eu_task_run_app(run)->cfg->suspended_retention_s);
    const char *params[] = {retention};
    eu_db_conn_stmt(eu_task_run_conn(run), &eu_queue_accounts_sql[ACCOUNTS_CLEANUP], 1, params,
                    on_cleanup, run);
}

/* ---- purge_account ---- */

struct purge {
    struct eu_job *job;
    char account_id[24];
    char retention[16];
};

/* The account, locked, if it is still suspended and past its retention
 * and, for a local one, past the grace after its Delete went out. */
#define PURGE_DUE                                                                                  \
    "SELECT id FROM accounts WHERE tenant_id = $1 AND id = $2::bigint"                             \
    " AND suspended_at IS NOT NULL"                                                                \
    " AND suspended_at <= now() - make_interval(secs => $3::float8)"                               \
    " AND (domain IS NOT NULL OR delete_sent_at <= now()"                                          \
    "  - make_interval(secs => " GRACE_OF("$3") "))"

/* Its data first, in one transaction; foreign keys cascade the rest when the
 * account row goes. Its media rows and the files of its media, avatar and
 * header (a local account's are store keys) go to a media_files_delete job
 * in the same transaction. */
static const char purge_data_sql[] =
    "WITH a AS (" PURGE_DUE " FOR UPDATE),"
    " md AS (DELETE FROM media_attachments WHERE tenant_id = $1 AND account_id IN"
    "  (SELECT id FROM a) RETURNING file_key, preview_key),"
    " " EU_MEDIA_FILES_JOB_CTE(
        "SELECT unnest(ARRAY[md.file_key, md.preview_key]) FROM md"
        " UNION ALL SELECT unnest(ARRAY[x.avatar_url, x.header_url])"
        " FROM accounts x WHERE x.tenant_id = $1 AND x.domain IS NULL"
        " AND x.id IN (SELECT id FROM a)") ","
                                           " n AS (DELETE FROM notifications WHERE tenant_id = $1 "
                                           "AND (account_id IN (SELECT id FROM a)"
                                           "  OR from_account_id IN (SELECT id FROM a)) RETURNING "
                                           "1),"
                                           " f AS (DELETE FROM follows WHERE tenant_id = $1 AND "
                                           "(account_id IN (SELECT id FROM a)"
                                           "  OR target_account_id IN (SELECT id FROM a)) "
                                           "RETURNING 1),"
                                           " fr AS (DELETE FROM follow_requests WHERE tenant_id = "
                                           "$1 AND (account_id IN"
                                           "  (SELECT id FROM a) OR target_account_id IN (SELECT "
                                           "id FROM a)) RETURNING 1),"
                                           " fv AS (DELETE FROM favourites WHERE tenant_id = $1 "
                                           "AND account_id IN (SELECT id FROM a)"
                                           "  RETURNING 1),"
                                           " s AS (DELETE FROM statuses WHERE tenant_id = $1 AND "
                                           "account_id IN (SELECT id FROM a)"
                                           "  RETURNING 1)"
                                           " SELECT (SELECT count(*) FROM a), (SELECT count(*) "
                                           "FROM s), (SELECT count(*) FROM f),"
                                           " (SELECT count(*) FROM mj)";

/* The account row last; a local one's name stays taken (tenant migration
 * 0063). */
static const char purge_account_sql[] =
    "WITH d AS (DELETE FROM accounts WHERE tenant_id = $1 AND id IN (" PURGE_DUE ")"
    "  RETURNING username, domain),"
    " r AS (INSERT INTO reserved_usernames (tenant_id, username)"
    "  SELECT $1, lower(username) FROM d WHERE domain IS NULL ON CONFLICT DO NOTHING)"
    " SELECT username FROM d";

const struct eu_sql eu_queue_accounts_sql[] = {
    [ACCOUNTS_CLEANUP] = {"queue_accounts.cleanup", cleanup_sql},
    [ACCOUNTS_PURGE_DATA] = {"queue_accounts.purge_data", purge_data_sql},
    [ACCOUNTS_PURGE_ACCOUNT] = {"queue_accounts.purge_account", purge_account_sql},
    {0},
};

static void
purge_finish(struct purge *p, const char *error)
{
    struct eu_job *job = p->job;
    free(p);
    eu_job_done(job, error);
}

static void
purge_failed(struct purge *p, PGresult *res, const char *what)
{
    char msg[600];
    snprintf(msg, sizeof(msg), "cannot delete %s of account %s: %s", what, p->account_id,
             res ? PQresultErrorMessage(res) : "database unavailable");
    purge_finish(p, msg);
}

static void
on_account_deleted(PGresult *res, enum eu_db_status st, void *arg)
{
    struct purge *p = arg;
    if (st != EU_DB_OK) {
        purge_failed(p, res, "the row");
        return;
    }
    if (PQntuples(res) == 1)
        eu_log_info("queue", "purged suspended account %s ('%s')", p->account_id,
                    PQgetvalue(res, 0, 0));
    purge_finish(p, NULL);
}

static void
on_data_deleted(PGresult *res, enum eu_db_status st, void *arg)
{
    struct purge *p = arg;
    if (st != EU_DB_OK) {
        purge_failed(p, res, "the data");
        return;
    }
    if (strcmp(PQgetvalue(res, 0, 0), "0") == 0) {
        eu_log_info("queue", "account %s is no longer due for purging; left alone", p->account_id);
        purge_finish(p, NULL);
        return;
    }
    eu_log_debug("queue", "account %s: deleted %s statuses and %s follows", p->account_id,
                 PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2));
    if (atoi(PQgetvalue(res, 0, 3)) > 0)
        eu_queue_wake(eu_job_tenant(p->job), EU_QUEUE_DEFAULT, 0);
    const char *params[] = {p->account_id, p->retention};
    eu_db_conn_stmt(eu_job_conn(p->job), &eu_queue_accounts_sql[ACCOUNTS_PURGE_ACCOUNT], 2, params,
                    on_account_deleted, p);
}

static bool
is_id(const char *s)
{
    if (!s || !*s || strlen(s) > 19)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

void
eu_queue_purge_account_run(struct eu_job *job)
{
    const char *id = json_string_value(json_object_get(eu_job_payload(job), "account_id"));
    if (!is_id(id)) {
        eu_job_done(job, "payload has no account_id");
        return;
    }
    struct purge *p = eu_xcalloc(1, sizeof(*p));
    p->job = job;
    snprintf(p->account_id, sizeof(p->account_id), "%s", id);
    snprintf(p->retention, sizeof(p->retention), "%d", eu_job_app(job)->cfg->suspended_retention_s);
    const char *params[] = {p->account_id, p->retention};
    eu_db_conn_stmt(eu_job_conn(job), &eu_queue_accounts_sql[ACCOUNTS_PURGE_DATA], 2, params,
                    on_data_deleted, p);
}
