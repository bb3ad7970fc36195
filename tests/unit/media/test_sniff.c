/*
 * eu_media_sniff: each accepted format from its magic bytes, what looks
 * close but is not accepted, and GIFs told apart by their frame count.
 */
#include <check.h>
#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/media.h"

struct sniff_case {
    const char *bytes;
    size_t len;
    enum eu_media_format format;
    enum eu_media_type type;
    const char *mime;
};

#define B(s) s, sizeof(s) - 1

static const struct sniff_case cases[] = {
    {B("\xff\xd8\xff\xe0\0\x10JFIF"), EU_MEDIA_FORMAT_JPEG, EU_MEDIA_TYPE_IMAGE, "image/jpeg"},
    {B("\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), EU_MEDIA_FORMAT_PNG, EU_MEDIA_TYPE_IMAGE, "image/png"},
    {B("RIFF\x24\0\0\0WEBPVP8 "), EU_MEDIA_FORMAT_WEBP, EU_MEDIA_TYPE_IMAGE, "image/webp"},
    {B("RIFF\x24\0\0\0WAVEfmt "), EU_MEDIA_FORMAT_WAV, EU_MEDIA_TYPE_AUDIO, "audio/wav"},
    {B("\0\0\0\x18"
       "ftypisom\0\0\x02\0isomiso2"),
     EU_MEDIA_FORMAT_MP4, EU_MEDIA_TYPE_VIDEO, "video/mp4"},
    {B("\0\0\0\x14"
       "ftypqt  \0\0\x02\0qt  "),
     EU_MEDIA_FORMAT_MP4, EU_MEDIA_TYPE_VIDEO, "video/quicktime"},
    {B("\0\0\0\x14"
       "ftypM4V \0\0\x02\0M4V "),
     EU_MEDIA_FORMAT_MP4, EU_MEDIA_TYPE_VIDEO, "video/x-m4v"},
    /* An unknown major brand that lists a video brand as compatible. */
    {B("\0\0\0\x18"
       "ftypabcd\0\0\0\0abcdmp42"),
     EU_MEDIA_FORMAT_MP4, EU_MEDIA_TYPE_VIDEO, "video/mp4"},
    {B("\0\0\0\x1c"
       "ftypM4A \0\0\0\0M4A mp42isom"),
     EU_MEDIA_FORMAT_M4A, EU_MEDIA_TYPE_AUDIO, "audio/mp4"},
    {B("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01"), EU_MEDIA_FORMAT_WEBM, EU_MEDIA_TYPE_VIDEO,
     "video/webm"},
    {B("ID3\x04\0\0\0\0\0\x21"), EU_MEDIA_FORMAT_MP3, EU_MEDIA_TYPE_AUDIO, "audio/mpeg"},
    {B("\xff\xfb\x90\x64\0\0"), EU_MEDIA_FORMAT_MP3, EU_MEDIA_TYPE_AUDIO, "audio/mpeg"},
    {B("OggS\0\x02\0\0"), EU_MEDIA_FORMAT_OGG, EU_MEDIA_TYPE_AUDIO, "audio/ogg"},
    {B("fLaC\0\0\0\x22"), EU_MEDIA_FORMAT_FLAC, EU_MEDIA_TYPE_AUDIO, "audio/flac"},
    /* Refused: HEIF, AAC in ADTS, another RIFF, text, short prefixes. */
    {B("\0\0\0\x18"
       "ftypheic\0\0\0\0mif1heic"),
     EU_MEDIA_FORMAT_UNKNOWN, EU_MEDIA_TYPE_UNKNOWN, NULL},
    {B("\xff\xf1\x50\x80\0\x1f"), EU_MEDIA_FORMAT_UNKNOWN, EU_MEDIA_TYPE_UNKNOWN, NULL},
    {B("RIFF\x24\0\0\0AVI LIST"), EU_MEDIA_FORMAT_UNKNOWN, EU_MEDIA_TYPE_UNKNOWN, NULL},
    {B("<svg xmlns=\"http://www.w3.org/2000/svg\"/>"), EU_MEDIA_FORMAT_UNKNOWN,
     EU_MEDIA_TYPE_UNKNOWN, NULL},
    {B("\xff\xd8"), EU_MEDIA_FORMAT_UNKNOWN, EU_MEDIA_TYPE_UNKNOWN, NULL},
    {B("\x89PNG"), EU_MEDIA_FORMAT_UNKNOWN, EU_MEDIA_TYPE_UNKNOWN, NULL},
    {B(""), EU_MEDIA_FORMAT_UNKNOWN, EU_MEDIA_TYPE_UNKNOWN, NULL},
};

START_TEST(test_sniff_magic)
{
    const struct sniff_case *c = &cases[_i];
    struct eu_media_sniff s;
    int rc = eu_media_sniff((const unsigned char *)c->bytes, c->len, &s);
    ck_assert_int_eq(s.format, c->format);
    ck_assert_int_eq(s.type, c->type);
    if (c->mime) {
        ck_assert_int_eq(rc, 0);
        ck_assert_str_eq(s.mime, c->mime);
        ck_assert_ptr_nonnull(s.ext);
    } else {
        ck_assert_int_eq(rc, -1);
    }
}
END_TEST

struct gifbuf {
    unsigned char *p;
    size_t len;
};

static int
gif_write(GifFileType *gif, const GifByteType *data, int n)
{
    struct gifbuf *b = gif->UserData;
    b->p = realloc(b->p, b->len + (size_t)n);
    memcpy(b->p + b->len, data, (size_t)n);
    b->len += (size_t)n;
    return n;
}

static struct gifbuf
make_gif(int frames)
{
    struct gifbuf b = {0};
    int err;
    GifFileType *gif = EGifOpen(&b, gif_write, &err);
    GifColorType colors[2] = {{0, 0, 0}, {255, 255, 255}};
    ColorMapObject *map = GifMakeMapObject(2, colors);
    EGifSetGifVersion(gif, true);
    EGifPutScreenDesc(gif, 4, 4, 1, 0, map);
    GifPixelType line[4] = {0, 1, 0, 1};
    for (int f = 0; f < frames; f++) {
        unsigned char gce[4] = {0, 10, 0, 0};
        EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, gce);
        EGifPutImageDesc(gif, 0, 0, 4, 4, false, NULL);
        for (int y = 0; y < 4; y++)
            EGifPutLine(gif, line, 4);
    }
    EGifCloseFile(gif, &err);
    GifFreeMapObject(map);
    return b;
}

START_TEST(test_sniff_gif_frames)
{
    struct eu_media_sniff s;
    struct gifbuf one = make_gif(1), three = make_gif(3);
    ck_assert_int_eq(eu_media_sniff(one.p, one.len, &s), 0);
    ck_assert_int_eq(s.format, EU_MEDIA_FORMAT_GIF);
    ck_assert_int_eq(s.type, EU_MEDIA_TYPE_IMAGE);
    ck_assert_str_eq(eu_media_type_name(s.type), "image");
    ck_assert_int_eq(eu_media_sniff(three.p, three.len, &s), 0);
    ck_assert_int_eq(s.type, EU_MEDIA_TYPE_GIFV);
    ck_assert_str_eq(eu_media_type_name(s.type), "gifv");
    ck_assert_str_eq(s.mime, "image/gif");
    /* Only the header: no frames seen, so not animated. */
    ck_assert_int_eq(eu_media_sniff(three.p, 13, &s), 0);
    ck_assert_int_eq(s.type, EU_MEDIA_TYPE_IMAGE);
    free(one.p);
    free(three.p);
}
END_TEST

START_TEST(test_type_names)
{
    ck_assert_str_eq(eu_media_type_name(EU_MEDIA_TYPE_VIDEO), "video");
    ck_assert_str_eq(eu_media_type_name(EU_MEDIA_TYPE_AUDIO), "audio");
    ck_assert_str_eq(eu_media_type_name(EU_MEDIA_TYPE_UNKNOWN), "unknown");
}
END_TEST

static Suite *
sniff_suite(void)
{
    Suite *s = suite_create("sniff");
    TCase *tc = tcase_create("magic");
    tcase_add_loop_test(tc, test_sniff_magic, 0, (int)(sizeof cases / sizeof cases[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("gif");
    tcase_add_test(tc, test_sniff_gif_frames);
    tcase_add_test(tc, test_type_names);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(sniff_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
