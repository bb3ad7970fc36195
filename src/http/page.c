/*
 * Pagination helpers (see page.h).
 */
#include "eunha/page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/http.h"
#include "eunha/jsonout.h"
#include "page_internal.h"

bool
eu_id_is_valid(const char *s)
{
    /* 18 digits: every snowflake fits, and no string that overflows a
     * bigint reaches SQL's cast. */
    if (!s || !*s || strlen(s) > 18)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

size_t
eu_id_text(int64_t id, char *out)
{
    return eu_json_uint_text(id > 0 ? (uint64_t)id : 0, out);
}

int64_t
eu_id_parse(const char *s, const char **end)
{
    uint64_t v = 0;
    const char *p = s;
    for (; p - s < 19 && *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (end)
        *end = p;
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

const char *
eu_req_id_param(struct eu_req *req, const char *name)
{
    const char *id = eu_req_param(req, name);
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return id;
}

void
eu_page_from_values(struct eu_page *page, const char *max_id, const char *since_id,
                    const char *min_id, const char *limit, int def, int max)
{
    memset(page, 0, sizeof(*page));
    const char *values[] = {max_id, since_id, min_id};
    const char **slots[] = {&page->max_id, &page->since_id, &page->min_id};
    for (int i = 0; i < 3; i++) {
        const char *v = values[i];
        if (v && *v && !eu_id_is_valid(v)) {
            /* Mastodon ignores ids it cannot read rather than failing;
             * a non-numeric id can never match, so drop it. */
            v = NULL;
        }
        *slots[i] = v && *v ? v : NULL;
    }
    page->limit = def;
    if (limit && *limit) {
        char *end;
        long n = strtol(limit, &end, 10);
        if (*end == '\0')
            page->limit = n < 1 ? 1 : n > max ? max : (int)n;
    }
    snprintf(page->limit_s, sizeof(page->limit_s), "%d", page->limit);
}

int
eu_page_parse(struct eu_req *req, struct eu_page *page, int def, int max)
{
    eu_page_from_values(page, eu_req_query(req, "max_id"), eu_req_query(req, "since_id"),
                        eu_req_query(req, "min_id"), eu_req_query(req, "limit"), def, max);
    return 0;
}

void
eu_page_params(const struct eu_page *page, const char **params)
{
    params[0] = page->max_id;
    params[1] = page->since_id;
    params[2] = page->min_id;
    params[3] = page->limit_s;
}

bool
eu_page_is_ascending(const struct eu_page *page)
{
    return page->min_id != NULL;
}

/* Query string q without the paging keys, ending in '&' when not empty.
 * Arena-owned. */
static const char *
other_params(struct eu_arena *a, const char *q)
{
    if (!q || !*q)
        return "";
    size_t n = strlen(q);
    char *out = eu_arena_alloc(a, n + 2);
    char *o = out;
    const char *p = q;
    while (*p) {
        size_t len = strcspn(p, "&");
        bool skip = false;
        static const char *const drop[] = {"max_id=", "since_id=", "min_id=", NULL};
        for (int i = 0; drop[i]; i++)
            skip = skip || strncmp(p, drop[i], strlen(drop[i])) == 0;
        if (!skip && len) {
            memcpy(o, p, len);
            o += len;
            *o++ = '&';
        }
        p += len;
        if (*p == '&')
            p++;
    }
    *o = '\0';
    return out;
}

const char *
eu_page_link_value(struct eu_arena *a, const char *base, const char *path, const char *query,
                   const char *first_id, const char *last_id)
{
    const char *rest = other_params(a, query);
    return eu_arena_sprintf(a,
                            "<%s%s?%smax_id=%s>; rel=\"next\", <%s%s?%smin_id=%s>; "
                            "rel=\"prev\"",
                            base, path, rest, last_id, base, path, rest, first_id);
}

void
eu_page_link(struct eu_req *req, const char *first_id, const char *last_id)
{
    if (!first_id || !last_id)
        return;
    const char *q = eu_req_query_string(req);
    eu_req_add_header(
        req, "Link",
        eu_page_link_value(req->arena, eu_req_base_url(req), req->path, q, first_id, last_id));
}
