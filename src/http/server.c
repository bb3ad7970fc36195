/*
 * The HTTP front: libevent's evhttp on two listeners, public and admin.
 *
 * evhttp was chosen over a hand-written layer on bufferevents: it already
 * parses HTTP/1.1 with keep-alive and enforces header and body limits, and
 * what streaming will need (chunked replies for server-sent events) it has in
 * evhttp_send_reply_start/chunk. WebSocket upgrades will take the connection's
 * bufferevent from evhttp when streaming lands.
 *
 * Every request goes through on_request: pick the tenant by Host, match the
 * shared route table, check the admin token, then run the handler, which
 * finishes the request exactly once through finish().
 */
#include "eunha/http.h"

#include <arpa/inet.h>
#include <assert.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/error.h"
#include "eunha/jsonout.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/net.h"
#include "eunha/ratelimit.h"
#include "eunha/tenant.h"
#include "server_internal.h"

#include "conns_internal.h"

struct listener {
    struct eu_http_server *server;
    struct evhttp *http;
    struct evhttp_bound_socket *sock;
    bool admin;
    char addr[80];
};

struct eu_http_server {
    struct eu_app *app;
    struct listener pub, adm;
    struct eu_conns *conns;
    uint64_t deadline_replies;
};

static uint32_t id_seed;
static uint32_t id_counter;

static uint64_t
now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static const char *
reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 302:
        return "Found";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 413:
        return "Payload Too Large";
    case 422:
        return "Unprocessable Entity";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Status";
    }
}

static unsigned
method_bit(enum evhttp_cmd_type t)
{
    switch (t) {
    case EVHTTP_REQ_GET:
        return EU_HTTP_GET;
    case EVHTTP_REQ_POST:
        return EU_HTTP_POST;
    case EVHTTP_REQ_PUT:
        return EU_HTTP_PUT;
    case EVHTTP_REQ_PATCH:
        return EU_HTTP_PATCH;
    case EVHTTP_REQ_DELETE:
        return EU_HTTP_DELETE;
    case EVHTTP_REQ_HEAD:
        return EU_HTTP_HEAD;
    case EVHTTP_REQ_OPTIONS:
        return EU_HTTP_OPTIONS;
    default:
        return 0;
    }
}

/*
 * Mastodon's CORS covers whole areas (its rack-cors configuration), so a
 * path there that no route takes still answers its 404 and its preflight
 * with CORS headers, as a browser client probing an endpoint this server
 * lacks needs. The routes under them carry EU_ROUTE_CORS themselves.
 */
const struct eu_route eu_http_areas[] = {
    {0, "/api/*", NULL, NULL, EU_ROUTE_CORS},
    {0, "/.well-known/*", NULL, NULL, EU_ROUTE_CORS},
    {0, "/nodeinfo/*", NULL, NULL, EU_ROUTE_CORS},
    {0},
};

/* Whether answers on the request's path carry CORS headers: its route says
 * so once it has one; before that, or without one, the routes and the area
 * of the path do. Never on the admin listener. */
static bool
req_has_cors(const struct eu_req *req)
{
    if (req->admin_listener || !req->path)
        return false;
    unsigned flags =
        req->route ? req->route->flags : eu_router_path_flags(req->app->router, req->path);
    return flags & EU_ROUTE_CORS;
}

static void
add_cors(struct eu_req *req)
{
    struct evkeyvalq *h = evhttp_request_get_output_headers(req->ev);
    evhttp_add_header(h, "Access-Control-Allow-Origin", "*");
    evhttp_add_header(h, "Access-Control-Allow-Methods", "POST, PUT, DELETE, GET, PATCH, OPTIONS");
    evhttp_add_header(h, "Access-Control-Expose-Headers",
                      "Link, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, "
                      "X-Request-Id, Idempotency-Key");
}

/* Sends the answer on req->ev, which libevent then owns and frees. */
static void
send_reply(struct eu_req *req, int status, struct evbuffer *body)
{
    struct evkeyvalq *h = evhttp_request_get_output_headers(req->ev);
    evhttp_add_header(h, "X-Request-Id", req->id);
    if (req_has_cors(req))
        add_cors(req);
    eu_conns_reply_sending(req->app->http->conns, evhttp_request_get_connection(req->ev));
    evhttp_send_reply(req->ev, status, reason(status), body);
    req->ev = NULL;
    int cls = status / 100;
    if (cls >= 1 && cls <= 5)
        req->app->requests_by_class[cls]++;
}

static void
finish(struct eu_req *req, int status, struct evbuffer *body)
{
    assert(!req->finished);
    req->finished = true;
    struct eu_app *app = req->app;
    eu_req_enter(req);
    if (req->sink) {
        size_t n = body ? evbuffer_get_length(body) : 0;
        const char *bytes = n ? (const char *)evbuffer_pullup(body, -1) : "";
        req->sink(status, bytes, n, req->sink_arg);
    } else if (req->ev) {
        send_reply(req, status, body);
        eu_log_info("http", "%s %s %d %.1fms", eu_http_method_name(req->method),
                    req->path ? req->path : "?", status,
                    (double)(now_us() - req->started_us) / 1000.0);
    } else if (status == 101) {
        eu_log_info("http", "%s %s: taken for streaming", eu_http_method_name(req->method),
                    req->path ? req->path : "?");
    } else {
        eu_log_info("http", "%s %s %d %.1fms, dropped: 503 was sent at the deadline",
                    eu_http_method_name(req->method), req->path ? req->path : "?", status,
                    (double)(now_us() - req->started_us) / 1000.0);
    }
    eu_log_set_context(NULL, NULL);
    if (req->deadline)
        event_free(req->deadline);
    if (req->query) {
        evhttp_clear_headers(req->query);
        free(req->query);
    }
    eu_arena_free(req->arena);
    if (req->tenant)
        eu_tenant_unref(req->tenant);
    free(req);
    app->inflight--;
}

/* Sends buf (freed here) as the body, with content_type when not NULL. */
static void
send_body(struct eu_req *req, int status, const char *content_type, struct evbuffer *buf)
{
    if (content_type && req->ev)
        evhttp_add_header(evhttp_request_get_output_headers(req->ev), "Content-Type", content_type);
    finish(req, status, buf);
    evbuffer_free(buf);
}

void
eu_req_reply_raw(struct eu_req *req, int status, const char *content_type, const char *body,
                 size_t len)
{
    struct evbuffer *buf = evbuffer_new();
    if (len)
        evbuffer_add(buf, body, len);
    send_body(req, status, content_type, buf);
}

void
eu_req_reply_buffer(struct eu_req *req, int status, const char *content_type, struct evbuffer *body)
{
    send_body(req, status, content_type, body);
}

/* What eu_req_json_splice() registered: the splices, and the two
 * references each holds (obj, text), dropped with the arena. */
struct eu_req_splices {
    struct eu_json_splice *sp;
    json_t **refs;
    size_t n, cap;
};

static void
splices_free(void *data)
{
    struct eu_req_splices *s = data;
    for (size_t i = 0; i < 2 * s->n; i++)
        json_decref(s->refs[i]);
}

static void splice_add(struct eu_req *req, json_t *obj, json_t *text, size_t skip, bool extend,
                       const char *tail, const char *trailer);

void
eu_req_json_splice(struct eu_req *req, json_t *obj, json_t *text, size_t skip)
{
    splice_add(req, obj, text, skip, false, NULL, NULL);
}

void
eu_req_json_extend(struct eu_req *req, json_t *obj, json_t *text, const char *tail,
                   const char *trailer)
{
    splice_add(req, obj, text, 0, true, tail, trailer);
}

static void
splice_add(struct eu_req *req, json_t *obj, json_t *text, size_t skip, bool extend,
           const char *tail, const char *trailer)
{
    if (!json_is_object(obj) || !json_is_string(text))
        return;
    struct eu_req_splices *s = req->splices;
    if (!s) {
        s = req->splices = eu_arena_calloc(req->arena, sizeof(*s));
        eu_arena_on_free(req->arena, splices_free, s);
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        struct eu_json_splice *sp = eu_arena_alloc(req->arena, cap * sizeof(*sp));
        json_t **refs = eu_arena_alloc(req->arena, 2 * cap * sizeof(*refs));
        if (s->n) {
            memcpy(sp, s->sp, s->n * sizeof(*sp));
            memcpy(refs, s->refs, 2 * s->n * sizeof(*refs));
        }
        s->sp = sp;
        s->refs = refs;
        s->cap = cap;
    }
    s->sp[s->n] = (struct eu_json_splice){.obj = obj,
                                          .text = json_string_value(text),
                                          .len = json_string_length(text),
                                          .skip = skip,
                                          .extend = extend,
                                          .tail = tail,
                                          .tail_len = tail ? strlen(tail) : 0,
                                          .trailer = trailer,
                                          .trailer_len = trailer ? strlen(trailer) : 0};
    s->refs[2 * s->n] = json_incref(obj);
    s->refs[2 * s->n + 1] = json_incref(text);
    s->n++;
}

void
eu_req_reply_json_typed(struct eu_req *req, int status, const char *content_type, json_t *body)
{
    /* Written straight into the reply's buffer, which evhttp then moves (not
     * copies) into the connection's. When our writer gives up (NULL, a
     * string jansson would refuse, a tree too deep or a cycle) jansson has
     * the last word, so the bytes are always json_dumps()'s. */
    struct evbuffer *buf = evbuffer_new();
    const struct eu_req_splices *sp = req->splices;
    if (eu_json_write_spliced(buf, body, sp ? sp->sp : NULL, sp ? sp->n : 0) < 0) {
        char *s = body ? json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        evbuffer_add(buf, s ? s : "null", s ? strlen(s) : 4);
        free(s);
    }
    json_decref(body);
    send_body(req, status, content_type, buf);
}

void
eu_req_reply_json(struct eu_req *req, int status, json_t *body)
{
    eu_req_reply_json_typed(req, status, "application/json; charset=utf-8", body);
}

void
eu_req_reply_error(struct eu_req *req, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (status >= 500)
        eu_log_warn("http", "answering %d: %s", status, msg);
    eu_req_reply_json(req, status, json_pack("{s:s}", "error", msg));
}

void
eu_req_reply_eu_error(struct eu_req *req, const struct eu_error *err)
{
    eu_req_reply_error(req, err->status ? err->status : 400, "%s", err->message);
}

void
eu_req_reply_db_error(struct eu_req *req, enum eu_db_status status)
{
    switch (status) {
    case EU_DB_TIMEOUT:
        eu_req_add_header(req, "Retry-After", "1");
        eu_req_reply_error(req, 503, "The database is busy; try again shortly");
        return;
    case EU_DB_UNAVAILABLE:
    case EU_DB_CLOSED:
        eu_req_add_header(req, "Retry-After", "5");
        eu_req_reply_error(req, 503, "The database is unavailable; try again shortly");
        return;
    default:
        eu_req_reply_error(req, 500, "Internal server error");
        return;
    }
}

void
eu_req_add_header(struct eu_req *req, const char *name, const char *value)
{
    if (req->ev)
        evhttp_add_header(evhttp_request_get_output_headers(req->ev), name, value);
}

const char *
eu_req_header(const struct eu_req *req, const char *name)
{
    return evhttp_find_header(req->ev ? evhttp_request_get_input_headers(req->ev) : req->input_copy,
                              name);
}

const char *
eu_req_query_string(const struct eu_req *req)
{
    return req->query_string;
}

const char *
eu_req_param(const struct eu_req *req, const char *name)
{
    return eu_route_params_get(&req->params, name);
}

const char *
eu_req_query(struct eu_req *req, const char *name)
{
    if (!req->query) {
        req->query = eu_xcalloc(1, sizeof(*req->query));
        TAILQ_INIT(req->query);
        const char *q = req->query_string;
        if (q && evhttp_parse_query_str(q, req->query) < 0)
            evhttp_clear_headers(req->query);
    }
    return evhttp_find_header(req->query, name);
}

const char *
eu_req_body(struct eu_req *req, size_t *len)
{
    if (!req->body) {
        struct evbuffer *in = evhttp_request_get_input_buffer(req->ev);
        size_t n = evbuffer_get_length(in);
        char *copy = eu_arena_alloc(req->arena, n + 1);
        evbuffer_copyout(in, copy, n);
        copy[n] = '\0';
        req->body = copy;
        req->body_len = n;
    }
    *len = req->body_len;
    return req->body;
}

/*
 * Why the JSON text s cannot be parsed within the limits, or NULL. One pass
 * over the text before jansson sees it, so a hostile body costs no tree
 * and no deep recursion. entries has max_depth + 1 slots: the count of the
 * open container at each depth. Text that is not JSON may pass; jansson
 * refuses it next.
 */
static const char *
json_oversize(const char *s, size_t n, int max_depth, int *entries)
{
    int depth = 0;
    size_t values = 0;
    bool in_str = false;
    bool expect = false; /* after '{', '[' or ',': the next token starts an entry */
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        if (c == '}' || c == ']') {
            depth -= depth > 0;
            expect = false;
            continue;
        }
        if (expect && depth > 0) {
            expect = false;
            if (++entries[depth] > EU_PARAMS_MAX_ENTRIES)
                return "A JSON object or array in the body has too many entries";
            if (++values > EU_PARAMS_MAX_VALUES)
                return "The JSON body holds too many values";
        }
        if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth)
                return "The JSON body is nested too deeply";
            entries[depth] = 0;
            expect = true;
        } else if (c == ',') {
            expect = true;
        }
    }
    return NULL;
}

static void
decref_json(void *p)
{
    json_decref(p);
}

json_t *
eu_req_json(struct eu_req *req, struct eu_error *err)
{
    size_t n;
    const char *body = eu_req_body(req, &n);
    if (n == 0) {
        eu_error_set(err, 400, "A JSON body is required");
        return NULL;
    }
    int max_depth = req->app->cfg->json_max_depth;
    int *entries = eu_arena_alloc(req->arena, ((size_t)max_depth + 1) * sizeof(int));
    const char *why = json_oversize(body, n, max_depth, entries);
    if (why) {
        eu_error_set(err, 400, "%s", why);
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loadb(body, n, 0, &je);
    if (!root) {
        eu_error_set(err, 400, "Malformed JSON at line %d: %s", je.line, je.text);
        return NULL;
    }
    eu_arena_on_free(req->arena, decref_json, root);
    if (!json_is_object(root)) {
        eu_error_set(err, 422, "The JSON body must be an object");
        return NULL;
    }
    return root;
}

json_t *
eu_req_json_or_reply(struct eu_req *req)
{
    struct eu_error err;
    json_t *root = eu_req_json(req, &err);
    if (!root)
        eu_req_reply_eu_error(req, &err);
    return root;
}

const char *
eu_req_base_url(struct eu_req *req)
{
    return eu_arena_sprintf(req->arena, "%s://%s", req->scheme, req->host);
}

void
eu_req_enter(const struct eu_req *req)
{
    eu_log_set_context(req->tenant ? req->tenant->domain : NULL, req->id);
}

/* Admin tokens are compared in constant time over their hashes, so neither
 * content nor length leaks through timing. */
static bool
admin_token_ok(struct eu_req *req)
{
    const char *want = req->app->cfg->admin_token;
    const char *auth = eu_req_header(req, "Authorization");
    if (!want || !*want || !auth || strncasecmp(auth, "Bearer ", 7) != 0)
        return false;
    unsigned char a[32], b[32];
    crypto_generichash(a, sizeof(a), (const unsigned char *)auth + 7, strlen(auth + 7), NULL, 0);
    crypto_generichash(b, sizeof(b), (const unsigned char *)want, strlen(want), NULL, 0);
    return sodium_memcmp(a, b, sizeof(a)) == 0;
}

const char *
eu_http_list_first(struct eu_arena *a, const char *v)
{
    const char *comma = strchr(v, ',');
    size_t n = comma ? (size_t)(comma - v) : strlen(v);
    while (n && (*v == ' ' || *v == '\t')) {
        v++;
        n--;
    }
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    return eu_arena_strndup(a, v, n);
}

static bool
is_ip(const char *s)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/*
 * The client's address from X-Forwarded-For value v, sent by the trusted
 * proxy peer: walked from the right, since each proxy appends the address
 * it was reached from and only the entries our proxies appended can be
 * believed (the leftmost is whatever the client wrote). Trusted hops are
 * skipped; the first other address is the client. An entry that is not an
 * address ends the walk at the last believable one. Owned by the arena.
 */
const char *
eu_http_forwarded_client(struct eu_arena *a, const char *v, const char *peer,
                         const struct eu_config *cfg)
{
    const char *client = peer;
    const char *end = v + strlen(v);
    while (end > v) {
        const char *start = end;
        while (start > v && start[-1] != ',')
            start--;
        const char *b = start, *e = end;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        char *ip = eu_arena_strndup(a, b, (size_t)(e - b));
        if (!is_ip(ip))
            break;
        client = ip;
        if (!eu_ip_in_list(ip, cfg->trusted_proxies, cfg->n_trusted_proxies))
            break;
        end = start > v ? start - 1 : v;
    }
    return client;
}

/*
 * Every X-Forwarded-For line of the request, joined in order with ", " as
 * RFC 9110 allows for a list header, or NULL. A proxy that adds a line of
 * its own (HAProxy's `option forwardfor`) leaves the client's line first:
 * reading the first line alone would believe what the client wrote.
 * Owned by the arena.
 */
static const char *
forwarded_for(struct eu_req *req)
{
    const char *all = NULL;
    struct evkeyval *kv;
    TAILQ_FOREACH(kv, evhttp_request_get_input_headers(req->ev), next)
    {
        if (evutil_ascii_strcasecmp(kv->key, "X-Forwarded-For") != 0)
            continue;
        all = all ? eu_arena_sprintf(req->arena, "%s, %s", all, kv->value) : kv->value;
    }
    return all;
}

static void
free_headers(void *p)
{
    evhttp_clear_headers(p);
    free(p);
}

/*
 * The request deadline has passed: the client gets its 503 now, and the
 * handler, which may be waiting on a statement, Redis or the CPU pool, goes
 * on to its end (none of those can be taken back safely halfway; each
 * returns its connection as usual) and finish() drops its answer. That is
 * the path a client that hangs up mid-request already takes. What the
 * handler may still read of the request is copied first, since libevent
 * frees the request once the 503 is written.
 */
static void
on_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct eu_req *req = arg;
    struct eu_http_server *s = req->app->http;
    eu_req_enter(req);
    size_t n;
    eu_req_body(req, &n);
    req->input_copy = eu_xcalloc(1, sizeof(*req->input_copy));
    TAILQ_INIT(req->input_copy);
    eu_arena_on_free(req->arena, free_headers, req->input_copy);
    struct evkeyvalq *in = evhttp_request_get_input_headers(req->ev);
    for (struct evkeyval *kv = TAILQ_FIRST(in); kv; kv = TAILQ_NEXT(kv, next))
        evhttp_add_header(req->input_copy, kv->key, kv->value);

    /* What the handler set so far was for an answer that will not be sent. */
    struct evkeyvalq *out = evhttp_request_get_output_headers(req->ev);
    evhttp_clear_headers(out);
    evhttp_add_header(out, "Content-Type", "application/json; charset=utf-8");
    evhttp_add_header(out, "Retry-After", "1");
    struct evbuffer *body = evbuffer_new();
    evbuffer_add_printf(body, "{\"error\":\"The server took too long to answer; try again "
                              "shortly\"}");
    send_reply(req, 503, body);
    evbuffer_free(body);
    s->deadline_replies++;
    eu_log_warn("http",
                "%s %s 503 %.1fms: not answered within %d s; the handler's answer will be "
                "dropped",
                eu_http_method_name(req->method), req->path,
                (double)(now_us() - req->started_us) / 1000.0, req->app->cfg->request_deadline_s);
    eu_log_set_context(NULL, NULL);
}

/* Starts the request deadline, which counts from the end of the headers, so
 * waited_us of it went on the body. */
static void
arm_deadline(struct eu_req *req, uint64_t waited_us)
{
    uint64_t limit = (uint64_t)req->app->cfg->request_deadline_s * 1000000u;
    uint64_t left = waited_us < limit ? limit - waited_us : 0;
    struct timeval tv = {(time_t)(left / 1000000u), (suseconds_t)(left % 1000000u)};
    req->deadline = evtimer_new(req->app->base, on_deadline, req);
    evtimer_add(req->deadline, &tv);
}

/* Runs once the token (if any) has been read: enforces the route's
 * requirements with Mastodon's status codes and messages, then hands over. */
static void
after_auth(struct eu_req *req)
{
    const struct eu_route *route = req->route;
    bool need_user = route->flags & EU_ROUTE_AUTH;
    bool need_token = need_user || (route->flags & EU_ROUTE_APP_TOKEN);
    if (need_token && !req->auth.present) {
        eu_req_add_header(req, "WWW-Authenticate",
                          "Bearer realm=\"Doorkeeper\", error=\"invalid_token\"");
        eu_req_reply_error(req, 401, "The access token is invalid");
        return;
    }
    if (need_user && !req->auth.user_id) {
        eu_req_reply_error(req, 422, "This method requires an authenticated user");
        return;
    }
    /* Mastodon's require_user! asks in this order. */
    if (need_user && req->auth.disabled) {
        eu_req_reply_error(req, 403, "Your login is currently disabled");
        return;
    }
    if (need_user && req->auth.unconfirmed && !(route->flags & EU_ROUTE_UNCONFIRMED_OK)) {
        eu_req_reply_error(req, 403, "Your login is missing a confirmed e-mail address");
        return;
    }
    if (need_user && req->auth.pending_approval && !(route->flags & EU_ROUTE_UNCONFIRMED_OK)) {
        eu_req_reply_error(req, 403, "Your login is currently pending approval");
        return;
    }
    /* Mastodon's User#functional? is false once the account moved. */
    if (need_user && req->auth.moved && !(route->flags & EU_ROUTE_MOVED_OK)) {
        eu_req_reply_error(req, 403, "Your login is currently disabled");
        return;
    }
    if (req->auth.present && route->scope &&
        !eu_auth_scope_allows(req->auth.scopes, route->scope)) {
        eu_req_reply_error(req, 403, "This action is outside the authorized scopes");
        return;
    }
    eu_ratelimit_run(req, route->handler);
}

/* The most a body may hold on a route with these flags. */
static size_t
body_limit(const struct eu_config *cfg, unsigned flags)
{
    if ((flags & EU_ROUTE_UPLOAD) && cfg->max_upload_bytes > cfg->max_body_bytes)
        return cfg->max_upload_bytes;
    return cfg->max_body_bytes;
}

/*
 * evhttp reads a whole body before on_request sees the request, so its own
 * limit must be the largest any route allows; on_request then holds each
 * route to its own limit, with a JSON answer. A body past evhttp's limit
 * is refused by libevent itself: 413 with its HTML page and the connection
 * closed. libevent 2.1 calls no code of ours for it (2.2 has
 * evhttp_set_errorcb), so that answer cannot be Mastodon-shaped; it comes
 * only past the largest limit. Lingering close reads the rest of the body
 * before closing, so the client gets that 413 rather than a reset.
 */
static void
apply_limits(struct listener *l)
{
    const struct eu_app *app = l->server->app;
    size_t body = body_limit(app->cfg, eu_router_flags(app->router));
    evhttp_set_max_headers_size(l->http, (ev_ssize_t)app->cfg->max_header_bytes);
    evhttp_set_max_body_size(l->http, (ev_ssize_t)body);
    evhttp_set_timeout(l->http, app->cfg->request_timeout_s);
    evhttp_set_flags(l->http, EVHTTP_SERVER_LINGERING_CLOSE);
}

/* An account's ActivityPub actor or a page under it: /users/NAME[/...] or
 * /@NAME[/...]. */
static bool
is_actor_path(const char *path)
{
    const char *name = strncmp(path, "/users/", 7) == 0 ? path + 7
                       : strncmp(path, "/@", 2) == 0    ? path + 2
                                                        : NULL;
    return name && *name && *name != '/';
}

static void
on_request(struct evhttp_request *ev, void *arg)
{
    struct listener *l = arg;
    struct eu_app *app = l->server->app;
    struct eu_req *req = eu_xcalloc(1, sizeof(*req));
    req->app = app;
    req->ev = ev;
    req->arena = eu_arena_new();
    req->started_us = now_us();
    req->admin_listener = l->admin;
    req->method = method_bit(evhttp_request_get_command(ev));
    snprintf(req->id, sizeof(req->id), "%08x%08x", id_seed, ++id_counter);
    app->inflight++;

    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(ev);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    req->path = eu_arena_strdup(req->arena, path && *path ? path : "/");
    const char *qs = uri ? evhttp_uri_get_query(uri) : NULL;
    req->query_string = qs ? eu_arena_strdup(req->arena, qs) : NULL;
    uint64_t waited = eu_conns_request_started(l->server->conns, ev);
    if (!l->admin)
        arm_deadline(req, waited);
    /* Copied: a SIGHUP reload may free the config while this request runs. */
    req->scheme = eu_arena_strdup(req->arena, app->cfg->scheme);

    char *peer = NULL;
    ev_uint16_t peer_port = 0;
    struct evhttp_connection *conn = evhttp_request_get_connection(ev);
    if (conn)
        evhttp_connection_get_peer(conn, &peer, &peer_port);
    req->remote_ip = eu_arena_strdup(req->arena, peer ? peer : "");

    const char *host_hdr = eu_req_header(req, "Host");
    if (!l->admin && app->cfg->n_trusted_proxies &&
        eu_ip_in_list(req->remote_ip, app->cfg->trusted_proxies, app->cfg->n_trusted_proxies)) {
        const char *v;
        if ((v = eu_req_header(req, "X-Forwarded-Host")))
            host_hdr = eu_http_list_first(req->arena, v);
        if ((v = eu_req_header(req, "X-Forwarded-Proto"))) {
            v = eu_http_list_first(req->arena, v);
            if (strcmp(v, "http") == 0 || strcmp(v, "https") == 0)
                req->scheme = v;
        }
        if ((v = forwarded_for(req)))
            req->remote_ip = eu_http_forwarded_client(req->arena, v, req->remote_ip, app->cfg);
    }
    char host[256];
    if (!host_hdr || eu_host_normalize(host_hdr, host, sizeof(host)) < 0)
        host[0] = '\0';
    req->host = eu_arena_strdup(req->arena, host);

    if (!req->method) {
        eu_req_reply_error(req, 405, "Method not allowed");
        return;
    }
    if (app->stopping) {
        eu_req_add_header(req, "Connection", "close");
        eu_req_reply_error(req, 503, "The server is shutting down");
        return;
    }
    /* A front proxy's health check (docs/fleet.md): on the public listener,
     * whatever the Host, since a proxy knows no tenant to name and the admin
     * listener is often out of its reach. It proves this listener and its
     * loop answer; during a drain the 503 above takes the process out. */
    if (!l->admin && strcmp(req->path, "/healthz") == 0 &&
        (req->method == EU_HTTP_GET || req->method == EU_HTTP_HEAD)) {
        eu_req_reply_json(req, 200, json_pack("{s:s}", "status", "ok"));
        return;
    }
    if (!l->admin) {
        if (!host[0]) {
            eu_req_reply_error(req, 400, "A valid Host header is required");
            return;
        }
        struct eu_tenant *t = eu_registry_find(app->registry, host);
        if (t && t->state == EU_TENANT_DELETING && is_actor_path(req->path)) {
            /* Its accounts' Delete is going out, or its rows are going: a
             * server that checks the actor finds it gone, as Mastodon
             * answers for a deleted one. Every process of a fleet knows
             * the state from the control row, not only the one purging. */
            eu_req_reply_error(req, 410,
                               "The page you were looking for doesn't exist here anymore.");
            return;
        }
        if (!t || t->state == EU_TENANT_DELETING) {
            eu_req_reply_error(req, 404, "Unknown domain");
            return;
        }
        eu_tenant_touch(t);
        eu_tenant_ref(t);
        req->tenant = t;
    }
    eu_req_enter(req);

    /* CORS preflight: answered for any path with CORS, whatever its
     * methods, and for the paths of a CORS area no route takes. */
    if (req->method == EU_HTTP_OPTIONS && req_has_cors(req)) {
        const char *h = eu_req_header(req, "Access-Control-Request-Headers");
        if (h)
            eu_req_add_header(req, "Access-Control-Allow-Headers", h);
        eu_req_add_header(req, "Access-Control-Max-Age", "7200");
        eu_req_reply_raw(req, 200, "text/plain", "", 0);
        return;
    }

    char allow[128];
    const struct eu_route *route = NULL;
    unsigned m = req->method == EU_HTTP_HEAD ? EU_HTTP_GET : req->method;
    enum eu_route_match r = eu_router_match(app->router, m, req->path, req->arena, &route,
                                            &req->params, allow, sizeof(allow));
    bool admin_route = route && (route->flags & (EU_ROUTE_ADMIN | EU_ROUTE_ADMIN_OPEN));
    if (r == EU_ROUTE_FOUND && admin_route != l->admin)
        r = EU_ROUTE_NOT_FOUND;
    if (r == EU_ROUTE_NOT_FOUND) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (r == EU_ROUTE_METHOD_NOT_ALLOWED) {
        eu_req_add_header(req, "Allow", allow);
        eu_req_reply_error(req, 405, "Method not allowed");
        return;
    }
    req->route = route;
    size_t limit = body_limit(app->cfg, route->flags);
    if (evbuffer_get_length(evhttp_request_get_input_buffer(ev)) > limit) {
        /* Before the token is looked up or a byte is parsed. */
        eu_req_reply_error(req, 413, "The request body is larger than %zu bytes", limit);
        return;
    }
    if ((route->flags & EU_ROUTE_ADMIN) && !admin_token_ok(req)) {
        eu_req_add_header(req, "WWW-Authenticate", "Bearer realm=\"eunha-admin\"");
        eu_req_reply_error(req, 401, "A valid admin token is required");
        return;
    }
    if (req->tenant && req->tenant->moving) {
        /* For a moment: its rows are being copied (src/admin/lifecycle.c). */
        eu_req_add_header(req, "Retry-After", "1");
        eu_req_reply_error(req, 503, "This instance is being moved; try again shortly");
        return;
    }
    if (req->tenant && req->tenant->state == EU_TENANT_SUSPENDED) {
        eu_req_reply_error(req, 403, "This instance has been suspended");
        return;
    }
    if (route->flags & (EU_ROUTE_AUTH | EU_ROUTE_AUTH_OPT | EU_ROUTE_APP_TOKEN)) {
        eu_auth_authenticate(req, after_auth);
        eu_log_set_context(NULL, NULL);
        return;
    }
    eu_ratelimit_run(req, route->handler);
    eu_log_set_context(NULL, NULL);
}

static int
bind_listener(struct eu_http_server *s, struct listener *l, const char *addr, bool admin)
{
    struct eu_app *app = s->app;
    char host[256];
    int port;
    if (eu_hostport_split(addr, host, sizeof(host), &port) < 0) {
        eu_log_error("http", "cannot parse listen address '%s'", addr);
        return -1;
    }
    l->server = s;
    l->admin = admin;
    l->http = evhttp_new(app->base);
    evhttp_set_allowed_methods(l->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                                            EVHTTP_REQ_PATCH | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
                                            EVHTTP_REQ_OPTIONS);
    apply_limits(l);
    evhttp_set_gencb(l->http, on_request, l);
    eu_conns_watch(s->conns, l->http, !admin);
    l->sock = evhttp_bind_socket_with_handle(l->http, host, (ev_uint16_t)port);
    if (!l->sock) {
        eu_log_error("http", "cannot listen on '%s'", addr);
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    getsockname(evhttp_bound_socket_get_fd(l->sock), (struct sockaddr *)&ss, &len);
    char ip[INET6_ADDRSTRLEN] = "";
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
        snprintf(l->addr, sizeof(l->addr), "[%s]:%d", ip, ntohs(a->sin6_port));
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
        snprintf(l->addr, sizeof(l->addr), "%s:%d", ip, ntohs(a->sin_port));
    }
    eu_log_info("http", "%s listener on %s", admin ? "admin" : "public", l->addr);
    return 0;
}

struct eu_http_server *
eu_http_server_new(struct eu_app *app)
{
    struct eu_http_server *s = eu_xcalloc(1, sizeof(*s));
    s->app = app;
    s->conns = eu_conns_new(app);
    id_seed = randombytes_random();
    if (bind_listener(s, &s->pub, app->cfg->listen, false) < 0 ||
        bind_listener(s, &s->adm, app->cfg->admin_listen, true) < 0) {
        eu_http_server_free(s);
        return NULL;
    }
    return s;
}

const char *
eu_http_server_public_addr(const struct eu_http_server *s)
{
    return s->pub.addr;
}

const char *
eu_http_server_admin_addr(const struct eu_http_server *s)
{
    return s->adm.addr;
}

void
eu_http_server_apply_limits(struct eu_http_server *s)
{
    if (s->pub.http)
        apply_limits(&s->pub);
    if (s->adm.http)
        apply_limits(&s->adm);
}

void
eu_http_server_stop_accepting(struct eu_http_server *s)
{
    if (s->pub.sock)
        evhttp_del_accept_socket(s->pub.http, s->pub.sock);
    if (s->adm.sock)
        evhttp_del_accept_socket(s->adm.http, s->adm.sock);
    s->pub.sock = s->adm.sock = NULL;
}

void
eu_http_server_free(struct eu_http_server *s)
{
    if (!s)
        return;
    if (s->pub.http)
        evhttp_free(s->pub.http);
    if (s->adm.http)
        evhttp_free(s->adm.http);
    /* After the evhttps: freeing them closes connections, whose close
     * callbacks still count them off. */
    eu_conns_free(s->conns);
    free(s);
}

void
eu_http_server_conn_stats(const struct eu_http_server *s, struct eu_http_conn_stats *out)
{
    eu_conns_stats(s->conns, out);
    out->deadline_replies = s->deadline_replies;
}

/* ------------------------------------------------------------ streaming */

struct eu_req *
eu_req_new_detached(struct eu_app *app, struct eu_tenant *t, const char *query_string,
                    eu_req_sink_cb sink, void *arg)
{
    struct eu_req *req = eu_xcalloc(1, sizeof(*req));
    req->app = app;
    req->arena = eu_arena_new();
    req->started_us = now_us();
    req->method = EU_HTTP_GET;
    snprintf(req->id, sizeof(req->id), "%08x%08x", id_seed, ++id_counter);
    app->inflight++;
    req->path = "(stream)";
    req->query_string = query_string ? eu_arena_strdup(req->arena, query_string) : NULL;
    req->scheme = eu_arena_strdup(req->arena, app->cfg->scheme);
    req->host = eu_arena_strdup(req->arena, t->domain);
    req->remote_ip = "";
    req->input_copy = eu_xcalloc(1, sizeof(*req->input_copy));
    TAILQ_INIT(req->input_copy);
    eu_arena_on_free(req->arena, free_headers, req->input_copy);
    req->body = "";
    req->tenant = t;
    eu_tenant_ref(t);
    req->sink = sink;
    req->sink_arg = arg;
    return req;
}

struct take {
    struct eu_req *req;
    eu_req_taken_cb taken;
    void *arg;
};

/*
 * libevent 2.1 cannot hand a connection over: evhttp_connection_free()
 * frees its bufferevent and then shutdown(fd, SHUT_WR)s the socket, which
 * would end the stream we mean to keep. So the socket is duplicated for the
 * new bufferevent first, and evhttp's descriptor number is pointed (dup2)
 * at a fresh unconnected socket, which is what evhttp then shuts and
 * closes. evhttp's bufferevent is disabled before that, so its epoll
 * registration goes with the old description rather than lingering on it.
 * evhttp's own teardown runs as on any closed connection (the close
 * callback in conns.c would count it out, but its counts have moved to a
 * hold the stream keeps), and frees the request, which is why req->ev is
 * cleared first.
 */
static struct bufferevent *
steal(struct eu_app *app, struct evhttp_request *ev, struct eu_conns_hold **hold)
{
    struct evhttp_connection *evcon = evhttp_request_get_connection(ev);
    struct bufferevent *old = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    evutil_socket_t fd = old ? bufferevent_getfd(old) : -1;
    if (fd < 0)
        return NULL;
    bufferevent_disable(old, EV_READ | EV_WRITE);
    int mine = dup(fd);
    int dummy = socket(AF_INET, SOCK_STREAM, 0);
    if (mine < 0 || dummy < 0 || dup2(dummy, fd) < 0) {
        if (mine >= 0)
            close(mine);
        if (dummy >= 0)
            close(dummy);
        evhttp_connection_free(evcon);
        return NULL;
    }
    close(dummy);
    evutil_make_socket_nonblocking(mine);
    evutil_make_socket_closeonexec(mine);
    struct bufferevent *bev = bufferevent_socket_new(app->base, mine, BEV_OPT_CLOSE_ON_FREE);
    evbuffer_add_buffer(bufferevent_get_input(bev), bufferevent_get_input(old));
    /* A stream still counts against the connection caps (conns.c). */
    *hold = eu_conns_hold(app->http->conns, evcon);
    evhttp_connection_free(evcon);
    return bev;
}

static void
on_take(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct take *tk = arg;
    struct eu_req *req = tk->req;
    eu_req_taken_cb taken = tk->taken;
    void *targ = tk->arg;
    free(tk);
    struct evhttp_request *ev = req->ev;
    if (!ev || !evhttp_request_get_connection(ev)) {
        /* Gone (or answered at the deadline): replying frees what evhttp
         * left of the request. */
        finish(req, 499, NULL);
        taken(NULL, NULL, targ);
        return;
    }
    req->ev = NULL;
    struct eu_conns_hold *hold = NULL;
    struct bufferevent *bev = steal(req->app, ev, &hold);
    finish(req, 101, NULL);
    taken(bev, hold, targ);
}

void
eu_req_take_connection(struct eu_req *req, eu_req_taken_cb taken, void *arg)
{
    struct take *tk = eu_xmalloc(sizeof(*tk));
    tk->req = req;
    tk->taken = taken;
    tk->arg = arg;
    event_base_once(req->app->base, -1, EV_TIMEOUT, on_take, tk, NULL);
}
