/*
 * OAuth clients: app registration (POST /api/v1/apps, with its
 * redirect URIs checked), GET /api/v1/apps/verify_credentials, and the
 * RFC 8414 metadata document. A client secret is shown once, in the reply
 * that registers the app; only its SHA-256 hash is stored.
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
#include "eunha/push.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"

#define MAX_REDIRECT_URIS 16
#define MAX_URI_LEN 2000

enum {
    OAUTH_APP_CREATE,
    OAUTH_APP_VERIFY,
};

const struct eu_sql eu_oauth_apps_sql[] = {
    [OAUTH_APP_CREATE] =
        {"oauth.app_create",
         "INSERT INTO oauth_applications (tenant_id, name, website, redirect_uri, scopes, "
         "client_id, client_secret_hash) VALUES ($1, $2, $3, $4, $5, $6, $7) "
         "RETURNING id, name, website, redirect_uri, scopes, client_id"},
    [OAUTH_APP_VERIFY] = {"oauth.app_verify",
                          "SELECT id, name, website, redirect_uri, scopes FROM oauth_applications "
                          "WHERE tenant_id = $1 AND id = $2"},
    {0},
};

/* Doorkeeper's rule for a redirect URI: absolute (a scheme, then
 * something), no fragment, no whitespace; the out-of-band URN is allowed. */
static bool
redirect_uri_is_valid(const char *u)
{
    if (strcmp(u, EU_OAUTH_OOB_URI) == 0)
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

static void
drop_json(void *o)
{
    json_decref(o);
}

static void
reply_with_key(struct eu_req *req, const char *key, void *arg)
{
    json_t *o = arg;
    json_object_set_new(o, "vapid_key", json_string(key));
    json_incref(o); /* the arena keeps its own reference */
    eu_req_reply_json(req, 200, o);
}

/* Answers o with vapid_key, the tenant's Web Push key (made on first
 * need, src/api/push.c). Takes o. */
static void
reply_app(struct eu_req *req, json_t *o)
{
    eu_arena_on_free(req->arena, drop_json, o);
    eu_push_server_key(req, reply_with_key, o);
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
    reply_app(req, o);
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
        if (eu_oauth_redirect_uri_is_forbidden(json_string_value(v))) {
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

void
eu_oauth_apps_create(struct eu_req *req)
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
        scopes = eu_oauth_scopes_normalize(req->arena, raw_scopes);
        if (!scopes) {
            eu_req_reply_error(req, 422,
                               "Validation failed: Scopes doesn't match configured on the server.");
            return;
        }
    }
    const char *website = eu_oauth_str_or_null(eu_param_str(params, "website"));
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
    eu_req_stmt(req, &eu_oauth_apps_sql[OAUTH_APP_CREATE], 6, p, on_app_created,
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
    reply_app(req, application_json(res));
}

void
eu_oauth_apps_verify(struct eu_req *req)
{
    const char *id = eu_arena_sprintf(req->arena, "%lld", (long long)req->auth.app_id);
    const char *p[] = {id};
    eu_req_stmt(req, &eu_oauth_apps_sql[OAUTH_APP_VERIFY], 1, p, on_app_loaded, NULL);
}

/* ------------------------- GET /.well-known/oauth-authorization-server */

void
eu_oauth_metadata(struct eu_req *req)
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

/* Flags: include/eunha/router.h. */
const struct eu_route eu_oauth_apps_routes[] = {
    {EU_HTTP_POST, "/api/v1/apps", eu_oauth_apps_create, NULL, EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/apps/verify_credentials", eu_oauth_apps_verify, NULL,
     EU_ROUTE_APP_TOKEN | EU_ROUTE_API},
    {EU_HTTP_GET, "/.well-known/oauth-authorization-server", eu_oauth_metadata, NULL,
     EU_ROUTE_CORS},
    {0},
};
