/*
 * Avatars and headers: the avatar and header files of
 * PATCH /api/v1/accounts/update_credentials, made into images the size
 * Mastodon serves (an avatar within 400x400, a header within 1500x500) by
 * the upload pipeline (eu_image_process() on the CPU pool, so the loop
 * never decodes), and stored under "<tenant>/accounts/<id>/avatar-<n>.webp".
 * accounts.avatar_url / header_url then hold the store key of a local
 * account's image (a remote account's hold its URL), which the entities
 * turn into the store's URL, so a domain or store change moves nothing.
 *
 * As Mastodon does, an avatar is cut to its centred square and scaled down
 * to at most 400x400 ("400x400#"); a header is fitted within 1500x500
 * ("1500x500>"), never cropped. An animated GIF's first frame is kept.
 */
#include "accounts_internal.h"

#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/media.h"
#include "eunha/mediaapi.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"
#include "eunha/tenant.h"

/* Mastodon's Account::Avatar and ::Header limits. */
#define PROFILE_IMAGE_LIMIT (8 * 1024 * 1024)
#define AVATAR_SIDE 400
#define HEADER_SIDE 1500
#define HEADER_HEIGHT 500

struct one_image {
    const char *field;         /* "avatar", "header" */
    const unsigned char *data; /* the request's, borrowed */
    size_t len;
    struct eu_image_limits lim;
    struct eu_image_result img;
    int rc;
    char err[256];
    char *key; /* arena copy once stored */
};

struct profile_images {
    struct eu_req *req;
    struct one_image images[2];
    int n, next;
    eu_profile_images_cb cb;
    void *arg;
};

static void process_next(struct profile_images *pi);

static void
result_free(void *p)
{
    eu_image_result_free(p);
}

static void
on_stored(int rc, void *arg)
{
    struct profile_images *pi = arg;
    struct eu_req *req = pi->req;
    eu_req_enter(req);
    struct one_image *im = &pi->images[pi->next];
    if (rc != 0) {
        pi->cb(req, 500, eu_arena_sprintf(req->arena, "The %s could not be stored", im->field),
               NULL, NULL, pi->arg);
        return;
    }
    pi->next++;
    process_next(pi);
}

/* On a pool thread: only the image in turn. */
static void
process_work(void *arg)
{
    struct profile_images *pi = arg;
    struct one_image *im = &pi->images[pi->next];
    int (*run)(const unsigned char *, size_t, const struct eu_image_limits *,
               struct eu_image_result *, char *, size_t) =
        strcmp(im->field, "avatar") == 0 ? eu_image_process_square : eu_image_process;
    im->rc = run(im->data, im->len, &im->lim, &im->img, im->err, sizeof(im->err));
}

static void
process_done(void *arg)
{
    struct profile_images *pi = arg;
    struct eu_req *req = pi->req;
    eu_req_enter(req);
    struct one_image *im = &pi->images[pi->next];
    if (im->rc != 0) {
        pi->cb(req, 422, eu_arena_strdup(req->arena, im->err), NULL, NULL, pi->arg);
        return;
    }
    /* The request's arena frees the pixels however the request ends. */
    eu_arena_on_free(req->arena, result_free, &im->img);
    im->key = eu_arena_sprintf(req->arena, "%lld/accounts/%lld/%s-%08x%08x.webp",
                               (long long)req->tenant->id, (long long)req->auth.account_id,
                               im->field, randombytes_random(), randombytes_random());
    eu_store_put(req->app->store, im->key, im->img.small, im->img.small_len, "image/webp",
                 on_stored, pi);
}

static void
process_next(struct profile_images *pi)
{
    if (pi->next == pi->n) {
        const char *avatar = NULL, *header = NULL;
        for (int i = 0; i < pi->n; i++) {
            if (strcmp(pi->images[i].field, "avatar") == 0)
                avatar = pi->images[i].key;
            else
                header = pi->images[i].key;
        }
        pi->cb(pi->req, 0, NULL, avatar, header, pi->arg);
        return;
    }
    eu_cpupool_submit_for(pi->req->app->cpu, pi->req->tenant->id, process_work, process_done, pi);
}

/* Reads params[field] as an image file into im. Returns 0 (absent: im->data
 * NULL), or -1 with err's 422. */
static int
read_file(struct eu_req *req, json_t *params, const char *field, const char *label, int side,
          struct one_image *im, struct eu_error *err)
{
    json_t *file = json_object_get(params, field);
    memset(im, 0, sizeof(*im));
    if (!json_is_object(file))
        return 0;
    json_t *data = json_object_get(file, "data");
    size_t len = json_string_length(data);
    if (!json_is_string(data) || len == 0)
        return 0;
    if (len > PROFILE_IMAGE_LIMIT)
        return eu_error_set(err, 422, "Validation failed: %s file size must be less than 8 MB",
                            label);
    struct eu_media_sniff sn;
    const unsigned char *bytes = (const unsigned char *)json_string_value(data);
    if (eu_media_sniff(bytes, len, &sn) < 0 ||
        (sn.type != EU_MEDIA_TYPE_IMAGE && sn.type != EU_MEDIA_TYPE_GIFV))
        return eu_error_set(err, 422, "Validation failed: %s content type is invalid", label);
    im->field = field;
    im->data = bytes;
    im->len = len;
    im->lim = eu_media_image_limits(req->app->cfg, side);
    if (strcmp(field, "header") == 0)
        im->lim.preview_max_height = HEADER_HEIGHT;
    return 0;
}

int
eu_profile_images_store(struct eu_req *req, json_t *params, eu_profile_images_cb cb, void *arg,
                        struct eu_error *err)
{
    struct profile_images *pi = eu_arena_calloc(req->arena, sizeof(*pi));
    pi->req = req;
    pi->cb = cb;
    pi->arg = arg;
    struct one_image im;
    if (read_file(req, params, "avatar", "Avatar", AVATAR_SIDE, &im, err) < 0)
        return -1;
    if (im.data)
        pi->images[pi->n++] = im;
    if (read_file(req, params, "header", "Header", HEADER_SIDE, &im, err) < 0)
        return -1;
    if (im.data)
        pi->images[pi->n++] = im;
    if (!pi->n)
        return 0;
    if (!req->app->store)
        return eu_error_set(err, 503, "Media storage is unavailable");
    process_next(pi);
    return 1;
}

void
eu_profile_image_delete(struct eu_app *app, const char *stored)
{
    if (!stored || !*stored || strstr(stored, "://") || !app->store)
        return;
    eu_store_del(app->store, stored, NULL, NULL);
}
