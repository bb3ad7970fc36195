/*
 * The outbound HTTP client (include/eunha/fetch.h): libcurl's multi
 * interface on the event loop, with caps, a fair queue and host health.
 *
 * Lifetimes. A request (struct eu_fetch) is on the client's `all` list from
 * eu_fetch_start() until its callback is about to run or it is cancelled,
 * and in exactly one state:
 *   QUEUED   on its owner's FIFO; no easy handle yet, so waiting is cheap;
 *   ACTIVE   its easy handle is in the multi; it holds one slot of the
 *            client's max_requests and one of its host's
 *            max_requests_per_host;
 *   REFUSED  on the `refused` list, waiting for the zero-delay `deferred`
 *            event to report why (callbacks never run inside
 *            eu_fetch_start()).
 * Every change that frees a slot calls pump(), which starts waiting
 * requests round-robin across owners, so whenever the loop is idle nothing
 * is waiting that could run. That invariant is what lets eu_fetch_start()
 * start a request at once when there is room without jumping anyone.
 *
 * libcurl calls back into us only for sockets, timers, body data and
 * connects, never with a request's outcome; outcomes are read with
 * curl_multi_info_read() after curl_multi_socket_action() returns, so user
 * callbacks never run inside libcurl and may start or cancel requests.
 *
 * libcurl in Debian (libcurl4, OpenSSL flavour) is built with its threaded
 * resolver (AsynchDNS without c-ares): getaddrinfo runs on a short-lived
 * thread per lookup and the shared DNS cache spares most of them.
 */
#include "eunha/fetch.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "eunha/config.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/net.h"

/* A host name (253) with brackets or a port. */
#define HOST_KEY_MAX 272
#define DEFAULT_MAX_HOSTS 16384
#define OWNER_BUCKETS 1024
/* The per-host cap's AIMD (eu_fetch_host_cap()): one halving per this long,
 * so a burst of failures that all started under the old cap counts once. */
#define HOST_DECREASE_MS 1000
/* An answer this much slower than the host's usual, and at least
 * SLOW_MIN_MS, counts as congestion, as a failure does. */
#define SLOW_FACTOR 4
#define SLOW_MIN_MS 1000

enum state { ST_QUEUED, ST_ACTIVE, ST_REFUSED };

/* One [federation] hosts entry. */
struct host_map {
    char *name;       /* the host name, without a port */
    char *connect_to; /* "name::address:port", for CURLOPT_CONNECT_TO */
    struct sockaddr_storage sa;
    socklen_t salen;
};

struct eu_fetch {
    struct eu_fetch_client *c;
    enum state state;
    uint64_t owner;
    char host[HOST_KEY_MAX];
    char *url;
    char *body;
    size_t body_len;
    bool body_owned; /* copied here (freed with f), or the caller's */
    enum eu_fetch_method method;
    int max_redirects;
    size_t max_bytes;
    int timeout_ms;      /* eu_fetch_req.timeout_ms */
    uint64_t started_ms; /* when it became active */
    char *user_agent;
    struct curl_slist *headers;
    CURL *easy;
    bool https;
    bool allow_private; /* the client's setting when the transfer started */
    bool local;         /* to a tenant of this process, through its listener */
    bool trusted;       /* an operator-configured destination (eu_fetch_req.trusted) */
    char *aws_sigv4;    /* CURLOPT_AWS_SIGV4, or NULL */
    char *userpwd;      /* CURLOPT_USERPWD with aws_sigv4, or NULL */
    /* Where [federation] hosts sends it (salen 0: nowhere special). */
    struct sockaddr_storage mapped_sa;
    socklen_t mapped_salen;
    struct curl_slist *connect_to;
    bool too_large;
    bool refused_address;
    /* The answer's body as it arrives; never longer than max_bytes. */
    char *resp;
    size_t resp_len, resp_cap;
    /* Why a REFUSED request failed. */
    enum eu_fetch_error refused_error;
    const char *refused_message;
    char errbuf[CURL_ERROR_SIZE];
    eu_fetch_cb cb;
    void (*on_active)(void *arg); /* eu_fetch_req.on_active */
    void *arg;
    struct eu_fetch *prev, *next;   /* the client's `all` list */
    struct eu_fetch *qprev, *qnext; /* the owner's queue, or the refused list */
};

/* An owner with requests waiting; freed when its queue empties. */
struct owner {
    uint64_t id;
    struct eu_fetch *head, *tail;
    int nqueued;
    struct owner *ring_prev, *ring_next; /* owners with requests waiting */
    struct owner *hash_next;
};

/*
 * A remote host in use, failing, or with a history its cap adapts to
 * (eu_fetch_host_cap()). A host with none of that says nothing a missing
 * entry would not, so it is dropped at once; past max_hosts the idle host
 * used longest ago is forgotten (and starts afresh at the full cap).
 */
struct host {
    char *key;
    int active;
    unsigned failures;
    uint64_t first_failure_ms;
    /* The adaptive cap (eu_fetch_host_cap()): 0 until the host first
     * shrinks it; kept while below the maximum, as a failing host is. */
    double cap;
    uint64_t decreased_ms;
    double rtt_ms; /* moving average of its answers' time, 0: none yet */
    struct host *hash_next;
    struct host *lru_prev, *lru_next; /* idle failing hosts, oldest first */
};

/* A socket libcurl asked us to watch. */
struct sock {
    struct eu_fetch_client *c;
    struct event *ev;
    struct sock *prev, *next;
};

struct eu_fetch_client {
    struct event_base *base;
    struct eu_fetch_config cfg;
    CURLM *multi;
    CURLSH *share;
    struct event *timer;    /* libcurl's timeout */
    struct event *deferred; /* reports REFUSED requests */
    struct eu_fetch *all;
    struct eu_fetch *refused_head, *refused_tail;
    struct owner *owners[OWNER_BUCKETS];
    struct owner *ring; /* next owner pump() serves */
    struct host **hosts;
    size_t nbuckets, nhosts;
    struct host *lru_head, *lru_tail;
    struct sock *socks;
    int active, queued;
    bool freeing;
    unsigned long long requests_total;
    unsigned long long failures_total[EU_FETCH_QUEUE_FULL + 1];
    /* eu_fetch_client_set_local() */
    eu_fetch_is_local_cb is_local;
    void *local_arg;
    char local_host[64]; /* the listener's address, as CONNECT_TO writes it */
    int local_port;
    struct sockaddr_storage local_sa;
    socklen_t local_salen;
    /* [federation] hosts, parsed by eu_fetch_client_configure() */
    struct host_map *map;
    size_t nmap;
};

static const struct host_map *host_map_find(const struct eu_fetch_client *c, const char *key);

static uint64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static size_t
hash_str(const char *s)
{
    size_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

const char *
eu_fetch_error_str(enum eu_fetch_error err)
{
    static const char *const names[] = {
        "ok",  "timeout", "too_large",          "refused_address", "connect",    "tls",
        "dns", "network", "too_many_redirects", "bad_url",         "queue_full",
    };
    return (size_t)err < sizeof names / sizeof names[0] ? names[err] : "unknown";
}

void
eu_fetch_config_from(struct eu_fetch_config *cfg, const struct eu_config *config)
{
    *cfg = (struct eu_fetch_config){
        .allow_private_addresses = config->fed_allow_private_addresses,
        .allow_http = config->fed_allow_http,
        .max_requests = config->fed_max_requests,
        .max_requests_per_host = config->fed_max_requests_per_host,
        .max_queued_per_owner = config->fed_max_queued_per_tenant,
        .connect_timeout_s = config->fed_connect_timeout_s,
        .request_timeout_s = config->fed_request_timeout_s,
        .max_response_bytes = config->fed_max_response_bytes,
        .max_redirects = config->fed_max_redirects,
        .host_unavailable_after_s = config->fed_host_unavailable_after_s,
        .hosts = (const char *const *)config->fed_hosts,
        .n_hosts = config->n_fed_hosts,
    };
}

/* --- URLs ------------------------------------------------------------------ */

/* Writes url's scheme (lower-case) and host key. Returns 0 or -1. */
static int
url_split(const char *url, char *scheme, size_t schemelen, char *key, size_t keylen)
{
    CURLU *u = curl_url();
    char *s = NULL, *h = NULL, *p = NULL;
    int rc = -1;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &s, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK || !h[0])
        goto out;
    /* No port, or the scheme's own, gives CURLUE_NO_PORT: one key per host
     * however its URLs are written. */
    CURLUcode pc = curl_url_get(u, CURLUPART_PORT, &p, CURLU_NO_DEFAULT_PORT);
    if (pc != CURLUE_OK && pc != CURLUE_NO_PORT)
        goto out;
    int n = snprintf(key, keylen, "%s%s%s", h, p ? ":" : "", p ? p : "");
    if (n < 0 || (size_t)n >= keylen || strlen(s) >= schemelen)
        goto out;
    for (char *k = key; *k; k++)
        if (*k >= 'A' && *k <= 'Z')
            *k = (char)(*k - 'A' + 'a');
    for (size_t i = 0; s[i]; i++)
        scheme[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    scheme[strlen(s)] = '\0';
    rc = 0;
out:
    curl_free(s);
    curl_free(h);
    curl_free(p);
    curl_url_cleanup(u);
    return rc;
}

int
eu_fetch_host_of(const char *url, char *out, size_t outlen)
{
    char scheme[16];
    if (!url || !out || outlen == 0)
        return -1;
    return url_split(url, scheme, sizeof scheme, out, outlen);
}

/* --- hosts ----------------------------------------------------------------- */

static struct host **
host_slot(struct eu_fetch_client *c, const char *key)
{
    struct host **pp = &c->hosts[hash_str(key) & (c->nbuckets - 1)];
    while (*pp && strcmp((*pp)->key, key) != 0)
        pp = &(*pp)->hash_next;
    return pp;
}

static struct host *
host_find(struct eu_fetch_client *c, const char *key)
{
    return *host_slot(c, key);
}

static bool
host_in_lru(struct eu_fetch_client *c, struct host *h)
{
    return h->lru_prev || c->lru_head == h;
}

static void
lru_remove(struct eu_fetch_client *c, struct host *h)
{
    if (!host_in_lru(c, h))
        return;
    if (h->lru_prev)
        h->lru_prev->lru_next = h->lru_next;
    else
        c->lru_head = h->lru_next;
    if (h->lru_next)
        h->lru_next->lru_prev = h->lru_prev;
    else
        c->lru_tail = h->lru_prev;
    h->lru_prev = h->lru_next = NULL;
}

static void
host_delete(struct eu_fetch_client *c, struct host *h)
{
    lru_remove(c, h);
    struct host **pp = host_slot(c, h->key);
    *pp = h->hash_next;
    c->nhosts--;
    free(h->key);
    free(h);
}

static int
host_limit(const struct eu_fetch_client *c, const struct host *h)
{
    int max = c->cfg.max_requests_per_host;
    if (!h || h->cap <= 0 || h->cap >= max)
        return max;
    return h->cap < 1 ? 1 : (int)h->cap;
}

/* Drops an idle host with nothing to remember; files one that failed or
 * answered (its latency and cap) as the most recent idle one. */
static void
host_settle(struct eu_fetch_client *c, struct host *h)
{
    if (h->active > 0)
        return;
    if (h->failures == 0 && h->rtt_ms <= 0 && host_limit(c, h) >= c->cfg.max_requests_per_host) {
        host_delete(c, h);
        return;
    }
    lru_remove(c, h);
    h->lru_prev = c->lru_tail;
    if (c->lru_tail)
        c->lru_tail->lru_next = h;
    else
        c->lru_head = h;
    c->lru_tail = h;
}

static struct host *
host_get(struct eu_fetch_client *c, const char *key)
{
    struct host *h = host_find(c, key);
    if (h)
        return h;
    /* Only idle hosts are on the LRU list; hosts in use are never
     * forgotten, so the table may pass max_hosts by the requests in flight. */
    if (c->nhosts >= c->cfg.max_hosts && c->lru_head)
        host_delete(c, c->lru_head);
    h = eu_xcalloc(1, sizeof *h);
    h->key = eu_xstrdup(key);
    /* At the head of its chain: the slot found above may have gone. */
    struct host **bucket = &c->hosts[hash_str(key) & (c->nbuckets - 1)];
    h->hash_next = *bucket;
    *bucket = h;
    c->nhosts++;
    return h;
}

static bool
host_is_down(const struct eu_fetch_client *c, const struct host *h, uint64_t now)
{
    return h->failures > 0 &&
           now - h->first_failure_ms >= (uint64_t)c->cfg.host_unavailable_after_s * 1000;
}

bool
eu_fetch_host_available(struct eu_fetch_client *c, const char *host)
{
    const struct host *h = host_find(c, host);
    return !h || !host_is_down(c, h, now_ms());
}

void
eu_fetch_host_seen(struct eu_fetch_client *c, const char *host)
{
    struct host *h = host_find(c, host);
    if (!h)
        return;
    h->failures = 0;
    host_settle(c, h);
}

/* --- owners and the queue -------------------------------------------------- */

static struct owner **
owner_slot(struct eu_fetch_client *c, uint64_t id)
{
    struct owner **pp = &c->owners[(id * 0x9e3779b97f4a7c15ULL) >> 54];
    while (*pp && (*pp)->id != id)
        pp = &(*pp)->hash_next;
    return pp;
}

static void
enqueue(struct eu_fetch_client *c, struct eu_fetch *f)
{
    struct owner **pp = owner_slot(c, f->owner);
    struct owner *o = *pp;
    if (!o) {
        o = eu_xcalloc(1, sizeof *o);
        o->id = f->owner;
        *pp = o;
        /* A new owner joins at the end of the round: just before the one
         * served next. */
        if (!c->ring) {
            o->ring_prev = o->ring_next = o;
            c->ring = o;
        } else {
            o->ring_next = c->ring;
            o->ring_prev = c->ring->ring_prev;
            o->ring_prev->ring_next = o;
            c->ring->ring_prev = o;
        }
    }
    f->qprev = o->tail;
    f->qnext = NULL;
    if (o->tail)
        o->tail->qnext = f;
    else
        o->head = f;
    o->tail = f;
    o->nqueued++;
    c->queued++;
    f->state = ST_QUEUED;
}

static void
dequeue(struct eu_fetch_client *c, struct eu_fetch *f)
{
    struct owner **pp = owner_slot(c, f->owner);
    struct owner *o = *pp;
    if (f->qprev)
        f->qprev->qnext = f->qnext;
    else
        o->head = f->qnext;
    if (f->qnext)
        f->qnext->qprev = f->qprev;
    else
        o->tail = f->qprev;
    f->qprev = f->qnext = NULL;
    o->nqueued--;
    c->queued--;
    if (o->nqueued > 0)
        return;
    if (o->ring_next == o) {
        c->ring = NULL;
    } else {
        o->ring_prev->ring_next = o->ring_next;
        o->ring_next->ring_prev = o->ring_prev;
        if (c->ring == o)
            c->ring = o->ring_next;
    }
    *pp = o->hash_next;
    free(o);
}

static int
owner_queued(struct eu_fetch_client *c, uint64_t id)
{
    struct owner *o = *owner_slot(c, id);
    return o ? o->nqueued : 0;
}

static bool
host_has_room(struct eu_fetch_client *c, const char *key)
{
    const struct host *h = host_find(c, key);
    return !h || h->active < host_limit(c, h);
}

/* Congestion at h: halve its cap, once per HOST_DECREASE_MS. */
static void
host_decrease(struct eu_fetch_client *c, struct host *h, uint64_t now)
{
    if (h->decreased_ms && now - h->decreased_ms < HOST_DECREASE_MS)
        return;
    double cap = h->cap > 0 ? h->cap : (double)c->cfg.max_requests_per_host;
    h->cap = cap / 2 < 1 ? 1 : cap / 2;
    h->decreased_ms = now;
    eu_log_debug("fetch", "'%s' is slow or failing: at most %d requests at once", h->key,
                 host_limit(c, h));
}

/* An answer in ms: the cap grows by one per window of them, unless the
 * answer took far longer than the host's usual. */
static void
host_answered(struct eu_fetch_client *c, struct host *h, uint64_t ms, uint64_t now)
{
    double max = (double)c->cfg.max_requests_per_host;
    if (h->rtt_ms > 0 && (double)ms > SLOW_FACTOR * h->rtt_ms && ms >= SLOW_MIN_MS)
        host_decrease(c, h, now);
    else if (h->cap > 0 && h->cap < max)
        h->cap = h->cap + 1 / h->cap > max ? max : h->cap + 1 / h->cap;
    h->rtt_ms = h->rtt_ms > 0 ? 0.8 * h->rtt_ms + 0.2 * (double)ms : (double)ms;
}

int
eu_fetch_host_cap(struct eu_fetch_client *c, const char *host)
{
    return host_limit(c, host_find(c, host));
}

static void refuse(struct eu_fetch_client *c, struct eu_fetch *f, enum eu_fetch_error err,
                   const char *message);
static int activate(struct eu_fetch_client *c, struct eu_fetch *f);

/*
 * Starts waiting requests while there is room: one per owner in turn, each
 * owner's oldest whose host has room. Scanning an owner's queue past
 * requests for busy hosts costs at most max_queued_per_owner steps.
 */
static void
pump(struct eu_fetch_client *c)
{
    while (!c->freeing && c->ring && c->active < c->cfg.max_requests) {
        struct owner *first = c->ring, *o = first;
        struct eu_fetch *f = NULL;
        do {
            for (f = o->head; f && !host_has_room(c, f->host); f = f->qnext)
                ;
            o = o->ring_next;
        } while (!f && o != first);
        if (!f)
            return;
        /* The next round starts after the owner just served. */
        c->ring = o;
        dequeue(c, f);
        if (activate(c, f) < 0)
            refuse(c, f, EU_FETCH_CONNECT, "cannot start the transfer");
        else if (f->on_active)
            f->on_active(f->arg);
    }
}

/* --- finishing ------------------------------------------------------------- */

static void
all_unlink(struct eu_fetch_client *c, struct eu_fetch *f)
{
    if (f->prev)
        f->prev->next = f->next;
    else
        c->all = f->next;
    if (f->next)
        f->next->prev = f->prev;
    f->prev = f->next = NULL;
}

static void
fetch_free(struct eu_fetch *f)
{
    if (f->easy)
        curl_easy_cleanup(f->easy);
    curl_slist_free_all(f->headers);
    curl_slist_free_all(f->connect_to);
    free(f->url);
    if (f->body_owned)
        free(f->body);
    free(f->user_agent);
    free(f->aws_sigv4);
    if (f->userpwd)
        explicit_bzero(f->userpwd, strlen(f->userpwd));
    free(f->userpwd);
    free(f->resp);
    free(f);
}

static void
refuse(struct eu_fetch_client *c, struct eu_fetch *f, enum eu_fetch_error err, const char *message)
{
    f->state = ST_REFUSED;
    f->refused_error = err;
    f->refused_message = message;
    f->qnext = NULL;
    f->qprev = c->refused_tail;
    if (c->refused_tail)
        c->refused_tail->qnext = f;
    else
        c->refused_head = f;
    c->refused_tail = f;
    event_active(c->deferred, EV_TIMEOUT, 1);
}

/* What resp->body points to when there was no body: never freed. */
static const char empty_body[1];

static void
report(struct eu_fetch_client *c, struct eu_fetch *f, struct eu_fetch_resp *resp)
{
    c->requests_total++;
    if (resp->error != EU_FETCH_OK)
        c->failures_total[resp->error]++;
    resp->body = f->resp ? f->resp : (char *)empty_body;
    resp->body_len = f->resp ? f->resp_len : 0;
    all_unlink(c, f);
    f->cb(resp, f->arg);
    /* A body the callback took is no longer ours. */
    if (resp->body != f->resp)
        f->resp = NULL;
    fetch_free(f);
}

static void
on_deferred(evutil_socket_t fd, short what, void *arg)
{
    struct eu_fetch_client *c = arg;
    (void)fd;
    (void)what;
    struct eu_fetch *f;
    while ((f = c->refused_head)) {
        c->refused_head = f->qnext;
        if (c->refused_head)
            c->refused_head->qprev = NULL;
        else
            c->refused_tail = NULL;
        f->qnext = f->qprev = NULL;
        struct eu_fetch_resp resp = {
            .error = f->refused_error,
            .effective_url = f->url,
            .message = f->refused_message,
        };
        report(c, f, &resp);
    }
}

static enum eu_fetch_error
classify(const struct eu_fetch *f, CURLcode rc)
{
    switch (rc) {
    case CURLE_OK:
        return EU_FETCH_OK;
    case CURLE_OPERATION_TIMEDOUT:
        return EU_FETCH_TIMEOUT;
    case CURLE_FILESIZE_EXCEEDED:
        return EU_FETCH_TOO_LARGE;
    case CURLE_WRITE_ERROR:
        return f->too_large ? EU_FETCH_TOO_LARGE : EU_FETCH_NETWORK;
    case CURLE_COULDNT_CONNECT:
        return f->refused_address ? EU_FETCH_REFUSED_ADDRESS : EU_FETCH_CONNECT;
    case CURLE_COULDNT_RESOLVE_HOST:
        return EU_FETCH_DNS;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_USE_SSL_FAILED:
        return EU_FETCH_TLS;
    case CURLE_TOO_MANY_REDIRECTS:
        return EU_FETCH_TOO_MANY_REDIRECTS;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
        return EU_FETCH_BAD_URL;
    default:
        return EU_FETCH_NETWORK;
    }
}

/* No answer, or a server error: what Mastodon counts against a domain. */
static bool
is_host_failure(const struct eu_fetch_resp *r)
{
    switch (r->error) {
    case EU_FETCH_OK:
        return r->status >= 500;
    case EU_FETCH_TIMEOUT:
    case EU_FETCH_CONNECT:
    case EU_FETCH_TLS:
    case EU_FETCH_DNS:
    case EU_FETCH_NETWORK:
        return true;
    default:
        return false;
    }
}

/* Gives back f's slots; with update_health, counts its outcome. */
static void
release_slots(struct eu_fetch_client *c, struct eu_fetch *f, const struct eu_fetch_resp *r)
{
    curl_multi_remove_handle(c->multi, f->easy);
    c->active--;
    struct host *h = host_find(c, f->host);
    if (!h)
        return;
    h->active--;
    uint64_t now = now_ms();
    if (r && is_host_failure(r)) {
        if (h->failures++ == 0)
            h->first_failure_ms = now;
        host_decrease(c, h, now);
    } else if (r && r->error == EU_FETCH_OK) {
        h->failures = 0;
        host_answered(c, h, now - f->started_ms, now);
    }
    host_settle(c, h);
}

static void
finish_active(struct eu_fetch_client *c, struct eu_fetch *f, CURLcode rc)
{
    struct eu_fetch_resp resp = {.error = classify(f, rc)};
    char *ct = NULL, *loc = NULL, *eff = NULL;
    curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, &resp.status);
    curl_easy_getinfo(f->easy, CURLINFO_CONTENT_TYPE, &ct);
    curl_easy_getinfo(f->easy, CURLINFO_REDIRECT_URL, &loc);
    curl_easy_getinfo(f->easy, CURLINFO_EFFECTIVE_URL, &eff);
    resp.content_type = ct;
    resp.location = loc;
    resp.effective_url = eff ? eff : f->url;
    if (resp.error == EU_FETCH_TOO_LARGE)
        resp.message = "response body over the size cap";
    else if (resp.error == EU_FETCH_REFUSED_ADDRESS)
        resp.message = "the host resolves to an address outbound requests may not reach";
    else if (resp.error != EU_FETCH_OK)
        resp.message = f->errbuf[0] ? f->errbuf : curl_easy_strerror(rc);
    if (resp.error != EU_FETCH_OK)
        eu_log_debug("fetch", "cannot fetch '%s': %s: %s", f->url, eu_fetch_error_str(resp.error),
                     resp.message);
    release_slots(c, f, &resp);
    /* The strings from curl_easy_getinfo live in the easy handle, which
     * fetch_free() cleans up after the callback. */
    report(c, f, &resp);
}

static void
check_done(struct eu_fetch_client *c)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(c->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        char *priv = NULL;
        CURLcode rc = m->data.result;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
        finish_active(c, (struct eu_fetch *)priv, rc);
        pump(c);
    }
}

/* --- libcurl and libevent -------------------------------------------------- */

static void
on_sock_event(evutil_socket_t fd, short what, void *arg)
{
    struct eu_fetch_client *c = ((struct sock *)arg)->c;
    int flags = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
    int running;
    /* May free arg (CURL_POLL_REMOVE): not used after this. */
    curl_multi_socket_action(c->multi, fd, flags, &running);
    check_done(c);
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct eu_fetch_client *c = arg;
    (void)fd;
    (void)what;
    int running;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(c);
}

static void
sock_free(struct eu_fetch_client *c, struct sock *s)
{
    event_free(s->ev);
    if (s->prev)
        s->prev->next = s->next;
    else
        c->socks = s->next;
    if (s->next)
        s->next->prev = s->prev;
    free(s);
}

static int
on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    struct eu_fetch_client *c = userp;
    struct sock *s = socketp;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        if (s)
            sock_free(c, s);
        return 0;
    }
    if (!s) {
        s = eu_xcalloc(1, sizeof *s);
        s->c = c;
        s->next = c->socks;
        if (c->socks)
            c->socks->prev = s;
        c->socks = s;
        curl_multi_assign(c->multi, fd, s);
    } else {
        event_free(s->ev);
    }
    short kind =
        EV_PERSIST | (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0);
    s->ev = event_new(c->base, fd, kind, on_sock_event, s);
    event_add(s->ev, NULL);
    return 0;
}

/* libcurl wants to be called back in timeout_ms (-1: never). Even 0 goes
 * through the loop: calling libcurl from inside its own callback is not
 * allowed. */
static int
on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
    struct eu_fetch_client *c = userp;
    (void)multi;
    if (timeout_ms < 0) {
        evtimer_del(c->timer);
        return 0;
    }
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(c->timer, &tv);
    return 0;
}

/* Whether sa is want (address and port); false when want_len is 0. */
static bool
same_sockaddr(const struct sockaddr_storage *want, socklen_t want_len, const struct sockaddr *sa,
              size_t len)
{
    if (!want_len || sa->sa_family != want->ss_family)
        return false;
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *a = (const void *)sa, *b = (const void *)want;
        return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
    }
    if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *a = (const void *)sa, *b = (const void *)want;
        return a->sin6_port == b->sin6_port &&
               memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(a->sin6_addr)) == 0;
    }
    return false;
}

/*
 * Runs for every address libcurl is about to connect to, after resolving:
 * the one place that sees the address actually used, so a name that
 * resolves to a public address when checked and a private one when used
 * (DNS rebinding) cannot get past it.
 */
static curl_socket_t
on_opensocket(void *clientp, curlsocktype purpose, struct curl_sockaddr *addr)
{
    struct eu_fetch *f = clientp;
    (void)purpose;
    if (!f->allow_private && !eu_sockaddr_is_public(&addr->addr, addr->addrlen) &&
        !(f->local &&
          same_sockaddr(&f->c->local_sa, f->c->local_salen, &addr->addr, addr->addrlen)) &&
        !same_sockaddr(&f->mapped_sa, f->mapped_salen, &addr->addr, addr->addrlen)) {
        f->refused_address = true;
        return CURL_SOCKET_BAD;
    }
    return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

static size_t
on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
    struct eu_fetch *f = userdata;
    size_t n = size * nmemb;
    if (n > f->max_bytes - f->resp_len) {
        /* Returning less than n makes libcurl abort the transfer. */
        f->too_large = true;
        return 0;
    }
    if (f->resp_len + n + 1 > f->resp_cap) {
        size_t cap = f->resp_cap ? f->resp_cap : 4096;
        while (cap < f->resp_len + n + 1)
            cap *= 2;
        if (cap > f->max_bytes + 1)
            cap = f->max_bytes + 1;
        f->resp = eu_xrealloc(f->resp, cap);
        f->resp_cap = cap;
    }
    memcpy(f->resp + f->resp_len, data, n);
    f->resp_len += n;
    f->resp[f->resp_len] = '\0';
    return n;
}

/* Puts f's transfer into the multi; returns 0, or -1 (nothing changed). */
static int
activate(struct eu_fetch_client *c, struct eu_fetch *f)
{
    const struct eu_fetch_config *cfg = &c->cfg;
    CURL *e = curl_easy_init();
    if (!e)
        return -1;
    const char *protocols = cfg->allow_http || f->trusted ? "http,https" : "https";
    int redirects = f->max_redirects < cfg->max_redirects ? f->max_redirects : cfg->max_redirects;
    if (redirects < 0)
        redirects = 0;
    size_t max_bytes = cfg->max_response_bytes;
    if (f->max_bytes && f->max_bytes < max_bytes)
        max_bytes = f->max_bytes;
    f->max_bytes = max_bytes;
    f->allow_private = cfg->allow_private_addresses || f->trusted;
    f->local = !f->trusted && c->is_local && c->local_salen && c->is_local(f->host, c->local_arg);
    if (f->local) {
        /* A tenant of this process: its own listener, in plain http. The
         * Host header and any signature still name the URL as given. */
        char name[HOST_KEY_MAX];
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(f->host, ":"), f->host);
        if (f->host[0] == '[')
            snprintf(name, sizeof(name), "%.*s", (int)strcspn(f->host, "]") + 1, f->host);
        char *line = eu_xasprintf("%s::%s:%d", name, c->local_host, c->local_port);
        f->connect_to = curl_slist_append(NULL, line);
        free(line);
        curl_easy_setopt(e, CURLOPT_CONNECT_TO, f->connect_to);
        if (strncmp(f->url, "https://", 8) == 0)
            memmove(f->url + 4, f->url + 5, strlen(f->url + 5) + 1);
        protocols = "http";
        f->https = false;
    } else {
        const struct host_map *m = host_map_find(c, f->host);
        if (m) {
            f->connect_to = curl_slist_append(NULL, m->connect_to);
            curl_easy_setopt(e, CURLOPT_CONNECT_TO, f->connect_to);
            memcpy(&f->mapped_sa, &m->sa, sizeof m->sa);
            f->mapped_salen = m->salen;
        }
    }
    curl_easy_setopt(e, CURLOPT_URL, f->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)f);
    curl_easy_setopt(e, CURLOPT_SHARE, c->share);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, protocols);
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, redirects > 0 ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, (long)redirects);
    long connect_ms = (long)cfg->connect_timeout_s * 1000;
    long total_ms = (long)cfg->request_timeout_s * 1000;
    if (f->timeout_ms > 0 && f->timeout_ms < total_ms)
        total_ms = f->timeout_ms;
    if (connect_ms > total_ms)
        connect_ms = total_ms;
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, total_ms);
    /* Stops at a too-large Content-Length before any body is read. */
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_bytes);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_opensocket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, f);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, f->headers);
    curl_easy_setopt(e, CURLOPT_USERAGENT, f->user_agent);
    /* Compressed answers are counted against the cap once decoded. */
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    /* http_proxy and friends in the environment would send every request,
     * and the address check, to the proxy. */
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    /* Over TLS, ALPN tells at the handshake whether a connection being set
     * up can carry this request too (HTTP/2), so waiting for it costs
     * little. Over plain http libcurl would learn that only from the first
     * response, and a slow one would hold this request up. */
    if (f->https)
        curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, f->errbuf);
    if (f->method == EU_FETCH_POST || f->method == EU_FETCH_PUT) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)f->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, f->body ? f->body : "");
    }
    /* A body given as POSTFIELDS under another verb: libcurl still sends it
     * (and signs it for SigV4), which CURLOPT_UPLOAD would make a read
     * callback's job. */
    if (f->method == EU_FETCH_PUT)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
    else if (f->method == EU_FETCH_DELETE)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
    if (f->aws_sigv4) {
        curl_easy_setopt(e, CURLOPT_AWS_SIGV4, f->aws_sigv4);
        curl_easy_setopt(e, CURLOPT_USERPWD, f->userpwd ? f->userpwd : "");
    }
    if (curl_multi_add_handle(c->multi, e) != CURLM_OK) {
        curl_easy_cleanup(e);
        return -1;
    }
    f->easy = e;
    f->state = ST_ACTIVE;
    f->started_ms = now_ms();
    c->active++;
    struct host *h = host_get(c, f->host);
    lru_remove(c, h);
    h->active++;
    return 0;
}

/* --- the public calls ------------------------------------------------------ */

struct eu_fetch_client *
eu_fetch_client_new(struct event_base *base, const struct eu_fetch_config *cfg)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        eu_log_error("fetch", "cannot initialise libcurl");
        return NULL;
    }
    struct eu_fetch_client *c = eu_xcalloc(1, sizeof *c);
    c->base = base;
    c->multi = curl_multi_init();
    c->share = curl_share_init();
    if (!c->multi || !c->share) {
        eu_log_error("fetch", "cannot create libcurl handles");
        curl_multi_cleanup(c->multi);
        curl_share_cleanup(c->share);
        free(c);
        curl_global_cleanup();
        return NULL;
    }
    /* One thread uses the share, so it needs no lock callbacks. */
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    /* libcurl's default since 7.62, said here: requests to a host that
     * speaks HTTP/2 share its connection, so a host's cap counts streams,
     * not sockets. */
    curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    c->timer = evtimer_new(base, on_timer, c);
    c->deferred = event_new(base, -1, 0, on_deferred, c);
    eu_fetch_client_configure(c, cfg);
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    eu_log_debug("fetch", "libcurl %s, %s resolver", v->version,
                 v->ares                                  ? "c-ares"
                 : (v->features & CURL_VERSION_ASYNCHDNS) ? "threaded"
                                                          : "blocking");
    /* A blocking resolver would stop the loop for every lookup. */
    if (!(v->features & CURL_VERSION_ASYNCHDNS))
        eu_log_warn("fetch", "libcurl %s resolves names synchronously: lookups block the loop",
                    v->version);
    return c;
}

static void
host_map_clear(struct eu_fetch_client *c)
{
    for (size_t i = 0; i < c->nmap; i++) {
        free(c->map[i].name);
        free(c->map[i].connect_to);
    }
    free(c->map);
    c->map = NULL;
    c->nmap = 0;
}

/* Parses the "name=address:port" entries (checked when the config was read;
 * a bad one is logged and skipped). */
static void
host_map_set(struct eu_fetch_client *c, const char *const *hosts, size_t n)
{
    host_map_clear(c);
    c->map = n ? eu_xcalloc(n, sizeof *c->map) : NULL;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(hosts[i], '=');
        char addr[64], port[16];
        int p;
        struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
                                 .ai_socktype = SOCK_STREAM};
        struct addrinfo *ai = NULL;
        if (!eq || eu_hostport_split(eq + 1, addr, sizeof addr, &p) < 0 ||
            snprintf(port, sizeof port, "%d", p) < 0 || getaddrinfo(addr, port, &hints, &ai) ||
            !ai) {
            eu_log_error("fetch", "ignoring [federation] hosts entry '%s'", hosts[i]);
            continue;
        }
        struct host_map *m = &c->map[c->nmap++];
        m->name = eu_xasprintf("%.*s", (int)(eq - hosts[i]), hosts[i]);
        m->connect_to =
            eu_xasprintf(strchr(addr, ':') ? "%s::[%s]:%d" : "%s::%s:%d", m->name, addr, p);
        memcpy(&m->sa, ai->ai_addr, ai->ai_addrlen);
        m->salen = ai->ai_addrlen;
        freeaddrinfo(ai);
    }
}

/* The entry for host key ("name" or "name:port"), or NULL. */
static const struct host_map *
host_map_find(const struct eu_fetch_client *c, const char *key)
{
    size_t n = strcspn(key, ":");
    for (size_t i = 0; i < c->nmap; i++)
        if (strlen(c->map[i].name) == n && strncasecmp(c->map[i].name, key, n) == 0)
            return &c->map[i];
    return NULL;
}

void
eu_fetch_client_configure(struct eu_fetch_client *c, const struct eu_fetch_config *cfg)
{
    size_t old_max = c->cfg.max_hosts;
    c->cfg = *cfg;
    host_map_set(c, cfg->hosts, cfg->n_hosts);
    /* Borrowed from the caller: not kept. */
    c->cfg.hosts = NULL;
    c->cfg.n_hosts = 0;
    if (c->cfg.max_hosts == 0)
        c->cfg.max_hosts = DEFAULT_MAX_HOSTS;
    if (c->cfg.max_requests < 1)
        c->cfg.max_requests = 1;
    if (c->cfg.max_requests_per_host < 1)
        c->cfg.max_requests_per_host = 1;
    /* Idle kept-alive connections, all hosts together. */
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)c->cfg.max_requests);
    if (!c->hosts || c->cfg.max_hosts != old_max) {
        size_t n = 64;
        while (n < c->cfg.max_hosts && n < ((size_t)1 << 20))
            n *= 2;
        struct host **buckets = eu_xcalloc(n, sizeof *buckets);
        for (size_t i = 0; c->hosts && i < c->nbuckets; i++) {
            for (struct host *h = c->hosts[i], *next; h; h = next) {
                next = h->hash_next;
                size_t b = hash_str(h->key) & (n - 1);
                h->hash_next = buckets[b];
                buckets[b] = h;
            }
        }
        free(c->hosts);
        c->hosts = buckets;
        c->nbuckets = n;
    }
    /* Larger caps may let waiting requests start. */
    pump(c);
}

/* Stops f wherever it is, without its callback or a pump. */
static void
drop(struct eu_fetch_client *c, struct eu_fetch *f)
{
    switch (f->state) {
    case ST_QUEUED:
        dequeue(c, f);
        break;
    case ST_ACTIVE:
        release_slots(c, f, NULL);
        break;
    case ST_REFUSED:
        if (f->qprev)
            f->qprev->qnext = f->qnext;
        else
            c->refused_head = f->qnext;
        if (f->qnext)
            f->qnext->qprev = f->qprev;
        else
            c->refused_tail = f->qprev;
        break;
    }
    all_unlink(c, f);
    fetch_free(f);
}

bool
eu_fetch_waiting(const struct eu_fetch *f)
{
    return f && f->state == ST_QUEUED;
}

void
eu_fetch_cancel(struct eu_fetch *f)
{
    if (!f)
        return;
    struct eu_fetch_client *c = f->c;
    drop(c, f);
    pump(c);
}

size_t
eu_fetch_cancel_owner(struct eu_fetch_client *c, uint64_t owner)
{
    size_t n = 0;
    if (!c)
        return 0;
    /* No pump until the end, so none of owner's waiting requests starts
     * only to be cancelled. */
    bool was = c->freeing;
    c->freeing = true;
    for (struct eu_fetch *f = c->all, *next; f; f = next) {
        next = f->next;
        if (f->owner == owner) {
            drop(c, f);
            n++;
        }
    }
    c->freeing = was;
    pump(c);
    return n;
}

void
eu_fetch_client_free(struct eu_fetch_client *c)
{
    if (!c)
        return;
    c->freeing = true;
    while (c->all)
        drop(c, c->all);
    event_free(c->deferred);
    event_free(c->timer);
    curl_multi_cleanup(c->multi);
    /* Sockets libcurl did not tell us to forget before it went. */
    while (c->socks)
        sock_free(c, c->socks);
    curl_share_cleanup(c->share);
    for (size_t i = 0; i < c->nbuckets; i++) {
        for (struct host *h = c->hosts[i], *next; h; h = next) {
            next = h->hash_next;
            free(h->key);
            free(h);
        }
    }
    free(c->hosts);
    host_map_clear(c);
    free(c);
    curl_global_cleanup();
}

struct eu_fetch *
eu_fetch_start(struct eu_fetch_client *c, const struct eu_fetch_req *req, eu_fetch_cb cb, void *arg)
{
    struct eu_fetch *f = eu_xcalloc(1, sizeof *f);
    f->c = c;
    f->owner = req->owner;
    f->method = req->method;
    f->url = eu_xstrdup(req->url ? req->url : "");
    f->max_redirects = req->max_redirects;
    f->max_bytes = req->max_bytes;
    f->timeout_ms = req->timeout_ms;
    f->cb = cb;
    f->on_active = req->on_active;
    f->arg = arg;
    f->trusted = req->trusted;
    f->aws_sigv4 = eu_xstrdup(req->aws_sigv4);
    f->userpwd = eu_xstrdup(req->userpwd);
    if (req->body && req->body_borrowed) {
        f->body = (char *)req->body;
        f->body_len = req->body_len;
    } else if (req->body) {
        f->body = eu_xmalloc(req->body_len + 1);
        memcpy(f->body, req->body, req->body_len);
        f->body[req->body_len] = '\0';
        f->body_len = req->body_len;
        f->body_owned = true;
    }
    bool has_ua = false, has_expect = false;
    for (const char *const *h = req->headers; h && *h; h++) {
        has_ua = has_ua || strncasecmp(*h, "User-Agent:", 11) == 0;
        has_expect = has_expect || strncasecmp(*h, "Expect:", 7) == 0;
        f->headers = curl_slist_append(f->headers, *h);
    }
    /* libcurl would wait for a 100 Continue before a large POST body; the
     * inboxes we post to do not send one. */
    if ((f->method == EU_FETCH_POST || f->method == EU_FETCH_PUT) && !has_expect)
        f->headers = curl_slist_append(f->headers, "Expect:");
    if (!has_ua)
        f->user_agent = req->ua_base ? eu_xasprintf("eunha/" EUNHA_VERSION " (+%s)", req->ua_base)
                                     : eu_xstrdup("eunha/" EUNHA_VERSION);
    f->next = c->all;
    if (c->all)
        c->all->prev = f;
    c->all = f;

    char scheme[16];
    if (url_split(f->url, scheme, sizeof scheme, f->host, sizeof f->host) < 0) {
        refuse(c, f, EU_FETCH_BAD_URL, "the URL does not parse or has no host");
    } else if (!(f->https = strcmp(scheme, "https") == 0) &&
               !(strcmp(scheme, "http") == 0 && (c->cfg.allow_http || f->trusted))) {
        refuse(c, f, EU_FETCH_BAD_URL, "only https URLs may be fetched");
    } else if (c->active < c->cfg.max_requests && host_has_room(c, f->host)) {
        /* Nothing waiting could start now (pump() ran after every change),
         * so starting this one jumps no one. */
        if (activate(c, f) < 0)
            refuse(c, f, EU_FETCH_CONNECT, "cannot start the transfer");
    } else if (owner_queued(c, f->owner) >= c->cfg.max_queued_per_owner) {
        refuse(c, f, EU_FETCH_QUEUE_FULL, "too many outbound requests waiting for this tenant");
    } else {
        enqueue(c, f);
    }
    return f;
}

void
eu_fetch_client_set_local(struct eu_fetch_client *c, eu_fetch_is_local_cb is_local, void *arg,
                          const char *listen_addr)
{
    char host[64];
    int port;
    c->is_local = NULL;
    c->local_salen = 0;
    if (!is_local || !listen_addr || eu_hostport_split(listen_addr, host, sizeof(host), &port) < 0)
        return;
    /* A listener on every address is reached on loopback. */
    if (strcmp(host, "0.0.0.0") == 0 || !*host)
        snprintf(host, sizeof(host), "127.0.0.1");
    else if (strcmp(host, "::") == 0)
        snprintf(host, sizeof(host), "::1");
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
                             .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    if (getaddrinfo(host, portstr, &hints, &ai) != 0 || !ai) {
        eu_log_error("fetch", "cannot map tenants to listener '%s'", listen_addr);
        return;
    }
    memcpy(&c->local_sa, ai->ai_addr, ai->ai_addrlen);
    c->local_salen = ai->ai_addrlen;
    freeaddrinfo(ai);
    if (strchr(host, ':'))
        snprintf(c->local_host, sizeof(c->local_host), "[%.60s]", host);
    else
        snprintf(c->local_host, sizeof(c->local_host), "%s", host);
    c->local_port = port;
    c->is_local = is_local;
    c->local_arg = arg;
}

char *
eu_fetch_resp_take_body(struct eu_fetch_resp *resp, size_t *len)
{
    char *body = resp->body;
    if (len)
        *len = resp->body_len;
    resp->body = NULL;
    resp->body_len = 0;
    if (!body || body == empty_body)
        return eu_xstrdup("");
    return body;
}

void
eu_fetch_client_stats(struct eu_fetch_client *c, struct eu_fetch_stats *st)
{
    memset(st, 0, sizeof *st);
    st->in_flight = c->active;
    st->queued = c->queued;
    st->hosts = c->nhosts;
    uint64_t now = now_ms();
    for (size_t i = 0; i < c->nbuckets; i++)
        for (const struct host *h = c->hosts[i]; h; h = h->hash_next)
            st->hosts_unavailable += host_is_down(c, h, now);
    st->requests_total = c->requests_total;
    memcpy(st->failures_total, c->failures_total, sizeof st->failures_total);
}
