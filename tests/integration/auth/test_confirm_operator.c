/*
 * Sign-ups on a host without [mail] and with confirm_without_mail =
 * "operator" (docs/mail.md): the account waits unconfirmed exactly as with
 * mail (its token answers Mastodon's 403), the confirmation mail with its
 * link is written to the log, and the account is confirmed either by that
 * link or by the operator through POST /admin/v1/tenants/{domain}/
 * accounts/{id}/confirm, which answers 404 for an id of another tenant
 * (the decoy in the same placement) and confirms nothing there. With the
 * default ("auto") a sign-up without mail is confirmed at once, as every
 * other suite that signs up relies on.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "confirm.example"
#define DECOY "decoy.example"
#define WAIT_MS 20000
#define OPERATOR_TOML                                                                              \
    "[mail]\nconfirm_without_mail = \"operator\"\n[workers]\nqueue_idle_poll_seconds = 1\n"

/* Signs user up on domain; returns the new user's token. */
static char *
signup(struct eu_it_server *s, const char *domain, const char *app, const char *user)
{
    struct eu_it_resp r = {0};
    char body[512];
    snprintf(body, sizeof(body),
             "{\"username\":\"%s\",\"email\":\"%s@mail.example\",\"password\":\"hunter2hunter2\","
             "\"agreement\":true,\"locale\":\"en\"}",
             user, user);
    eu_it_http(&r, "POST", s->public_port, domain, "/api/v1/accounts", app, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *tok = strdup(eu_it_json_str(&r, "access_token"));
    eu_it_resp_free(&r);
    return tok;
}

/* The status verify_credentials answers for tok on domain. */
static int
verify(struct eu_it_server *s, const char *domain, const char *tok)
{
    struct eu_it_resp r = {0};
    eu_it_http(&r, "GET", s->public_port, domain, "/api/v1/accounts/verify_credentials", tok, NULL);
    int status = r.status;
    eu_it_resp_free(&r);
    return status;
}

/* The confirmation token of the mail to `to` the log holds, once the mail
 * job wrote it (caller frees). */
static char *
token_in_log(struct eu_it_server *s, const char *to)
{
    char want[128];
    snprintf(want, sizeof want, "this mail to %s was not sent", to);
    long long until = eu_it_now_ms() + WAIT_MS;
    for (;;) {
        FILE *f = fopen(s->log_path, "r");
        ck_assert_ptr_nonnull(f);
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *log = malloc((size_t)n + 1);
        size_t got = fread(log, 1, (size_t)n, f);
        log[got] = '\0';
        fclose(f);
        const char *m = strstr(log, want);
        const char *link = m ? strstr(m, "confirmation_token=") : NULL;
        if (link) {
            link += strlen("confirmation_token=");
            size_t len = strspn(link, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789-_");
            char *tok = strndup(link, len);
            free(log);
            return tok;
        }
        free(log);
        ck_assert_msg(eu_it_now_ms() < until, "no mail to %s in the log", to);
        eu_it_sleep_ms(100);
    }
}

START_TEST(test_operator_confirms)
{
    struct eu_it_server *s = eu_it_server_start(OPERATOR_TOML);
    json_decref(eu_it_tenant_create(s, HOST, "Confirm"));
    json_decref(eu_it_tenant_create(s, DECOY, "Decoy"));
    char *db = eu_it_tenant_database(s, HOST);
    char *tid = eu_it_tenant_id(s, HOST);
    char *app = eu_it_app_token(s, HOST, "write:accounts");
    struct eu_it_resp r = {0};
    char path[256], sql[256];

    /* alice waits for her link, which the log holds, and opens it. */
    char *alice = signup(s, HOST, app, "alice");
    ck_assert_int_eq(verify(s, HOST, alice), 403);
    char *link = token_in_log(s, "alice@mail.example");
    snprintf(path, sizeof path, "/auth/confirmation?confirmation_token=%s", link);
    eu_it_public(s, "GET", HOST, path, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(verify(s, HOST, alice), 200);
    free(link);

    /* bob is confirmed by the operator instead. */
    char *bob = signup(s, HOST, app, "bob");
    ck_assert_int_eq(verify(s, HOST, bob), 403);
    char *bob_link = token_in_log(s, "bob@mail.example");
    snprintf(sql, sizeof sql,
             "SELECT id FROM accounts WHERE tenant_id = %s AND username = 'bob'"
             " AND domain IS NULL",
             tid);
    char *bob_id = eu_it_pg_exec(db, sql);
    ck_assert_ptr_nonnull(bob_id);
    /* Not through another tenant's path. */
    snprintf(path, sizeof path, "/admin/v1/tenants/" DECOY "/accounts/%s/confirm", bob_id);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(verify(s, HOST, bob), 403);
    eu_it_admin(s, "POST", "/admin/v1/tenants/" HOST "/accounts/12345/confirm", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_admin(s, "POST", "/admin/v1/tenants/" HOST "/accounts/x/confirm", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(path, sizeof path, "/admin/v1/tenants/" HOST "/accounts/%s/confirm", bob_id);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_json_str(&r, "id"), bob_id);
    ck_assert_int_eq(verify(s, HOST, bob), 200);
    /* The link he was sent is spent. */
    snprintf(path, sizeof path, "/auth/confirmation?confirmation_token=%s", bob_link);
    eu_it_public(s, "GET", HOST, path, &r);
    EU_IT_EXPECT_STATUS(&r, 404);
    /* Confirming again changes nothing and still answers. */
    snprintf(path, sizeof path, "/admin/v1/tenants/" HOST "/accounts/%s/confirm", bob_id);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* The decoy's own sign-up waits too, and the operator's confirmation on
     * this tenant did not reach it. */
    char *dapp = eu_it_app_token(s, DECOY, "write:accounts");
    char *dave = signup(s, DECOY, dapp, "dave");
    ck_assert_int_eq(verify(s, DECOY, dave), 403);

    free(dave);
    free(dapp);
    free(bob_id);
    free(bob_link);
    free(bob);
    free(alice);
    free(app);
    free(tid);
    free(db);
    eu_it_resp_free(&r);
    eu_it_server_free(s);
}
END_TEST

/* The default: no mail, no wait. */
START_TEST(test_auto_by_default)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, HOST, "Confirm"));
    char *app = eu_it_app_token(s, HOST, "write:accounts");
    char *alice = signup(s, HOST, app, "alice");
    ck_assert_int_eq(verify(s, HOST, alice), 200);
    free(alice);
    free(app);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("confirm_operator");
    EU_IT_ADD_TCASE(s, test_operator_confirms, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_auto_by_default, TIMEOUT);
    return eu_it_run_suite(s);
}
