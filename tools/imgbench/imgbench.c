/*
 * Times eu_image_process (src/media/image.c) on one photo-sized JPEG: wall
 * and CPU time of decoding, re-encoding the original, the WebP preview and
 * the blurhash. With no argument (or "-") it makes a 4000x3000 (12 MP)
 * JPEG of a smooth gradient with noise (quality 90, about what a phone
 * writes); with a path it times that file instead. `--write FILE` writes
 * the made JPEG to FILE and exits: scripts/benchmark_media.sh uploads that
 * same photo, so the two figures are of one input. The figure in the
 * report comes from a build without sanitizers:
 *
 *   cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release
 *   cmake --build build-release --target eunha-imgbench
 *   build-release/eunha-imgbench [file.jpg] [runs]
 *   build-release/eunha-imgbench --write photo.jpg
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* After stdio.h: jpeglib.h uses FILE without including it. */
#include <jpeglib.h>

#include "eunha/media.h"

static unsigned char *
make_photo(int w, int h, size_t *len)
{
    unsigned char *rgb = malloc((size_t)w * 3);
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *mem = NULL;
    unsigned long size = 0;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &mem, &size);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 90, TRUE);
    jpeg_start_compress(&c, TRUE);
    unsigned seed = 1;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int n = (int)(rand_r(&seed) % 24) - 12;
            int v[3] = {x * 255 / w + n, y * 255 / h + n, (x + y) * 255 / (w + h) + n};
            for (int k = 0; k < 3; k++)
                rgb[3 * x + k] = (unsigned char)(v[k] < 0 ? 0 : v[k] > 255 ? 255 : v[k]);
        }
        JSAMPROW row = rgb;
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(rgb);
    *len = size;
    return mem;
}

static unsigned char *
read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(p, 1, n > 0 ? (size_t)n : 0, f);
    fclose(f);
    return p;
}

static double
seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes the made photo to path; the process's exit status. */
static int
write_photo(const char *path)
{
    size_t len;
    unsigned char *data = make_photo(4000, 3000, &len);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    free(data);
    if (!ok) {
        fprintf(stderr, "imgbench: cannot write '%s'\n", path);
        return 1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--write") == 0) {
        if (argc != 3) {
            fprintf(stderr, "usage: eunha-imgbench --write FILE\n");
            return 2;
        }
        return write_photo(argv[2]);
    }
    size_t len;
    unsigned char *data = argc > 1 && strcmp(argv[1], "-") != 0 ? read_file(argv[1], &len)
                                                                : make_photo(4000, 3000, &len);
    if (!data) {
        fprintf(stderr, "imgbench: cannot read '%s'\n", argv[1]);
        return 1;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    struct eu_image_limits lim = {
        .max_pixels = 33177600,
        .preview_max_side = 640,
        .preview_quality = 80,
        .original_quality = 90,
    };
    printf("input: %zu bytes\n", len);
    double best_wall = 1e9, best_cpu = 1e9, sum_wall = 0, sum_cpu = 0;
    for (int i = 0; i < runs; i++) {
        struct eu_image_result r;
        char err[128];
        double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        if (eu_image_process(data, len, &lim, &r, err, sizeof err) < 0) {
            fprintf(stderr, "imgbench: %s\n", err);
            return 1;
        }
        double wall = seconds(CLOCK_MONOTONIC) - w0, cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (i == 0)
            printf("%dx%d -> original %zu bytes, preview %dx%d %zu bytes, blurhash %s\n", r.width,
                   r.height, r.original_len, r.small_width, r.small_height, r.small_len,
                   r.blurhash);
        printf("run %d: wall %.0f ms, cpu %.0f ms\n", i + 1, wall * 1e3, cpu * 1e3);
        best_wall = wall < best_wall ? wall : best_wall;
        best_cpu = cpu < best_cpu ? cpu : best_cpu;
        sum_wall += wall;
        sum_cpu += cpu;
        eu_image_result_free(&r);
    }
    printf("best: wall %.0f ms, cpu %.0f ms; mean: wall %.0f ms, cpu %.0f ms (%d runs)\n",
           best_wall * 1e3, best_cpu * 1e3, sum_wall / runs * 1e3, sum_cpu / runs * 1e3, runs);
    free(data);
    return 0;
}
