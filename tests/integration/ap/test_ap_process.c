/*
 * Processing received activities (the "ap_inbox" job, src/ap/process*.c)
 * on a real server: each activity is queued through the admin jobs API as
 * the inbox will queue it, and its effects are read back through the REST
 * API over HTTP and from the tables. Remote accounts are rows written by
 * SQL (the inbox resolves them before queueing). A decoy tenant in the same
 * placement database, holding the same usernames and remote rows, sees
 * none of it.
 */
#include "world.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "proc.example"
#define DECOY "decoy.example"
#define BASE "http://" HOST
#define BOB "https://remote.example/users/bob"
#define CAROL "https://remote.example/users/carol"
#define NEWBOB "https://new.example/users/bob"
#define PUBLIC "https://www.w3.org/ns/activitystreams#Public"

/* lena is locked; the decoy has an alice. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice"}, {"lena"}, {"decoy_alice", DECOY, "alice"}},
};

/* The remote accounts bob and carol as the inbox would have stored them
 * (the decoy has a bob too); their ids. */
struct remotes {
    char *bob, *carol;
};

static void
world_start(struct world *w, struct remotes *rem)
{
    eu_it_world_start(w, &world);
    free(eu_it_world_sql(w, "UPDATE accounts SET locked = true WHERE tenant_id = %s AND id = %s",
                         w->tid, eu_it_id(w, "lena")));
    rem->bob = eu_it_remote_account(w->db, w->tid, BOB, true);
    rem->carol = eu_it_remote_account(w->db, w->tid, CAROL, true);
    free(eu_it_remote_account(w->db, w->decoy_tid, BOB, true));
}

static void
world_free(struct world *w, struct remotes *rem)
{
    eu_it_world_free(w);
    free(rem->bob);
    free(rem->carol);
}

/* Waits until job (of tenant host) is done; asserts it did not fail. */
static void
wait_job(struct world *w, const char *host, const char *job)
{
    char *tid = eu_it_tenant_id(w->s, host);
    long long deadline = eu_it_now_ms() + 20000;
    long left = 1;
    while (eu_it_now_ms() < deadline) {
        left = eu_it_pg_execf_long(
            w->db, "SELECT count(*) FROM jobs WHERE tenant_id = %s AND id = %s", tid, job);
        if (left == 0)
            break;
        char q[256];
        snprintf(q, sizeof(q),
                 "SELECT last_error FROM jobs WHERE tenant_id = %s AND id = %s"
                 " AND last_error IS NOT NULL",
                 tid, job);
        char *err = eu_it_pg_exec(w->db, q);
        ck_assert_msg(err == NULL, "job failed: %s", err);
        eu_it_sleep_ms(50);
    }
    ck_assert_msg(left == 0, "job %s not done in 20 s", job);
    free(tid);
}

/* Queues an ap_inbox job for activity (JSON text) from actor on host and
 * waits until it is done; asserts it did not fail. */
static void
process_on(struct world *w, const char *host, const char *actor, const char *activity)
{
    json_error_t e;
    json_t *act = json_loads(activity, 0, &e);
    ck_assert_msg(act != NULL, "fixture: %s: %s", e.text, activity);
    json_t *body = json_pack("{s:s, s:{s:o, s:s, s:n}}", "kind", "ap_inbox", "payload", "activity",
                             act, "actor", actor, "recipient");
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/jobs", host);
    struct eu_it_resp r = {0};
    eu_it_admin(w->s, "POST", path, text, &r);
    free(text);
    EU_IT_EXPECT_STATUS(&r, 201);
    char *job = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    wait_job(w, host, job);
    free(job);
}

static void process(struct world *w, const char *actor, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
process(struct world *w, const char *actor, const char *fmt, ...)
{
    char a[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a, sizeof(a), fmt, ap);
    va_end(ap);
    process_on(w, HOST, actor, a);
}

/* GET path on HOST as tok into r; asserts 200 unless want says otherwise. */
static void get(struct world *w, struct eu_it_resp *r, const char *tok, long want, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

static void
get(struct world *w, struct eu_it_resp *r, const char *tok, long want, const char *fmt, ...)
{
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    eu_it_callf(w->s, r, HOST, "GET", tok, NULL, "%s", path);
    EU_IT_EXPECT_STATUS(r, want);
}

/* Whether the array in r has an element whose key is value. */
static bool
has(const struct eu_it_resp *r, const char *key, const char *value)
{
    size_t i;
    json_t *e;
    json_array_foreach(r->json, i, e)
    {
        const char *v = json_string_value(json_object_get(e, key));
        if (v && strcmp(v, value) == 0)
            return true;
    }
    return false;
}

/* Waits (notifications are written after the job) for a notification of
 * type from account from to the token's owner. */
static void
expect_notification(struct world *w, const char *tok, const char *type, const char *from)
{
    struct eu_it_resp r = {0};
    long long deadline = eu_it_now_ms() + 10000;
    while (eu_it_now_ms() < deadline) {
        get(w, &r, tok, 200, "/api/v1/notifications");
        size_t i;
        json_t *e;
        json_array_foreach(r.json, i, e)
        {
            const char *t = json_string_value(json_object_get(e, "type"));
            const char *a = json_string_value(eu_it_jpath(e, "account.id"));
            if (t && a && strcmp(t, type) == 0 && strcmp(a, from) == 0) {
                eu_it_resp_free(&r);
                return;
            }
        }
        eu_it_sleep_ms(100);
    }
    ck_abort_msg("no %s notification from %s: %s", type, from, r.body);
}

/* The ap_deliver jobs whose payload contains the JSON fragment. */
static long
deliveries(struct world *w, const char *fragment)
{
    return eu_it_pg_execf_long(
        w->db,
        "SELECT count(*) FROM jobs WHERE tenant_id = %s AND kind = 'ap_deliver'"
        " AND payload @> '%s'::jsonb",
        w->tid, fragment);
}

/* ------------------------------------------------------------ follows */

START_TEST(test_follows)
{
    struct world w;
    struct remotes rem;
    world_start(&w, &rem);
    struct eu_it_resp r = {0};

    /* Follow of an unlocked account: a follower, a notification, an Accept
     * naming the Follow. */
    const char *follow = "{\"id\":\"" BOB "#follows/1\",\"type\":\"Follow\",\"actor\":\"" BOB
                         "\",\"object\":\"" BASE "/users/alice\"}";
    process(&w, BOB, "%s", follow);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/%s/followers",
        eu_it_id(&w, "alice"));
    ck_assert_msg(has(&r, "id", rem.bob), "bob is not a follower: %s", r.body);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/%s", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 1);
    expect_notification(&w, eu_it_tok(&w, "alice"), "follow", rem.bob);
    ck_assert_int_eq(deliveries(&w, "{\"inbox\":\"" BOB "/inbox\",\"activity\":{\"type\":"
                                    "\"Accept\",\"actor\":\"" BASE "/users/alice\",\"object\":{"
                                    "\"id\":\"" BOB "#follows/1\",\"type\":\"Follow\"}}}"),
                     1);
    /* Redelivered: nothing changes, and no second Accept while one waits. */
    process(&w, BOB, "%s", follow);
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM follows WHERE tenant_id = %s", w.tid), 1);
    ck_assert_int_eq(deliveries(&w, "{\"activity\":{\"type\":\"Accept\"}}"), 1);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                         " AND type = 'follow'",
                                         w.tid),
                     1);

    /* Undo by the embedded Follow. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#undo/1\",\"type\":\"Undo\",\"actor\":\"" BOB "\",\"object\":%s}",
            follow);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/%s/followers",
        eu_it_id(&w, "alice"));
    ck_assert_msg(!has(&r, "id", rem.bob), "bob still follows: %s", r.body);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/%s", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 0);

    /* A locked account: a request and a notification, no Accept. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#follows/2\",\"type\":\"Follow\",\"actor\":\"" BOB
            "\",\"object\":\"" BASE "/users/lena\"}");
    get(&w, &r, eu_it_tok(&w, "lena"), 200, "/api/v1/follow_requests");
    ck_assert_msg(has(&r, "id", rem.bob), "no request: %s", r.body);
    expect_notification(&w, eu_it_tok(&w, "lena"), "follow_request", rem.bob);
    ck_assert_int_eq(deliveries(&w, "{\"activity\":{\"object\":{\"id\":\"" BOB "#follows/2\"}}}"),
                     0);
    /* Undo naming only the Follow's id withdraws the request. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#undo/2\",\"type\":\"Undo\",\"actor\":\"" BOB "\",\"object\":\"" BOB
            "#follows/2\"}");
    ck_assert_int_eq(eu_it_pg_execf_long(
                         w.db, "SELECT count(*) FROM follow_requests WHERE tenant_id = %s", w.tid),
                     0);

    /* A Follow of someone who blocks the actor is rejected. */
    free(eu_it_pg_execf(
        w.db, "INSERT INTO blocks (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), rem.carol));
    process(&w, CAROL,
            "{\"id\":\"" CAROL "#follows/3\",\"type\":\"Follow\",\"actor\":\"" CAROL
            "\",\"object\":\"" BASE "/users/alice\"}");
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM follows WHERE tenant_id = %s", w.tid), 0);
    ck_assert_int_eq(deliveries(&w, "{\"inbox\":\"" CAROL "/inbox\",\"activity\":{\"type\":"
                                    "\"Reject\"}}"),
                     1);
    free(eu_it_pg_execf(w.db, "DELETE FROM blocks WHERE tenant_id = %s", w.tid));

    /* Our follow request toward bob, accepted by id. */
    free(
        eu_it_pg_execf(w.db,
                       "INSERT INTO follow_requests (tenant_id, account_id, target_account_id, uri)"
                       " VALUES (%s, %s, %s, '" BASE "/users/alice#follows/9')",
                       w.tid, eu_it_id(&w, "alice"), rem.bob));
    process(&w, BOB,
            "{\"id\":\"" BOB "#accepts/9\",\"type\":\"Accept\",\"actor\":\"" BOB
            "\",\"object\":\"" BASE "/users/alice#follows/9\"}");
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/relationships?id[]=%s", rem.bob);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.following")), "not following: %s", r.body);
    ck_assert_msg(json_is_false(eu_it_jpath(r.json, "0.requested")), "still requested: %s", r.body);
    /* Someone else's Accept of it does nothing (carol is not the target). */
    /* Reject of it, with the Follow embedded: the follow goes. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#rejects/9\",\"type\":\"Reject\",\"actor\":\"" BOB
            "\",\"object\":{\"id\":\"" BASE "/users/alice#follows/9\",\"type\":\"Follow\","
            "\"actor\":\"" BASE "/users/alice\",\"object\":\"" BOB "\"}}");
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/relationships?id[]=%s", rem.bob);
    ck_assert_msg(json_is_false(eu_it_jpath(r.json, "0.following")), "following: %s", r.body);

    /* Block: follows both ways end. */
    free(eu_it_pg_execf(
        w.db,
        "INSERT INTO follows (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s),"
        " (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), rem.bob, w.tid, rem.bob, eu_it_id(&w, "alice")));
    process(&w, BOB,
            "{\"id\":\"" BOB "#blocks/1\",\"type\":\"Block\",\"actor\":\"" BOB
            "\",\"object\":\"" BASE "/users/alice\"}");
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM follows WHERE tenant_id = %s", w.tid), 0);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/relationships?id[]=%s", rem.bob);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.blocked_by")), "not blocked: %s", r.body);
    process(&w, BOB,
            "{\"id\":\"" BOB "#undo/3\",\"type\":\"Undo\",\"actor\":\"" BOB
            "\",\"object\":{\"id\":\"" BOB "#blocks/1\",\"type\":\"Block\",\"actor\":\"" BOB
            "\",\"object\":\"" BASE "/users/alice\"}}");
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM blocks WHERE tenant_id = %s", w.tid), 0);

    /* The decoy tenant saw none of it. */
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db,
                            "SELECT (SELECT count(*) FROM follows WHERE tenant_id = %s)"
                            " + (SELECT count(*) FROM notifications WHERE tenant_id = %s)"
                            " + (SELECT count(*) FROM jobs WHERE tenant_id = %s"
                            " AND kind = 'ap_deliver')",
                            w.decoy_tid, w.decoy_tid, w.decoy_tid),
        0);
    eu_it_resp_free(&r);
    world_free(&w, &rem);
}
END_TEST

/* --------------------------------------------------------------- Move */

START_TEST(test_move)
{
    struct world w;
    struct remotes rem;
    world_start(&w, &rem);
    struct eu_it_resp r = {0};
    char *newbob = eu_it_remote_account(w.db, w.tid, NEWBOB, true);
    free(eu_it_pg_execf(
        w.db, "UPDATE accounts SET also_known_as = '{%s}' WHERE tenant_id = %s AND id = %s", BOB,
        w.tid, newbob));
    free(eu_it_pg_execf(
        w.db,
        "INSERT INTO follows (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s),"
        " (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), rem.bob, w.tid, eu_it_id(&w, "lena"), rem.bob));
    /* A move to an account that does not name bob is ignored. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#moves/0\",\"type\":\"Move\",\"actor\":\"" BOB "\",\"object\":\"" BOB
            "\",\"target\":\"" CAROL "\"}");
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM follows WHERE tenant_id = %s", w.tid), 2);

    process(&w, BOB,
            "{\"id\":\"" BOB "#moves/1\",\"type\":\"Move\",\"actor\":\"" BOB "\",\"object\":\"" BOB
            "\",\"target\":\"" NEWBOB "\"}");
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM follows WHERE tenant_id = %s"
                                         " AND target_account_id = %s",
                                         w.tid, rem.bob),
                     0);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/relationships?id[]=%s", newbob);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.requested")), "no request: %s", r.body);
    ck_assert_int_eq(deliveries(&w, "{\"inbox\":\"" NEWBOB "/inbox\",\"activity\":{\"type\":"
                                    "\"Follow\",\"actor\":\"" BASE
                                    "/users/alice\",\"object\":\"" NEWBOB "\"}}"),
                     1);
    ck_assert_int_eq(
        deliveries(&w, "{\"activity\":{\"type\":\"Follow\",\"actor\":\"" BASE "/users/lena\"}}"),
        1);
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db,
                            "SELECT count(*) FROM accounts WHERE tenant_id = %s AND id = %s"
                            " AND moved_to_account_id = %s",
                            w.tid, rem.bob, newbob),
        1);
    /* Redelivered: no second request, no second Follow. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#moves/1\",\"type\":\"Move\",\"actor\":\"" BOB "\",\"object\":\"" BOB
            "\",\"target\":\"" NEWBOB "\"}");
    ck_assert_int_eq(deliveries(&w, "{\"activity\":{\"type\":\"Follow\"}}"), 2);
    /* The new account's Accept of alice's Follow makes it a follow. */
    char q[256];
    snprintf(q, sizeof(q),
             "SELECT uri FROM follow_requests WHERE tenant_id = %s AND account_id = %s"
             " AND target_account_id = %s",
             w.tid, eu_it_id(&w, "alice"), newbob);
    char *uri = eu_it_pg_exec(w.db, q);
    ck_assert_ptr_nonnull(uri);
    process(&w, NEWBOB,
            "{\"id\":\"" NEWBOB "#accepts/1\",\"type\":\"Accept\",\"actor\":\"" NEWBOB
            "\",\"object\":\"%s\"}",
            uri);
    free(uri);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/relationships?id[]=%s", newbob);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.following")), "not following: %s", r.body);
    free(newbob);
    eu_it_resp_free(&r);
    world_free(&w, &rem);
}
END_TEST

/* -------------------------------------------------------------- notes */

#define NOTE_FMT                                                                                   \
    "{\"id\":\"" BOB "/statuses/%s/activity\",\"type\":\"%s\",\"actor\":\"%s\",\"object\":{"       \
    "\"id\":\"" BOB "/statuses/%s\",\"type\":\"Note\",\"attributedTo\":\"%s\","                    \
    "\"published\":\"2026-01-01T00:00:00Z\",\"updated\":\"%s\",\"to\":[\"" PUBLIC "\"],"           \
    "\"cc\":[\"" BOB "/followers\"],\"content\":\"%s\",\"tag\":%s}}"

START_TEST(test_notes)
{
    struct world w;
    struct remotes rem;
    world_start(&w, &rem);
    struct eu_it_resp r = {0};

    /* Nobody here follows bob and it mentions nobody: not stored. */
    process(&w, BOB, NOTE_FMT, "0", "Create", BOB, "0", BOB, "2026-01-01T00:00:00Z", "<p>hi</p>",
            "[]");
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM statuses WHERE tenant_id = %s", w.tid), 0);

    /* Mentioning lena: stored, lena notified. */
    process(&w, BOB, NOTE_FMT, "1", "Create", BOB, "1", BOB, "2026-01-01T00:00:00Z",
            "<p>hey lena</p>",
            "[{\"type\":\"Mention\",\"href\":\"" BASE "/users/lena\",\"name\":\"@lena\"}]");
    expect_notification(&w, eu_it_tok(&w, "lena"), "mention", rem.bob);

    /* alice follows bob: bob's note reaches her home timeline, sanitized. */
    free(eu_it_pg_execf(
        w.db, "INSERT INTO follows (tenant_id, account_id, target_account_id) VALUES (%s, %s, %s)",
        w.tid, eu_it_id(&w, "alice"), rem.bob));
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/timelines/home"); /* builds the feed */
    process(&w, BOB, NOTE_FMT, "2", "Create", BOB, "2", BOB, "2026-01-01T00:00:00Z",
            "<p>hello<script>alert(1)</script></p>", "[]");
    char q[256];
    snprintf(q, sizeof(q),
             "SELECT id FROM statuses WHERE tenant_id = %s AND uri = '" BOB "/statuses/2'", w.tid);
    char *sid = eu_it_pg_exec(w.db, q);
    ck_assert_ptr_nonnull(sid);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/timelines/home");
    ck_assert_msg(has(&r, "id", sid), "not in the home timeline: %s", r.body);
    ck_assert_msg(strstr(r.body, "hello") && !strstr(r.body, "script"), "not sanitized: %s",
                  r.body);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/%s", rem.bob);
    EU_IT_EXPECT_JINT(&r, "statuses_count", 2);

    /* Redelivered: no second status. */
    process(&w, BOB, NOTE_FMT, "2", "Create", BOB, "2", BOB, "2026-01-01T00:00:00Z", "<p>hello</p>",
            "[]");
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM statuses WHERE tenant_id = %s"
                                         " AND account_id = %s",
                                         w.tid, rem.bob),
                     2);

    /* Carol creating a note attributed to bob is ignored; so is her Update
     * and Delete of bob's note. */
    process(&w, CAROL, NOTE_FMT, "3", "Create", CAROL, "3", BOB, "2026-01-01T00:00:00Z",
            "<p>forged</p>", "[]");
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM statuses WHERE tenant_id = %s"
                                         " AND uri = '" BOB "/statuses/3'",
                                         w.tid),
                     0);
    process(&w, CAROL, NOTE_FMT, "2", "Update", CAROL, "2", BOB, "2026-02-01T00:00:00Z",
            "<p>forged</p>", "[]");
    process(&w, CAROL,
            "{\"id\":\"" CAROL "#delete\",\"type\":\"Delete\",\"actor\":\"" CAROL
            "\",\"object\":\"" BOB "/statuses/2\"}");
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/statuses/%s", sid);
    ck_assert_msg(strstr(r.body, "hello") && !strstr(r.body, "forged"), "changed: %s", r.body);

    /* Update by bob: edited, two versions. */
    process(&w, BOB, NOTE_FMT, "2u", "Update", BOB, "2", BOB, "2026-02-01T00:00:00Z",
            "<p>hello again</p>", "[]");
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/statuses/%s", sid);
    ck_assert_msg(json_is_string(json_object_get(r.json, "edited_at")), "not edited: %s", r.body);
    ck_assert_ptr_nonnull(strstr(r.body, "hello again"));
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/statuses/%s/history", sid);
    ck_assert_int_eq(json_array_size(r.json), 2);

    /* Delete by bob: gone from the timeline, 404. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#delete/2\",\"type\":\"Delete\",\"actor\":\"" BOB
            "\",\"object\":{\"id\":\"" BOB "/statuses/2\",\"type\":\"Tombstone\"}}");
    get(&w, &r, eu_it_tok(&w, "alice"), 404, "/api/v1/statuses/%s", sid);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/timelines/home");
    ck_assert_msg(!has(&r, "id", sid), "still in the home timeline: %s", r.body);
    free(sid);

    /* Person Update renames bob. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#updates/1\",\"type\":\"Update\",\"actor\":\"" BOB
            "\",\"object\":{\"id\":\"" BOB "\",\"type\":\"Person\",\"preferredUsername\":"
            "\"bob\",\"name\":\"Robert <b>B</b>\",\"inbox\":\"" BOB "/inbox\",\"followers\":\"" BOB
            "/followers\"}}");
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/accounts/%s", rem.bob);
    EU_IT_EXPECT_JSTR(&r, "display_name", "Robert <b>B</b>");

    /* Bob deletes himself: suspended, his follower gone. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#delete\",\"type\":\"Delete\",\"actor\":\"" BOB "\",\"object\":\"" BOB
            "\"}");
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db,
                            "SELECT count(*) FROM accounts WHERE tenant_id = %s AND id = %s"
                            " AND suspended_at IS NOT NULL",
                            w.tid, rem.bob),
        1);
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM follows WHERE tenant_id = %s", w.tid), 0);

    ck_assert_int_eq(eu_it_pg_execf_long(w.db, "SELECT count(*) FROM statuses WHERE tenant_id = %s",
                                         w.decoy_tid),
                     0);
    eu_it_resp_free(&r);
    world_free(&w, &rem);
}
END_TEST

/* ------------------------------------------------------- interactions */

START_TEST(test_interactions)
{
    struct world w;
    struct remotes rem;
    world_start(&w, &rem);
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), "{\"status\":\"mine\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *sid = strdup(eu_it_json_str(&r, "id"));
    char like[512], announce[512];
    snprintf(like, sizeof(like),
             "{\"id\":\"" BOB "#likes/1\",\"type\":\"Like\",\"actor\":\"" BOB
             "\",\"object\":\"" BASE "/users/alice/statuses/%s\"}",
             sid);
    snprintf(announce, sizeof(announce),
             "{\"id\":\"" BOB "/statuses/9/activity\",\"type\":\"Announce\",\"actor\":\"" BOB
             "\",\"object\":\"" BASE "/users/alice/statuses/%s\",\"to\":[\"" PUBLIC "\"]}",
             sid);

    process(&w, BOB, "%s", like);
    process(&w, BOB, "%s", like);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_JINT(&r, "favourites_count", 1);
    expect_notification(&w, eu_it_tok(&w, "alice"), "favourite", rem.bob);

    process(&w, BOB, "%s", announce);
    process(&w, BOB, "%s", announce);
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_JINT(&r, "reblogs_count", 1);
    expect_notification(&w, eu_it_tok(&w, "alice"), "reblog", rem.bob);

    /* Undo by embedded Like, Undo by the Announce's id. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#undo/l\",\"type\":\"Undo\",\"actor\":\"" BOB "\",\"object\":%s}",
            like);
    process(&w, BOB,
            "{\"id\":\"" BOB "#undo/a\",\"type\":\"Undo\",\"actor\":\"" BOB "\",\"object\":\"" BOB
            "/statuses/9/activity\"}");
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_JINT(&r, "favourites_count", 0);
    EU_IT_EXPECT_JINT(&r, "reblogs_count", 0);

    /* Someone else's Undo of bob's Like does nothing. */
    process(&w, BOB, "%s", like);
    process(&w, CAROL,
            "{\"id\":\"" CAROL "#undo/l\",\"type\":\"Undo\",\"actor\":\"" CAROL
            "\",\"object\":\"" BOB "#likes/1\"}");
    get(&w, &r, eu_it_tok(&w, "alice"), 200, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_JINT(&r, "favourites_count", 1);

    /* Flag: a report on alice naming her status. */
    process(&w, BOB,
            "{\"id\":\"" BOB "#flags/1\",\"type\":\"Flag\",\"actor\":\"" BOB
            "\",\"content\":\"spam\",\"object\":[\"" BASE "/users/alice\",\"" BASE
            "/users/alice/statuses/%s\"]}",
            sid);
    process(&w, BOB,
            "{\"id\":\"" BOB "#flags/1\",\"type\":\"Flag\",\"actor\":\"" BOB
            "\",\"content\":\"spam\",\"object\":[\"" BASE "/users/alice\"]}");
    ck_assert_int_eq(eu_it_pg_execf_long(
                         w.db,
                         "SELECT count(*) FROM reports WHERE tenant_id = %s AND account_id = %s"
                         " AND target_account_id = %s AND status_ids = '{%s}' AND comment = 'spam'",
                         w.tid, rem.bob, eu_it_id(&w, "alice"), sid),
                     1);

    eu_it_admin(w.s, "GET", "/admin/v1/tenants/" HOST "/reports", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.comment", "spam");
    EU_IT_EXPECT_JSTR(&r, "0.target_account.id", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JSTR(&r, "0.account.acct", "bob@remote.example");
    EU_IT_EXPECT_JSTR(&r, "0.status_ids.0", sid);
    eu_it_admin(w.s, "GET", "/admin/v1/tenants/" DECOY "/reports", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* Add/Remove: bob pins and unpins his own note. */
    free(eu_it_pg_execf(w.db,
                        "INSERT INTO statuses (tenant_id, account_id, uri, local, content) VALUES"
                        " (%s, %s, '" BOB "/statuses/5', false, 'x')",
                        w.tid, rem.bob));
    process(&w, BOB,
            "{\"id\":\"" BOB "#add/1\",\"type\":\"Add\",\"actor\":\"" BOB "\",\"object\":\"" BOB
            "/statuses/5\",\"target\":\"" BOB "/collections/featured\"}");
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM status_pins WHERE tenant_id = %s", w.tid),
        1);
    process(&w, BOB,
            "{\"id\":\"" BOB "#remove/1\",\"type\":\"Remove\",\"actor\":\"" BOB
            "\",\"object\":\"" BOB "/statuses/5\",\"target\":\"" BOB "/collections/featured\"}");
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM status_pins WHERE tenant_id = %s", w.tid),
        0);

    /* Unknown types and a claimed actor that is not the signer change
     * nothing and end the job. */
    process(&w, BOB, "{\"id\":\"" BOB "#x\",\"type\":\"Wave\",\"actor\":\"" BOB "\"}");
    process(&w, CAROL, "%s", like);

    /* None of it in the decoy tenant. */
    eu_it_callf(w.s, &r, DECOY, "GET", eu_it_tok(&w, "decoy_alice"), NULL, "/api/v1/notifications");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    ck_assert_int_eq(
        eu_it_pg_execf_long(w.db,
                            "SELECT (SELECT count(*) FROM favourites WHERE tenant_id = %s)"
                            " + (SELECT count(*) FROM reports WHERE tenant_id = %s)",
                            w.decoy_tid, w.decoy_tid),
        0);
    free(sid);
    eu_it_resp_free(&r);
    world_free(&w, &rem);
}
END_TEST

/* --------------------------------------------------------- bounded work */

START_TEST(test_bounded)
{
    struct world w;
    struct remotes rem;
    world_start(&w, &rem);
    /* 10,000 mentions of lena and 3,000 hashtags (what fits in the 1 MiB
     * body the admin API takes): cut by the parser's caps, stored once,
     * one notification. */
    size_t cap = 2u * 1024 * 1024, n = 0;
    char *tags = malloc(cap);
    n += (size_t)snprintf(tags + n, cap - n, "[");
    for (int i = 0; i < 10000; i++)
        n += (size_t)snprintf(tags + n, cap - n,
                              "%s{\"type\":\"Mention\",\"href\":\"" BASE "/users/lena\"}",
                              i ? "," : "");
    for (int i = 0; i < 3000; i++)
        n += (size_t)snprintf(tags + n, cap - n, ",{\"type\":\"Hashtag\",\"name\":\"#t%d\"}", i);
    n += (size_t)snprintf(tags + n, cap - n, "]");
    size_t alen = n + 1024;
    char *act = malloc(alen);
    snprintf(act, alen, NOTE_FMT, "7", "Create", BOB, "7", BOB, "2026-01-01T00:00:00Z",
             "<p>many</p>", tags);
    /* Too big for the admin API's body caps: written as the inbox writes
     * it, then the worker is woken by a ping. */
    json_error_t e;
    json_t *activity = json_loads(act, 0, &e);
    ck_assert_msg(activity != NULL, "%s", e.text);
    json_t *payload = json_pack("{s:o, s:s, s:n}", "activity", activity, "actor", BOB, "recipient");
    char *text = json_dumps(payload, JSON_COMPACT);
    json_decref(payload);
    PGconn *pg = eu_it_pg_connect(w.db);
    const char *params[] = {w.tid, text};
    PGresult *res = PQexecParams(pg,
                                 "INSERT INTO jobs (tenant_id, kind, payload) VALUES"
                                 " ($1::bigint, 'ap_inbox', $2::jsonb) RETURNING id::text",
                                 2, NULL, params, NULL, NULL, 0);
    ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
    char *job = strdup(PQgetvalue(res, 0, 0));
    PQclear(res);
    PQfinish(pg);
    free(text);
    struct eu_it_resp r = {0};
    eu_it_admin(w.s, "POST", "/admin/v1/tenants/" HOST "/jobs", "{\"kind\":\"ping\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    eu_it_resp_free(&r);
    wait_job(&w, HOST, job);
    free(job);
    free(act);
    free(tags);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM statuses WHERE tenant_id = %s"
                                         " AND account_id = %s",
                                         w.tid, rem.bob),
                     1);
    ck_assert_int_le(
        eu_it_pg_execf_long(w.db, "SELECT count(*) FROM statuses_tags WHERE tenant_id = %s", w.tid),
        64);
    expect_notification(&w, eu_it_tok(&w, "lena"), "mention", rem.bob);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM notifications WHERE tenant_id = %s"
                                         " AND type = 'mention'",
                                         w.tid),
                     1);
    world_free(&w, &rem);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_process");
    EU_IT_ADD_TCASE(s, test_follows, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_move, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_notes, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_interactions, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_bounded, TIMEOUT);
    return eu_it_run_suite(s);
}
