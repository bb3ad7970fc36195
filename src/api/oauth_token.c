/*
 * The token endpoint (POST /oauth/token: authorization_code with PKCE,
 * client_credentials and password grants) and revocation (POST
 * /oauth/revoke), answering as Doorkeeper does. Authorization codes are
 * single-use because the statement that redeems one also marks it used,
 * and a spent code presented again revokes the tokens it was exchanged
 * for. PKCE is S256 only: a "plain" challenge is the verifier itself, so
 * it protects nothing once the authorization request is seen. The
 * password grant shares the sign-in throttles and password check with the
 * sign-in form (oauth.c).
 */
#include "oauth_internal.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apkeys.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"

enum {
    OAUTH_TOKEN_CREATE,
    OAUTH_CODE_REDEEM,
    OAUTH_CODE_REPLAYED,
    OAUTH_TOKEN_CLIENT,
    OAUTH_REVOKE_LOAD,
    OAUTH_REVOKE,
};

const struct eu_sql eu_oauth_token_sql[] = {
    /* A user's token without a code ($6 NULL) is the password grant, a
     * sign-in: it stamps last_sign_in_at as the web form does, which
     * /api/v1/instance/activity counts (tenant migration 0050). */
    [OAUTH_TOKEN_CREATE] =
        {"oauth.token_create",
         "WITH s AS (UPDATE users SET last_sign_in_at = now() WHERE tenant_id = $1"
         " AND id = $3::bigint AND $6::bigint IS NULL) "
         "INSERT INTO oauth_access_tokens (tenant_id, application_id, user_id, token_hash, "
         "scopes, grant_id) VALUES ($1, $2, $3, $4, $5, $6) "
         "RETURNING extract(epoch FROM created_at)::bigint"},
    /* Marking the code used in the statement that reads it makes it
     * single-use even under concurrent redemptions. */
    [OAUTH_CODE_REDEEM] = {"oauth.code_redeem",
                           "UPDATE oauth_access_grants g SET revoked_at = now() FROM users u"
                           " JOIN accounts a ON a.tenant_id = $1 AND a.id = u.account_id"
                           " WHERE g.tenant_id = $1 AND u.tenant_id = $1 AND u.id = g.user_id"
                           " AND g.code_hash = $2 AND g.application_id = $3"
                           " AND g.revoked_at IS NULL AND g.expires_at > now()"
                           " RETURNING g.user_id, g.redirect_uri, g.scopes, g.code_challenge,"
                           " g.code_challenge_method, a.suspended_at IS NULL AND u.approved, g.id"},
    /* A code presented again after it was spent: revoke the tokens it was
     * exchanged for, returning their hashes for the caches. */
    [OAUTH_CODE_REPLAYED] = {"oauth.code_replayed",
                             "UPDATE oauth_access_tokens t SET revoked_at = now()"
                             " FROM oauth_access_grants g WHERE g.tenant_id = $1"
                             " AND g.code_hash = $2 AND g.application_id = $3"
                             " AND g.revoked_at IS NOT NULL AND t.tenant_id = $1"
                             " AND t.grant_id = g.id AND t.revoked_at IS NULL"
                             " RETURNING t.token_hash"},
    [OAUTH_TOKEN_CLIENT] = {"oauth.token_client",
                            "SELECT id, client_secret_hash, scopes FROM oauth_applications "
                            "WHERE tenant_id = $1 AND client_id = $2"},
    [OAUTH_REVOKE_LOAD] =
        {"oauth.revoke_load",
         "SELECT (SELECT id FROM oauth_applications WHERE tenant_id = $1 AND client_id = $2),"
         " (SELECT client_secret_hash FROM oauth_applications"
         "  WHERE tenant_id = $1 AND client_id = $2),"
         " (SELECT application_id FROM oauth_access_tokens"
         "  WHERE tenant_id = $1 AND token_hash = $3)"},
    [OAUTH_REVOKE] = {"oauth.revoke",
                      "UPDATE oauth_access_tokens SET revoked_at = coalesce(revoked_at, now()) "
                      "WHERE tenant_id = $1 AND token_hash = $2"},
    {0},
};

/* Whether given (NULL: none) is the client secret whose SHA-256 hex is
 * stored. */
static bool
client_secret_matches(const char *given, const char *stored_hash)
{
    if (!given)
        return false;
    char hash[65];
    eu_auth_token_hash(given, hash);
    return eu_oauth_secret_equal(hash, stored_hash);
}

/* ------------------------------------------------------ POST /oauth/token */

/* A token request: the client, the grant and what it yields. */
struct tok {
    struct eu_oauth_flow f; /* f.req, f.params, f.app_id, f.app_scopes, user fields */
    const char *grant_type, *client_id, *client_secret, *scope;
    const char *grant_id; /* the code's grant, for an authorization_code token; else NULL */
    bool client_authenticated;
    char token[EU_AUTH_TOKEN_LEN];
    char code_hash[65]; /* authorization_code: the code presented, hashed */
};

/* Client credentials from the form (client_secret_post) or HTTP Basic
 * (client_secret_basic). Strings are arena-owned. */
static void
read_client(struct eu_req *req, json_t *params, const char **id, const char **secret)
{
    *id = eu_oauth_str_or_null(eu_param_str(params, "client_id"));
    *secret = eu_oauth_str_or_null(eu_param_str(params, "client_secret"));
    const char *h = eu_req_header(req, "Authorization");
    if (h && strncasecmp(h, "Basic ", 6) == 0) {
        size_t n = strlen(h + 6);
        unsigned char *bin = eu_arena_alloc(req->arena, n + 1);
        size_t len = 0;
        if (sodium_base642bin(bin, n, h + 6, n, " ", &len, NULL, sodium_base64_VARIANT_ORIGINAL) ==
            0) {
            bin[len] = '\0';
            char *colon = strchr((char *)bin, ':');
            if (colon) {
                *colon = '\0';
                *id = (const char *)bin;
                *secret = colon + 1;
            }
        }
    }
}

static void
on_token_created(struct eu_req *req, PGresult *res, void *arg)
{
    struct tok *t = arg;
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_add_header(req, "Pragma", "no-cache");
    eu_req_reply_json(req, 200,
                      json_pack("{s:s, s:s, s:s, s:I}", "access_token", t->token, "token_type",
                                "Bearer", "scope", t->scope, "created_at",
                                (json_int_t)strtoll(PQgetvalue(res, 0, 0), NULL, 10)));
}

/* Issues a token for the app and user (0: app-only) with t->scope. */
static void
issue_token(struct tok *t, int64_t user_id)
{
    struct eu_req *req = t->f.req;
    char hash[65];
    eu_auth_token_new(t->token);
    eu_auth_token_hash(t->token, hash);
    const char *app = eu_arena_sprintf(req->arena, "%lld", (long long)t->f.app_id);
    const char *uid = user_id ? eu_arena_sprintf(req->arena, "%lld", (long long)user_id) : NULL;
    const char *p[] = {app, uid, hash, t->scope, t->grant_id};
    eu_req_stmt(req, &eu_oauth_token_sql[OAUTH_TOKEN_CREATE], 5, p, on_token_created, t);
}

/* The requested scope (default "read") within the app's; false after
 * answering invalid_scope. */
static bool
take_scope(struct tok *t)
{
    const char *want = eu_oauth_str_or_null(eu_param_str(t->f.params, "scope"));
    t->scope = eu_oauth_scopes_normalize(t->f.req->arena, want ? want : "read");
    if (!t->scope || !eu_oauth_scopes_within(t->scope, t->f.app_scopes)) {
        eu_oauth_reply_error(t->f.req, 400, "invalid_scope", EU_OAUTH_INVALID_SCOPE);
        return false;
    }
    return true;
}

/* base64url(SHA-256(verifier)) without padding equals the challenge (S256).
 * A "plain" grant stored before plain was refused at authorize fails too. */
static bool
pkce_ok(const char *method, const char *challenge, const char *verifier)
{
    if (!verifier || strcmp(method, "S256") != 0)
        return false;
    size_t n = strlen(verifier);
    if (n < 43 || n > 128)
        return false;
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)verifier, n);
    char enc[64];
    sodium_bin2base64(enc, sizeof(enc), h, sizeof(h), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return eu_oauth_secret_equal(challenge, enc);
}

static void
on_code_replayed(struct eu_req *req, PGresult *res, void *arg)
{
    for (int i = 0; i < PQntuples(res); i++)
        eu_auth_cache_forget(req->app, req->tenant, PQgetvalue(res, i, 0));
    if (PQntuples(res) > 0)
        eu_log_warn("oauth",
                    "authorization code presented again: revoked %d token(s) issued for it",
                    PQntuples(res));
    eu_oauth_reply_error(req, 400, "invalid_grant", EU_OAUTH_INVALID_GRANT);
}

static void
on_code_redeemed(struct eu_req *req, PGresult *res, void *arg)
{
    struct tok *t = arg;
    if (PQntuples(res) != 1) {
        /* Unknown, expired or already spent. If spent, whoever holds the
         * code besides the client may have redeemed it first: RFC 6749
         * 4.1.2 has the tokens issued for it revoked. */
        const char *p[] = {t->code_hash,
                           eu_arena_sprintf(req->arena, "%lld", (long long)t->f.app_id)};
        eu_req_stmt(req, &eu_oauth_token_sql[OAUTH_CODE_REPLAYED], 2, p, on_code_replayed, t);
        return;
    }
    /* RFC 6749 4.1.3: the URI the code was sent to, exactly (authorize
     * always stores one, filling in a sole registered URI). */
    const char *redirect = eu_oauth_str_or_null(eu_param_str(t->f.params, "redirect_uri"));
    if (!PQgetisnull(res, 0, 1) && (!redirect || strcmp(redirect, PQgetvalue(res, 0, 1)) != 0)) {
        eu_oauth_reply_error(req, 400, "invalid_grant", EU_OAUTH_INVALID_GRANT);
        return;
    }
    bool has_challenge = !PQgetisnull(res, 0, 3);
    if (has_challenge &&
        !pkce_ok(PQgetvalue(res, 0, 4), PQgetvalue(res, 0, 3),
                 eu_oauth_str_or_null(eu_param_str(t->f.params, "code_verifier")))) {
        eu_oauth_reply_error(req, 400, "invalid_grant", EU_OAUTH_INVALID_GRANT);
        return;
    }
    /* Without PKCE the client must have proved itself with its secret. */
    if (!has_challenge && !t->client_authenticated) {
        eu_oauth_reply_error(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
        return;
    }
    if (strcmp(PQgetvalue(res, 0, 5), "t") != 0) {
        eu_oauth_reply_error(req, 400, "invalid_grant", EU_OAUTH_INVALID_GRANT);
        return;
    }
    t->scope = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 2));
    t->grant_id = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 6));
    issue_token(t, strtoll(PQgetvalue(res, 0, 0), NULL, 10));
}

static void
grant_authorization_code(struct tok *t)
{
    struct eu_req *req = t->f.req;
    const char *code = eu_oauth_str_or_null(eu_param_str(t->f.params, "code"));
    if (!code) {
        eu_oauth_reply_error(req, 400, "invalid_request", "Missing required parameter: code.");
        return;
    }
    /* Checked before the code is spent, so a client that forgot it can
     * retry; a wrong one is refused after (invalid_grant). */
    if (!eu_oauth_str_or_null(eu_param_str(t->f.params, "redirect_uri"))) {
        eu_oauth_reply_error(req, 400, "invalid_request",
                             "Missing required parameter: redirect_uri.");
        return;
    }
    eu_auth_token_hash(code, t->code_hash);
    const char *app = eu_arena_sprintf(req->arena, "%lld", (long long)t->f.app_id);
    const char *p[] = {t->code_hash, app};
    eu_req_stmt(req, &eu_oauth_token_sql[OAUTH_CODE_REDEEM], 2, p, on_code_redeemed, t);
}

static void
password_verified(void *arg)
{
    struct tok *t = arg;
    struct eu_req *req = t->f.req;
    eu_oauth_flow_free_password(&t->f);
    eu_req_enter(req);
    /* An account with two-factor sign-in gets no token for its password
     * alone, as Mastodon's Doorkeeper config refuses it; its apps go
     * through the authorization-code flow, whose form asks for the code. */
    if (t->f.verify_rc != 0 || !t->f.user_id || t->f.suspended || !t->f.approved ||
        t->f.otp_required) {
        eu_oauth_reply_error(req, 400, "invalid_grant", EU_OAUTH_INVALID_GRANT);
        return;
    }
    eu_oauth_remember_address(req, t->f.user_id);
    issue_token(t, t->f.user_id);
}

static void
on_password_account_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct tok *t = arg;
    if (retry_after_s > 0) {
        eu_oauth_flow_free_password(&t->f);
        eu_req_reply_error(req, 429, "Too many requests");
        return;
    }
    eu_oauth_verify_password(&t->f, t->f.stored, password_verified);
}

static void
on_password_user(struct eu_req *req, PGresult *res, void *arg)
{
    struct tok *t = arg;
    const char *stored;
    eu_oauth_read_user_row(&t->f, res, 0, &stored);
    t->f.stored = stored;
    eu_oauth_count_account(t->f.req, t->f.user_id, t->f.login, on_password_account_counted, t);
}

/* Within the sign-in limits: look the user up, then check the password. */
static void
on_password_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct tok *t = arg;
    if (retry_after_s > 0) {
        eu_req_reply_error(req, 429, "Too many requests");
        return;
    }
    eu_oauth_find_user(&t->f, eu_param_str(t->f.params, "password"), on_password_user, t);
}

static void
grant_password(struct tok *t)
{
    struct eu_req *req = t->f.req;
    const char *login = eu_oauth_str_or_null(eu_param_str(t->f.params, "username"));
    const char *password = eu_oauth_str_or_null(eu_param_str(t->f.params, "password"));
    if (!login || !password) {
        eu_oauth_reply_error(req, 400, "invalid_request",
                             login ? "Missing required parameter: password."
                                   : "Missing required parameter: username.");
        return;
    }
    if (!t->client_authenticated) {
        eu_oauth_reply_error(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
        return;
    }
    if (strlen(password) > 1024) {
        eu_oauth_reply_error(req, 400, "invalid_grant", EU_OAUTH_INVALID_GRANT);
        return;
    }
    if (!take_scope(t))
        return;
    t->f.login = login;
    eu_oauth_count_sign_in(req, on_password_counted, t);
}

static void
on_token_client(struct eu_req *req, PGresult *res, void *arg)
{
    struct tok *t = arg;
    if (PQntuples(res) != 1) {
        eu_oauth_reply_error(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
        return;
    }
    t->f.app_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    t->f.app_scopes = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 2));
    t->client_authenticated = client_secret_matches(t->client_secret, PQgetvalue(res, 0, 1));
    /* A wrong secret is always an error; a missing one only passes for a
     * code grant with PKCE (checked once the code is read). */
    if (t->client_secret && !t->client_authenticated) {
        eu_oauth_reply_error(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
        return;
    }
    if (strcmp(t->grant_type, "authorization_code") == 0) {
        grant_authorization_code(t);
    } else if (strcmp(t->grant_type, "password") == 0) {
        grant_password(t);
    } else {
        if (!t->client_authenticated) {
            eu_oauth_reply_error(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
            return;
        }
        if (take_scope(t))
            issue_token(t, 0);
    }
}

void
eu_oauth_token(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_oauth_reply_error(req, 400, "invalid_request", err.message);
        return;
    }
    struct tok *t = eu_arena_calloc(req->arena, sizeof(*t));
    t->f.req = req;
    t->f.params = params;
    t->grant_type = eu_oauth_str_or_null(eu_param_str(params, "grant_type"));
    if (!t->grant_type) {
        eu_oauth_reply_error(req, 400, "invalid_request",
                             "Missing required parameter: grant_type.");
        return;
    }
    if (strcmp(t->grant_type, "authorization_code") != 0 &&
        strcmp(t->grant_type, "password") != 0 &&
        strcmp(t->grant_type, "client_credentials") != 0) {
        eu_oauth_reply_error(req, 400, "unsupported_grant_type",
                             "The authorization grant type is not supported by the authorization "
                             "server.");
        return;
    }
    read_client(req, params, &t->client_id, &t->client_secret);
    if (!t->client_id) {
        eu_oauth_reply_error(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
        return;
    }
    const char *p[] = {t->client_id};
    eu_req_stmt(req, &eu_oauth_token_sql[OAUTH_TOKEN_CLIENT], 1, p, on_token_client, t);
}

/* ----------------------------------------------------- POST /oauth/revoke */

struct revoke {
    char hash[65];
};

static void
on_revoked(struct eu_req *req, PGresult *res, void *arg)
{
    struct revoke *r = arg;
    /* Also drop it from the caches of this and every other process, so it
     * fails at once everywhere. */
    eu_auth_cache_forget(req->app, req->tenant, r->hash);
    eu_stream_close_for(req->app, req->tenant, 0, r->hash);
    eu_req_reply_json(req, 200, json_object());
}

static void
on_revoke_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct revoke *r = arg;
    json_t *params = eu_req_params(req, NULL);
    const char *id, *secret;
    read_client(req, params, &id, &secret);
    if (PQgetisnull(res, 0, 0) || !client_secret_matches(secret, PQgetvalue(res, 0, 1))) {
        eu_oauth_reply_error(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
        return;
    }
    /* An unknown token is not an error (RFC 7009): there is nothing to do. */
    if (PQgetisnull(res, 0, 2)) {
        eu_req_reply_json(req, 200, json_object());
        return;
    }
    if (strcmp(PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 2)) != 0) {
        eu_oauth_reply_error(req, 403, "unauthorized_client",
                             "You are not authorized to revoke this token");
        return;
    }
    const char *p[] = {r->hash};
    eu_req_stmt(req, &eu_oauth_token_sql[OAUTH_REVOKE], 1, p, on_revoked, r);
}

void
eu_oauth_revoke(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_oauth_reply_error(req, 400, "invalid_request", err.message);
        return;
    }
    const char *token_s = eu_oauth_str_or_null(eu_param_str(params, "token"));
    const char *id, *secret;
    read_client(req, params, &id, &secret);
    if (!id) {
        eu_oauth_reply_error(req, 401, "invalid_client", EU_OAUTH_INVALID_CLIENT);
        return;
    }
    if (!token_s) {
        eu_oauth_reply_error(req, 403, "unauthorized_client",
                             "You are not authorized to revoke this token");
        return;
    }
    struct revoke *r = eu_arena_calloc(req->arena, sizeof(*r));
    eu_auth_token_hash(token_s, r->hash);
    const char *p[] = {id, r->hash};
    eu_req_stmt(req, &eu_oauth_token_sql[OAUTH_REVOKE_LOAD], 2, p, on_revoke_loaded, r);
}

/* Flags: include/eunha/router.h. */
const struct eu_route eu_oauth_token_routes[] = {
    {EU_HTTP_POST, "/oauth/token", eu_oauth_token, NULL, EU_ROUTE_CORS | EU_ROUTE_LIMIT_API},
    {EU_HTTP_POST, "/oauth/revoke", eu_oauth_revoke, NULL, EU_ROUTE_CORS | EU_ROUTE_LIMIT_API},
    {0},
};
