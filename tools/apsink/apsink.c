/*
 * eunha-apsink: a stand-in for remote inboxes in the delivery benchmark. It
 * answers every POST with 202 (after an optional delay, to play a slow peer)
 * and counts them, so scripts/benchmark_delivery.sh can read how many
 * deliveries arrived and when. It checks nothing about signatures: the
 * benchmark measures eunha's side, and the tests check the signatures.
 *
 *   eunha-apsink PORT STATSFILE [DELAY_MS [NPORTS]]
 *
 * With NPORTS it listens on PORT .. PORT+NPORTS-1, all counted together:
 * http://127.0.0.1:PORT+i are distinct hosts to eunha's per-host caps, so
 * one sink plays many remote servers.
 * STATSFILE is rewritten every 100 ms with "posts first_ms last_ms bytes"
 * (milliseconds since the epoch of the first and latest POST).
 */
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

struct sink {
    struct event_base *base;
    const char *stats_path;
    long delay_ms;
    unsigned long long posts, bytes;
    long long first_ms, last_ms;
};

static long long
now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void
answer(struct evhttp_request *r)
{
    evhttp_send_reply(r, 202, "Accepted", NULL);
}

static void
delayed_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    answer(arg);
}

static void
request_cb(struct evhttp_request *r, void *arg)
{
    struct sink *s = arg;
    if (evhttp_request_get_command(r) != EVHTTP_REQ_POST) {
        evhttp_send_reply(r, 404, "Not Found", NULL);
        return;
    }
    long long t = now_ms();
    if (s->posts == 0)
        s->first_ms = t;
    s->last_ms = t;
    s->posts++;
    s->bytes += evbuffer_get_length(evhttp_request_get_input_buffer(r));
    if (s->delay_ms > 0) {
        struct timeval tv = {s->delay_ms / 1000, (s->delay_ms % 1000) * 1000};
        event_base_once(s->base, -1, EV_TIMEOUT, delayed_cb, r, &tv);
    } else {
        answer(r);
    }
}

static void
stats_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct sink *s = arg;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->stats_path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "%llu %lld %lld %llu\n", s->posts, s->first_ms, s->last_ms, s->bytes);
    fclose(f);
    rename(tmp, s->stats_path);
}

static void
stop_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    stats_cb(-1, 0, arg);
    event_base_loopexit(((struct sink *)arg)->base, NULL);
}

int
main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: eunha-apsink PORT STATSFILE [DELAY_MS [NPORTS]]\n");
        return 2;
    }
    struct sink s = {.stats_path = argv[2], .delay_ms = argc > 3 ? atol(argv[3]) : 0};
    s.base = event_base_new();
    struct evhttp *http = evhttp_new(s.base);
    evhttp_set_max_body_size(http, 4 << 20);
    int port = atoi(argv[1]), nports = argc > 4 ? atoi(argv[4]) : 1;
    for (int i = 0; i < nports; i++) {
        if (evhttp_bind_socket(http, "127.0.0.1", (ev_uint16_t)(port + i)) != 0) {
            fprintf(stderr, "eunha-apsink: cannot bind 127.0.0.1:%d\n", port + i);
            return 1;
        }
    }
    evhttp_set_gencb(http, request_cb, &s);
    struct event *tick = event_new(s.base, -1, EV_PERSIST, stats_cb, &s);
    struct timeval every = {0, 100000};
    event_add(tick, &every);
    struct event *term = evsignal_new(s.base, SIGTERM, stop_cb, &s);
    struct event *intr = evsignal_new(s.base, SIGINT, stop_cb, &s);
    event_add(term, NULL);
    event_add(intr, NULL);
    event_base_dispatch(s.base);
    event_free(tick);
    event_free(term);
    event_free(intr);
    evhttp_free(http);
    event_base_free(s.base);
    return 0;
}
