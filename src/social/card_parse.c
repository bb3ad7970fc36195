/*
 * Reading for preview cards (include/eunha/cards.h): a fetched page's
 * head (oEmbed discovery, OpenGraph and Twitter card tags, robots), a
 * status's first link, and an oEmbed video's iframe.
 *
 * Pages come from anywhere, so the page parse is bounded three ways: only
 * what comes before <body> is parsed (every tag a card reads belongs in
 * the head, and a page's body is most of its bytes); gumbo allocates
 * through a bounded heap (include/eunha/bheap.h, shared with the
 * sanitizer) that ends the parse past a memory budget or a CPU time limit
 * (thousands of nested unclosed elements cost gumbo time that grows faster
 * than the input) and frees it as one list; and the tree is walked with a
 * stack of our own.
 */
#include "eunha/cards.h"

#include <ctype.h>
#include <curl/curl.h>
#include <gumbo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/bheap.h"
#include "eunha/mem.h"
#include "eunha/text.h"

/* Parser memory allowed per input byte, plus a floor (as sanitize.c). */
#define BUDGET_PER_BYTE 64
#define BUDGET_FLOOR (1024 * 1024)
/* The head we parse: past this, a page's head is not worth reading. */
#define HEAD_MAX (512 * 1024)
/* CPU time a parse may take; an honest page's head takes a few ms. The
 * clock is read once per CLOCK_EVERY allocations (about one an element). */
#define PARSE_CPU_MS 500
#define CLOCK_EVERY 256

/* ------------------------------------------------------------ URLs */

/* ref resolved against base, when the result is http or https; heap or
 * NULL. libcurl's URL parser resolves as a browser does. */
static char *
resolve(const char *base, const char *ref)
{
    if (!ref || !*ref)
        return NULL;
    CURLU *u = curl_url();
    char *out = NULL, *scheme = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_URL, ref, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0)) {
        char *s = NULL;
        if (curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK) {
            out = eu_xstrdup(s);
            curl_free(s);
        }
    }
    curl_free(scheme);
    curl_url_cleanup(u);
    return out;
}

/* The scheme, host and port of url, for a same-origin test; heap or NULL. */
static char *
origin(const char *url)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *out = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK)
        out = eu_xasprintf("%s://%s:%s", scheme, host, port);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return out;
}

/* ------------------------------------------------------------ the page */

static const char *
attr(const GumboElement *e, const char *name)
{
    const GumboAttribute *a = gumbo_get_attribute(&e->attributes, name);
    return a ? a->value : NULL;
}

/* Whether the space-separated list has word (ASCII case-insensitive). */
static bool
has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        while (*p && (isspace((unsigned char)*p) || *p == ','))
            p++;
        const char *q = p;
        while (*q && !isspace((unsigned char)*q) && *q != ',')
            q++;
        if ((size_t)(q - p) == n && strncasecmp(p, word, n) == 0)
            return true;
        p = q;
    }
    return false;
}

/* Keeps the first non-empty value for a field. */
static void
keep(char **field, const char *value)
{
    if (*field || !value)
        return;
    while (isspace((unsigned char)*value))
        value++;
    if (!*value)
        return;
    *field = eu_xstrdup(value);
    size_t n = strlen(*field);
    while (n && isspace((unsigned char)(*field)[n - 1]))
        (*field)[--n] = '\0';
}

/* The raw values the tags give, in order of preference, before URLs are
 * resolved. */
struct found {
    char *og_title, *tw_title, *title;
    char *og_desc, *tw_desc, *desc;
    char *og_image, *tw_image, *og_image_alt, *tw_image_alt;
    char *og_url, *canonical, *oembed, *site_name, *author, *locale, *lang, *published;
    char *player, *player_w, *player_h;
    bool noindex;
};

static void
found_free(struct found *f)
{
    char **all[] = {&f->og_title, &f->tw_title,  &f->title,     &f->og_desc,      &f->tw_desc,
                    &f->desc,     &f->og_image,  &f->tw_image,  &f->og_image_alt, &f->tw_image_alt,
                    &f->og_url,   &f->canonical, &f->oembed,    &f->site_name,    &f->author,
                    &f->locale,   &f->lang,      &f->published, &f->player,       &f->player_w,
                    &f->player_h};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        free(*all[i]);
        *all[i] = NULL;
    }
}

static void
read_meta(struct found *f, const GumboElement *e)
{
    const char *content = attr(e, "content");
    const char *prop = attr(e, "property");
    const char *name = attr(e, "name");
    if (!content)
        return;
    /* OpenGraph uses property=, Twitter name=; pages mix them up. */
    const char *keys[] = {prop, name};
    for (int i = 0; i < 2; i++) {
        const char *k = keys[i];
        if (!k)
            continue;
        if (strcasecmp(k, "robots") == 0 &&
            (has_word(content, "noindex") || has_word(content, "none")))
            f->noindex = true;
        else if (strcasecmp(k, "og:title") == 0)
            keep(&f->og_title, content);
        else if (strcasecmp(k, "twitter:title") == 0)
            keep(&f->tw_title, content);
        else if (strcasecmp(k, "og:description") == 0)
            keep(&f->og_desc, content);
        else if (strcasecmp(k, "twitter:description") == 0)
            keep(&f->tw_desc, content);
        else if (strcasecmp(k, "description") == 0)
            keep(&f->desc, content);
        else if (strcasecmp(k, "og:image") == 0 || strcasecmp(k, "og:image:url") == 0 ||
                 strcasecmp(k, "og:image:secure_url") == 0)
            keep(&f->og_image, content);
        else if (strcasecmp(k, "twitter:image") == 0 || strcasecmp(k, "twitter:image:src") == 0)
            keep(&f->tw_image, content);
        else if (strcasecmp(k, "og:image:alt") == 0)
            keep(&f->og_image_alt, content);
        else if (strcasecmp(k, "twitter:image:alt") == 0)
            keep(&f->tw_image_alt, content);
        else if (strcasecmp(k, "og:url") == 0)
            keep(&f->og_url, content);
        else if (strcasecmp(k, "og:site_name") == 0)
            keep(&f->site_name, content);
        else if (strcasecmp(k, "author") == 0)
            keep(&f->author, content);
        else if (strcasecmp(k, "og:locale") == 0)
            keep(&f->locale, content);
        else if (strcasecmp(k, "article:published_time") == 0)
            keep(&f->published, content);
        else if (strcasecmp(k, "twitter:player") == 0)
            keep(&f->player, content);
        else if (strcasecmp(k, "twitter:player:width") == 0)
            keep(&f->player_w, content);
        else if (strcasecmp(k, "twitter:player:height") == 0)
            keep(&f->player_h, content);
    }
}

static void
read_link(struct found *f, const GumboElement *e)
{
    const char *rel = attr(e, "rel"), *href = attr(e, "href"), *type = attr(e, "type");
    if (!rel || !href)
        return;
    if (has_word(rel, "canonical"))
        keep(&f->canonical, href);
    else if (has_word(rel, "alternate") && type && strcasecmp(type, "application/json+oembed") == 0)
        keep(&f->oembed, href);
}

/* The text of an element's children (a <title>). */
static void
read_title(struct found *f, const GumboElement *e)
{
    for (unsigned i = 0; i < e->children.length; i++) {
        const GumboNode *c = e->children.data[i];
        if (c->type == GUMBO_NODE_TEXT || c->type == GUMBO_NODE_WHITESPACE) {
            keep(&f->title, c->v.text.text);
            return;
        }
    }
}

/* Every element of the tree, without recursion. */
static void
walk(struct found *f, GumboNode *root)
{
    size_t cap = 64, n = 0;
    GumboNode **stack = eu_xmalloc(cap * sizeof(*stack));
    stack[n++] = root;
    while (n) {
        GumboNode *node = stack[--n];
        if (node->type != GUMBO_NODE_ELEMENT)
            continue;
        const GumboElement *e = &node->v.element;
        switch (e->tag) {
        case GUMBO_TAG_META:
            read_meta(f, e);
            break;
        case GUMBO_TAG_LINK:
            read_link(f, e);
            break;
        case GUMBO_TAG_TITLE:
            read_title(f, e);
            break;
        case GUMBO_TAG_HTML:
            keep(&f->lang, attr(e, "lang"));
            break;
        default:
            break;
        }
        /* Children pushed last first, so they are read in document order
         * and the first of a repeated tag wins. */
        for (unsigned i = e->children.length; i-- > 0;) {
            if (n == cap) {
                cap *= 2;
                stack = eu_xrealloc(stack, cap * sizeof(*stack));
            }
            stack[n++] = e->children.data[i];
        }
    }
    free(stack);
}

/* Where the head ends: the first "<body" (ASCII case-insensitive), or len. */
static size_t
head_length(const char *html, size_t len)
{
    for (size_t i = 0; i + 5 <= len; i++)
        if (html[i] == '<' && strncasecmp(html + i + 1, "body", 4) == 0 &&
            (i + 5 == len || !isalnum((unsigned char)html[i + 5])))
            return i;
    return len;
}

/* The language part of a locale ("en_US", "pt-BR" -> "en", "pt"). */
static char *
language_of(const char *locale)
{
    if (!locale)
        return NULL;
    size_t n = 0;
    while (n < 8 && isalpha((unsigned char)locale[n]))
        n++;
    if (n < 2 || n > 3)
        return NULL;
    char *out = eu_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)locale[i]);
    out[n] = '\0';
    return out;
}

int
eu_card_page_parse(const char *html, size_t len, const char *base_url, struct eu_card_page *out)
{
    memset(out, 0, sizeof(*out));
    len = head_length(html, len);
    if (len > HEAD_MAX)
        len = HEAD_MAX;
    /* On the heap: longjmp leaves locals changed since setjmp undefined. */
    struct eu_bheap *h =
        eu_bheap_new(BUDGET_FLOOR + BUDGET_PER_BYTE * len, PARSE_CPU_MS, CLOCK_EVERY);
    struct found *f = eu_xcalloc(1, sizeof(*f));
    GumboOptions opts = kGumboDefaultOptions;
    opts.allocator = eu_bheap_alloc;
    opts.deallocator = eu_bheap_free;
    opts.userdata = h;
    opts.max_errors = 0;
    if (setjmp(h->out)) {
        eu_bheap_free_all(h);
        found_free(f);
        free(f);
        return -1;
    }
    GumboOutput *g = gumbo_parse_with_options(&opts, html, len);
    walk(f, g->root);
    eu_bheap_free_all(h);

    out->noindex = f->noindex;
    out->oembed = resolve(base_url, f->oembed);
    keep(&out->title, f->og_title ? f->og_title : f->tw_title ? f->tw_title : f->title);
    keep(&out->description, f->og_desc ? f->og_desc : f->tw_desc ? f->tw_desc : f->desc);
    out->image = resolve(base_url, f->og_image ? f->og_image : f->tw_image);
    keep(&out->image_alt, f->og_image ? f->og_image_alt : f->tw_image_alt);
    /* Mastodon takes a canonical URL of the page's own origin only: a
     * page cannot make its card stand for another site's URL. */
    char *canon = resolve(base_url, f->canonical ? f->canonical : f->og_url);
    char *o1 = canon ? origin(canon) : NULL, *o2 = origin(base_url);
    if (canon && o1 && o2 && strcmp(o1, o2) == 0)
        out->canonical = canon;
    else
        free(canon);
    free(o1);
    free(o2);
    keep(&out->site_name, f->site_name);
    keep(&out->author, f->author);
    out->language = language_of(f->locale ? f->locale : f->lang);
    keep(&out->published, f->published);
    out->player = resolve(base_url, f->player);
    out->player_w = f->player_w ? atoi(f->player_w) : 0;
    out->player_h = f->player_h ? atoi(f->player_h) : 0;
    if (out->player_w < 0 || out->player_w > 10000)
        out->player_w = 0;
    if (out->player_h < 0 || out->player_h > 10000)
        out->player_h = 0;
    found_free(f);
    free(f);
    return 0;
}

void
eu_card_page_free(struct eu_card_page *p)
{
    if (!p)
        return;
    free(p->oembed);
    free(p->title);
    free(p->description);
    free(p->image);
    free(p->image_alt);
    free(p->canonical);
    free(p->site_name);
    free(p->author);
    free(p->language);
    free(p->published);
    free(p->player);
    memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------ a status */

/* The value of attribute name in the tag text [p, end): a double-quoted
 * value, its entities left as they are; heap or NULL. */
static char *
tag_attr(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name);
    for (const char *q = p; q + n + 2 < end; q++) {
        if ((q == p || isspace((unsigned char)q[-1])) && strncasecmp(q, name, n) == 0 &&
            q[n] == '=' && q[n + 1] == '"') {
            const char *v = q + n + 2, *e = memchr(v, '"', (size_t)(end - v));
            if (!e)
                return NULL;
            return eu_xstrndup(v, (size_t)(e - v));
        }
    }
    return NULL;
}

/* The few entities our own HTML writes in an attribute, decoded in place. */
static void
decode_entities(char *s)
{
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&quot;", '"'}, {"&#39;", '\''}, {"&lt;", '<'}, {"&gt;", '>'}};
    char *w = s;
    for (const char *r = s; *r;) {
        bool done = false;
        for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]) && !done; i++) {
            size_t n = strlen(ents[i].ent);
            if (strncmp(r, ents[i].ent, n) == 0) {
                *w++ = ents[i].c;
                r += n;
                done = true;
            }
        }
        if (!done)
            *w++ = *r++;
    }
    *w = '\0';
}

/* Whether url is http(s) with a host, and the host is not local_host. */
static bool
linkable(const char *url, const char *local_host)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
              (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0) && *host &&
              !(local_host && strcasecmp(host, local_host) == 0);
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return ok;
}

char *
eu_card_first_link(const char *content, const char *local_host)
{
    for (const char *p = content; p && (p = strchr(p, '<')) != NULL; p++) {
        if (strncasecmp(p, "<a ", 3) != 0)
            continue;
        const char *end = strchr(p, '>');
        if (!end)
            return NULL;
        char *href = tag_attr(p + 2, end, "href");
        char *rel = tag_attr(p + 2, end, "rel");
        char *cls = tag_attr(p + 2, end, "class");
        bool skip = !href || (rel && has_word(rel, "tag")) ||
                    (cls && (has_word(cls, "mention") || has_word(cls, "hashtag") ||
                             has_word(cls, "u-url") || has_word(cls, "h-card")));
        free(rel);
        free(cls);
        if (!skip) {
            decode_entities(href);
            if (linkable(href, local_host))
                return href;
        }
        free(href);
        p = end;
    }
    return NULL;
}

/* ------------------------------------------------------------ oEmbed */

/* Finds the first iframe, without recursion. */
static const GumboElement *
first_iframe(GumboNode *root)
{
    size_t cap = 64, n = 0;
    GumboNode **stack = eu_xmalloc(cap * sizeof(*stack));
    const GumboElement *found = NULL;
    stack[n++] = root;
    while (n && !found) {
        GumboNode *node = stack[--n];
        if (node->type != GUMBO_NODE_ELEMENT)
            continue;
        if (node->v.element.tag == GUMBO_TAG_IFRAME) {
            found = &node->v.element;
            break;
        }
        const GumboVector *ch = &node->v.element.children;
        for (unsigned i = ch->length; i-- > 0;) {
            if (n == cap) {
                cap *= 2;
                stack = eu_xrealloc(stack, cap * sizeof(*stack));
            }
            stack[n++] = ch->data[i];
        }
    }
    free(stack);
    return found;
}

/* Appends ` name="value"` (escaped) to *out. */
static void
append_attr(char **out, const char *name, const char *value)
{
    size_t n = strlen(value), w = 0;
    char *esc = eu_xmalloc(6 * n + 1);
    for (size_t i = 0; i < n; i++) {
        const char *ent = eu_html_entity(value[i]);
        if (ent) {
            memcpy(esc + w, ent, strlen(ent));
            w += strlen(ent);
        } else {
            esc[w++] = value[i];
        }
    }
    esc[w] = '\0';
    char *next = eu_xasprintf("%s %s=\"%s\"", *out, name, esc);
    free(esc);
    free(*out);
    *out = next;
}

char *
eu_card_oembed_html(const char *html)
{
    if (!html || strlen(html) > EU_CARD_OEMBED_LIMIT)
        return NULL;
    size_t len = strlen(html);
    struct eu_bheap *h =
        eu_bheap_new(BUDGET_FLOOR + BUDGET_PER_BYTE * len, PARSE_CPU_MS, CLOCK_EVERY);
    GumboOptions opts = kGumboDefaultOptions;
    opts.allocator = eu_bheap_alloc;
    opts.deallocator = eu_bheap_free;
    opts.userdata = h;
    opts.max_errors = 0;
    opts.fragment_context = GUMBO_TAG_BODY;
    opts.fragment_namespace = GUMBO_NAMESPACE_HTML;
    char *volatile out = NULL;
    if (setjmp(h->out)) {
        eu_bheap_free_all(h);
        free(out);
        return NULL;
    }
    GumboOutput *g = gumbo_parse_with_options(&opts, html, len);
    const GumboElement *e = first_iframe(g->root);
    const char *src = e ? attr(e, "src") : NULL;
    if (src && (strncasecmp(src, "https://", 8) == 0 || strncasecmp(src, "http://", 7) == 0)) {
        /* Mastodon's MASTODON_OEMBED: these attributes, in the page's
         * order, and a sandbox of its own. */
        static const char *const allowed[] = {"allowfullscreen", "frameborder", "height",
                                              "scrolling",       "src",         "width"};
        char *s = eu_xstrdup("<iframe");
        for (unsigned i = 0; i < e->attributes.length; i++) {
            const GumboAttribute *a = e->attributes.data[i];
            for (size_t k = 0; k < sizeof(allowed) / sizeof(allowed[0]); k++)
                if (strcasecmp(a->name, allowed[k]) == 0)
                    append_attr(&s, allowed[k], a->value);
        }
        append_attr(&s, "sandbox",
                    "allow-scripts allow-same-origin allow-popups "
                    "allow-popups-to-escape-sandbox allow-forms");
        out = eu_xasprintf("%s></iframe>", s);
        free(s);
    }
    eu_bheap_free_all(h);
    return out;
}
