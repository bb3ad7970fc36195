/*
 * Tests for the CPU pool's turns between tenants: with one tenant's queue
 * full of slow jobs, another tenant's job is the next to start; two busy
 * tenants alternate; a tenant's own jobs keep their order; a shutdown's
 * drain runs every completion, even one a completion queued. One thread and a
 * gate job that holds it, so the order is decided by the pool alone and no
 * timing is involved.
 */
#include <check.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/cpupool.h"

#define MAX_JOBS 32

/* What the jobs did, in the order their work ran (one pool thread). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool gate_started, gate_open;
static char order[MAX_JOBS][8];
static int started;
static int done_count;

static void
gate_work(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    gate_started = true;
    pthread_cond_broadcast(&cond);
    while (!gate_open)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

/* A fake slow job: it only records its name; the gate stands in for the
 * time a real one would take. */
static void
record_work(void *arg)
{
    pthread_mutex_lock(&lock);
    snprintf(order[started++], sizeof(order[0]), "%s", (const char *)arg);
    pthread_mutex_unlock(&lock);
}

static void
on_done(void *arg)
{
    (void)arg;
    done_count++;
}

static struct eu_cpupool *
start_gated(struct event_base *base, int64_t gate_tenant)
{
    gate_started = gate_open = false;
    started = done_count = 0;
    memset(order, 0, sizeof(order));
    struct eu_cpupool *pool = eu_cpupool_new(base, 1);
    eu_cpupool_submit_for(pool, gate_tenant, gate_work, on_done, NULL);
    pthread_mutex_lock(&lock);
    while (!gate_started)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return pool;
}

static void
open_gate_and_wait(struct event_base *base, int jobs)
{
    pthread_mutex_lock(&lock);
    gate_open = true;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    while (done_count < jobs)
        event_base_loop(base, EVLOOP_ONCE);
}

/* The order the work ran in, as "a1 b1 a2 ...". */
static const char *
order_text(char *out, size_t n)
{
    out[0] = '\0';
    for (int i = 0; i < started; i++) {
        if (i)
            strncat(out, " ", n - strlen(out) - 1);
        strncat(out, order[i], n - strlen(out) - 1);
    }
    return out;
}

START_TEST(test_other_tenant_runs_next)
{
    struct event_base *base = event_base_new();
    /* Tenant 1's first job holds the only thread; five more of its jobs
     * wait; then tenant 2 asks for one. */
    struct eu_cpupool *pool = start_gated(base, 1);
    static const char *const a[] = {"a1", "a2", "a3", "a4", "a5"};
    for (int i = 0; i < 5; i++)
        eu_cpupool_submit_for(pool, 1, record_work, on_done, (void *)a[i]);
    eu_cpupool_submit_for(pool, 2, record_work, on_done, "b1");
    open_gate_and_wait(base, 7);
    char text[256];
    ck_assert_str_eq(order_text(text, sizeof(text)), "b1 a1 a2 a3 a4 a5");
    eu_cpupool_free(pool);
    event_base_free(base);
}
END_TEST

START_TEST(test_busy_tenants_alternate)
{
    struct event_base *base = event_base_new();
    struct eu_cpupool *pool = start_gated(base, 9);
    static const char *const a[] = {"a1", "a2", "a3"}, *const b[] = {"b1", "b2", "b3"};
    for (int i = 0; i < 3; i++)
        eu_cpupool_submit_for(pool, 1, record_work, on_done, (void *)a[i]);
    for (int i = 0; i < 3; i++)
        eu_cpupool_submit_for(pool, 2, record_work, on_done, (void *)b[i]);
    /* The process's own work (tenant 0) takes turns like a tenant. */
    eu_cpupool_submit(pool, record_work, on_done, "p1");
    open_gate_and_wait(base, 8);
    char text[256];
    ck_assert_str_eq(order_text(text, sizeof(text)), "a1 b1 p1 a2 b2 a3 b3");
    eu_cpupool_free(pool);
    event_base_free(base);
}
END_TEST

START_TEST(test_try_submit_caps_its_owner)
{
    struct event_base *base = event_base_new();
    struct eu_cpupool *pool = start_gated(base, 9);
    int owner = 0;
    ck_assert_int_eq(eu_cpupool_try_submit(pool, 1, &owner, 2, 0, record_work, on_done, "a1"), 0);
    ck_assert_int_eq(eu_cpupool_try_submit(pool, 1, &owner, 2, 0, record_work, on_done, "a2"), 0);
    ck_assert_int_eq(eu_cpupool_try_submit(pool, 1, &owner, 2, 0, record_work, on_done, "a3"), -1);
    ck_assert_int_eq(owner, 2);
    open_gate_and_wait(base, 3);
    ck_assert_int_eq(owner, 0);
    eu_cpupool_free(pool);
    event_base_free(base);
}
END_TEST

/* A completion that queues a second job on the pool, as a shutdown may
 * meet: the drain runs that one too, with no loop turning. */
static struct eu_cpupool *chain_pool;

static void
on_chain_done(void *arg)
{
    done_count++;
    eu_cpupool_submit(chain_pool, record_work, on_done, arg);
}

START_TEST(test_drain_runs_every_completion)
{
    struct event_base *base = event_base_new();
    chain_pool = start_gated(base, 9);
    eu_cpupool_submit_for(chain_pool, 1, record_work, on_chain_done, "a1");
    eu_cpupool_submit_for(chain_pool, 2, record_work, on_done, "b1");
    pthread_mutex_lock(&lock);
    gate_open = true;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    int ran = 0, n;
    while ((n = eu_cpupool_drain(chain_pool)) > 0)
        ran += n;
    /* The gate, a1, b1 and a1's follower: all done, none left queued. */
    ck_assert_int_eq(ran, 4);
    ck_assert_int_eq(done_count, 4);
    ck_assert_int_eq(started, 3);
    ck_assert_int_eq(eu_cpupool_drain(chain_pool), 0);
    ck_assert_int_eq(eu_cpupool_drain(NULL), 0);
    eu_cpupool_free(chain_pool);
    event_base_free(base);
}
END_TEST

static Suite *
cpupool_suite(void)
{
    Suite *s = suite_create("cpupool");
    TCase *tc = tcase_create("turns");
    tcase_add_test(tc, test_other_tenant_runs_next);
    tcase_add_test(tc, test_busy_tenants_alternate);
    tcase_add_test(tc, test_try_submit_caps_its_owner);
    tcase_add_test(tc, test_drain_runs_every_completion);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(cpupool_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
