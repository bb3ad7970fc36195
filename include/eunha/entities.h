/*
 * Mastodon entities rendered from SQL rows. A renderer reads the columns its
 * select-list macro produced, starting at a given column, so one query can
 * carry several entities side by side (a notification with its account and
 * its status).
 */
#ifndef EUNHA_ENTITIES_H
#define EUNHA_ENTITIES_H

#include <stdint.h>

struct eu_app;
struct eu_req;
struct json_t;
struct pg_result;

/* Statements write a timestamp as Mastodon does (ISO 8601, UTC, with
 * milliseconds) with the SQL function eunha_ts() (migration 0040). */

/*
 * The Account entity's columns for an accounts row aliased `a`, counts
 * included; EU_ACCOUNT_NCOLS of them.
 */
#define EU_ACCOUNT_COLUMNS(a)                                                                      \
    a ".id, " a ".username, " a ".domain, " a ".display_name, " a ".note, " a ".url, " a           \
      ".uri, " a ".avatar_url, " a ".header_url, " a ".locked, " a ".bot, " a ".discoverable, " a  \
      ".fields::text, to_char(date_trunc('day', " a ".created_at AT TIME ZONE 'UTC'), "            \
      "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), " a ".followers_count, " a ".following_count, " a     \
      ".statuses_count, to_char(" a ".last_status_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), " a        \
      ".suspended_at IS NOT NULL, " a ".roles::text"
#define EU_ACCOUNT_NCOLS 20

/*
 * Renders the Account at row of res, columns col .. col+EU_ACCOUNT_NCOLS-1.
 * Returns a new reference the caller owns.
 */
struct json_t *eu_account_json(struct eu_req *req, const struct pg_result *res, int row, int col);

/* Escapes text for HTML into a new string owned by req's arena. */
const char *eu_html_escape(struct eu_req *req, const char *text);
/* A local account's plain-text bio as Mastodon's HTML note: escaped,
 * paragraphs on blank lines, <br> on single newlines. Arena-owned. */
const char *eu_text_to_simple_html(struct eu_req *req, const char *text);

/*
 * Statements give a media_attachments row m to the renderers below as
 * the SQL function eunha_media_json(m) builds it (migration 0040).
 */

/*
 * The MediaAttachment entity of row (an object made by eunha_media_json()),
 * for a tenant whose base URL is base_url: file URLs from the process's
 * store, a remote attachment's URL as it came (not cached), url null while
 * processing, meta.focus from the columns. Returns a new reference the
 * caller owns. Loop thread only.
 */
struct json_t *eu_media_attachment_json(struct eu_app *app, const char *base_url,
                                        struct json_t *row);
/* The media_attachments array from rows_text, a JSON array of
 * eunha_media_json() objects as a query returns it (NULL or not an array:
 * []). Returns a new reference the caller owns. */
struct json_t *eu_media_attachments_json(struct eu_app *app, const char *base_url,
                                         const char *rows_text);

/*
 * The URL of an avatar or header as accounts.avatar_url / header_url hold
 * it: a remote account's URL as it is, a local account's store key as the
 * store's URL under base_url. Heap memory the caller frees.
 */
char *eu_profile_image_url(struct eu_app *app, const char *base_url, const char *stored);

#endif
