/*
 * A claimed job in this process, from its run to its end; queue.c holds
 * the turns and the claimer that bring it here. Apart from them because a
 * job may outlive its turn: one that would only wait (a delivery to a
 * slow host, an activity waiting on a fetch) lets go of it with
 * eu_job_detach() and ends later on its tenant's pool, at most DETACH_MAX
 * of a queue at once; one waiting behind a busy host (eu_job_waiting())
 * holds none of those slots. What follows a job to its end lives here:
 * recording it (on the turn's connection, or the pool for a detached
 * job), the batched DELETE of detached successes, giving the detached
 * ones up at a stop (eu_queues_abandon()), and the heartbeat that keeps
 * every held job locked while the process lives.
 */
#include <event2/event.h>
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
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

#include "queue_internal.h"

/* Error text kept per job. */
#define ERROR_MAX 1000
/* Jobs of one tenant's queue detached at once (eu_job_detach()): its
 * deliveries in flight, or its inbox activities waiting on a fetch, beyond
 * the fetch client's own per-host and process caps. Counted per queue, so
 * a flood of activities naming a slow host cannot take the room its
 * deliveries need to leave the turn (and the other way round). */
#define DETACH_MAX 32
/* Detached jobs' successes are deleted together: one statement per tenant
 * for those that ended within DONE_FLUSH_MS, or at once when DONE_BATCH
 * are waiting. A delivery's DELETE was a third of its statements; a few ms
 * more on a finished job's row costs nothing (its lock outlives it, and the
 * heartbeat keeps extending it until the row is gone). */
#define DONE_BATCH 64
#define DONE_FLUSH_MS 2

enum {
    QUEUE_DONE,
    QUEUE_FAILED,
    QUEUE_EXTEND,
    QUEUE_DONE_MANY,
};

/* The statements on jobs this process holds: their ends, and their locks
 * (queue.c's eu_queue_sql claims them). */
const struct eu_sql eu_queue_job_sql[] = {
    /* Success deletes the job. */
    [QUEUE_DONE] = {"queue.done", "DELETE FROM jobs WHERE tenant_id = $1 AND id = $2::bigint"},
    /* Failure: retry after base * 2^(attempts-1) seconds (at most max), or
     * dead after max_attempts. Returns the state and the ms until the
     * retry. $7 is the attempt this process claimed: when its lock lapsed
     * (its process stalled past job_lock_seconds) and another process
     * claimed the job again, the stale failure leaves the newer claim
     * alone rather than unlock it under a job still running, for a third
     * process to take. A stale success still deletes the job: it did run. */
    [QUEUE_FAILED] =
        {"queue.failed",
         "UPDATE jobs SET last_error = $3, locked_until = NULL, updated_at = now(),"
         " state = CASE WHEN attempts >= $4::int THEN 'dead' ELSE 'ready' END,"
         " run_at = CASE WHEN attempts >= $4::int THEN run_at ELSE now() + make_interval(secs =>"
         "  least($5::float8 * power(2::float8, least(greatest(attempts - 1, 0), 40)), $6::float8))"
         " END"
         " WHERE tenant_id = $1 AND id = $2::bigint AND attempts = $7::int"
         " RETURNING state, (extract(epoch FROM run_at - now()) * 1000)::bigint, attempts"},
    /* The heartbeat: $2 are jobs this process holds, locked again for $3
     * seconds from now. A job whose end was recorded as a failure has no
     * lock and is left alone (a done one is gone). */
    [QUEUE_EXTEND] = {"queue.extend",
                      "UPDATE jobs SET locked_until = now() + make_interval(secs => $3::float8)"
                      " WHERE tenant_id = $1 AND id = ANY ($2::bigint[]) AND state = 'ready'"
                      " AND locked_until IS NOT NULL"},
    /* Detached successes of one tenant, $2 their ids: deleted together. */
    [QUEUE_DONE_MANY] = {"queue.done_many",
                         "DELETE FROM jobs WHERE tenant_id = $1 AND id = ANY ($2::bigint[])"},
    {0},
};

/* ---- held jobs ---- */

void
eu_queue_job_hold(struct eu_job *job)
{
    struct eu_queues *qs = job->q->qs;
    job->held_next = qs->held;
    if (qs->held)
        qs->held->held_prev = job;
    qs->held = job;
}

void
eu_queue_job_free(struct eu_job *job)
{
    struct eu_queues *qs = job->q->qs;
    if (job->held_prev)
        job->held_prev->held_next = job->held_next;
    else
        qs->held = job->held_next;
    if (job->held_next)
        job->held_next->held_prev = job->held_prev;
    json_decref(job->payload);
    free(job->kind);
    free(job);
}

/* ---- running a job, recording its end ---- */

static void on_job_recorded(PGresult *res, enum eu_db_status st, void *arg);
static void done_later(struct eu_job *job);

/* Runs the next job of q's batch (claimed for worker w), or goes on with
 * the turn once the batch is done. */
void
eu_queue_job_run_next(struct eu_queue *q, struct eu_queue_worker *w)
{
    if (q->ibatch >= q->nbatch) {
        q->nbatch = q->ibatch = 0;
        w->ready = false;
        eu_queue_step(q);
        return;
    }
    struct eu_job *job = q->batch[q->ibatch++];
    eu_queue_log_context(q);
    const struct eu_job_kind *kind = eu_job_kind_find(job->kind);
    if (!kind) {
        char msg[200];
        snprintf(msg, sizeof(msg), "unknown job kind '%.100s' (written by a newer version?)",
                 job->kind);
        eu_job_done(job, msg);
        return;
    }
    eu_log_debug("queue", "running job %s (%s), attempt %d", job->id, job->kind, job->attempt);
    kind->run(job);
}

static void
on_job_recorded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_job *job = arg;
    struct eu_queue *q = job->q;
    struct eu_queue_worker *w = job->w;
    eu_queue_log_context(q);
    if (st != EU_DB_OK) {
        /* The lock expires and the job runs again: at least once. */
        eu_log_error("queue", "cannot record the end of job %s (%s): %s", job->id, job->kind,
                     res ? PQresultErrorMessage(res) : eu_db_conn_error(q->conn));
    } else if (job->failed && PQntuples(res) == 1) {
        if (strcmp(PQgetvalue(res, 0, 0), "dead") == 0)
            eu_log_warn("queue", "job %s (%s) is dead after %s attempts", job->id, job->kind,
                        PQgetvalue(res, 0, 2));
        else
            eu_queue_worker_arm(w, strtoll(PQgetvalue(res, 0, 1), NULL, 10));
    }
    eu_queue_job_free(job);
    if (st == EU_DB_UNAVAILABLE) {
        eu_queue_drop_batch(q);
        w->ready = false;
        w->deferred_ms = eu_queue_now_ms() + EU_QUEUE_FAIL_RETRY_MS;
        eu_queue_turn_end(q);
        return;
    }
    eu_queue_job_run_next(q, w);
}

/* A detached job's end was recorded (or could not be): nothing of the turn
 * to go on with; the tenant reference taken by eu_job_detach() goes. */
static void
on_detached_recorded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_job *job = arg;
    struct eu_queue *q = job->q;
    struct eu_tenant *t = q->t;
    eu_queue_log_context(q);
    if (st != EU_DB_OK && q->qs->stopping)
        eu_log_info("queue", "job %s (%s) left to its lock: the process is stopping", job->id,
                    job->kind);
    else if (st != EU_DB_OK)
        eu_log_error("queue", "cannot record the end of job %s (%s): %s", job->id, job->kind,
                     res ? PQresultErrorMessage(res) : "database unavailable");
    else if (job->failed && PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "dead") != 0)
        eu_queue_worker_arm(job->w, strtoll(PQgetvalue(res, 0, 1), NULL, 10));
    if (!job->waiting)
        q->detached_in[job->w->index]--;
    eu_queue_job_free(job);
    q->detached--;
    q->qs->detached--;
    eu_tenant_unref(t);
}

/* Runs a statement that records a job's end: on the turn's connection, or
 * for a detached job on the tenant's pool (or not at all once the tenant is
 * gone: the lock expires and the job runs again). */
static void
record(struct eu_job *job, const struct eu_sql *sql, int n, const char *const *params)
{
    struct eu_queue *q = job->q;
    if (!job->detached) {
        eu_db_conn_stmt(q->conn, sql, n, params, on_job_recorded, job);
        return;
    }
    if (q->t->removed || q->qs->stopping) {
        on_detached_recorded(NULL, EU_DB_UNAVAILABLE, job);
        return;
    }
    if (sql == &eu_queue_job_sql[QUEUE_DONE]) {
        done_later(job);
        return;
    }
    eu_db_pool_stmt(eu_tenant_pool(q->qs->app->registry, q->t), sql, n, params,
                    on_detached_recorded, job);
}

/* ---- detached successes, deleted together ---- */

/* One tenant's share of a flush: its jobs, deleted by one statement. */
struct done_many {
    int n;
    struct eu_job *jobs[DONE_BATCH];
};

static void
on_done_many(PGresult *res, enum eu_db_status st, void *arg)
{
    struct done_many *d = arg;
    for (int i = 0; i < d->n; i++)
        on_detached_recorded(res, st, d->jobs[i]);
    free(d);
}

/* Sends the waiting successes' DELETEs: one statement per tenant. */
static void
done_flush(struct eu_queues *qs)
{
    struct eu_job *list = qs->done_head;
    qs->done_head = NULL;
    qs->ndone = 0;
    evtimer_del(qs->done_flush);
    while (list) {
        /* The first job's tenant takes every job of its tenant out of the
         * list (at most DONE_BATCH of them). */
        struct eu_queue *q = list->q;
        struct done_many *d = eu_xcalloc(1, sizeof(*d));
        struct eu_job **pp = &list;
        while (*pp) {
            struct eu_job *j = *pp;
            if (j->q != q) {
                pp = &j->done_next;
                continue;
            }
            *pp = j->done_next;
            j->done_next = NULL;
            d->jobs[d->n++] = j;
        }
        if (q->t->removed || qs->stopping) {
            on_done_many(NULL, EU_DB_UNAVAILABLE, d);
            continue;
        }
        /* {id,id,...}: ids of at most 20 digits. */
        char ids[DONE_BATCH * 21 + 3], *o = ids;
        *o++ = '{';
        for (int i = 0; i < d->n; i++)
            o += snprintf(o, sizeof(ids) - (size_t)(o - ids), "%s%s", i ? "," : "", d->jobs[i]->id);
        snprintf(o, sizeof(ids) - (size_t)(o - ids), "}");
        const char *params[] = {ids};
        eu_db_pool_stmt(eu_tenant_pool(qs->app->registry, q->t), &eu_queue_job_sql[QUEUE_DONE_MANY],
                        1, params, on_done_many, d);
    }
}

static void
on_done_flush(evutil_socket_t fd, short what, void *arg)
{
    done_flush(arg);
}

/* A detached job succeeded: its DELETE goes with the others that end
 * within DONE_FLUSH_MS. */
static void
done_later(struct eu_job *job)
{
    struct eu_queues *qs = job->q->qs;
    job->done_next = qs->done_head;
    qs->done_head = job;
    if (++qs->ndone >= DONE_BATCH) {
        done_flush(qs);
        return;
    }
    if (qs->ndone == 1) {
        struct timeval tv = {0, DONE_FLUSH_MS * 1000};
        evtimer_add(qs->done_flush, &tv);
    }
}

/* ---- detaching and waiting ---- */

static bool detach(struct eu_job *job, bool waiting);

bool
eu_job_detach(struct eu_job *job)
{
    struct eu_queue *q = job->q;
    if (job->detached)
        return true;
    if (q->detached_in[job->w->index] >= DETACH_MAX || q->qs->stopping)
        return false;
    return detach(job, false);
}

/* Takes job off its turn; counted in detached_in unless waiting. */
static bool
detach(struct eu_job *job, bool waiting)
{
    struct eu_queue *q = job->q;
    job->detached = true;
    job->waiting = waiting;
    if (!waiting)
        q->detached_in[job->w->index]++;
    q->detached++;
    q->qs->detached++;
    eu_tenant_ref(q->t);
    /* The turn goes on with the rest of its batch now. */
    eu_queue_job_run_next(q, job->w);
    return true;
}

bool
eu_job_waiting(struct eu_job *job, bool waiting)
{
    if (!job->detached) {
        /* Waiting needs no room, so it may leave a turn the cap kept it in. */
        if (!waiting || job->q->qs->stopping)
            return false;
        return detach(job, true);
    }
    if (job->waiting == waiting)
        return true;
    job->waiting = waiting;
    /* Back on the wire it counts again, even past DETACH_MAX for a moment:
     * the cap only bounds what detaches next. */
    job->q->detached_in[job->w->index] += waiting ? -1 : 1;
    return true;
}

void
eu_job_on_abandon(struct eu_job *job, eu_job_abandon_cb cb, void *arg)
{
    if (!job->detached)
        return; /* in a turn: the drain waits for it, as for any job */
    job->abandon = cb;
    job->abandon_arg = arg;
}

void
eu_queues_abandon(struct eu_queues *qs)
{
    if (!qs)
        return;
    /* From the top after each: the last reference to a tenant may go with
     * its job, and with it the jobs its queue still held. */
    for (;;) {
        struct eu_job *job = qs->held;
        while (job && !(job->detached && job->abandon))
            job = job->held_next;
        if (!job)
            break;
        eu_job_abandon_cb cb = job->abandon;
        job->abandon = NULL;
        cb(job->abandon_arg);
        /* Not recorded (the process is stopping): its lock expires and it
         * runs again, here or in another process. */
        on_detached_recorded(NULL, EU_DB_UNAVAILABLE, job);
    }
}

/* ---- what a job's runner calls ---- */

void
eu_job_stmt(struct eu_job *job, const struct eu_sql *sql, int n, const char *const *params,
            eu_db_result_cb cb, void *arg)
{
    struct eu_queue *q = job->q;
    if (!job->detached)
        eu_db_conn_stmt(q->conn, sql, n, params, cb, arg);
    else
        eu_db_pool_stmt(eu_tenant_pool(q->qs->app->registry, q->t), sql, n, params, cb, arg);
}

void
eu_job_done(struct eu_job *job, const char *error)
{
    struct eu_queue *q = job->q;
    /* Its runner is gone: a stop while the end is being recorded has
     * nothing to let go. */
    job->abandon = NULL;
    eu_queue_log_context(q);
    if (!error) {
        eu_log_debug("queue", "job %s (%s) done", job->id, job->kind);
        const char *params[] = {job->id};
        record(job, &eu_queue_job_sql[QUEUE_DONE], 1, params);
        return;
    }
    const struct eu_config *cfg = q->qs->app->cfg;
    job->failed = true;
    eu_log_warn("queue", "job %s (%s) failed, attempt %d of %d: %s", job->id, job->kind,
                job->attempt, cfg->job_max_attempts, error);
    char msg[ERROR_MAX + 1], max[16], base[16], cap[16];
    snprintf(msg, sizeof(msg), "%s", error);
    snprintf(max, sizeof(max), "%d", cfg->job_max_attempts);
    snprintf(base, sizeof(base), "%d", cfg->job_backoff_base_s);
    snprintf(cap, sizeof(cap), "%d", cfg->job_backoff_max_s);
    char attempt[16];
    snprintf(attempt, sizeof(attempt), "%d", job->attempt);
    const char *params[] = {job->id, msg, max, base, cap, attempt};
    record(job, &eu_queue_job_sql[QUEUE_FAILED], 6, params);
}

void
eu_job_retry_in(struct eu_job *job, const char *error, int delay_s, bool give_up)
{
    struct eu_queue *q = job->q;
    job->abandon = NULL; /* as in eu_job_done() */
    eu_queue_log_context(q);
    job->failed = true;
    eu_log_warn("queue", "job %s (%s) failed, attempt %d%s: %s", job->id, job->kind, job->attempt,
                give_up ? ", giving up" : "", error);
    /* queue.failed with a constant backoff: base and cap both delay_s; a
     * zero attempt limit makes it dead now. */
    char msg[ERROR_MAX + 1], max[16], delay[16];
    snprintf(msg, sizeof(msg), "%s", error);
    snprintf(max, sizeof(max), "%d", give_up ? 0 : INT32_MAX);
    snprintf(delay, sizeof(delay), "%d", delay_s > 0 ? delay_s : 0);
    char attempt[16];
    snprintf(attempt, sizeof(attempt), "%d", job->attempt);
    const char *params[] = {job->id, msg, max, delay, delay, attempt};
    record(job, &eu_queue_job_sql[QUEUE_FAILED], 6, params);
}

struct eu_db_conn *
eu_job_conn(const struct eu_job *job)
{
    return job->detached ? NULL : job->q->conn;
}

struct eu_tenant *
eu_job_tenant(const struct eu_job *job)
{
    return job->q->t;
}

struct eu_app *
eu_job_app(const struct eu_job *job)
{
    return job->q->qs->app;
}

const char *
eu_job_id(const struct eu_job *job)
{
    return job->id;
}

json_t *
eu_job_payload(const struct eu_job *job)
{
    return job->payload;
}

int
eu_job_attempt(const struct eu_job *job)
{
    return job->attempt;
}

/* ---- the heartbeat ---- */

/*
 * A claimed job is locked for job_lock_seconds; while this process lives it
 * locks its held jobs again every third of that, so a job may run as long
 * as it needs while the lock itself stays short, and a job whose process
 * was killed (SIGKILL, the OOM killer, a lost host) runs again, elsewhere
 * or after a restart, once one short lock has passed instead of after the
 * longest a job could take.
 */
static void
on_extended(PGresult *res, enum eu_db_status st, void *arg)
{
    (void)arg;
    if (st != EU_DB_OK)
        eu_log_warn("queue", "cannot extend the locks of running jobs: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
}

/* Extends the locks of q's held jobs, from first on in the held list. */
static void
extend_queue(struct eu_queues *qs, struct eu_job *first, char lock[16])
{
    struct eu_queue *q = first->q;
    size_t cap = 64, len = 0;
    char *ids = eu_xmalloc(cap);
    ids[len++] = '{';
    for (struct eu_job *j = first; j; j = j->held_next) {
        if (j->q != q)
            continue;
        size_t need = strlen(j->id) + 3;
        if (len + need >= cap) {
            cap = (len + need) * 2;
            ids = eu_xrealloc(ids, cap);
        }
        len += (size_t)snprintf(ids + len, cap - len, "%s%s", len > 1 ? "," : "", j->id);
    }
    snprintf(ids + len, cap - len, "}");
    const char *params[] = {ids, lock};
    eu_log_set_context(q->t->domain, NULL);
    eu_db_pool_stmt(eu_tenant_pool(qs->app->registry, q->t), &eu_queue_job_sql[QUEUE_EXTEND], 2,
                    params, on_extended, NULL);
    free(ids);
}

static void
on_heartbeat(evutil_socket_t fd, short what, void *arg)
{
    struct eu_queues *qs = arg;
    (void)fd;
    (void)what;
    if (qs->stopping)
        return;
    char lock[16];
    snprintf(lock, sizeof(lock), "%d", qs->app->cfg->job_lock_s);
    /* One statement per tenant holding jobs: they are few (at most a
     * batch per turn waiting or running, and the detached ones). */
    qs->beat++;
    for (struct eu_job *j = qs->held; j; j = j->held_next) {
        if (j->q->beat == qs->beat || j->q->t->removed)
            continue;
        j->q->beat = qs->beat;
        extend_queue(qs, j, lock);
    }
}

/* ---- the process ---- */

void
eu_queue_jobs_start(struct eu_queues *qs)
{
    struct eu_app *app = qs->app;
    qs->heartbeat = event_new(app->base, -1, EV_PERSIST, on_heartbeat, qs);
    qs->done_flush = evtimer_new(app->base, on_done_flush, qs);
    int beat_ms = app->cfg->job_lock_s * 1000 / 3;
    struct timeval beat = {(time_t)(beat_ms / 1000), (suseconds_t)(beat_ms % 1000) * 1000};
    evtimer_add(qs->heartbeat, &beat);
}

void
eu_queue_jobs_stop(struct eu_queues *qs)
{
    /* Successes waiting for their DELETE are left to their locks, as a
     * job ending from now on is (record()). */
    done_flush(qs);
    evtimer_del(qs->heartbeat);
}

void
eu_queue_jobs_free(struct eu_queues *qs)
{
    event_free(qs->heartbeat);
    event_free(qs->done_flush);
}
