/*
 * The reply serializer: a jansson tree written straight into an evbuffer,
 * byte for byte as json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) writes it
 * with jansson 2.14 (see eunha/jsonout.h for why it exists).
 *
 * The writer fills space reserved at the end of the evbuffer
 * (evbuffer_reserve_space with one iovec, so it is contiguous) and commits
 * it when it runs out, asking for bigger chunks as the reply grows; a 40 KB
 * timeline page takes three chains and no copy. Strings are scanned eight
 * bytes at a time for the few bytes that need a look ('"', '\\', control
 * characters and non-ASCII bytes, whose UTF-8 must be checked because
 * jansson refuses invalid UTF-8), and plain runs are copied with one memcpy.
 *
 * What jansson does, and so what this does:
 *  - strings and keys: '"' and '\\' become \" and \\; 0x08 0x0c 0x0a 0x0d
 *    0x09 become \b \f \n \r \t; the other bytes below 0x20 (NUL included:
 *    strings have a length) become \u00XX with upper-case hex ("%04X").
 *    DEL, '/' and valid UTF-8 stay as they are. A string that is not valid
 *    UTF-8 (overlong forms, surrogates, beyond U+10FFFF, truncated or stray
 *    bytes) fails the whole dump, except in a key: jansson ignores that
 *    failure and goes on after a truncated, unclosed key.
 *  - integers: "%lld". Reals: "%.17g" with the locale's decimal point turned
 *    into '.', ".0" appended when neither '.' nor 'e' is there, then the
 *    exponent's '+' and leading zeros dropped ("1e+20" -> "1e20", "1e-05"
 *    -> "1e-5").
 *  - objects in the order json_object_iter() walks them, which in 2.14 is
 *    insertion order; separators ',' and ':' without spaces.
 */
#include "eunha/jsonout.h"

#include <event2/buffer.h>
#include <jansson.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first reservation, doubled for each further one up to the last: small
 * replies take one modest chain, big ones few chains. */
#define CHUNK_FIRST 8192
#define CHUNK_MAX 65536

struct writer {
    struct evbuffer *buf;
    struct evbuffer_iovec vec; /* the reservation being filled; iov_base NULL if none */
    char *p, *end;             /* free space left in it */
    size_t chunk;              /* size of the next reservation */
    /* Splices by object address: open addressing, mask + 1 slots (a power
     * of two at least twice their number), NULL slots empty. */
    const struct eu_json_splice **slots;
    size_t mask;
};

/* Hands the filled part of the reservation to the evbuffer. */
static int
commit(struct writer *w)
{
    if (!w->vec.iov_base)
        return 0;
    w->vec.iov_len = (size_t)(w->p - (char *)w->vec.iov_base);
    int rc = w->vec.iov_len ? evbuffer_commit_space(w->buf, &w->vec, 1) : 0;
    w->vec.iov_base = NULL;
    return rc;
}

/* Commits what is written and reserves at least n more contiguous bytes. */
static int
grow(struct writer *w, size_t n)
{
    if (commit(w) < 0)
        return -1;
    size_t want = n > w->chunk ? n : w->chunk;
    if (w->chunk < CHUNK_MAX)
        w->chunk *= 2;
    if (evbuffer_reserve_space(w->buf, (ev_ssize_t)want, &w->vec, 1) != 1 ||
        w->vec.iov_len < want) {
        w->vec.iov_base = NULL;
        return -1;
    }
    w->p = w->vec.iov_base;
    w->end = w->p + w->vec.iov_len;
    return 0;
}

/* Makes room for n contiguous bytes at w->p. */
static inline int
need(struct writer *w, size_t n)
{
    return (size_t)(w->end - w->p) >= n ? 0 : grow(w, n);
}

/* Appends n bytes, across reservations if they do not fit in this one. */
static int
put_slow(struct writer *w, const char *s, size_t n)
{
    for (;;) {
        size_t room = (size_t)(w->end - w->p);
        if (n <= room) {
            memcpy(w->p, s, n);
            w->p += n;
            return 0;
        }
        memcpy(w->p, s, room);
        w->p += room;
        s += room;
        n -= room;
        if (grow(w, n < CHUNK_MAX ? n : CHUNK_MAX) < 0)
            return -1;
    }
}

static inline int
put(struct writer *w, const char *s, size_t n)
{
    if ((size_t)(w->end - w->p) >= n) {
        memcpy(w->p, s, n);
        w->p += n;
        return 0;
    }
    return put_slow(w, s, n);
}

static inline int
put_byte(struct writer *w, char c)
{
    if (w->p == w->end && grow(w, 1) < 0)
        return -1;
    *w->p++ = c;
    return 0;
}

/* ------------------------------------------------------------ strings */

/* What a byte is to the string writer. */
enum {
    B_PLAIN, /* copied as is */
    B_ESC,   /* '"', '\\' or a control character: escaped */
    B_LEAD2, /* first byte of a 2-, 3- or 4-byte UTF-8 sequence */
    B_LEAD3,
    B_LEAD4,
    B_BAD, /* a continuation byte out of place, 0xc0, 0xc1 or 0xf5 and up */
};

/* clang-format off */
static const unsigned char byte_class[256] = {
    /* 0x00 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x10 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    /* 0x20 */ 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x30 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    /* 0x60 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x70 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x80 */ 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    /* 0x90 */ 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    /* 0xa0 */ 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    /* 0xb0 */ 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    /* 0xc0 */ 5, 5, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    /* 0xd0 */ 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    /* 0xe0 */ 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    /* 0xf0 */ 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
};
/* clang-format on */

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* True when none of the 8 bytes at s needs a look: each is at least 0x20,
 * below 0x80, and neither '"' nor '\\'. (The classic "has a zero byte" and
 * "has a byte below n" tests; exact as a yes/no answer for the whole word.) */
static inline int
plain8(const unsigned char *s)
{
    uint64_t v;
    memcpy(&v, s, sizeof v);
    uint64_t below = (v - ONES * 0x20) & ~v;
    uint64_t q = v ^ (ONES * '"'), b = v ^ (ONES * '\\');
    uint64_t quote = (q - ONES) & ~q, bslash = (b - ONES) & ~b;
    return ((below | quote | bslash | v) & HIGHS) == 0;
}

static inline int
cont(unsigned char c)
{
    return (c & 0xc0) == 0x80;
}

static int
put_escape(struct writer *w, unsigned char c)
{
    static const char hex[] = "0123456789ABCDEF";
    char e = 0;
    switch (c) {
    case '"':
        e = '"';
        break;
    case '\\':
        e = '\\';
        break;
    case '\b':
        e = 'b';
        break;
    case '\f':
        e = 'f';
        break;
    case '\n':
        e = 'n';
        break;
    case '\r':
        e = 'r';
        break;
    case '\t':
        e = 't';
        break;
    }
    if (need(w, 6) < 0)
        return -1;
    char *p = w->p;
    p[0] = '\\';
    if (e) {
        p[1] = e;
        w->p += 2;
    } else {
        memcpy(p + 1, "u00", 3);
        p[4] = hex[c >> 4];
        p[5] = hex[c & 0xf];
        w->p += 6;
    }
    return 0;
}

/* put_string()'s answer to a string that is not valid UTF-8. */
#define BAD_UTF8 (-2)

/*
 * Writes str (len bytes, not NUL-terminated) quoted. Returns 0, -1 when
 * space runs out, or BAD_UTF8 as jansson's dump_string() fails: having
 * written the opening quote and everything up to the last escape before the
 * bad byte, but not the plain bytes since then nor the closing quote. That
 * matters for keys (see put_value()).
 */
static int
put_string(struct writer *w, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str, *lim = s + len, *run = s;
    if (put_byte(w, '"') < 0)
        return -1;
    for (;;) {
        while (lim - s >= 8 && plain8(s))
            s += 8;
        if (lim - s >= 8) {
            /* There is a byte to look at in these eight. */
            while (byte_class[*s] == B_PLAIN)
                s++;
        } else {
            while (s < lim && byte_class[*s] == B_PLAIN)
                s++;
            if (s == lim)
                break;
        }
        unsigned c = *s, cp;
        switch (byte_class[c]) {
        case B_ESC:
            if (put(w, (const char *)run, (size_t)(s - run)) < 0 ||
                put_escape(w, (unsigned char)c) < 0)
                return -1;
            run = ++s;
            break;
        case B_LEAD2:
            if (lim - s < 2 || !cont(s[1]))
                return BAD_UTF8;
            s += 2;
            break;
        case B_LEAD3:
            if (lim - s < 3 || !cont(s[1]) || !cont(s[2]))
                return BAD_UTF8;
            cp = (c & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
            if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))
                return BAD_UTF8; /* overlong, or a UTF-16 surrogate */
            s += 3;
            break;
        case B_LEAD4:
            if (lim - s < 4 || !cont(s[1]) || !cont(s[2]) || !cont(s[3]))
                return BAD_UTF8;
            cp = (c & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 | (s[3] & 0x3fu);
            if (cp < 0x10000 || cp > 0x10ffff)
                return BAD_UTF8;
            s += 4;
            break;
        default:
            return BAD_UTF8;
        }
    }
    if (put(w, (const char *)run, (size_t)(s - run)) < 0)
        return -1;
    return put_byte(w, '"');
}

/* ------------------------------------------------------------ numbers */

static const char digit_pairs[] = "00010203040506070809"
                                  "10111213141516171819"
                                  "20212223242526272829"
                                  "30313233343536373839"
                                  "40414243444546474849"
                                  "50515253545556575859"
                                  "60616263646566676869"
                                  "70717273747576777879"
                                  "80818283848586878889"
                                  "90919293949596979899";

size_t
eu_json_uint_text(uint64_t u, char *out)
{
    /* Two digits per division, written from the end backwards. */
    char tmp[20], *q = tmp + sizeof tmp;
    while (u >= 100) {
        unsigned i = (unsigned)(u % 100) * 2;
        u /= 100;
        q -= 2;
        memcpy(q, digit_pairs + i, 2);
    }
    if (u >= 10) {
        q -= 2;
        memcpy(q, digit_pairs + u * 2, 2);
    } else {
        *--q = (char)('0' + u);
    }
    size_t n = (size_t)(tmp + sizeof tmp - q);
    memcpy(out, q, n);
    return n;
}

static int
put_integer(struct writer *w, json_int_t v)
{
    char tmp[21], *q = tmp;
    if (v < 0)
        *q++ = '-';
    q += eu_json_uint_text(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, q);
    return put(w, tmp, (size_t)(q - tmp));
}

/* Reals are rare in replies; this follows jansson's jsonp_dtostr() with
 * precision 0, the only one JSON_COMPACT | JSON_ENCODE_ANY asks for. */
static int
put_real(struct writer *w, double d)
{
    char b[64];
    int n = snprintf(b, sizeof b - 3, "%.17g", d);
    if (n < 0 || (size_t)n >= sizeof b - 3)
        return -1;
    /* jansson is built with JSON_HAVE_LOCALECONV: printf wrote the locale's
     * decimal point, and its first byte becomes '.' again. */
    const char *point = localeconv()->decimal_point;
    if (point && *point && *point != '.') {
        char *at = strchr(b, *point);
        if (at)
            *at = '.';
    }
    if (!strchr(b, '.') && !strchr(b, 'e')) {
        memcpy(b + n, ".0", 3);
        n += 2;
    }
    char *e = strchr(b, 'e');
    if (e) {
        /* Drop a '+' sign (keep '-') and the exponent's leading zeros. */
        char *to = e[1] == '-' ? e + 2 : e + 1, *from = e + 2;
        while (*from == '0')
            from++;
        memmove(to, from, (size_t)(b + n + 1 - from));
        n -= (int)(from - to);
    }
    return put(w, b, (size_t)n);
}

/* ------------------------------------------------------------ values */

static size_t
slot_of(const struct writer *w, const json_t *v)
{
    /* Objects are at least 16-byte aligned: the low bits say nothing. */
    return (size_t)(((uintptr_t)v >> 4) * 0x9E3779B97F4A7C15ull >> 17) & w->mask;
}

static const struct eu_json_splice *
splice_of(const struct writer *w, const json_t *v)
{
    if (!w->slots)
        return NULL;
    for (size_t i = slot_of(w, v);; i = (i + 1) & w->mask) {
        if (!w->slots[i] || w->slots[i]->obj == v)
            return w->slots[i];
    }
}

static int put_value(struct writer *w, const json_t *v, int depth);

/* A spliced object: its text, then (skip > 0) its members past skip; or,
 * extended, its text's members, the tail, obj's members and the trailer. */
static int
put_spliced(struct writer *w, const struct eu_json_splice *sp, const json_t *v, int depth)
{
    if (!sp->skip && !sp->extend)
        return put(w, sp->text, sp->len);
    if (sp->len < 2 || sp->text[sp->len - 1] != '}' || put(w, sp->text, sp->len - 1) < 0)
        return -1;
    json_t *o = (json_t *)v;
    size_t i = 0;
    /* "{}" extended: no member of the text to put a comma after. */
    bool first = sp->extend && sp->len == 2;
    if (sp->extend && sp->tail_len) {
        if ((!first && put_byte(w, ',') < 0) || put(w, sp->tail, sp->tail_len) < 0)
            return -1;
        first = false;
    }
    for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it), i++) {
        if (i < sp->skip)
            continue;
        if ((!first && put_byte(w, ',') < 0) ||
            put_string(w, json_object_iter_key(it), json_object_iter_key_len(it)) == -1 ||
            put_byte(w, ':') < 0 || put_value(w, json_object_iter_value(it), depth + 1) < 0)
            return -1;
        first = false;
    }
    if (sp->extend && sp->trailer_len &&
        ((!first && put_byte(w, ',') < 0) || put(w, sp->trailer, sp->trailer_len) < 0))
        return -1;
    return i < sp->skip ? -1 : put_byte(w, '}');
}

static int
put_value(struct writer *w, const json_t *v, int depth)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const struct eu_json_splice *sp = splice_of(w, v);
        if (sp)
            return put_spliced(w, sp, v, depth);
        if (depth >= EU_JSON_MAX_DEPTH || put_byte(w, '{') < 0)
            return -1;
        json_t *o = (json_t *)v; /* the iterator API is not const */
        for (void *it = json_object_iter(o); it;) {
            /* jansson ignores whether a key was written: a key that is not
             * valid UTF-8 (only *_nocheck() makes one) leaves an unclosed
             * fragment and the dump goes on. So does this. */
            if (put_string(w, json_object_iter_key(it), json_object_iter_key_len(it)) == -1 ||
                put_byte(w, ':') < 0 || put_value(w, json_object_iter_value(it), depth + 1) < 0)
                return -1;
            it = json_object_iter_next(o, it);
            if (it && put_byte(w, ',') < 0)
                return -1;
        }
        return put_byte(w, '}');
    }
    case JSON_ARRAY: {
        if (depth >= EU_JSON_MAX_DEPTH || put_byte(w, '[') < 0)
            return -1;
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            if ((i && put_byte(w, ',') < 0) || put_value(w, json_array_get(v, i), depth + 1) < 0)
                return -1;
        }
        return put_byte(w, ']');
    }
    case JSON_STRING:
        return put_string(w, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return put_integer(w, json_integer_value(v));
    case JSON_REAL:
        return put_real(w, json_real_value(v));
    case JSON_TRUE:
        return put(w, "true", 4);
    case JSON_FALSE:
        return put(w, "false", 5);
    case JSON_NULL:
        return put(w, "null", 4);
    default:
        return -1;
    }
}

static int write_value(struct evbuffer *out, const json_t *v, const struct eu_json_splice **slots,
                       size_t mask);

int
eu_json_write(struct evbuffer *out, const json_t *v)
{
    return eu_json_write_spliced(out, v, NULL, 0);
}

int
eu_json_write_spliced(struct evbuffer *out, const json_t *v, const struct eu_json_splice *splices,
                      size_t n)
{
    if (!out || !v)
        return -1;
    const struct eu_json_splice **slots = NULL;
    size_t mask = 0;
    if (n) {
        size_t size = 16;
        while (size < 2 * n)
            size *= 2;
        slots = calloc(size, sizeof(*slots));
        if (!slots)
            return -1;
        mask = size - 1;
        struct writer tmp = {.mask = mask};
        for (size_t i = 0; i < n; i++) {
            size_t j = slot_of(&tmp, splices[i].obj);
            while (slots[j] && slots[j]->obj != splices[i].obj)
                j = (j + 1) & mask;
            slots[j] = &splices[i];
        }
    }
    int rc = write_value(out, v, slots, mask);
    free(slots);
    return rc;
}

/* eu_json_write_spliced() once the splices are in their table. */
static int
write_value(struct evbuffer *out, const json_t *v, const struct eu_json_splice **slots, size_t mask)
{
    /* A failure must leave out as it was, and an evbuffer cannot be cut
     * back: an empty one is drained, otherwise the JSON is built aside and
     * moved over (evbuffer_add_buffer moves chains, it does not copy). */
    size_t before = evbuffer_get_length(out);
    struct evbuffer *dst = before ? evbuffer_new() : out;
    if (!dst)
        return -1;
    struct writer w = {.buf = dst, .chunk = CHUNK_FIRST, .slots = slots, .mask = mask};
    int rc = grow(&w, 0) == 0 && put_value(&w, v, 0) == 0 && commit(&w) == 0 ? 0 : -1;
    if (dst != out) {
        if (rc == 0 && evbuffer_add_buffer(out, dst) < 0)
            rc = -1;
        evbuffer_free(dst);
    } else if (rc < 0) {
        evbuffer_drain(out, evbuffer_get_length(out));
    }
    return rc;
}
