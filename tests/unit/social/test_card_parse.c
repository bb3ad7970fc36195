/*
 * Reading for preview cards (src/social/card_parse.c): what a page's head
 * gives (OpenGraph before Twitter before plain tags, relative URLs made
 * absolute, a canonical URL of another origin ignored, robots noindex),
 * that a body or a hostile nesting costs nothing dangerous, which link of
 * a status is its card's, and an oEmbed iframe cut down to Mastodon's
 * attributes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/cards.h"

START_TEST(test_page)
{
    const char *html =
        "<!DOCTYPE html><html lang=\"pt-BR\"><head><title> Plain title </title>"
        "<meta name=\"twitter:title\" content=\"Twitter title\">"
        "<meta property=\"og:title\" content=\"OG title\">"
        "<meta name=\"description\" content=\"Plain description\">"
        "<meta name=\"twitter:image\" content=\"https://cdn.example/t.png\">"
        "<meta property=\"og:image\" content=\"/img/a.png\">"
        "<meta property=\"og:image:alt\" content=\"A picture\">"
        "<meta property=\"og:site_name\" content=\"Site\">"
        "<meta property=\"article:published_time\" content=\"2026-01-02T03:04:05Z\">"
        "<link rel=\"canonical\" href=\"https://evil.example/other\">"
        "<link rel=\"alternate\" type=\"application/json+oembed\" href=\"oembed?u=1\">"
        "</head><body><meta property=\"og:description\" content=\"in the body\"></body></html>";
    struct eu_card_page p;
    ck_assert_int_eq(eu_card_page_parse(html, strlen(html), "https://site.example/a/b", &p), 0);
    ck_assert(!p.noindex);
    ck_assert_str_eq(p.title, "OG title");
    /* The body is not read: the head's plain description stands. */
    ck_assert_str_eq(p.description, "Plain description");
    ck_assert_str_eq(p.image, "https://site.example/img/a.png");
    ck_assert_str_eq(p.image_alt, "A picture");
    ck_assert_str_eq(p.site_name, "Site");
    ck_assert_str_eq(p.language, "pt");
    ck_assert_str_eq(p.published, "2026-01-02T03:04:05Z");
    ck_assert_str_eq(p.oembed, "https://site.example/a/oembed?u=1");
    ck_assert_ptr_null(p.canonical); /* another origin */
    eu_card_page_free(&p);

    const char *same = "<head><link rel=\"canonical\" href=\"/c\"><title>T</title>"
                       "<meta name=\"robots\" content=\"NOINDEX\"></head>";
    ck_assert_int_eq(eu_card_page_parse(same, strlen(same), "https://site.example/x", &p), 0);
    ck_assert_str_eq(p.canonical, "https://site.example/c");
    ck_assert(p.noindex);
    ck_assert_str_eq(p.title, "T");
    eu_card_page_free(&p);

    /* A javascript: image is no image. */
    const char *js = "<head><meta property=\"og:image\" content=\"javascript:alert(1)\"></head>";
    ck_assert_int_eq(eu_card_page_parse(js, strlen(js), "https://site.example/", &p), 0);
    ck_assert_ptr_null(p.image);
    eu_card_page_free(&p);
}
END_TEST

/* Two hundred thousand nested elements: refused past the parse's CPU
 * limit, never a deep recursion nor minutes of work. The thread's CPU
 * time, not the clock's: beside the other suites on a busy machine the
 * wall clock also counts the time this thread waited for a core. */
START_TEST(test_hostile)
{
    size_t n = 200000;
    char *html = malloc(n * 5 + 64);
    strcpy(html, "<head><title>x</title>");
    char *w = html + strlen(html);
    for (size_t i = 0; i < n; i++) {
        memcpy(w, "<div>", 5);
        w += 5;
    }
    *w = '\0';
    struct eu_card_page p;
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    int rc = eu_card_page_parse(html, strlen(html), "https://site.example/", &p);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    if (rc == 0)
        eu_card_page_free(&p);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    ck_assert_msg(s < 5.0, "the parse took %.1f s", s);
    free(html);
}
END_TEST

START_TEST(test_first_link)
{
    const char *content =
        "<p><span class=\"h-card\"><a href=\"https://remote.example/@bob\" class=\"u-url "
        "mention\">@<span>bob</span></a></span> <a href=\"https://local.example/tags/x\" "
        "class=\"mention hashtag\" rel=\"tag\">#<span>x</span></a> "
        "<a href=\"https://other.example/tags/y\" rel=\"tag\">#y</a> "
        "<a href=\"https://local.example/@me/1\">mine</a> "
        "<a href=\"mailto:a@b.example\">mail</a> "
        "<a href=\"https://news.example/a?b=1&amp;c=2\" rel=\"nofollow noopener\">news</a> "
        "<a href=\"https://later.example/\">later</a></p>";
    char *link = eu_card_first_link(content, "local.example");
    ck_assert_str_eq(link, "https://news.example/a?b=1&c=2");
    free(link);
    ck_assert_ptr_null(eu_card_first_link("<p>no links</p>", "local.example"));
    ck_assert(!eu_card_candidate("<p>no links</p>"));
    ck_assert(eu_card_candidate(content));
}
END_TEST

START_TEST(test_oembed_html)
{
    char *h = eu_card_oembed_html("<div><iframe width=\"560\" onload=\"x()\" "
                                  "src=\"https://v.example/e/1\" style=\"a\" allowfullscreen>"
                                  "</iframe></div><script>x()</script>");
    ck_assert_str_eq(h, "<iframe width=\"560\" src=\"https://v.example/e/1\" allowfullscreen=\"\""
                        " sandbox=\"allow-scripts allow-same-origin allow-popups"
                        " allow-popups-to-escape-sandbox allow-forms\"></iframe>");
    free(h);
    ck_assert_ptr_null(eu_card_oembed_html("<iframe src=\"javascript:x\"></iframe>"));
    ck_assert_ptr_null(eu_card_oembed_html("<script>x</script>"));
    ck_assert_ptr_null(eu_card_oembed_html(NULL));
    /* Quotes in a value stay inside it. */
    h = eu_card_oembed_html("<iframe src='https://v.example/\"><script>' width=1></iframe>");
    ck_assert_str_eq(h, "<iframe src=\"https://v.example/&quot;&gt;&lt;script&gt;\" width=\"1\""
                        " sandbox=\"allow-scripts allow-same-origin allow-popups"
                        " allow-popups-to-escape-sandbox allow-forms\"></iframe>");
    free(h);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("unit.social.card_parse");
    TCase *tc = tcase_create("card_parse");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_page);
    tcase_add_test(tc, test_hostile);
    tcase_add_test(tc, test_first_link);
    tcase_add_test(tc, test_oembed_html);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
