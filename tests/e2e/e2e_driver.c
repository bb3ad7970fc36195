/*
 * Runs the masto.js end-to-end script (tests/e2e/e2e.mjs) against a real
 * server: starts `eunha serve` through the integration harness, makes a
 * tenant answering for localhost (an IP address is no tenant domain) and the account "bob" through
 * the admin API, then runs node with the server's address. The script registers the other account
 * itself and drives the rest through the client library.
 *
 * Exits 77 (CTest's "skipped") when node or the npm packages are missing,
 * which scripts/test.sh installs; every other failure fails the test.
 * A third case runs tests/e2e/admin.mjs, masto.js's admin client against a
 * tenant's own staff.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef EUNHA_E2E_DIR
#error "EUNHA_E2E_DIR must name tests/e2e"
#endif

/* The tenant is the address clients connect to, so no Host header trick is
 * needed in node (whose fetch will not let a script set Host). */
#define HOST "localhost"
#define SKIP 77

START_TEST(test_masto_js)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, HOST, "End to end"));
    eu_it_account_create(s, HOST, "bob");

    char url[64], cmd[1024];
    snprintf(url, sizeof(url), "http://%s:%d", HOST, s->public_port);
    setenv("EUNHA_E2E_URL", url, 1);
    /* The server listens on 127.0.0.1 only; node may try ::1 first. */
    setenv("NODE_OPTIONS", "--dns-result-order=ipv4first", 1);
    setenv("EUNHA_E2E_BOB", "bob@" HOST, 1);
    /* The password eu_it_account_create() gives every account. */
    setenv("EUNHA_E2E_PASSWORD", "correct horse battery staple", 1);
    snprintf(cmd, sizeof(cmd), "cd '%s' && node e2e.mjs", EUNHA_E2E_DIR);
    int rc = system(cmd);
    int code = rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
    if (code != 0)
        eu_it_server_print_log(s);
    ck_assert_msg(code == 0, "node e2e.mjs exited with %d", code);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* masto.js's streaming client over WebSocket (tests/e2e/streaming.mjs). */
START_TEST(test_masto_js_streaming)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, HOST, "End to end"));
    eu_it_account_create(s, HOST, "bob");
    eu_it_account_create(s, HOST, "carol");

    char url[64], cmd[1024];
    snprintf(url, sizeof(url), "http://%s:%d", HOST, s->public_port);
    setenv("EUNHA_E2E_URL", url, 1);
    /* The server listens on 127.0.0.1 only; node may try ::1 first. */
    setenv("NODE_OPTIONS", "--dns-result-order=ipv4first", 1);
    setenv("EUNHA_E2E_BOB", "bob@" HOST, 1);
    setenv("EUNHA_E2E_CAROL", "carol@" HOST, 1);
    setenv("EUNHA_E2E_PASSWORD", "correct horse battery staple", 1);
    snprintf(cmd, sizeof(cmd), "cd '%s' && node streaming.mjs", EUNHA_E2E_DIR);
    int rc = system(cmd);
    int code = rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
    if (code != 0)
        eu_it_server_print_log(s);
    ck_assert_msg(code == 0, "node streaming.mjs exited with %d", code);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* Sets the role of account id of HOST through the operator's API: body is
 * {"role": name} or {"role_id": id}. */
static void
set_role(struct eu_it_server *s, const char *id, const char *body)
{
    char path[256];
    struct eu_it_resp r = {0};
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST, id);
    eu_it_admin(s, "PUT", path, body, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

/*
 * masto.js's admin client (tests/e2e/admin.mjs) for a tenant's own staff:
 * olga an admin, mona a moderator, mick a custom role with manage_reports
 * only, bob and rita users; the tenant approves sign-ups. Tokens are
 * written straight into the database, with the admin scopes for the staff.
 */
START_TEST(test_masto_js_admin)
{
    static const char *const names[] = {"olga", "mona", "mick", "bob", "rita"};
    static const char *const envs[] = {"EUNHA_E2E_TOKEN_OLGA", "EUNHA_E2E_TOKEN_MONA",
                                       "EUNHA_E2E_TOKEN_MICK", "EUNHA_E2E_TOKEN_BOB",
                                       "EUNHA_E2E_TOKEN_RITA"};
    /* Trends scored a second after activity, from two accounts on. */
    struct eu_it_server *s =
        eu_it_server_start("[workers]\ntrends_refresh_seconds = 1\ntrends_min_accounts = 2\n");
    json_decref(eu_it_tenant_create(s, HOST, "End to end"));
    char *ids[5];
    for (size_t i = 0; i < 5; i++) {
        ids[i] = eu_it_account_seed(s, HOST, names[i]);
        char *tok = eu_it_user_token(s, HOST, names[i],
                                     i < 3 ? "read write follow admin:read admin:write"
                                           : "read write follow");
        setenv(envs[i], tok, 1);
        free(tok);
    }
    eu_it_tenant_patch(s, HOST, "{\"registrations\":\"approval\"}");
    set_role(s, ids[0], "{\"role\":\"admin\"}");
    set_role(s, ids[1], "{\"role\":\"moderator\"}");
    struct eu_it_resp r = {0};
    eu_it_admin(s, "POST", "/admin/v1/tenants/" HOST "/roles",
                "{\"name\":\"Reports desk\",\"position\":5,\"permissions\":\"16\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    char body[128];
    snprintf(body, sizeof(body), "{\"role_id\":\"%s\"}", eu_it_json_str(&r, "id"));
    set_role(s, ids[2], body);
    eu_it_resp_free(&r);

    char url[64], cmd[1024];
    snprintf(url, sizeof(url), "http://%s:%d", HOST, s->public_port);
    setenv("EUNHA_E2E_URL", url, 1);
    setenv("NODE_OPTIONS", "--dns-result-order=ipv4first", 1);
    snprintf(cmd, sizeof(cmd), "cd '%s' && node admin.mjs", EUNHA_E2E_DIR);
    int rc = system(cmd);
    int code = rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
    if (code != 0)
        eu_it_server_print_log(s);
    ck_assert_msg(code == 0, "node admin.mjs exited with %d", code);
    for (size_t i = 0; i < 5; i++)
        free(ids[i]);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    if (system("node --version >/dev/null 2>&1") != 0 ||
        access(EUNHA_E2E_DIR "/node_modules/masto/package.json", R_OK) != 0) {
        fprintf(stderr, "e2e: node or masto is not installed (run scripts/test.sh or npm install"
                        " in tests/e2e); skipping\n");
        return SKIP;
    }
    Suite *suite = suite_create("e2e");
    EU_IT_ADD_TCASE(suite, test_masto_js, 300);
    EU_IT_ADD_TCASE(suite, test_masto_js_streaming, 300);
    EU_IT_ADD_TCASE(suite, test_masto_js_admin, 300);
    return eu_it_run_suite(suite);
}
