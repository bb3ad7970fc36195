/*
 * The CPU pool. Completions go back to the loop through an eventfd, so the
 * loop needs no libevent thread support and a burst of completions costs one
 * wake-up.
 */
#include "eunha/cpupool.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "eunha/log.h"
#include "eunha/mem.h"

struct job {
    struct job *next;
    eu_cpupool_work_cb work;
    eu_cpupool_done_cb done;
    void *arg;
    int *owner; /* the submitter's count of its jobs (eu_cpupool_try_submit), or NULL */
};

struct eu_cpupool {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct job *todo_head, *todo_tail;
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

static void *
thread_main(void *p)
{
    struct eu_cpupool *pool = p;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->todo_head && !pool->stopping)
            pthread_cond_wait(&pool->cond, &pool->lock);
        struct job *j = pool->todo_head;
        if (!j)
            break; /* stopping and drained */
        pool->todo_head = j->next;
        if (!pool->todo_head)
            pool->todo_tail = NULL;
        pthread_mutex_unlock(&pool->lock);
        j->work(j->arg);
        pthread_mutex_lock(&pool->lock);
        push(&pool->done_head, &pool->done_tail, j);
        uint64_t one = 1;
        ssize_t w = write(pool->efd, &one, sizeof(one));
        (void)w; /* the counter only overflows after 2^64 writes */
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

static void
run_done(struct eu_cpupool *pool)
{
    pthread_mutex_lock(&pool->lock);
    struct job *j = pool->done_head;
    pool->done_head = pool->done_tail = NULL;
    pthread_mutex_unlock(&pool->lock);
    while (j) {
        struct job *next = j->next;
        pool->queued--;
        if (j->owner)
            (*j->owner)--;
        j->done(j->arg);
        free(j);
        j = next;
    }
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
enqueue(struct eu_cpupool *pool, eu_cpupool_work_cb work, eu_cpupool_done_cb done, void *arg,
        int *owner)
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
    push(&pool->todo_head, &pool->todo_tail, j);
    pthread_cond_signal(&pool->cond);
    pthread_mutex_unlock(&pool->lock);
}

void
eu_cpupool_submit(struct eu_cpupool *pool, eu_cpupool_work_cb work, eu_cpupool_done_cb done,
                  void *arg)
{
    enqueue(pool, work, done, arg, NULL);
}

int
eu_cpupool_try_submit(struct eu_cpupool *pool, int *owner, int owner_max, int pool_max,
                      eu_cpupool_work_cb work, eu_cpupool_done_cb done, void *arg)
{
    if ((owner_max > 0 && *owner >= owner_max) || (pool_max > 0 && pool->queued >= pool_max))
        return -1;
    enqueue(pool, work, done, arg, owner);
    return 0;
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
