/*
 * Render once, send many, end to end: a status, a reblog and a reply
 * streamed to many listeners at once cost one shared render (counted by
 * /metrics) and no render per listener, and each listener gets what its
 * REST timeline shows it. Apart from test_streaming.c, whose client
 * (wsclient.h) and ways it shares; what must never arrive is shown by a
 * later event that does, as there.
 */
#include "world.h"
#include "wsclient.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TIMEOUT 120
#define HOST "s.example"
#define DECOY "decoy.example"

/* The running test's server, whose log a lost event prints. */
static struct eu_it_server *current;

static char *
post(struct world *w, const char *token, const char *text)
{
    return eu_ws_post(w, HOST, token, text);
}

/* ------------------------------------------------ render once, send many */

/* The next event (an update or status.update) on fd of status id on
 * stream (others skipped), its payload parsed; asserts one comes within
 * 30 s. Caller decrefs. */
static json_t *
event_of(int fd, const char *event, const char *stream, const char *id)
{
    long long end = eu_it_now_ms() + 30000;
    while (eu_it_now_ms() < end) {
        json_t *m = eu_ws_wait(fd, event, (int)(end - eu_it_now_ms()));
        if (!m)
            break;
        json_t *st = eu_ws_payload(m);
        bool hit = strcmp(eu_ws_stream0(m), stream) == 0 &&
                   strcmp(json_string_value(json_object_get(st, "id")), id) == 0;
        json_decref(m);
        if (hit)
            return st;
        json_decref(st);
    }
    eu_it_server_print_log(current);
    ck_abort_msg("no %s of %s on %s", event, id, stream);
    return NULL;
}

static json_t *
update_of(int fd, const char *stream, const char *id)
{
    return event_of(fd, "update", stream, id);
}

/* Asserts that event of status id comes on both fd's user and public
 * streams (in either order), each as want. */
static void
expect_on_user_and_public(int fd, const char *event, const char *id, json_t *want)
{
    bool on_user = false, on_public = false;
    long long end = eu_it_now_ms() + 30000;
    while ((!on_user || !on_public) && eu_it_now_ms() < end) {
        json_t *m = eu_ws_wait(fd, event, (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "%s of %s: user %d, public %d", event, id, on_user, on_public);
        json_t *st = eu_ws_payload(m);
        if (strcmp(json_string_value(json_object_get(st, "id")), id) == 0) {
            eu_ws_assert_same_json(st, want);
            if (strcmp(eu_ws_stream0(m), "user") == 0)
                on_user = true;
            else
                on_public = true;
        }
        json_decref(st);
        json_decref(m);
    }
    ck_assert(on_user && on_public);
}

/* The status id as token's REST timeline at path shows it (a page
 * bounded to it), once the home fan-out has put it there: what a
 * per-listener render sends. Caller decrefs. */
static json_t *
page_status(struct world *w, const char *token, const char *path, const char *id)
{
    long long n = strtoll(id, NULL, 10);
    for (int i = 0; i < 100; i++) {
        struct eu_it_resp r = {0};
        eu_it_callf(w->s, &r, HOST, "GET", token, NULL, "%s?since_id=%lld&max_id=%lld&limit=1",
                    path, n - 1, n + 1);
        EU_IT_EXPECT_STATUS(&r, 200);
        json_t *st = json_incref(json_array_get(r.json, 0));
        eu_it_resp_free(&r);
        if (st)
            return st;
        eu_it_sleep_ms(100);
    }
    ck_abort_msg("%s never reached %s", id, path);
    return NULL;
}

#define PUBLIC "/api/v1/timelines/public"
#define HOME "/api/v1/timelines/home"

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
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "frank"), NULL, 200, "/api/v1/accounts/%s/follow",
                    eu_it_id(&w, "carol"));
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/mute",
                    eu_it_id(&w, "carol"));
    char head[2048];
    int fa[SHARED_EXTRA + 1];
    for (int i = 0; i <= SHARED_EXTRA; i++) {
        fa[i] =
            eu_ws_open_settled(&w, HOST, eu_it_tok(&w, "alice"), "public", eu_it_tok(&w, "bob"));
    }
    /* Each settled by statuses of someone not listening yet (or carol):
     * a listener's own status is rendered for it alone, and one still on
     * its way would count below. */
    int fb = eu_ws_open_settled(&w, HOST, eu_it_tok(&w, "bob"), "public", eu_it_tok(&w, "frank"));
    int fe = eu_ws_open_settled(&w, HOST, eu_it_tok(&w, "erin"), "public", eu_it_tok(&w, "frank"));
    int ff = eu_ws_open(&w, HOST, eu_it_tok(&w, "frank"), "?stream=user", 0, head, sizeof(head));
    eu_ws_send(ff, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, ff, "public", eu_it_tok(&w, "carol"));
    int fd = eu_ws_open_settled(&w, DECOY, eu_it_tok(&w, "dave"), "public", eu_it_tok(&w, "dave"));

    /* Changed after the streams opened: their states are reloaded. */
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "erin"), NULL, 200, "/api/v1/accounts/%s/block",
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
    json_t *rest = page_status(&w, eu_it_tok(&w, "alice"), PUBLIC, kiwi);
    for (int i = 0; i <= SHARED_EXTRA; i++) {
        json_t *st = update_of(fa[i], "public", kiwi);
        eu_ws_assert_same_json(st, rest);
        ck_assert(json_is_false(json_object_get(st, "favourited")));
        ck_assert_int_eq(json_array_size(json_object_get(st, "filtered")), 0);
        json_decref(st);
    }
    json_decref(rest);
    /* frank: flagged on both streams (in either order), by the filter he
     * made after opening. */
    json_t *want = page_status(&w, eu_it_tok(&w, "frank"), PUBLIC, kiwi);
    ck_assert_str_eq(json_string_value(eu_it_jpath(want, "filtered.0.filter.title")), "fruit");
    ck_assert_str_eq(json_string_value(eu_it_jpath(want, "filtered.0.keyword_matches.0")), "kiwi");
    expect_on_user_and_public(ff, "update", kiwi, want);
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
    eu_ws_expect_update_not(fb, "public", after, kiwi);
    eu_ws_expect_update_not(fe, "public", after, kiwi);
    char *mine = eu_ws_post(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
    eu_ws_expect_update_not(fd, "public", mine, kiwi);
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
        eu_ws_post_path(&w, HOST, eu_it_tok(&w, BOOST_FANS[i]), NULL, 200,
                        "/api/v1/accounts/%s/follow", eu_it_id(&w, "bob"));
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "ivy"), NULL, 200, "/api/v1/accounts/%s/block",
                    eu_it_id(&w, "alice"));
    char *quince = post(&w, eu_it_tok(&w, "alice"), "a quince worth a boost");
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/statuses/%s/favourite",
                    quince);
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/statuses/%s/bookmark",
                    quince);

    int fds[NFANS];
    for (int i = 0; i < NFANS; i++) {
        fds[i] = eu_ws_open_settled(&w, HOST, eu_it_tok(&w, BOOST_FANS[i]), "user",
                                    eu_it_tok(&w, "bob"));
    }
    int fd = eu_ws_open_settled(&w, DECOY, eu_it_tok(&w, "dave"), "user", eu_it_tok(&w, "dave"));
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
        json_t *want = page_status(&w, eu_it_tok(&w, who), HOME, boost);
        eu_ws_assert_same_json(got[i], want);
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
    eu_ws_expect_update_not(fds[NFANS - 1], "user", after, boost);
    free(after);
    char *mine = eu_ws_post(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
    eu_ws_expect_update_not(fd, "user", mine, boost);
    free(mine);

    /* A reply: rendered once too, "muted" read for its listeners with the
     * same one statement (carol muted the conversation). */
    char *thread = post(&w, eu_it_tok(&w, "bob"), "a thread to mute");
    for (int i = 0; i < BOOST_SEEN; i++)
        json_decref(update_of(fds[i], "user", thread));
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/statuses/%s/mute",
                    thread);
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
        json_t *want = page_status(&w, eu_it_tok(&w, BOOST_FANS[i]), HOME, reply);
        eu_ws_assert_same_json(got[i], want);
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

/* A list of owner's holding alice and bob (whom owner follows), with
 * replies_policy policy; its id, malloc'd. */
static char *
make_list(struct world *w, const char *owner, const char *policy)
{
    struct eu_it_resp r = {0};
    for (int i = 0; i < 2; i++)
        eu_ws_post_path(w, HOST, eu_it_tok(w, owner), NULL, 200, "/api/v1/accounts/%s/follow",
                        eu_it_id(w, i ? "bob" : "alice"));
    char body[160];
    snprintf(body, sizeof(body), "{\"title\":\"friends\",\"replies_policy\":\"%s\"}", policy);
    eu_it_callf(w->s, &r, HOST, "POST", eu_it_tok(w, owner), body, "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *list = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\",\"%s\"]}", eu_it_id(w, "alice"),
             eu_it_id(w, "bob"));
    eu_it_callf(w->s, &r, HOST, "POST", eu_it_tok(w, owner), body, "/api/v1/lists/%s/accounts",
                list);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    return list;
}

/* Opens token's stream on list, settled on public with settler's
 * statuses (the list is subscribed to first); public is left unless
 * keep_public. */
static int
open_list(struct world *w, const char *host, const char *token, const char *list,
          const char *settler, bool keep_public)
{
    char head[2048], sub[128];
    int fd = eu_ws_open(w, host, token, "?stream=public", 0, head, sizeof(head));
    snprintf(sub, sizeof(sub), "{\"type\":\"subscribe\",\"stream\":\"list\",\"list\":\"%s\"}",
             list);
    eu_ws_send(fd, sub);
    eu_ws_send(fd, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(w, host, fd, "public", eu_it_tok(w, settler));
    if (!keep_public)
        eu_ws_send(fd, "{\"type\":\"unsubscribe\",\"stream\":\"public\"}");
    return fd;
}

/* Waits for status id on fd's public stream; asserts nothing came on its
 * list stream before it. */
static void
expect_public_no_list(int fd, const char *id)
{
    long long end = eu_it_now_ms() + 30000;
    while (eu_it_now_ms() < end) {
        json_t *m = eu_ws_wait(fd, "update", (int)(end - eu_it_now_ms()));
        ck_assert_msg(m != NULL, "no update of %s", id);
        json_t *st = eu_ws_payload(m);
        ck_assert_msg(strcmp(eu_ws_stream0(m), "list") != 0, "%s came on a list not the viewer's",
                      json_string_value(json_object_get(st, "id")));
        bool hit = strcmp(json_string_value(json_object_get(st, "id")), id) == 0;
        json_decref(st);
        json_decref(m);
        if (hit)
            return;
    }
    ck_abort_msg("no update of %s", id);
}

/* The owners of a list holding alice and bob; frank's takes no replies,
 * and frank has a filter on the status's text; hank mutes alice. */
static const char *const LIST_OWNERS[] = {"carol", "erin", "frank", "gina", "hank"};
#define LIST_SEEN 4 /* the first four get alice's status */

/*
 * A list stream, many owners: alice's status reaches the lists of four
 * owners, rendered once (eunha_stream_shared_renders_total) and spliced
 * for each, as its REST list timeline holds it (frank's with "filtered"
 * from a filter he made after opening). Two listeners are rendered for
 * alone and get nothing: ivy, naming carol's list, and hank, who muted
 * alice after opening (the list timeline's own rules); nor does dave on
 * the decoy tenant, naming carol's list too. A reply to bob is left to
 * the list timeline (carol's list takes it, frank's takes no replies); a
 * self-reply is rendered once and reaches both.
 */
START_TEST(test_list_render_once)
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
                  {"dave", DECOY}},
    };
    eu_it_world_start(&w, &o);
    current = w.s;
    enum { NOWNERS = sizeof(LIST_OWNERS) / sizeof(LIST_OWNERS[0]) };
    char *lists[NOWNERS];
    int fds[NOWNERS];
    for (int i = 0; i < NOWNERS; i++) {
        const char *who = LIST_OWNERS[i];
        lists[i] = make_list(&w, who, strcmp(who, "frank") == 0 ? "none" : "list");
        fds[i] = open_list(&w, HOST, eu_it_tok(&w, who), lists[i], "ivy", false);
    }
    int fi = open_list(&w, HOST, eu_it_tok(&w, "ivy"), lists[0], "bob", true);
    int fd = open_list(&w, DECOY, eu_it_tok(&w, "dave"), lists[0], "dave", true);

    /* Changed after the streams opened: their states are reloaded. */
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "hank"), NULL, 200, "/api/v1/accounts/%s/mute",
                    eu_it_id(&w, "alice"));
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "frank"),
                "{\"title\":\"fruit\",\"context\":[\"home\"],\"filter_action\":\"warn\","
                "\"keywords_attributes\":[{\"keyword\":\"kiwi\"}]}",
                "/api/v2/filters");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    /* Everything so far has reached every list: nothing on its way counts. */
    char *ready = post(&w, eu_it_tok(&w, "bob"), "all ears");
    for (int i = 0; i < NOWNERS; i++)
        json_decref(update_of(fds[i], "list", ready));
    free(ready);

    double shared0 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders0 = eu_it_metric(w.s, "eunha_stream_renders_total");
    double spliced0 = eu_it_metric(w.s, "eunha_stream_spliced_total");
    char *kiwi = post(&w, eu_it_tok(&w, "alice"), "a kiwi for the list");
    json_t *got[LIST_SEEN];
    for (int i = 0; i < LIST_SEEN; i++)
        got[i] = update_of(fds[i], "list", kiwi);
    /* hank and ivy: bob's next status, not kiwi, once kiwi's render for
     * them is done (a client's events are rendered in order). */
    char *after = post(&w, eu_it_tok(&w, "bob"), "after the kiwi");
    eu_ws_expect_update_not(fds[NOWNERS - 1], "list", after, kiwi);
    expect_public_no_list(fi, after);
    double shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders1 = eu_it_metric(w.s, "eunha_stream_renders_total");
    double spliced1 = eu_it_metric(w.s, "eunha_stream_spliced_total");
    /* kiwi's and the one after it. */
    ck_assert_msg(shared1 - shared0 == 2, "%.0f shared renders", shared1 - shared0);
    /* hank's and ivy's of kiwi, and maybe already ivy's of the next one;
     * a render per owner would be four more. */
    ck_assert_msg(renders1 - renders0 >= 2 && renders1 - renders0 <= 3,
                  "%.0f renders for one listener", renders1 - renders0);
    ck_assert_msg(spliced1 - spliced0 >= LIST_SEEN, "%.0f spliced", spliced1 - spliced0);
    for (int i = 0; i < LIST_SEEN; i++) {
        const char *who = LIST_OWNERS[i];
        char path[64];
        snprintf(path, sizeof(path), "/api/v1/timelines/list/%s", lists[i]);
        json_t *want = page_status(&w, eu_it_tok(&w, who), path, kiwi);
        eu_ws_assert_same_json(got[i], want);
        json_decref(want);
        bool is_frank = strcmp(who, "frank") == 0;
        ck_assert(json_is_false(json_object_get(got[i], "favourited")));
        ck_assert_int_eq(json_array_size(json_object_get(got[i], "filtered")), is_frank);
        if (is_frank)
            ck_assert_str_eq(json_string_value(eu_it_jpath(got[i], "filtered.0.filter.title")),
                             "fruit");
        json_decref(got[i]);
    }
    /* dave, on the other tenant naming carol's list: his own, not kiwi. */
    char *mine = eu_ws_post(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
    eu_ws_expect_update_not(fd, "public", mine, kiwi);
    free(mine);

    /* A reply to bob: carol's list takes it, frank's does not; alice's
     * reply to herself reaches both, rendered once. */
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"to bob\",\"in_reply_to_id\":\"%s\"}", after);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *to_bob = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    json_decref(update_of(fds[0], "list", to_bob));
    shared0 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    snprintf(body, sizeof(body), "{\"status\":\"and more\",\"in_reply_to_id\":\"%s\"}", kiwi);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *self = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    for (int i = 0; i < LIST_SEEN; i++) {
        if (i == 2) { /* frank: the self-reply, never the reply to bob */
            eu_ws_expect_update_not(fds[i], "list", self, to_bob);
            continue;
        }
        json_t *st = update_of(fds[i], "list", self);
        ck_assert_str_eq(json_string_value(json_object_get(st, "in_reply_to_id")), kiwi);
        json_decref(st);
    }
    shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    ck_assert_msg(shared1 - shared0 == 1, "%.0f shared renders", shared1 - shared0);

    free(self);
    free(to_bob);
    free(after);
    free(kiwi);
    for (int i = 0; i < NOWNERS; i++) {
        close(fds[i]);
        free(lists[i]);
    }
    close(fi);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

/* The listeners of alice's poll, following alice and bob: carol votes. */
static const char *const POLL_FANS[] = {"carol", "erin", "frank"};

/*
 * A poll, many listeners: alice's status with a poll reaches three user
 * streams and an app's public stream (a token without an account),
 * rendered once and no render
 * for one listener, each as its REST timeline shows it (voted false and
 * no own_votes for the signed-in, neither member for the app).
 * carol votes; bob's boost of the poll, rendered once too, shows carol
 * her vote and the others none. dave's stream on the decoy gets neither.
 */
START_TEST(test_poll_render_once)
{
    struct world w;
    static struct eu_it_world_opts o = {
        .host = HOST,
        .decoy = DECOY,
        .users = {{"alice"}, {"bob"}, {"carol"}, {"erin"}, {"frank"}, {"dave", DECOY}},
    };
    eu_it_world_start(&w, &o);
    current = w.s;
    enum { NFANS = sizeof(POLL_FANS) / sizeof(POLL_FANS[0]) };
    int fds[NFANS];
    for (int i = 0; i < NFANS; i++) {
        for (int k = 0; k < 2; k++)
            eu_ws_post_path(&w, HOST, eu_it_tok(&w, POLL_FANS[i]), NULL, 200,
                            "/api/v1/accounts/%s/follow", eu_it_id(&w, k ? "bob" : "alice"));
        fds[i] =
            eu_ws_open_settled(&w, HOST, eu_it_tok(&w, POLL_FANS[i]), "user", eu_it_tok(&w, "bob"));
    }
    char *app = eu_it_app_token(w.s, HOST, "read");
    int fa = eu_ws_open_settled(&w, HOST, app, "public", eu_it_tok(&w, "bob"));
    int fd = eu_ws_open_settled(&w, DECOY, eu_it_tok(&w, "dave"), "public", eu_it_tok(&w, "dave"));

    double shared0 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders0 = eu_it_metric(w.s, "eunha_stream_renders_total");
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"),
                "{\"status\":\"pick a fruit\",\"poll\":{\"options\":[\"fig\",\"plum\"],"
                "\"expires_in\":3600}}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *ask = strdup(json_string_value(json_object_get(r.json, "id")));
    char *poll = strdup(json_string_value(eu_it_jpath(r.json, "poll.id")));
    eu_it_resp_free(&r);
    for (int i = 0; i < NFANS; i++) {
        json_t *st = update_of(fds[i], "user", ask);
        json_t *want = page_status(&w, eu_it_tok(&w, POLL_FANS[i]), HOME, ask);
        eu_ws_assert_same_json(st, want);
        ck_assert(json_is_false(eu_it_jpath(st, "poll.voted")));
        ck_assert_int_eq(json_array_size(eu_it_jpath(st, "poll.own_votes")), 0);
        json_decref(want);
        json_decref(st);
    }
    json_t *st = update_of(fa, "public", ask);
    json_t *want = page_status(&w, app, PUBLIC, ask);
    eu_ws_assert_same_json(st, want);
    ck_assert_ptr_null(eu_it_jpath(st, "poll.voted"));
    ck_assert_ptr_null(eu_it_jpath(st, "poll.own_votes"));
    ck_assert_int_eq(json_array_size(eu_it_jpath(st, "poll.options")), 2);
    json_decref(want);
    json_decref(st);
    double shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders1 = eu_it_metric(w.s, "eunha_stream_renders_total");
    ck_assert_msg(shared1 - shared0 == 1, "%.0f shared renders", shared1 - shared0);
    ck_assert_msg(renders1 == renders0, "%.0f renders for one listener", renders1 - renders0);

    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"), "{\"choices\":[1]}", 200,
                    "/api/v1/polls/%s/votes", poll);
    shared0 = shared1;
    renders0 = renders1;
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/reblog",
                ask);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *boost = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    for (int i = 0; i < NFANS; i++) {
        bool is_carol = i == 0;
        st = update_of(fds[i], "user", boost);
        want = page_status(&w, eu_it_tok(&w, POLL_FANS[i]), HOME, boost);
        eu_ws_assert_same_json(st, want);
        ck_assert_str_eq(json_string_value(eu_it_jpath(st, "reblog.id")), ask);
        ck_assert(json_boolean_value(eu_it_jpath(st, "reblog.poll.voted")) == is_carol);
        json_t *own = eu_it_jpath(st, "reblog.poll.own_votes");
        ck_assert_int_eq(json_array_size(own), is_carol);
        if (is_carol)
            ck_assert_int_eq(json_integer_value(json_array_get(own, 0)), 1);
        json_decref(want);
        json_decref(st);
    }
    shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    renders1 = eu_it_metric(w.s, "eunha_stream_renders_total");
    ck_assert_msg(shared1 - shared0 == 1, "%.0f shared renders", shared1 - shared0);
    ck_assert_msg(renders1 == renders0, "%.0f renders for one listener", renders1 - renders0);

    /* dave, on the other tenant: his own, never the poll. */
    char *mine = eu_ws_post(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
    eu_ws_expect_update_not(fd, "public", mine, ask);
    free(mine);

    free(boost);
    free(poll);
    free(ask);
    free(app);
    for (int i = 0; i < NFANS; i++)
        close(fds[i]);
    close(fa);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

/* The listeners of bob's quote, following bob: carol favourited and
 * bookmarked the quoted status; ivy mutes its author. */
static const char *const QUOTE_FANS[] = {"carol", "erin", "frank", "ivy"};
#define QUOTE_SHARED 3 /* the first three are spliced for */

/*
 * A quote, many listeners: bob's quote of alice's public status reaches
 * four user streams, rendered once, the quoted status's flags read with
 * the quote's by one statement: each gets what its REST home timeline
 * holds, carol with the quoted status favourited and bookmarked (and
 * nobody else). ivy, who mutes alice, is rendered for alone (whether she
 * sees the quoted status is the REST render's to say); dave on the decoy
 * gets nothing. Then bob's boost of hank's quote of the same status:
 * rendered once as well, the flags read on three levels.
 */
START_TEST(test_quote_render_once)
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
                  {"ivy"},
                  {"hank"},
                  {"dave", DECOY}},
    };
    eu_it_world_start(&w, &o);
    current = w.s;
    enum { NFANS = sizeof(QUOTE_FANS) / sizeof(QUOTE_FANS[0]) };
    char *quince = post(&w, eu_it_tok(&w, "alice"), "a quince to quote");
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/statuses/%s/favourite",
                    quince);
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/statuses/%s/bookmark",
                    quince);
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "ivy"), NULL, 200, "/api/v1/accounts/%s/mute",
                    eu_it_id(&w, "alice"));
    int fds[NFANS];
    for (int i = 0; i < NFANS; i++) {
        eu_ws_post_path(&w, HOST, eu_it_tok(&w, QUOTE_FANS[i]), NULL, 200,
                        "/api/v1/accounts/%s/follow", eu_it_id(&w, "bob"));
        fds[i] = eu_ws_open_settled(&w, HOST, eu_it_tok(&w, QUOTE_FANS[i]), "user",
                                    eu_it_tok(&w, "bob"));
    }
    int fd = eu_ws_open_settled(&w, DECOY, eu_it_tok(&w, "dave"), "public", eu_it_tok(&w, "dave"));

    double shared0 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders0 = eu_it_metric(w.s, "eunha_stream_renders_total");
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"look at this\",\"quoted_status_id\":\"%s\"}",
             quince);
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "quote.state", "accepted");
    char *quote = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    json_t *got[NFANS];
    for (int i = 0; i < NFANS; i++)
        got[i] = update_of(fds[i], "user", quote);
    double shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    double renders1 = eu_it_metric(w.s, "eunha_stream_renders_total");
    ck_assert_msg(shared1 - shared0 == 1, "%.0f shared renders", shared1 - shared0);
    /* ivy's alone. */
    ck_assert_msg(renders1 - renders0 == NFANS - QUOTE_SHARED, "%.0f renders for one listener",
                  renders1 - renders0);
    for (int i = 0; i < NFANS; i++) {
        json_t *want = page_status(&w, eu_it_tok(&w, QUOTE_FANS[i]), HOME, quote);
        eu_ws_assert_same_json(got[i], want);
        json_decref(want);
        bool is_carol = i == 0;
        ck_assert_str_eq(json_string_value(eu_it_jpath(got[i], "quote.quoted_status.id")), quince);
        ck_assert(json_boolean_value(eu_it_jpath(got[i], "quote.quoted_status.favourited")) ==
                  is_carol);
        ck_assert(json_boolean_value(eu_it_jpath(got[i], "quote.quoted_status.bookmarked")) ==
                  is_carol);
        ck_assert(json_is_false(eu_it_jpath(got[i], "favourited")));
        ck_assert_str_eq(json_string_value(eu_it_jpath(
                             got[i], "quote.quoted_status.quote_approval.current_user")),
                         "automatic");
        json_decref(got[i]);
    }
    /* A reblog of a quote: hank's quote of quince (carol favourites it),
     * boosted by bob; the quoted status's flags a level deeper. */
    snprintf(body, sizeof(body), "{\"status\":\"me too\",\"quoted_status_id\":\"%s\"}", quince);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "hank"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *hq = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "carol"), NULL, 200, "/api/v1/statuses/%s/favourite",
                    hq);
    shared0 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    renders0 = eu_it_metric(w.s, "eunha_stream_renders_total");
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/reblog",
                hq);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *boost = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    for (int i = 0; i < NFANS; i++)
        got[i] = update_of(fds[i], "user", boost);
    shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
    renders1 = eu_it_metric(w.s, "eunha_stream_renders_total");
    ck_assert_msg(shared1 - shared0 == 1, "%.0f shared renders", shared1 - shared0);
    ck_assert_msg(renders1 - renders0 == NFANS - QUOTE_SHARED, "%.0f renders for one listener",
                  renders1 - renders0);
    for (int i = 0; i < NFANS; i++) {
        json_t *want = page_status(&w, eu_it_tok(&w, QUOTE_FANS[i]), HOME, boost);
        eu_ws_assert_same_json(got[i], want);
        json_decref(want);
        bool is_carol = i == 0;
        ck_assert_str_eq(json_string_value(eu_it_jpath(got[i], "reblog.id")), hq);
        ck_assert_str_eq(json_string_value(eu_it_jpath(got[i], "reblog.quote.quoted_status.id")),
                         quince);
        ck_assert(json_boolean_value(eu_it_jpath(got[i], "reblog.favourited")) == is_carol);
        ck_assert(json_boolean_value(
                      eu_it_jpath(got[i], "reblog.quote.quoted_status.favourited")) == is_carol);
        ck_assert(json_boolean_value(
                      eu_it_jpath(got[i], "reblog.quote.quoted_status.bookmarked")) == is_carol);
        ck_assert(json_is_false(eu_it_jpath(got[i], "favourited")));
        json_decref(got[i]);
    }
    free(boost);
    free(hq);

    /* dave, on the other tenant: his own, never the quote. */
    char *mine = eu_ws_post(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
    eu_ws_expect_update_not(fd, "public", mine, quote);
    free(mine);

    free(quote);
    free(quince);
    for (int i = 0; i < NFANS; i++)
        close(fds[i]);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

/* Edits status id of token's to text. */
static void
edit(struct world *w, const char *token, const char *id, const char *text)
{
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"%s\"}", text);
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "PUT", token, body, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

#define EDIT_STREAMS 3

/*
 * An edit, many listeners: carol's edited status reaches alice's three
 * public streams, frank's user and public streams and gina's user stream
 * as "status.update" (on three channels), rendered once for all its
 * channels and not per listener, each as the REST timeline shows it; a
 * second edit is rendered again, never the first's render sent twice.
 * bob, who mutes carol, gets neither; dave's stream on the decoy tenant
 * neither.
 */
START_TEST(test_edit_render_once)
{
    struct world w;
    static struct eu_it_world_opts o = {
        .host = HOST,
        .decoy = DECOY,
        .users = {{"alice"}, {"bob"}, {"carol"}, {"frank"}, {"gina"}, {"dave", DECOY}},
    };
    eu_it_world_start(&w, &o);
    current = w.s;
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "frank"), NULL, 200, "/api/v1/accounts/%s/follow",
                    eu_it_id(&w, "carol"));
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "gina"), NULL, 200, "/api/v1/accounts/%s/follow",
                    eu_it_id(&w, "carol"));
    eu_ws_post_path(&w, HOST, eu_it_tok(&w, "bob"), NULL, 200, "/api/v1/accounts/%s/mute",
                    eu_it_id(&w, "carol"));
    char head[2048];
    int fa[EDIT_STREAMS];
    for (int i = 0; i < EDIT_STREAMS; i++) {
        fa[i] =
            eu_ws_open_settled(&w, HOST, eu_it_tok(&w, "alice"), "public", eu_it_tok(&w, "bob"));
    }
    int fb = eu_ws_open_settled(&w, HOST, eu_it_tok(&w, "bob"), "public", eu_it_tok(&w, "frank"));
    int ff = eu_ws_open(&w, HOST, eu_it_tok(&w, "frank"), "?stream=user", 0, head, sizeof(head));
    eu_ws_send(ff, "{\"type\":\"subscribe\",\"stream\":\"public\"}");
    eu_ws_settle(&w, HOST, ff, "public", eu_it_tok(&w, "carol"));
    int fg = eu_ws_open_settled(&w, HOST, eu_it_tok(&w, "gina"), "user", eu_it_tok(&w, "carol"));
    int fd = eu_ws_open_settled(&w, DECOY, eu_it_tok(&w, "dave"), "public", eu_it_tok(&w, "dave"));

    char *plum = post(&w, eu_it_tok(&w, "carol"), "a plum");
    for (int i = 0; i < EDIT_STREAMS; i++)
        json_decref(update_of(fa[i], "public", plum));
    json_decref(update_of(ff, "user", plum));
    json_decref(update_of(fg, "user", plum));

    static const char *const texts[] = {"a ripe plum", "a ripe plum, eaten"};
    for (int round = 0; round < 2; round++) {
        double shared0 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
        double renders0 = eu_it_metric(w.s, "eunha_stream_renders_total");
        edit(&w, eu_it_tok(&w, "carol"), plum, texts[round]);
        json_t *want = page_status(&w, eu_it_tok(&w, "alice"), PUBLIC, plum);
        ck_assert_ptr_nonnull(
            strstr(json_string_value(json_object_get(want, "content")), texts[round]));
        for (int i = 0; i < EDIT_STREAMS; i++) {
            json_t *st = event_of(fa[i], "status.update", "public", plum);
            eu_ws_assert_same_json(st, want);
            json_decref(st);
        }
        json_decref(want);
        want = page_status(&w, eu_it_tok(&w, "frank"), HOME, plum);
        expect_on_user_and_public(ff, "status.update", plum, want);
        json_decref(want);
        /* gina's home is a channel of its own, in the same publication. */
        want = page_status(&w, eu_it_tok(&w, "gina"), HOME, plum);
        json_t *st = event_of(fg, "status.update", "user", plum);
        eu_ws_assert_same_json(st, want);
        json_decref(st);
        json_decref(want);
        double shared1 = eu_it_metric(w.s, "eunha_stream_shared_renders_total");
        double renders1 = eu_it_metric(w.s, "eunha_stream_renders_total");
        ck_assert_msg(shared1 - shared0 == 1, "%.0f shared renders", shared1 - shared0);
        ck_assert_msg(renders1 == renders0, "%.0f renders for one listener", renders1 - renders0);
    }

    /* bob (muting carol): alice's next status, never an edit of plum;
     * dave, on the other tenant: his own. */
    char *after = post(&w, eu_it_tok(&w, "alice"), "after the plum");
    for (;;) {
        char *m = eu_ws_recv(fb, 30000);
        ck_assert_msg(m != NULL, "no update of %s", after);
        ck_assert_msg(!strstr(m, "status.update"), "bob got an edit: %s", m);
        bool hit = strstr(m, after) != NULL;
        free(m);
        if (hit)
            break;
    }
    char *mine = eu_ws_post(&w, DECOY, eu_it_tok(&w, "dave"), "dave's own");
    eu_ws_expect_update_not(fd, "public", mine, plum);
    free(mine);

    free(after);
    free(plum);
    for (int i = 0; i < EDIT_STREAMS; i++)
        close(fa[i]);
    close(fb);
    close(ff);
    close(fg);
    close(fd);
    eu_it_world_stop(&w);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("streaming_shared");
    TCase *tc = tcase_create("shared");
    tcase_set_timeout(tc, TIMEOUT);
    tcase_add_test(tc, test_render_once_send_many);
    tcase_add_test(tc, test_reblog_render_once);
    tcase_add_test(tc, test_list_render_once);
    tcase_add_test(tc, test_poll_render_once);
    tcase_add_test(tc, test_quote_render_once);
    tcase_add_test(tc, test_edit_render_once);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(suite());
}
