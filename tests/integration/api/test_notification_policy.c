/*
 * The notification policy and notification requests end to end: the v1
 * and v2 policy bodies and their validation; each condition (not
 * following, not followers, new account, private mention, limited
 * account) with filter and drop, and a followed sender never held back;
 * filtered notifications out of the lists and counters; requests listed,
 * shown, accepted (the held-back notifications join the list and later
 * ones pass), dismissed and handled in bulk; a decoy tenant's user in the
 * same placement reaching none of it; and a remote sender's private
 * mention, delivered through a signed inbox, filtered like a local one.
 *
 * eu_notify() writes after the answer of the request that caused it, so
 * the tests wait for rows; a dropped notification is checked after a later
 * one, from a sender the policy lets through, has arrived.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "np.example"
#define DECOY "decoy.example"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice"},
              {"alice_ro", NULL, "alice", "read"},
              {"bob"},
              {"carol"},
              {"dave"},
              {"erin"},
              {"frank"},
              {"gina"},
              {"mona"},
              {"dora", DECOY, "alice"}},
};

static void
call(struct world *w, struct eu_it_resp *r, const char *host, const char *method, const char *tok,
     const char *body, const char *path)
{
    ck_assert_int_eq(eu_it_http(r, method, w->s->public_port, host, path, tok, body), 0);
}

/* Posts text as who with visibility (and a reply to in_reply_to, or NULL);
 * returns the status id (caller frees). */
static char *
post(struct world *w, const char *who, const char *text, const char *visibility,
     const char *in_reply_to)
{
    char body[512];
    if (in_reply_to)
        snprintf(body, sizeof(body),
                 "{\"status\":\"%s\",\"visibility\":\"%s\",\"in_reply_to_id\":\"%s\"}", text,
                 visibility, in_reply_to);
    else
        snprintf(body, sizeof(body), "{\"status\":\"%s\",\"visibility\":\"%s\"}", text, visibility);
    struct eu_it_resp r = {0};
    call(w, &r, HOST, "POST", eu_it_tok(w, who), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* Notifications of alice from who: all (filtered < 0), or only the
 * filtered (1) or accepted (0) ones. */
static long
notes_from(struct world *w, const char *who, int filtered)
{
    return eu_it_world_sql_long(w,
                                "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                " AND account_id = %s AND from_account_id = %s"
                                " AND (%d < 0 OR filtered = (%d = 1))",
                                w->tid, eu_it_id(w, "alice"), eu_it_id(w, who), filtered, filtered);
}

static void
wait_notes_from(struct world *w, const char *who, int filtered, long n)
{
    long got = -1;
    for (int i = 0; i < 200; i++) {
        got = notes_from(w, who, filtered);
        if (got >= n)
            return;
        eu_it_sleep_ms(50);
    }
    ck_abort_msg("expected %ld notifications from %s (filtered %d), have %ld", n, who, filtered,
                 got);
}

static void
set_policy(struct world *w, const char *body)
{
    struct eu_it_resp r = {0};
    call(w, &r, HOST, "PATCH", eu_it_tok(w, "alice"), body, "/api/v2/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

/* Makes who older than Mastodon's 30 days of a new account. */
static void
age(struct world *w, const char *who)
{
    free(eu_it_world_sql(w,
                         "UPDATE accounts SET created_at = now() - interval '40 days'"
                         " WHERE tenant_id = %s AND id = %s",
                         w->tid, eu_it_id(w, who)));
}

static void
follow(struct world *w, const char *who, const char *whom)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "POST", eu_it_tok(w, who), NULL, "/api/v1/accounts/%s/follow",
                eu_it_id(w, whom));
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

/* The ids of the elements of r's array, joined by ','. */
static void
ids_of(const struct eu_it_resp *r, char *out, size_t n)
{
    ck_assert_msg(json_is_array(r->json), "not an array: %.500s", r->body);
    out[0] = '\0';
    size_t i;
    json_t *v;
    json_array_foreach(r->json, i, v)
    {
        if (i)
            strncat(out, ",", n - strlen(out) - 1);
        strncat(out, json_string_value(json_object_get(v, "id")), n - strlen(out) - 1);
    }
}

START_TEST(test_policy_bodies)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};

    /* Mastodon's defaults: private mentions and limited accounts filtered. */
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "for_not_following", "accept");
    EU_IT_EXPECT_JSTR(&r, "for_not_followers", "accept");
    EU_IT_EXPECT_JSTR(&r, "for_new_accounts", "accept");
    EU_IT_EXPECT_JSTR(&r, "for_private_mentions", "filter");
    EU_IT_EXPECT_JSTR(&r, "for_limited_accounts", "filter");
    EU_IT_EXPECT_JINT(&r, "summary.pending_requests_count", 0);
    EU_IT_EXPECT_JINT(&r, "summary.pending_notifications_count", 0);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_false(json_object_get(r.json, "filter_not_following")));
    ck_assert(json_is_false(json_object_get(r.json, "filter_not_followers")));
    ck_assert(json_is_false(json_object_get(r.json, "filter_new_accounts")));
    ck_assert(json_is_true(json_object_get(r.json, "filter_private_mentions")));
    ck_assert_ptr_null(json_object_get(r.json, "for_limited_accounts"));
    EU_IT_EXPECT_JINT(&r, "summary.pending_requests_count", 0);

    /* v2: a partial change keeps the rest; a bad value is a 422. */
    call(&w, &r, HOST, "PATCH", eu_it_tok(&w, "alice"),
         "{\"for_not_following\":\"drop\",\"for_limited_accounts\":\"accept\"}",
         "/api/v2/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "for_not_following", "drop");
    EU_IT_EXPECT_JSTR(&r, "for_private_mentions", "filter");
    EU_IT_EXPECT_JSTR(&r, "for_limited_accounts", "accept");
    ck_assert_ptr_nonnull(json_object_get(r.json, "summary"));
    call(&w, &r, HOST, "PATCH", eu_it_tok(&w, "alice"), "{\"for_new_accounts\":\"maybe\"}",
         "/api/v2/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "error",
                      "Validation failed: For new accounts is not included in the list");

    /* v1 reads "not accept" as filtering and writes filter or accept. */
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/policy");
    ck_assert(json_is_true(json_object_get(r.json, "filter_not_following")));
    call(&w, &r, HOST, "PATCH", eu_it_tok(&w, "alice"),
         "{\"filter_not_following\":false,\"filter_new_accounts\":true}",
         "/api/v1/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_false(json_object_get(r.json, "filter_not_following")));
    ck_assert(json_is_true(json_object_get(r.json, "filter_new_accounts")));
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/notifications/policy");
    EU_IT_EXPECT_JSTR(&r, "for_not_following", "accept");
    EU_IT_EXPECT_JSTR(&r, "for_new_accounts", "filter");
    EU_IT_EXPECT_JSTR(&r, "for_limited_accounts", "accept");
    call(&w, &r, HOST, "PATCH", eu_it_tok(&w, "alice"), "{\"filter_new_accounts\":\"perhaps\"}",
         "/api/v1/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 422);

    /* Scopes: reading needs read:notifications, changing write. */
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice_ro"), NULL, "/api/v2/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, HOST, "PATCH", eu_it_tok(&w, "alice_ro"), "{\"for_new_accounts\":\"drop\"}",
         "/api/v2/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 403);
    call(&w, &r, HOST, "GET", NULL, NULL, "/api/v2/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 401);

    /* The decoy's alice, in the same placement, still has the defaults. */
    call(&w, &r, DECOY, "GET", eu_it_tok(&w, "dora"), NULL, "/api/v2/notifications/policy");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "for_not_following", "accept");
    EU_IT_EXPECT_JSTR(&r, "for_new_accounts", "accept");
    EU_IT_EXPECT_JSTR(&r, "for_limited_accounts", "filter");

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_conditions)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    /* Only the condition under test holds back: age everyone. */
    const char *senders[] = {"bob", "carol", "dave", "erin", "frank", "gina"};
    for (size_t i = 0; i < sizeof(senders) / sizeof(*senders); i++)
        age(&w, senders[i]);

    /* Private mention (the default filter) from someone not followed. */
    free(post(&w, "bob", "@alice psst", "direct", NULL));
    wait_notes_from(&w, "bob", 1, 1);
    /* ...but not an answer to alice's own private mention of bob. */
    char *ask = post(&w, "alice", "@bob a question", "direct", NULL);
    free(post(&w, "bob", "@alice the answer", "direct", ask));
    wait_notes_from(&w, "bob", 0, 1);
    ck_assert_int_eq(notes_from(&w, "bob", 1), 1);
    /* Filtered: out of the lists, the counters and grouped notifications. */
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    ck_assert(strstr(r.body, "the answer") && !strstr(r.body, "psst"));
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
         "/api/v1/notifications?include_filtered=true");
    ck_assert_int_eq(json_array_size(r.json), 2);
    ck_assert_ptr_nonnull(strstr(r.body, "psst"));
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/unread_count");
    EU_IT_EXPECT_JINT(&r, "count", 1);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/notifications/unread_count");
    EU_IT_EXPECT_JINT(&r, "count", 1);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/notifications");
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "notification_groups")), 1);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
         "/api/v2/notifications?include_filtered=true");
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "notification_groups")), 2);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/notifications/policy");
    EU_IT_EXPECT_JINT(&r, "summary.pending_requests_count", 1);
    EU_IT_EXPECT_JINT(&r, "summary.pending_notifications_count", 1);

    /* Private mentions dropped: no row (checked after a later public one). */
    set_policy(&w, "{\"for_private_mentions\":\"drop\"}");
    free(post(&w, "carol", "@alice secret", "direct", NULL));
    free(post(&w, "carol", "@alice in the open", "public", NULL));
    wait_notes_from(&w, "carol", 0, 1);
    ck_assert_int_eq(notes_from(&w, "carol", -1), 1);

    /* Not following: filtered, then passes once alice follows dave. */
    set_policy(&w, "{\"for_not_following\":\"filter\",\"for_private_mentions\":\"accept\"}");
    free(post(&w, "dave", "@alice hello stranger", "public", NULL));
    wait_notes_from(&w, "dave", 1, 1);
    follow(&w, "alice", "dave");
    free(post(&w, "dave", "@alice hello friend", "public", NULL));
    free(post(&w, "dave", "@alice a private hello", "direct", NULL));
    wait_notes_from(&w, "dave", 0, 2);
    ck_assert_int_eq(notes_from(&w, "dave", 1), 1);
    /* A followed sender passes whatever the settings that spare the
     * followed say (not followers does not: dave does not follow alice). */
    set_policy(&w, "{\"for_not_following\":\"drop\",\"for_not_followers\":\"accept\","
                   "\"for_new_accounts\":\"drop\",\"for_private_mentions\":\"drop\","
                   "\"for_limited_accounts\":\"drop\"}");
    free(eu_it_world_sql(&w,
                         "UPDATE accounts SET silenced_at = now() WHERE tenant_id = %s AND id = %s",
                         w.tid, eu_it_id(&w, "dave")));
    free(post(&w, "dave", "@alice a private word", "direct", NULL));
    wait_notes_from(&w, "dave", 0, 3);
    free(eu_it_world_sql(&w,
                         "UPDATE accounts SET silenced_at = NULL WHERE tenant_id = %s AND id = %s",
                         w.tid, eu_it_id(&w, "dave")));

    /* Not following, dropped. */
    set_policy(&w, "{\"for_not_following\":\"drop\",\"for_not_followers\":\"accept\","
                   "\"for_new_accounts\":\"accept\",\"for_private_mentions\":\"accept\","
                   "\"for_limited_accounts\":\"accept\"}");
    free(post(&w, "erin", "@alice dropped", "public", NULL));
    free(post(&w, "dave", "@alice marker one", "public", NULL));
    wait_notes_from(&w, "dave", 0, 4);
    ck_assert_int_eq(notes_from(&w, "erin", -1), 0);

    /* Not followers: a follower of three days passes, a new one does not
     * (even its follow notification waits). */
    set_policy(&w, "{\"for_not_following\":\"accept\",\"for_not_followers\":\"filter\"}");
    follow(&w, "frank", "alice");
    wait_notes_from(&w, "frank", 1, 1);
    free(eu_it_world_sql(&w,
                         "UPDATE follows SET created_at = now() - interval '4 days'"
                         " WHERE tenant_id = %s AND account_id = %s",
                         w.tid, eu_it_id(&w, "frank")));
    free(post(&w, "frank", "@alice from a follower", "public", NULL));
    wait_notes_from(&w, "frank", 0, 1);
    free(post(&w, "erin", "@alice from no follower", "public", NULL));
    wait_notes_from(&w, "erin", 1, 1);
    set_policy(&w, "{\"for_not_followers\":\"drop\"}");
    free(post(&w, "erin", "@alice dropped again", "public", NULL));
    free(post(&w, "frank", "@alice marker two", "public", NULL));
    wait_notes_from(&w, "frank", 0, 2);
    ck_assert_int_eq(notes_from(&w, "erin", -1), 1);

    /* New accounts: gina made young again. */
    set_policy(&w, "{\"for_not_followers\":\"accept\",\"for_new_accounts\":\"filter\"}");
    free(eu_it_world_sql(&w,
                         "UPDATE accounts SET created_at = now() WHERE tenant_id = %s AND id = %s",
                         w.tid, eu_it_id(&w, "gina")));
    free(post(&w, "gina", "@alice I am new here", "public", NULL));
    wait_notes_from(&w, "gina", 1, 1);
    set_policy(&w, "{\"for_new_accounts\":\"drop\"}");
    free(post(&w, "gina", "@alice still new", "public", NULL));
    free(post(&w, "frank", "@alice marker three", "public", NULL));
    wait_notes_from(&w, "frank", 0, 3);
    ck_assert_int_eq(notes_from(&w, "gina", -1), 1);

    /* Limited accounts: erin silenced by the moderators. */
    set_policy(&w, "{\"for_new_accounts\":\"accept\",\"for_limited_accounts\":\"filter\"}");
    free(eu_it_world_sql(&w,
                         "UPDATE accounts SET silenced_at = now() WHERE tenant_id = %s AND id = %s",
                         w.tid, eu_it_id(&w, "erin")));
    free(post(&w, "erin", "@alice limited", "public", NULL));
    wait_notes_from(&w, "erin", 1, 2);
    set_policy(&w, "{\"for_limited_accounts\":\"drop\"}");
    free(post(&w, "erin", "@alice limited and dropped", "public", NULL));
    free(post(&w, "frank", "@alice marker four", "public", NULL));
    wait_notes_from(&w, "frank", 0, 4);
    ck_assert_int_eq(notes_from(&w, "erin", -1), 2);

    free(ask);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* Mastodon's from_staff?: a mention from a local user whose role outranks
 * the recipient's is neither filtered nor dropped by the policy. */
START_TEST(test_staff_mention)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(&w, "mona"));
    eu_it_admin(w.s, "PUT", path, "{\"role\":\"moderator\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);

    /* The default policy filters private mentions: bob's is held back,
     * the moderator's arrives. */
    free(post(&w, "bob", "@alice from a user", "direct", NULL));
    free(post(&w, "mona", "@alice from staff", "direct", NULL));
    wait_notes_from(&w, "bob", 1, 1);
    wait_notes_from(&w, "mona", 0, 1);
    ck_assert_int_eq(notes_from(&w, "mona", 1), 0);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(strstr(r.body, "from staff") && !strstr(r.body, "from a user"));

    /* Dropping them does not drop hers either (checked after bob's public
     * mention, which comes later). */
    set_policy(&w, "{\"for_private_mentions\":\"drop\"}");
    free(post(&w, "mona", "@alice staff again", "direct", NULL));
    free(post(&w, "bob", "@alice in the open", "public", NULL));
    wait_notes_from(&w, "bob", 0, 1);
    wait_notes_from(&w, "mona", 0, 2);

    /* An admin recipient outranks the moderator: her mention is filtered. */
    set_policy(&w, "{\"for_private_mentions\":\"filter\"}");
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(&w, "alice"));
    eu_it_admin(w.s, "PUT", path, "{\"role\":\"admin\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    free(post(&w, "mona", "@alice to my superior", "direct", NULL));
    wait_notes_from(&w, "mona", 1, 1);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* The request of who in alice's list r, or NULL. */
static json_t *
request_of(const struct eu_it_resp *r, const char *who)
{
    size_t i;
    json_t *v;
    json_array_foreach(r->json, i, v)
    {
        if (strcmp(json_string_value(eu_it_jpath(v, "account.username")), who) == 0)
            return v;
    }
    return NULL;
}

START_TEST(test_requests)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char path[256], ids[512];

    free(post(&w, "bob", "@alice one", "direct", NULL));
    free(post(&w, "carol", "@alice from carol", "direct", NULL));
    char *bob2 = post(&w, "bob", "@alice two", "direct", NULL);
    wait_notes_from(&w, "bob", 1, 2);
    wait_notes_from(&w, "carol", 1, 1);

    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/requests");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    json_t *bobreq = request_of(&r, "bob");
    ck_assert_ptr_nonnull(bobreq);
    ck_assert_str_eq(json_string_value(json_object_get(bobreq, "notifications_count")), "2");
    ck_assert_str_eq(json_string_value(eu_it_jpath(bobreq, "last_status.id")), bob2);
    ck_assert_ptr_nonnull(json_object_get(bobreq, "created_at"));
    ck_assert_ptr_nonnull(json_object_get(bobreq, "updated_at"));
    char *bob_req = strdup(json_string_value(json_object_get(bobreq, "id")));
    char *carol_req = strdup(json_string_value(json_object_get(request_of(&r, "carol"), "id")));
    /* Newest first, with Link paging. */
    ids_of(&r, ids, sizeof(ids));
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
         "/api/v1/notifications/requests?limit=1");
    ck_assert_int_eq(json_array_size(r.json), 1);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Link"), "max_id="));
    snprintf(path, sizeof(path), "/api/v1/notifications/requests?limit=1&max_id=%s",
             json_string_value(eu_it_jpath(r.json, "0.id")));
    char first[64];
    snprintf(first, sizeof(first), "%s", json_string_value(eu_it_jpath(r.json, "0.id")));
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, path);
    ck_assert_int_eq(json_array_size(r.json), 1);
    char both[160];
    snprintf(both, sizeof(both), "%s,%s", first, json_string_value(eu_it_jpath(r.json, "0.id")));
    ck_assert_str_eq(both, ids);

    /* Show. */
    snprintf(path, sizeof(path), "/api/v1/notifications/requests/%s", bob_req);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, path);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", bob_req);
    EU_IT_EXPECT_JSTR(&r, "account.username", "bob");
    EU_IT_EXPECT_JSTR(&r, "notifications_count", "2");

    /* The decoy's alice, same placement, reaches none of it. */
    call(&w, &r, DECOY, "GET", eu_it_tok(&w, "dora"), NULL, path);
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(path, sizeof(path), "/api/v1/notifications/requests/%s/accept", bob_req);
    call(&w, &r, DECOY, "POST", eu_it_tok(&w, "dora"), NULL, path);
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(path, sizeof(path), "/api/v1/notifications/requests/%s/dismiss", carol_req);
    call(&w, &r, DECOY, "POST", eu_it_tok(&w, "dora"), NULL, path);
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(ids, sizeof(ids), "{\"id\":[\"%s\",\"%s\"]}", bob_req, carol_req);
    call(&w, &r, DECOY, "POST", eu_it_tok(&w, "dora"), ids,
         "/api/v1/notifications/requests/dismiss");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, DECOY, "GET", eu_it_tok(&w, "dora"), NULL, "/api/v1/notifications/requests");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/requests");
    ck_assert_int_eq(json_array_size(r.json), 2);
    ck_assert_int_eq(notes_from(&w, "carol", 1), 1);

    /* Accept: bob's two join the list, the next one passes. */
    snprintf(path, sizeof(path), "/api/v1/notifications/requests/%s/accept", bob_req);
    call(&w, &r, HOST, "POST", eu_it_tok(&w, "alice_ro"), NULL, path);
    EU_IT_EXPECT_STATUS(&r, 403);
    call(&w, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL, path);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL, path);
    EU_IT_EXPECT_STATUS(&r, 404);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
         "/api/v1/notifications/requests/merged");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "merged")));
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications");
    ck_assert_int_eq(json_array_size(r.json), 2);
    ck_assert_ptr_nonnull(strstr(r.body, "two"));
    free(post(&w, "bob", "@alice three", "direct", NULL));
    wait_notes_from(&w, "bob", 0, 3);
    ck_assert_int_eq(notes_from(&w, "bob", 1), 0);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/requests");
    ck_assert_int_eq(json_array_size(r.json), 1);

    /* Dismiss: carol's request and her held-back mention go. */
    snprintf(path, sizeof(path), "/api/v1/notifications/requests/%s/dismiss", carol_req);
    call(&w, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL, path);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(notes_from(&w, "carol", -1), 0);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/notifications/policy");
    EU_IT_EXPECT_JINT(&r, "summary.pending_requests_count", 0);

    /* Bulk: dave's and erin's accepted at once, an unknown id skipped. */
    free(post(&w, "dave", "@alice from dave", "direct", NULL));
    free(post(&w, "erin", "@alice from erin", "direct", NULL));
    wait_notes_from(&w, "dave", 1, 1);
    wait_notes_from(&w, "erin", 1, 1);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/requests");
    ck_assert_int_eq(json_array_size(r.json), 2);
    snprintf(ids, sizeof(ids), "{\"id\":[\"%s\",\"%s\",\"12345\"]}",
             json_string_value(eu_it_jpath(r.json, "0.id")),
             json_string_value(eu_it_jpath(r.json, "1.id")));
    call(&w, &r, HOST, "POST", eu_it_tok(&w, "alice"), ids,
         "/api/v1/notifications/requests/accept");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/requests");
    ck_assert_int_eq(json_array_size(r.json), 0);
    ck_assert_int_eq(notes_from(&w, "dave", 0), 1);
    ck_assert_int_eq(notes_from(&w, "erin", 0), 1);
    /* And a bulk dismiss. */
    free(post(&w, "frank", "@alice from frank", "direct", NULL));
    wait_notes_from(&w, "frank", 1, 1);
    call(&w, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications/requests");
    snprintf(ids, sizeof(ids), "{\"id\":[\"%s\"]}", json_string_value(eu_it_jpath(r.json, "0.id")));
    call(&w, &r, HOST, "POST", eu_it_tok(&w, "alice"), ids,
         "/api/v1/notifications/requests/dismiss");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(notes_from(&w, "frank", -1), 0);

    free(bob2);
    free(bob_req);
    free(carol_req);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

#define FED_TOML                                                                                   \
    "[federation]\nallow_http = true\nallow_private_addresses = true\n"                            \
    "[workers]\nqueue_idle_poll_seconds = 1\n"

static const struct eu_it_world_opts fed_world = {
    .host = "a.test",
    .tenants = {"b.test"},
    .extra_toml = FED_TOML,
    .users = {{"alice"}, {"bob", "b.test"}},
};

static bool
has_request(const struct eu_it_resp *r, const void *arg)
{
    return r->status == 200 && json_array_size(r->json) == 1 &&
           strcmp(json_string_value(eu_it_jpath(r->json, "0.account.acct")), arg) == 0;
}

/* bob@b.test's private mention reaches a.test through its signed inbox and
 * waits in a request there. */
START_TEST(test_remote_sender)
{
    struct world w;
    eu_it_world_start(&w, &fed_world);
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "bob"), NULL,
                "/api/v2/search?q=%%40alice%%40a.test&resolve=true&type=accounts");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 1);
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob"),
                "{\"status\":\"@alice@a.test from afar\",\"visibility\":\"direct\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), 30000, has_request, "bob@b.test",
                   "a request from bob@b.test", "/api/v1/notifications/requests");
    EU_IT_EXPECT_JSTR(&r, "0.notifications_count", "1");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(r.json, "0.last_status.content")), "from afar"));
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications");
    ck_assert_int_eq(json_array_size(r.json), 0);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("notification_policy");
    EU_IT_ADD_TCASE(s, test_policy_bodies, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_conditions, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_staff_mention, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_requests, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_remote_sender, TIMEOUT);
    return eu_it_run_suite(s);
}
