/*
 * Polls over federation: two tenants of one server (a.test, b.test) over
 * real HTTP, as test_ap_federation.c. bob (b.test) follows alice (a.test),
 * who posts polls; bob's votes go to a.test as Creates of Notes and count
 * there (never as statuses), the Update of the Question that a.test sends
 * brings new counts back to b.test, and the rules hold on both sides:
 * second votes, expired polls, unknown options, single choice. A decoy
 * tenant in the same database sees none of it.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 300
#define WAIT_MS 20000
#define FED_TOML                                                                                   \
    "[federation]\nallow_http = true\nallow_private_addresses = true\n"                            \
    "poll_update_delay_seconds = 1\n"                                                              \
    "[workers]\nqueue_idle_poll_seconds = 1\npoll_min_expires_in_seconds = 1\n"

/* Three tenants of one server federating over HTTP; the decoy has an alice. */
static const struct eu_it_world_opts world = {
    .host = "a.test",
    .decoy = "d.test",
    .tenants = {"b.test"},
    .extra_toml = FED_TOML,
    .users = {{"alice"}, {"amy"}, {"bob", "b.test"}, {"decoy_alice", "d.test", "alice"}},
};

static bool
is_following(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_is_true(eu_it_jpath(r->json, "0.following"));
}

/* A home timeline with a status whose poll has an option titled arg. */
static bool
has_poll(const struct eu_it_resp *r, const void *arg)
{
    if (r->status != 200)
        return false;
    for (size_t i = 0; i < json_array_size(r->json); i++)
        if (eu_it_find(eu_it_jpath(json_array_get(r->json, i), "poll.options"), "title", arg))
            return true;
    return false;
}

/* A poll whose counts are arg: "votes voters o0 o1 o2 ..." */
static bool
counts_are(const struct eu_it_resp *r, const void *arg)
{
    if (r->status != 200)
        return false;
    char got[128];
    json_t *voters = json_object_get(r->json, "voters_count");
    int n = snprintf(got, sizeof(got), "%lld %lld",
                     (long long)json_integer_value(json_object_get(r->json, "votes_count")),
                     json_is_integer(voters) ? (long long)json_integer_value(voters) : -1LL);
    json_t *opts = json_object_get(r->json, "options");
    for (size_t i = 0; i < json_array_size(opts); i++)
        n += snprintf(
            got + n, sizeof(got) - (size_t)n, " %lld",
            (long long)json_integer_value(json_object_get(json_array_get(opts, i), "votes_count")));
    return strcmp(got, arg) == 0;
}

/* alice posts a poll; returns her poll's id on a.test and, through
 * poll_b, the same poll's id on b.test once it got there. */
static char *
alice_polls(struct world *w, const char *first, const char *rest, int expires_in, bool multiple,
            char **poll_b)
{
    struct eu_it_resp r = {0};
    char body[512];
    snprintf(body, sizeof(body),
             "{\"status\": \"which?\", \"poll\": {\"options\": [\"%s\", %s],"
             " \"expires_in\": %d, \"multiple\": %s}}",
             first, rest, expires_in, multiple ? "true" : "false");
    eu_it_callf(w->s, &r, "a.test", "POST", eu_it_tok(w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *poll_a = strdup(json_string_value(eu_it_jpath(r.json, "poll.id")));
    eu_it_wait_get(w->s, &r, "b.test", eu_it_tok(w, "bob"), WAIT_MS, has_poll, first,
                   "the poll at b", "/api/v1/timelines/home");
    for (size_t i = 0; i < json_array_size(r.json); i++) {
        json_t *p = eu_it_jpath(json_array_get(r.json, i), "poll");
        if (eu_it_find(json_object_get(p, "options"), "title", first))
            *poll_b = strdup(json_string_value(json_object_get(p, "id")));
    }
    eu_it_resp_free(&r);
    return poll_a;
}

/* Queues on a.test what its inbox would queue for bob's activity (the
 * signature path is test_ap_inbox's), then waits until a.test's inbox
 * jobs are all done. */
static void
inbox_from_bob(struct world *w, const char *activity)
{
    struct eu_it_resp r = {0};
    char job[2048];
    snprintf(job, sizeof(job),
             "{\"kind\": \"ap_inbox\", \"payload\": {\"actor\": \"http://b.test/users/bob\","
             " \"recipient\": null, \"activity\": %s}}",
             activity);
    eu_it_admin(w->s, "POST", "/admin/v1/tenants/a.test/jobs", job, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    char q[256];
    snprintf(q, sizeof(q), "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'ap_inbox'",
             eu_it_world_tid(w, "a.test"));
    long long until = eu_it_now_ms() + WAIT_MS;
    while (eu_it_pg_exec_long(w->db, q) > 0 && eu_it_now_ms() < until)
        eu_it_sleep_ms(50);
    ck_assert_int_eq(eu_it_pg_exec_long(w->db, q), 0);
    eu_it_resp_free(&r);
}

/* A vote Create from bob on a.test's status status_id for option name,
 * its Note's content content (NULL: none). */
static void
bob_votes_content(struct world *w, const char *status_id, const char *name, int n,
                  const char *content)
{
    char a[1024], c[128] = "";
    if (content)
        snprintf(c, sizeof(c), " \"content\": \"%s\",", content);
    snprintf(a, sizeof(a),
             "{\"@context\": \"https://www.w3.org/ns/activitystreams\","
             " \"id\": \"http://b.test/users/bob#votes/raw%d/activity\", \"type\": \"Create\","
             " \"actor\": \"http://b.test/users/bob\", \"to\": \"http://a.test/users/alice\","
             " \"object\": {\"id\": \"http://b.test/users/bob#votes/raw%d\", \"type\": \"Note\","
             " \"name\": \"%s\", \"attributedTo\": \"http://b.test/users/bob\",%s"
             " \"inReplyTo\": \"http://a.test/users/alice/statuses/%s\","
             " \"to\": \"http://a.test/users/alice\"}}",
             n, n, name, c, status_id);
    inbox_from_bob(w, a);
}

/* The same with no content, as Mastodon sends a vote. */
static void
bob_votes_raw(struct world *w, const char *status_id, const char *name, int n)
{
    bob_votes_content(w, status_id, name, n, NULL);
}

START_TEST(test_poll_votes_federate)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};

    /* bob follows alice. */
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "bob"), NULL,
                "/api/v2/search?q=%%40alice%%40a.test&resolve=true&type=accounts");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *alice_b = strdup(json_string_value(eu_it_jpath(r.json, "accounts.0.id")));
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow",
                alice_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, is_following, NULL,
                   "bob follows alice", "/api/v1/accounts/relationships?id%%5B%%5D=%s", alice_b);

    /* A multiple-choice poll reaches b with its options and no votes. */
    char *poll_b = NULL;
    char *poll_a = alice_polls(&w, "red", "\"green\", \"blue\"", 3600, true, &poll_b);
    ck_assert_ptr_nonnull(poll_b);
    eu_it_callf(w.s, &r, "b.test", "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/polls/%s", poll_b);
    ck_assert_msg(counts_are(&r, "0 0 0 0 0"), "poll at b: %s", r.body);
    ck_assert(json_is_true(json_object_get(r.json, "multiple")));

    /* bob votes red and blue: his own view at once. */
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob"), "{\"choices\": [0, 2]}",
                "/api/v1/polls/%s/votes", poll_b);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "voted")));
    ck_assert_int_eq(json_integer_value(eu_it_jpath(r.json, "own_votes.1")), 2);
    ck_assert_msg(counts_are(&r, "2 1 1 0 1"), "bob's poll after voting: %s", r.body);
    /* a second vote is refused */
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob"), "{\"choices\": [1]}",
                "/api/v1/polls/%s/votes", poll_b);
    EU_IT_EXPECT_ERROR(&r, 422);

    /* a.test counts bob's two choices as one voter. */
    eu_it_wait_get(w.s, &r, "a.test", eu_it_tok(&w, "alice"), WAIT_MS, counts_are, "2 1 1 0 1",
                   "bob's vote at a", "/api/v1/polls/%s", poll_a);

    /* amy (a.test) votes green: the Update of the Question brings it to b. */
    eu_it_callf(w.s, &r, "a.test", "POST", eu_it_tok(&w, "amy"), "{\"choices\": [1]}",
                "/api/v1/polls/%s/votes", poll_a);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, "b.test", eu_it_tok(&w, "bob"), WAIT_MS, counts_are, "3 2 1 1 1",
                   "the Update's counts at b", "/api/v1/polls/%s", poll_b);
    ck_assert(json_is_true(json_object_get(r.json, "voted")));
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "own_votes")), 2);

    /* The votes are no statuses at a.test: bob has none there. */
    char q[512];
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM statuses s JOIN accounts a ON a.tenant_id = s.tenant_id"
             " AND a.id = s.account_id WHERE s.tenant_id = %s AND a.domain IS NOT NULL",
             eu_it_world_tid(&w, "a.test"));
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);

    /* An expired poll: refused on b. */
    char *old_b = NULL;
    char *old_a = alice_polls(&w, "now", "\"later\"", 1, false, &old_b);
    eu_it_sleep_ms(1500);
    eu_it_callf(w.s, &r, "b.test", "POST", eu_it_tok(&w, "bob"), "{\"choices\": [0]}",
                "/api/v1/polls/%s/votes", old_b);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "ended"));

    /* What a.test's inbox takes, sent as a peer might: a vote on the
     * expired poll, for an unknown option, and a second one on a single
     * choice poll are dropped. */
    snprintf(q, sizeof(q), "SELECT status_id::text FROM polls WHERE tenant_id = %s AND id = %s",
             eu_it_world_tid(&w, "a.test"), old_a);
    char *old_status = eu_it_pg_exec(w.db, q);
    bob_votes_raw(&w, old_status, "now", 1);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/polls/%s", old_a);
    ck_assert_msg(counts_are(&r, "0 -1 0 0"), "expired poll at a: %s", r.body);

    char *one_b = NULL;
    char *one_a = alice_polls(&w, "yes", "\"no\"", 3600, false, &one_b);
    snprintf(q, sizeof(q), "SELECT status_id::text FROM polls WHERE tenant_id = %s AND id = %s",
             eu_it_world_tid(&w, "a.test"), one_a);
    char *one_status = eu_it_pg_exec(w.db, q);
    bob_votes_raw(&w, one_status, "maybe", 2);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/polls/%s", one_a);
    ck_assert_msg(counts_are(&r, "0 -1 0 0"), "unknown option at a: %s", r.body);
    bob_votes_raw(&w, one_status, "yes", 3);
    bob_votes_raw(&w, one_status, "no", 4);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/polls/%s", one_a);
    ck_assert_msg(counts_are(&r, "1 -1 1 0"), "single choice at a: %s", r.body);
    /* and a redelivered vote counts once */
    bob_votes_raw(&w, one_status, "yes", 3);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/polls/%s", one_a);
    ck_assert_msg(counts_are(&r, "1 -1 1 0"), "redelivered vote at a: %s", r.body);

    /* snac2's vote has content ("<br>"): a vote all the same, no reply
     * and no mention of alice. */
    char *snac_b = NULL;
    char *snac_a = alice_polls(&w, "pick", "\"skip\"", 3600, false, &snac_b);
    snprintf(q, sizeof(q), "SELECT status_id::text FROM polls WHERE tenant_id = %s AND id = %s",
             eu_it_world_tid(&w, "a.test"), snac_a);
    char *snac_status = eu_it_pg_exec(w.db, q);
    bob_votes_content(&w, snac_status, "pick", 5, "<br>");
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/polls/%s", snac_a);
    ck_assert_msg(counts_are(&r, "1 -1 1 0"), "a vote with content at a: %s", r.body);
    eu_it_callf(w.s, &r, "a.test", "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/notifications");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(eu_it_find(r.json, "type", "mention"));
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM statuses s JOIN accounts a ON a.tenant_id = s.tenant_id"
             " AND a.id = s.account_id WHERE s.tenant_id = %s AND a.domain IS NOT NULL",
             eu_it_world_tid(&w, "a.test"));
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);

    /* The decoy tenant got nothing. */
    snprintf(q, sizeof(q),
             "SELECT (SELECT count(*) FROM polls WHERE tenant_id = %s)"
             " + (SELECT count(*) FROM poll_votes WHERE tenant_id = %s)"
             " + (SELECT count(*) FROM statuses WHERE tenant_id = %s)",
             eu_it_world_tid(&w, "d.test"), eu_it_world_tid(&w, "d.test"),
             eu_it_world_tid(&w, "d.test"));
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);

    free(snac_status);
    free(snac_a);
    free(snac_b);
    free(one_status);
    free(one_a);
    free(one_b);
    free(old_status);
    free(old_a);
    free(old_b);
    free(poll_a);
    free(poll_b);
    free(alice_b);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_polls");
    EU_IT_ADD_TCASE(s, test_poll_votes_federate, TIMEOUT);
    return eu_it_run_suite(s);
}
