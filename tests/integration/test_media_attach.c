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
#include "harness.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define HOST "m.example"
#define DECOY "decoy.example"

struct world {
    struct eu_it_server *s;
    char *alice, *bob;       /* tokens */
    char *alice_id, *bob_id; /* account ids */
    char *decoy_id;          /* an account of the decoy tenant */
    char *db, *tid, *decoy_tid;
};

static void
world_start(struct world *w)
{
    memset(w, 0, sizeof(*w));
    struct eu_it_opts o = {.extra_toml = "[workers]\nqueue_idle_poll_seconds = 1\n"};
    w->s = eu_it_server_start_opts(&o);
    json_decref(eu_it_tenant_create(w->s, HOST, "Media"));
    json_decref(eu_it_tenant_create(w->s, DECOY, "Decoy"));
    eu_it_account_create(w->s, HOST, "alice");
    eu_it_account_create(w->s, HOST, "bob");
    eu_it_account_create(w->s, DECOY, "alice");
    w->alice = eu_it_user_token(w->s, HOST, "alice", "read write");
    w->bob = eu_it_user_token(w->s, HOST, "bob", "read write");
    w->alice_id = eu_it_account_id(w->s, HOST, "alice");
    w->bob_id = eu_it_account_id(w->s, HOST, "bob");
    w->decoy_id = eu_it_account_id(w->s, DECOY, "alice");
    w->db = eu_it_tenant_database(w->s, HOST);
    w->tid = eu_it_tenant_id(w->s, HOST);
    w->decoy_tid = eu_it_tenant_id(w->s, DECOY);
    char *decoy_db = eu_it_tenant_database(w->s, DECOY);
    ck_assert_str_eq(decoy_db, w->db); /* one placement: isolation is by tenant_id */
    free(decoy_db);
}

static void
world_stop(struct world *w)
{
    ck_assert_int_eq(eu_it_server_stop(w->s), 0);
    eu_it_server_free(w->s);
    char *all[] = {w->alice,    w->bob, w->alice_id, w->bob_id,
                   w->decoy_id, w->db,  w->tid,      w->decoy_tid};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
}

static char *sql(struct world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The first cell of the statement's first row, or NULL; caller frees. */
static char *
sql(struct world *w, const char *fmt, ...)
{
    char q[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q, sizeof(q), fmt, ap);
    va_end(ap);
    return eu_it_pg_exec(w->db, q);
}

static long
sql_long(struct world *w, const char *q)
{
    return eu_it_pg_exec_long(w->db, q);
}

/* A ready image of account in tenant tid, with files under the tenant's
 * prefix; returns its id (caller frees). */
static char *
media(struct world *w, const char *tid, const char *account, const char *desc)
{
    return sql(w,
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
    world_start(&w);
    char *m1 = media(&w, w.tid, w.alice_id, "a cat");
    char *m2 = media(&w, w.tid, w.alice_id, NULL);
    struct eu_it_resp r = {0};
    char body[512];
    /* No text: media make a status. */
    snprintf(body, sizeof(body), "{\"status\":\"\",\"media_ids\":[\"%s\",\"%s\"]}", m2, m1);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
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
        eu_it_callf(w.s, &r, HOST, "GET", w.bob, NULL, "/api/v1/statuses/%s", sid);
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m2);
        EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "a cat");
    }
    /* A description changed on attached media (PUT /api/v1/media/:id
     * writes the row) shows at once: the status row gets a new version. */
    free(sql(&w,
             "UPDATE media_attachments SET description = 'a black cat' WHERE tenant_id = %s"
             " AND id = %s",
             w.tid, m1));
    eu_it_callf(w.s, &r, HOST, "GET", w.bob, NULL, "/api/v1/statuses/%s", sid);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "a black cat");
    /* In the account's timeline too (one statement for the page). */
    eu_it_callf(w.s, &r, HOST, "GET", w.bob, NULL, "/api/v1/accounts/%s/statuses", w.alice_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.1.id", m1);

    /* Attached now: not again. */
    snprintf(body, sizeof(body), "{\"status\":\"again\",\"media_ids\":[\"%s\"]}", m1);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert(strstr(eu_it_json_str(&r, "error"), "not found or already attached"));
    eu_it_resp_free(&r);
    free(sid);
    free(m1);
    free(m2);
    world_stop(&w);
}
END_TEST

START_TEST(media_rules)
{
    struct world w;
    world_start(&w);
    char *m[5];
    for (int i = 0; i < 5; i++)
        m[i] = media(&w, w.tid, w.alice_id, NULL);
    char *bobs = media(&w, w.tid, w.bob_id, NULL);
    char *decoys = media(&w, w.decoy_tid, w.decoy_id, NULL);
    struct eu_it_resp r = {0};
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"status\":\"five\",\"media_ids\":[\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"]}", m[0], m[1],
             m[2], m[3], m[4]);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_str_eq(eu_it_json_str(&r, "error"), "Cannot attach more than 4 files");

    snprintf(body, sizeof(body), "{\"status\":\"not mine\",\"media_ids\":[\"%s\",\"%s\"]}", m[0],
             bobs);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_ERROR(&r, 422);
    char want[200];
    snprintf(want, sizeof(want), "Media %s not found or already attached to another post", bobs);
    ck_assert_str_eq(eu_it_json_str(&r, "error"), want);

    /* Another tenant's media, in the same database: unknown here. */
    snprintf(body, sizeof(body), "{\"status\":\"decoy\",\"media_ids\":[\"%s\"]}", decoys);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_ERROR(&r, 422);

    snprintf(body, sizeof(body),
             "{\"status\":\"poll\",\"media_ids\":[\"%s\"],"
             "\"poll\":{\"options\":[\"a\",\"b\"],\"expires_in\":3600}}",
             m[0]);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_ERROR(&r, 422);

    free(sql(&w, "UPDATE media_attachments SET state = 'failed' WHERE tenant_id = %s AND id = %s",
             w.tid, m[4]));
    snprintf(body, sizeof(body), "{\"status\":\"failed\",\"media_ids\":[\"%s\"]}", m[4]);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_ERROR(&r, 422);

    /* Processing media may be attached (url null until ready). */
    free(sql(&w,
             "UPDATE media_attachments SET state = 'processing' WHERE tenant_id = %s"
             " AND id = %s",
             w.tid, m[3]));
    snprintf(body, sizeof(body),
             "{\"status\":\"four\",\"media_ids\":[\"%s\",\"%s\",\"%s\",\"%s\"]}", m[0], m[1], m[2],
             m[3]);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 4);
    ck_assert(json_is_null(eu_it_jpath(r.json, "media_attachments.3.url")));
    /* Nothing attached by the refused posts; the decoy's untouched. */
    char q[256];
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments WHERE tenant_id = %s"
             " AND status_id IS NOT NULL",
             w.tid);
    ck_assert_int_eq(sql_long(&w, q), 4);
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments WHERE tenant_id = %s"
             " AND status_id IS NULL",
             w.decoy_tid);
    ck_assert_int_eq(sql_long(&w, q), 1);
    eu_it_resp_free(&r);
    for (int i = 0; i < 5; i++)
        free(m[i]);
    free(bobs);
    free(decoys);
    world_stop(&w);
}
END_TEST

START_TEST(edit_media_and_history)
{
    struct world w;
    world_start(&w);
    char *m1 = media(&w, w.tid, w.alice_id, "one");
    char *m2 = media(&w, w.tid, w.alice_id, "two");
    char *m3 = media(&w, w.tid, w.alice_id, "three");
    struct eu_it_resp r = {0};
    char body[512], path[128];
    snprintf(body, sizeof(body), "{\"status\":\"first\",\"media_ids\":[\"%s\",\"%s\"]}", m1, m2);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *sid = strdup(eu_it_json_str(&r, "id"));
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", sid);
    /* Bob cannot put his status's media on hers, nor she someone else's. */
    snprintf(body, sizeof(body), "{\"status\":\"second\",\"media_ids\":[\"%s\",\"%s\"]}", m3, m1);
    api(&w, &r, "PUT", path, w.alice, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 2);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m3);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.id", m1);
    /* A description changed after the edit: the history keeps the old. */
    free(sql(&w,
             "UPDATE media_attachments SET description = 'uno' WHERE tenant_id = %s"
             " AND id = %s",
             w.tid, m1));
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/history", sid);
    api(&w, &r, "GET", path, w.alice, NULL);
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
    api(&w, &r, "GET", path, w.bob, NULL);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.1.description", "uno");

    /* Removing every medium leaves a status that needs its text. */
    api(&w, &r, "PUT", path, w.alice, "{\"status\":\"\"}");
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "PUT", path, w.alice, "{\"status\":\"third\"}");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 0);
    /* m2, taken off by the first edit, is still the status's (for the
     * history), so it cannot go on another post. */
    snprintf(body, sizeof(body), "{\"status\":\"steal\",\"media_ids\":[\"%s\"]}", m2);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_ERROR(&r, 422);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/history", sid);
    api(&w, &r, "GET", path, w.alice, NULL);
    ck_assert_int_eq(json_array_size(r.json), 3);
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.1.id", m2);
    eu_it_resp_free(&r);
    free(sid);
    free(m1);
    free(m2);
    free(m3);
    world_stop(&w);
}
END_TEST

START_TEST(delete_removes_media)
{
    struct world w;
    world_start(&w);
    char *m1 = media(&w, w.tid, w.alice_id, NULL);
    char *m2 = media(&w, w.tid, w.alice_id, NULL);
    char *decoys = media(&w, w.decoy_tid, w.decoy_id, NULL);
    free(sql(&w, "UPDATE instance_counters SET media_bytes = 5000 WHERE tenant_id IN (%s, %s)",
             w.tid, w.decoy_tid));
    struct eu_it_resp r = {0};
    char body[512], path[128], q[512];
    snprintf(body, sizeof(body), "{\"status\":\"bye\",\"media_ids\":[\"%s\",\"%s\"]}", m1, m2);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/api/v1/statuses/%s", eu_it_json_str(&r, "id"));
    api(&w, &r, "DELETE", path, w.alice, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* The deleted status comes back with its media, as Mastodon answers. */
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "media_attachments")), 2);
    snprintf(q, sizeof(q), "SELECT count(*) FROM media_attachments WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(sql_long(&w, q), 0);
    /* 2 x (1000 + 100) bytes off this tenant's usage, none off the decoy's. */
    snprintf(q, sizeof(q), "SELECT media_bytes FROM instance_counters WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(sql_long(&w, q), 2800);
    snprintf(q, sizeof(q), "SELECT media_bytes FROM instance_counters WHERE tenant_id = %s",
             w.decoy_tid);
    ck_assert_int_eq(sql_long(&w, q), 5000);
    snprintf(q, sizeof(q), "SELECT count(*) FROM media_attachments WHERE tenant_id = %s",
             w.decoy_tid);
    ck_assert_int_eq(sql_long(&w, q), 1);
    /* The files' job was queued with the four keys (and run: gone, or
     * failed without a store on a build that has none). */
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM jobs WHERE tenant_id = %s"
             " AND kind = 'media_files_delete' AND jsonb_array_length(payload -> 'keys') = 4"
             " AND payload::text LIKE '%%%s/original.jpg%%'",
             w.tid, m1);
    long jobs = sql_long(&w, q);
    ck_assert_int_le(jobs, 1);
    eu_it_resp_free(&r);
    free(m1);
    free(m2);
    free(decoys);
    world_stop(&w);
}
END_TEST

START_TEST(scheduled_with_media)
{
    struct world w;
    world_start(&w);
    char *m1 = media(&w, w.tid, w.alice_id, "later");
    struct eu_it_resp r = {0};
    char body[512], q[512];
    snprintf(
        body, sizeof(body),
        "{\"status\":\"soon\",\"media_ids\":[\"%s\"],\"scheduled_at\":\"2099-01-01T00:00:00Z\"}",
        m1);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m1);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.description", "later");
    EU_IT_EXPECT_JSTR(&r, "params.media_ids.0", m1);
    char *sched = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "GET", w.alice, NULL, "/api/v1/scheduled_statuses/%s", sched);
    EU_IT_EXPECT_JSTR(&r, "media_attachments.0.id", m1);
    /* Held by the scheduled status: not attachable elsewhere. */
    snprintf(body, sizeof(body), "{\"status\":\"now\",\"media_ids\":[\"%s\"]}", m1);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_ERROR(&r, 422);
    /* Published: the status carries it. */
    free(sql(&w, "UPDATE scheduled_statuses SET scheduled_at = now() WHERE tenant_id = %s", w.tid));
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments m JOIN statuses s"
             " ON s.tenant_id = m.tenant_id AND s.id = m.status_id WHERE m.tenant_id = %s"
             " AND m.scheduled_status_id IS NULL",
             w.tid);
    long n = 0;
    for (int i = 0; i < 100 && n == 0; i++) {
        eu_it_sleep_ms(100);
        n = sql_long(&w, q);
    }
    ck_assert_int_eq(n, 1);
    eu_it_callf(w.s, &r, HOST, "GET", w.alice, NULL, "/api/v1/accounts/%s/statuses", w.alice_id);
    EU_IT_EXPECT_JSTR(&r, "0.media_attachments.0.id", m1);
    eu_it_resp_free(&r);
    free(sched);
    free(m1);
    world_stop(&w);
}
END_TEST

START_TEST(unattached_cleanup)
{
    struct world w;
    world_start(&w);
    char *old = media(&w, w.tid, w.alice_id, NULL);
    char *fresh = media(&w, w.tid, w.alice_id, NULL);
    char *attached = media(&w, w.tid, w.alice_id, NULL);
    char *decoy_fresh = media(&w, w.decoy_tid, w.decoy_id, NULL);
    struct eu_it_resp r = {0};
    char body[256], q[512];
    snprintf(body, sizeof(body), "{\"status\":\"keep\",\"media_ids\":[\"%s\"]}", attached);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    free(sql(&w, "UPDATE instance_counters SET media_bytes = 10000 WHERE tenant_id = %s", w.tid));
    /* A day and a bit old: the placement's poll finds it and the task
     * removes it. */
    free(sql(&w,
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
        n = sql_long(&w, q);
    }
    ck_assert_int_eq(n, 0);
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments WHERE (tenant_id = %s"
             " AND id IN (%s, %s)) OR (tenant_id = %s AND id = %s)",
             w.tid, fresh, attached, w.decoy_tid, decoy_fresh);
    ck_assert_int_eq(sql_long(&w, q), 3);
    snprintf(q, sizeof(q), "SELECT media_bytes FROM instance_counters WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(sql_long(&w, q), 10000 - 1100);
    eu_it_resp_free(&r);
    free(old);
    free(fresh);
    free(attached);
    free(decoy_fresh);
    world_stop(&w);
}
END_TEST

/* The Note peers fetch (and receive) carries Mastodon's attachment. */
START_TEST(note_attachment)
{
    struct world w;
    world_start(&w);
    char *m1 = media(&w, w.tid, w.alice_id, "a cat");
    struct eu_it_resp r = {0};
    char body[256], path[256];
    snprintf(body, sizeof(body), "{\"status\":\"look\",\"media_ids\":[\"%s\"]}", m1);
    api(&w, &r, "POST", "/api/v1/statuses", w.alice, body);
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
    world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("media_attach");
    EU_IT_ADD_TCASE(s, post_with_media_in_order, TIMEOUT);
    EU_IT_ADD_TCASE(s, media_rules, TIMEOUT);
    EU_IT_ADD_TCASE(s, edit_media_and_history, TIMEOUT);
    EU_IT_ADD_TCASE(s, delete_removes_media, TIMEOUT);
    EU_IT_ADD_TCASE(s, scheduled_with_media, TIMEOUT);
    EU_IT_ADD_TCASE(s, unattached_cleanup, TIMEOUT);
    EU_IT_ADD_TCASE(s, note_attachment, TIMEOUT);
    return eu_it_run_suite(s);
}
