/*
 * The instance's public description end to end: the operator writes it
 * (/admin/v1/tenants/:domain/instance, /rules, /terms_of_service), the
 * tenant's staff edit it too (/api/v1/admin/rules, /instance,
 * /terms_of_service), and clients read it in
 * Mastodon's shapes (the /api/v1/instance/ endpoints, /api/v2/instance, /api/v1/instance).
 * A decoy tenant in the same placement sees none of it, and its staff
 * cannot reach the tenant's rules.
 */
#include "world.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMEOUT 120
#define HOST "info.example"
#define DECOY "decoy.example"
#define ADMIN "/admin/v1/tenants/" HOST
#define ADMIN_DECOY "/admin/v1/tenants/" DECOY
#define STAFF "read write admin:read admin:write"

/* alice owns the tenant (appointed below); bob is a moderator, whose
 * token has the admin scopes but whose role cannot manage rules; dave owns
 * the decoy. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice"},
              {"alice_staff", NULL, "alice", STAFF},
              {"bob"},
              {"bob_staff", NULL, "bob", STAFF},
              {"dave", DECOY, NULL, STAFF}},
};

static void
start(struct world *w)
{
    eu_it_world_start(w, &world);
    /* The operator appoints each tenant's owner; bob is a moderator, a
     * role without manage_rules. */
    struct eu_it_resp r = {0};
    char path[256];
    snprintf(path, sizeof(path), ADMIN "/accounts/%s/role", eu_it_id(w, "alice"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), ADMIN_DECOY "/accounts/%s/role", eu_it_id(w, "dave"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 1 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "bob")));
}

/* GET path on host (token may be NULL) into r, asserting want. */
static void
get(struct world *w, struct eu_it_resp *r, const char *host, const char *token, const char *path,
    long want)
{
    eu_it_callf(w->s, r, host, "GET", token, NULL, "%s", path);
    EU_IT_EXPECT_STATUS(r, want);
    if (want >= 400)
        EU_IT_EXPECT_ERROR(r, want);
}

/* Operator request, asserting want; r keeps the answer. */
static void
admin(struct world *w, struct eu_it_resp *r, const char *method, const char *path, const char *body,
      long want)
{
    eu_it_admin(w->s, method, path, body, r);
    EU_IT_EXPECT_STATUS(r, want);
}

static const char *
jstr(json_t *root, const char *path)
{
    return json_string_value(eu_it_jpath(root, path));
}

START_TEST(test_defaults)
{
    struct world w;
    start(&w);
    struct eu_it_resp r = {0};

    get(&w, &r, HOST, NULL, "/api/v1/instance/rules", 200);
    ck_assert_str_eq(r.body, "[]");
    get(&w, &r, HOST, NULL, "/api/v1/instance/extended_description", 200);
    ck_assert(json_is_null(json_object_get(r.json, "updated_at")));
    EU_IT_EXPECT_JSTR(&r, "content", "");
    get(&w, &r, HOST, NULL, "/api/v1/instance/privacy_policy", 200);
    EU_IT_EXPECT_JSTR(&r, "content", "");
    get(&w, &r, HOST, NULL, "/api/v1/instance/terms_of_service", 404);
    get(&w, &r, HOST, NULL, "/api/v1/instance/peers", 200);
    ck_assert_str_eq(r.body, "[]");
    /* Mastodon hides its blocks until the admin chooses otherwise. */
    get(&w, &r, HOST, NULL, "/api/v1/instance/domain_blocks", 404);
    get(&w, &r, HOST, NULL, "/api/v1/instance/translation_languages", 200);
    ck_assert_str_eq(r.body, "{}");

    get(&w, &r, HOST, NULL, "/api/v1/instance/activity", 200);
    ck_assert_uint_eq(json_array_size(r.json), 12);
    time_t now = time(NULL);
    char today[24];
    snprintf(today, sizeof(today), "%lld", (long long)(now - now % 86400));
    EU_IT_EXPECT_JSTR(&r, "0.week", today);
    snprintf(today, sizeof(today), "%lld", (long long)(now - now % 86400 - 11 * 7 * 86400));
    EU_IT_EXPECT_JSTR(&r, "11.week", today);
    EU_IT_EXPECT_JSTR(&r, "0.statuses", "0");
    EU_IT_EXPECT_JSTR(&r, "0.logins", "0");
    EU_IT_EXPECT_JSTR(&r, "11.registrations", "0");

    get(&w, &r, HOST, NULL, "/api/v2/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "domain", HOST);
    EU_IT_EXPECT_JSTR(&r, "description", "");
    EU_IT_EXPECT_JSTR(&r, "contact.email", "");
    ck_assert(json_is_null(eu_it_jpath(r.json, "contact.account")));
    ck_assert(json_is_true(eu_it_jpath(r.json, "registrations.enabled")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "registrations.approval_required")));
    ck_assert(json_is_null(eu_it_jpath(r.json, "registrations.message")));
    ck_assert(json_is_null(eu_it_jpath(r.json, "registrations.url")));
    EU_IT_EXPECT_JINT(&r, "api_versions.mastodon", 2);
    ck_assert(json_is_array(eu_it_jpath(r.json, "icon")));
    ck_assert(json_is_string(eu_it_jpath(r.json, "thumbnail.url")));
    EU_IT_EXPECT_JSTR(&r, "languages.0", "en");
    const char *streaming = jstr(r.json, "configuration.urls.streaming");
    ck_assert_msg(streaming && strncmp(streaming, "ws://" HOST, 5 + strlen(HOST)) == 0, "%s",
                  r.body);
    EU_IT_EXPECT_JINT(&r, "configuration.accounts.max_featured_tags", 10);
    EU_IT_EXPECT_JINT(&r, "configuration.statuses.max_characters", 500);
    ck_assert(json_array_size(eu_it_jpath(r.json, "configuration.media_attachments."
                                                  "supported_mime_types")) > 0);
    EU_IT_EXPECT_JINT(&r, "configuration.polls.max_options", 4);
    ck_assert(json_is_false(eu_it_jpath(r.json, "configuration.translation.enabled")));
    ck_assert_uint_eq(json_array_size(json_object_get(r.json, "rules")), 0);

    get(&w, &r, HOST, NULL, "/api/v1/instance", 200);
    ck_assert(json_is_null(json_object_get(r.json, "contact_account")));
    ck_assert_uint_eq(json_array_size(json_object_get(r.json, "rules")), 0);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_operator_edits)
{
    struct world w;
    start(&w);
    struct eu_it_resp r = {0};

    admin(&w, &r, "PATCH", ADMIN "/instance",
          "{\"description\":\"A quiet place\",\"contact_email\":\"staff@info.example\","
          "\"contact_username\":\"alice\",\"languages\":[\"ko\",\"en\"],"
          "\"extended_description\":\"<p>About us</p>\",\"privacy_policy\":\"<p>We keep "
          "little</p>\"}",
          200);
    EU_IT_EXPECT_JSTR(&r, "description", "A quiet place");
    ck_assert(json_is_string(json_object_get(r.json, "privacy_policy_updated_at")));
    admin(&w, &r, "PATCH", ADMIN "/instance", "{\"colour\":\"red\"}", 422);
    admin(&w, &r, "PATCH", ADMIN "/instance", "{\"show_domain_blocks\":\"some\"}", 422);
    admin(&w, &r, "PATCH", ADMIN "/instance", "{\"languages\":[\"English\"]}", 422);
    admin(&w, &r, "PATCH", ADMIN "/instance", "{\"contact_email\":42}", 422);

    /* Rules come back by priority, then by age; a rule with none goes last. */
    admin(&w, &r, "POST", ADMIN "/rules", "{\"text\":\"Second\",\"priority\":2}", 200);
    admin(&w, &r, "POST", ADMIN "/rules",
          "{\"text\":\"First\",\"hint\":\"Be kind\",\"priority\":1}", 200);
    char *first = strdup(eu_it_json_str(&r, "id"));
    admin(&w, &r, "POST", ADMIN "/rules", "{\"text\":\"Third\"}", 200);
    EU_IT_EXPECT_JINT(&r, "priority", 3);
    char *third = strdup(eu_it_json_str(&r, "id"));
    admin(&w, &r, "POST", ADMIN "/rules", "{\"hint\":\"no text\"}", 422);
    get(&w, &r, HOST, NULL, "/api/v1/instance/rules", 200);
    ck_assert_uint_eq(json_array_size(r.json), 3);
    EU_IT_EXPECT_JSTR(&r, "0.text", "First");
    EU_IT_EXPECT_JSTR(&r, "0.hint", "Be kind");
    ck_assert(json_is_object(eu_it_jpath(r.json, "0.translations")));
    EU_IT_EXPECT_JSTR(&r, "0.id", first);
    EU_IT_EXPECT_JSTR(&r, "1.text", "Second");
    EU_IT_EXPECT_JSTR(&r, "2.text", "Third");
    EU_IT_EXPECT_JSTR(&r, "2.hint", "");
    char path[256];
    snprintf(path, sizeof(path), ADMIN "/rules/%s", third);
    admin(&w, &r, "PATCH", path, "{\"text\":\"Zeroth\",\"priority\":0}", 200);
    snprintf(path, sizeof(path), ADMIN "/rules/%s", first);
    admin(&w, &r, "DELETE", path, NULL, 200);
    admin(&w, &r, "DELETE", path, NULL, 404);
    get(&w, &r, HOST, NULL, "/api/v1/instance/rules", 200);
    ck_assert_uint_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.text", "Zeroth");
    EU_IT_EXPECT_JSTR(&r, "1.text", "Second");
    /* The decoy's operator path does not reach this tenant's rule. */
    snprintf(path, sizeof(path), ADMIN_DECOY "/rules/%s", third);
    admin(&w, &r, "PATCH", path, "{\"text\":\"hijack\"}", 404);
    admin(&w, &r, "DELETE", path, NULL, 404);

    /* Terms of service: one in force, one announced for later. */
    admin(&w, &r, "POST", ADMIN "/terms_of_service",
          "{\"effective_date\":\"2020-01-01\",\"text\":\"Be nice on %{domain}.\\n\\nThanks.\"}",
          201);
    admin(&w, &r, "POST", ADMIN "/terms_of_service",
          "{\"effective_date\":\"2999-01-01\",\"text\":\"Future <terms>\"}", 201);
    ck_assert(json_is_false(json_object_get(r.json, "effective")));
    admin(&w, &r, "POST", ADMIN "/terms_of_service",
          "{\"effective_date\":\"2999-01-01\",\"text\":\"again\"}", 422);
    admin(&w, &r, "POST", ADMIN "/terms_of_service",
          "{\"effective_date\":\"2999-02-30\",\"text\":\"no such day\"}", 422);
    get(&w, &r, HOST, NULL, "/api/v1/instance/terms_of_service", 200);
    EU_IT_EXPECT_JSTR(&r, "effective_date", "2020-01-01");
    ck_assert(json_is_true(json_object_get(r.json, "effective")));
    EU_IT_EXPECT_JSTR(&r, "succeeded_by", "2999-01-01");
    EU_IT_EXPECT_JSTR(&r, "content", "<p>Be nice on " HOST ".</p><p>Thanks.</p>");
    get(&w, &r, HOST, NULL, "/api/v1/instance/terms_of_service/2999-01-01", 200);
    ck_assert(json_is_false(json_object_get(r.json, "effective")));
    ck_assert(json_is_null(json_object_get(r.json, "succeeded_by")));
    EU_IT_EXPECT_JSTR(&r, "content", "<p>Future &lt;terms&gt;</p>");
    get(&w, &r, HOST, NULL, "/api/v1/instance/terms_of_service/2000-01-01", 404);
    get(&w, &r, HOST, NULL, "/api/v1/instance/terms_of_service/yesterday", 404);
    admin(&w, &r, "GET", ADMIN "/terms_of_service", NULL, 200);
    ck_assert_uint_eq(json_array_size(r.json), 2);

    /* Closed sign-ups carry the operator's message. */
    eu_it_tenant_patch(w.s, HOST, "{\"registrations\":\"closed\"}");
    admin(&w, &r, "PATCH", ADMIN "/instance", "{\"registrations_message\":\"Invite only\"}", 200);

    get(&w, &r, HOST, NULL, "/api/v2/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "description", "A quiet place");
    EU_IT_EXPECT_JSTR(&r, "contact.email", "staff@info.example");
    EU_IT_EXPECT_JSTR(&r, "contact.account.username", "alice");
    EU_IT_EXPECT_JSTR(&r, "contact.account.id", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JSTR(&r, "languages.0", "ko");
    EU_IT_EXPECT_JSTR(&r, "languages.1", "en");
    EU_IT_EXPECT_JSTR(&r, "rules.0.text", "Zeroth");
    ck_assert(json_is_object(eu_it_jpath(r.json, "rules.0.translations")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "registrations.enabled")));
    EU_IT_EXPECT_JSTR(&r, "registrations.message", "<p>Invite only</p>");
    get(&w, &r, HOST, NULL, "/nodeinfo/2.1", 200);
    EU_IT_EXPECT_JSTR(&r, "metadata.nodeDescription", "A quiet place");
    ck_assert(json_is_false(json_object_get(r.json, "openRegistrations")));
    get(&w, &r, HOST, NULL, "/api/v1/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "short_description", "A quiet place");
    EU_IT_EXPECT_JSTR(&r, "email", "staff@info.example");
    EU_IT_EXPECT_JSTR(&r, "contact_account.username", "alice");
    EU_IT_EXPECT_JSTR(&r, "rules.1.text", "Second");
    get(&w, &r, HOST, NULL, "/api/v1/instance/extended_description", 200);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>About us</p>");
    ck_assert(json_is_string(json_object_get(r.json, "updated_at")));
    get(&w, &r, HOST, NULL, "/api/v1/instance/privacy_policy", 200);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>We keep little</p>");

    /* A thumbnail the operator set by URL (no upload yet). */
    admin(&w, &r, "PATCH", ADMIN "/instance",
          "{\"thumbnail_url\":\"https://cdn.example/t.png\","
          "\"thumbnail_blurhash\":\"LEHV6nWB2yk8pyo0adR*.7kCMdnj\"}",
          200);
    get(&w, &r, HOST, NULL, "/api/v2/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "thumbnail.url", "https://cdn.example/t.png");
    EU_IT_EXPECT_JSTR(&r, "thumbnail.blurhash", "LEHV6nWB2yk8pyo0adR*.7kCMdnj");
    EU_IT_EXPECT_JSTR(&r, "thumbnail.versions.@1x", "https://cdn.example/t.png");
    get(&w, &r, HOST, NULL, "/api/v1/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "thumbnail", "https://cdn.example/t.png");

    /* A null removes a member. */
    admin(&w, &r, "PATCH", ADMIN "/instance", "{\"contact_username\":null}", 200);
    ck_assert_ptr_null(json_object_get(r.json, "contact_username"));
    get(&w, &r, HOST, NULL, "/api/v2/instance", 200);
    ck_assert(json_is_null(eu_it_jpath(r.json, "contact.account")));

    /* The decoy sees none of it. */
    get(&w, &r, DECOY, NULL, "/api/v1/instance/rules", 200);
    ck_assert_str_eq(r.body, "[]");
    get(&w, &r, DECOY, NULL, "/api/v1/instance/extended_description", 200);
    EU_IT_EXPECT_JSTR(&r, "content", "");
    get(&w, &r, DECOY, NULL, "/api/v1/instance/privacy_policy", 200);
    EU_IT_EXPECT_JSTR(&r, "content", "");
    get(&w, &r, DECOY, NULL, "/api/v1/instance/terms_of_service", 404);
    get(&w, &r, DECOY, NULL, "/api/v1/instance/terms_of_service/2020-01-01", 404);
    get(&w, &r, DECOY, NULL, "/api/v2/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "contact.email", "");
    EU_IT_EXPECT_JSTR(&r, "description", "");
    ck_assert_uint_eq(json_array_size(json_object_get(r.json, "rules")), 0);

    /* Only a version announced for later: it is served, not in force. */
    admin(&w, &r, "POST", ADMIN_DECOY "/terms_of_service",
          "{\"effective_date\":\"2999-06-01\",\"text\":\"Soon\"}", 201);
    get(&w, &r, DECOY, NULL, "/api/v1/instance/terms_of_service", 200);
    EU_IT_EXPECT_JSTR(&r, "effective_date", "2999-06-01");
    ck_assert(json_is_false(json_object_get(r.json, "effective")));
    admin(&w, &r, "DELETE", ADMIN_DECOY "/terms_of_service/2999-06-01", NULL, 200);
    get(&w, &r, DECOY, NULL, "/api/v1/instance/terms_of_service", 404);
    get(&w, &r, HOST, NULL, "/api/v1/instance/terms_of_service/2999-01-01", 200);

    free(first);
    free(third);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_peers_and_domain_blocks)
{
    struct world w;
    start(&w);
    struct eu_it_resp r = {0};

    free(eu_it_remote_account(w.db, w.tid, "https://peer.example/users/pat", false));
    free(eu_it_remote_account(w.db, w.tid, "https://peer.example/users/kim", false));
    free(eu_it_remote_account(w.db, w.tid, "https://gone.example/users/x", false));
    free(eu_it_remote_account(w.db, w.decoy_tid, "https://other.example/users/y", false));

    get(&w, &r, HOST, NULL, "/api/v1/instance/peers", 200);
    ck_assert_str_eq(r.body, "[\"gone.example\",\"peer.example\"]");
    get(&w, &r, DECOY, NULL, "/api/v1/instance/peers", 200);
    ck_assert_str_eq(r.body, "[\"other.example\"]");

    admin(&w, &r, "POST", ADMIN "/domain_blocks",
          "{\"domain\":\"gone.example\",\"severity\":\"suspend\",\"public_comment\":\"spam\","
          "\"private_comment\":\"secret\"}",
          200);
    admin(&w, &r, "POST", ADMIN "/domain_blocks",
          "{\"domain\":\"loud.example\",\"severity\":\"silence\",\"obfuscate\":true}", 200);
    admin(&w, &r, "POST", ADMIN "/domain_blocks",
          "{\"domain\":\"quiet.example\",\"severity\":\"noop\",\"reject_media\":true}", 200);

    /* A suspended domain is no peer. */
    get(&w, &r, HOST, NULL, "/api/v1/instance/peers", 200);
    ck_assert_str_eq(r.body, "[\"peer.example\"]");
    admin(&w, &r, "PATCH", ADMIN "/instance", "{\"peers_api_enabled\":false}", 200);
    get(&w, &r, HOST, NULL, "/api/v1/instance/peers", 404);
    admin(&w, &r, "PATCH", ADMIN "/instance", "{\"activity_api_enabled\":false}", 200);
    get(&w, &r, HOST, NULL, "/api/v1/instance/activity", 404);
    get(&w, &r, DECOY, NULL, "/api/v1/instance/peers", 200);
    get(&w, &r, DECOY, NULL, "/api/v1/instance/activity", 200);

    /* Users only: a visitor gets 404, a signed-in user the list without
     * the comments, which have their own setting. */
    get(&w, &r, HOST, NULL, "/api/v1/instance/domain_blocks", 404);
    admin(&w, &r, "PATCH", ADMIN "/instance", "{\"show_domain_blocks\":\"users\"}", 200);
    get(&w, &r, HOST, NULL, "/api/v1/instance/domain_blocks", 404);
    get(&w, &r, HOST, eu_it_tok(&w, "bob"), "/api/v1/instance/domain_blocks", 200);
    ck_assert_uint_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.domain", "lou******ple");
    EU_IT_EXPECT_JSTR(&r, "0.severity", "silence");
    EU_IT_EXPECT_JSTR(&r, "1.domain", "gone.example");
    EU_IT_EXPECT_JSTR(&r, "1.severity", "suspend");
    ck_assert(json_is_null(eu_it_jpath(r.json, "1.comment")));
    char *digest = eu_it_world_sql(&w, "SELECT encode(sha256('gone.example'), 'hex')");
    EU_IT_EXPECT_JSTR(&r, "1.digest", digest);
    free(digest);
    ck_assert_ptr_null(strstr(r.body, "secret"));
    ck_assert_ptr_null(strstr(r.body, "quiet.example"));

    admin(&w, &r, "PATCH", ADMIN "/instance",
          "{\"show_domain_blocks\":\"all\",\"show_domain_blocks_rationale\":\"all\"}", 200);
    get(&w, &r, HOST, NULL, "/api/v1/instance/domain_blocks", 200);
    EU_IT_EXPECT_JSTR(&r, "1.comment", "spam");
    EU_IT_EXPECT_JSTR(&r, "0.comment", "");

    /* The decoy, showing its blocks to all, has none of these. */
    admin(&w, &r, "PATCH", ADMIN_DECOY "/instance", "{\"show_domain_blocks\":\"all\"}", 200);
    get(&w, &r, DECOY, NULL, "/api/v1/instance/domain_blocks", 200);
    ck_assert_str_eq(r.body, "[]");

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* Signs user in with the password grant of app, asserting 200. */
static void
sign_in(struct world *w, const struct eu_it_app *app, const char *user)
{
    static const char *const form[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    char *pw = eu_it_urlencode(EU_IT_PASSWORD);
    char body[512];
    snprintf(body, sizeof(body),
             "grant_type=password&client_id=%s&client_secret=%s&username=%s&password=%s&scope=read",
             app->id, app->secret, user, pw);
    free(pw);
    struct eu_it_resp r = {0};
    eu_it_http_raw(&r, "POST", w->s->public_port, HOST, "/oauth/token", form, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

START_TEST(test_activity)
{
    struct world w;
    start(&w);
    struct eu_it_resp r = {0};

    for (int i = 0; i < 2; i++) {
        eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), "{\"status\":\"hello\"}",
                    "/api/v1/statuses");
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    struct eu_it_app app = eu_it_app_create(w.s, HOST,
                                            "{\"client_name\":\"t\",\"redirect_uris\":\"urn:ietf:"
                                            "wg:oauth:2.0:oob\",\"scopes\":\"read\"}");
    sign_in(&w, &app, "bob");
    sign_in(&w, &app, "bob"); /* the same person, once */
    sign_in(&w, &app, "alice");

    get(&w, &r, HOST, NULL, "/api/v1/instance/activity", 200);
    EU_IT_EXPECT_JSTR(&r, "0.statuses", "2");
    EU_IT_EXPECT_JSTR(&r, "0.logins", "2");
    EU_IT_EXPECT_JSTR(&r, "0.registrations", "2");
    EU_IT_EXPECT_JSTR(&r, "1.statuses", "0");
    EU_IT_EXPECT_JSTR(&r, "1.logins", "0");

    /* Active users are those who signed in, in v2 and in NodeInfo. */
    get(&w, &r, HOST, NULL, "/api/v2/instance", 200);
    EU_IT_EXPECT_JINT(&r, "usage.users.active_month", 2);
    get(&w, &r, HOST, NULL, "/nodeinfo/2.0", 200);
    EU_IT_EXPECT_JINT(&r, "usage.users.activeMonth", 2);
    EU_IT_EXPECT_JINT(&r, "usage.users.activeHalfyear", 2);
    EU_IT_EXPECT_JINT(&r, "usage.localPosts", 2);
    ck_assert(json_is_true(json_object_get(r.json, "openRegistrations")));
    get(&w, &r, DECOY, NULL, "/api/v2/instance", 200);
    EU_IT_EXPECT_JINT(&r, "usage.users.active_month", 0);
    get(&w, &r, DECOY, NULL, "/nodeinfo/2.0", 200);
    EU_IT_EXPECT_JINT(&r, "usage.users.activeMonth", 0);

    /* The decoy counts its own: dave, no post, no sign-in. */
    get(&w, &r, DECOY, NULL, "/api/v1/instance/activity", 200);
    EU_IT_EXPECT_JSTR(&r, "0.statuses", "0");
    EU_IT_EXPECT_JSTR(&r, "0.logins", "0");
    EU_IT_EXPECT_JSTR(&r, "0.registrations", "1");

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_staff_rules)
{
    struct world w;
    start(&w);
    struct eu_it_resp r = {0};
    const char *owner = eu_it_tok(&w, "alice_staff");

    eu_it_callf(w.s, &r, HOST, "POST", owner, "{\"text\":\"No spam\",\"hint\":\"None at all\"}",
                "/api/v1/admin/rules");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "text", "No spam");
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "PUT", owner, "{\"hint\":\"Really none\"}", "/api/v1/admin/rules/%s",
                id);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "hint", "Really none");
    eu_it_callf(w.s, &r, HOST, "GET", owner, NULL, "/api/v1/admin/rules/%s", id);
    EU_IT_EXPECT_JSTR(&r, "text", "No spam");
    get(&w, &r, HOST, owner, "/api/v1/admin/rules", 200);
    ck_assert_uint_eq(json_array_size(r.json), 1);
    get(&w, &r, HOST, NULL, "/api/v1/instance/rules", 200);
    EU_IT_EXPECT_JSTR(&r, "0.hint", "Really none");

    /* A moderator with admin scopes but without manage_rules; the owner
     * without the scopes; no token at all. */
    get(&w, &r, HOST, eu_it_tok(&w, "bob_staff"), "/api/v1/admin/rules", 403);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob_staff"), "{\"text\":\"mine\"}",
                "/api/v1/admin/rules");
    EU_IT_EXPECT_ERROR(&r, 403);
    get(&w, &r, HOST, eu_it_tok(&w, "alice"), "/api/v1/admin/rules", 403);
    get(&w, &r, HOST, NULL, "/api/v1/admin/rules", 401);

    /* Nor does it open the operator's API, whose token is the host's. */
    eu_it_http(&r, "PATCH", w.s->admin_port, NULL, ADMIN "/instance", owner,
               "{\"description\":\"taken\"}");
    EU_IT_EXPECT_STATUS(&r, 401);
    eu_it_http(&r, "POST", w.s->admin_port, NULL, ADMIN "/rules", owner, "{\"text\":\"x\"}");
    EU_IT_EXPECT_STATUS(&r, 401);

    /* Cross-tenant: this tenant's owner token means nothing on the decoy;
     * the decoy's owner reaches only the decoy's rules. */
    eu_it_callf(w.s, &r, DECOY, "POST", owner, "{\"text\":\"theirs\"}", "/api/v1/admin/rules");
    EU_IT_EXPECT_ERROR(&r, 401);
    const char *dave = eu_it_tok(&w, "dave");
    eu_it_callf(w.s, &r, DECOY, "PUT", dave, "{\"text\":\"hijack\"}", "/api/v1/admin/rules/%s", id);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_callf(w.s, &r, DECOY, "DELETE", dave, NULL, "/api/v1/admin/rules/%s", id);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_callf(w.s, &r, DECOY, "POST", dave, "{\"text\":\"Decoy rule\"}", "/api/v1/admin/rules");
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&w, &r, HOST, NULL, "/api/v1/instance/rules", 200);
    ck_assert_uint_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.text", "No spam");
    get(&w, &r, DECOY, NULL, "/api/v1/instance/rules", 200);
    ck_assert_uint_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.text", "Decoy rule");

    eu_it_callf(w.s, &r, HOST, "DELETE", owner, NULL, "/api/v1/admin/rules/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&w, &r, HOST, NULL, "/api/v1/instance/rules", 200);
    ck_assert_str_eq(r.body, "[]");

    /* The instance's texts and terms, by the staff (manage_settings): the
     * operator's members but the host's switch, each change audited. */
    eu_it_callf(w.s, &r, HOST, "PATCH", owner,
                "{\"description\":\"By the staff\",\"privacy_policy\":\"<p>Ours</p>\"}",
                "/api/v1/admin/instance");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "description", "By the staff");
    get(&w, &r, HOST, owner, "/api/v1/admin/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "description", "By the staff");
    get(&w, &r, HOST, NULL, "/api/v2/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "description", "By the staff");
    get(&w, &r, HOST, NULL, "/api/v1/instance/privacy_policy", 200);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>Ours</p>");
    eu_it_callf(w.s, &r, HOST, "PATCH", owner, "{\"limited_federation_mode\":true}",
                "/api/v1/admin/instance");
    EU_IT_EXPECT_ERROR(&r, 403);
    eu_it_callf(w.s, &r, HOST, "PATCH", owner, "{\"description\":5}", "/api/v1/admin/instance");
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, HOST, "POST", owner,
                "{\"effective_date\":\"2020-01-01\",\"text\":\"Be kind.\"}",
                "/api/v1/admin/terms_of_service");
    EU_IT_EXPECT_STATUS(&r, 201);
    EU_IT_EXPECT_JSTR(&r, "effective_date", "2020-01-01");
    get(&w, &r, HOST, owner, "/api/v1/admin/terms_of_service", 200);
    ck_assert_uint_eq(json_array_size(r.json), 1);
    get(&w, &r, HOST, NULL, "/api/v1/instance/terms_of_service", 200);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>Be kind.</p>");
    eu_it_callf(w.s, &r, HOST, "DELETE", owner, NULL, "/api/v1/admin/terms_of_service/2020-01-01");
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&w, &r, HOST, NULL, "/api/v1/instance/terms_of_service", 404);
    char *audits =
        eu_it_world_sql(&w,
                        "SELECT string_agg(action || ' ' || target_type, ',' ORDER BY id)"
                        " FROM admin_action_logs WHERE tenant_id = %s AND account_id = %s"
                        " AND target_type IN ('Instance', 'TermsOfService')",
                        w.tid, eu_it_id(&w, "alice"));
    ck_assert_str_eq(audits, "update Instance,create TermsOfService,destroy TermsOfService");
    free(audits);
    audits =
        eu_it_world_sql(&w,
                        "SELECT string_agg(action || ' ' || human_identifier, ',' ORDER BY id)"
                        " FROM admin_action_logs WHERE tenant_id = %s AND target_type = 'Rule'",
                        w.tid);
    ck_assert_str_eq(audits, "create No spam,update No spam,destroy No spam");
    free(audits);
    /* A moderator cannot; the decoy's owner changes only the decoy. */
    get(&w, &r, HOST, eu_it_tok(&w, "bob_staff"), "/api/v1/admin/instance", 403);
    eu_it_callf(w.s, &r, HOST, "PATCH", eu_it_tok(&w, "bob_staff"), "{\"description\":\"mod\"}",
                "/api/v1/admin/instance");
    EU_IT_EXPECT_ERROR(&r, 403);
    eu_it_callf(w.s, &r, DECOY, "PATCH", owner, "{\"description\":\"theirs\"}",
                "/api/v1/admin/instance");
    EU_IT_EXPECT_ERROR(&r, 401);
    eu_it_callf(w.s, &r, DECOY, "PATCH", dave, "{\"description\":\"Decoy\"}",
                "/api/v1/admin/instance");
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&w, &r, HOST, NULL, "/api/v2/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "description", "By the staff");
    get(&w, &r, DECOY, NULL, "/api/v2/instance", 200);
    EU_IT_EXPECT_JSTR(&r, "description", "Decoy");

    free(id);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

static size_t
on_body(char *ptr, size_t size, size_t n, void *arg)
{
    (void)ptr;
    (void)arg;
    return size * n;
}

/* PUTs a multipart "file" to the operator's path; returns the status. */
static long
put_file(struct world *w, const char *path, const unsigned char *data, size_t len)
{
    CURL *c = curl_easy_init();
    char url[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", w->s->admin_port, path);
    struct curl_slist *hl = curl_slist_append(NULL, "Authorization: Bearer " EU_IT_ADMIN_TOKEN);
    hl = curl_slist_append(hl, "Expect:");
    curl_mime *mime = curl_mime_init(c);
    curl_mimepart *part = curl_mime_addpart(mime);
    curl_mime_name(part, "file");
    curl_mime_data(part, (const char *)data, len);
    curl_mime_filename(part, "thumb.png");
    curl_mime_type(part, "image/png");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    CURLcode rc = curl_easy_perform(c);
    ck_assert_msg(rc == CURLE_OK, "upload: %s", curl_easy_strerror(rc));
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_mime_free(mime);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    return status;
}

START_TEST(test_thumbnail_upload)
{
    struct world w;
    start(&w);
    struct eu_it_resp r = {0};

    size_t len;
    unsigned char *png = eu_it_make_png(1600, 900, &len);
    ck_assert_int_eq(put_file(&w, ADMIN "/instance/thumbnail", png, len), 200);
    free(png);
    ck_assert_int_eq(put_file(&w, ADMIN "/instance/thumbnail", (const unsigned char *)"nope", 4),
                     422);

    get(&w, &r, HOST, NULL, "/api/v2/instance", 200);
    const char *url = jstr(r.json, "thumbnail.url");
    ck_assert_msg(url && strstr(url, "thumbnail-") && strstr(url, ".webp"), "%s", r.body);
    ck_assert_str_eq(jstr(r.json, "thumbnail.versions.@1x"), url);
    const char *hash = jstr(r.json, "thumbnail.blurhash");
    ck_assert_msg(hash && strlen(hash) > 6, "%s", r.body);
    /* The stored file is served, scaled into 1200x630. */
    const char *p = strstr(url, "/system/");
    ck_assert_ptr_nonnull(p);
    struct eu_it_resp img = {0};
    eu_it_callf(w.s, &img, HOST, "GET", NULL, NULL, "%s", p);
    EU_IT_EXPECT_STATUS(&img, 200);
    ck_assert_int_eq(memcmp(img.body, "RIFF", 4), 0);
    eu_it_resp_free(&img);

    /* The decoy keeps its default. */
    get(&w, &r, DECOY, NULL, "/api/v2/instance", 200);
    ck_assert_ptr_null(eu_it_jpath(r.json, "thumbnail.blurhash"));

    admin(&w, &r, "DELETE", ADMIN "/instance/thumbnail", NULL, 200);
    get(&w, &r, HOST, NULL, "/api/v2/instance", 200);
    ck_assert_ptr_null(eu_it_jpath(r.json, "thumbnail.blurhash"));

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("instance_info");
    EU_IT_ADD_TCASE(s, test_defaults, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_operator_edits, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_peers_and_domain_blocks, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_activity, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_staff_rules, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_thumbnail_upload, TIMEOUT);
    return s;
}

int
main(void)
{
    return eu_it_run_suite(suite());
}
