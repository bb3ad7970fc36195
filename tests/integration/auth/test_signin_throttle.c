/*
 * Sign-in throttling and spent sign-in forms through HTTP, with the limits
 * lowered in the config and clients told apart by X-Forwarded-For behind a
 * trusted proxy: past the per-account-and-IP limit even the right password
 * is refused 429 with Retry-After from that address (the e-mail address and
 * the username share the counter, a flood of refused attempts never
 * reaches the CPU pool), while the owner signs in from another address, a
 * different login and the same login on a decoy tenant of the same
 * database still sign in; guesses spread over many addresses meet the
 * account's cap, which the owner's known address does not; past the
 * per-IP limit that client is
 * refused whatever the login, an IPv6 client counts by its /64; the
 * general per-IP API limit covers /auth/sign_in; nothing is throttled
 * while Redis is down; and a failed sign-in spends its session id and CSRF
 * token, so only the re-rendered form works.
 */
#include "harness.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define PASSWORD "correct horse battery staple"
#define OOB "urn:ietf:wg:oauth:2.0:oob"
#define PROXY "trusted_proxies = [\"127.0.0.1\"]\n"
#define INVALID "Invalid e-mail address or password."
#define THROTTLED "Too many sign-in attempts"

/* One browser at the sign-in form of host, seen through the proxy as xff. */
struct browser {
    struct eu_it_server *s;
    const char *host;
    const char *xff; /* X-Forwarded-For, or NULL to come from 127.0.0.1 */
    const struct eu_it_app *app;
    char *cookie; /* "_eunha_session=..." */
    char *token;  /* the form's authenticity_token */
};

static struct browser
browser_at(struct eu_it_server *s, const char *host, const char *xff, const struct eu_it_app *app)
{
    return (struct browser){.s = s, .host = host, .xff = xff, .app = app};
}

static struct eu_it_app
make_app(struct eu_it_server *s, const char *host)
{
    return eu_it_app_create(
        s, host, "{\"client_name\":\"T\",\"redirect_uris\":\"" OOB "\",\"scopes\":\"read\"}");
}

/* A browser request: a form body (or none), the browser's cookie, its
 * forwarded address. */
static void
send(struct browser *b, struct eu_it_resp *r, const char *method, const char *path,
     const char *body)
{
    char cookie[256], xff[128];
    const char *h[5] = {"Content-Type: application/x-www-form-urlencoded", "Accept: text/html"};
    int n = 2;
    if (b->cookie) {
        snprintf(cookie, sizeof(cookie), "Cookie: %s", b->cookie);
        h[n++] = cookie;
    }
    if (b->xff) {
        snprintf(xff, sizeof(xff), "X-Forwarded-For: %s", b->xff);
        h[n++] = xff;
    }
    h[n] = NULL;
    int rc = eu_it_http_raw(r, method, b->s->public_port, b->host, path, h, body);
    ck_assert_msg(rc == 0, "%s %s: %s", method, path, r->error);
}

/* The value of hidden input name in r's form (caller frees). */
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

/* "name=value" of r's session cookie (caller frees), or NULL without one. */
static char *
new_cookie(const struct eu_it_resp *r)
{
    const char *v = eu_it_resp_header(r, "Set-Cookie");
    if (!v)
        return NULL;
    ck_assert_msg(strncmp(v, "_eunha_session=", 15) == 0, "cookie %s", v);
    return strndup(v, strcspn(v, ";"));
}

/* GET /oauth/authorize: the browser gets the sign-in form, and a session
 * unless it has one. */
static void
browser_open(struct browser *b)
{
    struct eu_it_resp r = {0};
    char path[512];
    snprintf(path, sizeof(path),
             "/oauth/authorize?client_id=%s&redirect_uri=urn%%3Aietf%%3Awg%%3Aoauth%%3A2.0%%3Aoob"
             "&response_type=code&scope=read",
             b->app->id);
    send(b, &r, "GET", path, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "action=\"/auth/sign_in\""), "no sign-in form: %s", r.body);
    /* A browser that has a session keeps it. */
    char *c = new_cookie(&r);
    if (c) {
        free(b->cookie);
        b->cookie = c;
    }
    ck_assert_ptr_nonnull(b->cookie);
    free(b->token);
    b->token = form_value(&r, "authenticity_token");
    eu_it_resp_free(&r);
}

static void
browser_free(struct browser *b)
{
    free(b->cookie);
    free(b->token);
}

/* POST /auth/sign_in with the browser's cookie and token (or token when
 * not NULL). Returns the status; takes up a new cookie and token the way a
 * browser would (the reply's Set-Cookie, the re-rendered form's token). */
static long
sign_in_with(struct browser *b, struct eu_it_resp *r, const char *token, const char *login,
             const char *password)
{
    char *t = eu_it_urlencode(token ? token : b->token), *l = eu_it_urlencode(login);
    char *p = eu_it_urlencode(password);
    char body[1024];
    snprintf(body, sizeof(body),
             "authenticity_token=%s&email=%s&password=%s&client_id=%s"
             "&redirect_uri=urn%%3Aietf%%3Awg%%3Aoauth%%3A2.0%%3Aoob&response_type=code&scope=read",
             t, l, p, b->app->id);
    free(t);
    free(l);
    free(p);
    send(b, r, "POST", "/auth/sign_in", body);
    char *c = new_cookie(r);
    if (c) {
        free(b->cookie);
        b->cookie = c;
    }
    if (strstr(r->body, "name=\"authenticity_token\"")) {
        free(b->token);
        b->token = form_value(r, "authenticity_token");
    }
    return r->status;
}

static long
sign_in(struct browser *b, struct eu_it_resp *r, const char *login, const char *password)
{
    return sign_in_with(b, r, NULL, login, password);
}

/* Asserts a signed-in answer: back to the authorize URL for consent. */
static void
expect_signed_in(const struct eu_it_resp *r)
{
    EU_IT_EXPECT_STATUS(r, 302);
    const char *loc = eu_it_resp_header(r, "Location");
    ck_assert_msg(loc && strncmp(loc, "/oauth/authorize?", 17) == 0, "Location %s",
                  loc ? loc : "(none)");
}

/* Asserts a refused-before-checking answer: 429, Retry-After within the
 * window, and the body (HTML page or Mastodon's JSON error) saying why. */
static void
expect_throttled(const struct eu_it_resp *r, long window_s, bool json)
{
    if (json) {
        EU_IT_EXPECT_ERROR(r, 429);
        EU_IT_EXPECT_JSTR(r, "error", "Too many requests");
    } else {
        EU_IT_EXPECT_STATUS(r, 429);
        ck_assert_ptr_nonnull(strstr(eu_it_resp_header(r, "Content-Type"), "text/html"));
        ck_assert_msg(strstr(r->body, THROTTLED), "body: %s", r->body);
        ck_assert_ptr_null(strstr(r->body, "name=\"password\""));
    }
    const char *ra = eu_it_resp_header(r, "Retry-After");
    ck_assert_msg(ra != NULL, "no Retry-After in %s", r->headers);
    long secs = strtol(ra, NULL, 10);
    ck_assert_msg(secs > 0 && secs <= window_s, "Retry-After %s, window %ld", ra, window_s);
}

/* POST /oauth/token, password grant, from 127.0.0.1; returns the status. */
static long
grant(struct eu_it_server *s, const char *host, const struct eu_it_app *a, const char *login,
      const char *password, struct eu_it_resp *r)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"grant_type\":\"password\",\"client_id\":\"%s\",\"client_secret\":\"%s\","
             "\"username\":\"%s\",\"password\":\"%s\",\"scope\":\"read\"}",
             a->id, a->secret, login, password);
    int rc = eu_it_http(r, "POST", s->public_port, host, "/oauth/token", NULL, body);
    return rc == 0 ? r->status : 0;
}

struct guess {
    struct eu_it_server *s;
    const struct eu_it_app *a;
    long status;
};

static void *
guess_main(void *arg)
{
    struct guess *g = arg;
    struct eu_it_resp r = {0};
    g->status = grant(g->s, "a.example", g->a, "alice", "wrong guess", &r);
    eu_it_resp_free(&r);
    return NULL;
}

START_TEST(test_per_login_limit)
{
    struct eu_it_opts o = {.extra_toml = "[limits]\nsign_in_attempts_per_login_per_hour = 3\n",
                           /* One check at a time: a refused attempt that
                            * still reached the CPU pool would show as 503. */
                           .server_toml = PROXY "cpu_jobs_per_tenant = 1"};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    json_decref(eu_it_tenant_create(s, "decoy.example", "Decoy"));
    char *db_a = eu_it_tenant_database(s, "a.example");
    char *db_d = eu_it_tenant_database(s, "decoy.example");
    ck_assert_str_eq(db_a, db_d);
    eu_it_account_create(s, "a.example", "alice");
    eu_it_account_create(s, "a.example", "bob");
    eu_it_account_create(s, "decoy.example", "alice");
    struct eu_it_app aa = make_app(s, "a.example"), da = make_app(s, "decoy.example");
    struct eu_it_resp r = {0};

    /* Three wrong guesses for alice from one address are checked... */
    struct browser x = browser_at(s, "a.example", "203.0.113.1", &aa);
    browser_open(&x);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(sign_in(&x, &r, "alice", "wrong guess"), 401);
        ck_assert_msg(strstr(r.body, INVALID), "body: %s", r.body);
    }
    /* ...the fourth is not, and neither is the right password now. */
    ck_assert_int_eq(sign_in(&x, &r, "alice", "wrong guess"), 429);
    expect_throttled(&r, 3600, false);
    sign_in(&x, &r, "alice", PASSWORD);
    expect_throttled(&r, 3600, false);
    /* The counter is the account's: her e-mail address, in any case, is
     * refused from there too. */
    sign_in(&x, &r, "ALICE@a.example", PASSWORD);
    expect_throttled(&r, 3600, false);

    /* The owner, from her own address, is not locked out: by form (with
     * her e-mail address) and by grant. */
    struct browser y = browser_at(s, "a.example", "203.0.113.2", &aa);
    browser_open(&y);
    sign_in(&y, &r, "alice@A.example", PASSWORD);
    expect_signed_in(&r);
    ck_assert_int_eq(grant(s, "a.example", &aa, "alice", PASSWORD, &r), 200);

    /* The password grant counts on the same counter: from 127.0.0.1 the
     * next wrong guesses use up its three (one went on the right one). */
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(grant(s, "a.example", &aa, "alice@a.example", "wrong guess", &r), 400);
    grant(s, "a.example", &aa, "alice", PASSWORD, &r);
    expect_throttled(&r, 3600, true);

    /* A flood of refused guesses is answered without any password check:
     * with one check allowed at a time, any that got that far would be
     * answered 429 by the gate or 400. */
    enum { FLOOD = 12 };
    pthread_t th[FLOOD];
    struct guess g[FLOOD];
    for (int i = 0; i < FLOOD; i++) {
        g[i] = (struct guess){.s = s, .a = &aa};
        ck_assert_int_eq(pthread_create(&th[i], NULL, guess_main, &g[i]), 0);
    }
    for (int i = 0; i < FLOOD; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        ck_assert_int_eq(g[i].status, 429);
    }

    /* Another login from another address signs in, by form and by grant. */
    struct browser b = browser_at(s, "a.example", "203.0.113.3", &aa);
    browser_open(&b);
    sign_in(&b, &r, "bob@a.example", PASSWORD);
    expect_signed_in(&r);
    browser_free(&b);
    ck_assert_int_eq(grant(s, "a.example", &aa, "bob", PASSWORD, &r), 200);
    ck_assert_ptr_nonnull(eu_it_json_str(&r, "access_token"));

    /* The same login on another tenant of the same database is untouched. */
    struct browser d = browser_at(s, "decoy.example", "203.0.113.1", &da);
    browser_open(&d);
    sign_in(&d, &r, "alice", PASSWORD);
    expect_signed_in(&r);
    ck_assert_int_eq(grant(s, "decoy.example", &da, "alice", PASSWORD, &r), 200);

    /* Without Redis nothing is throttled, as for the API limits. */
    if (getenv("EUNHA_TEST_REDIS_STOP")) {
        eu_it_sh("EUNHA_TEST_REDIS_STOP");
        ck_assert_int_eq(grant(s, "a.example", &aa, "alice", PASSWORD, &r), 200);
        browser_open(&x);
        sign_in(&x, &r, "alice", PASSWORD);
        expect_signed_in(&r);
        eu_it_sh("EUNHA_TEST_REDIS_START");
    }

    browser_free(&x);
    browser_free(&y);
    browser_free(&d);
    free(db_a);
    free(db_d);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/*
 * Guesses at one account from many addresses: each address within its own
 * limit, the account's cap in all (four times the limit) stops them, a new
 * address with the right password included, but not the owner from the
 * address she signed in from before the guessing began.
 */
START_TEST(test_owner_known_address)
{
    struct eu_it_opts o = {.extra_toml = "[limits]\nsign_in_attempts_per_login_per_hour = 2\n",
                           .server_toml = PROXY};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    eu_it_account_create(s, "a.example", "alice");
    struct eu_it_app aa = make_app(s, "a.example");
    struct eu_it_resp r = {0};

    struct browser owner = browser_at(s, "a.example", "192.0.2.50", &aa);
    browser_open(&owner);
    sign_in(&owner, &r, "alice", PASSWORD);
    expect_signed_in(&r);

    /* Five addresses, two guesses each: seven are checked (the owner's
     * first sign-in, from an address not yet known, counted as the
     * eighth of the account's cap), the rest refused. */
    int checked = 0, refused = 0;
    for (int i = 0; i < 5; i++) {
        char addr[32];
        snprintf(addr, sizeof(addr), "198.51.100.%d", 20 + i);
        struct browser g = browser_at(s, "a.example", addr, &aa);
        browser_open(&g);
        for (int j = 0; j < 2; j++) {
            long st = sign_in(&g, &r, j ? "alice@a.example" : "alice", "wrong guess");
            if (st == 401) {
                checked++;
            } else {
                expect_throttled(&r, 3600, false);
                refused++;
            }
        }
        browser_free(&g);
    }
    ck_assert_int_eq(checked, 7);
    ck_assert_int_eq(refused, 3);

    /* A new address is refused, even with the right password... */
    struct browser z = browser_at(s, "a.example", "198.51.100.99", &aa);
    browser_open(&z);
    sign_in(&z, &r, "alice", PASSWORD);
    expect_throttled(&r, 3600, false);
    /* ...the owner's known address is not (a new browser there: what is
     * known is the address, not the session). */
    struct browser again = browser_at(s, "a.example", "192.0.2.50", &aa);
    browser_open(&again);
    sign_in(&again, &r, "alice@a.example", PASSWORD);
    expect_signed_in(&r);

    browser_free(&z);
    browser_free(&again);
    browser_free(&owner);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_per_ip_limit)
{
    struct eu_it_opts o = {.extra_toml = "[limits]\nsign_in_attempts_per_ip_per_5min = 4\n",
                           .server_toml = PROXY};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    json_decref(eu_it_tenant_create(s, "decoy.example", "Decoy"));
    eu_it_account_create(s, "a.example", "alice");
    eu_it_account_create(s, "decoy.example", "alice");
    struct eu_it_app aa = make_app(s, "a.example"), da = make_app(s, "decoy.example");
    struct eu_it_resp r = {0};

    /* Four guesses from one address, each for another login... */
    struct browser x = browser_at(s, "a.example", "198.51.100.7", &aa);
    browser_open(&x);
    const char *const logins[] = {"nobody", "alice", "somebody", "bob"};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(sign_in(&x, &r, logins[i], "wrong guess"), 401);
        ck_assert_msg(strstr(r.body, INVALID), "body: %s", r.body);
    }
    /* ...and that address is done for this window, whatever it tries. */
    ck_assert_int_eq(sign_in(&x, &r, "alice", PASSWORD), 429);
    expect_throttled(&r, 300, false);
    ck_assert_msg(strstr(r.body, "Back to sign-in"), "body: %s", r.body);

    /* Another client behind the same proxy signs alice in. */
    struct browser y = browser_at(s, "a.example", "198.51.100.8", &aa);
    browser_open(&y);
    sign_in(&y, &r, "alice", PASSWORD);
    expect_signed_in(&r);

    /* The same address on a decoy tenant has a counter of its own. */
    struct browser d = browser_at(s, "decoy.example", "198.51.100.7", &da);
    browser_open(&d);
    sign_in(&d, &r, "alice", PASSWORD);
    expect_signed_in(&r);

    /* An IPv6 client counts by its /64: a new interface id buys nothing. */
    struct browser v6 = browser_at(s, "a.example", NULL, &aa);
    char addr[64];
    for (int i = 1; i <= 5; i++) {
        snprintf(addr, sizeof(addr), "2001:db8:7:8::%d", i);
        v6.xff = addr;
        if (i == 1)
            browser_open(&v6);
        long st = sign_in(&v6, &r, "alice", i < 5 ? "wrong guess" : PASSWORD);
        if (i < 5) {
            ck_assert_int_eq(st, 401);
        } else {
            expect_throttled(&r, 300, false);
        }
    }
    v6.xff = "2001:db8:7:9::1";
    sign_in(&v6, &r, "alice", PASSWORD);
    expect_signed_in(&r);

    browser_free(&x);
    browser_free(&y);
    browser_free(&d);
    browser_free(&v6);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* The password grant from one address shares that address's counter. */
START_TEST(test_per_ip_limit_password_grant)
{
    struct eu_it_server *s = eu_it_server_start("[limits]\nsign_in_attempts_per_ip_per_5min = 2\n");
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    eu_it_account_create(s, "a.example", "alice");
    struct eu_it_app aa = make_app(s, "a.example");
    struct eu_it_resp r = {0};
    ck_assert_int_eq(grant(s, "a.example", &aa, "alice", "wrong guess", &r), 400);
    EU_IT_EXPECT_JSTR(&r, "error", "invalid_grant");
    ck_assert_int_eq(grant(s, "a.example", &aa, "nobody", "wrong guess", &r), 400);
    grant(s, "a.example", &aa, "alice", PASSWORD, &r);
    expect_throttled(&r, 300, true);
    /* The form from the same address is refused as well. */
    struct browser x = browser_at(s, "a.example", NULL, &aa);
    browser_open(&x);
    sign_in(&x, &r, "alice", PASSWORD);
    expect_throttled(&r, 300, false);
    browser_free(&x);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* /auth/sign_in counts against the general per-IP limit like the API. */
START_TEST(test_api_limit_covers_sign_in)
{
    struct eu_it_server *s = eu_it_server_start("[limits]\napi_requests_per_5min = 3\n");
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    struct eu_it_resp r = {0};
    struct browser x = browser_at(s, "a.example", NULL, NULL);
    for (int i = 0; i < 3; i++) {
        send(&x, &r, "POST", "/auth/sign_in", "email=alice&password=x&client_id=none");
        ck_assert_int_ne(r.status, 429);
        ck_assert_str_eq(eu_it_resp_header(&r, "X-RateLimit-Limit"), "3");
    }
    send(&x, &r, "POST", "/auth/sign_in", "email=alice&password=x&client_id=none");
    EU_IT_EXPECT_ERROR(&r, 429);
    EU_IT_EXPECT_JSTR(&r, "error", "Too many requests");
    ck_assert_str_eq(eu_it_resp_header(&r, "X-RateLimit-Remaining"), "0");
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Retry-After"));
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_failed_sign_in_spends_the_form)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    eu_it_account_create(s, "a.example", "alice");
    struct eu_it_app aa = make_app(s, "a.example");
    struct eu_it_resp r = {0};
    struct browser b = browser_at(s, "a.example", NULL, &aa);
    browser_open(&b);
    char *cookie0 = strdup(b.cookie), *token0 = strdup(b.token);

    ck_assert_int_eq(sign_in(&b, &r, "alice", "wrong guess"), 401);
    ck_assert_msg(strstr(r.body, INVALID), "body: %s", r.body);
    ck_assert_msg(strstr(r.body, "action=\"/auth/sign_in\""), "no form again: %s", r.body);
    /* A new session id and a new token came with the re-rendered form. */
    ck_assert_str_ne(b.cookie, cookie0);
    ck_assert_str_ne(b.token, token0);

    /* The old pair, and the old token with the new session, are spent. */
    char *cookie1 = b.cookie;
    b.cookie = cookie0;
    ck_assert_int_eq(sign_in_with(&b, &r, token0, "alice", PASSWORD), 422);
    ck_assert_msg(strstr(r.body, "Invalid authenticity token"), "body: %s", r.body);
    free(b.cookie);
    b.cookie = cookie1;
    ck_assert_int_eq(sign_in_with(&b, &r, token0, "alice", PASSWORD), 422);
    ck_assert_msg(strstr(r.body, "Invalid authenticity token"), "body: %s", r.body);

    /* The new form works. */
    sign_in(&b, &r, "alice", PASSWORD);
    expect_signed_in(&r);

    free(token0);
    browser_free(&b);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *suite = suite_create("signin_throttle");
    EU_IT_ADD_TCASE(suite, test_per_login_limit, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_owner_known_address, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_per_ip_limit, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_per_ip_limit_password_grant, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_api_limit_covers_sign_in, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_failed_sign_in_spends_the_form, TIMEOUT);
    return eu_it_run_suite(suite);
}
