/*
 * Signing in from a browser without an OAuth client, and two-factor
 * sign-in with TOTP, over HTTP with cookies and CSRF tokens: the
 * standalone sign-in page and its return_to, sign-out, the settings page's
 * set-up (QR code, confirmation with a code and the password, recovery
 * codes shown once), sign-in asking for the code after the password,
 * replayed codes refused, recovery codes working once, wrong codes
 * throttled like wrong passwords, the password grant refused for a
 * two-factor account, disabling; the secret kept sealed under the host
 * key, and one an older version kept in clear still working and sealed
 * on its next use. Codes are computed here from the secret
 * the page shows, by the test's own RFC 6238 (checked against RFC 6238's
 * vectors first). A decoy tenant in the same placement has an "alice" of
 * its own, who is never touched, and whose host takes nothing of the
 * host's (sessions, codes).
 */
#include "harness.h"
#include "webform.h"
#include "world.h"

#include <check.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMEOUT 180
#define HOST "otp.example"
#define DECOY "decoy.example"
#define PW "correct+horse+battery+staple"

/* ---------------------------------------------- the test's own TOTP */

static int
b32_decode(const char *s, unsigned char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    unsigned buf = 0;
    int bits = 0, n = 0;
    for (; *s; s++) {
        const char *p = strchr(abc, *s);
        ck_assert_msg(p && *p, "not base32: %c", *s);
        buf = buf << 5 | (unsigned)(p - abc);
        bits += 5;
        if (bits >= 8) {
            out[n++] = (unsigned char)(buf >> (bits - 8));
            bits -= 8;
        }
    }
    return n;
}

/* RFC 6238 with HMAC-SHA1: the code of key at step, digits long. */
static unsigned long
hotp(const unsigned char *key, int keylen, unsigned long long step, int digits)
{
    unsigned char msg[8], mac[64];
    unsigned maclen = 0;
    for (int i = 7; i >= 0; i--, step >>= 8)
        msg[i] = (unsigned char)step;
    ck_assert_ptr_nonnull(HMAC(EVP_sha1(), key, keylen, msg, 8, mac, &maclen));
    int o = mac[19] & 15;
    unsigned long v = (unsigned long)(mac[o] & 0x7f) << 24 | (unsigned long)mac[o + 1] << 16 |
                      (unsigned long)mac[o + 2] << 8 | mac[o + 3];
    unsigned long mod = 1;
    while (digits--)
        mod *= 10;
    return v % mod;
}

/* The 6-digit code of the base32 secret at step, as text (static). */
static const char *
totp(const char *secret, long long step)
{
    static char out[8];
    unsigned char key[64];
    int n = b32_decode(secret, key);
    snprintf(out, sizeof(out), "%06lu", hotp(key, n, (unsigned long long)step, 6));
    return out;
}

static long long
step_now(void)
{
    return (long long)time(NULL) / 30;
}

/* ------------------------------------------------------------ browser */

/* Opens the sign-in page and sends login and password (urlencoded). */
static void
password_step(struct eu_it_webform *b, struct eu_it_resp *r, const char *login, const char *pw)
{
    eu_it_webform_send(b, r, "GET", "/auth/sign_in?return_to=%2Fsettings%2Fotp_authentication",
                       NULL);
    EU_IT_EXPECT_STATUS(r, 200);
    char fields[1024];
    snprintf(fields, sizeof(fields),
             "email=%s&password=%s&return_to=%%2Fsettings%%2Fotp_"
             "authentication",
             login, pw);
    eu_it_webform_post(b, r, "/auth/sign_in", fields);
}

static void
code_step(struct eu_it_webform *b, struct eu_it_resp *r, const char *code)
{
    char fields[256];
    snprintf(fields, sizeof(fields), "code=%s&return_to=%%2Fsettings%%2Fotp_authentication", code);
    eu_it_webform_post(b, r, "/auth/sign_in", fields);
}

/* Whether the browser is signed in (the settings page opens). */
static bool
signed_in(struct eu_it_webform *b)
{
    struct eu_it_resp r = {0};
    eu_it_webform_send(b, &r, "GET", "/settings/otp_authentication", NULL);
    bool ok = r.status == 200;
    if (!ok)
        ck_assert_int_eq(r.status, 302);
    eu_it_resp_free(&r);
    return ok;
}

static void
sign_out(struct eu_it_webform *b)
{
    struct eu_it_resp r = {0};
    eu_it_webform_send(b, &r, "GET", "/settings/otp_authentication", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_webform_post(b, &r, "/auth/sign_out", "");
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_ptr_null(b->cookie);
    eu_it_resp_free(&r);
}

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice", NULL, NULL, NULL}, {"dalice", DECOY, "alice", NULL}},
};

/* --------------------------------------------------------------- tests */

START_TEST(test_totp_vectors)
{
    /* RFC 6238 Appendix B, SHA-1, 8 digits. */
    const unsigned char *key = (const unsigned char *)"12345678901234567890";
    ck_assert_uint_eq(hotp(key, 20, 59 / 30, 8), 94287082);
    ck_assert_uint_eq(hotp(key, 20, 1111111109 / 30, 8), 7081804);
    ck_assert_uint_eq(hotp(key, 20, 1111111111 / 30, 8), 14050471);
    ck_assert_uint_eq(hotp(key, 20, 1234567890 / 30, 8), 89005924);
    ck_assert_uint_eq(hotp(key, 20, 2000000000 / 30, 8), 69279037);
    ck_assert_uint_eq(hotp(key, 20, 20000000000ULL / 30, 8), 65353130);
    ck_assert_str_eq(totp("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", 1), "287082");
}
END_TEST

/* The sign-in page without a client, return_to, sign-out, CSRF, and the
 * decoy's host taking nothing of the host's session. */
START_TEST(test_standalone_sign_in)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    struct eu_it_webform b = {.s = w.s, .host = HOST};

    /* Signed out, the settings page sends the browser to sign in. */
    eu_it_webform_send(&b, &r, "GET", "/settings/otp_authentication", NULL);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"),
                     "/auth/sign_in?return_to=%2Fsettings%2Fotp_authentication");
    eu_it_webform_send(&b, &r, "GET", "/auth/sign_in?return_to=%2Fsettings%2Fotp_authentication",
                       NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "action=\"/auth/sign_in\""));
    ck_assert_ptr_nonnull(
        strstr(r.body, "name=\"return_to\" value=\"/settings/otp_authentication\""));
    ck_assert_ptr_nonnull(b.cookie);
    char *anon = strdup(b.cookie);

    /* Without the token: refused, nothing signed in. */
    eu_it_webform_send(&b, &r, "POST", "/auth/sign_in", "email=alice&password=" PW);
    EU_IT_EXPECT_STATUS(&r, 422);
    /* A wrong password: the form again, under a new session. */
    eu_it_webform_post(&b, &r, "/auth/sign_in", "email=alice&password=wrong&return_to=%2Fsettings");
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid e-mail address or password."));
    ck_assert_str_ne(b.cookie, anon);
    /* The right one: back to return_to, signed in. */
    eu_it_webform_post(&b, &r, "/auth/sign_in",
                       "email=alice%40" HOST "&password=" PW
                       "&return_to=%2Fsettings%2Fotp_authentication");
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), "/settings/otp_authentication");
    ck_assert(signed_in(&b));
    /* Signed in, the sign-in page goes straight on. */
    eu_it_webform_send(&b, &r, "GET", "/auth/sign_in?return_to=%2Fsettings%2Fotp_authentication",
                       NULL);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), "/settings/otp_authentication");

    /* The host's session is nothing on the decoy's host. */
    struct eu_it_webform d = {.s = w.s, .host = DECOY, .cookie = strdup(b.cookie)};
    ck_assert(!signed_in(&d));
    eu_it_webform_free(&d);

    /* Sign-out needs the session's token. */
    eu_it_webform_send(&b, &r, "POST", "/auth/sign_out", "authenticity_token=nope");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert(signed_in(&b));
    char *old = strdup(b.cookie);
    sign_out(&b);
    ck_assert(!signed_in(&b));
    /* The old cookie is dead too. */
    struct eu_it_webform o = {.s = w.s, .host = HOST, .cookie = old};
    ck_assert(!signed_in(&o));
    eu_it_webform_free(&o);

    /* return_to only ever names a path here. */
    static const char *const bad[] = {"%2F%2Fevil.example%2F", "https%3A%2F%2Fevil.example%2F",
                                      "%2F%5Cevil.example", "evil", "%2Fa%0D%0ASet-Cookie%3Ax"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[256], fields[512];
        snprintf(path, sizeof(path), "/auth/sign_in?return_to=%s", bad[i]);
        eu_it_webform_send(&b, &r, "GET", path, NULL);
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert_ptr_nonnull(strstr(r.body, "name=\"return_to\" value=\"/\""));
        snprintf(fields, sizeof(fields), "email=alice&password=" PW "&return_to=%s", bad[i]);
        eu_it_webform_post(&b, &r, "/auth/sign_in", fields);
        EU_IT_EXPECT_STATUS(&r, 302);
        ck_assert_str_eq(eu_it_resp_header(&r, "Location"), "/");
        sign_out(&b);
    }

    free(anon);
    eu_it_webform_free(&b);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* Set-up, sign-in with a code, replay, recovery codes, the password grant,
 * disabling; the decoy's alice untouched throughout. */
START_TEST(test_two_factor)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    struct eu_it_webform b = {.s = w.s, .host = HOST};

    password_step(&b, &r, "alice", PW);
    EU_IT_EXPECT_STATUS(&r, 302);
    eu_it_webform_send(&b, &r, "GET", "/settings/otp_authentication", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<strong>disabled</strong>"));
    /* Set-up without the token: refused. */
    eu_it_webform_send(&b, &r, "POST", "/settings/otp_authentication", "authenticity_token=x");
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_webform_send(&b, &r, "GET", "/settings/otp_authentication", NULL);
    eu_it_webform_post(&b, &r, "/settings/otp_authentication", "");
    EU_IT_EXPECT_STATUS(&r, 302);
    eu_it_webform_send(&b, &r, "GET", "/settings/otp_authentication", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<svg "));
    const char *k = strstr(r.body, "class=\"otp-secret\">");
    ck_assert_ptr_nonnull(k);
    k += strlen("class=\"otp-secret\">");
    char *secret = strndup(k, strcspn(k, "<"));
    ck_assert_uint_eq(strlen(secret), 32);

    /* Nothing is enabled until a code and the password confirm it. */
    long long step = step_now();
    char fields[1024];
    snprintf(fields, sizeof(fields), "code=%s&password=wrong", totp(secret, step));
    eu_it_webform_post(&b, &r, "/settings/otp_authentication/confirm", fields);
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid password."));
    snprintf(fields, sizeof(fields), "code=%06d&password=" PW,
             (atoi(totp(secret, step)) + 1) % 1000000);
    eu_it_webform_post(&b, &r, "/settings/otp_authentication/confirm", fields);
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid two-factor authentication code."));
    eu_it_webform_post(&b, &r, "/settings/otp_authentication/confirm", "code=&password=" PW);
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM users WHERE otp_required_for_login"), 0);
    snprintf(fields, sizeof(fields), "code=%s&password=" PW, totp(secret, step));
    eu_it_webform_post(&b, &r, "/settings/otp_authentication/confirm", fields);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* Ten recovery codes, shown now. */
    char *codes[10];
    const char *p = r.body;
    for (int i = 0; i < 10; i++) {
        p = strstr(p, "class=\"recovery-code\">");
        ck_assert_ptr_nonnull(p);
        p += strlen("class=\"recovery-code\">");
        codes[i] = strndup(p, strcspn(p, "<"));
        ck_assert_uint_eq(strlen(codes[i]), 16);
    }
    ck_assert_ptr_null(strstr(p, "class=\"recovery-code\">"));
    ck_assert_int_eq(
        eu_it_world_sql_long(&w,
                             "SELECT count(*) FROM users WHERE tenant_id = %s AND "
                             "otp_required_for_login AND cardinality(otp_backup_codes) = 10",
                             w.tid),
        1);
    /* The secret is kept sealed under the host key, not as the page showed
     * it. */
    char *kept = eu_it_world_sql(&w,
                                 "SELECT otp_secret FROM users WHERE tenant_id = %s AND "
                                 "otp_required_for_login",
                                 w.tid);
    ck_assert_ptr_nonnull(kept);
    ck_assert_msg(strncmp(kept, "sealed1:", 8) == 0 && !strstr(kept, secret), "kept %s", kept);
    free(kept);
    /* Only hashes are kept. */
    char *stored = eu_it_world_sql(&w,
                                   "SELECT otp_backup_codes::text FROM users WHERE "
                                   "tenant_id = %s AND otp_required_for_login",
                                   w.tid);
    ck_assert_ptr_null(strstr(stored, codes[0]));
    free(stored);
    eu_it_webform_send(&b, &r, "GET", "/settings/otp_authentication", NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "<strong>enabled</strong>"));
    ck_assert_ptr_null(strstr(r.body, "recovery-code"));
    sign_out(&b);

    /* The password grant gives a two-factor account no token. */
    struct eu_it_app app = eu_it_app_create(w.s, HOST,
                                            "{\"client_name\":\"t\",\"redirect_uris\":\"urn:ietf:"
                                            "wg:oauth:2.0:oob\",\"scopes\":\"read\"}");
    char grant[1024];
    snprintf(grant, sizeof(grant),
             "{\"grant_type\":\"password\",\"client_id\":\"%s\",\"client_secret\":\"%s\","
             "\"username\":\"alice@" HOST "\",\"password\":\"correct horse battery staple\","
             "\"scope\":\"read\"}",
             app.id, app.secret);
    eu_it_callf(w.s, &r, HOST, "POST", NULL, grant, "/oauth/token");
    EU_IT_EXPECT_STATUS(&r, 400);
    ck_assert_str_eq(eu_it_json_str(&r, "error"), "invalid_grant");

    /* The password alone does not sign in: the code is asked for. */
    password_step(&b, &r, "alice", PW);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "name=\"code\""));
    ck_assert(!signed_in(&b));
    /* The pending session is nothing on the decoy's host. */
    struct eu_it_webform d = {
        .s = w.s, .host = DECOY, .cookie = strdup(b.cookie), .csrf = strdup(b.csrf)};
    code_step(&d, &r, totp(secret, step + 1));
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert(!signed_in(&d));
    eu_it_webform_free(&d);
    /* The code used to confirm is spent. */
    code_step(&b, &r, totp(secret, step));
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid two-factor authentication code."));
    ck_assert_ptr_nonnull(strstr(r.body, "name=\"code\""));
    ck_assert(!signed_in(&b));
    /* The next step's code signs in (one step of drift). */
    code_step(&b, &r, totp(secret, step + 1));
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), "/settings/otp_authentication");
    ck_assert(signed_in(&b));
    sign_out(&b);
    /* ... once. */
    password_step(&b, &r, "alice", PW);
    EU_IT_EXPECT_STATUS(&r, 200);
    code_step(&b, &r, totp(secret, step + 1));
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert(!signed_in(&b));
    /* A recovery code, typed in upper case, signs in once. */
    char upper[17];
    for (int i = 0; i < 17; i++)
        upper[i] =
            (char)(codes[0][i] >= 'a' && codes[0][i] <= 'f' ? codes[0][i] - 32 : codes[0][i]);
    code_step(&b, &r, upper);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert(signed_in(&b));
    sign_out(&b);
    password_step(&b, &r, "alice", PW);
    code_step(&b, &r, codes[0]);
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert(!signed_in(&b));
    /* A code without the password step first: the password is asked for. */
    struct eu_it_webform n = {.s = w.s, .host = HOST};
    eu_it_webform_send(&n, &r, "GET", "/auth/sign_in", NULL);
    code_step(&n, &r, codes[1]);
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert_ptr_nonnull(strstr(r.body, "name=\"password\""));
    ck_assert(!signed_in(&n));
    eu_it_webform_free(&n);
    /* Another recovery code, in the OAuth form: asked for after the
     * password, then on to the consent page. */
    eu_it_webform_free(&b);
    b = (struct eu_it_webform){.s = w.s, .host = HOST};
    char authz[1024], client[256];
    snprintf(client, sizeof(client),
             "client_id=%s&redirect_uri=urn%%3Aietf%%3Awg%%3Aoauth%%3A2.0%%3Aoob"
             "&response_type=code&scope=read",
             app.id);
    snprintf(authz, sizeof(authz), "/oauth/authorize?%s", client);
    eu_it_webform_send(&b, &r, "GET", authz, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(fields, sizeof(fields), "email=alice&password=" PW "&%s", client);
    eu_it_webform_post(&b, &r, "/auth/sign_in", fields);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "name=\"code\""));
    ck_assert_ptr_nonnull(strstr(r.body, "name=\"client_id\""));
    eu_it_webform_send(&b, &r, "GET", authz, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "action=\"/oauth/authorize\"") == NULL, "consent unsigned");
    snprintf(fields, sizeof(fields), "code=%s&%s", codes[1], client);
    eu_it_webform_post(&b, &r, "/auth/sign_in", fields);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_msg(strncmp(eu_it_resp_header(&r, "Location"), "/oauth/authorize?", 17) == 0,
                  "Location %s", eu_it_resp_header(&r, "Location"));
    eu_it_webform_send(&b, &r, "GET", authz, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "action=\"/oauth/authorize\""));
    ck_assert(signed_in(&b));

    /* The decoy's alice signs in with her password alone. */
    struct eu_it_webform da = {.s = w.s, .host = DECOY};
    password_step(&da, &r, "alice", PW);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert(signed_in(&da));
    eu_it_webform_free(&da);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM users WHERE tenant_id = %s "
                                          "AND (otp_required_for_login OR otp_secret IS NOT "
                                          "NULL)",
                                          w.decoy_tid),
                     0);

    /* Disabling takes the password and a code. */
    eu_it_webform_send(&b, &r, "GET", "/settings/otp_authentication", NULL);
    snprintf(fields, sizeof(fields), "code=%s&password=wrong", codes[2]);
    eu_it_webform_post(&b, &r, "/settings/otp_authentication/disable", fields);
    EU_IT_EXPECT_STATUS(&r, 401);
    eu_it_webform_post(&b, &r, "/settings/otp_authentication/disable", "code=000000&password=" PW);
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM users WHERE otp_required_for_login"), 1);
    snprintf(fields, sizeof(fields), "code=%s&password=" PW, codes[2]);
    eu_it_webform_post(&b, &r, "/settings/otp_authentication/disable", fields);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<strong>disabled</strong>"));
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM users WHERE otp_secret IS NOT NULL"), 0);
    sign_out(&b);
    password_step(&b, &r, "alice", PW);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert(signed_in(&b));

    for (int i = 0; i < 10; i++)
        free(codes[i]);
    free(secret);
    eu_it_webform_free(&b);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* Wrong codes count against the sign-in limit of the account. */
START_TEST(test_code_throttled)
{
    struct eu_it_world_opts o = world;
    o.extra_toml = "[limits]\nsign_in_attempts_per_login_per_hour = 4\n";
    struct world w = {0};
    eu_it_world_start(&w, &o);
    struct eu_it_resp r = {0};
    /* Two-factor sign-in for alice, straight in the database. */
    const char *secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    free(eu_it_world_sql(&w,
                         "UPDATE users SET otp_secret = '%s', otp_required_for_login = true "
                         "WHERE tenant_id = %s RETURNING id",
                         secret, w.tid));
    struct eu_it_webform b = {.s = w.s, .host = HOST};
    password_step(&b, &r, "alice", PW); /* 1 */
    EU_IT_EXPECT_STATUS(&r, 200);
    code_step(&b, &r, "000000"); /* 2 */
    EU_IT_EXPECT_STATUS(&r, 401);
    code_step(&b, &r, "111111"); /* 3 */
    EU_IT_EXPECT_STATUS(&r, 401);
    code_step(&b, &r, "222222"); /* 4 */
    EU_IT_EXPECT_STATUS(&r, 401);
    /* Past the limit even the right code is refused. */
    code_step(&b, &r, totp(secret, step_now()));
    EU_IT_EXPECT_STATUS(&r, 429);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Retry-After"));
    ck_assert(!signed_in(&b));
    /* The decoy's alice is not held back. */
    struct eu_it_webform d = {.s = w.s, .host = DECOY};
    password_step(&d, &r, "alice", PW);
    EU_IT_EXPECT_STATUS(&r, 302);
    eu_it_webform_free(&d);
    /* Bad input to the code step: a clear 4xx, nothing signed in. */
    struct eu_it_webform x = {.s = w.s, .host = HOST};
    eu_it_webform_send(&x, &r, "GET", "/auth/sign_in", NULL);
    eu_it_webform_send(&x, &r, "POST", "/auth/sign_in", "code=123456");
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_webform_free(&x);
    eu_it_webform_free(&b);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* A secret an older version kept in clear still signs in, and is sealed
 * by the sign-in that spends its code; the sealed one signs in again. */
START_TEST(test_clear_secret_sealed)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    const char *secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    free(eu_it_world_sql(&w,
                         "UPDATE users SET otp_secret = '%s', otp_required_for_login = true "
                         "WHERE tenant_id = %s RETURNING id",
                         secret, w.tid));
    struct eu_it_webform b = {.s = w.s, .host = HOST};
    long long step = step_now();
    password_step(&b, &r, "alice", PW);
    EU_IT_EXPECT_STATUS(&r, 200);
    code_step(&b, &r, totp(secret, step));
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert(signed_in(&b));
    char *kept = eu_it_world_sql(&w,
                                 "SELECT otp_secret FROM users WHERE tenant_id = %s AND "
                                 "otp_required_for_login",
                                 w.tid);
    ck_assert_msg(kept && strncmp(kept, "sealed1:", 8) == 0, "kept %s", kept ? kept : "NULL");
    free(kept);
    sign_out(&b);
    password_step(&b, &r, "alice", PW);
    EU_IT_EXPECT_STATUS(&r, 200);
    code_step(&b, &r, totp(secret, step + 1));
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert(signed_in(&b));
    sign_out(&b);
    eu_it_webform_free(&b);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    if (sodium_init() < 0)
        return 1;
    Suite *suite = suite_create("otp");
    EU_IT_ADD_TCASE(suite, test_totp_vectors, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_standalone_sign_in, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_two_factor, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_code_throttled, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_clear_secret_sealed, TIMEOUT);
    return eu_it_run_suite(suite);
}
