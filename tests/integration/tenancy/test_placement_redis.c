/*
 * Each placement's Redis, and a server that is down (issue 30, item 2).
 * The test starts a PostgreSQL and a Redis of its own (fleet.h), registers
 * placement "second" on them, and puts a tenant and a decoy beside it on
 * each placement ("near" on the run's servers, "far" on the test's). Then:
 *   - a tenant's keys (rate limit counters, idempotency keys, the streaming
 *     live mark) are on its placement's Redis and not on the other;
 *   - streaming works for a tenant on the second Redis;
 *   - a token revoked through one process stops working at once in a
 *     second process that had it cached: the revocation travelled on the
 *     tenant's own Redis;
 *   - with the second Redis stopped, then hung, far still answers reads
 *     and posts (its Redis work fails open, as with the main Redis down),
 *     quickly, and near answers and streams as before; started again, far
 *     streams again on the stream it kept open;
 *   - with the second PostgreSQL stopped, far answers 503 with
 *     Retry-After well under the acquire timeout, near answers 200
 *     throughout; started again, far answers again.
 */
#include "fleet.h"
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TIMEOUT 240
#define NEAR "near.example"
#define FAR "far.example"

static struct eu_it_extra pg2, redis2;

/* Keys under tenant tid's prefix on the Redis at url. */
static long
count_keys(const char *url, const char *prefix, const char *tid)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "redis-cli -u '%s' --scan --pattern '%s:{t%s}:*' | wc -l", url,
             prefix, tid);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    long n = -1;
    if (fscanf(f, "%ld", &n) != 1)
        n = -1;
    pclose(f);
    return n;
}

/* A token of username on host through the password grant, with its app
 * (to revoke it). Caller frees. */
static char *
password_token(struct eu_it_server *s, const char *host, const char *username, struct eu_it_app *a)
{
    *a = eu_it_app_create(s, host,
                          "{\"client_name\":\"it\",\"redirect_uris\":\"urn:ietf:wg:oauth:2.0:oob\","
                          "\"scopes\":\"read write\"}");
    char body[512];
    snprintf(body, sizeof(body),
             "grant_type=password&client_id=%s&client_secret=%s&username=%s"
             "&password=correct+horse+battery+staple&scope=read+write",
             a->id, a->secret, username);
    const char *h[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", s->public_port, host, "/oauth/token", h, body), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *tok = strdup(eu_it_json_str(&r, "access_token"));
    eu_it_resp_free(&r);
    return tok;
}

static void
revoke_token(struct eu_it_server *s, const char *host, const struct eu_it_app *a, const char *tok)
{
    char body[512];
    snprintf(body, sizeof(body), "token=%s&client_id=%s&client_secret=%s", tok, a->id, a->secret);
    const char *h[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", s->public_port, host, "/oauth/revoke", h, body), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

/* Posts text on host; returns the status's id (caller frees), or NULL
 * when the post was refused (status in *status). */
static char *
post(struct eu_it_server *s, const char *host, const char *tok, const char *text, const char *idem)
{
    char body[256], auth[256], key[128];
    snprintf(body, sizeof(body), "{\"status\":\"%s\",\"visibility\":\"public\"}", text);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
    snprintf(key, sizeof(key), "Idempotency-Key: %s", idem ? idem : "");
    const char *h[] = {auth, "Content-Type: application/json", idem ? key : NULL, NULL};
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", s->public_port, host, "/api/v1/statuses", h, body),
                     0);
    ck_assert_msg(r.status == 200, "POST on %s: %ld %s", host, r.status, r.body);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* GET path on host: its status, within at most max_ms (asserted). */
static long
get_within(struct eu_it_server *s, const char *host, const char *tok, const char *path, long max_ms,
           struct eu_it_resp *r)
{
    long long t0 = eu_it_now_ms();
    eu_it_callf(s, r, host, "GET", tok, NULL, "%s", path);
    long long took = eu_it_now_ms() - t0;
    ck_assert_msg(took <= max_ms, "GET %s on %s took %lld ms (at most %ld)", path, host, took,
                  max_ms);
    return r->status;
}

/* --------------------------------------------------------------- SSE */

/* Reads what the stream sent within ms into buf (appending); true when
 * needle is in it by then. */
static bool
sse_saw(int fd, char *buf, size_t cap, const char *needle, int ms)
{
    long long end = eu_it_now_ms() + ms;
    size_t n = strlen(buf);
    while (!strstr(buf, needle)) {
        int left = (int)(end - eu_it_now_ms());
        struct pollfd pf = {fd, POLLIN, 0};
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            return false;
        if (n + 1 >= cap) { /* keep the tail: an id may straddle the cut */
            memmove(buf, buf + cap / 2, n - cap / 2 + 1);
            n -= cap / 2;
        }
        ssize_t k = recv(fd, buf + n, cap - n - 1, 0);
        if (k <= 0)
            return false;
        n += (size_t)k;
        buf[n] = '\0';
    }
    return true;
}

static int
sse_open(struct eu_it_server *s, const char *host, const char *tok)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->public_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    char req[512];
    snprintf(req, sizeof(req),
             "GET /api/v1/streaming/public/local HTTP/1.1\r\nHost: %s\r\n"
             "Authorization: Bearer %s\r\n\r\n",
             host, tok);
    ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    char head[4096] = "";
    ck_assert_msg(sse_saw(fd, head, sizeof(head), "\r\n\r\n", 5000), "no answer: %s", head);
    ck_assert_msg(strncmp(head, "HTTP/1.1 200", 12) == 0, "stream refused: %s", head);
    return fd;
}

/* Posts on host until a post of its comes down the stream fd (the hub
 * subscribes asynchronously, and after a Redis restart resubscribes
 * within its backoff); asserts it does within about 20 s. */
static void
expect_streaming(struct eu_it_server *s, const char *host, const char *tok, int fd)
{
    static char buf[65536];
    buf[0] = '\0';
    for (int i = 0; i < 40; i++) {
        char *id = post(s, host, tok, "streamed", NULL);
        char needle[64];
        snprintf(needle, sizeof(needle), "\"id\":\"%s\"", id);
        bool ok = sse_saw(fd, buf, sizeof(buf), needle, 500);
        free(id);
        if (ok)
            return;
    }
    eu_it_server_print_log(s);
    ck_abort_msg("no event streamed on %s", host);
}

/* --------------------------------------------------------------- test */

START_TEST(test_redis_and_postgres_per_placement)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    const char *main_url = getenv("EUNHA_TEST_REDIS_URL");
    if (!main_url || !*main_url)
        main_url = "redis://127.0.0.1:6379/0";
    eu_it_extra_pg_start(&pg2);
    eu_it_extra_redis_start(&redis2);
    char url2[64], body[512];
    snprintf(url2, sizeof(url2), "redis://127.0.0.1:%d/0", redis2.port);
    snprintf(body, sizeof(body),
             "{\"name\":\"second\",\"database_url\":\"postgresql://postgres:secret@127.0.0.1:%d/"
             "eunha_second\",\"redis_url\":\"%s\",\"capacity\":10}",
             pg2.port, url2);
    struct eu_it_resp r = {0};
    eu_it_admin(s, "POST", "/admin/v1/placements", body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    const char *tenants[][2] = {{NEAR, "main"},
                                {"near-decoy.example", "main"},
                                {FAR, "second"},
                                {"far-decoy.example", "second"}};
    for (int i = 0; i < 4; i++) {
        snprintf(body, sizeof(body), "{\"domain\":\"%s\",\"placement\":\"%s\"}", tenants[i][0],
                 tenants[i][1]);
        eu_it_admin(s, "POST", "/admin/v1/tenants", body, &r);
        EU_IT_EXPECT_STATUS(&r, 201);
    }
    eu_it_account_create(s, NEAR, "alice");
    eu_it_account_create(s, FAR, "bob");
    char *near_id = eu_it_tenant_id(s, NEAR), *far_id = eu_it_tenant_id(s, FAR);
    char *near_decoy = eu_it_tenant_id(s, "near-decoy.example");
    char *far_decoy = eu_it_tenant_id(s, "far-decoy.example");
    struct eu_it_app near_app, far_app;
    char *near_tok = password_token(s, NEAR, "alice", &near_app);
    char *far_tok = password_token(s, FAR, "bob", &far_app);

    /* Each tenant's keys on its own placement's Redis. A post with an
     * Idempotency-Key leaves its key; the posts and sign-ins counted
     * against rate limits leave counters; a stream leaves the live mark. */
    int near_fd = sse_open(s, NEAR, near_tok), far_fd = sse_open(s, FAR, far_tok);
    expect_streaming(s, NEAR, near_tok, near_fd);
    expect_streaming(s, FAR, far_tok, far_fd);
    char *near_post = post(s, NEAR, near_tok, "near", "k-near");
    char *far_post = post(s, FAR, far_tok, "far", "k-far");
    char *again = post(s, FAR, far_tok, "far", "k-far");
    ck_assert_str_eq(again, far_post); /* the idempotency key was read back */
    free(again);
    ck_assert_int_gt(count_keys(url2, s->name, far_id), 0);
    ck_assert_int_eq(count_keys(main_url, s->name, far_id), 0);
    ck_assert_int_gt(count_keys(main_url, s->name, near_id), 0);
    ck_assert_int_eq(count_keys(url2, s->name, near_id), 0);
    /* Decoys, which did nothing, have nothing anywhere. */
    ck_assert_int_eq(count_keys(url2, s->name, far_decoy), 0);
    ck_assert_int_eq(count_keys(main_url, s->name, near_decoy), 0);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "redis-cli -u '%s' exists '%s:{t%s}:stream:live'", url2, s->name,
             far_id);
    FILE *f = popen(cmd, "r");
    int live = 0;
    ck_assert_int_eq(fscanf(f, "%d", &live), 1);
    pclose(f);
    ck_assert_int_eq(live, 1);

    /* A revocation reaches a second process through far's Redis: b has the
     * token cached (its first use after b's subscription to far's Redis
     * came up), then a revokes it. */
    struct eu_it_opts ob = {.name = s->name};
    struct eu_it_server *b = eu_it_server_start_opts(&ob);
    b->keep_databases = true; /* s drops them */
    for (int i = 0; i < 50; i++) {
        eu_it_callf(b, &r, FAR, "GET", far_tok, NULL, "/api/v1/accounts/verify_credentials");
        EU_IT_EXPECT_STATUS(&r, 200);
        eu_it_sleep_ms(50);
    }
    revoke_token(s, FAR, &far_app, far_tok);
    eu_it_sleep_ms(300);
    eu_it_callf(b, &r, FAR, "GET", far_tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 401);
    eu_it_callf(s, &r, FAR, "GET", far_tok, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 401);
    ck_assert_int_eq(eu_it_server_stop(b), 0);
    eu_it_server_free(b);
    /* The revocation ended far's stream too: open it again. */
    close(far_fd);
    free(far_tok);
    far_tok = password_token(s, FAR, "bob", &far_app);
    far_fd = sse_open(s, FAR, far_tok);
    expect_streaming(s, FAR, far_tok, far_fd);

    /* The second Redis stops: far reads and posts (its Redis work fails
     * open), near is untouched and keeps streaming. Then hung: the same,
     * with far's answers held at most about the command timeout. */
    const char *modes[] = {"eu_redis_stop %s/redis >&2", "eu_redis_pause %s/redis >&2"};
    for (int m = 0; m < 2; m++) {
        snprintf(cmd, sizeof(cmd), modes[m], redis2.dir);
        ck_assert_int_ge(eu_it_services(cmd), 0);
        for (int i = 0; i < 3; i++) {
            ck_assert_int_eq(get_within(s, FAR, NULL, "/api/v1/timelines/public", 4000, &r), 200);
            ck_assert_int_eq(get_within(s, FAR, far_tok, "/api/v1/timelines/home", 4000, &r), 200);
            ck_assert_int_eq(get_within(s, NEAR, NULL, "/api/v1/timelines/public", 2000, &r), 200);
            ck_assert_int_eq(get_within(s, NEAR, near_tok, "/api/v1/timelines/home", 2000, &r),
                             200);
            ck_assert_int_gt(json_array_size(r.json), 0);
        }
        free(post(s, FAR, far_tok, "while its redis is away", NULL));
        expect_streaming(s, NEAR, near_tok, near_fd);
        if (m == 1) {
            snprintf(cmd, sizeof(cmd), "eu_redis_resume %s/redis >&2", redis2.dir);
            ck_assert_int_ge(eu_it_services(cmd), 0);
        } else {
            snprintf(cmd, sizeof(cmd), "eu_redis_start %s/redis %d >&2", redis2.dir, redis2.port);
            ck_assert_int_ge(eu_it_services(cmd), 0);
        }
        /* Back: far's open stream is subscribed again and gets events. */
        expect_streaming(s, FAR, far_tok, far_fd);
    }
    ck_assert_int_eq(count_keys(main_url, s->name, far_id), 0);

    /* The second PostgreSQL stops: far answers 503 with Retry-After, well
     * under the acquire timeout (5 s); near answers 200 throughout. */
    snprintf(cmd, sizeof(cmd), "eu_pg_stop %s/pg >&2", pg2.dir);
    ck_assert_int_ge(eu_it_services(cmd), 0);
    for (int i = 0; i < 5; i++) {
        long st = get_within(s, FAR, NULL, "/api/v1/timelines/public", 3000, &r);
        ck_assert_msg(st == 503, "far answered %ld: %s", st, r.body);
        ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Retry-After"));
        st = get_within(s, FAR, far_tok, "/api/v1/timelines/home", 3000, &r);
        ck_assert_msg(st == 503, "far answered %ld: %s", st, r.body);
        ck_assert_int_eq(get_within(s, NEAR, near_tok, "/api/v1/timelines/home", 2000, &r), 200);
        ck_assert_int_eq(get_within(s, NEAR, NULL, "/api/v1/timelines/public", 2000, &r), 200);
        eu_it_callf(s, &r, NEAR, "GET", NULL, NULL, "/api/v1/statuses/%s", near_post);
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    free(post(s, NEAR, near_tok, "near while far is down", NULL));
    expect_streaming(s, NEAR, near_tok, near_fd);
    snprintf(cmd, sizeof(cmd), "eu_pg_start %s/pg %d --no-fsync >&2", pg2.dir, pg2.port);
    ck_assert_int_ge(eu_it_services(cmd), 0);
    long st = 0;
    for (int i = 0; i < 100 && st != 200; i++) {
        eu_it_callf(s, &r, FAR, "GET", NULL, NULL, "/api/v1/statuses/%s", far_post);
        st = r.status;
        if (st != 200)
            eu_it_sleep_ms(200);
    }
    ck_assert_msg(st == 200, "far did not come back: %ld %s", st, r.body);
    expect_streaming(s, FAR, far_tok, far_fd);

    close(near_fd);
    close(far_fd);
    eu_it_resp_free(&r);
    free(near_tok);
    free(far_tok);
    free(near_post);
    free(far_post);
    free(near_id);
    free(far_id);
    free(near_decoy);
    free(far_decoy);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
    eu_it_extra_redis_stop(&redis2);
    eu_it_extra_pg_stop(&pg2);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("placement_redis");
    EU_IT_ADD_TCASE(s, test_redis_and_postgres_per_placement, TIMEOUT);
    return eu_it_run_suite(s);
}
