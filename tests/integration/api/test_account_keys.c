/*
 * Account keys: every local account made through the API (OAuth sign-up,
 * admin creation) has a 2048-bit RSA pair in its row whose halves sign and
 * verify an HTTP signature, and the private half is in no API reply but is
 * in the tenant's export. Accounts without keys get them from the
 * "account_keys" job, queued through the admin API or by migration 0018,
 * a few per run until none is left, while another tenant's accounts and
 * remote accounts are left alone. A sign-up flood, now that each sign-up
 * also makes a key, is still answered 503 at once past the tenant's share
 * of the CPU pool.
 */
#include "harness.h"

#include <check.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/httpsig.h"
#include "eunha/migrate.h"

#define TIMEOUT 240
#define HOST "keys.example"
#define DECOY "decoy.example"

static long
signup(struct eu_it_server *s, const char *domain, const char *tok, const char *user,
       struct eu_it_resp *r)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"username\":\"%s\",\"email\":\"%s@mail.example\",\"password\":\"hunter2hunter2\","
             "\"agreement\":true,\"locale\":\"en\"}",
             user, user);
    int rc = eu_it_http(r, "POST", s->public_port, domain, "/api/v1/accounts", tok, body);
    return rc == 0 ? r->status : 0;
}

/* One column of a local account of the tenant (caller frees; NULL for SQL
 * NULL). */
static char *
account_col(const char *db, const char *tid, const char *user, const char *col)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT %s FROM accounts WHERE tenant_id = %s AND username = '%s'"
             " AND domain IS NULL",
             col, tid, user);
    return eu_it_pg_exec(db, sql);
}

/* The account's keys are a 2048-bit pair that signs and verifies. */
static void
assert_key_pair(const char *db, const char *tid, const char *user)
{
    char *pub = account_col(db, tid, user, "public_key");
    char *priv = account_col(db, tid, user, "private_key");
    ck_assert_msg(pub && priv, "%s has no keys", user);
    ck_assert_ptr_nonnull(strstr(pub, "-----BEGIN PUBLIC KEY-----"));
    ck_assert_ptr_nonnull(strstr(priv, "-----BEGIN PRIVATE KEY-----"));
    EVP_PKEY *pk = eu_httpsig_public_key_parse(pub);
    ck_assert_ptr_nonnull(pk);
    ck_assert_int_eq(EVP_PKEY_get_bits(pk), 2048);

    struct eu_httpsig_sign_args a = {.method = "POST",
                                     .url = "https://peer.example/inbox",
                                     .body = "{}",
                                     .body_len = 2,
                                     .key_id = "https://keys.example/users/x#main-key",
                                     .key_pem = priv,
                                     .now = time(NULL)};
    struct eu_httpsig_signed out;
    ck_assert_int_eq(eu_httpsig_sign_cavage(&a, &out), 0);
    struct eu_httpsig_request req = {.method = "POST",
                                     .scheme = "https",
                                     .authority = "peer.example",
                                     .target = "/inbox",
                                     .headers = out.headers,
                                     .nheaders = (size_t)out.n,
                                     .body = "{}",
                                     .body_len = 2};
    struct eu_httpsig *sig = NULL;
    ck_assert_int_eq(eu_httpsig_parse(&req, time(NULL), &sig), EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_verify(sig, pk), EU_HTTPSIG_OK);
    eu_httpsig_free(sig);
    eu_httpsig_signed_release(&out);
    EVP_PKEY_free(pk);
    free(pub);
    free(priv);
}

/* No reply may carry a private key, in PEM or as its base64 body. */
static void
assert_no_private_key(const struct eu_it_resp *r, const char *priv)
{
    ck_assert_msg(!r->body || !strstr(r->body, "PRIVATE KEY"), "a private key in %.300s", r->body);
    /* The PEM's second line: 64 characters of the key itself. */
    const char *line = strchr(priv, '\n');
    char probe[65];
    snprintf(probe, sizeof(probe), "%.64s", line + 1);
    ck_assert_msg(!r->body || !strstr(r->body, probe), "key material in %.300s", r->body);
}

START_TEST(test_new_accounts_have_keys)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, HOST, "Keys"));
    json_decref(eu_it_tenant_create(s, DECOY, "Decoy"));
    char *db = eu_it_tenant_database(s, HOST);
    char *tid = eu_it_tenant_id(s, HOST);
    struct eu_it_resp r = {0};

    /* Made by the operator. */
    eu_it_admin(s, "POST", "/admin/v1/tenants/" HOST "/accounts",
                "{\"username\":\"alice\",\"email\":\"alice@mail.example\",\"password\":"
                "\"correct horse battery staple\"}",
                &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    char *alice_id = strdup(eu_it_json_str(&r, "id"));
    assert_key_pair(db, tid, "alice");
    char *alice_priv = account_col(db, tid, "alice", "private_key");
    assert_no_private_key(&r, alice_priv);

    /* Signed up through OAuth. */
    char *tok = eu_it_app_token(s, HOST, "write:accounts");
    ck_assert_int_eq(signup(s, HOST, tok, "bob", &r), 200);
    assert_no_private_key(&r, alice_priv);
    char *bob_tok = strdup(eu_it_json_str(&r, "access_token"));
    assert_key_pair(db, tid, "bob");
    char *bob_priv = account_col(db, tid, "bob", "private_key");
    ck_assert_str_ne(alice_priv, bob_priv);

    /* Nowhere in what the API shows of them. */
    const char *paths[] = {"/api/v1/accounts/verify_credentials",
                           "/api/v1/accounts/lookup?acct=alice", "/api/v1/accounts/search?q=bob",
                           "/@alice", "/users/bob"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        eu_it_http(&r, "GET", s->public_port, HOST, paths[i], bob_tok, NULL);
        ck_assert_msg(r.status < 500, "%s: %ld", paths[i], r.status);
        assert_no_private_key(&r, alice_priv);
        assert_no_private_key(&r, bob_priv);
    }
    char path[128];
    snprintf(path, sizeof(path), "/api/v1/accounts/%s", alice_id);
    eu_it_http(&r, "GET", s->public_port, HOST, path, bob_tok, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    assert_no_private_key(&r, alice_priv);

    /* The export keeps them: peers cache public keys, so a tenant moved or
     * restored must sign with the same ones. */
    eu_it_admin(s, "POST", "/admin/v1/tenants/" HOST "/export", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    json_error_t jerr;
    json_t *archive = json_load_file(eu_it_json_str(&r, "path"), 0, &jerr);
    ck_assert_ptr_nonnull(archive);
    json_t *accounts = eu_it_jpath(archive, "tables.accounts");
    int found = 0;
    for (size_t i = 0; i < json_array_size(accounts); i++) {
        json_t *a = json_array_get(accounts, i);
        const char *u = json_string_value(json_object_get(a, "username"));
        const char *k = json_string_value(json_object_get(a, "private_key"));
        if (u && strcmp(u, "alice") == 0 && k && strcmp(k, alice_priv) == 0)
            found++;
        if (u && strcmp(u, "bob") == 0 && k && strcmp(k, bob_priv) == 0)
            found++;
    }
    ck_assert_int_eq(found, 2);
    json_decref(archive);

    eu_it_resp_free(&r);
    free(alice_id);
    free(alice_priv);
    free(bob_priv);
    free(bob_tok);
    free(tok);
    free(db);
    free(tid);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* Local accounts of tenant tid without keys. */
static long
keyless(const char *db, const char *tid)
{
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM accounts WHERE tenant_id = %s AND domain IS NULL"
             " AND (public_key IS NULL OR private_key IS NULL)",
             tid);
    return eu_it_pg_exec_long(db, sql);
}

static void
wait_keyless(const char *db, const char *tid, long want)
{
    long long deadline = eu_it_now_ms() + 60000;
    long n;
    while ((n = keyless(db, tid)) != want && eu_it_now_ms() < deadline)
        eu_it_sleep_ms(100);
    ck_assert_msg(n == want, "%ld keyless accounts left, want %ld", n, want);
}

START_TEST(test_backfill)
{
    /* A poll a second, so jobs the migration inserts behind the server's
     * back are found soon. */
    struct eu_it_server *s = eu_it_server_start("[workers]\nqueue_idle_poll_seconds = 1\n");
    json_decref(eu_it_tenant_create(s, HOST, "Keys"));
    json_decref(eu_it_tenant_create(s, DECOY, "Decoy"));
    eu_it_account_create(s, HOST, "alice");
    eu_it_account_create(s, DECOY, "dora");
    char *db = eu_it_tenant_database(s, HOST);
    char *tid = eu_it_tenant_id(s, HOST);
    char *did = eu_it_tenant_id(s, DECOY);
    char *alice_pub = account_col(db, tid, "alice", "public_key");
    char *dora_pub = account_col(db, did, "dora", "public_key");
    ck_assert_ptr_nonnull(alice_pub);

    /* Accounts from before keys: more than one run's batch of them, one
     * with only half a pair, and a remote account (never ours to key). */
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "INSERT INTO accounts (tenant_id, username) SELECT %s, 'old' || i"
             " FROM generate_series(1, 9) i;"
             "UPDATE accounts SET private_key = NULL WHERE tenant_id = %s AND username = 'alice';"
             "INSERT INTO accounts (tenant_id, username, domain) VALUES (%s, 'rem', 'r.example');"
             "INSERT INTO accounts (tenant_id, username) SELECT %s, 'old' || i"
             " FROM generate_series(1, 3) i",
             tid, tid, tid, did);
    free(eu_it_pg_exec(db, sql));
    ck_assert_int_eq(keyless(db, tid), 10);
    ck_assert_int_eq(keyless(db, did), 3);

    /* Through the admin jobs API. */
    struct eu_it_resp r = {0};
    eu_it_admin(s, "POST", "/admin/v1/tenants/" HOST "/jobs", "{\"kind\":\"account_keys\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    wait_keyless(db, tid, 0);
    for (int i = 1; i <= 9; i++) {
        char u[16];
        snprintf(u, sizeof(u), "old%d", i);
        assert_key_pair(db, tid, u);
    }
    assert_key_pair(db, tid, "alice");
    /* Alice had half a pair: the whole pair is new now. */
    char *alice_pub2 = account_col(db, tid, "alice", "public_key");
    ck_assert_str_ne(alice_pub, alice_pub2);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM accounts WHERE tenant_id = %s AND domain = 'r.example'"
             " AND public_key IS NULL AND private_key IS NULL",
             tid);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 1);
    /* The chain of runs ends with the work. */
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'account_keys'", tid);
    long long deadline = eu_it_now_ms() + 20000;
    while (eu_it_pg_exec_long(db, sql) != 0 && eu_it_now_ms() < deadline)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), 0);
    /* The decoy tenant's accounts are as they were. */
    ck_assert_int_eq(keyless(db, did), 3);
    char *dora_pub2 = account_col(db, did, "dora", "public_key");
    ck_assert_str_eq(dora_pub, dora_pub2);

    /* Migration 0018, replayed as an upgrade would run it: one job per
     * tenant with keyless local accounts, found by the workers' poll. */
    const char *mig = NULL;
    for (int i = 0; i < eu_tenant_migrations_count; i++)
        if (eu_tenant_migrations[i].version == 18)
            mig = eu_tenant_migrations[i].sql;
    ck_assert_ptr_nonnull(mig);
    free(eu_it_pg_exec(db, mig));
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM jobs WHERE kind = 'account_keys' AND tenant_id IN (%s, %s)", tid,
             did);
    long queued = eu_it_pg_exec_long(db, sql);
    ck_assert_msg(queued == 1 || keyless(db, did) < 3, "%ld jobs queued", queued);
    wait_keyless(db, did, 0);
    for (int i = 1; i <= 3; i++) {
        char u[16];
        snprintf(u, sizeof(u), "old%d", i);
        assert_key_pair(db, did, u);
    }
    /* Dora had keys: kept. */
    free(dora_pub2);
    dora_pub2 = account_col(db, did, "dora", "public_key");
    ck_assert_str_eq(dora_pub, dora_pub2);

    eu_it_resp_free(&r);
    free(alice_pub);
    free(alice_pub2);
    free(dora_pub);
    free(dora_pub2);
    free(db);
    free(tid);
    free(did);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* ------------------------------------------------------------ the flood */

#define FLOOD 16

struct attempt {
    struct eu_it_server *s;
    const char *tok;
    int i;
    long status;
    long long ms;
    bool retry_after;
};

static void *
attempt_main(void *arg)
{
    struct attempt *a = arg;
    struct eu_it_resp r = {0};
    char user[32];
    snprintf(user, sizeof(user), "flood%d", a->i);
    long long t0 = eu_it_now_ms();
    a->status = signup(a->s, HOST, a->tok, user, &r);
    a->ms = eu_it_now_ms() - t0;
    a->retry_after = eu_it_resp_header(&r, "Retry-After") != NULL;
    eu_it_resp_free(&r);
    return NULL;
}

START_TEST(test_signup_flood)
{
    /* One CPU thread, so the flood queues; no sign-up limit, so the pool's
     * bound is what answers. */
    struct eu_it_opts o = {.cpu_threads = 1,
                           .extra_toml = "[limits]\nregistrations_per_30min = 0\n"
                                         "api_requests_per_5min = 0\n"};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, HOST, "Keys"));
    json_decref(eu_it_tenant_create(s, DECOY, "Decoy"));
    char *tok = eu_it_app_token(s, HOST, "write:accounts"),
         *dtok = eu_it_app_token(s, DECOY, "write:accounts");

    pthread_t th[FLOOD];
    struct attempt a[FLOOD];
    for (int i = 0; i < FLOOD; i++) {
        a[i] = (struct attempt){.s = s, .tok = tok, .i = i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, attempt_main, &a[i]), 0);
    }
    /* The neighbour signs up meanwhile. */
    eu_it_sleep_ms(50);
    struct eu_it_resp r = {0};
    ck_assert_int_eq(signup(s, DECOY, dtok, "neighbour", &r), 200);
    int refused = 0, made = 0;
    long long slowest_refusal = 0;
    for (int i = 0; i < FLOOD; i++) {
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
        if (a[i].status == 503) {
            ck_assert(a[i].retry_after);
            refused++;
            if (a[i].ms > slowest_refusal)
                slowest_refusal = a[i].ms;
        } else {
            ck_assert_int_eq(a[i].status, 200);
            made++;
        }
    }
    fprintf(stderr, "sign-up flood: %d made, %d refused (slowest refusal %lld ms)\n", made, refused,
            slowest_refusal);
    ck_assert_int_gt(refused, 0);
    ck_assert_int_gt(made, 0);
    /* Refused without waiting for the pool. */
    ck_assert_int_lt(slowest_refusal, 2000);

    /* Every account that was made has its keys. */
    char *db = eu_it_tenant_database(s, HOST);
    char *tid = eu_it_tenant_id(s, HOST);
    ck_assert_int_eq(keyless(db, tid), 0);
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM accounts WHERE tenant_id = %s AND domain IS NULL", tid);
    ck_assert_int_eq(eu_it_pg_exec_long(db, sql), made);
    /* And it works again once the flood is over. */
    ck_assert_int_eq(signup(s, HOST, tok, "after", &r), 200);
    eu_it_resp_free(&r);
    free(db);
    free(tid);
    free(tok);
    free(dtok);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("account_keys");
    EU_IT_ADD_TCASE(s, test_new_accounts_have_keys, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_backfill, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_signup_flood, TIMEOUT);
    return eu_it_run_suite(s);
}
