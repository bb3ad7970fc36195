/*
 * Tests for the request arena: alignment of every allocation, big
 * allocations, the order cleanups run in, and the string helpers.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"

START_TEST(test_alignment)
{
    struct eu_arena *a = eu_arena_new();
    static const size_t sizes[] = {1, 3, 7, 16, 17, 33, 100, 1, 2000, 5, 4096, 1, 9};
    for (int round = 0; round < 50; round++) {
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            unsigned char *p = eu_arena_alloc(a, sizes[i]);
            ck_assert_ptr_nonnull(p);
            ck_assert_uint_eq((uintptr_t)p % 16, 0);
            memset(p, 0xab, sizes[i]); /* ASan catches an overrun */
        }
    }
    eu_arena_free(a);
}
END_TEST

START_TEST(test_distinct_and_intact)
{
    /* Earlier allocations keep their contents after chunks are added. */
    struct eu_arena *a = eu_arena_new();
    char *ptrs[500];
    for (int i = 0; i < 500; i++)
        ptrs[i] = eu_arena_sprintf(a, "value-%d", i);
    for (int i = 0; i < 500; i++) {
        char want[32];
        snprintf(want, sizeof want, "value-%d", i);
        ck_assert_str_eq(ptrs[i], want);
    }
    ck_assert_ptr_ne(eu_arena_alloc(a, 0), eu_arena_alloc(a, 0));
    eu_arena_free(a);
}
END_TEST

START_TEST(test_large)
{
    struct eu_arena *a = eu_arena_new();
    char *small = eu_arena_strdup(a, "before");
    size_t big = 1024 * 1024;
    unsigned char *p = eu_arena_alloc(a, big);
    ck_assert_uint_eq((uintptr_t)p % 16, 0);
    memset(p, 1, big);
    p[big - 1] = 2;
    char *after = eu_arena_strdup(a, "after");
    ck_assert_str_eq(small, "before");
    ck_assert_str_eq(after, "after");
    ck_assert_int_eq(p[big - 1], 2);
    ck_assert_uint_ge(eu_arena_used(a), big);
    unsigned char *z = eu_arena_calloc(a, 70000);
    for (size_t i = 0; i < 70000; i++)
        ck_assert_int_eq(z[i], 0);
    eu_arena_free(a);
}
END_TEST

START_TEST(test_used)
{
    struct eu_arena *a = eu_arena_new();
    ck_assert_uint_eq(eu_arena_used(a), 0);
    eu_arena_alloc(a, 10);
    eu_arena_alloc(a, 20);
    ck_assert_uint_eq(eu_arena_used(a), 30);
    eu_arena_free(a);
}
END_TEST

static int order[8];
static int n_order;

static void
record(void *data)
{
    order[n_order++] = *(int *)data;
}

START_TEST(test_cleanup_lifo)
{
    static int ids[] = {1, 2, 3};
    n_order = 0;
    struct eu_arena *a = eu_arena_new();
    eu_arena_on_free(a, record, &ids[0]);
    eu_arena_alloc(a, 100000); /* cleanups survive chunk changes */
    eu_arena_on_free(a, record, &ids[1]);
    eu_arena_on_free(a, record, &ids[2]);
    ck_assert_int_eq(n_order, 0);
    eu_arena_free(a);
    ck_assert_int_eq(n_order, 3);
    ck_assert_int_eq(order[0], 3);
    ck_assert_int_eq(order[1], 2);
    ck_assert_int_eq(order[2], 1);
}
END_TEST

static void
read_arena_string(void *data)
{
    /* Arena memory is still valid while cleanups run. */
    order[n_order++] = strcmp(data, "still here") == 0;
}

START_TEST(test_cleanup_sees_memory)
{
    n_order = 0;
    struct eu_arena *a = eu_arena_new();
    eu_arena_on_free(a, read_arena_string, eu_arena_strdup(a, "still here"));
    eu_arena_free(a);
    ck_assert_int_eq(n_order, 1);
    ck_assert_int_eq(order[0], 1);
}
END_TEST

START_TEST(test_strings)
{
    struct eu_arena *a = eu_arena_new();
    ck_assert_str_eq(eu_arena_strdup(a, "hello"), "hello");
    ck_assert_ptr_null(eu_arena_strdup(a, NULL));
    ck_assert_str_eq(eu_arena_strndup(a, "hello", 3), "hel");
    ck_assert_str_eq(eu_arena_strndup(a, "hi", 10), "hi");
    ck_assert_str_eq(eu_arena_sprintf(a, "%s=%d", "n", 42), "n=42");
    ck_assert_str_eq(eu_arena_sprintf(a, "%s", ""), "");
    char long_arg[10000];
    memset(long_arg, 'x', sizeof long_arg - 1);
    long_arg[sizeof long_arg - 1] = '\0';
    char *s = eu_arena_sprintf(a, "[%s]", long_arg);
    ck_assert_uint_eq(strlen(s), sizeof long_arg + 1);
    ck_assert_int_eq(s[0], '[');
    ck_assert_int_eq(s[sizeof long_arg], ']');
    eu_arena_free(a);
    eu_arena_free(NULL);
}
END_TEST

static Suite *
arena_suite(void)
{
    Suite *s = suite_create("arena");
    TCase *tc = tcase_create("alloc");
    tcase_add_test(tc, test_alignment);
    tcase_add_test(tc, test_distinct_and_intact);
    tcase_add_test(tc, test_large);
    tcase_add_test(tc, test_used);
    suite_add_tcase(s, tc);
    tc = tcase_create("cleanup");
    tcase_add_test(tc, test_cleanup_lifo);
    tcase_add_test(tc, test_cleanup_sees_memory);
    suite_add_tcase(s, tc);
    tc = tcase_create("strings");
    tcase_add_test(tc, test_strings);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(arena_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
