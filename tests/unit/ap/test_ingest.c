/*
 * Parsing remote actors and notes, on documents shaped as Mastodon,
 * GoToSocial, Misskey and Pleroma send them: strings where others send
 * arrays, contentMap without content, Link objects, missing optional
 * properties, hostile sizes and ids on another host than expected.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apingest.h"
#include "eunha/arena.h"
#include "eunha/error.h"

static json_t *
parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "fixture: %s at %d", e.text, e.position);
    return j;
}

#define KEY "-----BEGIN PUBLIC KEY-----\\nMIIB...\\n-----END PUBLIC KEY-----\\n"

static const char mastodon_actor[] =
    "{\"@context\":[\"https://www.w3.org/ns/activitystreams\"],"
    "\"id\":\"https://m.example/users/alice\",\"type\":\"Person\","
    "\"following\":\"https://m.example/users/alice/following\","
    "\"followers\":\"https://m.example/users/alice/followers\","
    "\"inbox\":\"https://m.example/users/alice/inbox\","
    "\"outbox\":\"https://m.example/users/alice/outbox\","
    "\"featured\":\"https://m.example/users/alice/collections/featured\","
    "\"preferredUsername\":\"alice\",\"name\":\"Alice :blobcat:\","
    "\"summary\":\"<p>Hi <script>x</script><a href=\\\"javascript:y\\\">z</a></p>\","
    "\"url\":\"https://m.example/@alice\",\"manuallyApprovesFollowers\":true,"
    "\"discoverable\":true,\"indexable\":false,\"published\":\"2023-01-02T00:00:00Z\","
    "\"publicKey\":{\"id\":\"https://m.example/users/alice#main-key\","
    "\"owner\":\"https://m.example/users/alice\",\"publicKeyPem\":\"" KEY "\"},"
    "\"attachment\":[{\"type\":\"PropertyValue\",\"name\":\"Site\",\"value\":"
    "\"<a href=\\\"https://alice.example\\\" rel=\\\"me\\\">alice.example</a>\"},"
    "{\"type\":\"IdentityProof\",\"name\":\"x\"}],"
    "\"endpoints\":{\"sharedInbox\":\"https://m.example/inbox\"},"
    "\"icon\":{\"type\":\"Image\",\"mediaType\":\"image/png\","
    "\"url\":\"https://m.example/a.png\"},"
    "\"image\":{\"type\":\"Image\",\"url\":\"https://m.example/h.png\"},"
    "\"alsoKnownAs\":[\"https://old.example/users/alice\"]}";

START_TEST(actor_mastodon)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j = parse(mastodon_actor);
    struct eu_ap_actor ac;
    struct eu_error err = {0};
    ck_assert_int_eq(eu_ap_actor_parse(a, j, "m.example", NULL, &ac, &err), 0);
    ck_assert_str_eq(ac.id, "https://m.example/users/alice");
    ck_assert_str_eq(ac.domain, "m.example");
    ck_assert_str_eq(ac.username, "alice");
    ck_assert_str_eq(ac.display_name, "Alice :blobcat:");
    ck_assert_str_eq(ac.note, "<p>Hi z</p>");
    ck_assert_str_eq(ac.shared_inbox, "https://m.example/inbox");
    ck_assert_str_eq(ac.featured, "https://m.example/users/alice/collections/featured");
    ck_assert_str_eq(ac.key_id, "https://m.example/users/alice#main-key");
    ck_assert_ptr_nonnull(strstr(ac.public_key_pem, "BEGIN PUBLIC KEY"));
    ck_assert_str_eq(ac.avatar_url, "https://m.example/a.png");
    ck_assert_str_eq(ac.header_url, "https://m.example/h.png");
    ck_assert_str_eq(ac.published, "2023-01-02T00:00:00Z");
    ck_assert(ac.locked && ac.discoverable && !ac.indexable && !ac.bot);
    ck_assert_uint_eq(ac.n_fields, 1);
    ck_assert_str_eq(ac.fields[0].name, "Site");
    ck_assert_str_eq(ac.fields[0].value, "<a href=\"https://alice.example\" rel=\"nofollow "
                                         "noopener\" target=\"_blank\">alice.example</a>");
    ck_assert_uint_eq(ac.n_also_known_as, 1);
    ck_assert_ptr_null(ac.moved_to);

    /* The same document from another host is refused. */
    ck_assert_int_eq(eu_ap_actor_parse(a, j, "evil.example", NULL, &ac, &err), -1);
    ck_assert_int_eq(err.status, 422);
    ck_assert_ptr_nonnull(strstr(err.message, "not on"));
    json_decref(j);
    eu_arena_free(a);
}
END_TEST

/* GoToSocial: a Service with the key as an array, no endpoints, icon as an
 * array; the key picked by id. */
START_TEST(actor_gotosocial_key_array)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j = parse("{\"id\":\"https://gts.example/users/bot\",\"type\":\"Service\","
                      "\"preferredUsername\":\"bot\",\"inbox\":\"https://gts.example/users/bot/"
                      "inbox\",\"icon\":[{\"type\":\"Image\",\"url\":\"https://gts.example/i."
                      "webp\"}],\"publicKey\":[{\"id\":\"https://gts.example/users/bot#main-key\","
                      "\"owner\":\"https://gts.example/users/bot\",\"publicKeyPem\":\"" KEY "\"},"
                      "{\"id\":\"https://gts.example/users/bot#key2\",\"owner\":\"https://"
                      "gts.example/users/bot\",\"publicKeyPem\":\"" KEY "\"}]}");
    struct eu_ap_actor ac;
    struct eu_error err = {0};
    ck_assert_int_eq(eu_ap_actor_parse(a, j, NULL, "https://gts.example/users/bot#key2", &ac, &err),
                     0);
    ck_assert_str_eq(ac.key_id, "https://gts.example/users/bot#key2");
    ck_assert(ac.bot);
    ck_assert_ptr_null(ac.shared_inbox);
    ck_assert_str_eq(ac.display_name, "");
    ck_assert_str_eq(ac.note, "");
    ck_assert_str_eq(ac.avatar_url, "https://gts.example/i.webp");
    ck_assert_int_eq(eu_ap_actor_parse(a, j, NULL, NULL, &ac, &err), 0);
    ck_assert_str_eq(ac.key_id, "https://gts.example/users/bot#main-key");
    json_decref(j);
    eu_arena_free(a);
}
END_TEST

struct bad_actor {
    const char *json;
    const char *why;
};

START_TEST(actor_refused)
{
    static const struct bad_actor bad[] = {
        {"[]", "not a JSON object"},
        {"{\"id\":\"https://x.example/u\",\"type\":\"Note\"}", "not an actor type"},
        {"{\"type\":\"Person\",\"preferredUsername\":\"u\",\"inbox\":\"https://x.example/i\"}",
         "id is missing"},
        {"{\"id\":\"ftp://x.example/u\",\"type\":\"Person\"}", "id is missing"},
        {"{\"id\":\"https://x.example/u\",\"type\":\"Person\",\"inbox\":\"https://x.example/i\"}",
         "preferredUsername"},
        {"{\"id\":\"https://x.example/u\",\"type\":\"Person\",\"preferredUsername\":\"a b\","
         "\"inbox\":\"https://x.example/i\"}",
         "preferredUsername"},
        {"{\"id\":\"https://x.example/u\",\"type\":\"Person\",\"preferredUsername\":\"u\"}",
         "inbox"},
        {"{\"id\":\"https://x.example/u\",\"type\":\"Person\",\"preferredUsername\":\"u\","
         "\"inbox\":\"javascript:x\"}",
         "inbox"},
        {"{\"id\":\"https://x.example/u\",\"type\":\"Person\",\"preferredUsername\":\"u\","
         "\"inbox\":\"https://x.example/i\",\"publicKey\":{\"id\":\"https://x.example/u#k\","
         "\"owner\":\"https://x.example/other\",\"publicKeyPem\":\"" KEY "\"}}",
         "owner"},
        {"{\"id\":\"https://user@x.example/u\",\"type\":\"Person\"}", "no host"},
        {NULL, NULL},
    };
    struct eu_arena *a = eu_arena_new();
    for (size_t i = 0; bad[i].json; i++) {
        json_t *j = parse(bad[i].json);
        struct eu_ap_actor ac;
        struct eu_error err = {0};
        ck_assert_msg(eu_ap_actor_parse(a, j, NULL, NULL, &ac, &err) == -1, "case %zu passed", i);
        ck_assert_msg(strstr(err.message, bad[i].why), "case %zu: '%s'", i, err.message);
        json_decref(j);
    }
    eu_arena_free(a);
}
END_TEST

/* Oversized fields refuse the document instead of being stored. */
START_TEST(actor_oversized)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j = parse(mastodon_actor);
    char *big = malloc(EU_AP_MAX_TEXT + 2);
    memset(big, 'x', EU_AP_MAX_TEXT + 1);
    big[EU_AP_MAX_TEXT + 1] = '\0';
    struct eu_ap_actor ac;
    struct eu_error err = {0};
    json_object_set_new(j, "summary", json_string(big));
    ck_assert_int_eq(eu_ap_actor_parse(a, j, NULL, NULL, &ac, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.message, "summary"));
    json_object_del(j, "summary");
    big[EU_AP_MAX_NAME + 1] = '\0';
    json_object_set_new(j, "name", json_string(big));
    ck_assert_int_eq(eu_ap_actor_parse(a, j, NULL, NULL, &ac, &err), -1);
    json_object_del(j, "name");
    /* A field list past the cap is cut, not refused. */
    json_t *att = json_array();
    for (int i = 0; i < 100; i++)
        json_array_append_new(
            att, json_pack("{s:s, s:s, s:s}", "type", "PropertyValue", "name", "n", "value", "v"));
    json_object_set_new(j, "attachment", att);
    ck_assert_int_eq(eu_ap_actor_parse(a, j, NULL, NULL, &ac, &err), 0);
    ck_assert_uint_eq(ac.n_fields, EU_AP_MAX_FIELDS);
    free(big);
    json_decref(j);
    eu_arena_free(a);
}
END_TEST

static const char mastodon_note[] =
    "{\"id\":\"https://m.example/users/alice/statuses/1\",\"type\":\"Note\","
    "\"summary\":null,\"inReplyTo\":\"https://b.example/users/bob/statuses/9\","
    "\"published\":\"2024-03-01T12:00:00Z\",\"url\":\"https://m.example/@alice/1\","
    "\"attributedTo\":\"https://m.example/users/alice\","
    "\"to\":[\"https://www.w3.org/ns/activitystreams#Public\"],"
    "\"cc\":[\"https://m.example/users/alice/followers\",\"https://b.example/users/bob\"],"
    "\"sensitive\":false,"
    "\"content\":\"<p><span class=\\\"h-card\\\"><a href=\\\"https://b.example/@bob\\\" "
    "class=\\\"u-url mention\\\">@<span>bob</span></a></span> hi <a "
    "href=\\\"https://m.example/tags/cats\\\" class=\\\"mention hashtag\\\" "
    "rel=\\\"tag\\\">#<span>cats</span></a></p>\","
    "\"contentMap\":{\"en\":\"<p><span class=\\\"h-card\\\"><a href=\\\"https://b.example/@bob\\\" "
    "class=\\\"u-url mention\\\">@<span>bob</span></a></span> hi <a "
    "href=\\\"https://m.example/tags/cats\\\" class=\\\"mention hashtag\\\" "
    "rel=\\\"tag\\\">#<span>cats</span></a></p>\"},"
    "\"attachment\":[{\"type\":\"Document\",\"mediaType\":\"image/jpeg\","
    "\"url\":\"https://m.example/m/1.jpg\",\"name\":\"a cat\",\"blurhash\":\"UABC\","
    "\"width\":640,\"height\":480}],"
    "\"tag\":[{\"type\":\"Mention\",\"href\":\"https://b.example/users/bob\","
    "\"name\":\"@bob@b.example\"},{\"type\":\"Hashtag\",\"href\":\"https://m.example/tags/cats\","
    "\"name\":\"#cats\"},{\"type\":\"Emoji\",\"name\":\":x:\"}]}";

START_TEST(note_mastodon)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j = parse(mastodon_note);
    struct eu_ap_note n;
    struct eu_error err = {0};
    ck_assert_int_eq(eu_ap_note_parse(a, j, "m.example", "https://m.example/users/alice/followers",
                                      NULL, &n, &err),
                     0);
    ck_assert_str_eq(n.attributed_to, "https://m.example/users/alice");
    ck_assert_str_eq(n.in_reply_to, "https://b.example/users/bob/statuses/9");
    ck_assert_int_eq(n.visibility, EU_AP_PUBLIC_VIS);
    ck_assert_str_eq(n.language, "en");
    ck_assert_str_eq(n.spoiler_text, "");
    ck_assert_ptr_nonnull(strstr(n.content, "rel=\"nofollow noopener\""));
    ck_assert_ptr_nonnull(strstr(n.content, "class=\"mention hashtag\""));
    ck_assert_uint_eq(n.n_mentions, 1);
    ck_assert_str_eq(n.mentions[0].href, "https://b.example/users/bob");
    ck_assert_uint_eq(n.n_tags, 1);
    ck_assert_str_eq(n.tags[0], "cats");
    ck_assert_uint_eq(n.n_attachments, 1);
    ck_assert_str_eq(n.attachments[0].blurhash, "UABC");
    ck_assert_int_eq(n.attachments[0].width, 640);
    ck_assert_uint_eq(n.n_options, 0);

    ck_assert_int_eq(eu_ap_note_parse(a, j, "b.example", NULL, NULL, &n, &err), -1);
    json_decref(j);
    eu_arena_free(a);
}
END_TEST

struct vis_case {
    const char *to, *cc;
    enum eu_ap_visibility want;
};

START_TEST(note_visibility)
{
    static const struct vis_case cases[] = {
        {"\"https://www.w3.org/ns/activitystreams#Public\"", "[]", EU_AP_PUBLIC_VIS},
        {"[\"as:Public\"]", "[]", EU_AP_PUBLIC_VIS},
        {"[\"https://x.example/users/a/followers\"]", "[\"Public\"]", EU_AP_UNLISTED},
        {"[\"https://x.example/users/a/followers\"]", "[]", EU_AP_PRIVATE},
        {"[]", "\"https://x.example/users/a/followers\"", EU_AP_PRIVATE},
        {"[\"https://y.example/users/b\"]", "[]", EU_AP_DIRECT},
        {"null", "null", EU_AP_DIRECT},
        {NULL, NULL, 0},
    };
    struct eu_arena *a = eu_arena_new();
    for (size_t i = 0; cases[i].to; i++) {
        char *text;
        ck_assert_int_ge(
            asprintf(&text,
                     "{\"id\":\"https://x.example/n/1\",\"type\":\"Note\","
                     "\"attributedTo\":\"https://x.example/users/a\",\"content\":\"x\","
                     "\"to\":%s,\"cc\":%s}",
                     cases[i].to, cases[i].cc),
            0);
        json_t *j = parse(text);
        struct eu_ap_note n;
        struct eu_error err = {0};
        ck_assert_int_eq(
            eu_ap_note_parse(a, j, NULL, "https://x.example/users/a/followers", NULL, &n, &err), 0);
        ck_assert_msg(n.visibility == cases[i].want, "case %zu: %d", i, n.visibility);
        /* Without the followers URL, a /followers collection still counts. */
        ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), 0);
        ck_assert_msg(n.visibility == cases[i].want, "case %zu without followers: %d", i,
                      n.visibility);
        json_decref(j);
        free(text);
    }
    eu_arena_free(a);
}
END_TEST

/* Misskey: contentMap only (well, _misskey_content beside it), attributedTo
 * as an array, url as an array of Links, a Question with anyOf. */
START_TEST(note_misskey_question)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j =
        parse("{\"id\":\"https://mk.example/notes/9abc\",\"type\":\"Question\","
              "\"attributedTo\":[{\"type\":\"Person\",\"id\":\"https://mk.example/users/9x\"}],"
              "\"contentMap\":{\"ja\":\"<p>どれ?</p>\",\"en\":\"<p>Which?</p>\"},"
              "\"_misskey_content\":\"Which?\",\"summary\":\"cw\",\"sensitive\":true,"
              "\"url\":[{\"type\":\"Link\",\"mediaType\":\"application/activity+json\","
              "\"href\":\"https://mk.example/notes/9abc\"},{\"type\":\"Link\",\"mediaType\":\"text/"
              "html\",\"href\":\"https://mk.example/notes/9abc/view\"}],"
              "\"to\":\"https://www.w3.org/ns/activitystreams#Public\","
              "\"anyOf\":[{\"type\":\"Note\",\"name\":\"a\",\"replies\":{\"type\":\"Collection\","
              "\"totalItems\":3}},{\"type\":\"Note\",\"name\":\"b\"}],"
              "\"endTime\":\"2024-05-01T00:00:00.000Z\",\"votersCount\":3}");
    struct eu_ap_note n;
    struct eu_error err = {0};
    ck_assert_int_eq(eu_ap_note_parse(a, j, "mk.example", NULL, "en", &n, &err), 0);
    ck_assert_str_eq(n.attributed_to, "https://mk.example/users/9x");
    ck_assert_str_eq(n.content, "<p>Which?</p>");
    ck_assert_str_eq(n.language, "en");
    ck_assert_str_eq(n.spoiler_text, "cw");
    ck_assert(n.sensitive);
    ck_assert_str_eq(n.url, "https://mk.example/notes/9abc/view");
    ck_assert_uint_eq(n.n_options, 2);
    ck_assert(n.multiple);
    ck_assert_int_eq(n.options[0].votes, 3);
    ck_assert_int_eq(n.options[1].votes, 0);
    ck_assert_str_eq(n.end_time, "2024-05-01T00:00:00.000Z");
    ck_assert_int_eq(n.voters_count, 3);
    /* No preference: the first language. */
    ck_assert_int_eq(eu_ap_note_parse(a, j, "mk.example", NULL, NULL, &n, &err), 0);
    ck_assert_str_eq(n.language, "ja");
    json_decref(j);
    eu_arena_free(a);
}
END_TEST

/* Pleroma: inReplyTo as an object, tag as a single object, cc a string,
 * a bad published date taken as absent. WordPress: an Article. */
START_TEST(note_pleroma_and_article)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j = parse("{\"id\":\"https://pl.example/objects/1\",\"type\":\"Note\","
                      "\"actor\":\"https://pl.example/users/p\","
                      "\"attributedTo\":\"https://pl.example/users/p\",\"content\":\"hi\","
                      "\"inReplyTo\":{\"id\":\"https://m.example/users/alice/statuses/1\"},"
                      "\"tag\":{\"type\":\"Hashtag\",\"name\":\"#日本\"},"
                      "\"cc\":\"https://www.w3.org/ns/activitystreams#Public\","
                      "\"published\":\"yesterday\"}");
    struct eu_ap_note n;
    struct eu_error err = {0};
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), 0);
    ck_assert_str_eq(n.in_reply_to, "https://m.example/users/alice/statuses/1");
    ck_assert_uint_eq(n.n_tags, 1);
    ck_assert_str_eq(n.tags[0], "日本");
    ck_assert_int_eq(n.visibility, EU_AP_UNLISTED);
    ck_assert_ptr_null(n.published);
    ck_assert_ptr_null(n.language);
    json_decref(j);

    j = parse("{\"id\":\"https://blog.example/?p=5\",\"type\":\"Article\","
              "\"attributedTo\":\"https://blog.example/author/w\",\"name\":\"A <title>\","
              "\"summary\":\"The gist\",\"content\":\"<p>long body</p>\","
              "\"url\":\"https://blog.example/2024/post\",\"to\":[\"as:Public\"]}");
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), 0);
    ck_assert_str_eq(n.content, "<p><strong>A &lt;title&gt;</strong></p><p>The gist</p><p><a "
                                "href=\"https://blog.example/2024/post\" rel=\"nofollow "
                                "noopener\" target=\"_blank\">https://blog.example/2024/post</a>"
                                "</p>");
    ck_assert_str_eq(n.spoiler_text, "");
    json_decref(j);
    eu_arena_free(a);
}
END_TEST

/* The other types Mastodon converts: a PeerTube Video (files in url, the
 * page chosen as the link, one attachment per kind), an Event (summary
 * shown, content not), a Video that has attachments (url files ignored),
 * an Image named in nameMap; an unknown type is refused. */
START_TEST(note_converted)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j = parse("{\"id\":\"https://tube.example/videos/watch/1\",\"type\":\"Video\","
                      "\"attributedTo\":\"https://tube.example/accounts/u\",\"name\":\"Clip\","
                      "\"content\":\"<p>desc</p>\",\"url\":[{\"type\":\"Link\","
                      "\"mediaType\":\"application/x-mpegURL\",\"href\":\"https://tube.example/"
                      "p.m3u8\"},{\"type\":\"Link\",\"mediaType\":\"video/mp4\","
                      "\"href\":\"https://tube.example/1080.mp4\",\"width\":1920,\"height\":1080},"
                      "{\"type\":\"Link\",\"mediaType\":\"video/mp4\",\"href\":\"https://"
                      "tube.example/480.mp4\"},{\"type\":\"Link\",\"mediaType\":\"image/jpeg\","
                      "\"href\":\"https://tube.example/thumb.jpg\"},{\"type\":\"Link\","
                      "\"mediaType\":\"text/html\",\"href\":\"https://tube.example/w/1\"}]}");
    struct eu_ap_note n;
    struct eu_error err = {0};
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), 0);
    ck_assert_str_eq(n.type, "Video");
    ck_assert_str_eq(n.url, "https://tube.example/w/1");
    ck_assert_str_eq(n.content, "<p><strong>Clip</strong></p><p><a "
                                "href=\"https://tube.example/w/1\" rel=\"nofollow "
                                "noopener\" target=\"_blank\">https://tube.example/w/1</a></p>");
    ck_assert_uint_eq(n.n_attachments, 2);
    ck_assert_str_eq(n.attachments[0].type, "Video");
    ck_assert_str_eq(n.attachments[0].url, "https://tube.example/1080.mp4");
    ck_assert_str_eq(n.attachments[0].media_type, "video/mp4");
    ck_assert_int_eq(n.attachments[0].width, 1920);
    ck_assert_str_eq(n.attachments[1].type, "Image");
    json_decref(j);

    j = parse("{\"id\":\"https://mob.example/events/1\",\"type\":\"Event\","
              "\"attributedTo\":\"https://mob.example/@g\",\"name\":\"Picnic\","
              "\"summary\":\"Bring food\",\"content\":\"<p>details</p>\","
              "\"startTime\":\"2026-06-01T12:00:00Z\"}");
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), 0);
    ck_assert_str_eq(n.content, "<p><strong>Picnic</strong></p><p>Bring food</p><p><a "
                                "href=\"https://mob.example/events/1\" rel=\"nofollow "
                                "noopener\" target=\"_blank\">https://mob.example/events/1</a>"
                                "</p>");
    ck_assert_uint_eq(n.n_attachments, 0);
    json_decref(j);

    j = parse("{\"id\":\"https://tube.example/v/2\",\"type\":\"Video\","
              "\"attributedTo\":\"https://tube.example/u\",\"attachment\":[{\"type\":"
              "\"Document\",\"mediaType\":\"video/webm\",\"url\":\"https://tube.example/"
              "2.webm\"}],\"url\":[{\"type\":\"Link\",\"mediaType\":\"video/mp4\","
              "\"href\":\"https://tube.example/2.mp4\"}]}");
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), 0);
    ck_assert_uint_eq(n.n_attachments, 1);
    ck_assert_str_eq(n.attachments[0].url, "https://tube.example/2.webm");
    json_decref(j);

    j = parse("{\"id\":\"https://px.example/p/3\",\"type\":\"Image\","
              "\"attributedTo\":\"https://px.example/u\",\"nameMap\":{\"fr\":\"Photo\"}}");
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), 0);
    ck_assert_ptr_nonnull(strstr(n.content, "<strong>Photo</strong>"));
    ck_assert_str_eq(n.language, "fr");
    json_decref(j);

    j = parse("{\"id\":\"https://x.example/1\",\"type\":\"Listing\","
              "\"attributedTo\":\"https://x.example/u\"}");
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), -1);
    ck_assert(!eu_ap_is_note_type("Listing"));
    ck_assert(eu_ap_is_note_type("Audio"));
    json_decref(j);
    eu_arena_free(a);
}
END_TEST

/* Emoji tags: Mastodon's shape, an icon given as a bare Link, and the
 * ones refused (bad shortcodes, no or a non-http icon). */
START_TEST(note_emoji_tags)
{
    struct eu_arena *a = eu_arena_new();
    json_t *j = parse(
        "{\"id\":\"https://m.example/users/alice/statuses/9\",\"type\":\"Note\","
        "\"attributedTo\":\"https://m.example/users/alice\",\"content\":\"hi\","
        "\"tag\":[{\"id\":\"https://m.example/emojis/1\",\"type\":\"Emoji\","
        "\"name\":\":blob_cat:\",\"icon\":{\"type\":\"Image\",\"url\":\"https://m.example/"
        "e.png\"}},"
        "{\"type\":\"Emoji\",\"name\":\"fox2\",\"icon\":\"https://m.example/f.png\"},"
        "{\"type\":\"Emoji\",\"name\":\":a:\",\"icon\":{\"url\":\"https://m.example/a.png\"}},"
        "{\"type\":\"Emoji\",\"name\":\":bad-one:\",\"icon\":{\"url\":\"https://m.example/"
        "b.png\"}},"
        "{\"type\":\"Emoji\",\"name\":\":noicon:\"},"
        "{\"type\":\"Emoji\",\"name\":\":js:\",\"icon\":{\"url\":\"javascript:x\"}}]}");
    struct eu_ap_note n;
    struct eu_error err = {0};
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), 0);
    ck_assert_uint_eq(n.n_emojis, 2);
    ck_assert_str_eq(n.emojis[0].shortcode, "blob_cat");
    ck_assert_str_eq(n.emojis[0].url, "https://m.example/e.png");
    ck_assert_str_eq(n.emojis[0].uri, "https://m.example/emojis/1");
    ck_assert_str_eq(n.emojis[1].shortcode, "fox2");
    ck_assert_str_eq(n.emojis[1].url, "https://m.example/f.png");
    ck_assert_ptr_null(n.emojis[1].uri);
    json_decref(j);
    eu_arena_free(a);
}
END_TEST

START_TEST(note_refused)
{
    static const char *const bad[] = {
        "{\"id\":\"https://x.example/n\",\"type\":\"Create\"}",
        "{\"id\":\"https://x.example/n\",\"type\":\"Note\",\"content\":\"x\"}",
        /* The author on another host than the object. */
        "{\"id\":\"https://x.example/n\",\"type\":\"Note\",\"attributedTo\":\"https://y.example/"
        "u\"}",
        "{\"id\":\"https://x.example/n\",\"type\":\"Question\",\"attributedTo\":\"https://"
        "x.example/u\",\"oneOf\":[]}",
        NULL,
    };
    struct eu_arena *a = eu_arena_new();
    for (size_t i = 0; bad[i]; i++) {
        json_t *j = parse(bad[i]);
        struct eu_ap_note n;
        struct eu_error err = {0};
        ck_assert_msg(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err) == -1, "case %zu", i);
        ck_assert_int_eq(err.status, 422);
        json_decref(j);
    }
    /* Content over the sanitizer's cap. */
    json_t *j = parse("{\"id\":\"https://x.example/n\",\"type\":\"Note\","
                      "\"attributedTo\":\"https://x.example/u\"}");
    char *big = malloc(300 * 1024);
    memset(big, 'a', 300 * 1024 - 1);
    big[300 * 1024 - 1] = '\0';
    json_object_set_new(j, "content", json_string(big));
    struct eu_ap_note n;
    struct eu_error err = {0};
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.message, "content"));
    /* Hundreds of tags: cut at the cap. */
    json_object_set_new(j, "content", json_string("ok"));
    json_t *tags = json_array();
    for (int i = 0; i < 1000; i++)
        json_array_append_new(tags, json_pack("{s:s, s:s}", "type", "Hashtag", "name", "#t"));
    json_object_set_new(j, "tag", tags);
    ck_assert_int_eq(eu_ap_note_parse(a, j, NULL, NULL, NULL, &n, &err), 0);
    ck_assert_uint_eq(n.n_tags, EU_AP_MAX_TAGS);
    free(big);
    json_decref(j);
    eu_arena_free(a);
}
END_TEST

START_TEST(uri_host)
{
    struct eu_arena *a = eu_arena_new();
    ck_assert_str_eq(eu_ap_uri_host(a, "https://Ex.Example:8443/x?y"), "ex.example:8443");
    ck_assert_str_eq(eu_ap_uri_host(a, "http://e.example"), "e.example");
    ck_assert_ptr_null(eu_ap_uri_host(a, "https:///x"));
    ck_assert_ptr_null(eu_ap_uri_host(a, "https://a@b.example/"));
    ck_assert_ptr_null(eu_ap_uri_host(a, "mailto:x@y"));
    eu_arena_free(a);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ingest");
    TCase *tc = tcase_create("actors");
    tcase_add_test(tc, actor_mastodon);
    tcase_add_test(tc, actor_gotosocial_key_array);
    tcase_add_test(tc, actor_refused);
    tcase_add_test(tc, actor_oversized);
    suite_add_tcase(s, tc);
    tc = tcase_create("notes");
    tcase_add_test(tc, note_mastodon);
    tcase_add_test(tc, note_visibility);
    tcase_add_test(tc, note_misskey_question);
    tcase_add_test(tc, note_pleroma_and_article);
    tcase_add_test(tc, note_converted);
    tcase_add_test(tc, note_emoji_tags);
    tcase_add_test(tc, note_refused);
    tcase_add_test(tc, uri_host);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
