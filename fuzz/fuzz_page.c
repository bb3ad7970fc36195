/*
 * Fuzz target: pagination parameters and the Link header (src/http/page.c).
 * The input is a query string as the client sent it; it is read the way
 * eu_req_query() reads it (libevent's evhttp_parse_query_str), the page is
 * built from max_id/since_id/min_id/limit, and the Link header is made from
 * the same query. Checked: ids that reach SQL are valid, limit is within
 * bounds, and the header holds no byte that would split it and ends with
 * our own links' ids.
 */
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "eunha/arena.h"
#include "http/page_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A query string comes out of a parsed request line: no NUL, CR or LF. */
    char *q = strndup((const char *)data, size);
    if (strpbrk(q, "\r\n")) {
        free(q);
        return 0;
    }
    struct evkeyvalq kv;
    TAILQ_INIT(&kv);
    if (evhttp_parse_query_str(q, &kv) < 0)
        evhttp_clear_headers(&kv);
    struct eu_page page;
    eu_page_from_values(&page, evhttp_find_header(&kv, "max_id"),
                        evhttp_find_header(&kv, "since_id"), evhttp_find_header(&kv, "min_id"),
                        evhttp_find_header(&kv, "limit"), 20, 40);
    if (page.limit < 1 || page.limit > 40)
        abort();
    const char *ids[] = {page.max_id, page.since_id, page.min_id};
    for (int i = 0; i < 3; i++)
        if (ids[i] && !eu_id_is_valid(ids[i]))
            abort();
    const char *params[4];
    eu_page_params(&page, params);

    struct eu_arena *a = eu_arena_new();
    const char *link = eu_page_link_value(a, "https://a.example", "/api/v1/timelines/home", q,
                                          "110000000000000002", "110000000000000001");
    if (strpbrk(link, "\r\n"))
        abort();
    static const char tail[] = "min_id=110000000000000002>; rel=\"prev\"";
    size_t n = strlen(link);
    if (strncmp(link, "<https://a.example/api/v1/timelines/home?", 41) != 0 ||
        n < sizeof(tail) - 1 || strcmp(link + n - (sizeof(tail) - 1), tail) != 0)
        abort();
    eu_arena_free(a);
    evhttp_clear_headers(&kv);
    free(q);
    return 0;
}
