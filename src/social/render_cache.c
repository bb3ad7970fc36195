/*
 * The rendered-entity cache (see render_cache_internal.h): one process-wide
 * LRU of viewer-independent Status and Account objects, keyed by tenant,
 * kind and id, each stamped with the xmin of the row it was rendered from.
 *
 * Why xmin: every change to a row (an edit, a delete, a counter moved by a
 * trigger, a rename) writes a new row version with a new xmin, in this
 * process or any other, so a stamp that still matches is still right and
 * nothing has to remember to invalidate. The render statement compares the
 * stamps itself and skips the expensive columns of rows whose stamp the
 * cache holds.
 *
 * One LRU for all tenants, bounded by [tenants] render_cache_entries: a
 * busy tenant may push out a quiet one's entries, which costs the quiet one
 * a miss and nothing else. Loop thread only.
 */
#include "render_cache_internal.h"

#include <event2/buffer.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/jsonout.h"
#include "eunha/mem.h"

struct rc_entry {
    int64_t tenant, id;
    int kind;
    char xmin[16];
    uint32_t base;
    int64_t account_id, reblog_of;
    json_t *obj;
    json_t *text; /* obj's JSON, a string value; NULL if it could not be written */
    struct rc_entry *hnext;
    struct rc_entry *lprev, *lnext; /* lprev toward the most recently used */
};

static struct {
    struct rc_entry **buckets;
    size_t nbuckets; /* a power of two */
    size_t count;
    struct rc_entry *mru, *lru;
    unsigned long long hits, misses;
} rc;

static size_t
slot(int64_t tenant, int kind, int64_t id, size_t nbuckets)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL ^ (uint64_t)tenant * 0xC2B2AE3D27D4EB4FULL ^
                 (uint64_t)kind;
    h ^= h >> 29;
    return (size_t)h & (nbuckets - 1);
}

static size_t
bucket_of(int64_t tenant, int kind, int64_t id)
{
    return slot(tenant, kind, id, rc.nbuckets);
}

static struct rc_entry *
find(int64_t tenant, int kind, int64_t id)
{
    if (!rc.nbuckets)
        return NULL;
    for (struct rc_entry *e = rc.buckets[bucket_of(tenant, kind, id)]; e; e = e->hnext)
        if (e->id == id && e->tenant == tenant && e->kind == kind)
            return e;
    return NULL;
}

static void
lru_unlink(struct rc_entry *e)
{
    if (e->lprev)
        e->lprev->lnext = e->lnext;
    else
        rc.mru = e->lnext;
    if (e->lnext)
        e->lnext->lprev = e->lprev;
    else
        rc.lru = e->lprev;
    e->lprev = e->lnext = NULL;
}

static void
lru_push(struct rc_entry *e)
{
    e->lnext = rc.mru;
    e->lprev = NULL;
    if (rc.mru)
        rc.mru->lprev = e;
    rc.mru = e;
    if (!rc.lru)
        rc.lru = e;
}

static void
remove_entry(struct rc_entry *e)
{
    struct rc_entry **p = &rc.buckets[bucket_of(e->tenant, e->kind, e->id)];
    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    lru_unlink(e);
    json_decref(e->obj);
    json_decref(e->text);
    free(e);
    rc.count--;
}

const struct eu_rc_hit *
eu_rc_peek(int64_t tenant, int kind, int64_t id, uint32_t base, struct eu_rc_hit *out)
{
    struct rc_entry *e = find(tenant, kind, id);
    if (!e || e->base != base)
        return NULL;
    out->obj = e->obj;
    out->text = e->text;
    out->xmin = e->xmin;
    out->account_id = e->account_id;
    out->reblog_of = e->reblog_of;
    lru_unlink(e);
    lru_push(e);
    return out;
}

void
eu_rc_count(bool hit)
{
    if (hit)
        rc.hits++;
    else
        rc.misses++;
}

/* obj's JSON as a string value (a new reference), or NULL: written once
 * here so that every page holding obj copies it instead of escaping it
 * again (eu_req_json_splice()). */
static json_t *
text_of(const json_t *obj)
{
    struct evbuffer *b = evbuffer_new();
    json_t *t = NULL;
    if (b && eu_json_write(b, obj) == 0) {
        size_t n = evbuffer_get_length(b);
        /* Our own writer's output: valid UTF-8 already. */
        t = json_stringn_nocheck((const char *)evbuffer_pullup(b, -1), n);
    }
    if (b)
        evbuffer_free(b);
    return t;
}

json_t *
eu_rc_put(size_t cap, int64_t tenant, int kind, int64_t id, const char *xmin, uint32_t base,
          int64_t account_id, int64_t reblog_of, json_t *obj)
{
    if (cap == 0) {
        eu_rc_free();
        return NULL;
    }
    if (!xmin || strlen(xmin) >= sizeof(((struct rc_entry *)0)->xmin))
        return NULL; /* cannot be stamped: not kept, and the rest stays */
    if (rc.nbuckets < cap) {
        /* Made (or grown after a reload) at the first entry, not before: a
         * process that renders nothing keeps no table. */
        size_t n = 64;
        while (n < cap)
            n *= 2;
        struct rc_entry **b = eu_xcalloc(n, sizeof(*b));
        for (size_t i = 0; i < rc.nbuckets; i++) {
            struct rc_entry *e = rc.buckets[i], *next;
            for (; e; e = next) {
                next = e->hnext;
                size_t k = slot(e->tenant, e->kind, e->id, n);
                e->hnext = b[k];
                b[k] = e;
            }
        }
        free(rc.buckets);
        rc.buckets = b;
        rc.nbuckets = n;
    }
    struct rc_entry *e = find(tenant, kind, id);
    if (e) {
        json_decref(e->obj);
        json_decref(e->text);
        lru_unlink(e);
    } else {
        while (rc.count >= cap && rc.lru)
            remove_entry(rc.lru);
        e = eu_xcalloc(1, sizeof(*e));
        e->tenant = tenant;
        e->kind = kind;
        e->id = id;
        size_t k = bucket_of(tenant, kind, id);
        e->hnext = rc.buckets[k];
        rc.buckets[k] = e;
        rc.count++;
    }
    snprintf(e->xmin, sizeof(e->xmin), "%s", xmin);
    e->base = base;
    e->account_id = account_id;
    e->reblog_of = reblog_of;
    e->obj = json_incref(obj);
    e->text = text_of(obj);
    lru_push(e);
    return e->text;
}

void
eu_rc_stats(struct eu_rc_stats *out)
{
    out->entries = rc.count;
    out->hits = rc.hits;
    out->misses = rc.misses;
}

void
eu_rc_free(void)
{
    while (rc.lru)
        remove_entry(rc.lru);
    free(rc.buckets);
    rc.buckets = NULL;
    rc.nbuckets = 0;
}

uint32_t
eu_rc_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}
