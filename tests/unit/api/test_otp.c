/*
 * TOTP arithmetic (src/api/otp.c) against RFC 6238 Appendix B's SHA-1
 * vectors, base32 as authenticator apps write it, the ±1 step window and
 * the consumed step, and the set-up's QR code and recovery codes.
 */
#include <check.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/otp_internal.h"
#include "eunha/arena.h"

/* RFC 6238's SHA-1 seed, "12345678901234567890", in base32. */
#define RFC_SECRET "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

START_TEST(test_rfc6238_vectors)
{
    static const struct {
        long long t;
        long code;
    } v[] = {
        {59, 94287082},         {1111111109, 7081804},  {1111111111, 14050471},
        {1234567890, 89005924}, {2000000000, 69279037}, {20000000000LL, 65353130},
    };
    const unsigned char *key = (const unsigned char *)"12345678901234567890";
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        ck_assert_int_eq(eu_otp_hotp(key, 20, (uint64_t)(v[i].t / 30), 8), v[i].code);
    unsigned char out[32];
    ck_assert_int_eq(eu_otp_base32_decode(RFC_SECRET, out, sizeof(out)), 20);
    ck_assert_int_eq(memcmp(out, key, 20), 0);
    ck_assert_int_eq(eu_otp_base32_decode("gezdgnbvgy3tqojqgezdgnbvgy3tqojq", out, sizeof(out)),
                     20);
    ck_assert_int_eq(eu_otp_base32_decode("GEZ1", out, sizeof(out)), -1);
    ck_assert_int_eq(eu_otp_base32_decode(RFC_SECRET, out, 10), -1);
}
END_TEST

START_TEST(test_match_window)
{
    /* At t=59 (step 1) the 6-digit code is the last 6 of 94287082. */
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "287082", 59, -1), 1);
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "287 082", 59, -1), 1);
    /* One step either side is accepted, two are not. */
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "287082", 89, -1), 1);
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "287082", 29, -1), 1);
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "287082", 119, -1), -1);
    /* A consumed step is never accepted again. */
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "287082", 59, 1), -1);
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "287082", 59, 0), 1);
    /* Wrong, short, long or non-digit codes, or no secret. */
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "287083", 59, -1), -1);
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "87082", 59, -1), -1);
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "2870820", 59, -1), -1);
    ck_assert_int_eq(eu_otp_match(RFC_SECRET, "28708a", 59, -1), -1);
    ck_assert_int_eq(eu_otp_match(NULL, "287082", 59, -1), -1);
    ck_assert_int_eq(eu_otp_match("!!", "287082", 59, -1), -1);
}
END_TEST

START_TEST(test_secret_qr_recovery)
{
    char a[EU_OTP_SECRET_LEN + 1], b[EU_OTP_SECRET_LEN + 1];
    eu_otp_secret_new(a);
    eu_otp_secret_new(b);
    ck_assert_uint_eq(strlen(a), EU_OTP_SECRET_LEN);
    ck_assert_str_ne(a, b);
    unsigned char raw[32];
    ck_assert_int_eq(eu_otp_base32_decode(a, raw, sizeof(raw)), 20);

    struct eu_arena *ar = eu_arena_new();
    const char *uri = eu_otp_uri(ar, "a.example", "alice@a.example", a);
    ck_assert_ptr_nonnull(strstr(uri, "otpauth://totp/a.example%3Aalice%40a.example?secret="));
    const char *svg = eu_otp_qr_svg(ar, uri);
    ck_assert_ptr_nonnull(svg);
    ck_assert_int_eq(strncmp(svg, "<svg ", 5), 0);
    ck_assert_ptr_nonnull(strstr(svg, "</svg>"));

    const char *codes[EU_OTP_RECOVERY_CODES], *lit;
    eu_otp_recovery_new(ar, codes, &lit);
    char h[65];
    for (int i = 0; i < EU_OTP_RECOVERY_CODES; i++) {
        ck_assert_uint_eq(strlen(codes[i]), EU_OTP_RECOVERY_LEN);
        eu_otp_recovery_hash(codes[i], h);
        ck_assert_ptr_nonnull(strstr(lit, h));
    }
    /* Typed with spaces or in upper case, a code hashes the same. */
    char typed[64];
    snprintf(typed, sizeof(typed), "%.8s %s", codes[0], codes[0] + 8);
    for (char *c = typed; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'f' ? *c - 32 : *c);
    char h2[65];
    eu_otp_recovery_hash(typed, h2);
    eu_otp_recovery_hash(codes[0], h);
    ck_assert_str_eq(h, h2);
    eu_arena_free(ar);
}
END_TEST

int
main(void)
{
    if (sodium_init() < 0)
        return 1;
    Suite *s = suite_create("otp");
    TCase *tc = tcase_create("otp");
    tcase_add_test(tc, test_rfc6238_vectors);
    tcase_add_test(tc, test_match_window);
    tcase_add_test(tc, test_secret_qr_recovery);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
