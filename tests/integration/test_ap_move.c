/*
 * Account migration and suspended actors over federation: tenants a.test
 * and b.test of one server over real HTTP, as test_ap_federation.c, and a
 * decoy tenant in the same database that must see none of it.
 *
 * Move: alice and amy (a.test) and carl (b.test) follow bob (b.test); bob2
 * (b.test) lists bob in its aliases (POST /api/v1/accounts/alias) and bob
 * moves there (POST /api/v1/accounts/move). The Move reaches a.test, whose
 * follows move to bob2, and carl's follow moves on b.test itself; bob's Account shows `moved` on
 * both sides and its actor movedTo. A wrong password, a target that does not name bob, and a second
 * move within the cooldown change nothing and send nothing. A move to an
 * account on the other tenant fetches it and its alias, and the mover's
 * local follower sends it a Follow.
 *
 * Suspension: a suspended account's actor is still served, flagged and
 * blanked, as Mastodon serves one until deletion; its statuses and
 * collections are refused; once purged it is not found.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 300
#define WAIT_MS 20000
#define PASSWORD "correct horse battery staple"
#define AS_JSON "application/activity+json"
#define FED_TOML                                                                                   \
    "[federation]\nallow_http = true\nallow_private_addresses = true\n"                            \
    "[workers]\nqueue_idle_poll_seconds = 1\n"

struct world {
    struct eu_it_server *s;
    char *db, *a_tid, *b_tid, *d_tid;
    char *alice, *amy, *bob, *bob2, *carl; /* tokens */
};

static void
world_start(struct world *w)
{
    memset(w, 0, sizeof(*w));
    struct eu_it_opts o = {.extra_toml = FED_TOML};
    w->s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(w->s, "a.test", "A"));
    json_decref(eu_it_tenant_create(w->s, "b.test", "B"));
    json_decref(eu_it_tenant_create(w->s, "d.test", "Decoy"));
    w->db = eu_it_tenant_database(w->s, "a.test");
    w->a_tid = eu_it_tenant_id(w->s, "a.test");
    w->b_tid = eu_it_tenant_id(w->s, "b.test");
    w->d_tid = eu_it_tenant_id(w->s, "d.test");
    const char *scopes = "read write follow";
    w->alice = eu_it_user_new(w->s, "a.test", "alice", scopes, NULL);
    w->amy = eu_it_user_new(w->s, "a.test", "amy", scopes, NULL);
    w->bob = eu_it_user_new(w->s, "b.test", "bob", scopes, NULL);
    w->bob2 = eu_it_user_new(w->s, "b.test", "bob2", scopes, NULL);
    w->carl = eu_it_user_new(w->s, "b.test", "carl", scopes, NULL);
    eu_it_account_create(w->s, "d.test", "bob");
}

static void
world_free(struct world *w)
{
    eu_it_server_free(w->s);
    free(w->db);
    free(w->a_tid);
    free(w->b_tid);
    free(w->d_tid);
    free(w->alice);
    free(w->amy);
    free(w->bob);
    free(w->bob2);
    free(w->carl);
}

static bool
is_following(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_is_true(eu_it_jpath(r->json, "0.following"));
}

static bool
not_following(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_array_size(r->json) == 1 &&
           !json_is_true(eu_it_jpath(r->json, "0.following")) &&
           !json_is_true(eu_it_jpath(r->json, "0.requested"));
}

/* An Account whose moved.acct is arg. */
static bool
moved_to(const struct eu_it_resp *r, const void *arg)
{
    json_t *v = r->status == 200 ? eu_it_jpath(r->json, "moved.acct") : NULL;
    return json_is_string(v) && strcmp(json_string_value(v), arg) == 0;
}

static bool
is_404(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 404;
}

/* Resolves user@domain on host for tok; returns its id there (caller frees). */
static char *
resolve(struct world *w, const char *host, const char *tok, const char *user, const char *domain)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, host, "GET", tok, NULL,
                "/api/v2/search?q=%%40%s%%40%s&resolve=true&type=accounts", user, domain);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *id = eu_it_jpath(r.json, "accounts.0.id");
    ck_assert_msg(json_is_string(id), "%s@%s not resolved on %s: %s", user, domain, host, r.body);
    char *out = strdup(json_string_value(id));
    eu_it_resp_free(&r);
    return out;
}

/* tok (on a.test) follows remote id and waits for the Accept. */
static void
follow(struct world *w, const char *tok, const char *id)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, "a.test", "POST", tok, NULL, "/api/v1/accounts/%s/follow", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w->s, &r, "a.test", tok, WAIT_MS, is_following, NULL, "the follow accepted",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", id);
    eu_it_resp_free(&r);
}

/* Move activities queued by tenant tid. */
static long
moves_queued(struct world *w, const char *tid)
{
    return eu_it_pg_execf_long(w->db,
                               "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                               " AND kind = 'ap_deliver' AND payload -> 'activity' ->> 'type'"
                               " = 'Move'",
                               tid);
}

static void
move(struct world *w, struct eu_it_resp *r, const char *tok, const char *password,
     const char *target)
{
    char body[512];
    snprintf(body, sizeof(body), "{\"password\": \"%s\", \"moved_to_uri\": \"%s\"}", password,
             target);
    eu_it_callf(w->s, r, "b.test", "POST", tok, body, "/api/v1/accounts/move");
}

static void
get_ap(struct world *w, struct eu_it_resp *r, const char *host, const char *path)
{
    const char *h[] = {"Accept: " AS_JSON, NULL};
    eu_it_resp_free(r);
    int rc = eu_it_http_raw(r, "GET", w->s->public_port, host, path, h, NULL);
    ck_assert_msg(rc == 0, "GET %s: %s", path, r->error);
}

/* POSTs an urlencoded form as bearer tok. */
static void
post_form(struct world *w, struct eu_it_resp *r, const char *host, const char *tok,
          const char *path, const char *form)
{
    char auth[512];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
    const char *h[] = {auth, "Content-Type: application/x-www-form-urlencoded", NULL};
    eu_it_resp_free(r);
    int rc = eu_it_http_raw(r, "POST", w->s->public_port, host, path, h, form);
    ck_assert_msg(rc == 0, "POST %s: %s", path, r->error);
}

START_TEST(test_aliases_and_move)
{
    struct world w;
    world_start(&w);
    struct eu_it_resp r = {0};
    char *bob_id = eu_it_account_id(w.s, "b.test", "bob");

    /* alice and amy (one shared inbox) follow bob. */
    char *bob_a = resolve(&w, "a.test", w.alice, "bob", "b.test");
    follow(&w, w.alice, bob_a);
    follow(&w, w.amy, bob_a);
    eu_it_callf(w.s, &r, "b.test", "POST", w.carl, NULL, "/api/v1/accounts/%s/follow", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Aliases: bad URIs and too many are refused, nothing stored. */
    eu_it_callf(w.s, &r, "b.test", "POST", w.bob2, "{\"also_known_as_uris\": [\"ftp://b.test/x\"]}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_ERROR(&r, 400);
    eu_it_callf(w.s, &r, "b.test", "POST", w.bob2, "{}", "/api/v1/accounts/alias");
    EU_IT_EXPECT_ERROR(&r, 400);
    eu_it_callf(w.s, &r, "b.test", "POST", w.bob2,
                "{\"also_known_as_uris\": [\"http://a.test/users/n1\", \"http://a.test/users/n2\","
                " \"http://a.test/users/n3\", \"http://a.test/users/n4\","
                " \"http://a.test/users/n5\", \"http://a.test/users/n6\"]}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, "b.test", "POST", w.bob2,
                "{\"also_known_as_uris\": [\"http://a.test/users/nobody\"]}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                         " AND also_known_as <> '{}'",
                                         w.b_tid),
                     0);

    /* bob moving to bob2 before bob2 names bob: 422, nothing sent. */
    move(&w, &r, w.bob, PASSWORD, "http://b.test/users/bob2");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "error"), "not aliased"));

    /* bob2 names bob (a form, as GoToSocial's clients send it). */
    post_form(&w, &r, "b.test", w.bob2, "/api/v1/accounts/alias",
              "also_known_as_uris[]=http%3A%2F%2Fb.test%2Fusers%2Fbob");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "bob2");
    ck_assert_ptr_nonnull(eu_it_jpath(r.json, "source"));
    get_ap(&w, &r, "b.test", "/users/bob2");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "alsoKnownAs.0", "http://b.test/users/bob");

    /* A wrong password: 400, nothing changed or sent. */
    move(&w, &r, w.bob, "not the password", "http://b.test/users/bob2");
    EU_IT_EXPECT_ERROR(&r, 400);
    move(&w, &r, w.bob, PASSWORD, "ftp://b.test/users/bob2");
    EU_IT_EXPECT_ERROR(&r, 400);
    move(&w, &r, w.bob, PASSWORD, "http://b.test/users/bob");
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, "b.test", "GET", w.bob, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(json_object_get(r.json, "moved"));
    ck_assert_int_eq(moves_queued(&w, w.b_tid), 0);

    /* The move. */
    move(&w, &r, w.bob, PASSWORD, "http://b.test/users/bob2");
    EU_IT_EXPECT_STATUS(&r, 202);
    EU_IT_EXPECT_JSTR(&r, "message", "accepted");
    /* One Move for a.test's shared inbox, however many follow there. */
    ck_assert_int_le(moves_queued(&w, w.b_tid), 1);

    /* At b: bob's Account points at bob2, its actor says movedTo. */
    eu_it_callf(w.s, &r, "b.test", "GET", w.bob2, NULL, "/api/v1/accounts/%s", bob_id);
    ck_assert_msg(moved_to(&r, "bob2"), "bob's account at b: %s", r.body);
    /* As in Mastodon, a moved account's login is disabled: its tokens are
     * refused (but for the migration routes). */
    eu_it_callf(w.s, &r, "b.test", "GET", w.bob, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error", "Your login is currently disabled");
    eu_it_callf(w.s, &r, "b.test", "POST", w.bob, "{\"status\": \"still here\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 403);
    eu_it_callf(w.s, &r, "b.test", "GET", NULL, NULL, "/api/v1/accounts/lookup?acct=bob");
    ck_assert_msg(moved_to(&r, "bob2"), "bob looked up: %s", r.body);
    get_ap(&w, &r, "b.test", "/users/bob");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "movedTo", "http://b.test/users/bob2");

    /* At a: both follows moved to bob2, and bob shows where it went. */
    char *bob2_a = resolve(&w, "a.test", w.alice, "bob2", "b.test");
    eu_it_wait_get(w.s, &r, "a.test", w.alice, WAIT_MS, is_following, NULL,
                   "alice follows bob2 after the move",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", bob2_a);
    eu_it_wait_get(w.s, &r, "a.test", w.amy, WAIT_MS, is_following, NULL,
                   "amy follows bob2 after the move",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", bob2_a);
    eu_it_callf(w.s, &r, "a.test", "GET", w.alice, NULL,
                "/api/v1/accounts/relationships?id%%5B%%5D=%s", bob_a);
    ck_assert_msg(not_following(&r, NULL), "alice still follows bob: %s", r.body);
    eu_it_callf(w.s, &r, "a.test", "GET", w.alice, NULL, "/api/v1/accounts/%s", bob_a);
    ck_assert_msg(moved_to(&r, "bob2@b.test"), "bob's account at a: %s", r.body);
    char *bob2_id = eu_it_account_id(w.s, "b.test", "bob2");
    eu_it_wait_get(w.s, &r, "b.test", w.bob2, WAIT_MS, eu_it_has_acct, "alice@a.test",
                   "alice among bob2's followers", "/api/v1/accounts/%s/followers", bob2_id);
    /* carl, bob's follower on b.test itself, follows bob2 now. */
    eu_it_callf(w.s, &r, "b.test", "GET", w.carl, NULL,
                "/api/v1/accounts/relationships?id%%5B%%5D=%s&id%%5B%%5D=%s", bob2_id, bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.following")) &&
                      !json_is_true(eu_it_jpath(r.json, "1.following")),
                  "carl's follows after the move: %s", r.body);

    /* Again within 30 days: refused. */
    move(&w, &r, w.bob, PASSWORD, "http://b.test/users/bob2");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "error"), "cooldown"));

    /* The decoy (same database, a bob of its own) saw nothing. */
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT (SELECT count(*) FROM accounts WHERE tenant_id"
                                         " = %s AND (domain IS NOT NULL OR also_known_as <> '{}'"
                                         " OR moved_to_account_id IS NOT NULL))"
                                         " + (SELECT count(*) FROM follows WHERE tenant_id = %s)"
                                         " + (SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                         " AND kind LIKE 'ap_%%')",
                                         w.d_tid, w.d_tid, w.d_tid),
                     0);

    free(bob2_id);
    free(bob2_a);
    free(bob_a);
    free(bob_id);
    eu_it_resp_free(&r);
    world_free(&w);
}
END_TEST

/* A move to an account of another server: the alias names a remote actor
 * (fetched), and the target is fetched afresh before the move. */
START_TEST(test_move_to_remote_account)
{
    struct world w;
    world_start(&w);
    struct eu_it_resp r = {0};

    /* alice (a.test) says she is also bob (b.test): b.test's actor is
     * fetched to check it exists. */
    eu_it_callf(w.s, &r, "a.test", "POST", w.alice,
                "{\"also_known_as_uris\": [\"http://b.test/users/bob\","
                " \"http://b.test/users/bob\"]}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                         " AND username = 'alice' AND domain IS NULL"
                                         " AND also_known_as = '{http://b.test/users/bob}'",
                                         w.a_tid),
                     1);

    char *bob_id = eu_it_account_id(w.s, "b.test", "bob");
    eu_it_callf(w.s, &r, "b.test", "POST", w.carl, NULL, "/api/v1/accounts/%s/follow", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    move(&w, &r, w.bob, PASSWORD, "http://a.test/users/alice");
    EU_IT_EXPECT_STATUS(&r, 202);
    /* carl (b.test) followed bob: his Follow goes to alice, who accepts. */
    char *alice_b = resolve(&w, "b.test", w.carl, "alice", "a.test");
    eu_it_wait_get(w.s, &r, "b.test", w.carl, WAIT_MS, is_following, NULL,
                   "carl follows alice after the move",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", alice_b);
    char *alice_id = eu_it_account_id(w.s, "a.test", "alice");
    eu_it_wait_get(w.s, &r, "a.test", w.alice, WAIT_MS, eu_it_has_acct, "carl@b.test",
                   "carl among alice's followers", "/api/v1/accounts/%s/followers", alice_id);
    eu_it_callf(w.s, &r, "b.test", "GET", w.bob2, NULL, "/api/v1/accounts/%s", bob_id);
    ck_assert_msg(moved_to(&r, "alice@a.test"), "bob's account at b: %s", r.body);
    get_ap(&w, &r, "b.test", "/users/bob");
    EU_IT_EXPECT_JSTR(&r, "movedTo", "http://a.test/users/alice");

    /* Clearing the aliases: an empty list. */
    eu_it_callf(w.s, &r, "a.test", "POST", w.alice, "{\"also_known_as_uris\": []}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_STATUS(&r, 200);
    get_ap(&w, &r, "a.test", "/users/alice");
    ck_assert_ptr_null(json_object_get(r.json, "alsoKnownAs"));

    free(alice_id);
    free(alice_b);
    free(bob_id);
    eu_it_resp_free(&r);
    world_free(&w);
}
END_TEST

/* Mastodon serves a suspended account's actor until the account is
 * deleted (flagged, profile blanked, key kept) and refuses its statuses
 * and collections (403); deleted, it is gone. */
START_TEST(test_suspended_actor)
{
    struct world w;
    world_start(&w);
    struct eu_it_resp r = {0};
    char *bob_id = eu_it_account_id(w.s, "b.test", "bob");

    eu_it_callf(w.s, &r, "b.test", "PATCH", w.bob,
                "{\"display_name\": \"Bobby\", \"note\": \"about me\","
                " \"fields_attributes\": [{\"name\": \"Site\", \"value\": \"x\"}]}",
                "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, "b.test", "POST", w.bob, "{\"status\": \"hello\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *status_id = strdup(eu_it_json_str(&r, "id"));
    char path[256];
    snprintf(path, sizeof(path), "/users/bob/statuses/%s", status_id);
    get_ap(&w, &r, "b.test", path);
    EU_IT_EXPECT_STATUS(&r, 200);

    snprintf(path, sizeof(path), "/admin/v1/tenants/b.test/accounts/%s/suspend", bob_id);
    eu_it_admin(w.s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    get_ap(&w, &r, "b.test", "/users/bob");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", "http://b.test/users/bob");
    ck_assert(json_is_true(json_object_get(r.json, "suspended")));
    EU_IT_EXPECT_JSTR(&r, "name", "bob");
    EU_IT_EXPECT_JSTR(&r, "summary", "");
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "attachment")), 0);
    ck_assert_ptr_nonnull(eu_it_jpath(r.json, "publicKey.publicKeyPem"));
    ck_assert_ptr_nonnull(strstr(r.body, "toot:suspended"));
    eu_it_callf(w.s, &r, "b.test", "GET", NULL, NULL,
                "/.well-known/webfinger?resource=acct:bob@b.test");
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/users/bob/statuses/%s", status_id);
    get_ap(&w, &r, "b.test", path);
    EU_IT_EXPECT_ERROR(&r, 403);
    get_ap(&w, &r, "b.test", "/users/bob/outbox");
    EU_IT_EXPECT_ERROR(&r, 403);
    get_ap(&w, &r, "b.test", "/users/bob/followers");
    EU_IT_EXPECT_ERROR(&r, 403);
    /* The decoy's bob is nobody's business here. */
    get_ap(&w, &r, "d.test", "/users/bob");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(json_object_get(r.json, "suspended"));

    /* Unsuspended: the profile is back. */
    snprintf(path, sizeof(path), "/admin/v1/tenants/b.test/accounts/%s/unsuspend", bob_id);
    eu_it_admin(w.s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    get_ap(&w, &r, "b.test", "/users/bob");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(json_object_get(r.json, "suspended"));
    EU_IT_EXPECT_JSTR(&r, "name", "Bobby");

    /* Suspended past the retention: purged, so not found at all. */
    snprintf(path, sizeof(path), "/admin/v1/tenants/b.test/accounts/%s/suspend", bob_id);
    free(eu_it_pg_execf(w.db,
                        "UPDATE accounts SET suspended_at = now() - interval '365 days'"
                        " WHERE tenant_id = %s AND id = %s",
                        w.b_tid, bob_id));
    eu_it_admin(w.s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, "b.test", NULL, WAIT_MS, is_404, NULL, "bob purged",
                   "/.well-known/webfinger?resource=acct:bob@b.test");

    free(status_id);
    free(bob_id);
    eu_it_resp_free(&r);
    world_free(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_move");
    EU_IT_ADD_TCASE(s, test_aliases_and_move, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_move_to_remote_account, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_suspended_actor, TIMEOUT);
    return eu_it_run_suite(s);
}
