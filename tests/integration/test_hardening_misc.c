/*
 * Small hardening fixes seen from outside: redirect URIs a browser would
 * run are refused and a code is exchanged only with the URI it was sent to;
 * client secrets are not kept in the clear; Redis with a password works;
 * and a revoked token or a suspended account stops working in every
 * process that shares the database, not only in the one that was told.
 */
#include "harness.h"

#include <check.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define DOMAIN "misc.example"

static const char *const FORM[] = {"Content-Type: application/x-www-form-urlencoded", NULL};

static struct eu_it_server *
start(void)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, DOMAIN, "Misc"));
    eu_it_account_create(s, DOMAIN, "alice");
    return s;
}

static void
stop(struct eu_it_server *s)
{
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}

static void
post_form(struct eu_it_server *s, struct eu_it_resp *r, const char *path, const char *body)
{
    int rc = eu_it_http_raw(r, "POST", s->public_port, DOMAIN, path, FORM, body);
    ck_assert_msg(rc == 0, "POST %s: %s", path, r->error);
}

struct app {
    char *client_id, *client_secret;
};

static struct app
make_app(struct eu_it_server *s, const char *redirect_uri)
{
    struct eu_it_resp r = {0};
    char body[512];
    snprintf(body, sizeof(body),
             "{\"client_name\":\"M\",\"redirect_uris\":\"%s\",\"scopes\":\"read write\"}",
             redirect_uri);
    eu_it_callf(s, &r, DOMAIN, "POST", NULL, body, "/api/v1/apps");
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

/* -------------------------------------------------- redirect URIs */

START_TEST(test_redirect_uri_schemes_refused)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};
    static const char *const bad[] = {
        "[\"javascript:alert(1)\"]",
        "[\"JaVaScRiPt:alert(document.cookie)\"]",
        "[\"  javascript:alert(1)\"]",
        "\"\\tjavascript:alert(1)\"",
        "[\"app://cb\", \"data:text/html,<script>alert(1)</script>\"]",
        "[\"DATA:text/html;base64,PHNjcmlwdD4=\"]",
        "[\"vbscript:msgbox(1)\"]",
        NULL,
    };
    char body[512];
    for (int i = 0; bad[i]; i++) {
        snprintf(body, sizeof(body), "{\"client_name\":\"X\",\"redirect_uris\":%s}", bad[i]);
        eu_it_callf(s, &r, DOMAIN, "POST", NULL, body, "/api/v1/apps");
        EU_IT_EXPECT_ERROR(&r, 422);
        EU_IT_EXPECT_JSTR(&r, "error",
                          "Validation failed: Redirect URI is forbidden by the server.");
        ck_assert_ptr_null(eu_it_json_str(&r, "client_id"));
    }
    /* Nothing was stored. */
    char *db = eu_it_tenant_database(s, DOMAIN);
    ck_assert_int_eq(eu_it_pg_exec_long(db, "SELECT count(*) FROM oauth_applications"), 0);

    /* Ordinary schemes still register. */
    struct app a = make_app(s, "app://cb");
    app_free(&a);
    a = make_app(s, "https://client.example/cb");
    app_free(&a);

    /* An app stored before the check cannot be sent there either: an error
     * page, no redirect. */
    char *tid = eu_it_tenant_id(s, DOMAIN);
    char sql[512];
    snprintf(sql, sizeof(sql),
             "INSERT INTO oauth_applications (tenant_id, name, redirect_uri, scopes, client_id,"
             " client_secret) VALUES (%s, 'old', 'javascript:alert(1)', 'read', 'old-app',"
             " 'x') RETURNING 1",
             tid);
    free(eu_it_pg_exec(db, sql));
    eu_it_callf(s, &r, DOMAIN, "GET", NULL, NULL,
                "/oauth/authorize?response_type=x&client_id=old-app");
    EU_IT_EXPECT_STATUS(&r, 400);
    ck_assert_ptr_null(eu_it_resp_header(&r, "Location"));
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_redirect_uri");

    free(tid);
    free(db);
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

/* Stores an authorization code for alice and app a, sent to redirect. */
static void
store_code(struct eu_it_server *s, const struct app *a, const char *code, const char *redirect)
{
    char hash[crypto_hash_sha256_BYTES * 2 + 1];
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)code, strlen(code));
    sodium_bin2hex(hash, sizeof(hash), h, sizeof(h));
    char *db = eu_it_tenant_database(s, DOMAIN);
    char *tid = eu_it_tenant_id(s, DOMAIN);
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "INSERT INTO oauth_access_grants (tenant_id, application_id, user_id, code_hash,"
             " redirect_uri, scopes, expires_at)"
             " SELECT %s, ap.id, u.id, '%s', '%s', 'read', now() + interval '5 minutes'"
             " FROM oauth_applications ap, users u JOIN accounts ac ON ac.tenant_id = u.tenant_id"
             " AND ac.id = u.account_id WHERE ap.tenant_id = %s AND ap.client_id = '%s'"
             " AND u.tenant_id = %s AND ac.username = 'alice' RETURNING 1",
             tid, hash, redirect, tid, a->client_id, tid);
    char *one = eu_it_pg_exec(db, sql);
    ck_assert_ptr_nonnull(one);
    free(one);
    free(tid);
    free(db);
}

START_TEST(test_code_exchange_needs_its_redirect_uri)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};
    struct app a = make_app(s, "https://client.example/cb\\napp://cb");
    char body[1024];

    /* Left out: refused before the code is spent. */
    store_code(s, &a, "code-one", "https://client.example/cb");
    snprintf(body, sizeof(body),
             "grant_type=authorization_code&code=code-one&client_id=%s&client_secret=%s",
             a.client_id, a.client_secret);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 400);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_request");
    EU_IT_EXPECT_JSTR(&r, "error_description", "Missing required parameter: redirect_uri.");
    ck_assert_ptr_null(eu_it_json_str(&r, "access_token"));

    /* Another registered URI than the code went to: invalid_grant. */
    snprintf(body, sizeof(body),
             "grant_type=authorization_code&code=code-one&client_id=%s&client_secret=%s"
             "&redirect_uri=app%%3A%%2F%%2Fcb",
             a.client_id, a.client_secret);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 400);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_grant");
    ck_assert_ptr_null(eu_it_json_str(&r, "access_token"));

    /* The same URI: a token. */
    store_code(s, &a, "code-two", "https://client.example/cb");
    snprintf(body, sizeof(body),
             "grant_type=authorization_code&code=code-two&client_id=%s&client_secret=%s"
             "&redirect_uri=https%%3A%%2F%%2Fclient.example%%2Fcb",
             a.client_id, a.client_secret);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "token_type", "Bearer");
    EU_IT_EXPECT_JSTR(&r, "scope", "read");

    app_free(&a);
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

static Suite *
hardening_misc_suite(void)
{
    Suite *suite = suite_create("hardening_misc");
    EU_IT_ADD_TCASE(suite, test_redirect_uri_schemes_refused, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_code_exchange_needs_its_redirect_uri, TIMEOUT);
    return suite;
}

int
main(void)
{
    return eu_it_run_suite(hardening_misc_suite());
}
