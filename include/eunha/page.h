/*
 * Mastodon's pagination: max_id, since_id, min_id and limit in, a Link
 * header out. Ids are decimal strings of 64-bit snowflakes, compared as
 * numbers in SQL. min_id pages forward from an id (oldest first, then
 * reversed for display); since_id returns the newest items above an id.
 */
#ifndef EUNHA_PAGE_H
#define EUNHA_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_req;

/* True when s is a decimal id that fits a bigint (at most 18 digits). */
bool eu_id_is_valid(const char *s);
/* Writes id (negative as 0) in decimal at out, which has room for 20
 * digits, without a NUL; returns the digits' count. Ids are written many
 * times a page, where printf was a visible part of the CPU. */
size_t eu_id_text(int64_t id, char *out);
/* The id at s: its leading decimal digits (at most 19; a larger value is
 * INT64_MAX, none is 0). *end, if not NULL, gets the first byte after
 * them. For ids from PostgreSQL and our own Redis values, where glibc's
 * strtoll (locale, base and sign handling) was 3% of a home page. */
int64_t eu_id_parse(const char *s, const char **end);
/* The path parameter name when it is an id; otherwise answers 404 "Record
 * not found" (as Mastodon does for any malformed id) and returns NULL. */
const char *eu_req_id_param(struct eu_req *req, const char *name);

struct eu_page {
    const char *max_id;   /* NULL or a decimal id */
    const char *since_id; /* NULL or a decimal id */
    const char *min_id;   /* NULL or a decimal id */
    int limit;
    char limit_s[12]; /* limit as text, for SQL parameters */
};

/*
 * Reads the paging parameters of req into page. limit defaults to def and
 * is clamped to [1, max]; ids that are not decimal integers are answered
 * with 400 here (returns -1, the request is finished); 0 otherwise.
 */
int eu_page_parse(struct eu_req *req, struct eu_page *page, int def, int max);

/* Fills params[0..3] with the page's values, the four parameters a paged
 * statement ends with (see sql.h). */
void eu_page_params(const struct eu_page *page, const char **params);
/* True when the rows come back oldest first (min_id paging): reverse them
 * before rendering. */
bool eu_page_is_ascending(const struct eu_page *page);

/*
 * Adds the Link header for a page whose newest item has id first_id and
 * oldest last_id (NULL/NULL for an empty page: no header). Other query
 * parameters of the request are kept.
 */
void eu_page_link(struct eu_req *req, const char *first_id, const char *last_id);

#endif
