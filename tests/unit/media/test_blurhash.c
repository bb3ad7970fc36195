/*
 * eu_blurhash_encode against published vectors and the format's rules.
 *
 * The all-black 360x200 vector is from the test suite of Nheko's C++
 * blurhash (github.com/Nheko-Reborn/blurhash, blurhash.cpp, TEST_CASE
 * "encode"), which checks it against Wolt's reference encoder; the
 * solid-colour cases follow from the same definition (every AC component
 * zero, so each quantises to 9,9,9 = "fQ").
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/media.h"

static const char b83[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";

START_TEST(test_black)
{
    unsigned char *px = calloc(360 * 200, 3);
    char out[64];
    ck_assert_int_eq(eu_blurhash_encode(px, 360, 200, 360 * 3, 4, 3, out, sizeof out), 28);
    ck_assert_str_eq(out, "L00000fQfQfQfQfQfQfQfQfQfQfQ");
    free(px);
}
END_TEST

START_TEST(test_white_one_component)
{
    unsigned char px[8 * 8 * 3];
    memset(px, 255, sizeof px);
    char out[64];
    /* 0xFFFFFF in four base-83 digits is "TSUA"; one component: size 0, max 0. */
    ck_assert_int_eq(eu_blurhash_encode(px, 8, 8, 24, 1, 1, out, sizeof out), 6);
    ck_assert_str_eq(out, "00TSUA");
}
END_TEST

START_TEST(test_gradient_shape)
{
    int w = 64, h = 48;
    unsigned char *px = malloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *p = px + ((size_t)y * w + x) * 3;
            p[0] = (unsigned char)(x * 4);
            p[1] = (unsigned char)(y * 5);
            p[2] = 128;
        }
    char out[64];
    ck_assert_int_eq(eu_blurhash_encode(px, w, h, (size_t)w * 3, 4, 3, out, sizeof out), 28);
    ck_assert_int_eq(out[0], 'L'); /* (4-1) + (3-1)*9 = 21 */
    for (const char *c = out; *c; c++)
        ck_assert_ptr_nonnull(strchr(b83, *c));
    /* A horizontal red ramp: the first horizontal AC component is not zero. */
    ck_assert(strncmp(out + 6, "fQ", 2) != 0);
    /* 9x9 needs 2 + 4 + 160 + 1 bytes. */
    char big[200];
    ck_assert_int_eq(eu_blurhash_encode(px, w, h, (size_t)w * 3, 9, 9, big, sizeof big), 166);
    ck_assert_int_eq(big[0], '|'); /* 8 + 8 * 9 = 80 */
    free(px);
}
END_TEST

START_TEST(test_bad_arguments)
{
    unsigned char px[12] = {0};
    char out[64];
    ck_assert_int_eq(eu_blurhash_encode(NULL, 2, 2, 6, 4, 3, out, sizeof out), -1);
    ck_assert_int_eq(eu_blurhash_encode(px, 0, 2, 6, 4, 3, out, sizeof out), -1);
    ck_assert_int_eq(eu_blurhash_encode(px, 2, 2, 6, 0, 3, out, sizeof out), -1);
    ck_assert_int_eq(eu_blurhash_encode(px, 2, 2, 6, 10, 3, out, sizeof out), -1);
    ck_assert_int_eq(eu_blurhash_encode(px, 2, 2, 5, 4, 3, out, sizeof out), -1);
    ck_assert_int_eq(eu_blurhash_encode(px, 2, 2, 6, 4, 3, out, 28), -1);
    ck_assert_int_eq(eu_blurhash_encode(px, 2, 2, 6, 4, 3, out, 29), 28);
}
END_TEST

static Suite *
blurhash_suite(void)
{
    Suite *s = suite_create("blurhash");
    TCase *tc = tcase_create("encode");
    tcase_add_test(tc, test_black);
    tcase_add_test(tc, test_white_one_component);
    tcase_add_test(tc, test_gradient_shape);
    tcase_add_test(tc, test_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(blurhash_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
