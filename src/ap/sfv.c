/*
 * RFC 8941 Dictionaries (src/ap/sfv_internal.h), parsed by the algorithm of
 * its section 4.2, one function per rule. The input is capped
 * (EU_SFV_MAX_INPUT), and so are the counts, so a hostile header costs at
 * most one small fixed struct and one copy of its text.
 */
#include "sfv_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/mem.h"

struct parser {
    const char *s;
    size_t pos, len;
    struct eu_sfv_dict *d;
    char *out; /* next free byte of d->text */
};

static int
peek(const struct parser *p)
{
    return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static bool
is_lcalpha(int c)
{
    return c >= 'a' && c <= 'z';
}

static bool
is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* RFC 9110 tchar. */
static bool
is_tchar(int c)
{
    return c > 0 && (is_alpha(c) || is_digit(c) || strchr("!#$%&'*+-.^_`|~", c));
}

static void
skip_sp(struct parser *p)
{
    while (peek(p) == ' ')
        p->pos++;
}

static void
skip_ows(struct parser *p)
{
    while (peek(p) == ' ' || peek(p) == '\t')
        p->pos++;
}

/* Copies n bytes into the dict's text, NUL-terminated; returns the copy. */
static const char *
keep(struct parser *p, const char *src, size_t n)
{
    char *at = p->out;
    memcpy(at, src, n);
    at[n] = '\0';
    p->out += n + 1;
    return at;
}

static const char *
parse_key(struct parser *p)
{
    int c = peek(p);
    if (!is_lcalpha(c) && c != '*')
        return NULL;
    size_t start = p->pos;
    while ((c = peek(p)) >= 0 && (is_lcalpha(c) || is_digit(c) || strchr("_-.*", c)))
        p->pos++;
    return keep(p, p->s + start, p->pos - start);
}

static int
parse_number(struct parser *p, struct eu_sfv_bare *b)
{
    bool neg = false;
    if (peek(p) == '-') {
        neg = true;
        p->pos++;
    }
    if (!is_digit(peek(p)))
        return -1;
    int64_t ipart = 0;
    int idigits = 0, fdigits = 0, frac = 0;
    bool decimal = false;
    int c;
    while ((c = peek(p)) >= 0) {
        if (is_digit(c)) {
            if (decimal) {
                if (++fdigits > 3)
                    return -1;
                frac = frac * 10 + (c - '0');
            } else {
                if (++idigits > 15)
                    return -1;
                ipart = ipart * 10 + (c - '0');
            }
        } else if (c == '.' && !decimal) {
            if (idigits > 12)
                return -1;
            decimal = true;
        } else {
            break;
        }
        p->pos++;
    }
    if (decimal) {
        if (fdigits == 0)
            return -1;
        for (int i = fdigits; i < 3; i++)
            frac *= 10;
        b->type = EU_SFV_DECIMAL;
        b->integer = ipart * 1000 + frac;
    } else {
        b->type = EU_SFV_INTEGER;
        b->integer = ipart;
    }
    if (neg)
        b->integer = -b->integer;
    return 0;
}

static int
parse_string(struct parser *p, struct eu_sfv_bare *b)
{
    p->pos++; /* the opening quote */
    char *at = p->out;
    size_t n = 0;
    for (;;) {
        int c = peek(p);
        if (c < 0)
            return -1;
        p->pos++;
        if (c == '\\') {
            c = peek(p);
            if (c != '"' && c != '\\')
                return -1;
            p->pos++;
        } else if (c == '"') {
            break;
        } else if (c < 0x20 || c > 0x7e) {
            return -1;
        }
        at[n++] = (char)c;
    }
    at[n] = '\0';
    p->out += n + 1;
    b->type = EU_SFV_STRING;
    b->str = at;
    b->len = n;
    return 0;
}

static int
parse_token(struct parser *p, struct eu_sfv_bare *b)
{
    size_t start = p->pos;
    int c;
    p->pos++;
    while ((c = peek(p)) >= 0 && (is_tchar(c) || c == ':' || c == '/'))
        p->pos++;
    b->type = EU_SFV_TOKEN;
    b->len = p->pos - start;
    b->str = keep(p, p->s + start, b->len);
    return 0;
}

static int
parse_bytes(struct parser *p, struct eu_sfv_bare *b)
{
    p->pos++;
    size_t start = p->pos;
    int c;
    while ((c = peek(p)) >= 0 && c != ':') {
        if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '/' && c != '=')
            return -1;
        p->pos++;
    }
    if (c != ':')
        return -1;
    b->type = EU_SFV_BYTES;
    b->len = p->pos - start;
    b->str = keep(p, p->s + start, b->len);
    p->pos++;
    return 0;
}

static int
parse_bare(struct parser *p, struct eu_sfv_bare *b)
{
    memset(b, 0, sizeof(*b));
    int c = peek(p);
    if (c == '-' || is_digit(c))
        return parse_number(p, b);
    if (c == '"')
        return parse_string(p, b);
    if (is_alpha(c) || c == '*')
        return parse_token(p, b);
    if (c == ':')
        return parse_bytes(p, b);
    if (c == '?') {
        p->pos++;
        c = peek(p);
        if (c != '0' && c != '1')
            return -1;
        p->pos++;
        b->type = EU_SFV_BOOLEAN;
        b->boolean = c == '1';
        return 0;
    }
    return -1;
}

static int
parse_params(struct parser *p, int *first, int *n)
{
    struct eu_sfv_dict *d = p->d;
    *first = d->nparams;
    *n = 0;
    while (peek(p) == ';') {
        p->pos++;
        skip_sp(p);
        const char *key = parse_key(p);
        if (!key)
            return -1;
        for (int i = *first; i < d->nparams; i++)
            if (strcmp(d->params[i].key, key) == 0)
                return -1;
        if (d->nparams >= EU_SFV_MAX_PARAMS)
            return -1;
        struct eu_sfv_param *prm = &d->params[d->nparams];
        prm->key = key;
        prm->value = (struct eu_sfv_bare){.type = EU_SFV_BOOLEAN, .boolean = true};
        if (peek(p) == '=') {
            p->pos++;
            if (parse_bare(p, &prm->value) < 0)
                return -1;
        }
        d->nparams++;
        (*n)++;
    }
    return 0;
}

static int
parse_item(struct parser *p)
{
    struct eu_sfv_dict *d = p->d;
    if (d->nitems >= EU_SFV_MAX_ITEMS)
        return -1;
    struct eu_sfv_item *it = &d->items[d->nitems++];
    if (parse_bare(p, &it->bare) < 0)
        return -1;
    return parse_params(p, &it->first_param, &it->nparams);
}

static int
parse_inner_list(struct parser *p, struct eu_sfv_member *m)
{
    p->pos++; /* '(' */
    m->inner = true;
    m->first_item = p->d->nitems;
    m->nitems = 0;
    for (;;) {
        skip_sp(p);
        if (peek(p) == ')') {
            p->pos++;
            return parse_params(p, &m->first_param, &m->nparams);
        }
        if (parse_item(p) < 0)
            return -1;
        m->nitems++;
        int c = peek(p);
        if (c != ' ' && c != ')')
            return -1;
    }
}

int
eu_sfv_dict_parse(struct eu_sfv_dict *d, const char *s)
{
    memset(d, 0, sizeof(*d));
    size_t len = strlen(s);
    if (len > EU_SFV_MAX_INPUT)
        return -1;
    /* Every copied key or string is a part of the input plus a NUL. */
    d->text = eu_xmalloc(2 * len + 2);
    struct parser p = {.s = s, .len = len, .d = d, .out = d->text};
    skip_sp(&p);
    while (p.pos < p.len) {
        const char *key = parse_key(&p);
        if (!key || eu_sfv_dict_get(d, key) || d->nmembers >= EU_SFV_MAX_MEMBERS)
            goto fail;
        struct eu_sfv_member *m = &d->members[d->nmembers];
        m->key = key;
        if (peek(&p) == '=') {
            p.pos++;
            if (peek(&p) == '(') {
                if (parse_inner_list(&p, m) < 0)
                    goto fail;
            } else {
                m->first_item = d->nitems;
                m->nitems = 1;
                if (parse_item(&p) < 0)
                    goto fail;
            }
        } else {
            /* A bare key is Boolean true with parameters. */
            if (d->nitems >= EU_SFV_MAX_ITEMS)
                goto fail;
            m->first_item = d->nitems;
            m->nitems = 1;
            struct eu_sfv_item *it = &d->items[d->nitems++];
            it->bare = (struct eu_sfv_bare){.type = EU_SFV_BOOLEAN, .boolean = true};
            if (parse_params(&p, &it->first_param, &it->nparams) < 0)
                goto fail;
        }
        d->nmembers++;
        skip_ows(&p);
        if (p.pos >= p.len)
            break;
        if (peek(&p) != ',')
            goto fail;
        p.pos++;
        skip_ows(&p);
        if (p.pos >= p.len)
            goto fail; /* a trailing comma */
    }
    return 0;
fail:
    eu_sfv_dict_release(d);
    return -1;
}

void
eu_sfv_dict_release(struct eu_sfv_dict *d)
{
    free(d->text);
    memset(d, 0, sizeof(*d));
}

const struct eu_sfv_member *
eu_sfv_dict_get(const struct eu_sfv_dict *d, const char *key)
{
    for (int i = 0; i < d->nmembers; i++)
        if (strcmp(d->members[i].key, key) == 0)
            return &d->members[i];
    return NULL;
}

const struct eu_sfv_bare *
eu_sfv_param_get(const struct eu_sfv_dict *d, int first, int n, const char *key)
{
    for (int i = first; i < first + n; i++)
        if (strcmp(d->params[i].key, key) == 0)
            return &d->params[i].value;
    return NULL;
}

/* ---- serialising (RFC 8941 section 4.1) ---- */

struct buf {
    char *s;
    size_t len, cap;
};

static void
put(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = eu_xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void
puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static int
put_bare(struct buf *b, const struct eu_sfv_bare *v)
{
    char num[64];
    switch (v->type) {
    case EU_SFV_INTEGER:
        snprintf(num, sizeof(num), "%lld", (long long)v->integer);
        puts_(b, num);
        return 0;
    case EU_SFV_DECIMAL: {
        /* Shortest form with at least one fractional digit: three
         * digits, then the trailing zeros off (a width given with `*`
         * leaves GCC unable to bound the output at -O1). */
        int64_t a = v->integer < 0 ? -v->integer : v->integer;
        int n = snprintf(num, sizeof(num), "%s%lld.%03lld", v->integer < 0 ? "-" : "",
                         (long long)(a / 1000), (long long)(a % 1000));
        while (n > 2 && num[n - 1] == '0' && num[n - 2] != '.')
            num[--n] = '\0';
        puts_(b, num);
        return 0;
    }
    case EU_SFV_STRING:
        put(b, "\"", 1);
        for (size_t i = 0; i < v->len; i++) {
            unsigned char c = (unsigned char)v->str[i];
            if (c < 0x20 || c > 0x7e)
                return -1;
            if (c == '"' || c == '\\')
                put(b, "\\", 1);
            put(b, v->str + i, 1);
        }
        put(b, "\"", 1);
        return 0;
    case EU_SFV_TOKEN:
        put(b, v->str, v->len);
        return 0;
    case EU_SFV_BYTES:
        put(b, ":", 1);
        put(b, v->str, v->len);
        put(b, ":", 1);
        return 0;
    case EU_SFV_BOOLEAN:
        puts_(b, v->boolean ? "?1" : "?0");
        return 0;
    }
    return -1;
}

static int
put_params(struct buf *b, const struct eu_sfv_dict *d, int first, int n)
{
    for (int i = first; i < first + n; i++) {
        const struct eu_sfv_param *prm = &d->params[i];
        put(b, ";", 1);
        puts_(b, prm->key);
        if (prm->value.type == EU_SFV_BOOLEAN && prm->value.boolean)
            continue;
        put(b, "=", 1);
        if (put_bare(b, &prm->value) < 0)
            return -1;
    }
    return 0;
}

char *
eu_sfv_member_serialize(const struct eu_sfv_dict *d, const struct eu_sfv_member *m)
{
    struct buf b = {0};
    put(&b, "", 0);
    if (m->inner)
        put(&b, "(", 1);
    for (int i = 0; i < m->nitems; i++) {
        const struct eu_sfv_item *it = &d->items[m->first_item + i];
        if (i > 0)
            put(&b, " ", 1);
        if (put_bare(&b, &it->bare) < 0 || put_params(&b, d, it->first_param, it->nparams) < 0)
            goto fail;
    }
    if (m->inner) {
        put(&b, ")", 1);
        if (put_params(&b, d, m->first_param, m->nparams) < 0)
            goto fail;
    }
    return b.s;
fail:
    free(b.s);
    return NULL;
}
