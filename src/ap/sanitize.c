/*
 * Remote HTML to Mastodon's allowed subset (see include/eunha/sanitize.h for
 * the rules). libgumbo builds the tree exactly as a browser would, so what
 * we write back is what a browser would have seen of the allowed parts,
 * with every text and attribute escaped again by us.
 *
 * Two bounds keep hostile markup from burning the loop or the heap. The
 * HTML5 tree builder can make many more elements than the input has tags
 * (it re-opens formatting elements at each new block: a few thousand
 * distinct <b>s followed by many short paragraphs would make hundreds of
 * millions of nodes), so gumbo allocates through us against a budget, and
 * when the budget runs out we jump out of the parse and free everything it
 * had made at once. Deep nesting costs time rather than memory (each new
 * element looks through the open ones for its scope, so n nested elements
 * cost n^2), so the same hook also reads the thread's CPU clock and gives up
 * past EU_SANITIZE_MAX_CPU_MS. Freeing through our own list also replaces
 * gumbo_destroy_output(), which recurses once per level of nesting and so
 * could overflow a small thread stack on deeply nested input. Our own walk
 * of the tree keeps its stack on the heap for the same reason.
 */
#include "eunha/sanitize.h"

#include <gumbo.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/bheap.h"
#include "eunha/mem.h"
#include "eunha/text.h"

/* Parser memory allowed per input byte, plus a floor. Measured: gumbo's
 * live memory for ordinary posts and articles stays under 25 bytes per input
 * byte (tests/unit/ap/test_sanitize.c prints it), so this leaves room for
 * odd but honest markup and fails only on trees that multiply. */
#define BUDGET_PER_BYTE 64
#define BUDGET_FLOOR (1024 * 1024)
/* The clock is read once per this many allocations (about one per element
 * or attribute): often enough to stop within a few milliseconds of the
 * limit, rarely enough to cost nothing. */
#define CLOCK_EVERY 512

/* ------------------------------------------------------------ output */

struct buf {
    char *p;
    size_t len, cap;
};

static void
buf_grow(struct buf *b, size_t n)
{
    if (b->len + n + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
        cap *= 2;
    b->p = eu_xrealloc(b->p, cap);
    b->cap = cap;
}

static void
buf_add(struct buf *b, const char *s, size_t n)
{
    buf_grow(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void
buf_puts(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void
buf_escape(struct buf *b, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        /* A NUL in the text is dropped: it ends no C string downstream. */
        const char *rep = s[i] == '\0' ? "" : eu_html_entity(s[i]);
        if (!rep)
            continue;
        buf_add(b, s + run, i - run);
        buf_puts(b, rep);
        run = i + 1;
    }
    buf_add(b, s + run, n - run);
}

char *
eu_sanitize_escape(const char *text, size_t len)
{
    struct buf b = {0};
    buf_grow(&b, len);
    b.p[0] = '\0';
    buf_escape(&b, text, len);
    return b.p;
}

/* ------------------------------------------------------------ the rules */

/* How an element is written. */
enum rule {
    UNWRAP,    /* children only */
    UNWRAP_WS, /* children only, with a space either side (block elements) */
    DROP,      /* neither the element nor its content */
    KEEP,      /* the element, no attributes */
    KEEP_VOID, /* <br> */
    KEEP_A,    /* a link, if its href passes */
    KEEP_SPAN, /* class, translate */
    KEEP_OL,   /* start, reversed */
    KEEP_LI,   /* value */
    HEADING,   /* <p><strong>...</strong></p> */
};

static enum rule
rule_of(const GumboNode *n)
{
    if (n->type == GUMBO_NODE_TEMPLATE)
        return DROP;
    /* svg and math are dropped whole, so nothing of a foreign namespace is
     * reached but an element gumbo put there on its own. */
    if (n->v.element.tag_namespace != GUMBO_NAMESPACE_HTML)
        return DROP;
    switch (n->v.element.tag) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_DEL:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_CODE:
    case GUMBO_TAG_B:
    case GUMBO_TAG_STRONG:
    case GUMBO_TAG_U:
    case GUMBO_TAG_I:
    case GUMBO_TAG_EM:
    case GUMBO_TAG_UL:
        return KEEP;
    case GUMBO_TAG_BR:
        return KEEP_VOID;
    case GUMBO_TAG_A:
        return KEEP_A;
    case GUMBO_TAG_SPAN:
        return KEEP_SPAN;
    case GUMBO_TAG_OL:
        return KEEP_OL;
    case GUMBO_TAG_LI:
        return KEEP_LI;
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
        return HEADING;
    /* Sanitize's remove_contents, and what can only hold markup or script. */
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_NOEMBED:
    case GUMBO_TAG_NOFRAMES:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_PLAINTEXT:
    case GUMBO_TAG_XMP:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_OBJECT:
        return DROP;
    /* Sanitize's whitespace_elements: unwrapped, they keep words apart. */
    case GUMBO_TAG_ADDRESS:
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_FOOTER:
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_HGROUP:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_SECTION:
        return UNWRAP_WS;
    default:
        return UNWRAP;
    }
}

static const char *const link_protocols[] = {
    "http", "https", "dat", "dweb", "ipfs", "ipns", "ssb", "gopher", "xmpp", "magnet", "gemini",
};

static bool
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/*
 * Whether href names one of the link protocols. As Sanitize reads it: after
 * leading white space, the scheme is what comes before the first ':' when no
 * '/' or '#' comes earlier; without one the link is relative, which is not
 * allowed either (a remote post has no base to resolve it against).
 */
static bool
href_is_allowed(const char *href)
{
    while (is_space(*href))
        href++;
    size_t n = strcspn(href, ":/#");
    if (href[n] != ':')
        return false;
    for (size_t i = 0; i < sizeof(link_protocols) / sizeof(*link_protocols); i++)
        if (strlen(link_protocols[i]) == n && strncasecmp(href, link_protocols[i], n) == 0)
            return true;
    return false;
}

static bool
class_is_allowed(const char *c, size_t n)
{
    static const char *const prefixes[] = {"h-", "p-", "u-", "dt-", "e-"};
    static const char *const names[] = {"mention", "hashtag", "ellipsis", "invisible"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
        if (n >= strlen(prefixes[i]) && strncmp(c, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
        if (n == strlen(names[i]) && strncmp(c, names[i], n) == 0)
            return true;
    return false;
}

/* Writes ` class="..."` with the allowed classes of the element, if any. */
static void
put_class(struct buf *b, const GumboElement *el)
{
    const GumboAttribute *a = gumbo_get_attribute(&el->attributes, "class");
    if (!a)
        return;
    bool any = false;
    for (const char *p = a->value; *p;) {
        while (is_space(*p))
            p++;
        size_t n = 0;
        while (p[n] && !is_space(p[n]))
            n++;
        if (n && class_is_allowed(p, n)) {
            buf_puts(b, any ? " " : " class=\"");
            buf_escape(b, p, n);
            any = true;
        }
        p += n;
    }
    if (any)
        buf_puts(b, "\"");
}

/* translate="no" keeps clients from translating a name or a handle. */
static void
put_translate(struct buf *b, const GumboElement *el)
{
    const GumboAttribute *a = gumbo_get_attribute(&el->attributes, "translate");
    if (a && strcmp(a->value, "no") == 0)
        buf_puts(b, " translate=\"no\"");
}

/* Writes ` name="N"` when the attribute is a small integer. */
static void
put_int(struct buf *b, const GumboElement *el, const char *name)
{
    const GumboAttribute *a = gumbo_get_attribute(&el->attributes, name);
    if (!a)
        return;
    const char *v = a->value;
    size_t n = strlen(v);
    if (n == 0 || n > 9 || strspn(v + (v[0] == '-'), "0123456789") != n - (v[0] == '-'))
        return;
    buf_puts(b, " ");
    buf_puts(b, name);
    buf_puts(b, "=\"");
    buf_puts(b, v);
    buf_puts(b, "\"");
}

/* ------------------------------------------------------------ the walk */

struct frame {
    const GumboNode *node;
    unsigned next;     /* index of the next child to visit */
    const char *close; /* written when the node is done */
    int counts;        /* elements we wrote for it (for the depth cap) */
};

struct walk {
    struct buf out;
    struct frame *stack;
    size_t depth, cap;
    int written; /* elements open in the output */
};

static void
push(struct walk *w, const GumboNode *n, const char *close, int counts)
{
    if (w->depth == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 64;
        w->stack = eu_xrealloc(w->stack, w->cap * sizeof(*w->stack));
    }
    w->stack[w->depth++] = (struct frame){n, 0, close, counts};
    w->written += counts;
}

static const GumboVector *
children_of(const GumboNode *n)
{
    if (n->type == GUMBO_NODE_DOCUMENT)
        return &n->v.document.children;
    if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE)
        return &n->v.element.children;
    return NULL;
}

/* Writes the text under n (what a disallowed link is replaced by), skipping
 * what is dropped with its content. Its own stack, after the walk's top. */
static void
put_text_of(struct walk *w, const GumboNode *n)
{
    size_t base = w->depth;
    int written = w->written;
    push(w, n, NULL, 0);
    while (w->depth > base) {
        struct frame *f = &w->stack[w->depth - 1];
        const GumboVector *kids = children_of(f->node);
        if (!kids || f->next >= kids->length) {
            w->depth--;
            continue;
        }
        const GumboNode *c = kids->data[f->next++];
        if (c->type == GUMBO_NODE_TEXT || c->type == GUMBO_NODE_WHITESPACE ||
            c->type == GUMBO_NODE_CDATA)
            buf_escape(&w->out, c->v.text.text, strlen(c->v.text.text));
        else if (c->type == GUMBO_NODE_ELEMENT && rule_of(c) != DROP)
            push(w, c, NULL, 0);
    }
    w->written = written;
}

/* Writes element n's opening, pushes its frame, or handles it whole. */
static void
visit_element(struct walk *w, const GumboNode *n)
{
    const GumboElement *el = &n->v.element;
    enum rule r = rule_of(n);
    if (r == DROP)
        return;
    if (r >= KEEP && w->written + (r == HEADING ? 2 : 1) > EU_SANITIZE_MAX_DEPTH)
        r = UNWRAP;
    struct buf *b = &w->out;
    switch (r) {
    case DROP:
        return;
    case UNWRAP:
        push(w, n, NULL, 0);
        return;
    case UNWRAP_WS:
        buf_puts(b, " ");
        push(w, n, " ", 0);
        return;
    case KEEP_VOID:
        buf_puts(b, "<br>");
        return;
    case HEADING:
        buf_puts(b, "<p><strong>");
        push(w, n, "</strong></p>", 2);
        return;
    case KEEP_A: {
        const GumboAttribute *href = gumbo_get_attribute(&el->attributes, "href");
        if (!href || !href_is_allowed(href->value)) {
            put_text_of(w, n);
            return;
        }
        buf_puts(b, "<a href=\"");
        buf_escape(b, href->value, strlen(href->value));
        buf_puts(b, "\" rel=\"nofollow noopener\" target=\"_blank\"");
        put_class(b, el);
        put_translate(b, el);
        buf_puts(b, ">");
        push(w, n, "</a>", 1);
        return;
    }
    case KEEP_SPAN:
        buf_puts(b, "<span");
        put_class(b, el);
        put_translate(b, el);
        buf_puts(b, ">");
        push(w, n, "</span>", 1);
        return;
    case KEEP_OL:
        buf_puts(b, "<ol");
        put_int(b, el, "start");
        if (gumbo_get_attribute(&el->attributes, "reversed"))
            buf_puts(b, " reversed");
        buf_puts(b, ">");
        push(w, n, "</ol>", 1);
        return;
    case KEEP_LI:
        buf_puts(b, "<li");
        put_int(b, el, "value");
        buf_puts(b, ">");
        push(w, n, "</li>", 1);
        return;
    case KEEP: {
        /* The names gumbo knows are lower case already. */
        const char *name = gumbo_normalized_tagname(el->tag);
        buf_puts(b, "<");
        buf_puts(b, name);
        buf_puts(b, ">");
        char *close = NULL;
        switch (el->tag) {
        case GUMBO_TAG_P:
            close = "</p>";
            break;
        case GUMBO_TAG_DEL:
            close = "</del>";
            break;
        case GUMBO_TAG_PRE:
            close = "</pre>";
            break;
        case GUMBO_TAG_BLOCKQUOTE:
            close = "</blockquote>";
            break;
        case GUMBO_TAG_CODE:
            close = "</code>";
            break;
        case GUMBO_TAG_B:
            close = "</b>";
            break;
        case GUMBO_TAG_STRONG:
            close = "</strong>";
            break;
        case GUMBO_TAG_U:
            close = "</u>";
            break;
        case GUMBO_TAG_I:
            close = "</i>";
            break;
        case GUMBO_TAG_EM:
            close = "</em>";
            break;
        default:
            close = "</ul>";
            break;
        }
        push(w, n, close, 1);
        return;
    }
    }
}

static void
walk_tree(struct walk *w, const GumboNode *root)
{
    push(w, root, NULL, 0);
    while (w->depth > 0) {
        struct frame *f = &w->stack[w->depth - 1];
        const GumboVector *kids = children_of(f->node);
        if (!kids || f->next >= kids->length) {
            if (f->close)
                buf_puts(&w->out, f->close);
            w->written -= f->counts;
            w->depth--;
            continue;
        }
        const GumboNode *c = kids->data[f->next++];
        switch (c->type) {
        case GUMBO_NODE_TEXT:
        case GUMBO_NODE_WHITESPACE:
        case GUMBO_NODE_CDATA:
            buf_escape(&w->out, c->v.text.text, strlen(c->v.text.text));
            break;
        case GUMBO_NODE_ELEMENT:
        case GUMBO_NODE_TEMPLATE:
            visit_element(w, c);
            break;
        default:
            break; /* comments, a document inside: nothing */
        }
    }
}

int
eu_sanitize_html(const char *html, size_t len, char **out, size_t *out_len)
{
    if (len > EU_SANITIZE_MAX_INPUT)
        return -1;
    /* On the heap: longjmp leaves locals changed since setjmp undefined. */
    struct eu_bheap *h =
        eu_bheap_new(BUDGET_FLOOR + BUDGET_PER_BYTE * len, EU_SANITIZE_MAX_CPU_MS, CLOCK_EVERY);
    GumboOptions opts = kGumboDefaultOptions;
    opts.allocator = eu_bheap_alloc;
    opts.deallocator = eu_bheap_free;
    opts.userdata = h;
    opts.max_errors = 0; /* we read none; keep no list of them */
    /* A body fragment, as Sanitize.fragment parses it. */
    opts.fragment_context = GUMBO_TAG_BODY;
    opts.fragment_namespace = GUMBO_NAMESPACE_HTML;

    if (setjmp(h->out)) {
        eu_bheap_free_all(h);
        return -1;
    }
    GumboOutput *g = gumbo_parse_with_options(&opts, html, len);

    struct walk w = {0};
    buf_grow(&w.out, len);
    w.out.p[0] = '\0';
    walk_tree(&w, g->root);
    free(w.stack);
    eu_bheap_free_all(h);

    /* Unwrapped block elements leave spaces at the ends; they carry nothing. */
    size_t start = 0, end = w.out.len;
    while (start < end && is_space(w.out.p[start]))
        start++;
    while (end > start && is_space(w.out.p[end - 1]))
        end--;
    memmove(w.out.p, w.out.p + start, end - start);
    w.out.p[end - start] = '\0';
    *out = w.out.p;
    if (out_len)
        *out_len = end - start;
    return 0;
}
