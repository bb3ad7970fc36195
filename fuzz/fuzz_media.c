/*
 * Fuzz target: upload bytes through eu_media_sniff and the image pipeline
 * (src/media/sniff.c, image.c): header checks, the EXIF walk, the GIF
 * frame walk and the decoders' error paths. Limits are small so a lying
 * header is refused, not decoded for seconds. Invariants: a success has an
 * original and a preview inside the box and a 28-character blurhash; a
 * failure leaves nothing to free and a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct eu_media_sniff s;
    eu_media_sniff(data, size, &s);
    if (!s.mime || !s.ext)
        abort();
    static const struct eu_image_limits lim = {
        .max_pixels = 1 << 20,
        .preview_max_side = 64,
        .preview_quality = 50,
        .original_quality = 50,
    };
    struct eu_image_result r;
    char err[128] = "";
    if (eu_image_process(data, size, &lim, &r, err, sizeof err) == 0) {
        if (!r.original || !r.small || r.small_width > 64 || r.small_height > 64 ||
            (uint64_t)r.width * (uint64_t)r.height > lim.max_pixels || strlen(r.blurhash) != 28)
            abort();
        eu_image_result_free(&r);
    } else if (r.original || r.small || err[0] == '\0') {
        abort();
    }
    return 0;
}
