/*
 * What an idle tenant costs its database, measured: nothing. Once its pool
 * has closed its last connection (idle_timeout 2 s here), a tenant with
 * nothing due makes no transaction and opens no connection, neither after it
 * served requests nor after a restart that loaded it and started its
 * workers. The windows are 8 s, four times the pool's idle timeout; the
 * workers' idle poll is an hour, so it cannot fall inside them.
 *
 * Transactions and sessions are read from pg_stat_database on the "postgres"
 * database, never the tenant's own (which would count ours). A backend
 * flushes its statistics when it exits, and every window starts after the
 * server's last connection to the tenant has gone, so the counters are
 * complete; each read is a new connection and so a fresh snapshot.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define WINDOW_MS 8000

/* Transactions (committed or not) and client sessions pg_stat_database has
 * counted for db; a new connection each time, so a fresh snapshot. */
static void
db_counters(const char *db, long *xacts, long *sessions)
{
    char sql[400];

    snprintf(sql, sizeof(sql),
             "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '%s'", db);
    *xacts = eu_it_pg_exec_long("postgres", sql);
    snprintf(sql, sizeof(sql), "SELECT sessions FROM pg_stat_database WHERE datname = '%s'", db);
    *sessions = eu_it_pg_exec_long("postgres", sql);
}

/* The placement keeps this many connections (the config below). */
#define PLACEMENT_CONNECTIONS 2

/* Waits until db has exactly the placement's connections open. */
static void
wait_placement_set(const char *db, long timeout_ms)
{
    long long t0 = eu_it_now_ms();
    long n;

    while ((n = eu_it_pg_count_backends(db)) != PLACEMENT_CONNECTIONS) {
        ck_assert_msg(eu_it_now_ms() - t0 < timeout_ms,
                      "'%s' has %ld connections after %ld ms, want the placement's %d", db, n,
                      timeout_ms, PLACEMENT_CONNECTIONS);
        eu_it_sleep_ms(100);
    }
}

/*
 * Asserts that db sees no new connection and no transaction for WINDOW_MS:
 * the placement's connections stay open, unused.
 *
 * PostgreSQL's autovacuum launcher visits every database about once a
 * minute, and its worker's catalog transactions count in xact_commit too. It
 * is no client, so pg_stat_database.sessions (client backends only) does not
 * move for it, while eunha cannot make a transaction without a session. A
 * window where transactions moved but sessions did not is that visit, not
 * eunha: it is measured again, up to three times.
 */
static void
expect_quiet(const char *db, const char *when)
{
    for (int round = 1;; round++) {
        long xacts0, sessions0, xacts1, sessions1;
        long long t0;

        db_counters(db, &xacts0, &sessions0);
        t0 = eu_it_now_ms();
        while (eu_it_now_ms() - t0 < WINDOW_MS) {
            long n = eu_it_pg_count_backends(db);
            ck_assert_msg(n == PLACEMENT_CONNECTIONS,
                          "%s: %ld connections to the placement after %lld ms, want %d", when, n,
                          eu_it_now_ms() - t0, PLACEMENT_CONNECTIONS);
            eu_it_sleep_ms(250);
        }
        db_counters(db, &xacts1, &sessions1);
        fprintf(stderr, "%s: %ld transactions and %ld sessions in %d ms\n", when, xacts1 - xacts0,
                sessions1 - sessions0, WINDOW_MS);
        ck_assert_msg(sessions1 == sessions0, "%s: the idle tenant was connected to %ld times",
                      when, sessions1 - sessions0);
        if (xacts1 == xacts0)
            return;
        ck_assert_msg(round < 3, "%s: the idle tenant made %ld transactions in %d ms", when,
                      xacts1 - xacts0, WINDOW_MS);
        fprintf(stderr, "%s: transactions without a session (autovacuum); measuring again\n", when);
    }
}

START_TEST(test_idle_tenant_costs_no_database_work)
{
    struct eu_it_opts o = {
        .idle_timeout = 2,
        .extra_toml = "[workers]\nqueue_idle_poll_seconds = 3600\n",
        .placement_connections = PLACEMENT_CONNECTIONS,
    };
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    struct eu_it_resp r = {0};

    json_decref(eu_it_tenant_create(s, "idle.example", "Idle"));
    char *db = eu_it_tenant_database(s, "idle.example");
    /* Busy first: an account, a suspension lifted again (which wakes the
     * cleanup task), a job, instance reads. */
    eu_it_account_create(s, "idle.example", "erin");
    char *erin = eu_it_account_id(s, "idle.example", "erin");
    char path[200];
    snprintf(path, sizeof(path), "/admin/v1/tenants/idle.example/accounts/%s/suspend", erin);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/admin/v1/tenants/idle.example/accounts/%s/unsuspend", erin);
    eu_it_admin(s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_admin(s, "POST", "/admin/v1/tenants/idle.example/jobs", "{\"kind\":\"ping\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_public(s, "GET", "idle.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    long long t0 = eu_it_now_ms();
    while (eu_it_pg_exec_long(db, "SELECT count(*) FROM job_pings") == 0) {
        ck_assert_msg(eu_it_now_ms() - t0 < 10000, "the ping never ran");
        eu_it_sleep_ms(100);
    }

    /* Then idle: the placement's connections stay, and nothing uses them. */
    wait_placement_set(db, 10000);
    expect_quiet(db, "after serving");

    /* A restart opens the placement's connections at once (one checks the
     * schema) and starts the tenant's workers: then nothing. */
    eu_it_server_restart(s);
    wait_placement_set(db, 10000);
    eu_it_sleep_ms(500);
    expect_quiet(db, "after a restart");

    /* And it still works when asked. */
    eu_it_public(s, "GET", "idle.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_resp_free(&r);
    free(erin);
    free(db);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/*
 * The safety poll is one statement per placement per round, however many
 * tenants the placement holds: a hundred idle tenants, polled every 3 s
 * for 8 s (two or three rounds), cost fewer transactions than there are
 * tenants, on connections already open. Polling per tenant would cost at
 * least one per tenant and round, 200 or more. The count is the whole
 * database's: beside other suites it has read 45-65 for forty tenants
 * (the background's, not the poll's: alone it stays under 40, and a
 * VACUUM ANALYZE first did not remove it), so the tenants outnumber that.
 */
#define IDLE_TENANTS 100

START_TEST(test_idle_poll_is_one_statement_per_placement)
{
    struct eu_it_opts o = {
        .extra_toml = "[workers]\nqueue_idle_poll_seconds = 3\n",
        .placement_connections = PLACEMENT_CONNECTIONS,
    };
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    long xacts0, sessions0, xacts1, sessions1;
    char domain[64];

    for (int i = 0; i < IDLE_TENANTS; i++) {
        snprintf(domain, sizeof(domain), "poll%d.example", i);
        json_decref(eu_it_tenant_create(s, domain, domain));
    }
    char *db = eu_it_tenant_database(s, "poll0.example");
    /* Autovacuum's visit to a new placement (its catalogs and the forty
     * tenants' rows, a transaction a table) comes when its workers are free,
     * any time in the window while other suites keep them busy: done here
     * first, it leaves autovacuum nothing to do, and the count is the
     * poll's. */
    free(eu_it_pg_exec(db, "VACUUM ANALYZE"));
    /* A restart loads the tenants, opens the placement's connections and
     * polls once; the next rounds come 2.7-3.3 s apart. */
    eu_it_server_restart(s);
    wait_placement_set(db, 10000);
    eu_it_sleep_ms(500);
    /* Autovacuum analyzing the placement's tables (a transaction each, from
     * sessions of its own) can land in a window; it visits a database about
     * once a minute, so a second window right after misses it. */
    for (int window = 0; window < 2; window++) {
        db_counters(db, &xacts0, &sessions0);
        eu_it_sleep_ms(8000);
        db_counters(db, &xacts1, &sessions1);
        fprintf(stderr, "8 s of polls over %d idle tenants: %ld transactions, %ld sessions\n",
                IDLE_TENANTS, xacts1 - xacts0, sessions1 - sessions0);
        if (xacts1 - xacts0 < IDLE_TENANTS)
            break;
    }
    ck_assert_msg(sessions1 == sessions0, "the polls opened %ld connections, want 0",
                  sessions1 - sessions0);
    ck_assert_msg(xacts1 - xacts0 >= 2, "%ld transactions: did the poll run?", xacts1 - xacts0);
    ck_assert_msg(xacts1 - xacts0 < IDLE_TENANTS,
                  "%ld transactions for %d idle tenants in 2-3 rounds", xacts1 - xacts0,
                  IDLE_TENANTS);

    free(db);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/*
 * A tenant nobody asks for gives back its runtime state (token cache, pool,
 * idle workers) after dormant_after_seconds and makes it again on its next
 * request: the same token still works.
 */
START_TEST(test_dormant_tenant_sleeps_and_wakes)
{
    struct eu_it_opts o = {
        .extra_toml = "[tenants]\ndormant_after_seconds = 1\n",
        .placement_connections = PLACEMENT_CONNECTIONS,
    };
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    struct eu_it_resp r = {0};

    json_decref(eu_it_tenant_create(s, "sleepy.example", "Sleepy"));
    free(eu_it_account_seed(s, "sleepy.example", "erin"));
    char *token = eu_it_user_token(s, "sleepy.example", "erin", "read write");
    ck_assert_int_eq(eu_it_http(&r, "GET", s->public_port, "sleepy.example",
                                "/api/v1/accounts/verify_credentials", token, NULL),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_admin(s, "GET", "/admin/v1/tenants/sleepy.example", NULL, &r);
    ck_assert(json_is_false(eu_it_jpath(r.json, "dormant")));

    /* Idle for longer than dormant_after_seconds (and one sweep). */
    long long t0 = eu_it_now_ms();
    do {
        eu_it_sleep_ms(250);
        eu_it_admin(s, "GET", "/admin/v1/tenants/sleepy.example", NULL, &r);
        EU_IT_EXPECT_STATUS(&r, 200);
    } while (!json_is_true(eu_it_jpath(r.json, "dormant")) && eu_it_now_ms() - t0 < 10000);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "dormant")), "not dormant: %s", r.body);
    EU_IT_EXPECT_JINT(&r, "pool.open", 0);
    ck_assert(eu_it_metric(s, "eunha_tenants_dormant") == 1.0);

    /* The next request wakes it, with the same token. */
    ck_assert_int_eq(eu_it_http(&r, "GET", s->public_port, "sleepy.example",
                                "/api/v1/accounts/verify_credentials", token, NULL),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "erin");
    eu_it_admin(s, "GET", "/admin/v1/tenants/sleepy.example", NULL, &r);
    ck_assert(json_is_false(eu_it_jpath(r.json, "dormant")));
    ck_assert(eu_it_metric(s, "eunha_tenants_dormant") == 0.0);

    free(token);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

static Suite *
idle_suite(void)
{
    Suite *s = suite_create("integration.idle");

    EU_IT_ADD_TCASE(s, test_idle_tenant_costs_no_database_work, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_idle_poll_is_one_statement_per_placement, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_dormant_tenant_sleeps_and_wakes, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(idle_suite());
}
