/*
 * The status formatter, table-driven: each row is a text and the HTML
 * Mastodon makes of it, then what the scanner finds to index.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/text.h"

#define BASE "https://ex.test"
#define LINK_ATTRS "target=\"_blank\" rel=\"nofollow noopener noreferrer\" translate=\"no\""
#define ALICE                                                                                      \
    "<span class=\"h-card\"><a href=\"https://ex.test/@alice\" class=\"u-url mention\">"           \
    "@<span>alice</span></a></span>"

static const struct eu_text_account ACCOUNTS[] = {
    {"alice", "https://ex.test/@alice", NULL},
    {"Bob.Smith", "https://ex.test/@Bob.Smith", NULL},
    {"Carol", "https://remote.example/@Carol", "Remote.Example"},
};
#define NACCOUNTS (sizeof(ACCOUNTS) / sizeof(ACCOUNTS[0]))
#define CAROL                                                                                      \
    "<span class=\"h-card\"><a href=\"https://remote.example/@Carol\" class=\"u-url mention\">"    \
    "@<span>Carol</span></a></span>"

static const struct {
    const char *text;
    const char *html;
} FORMAT_CASES[] = {
    {"", ""},
    {"  \n ", ""},
    {"hello", "<p>hello</p>"},
    {"a < b & \"c\" 'd'", "<p>a &lt; b &amp; &quot;c&quot; &#39;d&#39;</p>"},
    {"one\ntwo", "<p>one<br />two</p>"},
    {"one\r\ntwo", "<p>one<br />two</p>"},
    {"one\n\ntwo\n\n\nthree", "<p>one</p><p>two</p><p>three</p>"},
    {"trailing\n\n", "<p>trailing</p>"},
    {"\n\nlead", "<p></p><p>lead</p>"},
    {"hi @alice!", "<p>hi " ALICE "!</p>"},
    {"@ALICE", "<p>" ALICE "</p>"},
    {"@alice@ex.test", "<p>" ALICE "</p>"},
    {"@bob.smith.", "<p><span class=\"h-card\"><a href=\"https://ex.test/@Bob.Smith\" "
                    "class=\"u-url mention\">@<span>Bob.Smith</span></a></span>.</p>"},
    {"@nobody here", "<p>@nobody here</p>"},
    {"@alice@remote.example", "<p>@alice@remote.example</p>"},
    {"hi @carol@remote.example.", "<p>hi " CAROL ".</p>"},
    {"@CAROL@REMOTE.EXAMPLE @carol @carol@ex.test", "<p>" CAROL " @carol @carol@ex.test</p>"},
    {"mail me@alice.test", "<p>mail me@alice.test</p>"},
    {"#Tag and #tag2, #123 x#no", "<p><a href=\"" BASE "/tags/Tag\" class=\"mention hashtag\" "
                                  "rel=\"tag\">#<span>Tag</span></a> and <a href=\"" BASE
                                  "/tags/tag2\" class=\"mention hashtag\" rel=\"tag\">#<span>"
                                  "tag2</span></a>, #123 x#no</p>"},
    {"see https://example.com.",
     "<p>see <a href=\"https://example.com\" " LINK_ATTRS "><span class=\"invisible\">https://"
     "</span><span class=\"\">example.com</span><span class=\"invisible\"></span></a>.</p>"},
    {"http://www.example.com/a?b=1&c=2",
     "<p><a href=\"http://www.example.com/a?b=1&amp;c=2\" " LINK_ATTRS "><span class=\"invisible"
     "\">http://www.</span><span class=\"\">example.com/a?b=1&amp;c=2</span><span class=\""
     "invisible\"></span></a></p>"},
    {"https://example.com/a/very/long/path/that/goes/on/and/on",
     "<p><a href=\"https://example.com/a/very/long/path/that/goes/on/and/on\" " LINK_ATTRS "><span"
     " class=\"invisible\">https://</span><span class=\"ellipsis\">example.com/a/very/long/path/t"
     "</span><span class=\"invisible\">hat/goes/on/and/on</span></a></p>"},
    {"(https://en.wikipedia.org/wiki/C_(language))",
     "<p>(<a href=\"https://en.wikipedia.org/wiki/C_(language)\" " LINK_ATTRS "><span class=\""
     "invisible\">https://</span><span class=\"ellipsis\">en.wikipedia.org/wiki/C_(langu</span>"
     "<span class=\"invisible\">age)</span></a>)</p>"},
    {"https://example.com/#frag @x",
     "<p><a href=\"https://example.com/#frag\" " LINK_ATTRS "><span class=\"invisible\">https://"
     "</span><span class=\"\">example.com/#frag</span><span class=\"invisible\"></span></a>"
     " @x</p>"},
    {"<script>@alice</script>", "<p>&lt;script&gt;" ALICE "&lt;/script&gt;</p>"},
};

START_TEST(test_format)
{
    struct eu_arena *a = eu_arena_new();
    for (size_t i = 0; i < sizeof(FORMAT_CASES) / sizeof(FORMAT_CASES[0]); i++) {
        const char *got =
            eu_text_format(a, FORMAT_CASES[i].text, "ex.test", BASE, ACCOUNTS, NACCOUNTS);
        ck_assert_msg(strcmp(got, FORMAT_CASES[i].html) == 0, "text '%s':\n got  %s\n want %s",
                      FORMAT_CASES[i].text, got, FORMAT_CASES[i].html);
    }
    eu_arena_free(a);
}
END_TEST

static const struct {
    const char *text;
    const char *mentions; /* space-separated */
    const char *tags;
    const char *remote;
} SCAN_CASES[] = {
    {"nothing here", "", "", ""},
    {"@Alice @alice @bob@ex.test @carol@elsewhere.example", "alice bob", "",
     "carol@elsewhere.example"},
    {"#One #one #two https://x.test/#three", "", "One two", ""},
    {"a@b.c #4 #_x", "", "_x", ""},
    {"=@alice /@bob (#c) #d", "", "c d", ""},
    {"@Dan@Far.Example, @dan@far.example @dan@near.example.", "", "",
     "dan@far.example dan@near.example"},
};

static void
expect_list(char **list, size_t n, const char *want)
{
    char got[512] = "";
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(got, " ");
        strcat(got, list[i]);
    }
    ck_assert_str_eq(got, want);
}

START_TEST(test_scan)
{
    struct eu_arena *a = eu_arena_new();
    for (size_t i = 0; i < sizeof(SCAN_CASES) / sizeof(SCAN_CASES[0]); i++) {
        struct eu_text_scan sc;
        eu_text_scan(a, SCAN_CASES[i].text, "ex.test", &sc);
        expect_list(sc.mentions, sc.n_mentions, SCAN_CASES[i].mentions);
        expect_list(sc.tags, sc.n_tags, SCAN_CASES[i].tags);
        expect_list(sc.remote, sc.n_remote, SCAN_CASES[i].remote);
    }
    eu_arena_free(a);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("unit.api.text");
    TCase *tc = tcase_create("text");
    tcase_add_test(tc, test_format);
    tcase_add_test(tc, test_scan);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
