/*
 * What an upload is, decided from its first bytes: the client's
 * Content-Type and file name are never trusted. Only the formats Mastodon
 * accepts are recognised; anything else is UNKNOWN and refused.
 */
#include "eunha/media.h"

#include <gif_lib.h>
#include <string.h>

#include "media/media_internal.h"

struct mem_reader {
    const unsigned char *data;
    size_t len, pos;
};

static int
gif_read(GifFileType *gif, GifByteType *buf, int n)
{
    struct mem_reader *r = gif->UserData;
    size_t left = r->len - r->pos;
    size_t take = n < 0 ? 0 : (size_t)n;
    if (take > left)
        take = left;
    memcpy(buf, r->data + r->pos, take);
    r->pos += take;
    return (int)take;
}

/* The delay of one Graphic Control Extension, with the floor browsers
 * apply: 0 or 1 centisecond plays as 10. */
static int
gce_delay(const GifByteType *ext)
{
    if (ext[0] < 4)
        return 10;
    int d = ext[2] | ext[3] << 8;
    return d <= 1 ? 10 : d;
}

static int
skip_image(GifFileType *gif)
{
    int code_size;
    GifByteType *block;
    if (DGifGetCode(gif, &code_size, &block) == GIF_ERROR)
        return -1;
    while (block) {
        if (DGifGetCodeNext(gif, &block) == GIF_ERROR)
            return -1;
    }
    return 0;
}

int
eu_media_gif_scan(const unsigned char *data, size_t len, int max_frames, struct eu_gif_scan *out)
{
    memset(out, 0, sizeof *out);
    struct mem_reader r = {data, len, 0};
    int error;
    GifFileType *gif = DGifOpen(&r, gif_read, &error);
    if (!gif)
        return -1;
    out->width = gif->SWidth;
    out->height = gif->SHeight;
    int pending_delay = 10;
    GifRecordType type;
    while (DGifGetRecordType(gif, &type) != GIF_ERROR && type != TERMINATE_RECORD_TYPE) {
        if (type == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) == GIF_ERROR)
                break;
            out->frames++;
            out->delay_cs += pending_delay;
            pending_delay = 10;
            /* giflib keeps every descriptor it reads; a file of a million
             * empty frames must not grow that list, so drop it as we go
             * (and its count, which giflib leaves behind). */
            GifFreeSavedImages(gif);
            gif->ImageCount = 0;
            if ((max_frames > 0 && out->frames >= max_frames) || skip_image(gif) < 0)
                break;
        } else if (type == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *ext;
            if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR)
                break;
            if (code == GRAPHICS_EXT_FUNC_CODE && ext)
                pending_delay = gce_delay(ext);
            while (ext) {
                if (DGifGetExtensionNext(gif, &ext) == GIF_ERROR)
                    goto done;
            }
        } else {
            break;
        }
    }
done:
    DGifCloseFile(gif, &error);
    return 0;
}

/* ISO BMFF major (or compatible) brands of audio-only files. */
static bool
brand_is_audio(const unsigned char *b)
{
    static const char *const audio[] = {"M4A ", "M4B ", "M4P ", "F4A ", "F4B "};
    for (size_t i = 0; i < sizeof audio / sizeof audio[0]; i++)
        if (memcmp(b, audio[i], 4) == 0)
            return true;
    return false;
}

static bool
brand_is_video(const unsigned char *b)
{
    static const char *const video[] = {
        "isom", "iso2", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "M4V ", "M4VH", "M4VP",
        "qt  ", "3gp4", "3gp5", "3gp6", "3g2a", "mmp4", "MSNV", "dash", "f4v ", "XAVC", "NDAS"};
    for (size_t i = 0; i < sizeof video / sizeof video[0]; i++)
        if (memcmp(b, video[i], 4) == 0)
            return true;
    return false;
}

static void
set(struct eu_media_sniff *out, enum eu_media_format f, enum eu_media_type t, const char *mime,
    const char *ext)
{
    out->format = f;
    out->type = t;
    out->mime = mime;
    out->ext = ext;
}

/* An ftyp box: major brand at 8, compatible brands from 16 to the box end. */
static int
sniff_bmff(const unsigned char *d, size_t n, struct eu_media_sniff *out)
{
    if (n < 12)
        return -1;
    size_t box = (size_t)d[0] << 24 | (size_t)d[1] << 16 | (size_t)d[2] << 8 | d[3];
    if (box < 16 || box > 4096)
        box = 16;
    if (box > n)
        box = n;
    const unsigned char *major = d + 8;
    if (brand_is_audio(major)) {
        set(out, EU_MEDIA_FORMAT_M4A, EU_MEDIA_TYPE_AUDIO, "audio/mp4", "m4a");
        return 0;
    }
    bool video = brand_is_video(major);
    for (size_t o = 16; !video && o + 4 <= box; o += 4)
        video = brand_is_video(d + o);
    if (!video)
        return -1;
    if (memcmp(major, "qt  ", 4) == 0)
        set(out, EU_MEDIA_FORMAT_MP4, EU_MEDIA_TYPE_VIDEO, "video/quicktime", "mov");
    else if (memcmp(major, "M4V", 3) == 0)
        set(out, EU_MEDIA_FORMAT_MP4, EU_MEDIA_TYPE_VIDEO, "video/x-m4v", "m4v");
    else
        set(out, EU_MEDIA_FORMAT_MP4, EU_MEDIA_TYPE_VIDEO, "video/mp4", "mp4");
    return 0;
}

/* An MPEG audio frame header: sync, a layer, a real bitrate and rate
 * (AAC's ADTS has layer 0 and is not MP3). */
static bool
is_mp3_frame(const unsigned char *d, size_t n)
{
    if (n < 4 || d[0] != 0xFF || (d[1] & 0xE0) != 0xE0)
        return false;
    int version = (d[1] >> 3) & 3, layer = (d[1] >> 1) & 3;
    int bitrate = d[2] >> 4, rate = (d[2] >> 2) & 3;
    return version != 1 && layer != 0 && bitrate != 0 && bitrate != 15 && rate != 3;
}

int
eu_media_sniff(const unsigned char *d, size_t n, struct eu_media_sniff *out)
{
    set(out, EU_MEDIA_FORMAT_UNKNOWN, EU_MEDIA_TYPE_UNKNOWN, "application/octet-stream", "bin");
    if (!d)
        return -1;
    if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) {
        set(out, EU_MEDIA_FORMAT_JPEG, EU_MEDIA_TYPE_IMAGE, "image/jpeg", "jpg");
        return 0;
    }
    if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) {
        set(out, EU_MEDIA_FORMAT_PNG, EU_MEDIA_TYPE_IMAGE, "image/png", "png");
        return 0;
    }
    if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0)) {
        struct eu_gif_scan scan;
        eu_media_gif_scan(d, n, 2, &scan);
        set(out, EU_MEDIA_FORMAT_GIF, scan.frames > 1 ? EU_MEDIA_TYPE_GIFV : EU_MEDIA_TYPE_IMAGE,
            "image/gif", "gif");
        return 0;
    }
    if (n >= 12 && memcmp(d, "RIFF", 4) == 0) {
        if (memcmp(d + 8, "WEBP", 4) == 0) {
            set(out, EU_MEDIA_FORMAT_WEBP, EU_MEDIA_TYPE_IMAGE, "image/webp", "webp");
            return 0;
        }
        if (memcmp(d + 8, "WAVE", 4) == 0) {
            set(out, EU_MEDIA_FORMAT_WAV, EU_MEDIA_TYPE_AUDIO, "audio/wav", "wav");
            return 0;
        }
        return -1;
    }
    if (n >= 12 && memcmp(d + 4, "ftyp", 4) == 0) {
        if (sniff_bmff(d, n, out) == 0)
            return 0;
        set(out, EU_MEDIA_FORMAT_UNKNOWN, EU_MEDIA_TYPE_UNKNOWN, "application/octet-stream", "bin");
        return -1;
    }
    if (n >= 4 && memcmp(d, "\x1a\x45\xdf\xa3", 4) == 0) {
        set(out, EU_MEDIA_FORMAT_WEBM, EU_MEDIA_TYPE_VIDEO, "video/webm", "webm");
        return 0;
    }
    if (n >= 4 && memcmp(d, "OggS", 4) == 0) {
        set(out, EU_MEDIA_FORMAT_OGG, EU_MEDIA_TYPE_AUDIO, "audio/ogg", "ogg");
        return 0;
    }
    if (n >= 4 && memcmp(d, "fLaC", 4) == 0) {
        set(out, EU_MEDIA_FORMAT_FLAC, EU_MEDIA_TYPE_AUDIO, "audio/flac", "flac");
        return 0;
    }
    if ((n >= 10 && memcmp(d, "ID3", 3) == 0 && d[3] < 0xFF) || is_mp3_frame(d, n)) {
        set(out, EU_MEDIA_FORMAT_MP3, EU_MEDIA_TYPE_AUDIO, "audio/mpeg", "mp3");
        return 0;
    }
    return -1;
}

const char *
eu_media_type_name(enum eu_media_type t)
{
    switch (t) {
    case EU_MEDIA_TYPE_IMAGE:
        return "image";
    case EU_MEDIA_TYPE_GIFV:
        return "gifv";
    case EU_MEDIA_TYPE_VIDEO:
        return "video";
    case EU_MEDIA_TYPE_AUDIO:
        return "audio";
    default:
        return "unknown";
    }
}
