/*
 * The load generator's engine: one libevent loop, keep-alive HTTP/1.1
 * connections through evhttp's client, and the two ways of offering load.
 *
 * Closed loop: each of N connections sends its next request as soon as the
 * previous one is answered. Throughput is what the server manages, and
 * latency never includes queueing, because a slow server slows the clients.
 *
 * Open loop: arrivals come at a fixed total rate whatever the server does.
 * Latency is measured from when a request was due, not from when it was
 * written to a socket, so time spent waiting for a free connection counts.
 * Measuring from the send time would hide exactly the queueing an overloaded
 * server causes (coordinated omission). How late we ourselves were in
 * dispatching is kept separately ("lag"), so a load generator starved of CPU
 * shows up as such instead of as a slow server.
 *
 * Requests are spread over the Host names round robin, so every tenant gets
 * an equal share whatever the mix.
 */
#include "loadgen.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

const struct eu_lg_kind_info eu_lg_kinds[EU_LG_KIND_COUNT] = {
    [EU_LG_HOME] = {"home", "/api/v1/timelines/home", false, true, false, false},
    [EU_LG_PUBLIC] = {"public", "/api/v1/timelines/public", false, false, false, false},
    [EU_LG_NOTIFICATIONS] = {"notifications", "/api/v1/notifications", false, true, false, false},
    [EU_LG_VERIFY] = {"verify", "/api/v1/accounts/verify_credentials", false, true, false, false},
    [EU_LG_ACCOUNT] = {"account", NULL, false, false, true, false},
    [EU_LG_STATUS] = {"status", "/api/v1/statuses", true, true, false, false},
    [EU_LG_INSTANCE] = {"instance", "/api/v1/instance", false, false, false, false},
    [EU_LG_TENANT] = {"tenant", "/admin/v1/tenants", true, false, false, true},
};

const char *const eu_lg_err_names[EU_LG_ERR_COUNT] = {
    [EU_LG_ERR_CONNECT] = "connect", [EU_LG_ERR_TIMEOUT] = "timeout",
    [EU_LG_ERR_CLOSED] = "closed",   [EU_LG_ERR_PROTOCOL] = "protocol",
    [EU_LG_ERR_OTHER] = "other",     [EU_LG_ERR_BACKLOG] = "backlog_full",
};

struct lg;

struct conn {
    struct lg *lg;
    struct evhttp_connection *evcon;
    struct conn *next_idle;
};

/* A request from the moment it is due until it is answered or fails. */
struct pending {
    struct lg *lg;
    struct conn *conn;
    enum eu_lg_kind kind;
    size_t host;
    uint64_t due_ns;          /* when it should have been sent; latency starts here */
    int err;                  /* an eu_lg_err, or -1 */
    unsigned attempts;        /* sends so far; more than one after a retried 503 */
    struct event *retry_ev;   /* made on the first retry, freed at exit */
    bool done;                /* on_response has run */
    char id[32];              /* --log: the id a created status was given */
    struct pending *next;     /* backlog queue or free list */
    struct pending *all_next; /* every pending ever allocated, to free at exit */
};

struct lg {
    struct eu_lg_config *cfg;
    struct eu_lg_stats *st;
    struct event_base *base;
    struct event *arrival_ev, *stop_ev, *drain_ev, *sigint_ev, *sigterm_ev;

    struct conn *conns;
    size_t nconns, maxconns;
    struct conn *idle;

    struct pending *backlog_head, *backlog_tail;
    size_t backlog_len;
    struct pending *free_list, *all;

    uint64_t start_ns, measure_ns, end_ns, finished_ns;
    uint64_t next_due_ns; /* open loop: the next arrival */
    double interval_ns;
    uint64_t arrivals, inflight, next_host, post_seq, rng;
    bool stopping;
};

static uint64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct timeval
tv_from_ns(uint64_t ns)
{
    struct timeval tv = {(time_t)(ns / 1000000000u), (suseconds_t)(ns % 1000000000u / 1000)};
    return tv;
}

/* xorshift64*: fast, and seeded so a run's mix can be repeated. */
static uint64_t
rng_next(struct lg *lg)
{
    lg->rng ^= lg->rng >> 12;
    lg->rng ^= lg->rng << 25;
    lg->rng ^= lg->rng >> 27;
    return lg->rng * 2685821657736338717ULL;
}

static double
rng_unit(struct lg *lg)
{
    return (double)(rng_next(lg) >> 11) / 9007199254740992.0;
}

static enum eu_lg_kind
pick_kind(struct lg *lg)
{
    uint64_t r = rng_next(lg) % lg->cfg->weight_total;
    for (int k = 0; k < EU_LG_KIND_COUNT; k++) {
        if (r < lg->cfg->weights[k])
            return (enum eu_lg_kind)k;
        r -= lg->cfg->weights[k];
    }
    return EU_LG_INSTANCE;
}

static bool
is_measured(const struct lg *lg, const struct pending *p)
{
    return p->due_ns >= lg->measure_ns && p->due_ns < lg->end_ns;
}

static struct pending *
pending_new(struct lg *lg)
{
    struct pending *p = lg->free_list;
    if (p) {
        lg->free_list = p->next;
    } else {
        p = calloc(1, sizeof(*p));
        if (!p) {
            fprintf(stderr, "eunha-loadgen: out of memory\n");
            exit(1);
        }
        p->all_next = lg->all;
        lg->all = p;
    }
    p->lg = lg;
    p->conn = NULL;
    p->err = -1;
    p->attempts = 0;
    p->done = false;
    p->id[0] = '\0';
    p->next = NULL;
    return p;
}

static void
pending_free(struct lg *lg, struct pending *p)
{
    p->next = lg->free_list;
    lg->free_list = p;
}

static void finish_if_done(struct lg *lg);
static void send_on(struct lg *lg, struct pending *p, struct conn *c);
static void dispatch(struct lg *lg, struct pending *p);

static struct conn *
conn_new(struct lg *lg)
{
    struct conn *c = &lg->conns[lg->nconns++];
    c->lg = lg;
    /* A NULL dns base is fine: main.c only accepts numeric addresses, so
     * nothing here ever resolves a name. */
    c->evcon =
        evhttp_connection_base_new(lg->base, NULL, lg->cfg->addr, (unsigned short)lg->cfg->port);
    if (!c->evcon) {
        fprintf(stderr, "eunha-loadgen: cannot create a connection to %s:%u\n", lg->cfg->addr,
                lg->cfg->port);
        exit(1);
    }
    struct timeval tv = tv_from_ns((uint64_t)(lg->cfg->timeout * 1e9));
    evhttp_connection_set_timeout_tv(c->evcon, &tv);
    evhttp_connection_set_retries(c->evcon, 0);
    lg->st->connections++;
    return c;
}

/* A connection just became free: give it the oldest waiting arrival, or in
 * closed loop the client's next request, or park it. */
static void
conn_release(struct lg *lg, struct conn *c)
{
    if (!lg->stopping && lg->backlog_head) {
        struct pending *p = lg->backlog_head;
        lg->backlog_head = p->next;
        if (!lg->backlog_head)
            lg->backlog_tail = NULL;
        lg->backlog_len--;
        send_on(lg, p, c);
        return;
    }
    bool closed_loop = lg->cfg->rate <= 0;
    bool more = !lg->cfg->max_requests || lg->arrivals < lg->cfg->max_requests;
    if (closed_loop && !lg->stopping && more) {
        struct pending *p = pending_new(lg);
        p->kind = pick_kind(lg);
        p->host = lg->next_host++ % lg->cfg->nhosts;
        p->due_ns = now_ns();
        lg->arrivals++;
        send_on(lg, p, c);
        return;
    }
    c->next_idle = lg->idle;
    lg->idle = c;
}

/* --log's line for p: when it was due (ms into the window), its latency
 * (ms), its status or error name, its kind, its Host and the id of the
 * status it created ("-" for none). */
static void
log_done(struct lg *lg, const struct pending *p, int status, uint64_t lat_us)
{
    char code[16];
    if (p->err >= 0)
        snprintf(code, sizeof(code), "%s", eu_lg_err_names[p->err]);
    else
        snprintf(code, sizeof(code), "%d", status);
    fprintf(lg->cfg->log, "%.3f %.3f %s %s %s %s\n", (double)(p->due_ns - lg->measure_ns) / 1e6,
            (double)lat_us / 1e3, code, eu_lg_kinds[p->kind].name, lg->cfg->hosts[p->host].name,
            p->id[0] ? p->id : "-");
}

static void
record_done(struct lg *lg, struct pending *p, int status)
{
    struct eu_lg_stats *st = lg->st;
    if (!is_measured(lg, p))
        return;
    struct eu_lg_kind_stats *ks = &st->kinds[p->kind];
    uint64_t lat_us = (now_ns() - p->due_ns) / 1000;
    if (lg->cfg->log)
        log_done(lg, p, status, lat_us);
    st->completed++;
    if (p->err >= 0) {
        st->err[p->err]++;
        ks->errors++;
        return;
    }
    eu_lg_hist_record(&ks->hist, lat_us);
    eu_lg_hist_record(&st->all, lat_us);
    st->status[status < 600 ? status : 599]++;
    if (status >= 400)
        ks->errors++;
    else
        ks->ok++;
}

static void
on_request_error(enum evhttp_request_error e, void *arg)
{
    struct pending *p = arg;
    switch (e) {
    case EVREQ_HTTP_TIMEOUT:
        p->err = EU_LG_ERR_TIMEOUT;
        break;
    case EVREQ_HTTP_EOF:
        p->err = EU_LG_ERR_CLOSED;
        break;
    case EVREQ_HTTP_INVALID_HEADER:
    case EVREQ_HTTP_DATA_TOO_LONG:
        p->err = EU_LG_ERR_PROTOCOL;
        break;
    default:
        p->err = EU_LG_ERR_OTHER;
        break;
    }
}

/* p has its final answer (or failure): count it, free it, and give its
 * connection, if it still holds one, the next request. */
static void
complete(struct lg *lg, struct pending *p, int status)
{
    struct conn *c = p->conn;
    record_done(lg, p, status);
    pending_free(lg, p);
    lg->inflight--;
    lg->finished_ns = now_ns();
    if (c)
        conn_release(lg, c);
    finish_if_done(lg);
}

static void
on_retry_timer(evutil_socket_t fd, short what, void *arg)
{
    struct pending *p = arg;
    struct lg *lg = p->lg;
    if (lg->stopping) {
        /* The run is draining: the 503 it last got is its answer. */
        complete(lg, p, 503);
        return;
    }
    lg->inflight--; /* counted again when it is sent */
    if (p->conn)
        send_on(lg, p, p->conn);
    else
        dispatch(lg, p);
}

/* Schedules p to be asked again after the server's Retry-After (1 s when
 * absent, at most 10 s), unless that would pass --retry-503 seconds after p
 * was due. Returns false when p's 503 stands. */
static bool
retry_later(struct lg *lg, struct pending *p, struct evhttp_request *req)
{
    if (lg->cfg->retry_503 <= 0 || lg->stopping)
        return false;
    double wait = 1.0;
    const char *ra = evhttp_find_header(evhttp_request_get_input_headers(req), "Retry-After");
    if (ra) {
        char *end;
        double v = strtod(ra, &end);
        if (end != ra && v >= 0)
            wait = v < 0.1 ? 0.1 : v > 10 ? 10 : v;
    }
    uint64_t at = now_ns() + (uint64_t)(wait * 1e9);
    if (at > p->due_ns + (uint64_t)(lg->cfg->retry_503 * 1e9))
        return false;
    if (!p->retry_ev) {
        p->retry_ev = evtimer_new(lg->base, on_retry_timer, p);
        if (!p->retry_ev)
            return false;
    }
    struct timeval tv = tv_from_ns((uint64_t)(wait * 1e9));
    evtimer_add(p->retry_ev, &tv);
    if (is_measured(lg, p))
        lg->st->retries++;
    return true;
}

/* Keeps the id of the status a 2xx POST /api/v1/statuses created, for
 * --log: the first "id" of the body, which is the status's own (the
 * server writes it first). */
static void
keep_status_id(struct pending *p, struct evhttp_request *req)
{
    static const char key[] = "\"id\":\"";
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    const char *body = len ? (const char *)evbuffer_pullup(in, (ev_ssize_t)len) : NULL;
    const char *at = body ? memmem(body, len, key, sizeof(key) - 1) : NULL;
    if (!at)
        return;
    at += sizeof(key) - 1;
    size_t n = 0;
    while (at + n < body + len && n + 1 < sizeof(p->id) && at[n] != '"')
        n++;
    memcpy(p->id, at, n);
    p->id[n] = '\0';
}

static void
on_response(struct evhttp_request *req, void *arg)
{
    struct pending *p = arg;
    struct lg *lg = p->lg;
    int status = req ? evhttp_request_get_response_code(req) : 0;
    p->done = true;
    /* evhttp fails a request whose connection never came up by calling this
     * with status 0 and without the error callback. */
    if (p->err < 0 && status == 0)
        p->err = EU_LG_ERR_CONNECT;
    if (lg->cfg->log && p->err < 0 && p->kind == EU_LG_STATUS && status >= 200 && status < 300)
        keep_status_id(p, req);
    if (p->err < 0 && status == 503 && retry_later(lg, p, req)) {
        /* Still in flight. In open loop the connection serves other
         * arrivals meanwhile; in closed loop the client waits on its own
         * connection, so retries do not raise the concurrency. */
        if (lg->cfg->rate > 0) {
            struct conn *c = p->conn;
            p->conn = NULL;
            conn_release(lg, c);
        }
        return;
    }
    complete(lg, p, status);
}

static void
add_header(struct evkeyvalq *h, const char *k, const char *v)
{
    evhttp_add_header(h, k, v);
}

static void
send_on(struct lg *lg, struct pending *p, struct conn *c)
{
    const struct eu_lg_config *cfg = lg->cfg;
    struct eu_lg_host *host = &cfg->hosts[p->host];
    const struct eu_lg_kind_info *ki = &eu_lg_kinds[p->kind];
    p->conn = c;
    struct evhttp_request *req = evhttp_request_new(on_response, p);
    evhttp_request_set_error_cb(req, on_request_error);
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    add_header(h, "Host", host->name);
    add_header(h, "User-Agent", "eunha-loadgen/" EUNHA_VERSION);
    add_header(h, "Accept", "application/json");
    /* Admin kinds carry the admin token; everything else but the instance
     * endpoint goes as the logged-in user a real client would be, when there
     * is one. */
    if (ki->admin) {
        char auth[1024];
        snprintf(auth, sizeof(auth), "Bearer %s", cfg->admin_token);
        add_header(h, "Authorization", auth);
    } else if (host->ntokens && p->kind != EU_LG_INSTANCE) {
        char auth[1024];
        const char *tok = host->tokens[host->next_token++ % host->ntokens];
        snprintf(auth, sizeof(auth), "Bearer %s", tok);
        add_header(h, "Authorization", auth);
    }
    char uri[512];
    if (p->kind == EU_LG_ACCOUNT) {
        const char *id = host->account_ids[rng_next(lg) % host->naccounts];
        snprintf(uri, sizeof(uri), "/api/v1/accounts/%s", id);
    } else {
        snprintf(uri, sizeof(uri), "%s", ki->path);
    }
    if (ki->admin) {
        /* main.c checked that Host names need no JSON escaping. A retried
         * 503 sends the same body again: the tenant was not made. */
        struct evbuffer *body = evhttp_request_get_output_buffer(req);
        add_header(h, "Content-Type", "application/json");
        evbuffer_add_printf(body, "{\"domain\":\"%s\",\"title\":\"%s\"}", host->name, host->name);
    } else if (ki->post) {
        struct evbuffer *body = evhttp_request_get_output_buffer(req);
        unsigned long long n = (unsigned long long)++lg->post_seq;
        if (cfg->post_form) {
            add_header(h, "Content-Type", "application/x-www-form-urlencoded");
            evbuffer_add_printf(body, "status=loadgen+status+%llu&visibility=%s", n,
                                cfg->visibility);
        } else {
            add_header(h, "Content-Type", "application/json");
            evbuffer_add_printf(body, "{\"status\":\"loadgen status %llu\",\"visibility\":\"%s\"}",
                                n, cfg->visibility);
        }
    }
    if (is_measured(lg, p) && p->attempts == 0)
        lg->st->kinds[p->kind].sent++;
    p->attempts++;
    p->done = false; /* a retried request's last attempt did finish */
    lg->inflight++;
    /* A synchronous failure (no socket to be had) may or may not have run
     * on_response already, depending on where evhttp failed; `done` tells.
     * p is not reused in between: nothing allocates a pending meanwhile. */
    if (evhttp_make_request(c->evcon, req, ki->post ? EVHTTP_REQ_POST : EVHTTP_REQ_GET, uri) &&
        !p->done) {
        /* Not on_response: in closed loop that would retry at once and
         * recurse while sockets stay short. The connection sits idle instead
         * and the error shows in the report. */
        p->err = EU_LG_ERR_CONNECT;
        record_done(lg, p, 0);
        pending_free(lg, p);
        lg->inflight--;
        c->next_idle = lg->idle;
        lg->idle = c;
        finish_if_done(lg);
    }
}

/* A request falls due: send it now if a connection is free or may be opened,
 * else queue it; its latency clock is already running. */
static void
arrive(struct lg *lg, uint64_t due_ns)
{
    struct pending *p = pending_new(lg);
    p->kind = pick_kind(lg);
    p->host = lg->next_host++ % lg->cfg->nhosts;
    p->due_ns = due_ns;
    lg->arrivals++;
    /* Our own lateness only: waiting for a busy connection afterwards is the
     * server's queueing and belongs in its latency, not here. */
    if (lg->cfg->rate > 0 && is_measured(lg, p)) {
        uint64_t t = now_ns();
        eu_lg_hist_record(&lg->st->lag, t > due_ns ? (t - due_ns) / 1000 : 0);
    }
    dispatch(lg, p);
}

/* Sends p on a free connection, or a new one if allowed, or queues it. */
static void
dispatch(struct lg *lg, struct pending *p)
{
    if (lg->idle) {
        struct conn *c = lg->idle;
        lg->idle = c->next_idle;
        send_on(lg, p, c);
    } else if (lg->nconns < lg->maxconns) {
        send_on(lg, p, conn_new(lg));
    } else if (lg->backlog_len < lg->cfg->max_backlog) {
        if (lg->backlog_tail)
            lg->backlog_tail->next = p;
        else
            lg->backlog_head = p;
        lg->backlog_tail = p;
        lg->backlog_len++;
    } else {
        p->err = EU_LG_ERR_BACKLOG;
        if (is_measured(lg, p) && p->attempts == 0)
            lg->st->kinds[p->kind].sent++;
        record_done(lg, p, 0);
        pending_free(lg, p);
    }
}

static void
schedule_arrival(struct lg *lg)
{
    uint64_t t = now_ns();
    uint64_t wait = lg->next_due_ns > t ? lg->next_due_ns - t : 0;
    struct timeval tv = tv_from_ns(wait);
    evtimer_add(lg->arrival_ev, &tv);
}

static void
on_arrival_timer(evutil_socket_t fd, short what, void *arg)
{
    struct lg *lg = arg;
    uint64_t t = now_ns();
    /* Catch up on every arrival that fell due while we were busy or the timer
     * fired late: skipping them would lower the offered rate exactly when
     * the server is slow. Each keeps its own due time. */
    while (!lg->stopping && lg->next_due_ns <= t) {
        if (lg->cfg->max_requests && lg->arrivals >= lg->cfg->max_requests) {
            finish_if_done(lg);
            return;
        }
        arrive(lg, lg->next_due_ns);
        double gap = lg->interval_ns;
        if (lg->cfg->poisson)
            gap = -log(1.0 - rng_unit(lg)) * lg->interval_ns;
        lg->next_due_ns += (uint64_t)gap;
    }
    if (!lg->stopping)
        schedule_arrival(lg);
}

static void
finish(struct lg *lg)
{
    event_base_loopexit(lg->base, NULL);
}

static void
finish_if_done(struct lg *lg)
{
    bool all_sent = lg->cfg->max_requests && lg->arrivals >= lg->cfg->max_requests;
    if ((lg->stopping || all_sent) && lg->inflight == 0 && !lg->backlog_head)
        finish(lg);
}

static void
on_drain_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct lg *lg = arg;
    lg->st->inflight_left = lg->inflight;
    finish(lg);
}

/* Stops offering load, forgets queued arrivals and gives requests in flight
 * one timeout to finish: they were due inside the window, so they count. */
static void
stop(struct lg *lg)
{
    if (lg->stopping)
        return;
    lg->stopping = true;
    evtimer_del(lg->arrival_ev);
    while (lg->backlog_head) {
        struct pending *p = lg->backlog_head;
        lg->backlog_head = p->next;
        if (is_measured(lg, p))
            lg->st->unsent++;
        pending_free(lg, p);
    }
    lg->backlog_tail = NULL;
    lg->backlog_len = 0;
    if (lg->inflight == 0) {
        finish(lg);
        return;
    }
    struct timeval tv = tv_from_ns((uint64_t)((lg->cfg->timeout + 1.0) * 1e9));
    evtimer_add(lg->drain_ev, &tv);
}

static void
on_stop_timer(evutil_socket_t fd, short what, void *arg)
{
    stop(arg);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct lg *lg = arg;
    /* Ends the window now, so a run cut short still reports honest rates. */
    uint64_t t = now_ns();
    if (t < lg->end_ns)
        lg->end_ns = t > lg->measure_ns ? t : lg->measure_ns;
    if (lg->stopping)
        finish(lg);
    stop(lg);
}

static double
tv_seconds(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

uint64_t
eu_lg_stats_errors(const struct eu_lg_stats *st)
{
    uint64_t n = 0;
    for (int i = 0; i < EU_LG_ERR_COUNT; i++)
        n += st->err[i];
    for (int s = 400; s < 600; s++)
        n += st->status[s];
    return n;
}

int
eu_lg_run(struct eu_lg_config *cfg, struct eu_lg_stats *st)
{
    struct lg lg = {.cfg = cfg, .st = st};
    memset(st, 0, sizeof(*st));
    lg.rng = cfg->seed ? cfg->seed : 0x9E3779B97F4A7C15ULL;

    /* Precise timers: the default rounds timeouts to the millisecond, which
     * would bunch open-loop arrivals at high rates. */
    struct event_config *ecfg = event_config_new();
    event_config_set_flag(ecfg, EVENT_BASE_FLAG_PRECISE_TIMER);
    lg.base = event_base_new_with_config(ecfg);
    event_config_free(ecfg);
    if (!lg.base) {
        fprintf(stderr, "eunha-loadgen: cannot create an event base\n");
        return -1;
    }
    lg.maxconns = cfg->concurrency;
    lg.conns = calloc(lg.maxconns, sizeof(*lg.conns));
    lg.arrival_ev = evtimer_new(lg.base, on_arrival_timer, &lg);
    lg.stop_ev = evtimer_new(lg.base, on_stop_timer, &lg);
    lg.drain_ev = evtimer_new(lg.base, on_drain_timeout, &lg);
    lg.sigint_ev = evsignal_new(lg.base, SIGINT, on_signal, &lg);
    lg.sigterm_ev = evsignal_new(lg.base, SIGTERM, on_signal, &lg);
    if (!lg.conns || !lg.arrival_ev || !lg.stop_ev || !lg.drain_ev || !lg.sigint_ev ||
        !lg.sigterm_ev) {
        fprintf(stderr, "eunha-loadgen: out of memory\n");
        return -1;
    }
    event_add(lg.sigint_ev, NULL);
    event_add(lg.sigterm_ev, NULL);
    /* A server that resets a connection must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    eu_lg_hist_init(&st->all);
    eu_lg_hist_init(&st->lag);
    for (int k = 0; k < EU_LG_KIND_COUNT; k++)
        eu_lg_hist_init(&st->kinds[k].hist);

    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    lg.start_ns = now_ns();
    lg.measure_ns = lg.start_ns + (uint64_t)(cfg->warmup * 1e9);
    lg.end_ns = cfg->duration > 0 ? lg.measure_ns + (uint64_t)(cfg->duration * 1e9) : UINT64_MAX;
    if (cfg->duration > 0) {
        struct timeval tv = tv_from_ns(lg.end_ns - lg.start_ns);
        evtimer_add(lg.stop_ev, &tv);
    }

    if (cfg->rate > 0) {
        lg.interval_ns = 1e9 / cfg->rate;
        lg.next_due_ns = lg.start_ns;
        schedule_arrival(&lg);
    } else {
        for (unsigned i = 0; i < cfg->concurrency; i++) {
            if (cfg->max_requests && lg.arrivals >= cfg->max_requests)
                break;
            arrive(&lg, now_ns());
        }
    }

    event_base_dispatch(lg.base);

    uint64_t t_end = now_ns();
    getrusage(RUSAGE_SELF, &ru1);
    st->wall_seconds = (double)(t_end - lg.start_ns) / 1e9;
    /* The window is the configured one, unless the run ended early (request
     * count reached, or a signal): then it ends at the last answer. */
    uint64_t wend = lg.end_ns;
    if (wend == UINT64_MAX || (lg.finished_ns && lg.finished_ns < wend && !lg.stopping))
        wend = lg.finished_ns ? lg.finished_ns : t_end;
    st->measured_seconds = wend > lg.measure_ns ? (double)(wend - lg.measure_ns) / 1e9 : 0;
    st->cpu_user = tv_seconds(ru1.ru_utime) - tv_seconds(ru0.ru_utime);
    st->cpu_sys = tv_seconds(ru1.ru_stime) - tv_seconds(ru0.ru_stime);
    if (!st->inflight_left)
        st->inflight_left = lg.inflight;

    for (size_t i = 0; i < lg.nconns; i++)
        evhttp_connection_free(lg.conns[i].evcon);
    while (lg.all) {
        struct pending *p = lg.all;
        lg.all = p->all_next;
        if (p->retry_ev)
            event_free(p->retry_ev);
        free(p);
    }
    free(lg.conns);
    event_free(lg.arrival_ev);
    event_free(lg.stop_ev);
    event_free(lg.drain_ev);
    event_free(lg.sigint_ev);
    event_free(lg.sigterm_ev);
    event_base_free(lg.base);
    return 0;
}
