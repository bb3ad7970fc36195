/*
 * The CPU pool. Jobs wait in one queue per tenant and the threads take the
 * queues in turn, so one tenant's heavy work (8K images) waits behind its
 * own and not in front of everyone's sign-ins. Completions go back to the
 * loop through an eventfd, so the loop needs no libevent thread support and
 * a burst of completions costs one wake-up.
 */
#include "eunha/cpupool.h"

#include <event2/event.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "eunha/log.h"
#include "eunha/mem.h"

struct queue;

struct job {
    struct job *next;
    eu_cpupool_work_cb work;
    eu_cpupool_done_cb done;
    void *arg;
    int *owner; /* the submitter's count of its jobs (eu_cpupool_try_submit), or NULL */
    struct queue *q;
};

/*
 * One tenant's jobs: those waiting, in order, and a count of those waiting
 * or running. It lives while that count is not zero, so a tenant whose one
 * job is running keeps the turn it was given (stamp) when more arrive.
 */
struct queue {
    int64_t tenant;
    struct job *head, *tail;
    uint64_t stamp; /* pool->turns when it last had a turn; 0: none yet */
    int pending;
    struct queue *next;
};

struct eu_cpupool {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* Every queue with jobs waiting or running. Looked through linearly:
     * it holds the tenants with work in the pool right now, which the
     * per-tenant caps of its submitters keep short. */
    struct queue *queues;
    uint64_t turns;
    int waiting; /* jobs in queues, not yet taken */
    struct job *done_head, *done_tail;
    bool stopping;
    int queued; /* jobs submitted and not yet done; loop thread only */
    int nthreads;
    pthread_t *threads;
    int efd;
    struct event *ev;
};

static void
push(struct job **head, struct job **tail, struct job *j)
{
    j->next = NULL;
    if (*tail)
        (*tail)->next = j;
    else
        *head = j;
    *tail = j;
}

/*
 * The next job, under the lock: the first of the queue whose last turn is
 * the oldest (a tenant that had none yet goes first). So a tenant with a
 * thousand images waiting has one turn in each round, like a tenant with
 * one sign-in: the sign-in runs after at most one image per thread, not
 * after the thousand.
 */
static struct job *
take(struct eu_cpupool *pool)
{
    struct queue *best = NULL;
    for (struct queue *q = pool->queues; q; q = q->next)
        if (q->head && (!best || q->stamp < best->stamp))
            best = q;
    if (!best)
        return NULL;
    struct job *j = best->head;
    best->head = j->next;
    if (!best->head)
        best->tail = NULL;
    best->stamp = ++pool->turns;
    pool->waiting--;
    return j;
}

/* A job of q is done, under the lock: q goes when it holds no more. */
static void
release(struct eu_cpupool *pool, struct queue *q)
{
    if (--q->pending > 0)
        return;
    for (struct queue **p = &pool->queues; *p; p = &(*p)->next) {
        if (*p == q) {
            *p = q->next;
            break;
        }
    }
    free(q);
}

static void *
thread_main(void *p)
{
    struct eu_cpupool *pool = p;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->waiting && !pool->stopping)
            pthread_cond_wait(&pool->cond, &pool->lock);
        struct job *j = take(pool);
        if (!j)
            break; /* stopping and drained */
        pthread_mutex_unlock(&pool->lock);
        j->work(j->arg);
        pthread_mutex_lock(&pool->lock);
        release(pool, j->q);
        j->q = NULL;
        push(&pool->done_head, &pool->done_tail, j);
        uint64_t one = 1;
        ssize_t w = write(pool->efd, &one, sizeof(one));
        (void)w; /* the counter only overflows after 2^64 writes */
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* Returns how many completions it ran. */
static int
run_done(struct eu_cpupool *pool)
{
    pthread_mutex_lock(&pool->lock);
    struct job *j = pool->done_head;
    pool->done_head = pool->done_tail = NULL;
    pthread_mutex_unlock(&pool->lock);
    int ran = 0;
    while (j) {
        struct job *next = j->next;
        ran++;
        pool->queued--;
        if (j->owner)
            (*j->owner)--;
        j->done(j->arg);
        free(j);
        j = next;
    }
    return ran;
}

static void
on_eventfd(evutil_socket_t fd, short what, void *arg)
{
    uint64_t n;
    ssize_t r = read(fd, &n, sizeof(n));
    (void)r;
    run_done(arg);
}

struct eu_cpupool *
eu_cpupool_new(struct event_base *base, int nthreads)
{
    struct eu_cpupool *pool = eu_xcalloc(1, sizeof(*pool));
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->cond, NULL);
    pool->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (pool->efd < 0) {
        eu_log_error("cpupool", "cannot create eventfd");
        abort();
    }
    pool->ev = event_new(base, pool->efd, EV_READ | EV_PERSIST, on_eventfd, pool);
    event_add(pool->ev, NULL);
    pool->nthreads = nthreads;
    pool->threads = eu_xcalloc((size_t)nthreads, sizeof(pthread_t));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* Hashing and decoding need little stack; keep idle threads cheap. */
    pthread_attr_setstacksize(&attr, 512 * 1024);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&pool->threads[i], &attr, thread_main, pool);
    pthread_attr_destroy(&attr);
    return pool;
}

static void
enqueue(struct eu_cpupool *pool, int64_t tenant, eu_cpupool_work_cb work, eu_cpupool_done_cb done,
        void *arg, int *owner)
{
    struct job *j = eu_xmalloc(sizeof(*j));
    j->work = work;
    j->done = done;
    j->arg = arg;
    j->owner = owner;
    pool->queued++;
    if (owner)
        (*owner)++;
    pthread_mutex_lock(&pool->lock);
    /* A new queue goes last, so tenants that have not had a turn yet
     * (stamp 0) get theirs in the order they came. */
    struct queue **p = &pool->queues;
    while (*p && (*p)->tenant != tenant)
        p = &(*p)->next;
    struct queue *q = *p;
    if (!q) {
        q = eu_xcalloc(1, sizeof(*q));
        q->tenant = tenant;
        *p = q;
    }
    j->q = q;
    q->pending++;
    push(&q->head, &q->tail, j);
    pool->waiting++;
    pthread_cond_signal(&pool->cond);
    pthread_mutex_unlock(&pool->lock);
}

void
eu_cpupool_submit(struct eu_cpupool *pool, eu_cpupool_work_cb work, eu_cpupool_done_cb done,
                  void *arg)
{
    enqueue(pool, 0, work, done, arg, NULL);
}

void
eu_cpupool_submit_for(struct eu_cpupool *pool, int64_t tenant, eu_cpupool_work_cb work,
                      eu_cpupool_done_cb done, void *arg)
{
    enqueue(pool, tenant, work, done, arg, NULL);
}

int
eu_cpupool_try_submit(struct eu_cpupool *pool, int64_t tenant, int *owner, int owner_max,
                      int pool_max, eu_cpupool_work_cb work, eu_cpupool_done_cb done, void *arg)
{
    if ((owner_max > 0 && *owner >= owner_max) || (pool_max > 0 && pool->queued >= pool_max))
        return -1;
    enqueue(pool, tenant, work, done, arg, owner);
    return 0;
}

int
eu_cpupool_drain(struct eu_cpupool *pool)
{
    int ran = 0;
    while (pool && pool->queued > 0) {
        struct pollfd pf = {.fd = pool->efd, .events = POLLIN};
        if (poll(&pf, 1, 100) > 0) {
            uint64_t n;
            ssize_t r = read(pool->efd, &n, sizeof(n));
            (void)r;
        }
        ran += run_done(pool);
    }
    return ran;
}

void
eu_cpupool_free(struct eu_cpupool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->cond);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    run_done(pool);
    event_free(pool->ev);
    close(pool->efd);
    pthread_cond_destroy(&pool->cond);
    pthread_mutex_destroy(&pool->lock);
    free(pool->threads);
    free(pool);
}
