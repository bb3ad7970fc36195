/*
 * Shared by the filters' two files: filters.c (the v1 and v2 APIs that
 * write them) and filters_match.c (loading, caching and applying them to
 * rendered statuses). Nobody else includes it.
 */
#ifndef EUNHA_API_FILTERS_INTERNAL_H
#define EUNHA_API_FILTERS_INTERNAL_H

#include <stdbool.h>

struct eu_req;
struct json_t;
struct pg_result;

/*
 * The Filter entity's columns for a filters row aliased f: id, title,
 * context (JSON), expires_at, action, keywords (JSON), statuses (JSON).
 */
#define EU_FILTER_COLUMNS                                                                          \
    "f.id::text, f.title, array_to_json(f.context)::text, CASE WHEN f.expires_at IS NULL"          \
    " THEN NULL ELSE eunha_ts(f.expires_at) END, f.action,"                                        \
    " (SELECT coalesce(json_agg(json_build_object('id', k.id::text, 'keyword', k.keyword,"         \
    "  'whole_word', k.whole_word) ORDER BY k.id), '[]') FROM filter_keywords k"                   \
    "  WHERE k.tenant_id = $1 AND k.filter_id = f.id)::text,"                                      \
    " (SELECT coalesce(json_agg(json_build_object('id', fs.id::text, 'status_id',"                 \
    "  fs.status_id::text) ORDER BY fs.id), '[]') FROM filter_statuses fs"                         \
    "  WHERE fs.tenant_id = $1 AND fs.filter_id = f.id)::text"

/* The Filter entity from EU_FILTER_COLUMNS at col; with_rules adds keywords
 * and statuses (a FilterResult's filter has neither, as in Mastodon). New
 * reference, the caller's. (filters.c) */
struct json_t *eu_filter_json(const struct pg_result *res, int row, int col, bool with_rules);
/* The JSON text in a cell, parsed; an empty array when it does not parse.
 * New reference, the caller's. (filters.c) */
struct json_t *eu_filters_json_cell(const struct pg_result *res, int row, int col);

/* The bit of a filter context ("home", "notifications", "public",
 * "thread", "account"), or 0 for a name that is none of them.
 * (filters_match.c) */
unsigned eu_filters_context_bit(const char *name);

/* Called by every handler that writes the viewer's filters: the stamp
 * would catch the change too, but this frees the stale compiled copy now
 * and tells the viewer's streams. (filters_match.c) */
void eu_filters_forget(struct eu_req *req);

#endif
