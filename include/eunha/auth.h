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

#endif
