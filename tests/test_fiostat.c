/*
 * test_fiostat.c - fio's statistics as fio computes them: series
 * (min, max, mean, n-1 standard deviation), the iodepth buckets at their
 * edges, the distribution percentages with fio's 0.1 floor, bw_agg.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "lib/fiostat.h"

static void assert_close(double a, double b)
{
	if (fabs(a - b) > 1e-9 * fabs(b) + 1e-9)
		fail_msg("%.17g != %.17g", a, b);
}

/* A series matches the textbook figures of the same samples. */
static void test_series(void **state)
{
	static const uint64_t v[] = { 45128, 108752, 92320, 70400, 61912, 86980 };
	struct fiostat_series s = { 0 };
	double mean = 0, ss = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		fiostat_series_add(&s, v[i]);
		mean += (double)v[i];
	}
	mean /= 6;
	for (size_t i = 0; i < 6; i++)
		ss += ((double)v[i] - mean) * ((double)v[i] - mean);
	assert_int_equal(s.samples, 6);
	assert_int_equal(s.min, 45128);
	assert_int_equal(s.max, 108752);
	assert_close(s.mean, mean);
	assert_close(fiostat_series_stddev(&s), sqrt(ss / 5));
}

/* One sample: no deviation; none: all zero, as fio writes them. */
static void test_series_small(void **state)
{
	struct fiostat_series s = { 0 };

	(void)state;
	assert_close(fiostat_series_stddev(&s), 0);
	assert_int_equal(s.min, 0);
	fiostat_series_add(&s, 7);
	assert_int_equal(s.min, 7);
	assert_int_equal(s.max, 7);
	assert_close(fiostat_series_stddev(&s), 0);
	fiostat_series_add(&s, 3);
	assert_int_equal(s.min, 3);
}

/* fio's io_u_mark_depth: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64. */
static void test_level_buckets(void **state)
{
	static const struct { unsigned depth, bucket; } t[] = {
		{ 1, 0 }, { 2, 1 }, { 3, 1 }, { 4, 2 }, { 7, 2 }, { 8, 3 }, { 15, 3 },
		{ 16, 4 }, { 31, 4 }, { 32, 5 }, { 63, 5 }, { 64, 6 }, { 4096, 6 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (fiostat_level_bucket(t[i].depth) != t[i].bucket)
			fail_msg("depth %u: bucket %u, want %u", t[i].depth,
				 fiostat_level_bucket(t[i].depth), t[i].bucket);
}

/* fio's __io_u_mark_map: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64. */
static void test_batch_buckets(void **state)
{
	static const struct { unsigned n, bucket; } t[] = {
		{ 0, 0 }, { 1, 1 }, { 4, 1 }, { 5, 2 }, { 8, 2 }, { 9, 3 }, { 16, 3 },
		{ 17, 4 }, { 32, 4 }, { 33, 5 }, { 64, 5 }, { 65, 6 }, { 4096, 6 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (fiostat_batch_bucket(t[i].n) != t[i].bucket)
			fail_msg("n %u: bucket %u, want %u", t[i].n, fiostat_batch_bucket(t[i].n),
				 t[i].bucket);
}

/* Shares of the total; a bucket with anything at all shows >= 0.1 %. */
static void test_dist_pct(void **state)
{
	uint64_t c[FIOSTAT_DEPTH_BUCKETS] = { 1, 0, 99998, 1, 0, 0, 0 };
	double p[FIOSTAT_DEPTH_BUCKETS];

	(void)state;
	fiostat_dist_pct(c, 100000, p);
	assert_close(p[0], 0.1);
	assert_close(p[1], 0);
	assert_close(p[2], 99.998);
	assert_close(p[3], 0.1);
	fiostat_dist_pct(c, 0, p);
	for (unsigned i = 0; i < FIOSTAT_DEPTH_BUCKETS; i++)
		assert_close(p[i], 0);
}

/* bw_agg: the job's mean (truncated) against its group's, capped. */
static void test_bw_agg(void **state)
{
	(void)state;
	assert_close(fiostat_bw_agg(1000.9, 4000.0 * 1024), 25.0);
	assert_close(fiostat_bw_agg(5000, 4000.0 * 1024), 100.0);
	assert_close(fiostat_bw_agg(0.5, 1024), 100.0);
}

/* 9/10 of a window is whole: jitter yes, a job's short remainder no. */
static void test_whole(void **state)
{
	(void)state;
	assert_true(fiostat_whole(1000000000, 1000000000));
	assert_true(fiostat_whole(999000000, 1000000000));
	assert_true(fiostat_whole(900000000, 1000000000));
	assert_false(fiostat_whole(899999999, 1000000000));
	assert_false(fiostat_whole(2000000, 1000000000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_series_small),
		cmocka_unit_test(test_level_buckets),
		cmocka_unit_test(test_batch_buckets),
		cmocka_unit_test(test_dist_pct),
		cmocka_unit_test(test_bw_agg),
		cmocka_unit_test(test_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
