/*
 * Tests for the load generator's --retry-503 (tools/loadgen/run.c), which the
 * density benchmark's first answers and wake burst rely on: a 503 is asked
 * again after its Retry-After, its latency runs from the first ask, and it
 * stands as an error once the retry window is spent. Also --log's line per
 * request, which the fleet benchmark reads the ids of created statuses
 * from. The server here is a small evhttp loop on its own thread that
 * answers each Host 503 a set number of times before 200 (with a status's
 * JSON to a POST).
 */
#include "../../../tools/loadgen/run.c"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>

#define MAX_HOSTS 8

struct server {
    struct event_base *base;
    struct evhttp *http;
    int port;
    int refusals; /* 503s each Host gets before its 200 */
    int seen[MAX_HOSTS];
    atomic_int requests;
    atomic_bool stop;
    struct event *tick;
    pthread_t thread;
};

static void
on_request(struct evhttp_request *req, void *arg)
{
    struct server *s = arg;
    atomic_fetch_add(&s->requests, 1);
    const char *host = evhttp_find_header(evhttp_request_get_input_headers(req), "Host");
    int i = host && host[0] == 'h' ? atoi(host + 1) : 0;
    if (i < 0 || i >= MAX_HOSTS)
        i = 0;
    if (s->seen[i]++ < s->refusals) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "0");
        evhttp_send_reply(req, 503, "Service Unavailable", NULL);
        return;
    }
    if (evhttp_request_get_command(req) == EVHTTP_REQ_POST) {
        /* The status's own id first, as the server writes it, then a
         * nested one that must not be taken for it. */
        struct evbuffer *body = evbuffer_new();
        evbuffer_add_printf(body, "{\"id\":\"4%d\",\"account\":{\"id\":\"9\"}}", i);
        evhttp_send_reply(req, 200, "OK", body);
        evbuffer_free(body);
        return;
    }
    evhttp_send_reply(req, 200, "OK", NULL);
}

/* libevent here is not set up for threads, so another thread's loopbreak
 * would not wake a loop blocked in epoll: the loop checks a flag instead. */
static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct server *s = arg;
    if (atomic_load(&s->stop))
        event_base_loopbreak(s->base);
}

static void *
server_main(void *arg)
{
    struct server *s = arg;
    event_base_dispatch(s->base);
    return NULL;
}

static void
server_start(struct server *s, int refusals)
{
    memset(s, 0, sizeof(*s));
    s->refusals = refusals;
    s->base = event_base_new();
    s->http = evhttp_new(s->base);
    ck_assert_ptr_nonnull(s->http);
    evhttp_set_gencb(s->http, on_request, s);
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(s->http, "127.0.0.1", 0);
    ck_assert_ptr_nonnull(bs);
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &len);
    s->port = ntohs(sin.sin_port);
    s->tick = event_new(s->base, -1, EV_PERSIST, on_tick, s);
    struct timeval tv = {0, 20000};
    event_add(s->tick, &tv);
    ck_assert_int_eq(pthread_create(&s->thread, NULL, server_main, s), 0);
}

static void
server_stop(struct server *s)
{
    atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    event_free(s->tick);
    evhttp_free(s->http);
    event_base_free(s->base);
}

/* Closed loop, one request to each of three hosts, three at a time. */
static void
run_three(struct server *s, double retry, struct eu_lg_stats *st)
{
    static struct eu_lg_host hosts[3] = {{.name = "h0"}, {.name = "h1"}, {.name = "h2"}};
    struct eu_lg_config cfg = {
        .addr = "127.0.0.1",
        .port = (unsigned)s->port,
        .hosts = hosts,
        .nhosts = 3,
        .concurrency = 3,
        .timeout = 5,
        .max_requests = 3,
        .retry_503 = retry,
        .max_backlog = 10,
    };
    cfg.weights[EU_LG_INSTANCE] = 1;
    cfg.weight_total = 1;
    ck_assert_int_eq(eu_lg_run(&cfg, st), 0);
}

START_TEST(test_503_without_retry_is_an_error)
{
    struct server s;
    server_start(&s, 2);
    struct eu_lg_stats st;
    run_three(&s, 0, &st);
    server_stop(&s);
    ck_assert_uint_eq(st.status[503], 3);
    ck_assert_uint_eq(eu_lg_stats_errors(&st), 3);
    ck_assert_uint_eq(st.retries, 0);
    ck_assert_int_eq(atomic_load(&s.requests), 3);
}
END_TEST

START_TEST(test_503_is_asked_again_until_answered)
{
    struct server s;
    server_start(&s, 2);
    struct eu_lg_stats st;
    run_three(&s, 10, &st);
    server_stop(&s);
    /* Each host refused twice, then answered: three answers, no errors. */
    ck_assert_uint_eq(st.status[200], 3);
    ck_assert_uint_eq(eu_lg_stats_errors(&st), 0);
    ck_assert_uint_eq(st.retries, 6);
    ck_assert_uint_eq(st.kinds[EU_LG_INSTANCE].sent, 3);
    ck_assert_int_eq(atomic_load(&s.requests), 9);
    /* Two waits of the 0.1 s floor: latency counts from the first ask. */
    ck_assert_uint_ge(st.all.min, 200000);
    ck_assert_uint_eq(st.completed, 3);
}
END_TEST

START_TEST(test_retry_window_spent_leaves_the_503)
{
    struct server s;
    server_start(&s, 5);
    struct eu_lg_stats st;
    /* Room for one 0.1 s wait, never a second (that would end at 0.2 s or
     * later): each ends on its second 503. 0.19 rather than 0.15 leaves the
     * first answer 90 ms to come on a loaded machine, where 50 ms was not
     * always enough. */
    run_three(&s, 0.19, &st);
    server_stop(&s);
    ck_assert_uint_eq(st.status[503], 3);
    ck_assert_uint_eq(eu_lg_stats_errors(&st), 3);
    ck_assert_uint_eq(st.retries, 3);
    ck_assert_int_eq(atomic_load(&s.requests), 6);
}
END_TEST

START_TEST(test_log_has_each_request_and_the_created_ids)
{
    struct server s;
    server_start(&s, 1);
    static struct eu_lg_host hosts[2] = {{.name = "h0"}, {.name = "h1"}};
    FILE *log = tmpfile();
    ck_assert_ptr_nonnull(log);
    /* One at a time, round robin: h0 and h1 are refused, then answered. */
    struct eu_lg_config cfg = {
        .addr = "127.0.0.1",
        .port = (unsigned)s.port,
        .hosts = hosts,
        .nhosts = 2,
        .concurrency = 1,
        .timeout = 5,
        .max_requests = 4,
        .max_backlog = 10,
        .visibility = "public",
        .log = log,
    };
    cfg.weights[EU_LG_STATUS] = 1;
    cfg.weight_total = 1;
    struct eu_lg_stats st;
    ck_assert_int_eq(eu_lg_run(&cfg, &st), 0);
    server_stop(&s);
    rewind(log);
    char line[256], code[16], kind[16], host[16], id[32];
    const char *want[4][3] = {
        {"503", "h0", "-"}, {"503", "h1", "-"}, {"200", "h0", "40"}, {"200", "h1", "41"}};
    int n = 0;
    double due, lat, last_due = -1;
    while (fgets(line, sizeof(line), log)) {
        ck_assert_int_lt(n, 4);
        ck_assert_int_eq(
            sscanf(line, "%lf %lf %15s %15s %15s %31s", &due, &lat, code, kind, host, id), 6);
        ck_assert_double_ge(due, last_due);
        ck_assert_double_ge(lat, 0);
        ck_assert_str_eq(code, want[n][0]);
        ck_assert_str_eq(kind, "status");
        ck_assert_str_eq(host, want[n][1]);
        ck_assert_str_eq(id, want[n][2]);
        last_due = due;
        n++;
    }
    ck_assert_int_eq(n, 4);
    fclose(log);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("loadgen_retry");
    TCase *tc = tcase_create("retry");
    tcase_add_test(tc, test_503_without_retry_is_an_error);
    tcase_add_test(tc, test_503_is_asked_again_until_answered);
    tcase_add_test(tc, test_retry_window_spent_leaves_the_503);
    tcase_add_test(tc, test_log_has_each_request_and_the_created_ids);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
