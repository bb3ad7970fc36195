/*
 * Connections, as opposed to the requests on them: how many are open, from
 * where, and how long each may take to say what it wants. One process
 * serves every tenant, so a client that holds thousands of sockets, or
 * trickles its headers a byte at a time, would otherwise take the file
 * descriptors that PostgreSQL, Redis and every other tenant need.
 *
 * evhttp in libevent 2.1 has neither an accept hook nor more than one
 * timeout per connection, and that timeout is for inactivity, which a
 * trickling client never trips. So:
 *
 * Counting at accept. evhttp asks us for each new connection's bufferevent
 * (evhttp_set_bevcb) before it has set the socket on it. We keep a reference
 * to that bufferevent and, from a zero-delay event in the same loop turn,
 * find the connection it now serves (evhttp is always the callback argument
 * of its connection's bufferevent, in 2.1 as in 2.2) and its peer. Over a cap
 * the socket gets a fixed 503 written to it and is closed before any of its
 * bytes is read; otherwise the connection's close callback is set, which is
 * where the counts go down: evhttp calls it on every path that frees an
 * accepted connection (closing, errors, timeouts, evhttp_free).
 *
 * Deadlines. Each connection has one timer. It runs from accept, or from the
 * first byte of a later keep-alive request, to the blank line that ends the
 * headers: header_timeout_seconds. evhttp does not tell us when the headers
 * are complete (its header callback is per request, and 2.1 has no hook where
 * a request is made), so we watch the bytes arriving in the connection's
 * input buffer for the empty line ourselves, a few bytes of state. From there
 * to the request's dispatch (the body upload) the timer runs on
 * request_deadline_seconds, and what is left of it passes to the request
 * (server.c), which answers 503 if its handler is not done in time. When the
 * timer fires the connection is just closed: nothing complete has been asked
 * yet, so there is nothing to answer. Between keep-alive requests no timer of
 * ours runs; evhttp's inactivity timeout (request_timeout_seconds) closes
 * idle connections.
 *
 * A connection is found again by its socket: a table indexed by fd, checked
 * against the evhttp connection (an fd is reused only once its connection
 * has been freed, and the close callback empties the slot first).
 *
 * A connection that becomes a stream (WebSocket, SSE) leaves evhttp, which
 * frees its side of it, but not the caps: its counts move to a hold that
 * the stream releases when it ends (eu_conns_hold()). Otherwise one address
 * could open streams without bound, each taking a descriptor for hours.
 */
#include "conns_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sodium.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/net.h"

/* Descriptors kept back from HTTP when max_connections is left at 0 (auto):
 * a quarter of RLIMIT_NOFILE and never fewer than this, for database and
 * Redis connections, outbound fetches, logs and the admin listener. */
#define AUTO_RESERVE_MIN 64

enum phase {
    PH_HEADERS, /* timer: header_timeout_seconds */
    PH_BODY,    /* timer: request_deadline_seconds from the end of headers */
    PH_BUSY,    /* being handled; the request's own deadline runs in server.c */
    PH_IDLE,    /* between keep-alive requests; evhttp's inactivity timeout */
};

/* Open connections from one address (an IPv6 /64), for the per-IP cap. */
struct ip_count {
    uint8_t key[16];
    int n;
    struct ip_count *next;
};

struct watch {
    struct eu_conns *cs;
    bool capped;
};

struct conn {
    struct eu_conns *cs;
    struct evhttp_connection *evcon;
    struct event *timer;
    struct evbuffer_cb_entry *input_cb;
    struct ip_count *ip; /* NULL when not counted per address */
    bool counted;        /* against max_connections */
    enum phase phase;
    bool at_line_start; /* last byte seen ended a header line */
    int fd;
    uint64_t headers_done_us;
};

/* The counts of a connection taken for a stream, until it ends. */
struct eu_conns_hold {
    struct eu_conns *cs;
    struct ip_count *ip; /* NULL when not counted per address */
    bool counted;        /* against max_connections */
};

struct fresh {
    struct bufferevent *bev; /* holds one reference */
    struct watch *w;
};

struct eu_conns {
    struct eu_app *app;
    struct event_base *base;
    struct watch watches[2];
    int n_watches;
    int auto_max;
    /* Accepted this loop turn, not yet looked at. */
    struct fresh *fresh;
    size_t n_fresh, cap_fresh;
    struct event *adopt_ev;
    /* Indexed by fd. */
    struct conn **by_fd;
    size_t n_by_fd;
    /* Chained hash of per-address counts; an entry exists while its
     * address has a connection open. */
    struct ip_count **ips;
    size_t n_ips_buckets, n_ips;
    uint64_t seed;
    int open;
    uint64_t refused_total, refused_per_ip, header_timeouts, body_timeouts;
    time_t last_refusal_log;
};

static uint64_t
mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int
effective_max(const struct eu_conns *cs)
{
    int max = cs->app->cfg->max_connections;
    return max > 0 ? max : cs->auto_max;
}

/* ------------------------------------------------------------ per address */

/* The address a client is counted under: IPv4 as ::ffff:a.b.c.d, IPv6 by
 * its /64, since one subscriber gets a whole /64 and would otherwise have
 * 2^64 caps. False for other families (not counted). */
static bool
ip_key(const struct sockaddr *sa, uint8_t key[16])
{
    memset(key, 0, 16);
    if (sa && sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &a->sin_addr, 4);
        return true;
    }
    if (sa && sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
        static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(a->sin6_addr.s6_addr, v4mapped, 12) == 0)
            memcpy(key, a->sin6_addr.s6_addr, 16);
        else
            memcpy(key, a->sin6_addr.s6_addr, 8);
        return true;
    }
    return false;
}

/* Seeded per process so a client cannot pick addresses that share a chain. */
static size_t
ip_bucket(const struct eu_conns *cs, const uint8_t key[16])
{
    uint64_t h = cs->seed;
    for (int i = 0; i < 16; i++)
        h = (h ^ key[i]) * 0x100000001b3ull;
    return (size_t)(h ^ (h >> 29)) & (cs->n_ips_buckets - 1);
}

static void
ips_grow(struct eu_conns *cs)
{
    size_t old_n = cs->n_ips_buckets;
    struct ip_count **old = cs->ips;
    cs->n_ips_buckets = old_n * 2;
    cs->ips = eu_xcalloc(cs->n_ips_buckets, sizeof(*cs->ips));
    for (size_t i = 0; i < old_n; i++) {
        struct ip_count *e = old[i], *next;
        for (; e; e = next) {
            next = e->next;
            size_t b = ip_bucket(cs, e->key);
            e->next = cs->ips[b];
            cs->ips[b] = e;
        }
    }
    free(old);
}

/* The count for key, one higher; NULL (and nothing counted) when it is
 * already at max. */
static struct ip_count *
ip_acquire(struct eu_conns *cs, const uint8_t key[16], int max)
{
    size_t b = ip_bucket(cs, key);
    struct ip_count *e = cs->ips[b];
    while (e && memcmp(e->key, key, 16) != 0)
        e = e->next;
    if (!e) {
        e = eu_xcalloc(1, sizeof(*e));
        memcpy(e->key, key, 16);
        e->next = cs->ips[b];
        cs->ips[b] = e;
        if (++cs->n_ips > cs->n_ips_buckets)
            ips_grow(cs);
    }
    if (e->n >= max)
        return NULL;
    e->n++;
    return e;
}

static void
ip_release(struct eu_conns *cs, struct ip_count *e)
{
    if (--e->n > 0)
        return;
    struct ip_count **p = &cs->ips[ip_bucket(cs, e->key)];
    while (*p != e)
        p = &(*p)->next;
    *p = e->next;
    free(e);
    cs->n_ips--;
}

/* ---------------------------------------------------------------- timers */

static void
arm(struct conn *c, enum phase phase, int seconds)
{
    c->phase = phase;
    struct timeval tv = {seconds, 0};
    /* Every connection waits the same few durations: libevent keeps each
     * common timeout as a plain queue instead of a heap entry. */
    const struct timeval *common = event_base_init_common_timeout(c->cs->base, &tv);
    evtimer_add(c->timer, common ? common : &tv);
}

static void
end_of_headers(struct conn *c)
{
    c->headers_done_us = mono_us();
    arm(c, PH_BODY, c->cs->app->cfg->request_deadline_s);
}

/* Looks for the empty line that ends the headers in the n bytes at the end
 * of buf. evhttp takes "\n" as a line end as well as "\r\n", so "\n\n",
 * "\n\r\n" and "\r\n\r\n" all end them. */
static void
scan_tail(struct conn *c, struct evbuffer *buf, size_t n)
{
    size_t len = evbuffer_get_length(buf);
    if (n > len)
        n = len;
    struct evbuffer_ptr p;
    if (evbuffer_ptr_set(buf, &p, len - n, EVBUFFER_PTR_SET) < 0)
        return;
    while (n > 0) {
        struct evbuffer_iovec v;
        if (evbuffer_peek(buf, (ev_ssize_t)n, &p, &v, 1) < 1 || v.iov_len == 0)
            return;
        size_t m = v.iov_len < n ? v.iov_len : n;
        const unsigned char *s = v.iov_base;
        for (size_t i = 0; i < m; i++) {
            if (s[i] == '\n') {
                if (c->at_line_start) {
                    end_of_headers(c);
                    return;
                }
                c->at_line_start = true;
            } else if (s[i] != '\r') {
                c->at_line_start = false;
            }
        }
        n -= m;
        if (evbuffer_ptr_set(buf, &p, m, EVBUFFER_PTR_ADD) < 0)
            return;
    }
}

static void
start_headers(struct conn *c)
{
    c->at_line_start = false;
    arm(c, PH_HEADERS, c->cs->app->cfg->header_timeout_s);
}

/* Runs on every change of the connection's input buffer, before evhttp
 * reads what was added. */
static void
on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
    struct conn *c = arg;
    if (info->n_added == 0)
        return;
    if (c->phase == PH_IDLE)
        start_headers(c);
    if (c->phase == PH_HEADERS)
        scan_tail(c, buf, info->n_added);
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct conn *c = arg;
    struct eu_conns *cs = c->cs;
    char *peer = NULL;
    ev_uint16_t port = 0;
    evhttp_connection_get_peer(c->evcon, &peer, &port);
    if (c->phase == PH_HEADERS) {
        cs->header_timeouts++;
        eu_log_info("http", "closing connection from '%s': no complete headers within %d s",
                    peer ? peer : "?", cs->app->cfg->header_timeout_s);
    } else {
        cs->body_timeouts++;
        eu_log_info("http", "closing connection from '%s': no complete request within %d s",
                    peer ? peer : "?", cs->app->cfg->request_deadline_s);
    }
    /* The request on it has not reached a handler, so evhttp owns all of
     * it; this runs our close callback, which frees c. */
    evhttp_connection_free(c->evcon);
}

/* ---------------------------------------------------------- accept, close */

static struct conn *
find(struct eu_conns *cs, struct evhttp_connection *evcon)
{
    struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    evutil_socket_t fd = bev ? bufferevent_getfd(bev) : -1;
    if (fd < 0 || (size_t)fd >= cs->n_by_fd)
        return NULL;
    struct conn *c = cs->by_fd[fd];
    return c && c->evcon == evcon ? c : NULL;
}

static void
on_close(struct evhttp_connection *evcon, void *arg)
{
    (void)evcon;
    struct conn *c = arg;
    struct eu_conns *cs = c->cs;
    if (c->counted)
        cs->open--;
    if (c->ip)
        ip_release(cs, c->ip);
    /* The bufferevent outlives this call; its buffer must not call into c. */
    struct bufferevent *bev = evhttp_connection_get_bufferevent(evcon);
    if (bev && c->input_cb)
        evbuffer_remove_cb_entry(bufferevent_get_input(bev), c->input_cb);
    event_free(c->timer);
    if ((size_t)c->fd < cs->n_by_fd && cs->by_fd[c->fd] == c)
        cs->by_fd[c->fd] = NULL;
    free(c);
}

/* Answers and closes a connection over a cap without reading from it. The
 * socket is new, so its send buffer takes these few hundred bytes whole;
 * were it not to, the client would get less, and the loop would not wait. */
static void
refuse(struct eu_conns *cs, struct evhttp_connection *evcon, int fd, const char *why)
{
    char msg[512];
    char body[160];
    int blen = snprintf(body, sizeof(body), "{\"error\":\"%s\"}", why);
    int n = snprintf(msg, sizeof(msg),
                     "HTTP/1.1 503 Service Unavailable\r\n"
                     "Content-Type: application/json; charset=utf-8\r\n"
                     "Content-Length: %d\r\nRetry-After: 5\r\nConnection: close\r\n\r\n%s",
                     blen, body);
    if (send(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN)
        eu_log_debug("http", "cannot answer a refused connection: %s", strerror(errno));
    /* Closing with unread bytes makes the kernel send a reset, which can
     * destroy the 503 before the client reads it; what has already come is
     * dropped first. */
    char sink[4096];
    for (int i = 0; i < 4 && recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++)
        ;
    time_t now = time(NULL);
    if (now != cs->last_refusal_log) {
        cs->last_refusal_log = now;
        eu_log_warn("http", "refusing connections: %s (%d open, cap %d; %llu refused in all)", why,
                    cs->open, effective_max(cs),
                    (unsigned long long)(cs->refused_total + cs->refused_per_ip));
    }
    evhttp_connection_free(evcon);
}

/*
 * Without TCP_NODELAY, a reply larger than one write (bufferevents write 16
 * KiB at a time) leaves its last segment waiting for the client's delayed
 * ACK: 40 ms added to every timeline page. One write per reply avoids the
 * split.
 */
static void
tune(struct bufferevent *bev, int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    bufferevent_set_max_single_write(bev, 1024 * 1024);
}

static void
adopt(struct eu_conns *cs, const struct watch *w, struct evhttp_connection *evcon,
      struct bufferevent *bev)
{
    int fd = bufferevent_getfd(bev);
    if (fd < 0)
        return;
    const struct eu_config *cfg = cs->app->cfg;
    struct ip_count *ip = NULL;
    if (w->capped) {
        if (cs->open >= effective_max(cs)) {
            cs->refused_total++;
            refuse(cs, evcon, fd, "The server has too many connections; try again shortly");
            return;
        }
        /* Behind a proxy every client has the proxy's address: only the
         * total cap applies to it, and per-client limits are the proxy's. */
        char *peer = NULL;
        ev_uint16_t port = 0;
        evhttp_connection_get_peer(evcon, &peer, &port);
        uint8_t key[16];
        if (cfg->max_connections_per_ip > 0 && peer &&
            !eu_ip_in_list(peer, cfg->trusted_proxies, cfg->n_trusted_proxies) &&
            ip_key(evhttp_connection_get_addr(evcon), key)) {
            ip = ip_acquire(cs, key, cfg->max_connections_per_ip);
            if (!ip) {
                cs->refused_per_ip++;
                refuse(cs, evcon, fd, "Too many connections from your address; try again shortly");
                return;
            }
        }
        cs->open++;
    }
    struct conn *c = eu_xcalloc(1, sizeof(*c));
    c->cs = cs;
    c->evcon = evcon;
    c->fd = fd;
    c->ip = ip;
    c->counted = w->capped;
    c->timer = evtimer_new(cs->base, on_timer, c);
    if ((size_t)fd >= cs->n_by_fd) {
        size_t n = cs->n_by_fd ? cs->n_by_fd : 1024;
        while (n <= (size_t)fd)
            n *= 2;
        cs->by_fd = eu_xrealloc(cs->by_fd, n * sizeof(*cs->by_fd));
        memset(cs->by_fd + cs->n_by_fd, 0, (n - cs->n_by_fd) * sizeof(*cs->by_fd));
        cs->n_by_fd = n;
    }
    cs->by_fd[fd] = c;
    evhttp_connection_set_closecb(evcon, on_close, c);
    tune(bev, fd);
    start_headers(c);
    struct evbuffer *in = bufferevent_get_input(bev);
    if (evbuffer_get_length(in))
        scan_tail(c, in, evbuffer_get_length(in));
    c->input_cb = evbuffer_add_cb(in, on_input, c);
}

/* Looks at every connection accepted since the last call. */
static void
adopt_fresh(struct eu_conns *cs)
{
    /* adopt() may free connections, which never adds to the list. */
    for (size_t i = 0; i < cs->n_fresh; i++) {
        struct bufferevent *bev = cs->fresh[i].bev;
        void *arg = NULL;
        bufferevent_getcb(bev, NULL, NULL, NULL, &arg);
        /* NULL: evhttp freed the connection already (bufferevent_free clears
         * the callbacks; our reference kept the bufferevent itself). */
        struct evhttp_connection *evcon = arg;
        if (evcon && evhttp_connection_get_bufferevent(evcon) == bev)
            adopt(cs, cs->fresh[i].w, evcon, bev);
        bufferevent_decref(bev);
    }
    cs->n_fresh = 0;
}

static void
on_adopt(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    adopt_fresh(arg);
}

static struct bufferevent *
on_new_bufferevent(struct event_base *base, void *arg)
{
    struct watch *w = arg;
    struct eu_conns *cs = w->cs;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!bev)
        return NULL;
    /* Ours until adopt_fresh() has looked at it, whatever evhttp does. */
    bufferevent_incref(bev);
    if (cs->n_fresh == cs->cap_fresh) {
        cs->cap_fresh = cs->cap_fresh ? cs->cap_fresh * 2 : 16;
        cs->fresh = eu_xrealloc(cs->fresh, cs->cap_fresh * sizeof(*cs->fresh));
    }
    cs->fresh[cs->n_fresh++] = (struct fresh){bev, w};
    if (cs->n_fresh == 1)
        event_active(cs->adopt_ev, EV_TIMEOUT, 0);
    return bev;
}

/* ------------------------------------------------------------------ API */

struct eu_conns *
eu_conns_new(struct eu_app *app)
{
    struct eu_conns *cs = eu_xcalloc(1, sizeof(*cs));
    cs->app = app;
    cs->base = app->base;
    cs->adopt_ev = event_new(app->base, -1, 0, on_adopt, cs);
    cs->n_ips_buckets = 256;
    cs->ips = eu_xcalloc(cs->n_ips_buckets, sizeof(*cs->ips));
    randombytes_buf(&cs->seed, sizeof(cs->seed));
    struct rlimit rl;
    long long nofile = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        nofile = rl.rlim_cur == RLIM_INFINITY ? 1 << 20 : (long long)rl.rlim_cur;
    long long reserve = nofile / 4 > AUTO_RESERVE_MIN ? nofile / 4 : AUTO_RESERVE_MIN;
    cs->auto_max = nofile - reserve > 1 ? (int)(nofile - reserve) : 1;
    int max = effective_max(cs);
    if (max > nofile - AUTO_RESERVE_MIN)
        eu_log_warn("http",
                    "max_connections %d leaves fewer than %d of %lld file descriptors for "
                    "databases and Redis; raise the limit (ulimit -n, LimitNOFILE)",
                    max, AUTO_RESERVE_MIN, nofile);
    eu_log_info("http", "at most %d client connections, %d per address (file descriptors: %lld)",
                max, app->cfg->max_connections_per_ip, nofile);
    return cs;
}

void
eu_conns_free(struct eu_conns *cs)
{
    if (!cs)
        return;
    for (size_t i = 0; i < cs->n_fresh; i++)
        bufferevent_decref(cs->fresh[i].bev);
    free(cs->fresh);
    event_free(cs->adopt_ev);
    for (size_t i = 0; i < cs->n_ips_buckets; i++) {
        struct ip_count *e = cs->ips[i], *next;
        for (; e; e = next) {
            next = e->next;
            free(e);
        }
    }
    free(cs->ips);
    free(cs->by_fd);
    free(cs);
}

void
eu_conns_watch(struct eu_conns *cs, struct evhttp *http, bool capped)
{
    struct watch *w = &cs->watches[cs->n_watches++];
    w->cs = cs;
    w->capped = capped;
    evhttp_set_bevcb(http, on_new_bufferevent, w);
}

uint64_t
eu_conns_request_started(struct eu_conns *cs, struct evhttp_request *ev)
{
    /* The zero-delay event normally runs before any request can be read;
     * this makes the order not matter. */
    adopt_fresh(cs);
    struct conn *c = find(cs, evhttp_request_get_connection(ev));
    if (!c)
        return 0;
    uint64_t waited = 0;
    if (c->phase == PH_BODY)
        waited = mono_us() - c->headers_done_us;
    evtimer_del(c->timer);
    c->phase = PH_BUSY;
    return waited;
}

void
eu_conns_reply_sending(struct eu_conns *cs, struct evhttp_connection *evcon)
{
    struct conn *c = find(cs, evcon);
    if (!c)
        return;
    evtimer_del(c->timer);
    c->phase = PH_IDLE;
    /* A pipelined request may be waiting already; its bytes arrived while
     * we were busy and were not looked at. */
    struct evbuffer *in = bufferevent_get_input(evhttp_connection_get_bufferevent(evcon));
    size_t n = evbuffer_get_length(in);
    if (n) {
        start_headers(c);
        scan_tail(c, in, n);
    }
}

struct eu_conns_hold *
eu_conns_hold(struct eu_conns *cs, struct evhttp_connection *evcon)
{
    struct conn *c = find(cs, evcon);
    if (!c || (!c->ip && !c->counted))
        return NULL;
    struct eu_conns_hold *h = eu_xcalloc(1, sizeof(*h));
    h->cs = cs;
    h->ip = c->ip;
    h->counted = c->counted;
    /* The close callback that follows must not count it off. */
    c->ip = NULL;
    c->counted = false;
    return h;
}

void
eu_conns_hold_release(struct eu_conns_hold *h)
{
    if (!h)
        return;
    if (h->counted)
        h->cs->open--;
    if (h->ip)
        ip_release(h->cs, h->ip);
    free(h);
}

void
eu_conns_stats(const struct eu_conns *cs, struct eu_http_conn_stats *out)
{
    out->open = cs->open;
    out->max = effective_max(cs);
    out->refused_total = cs->refused_total;
    out->refused_per_ip = cs->refused_per_ip;
    out->header_timeouts = cs->header_timeouts;
    out->body_timeouts = cs->body_timeouts;
}
