/*
 * The pure halves of page.c's request helpers: what eu_page_parse() and
 * eu_page_link() do once the query string has been read. Split out so the
 * fuzz targets and tests reach them without an evhttp request.
 */
#ifndef EUNHA_PAGE_INTERNAL_H
#define EUNHA_PAGE_INTERNAL_H

#include "eunha/page.h"

struct eu_arena;

/*
 * Fills page from the raw values of max_id, since_id, min_id and limit (each
 * NULL when absent), as eu_page_parse() does. The id pointers are borrowed
 * into page.
 */
void eu_page_from_values(struct eu_page *page, const char *max_id, const char *since_id,
                         const char *min_id, const char *limit, int def, int max);
/*
 * The Link header value for path on base ("https://a.example") with the
 * request's raw query string (NULL or "" for none), the paging keys dropped,
 * between first_id and last_id (both set). Owned by a.
 */
const char *eu_page_link_value(struct eu_arena *a, const char *base, const char *path,
                               const char *query, const char *first_id, const char *last_id);

#endif
