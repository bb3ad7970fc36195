/*
 * Shared by the two files of the scheduler, and nobody else: queue.c
 * (turns, the placements' due lists and the claimer, timed tasks, the
 * safety poll, enqueueing) and job.c (a claimed job from its run to its
 * end: detaching and waiting, recording its end, the batched deletes of
 * detached successes, and the heartbeat that keeps held jobs locked).
 * They meet at a tenant's struct eu_queue and the jobs it claimed.
 */
#ifndef EUNHA_QUEUE_QUEUE_INTERNAL_H
#define EUNHA_QUEUE_QUEUE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "eunha/queue.h"

struct eu_app;
struct eu_db_conn;
struct eu_tenant;
struct event;

/* Jobs locked per tenant by one claim, and run in one turn: few enough that
 * a crash re-runs little and the other tenants soon get their turn. */
#define EU_QUEUE_CLAIM_BATCH 10
/* After the database failed. */
#define EU_QUEUE_FAIL_RETRY_MS 30000
/* A tenant's workers: one per job queue, then one per timed task. */
#define EU_QUEUE_WORKERS (EU_QUEUE_MAX + EU_TASK_MAX)

struct eu_queue_place; /* one placement's due lists (queue.c) */

struct eu_queue_worker {
    struct eu_queue *q;
    int index; /* < EU_QUEUE_MAX: a job queue; else EU_QUEUE_MAX + task id */
    /* On place's due list for this worker while something is known due. */
    struct eu_queue_place *place;
    struct eu_queue_worker *prev, *next;
    int64_t due_ms; /* while listed (eu_queue_now_ms() clock) */
    /* Known due while the tenant is busy (a turn, or a batch not run yet):
     * listed when the turn ends. INT64_MAX when nothing. */
    int64_t deferred_ms;
    bool ready; /* a task to run, or a claimed batch: waits for the turn */
};

struct eu_job {
    struct eu_queue *q;
    struct eu_queue_worker *w;
    char id[24];
    char *kind;
    json_t *payload;
    int attempt;
    bool failed;
    bool detached;             /* eu_job_detach(): ends on the tenant's pool, off the turn */
    bool waiting;              /* eu_job_waiting(): detached, not counted in detached_in */
    eu_job_abandon_cb abandon; /* eu_job_on_abandon(), for eu_queues_abandon() */
    void *abandon_arg;
    /* On the process's list of held jobs from claim to
     * eu_queue_job_free(), which the heartbeat keeps locked. */
    struct eu_job *held_prev, *held_next;
    struct eu_job *done_next; /* on the list of successes to delete together */
};

struct eu_task_run {
    struct eu_queue *q;
    struct eu_queue_worker *w;
};

enum eu_queue_turn { EU_QUEUE_TURN_IDLE, EU_QUEUE_TURN_WAITING, EU_QUEUE_TURN_RUNNING };

struct eu_queue {
    struct eu_queues *qs;
    struct eu_tenant *t; /* borrowed: the tenant owns this */
    struct eu_queue_worker w[EU_QUEUE_WORKERS];
    enum eu_queue_turn state;
    struct eu_queue *wait_next;
    struct eu_db_conn *conn; /* held during a turn */
    int rr;                  /* round-robin start over workers */
    unsigned beat;           /* the heartbeat round that last extended its jobs */
    /* Claimed jobs not run yet, with the worker (queue) they came from. */
    struct eu_job *batch[EU_QUEUE_CLAIM_BATCH];
    int nbatch, ibatch;
    struct eu_task_run run;
    int detached;                  /* jobs detached from a turn, not yet recorded */
    int detached_in[EU_QUEUE_MAX]; /* the same, per queue (job.c's DETACH_MAX) */
};

struct eu_queues {
    struct eu_app *app;
    struct event *pump;
    struct event *poll; /* the placements' safety poll */
    int polls_running;  /* placement polls awaiting their answer */
    struct eu_queue *wait_head, *wait_tail;
    int running;
    bool stopping;
    struct eu_queue_place *places;
    int detached; /* over all tenants, for the drain */
    /* Every job this process has claimed and not yet freed (waiting in a
     * batch, running, or detached), and the timer that extends their
     * locks while the process lives. */
    struct eu_job *held;
    /* Detached jobs that succeeded, waiting for their DELETE (job.c's
     * DONE_BATCH), and the timer that sends it. */
    struct eu_job *done_head;
    int ndone;
    struct event *done_flush;
    struct event *heartbeat;
    unsigned beat; /* the heartbeat's round, to visit each queue once */
};

/* ------------------------------------------------------- queue.c, for job.c */

/* Names q's tenant in the log lines that follow. */
void eu_queue_log_context(const struct eu_queue *q);
/* Runs the next ready worker of q's turn, or ends the turn. */
void eu_queue_step(struct eu_queue *q);
/* Gives the connection and the turn back. May free q (and its tenant). */
void eu_queue_turn_end(struct eu_queue *q);
/* Frees q's claimed jobs not run yet: their locks expire and they run
 * again, here or elsewhere. */
void eu_queue_drop_batch(struct eu_queue *q);
/* Something of w's is due in delay_ms: lists w on its placement's due
 * list, or keeps the time for the end of its tenant's turn. */
void eu_queue_worker_arm(struct eu_queue_worker *w, int64_t delay_ms);

/* ------------------------------------------------------- job.c, for queue.c */

/* Runs the next job of q's batch (claimed for worker w), or goes on with
 * the turn once the batch is done. */
void eu_queue_job_run_next(struct eu_queue *q, struct eu_queue_worker *w);
/* Puts a job just claimed on the process's held list (the heartbeat's). */
void eu_queue_job_hold(struct eu_job *job);
/* Takes job off the held list and frees it. */
void eu_queue_job_free(struct eu_job *job);

/* Makes qs's heartbeat (armed now) and the timer of its batched deletes. */
void eu_queue_jobs_start(struct eu_queues *qs);
/* Sends the deletes waiting (left to their locks, qs being stopping) and
 * stops the heartbeat. */
void eu_queue_jobs_stop(struct eu_queues *qs);
/* Frees what eu_queue_jobs_start() made. */
void eu_queue_jobs_free(struct eu_queues *qs);

/* Milliseconds of the monotonic clock, the one due times are kept in. */
static inline int64_t
eu_queue_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
