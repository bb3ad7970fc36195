/*
 * A custom emoji's image from bytes to stored files (src/media/emoji.c):
 * sniffed (PNG, GIF or WebP, as Mastodon's CustomEmoji takes), decoded on
 * the CPU pool by the upload pipeline (eu_image_process(), which refuses
 * what does not decode and strips metadata), and stored as two files, the
 * image and its still version (the image itself, or an animated GIF's
 * first frame as WebP), under "<tenant>/custom_emojis/<random>/original.<ext>"
 * and ".../static.<ext>". Shared by the staff's upload
 * (src/api/custom_emojis.c) and the caching of remote emoji
 * (src/media/emoji_fetch.c), which differ only in where the bytes come
 * from and how the row is written.
 */
#ifndef EUNHA_MEDIAEMOJI_H
#define EUNHA_MEDIAEMOJI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/media.h"

struct eu_app;

/* Mastodon's CustomEmoji::LOCAL_LIMIT, and its remote limit too. */
#define EU_EMOJI_FILE_LIMIT (256 * 1024)

struct eu_emoji_image;
typedef void (*eu_emoji_image_cb)(struct eu_emoji_image *e);

struct eu_emoji_image {
    /* inputs */
    struct eu_app *app;
    int64_t tenant_id;
    const unsigned char *data; /* borrowed until done runs */
    size_t len;
    eu_emoji_image_cb done;
    void *arg;
    /* outputs, when done runs:
     *   rc 0   both files stored: image_key, static_key, mime, size
     *   rc -1  not a usable image: err says why, nothing stored
     *   rc -2  a file could not be stored: nothing is left stored */
    int rc;
    char err[256];
    char *image_key, *static_key; /* heap, freed with e */
    const char *mime;             /* the image's, static */
    size_t size;                  /* the image file's bytes */
    /* internal */
    struct eu_image_result img;
};

/* Whether data looks like an image an emoji may be (PNG, GIF or WebP). */
bool eu_emoji_image_acceptable(const unsigned char *data, size_t len);

/* A new work for the caller to free with eu_emoji_image_free() after done. */
struct eu_emoji_image *eu_emoji_image_new(struct eu_app *app, int64_t tenant_id,
                                          const unsigned char *data, size_t len,
                                          eu_emoji_image_cb done, void *arg);
/* Processes and stores; done runs later on the loop. */
void eu_emoji_image_start(struct eu_emoji_image *e);
/* Deletes what e stored (after the row that was to name it was not
 * written). */
void eu_emoji_image_unstore(struct eu_emoji_image *e);
void eu_emoji_image_free(struct eu_emoji_image *e);

struct eu_job;
/* The "emoji_fetch" job: a remote emoji's image cached (emoji_fetch.c). */
void eu_emoji_fetch_run(struct eu_job *job);

#endif
