/*
 * Runs the masto.js end-to-end script (tests/e2e/e2e.mjs) against a real
 * server: starts `eunha serve` through the integration harness, makes a
 * tenant answering for localhost (an IP address is no tenant domain) and the account "bob" through
 * the admin API, then runs node with the server's address. The script registers the other account
 * itself and drives the rest through the client library.
 *
 * Exits 77 (CTest's "skipped") when node or the npm packages are missing,
 * which scripts/test.sh installs; every other failure fails the test.
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
    return eu_it_run_suite(suite);
}
