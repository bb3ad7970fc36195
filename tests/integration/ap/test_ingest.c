/*
 * Storing remote actors and statuses (src/ap/ingest_store.c) against a real
 * placement database: a server creates the tenants and the schema, and the
 * test runs the ingest functions itself on tenant-bound pools over the same
 * placement, as the inbox job will. Checks the rows, the visibility, the
 * mentions and tags, a reply that arrives before its parent, a reply to a
 * local status, edits and deletes, the counters, and that a decoy tenant in
 * the same database gets nothing.
 */
#include "harness.h"

#include <check.h>
#include <event2/event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apingest.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/error.h"

#define TIMEOUT 120

static struct event_base *base;

struct wait {
    bool done;
    struct eu_db_conn *conn;
    int status;
    char id[32];
    bool has_id;
};

static void
on_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct wait *w = arg;
    w->conn = conn;
    w->status = st;
    w->done = true;
}

static void
on_stored(const char *id, int status, void *arg)
{
    struct wait *w = arg;
    w->status = status;
    w->has_id = id != NULL;
    snprintf(w->id, sizeof(w->id), "%s", id ? id : "");
    w->done = true;
}

static void
wait_for(struct wait *w)
{
    long long deadline = eu_it_now_ms() + 20000;
    while (!w->done && eu_it_now_ms() < deadline)
        event_base_loop(base, EVLOOP_ONCE);
    ck_assert_msg(w->done, "no answer within 20 s");
}

static struct eu_db_conn *
acquire(struct eu_db_pool *pool)
{
    struct wait w = {0};
    eu_db_pool_acquire(pool, on_conn, &w);
    wait_for(&w);
    ck_assert_int_eq(w.status, EU_DB_OK);
    return w.conn;
}

static json_t *
doc(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "fixture: %s", e.text);
    return j;
}

/* Parses and upserts an actor; returns its account id (caller frees). */
static char *
store_actor(struct eu_db_pool *pool, const char *json)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j = doc(json);
    struct eu_ap_actor ac;
    struct eu_error err = {0};
    ck_assert_msg(eu_ap_actor_parse(a, j, "remote.example", NULL, &ac, &err) == 0, "%s",
                  err.message);
    struct eu_db_conn *conn = acquire(pool);
    struct wait w = {0};
    eu_ingest_account_upsert(conn, &ac, on_stored, &w);
    wait_for(&w);
    eu_db_conn_release(conn);
    ck_assert_int_eq(w.status, EU_DB_OK);
    ck_assert(w.has_id);
    json_decref(j);
    eu_arena_free(a);
    return strdup(w.id);
}

/* Parses and stores a note by account_id; returns the status id or NULL
 * when nothing was stored (caller frees). */
static char *
store_note(struct eu_db_pool *pool, const char *account_id, const char *json)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j = doc(json);
    struct eu_ap_note n;
    struct eu_error err = {0};
    ck_assert_msg(eu_ap_note_parse(a, j, "remote.example",
                                   "https://remote.example/users/rob/"
                                   "followers",
                                   NULL, &n, &err) == 0,
                  "%s", err.message);
    struct eu_db_conn *conn = acquire(pool);
    struct wait w = {0};
    eu_ingest_status_store(conn, &n, account_id, "https://a.example", on_stored, &w);
    wait_for(&w);
    eu_db_conn_release(conn);
    ck_assert_int_eq(w.status, EU_DB_OK);
    json_decref(j);
    eu_arena_free(a);
    return w.has_id ? strdup(w.id) : NULL;
}

static bool
delete_note(struct eu_db_pool *pool, const char *uri, const char *actor)
{
    struct eu_db_conn *conn = acquire(pool);
    struct wait w = {0};
    eu_ingest_status_delete(conn, uri, actor, on_stored, &w);
    wait_for(&w);
    eu_db_conn_release(conn);
    ck_assert_int_eq(w.status, EU_DB_OK);
    return w.has_id;
}

static const char actor_json[] =
    "{\"id\":\"https://remote.example/users/rob\",\"type\":\"Person\","
    "\"preferredUsername\":\"rob\",\"name\":\"%s\",\"summary\":\"<p>bio<script>x</script></p>\","
    "\"inbox\":\"https://remote.example/users/rob/inbox\","
    "\"outbox\":\"https://remote.example/users/rob/outbox\","
    "\"followers\":\"https://remote.example/users/rob/followers\","
    "\"following\":\"https://remote.example/users/rob/following\","
    "\"featured\":\"https://remote.example/users/rob/collections/featured\","
    "\"endpoints\":{\"sharedInbox\":\"https://remote.example/inbox\"},"
    "\"url\":\"https://remote.example/@rob\",\"manuallyApprovesFollowers\":true,"
    "\"icon\":{\"url\":\"https://remote.example/a.png\"},"
    "\"alsoKnownAs\":[\"https://old.example/users/rob\"],"
    "\"attachment\":[{\"type\":\"PropertyValue\",\"name\":\"web\","
    "\"value\":\"<a href=\\\"https://rob.example\\\">rob.example</a>\"}],"
    "\"publicKey\":{\"id\":\"https://remote.example/users/rob#main-key\","
    "\"owner\":\"https://remote.example/users/rob\","
    "\"publicKeyPem\":\"-----BEGIN PUBLIC KEY-----\\nAAAA\\n-----END PUBLIC KEY-----\"}}";

/* A note of rob's: N its number, TO and CC JSON, EXTRA more members. */
static char *
note_json(int n, const char *to, const char *cc, const char *extra)
{
    char *s;
    if (asprintf(
            &s,
            "{\"id\":\"https://remote.example/users/rob/statuses/%d\",\"type\":\"Note\","
            "\"attributedTo\":\"https://remote.example/users/rob\",\"to\":%s,\"cc\":%s,"
            "\"published\":\"2024-01-0%dT10:00:00Z\",\"url\":\"https://remote.example/@rob/%d\","
            "\"content\":\"<p>note %d</p>\"%s%s}",
            n, to, cc, n % 9 + 1, n, n, extra ? "," : "", extra ? extra : "") < 0)
        abort();
    return s;
}

#define PUBLIC "[\"https://www.w3.org/ns/activitystreams#Public\"]"
#define FOLLOWERS "[\"https://remote.example/users/rob/followers\"]"

static char *q(const char *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *
q(const char *db, const char *fmt, ...)
{
    char *sql;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&sql, fmt, ap) < 0)
        abort();
    va_end(ap);
    char *v = eu_it_pg_exec(db, sql);
    free(sql);
    return v ? v : strdup("(null)");
}

#define EXPECT_Q(db, want, ...)                                                                    \
    do {                                                                                           \
        char *v_ = q(db, __VA_ARGS__);                                                             \
        ck_assert_msg(strcmp(v_, (want)) == 0, "%s: got '%s', want '%s'", #__VA_ARGS__, v_,        \
                      (want));                                                                     \
        free(v_);                                                                                  \
    } while (0)

START_TEST(test_store_remote_actor_and_notes)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    json_decref(eu_it_tenant_create(s, "decoy.example", "Decoy"));
    free(eu_it_account_seed(s, "a.example", "carol"));
    free(eu_it_account_seed(s, "decoy.example", "carol"));
    char *tid = eu_it_tenant_id(s, "a.example"), *decoy = eu_it_tenant_id(s, "decoy.example");
    char *db = eu_it_tenant_database(s, "a.example");
    char *db2 = eu_it_tenant_database(s, "decoy.example");
    ck_assert_str_eq(db, db2);
    char *carol = eu_it_account_id(s, "a.example", "carol");

    base = event_base_new();
    struct eu_db_pool_limits lim = {.max_connections = 2, .acquire_timeout_s = 10};
    char *url = eu_it_pg_url(db);
    struct eu_db_pool *placement = eu_db_pool_new(base, "it", url, NULL, &lim);
    struct eu_db_pool *pool = eu_db_pool_new_child(placement, "a.example", &lim);
    eu_db_pool_set_tenant(pool, strtoll(tid, NULL, 10));

    /* The actor: every address, the sanitized bio, fields, flags. */
    char *actor;
    if (asprintf(&actor, actor_json, "Rob") < 0)
        abort();
    char *rob = store_actor(pool, actor);
    EXPECT_Q(db,
             "rob|remote.example|Rob|<p>bio</p>|https://remote.example/users/rob/inbox|"
             "https://remote.example/inbox|https://remote.example/users/rob/collections/featured|"
             "t|f|https://remote.example/a.png|{https://old.example/users/rob}|"
             "https://remote.example/users/rob#main-key|web",
             "SELECT concat_ws('|', username, domain, display_name, note, inbox_url,"
             " shared_inbox_url, featured_url, locked, bot, avatar_url, also_known_as,"
             " public_key_id, fields->0->>'name') FROM accounts WHERE tenant_id = %s AND id = %s",
             tid, rob);
    EXPECT_Q(db, "t",
             "SELECT last_fetched_at IS NOT NULL FROM accounts WHERE tenant_id = %s AND id = %s",
             tid, rob);
    /* Again, renamed: the same row. */
    free(actor);
    if (asprintf(&actor, actor_json, "Robert") < 0)
        abort();
    char *rob2 = store_actor(pool, actor);
    ck_assert_str_eq(rob, rob2);
    EXPECT_Q(db, "Robert", "SELECT display_name FROM accounts WHERE tenant_id = %s AND id = %s",
             tid, rob);

    /* A public note mentioning carol, with a hashtag. */
    char *n1 =
        note_json(1, PUBLIC, FOLLOWERS,
                  "\"tag\":[{\"type\":\"Mention\",\"href\":\"https://a.example/users/carol\"},"
                  "{\"type\":\"Hashtag\",\"name\":\"#Cats\"}]");
    char *s1 = store_note(pool, rob, n1);
    ck_assert_ptr_nonnull(s1);
    EXPECT_Q(
        db, "f|0|<p>note 1</p>|https://remote.example/@rob/1|2024-01-02 10:00:00+00",
        "SELECT concat_ws('|', local, visibility, content, url,"
        " created_at AT TIME ZONE 'UTC' || '+00') FROM statuses WHERE tenant_id = %s AND id = %s",
        tid, s1);
    EXPECT_Q(db, carol, "SELECT account_id FROM mentions WHERE tenant_id = %s AND status_id = %s",
             tid, s1);
    EXPECT_Q(db, "Cats",
             "SELECT t.name FROM statuses_tags st JOIN tags t ON t.tenant_id = st.tenant_id"
             " AND t.id = st.tag_id WHERE st.tenant_id = %s AND st.status_id = %s",
             tid, s1);
    /* The same Create delivered twice changes nothing. */
    ck_assert_ptr_null(store_note(pool, rob, n1));

    /* Visibility as Mastodon derives it. */
    char *n2 = note_json(2, FOLLOWERS, PUBLIC, NULL), *n3 = note_json(3, FOLLOWERS, "[]", NULL);
    char *n4 = note_json(4, "[\"https://a.example/users/carol\"]", "[]", NULL);
    char *s2 = store_note(pool, rob, n2), *s3 = store_note(pool, rob, n3);
    char *s4 = store_note(pool, rob, n4);
    EXPECT_Q(db, "1", "SELECT visibility FROM statuses WHERE tenant_id = %s AND id = %s", tid, s2);
    EXPECT_Q(db, "2", "SELECT visibility FROM statuses WHERE tenant_id = %s AND id = %s", tid, s3);
    EXPECT_Q(db, "3", "SELECT visibility FROM statuses WHERE tenant_id = %s AND id = %s", tid, s4);
    EXPECT_Q(db, "4", "SELECT statuses_count FROM accounts WHERE tenant_id = %s AND id = %s", tid,
             rob);

    /* A reply before its parent: linked and counted when the parent comes. */
    char *n6 =
        note_json(6, PUBLIC, "[]", "\"inReplyTo\":\"https://remote.example/users/rob/statuses/5\"");
    char *s6 = store_note(pool, rob, n6);
    EXPECT_Q(db, "(null)|https://remote.example/users/rob/statuses/5",
             "SELECT concat_ws('|', coalesce(in_reply_to_id::text, '(null)'), in_reply_to_uri)"
             " FROM statuses WHERE tenant_id = %s AND id = %s",
             tid, s6);
    char *n5 = note_json(5, PUBLIC, "[]", NULL);
    char *s5 = store_note(pool, rob, n5);
    EXPECT_Q(db, s5, "SELECT in_reply_to_id FROM statuses WHERE tenant_id = %s AND id = %s", tid,
             s6);
    EXPECT_Q(db, "1", "SELECT replies_count FROM statuses WHERE tenant_id = %s AND id = %s", tid,
             s5);

    /* A reply to carol's local status, by its URL. */
    char *local = q(db,
                    "INSERT INTO statuses (tenant_id, account_id, text, content) VALUES"
                    " (%s, %s, 'hi', '<p>hi</p>') RETURNING id",
                    tid, carol);
    char *extra;
    if (asprintf(&extra, "\"inReplyTo\":\"https://a.example/users/carol/statuses/%s\"", local) < 0)
        abort();
    char *n7 = note_json(7, PUBLIC, "[]", extra);
    char *s7 = store_note(pool, rob, n7);
    EXPECT_Q(db, local, "SELECT in_reply_to_id FROM statuses WHERE tenant_id = %s AND id = %s", tid,
             s7);
    EXPECT_Q(db, carol,
             "SELECT in_reply_to_account_id FROM statuses WHERE tenant_id = %s AND id = %s", tid,
             s7);
    EXPECT_Q(db, "1", "SELECT replies_count FROM statuses WHERE tenant_id = %s AND id = %s", tid,
             local);
    /* Remote statuses do not count as the instance's. */
    EXPECT_Q(db, "1", "SELECT sum(n) FROM instance_status_counts WHERE tenant_id = %s", tid);

    /* An edit: newer updated, new content; the old version is kept. A stale
     * one is ignored. */
    char *e1 = note_json(1, PUBLIC, "[]",
                         "\"updated\":\"2024-01-03T10:00:00Z\",\"content\":\"<p>edited</p>\","
                         "\"tag\":{\"type\":\"Hashtag\",\"name\":\"#dogs\"}");
    char *s1e = store_note(pool, rob, e1);
    ck_assert_ptr_nonnull(s1e);
    ck_assert_str_eq(s1e, s1);
    EXPECT_Q(db, "<p>edited</p>|t",
             "SELECT concat_ws('|', content, edited_at IS NOT NULL) FROM statuses"
             " WHERE tenant_id = %s AND id = %s",
             tid, s1);
    EXPECT_Q(db, "2", "SELECT count(*) FROM status_edits WHERE tenant_id = %s AND status_id = %s",
             tid, s1);
    EXPECT_Q(db, "dogs",
             "SELECT string_agg(t.name, ',') FROM statuses_tags st JOIN tags t"
             " ON t.tenant_id = st.tenant_id AND t.id = st.tag_id"
             " WHERE st.tenant_id = %s AND st.status_id = %s",
             tid, s1);
    char *stale = note_json(1, PUBLIC, "[]",
                            "\"updated\":\"2024-01-02T11:00:00Z\",\"content\":\"<p>old</p>\"");
    ck_assert_ptr_null(store_note(pool, rob, stale));

    /* Deletes: only by the author; the counters follow. */
    ck_assert(!delete_note(pool, "https://remote.example/users/rob/statuses/1",
                           "https://remote.example/users/mallory"));
    ck_assert(delete_note(pool, "https://remote.example/users/rob/statuses/1",
                          "https://remote.example/users/rob"));
    ck_assert(!delete_note(pool, "https://remote.example/users/rob/statuses/1",
                           "https://remote.example/users/rob"));
    EXPECT_Q(db, "t",
             "SELECT deleted_at IS NOT NULL FROM statuses WHERE tenant_id = %s AND id = %s", tid,
             s1);
    EXPECT_Q(db, "6", "SELECT statuses_count FROM accounts WHERE tenant_id = %s AND id = %s", tid,
             rob);
    ck_assert(delete_note(pool, "https://remote.example/users/rob/statuses/7",
                          "https://remote.example/users/rob"));
    EXPECT_Q(db, "0", "SELECT replies_count FROM statuses WHERE tenant_id = %s AND id = %s", tid,
             local);

    /* The decoy tenant in the same database got nothing. */
    EXPECT_Q(db, "0", "SELECT count(*) FROM accounts WHERE tenant_id = %s AND domain IS NOT NULL",
             decoy);
    EXPECT_Q(db, "0", "SELECT count(*) FROM statuses WHERE tenant_id = %s", decoy);
    EXPECT_Q(db, "0", "SELECT count(*) FROM mentions WHERE tenant_id = %s", decoy);
    EXPECT_Q(db, "0", "SELECT count(*) FROM tags WHERE tenant_id = %s", decoy);

    eu_db_pool_free(pool);
    eu_db_pool_free(placement);
    for (int i = 0; i < 50; i++)
        event_base_loop(base, EVLOOP_NONBLOCK);
    event_base_free(base);
    free(url);
    free(actor), free(rob), free(rob2), free(extra), free(local);
    free(n1), free(n2), free(n3), free(n4), free(n5), free(n6), free(n7), free(e1), free(stale);
    free(s1), free(s1e), free(s2), free(s3), free(s4), free(s5), free(s6), free(s7);
    free(carol), free(tid), free(decoy), free(db), free(db2);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* A Note's attachments: rows with remote_url (not cached), at most 4 as
 * Mastodon keeps, rendered with the remote URL, replaced by an Update whose
 * history still shows the old ones; the decoy tenant sees none. */
#define ATT(n, desc)                                                                               \
    "{\"type\":\"Document\",\"mediaType\":\"image/png\",\"url\":\"https://remote.example/f/" #n    \
    ".png\",\"name\":\"" desc "\",\"blurhash\":\"UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH\","          \
    "\"focalPoint\":[0.5,-0.5],\"width\":800,\"height\":600}"

START_TEST(test_note_attachments)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, "a.example", "A"));
    json_decref(eu_it_tenant_create(s, "decoy.example", "Decoy"));
    char *tid = eu_it_tenant_id(s, "a.example"), *decoy = eu_it_tenant_id(s, "decoy.example");
    char *db = eu_it_tenant_database(s, "a.example");
    base = event_base_new();
    struct eu_db_pool_limits lim = {.max_connections = 2, .acquire_timeout_s = 10};
    char *url = eu_it_pg_url(db);
    struct eu_db_pool *placement = eu_db_pool_new(base, "it", url, NULL, &lim);
    struct eu_db_pool *pool = eu_db_pool_new_child(placement, "a.example", &lim);
    eu_db_pool_set_tenant(pool, strtoll(tid, NULL, 10));
    char *actor;
    if (asprintf(&actor, actor_json, "Rob") < 0)
        abort();
    char *rob = store_actor(pool, actor);

    char *n1 = note_json(1, PUBLIC, FOLLOWERS,
                         "\"attachment\":[" ATT(1, "one") "," ATT(2, "two") "," ATT(
                             3, "three") "," ATT(4, "four") "," ATT(5, "five") "]");
    char *s1 = store_note(pool, rob, n1);
    ck_assert_ptr_nonnull(s1);
    EXPECT_Q(db, "4", "SELECT count(*) FROM media_attachments WHERE tenant_id = %s", tid);
    struct eu_it_resp r = {0};
    eu_it_callf(s, &r, "a.example", "GET", NULL, NULL, "/api/v1/statuses/%s", s1);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 4);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.type", "image");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.url", "https://remote.example/f/1.png");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.remote_url", "https://remote.example/f/1.png");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.description", "one");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.3.description", "four");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.blurhash", "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH");
    EU_IT_EXPECT_JINT(&r, "media_attachments.0.meta.original.width", 800);
    ck_assert(json_real_value(eu_it_jpath(r.json, "media_attachments.0.meta.focus.y")) == -0.5);

    /* An Update with other attachments replaces them. */
    char *e1 = note_json(1, PUBLIC, FOLLOWERS,
                         "\"updated\":\"2024-01-03T10:00:00Z\","
                         "\"attachment\":[" ATT(9, "nine") "]");
    char *s1e = store_note(pool, rob, e1);
    ck_assert_ptr_nonnull(s1e);
    eu_it_callf(s, &r, "a.example", "GET", NULL, NULL, "/api/v1/statuses/%s", s1);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 1);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.url", "https://remote.example/f/9.png");
    eu_it_callf(s, &r, "a.example", "GET", NULL, NULL, "/api/v1/statuses/%s/history", s1);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.media_attachments")), 4);
    EU_IT_EXPECT_JSTR(&r, "1.media_attachments.0.description", "nine");
    /* Deleted: its rows go (no files of ours). */
    ck_assert(delete_note(pool, "https://remote.example/users/rob/statuses/1",
                          "https://remote.example/users/rob"));
    EXPECT_Q(db, "0", "SELECT count(*) FROM media_attachments WHERE tenant_id = %s", tid);
    EXPECT_Q(db, "0", "SELECT count(*) FROM media_attachments WHERE tenant_id = %s", decoy);

    eu_it_resp_free(&r);
    eu_db_pool_free(pool);
    eu_db_pool_free(placement);
    for (int i = 0; i < 50; i++)
        event_base_loop(base, EVLOOP_NONBLOCK);
    event_base_free(base);
    free(url), free(actor), free(rob), free(n1), free(s1), free(e1), free(s1e);
    free(tid), free(decoy), free(db);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *suite = suite_create("ingest");
    EU_IT_ADD_TCASE(suite, test_store_remote_actor_and_notes, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_note_attachments, TIMEOUT);
    return eu_it_run_suite(suite);
}
