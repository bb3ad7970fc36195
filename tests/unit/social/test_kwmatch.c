/*
 * The keyword automaton (src/social/kwmatch.c): table-driven cases for the
 * rules filters rely on (overlaps, whole words at edges and punctuation,
 * ASCII-only case folding, empty sets), then random keyword sets and texts
 * checked against the keyword-by-keyword scan filters.c ran before, which
 * is the definition of the rules.
 */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "social/kwmatch_internal.h"

/* The scan filters.c used before the automaton, kept as the oracle. */
static bool
old_is_word(unsigned char c)
{
    return c >= 0x80 || isalnum(c) || c == '_';
}

static bool
old_matches(const char *text, const char *kw, bool whole_word)
{
    size_t kl = strlen(kw), tl = strlen(text);
    if (kl == 0 || kl > tl)
        return false;
    bool edge_start = whole_word && old_is_word((unsigned char)kw[0]);
    bool edge_end = whole_word && old_is_word((unsigned char)kw[kl - 1]);
    for (size_t i = 0; i + kl <= tl; i++) {
        if (strncasecmp(text + i, kw, kl) != 0)
            continue;
        if (edge_start && i > 0 && old_is_word((unsigned char)text[i - 1]))
            continue;
        if (edge_end && i + kl < tl && old_is_word((unsigned char)text[i + kl]))
            continue;
        return true;
    }
    return false;
}

/* Runs text through the patterns and returns the hits as a string of
 * pattern indices ("0,2"); static buffer. */
static const char *
hits_of(const struct eu_kwmatch_pattern *p, size_t n, const char *text)
{
    static char out[4096];
    struct eu_kwmatch *m = eu_kwmatch_new(p, n);
    ck_assert_uint_eq(eu_kwmatch_count(m), n);
    uint32_t *hits = malloc((n ? n : 1) * sizeof(*hits));
    size_t k = eu_kwmatch_run(m, text, hits);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < k; i++)
        len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%u", i ? "," : "", hits[i]);
    free(hits);
    eu_kwmatch_free(m);
    return out;
}

#define W true
#define S false

static const struct {
    const char *kw;
    bool whole;
    const char *text;
    bool want;
} CASES[] = {
    /* Whole words at the edges of the text and next to punctuation. */
    {"cats", W, "cats", true},
    {"cats", W, "I love cats", true},
    {"cats", W, "cats are fine", true},
    {"cats", W, "CATS!", true},
    {"cats", W, "(cats)", true},
    {"cats", W, "concatenate", false},
    {"cat", W, "cats", false},
    {"cat", W, "bobcat", false},
    {"cat", W, "cat_food", false},
    {"cat", W, "cat-food", true},
    {"cat", W, "cat9", false},
    {"cat", S, "concatenate", true},
    {"cat", S, "CONCATENATE", true},
    /* A whole-word keyword with a non-word edge has no boundary there. */
    {"#tag", W, "a#tag b", true},
    {"#tag", W, "#tags", false},
    {"cat!", W, "cat!!", true},
    {"cat!", W, "bobcat!", false},
    {"!!", W, "a!!b", true},
    /* Inside a phrase, the text must have the same word breaks. */
    {"hot dog", W, "a hot dog stand", true},
    {"hot dog", W, "a hot dogs stand", false},
    {"hot dog", W, "shot dog", false},
    {"t d", S, "hot dog", true},
    {"hot  dog", W, "hot dog", false},
    /* Case folds for ASCII only; other bytes match themselves, and count
     * as letters for word boundaries. */
    {"Straße", W, "die STRAßE hier", true},
    {"café", W, "un café noir", true},
    {"café", W, "cafés", false},
    {"café", W, "CAFÉ", false},
    {"ü", W, "über", false},
    {"ü", S, "über", true},
    {"日本", W, "日本語", false},
    {"日本", S, "日本語", true},
    {"über", W, "(über)", true},
    /* Longer than the text. */
    {"catalogue", S, "cat", false},
};

START_TEST(test_table)
{
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        struct eu_kwmatch_pattern p = {CASES[i].kw, CASES[i].whole};
        const char *got = hits_of(&p, 1, CASES[i].text);
        ck_assert_msg(strcmp(got, CASES[i].want ? "0" : "") == 0, "'%s'%s in '%s': got '%s'",
                      CASES[i].kw, CASES[i].whole ? " (whole)" : "", CASES[i].text, got);
        /* The oracle agrees, so the table describes the old rules. */
        ck_assert(old_matches(CASES[i].text, CASES[i].kw, CASES[i].whole) == CASES[i].want);
    }
}
END_TEST

START_TEST(test_overlapping)
{
    /* Nested, overlapping and repeated keywords each report once. */
    struct eu_kwmatch_pattern p[] = {
        {"he", S},   {"she", S}, {"his", S}, {"hers", S}, {"she", W},
        {"ushe", S}, {"he", S},  {"s", W},   {"e", S},
    };
    ck_assert_str_eq(hits_of(p, 9, "ushers"), "0,1,3,5,6,8");
    ck_assert_str_eq(hits_of(p, 9, "she sells"), "0,1,4,6,8");
    ck_assert_str_eq(hits_of(p, 9, "a s b"), "7");
    ck_assert_str_eq(hits_of(p, 9, ""), "");

    struct eu_kwmatch_pattern a[] = {{"a", W}, {"aa", W}, {"aaa", S}, {"aaaa", W}};
    ck_assert_str_eq(hits_of(a, 4, "aaaaa"), "2");
    ck_assert_str_eq(hits_of(a, 4, "aaaa aa a"), "0,1,2,3");
}
END_TEST

START_TEST(test_empty)
{
    ck_assert_str_eq(hits_of(NULL, 0, "anything"), "");
    struct eu_kwmatch_pattern p[] = {{"", W}, {"", S}, {"x", S}};
    ck_assert_str_eq(hits_of(p, 3, "x"), "2");
    ck_assert_str_eq(hits_of(p, 2, "x"), "");
    ck_assert_str_eq(hits_of(p, 3, ""), "");
}
END_TEST

/* 300 distinct keywords: each is found alone, the last one included, and
 * a text with all of them reports all of them in order. */
START_TEST(test_300)
{
    struct eu_kwmatch_pattern p[300];
    char words[300][16];
    char *all = malloc(300 * 16);
    size_t len = 0;
    for (int i = 0; i < 300; i++) {
        snprintf(words[i], sizeof(words[i]), "kw%03dx", i);
        p[i].text = words[i];
        p[i].whole_word = i % 2 == 0;
        len += (size_t)sprintf(all + len, "%s%s", i ? " " : "", words[i]);
    }
    struct eu_kwmatch *m = eu_kwmatch_new(p, 300);
    uint32_t hits[300];
    ck_assert_uint_eq(eu_kwmatch_run(m, "kw299x", hits), 1);
    ck_assert_uint_eq(hits[0], 299);
    ck_assert_uint_eq(eu_kwmatch_run(m, "prefix KW150X suffix", hits), 1);
    ck_assert_uint_eq(hits[0], 150);
    /* Odd ones are substrings, even ones whole words. */
    ck_assert_uint_eq(eu_kwmatch_run(m, "akw151xa akw152xa", hits), 1);
    ck_assert_uint_eq(hits[0], 151);
    ck_assert_uint_eq(eu_kwmatch_run(m, all, hits), 300);
    for (uint32_t i = 0; i < 300; i++)
        ck_assert_uint_eq(hits[i], i);
    ck_assert_uint_eq(eu_kwmatch_run(m, "nothing to see", hits), 0);
    ck_assert_uint_gt(eu_kwmatch_size(m), 0);
    eu_kwmatch_free(m);
    free(all);
}
END_TEST

/* Random keywords and texts over a small alphabet that has both cases,
 * word and non-word bytes and a two-byte character, so overlaps and
 * boundaries are frequent: the automaton must agree with the old scan. */
START_TEST(test_random_against_scan)
{
    static const char *const atoms[] = {"a", "A", "b", "B", "_", " ", "!", "-", "é", "1"};
    const size_t natoms = sizeof(atoms) / sizeof(atoms[0]);
    srand(12345);
    for (int round = 0; round < 2000; round++) {
        size_t n = 1 + (size_t)(rand() % 12);
        struct eu_kwmatch_pattern p[12];
        char kw[12][32];
        for (size_t i = 0; i < n; i++) {
            int l = rand() % 6;
            kw[i][0] = '\0';
            for (int j = 0; j < l; j++)
                strcat(kw[i], atoms[rand() % (int)natoms]);
            p[i].text = kw[i];
            p[i].whole_word = rand() % 2;
        }
        char text[128] = "";
        int tl = rand() % 24;
        for (int j = 0; j < tl; j++)
            strcat(text, atoms[rand() % (int)natoms]);
        char want[256] = "";
        size_t wl = 0;
        for (size_t i = 0; i < n; i++)
            if (old_matches(text, kw[i], p[i].whole_word))
                wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "%s%zu", wl ? "," : "", i);
        const char *got = hits_of(p, n, text);
        ck_assert_msg(strcmp(got, want) == 0, "round %d, text '%s': got '%s', want '%s'", round,
                      text, got, want);
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("unit.api.kwmatch");
    TCase *tc = tcase_create("kwmatch");
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_overlapping);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_300);
    tcase_add_test(tc, test_random_against_scan);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
