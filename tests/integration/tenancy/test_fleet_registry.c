/*
 * Several eunha processes sharing one control database (issue 30, item 4):
 * a tenant created, changed, suspended or deleted through one process's
 * admin API is served accordingly by the other within a second, through
 * the control database's notifications (control migration 0005,
 * src/db/listen.c), with no restart or SIGHUP.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define HOST "fleet.example"
#define WAIT_MS 5000

/* Waits up to WAIT_MS for GET path on host at s to answer status; returns
 * how long it took in ms. The promise is a second on a quiet machine; the
 * margin is for the whole ASan suite running beside it on two cores. */
static long long
wait_status(struct eu_it_server *s, const char *host, const char *path, long status)
{
    long long t0 = eu_it_now_ms();
    struct eu_it_resp r = {0};
    for (;;) {
        eu_it_public(s, "GET", host, path, &r);
        if (r.status == status)
            break;
        ck_assert_msg(eu_it_now_ms() - t0 < WAIT_MS, "%s%s: %ld after %d ms, want %ld: %s", host,
                      path, r.status, WAIT_MS, status, r.body);
        eu_it_sleep_ms(20);
    }
    eu_it_resp_free(&r);
    return eu_it_now_ms() - t0;
}

START_TEST(test_changes_reach_the_other_process)
{
    struct eu_it_server *a = eu_it_server_start(NULL);
    struct eu_it_opts ob = {.name = a->name};
    struct eu_it_server *b = eu_it_server_start_opts(&ob);
    b->keep_databases = true; /* a drops them */
    struct eu_it_resp r = {0};

    /* Unknown to both, then created through a: b serves it. */
    eu_it_public(b, "GET", HOST, "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 404);
    json_decref(eu_it_tenant_create(a, HOST, "Fleet"));
    long long ms = wait_status(b, HOST, "/api/v1/instance", 200);
    eu_it_public(b, "GET", HOST, "/api/v1/instance", &r);
    EU_IT_EXPECT_JSTR(&r, "title", "Fleet");
    fprintf(stderr, "created on a, served by b after %lld ms\n", ms);

    /* A change of title through a. */
    eu_it_tenant_patch(a, HOST, "{\"title\":\"Fleet two\"}");
    long long t0 = eu_it_now_ms();
    for (;;) {
        eu_it_public(b, "GET", HOST, "/api/v1/instance", &r);
        if (r.status == 200 && strcmp(eu_it_json_str(&r, "title"), "Fleet two") == 0)
            break;
        ck_assert_msg(eu_it_now_ms() - t0 < WAIT_MS, "title on b: %s", r.body);
        eu_it_sleep_ms(20);
    }

    /* Suspended through b: a answers as b does. */
    eu_it_tenant_patch(b, HOST, "{\"state\":\"suspended\"}");
    eu_it_public(b, "GET", HOST, "/api/v1/instance", &r);
    long suspended = r.status;
    ck_assert_int_ne(suspended, 200);
    wait_status(a, HOST, "/api/v1/instance", suspended);
    eu_it_tenant_patch(a, HOST, "{\"state\":\"active\"}");
    wait_status(b, HOST, "/api/v1/instance", 200);

    /* Deleted through a: gone on b too. */
    eu_it_admin(a, "DELETE", "/admin/v1/tenants/" HOST "?confirm=" HOST, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    wait_status(b, HOST, "/api/v1/instance", 404);
    eu_it_admin(b, "GET", "/admin/v1/tenants/" HOST, NULL, &r);
    ck_assert_msg(r.status == 404 || strstr(r.body, "deleting"), "b's admin view: %ld %s", r.status,
                  r.body);

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(b), 0);
    eu_it_server_free(b);
    ck_assert_int_eq(eu_it_server_stop(a), 0);
    eu_it_server_free(a);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("fleet_registry");
    EU_IT_ADD_TCASE(s, test_changes_reach_the_other_process, TIMEOUT);
    return eu_it_run_suite(s);
}
