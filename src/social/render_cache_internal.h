/*
 * The rendered-entity cache (render_cache.c), shared by the Status renderer
 * (status_render.c): viewer-independent Status and Account objects, each
 * stamped with its row's xmin, in one process-wide LRU of at most
 * [tenants] render_cache_entries entries. Loop thread only.
 */
#ifndef EUNHA_RENDER_CACHE_INTERNAL_H
#define EUNHA_RENDER_CACHE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/statuses.h"

struct json_t;

enum { EU_RC_STATUS, EU_RC_ACCOUNT };

struct eu_rc_hit {
    struct json_t *obj;            /* borrowed: json_incref() what outlives the entry */
    struct json_t *text;           /* obj's JSON as a string value, or NULL; borrowed */
    const char *xmin;              /* borrowed from the entry */
    int64_t account_id, reblog_of; /* a status's author and original (0: none) */
};

/*
 * The cached object for (tenant, kind, id) rendered for base (eu_rc_hash()
 * of the base URL), whatever its stamp, into out; NULL when there is none.
 * Marks it recently used. Valid until the next eu_rc_put().
 */
const struct eu_rc_hit *eu_rc_peek(int64_t tenant, int kind, int64_t id, uint32_t base,
                                   struct eu_rc_hit *out);
/* Keeps obj (a new reference is taken) stamped with xmin, evicting the
 * least recently used entries beyond cap; cap 0 empties the cache. Returns
 * obj's JSON text as kept with it (borrowed, valid until the next put), or
 * NULL when nothing was kept or the text could not be written. */
struct json_t *eu_rc_put(size_t cap, int64_t tenant, int kind, int64_t id, const char *xmin,
                         uint32_t base, int64_t account_id, int64_t reblog_of, struct json_t *obj);
/* Counts a render's use of the cache, for /metrics. */
void eu_rc_count(bool hit);
uint32_t eu_rc_hash(const char *s);

#endif
