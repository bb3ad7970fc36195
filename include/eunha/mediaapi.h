/*
 * Media attachments as the API shows them, and the work between an upload
 * and a ready attachment (src/api/media.c, src/media/process.c,
 * src/media/process_job.c, src/media/serve.c).
 *
 * An upload is a media_attachments row (migrations/tenant/0024_media.sql)
 * in state 'processing' charged with its raw size; an image is then
 * processed (eu_image_process() on the CPU pool) into an original and a
 * WebP preview, stored under "<tenant>/media_attachments/<id>/original.<ext>"
 * and ".../small.webp", and the row turns 'ready' with the sizes of those
 * files. Small images are processed in the request; others by the
 * media_process job on the "media" queue. Video and audio are stored as
 * they came. instance_counters.media_bytes follows the rows' sizes
 * (tenant migration 0025), and is what the tenant's quota is held to.
 */
#ifndef EUNHA_MEDIAAPI_H
#define EUNHA_MEDIAAPI_H

#include <stddef.h>
#include <stdint.h>

#include "eunha/media.h"
#include "eunha/router.h"

struct eu_app;
struct eu_config;
struct eu_job;
struct eu_req;
struct eu_store;
struct eu_tenant;
struct json_t;
struct pg_result;

/*
 * The columns eu_media_json() reads, in this order, for a media_attachments
 * row aliased m: 11 columns.
 */
#define EU_MEDIA_COLUMNS(m)                                                                        \
    m ".id::text, " m ".type, " m ".state, " m ".file_key, " m ".preview_key, " m                  \
      ".remote_url, " m ".description, " m ".focus_x, " m ".focus_y, " m ".blurhash, " m           \
      ".meta::text"
#define EU_MEDIA_NCOLUMNS 11

/*
 * Mastodon's MediaAttachment entity from EU_MEDIA_COLUMNS at col of row:
 * id, type, url and preview_url (eu_store_url() of the keys over base_url,
 * null while processing), remote_url, preview_remote_url and text_url,
 * meta (original, small, focus), description, blurhash, drawn by
 * eu_media_attachment_json() (entities.h) as statuses draw theirs. For the
 * media API. Returns a new reference.
 */
struct json_t *eu_media_json(struct eu_app *app, const char *base_url, const struct pg_result *res,
                             int row, int col);

/* The most bytes an upload of type t may have: [media] image_size_limit
 * (images, gifv) or video_size_limit (video, audio), cut to what a body of
 * [limits] max_upload_bytes can carry. This is what the instance entities
 * publish. */
size_t eu_media_limit(const struct eu_config *cfg, enum eu_media_type t);

/* configuration.media_attachments of the instance entities (v1 and v2).
 * New reference. */
struct json_t *eu_media_config_json(const struct eu_config *cfg);

/* The image pipeline's limits from [media], with previews within
 * preview_side pixels: uploads use [media] preview_max_side, avatars and
 * headers their own box. */
struct eu_image_limits eu_media_image_limits(const struct eu_config *cfg, int preview_side);

/* The tenant's quota in bytes (its row's, else the config's default); 0
 * is unlimited. */
long long eu_media_quota(const struct eu_config *cfg, const struct eu_tenant *t);

/* The media statements (src/api/media.c), for the API and the job. */
enum eu_media_sql_id {
    EU_MEDIA_SQL_INSERT,
    EU_MEDIA_SQL_GET,
    EU_MEDIA_SQL_SHOW,
    EU_MEDIA_SQL_UPDATE,
    EU_MEDIA_SQL_DESTROY,
    EU_MEDIA_SQL_READY,
    EU_MEDIA_SQL_PROCESSED,
    EU_MEDIA_SQL_FAILED,
    EU_MEDIA_SQL_REMOVE,
    EU_MEDIA_SQL_JOB,
};

/* ------------------------------------------------------------ processing */

/*
 * One image on its way from bytes to stored files. Fill the inputs and
 * call eu_media_work_start(); done runs later on the loop with rc:
 *   0   processed and both files stored (original_key, small_key, meta...)
 *   -1  the file is not a usable image: err holds the 422 message, nothing
 *       stored
 *   -2  processed but a file could not be stored: what was stored is
 *       deleted again; the caller answers 500 or retries
 * The caller frees w with eu_media_work_free() (after done).
 */
struct eu_media_work;
typedef void (*eu_media_work_cb)(struct eu_media_work *w);

struct eu_media_work {
    /* inputs */
    struct eu_app *app;
    int64_t tenant_id;
    char media_id[24];
    const unsigned char *data; /* borrowed until done runs */
    size_t len;
    eu_media_work_cb done;
    void *arg;
    /* The tenant's quota (eu_media_quota(); 0: none), which the processed
     * sizes are held to when they replace the upload's charge. */
    long long quota;
    /* outputs */
    int rc;
    char err[256];
    struct eu_image_result img;
    char *original_key; /* heap, freed with w */
    char *small_key;
    char *meta; /* JSON text: {"original": {...}, "small": {...}}; heap */
    /* internal */
    char original_size[24], small_size[24], quota_text[24]; /* decimal, for the statement */
    int puts_pending;
    int puts_failed;
};

struct eu_media_work *eu_media_work_new(struct eu_app *app, int64_t tenant_id, const char *media_id,
                                        const unsigned char *data, size_t len,
                                        eu_media_work_cb done, void *arg);
/* owner: the tenant's CPU-pool job count (eu_tenant.cpu_jobs), which
 * must outlive the work. */
void eu_media_work_start(struct eu_media_work *w, int *owner);
void eu_media_work_free(struct eu_media_work *w);

/* The parameters of EU_MEDIA_SQL_PROCESSED ($2..$11: the media id, what
 * w made, the quota) for a work done with rc 0; they point into w. Both
 * the request and the job record the outcome with it. The statement
 * answers no row when the upload is gone or when the processed files
 * would take the tenant past w->quota (its row then still 'processing'). */
#define EU_MEDIA_PROCESSED_NPARAMS 10
void eu_media_work_processed_params(struct eu_media_work *w,
                                    const char *p[EU_MEDIA_PROCESSED_NPARAMS]);
/* The 422 message of an upload past the tenant's quota, into out. */
void eu_media_quota_message(char *out, size_t n, long long quota);
/* Deletes the files w stored (rc 0), for an upload that went while it was
 * processed. */
void eu_media_work_drop_files(struct eu_media_work *w);

/* The job kind "media_process" (src/app/kinds.c), payload {"media_id"}. */
void eu_media_process_run(struct eu_job *job);

/* ------------------------------------------------------------ routes */

/* GET/HEAD /system/... : local files of the request's tenant. */
void eu_media_serve(struct eu_req *req);
/* The route of eu_media_serve (src/media/serve.c), ending with {0}. */
extern const struct eu_route eu_media_serve_routes[];

#endif
