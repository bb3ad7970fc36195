/*
 * Fuzz target: status text to HTML (src/social/text.c). The input is the text
 * of a status. It is scanned for mentions and tags, the mentions are taken
 * as all resolving to local accounts (so the linking paths run too), and
 * the HTML is checked for what a browser relies on: tags we open are closed,
 * in order, and no '<' from the text survives unescaped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/text.h"

/* The tags the formatter writes, so anything else starting with '<' came
 * from the input unescaped. */
static const char *const opening[] = {"<p>", "<br />", "<a ", "<span", NULL};
static const char *const closing[] = {"</p>", "</a>", "</span>", NULL};

static size_t
prefix_of(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strncmp(s, list[i], strlen(list[i])) == 0)
            return i + 1;
    return 0;
}

static void
check_html(const char *html)
{
    char stack[256];
    size_t depth = 0;
    for (const char *p = html; (p = strchr(p, '<')); p++) {
        size_t o = prefix_of(p, opening), c = prefix_of(p, closing);
        if (!o && !c)
            abort();
        if (o == 2) /* <br /> closes itself */
            continue;
        if (o) {
            if (depth == sizeof(stack))
                abort();
            stack[depth++] = (char)(o == 1 ? 'p' : o == 3 ? 'a' : 's');
            /* Attribute values are quoted: an odd count of '"' before the
             * tag's '>' means the input's own quote or '>' got through. */
            const char *end = strchr(p, '>');
            if (!end)
                abort();
            size_t quotes = 0;
            for (const char *q = p; q < end; q++)
                quotes += *q == '"';
            if (quotes % 2)
                abort();
            continue;
        }
        char want = (char)(c == 1 ? 'p' : c == 2 ? 'a' : 's');
        if (depth == 0 || stack[depth - 1] != want)
            abort();
        depth--;
    }
    if (depth != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Statuses arrive as JSON or form strings, which cannot hold NUL. */
    char *text = strndup((const char *)data, size);
    struct eu_arena *a = eu_arena_new();
    struct eu_text_scan scan;
    eu_text_scan(a, text, "a.example", &scan);
    size_t n = scan.n_mentions + scan.n_remote;
    struct eu_text_account *acc = eu_arena_calloc(a, (n ? n : 1) * sizeof(*acc));
    for (size_t i = 0; i < scan.n_mentions; i++) {
        acc[i].username = scan.mentions[i];
        acc[i].url = eu_arena_sprintf(a, "https://a.example/@%s", scan.mentions[i]);
    }
    /* Remote ones as "user@domain": the user part links, the domain matches. */
    for (size_t i = 0; i < scan.n_remote; i++) {
        struct eu_text_account *r = &acc[scan.n_mentions + i];
        char *at = strchr(scan.remote[i], '@');
        r->username = eu_arena_strndup(a, scan.remote[i], (size_t)(at - scan.remote[i]));
        r->domain = at + 1;
        r->url = eu_arena_sprintf(a, "https://%s/@%s", r->domain, r->username);
    }
    for (size_t i = 0; i < scan.n_tags; i++)
        (void)strlen(scan.tags[i]);
    const char *html = eu_text_format(a, text, "a.example", "https://a.example", acc, n);
    check_html(html);
    eu_arena_free(a);
    free(text);
    return 0;
}
