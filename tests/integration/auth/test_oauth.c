/*
 * Apps and OAuth 2 through HTTP: app registration in its three encodings,
 * the whole authorization-code flow with PKCE through the HTML forms
 * (cookie, CSRF, consent, redirect with code and state, token exchange),
 * the out-of-band and deny paths, authorize errors, the password and
 * client_credentials grants, revocation taking effect at once, scope
 * refusal, registration in each mode, and the RFC 8414 metadata.
 */
#include "harness.h"

#include <check.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define DOMAIN "oauth.example"
#define PASSWORD "correct horse battery staple"
#define VERIFIER "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-and-some-more-entropy"

static const char *const FORM[] = {"Content-Type: application/x-www-form-urlencoded", NULL};

static struct eu_it_server *
start(void)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, DOMAIN, "OAuth <test> & co"));
    eu_it_account_create(s, DOMAIN, "alice");
    return s;
}

static void
stop(struct eu_it_server *s)
{
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}

static void __attribute__((format(printf, 6, 7)))
call(struct eu_it_server *s, struct eu_it_resp *r, const char *method, const char *token,
     const char *json, const char *fmt, ...)
{
    char path[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    int rc = eu_it_http(r, method, s->public_port, DOMAIN, path, token, json);
    ck_assert_msg(rc == 0, "%s %s: %s", method, path, r->error);
}

/* A request with a form body (NULL for none) and optional cookie. */
static void
form(struct eu_it_server *s, struct eu_it_resp *r, const char *method, const char *path,
     const char *cookie, const char *body)
{
    char cookie_line[512];
    const char *headers[4] = {FORM[0], "Accept: text/html", NULL, NULL};
    if (cookie) {
        snprintf(cookie_line, sizeof(cookie_line), "Cookie: %s", cookie);
        headers[2] = cookie_line;
    }
    int rc = eu_it_http_raw(r, method, s->public_port, DOMAIN, path, headers, body);
    ck_assert_msg(rc == 0, "%s %s: %s", method, path, r->error);
}

/* "name=value" of the response's session cookie (caller frees), after
 * checking its attributes. */
static char *
session_cookie(const struct eu_it_resp *r)
{
    const char *v = eu_it_resp_header(r, "Set-Cookie");
    ck_assert_msg(v != NULL, "no Set-Cookie in %s", r->headers);
    ck_assert_msg(strncmp(v, "_eunha_session=", 15) == 0, "cookie %s", v);
    ck_assert_msg(strstr(v, "HttpOnly") && strstr(v, "SameSite=Lax") && strstr(v, "Path=/"),
                  "cookie attributes: %s", v);
    ck_assert_msg(strstr(v, "Secure") == NULL, "Secure on an http tenant: %s", v);
    return strndup(v, strcspn(v, ";"));
}

/* The value of hidden input NAME in an HTML form (caller frees). */
static char *
form_value(const struct eu_it_resp *r, const char *name)
{
    char needle[128];
    snprintf(needle, sizeof(needle), "name=\"%s\" value=\"", name);
    const char *p = strstr(r->body, needle);
    ck_assert_msg(p != NULL, "no %s in %s", name, r->body);
    p += strlen(needle);
    return strndup(p, strcspn(p, "\""));
}

/* The value of query parameter NAME in url (caller frees), or NULL. */
static char *
query_value(const char *url, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strchr(url, '?'); p && *p; p = strchr(p, '&')) {
        p++;
        if (strncmp(p, name, n) == 0 && p[n] == '=')
            return strndup(p + n + 1, strcspn(p + n + 1, "&"));
    }
    return NULL;
}

struct app {
    char *client_id, *client_secret;
};

static struct app
make_app(struct eu_it_server *s, const char *json)
{
    struct eu_it_resp r = {0};
    call(s, &r, "POST", NULL, json, "/api/v1/apps");
    EU_IT_EXPECT_STATUS(&r, 200);
    struct app a = {strdup(eu_it_json_str(&r, "client_id")),
                    strdup(eu_it_json_str(&r, "client_secret"))};
    eu_it_resp_free(&r);
    return a;
}

static void
app_free(struct app *a)
{
    free(a->client_id);
    free(a->client_secret);
}

static char *
s256(const char *verifier)
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)verifier, strlen(verifier));
    char out[64];
    sodium_bin2base64(out, sizeof(out), h, sizeof(h), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return strdup(out);
}

/* ------------------------------------------------------------- apps */

START_TEST(test_apps_register)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};

    /* JSON with an array of URIs, a custom scheme and the OOB URN. */
    call(s, &r, "POST", NULL,
         "{\"client_name\":\"Tusky\",\"redirect_uris\":[\"https://app.example/cb\","
         "\"tusky://oauth\",\"urn:ietf:wg:oauth:2.0:oob\"],\"scopes\":\"read write push\","
         "\"website\":\"https://tusky.app\"}",
         "/api/v1/apps");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "Tusky");
    EU_IT_EXPECT_JSTR(&r, "website", "https://tusky.app");
    EU_IT_EXPECT_JSTR(&r, "redirect_uri",
                      "https://app.example/cb\ntusky://oauth\nurn:ietf:wg:oauth:2.0:oob");
    EU_IT_EXPECT_JSTR(&r, "redirect_uris.1", "tusky://oauth");
    EU_IT_EXPECT_JSTR(&r, "scopes.2", "push");
    /* The tenant's Web Push key: a P-256 point in base64url. */
    ck_assert_int_eq(strlen(eu_it_json_str(&r, "vapid_key")), 87);
    ck_assert_int_eq(strlen(eu_it_json_str(&r, "client_id")), 43);
    ck_assert_int_eq(strlen(eu_it_json_str(&r, "client_secret")), 43);
    ck_assert(json_is_string(eu_it_jpath(r.json, "id")));

    /* A form with the URIs in one newline-separated string; default scope. */
    form(s, &r, "POST", "/api/v1/apps", NULL,
         "client_name=Form+App&redirect_uris=https%3A%2F%2Fa.example%2Fcb%0Aapp%3A%2F%2Fcb");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "redirect_uris.0", "https://a.example/cb");
    EU_IT_EXPECT_JSTR(&r, "redirect_uris.1", "app://cb");
    EU_IT_EXPECT_JSTR(&r, "scopes.0", "read");
    ck_assert(json_is_null(eu_it_jpath(r.json, "website")));

    /* The query string, with '+' between scopes. */
    call(s, &r, "POST", NULL, NULL,
         "/api/v1/apps?client_name=Q&redirect_uris=urn:ietf:wg:oauth:2.0:oob"
         "&scopes=read:statuses+write:follows");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "scopes.1", "write:follows");

    /* Validation. */
    call(s, &r, "POST", NULL, "{\"client_name\":\"X\",\"redirect_uris\":\"not a uri\"}",
         "/api/v1/apps");
    EU_IT_EXPECT_ERROR(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "error", "Validation failed: Redirect URI must be an absolute URI.");
    call(s, &r, "POST", NULL, "{\"client_name\":\"X\",\"redirect_uris\":\"https://a/b#frag\"}",
         "/api/v1/apps");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(s, &r, "POST", NULL, "{\"client_name\":\"X\"}", "/api/v1/apps");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(s, &r, "POST", NULL, "{\"redirect_uris\":\"app://x\"}", "/api/v1/apps");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(s, &r, "POST", NULL,
         "{\"client_name\":\"X\",\"redirect_uris\":\"app://x\",\"scopes\":\"read sudo\"}",
         "/api/v1/apps");
    EU_IT_EXPECT_ERROR(&r, 422);

    /* verify_credentials needs a token; an app-only one will do. */
    call(s, &r, "GET", NULL, NULL, "/api/v1/apps/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 401);
    struct app a = make_app(s, "{\"client_name\":\"Verify\",\"redirect_uris\":\"app://v\","
                               "\"scopes\":\"read write\"}");
    char body[512];
    snprintf(body, sizeof(body),
             "grant_type=client_credentials&client_id=%s&client_secret=%s&scope=read", a.client_id,
             a.client_secret);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *tok = strdup(eu_it_json_str(&r, "access_token"));
    call(s, &r, "GET", tok, NULL, "/api/v1/apps/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "Verify");
    EU_IT_EXPECT_JSTR(&r, "redirect_uris.0", "app://v");
    ck_assert_int_eq(strlen(eu_it_json_str(&r, "vapid_key")), 87);
    ck_assert(eu_it_jpath(r.json, "client_secret") == NULL);

    free(tok);
    app_free(&a);
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

/* ------------------------------------------------- authorization code */

/* Runs the HTML flow up to the consent page: returns the signed-in cookie
 * and the consent form's CSRF token (caller frees both). */
static void
sign_in_to_consent(struct eu_it_server *s, const char *authorize_path, char **cookie, char **csrf)
{
    struct eu_it_resp r = {0};
    form(s, &r, "GET", authorize_path, NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "action=\"/auth/sign_in\""), "no sign-in form: %s", r.body);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Content-Type"), "text/html"));
    char *anon = session_cookie(&r);
    char *token = form_value(&r, "authenticity_token");
    /* The hidden fields carry the request on. */
    char *cid = form_value(&r, "client_id");
    char *challenge = form_value(&r, "code_challenge");
    char *state = form_value(&r, "state");
    char *redirect = form_value(&r, "redirect_uri");
    char *scope = form_value(&r, "scope");
    char *e_redirect = eu_it_urlencode(redirect), *e_scope = eu_it_urlencode(scope);
    char *e_state = eu_it_urlencode(state);
    char rest[2048];
    snprintf(rest, sizeof(rest),
             "client_id=%s&redirect_uri=%s&response_type=code&scope=%s&state=%s"
             "&code_challenge=%s&code_challenge_method=S256",
             cid, e_redirect, e_scope, e_state, challenge);

    char body[4096];
    /* Without the CSRF token: refused. */
    snprintf(body, sizeof(body), "email=alice%%40" DOMAIN "&password=x&%s", rest);
    form(s, &r, "POST", "/auth/sign_in", anon, body);
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid authenticity token"));
    /* The right token but no cookie: refused too (the token is the session's). */
    snprintf(body, sizeof(body), "authenticity_token=%s&email=alice%%40" DOMAIN "&password=%s&%s",
             token, "correct+horse+battery+staple", rest);
    form(s, &r, "POST", "/auth/sign_in", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 422);
    /* A wrong password: the form again with an error. */
    snprintf(body, sizeof(body),
             "authenticity_token=%s&email=alice%%40" DOMAIN "&password=wrong+password&%s", token,
             rest);
    form(s, &r, "POST", "/auth/sign_in", anon, body);
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid e-mail address or password."));
    /* That form is spent: the page comes with a new session and token
     * (test_signin_throttle.c checks the old ones are refused). */
    char *spent = anon;
    anon = session_cookie(&r);
    ck_assert_str_ne(anon, spent);
    free(spent);
    spent = token;
    token = form_value(&r, "authenticity_token");
    ck_assert_str_ne(token, spent);
    free(spent);
    /* The right one: a new session id, and back to the authorize URL. */
    snprintf(body, sizeof(body), "authenticity_token=%s&email=alice%%40" DOMAIN "&password=%s&%s",
             token, "correct+horse+battery+staple", rest);
    form(s, &r, "POST", "/auth/sign_in", anon, body);
    EU_IT_EXPECT_STATUS(&r, 302);
    const char *loc = eu_it_resp_header(&r, "Location");
    ck_assert_msg(loc && strncmp(loc, "/oauth/authorize?", 17) == 0, "Location %s", loc);
    *cookie = session_cookie(&r);
    ck_assert_str_ne(*cookie, anon);
    char *next = strdup(loc);

    /* The session id from before sign-in is worth nothing now. */
    form(s, &r, "GET", next, anon, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "action=\"/auth/sign_in\""));

    form(s, &r, "GET", next, *cookie, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "action=\"/oauth/authorize\""), "no consent form: %s", r.body);
    *csrf = form_value(&r, "authenticity_token");
    ck_assert_str_ne(*csrf, token);

    free(next);
    free(anon);
    free(token);
    free(cid);
    free(challenge);
    free(state);
    free(redirect);
    free(scope);
    free(e_redirect);
    free(e_scope);
    free(e_state);
    eu_it_resp_free(&r);
}

START_TEST(test_authorization_code_pkce)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};
    struct app a = make_app(s, "{\"client_name\":\"<b>Evil</b> & App\",\"redirect_uris\":"
                               "[\"https://client.example/cb?x=1\",\"urn:ietf:wg:oauth:2.0:oob\"],"
                               "\"scopes\":\"read write follow\"}");
    char *challenge = s256(VERIFIER);
    char path[2048];
    snprintf(path, sizeof(path),
             "/oauth/authorize?response_type=code&client_id=%s"
             "&redirect_uri=https%%3A%%2F%%2Fclient.example%%2Fcb%%3Fx%%3D1&scope=read+write"
             "&state=st%%26%%3Cte%%3E&code_challenge=%s&code_challenge_method=S256",
             a.client_id, challenge);
    char *cookie, *csrf;
    sign_in_to_consent(s, path, &cookie, &csrf);

    /* The consent page names the app (escaped) and the scopes. */
    form(s, &r, "GET", path, cookie, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "&lt;b&gt;Evil&lt;/b&gt; &amp; App"), "app name: %s", r.body);
    ck_assert_ptr_null(strstr(r.body, "<b>Evil"));
    ck_assert_ptr_nonnull(strstr(r.body, "<code>read</code>"));
    ck_assert_ptr_nonnull(strstr(r.body, "<code>write</code>"));
    ck_assert_ptr_null(strstr(r.body, "<code>follow</code>"));
    ck_assert_ptr_nonnull(strstr(r.body, "@alice"));
    ck_assert_ptr_nonnull(strstr(r.body, "value=\"st&amp;&lt;te&gt;\""));

    char rest[2048];
    snprintf(rest, sizeof(rest),
             "client_id=%s&redirect_uri=https%%3A%%2F%%2Fclient.example%%2Fcb%%3Fx%%3D1"
             "&response_type=code&scope=read+write&state=st%%26%%3Cte%%3E&code_challenge=%s"
             "&code_challenge_method=S256",
             a.client_id, challenge);
    char body[4096];
    /* Consent needs the session's CSRF token. */
    snprintf(body, sizeof(body), "authenticity_token=nope&decision=approve&%s", rest);
    form(s, &r, "POST", "/oauth/authorize", cookie, body);
    EU_IT_EXPECT_STATUS(&r, 422);
    snprintf(body, sizeof(body), "authenticity_token=%s&decision=approve&%s", csrf, rest);
    form(s, &r, "POST", "/oauth/authorize", cookie, body);
    EU_IT_EXPECT_STATUS(&r, 302);
    const char *loc = eu_it_resp_header(&r, "Location");
    ck_assert_msg(loc && strncmp(loc, "https://client.example/cb?x=1&code=", 35) == 0,
                  "Location %s", loc);
    char *code = query_value(loc, "code");
    char *state = query_value(loc, "state");
    ck_assert_str_eq(state, "st%26%3Cte%3E");

    /* A wrong verifier fails; so does the right one afterwards: the code is
     * spent once presented. */
    snprintf(body, sizeof(body),
             "grant_type=authorization_code&code=%s&client_id=%s&redirect_uri="
             "https%%3A%%2F%%2Fclient.example%%2Fcb%%3Fx%%3D1&code_verifier=%s",
             code, a.client_id, VERIFIER);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "token_type", "Bearer");
    EU_IT_EXPECT_JSTR(&r, "scope", "read write");
    ck_assert(json_is_integer(eu_it_jpath(r.json, "created_at")));
    char *tok = strdup(eu_it_json_str(&r, "access_token"));

    /* The token works as alice's. */
    call(s, &r, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "alice");
    call(s, &r, "GET", tok, NULL, "/api/v1/apps/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "<b>Evil</b> & App");

    /* Codes are single-use, and a code presented again has leaked: the
     * token it was exchanged for stops working at once (RFC 6749 4.1.2),
     * though it was cached by the request above. */
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 400);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_grant");
    ck_assert_ptr_nonnull(eu_it_json_str(&r, "error_description"));
    ck_assert_ptr_null(eu_it_json_str(&r, "access_token"));
    call(s, &r, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 401);

    /* A second code, presented with the wrong verifier. */
    snprintf(body, sizeof(body), "authenticity_token=%s&decision=approve&%s", csrf, rest);
    form(s, &r, "POST", "/oauth/authorize", cookie, body);
    EU_IT_EXPECT_STATUS(&r, 302);
    free(code);
    code = query_value(eu_it_resp_header(&r, "Location"), "code");
    snprintf(body, sizeof(body),
             "grant_type=authorization_code&code=%s&client_id=%s&code_verifier=%s"
             "&redirect_uri=https%%3A%%2F%%2Fclient.example%%2Fcb%%3Fx%%3D1",
             code, a.client_id, "wrong-verifier-wrong-verifier-wrong-verifier-wrong");
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 400);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_grant");

    /* Deny: back to the client with access_denied and the state. */
    snprintf(body, sizeof(body), "authenticity_token=%s&decision=deny&%s", csrf, rest);
    form(s, &r, "POST", "/oauth/authorize", cookie, body);
    EU_IT_EXPECT_STATUS(&r, 302);
    loc = eu_it_resp_header(&r, "Location");
    ck_assert_msg(strstr(loc, "error=access_denied") && strstr(loc, "&state=st%26%3Cte%3E"),
                  "Location %s", loc);

    /* Out of band: the code is shown, then exchanged with the secret. */
    snprintf(body, sizeof(body),
             "authenticity_token=%s&decision=approve&client_id=%s"
             "&redirect_uri=urn%%3Aietf%%3Awg%%3Aoauth%%3A2.0%%3Aoob&response_type=code"
             "&scope=read",
             csrf, a.client_id);
    form(s, &r, "POST", "/oauth/authorize", cookie, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *v = strstr(r.body, "readonly value=\"");
    ck_assert_msg(v != NULL, "no code on the page: %s", r.body);
    v += strlen("readonly value=\"");
    free(code);
    code = strndup(v, strcspn(v, "\""));
    snprintf(body, sizeof(body),
             "grant_type=authorization_code&code=%s&client_id=%s&client_secret=%s"
             "&redirect_uri=urn:ietf:wg:oauth:2.0:oob",
             code, a.client_id, a.client_secret);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "scope", "read");

    free(tok);
    free(code);
    free(state);
    free(cookie);
    free(csrf);
    free(challenge);
    app_free(&a);
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

START_TEST(test_authorize_errors)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};
    struct app a = make_app(s, "{\"client_name\":\"E\",\"redirect_uris\":\"app://cb\","
                               "\"scopes\":\"read\"}");
    /* Unknown client: a page (or JSON for API clients), never a redirect. */
    form(s, &r, "GET", "/oauth/authorize?response_type=code&client_id=nope&redirect_uri=app://cb",
         NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert_ptr_nonnull(strstr(r.body, "invalid_client"));
    call(s, &r, "GET", NULL, NULL, "/oauth/authorize?response_type=code&client_id=nope");
    EU_IT_EXPECT_STATUS(&r, 401);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_client");
    /* A redirect URI that was not registered. */
    char path[1024];
    snprintf(path, sizeof(path),
             "/oauth/authorize?response_type=code&client_id=%s&redirect_uri=https://evil/",
             a.client_id);
    form(s, &r, "GET", path, NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 400);
    ck_assert_ptr_null(eu_it_resp_header(&r, "Location"));
    /* Errors the client may hear about go back to it. */
    snprintf(path, sizeof(path),
             "/oauth/authorize?response_type=code&client_id=%s&scope=read+write&state=s1",
             a.client_id);
    form(s, &r, "GET", path, NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"),
                     "app://cb?error=invalid_scope&error_description=The%20requested%20scope%20is"
                     "%20invalid%2C%20unknown%2C%20or%20malformed.&state=s1");
    snprintf(path, sizeof(path), "/oauth/authorize?response_type=token&client_id=%s", a.client_id);
    form(s, &r, "GET", path, NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_ptr_nonnull(
        strstr(eu_it_resp_header(&r, "Location"), "error=unsupported_response_type"));
    /* PKCE is S256 only: "plain", or no method (which means plain), sends
     * the client back with invalid_request before any sign-in form. */
    static const char *const methods[] = {"&code_challenge_method=plain", ""};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path),
                 "/oauth/authorize?response_type=code&client_id=%s&scope=read&state=p%zu"
                 "&code_challenge=" VERIFIER "%s",
                 a.client_id, i, methods[i]);
        form(s, &r, "GET", path, NULL, NULL);
        ck_assert_msg(r.status == 302, "%s: %ld %s", methods[i], r.status, r.body);
        const char *loc = eu_it_resp_header(&r, "Location");
        ck_assert_msg(loc && strncmp(loc, "app://cb?error=invalid_request&", 31) == 0,
                      "Location %s", loc);
    }
    /* S256 with the same challenge is fine: the sign-in form. */
    snprintf(path, sizeof(path),
             "/oauth/authorize?response_type=code&client_id=%s&scope=read"
             "&code_challenge=" VERIFIER "&code_challenge_method=S256",
             a.client_id);
    form(s, &r, "GET", path, NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "action=\"/auth/sign_in\""));
    app_free(&a);
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

/* ------------------------------------------- password, client_credentials */

START_TEST(test_password_and_client_credentials)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};
    struct app a = make_app(s, "{\"client_name\":\"P\",\"redirect_uris\":\"app://cb\","
                               "\"scopes\":\"read write\"}");
    char body[1024];

    /* By e-mail, as JSON. */
    snprintf(body, sizeof(body),
             "{\"grant_type\":\"password\",\"client_id\":\"%s\",\"client_secret\":\"%s\","
             "\"username\":\"alice@" DOMAIN "\",\"password\":\"" PASSWORD "\","
             "\"scope\":\"read write\"}",
             a.client_id, a.client_secret);
    call(s, &r, "POST", NULL, body, "/oauth/token");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "scope", "read write");
    char *tok = strdup(eu_it_json_str(&r, "access_token"));
    call(s, &r, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "alice");

    /* By username, with the client in HTTP Basic; scope defaults to read. */
    char basic[256], raw[200], line[300];
    snprintf(raw, sizeof(raw), "%s:%s", a.client_id, a.client_secret);
    sodium_bin2base64(basic, sizeof(basic), (const unsigned char *)raw, strlen(raw),
                      sodium_base64_VARIANT_ORIGINAL);
    snprintf(line, sizeof(line), "Authorization: Basic %s", basic);
    const char *h[] = {FORM[0], line, NULL};
    eu_it_http_raw(&r, "POST", s->public_port, DOMAIN, "/oauth/token", h,
                   "grant_type=password&username=ALICE&password=correct+horse+battery+staple");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "scope", "read");

    /* Wrong password, wrong secret, a scope the app lacks, unknown grant. */
    snprintf(body, sizeof(body),
             "grant_type=password&client_id=%s&client_secret=%s&username=alice&password=nope",
             a.client_id, a.client_secret);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 400);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_grant");
    snprintf(body, sizeof(body), "grant_type=client_credentials&client_id=%s&client_secret=wrong",
             a.client_id);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 401);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_client");
    snprintf(body, sizeof(body),
             "grant_type=client_credentials&client_id=%s&client_secret=%s&scope=follow",
             a.client_id, a.client_secret);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 400);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_scope");
    snprintf(body, sizeof(body), "grant_type=implicit&client_id=%s", a.client_id);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 400);
    EU_IT_EXPECT_JSTR(&r, "error", "unsupported_grant_type");

    /* client_credentials: an app token without a user. */
    snprintf(body, sizeof(body), "grant_type=client_credentials&client_id=%s&client_secret=%s",
             a.client_id, a.client_secret);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "scope", "read");
    char *app_tok = strdup(eu_it_json_str(&r, "access_token"));
    call(s, &r, "GET", app_tok, NULL, "/api/v1/apps/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(s, &r, "GET", app_tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "error", "This method requires an authenticated user");
    /* The placement database is shared: count this tenant's rows only. */
    char *db = eu_it_tenant_database(s, DOMAIN);
    char *tid = eu_it_tenant_id(s, DOMAIN);
    char q[256];
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM oauth_access_tokens WHERE tenant_id = %s AND user_id IS NULL",
             tid);
    ck_assert_int_eq(eu_it_pg_exec_long(db, q), 1);

    /* Scope refusal: a read token may not post. */
    call(s, &r, "POST", tok, "{\"status\":\"hi\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(body, sizeof(body),
             "grant_type=password&client_id=%s&client_secret=%s&username=alice&password="
             "correct+horse+battery+staple&scope=read",
             a.client_id, a.client_secret);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    char *ro = strdup(eu_it_json_str(&r, "access_token"));
    call(s, &r, "POST", ro, "{\"status\":\"hi\"}", "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error", "This action is outside the authorized scopes");

    free(db);
    free(tid);
    free(ro);
    free(tok);
    free(app_tok);
    app_free(&a);
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

/* ------------------------------------------------------------ revoke */

START_TEST(test_revoke)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};
    struct app a = make_app(s, "{\"client_name\":\"R\",\"redirect_uris\":\"app://cb\"}");
    struct app other = make_app(s, "{\"client_name\":\"O\",\"redirect_uris\":\"app://cb\"}");
    char body[1024];
    snprintf(body, sizeof(body),
             "grant_type=password&client_id=%s&client_secret=%s&username=alice&password="
             "correct+horse+battery+staple",
             a.client_id, a.client_secret);
    form(s, &r, "POST", "/oauth/token", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *tok = strdup(eu_it_json_str(&r, "access_token"));
    /* Used twice, so it sits in the token cache. */
    call(s, &r, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(s, &r, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Another app may not revoke it; a wrong secret is an unknown client. */
    snprintf(body, sizeof(body), "token=%s&client_id=%s&client_secret=%s", tok, other.client_id,
             other.client_secret);
    form(s, &r, "POST", "/oauth/revoke", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error", "unauthorized_client");
    snprintf(body, sizeof(body), "token=%s&client_id=%s&client_secret=bad", tok, a.client_id);
    form(s, &r, "POST", "/oauth/revoke", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 401);
    call(s, &r, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);

    snprintf(body, sizeof(body), "token=%s&client_id=%s&client_secret=%s", tok, a.client_id,
             a.client_secret);
    form(s, &r, "POST", "/oauth/revoke", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(r.body, "{}");
    /* At once, despite the cache. */
    call(s, &r, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 401);
    EU_IT_EXPECT_JSTR(&r, "error", "The access token is invalid");
    /* Idempotent, and an unknown token is fine too. */
    form(s, &r, "POST", "/oauth/revoke", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(body, sizeof(body), "token=unknown&client_id=%s&client_secret=%s", a.client_id,
             a.client_secret);
    form(s, &r, "POST", "/oauth/revoke", NULL, body);
    EU_IT_EXPECT_STATUS(&r, 200);

    free(tok);
    app_free(&a);
    app_free(&other);
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

/* ------------------------------------------------------ registration */

static void
signup(struct eu_it_server *s, const char *domain, const char *tok, const char *user,
       struct eu_it_resp *r)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"username\":\"%s\",\"email\":\"%s@mail.example\",\"password\":\"hunter2hunter2\","
             "\"agreement\":true,\"locale\":\"en\",\"reason\":\"hello\"}",
             user, user);
    eu_it_http(r, "POST", s->public_port, domain, "/api/v1/accounts", tok, body);
}

START_TEST(test_registration_modes)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};
    char *tok = eu_it_app_token(s, DOMAIN, "write:accounts");

    /* Open by default, and the instance says so. */
    call(s, &r, "GET", NULL, NULL, "/api/v1/instance");
    ck_assert(json_is_true(eu_it_jpath(r.json, "registrations")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "approval_required")));
    signup(s, DOMAIN, tok, "bob", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "token_type", "Bearer");
    EU_IT_EXPECT_JSTR(&r, "scope", "read write follow");
    char *bob = strdup(eu_it_json_str(&r, "access_token"));
    call(s, &r, "GET", bob, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "bob");
    /* The password works for the password grant too (argon2id stored). */
    char *db = eu_it_tenant_database(s, DOMAIN);
    char *tid = eu_it_tenant_id(s, DOMAIN);
    char q[256];
    snprintf(q, sizeof(q),
             "SELECT encrypted_password FROM users u JOIN accounts a ON a.tenant_id = u.tenant_id"
             " AND a.id = u.account_id WHERE u.tenant_id = %s AND a.username = 'bob'",
             tid);
    char *h = eu_it_pg_exec(db, q);
    ck_assert_msg(strncmp(h, "$argon2id$", 10) == 0, "hash %s", h);
    free(h);

    /* Validation: details per field, Mastodon's codes. */
    call(s, &r, "POST", tok,
         "{\"username\":\"bob\",\"email\":\"nope\",\"password\":\"short\",\"agreement\":false}",
         "/api/v1/accounts");
    EU_IT_EXPECT_ERROR(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "details.username.0.error", "ERR_TAKEN");
    EU_IT_EXPECT_JSTR(&r, "details.email.0.error", "ERR_INVALID");
    EU_IT_EXPECT_JSTR(&r, "details.password.0.error", "ERR_TOO_SHORT");
    EU_IT_EXPECT_JSTR(&r, "details.agreement.0.error", "ERR_ACCEPTED");
    ck_assert_str_eq(eu_it_json_str(&r, "error"),
                     "Validation failed: Username is already taken, Email is invalid, Password "
                     "is too short (minimum is 8 characters), Agreement must be accepted");
    call(s, &r, "POST", tok,
         "{\"username\":\"b-o-b\",\"email\":\"bob@mail.example\","
         "\"password\":\"hunter2hunter2\",\"agreement\":\"1\"}",
         "/api/v1/accounts");
    EU_IT_EXPECT_ERROR(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "details.username.0.error", "ERR_INVALID");
    EU_IT_EXPECT_JSTR(&r, "details.email.0.error", "ERR_TAKEN");
    /* An app token is needed. */
    call(s, &r, "POST", NULL, "{\"username\":\"zed\"}", "/api/v1/accounts");
    EU_IT_EXPECT_ERROR(&r, 401);

    /* Approval: the token is made but refused until approved. */
    eu_it_tenant_patch(s, DOMAIN, "{\"registrations\":\"approval\"}");
    call(s, &r, "GET", NULL, NULL, "/api/v2/instance");
    ck_assert(json_is_true(eu_it_jpath(r.json, "registrations.enabled")));
    ck_assert(json_is_true(eu_it_jpath(r.json, "registrations.approval_required")));
    signup(s, DOMAIN, tok, "carol", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *carol = strdup(eu_it_json_str(&r, "access_token"));
    call(s, &r, "GET", carol, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error", "Your login is currently pending approval");
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM users WHERE tenant_id = %s AND NOT approved"
             " AND reason = 'hello'",
             tid);
    ck_assert_int_eq(eu_it_pg_exec_long(db, q), 1);
    snprintf(q, sizeof(q), "UPDATE users SET approved = true WHERE tenant_id = %s", tid);
    free(eu_it_pg_exec(db, q));
    call(s, &r, "GET", carol, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "carol");

    /* Closed. */
    eu_it_tenant_patch(s, DOMAIN, "{\"registrations\":\"closed\"}");
    call(s, &r, "GET", NULL, NULL, "/api/v1/instance");
    ck_assert(json_is_false(eu_it_jpath(r.json, "registrations")));
    signup(s, DOMAIN, tok, "dave", &r);
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error", "This action is not allowed");
    eu_it_admin(s, "PATCH", "/admin/v1/tenants/" DOMAIN, "{\"registrations\":\"maybe\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);

    free(db);
    free(tid);
    free(tok);
    free(bob);
    free(carol);
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

/* ---------------------------------------------------------- metadata */

START_TEST(test_metadata)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};
    call(s, &r, "GET", NULL, NULL, "/.well-known/oauth-authorization-server");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "issuer", "http://" DOMAIN "/");
    EU_IT_EXPECT_JSTR(&r, "authorization_endpoint", "http://" DOMAIN "/oauth/authorize");
    EU_IT_EXPECT_JSTR(&r, "token_endpoint", "http://" DOMAIN "/oauth/token");
    EU_IT_EXPECT_JSTR(&r, "revocation_endpoint", "http://" DOMAIN "/oauth/revoke");
    EU_IT_EXPECT_JSTR(&r, "app_registration_endpoint", "http://" DOMAIN "/api/v1/apps");
    EU_IT_EXPECT_JSTR(&r, "code_challenge_methods_supported.0", "S256");
    EU_IT_EXPECT_JSTR(&r, "response_types_supported.0", "code");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "grant_types_supported")), 3);
    ck_assert(json_array_size(eu_it_jpath(r.json, "scopes_supported")) > 30);
    ck_assert_str_eq(eu_it_resp_header(&r, "Access-Control-Allow-Origin"), "*");
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

int
main(void)
{
    if (sodium_init() < 0)
        return 1;
    Suite *suite = suite_create("oauth");
    EU_IT_ADD_TCASE(suite, test_apps_register, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_authorization_code_pkce, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_authorize_errors, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_password_and_client_credentials, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_revoke, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_registration_modes, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_metadata, TIMEOUT);
    return eu_it_run_suite(suite);
}
