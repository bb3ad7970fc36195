/*
 * A flood of password guesses on one tenant cannot fill the CPU pool that
 * every tenant's password checks share: past [server] cpu_jobs_per_tenant
 * checks queued or running, that tenant's next attempts are answered 503
 * with Retry-After at once, while another tenant's correct password grant
 * still succeeds, and the flooded tenant's own sign-in works again after.
 */
#include "harness.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define FLOOD 24

static struct eu_it_server *srv;

static struct eu_it_app
make_app(const char *host)
{
    return eu_it_app_create(
        srv, host,
        "{\"client_name\":\"F\",\"redirect_uris\":\"urn:ietf:wg:oauth:2.0:oob\","
        "\"scopes\":\"read\"}");
}

/* POST /oauth/token, password grant; returns the status. */
static long
grant(const char *host, const struct eu_it_app *a, const char *password, struct eu_it_resp *r)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"grant_type\":\"password\",\"client_id\":\"%s\",\"client_secret\":\"%s\","
             "\"username\":\"alice@%s\",\"password\":\"%s\",\"scope\":\"read\"}",
             a->id, a->secret, host, password);
    int rc = eu_it_http(r, "POST", srv->public_port, host, "/oauth/token", NULL, body);
    return rc == 0 ? r->status : 0;
}

struct guess {
    const struct eu_it_app *a;
    long status;
    bool retry_after;
};

static void *
guess_main(void *arg)
{
    struct guess *g = arg;
    struct eu_it_resp r = {0};
    g->status = grant("flood.example", g->a, "wrong guess", &r);
    g->retry_after = eu_it_resp_header(&r, "Retry-After") != NULL;
    eu_it_resp_free(&r);
    return NULL;
}

START_TEST(test_flood_waits_behind_itself)
{
    /* This flood from one address on one login is as big as the sign-in
     * limits allow (25), and a bigger one would be answered 429 before the
     * pool saw it. The pool's bound is for floods those limits cannot stop
     * (many addresses and logins, or Redis away), so they are off here. */
    srv = eu_it_server_start("[limits]\nsign_in_attempts_per_ip_per_5min = 0\n"
                             "sign_in_attempts_per_login_per_hour = 0\n");
    json_decref(eu_it_tenant_create(srv, "flood.example", "Flood"));
    json_decref(eu_it_tenant_create(srv, "quiet.example", "Quiet"));
    eu_it_account_create(srv, "flood.example", "alice");
    eu_it_account_create(srv, "quiet.example", "alice");
    struct eu_it_app fa = make_app("flood.example"), qa = make_app("quiet.example");

    pthread_t threads[FLOOD];
    struct guess g[FLOOD];
    for (int i = 0; i < FLOOD; i++) {
        g[i] = (struct guess){.a = &fa};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, guess_main, &g[i]), 0);
    }
    /* The neighbour's sign-in, while the guesses are being checked. */
    eu_it_sleep_ms(50);
    struct eu_it_resp r = {0};
    long long t0 = eu_it_now_ms();
    ck_assert_int_eq(grant("quiet.example", &qa, "correct horse battery staple", &r), 200);
    long long quiet_ms = eu_it_now_ms() - t0;
    ck_assert_ptr_nonnull(eu_it_json_str(&r, "access_token"));

    int refused = 0, checked = 0;
    for (int i = 0; i < FLOOD; i++) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        if (g[i].status == 503) {
            ck_assert(g[i].retry_after);
            refused++;
        } else {
            ck_assert_int_eq(g[i].status, 400); /* the wrong password, checked */
            checked++;
        }
    }
    fprintf(stderr, "flood: %d checked, %d refused with 503; the neighbour's grant took %lld ms\n",
            checked, refused, quiet_ms);
    ck_assert_int_gt(refused, 0);
    ck_assert_int_gt(checked, 0);

    /* The flooded tenant's own sign-in works again. */
    ck_assert_int_eq(grant("flood.example", &fa, "correct horse battery staple", &r), 200);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("signin_flood");
    EU_IT_ADD_TCASE(s, test_flood_waits_behind_itself, TIMEOUT);
    return eu_it_run_suite(s);
}
