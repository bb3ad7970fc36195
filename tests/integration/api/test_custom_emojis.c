/*
 * Custom emoji (issue 28, item 5): a tenant's staff upload, list, change
 * and delete them through /api/v1/admin/custom_emojis, each change with
 * its audit row; bad uploads are refused with a 422 and change nothing; a
 * moderator without manage_custom_emojis and a token without the admin
 * scopes are refused; the picker's list shows the enabled ones; a status,
 * a display name and a bio that name one carry it in emojis[]; and a decoy
 * tenant in the same placement neither sees nor touches them.
 */
#include "world.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "emoji.example"
#define DECOY "decoy.example"
#define ADMIN_SCOPES "read write follow admin:read admin:write"

/* olga the owner, mona a moderator (no manage_custom_emojis), bob a user;
 * dora owns the decoy. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"olga", NULL, NULL, ADMIN_SCOPES},
              {"mona", NULL, NULL, ADMIN_SCOPES},
              {"bob"},
              {"dora", DECOY, NULL, ADMIN_SCOPES}},
};

/* A 1x1 GIF89a, still. */
static const unsigned char GIF[] = {
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xff, 0xff,
    0xff, 0x00, 0x00, 0x00, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b};

/* A request on host as the world's user who (NULL: nobody). */
#define call(w, r, host, method, who, json, ...)                                                   \
    eu_it_callf((w)->s, r, host, method, eu_it_tok(w, who), json, __VA_ARGS__)

struct buf {
    char *data;
    size_t len;
};

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;
    b->data = realloc(b->data, b->len + size * n + 1);
    memcpy(b->data + b->len, p, size * n);
    b->len += size * n;
    b->data[b->len] = '\0';
    return size * n;
}

static void
add_field(curl_mime *mime, const char *name, const char *value)
{
    if (!value)
        return;
    curl_mimepart *part = curl_mime_addpart(mime);
    curl_mime_name(part, name);
    curl_mime_data(part, value, CURL_ZERO_TERMINATED);
}

/* POSTs a multipart emoji upload as who on host; returns the status, *out
 * the JSON body (caller decrefs). */
static long
upload(struct world *w, const char *host, const char *who, const char *shortcode,
       const char *category, const unsigned char *data, size_t len, json_t **out)
{
    CURL *c = curl_easy_init();
    char url[256], auth[512], hosth[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/admin/custom_emojis", w->s->public_port);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", eu_it_tok(w, who));
    snprintf(hosth, sizeof(hosth), "Host: %s", host);
    struct curl_slist *hl = curl_slist_append(NULL, auth);
    hl = curl_slist_append(hl, hosth);
    hl = curl_slist_append(hl, "Expect:");
    curl_mime *mime = curl_mime_init(c);
    add_field(mime, "shortcode", shortcode);
    add_field(mime, "category", category);
    if (data) {
        curl_mimepart *part = curl_mime_addpart(mime);
        curl_mime_name(part, "image");
        curl_mime_data(part, (const char *)data, len);
        curl_mime_filename(part, "emoji.png");
        curl_mime_type(part, "image/png");
    }
    struct buf b = {0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    CURLcode rc = curl_easy_perform(c);
    ck_assert_msg(rc == CURLE_OK, "upload: %s", curl_easy_strerror(rc));
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_mime_free(mime);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    *out = b.data ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    ck_assert_msg(*out != NULL, "upload: status %ld, body %s", status, b.data ? b.data : "");
    free(b.data);
    return status;
}

/* Uploads a good PNG as olga; returns the new emoji's id (caller frees). */
static char *
upload_png(struct world *w, const char *shortcode, const char *category)
{
    size_t len;
    unsigned char *png = eu_it_make_png(16, 16, &len);
    json_t *o;
    long st = upload(w, HOST, "olga", shortcode, category, png, len, &o);
    free(png);
    char *dump = json_dumps(o, 0);
    ck_assert_msg(st == 200, "upload %s: %ld %s", shortcode, st, dump);
    free(dump);
    ck_assert_str_eq(json_string_value(json_object_get(o, "shortcode")), shortcode);
    char *id = strdup(json_string_value(json_object_get(o, "id")));
    json_decref(o);
    return id;
}

static void
expect_refused(struct world *w, const char *host, const char *who, const char *shortcode,
               const unsigned char *data, size_t len, long status, const char *text)
{
    json_t *o;
    long st = upload(w, host, who, shortcode, NULL, data, len, &o);
    const char *err = json_string_value(json_object_get(o, "error"));
    ck_assert_msg(st == status && err && (!text || strstr(err, text)),
                  "upload %s: want %ld '%s', got %ld '%s'", shortcode ? shortcode : "(none)",
                  status, text ? text : "", st, err ? err : "(none)");
    json_decref(o);
}

static void
appoint(struct world *w)
{
    struct eu_it_resp r = {0};
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(w, "olga"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", DECOY,
             eu_it_id(w, "dora"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 1 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "mona")));
}

static long
emoji_rows(struct world *w)
{
    return eu_it_world_sql_long(w, "SELECT count(*) FROM custom_emojis WHERE tenant_id = %s",
                                w->tid);
}

static long
audit_rows(struct world *w, const char *action, const char *target)
{
    return eu_it_world_sql_long(w,
                                "SELECT count(*) FROM admin_action_logs WHERE tenant_id = %s"
                                " AND action = '%s' AND target_type = 'CustomEmoji'"
                                " AND target_id = %s",
                                w->tid, action, target);
}

START_TEST(test_staff_manage)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);

    char *cat = upload_png(&w, "blobcat", "Cats");
    ck_assert_int_eq(audit_rows(&w, "create", cat), 1);
    json_t *o;
    ck_assert_int_eq(upload(&w, HOST, "olga", "old_gif", NULL, GIF, sizeof GIF, &o), 200);
    char *gif = strdup(json_string_value(json_object_get(o, "id")));
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(o, "url")), "/system/"));
    ck_assert_ptr_nonnull(json_string_value(json_object_get(o, "static_url")));
    ck_assert(json_is_null(json_object_get(o, "domain")));
    ck_assert(json_is_false(json_object_get(o, "disabled")));
    json_decref(o);

    /* Bad uploads: 422 with Mastodon's body, and no row. */
    size_t len;
    unsigned char *png = eu_it_make_png(8, 8, &len);
    expect_refused(&w, HOST, "olga", "a", png, len, 422, "Shortcode");
    expect_refused(&w, HOST, "olga", "bad-code", png, len, 422, "Shortcode");
    expect_refused(&w, HOST, "olga", NULL, png, len, 422, "Shortcode");
    expect_refused(&w, HOST, "olga", "blobcat", png, len, 422, "already been taken");
    expect_refused(&w, HOST, "olga", "noimage", NULL, 0, 422, "Image can't be blank");
    expect_refused(&w, HOST, "olga", "text", (const unsigned char *)"hello, world", 12, 422,
                   "content type is invalid");
    expect_refused(&w, HOST, "olga", "truncated", png, 40, 422, NULL);
    size_t big_len = 300 * 1024;
    unsigned char *big = calloc(1, big_len);
    memcpy(big, png, len);
    expect_refused(&w, HOST, "olga", "toobig", big, big_len, 422, "256 KB");
    free(big);
    /* A moderator has no manage_custom_emojis; a user's token has no admin
     * scope. */
    expect_refused(&w, HOST, "mona", "modcat", png, len, 403, "This action is not allowed");
    expect_refused(&w, HOST, "bob", "usercat", png, len, 403, NULL);
    free(png);
    ck_assert_int_eq(emoji_rows(&w), 2);
    call(&w, &r, HOST, "GET", "mona", NULL, "/api/v1/admin/custom_emojis");
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error", "This action is not allowed");
    call(&w, &r, HOST, "PATCH", "mona", "{\"disabled\":true}", "/api/v1/admin/custom_emojis/%s",
         cat);
    EU_IT_EXPECT_ERROR(&r, 403);
    call(&w, &r, HOST, "DELETE", "mona", NULL, "/api/v1/admin/custom_emojis/%s", cat);
    EU_IT_EXPECT_ERROR(&r, 403);

    /* The picker's list, anonymous, by shortcode. */
    call(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/custom_emojis");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.shortcode", "blobcat");
    EU_IT_EXPECT_JSTR(&r, "0.category", "Cats");
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.visible_in_picker")));
    ck_assert_ptr_nonnull(strstr(json_string_value(eu_it_jpath(r.json, "0.url")), "/system/"));
    EU_IT_EXPECT_JSTR(&r, "1.shortcode", "old_gif");
    ck_assert(json_is_null(eu_it_jpath(r.json, "1.category")));
    /* The image is served. */
    const char *u = json_string_value(eu_it_jpath(r.json, "0.static_url"));
    char *path = strdup(strstr(u, "/system/"));
    struct eu_it_resp f = {0};
    ck_assert_int_eq(eu_it_http_raw(&f, "GET", w.s->public_port, HOST, path, NULL, NULL), 0);
    EU_IT_EXPECT_STATUS(&f, 200);
    eu_it_resp_free(&f);
    free(path);

    /* Disable, hide from the picker, change the category: each audited. */
    call(&w, &r, HOST, "PATCH", "olga", "{\"disabled\":true}", "/api/v1/admin/custom_emojis/%s",
         gif);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(eu_it_jpath(r.json, "disabled")));
    ck_assert_int_eq(audit_rows(&w, "disable", gif), 1);
    call(&w, &r, HOST, "PATCH", "olga", "{\"visible_in_picker\":false,\"category\":\"Blobs\"}",
         "/api/v1/admin/custom_emojis/%s", cat);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "category", "Blobs");
    ck_assert(json_is_false(eu_it_jpath(r.json, "visible_in_picker")));
    ck_assert_int_eq(audit_rows(&w, "update", cat), 1);
    call(&w, &r, HOST, "PATCH", "olga", "{\"disabled\":\"maybe\"}",
         "/api/v1/admin/custom_emojis/%s", cat);
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/custom_emojis");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.shortcode", "blobcat");
    ck_assert(json_is_false(eu_it_jpath(r.json, "0.visible_in_picker")));
    /* The staff's list has the disabled one too. */
    call(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/custom_emojis?local=true");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    call(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/custom_emojis/%s", gif);
    EU_IT_EXPECT_JSTR(&r, "shortcode", "old_gif");

    /* The decoy's owner sees none of them and changes none. */
    call(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/custom_emojis");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, DECOY, "GET", NULL, NULL, "/api/v1/custom_emojis");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/custom_emojis/%s", cat);
    EU_IT_EXPECT_ERROR(&r, 404);
    call(&w, &r, DECOY, "PATCH", "dora", "{\"disabled\":true}", "/api/v1/admin/custom_emojis/%s",
         cat);
    EU_IT_EXPECT_ERROR(&r, 404);
    call(&w, &r, DECOY, "DELETE", "dora", NULL, "/api/v1/admin/custom_emojis/%s", cat);
    EU_IT_EXPECT_ERROR(&r, 404);
    /* The host's owner's token means nothing on the decoy. */
    call(&w, &r, DECOY, "GET", "olga", NULL, "/api/v1/admin/custom_emojis");
    ck_assert_int_eq(r.status, 401);
    {
        size_t plen;
        unsigned char *p = eu_it_make_png(8, 8, &plen);
        expect_refused(&w, DECOY, "olga", "sneaky", p, plen, 401, NULL);
        free(p);
    }
    /* The decoy may use the same shortcode: its own. */
    {
        size_t plen;
        unsigned char *p = eu_it_make_png(8, 8, &plen);
        ck_assert_int_eq(upload(&w, DECOY, "dora", "blobcat", NULL, p, plen, &o), 200);
        json_decref(o);
        free(p);
    }
    ck_assert_int_eq(emoji_rows(&w), 2);

    /* The operator's API: the same operations, on the tenant it names. */
    eu_it_admin(w.s, "GET", "/admin/v1/tenants/" HOST "/custom_emojis", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    eu_it_admin(w.s, "GET", "/admin/v1/tenants/" DECOY "/custom_emojis?local=true", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    eu_it_admin(w.s, "GET", "/admin/v1/tenants/nowhere.example/custom_emojis", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    {
        char op[256];
        snprintf(op, sizeof(op), "/admin/v1/tenants/%s/custom_emojis/%s", HOST, cat);
        eu_it_admin(w.s, "PATCH", op, "{\"category\":\"\"}", &r);
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert(json_is_null(eu_it_jpath(r.json, "category")));
        snprintf(op, sizeof(op), "/admin/v1/tenants/%s/custom_emojis/%s", DECOY, cat);
        eu_it_admin(w.s, "GET", op, NULL, &r);
        EU_IT_EXPECT_ERROR(&r, 404);
    }

    /* Delete: gone, audited. */
    call(&w, &r, HOST, "DELETE", "olga", NULL, "/api/v1/admin/custom_emojis/%s", gif);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(audit_rows(&w, "destroy", gif), 1);
    call(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/custom_emojis/%s", gif);
    EU_IT_EXPECT_ERROR(&r, 404);
    ck_assert_int_eq(emoji_rows(&w), 1);

    free(cat);
    free(gif);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* The shortcodes a JSON array of CustomEmoji names, comma-joined, into out. */
static const char *
shortcodes(json_t *arr, char *out, size_t n)
{
    out[0] = '\0';
    size_t i;
    json_t *e;
    ck_assert_msg(json_is_array(arr), "emojis is not an array");
    json_array_foreach(arr, i, e)
    {
        if (i)
            strncat(out, ",", n - strlen(out) - 1);
        strncat(out, json_string_value(json_object_get(e, "shortcode")), n - strlen(out) - 1);
    }
    return out;
}

START_TEST(test_emojis_in_entities)
{
    struct world w;
    struct eu_it_resp r = {0};
    char got[256];
    eu_it_world_start(&w, &world);
    appoint(&w);
    char *cat = upload_png(&w, "blobcat", NULL);
    char *fox = upload_png(&w, "blobfox", NULL);

    /* A status: only the emoji its text uses, and only known ones, side by
     * side too. */
    call(&w, &r, HOST, "POST", "bob",
         "{\"status\":\"hello :nothere::blobcat: and :blobcat:\",\"spoiler_text\":\":blobfox:\"}",
         "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(shortcodes(eu_it_jpath(r.json, "emojis"), got, sizeof got), "blobcat,blobfox");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(r.json, "emojis.0.url")), "/system/"));
    char *sid = strdup(json_string_value(eu_it_jpath(r.json, "id")));
    call(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(shortcodes(eu_it_jpath(r.json, "emojis"), got, sizeof got), "blobcat,blobfox");
    call(&w, &r, HOST, "POST", "bob", "{\"status\":\"no emoji: here\"}", "/api/v1/statuses");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "emojis")), 0);

    /* A display name, a bio and a field value. */
    call(&w, &r, HOST, "PATCH", "bob",
         "{\"display_name\":\"Bob :blobfox:\",\"note\":\"I like :blobcat:\"}",
         "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/accounts/%s", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(shortcodes(eu_it_jpath(r.json, "emojis"), got, sizeof got), "blobcat,blobfox");
    call(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/timelines/public?local=true");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(shortcodes(eu_it_jpath(r.json, "0.account.emojis"), got, sizeof got),
                     "blobcat,blobfox");
    ck_assert_str_eq(shortcodes(eu_it_jpath(r.json, "1.emojis"), got, sizeof got),
                     "blobcat,blobfox");

    /* A disabled emoji is no longer shown in what is written next. */
    call(&w, &r, HOST, "PATCH", "olga", "{\"disabled\":true}", "/api/v1/admin/custom_emojis/%s",
         fox);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, HOST, "POST", "bob", "{\"status\":\":blobfox: :blobcat:\"}", "/api/v1/statuses");
    ck_assert_str_eq(shortcodes(eu_it_jpath(r.json, "emojis"), got, sizeof got), "blobcat");

    /* The decoy's users see nothing of the host's emoji in their own
     * text. */
    call(&w, &r, DECOY, "GET", NULL, NULL, "/api/v1/custom_emojis");
    ck_assert_int_eq(json_array_size(r.json), 0);

    free(sid);
    free(cat);
    free(fox);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("custom_emojis");
    EU_IT_ADD_TCASE(s, test_staff_manage, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_emojis_in_entities, TIMEOUT);
    return eu_it_run_suite(s);
}
