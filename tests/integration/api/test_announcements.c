/*
 * Announcements end to end: the operator writes them through the admin
 * API, clients read, dismiss and react to them through Mastodon's
 * announcements API, and streaming listeners hear "announcement",
 * "announcement.reaction" and "announcement.delete" on their user stream.
 * A decoy tenant in the same database never sees the other's.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wsclient.h"

#define TIMEOUT 120
#define HOST "ann.example"
#define DECOY "decoy.example"
#define ADMIN_PATH "/admin/v1/tenants/" HOST "/announcements"

#define THUMBS "\xF0\x9F\x91\x8D"
#define THUMBS_URL "%F0%9F%91%8D"

/* dave lives on the decoy tenant. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice"}, {"bob"}, {"dave", DECOY}},
};

/* Admin: creates an announcement on domain from body; returns its id. */
static char *
admin_create(struct world *w, const char *domain, const char *body)
{
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/announcements", domain);
    struct eu_it_resp r = {0};
    eu_it_admin(w->s, "POST", path, body, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* Admin request that must be refused with want, changing nothing. */
static void
admin_refused(struct world *w, const char *method, const char *path, const char *body, long want)
{
    struct eu_it_resp r = {0};
    eu_it_admin(w->s, method, path, body, &r);
    EU_IT_EXPECT_ERROR(&r, want);
    eu_it_resp_free(&r);
}

/* GET /api/v1/announcements[query] on host as token into r (asserts 200). */
static void
list(struct world *w, struct eu_it_resp *r, const char *host, const char *token, const char *query)
{
    eu_it_callf(w->s, r, host, "GET", token, NULL, "/api/v1/announcements%s", query ? query : "");
    EU_IT_EXPECT_STATUS(r, 200);
    ck_assert(json_is_array(r->json));
}

/* Calls method on path (from the announcement's id and rest) and asserts
 * the status. */
static void
call(struct world *w, const char *host, const char *token, const char *method, const char *id,
     const char *rest, long want)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, host, method, token, NULL, "/api/v1/announcements/%s%s", id, rest);
    EU_IT_EXPECT_STATUS(&r, want);
    if (want >= 400)
        EU_IT_EXPECT_ERROR(&r, want);
    else
        ck_assert_str_eq(r.body, "{}");
    eu_it_resp_free(&r);
}

static long
rows(struct world *w, const char *table)
{
    return eu_it_pg_execf_long(w->db, "SELECT count(*) FROM %s WHERE tenant_id = %s", table,
                               w->tid);
}

/* The reaction named name in an announcement entity, or NULL. */
static json_t *
reaction(json_t *ann, const char *name)
{
    return eu_it_find(json_object_get(ann, "reactions"), "name", name);
}

START_TEST(test_admin_list_dismiss)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *a = admin_create(&w, HOST, "{\"text\":\"Maintenance tonight #Ops\\nBack soon\"}");
    char *hidden = admin_create(&w, HOST, "{\"text\":\"draft\",\"published\":false}");
    char *ended = admin_create(&w, HOST,
                               "{\"text\":\"over\",\"starts_at\":\"2020-01-01T00:00:00Z\","
                               "\"ends_at\":\"2020-01-02T00:00:00Z\"}");
    char *event =
        admin_create(&w, HOST,
                     "{\"text\":\"party\",\"all_day\":true,\"starts_at\":"
                     "\"2999-01-01T00:00:00.000Z\",\"ends_at\":\"2999-01-02T10:00:00+02:00\"}");

    /* Bad input: 422 and nothing written. */
    static const char *const bad[] = {
        "{}",
        "{\"text\":\"   \"}",
        "{\"text\":42}",
        "{\"text\":\"x\",\"published\":\"yes\"}",
        "{\"text\":\"x\",\"starts_at\":\"2030-01-01T00:00:00Z\"}",
        "{\"text\":\"x\",\"starts_at\":\"tomorrow\",\"ends_at\":\"2030-01-01T00:00:00Z\"}",
        "{\"text\":\"x\",\"starts_at\":\"2030-01-02T00:00:00Z\",\"ends_at\":\"2030-01-01T00:00:"
        "00Z\"}",
        "{\"text\":\"x\",\"pubished\":true}",
        NULL,
    };
    for (int i = 0; bad[i]; i++)
        admin_refused(&w, "POST", ADMIN_PATH, bad[i], 422);
    char *longtext = malloc(5100);
    memset(longtext, 'a', 5001);
    longtext[5001] = '\0';
    char *body = NULL;
    ck_assert_int_gt(asprintf(&body, "{\"text\":\"%s\"}", longtext), 0);
    admin_refused(&w, "POST", ADMIN_PATH, body, 422);
    admin_refused(&w, "POST", ADMIN_PATH, "not json", 400);
    admin_refused(&w, "POST", "/admin/v1/tenants/nope.example/announcements", "{\"text\":\"x\"}",
                  404);
    free(body);
    free(longtext);
    ck_assert_int_eq(rows(&w, "announcements"), 4);

    /* The client sees the published ones that have not ended, oldest
     * event first. */
    struct eu_it_resp r = {0};
    list(&w, &r, HOST, eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 2);
    json_t *got = eu_it_find(r.json, "id", a);
    ck_assert_ptr_nonnull(got);
    ck_assert_ptr_null(eu_it_find(r.json, "id", hidden));
    ck_assert_ptr_null(eu_it_find(r.json, "id", ended));
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r.json, 1), "id")), event);
    ck_assert(json_is_false(json_object_get(got, "read")));
    ck_assert(json_is_false(json_object_get(got, "all_day")));
    ck_assert(json_is_null(json_object_get(got, "starts_at")));
    const char *html = json_string_value(json_object_get(got, "content"));
    ck_assert_msg(strncmp(html, "<p>Maintenance tonight <a href=\"http", 36) == 0 &&
                      strstr(html, "<br />Back soon</p>"),
                  "content: %s", html);
    ck_assert_str_eq(json_string_value(eu_it_jpath(got, "tags.0.name")), "ops");
    ck_assert_int_eq(json_array_size(json_object_get(got, "mentions")), 0);
    ck_assert_int_eq(json_array_size(json_object_get(got, "statuses")), 0);
    ck_assert_int_eq(json_array_size(json_object_get(got, "emojis")), 0);
    ck_assert_int_eq(json_array_size(json_object_get(got, "reactions")), 0);
    ck_assert_ptr_nonnull(json_string_value(json_object_get(got, "published_at")));
    ck_assert_ptr_nonnull(json_string_value(json_object_get(got, "updated_at")));
    json_t *ev = json_array_get(r.json, 1);
    ck_assert(json_is_true(json_object_get(ev, "all_day")));
    ck_assert_str_eq(json_string_value(json_object_get(ev, "starts_at")),
                     "2999-01-01T00:00:00.000Z");
    ck_assert_str_eq(json_string_value(json_object_get(ev, "ends_at")), "2999-01-02T08:00:00.000Z");

    /* Dismissed: read, still listed unless with_dismissed=false. */
    call(&w, HOST, eu_it_tok(&w, "alice"), "POST", a, "/dismiss", 200);
    call(&w, HOST, eu_it_tok(&w, "alice"), "POST", a, "/dismiss", 200);
    call(&w, HOST, eu_it_tok(&w, "alice"), "POST", hidden, "/dismiss", 404);
    call(&w, HOST, eu_it_tok(&w, "alice"), "POST", "123456789", "/dismiss", 404);
    call(&w, HOST, eu_it_tok(&w, "alice"), "POST", "abc", "/dismiss", 404);
    list(&w, &r, HOST, eu_it_tok(&w, "alice"), NULL);
    ck_assert(json_is_true(json_object_get(eu_it_find(r.json, "id", a), "read")));
    list(&w, &r, HOST, eu_it_tok(&w, "alice"), "?with_dismissed=false");
    ck_assert_ptr_null(eu_it_find(r.json, "id", a));
    ck_assert_int_eq(json_array_size(r.json), 1);
    list(&w, &r, HOST, eu_it_tok(&w, "bob"), NULL);
    ck_assert(json_is_false(json_object_get(eu_it_find(r.json, "id", a), "read")));
    ck_assert_int_eq(rows(&w, "announcement_dismissals"), 1);

    /* Publishing and unpublishing through PATCH. */
    char path[256];
    snprintf(path, sizeof(path), ADMIN_PATH "/%s", hidden);
    eu_it_admin(w.s, "PATCH", path, "{\"published\":true,\"text\":\"now out\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "published")));
    ck_assert_ptr_nonnull(json_string_value(json_object_get(r.json, "published_at")));
    list(&w, &r, HOST, eu_it_tok(&w, "bob"), NULL);
    ck_assert_ptr_nonnull(eu_it_find(r.json, "id", hidden));
    admin_refused(&w, "PATCH", path, "{\"ends_at\":\"2030-01-01T00:00:00Z\"}", 422);
    admin_refused(&w, "PATCH", path, "{\"text\":\"\"}", 422);
    eu_it_admin(w.s, "PATCH", path, "{\"published\":false}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    list(&w, &r, HOST, eu_it_tok(&w, "bob"), NULL);
    ck_assert_ptr_null(eu_it_find(r.json, "id", hidden));
    eu_it_admin(w.s, "GET", path, NULL, &r);
    EU_IT_EXPECT_JSTR(&r, "text", "now out");

    /* The admin list pages newest first. */
    eu_it_admin(w.s, "GET", ADMIN_PATH "?limit=2", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.id", event);
    admin_refused(&w, "GET", ADMIN_PATH "?limit=0", NULL, 422);

    /* Delete: gone with its dismissals. */
    snprintf(path, sizeof(path), ADMIN_PATH "/%s", a);
    eu_it_admin(w.s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    admin_refused(&w, "DELETE", path, NULL, 404);
    list(&w, &r, HOST, eu_it_tok(&w, "alice"), NULL);
    ck_assert_ptr_null(eu_it_find(r.json, "id", a));
    ck_assert_int_eq(rows(&w, "announcement_dismissals"), 0);

    /* The decoy tenant sees nothing of this one's. */
    list(&w, &r, DECOY, eu_it_tok(&w, "dave"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, DECOY, eu_it_tok(&w, "dave"), "POST", event, "/dismiss", 404);
    call(&w, DECOY, eu_it_tok(&w, "dave"), "PUT", event, "/reactions/" THUMBS_URL, 404);
    snprintf(path, sizeof(path), "/admin/v1/tenants/" DECOY "/announcements/%s", event);
    admin_refused(&w, "GET", path, NULL, 404);
    admin_refused(&w, "DELETE", path, NULL, 404);
    ck_assert_int_eq(rows(&w, "announcements"), 3);

    eu_it_resp_free(&r);
    free(a);
    free(hidden);
    free(ended);
    free(event);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_reactions)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *a = admin_create(&w, HOST, "{\"text\":\"react\"}");
    call(&w, HOST, eu_it_tok(&w, "alice"), "PUT", a, "/reactions/" THUMBS_URL, 200);
    call(&w, HOST, eu_it_tok(&w, "alice"), "PUT", a, "/reactions/" THUMBS_URL,
         200); /* again: no change */
    call(&w, HOST, eu_it_tok(&w, "bob"), "PUT", a, "/reactions/" THUMBS_URL, 200);
    /* "❤" without its presentation selector is still an emoji. */
    call(&w, HOST, eu_it_tok(&w, "bob"), "PUT", a, "/reactions/%E2%9D%A4", 200);

    struct eu_it_resp r = {0};
    list(&w, &r, HOST, eu_it_tok(&w, "alice"), NULL);
    json_t *ann = eu_it_find(r.json, "id", a);
    json_t *th = reaction(ann, THUMBS);
    ck_assert_ptr_nonnull(th);
    ck_assert_int_eq(json_integer_value(json_object_get(th, "count")), 2);
    ck_assert(json_is_true(json_object_get(th, "me")));
    json_t *heart = reaction(ann, "\xE2\x9D\xA4");
    ck_assert_int_eq(json_integer_value(json_object_get(heart, "count")), 1);
    ck_assert(json_is_false(json_object_get(heart, "me")));
    /* In the order each name was first used. */
    ck_assert_ptr_eq(json_array_get(json_object_get(ann, "reactions"), 0), th);

    call(&w, HOST, eu_it_tok(&w, "alice"), "DELETE", a, "/reactions/" THUMBS_URL, 200);
    call(&w, HOST, eu_it_tok(&w, "alice"), "DELETE", a, "/reactions/" THUMBS_URL, 404);
    list(&w, &r, HOST, eu_it_tok(&w, "alice"), NULL);
    th = reaction(eu_it_find(r.json, "id", a), THUMBS);
    ck_assert_int_eq(json_integer_value(json_object_get(th, "count")), 1);
    ck_assert(json_is_false(json_object_get(th, "me")));
    list(&w, &r, HOST, eu_it_tok(&w, "bob"), NULL);
    ck_assert(json_is_true(json_object_get(reaction(eu_it_find(r.json, "id", a), THUMBS), "me")));

    /* Not an emoji (eunha has no custom ones): Mastodon's 422. */
    static const char *const names[] = {
        "blobcat", "%F0%9F%91%8Dx", "%FF%FE", "a%20b", "%F0%9F%91%8D%F0%9F%91%8D", NULL};
    for (int i = 0; names[i]; i++) {
        eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"), NULL,
                    "/api/v1/announcements/%s/reactions/%s", a, names[i]);
        EU_IT_EXPECT_ERROR(&r, 422);
        EU_IT_EXPECT_JSTR(&r, "error", "Validation failed: Name is not a recognized emoji");
    }
    char longname[400] = "";
    for (int i = 0; i < 20; i++)
        strcat(longname, THUMBS_URL);
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/announcements/%s/reactions/%s", a, longname);
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, HOST, eu_it_tok(&w, "alice"), "PUT", "99999", "/reactions/" THUMBS_URL, 404);

    /* At most 8 different names per announcement. */
    static const char *const more[] = {"%F0%9F%98%80",
                                       "%F0%9F%98%82",
                                       "%F0%9F%8E%89",
                                       "%F0%9F%94%A5",
                                       "%F0%9F%91%80",
                                       "%F0%9F%9A%80",
                                       NULL};
    for (int i = 0; more[i]; i++) {
        char rest[64];
        snprintf(rest, sizeof(rest), "/reactions/%s", more[i]);
        call(&w, HOST, eu_it_tok(&w, "alice"), "PUT", a, rest, 200);
    }
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "bob"), NULL,
                "/api/v1/announcements/%s/reactions/%s", a, "%E2%9C%85");
    EU_IT_EXPECT_ERROR(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "error", "Validation failed: Limit of different reactions reached");
    /* A name already there still takes more. */
    call(&w, HOST, eu_it_tok(&w, "alice"), "PUT", a, "/reactions/" THUMBS_URL, 200);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(DISTINCT name) FROM announcement_reactions"
                                         " WHERE tenant_id = %s",
                                         w.tid),
                     8);
    ck_assert_int_eq(rows(&w, "announcement_reactions"), 9);

    /* Reactions go with their announcement. */
    char path[256];
    snprintf(path, sizeof(path), ADMIN_PATH "/%s", a);
    eu_it_admin(w.s, "GET", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "reactions")), 8);
    eu_it_admin(w.s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(rows(&w, "announcement_reactions"), 0);

    eu_it_resp_free(&r);
    free(a);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------------ streaming */

/* A WebSocket on host subscribed to the user stream through the query. */
static int
ws_open(struct world *w, const char *host, const char *token)
{
    char head[2048];
    return eu_ws_open(w, host, token, "?stream=user", 0, head, sizeof(head));
}

/* The next message of one of the events in the space-separated list
 * events (others skipped); asserts it comes within 10 s. */
static json_t *
ws_expect(int fd, const char *events)
{
    long long end = eu_it_now_ms() + 10000;
    for (;;) {
        int left = (int)(end - eu_it_now_ms());
        char *m = left > 0 ? eu_ws_recv(fd, left) : NULL;
        ck_assert_msg(m != NULL, "no %s event", events);
        json_t *j = json_loads(m, 0, NULL);
        free(m);
        const char *ev = json_string_value(json_object_get(j, "event"));
        char want[128];
        snprintf(want, sizeof(want), " %s ", events);
        char have[64];
        snprintf(have, sizeof(have), " %s ", ev ? ev : "");
        if (ev && strstr(want, have))
            return j;
        json_decref(j);
    }
}

/* A status of token's own reaches its user stream: the subscription is
 * live (it is made asynchronously). */
static void
settle(struct world *w, int fd, const char *host, const char *token)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, host, "POST", token, "{\"status\":\"settling\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    json_decref(ws_expect(fd, "update"));
}

/* An SSE event named event within 10 s: its data (caller frees). */
static char *
sse_expect(int fd, const char *event)
{
    char *data = eu_sse_wait(fd, event, 10000);
    ck_assert_msg(data != NULL, "no SSE %s", event);
    return data;
}

START_TEST(test_streaming_events)
{
    struct world w;
    eu_it_world_start(&w, &world);
    int fd = ws_open(&w, HOST, eu_it_tok(&w, "alice"));
    settle(&w, fd, HOST, eu_it_tok(&w, "alice"));
    int decoy = ws_open(&w, DECOY, eu_it_tok(&w, "dave"));
    settle(&w, decoy, DECOY, eu_it_tok(&w, "dave"));
    int sse = eu_ws_tcp_connect(w.s->public_port, 0);
    char req[1024], head[2048];
    snprintf(req, sizeof(req),
             "GET /api/v1/streaming/user?access_token=%s HTTP/1.1\r\nHost: " HOST "\r\n\r\n",
             eu_it_tok(&w, "bob"));
    eu_ws_send_all(sse, req, strlen(req));
    ck_assert_int_eq(eu_ws_read_head(sse, head, sizeof(head)), 200);
    {
        struct eu_it_resp r = {0};
        eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), "{\"status\":\"settling\"}",
                    "/api/v1/statuses");
        EU_IT_EXPECT_STATUS(&r, 200);
        eu_it_resp_free(&r);
        free(sse_expect(sse, "update"));
    }

    /* An unpublished one is not announced; publishing it is. */
    char *draft = admin_create(&w, HOST, "{\"text\":\"draft\",\"published\":false}");
    char *a = admin_create(&w, HOST, "{\"text\":\"Hello #all\"}");
    json_t *m = ws_expect(fd, "announcement announcement.reaction announcement.delete");
    ck_assert_str_eq(json_string_value(json_object_get(m, "event")), "announcement");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(m, "stream"), 0)), "user");
    json_t *p = eu_ws_payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(p, "id")), a);
    ck_assert(json_is_false(json_object_get(p, "read")));
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(p, "content")), "Hello"));
    json_decref(p);
    json_decref(m);
    char *data = sse_expect(sse, "announcement");
    p = json_loads(data, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(p, "id")), a);
    json_decref(p);
    free(data);

    /* Reactions: the name's new count, the same for everyone. */
    call(&w, HOST, eu_it_tok(&w, "bob"), "PUT", a, "/reactions/" THUMBS_URL, 200);
    m = ws_expect(fd, "announcement.reaction");
    p = eu_ws_payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(p, "name")), THUMBS);
    ck_assert_int_eq(json_integer_value(json_object_get(p, "count")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(p, "announcement_id")), a);
    json_decref(p);
    json_decref(m);
    call(&w, HOST, eu_it_tok(&w, "alice"), "PUT", a, "/reactions/" THUMBS_URL, 200);
    call(&w, HOST, eu_it_tok(&w, "alice"), "DELETE", a, "/reactions/" THUMBS_URL, 200);
    m = ws_expect(fd, "announcement.reaction");
    p = eu_ws_payload(m);
    ck_assert_int_eq(json_integer_value(json_object_get(p, "count")), 2);
    json_decref(p);
    json_decref(m);
    m = ws_expect(fd, "announcement.reaction");
    p = eu_ws_payload(m);
    ck_assert_int_eq(json_integer_value(json_object_get(p, "count")), 1);
    json_decref(p);
    json_decref(m);
    data = sse_expect(sse, "announcement.reaction");
    ck_assert_ptr_nonnull(strstr(data, "\"count\":1"));
    free(data);

    /* Publishing the draft announces it; deleting announces the removal. */
    char path[256];
    snprintf(path, sizeof(path), ADMIN_PATH "/%s", draft);
    struct eu_it_resp r = {0};
    eu_it_admin(w.s, "PATCH", path, "{\"published\":true}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    m = ws_expect(fd, "announcement announcement.delete");
    ck_assert_str_eq(json_string_value(json_object_get(m, "event")), "announcement");
    p = eu_ws_payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(p, "id")), draft);
    json_decref(p);
    json_decref(m);
    snprintf(path, sizeof(path), ADMIN_PATH "/%s", a);
    eu_it_admin(w.s, "DELETE", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    m = ws_expect(fd, "announcement.delete");
    ck_assert_str_eq(json_string_value(json_object_get(m, "payload")), a);
    json_decref(m);
    data = sse_expect(sse, "announcement.delete");
    ck_assert_str_eq(data, a);
    free(data);

    /* The decoy's listener hears its own tenant's announcement first,
     * though this tenant's came earlier. */
    char *mine = admin_create(&w, DECOY, "{\"text\":\"decoy news\"}");
    m = ws_expect(decoy, "announcement announcement.reaction announcement.delete");
    ck_assert_str_eq(json_string_value(json_object_get(m, "event")), "announcement");
    p = eu_ws_payload(m);
    ck_assert_str_eq(json_string_value(json_object_get(p, "id")), mine);
    json_decref(p);
    json_decref(m);

    eu_it_resp_free(&r);
    close(fd);
    close(decoy);
    close(sse);
    free(a);
    free(draft);
    free(mine);
    eu_it_world_stop(&w);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("announcements");
    EU_IT_ADD_TCASE(s, test_admin_list_dismiss, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_reactions, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_streaming_events, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(suite());
}
