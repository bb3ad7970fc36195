/*
 * Lists through HTTP: create, read, update and delete with validation,
 * lists being private to their owner, membership limited to followed
 * accounts and kept in step with unfollows and blocks, paging of members
 * with Link headers, the lists of one account, and scope refusals.
 */
#include "harness.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define DOMAIN "lists.example"
#define NUSERS 4

/* index 0 alice (owner of the lists), 1 bob, 2 carol, 3 dave. */
struct world {
    struct eu_it_server *s;
    char *tok[NUSERS];
    char *ro[NUSERS];
    char *id[NUSERS];
};

static const char *const NAMES[NUSERS] = {"alice", "bob", "carol", "dave"};

static void
world_start(struct world *w)
{
    memset(w, 0, sizeof(*w));
    w->s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(w->s, DOMAIN, "Lists"));
    for (int i = 0; i < NUSERS; i++) {
        eu_it_account_create(w->s, DOMAIN, NAMES[i]);
        w->tok[i] = eu_it_user_token(w->s, DOMAIN, NAMES[i], "read write follow");
        w->ro[i] = eu_it_user_token(w->s, DOMAIN, NAMES[i], "read");
        w->id[i] = eu_it_account_id(w->s, DOMAIN, NAMES[i]);
    }
}

static void
world_stop(struct world *w)
{
    for (int i = 0; i < NUSERS; i++) {
        free(w->tok[i]);
        free(w->ro[i]);
        free(w->id[i]);
    }
    ck_assert_int_eq(eu_it_server_stop(w->s), 0);
    eu_it_server_free(w->s);
}

static void __attribute__((format(printf, 6, 7)))
call(struct world *w, struct eu_it_resp *r, const char *method, const char *token, const char *json,
     const char *fmt, ...)
{
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    int rc = eu_it_http(r, method, w->s->public_port, DOMAIN, path, token, json);
    ck_assert_msg(rc == 0, "%s %s: %s", method, path, r->error);
}

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
    world_start(&w);

    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    call(&w, &r, "POST", w.tok[0], "{\"title\":\"Friends\"}", "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Friends");
    EU_IT_EXPECT_JSTR(&r, "replies_policy", "list");
    ck_assert(json_is_false(eu_it_jpath(r.json, "exclusive")));
    char *friends = strdup(eu_it_json_str(&r, "id"));

    call(&w, &r, "POST", w.tok[0],
         "{\"title\":\"Work\",\"replies_policy\":\"followed\",\"exclusive\":true}",
         "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "replies_policy", "followed");
    ck_assert(json_is_true(eu_it_jpath(r.json, "exclusive")));
    char *work = strdup(eu_it_json_str(&r, "id"));

    /* Validation. */
    call(&w, &r, "POST", w.tok[0], "{\"title\":\"\"}", "/api/v1/lists");
    expect_error_text(&r, 422, "Validation failed: Title can't be blank");
    call(&w, &r, "POST", w.tok[0], "{}", "/api/v1/lists");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "POST", w.tok[0], "{\"title\":\"x\",\"replies_policy\":\"all\"}", "/api/v1/lists");
    EU_IT_EXPECT_ERROR(&r, 422);

    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists");
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.id", friends);
    EU_IT_EXPECT_JSTR(&r, "1.title", "Work");

    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists/%s", work);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Work");

    call(&w, &r, "PUT", w.tok[0], "{\"title\":\"Colleagues\",\"replies_policy\":\"none\"}",
         "/api/v1/lists/%s", work);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Colleagues");
    EU_IT_EXPECT_JSTR(&r, "replies_policy", "none");
    ck_assert(json_is_true(eu_it_jpath(r.json, "exclusive")));
    call(&w, &r, "PUT", w.tok[0], "{\"title\":\"\"}", "/api/v1/lists/%s", work);
    EU_IT_EXPECT_ERROR(&r, 422);

    /* Someone else's list does not exist for you. */
    call(&w, &r, "GET", w.tok[1], NULL, "/api/v1/lists/%s", work);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "PUT", w.tok[1], "{\"title\":\"mine\"}", "/api/v1/lists/%s", work);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "DELETE", w.tok[1], NULL, "/api/v1/lists/%s", work);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "GET", w.tok[1], NULL, "/api/v1/lists");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists/12345");
    expect_error_text(&r, 404, "Record not found");

    /* Scopes. */
    call(&w, &r, "POST", w.ro[0], "{\"title\":\"nope\"}", "/api/v1/lists");
    expect_error_text(&r, 403, "This action is outside the authorized scopes");
    call(&w, &r, "GET", w.ro[0], NULL, "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/lists");
    expect_error_text(&r, 401, "The access token is invalid");

    call(&w, &r, "DELETE", w.tok[0], NULL, "/api/v1/lists/%s", work);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_object(r.json) && json_object_size(r.json) == 0);
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists/%s", work);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists");
    ck_assert_int_eq(json_array_size(r.json), 1);

    free(friends);
    free(work);
    eu_it_resp_free(&r);
    world_stop(&w);
}
END_TEST

START_TEST(test_lists_membership)
{
    struct world w;
    struct eu_it_resp r = {0};
    char body[256];
    world_start(&w);

    call(&w, &r, "POST", w.tok[0], "{\"title\":\"Friends\"}", "/api/v1/lists");
    char *list = strdup(eu_it_json_str(&r, "id"));

    /* Only followed accounts may be added; nothing is added when one is not. */
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\"]}", w.id[1]);
    call(&w, &r, "POST", w.tok[0], body, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_ERROR(&r, 422);
    for (int i = 1; i <= 3; i++) {
        call(&w, &r, "POST", w.tok[0], NULL, "/api/v1/accounts/%s/follow", w.id[i]);
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    call(&w, &r, "POST", w.tok[0], "{\"account_ids\":[\"987654\"]}", "/api/v1/lists/%s/accounts",
         list);
    expect_error_text(&r, 404, "Record not found");
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\",\"%s\",\"%s\"]}", w.id[1], w.id[2],
             w.id[3]);
    call(&w, &r, "POST", w.tok[0], body, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_object(r.json) && json_object_size(r.json) == 0);
    /* Adding again is harmless. */
    call(&w, &r, "POST", w.tok[0], body, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Members page newest-added first, with Link headers; limit=0 is all. */
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 3);
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists/%s/accounts?limit=2", list);
    ck_assert_int_eq(json_array_size(r.json), 2);
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_msg(link && strstr(link, "rel=\"next\"") && strstr(link, "max_id="), "%s",
                  link ? link : "(no Link)");
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists/%s/accounts?limit=0", list);
    ck_assert_int_eq(json_array_size(r.json), 3);
    call(&w, &r, "GET", w.tok[1], NULL, "/api/v1/lists/%s/accounts", list);
    expect_error_text(&r, 404, "Record not found");

    /* The lists an account is in. */
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/accounts/%s/lists", w.id[2]);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", list);
    EU_IT_EXPECT_JSTR(&r, "0.title", "Friends");
    call(&w, &r, "GET", w.tok[1], NULL, "/api/v1/accounts/%s/lists", w.id[2]);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/accounts/555555/lists");
    expect_error_text(&r, 404, "Record not found");

    /* Removing by DELETE with a form-style query. */
    call(&w, &r, "DELETE", w.tok[0], NULL, "/api/v1/lists/%s/accounts?account_ids[]=%s", list,
         w.id[3]);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists/%s/accounts", list);
    ck_assert_int_eq(json_array_size(r.json), 2);

    /* Unfollowing and blocking take members out. */
    call(&w, &r, "POST", w.tok[0], NULL, "/api/v1/accounts/%s/unfollow", w.id[1]);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "POST", w.tok[2], NULL, "/api/v1/accounts/%s/block", w.id[0]);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/lists/%s/accounts", list);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* Scopes for membership changes. */
    call(&w, &r, "POST", w.ro[0], body, "/api/v1/lists/%s/accounts", list);
    expect_error_text(&r, 403, "This action is outside the authorized scopes");

    /* Deleting a list drops its memberships with it. */
    call(&w, &r, "POST", w.tok[0], NULL, "/api/v1/accounts/%s/follow", w.id[1]);
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\"]}", w.id[1]);
    call(&w, &r, "POST", w.tok[0], body, "/api/v1/lists/%s/accounts", list);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "DELETE", w.tok[0], NULL, "/api/v1/lists/%s", list);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", w.tok[0], NULL, "/api/v1/accounts/%s/lists", w.id[1]);
    ck_assert_int_eq(json_array_size(r.json), 0);

    free(list);
    eu_it_resp_free(&r);
    world_stop(&w);
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
