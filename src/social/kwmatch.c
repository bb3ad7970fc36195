/*
 * Filter keywords compiled into one Aho-Corasick automaton
 * (kwmatch_internal.h). Written here rather than taken from a library:
 * Debian's multi-pattern matchers are Hyperscan/Vectorscan (a C++ runtime,
 * x86 only in Debian, and a compile step far slower than this whole file
 * for a few hundred literals) and PCRE2 (an alternation of keywords is
 * still tried keyword by keyword).
 *
 * Whole-word rules become plain substring rules by writing a boundary mark
 * (byte 0, which no C string contains) into the text wherever it changes
 * between word and non-word bytes, and at either end when it starts or
 * ends with a word byte. A whole-word keyword gets the same marks inside
 * and, where it has a word edge, a mark at that edge. It then occurs in the
 * marked text exactly when it occurred in the text with a boundary at each
 * word edge, so every occurrence is a match and no keyword needs looking at
 * twice: a run reports each keyword at its first occurrence and never walks
 * a keyword again. Case is folded on both sides before marking, so marks
 * fall on the same bytes.
 *
 * The trie is stored in breadth-first order, which puts each node's
 * children next to each other sorted by byte: a node needs only its first
 * child and their count, and a step is a binary search among them. Nodes
 * of depth 2 or less (the first ids) also get a full row of 256 next
 * states with the failure links resolved: a text spends most of its bytes
 * there, and without the rows the cost per byte grew with how many
 * keywords share the first bytes. With 16 KiB of keyword text (the
 * per-account cap), a marked keyword is at most about twice its length,
 * so an automaton stays under about 33,000 nodes of 20 bytes plus
 * ROW_MAX rows of 1 KiB: under 1 MiB.
 */
#include "kwmatch_internal.h"

#include <stdlib.h>
#include <string.h>

#include "eunha/mem.h"

/* Root's id; also "no link" for out, since the root ends no pattern. */
#define ROOT 0
#define MARK 0
#define NO_TERM UINT32_MAX
/* Nodes this shallow get full rows, at most ROW_MAX of them (1 KiB each). */
#define ROW_DEPTH 2
#define ROW_MAX 256

struct node {
    uint32_t first; /* first child's id; children are contiguous, by byte */
    uint32_t fail;  /* longest proper suffix that is a node */
    uint32_t out;   /* itself if a pattern ends here, else the longest
                     * suffix that ends one; ROOT: none */
    uint32_t term;  /* terminal number when a pattern ends here, or NO_TERM */
    uint16_t nchild;
    uint8_t label; /* the byte on the edge from the parent */
};

struct eu_kwmatch {
    struct node *nodes;
    uint32_t nnodes;
    uint32_t nrows;     /* nodes 0 .. nrows - 1 have a row */
    uint32_t *rows;     /* rows[id * 256 + c]: next state from id on byte c */
    uint32_t root[256]; /* root's child for each byte; ROOT: none */
    uint8_t fold[256];  /* is_word() and fold() as tables, for the run */
    bool word[256];
    uint32_t nterm;
    uint32_t *term_first; /* per terminal: its first pattern */
    uint32_t *pat_next;   /* per pattern: next pattern of the same terminal */
    size_t npat;
};

static bool
is_word(unsigned char c)
{
    /* Non-ASCII bytes count as letters: a keyword in any script then
     * matches whole words the way an ASCII one does. */
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '_';
}

static unsigned char
fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

/*
 * The marked, folded form of a keyword into out (room for 2 * strlen + 1
 * bytes); returns its length. Without whole_word, no mark at the edges:
 * the text may or may not have one there.
 */
static size_t
mark_pattern(const char *s, bool whole_word, unsigned char *out)
{
    size_t n = 0;
    bool prev = whole_word ? false : is_word((unsigned char)s[0]);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool w = is_word(*p);
        if (w != prev)
            out[n++] = MARK;
        out[n++] = fold(*p);
        prev = w;
    }
    if (whole_word && prev)
        out[n++] = MARK;
    return n;
}

/* ------------------------------------------------------------ building */

/* The trie as first built: children in sibling lists, in arrival order. */
struct draft {
    uint8_t *label;
    uint32_t *child, *sibling; /* ROOT: none */
    uint32_t *term_first;      /* NO_TERM: no pattern ends here */
    uint32_t n;
};

static uint32_t
draft_insert(struct draft *d, const unsigned char *s, size_t len, uint32_t pattern,
             uint32_t *pat_next)
{
    uint32_t at = ROOT;
    for (size_t i = 0; i < len; i++) {
        uint32_t c = d->child[at];
        while (c != ROOT && d->label[c] != s[i])
            c = d->sibling[c];
        if (c == ROOT) {
            c = d->n++;
            d->label[c] = s[i];
            d->child[c] = ROOT;
            d->term_first[c] = NO_TERM;
            d->sibling[c] = d->child[at];
            d->child[at] = c;
        }
        at = c;
    }
    /* Patterns are inserted in index order; keep each node's list so. */
    uint32_t *link = &d->term_first[at];
    while (*link != NO_TERM)
        link = &pat_next[*link];
    *link = pattern;
    pat_next[pattern] = NO_TERM;
    return at;
}

static int
by_label(const void *a, const void *b, void *labels)
{
    const uint8_t *l = labels;
    return (int)l[*(const uint32_t *)a] - (int)l[*(const uint32_t *)b];
}

static uint32_t
child_of(const struct eu_kwmatch *m, uint32_t at, unsigned char c)
{
    if (at == ROOT)
        return m->root[c];
    const struct node *n = &m->nodes[at];
    uint32_t lo = n->first, hi = n->first + n->nchild;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->nodes[mid].label < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n->first + n->nchild && m->nodes[lo].label == c ? lo : ROOT;
}

/*
 * Renumbers the draft breadth-first into m->nodes, children sorted by
 * byte, and sets the terminals; parent[] receives each new node's parent.
 */
static void
pack(struct eu_kwmatch *m, const struct draft *d, uint32_t *parent)
{
    uint32_t *order = eu_xmalloc(d->n * sizeof(*order)); /* new id -> draft id */
    uint32_t *kids = eu_xmalloc(d->n * sizeof(*kids));
    uint32_t tail = 1;
    order[ROOT] = ROOT;
    parent[ROOT] = ROOT;
    m->nodes[ROOT].label = 0;
    for (uint32_t id = 0; id < tail; id++) {
        uint32_t old = order[id];
        uint32_t nk = 0;
        for (uint32_t c = d->child[old]; c != ROOT; c = d->sibling[c])
            kids[nk++] = c;
        if (nk > 1)
            qsort_r(kids, nk, sizeof(*kids), by_label, d->label);
        struct node *n = &m->nodes[id];
        n->first = tail;
        n->nchild = (uint16_t)nk;
        n->term = NO_TERM;
        if (d->term_first[old] != NO_TERM) {
            m->term_first[m->nterm] = d->term_first[old];
            n->term = m->nterm++;
        }
        for (uint32_t k = 0; k < nk; k++) {
            order[tail] = kids[k];
            parent[tail] = id;
            m->nodes[tail].label = d->label[kids[k]];
            if (id == ROOT)
                m->root[d->label[kids[k]]] = tail;
            tail++;
        }
    }
    free(kids);
    free(order);
}

/* Failure and dictionary links, in breadth-first order so that a node's
 * shorter suffixes are done before it. */
static void
link_suffixes(struct eu_kwmatch *m, const uint32_t *parent)
{
    for (uint32_t v = 1; v < m->nnodes; v++) {
        struct node *n = &m->nodes[v];
        uint32_t u = parent[v], f = ROOT;
        if (u != ROOT) {
            f = m->nodes[u].fail;
            while (f != ROOT && child_of(m, f, n->label) == ROOT)
                f = m->nodes[f].fail;
            f = child_of(m, f, n->label);
        }
        n->fail = f;
        n->out = n->term != NO_TERM ? v : m->nodes[f].out;
    }
}

/*
 * Full rows for the nodes of depth up to ROW_DEPTH, which breadth-first
 * order numbers first, up to ROW_MAX of them. A missing child goes where
 * the failure link's row says; that node is shallower, so its row is done.
 */
static void
fill_rows(struct eu_kwmatch *m, const uint32_t *parent)
{
    uint8_t *depth = eu_xcalloc(m->nnodes, 1);
    uint32_t n = 1;
    for (; n < m->nnodes && n < ROW_MAX; n++) {
        depth[n] = (uint8_t)(depth[parent[n]] + 1);
        if (depth[n] > ROW_DEPTH)
            break;
    }
    free(depth);
    m->nrows = n;
    m->rows = eu_xmalloc((size_t)m->nrows * 256 * sizeof(*m->rows));
    memcpy(m->rows, m->root, sizeof(m->root));
    for (uint32_t v = 1; v < m->nrows; v++) {
        uint32_t *row = m->rows + (size_t)v * 256;
        memcpy(row, m->rows + (size_t)m->nodes[v].fail * 256, sizeof(m->root));
        const struct node *nd = &m->nodes[v];
        for (uint32_t k = nd->first; k < nd->first + nd->nchild; k++)
            row[m->nodes[k].label] = k;
    }
}

struct eu_kwmatch *
eu_kwmatch_new(const struct eu_kwmatch_pattern *patterns, size_t n)
{
    struct eu_kwmatch *m = eu_xcalloc(1, sizeof(*m));
    for (int c = 0; c < 256; c++) {
        m->fold[c] = fold((unsigned char)c);
        m->word[c] = is_word((unsigned char)c);
    }
    m->npat = n;
    m->pat_next = eu_xmalloc((n ? n : 1) * sizeof(*m->pat_next));
    size_t total = 1, longest = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(patterns[i].text);
        total += 2 * l + 1;
        longest = l > longest ? l : longest;
    }
    struct draft d = {
        .label = eu_xmalloc(total),
        .child = eu_xmalloc(total * sizeof(uint32_t)),
        .sibling = eu_xmalloc(total * sizeof(uint32_t)),
        .term_first = eu_xmalloc(total * sizeof(uint32_t)),
        .n = 1,
    };
    d.child[ROOT] = ROOT;
    d.term_first[ROOT] = NO_TERM;
    unsigned char *marked = eu_xmalloc(2 * longest + 1);
    for (size_t i = 0; i < n; i++) {
        m->pat_next[i] = NO_TERM;
        /* Empty matches nothing: it never enters the trie. */
        if (!patterns[i].text[0])
            continue;
        size_t l = mark_pattern(patterns[i].text, patterns[i].whole_word, marked);
        draft_insert(&d, marked, l, (uint32_t)i, m->pat_next);
    }
    free(marked);

    m->nnodes = d.n;
    m->nodes = eu_xcalloc(d.n, sizeof(*m->nodes));
    m->term_first = eu_xmalloc((n ? n : 1) * sizeof(*m->term_first));
    uint32_t *parent = eu_xmalloc(d.n * sizeof(*parent));
    pack(m, &d, parent);
    link_suffixes(m, parent);
    fill_rows(m, parent);
    free(parent);
    free(d.label);
    free(d.child);
    free(d.sibling);
    free(d.term_first);
    return m;
}

void
eu_kwmatch_free(struct eu_kwmatch *m)
{
    if (!m)
        return;
    free(m->nodes);
    free(m->rows);
    free(m->term_first);
    free(m->pat_next);
    free(m);
}

size_t
eu_kwmatch_count(const struct eu_kwmatch *m)
{
    return m->npat;
}

size_t
eu_kwmatch_size(const struct eu_kwmatch *m)
{
    return sizeof(*m) + m->nnodes * sizeof(*m->nodes) + (size_t)m->nrows * 256 * sizeof(*m->rows) +
           (m->npat ? m->npat : 1) * (sizeof(*m->term_first) + sizeof(*m->pat_next));
}

/* ------------------------------------------------------------- running */

static inline uint32_t
step(const struct eu_kwmatch *m, uint32_t s, unsigned char c)
{
    while (s >= m->nrows) {
        uint32_t next = child_of(m, s, c);
        if (next != ROOT)
            return next;
        s = m->nodes[s].fail;
    }
    return m->rows[(size_t)s * 256 + c];
}

struct found {
    uint8_t *seen;  /* a bit per terminal */
    uint32_t *list; /* terminals in the order found */
    uint32_t n;
};

/* Records the patterns ending at state s. A terminal already seen has had
 * the rest of its chain seen too, so the walk stops there: each terminal
 * is visited once per run. */
static void
report(const struct eu_kwmatch *m, uint32_t s, struct found *f)
{
    for (uint32_t t = m->nodes[s].out; t != ROOT; t = m->nodes[m->nodes[t].fail].out) {
        uint32_t k = m->nodes[t].term;
        if (f->seen[k / 8] & (1u << (k % 8)))
            break;
        f->seen[k / 8] |= (uint8_t)(1u << (k % 8));
        f->list[f->n++] = k;
    }
}

static int
by_index(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

size_t
eu_kwmatch_run(const struct eu_kwmatch *m, const char *text, uint32_t *hits)
{
    if (m->nterm == 0)
        return 0;
    struct found f = {
        .seen = eu_xcalloc((m->nterm + 7) / 8, 1),
        .list = eu_xmalloc(m->nterm * sizeof(uint32_t)),
    };
    uint32_t s = ROOT;
    bool prev = false;
    /* The NUL at the end counts as a non-word byte, for the last mark. */
    for (const unsigned char *p = (const unsigned char *)text; f.n < m->nterm; p++) {
        bool w = m->word[*p];
        if (w != prev) {
            s = step(m, s, MARK);
            if (m->nodes[s].out != ROOT)
                report(m, s, &f);
            prev = w;
        }
        if (!*p)
            break;
        s = step(m, s, m->fold[*p]);
        if (m->nodes[s].out != ROOT)
            report(m, s, &f);
    }
    size_t n = 0;
    for (uint32_t i = 0; i < f.n; i++)
        for (uint32_t p = m->term_first[f.list[i]]; p != NO_TERM; p = m->pat_next[p])
            hits[n++] = p;
    qsort(hits, n, sizeof(*hits), by_index);
    free(f.seen);
    free(f.list);
    return n;
}
