/*
 * Shared between the media files: the GIF walk that sniffing (animated or
 * not) and the pipeline (duration, frame rate) both need, done once with
 * giflib so the two cannot disagree.
 */
#ifndef EUNHA_MEDIA_INTERNAL_H
#define EUNHA_MEDIA_INTERNAL_H
#include <stddef.h>

struct eu_gif_scan {
    int frames;        /* image descriptors seen (stops counting at max_frames) */
    long delay_cs;     /* sum of the frame delays, in 1/100 s, as browsers play them */
    int width, height; /* logical screen */
};

/*
 * Walks a GIF's blocks without decoding any pixels, counting image
 * descriptors up to max_frames (0: all). A truncated or broken file ends the
 * walk; what was seen before counts. Returns 0, or -1 when data is not a GIF
 * giflib can open.
 */
int eu_media_gif_scan(const unsigned char *data, size_t len, int max_frames,
                      struct eu_gif_scan *out);

#endif
