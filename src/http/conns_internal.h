/*
 * The connections of the HTTP server, as opposed to the requests on them:
 * caps on how many are open (in all and per client address) and the
 * deadlines for sending headers and body. Used by server.c, and by
 * streaming.c for the holds of its connections; the contracts are here,
 * the reasons in conns.c.
 */
#ifndef EUNHA_HTTP_CONNS_INTERNAL_H
#define EUNHA_HTTP_CONNS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

struct eu_app;
struct evhttp;
struct evhttp_connection;
struct evhttp_request;
struct eu_http_conn_stats;

struct eu_conns;
struct eu_conns_hold;

/* One per server, for both listeners. Reads its limits from app->cfg at
 * each use, so a SIGHUP applies to the next connection. Free with
 * eu_conns_free() after every evhttp it watches has been freed. */
struct eu_conns *eu_conns_new(struct eu_app *app);
void eu_conns_free(struct eu_conns *cs);

/* Makes cs see every connection http accepts from now on; call before
 * binding. Connections of a capped listener count against
 * [limits] max_connections and max_connections_per_ip. */
void eu_conns_watch(struct eu_conns *cs, struct evhttp *http, bool capped);

/* The request on ev's connection has been read and is about to be handled:
 * the connection's read deadline stops. Returns how many microseconds ago
 * its headers were complete, the point the request deadline counts from (0
 * when not known). */
uint64_t eu_conns_request_started(struct eu_conns *cs, struct evhttp_request *ev);

/* The answer on evcon (which may be NULL: the client left) is being sent,
 * so the connection's next request may begin. */
void eu_conns_reply_sending(struct eu_conns *cs, struct evhttp_connection *evcon);

/*
 * evcon's connection is being taken for a stream and is about to be freed
 * by evhttp: its counts against max_connections and max_connections_per_ip
 * move to the returned hold, so the stream still counts, until
 * eu_conns_hold_release(). NULL when evcon was not counted (the admin
 * listener, a trusted proxy). Release every hold before eu_conns_free().
 */
struct eu_conns_hold *eu_conns_hold(struct eu_conns *cs, struct evhttp_connection *evcon);
/* Counts the stream off and frees h; NULL is ignored. */
void eu_conns_hold_release(struct eu_conns_hold *h);

/* Counters and the effective cap, for /metrics. */
void eu_conns_stats(const struct eu_conns *cs, struct eu_http_conn_stats *out);

#endif
