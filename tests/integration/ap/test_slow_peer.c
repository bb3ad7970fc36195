/*
 * One tenant's slow neighbours must not stall the others (issue 26, item
 * 5), against a real server:
 *
 *   - a flood of Creates whose object is only a URL on a host that answers
 *     slowly holds neither the tenant's turn nor a connection: the same
 *     tenant's next activity, another tenant's, and another tenant's
 *     requests go through while the slow host still has not answered;
 *   - deliveries whose key must be fetched from a slow host do not take
 *     the inbox room of senders whose key is known;
 *   - a tenant whose statements run into statement_timeout, even with its
 *     pool limit raised to the placement's size, leaves connections the
 *     other tenants of the placement can take.
 *
 * The slow host is a tiny evhttp server in a thread of this process that
 * answers every request 404 after SLOW_MS; the margins compare against it
 * (others must be done in a fraction of it), not against the clock.
 */
#include "harness.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ap_peer.h"
#include "eunha/httpsig.h"

#define TIMEOUT 240
/* How long the slow host takes to answer. */
#define SLOW_MS 15000
/* What others may take meanwhile: generous for a busy machine, well under
 * SLOW_MS. */
#define FAST_MS 2000
#define BOB "https://remote.example/users/bob"

/* ------------------------------------------------------- the slow host */

struct slow {
    pthread_t thread;
    pthread_mutex_t mu;
    struct event_base *base;
    struct evhttp *http;
    struct event *stop;
    int port;
    char origin[64];
    int requests; /* seen so far */
};

static void
on_slow_answer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct evhttp_request *req = arg;
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "{\"error\":\"Not found\"}");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 404, "Not Found", b);
    evbuffer_free(b);
}

static void
on_slow_request(struct evhttp_request *req, void *arg)
{
    struct slow *sl = arg;
    pthread_mutex_lock(&sl->mu);
    sl->requests++;
    pthread_mutex_unlock(&sl->mu);
    struct timeval tv = {SLOW_MS / 1000, (SLOW_MS % 1000) * 1000};
    event_base_once(sl->base, -1, EV_TIMEOUT, on_slow_answer, req, &tv);
}

static void *
slow_main(void *arg)
{
    struct slow *sl = arg;
    event_base_dispatch(sl->base);
    return NULL;
}

static struct slow *
slow_start(void)
{
    struct slow *sl = calloc(1, sizeof(*sl));
    pthread_mutex_init(&sl->mu, NULL);
    evthread_use_pthreads();
    sl->base = event_base_new();
    sl->http = evhttp_new(sl->base);
    struct evhttp_bound_socket *h = evhttp_bind_socket_with_handle(sl->http, "127.0.0.1", 0);
    ck_assert_ptr_nonnull(h);
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    getsockname(evhttp_bound_socket_get_fd(h), (struct sockaddr *)&sin, &len);
    sl->port = ntohs(sin.sin_port);
    snprintf(sl->origin, sizeof(sl->origin), "http://127.0.0.1:%d", sl->port);
    evhttp_set_gencb(sl->http, on_slow_request, sl);
    sl->stop = event_new(sl->base, -1, 0, peer_on_stop, sl->base);
    ck_assert_int_eq(pthread_create(&sl->thread, NULL, slow_main, sl), 0);
    return sl;
}

static int
slow_requests(struct slow *sl)
{
    pthread_mutex_lock(&sl->mu);
    int n = sl->requests;
    pthread_mutex_unlock(&sl->mu);
    return n;
}

static void
slow_stop(struct slow *sl)
{
    event_active(sl->stop, EV_TIMEOUT, 1);
    pthread_join(sl->thread, NULL);
    event_free(sl->stop);
    evhttp_free(sl->http);
    event_base_free(sl->base);
    pthread_mutex_destroy(&sl->mu);
    free(sl);
}

/* ------------------------------------------------------------- helpers */

/* Queues an ap_inbox job on host for activity from actor, as the inbox
 * does; returns its id (caller frees). */
static char *
queue_activity(struct eu_it_server *s, const char *host, const char *actor, const char *activity)
{
    json_error_t e;
    json_t *act = json_loads(activity, 0, &e);
    ck_assert_msg(act != NULL, "fixture: %s: %s", e.text, activity);
    json_t *body = json_pack("{s:s, s:{s:o, s:s, s:n}}", "kind", "ap_inbox", "payload", "activity",
                             act, "actor", actor, "recipient");
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/jobs", host);
    struct eu_it_resp r = {0};
    eu_it_admin(s, "POST", path, text, &r);
    free(text);
    EU_IT_EXPECT_STATUS(&r, 201);
    char *job = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return job;
}

/* Waits up to ms for job to leave the table; returns how long it took, or
 * -1 when it did not. */
static long long
job_gone_within(const char *db, const char *tid, const char *job, long ms)
{
    long long t0 = eu_it_now_ms();
    while (eu_it_now_ms() - t0 < ms) {
        if (eu_it_pg_execf_long(db, "SELECT count(*) FROM jobs WHERE tenant_id = %s AND id = %s",
                                tid, job) == 0)
            return eu_it_now_ms() - t0;
        eu_it_sleep_ms(50);
    }
    return -1;
}

/* A Create by BOB of an embedded note addressed to local account alice of
 * host, id n (caller frees). */
static char *
note_for(const char *host, int n)
{
    char *s = NULL;
    ck_assert_int_ge(asprintf(&s,
                              "{\"id\":\"https://remote.example/activities/fine-%d\","
                              "\"type\":\"Create\",\"actor\":\"" BOB "\","
                              "\"object\":{\"id\":\"https://remote.example/notes/fine-%d\","
                              "\"type\":\"Note\",\"attributedTo\":\"" BOB "\","
                              "\"content\":\"fine %d\",\"to\":[\"http://%s/users/alice\"]}}",
                              n, n, n, host),
                     0);
    return s;
}

/* A request sent from a thread, its headers and body ready. */
struct sender {
    pthread_t thread;
    int port;
    const char *host, *path, *body;
    char *lines[EU_HTTPSIG_SIGNED_MAX + 1];
    const char *headers[EU_HTTPSIG_SIGNED_MAX + 2];
    const char *method;
    const char *bearer;
    struct eu_it_resp r;
};

static void *
sender_main(void *arg)
{
    struct sender *sd = arg;
    if (sd->bearer)
        eu_it_http(&sd->r, sd->method, sd->port, sd->host, sd->path, sd->bearer, sd->body);
    else
        eu_it_http_raw(&sd->r, sd->method, sd->port, sd->host, sd->path, sd->headers, sd->body);
    return NULL;
}

/* Signs a POST of body to http://host/path with key_id and priv into sd's
 * headers. */
static void
sign_post(struct sender *sd, const char *host, const char *path, const char *body,
          const char *key_id, const char *priv)
{
    char url[256];
    snprintf(url, sizeof(url), "http://%s%s", host, path);
    struct eu_httpsig_sign_args a = {
        .method = "POST",
        .url = url,
        .body = body,
        .body_len = strlen(body),
        .key_id = key_id,
        .key_pem = priv,
        .now = time(NULL),
    };
    struct eu_httpsig_signed sg = {0};
    ck_assert_int_eq(eu_httpsig_sign_cavage(&a, &sg), 0);
    int n = 0;
    for (int i = 0; i < sg.n; i++) {
        if (strcasecmp(sg.headers[i].name, "Host") == 0)
            continue;
        ck_assert_int_ge(asprintf(&sd->lines[n], "%s: %s", sg.headers[i].name, sg.headers[i].value),
                         0);
        sd->headers[n] = sd->lines[n];
        n++;
    }
    sd->lines[n] = NULL;
    sd->headers[n] = "Content-Type: application/activity+json";
    sd->headers[n + 1] = NULL;
    eu_httpsig_signed_release(&sg);
    sd->method = "POST";
    sd->host = host;
    sd->path = path;
    sd->body = body;
}

static void
sender_free(struct sender *sd)
{
    for (int i = 0; sd->lines[i]; i++)
        free(sd->lines[i]);
    eu_it_resp_free(&sd->r);
}

/* ---------------------------------------------- objects on a slow host */

/*
 * Forty Creates naming notes on the slow host, then an ordinary Create for
 * the same tenant and one for another tenant of the placement: both are
 * stored while the slow host still has not answered, the other tenant's
 * requests answer at once, and the slow host sees no more fetches from the
 * tenant than its per-host cap (the rest are put off, not held).
 */
START_TEST(test_slow_object_host_holds_nothing)
{
    struct slow *sl = slow_start();
    struct eu_it_opts o = {.extra_toml = PEER_TOML};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.test", "A"));
    json_decref(eu_it_tenant_create(s, "b.test", "B"));
    free(eu_it_account_seed(s, "a.test", "alice"));
    free(eu_it_account_seed(s, "b.test", "alice"));
    char *db = eu_it_tenant_database(s, "a.test");
    char *tid_a = eu_it_tenant_id(s, "a.test"), *tid_b = eu_it_tenant_id(s, "b.test");
    free(eu_it_remote_account(db, tid_a, BOB, true));
    free(eu_it_remote_account(db, tid_b, BOB, true));

    for (int i = 0; i < 40; i++) {
        char act[512];
        snprintf(act, sizeof(act),
                 "{\"id\":\"https://remote.example/activities/slow-%d\",\"type\":\"Create\","
                 "\"actor\":\"" BOB "\",\"object\":\"%s/notes/%d\"}",
                 i, sl->origin, i);
        free(queue_activity(s, "a.test", BOB, act));
    }
    /* The first of them reached the slow host: the turn is under way. */
    long long t0 = eu_it_now_ms();
    while (slow_requests(sl) == 0 && eu_it_now_ms() - t0 < 10000)
        eu_it_sleep_ms(20);
    ck_assert_int_gt(slow_requests(sl), 0);

    t0 = eu_it_now_ms();
    char *fine_a = note_for("a.test", 1), *fine_b = note_for("b.test", 2);
    char *job_a = queue_activity(s, "a.test", BOB, fine_a);
    char *job_b = queue_activity(s, "b.test", BOB, fine_b);
    struct eu_it_resp r = {0};
    eu_it_public(s, "GET", "b.test", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(r.seconds * 1000 < FAST_MS, "b.test answered after %.2f s", r.seconds);
    long long took_b = job_gone_within(db, tid_b, job_b, SLOW_MS / 2);
    long long took_a = job_gone_within(db, tid_a, job_a, SLOW_MS / 2 - (eu_it_now_ms() - t0));
    ck_assert_msg(took_b >= 0, "b.test's activity waited on a.test's slow host");
    ck_assert_msg(took_a >= 0, "a.test's activity waited behind the Creates naming a slow host");
    ck_assert_msg(eu_it_now_ms() - t0 < SLOW_MS, "the slow host answered first");
    ck_assert_int_eq(eu_it_pg_execf_long(db,
                                         "SELECT count(*) FROM statuses WHERE tenant_id = %s"
                                         " AND uri = 'https://remote.example/notes/fine-1'",
                                         tid_a),
                     1);
    ck_assert_int_eq(eu_it_pg_execf_long(db,
                                         "SELECT count(*) FROM statuses WHERE tenant_id = %s"
                                         " AND uri = 'https://remote.example/notes/fine-2'",
                                         tid_b),
                     1);
    /* Bounded per host: the rest of the flood waits in the table. */
    int seen = slow_requests(sl);
    ck_assert_msg(seen <= 4, "%d fetches went to the slow host at once", seen);
    ck_assert_int_gt(eu_it_pg_execf_long(db,
                                         "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                         " AND kind = 'ap_inbox' AND run_at > now()",
                                         tid_a),
                     0);

    eu_it_resp_free(&r);
    free(fine_a);
    free(fine_b);
    free(job_a);
    free(job_b);
    free(db);
    free(tid_a);
    free(tid_b);
    eu_it_server_free(s);
    slow_stop(sl);
}
END_TEST

/* ------------------------------------------------ keys on a slow host */

#define KEY_FLOOD 34

/*
 * More unauthenticated deliveries than the inbox has room for, each signed
 * with a key id on the slow host: a delivery from a sender whose key is
 * known is still taken at once (202), and the flood got no more key
 * fetches than its host's cap.
 */
START_TEST(test_slow_key_host_leaves_room)
{
    struct slow *sl = slow_start();
    struct peer *peer = peer_start();
    struct eu_it_opts o = {.extra_toml = PEER_TOML};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.test", "A"));
    free(eu_it_account_seed(s, "a.test", "alice"));
    char peer_id[128], peer_key[160], slow_actor[128], slow_key[160];
    snprintf(peer_id, sizeof(peer_id), "%s/users/peer", peer->origin);
    snprintf(peer_key, sizeof(peer_key), "%s#main-key", peer_id);
    snprintf(slow_actor, sizeof(slow_actor), "%s/users/mallory", sl->origin);
    snprintf(slow_key, sizeof(slow_key), "%s#main-key", slow_actor);

    /* The peer's first delivery puts its key in the cache. */
    char body[512];
    snprintf(body, sizeof(body),
             "{\"id\":\"%s/activities/1\",\"type\":\"Like\",\"actor\":\"%s\","
             "\"object\":\"http://a.test/users/alice/statuses/1\"}",
             peer->origin, peer_id);
    struct sender first = {.port = s->public_port};
    sign_post(&first, "a.test", "/inbox", body, peer_key, peer->actors[0].priv);
    sender_main(&first);
    EU_IT_EXPECT_STATUS(&first.r, 202);
    ck_assert_int_eq(peer_fetches(peer, 0), 1);
    sender_free(&first);

    static struct sender flood[KEY_FLOOD];
    static char bodies[KEY_FLOOD][512];
    memset(flood, 0, sizeof(flood));
    for (int i = 0; i < KEY_FLOOD; i++) {
        snprintf(bodies[i], sizeof(bodies[i]),
                 "{\"id\":\"%s/activities/%d\",\"type\":\"Like\",\"actor\":\"%s\","
                 "\"object\":\"http://a.test/users/alice/statuses/1\"}",
                 sl->origin, i, slow_actor);
        flood[i].port = s->public_port;
        /* Any key signs: it is never found to check. */
        sign_post(&flood[i], "a.test", "/inbox", bodies[i], slow_key, peer->actors[1].priv);
        ck_assert_int_eq(pthread_create(&flood[i].thread, NULL, sender_main, &flood[i]), 0);
    }
    long long t0 = eu_it_now_ms();
    while (slow_requests(sl) == 0 && eu_it_now_ms() - t0 < 10000)
        eu_it_sleep_ms(20);
    ck_assert_int_gt(slow_requests(sl), 0);
    eu_it_sleep_ms(1000); /* the rest of the flood reaches the inbox */

    snprintf(body, sizeof(body),
             "{\"id\":\"%s/activities/2\",\"type\":\"Like\",\"actor\":\"%s\","
             "\"object\":\"http://a.test/users/alice/statuses/2\"}",
             peer->origin, peer_id);
    struct sender fine = {.port = s->public_port};
    sign_post(&fine, "a.test", "/inbox", body, peer_key, peer->actors[0].priv);
    sender_main(&fine);
    EU_IT_EXPECT_STATUS(&fine.r, 202);
    ck_assert_msg(fine.r.seconds * 1000 < FAST_MS, "a known sender waited %.2f s", fine.r.seconds);
    sender_free(&fine);

    int refused = 0;
    for (int i = 0; i < KEY_FLOOD; i++) {
        pthread_join(flood[i].thread, NULL);
        ck_assert_msg(flood[i].r.status == 503 || flood[i].r.status == 401,
                      "a delivery with a key on the slow host got %ld", flood[i].r.status);
        refused += flood[i].r.status == 503;
        sender_free(&flood[i]);
    }
    ck_assert_int_gt(refused, 0);
    /* The host's cap of key fetches at once, each tried in both forms at
     * most. */
    ck_assert_msg(slow_requests(sl) <= 4, "%d key fetches from the slow host", slow_requests(sl));

    eu_it_server_free(s);
    peer_stop(peer);
    slow_stop(sl);
}
END_TEST

/* ------------------------------------- slow statements on a placement */

#define SLOW_STATEMENTS 6

/*
 * Tenant a.test, its pool limit raised to the placement's 4 connections,
 * runs six requests whose statement waits on a row lock until
 * statement_timeout; b.test, on the same placement, still answers at once.
 */
START_TEST(test_slow_statements_leave_the_placement_room)
{
    struct eu_it_opts o = {.database_toml = "statement_timeout_ms = 6000",
                           .placement_connections = 4};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.test", "A"));
    json_decref(eu_it_tenant_create(s, "b.test", "B"));
    free(eu_it_account_seed(s, "a.test", "alice"));
    free(eu_it_account_seed(s, "b.test", "bea"));
    eu_it_tenant_patch(s, "a.test", "{\"max_connections\":4}");
    char *tok = eu_it_user_token(s, "a.test", "alice", "read write");
    char *db = eu_it_tenant_database(s, "a.test");
    char *db_b = eu_it_tenant_database(s, "b.test");
    ck_assert_str_eq(db, db_b);
    char *tid = eu_it_tenant_id(s, "a.test");
    struct eu_it_resp r = {0};
    eu_it_public(s, "GET", "b.test", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    PGconn *locker = eu_it_pg_connect(db);
    char sql[300];
    snprintf(sql, sizeof(sql),
             "BEGIN; SELECT 1 FROM accounts WHERE tenant_id = %s AND username = 'alice'"
             " FOR UPDATE",
             tid);
    PGresult *lr = PQexec(locker, sql);
    ck_assert_int_eq(PQresultStatus(lr), PGRES_TUPLES_OK);
    PQclear(lr);

    static struct sender slow[SLOW_STATEMENTS];
    memset(slow, 0, sizeof(slow));
    for (int i = 0; i < SLOW_STATEMENTS; i++) {
        slow[i] = (struct sender){.port = s->public_port,
                                  .host = "a.test",
                                  .method = "PATCH",
                                  .path = "/api/v1/accounts/update_credentials",
                                  .bearer = tok,
                                  .body = "{\"display_name\":\"Blocked\"}"};
        ck_assert_int_eq(pthread_create(&slow[i].thread, NULL, sender_main, &slow[i]), 0);
    }
    /* a.test's statements are waiting on the lock. */
    long long t0 = eu_it_now_ms();
    while (eu_it_pg_count_lock_waiters(db) < 2 && eu_it_now_ms() - t0 < 5000)
        eu_it_sleep_ms(20);
    ck_assert_int_ge(eu_it_pg_count_lock_waiters(db), 2);
    eu_it_sleep_ms(300);

    for (int i = 0; i < 3; i++) {
        eu_it_public(s, "GET", "b.test", "/api/v1/instance", &r);
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert_msg(r.seconds * 1000 < FAST_MS, "b.test answered after %.2f s", r.seconds);
    }
    /* a.test's own share held: at most 3 of the 4 lock waiters are its. */
    ck_assert_int_le(eu_it_pg_count_lock_waiters(db), 3);

    for (int i = 0; i < SLOW_STATEMENTS; i++) {
        pthread_join(slow[i].thread, NULL);
        ck_assert_msg(slow[i].r.status == 503, "a.test's slow request got %ld", slow[i].r.status);
        sender_free(&slow[i]);
    }
    lr = PQexec(locker, "ROLLBACK");
    PQclear(lr);
    PQfinish(locker);
    eu_it_resp_free(&r);
    free(tok);
    free(db);
    free(db_b);
    free(tid);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *suite = suite_create("integration.slow_peer");
    EU_IT_ADD_TCASE(suite, test_slow_object_host_holds_nothing, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_slow_key_host_leaves_room, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_slow_statements_leave_the_placement_room, TIMEOUT);
    return eu_it_run_suite(suite);
}
