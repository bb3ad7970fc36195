/*
 * The suites' streaming client (wsclient.h).
 */
#include "wsclient.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

/* ---------------------------------------------------------- raw sockets */

int
eu_ws_tcp_connect(int port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    if (rcvbuf)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

void
eu_ws_send_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        ck_assert_int_gt(k, 0);
        p += k;
        n -= (size_t)k;
    }
}

/* Reads exactly n bytes within ms; false on timeout or close. */
bool
eu_ws_recv_exact(int fd, void *buf, size_t n, int ms)
{
    char *p = buf;
    long long end = eu_it_now_ms() + ms;
    while (n) {
        struct pollfd pf = {fd, POLLIN, 0};
        int left = (int)(end - eu_it_now_ms());
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            return false;
        ssize_t k = recv(fd, p, n, 0);
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Reads a response head; returns its status and copies it to head. */
int
eu_ws_read_head(int fd, char *head, size_t len)
{
    size_t n = 0;
    while (n + 1 < len) {
        if (!eu_ws_recv_exact(fd, head + n, 1, 5000))
            break;
        n++;
        head[n] = '\0';
        if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    head[n] = '\0';
    int status = 0;
    sscanf(head, "HTTP/1.1 %d", &status);
    return status;
}

/* ------------------------------------------------------------ WebSocket */

int
eu_ws_open(struct world *w, const char *host, const char *token, const char *query, int rcvbuf,
           char *head, size_t headlen)
{
    int fd = eu_ws_tcp_connect(w->s->public_port, rcvbuf);
    char req[2048];
    snprintf(req, sizeof(req),
             "GET /api/v1/streaming%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
             "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             "Sec-WebSocket-Version: 13\r\n%s%s%s\r\n",
             query ? query : "", host, token ? "Authorization: Bearer " : "", token ? token : "",
             token ? "\r\n" : "");
    eu_ws_send_all(fd, req, strlen(req));
    int st = eu_ws_read_head(fd, head, headlen);
    ck_assert_msg(st == 101, "no upgrade: %s", head);
    /* RFC 6455's own example key and answer. */
    ck_assert_ptr_nonnull(strstr(head, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    return fd;
}

/* Sends a masked frame (clients must mask). */
void
eu_ws_send_frame(int fd, int opcode, const char *data, size_t n)
{
    unsigned char h[14];
    size_t hl = 0;
    h[hl++] = (unsigned char)(0x80 | opcode);
    if (n < 126) {
        h[hl++] = (unsigned char)(0x80 | n);
    } else {
        h[hl++] = 0x80 | 126;
        h[hl++] = (unsigned char)(n >> 8);
        h[hl++] = (unsigned char)n;
    }
    unsigned char mask[4] = {0x12, 0x34, 0x56, 0x78};
    memcpy(h + hl, mask, 4);
    hl += 4;
    eu_ws_send_all(fd, h, hl);
    char *m = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        m[i] = (char)(data[i] ^ mask[i % 4]);
    eu_ws_send_all(fd, m, n);
    free(m);
}

void
eu_ws_send(int fd, const char *text)
{
    eu_ws_send_frame(fd, 1, text, strlen(text));
}

/* The next text message within ms (pings answered, other control frames
 * skipped), or NULL. The deadline holds across pings: a heartbeat must not
 * keep a wait for a lost event going. Caller frees. */
char *
eu_ws_recv(int fd, int within)
{
    long long end = eu_it_now_ms() + within;
    for (;;) {
        int ms = (int)(end - eu_it_now_ms());
        if (ms <= 0)
            return NULL;
        unsigned char h[2];
        if (!eu_ws_recv_exact(fd, h, 2, ms))
            return NULL;
        /* A frame begun is read to its end, whatever is left. */
        ms = ms < 5000 ? 5000 : ms;
        int op = h[0] & 0x0f;
        uint64_t n = h[1] & 0x7f;
        ck_assert_msg(!(h[1] & 0x80), "a server frame must not be masked");
        if (n == 126) {
            unsigned char e[2];
            ck_assert(eu_ws_recv_exact(fd, e, 2, ms));
            n = ((uint64_t)e[0] << 8) | e[1];
        } else if (n == 127) {
            unsigned char e[8];
            ck_assert(eu_ws_recv_exact(fd, e, 8, ms));
            n = 0;
            for (int i = 0; i < 8; i++)
                n = (n << 8) | e[i];
        }
        char *p = malloc(n + 1);
        ck_assert(n == 0 || eu_ws_recv_exact(fd, p, n, ms));
        p[n] = '\0';
        if (op == 1)
            return p;
        if (op == 9)
            eu_ws_send_frame(fd, 10, p, n);
        if (op == 8) {
            free(p);
            return NULL;
        }
        free(p);
    }
}

/* The next message whose event is event (others skipped); NULL when none
 * comes within ms. The result is the whole message object. */
json_t *
eu_ws_wait(int fd, const char *event, int ms)
{
    long long end = eu_it_now_ms() + ms;
    for (;;) {
        int left = (int)(end - eu_it_now_ms());
        if (left <= 0)
            return NULL;
        char *m = eu_ws_recv(fd, left);
        if (!m)
            return NULL;
        json_t *j = json_loads(m, 0, NULL);
        free(m);
        const char *ev = json_string_value(json_object_get(j, "event"));
        if (ev && strcmp(ev, event) == 0)
            return j;
        json_decref(j);
    }
}

/* The payload of msg parsed (its "payload" is JSON text). */
json_t *
eu_ws_payload(json_t *msg)
{
    const char *p = json_string_value(json_object_get(msg, "payload"));
    ck_assert_ptr_nonnull(p);
    json_t *j = json_loads(p, 0, NULL);
    ck_assert_ptr_nonnull(j);
    return j;
}

const char *
eu_ws_stream0(json_t *msg)
{
    return json_string_value(json_array_get(json_object_get(msg, "stream"), 0));
}

char *
eu_ws_post(struct world *w, const char *host, const char *token, const char *text)
{
    struct eu_it_resp r = {0};
    json_t *b = json_pack("{s:s}", "status", text);
    char *body = json_dumps(b, 0);
    json_decref(b);
    eu_it_callf(w->s, &r, host, "POST", token, body, "/api/v1/statuses");
    free(body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

void
eu_ws_post_path(struct world *w, const char *host, const char *token, const char *body, long want,
                const char *fmt, ...)
{
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, host, "POST", token, body, "%s", path);
    EU_IT_EXPECT_STATUS(&r, want);
    eu_it_resp_free(&r);
}

void
eu_ws_assert_same_json(json_t *got, json_t *want)
{
    if (!json_equal(got, want)) {
        char *a = json_dumps(got, JSON_SORT_KEYS), *b = json_dumps(want, JSON_SORT_KEYS);
        ck_abort_msg("streamed %s\nREST     %s", a, b);
    }
}

/* Subscribing is asynchronous on the server (Redis confirms later): a
 * status posted and streamed proves the subscription is live. */
void
eu_ws_settle(struct world *w, const char *host, int fd, const char *stream, const char *token)
{
    for (int i = 0; i < 50; i++) {
        char *id = eu_ws_post(w, host, token, "settling");
        json_t *m = eu_ws_wait(fd, "update", 400);
        bool ok = false;
        while (m) {
            json_t *st = eu_ws_payload(m);
            ok = strcmp(eu_ws_stream0(m), stream) == 0 &&
                 strcmp(json_string_value(json_object_get(st, "id")), id) == 0;
            json_decref(st);
            json_decref(m);
            if (ok)
                break;
            m = eu_ws_wait(fd, "update", 400);
        }
        free(id);
        if (ok)
            return;
    }
    ck_abort_msg("stream %s never came up", stream);
}

int
eu_ws_open_settled(struct world *w, const char *host, const char *token, const char *stream,
                   const char *settler)
{
    char query[64], head[2048];
    snprintf(query, sizeof(query), "?stream=%s", stream);
    int fd = eu_ws_open(w, host, token, query, 0, head, sizeof(head));
    eu_ws_settle(w, host, fd, stream, settler);
    return fd;
}

/* Waits for an update of status id on stream (others skipped); asserts.
 * The deadline ends a test that lost an event, not a slow one: with one
 * render at a time for the process (test_no_silent_drops) and suites
 * beside it, eighteen events took longer than 10 s to come in a parallel
 * run. */
void
eu_ws_expect_update(struct eu_it_server *s, int fd, const char *stream, const char *id)
{
    long long end = eu_it_now_ms() + 30000;
    while (eu_it_now_ms() < end) {
        json_t *m = eu_ws_wait(fd, "update", (int)(end - eu_it_now_ms()));
        if (!m)
            eu_it_server_print_log(s);
        ck_assert_msg(m != NULL, "no update of %s on %s", id, stream);
        json_t *st = eu_ws_payload(m);
        bool hit = strcmp(eu_ws_stream0(m), stream) == 0 &&
                   strcmp(json_string_value(json_object_get(st, "id")), id) == 0;
        json_decref(st);
        json_decref(m);
        if (hit)
            return;
    }
    ck_abort_msg("no update of %s on %s", id, stream);
}

/* Reads updates until id arrives on stream, failing if any of bad does. */
void
eu_ws_expect_update_not(int fd, const char *stream, const char *id, const char *bad)
{
    long long end = eu_it_now_ms() + 10000;
    while (eu_it_now_ms() < end) {
        json_t *m = eu_ws_wait(fd, "update", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "no update of %s", id);
        json_t *st = eu_ws_payload(m);
        const char *got = json_string_value(json_object_get(st, "id"));
        ck_assert_msg(strcmp(got, bad) != 0, "status %s must not arrive", bad);
        bool hit = strcmp(eu_ws_stream0(m), stream) == 0 && strcmp(got, id) == 0;
        json_decref(st);
        json_decref(m);
        if (hit)
            return;
    }
    ck_abort_msg("no update of %s", id);
}

int
eu_sse_open(struct world *w, const char *host, const char *path_and_query)
{
    int fd = eu_ws_tcp_connect(w->s->public_port, 0);
    char req[1024];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path_and_query, host);
    eu_ws_send_all(fd, req, strlen(req));
    char head[2048];
    int st = eu_ws_read_head(fd, head, sizeof(head));
    ck_assert_msg(st == 200, "SSE refused: %s", head);
    ck_assert_ptr_nonnull(strstr(head, "text/event-stream"));
    return fd;
}

/* The next SSE event named event within ms: its data (caller frees). */
char *
eu_sse_wait(int fd, const char *event, int ms)
{
    char buf[65536];
    size_t n = 0;
    long long end = eu_it_now_ms() + ms;
    while (n + 1 < sizeof(buf)) {
        int left = (int)(end - eu_it_now_ms());
        if (left <= 0 || !eu_ws_recv_exact(fd, buf + n, 1, left))
            return NULL;
        n++;
        buf[n] = '\0';
        if (n >= 2 && buf[n - 1] == '\n' && buf[n - 2] == '\n') {
            char name[64] = "";
            char *ev = strstr(buf, "event: ");
            if (ev)
                sscanf(ev, "event: %63s", name);
            char *data = strstr(buf, "data: ");
            if (ev && data && strcmp(name, event) == 0) {
                data += 6;
                char *nl = strchr(data, '\n');
                *nl = '\0';
                return strdup(data);
            }
            n = 0;
        }
    }
    return NULL;
}
