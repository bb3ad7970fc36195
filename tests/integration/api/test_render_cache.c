/*
 * The rendered-entity cache (src/social/render_cache.c): a status read twice is
 * served from the cache the second time with the same bytes, and a cached
 * status changes as soon as it is edited, deleted, boosted, favourited, or
 * its author renames. Two viewers of one cached status each see their own
 * flags. A decoy tenant in the same placement posts the same text under the
 * same names and must never show through.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "cache.example"
#define DECOY "decoy.example"

static struct eu_it_server *srv;

/* GET /api/v1/statuses/:id as token; asserts 200 and returns the body. */
static char *
show(const char *token, const char *id)
{
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, HOST, "GET", token, NULL, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *body = strdup(r.body);
    eu_it_resp_free(&r);
    return body;
}

static json_t *
show_json(const char *token, const char *id)
{
    char *body = show(token, id);
    json_t *j = json_loads(body, 0, NULL);
    ck_assert_ptr_nonnull(j);
    free(body);
    return j;
}

static long long
jint(json_t *j, const char *path)
{
    json_t *v = eu_it_jpath(j, path);
    ck_assert_msg(json_is_integer(v), "%s is not a number", path);
    return json_integer_value(v);
}

static bool
jbool(json_t *j, const char *path)
{
    json_t *v = eu_it_jpath(j, path);
    ck_assert_msg(json_is_boolean(v), "%s is not a boolean", path);
    return json_is_true(v);
}

START_TEST(test_cached_status_follows_its_rows)
{
    srv = eu_it_server_start(NULL);
    const char *names[] = {"alice", "bob", "carol"};
    char *tok[3], *decoy_tok;
    json_decref(eu_it_tenant_create(srv, HOST, "Cache"));
    json_decref(eu_it_tenant_create(srv, DECOY, "Decoy"));
    for (int i = 0; i < 3; i++) {
        free(eu_it_account_seed(srv, HOST, names[i]));
        tok[i] = eu_it_user_token(srv, HOST, names[i], "read write follow");
    }
    free(eu_it_account_seed(srv, DECOY, "alice"));
    decoy_tok = eu_it_user_token(srv, DECOY, "alice", "read write follow");

    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, DECOY, "POST", decoy_tok, "{\"status\":\"decoy words\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "POST", tok[0], "{\"status\":\"first words\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));

    /* A second read comes from the cache, byte for byte the same. */
    double hits = eu_it_metric(srv, "eunha_render_cache_hits_total");
    char *miss = show(tok[1], id);
    char *hit = show(tok[1], id);
    ck_assert_str_eq(hit, miss);
    ck_assert_double_gt(eu_it_metric(srv, "eunha_render_cache_hits_total"), hits);
    ck_assert_ptr_null(strstr(hit, "decoy"));
    free(miss);
    free(hit);

    /* Favourited by bob: his flag, carol's not, the count for both. */
    eu_it_callf(srv, &r, HOST, "POST", tok[1], NULL, "/api/v1/statuses/%s/favourite", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *b = show_json(tok[1], id), *c = show_json(tok[2], id);
    ck_assert(jbool(b, "favourited"));
    ck_assert(!jbool(c, "favourited"));
    ck_assert_int_eq(jint(b, "favourites_count"), 1);
    ck_assert_int_eq(jint(c, "favourites_count"), 1);
    /* Built again for the new count while alice's account is cached:
     * the addresses still name her, for both viewers. */
    char want_uri[128], want_url[128];
    snprintf(want_uri, sizeof(want_uri), "/users/alice/statuses/%s", id);
    snprintf(want_url, sizeof(want_url), "/@alice/%s", id);
    json_t *both[] = {b, c};
    for (int i = 0; i < 2; i++) {
        const char *uri = json_string_value(json_object_get(both[i], "uri"));
        const char *url = json_string_value(json_object_get(both[i], "url"));
        ck_assert_msg(uri && strstr(uri, want_uri), "uri is '%s'", uri ? uri : "(null)");
        ck_assert_msg(url && strstr(url, want_url), "url is '%s'", url ? url : "(null)");
    }
    json_decref(b);
    json_decref(c);

    /* Boosted by carol. */
    eu_it_callf(srv, &r, HOST, "POST", tok[2], NULL, "/api/v1/statuses/%s/reblog", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    b = show_json(tok[1], id);
    c = show_json(tok[2], id);
    ck_assert_int_eq(jint(b, "reblogs_count"), 1);
    ck_assert(!jbool(b, "reblogged"));
    ck_assert(jbool(c, "reblogged"));
    json_decref(b);
    json_decref(c);

    /* Edited. */
    eu_it_callf(srv, &r, HOST, "PUT", tok[0], "{\"status\":\"second words\"}",
                "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    b = show_json(tok[1], id);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(b, "content")), "second"));
    ck_assert(json_is_string(json_object_get(b, "edited_at")));
    json_decref(b);

    /* The author renames: the status's account follows. */
    eu_it_callf(srv, &r, HOST, "PATCH", tok[0], "{\"display_name\":\"Alice Renamed\"}",
                "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    b = show_json(tok[1], id);
    ck_assert_str_eq(json_string_value(eu_it_jpath(b, "account.display_name")), "Alice Renamed");
    json_decref(b);

    /* The boost, on carol's timeline of her own statuses, nests the
     * current original. */
    eu_it_callf(srv, &r, HOST, "GET", tok[2], NULL, "/api/v1/timelines/home");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "Alice Renamed"));
    ck_assert_ptr_nonnull(strstr(r.body, "second words"));
    ck_assert_ptr_null(strstr(r.body, "first words"));

    /* Deleted: gone for everyone, cached or not. */
    eu_it_callf(srv, &r, HOST, "DELETE", tok[0], NULL, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "GET", tok[1], NULL, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_resp_free(&r);

    free(id);
    for (int i = 0; i < 3; i++)
        free(tok[i]);
    free(decoy_tok);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

/* With the cache off every render builds from the rows, and the bytes are
 * the same as with it on. */
START_TEST(test_cache_off_renders_the_same)
{
    srv = eu_it_server_start("[tenants]\nrender_cache_entries = 0\n");
    json_decref(eu_it_tenant_create(srv, HOST, "Cache"));
    free(eu_it_account_seed(srv, HOST, "alice"));
    char *tok = eu_it_user_token(srv, HOST, "alice", "read write");
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, HOST, "POST", tok, "{\"status\":\"hello #tag\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    char *one = show(tok, id), *two = show(tok, id);
    ck_assert_str_eq(one, two);
    ck_assert_double_eq(eu_it_metric(srv, "eunha_render_cache_hits_total"), 0);
    ck_assert_double_eq(eu_it_metric(srv, "eunha_render_cache_entries"), 0);
    free(one);
    free(two);
    free(id);
    free(tok);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

/* The ids of a page's statuses, in a new array the caller frees with its
 * strings. */
static char **
page_ids(const char *body, size_t *n)
{
    json_t *page = json_loads(body, 0, NULL);
    ck_assert(json_is_array(page));
    *n = json_array_size(page);
    char **ids = calloc(*n + 1, sizeof(*ids));
    for (size_t i = 0; i < *n; i++)
        ids[i] = strdup(json_string_value(json_object_get(json_array_get(page, i), "id")));
    json_decref(page);
    return ids;
}

/*
 * A timeline page writes each status from cached text, the viewer's flags
 * and the account's cached text (status_render.c's slim statuses), where a
 * single status is a tree with spliced parts: both must give the bytes of
 * one renderer. Plain, with a poll (its own members), the viewer's own
 * (with its application), a boost, pinned, favourited, each as the page
 * and the status alone give it, cold and cached.
 */
START_TEST(test_page_statuses_are_the_single_bytes)
{
    srv = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(srv, HOST, "Cache"));
    json_decref(eu_it_tenant_create(srv, DECOY, "Decoy"));
    free(eu_it_account_seed(srv, HOST, "alice"));
    free(eu_it_account_seed(srv, HOST, "bob"));
    char *alice = eu_it_user_token(srv, HOST, "alice", "read write follow");
    char *bob = eu_it_user_token(srv, HOST, "bob", "read write follow");
    char *alice_id = eu_it_account_id(srv, HOST, "alice");
    struct eu_it_resp r = {0};
    eu_it_callf(srv, &r, HOST, "POST", bob, NULL, "/api/v1/accounts/%s/follow", alice_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "POST", alice, "{\"status\":\"plain \\\"quoted\\\" words\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *plain = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(srv, &r, HOST, "POST", alice,
                "{\"status\":\"which?\",\"poll\":{\"options\":[\"a\",\"b\"],\"expires_in\":600}}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "POST", bob, "{\"status\":\"my own\",\"spoiler_text\":\"cw\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *own = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(srv, &r, HOST, "POST", bob, NULL, "/api/v1/statuses/%s/pin", own);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "POST", bob, NULL, "/api/v1/statuses/%s/favourite", plain);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(srv, &r, HOST, "POST", bob, NULL, "/api/v1/statuses/%s/reblog", plain);
    EU_IT_EXPECT_STATUS(&r, 200);

    for (int round = 0; round < 2; round++) {
        /* Round 0 after a restart: every part built from its row. */
        if (round == 0)
            eu_it_server_restart(srv);
        eu_it_callf(srv, &r, HOST, "GET", bob, NULL, "/api/v1/timelines/home");
        EU_IT_EXPECT_STATUS(&r, 200);
        char *body = strdup(r.body);
        ck_assert_ptr_nonnull(strstr(body, "\"application\":{"));
        ck_assert_ptr_nonnull(strstr(body, "\"pinned\":true"));
        ck_assert_ptr_nonnull(strstr(body, "\"favourited\":true"));
        size_t n;
        char **ids = page_ids(body, &n);
        ck_assert_uint_ge(n, 3);
        for (size_t i = 0; i < n; i++) {
            char *one = show(bob, ids[i]);
            ck_assert_msg(strstr(body, one) != NULL, "round %d: %s is not in the page %s", round,
                          one, body);
            free(one);
            free(ids[i]);
        }
        free(ids);
        free(body);
    }
    eu_it_resp_free(&r);
    free(plain);
    free(own);
    free(alice_id);
    free(alice);
    free(bob);
    ck_assert_int_eq(eu_it_server_stop(srv), 0);
    eu_it_server_free(srv);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("render_cache");
    EU_IT_ADD_TCASE(s, test_cached_status_follows_its_rows, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_cache_off_renders_the_same, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_page_statuses_are_the_single_bytes, TIMEOUT);
    return eu_it_run_suite(s);
}
