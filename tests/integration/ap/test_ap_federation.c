/*
 * Federation end to end: two tenants (a.test, b.test) of one server talk to
 * each other over real HTTP (the fetch client sends a tenant's own hosts to
 * the server's listener), with signing, the inbox, the ap_inbox job and
 * delivery all in the path. Every step is driven through the Mastodon REST
 * API (and the admin API where no REST call exists) and checked on the
 * other side by polling its REST API with a deadline. A decoy tenant in the
 * same database sees none of it.
 */
#include "world.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 300
#define WAIT_MS 20000
#define FED_TOML                                                                                   \
    "[federation]\nallow_http = true\nallow_private_addresses = true\n"                            \
    "[workers]\nqueue_idle_poll_seconds = 1\n"

/* Three tenants of one server federating over HTTP; carol is locked. */
static const struct eu_it_world_opts world = {
    .host = "a.test",
    .decoy = "d.test",
    .tenants = {"b.test"},
    .extra_toml = FED_TOML,
    .users = {{"alice"},
              {"bob", "b.test"},
              {"carol", "b.test"},
              {"bob2", "b.test"},
              {"dora", "d.test", "alice"}},
};

static void
world_start(struct world *w)
{
    eu_it_world_start(w, &world);
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, "b.test", "PATCH", eu_it_tok(w, "carol"), "{\"locked\": true}",
                "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "locked")));
    eu_it_resp_free(&r);
}

static bool
lacks_acct(const struct eu_it_resp *r, const void *arg)
{
    return r->status == 200 && json_is_array(r->json) && !eu_it_has_acct(r, arg);
}

static bool
is_404(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 404;
}

/* A relationships answer: "following" / "requested" / "none" / "followed_by_none" */
static bool
rel_is(const struct eu_it_resp *r, const void *arg)
{
    const char *want = arg;
    if (r->status != 200 || json_array_size(r->json) != 1)
        return false;
    json_t *o = json_array_get(r->json, 0);
    bool following = json_is_true(json_object_get(o, "following"));
    bool requested = json_is_true(json_object_get(o, "requested"));
    bool followed_by = json_is_true(json_object_get(o, "followed_by"));
    if (strcmp(want, "following") == 0)
        return following && !requested;
    if (strcmp(want, "requested") == 0)
        return requested && !following;
    if (strcmp(want, "followed_by") == 0)
        return followed_by;
    if (strcmp(want, "none") == 0)
        return !following && !requested && !followed_by;
    return false;
}

/* An object whose string at path[0] contains path[1]. */
static bool
str_has(const struct eu_it_resp *r, const void *arg)
{
    const char *const *kv = arg;
    json_t *v = r->status == 200 ? eu_it_jpath(r->json, kv[0]) : NULL;
    return json_is_string(v) && strstr(json_string_value(v), kv[1]) != NULL;
}

/* An object whose number at path[0] equals the integer in path[1]. */
static bool
int_is(const struct eu_it_resp *r, const void *arg)
{
    const char *const *kv = arg;
    json_t *v = r->status == 200 ? eu_it_jpath(r->json, kv[0]) : NULL;
    return json_is_integer(v) && json_integer_value(v) == atoll(kv[1]);
}

/* A search answer with exactly one account. */
static bool
one_account(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_array_size(json_object_get(r->json, "accounts")) == 1;
}

/* Resolves acct on host for tok and returns its id there (caller frees). */
static char *
resolve(struct world *w, const char *host, const char *tok, const char *user, const char *domain)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, host, "GET", tok, NULL,
                "/api/v2/search?q=%%40%s%%40%s&resolve=true&type=accounts", user, domain);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(one_account(&r, NULL), "%s@%s not resolved on %s: %s", user, domain, host,
                  r.body);
    char acct[128];
    snprintf(acct, sizeof(acct), "%s@%s", user, domain);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.acct", acct);
    char *id = strdup(json_string_value(eu_it_jpath(r.json, "accounts.0.id")));
    eu_it_resp_free(&r);
    return id;
}

/* POSTs to path as tok and asserts 200; r keeps the answer. */
static void post(struct world *w, struct eu_it_resp *r, const char *host, const char *tok,
                 const char *body, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void
post(struct world *w, struct eu_it_resp *r, const char *host, const char *tok, const char *body,
     const char *fmt, ...)
{
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    eu_it_callf(w->s, r, host, "POST", tok, body, "%s", path);
    EU_IT_EXPECT_STATUS(r, 200);
}

#define NOTIF(type) "/api/v1/notifications?types%%5B%%5D=" type
#define REL "/api/v1/accounts/relationships?id%%5B%%5D=%s"

/* A local status's addresses name its author: uri ends in
 * "/users/USER/statuses/ID" and url in "/@USER/ID". */
static void
expect_addresses(json_t *status, const char *user, const char *id)
{
    char uri[256], url[256];
    snprintf(uri, sizeof(uri), "://%s/users/%s/statuses/%s", "b.test", user, id);
    snprintf(url, sizeof(url), "://%s/@%s/%s", "b.test", user, id);
    const char *got_uri = json_string_value(json_object_get(status, "uri"));
    const char *got_url = json_string_value(json_object_get(status, "url"));
    ck_assert_msg(got_uri && strstr(got_uri, uri) && strlen(strstr(got_uri, uri)) == strlen(uri),
                  "uri is '%s', not ...%s", got_uri ? got_uri : "(null)", uri);
    ck_assert_msg(got_url && strstr(got_url, url) && strlen(strstr(got_url, url)) == strlen(url),
                  "url is '%s', not ...%s", got_url ? got_url : "(null)", url);
}

START_TEST(test_two_tenants_federate)
{
    struct world w;
    world_start(&w);
    struct eu_it_resp r = {0};
    char *bob_id = eu_it_account_id(w.s, "b.test", "bob");
    char *alice_id = eu_it_account_id(w.s, "a.test", "alice");

    /* -- alice follows bob (unlocked): following, bob's notification and
     * followers list. */
    char *bob_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "bob", "b.test");
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow", bob_a);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "following",
                   "alice follows bob", REL, bob_a);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "bob's follow notification", NOTIF("follow"));
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "alice among bob's followers", "/api/v1/accounts/%s/followers", bob_id);

    /* -- carol is locked: requested, her follow_request, authorized. */
    char *carol_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "carol", "b.test");
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow", carol_a);
    ck_assert(json_is_true(json_object_get(r.json, "requested")));
    ck_assert(!json_is_true(json_object_get(r.json, "following")));
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "carol"), WAIT_MS, eu_it_has_acct,
                   "alice@a.test", "carol's follow request", "/api/v1/follow_requests");
    char *alice_b = strdup(
        json_string_value(json_object_get(eu_it_find(r.json, "acct", "alice@a.test"), "id")));
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "carol"), WAIT_MS, eu_it_has_acct,
                   "alice@a.test", "carol's notification", NOTIF("follow_request"));
    post(&w, &r, "b.test", eu_it_tok(&w, "carol"), NULL, "/api/v1/follow_requests/%s/authorize",
         alice_b);
    ck_assert(json_is_true(json_object_get(r.json, "followed_by")));
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "following",
                   "alice follows carol", REL, carol_a);

    /* -- bob posts: in alice's home timeline. */
    post(&w, &r, "b.test", eu_it_tok(&w, "bob"), "{\"status\": \"hello from b\"}",
         "/api/v1/statuses");
    char *post_b = strdup(eu_it_json_str(&r, "id"));
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, eu_it_has_acct, "bob@b.test",
                   "bob's post at alice's", "/api/v1/timelines/home");
    json_t *st = eu_it_find(r.json, "account.acct", "bob@b.test");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(st, "content")), "hello from b"));
    char *post_a = strdup(json_string_value(json_object_get(st, "id")));

    /* -- alice replies, mentioning bob: his mention notification. */
    char body[512];
    snprintf(body, sizeof(body),
             "{\"status\": \"@bob@b.test thanks for this\", \"in_reply_to_id\": \"%s\"}", post_a);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_JSTR(&r, "mentions.0.acct", "bob@b.test");
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "bob's mention notification", NOTIF("mention"));
    st = eu_it_find(r.json, "account.acct", "alice@a.test");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(st, "status.content")), "thanks for this"));
    ck_assert_str_eq(json_string_value(eu_it_jpath(st, "status.in_reply_to_id")), post_b);

    /* -- favourite and boost: bob's notifications, the counts on b. */
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s/favourite", post_a);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s/reblog", post_a);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "bob's favourite notification", NOTIF("favourite"));
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "bob's reblog notification", NOTIF("reblog"));
    const char *fav1[] = {"favourites_count", "1"}, *reb1[] = {"reblogs_count", "1"};
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, int_is, fav1,
                   "favourites_count on b", "/api/v1/statuses/%s", post_b);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, int_is, reb1,
                   "reblogs_count on b", "/api/v1/statuses/%s", post_b);
    /* A remote favourite and boost change the status's counts while its
     * author is cached: the render built again still names bob, in his
     * notifications and for two viewers. */
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "bob's favourite notification", NOTIF("favourite"));
    expect_addresses(eu_it_jpath(eu_it_find(r.json, "account.acct", "alice@a.test"), "status"),
                     "bob", post_b);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "bob's reblog notification", NOTIF("reblog"));
    expect_addresses(eu_it_jpath(eu_it_find(r.json, "account.acct", "alice@a.test"), "status"),
                     "bob", post_b);
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s",
                post_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_addresses(r.json, "bob", post_b);
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/statuses/%s",
                post_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_addresses(r.json, "bob", post_b);

    /* -- bob edits: alice sees the new text and edited_at. */
    eu_it_callf(w.s, &r, "b.test", "PUT", eu_it_tok(&w, "bob"),
                "{\"status\": \"hello again, edited\"}", "/api/v1/statuses/%s", post_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *edited[] = {"content", "edited"};
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, str_has, edited,
                   "the edit at alice's", "/api/v1/statuses/%s", post_a);
    ck_assert(json_is_string(json_object_get(r.json, "edited_at")));

    /* -- bob deletes: gone at alice's. */
    eu_it_callf(w.s, &r, "b.test", "DELETE", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s",
                post_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, is_404, NULL,
                   "the delete at alice's", "/api/v1/statuses/%s", post_a);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/timelines/home");
    for (size_t i = 0; i < json_array_size(r.json); i++) {
        json_t *s = json_array_get(r.json, i);
        ck_assert_str_ne(json_string_value(json_object_get(s, "id")), post_a);
        json_t *rb = json_object_get(s, "reblog");
        if (json_is_object(rb))
            ck_assert_str_ne(json_string_value(json_object_get(rb, "id")), post_a);
    }

    /* -- unfollow: alice leaves bob's followers. */
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/unfollow", bob_a);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, lacks_acct, "alice@a.test",
                   "unfollow at bob's", "/api/v1/accounts/%s/followers", bob_id);

    /* -- block: follows both ways end on both sides. */
    post(&w, &r, "b.test", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow", alice_b);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, rel_is, "following",
                   "bob follows alice", REL, alice_b);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow", bob_a);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "following",
                   "alice follows bob again", REL, bob_a);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "followed_by",
                   "bob follows alice (a)", REL, bob_a);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/block", bob_a);
    ck_assert(json_is_true(json_object_get(r.json, "blocking")));
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "none",
                   "no follows at alice's", REL, bob_a);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, rel_is, "none",
                   "no follows at bob's", REL, alice_b);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, lacks_acct, "alice@a.test",
                   "alice not bob's follower", "/api/v1/accounts/%s/followers", bob_id);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, lacks_acct, "bob@b.test",
                   "bob not alice's follower", "/api/v1/accounts/%s/followers", alice_id);

    /* -- Move: bob2 says it is also bob; bob moves to bob2; alice's follow
     * moves along. No API sets aliases yet: SQL on b's row. No API sends a
     * Move either: it is queued on a.test as the inbox queues what it
     * receives (ap_inbox job through the admin API), from bob. */
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/unblock", bob_a);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow", bob_a);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "following",
                   "alice follows bob before the move", REL, bob_a);
    char q[512];
    snprintf(q, sizeof(q),
             "UPDATE accounts SET also_known_as = '{http://b.test/users/bob}'"
             " WHERE tenant_id = %s AND username = 'bob2' AND domain IS NULL",
             eu_it_world_tid(&w, "b.test"));
    free(eu_it_pg_exec(w.db, q));
    eu_it_admin(w.s, "POST", "/admin/v1/tenants/a.test/jobs",
                "{\"kind\": \"ap_inbox\", \"payload\": {\"actor\": \"http://b.test/users/bob\","
                " \"recipient\": null, \"activity\": {\"@context\":"
                " \"https://www.w3.org/ns/activitystreams\","
                " \"id\": \"http://b.test/users/bob#moves/1\", \"type\": \"Move\","
                " \"actor\": \"http://b.test/users/bob\", \"object\": \"http://b.test/users/bob\","
                " \"target\": \"http://b.test/users/bob2\"}}}",
                &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, one_account, NULL,
                   "bob2 known at a", "/api/v2/search?q=bob2%%40b.test&type=accounts");
    char *bob2_a = strdup(json_string_value(eu_it_jpath(r.json, "accounts.0.id")));
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "following",
                   "alice follows bob2 after the move", REL, bob2_a);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "none",
                   "alice no longer follows bob", REL, bob_a);
    char *bob2_id = eu_it_account_id(w.s, "b.test", "bob2");
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob2"), WAIT_MS, eu_it_has_acct,
                   "alice@a.test", "alice among bob2's followers", "/api/v1/accounts/%s/followers",
                   bob2_id);

    /* The decoy (same database, same username) got nothing. */
    snprintf(q, sizeof(q),
             "SELECT (SELECT count(*) FROM accounts WHERE tenant_id = %s AND domain IS NOT NULL)"
             " + (SELECT count(*) FROM notifications WHERE tenant_id = %s)"
             " + (SELECT count(*) FROM statuses WHERE tenant_id = %s)",
             eu_it_world_tid(&w, "d.test"), eu_it_world_tid(&w, "d.test"),
             eu_it_world_tid(&w, "d.test"));
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);

    free(bob2_id);
    free(bob2_a);
    free(post_a);
    free(post_b);
    free(alice_b);
    free(carol_a);
    free(bob_a);
    free(bob_id);
    free(alice_id);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

/* Mentions of remote accounts unknown to the author's server are looked up
 * by WebFinger before the status is stored (at most 5 a status), linked,
 * and delivered to the mentioned. */
START_TEST(test_mentions_resolve_remote_accounts)
{
    struct world w;
    world_start(&w);
    struct eu_it_resp r = {0};
    eu_it_account_create(w.s, "b.test", "dan");
    char *dan = eu_it_user_token(w.s, "b.test", "dan", "read");
    for (int i = 1; i <= 6; i++) {
        char name[16];
        snprintf(name, sizeof(name), "e%d", i);
        eu_it_account_create(w.s, "b.test", name);
    }

    post(&w, &r, "a.test", eu_it_tok(&w, "alice"),
         "{\"status\": \"hi @Dan@b.test and @nobody@b.test\"}", "/api/v1/statuses");
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "mentions")), 1);
    EU_IT_EXPECT_JSTR(&r, "mentions.0.acct", "dan@b.test");
    EU_IT_EXPECT_JSTR(&r, "mentions.0.username", "dan");
    const char *html = eu_it_json_str(&r, "content");
    ck_assert_msg(strstr(html, "href=\"http://b.test/@dan\" class=\"u-url mention\">@<span>dan"),
                  "no link to dan in %s", html);
    ck_assert_msg(strstr(html, "@nobody@b.test"), "nobody is not text in %s", html);
    eu_it_wait_get(w.s, &r, "b.test", dan, WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "dan's mention notification", NOTIF("mention"));
    json_t *n = eu_it_find(r.json, "account.acct", "alice@a.test");
    ck_assert_ptr_nonnull(strstr(json_string_value(eu_it_jpath(n, "status.content")), "hi "));

    /* Six unknown accounts: five are looked up. */
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"),
         "{\"status\": \"@e1@b.test @e2@b.test @e3@b.test @e4@b.test @e5@b.test @e6@b.test\"}",
         "/api/v1/statuses");
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "mentions")), 5);
    /* Now known: the sixth is looked up by the next status. */
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"),
         "{\"status\": \"@e1@b.test @e2@b.test @e3@b.test @e4@b.test @e5@b.test @e6@b.test\"}",
         "/api/v1/statuses");
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "mentions")), 6);

    /* No notification rows at a.test for remote accounts. */
    char q[512];
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM notifications n JOIN accounts a ON a.tenant_id = n.tenant_id"
             " AND a.id = n.account_id WHERE n.tenant_id = %s AND a.domain IS NOT NULL",
             eu_it_world_tid(&w, "a.test"));
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);

    free(dan);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

/*
 * A boost of a status the tenant does not have: alice (a.test) follows bob
 * (b.test), nobody at a.test follows bob2; bob boosts bob2's post. a.test
 * fetches the post from b.test (signed), resolves bob2, stores the post and
 * the boost, and alice's home shows bob's boost of it. bob's profile
 * change reaches alice's server as an Update of his actor. A boost of a status
 */
START_TEST(test_boost_of_unknown_status)
{
    struct world w;
    world_start(&w);
    struct eu_it_resp r = {0};
    char *bob_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "bob", "b.test");
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow", bob_a);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "following",
                   "alice follows bob", REL, bob_a);

    /* bob renames himself: the Update of his actor reaches his followers. */
    eu_it_callf(w.s, &r, "b.test", "PATCH", eu_it_tok(&w, "bob"),
                "{\"display_name\": \"Bob Renamed\"}", "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *renamed[] = {"display_name", "Bob Renamed"};
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, str_has, renamed,
                   "bob's new name at alice's", "/api/v1/accounts/%s", bob_a);

    post(&w, &r, "b.test", eu_it_tok(&w, "bob2"), "{\"status\": \"only known on b\"}",
         "/api/v1/statuses");
    char *orig_b = strdup(eu_it_json_str(&r, "id"));
    char q[512];
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM statuses WHERE tenant_id = %s AND uri LIKE '%%/statuses/%s'",
             eu_it_world_tid(&w, "a.test"), orig_b);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);

    post(&w, &r, "b.test", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/reblog", orig_b);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, eu_it_has_acct, "bob@b.test",
                   "bob's boost at alice's", "/api/v1/timelines/home");
    json_t *st = eu_it_find(r.json, "account.acct", "bob@b.test");
    json_t *rb = json_object_get(st, "reblog");
    ck_assert(json_is_object(rb));
    ck_assert_str_eq(json_string_value(eu_it_jpath(rb, "account.acct")), "bob2@b.test");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(rb, "content")), "only known on b"));
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 1);

    /* A Create whose object is given by reference: fetched, stored. bob2
     * posts before alice follows him, so a.test has not got the post. */
    post(&w, &r, "b.test", eu_it_tok(&w, "bob2"), "{\"status\": \"by reference\"}",
         "/api/v1/statuses");
    char *ref_b = strdup(eu_it_json_str(&r, "id"));
    char *bob2_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "bob2", "b.test");
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow", bob2_a);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "following",
                   "alice follows bob2", REL, bob2_a);
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM statuses WHERE tenant_id = %s AND uri ="
             " 'http://b.test/users/bob2/statuses/%s'",
             eu_it_world_tid(&w, "a.test"), ref_b);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);
    char job[1024];
    snprintf(job, sizeof(job),
             "{\"kind\": \"ap_inbox\", \"payload\": {\"actor\": \"http://b.test/users/bob2\","
             " \"recipient\": null, \"activity\": {\"@context\":"
             " \"https://www.w3.org/ns/activitystreams\","
             " \"id\": \"http://b.test/users/bob2/statuses/%s/activity\", \"type\": \"Create\","
             " \"actor\": \"http://b.test/users/bob2\","
             " \"object\": \"http://b.test/users/bob2/statuses/%s\"}}}",
             ref_b, ref_b);
    eu_it_admin(w.s, "POST", "/admin/v1/tenants/a.test/jobs", job, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    long long until = eu_it_now_ms() + WAIT_MS;
    while (eu_it_pg_exec_long(w.db, q) == 0 && eu_it_now_ms() < until)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 1);
    free(ref_b);
    free(bob2_a);

    /* Search with resolve=true finds a status by its URL: carol is known
     * to nobody at a.test; without resolve nothing comes back. */
    post(&w, &r, "b.test", eu_it_tok(&w, "carol"), "{\"status\": \"found by url\"}",
         "/api/v1/statuses");
    char *carol_st = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v2/search?type=statuses&q=http%%3A%%2F%%2Fb.test%%2Fusers%%2Fcarol"
                "%%2Fstatuses%%2F%s",
                carol_st);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "statuses")), 0);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v2/search?resolve=true&q=http%%3A%%2F%%2Fb.test%%2Fusers%%2Fcarol"
                "%%2Fstatuses%%2F%s",
                carol_st);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "statuses.0.account.acct", "carol@b.test");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(r.json, "statuses.0.content")), "found by url"));
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "accounts")), 0);
    free(carol_st);

    /* Nothing reached the decoy tenant. */
    snprintf(q, sizeof(q), "SELECT count(*) FROM statuses WHERE tenant_id = %s",
             eu_it_world_tid(&w, "d.test"));
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);
    free(orig_b);
    free(bob_a);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

/* The admin API's reports of domain until one has comment want (or ms
 * pass); r keeps the last answer. Returns that report (borrowed from r). */
static json_t *
wait_report(struct world *w, struct eu_it_resp *r, const char *domain, const char *want, long ms)
{
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/reports", domain);
    long long until = eu_it_now_ms() + ms;
    for (;;) {
        eu_it_admin(w->s, "GET", path, NULL, r);
        EU_IT_EXPECT_STATUS(r, 200);
        json_t *found = eu_it_find(r->json, "comment", want);
        if (found || eu_it_now_ms() >= until)
            return found;
        eu_it_sleep_ms(100);
    }
}

/* A 200 array without elements. */
static bool
is_empty(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_is_array(r->json) && json_array_size(r->json) == 0;
}

/*
 * What Mastodon sends that has no REST effect of its own at home: a pin
 * (Add to the featured collection) and an unpin (Remove) reach the
 * author's followers, whose server then lists the status as pinned; a
 * report with forward=true about a remote account reaches that account's
 * server as a Flag from the instance actor (not the reporter), which its
 * operator reads. forward=false, or a local target, sends nothing.
 */
START_TEST(test_pins_and_reports_federate)
{
    struct world w;
    world_start(&w);
    struct eu_it_resp r = {0};
    char *bob_id = eu_it_account_id(w.s, "b.test", "bob");
    eu_it_account_create(w.s, "a.test", "ann");
    char *ann_id = eu_it_account_id(w.s, "a.test", "ann");

    /* -- bob follows alice; alice posts; bob's server has the post. */
    char *alice_b = resolve(&w, "b.test", eu_it_tok(&w, "bob"), "alice", "a.test");
    post(&w, &r, "b.test", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow", alice_b);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, rel_is, "following",
                   "bob follows alice", REL, alice_b);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), "{\"status\": \"pin me\"}", "/api/v1/statuses");
    char *pin_a = strdup(eu_it_json_str(&r, "id"));
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "alice's post at bob's", "/api/v1/timelines/home");
    char *pin_b = strdup(json_string_value(
        json_object_get(eu_it_find(r.json, "account.acct", "alice@a.test"), "id")));
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "bob"), NULL,
                "/api/v1/accounts/%s/statuses?pinned=true", alice_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* -- alice pins it: pinned at bob's; unpins: gone again. */
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s/pin", pin_a);
    ck_assert(json_is_true(json_object_get(r.json, "pinned")));
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "the pin at bob's", "/api/v1/accounts/%s/statuses?pinned=true", alice_b);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", pin_b);
    ck_assert_ptr_nonnull(strstr(json_string_value(eu_it_jpath(r.json, "0.content")), "pin me"));
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s/unpin", pin_a);
    ck_assert(!json_is_true(json_object_get(r.json, "pinned")));
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, is_empty, NULL,
                   "the unpin at bob's", "/api/v1/accounts/%s/statuses?pinned=true", alice_b);

    /* -- alice follows bob, who posts: alice's server has the post. */
    char *bob_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "bob", "b.test");
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow", bob_a);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, rel_is, "following",
                   "alice follows bob", REL, bob_a);
    post(&w, &r, "b.test", eu_it_tok(&w, "bob"), "{\"status\": \"report me\"}", "/api/v1/statuses");
    char *rep_b = strdup(eu_it_json_str(&r, "id"));
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, eu_it_has_acct, "bob@b.test",
                   "bob's post at alice's", "/api/v1/timelines/home");
    char *rep_a = strdup(
        json_string_value(json_object_get(eu_it_find(r.json, "account.acct", "bob@b.test"), "id")));

    /* -- what the API refuses: an unknown account, a status not the
     * target's, a comment past 1000 characters, an unknown category. */
    char body[1536];
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "alice"), "{\"account_id\": \"999999\"}",
                "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(body, sizeof(body), "{\"account_id\": \"%s\", \"status_ids\": [\"%s\"]}", bob_a,
             pin_a);
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "alice"), body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(body, sizeof(body), "{\"account_id\": \"%s\", \"comment\": \"%01001d\"}", bob_a, 0);
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "alice"), body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 422);
    snprintf(body, sizeof(body), "{\"account_id\": \"%s\", \"category\": \"rude\"}", bob_a);
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "alice"), body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 422);

    /* -- forward=true: the report, then the Flag at bob's server. */
    snprintf(body, sizeof(body),
             "{\"account_id\": \"%s\", \"status_ids\": [\"%s\"], \"comment\": \"forwarded one\","
             " \"category\": \"spam\", \"forward\": true}",
             bob_a, rep_a);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), body, "/api/v1/reports");
    EU_IT_EXPECT_JSTR(&r, "target_account.acct", "bob@b.test");
    EU_IT_EXPECT_JSTR(&r, "status_ids.0", rep_a);
    EU_IT_EXPECT_JSTR(&r, "comment", "forwarded one");
    EU_IT_EXPECT_JSTR(&r, "category", "spam");
    ck_assert(json_is_true(json_object_get(r.json, "forwarded")));
    ck_assert(json_is_false(json_object_get(r.json, "action_taken")));
    json_t *got = wait_report(&w, &r, "b.test", "forwarded one", WAIT_MS);
    ck_assert_msg(got, "no forwarded report at b.test: %s", r.body);
    ck_assert_str_eq(json_string_value(eu_it_jpath(got, "target_account.id")), bob_id);
    ck_assert_str_eq(json_string_value(eu_it_jpath(got, "target_account.username")), "bob");
    ck_assert_str_eq(json_string_value(eu_it_jpath(got, "status_ids.0")), rep_b);
    ck_assert_int_eq(json_array_size(json_object_get(got, "status_ids")), 1);
    /* Anonymous: the instance actor reports, not alice. */
    ck_assert_str_eq(json_string_value(eu_it_jpath(got, "account.uri")), "http://a.test/actor");

    /* -- forward=false, and a local target with forward=true: reports at
     * alice's server only. A forwarded one after them arrives alone. */
    snprintf(body, sizeof(body),
             "{\"account_id\": \"%s\", \"comment\": \"kept home\", \"forward\": false}", bob_a);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), body, "/api/v1/reports");
    ck_assert(json_is_false(json_object_get(r.json, "forwarded")));
    snprintf(body, sizeof(body),
             "{\"account_id\": \"%s\", \"comment\": \"local one\", \"forward\": true}", ann_id);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), body, "/api/v1/reports");
    ck_assert(json_is_false(json_object_get(r.json, "forwarded")));
    EU_IT_EXPECT_JSTR(&r, "target_account.acct", "ann");
    EU_IT_EXPECT_JSTR(&r, "category", "other");
    snprintf(body, sizeof(body),
             "{\"account_id\": \"%s\", \"comment\": \"forwarded two\", \"forward\": \"true\"}",
             bob_a);
    post(&w, &r, "a.test", eu_it_tok(&w, "alice"), body, "/api/v1/reports");
    ck_assert_msg(wait_report(&w, &r, "b.test", "forwarded two", WAIT_MS),
                  "no second forwarded report at b.test: %s", r.body);
    ck_assert_int_eq(json_array_size(r.json), 2);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM jobs WHERE tenant_id = %s AND"
                                         " payload->'activity'->>'type' = 'Flag'",
                                         eu_it_world_tid(&w, "a.test")),
                     eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM jobs WHERE tenant_id = %s AND"
                                         " payload->'activity'->>'type' = 'Flag' AND"
                                         " payload->>'inbox' LIKE 'http://b.test/%%'",
                                         eu_it_world_tid(&w, "a.test")));
    eu_it_admin(w.s, "GET", "/admin/v1/tenants/a.test/reports", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 4);
    /* The operator sees the category and whether each went on (newest first). */
    EU_IT_EXPECT_JSTR(&r, "3.comment", "forwarded one");
    EU_IT_EXPECT_JSTR(&r, "3.category", "spam");
    ck_assert(json_is_true(eu_it_jpath(r.json, "3.forwarded")));
    EU_IT_EXPECT_JSTR(&r, "2.comment", "kept home");
    EU_IT_EXPECT_JSTR(&r, "2.category", "other");
    ck_assert(json_is_false(eu_it_jpath(r.json, "2.forwarded")));

    /* The decoy saw nothing of it. */
    eu_it_admin(w.s, "GET", "/admin/v1/tenants/d.test/reports", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT (SELECT count(*) FROM status_pins WHERE"
                                         " tenant_id = %s) + (SELECT count(*) FROM statuses"
                                         " WHERE tenant_id = %s)",
                                         eu_it_world_tid(&w, "d.test"),
                                         eu_it_world_tid(&w, "d.test")),
                     0);

    free(rep_a);
    free(rep_b);
    free(bob_a);
    free(pin_a);
    free(pin_b);
    free(alice_b);
    free(ann_id);
    free(bob_id);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_federation");
    EU_IT_ADD_TCASE(s, test_boost_of_unknown_status, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_two_tenants_federate, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_mentions_resolve_remote_accounts, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_pins_and_reports_federate, TIMEOUT);
    return eu_it_run_suite(s);
}
