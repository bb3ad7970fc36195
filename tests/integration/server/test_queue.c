/*
 * Durable jobs and the suspended-account cleanup task, end to end: two
 * processes on the same databases never run a job twice; a failing job is
 * retried with backoff and ends dead, visible and retryable through the admin
 * API; a job whose worker died runs once its lock has passed; the idle poll
 * finds jobs another process wrote; a suspended account is purged when its
 * retention has passed, and an unsuspended one is not.
 *
 * The "ping" job kind writes a row to job_pings each time it runs, which is
 * how these tests count runs. Every server here polls idle queues once an
 * hour unless a test says otherwise, so whatever runs was woken or fell due.
 */
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define QUIET "[workers]\nqueue_idle_poll_seconds = 3600\n"

/* The id of the last tenant set up: its rows' tenant_id. */
static char tid[24];

static char *
setup_tenant(struct eu_it_server *s, const char *domain)
{
    json_decref(eu_it_tenant_create(s, domain, domain));
    char *id = eu_it_tenant_id(s, domain);
    snprintf(tid, sizeof(tid), "%s", id);
    free(id);
    return eu_it_tenant_database(s, domain);
}

/* Runs sql after replacing each "$T" with the tenant's id; returns what
 * eu_it_pg_exec() does. */
static char *
tenant_exec(const char *db, const char *sql)
{
    char buf[2048], *o = buf;
    for (const char *p = sql; *p && o < buf + sizeof(buf) - 32; p++) {
        if (p[0] == '$' && p[1] == 'T') {
            o += sprintf(o, "%s", tid);
            p++;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return eu_it_pg_exec(db, buf);
}

/* Enqueues a ping through the admin API, which wakes that server's worker. */
static void
ping(struct eu_it_server *s, const char *domain)
{
    struct eu_it_resp r = {0};
    char path[200];

    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/jobs", domain);
    eu_it_admin(s, "POST", path, "{\"kind\":\"ping\",\"payload\":{\"wake\":true}}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    ck_assert_msg(eu_it_json_str(&r, "id") != NULL, "%s", r.body);
    eu_it_resp_free(&r);
}

/* Polls sql (one integer) on db until it equals want; returns the ms waited
 * or fails after timeout_ms. */
static long long
wait_for(const char *db, const char *sql, long want, long timeout_ms)
{
    long long t0 = eu_it_now_ms();
    long got = -1;

    while (eu_it_now_ms() - t0 < timeout_ms) {
        got = eu_it_pg_exec_long(db, sql);
        if (got == want)
            return eu_it_now_ms() - t0;
        eu_it_sleep_ms(100);
    }
    ck_abort_msg("%s: still %ld after %ld ms, want %ld", sql, got, timeout_ms, want);
    return -1;
}

START_TEST(test_two_processes_run_each_job_once)
{
    struct eu_it_opts oa = {.extra_toml = QUIET};
    struct eu_it_server *a = eu_it_server_start_opts(&oa);
    char *db = setup_tenant(a, "q.example");
    struct eu_it_opts ob = {.name = a->name, .extra_toml = QUIET};
    struct eu_it_server *b = eu_it_server_start_opts(&ob);

    b->keep_databases = true; /* a drops them */
    free(tenant_exec(db, "INSERT INTO jobs (tenant_id, kind, payload) SELECT $T, 'ping',"
                         " json_build_object('n', g) FROM generate_series(1, 300) g"));
    /* Both workers wake and race for the same 302 jobs. */
    ping(a, "q.example");
    ping(b, "q.example");
    wait_for(db, "SELECT count(*) FROM jobs", 0, 60000);

    ck_assert_int_eq(eu_it_pg_exec_long(db, "SELECT count(*) FROM job_pings"), 302);
    ck_assert_int_eq(eu_it_pg_exec_long(db, "SELECT count(DISTINCT job_id) FROM job_pings"), 302);
    long procs = eu_it_pg_exec_long(db, "SELECT count(DISTINCT process) FROM job_pings");
    fprintf(stderr, "two processes: %ld of them ran jobs\n", procs);
    ck_assert_msg(procs == 2, "only %ld process ran jobs; the race was not exercised", procs);

    ck_assert_int_eq(eu_it_server_stop(b), 0);
    eu_it_server_free(b);
    ck_assert_int_eq(eu_it_server_stop(a), 0);
    eu_it_server_free(a);
    free(db);
}
END_TEST

START_TEST(test_failing_job_backs_off_and_dies)
{
    struct eu_it_server *s = eu_it_server_start(QUIET "job_max_attempts = 3\n"
                                                      "job_backoff_base_seconds = 1\n"
                                                      "job_backoff_max_seconds = 60\n");
    char *db = setup_tenant(s, "f.example");
    struct eu_it_resp r = {0};

    /* A kind this version does not know: a job from a newer version. */
    char *id = tenant_exec(db, "INSERT INTO jobs (tenant_id, kind) VALUES ($T, 'from_the_future')"
                               " RETURNING id::text");
    ping(s, "f.example");
    /* Attempt 1 now, 2 after 1 s, 3 after 2 s more: dead after about 3 s. */
    long long waited = wait_for(db, "SELECT count(*) FROM jobs WHERE state = 'dead'", 1, 20000);
    ck_assert_msg(waited >= 2500, "dead after %lld ms: no backoff", waited);
    ck_assert_int_eq(eu_it_pg_exec_long(db, "SELECT attempts FROM jobs WHERE state = 'dead'"), 3);

    eu_it_admin(s, "GET", "/admin/v1/tenants/f.example/jobs?state=dead", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", id);
    EU_IT_EXPECT_JSTR(&r, "0.state", "dead");
    EU_IT_EXPECT_JSTR(&r, "0.kind", "from_the_future");
    EU_IT_EXPECT_JINT(&r, "0.attempts", 3);
    const char *err = json_string_value(eu_it_jpath(r.json, "0.last_error"));
    ck_assert_msg(err && strstr(err, "unknown job kind"), "last_error: %s", r.body);
    eu_it_admin(s, "GET", "/admin/v1/tenants/f.example/jobs?state=bogus", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 422);

    /* Retrying starts it over: three more attempts, dead again. */
    char path[200];
    snprintf(path, sizeof(path), "/admin/v1/tenants/f.example/jobs/%s/retry", id);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "attempts", 0);
    ck_assert_msg(strcmp(eu_it_json_str(&r, "state"), "dead") != 0, "%s", r.body);
    eu_it_sleep_ms(500);
    ck_assert_int_ge(eu_it_pg_exec_long(db, "SELECT attempts FROM jobs"), 1);
    wait_for(db, "SELECT count(*) FROM jobs WHERE state = 'dead' AND attempts = 3", 1, 20000);

    /* A dead job that can succeed runs once retried, and is gone. */
    char *dead = tenant_exec(db, "INSERT INTO jobs (tenant_id, kind, state, attempts, last_error)"
                                 " VALUES ($T, 'ping', 'dead', 3, 'boom') RETURNING id::text");
    snprintf(path, sizeof(path), "/admin/v1/tenants/f.example/jobs/%s/retry", dead);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    char sql[300];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM job_pings WHERE job_id = %s", dead);
    wait_for(db, sql, 1, 10000);
    /* The ping's row lands before the job's own row is deleted: wait for both. */
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM jobs WHERE id = %s", dead);
    wait_for(db, sql, 0, 10000);

    /* Only dead jobs are retried; unknown ones are 404. */
    char *later = tenant_exec(db, "INSERT INTO jobs (tenant_id, kind, run_at) VALUES ($T, 'ping',"
                                  " now() + interval '1 hour') RETURNING id::text");
    snprintf(path, sizeof(path), "/admin/v1/tenants/f.example/jobs/%s/retry", later);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(s, "POST", "/admin/v1/tenants/f.example/jobs/12345/retry", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    snprintf(path, sizeof(path), "/admin/v1/tenants/f.example/jobs/%s", later);
    eu_it_admin(s, "GET", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "state", "ready");
    eu_it_admin(s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_admin(s, "GET", path, NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_admin(s, "POST", "/admin/v1/tenants/f.example/jobs", "{\"kind\":\"nope\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);

    eu_it_resp_free(&r);
    free(id);
    free(dead);
    free(later);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    free(db);
}
END_TEST

START_TEST(test_expired_lock_runs_again)
{
    struct eu_it_server *s = eu_it_server_start(QUIET);
    char *db = setup_tenant(s, "l.example");

    /* Claimed by a worker that then died: runs once the lock has passed. */
    char *id = tenant_exec(db, "INSERT INTO jobs (tenant_id, kind, attempts, locked_until)"
                               " VALUES ($T, 'ping', 1, now() + interval '3 seconds')"
                               " RETURNING id::text");
    ping(s, "l.example");
    char sql[300];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM job_pings WHERE job_id = %s", id);
    eu_it_sleep_ms(1000);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 0);
    long long waited = wait_for(db, sql, 1, 10000);
    ck_assert_msg(waited < 4000, "ran %lld ms after the lock passed", waited - 2000);
    /* The job's row goes in the statement that records it done, a moment
     * after its ping: wait for it rather than race it. */
    wait_for(db, "SELECT count(*) FROM jobs", 0, 2000);

    free(id);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    free(db);
}
END_TEST

/*
 * The heartbeat. A process killed while it runs a job (SIGKILL: nothing is
 * recorded) leaves the job to its lock, which the heartbeat kept short, so
 * another process runs it a few seconds later; and a job that runs for
 * longer than job_lock_seconds keeps its lock while its process lives, so
 * another process polling all along does not run it a second time.
 */
START_TEST(test_heartbeat_keeps_locks_short)
{
#define LOCK3 "job_lock_seconds = 3\n"
    struct eu_it_opts oa = {.extra_toml = QUIET LOCK3};
    struct eu_it_server *a = eu_it_server_start_opts(&oa);
    char *db = setup_tenant(a, "h.example");
    a->keep_databases = true;
    char sql[300], name[sizeof(a->name)];
    snprintf(name, sizeof(name), "%s", a->name);

    /* a claims a job that would take a minute, and is killed. */
    char *id = tenant_exec(db, "INSERT INTO jobs (tenant_id, kind, payload)"
                               " VALUES ($T, 'ping', '{\"hold_ms\": 60000}') RETURNING id::text");
    ping(a, "h.example");
    snprintf(sql, sizeof(sql), "SELECT attempts FROM jobs WHERE id = %s", id);
    wait_for(db, sql, 1, 20000);
    eu_it_server_signal(a, SIGKILL);
    eu_it_server_stop(a);
    eu_it_server_free(a);
    /* b, started after, runs it once the short lock has passed. */
    struct eu_it_opts ob = {.name = name,
                            .extra_toml = "[workers]\nqueue_idle_poll_seconds = 1\n" LOCK3};
    struct eu_it_server *b = eu_it_server_start_opts(&ob);
    b->keep_databases = true;
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM job_pings WHERE job_id = %s", id);
    long long waited = wait_for(db, sql, 1, 30000);
    fprintf(stderr, "heartbeat: the killed process's job ran %lld ms after b started\n", waited);
    free(id);

    /* b runs a job for 10 s, more than three of its locks; c polls every
     * second meanwhile and never claims it. */
    id = tenant_exec(db, "INSERT INTO jobs (tenant_id, kind, payload)"
                         " VALUES ($T, 'ping', '{\"hold_ms\": 10000}') RETURNING id::text");
    ping(b, "h.example");
    snprintf(sql, sizeof(sql), "SELECT attempts FROM jobs WHERE id = %s", id);
    wait_for(db, sql, 1, 20000);
    struct eu_it_opts oc = {.name = name,
                            .extra_toml = "[workers]\nqueue_idle_poll_seconds = 1\n" LOCK3};
    struct eu_it_server *c = eu_it_server_start_opts(&oc);
    eu_it_sleep_ms(7000);
    /* Still running under its lock, or (c's start took long on a busy
     * machine) already done: a row that is gone is the one run counted
     * below, not a lost lock. */
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM jobs WHERE id = %s AND (attempts <> 1 OR locked_until <= now())",
             id);
    ck_assert_msg(eu_it_pg_exec_long(db, sql) == 0, "the running job lost its lock");
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM job_pings WHERE job_id = %s", id);
    wait_for(db, sql, 1, 30000);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM jobs WHERE id = %s", id);
    wait_for(db, sql, 0, 10000);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM job_pings WHERE job_id = %s", id);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 1);
#undef LOCK3

    free(id);
    ck_assert_int_eq(eu_it_server_stop(b), 0);
    eu_it_server_free(b);
    ck_assert_int_eq(eu_it_server_stop(c), 0);
    eu_it_server_free(c);
    free(db);
}
END_TEST

START_TEST(test_idle_poll_finds_jobs_from_elsewhere)
{
    /* Nobody wakes this worker: only the placement poll (2 s +-10%) finds it. */
    struct eu_it_server *s = eu_it_server_start("[workers]\nqueue_idle_poll_seconds = 2\n");
    char *db = setup_tenant(s, "p.example");

    free(tenant_exec(db, "INSERT INTO jobs (tenant_id, kind) VALUES ($T, 'ping')"));
    wait_for(db, "SELECT count(*) FROM job_pings", 1, 8000);

    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    free(db);
}
END_TEST

/*
 * Two tenants of one placement: one with 3,000 due jobs, one with a single
 * job. Tenants take turns of a few jobs each, so the single job runs while
 * the big backlog is still almost whole, not after it.
 */
START_TEST(test_backlog_does_not_starve_a_neighbour)
{
    struct eu_it_server *s = eu_it_server_start(QUIET);
    char *db = setup_tenant(s, "big.example");
    char big[24];
    snprintf(big, sizeof(big), "%s", tid);
    free(setup_tenant(s, "small.example"));
    char sql[300];

    snprintf(sql, sizeof(sql),
             "INSERT INTO jobs (tenant_id, kind, payload) SELECT %s, 'ping',"
             " json_build_object('n', g) FROM generate_series(1, 3000) g",
             big);
    free(eu_it_pg_exec(db, sql));
    ping(s, "big.example");
    /* The backlog is being worked through when the neighbour's job comes. */
    snprintf(sql, sizeof(sql), "SELECT least(count(*), 1) FROM job_pings WHERE tenant_id = %s",
             big);
    wait_for(db, sql, 1, 20000);
    ping(s, "small.example");
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM job_pings WHERE tenant_id = %s", tid);
    long long waited = wait_for(db, sql, 1, 20000);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM jobs WHERE tenant_id = %s", big);
    long left = eu_it_pg_exec_long(db, sql);
    fprintf(stderr, "the single job ran after %lld ms, with %ld of the backlog's 3000 left\n",
            waited, left);
    ck_assert_msg(left > 2000, "the single job waited for %ld of the backlog's jobs", 3001 - left);

    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    free(db);
}
END_TEST

static long
user_count(struct eu_it_server *s, const char *domain)
{
    struct eu_it_resp r = {0};
    long n;

    eu_it_public(s, "GET", domain, "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    n = (long)json_integer_value(eu_it_jpath(r.json, "stats.user_count"));
    eu_it_resp_free(&r);
    return n;
}

START_TEST(test_suspended_account_purged_at_retention)
{
    struct eu_it_server *s = eu_it_server_start(QUIET "suspended_retention_seconds = 4\n");
    char *db = setup_tenant(s, "s.example");
    struct eu_it_resp r = {0};
    char path[200], sql[400];

    free(eu_it_account_seed(s, "s.example", "alice"));
    free(eu_it_account_seed(s, "s.example", "bob"));
    free(eu_it_account_seed(s, "s.example", "carol"));
    char *alice = eu_it_account_id(s, "s.example", "alice");
    char *bob = eu_it_account_id(s, "s.example", "bob");
    char *carol = eu_it_account_id(s, "s.example", "carol");
    snprintf(sql, sizeof(sql),
             "WITH st AS (INSERT INTO statuses (tenant_id, account_id, text) VALUES (%s, %s, 'hi')"
             " RETURNING id) INSERT INTO follows (tenant_id, account_id, target_account_id)"
             " VALUES (%s, %s, %s), (%s, %s, %s)",
             tid, alice, tid, bob, alice, tid, alice, bob);
    free(eu_it_pg_exec(db, sql));
    ck_assert_int_eq(user_count(s, "s.example"), 3);

    snprintf(path, sizeof(path), "/admin/v1/tenants/s.example/accounts/%s/suspend", alice);
    long long t0 = eu_it_now_ms();
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", alice);
    ck_assert_msg(eu_it_json_str(&r, "purge_at") != NULL, "%s", r.body);
    ck_assert_int_eq(user_count(s, "s.example"), 2); /* hidden at once */

    /* Suspended and lifted again: stays. */
    snprintf(path, sizeof(path), "/admin/v1/tenants/s.example/accounts/%s/suspend", carol);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/admin/v1/tenants/s.example/accounts/%s/unsuspend", carol);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_admin(s, "POST", "/admin/v1/tenants/s.example/accounts/99999/suspend", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_admin(s, "POST", "/admin/v1/tenants/s.example/accounts/x1/suspend", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM accounts WHERE id = %s", alice);
    eu_it_sleep_ms(2000);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 1); /* not before its time */
    /* At its retention a local account is first announced gone (the Delete
     * of its actor queued), then purged a grace later (the retention here,
     * an hour at most) while its key can still sign the deliveries. */
    char announced[200];
    snprintf(announced, sizeof(announced),
             "SELECT count(*) FROM accounts WHERE id = %s AND delete_sent_at IS NOT NULL", alice);
    wait_for(db, announced, 1, 8000);
    long long at = eu_it_now_ms() - t0;
    ck_assert_msg(at >= 3800 && at < 7000, "announced after %lld ms, retention is 4 s", at);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 1);
    wait_for(db, sql, 0, 15000);
    at = eu_it_now_ms() - t0;
    fprintf(stderr, "purged %lld ms after the suspension (retention 4000 ms, grace 4000)\n", at);
    ck_assert_msg(at >= 7800 && at < 12000, "purged after %lld ms, retention and grace 4 s", at);

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM statuses WHERE account_id = %s", alice);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 0);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM follows WHERE account_id = %s OR target_account_id = %s", alice,
             alice);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 0);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM accounts WHERE id IN (%s, %s)", bob, carol);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 2);
    ck_assert_int_eq(eu_it_pg_exec_long(db, "SELECT count(*) FROM accounts"
                                            " WHERE suspended_at IS NOT NULL"),
                     0);
    wait_for(db, "SELECT count(*) FROM jobs", 0, 5000);
    ck_assert_int_eq(user_count(s, "s.example"), 2);

    eu_it_resp_free(&r);
    free(alice);
    free(bob);
    free(carol);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    free(db);
}
END_TEST

START_TEST(test_cleanup_finds_suspensions_at_start)
{
    /* Suspended while this process was down: its first cleanup run (at the
     * idle poll) queues the purge. */
    struct eu_it_server *s = eu_it_server_start("[workers]\nqueue_idle_poll_seconds = 2\n"
                                                "suspended_retention_seconds = 1\n");
    char *db = setup_tenant(s, "c.example");

    free(eu_it_account_seed(s, "c.example", "dave"));
    free(eu_it_pg_exec(db, "UPDATE accounts SET suspended_at = now() - interval '1 minute'"));
    wait_for(db, "SELECT count(*) FROM accounts", 0, 10000);

    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    free(db);
}
END_TEST

static Suite *
queue_suite(void)
{
    Suite *s = suite_create("integration.queue");

    EU_IT_ADD_TCASE(s, test_two_processes_run_each_job_once, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_failing_job_backs_off_and_dies, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_expired_lock_runs_again, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_heartbeat_keeps_locks_short, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_idle_poll_finds_jobs_from_elsewhere, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_backlog_does_not_starve_a_neighbour, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_suspended_account_purged_at_retention, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_cleanup_finds_suspensions_at_start, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(queue_suite());
}
