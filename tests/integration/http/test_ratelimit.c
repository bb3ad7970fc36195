/*
 * Rate limits through HTTP, with the limits lowered in the config: the
 * X-RateLimit-* headers counting down, 429 {"error": "Too many requests"}
 * past the limit, separate counters per token, per IP and per tenant, the
 * stricter sign-up limit, paths outside the API left alone, and nothing
 * limited while Redis is down.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define LIMITS "[limits]\napi_requests_per_5min = 5\nregistrations_per_30min = 2\n"

static void
get(struct eu_it_server *s, struct eu_it_resp *r, const char *domain, const char *path,
    const char *token)
{
    int rc = eu_it_http(r, "GET", s->public_port, domain, path, token, NULL);
    ck_assert_msg(rc == 0, "GET %s: %s", path, r->error);
}

static void
expect_remaining(const struct eu_it_resp *r, const char *want)
{
    const char *v = eu_it_resp_header(r, "X-RateLimit-Remaining");
    ck_assert_msg(v != NULL, "no X-RateLimit-Remaining in %s", r->headers);
    ck_assert_str_eq(v, want);
    ck_assert_str_eq(eu_it_resp_header(r, "X-RateLimit-Limit"), "5");
    const char *reset = eu_it_resp_header(r, "X-RateLimit-Reset");
    /* "2026-01-01T00:05:00.000Z" */
    ck_assert_msg(reset && strlen(reset) == 24 && reset[10] == 'T' && reset[23] == 'Z',
                  "X-RateLimit-Reset %s", reset ? reset : "(none)");
}

START_TEST(test_api_limit)
{
    struct eu_it_server *s = eu_it_server_start(LIMITS);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    json_decref(eu_it_tenant_create(s, "b.example", "B"));
    free(eu_it_account_seed(s, "a.example", "alice"));
    char *tok = eu_it_user_token(s, "a.example", "alice", "read");
    struct eu_it_resp r = {0};

    /* Per IP without a token. */
    const char *const left[] = {"4", "3", "2", "1", "0"};
    for (int i = 0; i < 5; i++) {
        get(s, &r, "a.example", "/api/v1/instance", NULL);
        EU_IT_EXPECT_STATUS(&r, 200);
        expect_remaining(&r, left[i]);
    }
    get(s, &r, "a.example", "/api/v1/instance", NULL);
    EU_IT_EXPECT_ERROR(&r, 429);
    EU_IT_EXPECT_JSTR(&r, "error", "Too many requests");
    expect_remaining(&r, "0");
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Retry-After"));

    /* Another tenant counts on its own. */
    get(s, &r, "b.example", "/api/v1/instance", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_remaining(&r, "4");

    /* A token has its own counter. */
    for (int i = 0; i < 5; i++) {
        get(s, &r, "a.example", "/api/v1/accounts/verify_credentials", tok);
        EU_IT_EXPECT_STATUS(&r, 200);
        expect_remaining(&r, left[i]);
    }
    get(s, &r, "a.example", "/api/v1/accounts/verify_credentials", tok);
    EU_IT_EXPECT_ERROR(&r, 429);

    /* Outside the API nothing is limited. */
    get(s, &r, "a.example", "/.well-known/nodeinfo", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(eu_it_resp_header(&r, "X-RateLimit-Limit"));

    /* Without Redis the API answers, unlimited. */
    if (getenv("EUNHA_TEST_REDIS_STOP")) {
        eu_it_sh("EUNHA_TEST_REDIS_STOP");
        for (int i = 0; i < 3; i++) {
            get(s, &r, "a.example", "/api/v1/instance", NULL);
            EU_IT_EXPECT_STATUS(&r, 200);
            ck_assert_ptr_null(eu_it_resp_header(&r, "X-RateLimit-Limit"));
        }
        eu_it_sh("EUNHA_TEST_REDIS_START");
    }

    free(tok);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_signup_limit)
{
    struct eu_it_server *s = eu_it_server_start(LIMITS);
    json_decref(eu_it_tenant_create(s, "signup.example", "S"));
    struct eu_it_resp r = {0};
    eu_it_http(&r, "POST", s->public_port, "signup.example", "/api/v1/apps", NULL,
               "{\"client_name\":\"S\",\"redirect_uris\":\"app://cb\",\"scopes\":\"write\"}");
    EU_IT_EXPECT_STATUS(&r, 200);
    char body[512];
    snprintf(body, sizeof(body),
             "{\"grant_type\":\"client_credentials\",\"client_id\":\"%s\",\"client_secret\":"
             "\"%s\",\"scope\":\"write\"}",
             eu_it_json_str(&r, "client_id"), eu_it_json_str(&r, "client_secret"));
    eu_it_http(&r, "POST", s->public_port, "signup.example", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *tok = strdup(eu_it_json_str(&r, "access_token"));
    for (int i = 0; i < 3; i++) {
        snprintf(body, sizeof(body),
                 "{\"username\":\"user%d\",\"email\":\"u%d@mail.example\",\"password\":"
                 "\"hunter2hunter2\",\"agreement\":true,\"locale\":\"en\"}",
                 i, i);
        eu_it_http(&r, "POST", s->public_port, "signup.example", "/api/v1/accounts", tok, body);
        if (i < 2) {
            EU_IT_EXPECT_STATUS(&r, 200);
        } else {
            EU_IT_EXPECT_ERROR(&r, 429);
            EU_IT_EXPECT_JSTR(&r, "error", "Too many requests");
        }
    }
    /* The placement database is shared: count this tenant's users only. */
    char *db = eu_it_tenant_database(s, "signup.example");
    char *tid = eu_it_tenant_id(s, "signup.example");
    char q[128];
    snprintf(q, sizeof(q), "SELECT count(*) FROM users WHERE tenant_id = %s", tid);
    ck_assert_int_eq(eu_it_pg_exec_long(db, q), 2);
    free(db);
    free(tid);
    free(tok);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* GET /api/v1/instance on a.example as if through a proxy at 127.0.0.1
 * that sent this X-Forwarded-For. */
static void
get_forwarded(struct eu_it_server *s, struct eu_it_resp *r, const char *xff)
{
    char h[200];
    snprintf(h, sizeof(h), "X-Forwarded-For: %s", xff);
    const char *headers[] = {h, NULL};
    int rc =
        eu_it_http_raw(r, "GET", s->public_port, "a.example", "/api/v1/instance", headers, NULL);
    ck_assert_msg(rc == 0, "GET: %s", r->error);
}

/*
 * Behind a trusted proxy the client is the rightmost address the proxies
 * did not add: what the client puts on the left of X-Forwarded-For cannot
 * buy it a fresh per-IP counter.
 */
START_TEST(test_forwarded_for_from_the_right)
{
    struct eu_it_opts o = {.extra_toml = LIMITS,
                           .server_toml = "trusted_proxies = [\"127.0.0.1\"]"};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    struct eu_it_resp r = {0};
    const char *const left[] = {"4", "3", "2", "1", "0"};
    for (int i = 0; i < 5; i++) {
        char xff[100];
        /* A made-up leftmost entry each time, then the proxy's own hop. */
        snprintf(xff, sizeof(xff), "10.9.8.%d, 203.0.113.7, 127.0.0.1", i + 1);
        get_forwarded(s, &r, xff);
        EU_IT_EXPECT_STATUS(&r, 200);
        expect_remaining(&r, left[i]);
    }
    get_forwarded(s, &r, "192.0.2.99, 203.0.113.7");
    EU_IT_EXPECT_ERROR(&r, 429);
    /* Another client behind the same proxy has its own counter. */
    get_forwarded(s, &r, "203.0.113.8");
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_remaining(&r, "4");
    /* Something that is not an address is not believed: the walk stops at
     * the proxy, which then counts as the client. */
    get_forwarded(s, &r, "203.0.113.7, not-an-ip");
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_remaining(&r, "4");
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *suite = suite_create("ratelimit");
    EU_IT_ADD_TCASE(suite, test_api_limit, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_signup_limit, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_forwarded_for_from_the_right, TIMEOUT);
    return eu_it_run_suite(suite);
}
