/*
 * Lists through HTTP: create, read, update and delete with validation,
 * lists being private to their owner, membership limited to followed
 * accounts and kept in step with unfollows and blocks, paging of members
 * with Link headers, the lists of one account, and scope refusals.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define DOMAIN "lists.example"
#define NUSERS 4

/* index 0 alice (owner of the lists), 1 bob, 2 carol, 3 dave. */
/* Every user has a read write follow token and a read-only one (NAME_ro). */
static const struct eu_it_world_opts world = {
    .host = DOMAIN,
    .users = {{"alice"},
              {"alice_ro", NULL, "alice", "read"},
              {"bob"},
              {"bob_ro", NULL, "bob", "read"},
              {"carol"},
              {"carol_ro", NULL, "carol", "read"},
              {"dave"},
              {"dave_ro", NULL, "dave", "read"}},
};

static const char *const NAMES[NUSERS] = {"alice", "bob", "carol", "dave"};

/* A request on the tenant's host as token; asserts that it was answered. */
#define call(w, r, method, token, json, ...)                                                       \
    eu_it_callf((w)->s, r, DOMAIN, method, token, json, __VA_ARGS__)

static void
expect_error_text(const struct eu_it_resp *r, long status, const char *text)
{
    EU_IT_EXPECT_ERROR(r, status);
    EU_IT_EXPECT_JSTR(r, "error", text);
}

START_TEST(test_lists_crud)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);

    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), "{\"title\":\"Friends\"}", "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Friends");
    EU_IT_EXPECT_JSTR(&r, "replies_policy", "list");
    ck_assert(json_is_false(eu_it_jpath(r.json, "exclusive")));
    char *friends = strdup(eu_it_json_str(&r, "id"));

    call(&w, &r, "POST", eu_it_tok(&w, "alice"),
         "{\"title\":\"Work\",\"replies_policy\":\"followed\",\"exclusive\":true}",
         "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "replies_policy", "followed");
    ck_assert(json_is_true(eu_it_jpath(r.json, "exclusive")));
    char *work = strdup(eu_it_json_str(&r, "id"));

    /* Validation. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), "{\"title\":\"\"}", "/api/v1/lists");
    expect_error_text(&r, 422, "Validation failed: Title can't be blank");
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), "{}", "/api/v1/lists");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), "{\"title\":\"x\",\"replies_policy\":\"all\"}",
         "/api/v1/lists");
    EU_IT_EXPECT_ERROR(&r, 422);

    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists");
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.id", friends);
    EU_IT_EXPECT_JSTR(&r, "1.title", "Work");

    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s", work);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Work");

    call(&w, &r, "PUT", eu_it_tok(&w, "alice"),
         "{\"title\":\"Colleagues\",\"replies_policy\":\"none\"}", "/api/v1/lists/%s", work);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Colleagues");
    EU_IT_EXPECT_JSTR(&r, "replies_policy", "none");
    ck_assert(json_is_true(eu_it_jpath(r.json, "exclusive")));
    call(&w, &r, "PUT", eu_it_tok(&w, "alice"), "{\"title\":\"\"}", "/api/v1/lists/%s", work);
    EU_IT_EXPECT_ERROR(&r, 422);

    /* Someone else's list does not exist for you. */
    call(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/lists/%s", work);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "PUT", eu_it_tok(&w, "bob"), "{\"title\":\"mine\"}", "/api/v1/lists/%s", work);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "DELETE", eu_it_tok(&w, "bob"), NULL, "/api/v1/lists/%s", work);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/lists");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/12345");
    expect_error_text(&r, 404, "Record not found");

    /* Scopes. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice_ro"), "{\"title\":\"nope\"}", "/api/v1/lists");
    expect_error_text(&r, 403, "This action is outside the authorized scopes");
    call(&w, &r, "GET", eu_it_tok(&w, "alice_ro"), NULL, "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/lists");
    expect_error_text(&r, 401, "The access token is invalid");

    call(&w, &r, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s", work);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_object(r.json) && json_object_size(r.json) == 0);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s", work);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists");
    ck_assert_int_eq(json_array_size(r.json), 1);

    free(friends);
    free(work);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_lists_membership)
{
    struct world w;
    struct eu_it_resp r = {0};
    char body[256];
    eu_it_world_start(&w, &world);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), "{\"title\":\"Friends\"}", "/api/v1/lists");
    char *list = strdup(eu_it_json_str(&r, "id"));

    /* Only followed accounts may be added; nothing is added when one is not. */
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\"]}", eu_it_id(&w, "bob"));
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_ERROR(&r, 422);
    for (int i = 1; i <= 3; i++) {
        call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
             eu_it_id(&w, NAMES[i]));
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), "{\"account_ids\":[\"987654\"]}",
         "/api/v1/lists/%s/accounts", list);
    expect_error_text(&r, 404, "Record not found");
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\",\"%s\",\"%s\"]}", eu_it_id(&w, "bob"),
             eu_it_id(&w, "carol"), eu_it_id(&w, "dave"));
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_object(r.json) && json_object_size(r.json) == 0);
    /* Adding again is harmless. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Members page newest-added first, with Link headers; limit=0 is all. */
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 3);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s/accounts?limit=2", list);
    ck_assert_int_eq(json_array_size(r.json), 2);
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_msg(link && strstr(link, "rel=\"next\"") && strstr(link, "max_id="), "%s",
                  link ? link : "(no Link)");
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s/accounts?limit=0", list);
    ck_assert_int_eq(json_array_size(r.json), 3);
    call(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/lists/%s/accounts", list);
    expect_error_text(&r, 404, "Record not found");

    /* The lists an account is in. */
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/lists",
         eu_it_id(&w, "carol"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", list);
    EU_IT_EXPECT_JSTR(&r, "0.title", "Friends");
    call(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/lists",
         eu_it_id(&w, "carol"));
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/555555/lists");
    expect_error_text(&r, 404, "Record not found");

    /* Removing by DELETE with a form-style query. */
    call(&w, &r, "DELETE", eu_it_tok(&w, "alice"), NULL,
         "/api/v1/lists/%s/accounts?account_ids[]=%s", list, eu_it_id(&w, "dave"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s/accounts", list);
    ck_assert_int_eq(json_array_size(r.json), 2);

    /* Unfollowing and blocking take members out. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/unfollow",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "POST", eu_it_tok(&w, "carol"), NULL, "/api/v1/accounts/%s/block",
         eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s/accounts", list);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* Scopes for membership changes. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice_ro"), body, "/api/v1/lists/%s/accounts", list);
    expect_error_text(&r, 403, "This action is outside the authorized scopes");

    /* Deleting a list drops its memberships with it. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\"]}", eu_it_id(&w, "bob"));
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s", list);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/lists",
         eu_it_id(&w, "bob"));
    ck_assert_int_eq(json_array_size(r.json), 0);

    free(list);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("lists");
    EU_IT_ADD_TCASE(s, test_lists_crud, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_lists_membership, TIMEOUT);
    return eu_it_run_suite(s);
}
