/*
 * The media API (/api/v1/media, /api/v2/media) and the MediaAttachment
 * entity, as Mastodon has them (include/eunha/mediaapi.h for the life of
 * an upload).
 *
 * An upload is refused before anything is stored when its bytes are not a
 * format we take (the client's Content-Type is not believed), when it is
 * past its type's size limit, or when it would take the tenant past its
 * quota: the row that charges the bytes is inserted only under the quota,
 * with the tenant's counter row locked (FOR UPDATE), so two uploads at
 * once cannot both squeeze under it. Then:
 *   - an image small enough ([media] process_inline_bytes), or any image
 *     through v1, is processed while the client waits and answered 200;
 *     a file that cannot be processed takes its row back and is a 422;
 *   - a bigger image through v2 is stored raw and left to the
 *     media_process job (src/media/process_job.c): 202, url null, and
 *     GET answers 206 until it is ready; a store that cannot read files
 *     back (S3: the fetch client's response cap is far below an upload's
 *     size) processes it in the request instead;
 *   - video and audio are stored as they came and answered 200.
 * Only the owner sees, edits or deletes an upload, and only while no status
 * holds it; anyone else gets 404, as Mastodon answers.
 */
#include "eunha/api.h"
#include "eunha/mediaapi.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "eunha/utf8.h"
#include "media_internal.h"

#define MEDIA_COLS EU_MEDIA_COLUMNS("m")

const struct eu_sql eu_media_sql[] = {
    /* The row that charges the upload's bytes, only under the quota ($10,
     * 0: none). The counter row is locked so concurrent uploads queue on
     * it; the trigger of migration 0025 then adds the bytes in the same
     * statement. $7 names the stored file ("upload.png", "original.mp4")
     * or is NULL when nothing is stored under the row yet. */
    [EU_MEDIA_SQL_INSERT] =
        {"media.insert",
         "WITH n AS (SELECT eunha_next_id() AS id),"
         " ins AS (INSERT INTO media_attachments (tenant_id, id, account_id, type, description,"
         " focus_x, focus_y, file_key, file_content_type, file_size)"
         " SELECT $1, n.id, $2::bigint, $3, $4, coalesce($5::real, 0), coalesce($6::real, 0),"
         " CASE WHEN $7::text IS NULL THEN NULL"
         " ELSE $1::text || '/media_attachments/' || n.id::text || '/' || $7::text END,"
         " $8, $9::bigint FROM n"
         " WHERE $10::bigint = 0 OR coalesce((SELECT c.media_bytes FROM instance_counters c"
         " WHERE c.tenant_id = $1 FOR UPDATE), 0) + $9::bigint <= $10::bigint"
         " RETURNING id, file_key)"
         " SELECT id::text, file_key FROM ins"},
    [EU_MEDIA_SQL_GET] = {"media.get", "SELECT " MEDIA_COLS " FROM media_attachments m"
                                       " WHERE m.tenant_id = $1 AND m.id = $2::bigint"},
    /* The owner's unattached upload, with its failure message. */
    [EU_MEDIA_SQL_SHOW] = {"media.show",
                           "SELECT " MEDIA_COLS ", m.processing_error FROM media_attachments m"
                           " WHERE m.tenant_id = $1 AND m.account_id = $2::bigint"
                           " AND m.id = $3::bigint AND m.status_id IS NULL"},
    /* $4: whether to set the description (to $5, which may be NULL). */
    [EU_MEDIA_SQL_UPDATE] =
        {"media.update",
         "UPDATE media_attachments AS m SET"
         " description = CASE WHEN $4::boolean THEN $5 ELSE m.description END,"
         " focus_x = coalesce($6::real, m.focus_x), focus_y = coalesce($7::real, m.focus_y),"
         " updated_at = now() WHERE m.tenant_id = $1 AND m.account_id = $2::bigint"
         " AND m.id = $3::bigint AND m.status_id IS NULL"
         " RETURNING " MEDIA_COLS ", m.processing_error"},
    [EU_MEDIA_SQL_DESTROY] = {"media.destroy",
                              "DELETE FROM media_attachments m WHERE m.tenant_id = $1"
                              " AND m.account_id = $2::bigint AND m.id = $3::bigint"
                              " AND m.status_id IS NULL RETURNING m.file_key, m.preview_key"},
    /* Video and audio, stored as they came. */
    [EU_MEDIA_SQL_READY] = {"media.ready",
                            "UPDATE media_attachments AS m SET state = 'ready', updated_at = now()"
                            " WHERE m.tenant_id = $1 AND m.id = $2::bigint"
                            " AND m.state = 'processing' RETURNING " MEDIA_COLS},
    /* An image processed: the stored original and preview replace the raw
     * upload's size in the charge (the trigger moves the counter), only
     * under the quota ($11, 0: none) and with the counter row locked as
     * the insert has it: the files made can be larger than the upload, so
     * checking the upload's bytes alone let uploads at once end far past
     * the quota. */
    [EU_MEDIA_SQL_PROCESSED] =
        {"media.processed",
         "UPDATE media_attachments AS m SET state = 'ready', type = $3, meta = $4::jsonb,"
         " blurhash = $5, file_key = $6, file_content_type = $7, file_size = $8::bigint,"
         " preview_key = $9, preview_size = $10::bigint, processing_error = NULL,"
         " updated_at = now() WHERE m.tenant_id = $1 AND m.id = $2::bigint"
         " AND m.state = 'processing' AND ($11::bigint = 0 OR coalesce((SELECT c.media_bytes"
         " FROM instance_counters c WHERE c.tenant_id = $1 FOR UPDATE), 0) - m.file_size"
         " - m.preview_size + $8::bigint + $10::bigint <= $11::bigint) RETURNING " MEDIA_COLS},
    /* An image that cannot be processed (the job's case): kept to answer
     * 422 on GET, holding no files and no bytes. */
    [EU_MEDIA_SQL_FAILED] = {"media.failed",
                             "UPDATE media_attachments SET state = 'failed', file_key = NULL,"
                             " file_size = 0, preview_key = NULL, preview_size = 0,"
                             " processing_error = $3, updated_at = now()"
                             " WHERE tenant_id = $1 AND id = $2::bigint AND state = 'processing'"},
    [EU_MEDIA_SQL_REMOVE] = {"media.remove", "DELETE FROM media_attachments WHERE tenant_id = $1"
                                             " AND id = $2::bigint"},
    /* The job's view of its upload. */
    [EU_MEDIA_SQL_JOB] = {"media.job", "SELECT state, file_key, file_size FROM media_attachments"
                                       " WHERE tenant_id = $1 AND id = $2::bigint"},
    {0},
};

/* ------------------------------------------------------------ the entity */

/* A column as a JSON string, or null. */
static json_t *
str_or_null(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? json_null() : json_string(PQgetvalue(r, row, col));
}

json_t *
eu_media_json(struct eu_app *app, const char *base_url, const PGresult *r, int row, int col)
{
    /* The columns as the object eunha_media_json() makes, so the one
     * renderer statuses use (src/social/media_render.c) draws this too. */
    json_t *meta = json_loads(PQgetvalue(r, row, col + 10), 0, NULL);
    json_t *o = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:f, s:o, s:o}", "id", str_or_null(r, row, col),
        "type", str_or_null(r, row, col + 1), "state", str_or_null(r, row, col + 2), "file",
        str_or_null(r, row, col + 3), "preview", str_or_null(r, row, col + 4), "remote",
        str_or_null(r, row, col + 5), "description", str_or_null(r, row, col + 6), "fx",
        atof(PQgetvalue(r, row, col + 7)), "fy", atof(PQgetvalue(r, row, col + 8)), "blurhash",
        str_or_null(r, row, col + 9), "meta", json_is_object(meta) ? meta : json_object());
    if (!json_is_object(meta))
        json_decref(meta);
    json_t *e = eu_media_attachment_json(app, base_url, o);
    json_decref(o);
    return e;
}

/* ------------------------------------------------------------ limits */

/* Room the rest of a multipart form needs beside its file. */
#define FORM_OVERHEAD (64 * 1024)

size_t
eu_media_limit(const struct eu_config *cfg, enum eu_media_type t)
{
    size_t lim = (t == EU_MEDIA_TYPE_VIDEO || t == EU_MEDIA_TYPE_AUDIO)
                     ? cfg->media_video_size_limit
                     : cfg->media_image_size_limit;
    size_t body =
        cfg->max_upload_bytes > cfg->max_body_bytes ? cfg->max_upload_bytes : cfg->max_body_bytes;
    size_t room = body > FORM_OVERHEAD ? body - FORM_OVERHEAD : body;
    return lim < room ? lim : room;
}

json_t *
eu_media_config_json(const struct eu_config *cfg)
{
    /* What eu_media_sniff() takes, under the names clients pick files by
     * (Mastodon's list for these formats). */
    static const char *const mimes[] = {
        "image/jpeg",      "image/png",       "image/gif",  "image/webp",     "video/webm",
        "video/mp4",       "video/quicktime", "audio/wave", "audio/wav",      "audio/x-wav",
        "audio/x-pn-wave", "audio/vnd.wave",  "audio/ogg",  "audio/vorbis",   "audio/mpeg",
        "audio/mp3",       "audio/webm",      "audio/flac", "audio/aac",      "audio/m4a",
        "audio/x-m4a",     "audio/mp4",       "audio/3gpp", "video/x-ms-asf",
    };
    json_t *types = json_array();
    for (size_t i = 0; i < sizeof(mimes) / sizeof(mimes[0]); i++)
        json_array_append_new(types, json_string(mimes[i]));
    return json_pack("{s:o, s:I, s:I, s:I, s:i, s:i, s:i}", "supported_mime_types", types,
                     "image_size_limit", (json_int_t)eu_media_limit(cfg, EU_MEDIA_TYPE_IMAGE),
                     "image_matrix_limit", (json_int_t)cfg->media_image_matrix_limit,
                     "video_size_limit", (json_int_t)eu_media_limit(cfg, EU_MEDIA_TYPE_VIDEO),
                     "video_frame_rate_limit", 120, "video_matrix_limit", 8294400,
                     "description_limit", cfg->media_description_limit);
}

long long
eu_media_quota(const struct eu_config *cfg, const struct eu_tenant *t)
{
    if (t && t->limits.media_quota_bytes >= 0)
        return t->limits.media_quota_bytes;
    return (long long)cfg->media_default_quota_bytes;
}

void
eu_media_quota_message(char *out, size_t n, long long quota)
{
    snprintf(out, n,
             "Validation failed: File would exceed this instance's media storage quota of %lld "
             "bytes",
             quota);
}

/* ------------------------------------------------------------ uploads */

struct upload {
    struct eu_req *req;
    const unsigned char *data; /* the part's bytes, owned by the request's params */
    size_t len;
    struct eu_media_sniff sn;
    char id[24];
    const char *file_key; /* arena; NULL for an image processed here */
    struct eu_media_work *w;
};

static void
on_removed_reply(struct eu_req *req, PGresult *res, void *arg)
{
    struct upload *u = arg;
    struct eu_media_work *w = u->w; /* u lives on the arena the reply frees */
    (void)res;
    u->w = NULL;
    if (w && w->rc == -1)
        eu_req_reply_error(req, 422, "%s", w->err);
    else
        eu_req_reply_error(req, 500, "Cannot store the file; try again shortly");
    eu_media_work_free(w);
}

/* Takes the upload's row (and so its charge) back, then answers. */
static void
remove_and_reply(struct upload *u)
{
    const char *p[] = {u->id};
    eu_req_stmt(u->req, &eu_media_sql[EU_MEDIA_SQL_REMOVE], 1, p, on_removed_reply, u);
}

static void
reply_entity(struct eu_req *req, PGresult *res, int ok_status)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    bool ready = strcmp(PQgetvalue(res, 0, 2), "ready") == 0;
    json_t *o = eu_media_json(req->app, eu_req_base_url(req), res, 0, 0);
    eu_req_reply_json(req, ready ? ok_status : 202, o);
}

static void
on_ready(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    reply_entity(req, res, 200);
}

static void
on_processed(struct eu_req *req, PGresult *res, void *arg)
{
    struct upload *u = arg;
    if (PQntuples(res) == 0) {
        /* Nobody but this request knows the id yet, so the row is there:
         * the files made would take the tenant past its quota. */
        eu_media_work_drop_files(u->w);
        u->w->rc = -1;
        eu_media_quota_message(u->w->err, sizeof(u->w->err), u->w->quota);
        remove_and_reply(u);
        return;
    }
    eu_media_work_free(u->w);
    u->w = NULL;
    reply_entity(req, res, 200);
}

static void
on_work_done(struct eu_media_work *w)
{
    struct upload *u = w->arg;
    eu_req_enter(u->req);
    if (w->rc < 0) {
        if (w->rc == -1)
            eu_log_info("media", "upload %s refused: %s", u->id, w->err);
        remove_and_reply(u);
        return;
    }
    const char *p[EU_MEDIA_PROCESSED_NPARAMS];
    eu_media_work_processed_params(w, p);
    eu_req_stmt(u->req, &eu_media_sql[EU_MEDIA_SQL_PROCESSED], EU_MEDIA_PROCESSED_NPARAMS, p,
                on_processed, u);
}

static void
on_job_enqueued(const char *job_id, int status, void *arg)
{
    struct upload *u = arg;
    eu_req_enter(u->req);
    if (!job_id) {
        eu_log_warn("media", "cannot queue processing of upload %s", u->id);
        eu_store_del(u->req->app->store, u->file_key, NULL, NULL);
        remove_and_reply(u);
        return;
    }
    (void)status;
    const char *p[] = {u->id};
    eu_req_stmt(u->req, &eu_media_sql[EU_MEDIA_SQL_GET], 1, p, on_ready, u);
}

static void
on_file_stored(int rc, void *arg)
{
    struct upload *u = arg;
    struct eu_req *req = u->req;
    eu_req_enter(req);
    if (rc < 0) {
        eu_store_del(req->app->store, u->file_key, NULL, NULL);
        remove_and_reply(u);
        return;
    }
    const char *p[] = {u->id};
    if (u->sn.type == EU_MEDIA_TYPE_VIDEO || u->sn.type == EU_MEDIA_TYPE_AUDIO) {
        eu_req_stmt(req, &eu_media_sql[EU_MEDIA_SQL_READY], 1, p, on_ready, u);
        return;
    }
    char *payload = eu_arena_sprintf(req->arena, "{\"media_id\": \"%s\"}", u->id);
    char *dedupe = eu_arena_sprintf(req->arena, "media_process:%s", u->id);
    eu_queue_enqueue(req->app, req->tenant, "media_process", payload, 0, dedupe, on_job_enqueued,
                     u);
}

static void
on_inserted(struct eu_req *req, PGresult *res, void *arg)
{
    struct upload *u = arg;
    if (PQntuples(res) == 0) {
        char msg[200];
        eu_media_quota_message(msg, sizeof(msg), eu_media_quota(req->app->cfg, req->tenant));
        eu_req_reply_error(req, 422, "%s", msg);
        return;
    }
    snprintf(u->id, sizeof(u->id), "%s", PQgetvalue(res, 0, 0));
    if (!PQgetisnull(res, 0, 1)) {
        u->file_key = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
        eu_store_put(req->app->store, u->file_key, u->data, u->len, u->sn.mime, on_file_stored, u);
        return;
    }
    u->w = eu_media_work_new(req->app, req->tenant->id, u->id, u->data, u->len, on_work_done, u);
    u->w->quota = eu_media_quota(req->app->cfg, req->tenant);
    eu_media_work_start(u->w, &req->tenant->cpu_jobs);
}

/* Reads "x,y" (each in [-1, 1]) into two decimal strings on the arena.
 * Returns 0 (outputs NULL when absent), or -1 when malformed. */
static int
read_focus(struct eu_req *req, json_t *params, const char **fx, const char **fy)
{
    *fx = *fy = NULL;
    const char *f = eu_param_str(params, "focus");
    if (!f || !*f)
        return 0;
    double x, y;
    int end = 0;
    if (sscanf(f, " %lf , %lf %n", &x, &y, &end) != 2 || f[end] != '\0' || !(x >= -1 && x <= 1) ||
        !(y >= -1 && y <= 1))
        return -1;
    *fx = eu_arena_sprintf(req->arena, "%.4f", x);
    *fy = eu_arena_sprintf(req->arena, "%.4f", y);
    return 0;
}

int
eu_media_read_meta(struct eu_req *req, json_t *params, const char **desc, const char **fx,
                   const char **fy)
{
    *desc = eu_param_str(params, "description");
    int limit = req->app->cfg->media_description_limit;
    if (*desc && eu_utf8_chars(*desc) > (size_t)limit) {
        eu_req_reply_error(req, 422,
                           "Validation failed: Description is too long (maximum is %d characters)",
                           limit);
        return -1;
    }
    if (read_focus(req, params, fx, fy) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: Focus must be two numbers from -1 to 1");
        return -1;
    }
    return 0;
}

static void
media_create(struct eu_req *req, bool v2)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    json_t *file = eu_param_object(params, "file");
    json_t *data = file ? json_object_get(file, "data") : NULL;
    if (!json_is_string(data) || json_string_length(data) == 0) {
        eu_req_reply_error(req, 422, "Validation failed: File can't be blank");
        return;
    }
    struct upload *u = eu_arena_calloc(req->arena, sizeof(*u));
    u->req = req;
    u->data = (const unsigned char *)json_string_value(data);
    u->len = json_string_length(data);
    if (eu_media_sniff(u->data, u->len, &u->sn) < 0) {
        eu_req_reply_error(req, 422, "Validation failed: File content type is invalid");
        return;
    }
    size_t limit = eu_media_limit(req->app->cfg, u->sn.type);
    if (u->len > limit) {
        eu_req_reply_error(req, 422,
                           "Validation failed: File file size must be less than %zu bytes", limit);
        return;
    }
    const char *desc, *fx, *fy;
    if (eu_media_read_meta(req, params, &desc, &fx, &fy) < 0)
        return;
    bool image = u->sn.type == EU_MEDIA_TYPE_IMAGE || u->sn.type == EU_MEDIA_TYPE_GIFV;
    /* A tenant with its share of the CPU pool busy (uploads, password
     * checks) waits, so one tenant's burst of uploads cannot queue the
     * pool ahead of everyone else's work. */
    if (image && req->tenant->cpu_jobs >= req->app->cfg->cpu_jobs_per_tenant) {
        eu_req_add_header(req, "Retry-After", "1");
        eu_req_reply_error(req, 503, "Too many uploads are being processed; try again shortly");
        return;
    }
    const char *stored = NULL;
    if (!image)
        stored = eu_arena_sprintf(req->arena, "original.%s", u->sn.ext);
    else if (v2 && u->len > req->app->cfg->media_process_inline_bytes && req->app->store->ops->get)
        stored = eu_arena_sprintf(req->arena, "upload.%s", u->sn.ext);
    const char *size = eu_arena_sprintf(req->arena, "%zu", u->len);
    const char *quota =
        eu_arena_sprintf(req->arena, "%lld", eu_media_quota(req->app->cfg, req->tenant));
    const char *p[] = {eu_req_viewer(req),
                       eu_media_type_name(u->sn.type),
                       desc,
                       fx,
                       fy,
                       stored,
                       u->sn.mime,
                       size,
                       quota};
    eu_req_stmt(req, &eu_media_sql[EU_MEDIA_SQL_INSERT], 9, p, on_inserted, u);
}

static void
media_create_v1(struct eu_req *req)
{
    media_create(req, false);
}

static void
media_create_v2(struct eu_req *req)
{
    media_create(req, true);
}

/* GET and PUT answer as Mastodon: 200 when ready, 206 while processing,
 * 422 when processing failed. */
static void
on_show(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *state = PQgetvalue(res, 0, 2);
    if (strcmp(state, "failed") == 0) {
        const char *why = PQgetisnull(res, 0, EU_MEDIA_NCOLUMNS)
                              ? "Error processing thumbnail for uploaded media"
                              : PQgetvalue(res, 0, EU_MEDIA_NCOLUMNS);
        eu_req_reply_error(req, 422, "%s", why);
        return;
    }
    json_t *o = eu_media_json(req->app, eu_req_base_url(req), res, 0, 0);
    eu_req_reply_json(req, strcmp(state, "ready") == 0 ? 200 : 206, o);
}

static const char *
media_id_or_reply(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return NULL;
    }
    return id;
}

static void
media_show(struct eu_req *req)
{
    const char *id = media_id_or_reply(req);
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_media_sql[EU_MEDIA_SQL_SHOW], 2, p, on_show, NULL);
}

static void
media_update(struct eu_req *req)
{
    const char *id = media_id_or_reply(req);
    if (!id)
        return;
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    const char *desc, *fx, *fy;
    if (eu_media_read_meta(req, params, &desc, &fx, &fy) < 0)
        return;
    bool set_desc = json_object_get(params, "description") != NULL;
    const char *p[] = {eu_req_viewer(req), id, set_desc ? "true" : "false", desc, fx, fy};
    eu_req_stmt(req, &eu_media_sql[EU_MEDIA_SQL_UPDATE], 6, p, on_show, NULL);
}

static void
on_destroyed(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* The row (and its charge) is gone; its files follow in the
     * background, and a file left by a failed delete is only disk. Only
     * keys of this tenant's: the row may have come from an archive. */
    for (int c = 0; c < 2; c++)
        if (!PQgetisnull(res, 0, c) &&
            eu_store_key_is_tenants(PQgetvalue(res, 0, c), req->tenant->id))
            eu_store_del(req->app->store, PQgetvalue(res, 0, c), NULL, NULL);
    eu_req_reply_json(req, 200, json_object());
}

static void
media_destroy(struct eu_req *req)
{
    const char *id = media_id_or_reply(req);
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_media_sql[EU_MEDIA_SQL_DESTROY], 2, p, on_destroyed, NULL);
}

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST
#define PUT EU_HTTP_PUT
#define DELETE EU_HTTP_DELETE
#define AUTH (EU_ROUTE_AUTH | EU_ROUTE_API)

/* Mastodon asks write:media for every media action, reading one included. */
const struct eu_route eu_media_routes[] = {
    {POST, "/api/v1/media", media_create_v1, "write:media", AUTH | EU_ROUTE_UPLOAD},
    {POST, "/api/v2/media", media_create_v2, "write:media", AUTH | EU_ROUTE_UPLOAD},
    {GET, "/api/v1/media/:id", media_show, "write:media", AUTH},
    {PUT, "/api/v1/media/:id", media_update, "write:media", AUTH},
    {DELETE, "/api/v1/media/:id", media_destroy, "write:media", AUTH},
    {0},
};
