/*
 * The pages' text catalogue (src/api/web_text.c): a translation answers in
 * its language, anything it lacks reads in English, and every translation
 * keeps its key's printf conversions, so a page's arguments land where
 * the translator put them and never read past them.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/web_text.h"

START_TEST(test_lookup)
{
    ck_assert_str_eq(eu_web_text("ko", "Sign in"), "로그인");
    ck_assert_str_eq(eu_web_text("ko", "Not a text of the catalogue"),
                     "Not a text of the catalogue");
    ck_assert_str_eq(eu_web_text("en", "Sign in"), "Sign in");
    ck_assert_str_eq(eu_web_text("xx", "Sign in"), "Sign in");
    ck_assert_str_eq(eu_web_text(NULL, "Sign in"), "Sign in");
}
END_TEST

START_TEST(test_conversions_kept)
{
    char bad[512] = "";
    ck_assert_msg(eu_web_text_check(bad, sizeof(bad)), "conversions differ: %s", bad);
}
END_TEST

/* No key twice in a table: the second would never be read. */
START_TEST(test_no_duplicate_keys)
{
    for (const struct eu_web_text_lang *l = eu_web_text_langs; l->lang; l++)
        for (const struct eu_web_text_pair *p = l->pairs; p->en; p++)
            for (const struct eu_web_text_pair *q = p + 1; q->en; q++)
                ck_assert_msg(strcmp(p->en, q->en) != 0, "%s: \"%s\" twice", l->lang, p->en);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("unit.api.web_text");
    TCase *tc = tcase_create("web_text");
    tcase_add_test(tc, test_lookup);
    tcase_add_test(tc, test_conversions_kept);
    tcase_add_test(tc, test_no_duplicate_keys);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
