/*
 * Featured hashtags and featured profiles (issue 32), and the small
 * endpoints Mastodon's apps call: the FeaturedTag entity as Mastodon
 * renders it (statuses_count a string, last_status_at a date), its limit
 * and 422s, suggestions, 4.4's tags/:name/feature; endorsements (pin,
 * endorse, the Relationship's endorsed, Link-paged lists); the
 * featuredTags and endorsements collections; featuring told to a follower
 * on another tenant (Add and Remove of a Hashtag over HTTP); conversations'
 * unread, v2 notifications clear, the domain-block preview, peers search,
 * oEmbed and the link timeline. Every one is tried from a decoy tenant in
 * the same placement, which must neither see nor change tenant A's.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define WAIT_MS 20000
#define HOST "a.test"
#define DECOY "d.test"
#define FED_TOML                                                                                   \
    "[federation]\nallow_http = true\nallow_private_addresses = true\n"                            \
    "[workers]\nqueue_idle_poll_seconds = 1\n"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice"}, {"bob"}, {"carol"}, {"eve", DECOY, "alice"}},
};

static const struct eu_it_world_opts fed_world = {
    .host = HOST,
    .tenants = {"b.test"},
    .extra_toml = FED_TOML,
    .users = {{"alice"}, {"bob", "b.test"}},
};

static char *
post_status(struct world *w, const char *user, const char *body)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "POST", eu_it_tok(w, user), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

/* The names of r's array of featured tags (or Tags), joined by ','. */
static char *
names_of(const struct eu_it_resp *r)
{
    ck_assert_msg(json_is_array(r->json), "not an array: %.500s", r->body);
    char *buf = calloc(1, 4096);
    size_t len = 0, i;
    json_t *v;
    json_array_foreach(r->json, i, v)
    {
        const char *n = json_string_value(json_object_get(v, "name"));
        len += (size_t)snprintf(buf + len, 4096 - len, "%s%s", i ? "," : "", n ? n : "?");
    }
    return buf;
}

#define EXPECT_NAMES(r, want)                                                                      \
    do {                                                                                           \
        char *n_ = names_of(r);                                                                    \
        ck_assert_str_eq(n_, (want));                                                              \
        free(n_);                                                                                  \
    } while (0)

static void
expect_error(const struct eu_it_resp *r, long status, const char *text)
{
    ck_assert_msg(r->status == status, "status %ld, not %ld: %.500s", r->status, status, r->body);
    const char *e = eu_it_json_str(r, "error");
    ck_assert_msg(e && strcmp(e, text) == 0, "error '%s', not '%s'", e ? e : "(none)", text);
}

/* ------------------------------------------------------ featured tags */

START_TEST(test_featured_tags)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    const char *alice = eu_it_tok(&w, "alice"), *eve = eu_it_tok(&w, "eve");

    free(post_status(&w, "alice", "{\"status\": \"one #Cats\"}"));
    free(post_status(&w, "alice", "{\"status\": \"two #cats\", \"visibility\": \"unlisted\"}"));
    /* private: not counted */
    free(post_status(&w, "alice", "{\"status\": \"three #cats\", \"visibility\": \"private\"}"));
    free(post_status(&w, "alice", "{\"status\": \"#dogs #dogs and #birds\"}"));
    free(post_status(&w, "alice", "{\"status\": \"more #dogs\"}"));

    /* Created as typed, counted from alice's public and unlisted posts. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, "{\"name\": \"#Cats\"}", "/api/v1/featured_tags");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "Cats");
    EU_IT_EXPECT_JSTR(&r, "statuses_count", "2");
    ck_assert_str_eq(eu_it_json_str(&r, "url"), "http://" HOST "/@alice/tagged/cats");
    const char *day = eu_it_json_str(&r, "last_status_at");
    ck_assert_msg(day && strlen(day) == 10 && day[4] == '-' && day[7] == '-', "%s", r.body);
    char *cats_id = strdup(eu_it_json_str(&r, "id"));

    /* Mastodon's 422s. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, "{\"name\": \"cats\"}", "/api/v1/featured_tags");
    expect_error(&r, 422, "Validation failed: Name has already been taken");
    eu_it_callf(w.s, &r, HOST, "POST", alice, "{\"name\": \" \"}", "/api/v1/featured_tags");
    expect_error(&r, 422, "Validation failed: Name can't be blank");
    eu_it_callf(w.s, &r, HOST, "POST", alice, "{\"name\": \"no way\"}", "/api/v1/featured_tags");
    expect_error(&r, 422, "Validation failed: Name is invalid");
    eu_it_callf(w.s, &r, HOST, "POST", NULL, "{\"name\": \"anon\"}", "/api/v1/featured_tags");
    EU_IT_EXPECT_STATUS(&r, 401);

    /* Suggestions: the tags she used, most used first, not the featured. */
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL, "/api/v1/featured_tags/suggestions");
    EU_IT_EXPECT_STATUS(&r, 200);
    EXPECT_NAMES(&r, "dogs,birds");
    ck_assert_str_eq(json_string_value(eu_it_jpath(r.json, "0.url")), "http://" HOST "/tags/dogs");

    /* Ten at most. */
    for (int i = 1; i <= 9; i++) {
        char body[64];
        snprintf(body, sizeof(body), "{\"name\": \"tag%d\"}", i);
        eu_it_callf(w.s, &r, HOST, "POST", alice, body, "/api/v1/featured_tags");
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JSTR(&r, "statuses_count", "0");
        ck_assert(json_is_null(json_object_get(r.json, "last_status_at")));
    }
    eu_it_callf(w.s, &r, HOST, "POST", alice, "{\"name\": \"dogs\"}", "/api/v1/featured_tags");
    expect_error(&r, 422,
                 "Validation failed: You have already featured the maximum number of hashtags");
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL, "/api/v1/featured_tags");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 10);
    EU_IT_EXPECT_JSTR(&r, "0.name", "Cats");
    /* Anyone may read them, by account id. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/accounts/%s/featured_tags",
                eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 10);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/accounts/%s/featured_tags",
                eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/accounts/1/featured_tags");
    EU_IT_EXPECT_STATUS(&r, 404);

    /* The actor's featuredTags collection lists them as Hashtags. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/users/alice/collections/tags");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "Collection");
    EU_IT_EXPECT_JINT(&r, "totalItems", 10);
    EU_IT_EXPECT_JSTR(&r, "items.0.type", "Hashtag");
    EU_IT_EXPECT_JSTR(&r, "items.0.name", "#Cats");
    EU_IT_EXPECT_JSTR(&r, "items.0.href", "http://" HOST "/@alice/tagged/cats");

    /* The decoy tenant sees none of it and can remove none of it. */
    eu_it_callf(w.s, &r, DECOY, "GET", eve, NULL, "/api/v1/featured_tags");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    eu_it_callf(w.s, &r, DECOY, "DELETE", eve, NULL, "/api/v1/featured_tags/%s", cats_id);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/api/v1/accounts/%s/featured_tags",
                eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/users/alice/collections/tags");
    EU_IT_EXPECT_JINT(&r, "totalItems", 0);
    /* alice's token is worth nothing there. */
    eu_it_callf(w.s, &r, DECOY, "DELETE", alice, NULL, "/api/v1/featured_tags/%s", cats_id);
    EU_IT_EXPECT_STATUS(&r, 401);

    /* Removed: {} then 404. */
    eu_it_callf(w.s, &r, HOST, "DELETE", alice, NULL, "/api/v1/featured_tags/%s", cats_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_object(r.json) && json_object_size(r.json) == 0);
    eu_it_callf(w.s, &r, HOST, "DELETE", alice, NULL, "/api/v1/featured_tags/%s", cats_id);
    EU_IT_EXPECT_STATUS(&r, 404);

    /* 4.4's feature and unfeature answer the Tag. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/tags/Dogs/feature");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "dogs");
    ck_assert(json_is_true(json_object_get(r.json, "featuring")));
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL, "/api/v1/featured_tags");
    ck_assert_int_eq(json_array_size(r.json), 10);
    EU_IT_EXPECT_JSTR(&r, "9.name", "Dogs");
    EU_IT_EXPECT_JSTR(&r, "9.statuses_count", "2");
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/tags/dogs/unfeature");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_false(json_object_get(r.json, "featuring")));
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL, "/api/v1/featured_tags");
    ck_assert_int_eq(json_array_size(r.json), 9);
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/tags/nobody_used_it/unfeature");
    EU_IT_EXPECT_STATUS(&r, 404);
    /* Read scope is not enough to feature. */
    const struct eu_it_world_user *ro = eu_it_world_add_user(&w, "alice_ro", NULL, "alice", "read");
    eu_it_callf(w.s, &r, HOST, "POST", ro->tok, "{\"name\": \"x\"}", "/api/v1/featured_tags");
    EU_IT_EXPECT_STATUS(&r, 403);

    free(cats_id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------- endorsements */

static bool
endorsed(const struct eu_it_resp *r)
{
    return json_is_true(json_object_get(r->json, "endorsed"));
}

START_TEST(test_endorsements)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    const char *alice = eu_it_tok(&w, "alice"), *eve = eu_it_tok(&w, "eve");
    const char *bob_id = eu_it_id(&w, "bob"), *carol_id = eu_it_id(&w, "carol");

    /* Only an account she follows. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/pin", bob_id);
    expect_error(&r, 422,
                 "Validation failed: You must be already following the person you want to "
                 "endorse");
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/follow", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(!endorsed(&r));
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/follow", carol_id);
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/pin", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", bob_id);
    ck_assert(endorsed(&r));
    /* again: no error */
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/endorse", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(endorsed(&r));
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/endorse", carol_id);
    ck_assert(endorsed(&r));
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL, "/api/v1/accounts/relationships?id[]=%s",
                bob_id);
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.endorsed")));

    /* Her list, newest first, paged with a Link header. */
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL, "/api/v1/endorsements?limit=1");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", carol_id);
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_msg(link && strstr(link, "rel=\"next\"") && strstr(link, "max_id="), "%s",
                  link ? link : "(no Link)");
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/accounts/%s/endorsements",
                eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "1.id", bob_id);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/endorsements");
    EU_IT_EXPECT_STATUS(&r, 401);

    /* Served to peers; the actor names the collection. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/users/alice/collections/endorsements");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "totalItems", 2);
    EU_IT_EXPECT_JSTR(&r, "items.1", "http://" HOST "/users/bob");

    /* The decoy: nothing seen, nothing changed. */
    eu_it_callf(w.s, &r, DECOY, "GET", eve, NULL, "/api/v1/endorsements");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/api/v1/accounts/%s/endorsements",
                eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, DECOY, "POST", eve, NULL, "/api/v1/accounts/%s/unpin", bob_id);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL, "/api/v1/endorsements");
    ck_assert_int_eq(json_array_size(r.json), 2);

    /* Unendorsed; and unfollowing ends an endorsement, as Mastodon's. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/unendorse", carol_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(!endorsed(&r));
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/unfollow", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(!endorsed(&r));
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL, "/api/v1/endorsements");
    ck_assert_int_eq(json_array_size(r.json), 0);
    /* A block ends them both ways, as it ends the follows. */
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "carol"), NULL, "/api/v1/accounts/%s/follow",
                eu_it_id(&w, "alice"));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "carol"), NULL, "/api/v1/accounts/%s/pin",
                eu_it_id(&w, "alice"));
    ck_assert(endorsed(&r));
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/block", carol_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/accounts/%s/endorsements", carol_id);
    ck_assert_int_eq(json_array_size(r.json), 0);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------ federation */

static bool
has_featured(const struct eu_it_resp *r, const void *arg)
{
    return r->status == 200 && json_is_array(r->json) && eu_it_find(r->json, "name", arg);
}

static bool
lacks_featured(const struct eu_it_resp *r, const void *arg)
{
    return r->status == 200 && json_is_array(r->json) && !eu_it_find(r->json, "name", arg);
}

static bool
follows(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_is_true(eu_it_jpath(r->json, "0.following"));
}

START_TEST(test_featured_tags_federate)
{
    struct world w;
    eu_it_world_start(&w, &fed_world);
    struct eu_it_resp r = {0};
    const char *alice = eu_it_tok(&w, "alice"), *bob = eu_it_tok(&w, "bob");

    /* Featured before bob knew her: nothing is sent (no followers), but
     * his server reads her featuredTags collection when it fetches her. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, "{\"name\": \"Early\"}", "/api/v1/featured_tags");
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_callf(w.s, &r, "b.test", "GET", bob, NULL,
                "/api/v2/search?q=%%40alice%%40a.test&resolve=true&type=accounts");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *alice_b = strdup(json_string_value(eu_it_jpath(r.json, "accounts.0.id")));
    eu_it_wait_get(w.s, &r, "b.test", bob, WAIT_MS, has_featured, "Early",
                   "alice's featured tag read with her actor", "/api/v1/accounts/%s/featured_tags",
                   alice_b);
    eu_it_callf(w.s, &r, "b.test", "POST", bob, NULL, "/api/v1/accounts/%s/follow", alice_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, "b.test", bob, WAIT_MS, follows, NULL, "bob follows alice",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", alice_b);

    /* alice features a tag: Add of the Hashtag at bob's server. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, "{\"name\": \"Federated\"}", "/api/v1/featured_tags");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *fid = strdup(eu_it_json_str(&r, "id"));
    eu_it_wait_get(w.s, &r, "b.test", bob, WAIT_MS, has_featured, "Federated",
                   "alice's featured tag at b.test", "/api/v1/accounts/%s/featured_tags", alice_b);
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(eu_it_find(r.json, "name", "Federated"), "url")),
               "/@alice@a.test/tagged/federated"));
    /* Removed: gone there too. */
    eu_it_callf(w.s, &r, HOST, "DELETE", alice, NULL, "/api/v1/featured_tags/%s", fid);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, "b.test", bob, WAIT_MS, lacks_featured, "Federated",
                   "alice's unfeatured tag gone at b.test", "/api/v1/accounts/%s/featured_tags",
                   alice_b);
    ck_assert_ptr_nonnull(eu_it_find(r.json, "name", "Early"));
    /* 4.4's feature goes the same way. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/tags/Again/feature");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, "b.test", bob, WAIT_MS, has_featured, "Again",
                   "alice's featured tag again at b.test", "/api/v1/accounts/%s/featured_tags",
                   alice_b);

    /* The actor document names both collections. */
    const char *ap[] = {"Accept: application/activity+json", NULL};
    ck_assert_int_eq(eu_it_http_raw(&r, "GET", w.s->public_port, HOST, "/users/alice", ap, NULL),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "/users/alice/collections/tags"));
    ck_assert_ptr_nonnull(strstr(r.body, "/users/alice/collections/endorsements"));

    free(fid);
    free(alice_b);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* -------------------------------------------------- small endpoints */

START_TEST(test_small_endpoints)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    const char *alice = eu_it_tok(&w, "alice"), *bob = eu_it_tok(&w, "bob"),
               *eve = eu_it_tok(&w, "eve");

    /* -- conversations: read, then unread again. */
    free(post_status(&w, "alice", "{\"status\": \"@bob psst\", \"visibility\": \"direct\"}"));
    eu_it_callf(w.s, &r, HOST, "GET", bob, NULL, "/api/v1/conversations");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    char *conv = strdup(json_string_value(eu_it_jpath(r.json, "0.id")));
    eu_it_callf(w.s, &r, HOST, "POST", bob, NULL, "/api/v1/conversations/%s/read", conv);
    ck_assert(json_is_false(json_object_get(r.json, "unread")));
    eu_it_callf(w.s, &r, HOST, "POST", bob, NULL, "/api/v1/conversations/%s/unread", conv);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", conv);
    ck_assert(json_is_true(json_object_get(r.json, "unread")));
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/conversations/%s/unread", conv);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, DECOY, "POST", eve, NULL, "/api/v1/conversations/%s/unread", conv);
    EU_IT_EXPECT_STATUS(&r, 404);

    /* -- v2 notifications clear. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, NULL, "/api/v1/accounts/%s/follow",
                eu_it_id(&w, "bob"));
    eu_it_wait_get(w.s, &r, HOST, bob, WAIT_MS, eu_it_has_acct, "alice", "bob's notification",
                   "/api/v1/notifications");
    eu_it_callf(w.s, &r, HOST, "POST", bob, NULL, "/api/v2/notifications/clear");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "GET", bob, NULL, "/api/v2/notifications");
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "notification_groups")), 0);

    /* -- domain-block preview and peers search, with a remote account
     * alice follows and that follows her. */
    char *remote = eu_it_remote_account(w.db, w.tid, "http://peer.example/users/pat", false);
    free(eu_it_world_sql(&w,
                         "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                         " VALUES (%s, %s, %s), (%s, %s, %s)",
                         w.tid, eu_it_id(&w, "alice"), remote, w.tid, remote,
                         eu_it_id(&w, "alice")));
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL,
                "/api/v1/domain_blocks/preview?domain=Peer.Example");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "following_count", 1);
    EU_IT_EXPECT_JINT(&r, "followers_count", 1);
    eu_it_callf(w.s, &r, HOST, "GET", bob, NULL,
                "/api/v1/domain_blocks/preview?domain=peer.example");
    EU_IT_EXPECT_JINT(&r, "following_count", 0);
    eu_it_callf(w.s, &r, HOST, "GET", alice, NULL, "/api/v1/domain_blocks/preview");
    expect_error(&r, 422, "Validation failed: Domain can't be blank");
    eu_it_callf(w.s, &r, DECOY, "GET", eve, NULL,
                "/api/v1/domain_blocks/preview?domain=peer.example");
    EU_IT_EXPECT_JINT(&r, "followers_count", 0);

    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/peers/search?q=PEER");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0", "peer.example");
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/peers/search?q=zzz");
    ck_assert_int_eq(json_array_size(r.json), 0);
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/api/v1/peers/search?q=peer");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* -- oEmbed of a public post; not of a private one, nor elsewhere. */
    eu_it_callf(w.s, &r, HOST, "POST", alice, "{\"status\": \"embed me\"}", "/api/v1/statuses");
    char *url = strdup(eu_it_json_str(&r, "url"));
    char *uri = strdup(eu_it_json_str(&r, "uri"));
    char *id = strdup(eu_it_json_str(&r, "id"));
    char *enc = eu_it_urlencode(url);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/oembed?url=%s", enc);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "rich");
    EU_IT_EXPECT_JSTR(&r, "version", "1.0");
    EU_IT_EXPECT_JSTR(&r, "author_name", "alice");
    EU_IT_EXPECT_JSTR(&r, "author_url", "http://" HOST "/@alice");
    EU_IT_EXPECT_JSTR(&r, "provider_name", HOST);
    EU_IT_EXPECT_JSTR(&r, "provider_url", "http://" HOST "/");
    EU_IT_EXPECT_JINT(&r, "width", 400);
    EU_IT_EXPECT_JINT(&r, "cache_age", 86400);
    ck_assert(json_is_null(json_object_get(r.json, "height")));
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "html"), url));
    /* Its html names the embed page (Mastodon 4.3+'s data-embed-url),
     * which serves the post alone, frameable by other sites. */
    char embed[300];
    snprintf(embed, sizeof(embed), "data-embed-url=\"%s/embed\"", url);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "html"), embed));
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/@alice/%s/embed", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Content-Type"), "text/html"));
    ck_assert_ptr_nonnull(strstr(r.body, "embed me"));
    ck_assert_ptr_nonnull(strstr(r.body, url));
    ck_assert_ptr_null(strstr(r.body, "<script"));
    ck_assert_ptr_null(eu_it_resp_header(&r, "X-Frame-Options"));
    ck_assert_ptr_nonnull(
        strstr(eu_it_resp_header(&r, "Content-Security-Policy"), "frame-ancestors *"));
    /* Not under another author's name, not on the decoy. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/@bob/%s/embed", id);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/@alice/%s/embed", id);
    EU_IT_EXPECT_STATUS(&r, 404);
    /* The post page itself still refuses frames. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/@alice/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_resp_header(&r, "X-Frame-Options"), "DENY");
    free(enc);
    enc = eu_it_urlencode(uri);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/oembed?url=%s&maxwidth=300", enc);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "width", 300);
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/api/oembed?url=%s", enc);
    EU_IT_EXPECT_STATUS(&r, 404);
    free(enc);
    eu_it_callf(w.s, &r, HOST, "POST", alice,
                "{\"status\": \"secret\", \"visibility\": \"private\"}", "/api/v1/statuses");
    enc = eu_it_urlencode(eu_it_json_str(&r, "url"));
    char *secret = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/oembed?url=%s", enc);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/@alice/%s/embed", secret);
    EU_IT_EXPECT_STATUS(&r, 404);
    free(secret);
    free(enc);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/oembed?url=http%%3A%%2F%%2Felsewhere");
    EU_IT_EXPECT_STATUS(&r, 404);

    /* -- the link timeline: the public statuses with a card's link. */
    free(eu_it_world_sql(&w,
                         "WITH c AS (INSERT INTO preview_cards (tenant_id, url, domain, title)"
                         " VALUES (%s, 'https://news.example/story', 'news.example', 'Story')"
                         " RETURNING id)"
                         " INSERT INTO preview_cards_statuses (tenant_id, status_id,"
                         " preview_card_id) SELECT %s, %s, id FROM c",
                         w.tid, w.tid, id));
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL,
                "/api/v1/timelines/link?url=https%%3A%%2F%%2Fnews.example%%2Fstory");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", id);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL,
                "/api/v1/timelines/link?url=https%%3A%%2F%%2Fnews.example%%2Fstory&max_id=%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL,
                "/api/v1/timelines/link?url=https%%3A%%2F%%2Fnews.example%%2Fother");
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL,
                "/api/v1/timelines/link?url=https%%3A%%2F%%2Fnews.example%%2Fstory");
    EU_IT_EXPECT_STATUS(&r, 404);

    free(url);
    free(uri);
    free(id);
    free(remote);
    free(conv);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("featured");
    EU_IT_ADD_TCASE(s, test_featured_tags, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_endorsements, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_featured_tags_federate, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_small_endpoints, TIMEOUT);
    return eu_it_run_suite(s);
}
