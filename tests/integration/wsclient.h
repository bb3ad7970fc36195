/*
 * A streaming API client for the suites, written here: the WebSocket
 * handshake and masked frames by hand, as RFC 6455 asks of a client, over
 * a raw socket (SSE too reads through it). Shared by the streaming suites;
 * every call asserts what must hold of the server's side.
 */
#ifndef EUNHA_IT_WSCLIENT_H
#define EUNHA_IT_WSCLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "world.h"

/* A socket connected to 127.0.0.1:port (rcvbuf: SO_RCVBUF, 0 default). */
int eu_ws_tcp_connect(int port, int rcvbuf);
/* Sends all n bytes of buf. */
void eu_ws_send_all(int fd, const void *buf, size_t n);
/* Reads exactly n bytes within ms; false on timeout or close. */
bool eu_ws_recv_exact(int fd, void *buf, size_t n, int ms);
/* Reads a response head; returns its status and copies it to head. */
int eu_ws_read_head(int fd, char *head, size_t len);

/* Opens /api/v1/streaming<query> on host of w's server with token (NULL:
 * none) as a WebSocket, asserting the upgrade; the response head is
 * copied to head. Caller closes. */
int eu_ws_open(struct world *w, const char *host, const char *token, const char *query, int rcvbuf,
               char *head, size_t headlen);
/* Sends a masked frame (clients must mask). */
void eu_ws_send_frame(int fd, int opcode, const char *data, size_t n);
/* Sends a text frame. */
void eu_ws_send(int fd, const char *text);
/* The next text message within ms (pings answered, other control frames
 * skipped), or NULL. Caller frees. */
char *eu_ws_recv(int fd, int within);
/* The next message whose event is event (others skipped), the whole
 * message object; NULL when none comes within ms. Caller decrefs. */
json_t *eu_ws_wait(int fd, const char *event, int ms);
/* The payload of msg parsed (its "payload" is JSON text). Caller decrefs. */
json_t *eu_ws_payload(json_t *msg);
/* msg's stream name (borrowed from msg). */
const char *eu_ws_stream0(json_t *msg);

/* Posts a public status with text on host as token; its id (caller frees). */
char *eu_ws_post(struct world *w, const char *host, const char *token, const char *text);
/* POSTs body (may be NULL) to the path made from fmt on host as token and
 * asserts the status is want. */
void eu_ws_post_path(struct world *w, const char *host, const char *token, const char *body,
                     long want, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Asserts a streamed entity equals the REST one, printing both. */
void eu_ws_assert_same_json(json_t *got, json_t *want);
/* Subscribing is asynchronous on the server (Redis confirms later):
 * statuses by token on host are posted until one arrives on fd's stream,
 * proving the subscription live; asserts. */
void eu_ws_settle(struct world *w, const char *host, int fd, const char *stream, const char *token);
/* eu_ws_open() of token's stream on host (?stream=<stream>), settled
 * (eu_ws_settle()) by settler's statuses. Caller closes. */
int eu_ws_open_settled(struct world *w, const char *host, const char *token, const char *stream,
                       const char *settler);
/* Waits for an update of status id on stream (others skipped); asserts,
 * printing s's log when it never comes. */
void eu_ws_expect_update(struct eu_it_server *s, int fd, const char *stream, const char *id);
/* Reads updates until id arrives on stream, failing if bad does first. */
void eu_ws_expect_update_not(int fd, const char *stream, const char *id, const char *bad);

/* Opens path_and_query on host of w's server as an SSE stream, asserting
 * it is one. Caller closes. */
int eu_sse_open(struct world *w, const char *host, const char *path_and_query);
/* The next SSE event named event within ms: its data (caller frees), or
 * NULL. */
char *eu_sse_wait(int fd, const char *event, int ms);

#endif
