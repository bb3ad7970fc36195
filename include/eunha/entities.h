/*
 * Mastodon entities rendered from SQL rows. A renderer reads the columns an
 * SQL function of the placement schema produced, by name, so one query can
 * carry an entity beside other columns (a notification with its account).
 */
#ifndef EUNHA_ENTITIES_H
#define EUNHA_ENTITIES_H

#include <stdint.h>

struct eu_app;
struct eu_arena;
struct eu_req;
struct json_t;
struct pg_result;

/* Statements write a timestamp as Mastodon does (ISO 8601, UTC, with
 * milliseconds) with the SQL function eunha_ts() (migration 0040). */

/*
 * Where a result holds the Account entity's fields: the columns of
 * eunha_account_entity (tenant migration 0041), which a statement selects
 * for an accounts row a as (eunha_account(a)).*, found by name once per
 * result so that a row can carry other columns in any order beside them.
 */
#define EU_ACCOUNT_NFIELDS 21
struct eu_account_cols {
    int col[EU_ACCOUNT_NFIELDS];
};

/* Finds the Account's fields in res. A missing one is a statement's bug
 * (asserted). */
void eu_account_cols_find(struct eu_account_cols *ac, const struct pg_result *res);

/*
 * Renders the Account at row of res, its fields where ac (filled by
 * eu_account_cols_find() for res) says. Returns a new reference the caller
 * owns.
 */
struct json_t *eu_account_json(struct eu_req *req, const struct pg_result *res, int row,
                               const struct eu_account_cols *ac);

/* Escapes text for HTML into a new string owned by req's arena. */
const char *eu_html_escape(struct eu_req *req, const char *text);
/* The same into arena a, for work that has no request (a job's mail). */
const char *eu_html_escape_in(struct eu_arena *a, const char *text);
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
 * The CustomEmoji entity of row, one object of the JSON array that
 * eunha_emojis_in() (tenant migration 0054) builds: url and static_url
 * from the store for a local emoji, as they came for a remote one.
 * Returns a new reference the caller owns. Loop thread only.
 */
struct json_t *eu_custom_emoji_json(struct eu_req *req, struct json_t *row);
/* The emojis array from rows_text, such a JSON array as a query returns it
 * (NULL, the text naming no emoji, or not an array: []). Returns a new
 * reference the caller owns. */
struct json_t *eu_custom_emojis_json(struct eu_req *req, const char *rows_text);

/*
 * The URL of an avatar or header as accounts.avatar_url / header_url hold
 * it: a remote account's URL as it is, a local account's store key as the
 * store's URL under base_url. Heap memory the caller frees.
 */
char *eu_profile_image_url(struct eu_app *app, const char *base_url, const char *stored);

#endif
