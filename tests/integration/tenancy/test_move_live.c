/*
 * A live move between PostgreSQL servers and Redis servers (issue 30, item
 * 3). The test starts a second PostgreSQL and a second Redis of its own
 * (fleet.h), registers placement "second" on them, and moves a tenant from
 * "main" there while a thread posts statuses through the API at about 50
 * a second, and another thread does the same through a second process on
 * the same databases (which hears of the move only through the control
 * row). It checks that:
 *   - the move answers 200 with write_pause_ms under a second, and /metrics
 *     counts the pause;
 *   - every status the writer was answered 200 for is on the target, and
 *     the writer met nothing but 200 or a 503 with Retry-After;
 *   - the source placement holds none of the tenant's rows, and the decoy
 *     tenants beside it (one on each placement) are untouched;
 *   - its token still works, a job queued before the move runs after it,
 *     and its Redis keys (an Idempotency-Key's) are on the target's Redis;
 *   - a move to a placement whose PostgreSQL is stopped fails cleanly: a
 *     5xx with an error body, a second move meanwhile 409, and the tenant
 *     serving from where it was with all its rows and no triggers left;
 *   - so does a move whose target PostgreSQL is killed while the rows are
 *     being copied into it.
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
#define HOST "live.example"
#define SEED_STATUSES 3000
#define MAX_ACKED 4096
/* Two writers on one token post faster than the API's default limit. */
#define TOML "[limits]\napi_requests_per_5min = 1000000\n"

static struct eu_it_extra pg2, pg3, pg4, redis2;

/* The writer thread's state: it posts until stop is set. */
struct writer {
    struct eu_it_server *s;
    const char *tok;
    atomic_bool stop;
    char ids[MAX_ACKED][24]; /* statuses answered 200 */
    int acked;
    int paused; /* 503 with Retry-After */
    int other;  /* anything else */
    long first_other;
    char other_body[256];
};

static void *
writer_run(void *arg)
{
    struct writer *w = arg;
    struct eu_it_resp r = {0};
    char body[96];
    for (int n = 0; !atomic_load(&w->stop) && w->acked < MAX_ACKED; n++) {
        /* Every fifth a direct one: the target's triggers write its
         * conversation row as the status is copied, beside the source's. */
        snprintf(body, sizeof(body), "{\"status\":\"written live %d\",\"visibility\":\"%s\"}", n,
                 n % 5 ? "public" : "direct");
        eu_it_http(&r, "POST", w->s->public_port, HOST, "/api/v1/statuses", w->tok, body);
        json_t *id = r.json ? json_object_get(r.json, "id") : NULL;
        if (r.status == 200 && json_is_string(id)) {
            snprintf(w->ids[w->acked++], sizeof(w->ids[0]), "%s", json_string_value(id));
        } else if (r.status == 503 && eu_it_resp_header(&r, "Retry-After")) {
            w->paused++;
        } else {
            if (!w->other++) {
                w->first_other = r.status;
                snprintf(w->other_body, sizeof(w->other_body), "%s", r.body ? r.body : "");
            }
        }
        usleep(20000);
    }
    eu_it_resp_free(&r);
    return NULL;
}

/* Asserts that every status w was answered 200 for is tenant tid's on the
 * target, and that w met nothing but 200 or 503 with Retry-After. */
static void check_writer(const struct writer *w, const char *what, const char *tid);

/* The first line of sql's answer on pg2's placement database, as a number. */
static long
second_long(const char *sql)
{
    PGconn *c = eu_it_extra_pg_connect(&pg2, "eunha_second");
    char *v = eu_it_pg_query(c, sql);
    long n = v ? atol(v) : -1;
    free(v);
    PQfinish(c);
    return n;
}

static void
check_writer(const struct writer *w, const char *what, const char *tid)
{
    fprintf(stderr, "%s: %d acknowledged, %d paused, %d other\n", what, w->acked, w->paused,
            w->other);
    ck_assert_msg(w->other == 0, "%s got %ld: %s", what, w->first_other, w->other_body);
    ck_assert_int_ge(w->acked, 40);
    size_t cap = (size_t)w->acked * 24 + 64, len = 0;
    char *list = malloc(cap);
    for (int i = 0; i < w->acked; i++)
        len += (size_t)snprintf(list + len, cap - len, "%s%s", i ? "," : "", w->ids[i]);
    char *q = malloc(cap + 256);
    snprintf(q, cap + 256, "SELECT count(*) FROM statuses WHERE tenant_id = %s AND id IN (%s)", tid,
             list);
    ck_assert_msg(second_long(q) == w->acked, "%s: acknowledged statuses missing", what);
    free(q);
    free(list);
}

static void
move_to(struct eu_it_server *s, const char *placement, struct eu_it_resp *r)
{
    char body[128];
    snprintf(body, sizeof(body), "{\"placement\":\"%s\"}", placement);
    eu_it_admin(s, "POST", "/admin/v1/tenants/" HOST "/move", body, r);
}

struct mover {
    struct eu_it_server *s;
    const char *to; /* the placement; NULL: "third" */
    struct eu_it_resp r;
};

static void *
mover_run(void *arg)
{
    struct mover *mv = arg;
    char url[64];
    snprintf(url, sizeof(url), "/admin/v1/tenants/%s/move", HOST);
    char body[64];
    snprintf(body, sizeof(body), "{\"placement\":\"%s\"}", mv->to ? mv->to : "third");
    eu_it_http(&mv->r, "POST", mv->s->admin_port, NULL, url, EU_IT_ADMIN_TOKEN, body);
    return NULL;
}

START_TEST(test_move_live)
{
    eu_it_extra_pg_start(&pg2);
    eu_it_extra_redis_start(&redis2);
    struct eu_it_server *s = eu_it_server_start(TOML);
    struct eu_it_resp r = {0};
    char body[512], sql[1024];

    snprintf(body, sizeof(body),
             "{\"name\":\"second\",\"database_url\":\"postgresql://postgres:secret@127.0.0.1:%d/"
             "eunha_second\",\"redis_url\":\"redis://127.0.0.1:%d/0\"}",
             pg2.port, redis2.port);
    eu_it_admin(s, "POST", "/admin/v1/placements", body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);

    /* The tenant and a decoy on main, another decoy on second. */
    eu_it_admin(s, "POST", "/admin/v1/tenants", "{\"domain\":\"" HOST "\",\"placement\":\"main\"}",
                &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_admin(s, "POST", "/admin/v1/tenants",
                "{\"domain\":\"decoy.example\",\"placement\":\"main\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_admin(s, "POST", "/admin/v1/tenants",
                "{\"domain\":\"decoy2.example\",\"placement\":\"second\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    char *tid = eu_it_tenant_id(s, HOST);
    char *did = eu_it_tenant_id(s, "decoy.example");
    char *d2id = eu_it_tenant_id(s, "decoy2.example");
    char *main_db = eu_it_tenant_database(s, HOST);
    char *alice = eu_it_account_seed(s, HOST, "alice");
    char *tok = eu_it_user_token(s, HOST, "alice", "read write");
    char *dacct = eu_it_account_seed(s, "decoy.example", "dora");
    /* The harness seeds only on the run's own server: through the API. */
    eu_it_account_create(s, "decoy2.example", "dave");
    free(eu_it_pg_execf(main_db,
                        "INSERT INTO statuses (tenant_id, account_id, text, content) SELECT %s, %s,"
                        " 'seed ' || g, '<p>seed</p>' FROM generate_series(1, %d) g",
                        tid, alice, SEED_STATUSES));
    free(eu_it_pg_execf(main_db,
                        "INSERT INTO statuses (tenant_id, account_id, text) SELECT %s, %s, 'decoy'"
                        " FROM generate_series(1, 50) g",
                        did, dacct));
    PGconn *c2 = eu_it_extra_pg_connect(&pg2, "eunha_second");
    snprintf(sql, sizeof(sql),
             "INSERT INTO statuses (tenant_id, account_id, text) SELECT %s, a.id, 'decoy2'"
             " FROM generate_series(1, 40) g, accounts a WHERE a.tenant_id = %s"
             " AND a.username = 'dave'",
             d2id, d2id);
    free(eu_it_pg_query(c2, sql));
    long decoy_rows = eu_it_tenant_rows(main_db, did);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM statuses WHERE tenant_id = %s", d2id);
    long decoy2_statuses = second_long(sql);
    ck_assert_int_eq(decoy2_statuses, 40);

    /* A job queued before the move, due after it. */
    char *job = eu_it_pg_execf(main_db,
                               "INSERT INTO jobs (tenant_id, kind, payload, run_at) VALUES (%s,"
                               " 'ping', '{\"n\": 1}', now() + interval '4 seconds') RETURNING id",
                               tid);
    /* A key in Redis: the Idempotency-Key of a post. */
    char auth[512];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
    const char *hdrs[] = {auth, "Content-Type: application/json", "Idempotency-Key: live-key-1",
                          NULL};
    eu_it_http_raw(&r, "POST", s->public_port, HOST, "/api/v1/statuses", hdrs,
                   "{\"status\":\"once\"}");
    EU_IT_EXPECT_STATUS(&r, 200);

    /* A second process on the same databases. */
    struct eu_it_opts ob = {.name = s->name, .extra_toml = TOML};
    struct eu_it_server *b = eu_it_server_start_opts(&ob);
    b->keep_databases = true; /* s drops them */

    /* The writers post all along the move, one through each process. */
    struct writer *w = calloc(1, sizeof(*w)), *w2 = calloc(1, sizeof(*w2));
    w->s = s;
    w->tok = tok;
    w2->s = b;
    w2->tok = tok;
    pthread_t th, th2;
    ck_assert_int_eq(pthread_create(&th, NULL, writer_run, w), 0);
    ck_assert_int_eq(pthread_create(&th2, NULL, writer_run, w2), 0);
    eu_it_sleep_ms(1000);
    long long t0 = eu_it_now_ms();
    move_to(s, "second", &r);
    long long took = eu_it_now_ms() - t0;
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "placement", "second");
    json_t *pause = eu_it_jpath(r.json, "write_pause_ms");
    ck_assert_msg(json_is_integer(pause), "no write_pause_ms: %s", r.body);
    long long pause_ms = json_integer_value(pause);
    fprintf(stderr, "live move: %lld ms in all, writes paused %lld ms, %lld rows, %lld rounds\n",
            took, pause_ms, (long long)json_integer_value(eu_it_jpath(r.json, "rows_copied")),
            (long long)json_integer_value(eu_it_jpath(r.json, "catch_up_rounds")));
    ck_assert_msg(pause_ms < 1000, "writes paused %lld ms", pause_ms);
    ck_assert_int_ge(json_integer_value(eu_it_jpath(r.json, "rows_copied")), SEED_STATUSES);
    ck_assert_int_ge(json_integer_value(eu_it_jpath(r.json, "redis_keys_copied")), 1);
    ck_assert_int_ge(json_integer_value(eu_it_jpath(r.json, "redis_keys_removed")), 1);
    eu_it_sleep_ms(1000);
    atomic_store(&w->stop, true);
    atomic_store(&w2->stop, true);
    pthread_join(th, NULL);
    pthread_join(th2, NULL);

    /* Every acknowledged status is on the target, and nothing else. */
    check_writer(w, "writer", tid);
    check_writer(w2, "writer through a second process", tid);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM statuses WHERE tenant_id = %s", tid);
    ck_assert_int_eq(second_long(sql), SEED_STATUSES + 1 + w->acked + w2->acked);
    /* One conversation row per direct status, not two. */
    snprintf(sql, sizeof(sql),
             "SELECT (SELECT count(*) FROM account_conversations WHERE tenant_id = %s) -"
             " (SELECT count(*) FROM statuses WHERE tenant_id = %s AND visibility = 3)",
             tid, tid);
    ck_assert_int_eq(second_long(sql), 0);

    /* Nothing of it is left on main; the decoys are as they were. */
    ck_assert_int_eq(eu_it_tenant_rows(main_db, tid), 0);
    ck_assert_int_eq(eu_it_tenant_rows(main_db, did), decoy_rows);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM statuses WHERE tenant_id = %s", d2id);
    ck_assert_int_eq(second_long(sql), decoy2_statuses);
    ck_assert_int_eq(eu_it_pg_exec_long(main_db, "SELECT count(*) FROM eunha_move.changes"), 0);
    ck_assert_int_eq(eu_it_pg_exec_long(main_db, "SELECT count(*) FROM pg_trigger WHERE"
                                                 " tgname LIKE 'eunha_move%'"),
                     0);

    /* Its token works; the job queued before the move ran after it. */
    eu_it_callf(s, &r, HOST, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM job_pings WHERE tenant_id = %s AND job_id = %s", tid, job);
    long ran = 0;
    for (int i = 0; i < 150 && ran == 0; i++) {
        ran = second_long(sql);
        if (!ran)
            eu_it_sleep_ms(100);
    }
    ck_assert_int_eq(ran, 1);

    /* Its Redis keys are on the target's Redis, and no longer on the
     * source's (the main one). */
    char cmd[256], main_cmd[256];
    snprintf(cmd, sizeof(cmd),
             "redis-cli -p %d --scan --pattern '*{t%s}:idempotency:*live-key-1' | wc -l",
             redis2.port, tid);
    snprintf(main_cmd, sizeof(main_cmd),
             "redis-cli -u \"$EUNHA_TEST_REDIS_URL\" --scan"
             " --pattern '%s*{t%s}:idempotency:*live-key-1' | wc -l",
             s->name, tid);
    ck_assert_int_eq(eu_it_services(cmd), 1);
    ck_assert_int_eq(eu_it_services(main_cmd), 0);
    ck_assert(eu_it_metric(s, "eunha_tenant_move_write_pause_seconds_count") >= 1);

    /* A move to a stopped server fails cleanly; a second one meanwhile is
     * refused. */
    eu_it_extra_pg_start(&pg3);
    snprintf(body, sizeof(body),
             "{\"name\":\"third\",\"database_url\":\"postgresql://postgres:secret@127.0.0.1:%d/"
             "eunha_third\"}",
             pg3.port);
    eu_it_admin(s, "POST", "/admin/v1/placements", body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_extra_pg_stop(&pg3);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM statuses WHERE tenant_id = %s", tid);
    long before = second_long(sql);
    /* Both to the stopped server, so that whichever runs second may only
     * be refused: the first takes tens of milliseconds to fail. */
    struct mover mv = {.s = s};
    ck_assert_int_eq(pthread_create(&th, NULL, mover_run, &mv), 0);
    eu_it_sleep_ms(20);
    move_to(s, "third", &r);
    pthread_join(th, NULL);
    struct eu_it_resp *failed = r.status == 409 ? &mv.r : &r;
    struct eu_it_resp *refused = r.status == 409 ? &r : &mv.r;
    ck_assert_msg(refused->status == 409, "no second move refused: %ld %s / %ld %s", r.status,
                  r.body, mv.r.status, mv.r.body);
    ck_assert_msg(failed->status >= 500 && failed->status < 600, "move to a stopped server: %ld %s",
                  failed->status, failed->body);
    ck_assert_msg(failed->json && json_is_string(json_object_get(failed->json, "error")), "%s",
                  failed->body);
    eu_it_resp_free(&mv.r);
    eu_it_admin(s, "GET", "/admin/v1/tenants/" HOST, NULL, &r);
    EU_IT_EXPECT_JSTR(&r, "placement", "second");
    ck_assert_int_eq(second_long(sql), before);
    ck_assert_int_eq(second_long("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'eunha_move%'"),
                     0);
    eu_it_callf(s, &r, HOST, "POST", tok, "{\"status\":\"still here\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(second_long(sql), before + 1);

    /* The target killed mid-copy: once eunha is writing into it (a
     * statement of its own active there), SIGKILL. */
    eu_it_extra_pg_start(&pg4);
    snprintf(body, sizeof(body),
             "{\"name\":\"fourth\",\"database_url\":\"postgresql://postgres:secret@127.0.0.1:%d/"
             "eunha_fourth\"}",
             pg4.port);
    eu_it_admin(s, "POST", "/admin/v1/placements", body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    before = second_long(sql);
    PGconn *c4 = eu_it_extra_pg_connect(&pg4, "postgres");
    struct mover mv4 = {.s = s, .to = "fourth"};
    ck_assert_int_eq(pthread_create(&th, NULL, mover_run, &mv4), 0);
    long long t4 = eu_it_now_ms();
    bool copying = false;
    while (!copying && eu_it_now_ms() - t4 < 20000) {
        char *v = eu_it_pg_query(c4, "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                                     " 'eunha_fourth' AND state = 'active'"
                                     " AND pid <> pg_backend_pid()");
        copying = v && atol(v) > 0;
        free(v);
        if (!copying)
            eu_it_sleep_ms(5);
    }
    PQfinish(c4);
    ck_assert_msg(copying, "the move never wrote into the target");
    char kill[256];
    snprintf(kill, sizeof(kill), "eu_pg_kill %s/pg >&2", pg4.dir);
    eu_it_services(kill);
    pthread_join(th, NULL);
    fprintf(stderr, "move killed mid-copy: %ld %s\n", mv4.r.status, mv4.r.body);
    ck_assert_msg(mv4.r.status >= 500 && mv4.r.status < 600, "move to a killed server: %ld %s",
                  mv4.r.status, mv4.r.body);
    eu_it_resp_free(&mv4.r);
    eu_it_admin(s, "GET", "/admin/v1/tenants/" HOST, NULL, &r);
    EU_IT_EXPECT_JSTR(&r, "placement", "second");
    ck_assert_int_eq(second_long(sql), before);
    ck_assert_int_eq(second_long("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'eunha_move%'"),
                     0);
    eu_it_callf(s, &r, HOST, "POST", tok, "{\"status\":\"still here after\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(second_long(sql), before + 1);
    eu_it_extra_pg_stop(&pg4);

    /* To a dedicated placement (on the main server and Redis): the keys
     * come from the Redis the tenant used (second's), which then has none
     * of them. */
    move_to(s, "dedicated", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_ge(json_integer_value(eu_it_jpath(r.json, "redis_keys_copied")), 1);
    ck_assert_int_ge(json_integer_value(eu_it_jpath(r.json, "redis_keys_removed")), 1);
    ck_assert_int_eq(eu_it_services(main_cmd), 1);
    ck_assert_int_eq(eu_it_services(cmd), 0);
    eu_it_callf(s, &r, HOST, "GET", tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_resp_free(&r);
    PQfinish(c2);
    free(w);
    free(w2);
    free(job);
    free(tid);
    free(did);
    free(d2id);
    free(main_db);
    free(alice);
    free(tok);
    free(dacct);
    ck_assert_int_eq(eu_it_server_stop(b), 0);
    eu_it_server_free(b);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    eu_it_extra_redis_stop(&redis2);
    eu_it_extra_pg_stop(&pg2);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("move_live");
    EU_IT_ADD_TCASE(s, test_move_live, TIMEOUT);
    return eu_it_run_suite(s);
}
