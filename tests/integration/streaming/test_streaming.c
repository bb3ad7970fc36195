/*
 * The streaming API end to end, through the suites' own WebSocket and SSE
 * client (wsclient.h), against a real server, PostgreSQL and Redis; render
 * once, send many is test_streaming_shared.c's. Events are caused through the REST endpoints of
 * another account; what must never arrive is shown by a later event that does arrive (events of one
 * channel come in the order they were published), so no test waits on a timeout to pass. Two
 * statuses posted back to back may be published in either order (each is looked up on its own
 * connection first): a proof can overtake what it follows, which weakens such a test but never
 * fails it, and a test awaiting several events collects them in any order.
 */
#include "world.h"
#include "wsclient.h"

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
post(struct world *w, const char *token, const char *text)
{
    return eu_ws_post(w, HOST, token, text);
}

static int
ws_open(struct world *w, const char *token)
{
    char head[2048];
    return eu_ws_open(w, HOST, token, NULL, 0, head, sizeof(head));
}

/* ---------------------------------------------------------------- tests */

START_TEST(test_ws_update_notification_delete)
{
    struct world w;
    world_start(&w);
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/follow",
                    eu_it_id(&w, "bob"));
    int fd = ws_open(&w, eu_it_tok(&w, "alice"));
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, fd, "public", eu_it_tok(&w, "carol"));

    char *id = post(&w, eu_it_tok(&w, "bob"), "hello streams");
    /* Once on each stream, rendered for alice. */
    long long end = eu_it_now_ms() + 10000;
    bool on_user = false, on_public = false;
    while ((!on_user || !on_public) && eu_it_now_ms() < end) {
        json_t *m = eu_ws_wait(fd, "update", 10000);
        ck_assert_ptr_nonnull(m);
        json_t *st = eu_ws_payload(m);
        if (strcmp(json_string_value(json_object_get(st, "id")), id) == 0) {
            ck_assert_str_eq(json_string_value(eu_it_jpath(st, "account.username")), "bob");
            ck_assert_ptr_nonnull(
                strstr(json_string_value(json_object_get(st, "content")), "hello streams"));
            ck_assert(json_is_false(json_object_get(st, "favourited")));
            if (strcmp(eu_ws_stream0(m), "user") == 0)
                on_user = true;
            if (strcmp(eu_ws_stream0(m), "public") == 0)
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
    json_t *m = eu_ws_wait(fd, "notification", 10000);
    ck_assert_msg(m != NULL, "no notification");
    ck_assert_str_eq(eu_ws_stream0(m), "user");
    json_t *note = eu_ws_payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(note, "type")), "mention");
    ck_assert_str_eq(json_string_value(eu_it_jpath(note, "status.id")), mention);
    json_decref(note);
    json_decref(m);

    /* A private mention from someone alice does not follow waits in a
     * request (the default policy): the next notification on the stream is
     * carol's public mention after it. */
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"),
                    "{\"status\":\"@alice psst\",\"visibility\":\"direct\"}", 200,
                    "/api/v1/statuses");
    char *open_mention = post(&w, eu_it_tok(&w, "carol"), "in the open @alice");
    m = eu_ws_wait(fd, "notification", 10000);
    ck_assert_msg(m != NULL, "no notification of the public mention");
    note = eu_ws_payload(m);
    ck_assert_str_eq(json_string_value(eu_it_jpath(note, "status.id")), open_mention);
    json_decref(note);
    json_decref(m);
    free(open_mention);

    /* A follow: a notification too. */
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/accounts/%s/follow",
                    eu_it_id(&w, "alice"));
    m = eu_ws_wait(fd, "notification", 10000);
    ck_assert_msg(m != NULL, "no follow notification");
    note = eu_ws_payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(note, "type")), "follow");
    json_decref(note);
    json_decref(m);

    /* An edit: status.update with the new text. */
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "bob"), "{\"status\":\"edited words\"}",
                "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    m = eu_ws_wait(fd, "status.update", 10000);
    ck_assert_msg(m != NULL, "no status.update");
    json_t *edited = eu_ws_payload(m);
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
    m = eu_ws_wait(fd, "filters_changed", 10000);
    ck_assert_msg(m != NULL, "no filters_changed");
    ck_assert_str_eq(eu_ws_stream0(m), "user");
    ck_assert_ptr_null(json_object_get(m, "payload"));
    json_decref(m);

    /* Deletion: the id string. */
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    m = eu_ws_wait(fd, "delete", 10000);
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
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public:local\"}");
    eu_ws_settle(&w, HOST, fd, "public", eu_it_tok(&w, "bob"));

    /* Muted author: never. */
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/mute",
                    eu_it_id(&w, "carol"));
    char *muted = post(&w, eu_it_tok(&w, "carol"), "from a muted account");
    char *after = post(&w, eu_it_tok(&w, "bob"), "after the muted one");
    eu_ws_expect_update_not(fd, "public", after, muted);
    free(muted);
    free(after);

    /* Blocked author: never. */
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/unmute",
                    eu_it_id(&w, "carol"));
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/block",
                    eu_it_id(&w, "carol"));
    char *blocked = post(&w, eu_it_tok(&w, "carol"), "from a blocked account");
    after = post(&w, eu_it_tok(&w, "bob"), "after the blocked one");
    eu_ws_expect_update_not(fd, "public", after, blocked);
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
        json_t *m = eu_ws_wait(fd, "update", 10000);
        ck_assert_ptr_nonnull(m);
        json_t *st = eu_ws_payload(m);
        const char *got = json_string_value(json_object_get(st, "id"));
        ck_assert_msg(strcmp(got, hidden) != 0, "a hidden status arrived");
        if (strcmp(got, warned) == 0 && strcmp(eu_ws_stream0(m), "public") == 0) {
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
    char *decoy = eu_ws_post(&w, DECOY, eu_it_tok(&w, "dave"), "from another tenant");
    after = post(&w, eu_it_tok(&w, "bob"), "after the decoy");
    eu_ws_expect_update_not(fd, "public", after, decoy);
    free(decoy);
    free(after);

    /* Unsubscribed from public: only public:local's copy comes. */
    eu_ws_send(fd, "{\"type\":\"unsubscribe\",\"stream\":\"public\"}");
    eu_it_sleep_ms(300);
    char *one = post(&w, eu_it_tok(&w, "bob"), "after unsubscribing");
    char *two = post(&w, eu_it_tok(&w, "bob"), "second after unsubscribing");
    end = eu_it_now_ms() + 10000;
    bool got_two = false;
    while (!got_two && eu_it_now_ms() < end) {
        json_t *m = eu_ws_wait(fd, "update", 10000);
        ck_assert_ptr_nonnull(m);
        json_t *st = eu_ws_payload(m);
        const char *got = json_string_value(json_object_get(st, "id"));
        if (strcmp(got, one) == 0 || strcmp(got, two) == 0)
            ck_assert_str_eq(eu_ws_stream0(m), "public:local");
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
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"nonsense\"}");
    char *err = NULL;
    for (int i = 0; i < 20 && !err; i++) {
        char *m = eu_ws_recv(fd, 5000);
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
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "alice"), NULL, 200, "/api/v1/accounts/%s/follow",
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
    eu_ws_send(fa, sub);
    eu_ws_send(fa, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, fa, "public", eu_it_tok(&w, "carol"));
    int fc = ws_open(&w, eu_it_tok(&w, "carol"));
    eu_ws_send(fc, "{\"type\":\"subscribe\",\"stream\":\"list\"}");
    char *err = eu_ws_recv(fc, 5000);
    ck_assert_msg(err && strstr(err, "Missing list"), "no error for a list stream without a list");
    free(err);
    json_t *m;
    eu_ws_send(fc, sub);
    eu_ws_send(fc, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, fc, "public", eu_it_tok(&w, "alice"));

    char *id = post(&w, eu_it_tok(&w, "bob"), "for my listeners");
    eu_ws_expect_update(current, fa, "list", id);
    /* carol: bob's status on public, never on the list. */
    long long end = eu_it_now_ms() + 10000;
    bool on_public = false;
    while (eu_it_now_ms() < end) {
        m = eu_ws_wait(fc, "update", on_public ? 1000 : (int)(end - eu_it_now_ms()));
        if (!m)
            break;
        ck_assert_str_ne(eu_ws_stream0(m), "list");
        json_t *st = eu_ws_payload(m);
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
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"hashtag\",\"tag\":\"foo\"}");
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"hashtag:local\",\"tag\":\"foo\"}");
    /* Last: Redis takes one connection's SUBSCRIBEs in order, so once bar
     * is live the others are too. */
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"hashtag\",\"tag\":\"bar\"}");
    json_t *m = NULL;
    for (int i = 0; i < 50 && !m; i++) {
        char *id = post(&w, eu_it_tok(&w, "bob"), "settling #bar");
        m = eu_ws_wait(fd, "update", 400);
        free(id);
    }
    ck_assert_msg(m != NULL, "hashtag stream never came up");
    json_decref(m);

    char *foo = post(&w, eu_it_tok(&w, "bob"), "about #Foo");
    char *bar = post(&w, eu_it_tok(&w, "bob"), "about #bar");
    bool foo_tag = false, foo_local = false, bar_tag = false;
    long long end = eu_it_now_ms() + 10000;
    while (!(foo_tag && foo_local && bar_tag) && eu_it_now_ms() < end) {
        m = eu_ws_wait(fd, "update", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "missing: #foo %d, local #foo %d, #bar %d", foo_tag, foo_local,
                      bar_tag);
        json_t *st = eu_ws_payload(m);
        const char *id = json_string_value(json_object_get(st, "id"));
        const char *stream = eu_ws_stream0(m);
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

    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"hashtag\",\"tag\":\"a:b\"}");
    char *err = eu_ws_recv(fd, 5000);
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
    int fd = eu_sse_open(&w, HOST, path);
    snprintf(path, sizeof(path), "/api/v1/streaming/user/notification?access_token=%s",
             eu_it_tok(&w, "alice"));
    int nfd = eu_sse_open(&w, HOST, path);
    char *id = NULL, *data = NULL;
    for (int i = 0; i < 50 && !data; i++) {
        free(id);
        id = post(&w, eu_it_tok(&w, "bob"), "over SSE");
        data = eu_sse_wait(fd, "update", 400);
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
    data = eu_sse_wait(nfd, "notification", 10000);
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
    data = eu_sse_wait(fd, "delete", 10000);
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
    eu_ws_send(fast, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, fast, "public", eu_it_tok(&w, "bob"));
    char head[2048];
    int slow =
        eu_ws_open(&w, HOST, eu_it_tok(&w, "carol"), "?stream=public", 2048, head, sizeof(head));
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
        json_decref(eu_ws_wait(fast, "update", 2000));
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
    eu_ws_expect_update(current, fast, "public", id);
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
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, fd, "public", eu_it_tok(&w, "bob"));
    eu_it_sh("EUNHA_TEST_REDIS_STOP");
    eu_it_sleep_ms(500);
    eu_it_sh("EUNHA_TEST_REDIS_START");
    /* Reconnection takes the backoff; the live mark is set again by the
     * hub's refresh or the next connection, so a fresh one is opened too. */
    int fd2 = ws_open(&w, eu_it_tok(&w, "carol"));
    eu_ws_send(fd2, "{\"type\":\"subscribe\",\"stream\":\"public:local\"}");
    eu_ws_settle(&w, HOST, fd, "public", eu_it_tok(&w, "bob"));
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
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, fd, "public", eu_it_tok(&w, "bob"));
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/public?access_token=%s",
             eu_it_tok(&w, "alice"));
    int sse = eu_sse_open(&w, HOST, path);
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
        json_t *m = eu_ws_wait(fd, "conversation", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "no conversation of %s", id);
        ck_assert_str_eq(eu_ws_stream0(m), "direct");
        json_t *c = eu_ws_payload(m);
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
        char *text = eu_ws_recv(fd, (int)(end - eu_it_now_ms()));
        ck_assert_msg(text != NULL, "no update of %s", id);
        json_t *m = json_loads(text, 0, NULL);
        free(text);
        const char *ev = json_string_value(json_object_get(m, "event"));
        ck_assert_msg(ev && strcmp(ev, "conversation") != 0, "a conversation arrived");
        bool hit = false;
        if (strcmp(ev, "update") == 0) {
            json_t *st = eu_ws_payload(m);
            const char *got = json_string_value(json_object_get(st, "id"));
            ck_assert_msg(!bad || strcmp(got, bad) != 0, "status %s arrived", bad);
            hit = strcmp(got, id) == 0 && strcmp(eu_ws_stream0(m), stream) == 0;
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
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/follow",
                    eu_it_id(&w, "alice"));
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/accounts/%s/follow",
                    eu_it_id(&w, "alice"));
    char head[2048];
    /* The query's stream first, then the user stream: Redis takes one
     * connection's SUBSCRIBEs in order, so once user is live direct is. */
    int fb = eu_ws_open(&w, HOST, eu_it_tok(&w, "bob"), "?stream=direct", 0, head, sizeof(head));
    eu_ws_send(fb, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    eu_ws_settle(&w, HOST, fb, "user", eu_it_tok(&w, "bob"));
    int fc = ws_open(&w, eu_it_tok(&w, "carol"));
    eu_ws_send(fc, "{\"type\":\"subscribe\",\"stream\":\"direct\"}");
    eu_ws_send(fc, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    eu_ws_settle(&w, HOST, fc, "user", eu_it_tok(&w, "carol"));
    int fd = eu_ws_open(&w, DECOY, eu_it_tok(&w, "dave"), "?stream=direct", 0, head, sizeof(head));
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/direct?access_token=%s",
             eu_it_tok(&w, "alice"));
    int fa = eu_sse_open(&w, HOST, path);
    /* alice's SSE stream is live once one of her messages comes back. */
    char *data = NULL;
    for (int i = 0; i < 50 && !data; i++) {
        free(post_direct(&w, eu_it_tok(&w, "alice"), "@bob settling"));
        data = eu_sse_wait(fa, "conversation", 400);
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
        char *text = eu_ws_recv(fb, (int)(end - eu_it_now_ms()));
        ck_assert_msg(text != NULL, "conversation %d, update %d", c != NULL, updated);
        json_t *m = json_loads(text, 0, NULL);
        free(text);
        const char *ev = json_string_value(json_object_get(m, "event"));
        if (strcmp(ev, "update") == 0 || strcmp(ev, "conversation") == 0) {
            json_t *pl = eu_ws_payload(m);
            bool conv = strcmp(ev, "conversation") == 0;
            const char *id = json_string_value(eu_it_jpath(pl, conv ? "last_status.id" : "id"));
            if (strcmp(id, dm) == 0 && conv) {
                ck_assert_str_eq(eu_ws_stream0(m), "direct");
                c = json_incref(pl);
            } else if (strcmp(id, dm) == 0) {
                ck_assert_str_eq(eu_ws_stream0(m), "user");
                updated = true;
            }
            json_decref(pl);
        }
        json_decref(m);
    }
    ck_assert_msg(c && updated, "conversation %d, update %d", c != NULL, updated);
    json_t *rest = first_conversation(&w, eu_it_tok(&w, "bob"));
    eu_ws_assert_same_json(c, rest);
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
        data = eu_sse_wait(fa, "conversation", (int)(end - eu_it_now_ms()));
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
    eu_ws_assert_same_json(c, rest);
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
        char *mine = eu_ws_post(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
        json_t *m = NULL;
        while ((m = eu_ws_wait(fd, "update", 400))) {
            json_t *st = eu_ws_payload(m);
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
    char *mine = eu_ws_post(&w, DECOY, eu_it_tok(&w, "dave"), "dave's second");
    expect_quiet_until(fd, "user", mine, dm2);
    free(mine);

    /* Deleted: "delete" with the id on bob's direct stream and alice's. */
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", dm);
    EU_IT_EXPECT_STATUS(&r, 200);
    end = eu_it_now_ms() + 10000;
    bool on_direct = false;
    while (!on_direct && eu_it_now_ms() < end) {
        json_t *m = eu_ws_wait(fb, "delete", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "no delete on bob's direct stream");
        on_direct = strcmp(eu_ws_stream0(m), "direct") == 0 &&
                    strcmp(json_string_value(json_object_get(m, "payload")), dm) == 0;
        json_decref(m);
    }
    ck_assert(on_direct);
    data = eu_sse_wait(fa, "delete", 10000);
    ck_assert_ptr_nonnull(data);
    ck_assert_str_eq(data, dm);
    free(data);
    /* carol: no delete of it either, before alice's next status. */
    after = post(&w, eu_it_tok(&w, "alice"), "after the delete");
    for (;;) {
        char *text = eu_ws_recv(fc, 10000);
        ck_assert_msg(text != NULL, "no update of %s", after);
        json_t *m = json_loads(text, 0, NULL);
        free(text);
        const char *ev = json_string_value(json_object_get(m, "event"));
        ck_assert_msg(strcmp(ev, "delete") != 0, "carol got a delete");
        bool hit = false;
        if (strcmp(ev, "update") == 0) {
            json_t *st = eu_ws_payload(m);
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
    eu_ws_send(fn, "{\"type\":\"subscribe\",\"stream\":\"direct\"}");
    char *err = eu_ws_recv(fn, 5000);
    ck_assert_msg(err && strstr(err, "required scopes"), "no scope error: %s", err);
    free(err);
    close(fn);
    /* read:statuses alone is enough, as in Mastodon. */
    char *statuses = eu_it_user_token(w.s, HOST, "bob", "read:statuses");
    snprintf(path, sizeof(path), "/api/v1/streaming/direct?access_token=%s", statuses);
    close(eu_sse_open(&w, HOST, path));

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
    int fb = eu_ws_open(&w, HOST, eu_it_tok(&w, "bob"), "?stream=direct", 0, head, sizeof(head));
    eu_ws_send(fb, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    eu_ws_settle(&w, HOST, fb, "user", eu_it_tok(&w, "bob"));

    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/mute",
                    eu_it_id(&w, "carol"));
    char *muted = post_direct(&w, eu_it_tok(&w, "carol"), "@bob from a muted account");
    char *ok = post_direct(&w, eu_it_tok(&w, "alice"), "@bob after the muted one");
    json_decref(expect_conversation(fb, ok, muted));
    free(muted);
    free(ok);

    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/unmute",
                    eu_it_id(&w, "carol"));
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/block",
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
    eu_ws_assert_same_json(c, rest);
    json_decref(c);
    json_decref(rest);

    inbox_process(&w, ROB,
                  "{\"id\":\"" ROB "#delete/1\",\"type\":\"Delete\",\"actor\":\"" ROB
                  "\",\"object\":{\"id\":\"" ROB "/statuses/1\",\"type\":\"Tombstone\"}}");
    long long end = eu_it_now_ms() + 10000;
    bool on_direct = false;
    while (!on_direct && eu_it_now_ms() < end) {
        json_t *m = eu_ws_wait(fb, "delete", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "no delete on bob's direct stream");
        on_direct = strcmp(eu_ws_stream0(m), "direct") == 0 &&
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
    eu_ws_send(ws, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    eu_ws_settle(&w, HOST, ws, "user", tok);
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/user?access_token=%s", tok);
    int sse = eu_sse_open(&w, HOST, path);
    /* The same account's other token keeps its stream. */
    int other = ws_open(&w, eu_it_tok(&w, "alice"));
    eu_ws_send(other, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    eu_ws_settle(&w, HOST, other, "user", eu_it_tok(&w, "alice"));

    revoke_token(&w, &a, tok);
    ck_assert_int_eq(ws_wait_close(ws, 15000), 1008);
    ck_assert_msg(wait_eof(sse, 15000), "the SSE stream of a revoked token stayed open");
    char *id = post(&w, eu_it_tok(&w, "alice"), "after the revocation");
    eu_ws_expect_update(current, other, "user", id);
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
    eu_ws_send(ws, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    eu_ws_settle(&w2, HOST, ws, "user", tok);
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
    eu_ws_send(b, "{\"type\":\"subscribe\",\"stream\":\"user\"}");
    eu_ws_settle(&w, HOST, b, "user", eu_it_tok(&w, "bob"));
    int a = ws_open(&w, eu_it_tok(&w, "alice"));
    eu_ws_send(a, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, a, "public", eu_it_tok(&w, "alice"));
    char path[512];
    snprintf(path, sizeof(path), "/api/v1/streaming/public?access_token=%s",
             eu_it_tok(&w, "carol"));
    int sse = eu_sse_open(&w, HOST, path);

    /* An account's suspension ends its streams and no one else's. */
    struct eu_it_resp r = {0};
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/suspend", HOST,
             eu_it_id(&w, "bob"));
    eu_it_admin(w.s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    ck_assert_int_eq(ws_wait_close(b, 15000), 1008);
    char *id = post(&w, eu_it_tok(&w, "carol"), "after bob");
    eu_ws_expect_update(current, a, "public", id);
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
    eu_ws_send_all(fd, buf, sizeof(buf));
    ck_assert_int_eq(ws_wait_close(fd, 15000), 1009);
    close(fd);
    /* Commands of an ordinary size still work. */
    int ok = ws_open(&w, eu_it_tok(&w, "alice"));
    eu_ws_send(ok, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, ok, "public", eu_it_tok(&w, "bob"));
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
    int s2 = eu_sse_open(&w, HOST, path);
    /* The tenant's budget is spent; the decoy tenant has its own. */
    int fd = eu_ws_tcp_connect(w.s->public_port, 0);
    char req[1024], head[2048];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, HOST);
    eu_ws_send_all(fd, req, strlen(req));
    ck_assert_int_eq(eu_ws_read_head(fd, head, sizeof(head)), 503);
    close(fd);
    /* Two streams and one request fit in the cap, once the server has seen
     * the refused connection go. */
    long st = 0;
    for (int i = 0; i < 100 && st != 200; i++) {
        eu_it_sleep_ms(100);
        st = health_status(&w);
    }
    ck_assert_int_eq(st, 200);
    int s3 = eu_ws_open(&w, DECOY, eu_it_tok(&w, "dave"), NULL, 0, head, sizeof(head));
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
        eu_ws_send(fds[i], "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    }
    for (int i = 0; i < 3; i++)
        eu_ws_settle(&w, HOST, fds[i], "public", eu_it_tok(&w, "bob"));
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
            json_t *m = eu_ws_wait(fds[i], "update", (int)(end - eu_it_now_ms()));
            if (!m)
                eu_it_server_print_log(current);
            ck_assert_msg(m != NULL, "listener %d: %d of 6 updates never came", i, left);
            json_t *st = eu_ws_payload(m);
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
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, fd, "public", eu_it_tok(&w, "bob"));
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
    json_t *m = eu_ws_wait(fd, "update", 10000);
    if (!m)
        eu_it_server_print_log(w.s);
    ck_assert_msg(m != NULL, "the first status after the restart did not stream");
    json_t *st = eu_ws_payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(st, "id")), id);
    json_decref(st);
    json_decref(m);
    free(id);
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
