/*
 * Notifications end to end: the v1 list with types[], exclude_types[],
 * account_id and Link paging, one notification, dismiss, clear, the unread
 * count against the notifications marker; grouped notifications (v2) with
 * counts, sample accounts, statuses and group dismissal; notifications of
 * a deleted status disappearing; filters with the notifications context;
 * scope refusal. Notifications are caused through the real endpoints
 * (follow, mention, favourite, reblog) and written by eu_notify(), which is
 * fire and forget, so the tests wait for the rows to appear.
 */
#include "world.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define HOST "n.example"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .users = {{"alice"}, {"bob"}, {"carol"}},
};

static void
api(struct world *w, struct eu_it_resp *r, const char *method, const char *path, const char *token,
    const char *body)
{
    ck_assert_int_eq(eu_it_http(r, method, w->s->public_port, HOST, path, token, body), 0);
}

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

/* Waits until account_id has n notifications (eu_notify writes after the
 * answer of the request that caused them). */
static void
wait_notes(struct world *w, const char *account_id, long n)
{
    char q[256];
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM notifications WHERE tenant_id = %s AND account_id = %s", w->tid,
             account_id);
    long got = -1;
    for (int i = 0; i < 100; i++) {
        got = eu_it_pg_exec_long(w->db, q);
        if (got >= n)
            return;
        eu_it_sleep_ms(50);
    }
    ck_abort_msg("expected %ld notifications, have %ld", n, got);
}

/* The "type" of every element of r's array, joined by ',' (caller frees). */
static char *
types_of(const struct eu_it_resp *r)
{
    ck_assert_msg(json_is_array(r->json), "not an array: %.500s", r->body);
    char buf[1024] = "";
    size_t i;
    json_t *v;
    json_array_foreach(r->json, i, v)
    {
        if (i)
            strcat(buf, ",");
        strncat(buf, json_string_value(json_object_get(v, "type")), 100);
    }
    return strdup(buf);
}

#define EXPECT_TYPES(r, want)                                                                      \
    do {                                                                                           \
        char *t_ = types_of(r);                                                                    \
        ck_assert_str_eq(t_, (want));                                                              \
        free(t_);                                                                                  \
    } while (0)

/* Alice gets: follow (bob), mention (bob), favourite (carol), reblog (bob). */
static char *
make_notes(struct world *w)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "POST", eu_it_tok(w, "bob"), NULL, "/api/v1/accounts/%s/follow",
                eu_it_id(w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    wait_notes(w, eu_it_id(w, "alice"), 1);
    char *mention = post(w, eu_it_tok(w, "bob"), "{\"status\":\"hi @alice\"}");
    wait_notes(w, eu_it_id(w, "alice"), 2);
    char *mine = post(w, eu_it_tok(w, "alice"), "{\"status\":\"my post\"}");
    eu_it_callf(w->s, &r, HOST, "POST", eu_it_tok(w, "carol"), NULL,
                "/api/v1/statuses/%s/favourite", mine);
    EU_IT_EXPECT_STATUS(&r, 200);
    wait_notes(w, eu_it_id(w, "alice"), 3);
    eu_it_callf(w->s, &r, HOST, "POST", eu_it_tok(w, "bob"), NULL, "/api/v1/statuses/%s/reblog",
                mine);
    EU_IT_EXPECT_STATUS(&r, 200);
    wait_notes(w, eu_it_id(w, "alice"), 4);
    eu_it_resp_free(&r);
    free(mention);
    return mine;
}

START_TEST(test_list_and_filters)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *mine = make_notes(&w);
    struct eu_it_resp r = {0};

    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EXPECT_TYPES(&r, "reblog,favourite,mention,follow");
    /* Entity shape. */
    EU_IT_EXPECT_JSTR(&r, "0.account.username", "bob");
    EU_IT_EXPECT_JSTR(&r, "0.status.id", mine);
    EU_IT_EXPECT_JSTR(&r, "1.account.username", "carol");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(r.json, "2.status.content")), "@<span>alice</span>"));
    ck_assert_ptr_null(eu_it_jpath(r.json, "3.status"));
    ck_assert_ptr_nonnull(eu_it_jpath(r.json, "3.created_at"));
    ck_assert_msg(strncmp(json_string_value(eu_it_jpath(r.json, "3.group_key")), "follow-", 7) == 0,
                  "follow group key: %s", r.body);
    ck_assert_msg(
        strncmp(json_string_value(eu_it_jpath(r.json, "2.group_key")), "ungrouped-", 10) == 0,
        "mention group key: %s", r.body);
    char *follow_id = strdup(json_string_value(eu_it_jpath(r.json, "3.id")));

    api(&w, &r, "GET", "/api/v1/notifications?types[]=mention&types[]=follow",
        eu_it_tok(&w, "alice"), NULL);
    EXPECT_TYPES(&r, "mention,follow");
    api(&w, &r, "GET", "/api/v1/notifications?exclude_types[]=mention&exclude_types[]=reblog",
        eu_it_tok(&w, "alice"), NULL);
    EXPECT_TYPES(&r, "favourite,follow");
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/notifications?account_id=%s", eu_it_id(&w, "carol"));
    EXPECT_TYPES(&r, "favourite");
    /* Bob has none of his own. */
    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "bob"), NULL);
    EXPECT_TYPES(&r, "");

    /* Paging: two per page, Link to the next. */
    api(&w, &r, "GET", "/api/v1/notifications?limit=2", eu_it_tok(&w, "alice"), NULL);
    EXPECT_TYPES(&r, "reblog,favourite");
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_ptr_nonnull(link);
    ck_assert_ptr_nonnull(strstr(link, "rel=\"next\""));
    char *last = strdup(json_string_value(eu_it_jpath(r.json, "1.id")));
    ck_assert_ptr_nonnull(strstr(link, last));
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/notifications?limit=2&max_id=%s", last);
    EXPECT_TYPES(&r, "mention,follow");
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/notifications?limit=1&min_id=%s", follow_id);
    EXPECT_TYPES(&r, "mention");

    /* One, and someone else's is 404. */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/%s",
                follow_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "follow");
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/notifications/%s",
                follow_id);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "GET", "/api/v1/notifications/abc", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Unread count follows the marker. */
    api(&w, &r, "GET", "/api/v1/notifications/unread_count", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JINT(&r, "count", 4);
    char body[256];
    snprintf(body, sizeof(body), "{\"notifications\":{\"last_read_id\":\"%s\"}}", last);
    api(&w, &r, "POST", "/api/v1/markers", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "notifications.last_read_id", last);
    api(&w, &r, "GET", "/api/v1/notifications/unread_count", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JINT(&r, "count", 1);

    /* Dismiss one, then clear. */
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/notifications/%s/dismiss", follow_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/%s",
                follow_id);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "alice"), NULL);
    EXPECT_TYPES(&r, "reblog,favourite,mention");

    /* A status deleted takes its notifications with it. */
    struct eu_it_resp d = {0};
    api(&w, &d, "GET", "/api/v1/notifications?types[]=mention", eu_it_tok(&w, "alice"), NULL);
    const char *mention_status = json_string_value(eu_it_jpath(d.json, "0.status.id"));
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s",
                mention_status);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&d);
    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "alice"), NULL);
    EXPECT_TYPES(&r, "reblog,favourite");

    api(&w, &r, "POST", "/api/v1/notifications/clear", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "alice"), NULL);
    EXPECT_TYPES(&r, "");

    eu_it_resp_free(&r);
    free(last);
    free(follow_id);
    free(mine);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_filters_apply_to_notifications)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *a =
        post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"@alice spoilers for the Movie inside\"}");
    char *b = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"@alice nice weather\"}");
    wait_notes(&w, eu_it_id(&w, "alice"), 2);

    api(&w, &r, "POST", "/api/v2/filters", eu_it_tok(&w, "alice"),
        "{\"title\":\"films\",\"context\":[\"notifications\"],\"filter_action\":\"hide\","
        "\"keywords_attributes\":[{\"keyword\":\"movie\",\"whole_word\":true}]}");
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "alice"), NULL);
    EXPECT_TYPES(&r, "mention");
    EU_IT_EXPECT_JSTR(&r, "0.status.id", b);

    /* As a warning it stays, marked. */
    char *fid = strdup(eu_it_json_str(&r, "id") ? eu_it_json_str(&r, "id") : "");
    api(&w, &r, "GET", "/api/v2/filters", eu_it_tok(&w, "alice"), NULL);
    const char *filter_id = json_string_value(eu_it_jpath(r.json, "0.id"));
    struct eu_it_resp u = {0};
    eu_it_callf(w.s, &u, HOST, "PUT", eu_it_tok(&w, "alice"), "{\"filter_action\":\"warn\"}",
                "/api/v2/filters/%s", filter_id);
    EU_IT_EXPECT_STATUS(&u, 200);
    EU_IT_EXPECT_JSTR(&u, "filter_action", "warn");
    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "alice"), NULL);
    EXPECT_TYPES(&r, "mention,mention");
    EU_IT_EXPECT_JSTR(&r, "1.status.id", a);
    EU_IT_EXPECT_JSTR(&r, "1.status.filtered.0.filter.title", "films");
    EU_IT_EXPECT_JSTR(&r, "1.status.filtered.0.keyword_matches.0", "movie");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.status.filtered")), 0);

    eu_it_resp_free(&u);
    eu_it_resp_free(&r);
    free(fid);
    free(a);
    free(b);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_grouped)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *mine = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"group me\"}");
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/favourite",
                mine);
    EU_IT_EXPECT_STATUS(&r, 200);
    wait_notes(&w, eu_it_id(&w, "alice"), 1);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "carol"), NULL,
                "/api/v1/statuses/%s/favourite", mine);
    EU_IT_EXPECT_STATUS(&r, 200);
    wait_notes(&w, eu_it_id(&w, "alice"), 2);
    char *mention = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"@alice ping\"}");
    wait_notes(&w, eu_it_id(&w, "alice"), 3);

    api(&w, &r, "GET", "/api/v2/notifications", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *groups = eu_it_jpath(r.json, "notification_groups");
    ck_assert_int_eq(json_array_size(groups), 2);
    EU_IT_EXPECT_JSTR(&r, "notification_groups.0.type", "mention");
    EU_IT_EXPECT_JINT(&r, "notification_groups.0.notifications_count", 1);
    EU_IT_EXPECT_JSTR(&r, "notification_groups.0.status_id", mention);
    EU_IT_EXPECT_JSTR(&r, "notification_groups.1.type", "favourite");
    EU_IT_EXPECT_JINT(&r, "notification_groups.1.notifications_count", 2);
    EU_IT_EXPECT_JSTR(&r, "notification_groups.1.status_id", mine);
    /* Samples most recent first; their accounts and the statuses come along. */
    EU_IT_EXPECT_JSTR(&r, "notification_groups.1.sample_account_ids.0", eu_it_id(&w, "carol"));
    EU_IT_EXPECT_JSTR(&r, "notification_groups.1.sample_account_ids.1", eu_it_id(&w, "bob"));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "accounts")), 2);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 2);
    ck_assert_ptr_nonnull(eu_it_jpath(r.json, "notification_groups.1.most_recent_notification_id"));
    ck_assert_ptr_nonnull(eu_it_jpath(r.json, "notification_groups.1.page_min_id"));
    char *key = strdup(json_string_value(eu_it_jpath(r.json, "notification_groups.1.group_key")));
    ck_assert_msg(strncmp(key, "favourite-", 10) == 0, "group key %s", key);

    /* Ungrouping favourites splits them. */
    api(&w, &r, "GET", "/api/v2/notifications?grouped_types[]=reblog", eu_it_tok(&w, "alice"),
        NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "notification_groups")), 3);

    api(&w, &r, "GET", "/api/v2/notifications?limit=1", eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "notification_groups")), 1);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));

    api(&w, &r, "GET", "/api/v2/notifications/unread_count", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JINT(&r, "count", 2);

    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/notifications/%s",
                key);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "notification_groups.0.notifications_count", 2);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v2/notifications/%s/accounts", key);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "0.username", "carol");
    EU_IT_EXPECT_JSTR(&r, "1.username", "bob");

    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v2/notifications/%s/dismiss", key);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/notifications/%s",
                key);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "GET", "/api/v2/notifications", eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "notification_groups")), 1);

    eu_it_resp_free(&r);
    free(key);
    free(mine);
    free(mention);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_scopes)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *tok = eu_it_user_token(w.s, HOST, "alice", "read:statuses");
    api(&w, &r, "GET", "/api/v1/notifications", tok, NULL);
    EU_IT_EXPECT_ERROR(&r, 403);
    ck_assert_str_eq(eu_it_json_str(&r, "error"), "This action is outside the authorized scopes");
    api(&w, &r, "GET", "/api/v2/notifications", tok, NULL);
    EU_IT_EXPECT_ERROR(&r, 403);
    char *rn = eu_it_user_token(w.s, HOST, "alice", "read:notifications");
    api(&w, &r, "GET", "/api/v1/notifications", rn, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "POST", "/api/v1/notifications/clear", rn, NULL);
    EU_IT_EXPECT_ERROR(&r, 403);
    api(&w, &r, "GET", "/api/v1/notifications", NULL, NULL);
    EU_IT_EXPECT_ERROR(&r, 401);
    eu_it_resp_free(&r);
    free(tok);
    free(rn);
    eu_it_world_stop(&w);
}
END_TEST

/* A post to several recipients is one statement (eu_notify_many): each
 * mentioned account once, the author never, and a subscriber's "status"
 * for each post. */
START_TEST(test_many_recipients)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "carol"), "{\"notify\":true}",
                "/api/v1/accounts/%s/follow", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    wait_notes(&w, eu_it_id(&w, "bob"), 1); /* the follow */
    char *first = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"hi @alice @carol @bob @alice\"}");
    wait_notes(&w, eu_it_id(&w, "alice"), 1);
    wait_notes(&w, eu_it_id(&w, "carol"), 1);
    char *second = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"news\"}");
    wait_notes(&w, eu_it_id(&w, "carol"), 2);
    eu_it_sleep_ms(200); /* nothing more is on its way */
    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "alice"), NULL);
    EXPECT_TYPES(&r, "mention");
    /* Carol, mentioned and subscribed, hears of the first post both ways,
     * as Mastodon's two workers tell her; of the second by her bell. */
    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "carol"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 3);
    EU_IT_EXPECT_JSTR(&r, "0.type", "status");
    EU_IT_EXPECT_JSTR(&r, "0.status.id", second);
    api(&w, &r, "GET", "/api/v1/notifications?types[]=mention", eu_it_tok(&w, "carol"), NULL);
    EXPECT_TYPES(&r, "mention");
    EU_IT_EXPECT_JSTR(&r, "0.status.id", first);
    api(&w, &r, "GET", "/api/v1/notifications", eu_it_tok(&w, "bob"), NULL);
    EXPECT_TYPES(&r, "follow");
    free(first);
    free(second);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("notifications");
    EU_IT_ADD_TCASE(s, test_list_and_filters, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_many_recipients, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_filters_apply_to_notifications, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_grouped, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_scopes, TIMEOUT);
    return eu_it_run_suite(s);
}
