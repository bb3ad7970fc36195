/*
 * Every object the fediverse sends, and what a local status offers beside
 * its Note (issue 32, item 5), on a real server:
 *
 * - a PeerTube Video, a Pixelfed Image, a Funkwhale Audio, a Mobilizon
 *   Event, an Article with nameMap, a Page and a Question, each queued as
 *   the inbox queues a Create, become statuses whose Status entity shows
 *   the title, the summary and the link as Mastodon converts them, with
 *   the media a client plays;
 * - a local status's replies, likes and shares collections, under the
 *   rules of its Note's GET (a private one is 404, a decoy tenant's ids
 *   are 404 here);
 * - Undo of the Accept of our follow makes it a request again;
 * - followers synchronization (FEP-8fcf): a followers-only post reaches a
 *   server's shared inbox with the digest of the followers there (a public
 *   one without), and the partial collection lists, to a signed GET only,
 *   the followers on the signer's server.
 *
 * A decoy tenant in the same placement holds the same remote account and
 * a follow like ours; its rows never change.
 */
#include "world.h"

#include <check.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ap_peer.h"
#include "eunha/httpsig.h"

#define TIMEOUT 120
#define HOST "obj.example"
#define DECOY "decoy.example"
#define BASE "http://" HOST
#define AS_JSON "application/activity+json"
#define PUBLIC "https://www.w3.org/ns/activitystreams#Public"
#define BOB "https://remote.example/users/bob"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice"}, {"decoy_alice", DECOY, "alice"}},
};

struct fixture {
    struct world w;
    char *bob, *decoy_bob;
};

static void
start(struct fixture *f)
{
    eu_it_world_start(&f->w, &world);
    f->bob = eu_it_remote_account(f->w.db, f->w.tid, BOB, true);
    f->decoy_bob = eu_it_remote_account(f->w.db, f->w.decoy_tid, BOB, true);
}

static void
stop(struct fixture *f)
{
    eu_it_world_free(&f->w);
    free(f->bob);
    free(f->decoy_bob);
}

/* Waits until job of the tenant is done; asserts it did not fail. */
static void
wait_job(struct world *w, const char *job)
{
    long long deadline = eu_it_now_ms() + 20000;
    long left = 1;
    while (eu_it_now_ms() < deadline) {
        left = eu_it_pg_execf_long(
            w->db, "SELECT count(*) FROM jobs WHERE tenant_id = %s AND id = %s", w->tid, job);
        if (left == 0)
            break;
        char *err = eu_it_pg_execf(w->db,
                                   "SELECT last_error FROM jobs WHERE tenant_id = %s AND id = %s"
                                   " AND last_error IS NOT NULL",
                                   w->tid, job);
        ck_assert_msg(err == NULL, "job failed: %s", err);
        eu_it_sleep_ms(50);
    }
    ck_assert_msg(left == 0, "job %s not done in 20 s", job);
}

/* Queues an ap_inbox job for the activity (JSON text) from actor, as the
 * inbox queues a verified delivery, and waits until it is done. */
static void process(struct world *w, const char *actor, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
process(struct world *w, const char *actor, const char *fmt, ...)
{
    char text[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    json_error_t e;
    json_t *act = json_loads(text, 0, &e);
    ck_assert_msg(act != NULL, "fixture: %s: %s", e.text, text);
    json_t *body = json_pack("{s:s, s:{s:o, s:s, s:n}}", "kind", "ap_inbox", "payload", "activity",
                             act, "actor", actor, "recipient");
    char *json = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct eu_it_resp r = {0};
    eu_it_admin(w->s, "POST", "/admin/v1/tenants/" HOST "/jobs", json, &r);
    free(json);
    EU_IT_EXPECT_STATUS(&r, 201);
    char *job = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    wait_job(w, job);
    free(job);
}

/* Creates object (JSON text, its id uri) from bob; the stored status's
 * Status entity, as alice reads it, into r. */
static void
create_and_show(struct fixture *f, struct eu_it_resp *r, const char *uri, const char *object)
{
    process(&f->w, BOB,
            "{\"id\":\"%s#create\",\"type\":\"Create\",\"actor\":\"" BOB "\",\"to\":[\"" PUBLIC
            "\"],\"object\":%s}",
            uri, object);
    char *id = eu_it_pg_execf(f->w.db,
                              "SELECT id FROM statuses WHERE tenant_id = %s AND uri = '%s'"
                              " AND deleted_at IS NULL",
                              f->w.tid, uri);
    ck_assert_msg(id != NULL, "no status for %s", uri);
    eu_it_callf(f->w.s, r, HOST, "GET", eu_it_tok(&f->w, "alice"), NULL, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(r, 200);
    free(id);
}

static void
expect_in(const struct eu_it_resp *r, const char *path, const char *needle)
{
    const char *s = json_string_value(eu_it_jpath(r->json, path));
    ck_assert_msg(s && strstr(s, needle), "%s has no '%s': %s", path, needle, r->body);
}

/* ------------------------------------------------- converted objects */

START_TEST(test_converted)
{
    struct fixture f;
    start(&f);
    struct eu_it_resp r = {0};
    /* alice follows bob, so what he posts concerns this tenant. */
    free(eu_it_pg_execf(f.w.db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                        " VALUES (%s, %s, %s)",
                        f.w.tid, eu_it_id(&f.w, "alice"), f.bob));

    /* A PeerTube video: its files in url, no attachment. */
    create_and_show(&f, &r, "https://remote.example/videos/watch/v1",
                    "{\"id\":\"https://remote.example/videos/watch/v1\",\"type\":\"Video\","
                    "\"attributedTo\":[{\"type\":\"Person\",\"id\":\"" BOB "\"},"
                    "{\"type\":\"Group\",\"id\":\"https://remote.example/video-channels/c\"}],"
                    "\"to\":[\"" PUBLIC
                    "\"],\"name\":\"Cats & dogs\",\"content\":\"<p>ignored</p>\","
                    "\"published\":\"2026-01-01T00:00:00Z\",\"url\":["
                    "{\"type\":\"Link\",\"mediaType\":\"text/html\","
                    "\"href\":\"https://remote.example/w/v1\"},"
                    "{\"type\":\"Link\",\"mediaType\":\"application/x-mpegURL\","
                    "\"href\":\"https://remote.example/static/v1.m3u8\"},"
                    "{\"type\":\"Link\",\"mediaType\":\"video/mp4\",\"height\":720,"
                    "\"href\":\"https://remote.example/static/v1-720.mp4\"},"
                    "{\"type\":\"Link\",\"mediaType\":\"video/mp4\",\"height\":360,"
                    "\"href\":\"https://remote.example/static/v1-360.mp4\"}]}");
    expect_in(&r, "content", "<strong>Cats &amp; dogs</strong>");
    expect_in(&r, "content", "href=\"https://remote.example/w/v1\"");
    ck_assert_msg(!strstr(json_string_value(eu_it_jpath(r.json, "content")), "ignored"), "%s",
                  r.body);
    EU_IT_EXPECT_JSTR(&r, "url", "https://remote.example/w/v1");
    EU_IT_EXPECT_JSTR(&r, "spoiler_text", "");
    EU_IT_EXPECT_JSTR(&r, "visibility", "public");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 1);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.type", "video");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.remote_url",
                      "https://remote.example/static/v1-720.mp4");

    /* A Pixelfed photo: an Image with its attachment and a summary. */
    create_and_show(&f, &r, "https://remote.example/p/bob/2",
                    "{\"id\":\"https://remote.example/p/bob/2\",\"type\":\"Image\","
                    "\"attributedTo\":\"" BOB "\",\"to\":[\"" PUBLIC "\"],"
                    "\"summary\":\"a sunset\",\"url\":\"https://remote.example/p/bob/2\","
                    "\"attachment\":[{\"type\":\"Document\",\"mediaType\":\"image/jpeg\","
                    "\"url\":\"https://remote.example/storage/2.jpg\",\"name\":\"orange sky\"}]}");
    expect_in(&r, "content", "<p>a sunset</p>");
    expect_in(&r, "content", "href=\"https://remote.example/p/bob/2\"");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 1);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.type", "image");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.description", "orange sky");

    /* A Funkwhale track: audio in its url list. */
    create_and_show(&f, &r, "https://remote.example/federation/music/uploads/3",
                    "{\"id\":\"https://remote.example/federation/music/uploads/3\","
                    "\"type\":\"Audio\",\"attributedTo\":\"" BOB "\",\"to\":[\"" PUBLIC "\"],"
                    "\"name\":\"Song\",\"url\":[{\"type\":\"Link\",\"mediaType\":\"text/html\","
                    "\"href\":\"https://remote.example/library/tracks/3\"},"
                    "{\"type\":\"Link\",\"mediaType\":\"audio/mpeg\","
                    "\"href\":\"https://remote.example/api/v1/listen/3.mp3\"}]}");
    expect_in(&r, "content", "<strong>Song</strong>");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.type", "audio");

    /* A Mobilizon event: its name, summary and page. */
    create_and_show(&f, &r, "https://remote.example/events/4",
                    "{\"id\":\"https://remote.example/events/4\",\"type\":\"Event\","
                    "\"attributedTo\":\"" BOB "\",\"to\":[\"" PUBLIC "\"],"
                    "\"name\":\"Meetup\",\"summary\":\"<p>Come along</p>\","
                    "\"startTime\":\"2026-02-01T18:00:00Z\","
                    "\"url\":\"https://remote.example/events/4\"}");
    expect_in(&r, "content", "<strong>Meetup</strong>");
    expect_in(&r, "content", "<p>Come along</p>");
    expect_in(&r, "content", ">https://remote.example/events/4</a>");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 0);

    /* An Article named only in nameMap; its language is the map's. */
    create_and_show(&f, &r, "https://remote.example/blog/5",
                    "{\"id\":\"https://remote.example/blog/5\",\"type\":\"Article\","
                    "\"attributedTo\":\"" BOB "\",\"to\":[\"" PUBLIC "\"],"
                    "\"nameMap\":{\"de\":\"Titel\"},\"content\":\"<p>long text</p>\"}");
    expect_in(&r, "content", "<strong>Titel</strong>");
    expect_in(&r, "content", "href=\"https://remote.example/blog/5\"");
    EU_IT_EXPECT_JSTR(&r, "language", "de");

    /* A Page, as before. */
    create_and_show(&f, &r, "https://remote.example/page/6",
                    "{\"id\":\"https://remote.example/page/6\",\"type\":\"Page\","
                    "\"attributedTo\":\"" BOB "\",\"to\":[\"" PUBLIC "\"],\"name\":\"A page\","
                    "\"url\":\"https://remote.example/page/6.html\"}");
    expect_in(&r, "content", "<strong>A page</strong>");
    expect_in(&r, "content", "href=\"https://remote.example/page/6.html\"");

    /* A Question keeps its text and gets a poll. */
    create_and_show(&f, &r, "https://remote.example/q/7",
                    "{\"id\":\"https://remote.example/q/7\",\"type\":\"Question\","
                    "\"attributedTo\":\"" BOB "\",\"to\":[\"" PUBLIC "\"],"
                    "\"content\":\"<p>tea?</p>\",\"endTime\":\"2099-01-01T00:00:00Z\","
                    "\"oneOf\":[{\"type\":\"Note\",\"name\":\"yes\"},"
                    "{\"type\":\"Note\",\"name\":\"no\"}]}");
    EU_IT_EXPECT_JSTR(&r, "content", "<p>tea?</p>");
    EU_IT_EXPECT_JSTR(&r, "poll.options.1.title", "no");

    /* The decoy got none of them. */
    ck_assert_int_eq(eu_it_pg_execf_long(f.w.db,
                                         "SELECT count(*) FROM statuses WHERE tenant_id = %s",
                                         f.w.decoy_tid),
                     0);
    eu_it_resp_free(&r);
    stop(&f);
}
END_TEST

/* --------------------------------------------------- collections */

static void get_ap(struct world *w, struct eu_it_resp *r, const char *host, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
get_ap(struct world *w, struct eu_it_resp *r, const char *host, const char *fmt, ...)
{
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    const char *h[] = {"Accept: " AS_JSON, NULL};
    int rc = eu_it_http_raw(r, "GET", w->s->public_port, host, path, h, NULL);
    ck_assert_msg(rc == 0, "GET %s: %s", path, r->error);
}

static char *
post_status(struct world *w, const char *json)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "POST", eu_it_tok(w, "alice"), json, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

START_TEST(test_collections)
{
    struct fixture f;
    start(&f);
    struct eu_it_resp r = {0};
    char want[256];
    char *st = post_status(&f.w, "{\"status\":\"root\",\"visibility\":\"public\"}");
    char *priv = post_status(&f.w, "{\"status\":\"secret\",\"visibility\":\"private\"}");
    char *self = NULL;
    {
        char json[256];
        snprintf(json, sizeof(json), "{\"status\":\"self\",\"in_reply_to_id\":\"%s\"}", st);
        self = post_status(&f.w, json);
    }
    /* bob replies, likes it and boosts it; a followers-only reply of his
     * is not listed. */
    process(&f.w, BOB,
            "{\"id\":\"" BOB "/s/1#c\",\"type\":\"Create\",\"actor\":\"" BOB "\",\"object\":{"
            "\"id\":\"" BOB "/s/1\",\"type\":\"Note\",\"attributedTo\":\"" BOB
            "\",\"to\":[\"" PUBLIC "\"],\"content\":\"hi\",\"inReplyTo\":\"" BASE
            "/users/alice/statuses/%s\"}}",
            st);
    process(&f.w, BOB,
            "{\"id\":\"" BOB "/s/2#c\",\"type\":\"Create\",\"actor\":\"" BOB "\",\"object\":{"
            "\"id\":\"" BOB "/s/2\",\"type\":\"Note\",\"attributedTo\":\"" BOB "\",\"to\":[\"" BOB
            "/followers\"],\"content\":\"psst\","
            "\"inReplyTo\":\"" BASE "/users/alice/statuses/%s\"}}",
            st);
    process(&f.w, BOB,
            "{\"id\":\"" BOB "#likes/1\",\"type\":\"Like\",\"actor\":\"" BOB "\",\"object\":\"" BASE
            "/users/alice/statuses/%s\"}",
            st);
    process(&f.w, BOB,
            "{\"id\":\"" BOB "/s/3/activity\",\"type\":\"Announce\",\"actor\":\"" BOB
            "\",\"to\":[\"" PUBLIC "\"],\"object\":\"" BASE "/users/alice/statuses/%s\"}",
            st);

    /* The Note names its collections. */
    get_ap(&f.w, &r, HOST, "/users/alice/statuses/%s", st);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(want, sizeof(want), BASE "/users/alice/statuses/%s/replies", st);
    EU_IT_EXPECT_JSTR(&r, "replies", want);

    get_ap(&f.w, &r, HOST, "/users/alice/statuses/%s/replies", st);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", want);
    EU_IT_EXPECT_JSTR(&r, "type", "Collection");
    EU_IT_EXPECT_JSTR(&r, "first.type", "CollectionPage");
    EU_IT_EXPECT_JSTR(&r, "first.partOf", want);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "first.items")), 2);
    snprintf(want, sizeof(want), BASE "/users/alice/statuses/%s", self);
    EU_IT_EXPECT_JSTR(&r, "first.items.0", want);
    EU_IT_EXPECT_JSTR(&r, "first.items.1", BOB "/s/1");
    ck_assert(eu_it_jpath(r.json, "first.next") == NULL);
    /* A page after the last: empty. */
    char *bob_reply = eu_it_pg_execf(
        f.w.db, "SELECT id FROM statuses WHERE tenant_id = %s AND uri = '" BOB "/s/1'", f.w.tid);
    get_ap(&f.w, &r, HOST, "/users/alice/statuses/%s/replies?page=true&min_id=%s", st, bob_reply);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "CollectionPage");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "items")), 0);
    free(bob_reply);

    get_ap(&f.w, &r, HOST, "/users/alice/statuses/%s/likes", st);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(want, sizeof(want), BASE "/users/alice/statuses/%s/likes", st);
    EU_IT_EXPECT_JSTR(&r, "id", want);
    EU_IT_EXPECT_JSTR(&r, "type", "Collection");
    ck_assert_int_eq(json_integer_value(eu_it_jpath(r.json, "totalItems")), 1);
    get_ap(&f.w, &r, HOST, "/users/alice/statuses/%s/shares", st);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_integer_value(eu_it_jpath(r.json, "totalItems")), 1);

    /* A private status's, another author's address, an unknown id, and the
     * decoy tenant's address for the same id: 404. */
    get_ap(&f.w, &r, HOST, "/users/alice/statuses/%s/likes", priv);
    EU_IT_EXPECT_STATUS(&r, 404);
    get_ap(&f.w, &r, HOST, "/users/nobody/statuses/%s/replies", st);
    EU_IT_EXPECT_STATUS(&r, 404);
    get_ap(&f.w, &r, HOST, "/users/alice/statuses/1/shares");
    EU_IT_EXPECT_STATUS(&r, 404);
    get_ap(&f.w, &r, DECOY, "/users/alice/statuses/%s/replies", st);
    EU_IT_EXPECT_STATUS(&r, 404);
    get_ap(&f.w, &r, HOST, "/users/alice/statuses/%s/replies?page=true&min_id=x", st);
    EU_IT_EXPECT_STATUS(&r, 400);

    /* A suspended author's: 403, as its Note. */
    free(eu_it_pg_execf(f.w.db,
                        "UPDATE accounts SET suspended_at = now() WHERE tenant_id = %s"
                        " AND id = %s",
                        f.w.tid, eu_it_id(&f.w, "alice")));
    get_ap(&f.w, &r, HOST, "/users/alice/statuses/%s/replies", st);
    EU_IT_EXPECT_STATUS(&r, 403);

    free(st);
    free(priv);
    free(self);
    eu_it_resp_free(&r);
    stop(&f);
}
END_TEST

/* --------------------------------------------------- Undo(Accept) */

static void
relationship(struct world *w, struct eu_it_resp *r, const char *target)
{
    eu_it_callf(w->s, r, HOST, "GET", eu_it_tok(w, "alice"), NULL,
                "/api/v1/accounts/relationships?id[]=%s", target);
    EU_IT_EXPECT_STATUS(r, 200);
}

START_TEST(test_undo_accept)
{
    struct fixture f;
    start(&f);
    struct eu_it_resp r = {0};
    /* alice follows bob (accepted before); the decoy's alice too. */
    free(eu_it_pg_execf(f.w.db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id, uri,"
                        " show_reblogs, notify) VALUES (%s, %s, %s, '" BASE
                        "/users/alice#follows/9', false, true)",
                        f.w.tid, eu_it_id(&f.w, "alice"), f.bob));
    free(eu_it_pg_execf(f.w.db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id, uri)"
                        " VALUES (%s, %s, %s, '" BASE "/users/alice#follows/9')",
                        f.w.decoy_tid, eu_it_id(&f.w, "decoy_alice"), f.decoy_bob));

    /* Someone else's Undo of bob's Accept does nothing. */
    char *carol = eu_it_remote_account(f.w.db, f.w.tid, "https://remote.example/users/carol", true);
    process(&f.w, "https://remote.example/users/carol",
            "{\"id\":\"https://remote.example/users/carol#undo/1\",\"type\":\"Undo\","
            "\"actor\":\"https://remote.example/users/carol\",\"object\":{\"id\":\"" BOB
            "#accepts/9\",\"type\":\"Accept\",\"actor\":\"" BOB "\",\"object\":\"" BASE
            "/users/alice#follows/9\"}}");
    relationship(&f.w, &r, f.bob);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.following")), "%s", r.body);

    /* bob's Undo of his Accept, naming our Follow by id. */
    process(&f.w, BOB,
            "{\"id\":\"" BOB "#undo/9\",\"type\":\"Undo\",\"actor\":\"" BOB "\",\"object\":{"
            "\"id\":\"" BOB "#accepts/9\",\"type\":\"Accept\",\"actor\":\"" BOB
            "\",\"object\":\"" BASE "/users/alice#follows/9\"}}");
    relationship(&f.w, &r, f.bob);
    ck_assert_msg(json_is_false(eu_it_jpath(r.json, "0.following")), "%s", r.body);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.requested")), "%s", r.body);
    /* The request keeps the follow's id and settings. */
    ck_assert_int_eq(eu_it_pg_execf_long(f.w.db,
                                         "SELECT count(*) FROM follow_requests WHERE tenant_id = %s"
                                         " AND uri = '" BASE "/users/alice#follows/9'"
                                         " AND NOT show_reblogs AND notify",
                                         f.w.tid),
                     1);
    /* An Accept again makes it a follow. */
    process(&f.w, BOB,
            "{\"id\":\"" BOB "#accepts/10\",\"type\":\"Accept\",\"actor\":\"" BOB
            "\",\"object\":\"" BASE "/users/alice#follows/9\"}");
    relationship(&f.w, &r, f.bob);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.following")), "%s", r.body);

    /* Undo naming the Follow embedded, by its actor. */
    process(&f.w, BOB,
            "{\"id\":\"" BOB "#undo/10\",\"type\":\"Undo\",\"actor\":\"" BOB "\",\"object\":{"
            "\"id\":\"" BOB "#accepts/10\",\"type\":\"Accept\",\"actor\":\"" BOB
            "\",\"object\":{\"type\":\"Follow\",\"actor\":\"" BASE "/users/alice\","
            "\"object\":\"" BOB "\"}}}");
    relationship(&f.w, &r, f.bob);
    ck_assert_msg(json_is_true(eu_it_jpath(r.json, "0.requested")), "%s", r.body);

    /* The decoy's follow is as it was. */
    ck_assert_int_eq(eu_it_pg_execf_long(f.w.db,
                                         "SELECT count(*) FROM follows WHERE tenant_id = %s",
                                         f.w.decoy_tid),
                     1);
    ck_assert_int_eq(
        eu_it_pg_execf_long(f.w.db, "SELECT count(*) FROM follow_requests WHERE tenant_id = %s",
                            f.w.decoy_tid),
        0);
    free(carol);
    eu_it_resp_free(&r);
    stop(&f);
}
END_TEST

/* ------------------------------------------- followers synchronization */

/* What the fake server's shared inbox received. */
struct inbox_log {
    int undos; /* Undo of a Follow POSTed to peer's own inbox */
    int partial_gets;
    int posts;
    char sync[4][1024]; /* Collection-Synchronization of each, "" when none */
    char type[4][32];   /* the activity's type */
};

static bool
on_peer_inbox(struct peer *p, struct evhttp_request *req)
{
    struct inbox_log *log = p->data;
    const char *uri = evhttp_request_get_uri(req);
    if (evhttp_request_get_command(req) == EVHTTP_REQ_GET &&
        strncmp(uri, "/users/peer/followers_synchronization", 37) == 0) {
        /* peer's list of its followers on obj.example, paged as a large
         * collection is: the collection names its first page; page 1
         * lists someone elsewhere and names page 2, which lists bob
         * (alice is on neither). */
        char doc[768];
        const char *rest = uri + 37;
        if (strcmp(rest, "") == 0)
            snprintf(doc, sizeof(doc),
                     "{\"id\":\"%s/users/peer/followers_synchronization\","
                     "\"type\":\"OrderedCollection\",\"totalItems\":2,"
                     "\"first\":\"%s/users/peer/followers_synchronization?page=1\"}",
                     p->origin, p->origin);
        else if (strcmp(rest, "?page=1") == 0)
            snprintf(doc, sizeof(doc),
                     "{\"id\":\"%s/users/peer/followers_synchronization?page=1\","
                     "\"type\":\"OrderedCollectionPage\","
                     "\"orderedItems\":[\"http://elsewhere.example/users/x\"],"
                     "\"next\":\"%s/users/peer/followers_synchronization?page=2\"}",
                     p->origin, p->origin);
        else
            snprintf(doc, sizeof(doc),
                     "{\"id\":\"%s/users/peer/followers_synchronization?page=2\","
                     "\"type\":\"OrderedCollectionPage\","
                     "\"orderedItems\":[\"" BASE "/users/bob\"]}",
                     p->origin);
        pthread_mutex_lock(&p->mu);
        log->partial_gets++;
        pthread_mutex_unlock(&p->mu);
        peer_reply(req, 200, AS_JSON, doc);
        return true;
    }
    if (evhttp_request_get_command(req) == EVHTTP_REQ_POST &&
        strcmp(uri, "/users/peer/inbox") == 0) {
        struct evbuffer *in = evhttp_request_get_input_buffer(req);
        size_t len = evbuffer_get_length(in);
        char *body = calloc(1, len + 1);
        evbuffer_remove(in, body, len);
        json_t *j = json_loads(body, 0, NULL);
        free(body);
        const char *t = json_string_value(json_object_get(j, "type"));
        const char *ot = json_string_value(eu_it_jpath(j, "object.type"));
        pthread_mutex_lock(&p->mu);
        if (t && ot && strcmp(t, "Undo") == 0 && strcmp(ot, "Follow") == 0)
            log->undos++;
        pthread_mutex_unlock(&p->mu);
        json_decref(j);
        evhttp_send_reply(req, 202, "Accepted", NULL);
        return true;
    }
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST || strcmp(uri, "/inbox") != 0)
        return false;
    const char *h =
        evhttp_find_header(evhttp_request_get_input_headers(req), "Collection-Synchronization");
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    char *body = calloc(1, len + 1);
    evbuffer_remove(in, body, len);
    json_t *j = json_loads(body, 0, NULL);
    free(body);
    pthread_mutex_lock(&p->mu);
    if (log->posts < 4) {
        snprintf(log->sync[log->posts], sizeof(log->sync[0]), "%s", h ? h : "");
        const char *type = json_string_value(json_object_get(j, "type"));
        snprintf(log->type[log->posts], sizeof(log->type[0]), "%s", type ? type : "");
    }
    log->posts++;
    pthread_mutex_unlock(&p->mu);
    json_decref(j);
    evhttp_send_reply(req, 202, "Accepted", NULL);
    return true;
}

static int
inbox_wait(struct peer *p, int want)
{
    struct inbox_log *log = p->data;
    long long until = eu_it_now_ms() + 15000;
    int n = 0;
    while (eu_it_now_ms() < until) {
        pthread_mutex_lock(&p->mu);
        n = log->posts;
        pthread_mutex_unlock(&p->mu);
        if (n >= want)
            break;
        eu_it_sleep_ms(50);
    }
    return n;
}

/* method of path on host signed by the peer's actor "peer" (draft-cavage),
 * with body (POST) and one more header line (may be NULL). */
static void
signed_request(struct world *w, struct peer *p, const char *method, const char *host,
               const char *path, const char *body, const char *extra, struct eu_it_resp *r)
{
    char url[256], key_id[160];
    snprintf(url, sizeof(url), "http://%s%s", host, path);
    snprintf(key_id, sizeof(key_id), "%s/users/peer#main-key", p->origin);
    struct eu_httpsig_sign_args a = {
        .method = method,
        .url = url,
        .body = body,
        .body_len = body ? strlen(body) : 0,
        .key_id = key_id,
        .key_pem = p->actors[0].priv,
        .now = time(NULL),
    };
    struct eu_httpsig_signed sg = {0};
    ck_assert_int_eq(eu_httpsig_sign_cavage(&a, &sg), 0);
    char *lines[EU_HTTPSIG_SIGNED_MAX + 1];
    const char *headers[EU_HTTPSIG_SIGNED_MAX + 3];
    int n = 0;
    for (int i = 0; i < sg.n; i++) {
        if (strcasecmp(sg.headers[i].name, "Host") == 0)
            continue;
        ck_assert_int_ge(asprintf(&lines[n], "%s: %s", sg.headers[i].name, sg.headers[i].value), 0);
        headers[n] = lines[n];
        n++;
    }
    headers[n] = body ? "Content-Type: " AS_JSON : "Accept: " AS_JSON;
    headers[n + 1] = extra;
    headers[n + 2] = NULL;
    eu_it_resp_free(r);
    ck_assert_int_eq(eu_it_http_raw(r, method, w->s->public_port, host, path, headers, body), 0);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    eu_httpsig_signed_release(&sg);
}

static void
signed_get(struct world *w, struct peer *p, const char *host, const char *path,
           struct eu_it_resp *r)
{
    signed_request(w, p, "GET", host, path, NULL, NULL, r);
}

static const struct eu_it_world_opts sync_world = {
    .host = HOST,
    .decoy = DECOY,
    .extra_toml = PEER_TOML "[workers]\nqueue_idle_poll_seconds = 1\n",
    .users = {{"alice"}, {"bob"}, {"decoy_alice", DECOY, "alice"}},
};

START_TEST(test_followers_sync)
{
    struct peer *p = peer_start();
    struct inbox_log *log = calloc(1, sizeof(*log));
    p->data = log;
    p->intercept = on_peer_inbox;
    struct world w;
    eu_it_world_start(&w, &sync_world);
    struct eu_it_resp r = {0};
    char peer_uri[128], other_uri[128];
    snprintf(peer_uri, sizeof(peer_uri), "%s/users/peer", p->origin);
    snprintf(other_uri, sizeof(other_uri), "%s/users/other", p->origin);
    /* peer and other (one server) follow alice; the decoy's alice has a
     * follower there too. */
    char *pid = eu_it_remote_account(w.db, w.tid, peer_uri, true);
    char *oid = eu_it_remote_account(w.db, w.tid, other_uri, true);
    char *dpid = eu_it_remote_account(w.db, w.decoy_tid, peer_uri, true);
    free(eu_it_pg_execf(w.db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id) VALUES"
                        " (%s, %s, %s), (%s, %s, %s), (%s, %s, %s)",
                        w.tid, pid, eu_it_id(&w, "alice"), w.tid, oid, eu_it_id(&w, "alice"),
                        w.decoy_tid, dpid, eu_it_id(&w, "decoy_alice")));

    /* A public post: one delivery to the shared inbox, no header. */
    free(post_status(&w, "{\"status\":\"for all\",\"visibility\":\"public\"}"));
    ck_assert_int_eq(inbox_wait(p, 1), 1);
    ck_assert_str_eq(log->type[0], "Create");
    ck_assert_str_eq(log->sync[0], "");
    /* A followers-only one: the header, with the digest of both. */
    free(post_status(&w, "{\"status\":\"for friends\",\"visibility\":\"private\"}"));
    ck_assert_int_eq(inbox_wait(p, 2), 2);
    unsigned char acc[32] = {0}, h[32];
    const char *uris[] = {peer_uri, other_uri};
    for (int i = 0; i < 2; i++) {
        crypto_hash_sha256(h, (const unsigned char *)uris[i], strlen(uris[i]));
        for (int k = 0; k < 32; k++)
            acc[k] ^= h[k];
    }
    char hex[65], want[512];
    sodium_bin2hex(hex, sizeof(hex), acc, sizeof(acc));
    snprintf(want, sizeof(want),
             "collectionId=\"" BASE "/users/alice/followers\", url=\"" BASE
             "/users/alice/followers_synchronization\", digest=\"%s\"",
             hex);
    ck_assert_str_eq(log->sync[1], want);

    /* The partial collection: signed only, and only the signer's server. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/users/alice/followers_synchronization");
    EU_IT_EXPECT_STATUS(&r, 401);
    /* bob, elsewhere, follows alice too. */
    char *bid = eu_it_remote_account(w.db, w.tid, BOB, true);
    free(eu_it_pg_execf(w.db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                        " VALUES (%s, %s, %s)",
                        w.tid, bid, eu_it_id(&w, "alice")));
    signed_get(&w, p, HOST, "/users/alice/followers_synchronization", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", BASE "/users/alice/followers_synchronization");
    EU_IT_EXPECT_JSTR(&r, "type", "OrderedCollection");
    ck_assert_int_eq(json_integer_value(eu_it_jpath(r.json, "totalItems")), 2);
    EU_IT_EXPECT_JSTR(&r, "orderedItems.0", peer_uri);
    EU_IT_EXPECT_JSTR(&r, "orderedItems.1", other_uri);
    signed_get(&w, p, DECOY, "/users/alice/followers_synchronization", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "orderedItems")), 1);
    EU_IT_EXPECT_JSTR(&r, "orderedItems.0", peer_uri);
    signed_get(&w, p, HOST, "/users/nobody/followers_synchronization", &r);
    EU_IT_EXPECT_STATUS(&r, 404);

    /* Receiving: alice and bob follow peer, as does the decoy's alice. A
     * delivery from peer says its followers here hash otherwise: the job
     * walks its paged list (three documents), which names bob on its
     * second page and not alice, so her follow ends with an Undo and
     * his stays; the decoy's stays. */
    free(eu_it_pg_execf(w.db,
                        "INSERT INTO follows (tenant_id, account_id, target_account_id, uri)"
                        " VALUES (%s, %s, %s, '" BASE "/users/alice#follows/77'),"
                        " (%s, %s, %s, NULL), (%s, %s, %s, NULL)",
                        w.tid, eu_it_id(&w, "alice"), pid, w.tid, eu_it_id(&w, "bob"), pid,
                        w.decoy_tid, eu_it_id(&w, "decoy_alice"), dpid));
    /* The fake peer's actor document names no followers collection and
     * was fetched again for its key above: say it has one, as any server
     * that sends the header does. */
    free(eu_it_pg_execf(w.db,
                        "UPDATE accounts SET followers_url = uri || '/followers'"
                        " WHERE tenant_id = %s AND id = %s",
                        w.tid, pid));
    char body[512], header[512];
    snprintf(body, sizeof(body),
             "{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"%s#del/1\","
             "\"type\":\"Delete\",\"actor\":\"%s\",\"object\":\"%s/statuses/404\"}",
             peer_uri, peer_uri, peer_uri);
    snprintf(header, sizeof(header),
             "Collection-Synchronization: collectionId=\"%s/followers\", url=\"%s/"
             "followers_synchronization\", digest=\"%064d\"",
             peer_uri, peer_uri, 0);
    signed_request(&w, p, "POST", HOST, "/inbox", body, header, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    long long until = eu_it_now_ms() + 15000;
    long left = 2;
    while (eu_it_now_ms() < until &&
           (left = eu_it_pg_execf_long(w.db,
                                       "SELECT count(*) FROM follows WHERE tenant_id = %s"
                                       " AND target_account_id = %s",
                                       w.tid, pid)) > 1)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(left, 1);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM follows WHERE tenant_id = %s"
                                         " AND target_account_id = %s AND account_id = %s",
                                         w.tid, pid, eu_it_id(&w, "bob")),
                     1);
    until = eu_it_now_ms() + 15000;
    int undos = 0;
    while (eu_it_now_ms() < until) {
        pthread_mutex_lock(&p->mu);
        undos = log->undos;
        pthread_mutex_unlock(&p->mu);
        if (undos)
            break;
        eu_it_sleep_ms(100);
    }
    ck_assert_int_eq(undos, 1);
    ck_assert_int_eq(log->partial_gets, 3);
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM follows WHERE tenant_id = %s"
                                         " AND target_account_id = %s",
                                         w.decoy_tid, dpid),
                     1);
    /* alice's followers (peer and other follow her) are not touched. */
    ck_assert_int_eq(eu_it_pg_execf_long(w.db,
                                         "SELECT count(*) FROM follows WHERE tenant_id = %s"
                                         " AND target_account_id = %s",
                                         w.tid, eu_it_id(&w, "alice")),
                     3);

    free(pid);
    free(oid);
    free(dpid);
    free(bid);
    eu_it_resp_free(&r);
    eu_it_world_free(&w);
    peer_stop(p);
    free(log);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_objects_received");
    EU_IT_ADD_TCASE(s, test_converted, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_collections, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_undo_accept, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_followers_sync, TIMEOUT);
    return eu_it_run_suite(s);
}
