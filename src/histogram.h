/*
 * histogram.h - log-linear latency histogram, about 1 % relative error.
 *
 * Values (nanoseconds) below 2^HIST_SUB_BITS get a bucket each; above
 * that each power of two is split into 2^HIST_SUB_BITS equal buckets,
 * so a bucket is at most 1/128 = 0.78 % wide relative to its value.
 * The same scheme as HdrHistogram, with fixed precision.
 *
 * One writer (the worker that owns it) and any number of readers (the
 * sampler): counts are stored with relaxed atomic loads and stores, which
 * are plain moves on x86-64 and arm64, never locked instructions.
 */
#ifndef FAULTLINE_HISTOGRAM_H
#define FAULTLINE_HISTOGRAM_H

#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
/* Largest exponent kept: 2^42 ns is more than an hour; slower lands in the
 * last bucket. */
#define HIST_MAX_EXP 42
#define HIST_BUCKETS ((HIST_MAX_EXP - HIST_SUB_BITS + 2) * HIST_SUB)

struct hist {
	uint64_t n;
	uint64_t sum;			/* ns, for the mean */
	uint64_t min;			/* UINT64_MAX when empty */
	uint64_t max;
	uint64_t count[HIST_BUCKETS];
};

void hist_init(struct hist *h);

static inline unsigned hist_bucket(uint64_t v)
{
	unsigned e, shift;

	if (v < HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	if (e > HIST_MAX_EXP)
		return HIST_BUCKETS - 1;
	shift = e - HIST_SUB_BITS;
	return (shift + 1) * HIST_SUB + (unsigned)(v >> shift) - HIST_SUB;
}

#define HIST_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define HIST_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* Single-writer add: load + store, no read-modify-write instruction. */
static inline void hist_add(struct hist *h, uint64_t v)
{
	unsigned b = hist_bucket(v);

	HIST_STORE(&h->count[b], HIST_LOAD(&h->count[b]) + 1);
	HIST_STORE(&h->n, HIST_LOAD(&h->n) + 1);
	HIST_STORE(&h->sum, HIST_LOAD(&h->sum) + v);
	if (v < HIST_LOAD(&h->min))
		HIST_STORE(&h->min, v);
	if (v > HIST_LOAD(&h->max))
		HIST_STORE(&h->max, v);
}

/* Lowest and highest value that land in bucket @b. */
uint64_t hist_bucket_low(unsigned b);
uint64_t hist_bucket_high(unsigned b);

/* Copy @src into @dst with relaxed loads (a consistent-enough snapshot of
 * a histogram another thread is writing). */
void hist_snapshot(struct hist *dst, const struct hist *src);
/* dst += src */
void hist_merge(struct hist *dst, const struct hist *src);
/* out = cur - prev, for an interval; min/max become the bounds of the
 * lowest and highest non-empty bucket of the difference. */
void hist_diff(struct hist *out, const struct hist *cur, const struct hist *prev);

/* Value at percentile @p (0..100): the midpoint of the bucket holding it,
 * clamped to [min, max]. 0 for an empty histogram. */
uint64_t hist_percentile(const struct hist *h, double p);
double hist_mean(const struct hist *h);

#endif
