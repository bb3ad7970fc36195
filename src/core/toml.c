/*
 * A small TOML reader for eunha.toml. It reads the whole document into a flat
 * list of fully dotted keys in file order, which is all the config loader
 * needs: it walks the list once and rejects keys it does not know.
 *
 * Supported: [tables] with dotted and quoted names, bare/quoted/dotted keys,
 * basic and literal strings (single- and multi-line) with all TOML escapes,
 * integers (sign, underscores, 0x/0o/0b), booleans, arrays (nested,
 * multi-line, comments, trailing comma) and inline tables, which are flattened
 * into dotted keys. Floats, dates and arrays of tables are rejected with an
 * error that says so, rather than misread.
 *
 * Table bookkeeping follows TOML 1.0: every table is remembered with how it
 * came to exist (a [header], implicitly as the parent of a header, through a
 * dotted key, or as an inline table), because that decides whether it may be
 * defined or extended again later.
 */
#include "eunha/toml.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/mem.h"

/* Arrays nest by recursion; a bound keeps a hostile file from exhausting the
 * stack. Nothing in eunha.toml comes close. */
#define TOML_MAX_DEPTH 32

enum table_kind {
    TABLE_HEADER,   /* [a.b] */
    TABLE_IMPLICIT, /* "a" after [a.b]: may still get its own header once */
    TABLE_DOTTED,   /* "a" after a.b = 1: no header allowed later */
    TABLE_INLINE,   /* a = {...}: sealed */
};

struct table {
    char *name;
    enum table_kind kind;
};

struct strlist {
    char **v;
    size_t n, cap;
};

struct sbuf {
    char *d;
    size_t n, cap;
};

struct parser {
    const char *s;
    size_t len, pos;
    /* Line numbers are computed from positions on demand; the cache makes
     * the usual forward-moving lookups cheap. */
    size_t line_pos;
    int line_no;
    struct eu_toml_doc *doc;
    size_t entries_cap;
    struct table *tables;
    size_t n_tables, tables_cap;
    char *err;
    size_t errlen;
};

/* --- small helpers --------------------------------------------------------- */

static void
sbuf_putc(struct sbuf *b, char c)
{
    if (b->n + 2 > b->cap) {
        b->cap = b->cap ? b->cap * 2 : 32;
        b->d = eu_xrealloc(b->d, b->cap);
    }
    b->d[b->n++] = c;
    b->d[b->n] = '\0';
}

/* Returns the buffer's string (caller frees), never NULL. */
static char *
sbuf_take(struct sbuf *b)
{
    char *s = b->d ? b->d : eu_xstrdup("");
    b->d = NULL;
    b->n = b->cap = 0;
    return s;
}

static void
strlist_push(struct strlist *l, char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = eu_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

static void
strlist_release(struct strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* Joins prefix (may be "") and parts[0..n) with dots; caller frees. */
static char *
join_key(const char *prefix, char *const *parts, size_t n)
{
    struct sbuf b = {0};
    for (const char *c = prefix; *c; c++)
        sbuf_putc(&b, *c);
    for (size_t i = 0; i < n; i++) {
        if (b.n > 0 || i > 0)
            sbuf_putc(&b, '.');
        for (const char *c = parts[i]; *c; c++)
            sbuf_putc(&b, *c);
    }
    return sbuf_take(&b);
}

static int
line_at(struct parser *p, size_t pos)
{
    if (pos < p->line_pos) {
        p->line_pos = 0;
        p->line_no = 1;
    }
    for (size_t i = p->line_pos; i < pos && i < p->len; i++)
        if (p->s[i] == '\n')
            p->line_no++;
    p->line_pos = pos;
    return p->line_no;
}

/* Records "line N: message" (first error wins) and returns -1. */
static int __attribute__((format(printf, 3, 4)))
fail(struct parser *p, size_t pos, const char *fmt, ...)
{
    if (p->err && p->errlen > 0 && p->err[0] == '\0') {
        int n = snprintf(p->err, p->errlen, "line %d: ", line_at(p, pos));
        if (n >= 0 && (size_t)n < p->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* The text has been checked for NUL bytes, so '\0' can mean end of input. */
static char
peek(const struct parser *p, size_t off)
{
    return p->pos + off < p->len ? p->s[p->pos + off] : '\0';
}

static bool
at_eof(const struct parser *p)
{
    return p->pos >= p->len;
}

static bool
at_newline(const struct parser *p)
{
    return peek(p, 0) == '\n' || (peek(p, 0) == '\r' && peek(p, 1) == '\n');
}

static void
skip_newline(struct parser *p)
{
    p->pos += peek(p, 0) == '\r' ? 2 : 1;
}

static void
skip_ws(struct parser *p)
{
    while (peek(p, 0) == ' ' || peek(p, 0) == '\t')
        p->pos++;
}

static void
skip_comment(struct parser *p)
{
    if (peek(p, 0) != '#')
        return;
    while (!at_eof(p) && !at_newline(p))
        p->pos++;
}

/* Whitespace, newlines and comments: what may sit between array items. */
static void
skip_blank(struct parser *p)
{
    for (;;) {
        skip_ws(p);
        if (peek(p, 0) == '#')
            skip_comment(p);
        else if (at_newline(p))
            skip_newline(p);
        else
            return;
    }
}

static bool
is_bare_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

static bool
is_control(unsigned char c)
{
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* --- table and key bookkeeping --------------------------------------------- */

static struct table *
table_find(struct parser *p, const char *name)
{
    for (size_t i = 0; i < p->n_tables; i++)
        if (strcmp(p->tables[i].name, name) == 0)
            return &p->tables[i];
    return NULL;
}

static void
table_add(struct parser *p, const char *name, enum table_kind kind)
{
    if (p->n_tables == p->tables_cap) {
        p->tables_cap = p->tables_cap ? p->tables_cap * 2 : 8;
        p->tables = eu_xrealloc(p->tables, p->tables_cap * sizeof *p->tables);
    }
    p->tables[p->n_tables].name = eu_xstrdup(name);
    p->tables[p->n_tables].kind = kind;
    p->n_tables++;
}

static bool
is_value(struct parser *p, const char *key)
{
    for (size_t i = 0; i < p->doc->n; i++)
        if (strcmp(p->doc->entries[i].key, key) == 0)
            return true;
    return false;
}

/* Takes ownership of key and of the value's memory. */
static void
entry_add(struct parser *p, char *key, struct eu_toml_value *v)
{
    struct eu_toml_doc *doc = p->doc;
    if (doc->n == p->entries_cap) {
        p->entries_cap = p->entries_cap ? p->entries_cap * 2 : 16;
        doc->entries = eu_xrealloc(doc->entries, p->entries_cap * sizeof *doc->entries);
    }
    doc->entries[doc->n].key = key;
    doc->entries[doc->n].value = *v;
    doc->n++;
}

/*
 * Checks that prefix.parts may be assigned and records the tables its dots
 * create. Returns the full key (caller frees) or NULL after fail().
 */
static char *
define_key(struct parser *p, const char *prefix, const struct strlist *parts, size_t pos)
{
    for (size_t i = 1; i < parts->n; i++) {
        char *t = join_key(prefix, parts->v, i);
        struct table *tb = table_find(p, t);
        if (is_value(p, t)) {
            fail(p, pos, "key '%s' is already defined", t);
        } else if (tb && tb->kind == TABLE_INLINE) {
            fail(p, pos, "cannot add keys to inline table '%s'", t);
        } else if (tb && tb->kind != TABLE_DOTTED) {
            /* TOML 1.0: a table made by a header is not reopened by dots. */
            fail(p, pos, "table '%s' is already defined", t);
        } else {
            if (!tb)
                table_add(p, t, TABLE_DOTTED);
            free(t);
            continue;
        }
        free(t);
        return NULL;
    }
    char *full = join_key(prefix, parts->v, parts->n);
    if (is_value(p, full) || table_find(p, full)) {
        fail(p, pos, "key '%s' is already defined", full);
        free(full);
        return NULL;
    }
    return full;
}

/* Records a [header]. Returns 0 or -1 after fail(). */
static int
define_header(struct parser *p, const struct strlist *parts, size_t pos)
{
    for (size_t i = 1; i <= parts->n; i++) {
        char *t = join_key("", parts->v, i);
        struct table *tb = table_find(p, t);
        bool last = i == parts->n;
        int rc = 0;
        if (is_value(p, t))
            rc = fail(p, pos, "key '%s' is already defined", t);
        else if (tb && tb->kind == TABLE_INLINE)
            rc = fail(p, pos, "table '%s' is already defined", t);
        else if (!tb)
            table_add(p, t, last ? TABLE_HEADER : TABLE_IMPLICIT);
        else if (last && tb->kind == TABLE_IMPLICIT)
            tb->kind = TABLE_HEADER;
        else if (last && tb->kind == TABLE_HEADER)
            rc = fail(p, pos, "table '%s' is defined twice", t);
        else if (last)
            rc = fail(p, pos, "table '%s' is already defined", t);
        free(t);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* --- strings ---------------------------------------------------------------- */

static void
put_utf8(struct sbuf *b, unsigned long cp)
{
    if (cp < 0x80) {
        sbuf_putc(b, (char)cp);
    } else if (cp < 0x800) {
        sbuf_putc(b, (char)(0xc0 | (cp >> 6)));
        sbuf_putc(b, (char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        sbuf_putc(b, (char)(0xe0 | (cp >> 12)));
        sbuf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
        sbuf_putc(b, (char)(0x80 | (cp & 0x3f)));
    } else {
        sbuf_putc(b, (char)(0xf0 | (cp >> 18)));
        sbuf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
        sbuf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
        sbuf_putc(b, (char)(0x80 | (cp & 0x3f)));
    }
}

/* Decodes the escape at p->pos (which is at the backslash) into b. */
static int
parse_escape(struct parser *p, struct sbuf *b)
{
    size_t at = p->pos;
    char c = peek(p, 1);
    p->pos += 2;
    switch (c) {
    case 'b':
        sbuf_putc(b, '\b');
        return 0;
    case 't':
        sbuf_putc(b, '\t');
        return 0;
    case 'n':
        sbuf_putc(b, '\n');
        return 0;
    case 'f':
        sbuf_putc(b, '\f');
        return 0;
    case 'r':
        sbuf_putc(b, '\r');
        return 0;
    case '"':
        sbuf_putc(b, '"');
        return 0;
    case '\\':
        sbuf_putc(b, '\\');
        return 0;
    case 'u':
    case 'U': {
        int digits = c == 'u' ? 4 : 8;
        unsigned long cp = 0;
        for (int i = 0; i < digits; i++) {
            char h = peek(p, 0);
            int v;
            if (h >= '0' && h <= '9')
                v = h - '0';
            else if (h >= 'a' && h <= 'f')
                v = h - 'a' + 10;
            else if (h >= 'A' && h <= 'F')
                v = h - 'A' + 10;
            else
                return fail(p, at, "\\%c needs %d hex digits", c, digits);
            cp = cp * 16 + (unsigned long)v;
            p->pos++;
        }
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return fail(p, at, "\\%c escape is not a Unicode scalar value", c);
        /* Values are C strings; an embedded NUL would silently cut them. */
        if (cp == 0)
            return fail(p, at, "NUL characters are not supported in strings");
        put_utf8(b, cp);
        return 0;
    }
    default:
        return fail(p, at, "invalid escape sequence in string");
    }
}

/* p->pos is just past the opening quote(s). */
static int
parse_basic_string(struct parser *p, bool multiline, size_t start, char **out)
{
    struct sbuf b = {0};
    if (multiline && at_newline(p))
        skip_newline(p); /* a newline right after """ is not content */
    for (;;) {
        char c = peek(p, 0);
        if (at_eof(p) || (!multiline && at_newline(p))) {
            fail(p, start, "unterminated string");
            goto fail_buf;
        }
        if (c == '"' && !multiline) {
            p->pos++;
            break;
        }
        if (c == '"' && peek(p, 1) == '"' && peek(p, 2) == '"') {
            /* Up to two quotes may precede the closing """. */
            size_t q = 3;
            while (q < 6 && peek(p, q) == '"')
                q++;
            if (q == 6) {
                fail(p, p->pos, "too many quotes in multi-line string");
                goto fail_buf;
            }
            for (size_t i = 3; i < q; i++)
                sbuf_putc(&b, '"');
            p->pos += q;
            break;
        }
        if (c == '\\' && multiline) {
            /* A backslash ending a line joins it to the next non-blank text. */
            size_t k = 1;
            while (peek(p, k) == ' ' || peek(p, k) == '\t')
                k++;
            if (peek(p, k) == '\n' || (peek(p, k) == '\r' && peek(p, k + 1) == '\n')) {
                p->pos += k;
                while (peek(p, 0) == ' ' || peek(p, 0) == '\t' || at_newline(p)) {
                    if (at_newline(p))
                        skip_newline(p);
                    else
                        p->pos++;
                }
                continue;
            }
        }
        if (c == '\\') {
            if (parse_escape(p, &b) < 0)
                goto fail_buf;
            continue;
        }
        if (multiline && at_newline(p)) {
            skip_newline(p);
            sbuf_putc(&b, '\n');
            continue;
        }
        if (is_control((unsigned char)c)) {
            fail(p, p->pos, "control character in string");
            goto fail_buf;
        }
        sbuf_putc(&b, c);
        p->pos++;
    }
    *out = sbuf_take(&b);
    return 0;

fail_buf:
    free(b.d);
    return -1;
}

/* p->pos is just past the opening quote(s). No escapes in literal strings. */
static int
parse_literal_string(struct parser *p, bool multiline, size_t start, char **out)
{
    struct sbuf b = {0};
    if (multiline && at_newline(p))
        skip_newline(p);
    for (;;) {
        char c = peek(p, 0);
        if (at_eof(p) || (!multiline && at_newline(p))) {
            fail(p, start, "unterminated string");
            goto fail_buf;
        }
        if (c == '\'' && !multiline) {
            p->pos++;
            break;
        }
        if (c == '\'' && peek(p, 1) == '\'' && peek(p, 2) == '\'') {
            size_t q = 3;
            while (q < 6 && peek(p, q) == '\'')
                q++;
            if (q == 6) {
                fail(p, p->pos, "too many quotes in multi-line string");
                goto fail_buf;
            }
            for (size_t i = 3; i < q; i++)
                sbuf_putc(&b, '\'');
            p->pos += q;
            break;
        }
        if (multiline && at_newline(p)) {
            skip_newline(p);
            sbuf_putc(&b, '\n');
            continue;
        }
        if (is_control((unsigned char)c)) {
            fail(p, p->pos, "control character in string");
            goto fail_buf;
        }
        sbuf_putc(&b, c);
        p->pos++;
    }
    *out = sbuf_take(&b);
    return 0;

fail_buf:
    free(b.d);
    return -1;
}

/* Any string at p->pos; the caller has seen a quote there. */
static int
parse_string(struct parser *p, char **out)
{
    size_t start = p->pos;
    char q = peek(p, 0);
    bool multiline = peek(p, 1) == q && peek(p, 2) == q;
    p->pos += multiline ? 3 : 1;
    if (q == '"')
        return parse_basic_string(p, multiline, start, out);
    return parse_literal_string(p, multiline, start, out);
}

/* --- keys ------------------------------------------------------------------ */

/* Reads a possibly dotted key into parts (strings owned by parts). */
static int
parse_key(struct parser *p, struct strlist *parts)
{
    for (;;) {
        skip_ws(p);
        char c = peek(p, 0);
        char *part;
        if (c == '"' || c == '\'') {
            size_t at = p->pos;
            if (peek(p, 1) == c && peek(p, 2) == c)
                return fail(p, at, "multi-line strings cannot be keys");
            if (parse_string(p, &part) < 0)
                return -1;
        } else {
            size_t start = p->pos;
            while (is_bare_key_char(peek(p, 0)))
                p->pos++;
            if (p->pos == start)
                return fail(p, p->pos, "expected a key");
            part = eu_xstrndup(p->s + start, p->pos - start);
        }
        strlist_push(parts, part);
        skip_ws(p);
        if (peek(p, 0) != '.')
            return 0;
        p->pos++;
    }
}

/* --- values ---------------------------------------------------------------- */

static void
value_release(struct eu_toml_value *v)
{
    if (v->type == EU_TOML_STRING) {
        free(v->u.s);
    } else if (v->type == EU_TOML_ARRAY) {
        for (size_t i = 0; i < v->u.array.n; i++)
            value_release(&v->u.array.items[i]);
        free(v->u.array.items);
    }
}

static int
digit_value(char c, int base)
{
    int v;
    if (c >= '0' && c <= '9')
        v = c - '0';
    else if (c >= 'a' && c <= 'f')
        v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
        v = c - 'A' + 10;
    else
        return -1;
    return v < base ? v : -1;
}

/* Integers, and clear refusals for what looks like a float or a date. */
static int
parse_number(struct parser *p, int64_t *out)
{
    size_t start = p->pos;
    size_t end = start;
    while (end < p->len) {
        char c = p->s[end];
        if (is_bare_key_char(c) || c == '+' || c == '.' || c == ':')
            end++;
        else
            break;
    }
    const char *t = p->s + start;
    size_t n = end - start;
    if (n == 0)
        return fail(p, start, "expected a value");

    size_t i = 0;
    bool neg = false;
    if (t[0] == '+' || t[0] == '-') {
        neg = t[0] == '-';
        i = 1;
    }
    const char *body = t + i;
    size_t blen = n - i;
    if ((blen == 3 && (memcmp(body, "inf", 3) == 0 || memcmp(body, "nan", 3) == 0)))
        return fail(p, start, "floats are not supported");
    if (blen == 0 || body[0] < '0' || body[0] > '9')
        return fail(p, start, "expected a value");

    int base = 10;
    if (blen > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'o' || body[1] == 'b')) {
        base = body[1] == 'x' ? 16 : body[1] == 'o' ? 8 : 2;
        if (i > 0)
            return fail(p, start, "hex, octal and binary integers cannot have a sign");
        i += 2;
    } else {
        for (size_t k = i; k < n; k++) {
            if (t[k] == ':' || ((t[k] == '-' || t[k] == 'T' || t[k] == 'Z') && k > i))
                return fail(p, start, "dates and times are not supported");
        }
        for (size_t k = i; k < n; k++) {
            if (t[k] == '.' || t[k] == 'e' || t[k] == 'E')
                return fail(p, start, "floats are not supported");
        }
        if (blen > 1 && body[0] == '0')
            return fail(p, start, "leading zeros are not allowed in integers");
    }

    /* Accumulate as unsigned so INT64_MIN can be represented. */
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    bool prev_digit = false;
    if (i == n)
        return fail(p, start, "invalid integer");
    for (; i < n; i++) {
        if (t[i] == '_') {
            /* Underscores only between digits. */
            if (!prev_digit || i + 1 >= n || digit_value(t[i + 1], base) < 0)
                return fail(p, start, "invalid underscore in integer");
            prev_digit = false;
            continue;
        }
        int d = digit_value(t[i], base);
        if (d < 0)
            return fail(p, start, "invalid integer");
        if (v > (limit - (uint64_t)d) / (uint64_t)base)
            return fail(p, start, "integer does not fit in 64 bits");
        v = v * (uint64_t)base + (uint64_t)d;
        prev_digit = true;
    }
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    p->pos = end;
    return 0;
}

static int parse_value(struct parser *p, struct eu_toml_value *v, int depth);

static int
parse_array(struct parser *p, struct eu_toml_value *v, int depth)
{
    size_t start = p->pos;
    size_t cap = 0;
    v->type = EU_TOML_ARRAY;
    v->u.array.items = NULL;
    v->u.array.n = 0;
    p->pos++; /* '[' */
    for (;;) {
        skip_blank(p);
        if (peek(p, 0) == ']') {
            p->pos++;
            return 0;
        }
        if (at_eof(p))
            return fail(p, start, "unterminated array");
        if (v->u.array.n == cap) {
            cap = cap ? cap * 2 : 4;
            v->u.array.items = eu_xrealloc(v->u.array.items, cap * sizeof *v->u.array.items);
        }
        if (parse_value(p, &v->u.array.items[v->u.array.n], depth + 1) < 0) {
            /* Not counted in n yet, so release it here. */
            value_release(&v->u.array.items[v->u.array.n]);
            return -1;
        }
        v->u.array.n++;
        skip_blank(p);
        if (peek(p, 0) == ',') {
            p->pos++;
        } else if (peek(p, 0) == ']') {
            p->pos++;
            return 0;
        } else if (at_eof(p)) {
            return fail(p, start, "unterminated array");
        } else {
            return fail(p, p->pos, "expected ',' or ']' in array");
        }
    }
}

/* A value that can be stored in one entry: anything but an inline table. On
 * failure v holds nothing that needs releasing beyond value_release(). */
static int
parse_value(struct parser *p, struct eu_toml_value *v, int depth)
{
    char c = peek(p, 0);
    v->line = line_at(p, p->pos);
    v->type = EU_TOML_INTEGER;
    v->u.i = 0;
    if (depth > TOML_MAX_DEPTH)
        return fail(p, p->pos, "arrays nested too deeply");
    if (c == '"' || c == '\'') {
        v->type = EU_TOML_STRING;
        v->u.s = NULL;
        return parse_string(p, &v->u.s);
    }
    if (c == '[')
        return parse_array(p, v, depth);
    if (c == '{')
        return fail(p, p->pos, "inline tables are not supported inside arrays");
    if (c == 't' && p->len - p->pos >= 4 && memcmp(p->s + p->pos, "true", 4) == 0 &&
        !is_bare_key_char(peek(p, 4))) {
        v->type = EU_TOML_BOOLEAN;
        v->u.b = true;
        p->pos += 4;
        return 0;
    }
    if (c == 'f' && p->len - p->pos >= 5 && memcmp(p->s + p->pos, "false", 5) == 0 &&
        !is_bare_key_char(peek(p, 5))) {
        v->type = EU_TOML_BOOLEAN;
        v->u.b = false;
        p->pos += 5;
        return 0;
    }
    return parse_number(p, &v->u.i);
}

static int parse_keyval(struct parser *p, const char *prefix);

/* p->pos is at '{'; key is the full key of the table (already defined). */
static int
parse_inline_table(struct parser *p, const char *key)
{
    p->pos++;
    skip_ws(p);
    if (peek(p, 0) == '}') {
        p->pos++;
        table_add(p, key, TABLE_INLINE);
        return 0;
    }
    for (;;) {
        skip_ws(p);
        if (at_eof(p) || at_newline(p))
            return fail(p, p->pos, "inline table must close on the same line");
        if (parse_keyval(p, key) < 0)
            return -1;
        skip_ws(p);
        char c = peek(p, 0);
        if (c == '}') {
            p->pos++;
            break;
        }
        if (c != ',') {
            if (at_eof(p) || at_newline(p))
                return fail(p, p->pos, "inline table must close on the same line");
            return fail(p, p->pos, "expected ',' or '}' in inline table");
        }
        p->pos++;
        skip_ws(p);
        if (peek(p, 0) == '}')
            return fail(p, p->pos, "trailing comma in inline table");
    }
    /* Sealed only now, so its own keys could be added above. */
    table_add(p, key, TABLE_INLINE);
    return 0;
}

/* key = value, with key relative to prefix. */
static int
parse_keyval(struct parser *p, const char *prefix)
{
    struct strlist parts = {0};
    skip_ws(p);
    size_t key_pos = p->pos;
    if (parse_key(p, &parts) < 0)
        goto fail_parts;
    if (peek(p, 0) != '=') {
        fail(p, p->pos, "expected '=' after key");
        goto fail_parts;
    }
    p->pos++;
    skip_ws(p);
    if (at_eof(p) || at_newline(p) || peek(p, 0) == '#') {
        fail(p, p->pos, "expected a value");
        goto fail_parts;
    }
    char *full = define_key(p, prefix, &parts, key_pos);
    if (!full)
        goto fail_parts;
    strlist_release(&parts);

    if (peek(p, 0) == '{') {
        int rc = parse_inline_table(p, full);
        free(full);
        return rc;
    }
    struct eu_toml_value v;
    if (parse_value(p, &v, 0) < 0) {
        value_release(&v);
        free(full);
        return -1;
    }
    entry_add(p, full, &v);
    return 0;

fail_parts:
    strlist_release(&parts);
    return -1;
}

/* [a.b] at p->pos; sets *table to the new table name (caller frees). */
static int
parse_header(struct parser *p, char **table)
{
    size_t start = p->pos;
    struct strlist parts = {0};
    if (peek(p, 1) == '[')
        return fail(p, start, "arrays of tables ([[...]]) are not supported");
    p->pos++;
    if (parse_key(p, &parts) < 0)
        goto fail_parts;
    if (peek(p, 0) != ']') {
        fail(p, p->pos, "expected ']' after table name");
        goto fail_parts;
    }
    p->pos++;
    if (define_header(p, &parts, start) < 0)
        goto fail_parts;
    *table = join_key("", parts.v, parts.n);
    strlist_release(&parts);
    return 0;

fail_parts:
    strlist_release(&parts);
    return -1;
}

/* --- document --------------------------------------------------------------- */

void
eu_toml_doc_free(struct eu_toml_doc *doc)
{
    if (!doc)
        return;
    for (size_t i = 0; i < doc->n; i++) {
        free(doc->entries[i].key);
        value_release(&doc->entries[i].value);
    }
    free(doc->entries);
    free(doc);
}

int
eu_toml_parse(const char *text, size_t len, struct eu_toml_doc **out, char *err, size_t errlen)
{
    struct parser p = {
        .s = text,
        .len = len,
        .line_no = 1,
        .err = err,
        .errlen = errlen,
    };
    if (err && errlen > 0)
        err[0] = '\0';
    *out = NULL;
    p.doc = eu_xcalloc(1, sizeof *p.doc);
    char *table = eu_xstrdup("");
    int rc = 0;

    const char *nul = memchr(text, '\0', len);
    if (nul) {
        rc = fail(&p, (size_t)(nul - text), "NUL byte in document");
        goto done;
    }

    for (;;) {
        skip_ws(&p);
        if (at_eof(&p))
            break;
        char c = peek(&p, 0);
        if (at_newline(&p)) {
            skip_newline(&p);
            continue;
        }
        if (c == '#') {
            skip_comment(&p);
            continue;
        }
        if (c == '[') {
            char *name = NULL;
            if ((rc = parse_header(&p, &name)) < 0)
                goto done;
            free(table);
            table = name;
        } else if ((rc = parse_keyval(&p, table)) < 0) {
            goto done;
        }
        skip_ws(&p);
        skip_comment(&p);
        if (!at_eof(&p) && !at_newline(&p)) {
            rc = fail(&p, p.pos, "expected a newline after the %s",
                      c == '[' ? "table header" : "value");
            goto done;
        }
    }

done:
    free(table);
    for (size_t i = 0; i < p.n_tables; i++)
        free(p.tables[i].name);
    free(p.tables);
    if (rc < 0) {
        eu_toml_doc_free(p.doc);
        return -1;
    }
    *out = p.doc;
    return 0;
}

const struct eu_toml_value *
eu_toml_doc_get(const struct eu_toml_doc *doc, const char *path)
{
    if (!doc || !path)
        return NULL;
    for (size_t i = 0; i < doc->n; i++)
        if (strcmp(doc->entries[i].key, path) == 0)
            return &doc->entries[i].value;
    return NULL;
}
