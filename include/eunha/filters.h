/*
 * The viewer's filters (/api/v1/filters, /api/v2/filters) applied to the
 * statuses a request is about to return. A list endpoint loads the filters
 * once with eu_filters_load(), then passes every rendered status through
 * eu_filters_apply() for its context; statuses matched by a "hide" filter
 * are dropped, the others carry Mastodon's FilterResult array in
 * "filtered".
 *
 * The social core's (src/social/filters_match.c), since every status render
 * applies them; the REST handlers that write filters (src/api/filters.c)
 * stand on it for the Filter entity and to say that filters changed.
 */
#ifndef EUNHA_FILTERS_H
#define EUNHA_FILTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * The stamp of the viewer's active filters, for eu_filters_known_stamp(),
 * is the SQL function eunha_filters_stamp() (migration 0040): NULL when
 * there are none, else an md5 (in hex, EU_FILTERS_STAMP_LEN characters) of
 * their ids and row versions, so any change gives a new stamp.
 */
#define EU_FILTERS_STAMP_LEN 32

/*
 * Loads the active (unexpired) filters of req->auth.account_id once per
 * request, then calls done(req, arg) — later, never from inside this call.
 * A second call in the same request reuses what the first loaded. On a
 * database failure done still runs, with no filters loaded: filtering is
 * best effort and must not fail a timeline. The filters live as long as
 * the request. Call on the loop thread.
 */
void eu_filters_load(struct eu_req *req, void (*done)(struct eu_req *req, void *arg), void *arg);
/*
 * What the request's viewer's active filters are at, as read by
 * eunha_filters_stamp() in a statement the request ran anyway: NULL when the
 * viewer has none, and a later eu_filters_load() then reads nothing; a
 * stamp lets eu_filters_load() use the filters compiled for an earlier
 * request without a statement, if they carry the same stamp. stamp is
 * copied.
 */
void eu_filters_known_stamp(struct eu_req *req, const char *stamp);

/*
 * After eu_filters_load(): matches status (a rendered Status entity; pass
 * the reblogged status for a reblog) against the filters whose context
 * includes context ("home", "notifications", "public", "thread",
 * "account"): keywords against its spoiler text and content (whole_word
 * ones at word boundaries, case-insensitively), and filtered statuses by
 * id. Sets status["filtered"] to the FilterResult array of the "warn" and
 * "blur" filters that matched (empty when none). Returns true when a "hide"
 * filter matched: the caller must drop the status. Without loaded filters it
 * changes nothing and returns false.
 */
bool eu_filters_apply(struct eu_req *req, struct json_t *status, const char *context);
/* The same, matching the id, content warning and content of base (the
 * cached part of a status written without a copy) and setting "filtered"
 * on status. */
bool eu_filters_apply_to(struct eu_req *req, struct json_t *base, struct json_t *status,
                         const char *context);

/*
 * An account's filters held without a request, by the streaming hub for a
 * stream's whole life (src/api/stream_render.c): loaded once when the
 * stream opens and again when they change, so an event is matched in
 * memory. Loop thread only.
 */
struct eu_filter_rules;
struct eu_app;
struct eu_tenant;
/* rules: NULL when the account has no active filters, or when failed (the
 * database could not be read); the callback's, to eu_filters_rules_free(). */
typedef void (*eu_filters_rules_cb)(struct eu_filter_rules *rules, bool failed, void *arg);
/* Loads account_id's active filters of tenant t (one statement; the
 * keywords compiled by an earlier request are reused if unchanged), then
 * calls done, later, never from inside this call. */
void eu_filters_rules_load(struct eu_app *app, struct eu_tenant *t, int64_t account_id,
                           eu_filters_rules_cb done, void *arg);
void eu_filters_rules_free(struct eu_filter_rules *rules);
/* eu_filters_apply() for rules: *results gets the FilterResult array
 * (a new reference, the caller's; empty when none matched); true when a
 * "hide" filter matched. base is read only. */
bool eu_filters_rules_match(struct eu_filter_rules *rules, struct json_t *base, const char *context,
                            struct json_t **results);

/* The Filter entity from EU_FILTER_COLUMNS at col; with_rules adds keywords
 * and statuses (a FilterResult's filter has neither, as in Mastodon). New
 * reference, the caller's. */
struct json_t *eu_filter_json(const struct pg_result *res, int row, int col, bool with_rules);
/* The JSON text in a cell, parsed; an empty array when it does not parse.
 * New reference, the caller's. */
struct json_t *eu_filters_json_cell(const struct pg_result *res, int row, int col);

/* The bit of a filter context ("home", "notifications", "public",
 * "thread", "account"), or 0 for a name that is none of them. */
unsigned eu_filters_context_bit(const char *name);

/* Called by every handler that writes the viewer's filters: the stamp
 * would catch the change too, but this frees the stale compiled copy now
 * and tells the viewer's streams. */
void eu_filters_forget(struct eu_req *req);

/* The compiled-filters cache's figures, for /metrics. */
struct eu_filters_cache_stats {
    size_t entries, bytes;
    unsigned long long hits;     /* loads answered by a cached compile */
    unsigned long long compiles; /* filter sets compiled */
};
void eu_filters_cache_stats(struct eu_filters_cache_stats *out);
/* Empties the cache (at exit). Loop thread only. */
void eu_filters_cache_free(void);

#endif
