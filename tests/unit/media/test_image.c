/*
 * eu_image_process on files the test makes with the libraries' own
 * encoders: EXIF orientation applied and every metadata byte gone, alpha
 * kept, each format's original, animated GIFs kept whole, and truncated,
 * lying and bomb files refused with -1 and a 422 message.
 */
#include <check.h>
#include <gif_lib.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <webp/decode.h>
#include <webp/encode.h>
/* After stdio.h: jpeglib.h uses FILE without including it. */
#include <jpeglib.h>

#include "eunha/media.h"

static const struct eu_image_limits lim = {
    .max_pixels = 33177600,
    .preview_max_side = 640,
    .preview_quality = 80,
    .original_quality = 90,
};

struct buf {
    unsigned char *p;
    size_t len;
};

static void
buf_add(struct buf *b, const void *data, size_t n)
{
    b->p = realloc(b->p, b->len + n);
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static bool
contains(const struct buf *b, const void *needle, size_t n)
{
    return b->len >= n && memmem(b->p, b->len, needle, n) != NULL;
}

/* ---- fixtures ----------------------------------------------------------- */

/* Top half red, bottom half blue. */
static unsigned char *
two_band_rgb(int w, int h)
{
    unsigned char *px = malloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *p = px + ((size_t)y * w + x) * 3;
            p[0] = y < h / 2 ? 255 : 0;
            p[1] = 0;
            p[2] = y < h / 2 ? 0 : 255;
        }
    return px;
}

/*
 * A little-endian TIFF with IFD0 = Make "EunhaCam", Orientation, a GPS IFD
 * pointer; the GPS IFD holds GPSLatitudeRef "N" and GPSLatitude (three
 * rationals stored past the IFDs).
 */
static struct buf
exif_tiff(int orientation)
{
    static const char t[] = "II*\0\x08\0\0\0"
                            /* IFD0 at 8: 3 entries */
                            "\x03\0"
                            "\x0f\x01\x02\0\x09\0\0\0\x32\0\0\0" /* Make, ASCII, 9 bytes at 50 */
                            "\x12\x01\x03\0\x01\0\0\0\0\0\0\0"   /* Orientation, SHORT (patched) */
                            "\x25\x88\x04\0\x01\0\0\0\x3c\0\0\0" /* GPS IFD at 60 */
                            "\0\0\0\0"                           /* no IFD1 */
                            "EunhaCam\0\0"                       /* 50..59 */
                            /* GPS IFD at 60: 2 entries */
                            "\x02\0"
                            "\x01\0\x02\0\x02\0\0\0N\0\0\0"    /* GPSLatitudeRef "N" */
                            "\x02\0\x05\0\x03\0\0\0\x5c\0\0\0" /* GPSLatitude, 3 rationals at 92 */
                            "\0\0\0\0"
                            "\x25\0\0\0\x01\0\0\0\x2e\0\0\0\x01\0\0\0\x0c\0\0\0\x01\0\0\0";
    struct buf b = {0};
    buf_add(&b, t, sizeof t - 1);
    b.p[8 + 2 + 12 + 8] = (unsigned char)orientation;
    return b;
}

/* A JPEG of w x h pixels px in colour space cs (JCS_RGB or JCS_CMYK), with
 * EXIF orientation and a comment when orientation is not 0. */
static struct buf
encode_jpeg(const unsigned char *px, int w, int h, J_COLOR_SPACE cs, int orientation)
{
    int components = cs == JCS_CMYK ? 4 : 3;
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *mem = NULL;
    unsigned long size = 0;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &mem, &size);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = components;
    c.in_color_space = cs;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 95, TRUE);
    jpeg_start_compress(&c, TRUE);
    if (orientation) {
        struct buf app1 = {0}, tiff = exif_tiff(orientation);
        buf_add(&app1, "Exif\0\0", 6);
        buf_add(&app1, tiff.p, tiff.len);
        jpeg_write_marker(&c, JPEG_APP0 + 1, app1.p, (unsigned)app1.len);
        jpeg_write_marker(&c, JPEG_COM, (const JOCTET *)"secret comment", 14);
        free(app1.p);
        free(tiff.p);
    }
    for (int y = 0; y < h; y++) {
        JSAMPROW row = (JSAMPROW)(px + (size_t)y * w * components);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return (struct buf){mem, size};
}

static struct buf
make_jpeg(const unsigned char *rgb, int w, int h, int orientation)
{
    return encode_jpeg(rgb, w, h, JCS_RGB, orientation);
}

/* Decodes a JPEG to RGB with libjpeg (the caller frees). */
static unsigned char *
read_jpeg(const struct buf *b, int *w, int *h)
{
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, b->p, (unsigned long)b->len);
    jpeg_read_header(&c, TRUE);
    c.out_color_space = JCS_RGB;
    jpeg_start_decompress(&c);
    *w = (int)c.output_width;
    *h = (int)c.output_height;
    unsigned char *px = malloc((size_t)*w * *h * 3);
    while (c.output_scanline < c.output_height) {
        JSAMPROW row = px + (size_t)c.output_scanline * *w * 3;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    return px;
}

static uint32_t
crc32_of(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static void
put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* RGBA w x h: left half fully transparent, right half opaque green; with a
 * tEXt chunk that must not survive. */
static struct buf
make_png_alpha(int w, int h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)w;
    img.height = (png_uint_32)h;
    img.format = PNG_FORMAT_RGBA;
    unsigned char *px = malloc((size_t)w * h * 4);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *p = px + ((size_t)y * w + x) * 4;
            p[0] = 0;
            p[1] = 200;
            p[2] = 0;
            p[3] = x < w / 2 ? 0 : 255;
        }
    png_alloc_size_t size = 0;
    png_image_write_to_memory(&img, NULL, &size, 0, px, 0, NULL);
    struct buf b = {malloc(size), size};
    png_image_write_to_memory(&img, b.p, &size, 0, px, 0, NULL);
    free(px);
    /* Insert a tEXt chunk after IHDR (8 + 25 bytes). */
    static const char text[] = "tEXtComment\0secretpng";
    unsigned char chunk[4 + sizeof text - 1 + 4];
    put_be32(chunk, sizeof text - 1 - 4);
    memcpy(chunk + 4, text, sizeof text - 1);
    put_be32(chunk + 4 + sizeof text - 1, crc32_of(chunk + 4, sizeof text - 1));
    struct buf out = {0};
    buf_add(&out, b.p, 33);
    buf_add(&out, chunk, sizeof chunk);
    buf_add(&out, b.p + 33, b.len - 33);
    free(b.p);
    return out;
}

static unsigned char *
read_png_rgba(const struct buf *b, int *w, int *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    ck_assert(png_image_begin_read_from_memory(&img, b->p, b->len));
    img.format = PNG_FORMAT_RGBA;
    *w = (int)img.width;
    *h = (int)img.height;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    ck_assert(png_image_finish_read(&img, NULL, px, 0, NULL));
    return px;
}

static int
gif_write(GifFileType *gif, const GifByteType *data, int n)
{
    buf_add(gif->UserData, data, (size_t)n);
    return n;
}

/* 8x8 frames of palette index (x + f) % 2, each shown delay_cs; colour 2
 * is transparent. */
static struct buf
make_gif(int frames, int delay_cs)
{
    struct buf b = {0};
    int err;
    GifFileType *gif = EGifOpen(&b, gif_write, &err);
    GifColorType colors[4] = {{255, 0, 0}, {0, 0, 255}, {0, 0, 0}, {0, 0, 0}};
    ColorMapObject *map = GifMakeMapObject(4, colors);
    EGifSetGifVersion(gif, true);
    EGifPutScreenDesc(gif, 8, 8, 2, 0, map);
    for (int f = 0; f < frames; f++) {
        unsigned char gce[4] = {1, (unsigned char)delay_cs, 0, 2};
        EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, gce);
        EGifPutImageDesc(gif, 0, 0, 8, 8, false, NULL);
        for (int y = 0; y < 8; y++) {
            GifPixelType line[8];
            for (int x = 0; x < 8; x++)
                line[x] = y == 0 ? 2 : (GifPixelType)((x + f) % 2);
            EGifPutLine(gif, line, 8);
        }
    }
    EGifCloseFile(gif, &err);
    GifFreeMapObject(map);
    return b;
}

static void
check_preview(const struct eu_image_result *r, int side)
{
    int w, h;
    ck_assert_ptr_nonnull(r->small);
    ck_assert(WebPGetInfo(r->small, r->small_len, &w, &h));
    ck_assert_int_eq(w, r->small_width);
    ck_assert_int_eq(h, r->small_height);
    ck_assert_int_le(w, side);
    ck_assert_int_le(h, side);
    ck_assert_int_le(w, r->width);
    ck_assert_int_le(h, r->height);
    ck_assert_int_eq(strlen(r->blurhash), 28);
    ck_assert_int_eq(r->blurhash[0], 'L');
}

static void
expect_refused(const struct buf *b, const char *msg_part)
{
    struct eu_image_result r;
    char err[128] = "";
    ck_assert_int_eq(eu_image_process(b->p, b->len, &lim, &r, err, sizeof err), -1);
    ck_assert_ptr_null(r.original);
    ck_assert_ptr_null(r.small);
    ck_assert_msg(strstr(err, msg_part), "error '%s' lacks '%s'", err, msg_part);
}

/* ---- tests -------------------------------------------------------------- */

START_TEST(test_jpeg_exif_rotated_and_stripped)
{
    unsigned char *rgb = two_band_rgb(64, 32);
    struct buf in = make_jpeg(rgb, 64, 32, 6);
    ck_assert(contains(&in, "EunhaCam", 8));
    struct eu_image_result r;
    char err[128];
    ck_assert_int_eq(eu_image_process(in.p, in.len, &lim, &r, err, sizeof err), 0);
    ck_assert_int_eq(r.original_format, EU_MEDIA_FORMAT_JPEG);
    ck_assert_str_eq(r.original_mime, "image/jpeg");
    ck_assert_int_eq(r.type, EU_MEDIA_TYPE_IMAGE);
    ck_assert_int_eq(r.width, 32);
    ck_assert_int_eq(r.height, 64);
    struct buf out = {r.original, r.original_len};
    ck_assert(!contains(&out, "Exif", 4));
    ck_assert(!contains(&out, "EunhaCam", 8));
    ck_assert(!contains(&out, "secret comment", 14));
    ck_assert(!contains(&out, "\xff\xe1", 2));
    int w, h;
    unsigned char *px = read_jpeg(&out, &w, &h);
    ck_assert_int_eq(w, 32);
    ck_assert_int_eq(h, 64);
    /* Rotated a quarter turn clockwise: the red top is now the right side. */
    const unsigned char *right = px + ((size_t)32 * w + 24) * 3;
    const unsigned char *left = px + ((size_t)32 * w + 8) * 3;
    ck_assert_int_gt(right[0], 200);
    ck_assert_int_lt(right[2], 60);
    ck_assert_int_gt(left[2], 200);
    ck_assert_int_lt(left[0], 60);
    check_preview(&r, 640);
    ck_assert_int_eq(r.small_width, 32);
    ck_assert_int_eq(r.small_height, 64);
    free(px);
    eu_image_result_free(&r);
    free(in.p);
    free(rgb);
}
END_TEST

START_TEST(test_jpeg_other_orientations)
{
    /* 3 (half turn): red ends at the bottom; 8 (quarter turn back): left. */
    unsigned char *rgb = two_band_rgb(64, 32);
    for (int o = 1; o <= 8; o++) {
        struct buf in = make_jpeg(rgb, 64, 32, o);
        struct eu_image_result r;
        char err[128];
        ck_assert_int_eq(eu_image_process(in.p, in.len, &lim, &r, err, sizeof err), 0);
        ck_assert_int_eq(r.width, o >= 5 ? 32 : 64);
        struct buf out = {r.original, r.original_len};
        int w, h;
        unsigned char *px = read_jpeg(&out, &w, &h);
        if (o == 3) {
            ck_assert_int_gt(px[((size_t)28 * w + 10) * 3], 200);
            ck_assert_int_gt(px[((size_t)4 * w + 10) * 3 + 2], 200);
        } else if (o == 8) {
            ck_assert_int_gt(px[((size_t)32 * w + 8) * 3], 200);
            ck_assert_int_gt(px[((size_t)32 * w + 24) * 3 + 2], 200);
        }
        free(px);
        eu_image_result_free(&r);
        free(in.p);
    }
    free(rgb);
}
END_TEST

/* A CMYK JPEG as Photoshop writes it (Adobe marker, inverted values):
 * top half no ink (white), bottom half full black ink. */
START_TEST(test_jpeg_cmyk)
{
    int w = 32, h = 32;
    unsigned char *cmyk = malloc((size_t)w * h * 4);
    for (int i = 0; i < w * h; i++) {
        memset(cmyk + 4 * i, 255, 4);
        if (i / w >= h / 2)
            cmyk[4 * i + 3] = 0;
    }
    struct buf in = encode_jpeg(cmyk, w, h, JCS_CMYK, 0);
    struct eu_image_result r;
    char err[128];
    ck_assert_int_eq(eu_image_process(in.p, in.len, &lim, &r, err, sizeof err), 0);
    struct buf out = {r.original, r.original_len};
    int ow, oh;
    unsigned char *px = read_jpeg(&out, &ow, &oh);
    ck_assert_int_eq(ow, w);
    ck_assert_int_eq(oh, h);
    ck_assert_int_gt(px[(4 * w + 4) * 3], 240);
    ck_assert_int_lt(px[(28 * w + 4) * 3 + 1], 15);
    free(px);
    eu_image_result_free(&r);
    free(in.p);
    free(cmyk);
}
END_TEST

START_TEST(test_png_alpha_kept)
{
    struct buf in = make_png_alpha(40, 30);
    ck_assert(contains(&in, "secretpng", 9));
    struct eu_image_result r;
    char err[128];
    ck_assert_int_eq(eu_image_process(in.p, in.len, &lim, &r, err, sizeof err), 0);
    ck_assert_int_eq(r.original_format, EU_MEDIA_FORMAT_PNG);
    ck_assert_str_eq(r.original_ext, "png");
    ck_assert_int_eq(r.width, 40);
    struct buf out = {r.original, r.original_len};
    ck_assert(!contains(&out, "secretpng", 9));
    ck_assert(!contains(&out, "tEXt", 4));
    int w, h;
    unsigned char *px = read_png_rgba(&out, &w, &h);
    ck_assert_int_eq(w, 40);
    ck_assert_int_eq(h, 30);
    ck_assert_int_eq(px[(10 * 40 + 5) * 4 + 3], 0);
    ck_assert_int_eq(px[(10 * 40 + 35) * 4 + 3], 255);
    ck_assert_int_eq(px[(10 * 40 + 35) * 4 + 1], 200);
    free(px);
    check_preview(&r, 640);
    WebPBitstreamFeatures f;
    ck_assert_int_eq(WebPGetFeatures(r.small, r.small_len, &f), VP8_STATUS_OK);
    ck_assert(f.has_alpha);
    unsigned char *sp = WebPDecodeRGBA(r.small, r.small_len, &w, &h);
    ck_assert_int_lt(sp[(10 * w + 2) * 4 + 3], 10);
    ck_assert_int_gt(sp[(10 * w + w - 3) * 4 + 3], 245);
    WebPFree(sp);
    eu_image_result_free(&r);
    free(in.p);
}
END_TEST

START_TEST(test_webp_and_preview_box)
{
    int W = 1000, H = 500;
    unsigned char *rgb = two_band_rgb(W, H);
    uint8_t *webp = NULL;
    size_t n = WebPEncodeRGB(rgb, W, H, W * 3, 90, &webp);
    struct eu_image_limits small = lim;
    small.preview_max_side = 64;
    struct eu_image_result r;
    char err[128];
    ck_assert_int_eq(eu_image_process(webp, n, &small, &r, err, sizeof err), 0);
    ck_assert_int_eq(r.original_format, EU_MEDIA_FORMAT_WEBP);
    ck_assert_str_eq(r.original_mime, "image/webp");
    int w, h;
    ck_assert(WebPGetInfo(r.original, r.original_len, &w, &h));
    ck_assert_int_eq(w, W);
    ck_assert_int_eq(h, H);
    check_preview(&r, 64);
    ck_assert_int_eq(r.small_width, 64);
    ck_assert_int_eq(r.small_height, 32);
    /* Box-filtered: the bands stay clean away from the seam. */
    unsigned char *sp = WebPDecodeRGB(r.small, r.small_len, &w, &h);
    ck_assert_int_gt(sp[(4 * w + 30) * 3], 200);
    ck_assert_int_gt(sp[(28 * w + 30) * 3 + 2], 200);
    WebPFree(sp);
    eu_image_result_free(&r);
    WebPFree(webp);
    free(rgb);
}
END_TEST

/* w x h RGB in three bands along the longer side: red, green, blue. */
static unsigned char *
three_band_rgb(int w, int h)
{
    unsigned char *px = malloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int band = w >= h ? x * 3 / w : y * 3 / h;
            unsigned char *p = px + ((size_t)y * w + x) * 3;
            p[0] = band == 0 ? 255 : 0;
            p[1] = band == 1 ? 255 : 0;
            p[2] = band == 2 ? 255 : 0;
        }
    return px;
}

static bool
is_green(const unsigned char *p)
{
    return p[0] < 60 && p[1] > 200 && p[2] < 60;
}

/* Processes a lossless WebP of three_band_rgb(W, H) as an avatar and checks
 * that the preview is the green centre, side x side. */
static void
check_square(int W, int H, int preview_side, int side)
{
    unsigned char *rgb = three_band_rgb(W, H);
    uint8_t *webp = NULL;
    size_t n = WebPEncodeLosslessRGB(rgb, W, H, W * 3, &webp);
    struct eu_image_limits l = lim;
    l.preview_max_side = preview_side;
    struct eu_image_result r;
    char err[128];
    ck_assert_int_eq(eu_image_process_square(webp, n, &l, &r, err, sizeof err), 0);
    int sq = W < H ? W : H;
    ck_assert_int_eq(r.width, sq);
    ck_assert_int_eq(r.height, sq);
    int w, h;
    unsigned char *op = WebPDecodeRGB(r.original, r.original_len, &w, &h);
    ck_assert_int_eq(w, sq);
    ck_assert_int_eq(h, sq);
    /* Lossless, so every pixel of the original is exactly the middle band. */
    for (int i = 0; i < w * h; i++)
        ck_assert_msg(op[3 * i] == 0 && op[3 * i + 1] == 255 && op[3 * i + 2] == 0, "pixel %d", i);
    WebPFree(op);
    ck_assert_int_eq(r.small_width, side);
    ck_assert_int_eq(r.small_height, side);
    unsigned char *sp = WebPDecodeRGB(r.small, r.small_len, &w, &h);
    ck_assert_int_eq(w, side);
    ck_assert_int_eq(h, side);
    int probe[] = {1, side / 2, side - 2};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            ck_assert_msg(is_green(sp + ((size_t)probe[j] * w + probe[i]) * 3), "at %d,%d",
                          probe[i], probe[j]);
    WebPFree(sp);
    eu_image_result_free(&r);
    WebPFree(webp);
    free(rgb);
}

START_TEST(test_square_crop)
{
    /* Never enlarged: a 300x100 image gives its 100x100 centre. */
    check_square(300, 100, 400, 100);
    /* Scaled down after the crop, and tall images likewise. */
    check_square(300, 100, 50, 50);
    check_square(120, 360, 64, 64);
}
END_TEST

/* A box that is not square (a header's 1500x500) fits without cropping. */
START_TEST(test_preview_box_height)
{
    struct {
        int w, h, pw, ph;
    } cases[] = {
        {3000, 600, 1500, 300}, {1000, 1000, 500, 500}, {800, 600, 667, 500}, {600, 200, 600, 200}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *rgb = two_band_rgb(cases[i].w, cases[i].h);
        uint8_t *webp = NULL;
        size_t n = WebPEncodeRGB(rgb, cases[i].w, cases[i].h, cases[i].w * 3, 50, &webp);
        struct eu_image_limits l = lim;
        l.preview_max_side = 1500;
        l.preview_max_height = 500;
        struct eu_image_result r;
        char err[128];
        ck_assert_int_eq(eu_image_process(webp, n, &l, &r, err, sizeof err), 0);
        ck_assert_int_eq(r.width, cases[i].w);
        ck_assert_int_eq(r.small_width, cases[i].pw);
        ck_assert_int_eq(r.small_height, cases[i].ph);
        eu_image_result_free(&r);
        WebPFree(webp);
        free(rgb);
    }
}
END_TEST

START_TEST(test_static_gif_becomes_png)
{
    struct buf in = make_gif(1, 10);
    struct eu_image_result r;
    char err[128];
    ck_assert_int_eq(eu_image_process(in.p, in.len, &lim, &r, err, sizeof err), 0);
    ck_assert_int_eq(r.type, EU_MEDIA_TYPE_IMAGE);
    ck_assert_int_eq(r.original_format, EU_MEDIA_FORMAT_PNG);
    ck_assert_str_eq(r.original_mime, "image/png");
    ck_assert(r.duration_s == 0);
    struct buf out = {r.original, r.original_len};
    int w, h;
    unsigned char *px = read_png_rgba(&out, &w, &h);
    ck_assert_int_eq(w, 8);
    ck_assert_int_eq(px[3], 0); /* row 0 is the transparent index */
    const unsigned char *p = px + (8 * 3 + 0) * 4;
    ck_assert(p[0] == 255 && p[2] == 0 && p[3] == 255);
    p = px + (8 * 3 + 1) * 4;
    ck_assert(p[0] == 0 && p[2] == 255 && p[3] == 255);
    free(px);
    check_preview(&r, 640);
    eu_image_result_free(&r);
    free(in.p);
}
END_TEST

START_TEST(test_animated_gif_kept)
{
    struct buf in = make_gif(3, 20);
    struct eu_image_result r;
    char err[128];
    ck_assert_int_eq(eu_image_process(in.p, in.len, &lim, &r, err, sizeof err), 0);
    ck_assert_int_eq(r.type, EU_MEDIA_TYPE_GIFV);
    ck_assert_int_eq(r.original_format, EU_MEDIA_FORMAT_GIF);
    ck_assert_str_eq(r.original_mime, "image/gif");
    ck_assert_uint_eq(r.original_len, in.len);
    ck_assert_mem_eq(r.original, in.p, in.len);
    ck_assert_double_eq_tol(r.duration_s, 0.6, 1e-9);
    ck_assert_double_eq_tol(r.fps, 5.0, 1e-9);
    ck_assert_int_eq(r.width, 8);
    check_preview(&r, 640);
    eu_image_result_free(&r);
    free(in.p);
}
END_TEST

START_TEST(test_truncated)
{
    unsigned char *rgb = two_band_rgb(200, 200);
    struct buf jpeg = make_jpeg(rgb, 200, 200, 0);
    struct buf half = {jpeg.p, jpeg.len / 2};
    expect_refused(&half, "could not be processed");
    struct buf png = make_png_alpha(200, 200);
    half = (struct buf){png.p, png.len / 2};
    expect_refused(&half, "could not be processed");
    struct buf gif = make_gif(1, 10);
    half = (struct buf){gif.p, gif.len - 8};
    expect_refused(&half, "could not be processed");
    free(jpeg.p);
    free(png.p);
    free(gif.p);
    free(rgb);
}
END_TEST

/* Cut anywhere in its scan, with or without an end marker after the cut
 * (what a writer that stopped half-way leaves): refused, never a picture
 * with a grey rest. */
START_TEST(test_truncated_jpeg_everywhere)
{
    unsigned char *rgb = two_band_rgb(200, 200);
    struct buf jpeg = make_jpeg(rgb, 200, 200, 0);
    unsigned char *cut = malloc(jpeg.len + 2);
    for (size_t n = jpeg.len / 4; n + 2 < jpeg.len; n += jpeg.len / 37) {
        memcpy(cut, jpeg.p, n);
        struct buf b = {cut, n};
        expect_refused(&b, "could not be processed");
        cut[n] = 0xFF;
        cut[n + 1] = 0xD9;
        b.len = n + 2;
        expect_refused(&b, "could not be processed");
    }
    free(cut);
    free(jpeg.p);
    free(rgb);
}
END_TEST

START_TEST(test_garbage)
{
    unsigned char junk[300];
    memcpy(junk, "\x89PNG\r\n\x1a\n", 8);
    for (size_t i = 8; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 37 + 11);
    struct buf b = {junk, sizeof junk};
    expect_refused(&b, "could not be processed");
    memcpy(junk, "\xff\xd8\xff\xe0", 4);
    expect_refused(&b, "could not be processed");
    memcpy(junk, "RIFF\0\0\0\0WEBP", 12);
    expect_refused(&b, "could not be processed");
    memcpy(junk, "GIF89a", 6);
    expect_refused(&b, "");
    struct buf text = {(unsigned char *)"hello world", 11};
    expect_refused(&text, "content type is invalid");
    unsigned char mp3[] = "ID3\x04\0\0\0\0\0\x21";
    struct buf audio = {mp3, sizeof mp3 - 1};
    expect_refused(&audio, "content type is invalid");
}
END_TEST

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

START_TEST(test_pixel_bombs)
{
    double t0 = now_s();
    /* PNG: a real 1x1 file whose IHDR claims 50000x50000 (CRC fixed). */
    struct buf png = make_png_alpha(2, 2);
    put_be32(png.p + 16, 50000);
    put_be32(png.p + 20, 50000);
    put_be32(png.p + 29, crc32_of(png.p + 12, 17));
    expect_refused(&png, "dimensions are too large");
    /* JPEG: the SOF0 frame header's height and width. */
    unsigned char *rgb = two_band_rgb(16, 16);
    struct buf jpeg = make_jpeg(rgb, 16, 16, 0);
    unsigned char *sof = memmem(jpeg.p, jpeg.len, "\xff\xc0", 2);
    ck_assert_ptr_nonnull(sof);
    sof[5] = 50000 >> 8;
    sof[6] = 50000 & 0xff;
    sof[7] = 50000 >> 8;
    sof[8] = 50000 & 0xff;
    expect_refused(&jpeg, "dimensions are too large");
    /* GIF: the logical screen, then a frame larger than the screen. */
    struct buf gif = make_gif(1, 10);
    gif.p[6] = 50000 & 0xff;
    gif.p[7] = 50000 >> 8;
    gif.p[8] = 50000 & 0xff;
    gif.p[9] = 50000 >> 8;
    expect_refused(&gif, "dimensions are too large");
    /* WebP: a real header stays honest, so use a limit below its size. */
    uint8_t *webp = NULL;
    size_t n = WebPEncodeRGB(rgb, 16, 16, 48, 80, &webp);
    struct eu_image_limits tiny = lim;
    tiny.max_pixels = 100;
    struct eu_image_result r;
    char err[128];
    ck_assert_int_eq(eu_image_process(webp, n, &tiny, &r, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "dimensions are too large"));
    /* Refusals read headers only: all of it well under a second. */
    ck_assert_double_lt(now_s() - t0, 1.0);
    WebPFree(webp);
    free(png.p);
    free(jpeg.p);
    free(gif.p);
    free(rgb);
}
END_TEST

START_TEST(test_cpu_budget)
{
    int W = 2000, H = 2000;
    unsigned char *rgb = two_band_rgb(W, H);
    struct buf jpeg = make_jpeg(rgb, W, H, 0);
    struct eu_image_limits strict = lim;
    strict.cpu_budget_ms = 1;
    struct eu_image_result r;
    char err[128];
    ck_assert_int_eq(eu_image_process(jpeg.p, jpeg.len, &strict, &r, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "too large"));
    free(jpeg.p);
    free(rgb);
}
END_TEST

static Suite *
image_suite(void)
{
    Suite *s = suite_create("image");
    TCase *tc = tcase_create("formats");
    tcase_add_test(tc, test_jpeg_exif_rotated_and_stripped);
    tcase_add_test(tc, test_jpeg_other_orientations);
    tcase_add_test(tc, test_jpeg_cmyk);
    tcase_add_test(tc, test_png_alpha_kept);
    tcase_add_test(tc, test_webp_and_preview_box);
    tcase_add_test(tc, test_square_crop);
    tcase_add_test(tc, test_preview_box_height);
    tcase_add_test(tc, test_static_gif_becomes_png);
    tcase_add_test(tc, test_animated_gif_kept);
    suite_add_tcase(s, tc);
    tc = tcase_create("hostile");
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_truncated_jpeg_everywhere);
    tcase_add_test(tc, test_garbage);
    tcase_add_test(tc, test_pixel_bombs);
    tcase_add_test(tc, test_cpu_budget);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(image_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
