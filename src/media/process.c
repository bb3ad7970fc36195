/*
 * One image from uploaded bytes to stored files (include/eunha/mediaapi.h):
 * eu_image_process() on the CPU pool, then the original and the WebP
 * preview put in the store side by side. Shared by the upload request
 * (small images, processed while the client waits) and the media_process
 * job (the rest), which differ only in how they record the outcome.
 */
#include "eunha/mediaapi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/log.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"

struct eu_image_limits
eu_media_image_limits(const struct eu_config *cfg, int preview_side)
{
    return (struct eu_image_limits){
        .max_pixels = cfg->media_image_matrix_limit,
        .preview_max_side = preview_side,
        .preview_quality = cfg->media_preview_quality,
        .original_quality = cfg->media_original_quality,
        .cpu_budget_ms = (uint64_t)cfg->media_cpu_budget_ms,
    };
}

struct eu_media_work *
eu_media_work_new(struct eu_app *app, int64_t tenant_id, const char *media_id,
                  const unsigned char *data, size_t len, eu_media_work_cb done, void *arg)
{
    struct eu_media_work *w = eu_xcalloc(1, sizeof(*w));
    w->app = app;
    w->tenant_id = tenant_id;
    snprintf(w->media_id, sizeof(w->media_id), "%s", media_id);
    w->data = data;
    w->len = len;
    w->done = done;
    w->arg = arg;
    return w;
}

void
eu_media_work_free(struct eu_media_work *w)
{
    if (!w)
        return;
    eu_image_result_free(&w->img);
    free(w->original_key);
    free(w->small_key);
    free(w->meta);
    free(w);
}

/* Runs on a pool thread: only w and the config's numbers, read once. */
static void
process_work(void *arg)
{
    struct eu_media_work *w = arg;
    const struct eu_config *cfg = w->app->cfg;
    struct eu_image_limits lim = eu_media_image_limits(cfg, cfg->media_preview_max_side);
    if (eu_image_process(w->data, w->len, &lim, &w->img, w->err, sizeof(w->err)) < 0) {
        w->rc = -1;
        if (!w->err[0])
            snprintf(w->err, sizeof(w->err), "Validation failed: File could not be processed");
    }
}

static void
size_json(char *out, size_t n, int width, int height)
{
    snprintf(out, n, "{\"width\": %d, \"height\": %d, \"size\": \"%dx%d\", \"aspect\": %.17g}",
             width, height, width, height, height > 0 ? (double)width / height : 0.0);
}

static void
make_meta(struct eu_media_work *w)
{
    char orig[256], small[256], anim[128] = "";
    size_json(orig, sizeof(orig), w->img.width, w->img.height);
    size_json(small, sizeof(small), w->img.small_width, w->img.small_height);
    if (w->img.type == EU_MEDIA_TYPE_GIFV && w->img.fps > 0) {
        /* Mastodon's gifv original also carries its timing. */
        size_t n = strlen(orig);
        snprintf(anim, sizeof(anim), ", \"frame_rate\": \"%.0f/1\", \"duration\": %.3f}",
                 w->img.fps, w->img.duration_s);
        orig[n - 1] = '\0';
        w->meta = eu_xasprintf("{\"original\": %s%s, \"small\": %s}", orig, anim, small);
        return;
    }
    w->meta = eu_xasprintf("{\"original\": %s, \"small\": %s}", orig, small);
}

static void
on_put(int rc, void *arg)
{
    struct eu_media_work *w = arg;
    if (rc < 0)
        w->puts_failed++;
    if (--w->puts_pending > 0)
        return;
    if (w->puts_failed) {
        /* Neither file alone is of use: take back what was stored. */
        eu_media_work_drop_files(w);
        w->rc = -2;
        snprintf(w->err, sizeof(w->err), "Cannot store the file; try again shortly");
    }
    w->done(w);
}

static void
process_done(void *arg)
{
    struct eu_media_work *w = arg;
    if (w->rc < 0) {
        w->done(w);
        return;
    }
    make_meta(w);
    w->original_key = eu_xasprintf("%lld/media_attachments/%s/original.%s", (long long)w->tenant_id,
                                   w->media_id, w->img.original_ext);
    w->small_key =
        eu_xasprintf("%lld/media_attachments/%s/small.webp", (long long)w->tenant_id, w->media_id);
    snprintf(w->original_size, sizeof(w->original_size), "%zu", w->img.original_len);
    snprintf(w->small_size, sizeof(w->small_size), "%zu", w->img.small_len);
    w->puts_pending = 2;
    eu_store_put(w->app->store, w->original_key, w->img.original, w->img.original_len,
                 w->img.original_mime, on_put, w);
    eu_store_put(w->app->store, w->small_key, w->img.small, w->img.small_len, "image/webp", on_put,
                 w);
}

void
eu_media_work_processed_params(struct eu_media_work *w, const char *p[EU_MEDIA_PROCESSED_NPARAMS])
{
    snprintf(w->quota_text, sizeof(w->quota_text), "%lld", w->quota);
    p[0] = w->media_id;
    p[1] = eu_media_type_name(w->img.type);
    p[2] = w->meta;
    p[3] = w->img.blurhash;
    p[4] = w->original_key;
    p[5] = w->img.original_mime;
    p[6] = w->original_size;
    p[7] = w->small_key;
    p[8] = w->small_size;
    p[9] = w->quota_text;
}

void
eu_media_work_drop_files(struct eu_media_work *w)
{
    eu_store_del(w->app->store, w->original_key, NULL, NULL);
    eu_store_del(w->app->store, w->small_key, NULL, NULL);
}

void
eu_media_work_start(struct eu_media_work *w, int *owner)
{
    /* Counted against the tenant's CPU-pool jobs (never refused here: the
     * upload API refuses a tenant at its cap before storing anything, and
     * the media queue runs a bounded number of a tenant's jobs), so its
     * password checks and uploads share one per-tenant bound. */
    eu_cpupool_try_submit(w->app->cpu, w->tenant_id, owner, INT_MAX, 0, process_work, process_done,
                          w);
}
