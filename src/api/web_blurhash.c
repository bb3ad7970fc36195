/*
 * Blurhash decoding for the public pages (web.c): a sensitive image is
 * shown as its blurhash, decoded here into a small PNG sent inline as a
 * data: URL (the pages' Content-Security-Policy allows data: images and no
 * script), and the real image only once the visitor opens it. The encoder
 * is src/media/blurhash.c; this is its inverse (https://blurha.sh): base 83
 * digits giving a DC colour and a few cosine components, summed per pixel
 * in linear light.
 */
#include <math.h>
#include <openssl/evp.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/http.h"
#include "web_internal.h"

/* The picture's side, in pixels: the browser scales it up, and a blur
 * shows nothing finer. */
#define SIDE 32
/* The most components a blurhash has each way. */
#define MAX_COMPONENTS 9
#define PI 3.14159265358979323846

static const char b83[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";

/* The value of n base 83 digits of s, or -1 on a character outside. */
static long
get83(const char *s, int n)
{
    long v = 0;
    for (int i = 0; i < n; i++) {
        const char *p = s[i] ? strchr(b83, s[i]) : NULL;
        if (!p)
            return -1;
        v = v * 83 + (p - b83);
    }
    return v;
}

static double
srgb_to_linear(long v)
{
    double c = (double)v / 255.0;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static unsigned char
linear_to_srgb(double v)
{
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    double c = v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055;
    return (unsigned char)lround(c * 255);
}

static double
sign_pow(double v, double e)
{
    return copysign(pow(fabs(v), e), v);
}

/* Decodes hash into rgb (SIDE x SIDE, 3 bytes a pixel); false when it is
 * not a blurhash. */
static bool
decode(const char *hash, unsigned char *rgb)
{
    size_t len = strlen(hash);
    long size = len >= 6 ? get83(hash, 1) : -1;
    if (size < 0)
        return false;
    int nx = (int)(size % 9) + 1, ny = (int)(size / 9) + 1;
    if (len != 4 + 2 * (size_t)(nx * ny))
        return false;
    long qmax = get83(hash + 1, 1), dc = get83(hash + 2, 4);
    if (qmax < 0 || dc < 0)
        return false;
    double maxv = (double)(qmax + 1) / 166.0;
    double colors[MAX_COMPONENTS * MAX_COMPONENTS][3];
    colors[0][0] = srgb_to_linear(dc >> 16);
    colors[0][1] = srgb_to_linear((dc >> 8) & 255);
    colors[0][2] = srgb_to_linear(dc & 255);
    for (int i = 1; i < nx * ny; i++) {
        long v = get83(hash + 4 + i * 2, 2);
        if (v < 0)
            return false;
        colors[i][0] = sign_pow(((double)(v / (19 * 19)) - 9) / 9, 2) * maxv;
        colors[i][1] = sign_pow(((double)((v / 19) % 19) - 9) / 9, 2) * maxv;
        colors[i][2] = sign_pow(((double)(v % 19) - 9) / 9, 2) * maxv;
    }
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++) {
            double c[3] = {0, 0, 0};
            for (int j = 0; j < ny; j++)
                for (int i = 0; i < nx; i++) {
                    double basis = cos(PI * x * i / SIDE) * cos(PI * y * j / SIDE);
                    for (int k = 0; k < 3; k++)
                        c[k] += colors[j * nx + i][k] * basis;
                }
            unsigned char *px = rgb + ((size_t)y * SIDE + (size_t)x) * 3;
            for (int k = 0; k < 3; k++)
                px[k] = linear_to_srgb(c[k]);
        }
    return true;
}

struct membuf {
    unsigned char data[8192];
    size_t len;
    bool overflow;
};

static void
on_write(png_structp png, png_bytep data, size_t n)
{
    struct membuf *b = png_get_io_ptr(png);
    if (n > sizeof(b->data) - b->len) {
        b->overflow = true;
        return;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

static void
on_flush(png_structp png)
{
    (void)png;
}

/* rgb as a PNG in b; false on a failure of libpng. */
static bool
encode_png(const unsigned char *rgb, struct membuf *b)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    if (!png)
        return false;
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return false;
    }
    png_set_write_fn(png, b, on_write, on_flush);
    png_set_IHDR(png, info, SIDE, SIDE, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < SIDE; y++)
        png_write_row(png, (png_const_bytep)(rgb + (size_t)y * SIDE * 3));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return !b->overflow;
}

const char *
eu_web_blurhash_data_url(struct eu_req *req, const char *hash)
{
    if (!hash || !*hash || strlen(hash) > 4 + 2 * MAX_COMPONENTS * MAX_COMPONENTS)
        return NULL;
    unsigned char rgb[SIDE * SIDE * 3];
    if (!decode(hash, rgb))
        return NULL;
    struct membuf *b = eu_arena_calloc(req->arena, sizeof(*b));
    if (!encode_png(rgb, b))
        return NULL;
    const char *prefix = "data:image/png;base64,";
    size_t plen = strlen(prefix);
    char *out = eu_arena_alloc(req->arena, plen + 4 * ((b->len + 2) / 3) + 1);
    memcpy(out, prefix, plen);
    EVP_EncodeBlock((unsigned char *)out + plen, b->data, (int)b->len);
    return out;
}
