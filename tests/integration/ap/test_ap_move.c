/*
 * Account migration and suspended actors over federation: tenants a.test
 * and b.test of one server over real HTTP, as test_ap_federation.c, and a
 * decoy tenant in the same database that must see none of it.
 *
 * Move: alice and amy (a.test) and carl (b.test) follow bob (b.test); bob2
 * (b.test) lists bob in its aliases (POST /api/v1/accounts/alias) and bob
 * moves there (POST /api/v1/accounts/move). The Move reaches a.test, whose
 * follows move to bob2, and carl's follow moves on b.test itself; bob's
 * Account shows `moved` on both sides and its actor movedTo. A wrong
 * password, a target that does not name bob, and a second move within the
 * cooldown change nothing and send nothing. What a.test's users did to bob
 * goes to bob2 with the follows: list places, blocks (sent on to b.test),
 * mutes; what b.test's own did, bob's move carries on b.test itself, to a
 * local target and to a remote one (which hears of the blocks). A move to
 * an account on the other tenant fetches it and its alias, and the mover's
 * local follower sends it a Follow; at that tenant, the mover's followers
 * follow its own account directly (test_move_to_local_account).
 *
 * Suspension: a suspended account's actor is still served, flagged and
 * blanked, as Mastodon serves one until deletion; its statuses and
 * collections are refused; once purged it is not found.
 */
#include "world.h"

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

/* Three tenants of one server federating over HTTP; the decoy has a bob. */
static const struct eu_it_world_opts world = {
    .host = "a.test",
    .decoy = "d.test",
    .tenants = {"b.test"},
    .extra_toml = FED_TOML,
    .users = {{"alice"},
              {"amy"},
              {"bob", "b.test"},
              {"bob2", "b.test"},
              {"carl", "b.test"},
              {"decoy_bob", "d.test", "bob"}},
};

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

/* Relationships of tok (on host) with account id; r keeps the answer. */
static void
relationship(struct world *w, struct eu_it_resp *r, const char *host, const char *tok,
             const char *id)
{
    eu_it_callf(w->s, r, host, "GET", tok, NULL, "/api/v1/accounts/relationships?id%%5B%%5D=%s",
                id);
    EU_IT_EXPECT_STATUS(r, 200);
    ck_assert_int_eq(json_array_size(r->json), 1);
}

static bool
is_blocked_by(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_is_true(eu_it_jpath(r->json, "0.blocked_by"));
}

/* Notifications in the array j of type from acct. */
static int
count_notes(json_t *j, const char *type, const char *acct)
{
    int n = 0;
    size_t i;
    json_t *v;
    json_array_foreach(j, i, v)
    {
        const char *t = json_string_value(json_object_get(v, "type"));
        const char *a = json_string_value(eu_it_jpath(v, "account.acct"));
        n += t && a && strcmp(t, type) == 0 && strcmp(a, acct) == 0;
    }
    return n;
}

/* tok makes a list on host holding the accounts ids (a JSON array's
 * inside); returns its id (caller frees). */
static char *
list_of(struct world *w, const char *host, const char *tok, const char *ids)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, host, "POST", tok, "{\"title\": \"moved\"}", "/api/v1/lists");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    char body[512];
    snprintf(body, sizeof(body), "{\"account_ids\": [%s]}", ids);
    eu_it_callf(w->s, &r, host, "POST", tok, body, "/api/v1/lists/%s/accounts", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    return id;
}

/* The decoy's rows of the kinds a Move touches, as one number. */
static long
decoy_rows(struct world *w)
{
    return eu_it_pg_execf_long(w->db,
                               "SELECT (SELECT count(*) FROM follows WHERE tenant_id = %s)"
                               " + (SELECT count(*) FROM follow_requests WHERE tenant_id = %s)"
                               " + 10 * (SELECT count(*) FROM blocks WHERE tenant_id = %s)"
                               " + 100 * (SELECT count(*) FROM mutes WHERE tenant_id = %s)"
                               " + 1000 * (SELECT count(*) FROM list_accounts WHERE tenant_id"
                               " = %s)"
                               " + (SELECT count(*) FROM notifications WHERE tenant_id = %s)",
                               eu_it_world_tid(w, "d.test"), eu_it_world_tid(w, "d.test"),
                               eu_it_world_tid(w, "d.test"), eu_it_world_tid(w, "d.test"),
                               eu_it_world_tid(w, "d.test"), eu_it_world_tid(w, "d.test"));
}

/*
 * What b.test's own accounts did to bob, for his move to carry (the local
 * side of Mastodon's MoveWorker): carl (who follows bob) has him in a
 * list, erin blocks him, fay mutes him for an hour, notifications shown.
 * The decoy's erin and fay block and mute its own bob.
 */
struct carried {
    char *erin, *erin_id, *fay, *carl_list;
    char *d_erin, *d_fay;
};

static void
carry_setup(struct world *w, struct carried *c, const char *bob_id)
{
    struct eu_it_resp r = {0};
    const char *scopes = "read write follow";
    memset(c, 0, sizeof(*c));
    char ids[64];
    snprintf(ids, sizeof(ids), "\"%s\"", bob_id);
    c->carl_list = list_of(w, "b.test", eu_it_tok(w, "carl"), ids);
    c->erin = eu_it_user_new(w->s, "b.test", "erin", scopes, &c->erin_id);
    c->fay = eu_it_user_new(w->s, "b.test", "fay", scopes, NULL);
    eu_it_callf(w->s, &r, "b.test", "POST", c->erin, NULL, "/api/v1/accounts/%s/block", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w->s, &r, "b.test", "POST", c->fay,
                "{\"notifications\": false, \"duration\": 3600}", "/api/v1/accounts/%s/mute",
                bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *d_bob = eu_it_account_id(w->s, "d.test", "bob");
    c->d_erin = eu_it_user_new(w->s, "d.test", "erin", scopes, NULL);
    c->d_fay = eu_it_user_new(w->s, "d.test", "fay", scopes, NULL);
    eu_it_callf(w->s, &r, "d.test", "POST", c->d_erin, NULL, "/api/v1/accounts/%s/block", d_bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w->s, &r, "d.test", "POST", c->d_fay, "{\"notifications\": false}",
                "/api/v1/accounts/%s/mute", d_bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    free(d_bob);
    eu_it_resp_free(&r);
}

/* After bob's move to target (its id at b.test, its acct there): carl's
 * list holds the target in bob's place, erin blocks it as well as bob,
 * fay mutes it as she muted bob but for good, as Mastodon's MuteService
 * gets no duration. */
static void
carry_check(struct world *w, struct carried *c, const char *target_id, const char *target_acct)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, "b.test", "GET", eu_it_tok(w, "carl"), NULL, "/api/v1/lists/%s/accounts",
                c->carl_list);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_array_size(r.json) == 1 && eu_it_has_acct(&r, target_acct),
                  "carl's list after the move: %s", r.body);
    eu_it_callf(w->s, &r, "b.test", "GET", c->erin, NULL, "/api/v1/blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_array_size(r.json) == 2 && eu_it_has_acct(&r, target_acct) &&
                      eu_it_has_acct(&r, "bob"),
                  "erin's blocks after the move: %s", r.body);
    relationship(w, &r, "b.test", c->erin, target_id);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.blocking")) &&
                      !json_is_true(eu_it_jpath(r.json, "0.following")) &&
                      !json_is_true(eu_it_jpath(r.json, "0.followed_by")),
                  "erin and the target: %s", r.body);
    eu_it_callf(w->s, &r, "b.test", "GET", c->fay, NULL, "/api/v1/mutes");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    json_t *mute = eu_it_find(r.json, "acct", target_acct);
    ck_assert_msg(mute && json_is_null(json_object_get(mute, "mute_expires_at")),
                  "fay's mutes after the move: %s", r.body);
    json_t *old = eu_it_find(r.json, "acct", "bob");
    ck_assert_msg(old && json_is_string(json_object_get(old, "mute_expires_at")),
                  "fay's mute of bob: %s", r.body);
    relationship(w, &r, "b.test", c->fay, target_id);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.muting")) &&
                      !json_is_true(eu_it_jpath(r.json, "0.muting_notifications")),
                  "fay and the target: %s", r.body);
    eu_it_resp_free(&r);
}

static void
carried_free(struct carried *c)
{
    free(c->erin);
    free(c->erin_id);
    free(c->fay);
    free(c->carl_list);
    free(c->d_erin);
    free(c->d_fay);
}

/* Block activities queued by tenant tid. */
static long
blocks_queued(struct world *w, const char *tid)
{
    return eu_it_pg_execf_long(w->db,
                               "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                               " AND kind = 'ap_deliver' AND payload -> 'activity' ->> 'type'"
                               " = 'Block'",
                               tid);
}

START_TEST(test_aliases_and_move)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *bob_id = eu_it_account_id(w.s, "b.test", "bob");

    /* alice and amy (one shared inbox) follow bob. */
    char *bob_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "bob", "b.test");
    follow(&w, eu_it_tok(&w, "alice"), bob_a);
    follow(&w, eu_it_tok(&w, "amy"), bob_a);
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "carl"), NULL,
                "/api/v1/accounts/%s/follow", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* For Mastodon's MoveWorker to carry over: bob in alice's list, dana's
     * block of bob, amy's mute of bob that still shows notifications. And
     * the decoy's own dana blocks its own bob. */
    char *dana = eu_it_user_new(w.s, "a.test", "dana", "read write follow", NULL);
    char ids[64];
    snprintf(ids, sizeof(ids), "\"%s\"", bob_a);
    char *list = list_of(&w, "a.test", eu_it_tok(&w, "alice"), ids);
    eu_it_callf(w.s, &r, "a.test", "POST", dana, NULL, "/api/v1/accounts/%s/block", bob_a);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "amy"),
                "{\"notifications\": false, \"duration\": 3600}", "/api/v1/accounts/%s/mute",
                bob_a);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *d_dana = eu_it_user_new(w.s, "d.test", "dana", "read write follow", NULL);
    char *d_bob = eu_it_account_id(w.s, "d.test", "bob");
    eu_it_callf(w.s, &r, "d.test", "POST", d_dana, NULL, "/api/v1/accounts/%s/block", d_bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* On b.test itself: carl lists bob, erin blocks him (and bob2 follows
     * her), fay mutes him; gus follows bob and bob2 and lists bob. */
    char *bob2_id = eu_it_account_id(w.s, "b.test", "bob2");
    struct carried c;
    carry_setup(&w, &c, bob_id);
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob2"), NULL,
                "/api/v1/accounts/%s/follow", c.erin_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "following")));
    char *gus = eu_it_user_new(w.s, "b.test", "gus", "read write follow", NULL);
    eu_it_callf(w.s, &r, "b.test", "POST", gus, NULL, "/api/v1/accounts/%s/follow", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, "b.test", "POST", gus, NULL, "/api/v1/accounts/%s/follow", bob2_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(ids, sizeof(ids), "\"%s\"", bob_id);
    char *gus_list = list_of(&w, "b.test", gus, ids);
    long decoy = decoy_rows(&w);

    /* Aliases: bad URIs and too many are refused, nothing stored. */
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob2"),
                "{\"also_known_as_uris\": [\"ftp://b.test/x\"]}", "/api/v1/accounts/alias");
    EU_IT_EXPECT_ERROR(&r, 400);
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob2"), "{}", "/api/v1/accounts/alias");
    EU_IT_EXPECT_ERROR(&r, 400);
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob2"),
                "{\"also_known_as_uris\": [\"http://a.test/users/n1\", \"http://a.test/users/n2\","
                " \"http://a.test/users/n3\", \"http://a.test/users/n4\","
                " \"http://a.test/users/n5\", \"http://a.test/users/n6\"]}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob2"),
                "{\"also_known_as_uris\": [\"http://a.test/users/nobody\"]}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                         " AND also_known_as <> '{}'",
                                         eu_it_world_tid(&w, "b.test")),
                     0);

    /* bob moving to bob2 before bob2 names bob: 422, nothing sent. */
    move(&w, &r, eu_it_tok(&w, "bob"), PASSWORD, "http://b.test/users/bob2");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "error"), "not aliased"));

    /* bob2 names bob (a form, as GoToSocial's clients send it). */
    post_form(&w, &r, "b.test", eu_it_tok(&w, "bob2"), "/api/v1/accounts/alias",
              "also_known_as_uris[]=http%3A%2F%2Fb.test%2Fusers%2Fbob");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "bob2");
    ck_assert_ptr_nonnull(eu_it_jpath(r.json, "source"));
    get_ap(&w, &r, "b.test", "/users/bob2");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "alsoKnownAs.0", "http://b.test/users/bob");

    /* A wrong password: 400, nothing changed or sent. */
    move(&w, &r, eu_it_tok(&w, "bob"), "not the password", "http://b.test/users/bob2");
    EU_IT_EXPECT_ERROR(&r, 400);
    move(&w, &r, eu_it_tok(&w, "bob"), PASSWORD, "ftp://b.test/users/bob2");
    EU_IT_EXPECT_ERROR(&r, 400);
    move(&w, &r, eu_it_tok(&w, "bob"), PASSWORD, "http://b.test/users/bob");
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "bob"), NULL,
                "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(json_object_get(r.json, "moved"));
    ck_assert_int_eq(moves_queued(&w, eu_it_world_tid(&w, "b.test")), 0);

    /* The move. */
    move(&w, &r, eu_it_tok(&w, "bob"), PASSWORD, "http://b.test/users/bob2");
    EU_IT_EXPECT_STATUS(&r, 202);
    EU_IT_EXPECT_JSTR(&r, "message", "accepted");
    /* One Move for a.test's shared inbox, however many follow there. */
    ck_assert_int_le(moves_queued(&w, eu_it_world_tid(&w, "b.test")), 1);

    /* At b: bob's Account points at bob2, its actor says movedTo. */
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "bob2"), NULL, "/api/v1/accounts/%s",
                bob_id);
    ck_assert_msg(moved_to(&r, "bob2"), "bob's account at b: %s", r.body);
    /* As in Mastodon, a moved account's login is disabled: its tokens are
     * refused (but for the migration routes). */
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "bob"), NULL,
                "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error", "Your login is currently disabled");
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob"), "{\"status\": \"still here\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_ERROR(&r, 403);
    eu_it_callf(w.s, &r, "b.test", "GET", NULL, NULL, "/api/v1/accounts/lookup?acct=bob");
    ck_assert_msg(moved_to(&r, "bob2"), "bob looked up: %s", r.body);
    get_ap(&w, &r, "b.test", "/users/bob");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "movedTo", "http://b.test/users/bob2");

    /* At a: both follows moved to bob2, and bob shows where it went. */
    char *bob2_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "bob2", "b.test");
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, is_following, NULL,
                   "alice follows bob2 after the move",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", bob2_a);
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "amy"), WAIT_MS, is_following, NULL,
                   "amy follows bob2 after the move",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", bob2_a);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/relationships?id%%5B%%5D=%s", bob_a);
    ck_assert_msg(not_following(&r, NULL), "alice still follows bob: %s", r.body);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s",
                bob_a);
    ck_assert_msg(moved_to(&r, "bob2@b.test"), "bob's account at a: %s", r.body);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob2"), WAIT_MS, eu_it_has_acct,
                   "alice@a.test", "alice among bob2's followers", "/api/v1/accounts/%s/followers",
                   bob2_id);
    /* Carried over: alice's list holds bob2 instead of bob, dana blocks
     * bob2 too (and b.test heard so), amy mutes bob2 as she muted bob. */
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s/accounts",
                list);
    ck_assert_msg(eu_it_has_acct(&r, "bob2@b.test") && json_array_size(r.json) == 1,
                  "alice's list after the move: %s", r.body);
    eu_it_callf(w.s, &r, "a.test", "GET", dana, NULL, "/api/v1/blocks");
    ck_assert_msg(eu_it_has_acct(&r, "bob2@b.test") && eu_it_has_acct(&r, "bob@b.test"),
                  "dana's blocks after the move: %s", r.body);
    relationship(&w, &r, "a.test", eu_it_tok(&w, "amy"), bob2_a);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.muting")) &&
                      !json_is_true(eu_it_jpath(r.json, "0.muting_notifications")),
                  "amy and bob2 after the move: %s", r.body);
    /* For good, though her mute of bob ends in an hour (Mastodon's too). */
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "amy"), NULL, "/api/v1/mutes");
    json_t *carried = eu_it_find(r.json, "acct", "bob2@b.test");
    ck_assert_msg(carried && json_is_null(json_object_get(carried, "mute_expires_at")),
                  "amy's mutes after the move: %s", r.body);
    char *dana_b = resolve(&w, "b.test", eu_it_tok(&w, "carl"), "dana", "a.test");
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob2"), WAIT_MS, is_blocked_by, NULL,
                   "dana's Block of bob2 at b.test", "/api/v1/accounts/relationships?id%%5B%%5D=%s",
                   dana_b);

    /* carl, bob's follower on b.test itself, follows bob2 now. */
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "carl"), NULL,
                "/api/v1/accounts/relationships?id%%5B%%5D=%s&id%%5B%%5D=%s", bob2_id, bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.following")) &&
                      !json_is_true(eu_it_jpath(r.json, "1.following")),
                  "carl's follows after the move: %s", r.body);
    /* carl's list, erin's block (bob2 no longer follows her) and fay's
     * mute carried to bob2, and no Block sent anywhere for it. */
    carry_check(&w, &c, bob2_id, "bob2");
    relationship(&w, &r, "b.test", eu_it_tok(&w, "bob2"), c.erin_id);
    ck_assert_msg(!json_is_true(eu_it_jpath(r.json, "0.following")) &&
                      json_is_true(eu_it_jpath(r.json, "0.blocked_by")),
                  "bob2 and erin after the move: %s", r.body);
    ck_assert_int_eq(blocks_queued(&w, eu_it_world_tid(&w, "b.test")), 0);
    /* gus, who followed both, keeps bob and has bob2 in his list too, as
     * Mastodon's MoveWorker adds the target for those who follow both. */
    eu_it_callf(w.s, &r, "b.test", "GET", gus, NULL, "/api/v1/lists/%s/accounts", gus_list);
    ck_assert_msg(json_array_size(r.json) == 2 && eu_it_has_acct(&r, "bob") &&
                      eu_it_has_acct(&r, "bob2"),
                  "gus's list after the move: %s", r.body);
    eu_it_callf(w.s, &r, "b.test", "GET", gus, NULL,
                "/api/v1/accounts/relationships?id%%5B%%5D=%s&id%%5B%%5D=%s", bob2_id, bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.following")) &&
                      json_is_true(eu_it_jpath(r.json, "1.following")),
                  "gus's follows after the move: %s", r.body);

    /* Again within 30 days: refused. */
    move(&w, &r, eu_it_tok(&w, "bob"), PASSWORD, "http://b.test/users/bob2");
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
                                         eu_it_world_tid(&w, "d.test"),
                                         eu_it_world_tid(&w, "d.test"),
                                         eu_it_world_tid(&w, "d.test")),
                     0);
    ck_assert_int_eq(decoy_rows(&w), decoy);

    carried_free(&c);
    free(gus_list);
    free(gus);
    free(dana_b);
    free(d_bob);
    free(d_dana);
    free(list);
    free(dana);
    free(bob2_id);
    free(bob2_a);
    free(bob_a);
    free(bob_id);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

/* A move to an account of another server: the alias names a remote actor
 * (fetched), and the target is fetched afresh before the move. */
START_TEST(test_move_to_remote_account)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};

    /* alice (a.test) says she is also bob (b.test): b.test's actor is
     * fetched to check it exists. */
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "alice"),
                "{\"also_known_as_uris\": [\"http://b.test/users/bob\","
                " \"http://b.test/users/bob\"]}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                         " AND username = 'alice' AND domain IS NULL"
                                         " AND also_known_as = '{http://b.test/users/bob}'",
                                         eu_it_world_tid(&w, "a.test")),
                     1);

    char *bob_id = eu_it_account_id(w.s, "b.test", "bob");
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "carl"), NULL,
                "/api/v1/accounts/%s/follow", bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    struct carried c;
    carry_setup(&w, &c, bob_id);
    long decoy = decoy_rows(&w);
    /* Known to a.test before she blocks alice: a search hides a blocker. */
    char *erin_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "erin", "b.test");
    move(&w, &r, eu_it_tok(&w, "bob"), PASSWORD, "http://a.test/users/alice");
    EU_IT_EXPECT_STATUS(&r, 202);
    /* carl (b.test) followed bob: his Follow goes to alice, who accepts. */
    char *alice_b = resolve(&w, "b.test", eu_it_tok(&w, "carl"), "alice", "a.test");
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "carl"), WAIT_MS, is_following, NULL,
                   "carl follows alice after the move",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", alice_b);
    char *alice_id = eu_it_account_id(w.s, "a.test", "alice");
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, eu_it_has_acct,
                   "carl@b.test", "carl among alice's followers", "/api/v1/accounts/%s/followers",
                   alice_id);
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "bob2"), NULL, "/api/v1/accounts/%s",
                bob_id);
    ck_assert_msg(moved_to(&r, "alice@a.test"), "bob's account at b: %s", r.body);
    get_ap(&w, &r, "b.test", "/users/bob");
    EU_IT_EXPECT_JSTR(&r, "movedTo", "http://a.test/users/alice");
    /* carl's list, erin's block and fay's mute carried to alice, and
     * a.test hears of erin's Block. */
    carry_check(&w, &c, alice_b, "alice@a.test");
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, is_blocked_by, NULL,
                   "erin's Block of alice at a.test",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", erin_a);
    ck_assert_int_eq(decoy_rows(&w), decoy);

    /* Clearing the aliases: an empty list. */
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "alice"), "{\"also_known_as_uris\": []}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_STATUS(&r, 200);
    get_ap(&w, &r, "a.test", "/users/alice");
    ck_assert_ptr_null(json_object_get(r.json, "alsoKnownAs"));

    carried_free(&c);
    free(erin_a);
    free(alice_id);
    free(alice_b);
    free(bob_id);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

/* Follows, requests and blocks sent over the network to a.test's own lena
 * or nico: none may be, both being local. */
static long
sent_to_local(struct world *w)
{
    return eu_it_pg_execf_long(w->db,
                               "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                               " AND kind = 'ap_deliver' AND payload -> 'activity' ->> 'object'"
                               " IN ('http://a.test/users/lena', 'http://a.test/users/nico')",
                               eu_it_world_tid(w, "a.test"));
}

/*
 * bob and carl (b.test) move to lena and nico, accounts of a.test, where
 * alice and amy follow them both. Nothing goes over the network: a.test
 * has its own followers follow its own accounts, as a local follow would.
 * lena is locked and blocks amy: alice follows her all the same, as
 * Mastodon bypasses the lock of a local target (lena hears of it, and has
 * no request to answer), amy keeps following bob. nico is unlocked and alice follows him
 * already: amy follows him (he hears of it), alice only drops carl.
 * alice's list of bob and carl now holds lena and nico; dan, who blocked
 * bob and muted carl, blocks lena and mutes nico. The decoy's own lena,
 * nico and dan see nothing.
 */
START_TEST(test_move_to_local_account)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    const char *scopes = "read write follow";
    char *lena_id = NULL, *nico_id = NULL;
    char *lena = eu_it_user_new(w.s, "a.test", "lena", scopes, &lena_id);
    char *nico = eu_it_user_new(w.s, "a.test", "nico", scopes, &nico_id);
    char *dan = eu_it_user_new(w.s, "a.test", "dan", scopes, NULL);
    char *amy_id = eu_it_account_id(w.s, "a.test", "amy");

    /* The decoy has a lena, a nico and a dan, who blocks its nico. */
    char *d_lena = eu_it_user_new(w.s, "d.test", "lena", scopes, NULL);
    char *d_nico_id = NULL;
    char *d_nico = eu_it_user_new(w.s, "d.test", "nico", scopes, &d_nico_id);
    char *d_dan = eu_it_user_new(w.s, "d.test", "dan", scopes, NULL);
    eu_it_callf(w.s, &r, "d.test", "POST", d_dan, NULL, "/api/v1/accounts/%s/block", d_nico_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    long decoy = decoy_rows(&w);

    char *bob_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "bob", "b.test");
    char *carl_a = resolve(&w, "a.test", eu_it_tok(&w, "alice"), "carl", "b.test");
    follow(&w, eu_it_tok(&w, "alice"), bob_a);
    follow(&w, eu_it_tok(&w, "amy"), bob_a);
    follow(&w, eu_it_tok(&w, "alice"), carl_a);
    follow(&w, eu_it_tok(&w, "amy"), carl_a);
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/%s/follow", nico_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "following")));
    eu_it_callf(w.s, &r, "a.test", "PATCH", lena, "{\"locked\": true}",
                "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, "a.test", "POST", lena, NULL, "/api/v1/accounts/%s/block", amy_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    char ids[128];
    snprintf(ids, sizeof(ids), "\"%s\", \"%s\"", bob_a, carl_a);
    char *list = list_of(&w, "a.test", eu_it_tok(&w, "alice"), ids);
    eu_it_callf(w.s, &r, "a.test", "POST", dan, NULL, "/api/v1/accounts/%s/block", bob_a);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, "a.test", "POST", dan, "{\"notifications\": false}",
                "/api/v1/accounts/%s/mute", carl_a);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* lena and nico name bob and carl; bob and carl move. */
    eu_it_callf(w.s, &r, "a.test", "POST", lena,
                "{\"also_known_as_uris\": [\"http://b.test/users/bob\"]}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, "a.test", "POST", nico,
                "{\"also_known_as_uris\": [\"http://b.test/users/carl\"]}",
                "/api/v1/accounts/alias");
    EU_IT_EXPECT_STATUS(&r, 200);
    move(&w, &r, eu_it_tok(&w, "bob"), PASSWORD, "http://a.test/users/lena");
    EU_IT_EXPECT_STATUS(&r, 202);
    move(&w, &r, eu_it_tok(&w, "carl"), PASSWORD, "http://a.test/users/nico");
    EU_IT_EXPECT_STATUS(&r, 202);

    /* lena: alice follows her though she is locked, and lena hears of it. */
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, is_following, NULL,
                   "alice follows lena after bob's move",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", lena_id);
    ck_assert(!json_is_true(eu_it_jpath(r.json, "0.requested")));
    relationship(&w, &r, "a.test", eu_it_tok(&w, "alice"), bob_a);
    ck_assert_msg(not_following(&r, NULL), "alice and bob: %s", r.body);
    eu_it_callf(w.s, &r, "a.test", "GET", lena, NULL, "/api/v1/follow_requests");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_array_size(r.json) == 0, "lena's follow requests: %s", r.body);
    eu_it_wait_get(w.s, &r, "a.test", lena, WAIT_MS, eu_it_has_acct, "alice",
                   "lena's follow notification", "/api/v1/notifications");
    ck_assert_int_eq(count_notes(r.json, "follow", "alice"), 1);
    ck_assert_int_eq(json_array_size(r.json), 1);
    /* amy, blocked by lena, still follows bob. */
    relationship(&w, &r, "a.test", eu_it_tok(&w, "amy"), bob_a);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.following")), "amy and bob: %s", r.body);
    relationship(&w, &r, "a.test", eu_it_tok(&w, "amy"), lena_id);
    ck_assert_msg(!json_is_true(eu_it_jpath(r.json, "0.requested")) &&
                      !json_is_true(eu_it_jpath(r.json, "0.following")) &&
                      json_is_true(eu_it_jpath(r.json, "0.blocked_by")),
                  "amy and lena: %s", r.body);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s",
                bob_a);
    ck_assert_msg(moved_to(&r, "lena"), "bob's account at a: %s", r.body);

    /* nico: amy follows him, alice did already; one notification each. */
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "amy"), WAIT_MS, is_following, NULL,
                   "amy follows nico after carl's move",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", nico_id);
    relationship(&w, &r, "a.test", eu_it_tok(&w, "amy"), carl_a);
    ck_assert_msg(not_following(&r, NULL), "amy and carl: %s", r.body);
    relationship(&w, &r, "a.test", eu_it_tok(&w, "alice"), carl_a);
    ck_assert_msg(not_following(&r, NULL), "alice and carl: %s", r.body);
    relationship(&w, &r, "a.test", eu_it_tok(&w, "alice"), nico_id);
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.following")));
    eu_it_wait_get(w.s, &r, "a.test", nico, WAIT_MS, eu_it_has_acct, "amy",
                   "nico's follow notification", "/api/v1/notifications");
    ck_assert_int_eq(count_notes(r.json, "follow", "amy"), 1);
    ck_assert_int_eq(count_notes(r.json, "follow", "alice"), 1);
    ck_assert_int_eq(json_array_size(r.json), 2);

    /* alice's list: lena and nico in place of bob and carl. */
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/lists/%s/accounts",
                list);
    ck_assert_msg(json_array_size(r.json) == 2 && eu_it_has_acct(&r, "lena") &&
                      eu_it_has_acct(&r, "nico"),
                  "alice's list after the moves: %s", r.body);
    /* dan blocks lena and mutes nico, notifications shown as for carl. */
    eu_it_callf(w.s, &r, "a.test", "GET", dan, NULL, "/api/v1/blocks");
    ck_assert_msg(eu_it_has_acct(&r, "lena") && eu_it_has_acct(&r, "bob@b.test"),
                  "dan's blocks: %s", r.body);
    eu_it_callf(w.s, &r, "a.test", "GET", dan, NULL, "/api/v1/mutes");
    ck_assert_msg(eu_it_has_acct(&r, "nico") && eu_it_has_acct(&r, "carl@b.test"),
                  "dan's mutes: %s", r.body);
    relationship(&w, &r, "a.test", dan, nico_id);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.muting")) &&
                      !json_is_true(eu_it_jpath(r.json, "0.muting_notifications")),
                  "dan and nico: %s", r.body);
    /* Nothing went over the network to a.test's own accounts. */
    ck_assert_int_eq(sent_to_local(&w), 0);
    ck_assert_int_eq(decoy_rows(&w), decoy);

    free(list);
    free(carl_a);
    free(bob_a);
    free(d_dan);
    free(d_nico);
    free(d_nico_id);
    free(d_lena);
    free(amy_id);
    free(dan);
    free(nico);
    free(nico_id);
    free(lena);
    free(lena_id);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

/* Mastodon serves a suspended account's actor until the account is
 * deleted (flagged, profile blanked, key kept) and refuses its statuses
 * and collections (403); deleted, it is gone. */
START_TEST(test_suspended_actor)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *bob_id = eu_it_account_id(w.s, "b.test", "bob");

    eu_it_callf(w.s, &r, "b.test", "PATCH", eu_it_tok(&w, "bob"),
                "{\"display_name\": \"Bobby\", \"note\": \"about me\","
                " \"fields_attributes\": [{\"name\": \"Site\", \"value\": \"x\"}]}",
                "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob"), "{\"status\": \"hello\"}",
                "/api/v1/statuses");
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

    /* Suspended past the retention, its Delete sent over an hour ago (the
     * purge's grace): purged, so not found at all. */
    snprintf(path, sizeof(path), "/admin/v1/tenants/b.test/accounts/%s/suspend", bob_id);
    free(eu_it_pg_execf(w.db,
                        "UPDATE accounts SET suspended_at = now() - interval '365 days',"
                        " delete_sent_at = now() - interval '2 hours'"
                        " WHERE tenant_id = %s AND id = %s",
                        eu_it_world_tid(&w, "b.test"), bob_id));
    eu_it_admin(w.s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, "b.test", NULL, WAIT_MS, is_404, NULL, "bob purged",
                   "/.well-known/webfinger?resource=acct:bob@b.test");

    free(status_id);
    free(bob_id);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_move");
    EU_IT_ADD_TCASE(s, test_aliases_and_move, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_move_to_remote_account, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_move_to_local_account, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_suspended_actor, TIMEOUT);
    return eu_it_run_suite(s);
}
