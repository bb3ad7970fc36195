/*
 * Uploads through HTTP (src/api/media.c): JPEG, PNG, WebP and GIF made
 * here, processed in the request or by the media_process job, their files
 * served from /system/ with types, caching and ranges; refusals (truncated
 * file, pixel bomb, text claiming to be PNG, quota) that leave no row, no
 * file and no usage behind; description and focus; deletion; other users
 * and a decoy tenant in the same database seeing nothing; the instance
 * entities' media limits.
 */
#include "world.h"

#include <check.h>
#include <curl/curl.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <webp/encode.h>
/* After stdio.h: jpeglib.h uses FILE without including it. */
#include <jpeglib.h>

#define TIMEOUT 240
#define DOMAIN "media.example"
#define DECOY "decoy.example"
/* Images up to this are processed in the request; the noisy JPEG is
 * larger and goes through the job. */
#define INLINE_BYTES 20000

/* alice also has a read-only token; the decoy has an alice too. */
static void
world_start(struct world *w)
{
    static char extra[128];
    static struct eu_it_world_opts o = {
        .host = DOMAIN,
        .decoy = DECOY,
        .scopes = "read write",
        .users = {{"alice"},
                  {"alice_ro", NULL, "alice", "read"},
                  {"bob"},
                  {"decoy_alice", DECOY, "alice"}},
    };
    snprintf(extra, sizeof(extra), "[media]\nprocess_inline_bytes = %d\n", INLINE_BYTES);
    o.extra_toml = extra;
    eu_it_world_start(w, &o);
}

/* ------------------------------------------------------------ fixtures */

static unsigned char *
make_jpeg(int width, int height, bool noise, size_t *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char *out = NULL;
    unsigned long n = 0;
    jpeg_mem_dest(&c, &out, &n);
    c.image_width = (JDIMENSION)width;
    c.image_height = (JDIMENSION)height;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 95, TRUE);
    jpeg_start_compress(&c, TRUE);
    unsigned char *row = malloc((size_t)width * 3);
    unsigned seed = 7;
    while (c.next_scanline < c.image_height) {
        for (int x = 0; x < width; x++) {
            int y = (int)c.next_scanline;
            row[3 * x] = (unsigned char)(noise ? rand_r(&seed) : x * 255 / width);
            row[3 * x + 1] = (unsigned char)(noise ? rand_r(&seed) : y * 255 / height);
            row[3 * x + 2] = (unsigned char)(noise ? rand_r(&seed) : 128);
        }
        JSAMPROW rows[1] = {row};
        jpeg_write_scanlines(&c, rows, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    *len = n;
    return out;
}

static unsigned char *
make_webp(int width, int height, size_t *len)
{
    unsigned char *px = malloc((size_t)width * height * 3);
    for (int i = 0; i < width * height * 3; i++)
        px[i] = (unsigned char)(i * 13);
    uint8_t *out = NULL;
    *len = WebPEncodeRGB(px, width, height, width * 3, 80, &out);
    free(px);
    ck_assert_uint_gt(*len, 0);
    unsigned char *copy = malloc(*len);
    memcpy(copy, out, *len);
    WebPFree(out);
    return copy;
}

/* The classic 1x1 GIF89a. */
static const unsigned char GIF[] = {
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xff, 0xff,
    0xff, 0x00, 0x00, 0x00, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b};

static uint32_t
crc32_of(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return c ^ 0xffffffffu;
}

/* A real 8x8 PNG whose header claims 60000x60000 (with a valid CRC). */
static unsigned char *
make_bomb(size_t *len)
{
    unsigned char *p = eu_it_make_png(8, 8, len);
    /* signature (8), IHDR length (4), "IHDR" at 12, width at 16, height at 20 */
    for (int i = 0; i < 2; i++) {
        uint32_t v = 60000;
        p[16 + 4 * i] = (unsigned char)(v >> 24);
        p[17 + 4 * i] = (unsigned char)(v >> 16);
        p[18 + 4 * i] = (unsigned char)(v >> 8);
        p[19 + 4 * i] = (unsigned char)v;
    }
    uint32_t crc = crc32_of(p + 12, 17);
    p[29] = (unsigned char)(crc >> 24);
    p[30] = (unsigned char)(crc >> 16);
    p[31] = (unsigned char)(crc >> 8);
    p[32] = (unsigned char)crc;
    return p;
}

/* ------------------------------------------------------------ HTTP */

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

/* POSTs a multipart upload to path; returns the status, *out the JSON
 * body (caller decrefs; may be NULL). */
static long
upload(struct world *w, const char *host, const char *path, const char *token,
       const unsigned char *data, size_t len, const char *filename, const char *type,
       const char *desc, const char *focus, json_t **out)
{
    CURL *c = curl_easy_init();
    char url[256], auth[512], hosth[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", w->s->public_port, path);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    snprintf(hosth, sizeof(hosth), "Host: %s", host);
    struct curl_slist *hl = curl_slist_append(NULL, auth);
    hl = curl_slist_append(hl, hosth);
    hl = curl_slist_append(hl, "Expect:");
    curl_mime *mime = curl_mime_init(c);
    curl_mimepart *part = curl_mime_addpart(mime);
    curl_mime_name(part, "file");
    curl_mime_data(part, (const char *)data, len);
    curl_mime_filename(part, filename);
    curl_mime_type(part, type);
    if (desc) {
        part = curl_mime_addpart(mime);
        curl_mime_name(part, "description");
        curl_mime_data(part, desc, CURL_ZERO_TERMINATED);
    }
    if (focus) {
        part = curl_mime_addpart(mime);
        curl_mime_name(part, "focus");
        curl_mime_data(part, focus, CURL_ZERO_TERMINATED);
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
    ck_assert_msg(*out != NULL, "upload %s: status %ld, body %s", path, status,
                  b.data ? b.data : "");
    free(b.data);
    return status;
}

static const char *
jstr(json_t *o, const char *path)
{
    return json_string_value(eu_it_jpath(o, path));
}

/* The path of a /system/ URL (after its host). */
static const char *
system_path(const char *url)
{
    const char *p = url ? strstr(url, "/system/") : NULL;
    ck_assert_msg(p != NULL, "not a /system/ URL: %s", url ? url : "(null)");
    return p;
}

static void
fetch(struct world *w, struct eu_it_resp *r, const char *host, const char *method, const char *path,
      const char *range)
{
    char h[128];
    const char *hdrs[2] = {NULL, NULL};
    if (range) {
        snprintf(h, sizeof(h), "Range: %s", range);
        hdrs[0] = h;
    }
    ck_assert_int_eq(eu_it_http_raw(r, method, w->s->public_port, host, path, hdrs, NULL), 0);
}

static long long
usage(struct world *w)
{
    struct eu_it_resp r = {0};
    eu_it_admin(w->s, "GET", "/admin/v1/tenants/" DOMAIN, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *u = json_object_get(r.json, "media_usage_bytes");
    ck_assert_msg(json_is_integer(u), "no usage in %s", r.body);
    long long v = json_integer_value(u);
    eu_it_resp_free(&r);
    return v;
}

/* Files in the media's folder on disk (-1: no folder). */
static int
files_of(struct world *w, const char *id)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/media/%s/media_attachments/%s", w->s->dir, w->tid, id);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* Polls GET /api/v1/media/:id until it is not 206; returns the final
 * answer in r. */
static void
wait_processed(struct world *w, struct eu_it_resp *r, const char *id)
{
    long long until = eu_it_now_ms() + 60000;
    for (;;) {
        eu_it_callf(w->s, r, DOMAIN, "GET", eu_it_tok(w, "alice"), NULL, "/api/v1/media/%s", id);
        if (r->status != 206 || eu_it_now_ms() > until)
            return;
        eu_it_sleep_ms(100);
    }
}

/* Checks a ready image's entity and its two files over HTTP. */
static void
check_ready_image(struct world *w, json_t *m, int width, int height)
{
    ck_assert_str_eq(jstr(m, "type"), "image");
    ck_assert_int_eq(json_integer_value(eu_it_jpath(m, "meta.original.width")), width);
    ck_assert_int_eq(json_integer_value(eu_it_jpath(m, "meta.original.height")), height);
    ck_assert_ptr_nonnull(jstr(m, "meta.small.size"));
    ck_assert_ptr_nonnull(eu_it_jpath(m, "meta.focus.x"));
    ck_assert_ptr_nonnull(jstr(m, "blurhash"));
    ck_assert_uint_ge(strlen(jstr(m, "blurhash")), 6);
    ck_assert(json_is_null(json_object_get(m, "remote_url")));
    ck_assert(json_is_null(json_object_get(m, "preview_remote_url")));
    ck_assert(json_is_null(json_object_get(m, "text_url")));
    /* Original and preview, no raw upload. An upload processed by a job
     * reads ready a moment before the job has deleted its raw file. */
    long long until = eu_it_now_ms() + 5000;
    while (files_of(w, jstr(m, "id")) != 2 && eu_it_now_ms() < until)
        eu_it_sleep_ms(50);
    ck_assert_int_eq(files_of(w, jstr(m, "id")), 2);

    struct eu_it_resp r = {0};
    fetch(w, &r, DOMAIN, "GET", system_path(jstr(m, "preview_url")), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Type"), "image/webp");
    ck_assert_str_eq(eu_it_resp_header(&r, "Cache-Control"), "public, max-age=31536000, immutable");
    ck_assert_uint_gt(r.body_len, 12);
    ck_assert(memcmp(r.body, "RIFF", 4) == 0 && memcmp(r.body + 8, "WEBP", 4) == 0);

    const char *orig = system_path(jstr(m, "url"));
    fetch(w, &r, DOMAIN, "GET", orig, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "ETag"));
    size_t whole_len = r.body_len;
    char *whole = malloc(whole_len);
    memcpy(whole, r.body, whole_len);
    const char *ctype = eu_it_resp_header(&r, "Content-Type");
    ck_assert_msg(strncmp(ctype, "image/", 6) == 0, "type %s", ctype);

    fetch(w, &r, DOMAIN, "GET", orig, "bytes=2-9");
    EU_IT_EXPECT_STATUS(&r, 206);
    ck_assert_uint_eq(r.body_len, 8);
    ck_assert(memcmp(r.body, whole + 2, 8) == 0);
    char want[64];
    snprintf(want, sizeof(want), "bytes 2-9/%zu", whole_len);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Range"), want);
    fetch(w, &r, DOMAIN, "GET", orig, "bytes=-4");
    EU_IT_EXPECT_STATUS(&r, 206);
    ck_assert(memcmp(r.body, whole + whole_len - 4, 4) == 0);
    fetch(w, &r, DOMAIN, "GET", orig, "bytes=999999999-");
    EU_IT_EXPECT_STATUS(&r, 416);
    fetch(w, &r, DOMAIN, "HEAD", orig, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(want, sizeof(want), "%zu", whole_len);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Length"), want);
    /* Another tenant's host does not serve this tenant's files. */
    fetch(w, &r, DECOY, "GET", orig, NULL);
    EU_IT_EXPECT_STATUS(&r, 404);
    free(whole);
    eu_it_resp_free(&r);
}

START_TEST(test_media_formats)
{
    struct world w;
    world_start(&w);
    long long before = usage(&w);
    ck_assert_int_eq(before, 0);
    json_t *m;
    size_t len;

    /* JPEG through v2, small: processed in the request, 200 at once. */
    unsigned char *jpg = make_jpeg(64, 48, false, &len);
    ck_assert_uint_lt(len, INLINE_BYTES);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"), jpg, len, "a.jpg",
                            "image/jpeg", "a gradient", "0.5,-0.25", &m),
                     200);
    ck_assert_str_eq(jstr(m, "description"), "a gradient");
    ck_assert(json_real_value(eu_it_jpath(m, "meta.focus.x")) == 0.5);
    check_ready_image(&w, m, 64, 48);
    json_decref(m);
    free(jpg);

    /* PNG with alpha through v1. */
    unsigned char *png = eu_it_make_png(40, 30, &len);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v1/media", eu_it_tok(&w, "alice"), png, len, "b.png",
                            "image/png", NULL, NULL, &m),
                     200);
    check_ready_image(&w, m, 40, 30);
    ck_assert_str_eq(strrchr(jstr(m, "url"), '.'), ".png");
    json_decref(m);
    free(png);

    /* WebP, and a GIF named as something else: the bytes decide. */
    unsigned char *webp = make_webp(50, 20, &len);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"), webp, len,
                            "c.webp", "image/webp", NULL, NULL, &m),
                     200);
    check_ready_image(&w, m, 50, 20);
    json_decref(m);
    free(webp);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"), GIF, sizeof(GIF),
                            "d.bin", "application/octet-stream", NULL, NULL, &m),
                     200);
    check_ready_image(&w, m, 1, 1);
    json_decref(m);

    /* A bigger JPEG through v2: stored raw, 202 with url null, processed by
     * the job; GET answers 206 until then, and 200 after. */
    unsigned char *big = make_jpeg(400, 300, true, &len);
    ck_assert_uint_gt(len, INLINE_BYTES);
    long st = upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"), big, len, "e.jpg",
                     "image/jpeg", NULL, NULL, &m);
    ck_assert_int_eq(st, 202);
    ck_assert(json_is_null(json_object_get(m, "url")));
    char id[32];
    snprintf(id, sizeof(id), "%s", jstr(m, "id"));
    json_decref(m);
    struct eu_it_resp r = {0};
    wait_processed(&w, &r, id);
    EU_IT_EXPECT_STATUS(&r, 200);
    check_ready_image(&w, r.json, 400, 300);
    free(big);

    /* Usage is what is on disk: originals and previews. */
    char *db = eu_it_tenant_database(w.s, DOMAIN);
    char q[256];
    snprintf(q, sizeof(q),
             "SELECT sum(file_size + preview_size) FROM media_attachments WHERE tenant_id = %s",
             w.tid);
    long rows_bytes = eu_it_pg_exec_long(db, q);
    ck_assert_int_eq(usage(&w), rows_bytes);
    ck_assert_int_gt(rows_bytes, 0);
    free(db);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_media_refusals)
{
    struct world w;
    world_start(&w);
    json_t *m;
    size_t len;
    struct eu_it_resp r = {0};
    char *db = eu_it_tenant_database(w.s, DOMAIN);
    char q[256];

    /* Truncated JPEG (v1: processed here): 422, nothing left. */
    size_t jlen;
    unsigned char *jpg = make_jpeg(200, 150, true, &jlen);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v1/media", eu_it_tok(&w, "alice"), jpg, jlen / 2,
                            "t.jpg", "image/jpeg", NULL, NULL, &m),
                     422);
    ck_assert_ptr_nonnull(jstr(m, "error"));
    json_decref(m);

    /* A pixel bomb: 422 before its pixels are allocated. */
    unsigned char *bomb = make_bomb(&len);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v1/media", eu_it_tok(&w, "alice"), bomb, len, "b.png",
                            "image/png", NULL, NULL, &m),
                     422);
    json_decref(m);
    free(bomb);

    /* Text claiming to be a PNG. */
    const char *txt = "hello, this is not an image at all\n";
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"),
                            (const unsigned char *)txt, strlen(txt), "x.png", "image/png", NULL,
                            NULL, &m),
                     422);
    ck_assert_str_eq(jstr(m, "error"), "Validation failed: File content type is invalid");
    json_decref(m);

    snprintf(q, sizeof(q), "SELECT count(*) FROM media_attachments WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(db, q), 0);
    ck_assert_int_eq(usage(&w), 0);

    /* Truncated through the job (v2, big): 202, then failed (422), with
     * no files and no bytes. */
    unsigned char *big = make_jpeg(400, 300, true, &len);
    ck_assert_uint_gt(len / 2, INLINE_BYTES);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"), big, len / 2,
                            "t2.jpg", "image/jpeg", NULL, NULL, &m),
                     202);
    char id[32];
    snprintf(id, sizeof(id), "%s", jstr(m, "id"));
    json_decref(m);
    wait_processed(&w, &r, id);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_int_le(files_of(&w, id), 0);
    ck_assert_int_eq(usage(&w), 0);
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM media_attachments WHERE tenant_id = %s AND state = 'ready'",
             w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(db, q), 0);

    /* Quota: room for one small image, not for the big one. */
    unsigned char *small = make_jpeg(64, 48, false, &len);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"), small, len,
                            "s.jpg", "image/jpeg", NULL, NULL, &m),
                     200);
    json_decref(m);
    long long used = usage(&w);
    ck_assert_int_gt(used, 0);
    char body[96];
    snprintf(body, sizeof(body), "{\"media_quota_bytes\": %lld}", used + 1000);
    eu_it_tenant_patch(w.s, DOMAIN, body);
    ck_assert_uint_gt(jlen, 1000);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"), jpg, jlen, "q.jpg",
                            "image/jpeg", NULL, NULL, &m),
                     422);
    ck_assert_ptr_nonnull(strstr(jstr(m, "error"), "quota"));
    json_decref(m);
    ck_assert_int_eq(usage(&w), used);
    eu_it_admin(w.s, "GET", "/admin/v1/tenants/" DOMAIN, NULL, &r);
    EU_IT_EXPECT_JINT(&r, "media_quota_bytes", used + 1000);
    /* Back to the config's default (1 GiB): it fits again. */
    eu_it_tenant_patch(w.s, DOMAIN, "{\"media_quota_bytes\": null}");
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"), small, len,
                            "s2.jpg", "image/jpeg", NULL, NULL, &m),
                     200);
    json_decref(m);
    eu_it_admin(w.s, "PATCH", "/admin/v1/tenants/" DOMAIN, "{\"media_quota_bytes\": -1}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);

    free(small);
    free(big);
    free(jpg);
    free(db);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_media_owner)
{
    struct world w;
    world_start(&w);
    json_t *m;
    size_t len;
    struct eu_it_resp r = {0};
    unsigned char *png = eu_it_make_png(20, 20, &len);
    ck_assert_int_eq(upload(&w, DOMAIN, "/api/v2/media", eu_it_tok(&w, "alice"), png, len, "p.png",
                            "image/png", NULL, NULL, &m),
                     200);
    char id[32];
    snprintf(id, sizeof(id), "%s", jstr(m, "id"));
    char orig[512];
    snprintf(orig, sizeof(orig), "%s", system_path(jstr(m, "url")));
    json_decref(m);

    /* Description and focus. */
    eu_it_callf(w.s, &r, DOMAIN, "PUT", eu_it_tok(&w, "alice"),
                "{\"description\": \"a square\", \"focus\": \"-1,1\"}", "/api/v1/media/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "description", "a square");
    ck_assert(json_real_value(eu_it_jpath(r.json, "meta.focus.x")) == -1.0);
    ck_assert(json_real_value(eu_it_jpath(r.json, "meta.focus.y")) == 1.0);
    eu_it_callf(w.s, &r, DOMAIN, "PUT", eu_it_tok(&w, "alice"), "{\"focus\": \"2,0\"}",
                "/api/v1/media/%s", id);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, DOMAIN, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/media/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "description", "a square");
    /* A read-only token cannot (Mastodon asks write:media). */
    eu_it_callf(w.s, &r, DOMAIN, "GET", eu_it_tok(&w, "alice_ro"), NULL, "/api/v1/media/%s", id);
    EU_IT_EXPECT_ERROR(&r, 403);

    /* Another user, and the decoy tenant's user, see nothing. */
    const char *methods[] = {"GET", "PUT", "DELETE"};
    for (int i = 0; i < 3; i++) {
        const char *body = strcmp(methods[i], "PUT") == 0 ? "{\"description\": \"mine\"}" : NULL;
        eu_it_callf(w.s, &r, DOMAIN, methods[i], eu_it_tok(&w, "bob"), body, "/api/v1/media/%s",
                    id);
        EU_IT_EXPECT_ERROR(&r, 404);
        eu_it_callf(w.s, &r, DECOY, methods[i], eu_it_tok(&w, "decoy_alice"), body,
                    "/api/v1/media/%s", id);
        EU_IT_EXPECT_ERROR(&r, 404);
    }
    fetch(&w, &r, DECOY, "GET", orig, NULL);
    EU_IT_EXPECT_STATUS(&r, 404);
    fetch(&w, &r, DOMAIN, "GET", "/system/../../etc/passwd", NULL);
    ck_assert_int_eq(r.status, 404);
    eu_it_callf(w.s, &r, DOMAIN, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/media/%s", id);
    EU_IT_EXPECT_JSTR(&r, "description", "a square");

    /* Delete: 200 {}, then gone, its files and bytes with it. */
    long long used = usage(&w);
    ck_assert_int_gt(used, 0);
    eu_it_callf(w.s, &r, DOMAIN, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/media/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, DOMAIN, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/media/%s", id);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_callf(w.s, &r, DOMAIN, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/media/%s", id);
    EU_IT_EXPECT_ERROR(&r, 404);
    ck_assert_int_eq(usage(&w), 0);
    long long until = eu_it_now_ms() + 10000;
    while (files_of(&w, id) > 0 && eu_it_now_ms() < until)
        eu_it_sleep_ms(50);
    ck_assert_int_le(files_of(&w, id), 0);
    fetch(&w, &r, DOMAIN, "GET", orig, NULL);
    EU_IT_EXPECT_STATUS(&r, 404);

    /* No file at all, and no token. */
    eu_it_callf(w.s, &r, DOMAIN, "POST", eu_it_tok(&w, "alice"), "{}", "/api/v2/media");
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, DOMAIN, "POST", NULL, "{}", "/api/v2/media");
    EU_IT_EXPECT_ERROR(&r, 401);

    /* The limits the instance publishes. */
    const char *paths[] = {"/api/v1/instance", "/api/v2/instance"};
    for (int i = 0; i < 2; i++) {
        eu_it_callf(w.s, &r, DOMAIN, "GET", NULL, NULL, "%s", paths[i]);
        EU_IT_EXPECT_STATUS(&r, 200);
        EU_IT_EXPECT_JINT(&r, "configuration.media_attachments.image_size_limit", 16777216);
        EU_IT_EXPECT_JINT(&r, "configuration.media_attachments.image_matrix_limit", 33177600);
        EU_IT_EXPECT_JINT(&r, "configuration.media_attachments.description_limit", 1500);
        ck_assert_ptr_nonnull(
            eu_it_jpath(r.json, "configuration.media_attachments.video_size_limit"));
        ck_assert_ptr_nonnull(
            eu_it_jpath(r.json, "configuration.media_attachments.video_frame_rate_limit"));
        ck_assert_ptr_nonnull(
            eu_it_jpath(r.json, "configuration.media_attachments.video_matrix_limit"));
        EU_IT_EXPECT_JSTR(&r, "configuration.media_attachments.supported_mime_types.0",
                          "image/jpeg");
    }
    free(png);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("media");
    EU_IT_ADD_TCASE(s, test_media_formats, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_media_refusals, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_media_owner, TIMEOUT);
    return eu_it_run_suite(s);
}
