/*
 * Per-tenant PostgreSQL pools seen from outside: a full pool answers 503
 * with Retry-After after the acquire timeout instead of queueing forever, a
 * placement keeps its fixed set of connections however many tenants use it,
 * a tenant flooding its placement cannot starve a neighbour, and a
 * PostgreSQL restart costs some 5xx answers but neither a hang nor the
 * process. Under a shared cap
 * (max_total_connections) tenants take idle connections from each other and
 * never hold more than the cap together. A placement's cached plans follow
 * its tables as they grow.
 */
#include "harness.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180

struct bg_request {
    struct eu_it_server *s;
    const char *host;
    struct eu_it_resp r;
    int rc;
};

static void *
run_bg_request(void *arg)
{
    struct bg_request *b = arg;

    b->rc = eu_it_http(&b->r, "GET", b->s->public_port, b->host, "/api/v1/instance", NULL, NULL);
    return NULL;
}

START_TEST(test_pool_exhaustion_answers_503)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    struct bg_request bg = {.s = s, .host = "a.example"};
    pthread_t thread;
    long long deadline;
    char *db;
    PGconn *locker;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    eu_it_tenant_patch(s, "a.example",
                       "{\"max_connections\":1,\"min_connections\":0,"
                       "\"acquire_timeout_seconds\":1}");
    free(eu_it_account_seed(s, "a.example", "alice"));
    db = eu_it_tenant_database(s, "a.example");

    /* The instance endpoint counts accounts, so with the table locked the
     * first request holds the pool's only connection until we commit. */
    locker = eu_it_pg_connect(db);
    free(eu_it_pg_query(locker, "BEGIN"));
    free(eu_it_pg_query(locker, "LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE"));
    ck_assert_int_eq(pthread_create(&thread, NULL, run_bg_request, &bg), 0);

    deadline = eu_it_now_ms() + 10000;
    while (eu_it_pg_count_lock_waiters(db) < 1 && eu_it_now_ms() < deadline)
        eu_it_sleep_ms(100);
    ck_assert_msg(eu_it_pg_count_lock_waiters(db) >= 1,
                  "GET /api/v1/instance never waited on the accounts lock in %s", db);

    eu_it_admin(s, "GET", "/admin/v1/tenants/a.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "pool.busy", 1);

    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 503);
    ck_assert_msg(eu_it_resp_header(&r, "Retry-After") != NULL, "503 without Retry-After:\n%s",
                  r.headers);
    ck_assert_msg(r.seconds < 4.0, "503 took %.2f s with acquire_timeout_seconds=1", r.seconds);

    free(eu_it_pg_query(locker, "COMMIT"));
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_msg(bg.rc == 0, "blocked request failed: %s", bg.r.error);
    EU_IT_EXPECT_STATUS(&bg.r, 200);
    EU_IT_EXPECT_JINT(&bg.r, "stats.user_count", 1);

    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);

    PQfinish(locker);
    free(db);
    eu_it_resp_free(&bg.r);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* A placement keeps its fixed set of connections: several tenants served
 * one after another never open more, and none closes while idle. */
START_TEST(test_placement_keeps_its_connections)
{
    struct eu_it_opts opts = {.idle_timeout = 1, .placement_connections = 2};
    struct eu_it_server *s = eu_it_server_start_opts(&opts);
    static const char *const hosts[] = {"a.example", "b.example", "c.example", "d.example"};
    struct eu_it_resp r = {0};
    char *db = NULL;

    for (int i = 0; i < 4; i++)
        json_decref(eu_it_tenant_create(s, hosts[i], hosts[i]));
    db = eu_it_tenant_database(s, hosts[0]);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 4; i++) {
            eu_it_public(s, "GET", hosts[i], "/api/v1/instance", &r);
            EU_IT_EXPECT_STATUS(&r, 200);
            ck_assert_int_le(eu_it_pg_count_backends(db), 2);
        }
    /* Well past the idle timeout: still open, ready for the next request. */
    long open = eu_it_pg_count_backends(db);
    ck_assert_int_ge(open, 1);
    eu_it_sleep_ms(3000);
    ck_assert_int_eq(eu_it_pg_count_backends(db), open);

    free(db);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

struct flood_request {
    struct eu_it_server *s;
    const char *token;
    struct eu_it_resp r;
};

static void *
run_flood_request(void *arg)
{
    struct flood_request *f = arg;
    eu_it_http(&f->r, "PATCH", f->s->public_port, "flood.example",
               "/api/v1/accounts/update_credentials", f->token, "{\"note\":\"flood\"}");
    return NULL;
}

/*
 * One tenant floods its placement with requests that each hold a connection
 * (they wait on a row lock of its own account): it gets its two connections
 * and its other requests queue in its own pool and time out with 503, while
 * a quiet tenant on the same placement is answered at once all along.
 */
START_TEST(test_flooding_tenant_does_not_starve_its_neighbour)
{
    struct eu_it_opts opts = {
        .acquire_timeout = 2,
        .placement_connections = 3,
    };
    struct eu_it_server *s = eu_it_server_start_opts(&opts);
    struct eu_it_resp r = {0};
    enum { N = 12 };
    struct flood_request fl[N];
    pthread_t threads[N];

    json_decref(eu_it_tenant_create(s, "flood.example", "Flood"));
    json_decref(eu_it_tenant_create(s, "quiet.example", "Quiet"));
    free(eu_it_account_seed(s, "flood.example", "alice"));
    free(eu_it_account_seed(s, "quiet.example", "bob"));
    char *flood_token = eu_it_user_token(s, "flood.example", "alice", "read write");
    char *quiet_token = eu_it_user_token(s, "quiet.example", "bob", "read write");
    char *db = eu_it_tenant_database(s, "flood.example");
    char *tid = eu_it_tenant_id(s, "flood.example");

    PGconn *locker = eu_it_pg_connect(db);
    char sql[200];
    free(eu_it_pg_query(locker, "BEGIN"));
    snprintf(sql, sizeof(sql), "SELECT 1 FROM accounts WHERE tenant_id = %s FOR UPDATE", tid);
    free(eu_it_pg_query(locker, sql));
    for (int i = 0; i < N; i++) {
        fl[i] = (struct flood_request){.s = s, .token = flood_token};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, run_flood_request, &fl[i]), 0);
    }
    long long deadline = eu_it_now_ms() + 10000;
    while (eu_it_pg_count_lock_waiters(db) < 2 && eu_it_now_ms() < deadline)
        eu_it_sleep_ms(50);
    ck_assert_int_eq(eu_it_pg_count_lock_waiters(db), 2);

    /* The flood's own figures: two held, the rest waiting. */
    eu_it_admin(s, "GET", "/admin/v1/tenants/flood.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "pool.busy", 2);
    ck_assert_int_ge(json_integer_value(eu_it_jpath(r.json, "pool.waiting")), 1);

    /* The neighbour is served at once, again and again, while it lasts. */
    double worst = 0;
    for (int i = 0; i < 20; i++) {
        ck_assert_int_eq(eu_it_http(&r, "GET", s->public_port, "quiet.example",
                                    "/api/v1/accounts/verify_credentials", quiet_token, NULL),
                         0);
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JSTR(&r, "username", "bob");
        if (r.seconds > worst)
            worst = r.seconds;
    }
    fprintf(stderr, "quiet tenant beside a flood: slowest of 20 answers %.3f s\n", worst);
    ck_assert_msg(worst < 1.0, "the quiet tenant waited %.2f s beside the flood", worst);
    ck_assert_int_eq(eu_it_pg_count_lock_waiters(db), 2);
    /* Past the flood's acquire timeout: its queued requests give up. */
    eu_it_sleep_ms(2500);

    free(eu_it_pg_query(locker, "COMMIT"));
    int ok = 0, busy = 0;
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        if (fl[i].r.status == 200)
            ok++;
        else if (fl[i].r.status == 503 && eu_it_resp_header(&fl[i].r, "Retry-After"))
            busy++;
        eu_it_resp_free(&fl[i].r);
    }
    fprintf(stderr, "flood: %d answered, %d told to retry\n", ok, busy);
    ck_assert_int_eq(ok + busy, N);
    ck_assert_int_ge(ok, 2);
    ck_assert_int_ge(busy, 1);

    PQfinish(locker);
    free(db);
    free(tid);
    free(flood_token);
    free(quiet_token);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

static long
backends_of(char *const *dbs, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += eu_it_pg_count_backends(dbs[i]);
    return sum;
}

START_TEST(test_pool_shared_cap)
{
    struct eu_it_opts opts = {
        .extra_toml = "[database_pool]\nmax_total_connections = 2\nmax_connecting = 1\n"
                      "acquire_timeout_seconds = 2\nidle_timeout_seconds = 120\n",
    };
    struct eu_it_server *s = eu_it_server_start_opts(&opts);
    static const char *const hosts[] = {"a.example", "b.example", "c.example"};
    struct eu_it_resp r = {0};
    char *dbs[3];
    PGconn *lockers[2];
    struct bg_request bg[2];
    pthread_t threads[2];
    long long deadline;

    /* Dedicated placements, so each tenant's connections are told apart by
     * their database. */
    for (int i = 0; i < 3; i++) {
        char body[128];
        snprintf(body, sizeof(body), "{\"domain\":\"%s\",\"placement\":\"dedicated\"}", hosts[i]);
        eu_it_admin(s, "POST", "/admin/v1/tenants", body, &r);
        EU_IT_EXPECT_STATUS(&r, 201);
        dbs[i] = eu_it_tenant_database(s, hosts[i]);
    }

    /* a and b each keep the connection they used: the cap is reached. */
    for (int i = 0; i < 2; i++) {
        eu_it_public(s, "GET", hosts[i], "/api/v1/instance", &r);
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[0]), 1);
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[1]), 1);
    ck_assert(eu_it_metric(s, "eunha_db_connections") == 2.0);

    /* c still answers: a's connection, the least recently used, makes way.
     * Counted from here: creating the tenants reads their media usage on
     * their placements' pools, whose idle connections a and b took over. */
    double reclaimed = eu_it_metric(s, "eunha_db_reclaimed_total");
    eu_it_public(s, "GET", hosts[2], "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[0]), 0);
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[1]), 1);
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[2]), 1);
    ck_assert(eu_it_metric(s, "eunha_db_reclaimed_total") == reclaimed + 1.0);
    ck_assert(eu_it_metric(s, "eunha_db_connections") == 2.0);

    /* Every connection busy: nothing to take, so a third tenant waits and
     * gets the pool's 503 instead of a connection past the cap. */
    for (int i = 0; i < 2; i++) {
        lockers[i] = eu_it_pg_connect(dbs[i + 1]);
        free(eu_it_pg_query(lockers[i], "BEGIN"));
        free(eu_it_pg_query(lockers[i], "LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE"));
        bg[i] = (struct bg_request){.s = s, .host = hosts[i + 1]};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, run_bg_request, &bg[i]), 0);
    }
    deadline = eu_it_now_ms() + 10000;
    while ((eu_it_pg_count_lock_waiters(dbs[1]) < 1 || eu_it_pg_count_lock_waiters(dbs[2]) < 1) &&
           eu_it_now_ms() < deadline)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(eu_it_pg_count_lock_waiters(dbs[1]), 1);
    ck_assert_int_eq(eu_it_pg_count_lock_waiters(dbs[2]), 1);
    eu_it_public(s, "GET", hosts[0], "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 503);
    ck_assert_msg(eu_it_resp_header(&r, "Retry-After") != NULL, "503 without Retry-After");
    ck_assert_int_eq(eu_it_pg_count_backends(dbs[0]), 0);
    ck_assert(eu_it_metric(s, "eunha_db_connections") == 2.0);

    /* Once they finish, the waiting tenant is served again. */
    for (int i = 0; i < 2; i++) {
        free(eu_it_pg_query(lockers[i], "COMMIT"));
        ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        EU_IT_EXPECT_STATUS(&bg[i].r, 200);
        eu_it_resp_free(&bg[i].r);
        PQfinish(lockers[i]);
    }
    eu_it_public(s, "GET", hosts[0], "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* The lockers' backends take a moment to exit after PQfinish. */
    deadline = eu_it_now_ms() + 5000;
    while (backends_of(dbs, 3) > 2 && eu_it_now_ms() < deadline)
        eu_it_sleep_ms(100);
    ck_assert_int_le(backends_of(dbs, 3), 2);

    for (int i = 0; i < 3; i++)
        free(dbs[i]);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* Lines of the server's log holding text. */
static long
log_count(const struct eu_it_server *s, const char *text)
{
    FILE *f = fopen(s->log_path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", s->log_path);
    char line[4096];
    long n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, text))
            n++;
    fclose(f);
    return n;
}

START_TEST(test_pool_survives_postgres_restart)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    pid_t pid = s->pid;
    long long deadline;

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    free(eu_it_account_seed(s, "a.example", "alice"));
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_sh("EUNHA_TEST_PG_STOP");
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    ck_assert_msg(r.status >= 500 && r.status <= 599,
                  "with PostgreSQL down got %ld, want 5xx; body: %s", r.status, r.body);
    ck_assert_msg(eu_it_json_str(&r, "error") != NULL, "5xx without JSON error: %s", r.body);
    ck_assert_msg(r.seconds < 10.0, "the 5xx took %.2f s", r.seconds);
    ck_assert_msg(eu_it_server_is_alive(s), "server died while PostgreSQL was down");
    /* While it is down the pools back off, 100 ms doubling to 5 s: asked
     * all the time for three seconds, a pool tries about five times, not
     * thirty (the doubling once started again at each probe). Each try
     * logs "cannot connect". */
    long before = log_count(s, "cannot connect to");
    for (long long end = eu_it_now_ms() + 3000; eu_it_now_ms() < end;) {
        eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
        ck_assert_msg(r.status >= 500, "with PostgreSQL down got %ld", r.status);
        eu_it_sleep_ms(20);
    }
    long tries = log_count(s, "cannot connect to") - before;
    fprintf(stderr, "%ld connection attempts in 3 s with PostgreSQL down\n", tries);
    ck_assert_msg(tries <= 16, "%ld connection attempts in 3 s with PostgreSQL down", tries);

    eu_it_sh("EUNHA_TEST_PG_START");
    deadline = eu_it_now_ms() + 20000;
    do {
        eu_it_sleep_ms(500);
        eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    } while (r.status != 200 && eu_it_now_ms() < deadline);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);

    ck_assert_msg(eu_it_server_is_alive(s), "server exited");
    ck_assert_int_eq(s->pid, pid);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/*
 * Index entries and rows read from statuses so far. A backend reports its
 * counters at the end of a transaction when a second has passed since it
 * last did (else only after ten idle seconds), so this waits a second and
 * has the placement's connection run a statement first.
 */
static long
statuses_tuples_read(struct eu_it_server *s, const char *token, const char *db)
{
    struct eu_it_resp r = {0};
    eu_it_sleep_ms(1100);
    int rc = eu_it_http(&r, "GET", s->public_port, "a.example",
                        "/api/v1/accounts/verify_credentials", token, NULL);
    ck_assert_msg(rc == 0, "GET /api/v1/accounts/verify_credentials: %s", r.error);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    return eu_it_pg_exec_long(db, "SELECT (SELECT coalesce(sum(idx_tup_read), 0)"
                                  " FROM pg_stat_user_indexes WHERE relname = 'statuses')"
                                  " + (SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables"
                                  " WHERE relname = 'statuses')");
}

static void
post_statuses(struct eu_it_server *s, const char *token, int n)
{
    struct eu_it_resp r = {0};
    for (int i = 0; i < n; i++) {
        int rc = eu_it_http(&r, "POST", s->public_port, "a.example", "/api/v1/statuses", token,
                            "{\"status\":\"growing\"}");
        ck_assert_msg(rc == 0, "POST /api/v1/statuses: %s", r.error);
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    eu_it_resp_free(&r);
}

/*
 * Plans made while statuses is nearly empty, when every index that starts
 * with tenant_id looks as cheap as the primary key, find a status by id by
 * walking one of those over the whole tenant. PostgreSQL keeps such a plan
 * until an ANALYZE, so here autovacuum is off for statuses and 20,000 rows
 * land behind the server's back: within a few hundred executions the
 * placement's one connection must have analyzed the table and planned
 * again, and a post read about as few statuses entries as when the table
 * was small.
 */
START_TEST(test_plans_follow_table_growth)
{
    /* More posts than a token may send in 5 minutes: the limit is not
     * what this is about. */
    struct eu_it_opts opts = {.placement_connections = 1,
                              .extra_toml = "[limits]\napi_requests_per_5min = 0\n"};
    struct eu_it_server *s = eu_it_server_start_opts(&opts);
    char sql[512];

    json_decref(eu_it_tenant_create(s, "a.example", "Alpha"));
    free(eu_it_account_seed(s, "a.example", "alice"));
    char *token = eu_it_user_token(s, "a.example", "alice", "read write");
    char *tid = eu_it_tenant_id(s, "a.example");
    char *alice = eu_it_account_id(s, "a.example", "alice");
    char *db = eu_it_tenant_database(s, "a.example");
    free(eu_it_pg_exec(db, "ALTER TABLE statuses SET (autovacuum_enabled = false)"));

    post_statuses(s, token, 10);
    snprintf(sql, sizeof(sql),
             "INSERT INTO statuses (tenant_id, account_id, text, content)"
             " SELECT %s, %s, 'old ' || g, '<p>old</p>' FROM generate_series(1, 20000) g",
             tid, alice);
    free(eu_it_pg_exec(db, sql));
    /* Enough statements to pass the connection's first re-plan
     * (EU_DB_REPLAN_FIRST, 256 executions; a plain post runs one). */
    post_statuses(s, token, 300);

    long before = statuses_tuples_read(s, token, db);
    post_statuses(s, token, 20);
    long per_post = (statuses_tuples_read(s, token, db) - before) / 20;
    fprintf(stderr, "statuses entries read per post with 20,000 statuses: %ld\n", per_post);
    ck_assert_msg(per_post < 1000, "a post read %ld statuses entries: stale plans", per_post);
    ck_assert_int_eq(eu_it_pg_exec_long(db, "SELECT count(*) FROM pg_stat_user_tables"
                                            " WHERE relname = 'statuses'"
                                            " AND last_analyze IS NOT NULL"),
                     1);

    free(token);
    free(tid);
    free(alice);
    free(db);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/*
 * A statement that waits too long (here on a row lock held elsewhere) is
 * cancelled by statement_timeout: the request answers 503 with Retry-After
 * in about that time, changes nothing, and the tenant's connection is free
 * again for the next request.
 */
START_TEST(test_statement_timeout_answers_503)
{
    struct eu_it_opts o = {.database_toml = "statement_timeout_ms = 500"};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    free(eu_it_account_seed(s, "a.example", "alice"));
    char *tok = eu_it_user_token(s, "a.example", "alice", "read write");
    char *db = eu_it_tenant_database(s, "a.example");
    char *tid = eu_it_tenant_id(s, "a.example");
    PGconn *locker = eu_it_pg_connect(db);
    char sql[300];
    snprintf(sql, sizeof(sql),
             "BEGIN; SELECT 1 FROM accounts WHERE tenant_id = %s AND username = 'alice'"
             " FOR UPDATE",
             tid);
    PGresult *lr = PQexec(locker, sql);
    ck_assert_int_eq(PQresultStatus(lr), PGRES_TUPLES_OK);
    PQclear(lr);

    struct eu_it_resp r = {0};
    long long t0 = eu_it_now_ms();
    eu_it_callf(s, &r, "a.example", "PATCH", tok, "{\"display_name\":\"Blocked\"}",
                "/api/v1/accounts/update_credentials");
    long long waited = eu_it_now_ms() - t0;
    EU_IT_EXPECT_ERROR(&r, 503);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Retry-After"));
    ck_assert_msg(waited >= 400 && waited < 5000, "answered after %lld ms", waited);

    /* The same inside a transaction: a post's insert waits on the author's
     * row (its counters), is cancelled, and the whole post rolls back. */
    t0 = eu_it_now_ms();
    eu_it_callf(s, &r, "a.example", "POST", tok, "{\"status\":\"never posted\"}",
                "/api/v1/statuses");
    waited = eu_it_now_ms() - t0;
    EU_IT_EXPECT_ERROR(&r, 503);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Retry-After"));
    ck_assert_msg(waited >= 400 && waited < 5000, "post answered after %lld ms", waited);

    lr = PQexec(locker, "ROLLBACK");
    PQclear(lr);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM accounts WHERE tenant_id = %s AND display_name = 'Blocked'",
             tid);
    char *n = eu_it_pg_query(locker, sql);
    ck_assert_str_eq(n, "0");
    free(n);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM statuses WHERE tenant_id = %s", tid);
    n = eu_it_pg_query(locker, sql);
    ck_assert_str_eq(n, "0");
    free(n);
    eu_it_callf(s, &r, "a.example", "PATCH", tok, "{\"display_name\":\"Free\"}",
                "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "display_name", "Free");
    eu_it_resp_free(&r);
    PQfinish(locker);
    free(tok);
    free(db);
    free(tid);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

static Suite *
pool_suite(void)
{
    Suite *s = suite_create("integration.pool");

    EU_IT_ADD_TCASE(s, test_pool_exhaustion_answers_503, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_placement_keeps_its_connections, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_flooding_tenant_does_not_starve_its_neighbour, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_pool_shared_cap, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_pool_survives_postgres_restart, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_plans_follow_table_growth, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_statement_timeout_answers_503, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(pool_suite());
}
