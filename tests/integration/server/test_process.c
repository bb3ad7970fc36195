/*
 * The server as a process: it exits 0 on SIGTERM, reloads its tenant
 * registry on SIGHUP, keeps serving without Redis, keeps its tenants across
 * restarts and stays within cpu_threads + 2 threads however many tenants
 * it loads.
 */
#include "harness.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180

START_TEST(test_sigterm_exits_zero)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    int admin_port = s->admin_port;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    ck_assert_int_eq(eu_it_server_stop(s), 0);
    /* Nothing listens any more. */
    ck_assert_int_eq(eu_it_http(&r, "GET", admin_port, NULL, "/healthz", NULL, NULL), -1);

    eu_it_resp_free(&r);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_sighup_loads_new_tenants)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    long long deadline;
    PGconn *conn;
    PGresult *res;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));

    /* A row another process (or an operator) added to the control table,
     * in the default pooled placement. */
    conn = eu_it_pg_connect(s->name);
    res = PQexec(conn, "INSERT INTO tenants (domain, title, placement_id)"
                       " SELECT 'hup.example', 'Hup', id FROM placements WHERE name = 'main'");
    ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "insert tenant: %s",
                  PQresultErrorMessage(res));
    PQclear(res);
    PQfinish(conn);

    eu_it_server_signal(s, SIGHUP);
    deadline = eu_it_now_ms() + 5000;
    do {
        eu_it_public(s, "GET", "hup.example", "/api/v1/instance", &r);
        if (r.status == 200)
            break;
        eu_it_sleep_ms(200);
    } while (eu_it_now_ms() < deadline);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "uri", "hup.example");
    EU_IT_EXPECT_JSTR(&r, "title", "Hup");
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 0);

    /* The reload kept the tenants it already had. */
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Alpha");
    ck_assert(eu_it_server_is_alive(s));

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_serves_without_redis)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    free(eu_it_account_seed(s, "a.example", "alice"));
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_sh("EUNHA_TEST_REDIS_STOP");
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Alpha");
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);
    ck_assert_msg(r.seconds < 10.0, "instance took %.2f s with Redis down", r.seconds);
    eu_it_public(s, "GET", "a.example", "/nodeinfo/2.0", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(eu_it_server_is_alive(s));

    eu_it_sh("EUNHA_TEST_REDIS_START");
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* A Redis that accepts but never answers (stopped with SIGSTOP) costs each
 * request at most the command timeout: reads fall back to PostgreSQL, the
 * connection is re-made, and nothing is lost once it answers again. */
START_TEST(test_serves_with_hung_redis)
{
    struct eu_it_server *s;
    struct eu_it_resp r = {0}, home = {0}, post = {0};
    char *tok;

    if (!getenv("EUNHA_TEST_REDIS_PAUSE"))
        return; /* not run by scripts/test.sh */
    s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    free(eu_it_account_seed(s, "a.example", "alice"));
    tok = eu_it_user_token(s, "a.example", "alice", "read write");
    ck_assert_int_eq(eu_it_http(&r, "POST", s->public_port, "a.example", "/api/v1/statuses", tok,
                                "{\"status\":\"before the hang\"}"),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* What happens while paused is asserted after the resume (the harness
     * would resume after a failure too, but later). */
    eu_it_sh("EUNHA_TEST_REDIS_PAUSE");
    eu_it_http(&home, "GET", s->public_port, "a.example", "/api/v1/timelines/home", tok, NULL);
    eu_it_http(&post, "POST", s->public_port, "a.example", "/api/v1/statuses", tok,
               "{\"status\":\"during the hang\"}");
    eu_it_http(&r, "GET", s->public_port, "a.example", "/api/v1/timelines/home", tok, NULL);
    eu_it_sh("EUNHA_TEST_REDIS_RESUME");

    EU_IT_EXPECT_STATUS(&home, 200);
    ck_assert_msg(home.seconds < 5.0, "home took %.2f s with Redis hung", home.seconds);
    ck_assert_int_eq(json_array_size(home.json), 1);
    EU_IT_EXPECT_JSTR(&home, "0.content", "<p>before the hang</p>");
    EU_IT_EXPECT_STATUS(&post, 200);
    ck_assert_msg(post.seconds < 5.0, "posting took %.2f s with Redis hung", post.seconds);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(r.seconds < 5.0, "second home took %.2f s with Redis hung", r.seconds);
    ck_assert_int_eq(json_array_size(r.json), 2);

    /* Redis answers again: so does the server, with both statuses. */
    long long deadline = eu_it_now_ms() + 15000;
    do {
        eu_it_http(&r, "GET", s->public_port, "a.example", "/api/v1/timelines/home", tok, NULL);
        if (r.status == 200 && json_array_size(r.json) == 2)
            break;
        eu_it_sleep_ms(200);
    } while (eu_it_now_ms() < deadline);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.content", "<p>during the hang</p>");
    ck_assert(eu_it_server_is_alive(s));

    free(tok);
    eu_it_resp_free(&r);
    eu_it_resp_free(&home);
    eu_it_resp_free(&post);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_restart_keeps_tenants)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_opts again = {0};
    struct eu_it_resp r = {0};
    char name[64];

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    free(eu_it_account_seed(s, "a.example", "alice"));

    eu_it_server_restart(s);
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Alpha");
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);

    /* A second server on the same databases sees the same tenants. */
    snprintf(name, sizeof(name), "%s", s->name);
    s->keep_databases = true;
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    again.name = name;
    s = eu_it_server_start_opts(&again);
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);
    eu_it_admin(s, "GET", "/admin/v1/tenants", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_uint_eq(json_array_size(r.json), 1);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_thread_count_is_bounded)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    long threads;

    threads = eu_it_proc_threads(s->pid);
    /* The loop, the CPU pool and the two file threads, with one to spare. */
    ck_assert_msg(threads >= 1 && threads <= EU_IT_CPU_THREADS + 4,
                  "%ld threads at start with cpu_threads=%d", threads, EU_IT_CPU_THREADS);

    for (int i = 0; i < 20; i++) {
        char domain[64], title[64];
        snprintf(domain, sizeof(domain), "t%d.example", i);
        snprintf(title, sizeof(title), "Tenant %d", i);
        json_decref(eu_it_tenant_create(s, domain, title));
        /* Open each tenant's pool too. */
        eu_it_public(s, "GET", domain, "/api/v1/instance", &r);
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JSTR(&r, "title", title);
    }

    threads = eu_it_proc_threads(s->pid);
    ck_assert_msg(threads >= 1 && threads <= EU_IT_CPU_THREADS + 4,
                  "%ld threads with 20 tenants and cpu_threads=%d", threads, EU_IT_CPU_THREADS);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

static Suite *
process_suite(void)
{
    Suite *s = suite_create("integration.process");

    EU_IT_ADD_TCASE(s, test_sigterm_exits_zero, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_sighup_loads_new_tenants, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_serves_without_redis, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_serves_with_hung_redis, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_restart_keeps_tenants, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_thread_count_is_bounded, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(process_suite());
}
