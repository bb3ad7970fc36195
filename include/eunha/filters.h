/*
 * The viewer's filters (/api/v1/filters, /api/v2/filters) applied to the
 * statuses a request is about to return. A list endpoint loads the filters
 * once with eu_filters_load(), then passes every rendered status through
 * eu_filters_apply() for its context; statuses matched by a "hide" filter
 * are dropped, the others carry Mastodon's FilterResult array in
 * "filtered".
 */
#ifndef EUNHA_FILTERS_H
#define EUNHA_FILTERS_H

#include <stdbool.h>

struct eu_req;
struct json_t;

/*
 * Loads the active (unexpired) filters of req->auth.account_id once per
 * request, then calls done(req, arg) — later, never from inside this call.
 * A second call in the same request reuses what the first loaded. On a
 * database failure done still runs, with no filters loaded: filtering is
 * best effort and must not fail a timeline. The filters live as long as
 * the request. Call on the loop thread.
 */
void eu_filters_load(struct eu_req *req, void (*done)(struct eu_req *req, void *arg), void *arg);
/* The request's viewer is known (from a statement the request ran anyway)
 * to have no active filters: a later eu_filters_load() then reads nothing. */
void eu_filters_known_none(struct eu_req *req);

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

#endif
