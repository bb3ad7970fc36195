/*
 * The image pipeline for uploads (eunha/media.h): decode with Debian's
 * libraries, apply the EXIF orientation, re-encode the original without its
 * metadata, make a WebP preview and a blurhash.
 *
 * Untrusted files are the normal case here, so: every decoder's header is
 * read and the pixel count checked before any pixel memory is allocated
 * (a 50000x50000 PNG is a few hundred bytes); libjpeg's and libpng's fatal
 * errors come back through setjmp instead of exit(); a JPEG with pixels
 * missing (cut short, even with its end marker) is an error rather than the
 * grey fill libjpeg would hand back; the CPU
 * budget is checked between rows. Nothing is shared between calls, so CPU
 * pool threads may run it at once.
 */
#include "eunha/media.h"

#include <gif_lib.h>
#include <jerror.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <webp/decode.h>
#include <webp/encode.h>
/* After stdio.h: jpeglib.h uses FILE without including it. */
#include <jpeglib.h>

#include "eunha/mem.h"
#include "media/media_internal.h"

#define MSG_BAD "Validation failed: File could not be processed"
#define MSG_DIMENSIONS "Validation failed: File dimensions are too large"
#define MSG_SLOW "Validation failed: File is too large to process"
#define MSG_TYPE "Validation failed: File content type is invalid"
#define MSG_ANIMATED_WEBP "Validation failed: Animated WebP images are not supported"

/* A progressive JPEG can hold thousands of tiny scans, each a pass over the
 * whole coefficient buffer; real encoders write about ten. */
#define JPEG_MAX_SCANS 500
/* libpng's cap on one ancillary chunk and on their number: metadata we drop
 * anyway must not cost memory. */
#define PNG_CHUNK_MAX (8u << 20)
#define PNG_CHUNK_CACHE 128
/* Blurhash components, as Mastodon makes them. */
#define BLURHASH_X 4
#define BLURHASH_Y 3

/* Decoded pixels: 3 (RGB) or 4 (RGBA) bytes each, rows packed. */
struct pix {
    unsigned char *p;
    int w, h, ch;
};

struct job {
    const struct eu_image_limits *lim;
    struct timespec cpu_start;
    const char *msg; /* the 422 message when a step failed, NULL: MSG_BAD */
};

static double
thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static bool
over_budget(struct job *job)
{
    if (job->lim->cpu_budget_ms == 0)
        return false;
    double start = job->cpu_start.tv_sec * 1e3 + job->cpu_start.tv_nsec / 1e6;
    if (thread_cpu_ms() - start <= (double)job->lim->cpu_budget_ms)
        return false;
    job->msg = MSG_SLOW;
    return true;
}

static bool
dimensions_fit(struct job *job, unsigned long w, unsigned long h)
{
    if (w == 0 || h == 0 || w > 0xFFFFFF || h > 0xFFFFFF) {
        job->msg = w == 0 || h == 0 ? MSG_BAD : MSG_DIMENSIONS;
        return false;
    }
    if ((uint64_t)w * h > job->lim->max_pixels) {
        job->msg = MSG_DIMENSIONS;
        return false;
    }
    return true;
}

static size_t
pix_stride(const struct pix *p)
{
    return (size_t)p->w * (size_t)p->ch;
}

static void
pix_alloc(struct pix *p, int w, int h, int ch)
{
    p->w = w;
    p->h = h;
    p->ch = ch;
    p->p = eu_xmalloc((size_t)w * (size_t)h * (size_t)ch);
}

/* ---- EXIF orientation ------------------------------------------------- */

static unsigned
rd16(const unsigned char *p, bool le)
{
    return le ? (unsigned)(p[0] | p[1] << 8) : (unsigned)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const unsigned char *p, bool le)
{
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
              : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/*
 * The Orientation tag (0x0112) of IFD0 in a TIFF structure (what follows
 * "Exif\0\0" in a JPEG APP1, or a PNG eXIf chunk). 1 when absent or when
 * any offset points outside the n bytes.
 */
static int
exif_orientation(const unsigned char *t, size_t n)
{
    if (n < 8)
        return 1;
    bool le;
    if (t[0] == 'I' && t[1] == 'I')
        le = true;
    else if (t[0] == 'M' && t[1] == 'M')
        le = false;
    else
        return 1;
    if (rd16(t + 2, le) != 42)
        return 1;
    size_t ifd = rd32(t + 4, le);
    if (ifd < 8 || ifd > n || n - ifd < 2)
        return 1;
    size_t count = rd16(t + ifd, le);
    for (size_t k = 0; k < count; k++) {
        size_t e = ifd + 2 + 12 * k;
        if (e > n || n - e < 12)
            break;
        /* SHORT, count 1: the value sits in the first two bytes of the
         * value field. */
        if (rd16(t + e, le) == 0x0112 && rd16(t + e + 2, le) == 3) {
            unsigned v = rd16(t + e + 8, le);
            return v >= 1 && v <= 8 ? (int)v : 1;
        }
    }
    return 1;
}

/*
 * Turns p upright for an EXIF orientation 2-8 (a new buffer; 5-8 swap the
 * sides). Each orientation maps source (x, y) to destination
 * (x0 + xx*x + xy*y, y0 + yx*x + yy*y); the table holds those
 * coefficients, with x0/y0 as 0 or "last column/row" (1).
 */
static void
orient(struct pix *p, int o)
{
    static const signed char map[9][6] = {
        /* x0 xx xy y0 yx yy */
        [2] = {1, -1, 0, 0, 0, 1}, [3] = {1, -1, 0, 1, 0, -1}, [4] = {0, 1, 0, 1, 0, -1},
        [5] = {0, 0, 1, 0, 1, 0},  [6] = {1, 0, -1, 0, 1, 0},  [7] = {1, 0, -1, 1, -1, 0},
        [8] = {0, 0, 1, 1, -1, 0},
    };
    if (o <= 1 || o > 8)
        return;
    const signed char *m = map[o];
    int ch = p->ch;
    struct pix d;
    pix_alloc(&d, o >= 5 ? p->h : p->w, o >= 5 ? p->w : p->h, ch);
    ptrdiff_t x0 = m[0] ? d.w - 1 : 0, y0 = m[3] ? d.h - 1 : 0;
    ptrdiff_t step = ((ptrdiff_t)m[4] * d.w + m[1]) * ch;
    for (int y = 0; y < p->h; y++) {
        const unsigned char *src = p->p + (size_t)y * pix_stride(p);
        ptrdiff_t dx = x0 + (ptrdiff_t)m[2] * y, dy = y0 + (ptrdiff_t)m[5] * y;
        unsigned char *dst = d.p + (dy * d.w + dx) * ch;
        for (int x = 0; x < p->w; x++, src += ch, dst += step)
            memcpy(dst, src, (size_t)ch);
    }
    free(p->p);
    *p = d;
}

/* ---- JPEG --------------------------------------------------------------- */

struct jpeg_err {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
};

struct jpeg_prog {
    struct jpeg_progress_mgr pub;
    struct job *job;
};

static void
on_jpeg_exit(j_common_ptr c)
{
    longjmp(((struct jpeg_err *)c->err)->jb, 1);
}

/* Warnings are silent, except those that say pixels are missing: libjpeg
 * would fill them with grey and call it a success. The data can end early
 * (JPEG_EOF), or the scan can stop at a marker before its last block, as
 * when a writer gave up and still wrote the end marker (HIT_MARKER), or
 * hold codes that decode to nothing (the rest). */
static void
on_jpeg_message(j_common_ptr c, int level)
{
    if (level >= 0)
        return;
    switch (c->err->msg_code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
    case JWRN_MUST_RESYNC:
    case JWRN_HUFF_BAD_CODE:
        longjmp(((struct jpeg_err *)c->err)->jb, 1);
    default:
        break;
    }
}

static void
on_jpeg_output(j_common_ptr c)
{
    (void)c;
}

static void
on_jpeg_progress(j_common_ptr c)
{
    struct jpeg_prog *prog = (struct jpeg_prog *)c->progress;
    if (c->is_decompressor && ((j_decompress_ptr)c)->input_scan_number > JPEG_MAX_SCANS)
        longjmp(((struct jpeg_err *)c->err)->jb, 1);
    if (over_budget(prog->job))
        longjmp(((struct jpeg_err *)c->err)->jb, 1);
}

static void
jpeg_err_init(struct jpeg_err *e)
{
    jpeg_std_error(&e->pub);
    e->pub.error_exit = on_jpeg_exit;
    e->pub.emit_message = on_jpeg_message;
    e->pub.output_message = on_jpeg_output;
}

static int
jpeg_orientation(j_decompress_ptr c)
{
    for (jpeg_saved_marker_ptr m = c->marker_list; m; m = m->next)
        if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 && memcmp(m->data, "Exif\0\0", 6) == 0)
            return exif_orientation(m->data + 6, m->data_length - 6);
    return 1;
}

/* Adobe's files store CMYK inverted (0 is full ink); others do not. In
 * and out may overlap as decode_jpeg lays them out (out before in). */
static void
cmyk_to_rgb(const unsigned char *in, unsigned char *out, int w, bool inverted)
{
    for (int x = 0; x < w; x++) {
        unsigned c = in[4 * x], m = in[4 * x + 1], yl = in[4 * x + 2], k = in[4 * x + 3];
        if (!inverted) {
            c = 255 - c;
            m = 255 - m;
            yl = 255 - yl;
            k = 255 - k;
        }
        out[3 * x] = (unsigned char)((c * k + 127) / 255);
        out[3 * x + 1] = (unsigned char)((m * k + 127) / 255);
        out[3 * x + 2] = (unsigned char)((yl * k + 127) / 255);
    }
}

static int
decode_jpeg(struct job *job, const unsigned char *data, size_t len, struct pix *out,
            int *orientation)
{
    struct jpeg_decompress_struct c;
    struct jpeg_err e;
    struct jpeg_prog prog = {.pub.progress_monitor = on_jpeg_progress, .job = job};
    c.err = &e.pub;
    jpeg_err_init(&e);
    if (setjmp(e.jb)) {
        jpeg_destroy_decompress(&c);
        free(out->p);
        out->p = NULL;
        return -1;
    }
    jpeg_create_decompress(&c);
    c.progress = &prog.pub;
    jpeg_mem_src(&c, data, (unsigned long)len);
    jpeg_save_markers(&c, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&c, TRUE);
    if (!dimensions_fit(job, c.image_width, c.image_height)) {
        jpeg_destroy_decompress(&c);
        return -1;
    }
    /* Bounds libjpeg's own buffers (a progressive file keeps every
     * coefficient: 2 bytes per sample) to what the pixel limit allows. */
    c.mem->max_memory_to_use = (long)(job->lim->max_pixels * 8 + (16 << 20));
    *orientation = jpeg_orientation(&c);
    /* libjpeg has no CMYK-to-RGB conversion; print-ready photos are CMYK. */
    bool cmyk = c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK;
    c.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(&c);
    if (c.output_components != (cmyk ? 4 : 3))
        longjmp(e.jb, 1);
    /* The CMYK row is decoded one row ahead of where its RGB goes, in the
     * same buffer: 4 bytes a pixel never overrun the next row's 3. */
    pix_alloc(out, (int)c.output_width, (int)c.output_height + (cmyk ? 1 : 0), 3);
    while (c.output_scanline < c.output_height) {
        size_t y = c.output_scanline;
        JSAMPROW row = out->p + y * pix_stride(out);
        if (cmyk)
            row = out->p + (y + 1) * pix_stride(out) - (size_t)out->w;
        jpeg_read_scanlines(&c, &row, 1);
        if (cmyk)
            cmyk_to_rgb(row, out->p + y * pix_stride(out), out->w, c.saw_Adobe_marker);
    }
    out->h = (int)c.output_height;
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    return 0;
}

/* The caller frees *buf with free(). */
static int
encode_jpeg(struct job *job, const struct pix *p, int quality, unsigned char **buf, size_t *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_err e;
    struct jpeg_prog prog = {.pub.progress_monitor = on_jpeg_progress, .job = job};
    unsigned char *mem = NULL;
    unsigned long size = 0;
    c.err = &e.pub;
    jpeg_err_init(&e);
    if (setjmp(e.jb)) {
        jpeg_destroy_compress(&c);
        free(mem);
        return -1;
    }
    jpeg_create_compress(&c);
    c.progress = &prog.pub;
    jpeg_mem_dest(&c, &mem, &size);
    c.image_width = (JDIMENSION)p->w;
    c.image_height = (JDIMENSION)p->h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = p->p + (size_t)c.next_scanline * pix_stride(p);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *buf = mem;
    *len = size;
    return 0;
}

/* ---- PNG ---------------------------------------------------------------- */

struct png_src {
    const unsigned char *data;
    size_t len, pos;
};

static void
on_png_error(png_structp png, png_const_charp msg)
{
    (void)msg;
    png_longjmp(png, 1);
}

static void
on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void
on_png_read(png_structp png, png_bytep buf, size_t n)
{
    struct png_src *s = png_get_io_ptr(png);
    if (n > s->len - s->pos)
        png_error(png, "truncated");
    memcpy(buf, s->data + s->pos, n);
    s->pos += n;
}

static int
png_orientation(png_structp png, png_infop info)
{
#ifdef PNG_eXIf_SUPPORTED
    png_bytep exif = NULL;
    png_uint_32 n = 0;
    if (png_get_eXIf_1(png, info, &n, &exif) && exif)
        return exif_orientation(exif, n);
#endif
    return 1;
}

static int
decode_png(struct job *job, const unsigned char *data, size_t len, struct pix *out,
           int *orientation)
{
    struct png_src src = {data, len, 0};
    png_structp png =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, on_png_error, on_png_warning);
    if (!png)
        return -1;
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(out->p);
        out->p = NULL;
        return -1;
    }
    png_set_read_fn(png, &src, on_png_read);
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_set_chunk_cache_max(png, PNG_CHUNK_CACHE);
    png_set_chunk_malloc_max(png, PNG_CHUNK_MAX);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    if (!dimensions_fit(job, w, h)) {
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    *orientation = png_orientation(png, info);
    int color = png_get_color_type(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    png_set_strip_16(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_gray_to_rgb(png);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int ch = png_get_channels(png, info);
    if ((ch != 3 && ch != 4) || png_get_rowbytes(png, info) != (size_t)w * (size_t)ch)
        png_error(png, "unexpected layout");
    pix_alloc(out, (int)w, (int)h, ch);
    for (int pass = 0; pass < passes; pass++) {
        for (png_uint_32 y = 0; y < h; y++) {
            png_read_row(png, out->p + (size_t)y * pix_stride(out), NULL);
            if ((y & 63) == 63 && over_budget(job))
                png_error(png, "cpu budget");
        }
    }
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}

struct membuf {
    unsigned char *p;
    size_t len, cap;
};

static void
on_png_write(png_structp png, png_bytep data, size_t n)
{
    struct membuf *b = png_get_io_ptr(png);
    if (n > b->cap - b->len) {
        b->cap = (b->len + n) * 2;
        b->p = eu_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void
on_png_flush(png_structp png)
{
    (void)png;
}

/* The caller frees *buf with free(). */
static int
encode_png(struct job *job, const struct pix *p, unsigned char **buf, size_t *len)
{
    struct membuf mb = {0};
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, on_png_error, on_png_warning);
    if (!png)
        return -1;
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(mb.p);
        return -1;
    }
    png_set_write_fn(png, &mb, on_png_write, on_png_flush);
    png_set_IHDR(png, info, (png_uint_32)p->w, (png_uint_32)p->h, 8,
                 p->ch == 4 ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 6);
    png_write_info(png, info);
    for (int y = 0; y < p->h; y++) {
        png_write_row(png, p->p + (size_t)y * pix_stride(p));
        if ((y & 63) == 63 && over_budget(job))
            png_error(png, "cpu budget");
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *buf = mb.p;
    *len = mb.len;
    return 0;
}

/* ---- WebP --------------------------------------------------------------- */

static int
decode_webp(struct job *job, const unsigned char *data, size_t len, struct pix *out, bool *lossless)
{
    WebPBitstreamFeatures f;
    if (WebPGetFeatures(data, len, &f) != VP8_STATUS_OK)
        return -1;
    if (f.has_animation) {
        job->msg = MSG_ANIMATED_WEBP;
        return -1;
    }
    if (!dimensions_fit(job, (unsigned long)f.width, (unsigned long)f.height))
        return -1;
    *lossless = f.format == 2;
    pix_alloc(out, f.width, f.height, f.has_alpha ? 4 : 3);
    size_t size = pix_stride(out) * (size_t)out->h;
    uint8_t *ok = out->ch == 4 ? WebPDecodeRGBAInto(data, len, out->p, size, (int)pix_stride(out))
                               : WebPDecodeRGBInto(data, len, out->p, size, (int)pix_stride(out));
    if (!ok) {
        free(out->p);
        out->p = NULL;
        return -1;
    }
    return 0;
}

/* Quality -1: lossless. The caller frees *buf with free(). */
static int
encode_webp(const struct pix *p, int quality, unsigned char **buf, size_t *len)
{
    uint8_t *w = NULL;
    size_t n;
    int stride = (int)pix_stride(p);
    if (quality < 0)
        n = p->ch == 4 ? WebPEncodeLosslessRGBA(p->p, p->w, p->h, stride, &w)
                       : WebPEncodeLosslessRGB(p->p, p->w, p->h, stride, &w);
    else
        n = p->ch == 4 ? WebPEncodeRGBA(p->p, p->w, p->h, stride, (float)quality, &w)
                       : WebPEncodeRGB(p->p, p->w, p->h, stride, (float)quality, &w);
    if (n == 0) {
        WebPFree(w);
        return -1;
    }
    /* One allocator for everything in eu_image_result. */
    *buf = eu_xmalloc(n);
    memcpy(*buf, w, n);
    *len = n;
    WebPFree(w);
    return 0;
}

/* ---- GIF ---------------------------------------------------------------- */

struct gif_src {
    const unsigned char *data;
    size_t len, pos;
};

static int
on_gif_read(GifFileType *gif, GifByteType *buf, int n)
{
    struct gif_src *s = gif->UserData;
    size_t take = n < 0 ? 0 : (size_t)n;
    if (take > s->len - s->pos)
        take = s->len - s->pos;
    memcpy(buf, s->data + s->pos, take);
    s->pos += take;
    return (int)take;
}

/* Draws the frame giflib just described onto the RGBA canvas out. */
static int
draw_gif_frame(struct job *job, GifFileType *gif, int transparent, struct pix *out)
{
    const GifImageDesc *d = &gif->Image;
    const ColorMapObject *map = d->ColorMap ? d->ColorMap : gif->SColorMap;
    if (!map || d->Width <= 0 || d->Height <= 0 ||
        !dimensions_fit(job, (unsigned long)d->Width, (unsigned long)d->Height))
        return -1;
    GifPixelType *line = eu_xmalloc((size_t)d->Width);
    static const int start[] = {0, 4, 2, 1}, step[] = {8, 8, 4, 2};
    int npass = d->Interlace ? 4 : 1;
    int rc = 0;
    for (int pass = 0; pass < npass && rc == 0; pass++) {
        int y0 = d->Interlace ? start[pass] : 0, dy = d->Interlace ? step[pass] : 1;
        for (int y = y0; y < d->Height; y += dy) {
            if (DGifGetLine(gif, line, d->Width) == GIF_ERROR ||
                ((y & 63) == 63 && over_budget(job))) {
                rc = -1;
                break;
            }
            long cy = (long)d->Top + y;
            if (cy < 0 || cy >= out->h)
                continue;
            unsigned char *row = out->p + (size_t)cy * pix_stride(out);
            for (int x = 0; x < d->Width; x++) {
                long cx = (long)d->Left + x;
                int idx = line[x];
                if (cx < 0 || cx >= out->w || idx == transparent || idx >= map->ColorCount)
                    continue;
                unsigned char *px = row + (size_t)cx * 4;
                px[0] = map->Colors[idx].Red;
                px[1] = map->Colors[idx].Green;
                px[2] = map->Colors[idx].Blue;
                px[3] = 255;
            }
        }
    }
    free(line);
    return rc;
}

/* The first frame, on a transparent canvas of the logical screen's size. */
static int
decode_gif(struct job *job, const unsigned char *data, size_t len, struct pix *out)
{
    struct gif_src src = {data, len, 0};
    int error, rc = -1, transparent = -1;
    GifFileType *gif = DGifOpen(&src, on_gif_read, &error);
    if (!gif)
        return -1;
    if (!dimensions_fit(job, (unsigned long)gif->SWidth, (unsigned long)gif->SHeight))
        goto close;
    out->w = gif->SWidth;
    out->h = gif->SHeight;
    out->ch = 4;
    out->p = eu_xcalloc((size_t)out->w * (size_t)out->h, 4);
    GifRecordType type;
    while (DGifGetRecordType(gif, &type) != GIF_ERROR && type != TERMINATE_RECORD_TYPE) {
        if (type == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) != GIF_ERROR)
                rc = draw_gif_frame(job, gif, transparent, out);
            break;
        }
        if (type != EXTENSION_RECORD_TYPE)
            break;
        int code;
        GifByteType *ext;
        if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR)
            break;
        if (code == GRAPHICS_EXT_FUNC_CODE && ext && ext[0] >= 4 && (ext[1] & 1))
            transparent = ext[4];
        while (ext)
            if (DGifGetExtensionNext(gif, &ext) == GIF_ERROR)
                goto close;
    }
close:
    DGifCloseFile(gif, &error);
    if (rc < 0) {
        free(out->p);
        out->p = NULL;
    }
    return rc;
}

/* An RGBA image whose every pixel is opaque is stored as RGB. */
static void
drop_opaque_alpha(struct pix *p)
{
    if (p->ch != 4)
        return;
    size_t n = (size_t)p->w * (size_t)p->h;
    for (size_t i = 0; i < n; i++)
        if (p->p[4 * i + 3] != 255)
            return;
    for (size_t i = 0; i < n; i++)
        memmove(p->p + 3 * i, p->p + 4 * i, 3);
    p->ch = 3;
}

/* ---- preview ------------------------------------------------------------ */

/*
 * Box (area) downscale: each output pixel is the mean of the source pixels
 * its rectangle covers, so nothing aliases however large the ratio. Colour
 * is averaged weighted by alpha, so transparent pixels (often black) do not
 * darken the edges of what is visible. d's size is at most s's.
 */
static int
resize_box(struct job *job, const struct pix *s, struct pix *d)
{
    int ch = s->ch;
    size_t *xs = eu_xmalloc(sizeof(size_t) * ((size_t)d->w + 1));
    uint64_t *acc = eu_xmalloc(sizeof(uint64_t) * 4 * (size_t)d->w);
    for (int i = 0; i <= d->w; i++)
        xs[i] = (size_t)i * (size_t)s->w / (size_t)d->w;
    for (int j = 0; j < d->h; j++) {
        size_t y0 = (size_t)j * (size_t)s->h / (size_t)d->h;
        size_t y1 = (size_t)(j + 1) * (size_t)s->h / (size_t)d->h;
        memset(acc, 0, sizeof(uint64_t) * 4 * (size_t)d->w);
        for (size_t y = y0; y < y1; y++) {
            const unsigned char *row = s->p + y * pix_stride(s);
            for (int i = 0; i < d->w; i++) {
                uint64_t *a = acc + 4 * i;
                for (size_t x = xs[i]; x < xs[i + 1]; x++) {
                    const unsigned char *px = row + x * (size_t)ch;
                    if (ch == 4) {
                        a[0] += (uint64_t)px[0] * px[3];
                        a[1] += (uint64_t)px[1] * px[3];
                        a[2] += (uint64_t)px[2] * px[3];
                        a[3] += px[3];
                    } else {
                        a[0] += px[0];
                        a[1] += px[1];
                        a[2] += px[2];
                    }
                }
            }
        }
        unsigned char *out = d->p + (size_t)j * pix_stride(d);
        for (int i = 0; i < d->w; i++) {
            const uint64_t *a = acc + 4 * i;
            uint64_t n = (uint64_t)(xs[i + 1] - xs[i]) * (y1 - y0);
            unsigned char *px = out + (size_t)i * ch;
            if (ch == 4) {
                for (int c = 0; c < 3; c++)
                    px[c] = a[3] ? (unsigned char)((a[c] + a[3] / 2) / a[3]) : 0;
                px[3] = (unsigned char)((a[3] + n / 2) / n);
            } else {
                for (int c = 0; c < 3; c++)
                    px[c] = (unsigned char)((a[c] + n / 2) / n);
            }
        }
        if ((j & 15) == 15 && over_budget(job)) {
            free(xs);
            free(acc);
            return -1;
        }
    }
    free(xs);
    free(acc);
    return 0;
}

/* The size of w x h fitted inside box_w x box_h (aspect kept, never
 * enlarged); a box side below 1 means no bound. */
static void
preview_size(int w, int h, int box_w, int box_h, int *pw, int *ph)
{
    if (box_w < 1 || box_h < 1 || (w <= box_w && h <= box_h)) {
        *pw = w;
        *ph = h;
    } else if ((int64_t)w * box_h >= (int64_t)h * box_w) {
        *pw = box_w;
        *ph = (int)(((int64_t)h * box_w + w / 2) / w);
    } else {
        *ph = box_h;
        *pw = (int)(((int64_t)w * box_h + h / 2) / h);
    }
    if (*pw < 1)
        *pw = 1;
    if (*ph < 1)
        *ph = 1;
}

static int
make_preview(struct job *job, const struct pix *img, struct eu_image_result *out)
{
    struct pix small;
    int pw, ph;
    int box_h = job->lim->preview_max_height > 0 ? job->lim->preview_max_height
                                                 : job->lim->preview_max_side;
    preview_size(img->w, img->h, job->lim->preview_max_side, box_h, &pw, &ph);
    pix_alloc(&small, pw, ph, img->ch);
    int rc = resize_box(job, img, &small);
    if (rc == 0)
        rc = encode_webp(&small, job->lim->preview_quality, &out->small, &out->small_len);
    if (rc == 0) {
        out->small_width = pw;
        out->small_height = ph;
        const unsigned char *rgb = small.p;
        unsigned char *copy = NULL;
        if (small.ch == 4) {
            size_t n = (size_t)pw * (size_t)ph;
            copy = eu_xmalloc(n * 3);
            for (size_t i = 0; i < n; i++)
                memcpy(copy + 3 * i, small.p + 4 * i, 3);
            rgb = copy;
        }
        if (eu_blurhash_encode(rgb, pw, ph, (size_t)pw * 3, BLURHASH_X, BLURHASH_Y, out->blurhash,
                               sizeof out->blurhash) < 0)
            rc = -1;
        free(copy);
    }
    free(small.p);
    return rc;
}

/* Keeps the centred square of p (side: its shorter side), in place. */
static void
crop_square(struct pix *p)
{
    int side = p->w < p->h ? p->w : p->h;
    if (p->w == p->h)
        return;
    size_t x0 = (size_t)(p->w - side) / 2, y0 = (size_t)(p->h - side) / 2;
    size_t row = (size_t)side * (size_t)p->ch;
    /* Each kept row moves to a lower or equal address: memmove in order. */
    for (size_t y = 0; y < (size_t)side; y++)
        memmove(p->p + y * row, p->p + (y0 + y) * pix_stride(p) + x0 * (size_t)p->ch, row);
    p->w = p->h = side;
}

/* ---- the pipeline ------------------------------------------------------- */

static void
set_original(struct eu_image_result *out, enum eu_media_format f)
{
    out->original_format = f;
    switch (f) {
    case EU_MEDIA_FORMAT_JPEG:
        out->original_mime = "image/jpeg";
        out->original_ext = "jpg";
        break;
    case EU_MEDIA_FORMAT_WEBP:
        out->original_mime = "image/webp";
        out->original_ext = "webp";
        break;
    case EU_MEDIA_FORMAT_GIF:
        out->original_mime = "image/gif";
        out->original_ext = "gif";
        break;
    default:
        out->original_mime = "image/png";
        out->original_ext = "png";
        break;
    }
}

static int
process(struct job *job, const unsigned char *data, size_t len, enum eu_media_format format,
        bool square, struct eu_image_result *out)
{
    struct pix img = {0};
    int orientation = 1, rc;
    bool lossless = false;
    switch (format) {
    case EU_MEDIA_FORMAT_JPEG:
        rc = decode_jpeg(job, data, len, &img, &orientation);
        break;
    case EU_MEDIA_FORMAT_PNG:
        rc = decode_png(job, data, len, &img, &orientation);
        break;
    case EU_MEDIA_FORMAT_WEBP:
        rc = decode_webp(job, data, len, &img, &lossless);
        break;
    default:
        rc = decode_gif(job, data, len, &img);
        break;
    }
    if (rc < 0)
        return -1;
    orient(&img, orientation);
    /* An animated GIF's original keeps its bytes, so its size too. */
    out->width = img.w;
    out->height = img.h;
    if (square)
        crop_square(&img);
    out->type = EU_MEDIA_TYPE_IMAGE;

    if (format == EU_MEDIA_FORMAT_GIF) {
        struct eu_gif_scan scan;
        eu_media_gif_scan(data, len, 0, &scan);
        if (scan.frames > 1) {
            /* The frames are the point of an animated GIF: keep its bytes. */
            out->type = EU_MEDIA_TYPE_GIFV;
            out->duration_s = scan.delay_cs / 100.0;
            out->fps = out->duration_s > 0 ? scan.frames / out->duration_s : 0;
            set_original(out, EU_MEDIA_FORMAT_GIF);
            out->original = eu_xmalloc(len);
            memcpy(out->original, data, len);
            out->original_len = len;
        } else {
            drop_opaque_alpha(&img);
            format = EU_MEDIA_FORMAT_PNG;
        }
    }
    if (!out->original) {
        out->width = img.w;
        out->height = img.h;
        set_original(out, format);
        if (format == EU_MEDIA_FORMAT_JPEG)
            rc = encode_jpeg(job, &img, job->lim->original_quality, &out->original,
                             &out->original_len);
        else if (format == EU_MEDIA_FORMAT_WEBP)
            rc = encode_webp(&img, lossless ? -1 : job->lim->original_quality, &out->original,
                             &out->original_len);
        else
            rc = encode_png(job, &img, &out->original, &out->original_len);
    }
    if (rc == 0)
        rc = make_preview(job, &img, out);
    free(img.p);
    return rc;
}

static int
run(const unsigned char *data, size_t len, const struct eu_image_limits *lim, bool square,
    struct eu_image_result *out, char *err, size_t errlen)
{
    struct job job = {.lim = lim};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &job.cpu_start);
    memset(out, 0, sizeof *out);
    struct eu_media_sniff sniff;
    int rc;
    if (eu_media_sniff(data, len, &sniff) < 0 ||
        (sniff.format != EU_MEDIA_FORMAT_JPEG && sniff.format != EU_MEDIA_FORMAT_PNG &&
         sniff.format != EU_MEDIA_FORMAT_WEBP && sniff.format != EU_MEDIA_FORMAT_GIF)) {
        job.msg = MSG_TYPE;
        rc = -1;
    } else {
        rc = process(&job, data, len, sniff.format, square, out);
    }
    if (rc < 0) {
        eu_image_result_free(out);
        if (err && errlen)
            snprintf(err, errlen, "%s", job.msg ? job.msg : MSG_BAD);
        return -1;
    }
    return 0;
}

int
eu_image_process(const unsigned char *data, size_t len, const struct eu_image_limits *lim,
                 struct eu_image_result *out, char *err, size_t errlen)
{
    return run(data, len, lim, false, out, err, errlen);
}

int
eu_image_process_square(const unsigned char *data, size_t len, const struct eu_image_limits *lim,
                        struct eu_image_result *out, char *err, size_t errlen)
{
    return run(data, len, lim, true, out, err, errlen);
}

void
eu_image_result_free(struct eu_image_result *r)
{
    if (!r)
        return;
    free(r->original);
    free(r->small);
    memset(r, 0, sizeof *r);
}
