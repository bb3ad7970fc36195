/*
 * Bearer-token authentication of the public API. Tokens are random strings
 * (libsodium); only their SHA-256 is stored. After a token's first use it is
 * found in a small per-tenant cache (bounded, with a TTL) so the hot path
 * makes no database round trip; revoking a token drops it from the cache.
 */
#ifndef EUNHA_AUTH_H
#define EUNHA_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_app;
struct eu_req;
struct eu_tenant;
struct eu_auth_cache;

/* Bytes of a token's text form, with its NUL. */
#define EU_AUTH_TOKEN_LEN 44

/* Writes a new random token (URL-safe base64 of 32 bytes) into out. */
void eu_auth_token_new(char out[EU_AUTH_TOKEN_LEN]);
/* Writes the lower-case hex SHA-256 of token into out. */
void eu_auth_token_hash(const char *token, char out[65]);

/* True when the space-separated granted scopes allow required: "read"
 * allows "read:statuses", and the old "follow" scope allows the follow,
 * block and mute scopes. A NULL or empty required is always allowed. */
bool eu_auth_scope_allows(const char *granted, const char *required);
/* Every scope Mastodon knows, NULL-terminated, in its metadata's order. */
extern const char *const eu_auth_known_scopes[];
/* True when every scope in the space-separated list is one Mastodon knows. */
bool eu_auth_scopes_are_valid(const char *scopes);

typedef void (*eu_auth_done_cb)(struct eu_req *req);

/*
 * Reads the request's bearer token (Authorization header, or access_token
 * in the query string), fills req->auth when it is valid, and calls done.
 * An absent or invalid token leaves req->auth.present false; a database
 * failure is answered by this function (503) and done is not called.
 */
void eu_auth_authenticate(struct eu_req *req, eu_auth_done_cb done);

/* Forgets one token (by hash) or every token of the tenant, e.g. after a
 * revoke, a password change or a suspension, in this process at once and,
 * through Redis, in every other process that serves the tenant. Call after
 * the change is committed. */
void eu_auth_cache_forget(struct eu_app *app, struct eu_tenant *t, const char *token_hash);
void eu_auth_cache_clear(struct eu_app *app, struct eu_tenant *t);
/* Subscribes to the invalidations other processes publish; until the
 * subscription is live, and whenever it is down, tokens are looked up in
 * the database on every request. Call once, after app->redis and
 * app->registry exist. */
void eu_auth_listen(struct eu_app *app);

/*
 * Mastodon's role permissions (UserRole::FLAGS), with Mastodon's bit values
 * so that a Role entity's "permissions" string means to a client what it
 * means on Mastodon. A token's user carries the computed set of its role
 * (the everyone role's added; every bit for an administrator), read with
 * the token and cached with it.
 */
enum {
    EU_PERM_ADMINISTRATOR = 1 << 0,
    EU_PERM_VIEW_DEVOPS = 1 << 1,
    EU_PERM_VIEW_AUDIT_LOG = 1 << 2,
    EU_PERM_VIEW_DASHBOARD = 1 << 3,
    EU_PERM_MANAGE_REPORTS = 1 << 4,
    EU_PERM_MANAGE_FEDERATION = 1 << 5,
    EU_PERM_MANAGE_SETTINGS = 1 << 6,
    EU_PERM_MANAGE_BLOCKS = 1 << 7,
    EU_PERM_MANAGE_TAXONOMIES = 1 << 8,
    EU_PERM_MANAGE_APPEALS = 1 << 9,
    EU_PERM_MANAGE_USERS = 1 << 10,
    EU_PERM_MANAGE_INVITES = 1 << 11,
    EU_PERM_MANAGE_RULES = 1 << 12,
    EU_PERM_MANAGE_ANNOUNCEMENTS = 1 << 13,
    EU_PERM_MANAGE_CUSTOM_EMOJIS = 1 << 14,
    EU_PERM_MANAGE_WEBHOOKS = 1 << 15,
    EU_PERM_INVITE_USERS = 1 << 16,
    EU_PERM_MANAGE_ROLES = 1 << 17,
    EU_PERM_MANAGE_USER_ACCESS = 1 << 18,
    EU_PERM_DELETE_USER_DATA = 1 << 19,
};

/*
 * True when the signed-in user's role has any of the permissions any_of.
 * Otherwise answers 403 {"error":"This action is not allowed"}, as
 * Mastodon's NotPermittedError does, and returns false: the caller returns.
 * An admin route needs both this and its OAuth scope (the route's), so a
 * token that asked for admin:write gains nothing for a user without a
 * staff role.
 */
bool eu_auth_permit(struct eu_req *req, int64_t any_of);

#endif
