/*
 * The process's outbound HTTP client (src/outbound/), which every request
 * to another server goes through: fetches of remote actors and objects,
 * deliveries to inboxes, the S3 store's uploads. It knows no protocol above
 * HTTP: a caller brings its own headers (ap/ its signatures, media/ its
 * AWS credentials), so federation and the media store stand on it alike.
 *
 * One client per process, on the event loop: libcurl's multi interface with
 * its sockets and timer watched by libevent, so no request blocks the loop
 * or has a thread of its own (name resolution runs on libcurl's resolver
 * threads). One libcurl share handle keeps the DNS cache, TLS sessions and
 * open connections, so requests to a host reuse a kept-alive connection.
 *
 * What it guards:
 *   - Addresses: every address a name resolves to is checked just before
 *     connecting (eu_sockaddr_is_public in eunha/net.h); loopback, private,
 *     link-local and the like are refused unless allow_private_addresses.
 *     Checking at connect time, not before resolving, closes DNS rebinding.
 *   - Schemes: https only (redirects too) unless allow_http.
 *   - Size and time: a body past max_response_bytes is cut and the request
 *     fails; connect and whole-transfer timeouts.
 *   - Load: at most max_requests in flight for the process and
 *     max_requests_per_host per remote host. Requests past a cap wait in a
 *     queue per owner (tenant), served round-robin across owners, so one
 *     tenant's burst waits behind itself; an owner's queue is bounded.
 *   - Host health: consecutive failures per remote host, shared by every
 *     tenant; eu_fetch_host_available() says when a host has failed for
 *     longer than host_unavailable_after_s.
 *
 * Everything here runs on the loop thread only.
 */
#ifndef EUNHA_FETCH_H
#define EUNHA_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct eu_config;
struct eu_fetch_client;
struct eu_fetch;

struct eu_fetch_config {
    bool allow_private_addresses; /* connect to loopback, private, link-local... */
    bool allow_http;              /* http:// as well as https:// */
    int max_requests;             /* in flight for the whole client, >= 1 */
    int max_requests_per_host;    /* in flight to one host, >= 1 */
    int max_queued_per_owner;     /* waiting per owner; past it a start fails at once */
    int connect_timeout_s;
    int request_timeout_s;     /* the whole transfer, redirects included */
    size_t max_response_bytes; /* body cap; a request may ask for less */
    int max_redirects;         /* the most any request may follow */
    int host_unavailable_after_s;
    /* Hosts whose health is remembered. Past it, healthy idle hosts are
     * forgotten first (least recently used), then failing ones. 0: 16384. */
    size_t max_hosts;
    /* [federation] hosts: "name=address:port" (an IP literal) entries; a
     * URL on name connects to address:port, its scheme, Host and any
     * signature unchanged, and that address passes the private-address
     * guard. Borrowed: read by eu_fetch_client_new/configure only. */
    const char *const *hosts;
    size_t n_hosts;
};

/* PUT and DELETE are for object stores (src/media/store_s3.c); a PUT
 * sends body like a POST. */
enum eu_fetch_method { EU_FETCH_GET, EU_FETCH_POST, EU_FETCH_PUT, EU_FETCH_DELETE };

struct eu_fetch_req {
    enum eu_fetch_method method;
    const char *url;
    /* "Name: value" lines (Signature, Date, Digest, Accept, Content-Type,
     * ...), NULL-terminated, or NULL. A User-Agent line here replaces the
     * client's. */
    const char *const *headers;
    const char *body; /* POST body, body_len bytes (may hold NULs); or NULL */
    size_t body_len;
    /* body stays valid until the callback (or eu_fetch_cancel_owner()):
     * sent from where it is rather than copied, for uploads of megabytes
     * that would otherwise be copied on the loop. */
    bool body_borrowed;
    /* Who the request is for (a tenant id; 0 for the process itself): the
     * unit of fairness, per-owner queue bound and eu_fetch_cancel_owner(). */
    uint64_t owner;
    /* Redirects to follow, at most the client's max_redirects. 0 for a
     * signed request: its signature covers the URL, so the caller gets the
     * 3xx and its Location and signs a new request itself. */
    int max_redirects;
    size_t max_bytes; /* body cap for this request; 0 or more than the client's: the client's */
    /* Time cap for this request (connect and whole transfer), in ms; 0 or
     * more than the client's: the client's. For a fetch some other work
     * waits on (an inbox delivery's key) and should give up early. */
    int timeout_ms;
    /* The tenant's base URL for the User-Agent ("eunha/VERSION
     * (+https://a.example/)"), or NULL for "eunha/VERSION". */
    const char *ua_base;
    /*
     * For an operator-configured destination (the S3 endpoint of [media.s3]),
     * not a URL that came from the network. trusted skips the
     * private-address guard and allows http whatever [federation] says:
     * such endpoints are often on loopback or a private network.
     * aws_sigv4 ("aws:amz:us-east-1:s3", CURLOPT_AWS_SIGV4) signs the
     * request with userpwd ("access_key:secret_key") as AWS Signature V4.
     * All NULL/false for federation requests. Copied like the rest.
     */
    bool trusted;
    const char *aws_sigv4;
    const char *userpwd;
    /*
     * Called (with the callback's arg) when a request that had to wait in
     * its owner's queue (eu_fetch_waiting()) gets its connection slot, from
     * inside the client: it may count, not start or cancel requests. Lets a
     * delivery hold its tenant's room only while it is on the wire. NULL:
     * not told.
     */
    void (*on_active)(void *arg);
};

enum eu_fetch_error {
    EU_FETCH_OK,              /* an answer came; status says which (3xx, 4xx, 5xx too) */
    EU_FETCH_TIMEOUT,         /* connect or whole-transfer timeout */
    EU_FETCH_TOO_LARGE,       /* body longer than the cap */
    EU_FETCH_REFUSED_ADDRESS, /* the host resolved only to addresses we may not reach */
    EU_FETCH_CONNECT,         /* no connection (refused, unreachable) */
    EU_FETCH_TLS,             /* handshake or certificate failure */
    EU_FETCH_DNS,             /* the name did not resolve */
    EU_FETCH_NETWORK,         /* the connection broke during the exchange */
    EU_FETCH_TOO_MANY_REDIRECTS,
    EU_FETCH_BAD_URL,    /* malformed, or a scheme not allowed (also on redirect) */
    EU_FETCH_QUEUE_FULL, /* the owner already has max_queued_per_owner waiting */
};

struct eu_fetch_resp {
    enum eu_fetch_error error;
    long status;               /* HTTP status of the last response, or 0 */
    const char *content_type;  /* Content-Type, or NULL */
    const char *location;      /* of a 3xx, resolved to an absolute URL; or NULL */
    const char *effective_url; /* where the body came from, after redirects */
    char *body;                /* NUL-terminated, body_len bytes; "" when none */
    size_t body_len;
    const char *message; /* why it failed, for logs: libcurl's text or ours */
};

/*
 * Called once per started request, on the loop, never from inside
 * eu_fetch_start(). resp and every string in it belong to the client and die
 * when the callback returns; eu_fetch_resp_take_body() keeps the body. The
 * request's handle is freed after the callback: do not cancel it from here.
 * The callback may start and cancel other requests; it must not free the
 * client.
 */
typedef void (*eu_fetch_cb)(struct eu_fetch_resp *resp, void *arg);

/* Fills cfg from [federation] in config (max_hosts left at 0). */
void eu_fetch_config_from(struct eu_fetch_config *cfg, const struct eu_config *config);

/*
 * Creates a client on base with a copy of cfg. Returns a client the caller
 * frees with eu_fetch_client_free(), or NULL (logged) if libcurl cannot be
 * set up.
 */
struct eu_fetch_client *eu_fetch_client_new(struct event_base *base,
                                            const struct eu_fetch_config *cfg);
/* Replaces the limits (SIGHUP). Requests in flight keep what they started
 * with; queued ones start under the new caps. */
void eu_fetch_client_configure(struct eu_fetch_client *c, const struct eu_fetch_config *cfg);
/* Aborts every request without calling its callback, closes connections and
 * frees the client. Not from inside a fetch callback. NULL is a no-op. */
void eu_fetch_client_free(struct eu_fetch_client *c);

/*
 * Starts (or queues) a request. Everything req points to is copied, so the
 * caller may free it on return. Returns a handle valid until cb has run or
 * the request is cancelled; cb(resp, arg) runs exactly once unless the
 * request is cancelled first. Refusals (bad URL, scheme not allowed, owner's
 * queue full) also arrive through cb, from a zero-delay event.
 */
struct eu_fetch *eu_fetch_start(struct eu_fetch_client *c, const struct eu_fetch_req *req,
                                eu_fetch_cb cb, void *arg);
/* Whether f waits in its owner's queue for a slot (its host's cap or the
 * client's), rather than being on the wire or refused. */
bool eu_fetch_waiting(const struct eu_fetch *f);
/* Stops a request (queued or in flight); its callback never runs and the
 * handle is freed. May be called from another request's callback. */
void eu_fetch_cancel(struct eu_fetch *f);
/* Cancels every request of owner, as eu_fetch_cancel(): for a tenant going
 * away. Returns how many were cancelled (0 when c is NULL). */
size_t eu_fetch_cancel_owner(struct eu_fetch_client *c, uint64_t owner);

/*
 * Tenants of this process as peers. is_local(host, arg) says whether host
 * (a key as eu_fetch_host_of() writes) is a tenant this process serves; a
 * request to one connects to listen_addr ("127.0.0.1:8080", this process's
 * public listener; an unspecified address means loopback) instead of
 * resolving the name, in plain http whatever the URL's scheme (the
 * listener speaks http; the signature keeps the URL as given). That
 * address alone is exempt from the private-address check, and only for
 * such a request. is_local runs on the loop; NULL turns the mapping off.
 * listen_addr is copied.
 */
typedef bool (*eu_fetch_is_local_cb)(const char *host, void *arg);
void eu_fetch_client_set_local(struct eu_fetch_client *c, eu_fetch_is_local_cb is_local, void *arg,
                               const char *listen_addr);

/*
 * Takes the body out of resp: returns it (NUL-terminated, *len bytes if len
 * is not NULL) for the caller to free(); resp->body becomes NULL. Only from
 * inside the callback.
 */
char *eu_fetch_resp_take_body(struct eu_fetch_resp *resp, size_t *len);

/*
 * Writes the key eunha uses for url's host into out: the host lower-cased,
 * with ":PORT" when the URL names a port other than the scheme's default
 * ("a.example", "b.example:8443", "[::1]:8080"). Returns 0, or -1 for a URL
 * that does not parse, has no host, or does not fit.
 */
int eu_fetch_host_of(const char *url, char *out, size_t outlen);
/* False once host (a key as eu_fetch_host_of writes) has failed every
 * request for longer than host_unavailable_after_s; true for hosts never
 * seen. A failure is no answer (timeout, DNS, connect, TLS, broken
 * transfer) or a 5xx; any other answer resets it. */
bool eu_fetch_host_available(struct eu_fetch_client *c, const char *host);
/* Resets host's failures: it just sent us something (the inbox calls it). */
void eu_fetch_host_seen(struct eu_fetch_client *c, const char *host);

/* A short constant name for err ("timeout", "too_large", ...), fit for a
 * log line or a metric label. */
const char *eu_fetch_error_str(enum eu_fetch_error err);

struct eu_fetch_stats {
    int in_flight;
    int queued;
    size_t hosts;             /* entries in the health table */
    size_t hosts_unavailable; /* of those, unavailable now */
    unsigned long long requests_total;
    unsigned long long failures_total[EU_FETCH_QUEUE_FULL + 1]; /* by error; [0] unused */
};
/* Fills st with the client's figures (for /metrics). */
void eu_fetch_client_stats(struct eu_fetch_client *c, struct eu_fetch_stats *st);

/*
 * How many requests host (as eu_fetch_host_of() writes it) may have in
 * flight now. It adapts to the host, AIMD as TCP does: halved (at most once
 * per HOST_DECREASE_MS) when a request gets no answer or a 5xx, or takes far
 * longer than the host usually does; raised by one per window of answers
 * otherwise, up to max_requests_per_host. A host with no entry gets the
 * maximum.
 */
int eu_fetch_host_cap(struct eu_fetch_client *c, const char *host);

#endif
