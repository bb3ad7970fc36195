/*
 * Custom emoji over ActivityPub (issue 28, item 5): an incoming Note's
 * Emoji tags are kept per the author's domain and shown in the status's
 * emojis[] (the remote URL, not cached, as url and static_url); a domain
 * whose media the tenant rejects gets none kept; an actor's own Emoji
 * tags show in its Account's emojis[]; a decoy tenant in the
 * same placement keeps nothing of it; and a local status's Note carries
 * the tenant's emoji it uses as Emoji tags. A remote emoji's image is
 * fetched and cached (a fake remote server serves it): the entity then
 * names the tenant's file, a changed image replaces it and its old files
 * go, and one the server refuses keeps its remote URL. Activities are
 * queued through
 * the admin jobs API as the inbox queues them (as test_ap_process does).
 */
#include "ap_peer.h"
#include "world.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "emo.example"
#define DECOY "decoy.example"
#define BASE "http://" HOST
#define BOB "https://remote.example/users/bob"
#define MEDIA "https://nomedia.example/users/max"
#define PUBLIC "https://www.w3.org/ns/activitystreams#Public"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice"}, {"decoy_alice", DECOY, "alice"}},
};

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

/* A Create of a public Note by actor, numbered n, addressed to alice, with
 * content and tag (JSON), processed as the inbox's job. */
static void
create_note(struct world *w, const char *actor, const char *n, const char *content, const char *tag)
{
    char text[4096];
    snprintf(text, sizeof(text),
             "{\"id\":\"%s/statuses/%s/activity\",\"type\":\"Create\",\"actor\":\"%s\","
             "\"object\":{\"id\":\"%s/statuses/%s\",\"type\":\"Note\",\"attributedTo\":\"%s\","
             "\"published\":\"2026-01-01T00:00:00Z\",\"to\":[\"" PUBLIC "\"],"
             "\"cc\":[\"" BASE "/users/alice\"],\"content\":\"%s\",\"tag\":%s}}",
             actor, n, actor, actor, n, actor, content, tag);
    json_error_t e;
    json_t *act = json_loads(text, 0, &e);
    ck_assert_msg(act != NULL, "fixture: %s: %s", e.text, text);
    json_t *body = json_pack("{s:s, s:{s:o, s:s, s:n}}", "kind", "ap_inbox", "payload", "activity",
                             act, "actor", actor, "recipient");
    char *btext = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct eu_it_resp r = {0};
    eu_it_admin(w->s, "POST", "/admin/v1/tenants/" HOST "/jobs", btext, &r);
    free(btext);
    EU_IT_EXPECT_STATUS(&r, 201);
    char *job = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    wait_job(w, job);
    free(job);
}

#define EMOJI_TAG(code, url)                                                                       \
    "{\"id\":\"https://remote.example/emojis/" code "\",\"type\":\"Emoji\",\"name\":\":" code      \
    ":\",\"icon\":{\"type\":\"Image\",\"mediaType\":\"image/png\",\"url\":\"" url "\"}}"

START_TEST(test_incoming)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    char *bob = eu_it_remote_account(w.db, w.tid, BOB, true);
    char *max = eu_it_remote_account(w.db, w.tid, MEDIA, true);
    free(eu_it_remote_account(w.db, w.decoy_tid, BOB, true));
    /* A local emoji of the same shortcode is another emoji. */
    free(eu_it_world_sql(&w,
                         "INSERT INTO custom_emojis (tenant_id, shortcode, image, static_image)"
                         " VALUES (%s, 'blobcat', '%s/custom_emojis/l.png',"
                         " '%s/custom_emojis/l.png')",
                         w.tid, w.tid, w.tid));
    free(eu_it_world_sql(&w,
                         "INSERT INTO domain_blocks (tenant_id, domain, severity, reject_media)"
                         " VALUES (%s, 'nomedia.example', 'noop', true)",
                         w.tid));

    create_note(
        &w, BOB, "1", "<p>hi :blobcat: :evil-one: :ghost:</p>",
        "[" EMOJI_TAG(
            "blobcat",
            "https://remote.example/e/blobcat.png") ","
                                                    "{\"type\":\"Emoji\",\"name\":\":evil-one:\","
                                                    "\"icon\":{\"url\":"
                                                    "\"https://remote.example/e/x.png\"}},"
                                                    "{\"type\":\"Emoji\",\"name\":\":ghost:\","
                                                    "\"icon\":{\"url\":\"javascript:x\"}}]");
    char *sid = eu_it_world_sql(
        &w, "SELECT id FROM statuses WHERE tenant_id = %s AND uri = '" BOB "/statuses/1'", w.tid);
    ck_assert_ptr_nonnull(sid);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM custom_emojis WHERE tenant_id = %s"
                                          " AND domain = 'remote.example'",
                                          w.tid),
                     1);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "emojis")), 1);
    EU_IT_EXPECT_JSTR(&r, "emojis.0.shortcode", "blobcat");
    EU_IT_EXPECT_JSTR(&r, "emojis.0.url", "https://remote.example/e/blobcat.png");
    EU_IT_EXPECT_JSTR(&r, "emojis.0.static_url", "https://remote.example/e/blobcat.png");

    /* A changed image replaces the kept one. */
    create_note(&w, BOB, "2", "<p>again :blobcat:</p>",
                "[" EMOJI_TAG("blobcat", "https://remote.example/e/blobcat2.png") "]");
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM custom_emojis WHERE tenant_id = %s"
                                          " AND image_remote_url LIKE '%%blobcat2.png'",
                                          w.tid),
                     1);

    /* The actor's own tag: the emoji of its display name and bio. */
    {
        const char *upd =
            "{\"id\":\"" BOB "#updates/1\",\"type\":\"Update\",\"actor\":\"" BOB
            "\",\"object\":{\"id\":\"" BOB "\",\"type\":\"Person\",\"preferredUsername\":"
            "\"bob\",\"name\":\"Bob :blobfox:\",\"inbox\":\"" BOB "/inbox\",\"followers\":"
            "\"" BOB
            "/followers\",\"tag\":[" EMOJI_TAG("blobfox", "https://remote.example/e/fox.png") "]}}";
        json_t *act = json_loads(upd, 0, NULL);
        ck_assert_ptr_nonnull(act);
        json_t *body = json_pack("{s:s, s:{s:o, s:s, s:n}}", "kind", "ap_inbox", "payload",
                                 "activity", act, "actor", BOB, "recipient");
        char *btext = json_dumps(body, JSON_COMPACT);
        json_decref(body);
        eu_it_admin(w.s, "POST", "/admin/v1/tenants/" HOST "/jobs", btext, &r);
        free(btext);
        EU_IT_EXPECT_STATUS(&r, 201);
        char *job = strdup(eu_it_json_str(&r, "id"));
        wait_job(&w, job);
        free(job);
    }
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "display_name", "Bob :blobfox:");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "emojis")), 1);
    EU_IT_EXPECT_JSTR(&r, "emojis.0.shortcode", "blobfox");
    EU_IT_EXPECT_JSTR(&r, "emojis.0.url", "https://remote.example/e/fox.png");

    /* The local blobcat, remote.example's blobcat and blobfox: one row
     * per shortcode and domain. */
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM custom_emojis WHERE tenant_id = %s", w.tid),
        3);

    /* A domain whose media the tenant rejects: nothing kept or shown. */
    create_note(&w, MEDIA, "1", "<p>hi :blobcat:</p>",
                "[" EMOJI_TAG("blobcat", "https://nomedia.example/e/blobcat.png") "]");
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM custom_emojis WHERE tenant_id = %s"
                                          " AND domain = 'nomedia.example'",
                                          w.tid),
                     0);
    char *msid = eu_it_world_sql(
        &w, "SELECT id FROM statuses WHERE tenant_id = %s AND uri = '" MEDIA "/statuses/1'", w.tid);
    ck_assert_ptr_nonnull(msid);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", msid);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "emojis")), 0);

    /* The decoy kept nothing. */
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM custom_emojis WHERE tenant_id = %s",
                                          w.decoy_tid),
                     0);

    free(sid);
    free(msid);
    free(bob);
    free(max);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* The fake server's images: /e/cat.png and /e/cat2.png are PNGs, /e/big.png
 * is past the 256 KB cap, anything else 404. */
static unsigned char *cat_png, *cat2_png;
static size_t cat_len, cat2_len;
static int image_gets;

static bool
serve_images(struct peer *p, struct evhttp_request *req)
{
    const char *uri = evhttp_request_get_uri(req);
    if (strncmp(uri, "/e/", 3) != 0)
        return false;
    struct evbuffer *b = evbuffer_new();
    int status = 200;
    if (strcmp(uri, "/e/cat.png") == 0) {
        evbuffer_add(b, cat_png, cat_len);
    } else if (strcmp(uri, "/e/cat2.png") == 0) {
        evbuffer_add(b, cat2_png, cat2_len);
    } else if (strcmp(uri, "/e/big.png") == 0) {
        evbuffer_add(b, cat_png, cat_len);
        static char pad[300 * 1024];
        evbuffer_add(b, pad, sizeof pad);
    } else {
        status = 404;
    }
    pthread_mutex_lock(&p->mu);
    image_gets++;
    pthread_mutex_unlock(&p->mu);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "image/png");
    evhttp_send_reply(req, status, status == 200 ? "OK" : "Not Found", b);
    evbuffer_free(b);
    return true;
}

/* Waits until the remote emoji's image column no longer holds a URL (or,
 * with want_url, still does once its jobs are gone); returns the column. */
static char *
wait_emoji(struct world *w, const char *code, bool want_url)
{
    long long deadline = eu_it_now_ms() + 20000;
    while (eu_it_now_ms() < deadline) {
        long jobs = eu_it_world_sql_long(w,
                                         "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                         " AND kind = 'emoji_fetch'",
                                         w->tid);
        char *img = eu_it_world_sql(w,
                                    "SELECT image FROM custom_emojis WHERE tenant_id = %s"
                                    " AND shortcode = '%s' AND domain IS NOT NULL",
                                    w->tid, code);
        if (img && (want_url ? jobs == 0 : !strstr(img, "://")))
            return img;
        free(img);
        eu_it_sleep_ms(50);
    }
    ck_abort_msg("emoji %s: not settled in 20 s", code);
    return NULL;
}

START_TEST(test_cached)
{
    cat_png = eu_it_make_png(16, 16, &cat_len);
    cat2_png = eu_it_make_png(24, 24, &cat2_len);
    struct peer *peer = peer_start();
    peer->intercept = serve_images;
    static struct eu_it_world_opts opts = {
        .host = HOST,
        .decoy = DECOY,
        .extra_toml = PEER_TOML,
        .users = {{"alice"}, {"decoy_alice", DECOY, "alice"}},
    };
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &opts);
    char actor[128], url[160], tag[1024];
    snprintf(actor, sizeof(actor), "%s/users/peer", peer->origin);
    free(eu_it_remote_account(w.db, w.tid, actor, true));

#define PEER_EMOJI(code, file)                                                                     \
    (snprintf(url, sizeof(url), "%s/e/%s", peer->origin, file),                                    \
     snprintf(tag, sizeof(tag),                                                                    \
              "[{\"id\":\"%s/emojis/%s\",\"type\":\"Emoji\",\"name\":\":%s:\",\"icon\":{\"type\":" \
              "\"Image\",\"mediaType\":\"image/png\",\"url\":\"%s\"}}]",                           \
              peer->origin, code, code, url),                                                      \
     tag)

    create_note(&w, actor, "1", "<p>a :cat: and :gone: and :huge:</p>",
                PEER_EMOJI("cat", "cat.png"));
    char *first = wait_emoji(&w, "cat", false);
    ck_assert_msg(strstr(first, "/custom_emojis/") != NULL, "cached as %s", first);
    char *sid = eu_it_world_sql(
        &w, "SELECT id FROM statuses WHERE tenant_id = %s AND uri = '%s/statuses/1'", w.tid, actor);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "emojis.0.shortcode", "cat");
    const char *shown = json_string_value(eu_it_jpath(r.json, "emojis.0.url"));
    ck_assert_msg(shown && strncmp(shown, BASE "/system/", strlen(BASE "/system/")) == 0 &&
                      strstr(shown, first),
                  "url: %s", r.body);
    char *path = strdup(shown + strlen(BASE));
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "%s", path);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(r.body_len > 8 && memcmp(r.body, "\x89PNG", 4) == 0, "not a PNG");
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT file_size FROM custom_emojis WHERE tenant_id = %s"
                                          " AND shortcode = 'cat' AND domain IS NOT NULL",
                                          w.tid),
                     (long)r.body_len);

    /* A changed image replaces the cached one, whose files go. */
    create_note(&w, actor, "2", "<p>again :cat:</p>", PEER_EMOJI("cat", "cat2.png"));
    long long deadline = eu_it_now_ms() + 20000;
    char *second = NULL;
    while (eu_it_now_ms() < deadline) {
        second = wait_emoji(&w, "cat", false);
        if (strcmp(second, first) != 0)
            break;
        free(second);
        second = NULL;
        eu_it_sleep_ms(50);
    }
    ck_assert_msg(second != NULL, "the changed image was not cached");
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "%s", path);
    for (int i = 0; i < 100 && r.status == 200; i++) {
        eu_it_sleep_ms(50);
        eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "%s", path);
    }
    EU_IT_EXPECT_STATUS(&r, 404);

    /* A 404 and a file past 256 KB: not retried, the remote URL stays. */
    create_note(&w, actor, "3", "<p>:gone:</p>", PEER_EMOJI("gone", "gone.png"));
    char *gone = wait_emoji(&w, "gone", true);
    ck_assert_str_eq(gone, url);
    create_note(&w, actor, "4", "<p>:huge:</p>", PEER_EMOJI("huge", "big.png"));
    char *huge = wait_emoji(&w, "huge", true);
    ck_assert_str_eq(huge, url);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                          " AND kind = 'emoji_fetch'",
                                          w.tid),
                     0);
    /* Each image was asked for once: refusals are not retried. */
    pthread_mutex_lock(&peer->mu);
    ck_assert_int_eq(image_gets, 4);
    pthread_mutex_unlock(&peer->mu);
    /* The decoy fetched and kept nothing. */
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM custom_emojis WHERE tenant_id = %s",
                                          w.decoy_tid),
                     0);
#undef PEER_EMOJI
    free(first);
    free(second);
    free(gone);
    free(huge);
    free(path);
    free(sid);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
    peer_stop(peer);
    free(cat_png);
    free(cat2_png);
}
END_TEST

START_TEST(test_outgoing)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    free(eu_it_world_sql(&w,
                         "INSERT INTO custom_emojis (tenant_id, shortcode, image, static_image,"
                         " content_type) VALUES (%s, 'blobcat', '%s/custom_emojis/l.png',"
                         " '%s/custom_emojis/l.png', 'image/png'), (%s, 'off', 'k.png', 'k.png',"
                         " 'image/png')",
                         w.tid, w.tid, w.tid, w.tid));
    free(eu_it_world_sql(&w,
                         "UPDATE custom_emojis SET disabled = true WHERE tenant_id = %s"
                         " AND shortcode = 'off'",
                         w.tid));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"),
                "{\"status\":\"hello :blobcat: :off:\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *sid = strdup(eu_it_json_str(&r, "id"));
    char path[256];
    snprintf(path, sizeof(path), "/users/alice/statuses/%s", sid);
    const char *hdrs[] = {"Accept: application/activity+json", NULL};
    ck_assert_int_eq(eu_it_http_raw(&r, "GET", w.s->public_port, HOST, path, hdrs, NULL), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *tags = eu_it_jpath(r.json, "tag");
    ck_assert_msg(json_array_size(tags) == 1, "tags: %s", r.body);
    EU_IT_EXPECT_JSTR(&r, "tag.0.type", "Emoji");
    EU_IT_EXPECT_JSTR(&r, "tag.0.name", ":blobcat:");
    EU_IT_EXPECT_JSTR(&r, "tag.0.icon.type", "Image");
    EU_IT_EXPECT_JSTR(&r, "tag.0.icon.mediaType", "image/png");
    const char *url = json_string_value(eu_it_jpath(r.json, "tag.0.icon.url"));
    ck_assert_msg(url && strstr(url, "/custom_emojis/l.png"), "icon: %s", r.body);
    const char *id = json_string_value(eu_it_jpath(r.json, "tag.0.id"));
    ck_assert_msg(id && strncmp(id, BASE "/emojis/", strlen(BASE "/emojis/")) == 0, "id: %s",
                  r.body);
    ck_assert_msg(strstr(r.body, "toot:Emoji") != NULL, "context: %s", r.body);

    free(sid);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ap_emoji");
    EU_IT_ADD_TCASE(s, test_incoming, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_cached, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_outgoing, TIMEOUT);
    return eu_it_run_suite(s);
}
