/*
 * Per-tenant PostgreSQL pools seen from outside: a full pool answers 503
 * with Retry-After after the acquire timeout instead of queueing forever,
 * idle connections are closed, and a PostgreSQL restart costs some 5xx
 * answers but neither a hang nor the process. Under a shared cap
 * (max_total_connections) tenants take idle connections from each other and
 * never hold more than the cap together.
 */
#include "harness.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180

struct bg_request {
    struct eu_it_server *s;
    const char *host;
    struct eu_it_resp r;
    int rc;
};

static void *
run_bg_request(void *arg)
{
    struct bg_request *b = arg;

    b->rc = eu_it_http(&b->r, "GET", b->s->public_port, b->host, "/api/v1/instance", NULL, NULL);
    return NULL;
}

START_TEST(test_pool_exhaustion_answers_503)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    struct bg_request bg = {.s = s, .host = "a.example"};
    pthread_t thread;
    long long deadline;
    char *db;
    PGconn *locker;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_tenant_patch(s, "a.example",
                       "{\"max_connections\":1,\"min_connections\":0,"
                       "\"acquire_timeout_seconds\":1}");
    eu_it_account_create(s, "a.example", "alice");
    db = eu_it_tenant_database(s, "a.example");

    /* The instance endpoint counts accounts, so with the table locked the
     * first request holds the pool's only connection until we commit. */
    locker = eu_it_pg_connect(db);
    free(eu_it_pg_query(locker, "BEGIN"));
    free(eu_it_pg_query(locker, "LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE"));
    ck_assert_int_eq(pthread_create(&thread, NULL, run_bg_request, &bg), 0);

    deadline = eu_it_now_ms() + 10000;
    while (eu_it_pg_count_lock_waiters(db) < 1 && eu_it_now_ms() < deadline)
        eu_it_sleep_ms(100);
    ck_assert_msg(eu_it_pg_count_lock_waiters(db) >= 1,
                  "GET /api/v1/instance never waited on the accounts lock in %s", db);

    eu_it_admin(s, "GET", "/admin/v1/tenants/a.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "pool.busy", 1);

    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 503);
    ck_assert_msg(eu_it_resp_header(&r, "Retry-After") != NULL, "503 without Retry-After:\n%s",
                  r.headers);
    ck_assert_msg(r.seconds < 4.0, "503 took %.2f s with acquire_timeout_seconds=1", r.seconds);

    free(eu_it_pg_query(locker, "COMMIT"));
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_msg(bg.rc == 0, "blocked request failed: %s", bg.r.error);
    EU_IT_EXPECT_STATUS(&bg.r, 200);
    EU_IT_EXPECT_JINT(&bg.r, "stats.user_count", 1);

    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);

    PQfinish(locker);
    free(db);
    eu_it_resp_free(&bg.r);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_pool_closes_idle_connections)
{
    struct eu_it_opts opts = {.idle_timeout = 2, .pool_min = 0};
    struct eu_it_server *s = eu_it_server_start_opts(&opts);
    struct eu_it_resp r = {0};
    long long deadline;
    long open = 0;
    char *db;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    db = eu_it_tenant_database(s, "a.example");

    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* The connection goes back to the pool and stays for a while... */
    deadline = eu_it_now_ms() + 1500;
    while ((open = eu_it_pg_count_backends(db)) < 1 && eu_it_now_ms() < deadline)
        eu_it_sleep_ms(100);
    ck_assert_msg(open >= 1, "no pooled connection to %s after a request", db);

    /* ...and is closed once idle_timeout_seconds passes. */
    deadline = eu_it_now_ms() + 10000;
    while ((open = eu_it_pg_count_backends(db)) > 0 && eu_it_now_ms() < deadline)
        eu_it_sleep_ms(250);
    ck_assert_msg(open == 0, "%ld connections to %s still open 10 s after the last request",
                  open, db);

    /* A closed pool reopens on demand. */
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    free(db);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

static long
backends_of(char *const *dbs, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += eu_it_pg_count_backends(dbs[i]);
    return sum;
}

static double
metric(struct eu_it_server *s, const char *name)
{
    struct eu_it_resp r = {0};
    double v = -1;
    eu_it_admin(s, "GET", "/metrics", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(eu_it_metric_value(r.body, name, &v), "no %s in:\n%s", name, r.body);
    eu_it_resp_free(&r);
    return v;
}

START_TEST(test_pool_shared_cap)
{
    struct eu_it_opts opts = {
        .extra_toml = "[database_pool]\nmax_total_connections = 2\nmax_connecting = 1\n"
                      "acquire_timeout_seconds = 2\nidle_timeout_seconds = 120\n",
    };
    struct eu_it_server *s = eu_it_server_start_opts(&opts);
    static const char *const hosts[] = {"a.example", "b.example", "c.example"};
    struct eu_it_resp r = {0};
    char *dbs[3];
    PGconn *lockers[2];
    struct bg_request bg[2];
    pthread_t threads[2];
    long long deadline;

    /* Dedicated placements, so each tenant's connections are told apart by
     * their database. */
    for (int i = 0; i < 3; i++) {
        char body[128];
        snprintf(body, sizeof(body), "{\"domain\":\"%s\",\"placement\":\"dedicated\"}",
                 hosts[i]);
        eu_it_admin(s, "POST", "/admin/v1/tenants", body, &r);
        EU_IT_EXPECT_STATUS(&r, 201);
        dbs[i] = eu_it_tenant_database(s, hosts[i]);
    }

    /* a and b each keep the connection they used: the cap is reached. */
    for (int i = 0; i < 2; i++) {
        eu_it_public(s, "GET", hosts[i], "/api/v1/instance", &r);
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[0]), 1);
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[1]), 1);
    ck_assert(metric(s, "eunha_db_connections") == 2.0);

    /* c still answers: a's connection, the least recently used, makes way. */
    eu_it_public(s, "GET", hosts[2], "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[0]), 0);
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[1]), 1);
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[2]), 1);
    ck_assert(metric(s, "eunha_db_reclaimed_total") == 1.0);
    ck_assert(metric(s, "eunha_db_connections") == 2.0);

    /* Every connection busy: nothing to take, so a third tenant waits and
     * gets the pool's 503 instead of a connection past the cap. */
    for (int i = 0; i < 2; i++) {
        lockers[i] = eu_it_pg_connect(dbs[i + 1]);
        free(eu_it_pg_query(lockers[i], "BEGIN"));
        free(eu_it_pg_query(lockers[i], "LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE"));
        bg[i] = (struct bg_request){.s = s, .host = hosts[i + 1]};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, run_bg_request, &bg[i]), 0);
    }
    deadline = eu_it_now_ms() + 10000;
    while ((eu_it_pg_count_lock_waiters(dbs[1]) < 1 || eu_it_pg_count_lock_waiters(dbs[2]) < 1) &&
           eu_it_now_ms() < deadline)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(eu_it_pg_count_lock_waiters(dbs[1]), 1);
    ck_assert_int_eq(eu_it_pg_count_lock_waiters(dbs[2]), 1);
    eu_it_public(s, "GET", hosts[0], "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 503);
    ck_assert_msg(eu_it_resp_header(&r, "Retry-After") != NULL, "503 without Retry-After");
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[0]), 0);
    ck_assert(metric(s, "eunha_db_connections") == 2.0);

    /* Once they finish, the waiting tenant is served again. */
    for (int i = 0; i < 2; i++) {
        free(eu_it_pg_query(lockers[i], "COMMIT"));
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        EU_IT_EXPECT_STATUS(&bg[i].r, 200);
        eu_it_resp_free(&bg[i].r);
        PQfinish(lockers[i]);
    }
    eu_it_public(s, "GET", hosts[0], "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* The lockers' backends take a moment to exit after PQfinish. */
    deadline = eu_it_now_ms() + 5000;
    while (backends_of(dbs, 3) > 2 && eu_it_now_ms() < deadline)
        eu_it_sleep_ms(100);
    ck_assert_int_le(backends_of(dbs, 3), 2);

    for (int i = 0; i < 3; i++)
        free(dbs[i]);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_pool_survives_postgres_restart)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    pid_t pid = s->pid;
    long long deadline;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_account_create(s, "a.example", "alice");
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_sh("EUNHA_TEST_PG_STOP");
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    ck_assert_msg(r.status >= 500 && r.status <= 599,
                  "with PostgreSQL down got %ld, want 5xx; body: %s", r.status, r.body);
    ck_assert_msg(eu_it_json_str(&r, "error") != NULL, "5xx without JSON error: %s", r.body);
    ck_assert_msg(r.seconds < 10.0, "the 5xx took %.2f s", r.seconds);
    ck_assert_msg(eu_it_server_is_alive(s), "server died while PostgreSQL was down");

    eu_it_sh("EUNHA_TEST_PG_START");
    deadline = eu_it_now_ms() + 20000;
    do {
        eu_it_sleep_ms(500);
        eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    } while (r.status != 200 && eu_it_now_ms() < deadline);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);

    ck_assert_msg(eu_it_server_is_alive(s), "server exited");
    ck_assert_int_eq(s->pid, pid);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

static Suite *
pool_suite(void)
{
    Suite *s = suite_create("integration.pool");

    EU_IT_ADD_TCASE(s, test_pool_exhaustion_answers_503, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_pool_closes_idle_connections, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_pool_shared_cap, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_pool_survives_postgres_restart, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(pool_suite());
}
