/*
 * Media between tenants and against hostile files, through a real server:
 * an archive naming another tenant's media keys cannot make the importing
 * tenant read or delete them (neither by deleting its media nor by being
 * deleted); /system/ answers with nosniff, a sandboxing CSP and the type
 * the file's bytes and name agree on (a GIF that is also a script is an
 * image, a script named .gif is a download); a JPEG cut short is a 422;
 * uploads at once stop at the quota; and a /system/ read does not wait
 * behind another tenant's image work.
 */
#include "harness.h"

#include <check.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
/* After stdio.h: jpeglib.h uses FILE without including it. */
#include <jpeglib.h>

#define TIMEOUT 300
#define VICTIM "victim.example"
#define SRC "src.example"
#define EVIL "evil.example"

/* ------------------------------------------------------------ fixtures */

/* A JPEG: a smooth gradient (small file, every pixel still decoded) or
 * noise (large file). The caller frees it. */
static unsigned char *
make_jpeg_q(int width, int height, bool noise, int quality, size_t *len)
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
    jpeg_set_quality(&c, quality, TRUE);
    jpeg_start_compress(&c, TRUE);
    unsigned char *row = malloc((size_t)width * 3);
    unsigned seed = 11;
    while (c.next_scanline < c.image_height) {
        int y = (int)c.next_scanline;
        for (int x = 0; x < width; x++) {
            row[3 * x] = (unsigned char)(noise ? rand_r(&seed) : x * 255 / width);
            row[3 * x + 1] = (unsigned char)(noise ? rand_r(&seed) : y * 255 / height);
            row[3 * x + 2] = (unsigned char)(noise ? rand_r(&seed) : 90);
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

/*
 * A GIF89a of two 1x1 frames (so it is kept byte for byte, as gifv) that
 * is also JavaScript: the header "GIF89a" and the logical screen width
 * (the two characters that open a JS comment) start a script whose
 * comments a comment extension closes and reopens, and the script follows
 * the trailer. Served as it came, it would run as a script.
 */
static unsigned char *
make_polyglot(size_t *len)
{
    static const unsigned char head[] = {
        'G', 'I', 'F', '8', '9', 'a', '/', '*', /* width 0x2a2f: "/" "*" */
        0x00, 0x01, 0x80, 0x00, 0x00,           /* height 256, 2-colour table */
        0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
        /* a comment extension that ends the script's comment, assigns,
         * and opens another comment for the rest: "*" "/=1;/" "*" */
        0x21, 0xfe, 0x07, '*', '/', '=', '1', ';', '/', '*', 0x00,
        /* two frames, each a graphic control extension and a 1x1 image */
        0x21, 0xf9, 0x04, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
        0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x21, 0xf9, 0x04, 0x00, 0x0a, 0x00, 0x00,
        0x00, 0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01,
        0x00, 0x3b};
    static const char script[] = "*/alert(document.domain);//";
    *len = sizeof(head) + strlen(script);
    unsigned char *p = malloc(*len);
    memcpy(p, head, sizeof(head));
    memcpy(p + sizeof(head), script, strlen(script));
    return p;
}

static unsigned char *
make_jpeg(int width, int height, bool noise, size_t *len)
{
    return make_jpeg_q(width, height, noise, 90, len);
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

/* POSTs a multipart upload of data to path on port; returns the status
 * (0: no answer) and, when out is not NULL, the JSON body in *out (caller
 * decrefs; may be NULL). Does not assert, so threads may call it. */
static long
upload(int port, const char *host, const char *path, const char *token, const unsigned char *data,
       size_t len, json_t **out)
{
    CURL *c = curl_easy_init();
    char url[256], auth[512], hosth[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    snprintf(hosth, sizeof(hosth), "Host: %s", host);
    struct curl_slist *hl = curl_slist_append(NULL, auth);
    hl = curl_slist_append(hl, hosth);
    hl = curl_slist_append(hl, "Expect:");
    curl_mime *mime = curl_mime_init(c);
    curl_mimepart *part = curl_mime_addpart(mime);
    curl_mime_name(part, "file");
    curl_mime_data(part, (const char *)data, len);
    curl_mime_filename(part, "upload.bin");
    curl_mime_type(part, "application/octet-stream");
    struct buf b = {0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_mime_free(mime);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    if (out)
        *out = b.data ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    free(b.data);
    return status;
}

static const char *
jstr(json_t *o, const char *path)
{
    return json_string_value(eu_it_jpath(o, path));
}

/* The store key of a /system/ URL: what follows "/system/". */
static const char *
key_of(const char *url)
{
    const char *p = url ? strstr(url, "/system/") : NULL;
    ck_assert_msg(p != NULL, "not a /system/ URL: %s", url ? url : "(null)");
    return p + strlen("/system/");
}

static void
get_system(struct eu_it_server *s, struct eu_it_resp *r, const char *host, const char *key)
{
    char path[600];
    snprintf(path, sizeof(path), "/system/%s", key);
    const char *hdrs[] = {NULL};
    ck_assert_int_eq(eu_it_http_raw(r, "GET", s->public_port, host, path, hdrs, NULL), 0);
}

static bool
file_exists(struct eu_it_server *s, const char *key)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/media/%s", s->dir, key);
    struct stat st;
    return stat(path, &st) == 0;
}

/* Uploads a small JPEG through v1 (processed in the request); returns the
 * entity (caller decrefs). */
static json_t *
upload_image(struct eu_it_server *s, const char *host, const char *token, int side)
{
    size_t len;
    unsigned char *jpg = make_jpeg(side, side, false, &len);
    json_t *m = NULL;
    long st = upload(s->public_port, host, "/api/v1/media", token, jpg, len, &m);
    free(jpg);
    ck_assert_msg(st == 200, "upload to %s: %ld", host, st);
    ck_assert_ptr_nonnull(m);
    return m;
}

/* ------------------------------------------------------------ archives */

/*
 * An archive exported from one tenant and edited so that its media rows
 * name another tenant's files, imported as a third: the keys end up under
 * the new tenant's own prefix, and neither deleting its media nor deleting
 * the tenant touches the other tenant's files.
 */
START_TEST(test_archive_names_another_tenants_keys)
{
    /* The placement's safety poll finds the imported tenant's job soon. */
    struct eu_it_server *s = eu_it_server_start("[workers]\nqueue_idle_poll_seconds = 1\n");
    struct eu_it_resp r = {0};
    json_decref(eu_it_tenant_create(s, VICTIM, "Victim"));
    json_decref(eu_it_tenant_create(s, SRC, "Source"));
    free(eu_it_account_seed(s, VICTIM, "alice"));
    free(eu_it_account_seed(s, SRC, "mallory"));
    char *victim_tok = eu_it_user_token(s, VICTIM, "alice", "read write");
    char *src_tok = eu_it_user_token(s, SRC, "mallory", "read write");

    json_t *vm = upload_image(s, VICTIM, victim_tok, 64);
    char victim_orig[300], victim_small[300];
    snprintf(victim_orig, sizeof(victim_orig), "%s", key_of(jstr(vm, "url")));
    snprintf(victim_small, sizeof(victim_small), "%s", key_of(jstr(vm, "preview_url")));
    json_decref(vm);
    ck_assert(file_exists(s, victim_orig) && file_exists(s, victim_small));
    json_decref(upload_image(s, SRC, src_tok, 32));
    json_decref(upload_image(s, SRC, src_tok, 40));

    eu_it_admin(s, "POST", "/admin/v1/tenants/" SRC "/export", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    json_error_t jerr;
    json_t *archive = json_load_file(eu_it_json_str(&r, "path"), 0, &jerr);
    ck_assert_msg(archive != NULL, "%s", jerr.text);
    json_t *media = eu_it_jpath(archive, "tables.media_attachments");
    ck_assert_int_eq(json_array_size(media), 2);
    char media_id[2][32];
    for (size_t i = 0; i < 2; i++) {
        json_t *row = json_array_get(media, i);
        json_object_set_new(row, "file_key", json_string(victim_orig));
        json_object_set_new(row, "preview_key", json_string(victim_small));
        json_t *id = json_object_get(row, "id");
        if (json_is_integer(id))
            snprintf(media_id[i], sizeof(media_id[i]), "%lld", (long long)json_integer_value(id));
        else
            snprintf(media_id[i], sizeof(media_id[i]), "%s", json_string_value(id));
    }
    /* And a job of the kind that deletes files, naming the victim's. */
    json_t *tables = json_object_get(archive, "tables");
    json_t *jobs = json_object_get(tables, "jobs");
    if (!json_is_array(jobs)) {
        jobs = json_array();
        json_object_set_new(tables, "jobs", jobs);
    }
    json_array_append_new(jobs, json_pack("{s:I, s:s, s:s, s:{s:[s, s]}}", "id", (json_int_t)4242,
                                          "queue", "default", "kind", "media_files_delete",
                                          "payload", "keys", victim_orig, victim_small));
    char path[400];
    snprintf(path, sizeof(path), "%s/archives/crafted.json", s->dir);
    ck_assert_int_eq(json_dump_file(archive, path, 0), 0);
    json_decref(archive);

    eu_it_admin(s, "POST", "/admin/v1/tenants/import",
                "{\"path\":\"crafted.json\",\"domain\":\"" EVIL "\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 201);
    char *evil_id = strdup(eu_it_json_str(&r, "id"));
    char *db = eu_it_tenant_database(s, EVIL);
    /* Every key of the import is now under its own prefix. */
    ck_assert_int_eq(eu_it_pg_execf_long(db,
                                         "SELECT count(*) FROM media_attachments WHERE tenant_id ="
                                         " %s AND (file_key NOT LIKE '%s/%%' OR preview_key NOT"
                                         " LIKE '%s/%%')",
                                         evil_id, evil_id, evil_id),
                     0);
    ck_assert_int_eq(
        eu_it_pg_execf_long(db, "SELECT count(*) FROM media_attachments WHERE tenant_id = %s",
                            evil_id),
        2);
    /* The job runs and deletes nothing of the victim's. */
    long long until = eu_it_now_ms() + 60000;
    while (eu_it_pg_execf_long(db,
                               "SELECT count(*) FROM jobs WHERE tenant_id = %s AND id = 4242"
                               " AND state = 'ready'",
                               evil_id) &&
           eu_it_now_ms() < until)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(eu_it_pg_execf_long(db,
                                         "SELECT count(*) FROM jobs WHERE tenant_id = %s AND id ="
                                         " 4242 AND state = 'ready'",
                                         evil_id),
                     0);
    ck_assert_msg(file_exists(s, victim_orig), "the restored job deleted the victim's original");
    /* Its media (its tokens came along) are not the victim's files... */
    eu_it_callf(s, &r, EVIL, "GET", src_tok, NULL, "/api/v1/media/%s", media_id[0]);
    EU_IT_EXPECT_STATUS(&r, 200);
    char victim_url[320];
    snprintf(victim_url, sizeof(victim_url), "/system/%s", victim_orig);
    ck_assert_ptr_null(strstr(r.body, victim_url));
    /* ...and deleting one leaves them alone. */
    eu_it_callf(s, &r, EVIL, "DELETE", src_tok, NULL, "/api/v1/media/%s", media_id[0]);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Deleting the whole tenant leaves them alone too. */
    eu_it_admin(s, "DELETE", "/admin/v1/tenants/" EVIL "?confirm=" EVIL, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 202);
    until = eu_it_now_ms() + 60000;
    while (eu_it_pg_execf_long(s->name, "SELECT count(*) FROM tenants WHERE id = %s", evil_id) &&
           eu_it_now_ms() < until)
        eu_it_sleep_ms(100);
    ck_assert_int_eq(
        eu_it_pg_execf_long(s->name, "SELECT count(*) FROM tenants WHERE id = %s", evil_id), 0);
    ck_assert_msg(file_exists(s, victim_orig), "the victim's original was deleted");
    ck_assert_msg(file_exists(s, victim_small), "the victim's preview was deleted");
    get_system(s, &r, VICTIM, victim_orig);
    EU_IT_EXPECT_STATUS(&r, 200);

    free(db);
    free(evil_id);
    free(victim_tok);
    free(src_tok);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* ------------------------------------------------------------ /system/ */

static void
expect_media_headers(const struct eu_it_resp *r)
{
    const char *nosniff = eu_it_resp_header(r, "X-Content-Type-Options");
    ck_assert_msg(nosniff && strcmp(nosniff, "nosniff") == 0, "X-Content-Type-Options: %s",
                  nosniff ? nosniff : "(none)");
    const char *csp = eu_it_resp_header(r, "Content-Security-Policy");
    ck_assert_msg(csp && strcmp(csp, "default-src 'none'; sandbox") == 0,
                  "Content-Security-Policy: %s", csp ? csp : "(none)");
}

START_TEST(test_system_headers_and_polyglots)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    json_decref(eu_it_tenant_create(s, VICTIM, "Media"));
    free(eu_it_account_seed(s, VICTIM, "alice"));
    char *tok = eu_it_user_token(s, VICTIM, "alice", "read write");
    char *tid = eu_it_tenant_id(s, VICTIM);

    /* An image: its type, inline, with nosniff and the sandbox. */
    json_t *m = upload_image(s, VICTIM, tok, 48);
    get_system(s, &r, VICTIM, key_of(jstr(m, "url")));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Type"), "image/jpeg");
    ck_assert_ptr_null(eu_it_resp_header(&r, "Content-Disposition"));
    expect_media_headers(&r);
    json_decref(m);
    /* A 404 carries them as well. */
    char missing[128];
    snprintf(missing, sizeof(missing), "%s/media_attachments/1/original.png", tid);
    get_system(s, &r, VICTIM, missing);
    EU_IT_EXPECT_STATUS(&r, 404);
    expect_media_headers(&r);

    /* A GIF that is also a script: kept as it came, served as an image
     * a browser will not run. */
    size_t plen;
    unsigned char *poly = make_polyglot(&plen);
    m = NULL;
    ck_assert_int_eq(upload(s->public_port, VICTIM, "/api/v1/media", tok, poly, plen, &m), 200);
    ck_assert_str_eq(jstr(m, "type"), "gifv");
    get_system(s, &r, VICTIM, key_of(jstr(m, "url")));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Type"), "image/gif");
    expect_media_headers(&r);
    json_decref(m);
    free(poly);

    /* A video whose only video brand is far into its ftyp box: served as
     * the video its upload was taken as. */
    unsigned char vid[4096] = {0x00, 0x00, 0x00, 0x80, 'f', 't', 'y', 'p', 'x', 'x', 'x', 'x'};
    memcpy(vid + 120, "mp42", 4);
    m = NULL;
    ck_assert_int_eq(upload(s->public_port, VICTIM, "/api/v1/media", tok, vid, sizeof(vid), &m),
                     200);
    ck_assert_str_eq(jstr(m, "type"), "video");
    get_system(s, &r, VICTIM, key_of(jstr(m, "url")));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Type"), "video/mp4");
    ck_assert_ptr_null(eu_it_resp_header(&r, "Content-Disposition"));
    expect_media_headers(&r);
    json_decref(m);

    /* A script under an image's name (as a row restored from an archive
     * could name it): bytes to download, never a type a browser runs. */
    char dir[600], file[700];
    snprintf(dir, sizeof(dir), "%s/media/%s/media_attachments/77", s->dir, tid);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(file, sizeof(file), "%s/original.gif", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs("alert(document.domain)//<html><script>alert(1)</script>", f);
    fclose(f);
    char key[128];
    snprintf(key, sizeof(key), "%s/media_attachments/77/original.gif", tid);
    get_system(s, &r, VICTIM, key);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Type"), "application/octet-stream");
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Disposition"), "attachment");
    expect_media_headers(&r);

    free(tid);
    free(tok);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* ------------------------------------------------------------ refusals */

/* A JPEG whose scan stops early, with its end marker written after the
 * cut as a writer that gave up would: 422 in the request (v1) and from the
 * job (v2), never a picture with a grey rest. */
START_TEST(test_truncated_jpeg_is_422)
{
    struct eu_it_server *s = eu_it_server_start("[media]\nprocess_inline_bytes = 20000\n");
    struct eu_it_resp r = {0};
    json_decref(eu_it_tenant_create(s, VICTIM, "Media"));
    free(eu_it_account_seed(s, VICTIM, "alice"));
    char *tok = eu_it_user_token(s, VICTIM, "alice", "read write");

    size_t len;
    unsigned char *jpg = make_jpeg(400, 300, true, &len);
    size_t cut = len * 3 / 4;
    jpg[cut] = 0xFF;
    jpg[cut + 1] = 0xD9;
    json_t *m = NULL;
    ck_assert_int_eq(upload(s->public_port, VICTIM, "/api/v1/media", tok, jpg, cut + 2, &m), 422);
    ck_assert_msg(m && jstr(m, "error") && strstr(jstr(m, "error"), "Validation failed"),
                  "error: %s", m ? json_dumps(m, 0) : "(none)");
    json_decref(m);

    ck_assert_uint_gt(cut, 20000);
    m = NULL;
    ck_assert_int_eq(upload(s->public_port, VICTIM, "/api/v2/media", tok, jpg, cut + 2, &m), 202);
    char id[32];
    snprintf(id, sizeof(id), "%s", jstr(m, "id"));
    json_decref(m);
    long long until = eu_it_now_ms() + 60000;
    do {
        eu_it_callf(s, &r, VICTIM, "GET", tok, NULL, "/api/v1/media/%s", id);
        if (r.status != 206)
            break;
        eu_it_sleep_ms(100);
    } while (eu_it_now_ms() < until);
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_ptr_nonnull(strstr(eu_it_json_str(&r, "error"), "Validation failed"));

    free(jpg);
    free(tok);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* ------------------------------------------------------------ quota */

#define RACERS 12

struct racer {
    int port;
    const char *token;
    const unsigned char *data;
    size_t len;
    long status;
};

static void *
race(void *p)
{
    struct racer *rc = p;
    rc->status = upload(rc->port, VICTIM, "/api/v1/media", rc->token, rc->data, rc->len, NULL);
    return NULL;
}

/* Sends n uploads of data at once; returns how many were taken (200).
 * Each is taken or refused (422, or 503 while the tenant's share of the
 * CPU pool is busy). */
static int
race_uploads(struct eu_it_server *s, const char *tok, const unsigned char *data, size_t len, int n)
{
    struct racer rs[RACERS];
    pthread_t th[RACERS];
    for (int i = 0; i < n; i++) {
        rs[i] = (struct racer){s->public_port, tok, data, len, 0};
        pthread_create(&th[i], NULL, race, &rs[i]);
    }
    int ok = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(rs[i].status == 200 || rs[i].status == 422 || rs[i].status == 503,
                      "upload answered %ld", rs[i].status);
        ok += rs[i].status == 200;
    }
    return ok;
}

static long long
usage_of(struct eu_it_server *s)
{
    struct eu_it_resp r = {0};
    eu_it_admin(s, "GET", "/admin/v1/tenants/" VICTIM, NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *u = json_object_get(r.json, "media_usage_bytes");
    ck_assert_msg(json_is_integer(u), "no usage in %s", r.body);
    long long used = json_integer_value(u);
    eu_it_resp_free(&r);
    return used;
}

/* An MP4 header (ftyp isom) and filler: a "video" of exactly len bytes. */
static unsigned char *
make_video(size_t len)
{
    unsigned char *p = calloc(1, len);
    static const unsigned char ftyp[] = {0x00, 0x00, 0x00, 0x18, 'f',  't',  'y',  'p',
                                         'i',  's',  'o',  'm',  0x00, 0x00, 0x02, 0x00,
                                         'i',  's',  'o',  'm',  'm',  'p',  '4',  '1'};
    memcpy(p, ftyp, sizeof(ftyp));
    return p;
}

START_TEST(test_concurrent_uploads_stop_at_quota)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    struct eu_it_resp r = {0};
    json_decref(eu_it_tenant_create(s, VICTIM, "Media"));
    free(eu_it_account_seed(s, VICTIM, "alice"));
    char *tok = eu_it_user_token(s, VICTIM, "alice", "read write");

    /* Videos are stored as they came: the charge is their size. */
    const size_t size = 100000;
    eu_it_tenant_patch(s, VICTIM, "{\"media_quota_bytes\": 290000}");
    unsigned char *video = make_video(size);
    int ok = race_uploads(s, tok, video, size, RACERS);
    ck_assert_msg(ok <= 2, "%d uploads of %zu bytes went under a quota of 290000", ok, size);
    ck_assert_int_le(usage_of(s), 290000);
    free(video);

    /* Images are charged what processing makes of them, which can be far
     * more than the upload (a rough JPEG re-encoded, and its preview):
     * learn that from one, then race for room for two and a half. */
    eu_it_tenant_patch(s, VICTIM, "{\"media_quota_bytes\": null}");
    long long before = usage_of(s);
    size_t len;
    unsigned char *jpg = make_jpeg_q(300, 200, true, 15, &len);
    json_t *m = NULL;
    ck_assert_int_eq(upload(s->public_port, VICTIM, "/api/v1/media", tok, jpg, len, &m), 200);
    long long one = usage_of(s) - before;
    ck_assert_msg(one > (long long)len, "processed %lld bytes from %zu", one, len);
    eu_it_callf(s, &r, VICTIM, "DELETE", tok, NULL, "/api/v1/media/%s", jstr(m, "id"));
    EU_IT_EXPECT_STATUS(&r, 200);
    json_decref(m);
    ck_assert_int_eq(usage_of(s), before);
    long long quota = before + 2 * one + one / 2;
    char body[96];
    snprintf(body, sizeof(body), "{\"media_quota_bytes\": %lld}", quota);
    eu_it_tenant_patch(s, VICTIM, body);
    int taken = 0;
    for (int round = 0; round < 3; round++)
        taken += race_uploads(s, tok, jpg, len, 6);
    long long used = usage_of(s);
    ck_assert_msg(used <= quota, "usage %lld past the quota %lld (%d images of %lld taken)", used,
                  quota, taken, one);
    ck_assert_int_le(taken, 2);
    free(jpg);

    free(tok);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* ------------------------------------------------------------ fairness */

#define HEAVY 3

struct heavy {
    int port;
    const char *host, *token;
    const unsigned char *data;
    size_t len;
    long status;
    long long start_ms, end_ms;
};

static void *
heavy_upload(void *p)
{
    struct heavy *h = p;
    h->start_ms = eu_it_now_ms();
    h->status = upload(h->port, h->host, "/api/v1/media", h->token, h->data, h->len, NULL);
    h->end_ms = eu_it_now_ms();
    return NULL;
}

/*
 * One CPU thread; two tenants each upload big images, processed in the
 * request. A third tenant's /system/ reads meanwhile take a small part of
 * one image's processing time, not the queue's: the margin (a quarter of
 * the quickest image) is wide enough for a busy machine, since a read that
 * waited behind image work would take at least one whole image.
 */
START_TEST(test_system_read_does_not_wait_for_images)
{
    struct eu_it_opts o = {.cpu_threads = 1};
    struct eu_it_server *s = eu_it_server_start_opts(&o);
    const char *hosts[] = {"heavy1.example", "heavy2.example", VICTIM};
    char *toks[3];
    for (int i = 0; i < 3; i++) {
        json_decref(eu_it_tenant_create(s, hosts[i], "T"));
        free(eu_it_account_seed(s, hosts[i], "alice"));
        toks[i] = eu_it_user_token(s, hosts[i], "alice", "read write");
    }
    json_t *m = upload_image(s, VICTIM, toks[2], 32);
    char key[300];
    snprintf(key, sizeof(key), "%s", key_of(jstr(m, "url")));
    json_decref(m);

    size_t len;
    unsigned char *big = make_jpeg(3000, 2000, false, &len);
    struct heavy hs[2 * HEAVY];
    pthread_t th[2 * HEAVY];
    for (int i = 0; i < 2 * HEAVY; i++) {
        hs[i] = (struct heavy){s->public_port, hosts[i % 2], toks[i % 2], big, len, 0, 0, 0};
        pthread_create(&th[i], NULL, heavy_upload, &hs[i]);
    }
    /* Until their bodies are in and the first images are being decoded. */
    eu_it_sleep_ms(500);
    long long worst = 0;
    struct eu_it_resp r = {0};
    for (int i = 0; i < 5; i++) {
        long long t0 = eu_it_now_ms();
        get_system(s, &r, VICTIM, key);
        long long took = eu_it_now_ms() - t0;
        EU_IT_EXPECT_STATUS(&r, 200);
        if (took > worst)
            worst = took;
        eu_it_sleep_ms(50);
    }
    long long quickest = -1;
    for (int i = 0; i < 2 * HEAVY; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(hs[i].status == 200 || hs[i].status == 503, "heavy upload answered %ld",
                      hs[i].status);
        long long took = hs[i].end_ms - hs[i].start_ms;
        if (hs[i].status == 200 && (quickest < 0 || took < quickest))
            quickest = took;
    }
    ck_assert_msg(quickest > 0, "no heavy upload went through");
    ck_assert_msg(worst * 4 < quickest,
                  "a /system/ read took %lld ms while the quickest image took %lld ms", worst,
                  quickest);

    free(big);
    for (int i = 0; i < 3; i++)
        free(toks[i]);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    Suite *s = suite_create("media_safety");
    EU_IT_ADD_TCASE(s, test_archive_names_another_tenants_keys, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_system_headers_and_polyglots, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_truncated_jpeg_is_422, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_concurrent_uploads_stop_at_quota, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_system_read_does_not_wait_for_images, TIMEOUT);
    return eu_it_run_suite(s);
}
