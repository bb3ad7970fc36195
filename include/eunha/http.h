/*
 * A request as handlers see it, and the helpers that finish it. A handler
 * ends by calling exactly one eu_req_reply_* function, now or from a later
 * callback; that sends the response and frees the request, its arena and
 * everything registered on it.
 */
#ifndef EUNHA_HTTP_H
#define EUNHA_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/db.h"
#include "eunha/router.h"

struct event;
struct evhttp_request;
struct evkeyvalq;
struct eu_app;
struct eu_arena;
struct eu_tenant;
struct eu_error;
struct json_t;
struct eu_page;
struct eu_sql;
struct eu_web_frame;
struct pg_result;

/* The areas of Mastodon's CORS (src/http/server.c): /api/, /.well-known/
 * and /nodeinfo/, for the paths under them no route takes. Ends with {0}. */
extern const struct eu_route eu_http_areas[];

struct eu_req {
    struct eu_app *app;
    /* NULL once the client has been answered at the request deadline: the
     * handler goes on (its statements finish and return their connections)
     * and its own answer is dropped. Use the eu_req_* accessors, which
     * serve what it may still read from a copy. */
    struct evhttp_request *ev;
    struct eu_arena *arena;
    struct eu_tenant *tenant; /* holds a ref; NULL on the admin listener */
    const struct eu_route *route;
    struct eu_route_params params;
    unsigned method;
    const char *path;   /* raw path, arena */
    const char *scheme; /* "http" or "https" as the client sees it */
    const char *host;   /* normalised host */
    const char *remote_ip;
    char id[20];
    bool admin_listener;
    bool finished;
    uint64_t started_us;
    struct evkeyvalq *query;      /* parsed lazily */
    const char *query_string;     /* raw, arena; NULL without one */
    struct event *deadline;       /* [limits] request_deadline_seconds; public listener */
    struct evkeyvalq *input_copy; /* the request's headers once ev is NULL */
    const char *body;             /* eu_req_body(), copied once */
    size_t body_len;
    struct json_t *params_json;     /* eu_req_params(), parsed lazily */
    struct eu_req_splices *splices; /* eu_req_json_splice(), arena */
    /* A detached request (eu_req_new_detached()): its answer goes here
     * instead of to a client. */
    void (*sink)(int status, const char *body, size_t len, void *arg);
    void *sink_arg;
    /* An HTML page's frame (src/api/web_page.c): what the page shows of
     * its tenant, read before the page builds its body; arena, else NULL. */
    struct eu_web_frame *web_frame;
    /* Set by the pipeline for EU_ROUTE_AUTH / AUTH_OPT / APP_TOKEN routes. */
    struct {
        bool present; /* a valid token was sent */
        int64_t token_id;
        int64_t app_id;
        int64_t user_id;       /* 0 for an app-only (client_credentials) token */
        int64_t account_id;    /* 0 for an app-only token */
        const char *scopes;    /* space-separated, arena */
        bool pending_approval; /* the user signed up and awaits approval */
        bool unconfirmed;      /* the user's e-mail address is not confirmed yet */
        bool moved;            /* the user's account moved away (Move) */
        bool disabled;         /* the staff disabled the user's login */
        int64_t permissions;   /* the role's computed EU_PERM_* bits (eunha/auth.h) */
        char token_hash[65];
    } auth;
    /* The actor whose signature this GET carried, once src/ap/authfetch.c
     * verified it (tenants with authorized fetch); arena, else NULL. */
    const char *ap_signer;
};

/* A statement's rows for a request (see eu_req_stmt()). */
typedef void (*eu_req_rows_cb)(struct eu_req *req, struct pg_result *res, void *arg);
/* A statement's rows or its SQL error (see eu_req_stmt_or_error()). */
typedef void (*eu_req_result_cb)(struct eu_req *req, struct pg_result *res,
                                 enum eu_db_status status, void *arg);

struct eu_http_server;

/* Binds the public and admin listeners from app->cfg. Returns NULL after
 * logging when an address cannot be bound. */
struct eu_http_server *eu_http_server_new(struct eu_app *app);
/* "127.0.0.1:PORT" of each listener (the real port when 0 was asked). */
const char *eu_http_server_public_addr(const struct eu_http_server *s);
const char *eu_http_server_admin_addr(const struct eu_http_server *s);
/* Connection figures of the public listener, for /metrics. */
struct eu_http_conn_stats {
    int open;                  /* counted against the cap */
    int max;                   /* the cap in force */
    uint64_t refused_total;    /* over [limits] max_connections */
    uint64_t refused_per_ip;   /* over max_connections_per_ip */
    uint64_t header_timeouts;  /* closed: headers incomplete after header_timeout_seconds */
    uint64_t body_timeouts;    /* closed: body incomplete at the request deadline */
    uint64_t deadline_replies; /* answered 503 at the request deadline */
};
void eu_http_server_conn_stats(const struct eu_http_server *s, struct eu_http_conn_stats *out);
/* Applies app->cfg's request limits (header and body sizes, timeout) to
 * both listeners again, after a reload. Connections already open keep the
 * body limit they were accepted with. */
void eu_http_server_apply_limits(struct eu_http_server *s);
/* Stops accepting new connections; in-flight requests go on. */
void eu_http_server_stop_accepting(struct eu_http_server *s);
void eu_http_server_free(struct eu_http_server *s);

/* A path parameter (":id"), or NULL. */
const char *eu_req_param(const struct eu_req *req, const char *name);
/* The raw query string (after '?'), or NULL. Owned by the request. */
const char *eu_req_query_string(const struct eu_req *req);
/* A query-string parameter, decoded, or NULL. */
const char *eu_req_query(struct eu_req *req, const char *name);
/* The body; *len gets its length. Owned by the request. */
const char *eu_req_body(struct eu_req *req, size_t *len);
/* A request header, or NULL. */
const char *eu_req_header(const struct eu_req *req, const char *name);
/*
 * What one request's parameters may hold, whether they come as a form, a
 * query string, multipart parts or JSON: a value is one form field or part,
 * or one member or element of a JSON container; an entry is one member of
 * an object or element of an array (the top-level object included). The
 * largest legitimate request is a filter edit with its 100 keywords of four
 * attributes each (src/api/filters.c), so the caps leave twice that, while
 * a body of a million tiny fields no longer becomes a million jansson
 * values on the loop thread. Past either cap the answer is 400, as Rack
 * answers for too many or too deep parameters.
 */
#define EU_PARAMS_MAX_VALUES 1024
#define EU_PARAMS_MAX_ENTRIES 128

/*
 * Parses the JSON body (an object). Returns a root owned by the request
 * (released with it), or NULL with err set to a 400/422 for empty, malformed,
 * too deep (past [limits] json_max_depth), too large (past the caps above)
 * or non-object input. The text is measured before jansson parses it.
 */
struct json_t *eu_req_json(struct eu_req *req, struct eu_error *err);
/* eu_req_json() for a handler that has nothing to do but answer the error:
 * NULL after answering it. */
struct json_t *eu_req_json_or_reply(struct eu_req *req);
/* "https://a.example": the tenant's public base URL. Owned by the request. */
const char *eu_req_base_url(struct eu_req *req);
/* Adds a response header. */
void eu_req_add_header(struct eu_req *req, const char *name, const char *value);
/* Sets the log context to this request's tenant and id (call on entering a
 * callback that belongs to the request). */
void eu_req_enter(const struct eu_req *req);

/* Sends body (a JSON value; the reference is stolen) with status, as
 * application/json. The bytes are json_dumps(body, JSON_COMPACT |
 * JSON_ENCODE_ANY)'s, written by eu_json_write() into the reply's buffer;
 * a NULL body (or one jansson cannot dump) is sent as null. */
void eu_req_reply_json(struct eu_req *req, int status, struct json_t *body);

/*
 * From now on, a JSON reply of req that holds obj writes it as text (a JSON
 * string value holding obj's JSON, or with skip > 0 that of its first skip
 * members: see eu_json_write_spliced()). Both are referenced until the
 * request ends, so obj's address stays its own; the caller must not change
 * what text stands for. Ignored when memory runs out (obj is then written
 * member by member, the same bytes).
 */
void eu_req_json_splice(struct eu_req *req, struct json_t *obj, struct json_t *text, size_t skip);
/* The same with an extend splice: text (an object's JSON) stands for
 * members that come before all of obj's, followed by tail's, and
 * trailer's after obj's (members' JSON without braces, or NULL; the caller
 * keeps both alive until the request ends, e.g. in its arena). */
void eu_req_json_extend(struct eu_req *req, struct json_t *obj, struct json_t *text,
                        const char *tail, const char *trailer);
/* The same with another content type (NULL: a Content-Type header the
 * handler added itself). */
void eu_req_reply_json_typed(struct eu_req *req, int status, const char *content_type,
                             struct json_t *body);
/* Sends Mastodon's {"error": "..."} with status. */
void eu_req_reply_error(struct eu_req *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sends err's status and message. */
void eu_req_reply_eu_error(struct eu_req *req, const struct eu_error *err);
/* Maps a database failure to the right answer: a timeout or an unreachable
 * database is 503 with Retry-After, anything else 500. */
void eu_req_reply_db_error(struct eu_req *req, enum eu_db_status status);
/* Sends len bytes of body with the given content type. */
void eu_req_reply_raw(struct eu_req *req, int status, const char *content_type, const char *body,
                      size_t len);

/* Sends body (an evbuffer the reply takes and frees; it may hold file
 * segments from evbuffer_add_file()) with the given content type. */
struct evbuffer;
void eu_req_reply_buffer(struct eu_req *req, int status, const char *content_type,
                         struct evbuffer *body);

/*
 * Running a statement for a request.
 *
 * eu_req_stmt() sends the registered statement s (see sql.h) on the pool
 * of the request's tenant. That pool passes the tenant id as $1 itself, so
 * params are $2, $3, ... (params[0] is $2); params are copied before the
 * call returns (they may live on the stack). cb runs later, never from
 * inside the call, on the loop thread, with the log context already set to
 * the request (eu_req_enter()).
 *
 * Failures are answered here, in one place: a timeout or an unreachable or
 * closing database with 503 and Retry-After, an SQL error with 500 (see
 * eu_req_reply_db_error()); cb then does not run and the request is
 * finished. So cb only ever sees rows, and a handler whose callback must
 * free something on failure should keep it on the request's arena rather
 * than on the heap.
 *
 * res belongs to the pool and is cleared after cb returns: copy what you
 * keep past it. arg is the caller's and is passed through untouched. cb
 * either finishes the request (one eu_req_reply_* call) or starts the
 * request's next asynchronous step; the request must not be finished while
 * a statement is pending, so one request runs its statements one after
 * another (calling eu_req_stmt() again from cb is the usual way). Needs
 * req->tenant (not for the admin listener).
 */
void eu_req_stmt(struct eu_req *req, const struct eu_sql *s, int nparams, const char *const *params,
                 eu_req_rows_cb cb, void *arg);
/* eu_req_stmt() for a paged statement (s->page_col set): the page decides
 * the direction; params include the page's four (eu_page_params()). */
void eu_req_stmt_page(struct eu_req *req, const struct eu_sql *s, const struct eu_page *page,
                      int nparams, const char *const *params, eu_req_rows_cb cb, void *arg);
/*
 * Like eu_req_stmt(), for the few statements whose SQL errors are part of
 * the answer (a unique or not-null violation that becomes a 422):
 * cb runs with status EU_DB_OK and the rows, or with EU_DB_ERROR and res
 * holding the error, to be read with eu_db_result_sqlstate(). cb answers
 * errors it does not recognise with eu_req_reply_db_error(req, status).
 * Timeouts and an unavailable database are still answered here, without cb.
 */
void eu_req_stmt_or_error(struct eu_req *req, const struct eu_sql *s, int nparams,
                          const char *const *params, eu_req_result_cb cb, void *arg);
/*
 * The twins of eu_req_stmt() and eu_req_stmt_or_error() for the operator's
 * statements on the control database (tenants, placements: see
 * eu_admin_control_sql[]) rather than a tenant's placement. No tenant id is
 * passed, so params are $1, $2, ..., and req needs no tenant; failures are
 * answered the same way, and cb runs the same way.
 */
void eu_req_control_stmt(struct eu_req *req, const struct eu_sql *s, int nparams,
                         const char *const *params, eu_req_rows_cb cb, void *arg);
void eu_req_control_stmt_or_error(struct eu_req *req, const struct eu_sql *s, int nparams,
                                  const char *const *params, eu_req_result_cb cb, void *arg);
/* The signed-in account's id (req->auth.account_id) as decimal text, the
 * form statements take it in; "0" without one. Owned by the request. */
const char *eu_req_viewer(struct eu_req *req);

/* ------------------------------------------------------------ streaming */

/* The answer of a detached request: status and body bytes, borrowed for the
 * call. */
typedef void (*eu_req_sink_cb)(int status, const char *body, size_t len, void *arg);
/*
 * A request that no client sent, so that code outside a request (the
 * streaming hub) can run a REST handler for a viewer and get exactly the
 * bytes REST would send. t (a ref is taken), query_string (copied, may be
 * NULL) and auth (filled by the caller after this returns) stand for the
 * client's; it has no headers and an empty body. The caller calls a
 * handler; the handler's one eu_req_reply_* call hands the answer to sink
 * (later or from inside the call) and frees the request. Not counted as a
 * client request in the metrics.
 */
struct eu_req *eu_req_new_detached(struct eu_app *app, struct eu_tenant *t,
                                   const char *query_string, eu_req_sink_cb sink, void *arg);

struct bufferevent;
struct eu_conns_hold;
/* bev: the client's connection, now the callee's (free it with
 * bufferevent_free), or NULL when the client had gone. hold (may be NULL):
 * what the connection counts against the caps, the callee's to release
 * with eu_conns_hold_release() (src/http/conns_internal.h) when it ends. */
typedef void (*eu_req_taken_cb)(struct bufferevent *bev, struct eu_conns_hold *hold, void *arg);
/*
 * Takes req's connection away from evhttp for a long-lived stream
 * (WebSocket, server-sent events) and finishes req without an answer: the
 * callee writes its own response head on bev. From a zero-delay event,
 * because evhttp may still be on the stack; taken runs from there. Bytes
 * the client sent after the request are already in bev's input. The
 * connection still counts against [limits] max_connections and
 * max_connections_per_ip until its hold is released.
 */
void eu_req_take_connection(struct eu_req *req, eu_req_taken_cb taken, void *arg);

#endif
