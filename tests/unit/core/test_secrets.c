/*
 * Tests for secrets at rest (include/eunha/secrets.h): the key file is
 * made once (32 bytes, mode 0600) and read back by a later start; a sealed
 * value is not the clear one, opens to it, and differs each time (a fresh
 * nonce); an old clear value passes through; a value sealed under another
 * key, or damaged, does not open; a key file others may read or of the
 * wrong size is refused.
 */
#include <check.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eunha/secrets.h"

/* A scratch directory of the test's own; the caller frees it. */
static char *
scratch(void)
{
    char *dir = strdup("/tmp/eunha-secrets-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

START_TEST(test_key_file_made_once)
{
    char *dir = scratch(), path[256], err[256];
    snprintf(path, sizeof path, "%s/secrets.key", dir);
    ck_assert_int_eq(eu_secrets_load(path, err, sizeof err), 0);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 32);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    char *sealed = eu_secret_seal("JBSWY3DPEHPK3PXP");
    ck_assert_ptr_nonnull(sealed);
    /* A later start reads the same key: what was sealed opens. */
    eu_secrets_unload();
    ck_assert_int_eq(eu_secrets_load(path, err, sizeof err), 0);
    char *clear = eu_secret_open(sealed);
    ck_assert_ptr_nonnull(clear);
    ck_assert_str_eq(clear, "JBSWY3DPEHPK3PXP");
    eu_secret_free(clear);
    eu_secret_free(sealed);
    eu_secrets_unload();
    unlink(path);
    rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_seal_and_open)
{
    char *dir = scratch(), path[256], other[256], err[256];
    snprintf(path, sizeof path, "%s/a.key", dir);
    snprintf(other, sizeof other, "%s/b.key", dir);
    ck_assert_int_eq(eu_secrets_load(path, err, sizeof err), 0);
    const char *token = "a-bearer-token-of-an-app";
    char *s1 = eu_secret_seal(token), *s2 = eu_secret_seal(token);
    ck_assert(eu_secret_is_sealed(s1));
    ck_assert_ptr_null(strstr(s1, token));
    ck_assert_str_ne(s1, s2);
    char *c = eu_secret_open(s2);
    ck_assert_str_eq(c, token);
    eu_secret_free(c);
    /* A clear value of an older row passes through. */
    c = eu_secret_open("JBSWY3DPEHPK3PXP");
    ck_assert_str_eq(c, "JBSWY3DPEHPK3PXP");
    eu_secret_free(c);
    /* Damaged: one letter changed. */
    char *bad = strdup(s1);
    size_t at = strlen(bad) - 3;
    bad[at] = bad[at] == 'A' ? 'B' : 'A';
    ck_assert_ptr_null(eu_secret_open(bad));
    free(bad);
    ck_assert_ptr_null(eu_secret_open(EU_SECRET_PREFIX "!!"));
    /* Another key opens nothing sealed under this one. */
    eu_secrets_unload();
    ck_assert_int_eq(eu_secrets_load(other, err, sizeof err), 0);
    ck_assert_ptr_null(eu_secret_open(s1));
    /* No key: nothing sealed, nothing opened. */
    eu_secrets_unload();
    ck_assert_ptr_null(eu_secret_seal(token));
    ck_assert_ptr_null(eu_secret_open(s1));
    eu_secret_free(s1);
    eu_secret_free(s2);
    unlink(path);
    unlink(other);
    rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_bad_key_files)
{
    char *dir = scratch(), path[256], err[256];
    snprintf(path, sizeof path, "%s/open.key", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 32; i++)
        fputc('k', f);
    fclose(f);
    chmod(path, 0644);
    ck_assert_int_eq(eu_secrets_load(path, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "read by others"));
    chmod(path, 0600);
    ck_assert_int_eq(eu_secrets_load(path, err, sizeof err), 0);
    eu_secrets_unload();
    f = fopen(path, "a");
    fputc('x', f);
    fclose(f);
    ck_assert_int_eq(eu_secrets_load(path, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "exactly 32 bytes"));
    ck_assert(!eu_secrets_ready());
    snprintf(path, sizeof path, "%s/no/such/dir.key", dir);
    ck_assert_int_eq(eu_secrets_load(path, err, sizeof err), -1);
    snprintf(path, sizeof path, "%s/open.key", dir);
    unlink(path);
    rmdir(dir);
    free(dir);
}
END_TEST

int
main(void)
{
    if (sodium_init() < 0)
        return EXIT_FAILURE;
    Suite *s = suite_create("secrets");
    TCase *tc = tcase_create("secrets");
    tcase_add_test(tc, test_key_file_made_once);
    tcase_add_test(tc, test_seal_and_open);
    tcase_add_test(tc, test_bad_key_files);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
