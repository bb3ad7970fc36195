/*
 * The account's own password change and deletion, through GoToSocial's API
 * (POST /api/v1/user/password_change, POST /api/v1/accounts/delete) and
 * the settings pages (cookies and CSRF), and GET /api/v1/accounts?id[]=.
 * A password change ends the other browser sessions and keeps the one
 * that asked; a deletion suspends at once (tokens and sessions stop),
 * queues Delete of the actor to its followers' and followed accounts'
 * inboxes, and the purge removes its rows. Bad input changes nothing, and
 * the decoy tenant's users (an "alice" of its own) are never touched.
 */
#include "harness.h"
#include "webform.h"
#include "world.h"

#include <check.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define HOST "life.example"
#define DECOY "decoy.example"
#define PW "correct+horse+battery+staple"
#define NEWPW "a new horse battery staple"

/* Signs the browser in as login with password pw (urlencoded); the
 * status of the attempt. */
static long
sign_in(struct eu_it_webform *b, const char *login, const char *pw)
{
    struct eu_it_resp r = {0};
    eu_it_webform_send(b, &r, "GET", "/auth/sign_in", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    char fields[256];
    snprintf(fields, sizeof(fields), "email=%s&password=%s", login, pw);
    eu_it_webform_post(b, &r, "/auth/sign_in", fields);
    long st = r.status;
    eu_it_resp_free(&r);
    return st;
}

static bool
signed_in(struct eu_it_webform *b, const char *page)
{
    struct eu_it_resp r = {0};
    eu_it_webform_send(b, &r, "GET", page, NULL);
    bool ok = r.status == 200;
    if (!ok)
        ck_assert_int_eq(r.status, 302);
    eu_it_resp_free(&r);
    return ok;
}

static void
api(struct world *w, struct eu_it_resp *r, const char *host, const char *tok, const char *method,
    const char *path, const char *json)
{
    eu_it_callf(w->s, r, host, method, tok, json, "%s", path);
}

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .extra_toml = "[workers]\nsuspended_retention_seconds = 2\n",
    .users = {{"alice", NULL, NULL, "read write"},
              {"bob", NULL, NULL, "read write"},
              {"carl", NULL, NULL, "read write"},
              {"readonly", NULL, "alice", "read"},
              {"dalice", DECOY, "alice", "read write"}},
};

START_TEST(test_password_change)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    const char *tok = eu_it_tok(&w, "alice");
    struct eu_it_webform one = {.s = w.s, .host = HOST}, two = {.s = w.s, .host = HOST};
    ck_assert_int_eq(sign_in(&one, "alice", PW), 302);
    ck_assert_int_eq(sign_in(&two, "alice", PW), 302);

    /* Bad input: refused, nothing changed. */
    api(&w, &r, HOST, tok, "POST", "/api/v1/user/password_change", "{\"old_password\":\"x\"}");
    EU_IT_EXPECT_STATUS(&r, 400);
    ck_assert_ptr_nonnull(eu_it_json_str(&r, "error"));
    api(&w, &r, HOST, tok, "POST", "/api/v1/user/password_change",
        "{\"old_password\":\"" EU_IT_PASSWORD "\",\"new_password\":\"short\"}");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "error"), "too short"));
    api(&w, &r, HOST, tok, "POST", "/api/v1/user/password_change",
        "{\"old_password\":\"" EU_IT_PASSWORD
        "\",\"new_password\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}");
    EU_IT_EXPECT_STATUS(&r, 422);
    api(&w, &r, HOST, tok, "POST", "/api/v1/user/password_change",
        "{\"old_password\":\"wrong password\",\"new_password\":\"" NEWPW "\"}");
    EU_IT_EXPECT_STATUS(&r, 401);
    /* The scope: write:accounts. */
    api(&w, &r, HOST, eu_it_tok(&w, "readonly"), "POST", "/api/v1/user/password_change",
        "{\"old_password\":\"" EU_IT_PASSWORD "\",\"new_password\":\"" NEWPW "\"}");
    EU_IT_EXPECT_STATUS(&r, 403);
    ck_assert(signed_in(&one, "/settings/password"));
    ck_assert(signed_in(&two, "/settings/password"));

    /* The right one: the token that asked still works, the browser
     * sessions end, the new password signs in and the old one no more. */
    api(&w, &r, HOST, tok, "POST", "/api/v1/user/password_change",
        "{\"old_password\":\"" EU_IT_PASSWORD "\",\"new_password\":\"" NEWPW "\"}");
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, HOST, tok, "GET", "/api/v1/accounts/verify_credentials", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(!signed_in(&one, "/settings/password"));
    ck_assert(!signed_in(&two, "/settings/password"));
    eu_it_webform_free(&one);
    eu_it_webform_free(&two);
    one = (struct eu_it_webform){.s = w.s, .host = HOST};
    two = (struct eu_it_webform){.s = w.s, .host = HOST};
    ck_assert_int_eq(sign_in(&one, "alice", PW), 401);
    ck_assert_int_eq(sign_in(&one, "alice", "a+new+horse+battery+staple"), 302);
    ck_assert_int_eq(sign_in(&two, "alice", "a+new+horse+battery+staple"), 302);
    /* The decoy's alice keeps hers. */
    struct eu_it_webform d = {.s = w.s, .host = DECOY};
    ck_assert_int_eq(sign_in(&d, "alice", PW), 302);

    /* The page: CSRF, then the change; this session stays, the other ends. */
    eu_it_webform_send(&one, &r, "GET", "/settings/password", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "name=\"new_password\""));
    eu_it_webform_send(
        &one, &r, "POST", "/settings/password",
        "authenticity_token=nope&old_password=a+new+horse+battery+staple&new_password=" PW);
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_webform_post(&one, &r, "/settings/password", "old_password=wrong&new_password=" PW);
    EU_IT_EXPECT_STATUS(&r, 401);
    eu_it_webform_post(&one, &r, "/settings/password",
                       "old_password=a+new+horse+battery+staple&new_password=" PW);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(signed_in(&one, "/settings/password"));
    ck_assert(!signed_in(&two, "/settings/password"));
    ck_assert(signed_in(&d, "/settings/password"));
    ck_assert_int_eq(sign_in(&two, "alice", PW), 302);

    eu_it_webform_free(&one);
    eu_it_webform_free(&two);
    eu_it_webform_free(&d);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_delete)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    const char *tok = eu_it_tok(&w, "alice");
    const char *alice = eu_it_id(&w, "alice");
    /* A remote follower, a remote account alice follows, on two servers. */
    char *fan = eu_it_remote_account(w.db, w.tid, "http://fans.example/users/fan", true);
    char *idol = eu_it_remote_account(w.db, w.tid, "http://idols.example/users/idol", false);
    free(eu_it_world_sql(&w,
                         "INSERT INTO follows (tenant_id, account_id, target_account_id) VALUES"
                         " (%s, %s, %s), (%s, %s, %s) RETURNING 1",
                         w.tid, fan, alice, w.tid, alice, idol));
    struct eu_it_webform b = {.s = w.s, .host = HOST};
    ck_assert_int_eq(sign_in(&b, "alice", PW), 302);

    /* Bad input and a wrong password: refused, nothing changed. */
    api(&w, &r, HOST, tok, "POST", "/api/v1/accounts/delete", "{}");
    EU_IT_EXPECT_STATUS(&r, 400);
    api(&w, &r, HOST, tok, "POST", "/api/v1/accounts/delete", "{\"password\":\"wrong\"}");
    EU_IT_EXPECT_STATUS(&r, 403);
    api(&w, &r, HOST, eu_it_tok(&w, "readonly"), "POST", "/api/v1/accounts/delete",
        "{\"password\":\"" EU_IT_PASSWORD "\"}");
    EU_IT_EXPECT_STATUS(&r, 403);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM accounts WHERE tenant_id = %s AND "
                                          "id = %s AND suspended_at IS NULL",
                                          w.tid, alice),
                     1);

    api(&w, &r, HOST, tok, "POST", "/api/v1/accounts/delete",
        "{\"password\":\"" EU_IT_PASSWORD "\"}");
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert_str_eq(eu_it_json_str(&r, "message"), "accepted");
    /* Suspended at once: the token and the session stop working. */
    api(&w, &r, HOST, tok, "GET", "/api/v1/accounts/verify_credentials", NULL);
    ck_assert_int_eq(r.status, 401);
    ck_assert(!signed_in(&b, "/settings/delete"));
    /* Delete of the actor queued for the follower's shared inbox and the
     * followed account's inbox. */
    long jobs = 0;
    for (int i = 0; i < 50 && jobs < 2; i++) {
        jobs = eu_it_world_sql_long(
            &w,
            "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'ap_deliver'"
            " AND payload->'activity'->>'type' = 'Delete'"
            " AND payload->'activity'->>'object' = 'http://" HOST "/users/alice'"
            " AND payload->>'inbox' IN ('http://fans.example/inbox',"
            " 'http://idols.example/users/idol/inbox')",
            w.tid);
        if (jobs < 2)
            eu_it_sleep_ms(100);
    }
    ck_assert_int_eq(jobs, 2);
    /* Deleting again: the account is gone for the API. */
    api(&w, &r, HOST, tok, "POST", "/api/v1/accounts/delete",
        "{\"password\":\"" EU_IT_PASSWORD "\"}");
    ck_assert_int_eq(r.status, 401);
    /* The purge removes the rows (retention 2 s here). */
    long left = 1;
    for (int i = 0; i < 200 && left; i++) {
        left = eu_it_world_sql_long(
            &w, "SELECT count(*) FROM accounts WHERE tenant_id = %s AND id = %s", w.tid, alice);
        if (left)
            eu_it_sleep_ms(100);
    }
    ck_assert_int_eq(left, 0);
    /* A suspension by the operator: at its retention the Delete of carl's
     * actor goes to his remote follower before his rows go. */
    free(eu_it_world_sql(&w,
                         "INSERT INTO follows (tenant_id, account_id, target_account_id) VALUES"
                         " (%s, %s, %s) RETURNING 1",
                         w.tid, fan, eu_it_id(&w, "carl")));
    {
        char path[256];
        snprintf(path, sizeof path, "/admin/v1/tenants/%s/accounts/%s/suspend", HOST,
                 eu_it_id(&w, "carl"));
        eu_it_admin(w.s, "POST", path, NULL, &r);
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    jobs = 0;
    for (int i = 0; i < 100 && jobs < 1; i++) {
        jobs = eu_it_world_sql_long(
            &w,
            "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'ap_deliver'"
            " AND payload->'activity'->>'type' = 'Delete'"
            " AND payload->'activity'->>'object' = 'http://" HOST "/users/carl'"
            " AND payload->>'inbox' = 'http://fans.example/inbox'",
            w.tid);
        if (jobs < 1)
            eu_it_sleep_ms(100);
    }
    ck_assert_int_eq(jobs, 1);
    left = 1;
    for (int i = 0; i < 200 && left; i++) {
        left = eu_it_world_sql_long(
            &w, "SELECT count(*) FROM accounts WHERE tenant_id = %s AND id = %s", w.tid,
            eu_it_id(&w, "carl"));
        if (left)
            eu_it_sleep_ms(100);
    }
    ck_assert_int_eq(left, 0);

    /* Her name stays taken, as Mastodon keeps it: for a sign-up, and for
     * the operator too; the decoy's own alice keeps hers. */
    {
        char *app = NULL;
        api(&w, &r, HOST, NULL, "POST", "/api/v1/apps",
            "{\"client_name\":\"x\",\"redirect_uris\":\"urn:ietf:wg:oauth:2.0:oob\","
            "\"scopes\":\"read write\"}");
        EU_IT_EXPECT_STATUS(&r, 200);
        char body[512];
        snprintf(body, sizeof body,
                 "{\"grant_type\":\"client_credentials\",\"client_id\":\"%s\","
                 "\"client_secret\":\"%s\",\"scope\":\"write\"}",
                 eu_it_json_str(&r, "client_id"), eu_it_json_str(&r, "client_secret"));
        api(&w, &r, HOST, NULL, "POST", "/oauth/token", body);
        EU_IT_EXPECT_STATUS(&r, 200);
        app = strdup(eu_it_json_str(&r, "access_token"));
        api(&w, &r, HOST, app, "POST", "/api/v1/accounts",
            "{\"username\":\"Alice\",\"email\":\"new-alice@x.example\","
            "\"password\":\"hunter2hunter2\",\"agreement\":true,\"locale\":\"en\"}");
        EU_IT_EXPECT_STATUS(&r, 422);
        ck_assert_msg(strstr(r.body, "ERR_TAKEN"), "%s", r.body);
        char path[256];
        snprintf(path, sizeof path, "/admin/v1/tenants/%s/accounts", HOST);
        eu_it_admin(w.s, "POST", path,
                    "{\"username\":\"alice\",\"email\":\"alice2@x.example\","
                    "\"password\":\"hunter2hunter2\"}",
                    &r);
        EU_IT_EXPECT_STATUS(&r, 409);
        ck_assert_int_eq(eu_it_world_sql_long(&w,
                                              "SELECT count(*) FROM reserved_usernames"
                                              " WHERE tenant_id = %s AND username = 'alice'",
                                              w.tid),
                         1);
        ck_assert_int_eq(eu_it_world_sql_long(&w,
                                              "SELECT count(*) FROM reserved_usernames"
                                              " WHERE tenant_id = %s",
                                              w.decoy_tid),
                         0);
        free(app);
    }
    /* The decoy's alice is untouched. */
    api(&w, &r, DECOY, eu_it_tok(&w, "dalice"), "GET", "/api/v1/accounts/verify_credentials", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                          " AND suspended_at IS NOT NULL",
                                          w.decoy_tid),
                     0);

    /* The page: bob deletes his account from the browser. */
    struct eu_it_webform bob = {.s = w.s, .host = HOST};
    ck_assert_int_eq(sign_in(&bob, "bob", PW), 302);
    eu_it_webform_send(&bob, &r, "GET", "/settings/delete", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "@bob"));
    /* The decoy's host takes nothing of the session. */
    struct eu_it_webform x = {
        .s = w.s, .host = DECOY, .cookie = strdup(bob.cookie), .csrf = strdup(bob.csrf)};
    eu_it_webform_post(&x, &r, "/settings/delete", "password=" PW);
    EU_IT_EXPECT_STATUS(&r, 302);
    eu_it_webform_free(&x);
    eu_it_webform_send(&bob, &r, "POST", "/settings/delete",
                       "authenticity_token=nope&password=" PW);
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_webform_post(&bob, &r, "/settings/delete", "password=wrong");
    EU_IT_EXPECT_STATUS(&r, 403);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                          " AND suspended_at IS NOT NULL",
                                          w.tid),
                     0);
    eu_it_webform_post(&bob, &r, "/settings/delete", "password=" PW);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(bob.cookie);
    api(&w, &r, HOST, eu_it_tok(&w, "bob"), "GET", "/api/v1/accounts/verify_credentials", NULL);
    ck_assert_int_eq(r.status, 401);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                          " AND domain IS NULL AND username = 'alice'",
                                          w.decoy_tid),
                     1);

    free(fan);
    free(idol);
    eu_it_webform_free(&b);
    eu_it_webform_free(&bob);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_accounts_by_id)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char path[4096];
    snprintf(path, sizeof(path), "/api/v1/accounts?id[]=%s&id[]=%s&id[]=%s&id[]=999999&id[]=%s",
             eu_it_id(&w, "bob"), eu_it_id(&w, "alice"), eu_it_id(&w, "bob"),
             eu_it_id(&w, "dalice"));
    api(&w, &r, HOST, NULL, "GET", path, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* Missing ones and the decoy's account are left out, duplicates once,
     * in the order asked. */
    ck_assert_uint_eq(json_array_size(r.json), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r.json, 0), "id")),
                     eu_it_id(&w, "bob"));
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r.json, 1), "username")),
                     "alice");
    api(&w, &r, HOST, NULL, "GET", "/api/v1/accounts", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_uint_eq(json_array_size(r.json), 0);
    api(&w, &r, HOST, NULL, "GET", "/api/v1/accounts?id[]=abc", NULL);
    EU_IT_EXPECT_STATUS(&r, 422);
    /* At most 40. */
    size_t n = (size_t)snprintf(path, sizeof(path), "/api/v1/accounts?");
    for (int i = 0; i < 41; i++)
        n += (size_t)snprintf(path + n, sizeof(path) - n, "id[]=%d&", 1000 + i);
    api(&w, &r, HOST, NULL, "GET", path, NULL);
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    if (sodium_init() < 0)
        return 1;
    Suite *suite = suite_create("account_life");
    EU_IT_ADD_TCASE(suite, test_password_change, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_delete, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_accounts_by_id, TIMEOUT);
    return eu_it_run_suite(suite);
}
