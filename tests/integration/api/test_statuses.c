/*
 * /api/v1/statuses end to end: posting (formatting, mentions, hashtags,
 * validation, Idempotency-Key), reading, deleting for redraft, editing with
 * history and source, threads, every interaction and its undo with counts
 * and viewer flags, who favourited and reblogged (with Link headers),
 * visibility of private and direct statuses, blocks, and scope refusal.
 * Follows and blocks are written straight into the tenant database so these
 * tests do not depend on the accounts endpoints.
 */
#include "world.h"

#include <check.h>
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define HOST "s.example"

/* Three users; tokens read write follow. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .users = {{"alice"}, {"bob"}, {"carol"}},
};

/*
 * The count fmt selects, once it is want or after 10 s. Notifications are
 * written beside the reply, not before it, so a test that reads them right
 * after the request that caused them waits for them.
 */
static long sql_count_reaches(struct world *w, long want, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static long
sql_count_reaches(struct world *w, long want, const char *fmt, ...)
{
    char q[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q, sizeof(q), fmt, ap);
    va_end(ap);
    long got = -1;
    for (int i = 0; i < 200; i++) {
        got = eu_it_pg_exec_long(w->db, q);
        if (got == want)
            break;
        eu_it_sleep_ms(50);
    }
    return got;
}

static void
api(struct world *w, struct eu_it_resp *r, const char *method, const char *path, const char *token,
    const char *body)
{
    ck_assert_int_eq(eu_it_http(r, method, w->s->public_port, HOST, path, token, body), 0);
}

/* Posts body as token's user; asserts 200 and returns the new id (caller frees). */
static char *
post(struct world *w, const char *token, const char *body)
{
    struct eu_it_resp r = {0};
    api(w, &r, "POST", "/api/v1/statuses", token, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

static void
get_status(struct world *w, struct eu_it_resp *r, const char *id, const char *token)
{
    char path[128];
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", id);
    api(w, r, "GET", path, token, NULL);
}

static void
status_action(struct world *w, struct eu_it_resp *r, const char *id, const char *action,
              const char *token)
{
    char path[160];
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/%s", id, action);
    api(w, r, "POST", path, token, NULL);
}

#define EXPECT_BOOL(r, path, want)                                                                 \
    do {                                                                                           \
        json_t *v_ = eu_it_jpath((r)->json, (path));                                               \
        ck_assert_msg(json_is_boolean(v_) && json_is_true(v_) == (want), "%s is not %s in %.800s", \
                      (path), (want) ? "true" : "false", (r)->body);                               \
    } while (0)

START_TEST(test_create_get_delete)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};

    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"),
        "{\"status\":\"Hello @bob and @nobody@far.example!\\n\\n#Eunha https://example.com/x\","
        "\"spoiler_text\":\"cw\",\"language\":\"en\"}");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    EU_IT_EXPECT_JSTR(&r, "visibility", "public");
    EU_IT_EXPECT_JSTR(&r, "spoiler_text", "cw");
    EU_IT_EXPECT_JSTR(&r, "language", "en");
    EXPECT_BOOL(&r, "sensitive", true);
    EU_IT_EXPECT_JSTR(&r, "account.username", "alice");
    EU_IT_EXPECT_JSTR(&r, "account.id", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JSTR(&r, "mentions.0.username", "bob");
    EU_IT_EXPECT_JSTR(&r, "mentions.0.id", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_JSTR(&r, "mentions.0.url", "http://s.example/@bob");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "mentions")), 1);
    EU_IT_EXPECT_JSTR(&r, "tags.0.name", "eunha");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 0);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "emojis")), 0);
    ck_assert(json_is_null(eu_it_jpath(r.json, "reblog")));
    ck_assert(json_is_null(eu_it_jpath(r.json, "poll")));
    EXPECT_BOOL(&r, "favourited", false);
    EXPECT_BOOL(&r, "pinned", false);
    ck_assert_ptr_null(eu_it_jpath(r.json, "text"));
    const char *content = eu_it_json_str(&r, "content");
    ck_assert_msg(strstr(content, "<p>Hello <span class=\"h-card\"><a href=\"http://s.example/"
                                  "@bob\""
                                  " class=\"u-url mention\">@<span>bob</span></a></span> and "
                                  "@nobody@far.example!</p><p><a href=\"http://s.example/tags/"
                                  "Eunha\" class=\"mention hashtag\" rel=\"tag\">#<span>Eunha"
                                  "</span></a> <a href=\"https://example.com/x\"") == content,
                  "content: %s", content);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM statuses_tags st JOIN tags t ON"
                                          " t.tenant_id = st.tenant_id AND t.id = st.tag_id"
                                          " WHERE st.tenant_id = %s AND st.status_id = %s"
                                          " AND t.name = 'Eunha'",
                                          w.tid, id),
                     1);
    /* bob was told he was mentioned */
    ck_assert_int_eq(
        sql_count_reaches(&w, 1,
                          "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                          " AND account_id = %s AND type = 'mention' AND status_id = %s",
                          w.tid, eu_it_id(&w, "bob"), id),
        1);

    /* Anyone can read a public status, anonymous too (no viewer flags then). */
    get_status(&w, &r, id, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", id);
    ck_assert_ptr_null(eu_it_jpath(r.json, "favourited"));
    get_status(&w, &r, "999999", eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_ERROR(&r, 404);
    get_status(&w, &r, "abc", eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Validation */
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), "{\"status\":\"  \"}");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_str_eq(eu_it_json_str(&r, "error"), "Validation failed: Text can't be blank");
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"),
        "{\"status\":\"x\",\"visibility\":\"bogus\"}");
    EU_IT_EXPECT_ERROR(&r, 422);
    char big[700];
    memset(big, 'a', 600);
    big[600] = '\0';
    char body[800];
    snprintf(body, sizeof(body), "{\"status\":\"%s\"}", big);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"),
        "{\"status\":\"x\",\"in_reply_to_id\":\"42\"}");
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"),
        "{\"status\":\"later\",\"scheduled_at\":\"2099-01-01T00:00:00Z\"}");
    EU_IT_EXPECT_STATUS(&r, 200); /* a ScheduledStatus, not a status (test_timed.c) */
    EU_IT_EXPECT_JSTR(&r, "scheduled_at", "2099-01-01T00:00:00.000Z");
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"),
        "{\"status\":\"x\",\"media_ids\":[\"1\"]}");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_int_eq(
        eu_it_world_sql_long(
            &w, "SELECT count(*) FROM statuses WHERE tenant_id = %s AND deleted_at IS NULL", w.tid),
        1);
    api(&w, &r, "POST", "/api/v1/statuses", NULL, "{\"status\":\"x\"}");
    EU_IT_EXPECT_ERROR(&r, 401);

    /* Only the author deletes; the answer carries the source for redraft. */
    char path[128];
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", id);
    api(&w, &r, "DELETE", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "DELETE", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", id);
    EU_IT_EXPECT_JSTR(&r, "text",
                      "Hello @bob and @nobody@far.example!\n\n#Eunha https://example.com/x");
    get_status(&w, &r, id, eu_it_tok(&w, "alice"));
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "DELETE", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);

    free(id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_form_params_and_scope)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};

    /* A read-only token cannot post: Mastodon's 403 body. */
    char *ro = eu_it_user_token(w.s, HOST, "alice", "read");
    api(&w, &r, "POST", "/api/v1/statuses", ro, "{\"status\":\"nope\"}");
    EU_IT_EXPECT_ERROR(&r, 403);
    ck_assert_str_eq(eu_it_json_str(&r, "error"), "This action is outside the authorized scopes");
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM statuses WHERE tenant_id = %s", w.tid), 0);
    /* ... but it can read */
    api(&w, &r, "GET", "/api/v1/timelines/public", ro, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* A long list of granular scopes is kept whole: cut at 160 bytes, this
     * one (170) ended in "write", which would grant every write scope. */
    char *lng = eu_it_user_token(w.s, HOST, "alice",
                                 "read:accounts read:blocks read:bookmarks read:favourites"
                                 " read:filters read:follows read:lists read:notifications"
                                 " read:search push profile write:bookmarks write:favourites");
    api(&w, &r, "POST", "/api/v1/statuses", lng, "{\"status\":\"nope\"}");
    EU_IT_EXPECT_ERROR(&r, 403);
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM statuses WHERE tenant_id = %s", w.tid), 0);
    api(&w, &r, "GET", "/api/v1/bookmarks", lng, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    free(lng);
    /* A granular write:statuses token can. Parameters in the query string work too. */
    char *gran = eu_it_user_token(w.s, HOST, "alice", "write:statuses");
    api(&w, &r, "POST", "/api/v1/statuses?status=from%20query&visibility=unlisted", gran, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>from query</p>");
    EU_IT_EXPECT_JSTR(&r, "visibility", "unlisted");
    char *id = strdup(eu_it_json_str(&r, "id"));
    /* write:statuses does not cover favourites */
    status_action(&w, &r, id, "favourite", gran);
    EU_IT_EXPECT_ERROR(&r, 403);

    free(id);
    free(ro);
    free(gran);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

static size_t
collect(char *p, size_t size, size_t n, void *arg)
{
    struct eu_it_resp *r = arg;
    size_t len = size * n;
    r->body = realloc(r->body, r->body_len + len + 1);
    memcpy(r->body + r->body_len, p, len);
    r->body_len += len;
    r->body[r->body_len] = '\0';
    return len;
}

/* POST /api/v1/statuses with an Idempotency-Key; returns the status id. */
static char *
post_idempotent(struct world *w, const char *token, const char *key, const char *body)
{
    struct eu_it_resp r = {0};
    char url[256], line[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/statuses", w->s->public_port);
    CURL *c = curl_easy_init();
    struct curl_slist *hl = NULL;
    hl = curl_slist_append(hl, "Host: " HOST);
    snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
    hl = curl_slist_append(hl, line);
    snprintf(line, sizeof(line), "Idempotency-Key: %s", key);
    hl = curl_slist_append(hl, line);
    hl = curl_slist_append(hl, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    r.json = json_loads(r.body ? r.body : "", 0, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    json_decref(r.json);
    free(r.body);
    return id;
}

START_TEST(test_idempotency)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *a = post_idempotent(&w, eu_it_tok(&w, "alice"), "key-1", "{\"status\":\"once\"}");
    char *b = post_idempotent(&w, eu_it_tok(&w, "alice"), "key-1", "{\"status\":\"once\"}");
    char *c = post_idempotent(&w, eu_it_tok(&w, "alice"), "key-2", "{\"status\":\"once\"}");
    /* The key is per account. */
    char *d = post_idempotent(&w, eu_it_tok(&w, "bob"), "key-1", "{\"status\":\"once\"}");
    ck_assert_str_eq(a, b);
    ck_assert_str_ne(a, c);
    ck_assert_str_ne(a, d);
    ck_assert_int_eq(
        eu_it_world_sql_long(
            &w, "SELECT count(*) FROM statuses WHERE tenant_id = %s AND text = 'once'", w.tid),
        3);

    /* Redis down: posting still works, without idempotency. */
    if (getenv("EUNHA_TEST_REDIS_STOP")) {
        eu_it_sh("EUNHA_TEST_REDIS_STOP");
        char *e = post_idempotent(&w, eu_it_tok(&w, "alice"), "key-1", "{\"status\":\"once\"}");
        ck_assert_str_ne(a, e);
        free(e);
        eu_it_sh("EUNHA_TEST_REDIS_START");
    }
    free(a);
    free(b);
    free(c);
    free(d);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_edit_history_source)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *id = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"first #one\"}");
    /* bob reblogs, so he hears about the edit */
    status_action(&w, &r, id, "reblog", eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);

    char path[160];
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/history", id);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.content",
                      "<p>first <a href=\"http://s.example/tags/one\" class=\""
                      "mention hashtag\" rel=\"tag\">#<span>one</span></a></p>");

    snprintf(path, sizeof(path), "/api/v1/statuses/%s", id);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "bob"), "{\"status\":\"hijack\"}");
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"),
        "{\"status\":\"second #two\",\"spoiler_text\":\"cw\"}");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strncmp(eu_it_json_str(&r, "content"), "<p>second ", 10) == 0, "%s", r.body);
    ck_assert_msg(eu_it_json_str(&r, "edited_at") != NULL, "%s", r.body);
    EU_IT_EXPECT_JSTR(&r, "spoiler_text", "cw");
    EU_IT_EXPECT_JSTR(&r, "tags.0.name", "two");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "tags")), 1);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), "{\"status\":\"third\"}");
    EU_IT_EXPECT_STATUS(&r, 200);
    /* what an edit does not send, it keeps */
    EU_IT_EXPECT_JSTR(&r, "spoiler_text", "cw");
    EXPECT_BOOL(&r, "sensitive", true);

    snprintf(path, sizeof(path), "/api/v1/statuses/%s/history", id);
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 3);
    ck_assert_msg(strncmp(json_string_value(eu_it_jpath(r.json, "0.content")), "<p>first ", 9) == 0,
                  "%s", r.body);
    ck_assert_msg(strncmp(json_string_value(eu_it_jpath(r.json, "1.content")), "<p>second ", 10) ==
                      0,
                  "%s", r.body);
    EU_IT_EXPECT_JSTR(&r, "1.spoiler_text", "cw");
    EU_IT_EXPECT_JSTR(&r, "2.content", "<p>third</p>");
    EU_IT_EXPECT_JSTR(&r, "2.account.id", eu_it_id(&w, "alice"));

    snprintf(path, sizeof(path), "/api/v1/statuses/%s/source", id);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", id);
    EU_IT_EXPECT_JSTR(&r, "text", "third");
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);

    ck_assert_int_eq(sql_count_reaches(&w, 2,
                                       "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                       " AND account_id = %s AND type = 'update'",
                                       w.tid, eu_it_id(&w, "bob")),
                     2);
    free(id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_context)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char body[256];
    /* carol asked to be told when alice posts (but not about her replies to others) */
    free(eu_it_world_sql(&w,
                         "INSERT INTO follows (tenant_id, account_id, target_account_id, notify)"
                         " VALUES (%s, %s, %s, true)",
                         w.tid, eu_it_id(&w, "carol"), eu_it_id(&w, "alice")));
    char *a = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"root\"}");
    snprintf(body, sizeof(body), "{\"status\":\"@alice reply\",\"in_reply_to_id\":\"%s\"}", a);
    char *b = post(&w, eu_it_tok(&w, "bob"), body);
    snprintf(body, sizeof(body), "{\"status\":\"deeper\",\"in_reply_to_id\":\"%s\"}", b);
    char *c = post(&w, eu_it_tok(&w, "alice"), body);
    snprintf(body, sizeof(body),
             "{\"status\":\"secret\",\"visibility\":\"direct\","
             "\"in_reply_to_id\":\"%s\"}",
             b);
    char *hidden = post(&w, eu_it_tok(&w, "alice"), body);

    ck_assert_int_eq(
        sql_count_reaches(&w, 1,
                          "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                          " AND account_id = %s AND type = 'status' AND status_id = %s",
                          w.tid, eu_it_id(&w, "carol"), a),
        1);
    ck_assert_int_eq(sql_count_reaches(&w, 1,
                                       "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                       " AND account_id = %s AND type = 'status'",
                                       w.tid, eu_it_id(&w, "carol")),
                     1);
    /* several at once; hidden ones are left out */
    snprintf(body, sizeof(body), "/api/v1/statuses?id[]=%s&id[]=%s&id[]=%s", c, hidden, a);
    api(&w, &r, "GET", body, eu_it_tok(&w, "carol"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.id", c);
    EU_IT_EXPECT_JSTR(&r, "1.id", a);

    get_status(&w, &r, b, eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_JSTR(&r, "in_reply_to_id", a);
    EU_IT_EXPECT_JSTR(&r, "in_reply_to_account_id", eu_it_id(&w, "alice"));
    get_status(&w, &r, a, eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_JINT(&r, "replies_count", 1);

    char path[160];
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/context", b);
    api(&w, &r, "GET", path, eu_it_tok(&w, "carol"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "ancestors")), 1);
    EU_IT_EXPECT_JSTR(&r, "ancestors.0.id", a);
    /* carol is not mentioned in the direct reply: she does not see it */
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "descendants")), 1);
    EU_IT_EXPECT_JSTR(&r, "descendants.0.id", c);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "descendants")), 2);
    EU_IT_EXPECT_JSTR(&r, "descendants.1.id", hidden);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/context", hidden);
    api(&w, &r, "GET", path, eu_it_tok(&w, "carol"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);

    free(a);
    free(b);
    free(c);
    free(hidden);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* Whether the JSON array at path of r holds a status with this id. */
static bool
lists(const struct eu_it_resp *r, const char *path, const char *id)
{
    json_t *a = eu_it_jpath(r->json, path);
    size_t i;
    json_t *st;
    json_array_foreach(a, i, st)
    {
        const char *sid = json_string_value(json_object_get(st, "id"));
        if (sid && strcmp(sid, id) == 0)
            return true;
    }
    return false;
}

/* A reply by token's user to parent with text; its id (caller frees). */
static char *
reply(struct world *w, const char *token, const char *parent, const char *text)
{
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"%s\",\"in_reply_to_id\":\"%s\"}", text, parent);
    return post(w, token, body);
}

/*
 * Mastodon's StatusFilter in a thread: alice's view of her own thread
 * leaves out the replies of bob (she blocks him), carol (she mutes her)
 * and dave (he blocks her), but keeps her own reply, eve's reply under
 * bob's (the walk passes through), and whatever an expired mute covers.
 * The status asked for is shown even when its author is blocked. Eve, who
 * blocks and mutes nobody, sees the whole thread.
 */
START_TEST(test_context_blocks_mutes)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *dave_id = NULL, *eve_id = NULL, *fay_id = NULL;
    char *dave = eu_it_user_new(w.s, HOST, "dave", "read write follow", &dave_id);
    char *eve = eu_it_user_new(w.s, HOST, "eve", "read write follow", &eve_id);
    char *fay = eu_it_user_new(w.s, HOST, "fay", "read write follow", &fay_id);
    char *root = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"root\"}");
    char *b1 = reply(&w, eu_it_tok(&w, "bob"), root, "by bob");
    char *e1 = reply(&w, eve, b1, "by eve under bob");
    char *c1 = reply(&w, eu_it_tok(&w, "carol"), root, "by carol");
    char *a1 = reply(&w, eu_it_tok(&w, "alice"), c1, "by alice under carol");
    char *d1 = reply(&w, dave, root, "by dave");
    char *f1 = reply(&w, fay, root, "by fay");
    free(eu_it_world_sql(
        &w, "INSERT INTO blocks (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), eu_it_id(&w, "bob")));
    free(eu_it_world_sql(
        &w, "INSERT INTO blocks (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, dave_id, eu_it_id(&w, "alice")));
    free(eu_it_world_sql(
        &w, "INSERT INTO mutes (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), eu_it_id(&w, "carol")));
    free(eu_it_world_sql(&w,
                         "INSERT INTO mutes (tenant_id, account_id, target_account_id, expires_at)"
                         " VALUES (%s, %s, %s, now() - interval '1 minute')",
                         w.tid, eu_it_id(&w, "alice"), fay_id));

    char path[160];
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/context", root);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "descendants")), 3);
    ck_assert(lists(&r, "descendants", e1));
    ck_assert(lists(&r, "descendants", a1));
    ck_assert(lists(&r, "descendants", f1));
    ck_assert(!lists(&r, "descendants", b1));
    ck_assert(!lists(&r, "descendants", c1));
    ck_assert(!lists(&r, "descendants", d1));
    /* another viewer: everything */
    api(&w, &r, "GET", path, eve, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "descendants")), 6);
    ck_assert(lists(&r, "descendants", b1));
    ck_assert(lists(&r, "descendants", c1));
    ck_assert(lists(&r, "descendants", d1));

    /* Ancestors: bob's is left out above eve's reply, for alice only. */
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/context", e1);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "ancestors")), 1);
    EU_IT_EXPECT_JSTR(&r, "ancestors.0.id", root);
    api(&w, &r, "GET", path, eve, NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "ancestors")), 2);
    EU_IT_EXPECT_JSTR(&r, "ancestors.1.id", b1);
    /* carol's reply asked for: shown to alice with its thread around it,
     * though carol herself is muted */
    get_status(&w, &r, c1, eu_it_tok(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/context", c1);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "ancestors")), 1);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "descendants")), 1);
    EU_IT_EXPECT_JSTR(&r, "descendants.0.id", a1);
    /* dave blocks alice: her root is left out above his own reply */
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/context", d1);
    api(&w, &r, "GET", path, dave, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "ancestors")), 0);

    free(root);
    free(b1);
    free(e1);
    free(c1);
    free(a1);
    free(d1);
    free(f1);
    free(dave);
    free(eve);
    free(fay);
    free(dave_id);
    free(eve_id);
    free(fay_id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/*
 * Status search drops what the StatusFilter drops, in the statement that
 * picks the page: of the statuses mentioning alice and eve, alice finds
 * neither bob's (blocked), carol's (muted) nor dave's (he blocks her), but
 * her own; eve finds them all. A page of one is still full for alice.
 */
START_TEST(test_search_blocks_mutes)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *dave_id = NULL, *eve_id = NULL;
    char *dave = eu_it_user_new(w.s, HOST, "dave", "read write follow", &dave_id);
    char *eve = eu_it_user_new(w.s, HOST, "eve", "read write follow", &eve_id);
    const char *body = "{\"status\":\"@alice @eve needle\"}";
    char *mine = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"my needle\"}");
    char *b = post(&w, eu_it_tok(&w, "bob"), body);
    char *c = post(&w, eu_it_tok(&w, "carol"), body);
    char *d = post(&w, dave, body);
    free(eu_it_world_sql(
        &w, "INSERT INTO blocks (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), eu_it_id(&w, "bob")));
    free(eu_it_world_sql(
        &w, "INSERT INTO blocks (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, dave_id, eu_it_id(&w, "alice")));
    free(eu_it_world_sql(
        &w, "INSERT INTO mutes (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), eu_it_id(&w, "carol")));

    api(&w, &r, "GET", "/api/v2/search?q=needle&type=statuses", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 1);
    EU_IT_EXPECT_JSTR(&r, "statuses.0.id", mine);
    /* the newest three are hidden: a page of one still finds hers */
    api(&w, &r, "GET", "/api/v2/search?q=needle&type=statuses&limit=1", eu_it_tok(&w, "alice"),
        NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 1);
    EU_IT_EXPECT_JSTR(&r, "statuses.0.id", mine);
    api(&w, &r, "GET", "/api/v2/search?q=needle&type=statuses", eve, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 3);
    ck_assert(lists(&r, "statuses", b));
    ck_assert(lists(&r, "statuses", c));
    ck_assert(lists(&r, "statuses", d));
    /* unmuted, carol's comes back */
    free(eu_it_world_sql(&w, "DELETE FROM mutes WHERE tenant_id = %s AND account_id = %s", w.tid,
                         eu_it_id(&w, "alice")));
    api(&w, &r, "GET", "/api/v2/search?q=needle&type=statuses", eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 2);
    EU_IT_EXPECT_JSTR(&r, "statuses.0.id", c);

    free(mine);
    free(b);
    free(c);
    free(d);
    free(dave);
    free(eve);
    free(dave_id);
    free(eve_id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_interactions)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *id = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"like me\"}");

    /* favourite / unfavourite */
    status_action(&w, &r, id, "favourite", eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EXPECT_BOOL(&r, "favourited", true);
    EU_IT_EXPECT_JINT(&r, "favourites_count", 1);
    status_action(&w, &r, id, "favourite", eu_it_tok(&w, "bob")); /* twice is once */
    EU_IT_EXPECT_JINT(&r, "favourites_count", 1);
    status_action(&w, &r, id, "favourite", eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_JINT(&r, "favourites_count", 2);
    ck_assert_int_eq(sql_count_reaches(&w, 2,
                                       "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                       " AND account_id = %s AND type = 'favourite'",
                                       w.tid, eu_it_id(&w, "alice")),
                     2);
    get_status(&w, &r, id, eu_it_tok(&w, "alice"));
    EXPECT_BOOL(&r, "favourited", false);
    EU_IT_EXPECT_JINT(&r, "favourites_count", 2);

    char path[200];
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/favourited_by?limit=1", id);
    api(&w, &r, "GET", path, NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", eu_it_id(&w, "carol")); /* newest first */
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_msg(link && strstr(link, "rel=\"next\"") && strstr(link, "rel=\"prev\"") &&
                      strstr(link, "limit=1"),
                  "Link: %s", link ? link : "(none)");
    /* follow the next link */
    const char *max = strstr(link, "max_id=");
    ck_assert_ptr_nonnull(max);
    char maxid[32];
    sscanf(max + 7, "%31[0-9]", maxid);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/favourited_by?limit=1&max_id=%s", id, maxid);
    api(&w, &r, "GET", path, NULL, NULL);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", eu_it_id(&w, "bob"));

    status_action(&w, &r, id, "unfavourite", eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EXPECT_BOOL(&r, "favourited", false);
    EU_IT_EXPECT_JINT(&r, "favourites_count", 1);

    /* reblog / unreblog */
    status_action(&w, &r, id, "reblog", eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "reblog.id", id);
    EU_IT_EXPECT_JSTR(&r, "account.id", eu_it_id(&w, "bob"));
    EXPECT_BOOL(&r, "reblog.reblogged", true);
    EU_IT_EXPECT_JINT(&r, "reblog.reblogs_count", 1);
    char *reblog_id = strdup(eu_it_json_str(&r, "id"));
    status_action(&w, &r, id, "reblog", eu_it_tok(&w, "bob")); /* again: the same reblog */
    EU_IT_EXPECT_JSTR(&r, "id", reblog_id);
    /* favouriting a reblog favourites the original */
    status_action(&w, &r, reblog_id, "favourite", eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_JSTR(&r, "id", id);
    ck_assert_int_eq(sql_count_reaches(&w, 1,
                                       "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                       " AND account_id = %s AND type = 'reblog'",
                                       w.tid, eu_it_id(&w, "alice")),
                     1);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/reblogged_by", id);
    api(&w, &r, "GET", path, eu_it_tok(&w, "carol"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", eu_it_id(&w, "bob"));
    status_action(&w, &r, id, "unreblog", eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", id);
    EXPECT_BOOL(&r, "reblogged", false);
    EU_IT_EXPECT_JINT(&r, "reblogs_count", 0);
    get_status(&w, &r, reblog_id, eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_ERROR(&r, 404);

    /* bookmark / unbookmark */
    status_action(&w, &r, id, "bookmark", eu_it_tok(&w, "bob"));
    EXPECT_BOOL(&r, "bookmarked", true);
    get_status(&w, &r, id, eu_it_tok(&w, "carol"));
    EXPECT_BOOL(&r, "bookmarked", false);
    status_action(&w, &r, id, "unbookmark", eu_it_tok(&w, "bob"));
    EXPECT_BOOL(&r, "bookmarked", false);

    /* mute / unmute the conversation */
    status_action(&w, &r, id, "mute", eu_it_tok(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EXPECT_BOOL(&r, "muted", true);
    status_action(&w, &r, id, "unmute", eu_it_tok(&w, "alice"));
    EXPECT_BOOL(&r, "muted", false);

    /* pin / unpin: own statuses only */
    status_action(&w, &r, id, "pin", eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_ERROR(&r, 422);
    status_action(&w, &r, id, "pin", eu_it_tok(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EXPECT_BOOL(&r, "pinned", true);
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses?pinned=true", eu_it_id(&w, "alice"));
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", id);
    status_action(&w, &r, id, "unpin", eu_it_tok(&w, "alice"));
    EXPECT_BOOL(&r, "pinned", false);
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 0);
    char *dm =
        post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"@bob psst\",\"visibility\":\"direct\"}");
    status_action(&w, &r, dm, "pin", eu_it_tok(&w, "alice"));
    EU_IT_EXPECT_ERROR(&r, 422);
    /* and a direct status cannot be reblogged */
    status_action(&w, &r, dm, "reblog", eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_ERROR(&r, 403);

    /* interactions with what one cannot see are 404 */
    status_action(&w, &r, dm, "favourite", eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_ERROR(&r, 404);
    status_action(&w, &r, "12345", "favourite", eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_ERROR(&r, 404);

    free(dm);
    free(reblog_id);
    free(id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/*
 * A post that leaves visibility or sensitive out takes the author's
 * defaults, whichever statement inserts it: a plain post (statuses.
 * insert_plain reads them itself) and one with a hashtag (read before).
 * Followers who asked to be told hear of each, but not of a reply to
 * someone else (Mastodon's rule).
 */
START_TEST(test_author_defaults)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    free(eu_it_world_sql(&w,
                         "INSERT INTO follows (tenant_id, account_id, target_account_id, notify)"
                         " VALUES (%s, %s, %s, true)",
                         w.tid, eu_it_id(&w, "bob"), eu_it_id(&w, "alice")));
    free(eu_it_world_sql(&w,
                         "UPDATE users SET default_privacy = 'unlisted', default_sensitive = true"
                         " WHERE tenant_id = %s AND account_id = %s",
                         w.tid, eu_it_id(&w, "alice")));
    const char *bodies[] = {"{\"status\":\"plain\"}", "{\"status\":\"tagged #defaults\"}"};
    for (int i = 0; i < 2; i++) {
        char *id = post(&w, eu_it_tok(&w, "alice"), bodies[i]);
        get_status(&w, &r, id, eu_it_tok(&w, "alice"));
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JSTR(&r, "visibility", "unlisted");
        EXPECT_BOOL(&r, "sensitive", true);
        free(id);
    }
    /* given values win over the defaults */
    char *given = post(&w, eu_it_tok(&w, "alice"),
                       "{\"status\":\"given\",\"visibility\":\"public\","
                       "\"sensitive\":false}");
    get_status(&w, &r, given, eu_it_tok(&w, "alice"));
    EU_IT_EXPECT_JSTR(&r, "visibility", "public");
    EXPECT_BOOL(&r, "sensitive", false);
    /* bob, a follower, has the three in his home feed and was told of each */
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 3);
    EU_IT_EXPECT_JSTR(&r, "0.id", given);
    ck_assert_int_eq(sql_count_reaches(&w, 3,
                                       "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                       " AND account_id = %s AND type = 'status'",
                                       w.tid, eu_it_id(&w, "bob")),
                     3);
    /* a reply to someone else is not announced to followers */
    char *bobs = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"bob here\"}");
    char body[200];
    snprintf(body, sizeof(body), "{\"status\":\"reply\",\"in_reply_to_id\":\"%s\"}", bobs);
    free(post(&w, eu_it_tok(&w, "alice"), body));
    ck_assert_int_eq(sql_count_reaches(&w, 3,
                                       "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                       " AND account_id = %s AND type = 'status'",
                                       w.tid, eu_it_id(&w, "bob")),
                     3);
    free(bobs);
    free(given);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_visibility_and_blocks)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    /* bob follows alice; carol does not */
    free(eu_it_world_sql(
        &w, "INSERT INTO follows (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "bob"), eu_it_id(&w, "alice")));
    char *priv = post(&w, eu_it_tok(&w, "alice"),
                      "{\"status\":\"followers only\",\"visibility\":\"private\"}");
    char *dm = post(&w, eu_it_tok(&w, "alice"),
                    "{\"status\":\"@carol just you\",\"visibility\":\"direct\"}");
    char *pub = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"everyone\"}");

    get_status(&w, &r, priv, eu_it_tok(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "visibility", "private");
    get_status(&w, &r, priv, eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_ERROR(&r, 404);
    get_status(&w, &r, priv, NULL);
    EU_IT_EXPECT_ERROR(&r, 404);
    get_status(&w, &r, priv, eu_it_tok(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);

    get_status(&w, &r, dm, eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "visibility", "direct");
    get_status(&w, &r, dm, eu_it_tok(&w, "bob")); /* a follower, but not mentioned */
    EU_IT_EXPECT_ERROR(&r, 404);
    get_status(&w, &r, dm, NULL);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* the account timeline shows each viewer what they may see */
    char path[200];
    snprintf(path, sizeof(path), "/api/v1/accounts/%s/statuses", eu_it_id(&w, "alice"));
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.id", pub);
    EU_IT_EXPECT_JSTR(&r, "1.id", priv);
    api(&w, &r, "GET", path, eu_it_tok(&w, "carol"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "1.id", dm);
    api(&w, &r, "GET", path, NULL, NULL);
    ck_assert_int_eq(json_array_size(r.json), 1);
    api(&w, &r, "GET", "/api/v1/accounts/424242/statuses", NULL, NULL);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* alice blocks carol: carol sees nothing of hers */
    free(eu_it_world_sql(
        &w, "INSERT INTO blocks (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), eu_it_id(&w, "carol")));
    get_status(&w, &r, pub, eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_ERROR(&r, 404);
    get_status(&w, &r, dm, eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "GET", path, eu_it_tok(&w, "carol"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    api(&w, &r, "GET", "/api/v1/timelines/public", eu_it_tok(&w, "carol"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    status_action(&w, &r, pub, "favourite", eu_it_tok(&w, "carol"));
    EU_IT_EXPECT_ERROR(&r, 404);
    /* and cannot reply to her */
    char body[200];
    snprintf(body, sizeof(body), "{\"status\":\"hey\",\"in_reply_to_id\":\"%s\"}", pub);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "carol"), body);
    EU_IT_EXPECT_ERROR(&r, 404);
    /* others still see it */
    get_status(&w, &r, pub, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);

    free(priv);
    free(dm);
    free(pub);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("integration.statuses");
    EU_IT_ADD_TCASE(s, test_create_get_delete, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_form_params_and_scope, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_idempotency, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_edit_history_source, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_context, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_context_blocks_mutes, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_search_blocks_mutes, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_interactions, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_visibility_and_blocks, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_author_defaults, TIMEOUT);
    return eu_it_run_suite(s);
}
