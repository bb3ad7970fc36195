/*
 * The scheduler of background work. Per placement: one "next due" timer per
 * job queue and per timed task, over a list of the tenants that have
 * something due, and one claimer that takes due jobs for many of its
 * tenants in one statement. Per process: a FIFO of tenants waiting for one
 * of [workers] max_running_jobs turns, and the placements' safety poll.
 *
 * A tenant's worker (one per queue and per task) holds no timer. It is on
 * its placement's due list for that worker while something of its tenant is
 * known to be due, with the due time; the placement's timer for the worker
 * fires at the earliest of them. With nothing known the worker is on no
 * list, and an idle tenant costs no timer, no transaction and no
 * connection. What another process enqueued, or what is left from before a
 * restart, is found by the placement poll: every queue_idle_poll_seconds
 * (with jitter) and once at start, one statement per placement lists,
 * across all its tenants, what falls due before the next poll, and lists
 * those tenants' workers.
 *
 * When a task's timer fires, every due tenant's task worker is marked ready
 * and its tenant asks for a turn. When a queue's timer fires, the claimer
 * locks up to EU_QUEUE_CLAIM_BATCH due jobs for each of up to CLAIM_TENANTS due
 * tenants (the longest-listed first, so a tenant with 10,000 jobs gets a
 * batch like any other and goes to the back) and hands each tenant its
 * batch; the statement also returns when each tenant's earliest job left
 * behind falls due. A turn takes one connection from the tenant's pool,
 * runs the tenant's ready workers one after another on it (its claimed
 * batch, a timed task's run) and gives the connection back; a tenant with
 * work left is listed again, behind the others. So a tenant's background
 * work holds at most one of its connections, and no tenant holds a turn for
 * long.
 *
 * Lifetime: a tenant owns its struct eu_queue in its EU_SLOT_QUEUE slot
 * (freed with the tenant, or when it goes dormant with no worker listed,
 * ready or holding jobs). While a queue waits for or holds a turn it holds a
 * tenant reference, so the tenant cannot be freed under a pending callback;
 * a claim in flight names tenants by id and finds them again when it
 * returns. Placements' scheduling state lives as long as the scheduler.
 *
 * A claimed job, once run, is job.c's: recording its end, detaching it
 * from its turn (eu_job_detach(), eu_job_waiting()), the batched deletes
 * of detached successes and the heartbeat over held jobs. The two share a
 * tenant's struct eu_queue through queue_internal.h.
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
#include "eunha/sql.h"
#include "eunha/tenant.h"

#include "queue_internal.h"

/* Tenants served by one claim statement. */
#define CLAIM_TENANTS 32
/* Something looked due but nothing could be claimed (another process holds
 * it, or is committing its claim): look again shortly, not in a spin. */
#define RETRY_SOON_MS 1000
/* A due time this close counts as now: one timer firing serves them all. */
#define SLACK_MS 5

#define NONE INT64_MAX
static const char *const queue_names[EU_QUEUE_MAX] = {
    [EU_QUEUE_DEFAULT] = "default",
    [EU_QUEUE_DELIVER] = "deliver",
    [EU_QUEUE_MEDIA] = "media",
};

/* One placement's scheduling state: per worker, the due list and its
 * timer. */
struct eu_queue_place {
    struct eu_queues *qs;
    struct eu_db_pool *pool; /* the placement's own pool: binds no tenant */
    struct eu_queue_place *next;
    struct {
        struct eu_queue_worker *head, *tail;
        struct event *timer;
        int64_t timer_ms; /* when the armed timer fires; NONE when unarmed */
        bool claiming;    /* a claim statement is in flight */
    } list[EU_QUEUE_WORKERS];
};

struct place_timer {
    struct eu_queue_place *p;
    int index;
};

/* The process's scheduler: the registry starts a tenant's workers through
 * it, and cannot reach the app. One loop, one scheduler. */
static struct eu_queues *current;

static void want_turn(struct eu_queue *q);

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
void
eu_queue_log_context(const struct eu_queue *q)
{
    static char domain[256];
    snprintf(domain, sizeof(domain), "%s", q->t->domain);
    eu_log_set_context(domain, NULL);
}

static struct eu_queue *
queue_of(const struct eu_tenant *t)
{
    return eu_tenant_slot(t, EU_SLOT_QUEUE);
}

/* ---- placements' due lists and timers ---- */

/* Whether t's background work runs: all of an active tenant's, none of a
 * suspended or moving one's; of a deleted one, in its farewell only, its
 * jobs (the Delete of its actors and their deliveries), never its tasks. */
static bool
does_work(const struct eu_tenant *t, bool task)
{
    if (t->removed || t->moving)
        return false;
    return t->state == EU_TENANT_ACTIVE || (t->state == EU_TENANT_DELETING && t->farewell && !task);
}

static void on_place_timer(evutil_socket_t fd, short what, void *arg);
static void unlist(struct eu_queue_worker *w);

static struct eu_queue_place *
place_of(struct eu_queues *qs, struct eu_tenant *t)
{
    struct eu_db_pool *pool = eu_tenant_placement_pool(qs->app->registry, t);
    for (struct eu_queue_place *p = qs->places; p; p = p->next)
        if (p->pool == pool)
            return p;
    struct eu_queue_place *p = eu_xcalloc(1, sizeof(*p));
    p->qs = qs;
    p->pool = pool;
    for (int i = 0; i < EU_QUEUE_WORKERS; i++) {
        struct place_timer *pt = eu_xmalloc(sizeof(*pt));
        pt->p = p;
        pt->index = i;
        p->list[i].timer = evtimer_new(qs->app->base, on_place_timer, pt);
        p->list[i].timer_ms = NONE;
    }
    p->next = qs->places;
    qs->places = p;
    return p;
}

static void
place_free(struct eu_queue_place *p)
{
    /* A tenant a statement under way still held at shutdown outlives its
     * placement's lists: its workers must not point here when it goes. */
    for (int i = 0; i < EU_QUEUE_WORKERS; i++)
        while (p->list[i].head)
            unlist(p->list[i].head);
    for (int i = 0; i < EU_QUEUE_WORKERS; i++) {
        struct place_timer *pt = event_get_callback_arg(p->list[i].timer);
        event_free(p->list[i].timer);
        free(pt);
    }
    free(p);
}

/* Makes p's timer for worker index fire by due (eu_queue_now_ms() clock). */
static void
place_arm(struct eu_queue_place *p, int index, int64_t due)
{
    if (p->qs->stopping || p->list[index].claiming)
        return; /* a claim re-arms when it returns */
    if (p->list[index].timer_ms <= due)
        return;
    int64_t delay = due - eu_queue_now_ms();
    if (delay < 0)
        delay = 0;
    p->list[index].timer_ms = due;
    struct timeval tv = {(time_t)(delay / 1000), (suseconds_t)(delay % 1000) * 1000};
    evtimer_add(p->list[index].timer, &tv);
}

/* Arms p's timer for index at its list's earliest due time (if any). */
static void
place_rearm(struct eu_queue_place *p, int index)
{
    int64_t first = NONE;
    for (struct eu_queue_worker *w = p->list[index].head; w; w = w->next)
        if (w->due_ms < first)
            first = w->due_ms;
    if (first != NONE)
        place_arm(p, index, first);
}

static void
unlist(struct eu_queue_worker *w)
{
    struct eu_queue_place *p = w->place;
    if (!p)
        return;
    if (w->prev)
        w->prev->next = w->next;
    else
        p->list[w->index].head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        p->list[w->index].tail = w->prev;
    w->prev = w->next = NULL;
    w->place = NULL;
}

/* The tenant is busy with its worker's work: what falls due now waits for
 * the end of its turn. */
static bool
worker_busy(const struct eu_queue_worker *w)
{
    return w->ready || (w->index < EU_QUEUE_MAX && w->q->state != EU_QUEUE_TURN_IDLE);
}

/* Something of w's falls due at due (eu_queue_now_ms() clock): list w (or move it
 * earlier) and make its placement's timer fire by then. */
static void
worker_due_at(struct eu_queue_worker *w, int64_t due)
{
    if (worker_busy(w)) {
        if (due < w->deferred_ms)
            w->deferred_ms = due;
        return;
    }
    if (w->place) {
        if (w->due_ms <= due)
            return;
        w->due_ms = due;
    } else {
        struct eu_queue_place *p = place_of(w->q->qs, w->q->t);
        w->place = p;
        w->due_ms = due;
        w->prev = p->list[w->index].tail;
        w->next = NULL;
        if (w->prev)
            w->prev->next = w;
        else
            p->list[w->index].head = w;
        p->list[w->index].tail = w;
    }
    place_arm(w->place, w->index, due);
}

/* Due in delay_ms (0: now). */
void
eu_queue_worker_arm(struct eu_queue_worker *w, int64_t delay_ms)
{
    worker_due_at(w, eu_queue_now_ms() + (delay_ms > 0 ? delay_ms : 0));
}

/* Arms w for an item due in next_ms; negative (none known): w sleeps until
 * woken, or until the placement poll finds something. */
static void
worker_arm_next(struct eu_queue_worker *w, int64_t next_ms)
{
    if (next_ms >= 0)
        eu_queue_worker_arm(w, next_ms);
}

/* The turn is over: what became due meanwhile is listed now. */
static void
worker_undefer(struct eu_queue_worker *w)
{
    int64_t due = w->deferred_ms;
    w->deferred_ms = NONE;
    if (due != NONE && !worker_busy(w))
        worker_due_at(w, due);
    else if (due != NONE)
        w->deferred_ms = due;
}

static void claim(struct eu_queue_place *p, int index, struct eu_queue_worker **due, int n);

static void
on_place_timer(evutil_socket_t fd, short what, void *arg)
{
    struct place_timer *pt = arg;
    struct eu_queue_place *p = pt->p;
    int index = pt->index;
    p->list[index].timer_ms = NONE;
    if (p->qs->stopping)
        return;
    int64_t now = eu_queue_now_ms() + SLACK_MS;
    if (index >= EU_QUEUE_MAX) {
        /* A task: each due tenant runs it in its turn, on its connection. */
        struct eu_queue_worker *next;
        for (struct eu_queue_worker *w = p->list[index].head; w; w = next) {
            next = w->next;
            if (w->due_ms > now)
                continue;
            unlist(w);
            if (!does_work(w->q->t, true))
                continue; /* the poll finds it again if it works again */
            w->ready = true;
            want_turn(w->q);
        }
        place_rearm(p, index);
        return;
    }
    /* A queue: claim for the due tenants that longest wait, in one
     * statement; they go to the back of the list when listed again. */
    struct eu_queue_worker *due[CLAIM_TENANTS];
    int n = 0;
    struct eu_queue_worker *next;
    for (struct eu_queue_worker *w = p->list[index].head; w && n < CLAIM_TENANTS; w = next) {
        next = w->next;
        if (w->due_ms > now)
            continue;
        unlist(w);
        if (w->q->t->removed)
            continue;
        if (worker_busy(w)) {
            w->deferred_ms = now;
            continue;
        }
        due[n++] = w;
    }
    if (n)
        claim(p, index, due, n);
    else
        place_rearm(p, index);
}

/* ---- turns ---- */

static void
pump_later(struct eu_queues *qs)
{
    event_active(qs->pump, EV_TIMEOUT, 0);
}

static bool
has_ready(const struct eu_queue *q)
{
    for (int i = 0; i < EU_QUEUE_WORKERS; i++)
        if (q->w[i].ready)
            return true;
    return false;
}

void
eu_queue_drop_batch(struct eu_queue *q)
{
    /* Their locks expire and they run again, here or elsewhere. */
    while (q->ibatch < q->nbatch)
        eu_queue_job_free(q->batch[q->ibatch++]);
    q->nbatch = q->ibatch = 0;
}

static void
want_turn(struct eu_queue *q)
{
    struct eu_queues *qs = q->qs;
    if (q->state != EU_QUEUE_TURN_IDLE || qs->stopping)
        return;
    if (!does_work(q->t, false)) {
        /* A suspended instance does no background work, nor one whose rows
         * are being copied elsewhere (a reload during a move may have put
         * its state back to active); the poll finds its work again later,
         * and claimed jobs run again when their locks pass. */
        eu_queue_drop_batch(q);
        for (int i = 0; i < EU_QUEUE_WORKERS; i++) {
            q->w[i].ready = false;
            q->w[i].deferred_ms = NONE;
        }
        return;
    }
    eu_tenant_ref(q->t); /* the turn's */
    q->state = EU_QUEUE_TURN_WAITING;
    q->wait_next = NULL;
    if (qs->wait_tail)
        qs->wait_tail->wait_next = q;
    else
        qs->wait_head = q;
    qs->wait_tail = q;
    pump_later(qs);
}

static void
on_turn_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct eu_queue *q = arg;
    eu_queue_log_context(q);
    if (!conn) {
        eu_log_warn("queue", "no connection for background work: %s",
                    st == EU_DB_TIMEOUT ? "timeout" : "database unavailable");
        eu_queue_drop_batch(q);
        for (int i = 0; i < EU_QUEUE_WORKERS; i++) {
            if (q->w[i].ready) {
                q->w[i].ready = false;
                q->w[i].deferred_ms = eu_queue_now_ms() + EU_QUEUE_FAIL_RETRY_MS;
            }
        }
        eu_queue_turn_end(q);
        return;
    }
    q->conn = conn;
    eu_queue_step(q);
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
        q->state = EU_QUEUE_TURN_RUNNING;
        if (qs->stopping || q->t->removed) {
            eu_queue_turn_end(q);
            continue;
        }
        eu_db_pool_acquire(eu_tenant_pool(qs->app->registry, q->t), on_turn_conn, q);
    }
    eu_log_set_context(NULL, NULL);
}

/* Gives the connection and the turn back. May free q (and its tenant). */
void
eu_queue_turn_end(struct eu_queue *q)
{
    struct eu_queues *qs = q->qs;
    if (q->conn) {
        eu_db_conn_release(q->conn);
        q->conn = NULL;
    }
    qs->running--;
    q->state = EU_QUEUE_TURN_IDLE;
    pump_later(qs);
    if (!qs->stopping && !q->t->removed) {
        /* Work left: queue again behind the tenants already waiting (a new
         * reference, taken before this turn's goes), and list what fell
         * due meanwhile behind the tenants already listed. */
        if (has_ready(q))
            want_turn(q);
        for (int i = 0; i < EU_QUEUE_WORKERS; i++)
            worker_undefer(&q->w[i]);
    }
    eu_log_set_context(NULL, NULL);
    eu_tenant_unref(q->t);
}

static void task_start(struct eu_queue *q, struct eu_queue_worker *w);

/* Runs the next ready worker of the turn, or ends it. */
void
eu_queue_step(struct eu_queue *q)
{
    if (q->qs->stopping || q->t->removed) {
        eu_queue_drop_batch(q);
        eu_queue_turn_end(q);
        return;
    }
    for (int i = 0; i < EU_QUEUE_WORKERS; i++) {
        struct eu_queue_worker *w = &q->w[(q->rr + i) % EU_QUEUE_WORKERS];
        if (!w->ready)
            continue;
        q->rr = (w->index + 1) % EU_QUEUE_WORKERS;
        if (w->index < EU_QUEUE_MAX) {
            eu_queue_job_run_next(q, w);
        } else {
            w->ready = false;
            if (!does_work(q->t, true))
                continue; /* readied before its tenant's farewell */
            task_start(q, w);
        }
        return;
    }
    eu_queue_turn_end(q);
}

/* ---- claiming ---- */

enum {
    QUEUE_CLAIM,
    QUEUE_INSERT,
    QUEUE_POLL,
};

const struct eu_sql eu_queue_sql[] = {
    /*
     * The claimer: for each tenant in $1 (in that order), locks up to $3
     * due jobs of queue $2 for $4 seconds (counting the attempt now, so a
     * job that crashes its process still dies in the end) and returns them
     * as (tenant, id, kind, payload, attempts); then one row per tenant
     * that got fewer than $3: (tenant, NULL, ..., ms until its earliest job
     * left behind can be claimed, or NULL). Each tenant's jobs come from its
     * own index range (jobs_due_at, migration 0076), so one tenant's
     * backlog costs the others nothing, and ordered by when they can next
     * be claimed, so the jobs other turns hold are past the range rather
     * than stepped over in it. ANY(ARRAY(...)) makes the locking subquery
     * run exactly once.
     */
    [QUEUE_CLAIM] =
        {"queue.claim",
         "WITH c AS (UPDATE jobs j SET locked_until = now() + make_interval(secs => $4::float8),"
         " attempts = j.attempts + 1, updated_at = now()"
         " WHERE j.tenant_id = ANY ($1::bigint[]) AND j.id = ANY (ARRAY("
         "  SELECT x.id FROM unnest($1::bigint[]) AS t(id) CROSS JOIN LATERAL"
         "  (SELECT d.id FROM jobs d WHERE d.tenant_id = t.id AND d.queue = $2"
         "   AND d.state = 'ready'"
         "   AND greatest(d.run_at, coalesce(d.locked_until, d.run_at)) <= now()"
         "   ORDER BY greatest(d.run_at, coalesce(d.locked_until, d.run_at)), d.id"
         "   LIMIT $3::int FOR UPDATE SKIP LOCKED) x))"
         " RETURNING j.tenant_id, j.id, j.kind, j.payload, j.attempts)"
         " SELECT c.tenant_id::text, c.id::text, c.kind, c.payload::text, c.attempts::bigint"
         " FROM c"
         " UNION ALL"
         " SELECT t.id::text, NULL, NULL, NULL, (SELECT (extract(epoch FROM"
         "  min(greatest(n.run_at, coalesce(n.locked_until, n.run_at))) - now()) * 1000)::bigint"
         "  FROM jobs n WHERE n.tenant_id = t.id AND n.queue = $2 AND n.state = 'ready'"
         "  AND n.id NOT IN (SELECT c.id FROM c WHERE c.tenant_id = t.id))"
         " FROM unnest($1::bigint[]) AS t(id)"
         " WHERE (SELECT count(*) FROM c WHERE c.tenant_id = t.id) < $3::int",
         .cross_tenant = true},
    /* $2 queue name, $3 kind, $4 payload JSON text, $5 delay in seconds,
     * $6 dedupe key or NULL; returns the id, or nothing for a duplicate of
     * a job still waiting or running. A dead job of the same key comes
     * back to life with the new payload: the key dedupes work to do, and
     * what gave up (an inbox activity whose object's server was down) is
     * worth doing when it is asked for again. */
    [QUEUE_INSERT] = {"queue.insert",
                      "INSERT INTO jobs AS j (tenant_id, queue, kind, payload, run_at, dedupe_key)"
                      " VALUES ($1, $2, $3, $4::jsonb, now() + make_interval(secs => $5::float8),"
                      " $6) ON CONFLICT (tenant_id, dedupe_key) DO UPDATE SET state = 'ready',"
                      " queue = EXCLUDED.queue, kind = EXCLUDED.kind, payload = EXCLUDED.payload,"
                      " run_at = EXCLUDED.run_at, attempts = 0, locked_until = NULL,"
                      " last_error = NULL, updated_at = now() WHERE j.state = 'dead'"
                      " RETURNING id::text"},
    /*
     * The safety poll: what falls due within $1 seconds, across every
     * tenant of one placement: (tenant, worker name, ms until due). $2 is
     * the suspended accounts' retention. Indexed by migrations/tenant/0012
     * and 0076 (the due time alone, not led by tenant_id).
     */
    [QUEUE_POLL] =
        {"queue.poll",
         "SELECT tenant_id, 'q:' || queue, (extract(epoch FROM min(greatest(run_at,"
         " coalesce(locked_until, run_at))) - now()) * 1000)::bigint FROM jobs"
         " WHERE state = 'ready' AND greatest(run_at, coalesce(locked_until, run_at))"
         "  < now() + make_interval(secs => $1::float8) GROUP BY tenant_id, queue"
         " UNION ALL SELECT tenant_id, 't:scheduled_statuses',"
         " (extract(epoch FROM min(scheduled_at) - now()) * 1000)::bigint"
         " FROM scheduled_statuses"
         " WHERE scheduled_at < now() + make_interval(secs => $1::float8) GROUP BY tenant_id"
         " UNION ALL SELECT tenant_id, 't:polls', (extract(epoch FROM min(expires_at) - now())"
         " * 1000)::bigint FROM polls WHERE closed_at IS NULL"
         " AND expires_at < now() + make_interval(secs => $1::float8) GROUP BY tenant_id"
         " UNION ALL SELECT a.tenant_id, 't:account_cleanup', (extract(epoch FROM"
         " min(a.suspended_at) + make_interval(secs => $2::float8) - now()) * 1000)::bigint"
         " FROM accounts a WHERE a.suspended_at IS NOT NULL AND a.suspended_at"
         "  < now() - make_interval(secs => $2::float8) + make_interval(secs => $1::float8)"
         " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = a.tenant_id"
         "  AND j.dedupe_key = 'purge_account:' || a.id) GROUP BY a.tenant_id"
         /* unattached uploads a day old (src/media/cleanup.c) */
         " UNION ALL SELECT tenant_id, 't:media_cleanup', (extract(epoch FROM min(created_at)"
         " + interval '1 day' - now()) * 1000)::bigint FROM media_attachments"
         " WHERE status_id IS NULL AND scheduled_status_id IS NULL"
         " AND created_at < now() - interval '1 day' + make_interval(secs => $1::float8)"
         " GROUP BY tenant_id",
         .cross_tenant = true},
    {0},
};

/* One claim statement in flight: the tenants it claims for, by id (a tenant
 * may be freed meanwhile). */
struct claim {
    struct eu_queue_place *p;
    int index;
    int n;
    int64_t ids[CLAIM_TENANTS];
};

/* The queue of the tenant called id in the claim's placement, or NULL when
 * it is gone, moving or elsewhere now. */
static struct eu_queue *
claimed_queue(const struct claim *c, const char *id)
{
    struct eu_tenant *t = eu_registry_find_id(c->p->qs->app->registry, strtoll(id, NULL, 10));
    if (!t || !does_work(t, false))
        return NULL;
    return queue_of(t);
}

static void
on_claimed(PGresult *res, enum eu_db_status st, void *arg)
{
    struct claim *c = arg;
    struct eu_queue_place *p = c->p;
    p->list[c->index].claiming = false;
    if (p->qs->stopping) {
        free(c);
        return;
    }
    if (st != EU_DB_OK) {
        eu_log_warn("queue", "cannot claim jobs of queue '%s': %s", queue_names[c->index],
                    res ? PQresultErrorMessage(res) : "database unavailable");
        for (int i = 0; i < c->n; i++) {
            struct eu_tenant *t = eu_registry_find_id(p->qs->app->registry, c->ids[i]);
            if (t && !t->removed && queue_of(t))
                eu_queue_worker_arm(&queue_of(t)->w[c->index], EU_QUEUE_FAIL_RETRY_MS);
        }
        place_rearm(p, c->index);
        free(c);
        return;
    }
    /* Jobs first, so the tenants that got some are busy (ready) by the
     * time their next due times are read below. */
    for (int i = 0; i < PQntuples(res); i++) {
        if (PQgetisnull(res, i, 1))
            continue;
        struct eu_queue *q = claimed_queue(c, PQgetvalue(res, i, 0));
        if (!q || q->nbatch >= EU_QUEUE_CLAIM_BATCH)
            continue; /* its locks expire and the job runs again later */
        struct eu_job *job = eu_xcalloc(1, sizeof(*job));
        job->q = q;
        job->w = &q->w[c->index];
        snprintf(job->id, sizeof(job->id), "%s", PQgetvalue(res, i, 1));
        job->kind = eu_xstrdup(PQgetvalue(res, i, 2));
        job->payload = json_loads(PQgetvalue(res, i, 3), JSON_DECODE_ANY, NULL);
        if (!json_is_object(job->payload)) {
            json_decref(job->payload);
            job->payload = json_object();
        }
        job->attempt = atoi(PQgetvalue(res, i, 4));
        eu_queue_job_hold(job);
        q->batch[q->nbatch++] = job;
    }
    for (int i = 0; i < c->n; i++) {
        struct eu_tenant *t = eu_registry_find_id(p->qs->app->registry, c->ids[i]);
        struct eu_queue *q = t && !t->removed ? queue_of(t) : NULL;
        if (!q || q->nbatch == 0 || q->w[c->index].ready)
            continue;
        struct eu_queue_worker *w = &q->w[c->index];
        eu_queue_log_context(q);
        eu_log_debug("queue", "claimed %d jobs of queue '%s'", q->nbatch, queue_names[c->index]);
        /* A full batch: probably more waiting, after the others' turn. */
        if (q->nbatch >= EU_QUEUE_CLAIM_BATCH && w->deferred_ms > eu_queue_now_ms())
            w->deferred_ms = eu_queue_now_ms();
        w->ready = true;
        want_turn(q); /* runs in the turn under way, if there is one */
    }
    /* Fewer than a batch: when each tenant's next job can be claimed. */
    for (int i = 0; i < PQntuples(res); i++) {
        if (!PQgetisnull(res, i, 1) || PQgetisnull(res, i, 4))
            continue;
        struct eu_queue *q = claimed_queue(c, PQgetvalue(res, i, 0));
        if (!q)
            continue;
        int64_t next = strtoll(PQgetvalue(res, i, 4), NULL, 10);
        eu_queue_worker_arm(&q->w[c->index], next <= 0 ? RETRY_SOON_MS : next);
    }
    eu_log_set_context(NULL, NULL);
    place_rearm(p, c->index);
    free(c);
}

/* Claims due jobs of queue index for the tenants of due (unlisted, idle),
 * on the placement's own pool. */
static void
claim(struct eu_queue_place *p, int index, struct eu_queue_worker **due, int n)
{
    const struct eu_config *cfg = p->qs->app->cfg;
    struct claim *c = eu_xcalloc(1, sizeof(*c));
    c->p = p;
    c->index = index;
    c->n = n;
    /* {id,id,...}: at most CLAIM_TENANTS ids of 20 characters. */
    char ids[CLAIM_TENANTS * 21 + 3], *o = ids;
    *o++ = '{';
    for (int i = 0; i < n; i++) {
        c->ids[i] = due[i]->q->t->id;
        o += snprintf(o, sizeof(ids) - (size_t)(o - ids), "%s%lld", i ? "," : "",
                      (long long)c->ids[i]);
    }
    snprintf(o, sizeof(ids) - (size_t)(o - ids), "}");
    char lim[16], lock[16];
    snprintf(lim, sizeof(lim), "%d", EU_QUEUE_CLAIM_BATCH);
    snprintf(lock, sizeof(lock), "%d", cfg->job_lock_s);
    const char *params[] = {ids, queue_names[index], lim, lock};
    p->list[index].claiming = true;
    eu_db_pool_stmt(p->pool, &eu_queue_sql[QUEUE_CLAIM], 4, params, on_claimed, c);
}

/* ---- timed tasks ---- */

static void
task_start(struct eu_queue *q, struct eu_queue_worker *w)
{
    q->run.q = q;
    q->run.w = w;
    eu_queue_log_context(q);
    eu_task_kinds[w->index - EU_QUEUE_MAX].run(&q->run);
}

void
eu_task_run_done(struct eu_task_run *run, int64_t next_due_ms)
{
    worker_arm_next(run->w, next_due_ms);
    eu_queue_step(run->q);
}

void
eu_task_run_fail(struct eu_task_run *run)
{
    eu_queue_worker_arm(run->w, EU_QUEUE_FAIL_RETRY_MS);
    eu_queue_step(run->q);
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

/* A tenant's workers may go while it sleeps only when none is listed, ready
 * or deferred: each holds the due time of something known. */
static bool
queue_is_idle(const void *data)
{
    const struct eu_queue *q = data;
    if (q->state != EU_QUEUE_TURN_IDLE || q->nbatch || q->detached)
        return false;
    for (int i = 0; i < EU_QUEUE_WORKERS; i++)
        if (q->w[i].place || q->w[i].ready || q->w[i].deferred_ms != NONE)
            return false;
    return true;
}

static void
queue_dispose(void *data)
{
    eu_queue_free(data);
}

static const struct eu_tenant_slot_ops queue_ops = {queue_dispose, queue_is_idle};

void
eu_queue_start(struct eu_tenant *t)
{
    if (queue_of(t) || !current || current->stopping)
        return;
    struct eu_queue *q = eu_xcalloc(1, sizeof(*q));
    q->qs = current;
    q->t = t;
    for (int i = 0; i < EU_QUEUE_WORKERS; i++) {
        struct eu_queue_worker *w = &q->w[i];
        w->q = q;
        w->index = i;
        w->deferred_ms = NONE;
    }
    eu_tenant_slot_set(t, EU_SLOT_QUEUE, q, &queue_ops);
}

void
eu_queue_free(struct eu_queue *q)
{
    if (!q)
        return;
    /* A queue waiting for or holding a turn holds a tenant reference, so it
     * is not in a turn here: only its places on due lists to leave. */
    for (int i = 0; i < EU_QUEUE_WORKERS; i++)
        unlist(&q->w[i]);
    eu_queue_drop_batch(q);
    free(q);
}

void
eu_queue_wake(struct eu_tenant *t, enum eu_queue_id queue, int64_t delay_ms)
{
    if ((unsigned)queue >= EU_QUEUE_MAX)
        return;
    eu_queue_start(t);
    if (queue_of(t))
        eu_queue_worker_arm(&queue_of(t)->w[queue], delay_ms);
}

bool
eu_queue_busy(struct eu_tenant *t)
{
    struct eu_queue *q = queue_of(t);
    return q && (q->state != EU_QUEUE_TURN_IDLE || q->detached > 0);
}

void
eu_queue_task_wake(struct eu_tenant *t, enum eu_task_id task, int64_t delay_ms)
{
    if ((unsigned)task >= EU_TASK_MAX)
        return;
    eu_queue_start(t);
    if (queue_of(t))
        eu_queue_worker_arm(&queue_of(t)->w[EU_QUEUE_MAX + task], delay_ms);
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
    eu_db_pool_stmt(eu_tenant_pool(app->registry, t), &eu_queue_sql[QUEUE_INSERT], 5, params,
                    on_enqueued, e);
    return 0;
}

/* ---- the placements' safety poll ---- */

static void arm_poll(struct eu_queues *qs, int64_t delay_ms);

/* The worker index named in the poll's second column, or -1. */
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
            eu_queue_worker_arm(&queue_of(t)->w[w], strtoll(PQgetvalue(res, i, 2), NULL, 10));
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
    if (t->state == EU_TENANT_DELETING && !t->farewell)
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
    eu_db_pool_stmt(pool, &eu_queue_sql[QUEUE_POLL], 2, params, on_polled, r->qs);
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
    eu_queue_jobs_start(qs);
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
    eu_queue_jobs_stop(qs);
    evtimer_del(qs->poll);
    for (struct eu_queue_place *p = qs->places; p; p = p->next)
        for (int i = 0; i < EU_QUEUE_WORKERS; i++)
            evtimer_del(p->list[i].timer);
    while (qs->wait_head) {
        struct eu_queue *q = qs->wait_head;
        qs->wait_head = q->wait_next;
        if (!qs->wait_head)
            qs->wait_tail = NULL;
        q->state = EU_QUEUE_TURN_IDLE;
        eu_queue_drop_batch(q);
        eu_tenant_unref(q->t);
    }
}

int
eu_queues_active(const struct eu_queues *qs)
{
    /* A placement poll under way counts: its statement holds a connection
     * (perhaps one still connecting) that a shutdown must let finish, or
     * the placement's pool cannot be freed. */
    return qs ? qs->running + qs->detached + qs->polls_running : 0;
}

void
eu_queues_free(struct eu_queues *qs)
{
    if (!qs)
        return;
    eu_queues_stop(qs);
    if (current == qs)
        current = NULL;
    /* The registry (and with it every tenant's workers) is freed first, so
     * the due lists hold only tenants a statement under way still holds. */
    while (qs->places) {
        struct eu_queue_place *p = qs->places;
        qs->places = p->next;
        place_free(p);
    }
    event_free(qs->pump);
    event_free(qs->poll);
    eu_queue_jobs_free(qs);
    free(qs);
}
