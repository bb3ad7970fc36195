/*
 * Removing media nobody uses any more. Rows go in the statement that makes
 * them unused (a status's delete, an account's purge, this file's task),
 * which also takes their bytes off the tenant's usage and queues a
 * media_files_delete job with their keys (EU_MEDIA_DELETE_CTES), so a file
 * is deleted only once its row is gone for good and a crash between the two
 * leaves a job, not an orphan.
 *
 * Unattached uploads older than a day are the media_cleanup timed task's:
 * it removes what is due in one statement that also says when the next
 * upload turns a day old, and sleeps until then (or until the placement's
 * safety poll sees one), never on a minute tick.
 */
#include "eunha/mediaclean.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* Mastodon removes unattached uploads after a day. */
#define UNATTACHED_RETENTION_S "86400"
/* Uploads removed per run; a full batch makes the task run again at once. */
#define CLEANUP_BATCH 100

enum {
    MEDIA_CLEANUP_UNATTACHED,
};

const struct eu_sql eu_media_cleanup_sql[] = {
    /*
     * $2 retention in seconds, $3 batch: removes the oldest unattached
     * uploads past the retention, and answers how many went, whether a
     * files job was queued, and the ms until the next one is due (NULL:
     * none left).
     */
    [MEDIA_CLEANUP_UNATTACHED] =
        {"media_cleanup.unattached",
         "WITH old AS (SELECT id FROM media_attachments WHERE tenant_id = $1"
         "  AND status_id IS NULL AND scheduled_status_id IS NULL"
         "  AND created_at <= now() - make_interval(secs => $2::float8)"
         "  ORDER BY created_at LIMIT $3::int), " EU_MEDIA_DELETE_CTES(
             "id IN (SELECT id FROM old)") " SELECT (SELECT count(*) FROM md), (SELECT count(*) "
                                           "FROM mj),"
                                           "  (SELECT ceil(extract(epoch FROM min(created_at) + "
                                           "make_interval(secs => $2::float8)"
                                           "  - now()) * 1000)::bigint FROM media_attachments "
                                           "WHERE tenant_id = $1"
                                           "  AND status_id IS NULL AND scheduled_status_id IS NULL"
                                           "  AND id NOT IN (SELECT id FROM old))"},
    {0},
};

/* ------------------------------------------------------------ files job */

struct files_delete {
    struct eu_job *job;
    int pending;
    int failed;
};

static void
on_file_deleted(int rc, void *arg)
{
    struct files_delete *fd = arg;
    if (rc != 0)
        fd->failed++;
    if (--fd->pending > 0)
        return;
    struct eu_job *job = fd->job;
    int failed = fd->failed;
    free(fd);
    /* A retry deletes every key again; the ones already gone succeed. */
    eu_job_done(job, failed ? "cannot delete some media files" : NULL);
}

void
eu_media_files_delete_run(struct eu_job *job)
{
    struct eu_app *app = eu_job_app(job);
    json_t *keys = json_object_get(eu_job_payload(job), "keys");
    size_t n = json_array_size(keys);
    if (!n) {
        eu_job_done(job, NULL);
        return;
    }
    if (!app->store) {
        eu_job_done(job, "no media store");
        return;
    }
    int64_t tenant_id = eu_job_tenant(job)->id;
    struct files_delete *fd = eu_xcalloc(1, sizeof(*fd));
    fd->job = job;
    /* Counted first: the callbacks run later, but the count must be whole
     * before the first. */
    fd->pending = (int)n;
    for (size_t i = 0; i < n; i++) {
        const char *key = json_string_value(json_array_get(keys, i));
        /* A job restored from an archive may name any key: only the
         * tenant's own are deleted. */
        if (!key || !eu_store_key_is_tenants(key, tenant_id)) {
            if (key)
                eu_log_warn("media", "not deleting '%s': not a key of this tenant", key);
            on_file_deleted(0, fd);
            continue;
        }
        eu_store_del(app->store, key, on_file_deleted, fd);
    }
}

/* ---------------------------------------------------------- timed task */

static void
on_cleaned(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_task_run *run = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        eu_log_warn("media", "cannot remove unattached uploads: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
        eu_task_run_fail(run);
        return;
    }
    long removed = atol(PQgetvalue(res, 0, 0));
    if (atol(PQgetvalue(res, 0, 1)) > 0)
        eu_queue_wake(eu_task_run_tenant(run), EU_QUEUE_DEFAULT, 0);
    if (removed)
        eu_log_info("media", "removed %ld unattached uploads older than a day", removed);
    int64_t next = -1; /* none left: sleep until woken or polled */
    if (removed >= CLEANUP_BATCH)
        next = 0;
    else if (!PQgetisnull(res, 0, 2)) {
        next = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
        if (next < 0)
            next = 0;
    }
    eu_task_run_done(run, next);
}

void
eu_media_cleanup_task_run(struct eu_task_run *run)
{
    char batch[16];
    snprintf(batch, sizeof(batch), "%d", CLEANUP_BATCH);
    const char *params[] = {UNATTACHED_RETENTION_S, batch};
    eu_db_conn_stmt(eu_task_run_conn(run), &eu_media_cleanup_sql[MEDIA_CLEANUP_UNATTACHED], 2,
                    params, on_cleaned, run);
}
