/*
 * What one client can hold of the server: connections past [limits]
 * max_connections, or past max_connections_per_ip from one address, get a
 * 503 at accept while those already open are still answered (a trusted
 * proxy is held only to the total); a client trickling its headers is cut
 * at header_timeout_seconds while an idle keep-alive connection is not; and
 * a request its handler cannot finish by request_deadline_seconds is
 * answered 503, its statement finishing later without harm.
 *
 * The clients here are raw sockets, since libcurl sends its request at once
 * and a refused connection is refused before anything is read.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TIMEOUT 120

/* A connection to the public listener from source address src. */
static int
dial(struct eu_it_server *s, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, src, &a.sin_addr);
    ck_assert_msg(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "bind %s: %s", src,
                  strerror(errno));
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->public_port)};
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    ck_assert_msg(connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0, "connect: %s",
                  strerror(errno));
    return fd;
}

static void
send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        ck_assert_msg(w > 0, "send: %s", strerror(errno));
        s += w;
        n -= (size_t)w;
    }
}

/* Reads into buf (NUL-terminated) until the peer closes or timeout_ms
 * passes; returns the bytes read. A reset counts as a close. */
static size_t
read_to_close(int fd, char *buf, size_t cap, int timeout_ms)
{
    size_t n = 0;
    long long end = eu_it_now_ms() + timeout_ms;
    for (;;) {
        long long left = end - eu_it_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == cap - 1)
            break;
    }
    buf[n] = '\0';
    return n;
}

/* Reads one response whose body has a Content-Length; NUL-terminated. */
static void
read_response(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    long long end = eu_it_now_ms() + 10000;
    for (;;) {
        buf[n] = '\0';
        char *eoh = strstr(buf, "\r\n\r\n");
        const char *cl = strstr(buf, "Content-Length: ");
        if (eoh && cl && n >= (size_t)(eoh + 4 - buf) + strtoul(cl + 16, NULL, 10))
            return;
        long long left = end - eu_it_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ck_assert_msg(left > 0 && poll(&p, 1, (int)left) > 0, "no whole response: %s", buf);
        ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
        ck_assert_msg(r > 0, "closed before a whole response: %s", buf);
        n += (size_t)r;
    }
}

#define GET_INSTANCE(conn)                                                                         \
    "GET /api/v1/instance HTTP/1.1\r\nHost: a.example\r\nConnection: " conn "\r\n\r\n"

/* Sends a request on fd and asserts the tenant's instance comes back. */
static void
expect_instance(int fd, bool close_after)
{
    char buf[16384];
    send_all(fd, close_after ? GET_INSTANCE("close") : GET_INSTANCE("keep-alive"));
    if (close_after)
        read_to_close(fd, buf, sizeof(buf), 10000);
    else
        read_response(fd, buf, sizeof(buf));
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200", 12) == 0, "expected 200, got: %.400s", buf);
    ck_assert_msg(strstr(buf, "\"uri\":\"a.example\"") != NULL, "not the instance: %.400s", buf);
}

/* Asserts that fd, having sent nothing, is answered 503 with the error
 * message that begins with want and closed. */
static void
expect_refused(int fd, const char *want)
{
    char buf[4096];
    read_to_close(fd, buf, sizeof(buf), 5000);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 503", 12) == 0, "expected 503, got: %.400s", buf);
    ck_assert_msg(strstr(buf, "Retry-After: 5\r\n") != NULL, "no Retry-After: %.400s", buf);
    const char *body = strstr(buf, "\r\n\r\n");
    ck_assert_ptr_nonnull(body);
    json_error_t je;
    json_t *j = json_loads(body + 4, 0, &je);
    ck_assert_msg(j != NULL, "body is not JSON: %s", body + 4);
    const char *err = json_string_value(json_object_get(j, "error"));
    ck_assert_msg(err && strncmp(err, want, strlen(want)) == 0, "error: %s", body + 4);
    json_decref(j);
    close(fd);
}

/* Waits up to 10 s for a metric to reach want, and asserts it did. */
static void
wait_metric(struct eu_it_server *s, const char *name, double want)
{
    long long end = eu_it_now_ms() + 10000;
    double v;
    while ((v = eu_it_metric(s, name)) != want && eu_it_now_ms() < end)
        eu_it_sleep_ms(50);
    ck_assert_msg(v == want, "%s is %g, expected %g", name, v, want);
}

START_TEST(test_total_cap_refuses_the_next_connection)
{
    struct eu_it_opts o = {.extra_toml = "[limits]\nmax_connections = 3\n"};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    wait_metric(s, "eunha_http_connections", 0);
    ck_assert_int_eq((int)eu_it_metric(s, "eunha_http_connections_max"), 3);

    int c[3];
    for (int i = 0; i < 3; i++)
        c[i] = dial(s, "127.0.0.1");
    wait_metric(s, "eunha_http_connections", 3);
    expect_refused(dial(s, "127.0.0.1"), "The server has too many connections");
    ck_assert_int_eq((int)eu_it_metric(s, "eunha_http_connections_refused_total{cap=\"total\"}"),
                     1);

    /* Those already open are served, twice on the same connection. */
    for (int i = 0; i < 3; i++)
        expect_instance(c[i], false);
    for (int i = 0; i < 3; i++) {
        expect_instance(c[i], true);
        close(c[i]);
    }
    /* Closing gives the places back. */
    wait_metric(s, "eunha_http_connections", 0);
    struct eu_it_resp r = {0};
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "uri", "a.example");
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_per_ip_cap_counts_each_address)
{
    struct eu_it_opts o = {.extra_toml = "[limits]\nmax_connections_per_ip = 2\n"};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    wait_metric(s, "eunha_http_connections", 0);

    int a = dial(s, "127.0.0.1"), b = dial(s, "127.0.0.1");
    wait_metric(s, "eunha_http_connections", 2);
    expect_refused(dial(s, "127.0.0.1"), "Too many connections from your address");
    ck_assert_int_eq((int)eu_it_metric(s, "eunha_http_connections_refused_total{cap=\"per_ip\"}"),
                     1);
    /* Another address has its own count. */
    int other = dial(s, "127.0.0.2");
    expect_instance(other, true);
    close(other);
    expect_instance(a, true);
    close(a);
    /* One place free again for 127.0.0.1. */
    wait_metric(s, "eunha_http_connections", 1);
    int again = dial(s, "127.0.0.1");
    expect_instance(again, true);
    close(again);
    expect_instance(b, true);
    close(b);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* Every client of a trusted proxy has the proxy's address: only the total
 * cap holds it. */
START_TEST(test_per_ip_cap_spares_trusted_proxies)
{
    struct eu_it_opts o = {.extra_toml = "[limits]\nmax_connections_per_ip = 2\n",
                           .server_toml = "trusted_proxies = [\"127.0.0.1\"]"};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    int c[4];
    for (int i = 0; i < 4; i++)
        c[i] = dial(s, "127.0.0.1");
    wait_metric(s, "eunha_http_connections", 4);
    for (int i = 0; i < 4; i++) {
        expect_instance(c[i], true);
        close(c[i]);
    }
    /* The cap still applies to an address that is not a proxy. */
    int x = dial(s, "127.0.0.3"), y = dial(s, "127.0.0.3");
    wait_metric(s, "eunha_http_connections", 2);
    expect_refused(dial(s, "127.0.0.3"), "Too many connections from your address");
    close(x);
    close(y);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

START_TEST(test_slow_headers_are_cut_at_the_deadline)
{
    struct eu_it_opts o = {.extra_toml = "[limits]\nheader_timeout_seconds = 2\n"};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));

    /* An idle keep-alive connection is not cut at the header deadline:
     * only evhttp's inactivity timeout (30 s) applies between requests. */
    int idle = dial(s, "127.0.0.1");
    expect_instance(idle, false);

    int slow = dial(s, "127.0.0.1");
    long long start = eu_it_now_ms();
    send_all(slow, "GET /api/v1/instance HTTP/1.1\r\nHost: a.example\r\nX-Slow: ");
    bool closed = false;
    struct eu_it_resp r = {0};
    /* One byte every 200 ms: never idle long enough for an inactivity
     * timeout, so only a deadline can end it. */
    for (int i = 0; i < 40 && !closed; i++) {
        if (i == 3) {
            /* Meanwhile other clients are served. */
            eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
            EU_IT_EXPECT_STATUS(&r, 200);
            EU_IT_EXPECT_JSTR(&r, "uri", "a.example");
        }
        if (send(slow, "a", 1, MSG_NOSIGNAL) != 1)
            closed = true;
        struct pollfd p = {.fd = slow, .events = POLLIN};
        if (!closed && poll(&p, 1, 200) > 0) {
            char buf[512];
            ck_assert_msg(recv(slow, buf, sizeof(buf), 0) <= 0,
                          "a partial request was answered instead of closed");
            closed = true;
        }
    }
    long long took = eu_it_now_ms() - start;
    ck_assert_msg(closed, "a client trickling its headers was still connected after %lld ms", took);
    ck_assert_msg(took >= 1800 && took < 5000, "cut after %lld ms with a 2 s header deadline",
                  took);
    close(slow);
    ck_assert_int_eq((int)eu_it_metric(s, "eunha_http_read_timeouts_total{part=\"headers\"}"), 1);

    /* Well past the header deadline, the idle connection takes its next
     * request. */
    expect_instance(idle, true);
    close(idle);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/*
 * The request deadline: a request whose statement waits on a lock is
 * answered 503 at the deadline, with the statement still running. When the
 * lock goes, the statement finishes, its answer is dropped, its connection
 * goes back to the pool and the next request is served.
 */
START_TEST(test_request_over_the_deadline_gets_503)
{
    struct eu_it_opts o = {.extra_toml = "[limits]\nrequest_deadline_seconds = 2\n"};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    struct eu_it_resp r = {0};
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    free(eu_it_account_seed(s, "a.example", "alice"));
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *db = eu_it_tenant_database(s, "a.example");

    /* The instance endpoint counts accounts: with the table locked its
     * statement waits (statement_timeout is 10 s, well past the deadline). */
    PGconn *locker = eu_it_pg_connect(db);
    free(eu_it_pg_query(locker, "BEGIN"));
    free(eu_it_pg_query(locker, "LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE"));
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_ERROR(&r, 503);
    ck_assert_str_eq(eu_it_json_str(&r, "error"),
                     "The server took too long to answer; try again shortly");
    ck_assert_msg(eu_it_resp_header(&r, "Retry-After") != NULL, "503 without Retry-After:\n%s",
                  r.headers);
    ck_assert_msg(r.seconds >= 1.8 && r.seconds < 5.0, "503 after %.2f s with a 2 s deadline",
                  r.seconds);
    ck_assert_int_eq(eu_it_pg_count_lock_waiters(db), 1);
    ck_assert_int_eq((int)eu_it_metric(s, "eunha_http_deadline_replies_total"), 1);

    free(eu_it_pg_query(locker, "COMMIT"));
    /* The dropped request's statement completes and gives its connection
     * back. */
    long long end = eu_it_now_ms() + 10000;
    for (;;) {
        eu_it_admin(s, "GET", "/admin/v1/tenants/a.example", NULL, &r);
        EU_IT_EXPECT_STATUS(&r, 200);
        if (json_integer_value(eu_it_jpath(r.json, "pool.busy")) == 0 || eu_it_now_ms() > end)
            break;
        eu_it_sleep_ms(100);
    }
    EU_IT_EXPECT_JINT(&r, "pool.busy", 0);
    eu_it_public(s, "GET", "a.example", "/api/v1/instance", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 1);

    PQfinish(locker);
    free(db);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *suite = suite_create("conncap");
    EU_IT_ADD_TCASE(suite, test_total_cap_refuses_the_next_connection, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_per_ip_cap_counts_each_address, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_per_ip_cap_spares_trusted_proxies, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_slow_headers_are_cut_at_the_deadline, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_request_over_the_deadline_gets_503, TIMEOUT);
    return eu_it_run_suite(suite);
}
