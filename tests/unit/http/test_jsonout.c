/*
 * Tests for eu_json_write(): every tree must come out byte for byte as
 * json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) of the installed jansson
 * writes it, and whatever jansson refuses (invalid UTF-8, a cycle) must fail
 * and leave the buffer as it was. Covers every control character, quotes,
 * backslashes, UTF-8 of every length and every malformed form, numbers at
 * their limits, reals, empty and nested containers, replies bigger than one
 * reservation, the depth guard, and 10,000 random trees from a fixed seed.
 */
#include <check.h>
#include <event2/buffer.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/jsonout.h"

/* Returns out's bytes as a NUL-terminated copy (freed by the caller). */
static char *
contents(struct evbuffer *out, size_t *len)
{
    *len = evbuffer_get_length(out);
    char *s = malloc(*len + 1);
    ck_assert_ptr_nonnull(s);
    evbuffer_copyout(out, s, *len);
    s[*len] = '\0';
    return s;
}

/* Asserts eu_json_write(v) equals json_dumps(v) (or fails where it fails),
 * both into an empty buffer and after a prefix. Does not take v. */
static void
check_same_ctx(const json_t *v, const char *what)
{
    char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    struct evbuffer *out = evbuffer_new();
    int rc = eu_json_write(out, v);
    size_t len;
    char *got = contents(out, &len);
    if (!want) {
        ck_assert_msg(rc == -1, "%s: jansson refuses it, we wrote %s", what, got);
        ck_assert_uint_eq(len, 0);
    } else {
        ck_assert_msg(rc == 0, "%s: failed where jansson wrote %s", what, want);
        size_t wlen = strlen(want), at = 0;
        while (at < len && at < wlen && got[at] == want[at])
            at++;
        ck_assert_msg(len == wlen && at == wlen,
                      "%s: differs at byte %zu (lengths %zu/%zu)\nwant %.200s\ngot  %.200s", what,
                      at, wlen, len, want + (at > 40 ? at - 40 : 0), got + (at > 40 ? at - 40 : 0));
    }
    free(got);

    /* Appending after existing bytes keeps them, and a failure leaves them. */
    evbuffer_drain(out, evbuffer_get_length(out));
    evbuffer_add(out, "prefix:", 7);
    rc = eu_json_write(out, v);
    got = contents(out, &len);
    ck_assert_int_eq(memcmp(got, "prefix:", 7), 0);
    if (want) {
        ck_assert_int_eq(rc, 0);
        ck_assert_uint_eq(len, 7 + strlen(want));
        ck_assert_int_eq(memcmp(got + 7, want, len - 7), 0);
    } else {
        ck_assert_int_eq(rc, -1);
        ck_assert_uint_eq(len, 7);
    }
    free(got);
    evbuffer_free(out);
    free(want);
}

#define check_same(v) check_same_ctx((v), #v)

/* check_same(), then json_decref(v). */
static void
check_new(json_t *v, const char *what)
{
    ck_assert_msg(v != NULL, "%s: could not build", what);
    check_same_ctx(v, what);
    json_decref(v);
}

/* A string of n bytes, unchecked (so invalid UTF-8 can be tried too), both
 * alone, in an array, and as an object key. */
static void
check_bytes(const char *s, size_t n)
{
    char what[80];
    snprintf(what, sizeof what, "%zu bytes starting %02x", n, n ? (unsigned char)s[0] : 0);
    check_new(json_stringn_nocheck(s, n), what);
    json_t *a = json_array();
    json_array_append_new(a, json_stringn_nocheck(s, n));
    json_array_append_new(a, json_integer(1));
    check_new(a, what);
    json_t *o = json_object();
    json_object_setn_new_nocheck(o, s, n, json_true());
    check_new(o, what);
}

/* ------------------------------------------------------------ strings */

START_TEST(test_control_characters)
{
    for (int c = 0; c < 0x20; c++) {
        char s[] = {'a', (char)c, 'b'};
        check_bytes(s + 1, 1);
        check_bytes(s, 3);
    }
    /* All of them in one string, long enough for the 8-byte scan. */
    char all[0x20 * 3];
    for (int c = 0; c < 0x20; c++) {
        all[c * 3] = 'x';
        all[c * 3 + 1] = (char)c;
        all[c * 3 + 2] = 'y';
    }
    check_bytes(all, sizeof all);
    check_bytes("\x7f", 1);
    check_bytes("DEL\x7f in the middle", 18);
}
END_TEST

START_TEST(test_quotes_and_backslashes)
{
    static const char *cases[] = {
        "\"",
        "\\",
        "\"\"\\\\",
        "say \"hi\"",
        "C:\\path\\to\\file",
        "<a href=\"https://example.com/@alice\" class=\"u-url mention\">@<span>alice</span></a>",
        "a/b//c </script>",
        "\\u0041 is not decoded",
        "'single'",
        "",
        "12345678",
        "1234567\"",
        "\"2345678",
        "12345678\\",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bytes(cases[i], strlen(cases[i]));
}
END_TEST

START_TEST(test_utf8)
{
    static const char *cases[] = {
        "\xc2\x80",                 /* U+0080, first 2-byte */
        "\xc3\xa9t\xc3\xa9",        /* été */
        "\xdf\xbf",                 /* U+07FF */
        "\xe0\xa0\x80",             /* U+0800, first 3-byte */
        "\xed\x9f\xbf",             /* U+D7FF, below the surrogates */
        "\xee\x80\x80",             /* U+E000, above them */
        "\xef\xbf\xbf",             /* U+FFFF */
        "\xec\x9d\x80\xed\x95\x98", /* 은하 */
        "\xf0\x90\x80\x80",         /* U+10000, first 4-byte */
        "\xf0\x9f\x98\x80 grin",    /* U+1F600 */
        "\xf4\x8f\xbf\xbf",         /* U+10FFFF, the last */
        "mixed: a\xc3\xa9\xe2\x82\xac\xf0\x9f\x8e\x89\"\n",
        "\xe2\x80\xa8\xe2\x80\xa9 line separators stay raw",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bytes(cases[i], strlen(cases[i]));
}
END_TEST

START_TEST(test_invalid_utf8)
{
    static const char *cases[] = {
        "\x80",             /* stray continuation */
        "\xbf",             /* stray continuation */
        "\xc0\x80",         /* overlong NUL */
        "\xc1\xbf",         /* overlong */
        "\xe0\x80\x80",     /* overlong 3-byte */
        "\xe0\x9f\xbf",     /* overlong 3-byte */
        "\xed\xa0\x80",     /* U+D800 */
        "\xed\xbf\xbf",     /* U+DFFF */
        "\xf0\x80\x80\x80", /* overlong 4-byte */
        "\xf0\x8f\xbf\xbf", /* overlong 4-byte */
        "\xf4\x90\x80\x80", /* U+110000 */
        "\xf5\x80\x80\x80",
        "\xf8\x88\x80\x80\x80",
        "\xfe",
        "\xff",
        "\xc3",             /* truncated */
        "\xe2\x82",         /* truncated */
        "\xf0\x9f\x98",     /* truncated */
        "\xc3\x28",         /* bad continuation */
        "\xe2\x28\xa1",     /* bad continuation */
        "\xf0\x9f\x28\x80", /* bad continuation */
        "plain text long enough for the 8-byte scan, then \xff",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_bytes(cases[i], strlen(cases[i]));
}
END_TEST

/* The lighter comparison for the exhaustive loop: n bytes as a string and
 * as a key, into one reused buffer. */
static void
check_quick(struct evbuffer *out, const char *s, size_t n)
{
    for (int as_key = 0; as_key < 2; as_key++) {
        json_t *v = as_key ? json_object() : json_stringn_nocheck(s, n);
        if (as_key)
            json_object_setn_new_nocheck(v, s, n, json_null());
        char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        int rc = eu_json_write(out, v);
        size_t len = evbuffer_get_length(out);
        unsigned char *got = evbuffer_pullup(out, -1);
        ck_assert_msg(want ? rc == 0 && len == strlen(want) && memcmp(got, want, len) == 0
                           : rc == -1 && len == 0,
                      "%zu bytes %02x %02x %02x %02x%s: want %s", n, (unsigned char)s[0],
                      n > 1 ? (unsigned char)s[1] : 0, n > 2 ? (unsigned char)s[2] : 0,
                      n > 3 ? (unsigned char)s[3] : 0, as_key ? " as a key" : "",
                      want ? want : "a failure");
        evbuffer_drain(out, len);
        free(want);
        json_decref(v);
    }
}

/* Every 1- and 2-byte string, and every 3- and 4-byte one around the edges
 * of validity, compared with jansson's verdict and bytes. */
START_TEST(test_utf8_exhaustive)
{
    struct evbuffer *out = evbuffer_new();
    for (int a = 0; a < 256; a++) {
        char s[4] = {(char)a};
        check_quick(out, s, 1);
        for (int b = 0; b < 256; b++) {
            s[1] = (char)b;
            check_quick(out, s, 2);
        }
    }
    static const unsigned char edges[] = {0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
                                          0xa0, 0xbf, 0xc0, 0xe0, 0xff};
    const size_t ne = sizeof edges;
    for (int a = 0xc0; a < 256; a++)
        for (size_t i = 0; i < ne; i++)
            for (size_t j = 0; j < ne; j++) {
                char s[4] = {(char)a, (char)edges[i], (char)edges[j], (char)0x80};
                check_quick(out, s, 3);
                for (size_t k = 0; k < ne; k++) {
                    s[3] = (char)edges[k];
                    check_quick(out, s, 4);
                }
            }
    evbuffer_free(out);
}
END_TEST

START_TEST(test_keys)
{
    json_t *o = json_object();
    json_object_set_new(o, "z", json_integer(1));
    json_object_set_new(o, "a", json_integer(2));
    json_object_set_new(o, "m", json_integer(3));
    json_object_set_new(o, "quote\"key", json_null());
    json_object_set_new(o, "tab\tkey\n", json_null());
    json_object_set_new(o, "\xec\x9d\x80\xed\x95\x98", json_string("galaxy"));
    json_object_setn_new(o, "nul\0key", 7, json_string("with a NUL"));
    json_object_set_new(o, "", json_string("empty key"));
    check_same(o);
    /* Replacing keeps the place; deleting and adding moves to the end. */
    json_object_set_new(o, "a", json_string("replaced"));
    json_object_del(o, "z");
    json_object_set_new(o, "z", json_false());
    check_same(o);
    json_decref(o);
}
END_TEST

/* Strings and replies far bigger than one reservation. */
START_TEST(test_large)
{
    size_t n = 300000;
    char *s = malloc(n);
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < n; i++)
        s[i] = (char)('a' + i % 26);
    check_new(json_stringn(s, n), "long plain string");
    for (size_t i = 0; i < n; i += 97)
        s[i] = '"';
    for (size_t i = 50; i < n; i += 1013)
        s[i] = '\x01';
    check_new(json_stringn(s, n), "long escaped string");
    for (size_t i = 0; i + 3 <= n; i += 3)
        memcpy(s + i, "\xed\x95\x98", 3);
    check_new(json_stringn(s, n - n % 3), "long Korean string");
    free(s);

    json_t *a = json_array();
    for (int i = 0; i < 100000; i++)
        json_array_append_new(a, i % 3 ? json_integer((json_int_t)i * 7919 - 300000)
                                       : json_string("forty-two characters of filler text here"));
    check_same(a);
    json_decref(a);
}
END_TEST

/* ------------------------------------------------------------ numbers */

START_TEST(test_integers)
{
    static const json_int_t cases[] = {
        0,
        1,
        -1,
        9,
        10,
        -9,
        -10,
        99,
        100,
        101,
        999,
        1000,
        -1000,
        12345,
        65535,
        2147483647,
        -2147483647 - 1,
        4294967296LL,
        109876543210987654LL,
        999999999999999999LL,
        1000000000000000000LL,
        INT64_MAX,
        INT64_MAX - 1,
        INT64_MIN,
        INT64_MIN + 1,
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_new(json_integer(cases[i]), "integer");
    for (json_int_t p = 1;; p *= 10) {
        check_new(json_integer(p), "power of ten");
        check_new(json_integer(p - 1), "power of ten - 1");
        check_new(json_integer(-p), "-power of ten");
        check_new(json_integer(p + 1), "power of ten + 1");
        if (p > INT64_MAX / 10)
            break;
    }
}
END_TEST

START_TEST(test_reals)
{
    static const double cases[] = {
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        0.5,
        3.14,
        -2.5,
        1.0 / 3.0,
        2.0 / 3.0,
        100.0,
        1e15,
        1e16,
        1e17,
        1e20,
        1e21,
        1e-5,
        1e-7,
        1.5e-10,
        1e100,
        1e300,
        -1e-300,
        1.7976931348623157e308,
        2.2250738585072014e-308,
        5e-324,
        123456789012345680.0,
        9007199254740993.0,
        0.30000000000000004,
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_new(json_real(cases[i]), "real");
        json_t *a = json_pack("[f,i,f]", cases[i], 1, -cases[i]);
        check_new(a, "reals in an array");
    }
}
END_TEST

/* ------------------------------------------------------------ structure */

START_TEST(test_scalars_and_empties)
{
    check_new(json_true(), "true");
    check_new(json_false(), "false");
    check_new(json_null(), "null");
    check_new(json_string(""), "empty string");
    check_new(json_array(), "[]");
    check_new(json_object(), "{}");
    check_new(json_pack("[[],{},[[]],{s:{}},{s:[]},s]", "a", "b", ""), "nested empties");
    check_new(
        json_pack("{s:[i,s,b,n,f], s:{s:{s:[{}]}}}", "list", 1, "two", 1, 3.5, "deep", "er", "est"),
        "mixed");

    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(eu_json_write(out, NULL), -1);
    ck_assert_uint_eq(evbuffer_get_length(out), 0);
    evbuffer_free(out);
}
END_TEST

/* A shared (not cyclic) value is written wherever it appears, as jansson
 * does. */
START_TEST(test_shared_values)
{
    json_t *shared = json_pack("{s:s}", "k", "v");
    json_t *a = json_array();
    for (int i = 0; i < 5; i++)
        json_array_append(a, shared);
    json_t *o = json_pack("{s:O, s:O, s:o}", "x", shared, "y", a, "z", shared);
    check_same(o);
    json_decref(o);
    json_decref(a);
}
END_TEST

static json_t *
nested(int depth)
{
    json_t *v = json_integer(7);
    for (int i = 0; i < depth; i++) {
        json_t *c = i % 2 ? json_array() : json_object();
        if (i % 2)
            json_array_append_new(c, v);
        else
            json_object_set_new(c, "k", v);
        v = c;
    }
    return v;
}

START_TEST(test_depth)
{
    /* Within the guard: the same bytes. */
    check_new(nested(EU_JSON_MAX_DEPTH), "as deep as allowed");

    /* Deeper: we give up (jansson would not; callers fall back to it) and
     * leave the buffer alone. */
    json_t *deep = nested(EU_JSON_MAX_DEPTH + 1);
    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(eu_json_write(out, deep), -1);
    ck_assert_uint_eq(evbuffer_get_length(out), 0);
    evbuffer_add(out, "x", 1);
    ck_assert_int_eq(eu_json_write(out, deep), -1);
    ck_assert_uint_eq(evbuffer_get_length(out), 1);
    evbuffer_free(out);
    json_decref(deep);

    /* A cycle: both refuse. */
    json_t *a = json_array(), *o = json_object();
    json_array_append_new(a, json_integer(1));
    json_array_append(a, o);
    json_object_set(o, "back", a);
    check_same(a);
    json_object_clear(o);
    json_decref(o);
    json_decref(a);
}
END_TEST

/* ------------------------------------------------------------ random trees */

static uint64_t rng_state;

static uint64_t
rng(void)
{
    /* splitmix64: fixed seed, same trees on every run and machine. */
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static unsigned
rnd(unsigned n)
{
    return (unsigned)(rng() % n);
}

/* Appends one random, valid character to s (at most 4 bytes). */
static size_t
random_char(char *s)
{
    static const char *pieces[] = {"\"",
                                   "\\",
                                   "/",
                                   "\x7f",
                                   "\xc3\xa9",
                                   "\xd7\x90",
                                   "\xe2\x82\xac",
                                   "\xed\x95\x9c",
                                   "\xef\xbf\xbf",
                                   "\xf0\x9f\x98\x80",
                                   "\xf4\x8f\xbf\xbf",
                                   "<",
                                   ">",
                                   "&",
                                   " "};
    unsigned k = rnd(20);
    if (k < 10) {
        s[0] = (char)(0x20 + rnd(0x5f)); /* printable ASCII */
        return 1;
    }
    if (k < 12) {
        s[0] = (char)rnd(0x20); /* a control character, NUL included */
        return 1;
    }
    const char *p = pieces[rnd(sizeof pieces / sizeof pieces[0])];
    size_t n = strlen(p);
    memcpy(s, p, n);
    return n;
}

static json_t *
random_string(void)
{
    char buf[4 * 300 + 4];
    unsigned k = rnd(10), len = k < 3 ? rnd(4) : k < 8 ? rnd(24) : rnd(300);
    size_t n = 0;
    /* Mostly plain text (as replies are), sometimes anything. */
    int plain = rnd(3) != 0;
    for (unsigned i = 0; i < len; i++) {
        if (plain && rnd(16))
            buf[n++] = (char)('a' + rnd(26));
        else
            n += random_char(buf + n);
    }
    return json_stringn(buf, n);
}

static json_t *
random_value(int depth)
{
    unsigned k = rnd(depth < 6 ? 12 : 8);
    switch (k) {
    case 0:
        return json_null();
    case 1:
        return json_boolean(rnd(2));
    case 2: {
        /* Integers of every magnitude and sign. */
        uint64_t bits = rng() >> rnd(64);
        return json_integer(rnd(2) ? (json_int_t)bits : -(json_int_t)(bits >> 1));
    }
    case 3: {
        double d;
        do {
            uint64_t bits = rng();
            memcpy(&d, &bits, sizeof d);
        } while (d != d || d - d != 0); /* finite only: json_real refuses the rest */
        return json_real(rnd(4) ? (double)(json_int_t)(rng() >> 40) / (1 + rnd(1000)) : d);
    }
    case 4:
    case 5:
    case 6:
    case 7:
        return random_string();
    case 8:
    case 9: {
        json_t *a = json_array();
        unsigned n = rnd(8);
        for (unsigned i = 0; i < n; i++)
            json_array_append_new(a, random_value(depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        unsigned n = rnd(10);
        for (unsigned i = 0; i < n; i++) {
            json_t *key = random_string();
            json_object_setn_new(o, json_string_value(key), json_string_length(key),
                                 random_value(depth + 1));
            json_decref(key);
        }
        return o;
    }
    }
}

START_TEST(test_random_trees)
{
    rng_state = 20240611;
    for (int i = 0; i < 10000; i++) {
        char what[32];
        snprintf(what, sizeof what, "random tree %d", i);
        json_t *v = random_value(0);
        if (i % 50 == 0) {
            /* Now and then a string of random bytes somewhere: valid or
             * not, we must agree with jansson. */
            char bytes[12];
            for (size_t j = 0; j < sizeof bytes; j++)
                bytes[j] = (char)rng();
            json_t *a = json_array();
            json_array_append_new(a, v);
            json_array_append_new(a, json_stringn_nocheck(bytes, 1 + rnd(sizeof bytes)));
            v = a;
        }
        check_new(v, what);
    }
}
END_TEST

/* JSON of v by our writer, as a string value (new reference). */
static json_t *
text_of(const json_t *v)
{
    struct evbuffer *b = evbuffer_new();
    ck_assert_int_eq(eu_json_write(b, v), 0);
    size_t len;
    char *s = contents(b, &len);
    json_t *t = json_stringn_nocheck(s, len);
    free(s);
    evbuffer_free(b);
    return t;
}

/*
 * A page as the status renderer builds it: cached objects (random trees
 * under an object) whose text is spliced in whole, shallow copies of them
 * with members added after the cached ones (spliced with skip), the same
 * cached object under several copies, and a decoy object with the same
 * members that is not spliced. The bytes must be json_dumps()'s.
 */
START_TEST(test_splices)
{
    rng_state = 20261201;
    for (int round = 0; round < 200; round++) {
        enum { N = 12 };
        json_t *cached[N], *texts[N], *copies[N];
        struct eu_json_splice sp[3 * N + 6];
        size_t n = 0;
        json_t *page = json_array(), *want_page = json_array();
        char *trailers[N + 2];
        size_t ntrailers = 0;
        for (int i = 0; i < N; i++) {
            cached[i] = json_object();
            json_object_set_new(cached[i], "id", json_integer(i));
            json_object_set_new(cached[i], "content", random_value(1));
            json_object_set_new(cached[i], "esc", json_string("\"<\\>\n"));
            texts[i] = text_of(cached[i]);
            copies[i] = json_copy(cached[i]);
            json_object_set_new(copies[i], "favourited", json_boolean(i & 1));
            json_object_set_new(copies[i], "account", json_incref(cached[i / 2]));
            if (i % 3 == 1)
                json_object_set_new(copies[i], "reblog", json_incref(copies[i - 1]));
            sp[n++] = (struct eu_json_splice){.obj = copies[i],
                                              .text = json_string_value(texts[i]),
                                              .len = json_string_length(texts[i]),
                                              .skip = json_object_size(cached[i])};
            sp[n++] = (struct eu_json_splice){.obj = cached[i],
                                              .text = json_string_value(texts[i]),
                                              .len = json_string_length(texts[i])};
            json_array_append(page, copies[i]);
            json_array_append(want_page, copies[i]);
            /* The same status without the copy: only the viewer's
             * members, extending the cached text. */
            json_t *slim = json_object();
            /* Half of them carry the flag as text (a viewer's flags). */
            const char *tail = (i & 1) ? "\"favourited\":true" : NULL;
            if (!tail)
                json_object_set_new(slim, "favourited", json_false());
            json_object_set_new(slim, "filtered", json_array());
            /* Half of them (other halves) carry the account and what
             * follows it as a trailer of text. */
            char *trailer = NULL;
            if (i & 2) {
                const char *acct = json_string_value(texts[i / 2]);
                size_t tl = strlen(acct) + 32;
                trailer = malloc(tl);
                snprintf(trailer, tl, "\"account\":%s,\"poll\":null", acct);
                trailers[ntrailers++] = trailer;
            } else {
                json_object_set_new(slim, "account", json_incref(cached[i / 2]));
                json_object_set_new(slim, "poll", json_null());
            }
            sp[n++] = (struct eu_json_splice){.obj = slim,
                                              .text = json_string_value(texts[i]),
                                              .len = json_string_length(texts[i]),
                                              .extend = true,
                                              .tail = tail,
                                              .tail_len = tail ? strlen(tail) : 0,
                                              .trailer = trailer,
                                              .trailer_len = trailer ? strlen(trailer) : 0};
            json_array_append_new(page, slim);
            json_t *full = json_copy(cached[i]);
            json_object_set_new(full, "favourited", json_boolean(i & 1));
            json_object_set_new(full, "filtered", json_array());
            json_object_set_new(full, "account", json_incref(cached[i / 2]));
            json_object_set_new(full, "poll", json_null());
            json_array_append_new(want_page, full);
        }
        json_array_append_new(page, json_deep_copy(copies[0])); /* not spliced */
        json_array_append_new(want_page, json_deep_copy(copies[0]));
        /* An empty cached object extended, and extended by nothing; one
         * with a tail and one member, one with a tail alone. */
        json_t *one = json_object(), *none = json_object(), *two = json_object();
        json_object_set_new(one, "a", json_true());
        sp[n++] = (struct eu_json_splice){.obj = one, .text = "{}", .len = 2, .extend = true};
        json_object_set_new(two, "b", json_null());
        sp[n++] = (struct eu_json_splice){
            .obj = two, .text = "{}", .len = 2, .extend = true, .tail = "\"t\":1", .tail_len = 5};
        json_t *two_want = json_pack("{s:i, s:n}", "t", 1, "b");
        json_t *three = json_object();
        sp[n++] = (struct eu_json_splice){.obj = three,
                                          .text = "{\"x\":2}",
                                          .len = 7,
                                          .extend = true,
                                          .tail = "\"t\":1",
                                          .tail_len = 5};
        json_t *three_want = json_pack("{s:i, s:i}", "x", 2, "t", 1);
        /* A trailer alone after "{}", and after a tail and a member. */
        json_t *four = json_object(), *five = json_object();
        sp[n++] = (struct eu_json_splice){.obj = four,
                                          .text = "{}",
                                          .len = 2,
                                          .extend = true,
                                          .trailer = "\"z\":[]",
                                          .trailer_len = 6};
        json_t *four_want = json_pack("{s:[]}", "z");
        json_object_set_new(five, "m", json_integer(5));
        sp[n++] = (struct eu_json_splice){.obj = five,
                                          .text = "{\"x\":2}",
                                          .len = 7,
                                          .extend = true,
                                          .tail = "\"t\":1",
                                          .tail_len = 5,
                                          .trailer = "\"z\":null",
                                          .trailer_len = 8};
        json_t *five_want = json_pack("{s:i, s:i, s:i, s:n}", "x", 2, "t", 1, "m", 5, "z");
        sp[n++] = (struct eu_json_splice){.obj = none,
                                          .text = json_string_value(texts[0]),
                                          .len = json_string_length(texts[0]),
                                          .extend = true};
        json_array_append(page, one);
        json_array_append(want_page, one);
        json_array_append_new(page, none);
        json_array_append(want_page, cached[0]);
        json_array_append_new(page, two);
        json_array_append_new(want_page, two_want);
        json_array_append_new(page, three);
        json_array_append_new(want_page, three_want);
        json_array_append_new(page, four);
        json_array_append_new(want_page, four_want);
        json_array_append_new(page, five);
        json_array_append_new(want_page, five_want);

        char *want = json_dumps(want_page, JSON_COMPACT | JSON_ENCODE_ANY);
        ck_assert_ptr_nonnull(want);
        struct evbuffer *out = evbuffer_new();
        evbuffer_add(out, "x", 1); /* written aside and moved, too */
        ck_assert_int_eq(eu_json_write_spliced(out, page, sp, n), 0);
        size_t len;
        char *got = contents(out, &len);
        ck_assert_str_eq(got + 1, want);
        free(got);
        free(want);
        evbuffer_free(out);
        for (int i = 0; i < N; i++) {
            json_decref(cached[i]);
            json_decref(texts[i]);
            json_decref(copies[i]);
        }
        json_decref(page);
        json_decref(want_page);
        json_decref(one);
        for (size_t i = 0; i < ntrailers; i++)
            free(trailers[i]);
    }
}
END_TEST

static Suite *
jsonout_suite(void)
{
    Suite *s = suite_create("jsonout");
    TCase *tc = tcase_create("strings");
    tcase_add_test(tc, test_control_characters);
    tcase_add_test(tc, test_quotes_and_backslashes);
    tcase_add_test(tc, test_utf8);
    tcase_add_test(tc, test_invalid_utf8);
    tcase_add_test(tc, test_keys);
    tcase_add_test(tc, test_large);
    suite_add_tcase(s, tc);
    tc = tcase_create("exhaustive");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_utf8_exhaustive);
    suite_add_tcase(s, tc);
    tc = tcase_create("numbers");
    tcase_add_test(tc, test_integers);
    tcase_add_test(tc, test_reals);
    suite_add_tcase(s, tc);
    tc = tcase_create("structure");
    tcase_add_test(tc, test_scalars_and_empties);
    tcase_add_test(tc, test_shared_values);
    tcase_add_test(tc, test_depth);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_random_trees);
    tcase_add_test(tc, test_splices);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(jsonout_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
