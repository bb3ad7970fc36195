/*
 * Tests for the pure halves of pagination (src/http/page_internal.h): ids
 * and limit read from the query as Mastodon reads them, and the Link value
 * keeping the client's other parameters while dropping the paging ones.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/page.h"
#include "http/page_internal.h"

static const struct {
    const char *max_id, *since_id, *min_id, *limit;
    const char *want_max, *want_since, *want_min;
    int want_limit;
} page_cases[] = {
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, 20},
    {"110000000000000001", NULL, NULL, "40", "110000000000000001", NULL, NULL, 40},
    {"", "", "", "", NULL, NULL, NULL, 20},
    /* Ids Mastodon cannot read are ignored, not refused. */
    {"abc", "-1", "1234567890123456789", NULL, NULL, NULL, NULL, 20},
    {NULL, "5", "6", "0", NULL, "5", "6", 1},
    {NULL, NULL, NULL, "-7", NULL, NULL, NULL, 1},
    {NULL, NULL, NULL, "99999999999999999999", NULL, NULL, NULL, 40},
    /* A limit that is not a whole number keeps the default. */
    {NULL, NULL, NULL, "20x", NULL, NULL, NULL, 20},
    {NULL, NULL, NULL, "41", NULL, NULL, NULL, 40},
};

static void
expect_id(const char *got, const char *want)
{
    if (want)
        ck_assert_str_eq(got, want);
    else
        ck_assert_ptr_null(got);
}

START_TEST(test_from_values)
{
    struct eu_page page;
    eu_page_from_values(&page, page_cases[_i].max_id, page_cases[_i].since_id,
                        page_cases[_i].min_id, page_cases[_i].limit, 20, 40);
    expect_id(page.max_id, page_cases[_i].want_max);
    expect_id(page.since_id, page_cases[_i].want_since);
    expect_id(page.min_id, page_cases[_i].want_min);
    ck_assert_int_eq(page.limit, page_cases[_i].want_limit);
    char want[12];
    snprintf(want, sizeof want, "%d", page_cases[_i].want_limit);
    ck_assert_str_eq(page.limit_s, want);
}
END_TEST

static const struct {
    const char *query, *rest;
} link_cases[] = {
    {NULL, ""},
    {"", ""},
    {"limit=5", "limit=5&"},
    {"max_id=9&limit=5&min_id=1&since_id=2", "limit=5&"},
    {"local=true&&only_media=1&", "local=true&only_media=1&"},
    /* Only whole "max_id=" items are paging keys. */
    {"xmax_id=3&max_id", "xmax_id=3&max_id&"},
};

START_TEST(test_link_value)
{
    struct eu_arena *a = eu_arena_new();
    const char *got = eu_page_link_value(a, "https://a.example", "/api/v1/timelines/home",
                                         link_cases[_i].query, "20", "10");
    const char *rest = link_cases[_i].rest;
    char *want =
        eu_arena_sprintf(a,
                         "<https://a.example/api/v1/timelines/home?%smax_id=10>; rel=\"next\", "
                         "<https://a.example/api/v1/timelines/home?%smin_id=20>; rel=\"prev\"",
                         rest, rest);
    ck_assert_str_eq(got, want);
    eu_arena_free(a);
}
END_TEST

/* Ids written and read back without printf or strtoll: every width,
 * the ends of the range, and where reading stops. */
START_TEST(test_id_text_and_parse)
{
    char buf[32];
    int64_t v = 0;
    for (int digits = 1; digits <= 19; digits++) {
        v = v * 10 + digits % 10;
        size_t n = eu_id_text(v, buf);
        buf[n] = '\0';
        char want[32];
        snprintf(want, sizeof(want), "%lld", (long long)v);
        ck_assert_str_eq(buf, want);
        const char *end = NULL;
        ck_assert_int_eq(eu_id_parse(buf, &end), v);
        ck_assert_ptr_eq(end, buf + n);
    }
    ck_assert_uint_eq(eu_id_text(INT64_MAX, buf), 19);
    ck_assert_int_eq(memcmp(buf, "9223372036854775807", 19), 0);
    ck_assert_uint_eq(eu_id_text(0, buf), 1);
    ck_assert_int_eq(buf[0], '0');
    ck_assert_uint_eq(eu_id_text(-5, buf), 1); /* negative as 0 */
    ck_assert_int_eq(buf[0], '0');
    const char *end = NULL;
    ck_assert_int_eq(eu_id_parse("123,456", &end), 123);
    ck_assert_str_eq(end, ",456");
    ck_assert_int_eq(eu_id_parse("x1", &end), 0);
    ck_assert_str_eq(end, "x1");
    ck_assert_int_eq(eu_id_parse("9999999999999999999", NULL), INT64_MAX);
    /* At most 19 digits are read. */
    ck_assert_int_eq(eu_id_parse("12345678901234567890", &end), 1234567890123456789LL);
    ck_assert_str_eq(end, "0");
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("unit.api.page");
    TCase *tc = tcase_create("page");
    tcase_add_loop_test(tc, test_from_values, 0, sizeof page_cases / sizeof page_cases[0]);
    tcase_add_loop_test(tc, test_link_value, 0, sizeof link_cases / sizeof link_cases[0]);
    tcase_add_test(tc, test_id_text_and_parse);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
