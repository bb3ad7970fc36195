/*
 * Three eunha processes on one control database and one placement, one of
 * them SIGKILLed while it holds jobs (issue 30, item 4): every job still
 * runs, none runs twice, none is left behind. The "ping" job kind writes a
 * row to job_pings each time it runs (src/queue/ping.c); job_pings has no
 * unique key, so a second run would show as a second row and is counted.
 *
 * Every process polls idle queues once an hour, so only a wake moves one.
 * Only b is woken at first: it claims the jobs, each of which holds its
 * first attempt for 1 to 4.6 s (by its number) before it records its ping,
 * so b dies with most of them claimed and unfinished. a and c are woken
 * after the kill: they see the claimed jobs' locks (job_lock_seconds, kept
 * short by b's heartbeat while it lived) and race for them, with SKIP
 * LOCKED, once the locks pass.
 */
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define JOBS 300
#define WORKERS "[workers]\nqueue_idle_poll_seconds = 3600\njob_lock_seconds = 3\n"

/* Polls sql (one integer) on db until it equals want or timeout_ms pass;
 * returns the last value. */
static long
wait_for(const char *db, const char *sql, long want, long timeout_ms)
{
    long long t0 = eu_it_now_ms();
    long got = -1;
    while (eu_it_now_ms() - t0 < timeout_ms) {
        got = eu_it_pg_exec_long(db, sql);
        if (got == want)
            break;
        eu_it_sleep_ms(100);
    }
    return got;
}

/* Enqueues a ping through s's admin API, which wakes s's worker. */
static void
wake(struct eu_it_server *s)
{
    struct eu_it_resp r = {0};
    eu_it_admin(s, "POST", "/admin/v1/tenants/kill.example/jobs",
                "{\"kind\":\"ping\",\"payload\":{\"wake\":true}}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_resp_free(&r);
}

START_TEST(test_one_of_three_killed)
{
    struct eu_it_opts oa = {.extra_toml = WORKERS};
    struct eu_it_server *a = eu_it_server_start_opts(&oa);
    json_decref(eu_it_tenant_create(a, "kill.example", "Kill"));
    char *tid = eu_it_tenant_id(a, "kill.example");
    char *db = eu_it_tenant_database(a, "kill.example");
    struct eu_it_opts ob = {.name = a->name, .extra_toml = WORKERS};
    struct eu_it_server *b = eu_it_server_start_opts(&ob);
    struct eu_it_server *c = eu_it_server_start_opts(&ob);
    b->keep_databases = true; /* a drops them */
    c->keep_databases = true;
    char sql[512];

    snprintf(sql, sizeof(sql),
             "INSERT INTO jobs (tenant_id, kind, payload) SELECT %s, 'ping',"
             " json_build_object('n', g, 'hold_ms', 1000 + (g %% 10) * 400)"
             " FROM generate_series(1, %d) g",
             tid, JOBS);
    free(eu_it_pg_exec(db, sql));

    /* b is woken, and killed once it has run some jobs: it holds others
     * then, each in its hold before the ping. */
    wake(b);
    snprintf(sql, sizeof(sql),
             "SELECT least(count(*), 20) FROM job_pings WHERE process LIKE '%%:%d'", (int)b->pid);
    long ran = wait_for(db, sql, 20, 60000);
    long held = eu_it_pg_exec_long(db, "SELECT count(*) FROM jobs WHERE attempts > 0 AND"
                                       " locked_until > now()");
    eu_it_server_signal(b, SIGKILL);
    eu_it_server_stop(b);
    fprintf(stderr, "b killed after %ld+ jobs of its own, with %ld claimed fleet-wide\n", ran,
            held);
    ck_assert_int_eq(ran, 20);

    /* a and c run the rest once b's locks have passed. */
    wake(a);
    wake(c);
    long left = wait_for(db, "SELECT count(*) FROM jobs", 0, 90000);
    ck_assert_msg(left == 0, "%ld jobs left behind", left);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM job_pings WHERE tenant_id = %s", tid);
    long pings = eu_it_pg_exec_long(db, sql);
    long wakes = eu_it_pg_exec_long(db, "SELECT count(*) FROM job_pings WHERE payload ? 'wake'");
    long distinct_jobs = eu_it_pg_exec_long(db, "SELECT count(DISTINCT job_id) FROM job_pings");
    long distinct_n = eu_it_pg_exec_long(db, "SELECT count(DISTINCT payload->>'n') FROM job_pings");
    long twice = eu_it_pg_exec_long(db, "SELECT count(*) FROM (SELECT job_id FROM job_pings"
                                        " GROUP BY job_id HAVING count(*) > 1) d");
    long procs = eu_it_pg_exec_long(db, "SELECT count(DISTINCT process) FROM job_pings");
    fprintf(stderr, "%ld pings for %ld jobs, %ld ran twice, %ld processes ran jobs\n", pings,
            distinct_jobs, twice, procs);
    if (twice) {
        /* Who ran it, and when: b then a survivor is a ping recorded just
         * before the kill, two survivors a lock that lapsed. */
        char *who = eu_it_pg_execf(
            db, "SELECT string_agg(job_id || ' ' || process || ' ' || ran_at::text, '; '"
                " ORDER BY ran_at) FROM job_pings WHERE job_id IN (SELECT job_id FROM job_pings"
                " GROUP BY job_id HAVING count(*) > 1)");
        fprintf(stderr, "ran twice: %s (b is pid %d)\n", who, (int)b->pid);
        free(who);
    }
    ck_assert_int_eq(twice, 0);
    ck_assert_int_eq(distinct_n, JOBS);
    ck_assert_int_eq(wakes, 3);
    ck_assert_int_eq(distinct_jobs, JOBS + wakes);
    ck_assert_int_eq(pings, JOBS + wakes);
    /* b, and a or c or both, for the jobs b left. */
    ck_assert_msg(procs >= 2, "%ld processes ran jobs", procs);

    /* The survivors still serve and still work. */
    struct eu_it_resp r = {0};
    eu_it_public(c, "GET", "kill.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);

    eu_it_server_free(b);
    ck_assert_int_eq(eu_it_server_stop(c), 0);
    eu_it_server_free(c);
    ck_assert_int_eq(eu_it_server_stop(a), 0);
    eu_it_server_free(a);
    free(tid);
    free(db);
}
END_TEST

/*
 * A process whose lock lapsed while its job still ran (it stalled past
 * job_lock_seconds) and another process claimed the job again: when the
 * stale attempt then fails, its failure must leave the newer claim alone.
 * Unlocking it (and scheduling a retry) under a job still running would
 * let a third process take it too. The newer claim is made by hand here:
 * attempts goes up, as a claim's does.
 */
START_TEST(test_stale_failure_leaves_the_new_claim)
{
    struct eu_it_server *s = eu_it_server_start(WORKERS);
    json_decref(eu_it_tenant_create(s, "kill.example", "Kill"));
    char *tid = eu_it_tenant_id(s, "kill.example");
    char *db = eu_it_tenant_database(s, "kill.example");
    char sql[512];

    snprintf(sql, sizeof(sql),
             "INSERT INTO jobs (tenant_id, kind, payload) VALUES (%s, 'ping',"
             " '{\"hold_ms\": 3000, \"fail\": \"stale\"}') RETURNING id::text",
             tid);
    char *id = eu_it_pg_exec(db, sql);
    wake(s);
    snprintf(sql, sizeof(sql), "SELECT attempts FROM jobs WHERE id = %s", id);
    ck_assert_int_eq(wait_for(db, sql, 1, 20000), 1);
    /* Another process's claim, while this one holds the job. */
    snprintf(sql, sizeof(sql),
             "UPDATE jobs SET attempts = 2, locked_until = now() + interval '1 hour'"
             " WHERE id = %s",
             id);
    free(eu_it_pg_exec(db, sql));
    /* The stale attempt fails at the end of its hold. */
    char grep[600];
    snprintf(grep, sizeof(grep), "grep -q 'job %s (ping) failed, attempt 1' %s", id, s->log_path);
    long long t0 = eu_it_now_ms();
    while (system(grep) != 0) {
        ck_assert_msg(eu_it_now_ms() - t0 < 20000, "the held job never failed");
        eu_it_sleep_ms(100);
    }
    eu_it_sleep_ms(500); /* its statement, after the log line */
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM jobs WHERE id = %s AND attempts = 2 AND state = 'ready'"
             " AND last_error IS NULL AND locked_until > now()",
             id);
    ck_assert_msg(eu_it_pg_exec_long(db, sql) == 1, "the stale failure changed the new claim: %s",
                  eu_it_pg_execf(db,
                                 "SELECT row_to_json(j)::text FROM (SELECT attempts, state,"
                                 " last_error, locked_until, run_at FROM jobs WHERE id = %s) j",
                                 id));

    free(id);
    free(tid);
    free(db);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("fleet_kill");
    EU_IT_ADD_TCASE(s, test_one_of_three_killed, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_stale_failure_leaves_the_new_claim, TIMEOUT);
    return eu_it_run_suite(s);
}
