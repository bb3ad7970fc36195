/*
 * Background work of a tenant: durable jobs and timed tasks (src/queue/).
 *
 * Jobs live in the placement's `jobs` table under the tenant's tenant_id
 * (migrations/tenant/0010_jobs.sql) and are claimed with FOR UPDATE SKIP
 * LOCKED, so several
 * processes may serve one tenant and a job runs once; a claim sets
 * locked_until, so the job of a worker that died runs again when that
 * passes. A failed job is retried with exponential backoff
 * ([workers] job_backoff_base_seconds, doubling, at most
 * job_backoff_max_seconds) and after job_max_attempts attempts stays in the
 * table as "dead" with its last error, for the admin API to show and retry.
 *
 * Each tenant has one worker per job queue and one per timed task, and
 * each placement one "next due" timer per queue and per task over the
 * workers of its tenants that have something due. A worker is woken at
 * once by eu_queue_wake() / eu_queue_task_wake() from this process, and
 * otherwise sleeps. Work another process added, or left from before a
 * start, is found by one poll per placement (at start, then every
 * [workers] queue_idle_poll_seconds +-10%): a single statement lists what
 * falls due across all the placement's tenants. An idle tenant costs no
 * timer, no transaction and no connection.
 *
 * Jobs are claimed per placement: one statement locks a batch for each of
 * many due tenants, the tenants that waited longest first, so one
 * tenant's backlog cannot starve another's single job. A tenant's claimed
 * jobs and due tasks run in a "turn" on one connection of its own pool,
 * given back after it, so background work never holds more than one of the
 * tenant's connections. At most [workers] max_running_jobs tenants take a
 * turn at once across the process; the rest wait in FIFO order.
 *
 * Everything here runs on the loop thread and never blocks.
 *
 * Adding a job kind: write a handler (eu_job_run_cb) and add a line to
 * eu_job_kinds[] in src/app/kinds.c. Adding a timed task (scheduled
 * statuses, polls): add a value to enum eu_task_id below, a line to
 * eu_task_kinds[] in src/app/kinds.c, and call eu_queue_task_wake() from
 * the code that creates or moves an item.
 */
#ifndef EUNHA_QUEUE_H
#define EUNHA_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/db.h"

struct eu_app;
struct eu_tenant;
struct eu_queue;
struct eu_db_conn;
struct json_t;

/* Job queues: one worker each per tenant. The jobs.queue column holds the
 * name (eu_queue_name()). */
enum eu_queue_id {
    EU_QUEUE_DEFAULT, /* "default": account purges, pings */
    /* "deliver": ActivityPub deliveries (src/ap/deliver.c), apart so a
     * burst of them does not hold back a tenant's other background work. */
    EU_QUEUE_DELIVER,
    /* "media": processing uploads (src/media/process_job.c), apart so a
     * burst of big images does not hold back deliveries or purges. */
    EU_QUEUE_MEDIA,
    EU_QUEUE_MAX
};

/* Timed tasks: one "next due" timer each per placement. */
enum eu_task_id {
    EU_TASK_ACCOUNT_CLEANUP, /* purges suspended accounts after the retention */
    EU_TASK_SCHEDULED,       /* publishes scheduled statuses (src/api/scheduled.c) */
    EU_TASK_POLLS,           /* closes expired polls and notifies (src/social/polls.c) */
    EU_TASK_MEDIA_CLEANUP,   /* removes unattached uploads a day old (src/media/cleanup.c) */
    EU_TASK_TRENDS,          /* rescores trends after new activity (src/social/trends_task.c) */
    EU_TASK_MAX
};

/* ------------------------------------------------------------ the process */

struct eu_queues;

/*
 * Creates the process's scheduler over app (borrowed; its cfg and registry
 * are read at each use, so a SIGHUP's new config applies). There is one per
 * process: the registry starts tenants' workers through it without knowing
 * the app. Free with eu_queues_free() after the registry.
 */
struct eu_queues *eu_queues_new(struct eu_app *app);
/* Stops starting turns (for shutdown); turns under way finish their job. */
void eu_queues_stop(struct eu_queues *qs);
/* Lets go of every detached job that set an abandon callback
 * (eu_job_on_abandon()): the callback cancels what the job waits for, and
 * the job is left unrecorded, its lock to expire so it runs again here or
 * in another process. For shutdown, after eu_queues_stop(), once the
 * drain has given up waiting. */
void eu_queues_abandon(struct eu_queues *qs);
/* Tenants taking a turn now and placement polls awaiting their answer, for
 * the shutdown drain. */
int eu_queues_active(const struct eu_queues *qs);
void eu_queues_free(struct eu_queues *qs);

/* ------------------------------------------------------------- a tenant */

/*
 * Makes t's workers, unarmed (no database work), in its EU_SLOT_QUEUE slot.
 * Does nothing when they exist or when no scheduler exists (eunha migrate,
 * unit tests). The tenant frees them (eu_queue_free()) when it is freed or
 * goes dormant with none of them armed.
 */
void eu_queue_start(struct eu_tenant *t);
/* Frees a tenant's workers; called from the tenant's free. NULL is ignored. */
void eu_queue_free(struct eu_queue *q);

/*
 * Tells t's worker of queue that a job was enqueued in this process, due in
 * delay_ms (0: now). The worker wakes then unless it is due earlier anyway.
 * Call it after the inserting transaction committed. Starts t's workers if
 * needed.
 */
void eu_queue_wake(struct eu_tenant *t, enum eu_queue_id queue, int64_t delay_ms);
/* Whether t has a turn waiting or running in this process, or jobs
 * detached from one not yet recorded: its work may still write rows. */
bool eu_queue_busy(struct eu_tenant *t);

/*
 * Tells t's timed task that an item is due in delay_ms (0, or negative when
 * the due time is unknown or may have moved later: look now). A known due
 * time costs no database work until it comes; "look now" costs one run.
 */
void eu_queue_task_wake(struct eu_tenant *t, enum eu_task_id task, int64_t delay_ms);

/* "default", ...; NULL for a bad id. */
const char *eu_queue_name(enum eu_queue_id queue);
/* The id of a queue name, or -1. */
int eu_queue_id_from_name(const char *name);

/* ------------------------------------------------------------ enqueueing */

/* job_id is the new job's id ("" when dedupe_key matched an existing job,
 * NULL on failure); status as for eu_db_result_cb. */
typedef void (*eu_queue_enqueued_cb)(const char *job_id, int status, void *arg);

/*
 * Inserts a job of kind (a name in eu_job_kinds[]) with payload (JSON object
 * text; NULL means {}), due in delay_s seconds, through t's pool (a
 * connection of its own, not the workers'), then wakes the kind's worker.
 * dedupe_key may be NULL; a job with the same key already in the table
 * (waiting, running or dead) makes this a no-op. cb may be NULL; it runs
 * later, never from inside this call. Returns -1 (and calls nothing) when the
 * kind is unknown. Strings are copied.
 */
int eu_queue_enqueue(struct eu_app *app, struct eu_tenant *t, const char *kind, const char *payload,
                     int delay_s, const char *dedupe_key, eu_queue_enqueued_cb cb, void *arg);

/* ------------------------------------------------------------ job kinds */

/* A claimed job, lent to its handler until eu_job_done(). */
struct eu_job;
struct eu_sql;

/*
 * Runs one job. It may use eu_job_conn() (the tenant's worker connection,
 * outside any transaction; leave it that way) and must end, now or from a
 * later callback, with exactly one eu_job_done(). Handlers must be
 * idempotent: a job whose worker died after the work but before recording
 * it runs again.
 */
typedef void (*eu_job_run_cb)(struct eu_job *job);

struct eu_job_kind {
    const char *name; /* jobs.kind */
    enum eu_queue_id queue;
    eu_job_run_cb run;
};

/* The turn's connection; NULL once the job is detached. */
struct eu_db_conn *eu_job_conn(const struct eu_job *job);
/*
 * Lets the tenant's turn go on with its next jobs while this one waits on
 * something slow that needs no connection (a delivery's HTTP request), so
 * one hanging peer does not hold the tenant's other deliveries or a
 * database connection. Call it when the job is not using eu_job_conn(); from
 * then on the job has no connection of its own: use eu_job_stmt(). Its
 * eu_job_done() / eu_job_retry_in() is recorded on the tenant's pool, and
 * the tenant is kept (a reference) until then. Returns false, changing
 * nothing, when the tenant already has its cap of detached jobs of that
 * queue (32) or the process is stopping: the job then simply goes on in
 * the turn (or puts itself off, as inbox processing does).
 */
bool eu_job_detach(struct eu_job *job);
/*
 * What a detached job waiting on the network does if the process stops
 * first (eu_queues_abandon()): cancel what it waits for and free what it
 * holds, or, when a callback it cannot cancel is still due (work on the
 * CPU pool), leave that callback only to free. It must not touch the job
 * again; the queue lets it go unrecorded. Set it after eu_job_detach()
 * succeeded; a job that ends by itself soon (a statement, CPU work) needs
 * none, since the drain waits for it.
 */
typedef void (*eu_job_abandon_cb)(void *arg);
/*
 * A detached job says it is waiting in a line with its own bound (a
 * delivery queued behind its host's cap in the fetch client, which bounds
 * each tenant's waiting requests) or has left it. While waiting it does
 * not count against the tenant's detached jobs (32 per queue), so a host
 * that hangs, its cap down to one request, cannot take the room the
 * tenant's deliveries to healthy hosts need. A job still in its turn
 * (eu_job_detach() found no room) that starts waiting is detached by this,
 * room or not, as eu_job_detach() would: the turn goes on without it.
 * Returns whether the job is now detached (false, changing nothing, for a
 * job in its turn that stops waiting, or while the process stops).
 */
bool eu_job_waiting(struct eu_job *job, bool waiting);
void eu_job_on_abandon(struct eu_job *job, eu_job_abandon_cb cb, void *arg);
/* A statement for a job: on its turn's connection, or on the tenant's pool
 * once it is detached. */
void eu_job_stmt(struct eu_job *job, const struct eu_sql *sql, int n, const char *const *params,
                 eu_db_result_cb cb, void *arg);
struct eu_tenant *eu_job_tenant(const struct eu_job *job);
struct eu_app *eu_job_app(const struct eu_job *job);
/* The job id as decimal text; borrowed from the job. */
const char *eu_job_id(const struct eu_job *job);
/* The payload object (borrowed; never NULL). */
struct json_t *eu_job_payload(const struct eu_job *job);
/* 1 on the first attempt. */
int eu_job_attempt(const struct eu_job *job);
/*
 * Finishes the job: error NULL deletes it as done; otherwise error (copied;
 * the first 1000 bytes are kept) is recorded and the job retried with
 * backoff, or left dead after the last attempt. The job is freed.
 */
void eu_job_done(struct eu_job *job, const char *error);
/*
 * Finishes a failed job whose kind keeps its own retry policy (deliveries
 * follow Mastodon's): error is recorded as by eu_job_done(), and the job
 * runs again in delay_s seconds, or, when give_up, stays dead now. The job
 * is freed.
 */
void eu_job_retry_in(struct eu_job *job, const char *error, int delay_s, bool give_up);

/* ------------------------------------------------------------ timed tasks */

/* One run of a timed task for one tenant, lent until eu_task_run_done(). */
struct eu_task_run;

/*
 * Does what is due now on eu_task_run_conn() (usually one statement that
 * also returns when the next item falls due), then calls eu_task_run_done()
 * with the delay until that item, or eu_task_run_fail().
 */
typedef void (*eu_task_run_cb)(struct eu_task_run *run);

struct eu_task_kind {
    const char *name; /* for logs */
    eu_task_run_cb run;
};

struct eu_db_conn *eu_task_run_conn(const struct eu_task_run *run);
struct eu_tenant *eu_task_run_tenant(const struct eu_task_run *run);
struct eu_app *eu_task_run_app(const struct eu_task_run *run);
/* next_due_ms: milliseconds until the next item is due, or negative when
 * nothing is waiting (the task then sleeps until woken or polled). */
void eu_task_run_done(struct eu_task_run *run, int64_t next_due_ms);
/* The run failed (logged by the caller); it is tried again in a while. */
void eu_task_run_fail(struct eu_task_run *run);

/* ------------------------------------------------- the tables of kinds */

/*
 * Every job kind this version knows, and the timed tasks indexed by enum
 * eu_task_id. They name handlers of every room (deliveries, inbox
 * processing, media, polls), so the wiring defines them
 * (src/app/kinds.c), not the queue. A job of any other kind (one written by
 * a newer version) fails and ends dead.
 */
extern const struct eu_job_kind eu_job_kinds[];
extern const size_t eu_job_kinds_count;
extern const struct eu_task_kind eu_task_kinds[EU_TASK_MAX];

/* The kind called name, or NULL. */
const struct eu_job_kind *eu_job_kind_find(const char *name);

/* The queue's own handlers (src/queue/accounts.c, ping.c), for the tables. */
void eu_queue_purge_account_run(struct eu_job *job);
void eu_queue_account_cleanup_run(struct eu_task_run *run);
void eu_queue_ping_run(struct eu_job *job);

#endif
