/*
 * The streaming API end to end: a WebSocket client written here (the
 * handshake and masked frames by hand, as RFC 6455 asks of a client) and
 * SSE over a raw socket, against a real server, PostgreSQL and Redis.
 * Events are caused through the REST endpoints of another account; what
 * must never arrive is shown by a later event that does arrive (events of
 * one channel come in the order they were published), so no test waits on
 * a timeout to pass. Two statuses posted back to back may be published in
 * either order (each is looked up on its own connection first): a proof
 * can overtake what it follows, which weakens such a test but never fails
 * it, and a test awaiting several events collects them in any order.
 */
#include "world.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TIMEOUT 120
#define HOST "s.example"
#define DECOY "decoy.example"

/* The running test's server, whose log a lost event prints. */
static struct eu_it_server *current;

/* dave lives on the decoy tenant; extra is appended to the config. */
static void
world_start_opts(struct world *w, const char *extra)
{
    static struct eu_it_world_opts o = {
        .host = HOST,
        .decoy = DECOY,
        .users = {{"alice"}, {"bob"}, {"carol"}, {"dave", DECOY}},
    };
    o.extra_toml = extra;
    eu_it_world_start(w, &o);
    current = w->s;
}

static void
world_start(struct world *w)
{
    world_start_opts(w, NULL);
}

static char *
post_on(struct world *w, const char *host, const char *token, const char *text)
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

static char *
post(struct world *w, const char *token, const char *text)
{
    return post_on(w, HOST, token, text);
}

/* POSTs to the path made from fmt and asserts the status. */
static void post_path(struct world *w, const char *token, const char *body, long want,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void
post_path(struct world *w, const char *token, const char *body, long want, const char *fmt, ...)
{
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "POST", token, body, "%s", path);
    EU_IT_EXPECT_STATUS(&r, want);
    eu_it_resp_free(&r);
}

/* ---------------------------------------------------------- raw sockets */

static int
tcp_connect(int port, int rcvbuf)
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

static void
send_all(int fd, const void *buf, size_t n)
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
static bool
recv_exact(int fd, void *buf, size_t n, int ms)
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
static int
read_head(int fd, char *head, size_t len)
{
    size_t n = 0;
    while (n + 1 < len) {
        if (!recv_exact(fd, head + n, 1, 5000))
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

static int
ws_open_ex(struct world *w, const char *host, const char *token, const char *query, int rcvbuf,
           char *head, size_t headlen)
{
    int fd = tcp_connect(w->s->public_port, rcvbuf);
    char req[2048];
    snprintf(req, sizeof(req),
             "GET /api/v1/streaming%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
             "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             "Sec-WebSocket-Version: 13\r\n%s%s%s\r\n",
             query ? query : "", host, token ? "Authorization: Bearer " : "", token ? token : "",
             token ? "\r\n" : "");
    send_all(fd, req, strlen(req));
    int st = read_head(fd, head, headlen);
    ck_assert_msg(st == 101, "no upgrade: %s", head);
    /* RFC 6455's own example key and answer. */
    ck_assert_ptr_nonnull(strstr(head, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    return fd;
}

static int
ws_open(struct world *w, const char *token)
{
    char head[2048];
    return ws_open_ex(w, HOST, token, NULL, 0, head, sizeof(head));
}

/* Sends a masked frame (clients must mask). */
static void
ws_send_frame(int fd, int opcode, const char *data, size_t n)
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
    send_all(fd, h, hl);
    char *m = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        m[i] = (char)(data[i] ^ mask[i % 4]);
    send_all(fd, m, n);
    free(m);
}

static void
ws_send(int fd, const char *text)
{
    ws_send_frame(fd, 1, text, strlen(text));
}

/* The next text message within ms (pings answered, other control frames
 * skipped), or NULL. The deadline holds across pings: a heartbeat must not
 * keep a wait for a lost event going. Caller frees. */
static char *
ws_recv(int fd, int within)
{
    long long end = eu_it_now_ms() + within;
    for (;;) {
        int ms = (int)(end - eu_it_now_ms());
        if (ms <= 0)
            return NULL;
        unsigned char h[2];
        if (!recv_exact(fd, h, 2, ms))
            return NULL;
        /* A frame begun is read to its end, whatever is left. */
        ms = ms < 5000 ? 5000 : ms;
        int op = h[0] & 0x0f;
        uint64_t n = h[1] & 0x7f;
        ck_assert_msg(!(h[1] & 0x80), "a server frame must not be masked");
        if (n == 126) {
            unsigned char e[2];
            ck_assert(recv_exact(fd, e, 2, ms));
            n = ((uint64_t)e[0] << 8) | e[1];
        } else if (n == 127) {
            unsigned char e[8];
            ck_assert(recv_exact(fd, e, 8, ms));
            n = 0;
            for (int i = 0; i < 8; i++)
                n = (n << 8) | e[i];
        }
        char *p = malloc(n + 1);
        ck_assert(n == 0 || recv_exact(fd, p, n, ms));
        p[n] = '\0';
        if (op == 1)
            return p;
        if (op == 9)
            ws_send_frame(fd, 10, p, n);
        if (op == 8) {
            free(p);
            return NULL;
        }
        free(p);
    }
}

/* The next message whose event is event (others skipped); NULL when none
 * comes within ms. The result is the whole message object. */
static json_t *
ws_wait(int fd, const char *event, int ms)
{
    long long end = eu_it_now_ms() + ms;
    for (;;) {
        int left = (int)(end - eu_it_now_ms());
        if (left <= 0)
            return NULL;
        char *m = ws_recv(fd, left);
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
static json_t *
payload(json_t *msg)
{
    const char *p = json_string_value(json_object_get(msg, "payload"));
    ck_assert_ptr_nonnull(p);
    json_t *j = json_loads(p, 0, NULL);
    ck_assert_ptr_nonnull(j);
    return j;
}

static const char *
stream0(json_t *msg)
{
    return json_string_value(json_array_get(json_object_get(msg, "stream"), 0));
}

/* Waits for an update of status id on stream (others skipped); asserts.
 * The deadline ends a test that lost an event, not a slow one: with one
 * render at a time for the process (test_no_silent_drops) and suites
 * beside it, eighteen events took longer than 10 s to come in a parallel
 * run. */
static void
expect_update(int fd, const char *stream, const char *id)
{
    long long end = eu_it_now_ms() + 30000;
    while (eu_it_now_ms() < end) {
        json_t *m = ws_wait(fd, "update", (int)(end - eu_it_now_ms()));
        if (!m)
            eu_it_server_print_log(current);
        ck_assert_msg(m != NULL, "no update of %s on %s", id, stream);
        json_t *st = payload(m);
        bool hit = strcmp(stream0(m), stream) == 0 &&
                   strcmp(json_string_value(json_object_get(st, "id")), id) == 0;
        json_decref(st);
        json_decref(m);
        if (hit)
            return;
    }
    ck_abort_msg("no update of %s on %s", id, stream);
}

/* Reads updates until id arrives on stream, failing if any of bad does. */
static void
expect_update_not(int fd, const char *stream, const char *id, const char *bad)
{
    long long end = eu_it_now_ms() + 10000;
    while (eu_it_now_ms() < end) {
        json_t *m = ws_wait(fd, "update", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "no update of %s", id);
        json_t *st = payload(m);
        const char *got = json_string_value(json_object_get(st, "id"));
        ck_assert_msg(strcmp(got, bad) != 0, "status %s must not arrive", bad);
        bool hit = strcmp(stream0(m), stream) == 0 && strcmp(got, id) == 0;
        json_decref(st);
        json_decref(m);
        if (hit)
            return;
    }
    ck_abort_msg("no update of %s", id);
}

/* Subscribing is asynchronous on the server (Redis confirms later): a
 * status posted and streamed proves the subscription is live. */
static void
settle(struct world *w, int fd, const char *stream, const char *token)
{
    for (int i = 0; i < 50; i++) {
        char *id = post(w, token, "settling");
        json_t *m = ws_wait(fd, "update", 400);
        bool ok = false;
        while (m) {
            json_t *st = payload(m);
            ok = strcmp(stream0(m), stream) == 0 &&
                 strcmp(json_string_value(json_object_get(st, "id")), id) == 0;
            json_decref(st);
            json_decref(m);
            if (ok)
                break;
            m = ws_wait(fd, "update", 400);
        }
        free(id);
        if (ok)
            return;
    }
    ck_abort_msg("stream %s never came up", stream);
}

/* ------------------------------------------------------------------ SSE */

static int
sse_open(struct world *w, const char *path_and_query)
{
    int fd = tcp_connect(w->s->public_port, 0);
    char req[1024];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path_and_query, HOST);
    send_all(fd, req, strlen(req));
    char head[2048];
    int st = read_head(fd, head, sizeof(head));
    ck_assert_msg(st == 200, "SSE refused: %s", head);
    ck_assert_ptr_nonnull(strstr(head, "text/event-stream"));
    return fd;
}

/* The next SSE event named event within ms: its data (caller frees). */
static char *
sse_wait(int fd, const char *event, int ms)
{
    char buf[65536];
    size_t n = 0;
    long long end = eu_it_now_ms() + ms;
    while (n + 1 < sizeof(buf)) {
        int left = (int)(end - eu_it_now_ms());
        if (left <= 0 || !recv_exact(fd, buf + n, 1, left))
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

/* ---------------------------------------------------------------- tests */

START_TEST(test_ws_update_notification_delete)
{
    struct world w;
    world_start(&w);
    post_path(&w, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/follow",
              eu_it_id(&w, "bob"));
    int fd = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, fd, "public", eu_it_tok(&w, "carol"));

    char *id = post(&w, eu_it_tok(&w, "bob"), "hello streams");
    /* Once on each stream, rendered for alice. */
    long long end = eu_it_now_ms() + 10000;
    bool on_user = false, on_public = false;
    while ((!on_user || !on_public) && eu_it_now_ms() < end) {
        json_t *m = ws_wait(fd, "update", 10000);
        ck_assert_ptr_nonnull(m);
        json_t *st = payload(m);
        if (strcmp(json_string_value(json_object_get(st, "id")), id) == 0) {
            ck_assert_str_eq(json_string_value(eu_it_jpath(st, "account.username")), "bob");
            ck_assert_ptr_nonnull(
                strstr(json_string_value(json_object_get(st, "content")), "hello streams"));
            ck_assert(json_is_false(json_object_get(st, "favourited")));
            if (strcmp(stream0(m), "user") == 0)
                on_user = true;
            if (strcmp(stream0(m), "public") == 0)
                on_public = true;
        }
        json_decref(st);
        json_decref(m);
    }
    ck_assert(on_user && on_public);

    /* A mention: a notification on the user stream. */
    char text[128];
    snprintf(text, sizeof(text), "hey @alice");
    char *mention = post(&w, eu_it_tok(&w, "bob"), text);
    json_t *m = ws_wait(fd, "notification", 10000);
    ck_assert_msg(m != NULL, "no notification");
    ck_assert_str_eq(stream0(m), "user");
    json_t *note = payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(note, "type")), "mention");
    ck_assert_str_eq(json_string_value(eu_it_jpath(note, "status.id")), mention);
    json_decref(note);
    json_decref(m);

    /* A private mention from someone alice does not follow waits in a
     * request (the default policy): the next notification on the stream is
     * carol's public mention after it. */
    post_path(&w, eu_it_tok(&w, "carol"), "{\"status\":\"@alice psst\",\"visibility\":\"direct\"}",
              200, "/api/v1/statuses");
    char *open_mention = post(&w, eu_it_tok(&w, "carol"), "in the open @alice");
    m = ws_wait(fd, "notification", 10000);
    ck_assert_msg(m != NULL, "no notification of the public mention");
    note = payload(m);
    ck_assert_str_eq(json_string_value(eu_it_jpath(note, "status.id")), open_mention);
    json_decref(note);
    json_decref(m);
    free(open_mention);

    /* A follow: a notification too. */
    post_path(&w, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/accounts/%s/follow",
              eu_it_id(&w, "alice"));
    m = ws_wait(fd, "notification", 10000);
    ck_assert_msg(m != NULL, "no follow notification");
    note = payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(note, "type")), "follow");
    json_decref(note);
    json_decref(m);

    /* An edit: status.update with the new text. */
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "bob"), "{\"status\":\"edited words\"}",
                "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    m = ws_wait(fd, "status.update", 10000);
    ck_assert_msg(m != NULL, "no status.update");
    json_t *edited = payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(edited, "id")), id);
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(edited, "content")), "edited words"));
    json_decref(edited);
    json_decref(m);

    /* A filter change: filters_changed on the user stream, no payload. */
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"),
                "{\"title\":\"f\",\"context\":[\"home\"],"
                "\"keywords_attributes\":[{\"keyword\":\"zzz\"}]}",
                "/api/v2/filters");
    EU_IT_EXPECT_STATUS(&r, 200);
    m = ws_wait(fd, "filters_changed", 10000);
    ck_assert_msg(m != NULL, "no filters_changed");
    ck_assert_str_eq(stream0(m), "user");
    ck_assert_ptr_null(json_object_get(m, "payload"));
    json_decref(m);

    /* Deletion: the id string. */
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    m = ws_wait(fd, "delete", 10000);
    ck_assert_msg(m != NULL, "no delete");
    ck_assert_str_eq(json_string_value(json_object_get(m, "payload")), id);
    json_decref(m);

    close(fd);
    free(id);
    free(mention);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_ws_shunned_filtered_decoy_unsubscribe)
{
    struct world w;
    world_start(&w);
    int fd = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public:local\"}");
    settle(&w, fd, "public", eu_it_tok(&w, "bob"));

    /* Muted author: never. */
    post_path(&w, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/mute",
              eu_it_id(&w, "carol"));
    char *muted = post(&w, eu_it_tok(&w, "carol"), "from a muted account");
    char *after = post(&w, eu_it_tok(&w, "bob"), "after the muted one");
    expect_update_not(fd, "public", after, muted);
    free(muted);
    free(after);

    /* Blocked author: never. */
    post_path(&w, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/unmute",
              eu_it_id(&w, "carol"));
    post_path(&w, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/block",
              eu_it_id(&w, "carol"));
    char *blocked = post(&w, eu_it_tok(&w, "carol"), "from a blocked account");
    after = post(&w, eu_it_tok(&w, "bob"), "after the blocked one");
    expect_update_not(fd, "public", after, blocked);
    free(blocked);
    free(after);

    /* A hide filter in the public context: never; a warn filter: flagged. */
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"),
                "{\"title\":\"no spoilers\",\"context\":[\"public\"],\"filter_action\":\"hide\","
                "\"keywords_attributes\":[{\"keyword\":\"spoilerword\"}]}",
                "/api/v2/filters");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"),
                "{\"title\":\"careful\",\"context\":[\"public\"],\"filter_action\":\"warn\","
                "\"keywords_attributes\":[{\"keyword\":\"warnword\"}]}",
                "/api/v2/filters");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    char *hidden = post(&w, eu_it_tok(&w, "bob"), "the spoilerword is here");
    char *warned = post(&w, eu_it_tok(&w, "bob"), "a warnword here");
    long long end = eu_it_now_ms() + 10000;
    bool seen = false;
    while (!seen && eu_it_now_ms() < end) {
        json_t *m = ws_wait(fd, "update", 10000);
        ck_assert_ptr_nonnull(m);
        json_t *st = payload(m);
        const char *got = json_string_value(json_object_get(st, "id"));
        ck_assert_msg(strcmp(got, hidden) != 0, "a hidden status arrived");
        if (strcmp(got, warned) == 0 && strcmp(stream0(m), "public") == 0) {
            seen = true;
            ck_assert_str_eq(json_string_value(eu_it_jpath(st, "filtered.0.filter.title")),
                             "careful");
        }
        json_decref(st);
        json_decref(m);
    }
    ck_assert(seen);
    free(hidden);
    free(warned);

    /* The decoy tenant's statuses: never. */
    char *decoy = post_on(&w, DECOY, eu_it_tok(&w, "dave"), "from another tenant");
    after = post(&w, eu_it_tok(&w, "bob"), "after the decoy");
    expect_update_not(fd, "public", after, decoy);
    free(decoy);
    free(after);

    /* Unsubscribed from public: only public:local's copy comes. */
    ws_send(fd, "{\"type\":\"unsubscribe\",\"stream\":\"public\"}");
    eu_it_sleep_ms(300);
    char *one = post(&w, eu_it_tok(&w, "bob"), "after unsubscribing");
    char *two = post(&w, eu_it_tok(&w, "bob"), "second after unsubscribing");
    end = eu_it_now_ms() + 10000;
    bool got_two = false;
    while (!got_two && eu_it_now_ms() < end) {
        json_t *m = ws_wait(fd, "update", 10000);
        ck_assert_ptr_nonnull(m);
        json_t *st = payload(m);
        const char *got = json_string_value(json_object_get(st, "id"));
        if (strcmp(got, one) == 0 || strcmp(got, two) == 0)
            ck_assert_str_eq(stream0(m), "public:local");
        got_two = strcmp(got, two) == 0;
        json_decref(st);
        json_decref(m);
    }
    ck_assert(got_two);
    free(one);
    free(two);

    /* Unknown streams are refused with an error message, not a close.
     * Events of the streams above may still be on their way: the error is
     * the first message that is not one. */
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"nonsense\"}");
    char *err = NULL;
    for (int i = 0; i < 20 && !err; i++) {
        char *m = ws_recv(fd, 5000);
        ck_assert_ptr_nonnull(m);
        if (strstr(m, "\"event\""))
            free(m);
        else
            err = m;
    }
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "Unknown stream type") != NULL, "refused with %s", err);
    free(err);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

/*
 * The list stream: alice's list holding bob gets bob's status, rendered for
 * her; carol, naming alice's list, gets nothing from it (the list
 * timeline's ownership check), though bob's status reaches her public
 * stream; a list stream without a list is refused.
 */
START_TEST(test_ws_list)
{
    struct world w;
    world_start(&w);
    post_path(&w, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/follow",
              eu_it_id(&w, "bob"));
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), "{\"title\":\"friends\"}",
                "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *list = strdup(eu_it_json_str(&r, "id"));
    char body[128];
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\"]}", eu_it_id(&w, "bob"));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/lists/%s/accounts",
                list);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);

    char sub[128];
    snprintf(sub, sizeof(sub), "{\"type\":\"subscribe\",\"stream\":\"list\",\"list\":\"%s\"}",
             list);
    int fa = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(fa, sub);
    ws_send(fa, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, fa, "public", eu_it_tok(&w, "carol"));
    int fc = ws_open(&w, eu_it_tok(&w, "carol"));
    ws_send(fc, "{\"type\":\"subscribe\",\"stream\":\"list\"}");
    char *err = ws_recv(fc, 5000);
    ck_assert_msg(err && strstr(err, "Missing list"), "no error for a list stream without a list");
    free(err);
    json_t *m;
    ws_send(fc, sub);
    ws_send(fc, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, fc, "public", eu_it_tok(&w, "alice"));

    char *id = post(&w, eu_it_tok(&w, "bob"), "for my listeners");
    expect_update(fa, "list", id);
    /* carol: bob's status on public, never on the list. */
    long long end = eu_it_now_ms() + 10000;
    bool on_public = false;
    while (eu_it_now_ms() < end) {
        m = ws_wait(fc, "update", on_public ? 1000 : (int)(end - eu_it_now_ms()));
        if (!m)
            break;
        ck_assert_str_ne(stream0(m), "list");
        json_t *st = payload(m);
        if (strcmp(json_string_value(json_object_get(st, "id")), id) == 0)
            on_public = true;
        json_decref(st);
        json_decref(m);
    }
    ck_assert(on_public);

    /* Over SSE: without a list, 400. */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/streaming/list");
    EU_IT_EXPECT_ERROR(&r, 400);
    eu_it_resp_free(&r);
    close(fa);
    close(fc);
    free(id);
    free(list);
    eu_it_world_stop(&w);
}
END_TEST

/*
 * Hashtag streams: each event is labelled with the tag it was subscribed
 * under (two hashtag streams on one connection differ only by it), the
 * local one gets local statuses, and a tag no channel can be named by is
 * refused, over SSE with a 400 rather than an empty stream.
 */
START_TEST(test_ws_hashtags)
{
    struct world w;
    world_start(&w);
    int fd = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"hashtag\",\"tag\":\"foo\"}");
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"hashtag:local\",\"tag\":\"foo\"}");
    /* Last: Redis takes one connection's SUBSCRIBEs in order, so once bar
     * is live the others are too. */
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"hashtag\",\"tag\":\"bar\"}");
    json_t *m = NULL;
    for (int i = 0; i < 50 && !m; i++) {
        char *id = post(&w, eu_it_tok(&w, "bob"), "settling #bar");
        m = ws_wait(fd, "update", 400);
        free(id);
    }
    ck_assert_msg(m != NULL, "hashtag stream never came up");
    json_decref(m);

    char *foo = post(&w, eu_it_tok(&w, "bob"), "about #Foo");
    char *bar = post(&w, eu_it_tok(&w, "bob"), "about #bar");
    bool foo_tag = false, foo_local = false, bar_tag = false;
    long long end = eu_it_now_ms() + 10000;
    while (!(foo_tag && foo_local && bar_tag) && eu_it_now_ms() < end) {
        m = ws_wait(fd, "update", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "missing: #foo %d, local #foo %d, #bar %d", foo_tag, foo_local,
                      bar_tag);
        json_t *st = payload(m);
        const char *id = json_string_value(json_object_get(st, "id"));
        const char *stream = stream0(m);
        const char *tag = json_string_value(json_array_get(json_object_get(m, "stream"), 1));
        ck_assert_ptr_nonnull(tag);
        if (strcmp(id, foo) == 0) {
            ck_assert_str_eq(tag, "foo");
            foo_tag = foo_tag || strcmp(stream, "hashtag") == 0;
            foo_local = foo_local || strcmp(stream, "hashtag:local") == 0;
        } else if (strcmp(id, bar) == 0) {
            ck_assert_str_eq(stream, "hashtag");
            ck_assert_str_eq(tag, "bar");
            bar_tag = true;
        }
        json_decref(st);
        json_decref(m);
    }
    ck_assert(foo_tag && foo_local && bar_tag);

    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"hashtag\",\"tag\":\"a:b\"}");
    char *err = ws_recv(fd, 5000);
    ck_assert_msg(err && strstr(err, "No tag for stream provided"), "no error for tag a:b");
    free(err);
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/streaming/hashtag?tag=a:b");
    EU_IT_EXPECT_ERROR(&r, 400);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/streaming/hashtag/local");
    EU_IT_EXPECT_ERROR(&r, 400);
    eu_it_resp_free(&r);
    free(foo);
    free(bar);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_sse_and_health)
{
    struct world w;
    world_start(&w);
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/streaming/health");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(r.body, "OK");
    /* Advertised on the tenant's own host. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/instance");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(r.json, "urls.streaming_api")), "://" HOST));
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v2/instance");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(r.json, "configuration.urls.streaming")), "://" HOST));
    /* No token: 401; an unknown stream: 400. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/streaming/user");
    EU_IT_EXPECT_STATUS(&r, 401);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/streaming/nonsense");
    EU_IT_EXPECT_STATUS(&r, 400);
    eu_it_resp_free(&r);

    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/public/local?access_token=%s",
             eu_it_tok(&w, "alice"));
    int fd = sse_open(&w, path);
    snprintf(path, sizeof(path), "/api/v1/streaming/user/notification?access_token=%s",
             eu_it_tok(&w, "alice"));
    int nfd = sse_open(&w, path);
    char *id = NULL, *data = NULL;
    for (int i = 0; i < 50 && !data; i++) {
        free(id);
        id = post(&w, eu_it_tok(&w, "bob"), "over SSE");
        data = sse_wait(fd, "update", 400);
    }
    ck_assert_ptr_nonnull(data);
    json_t *st = json_loads(data, 0, NULL);
    ck_assert_ptr_nonnull(st);
    ck_assert_str_eq(json_string_value(eu_it_jpath(st, "account.username")), "bob");
    json_decref(st);
    free(data);
    free(id);

    /* Notifications only on user/notification. */
    char *mention = post(&w, eu_it_tok(&w, "bob"), "@alice over SSE");
    data = sse_wait(nfd, "notification", 10000);
    ck_assert_ptr_nonnull(data);
    st = json_loads(data, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(st, "type")), "mention");
    json_decref(st);
    free(data);
    free(mention);

    /* Deletion reaches SSE as the id. */
    char *gone = post(&w, eu_it_tok(&w, "bob"), "to be deleted");
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", gone);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    data = sse_wait(fd, "delete", 10000);
    ck_assert_ptr_nonnull(data);
    ck_assert_str_eq(data, gone);
    free(data);
    free(gone);
    close(fd);
    close(nfd);
    eu_it_world_stop(&w);
}
END_TEST

/* True when the server's log holds needle. */
static bool
log_has(const struct eu_it_server *s, const char *needle)
{
    FILE *f = fopen(s->log_path, "r");
    char line[4096];
    bool found = false;
    while (f && !found && fgets(line, sizeof(line), f))
        found = strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return found;
}

/* The server's resident memory in KiB (VmRSS). */
static long
rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

START_TEST(test_slow_client_dropped)
{
    /* ASan keeps freed memory in quarantine (256 MiB by default), which
     * would be all the RSS shows; a small one leaves what is held. */
    const char *asan = getenv("ASAN_OPTIONS");
    char opts[1024];
    snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=4", asan ? asan : "",
             asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
    struct world w;
    world_start_opts(&w, "[limits]\nstream_max_output_bytes = 16384\napi_requests_per_5min = 0\n");
    /* A fast reader proves events flow; the slow one never reads. */
    int fast = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(fast, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, fast, "public", eu_it_tok(&w, "bob"));
    char head[2048];
    int slow =
        ws_open_ex(&w, HOST, eu_it_tok(&w, "carol"), "?stream=public", 2048, head, sizeof(head));
    long before = rss_kib(w.s->pid);
    char text[480];
    memset(text, 'x', sizeof(text) - 1);
    text[sizeof(text) - 1] = '\0';
    /* Events of about 2 KiB until the server says it dropped the stream:
     * what the two sockets' kernel buffers hold comes first, then the
     * 16 KiB bound. */
    bool dropped = false;
    for (int i = 0; i < 1500 && !dropped; i++) {
        free(post(&w, eu_it_tok(&w, "bob"), text));
        json_decref(ws_wait(fast, "update", 2000));
        if (i % 10 == 9)
            dropped = log_has(w.s, "closing a stream: over");
    }
    if (!dropped)
        eu_it_server_print_log(w.s);
    ck_assert_msg(dropped, "the slow client was not dropped");
    /* It sees the end once it reads what the kernel already held. */
    bool closed = false;
    char buf[65536];
    long long end = eu_it_now_ms() + 20000;
    while (!closed && eu_it_now_ms() < end) {
        struct pollfd pf = {slow, POLLIN, 0};
        if (poll(&pf, 1, 500) <= 0)
            continue;
        ssize_t k = recv(slow, buf, sizeof(buf), 0);
        closed = k <= 0;
    }
    ck_assert_msg(closed, "the slow client was not disconnected");
    long after = rss_kib(w.s->pid);
    ck_assert_msg(after - before < 64 * 1024, "RSS grew from %ld to %ld KiB", before, after);
    /* The fast reader still gets events. */
    char *id = post(&w, eu_it_tok(&w, "bob"), "still flowing");
    expect_update(fast, "public", id);
    free(id);
    close(slow);
    close(fast);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_redis_restart_resubscribes)
{
    struct world w;
    world_start(&w);
    int fd = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, fd, "public", eu_it_tok(&w, "bob"));
    eu_it_sh("EUNHA_TEST_REDIS_STOP");
    eu_it_sleep_ms(500);
    eu_it_sh("EUNHA_TEST_REDIS_START");
    /* Reconnection takes the backoff; the live mark is set again by the
     * hub's refresh or the next connection, so a fresh one is opened too. */
    int fd2 = ws_open(&w, eu_it_tok(&w, "carol"));
    ws_send(fd2, "{\"type\":\"subscribe\",\"stream\":\"public:local\"}");
    settle(&w, fd, "public", eu_it_tok(&w, "bob"));
    close(fd2);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_sigterm_with_open_streams)
{
    struct world w;
    world_start(&w);
    int fd = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, fd, "public", eu_it_tok(&w, "bob"));
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/public?access_token=%s",
             eu_it_tok(&w, "alice"));
    int sse = sse_open(&w, path);
    long long t0 = eu_it_now_ms();
    /* world_stop() sends SIGTERM and asserts a clean exit. */
    eu_it_world_stop(&w);
    ck_assert_msg(eu_it_now_ms() - t0 < 5000, "shutdown waited on open streams");
    close(fd);
    close(sse);
}
END_TEST

/* ---------------------------------------------------------- direct stream */

/* POSTs a direct status with text as token on host; returns its id. */
static char *
post_direct(struct world *w, const char *token, const char *text)
{
    struct eu_it_resp r = {0};
    json_t *b = json_pack("{s:s, s:s}", "status", text, "visibility", "direct");
    char *body = json_dumps(b, 0);
    json_decref(b);
    eu_it_callf(w->s, &r, HOST, "POST", token, body, "/api/v1/statuses");
    free(body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "visibility", "direct");
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* The "conversation" whose last status is id, within 10 s (others
 * skipped; one whose last status is bad fails); its payload, which the
 * caller decrefs. Always on the direct stream. */
static json_t *
expect_conversation(int fd, const char *id, const char *bad)
{
    long long end = eu_it_now_ms() + 10000;
    while (eu_it_now_ms() < end) {
        json_t *m = ws_wait(fd, "conversation", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "no conversation of %s", id);
        ck_assert_str_eq(stream0(m), "direct");
        json_t *c = payload(m);
        json_decref(m);
        const char *last = json_string_value(eu_it_jpath(c, "last_status.id"));
        ck_assert_ptr_nonnull(last);
        ck_assert_msg(!bad || strcmp(last, bad) != 0, "the conversation of %s arrived", bad);
        if (strcmp(last, id) == 0)
            return c;
        json_decref(c);
    }
    ck_abort_msg("no conversation of %s", id);
    return NULL;
}

/* Reads until the update of id arrives on stream; fails if a conversation,
 * or an update of bad, comes first. */
static void
expect_quiet_until(int fd, const char *stream, const char *id, const char *bad)
{
    long long end = eu_it_now_ms() + 10000;
    while (eu_it_now_ms() < end) {
        char *text = ws_recv(fd, (int)(end - eu_it_now_ms()));
        ck_assert_msg(text != NULL, "no update of %s", id);
        json_t *m = json_loads(text, 0, NULL);
        free(text);
        const char *ev = json_string_value(json_object_get(m, "event"));
        ck_assert_msg(ev && strcmp(ev, "conversation") != 0, "a conversation arrived");
        bool hit = false;
        if (strcmp(ev, "update") == 0) {
            json_t *st = payload(m);
            const char *got = json_string_value(json_object_get(st, "id"));
            ck_assert_msg(!bad || strcmp(got, bad) != 0, "status %s arrived", bad);
            hit = strcmp(got, id) == 0 && strcmp(stream0(m), stream) == 0;
            json_decref(st);
        }
        json_decref(m);
        if (hit)
            return;
    }
    ck_abort_msg("no update of %s", id);
}

/* The first conversation of GET /api/v1/conversations as token. Caller
 * decrefs. */
static json_t *
first_conversation(struct world *w, const char *token)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "GET", token, NULL, "/api/v1/conversations");
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *c = json_incref(json_array_get(r.json, 0));
    ck_assert_ptr_nonnull(c);
    eu_it_resp_free(&r);
    return c;
}

static void
assert_same_json(json_t *got, json_t *want)
{
    if (!json_equal(got, want)) {
        char *a = json_dumps(got, JSON_SORT_KEYS), *b = json_dumps(want, JSON_SORT_KEYS);
        ck_abort_msg("streamed %s\nREST     %s", a, b);
    }
}

/*
 * A direct message from alice to bob: bob (WebSocket, ?stream=direct) and
 * alice (SSE /api/v1/streaming/direct) each get "conversation" holding
 * exactly what GET /api/v1/conversations shows them; bob, following
 * alice, gets "update" on his user stream too, as Mastodon's home fan-out
 * sends; carol (following alice, not a participant) and dave (another
 * tenant) get neither. Deleting it sends "delete" on both direct streams.
 * Tokens without read:statuses, or no valid token, are refused.
 */
START_TEST(test_direct_conversation_delete)
{
    struct world w;
    world_start(&w);
    post_path(&w, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/follow",
              eu_it_id(&w, "alice"));
    post_path(&w, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/accounts/%s/follow",
              eu_it_id(&w, "alice"));
    char head[2048];
    /* The query's stream first, then the user stream: Redis takes one
     * connection's SUBSCRIBEs in order, so once user is live direct is. */
    int fb = ws_open_ex(&w, HOST, eu_it_tok(&w, "bob"), "?stream=direct", 0, head, sizeof(head));
    ws_send(fb, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    settle(&w, fb, "user", eu_it_tok(&w, "bob"));
    int fc = ws_open(&w, eu_it_tok(&w, "carol"));
    ws_send(fc, "{\"type\":\"subscribe\",\"stream\":\"direct\"}");
    ws_send(fc, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    settle(&w, fc, "user", eu_it_tok(&w, "carol"));
    int fd = ws_open_ex(&w, DECOY, eu_it_tok(&w, "dave"), "?stream=direct", 0, head, sizeof(head));
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/direct?access_token=%s",
             eu_it_tok(&w, "alice"));
    int fa = sse_open(&w, path);
    /* alice's SSE stream is live once one of her messages comes back. */
    char *data = NULL;
    for (int i = 0; i < 50 && !data; i++) {
        free(post_direct(&w, eu_it_tok(&w, "alice"), "@bob settling"));
        data = sse_wait(fa, "conversation", 400);
    }
    ck_assert_msg(data != NULL, "alice's direct stream never came up");
    free(data);

    char *dm = post_direct(&w, eu_it_tok(&w, "alice"), "@bob a secret");
    /* bob: the conversation as GET /api/v1/conversations renders it, and
     * the status on his user stream, as Mastodon's home fan-out sends it
     * (in either order). */
    json_t *c = NULL;
    bool updated = false;
    long long end = eu_it_now_ms() + 10000;
    while ((!c || !updated) && eu_it_now_ms() < end) {
        char *text = ws_recv(fb, (int)(end - eu_it_now_ms()));
        ck_assert_msg(text != NULL, "conversation %d, update %d", c != NULL, updated);
        json_t *m = json_loads(text, 0, NULL);
        free(text);
        const char *ev = json_string_value(json_object_get(m, "event"));
        if (strcmp(ev, "update") == 0 || strcmp(ev, "conversation") == 0) {
            json_t *pl = payload(m);
            bool conv = strcmp(ev, "conversation") == 0;
            const char *id = json_string_value(eu_it_jpath(pl, conv ? "last_status.id" : "id"));
            if (strcmp(id, dm) == 0 && conv) {
                ck_assert_str_eq(stream0(m), "direct");
                c = json_incref(pl);
            } else if (strcmp(id, dm) == 0) {
                ck_assert_str_eq(stream0(m), "user");
                updated = true;
            }
            json_decref(pl);
        }
        json_decref(m);
    }
    ck_assert_msg(c && updated, "conversation %d, update %d", c != NULL, updated);
    json_t *rest = first_conversation(&w, eu_it_tok(&w, "bob"));
    assert_same_json(c, rest);
    ck_assert(json_is_true(json_object_get(c, "unread")));
    ck_assert_int_eq(json_array_size(json_object_get(c, "accounts")), 1);
    ck_assert_str_eq(json_string_value(eu_it_jpath(c, "accounts.0.id")), eu_it_id(&w, "alice"));
    ck_assert_str_eq(json_string_value(eu_it_jpath(c, "last_status.visibility")), "direct");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(c, "last_status.content")), "a secret"));
    json_decref(c);
    json_decref(rest);
    /* alice: her own copy, read, with bob as the other participant. */
    end = eu_it_now_ms() + 10000;
    c = NULL;
    while (!c && eu_it_now_ms() < end) {
        data = sse_wait(fa, "conversation", (int)(end - eu_it_now_ms()));
        ck_assert_msg(data != NULL, "no conversation over SSE");
        json_t *j = json_loads(data, 0, NULL);
        free(data);
        ck_assert_ptr_nonnull(j);
        if (strcmp(json_string_value(eu_it_jpath(j, "last_status.id")), dm) == 0)
            c = j;
        else
            json_decref(j);
    }
    ck_assert_ptr_nonnull(c);
    rest = first_conversation(&w, eu_it_tok(&w, "alice"));
    assert_same_json(c, rest);
    ck_assert(json_is_false(json_object_get(c, "unread")));
    ck_assert_str_eq(json_string_value(eu_it_jpath(c, "accounts.0.id")), eu_it_id(&w, "bob"));
    json_decref(c);
    json_decref(rest);

    /* carol follows alice but is not in it: nothing of it, then alice's
     * next public status. */
    char *after = post(&w, eu_it_tok(&w, "alice"), "after the secret");
    expect_quiet_until(fc, "user", after, dm);
    free(after);
    /* dave, on the other tenant: nothing before his own status. */
    bool ok = false;
    for (int i = 0; i < 50 && !ok; i++) {
        char *mine = post_on(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
        json_t *m = NULL;
        while ((m = ws_wait(fd, "update", 400))) {
            json_t *st = payload(m);
            ok = ok || strcmp(json_string_value(json_object_get(st, "id")), mine) == 0;
            json_decref(st);
            json_decref(m);
            if (ok)
                break;
        }
        free(mine);
    }
    ck_assert_msg(ok, "dave's user stream never came up");
    char *dm2 = post_direct(&w, eu_it_tok(&w, "alice"), "@bob another secret");
    json_decref(expect_conversation(fb, dm2, NULL));
    char *mine = post_on(&w, DECOY, eu_it_tok(&w, "dave"), "dave's second");
    expect_quiet_until(fd, "user", mine, dm2);
    free(mine);

    /* Deleted: "delete" with the id on bob's direct stream and alice's. */
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", dm);
    EU_IT_EXPECT_STATUS(&r, 200);
    end = eu_it_now_ms() + 10000;
    bool on_direct = false;
    while (!on_direct && eu_it_now_ms() < end) {
        json_t *m = ws_wait(fb, "delete", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "no delete on bob's direct stream");
        on_direct = strcmp(stream0(m), "direct") == 0 &&
                    strcmp(json_string_value(json_object_get(m, "payload")), dm) == 0;
        json_decref(m);
    }
    ck_assert(on_direct);
    data = sse_wait(fa, "delete", 10000);
    ck_assert_ptr_nonnull(data);
    ck_assert_str_eq(data, dm);
    free(data);
    /* carol: no delete of it either, before alice's next status. */
    after = post(&w, eu_it_tok(&w, "alice"), "after the delete");
    for (;;) {
        char *text = ws_recv(fc, 10000);
        ck_assert_msg(text != NULL, "no update of %s", after);
        json_t *m = json_loads(text, 0, NULL);
        free(text);
        const char *ev = json_string_value(json_object_get(m, "event"));
        ck_assert_msg(strcmp(ev, "delete") != 0, "carol got a delete");
        bool hit = false;
        if (strcmp(ev, "update") == 0) {
            json_t *st = payload(m);
            hit = strcmp(json_string_value(json_object_get(st, "id")), after) == 0;
            json_decref(st);
        }
        json_decref(m);
        if (hit)
            break;
    }
    free(after);

    /* Refused: no token, a token that is not one, a token without
     * read:statuses (over SSE and as a WebSocket subscription). */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/streaming/direct");
    EU_IT_EXPECT_STATUS(&r, 401);
    eu_it_callf(w.s, &r, HOST, "GET", "not-a-token", NULL, "/api/v1/streaming/direct");
    EU_IT_EXPECT_STATUS(&r, 401);
    char *notes = eu_it_user_token(w.s, HOST, "bob", "read:notifications");
    eu_it_callf(w.s, &r, HOST, "GET", notes, NULL, "/api/v1/streaming/direct");
    EU_IT_EXPECT_ERROR(&r, 401);
    eu_it_callf(w.s, &r, HOST, "GET", notes, NULL, "/api/v1/streaming?stream=direct");
    EU_IT_EXPECT_ERROR(&r, 401);
    eu_it_resp_free(&r);
    int fn = ws_open(&w, notes);
    ws_send(fn, "{\"type\":\"subscribe\",\"stream\":\"direct\"}");
    char *err = ws_recv(fn, 5000);
    ck_assert_msg(err && strstr(err, "required scopes"), "no scope error: %s", err);
    free(err);
    close(fn);
    /* read:statuses alone is enough, as in Mastodon. */
    char *statuses = eu_it_user_token(w.s, HOST, "bob", "read:statuses");
    snprintf(path, sizeof(path), "/api/v1/streaming/direct?access_token=%s", statuses);
    close(sse_open(&w, path));

    free(notes);
    free(statuses);
    free(dm);
    free(dm2);
    close(fa);
    close(fb);
    close(fc);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

#define ROB "https://remote.example/users/rob"

/* Queues an ap_inbox job for activity from actor, as the inbox does, and
 * waits until it is done. */
static void
inbox_process(struct world *w, const char *actor, const char *activity)
{
    json_t *act = json_loads(activity, 0, NULL);
    ck_assert_msg(act != NULL, "fixture: %s", activity);
    json_t *body = json_pack("{s:s, s:{s:o, s:s, s:n}}", "kind", "ap_inbox", "payload", "activity",
                             act, "actor", actor, "recipient");
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct eu_it_resp r = {0};
    eu_it_admin(w->s, "POST", "/admin/v1/tenants/" HOST "/jobs", text, &r);
    free(text);
    EU_IT_EXPECT_STATUS(&r, 201);
    char *job = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    char *db = eu_it_tenant_database(w->s, HOST);
    char *tid = eu_it_tenant_id(w->s, HOST);
    long long end = eu_it_now_ms() + 20000;
    long left = 1;
    while (left && eu_it_now_ms() < end) {
        left = eu_it_pg_execf_long(db, "SELECT count(*) FROM jobs WHERE tenant_id = %s AND id = %s",
                                   tid, job);
        if (left)
            eu_it_sleep_ms(50);
    }
    ck_assert_msg(left == 0, "job %s not done", job);
    free(db);
    free(tid);
    free(job);
}

/*
 * bob's direct stream keeps quiet about messages from those he mutes or
 * blocks (as their mentions would not notify him), and hears of one that
 * arrives by federation, and of its Delete.
 */
START_TEST(test_direct_mutes_blocks_federation)
{
    struct world w;
    world_start(&w);
    char head[2048];
    int fb = ws_open_ex(&w, HOST, eu_it_tok(&w, "bob"), "?stream=direct", 0, head, sizeof(head));
    ws_send(fb, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    settle(&w, fb, "user", eu_it_tok(&w, "bob"));

    post_path(&w, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/mute",
              eu_it_id(&w, "carol"));
    char *muted = post_direct(&w, eu_it_tok(&w, "carol"), "@bob from a muted account");
    char *ok = post_direct(&w, eu_it_tok(&w, "alice"), "@bob after the muted one");
    json_decref(expect_conversation(fb, ok, muted));
    free(muted);
    free(ok);

    post_path(&w, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/unmute",
              eu_it_id(&w, "carol"));
    post_path(&w, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/block",
              eu_it_id(&w, "carol"));
    char *blocked = post_direct(&w, eu_it_tok(&w, "carol"), "@bob from a blocked account");
    ok = post_direct(&w, eu_it_tok(&w, "alice"), "@bob after the blocked one");
    json_decref(expect_conversation(fb, ok, blocked));
    free(blocked);
    free(ok);

    /* From rob, a remote account, to bob alone: direct. */
    char *db = eu_it_tenant_database(w.s, HOST);
    char *tid = eu_it_tenant_id(w.s, HOST);
    char *rob = eu_it_remote_account(db, tid, ROB, true);
    inbox_process(&w, ROB,
                  "{\"id\":\"" ROB "/statuses/1/activity\",\"type\":\"Create\",\"actor\":\"" ROB
                  "\",\"object\":{\"id\":\"" ROB "/statuses/1\",\"type\":\"Note\","
                  "\"attributedTo\":\"" ROB "\",\"published\":\"2026-01-01T00:00:00Z\","
                  "\"to\":[\"http://" HOST "/users/bob\"],\"cc\":[],"
                  "\"content\":\"<p>psst bob</p>\",\"tag\":[{\"type\":\"Mention\","
                  "\"href\":\"http://" HOST "/users/bob\",\"name\":\"@bob\"}]}}");
    char *sid = eu_it_pg_execf(db, "SELECT id FROM statuses WHERE tenant_id = %s AND uri = '%s'",
                               tid, ROB "/statuses/1");
    ck_assert_msg(sid != NULL, "the remote message was not stored");
    json_t *c = expect_conversation(fb, sid, NULL);
    ck_assert_str_eq(json_string_value(eu_it_jpath(c, "accounts.0.id")), rob);
    ck_assert_str_eq(json_string_value(eu_it_jpath(c, "last_status.visibility")), "direct");
    ck_assert(json_is_true(json_object_get(c, "unread")));
    json_t *rest = first_conversation(&w, eu_it_tok(&w, "bob"));
    assert_same_json(c, rest);
    json_decref(c);
    json_decref(rest);

    inbox_process(&w, ROB,
                  "{\"id\":\"" ROB "#delete/1\",\"type\":\"Delete\",\"actor\":\"" ROB
                  "\",\"object\":{\"id\":\"" ROB "/statuses/1\",\"type\":\"Tombstone\"}}");
    long long end = eu_it_now_ms() + 10000;
    bool on_direct = false;
    while (!on_direct && eu_it_now_ms() < end) {
        json_t *m = ws_wait(fb, "delete", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "no delete on bob's direct stream");
        on_direct = strcmp(stream0(m), "direct") == 0 &&
                    strcmp(json_string_value(json_object_get(m, "payload")), sid) == 0;
        json_decref(m);
    }
    ck_assert(on_direct);
    free(sid);
    free(rob);
    free(db);
    free(tid);
    close(fb);
    eu_it_world_stop(&w);
}
END_TEST

/* ----------------------------------------------- revocation and limits */

/* Reads n bytes before end (a monotonic ms): 1, 0 at the end of the
 * connection, -1 when end passed. */
static int
read_by(int fd, void *buf, size_t n, long long end)
{
    char *p = buf;
    while (n) {
        struct pollfd pf = {fd, POLLIN, 0};
        int left = (int)(end - eu_it_now_ms());
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            return -1;
        ssize_t k = recv(fd, p, n, 0);
        if (k <= 0)
            return 0;
        p += k;
        n -= (size_t)k;
    }
    return 1;
}

/* Reads frames until the server ends the WebSocket: the code of its close
 * frame (0 when it has none), -1 for the end of the connection without
 * one, -2 when neither came within ms. Messages are skipped. */
static int
ws_wait_close(int fd, int ms)
{
    long long end = eu_it_now_ms() + ms;
    for (;;) {
        unsigned char h[8];
        int rc = read_by(fd, h, 2, end);
        if (rc <= 0)
            return rc == 0 ? -1 : -2;
        int op = h[0] & 0x0f;
        uint64_t n = h[1] & 0x7f;
        if (n >= 126) {
            size_t k = n == 126 ? 2 : 8;
            if ((rc = read_by(fd, h, k, end)) <= 0)
                return rc == 0 ? -1 : -2;
            n = 0;
            for (size_t i = 0; i < k; i++)
                n = (n << 8) | h[i];
        }
        ck_assert_uint_lt(n, 1 << 20);
        unsigned char *p = malloc(n + 1);
        if (n && (rc = read_by(fd, p, n, end)) <= 0) {
            free(p);
            return rc == 0 ? -1 : -2;
        }
        int code = n >= 2 ? (p[0] << 8) | p[1] : 0;
        free(p);
        if (op == 8)
            return code;
    }
}

/* True when the server ends the connection within ms (what it sent
 * before is skipped). */
static bool
wait_eof(int fd, int ms)
{
    long long end = eu_it_now_ms() + ms;
    char buf[4096];
    for (;;) {
        int rc = read_by(fd, buf, 1, end);
        if (rc <= 0)
            return rc == 0;
    }
}

/* A token of USER for app a through the password grant, as a client gets
 * one it may later revoke; caller frees. */
static char *
password_token(struct world *w, const struct eu_it_app *a, const char *user)
{
    char body[512];
    snprintf(body, sizeof(body),
             "grant_type=password&client_id=%s&client_secret=%s&username=%s"
             "&password=correct+horse+battery+staple&scope=read+write",
             a->id, a->secret, user);
    const char *h[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", w->s->public_port, HOST, "/oauth/token", h, body),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *tok = strdup(eu_it_json_str(&r, "access_token"));
    eu_it_resp_free(&r);
    return tok;
}

static void
revoke_token(struct world *w, const struct eu_it_app *a, const char *tok)
{
    char body[512];
    snprintf(body, sizeof(body), "token=%s&client_id=%s&client_secret=%s", tok, a->id, a->secret);
    const char *h[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", w->s->public_port, HOST, "/oauth/revoke", h, body),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

START_TEST(test_revoked_token_closes_streams)
{
    struct world w;
    world_start(&w);
    struct eu_it_app a =
        eu_it_app_create(w.s, HOST,
                         "{\"client_name\":\"Streamer\",\"redirect_uris\":"
                         "\"urn:ietf:wg:oauth:2.0:oob\",\"scopes\":\"read write\"}");
    char *tok = password_token(&w, &a, "alice");
    int ws = ws_open(&w, tok);
    ws_send(ws, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    settle(&w, ws, "user", tok);
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/user?access_token=%s", tok);
    int sse = sse_open(&w, path);
    /* The same account's other token keeps its stream. */
    int other = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(other, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    settle(&w, other, "user", eu_it_tok(&w, "alice"));

    revoke_token(&w, &a, tok);
    ck_assert_int_eq(ws_wait_close(ws, 15000), 1008);
    ck_assert_msg(wait_eof(sse, 15000), "the SSE stream of a revoked token stayed open");
    char *id = post(&w, eu_it_tok(&w, "alice"), "after the revocation");
    expect_update(other, "user", id);
    free(id);
    close(ws);
    close(sse);
    close(other);
    free(tok);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_revoked_in_another_process)
{
    /* A second process of the same deployment (control database, Redis
     * prefix) holds the stream; the token is revoked through the first. */
    struct world w;
    world_start(&w);
    struct eu_it_opts o = {0};
    o.name = w.s->name;
    struct world w2 = w;
    w2.s = eu_it_server_start_opts(&o);
    struct eu_it_app a =
        eu_it_app_create(w.s, HOST,
                         "{\"client_name\":\"Streamer\",\"redirect_uris\":"
                         "\"urn:ietf:wg:oauth:2.0:oob\",\"scopes\":\"read write\"}");
    char *tok = password_token(&w, &a, "alice");
    int ws = ws_open(&w2, tok);
    ws_send(ws, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    settle(&w2, ws, "user", tok);
    revoke_token(&w, &a, tok);
    ck_assert_int_eq(ws_wait_close(ws, 15000), 1008);
    close(ws);
    free(tok);
    ck_assert_int_eq(eu_it_server_stop(w2.s), 0);
    w2.s->keep_databases = true; /* the first server's */
    eu_it_server_free(w2.s);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_suspensions_close_streams)
{
    struct world w;
    world_start(&w);
    int b = ws_open(&w, eu_it_tok(&w, "bob"));
    ws_send(b, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    settle(&w, b, "user", eu_it_tok(&w, "bob"));
    int a = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(a, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, a, "public", eu_it_tok(&w, "alice"));
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/public?access_token=%s",
             eu_it_tok(&w, "carol"));
    int sse = sse_open(&w, path);

    /* An account's suspension ends its streams and no one else's. */
    struct eu_it_resp r = {0};
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/suspend", HOST,
             eu_it_id(&w, "bob"));
    eu_it_admin(w.s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    ck_assert_int_eq(ws_wait_close(b, 15000), 1008);
    char *id = post(&w, eu_it_tok(&w, "carol"), "after bob");
    expect_update(a, "public", id);
    free(id);

    /* A tenant's, every stream of it. */
    eu_it_tenant_patch(w.s, HOST, "{\"state\":\"suspended\"}");
    ck_assert_int_eq(ws_wait_close(a, 15000), 1008);
    ck_assert_msg(wait_eof(sse, 15000), "the SSE stream of a suspended tenant stayed open");
    close(a);
    close(b);
    close(sse);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_ws_message_too_big)
{
    struct world w;
    world_start(&w);
    int fd = ws_open(&w, eu_it_tok(&w, "alice"));
    /* A text frame announcing 1 GiB, and its first kilobyte: refused on
     * its header, not buffered. */
    unsigned char buf[14 + 1024] = {0x81, 0x80 | 127, 0, 0, 0, 0, 0x40, 0, 0, 0, 1, 2, 3, 4};
    memset(buf + 14, 'x', 1024);
    send_all(fd, buf, sizeof(buf));
    ck_assert_int_eq(ws_wait_close(fd, 15000), 1009);
    close(fd);
    /* Commands of an ordinary size still work. */
    int ok = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(ok, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, ok, "public", eu_it_tok(&w, "bob"));
    close(ok);
    eu_it_world_stop(&w);
}
END_TEST

/* GET /api/v1/streaming/health on a new connection: its status. */
static long
health_status(struct world *w)
{
    struct eu_it_resp r = {0};
    ck_assert_int_eq(
        eu_it_http(&r, "GET", w->s->public_port, HOST, "/api/v1/streaming/health", NULL, NULL), 0);
    long st = r.status;
    eu_it_resp_free(&r);
    return st;
}

START_TEST(test_streams_count_against_caps)
{
    struct world w;
    world_start_opts(&w, "[limits]\nmax_connections_per_ip = 3\nmax_streams_per_tenant = 2\n");
    int s1 = ws_open(&w, eu_it_tok(&w, "alice"));
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/public?access_token=%s", eu_it_tok(&w, "bob"));
    int s2 = sse_open(&w, path);
    /* The tenant's budget is spent; the decoy tenant has its own. */
    int fd = tcp_connect(w.s->public_port, 0);
    char req[1024], head[2048];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, HOST);
    send_all(fd, req, strlen(req));
    ck_assert_int_eq(read_head(fd, head, sizeof(head)), 503);
    close(fd);
    /* Two streams and one request fit in the cap, once the server has seen
     * the refused connection go. */
    long st = 0;
    for (int i = 0; i < 100 && st != 200; i++) {
        eu_it_sleep_ms(100);
        st = health_status(&w);
    }
    ck_assert_int_eq(st, 200);
    int s3 = ws_open_ex(&w, DECOY, eu_it_tok(&w, "dave"), NULL, 0, head, sizeof(head));
    /* Three streams from this address: the cap of 3 is reached. */
    ck_assert_int_eq(health_status(&w), 503);
    close(s3);
    st = 0;
    for (int i = 0; i < 100 && st != 200; i++) {
        eu_it_sleep_ms(100);
        st = health_status(&w);
    }
    ck_assert_int_eq(st, 200);
    close(s1);
    close(s2);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_no_silent_drops)
{
    /* One render at a time for the whole process: every event of every
     * listener must still come. */
    struct world w;
    world_start_opts(&w, "[limits]\nstream_max_renders = 1\napi_requests_per_5min = 0\n");
    const char *toks[] = {eu_it_tok(&w, "alice"), eu_it_tok(&w, "bob"), eu_it_tok(&w, "carol")};
    int fds[3];
    /* All three subscribe before any settles: a status posted to settle
     * one is then also the proof for the others, and few renders queue. */
    for (int i = 0; i < 3; i++) {
        fds[i] = ws_open(&w, toks[i]);
        ws_send(fds[i], "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    }
    for (int i = 0; i < 3; i++)
        settle(&w, fds[i], "public", eu_it_tok(&w, "bob"));
    char *ids[6];
    for (int i = 0; i < 6; i++)
        ids[i] = post(&w, eu_it_tok(&w, "bob"), "one of six");
    /* In any order: two statuses posted one after the other are published
     * by two asynchronous lookups, and the second may reach the channel
     * first. What may not happen is that one never comes. */
    for (int i = 0; i < 3; i++) {
        bool seen[6] = {false};
        int left = 6;
        long long end = eu_it_now_ms() + 30000;
        while (left > 0) {
            json_t *m = ws_wait(fds[i], "update", (int)(end - eu_it_now_ms()));
            if (!m)
                eu_it_server_print_log(current);
            ck_assert_msg(m != NULL, "listener %d: %d of 6 updates never came", i, left);
            json_t *st = payload(m);
            const char *got = json_string_value(json_object_get(st, "id"));
            for (int k = 0; k < 6; k++)
                if (!seen[k] && strcmp(got, ids[k]) == 0) {
                    seen[k] = true;
                    left--;
                }
            json_decref(st);
            json_decref(m);
        }
    }
    for (int i = 0; i < 6; i++)
        free(ids[i]);
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    eu_it_world_stop(&w);
}
END_TEST

/* Lines of the server's log holding needle. */
static int
log_count(const struct eu_it_server *s, const char *needle)
{
    FILE *f = fopen(s->log_path, "r");
    char line[4096];
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        n += strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return n;
}

START_TEST(test_redis_restart_no_deaf_window)
{
    struct world w;
    world_start(&w);
    int fd = ws_open(&w, eu_it_tok(&w, "alice"));
    ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, fd, "public", eu_it_tok(&w, "bob"));
    int subs = log_count(w.s, "redis connected (subscriber)");
    int cmds = log_count(w.s, "redis connected (commands)");
    /* A Redis that comes back without its data (no persistence): the
     * test's Redis keeps it, so the tenant's live mark goes first. */
    char *tid = eu_it_tenant_id(w.s, HOST);
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "redis-cli -u '%s' del '%s:{t%s}:stream:live' >/dev/null",
             getenv("EUNHA_TEST_REDIS_URL"), w.s->name, tid);
    free(tid);
    ck_assert_int_eq(system(cmd), 0);
    eu_it_sh("EUNHA_TEST_REDIS_STOP");
    eu_it_sleep_ms(3000);
    eu_it_sh("EUNHA_TEST_REDIS_START");
    /* Once both connections are back, the first status must stream: not
     * only once the live mark's refresh comes round. */
    long long end = eu_it_now_ms() + 30000;
    while ((log_count(w.s, "redis connected (subscriber)") <= subs ||
            log_count(w.s, "redis connected (commands)") <= cmds) &&
           eu_it_now_ms() < end)
        eu_it_sleep_ms(50);
    ck_assert_msg(eu_it_now_ms() < end, "redis never came back");
    char *id = post(&w, eu_it_tok(&w, "bob"), "right after the restart");
    json_t *m = ws_wait(fd, "update", 10000);
    if (!m)
        eu_it_server_print_log(w.s);
    ck_assert_msg(m != NULL, "the first status after the restart did not stream");
    json_t *st = payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(st, "id")), id);
    json_decref(st);
    json_decref(m);
    free(id);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------ render once, send many */

/* The next update on fd of status id on stream (others skipped), parsed;
 * NULL when bad arrives first on any stream (asserted absent by the
 * caller), or nothing within 30 s. Caller decrefs. */
static json_t *
update_of(int fd, const char *stream, const char *id)
{
    long long end = eu_it_now_ms() + 30000;
    while (eu_it_now_ms() < end) {
        json_t *m = ws_wait(fd, "update", (int)(end - eu_it_now_ms()));
        if (!m)
            break;
        json_t *st = payload(m);
        bool hit = strcmp(stream0(m), stream) == 0 &&
                   strcmp(json_string_value(json_object_get(st, "id")), id) == 0;
        json_decref(m);
        if (hit)
            return st;
        json_decref(st);
    }
    eu_it_server_print_log(current);
    ck_abort_msg("no update of %s on %s", id, stream);
    return NULL;
}

/* The status id as GET /api/v1/timelines/public shows it to token: what
 * a per-listener render sent before. Caller decrefs. */
static json_t *
public_page_status(struct world *w, const char *token, const char *id)
{
    long long n = strtoll(id, NULL, 10);
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "GET", token, NULL,
                "/api/v1/timelines/public?since_id=%lld&max_id=%lld&limit=1", n - 1, n + 1);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *st = json_incref(json_array_get(r.json, 0));
    ck_assert_msg(st != NULL, "%s is not on the public timeline", id);
    eu_it_resp_free(&r);
    return st;
}

#define SHARED_EXTRA 6

/*
 * One status, many listeners: carol's public status reaches alice on
 * SHARED_EXTRA + 1 streams, frank's public and user streams (with
 * "filtered" from his warn filter, made after his stream opened), and
 * neither bob (who muted carol before opening) nor erin (who blocks her
 * after opening), nor dave's stream on the decoy tenant. It is rendered
 * once (eunha_stream_shared_renders_total), not per listener
 * (eunha_stream_renders_total counts only an author's own status, which is
 * rendered for its author alone), and what alice gets is what her REST
 * public timeline holds.
 */
START_TEST(test_render_once_send_many)
{
    struct world w;
    static struct eu_it_world_opts o = {
        .host = HOST,
        .decoy = DECOY,
        .users = {{"alice"}, {"bob"}, {"carol"}, {"erin"}, {"frank"}, {"dave", DECOY}},
    };
    eu_it_world_start(&w, &o);
    current = w.s;
    post_path(&w, eu_it_tok(&w, "frank"), NULL, 200, "/api/v1/accounts/%s/follow",
              eu_it_id(&w, "carol"));
    post_path(&w, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/mute",
              eu_it_id(&w, "carol"));
    char head[2048];
    int fa[SHARED_EXTRA + 1];
    for (int i = 0; i <= SHARED_EXTRA; i++) {
        fa[i] =
            ws_open_ex(&w, HOST, eu_it_tok(&w, "alice"), "?stream=public", 0, head, sizeof(head));
        settle(&w, fa[i], "public", eu_it_tok(&w, "bob"));
    }
    /* Each settled by statuses of someone not listening yet (or carol):
     * a listener's own status is rendered for it alone, and one still on
     * its way would count below. */
    int fb = ws_open_ex(&w, HOST, eu_it_tok(&w, "bob"), "?stream=public", 0, head, sizeof(head));
    settle(&w, fb, "public", eu_it_tok(&w, "frank"));
    int fe = ws_open_ex(&w, HOST, eu_it_tok(&w, "erin"), "?stream=public", 0, head, sizeof(head));
    settle(&w, fe, "public", eu_it_tok(&w, "frank"));
    int ff = ws_open_ex(&w, HOST, eu_it_tok(&w, "frank"), "?stream=user", 0, head, sizeof(head));
    ws_send(ff, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    settle(&w, ff, "public", eu_it_tok(&w, "carol"));
    int fd = ws_open_ex(&w, DECOY, eu_it_tok(&w, "dave"), "?stream=public", 0, head, sizeof(head));
    bool ok = false;
    for (int i = 0; i < 50 && !ok; i++) {
        char *mine = post_on(&w, DECOY, eu_it_tok(&w, "dave"), "dave settling");
        json_t *m;
        while (!ok && (m = ws_wait(fd, "update", 400))) {
            json_t *st = payload(m);
            ok = strcmp(json_string_value(json_object_get(st, "id")), mine) == 0;
            json_decref(st);
            json_decref(m);
        }
        free(mine);
    }
    ck_assert_msg(ok, "dave's public stream never came up");

    /* Changed after the streams opened: their states are reloaded. */
    post_path(&w, eu_it_tok(&w, "erin"), NULL, 200, "/api/v1/accounts/%s/block",
              eu_it_id(&w, "carol"));
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "frank"),
                "{\"title\":\"fruit\",\"context\":[\"public\",\"home\"],\"filter_action\":"
                "\"warn\",\"keywords_attributes\":[{\"keyword\":\"kiwi\"}]}",
                "/api/v2/filters");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);

    double shared0 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders0 = eu_it_metric(w.s, "eunha_stream_renders_total");
    double spliced0 = eu_it_metric(w.s, "eunha_stream_spliced_total");
    char *kiwi = post(&w, eu_it_tok(&w, "carol"), "a kiwi for everyone");

    /* alice: every stream, each as her REST public timeline has it. */
    json_t *rest = public_page_status(&w, eu_it_tok(&w, "alice"), kiwi);
    for (int i = 0; i <= SHARED_EXTRA; i++) {
        json_t *st = update_of(fa[i], "public", kiwi);
        assert_same_json(st, rest);
        ck_assert(json_is_false(json_object_get(st, "favourited")));
        ck_assert_int_eq(json_array_size(json_object_get(st, "filtered")), 0);
        json_decref(st);
    }
    json_decref(rest);
    /* frank: flagged on both streams (in either order), by the filter he
     * made after opening. */
    json_t *want = public_page_status(&w, eu_it_tok(&w, "frank"), kiwi);
    bool on_user = false, on_public = false;
    long long end = eu_it_now_ms() + 30000;
    while ((!on_user || !on_public) && eu_it_now_ms() < end) {
        json_t *m = ws_wait(ff, "update", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "frank: user %d, public %d", on_user, on_public);
        json_t *st = payload(m);
        if (strcmp(json_string_value(json_object_get(st, "id")), kiwi) == 0) {
            ck_assert_str_eq(json_string_value(eu_it_jpath(st, "filtered.0.filter.title")),
                             "fruit");
            ck_assert_str_eq(json_string_value(eu_it_jpath(st, "filtered.0.keyword_matches.0")),
                             "kiwi");
            assert_same_json(st, want);
            if (strcmp(stream0(m), "user") == 0)
                on_user = true;
            else
                on_public = true;
        }
        json_decref(st);
        json_decref(m);
    }
    ck_assert(on_user && on_public);
    json_decref(want);
    double shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders1 = eu_it_metric(w.s, "eunha_stream_renders_total");
    double spliced1 = eu_it_metric(w.s, "eunha_stream_spliced_total");
    ck_assert_msg(shared1 - shared0 == 1, "%.0f shared renders", shared1 - shared0);
    ck_assert_msg(renders1 == renders0, "%.0f renders for one listener", renders1 - renders0);
    /* alice's streams, frank's two, bob's and erin's (nothing for them). */
    ck_assert_msg(spliced1 - spliced0 >= SHARED_EXTRA + 5, "%.0f spliced", spliced1 - spliced0);

    /* A filter that expires while the stream is open stops applying: the
     * state held is reloaded once it is out of date. */
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "frank"),
                "{\"title\":\"brief\",\"context\":[\"public\",\"home\"],\"expires_in\":2,"
                "\"filter_action\":\"warn\",\"keywords_attributes\":[{\"keyword\":\"plum\"}]}",
                "/api/v2/filters");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    eu_it_sleep_ms(3500);
    char *plum = post(&w, eu_it_tok(&w, "carol"), "a plum, no more");
    json_t *st = update_of(ff, "public", plum);
    ck_assert_int_eq(json_array_size(json_object_get(st, "filtered")), 0);
    json_decref(st);
    free(plum);

    /* bob (muting carol) and erin (blocking her): alice's next status, not
     * carol's; dave, on the other tenant: his own, not carol's. */
    char *after = post(&w, eu_it_tok(&w, "alice"), "after the kiwi");
    expect_update_not(fb, "public", after, kiwi);
    expect_update_not(fe, "public", after, kiwi);
    char *mine = post_on(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
    expect_update_not(fd, "public", mine, kiwi);
    free(mine);
    free(after);

    free(kiwi);
    for (int i = 0; i <= SHARED_EXTRA; i++)
        close(fa[i]);
    close(fb);
    close(fe);
    close(ff);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

/* The status id as token's REST home timeline shows it, once the home
 * fan-out has put it there. Caller decrefs. */
static json_t *
home_page_status(struct world *w, const char *token, const char *id)
{
    long long n = strtoll(id, NULL, 10);
    for (int i = 0; i < 100; i++) {
        struct eu_it_resp r = {0};
        eu_it_callf(w->s, &r, HOST, "GET", token, NULL,
                    "/api/v1/timelines/home?since_id=%lld&max_id=%lld&limit=1", n - 1, n + 1);
        EU_IT_EXPECT_STATUS(&r, 200);
        json_t *st = json_incref(json_array_get(r.json, 0));
        eu_it_resp_free(&r);
        if (st)
            return st;
        eu_it_sleep_ms(100);
    }
    ck_abort_msg("%s never reached the home timeline", id);
    return NULL;
}

/* The listeners of bob's boost: carol favourited and bookmarked the
 * original, jay has a filter on its text; ivy blocks its author. */
static const char *const BOOST_FANS[] = {"carol", "erin", "frank", "gina", "hank", "jay", "ivy"};
#define BOOST_SEEN 6 /* the first six get it */

/*
 * A reblog, many listeners: bob's boost of alice's status reaches six user
 * streams, rendered once (eunha_stream_shared_renders_total) with the
 * listeners' flags read by one statement, and no render for one listener;
 * each gets what its REST home timeline holds: carol, who favourited and
 * bookmarked the original, with those flags set on it (and nobody else),
 * jay with "filtered" on the original from a filter made after his stream
 * opened. ivy, who blocks alice, gets nothing, nor does dave's user
 * stream on the decoy tenant. Then bob's reply in a conversation carol
 * muted: rendered once as well, "muted" set for her alone.
 */
START_TEST(test_reblog_render_once)
{
    struct world w;
    static struct eu_it_world_opts o = {
        .host = HOST,
        .decoy = DECOY,
        .users = {{"alice"},
                  {"bob"},
                  {"carol"},
                  {"erin"},
                  {"frank"},
                  {"gina"},
                  {"hank"},
                  {"ivy"},
                  {"jay"},
                  {"dave", DECOY}},
    };
    eu_it_world_start(&w, &o);
    current = w.s;
    enum { NFANS = sizeof(BOOST_FANS) / sizeof(BOOST_FANS[0]) };
    for (int i = 0; i < NFANS; i++)
        post_path(&w, eu_it_tok(&w, BOOST_FANS[i]), NULL, 200, "/api/v1/accounts/%s/follow",
                  eu_it_id(&w, "bob"));
    post_path(&w, eu_it_tok(&w, "ivy"), NULL, 200, "/api/v1/accounts/%s/block",
              eu_it_id(&w, "alice"));
    char *quince = post(&w, eu_it_tok(&w, "alice"), "a quince worth a boost");
    post_path(&w, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/statuses/%s/favourite", quince);
    post_path(&w, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/statuses/%s/bookmark", quince);

    char head[2048];
    int fds[NFANS];
    for (int i = 0; i < NFANS; i++) {
        fds[i] = ws_open_ex(&w, HOST, eu_it_tok(&w, BOOST_FANS[i]), "?stream=user", 0, head,
                            sizeof(head));
        settle(&w, fds[i], "user", eu_it_tok(&w, "bob"));
    }
    int fd = ws_open_ex(&w, DECOY, eu_it_tok(&w, "dave"), "?stream=user", 0, head, sizeof(head));
    bool ok = false;
    for (int i = 0; i < 50 && !ok; i++) {
        char *mine = post_on(&w, DECOY, eu_it_tok(&w, "dave"), "dave settling");
        json_t *m;
        while (!ok && (m = ws_wait(fd, "update", 400))) {
            json_t *st = payload(m);
            ok = strcmp(json_string_value(json_object_get(st, "id")), mine) == 0;
            json_decref(st);
            json_decref(m);
        }
        free(mine);
    }
    ck_assert_msg(ok, "dave's user stream never came up");
    /* Made after jay's stream opened: his state is reloaded. */
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "jay"),
                "{\"title\":\"fruit\",\"context\":[\"home\"],\"filter_action\":\"warn\","
                "\"keywords_attributes\":[{\"keyword\":\"quince\"}]}",
                "/api/v2/filters");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    /* Everything posted so far has reached every stream: nothing still on
     * its way counts below. */
    char *ready = post(&w, eu_it_tok(&w, "bob"), "all ears");
    for (int i = 0; i < NFANS; i++)
        json_decref(update_of(fds[i], "user", ready));
    free(ready);

    double shared0 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders0 = eu_it_metric(w.s, "eunha_stream_renders_total");
    double spliced0 = eu_it_metric(w.s, "eunha_stream_spliced_total");
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/reblog",
                quince);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *boost = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);

    json_t *got[BOOST_SEEN];
    for (int i = 0; i < BOOST_SEEN; i++)
        got[i] = update_of(fds[i], "user", boost);
    double shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders1 = eu_it_metric(w.s, "eunha_stream_renders_total");
    double spliced1 = eu_it_metric(w.s, "eunha_stream_spliced_total");
    ck_assert_msg(shared1 - shared0 == 1, "%.0f shared renders", shared1 - shared0);
    ck_assert_msg(renders1 == renders0, "%.0f renders for one listener", renders1 - renders0);
    ck_assert_msg(spliced1 - spliced0 >= BOOST_SEEN, "%.0f spliced", spliced1 - spliced0);

    for (int i = 0; i < BOOST_SEEN; i++) {
        const char *who = BOOST_FANS[i];
        json_t *want = home_page_status(&w, eu_it_tok(&w, who), boost);
        assert_same_json(got[i], want);
        json_decref(want);
        bool is_carol = strcmp(who, "carol") == 0, is_jay = strcmp(who, "jay") == 0;
        ck_assert_str_eq(json_string_value(eu_it_jpath(got[i], "reblog.id")), quince);
        ck_assert(json_boolean_value(eu_it_jpath(got[i], "reblog.favourited")) == is_carol);
        ck_assert(json_boolean_value(eu_it_jpath(got[i], "reblog.bookmarked")) == is_carol);
        ck_assert(json_is_false(eu_it_jpath(got[i], "reblog.reblogged")));
        ck_assert(json_is_false(eu_it_jpath(got[i], "favourited")));
        ck_assert_str_eq(
            json_string_value(eu_it_jpath(got[i], "reblog.quote_approval.current_user")),
            "automatic");
        ck_assert_int_eq(json_array_size(eu_it_jpath(got[i], "filtered")), 0);
        ck_assert_int_eq(json_array_size(eu_it_jpath(got[i], "reblog.filtered")), is_jay);
        if (is_jay)
            ck_assert_str_eq(
                json_string_value(eu_it_jpath(got[i], "reblog.filtered.0.filter.title")), "fruit");
        json_decref(got[i]);
    }
    /* ivy: bob's next status, not the boost; dave: his own. */
    char *after = post(&w, eu_it_tok(&w, "bob"), "after the boost");
    expect_update_not(fds[NFANS - 1], "user", after, boost);
    free(after);
    char *mine = post_on(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
    expect_update_not(fd, "user", mine, boost);
    free(mine);

    /* A reply: rendered once too, "muted" read for its listeners with the
     * same one statement (carol muted the conversation). */
    char *thread = post(&w, eu_it_tok(&w, "bob"), "a thread to mute");
    for (int i = 0; i < BOOST_SEEN; i++)
        json_decref(update_of(fds[i], "user", thread));
    post_path(&w, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/statuses/%s/mute", thread);
    shared0 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    renders0 = eu_it_metric(w.s, "eunha_stream_renders_total");
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"more on that\",\"in_reply_to_id\":\"%s\"}", thread);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *reply = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    for (int i = 0; i < BOOST_SEEN; i++)
        got[i] = update_of(fds[i], "user", reply);
    shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    renders1 = eu_it_metric(w.s, "eunha_stream_renders_total");
    ck_assert_msg(shared1 - shared0 == 1, "%.0f shared renders", shared1 - shared0);
    ck_assert_msg(renders1 == renders0, "%.0f renders for one listener", renders1 - renders0);
    for (int i = 0; i < BOOST_SEEN; i++) {
        json_t *want = home_page_status(&w, eu_it_tok(&w, BOOST_FANS[i]), reply);
        assert_same_json(got[i], want);
        json_decref(want);
        ck_assert(json_boolean_value(json_object_get(got[i], "muted")) == (i == 0));
        json_decref(got[i]);
    }
    free(reply);
    free(thread);

    free(boost);
    free(quince);
    for (int i = 0; i < NFANS; i++)
        close(fds[i]);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("streaming");
    TCase *tc = tcase_create("websocket");
    tcase_set_timeout(tc, TIMEOUT);
    tcase_add_test(tc, test_ws_update_notification_delete);
    tcase_add_test(tc, test_ws_shunned_filtered_decoy_unsubscribe);
    tcase_add_test(tc, test_ws_list);
    tcase_add_test(tc, test_ws_hashtags);
    tcase_add_test(tc, test_render_once_send_many);
    tcase_add_test(tc, test_reblog_render_once);
    suite_add_tcase(s, tc);
    tc = tcase_create("sse");
    tcase_set_timeout(tc, TIMEOUT);
    tcase_add_test(tc, test_sse_and_health);
    suite_add_tcase(s, tc);
    tc = tcase_create("limits");
    tcase_set_timeout(tc, TIMEOUT);
    tcase_add_test(tc, test_slow_client_dropped);
    tcase_add_test(tc, test_sigterm_with_open_streams);
    suite_add_tcase(s, tc);
    tc = tcase_create("direct");
    tcase_set_timeout(tc, TIMEOUT);
    tcase_add_test(tc, test_direct_conversation_delete);
    tcase_add_test(tc, test_direct_mutes_blocks_federation);
    suite_add_tcase(s, tc);
    tc = tcase_create("revoke");
    tcase_set_timeout(tc, TIMEOUT);
    tcase_add_test(tc, test_revoked_token_closes_streams);
    tcase_add_test(tc, test_revoked_in_another_process);
    tcase_add_test(tc, test_suspensions_close_streams);
    suite_add_tcase(s, tc);
    tc = tcase_create("caps");
    tcase_set_timeout(tc, TIMEOUT);
    tcase_add_test(tc, test_ws_message_too_big);
    tcase_add_test(tc, test_streams_count_against_caps);
    tcase_add_test(tc, test_no_silent_drops);
    suite_add_tcase(s, tc);
    /* These stop the shared Redis: not to run beside other suites. */
    tc = tcase_create("faults");
    tcase_set_timeout(tc, TIMEOUT);
    tcase_add_test(tc, test_redis_restart_resubscribes);
    tcase_add_test(tc, test_redis_restart_no_deaf_window);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(suite());
}
