/*
 * The scheduler of background work: per tenant, one timer per job queue and
 * per timed task ("workers"); per process, a FIFO of tenants waiting for one
 * of [workers] max_running_jobs turns; per placement, one safety poll.
 *
 * A worker's timer is armed only for something known: the next item it
 * knows to be due, or a wake from this process. With nothing known it
 * sleeps, and an idle tenant costs no transaction at all. What another
 * process enqueued, or what is left from before a restart, is found by the
 * placement poll: every queue_idle_poll_seconds (with jitter) and once at
 * start, one statement per placement lists, across all its tenants, what
 * falls due before the next poll, and arms those tenants' workers for it.
 * When a worker's timer fires the worker is marked ready and its tenant
 * asks for a turn. A turn takes one
 * connection from the tenant's pool, runs ready workers one after another on
 * it (a claim and its jobs, or a timed task's run) up to TURN_JOBS jobs, and
 * gives the connection back; a tenant with work left queues again behind the
 * others. So a tenant's background work holds at most one of its
 * connections, and no tenant holds a turn for long.
 *
 * A claim is one statement: it locks up to CLAIM_BATCH due jobs and also
 * returns when the earliest job it did not take falls due (a retry, a
 * delayed job, or one whose lock will expire), which sets the timer. Only a
 * wake or a due time brings the worker back before the idle poll.
 *
 * Lifetime: a tenant owns its struct eu_queue in its EU_SLOT_QUEUE slot
 * (freed with the tenant, or when it goes dormant with no worker armed).
 * While a queue waits for or holds a turn it holds a tenant reference, so the
 * tenant cannot be freed under a pending callback; otherwise only its timers
 * are armed, and those are freed with it.
 */
#include "eunha/queue.h"

#include <event2/event.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/tenant.h"
#include "queue_internal.h"

/* Jobs locked by one claim: few enough that a crash re-runs little. */
#define CLAIM_BATCH 10
/* Jobs one tenant runs before the other waiting tenants get a turn. */
#define TURN_JOBS 20
/* Something looked due but nothing could be claimed (another process holds
 * it, or is committing its claim): look again shortly, not in a spin. */
#define RETRY_SOON_MS 1000
/* After the database failed. */
#define FAIL_RETRY_MS 30000
/* Error text kept per job. */
#define ERROR_MAX 1000

#define N_WORKERS (EU_QUEUE_MAX + EU_TASK_MAX)

static const char *const queue_names[EU_QUEUE_MAX] = {
    [EU_QUEUE_DEFAULT] = "default",
};

struct worker {
    struct eu_queue *q;
    int index; /* < EU_QUEUE_MAX: a job queue; else EU_QUEUE_MAX + task id */
    struct event *timer;
    int64_t due_ms; /* when the armed timer fires (now_ms() clock) */
    bool armed;
    bool ready; /* due: waits for its tenant's turn */
};

struct eu_job {
    struct eu_queue *q;
    struct worker *w;
    char id[24];
    char *kind;
    json_t *payload;
    int attempt;
    bool failed;
};

struct eu_task_run {
    struct eu_queue *q;
    struct worker *w;
};

enum turn_state { T_IDLE, T_WAITING, T_RUNNING };

struct eu_queue {
    struct eu_queues *qs;
    struct eu_tenant *t; /* borrowed: the tenant owns this */
    struct worker w[N_WORKERS];
    enum turn_state state;
    struct eu_queue *wait_next;
    struct eu_db_conn *conn; /* held during a turn */
    int rr;                  /* round-robin start over workers */
    int turn_jobs;
    struct eu_job *batch[CLAIM_BATCH];
    int nbatch, ibatch;
    struct eu_task_run run;
};

struct eu_queues {
    struct eu_app *app;
    struct event *pump;
    struct event *poll; /* the placements' safety poll */
    int polls_running;  /* placement polls awaiting their answer */
    struct eu_queue *wait_head, *wait_tail;
    int running;
    bool stopping;
};

/* The process's scheduler: the registry starts a tenant's workers through
 * it, and cannot reach the app. One loop, one scheduler. */
static struct eu_queues *current;

static void step(struct eu_queue *q);
static void turn_end(struct eu_queue *q);

static int64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const struct eu_config *
cfg_of(const struct eu_queue *q)
{
    return q->qs->app->cfg;
}

/* queue_idle_poll_seconds +-10%, in ms: processes started together do not
 * poll together. */
static int64_t
idle_poll_ms(const struct eu_config *cfg)
{
    int64_t base = (int64_t)cfg->queue_idle_poll_s * 1000;
    double u = (double)randombytes_random() / (double)UINT32_MAX; /* [0, 1] */
    return base + (int64_t)((u * 2.0 - 1.0) * (double)(base / 10));
}

/* The logger borrows the tenant name; a copy of our own cannot be freed
 * under it when a tenant is renamed or freed between two of our callbacks. */
static void
set_log_context(const struct eu_queue *q)
{
    static char domain[256];
    snprintf(domain, sizeof(domain), "%s", q->t->domain);
    eu_log_set_context(domain, NULL);
}

static const char *
worker_name(const struct worker *w)
{
    return w->index < EU_QUEUE_MAX ? queue_names[w->index]
                                   : eu_task_kinds[w->index - EU_QUEUE_MAX].name;
}

/* ---- timers ---- */

/* Arms w to fire in delay_ms unless it fires earlier anyway. */
static void
worker_arm(struct worker *w, int64_t delay_ms)
{
    if (w->ready)
        return; /* runs at the next turn */
    if (delay_ms < 0)
        delay_ms = 0;
    int64_t due = now_ms() + delay_ms;
    if (w->armed && w->due_ms <= due)
        return;
    w->due_ms = due;
    w->armed = true;
    struct timeval tv = {(time_t)(delay_ms / 1000), (suseconds_t)(delay_ms % 1000) * 1000};
    evtimer_add(w->timer, &tv);
}

/* Arms w for an item due in next_ms; negative (none known): w sleeps until
 * woken, or until the placement poll finds something. */
static void
worker_arm_next(struct worker *w, int64_t next_ms)
{
    if (next_ms >= 0)
        worker_arm(w, next_ms);
}

static void
pump_later(struct eu_queues *qs)
{
    event_active(qs->pump, EV_TIMEOUT, 0);
}

static bool
has_ready(const struct eu_queue *q)
{
    for (int i = 0; i < N_WORKERS; i++)
        if (q->w[i].ready)
            return true;
    return false;
}

static void
want_turn(struct eu_queue *q)
{
    struct eu_queues *qs = q->qs;
    if (q->state != T_IDLE || qs->stopping)
        return;
    if (q->t->state != EU_TENANT_ACTIVE || q->t->moving) {
        /* A suspended instance does no background work, nor one whose rows
         * are being copied elsewhere (a reload during a move may have put
         * its state back to active); look again later. */
        for (int i = 0; i < N_WORKERS; i++) {
            if (q->w[i].ready) {
                q->w[i].ready = false;
                worker_arm_next(&q->w[i], -1);
            }
        }
        return;
    }
    eu_tenant_ref(q->t); /* the turn's */
    q->state = T_WAITING;
    q->wait_next = NULL;
    if (qs->wait_tail)
        qs->wait_tail->wait_next = q;
    else
        qs->wait_head = q;
    qs->wait_tail = q;
    pump_later(qs);
}

static void
on_worker_timer(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    w->armed = false;
    w->ready = true;
    want_turn(w->q);
}

/* ---- turns ---- */

static void
on_turn_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct eu_queue *q = arg;
    set_log_context(q);
    if (!conn) {
        eu_log_warn("queue", "no connection for background work: %s",
                    st == EU_DB_TIMEOUT ? "timeout" : "database unavailable");
        for (int i = 0; i < N_WORKERS; i++) {
            if (q->w[i].ready) {
                q->w[i].ready = false;
                worker_arm(&q->w[i], FAIL_RETRY_MS);
            }
        }
        turn_end(q);
        return;
    }
    q->conn = conn;
    step(q);
}

static void
on_pump(evutil_socket_t fd, short what, void *arg)
{
    struct eu_queues *qs = arg;
    while (qs->wait_head && qs->running < qs->app->cfg->max_running_jobs) {
        struct eu_queue *q = qs->wait_head;
        qs->wait_head = q->wait_next;
        if (!qs->wait_head)
            qs->wait_tail = NULL;
        q->wait_next = NULL;
        qs->running++;
        q->state = T_RUNNING;
        q->turn_jobs = 0;
        if (qs->stopping || q->t->removed) {
            turn_end(q);
            continue;
        }
        eu_db_pool_acquire(eu_tenant_pool(qs->app->registry, q->t), on_turn_conn, q);
    }
    eu_log_set_context(NULL, NULL);
}

/* Gives the connection and the turn back. May free q (and its tenant). */
static void
turn_end(struct eu_queue *q)
{
    struct eu_queues *qs = q->qs;
    if (q->conn) {
        eu_db_conn_release(q->conn);
        q->conn = NULL;
    }
    qs->running--;
    q->state = T_IDLE;
    pump_later(qs);
    /* Work left: queue again behind the tenants already waiting (a new
     * reference, taken before this turn's goes). */
    if (has_ready(q) && !qs->stopping && !q->t->removed)
        want_turn(q);
    eu_log_set_context(NULL, NULL);
    eu_tenant_unref(q->t);
}

static void claim(struct eu_queue *q, struct worker *w);
static void task_start(struct eu_queue *q, struct worker *w);

/* Runs the next ready worker of the turn, or ends it. */
static void
step(struct eu_queue *q)
{
    if (q->qs->stopping || q->t->removed || q->turn_jobs >= TURN_JOBS) {
        turn_end(q);
        return;
    }
    for (int i = 0; i < N_WORKERS; i++) {
        struct worker *w = &q->w[(q->rr + i) % N_WORKERS];
        if (!w->ready)
            continue;
        q->rr = (w->index + 1) % N_WORKERS;
        w->ready = false;
        if (w->index < EU_QUEUE_MAX)
            claim(q, w);
        else
            task_start(q, w);
        return;
    }
    turn_end(q);
}

/* ---- jobs ---- */

/*
 * Claims up to $2 due jobs of queue $1, locking them for $3 seconds (and
 * counting the attempt now, so a job that crashes its process still dies in
 * the end), and returns them; the last row (id NULL) holds the milliseconds
 * until the earliest job left behind can be claimed. ANY(ARRAY(...)) makes
 * the locking subquery run exactly once.
 */
static const char claim_sql[] =
    "WITH c AS (UPDATE jobs SET locked_until = now() + make_interval(secs => $4::float8),"
    " attempts = attempts + 1, updated_at = now()"
    " WHERE tenant_id = $1 AND id = ANY (ARRAY(SELECT id FROM jobs WHERE tenant_id = $1"
    "  AND queue = $2 AND state = 'ready'"
    "  AND run_at <= now() AND (locked_until IS NULL OR locked_until <= now())"
    "  ORDER BY run_at, id LIMIT $3::int FOR UPDATE SKIP LOCKED))"
    " RETURNING id, kind, payload, attempts)"
    " SELECT id::text, kind, payload::text, attempts::bigint FROM c"
    " UNION ALL"
    " SELECT NULL, NULL, NULL, (extract(epoch FROM min(greatest(run_at, coalesce(locked_until,"
    "  run_at))) - now()) * 1000)::bigint"
    " FROM jobs WHERE tenant_id = $1 AND queue = $2 AND state = 'ready'"
    " AND id NOT IN (SELECT id FROM c)";

/* Success deletes the job. */
static const char done_sql[] = "DELETE FROM jobs WHERE tenant_id = $1 AND id = $2::bigint";

/* Failure: retry after base * 2^(attempts-1) seconds (at most max), or dead
 * after max_attempts. Returns the state and the ms until the retry. */
static const char failed_sql[] =
    "UPDATE jobs SET last_error = $3, locked_until = NULL, updated_at = now(),"
    " state = CASE WHEN attempts >= $4::int THEN 'dead' ELSE 'ready' END,"
    " run_at = CASE WHEN attempts >= $4::int THEN run_at ELSE now() + make_interval(secs =>"
    "  least($5::float8 * power(2::float8, least(greatest(attempts - 1, 0), 40)), $6::float8))"
    " END"
    " WHERE tenant_id = $1 AND id = $2::bigint"
    " RETURNING state, (extract(epoch FROM run_at - now()) * 1000)::bigint,"
    " attempts";

static void run_next_job(struct eu_queue *q);

static void
job_free(struct eu_job *job)
{
    json_decref(job->payload);
    free(job->kind);
    free(job);
}

static void
drop_batch(struct eu_queue *q)
{
    /* Their locks expire and they run again, here or elsewhere. */
    while (q->ibatch < q->nbatch)
        job_free(q->batch[q->ibatch++]);
    q->nbatch = q->ibatch = 0;
}

static void
on_claimed(PGresult *res, enum eu_db_status st, void *arg)
{
    struct worker *w = arg;
    struct eu_queue *q = w->q;
    set_log_context(q);
    if (st != EU_DB_OK) {
        eu_log_warn("queue", "cannot claim jobs of queue '%s': %s", worker_name(w),
                    res ? PQresultErrorMessage(res) : eu_db_conn_error(q->conn));
        worker_arm(w, FAIL_RETRY_MS);
        if (st == EU_DB_UNAVAILABLE)
            turn_end(q);
        else
            step(q);
        return;
    }
    int n = 0;
    int64_t next = 0;
    bool has_next = false;
    for (int i = 0; i < PQntuples(res); i++) {
        if (PQgetisnull(res, i, 0)) {
            has_next = !PQgetisnull(res, i, 3);
            if (has_next)
                next = strtoll(PQgetvalue(res, i, 3), NULL, 10);
            continue;
        }
        if (n >= CLAIM_BATCH)
            break;
        struct eu_job *job = eu_xcalloc(1, sizeof(*job));
        job->q = q;
        job->w = w;
        snprintf(job->id, sizeof(job->id), "%s", PQgetvalue(res, i, 0));
        job->kind = eu_xstrdup(PQgetvalue(res, i, 1));
        job->payload = json_loads(PQgetvalue(res, i, 2), JSON_DECODE_ANY, NULL);
        if (!json_is_object(job->payload)) {
            json_decref(job->payload);
            job->payload = json_object();
        }
        job->attempt = atoi(PQgetvalue(res, i, 3));
        q->batch[n++] = job;
    }
    int limit = CLAIM_BATCH < TURN_JOBS - q->turn_jobs ? CLAIM_BATCH : TURN_JOBS - q->turn_jobs;
    if (n >= limit)
        worker_arm(w, 0); /* probably more waiting: after the others' turn */
    else if (has_next && next <= 0)
        worker_arm(w, RETRY_SOON_MS);
    else
        worker_arm_next(w, has_next ? next : -1);
    if (n)
        eu_log_debug("queue", "claimed %d jobs of queue '%s'", n, worker_name(w));
    q->nbatch = n;
    q->ibatch = 0;
    run_next_job(q);
}

static void
claim(struct eu_queue *q, struct worker *w)
{
    const struct eu_config *cfg = cfg_of(q);
    int limit = CLAIM_BATCH < TURN_JOBS - q->turn_jobs ? CLAIM_BATCH : TURN_JOBS - q->turn_jobs;
    char lim[16], lock[16];
    snprintf(lim, sizeof(lim), "%d", limit);
    snprintf(lock, sizeof(lock), "%d", cfg->job_lock_s);
    const char *params[] = {queue_names[w->index], lim, lock};
    eu_db_conn_query(q->conn, claim_sql, 3, params, on_claimed, w);
}

static void
run_next_job(struct eu_queue *q)
{
    if (q->ibatch >= q->nbatch) {
        q->nbatch = q->ibatch = 0;
        step(q);
        return;
    }
    struct eu_job *job = q->batch[q->ibatch++];
    q->turn_jobs++;
    set_log_context(q);
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
    set_log_context(q);
    if (st != EU_DB_OK) {
        /* The lock expires and the job runs again: at least once. */
        eu_log_error("queue", "cannot record the end of job %s (%s): %s", job->id, job->kind,
                     res ? PQresultErrorMessage(res) : eu_db_conn_error(q->conn));
    } else if (job->failed && PQntuples(res) == 1) {
        if (strcmp(PQgetvalue(res, 0, 0), "dead") == 0)
            eu_log_warn("queue", "job %s (%s) is dead after %s attempts", job->id, job->kind,
                        PQgetvalue(res, 0, 2));
        else
            worker_arm(job->w, strtoll(PQgetvalue(res, 0, 1), NULL, 10));
    }
    struct worker *w = job->w;
    job_free(job);
    if (st == EU_DB_UNAVAILABLE) {
        drop_batch(q);
        worker_arm(w, FAIL_RETRY_MS);
        turn_end(q);
        return;
    }
    run_next_job(q);
}

void
eu_job_done(struct eu_job *job, const char *error)
{
    struct eu_queue *q = job->q;
    set_log_context(q);
    if (!error) {
        eu_log_debug("queue", "job %s (%s) done", job->id, job->kind);
        const char *params[] = {job->id};
        eu_db_conn_query(q->conn, done_sql, 1, params, on_job_recorded, job);
        return;
    }
    const struct eu_config *cfg = cfg_of(q);
    job->failed = true;
    eu_log_warn("queue", "job %s (%s) failed, attempt %d of %d: %s", job->id, job->kind,
                job->attempt, cfg->job_max_attempts, error);
    char msg[ERROR_MAX + 1], max[16], base[16], cap[16];
    snprintf(msg, sizeof(msg), "%s", error);
    snprintf(max, sizeof(max), "%d", cfg->job_max_attempts);
    snprintf(base, sizeof(base), "%d", cfg->job_backoff_base_s);
    snprintf(cap, sizeof(cap), "%d", cfg->job_backoff_max_s);
    const char *params[] = {job->id, msg, max, base, cap};
    eu_db_conn_query(q->conn, failed_sql, 5, params, on_job_recorded, job);
}

struct eu_db_conn *
eu_job_conn(const struct eu_job *job)
{
    return job->q->conn;
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

/* ---- timed tasks ---- */

static void
task_start(struct eu_queue *q, struct worker *w)
{
    q->run.q = q;
    q->run.w = w;
    set_log_context(q);
    eu_task_kinds[w->index - EU_QUEUE_MAX].run(&q->run);
}

void
eu_task_run_done(struct eu_task_run *run, int64_t next_due_ms)
{
    worker_arm_next(run->w, next_due_ms);
    step(run->q);
}

void
eu_task_run_fail(struct eu_task_run *run)
{
    worker_arm(run->w, FAIL_RETRY_MS);
    step(run->q);
}

struct eu_db_conn *
eu_task_run_conn(const struct eu_task_run *run)
{
    return run->q->conn;
}

struct eu_tenant *
eu_task_run_tenant(const struct eu_task_run *run)
{
    return run->q->t;
}

struct eu_app *
eu_task_run_app(const struct eu_task_run *run)
{
    return run->q->qs->app;
}

/* ---- a tenant's workers ---- */

/* A tenant's workers may go while it sleeps only when none is armed or
 * waiting: an armed one holds the due time of something known. */
static bool
queue_is_idle(const void *data)
{
    const struct eu_queue *q = data;
    if (q->state != T_IDLE)
        return false;
    for (int i = 0; i < N_WORKERS; i++)
        if (q->w[i].armed || q->w[i].ready)
            return false;
    return true;
}

static void
queue_dispose(void *data)
{
    eu_queue_free(data);
}

static const struct eu_tenant_slot_ops queue_ops = {queue_dispose, queue_is_idle};

static struct eu_queue *
queue_of(const struct eu_tenant *t)
{
    return eu_tenant_slot(t, EU_SLOT_QUEUE);
}

void
eu_queue_start(struct eu_tenant *t)
{
    if (queue_of(t) || !current || current->stopping)
        return;
    struct eu_queue *q = eu_xcalloc(1, sizeof(*q));
    q->qs = current;
    q->t = t;
    for (int i = 0; i < N_WORKERS; i++) {
        struct worker *w = &q->w[i];
        w->q = q;
        w->index = i;
        /* Unarmed: the placement poll finds what is due. */
        w->timer = evtimer_new(current->app->base, on_worker_timer, w);
    }
    eu_tenant_slot_set(t, EU_SLOT_QUEUE, q, &queue_ops);
}

void
eu_queue_free(struct eu_queue *q)
{
    if (!q)
        return;
    /* A queue waiting for or holding a turn holds a tenant reference, so it
     * is idle here: only timers to free. */
    for (int i = 0; i < N_WORKERS; i++)
        event_free(q->w[i].timer);
    free(q);
}

void
eu_queue_wake(struct eu_tenant *t, enum eu_queue_id queue, int64_t delay_ms)
{
    if ((unsigned)queue >= EU_QUEUE_MAX)
        return;
    eu_queue_start(t);
    if (queue_of(t))
        worker_arm(&queue_of(t)->w[queue], delay_ms);
}

void
eu_queue_task_wake(struct eu_tenant *t, enum eu_task_id task, int64_t delay_ms)
{
    if ((unsigned)task >= EU_TASK_MAX)
        return;
    eu_queue_start(t);
    if (queue_of(t))
        worker_arm(&queue_of(t)->w[EU_QUEUE_MAX + task], delay_ms);
}

const char *
eu_queue_name(enum eu_queue_id queue)
{
    return (unsigned)queue < EU_QUEUE_MAX ? queue_names[queue] : NULL;
}

int
eu_queue_id_from_name(const char *name)
{
    for (int i = 0; i < EU_QUEUE_MAX; i++)
        if (strcmp(queue_names[i], name) == 0)
            return i;
    return -1;
}

/* ---- enqueueing ---- */

struct enqueue {
    struct eu_tenant *t; /* a reference */
    enum eu_queue_id queue;
    int delay_s;
    eu_queue_enqueued_cb cb;
    void *arg;
};

static void
on_enqueued(PGresult *res, enum eu_db_status st, void *arg)
{
    struct enqueue *e = arg;
    const char *id = NULL;
    if (st == EU_DB_OK) {
        id = PQntuples(res) ? PQgetvalue(res, 0, 0) : "";
        if (*id && !e->t->removed)
            eu_queue_wake(e->t, e->queue, (int64_t)e->delay_s * 1000);
    } else {
        eu_log_warn("queue", "cannot enqueue a job: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
    }
    if (e->cb)
        e->cb(id, st, e->arg);
    eu_tenant_unref(e->t);
    free(e);
}

int
eu_queue_enqueue(struct eu_app *app, struct eu_tenant *t, const char *kind, const char *payload,
                 int delay_s, const char *dedupe_key, eu_queue_enqueued_cb cb, void *arg)
{
    const struct eu_job_kind *k = eu_job_kind_find(kind);
    if (!k)
        return -1;
    struct enqueue *e = eu_xcalloc(1, sizeof(*e));
    eu_tenant_ref(t);
    e->t = t;
    e->queue = k->queue;
    e->delay_s = delay_s > 0 ? delay_s : 0;
    e->cb = cb;
    e->arg = arg;
    char delay[16];
    snprintf(delay, sizeof(delay), "%d", e->delay_s);
    const char *params[] = {queue_names[k->queue], kind, payload ? payload : "{}", delay,
                            dedupe_key};
    eu_db_pool_query(eu_tenant_pool(app->registry, t), EU_QUEUE_INSERT_SQL, 5, params,
                     on_enqueued, e);
    return 0;
}

/* ---- the placements' safety poll ---- */

/*
 * What falls due within $1 seconds, across every tenant of one placement:
 * (tenant, worker name, ms until due). It reads every tenant's rows on
 * purpose, so it runs on the placement's own pool, which binds no tenant;
 * each tenant's worker then claims its own rows under its tenant. Indexed by
 * migrations/tenant/0012 (the due columns alone, not led by tenant_id).
 */
static const char poll_sql[] =
    "SELECT tenant_id, 'q:' || queue, (extract(epoch FROM min(greatest(run_at,"
    " coalesce(locked_until, run_at))) - now()) * 1000)::bigint FROM jobs"
    " WHERE state = 'ready' AND greatest(run_at, coalesce(locked_until, run_at))"
    "  < now() + make_interval(secs => $1::float8) GROUP BY tenant_id, queue"
    " UNION ALL SELECT tenant_id, 't:scheduled_statuses',"
    " (extract(epoch FROM min(scheduled_at) - now()) * 1000)::bigint FROM scheduled_statuses"
    " WHERE scheduled_at < now() + make_interval(secs => $1::float8) GROUP BY tenant_id"
    " UNION ALL SELECT tenant_id, 't:polls', (extract(epoch FROM min(expires_at) - now())"
    " * 1000)::bigint FROM polls WHERE closed_at IS NULL"
    " AND expires_at < now() + make_interval(secs => $1::float8) GROUP BY tenant_id"
    " UNION ALL SELECT a.tenant_id, 't:account_cleanup', (extract(epoch FROM"
    " min(a.suspended_at) + make_interval(secs => $2::float8) - now()) * 1000)::bigint"
    " FROM accounts a WHERE a.suspended_at IS NOT NULL AND a.suspended_at"
    "  < now() - make_interval(secs => $2::float8) + make_interval(secs => $1::float8)"
    " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = a.tenant_id"
    "  AND j.dedupe_key = 'purge_account:' || a.id) GROUP BY a.tenant_id";

static void arm_poll(struct eu_queues *qs, int64_t delay_ms);

/* The worker index named in poll_sql's second column, or -1. */
static int
worker_index(const char *name)
{
    if (strncmp(name, "q:", 2) == 0)
        return eu_queue_id_from_name(name + 2);
    if (strncmp(name, "t:", 2) == 0)
        for (int i = 0; i < EU_TASK_MAX; i++)
            if (strcmp(eu_task_kinds[i].name, name + 2) == 0)
                return EU_QUEUE_MAX + i;
    return -1;
}

static void
on_polled(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_queues *qs = arg;
    qs->polls_running--;
    if (st != EU_DB_OK) {
        eu_log_warn("queue", "placement poll failed: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
        return;
    }
    if (qs->stopping)
        return;
    for (int i = 0; i < PQntuples(res); i++) {
        struct eu_tenant *t =
            eu_registry_find_id(qs->app->registry, strtoll(PQgetvalue(res, i, 0), NULL, 10));
        int w = worker_index(PQgetvalue(res, i, 1));
        if (!t || w < 0 || t->removed)
            continue;
        eu_queue_start(t);
        if (queue_of(t))
            worker_arm(&queue_of(t)->w[w], strtoll(PQgetvalue(res, i, 2), NULL, 10));
    }
}

struct poll_round {
    struct eu_queues *qs;
    struct eu_db_pool **seen; /* placements polled this round */
    size_t nseen, cap;
    char horizon[24], retention[24];
};

static void
poll_placement_of(struct eu_tenant *t, void *arg)
{
    struct poll_round *r = arg;
    if (t->state == EU_TENANT_DELETING)
        return;
    struct eu_db_pool *pool = eu_tenant_placement_pool(r->qs->app->registry, t);
    for (size_t i = 0; i < r->nseen; i++)
        if (r->seen[i] == pool)
            return;
    if (r->nseen == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 8;
        r->seen = eu_xrealloc(r->seen, r->cap * sizeof(*r->seen));
    }
    r->seen[r->nseen++] = pool;
    const char *params[] = {r->horizon, r->retention};
    r->qs->polls_running++;
    eu_db_pool_query(pool, poll_sql, 2, params, on_polled, r->qs);
}

static void
on_poll_timer(evutil_socket_t fd, short what, void *arg)
{
    struct eu_queues *qs = arg;
    if (qs->stopping)
        return;
    const struct eu_config *cfg = qs->app->cfg;
    int64_t next = idle_poll_ms(cfg);
    /* A round still waiting on a slow placement: skip, do not pile up. */
    if (qs->polls_running == 0) {
        struct poll_round r = {.qs = qs};
        /* Up to the poll after next, so jitter cannot leave a gap. */
        snprintf(r.horizon, sizeof(r.horizon), "%.3f", (double)next * 2 / 1000.0);
        snprintf(r.retention, sizeof(r.retention), "%d", cfg->suspended_retention_s);
        eu_registry_each(qs->app->registry, poll_placement_of, &r);
        free(r.seen);
    }
    arm_poll(qs, next);
}

static void
arm_poll(struct eu_queues *qs, int64_t delay_ms)
{
    struct timeval tv = {(time_t)(delay_ms / 1000), (suseconds_t)(delay_ms % 1000) * 1000};
    evtimer_add(qs->poll, &tv);
}

/* ---- the process ---- */

struct eu_queues *
eu_queues_new(struct eu_app *app)
{
    struct eu_queues *qs = eu_xcalloc(1, sizeof(*qs));
    qs->app = app;
    qs->pump = event_new(app->base, -1, 0, on_pump, qs);
    qs->poll = evtimer_new(app->base, on_poll_timer, qs);
    /* A tenant's workers are made when something wakes them. */
    current = qs;
    /* Work left from before the start is found by the first poll, now. */
    arm_poll(qs, 0);
    return qs;
}

void
eu_queues_stop(struct eu_queues *qs)
{
    if (!qs || qs->stopping)
        return;
    qs->stopping = true;
    evtimer_del(qs->poll);
    while (qs->wait_head) {
        struct eu_queue *q = qs->wait_head;
        qs->wait_head = q->wait_next;
        if (!qs->wait_head)
            qs->wait_tail = NULL;
        q->state = T_IDLE;
        eu_tenant_unref(q->t);
    }
}

int
eu_queues_active(const struct eu_queues *qs)
{
    return qs ? qs->running : 0;
}

void
eu_queues_free(struct eu_queues *qs)
{
    if (!qs)
        return;
    eu_queues_stop(qs);
    if (current == qs)
        current = NULL;
    event_free(qs->pump);
    event_free(qs->poll);
    free(qs);
}
