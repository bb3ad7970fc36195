/*
 * The CPU pool: a fixed set of threads for expensive pure computation
 * (argon2id, RSA, image work) so the event loop never blocks on it. Work runs
 * on a pool thread; its completion runs back on the loop thread.
 *
 * Each job names its tenant (0: the process's own work). Jobs wait in one
 * queue per tenant and a free thread takes from the queue whose last turn
 * is the oldest, so tenants share the threads in turn: one tenant's burst
 * waits behind itself, and another tenant's job starts after at most one
 * job of each busier tenant per thread. Within a tenant, jobs start in the
 * order they were submitted.
 */
#ifndef EUNHA_CPUPOOL_H
#define EUNHA_CPUPOOL_H

#include <stdint.h>

struct event_base;
struct eu_cpupool;

/* Runs on a pool thread: must not touch the loop, tenants or requests. */
typedef void (*eu_cpupool_work_cb)(void *arg);
/* Runs on the loop thread after work finished. */
typedef void (*eu_cpupool_done_cb)(void *arg);

/* Starts nthreads threads. Returns a pool freed with eu_cpupool_free(). */
struct eu_cpupool *eu_cpupool_new(struct event_base *base, int nthreads);
/* Queues work for tenant (0: the process's own); done runs later on the
 * loop, never from inside this call. */
void eu_cpupool_submit_for(struct eu_cpupool *pool, int64_t tenant, eu_cpupool_work_cb work,
                           eu_cpupool_done_cb done, void *arg);
/* eu_cpupool_submit_for() tenant 0, for work no tenant asked for (or whose
 * tenant is not known yet). */
void eu_cpupool_submit(struct eu_cpupool *pool, eu_cpupool_work_cb work, eu_cpupool_done_cb done,
                       void *arg);
/*
 * Like eu_cpupool_submit_for() for work a client can ask for at will (password
 * checks): refused (-1, nothing queued) when *owner already has owner_max
 * jobs submitted and not done, or the pool pool_max (0: no cap). *owner is
 * the submitter's count (a tenant's), moved here on the loop thread; it
 * must outlive the job. So one tenant's flood waits behind itself and is
 * answered 503, and another tenant's job queues behind at most its share.
 */
int eu_cpupool_try_submit(struct eu_cpupool *pool, int64_t tenant, int *owner, int owner_max,
                          int pool_max, eu_cpupool_work_cb work, eu_cpupool_done_cb done,
                          void *arg);
/* For shutdown, on the loop thread with the loop stopped: waits until every
 * job submitted so far has run and runs their completions, here. Returns
 * how many completions it ran (completions may submit more; call again
 * until 0). A NULL pool has none. */
int eu_cpupool_drain(struct eu_cpupool *pool);
/* Waits for queued work to finish, joins the threads, frees the pool. Pending
 * completions are run before it returns. */
void eu_cpupool_free(struct eu_cpupool *pool);

#endif
