/*
 * Custom emoji images (include/eunha/mediaemoji.h): processed on the CPU
 * pool, then the image and its still version put in the store one after
 * the other.
 */
#include "eunha/mediaemoji.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>

#include "eunha/app.h"
#include "eunha/cpupool.h"
#include "eunha/mediaapi.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"

/* The still version's box: emoji are small, so this keeps the frame whole. */
#define STATIC_SIDE 400

bool
eu_emoji_image_acceptable(const unsigned char *data, size_t len)
{
    struct eu_media_sniff sn;
    return eu_media_sniff(data, len, &sn) == 0 &&
           (sn.format == EU_MEDIA_FORMAT_PNG || sn.format == EU_MEDIA_FORMAT_GIF ||
            sn.format == EU_MEDIA_FORMAT_WEBP);
}

struct eu_emoji_image *
eu_emoji_image_new(struct eu_app *app, int64_t tenant_id, const unsigned char *data, size_t len,
                   eu_emoji_image_cb done, void *arg)
{
    struct eu_emoji_image *e = eu_xcalloc(1, sizeof(*e));
    e->app = app;
    e->tenant_id = tenant_id;
    e->data = data;
    e->len = len;
    e->done = done;
    e->arg = arg;
    return e;
}

void
eu_emoji_image_free(struct eu_emoji_image *e)
{
    if (!e)
        return;
    eu_image_result_free(&e->img);
    free(e->image_key);
    free(e->static_key);
    free(e);
}

void
eu_emoji_image_unstore(struct eu_emoji_image *e)
{
    if (e->image_key)
        eu_store_del(e->app->store, e->image_key, NULL, NULL);
    if (e->static_key)
        eu_store_del(e->app->store, e->static_key, NULL, NULL);
}

/* An animated GIF's still is its first frame; any other image is its own
 * still, as Mastodon's static version of a still image is. */
static bool
animated(const struct eu_emoji_image *e)
{
    return e->img.type == EU_MEDIA_TYPE_GIFV;
}

static void
on_static_stored(int rc, void *arg)
{
    struct eu_emoji_image *e = arg;
    if (rc != 0) {
        eu_store_del(e->app->store, e->image_key, NULL, NULL);
        e->rc = -2;
    }
    e->done(e);
}

static void
on_image_stored(int rc, void *arg)
{
    struct eu_emoji_image *e = arg;
    if (rc != 0) {
        e->rc = -2;
        e->done(e);
        return;
    }
    bool anim = animated(e);
    eu_store_put(e->app->store, e->static_key, anim ? e->img.small : e->img.original,
                 anim ? e->img.small_len : e->img.original_len,
                 anim ? "image/webp" : e->img.original_mime, on_static_stored, e);
}

/* On a pool thread. */
static void
process_work(void *arg)
{
    struct eu_emoji_image *e = arg;
    struct eu_image_limits lim = eu_media_image_limits(e->app->cfg, STATIC_SIDE);
    e->rc = eu_image_process(e->data, e->len, &lim, &e->img, e->err, sizeof e->err) == 0 ? 0 : -1;
}

static void
process_done(void *arg)
{
    struct eu_emoji_image *e = arg;
    if (e->rc != 0) {
        e->done(e);
        return;
    }
    uint32_t r1 = randombytes_random(), r2 = randombytes_random();
    long long t = (long long)e->tenant_id;
    e->image_key =
        eu_xasprintf("%lld/custom_emojis/%08x%08x/original.%s", t, r1, r2, e->img.original_ext);
    e->static_key = eu_xasprintf("%lld/custom_emojis/%08x%08x/static.%s", t, r1, r2,
                                 animated(e) ? "webp" : e->img.original_ext);
    e->mime = e->img.original_mime;
    e->size = e->img.original_len;
    eu_store_put(e->app->store, e->image_key, e->img.original, e->img.original_len,
                 e->img.original_mime, on_image_stored, e);
}

void
eu_emoji_image_start(struct eu_emoji_image *e)
{
    if (!e->app->store) {
        e->rc = -2;
        snprintf(e->err, sizeof e->err, "Media storage is unavailable");
        e->done(e);
        return;
    }
    eu_cpupool_submit_for(e->app->cpu, e->tenant_id, process_work, process_done, e);
}
