/*
 * A latency histogram for the load generator: fixed memory, constant-time
 * recording, and percentiles within 1.6% of the true value, so a run of
 * millions of requests can report p50/p95/p99/max without keeping every
 * sample and without the lie an average tells about a long tail.
 *
 * Values are unsigned integers (the load generator records microseconds).
 * The layout is HdrHistogram's log-linear one: values below 128 get a bucket
 * each; above that every power of two is split into 64 equal sub-buckets, so
 * a bucket is never wider than 1/64 of the values it holds. Values of 2^40
 * and more (twelve days in microseconds) land in the last bucket; max still
 * records them exactly.
 *
 * Header-only and free of the server's code so that the unit test can
 * include it directly.
 */
#ifndef EU_LOADGEN_HISTOGRAM_H
#define EU_LOADGEN_HISTOGRAM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define EU_LG_HIST_SUB_BITS 6
#define EU_LG_HIST_SUB (1u << EU_LG_HIST_SUB_BITS)
#define EU_LG_HIST_MAX_EXP 40
#define EU_LG_HIST_BUCKETS ((EU_LG_HIST_MAX_EXP - EU_LG_HIST_SUB_BITS + 1) * EU_LG_HIST_SUB)

/* Embedded, no heap: callers keep it in a struct or on the stack (18 KiB). */
struct eu_lg_hist {
    uint64_t counts[EU_LG_HIST_BUCKETS];
    uint64_t total; /* number of values recorded */
    uint64_t min;   /* exact smallest value; meaningless while total == 0 */
    uint64_t max;   /* exact largest value */
    double sum;     /* for the mean; a double so it cannot overflow */
};

static inline void
eu_lg_hist_init(struct eu_lg_hist *h)
{
    memset(h, 0, sizeof(*h));
}

/* The bucket holding v. Exposed for the tests. */
static inline unsigned
eu_lg_hist_bucket(uint64_t v)
{
    if (v >> EU_LG_HIST_MAX_EXP)
        return EU_LG_HIST_BUCKETS - 1;
    if (v < 2 * EU_LG_HIST_SUB)
        return (unsigned)v;
    /* Position of the highest set bit; v >= 128 so it is at least 7. */
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = e - EU_LG_HIST_SUB_BITS;
    return shift * EU_LG_HIST_SUB + (unsigned)(v >> shift);
}

/* The smallest and largest values that bucket b holds. */
static inline uint64_t
eu_lg_hist_bucket_low(unsigned b)
{
    if (b < 2 * EU_LG_HIST_SUB)
        return b;
    unsigned shift = b / EU_LG_HIST_SUB - 1;
    uint64_t mant = b - shift * EU_LG_HIST_SUB;
    return mant << shift;
}

static inline uint64_t
eu_lg_hist_bucket_high(unsigned b)
{
    if (b < 2 * EU_LG_HIST_SUB)
        return b;
    unsigned shift = b / EU_LG_HIST_SUB - 1;
    uint64_t mant = b - shift * EU_LG_HIST_SUB;
    return ((mant + 1) << shift) - 1;
}

static inline void
eu_lg_hist_record(struct eu_lg_hist *h, uint64_t v)
{
    h->counts[eu_lg_hist_bucket(v)]++;
    if (h->total == 0 || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->total++;
    h->sum += (double)v;
}

/* Adds src's values to dst, as if each had been recorded into dst. */
static inline void
eu_lg_hist_merge(struct eu_lg_hist *dst, const struct eu_lg_hist *src)
{
    if (src->total == 0)
        return;
    for (unsigned i = 0; i < EU_LG_HIST_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    if (dst->total == 0 || src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    dst->total += src->total;
    dst->sum += src->sum;
}

/*
 * The value at percentile p (0..100): the smallest value v such that at least
 * p% of the recorded values are <= v, give or take one bucket's width. It
 * reports the top of the bucket, so it errs high rather than flattering the
 * tail, clamped to the exact min and max; p >= 100 is the exact max. Returns 0
 * for an empty histogram.
 */
static inline uint64_t
eu_lg_hist_percentile(const struct eu_lg_hist *h, double p)
{
    if (h->total == 0)
        return 0;
    if (p >= 100.0)
        return h->max;
    if (p < 0.0)
        p = 0.0;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->total);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < EU_LG_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t v = eu_lg_hist_bucket_high(i);
            if (v > h->max)
                v = h->max;
            if (v < h->min)
                v = h->min;
            return v;
        }
    }
    return h->max;
}

static inline double
eu_lg_hist_mean(const struct eu_lg_hist *h)
{
    return h->total ? h->sum / (double)h->total : 0.0;
}

#endif
