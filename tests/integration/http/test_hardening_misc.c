/*
 * Small hardening fixes seen from outside: redirect URIs a browser would
 * run are refused and a code is exchanged only with the URI it was sent to;
 * client secrets are not kept in the clear; Redis with a password works;
 * and a revoked token or a suspended account stops working in every
 * process that shares the database, not only in the one that was told.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define TIMEOUT 180
#define DOMAIN "misc.example"

static const char *const FORM[] = {"Content-Type: application/x-www-form-urlencoded", NULL};

static struct eu_it_server *
start(void)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, DOMAIN, "Misc"));
    free(eu_it_account_seed(s, DOMAIN, "alice"));
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

/* An app registered with redirect_uri (a JSON string's contents). */
static struct eu_it_app
make_app(struct eu_it_server *s, const char *redirect_uri)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"client_name\":\"M\",\"redirect_uris\":\"%s\",\"scopes\":\"read write\"}",
             redirect_uri);
    return eu_it_app_create(s, DOMAIN, body);
}

/* A password-grant token of alice through app a (caller frees). */
static char *
password_token(struct eu_it_server *s, const struct eu_it_app *a)
{
    struct eu_it_resp r = {0};
    char body[1024];
    snprintf(body, sizeof(body),
             "grant_type=password&client_id=%s&client_secret=%s&username=alice&password="
             "correct+horse+battery+staple&scope=read+write",
             a->id, a->secret);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *tok = strdup(eu_it_json_str(&r, "access_token"));
    eu_it_resp_free(&r);
    return tok;
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
    make_app(s, "app://cb");
    make_app(s, "https://client.example/cb");

    /* An app stored before the check cannot be sent there either: an error
     * page, no redirect. */
    char *tid = eu_it_tenant_id(s, DOMAIN);
    char sql[512];
    snprintf(sql, sizeof(sql),
             "INSERT INTO oauth_applications (tenant_id, name, redirect_uri, scopes, client_id,"
             " client_secret_hash) VALUES (%s, 'old', 'javascript:alert(1)', 'read', 'old-app',"
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
store_code(struct eu_it_server *s, const struct eu_it_app *a, const char *code,
           const char *redirect)
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
             tid, hash, redirect, tid, a->id, tid);
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
    struct eu_it_app a = make_app(s, "https://client.example/cb\\napp://cb");
    char body[1024];

    /* Left out: refused before the code is spent. */
    store_code(s, &a, "code-one", "https://client.example/cb");
    snprintf(body, sizeof(body),
             "grant_type=authorization_code&code=code-one&client_id=%s&client_secret=%s", a.id,
             a.secret);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 400);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_request");
    EU_IT_EXPECT_JSTR(&r, "error_description", "Missing required parameter: redirect_uri.");
    ck_assert_ptr_null(eu_it_json_str(&r, "access_token"));

    /* Another registered URI than the code went to: invalid_grant. */
    snprintf(body, sizeof(body),
             "grant_type=authorization_code&code=code-one&client_id=%s&client_secret=%s"
             "&redirect_uri=app%%3A%%2F%%2Fcb",
             a.id, a.secret);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 400);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_grant");
    ck_assert_ptr_null(eu_it_json_str(&r, "access_token"));

    /* The same URI: a token. */
    store_code(s, &a, "code-two", "https://client.example/cb");
    snprintf(body, sizeof(body),
             "grant_type=authorization_code&code=code-two&client_id=%s&client_secret=%s"
             "&redirect_uri=https%%3A%%2F%%2Fclient.example%%2Fcb",
             a.id, a.secret);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "token_type", "Bearer");
    EU_IT_EXPECT_JSTR(&r, "scope", "read");

    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

/* --------------------------------------------------- client secrets */

static void
sha256_hex(const char *s, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)s, strlen(s));
    sodium_bin2hex(out, 65, h, sizeof(h));
}

START_TEST(test_client_secret_stored_hashed)
{
    struct eu_it_server *s = start();
    struct eu_it_resp r = {0};
    struct eu_it_app a = make_app(s, "app://cb");
    ck_assert_int_eq(strlen(a.secret), 43);

    /* No column of the row holds the secret; its hash is there. */
    char *db = eu_it_tenant_database(s, DOMAIN);
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM oauth_applications a"
             " WHERE strpos(row_to_json(a)::text, '%s') > 0",
             a.secret);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 0);
    char want[65];
    sha256_hex(a.secret, want);
    snprintf(sql, sizeof(sql),
             "SELECT client_secret_hash FROM oauth_applications WHERE client_id = '%s'", a.id);
    char *stored = eu_it_pg_exec(db, sql);
    ck_assert_str_eq(stored, want);
    free(stored);

    /* The secret still authenticates the client, in the form and in Basic;
     * the hash itself and a wrong secret do not. */
    char body[1024];
    snprintf(body, sizeof(body),
             "grant_type=client_credentials&client_id=%s&client_secret=%s&scope=read", a.id,
             a.secret);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *app_tok = strdup(eu_it_json_str(&r, "access_token"));
    snprintf(body, sizeof(body),
             "grant_type=client_credentials&client_id=%s&client_secret=%s&scope=read", a.id, want);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 401);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_client");
    snprintf(body, sizeof(body),
             "grant_type=client_credentials&client_id=%s&client_secret=x%s&scope=read", a.id,
             a.secret);
    post_form(s, &r, "/oauth/token", body);
    EU_IT_EXPECT_STATUS(&r, 401);
    char basic[512], raw[256], enc[400];
    snprintf(raw, sizeof(raw), "%s:%s", a.id, a.secret);
    sodium_bin2base64(enc, sizeof(enc), (const unsigned char *)raw, strlen(raw),
                      sodium_base64_VARIANT_ORIGINAL);
    snprintf(basic, sizeof(basic), "Authorization: Basic %s", enc);
    const char *headers[] = {FORM[0], basic, NULL};
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", s->public_port, DOMAIN, "/oauth/token", headers,
                                    "grant_type=client_credentials&scope=read"),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Shown once: verify_credentials names the app but has no secret. */
    eu_it_callf(s, &r, DOMAIN, "GET", app_tok, NULL, "/api/v1/apps/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "M");
    ck_assert_ptr_null(eu_it_jpath(r.json, "client_secret"));
    ck_assert_ptr_null(strstr(r.body, a.secret));

    free(app_tok);
    free(db);
    eu_it_resp_free(&r);
    stop(s);
}
END_TEST

/* ------------------------------------------------------ Redis AUTH */

/* A port nothing listens on now (the kernel's pick for port 0). */
static int
free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* Starts a private redis-server (from PATH, as scripts/test.sh uses) that
 * wants password; it dies with the test process. */
static pid_t
redis_with_password(int port, const char *password)
{
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execlp("redis-server", "redis-server", "--port", portstr, "--bind", "127.0.0.1",
               "--requirepass", password, "--save", "", "--appendonly", "no", (char *)NULL);
        _exit(127);
    }
    long long deadline = eu_it_now_ms() + 10000;
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
        close(fd);
        if (rc == 0)
            return pid;
        ck_assert_msg(eu_it_now_ms() < deadline, "redis-server did not start on %d", port);
        eu_it_sleep_ms(50);
    }
}

/* The server's log so far (caller frees). */
static char *
read_log(const struct eu_it_server *s)
{
    FILE *f = fopen(s->log_path, "r");
    ck_assert_ptr_nonnull(f);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Whether the server's log shows needle within ms milliseconds. */
static bool
wait_for_log(const struct eu_it_server *s, const char *needle, long ms)
{
    long long deadline = eu_it_now_ms() + ms;
    for (;;) {
        char *log = read_log(s);
        bool found = strstr(log, needle) != NULL;
        free(log);
        if (found || eu_it_now_ms() > deadline)
            return found;
        eu_it_sleep_ms(100);
    }
}

/* POSTs a status with an Idempotency-Key; returns its id (caller frees). */
static char *
post_idempotent(struct eu_it_server *s, const char *tok, const char *key)
{
    char auth[256], idem[128];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
    snprintf(idem, sizeof(idem), "Idempotency-Key: %s", key);
    const char *headers[] = {"Content-Type: application/json", "Accept: application/json", auth,
                             idem, NULL};
    struct eu_it_resp r = {0};
    int rc = eu_it_http_raw(&r, "POST", s->public_port, DOMAIN, "/api/v1/statuses", headers,
                            "{\"status\":\"once\"}");
    ck_assert_int_eq(rc, 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* Waits (at most 15 s) until a key set by one post is read by the next.
 * Idempotency is best effort while Redis comes back (a post that finds
 * Redis unusable goes on without it); once in several runs the first pair
 * right after "connected" did not replay, so the assertion below waits for
 * a link that has settled. */
static void
wait_idempotency_works(struct eu_it_server *s, const char *tok)
{
    long long deadline = eu_it_now_ms() + 15000;
    for (int i = 0;; i++) {
        char key[32];
        snprintf(key, sizeof(key), "probe-%d", i);
        char *a = post_idempotent(s, tok, key), *b = post_idempotent(s, tok, key);
        bool same = strcmp(a, b) == 0;
        free(a);
        free(b);
        if (same)
            return;
        ck_assert_msg(eu_it_now_ms() < deadline, "Redis never became usable after AUTH");
        eu_it_sleep_ms(200);
    }
}

START_TEST(test_redis_password)
{
    /* '@' and ':' in the password, escaped in the URL. */
    const char *password = "pa:ss@word-7";
    int port = free_port();
    pid_t redis = redis_with_password(port, password);
    char url[256];
    /* The harness writes this URL into the server's config. The test runs
     * in its own forked process, so the change ends with it. */

    /* A wrong password: the server still serves, says why Redis is not
     * used, and never prints either password. */
    snprintf(url, sizeof(url), "redis://:wrong%%40guess@127.0.0.1:%d/0", port);
    setenv("EUNHA_TEST_REDIS_URL", url, 1);
    struct eu_it_server *s = start();
    ck_assert_msg(wait_for_log(s, "authentication refused", 5000), "no AUTH failure logged");
    char *log = read_log(s);
    ck_assert_ptr_null(strstr(log, "wrong@guess"));
    ck_assert_ptr_null(strstr(log, "wrong%40guess"));
    free(log);
    stop(s);

    /* The right one, as ":password@" and as "user:password@" (the default
     * user of Redis 6 ACLs): Redis works, so an Idempotency-Key replays. */
    static const char *const forms[] = {"redis://:pa%%3Ass%%40word-7@127.0.0.1:%d/0",
                                        "redis://default:pa%%3Ass%%40word-7@127.0.0.1:%d/1", NULL};
    for (int i = 0; forms[i]; i++) {
        snprintf(url, sizeof(url), forms[i], port);
        setenv("EUNHA_TEST_REDIS_URL", url, 1);
        s = start();
        char *tok = eu_it_user_token(s, DOMAIN, "alice", "read write");
        char *first = post_idempotent(s, tok, "same-key");
        char *again = post_idempotent(s, tok, "same-key");
        ck_assert_str_eq(again, first);
        char *other = post_idempotent(s, tok, "other-key");
        ck_assert_str_ne(other, first);
        log = read_log(s);
        ck_assert_ptr_null(strstr(log, password));
        ck_assert_ptr_null(strstr(log, "authentication refused"));
        free(log);
        free(first);
        free(again);
        free(other);
        free(tok);
        stop(s);
    }

    /* A Redis that accepts but does not answer AUTH (stopped): the server
     * gives up on that connection after command_timeout_ms, and once Redis
     * answers again it connects and uses it. */
    kill(redis, SIGSTOP);
    snprintf(url, sizeof(url), forms[0], port);
    setenv("EUNHA_TEST_REDIS_URL", url, 1);
    s = start();
    ck_assert(wait_for_log(s, "no answer to AUTH", 10000));
    kill(redis, SIGCONT);
    ck_assert(wait_for_log(s, "connected (commands)", 15000));
    char *tok = eu_it_user_token(s, DOMAIN, "alice", "read write");
    wait_idempotency_works(s, tok);
    char *first = post_idempotent(s, tok, "after-hang");
    char *again = post_idempotent(s, tok, "after-hang");
    ck_assert_str_eq(again, first);
    free(first);
    free(again);
    free(tok);
    stop(s);

    kill(redis, SIGTERM);
    waitpid(redis, NULL, 0);
}
END_TEST

/* ------------------------------------------ several processes, one database */

/* A second process on a's databases and Redis prefix (as a second host
 * behind the same proxy would be). Stop it before a. */
static struct eu_it_server *
second_process(struct eu_it_server *a)
{
    struct eu_it_opts o = {.name = a->name};
    struct eu_it_server *b = eu_it_server_start_opts(&o);
    b->keep_databases = true;
    return b;
}

/* Uses tok twice on s, so it sits in s's token cache, and checks it works. */
static void
use_twice(struct eu_it_server *s, const char *tok)
{
    struct eu_it_resp r = {0};
    for (int i = 0; i < 2; i++) {
        eu_it_callf(s, &r, DOMAIN, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JSTR(&r, "username", "alice");
    }
    eu_it_resp_free(&r);
}

/* Polls s with tok until it answers 401; returns how long that took (ms),
 * or fails after 3 s. */
static long long
ms_until_refused(struct eu_it_server *s, const char *tok)
{
    struct eu_it_resp r = {0};
    long long start = eu_it_now_ms();
    for (;;) {
        eu_it_callf(s, &r, DOMAIN, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
        long long took = eu_it_now_ms() - start;
        if (r.status == 401) {
            EU_IT_EXPECT_JSTR(&r, "error", "The access token is invalid");
            eu_it_resp_free(&r);
            return took;
        }
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert_msg(took < 3000, "token still accepted after %lld ms", took);
        eu_it_sleep_ms(50);
    }
}

START_TEST(test_revoke_reaches_other_process)
{
    struct eu_it_server *a = start();
    struct eu_it_server *b = second_process(a);
    struct eu_it_resp r = {0};
    struct eu_it_app ap = make_app(a, "app://cb");
    char *tok = password_token(a, &ap);
    char *kept = password_token(a, &ap);
    use_twice(a, tok);
    use_twice(b, tok);
    use_twice(b, kept);

    char body[1024];
    snprintf(body, sizeof(body), "token=%s&client_id=%s&client_secret=%s", tok, ap.id, ap.secret);
    post_form(a, &r, "/oauth/revoke", body);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(r.body, "{}");
    long long took = ms_until_refused(b, tok);
    ck_assert_msg(took <= 1000, "process B refused the revoked token only after %lld ms", took);
    ms_until_refused(a, tok);
    /* Only that token. */
    use_twice(b, kept);

    free(tok);
    free(kept);
    eu_it_resp_free(&r);
    stop(b);
    stop(a);
}
END_TEST

START_TEST(test_suspension_reaches_other_process)
{
    struct eu_it_server *a = start();
    struct eu_it_server *b = second_process(a);
    struct eu_it_resp r = {0};
    free(eu_it_account_seed(a, DOMAIN, "bob"));
    char *tok = eu_it_user_token(a, DOMAIN, "alice", "read write");
    char *bob = eu_it_user_token(a, DOMAIN, "bob", "read");
    use_twice(a, tok);
    use_twice(b, tok);
    for (int i = 0; i < 2; i++) {
        eu_it_callf(b, &r, DOMAIN, "GET", bob, NULL, "/api/v1/accounts/verify_credentials");
        EU_IT_EXPECT_STATUS(&r, 200);
    }

    char *id = eu_it_account_id(a, DOMAIN, "alice");
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/suspend", DOMAIN, id);
    eu_it_admin(a, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "alice");
    long long took = ms_until_refused(b, tok);
    ck_assert_msg(took <= 1000, "process B served a suspended account for %lld ms", took);
    /* Other accounts keep working there. */
    eu_it_callf(b, &r, DOMAIN, "GET", bob, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "bob");

    free(id);
    free(bob);
    free(tok);
    eu_it_resp_free(&r);
    stop(b);
    stop(a);
}
END_TEST

static Suite *
hardening_misc_suite(void)
{
    Suite *suite = suite_create("hardening_misc");
    EU_IT_ADD_TCASE(suite, test_redirect_uri_schemes_refused, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_code_exchange_needs_its_redirect_uri, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_client_secret_stored_hashed, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_redis_password, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_revoke_reaches_other_process, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_suspension_reaches_other_process, TIMEOUT);
    return suite;
}

int
main(void)
{
    return eu_it_run_suite(hardening_misc_suite());
}
