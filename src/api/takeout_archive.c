/*
 * A user's archive, as Mastodon's BackupService makes it (docs/takeout.md):
 * asked for on the export page (POST /settings/export, at most once every
 * ARCHIVE_PERIOD), built by the "takeout_archive" job, downloaded by its
 * owner alone at GET /backups/:id/download, and removed with its file by
 * the "takeout_archive_remove" job when the period has passed.
 *
 * The zip holds outbox.json (the account's public and unlisted posts as
 * an OrderedCollection of Create activities, their attachments' urls made
 * the files' names in the zip), actor.json (its actor document, with
 * outbox, likes and bookmarks pointing at the files beside it),
 * likes.json and bookmarks.json (OrderedCollections of status URIs) and
 * the posts' media files, read through the media store whichever its
 * backend. The job gathers everything with statements and store reads
 * (detached from its turn, since reads may be slow); the JSON and the zip
 * are written on the CPU pool, never on the loop; the zip goes into the
 * store under the tenant's prefix (a name /system/ does not serve).
 *
 * Caps, so one archive cannot take the process's memory: ARCHIVE_MAX_
 * STATUSES posts, ARCHIVE_MAX_URIS likes and bookmarks each, and media
 * files up to ARCHIVE_MAX_MEDIA_BYTES in all (files past it are left out,
 * as Mastodon leaves out a file it cannot read).
 */
#include <event2/buffer.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zip.h>

#include "eunha/ap.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/cpupool.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/queue.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "takeout_internal.h"
#include "web_internal.h"
#include "websession_internal.h"

#define ARCHIVE_PERIOD_S (7 * 24 * 60 * 60)
#define ARCHIVE_MAX_STATUSES 20000
#define ARCHIVE_MAX_URIS "100000"
#define ARCHIVE_MAX_MEDIA_BYTES (128u * 1024 * 1024)
#define ARCHIVE_MAX_BYTES (ARCHIVE_MAX_MEDIA_BYTES + 64u * 1024 * 1024)
#define ARCHIVE_PAGE "200"

enum {
    ARCHIVE_REQUEST,
    ARCHIVE_LIST,
    ARCHIVE_LOAD,
    ARCHIVE_STATUS_IDS,
    ARCHIVE_LIKES,
    ARCHIVE_BOOKMARKS,
    ARCHIVE_MEDIA,
    ARCHIVE_DONE,
    ARCHIVE_REMOVE,
    ARCHIVE_DOWNLOAD,
};

/* A status's URI: its own, or where a local one is served ($3 the base). */
#define STATUS_URI "coalesce(s.uri, $3 || '/users/' || sa.username || '/statuses/' || s.id)"

const struct eu_sql eu_takeout_archive_sql[] = {
    /* $2 the account: a new archive, unless one was asked for within the
     * period. */
    [ARCHIVE_REQUEST] = {"takeout_archive.request",
                         "INSERT INTO backups (tenant_id, account_id) SELECT $1, $2::bigint"
                         " WHERE NOT EXISTS (SELECT 1 FROM backups WHERE tenant_id = $1"
                         " AND account_id = $2::bigint AND created_at > now() - interval '7 days')"
                         " RETURNING id::text"},
    /* $2 the account: its archives still kept. */
    [ARCHIVE_LIST] = {"takeout_archive.list",
                      "SELECT id::text, processed, file_size, to_char(created_at AT TIME ZONE"
                      " 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM backups WHERE tenant_id = $1"
                      " AND account_id = $2::bigint AND created_at > now() - interval '7 days'"
                      " ORDER BY id DESC"},
    [ARCHIVE_LOAD] = {"takeout_archive.load",
                      "SELECT b.account_id::text, a.username, b.processed FROM backups b"
                      " JOIN accounts a ON a.tenant_id = $1 AND a.id = b.account_id"
                      " WHERE b.tenant_id = $1 AND b.id = $2::bigint"},
    /* $2 the account, $3 the last id taken: its next public and unlisted
     * posts (not reblogs). */
    [ARCHIVE_STATUS_IDS] = {"takeout_archive.status_ids",
                            "SELECT '{' || coalesce(string_agg(x.id::text, ',' ORDER BY x.id), '')"
                            " || '}', max(x.id)::text FROM (SELECT s.id FROM statuses s"
                            " WHERE s.tenant_id = $1 AND s.account_id = $2::bigint"
                            " AND s.id > $3::bigint AND s.deleted_at IS NULL"
                            " AND s.reblog_of_id IS NULL AND s.visibility IN (0, 1)"
                            " ORDER BY s.id LIMIT " ARCHIVE_PAGE ") x"},
    [ARCHIVE_LIKES] = {"takeout_archive.likes",
                       "SELECT " STATUS_URI " FROM favourites f JOIN statuses s"
                       " ON s.tenant_id = $1 AND s.id = f.status_id JOIN accounts sa"
                       " ON sa.tenant_id = $1 AND sa.id = s.account_id WHERE f.tenant_id = $1"
                       " AND f.account_id = $2::bigint ORDER BY f.id LIMIT " ARCHIVE_MAX_URIS},
    [ARCHIVE_BOOKMARKS] = {"takeout_archive.bookmarks",
                           "SELECT " STATUS_URI " FROM bookmarks b JOIN statuses s"
                           " ON s.tenant_id = $1 AND s.id = b.status_id JOIN accounts sa"
                           " ON sa.tenant_id = $1 AND sa.id = s.account_id"
                           " WHERE b.tenant_id = $1 AND b.account_id = $2::bigint"
                           " ORDER BY b.id LIMIT " ARCHIVE_MAX_URIS},
    /* $2 the account: the files of its archived posts' media. */
    [ARCHIVE_MEDIA] = {"takeout_archive.media",
                       "SELECT m.file_key FROM statuses s JOIN media_attachments m"
                       " ON m.tenant_id = $1 AND m.status_id = s.id WHERE s.tenant_id = $1"
                       " AND s.account_id = $2::bigint AND s.deleted_at IS NULL"
                       " AND s.reblog_of_id IS NULL AND s.visibility IN (0, 1)"
                       " AND m.state = 'ready' AND m.file_key IS NOT NULL ORDER BY s.id, m.id"},
    /* $2 the archive, $3 its file's key, $4 its size. */
    [ARCHIVE_DONE] = {"takeout_archive.done",
                      "UPDATE backups SET file_key = $3, file_size = $4::bigint, processed = true"
                      " WHERE tenant_id = $1 AND id = $2::bigint"},
    [ARCHIVE_REMOVE] = {"takeout_archive.remove",
                        "DELETE FROM backups WHERE tenant_id = $1 AND id = $2::bigint"
                        " RETURNING file_key"},
    /* $2 the account, $3 the archive: its file, while it is kept. */
    [ARCHIVE_DOWNLOAD] = {"takeout_archive.download",
                          "SELECT file_key, file_size, to_char(created_at AT TIME ZONE 'UTC',"
                          " 'YYYYMMDDHH24MISS') FROM backups WHERE tenant_id = $1"
                          " AND account_id = $2::bigint AND id = $3::bigint AND processed"
                          " AND created_at > now() - interval '7 days'"},
    {0},
};

/* ------------------------------------------------------------- the page */

/* The export page's archive part: a link to each archive kept, and the
 * form that asks for one. Arena-owned HTML. */
static const char *
archive_html(struct eu_req *req, const struct eu_web_session *s, PGresult *res)
{
    const char *items = "";
    for (int i = 0; i < PQntuples(res); i++) {
        bool ready = strcmp(PQgetvalue(res, i, 1), "t") == 0;
        items = eu_arena_sprintf(
            req->arena, "%s<li id=\"archive-%s\">%s: %s</li>", items, PQgetvalue(res, i, 0),
            PQgetvalue(res, i, 3),
            ready ? eu_arena_sprintf(req->arena,
                                     "<a href=\"/backups/%s/download\">Download your archive</a>"
                                     " (%s bytes)",
                                     PQgetvalue(res, i, 0), PQgetvalue(res, i, 2))
                  : "being prepared");
    }
    return eu_arena_sprintf(
        req->arena,
        "<h2>Archive</h2><ul>%s</ul><form method=\"post\" action=\"/settings/export\">"
        "<input type=\"hidden\" name=\"authenticity_token\" value=\"%s\">"
        "<button type=\"submit\">Request your archive</button></form>"
        "<p>You can request an archive of your posts and uploaded media once every 7 days.</p>",
        items, eu_html_escape(req, s->csrf));
}

struct page {
    const struct eu_web_session *s;
    const char *before;
};

static void
on_listed(struct eu_req *req, PGresult *res, void *arg)
{
    struct page *p = arg;
    eu_web_reply_page(
        req, 200, "Export",
        eu_arena_sprintf(req->arena, "%s%s", p->before, archive_html(req, p->s, res)));
}

void
eu_takeout_archive_page(struct eu_req *req, const struct eu_web_session *s, const char *before)
{
    struct page *p = eu_arena_calloc(req->arena, sizeof(*p));
    p->s = s;
    p->before = before;
    const char *params[] = {eu_arena_sprintf(req->arena, "%lld", (long long)s->account_id)};
    eu_req_stmt(req, &eu_takeout_archive_sql[ARCHIVE_LIST], 1, params, on_listed, p);
}

static void
on_requested(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) != 1) {
        eu_web_reply_page(req, 422, "Export",
                          "<h1>Export</h1><p class=\"error\" id=\"error\">You can only request an"
                          " archive once every 7 days.</p>"
                          "<p><a href=\"/settings/export\">Back</a></p>");
        return;
    }
    char payload[64];
    snprintf(payload, sizeof payload, "{\"backup_id\": \"%s\"}", PQgetvalue(res, 0, 0));
    eu_queue_enqueue(req->app, req->tenant, "takeout_archive", payload, 0, NULL, NULL, NULL);
    eu_req_add_header(req, "Location", "/settings/export");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

static void
request_signed_in(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    (void)arg;
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params || !eu_web_session_csrf_ok(s, params)) {
        eu_web_reply_page(req, 422, "Export",
                          "<h1>Export</h1><p class=\"error\">Can't verify CSRF token"
                          " authenticity.</p>");
        return;
    }
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)s->account_id)};
    eu_req_stmt(req, &eu_takeout_archive_sql[ARCHIVE_REQUEST], 1, p, on_requested, NULL);
}

static void
archive_request(struct eu_req *req)
{
    eu_web_session_require(req, request_signed_in, NULL);
}

/* --------------------------------------------------------- the download */

struct download {
    struct eu_req *req;
    const char *name;
};

static void
free_sent(const void *data, size_t len, void *arg)
{
    (void)len;
    (void)arg;
    free((void *)data);
}

static void
on_file(int rc, unsigned char *data, size_t len, void *arg)
{
    struct download *d = arg;
    struct eu_req *req = d->req;
    eu_req_enter(req);
    if (rc != 0) {
        eu_web_reply_page(req, 404, "Not found", "<h1>Not found</h1>");
        return;
    }
    eu_req_add_header(req, "Content-Disposition",
                      eu_arena_sprintf(req->arena, "attachment; filename=\"%s\"", d->name));
    eu_req_add_header(req, "Cache-Control", "private, no-store");
    /* The bytes go out as they are, freed when sent. */
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_reference(b, data, len, free_sent, NULL);
    eu_req_reply_buffer(req, 200, "application/zip", b);
}

static void
on_download(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    const char *key = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) ? PQgetvalue(res, 0, 0) : NULL;
    if (!key || !eu_store_key_is_tenants(key, req->tenant->id)) {
        eu_web_reply_page(req, 404, "Not found", "<h1>Not found</h1>");
        return;
    }
    struct download *d = eu_arena_calloc(req->arena, sizeof(*d));
    d->req = req;
    d->name = eu_arena_sprintf(req->arena, "archive-%s.zip", PQgetvalue(res, 0, 2));
    if (eu_store_get(req->app->store, key, ARCHIVE_MAX_BYTES, on_file, d) != 0)
        eu_web_reply_page(req, 404, "Not found", "<h1>Not found</h1>");
}

static void
download_signed_in(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    (void)arg;
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_web_reply_page(req, 404, "Not found", "<h1>Not found</h1>");
        return;
    }
    const char *p[] = {eu_arena_sprintf(req->arena, "%lld", (long long)s->account_id), id};
    eu_req_stmt(req, &eu_takeout_archive_sql[ARCHIVE_DOWNLOAD], 2, p, on_download, NULL);
}

static void
archive_download(struct eu_req *req)
{
    eu_web_session_require(req, download_signed_in, NULL);
}

/* ------------------------------------------------------------- the job */

struct zfile {
    char *name;
    unsigned char *data;
    size_t len;
};

struct arc {
    struct eu_job *job;
    struct eu_app *app;
    struct eu_tenant *t;
    char backup_id[24], account_id[24], last_id[24];
    char *username, *base;
    json_t *items, *likes, *bookmarks, *keys, *actor;
    size_t key_at, media_bytes, nstatuses;
    struct zfile *files;
    size_t nfiles;
    /* the zip, from the CPU pool */
    unsigned char *zip;
    size_t zip_len;
    const char *zip_err;
    char *zip_key;
};

static void
arc_free(struct arc *a)
{
    json_decref(a->items);
    json_decref(a->likes);
    json_decref(a->bookmarks);
    json_decref(a->keys);
    json_decref(a->actor);
    for (size_t i = 0; i < a->nfiles; i++) {
        free(a->files[i].name);
        free(a->files[i].data);
    }
    free(a->files);
    free(a->zip);
    free(a->zip_key);
    free(a->username);
    free(a->base);
    free(a);
}

static void
arc_finish(struct arc *a, const char *error)
{
    if (error)
        eu_log_warn("takeout", "archive %s: %s", a->backup_id, error);
    eu_job_done(a->job, error);
    arc_free(a);
}

static void
on_recorded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct arc *a = arg;
    (void)res;
    if (st != EU_DB_OK) {
        arc_finish(a, "recording the archive failed");
        return;
    }
    /* Removed with its file when the period has passed. */
    char payload[64];
    snprintf(payload, sizeof payload, "{\"backup_id\": \"%s\"}", a->backup_id);
    eu_queue_enqueue(a->app, a->t, "takeout_archive_remove", payload, ARCHIVE_PERIOD_S, NULL, NULL,
                     NULL);
    arc_finish(a, NULL);
}

static void
on_stored(int rc, void *arg)
{
    struct arc *a = arg;
    if (rc != 0) {
        arc_finish(a, "storing the archive failed");
        return;
    }
    char size[24];
    snprintf(size, sizeof size, "%zu", a->zip_len);
    const char *p[] = {a->backup_id, a->zip_key, size};
    eu_job_stmt(a->job, &eu_takeout_archive_sql[ARCHIVE_DONE], 3, p, on_recorded, a);
}

/* An OrderedCollection named id of items (a reference is taken). */
static json_t *
collection(const char *id, json_t *items)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:O}", "@context",
                     "https://www.w3.org/ns/activitystreams", "id", id, "type", "OrderedCollection",
                     "totalItems", (json_int_t)json_array_size(items), "orderedItems", items);
}

/* Adds a JSON document to the zip; its text is kept in a->files until the
 * zip is written. */
static int
add_json(struct arc *a, zip_t *z, const char *name, json_t *doc)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!text)
        return -1;
    a->files = eu_xrealloc(a->files, (a->nfiles + 1) * sizeof(*a->files));
    a->files[a->nfiles++] = (struct zfile){eu_xstrdup(name), (unsigned char *)text, strlen(text)};
    zip_source_t *src = zip_source_buffer(z, text, strlen(text), 0);
    if (!src || zip_file_add(z, name, src, ZIP_FL_ENC_UTF_8) < 0) {
        zip_source_free(src);
        return -1;
    }
    return 0;
}

/* On the CPU pool: the documents and the zip. */
static void
zip_work(void *arg)
{
    struct arc *a = arg;
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *out = zip_source_buffer_create(NULL, 0, 0, &ze);
    zip_t *z = out ? zip_open_from_source(out, ZIP_TRUNCATE, &ze) : NULL;
    if (!z) {
        a->zip_err = "making the zip failed";
        if (out)
            zip_source_free(out);
        zip_error_fini(&ze);
        return;
    }
    zip_source_keep(out);
    size_t media_files = a->nfiles;
    for (size_t i = 0; i < media_files; i++) {
        zip_source_t *src = zip_source_buffer(z, a->files[i].data, a->files[i].len, 0);
        if (!src || zip_file_add(z, a->files[i].name, src, ZIP_FL_ENC_UTF_8) < 0)
            zip_source_free(src);
    }
    json_t *actor = a->actor ? json_incref(a->actor) : json_object();
    json_object_set_new(actor, "outbox", json_string("outbox.json"));
    json_object_set_new(actor, "likes", json_string("likes.json"));
    json_object_set_new(actor, "bookmarks", json_string("bookmarks.json"));
    int rc = add_json(a, z, "outbox.json", collection("outbox.json", a->items));
    rc |= add_json(a, z, "likes.json", collection("likes.json", a->likes));
    rc |= add_json(a, z, "bookmarks.json", collection("bookmarks.json", a->bookmarks));
    rc |= add_json(a, z, "actor.json", actor);
    if (rc != 0 || zip_close(z) < 0) {
        zip_discard(z);
        zip_source_free(out);
        a->zip_err = "writing the zip failed";
        zip_error_fini(&ze);
        return;
    }
    zip_stat_t st;
    if (zip_source_stat(out, &st) < 0 || zip_source_open(out) < 0) {
        zip_source_free(out);
        a->zip_err = "reading the zip failed";
        zip_error_fini(&ze);
        return;
    }
    a->zip = eu_xmalloc(st.size ? st.size : 1);
    zip_int64_t n = zip_source_read(out, a->zip, st.size);
    a->zip_len = n > 0 ? (size_t)n : 0;
    if (n < 0 || (zip_uint64_t)n != st.size)
        a->zip_err = "reading the zip failed";
    zip_source_close(out);
    zip_source_free(out);
    zip_error_fini(&ze);
}

static void
zip_done(void *arg)
{
    struct arc *a = arg;
    if (a->zip_err) {
        arc_finish(a, a->zip_err);
        return;
    }
    /* A name nobody guesses, under the tenant's prefix, as Mastodon's. */
    unsigned char rnd[16];
    char hex[33];
    randombytes_buf(rnd, sizeof rnd);
    sodium_bin2hex(hex, sizeof hex, rnd, sizeof rnd);
    char ts[16];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y%m%d%H%M%S", &tm);
    a->zip_key = eu_xasprintf("%lld/backups/%s/archive-%s-%s.zip", (long long)a->t->id,
                              a->backup_id, ts, hex);
    eu_store_put(a->app->store, a->zip_key, a->zip, a->zip_len, "application/zip", on_stored, a);
}

static void
build_zip(struct arc *a)
{
    eu_cpupool_submit_for(a->app->cpu, a->t->id, zip_work, zip_done, a);
}

static void
on_actor(int status, const char *body, size_t len, void *arg)
{
    struct arc *a = arg;
    if (status == 200)
        a->actor = json_loadb(body, len, 0, NULL);
    if (!json_is_object(a->actor)) {
        json_decref(a->actor);
        a->actor = NULL;
    }
    build_zip(a);
}

static void
fetch_actor(struct arc *a)
{
    struct eu_req *req = eu_req_new_detached(a->app, a->t, NULL, on_actor, a);
    eu_ap_actor_document(req, a->username);
}

static void next_media(struct arc *a);

static void
on_media(int rc, unsigned char *data, size_t len, void *arg)
{
    struct arc *a = arg;
    const char *key = json_string_value(json_array_get(a->keys, a->key_at));
    if (rc == 0 && a->media_bytes + len <= ARCHIVE_MAX_MEDIA_BYTES) {
        a->files = eu_xrealloc(a->files, (a->nfiles + 1) * sizeof(*a->files));
        /* Its name in the zip: the key without the tenant's prefix. */
        const char *slash = strchr(key, '/');
        a->files[a->nfiles++] = (struct zfile){eu_xstrdup(slash ? slash + 1 : key), data, len};
        a->media_bytes += len;
        data = NULL;
    }
    free(data);
    a->key_at++;
    next_media(a);
}

static void
next_media(struct arc *a)
{
    while (a->key_at < json_array_size(a->keys)) {
        const char *key = json_string_value(json_array_get(a->keys, a->key_at));
        size_t room = ARCHIVE_MAX_MEDIA_BYTES - a->media_bytes;
        if (room > 0 && eu_store_key_is_tenants(key, a->t->id) &&
            eu_store_get(a->app->store, key, room, on_media, a) == 0)
            return;
        a->key_at++;
    }
    fetch_actor(a);
}

static void
on_media_keys(PGresult *res, enum eu_db_status st, void *arg)
{
    struct arc *a = arg;
    if (st != EU_DB_OK) {
        arc_finish(a, "listing media failed");
        return;
    }
    a->keys = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(a->keys, json_string(PQgetvalue(res, i, 0)));
    next_media(a);
}

static json_t *
column_array(PGresult *res)
{
    json_t *arr = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(arr, json_string(PQgetvalue(res, i, 0)));
    return arr;
}

static void
on_bookmarks(PGresult *res, enum eu_db_status st, void *arg)
{
    struct arc *a = arg;
    if (st != EU_DB_OK) {
        arc_finish(a, "listing bookmarks failed");
        return;
    }
    a->bookmarks = column_array(res);
    const char *p[] = {a->account_id};
    eu_job_stmt(a->job, &eu_takeout_archive_sql[ARCHIVE_MEDIA], 1, p, on_media_keys, a);
}

static void
on_likes(PGresult *res, enum eu_db_status st, void *arg)
{
    struct arc *a = arg;
    if (st != EU_DB_OK) {
        arc_finish(a, "listing likes failed");
        return;
    }
    a->likes = column_array(res);
    const char *p[] = {a->account_id, a->base};
    eu_job_stmt(a->job, &eu_takeout_archive_sql[ARCHIVE_BOOKMARKS], 2, p, on_bookmarks, a);
}

static void next_statuses(struct arc *a);

/* An attachment's url as the file's name in the zip, as Mastodon's
 * BackupService writes it. */
static void
localize_attachments(json_t *activity)
{
    json_t *att = json_object_get(json_object_get(activity, "object"), "attachment");
    size_t i;
    json_t *m;
    json_array_foreach(att, i, m)
    {
        const char *url = json_string_value(json_object_get(m, "url"));
        const char *p = url ? strstr(url, "media_attachments/") : NULL;
        if (p)
            json_object_set_new(m, "url", json_string(p));
    }
}

static void
on_notes(PGresult *res, enum eu_db_status st, void *arg)
{
    struct arc *a = arg;
    if (st != EU_DB_OK) {
        arc_finish(a, "rendering posts failed");
        return;
    }
    for (int i = 0; i < PQntuples(res); i++) {
        if (eu_ap_note_row_is_reblog(res, i))
            continue;
        json_t *act = eu_ap_activity_json(a->app, a->base, a->t->domain, res, i);
        if (!act)
            continue;
        localize_attachments(act);
        json_array_append_new(a->items, act);
    }
    next_statuses(a);
}

static void
on_status_ids(PGresult *res, enum eu_db_status st, void *arg)
{
    struct arc *a = arg;
    if (st != EU_DB_OK) {
        arc_finish(a, "listing posts failed");
        return;
    }
    if (PQntuples(res) != 1 || PQgetisnull(res, 0, 1) || a->nstatuses >= ARCHIVE_MAX_STATUSES) {
        const char *p[] = {a->account_id, a->base};
        eu_job_stmt(a->job, &eu_takeout_archive_sql[ARCHIVE_LIKES], 2, p, on_likes, a);
        return;
    }
    snprintf(a->last_id, sizeof a->last_id, "%s", PQgetvalue(res, 0, 1));
    a->nstatuses += 200;
    const char *p[] = {PQgetvalue(res, 0, 0), a->base};
    eu_job_stmt(a->job, eu_ap_notes_by_ids_stmt(), 2, p, on_notes, a);
}

static void
next_statuses(struct arc *a)
{
    const char *p[] = {a->account_id, a->last_id};
    eu_job_stmt(a->job, &eu_takeout_archive_sql[ARCHIVE_STATUS_IDS], 2, p, on_status_ids, a);
}

static void
on_loaded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct arc *a = arg;
    if (st != EU_DB_OK) {
        arc_finish(a, "loading the archive failed");
        return;
    }
    if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 2), "t") == 0) {
        arc_finish(a, NULL); /* gone with its account, or made */
        return;
    }
    snprintf(a->account_id, sizeof a->account_id, "%s", PQgetvalue(res, 0, 0));
    a->username = eu_xstrdup(PQgetvalue(res, 0, 1));
    snprintf(a->last_id, sizeof a->last_id, "0");
    a->items = json_array();
    next_statuses(a);
}

/* The payload's backup id, or NULL. */
static const char *
backup_id_of(struct eu_job *job)
{
    const char *id = json_string_value(json_object_get(eu_job_payload(job), "backup_id"));
    return id && eu_id_is_valid(id) ? id : NULL;
}

void
eu_takeout_archive_run(struct eu_job *job)
{
    const char *id = backup_id_of(job);
    if (!id) {
        eu_job_done(job, NULL);
        return;
    }
    struct arc *a = eu_xcalloc(1, sizeof(*a));
    a->job = job;
    a->app = eu_job_app(job);
    a->t = eu_job_tenant(job);
    snprintf(a->backup_id, sizeof a->backup_id, "%s", id);
    a->base = eu_xasprintf("%s://%s", a->app->cfg->scheme, a->t->domain);
    eu_job_detach(job);
    const char *p[] = {a->backup_id};
    eu_job_stmt(job, &eu_takeout_archive_sql[ARCHIVE_LOAD], 1, p, on_loaded, a);
}

static void
on_removed(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_job *job = arg;
    if (st != EU_DB_OK) {
        eu_job_done(job, "removing the archive failed");
        return;
    }
    struct eu_tenant *t = eu_job_tenant(job);
    if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) &&
        eu_store_key_is_tenants(PQgetvalue(res, 0, 0), t->id))
        eu_store_del(eu_job_app(job)->store, PQgetvalue(res, 0, 0), NULL, NULL);
    eu_job_done(job, NULL);
}

void
eu_takeout_archive_remove_run(struct eu_job *job)
{
    const char *id = backup_id_of(job);
    if (!id) {
        eu_job_done(job, NULL);
        return;
    }
    const char *p[] = {id};
    eu_job_stmt(job, &eu_takeout_archive_sql[ARCHIVE_REMOVE], 1, p, on_removed, job);
}

/* ------------------------------------------------------------ route table */

const struct eu_route eu_takeout_archive_routes[] = {
    {EU_HTTP_POST, "/settings/export", archive_request, NULL, 0},
    {EU_HTTP_GET, "/backups/:id/download", archive_download, NULL, 0},
    {0},
};
