/*
 * Tests for the proxy-header readers (src/http/server_internal.h): the
 * client address walked from the right of X-Forwarded-For past trusted
 * proxies, and the first item of X-Forwarded-Host/-Proto.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/config.h"
#include "http/server_internal.h"

static char *proxies[] = {"10.0.0.0/8", "::1"};

static const struct {
    const char *xff, *want;
} xff_cases[] = {
    {"203.0.113.7", "203.0.113.7"},
    /* Our proxies appended the right-hand entries; the first other one is
     * the client, whatever it wrote on the left. */
    {"1.1.1.1, 203.0.113.7, 10.0.0.2", "203.0.113.7"},
    {"203.0.113.7 ,\t10.0.0.2 , 10.1.1.1", "203.0.113.7"},
    {"10.0.0.3, 10.0.0.2", "10.0.0.3"},
    /* An entry that is no address ends the walk at the last one believed. */
    {"203.0.113.7, unknown, 10.0.0.2", "10.0.0.2"},
    {"garbage", "peer"},
    {"", "peer"},
    {",,,", "peer"},
    {"2001:db8::1, ::1", "2001:db8::1"},
};

START_TEST(test_forwarded_client)
{
    struct eu_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.trusted_proxies = proxies;
    cfg.n_trusted_proxies = 2;
    struct eu_arena *a = eu_arena_new();
    ck_assert_str_eq(eu_http_forwarded_client(a, xff_cases[_i].xff, "peer", &cfg),
                     xff_cases[_i].want);
    eu_arena_free(a);
}
END_TEST

START_TEST(test_list_first)
{
    struct eu_arena *a = eu_arena_new();
    ck_assert_str_eq(eu_http_list_first(a, "https"), "https");
    ck_assert_str_eq(eu_http_list_first(a, " https , http"), "https");
    ck_assert_str_eq(eu_http_list_first(a, "\ta.example\t,b.example"), "a.example");
    ck_assert_str_eq(eu_http_list_first(a, ", x"), "");
    ck_assert_str_eq(eu_http_list_first(a, "   "), "");
    eu_arena_free(a);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("unit.http.forwarded");
    TCase *tc = tcase_create("forwarded");
    tcase_add_loop_test(tc, test_forwarded_client, 0, sizeof xff_cases / sizeof xff_cases[0]);
    tcase_add_test(tc, test_list_first);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
