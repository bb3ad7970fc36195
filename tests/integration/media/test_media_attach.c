/*
 * Media where they are used: media_ids on new, edited and scheduled
 * statuses (Mastodon's rules and messages), media_attachments in the
 * Status entity and in the edit history, a description changed on attached
 * media showing at once (the render cache follows the status row), the rows
 * and usage going with a deleted status, and unattached uploads a day old
 * removed by the media_cleanup task. Media rows are made by SQL (the upload
 * API is tested in its own suite); a decoy tenant in the same database has
 * media of its own that never shows and cannot be attached.
 */
#include "world.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <webp/decode.h>

#define TIMEOUT 120
#define HOST "m.example"
#define DECOY "decoy.example"

/* The decoy has an alice too; the queue sweeps suspended accounts at once. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .scopes = "read write",
    .extra_toml = "[workers]\nqueue_idle_poll_seconds = 1\nsuspended_retention_seconds = 1\n",
    .users = {{"alice"}, {"bob"}, {"decoy_alice", DECOY, "alice"}},
};

/* A ready image of account in tenant tid, with files under the tenant's
 * prefix; returns its id (caller frees). */
static char *
media(struct world *w, const char *tid, const char *account, const char *desc)
{
    return eu_it_pg_execf(
        w->db,
        "WITH n AS (SELECT eunha_next_id() AS id) INSERT INTO media_attachments"
        " (tenant_id, id, account_id, type, state, description, blurhash, meta, file_key,"
        " file_content_type, file_size, preview_key, preview_size, focus_x, focus_y)"
        " SELECT %s, n.id, %s, 'image', 'ready', %s%s%s, 'LEHV6nWB2yk8pyo0adR*.7kCMdnj',"
        " '{\"original\":{\"width\":640,\"height\":480}}',"
        " '%s/media_attachments/' || n.id || '/original.jpg', 'image/jpeg', 1000,"
        " '%s/media_attachments/' || n.id || '/small.webp', 100, 0.5, -0.25 FROM n"
        " RETURNING id::text",
        tid, account, desc ? "'" : "", desc ? desc : "NULL", desc ? "'" : "", tid, tid);
}

/* The local store's file of key (the server's default [media] root). */
static char *
file_path(struct world *w, const char *key)
{
    char *p;
    if (asprintf(&p, "%s/media/%s", w->s->dir, key) < 0)
        abort();
    return p;
}

/* Writes a few bytes as the store's file of key, making its folders. */
static void
put_key(struct world *w, const char *key)
{
    char *p = file_path(w, key);
    for (char *q = p + strlen(w->s->dir) + 1; (q = strchr(q, '/')) != NULL; q++) {
        *q = '\0';
        mkdir(p, 0700);
        *q = '/';
    }
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("bytes", f);
    fclose(f);
    free(p);
}

/* Writes a few bytes as the stored file of the media's style, as an upload
 * would have. */
static void
put_file(struct world *w, const char *tid, const char *id, const char *style)
{
    char key[256];
    snprintf(key, sizeof(key), "%s/media_attachments/%s/%s", tid, id, style);
    put_key(w, key);
}

static bool
key_exists(struct world *w, const char *key)
{
    char *p = file_path(w, key);
    bool ok = access(p, F_OK) == 0;
    free(p);
    return ok;
}

static bool
file_exists(struct world *w, const char *tid, const char *id, const char *style)
{
    char key[256];
    snprintf(key, sizeof(key), "%s/media_attachments/%s/%s", tid, id, style);
    return key_exists(w, key);
}

/* Waits up to 10 s for the file to go. */
static bool
file_gone(struct world *w, const char *tid, const char *id, const char *style)
{
    for (int i = 0; i < 100; i++) {
        if (!file_exists(w, tid, id, style))
            return true;
        eu_it_sleep_ms(100);
    }
    return false;
}

static void
api(struct world *w, struct eu_it_resp *r, const char *method, const char *path, const char *token,
    const char *body)
{
    eu_it_callf(w->s, r, HOST, method, token, body, "%s", path);
}

static const char *
jstr(json_t *v, const char *path)
{
    return json_string_value(eu_it_jpath(v, path));
}

/* ------------------------------------------------------------------ tests */

START_TEST(post_with_media_in_order)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *m1 = media(&w, w.tid, eu_it_id(&w, "alice"), "a cat");
    char *m2 = media(&w, w.tid, eu_it_id(&w, "alice"), NULL);
    struct eu_it_resp r = {0};
    char body[512];
    /* No text: media make a status. */
    snprintf(body, sizeof(body), "{\"status\":\"\",\"media_ids\":[\"%s\",\"%s\"]}", m2, m1);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *sid = strdup(eu_it_json_str(&r, "id"));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 2);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m2);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.id", m1);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "a cat");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.type", "image");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.blurhash", "LEHV6nWB2yk8pyo0adR*.7kCMdnj");
    ck_assert(json_is_null(eu_it_jpath(r.json, "media_attachments.0.description")));
    char want[256];
    snprintf(want, sizeof(want), "http://" HOST "/system/%s/media_attachments/%s/original.jpg",
             w.tid, m1);
    const char *url = jstr(r.json, "media_attachments.1.url");
    ck_assert_msg(url && strstr(url, want + strlen("http://" HOST)), "url %s", url);
    ck_assert(strstr(jstr(r.json, "media_attachments.1.preview_url"), "/small.webp"));
    ck_assert(json_real_value(eu_it_jpath(r.json, "media_attachments.1.meta.focus.x")) == 0.5);
    EU_IT_EXPECT_JINT(&r, "media_attachments.1.meta.original.width", 640);

    /* The same on a read (and from the render cache the second time). */
    for (int i = 0; i < 2; i++) {
        eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", sid);
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m2);
        EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "a cat");
    }
    /* A description changed on attached media (PUT /api/v1/media/:id
     * writes the row) shows at once: the status row gets a new version. */
    free(eu_it_pg_execf(
        w.db,
        "UPDATE media_attachments SET description = 'a black cat' WHERE tenant_id = %s"
        " AND id = %s",
        w.tid, m1));
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "a black cat");
    /* In the account's timeline too (one statement for the page). */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/statuses",
                eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.1.id", m1);

    /* Attached now: not again. */
    snprintf(body, sizeof(body), "{\"status\":\"again\",\"media_ids\":[\"%s\"]}", m1);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert(strstr(eu_it_json_str(&r, "error"), "not found or already attached"));
    eu_it_resp_free(&r);
    free(sid);
    free(m1);
    free(m2);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(media_rules)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *m[5];
    for (int i = 0; i < 5; i++)
        m[i] = media(&w, w.tid, eu_it_id(&w, "alice"), NULL);
    char *bobs = media(&w, w.tid, eu_it_id(&w, "bob"), NULL);
    char *decoys = media(&w, w.decoy_tid, eu_it_id(&w, "decoy_alice"), NULL);
    struct eu_it_resp r = {0};
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"status\":\"five\",\"media_ids\":[\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"]}", m[0], m[1],
             m[2], m[3], m[4]);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_str_eq(eu_it_json_str(&r, "error"), "Cannot attach more than 4 files");

    snprintf(body, sizeof(body), "{\"status\":\"not mine\",\"media_ids\":[\"%s\",\"%s\"]}", m[0],
             bobs);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    char want[200];
    snprintf(want, sizeof(want), "Media %s not found or already attached to another post", bobs);
    ck_assert_str_eq(eu_it_json_str(&r, "error"), want);

    /* Another tenant's media, in the same database: unknown here. */
    snprintf(body, sizeof(body), "{\"status\":\"decoy\",\"media_ids\":[\"%s\"]}", decoys);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);

    snprintf(body, sizeof(body),
             "{\"status\":\"poll\",\"media_ids\":[\"%s\"],"
             "\"poll\":{\"options\":[\"a\",\"b\"],\"expires_in\":3600}}",
             m[0]);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);

    free(eu_it_pg_execf(
        w.db, "UPDATE media_attachments SET state = 'failed' WHERE tenant_id = %s AND id = %s",
        w.tid, m[4]));
    snprintf(body, sizeof(body), "{\"status\":\"failed\",\"media_ids\":[\"%s\"]}", m[4]);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);

    /* Processing media may be attached (url null until ready). */
    free(eu_it_pg_execf(w.db,
                        "UPDATE media_attachments SET state = 'processing' WHERE tenant_id = %s"
                        " AND id = %s",
                        w.tid, m[3]));
    snprintf(body, sizeof(body),
             "{\"status\":\"four\",\"media_ids\":[\"%s\",\"%s\",\"%s\",\"%s\"]}", m[0], m[1], m[2],
             m[3]);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 4);
    ck_assert(json_is_null(eu_it_jpath(r.json, "media_attachments.3.url")));
    /* Nothing attached by the refused posts; the decoy's untouched. */
    char q[256];
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments WHERE tenant_id = %s"
             " AND status_id IS NOT NULL",
             w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 4);
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments WHERE tenant_id = %s"
             " AND status_id IS NULL",
             w.decoy_tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 1);
    eu_it_resp_free(&r);
    for (int i = 0; i < 5; i++)
        free(m[i]);
    free(bobs);
    free(decoys);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(edit_media_and_history)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *m1 = media(&w, w.tid, eu_it_id(&w, "alice"), "one");
    char *m2 = media(&w, w.tid, eu_it_id(&w, "alice"), "two");
    char *m3 = media(&w, w.tid, eu_it_id(&w, "alice"), "three");
    struct eu_it_resp r = {0};
    char body[512], path[128];
    snprintf(body, sizeof(body), "{\"status\":\"first\",\"media_ids\":[\"%s\",\"%s\"]}", m1, m2);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *sid = strdup(eu_it_json_str(&r, "id"));
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", sid);
    /* Bob cannot put his status's media on hers, nor she someone else's. */
    snprintf(body, sizeof(body), "{\"status\":\"second\",\"media_ids\":[\"%s\",\"%s\"]}", m3, m1);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 2);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m3);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.id", m1);
    /* A description changed after the edit: the history keeps the old. */
    free(eu_it_pg_execf(w.db,
                        "UPDATE media_attachments SET description = 'uno' WHERE tenant_id = %s"
                        " AND id = %s",
                        w.tid, m1));
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/history", sid);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.content", "<p>first</p>");
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.0.id", m1);
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.0.description", "one");
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.1.id", m2);
    EU_IT_EXPECT_JSTR(&r, "1.media_attachments.0.id", m3);
    EU_IT_EXPECT_JSTR(&r, "1.media_attachments.1.id", m1);
    EU_IT_EXPECT_JSTR(&r, "1.media_attachments.1.description", "one");
    /* The status itself shows the current description. */
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", sid);
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "uno");

    /* Removing every medium leaves a status that needs its text. */
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), "{\"status\":\"\"}");
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), "{\"status\":\"third\"}");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 0);
    /* m2, taken off by the first edit, is still the status's (for the
     * history), so it cannot go on another post. */
    snprintf(body, sizeof(body), "{\"status\":\"steal\",\"media_ids\":[\"%s\"]}", m2);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/history", sid);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 3);
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.1.id", m2);
    eu_it_resp_free(&r);
    free(sid);
    free(m1);
    free(m2);
    free(m3);
    eu_it_world_stop(&w);
}
END_TEST

/* One column of the medium's row, as text; caller frees. */
static char *
media_col(struct world *w, const char *id, const char *col)
{
    return eu_it_pg_execf(w->db,
                          "SELECT %s::text FROM media_attachments WHERE tenant_id = %s"
                          " AND id = %s",
                          col, w->tid, id);
}

/* PUT /api/v1/statuses/:id with media_attributes[] (Mastodon's edit of the
 * attached media's description and focus). */
START_TEST(edit_media_attributes)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *m1 = media(&w, w.tid, eu_it_id(&w, "alice"), "one");
    char *m2 = media(&w, w.tid, eu_it_id(&w, "alice"), "two");
    char *m3 = media(&w, w.tid, eu_it_id(&w, "alice"), "three");
    struct eu_it_resp r = {0};
    char body[4096], path[128];
    snprintf(body, sizeof(body), "{\"status\":\"first\",\"media_ids\":[\"%s\",\"%s\"]}", m1, m2);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *sid = strdup(eu_it_json_str(&r, "id"));
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", sid);

    /* JSON: m1's description and focus change; m2 keeps its own. */
    snprintf(body, sizeof(body),
             "{\"status\":\"second\",\"media_ids\":[\"%s\",\"%s\"],\"media_attributes\":"
             "[{\"id\":\"%s\",\"description\":\"uno\",\"focus\":\"-0.5,0.75\"}]}",
             m1, m2, m1);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m1);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.description", "uno");
    ck_assert(json_real_value(eu_it_jpath(r.json, "media_attachments.0.meta.focus.x")) == -0.5);
    ck_assert(json_real_value(eu_it_jpath(r.json, "media_attachments.0.meta.focus.y")) == 0.75);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "two");
    /* Seen by others, and on the row itself. GET /api/v1/media/:id shows
     * only unattached uploads (Mastodon's where(status_id: nil)): 404. */
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.description", "uno");
    char *v = media_col(&w, m1, "description");
    ck_assert_str_eq(v, "uno");
    free(v);
    v = media_col(&w, m1, "focus_x || ',' || focus_y");
    ck_assert_str_eq(v, "-0.5,0.75");
    free(v);
    char mpath[128];
    snprintf(mpath, sizeof(mpath), "/api/v1/media/%s", m1);
    api(&w, &r, "GET", mpath, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);
    /* The history: the original showed "one", this version "uno". */
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/history", sid);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.0.description", "one");
    EU_IT_EXPECT_JSTR(&r, "1.media_attachments.0.description", "uno");
    EU_IT_EXPECT_JSTR(&r, "1.media_attachments.1.description", "two");
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", sid);

    /* An id that is not among the edit's media_ids (m3 is hers but not
     * attached by this edit): 422, nothing changed. */
    snprintf(body, sizeof(body),
             "{\"status\":\"third\",\"media_ids\":[\"%s\"],\"media_attributes\":"
             "[{\"id\":\"%s\",\"description\":\"one again\"},"
             "{\"id\":\"%s\",\"description\":\"tres\"}]}",
             m1, m1, m3);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert(strstr(eu_it_json_str(&r, "error"), m3));
    /* A description past the limit, and a bad focus: 422. */
    char *longd = malloc(1502);
    memset(longd, 'x', 1501);
    longd[1501] = '\0';
    snprintf(body, sizeof(body),
             "{\"status\":\"third\",\"media_ids\":[\"%s\"],\"media_attributes\":"
             "[{\"id\":\"%s\",\"description\":\"%s\"}]}",
             m1, m1, longd);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert(strstr(eu_it_json_str(&r, "error"), "Description is too long"));
    free(longd);
    snprintf(body, sizeof(body),
             "{\"status\":\"third\",\"media_ids\":[\"%s\"],\"media_attributes\":"
             "[{\"id\":\"%s\",\"focus\":\"2,0\"}]}",
             m1, m1);
    api(&w, &r, "PUT", path, eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "GET", path, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_JSTR(&r, "content", "<p>second</p>");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 2);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.description", "uno");
    v = media_col(&w, m3, "coalesce(status_id::text, 'none') || description");
    ck_assert_str_eq(v, "nonethree");
    free(v);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/history", sid);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 2);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", sid);

    /* Form encoding, as Rack reads media_attributes[][id]=...: m2 gets a
     * description, m3 comes on with one; m1 goes (position -1). */
    char *d2 = eu_it_urlencode("dos & more");
    snprintf(body, sizeof(body),
             "status=fourth&media_ids[]=%s&media_ids[]=%s"
             "&media_attributes[][id]=%s&media_attributes[][description]=%s"
             "&media_attributes[][id]=%s&media_attributes[][description]=tres"
             "&media_attributes[][focus]=0.25,-1",
             m2, m3, m2, d2, m3);
    free(d2);
    char auth[512];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", eu_it_tok(&w, "alice"));
    const char *h[] = {auth, "Content-Type: application/x-www-form-urlencoded", NULL};
    ck_assert_int_eq(eu_it_http_raw(&r, "PUT", w.s->public_port, HOST, path, h, body), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 2);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m2);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.description", "dos & more");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.id", m3);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "tres");
    ck_assert(json_real_value(eu_it_jpath(r.json, "media_attachments.1.meta.focus.x")) == 0.25);
    ck_assert(json_real_value(eu_it_jpath(r.json, "media_attachments.1.meta.focus.y")) == -1);
    /* Form with indexes (media_attributes[0][id]) reads the same. */
    snprintf(body, sizeof(body),
             "status=fifth&media_ids[]=%s&media_ids[]=%s"
             "&media_attributes[0][id]=%s&media_attributes[0][description]=dos",
             m2, m3, m2);
    ck_assert_int_eq(eu_it_http_raw(&r, "PUT", w.s->public_port, HOST, path, h, body), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.description", "dos");
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "tres");
    /* Each version kept what it showed. */
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/history", sid);
    api(&w, &r, "GET", path, eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 4);
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.0.description", "one");
    EU_IT_EXPECT_JSTR(&r, "1.media_attachments.0.description", "uno");
    EU_IT_EXPECT_JSTR(&r, "2.media_attachments.0.description", "dos & more");
    EU_IT_EXPECT_JSTR(&r, "2.media_attachments.1.description", "tres");
    EU_IT_EXPECT_JSTR(&r, "3.media_attachments.0.description", "dos");
    eu_it_resp_free(&r);
    free(sid);
    free(m1);
    free(m2);
    free(m3);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(delete_removes_media)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *m1 = media(&w, w.tid, eu_it_id(&w, "alice"), NULL);
    char *m2 = media(&w, w.tid, eu_it_id(&w, "alice"), NULL);
    char *decoys = media(&w, w.decoy_tid, eu_it_id(&w, "decoy_alice"), NULL);
    put_file(&w, w.tid, m1, "original.jpg");
    put_file(&w, w.tid, m1, "small.webp");
    put_file(&w, w.tid, m2, "original.jpg");
    put_file(&w, w.decoy_tid, decoys, "original.jpg");
    free(eu_it_pg_execf(
        w.db, "UPDATE instance_counters SET media_bytes = 5000 WHERE tenant_id IN (%s, %s)", w.tid,
        w.decoy_tid));
    struct eu_it_resp r = {0};
    char body[512], path[128], q[512];
    snprintf(body, sizeof(body), "{\"status\":\"bye\",\"media_ids\":[\"%s\",\"%s\"]}", m1, m2);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", eu_it_json_str(&r, "id"));
    api(&w, &r, "DELETE", path, eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* The deleted status comes back with its media, as Mastodon answers. */
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 2);
    snprintf(q, sizeof(q), "SELECT count(*) FROM media_attachments WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);
    /* 2 x (1000 + 100) bytes off this tenant's usage, none off the decoy's. */
    snprintf(q, sizeof(q), "SELECT media_bytes FROM instance_counters WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 2800);
    snprintf(q, sizeof(q), "SELECT media_bytes FROM instance_counters WHERE tenant_id = %s",
             w.decoy_tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 5000);
    snprintf(q, sizeof(q), "SELECT count(*) FROM media_attachments WHERE tenant_id = %s",
             w.decoy_tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 1);
    /* The files go in the background; the decoy's stay. */
    ck_assert(file_gone(&w, w.tid, m1, "original.jpg"));
    ck_assert(file_gone(&w, w.tid, m1, "small.webp"));
    ck_assert(file_gone(&w, w.tid, m2, "original.jpg"));
    ck_assert(file_exists(&w, w.decoy_tid, decoys, "original.jpg"));
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM jobs WHERE tenant_id = %s"
             " AND kind = 'media_files_delete'",
             w.tid);
    long left = 1;
    for (int i = 0; i < 100 && left; i++) {
        eu_it_sleep_ms(100);
        left = eu_it_pg_exec_long(w.db, q);
    }
    ck_assert_int_eq(left, 0);
    eu_it_resp_free(&r);
    free(m1);
    free(m2);
    free(decoys);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(scheduled_with_media)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *m1 = media(&w, w.tid, eu_it_id(&w, "alice"), "later");
    struct eu_it_resp r = {0};
    char body[512], q[512];
    snprintf(
        body, sizeof(body),
        "{\"status\":\"soon\",\"media_ids\":[\"%s\"],\"scheduled_at\":\"2099-01-01T00:00:00Z\"}",
        m1);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m1);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.description", "later");
    EU_IT_EXPECT_JSTR(&r, "params.media_ids.0", m1);
    char *sched = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/scheduled_statuses/%s",
                sched);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m1);
    /* Held by the scheduled status: not attachable elsewhere. */
    snprintf(body, sizeof(body), "{\"status\":\"now\",\"media_ids\":[\"%s\"]}", m1);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_ERROR(&r, 422);
    /* Published: the status carries it. */
    free(eu_it_pg_execf(
        w.db, "UPDATE scheduled_statuses SET scheduled_at = now() WHERE tenant_id = %s", w.tid));
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments m JOIN statuses s"
             " ON s.tenant_id = m.tenant_id AND s.id = m.status_id WHERE m.tenant_id = %s"
             " AND m.scheduled_status_id IS NULL",
             w.tid);
    long n = 0;
    for (int i = 0; i < 100 && n == 0; i++) {
        eu_it_sleep_ms(100);
        n = eu_it_pg_exec_long(w.db, q);
    }
    ck_assert_int_eq(n, 1);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/accounts/%s/statuses",
                eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.0.id", m1);
    eu_it_resp_free(&r);
    free(sched);
    free(m1);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(unattached_cleanup)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *old = media(&w, w.tid, eu_it_id(&w, "alice"), NULL);
    char *fresh = media(&w, w.tid, eu_it_id(&w, "alice"), NULL);
    char *attached = media(&w, w.tid, eu_it_id(&w, "alice"), NULL);
    char *decoy_fresh = media(&w, w.decoy_tid, eu_it_id(&w, "decoy_alice"), NULL);
    struct eu_it_resp r = {0};
    char body[256], q[512];
    snprintf(body, sizeof(body), "{\"status\":\"keep\",\"media_ids\":[\"%s\"]}", attached);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    put_file(&w, w.tid, old, "original.jpg");
    put_file(&w, w.tid, fresh, "original.jpg");
    free(eu_it_pg_execf(
        w.db, "UPDATE instance_counters SET media_bytes = 10000 WHERE tenant_id = %s", w.tid));
    /* A day and a bit old: the placement's poll finds it and the task
     * removes it. */
    free(eu_it_pg_execf(w.db,
                        "UPDATE media_attachments SET created_at = now() - interval '25 hours'"
                        " WHERE tenant_id = %s AND id IN (%s, %s)",
                        w.tid, old, attached));
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments WHERE tenant_id = %s"
             " AND id = %s",
             w.tid, old);
    long n = 1;
    for (int i = 0; i < 100 && n; i++) {
        eu_it_sleep_ms(100);
        n = eu_it_pg_exec_long(w.db, q);
    }
    ck_assert_int_eq(n, 0);
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments WHERE (tenant_id = %s"
             " AND id IN (%s, %s)) OR (tenant_id = %s AND id = %s)",
             w.tid, fresh, attached, w.decoy_tid, decoy_fresh);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 3);
    snprintf(q, sizeof(q), "SELECT media_bytes FROM instance_counters WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 10000 - 1100);
    ck_assert(file_gone(&w, w.tid, old, "original.jpg"));
    ck_assert(file_exists(&w, w.tid, fresh, "original.jpg"));
    eu_it_resp_free(&r);
    free(old);
    free(fresh);
    free(attached);
    free(decoy_fresh);
    eu_it_world_stop(&w);
}
END_TEST

/* The Note peers fetch (and receive) carries Mastodon's attachment. */
START_TEST(note_attachment)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *m1 = media(&w, w.tid, eu_it_id(&w, "alice"), "a cat");
    struct eu_it_resp r = {0};
    char body[256], path[256];
    snprintf(body, sizeof(body), "{\"status\":\"look\",\"media_ids\":[\"%s\"]}", m1);
    api(&w, &r, "POST", "/api/v1/statuses", eu_it_tok(&w, "alice"), body);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/users/alice/statuses/%s", eu_it_json_str(&r, "id"));
    const char *h[] = {"Accept: application/activity+json", NULL};
    ck_assert_int_eq(eu_it_http_raw(&r, "GET", w.s->public_port, HOST, path, h, NULL), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "attachment")), 1);
    EU_IT_EXPECT_JSTR(&r, "attachment.0.type", "Document");
    EU_IT_EXPECT_JSTR(&r, "attachment.0.mediaType", "image/jpeg");
    EU_IT_EXPECT_JSTR(&r, "attachment.0.name", "a cat");
    EU_IT_EXPECT_JSTR(&r, "attachment.0.blurhash", "LEHV6nWB2yk8pyo0adR*.7kCMdnj");
    EU_IT_EXPECT_JINT(&r, "attachment.0.width", 640);
    EU_IT_EXPECT_JINT(&r, "attachment.0.height", 480);
    ck_assert(json_real_value(eu_it_jpath(r.json, "attachment.0.focalPoint.0")) == 0.5);
    ck_assert(json_real_value(eu_it_jpath(r.json, "attachment.0.focalPoint.1")) == -0.25);
    char want[256];
    snprintf(want, sizeof(want), "/system/%s/media_attachments/%s/original.jpg", w.tid, m1);
    const char *url = json_string_value(eu_it_jpath(r.json, "attachment.0.url"));
    ck_assert_msg(url && strstr(url, want), "url %s", url);
    eu_it_resp_free(&r);
    free(m1);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------------ avatars */

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
    char **b = arg;
    size_t old = *b ? strlen(*b) : 0;
    *b = realloc(*b, old + size * n + 1);
    memcpy(*b + old, p, size * n);
    (*b)[old + size * n] = '\0';
    return size * n;
}

/* PATCH update_credentials with one file part (and a display name);
 * returns the status and *out the JSON body (caller decrefs). */
static long
patch_file(struct world *w, const char *field, const unsigned char *data, size_t len, json_t **out)
{
    CURL *c = curl_easy_init();
    char url[256], auth[512];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/accounts/update_credentials",
             w->s->public_port);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", eu_it_tok(w, "alice"));
    struct curl_slist *hl = curl_slist_append(NULL, auth);
    hl = curl_slist_append(hl, "Host: " HOST);
    hl = curl_slist_append(hl, "Expect:");
    curl_mime *mime = curl_mime_init(c);
    curl_mimepart *part = curl_mime_addpart(mime);
    curl_mime_name(part, field);
    curl_mime_data(part, (const char *)data, len);
    curl_mime_filename(part, "me.png");
    curl_mime_type(part, "image/png");
    part = curl_mime_addpart(mime);
    curl_mime_name(part, "display_name");
    curl_mime_data(part, "Alice A.", CURL_ZERO_TERMINATED);
    char *body = NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PATCH");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_mime_free(mime);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    *out = body ? json_loads(body, 0, NULL) : NULL;
    ck_assert_msg(*out != NULL, "status %ld, body %s", status, body ? body : "");
    free(body);
    return status;
}

/* GETs the /system/ path of url; the answer in r. */
static void
get_system(struct world *w, struct eu_it_resp *r, const char *url)
{
    const char *p = url ? strstr(url, "/system/") : NULL;
    ck_assert_msg(p != NULL, "not a /system/ URL: %s", url ? url : "(null)");
    ck_assert_int_eq(eu_it_http_raw(r, "GET", w->s->public_port, HOST, p, NULL, NULL), 0);
}

/* Waits up to 10 s for url to answer 404. */
static void
expect_gone(struct world *w, struct eu_it_resp *r, const char *url)
{
    for (int i = 0; i < 100; i++) {
        get_system(w, r, url);
        if (r->status == 404)
            break;
        eu_it_sleep_ms(100);
    }
    EU_IT_EXPECT_STATUS(r, 404);
}

START_TEST(avatar_and_header)
{
    struct world w;
    eu_it_world_start(&w, &world);
    size_t len;
    unsigned char *png = eu_it_make_png(800, 600, &len);
    json_t *o = NULL;
    ck_assert_int_eq(patch_file(&w, "avatar", png, len, &o), 200);
    char *avatar = strdup(jstr(o, "avatar"));
    char want[128];
    snprintf(want, sizeof(want), "/system/%s/accounts/%s/avatar-", w.tid, eu_it_id(&w, "alice"));
    ck_assert_msg(strstr(avatar, want) && strstr(avatar, ".webp"), "avatar %s", avatar);
    ck_assert_str_eq(jstr(o, "avatar_static"), avatar);
    /* Cropped to a square as Mastodon's "400x400#": 800x600 gives 400x400. */
    struct eu_it_resp r = {0};
    get_system(&w, &r, jstr(o, "avatar_static"));
    EU_IT_EXPECT_STATUS(&r, 200);
    int aw = 0, ah = 0;
    ck_assert(WebPGetInfo((const uint8_t *)r.body, r.body_len, &aw, &ah));
    ck_assert_int_eq(aw, 400);
    ck_assert_int_eq(ah, 400);
    ck_assert_str_eq(jstr(o, "display_name"), "Alice A.");
    ck_assert_ptr_nonnull(strstr(jstr(o, "header"), "/headers/original/missing.png"));
    json_decref(o);
    /* Served, as WebP. */
    get_system(&w, &r, avatar);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Content-Type"), "image/webp"));
    ck_assert(r.body_len > 30 && memcmp(r.body, "RIFF", 4) == 0);
    /* Everyone sees it, and the actor document's icon is it. */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s",
                eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JSTR(&r, "avatar", avatar);
    const char *h[] = {"Accept: application/activity+json", NULL};
    ck_assert_int_eq(eu_it_http_raw(&r, "GET", w.s->public_port, HOST, "/users/alice", h, NULL), 0);
    EU_IT_EXPECT_JSTR(&r, "icon.url", avatar);

    /* A header, then a new avatar: the old avatar's file goes. */
    ck_assert_int_eq(patch_file(&w, "header", png, len, &o), 200);
    ck_assert_ptr_nonnull(strstr(jstr(o, "header"), "/header-"));
    /* Fitted within 1500x500 ("1500x500>"), not cropped: 800x600 gives 667x500. */
    get_system(&w, &r, jstr(o, "header"));
    ck_assert(WebPGetInfo((const uint8_t *)r.body, r.body_len, &aw, &ah));
    ck_assert_int_eq(aw, 667);
    ck_assert_int_eq(ah, 500);
    ck_assert_str_eq(jstr(o, "avatar"), avatar);
    json_decref(o);
    ck_assert_int_eq(patch_file(&w, "avatar", png, len, &o), 200);
    char *avatar2 = strdup(jstr(o, "avatar"));
    json_decref(o);
    ck_assert_str_ne(avatar, avatar2);
    expect_gone(&w, &r, avatar);

    /* Not an image: 422, nothing changed. */
    ck_assert_int_eq(patch_file(&w, "avatar", (const unsigned char *)"hello, world", 12, &o), 422);
    json_decref(o);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s",
                eu_it_id(&w, "alice"));
    EU_IT_EXPECT_JSTR(&r, "avatar", avatar2);

    /* DELETE /api/v1/profile/avatar: the default again, the file gone. */
    api(&w, &r, "DELETE", "/api/v1/profile/avatar", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "avatar"), "/avatars/original/missing.png"));
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "header"), "/header-"));
    expect_gone(&w, &r, avatar2);
    api(&w, &r, "DELETE", "/api/v1/profile/header", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "header"), "/headers/original/missing.png"));
    /* The decoy's namesake keeps the default. */
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/api/v1/accounts/%s",
                eu_it_id(&w, "decoy_alice"));
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "avatar"), "/avatars/original/missing.png"));
    eu_it_resp_free(&r);
    free(avatar);
    free(avatar2);
    free(png);
    eu_it_world_stop(&w);
}
END_TEST

/* Waits up to 20 s for the file of key to go. */
static bool
key_gone(struct world *w, const char *key)
{
    for (int i = 0; i < 200; i++) {
        if (!key_exists(w, key))
            return true;
        eu_it_sleep_ms(100);
    }
    return false;
}

/* An avatar key set on account in tenant tid, with its file. Caller frees. */
static char *
avatar_of(struct world *w, const char *tid, const char *account)
{
    char *key;
    if (asprintf(&key, "%s/accounts/%s/avatar-test.webp", tid, account) < 0)
        abort();
    put_key(w, key);
    free(eu_it_pg_execf(w->db,
                        "UPDATE accounts SET avatar_url = '%s' WHERE tenant_id = %s AND id = %s",
                        key, tid, account));
    return key;
}

/* A purged account's and a deleted tenant's files go; the decoy's stay. */
START_TEST(purges_remove_files)
{
    struct world w;
    eu_it_world_start(&w, &world);
    char *m = media(&w, w.tid, eu_it_id(&w, "bob"), NULL),
         *dm = media(&w, w.decoy_tid, eu_it_id(&w, "decoy_alice"), NULL);
    put_file(&w, w.tid, m, "original.jpg");
    put_file(&w, w.decoy_tid, dm, "original.jpg");
    char *bob_avatar = avatar_of(&w, w.tid, eu_it_id(&w, "bob"));
    char *decoy_avatar = avatar_of(&w, w.decoy_tid, eu_it_id(&w, "decoy_alice"));
    struct eu_it_resp r = {0};
    char path[256], q[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/" HOST "/accounts/%s/suspend",
             eu_it_id(&w, "bob"));
    eu_it_admin(w.s, "POST", path, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* Purged after its retention (1 s here). */
    ck_assert(key_gone(&w, bob_avatar));
    snprintf(q, sizeof(q), "SELECT count(*) FROM media_attachments WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 0);
    ck_assert(file_exists(&w, w.decoy_tid, dm, "original.jpg"));

    /* A tenant deleted: its files with its rows. */
    json_decref(eu_it_tenant_create(w.s, "gone.example", "Gone"));
    eu_it_account_create(w.s, "gone.example", "carol");
    char *gtid = eu_it_tenant_id(w.s, "gone.example");
    char *carol = eu_it_account_id(w.s, "gone.example", "carol");
    char *gm = media(&w, gtid, carol, NULL);
    put_file(&w, gtid, gm, "original.jpg");
    put_file(&w, gtid, gm, "small.webp");
    char *carol_avatar = avatar_of(&w, gtid, carol);
    eu_it_admin(w.s, "DELETE", "/admin/v1/tenants/gone.example?confirm=gone.example", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    ck_assert(file_gone(&w, gtid, gm, "original.jpg"));
    ck_assert(file_gone(&w, gtid, gm, "small.webp"));
    ck_assert(key_gone(&w, carol_avatar));
    ck_assert(file_exists(&w, w.decoy_tid, dm, "original.jpg"));
    ck_assert(key_exists(&w, decoy_avatar));
    /* Its rows too, before the server stops. */
    for (int i = 0; i < 200; i++) {
        eu_it_admin(w.s, "GET", "/admin/v1/tenants/gone.example", NULL, &r);
        if (r.status == 404)
            break;
        eu_it_sleep_ms(100);
    }
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_resp_free(&r);
    free(m), free(dm), free(bob_avatar), free(decoy_avatar), free(gtid), free(carol), free(gm);
    free(carol_avatar);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("media_attach");
    EU_IT_ADD_TCASE(s, post_with_media_in_order, TIMEOUT);
    EU_IT_ADD_TCASE(s, media_rules, TIMEOUT);
    EU_IT_ADD_TCASE(s, edit_media_and_history, TIMEOUT);
    EU_IT_ADD_TCASE(s, edit_media_attributes, TIMEOUT);
    EU_IT_ADD_TCASE(s, delete_removes_media, TIMEOUT);
    EU_IT_ADD_TCASE(s, scheduled_with_media, TIMEOUT);
    EU_IT_ADD_TCASE(s, unattached_cleanup, TIMEOUT);
    EU_IT_ADD_TCASE(s, note_attachment, TIMEOUT);
    EU_IT_ADD_TCASE(s, avatar_and_header, TIMEOUT);
    EU_IT_ADD_TCASE(s, purges_remove_files, TIMEOUT);
    return eu_it_run_suite(s);
}
