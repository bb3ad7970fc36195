/*
 * Apps and OAuth 2 as Mastodon (Doorkeeper) serves them: app registration,
 * the authorization-code flow through server-rendered HTML (sign-in, then
 * consent, with PKCE), the token endpoint (authorization_code,
 * client_credentials and password grants), revocation, the RFC 8414
 * metadata document, and account registration with an app token.
 *
 * Secrets never reach the database in the clear: access tokens,
 * authorization codes, client secrets and browser sessions are stored as
 * SHA-256 hashes (they are 32 random bytes, so no slow hash is needed). A
 * client secret is shown once, in the reply that registers the app.
 * Authorization codes are single-use because the statement that redeems one
 * also marks it used, and a spent code presented again revokes the tokens
 * it was exchanged for. PKCE is S256 only: a "plain" challenge is the
 * verifier itself, so it protects nothing once the authorization request
 * is seen. Passwords are checked with argon2id on the CPU pool.
 *
 * The sign-in pages keep a browser session in web_sessions (cookie
 * "_eunha_session", HttpOnly, SameSite=Lax, Secure under https). A browser
 * gets a session before signing in, so the sign-in form carries a CSRF token
 * like every other form; signing in replaces the session id (no fixation),
 * and so does a failed attempt, whose form and token are then spent.
 *
 * Sign-in attempts, through the form and the password grant alike, are
 * counted in Redis per client IP before anything is looked up, then per
 * account and client IP together before anything is hashed ([limits]
 * sign_in_attempts_*), so guessing is slow and a flood of guesses costs
 * the CPU pool nothing. The account's counter is its user id, so its
 * e-mail address and username share it; pairing it with the IP means a
 * guesser elsewhere cannot lock the owner out. Guesses spread over many
 * addresses meet a per-account cap in all, which addresses the account
 * has signed in from lately are not held to.
 */
#include "eunha/routes.h"

#include <ctype.h>
#include <hiredis/hiredis.h>
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
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/params.h"
#include "eunha/ratelimit.h"
#include "eunha/redis.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"
#include "pwgate_internal.h"
#include "web_internal.h"

#define OOB_URI "urn:ietf:wg:oauth:2.0:oob"
#define SESSION_COOKIE "_eunha_session"
/* argon2id at the cost src/admin/accounts.c uses, so both hash alike. */
#define PWHASH_OPS 2
#define PWHASH_MEM (19u * 1024u * 1024u)
#define MAX_REDIRECT_URIS 16
#define MAX_URI_LEN 2000
/* Mastodon's windows for its sign-in throttles; the counts are config. */
#define SIGN_IN_IP_PERIOD_S 300
#define SIGN_IN_LOGIN_PERIOD_S 3600
/* The per-account cap over all addresses not known to the account, as a
 * multiple of the per-account-and-IP limit: a few addresses' worth, so a
 * guesser who rotates addresses gains little, and the owner's own address
 * never meets it. */
#define SIGN_IN_ACCOUNT_FACTOR 4
/* How long an address the account signed in from stays known. */
#define SIGN_IN_KNOWN_TTL_S (30 * 24 * 3600)

enum {
    OAUTH_APP_CREATE,
    OAUTH_APP_VERIFY,
    OAUTH_AUTHZ_LOAD,
    OAUTH_SESSION_ANONYMOUS,
    OAUTH_SIGN_IN,
    OAUTH_SESSION_ROTATE,
    OAUTH_USER_BY_LOGIN,
    OAUTH_GRANT_CREATE,
    OAUTH_TOKEN_CREATE,
    OAUTH_CODE_REDEEM,
    OAUTH_CODE_REPLAYED,
    OAUTH_TOKEN_CLIENT,
    OAUTH_REVOKE_LOAD,
    OAUTH_REVOKE,
    OAUTH_SIGNUP_CHECK,
    OAUTH_SIGNUP,
};

const struct eu_sql eu_oauth_sql[] = {
    [OAUTH_APP_CREATE] =
        {"oauth.app_create",
         "INSERT INTO oauth_applications (tenant_id, name, website, redirect_uri, scopes, "
         "client_id, client_secret_hash) VALUES ($1, $2, $3, $4, $5, $6, $7) "
         "RETURNING id, name, website, redirect_uri, scopes, client_id"},
    [OAUTH_APP_VERIFY] = {"oauth.app_verify",
                          "SELECT id, name, website, redirect_uri, scopes FROM oauth_applications "
                          "WHERE tenant_id = $1 AND id = $2"},
    /* $2 client_id, $3 session hash: the app, and the browser's session
     * (found) with its user when signed in. */
    [OAUTH_AUTHZ_LOAD] =
        {"oauth.authz_load",
         "SELECT a.id, a.name, a.scopes, a.redirect_uri, s.found, s.user_id, s.csrf_token,"
         " s.username"
         " FROM oauth_applications a LEFT JOIN ("
         "  SELECT true AS found, w.user_id, w.csrf_token, ac.username FROM web_sessions w"
         "  LEFT JOIN users u ON u.tenant_id = $1 AND u.id = w.user_id"
         "  LEFT JOIN accounts ac ON ac.tenant_id = $1 AND ac.id = u.account_id"
         "  WHERE w.tenant_id = $1 AND w.session_hash = $3 AND w.expires_at > now()"
         "  AND (w.user_id IS NULL OR (ac.suspended_at IS NULL AND u.approved))) s ON true"
         " WHERE a.tenant_id = $1 AND a.client_id = $2"},
    /* Old sessions are swept here, as a new one starts. */
    [OAUTH_SESSION_ANONYMOUS] =
        {"oauth.session_anonymous",
         "WITH gc AS (DELETE FROM web_sessions WHERE tenant_id = $1 AND expires_at < now()) "
         "INSERT INTO web_sessions (tenant_id, user_id, session_hash, csrf_token, "
         "expires_at) VALUES ($1, NULL, $2, $3, now() + interval '1 hour')"},
    [OAUTH_SIGN_IN] =
        {"oauth.sign_in",
         "WITH u AS (UPDATE users SET last_sign_in_at = now() WHERE tenant_id = $1 AND id = $3) "
         "UPDATE web_sessions SET user_id = $3, session_hash = $4, csrf_token = $5, "
         "expires_at = now() + interval '14 days' WHERE tenant_id = $1 AND session_hash = $2"},
    /* After a failed sign-in: same user (if any) and expiry, new id and token. */
    [OAUTH_SESSION_ROTATE] = {"oauth.session_rotate",
                              "UPDATE web_sessions SET session_hash = $3, csrf_token = $4"
                              " WHERE tenant_id = $1 AND session_hash = $2"},
    [OAUTH_USER_BY_LOGIN] =
        {"oauth.user_by_login",
         "SELECT u.id, u.encrypted_password, u.approved, a.suspended_at IS NOT NULL, a.username"
         " FROM users u JOIN accounts a ON a.tenant_id = $1 AND a.id = u.account_id"
         " WHERE u.tenant_id = $1 AND a.domain IS NULL"
         " AND (lower(u.email) = lower($2) OR lower(a.username) = lower($2))"
         " ORDER BY lower(u.email) = lower($2) DESC LIMIT 1"},
    [OAUTH_GRANT_CREATE] =
        {"oauth.grant_create",
         "INSERT INTO oauth_access_grants (tenant_id, application_id, user_id, code_hash, "
         "redirect_uri, scopes, code_challenge, code_challenge_method, expires_at) "
         "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + interval '10 minutes')"},
    [OAUTH_TOKEN_CREATE] =
        {"oauth.token_create",
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
    [OAUTH_SIGNUP_CHECK] = {"oauth.signup_check",
                            "SELECT coalesce((SELECT value #>> '{}' FROM settings"
                            " WHERE tenant_id = $1 AND key = 'registrations_mode'), 'open'),"
                            " EXISTS (SELECT 1 FROM accounts WHERE tenant_id = $1"
                            " AND lower(username) = lower($2) AND domain IS NULL),"
                            " EXISTS (SELECT 1 FROM users WHERE tenant_id = $1"
                            " AND lower(email) = lower($3)),"
                            " (SELECT scopes FROM oauth_applications WHERE tenant_id = $1"
                            " AND id = $4::bigint)"},
    /* Confirmed at once: there is no mail to confirm with, and Mastodon's
     * clients expect the token to work when registrations are open. */
    [OAUTH_SIGNUP] =
        {"oauth.signup",
         "WITH a AS (INSERT INTO accounts (tenant_id, username, public_key, private_key)"
         " VALUES ($1, $2, $11, $12) RETURNING id),"
         " u AS (INSERT INTO users (tenant_id, account_id, email, encrypted_password, confirmed_at,"
         " approved, locale, reason) SELECT $1::bigint, a.id, $3, $4, now(), $5::boolean, $6, $7"
         " FROM a RETURNING id),"
         " t AS (INSERT INTO oauth_access_tokens (tenant_id, application_id, user_id, token_hash,"
         " scopes) SELECT $1::bigint, $8::bigint, u.id, $9, $10 FROM u RETURNING created_at)"
         " SELECT extract(epoch FROM created_at)::bigint FROM t"},
    {0},
};

static const char invalid_grant_desc[] =
    "The provided authorization grant is invalid, expired, revoked, does not match the "
    "redirection URI used in the authorization request, or was issued to another client.";
static const char invalid_client_desc[] =
    "Client authentication failed due to unknown client, no client authentication included, "
    "or unsupported authentication method.";
static const char invalid_scope_desc[] = "The requested scope is invalid, unknown, or malformed.";

/* ------------------------------------------------------------ helpers */

/* Doorkeeper's error body: {"error": code, "error_description": text}. */
static void
reply_oauth_error(struct eu_req *req, int status, const char *code, const char *desc)
{
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_json(req, status,
                      json_pack("{s:s, s:s}", "error", code, "error_description", desc));
}

/* Constant-time equality of two strings of any lengths (compared through
 * their hashes so neither length nor content leaks). */
static bool
secret_equal(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    unsigned char ha[32], hb[32];
    crypto_generichash(ha, sizeof(ha), (const unsigned char *)a, strlen(a), NULL, 0);
    crypto_generichash(hb, sizeof(hb), (const unsigned char *)b, strlen(b), NULL, 0);
    return sodium_memcmp(ha, hb, sizeof(ha)) == 0;
}

/* Whether given (NULL: none) is the client secret whose SHA-256 hex is
 * stored. */
static bool
client_secret_matches(const char *given, const char *stored_hash)
{
    if (!given)
        return false;
    char hash[65];
    eu_auth_token_hash(given, hash);
    return secret_equal(hash, stored_hash);
}

/* Percent-encodes s for a query component. Arena-owned. */
static const char *
url_encode(struct eu_arena *a, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = eu_arena_alloc(a, strlen(s) * 3 + 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    return out;
}

static const char *
str_or_null(const char *s)
{
    return s && *s ? s : NULL;
}

/*
 * Splits a scope list on spaces and '+' (query strings use either), drops
 * duplicates and joins with single spaces. Returns NULL when a scope is
 * unknown or the list is empty. Arena-owned.
 */
static const char *
normalize_scopes(struct eu_arena *a, const char *raw)
{
    size_t n = strlen(raw);
    char *out = eu_arena_alloc(a, n + 2), *o = out;
    *o = '\0';
    const char *p = raw;
    while (*p) {
        while (*p == ' ' || *p == '+' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        size_t len = strcspn(p, " +\t\r\n");
        if (!len)
            break;
        /* Skip a scope already in out. */
        bool dup = false;
        for (const char *q = out; *q && !dup;) {
            size_t ql = strcspn(q, " ");
            dup = ql == len && strncmp(q, p, len) == 0;
            q += ql;
            while (*q == ' ')
                q++;
        }
        if (!dup) {
            if (o != out)
                *o++ = ' ';
            memcpy(o, p, len);
            o += len;
            *o = '\0';
        }
        p += len;
    }
    return out[0] && eu_auth_scopes_are_valid(out) ? out : NULL;
}

/* True when every scope of want is allowed by the app's granted list. */
static bool
scopes_within(const char *want, const char *app_scopes)
{
    const char *p = want;
    char one[64];
    while (*p) {
        size_t len = strcspn(p, " ");
        if (len >= sizeof(one))
            return false;
        memcpy(one, p, len);
        one[len] = '\0';
        if (!eu_auth_scope_allows(app_scopes, one))
            return false;
        p += len;
        while (*p == ' ')
            p++;
    }
    return true;
}

/* Doorkeeper's rule for a redirect URI: absolute (a scheme, then
 * something), no fragment, no whitespace; the out-of-band URN is allowed. */
static bool
redirect_uri_is_valid(const char *u)
{
    if (strcmp(u, OOB_URI) == 0)
        return true;
    size_t n = strlen(u);
    if (n == 0 || n > MAX_URI_LEN || !isalpha((unsigned char)u[0]))
        return false;
    const char *p = u;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    if (*p != ':' || !p[1])
        return false;
    for (const unsigned char *c = (const unsigned char *)u; *c; c++)
        if (*c <= ' ' || *c == 0x7f || *c == '#' || *c == '<' || *c == '>' || *c == '"')
            return false;
    size_t slen = (size_t)(p - u);
    if ((slen == 4 && strncasecmp(u, "http", 4) == 0) ||
        (slen == 5 && strncasecmp(u, "https", 5) == 0))
        return strncmp(p + 1, "//", 2) == 0 && p[3] && p[3] != '/';
    return true;
}

/*
 * True for a URI a browser would run or render instead of leaving for:
 * javascript:, data: and vbscript:, in any case. Browsers skip leading
 * spaces and control characters before the scheme, so this does too,
 * whatever the caller already trimmed.
 */
static bool
redirect_uri_is_forbidden(const char *u)
{
    static const char *const schemes[] = {"javascript", "data", "vbscript", NULL};
    while (*u && (unsigned char)*u <= ' ')
        u++;
    size_t n = strcspn(u, ":");
    if (!u[n])
        return false;
    for (int i = 0; schemes[i]; i++)
        if (strlen(schemes[i]) == n && strncasecmp(u, schemes[i], n) == 0)
            return true;
    return false;
}

/* True when uri is one of the newline-separated registered URIs. */
static bool
redirect_uri_is_registered(const char *registered, const char *uri)
{
    size_t ulen = strlen(uri);
    for (const char *p = registered; *p;) {
        size_t len = strcspn(p, "\n");
        if (len == ulen && strncmp(p, uri, len) == 0)
            return true;
        p += len;
        if (*p == '\n')
            p++;
    }
    return false;
}

static json_t *
split_words(const char *s, const char *seps)
{
    json_t *arr = json_array();
    for (const char *p = s; *p;) {
        p += strspn(p, seps);
        size_t len = strcspn(p, seps);
        if (len)
            json_array_append_new(arr, json_stringn(p, len));
        p += len;
    }
    return arr;
}

/* The Application entity from columns id, name, website, redirect_uri,
 * scopes of row 0 (col 0..4). New reference. */
static json_t *
application_json(const PGresult *res)
{
    const char *website = PQgetisnull(res, 0, 2) ? NULL : PQgetvalue(res, 0, 2);
    json_t *o = json_pack(
        "{s:s, s:s, s:o, s:o, s:s, s:o, s:s}", "id", PQgetvalue(res, 0, 0), "name",
        PQgetvalue(res, 0, 1), "website", website ? json_string(website) : json_null(), "scopes",
        split_words(PQgetvalue(res, 0, 4), " "), "redirect_uri", PQgetvalue(res, 0, 3),
        "redirect_uris", split_words(PQgetvalue(res, 0, 3), "\n"), "vapid_key", "");
    return o;
}

/* -------------------------------------------------- POST /api/v1/apps */

/* arg is the secret (arena-owned): only its hash was stored, so this reply
 * is the one place it is ever shown. */
static void
on_app_created(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *o = application_json(res);
    json_object_set_new(o, "client_id", json_string(PQgetvalue(res, 0, 5)));
    json_object_set_new(o, "client_secret", json_string(arg));
    json_object_set_new(o, "client_secret_expires_at", json_integer(0));
    eu_req_reply_json(req, 200, o);
}

/* Reads redirect_uris (a string with one URI per line, or an array) into a
 * newline-joined list. Returns NULL after answering 422. */
static const char *
read_redirect_uris(struct eu_req *req, json_t *params)
{
    json_t *arr = eu_param_array(params, "redirect_uris");
    if (!arr) {
        eu_req_reply_error(req, 422, "Validation failed: Redirect URI can't be blank");
        return NULL;
    }
    /* A single string may itself hold several URIs, one per line. */
    json_t *uris = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (!json_is_string(v)) {
            json_decref(uris);
            json_decref(arr);
            eu_req_reply_error(req, 422,
                               "Validation failed: Redirect URI must be an absolute URI.");
            return NULL;
        }
        json_t *parts = split_words(json_string_value(v), " \t\r\n");
        json_array_extend(uris, parts);
        json_decref(parts);
    }
    json_decref(arr);
    size_t n = json_array_size(uris), total = 0;
    if (n == 0 || n > MAX_REDIRECT_URIS) {
        json_decref(uris);
        eu_req_reply_error(req, 422,
                           n ? "Validation failed: Redirect URI is too long"
                             : "Validation failed: Redirect URI can't be blank");
        return NULL;
    }
    json_array_foreach(uris, i, v)
    {
        /* Doorkeeper's forbid_redirect_uri, in its own words. */
        if (redirect_uri_is_forbidden(json_string_value(v))) {
            json_decref(uris);
            eu_req_reply_error(req, 422,
                               "Validation failed: Redirect URI is forbidden by the server.");
            return NULL;
        }
        if (!redirect_uri_is_valid(json_string_value(v))) {
            json_decref(uris);
            eu_req_reply_error(req, 422,
                               "Validation failed: Redirect URI must be an absolute URI.");
            return NULL;
        }
        total += json_string_length(v) + 1;
    }
    char *out = eu_arena_alloc(req->arena, total + 1), *o = out;
    json_array_foreach(uris, i, v)
    {
        if (i)
            *o++ = '\n';
        memcpy(o, json_string_value(v), json_string_length(v));
        o += json_string_length(v);
    }
    *o = '\0';
    json_decref(uris);
    return out;
}

static void
apps_create(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *name = eu_param_str(params, "client_name");
    if (!name || !*name) {
        eu_req_reply_error(req, 422, "Validation failed: Application name can't be blank");
        return;
    }
    if (strlen(name) > 60) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Application name is too long (maximum is 60 "
                           "characters)");
        return;
    }
    const char *uris = read_redirect_uris(req, params);
    if (!uris)
        return;
    const char *raw_scopes = eu_param_str(params, "scopes");
    const char *scopes = "read";
    if (raw_scopes && *raw_scopes) {
        scopes = normalize_scopes(req->arena, raw_scopes);
        if (!scopes) {
            eu_req_reply_error(req, 422,
                               "Validation failed: Scopes doesn't match configured on the server.");
            return;
        }
    }
    const char *website = str_or_null(eu_param_str(params, "website"));
    if (website && (strlen(website) > MAX_URI_LEN ||
                    (strncmp(website, "https://", 8) != 0 && strncmp(website, "http://", 7) != 0) ||
                    strpbrk(website, " \t\r\n<>\""))) {
        eu_req_reply_error(req, 422, "Validation failed: Website is invalid");
        return;
    }
    char client_id[EU_AUTH_TOKEN_LEN], secret[EU_AUTH_TOKEN_LEN], secret_hash[65];
    eu_auth_token_new(client_id);
    eu_auth_token_new(secret);
    eu_auth_token_hash(secret, secret_hash);
    const char *p[] = {name, website, uris, scopes, client_id, secret_hash};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_APP_CREATE], 6, p, on_app_created,
                eu_arena_strdup(req->arena, secret));
}

/* ------------------------------- GET /api/v1/apps/verify_credentials */

static void
on_app_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) != 1) {
        eu_req_reply_error(req, 401, "The access token is invalid");
        return;
    }
    eu_req_reply_json(req, 200, application_json(res));
}

static void
apps_verify(struct eu_req *req)
{
    const char *id = eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.app_id);
    const char *p[] = {id};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_APP_VERIFY], 1, p, on_app_loaded, NULL);
}

/* ------------------------- GET /.well-known/oauth-authorization-server */

static void
metadata(struct eu_req *req)
{
    const char *base = eu_req_base_url(req);
    struct eu_arena *a = req->arena;
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:[s], s:[s,s,s], s:[s,s,s],"
                  " s:[s,s], s:[s]}",
                  "issuer", eu_arena_sprintf(a, "%s/", base), "service_documentation",
                  "https://docs.joinmastodon.org/", "authorization_endpoint",
                  eu_arena_sprintf(a, "%s/oauth/authorize", base), "token_endpoint",
                  eu_arena_sprintf(a, "%s/oauth/token", base), "revocation_endpoint",
                  eu_arena_sprintf(a, "%s/oauth/revoke", base), "app_registration_endpoint",
                  eu_arena_sprintf(a, "%s/api/v1/apps", base), "response_types_supported", "code",
                  "response_modes_supported", "query", "fragment", "form_post",
                  "grant_types_supported", "authorization_code", "password", "client_credentials",
                  "token_endpoint_auth_methods_supported", "client_secret_basic",
                  "client_secret_post", "code_challenge_methods_supported", "S256");
    json_t *arr = json_array();
    for (int i = 0; eu_auth_known_scopes[i]; i++)
        json_array_append_new(arr, json_string(eu_auth_known_scopes[i]));
    json_object_set_new(o, "scopes_supported", arr);
    eu_req_reply_json(req, 200, o);
}

/* ---------------------------------------------------- HTML pages */

/* The parameters of an authorization request, carried from page to page in
 * hidden fields. */
struct authz {
    const char *client_id, *redirect_uri, *response_type, *scope, *state;
    const char *code_challenge, *code_challenge_method;
    bool force_login;
};

/* Everything a sign-in / consent request learns from the database. */
struct flow {
    struct eu_req *req;
    json_t *params;
    struct authz a;
    int64_t app_id;
    const char *app_name, *app_scopes, *app_redirects;
    bool have_session;
    int64_t user_id; /* 0: the session has not signed in */
    const char *csrf, *username;
    /* sign-in */
    const char *login;
    char *password; /* malloc'd; wiped and freed after hashing */
    char *stored_hash;
    const char *stored;          /* the user's password hash (arena), NULL for nobody */
    const char *gate_client;     /* the address holding a pwgate slot (arena) */
    eu_cpupool_done_cb verified; /* runs after the check, once the slot is given back */
    bool approved, suspended;
    int verify_rc;
    /* a failed sign-in, answered once the session has been rotated */
    int fail_status;
    const char *fail_message;
};

static void
set_html_headers(struct eu_req *req)
{
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_add_header(req, "X-Frame-Options", "DENY");
    eu_req_add_header(req, "X-Content-Type-Options", "nosniff");
    eu_req_add_header(req, "Referrer-Policy", "same-origin");
    eu_req_add_header(req, "Content-Security-Policy",
                      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
                      "base-uri 'none'");
}

void
eu_web_reply_page(struct eu_req *req, int status, const char *title, const char *body)
{
    set_html_headers(req);
    const char *html = eu_arena_sprintf(
        req->arena,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<title>%s - %s</title><style>body{font-family:sans-serif;max-width:40em;margin:2em "
        "auto;padding:0 1em;line-height:1.5}input,button{font-size:1em;padding:.4em;margin:.2em "
        "0}label{display:block}.error{color:#b00}code,.code{font-family:monospace}"
        ".status{border-bottom:1px solid #ccc;padding:1em 0}</style></head>"
        "<body>%s</body></html>\n",
        eu_html_escape(req, title), eu_html_escape(req, req->tenant ? req->tenant->title : "Eunha"),
        body);
    eu_req_reply_raw(req, status, "text/html; charset=utf-8", html, strlen(html));
}

/* Whether the client asked for JSON rather than a page (API clients that
 * call /oauth/authorize directly to probe it). */
static bool
wants_json(struct eu_req *req)
{
    const char *accept = eu_req_header(req, "Accept");
    return accept && strstr(accept, "application/json") && !strstr(accept, "text/html");
}

/* An error that cannot go back to the client (unknown client, bad redirect
 * URI): shown to the user. */
static void
reply_authz_error_page(struct eu_req *req, int status, const char *code, const char *desc)
{
    if (wants_json(req)) {
        reply_oauth_error(req, status, code, desc);
        return;
    }
    const char *body = eu_arena_sprintf(req->arena,
                                        "<h1>An error has occurred</h1><p class=\"error\">%s</p>"
                                        "<p><code>%s</code></p>",
                                        eu_html_escape(req, desc), eu_html_escape(req, code));
    eu_web_reply_page(req, status, "Authorization error", body);
}

static const char *
hidden(struct eu_req *req, const char *name, const char *value)
{
    if (!value)
        return "";
    return eu_arena_sprintf(req->arena, "<input type=\"hidden\" name=\"%s\" value=\"%s\">", name,
                            eu_html_escape(req, value));
}

static const char *
hidden_fields(struct flow *f)
{
    struct eu_req *req = f->req;
    return eu_arena_sprintf(
        req->arena, "%s%s%s%s%s%s%s%s", hidden(req, "authenticity_token", f->csrf),
        hidden(req, "client_id", f->a.client_id), hidden(req, "redirect_uri", f->a.redirect_uri),
        hidden(req, "response_type", f->a.response_type), hidden(req, "scope", f->a.scope),
        hidden(req, "state", f->a.state), hidden(req, "code_challenge", f->a.code_challenge),
        hidden(req, "code_challenge_method", f->a.code_challenge_method));
}

/* The authorize URL of this request, for going back to it after sign-in. */
static const char *
authorize_url(struct flow *f)
{
    struct eu_arena *a = f->req->arena;
    const char *names[] = {"client_id", "redirect_uri",   "response_type",        "scope",
                           "state",     "code_challenge", "code_challenge_method"};
    const char *vals[] = {
        f->a.client_id, f->a.redirect_uri,   f->a.response_type,        f->a.scope,
        f->a.state,     f->a.code_challenge, f->a.code_challenge_method};
    const char *url = "/oauth/authorize";
    char sep = '?';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!vals[i])
            continue;
        url = eu_arena_sprintf(a, "%s%c%s=%s", url, sep, names[i], url_encode(a, vals[i]));
        sep = '&';
    }
    return url;
}

static void
reply_sign_in(struct flow *f, int status, const char *error)
{
    struct eu_req *req = f->req;
    const char *body =
        eu_arena_sprintf(req->arena,
                         "<h1>Sign in</h1><p>Sign in to %s to authorize <strong>%s</strong>.</p>%s"
                         "<form method=\"post\" action=\"/auth/sign_in\">%s"
                         "<label>E-mail address or username <input type=\"text\" name=\"email\" "
                         "autocomplete=\"username\" required value=\"%s\"></label>"
                         "<label>Password <input type=\"password\" name=\"password\" "
                         "autocomplete=\"current-password\" required></label>"
                         "<button type=\"submit\">Sign in</button></form>",
                         eu_html_escape(req, req->tenant->title), eu_html_escape(req, f->app_name),
                         error ? eu_arena_sprintf(req->arena, "<p class=\"error\">%s</p>",
                                                  eu_html_escape(req, error))
                               : "",
                         hidden_fields(f), eu_html_escape(req, f->login ? f->login : ""));
    eu_web_reply_page(req, status, "Sign in", body);
}

static void
reply_consent(struct flow *f)
{
    struct eu_req *req = f->req;
    const char *items = "";
    for (const char *p = f->a.scope; *p;) {
        size_t len = strcspn(p, " ");
        const char *one = eu_arena_strndup(req->arena, p, len);
        items = eu_arena_sprintf(req->arena, "%s<li><code>%s</code></li>", items,
                                 eu_html_escape(req, one));
        p += len;
        while (*p == ' ')
            p++;
    }
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>Authorization required</h1><p><strong>%s</strong> would like permission to access "
        "your account <strong>@%s</strong>. It is a third-party application; if you do not "
        "trust it, do not authorize it.</p><p>It asks for:</p><ul>%s</ul>"
        "<form method=\"post\" action=\"/oauth/authorize\">%s"
        "<button type=\"submit\" name=\"decision\" value=\"approve\">Authorize</button> "
        "<button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
        eu_html_escape(req, f->app_name), eu_html_escape(req, f->username ? f->username : ""),
        items, hidden_fields(f));
    eu_web_reply_page(req, 200, "Authorization required", body);
}

/* Sends the browser back to the client: redirect_uri with the query
 * parameters appended (after any it already has), or, for the out-of-band
 * URI, a page showing them. */
static void
redirect_to_client(struct flow *f, const char *code, const char *error, const char *desc)
{
    struct eu_req *req = f->req;
    struct eu_arena *a = req->arena;
    if (strcmp(f->a.redirect_uri, OOB_URI) == 0) {
        if (code) {
            const char *body = eu_arena_sprintf(
                a,
                "<h1>Authorization code</h1><p>Copy this authorization code and paste it into "
                "the application.</p><p><input class=\"code\" type=\"text\" readonly size=\"50\" "
                "value=\"%s\"></p>",
                eu_html_escape(req, code));
            eu_web_reply_page(req, 200, "Authorization code", body);
        } else {
            reply_authz_error_page(req, 400, error, desc);
        }
        return;
    }
    const char *url = f->a.redirect_uri;
    char sep = strchr(url, '?') ? '&' : '?';
    if (code)
        url = eu_arena_sprintf(a, "%s%ccode=%s", url, sep, url_encode(a, code));
    else
        url = eu_arena_sprintf(a, "%s%cerror=%s&error_description=%s", url, sep,
                               url_encode(a, error), url_encode(a, desc));
    if (f->a.state)
        url = eu_arena_sprintf(a, "%s&state=%s", url, url_encode(a, f->a.state));
    eu_req_add_header(req, "Location", url);
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

static void
read_authz(struct eu_req *req, json_t *params, struct authz *a)
{
    a->client_id = str_or_null(eu_param_str(params, "client_id"));
    a->redirect_uri = str_or_null(eu_param_str(params, "redirect_uri"));
    a->response_type = str_or_null(eu_param_str(params, "response_type"));
    a->scope = str_or_null(eu_param_str(params, "scope"));
    a->state = str_or_null(eu_param_str(params, "state"));
    a->code_challenge = str_or_null(eu_param_str(params, "code_challenge"));
    a->code_challenge_method = str_or_null(eu_param_str(params, "code_challenge_method"));
    bool force = false;
    eu_param_bool(params, "force_login", &force);
    a->force_login = force;
}

/* The session cookie's value, or "" (never matches a stored hash). */
static const char *
session_cookie(struct eu_req *req)
{
    const char *h = eu_req_header(req, "Cookie");
    size_t nlen = strlen(SESSION_COOKIE);
    for (const char *p = h; p && *p;) {
        while (*p == ' ' || *p == ';')
            p++;
        if (strncmp(p, SESSION_COOKIE, nlen) == 0 && p[nlen] == '=') {
            const char *v = p + nlen + 1;
            return eu_arena_strndup(req->arena, v, strcspn(v, ";"));
        }
        p += strcspn(p, ";");
    }
    return "";
}

static void
set_session_cookie(struct eu_req *req, const char *token)
{
    eu_req_add_header(req, "Set-Cookie",
                      eu_arena_sprintf(req->arena, "%s=%s; Path=/; HttpOnly; SameSite=Lax%s",
                                       SESSION_COOKIE, token,
                                       strcmp(req->scheme, "https") == 0 ? "; Secure" : ""));
}

/*
 * Checks the request against its app (already loaded). Answers the request
 * itself and returns false on an error: the ones that cannot be sent to
 * the client are shown as a page, the others go back to redirect_uri.
 */
static bool
validate_authz(struct flow *f)
{
    struct eu_req *req = f->req;
    if (!f->app_id) {
        reply_authz_error_page(req, 401, "invalid_client", invalid_client_desc);
        return false;
    }
    /* With one registered URI, leaving redirect_uri out means that one. */
    if (!f->a.redirect_uri && !strchr(f->app_redirects, '\n'))
        f->a.redirect_uri = f->app_redirects;
    /* Apps registered before such URIs were refused still hold them; an
     * error page is all they get, never a redirect. */
    if (!f->a.redirect_uri || !redirect_uri_is_registered(f->app_redirects, f->a.redirect_uri) ||
        redirect_uri_is_forbidden(f->a.redirect_uri)) {
        reply_authz_error_page(req, 400, "invalid_redirect_uri",
                               "The requested redirect uri is malformed or doesn't match client "
                               "redirect URI.");
        return false;
    }
    if (!f->a.response_type || strcmp(f->a.response_type, "code") != 0) {
        redirect_to_client(f, NULL, "unsupported_response_type",
                           "The authorization server does not support this response type.");
        return false;
    }
    const char *scope = normalize_scopes(req->arena, f->a.scope ? f->a.scope : "read");
    if (!scope || !scopes_within(scope, f->app_scopes)) {
        redirect_to_client(f, NULL, "invalid_scope", invalid_scope_desc);
        return false;
    }
    f->a.scope = scope;
    if (f->a.code_challenge) {
        /* No method means "plain" (RFC 7636 4.3), refused like it: the
         * metadata offers S256 alone, as Mastodon does. */
        size_t n = strlen(f->a.code_challenge);
        if (!f->a.code_challenge_method || strcmp(f->a.code_challenge_method, "S256") != 0 ||
            n < 43 || n > 128) {
            redirect_to_client(f, NULL, "invalid_request",
                               "The code challenge or its method is not supported.");
            return false;
        }
    } else {
        f->a.code_challenge_method = NULL;
    }
    return true;
}

/* Fills f from a row of OAUTH_AUTHZ_LOAD. */
static void
read_authz_row(struct flow *f, const PGresult *res)
{
    struct eu_arena *a = f->req->arena;
    if (PQntuples(res) != 1)
        return;
    f->app_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    f->app_name = eu_arena_strdup(a, PQgetvalue(res, 0, 1));
    f->app_scopes = eu_arena_strdup(a, PQgetvalue(res, 0, 2));
    f->app_redirects = eu_arena_strdup(a, PQgetvalue(res, 0, 3));
    f->have_session = !PQgetisnull(res, 0, 4);
    if (f->have_session) {
        f->user_id = PQgetisnull(res, 0, 5) ? 0 : strtoll(PQgetvalue(res, 0, 5), NULL, 10);
        f->csrf = eu_arena_strdup(a, PQgetvalue(res, 0, 6));
        f->username = PQgetisnull(res, 0, 7) ? NULL : eu_arena_strdup(a, PQgetvalue(res, 0, 7));
    }
}

/* Loads app and session for the request's authorize parameters; calls cb. */
static struct flow *
flow_start(struct eu_req *req, eu_req_rows_cb cb)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return NULL;
    }
    struct flow *f = eu_arena_calloc(req->arena, sizeof(*f));
    f->req = req;
    f->params = params;
    read_authz(req, params, &f->a);
    if (!f->a.client_id) {
        reply_authz_error_page(req, 401, "invalid_client", invalid_client_desc);
        return NULL;
    }
    char hash[65];
    eu_auth_token_hash(session_cookie(req), hash);
    const char *p[] = {f->a.client_id, hash};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_AUTHZ_LOAD], 2, p, cb, f);
    return f;
}

static void
on_anon_session(struct eu_req *req, PGresult *res, void *arg)
{
    struct flow *f = arg;
    reply_sign_in(f, 200, NULL);
}

/* Gives a browser without a session an anonymous one, so the sign-in form
 * can carry a CSRF token bound to it. */
static void
start_anonymous_session(struct flow *f)
{
    struct eu_req *req = f->req;
    char token[EU_AUTH_TOKEN_LEN], hash[65], csrf[EU_AUTH_TOKEN_LEN];
    eu_auth_token_new(token);
    eu_auth_token_hash(token, hash);
    eu_auth_token_new(csrf);
    f->csrf = eu_arena_strdup(req->arena, csrf);
    set_session_cookie(req, token);
    const char *p[] = {hash, csrf};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_SESSION_ANONYMOUS], 2, p, on_anon_session, f);
}

/* ------------------------------------------------ GET /oauth/authorize */

static void
on_authorize_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct flow *f = arg;
    read_authz_row(f, res);
    if (!validate_authz(f))
        return;
    if (!f->have_session) {
        start_anonymous_session(f);
        return;
    }
    if (!f->user_id || f->a.force_login) {
        reply_sign_in(f, 200, NULL);
        return;
    }
    reply_consent(f);
}

static void
authorize_show(struct eu_req *req)
{
    flow_start(req, on_authorize_loaded);
}

/* ------------------------------------------------ POST /auth/sign_in */

/* The login the form names (arena), or NULL. */
static const char *
form_login(json_t *params)
{
    const char *login = str_or_null(eu_param_str(params, "email"));
    return login ? login : str_or_null(eu_param_str(params, "username"));
}

/* The account a sign-in attempt counts against (arena): "u<id>" once the
 * lookup found the user, so its e-mail address and username share one
 * counter; for a login that names nobody a hash of it folded as the lookup
 * folds it, so guesses at absent logins are throttled alike (no answer
 * tells which exist), a long login makes no long key and no address is
 * kept in Redis. */
static const char *
account_key(struct eu_req *req, int64_t user_id, const char *login)
{
    if (user_id)
        return eu_arena_sprintf(req->arena, "u%lld", (long long)user_id);
    char *folded = eu_arena_strdup(req->arena, login);
    for (char *c = folded; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    char hash[65];
    eu_auth_token_hash(folded, hash);
    return eu_arena_sprintf(req->arena, "login:%s", hash);
}

/* Counts one sign-in attempt, by the HTML form or the password grant
 * alike, against the client's IP, then calls done as eu_ratelimit_check()
 * does. The account's counters come after the lookup (count_account). */
static void
count_sign_in(struct eu_req *req, eu_ratelimit_done_cb done, void *arg)
{
    const struct eu_config *cfg = req->app->cfg;
    struct eu_ratelimit ip = {"signin", eu_ratelimit_client(req), cfg->sign_ins_per_ip_per_5min,
                              SIGN_IN_IP_PERIOD_S};
    eu_ratelimit_check(req, &ip, 1, done, arg);
}

/* The Redis set of the addresses account signed in from (arena). */
static const char *
known_key(struct eu_req *req, const char *account)
{
    return eu_arena_sprintf(req->arena, "%ssignin_known:%s", req->tenant->key_prefix, account);
}

struct account_count {
    struct eu_req *req;
    const char *account, *client;
    eu_ratelimit_done_cb done;
    void *arg;
};

static void
on_known_checked(struct redisReply *reply, void *arg)
{
    struct account_count *c = arg;
    struct eu_req *req = c->req;
    eu_req_enter(req);
    const struct eu_config *cfg = req->app->cfg;
    /* Redis down (NULL): counting fails open below as well. */
    bool known = reply && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
    int per = cfg->sign_ins_per_login_per_hour;
    struct eu_ratelimit limits[2] = {
        {"signin", eu_arena_sprintf(req->arena, "%s:%s", c->account, c->client), per,
         SIGN_IN_LOGIN_PERIOD_S},
        {"signin", c->account, per > 0 ? per * SIGN_IN_ACCOUNT_FACTOR : 0, SIGN_IN_LOGIN_PERIOD_S},
    };
    eu_ratelimit_check(req, limits, known ? 1 : 2, c->done, c->arg);
}

/* Counts one attempt on the account the lookup found (user_id, or 0 and
 * the login as typed) from this client: per account and address together,
 * and, unless the account signed in from this address before, per account
 * in all. Then done as eu_ratelimit_check() does. */
static void
count_account(struct eu_req *req, int64_t user_id, const char *login, eu_ratelimit_done_cb done,
              void *arg)
{
    struct account_count *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->req = req;
    c->account = account_key(req, user_id, login);
    c->client = eu_ratelimit_client(req);
    c->done = done;
    c->arg = arg;
    if (req->app->cfg->sign_ins_per_login_per_hour <= 0) {
        done(req, 0, arg);
        return;
    }
    const char *argv[] = {"SISMEMBER", known_key(req, c->account), c->client};
    eu_redis_command(req->app->redis, on_known_checked, c, 3, argv, NULL);
}

/* After a successful sign-in: this address is the owner's, and the
 * account's cap over all addresses no longer applies to it. */
static void
remember_address(struct eu_req *req, int64_t user_id)
{
    const char *key = known_key(req, account_key(req, user_id, NULL));
    const char *add[] = {"SADD", key, eu_ratelimit_client(req)};
    eu_redis_command(req->app->redis, NULL, NULL, 3, add, NULL);
    char ttl[16];
    snprintf(ttl, sizeof(ttl), "%d", SIGN_IN_KNOWN_TTL_S);
    const char *expire[] = {"EXPIRE", key, ttl};
    eu_redis_command(req->app->redis, NULL, NULL, 3, expire, NULL);
}

static bool
csrf_ok(struct flow *f)
{
    return f->have_session && f->csrf &&
           secret_equal(eu_param_str(f->params, "authenticity_token"), f->csrf);
}

static void
reply_csrf_failure(struct flow *f)
{
    struct eu_req *req = f->req;
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>The form has expired</h1><p class=\"error\">Invalid authenticity token: the page "
        "was open too long or came from elsewhere.</p><p><a href=\"%s\">Start again</a></p>",
        eu_html_escape(req, authorize_url(f)));
    eu_web_reply_page(req, 422, "Invalid authenticity token", body);
}

static void
on_signed_in(struct eu_req *req, PGresult *res, void *arg)
{
    struct flow *f = arg;
    /* Post/redirect/get: the consent page is the authorize URL again. */
    eu_req_add_header(req, "Location", authorize_url(f));
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

/* The tenant or this client already has its share of password checks in
 * flight (429), or the whole pool is full (503): answered at once rather
 * than queued behind them. */
static void
reply_cpu_busy(struct eu_req *req, int status)
{
    eu_req_add_header(req, "Retry-After", "1");
    eu_req_reply_error(req, status,
                       "Too many sign-in attempts are being checked; try again shortly");
}

static void
verify_work(void *arg)
{
    struct flow *f = arg;
    if (f->stored_hash) {
        f->verify_rc = crypto_pwhash_str_verify(f->stored_hash, f->password, strlen(f->password));
    } else {
        /* No such user: hash anyway, so the answer takes as long as for a
         * real one and does not tell which logins exist. */
        char unused[crypto_pwhash_STRBYTES];
        if (crypto_pwhash_str_alg(unused, f->password, strlen(f->password), PWHASH_OPS, PWHASH_MEM,
                                  crypto_pwhash_ALG_ARGON2ID13) == 0)
            sodium_memzero(unused, sizeof(unused));
        f->verify_rc = -1;
    }
    sodium_memzero(f->password, strlen(f->password));
}

static void
free_password(struct flow *f)
{
    if (f->password)
        sodium_memzero(f->password, strlen(f->password));
    free(f->password);
    f->password = NULL;
    free(f->stored_hash);
    f->stored_hash = NULL;
}

/* Gives the browser a new session id (cookie set on the reply) and f a new
 * CSRF token; old_hash gets the hash of the id being replaced, hash that of
 * the new one, for the statement that moves the row. */
static void
renew_session(struct flow *f, char old_hash[65], char hash[65])
{
    struct eu_req *req = f->req;
    char token[EU_AUTH_TOKEN_LEN], csrf[EU_AUTH_TOKEN_LEN];
    eu_auth_token_hash(session_cookie(req), old_hash);
    eu_auth_token_new(token);
    eu_auth_token_hash(token, hash);
    eu_auth_token_new(csrf);
    f->csrf = eu_arena_strdup(req->arena, csrf);
    set_session_cookie(req, token);
}

static void
on_session_rotated(struct eu_req *req, PGresult *res, void *arg)
{
    struct flow *f = arg;
    reply_sign_in(f, f->fail_status, f->fail_message);
}

/*
 * Answers a failed attempt with the form again, under a new session id and
 * CSRF token: the request that failed cannot be sent again as it was (a
 * replayed or resubmitted form), and a pre-sign-in session id someone else
 * has seen stops working at its owner's first failure.
 */
static void
fail_sign_in(struct flow *f, int status, const char *message)
{
    char old_hash[65], hash[65];
    renew_session(f, old_hash, hash);
    f->fail_status = status;
    f->fail_message = message;
    const char *p[] = {old_hash, hash, f->csrf};
    eu_req_stmt(f->req, &eu_oauth_sql[OAUTH_SESSION_ROTATE], 3, p, on_session_rotated, f);
}

static void
sign_in_verified(void *arg)
{
    struct flow *f = arg;
    struct eu_req *req = f->req;
    free_password(f);
    eu_req_enter(req);
    if (f->verify_rc != 0 || !f->user_id) {
        fail_sign_in(f, 401, "Invalid e-mail address or password.");
        return;
    }
    if (f->suspended) {
        fail_sign_in(f, 403, "Your account has been suspended.");
        return;
    }
    if (!f->approved) {
        fail_sign_in(f, 403, "Your account is pending review by the staff.");
        return;
    }
    /* A new session id and CSRF token at sign-in, so an id planted before
     * it (session fixation) is worth nothing. */
    remember_address(req, f->user_id);
    char old_hash[65], hash[65];
    renew_session(f, old_hash, hash);
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)f->user_id);
    const char *p[] = {old_hash, uid, hash, f->csrf};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_SIGN_IN], 4, p, on_signed_in, f);
}

static void
on_verify_done(void *arg)
{
    struct flow *f = arg;
    eu_pwgate_leave(f->req->tenant->id, f->gate_client);
    f->verified(f);
}

/* Runs the password check on the CPU pool; stored is NULL for an unknown
 * login (see verify_work). The gate (pwgate_internal.h) comes first, so a
 * flood over one tenant or from one address, however many tenants it
 * spreads over, is refused here and never queues in front of others. */
static void
verify_password(struct flow *f, const char *stored, eu_cpupool_done_cb done)
{
    struct eu_req *req = f->req;
    const struct eu_config *cfg = req->app->cfg;
    f->gate_client = eu_ratelimit_client(req);
    if (!eu_pwgate_enter(req->tenant->id, f->gate_client, cfg->cpu_jobs_per_tenant,
                         cfg->cpu_threads)) {
        free_password(f);
        reply_cpu_busy(req, 429);
        return;
    }
    f->stored_hash = stored ? strdup(stored) : NULL;
    f->verified = done;
    if (eu_cpupool_try_submit(req->app->cpu, req->tenant->id, &req->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, verify_work,
                              on_verify_done, f) < 0) {
        eu_pwgate_leave(req->tenant->id, f->gate_client);
        free_password(f);
        reply_cpu_busy(req, 503);
    }
}

/* Fills the user part of f from an OAUTH_USER_BY_LOGIN row at column col; the
 * stored hash goes to *stored (arena). */
static void
read_user_row(struct flow *f, const PGresult *res, int col, const char **stored)
{
    *stored = NULL;
    if (PQntuples(res) < 1 || PQgetisnull(res, 0, col))
        return;
    f->user_id = strtoll(PQgetvalue(res, 0, col), NULL, 10);
    *stored = eu_arena_strdup(f->req->arena, PQgetvalue(res, 0, col + 1));
    f->approved = strcmp(PQgetvalue(res, 0, col + 2), "t") == 0;
    f->suspended = strcmp(PQgetvalue(res, 0, col + 3), "t") == 0;
    f->username = eu_arena_strdup(f->req->arena, PQgetvalue(res, 0, col + 4));
}

static void
on_flow_freed(void *data)
{
    free_password(data);
}

/* Copies password into f and looks the user of f->login up; cb gets the
 * OAUTH_USER_BY_LOGIN row (or none). The copy is wiped and freed with the
 * request at the latest, so a failed statement, answered by eu_req_stmt(),
 * leaves nothing behind. */
static void
find_user(struct flow *f, const char *password, eu_req_rows_cb cb, void *arg)
{
    f->password = strdup(password);
    eu_arena_on_free(f->req->arena, on_flow_freed, f);
    const char *p[] = {f->login};
    eu_req_stmt(f->req, &eu_oauth_sql[OAUTH_USER_BY_LOGIN], 1, p, cb, arg);
}

static void reply_sign_in_throttled(struct eu_req *req, int retry_after_s);

static void
on_sign_in_account_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct flow *f = arg;
    if (retry_after_s > 0) {
        free_password(f);
        reply_sign_in_throttled(req, retry_after_s);
        return;
    }
    verify_password(f, f->stored, sign_in_verified);
}

static void
on_sign_in_user(struct eu_req *req, PGresult *res, void *arg)
{
    struct flow *f = arg;
    const char *stored;
    read_user_row(f, res, 0, &stored);
    f->stored = stored;
    count_account(f->req, f->user_id, f->login, on_sign_in_account_counted, f);
}

static void
on_sign_in_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct flow *f = arg;
    read_authz_row(f, res);
    if (!validate_authz(f))
        return;
    if (!csrf_ok(f)) {
        reply_csrf_failure(f);
        return;
    }
    f->user_id = 0;
    f->login = form_login(f->params);
    const char *password = eu_param_str(f->params, "password");
    if (!f->login || !password || !*password || strlen(password) > 1024) {
        fail_sign_in(f, 401, "Invalid e-mail address or password.");
        return;
    }
    find_user(f, password, on_sign_in_user, f);
}

/* Over a sign-in limit: a page saying so rather than the form, which would
 * only be refused again, with the way back to it. Retry-After is set. */
static void
reply_sign_in_throttled(struct eu_req *req, int retry_after_s)
{
    if (wants_json(req)) {
        eu_req_reply_error(req, 429, "Too many requests");
        return;
    }
    struct flow f = {.req = req};
    read_authz(req, eu_req_params(req, NULL), &f.a);
    int minutes = (retry_after_s + 59) / 60;
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1>Too many sign-in attempts</h1><p class=\"error\">Too many sign-in attempts. Try "
        "again in %d minute%s.</p><p><a href=\"%s\">Back to sign-in</a></p>",
        minutes, minutes == 1 ? "" : "s", eu_html_escape(req, authorize_url(&f)));
    eu_web_reply_page(req, 429, "Too many sign-in attempts", body);
}

static void
on_sign_in_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    if (retry_after_s > 0) {
        reply_sign_in_throttled(req, retry_after_s);
        return;
    }
    flow_start(req, on_sign_in_loaded);
}

/* Counted before the session, the CSRF token or the login is looked at, so
 * a throttled client costs one Redis round trip and nothing else. */
static void
sign_in(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    count_sign_in(req, on_sign_in_counted, NULL);
}

/* ------------------------------------------------ POST /oauth/authorize */

static void
on_grant_created(struct eu_req *req, PGresult *res, void *arg)
{
    struct flow *f = arg;
    redirect_to_client(f, f->login /* the code */, NULL, NULL);
}

static void
on_decide_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct flow *f = arg;
    read_authz_row(f, res);
    if (!validate_authz(f))
        return;
    if (!csrf_ok(f)) {
        reply_csrf_failure(f);
        return;
    }
    if (!f->user_id) {
        reply_sign_in(f, 200, NULL);
        return;
    }
    const char *decision = eu_param_str(f->params, "decision");
    if (!decision || strcmp(decision, "approve") != 0) {
        redirect_to_client(f, NULL, "access_denied",
                           "The resource owner or authorization server denied the request.");
        return;
    }
    char code[EU_AUTH_TOKEN_LEN], hash[65];
    eu_auth_token_new(code);
    eu_auth_token_hash(code, hash);
    f->login = eu_arena_strdup(req->arena, code);
    const char *app = eu_arena_sprintf(req->arena, "%lld", (long long)f->app_id);
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)f->user_id);
    const char *p[] = {app,
                       uid,
                       hash,
                       f->a.redirect_uri,
                       f->a.scope,
                       f->a.code_challenge,
                       f->a.code_challenge_method};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_GRANT_CREATE], 7, p, on_grant_created, f);
}

static void
authorize_decide(struct eu_req *req)
{
    flow_start(req, on_decide_loaded);
}

/* ------------------------------------------------------ POST /oauth/token */

/* A token request: the client, the grant and what it yields. */
struct tok {
    struct flow f; /* f.req, f.params, f.app_id, f.app_scopes, user fields */
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
    *id = str_or_null(eu_param_str(params, "client_id"));
    *secret = str_or_null(eu_param_str(params, "client_secret"));
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
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_TOKEN_CREATE], 5, p, on_token_created, t);
}

/* The requested scope (default "read") within the app's; false after
 * answering invalid_scope. */
static bool
take_scope(struct tok *t)
{
    const char *want = str_or_null(eu_param_str(t->f.params, "scope"));
    t->scope = normalize_scopes(t->f.req->arena, want ? want : "read");
    if (!t->scope || !scopes_within(t->scope, t->f.app_scopes)) {
        reply_oauth_error(t->f.req, 400, "invalid_scope", invalid_scope_desc);
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
    return secret_equal(challenge, enc);
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
    reply_oauth_error(req, 400, "invalid_grant", invalid_grant_desc);
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
        eu_req_stmt(req, &eu_oauth_sql[OAUTH_CODE_REPLAYED], 2, p, on_code_replayed, t);
        return;
    }
    /* RFC 6749 4.1.3: the URI the code was sent to, exactly (authorize
     * always stores one, filling in a sole registered URI). */
    const char *redirect = str_or_null(eu_param_str(t->f.params, "redirect_uri"));
    if (!PQgetisnull(res, 0, 1) && (!redirect || strcmp(redirect, PQgetvalue(res, 0, 1)) != 0)) {
        reply_oauth_error(req, 400, "invalid_grant", invalid_grant_desc);
        return;
    }
    bool has_challenge = !PQgetisnull(res, 0, 3);
    if (has_challenge && !pkce_ok(PQgetvalue(res, 0, 4), PQgetvalue(res, 0, 3),
                                  str_or_null(eu_param_str(t->f.params, "code_verifier")))) {
        reply_oauth_error(req, 400, "invalid_grant", invalid_grant_desc);
        return;
    }
    /* Without PKCE the client must have proved itself with its secret. */
    if (!has_challenge && !t->client_authenticated) {
        reply_oauth_error(req, 401, "invalid_client", invalid_client_desc);
        return;
    }
    if (strcmp(PQgetvalue(res, 0, 5), "t") != 0) {
        reply_oauth_error(req, 400, "invalid_grant", invalid_grant_desc);
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
    const char *code = str_or_null(eu_param_str(t->f.params, "code"));
    if (!code) {
        reply_oauth_error(req, 400, "invalid_request", "Missing required parameter: code.");
        return;
    }
    /* Checked before the code is spent, so a client that forgot it can
     * retry; a wrong one is refused after (invalid_grant). */
    if (!str_or_null(eu_param_str(t->f.params, "redirect_uri"))) {
        reply_oauth_error(req, 400, "invalid_request", "Missing required parameter: redirect_uri.");
        return;
    }
    eu_auth_token_hash(code, t->code_hash);
    const char *app = eu_arena_sprintf(req->arena, "%lld", (long long)t->f.app_id);
    const char *p[] = {t->code_hash, app};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_CODE_REDEEM], 2, p, on_code_redeemed, t);
}

static void
password_verified(void *arg)
{
    struct tok *t = arg;
    struct eu_req *req = t->f.req;
    free_password(&t->f);
    eu_req_enter(req);
    if (t->f.verify_rc != 0 || !t->f.user_id || t->f.suspended || !t->f.approved) {
        reply_oauth_error(req, 400, "invalid_grant", invalid_grant_desc);
        return;
    }
    remember_address(req, t->f.user_id);
    issue_token(t, t->f.user_id);
}

static void
on_password_account_counted(struct eu_req *req, int retry_after_s, void *arg)
{
    struct tok *t = arg;
    if (retry_after_s > 0) {
        free_password(&t->f);
        eu_req_reply_error(req, 429, "Too many requests");
        return;
    }
    verify_password(&t->f, t->f.stored, password_verified);
}

static void
on_password_user(struct eu_req *req, PGresult *res, void *arg)
{
    struct tok *t = arg;
    const char *stored;
    read_user_row(&t->f, res, 0, &stored);
    t->f.stored = stored;
    count_account(t->f.req, t->f.user_id, t->f.login, on_password_account_counted, t);
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
    find_user(&t->f, eu_param_str(t->f.params, "password"), on_password_user, t);
}

static void
grant_password(struct tok *t)
{
    struct eu_req *req = t->f.req;
    const char *login = str_or_null(eu_param_str(t->f.params, "username"));
    const char *password = str_or_null(eu_param_str(t->f.params, "password"));
    if (!login || !password) {
        reply_oauth_error(req, 400, "invalid_request",
                          login ? "Missing required parameter: password."
                                : "Missing required parameter: username.");
        return;
    }
    if (!t->client_authenticated) {
        reply_oauth_error(req, 401, "invalid_client", invalid_client_desc);
        return;
    }
    if (strlen(password) > 1024) {
        reply_oauth_error(req, 400, "invalid_grant", invalid_grant_desc);
        return;
    }
    if (!take_scope(t))
        return;
    t->f.login = login;
    count_sign_in(req, on_password_counted, t);
}

static void
on_token_client(struct eu_req *req, PGresult *res, void *arg)
{
    struct tok *t = arg;
    if (PQntuples(res) != 1) {
        reply_oauth_error(req, 401, "invalid_client", invalid_client_desc);
        return;
    }
    t->f.app_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    t->f.app_scopes = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 2));
    t->client_authenticated = client_secret_matches(t->client_secret, PQgetvalue(res, 0, 1));
    /* A wrong secret is always an error; a missing one only passes for a
     * code grant with PKCE (checked once the code is read). */
    if (t->client_secret && !t->client_authenticated) {
        reply_oauth_error(req, 401, "invalid_client", invalid_client_desc);
        return;
    }
    if (strcmp(t->grant_type, "authorization_code") == 0) {
        grant_authorization_code(t);
    } else if (strcmp(t->grant_type, "password") == 0) {
        grant_password(t);
    } else {
        if (!t->client_authenticated) {
            reply_oauth_error(req, 401, "invalid_client", invalid_client_desc);
            return;
        }
        if (take_scope(t))
            issue_token(t, 0);
    }
}

static void
token(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        reply_oauth_error(req, 400, "invalid_request", err.message);
        return;
    }
    struct tok *t = eu_arena_calloc(req->arena, sizeof(*t));
    t->f.req = req;
    t->f.params = params;
    t->grant_type = str_or_null(eu_param_str(params, "grant_type"));
    if (!t->grant_type) {
        reply_oauth_error(req, 400, "invalid_request", "Missing required parameter: grant_type.");
        return;
    }
    if (strcmp(t->grant_type, "authorization_code") != 0 &&
        strcmp(t->grant_type, "password") != 0 &&
        strcmp(t->grant_type, "client_credentials") != 0) {
        reply_oauth_error(req, 400, "unsupported_grant_type",
                          "The authorization grant type is not supported by the authorization "
                          "server.");
        return;
    }
    read_client(req, params, &t->client_id, &t->client_secret);
    if (!t->client_id) {
        reply_oauth_error(req, 401, "invalid_client", invalid_client_desc);
        return;
    }
    const char *p[] = {t->client_id};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_TOKEN_CLIENT], 1, p, on_token_client, t);
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
        reply_oauth_error(req, 401, "invalid_client", invalid_client_desc);
        return;
    }
    /* An unknown token is not an error (RFC 7009): there is nothing to do. */
    if (PQgetisnull(res, 0, 2)) {
        eu_req_reply_json(req, 200, json_object());
        return;
    }
    if (strcmp(PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 2)) != 0) {
        reply_oauth_error(req, 403, "unauthorized_client",
                          "You are not authorized to revoke this token");
        return;
    }
    const char *p[] = {r->hash};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_REVOKE], 1, p, on_revoked, r);
}

static void
revoke(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        reply_oauth_error(req, 400, "invalid_request", err.message);
        return;
    }
    const char *token_s = str_or_null(eu_param_str(params, "token"));
    const char *id, *secret;
    read_client(req, params, &id, &secret);
    if (!id) {
        reply_oauth_error(req, 401, "invalid_client", invalid_client_desc);
        return;
    }
    if (!token_s) {
        reply_oauth_error(req, 403, "unauthorized_client",
                          "You are not authorized to revoke this token");
        return;
    }
    struct revoke *r = eu_arena_calloc(req->arena, sizeof(*r));
    eu_auth_token_hash(token_s, r->hash);
    const char *p[] = {id, r->hash};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_REVOKE_LOAD], 2, p, on_revoke_loaded, r);
}

/* -------------------------------------------------- POST /api/v1/accounts */

/*
 * Registration. The tenant's `settings` row 'registrations_mode' decides:
 * "open" (the default when unset, so a fresh demo tenant can sign people
 * up), "approval" (the user is made unapproved and its token answers 403
 * until a moderator approves it) or "closed" (403). Operators change it
 * with PATCH /admin/v1/tenants/:domain {"registrations": "..."}.
 */
struct signup {
    struct eu_req *req;
    const char *username, *email, *locale, *reason;
    char *password; /* malloc'd; wiped and freed after hashing */
    char hash[crypto_pwhash_STRBYTES];
    int rc;
    /* The account's RSA key pair for federation (src/ap/keys.c), made on the
     * CPU pool with the hash; malloc'd there, moved to the arena after. */
    char *pub_pem, *priv_pem;
    bool approval;
    const char *scopes;
    char token[EU_AUTH_TOKEN_LEN];
};

/* Mastodon's 422 for sign-ups: one message plus details per field. */
struct field_errors {
    json_t *details;
    char msg[512];
};

static void
field_error(struct field_errors *fe, const char *field, const char *label, const char *code,
            const char *desc)
{
    json_t *list = json_object_get(fe->details, field);
    if (!list) {
        list = json_array();
        json_object_set_new(fe->details, field, list);
    }
    json_array_append_new(list, json_pack("{s:s, s:s}", "error", code, "description", desc));
    size_t n = strlen(fe->msg);
    snprintf(fe->msg + n, sizeof(fe->msg) - n, "%s%s %s", n ? ", " : "", label, desc);
}

static bool
username_is_reserved(const char *u)
{
    static const char *const reserved[] = {"admin",    "administrator",  "root",       "webmaster",
                                           "support",  "help",           "owner",      "moderator",
                                           "mod",      "staff",          "postmaster", "abuse",
                                           "security", "instance_actor", NULL};
    for (int i = 0; reserved[i]; i++)
        if (strcasecmp(u, reserved[i]) == 0)
            return true;
    return false;
}

static bool
email_looks_valid(const char *s)
{
    const char *at = strchr(s, '@');
    return at && at != s && at[1] && !strchr(at + 1, '@') && strchr(at + 1, '.') &&
           strlen(s) <= 254 && !strpbrk(s, " \t\r\n<>\"',;");
}

static void
on_signup_inserted(struct eu_req *req, PGresult *res, enum eu_db_status st, void *arg)
{
    struct signup *su = arg;
    if (st == EU_DB_ERROR && strcmp(eu_db_result_sqlstate(res), "23505") == 0) {
        /* Lost a race with another sign-up for the same name or address. */
        eu_req_reply_json(req, 422,
                          json_pack("{s:s, s:{s:[{s:s, s:s}]}}", "error",
                                    "Validation failed: Username is already taken", "details",
                                    "username", "error", "ERR_TAKEN", "description",
                                    "is already taken"));
        return;
    }
    if (st != EU_DB_OK) {
        eu_req_reply_db_error(req, st);
        return;
    }
    eu_log_info("oauth", "account '%s' signed up%s", su->username,
                su->approval ? ", pending approval" : "");
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_json(req, 200,
                      json_pack("{s:s, s:s, s:s, s:I}", "access_token", su->token, "token_type",
                                "Bearer", "scope", su->scopes, "created_at",
                                (json_int_t)strtoll(PQgetvalue(res, 0, 0), NULL, 10)));
}

/* Wipes and frees the password copy; also run by the request's arena, so a
 * failed statement leaves nothing behind. */
static void
signup_free_password(struct signup *su)
{
    if (su->password)
        sodium_memzero(su->password, strlen(su->password));
    free(su->password);
    su->password = NULL;
}

static void
on_signup_freed(void *data)
{
    signup_free_password(data);
}

static void
signup_hash_work(void *arg)
{
    struct signup *su = arg;
    su->rc = crypto_pwhash_str_alg(su->hash, su->password, strlen(su->password), PWHASH_OPS,
                                   PWHASH_MEM, crypto_pwhash_ALG_ARGON2ID13);
    sodium_memzero(su->password, strlen(su->password));
    if (su->rc == 0)
        eu_ap_rsa_generate(&su->pub_pem, &su->priv_pem); /* NULL on failure */
}

static void
signup_hash_done(void *arg)
{
    struct signup *su = arg;
    struct eu_req *req = su->req;
    signup_free_password(su);
    const char *pub = su->pub_pem ? eu_arena_strdup(req->arena, su->pub_pem) : NULL;
    const char *priv = su->priv_pem ? eu_arena_strdup(req->arena, su->priv_pem) : NULL;
    free(su->pub_pem);
    free(su->priv_pem);
    eu_req_enter(req);
    if (su->rc != 0 || !pub) {
        eu_req_reply_error(req, 500,
                           su->rc ? "Cannot hash the password" : "Cannot make the account's keys");
        return;
    }
    char hash[65];
    eu_auth_token_new(su->token);
    eu_auth_token_hash(su->token, hash);
    const char *app =
        req->auth.app_id ? eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.app_id) : NULL;
    const char *p[] = {su->username, su->email,  su->hash, su->approval ? "f" : "t",
                       su->locale,   su->reason, app,      hash,
                       su->scopes,   pub,        priv};
    eu_req_stmt_or_error(req, &eu_oauth_sql[OAUTH_SIGNUP], 11, p, on_signup_inserted, su);
}

static void
on_signup_checked(struct eu_req *req, PGresult *res, void *arg)
{
    struct signup *su = arg;
    const char *mode = PQgetvalue(res, 0, 0);
    if (strcmp(mode, "closed") == 0) {
        signup_free_password(su);
        eu_req_reply_error(req, 403, "This action is not allowed");
        return;
    }
    su->approval = strcmp(mode, "approval") == 0;
    su->scopes = PQgetisnull(res, 0, 3) ? req->auth.scopes
                                        : eu_arena_strdup(req->arena, PQgetvalue(res, 0, 3));
    json_t *params = eu_req_params(req, NULL);
    struct field_errors fe = {.details = json_object()};
    const char *u = su->username;
    if (!u || !*u) {
        field_error(&fe, "username", "Username", "ERR_BLANK", "can't be blank");
    } else {
        bool ok = true;
        for (const char *c = u; *c && ok; c++)
            ok = isalnum((unsigned char)*c) || *c == '_';
        if (!ok)
            field_error(&fe, "username", "Username", "ERR_INVALID",
                        "must contain only letters, numbers and underscores");
        else if (strlen(u) > 30)
            field_error(&fe, "username", "Username", "ERR_TOO_LONG",
                        "is too long (maximum is 30 characters)");
        else if (username_is_reserved(u))
            field_error(&fe, "username", "Username", "ERR_RESERVED", "is reserved");
        else if (strcmp(PQgetvalue(res, 0, 1), "t") == 0)
            field_error(&fe, "username", "Username", "ERR_TAKEN", "is already taken");
    }
    if (!su->email || !*su->email)
        field_error(&fe, "email", "Email", "ERR_BLANK", "can't be blank");
    else if (!email_looks_valid(su->email))
        field_error(&fe, "email", "Email", "ERR_INVALID", "is invalid");
    else if (strcmp(PQgetvalue(res, 0, 2), "t") == 0)
        field_error(&fe, "email", "Email", "ERR_TAKEN", "is already taken");
    size_t plen = su->password ? strlen(su->password) : 0;
    if (plen == 0)
        field_error(&fe, "password", "Password", "ERR_BLANK", "can't be blank");
    else if (plen < 8)
        field_error(&fe, "password", "Password", "ERR_TOO_SHORT",
                    "is too short (minimum is 8 characters)");
    else if (plen > 72)
        field_error(&fe, "password", "Password", "ERR_TOO_LONG",
                    "is too long (maximum is 72 characters)");
    bool agreed = false;
    if (eu_param_bool(params, "agreement", &agreed) != 1 || !agreed)
        field_error(&fe, "agreement", "Agreement", "ERR_ACCEPTED", "must be accepted");
    if (su->locale) {
        bool ok = strlen(su->locale) <= 10;
        for (const char *c = su->locale; *c && ok; c++)
            ok = isalpha((unsigned char)*c) || *c == '-' || *c == '_';
        if (!ok)
            field_error(&fe, "locale", "Locale", "ERR_INCLUSION", "is not included in the list");
    }
    if (su->reason && strlen(su->reason) > 1000)
        field_error(&fe, "reason", "Reason", "ERR_TOO_LONG",
                    "is too long (maximum is 1000 characters)");
    if (fe.msg[0]) {
        signup_free_password(su);
        const char *msg = eu_arena_sprintf(req->arena, "Validation failed: %s", fe.msg);
        eu_req_reply_json(req, 422, json_pack("{s:s, s:o}", "error", msg, "details", fe.details));
        return;
    }
    json_decref(fe.details);
    const struct eu_config *cfg = req->app->cfg;
    if (eu_cpupool_try_submit(req->app->cpu, req->tenant->id, &req->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, signup_hash_work,
                              signup_hash_done, su) < 0) {
        signup_free_password(su);
        reply_cpu_busy(req, 503);
    }
}

static void
register_account(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct signup *su = eu_arena_calloc(req->arena, sizeof(*su));
    su->req = req;
    su->username = str_or_null(eu_param_str(params, "username"));
    su->email = str_or_null(eu_param_str(params, "email"));
    su->locale = str_or_null(eu_param_str(params, "locale"));
    su->reason = str_or_null(eu_param_str(params, "reason"));
    const char *password = eu_param_str(params, "password");
    su->password = strdup(password ? password : "");
    eu_arena_on_free(req->arena, on_signup_freed, su);
    const char *app = eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.app_id);
    const char *p[] = {su->username ? su->username : "", su->email ? su->email : "", app};
    eu_req_stmt(req, &eu_oauth_sql[OAUTH_SIGNUP_CHECK], 3, p, on_signup_checked, su);
}

/* ------------------------------------------------------ the route table */

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST

const struct eu_route eu_oauth_routes[] = {
    {POST, "/api/v1/apps", apps_create, NULL, EU_ROUTE_CORS},
    {GET, "/api/v1/apps/verify_credentials", apps_verify, NULL, EU_ROUTE_APP_TOKEN | EU_ROUTE_CORS},
    {GET, "/.well-known/oauth-authorization-server", metadata, NULL, EU_ROUTE_CORS},
    {GET, "/oauth/authorize", authorize_show, NULL, 0},
    {POST, "/oauth/authorize", authorize_decide, NULL, 0},
    {POST, "/auth/sign_in", sign_in, NULL, 0},
    {POST, "/oauth/token", token, NULL, EU_ROUTE_CORS},
    {POST, "/oauth/revoke", revoke, NULL, EU_ROUTE_CORS},
    {POST, "/api/v1/accounts", register_account, "write:accounts",
     EU_ROUTE_APP_TOKEN | EU_ROUTE_CORS},
    /* Public HTML (web.c). */
    {GET, "/:acct", eu_web_profile, NULL, 0},
    {GET, "/:acct/:id", eu_web_status, NULL, 0},
    {GET, "/users/:username", eu_web_users, NULL, 0},
    {0},
};
