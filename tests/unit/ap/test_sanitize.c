/*
 * Remote HTML sanitizing: a table of what Mastodon's MASTODON_STRICT keeps
 * and drops (XSS classics, misnested and unclosed markup, entities, the
 * mention and hashtag links Mastodon and others send), the caps, and how
 * long large and hostile documents take.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/sanitize.h"

struct sanitize_case {
    const char *in;
    const char *want;
};

static const struct sanitize_case cases[] = {
    /* Plain and normal. */
    {"", ""},
    {"hello", "hello"},
    {"<p>Hello world</p>", "<p>Hello world</p>"},
    {"<p>a<br>b<br/>c</p>", "<p>a<br>b<br>c</p>"},
    {"<p>one</p><p>two</p>", "<p>one</p><p>two</p>"},
    {"<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><del>d</del><code>c</code>",
     "<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><del>d</del><code>c</code>"},
    {"<pre><code>int x;\n</code></pre>", "<pre><code>int x;\n</code></pre>"},
    {"<blockquote><p>quoted</p></blockquote>", "<blockquote><p>quoted</p></blockquote>"},
    {"<ul><li>a</li><li>b</li></ul>", "<ul><li>a</li><li>b</li></ul>"},
    {"<ol start=\"3\" reversed><li value=\"7\">x</li></ol>",
     "<ol start=\"3\" reversed><li value=\"7\">x</li></ol>"},
    {"<ol start=\"x\"><li value=\"1e9\">x</li></ol>", "<ol><li>x</li></ol>"},
    /* Headings become bold paragraphs, as Mastodon 4.2 does. */
    {"<h1>Title</h1><p>body</p>", "<p><strong>Title</strong></p><p>body</p>"},
    {"<h6>t</h6>", "<p><strong>t</strong></p>"},
    /* Mastodon's own mention and hashtag links, kept as they are. */
    {"<p><span class=\"h-card\" translate=\"no\"><a href=\"https://m.example/@bob\" "
     "class=\"u-url mention\">@<span>bob</span></a></span> hi <a "
     "href=\"https://m.example/tags/cats\" class=\"mention hashtag\" rel=\"tag\">#<span>cats</span>"
     "</a></p>",
     "<p><span class=\"h-card\" translate=\"no\"><a href=\"https://m.example/@bob\" "
     "rel=\"nofollow noopener\" target=\"_blank\" class=\"u-url "
     "mention\">@<span>bob</span></a></span> hi <a href=\"https://m.example/tags/cats\" "
     "rel=\"nofollow noopener\" target=\"_blank\" class=\"mention hashtag\">#<span>cats</span>"
     "</a></p>"},
    /* Mastodon's shortened links. */
    {"<a href=\"https://example.com/a/very/long/path\"><span class=\"invisible\">https://</span>"
     "<span class=\"ellipsis\">example.com/a/very</span><span class=\"invisible\">/long/path"
     "</span></a>",
     "<a href=\"https://example.com/a/very/long/path\" rel=\"nofollow noopener\" "
     "target=\"_blank\"><span class=\"invisible\">https://</span><span "
     "class=\"ellipsis\">example.com/a/very</span><span class=\"invisible\">/long/path</span></a>"},
    /* Classes: only microformats and Mastodon's. */
    {"<span class=\"evil h-card big\">x</span>", "<span class=\"h-card\">x</span>"},
    {"<span class=\"mentionx hashtag\tp-name\">x</span>",
     "<span class=\"hashtag p-name\">x</span>"},
    {"<span class=\"x\" style=\"color:red\" id=\"y\">x</span>", "<span>x</span>"},
    {"<span translate=\"yes\">x</span>", "<span>x</span>"},
    /* Misskey's and Pleroma's markup. */
    {"<p><span>hello </span><a href=\"https://mk.example/@alice\" "
     "class=\"u-url mention\">@alice@mk.example</a></p>",
     "<p><span>hello </span><a href=\"https://mk.example/@alice\" rel=\"nofollow noopener\" "
     "target=\"_blank\" class=\"u-url mention\">@alice@mk.example</a></p>"},
    {"hi<br/><span class=\"h-card\"><a class=\"u-url mention\" data-user=\"9x\" "
     "href=\"https://pl.example/users/a\" rel=\"ugc\">@<span>a</span></a></span>",
     "hi<br><span class=\"h-card\"><a href=\"https://pl.example/users/a\" "
     "rel=\"nofollow noopener\" target=\"_blank\" class=\"u-url mention\">@<span>a</span></a>"
     "</span>"},
    /* Link protocols. */
    {"<a href=\"gemini://g.example/\">g</a>",
     "<a href=\"gemini://g.example/\" rel=\"nofollow noopener\" target=\"_blank\">g</a>"},
    {"<a href=\"  HTTPS://x.example/\">x</a>",
     "<a href=\"  HTTPS://x.example/\" rel=\"nofollow noopener\" target=\"_blank\">x</a>"},
    {"<a href=\"javascript:alert(1)\">click</a>", "click"},
    {"<a href=\"JaVaScRiPt:alert(1)\">click</a>", "click"},
    {"<a href=\"java&#x09;script:alert(1)\">click</a>", "click"},
    {"<a href=\"&#106;avascript:alert(1)\">click</a>", "click"},
    {"<a href=\"data:text/html;base64,PHNjcmlwdD4=\">d</a>", "d"},
    {"<a href=\"vbscript:x\">v</a>", "v"},
    {"<a href=\"/relative/path\">rel</a>", "rel"},
    {"<a href=\"#frag\">f</a>", "f"},
    {"<a>no href</a>", "no href"},
    {"<a href=\"javascript:x\"><b>bold</b> <script>s()</script>text</a>", "bold text"},
    {"<a href=\"https://x.example/\" onclick=\"evil()\" target=\"_self\" rel=\"opener\">x</a>",
     "<a href=\"https://x.example/\" rel=\"nofollow noopener\" target=\"_blank\">x</a>"},
    {"<a href='https://x.example/\"onmouseover=\"alert(1)'>x</a>",
     "<a href=\"https://x.example/&quot;onmouseover=&quot;alert(1)\" rel=\"nofollow noopener\" "
     "target=\"_blank\">x</a>"},
    /* XSS classics. */
    {"<script>alert(1)</script>after", "after"},
    {"<SCRIPT SRC=http://xss.example/xss.js></SCRIPT>", ""},
    {"<style>p{color:red}</style><p>x</p>", "<p>x</p>"},
    {"<img src=x onerror=alert(1)>", ""},
    {"<img src=\"javascript:alert('XSS');\">text", "text"},
    {"<iframe src=\"https://evil.example\">inner</iframe>ok", "ok"},
    {"<svg onload=alert(1)><text>svg</text></svg>ok", "ok"},
    {"<math><mtext><script>x</script></mtext></math>ok", "ok"},
    {"<body onload=alert(1)>text</body>", "text"},
    {"<div style=\"background:url(javascript:alert(1))\">x</div>", "x"},
    {"<p onmouseover=\"alert(1)\">x</p>", "<p>x</p>"},
    /* Without scripting noscript holds markup: the p swallows the rest. */
    {"<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>ok", ""},
    {"<noscript>n</noscript>ok", "ok"},
    {"<template><script>x</script>t</template>ok", "ok"},
    {"<object data=\"x.swf\">fallback</object>ok", "ok"},
    {"<form action=\"https://evil.example\"><input value=\"v\"><button>b</button></form>", "b"},
    {"<!-- comment --><p>x<!-- inside --></p>", "<p>x</p>"},
    {"<!--<script>x</script>-->ok", "ok"},
    /* Outside svg, CDATA is a bogus comment that ends at the first ">". */
    {"<![CDATA[<script>x</script>]]>ok", "x]]&gt;ok"},
    {"<<script>script>alert(1)<</script>/script>", "&lt;/script&gt;"},
    {"<scr<script>ipt>alert(1)</script>", "ipt&gt;alert(1)"},
    {"<textarea><script>x</script></textarea>", "&lt;script&gt;x&lt;/script&gt;"},
    {"<title><b>t</b></title>", "&lt;b&gt;t&lt;/b&gt;"},
    {"\"><script>alert(1)</script>", "&quot;&gt;"},
    /* Unknown and block elements unwrap; blocks keep words apart. */
    {"<div>a</div><div>b</div>", "a  b"},
    {"<custom-el>x</custom-el><marquee>y</marquee>", "xy"},
    {"<table><tr><td>cell</td></tr></table>", "cell"},
    {"<sup>1</sup><small>s</small><abbr title=\"t\">a</abbr>", "1sa"},
    /* Entities are decoded by the parser and escaped again. */
    {"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;script&gt;alert(1)&lt;/script&gt;"},
    {"caf&eacute; &amp; &#x1F600; &nbsp;x", "café &amp; \xf0\x9f\x98\x80 \xc2\xa0x"},
    {"fish & chips < 3 > 2", "fish &amp; chips &lt; 3 &gt; 2"},
    {"<p title=\"&quot;\">q</p>", "<p>q</p>"},
    {"it's \"quoted\"", "it&#39;s &quot;quoted&quot;"},
    /* Unclosed and misnested markup, closed as a browser closes it. */
    {"<p>unclosed", "<p>unclosed</p>"},
    {"<b>bold <i>both</b> italic</i>", "<b>bold <i>both</i></b><i> italic</i>"},
    {"<p><blockquote>q</p>", "<p></p><blockquote>q<p></p></blockquote>"},
    {"<blockquote><blockquote><blockquote>deep</blockquote></blockquote></blockquote>",
     "<blockquote><blockquote><blockquote>deep</blockquote></blockquote></blockquote>"},
    {"<ul><li>a<li>b</ul>", "<ul><li>a</li><li>b</li></ul>"},
    {"</p></b>stray", "<p></p>stray"},
    {"<a href=\"https://a.example\">one<a href=\"https://b.example\">two</a>",
     "<a href=\"https://a.example\" rel=\"nofollow noopener\" target=\"_blank\">one</a>"
     "<a href=\"https://b.example\" rel=\"nofollow noopener\" target=\"_blank\">two</a>"},
    /* Invalid UTF-8 becomes U+FFFD; NUL goes. */
    {"a\xff"
     "b",
     "a\xef\xbf\xbd"
     "b"},
    {NULL, NULL},
};

START_TEST(table)
{
    for (size_t i = 0; cases[i].in; i++) {
        char *out = NULL;
        size_t len = 0;
        ck_assert_int_eq(eu_sanitize_html(cases[i].in, strlen(cases[i].in), &out, &len), 0);
        ck_assert_msg(strcmp(out, cases[i].want) == 0, "case %zu: %s\n  got  %s\n  want %s", i,
                      cases[i].in, out, cases[i].want);
        ck_assert_uint_eq(len, strlen(out));
        free(out);
    }
}
END_TEST

START_TEST(nul_bytes)
{
    static const char in[] = "<p>a\0b</p>";
    char *out = NULL;
    ck_assert_int_eq(eu_sanitize_html(in, sizeof(in) - 1, &out, NULL), 0);
    ck_assert_ptr_null(memchr(out, '\0', strlen(out)));
    ck_assert_ptr_nonnull(strstr(out, "<p>a"));
    free(out);
}
END_TEST

START_TEST(escape)
{
    char *e = eu_sanitize_escape("<a href=\"x\">&'", 14);
    ck_assert_str_eq(e, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    free(e);
}
END_TEST

static double
now_s(void)
{
    /* CPU time of this thread, what the sanitizer's cap bounds: wall time
     * also counts whatever else the machine runs (CI shares its cores). */
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Repeats unit until the text is len bytes long; caller frees. */
static char *
repeat(const char *unit, size_t len)
{
    char *s = malloc(len + 1);
    size_t n = strlen(unit), i = 0;
    for (; i + n <= len; i += n)
        memcpy(s + i, unit, n);
    memset(s + i, ' ', len - i);
    s[len] = '\0';
    return s;
}

/* Sanitizes s, prints the time, and returns sanitize's result. */
static int
timed(const char *what, const char *s, double *seconds)
{
    char *out = NULL;
    double t0 = now_s();
    int rc = eu_sanitize_html(s, strlen(s), &out, NULL);
    *seconds = now_s() - t0;
    fprintf(stderr, "sanitize %-28s %7zu bytes: %s in %.1f ms of CPU\n", what, strlen(s),
            rc == 0 ? "ok" : "refused", *seconds * 1000);
    free(out);
    return rc;
}

START_TEST(caps)
{
    char *big = repeat("x", EU_SANITIZE_MAX_INPUT + 1);
    char *out = NULL;
    ck_assert_int_eq(eu_sanitize_html(big, strlen(big), &out, NULL), -1);
    ck_assert_ptr_null(out);
    free(big);

    /* Nesting: the output nests no deeper than the cap... */
    char *deep = repeat("<blockquote>", 1000 * strlen("<blockquote>"));
    double secs;
    ck_assert_int_eq(timed("1000 nested blockquotes", deep, &secs), 0);
    ck_assert_int_eq(eu_sanitize_html(deep, strlen(deep), &out, NULL), 0);
    size_t opened = 0;
    for (const char *p = out; (p = strstr(p, "<blockquote>")); p++)
        opened++;
    ck_assert_uint_eq(opened, EU_SANITIZE_MAX_DEPTH);
    free(out);
    free(deep);
    /* Headings count twice (<p><strong>), found by fuzz_sanitize. */
    deep = repeat("<h1><u>", 60 * strlen("<h1><u>"));
    ck_assert_int_eq(eu_sanitize_html(deep, strlen(deep), &out, NULL), 0);
    int level = 0, max = 0;
    for (const char *p = out; *p; p++) {
        if (p[0] == '<' && p[1] == '/')
            level--;
        else if (p[0] == '<' && strncmp(p, "<br>", 4) != 0)
            level++;
        if (level > max)
            max = level;
    }
    ck_assert_int_le(max, EU_SANITIZE_MAX_DEPTH);
    ck_assert_int_eq(level, 0);
    free(out);
    free(deep);
    /* ...and nesting that would cost quadratic time is refused in time. */
    deep = repeat("<blockquote>", 200 * 1024);
    ck_assert_int_eq(timed("deep blockquotes", deep, &secs), -1);
    ck_assert_msg(secs < 0.5, "took %.2f s", secs);
    free(deep);
    deep = repeat("<b><i><u>", 250 * 1024);
    timed("deep formatting", deep, &secs);
    ck_assert_msg(secs < 0.5, "took %.2f s", secs);
    free(deep);
}
END_TEST

/*
 * The tree builder re-opens every open formatting element (distinct ones
 * escape the limit of three alike) at each new paragraph: a few thousand
 * <b>s then thousands of paragraphs would make millions of nodes. The
 * memory cap stops it quickly instead.
 */
START_TEST(formatting_explosion_is_refused)
{
    size_t n = 3000;
    char *s = malloc(240 * 1024);
    size_t len = (size_t)sprintf(s, "<div>");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(s + len, "<b id=%zu>", i);
    len += (size_t)sprintf(s + len, "</div>");
    while (len + 16 < 240 * 1024)
        len += (size_t)sprintf(s + len, "<p>x</p>");
    s[len] = '\0';
    double secs;
    ck_assert_int_eq(timed("formatting explosion", s, &secs), -1);
    ck_assert_msg(secs < 2.0, "took %.2f s", secs);
    free(s);
}
END_TEST

/* A realistic 100 KiB article: paragraphs, links, lists, code. */
START_TEST(large_document_timing)
{
    static const char unit[] =
        "<h2>Section</h2><p>Some <strong>text</strong> with a <a href=\"https://example.com/a\" "
        "class=\"u-url\">link</a>, <em>emphasis</em> &amp; entities &eacute;.</p>"
        "<ul><li>one</li><li>two <code>x &lt; y</code></li></ul>"
        "<blockquote><p>quote <span class=\"h-card\"><a href=\"https://m.example/@a\" "
        "class=\"u-url mention\">@<span>a</span></a></span></p></blockquote>"
        "<div class=\"x\"><img src=\"https://example.com/i.png\"><script>x()</script></div>\n";
    char *doc = repeat(unit, 100 * 1024);
    double secs;
    ck_assert_int_eq(timed("100 KiB article", doc, &secs), 0);
    ck_assert_msg(secs < 1.0, "took %.2f s", secs);
    free(doc);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("sanitize");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, table);
    tcase_add_test(tc, nul_bytes);
    tcase_add_test(tc, escape);
    suite_add_tcase(s, tc);
    tc = tcase_create("bounds");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, caps);
    tcase_add_test(tc, formatting_explosion_is_refused);
    tcase_add_test(tc, large_document_timing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
