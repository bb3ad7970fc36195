/*
 * Tests for the outbound HTTP client (src/outbound/fetch.c) against a real HTTP
 * peer: a small evhttp server on 127.0.0.1 in the same event loop, which
 * counts the connections it accepts and the requests it holds at once.
 * Nothing is mocked; every request crosses a real socket.
 */
#include <check.h>
#include <dirent.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "eunha/fetch.h"

/* --- the peer --------------------------------------------------------------- */

/* A request the peer answers later (or never). */
struct held {
    struct peer *p;
    struct evhttp_request *req;
    struct evhttp_connection *conn;
    struct event *timer; /* NULL: never answered */
    struct held *next;
};

struct peer {
    struct event_base *base;
    struct evhttp *http;
    int port;
    int conns; /* connections accepted */
    int inflight, max_inflight;
    int flaky_left; /* /flaky answers 503 while this is above 0 */
    struct held *held;
};

static uint64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct bufferevent *
on_peer_accept(struct event_base *base, void *arg)
{
    struct peer *p = arg;
    p->conns++;
    return bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
}

static void
held_unlink(struct held *h)
{
    for (struct held **pp = &h->p->held; *pp; pp = &(*pp)->next) {
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    }
    if (h->timer)
        event_free(h->timer);
    free(h);
}

/* The client went away: the requests it had here die with the connection. */
static void
on_peer_conn_close(struct evhttp_connection *conn, void *arg)
{
    struct peer *p = arg;
    for (struct held *h = p->held, *next; h; h = next) {
        next = h->next;
        if (h->conn == conn) {
            p->inflight--;
            held_unlink(h);
        }
    }
}

static void
on_held_timer(evutil_socket_t fd, short what, void *arg)
{
    struct held *h = arg;
    (void)fd;
    (void)what;
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "slow done");
    h->p->inflight--;
    evhttp_send_reply(h->req, 200, "OK", b);
    evbuffer_free(b);
    held_unlink(h);
}

static void
hold(struct peer *p, struct evhttp_request *req, int ms)
{
    struct held *h = calloc(1, sizeof *h);
    h->p = p;
    h->req = req;
    h->conn = evhttp_request_get_connection(req);
    evhttp_connection_set_closecb(h->conn, on_peer_conn_close, p);
    h->next = p->held;
    p->held = h;
    if (++p->inflight > p->max_inflight)
        p->max_inflight = p->inflight;
    if (ms >= 0) {
        h->timer = evtimer_new(p->base, on_held_timer, h);
        struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
        evtimer_add(h->timer, &tv);
    }
}

static int
query_int(struct evhttp_request *req, const char *name, int dflt)
{
    const char *q = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
    struct evkeyvalq params;
    int v = dflt;
    if (q && evhttp_parse_query_str(q, &params) == 0) {
        const char *s = evhttp_find_header(&params, name);
        if (s)
            v = atoi(s);
        evhttp_clear_headers(&params);
    }
    return v;
}

static void
on_peer_request(struct evhttp_request *req, void *arg)
{
    struct peer *p = arg;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    struct evbuffer *b = evbuffer_new();
    if (strcmp(path, "/echo") == 0) {
        struct evbuffer *body = evhttp_request_get_input_buffer(req);
        const char *x = evhttp_find_header(in, "X-Test");
        const char *sig = evhttp_find_header(in, "Signature");
        const char *ua = evhttp_find_header(in, "User-Agent");
        evbuffer_add_printf(b, "method=%s\nx-test=%s\nsignature=%s\nua=%s\nbody_len=%zu\nbody=",
                            evhttp_request_get_command(req) == EVHTTP_REQ_POST ? "POST" : "GET",
                            x ? x : "", sig ? sig : "", ua ? ua : "", evbuffer_get_length(body));
        evbuffer_add_buffer(b, body);
        evhttp_add_header(out, "Content-Type", "application/activity+json");
        evhttp_send_reply(req, 200, "OK", b);
    } else if (strcmp(path, "/slow") == 0) {
        hold(p, req, query_int(req, "ms", 100));
    } else if (strcmp(path, "/never") == 0) {
        hold(p, req, -1);
    } else if (strcmp(path, "/big") == 0) {
        int n = query_int(req, "n", 0);
        for (int i = 0; i < n; i++)
            evbuffer_add(b, "x", 1);
        evhttp_send_reply(req, 200, "OK", b);
    } else if (strcmp(path, "/bigchunked") == 0) {
        /* No Content-Length: only the running count can stop it. */
        int n = query_int(req, "n", 0);
        evhttp_send_reply_start(req, 200, "OK");
        for (int i = 0; i < n; i += 1000) {
            char chunk[1000];
            memset(chunk, 'y', sizeof chunk);
            evbuffer_add(b, chunk, sizeof chunk);
            evhttp_send_reply_chunk(req, b);
        }
        evhttp_send_reply_end(req);
    } else if (strcmp(path, "/redirect") == 0) {
        int n = query_int(req, "n", 0);
        char loc[64];
        if (n > 0)
            snprintf(loc, sizeof loc, "/redirect?n=%d", n - 1);
        else
            snprintf(loc, sizeof loc, "/echo");
        evhttp_add_header(out, "Location", loc);
        evhttp_send_reply(req, 302, "Found", b);
    } else if (strcmp(path, "/flaky") == 0) {
        bool fail = p->flaky_left > 0;
        if (fail)
            p->flaky_left--;
        evbuffer_add_printf(b, fail ? "down" : "up");
        evhttp_send_reply(req, fail ? 503 : 200, fail ? "Unavailable" : "OK", b);
    } else {
        evhttp_send_reply(req, 404, "Not Found", b);
    }
    evbuffer_free(b);
}

static void
peer_start(struct peer *p, struct event_base *base)
{
    memset(p, 0, sizeof *p);
    p->base = base;
    p->http = evhttp_new(base);
    evhttp_set_allowed_methods(p->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
    evhttp_set_gencb(p->http, on_peer_request, p);
    evhttp_set_bevcb(p->http, on_peer_accept, p);
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(p->http, "127.0.0.1", 0);
    ck_assert_ptr_nonnull(bs);
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &len);
    p->port = ntohs(sin.sin_port);
}

static void
peer_stop(struct peer *p)
{
    evhttp_free(p->http);
    while (p->held)
        held_unlink(p->held);
}

/* --- the client side -------------------------------------------------------- */

struct result {
    int *done; /* counter shared by a test's requests */
    int order; /* 1 for the first to complete */
    bool called;
    enum eu_fetch_error error;
    long status;
    char *body;
    size_t body_len;
    char *location, *content_type;
    uint64_t at_ms;
};

static void
on_result(struct eu_fetch_resp *resp, void *arg)
{
    struct result *r = arg;
    ck_assert_msg(!r->called, "callback ran twice");
    r->called = true;
    r->order = ++*r->done;
    r->error = resp->error;
    r->status = resp->status;
    r->body = eu_fetch_resp_take_body(resp, &r->body_len);
    r->location = resp->location ? strdup(resp->location) : NULL;
    r->content_type = resp->content_type ? strdup(resp->content_type) : NULL;
    r->at_ms = now_ms();
}

static void
result_release(struct result *r)
{
    free(r->body);
    free(r->location);
    free(r->content_type);
}

static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

/* Runs the loop until *done reaches want or max_ms pass; true if it did. */
static bool
run_until(struct event_base *base, const int *done, int want, int max_ms)
{
    uint64_t end = now_ms() + (uint64_t)max_ms;
    struct event *tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
    struct timeval tv = {0, 10000};
    event_add(tick, &tv);
    while ((!done || *done < want) && now_ms() < end)
        event_base_loop(base, EVLOOP_ONCE);
    event_free(tick);
    return done && *done >= want;
}

static void
run_for(struct event_base *base, int ms)
{
    run_until(base, NULL, 0, ms);
}

static struct eu_fetch_config
test_config(void)
{
    return (struct eu_fetch_config){
        .allow_private_addresses = true,
        .allow_http = true,
        .max_requests = 16,
        .max_requests_per_host = 8,
        .max_queued_per_owner = 1000,
        .connect_timeout_s = 2,
        .request_timeout_s = 5,
        .max_response_bytes = 64 * 1024,
        .max_redirects = 3,
        .host_unavailable_after_s = 3600,
    };
}

struct fetch_world {
    struct event_base *base;
    struct peer peer;
    struct eu_fetch_client *client;
    int done;
};

static void
world_start(struct fetch_world *w, const struct eu_fetch_config *cfg)
{
    memset(w, 0, sizeof *w);
    w->base = event_base_new();
    peer_start(&w->peer, w->base);
    w->client = eu_fetch_client_new(w->base, cfg);
    ck_assert_ptr_nonnull(w->client);
}

static void
world_stop(struct fetch_world *w)
{
    eu_fetch_client_free(w->client);
    run_for(w->base, 20); /* let the peer see its connections close */
    peer_stop(&w->peer);
    event_base_free(w->base);
}

/* Starts a GET of the peer's path for owner. */
static struct eu_fetch *
get(struct fetch_world *w, const char *path, uint64_t owner, struct result *r)
{
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", w->peer.port, path);
    memset(r, 0, sizeof *r);
    r->done = &w->done;
    struct eu_fetch_req req = {.method = EU_FETCH_GET, .url = url, .owner = owner};
    return eu_fetch_start(w->client, &req, on_result, r);
}

/* Open sockets in this process (both ends of every test connection). The
 * peer does not notice a client closing while it holds the request, so
 * tests count the client's sockets this way. */
static int
count_sockets(void)
{
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[300], target[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            n += strncmp(target, "socket:", 7) == 0;
        }
    }
    closedir(d);
    return n;
}

/* --- tests ------------------------------------------------------------------ */

START_TEST(test_get_and_post_arrive_intact)
{
    struct eu_fetch_config cfg = test_config();
    struct fetch_world w;
    world_start(&w, &cfg);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", w.peer.port);
    const char *headers[] = {"X-Test: abc", "Signature: keyId=\"k\",signature=\"s\"", NULL};
    struct result g = {.done = &w.done}, p = {.done = &w.done};
    struct eu_fetch_req greq = {.url = url, .headers = headers, .ua_base = "https://a.example/"};
    eu_fetch_start(w.client, &greq, on_result, &g);
    /* A body with a NUL in it, copied at start: the caller's buffer goes. */
    char *body = malloc(11);
    memcpy(body, "hello\0world", 11);
    struct eu_fetch_req preq = {
        .method = EU_FETCH_POST, .url = url, .headers = headers, .body = body, .body_len = 11};
    eu_fetch_start(w.client, &preq, on_result, &p);
    free(body);
    ck_assert_int_eq(w.done, 0); /* never from inside eu_fetch_start */
    ck_assert(run_until(w.base, &w.done, 2, 5000));

    ck_assert_int_eq(g.error, EU_FETCH_OK);
    ck_assert_int_eq(g.status, 200);
    ck_assert_str_eq(g.content_type, "application/activity+json");
    ck_assert_str_eq(g.body, "method=GET\nx-test=abc\nsignature=keyId=\"k\",signature=\"s\"\n"
                             "ua=eunha/" EUNHA_VERSION " (+https://a.example/)\nbody_len=0\nbody=");
    ck_assert_int_eq(p.error, EU_FETCH_OK);
    const char want[] = "method=POST\nx-test=abc\nsignature=keyId=\"k\",signature=\"s\"\n"
                        "ua=eunha/" EUNHA_VERSION "\nbody_len=11\nbody=hello\0world";
    ck_assert_uint_eq(p.body_len, sizeof want - 1);
    ck_assert_mem_eq(p.body, want, sizeof want - 1);
    result_release(&g);
    result_release(&p);
    world_stop(&w);
}
END_TEST

/* Each request starts the next from its callback, so the connection is
 * idle in the cache when the next one looks for one. */
struct chain {
    struct fetch_world *w;
    struct result r[3];
    int next;
};

static void
on_chain(struct eu_fetch_resp *resp, void *arg)
{
    struct chain *ch = arg;
    on_result(resp, &ch->r[ch->next]);
    if (++ch->next < 3) {
        char url[128];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", ch->w->peer.port);
        ch->r[ch->next].done = &ch->w->done;
        struct eu_fetch_req req = {.url = url};
        eu_fetch_start(ch->w->client, &req, on_chain, ch);
    }
}

START_TEST(test_keepalive_reuses_connection)
{
    struct eu_fetch_config cfg = test_config();
    struct fetch_world w;
    world_start(&w, &cfg);
    struct chain ch = {.w = &w};
    ch.r[0].done = &w.done;
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", w.peer.port);
    struct eu_fetch_req req = {.url = url};
    eu_fetch_start(w.client, &req, on_chain, &ch);
    ck_assert(run_until(w.base, &w.done, 3, 5000));
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ch.r[i].status, 200);
        result_release(&ch.r[i]);
    }
    ck_assert_int_eq(w.peer.conns, 1);
    world_stop(&w);
}
END_TEST

START_TEST(test_timeout_keeps_loop_responsive)
{
    struct eu_fetch_config cfg = test_config();
    cfg.request_timeout_s = 1;
    struct fetch_world w;
    world_start(&w, &cfg);
    struct result never, echo;
    uint64_t t0 = now_ms();
    get(&w, "/never", 1, &never);
    get(&w, "/echo", 1, &echo);
    ck_assert(run_until(w.base, &w.done, 2, 5000));
    ck_assert_int_eq(echo.status, 200);
    ck_assert_int_eq(echo.order, 1);
    ck_assert_uint_lt(echo.at_ms - t0, 500);
    ck_assert_int_eq(never.error, EU_FETCH_TIMEOUT);
    ck_assert_int_eq(never.status, 0);
    ck_assert_uint_ge(never.at_ms - t0, 900);
    ck_assert_uint_lt(never.at_ms - t0, 2500);
    result_release(&never);
    result_release(&echo);
    world_stop(&w);
}
END_TEST

START_TEST(test_too_large_is_cut)
{
    struct eu_fetch_config cfg = test_config();
    cfg.max_response_bytes = 4096;
    struct fetch_world w;
    world_start(&w, &cfg);
    struct result r[4];
    get(&w, "/big?n=4096", 0, &r[0]);         /* exactly the cap */
    get(&w, "/big?n=5000", 0, &r[1]);         /* Content-Length says too much */
    get(&w, "/bigchunked?n=20000", 0, &r[2]); /* counted as it arrives */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/big?n=200", w.peer.port);
    memset(&r[3], 0, sizeof r[3]);
    r[3].done = &w.done;
    struct eu_fetch_req req = {.url = url, .max_bytes = 100}; /* a request's own cap */
    eu_fetch_start(w.client, &req, on_result, &r[3]);
    ck_assert(run_until(w.base, &w.done, 4, 5000));
    ck_assert_int_eq(r[0].error, EU_FETCH_OK);
    ck_assert_uint_eq(r[0].body_len, 4096);
    ck_assert_int_eq(r[1].error, EU_FETCH_TOO_LARGE);
    ck_assert_int_eq(r[2].error, EU_FETCH_TOO_LARGE);
    ck_assert_uint_le(r[2].body_len, 4096);
    ck_assert_int_eq(r[3].error, EU_FETCH_TOO_LARGE);
    for (int i = 0; i < 4; i++)
        result_release(&r[i]);
    world_stop(&w);
}
END_TEST

START_TEST(test_private_addresses_refused)
{
    struct eu_fetch_config cfg = test_config();
    cfg.allow_private_addresses = false;
    struct fetch_world w;
    world_start(&w, &cfg);
    const char *hosts[] = {"127.0.0.1", "localhost", "[::1]", "[::ffff:127.0.0.1]"};
    struct result r[4];
    for (int i = 0; i < 4; i++) {
        char url[128];
        snprintf(url, sizeof url, "http://%s:%d/echo", hosts[i], w.peer.port);
        memset(&r[i], 0, sizeof r[i]);
        r[i].done = &w.done;
        struct eu_fetch_req req = {.url = url};
        eu_fetch_start(w.client, &req, on_result, &r[i]);
    }
    ck_assert(run_until(w.base, &w.done, 4, 5000));
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(r[i].error == EU_FETCH_REFUSED_ADDRESS, "%s: %s", hosts[i],
                      eu_fetch_error_str(r[i].error));
        result_release(&r[i]);
    }
    ck_assert_int_eq(w.peer.conns, 0);
    world_stop(&w);
}
END_TEST

START_TEST(test_http_refused)
{
    struct eu_fetch_config cfg = test_config();
    cfg.allow_http = false;
    struct fetch_world w;
    world_start(&w, &cfg);
    struct result r, bad;
    get(&w, "/echo", 0, &r);
    memset(&bad, 0, sizeof bad);
    bad.done = &w.done;
    struct eu_fetch_req req = {.url = "ftp://127.0.0.1/x"};
    eu_fetch_start(w.client, &req, on_result, &bad);
    ck_assert(run_until(w.base, &w.done, 2, 5000));
    ck_assert_int_eq(r.error, EU_FETCH_BAD_URL);
    ck_assert_int_eq(bad.error, EU_FETCH_BAD_URL);
    ck_assert_int_eq(w.peer.conns, 0);
    result_release(&r);
    result_release(&bad);
    world_stop(&w);
}
END_TEST

START_TEST(test_redirects)
{
    struct eu_fetch_config cfg = test_config();
    struct fetch_world w;
    world_start(&w, &cfg);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/redirect?n=2", w.peer.port);
    struct result r[4];
    int limits[] = {3, 2, 0, 10};
    for (int i = 0; i < 4; i++) {
        memset(&r[i], 0, sizeof r[i]);
        r[i].done = &w.done;
        struct eu_fetch_req req = {.url = url, .max_redirects = limits[i]};
        eu_fetch_start(w.client, &req, on_result, &r[i]);
    }
    ck_assert(run_until(w.base, &w.done, 4, 5000));
    /* /redirect?n=2 -> n=1 -> n=0 -> /echo: three hops. */
    ck_assert_int_eq(r[0].error, EU_FETCH_OK);
    ck_assert_int_eq(r[0].status, 200);
    ck_assert_ptr_nonnull(strstr(r[0].body, "method=GET"));
    ck_assert_int_eq(r[1].error, EU_FETCH_TOO_MANY_REDIRECTS);
    /* A signed request's caller gets the 3xx and where it points. */
    ck_assert_int_eq(r[2].error, EU_FETCH_OK);
    ck_assert_int_eq(r[2].status, 302);
    char want[128];
    snprintf(want, sizeof want, "http://127.0.0.1:%d/redirect?n=1", w.peer.port);
    ck_assert_str_eq(r[2].location, want);
    /* The client's max_redirects (3) bounds what a request asks. */
    ck_assert_int_eq(r[3].error, EU_FETCH_OK);
    for (int i = 0; i < 4; i++)
        result_release(&r[i]);
    memset(&r[0], 0, sizeof r[0]);
    r[0].done = &w.done;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/redirect?n=3", w.peer.port);
    struct eu_fetch_req req = {.url = url, .max_redirects = 10};
    eu_fetch_start(w.client, &req, on_result, &r[0]);
    ck_assert(run_until(w.base, &w.done, 5, 5000));
    ck_assert_int_eq(r[0].error, EU_FETCH_TOO_MANY_REDIRECTS);
    result_release(&r[0]);
    world_stop(&w);
}
END_TEST

START_TEST(test_per_host_cap)
{
    struct eu_fetch_config cfg = test_config();
    cfg.max_requests_per_host = 2;
    struct fetch_world w;
    world_start(&w, &cfg);
    struct result r[8];
    /* Two running and 3 x 2 waiting, from two owners. */
    for (int i = 0; i < 8; i++)
        get(&w, "/slow?ms=100", (uint64_t)i % 2, &r[i]);
    /* Another host is not held up by this one's cap. */
    struct result other = {.done = &w.done};
    char url[128];
    snprintf(url, sizeof url, "http://localhost:%d/echo", w.peer.port);
    struct eu_fetch_req req = {.url = url};
    eu_fetch_start(w.client, &req, on_result, &other);
    struct eu_fetch_stats st;
    eu_fetch_client_stats(w.client, &st);
    ck_assert_int_eq(st.in_flight, 3);
    ck_assert_int_eq(st.queued, 6);
    ck_assert(run_until(w.base, &w.done, 9, 5000));
    ck_assert_int_eq(other.status, 200);
    ck_assert_int_eq(other.order, 1);
    result_release(&other);
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(r[i].status, 200);
        result_release(&r[i]);
    }
    ck_assert_int_eq(w.peer.max_inflight, 2); /* /echo is answered at once */
    eu_fetch_client_stats(w.client, &st);
    ck_assert_int_eq(st.in_flight, 0);
    ck_assert_int_eq(st.queued, 0);
    ck_assert_uint_eq(st.requests_total, 9);
    world_stop(&w);
}
END_TEST

/* The per-host cap halves on a 5xx (once per second however many fail
 * together), and on an answer far slower than the host's usual; it grows
 * back by answers, one per window, to the configured maximum; another
 * host's cap is untouched throughout. */
START_TEST(test_host_cap_adapts)
{
    struct eu_fetch_config cfg = test_config();
    struct fetch_world w;
    world_start(&w, &cfg);
    char host[64];
    snprintf(host, sizeof host, "127.0.0.1:%d", w.peer.port);
    ck_assert_int_eq(eu_fetch_host_cap(w.client, host), 8);
    w.peer.flaky_left = 100;
    struct result r[8];
    for (int i = 0; i < 4; i++)
        get(&w, "/flaky", 0, &r[i]);
    ck_assert(run_until(w.base, &w.done, 4, 5000));
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(r[i].status, 503);
        result_release(&r[i]);
    }
    ck_assert_int_eq(eu_fetch_host_cap(w.client, host), 4); /* four failures, one halving */
    ck_assert_int_eq(eu_fetch_host_cap(w.client, "localhost"), 8);
    run_for(w.base, 1100);
    get(&w, "/flaky", 0, &r[0]);
    ck_assert(run_until(w.base, &w.done, 5, 5000));
    result_release(&r[0]);
    ck_assert_int_eq(eu_fetch_host_cap(w.client, host), 2);
    /* At cap 2, six requests are never more than two at once. */
    w.peer.flaky_left = 0;
    w.peer.max_inflight = 0;
    for (int i = 0; i < 6; i++)
        get(&w, "/slow?ms=20", 0, &r[i]);
    ck_assert(run_until(w.base, &w.done, 11, 5000));
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(r[i].status, 200);
        result_release(&r[i]);
    }
    ck_assert_int_le(w.peer.max_inflight, 3); /* 2, or 3 once answers raise it */
    /* Answers raise it back: 2 + 1/2 + ..., eight within 40 answers. */
    int done = 11;
    for (int i = 0; i < 40; i++) {
        get(&w, "/echo", 0, &r[0]);
        ck_assert(run_until(w.base, &w.done, ++done, 5000));
        ck_assert_int_eq(r[0].status, 200);
        result_release(&r[0]);
    }
    ck_assert_int_eq(eu_fetch_host_cap(w.client, host), 8);
    /* An answer more than 4 times slower than usual, and over a second,
     * counts as congestion. */
    get(&w, "/slow?ms=1100", 0, &r[0]);
    ck_assert(run_until(w.base, &w.done, ++done, 5000));
    ck_assert_int_eq(r[0].status, 200);
    result_release(&r[0]);
    ck_assert_int_eq(eu_fetch_host_cap(w.client, host), 4);
    world_stop(&w);
}
END_TEST

START_TEST(test_round_robin_across_owners)
{
    struct eu_fetch_config cfg = test_config();
    cfg.max_requests = 1;
    struct fetch_world w;
    world_start(&w, &cfg);
    static struct result burst[50];
    struct result lone;
    for (int i = 0; i < 50; i++)
        get(&w, "/slow?ms=2", 1, &burst[i]);
    get(&w, "/slow?ms=2", 2, &lone);
    ck_assert(run_until(w.base, &w.done, 51, 10000));
    /* Owner 1's first was running; then one of owner 1's and owner 2's. */
    ck_assert_int_le(lone.order, 3);
    ck_assert_int_eq(lone.status, 200);
    for (int i = 0; i < 50; i++) {
        ck_assert_int_eq(burst[i].status, 200);
        /* Each owner's requests keep their order. */
        if (i > 0)
            ck_assert_int_gt(burst[i].order, burst[i - 1].order);
        result_release(&burst[i]);
    }
    result_release(&lone);
    world_stop(&w);
}
END_TEST

START_TEST(test_queue_bounded_per_owner)
{
    struct eu_fetch_config cfg = test_config();
    cfg.max_requests = 1;
    cfg.max_queued_per_owner = 5;
    struct fetch_world w;
    world_start(&w, &cfg);
    struct result r[10], other;
    for (int i = 0; i < 10; i++)
        get(&w, "/slow?ms=5", 1, &r[i]);
    get(&w, "/slow?ms=5", 2, &other);
    ck_assert(run_until(w.base, &w.done, 11, 5000));
    int ok = 0, full = 0;
    for (int i = 0; i < 10; i++) {
        ok += r[i].error == EU_FETCH_OK;
        full += r[i].error == EU_FETCH_QUEUE_FULL;
        result_release(&r[i]);
    }
    ck_assert_int_eq(ok, 6); /* one running, five waiting */
    ck_assert_int_eq(full, 4);
    ck_assert_int_eq(other.error, EU_FETCH_OK);
    result_release(&other);
    struct eu_fetch_stats st;
    eu_fetch_client_stats(w.client, &st);
    ck_assert_uint_eq(st.failures_total[EU_FETCH_QUEUE_FULL], 4);
    world_stop(&w);
}
END_TEST

START_TEST(test_host_of)
{
    char key[64];
    ck_assert_int_eq(eu_fetch_host_of("HTTPS://A.Example:443/users/x", key, sizeof key), 0);
    ck_assert_str_eq(key, "a.example");
    ck_assert_int_eq(eu_fetch_host_of("https://b.example:8443/", key, sizeof key), 0);
    ck_assert_str_eq(key, "b.example:8443");
    ck_assert_int_eq(eu_fetch_host_of("http://[::1]:80/", key, sizeof key), 0);
    ck_assert_str_eq(key, "[::1]");
    ck_assert_int_eq(eu_fetch_host_of("not a url", key, sizeof key), -1);
    ck_assert_int_eq(eu_fetch_host_of("https://a.example/", key, 4), -1);
}
END_TEST

START_TEST(test_host_health)
{
    struct eu_fetch_config cfg = test_config();
    cfg.host_unavailable_after_s = 1;
    struct fetch_world w;
    world_start(&w, &cfg);
    char host[64];
    snprintf(host, sizeof host, "127.0.0.1:%d", w.peer.port);
    struct result r;

    w.peer.flaky_left = 100;
    get(&w, "/flaky", 0, &r);
    ck_assert(run_until(w.base, &w.done, 1, 5000));
    ck_assert_int_eq(r.status, 503);
    result_release(&r);
    ck_assert(eu_fetch_host_available(w.client, host)); /* not for long enough */
    run_for(w.base, 1100);
    get(&w, "/flaky", 0, &r);
    ck_assert(run_until(w.base, &w.done, 2, 5000));
    result_release(&r);
    ck_assert(!eu_fetch_host_available(w.client, host));
    struct eu_fetch_stats st;
    eu_fetch_client_stats(w.client, &st);
    ck_assert_uint_eq(st.hosts_unavailable, 1);
    /* It sent us something: it is up. */
    eu_fetch_host_seen(w.client, host);
    ck_assert(eu_fetch_host_available(w.client, host));

    get(&w, "/flaky", 0, &r);
    ck_assert(run_until(w.base, &w.done, 3, 5000));
    result_release(&r);
    run_for(w.base, 1100);
    ck_assert(!eu_fetch_host_available(w.client, host));
    /* A 4xx is an answer, so the host is up. */
    get(&w, "/nothing-here", 0, &r);
    ck_assert(run_until(w.base, &w.done, 4, 5000));
    ck_assert_int_eq(r.status, 404);
    result_release(&r);
    ck_assert(eu_fetch_host_available(w.client, host));

    /* Nothing listening: connect failures count too. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sin;
    bind(fd, (struct sockaddr *)&sin, sizeof sin);
    getsockname(fd, (struct sockaddr *)&sin, &len);
    close(fd);
    char url[128], closed[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(sin.sin_port));
    snprintf(closed, sizeof closed, "127.0.0.1:%d", ntohs(sin.sin_port));
    memset(&r, 0, sizeof r);
    r.done = &w.done;
    struct eu_fetch_req req = {.url = url};
    eu_fetch_start(w.client, &req, on_result, &r);
    ck_assert(run_until(w.base, &w.done, 5, 5000));
    ck_assert_int_eq(r.error, EU_FETCH_CONNECT);
    result_release(&r);
    run_for(w.base, 1100);
    ck_assert(!eu_fetch_host_available(w.client, closed));
    ck_assert(eu_fetch_host_available(w.client, "never.example"));
    world_stop(&w);
}
END_TEST

START_TEST(test_host_table_bounded)
{
    struct eu_fetch_config cfg = test_config();
    cfg.host_unavailable_after_s = 1;
    cfg.max_hosts = 2;
    cfg.connect_timeout_s = 1;
    struct fetch_world w;
    world_start(&w, &cfg);
    /* Three failing hosts (closed ports); the table keeps the last two. */
    char keys[3][64];
    for (int i = 0; i < 3; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof sin;
        bind(fd, (struct sockaddr *)&sin, sizeof sin);
        getsockname(fd, (struct sockaddr *)&sin, &len);
        close(fd);
        char url[128];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(sin.sin_port));
        snprintf(keys[i], sizeof keys[i], "127.0.0.1:%d", ntohs(sin.sin_port));
        struct result r = {.done = &w.done};
        struct eu_fetch_req req = {.url = url};
        eu_fetch_start(w.client, &req, on_result, &r);
        ck_assert(run_until(w.base, &w.done, i + 1, 5000));
        result_release(&r);
    }
    run_for(w.base, 1100);
    struct eu_fetch_stats st;
    eu_fetch_client_stats(w.client, &st);
    ck_assert_uint_eq(st.hosts, 2);
    ck_assert(eu_fetch_host_available(w.client, keys[0])); /* forgotten */
    ck_assert(!eu_fetch_host_available(w.client, keys[1]));
    ck_assert(!eu_fetch_host_available(w.client, keys[2]));
    world_stop(&w);
}
END_TEST

START_TEST(test_cancel)
{
    struct eu_fetch_config cfg = test_config();
    cfg.max_requests_per_host = 2;
    struct fetch_world w;
    world_start(&w, &cfg);
    struct result never[3], queued, echo;
    int idle = count_sockets();
    for (int i = 0; i < 3; i++)
        get(&w, "/never", 7, &never[i]); /* two in flight, one waiting */
    struct eu_fetch *q = get(&w, "/echo", 9, &queued);
    /* Both reach the peer (however loaded the machine), and no third. */
    run_until(w.base, &w.peer.inflight, 2, 10000);
    run_for(w.base, 100);
    ck_assert_int_eq(w.peer.inflight, 2);
    ck_assert_int_eq(count_sockets(), idle + 4); /* both ends of two connections */
    eu_fetch_cancel(q);
    ck_assert_uint_eq(eu_fetch_cancel_owner(w.client, 7), 3);
    ck_assert_int_eq(count_sockets(), idle + 2); /* the client closed its ends */
    /* The slots are free again. */
    get(&w, "/echo", 8, &echo);
    ck_assert(run_until(w.base, &w.done, 1, 5000));
    ck_assert_int_eq(echo.status, 200);
    result_release(&echo);
    run_for(w.base, 100);
    ck_assert_int_eq(w.done, 1);
    for (int i = 0; i < 3; i++)
        ck_assert(!never[i].called);
    ck_assert(!queued.called);
    world_stop(&w);
}
END_TEST

START_TEST(test_free_with_requests_in_flight)
{
    struct eu_fetch_config cfg = test_config();
    cfg.max_requests = 2;
    struct fetch_world w;
    world_start(&w, &cfg);
    struct result r[5];
    int idle = count_sockets();
    get(&w, "/never", 1, &r[0]);
    get(&w, "/slow?ms=5000", 1, &r[1]);
    get(&w, "/echo", 2, &r[2]); /* waiting */
    /* Both reach the peer (however loaded the machine), and no third. */
    run_until(w.base, &w.peer.inflight, 2, 10000);
    run_for(w.base, 100);
    ck_assert_int_eq(w.peer.inflight, 2);
    memset(&r[3], 0, sizeof r[3]);
    r[3].done = &w.done;
    struct eu_fetch_req bad = {.url = "nope"};
    eu_fetch_start(w.client, &bad, on_result, &r[3]); /* refused, not yet reported */
    get(&w, "/echo", 3, &r[4]);
    eu_fetch_client_free(w.client);
    w.client = NULL;
    run_for(w.base, 100);
    for (int i = 0; i < 5; i++)
        ck_assert(!r[i].called);
    /* The client's ends, and its own wake-up sockets, are closed. */
    ck_assert_int_le(count_sockets(), idle + 2);
    world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("fetch");
    TCase *tc = tcase_create("exchange");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_get_and_post_arrive_intact);
    tcase_add_test(tc, test_keepalive_reuses_connection);
    tcase_add_test(tc, test_redirects);
    suite_add_tcase(s, tc);
    tc = tcase_create("limits");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_timeout_keeps_loop_responsive);
    tcase_add_test(tc, test_too_large_is_cut);
    suite_add_tcase(s, tc);
    tc = tcase_create("safety");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_private_addresses_refused);
    tcase_add_test(tc, test_http_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("caps");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_per_host_cap);
    tcase_add_test(tc, test_host_cap_adapts);
    tcase_add_test(tc, test_round_robin_across_owners);
    tcase_add_test(tc, test_queue_bounded_per_owner);
    suite_add_tcase(s, tc);
    tc = tcase_create("health");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_host_of);
    tcase_add_test(tc, test_host_health);
    tcase_add_test(tc, test_host_table_bounded);
    suite_add_tcase(s, tc);
    tc = tcase_create("lifetime");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_cancel);
    tcase_add_test(tc, test_free_with_requests_in_flight);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
