/*
 * Image work for uploads: decide what a file is from its bytes, then turn an
 * image into a clean original and a WebP preview with a blurhash.
 *
 * Everything here is pure computation on memory: no loop, no tenant, no
 * database, safe to call from any CPU-pool thread at once (no shared state).
 * Decoding uses Debian's libraries (libjpeg-turbo, libpng, libwebp, giflib);
 * only the blurhash encoder is written here, because no package has one.
 */
#ifndef EUNHA_MEDIA_H
#define EUNHA_MEDIA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an upload is, by its bytes (never by the client's Content-Type). */
enum eu_media_format {
    EU_MEDIA_FORMAT_UNKNOWN = 0,
    EU_MEDIA_FORMAT_JPEG,
    EU_MEDIA_FORMAT_PNG,
    EU_MEDIA_FORMAT_WEBP,
    EU_MEDIA_FORMAT_GIF,
    EU_MEDIA_FORMAT_MP4, /* also QuickTime/M4V: ISO BMFF with a video brand */
    EU_MEDIA_FORMAT_WEBM,
    EU_MEDIA_FORMAT_MP3,
    EU_MEDIA_FORMAT_OGG,
    EU_MEDIA_FORMAT_WAV,
    EU_MEDIA_FORMAT_FLAC,
    EU_MEDIA_FORMAT_M4A, /* ISO BMFF with an audio brand */
};

/* Mastodon's attachment types. */
enum eu_media_type {
    EU_MEDIA_TYPE_UNKNOWN = 0,
    EU_MEDIA_TYPE_IMAGE,
    EU_MEDIA_TYPE_GIFV,
    EU_MEDIA_TYPE_VIDEO,
    EU_MEDIA_TYPE_AUDIO,
};

struct eu_media_sniff {
    enum eu_media_format format;
    enum eu_media_type type; /* image for JPEG/PNG/WebP/static GIF, gifv for animated GIF */
    const char *mime;        /* static string: "image/jpeg", "video/mp4", ... */
    const char *ext;         /* static string without the dot: "jpg", "mp4", ... */
};

/* Fills out from the first bytes of a file (n may be the whole file). Returns
 * 0, or -1 when the format is not one we accept (out->format UNKNOWN). */
int eu_media_sniff(const unsigned char *data, size_t n, struct eu_media_sniff *out);

/* "image", "gifv", "video", "audio", "unknown": static strings. */
const char *eu_media_type_name(enum eu_media_type t);

struct eu_image_limits {
    uint64_t max_pixels;    /* of the original (width * height); e.g. 33177600 (Mastodon's 8K) */
    int preview_max_side;   /* the preview fits in this square box, e.g. 640 (Mastodon: 640x640
                               area-ish) */
    int preview_quality;    /* WebP quality of the preview, 0-100 */
    int original_quality;   /* JPEG/WebP quality when the original is re-encoded, 0-100 */
    uint64_t cpu_budget_ms; /* 0: none. Work past it fails with "too large". */
    /* The preview's box height when it is not square (a header's 1500x500);
     * 0: preview_max_side. */
    int preview_max_height;
};

struct eu_image_result {
    /*
     * The original to store: EXIF orientation applied, every piece of
     * metadata (EXIF, XMP, ICC, comments, text chunks) gone. JPEG stays JPEG
     * (re-encoded), PNG stays PNG (alpha kept), WebP stays WebP, a static GIF
     * becomes PNG, an animated GIF is kept byte for byte (type gifv) since
     * its frames are the point. Heap memory, freed by eu_image_result_free().
     */
    unsigned char *original;
    size_t original_len;
    enum eu_media_format original_format;
    const char *original_mime; /* static string */
    const char *original_ext;  /* static string */
    enum eu_media_type type;   /* image or gifv */
    int width, height;         /* of the original after orientation */
    /* WebP preview (first frame for an animated GIF), fits in
     * preview_max_side; never larger than the original. Heap memory. */
    unsigned char *small;
    size_t small_len;
    int small_width, small_height;
    char blurhash[64]; /* NUL-terminated, 4x3 components (Mastodon's choice) */
    double duration_s; /* animated GIF: total frame delays; else 0 */
    double fps;        /* animated GIF; else 0 */
};

/*
 * Decodes data (any image format eu_media_sniff accepts), checks the pixel
 * bound before allocating the pixels, and fills out. Thread-safe, bounded
 * memory (about 4 bytes per allowed pixel plus the preview).
 * Returns 0, or -1 with a message for a 422 in err ("Validation failed: File
 * could not be processed", "... dimensions are too large", ...) and nothing
 * in out to free. Truncated, lying and bomb files all end here, never crash.
 */
int eu_image_process(const unsigned char *data, size_t len, const struct eu_image_limits *lim,
                     struct eu_image_result *out, char *err, size_t errlen);
/*
 * eu_image_process() for an avatar (Mastodon's "400x400#"): the image,
 * once oriented, is cut to its centred square (the shorter side's), so the
 * original, width and height are that square and the preview is it scaled
 * to at most preview_max_side, never enlarged. An animated GIF keeps its
 * bytes (and size) as the original; its preview is the cropped first frame.
 */
int eu_image_process_square(const unsigned char *data, size_t len,
                            const struct eu_image_limits *lim, struct eu_image_result *out,
                            char *err, size_t errlen);
/* Frees what eu_image_process() put in r (not r itself); r may be zeroed. */
void eu_image_result_free(struct eu_image_result *r);

/*
 * Blurhash of an RGB image (3 bytes per pixel, rows stride bytes apart) with
 * cx by cy components (1-9 each). Writes a NUL-terminated string to out
 * (at most 2 + 4 + 2 * cx * cy ... bytes; 64 is enough for 4x3 and up to
 * 9x3). Returns its length, or -1 for bad arguments or too small out.
 */
int eu_blurhash_encode(const unsigned char *rgb, int width, int height, size_t stride, int cx,
                       int cy, char *out, size_t outlen);

#endif
