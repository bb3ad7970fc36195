/*
 * The accounts API end to end through HTTP: the signed-in profile and its
 * update (JSON, form and multipart), reading accounts (by id, lookup,
 * search), follows and follow requests with their counts, relationships and
 * notifications, blocks, mutes, notes, paging of followers with Link
 * headers, and the refusals (scopes, unknown ids, blocked accounts). Each
 * test starts its own server on fresh databases.
 */
#include "world.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define DOMAIN "acc.example"
#define NUSERS 5

/* One server, one tenant and a few local users with full and read-only
 * tokens; index 0 alice, 1 bob, 2 carol, 3 dave, 4 erin. */
/* Every user has a read write follow token and a read-only one (NAME_ro). */
static const struct eu_it_world_opts world = {
    .host = DOMAIN,
    .users = {{"alice"},
              {"alice_ro", NULL, "alice", "read"},
              {"bob"},
              {"bob_ro", NULL, "bob", "read"},
              {"carol"},
              {"carol_ro", NULL, "carol", "read"},
              {"dave"},
              {"dave_ro", NULL, "dave", "read"},
              {"erin"},
              {"erin_ro", NULL, "erin", "read"}},
};

static const char *const NAMES[NUSERS] = {"alice", "bob", "carol", "dave", "erin"};

/* METHOD path (printf-style) with token (may be NULL) and JSON body (may be
 * NULL); asserts that a response arrived. */
/* A request on the tenant's host as token; asserts that it was answered. */
#define call(w, r, method, token, json, ...)                                                       \
    eu_it_callf((w)->s, r, DOMAIN, method, token, json, __VA_ARGS__)

struct sink {
    char *data;
    size_t len;
};

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
    struct sink *b = arg;
    size_t add = size * n;
    b->data = realloc(b->data, b->len + add + 1);
    memcpy(b->data + b->len, p, add);
    b->len += add;
    b->data[b->len] = '\0';
    return add;
}

/* METHOD path with a raw body of content type ctype (form or multipart, as
 * clients send them). Fills only status, body and json of r. */
static void
call_raw(struct world *w, struct eu_it_resp *r, const char *method, const char *token,
         const char *path, const char *ctype, const char *body, size_t len)
{
    eu_it_resp_free(r);
    CURL *c = curl_easy_init();
    ck_assert(c != NULL);
    char url[1024], auth[256], ct[256];
    struct sink b = {0};
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", w->s->public_port, path);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
    struct curl_slist *hl = NULL;
    hl = curl_slist_append(hl, "Host: " DOMAIN);
    hl = curl_slist_append(hl, auth);
    hl = curl_slist_append(hl, ct);
    hl = curl_slist_append(hl, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    CURLcode rc = curl_easy_perform(c);
    ck_assert_msg(rc == CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(rc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    r->body = b.data ? b.data : strdup("");
    r->body_len = b.len;
    r->json = json_loadb(r->body, r->body_len, 0, NULL);
}

static void
expect_bool(const struct eu_it_resp *r, const char *path, bool want)
{
    json_t *v = eu_it_jpath(r->json, path);
    ck_assert_msg(json_is_boolean(v), "%s is not a boolean in %s", path, r->body);
    ck_assert_msg(json_is_true(v) == want, "%s should be %s in %s", path, want ? "true" : "false",
                  r->body);
}

static void
expect_error_text(const struct eu_it_resp *r, long status, const char *text)
{
    EU_IT_EXPECT_ERROR(r, status);
    EU_IT_EXPECT_JSTR(r, "error", text);
}

static long
db_long(struct world *w, const char *sql)
{
    char *db = eu_it_tenant_database(w->s, DOMAIN);
    long v = eu_it_pg_exec_long(db, sql);
    free(db);
    return v;
}

static void
db_exec(struct world *w, const char *sql)
{
    char *db = eu_it_tenant_database(w->s, DOMAIN);
    free(eu_it_pg_exec(db, sql));
    free(db);
}

/* ----------------------------------------------------------- credentials */

START_TEST(test_credentials_round_trip)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);

    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JSTR(&r, "username", "alice");
    EU_IT_EXPECT_JSTR(&r, "acct", "alice");
    EU_IT_EXPECT_JSTR(&r, "url", "http://" DOMAIN "/@alice");
    EU_IT_EXPECT_JSTR(&r, "source.privacy", "public");
    expect_bool(&r, "source.sensitive", false);
    EU_IT_EXPECT_JSTR(&r, "source.note", "");
    EU_IT_EXPECT_JINT(&r, "source.follow_requests_count", 0);
    EU_IT_EXPECT_JSTR(&r, "role.id", "-99");

    /* JSON, with the array form of fields_attributes. */
    call(&w, &r, "PATCH", eu_it_tok(&w, "alice"),
         "{\"display_name\":\"Alice <A>\",\"note\":\"Hi there\\n\\nSecond & last\","
         "\"locked\":true,\"bot\":true,\"discoverable\":false,"
         "\"fields_attributes\":[{\"name\":\"Site\",\"value\":\"https://alice.example/x\"},"
         "{\"name\":\"Pronouns\",\"value\":\"she/<her>\"}],"
         "\"source\":{\"privacy\":\"unlisted\",\"sensitive\":true,\"language\":\"fr\"}}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "display_name", "Alice <A>");
    EU_IT_EXPECT_JSTR(&r, "note", "<p>Hi there</p><p>Second &amp; last</p>");
    EU_IT_EXPECT_JSTR(&r, "source.note", "Hi there\n\nSecond & last");
    expect_bool(&r, "locked", true);
    expect_bool(&r, "bot", true);
    expect_bool(&r, "discoverable", false);
    EU_IT_EXPECT_JSTR(&r, "source.privacy", "unlisted");
    expect_bool(&r, "source.sensitive", true);
    EU_IT_EXPECT_JSTR(&r, "source.language", "fr");
    EU_IT_EXPECT_JSTR(&r, "fields.0.name", "Site");
    ck_assert_msg(strstr(json_string_value(eu_it_jpath(r.json, "fields.0.value")),
                         "<a href=\"https://alice.example/x\"") != NULL,
                  "%s", r.body);
    EU_IT_EXPECT_JSTR(&r, "fields.1.value", "she/&lt;her&gt;");
    EU_IT_EXPECT_JSTR(&r, "source.fields.0.value", "https://alice.example/x");
    EU_IT_EXPECT_JSTR(&r, "source.fields.1.value", "she/<her>");

    /* What others see follows the update. */
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "display_name", "Alice <A>");
    ck_assert_ptr_null(eu_it_jpath(r.json, "source"));

    /* A form with the hash form, as the docs show it. */
    const char *form = "display_name=Form+Alice&locked=false&fields_attributes%5B0%5D%5Bname%5D"
                       "=One&fields_attributes%5B0%5D%5Bvalue%5D=1&fields_attributes%5B1%5D%5B"
                       "name%5D=Two&fields_attributes%5B1%5D%5Bvalue%5D=2&source%5Bprivacy%5D="
                       "private";
    call_raw(&w, &r, "PATCH", eu_it_tok(&w, "alice"), "/api/v1/accounts/update_credentials",
             "application/x-www-form-urlencoded", form, strlen(form));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "display_name", "Form Alice");
    expect_bool(&r, "locked", false);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "fields")), 2);
    EU_IT_EXPECT_JSTR(&r, "fields.1.name", "Two");
    EU_IT_EXPECT_JSTR(&r, "source.privacy", "private");
    /* Fields not sent keep their value. */
    EU_IT_EXPECT_JSTR(&r, "source.note", "Hi there\n\nSecond & last");

    /* The form array form: a new hash starts when a key repeats. */
    form = "fields_attributes[][name]=A&fields_attributes[][value]=a"
           "&fields_attributes[][name]=B&fields_attributes[][value]=b";
    call_raw(&w, &r, "PATCH", eu_it_tok(&w, "alice"), "/api/v1/accounts/update_credentials",
             "application/x-www-form-urlencoded", form, strlen(form));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "fields")), 2);
    EU_IT_EXPECT_JSTR(&r, "fields.0.name", "A");
    EU_IT_EXPECT_JSTR(&r, "fields.1.value", "b");

    /* Multipart with an avatar that is no image (a PNG signature and
     * nothing more): 422 and nothing changed (test_media_attach uploads
     * real ones); without it the form applies. */
    const char *mp = "--XyZ\r\nContent-Disposition: form-data; name=\"display_name\"\r\n\r\n"
                     "Multi\r\n--XyZ\r\nContent-Disposition: form-data; name=\"avatar\"; "
                     "filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n"
                     "\r\n--XyZ--\r\n";
    call_raw(&w, &r, "PATCH", eu_it_tok(&w, "alice"), "/api/v1/accounts/update_credentials",
             "multipart/form-data; boundary=XyZ", mp, strlen(mp));
    EU_IT_EXPECT_ERROR(&r, 422);
    const char *mp2 = "--XyZ\r\nContent-Disposition: form-data; name=\"display_name\"\r\n\r\n"
                      "Multi\r\n--XyZ--\r\n";
    call_raw(&w, &r, "PATCH", eu_it_tok(&w, "alice"), "/api/v1/accounts/update_credentials",
             "multipart/form-data; boundary=XyZ", mp2, strlen(mp2));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "display_name", "Multi");

    /* Validation. */
    call(&w, &r, "PATCH", eu_it_tok(&w, "alice"),
         "{\"display_name\":\"0123456789012345678901234567890\"}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_msg(strncmp(eu_it_json_str(&r, "error"), "Validation failed", 17) == 0, "%s", r.body);
    call(&w, &r, "PATCH", eu_it_tok(&w, "alice"),
         "{\"fields_attributes\":{\"0\":{\"name\":\"a\",\"value\":\"1\"},\"1\":{\"name\":\"b\","
         "\"value\":\"2\"},\"2\":{\"name\":\"c\",\"value\":\"3\"},\"3\":{\"name\":\"d\","
         "\"value\":\"4\"},\"4\":{\"name\":\"e\",\"value\":\"5\"}}}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "PATCH", eu_it_tok(&w, "alice"), "{\"source\":{\"privacy\":\"everyone\"}}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "PATCH", eu_it_tok(&w, "alice"), "{\"locked\":\"maybe\"}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_JSTR(&r, "display_name", "Multi");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "fields")), 2);

    /* Scopes: a read-only token cannot update; "profile" alone can verify. */
    call(&w, &r, "PATCH", eu_it_tok(&w, "alice_ro"), "{\"display_name\":\"x\"}",
         "/api/v1/accounts/update_credentials");
    expect_error_text(&r, 403, "This action is outside the authorized scopes");
    char *profile = eu_it_user_token(w.s, DOMAIN, "alice", "profile");
    call(&w, &r, "GET", profile, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", eu_it_id(&w, "alice"));
    free(profile);
    char *writeonly = eu_it_user_token(w.s, DOMAIN, "alice", "write");
    call(&w, &r, "GET", writeonly, NULL, "/api/v1/accounts/verify_credentials");
    expect_error_text(&r, 403, "This action is outside the authorized scopes");
    free(writeonly);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/verify_credentials");
    expect_error_text(&r, 401, "The access token is invalid");

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------ show, lookup and search */

START_TEST(test_show_lookup_search)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);

    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "bob");
    EU_IT_EXPECT_JINT(&r, "followers_count", 0);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/1234567");
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/not-a-number");
    expect_error_text(&r, 404, "Record not found");

    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/lookup?acct=bob");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", eu_it_id(&w, "bob"));
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/lookup?acct=%%40Bob%%40" DOMAIN);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", eu_it_id(&w, "bob"));
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/lookup?acct=nobody");
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/lookup?acct=bob@elsewhere.example");
    expect_error_text(&r, 404, "Record not found");

    /* Search: by username prefix, by display name, following only. */
    call(&w, &r, "PATCH", eu_it_tok(&w, "carol"), "{\"display_name\":\"Caroline Bobbins\"}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/search?q=bob");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.username", "bob"); /* the exact match first */
    EU_IT_EXPECT_JSTR(&r, "1.username", "carol");
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL,
         "/api/v1/accounts/search?q=%%40bob%%40" DOMAIN);
    ck_assert_int_eq(json_array_size(r.json), 1);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/search?q=bob&limit=1");
    ck_assert_int_eq(json_array_size(r.json), 1);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/search?q=bob&offset=1");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.username", "carol");
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/search?q=%%25");
    ck_assert_int_eq(json_array_size(r.json), 0); /* wildcards are literal */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "carol"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL,
         "/api/v1/accounts/search?q=bob&following=true");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.username", "carol");
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/search");
    EU_IT_EXPECT_ERROR(&r, 400);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/search?q=bob");
    expect_error_text(&r, 401, "The access token is invalid");

    /* A suspended account keeps its identity and loses its profile. */
    char sql[256];
    snprintf(sql, sizeof(sql),
             "UPDATE accounts SET suspended_at = now() WHERE tenant_id = %s AND id = %s", w.tid,
             eu_it_id(&w, "carol"));
    db_exec(&w, sql);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "carol"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "suspended", true);
    EU_IT_EXPECT_JSTR(&r, "username", "carol");
    EU_IT_EXPECT_JSTR(&r, "display_name", "");
    EU_IT_EXPECT_JINT(&r, "followers_count", 0);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/search?q=bob");
    ck_assert_int_eq(json_array_size(r.json), 1);

    /* Empty collections clients ask for on every profile. */
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/endorsements");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s/featured_tags", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_array(r.json));
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* The directory: discoverable, unsuspended accounts only. */
    call(&w, &r, "PATCH", eu_it_tok(&w, "dave"), "{\"discoverable\":false}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/directory?local=true&order=new");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 3); /* alice, bob, erin */
    EU_IT_EXPECT_JSTR(&r, "0.username", "erin");
    call(&w, &r, "GET", NULL, NULL, "/api/v1/directory?limit=1&offset=2&order=new");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.username", "alice");

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ---------------------------------------------------------------- follow */

START_TEST(test_follow_unfollow)
{
    struct world w;
    struct eu_it_resp r = {0};
    char sql[512];
    eu_it_world_start(&w, &world);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", eu_it_id(&w, "bob"));
    expect_bool(&r, "following", true);
    expect_bool(&r, "showing_reblogs", true);
    expect_bool(&r, "notifying", false);
    expect_bool(&r, "followed_by", false);
    expect_bool(&r, "requested", false);
    ck_assert(json_is_null(eu_it_jpath(r.json, "languages")));
    EU_IT_EXPECT_JSTR(&r, "note", "");

    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 1);
    EU_IT_EXPECT_JINT(&r, "following_count", 0);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JINT(&r, "following_count", 1);

    /* Both sides of the relationship. */
    call(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL,
         "/api/v1/accounts/relationships?id[]=%s&id[]=%s"
         "&id[]=999",
         eu_it_id(&w, "alice"), eu_it_id(&w, "carol"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.id", eu_it_id(&w, "alice"));
    expect_bool(&r, "0.followed_by", true);
    expect_bool(&r, "0.following", false);
    EU_IT_EXPECT_JSTR(&r, "1.id", eu_it_id(&w, "carol"));
    expect_bool(&r, "1.followed_by", false);
    call(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/relationships?id=%s",
         eu_it_id(&w, "alice"));
    ck_assert_int_eq(json_array_size(r.json), 1);

    /* Bob was told. */
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM notifications WHERE tenant_id = %s AND account_id = %s"
             " AND from_account_id = %s AND type = 'follow'",
             w.tid, eu_it_id(&w, "bob"), eu_it_id(&w, "alice"));
    long n = 0;
    for (int i = 0; i < 50 && (n = db_long(&w, sql)) == 0; i++)
        eu_it_sleep_ms(50);
    ck_assert_int_eq(n, 1);

    /* Following again changes the options and notifies nobody. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"),
         "{\"reblogs\":false,\"notify\":true,\"languages\":[\"en\"]}", "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "showing_reblogs", false);
    expect_bool(&r, "notifying", true);
    EU_IT_EXPECT_JSTR(&r, "languages.0", "en");
    eu_it_sleep_ms(200);
    ck_assert_int_eq(db_long(&w, sql), 1);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 1);

    /* Refusals: yourself, unknown, read-only token. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "alice"));
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/424242/follow");
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "POST", eu_it_tok(&w, "carol_ro"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    expect_error_text(&r, 403, "This action is outside the authorized scopes");
    call(&w, &r, "POST", NULL, NULL, "/api/v1/accounts/%s/follow", eu_it_id(&w, "bob"));
    expect_error_text(&r, 401, "The access token is invalid");
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 1);

    /* A granular token is enough. */
    char *granular = eu_it_user_token(w.s, DOMAIN, "carol", "write:follows read:follows");
    call(&w, &r, "POST", granular, NULL, "/api/v1/accounts/%s/follow", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "following", true);
    free(granular);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/unfollow",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "following", false);
    expect_bool(&r, "showing_reblogs", false);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 1); /* carol's */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/unfollow",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);

    /* remove_from_followers: bob drops carol. */
    call(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/remove_from_followers",
         eu_it_id(&w, "carol"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "followed_by", false);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 0);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------- follow requests */

START_TEST(test_locked_follow_requests)
{
    struct world w;
    struct eu_it_resp r = {0};
    char sql[512];
    eu_it_world_start(&w, &world);

    call(&w, &r, "PATCH", eu_it_tok(&w, "carol"), "{\"locked\":true}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "carol"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "following", false);
    expect_bool(&r, "requested", true);
    call(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "carol"));
    expect_bool(&r, "requested", true);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "carol"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 0);

    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM notifications WHERE tenant_id = %s AND account_id = %s"
             " AND type = 'follow_request'",
             w.tid, eu_it_id(&w, "carol"));
    long n = 0;
    for (int i = 0; i < 50 && (n = db_long(&w, sql)) < 2; i++)
        eu_it_sleep_ms(50);
    ck_assert_int_eq(n, 2);

    call(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/follow_requests");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.username", "bob"); /* newest first */
    EU_IT_EXPECT_JSTR(&r, "1.username", "alice");
    call(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_JINT(&r, "source.follow_requests_count", 2);
    call(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/accounts/relationships?id[]=%s",
         eu_it_id(&w, "alice"));
    expect_bool(&r, "0.requested_by", true);

    call(&w, &r, "POST", eu_it_tok(&w, "carol"), NULL, "/api/v1/follow_requests/%s/authorize",
         eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", eu_it_id(&w, "alice"));
    expect_bool(&r, "followed_by", true);
    expect_bool(&r, "requested_by", false);
    call(&w, &r, "POST", eu_it_tok(&w, "carol"), NULL, "/api/v1/follow_requests/%s/reject",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "followed_by", false);
    call(&w, &r, "POST", eu_it_tok(&w, "carol"), NULL, "/api/v1/follow_requests/%s/authorize",
         eu_it_id(&w, "bob"));
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "POST", eu_it_tok(&w, "carol"), NULL, "/api/v1/follow_requests/%s/reject",
         eu_it_id(&w, "dave"));
    expect_error_text(&r, 404, "Record not found");

    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/relationships?id[]=%s",
         eu_it_id(&w, "carol"));
    expect_bool(&r, "0.following", true);
    expect_bool(&r, "0.requested", false);
    call(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/relationships?id[]=%s",
         eu_it_id(&w, "carol"));
    expect_bool(&r, "0.following", false);
    expect_bool(&r, "0.requested", false);
    call(&w, &r, "GET", eu_it_tok(&w, "carol"), NULL, "/api/v1/follow_requests");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "carol"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 1);

    /* Unfollowing withdraws a pending request. */
    call(&w, &r, "POST", eu_it_tok(&w, "dave"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "carol"));
    expect_bool(&r, "requested", true);
    call(&w, &r, "POST", eu_it_tok(&w, "dave"), NULL, "/api/v1/accounts/%s/unfollow",
         eu_it_id(&w, "carol"));
    expect_bool(&r, "requested", false);

    /* Unlocking accepts what is pending. */
    call(&w, &r, "POST", eu_it_tok(&w, "erin"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "carol"));
    expect_bool(&r, "requested", true);
    call(&w, &r, "PATCH", eu_it_tok(&w, "carol"), "{\"locked\":false}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "followers_count", 2);
    EU_IT_EXPECT_JINT(&r, "source.follow_requests_count", 0);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ---------------------------------------------------------- block, mute */

START_TEST(test_block)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    call(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "alice"));
    expect_bool(&r, "following", true);
    expect_bool(&r, "followed_by", true);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/block",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "blocking", true);
    expect_bool(&r, "following", false);
    expect_bool(&r, "followed_by", false);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 0);
    EU_IT_EXPECT_JINT(&r, "following_count", 0);

    call(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "alice"));
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/relationships?id[]=%s",
         eu_it_id(&w, "alice"));
    expect_bool(&r, "0.blocked_by", true);
    expect_bool(&r, "0.blocking", false);
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JINT(&r, "followers_count", 0);

    /* The blocked account does not find the blocker. */
    call(&w, &r, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/search?q=alice");
    ck_assert_int_eq(json_array_size(r.json), 0);

    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", eu_it_id(&w, "bob"));
    call(&w, &r, "GET", eu_it_tok(&w, "alice_ro"), NULL, "/api/v1/blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "POST", eu_it_tok(&w, "alice_ro"), NULL, "/api/v1/accounts/%s/unblock",
         eu_it_id(&w, "bob"));
    expect_error_text(&r, 403, "This action is outside the authorized scopes");
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/block",
         eu_it_id(&w, "alice"));
    expect_error_text(&r, 403, "This action is not allowed");

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/unblock",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "blocking", false);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/blocks");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "following", true);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_mute_and_note)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), "{\"notifications\":false,\"duration\":3600}",
         "/api/v1/accounts/%s/mute", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "muting", true);
    expect_bool(&r, "muting_notifications", false);
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/mute",
         eu_it_id(&w, "carol"));
    expect_bool(&r, "muting_notifications", true);

    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/mutes");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.id", eu_it_id(&w, "carol"));
    ck_assert(json_is_null(eu_it_jpath(r.json, "0.mute_expires_at")));
    EU_IT_EXPECT_JSTR(&r, "1.id", eu_it_id(&w, "bob"));
    ck_assert_msg(json_is_string(eu_it_jpath(r.json, "1.mute_expires_at")), "%s", r.body);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/mutes?limit=1");
    ck_assert_int_eq(json_array_size(r.json), 1);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));

    /* An expired mute is no mute. */
    char sql[256];
    snprintf(sql, sizeof(sql),
             "UPDATE mutes SET expires_at = now() - interval '1 minute'"
             " WHERE tenant_id = %s AND target_account_id = %s",
             w.tid, eu_it_id(&w, "bob"));
    db_exec(&w, sql);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/relationships?id[]=%s",
         eu_it_id(&w, "bob"));
    expect_bool(&r, "0.muting", false);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/unmute",
         eu_it_id(&w, "carol"));
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "muting", false);
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/mutes");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "POST", eu_it_tok(&w, "alice_ro"), NULL, "/api/v1/accounts/%s/mute",
         eu_it_id(&w, "carol"));
    expect_error_text(&r, 403, "This action is outside the authorized scopes");

    /* Notes: set, read back, clear. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), "{\"comment\":\"met at the conference\"}",
         "/api/v1/accounts/%s/note", eu_it_id(&w, "dave"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "note", "met at the conference");
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/relationships?id[]=%s",
         eu_it_id(&w, "dave"));
    EU_IT_EXPECT_JSTR(&r, "0.note", "met at the conference");
    call(&w, &r, "GET", eu_it_tok(&w, "dave"), NULL, "/api/v1/accounts/relationships?id[]=%s",
         eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JSTR(&r, "0.note", ""); /* private to its author */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), "{\"comment\":\"\"}", "/api/v1/accounts/%s/note",
         eu_it_id(&w, "dave"));
    EU_IT_EXPECT_JSTR(&r, "note", "");
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/999999/note");
    expect_error_text(&r, 404, "Record not found");

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------------- paging */

/* The URL of rel in a Link header, as a path; caller frees. */
static char *
link_path(const char *link, const char *rel)
{
    char want[32];
    snprintf(want, sizeof(want), "rel=\"%s\"", rel);
    const char *p = link;
    while (p && *p) {
        const char *lt = strchr(p, '<'), *gt = lt ? strchr(lt, '>') : NULL;
        if (!gt)
            return NULL;
        const char *next = strchr(gt, ',');
        const char *r = strstr(gt, want);
        if (r && (!next || r < next)) {
            const char *path = strstr(lt, "://");
            path = path ? strchr(path + 3, '/') : lt + 1;
            return strndup(path, (size_t)(gt - path));
        }
        p = next;
    }
    return NULL;
}

START_TEST(test_followers_paging)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);

    /* bob, carol, dave follow alice in that order. */
    for (int i = 1; i <= 3; i++) {
        call(&w, &r, "POST", eu_it_tok(&w, NAMES[i]), NULL, "/api/v1/accounts/%s/follow",
             eu_it_id(&w, "alice"));
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s/followers?limit=2", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.username", "dave");
    EU_IT_EXPECT_JSTR(&r, "1.username", "carol");
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_ptr_nonnull(link);
    char *next = link_path(link, "next"), *prev = link_path(link, "prev");
    ck_assert_msg(next && strstr(next, "max_id=") && strstr(next, "limit=2"), "%s", link);
    ck_assert_msg(prev && strstr(prev, "min_id="), "%s", link);

    call(&w, &r, "GET", NULL, NULL, "%s", next);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.username", "bob");
    char *next2 = link_path(eu_it_resp_header(&r, "Link"), "next");
    char *prev2 = link_path(eu_it_resp_header(&r, "Link"), "prev");
    ck_assert_ptr_nonnull(next2);
    call(&w, &r, "GET", NULL, NULL, "%s", next2);
    ck_assert_int_eq(json_array_size(r.json), 0);
    ck_assert_ptr_null(eu_it_resp_header(&r, "Link"));

    /* Back up from the last page: the two newer ones, newest first. */
    call(&w, &r, "GET", NULL, NULL, "%s", prev2);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.username", "dave");
    EU_IT_EXPECT_JSTR(&r, "1.username", "carol");
    free(next);
    free(prev);
    free(next2);
    free(prev2);

    /* following, from the other side. */
    call(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "carol"));
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/%s/following", eu_it_id(&w, "bob"));
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.username", "carol");
    EU_IT_EXPECT_JSTR(&r, "1.username", "alice");
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    call(&w, &r, "GET", NULL, NULL, "/api/v1/accounts/77777/followers");
    expect_error_text(&r, 404, "Record not found");

    /* familiar followers: whom alice follows that follow carol. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    call(&w, &r, "GET", eu_it_tok(&w, "alice"), NULL,
         "/api/v1/accounts/familiar_followers?id[]=%s&id[]=%s", eu_it_id(&w, "carol"),
         eu_it_id(&w, "dave"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.id", eu_it_id(&w, "carol"));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.accounts")), 1);
    EU_IT_EXPECT_JSTR(&r, "0.accounts.0.username", "bob");
    EU_IT_EXPECT_JSTR(&r, "1.id", eu_it_id(&w, "dave"));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "1.accounts")), 0);

    /* A blocked viewer sees no followers of the blocker. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/block",
         eu_it_id(&w, "erin"));
    call(&w, &r, "GET", eu_it_tok(&w, "erin"), NULL, "/api/v1/accounts/%s/followers",
         eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", eu_it_tok(&w, "dave"), NULL, "/api/v1/accounts/%s/followers",
         eu_it_id(&w, "alice"));
    ck_assert_int_eq(json_array_size(r.json), 3);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------------ home feed */

/* How many statuses of the home timeline are by account_id. */
static size_t
home_count_by(struct world *w, struct eu_it_resp *r, int viewer, const char *account_id)
{
    call(w, r, "GET", eu_it_tok(w, NAMES[viewer]), NULL, "/api/v1/timelines/home");
    EU_IT_EXPECT_STATUS(r, 200);
    size_t n = 0, i;
    json_t *st;
    json_array_foreach(r->json, i, st)
    {
        const char *a = json_string_value(json_object_get(json_object_get(st, "account"), "id"));
        n += a && strcmp(a, account_id) == 0;
    }
    return n;
}

/* Changes to the graph reach a home feed that Redis already holds: the feed
 * is dropped and rebuilt from the database. */
START_TEST(test_home_feed_follows_graph)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);

    call(&w, &r, "POST", eu_it_tok(&w, "bob"), "{\"status\":\"hello from bob\"}",
         "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(home_count_by(&w, &r, 0, eu_it_id(&w, "bob")), 0);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(home_count_by(&w, &r, 0, eu_it_id(&w, "bob")), 1);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/mute",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(home_count_by(&w, &r, 0, eu_it_id(&w, "bob")), 0);
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/unmute",
         eu_it_id(&w, "bob"));
    ck_assert_int_eq(home_count_by(&w, &r, 0, eu_it_id(&w, "bob")), 1);

    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/unfollow",
         eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(home_count_by(&w, &r, 0, eu_it_id(&w, "bob")), 0);

    /* bob removes alice from his followers: her feed loses him. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    ck_assert_int_eq(home_count_by(&w, &r, 0, eu_it_id(&w, "bob")), 1);
    call(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/remove_from_followers",
         eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(home_count_by(&w, &r, 0, eu_it_id(&w, "bob")), 0);

    /* A block by bob ends alice's follow and empties her feed of him. */
    call(&w, &r, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/follow",
         eu_it_id(&w, "bob"));
    ck_assert_int_eq(home_count_by(&w, &r, 0, eu_it_id(&w, "bob")), 1);
    call(&w, &r, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/block",
         eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(home_count_by(&w, &r, 0, eu_it_id(&w, "bob")), 0);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("accounts");
    EU_IT_ADD_TCASE(s, test_credentials_round_trip, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_show_lookup_search, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_follow_unfollow, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_locked_follow_requests, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_block, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_mute_and_note, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_followers_paging, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_home_feed_follows_graph, TIMEOUT);
    return eu_it_run_suite(s);
}
