/*
 * fiostat.h - fio's statistics, computed the way fio 3.33 computes them
 * (stat.c, io_u.c), so that numbers under fio's names in faultline's
 * JSON mean what they mean in fio's:
 *
 *  - a series of per-interval samples (its struct io_stat, behind bw_min,
 *    bw_mean, iops_stddev, ...): min, max, a running mean and the sum of
 *    squared deviations (Welford), standard deviation with n - 1;
 *  - the iodepth distributions (its io_u_map, io_u_submit, io_u_complete)
 *    with fio's seven buckets each, and their percentages;
 *  - bw_agg, a job's mean bandwidth as a share of its group's.
 *
 * Pure arithmetic, no I/O: the sampler feeds series, the workers count
 * depth buckets (inline, on their I/O path), the JSON writer reads both.
 */
#ifndef FAULTLINE_FIOSTAT_H
#define FAULTLINE_FIOSTAT_H

#include <stdbool.h>
#include <stdint.h>

/* One series of samples, as fio's io_stat. */
struct fiostat_series {
	uint64_t samples;
	uint64_t min, max;		/* 0 while empty */
	double mean;
	double m2;			/* sum of squared deviations from the mean */
};

void fiostat_series_add(struct fiostat_series *s, uint64_t v);

/*
 * fio takes a bandwidth or IOPS sample only when a whole averaging
 * window has passed, so a job's last, partial window is no sample. A
 * span of @dt_ns is whole for a window of @window_ns when it is at least
 * 9/10 of it: the sampler's wake-up jitter shortens a full interval by
 * far less, a job's remainder is usually much shorter.
 */
static inline bool fiostat_whole(uint64_t dt_ns, uint64_t window_ns)
{
	return dt_ns * 10 >= window_ns * 9;
}
/* Sample standard deviation (n - 1, as fio's calc_lat); 0 below 2 samples. */
double fiostat_series_stddev(const struct fiostat_series *s);

/*
 * fio's iodepth buckets, 7 of each (FIO_IO_U_MAP_NR):
 *   level:    requests pushed to the kernel, by how many the thread had in
 *             flight counting them: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64
 *             (JSON keys "1" "2" "4" "8" "16" "32" ">=64");
 *   submit:   pushes by how many requests each pushed, and
 *   complete: reaps by how many each returned: 0, 1-4, 5-8, 9-16, 17-32,
 *             33-64, >64 (keys "0" "4" "8" "16" "32" "64" ">=64").
 */
#define FIOSTAT_DEPTH_BUCKETS 7

struct fiostat_depth {
	uint64_t level[FIOSTAT_DEPTH_BUCKETS];
	uint64_t submit[FIOSTAT_DEPTH_BUCKETS];
	uint64_t complete[FIOSTAT_DEPTH_BUCKETS];
};

/* fio's io_u_mark_depth(): the bucket of @inflight requests in flight. */
static inline unsigned fiostat_level_bucket(unsigned inflight)
{
	unsigned b = 0;

	while (b < FIOSTAT_DEPTH_BUCKETS - 1 && inflight >= 2u << b)
		b++;
	return b;
}

/* fio's __io_u_mark_map(): the bucket of a push or reap of @n requests. */
static inline unsigned fiostat_batch_bucket(unsigned n)
{
	unsigned b = 0;

	if (!n)
		return 0;
	/* 1-4 is bucket 1, then each bucket doubles: 5-8, 9-16, ... */
	for (b = 1; b < FIOSTAT_DEPTH_BUCKETS - 1 && n > 4u << (b - 1); b++)
		;
	return b;
}

/*
 * Percentages of @count[FIOSTAT_DEPTH_BUCKETS] as fio's stat_calc_dist():
 * each bucket / @total * 100, a bucket that holds anything at least 0.1;
 * all 0 when @total is 0.
 */
void fiostat_dist_pct(const uint64_t *count, uint64_t total, double *pct);

/*
 * fio's bw_agg (convert_agg_kbytes_percent): @mean_kib (a job's bw_mean
 * in KiB/s, truncated to an integer as fio does) in percent of its
 * group's aggregate bandwidth @group_bytes_s, at most 100; 100 when the
 * group moved at most 1 KiB/s.
 */
double fiostat_bw_agg(double mean_kib, double group_bytes_s);

#endif
