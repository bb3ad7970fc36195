/*
 * The route table as a segment trie. Each node is one path segment; literal
 * children are kept sorted for binary search and tried before the node's one
 * parameter child, which is how "/accounts/lookup" beats "/accounts/:id".
 * Matching backtracks, so a literal branch that dead-ends further down still
 * lets the parameter branch match.
 *
 * A node ends routes for a set of methods. Each ending keeps its own list of
 * parameter names, so "/a/:id" and "/a/:name/b" may name the same position
 * differently without one route seeing the other's names.
 *
 * An area (a pattern whose last segment is "*") is no route: it sits on the
 * node of its prefix and is what a path under that prefix reaches when no
 * route below the node takes it. It is tried after the node's children, so
 * a route always wins below it, and before the search backtracks to a
 * parameter higher up, so the area under /api/ wins over "/:acct/:id" for
 * "/api/foo", as a literal would.
 *
 * Adding a table is all-or-nothing: every pattern is checked (syntax, and
 * duplicates against the trie and within the table) before any is inserted,
 * so a failed eu_router_add leaves the router as it was.
 */
#include "eunha/router.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/mem.h"

/* Deeper than any Mastodon path; bounds the matcher's stack arrays. */
#define ROUTER_MAX_DEPTH 32
#define N_METHODS 7

/* Allow header order: the usual reading order, not bit order. */
static const unsigned allow_order[N_METHODS] = {
    EU_HTTP_GET,   EU_HTTP_HEAD,   EU_HTTP_POST,    EU_HTTP_PUT,
    EU_HTTP_PATCH, EU_HTTP_DELETE, EU_HTTP_OPTIONS,
};

struct leaf {
    const struct eu_route *route;
    char *names[EU_ROUTE_MAX_PARAMS]; /* owned; in path order */
    size_t n_names;
};

struct node {
    char *segment;          /* literal text; NULL for a parameter node and the root */
    struct node **children; /* literal children sorted by segment */
    size_t n_children;
    struct node *param;
    const struct eu_route *area;   /* the area under this node's path */
    unsigned methods;              /* methods with a route ending here */
    struct leaf leaves[N_METHODS]; /* indexed by method bit number */
};

struct eu_router {
    struct node root;
    unsigned flags; /* union of every added route's flags */
};

/* A pattern split into segments; params have is_param set and text without
 * the ':'. Pointers borrow the pattern. */
struct seg {
    const char *s;
    size_t len;
    bool is_param;
};

struct parsed {
    struct seg segs[ROUTER_MAX_DEPTH];
    size_t n;
    size_t n_params;
    bool is_area; /* ended with a "*" segment, not among segs */
};

static int
method_bit(unsigned method)
{
    for (int i = 0; i < N_METHODS; i++)
        if (method & (1u << i))
            return i;
    return -1;
}

const char *
eu_http_method_name(unsigned method)
{
    switch (method) {
    case EU_HTTP_GET:
        return "GET";
    case EU_HTTP_POST:
        return "POST";
    case EU_HTTP_PUT:
        return "PUT";
    case EU_HTTP_PATCH:
        return "PATCH";
    case EU_HTTP_DELETE:
        return "DELETE";
    case EU_HTTP_HEAD:
        return "HEAD";
    case EU_HTTP_OPTIONS:
        return "OPTIONS";
    default:
        return "";
    }
}

static int
parse_pattern(const char *pattern, struct parsed *out, char *err, size_t errlen)
{
    out->n = out->n_params = 0;
    out->is_area = false;
    if (!pattern || pattern[0] != '/') {
        snprintf(err, errlen, "route pattern '%s' must start with '/'", pattern ? pattern : "");
        return -1;
    }
    if (strcmp(pattern, "/") == 0)
        return 0;
    const char *p = pattern + 1;
    for (;;) {
        size_t len = strcspn(p, "/");
        if (len == 0) {
            snprintf(err, errlen, "route pattern '%s' has an empty segment", pattern);
            return -1;
        }
        if (out->n == ROUTER_MAX_DEPTH) {
            snprintf(err, errlen, "route pattern '%s' is deeper than %d segments", pattern,
                     ROUTER_MAX_DEPTH);
            return -1;
        }
        if (len == 1 && p[0] == '*') {
            if (p[1] != '\0') {
                snprintf(err, errlen, "route pattern '%s' has '*' before its end", pattern);
                return -1;
            }
            out->is_area = true;
            return 0;
        }
        struct seg *s = &out->segs[out->n++];
        s->is_param = p[0] == ':';
        s->s = s->is_param ? p + 1 : p;
        s->len = s->is_param ? len - 1 : len;
        if (s->is_param) {
            if (s->len == 0) {
                snprintf(err, errlen, "route pattern '%s' has a parameter without a name", pattern);
                return -1;
            }
            if (out->n_params == EU_ROUTE_MAX_PARAMS) {
                snprintf(err, errlen, "route pattern '%s' has more than %d parameters", pattern,
                         EU_ROUTE_MAX_PARAMS);
                return -1;
            }
            for (size_t i = 0; i + 1 < out->n; i++) {
                const struct seg *o = &out->segs[i];
                if (o->is_param && o->len == s->len && memcmp(o->s, s->s, s->len) == 0) {
                    snprintf(err, errlen, "route pattern '%s' repeats parameter ':%.*s'", pattern,
                             (int)s->len, s->s);
                    return -1;
                }
            }
            out->n_params++;
        }
        if (p[len] == '\0')
            return 0;
        p += len + 1;
        if (*p == '\0') {
            snprintf(err, errlen, "route pattern '%s' ends with '/'", pattern);
            return -1;
        }
    }
}

/* Same shape: same literals and parameters at the same places. */
static bool
same_shape(const struct parsed *a, const struct parsed *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct seg *x = &a->segs[i], *y = &b->segs[i];
        if (x->is_param != y->is_param)
            return false;
        if (!x->is_param && (x->len != y->len || memcmp(x->s, y->s, x->len) != 0))
            return false;
    }
    return true;
}

/* Literal child with text s[0..len), or NULL. */
static struct node *
child_find(const struct node *n, const char *s, size_t len, size_t *insert_at)
{
    size_t lo = 0, hi = n->n_children;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *seg = n->children[mid]->segment;
        int c = strncmp(seg, s, len);
        if (c == 0 && seg[len] != '\0')
            c = 1; /* seg is longer, so it sorts after s */
        if (c == 0)
            return n->children[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (insert_at)
        *insert_at = lo;
    return NULL;
}

/* The node a pattern ends at, or NULL if the trie has no such path. */
static const struct node *
node_lookup(const struct node *n, const struct parsed *pp)
{
    for (size_t i = 0; i < pp->n && n; i++) {
        const struct seg *s = &pp->segs[i];
        n = s->is_param ? n->param : child_find(n, s->s, s->len, NULL);
    }
    return n;
}

static struct node *
node_insert(struct node *n, const struct parsed *pp)
{
    for (size_t i = 0; i < pp->n; i++) {
        const struct seg *s = &pp->segs[i];
        if (s->is_param) {
            if (!n->param)
                n->param = eu_xcalloc(1, sizeof *n->param);
            n = n->param;
            continue;
        }
        size_t at = 0;
        struct node *c = child_find(n, s->s, s->len, &at);
        if (!c) {
            c = eu_xcalloc(1, sizeof *c);
            c->segment = eu_xstrndup(s->s, s->len);
            n->children = eu_xrealloc(n->children, (n->n_children + 1) * sizeof *n->children);
            memmove(n->children + at + 1, n->children + at,
                    (n->n_children - at) * sizeof *n->children);
            n->children[at] = c;
            n->n_children++;
        }
        n = c;
    }
    return n;
}

static void
node_release(struct node *n)
{
    for (size_t i = 0; i < n->n_children; i++) {
        node_release(n->children[i]);
        free(n->children[i]);
    }
    free(n->children);
    if (n->param) {
        node_release(n->param);
        free(n->param);
    }
    for (int m = 0; m < N_METHODS; m++)
        for (size_t i = 0; i < n->leaves[m].n_names; i++)
            free(n->leaves[m].names[i]);
    free(n->segment);
}

static void
describe_methods(unsigned methods, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_METHODS; i++) {
        if (!(methods & allow_order[i]))
            continue;
        int w =
            snprintf(buf + o, len - o, "%s%s", o ? ", " : "", eu_http_method_name(allow_order[i]));
        if (w < 0 || (size_t)w >= len - o) {
            buf[o] = '\0'; /* drop the partial name: whole methods only */
            return;
        }
        o += (size_t)w;
    }
}

/* An area takes no request, so it has no methods or handler; one prefix has
 * at most one area. */
static int
check_area(const struct eu_router *r, const struct eu_route *routes, const struct parsed *parsed,
           size_t i, char *err, size_t errlen)
{
    const struct eu_route *rt = &routes[i];
    if (rt->methods || rt->handler) {
        snprintf(err, errlen, "area '%s' takes no request: no methods, no handler", rt->pattern);
        return -1;
    }
    const struct node *existing = node_lookup(&r->root, &parsed[i]);
    const struct eu_route *other = existing ? existing->area : NULL;
    for (size_t j = 0; j < i && !other; j++)
        if (parsed[j].is_area && same_shape(&parsed[i], &parsed[j]))
            other = &routes[j];
    if (other) {
        snprintf(err, errlen, "duplicate area %s (already added as %s)", rt->pattern,
                 other->pattern);
        return -1;
    }
    return 0;
}

int
eu_router_add(struct eu_router *r, const struct eu_route *routes, size_t n, char *err,
              size_t errlen)
{
    char dummy[1];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    if (n == 0)
        return 0;
    struct parsed *parsed = eu_xmalloc(n * sizeof *parsed);
    const unsigned all = (1u << N_METHODS) - 1;
    int rc = -1;

    for (size_t i = 0; i < n; i++) {
        const struct eu_route *rt = &routes[i];
        if (parse_pattern(rt->pattern, &parsed[i], err, errlen) < 0)
            goto done;
        if (parsed[i].is_area) {
            if (check_area(r, routes, parsed, i, err, errlen) < 0)
                goto done;
            continue;
        }
        if (rt->methods == 0 || (rt->methods & ~all)) {
            snprintf(err, errlen, "route '%s' has no valid methods", rt->pattern);
            goto done;
        }
        if (!rt->handler) {
            snprintf(err, errlen, "route '%s' has no handler", rt->pattern);
            goto done;
        }
        char names[64];
        const struct node *existing = node_lookup(&r->root, &parsed[i]);
        if (existing && (existing->methods & rt->methods)) {
            unsigned dup = existing->methods & rt->methods;
            describe_methods(dup, names, sizeof names);
            const struct eu_route *other = existing->leaves[method_bit(dup)].route;
            snprintf(err, errlen, "duplicate route %s %s (already added as %s)", names, rt->pattern,
                     other->pattern);
            goto done;
        }
        for (size_t j = 0; j < i; j++) {
            if (!parsed[j].is_area && (routes[j].methods & rt->methods) &&
                same_shape(&parsed[i], &parsed[j])) {
                describe_methods(routes[j].methods & rt->methods, names, sizeof names);
                snprintf(err, errlen, "duplicate route %s %s (already added as %s)", names,
                         rt->pattern, routes[j].pattern);
                goto done;
            }
        }
    }

    /* Everything checked; nothing below can fail. */
    for (size_t i = 0; i < n; i++) {
        struct node *node = node_insert(&r->root, &parsed[i]);
        r->flags |= routes[i].flags;
        if (parsed[i].is_area) {
            node->area = &routes[i];
            continue;
        }
        for (int m = 0; m < N_METHODS; m++) {
            if (!(routes[i].methods & (1u << m)))
                continue;
            struct leaf *lf = &node->leaves[m];
            lf->route = &routes[i];
            lf->n_names = 0;
            for (size_t s = 0; s < parsed[i].n; s++)
                if (parsed[i].segs[s].is_param)
                    lf->names[lf->n_names++] =
                        eu_xstrndup(parsed[i].segs[s].s, parsed[i].segs[s].len);
        }
        node->methods |= routes[i].methods;
    }
    rc = 0;

done:
    free(parsed);
    return rc;
}

unsigned
eu_router_flags(const struct eu_router *r)
{
    return r->flags;
}

struct eu_router *
eu_router_new(const struct eu_route *routes, size_t n, char *err, size_t errlen)
{
    struct eu_router *r = eu_xcalloc(1, sizeof *r);
    if (eu_router_add(r, routes, n, err, errlen) < 0) {
        eu_router_free(r);
        return NULL;
    }
    return r;
}

void
eu_router_free(struct eu_router *r)
{
    if (!r)
        return;
    node_release(&r->root);
    free(r);
}

/* --- matching ---------------------------------------------------------------- */

struct match {
    const struct seg *segs;
    size_t n;
    unsigned method;
    size_t captured[ROUTER_MAX_DEPTH]; /* indexes of segments bound to params */
    size_t n_captured;
    const struct node *found;
    size_t found_captured[ROUTER_MAX_DEPTH];
    const struct node *other_method; /* first path match lacking the method */
    const struct eu_route *area;     /* the area that took the path, if one did */
};

static bool
match_node(const struct node *n, size_t i, struct match *m)
{
    if (i == m->n) {
        if (n->methods & m->method) {
            m->found = n;
            memcpy(m->found_captured, m->captured, m->n_captured * sizeof m->captured[0]);
            return true;
        }
        if (n->methods && !m->other_method)
            m->other_method = n;
        return false;
    }
    const struct seg *s = &m->segs[i];
    const struct node *c = child_find(n, s->s, s->len, NULL);
    if (c && match_node(c, i + 1, m))
        return true;
    if (n->param) {
        m->captured[m->n_captured++] = i;
        if (match_node(n->param, i + 1, m))
            return true;
        m->n_captured--;
    }
    /* Not when a route below matched the path for another method: that
     * answer is a 405 with its Allow header. */
    if (n->area && !m->other_method) {
        m->area = n->area;
        return true;
    }
    return false;
}

/* Splits path into at most ROUTER_MAX_DEPTH segments, borrowing it. Empty
 * segments ("//", a trailing "/") are skipped, as router.h promises. Returns
 * false for a path deeper than that, of which segs holds the first part. */
static bool
split_path(const char *path, struct seg *segs, size_t *n)
{
    *n = 0;
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, "/");
        if (*n == ROUTER_MAX_DEPTH)
            return false;
        segs[*n].s = p;
        segs[*n].len = len;
        segs[*n].is_param = false;
        (*n)++;
        p += len;
    }
    return true;
}

static int
hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..len) into the arena. NULL for a malformed escape or
 * %00, which would cut the C string short and make two ids look alike. */
static char *
percent_decode(struct eu_arena *arena, const char *s, size_t len)
{
    char *out = eu_arena_alloc(arena, len + 1);
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') {
            out[o++] = s[i];
            continue;
        }
        int hi = i + 2 < len ? hex_value(s[i + 1]) : -1;
        int lo = hi >= 0 ? hex_value(s[i + 2]) : -1;
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
            return NULL;
        out[o++] = (char)(hi * 16 + lo);
        i += 2;
    }
    out[o] = '\0';
    return out;
}

enum eu_route_match
eu_router_match(const struct eu_router *r, unsigned method, const char *path,
                struct eu_arena *arena, const struct eu_route **out, struct eu_route_params *params,
                char *allow, size_t allowlen)
{
    struct seg segs[ROUTER_MAX_DEPTH];
    size_t n = 0;
    if (params)
        params->n = 0;
    if (out)
        *out = NULL;
    if (allow && allowlen)
        allow[0] = '\0';

    /* A path deeper than any route cannot match. */
    if (!split_path(path, segs, &n))
        return EU_ROUTE_NOT_FOUND;

    struct match m = {.segs = segs, .n = n, .method = method};
    if (!match_node(&r->root, 0, &m) || m.area) {
        if (m.area)
            return EU_ROUTE_NOT_FOUND;
        if (!m.other_method)
            return EU_ROUTE_NOT_FOUND;
        if (allow && allowlen)
            describe_methods(m.other_method->methods, allow, allowlen);
        return EU_ROUTE_METHOD_NOT_ALLOWED;
    }

    const struct leaf *lf = &m.found->leaves[method_bit(m.found->methods & method)];
    if (params) {
        for (size_t k = 0; k < lf->n_names; k++) {
            const struct seg *s = &segs[m.found_captured[k]];
            char *v = percent_decode(arena, s->s, s->len);
            if (!v) {
                params->n = 0;
                return EU_ROUTE_NOT_FOUND;
            }
            params->p[k].name = lf->names[k];
            params->p[k].value = v;
        }
        params->n = lf->n_names;
    }
    if (out)
        *out = lf->route;
    return EU_ROUTE_FOUND;
}

unsigned
eu_router_path_flags(const struct eu_router *r, const char *path)
{
    struct seg segs[ROUTER_MAX_DEPTH];
    size_t n;
    /* Too deep for a route: only an area can cover it, and the first
     * segments are enough to find it (no method matches, so no route). */
    bool fits = split_path(path, segs, &n);
    struct match m = {.segs = segs, .n = n, .method = fits ? (1u << N_METHODS) - 1 : 0};
    if (!match_node(&r->root, 0, &m))
        return 0;
    if (m.area)
        return m.area->flags;
    unsigned flags = 0;
    for (int i = 0; i < N_METHODS; i++)
        if (m.found->methods & (1u << i))
            flags |= m.found->leaves[i].route->flags;
    return flags;
}

const char *
eu_route_params_get(const struct eu_route_params *params, const char *name)
{
    if (!params || !name)
        return NULL;
    for (size_t i = 0; i < params->n; i++)
        if (strcmp(params->p[i].name, name) == 0)
            return params->p[i].value;
    return NULL;
}
