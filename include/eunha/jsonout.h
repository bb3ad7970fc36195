/*
 * A JSON writer for jansson trees that appends straight into a libevent
 * evbuffer, for reply bodies.
 *
 * Why not json_dumps(): on the home timeline libjansson was ~42% of the
 * server's CPU, most of it serializing the reply. json_dumps() calls back
 * once per token, keeps a loop-check hashtable keyed by each container's
 * address printed with snprintf, formats every integer with snprintf, walks
 * strings one code point at a time, grows one string by realloc and then
 * strdup()s it, and the reply copied that string once more into its
 * evbuffer. This writer reserves space in the reply's own evbuffer and fills
 * it, copying runs of plain string bytes with one memcpy.
 *
 * The output is exactly the bytes of json_dumps(v, JSON_COMPACT |
 * JSON_ENCODE_ANY) with jansson 2.14: members in insertion order, no spaces,
 * '"', '\\' and control characters escaped as jansson does (\b \f \n \r \t,
 * the others as \u00XX in upper-case hex), every other byte, '/' and UTF-8
 * included, as is; reals as "%.17g" with jansson's fix-ups.
 * tests/unit/http/test_jsonout.c holds it to that byte for byte.
 */
#ifndef EUNHA_JSONOUT_H
#define EUNHA_JSONOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evbuffer;
struct json_t;

/* Deeper nesting than this fails (a cycle would otherwise recurse forever);
 * jansson itself detects cycles and has no depth limit, so a caller falls
 * back to json_dumps() for its verdict. */
#define EU_JSON_MAX_DEPTH 2048

/*
 * Appends v to out as json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) would
 * write it. Returns 0, or -1 with out left as it was when v is NULL, holds a
 * string that is not valid UTF-8 (jansson refuses those too), nests deeper
 * than EU_JSON_MAX_DEPTH, or memory runs out. (An object key that is not
 * valid UTF-8, which only jansson's *_nocheck() functions make, is written
 * as jansson writes it: a truncated, unclosed fragment, and the rest goes
 * on.) v stays the caller's: nothing is freed or referenced.
 */
int eu_json_write(struct evbuffer *out, const struct json_t *v);
/* Writes u in decimal at out (room for 20 digits), without a NUL; returns
 * the digits' count. The writer's integers, and ids anywhere a page writes
 * them (eu_id_text()). */
size_t eu_json_uint_text(uint64_t u, char *out);

/*
 * Text that stands for an object of a tree: where the writer meets obj (the
 * same pointer), it copies text instead of walking obj. With skip 0, text
 * is obj's own JSON. With skip > 0, text is the JSON of an object holding
 * exactly obj's first skip members (at least one), and obj's later members
 * are written after them: a shallow copy of a cached object with a few
 * members added. Either way the bytes are those obj would give.
 *
 * Why: a timeline page is mostly statuses and accounts that the render
 * cache already holds; their JSON is kept beside them and copied, not
 * escaped again for every page.
 */
struct eu_json_splice {
    const struct json_t *obj;
    const char *text;
    size_t len;
    size_t skip;
    /* Instead: text is an object's JSON whose members come before all of
     * obj's (a viewer's few members added to a cached status without
     * copying it). skip is then 0. */
    bool extend;
    /* With extend, members' JSON ("k":v,... without braces, or NULL)
     * written after text's members and before obj's: a viewer's flags,
     * which are written the same way on every page and need no objects of
     * their own. */
    const char *tail;
    size_t tail_len;
    /* With extend, members' JSON (or NULL) written after obj's, last: the
     * parts of a status every page writes the same way (its account's
     * cached JSON), so that they need no member in obj either. */
    const char *trailer;
    size_t trailer_len;
};

/* eu_json_write() with n splices (the obj of each distinct). The caller
 * must not have changed the first skip members (or, with skip 0, any part)
 * of a spliced obj since its text was written, and must keep each obj
 * alive while out is written, so no other object takes its address. */
int eu_json_write_spliced(struct evbuffer *out, const struct json_t *v,
                          const struct eu_json_splice *splices, size_t n);

#endif
