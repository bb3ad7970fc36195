/*
 * Counters kept as columns (migrations/tenant/0013_counters.sql).
 *
 * The first test moves every counter through the API (post, reply, boost,
 * favourite, follow, delete, suspend) and reads it back from the entities
 * that show it, with a decoy tenant in the same placement whose activity
 * must not move them.
 *
 * The second gives one author 10,000 statuses and another 25, then runs the
 * read statements that render accounts and statuses, and the instance
 * counts, under EXPLAIN (ANALYZE, BUFFERS) for each: the busy author's must
 * touch about as many buffers as the quiet one's. A statement that counted
 * an author's statuses on the read path would touch hundreds more.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eunha/sql.h"

#define TIMEOUT 240
#define HOST "counters.example"
#define DECOY "decoy.example"

static struct eu_it_server *srv;

/* Posts text (as a reply to in_reply_to when set); returns the id (free). */
static char *
post(const char *host, const char *token, const char *text, const char *in_reply_to)
{
    struct eu_it_resp r = {0};
    char body[256];
    if (in_reply_to)
        snprintf(body, sizeof(body), "{\"status\":\"%s\",\"in_reply_to_id\":\"%s\"}", text,
                 in_reply_to);
    else
        snprintf(body, sizeof(body), "{\"status\":\"%s\"}", text);
    eu_it_callf(srv, &r, host, "POST", token, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

static long long
num(struct eu_it_resp *r, const char *path)
{
    json_t *v = eu_it_jpath(r->json, path);
    ck_assert_msg(json_is_integer(v), "%s is not a number in %s", path, r->body);
    return json_integer_value(v);
}

/* The account's counters as /api/v1/accounts/:id shows them. */
static void
expect_account(const char *id, long long statuses, long long followers, long long following)
{
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, HOST, "GET", NULL, NULL, "/api/v1/accounts/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(num(&r, "statuses_count"), statuses);
    ck_assert_int_eq(num(&r, "followers_count"), followers);
    ck_assert_int_eq(num(&r, "following_count"), following);
    if (statuses > 0)
        ck_assert_ptr_nonnull(json_string_value(json_object_get(r.json, "last_status_at")));
    else
        ck_assert(json_is_null(json_object_get(r.json, "last_status_at")));
    eu_it_resp_free(&r);
}

static void
expect_status(const char *token, const char *id, long long replies, long long reblogs,
              long long favourites)
{
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, HOST, "GET", token, NULL, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(num(&r, "replies_count"), replies);
    ck_assert_int_eq(num(&r, "reblogs_count"), reblogs);
    ck_assert_int_eq(num(&r, "favourites_count"), favourites);
    eu_it_resp_free(&r);
}

static void
expect_instance(long long users, long long statuses)
{
    struct eu_it_resp r = {0};
    eu_it_public(srv, "GET", HOST, "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(num(&r, "stats.user_count"), users);
    ck_assert_int_eq(num(&r, "stats.status_count"), statuses);
    eu_it_resp_free(&r);
    eu_it_public(srv, "GET", HOST, "/nodeinfo/2.0", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(num(&r, "usage.users.total"), users);
    ck_assert_int_eq(num(&r, "usage.localPosts"), statuses);
    eu_it_resp_free(&r);
}

START_TEST(test_counters_move_with_their_rows)
{
    srv = eu_it_server_start(NULL);
    const char *hosts[] = {HOST, DECOY};
    char *tok[2][2], *id[2][2];
    for (int h = 0; h < 2; h++) {
        json_decref(eu_it_tenant_create(srv, hosts[h], "Counters"));
        free(eu_it_account_seed(srv, hosts[h], "alice"));
        free(eu_it_account_seed(srv, hosts[h], "bob"));
        tok[h][0] = eu_it_user_token(srv, hosts[h], "alice", "read write follow");
        tok[h][1] = eu_it_user_token(srv, hosts[h], "bob", "read write follow");
        id[h][0] = eu_it_account_id(srv, hosts[h], "alice");
        id[h][1] = eu_it_account_id(srv, hosts[h], "bob");
    }
    expect_account(id[0][0], 0, 0, 0);
    expect_instance(2, 0);

    /* The decoy does everything the subject does below, and more. */
    for (int i = 0; i < 3; i++)
        free(post(DECOY, tok[1][0], "decoy", NULL));
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, DECOY, "POST", tok[1][1], NULL, "/api/v1/accounts/%s/follow", id[1][0]);
    EU_IT_EXPECT_STATUS(&r, 200);

    char *first = post(HOST, tok[0][0], "first", NULL);
    char *second = post(HOST, tok[0][0], "second", NULL);
    expect_account(id[0][0], 2, 0, 0);
    expect_instance(2, 2);

    char *reply = post(HOST, tok[0][1], "a reply", first);
    eu_it_callf(srv, &r, HOST, "POST", tok[0][1], NULL, "/api/v1/statuses/%s/reblog", first);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "POST", tok[0][1], NULL, "/api/v1/statuses/%s/favourite", first);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* The answer to the action itself carries the new counts. */
    ck_assert_int_eq(num(&r, "favourites_count"), 1);
    ck_assert_int_eq(num(&r, "reblogs_count"), 1);
    ck_assert_int_eq(num(&r, "replies_count"), 1);
    expect_status(tok[0][0], first, 1, 1, 1);
    expect_account(id[0][1], 2, 0, 0); /* the reply and the boost */
    expect_instance(2, 4);

    eu_it_callf(srv, &r, HOST, "POST", tok[0][1], NULL, "/api/v1/accounts/%s/follow", id[0][0]);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_account(id[0][0], 2, 1, 0);
    expect_account(id[0][1], 2, 0, 1);

    /* Undoing each moves it back. */
    eu_it_callf(srv, &r, HOST, "POST", tok[0][1], NULL, "/api/v1/statuses/%s/unfavourite", first);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "POST", tok[0][1], NULL, "/api/v1/statuses/%s/unreblog", first);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "DELETE", tok[0][1], NULL, "/api/v1/statuses/%s", reply);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_status(tok[0][0], first, 0, 0, 0);
    eu_it_callf(srv, &r, HOST, "POST", tok[0][1], NULL, "/api/v1/accounts/%s/unfollow", id[0][0]);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_account(id[0][1], 0, 0, 0);
    eu_it_callf(srv, &r, HOST, "DELETE", tok[0][0], NULL, "/api/v1/statuses/%s", second);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "DELETE", tok[0][0], NULL, "/api/v1/statuses/%s", first);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_account(id[0][0], 0, 0, 0);
    expect_instance(2, 0);

    /* A suspended user is not counted, and counts again when lifted. */
    char path[200];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/suspend", HOST, id[0][1]);
    eu_it_admin(srv, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_instance(1, 0);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/unsuspend", HOST, id[0][1]);
    eu_it_admin(srv, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_instance(2, 0);

    /* The decoy's own counts were kept apart. */
    eu_it_callf(srv, &r, DECOY, "GET", NULL, NULL, "/api/v1/accounts/%s", id[1][0]);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(num(&r, "statuses_count"), 3);
    ck_assert_int_eq(num(&r, "followers_count"), 1);
    eu_it_resp_free(&r);

    free(first);
    free(second);
    free(reply);
    for (int h = 0; h < 2; h++)
        for (int u = 0; u < 2; u++) {
            free(tok[h][u]);
            free(id[h][u]);
        }
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

/* Shared buffers (hit + read) the statement touched, from EXPLAIN's JSON. */
static long
buffers(PGconn *pg, const char *stmt, const char *args)
{
    char sql[10000];
    snprintf(sql, sizeof(sql), "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE %s(%s)", stmt,
             args);
    char *plan = eu_it_pg_query(pg, sql);
    ck_assert_ptr_nonnull(plan);
    json_t *j = json_loads(plan, 0, NULL);
    ck_assert_ptr_nonnull(j);
    json_t *top = json_object_get(json_array_get(j, 0), "Plan");
    long n = (long)json_integer_value(json_object_get(top, "Shared Hit Blocks")) +
             (long)json_integer_value(json_object_get(top, "Shared Read Blocks"));
    json_decref(j);
    free(plan);
    return n;
}

static void
prepare(PGconn *pg, const char *stmt, const char *name)
{
    const struct eu_sql *s = eu_sql_find(name);
    ck_assert_msg(s != NULL, "no statement %s", name);
    const Oid int8 = 20;
    PGresult *r = PQprepare(pg, stmt, eu_sql_text(s, 0), 1, &int8);
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", name, PQresultErrorMessage(r));
    PQclear(r);
}

START_TEST(test_reads_do_not_grow_with_an_authors_statuses)
{
    srv = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(srv, HOST, "Counters"));
    free(eu_it_account_seed(srv, HOST, "busy"));
    free(eu_it_account_seed(srv, HOST, "quiet"));
    char *tid = eu_it_tenant_id(srv, HOST);
    char *db = eu_it_tenant_database(srv, HOST);
    char *busy = eu_it_account_id(srv, HOST, "busy");
    char *quiet = eu_it_account_id(srv, HOST, "quiet");
    char sql[1024];
    const char *who[] = {busy, quiet};
    const int count[] = {10000, 25};
    for (int i = 0; i < 2; i++) {
        snprintf(sql, sizeof(sql),
                 "INSERT INTO statuses (tenant_id, account_id, text, content)"
                 " SELECT %s, %s, 'post ' || g, '<p>post ' || g || '</p>'"
                 " FROM generate_series(1, %d) g",
                 tid, who[i], count[i]);
        free(eu_it_pg_exec(db, sql));
    }
    /* One transaction moved the author's counter row 10,000 times; autovacuum
     * would have pruned those versions long before a real author got there. */
    free(eu_it_pg_exec(db, "VACUUM ANALYZE"));

    /* The counts through the API first: the columns are what is read. */
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, HOST, "GET", NULL, NULL, "/api/v1/accounts/%s", busy);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(num(&r, "statuses_count"), 10000);
    eu_it_resp_free(&r);
    expect_instance(2, 10025);

    PGconn *pg = eu_it_pg_connect(db);
    prepare(pg, "render", "status_render.statuses");
    prepare(pg, "show", "accounts.show");
    prepare(pg, "stats", "instance.stats");
    prepare(pg, "nodeinfo", "nodeinfo.counts");
    long cost[2][2];
    for (int i = 0; i < 2; i++) {
        /* A page of the author's 20 newest statuses, as a viewer sees it. */
        snprintf(sql, sizeof(sql),
                 "SELECT '{' || string_agg(id::text, ',') || '}' FROM (SELECT id FROM statuses"
                 " WHERE tenant_id = %s AND account_id = %s ORDER BY id DESC LIMIT 20) x",
                 tid, who[i]);
        char *ids = eu_it_pg_query(pg, sql);
        char args[600];
        snprintf(args, sizeof(args), "%s, '%s', %s, 'https://x', '{}', '{}', false", tid, ids,
                 quiet);
        cost[i][0] = buffers(pg, "render", args);
        if (i == 0) {
            /* The same page with every row's stamp given, as when the
             * render cache holds them all: the costly columns are skipped. */
            snprintf(sql, sizeof(sql),
                     "SELECT (SELECT '{' || string_agg('\"' || id || ':' || xmin || '\"', ',')"
                     " || '}' FROM statuses WHERE tenant_id = %s AND id = ANY('%s')),"
                     " (SELECT '{\"' || id || ':' || xmin || '\"}' FROM accounts"
                     " WHERE tenant_id = %s AND id = %s)",
                     tid, ids, tid, who[0]);
            PGresult *st = PQexec(pg, sql);
            ck_assert_int_eq(PQresultStatus(st), PGRES_TUPLES_OK);
            char cached_args[8192];
            snprintf(cached_args, sizeof(cached_args),
                     "%s, '%s', %s, 'https://x', '%s', '%s', false", tid, ids, quiet,
                     PQgetvalue(st, 0, 0), PQgetvalue(st, 0, 1));
            PQclear(st);
            long hit = buffers(pg, "render", cached_args);
            fprintf(stderr, "buffers touched: render 20 cached statuses %ld vs %ld uncached\n", hit,
                    cost[0][0]);
            ck_assert_msg(hit < cost[0][0], "cached rows cost as much: %ld vs %ld", hit,
                          cost[0][0]);
        }
        snprintf(args, sizeof(args), "%s, %s", tid, who[i]);
        cost[i][1] = buffers(pg, "show", args);
        free(ids);
    }
    fprintf(stderr,
            "buffers touched: render 20 statuses %ld (10,000 statuses) vs %ld (25);"
            " account %ld vs %ld\n",
            cost[0][0], cost[1][0], cost[0][1], cost[1][1]);
    ck_assert_msg(cost[0][0] <= cost[1][0] + cost[1][0] / 2 + 10,
                  "rendering grows with the author's statuses: %ld vs %ld", cost[0][0], cost[1][0]);
    ck_assert_msg(cost[0][1] <= cost[1][1] + 5, "an account grows with its statuses: %ld vs %ld",
                  cost[0][1], cost[1][1]);
    /* The instance counts read one row, whatever the tenant holds. */
    snprintf(sql, sizeof(sql), "%s", tid);
    long stats = buffers(pg, "stats", sql);
    long nodeinfo = buffers(pg, "nodeinfo", sql);
    fprintf(stderr, "buffers touched: instance %ld, nodeinfo %ld\n", stats, nodeinfo);
    ck_assert_int_lt(stats, 30);
    ck_assert_int_lt(nodeinfo, 10);
    PQfinish(pg);

    free(tid);
    free(db);
    free(busy);
    free(quiet);
    eu_sql_free();
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

/* Forks a child that sends method to path (with a JSON body, or NULL) as
 * token's user and exits 0 on a 200; returns its pid. A request that will
 * wait on a lock goes from a child, so the test can go on meanwhile. */
static pid_t
call_in_child(const char *method, const char *token, const char *path, const char *body)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        struct eu_it_resp r = {0};
        int rc = eu_it_http(&r, method, srv->public_port, HOST, path, token, body);
        _exit(rc == 0 && r.status == 200 ? 0 : 1);
    }
    return child;
}

/* Waits up to 10 s for n sessions of db to wait on a lock. */
static void
await_lock_waiters(const char *db, long n)
{
    long got = 0;
    for (int i = 0; i < 200 && (got = eu_it_pg_count_lock_waiters(db)) < n; i++)
        eu_it_sleep_ms(50);
    ck_assert_msg(got >= n, "%ld sessions wait on a lock, want %ld", got, n);
}

/* In holder's open transaction, locks every one of tenant tid's sixteen
 * status count shards, made first if missing: the shard a write takes is
 * its backend's (migration 0074), which the test cannot choose. */
static void
hold_all_shards(PGconn *holder, const char *db, const char *tid)
{
    free(eu_it_pg_execf(db,
                        "INSERT INTO instance_status_counts (tenant_id, shard, n)"
                        " SELECT %s, g, 0 FROM generate_series(0, 15) g ON CONFLICT DO NOTHING",
                        tid));
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT n FROM instance_status_counts WHERE tenant_id = %s FOR UPDATE", tid);
    free(eu_it_pg_query(holder, sql));
}

/*
 * Every path that moves an author's counters locks the author's row before
 * the instance's shard (migration 0038). A plain post locks the author's
 * row in its own statement and moves the shard after; an insert by another
 * statement (here SQL, as a non-plain post's) used to take the shard
 * first. With a third session holding the shards until both wait, the two
 * posts then each held what the other wanted, and PostgreSQL ended one of
 * them with a deadlock.
 */
START_TEST(test_counters_lock_in_one_order)
{
    srv = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(srv, HOST, "Counters"));
    free(eu_it_account_seed(srv, HOST, "dana"));
    char *tok = eu_it_user_token(srv, HOST, "dana", "read write");
    char *dana = eu_it_account_id(srv, HOST, "dana");
    char *tid = eu_it_tenant_id(srv, HOST);
    char *db = eu_it_tenant_database(srv, HOST);
    free(post(HOST, tok, "the shard's row exists", NULL));

    char *url = eu_it_pg_url(db);
    PGconn *holder = PQconnectdb(url), *other = PQconnectdb(url);
    ck_assert(PQstatus(holder) == CONNECTION_OK && PQstatus(other) == CONNECTION_OK);
    free(eu_it_pg_query(holder, "BEGIN"));
    hold_all_shards(holder, db, tid);
    char sql[512];
    snprintf(sql, sizeof(sql),
             "INSERT INTO statuses (tenant_id, account_id, text, content, spoiler_text,"
             " sensitive, visibility, conversation_id) VALUES (%s, %s, 'by SQL', '<p>by SQL</p>',"
             " '', false, 0, nextval('conversations_id_seq'))",
             tid, dana);
    ck_assert_int_eq(PQsendQuery(other, sql), 1);
    await_lock_waiters(db, 1);

    pid_t child = call_in_child("POST", tok, "/api/v1/statuses", "{\"status\":\"plain\"}");
    await_lock_waiters(db, 2);
    free(eu_it_pg_query(holder, "COMMIT"));

    PGresult *res;
    bool ok = true;
    char err[300] = "";
    while ((res = PQgetResult(other))) {
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
            ok = false;
            snprintf(err, sizeof(err), "%s", PQresultErrorMessage(res));
        }
        PQclear(res);
    }
    int wst = 0;
    ck_assert_int_eq(waitpid(child, &wst, 0), child);
    ck_assert_msg(ok, "the insert by SQL failed: %s", err);
    ck_assert_msg(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "the plain post failed");
    expect_account(dana, 3, 0, 0);
    expect_instance(1, 3);

    PQfinish(holder);
    PQfinish(other);
    free(url);
    free(tok);
    free(dana);
    free(tid);
    free(db);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

/*
 * Deleting a status deletes its boosts, each moving its own author's
 * counters. Two authors deleting statuses the other boosted used to lock
 * their accounts in opposite orders (own row, then the booster's), and
 * PostgreSQL ended one delete with a deadlock (a 500). statuses.delete now
 * locks every author it will touch in id order first. A third session
 * holding every shard makes the interleaving certain.
 */
START_TEST(test_deletes_lock_authors_in_one_order)
{
    srv = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(srv, HOST, "Counters"));
    const char *names[] = {"erin", "fay", "gus"};
    char *tok[3], *ids[3];
    for (int i = 0; i < 3; i++) {
        free(eu_it_account_seed(srv, HOST, names[i]));
        tok[i] = eu_it_user_token(srv, HOST, names[i], "read write");
        ids[i] = eu_it_account_id(srv, HOST, names[i]);
    }
    int a = 0, b = 1;
    char *sa = post(HOST, tok[a], "by a", NULL), *sb = post(HOST, tok[b], "by b", NULL);
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, HOST, "POST", tok[b], NULL, "/api/v1/statuses/%s/reblog", sa);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "POST", tok[a], NULL, "/api/v1/statuses/%s/reblog", sb);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    expect_account(ids[a], 2, 0, 0);
    expect_account(ids[b], 2, 0, 0);

    char *tid = eu_it_tenant_id(srv, HOST);
    char *db = eu_it_tenant_database(srv, HOST);
    char *url = eu_it_pg_url(db);
    PGconn *holder = PQconnectdb(url);
    ck_assert(PQstatus(holder) == CONNECTION_OK);
    free(eu_it_pg_query(holder, "BEGIN"));
    hold_all_shards(holder, db, tid);
    char path[128];
    /* a's delete waits on the shard holding what it locked; then b's
     * comes, and reaches a's account through a's boost of sb. */
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", sa);
    pid_t first = call_in_child("DELETE", tok[a], path, NULL);
    await_lock_waiters(db, 1);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", sb);
    pid_t second = call_in_child("DELETE", tok[b], path, NULL);
    await_lock_waiters(db, 2);
    free(eu_it_pg_query(holder, "COMMIT"));

    int w1 = 0, w2 = 0;
    ck_assert_int_eq(waitpid(first, &w1, 0), first);
    ck_assert_int_eq(waitpid(second, &w2, 0), second);
    ck_assert_msg(WIFEXITED(w1) && WEXITSTATUS(w1) == 0, "the first delete failed");
    ck_assert_msg(WIFEXITED(w2) && WEXITSTATUS(w2) == 0, "the second delete failed");
    expect_account(ids[a], 0, 0, 0);
    expect_account(ids[b], 0, 0, 0);
    expect_instance(3, 0);

    PQfinish(holder);
    free(url);
    free(db);
    free(tid);
    free(sa);
    free(sb);
    for (int i = 0; i < 3; i++) {
        free(tok[i]);
        free(ids[i]);
    }
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

/*
 * Eight users post at once (eight clients, the tenant's two connections):
 * every post is counted, on its author and on the instance (API and
 * NodeInfo), none waits forever on another's counter row, and the decoy
 * tenant in the same placement counts nothing of them.
 */
START_TEST(test_concurrent_posts_all_counted)
{
    srv = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(srv, HOST, "Counters"));
    json_decref(eu_it_tenant_create(srv, DECOY, "Decoy"));
    free(eu_it_account_seed(srv, DECOY, "zed"));
    char *ztok = eu_it_user_token(srv, DECOY, "zed", "read write");
    free(post(DECOY, ztok, "decoy", NULL));
    enum { N = 8, ROUNDS = 3 };
    char *tok[N], *ids[N];
    for (int i = 0; i < N; i++) {
        char name[24];
        snprintf(name, sizeof(name), "poster%d", i);
        free(eu_it_account_seed(srv, HOST, name));
        tok[i] = eu_it_user_token(srv, HOST, name, "read write");
        ids[i] = eu_it_account_id(srv, HOST, name);
    }
    expect_instance(N, 0);
    for (int round = 0; round < ROUNDS; round++) {
        pid_t kids[N];
        for (int i = 0; i < N; i++)
            kids[i] = call_in_child("POST", tok[i], "/api/v1/statuses", "{\"status\":\"at once\"}");
        for (int i = 0; i < N; i++) {
            int st = 0;
            ck_assert_int_eq(waitpid(kids[i], &st, 0), kids[i]);
            ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "post %d of round %d failed", i,
                          round);
        }
    }
    for (int i = 0; i < N; i++)
        expect_account(ids[i], ROUNDS, 0, 0);
    expect_instance(N, N * ROUNDS);

    struct eu_it_resp r = {0};
    eu_it_public(srv, "GET", DECOY, "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(num(&r, "stats.status_count"), 1);
    ck_assert_int_eq(num(&r, "stats.user_count"), 1);
    eu_it_resp_free(&r);

    for (int i = 0; i < N; i++) {
        free(tok[i]);
        free(ids[i]);
    }
    free(ztok);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("counters");
    EU_IT_ADD_TCASE(s, test_concurrent_posts_all_counted, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_counters_move_with_their_rows, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_reads_do_not_grow_with_an_authors_statuses, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_counters_lock_in_one_order, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_deletes_lock_authors_in_one_order, TIMEOUT);
    return eu_it_run_suite(s);
}
