/*
 * Statuses and collections as ActivityPub through HTTP: Note to/cc for
 * public and unlisted statuses, 404 for private and direct ones to an
 * unsigned GET, Mention and Hashtag tags, inReplyTo, the Create wrapper, a
 * boost as Announce, a poll as Question; the outbox's total and pages
 * (25 statuses: 20 newest, then 5 by its next link), followers and
 * following pages, featured pins; a decoy tenant's statuses never appear
 * and its ids are 404 here.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TIMEOUT 240
#define HOST "ap.example"
#define DECOY "decoy.example"
#define AS_JSON "application/activity+json"
#define PUBLIC "https://www.w3.org/ns/activitystreams#Public"
#define ALICE "http://ap.example/users/alice"
#define BOB "http://ap.example/users/bob"

/* carol lives on the decoy tenant. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice"}, {"bob"}, {"carol", DECOY}},
};

static void
get(struct world *w, struct eu_it_resp *r, const char *host, const char *path)
{
    const char *h[] = {"Accept: " AS_JSON, NULL};
    int rc = eu_it_http_raw(r, "GET", w->s->public_port, host, path, h, NULL);
    ck_assert_msg(rc == 0, "GET %s: %s", path, r->error);
}

/* Posts json on host with token; returns the new status's id (caller frees). */
static char *
post(struct world *w, const char *host, const char *token, const char *json)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, host, "POST", token, json, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

static char *
post_text(struct world *w, const char *token, const char *text, const char *visibility)
{
    char json[512];
    snprintf(json, sizeof(json), "{\"status\":\"%s\",\"visibility\":\"%s\"}", text, visibility);
    return post(w, HOST, token, json);
}

static bool
array_has(json_t *a, const char *s)
{
    json_t *v;
    size_t i;
    json_array_foreach(a, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return true;
    }
    return false;
}

static void
expect_addressing(struct eu_it_resp *r, const char *to0, const char *cc0)
{
    ck_assert_int_eq(json_array_size(eu_it_jpath(r->json, "to")), 1);
    EU_IT_EXPECT_JSTR(r, "to.0", to0);
    EU_IT_EXPECT_JSTR(r, "cc.0", cc0);
}

START_TEST(test_notes)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char path[256], want[256];

    char *pub = post_text(&w, eu_it_tok(&w, "alice"), "hello @bob #Fedi", "public");
    get(&w, &r, HOST, (snprintf(path, sizeof(path), "/users/alice/statuses/%s", pub), path));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Content-Type"), AS_JSON));
    EU_IT_EXPECT_JSTR(&r, "@context.0", "https://www.w3.org/ns/activitystreams");
    snprintf(want, sizeof(want), ALICE "/statuses/%s", pub);
    EU_IT_EXPECT_JSTR(&r, "id", want);
    EU_IT_EXPECT_JSTR(&r, "type", "Note");
    EU_IT_EXPECT_JSTR(&r, "attributedTo", ALICE);
    snprintf(want, sizeof(want), "http://ap.example/@alice/%s", pub);
    EU_IT_EXPECT_JSTR(&r, "url", want);
    expect_addressing(&r, PUBLIC, ALICE "/followers");
    ck_assert(array_has(eu_it_jpath(r.json, "cc"), BOB));
    ck_assert(json_is_null(eu_it_jpath(r.json, "inReplyTo")));
    ck_assert(json_is_null(eu_it_jpath(r.json, "summary")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "sensitive")));
    ck_assert_ptr_nonnull(strstr(json_string_value(eu_it_jpath(r.json, "content")), "hello"));
    EU_IT_EXPECT_JSTR(&r, "tag.0.type", "Mention");
    EU_IT_EXPECT_JSTR(&r, "tag.0.href", BOB);
    EU_IT_EXPECT_JSTR(&r, "tag.0.name", "@bob@ap.example");
    EU_IT_EXPECT_JSTR(&r, "tag.1.type", "Hashtag");
    EU_IT_EXPECT_JSTR(&r, "tag.1.href", "http://ap.example/tags/fedi");
    ck_assert_int_eq(strcasecmp(json_string_value(eu_it_jpath(r.json, "tag.1.name")), "#fedi"), 0);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "attachment")), 0);

    /* The same Note on the profile URL for ActivityPub clients. */
    get(&w, &r, HOST, (snprintf(path, sizeof(path), "/@alice/%s", pub), path));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "Note");

    char *unl = post_text(&w, eu_it_tok(&w, "alice"), "quiet", "unlisted");
    get(&w, &r, HOST, (snprintf(path, sizeof(path), "/users/alice/statuses/%s", unl), path));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_addressing(&r, ALICE "/followers", PUBLIC);

    /* Followers-only and direct: not to an unsigned GET. */
    char *priv = post_text(&w, eu_it_tok(&w, "alice"), "secret @bob", "private");
    char *dm = post_text(&w, eu_it_tok(&w, "alice"), "psst @bob", "direct");
    const char *hidden[] = {priv, dm, NULL};
    for (int i = 0; hidden[i]; i++) {
        get(&w, &r, HOST,
            (snprintf(path, sizeof(path), "/users/alice/statuses/%s", hidden[i]), path));
        EU_IT_EXPECT_ERROR(&r, 404);
        get(&w, &r, HOST, (snprintf(path, sizeof(path), "/@alice/%s", hidden[i]), path));
        EU_IT_EXPECT_ERROR(&r, 404);
    }

    /* A reply names its parent; its activity is a Create. */
    char json[512];
    snprintf(json, sizeof(json),
             "{\"status\":\"@alice yes\",\"in_reply_to_id\":\"%s\",\"spoiler_text\":\"cw\"}", pub);
    char *reply = post(&w, HOST, eu_it_tok(&w, "bob"), json);
    get(&w, &r, HOST,
        (snprintf(path, sizeof(path), "/users/bob/statuses/%s/activity", reply), path));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "Create");
    snprintf(want, sizeof(want), BOB "/statuses/%s/activity", reply);
    EU_IT_EXPECT_JSTR(&r, "id", want);
    EU_IT_EXPECT_JSTR(&r, "actor", BOB);
    EU_IT_EXPECT_JSTR(&r, "to.0", PUBLIC);
    snprintf(want, sizeof(want), BOB "/statuses/%s", reply);
    EU_IT_EXPECT_JSTR(&r, "object.id", want);
    snprintf(want, sizeof(want), ALICE "/statuses/%s", pub);
    EU_IT_EXPECT_JSTR(&r, "object.inReplyTo", want);
    EU_IT_EXPECT_JSTR(&r, "object.summary", "cw");
    ck_assert(array_has(eu_it_jpath(r.json, "object.cc"), ALICE));
    /* A status under another account's address is not found. */
    get(&w, &r, HOST, (snprintf(path, sizeof(path), "/users/alice/statuses/%s", reply), path));
    EU_IT_EXPECT_ERROR(&r, 404);

    /* A boost is an Announce of the original, copied to its author. */
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/reblog",
                pub);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *boost = strdup(eu_it_json_str(&r, "id"));
    get(&w, &r, HOST,
        (snprintf(path, sizeof(path), "/users/bob/statuses/%s/activity", boost), path));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "Announce");
    snprintf(want, sizeof(want), ALICE "/statuses/%s", pub);
    EU_IT_EXPECT_JSTR(&r, "object", want);
    EU_IT_EXPECT_JSTR(&r, "to.0", PUBLIC);
    ck_assert(array_has(eu_it_jpath(r.json, "cc"), ALICE));
    ck_assert(array_has(eu_it_jpath(r.json, "cc"), BOB "/followers"));
    get(&w, &r, HOST, (snprintf(path, sizeof(path), "/users/bob/statuses/%s", boost), path));
    EU_IT_EXPECT_ERROR(&r, 404);

    /* A poll is a Question. */
    char *poll = post(&w, HOST, eu_it_tok(&w, "alice"),
                      "{\"status\":\"pick\",\"poll\":{\"options\":[\"a\",\"b\"],"
                      "\"expires_in\":3600}}");
    get(&w, &r, HOST, (snprintf(path, sizeof(path), "/users/alice/statuses/%s", poll), path));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "Question");
    EU_IT_EXPECT_JSTR(&r, "oneOf.0.type", "Note");
    EU_IT_EXPECT_JSTR(&r, "oneOf.1.name", "b");
    EU_IT_EXPECT_JINT(&r, "oneOf.0.replies.totalItems", 0);
    ck_assert_ptr_nonnull(eu_it_jpath(r.json, "endTime"));
    EU_IT_EXPECT_JINT(&r, "votersCount", 0);

    /* The decoy's status: not here, under any name. */
    char *theirs = post(&w, DECOY, eu_it_tok(&w, "carol"), "{\"status\":\"decoy\"}");
    get(&w, &r, HOST, (snprintf(path, sizeof(path), "/users/carol/statuses/%s", theirs), path));
    EU_IT_EXPECT_ERROR(&r, 404);
    get(&w, &r, HOST, (snprintf(path, sizeof(path), "/users/alice/statuses/%s", theirs), path));
    EU_IT_EXPECT_ERROR(&r, 404);
    get(&w, &r, DECOY, (snprintf(path, sizeof(path), "/users/carol/statuses/%s", theirs), path));
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&w, &r, DECOY, (snprintf(path, sizeof(path), "/users/alice/statuses/%s", pub), path));
    EU_IT_EXPECT_ERROR(&r, 404);

    free(pub);
    free(unl);
    free(priv);
    free(dm);
    free(reply);
    free(boost);
    free(poll);
    free(theirs);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* The path and query of an absolute URI of HOST. */
static const char *
path_of(const char *uri)
{
    ck_assert_msg(strncmp(uri, "http://" HOST "/", strlen("http://" HOST "/")) == 0, "%s", uri);
    return uri + strlen("http://" HOST);
}

START_TEST(test_collections)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char text[64], *ids[25];

    char *priv = post_text(&w, eu_it_tok(&w, "alice"), "followers only", "private");
    for (int i = 0; i < 25; i++) {
        snprintf(text, sizeof(text), "post %d", i);
        ids[i] = post_text(&w, eu_it_tok(&w, "alice"), text, i % 2 ? "unlisted" : "public");
    }
    free(post(&w, DECOY, eu_it_tok(&w, "carol"), "{\"status\":\"decoy\"}"));

    get(&w, &r, HOST, "/users/alice/outbox");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "OrderedCollection");
    EU_IT_EXPECT_JSTR(&r, "id", ALICE "/outbox");
    EU_IT_EXPECT_JINT(&r, "totalItems", 26);
    char *first = strdup(json_string_value(eu_it_jpath(r.json, "first")));
    ck_assert_ptr_nonnull(eu_it_jpath(r.json, "last"));

    get(&w, &r, HOST, path_of(first));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "OrderedCollectionPage");
    EU_IT_EXPECT_JSTR(&r, "partOf", ALICE "/outbox");
    json_t *items = eu_it_jpath(r.json, "orderedItems");
    ck_assert_int_eq(json_array_size(items), 20);
    char want[256];
    for (int i = 0; i < 20; i++) {
        snprintf(want, sizeof(want), ALICE "/statuses/%s", ids[24 - i]);
        json_t *a = json_array_get(items, (size_t)i);
        ck_assert_str_eq(json_string_value(json_object_get(a, "type")), "Create");
        ck_assert_str_eq(json_string_value(eu_it_jpath(a, "object.id")), want);
    }
    ck_assert_ptr_nonnull(eu_it_jpath(r.json, "prev"));
    char *next = strdup(json_string_value(eu_it_jpath(r.json, "next")));
    get(&w, &r, HOST, path_of(next));
    EU_IT_EXPECT_STATUS(&r, 200);
    items = eu_it_jpath(r.json, "orderedItems");
    ck_assert_int_eq(json_array_size(items), 5);
    for (int i = 0; i < 5; i++) {
        snprintf(want, sizeof(want), ALICE "/statuses/%s", ids[4 - i]);
        ck_assert_str_eq(
            json_string_value(eu_it_jpath(json_array_get(items, (size_t)i), "object.id")), want);
    }
    ck_assert_ptr_null(eu_it_jpath(r.json, "next"));
    /* The private status is in no page. */
    ck_assert_ptr_null(strstr(r.body, priv));
    /* min_id pages forward, still newest first within the page. */
    char path[256];
    snprintf(path, sizeof(path), "/users/alice/outbox?page=true&min_id=%s", ids[1]);
    get(&w, &r, HOST, path);
    items = eu_it_jpath(r.json, "orderedItems");
    ck_assert_int_eq(json_array_size(items), 20);
    snprintf(want, sizeof(want), ALICE "/statuses/%s", ids[21]);
    ck_assert_str_eq(json_string_value(eu_it_jpath(json_array_get(items, 0), "object.id")), want);

    /* Followers and following. */
    char *alice_id = eu_it_account_id(w.s, HOST, "alice");
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow",
                alice_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&w, &r, HOST, "/users/alice/followers");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "totalItems", 1);
    char *fpage = strdup(json_string_value(eu_it_jpath(r.json, "first")));
    get(&w, &r, HOST, path_of(fpage));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "orderedItems.0", BOB);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "orderedItems")), 1);
    get(&w, &r, HOST, "/users/bob/following?page=1");
    EU_IT_EXPECT_JSTR(&r, "orderedItems.0", ALICE);
    get(&w, &r, HOST, "/users/bob/following");
    EU_IT_EXPECT_JINT(&r, "totalItems", 1);
    get(&w, &r, HOST, "/users/alice/following?page=1");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "orderedItems")), 0);

    /* Featured: pinned statuses as Notes. */
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s/pin",
                ids[3]);
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&w, &r, HOST, "/users/alice/collections/featured");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "OrderedCollection");
    EU_IT_EXPECT_JINT(&r, "totalItems", 1);
    snprintf(want, sizeof(want), ALICE "/statuses/%s", ids[3]);
    EU_IT_EXPECT_JSTR(&r, "orderedItems.0.id", want);
    EU_IT_EXPECT_JSTR(&r, "orderedItems.0.type", "Note");

    /* The decoy's collections are not here. */
    get(&w, &r, HOST, "/users/carol/outbox");
    EU_IT_EXPECT_ERROR(&r, 404);
    get(&w, &r, DECOY, "/users/alice/followers");
    EU_IT_EXPECT_ERROR(&r, 404);

    for (int i = 0; i < 25; i++)
        free(ids[i]);
    free(priv);
    free(first);
    free(next);
    free(fpage);
    free(alice_id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *suite = suite_create("ap_objects");
    EU_IT_ADD_TCASE(suite, test_notes, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_collections, TIMEOUT);
    return eu_it_run_suite(suite);
}
