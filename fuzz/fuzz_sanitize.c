/*
 * Fuzz target: remote HTML through the sanitizer (src/ap/sanitize.c). The
 * input is the HTML as a remote server would send it. The output is checked
 * for what the rules promise: only allowed tags, each closed in order, no
 * deeper than the cap, attribute values quoted with nothing unescaped, and
 * links only with an allowed protocol. The output sanitized again must pass
 * the same checks (it need not come back unchanged: a heading turned into a
 * paragraph may hold a list item, which a parser then moves out of it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/sanitize.h"

static const char *const tags[] = {"p",          "br",   "span", "a",      "del", "pre",
                                   "blockquote", "code", "b",    "strong", "u",   "i",
                                   "em",         "ul",   "ol",   "li",     NULL};

/* The index of the allowed tag name at s (followed by '>' or ' '), or -1. */
static int
tag_at(const char *s)
{
    for (int i = 0; tags[i]; i++) {
        size_t n = strlen(tags[i]);
        if (strncmp(s, tags[i], n) == 0 && (s[n] == '>' || s[n] == ' '))
            return i;
    }
    return -1;
}

static void
check_html(const char *html)
{
    int stack[EU_SANITIZE_MAX_DEPTH + 1];
    size_t depth = 0;
    for (const char *p = html; (p = strchr(p, '<')); p++) {
        const char *end = strchr(p, '>');
        if (!end)
            abort();
        if (p[1] == '/') {
            int t = tag_at(p + 2);
            if (t < 0 || depth == 0 || stack[depth - 1] != t)
                abort();
            depth--;
            continue;
        }
        int t = tag_at(p + 1);
        if (t < 0)
            abort();
        size_t quotes = 0;
        for (const char *q = p; q < end; q++)
            quotes += *q == '"';
        if (quotes % 2)
            abort();
        if (t == 3) {
            static const char *const ok[] = {
                "http:", "https:",  "dat:",  "dweb:",   "ipfs:",   "ipns:",
                "ssb:",  "gopher:", "xmpp:", "magnet:", "gemini:", NULL};
            const char *h = p + strlen("<a href=\"");
            if (strncmp(p, "<a href=\"", 9) != 0)
                abort();
            while (*h == ' ' || *h == '\t' || *h == '\n' || *h == '\r' || *h == '\f')
                h++;
            int allowed = 0;
            for (int i = 0; ok[i]; i++)
                allowed |= strncasecmp(h, ok[i], strlen(ok[i])) == 0;
            if (!allowed)
                abort();
        }
        if (t == 1) /* br */
            continue;
        if (depth == EU_SANITIZE_MAX_DEPTH)
            abort();
        stack[depth++] = t;
    }
    if (depth != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *out = NULL;
    size_t len = 0;
    if (eu_sanitize_html((const char *)data, size, &out, &len) != 0)
        return 0;
    if (strlen(out) != len)
        abort();
    check_html(out);
    char *again = NULL;
    if (eu_sanitize_html(out, len, &again, NULL) != 0)
        abort();
    check_html(again);
    free(again);
    free(out);
    return 0;
}
