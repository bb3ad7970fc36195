/*
 * Declarations shared by the accounts group's files (accounts.c,
 * relationships.c, lists.c) and nobody else. accounts.c holds the group's
 * one route table, so the handlers of the other two files are named here.
 */
#ifndef EUNHA_API_ACCOUNTS_INTERNAL_H
#define EUNHA_API_ACCOUNTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_account_cols;
struct eu_req;
struct eu_page;
struct eu_sql;
struct json_t;
struct pg_result;

/* ------------------------------------------------------------ accounts.c */

/*
 * Most account ids one request may name (relationships, familiar_followers,
 * list members). Mastodon sets no cap on these; 80 is its largest page of
 * accounts (followers, following, blocks), so a client asking about every
 * account of a page fits.
 */
#define EU_ACCOUNT_IDS_MAX 80

/*
 * The ids of array parameter key ("id" reads id[]) as a PostgreSQL array
 * literal "{1,2,3}", invalid ids dropped, duplicates kept. Arena-owned.
 * NULL after answering 422 when the array holds more than
 * EU_ACCOUNT_IDS_MAX items.
 */
const char *eu_accounts_ids_param(struct eu_req *req, struct json_t *params, const char *key);

/*
 * The Account entity at row, its fields where ac says (eu_account_json()),
 * rendered as Mastodon renders an unavailable account when it is
 * suspended: suspended true and every profile field empty. New reference;
 * the caller owns it.
 */
struct json_t *eu_accounts_render(struct eu_req *req, const struct pg_result *res, int row,
                                  const struct eu_account_cols *ac);

/*
 * Runs the paged statement s, whose rows are the page id, then
 * (eunha_account(a)).* and extras in any order, and answers 200 with the array of accounts and a
 * Link header built from the page ids. Extra columns become members of each account under their
 * column name (text or null), e.g. "mute_expires_at". params include the page's (eu_page_params());
 * rows ascending (min_id) are reversed.
 */
void eu_accounts_reply_page(struct eu_req *req, const struct eu_sql *s, int nparams,
                            const char *const *params, const struct eu_page *page);

/* Answers 200 with the signed-in account's CredentialAccount
 * (verify_credentials' answer). */
void eu_accounts_reply_credentials(struct eu_req *req);

/* For the settings pages (web_settings.c), which act as req->auth's
 * account: the CredentialAccount (an object the callback reads during the
 * call), and the update of PATCH /api/v1/accounts/update_credentials from
 * params, ending in done with 200, or a status and the API's error text
 * (arena). A database failure is answered and neither is called. */
typedef void (*eu_accounts_json_cb)(struct eu_req *req, struct json_t *o, void *arg);
typedef void (*eu_accounts_done_cb)(struct eu_req *req, int status, const char *error, void *arg);
void eu_accounts_credentials_load(struct eu_req *req, eu_accounts_json_cb cb, void *arg);
void eu_accounts_update(struct eu_req *req, struct json_t *params, eu_accounts_done_cb done,
                        void *arg);

/* ----------------------------------------------------------- migration.c */

/* Aliases an account may list (alsoKnownAs), and how long after a move
 * the next is refused: Mastodon's AccountMigration::COOLDOWN_PERIOD. */
#define EU_MIGRATION_ALIASES_MAX 5
#define EU_MIGRATION_COOLDOWN_S (30 * 24 * 60 * 60)

void eu_migration_alias(struct eu_req *req);
void eu_migration_move(struct eu_req *req);
/* The same for the settings page (web_settings.c), acting as req->auth's
 * account, from params: done gets 200 (aliases set) or 202 (moved), or the
 * API's status and error text (arena). */
typedef void (*eu_migration_done_cb)(struct eu_req *req, int status, const char *error, void *arg);
void eu_migration_alias_run(struct eu_req *req, struct json_t *params, eu_migration_done_cb done,
                            void *arg);
void eu_migration_move_run(struct eu_req *req, struct json_t *params, eu_migration_done_cb done,
                           void *arg);

/* ------------------------------------------------------- relationships.c */

void eu_relationships_index(struct eu_req *req);
void eu_relationships_follow(struct eu_req *req);
void eu_relationships_unfollow(struct eu_req *req);
void eu_relationships_remove_from_followers(struct eu_req *req);
void eu_relationships_block(struct eu_req *req);
void eu_relationships_unblock(struct eu_req *req);
void eu_relationships_mute(struct eu_req *req);
void eu_relationships_unmute(struct eu_req *req);
void eu_relationships_note(struct eu_req *req);
void eu_relationships_endorse(struct eu_req *req);
void eu_relationships_unendorse(struct eu_req *req);
void eu_relationships_requests_index(struct eu_req *req);
void eu_relationships_request_authorize(struct eu_req *req);
void eu_relationships_request_reject(struct eu_req *req);
void eu_relationships_blocks_index(struct eu_req *req);
void eu_relationships_mutes_index(struct eu_req *req);

/* --------------------------------------------------------------- lists.c */

void eu_lists_index(struct eu_req *req);
void eu_lists_create(struct eu_req *req);
void eu_lists_show(struct eu_req *req);
void eu_lists_update(struct eu_req *req);
void eu_lists_destroy(struct eu_req *req);
void eu_lists_accounts_index(struct eu_req *req);
void eu_lists_accounts_add(struct eu_req *req);
void eu_lists_accounts_remove(struct eu_req *req);
void eu_lists_of_account(struct eu_req *req);

/* profile_media.c: status 0 and the new store keys of the avatar and
 * header (NULL: not given), or status (422, 500, 503) and its error text
 * (the request's arena). */
typedef void (*eu_profile_images_cb)(struct eu_req *req, int status, const char *error,
                                     const char *avatar, const char *header, void *arg);
/*
 * Makes params' avatar and header files (multipart) into images on the CPU
 * pool and stores them. Returns 0 when neither is given (cb is not called),
 * -1 with err's 422 or 503 for a file refused at once, 1 when under way:
 * cb then runs later with the keys or the error. Nothing is answered here,
 * so the API and the profile page each end it their way.
 */
struct eu_error;
int eu_profile_images_store(struct eu_req *req, struct json_t *params, eu_profile_images_cb cb,
                            void *arg, struct eu_error *err);
struct eu_app;
/* Deletes a replaced avatar or header file: stored is the accounts
 * column's old value (a store key; URLs and NULL are ignored). Fire and
 * forget. */
void eu_profile_image_delete(struct eu_app *app, const char *stored);

#endif
