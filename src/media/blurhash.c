/*
 * The blurhash encoder (https://blurha.sh, Wolt's algorithm): a few cosine
 * components of the image in linear light, quantised and written in base 83.
 * Written here because no Debian package ships one; it runs on the preview,
 * so the image is at most a few hundred pixels a side.
 */
#include "eunha/media.h"

#include <math.h>
#include <stdlib.h>

#include "eunha/mem.h"

static const char b83[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~";

static char *
put83(char *p, long value, int digits)
{
    for (int i = digits - 1; i >= 0; i--) {
        p[i] = b83[value % 83];
        value /= 83;
    }
    return p + digits;
}

static double
srgb_to_linear(int v)
{
    double c = v / 255.0;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static int
linear_to_srgb(double v)
{
    if (v < 0)
        v = 0;
    if (v > 1)
        v = 1;
    if (v <= 0.0031308)
        return (int)(v * 12.92 * 255 + 0.5);
    return (int)((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5);
}

static double
sign_sqrt(double v)
{
    return v < 0 ? -sqrt(-v) : sqrt(v);
}

static int
quant_ac(double v, double max)
{
    double q = floor(sign_sqrt(v / max) * 9 + 9.5);
    return q < 0 ? 0 : q > 18 ? 18 : (int)q;
}

int
eu_blurhash_encode(const unsigned char *rgb, int width, int height, size_t stride, int cx, int cy,
                   char *out, size_t outlen)
{
    if (!rgb || !out || width < 1 || height < 1 || cx < 1 || cx > 9 || cy < 1 || cy > 9 ||
        stride < (size_t)width * 3)
        return -1;
    size_t need = 1 + 1 + 4 + 2 * (size_t)(cx * cy - 1) + 1;
    if (outlen < need)
        return -1;

    double lin[256];
    for (int i = 0; i < 256; i++)
        lin[i] = srgb_to_linear(i);
    /* Cosines per column and per row, so the sum is only multiplications. */
    double *cosx = eu_xmalloc(sizeof(double) * (size_t)cx * (size_t)width);
    double *cosy = eu_xmalloc(sizeof(double) * (size_t)cy * (size_t)height);
    for (int i = 0; i < cx; i++)
        for (int x = 0; x < width; x++)
            cosx[(size_t)i * width + x] = cos(M_PI * i * x / width);
    for (int j = 0; j < cy; j++)
        for (int y = 0; y < height; y++)
            cosy[(size_t)j * height + y] = cos(M_PI * j * y / height);

    double f[81][3] = {{0}};
    for (int j = 0; j < cy; j++) {
        for (int i = 0; i < cx; i++) {
            double r = 0, g = 0, b = 0;
            for (int y = 0; y < height; y++) {
                const unsigned char *row = rgb + (size_t)y * stride;
                double by = cosy[(size_t)j * height + y];
                const double *bx = cosx + (size_t)i * width;
                double rr = 0, rg = 0, rb = 0;
                for (int x = 0; x < width; x++) {
                    rr += bx[x] * lin[row[3 * x]];
                    rg += bx[x] * lin[row[3 * x + 1]];
                    rb += bx[x] * lin[row[3 * x + 2]];
                }
                r += by * rr;
                g += by * rg;
                b += by * rb;
            }
            double scale = (i == 0 && j == 0 ? 1.0 : 2.0) / ((double)width * height);
            double *c = f[j * cx + i];
            c[0] = r * scale;
            c[1] = g * scale;
            c[2] = b * scale;
        }
    }
    free(cosx);
    free(cosy);

    char *p = out;
    p = put83(p, (cx - 1) + (cy - 1) * 9, 1);
    int ncomp = cx * cy;
    double max = 1;
    if (ncomp > 1) {
        double actual = 0;
        for (int k = 1; k < ncomp; k++)
            for (int c = 0; c < 3; c++)
                actual = fmax(actual, fabs(f[k][c]));
        int q = (int)floor(actual * 166 - 0.5);
        q = q < 0 ? 0 : q > 82 ? 82 : q;
        max = (q + 1) / 166.0;
        p = put83(p, q, 1);
    } else {
        p = put83(p, 0, 1);
    }
    long dc = (long)linear_to_srgb(f[0][0]) << 16 | (long)linear_to_srgb(f[0][1]) << 8 |
              linear_to_srgb(f[0][2]);
    p = put83(p, dc, 4);
    for (int k = 1; k < ncomp; k++) {
        long v =
            quant_ac(f[k][0], max) * 19 * 19 + quant_ac(f[k][1], max) * 19 + quant_ac(f[k][2], max);
        p = put83(p, v, 2);
    }
    *p = '\0';
    return (int)(p - out);
}
