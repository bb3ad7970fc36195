/*
 * Tests for the load generator's latency histogram (tools/loadgen/histogram.h):
 * bucket boundaries, the relative-error bound the benchmark tables rely on,
 * percentiles against a sorted reference, merging, and the edge cases (empty,
 * one value, values past the last bucket).
 */
#include "../../../tools/loadgen/histogram.h"

#include <check.h>
#include <stdlib.h>

START_TEST(test_small_values_exact)
{
    /* Below 128 every value has its own bucket, so nothing is rounded. */
    for (uint64_t v = 0; v < 128; v++) {
        unsigned b = eu_lg_hist_bucket(v);
        ck_assert_uint_eq(b, v);
        ck_assert_uint_eq(eu_lg_hist_bucket_low(b), v);
        ck_assert_uint_eq(eu_lg_hist_bucket_high(b), v);
    }
}
END_TEST

static const struct {
    uint64_t v, low, high;
} boundary_cases[] = {
    {128, 128, 129},    {129, 128, 129},       {130, 130, 131},
    {255, 254, 255},    {256, 256, 259},       {1000, 1000, 1007},
    {1024, 1024, 1039}, {65535, 65024, 65535}, {1000000, 999424, 1007615},
};

START_TEST(test_boundaries)
{
    uint64_t v = boundary_cases[_i].v;
    unsigned b = eu_lg_hist_bucket(v);
    ck_assert_uint_eq(eu_lg_hist_bucket_low(b), boundary_cases[_i].low);
    ck_assert_uint_eq(eu_lg_hist_bucket_high(b), boundary_cases[_i].high);
}
END_TEST

START_TEST(test_buckets_contiguous)
{
    /* Each bucket starts right after the previous one ends: no value is lost
     * between buckets and none belongs to two. */
    for (unsigned b = 1; b < EU_LG_HIST_BUCKETS; b++) {
        ck_assert_uint_eq(eu_lg_hist_bucket_low(b), eu_lg_hist_bucket_high(b - 1) + 1);
        ck_assert_uint_eq(eu_lg_hist_bucket(eu_lg_hist_bucket_low(b)), b);
        ck_assert_uint_eq(eu_lg_hist_bucket(eu_lg_hist_bucket_high(b)), b);
    }
}
END_TEST

START_TEST(test_relative_error_bound)
{
    /* Every bucket is at most 1/64 as wide as its lowest value. */
    for (uint64_t v = 128; v < ((uint64_t)1 << 39); v = v * 3 / 2 + 7) {
        unsigned b = eu_lg_hist_bucket(v);
        uint64_t lo = eu_lg_hist_bucket_low(b), hi = eu_lg_hist_bucket_high(b);
        ck_assert(lo <= v && v <= hi);
        ck_assert_msg((double)(hi - lo + 1) / (double)lo <= 1.0 / 64 + 1e-12,
                      "bucket [%llu, %llu] too wide", (unsigned long long)lo,
                      (unsigned long long)hi);
    }
}
END_TEST

START_TEST(test_huge_values_clamped)
{
    struct eu_lg_hist *h = malloc(sizeof(*h));
    eu_lg_hist_init(h);
    uint64_t huge = (uint64_t)1 << 50;
    ck_assert_uint_eq(eu_lg_hist_bucket(huge), EU_LG_HIST_BUCKETS - 1);
    ck_assert_uint_eq(eu_lg_hist_bucket(UINT64_MAX), EU_LG_HIST_BUCKETS - 1);
    eu_lg_hist_record(h, 5);
    eu_lg_hist_record(h, huge);
    ck_assert_uint_eq(h->max, huge);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 100), huge);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 50), 5);
    free(h);
}
END_TEST

START_TEST(test_empty)
{
    struct eu_lg_hist *h = malloc(sizeof(*h));
    eu_lg_hist_init(h);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 50), 0);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 100), 0);
    ck_assert(eu_lg_hist_mean(h) == 0.0);
    free(h);
}
END_TEST

START_TEST(test_single_value)
{
    struct eu_lg_hist *h = malloc(sizeof(*h));
    eu_lg_hist_init(h);
    eu_lg_hist_record(h, 12345);
    /* Clamping to min and max makes every percentile of one value exact. */
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 0), 12345);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 50), 12345);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 99.9), 12345);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 100), 12345);
    free(h);
}
END_TEST

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The exact value at percentile p of a sorted array, by the same rank rule. */
static uint64_t
exact_percentile(const uint64_t *sorted, size_t n, double p)
{
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1)
        rank = 1;
    return sorted[rank - 1];
}

START_TEST(test_percentiles_match_sorted)
{
    /* A long-tailed sample like real latencies: mostly a few ms, some
     * hundreds of ms. The histogram may report up to one bucket high, never
     * low. */
    enum { N = 20000 };
    uint64_t *vals = malloc(N * sizeof(*vals));
    struct eu_lg_hist *h = malloc(sizeof(*h));
    eu_lg_hist_init(h);
    unsigned seed = 42;
    for (size_t i = 0; i < N; i++) {
        double u = (double)rand_r(&seed) / RAND_MAX;
        uint64_t v = (uint64_t)(2000 + 3000 * u);
        if (i % 50 == 0)
            v = (uint64_t)(100000 + 900000 * u);
        vals[i] = v;
        eu_lg_hist_record(h, v);
    }
    qsort(vals, N, sizeof(*vals), cmp_u64);
    static const double ps[] = {1, 10, 50, 90, 95, 98, 99, 99.9};
    for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
        uint64_t want = exact_percentile(vals, N, ps[k]);
        uint64_t got = eu_lg_hist_percentile(h, ps[k]);
        ck_assert_msg(got >= want && (double)got <= (double)want * (1.0 + 1.0 / 64),
                      "p%g: got %llu, want %llu", ps[k], (unsigned long long)got,
                      (unsigned long long)want);
    }
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 100), vals[N - 1]);
    ck_assert_uint_eq(h->min, vals[0]);
    ck_assert_uint_eq(h->total, N);
    free(h);
    free(vals);
}
END_TEST

START_TEST(test_percentile_rank_rule)
{
    /* 1..100 once each: p50 is 50, p95 is 95, p99 is 99 (all exact, < 128). */
    struct eu_lg_hist *h = malloc(sizeof(*h));
    eu_lg_hist_init(h);
    for (uint64_t v = 1; v <= 100; v++)
        eu_lg_hist_record(h, v);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 50), 50);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 95), 95);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 99), 99);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 99.5), 100);
    ck_assert_uint_eq(eu_lg_hist_percentile(h, 0), 1);
    ck_assert(fabs(eu_lg_hist_mean(h) - 50.5) < 1e-9);
    free(h);
}
END_TEST

START_TEST(test_merge)
{
    struct eu_lg_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *all = malloc(sizeof(*all));
    eu_lg_hist_init(a);
    eu_lg_hist_init(b);
    eu_lg_hist_init(all);
    for (uint64_t v = 1; v < 5000; v += 7) {
        eu_lg_hist_record((v % 2) ? a : b, v * 13);
        eu_lg_hist_record(all, v * 13);
    }
    struct eu_lg_hist *m = malloc(sizeof(*m));
    eu_lg_hist_init(m);
    eu_lg_hist_merge(m, a);
    eu_lg_hist_merge(m, b);
    ck_assert_uint_eq(m->total, all->total);
    ck_assert_uint_eq(m->min, all->min);
    ck_assert_uint_eq(m->max, all->max);
    ck_assert_mem_eq(m->counts, all->counts, sizeof(m->counts));
    /* Merging an empty histogram changes nothing, min included. */
    struct eu_lg_hist *e = malloc(sizeof(*e));
    eu_lg_hist_init(e);
    eu_lg_hist_merge(m, e);
    ck_assert_uint_eq(m->min, all->min);
    ck_assert_uint_eq(eu_lg_hist_percentile(m, 95), eu_lg_hist_percentile(all, 95));
    free(a);
    free(b);
    free(all);
    free(m);
    free(e);
}
END_TEST

static Suite *
histogram_suite(void)
{
    Suite *s = suite_create("loadgen.histogram");
    TCase *tc = tcase_create("buckets");
    tcase_add_test(tc, test_small_values_exact);
    tcase_add_loop_test(tc, test_boundaries, 0,
                        (int)(sizeof(boundary_cases) / sizeof(boundary_cases[0])));
    tcase_add_test(tc, test_buckets_contiguous);
    tcase_add_test(tc, test_relative_error_bound);
    tcase_add_test(tc, test_huge_values_clamped);
    suite_add_tcase(s, tc);

    tc = tcase_create("percentiles");
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_single_value);
    tcase_add_test(tc, test_percentiles_match_sorted);
    tcase_add_test(tc, test_percentile_rank_rule);
    suite_add_tcase(s, tc);

    tc = tcase_create("merge");
    tcase_add_test(tc, test_merge);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(histogram_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
