/*
 * Resolving remote accounts (src/ap/resolve.c) through
 * GET /api/v2/search?resolve=true: two tenants of one server find each
 * other's accounts through real HTTP (the fetch client maps their hosts to
 * the server's own listener), and a fake peer (ap_peer.h) counts what is
 * fetched, so a second resolve within a day fetches nothing.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ap_peer.h"

#define TIMEOUT 180

START_TEST(test_tenants_resolve_each_other)
{
    struct eu_it_opts o = {.extra_toml = PEER_TOML};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.test", "A"));
    json_decref(eu_it_tenant_create(s, "b.test", "B"));
    json_decref(eu_it_tenant_create(s, "d.test", "Decoy"));
    free(eu_it_account_seed(s, "a.test", "alice"));
    free(eu_it_account_seed(s, "b.test", "bob"));
    free(eu_it_account_seed(s, "d.test", "dora"));
    char *token = eu_it_user_token(s, "a.test", "alice", "read write");
    char *db = eu_it_tenant_database(s, "a.test");
    char *a_id = eu_it_tenant_id(s, "a.test");
    char *b_id = eu_it_tenant_id(s, "b.test");
    char *d_id = eu_it_tenant_id(s, "d.test");
    struct eu_it_resp r = {0};

    /* Without resolve, or without a user, nothing is fetched. */
    eu_it_callf(s, &r, "a.test", "GET", token, NULL, "/api/v2/search?q=%%40bob%%40b.test");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 0);
    eu_it_callf(s, &r, "a.test", "GET", NULL, NULL,
                "/api/v2/search?q=%%40bob%%40b.test&resolve=true");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 0);

    eu_it_callf(s, &r, "a.test", "GET", token, NULL,
                "/api/v2/search?q=%%40bob%%40b.test&resolve=true&type=accounts");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 1);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.acct", "bob@b.test");
    EU_IT_EXPECT_JSTR(&r, "accounts.0.username", "bob");
    char *bob_in_a = strdup(json_string_value(eu_it_jpath(r.json, "accounts.0.id")));

    /* A's row for bob carries B's key for bob: the document came from B. */
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "SELECT (SELECT public_key FROM accounts WHERE tenant_id = %s AND id = %s"
             "  AND domain = 'b.test' AND uri = 'http://b.test/users/bob')"
             " = (SELECT public_key FROM accounts WHERE tenant_id = %s AND username = 'bob'"
             "  AND domain IS NULL)",
             a_id, bob_in_a, b_id);
    char *same = eu_it_pg_exec(db, sql);
    ck_assert_str_eq(same, "t");
    free(same);

    /* Now known: found without resolving, once. */
    eu_it_callf(s, &r, "a.test", "GET", token, NULL, "/api/v2/search?q=bob%%40b.test");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 1);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.id", bob_in_a);
    eu_it_callf(s, &r, "a.test", "GET", token, NULL, "/api/v2/search?q=bob%%40b.test&resolve=true");
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 1);

    /* By actor URL too. */
    eu_it_callf(s, &r, "a.test", "GET", token, NULL,
                "/api/v2/search?q=http%%3A%%2F%%2Fb.test%%2Fusers%%2Fbob&resolve=true");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.acct", "bob@b.test");

    /* Nobody there: no account, no error. */
    eu_it_callf(s, &r, "a.test", "GET", token, NULL,
                "/api/v2/search?q=%%40nobody%%40b.test&resolve=true");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 0);

    /* The decoy (same database) got no remote rows; B none of A's. */
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM accounts WHERE tenant_id IN (%s, %s) AND domain IS NOT NULL",
             d_id, b_id);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 0);

    free(bob_in_a);
    free(token);
    free(db);
    free(a_id);
    free(b_id);
    free(d_id);
    eu_it_resp_free(&r);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_resolve_is_cached)
{
    struct eu_it_opts o = {.extra_toml = PEER_TOML};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.test", "A"));
    free(eu_it_account_seed(s, "a.test", "alice"));
    char *token = eu_it_user_token(s, "a.test", "alice", "read");
    struct peer *p = peer_start();
    struct eu_it_resp r = {0};

    eu_it_callf(s, &r, "a.test", "GET", token, NULL, "/api/v2/search?q=%%40peer%%40%s&resolve=true",
                p->host);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 1);
    char acct[128];
    snprintf(acct, sizeof(acct), "peer@%s", p->host);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.acct", acct);
    ck_assert_int_eq(peer_webfingers(p), 1);
    ck_assert_int_eq(peer_fetches(p, 0), 1);

    /* signed by a.test's instance actor */
    eu_it_public(s, "GET", "a.test", "/actor", &r);
    char *ia = strdup(json_string_value(eu_it_jpath(r.json, "publicKey.publicKeyPem")));
    peer_check_last_get(p, 0, "http://a.test/actor#main-key", ia);
    free(ia);

    /* again, by acct and by URL: the row is fresh, nothing is fetched */
    eu_it_callf(s, &r, "a.test", "GET", token, NULL, "/api/v2/search?q=%%40peer%%40%s&resolve=true",
                p->host);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.acct", acct);
    eu_it_callf(s, &r, "a.test", "GET", token, NULL,
                "/api/v2/search?q=http%%3A%%2F%%2F%s%%2Fusers%%2Fpeer&resolve=true", p->host);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.acct", acct);
    ck_assert_int_eq(peer_webfingers(p), 1);
    ck_assert_int_eq(peer_fetches(p, 0), 1);

    peer_stop(p);
    free(token);
    eu_it_resp_free(&r);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_resolve");
    EU_IT_ADD_TCASE(s, test_tenants_resolve_each_other, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_resolve_is_cached, TIMEOUT);
    return eu_it_run_suite(s);
}
