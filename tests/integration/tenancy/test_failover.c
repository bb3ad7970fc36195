/*
 * A placement on a primary PostgreSQL with a synchronous streaming standby,
 * and a failover that loses nothing (issue 30, item 5). The test starts
 * both servers of its own through scripts/lib/services.sh
 * (eu_pg_sync_primary_conf, eu_pg_standby_start, eu_pg_promote: the
 * recipe docs/fleet.md gives), registers a placement whose database_url
 * names both hosts with target_session_attrs=read-write, and puts a tenant
 * there. A writer thread posts statuses through the API all along and
 * records each one answered 200. The primary is SIGKILLed and the standby
 * promoted: eunha must reach the tenant on the promoted server again within
 * 10 s of the promotion, with no restart and no change of the placement,
 * and every status it acknowledged must be there.
 *
 * Only the placement fails over; the control database stays on the run's
 * own PostgreSQL (docs/fleet.md says why that is a separate pair).
 */
#include "fleet.h"
#include "harness.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TIMEOUT 240
#define HOST "failover.example"
#define MAX_POSTS 20000
#define NO_LIMITS "[limits]\napi_requests_per_5min = 10000000\n"

struct writer {
    int port;
    atomic_bool stop;
    /* acked[n]: status "fo n" was answered 200; ok_at[n] when (ms). */
    bool acked[MAX_POSTS];
    long long ok_at[MAX_POSTS];
    atomic_int sent;
    atomic_llong last_ok;
};

static void *
write_statuses(void *arg)
{
    struct writer *w = arg;
    struct eu_it_resp r = {0};
    for (int n = 0; n < MAX_POSTS && !atomic_load(&w->stop); n++) {
        char body[64];
        snprintf(body, sizeof(body), "{\"status\":\"fo %d\"}", n);
        atomic_store(&w->sent, n + 1);
        if (eu_it_http(&r, "POST", w->port, HOST, "/api/v1/statuses", "fo-token", body) == 0 &&
            r.status == 200) {
            w->acked[n] = true;
            w->ok_at[n] = eu_it_now_ms();
            atomic_store(&w->last_ok, w->ok_at[n]);
        } else {
            eu_it_sleep_ms(50); /* the database is away: do not spin */
        }
        eu_it_sleep_ms(10);
    }
    eu_it_resp_free(&r);
    return NULL;
}

START_TEST(test_failover_loses_nothing)
{
    struct eu_it_extra primary = {0}, standby = {0};
    char cmd[1024];

    /* The primary waits for a standby on every commit, so the standby
     * comes up before anything is written. */
    snprintf(primary.dir, sizeof(primary.dir), "/tmp/eunha_it_fo%d_primary_XXXXXX", (int)getppid());
    ck_assert_ptr_nonnull(mkdtemp(primary.dir));
    snprintf(cmd, sizeof(cmd),
             "d=%s/pg; chmod 755 %s; if [ -f \"${EUNHA_TEST_PG_SEED:-/none}/PG_VERSION\" ];"
             " then cp -a \"$EUNHA_TEST_PG_SEED\" \"$d\"; fi; p=$(eu_free_port) &&"
             " EU_PG_EXTRA_CONF=$(eu_pg_sync_primary_conf) eu_pg_start \"$d\" \"$p\" --no-fsync"
             " >&2 && echo \"$p\"",
             primary.dir, primary.dir);
    primary.port = eu_it_services(cmd);
    ck_assert_msg(primary.port > 0, "cannot start the primary");
    snprintf(standby.dir, sizeof(standby.dir), "/tmp/eunha_it_fo%d_standby_XXXXXX", (int)getppid());
    ck_assert_ptr_nonnull(mkdtemp(standby.dir));
    snprintf(cmd, sizeof(cmd),
             "chmod 755 %s; p=$(eu_free_port %d) && eu_pg_standby_start %s/pg \"$p\" %d >&2 &&"
             " eu_pg_wait_sync %d >&2 && echo \"$p\"",
             standby.dir, primary.port, standby.dir, primary.port, primary.port);
    standby.port = eu_it_services(cmd);
    ck_assert_msg(standby.port > 0, "cannot start a standby of the primary on %d", primary.port);
    struct eu_it_opts o = {.extra_toml = NO_LIMITS};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    struct eu_it_resp r = {0};
    char body[512];
    snprintf(body, sizeof(body),
             "{\"name\":\"pair\",\"database_url\":\"postgresql://postgres@127.0.0.1:%d,"
             "127.0.0.1:%d/eunha_pair?target_session_attrs=read-write\"}",
             primary.port, standby.port);
    eu_it_admin(s, "POST", "/admin/v1/placements", body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_admin(s, "POST", "/admin/v1/tenants", "{\"domain\":\"" HOST "\",\"placement\":\"pair\"}",
                &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_account_create(s, HOST, "alice");
    char *tid = eu_it_tenant_id(s, HOST);
    PGconn *c = eu_it_extra_pg_connect(&primary, "eunha_pair");
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "WITH app AS (INSERT INTO oauth_applications (tenant_id, name, redirect_uri, scopes,"
             " client_id, client_secret_hash) VALUES (%s, 'it', 'urn:ietf:wg:oauth:2.0:oob',"
             " 'read write', 'it-fo', 'secret') RETURNING id)"
             " INSERT INTO oauth_access_tokens (tenant_id, application_id, user_id, token_hash,"
             " scopes) SELECT %s, app.id, u.id, encode(sha256('fo-token'), 'hex'), 'read write'"
             " FROM app, users u WHERE u.tenant_id = %s RETURNING id",
             tid, tid, tid);
    free(eu_it_pg_query(c, sql));
    PQfinish(c);

    struct writer *w = calloc(1, sizeof(*w));
    ck_assert_ptr_nonnull(w);
    w->port = s->public_port;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, write_statuses, w), 0);
    long long t0 = eu_it_now_ms();
    while (atomic_load(&w->last_ok) == 0 || atomic_load(&w->sent) < 30) {
        ck_assert_msg(eu_it_now_ms() - t0 < 30000, "the writer got no 200 before the failover");
        eu_it_sleep_ms(50);
    }

    /* The primary dies mid-stream; the standby is promoted. */
    snprintf(cmd, sizeof(cmd), "eu_pg_kill %s/pg >&2", primary.dir);
    ck_assert_int_eq(eu_it_services(cmd), 0);
    long long killed = eu_it_now_ms();
    int sent_at_kill = atomic_load(&w->sent);
    eu_it_sleep_ms(1000); /* a second of errors, as an operator's promotion takes some */
    snprintf(cmd, sizeof(cmd), "eu_pg_promote %s/pg >&2", standby.dir);
    ck_assert_int_eq(eu_it_services(cmd), 0);
    long long promoted = eu_it_now_ms();
    while (atomic_load(&w->last_ok) < promoted) {
        ck_assert_msg(eu_it_now_ms() - promoted < 10000,
                      "no status acknowledged within 10 s of the promotion");
        eu_it_sleep_ms(20);
    }
    long long back = atomic_load(&w->last_ok) - promoted;
    /* A while of writes on the promoted server too. */
    eu_it_sleep_ms(1000);
    atomic_store(&w->stop, true);
    pthread_join(th, NULL);
    int sent = atomic_load(&w->sent), acked = 0, acked_before = 0;
    for (int n = 0; n < sent; n++) {
        if (w->acked[n]) {
            acked++;
            if (w->ok_at[n] < killed)
                acked_before++;
        }
    }
    fprintf(stderr,
            "failover: %d statuses sent, %d acknowledged (%d before the kill, %d sent by then);"
            " writes back %lld ms after the promotion (killed %lld ms before it)\n",
            sent, acked, acked_before, sent_at_kill, back, promoted - killed);

    /* Every acknowledged status is on the promoted server. */
    PGconn *p = eu_it_extra_pg_connect(&standby, "eunha_pair");
    snprintf(sql, sizeof(sql),
             "SELECT substr(text, 4) FROM statuses WHERE tenant_id = %s AND text LIKE 'fo %%'",
             tid);
    PGresult *res = PQexec(p, sql);
    ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
    bool *there = calloc(MAX_POSTS, sizeof(bool));
    for (int i = 0; i < PQntuples(res); i++) {
        int n = atoi(PQgetvalue(res, i, 0));
        if (n >= 0 && n < MAX_POSTS)
            there[n] = true;
    }
    int lost = 0;
    for (int n = 0; n < sent; n++) {
        if (w->acked[n] && !there[n]) {
            if (lost++ < 10)
                fprintf(stderr, "lost: status \"fo %d\" acknowledged at +%lld ms\n", n,
                        w->ok_at[n] - killed);
        }
    }
    fprintf(stderr, "%d rows on the promoted server, %d acknowledged ones missing\n",
            PQntuples(res), lost);
    PQclear(res);
    PQfinish(p);
    ck_assert_int_eq(lost, 0);
    ck_assert_int_gt(acked_before, 0);

    /* And the tenant reads from it. */
    eu_it_callf(s, &r, HOST, "GET", "fo-token", NULL, "/api/v1/timelines/home");
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_resp_free(&r);
    free(there);
    free(w);
    free(tid);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    eu_it_extra_pg_stop(&standby);
    eu_it_extra_pg_stop(&primary);
}
END_TEST

/* In the runner after the test: a test that failed midway (Check ends it
 * with _exit()) left its two servers running; their directories carry the
 * runner's pid. */
static void
stop_left_servers(void)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "for d in /tmp/eunha_it_fo%d_*; do [ -d \"$d\" ] || continue;"
             " eu_pg_stop \"$d/pg\" >&2; rm -rf \"$d\"; done",
             (int)getpid());
    eu_it_services(cmd);
}

int
main(void)
{
    Suite *s = suite_create("failover");
    TCase *tc = tcase_create("test_failover_loses_nothing");
    tcase_set_timeout(tc, TIMEOUT);
    tcase_add_unchecked_fixture(tc, NULL, eu_it_after_test);
    tcase_add_unchecked_fixture(tc, NULL, stop_left_servers);
    tcase_add_test(tc, test_failover_loses_nothing);
    suite_add_tcase(s, tc);
    return eu_it_run_suite(s);
}
