/*
 * The "media_process" job (queue "media"): turns an image stored raw by
 * POST /api/v2/media into its original and WebP preview
 * (include/eunha/mediaapi.h). Payload {"media_id": "..."}.
 *
 * The job reads its row first and does nothing unless the row is still
 * 'processing', so a job that runs twice (its worker died after the work)
 * or whose upload was deleted meanwhile is harmless. While the image is on
 * the CPU pool the job lets go of its turn (eu_job_detach()), so one big
 * image does not hold the tenant's other media jobs or a connection.
 *
 * A file that cannot be processed is not retried: its row turns 'failed'
 * (GET answers 422) holding no files and no bytes, and the raw upload is
 * deleted. A store that fails is retried with the queue's backoff.
 */
#include "eunha/mediaapi.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

struct run {
    struct eu_job *job;
    char id[24];
    char *raw_key;
    unsigned char *raw;
    struct eu_media_work *w;
};

static void
run_finish(struct run *r, const char *error)
{
    struct eu_job *job = r->job;
    eu_media_work_free(r->w);
    free(r->raw);
    free(r->raw_key);
    free(r);
    eu_job_done(job, error);
}

/* Ends the run with a retryable error when a statement failed ("cannot
 * <what> media <id>: ..."). Returns whether it did. */
static bool
run_failed(struct run *r, const PGresult *res, enum eu_db_status st, const char *what)
{
    if (st == EU_DB_OK)
        return false;
    char msg[300];
    snprintf(msg, sizeof(msg), "cannot %s media %s: %s", what, r->id,
             res ? PQresultErrorMessage(res) : "database unavailable");
    run_finish(r, msg);
    return true;
}

/* The job ends once the raw upload is gone, so a finished job leaves only
 * the files its row names; a failed delete is logged and left behind. */
static void
on_raw_deleted(int rc, void *arg)
{
    struct run *r = arg;
    if (rc < 0)
        eu_log_warn("media", "cannot delete the raw upload '%s'", r->raw_key);
    run_finish(r, NULL);
}

static void
on_recorded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    /* On failure the stored files are found again by the next attempt's keys. */
    if (run_failed(r, res, st, "record"))
        return;
    struct eu_app *app = eu_job_app(r->job);
    if (r->w && r->w->rc == 0 && PQntuples(res) == 0) {
        /* The upload went while it was processed, or its files would take
         * the tenant past its quota: a failure then (a no-op if it went). */
        eu_media_work_drop_files(r->w);
        r->w->rc = -1;
        eu_media_quota_message(r->w->err, sizeof(r->w->err), r->w->quota);
        const char *p[] = {r->id, r->w->err};
        eu_job_stmt(r->job, &eu_media_sql[EU_MEDIA_SQL_FAILED], 2, p, on_recorded, r);
        return;
    }
    eu_store_del(app->store, r->raw_key, on_raw_deleted, r);
}

static void
on_refused(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (!run_failed(r, res, st, "record"))
        run_finish(r, NULL);
}

static void
on_work_done(struct eu_media_work *w)
{
    struct run *r = w->arg;
    free(r->raw); /* the work is done with it */
    r->raw = NULL;
    if (w->rc == -2) {
        run_finish(r, w->err);
        return;
    }
    if (w->rc == -1) {
        eu_log_info("media", "media %s cannot be processed: %s", r->id, w->err);
        const char *p[] = {r->id, w->err};
        eu_job_stmt(r->job, &eu_media_sql[EU_MEDIA_SQL_FAILED], 2, p, on_recorded, r);
        return;
    }
    const char *p[EU_MEDIA_PROCESSED_NPARAMS];
    eu_media_work_processed_params(w, p);
    eu_job_stmt(r->job, &eu_media_sql[EU_MEDIA_SQL_PROCESSED], EU_MEDIA_PROCESSED_NPARAMS, p,
                on_recorded, r);
}

static void
on_got(int rc, unsigned char *data, size_t len, void *arg)
{
    struct run *r = arg;
    if (rc < 0) {
        char msg[300];
        snprintf(msg, sizeof(msg), "cannot read the upload '%s'", r->raw_key);
        run_finish(r, msg);
        return;
    }
    r->raw = data;
    struct eu_app *app = eu_job_app(r->job);
    struct eu_tenant *t = eu_job_tenant(r->job);
    r->w = eu_media_work_new(app, t->id, r->id, data, len, on_work_done, r);
    r->w->quota = eu_media_quota(app->cfg, t);
    eu_media_work_start(r->w, &t->cpu_jobs);
}

static void
on_row(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    if (run_failed(r, res, st, "read"))
        return;
    if (PQntuples(res) == 0 || strcmp(PQgetvalue(res, 0, 0), "processing") != 0 ||
        PQgetisnull(res, 0, 1)) {
        run_finish(r, NULL); /* deleted, or done by an earlier run */
        return;
    }
    if (!eu_store_key_is_tenants(PQgetvalue(res, 0, 1), eu_job_tenant(r->job)->id)) {
        /* A row restored from an archive may name another tenant's file:
         * neither read nor delete it; the row fails as an unusable file. */
        eu_log_warn("media", "media %s names '%s', not a key of this tenant", r->id,
                    PQgetvalue(res, 0, 1));
        const char *p[] = {r->id, "Validation failed: File could not be processed"};
        eu_job_stmt(r->job, &eu_media_sql[EU_MEDIA_SQL_FAILED], 2, p, on_refused, r);
        return;
    }
    r->raw_key = eu_xstrdup(PQgetvalue(res, 0, 1));
    struct eu_app *app = eu_job_app(r->job);
    eu_job_detach(r->job);
    if (eu_store_get(app->store, r->raw_key, eu_media_limit(app->cfg, EU_MEDIA_TYPE_IMAGE), on_got,
                     r) < 0)
        run_finish(r, "the media store cannot read files back");
}

void
eu_media_process_run(struct eu_job *job)
{
    struct run *r = eu_xcalloc(1, sizeof(*r));
    r->job = job;
    const char *id = json_string_value(json_object_get(eu_job_payload(job), "media_id"));
    if (!id || strlen(id) >= sizeof(r->id)) {
        free(r);
        eu_job_done(job, "payload without media_id");
        return;
    }
    snprintf(r->id, sizeof(r->id), "%s", id);
    const char *p[] = {r->id};
    eu_job_stmt(job, &eu_media_sql[EU_MEDIA_SQL_JOB], 1, p, on_row, r);
}
