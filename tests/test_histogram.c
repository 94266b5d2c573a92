/* test_histogram.c - bucket layout, precision, percentiles, merge, diff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/histogram.h"

/* Largest value that still has a bucket of its own size. */
#define HIST_TOP ((1ull << (HIST_MAX_EXP + 1)) - 1)

static uint64_t xs = 88172645463325252ull;

static uint64_t rnd(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}

static struct hist *hnew(void)
{
	struct hist *h = malloc(sizeof(*h));

	assert_non_null(h);
	hist_init(h);
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Buckets tile [0, HIST_TOP] without gaps or overlaps. */
static void test_buckets_tile(void **state)
{
	(void)state;
	assert_int_equal(hist_bucket_low(0), 0);
	for (unsigned b = 0; b + 1 < HIST_BUCKETS; b++) {
		assert_true(hist_bucket_low(b) <= hist_bucket_high(b));
		assert_int_equal(hist_bucket_high(b) + 1, hist_bucket_low(b + 1));
		assert_int_equal(hist_bucket(hist_bucket_low(b)), b);
		assert_int_equal(hist_bucket(hist_bucket_high(b)), b);
	}
	assert_int_equal(hist_bucket_high(HIST_BUCKETS - 1), HIST_TOP);
}

/* Powers of two, their neighbours and HIST_SUB: right bucket, in range. */
static void test_bucket_edges(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 4 * HIST_SUB; v++) {
		unsigned b = hist_bucket(v);

		assert_true(hist_bucket_low(b) <= v && v <= hist_bucket_high(b));
	}
	assert_int_equal(hist_bucket(HIST_SUB - 1), HIST_SUB - 1);
	assert_int_equal(hist_bucket(HIST_SUB), HIST_SUB);
	assert_int_equal(hist_bucket(2 * HIST_SUB - 1), 2 * HIST_SUB - 1);
	assert_int_equal(hist_bucket(2 * HIST_SUB), 2 * HIST_SUB);
	for (unsigned k = 1; k < 64; k++) {
		uint64_t p = 1ull << k;
		uint64_t vs[3] = { p - 1, p, p + 1 };

		for (unsigned i = 0; i < 3; i++) {
			unsigned b = hist_bucket(vs[i]);

			assert_true(b < HIST_BUCKETS);
			if (vs[i] <= HIST_TOP)
				assert_true(hist_bucket_low(b) <= vs[i] && vs[i] <= hist_bucket_high(b));
			else
				assert_int_equal(b, HIST_BUCKETS - 1);
		}
	}
	assert_int_equal(hist_bucket(UINT64_MAX), HIST_BUCKETS - 1);
	assert_int_equal(hist_bucket(HIST_TOP), HIST_BUCKETS - 1);
	assert_int_equal(hist_bucket(HIST_TOP + 1), HIST_BUCKETS - 1);
}

/* hist_add finds a value's bucket its own way (the highest bit of a
 * value it has floored at HIST_MIN_NS): the bucket hist_bucket names,
 * and that bucket's group, at every edge. */
static void test_add_bucket(void **state)
{
	struct hist *h = hnew();
	uint64_t vs[4 * HIST_SUB + 3 * 64 + 1];
	unsigned n = 0;

	(void)state;
	for (uint64_t v = 1; v <= 4 * HIST_SUB; v++)
		vs[n++] = v;
	for (unsigned k = 1; k < 64; k++) {
		vs[n++] = (1ull << k) - 1;
		vs[n++] = 1ull << k;
		vs[n++] = (1ull << k) + 1;
	}
	vs[n++] = UINT64_MAX;
	for (unsigned i = 0; i < n; i++) {
		unsigned b = hist_bucket(vs[i]);

		hist_init(h);
		hist_add(h, vs[i]);
		assert_int_equal(h->count[b], 1);
		/* A worker's histogram keeps no group sums (histogram.h). */
		assert_int_equal(h->group[b >> HIST_GROUP_BITS], 0);
		assert_int_equal(h->n, 1);
	}
	free(h);
}

/* Every bucket's midpoint is within 1 % of every value in it. */
static void test_bucket_width(void **state)
{
	(void)state;
	for (unsigned b = 1; b < HIST_BUCKETS; b++) {
		double lo = (double)hist_bucket_low(b), hi = (double)hist_bucket_high(b);
		double mid = lo + (double)((uint64_t)(hi - lo) / 2);

		assert_true((mid - lo) / lo <= 0.01);
		assert_true((hi - mid) / hi <= 0.01);
	}
}

/* A median read back within 1 % for values swept over 1 ns .. 2^42 ns,
 * with a smaller and a larger value so min/max clamping cannot help. */
static void test_percentile_error_sweep(void **state)
{
	struct hist *h = hnew();

	(void)state;
	for (double v = 1; v <= (double)(1ull << 42); v *= 1.0137) {
		for (int j = 0; j < 4; j++) {
			uint64_t x = (uint64_t)v + (j ? rnd() % ((uint64_t)v / 50 + 1) : 0);
			uint64_t got;
			double err;

			hist_init(h);
			hist_add(h, x > 1 ? x - 1 : 0);
			hist_add(h, x);
			hist_add(h, x * 2 + 1);
			got = hist_percentile(h, 50);
			err = ((double)got - (double)x) / (double)x;
			if (err < 0)
				err = -err;
			if (err > 0.01)
				fail_msg("value %llu read back as %llu (%.3f %%)",
					 (unsigned long long)x, (unsigned long long)got, err * 100);
		}
	}
	free(h);
}

/* The answer lies in the bucket of the ceil(p/100*n)-th smallest sample. */
static void test_percentile_rank(void **state)
{
	enum { N = 5000 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct hist *h = hnew();

	(void)state;
	for (unsigned i = 0; i < N; i++) {
		/* log-uniform over 1 ns .. 2^40 ns */
		v[i] = (rnd() >> (24 + rnd() % 40)) + 1;
		hist_add(h, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	assert_int_equal(h->n, N);
	assert_int_equal(h->min, v[0]);
	assert_int_equal(h->max, v[N - 1]);
	for (unsigned k = 0; k <= 1000; k++) {
		double p = k / 10.0;
		uint64_t rank = ((uint64_t)k * N + 999) / 1000;	/* ceil(p/100*N) */
		uint64_t got = hist_percentile(h, p), want;
		unsigned b;

		if (rank < 1)
			rank = 1;
		want = v[rank - 1];
		b = hist_bucket(want);
		if (got < hist_bucket_low(b) || got > hist_bucket_high(b))
			fail_msg("p%.1f: %llu not in the bucket of %llu", p,
				 (unsigned long long)got, (unsigned long long)want);
	}
	assert_int_equal(hist_percentile(h, 0), v[0]);
	assert_int_equal(hist_percentile(h, 100), v[N - 1]);
	free(h);
	free(v);
}

static void test_percentile_known(void **state)
{
	struct hist *h = hnew();

	(void)state;
	assert_int_equal(hist_percentile(h, 50), 0);
	assert_true(hist_mean(h) == 0.0);
	hist_add(h, 10);
	hist_add(h, 20);
	hist_add(h, 30);
	hist_add(h, 40);
	assert_int_equal(hist_percentile(h, 0), 10);
	assert_int_equal(hist_percentile(h, 25), 10);
	assert_int_equal(hist_percentile(h, 26), 20);
	assert_int_equal(hist_percentile(h, 50), 20);
	assert_int_equal(hist_percentile(h, 75), 30);
	assert_int_equal(hist_percentile(h, 99), 40);
	assert_int_equal(hist_percentile(h, 100), 40);
	assert_true(hist_mean(h) == 25.0);

	/* 1..1000: p7 is exactly the 70th sample (no 0.07*1000 rounding up) */
	hist_init(h);
	for (uint64_t i = 1; i <= 1000; i++)
		hist_add(h, i);
	assert_int_equal(hist_percentile(h, 7), 70);
	assert_int_equal(hist_percentile(h, 50), 500);
	assert_int_equal(hist_percentile(h, 99), 989);	/* bucket [988, 991] */
	assert_int_equal(hist_percentile(h, 99.9), 997);	/* bucket [996, 999] */
	/* 16.1 * 1000 / 100 = 161.00000000000003 in doubles: still rank 161 */
	assert_int_equal(hist_percentile(h, 16.1), 161);
	free(h);
}

/* Every group's sum is the sum of its buckets' counts. */
static void assert_groups(const struct hist *h)
{
	for (unsigned g = 0; g < HIST_GROUPS; g++) {
		uint64_t n = 0;

		for (unsigned b = g << HIST_GROUP_BITS; b < (g + 1) << HIST_GROUP_BITS; b++)
			n += h->count[b];
		assert_int_equal(h->group[g], n);
	}
}

/* The same values: header and buckets (the group sums aside). */
static void assert_same_counts(const struct hist *a, const struct hist *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->sum, b->sum);
	assert_int_equal(a->min, b->min);
	assert_int_equal(a->max, b->max);
	assert_memory_equal(a->count, b->count, sizeof(a->count));
}

static void test_merge(void **state)
{
	struct hist *a = hnew(), *b = hnew(), *all = hnew();

	(void)state;
	for (unsigned i = 0; i < 10000; i++) {
		uint64_t v = rnd() >> (rnd() % 50 + 14);

		hist_add(i % 3 ? a : b, v);
		hist_add(all, v);
	}
	hist_merge(a, b);
	assert_same_counts(a, all);
	/* the merge's group sums are its buckets', though neither had any */
	assert_groups(a);

	/* merging an empty one changes nothing */
	hist_init(b);
	hist_merge(a, b);
	assert_same_counts(a, all);
	assert_groups(a);
	free(a);
	free(b);
	free(all);
}

static void test_snapshot(void **state)
{
	struct hist *h = hnew(), *s = hnew();

	(void)state;
	for (unsigned i = 0; i < 1000; i++)
		hist_add(h, rnd() >> 40);
	hist_snapshot(s, h);
	assert_same_counts(s, h);
	assert_groups(s);
	free(h);
	free(s);
}

static void test_diff(void **state)
{
	struct hist *h = hnew(), *prev = hnew(), *cur = hnew(), *d = hnew(), *want = hnew();

	(void)state;
	hist_add(h, 5);
	hist_add(h, 1000000);
	hist_snapshot(prev, h);
	hist_add(h, 300);
	hist_add(h, 5000);
	hist_add(want, 300);
	hist_add(want, 5000);
	hist_snapshot(cur, h);
	hist_diff(d, cur, prev);
	assert_memory_equal(d->count, want->count, sizeof(d->count));
	assert_int_equal(d->n, 2);
	assert_int_equal(d->sum, 5300);
	/* bounds of the buckets: 300 is in [300, 301], 5000 in [4992, 5023];
	 * the cumulative min 5 and max 1e6 are outside them */
	assert_int_equal(d->min, 300);
	assert_int_equal(d->max, 5023);
	assert_int_equal(hist_percentile(d, 50), 300);
	assert_int_equal(hist_percentile(d, 100), 5023);	/* = d->max */

	/* a new overall max and min in the interval are exact */
	hist_snapshot(prev, h);
	hist_add(h, 2000000);
	hist_add(h, 3);
	hist_snapshot(cur, h);
	hist_diff(d, cur, prev);
	assert_int_equal(d->n, 2);
	assert_int_equal(d->min, 3);
	assert_int_equal(d->max, 2000000);
	assert_int_equal(hist_percentile(d, 100), 2000000);

	/* an empty interval */
	hist_diff(d, cur, cur);
	assert_int_equal(d->n, 0);
	assert_int_equal(d->sum, 0);
	assert_int_equal(d->min, UINT64_MAX);
	assert_int_equal(d->max, 0);
	assert_int_equal(hist_percentile(d, 99), 0);

	/* diff against an empty histogram is the histogram itself */
	hist_init(prev);
	hist_diff(d, cur, prev);
	assert_memory_equal(d->count, cur->count, sizeof(d->count));
	assert_int_equal(d->n, cur->n);
	assert_int_equal(d->min, cur->min);
	assert_int_equal(d->max, cur->max);

	/* a snapshot racing the writer: a count seen, its max not yet; the
	 * bounds stay inside the buckets */
	hist_init(prev);
	hist_init(cur);
	hist_add(cur, 5000);
	cur->min = 6000;
	cur->max = 4000;
	hist_diff(d, cur, prev);
	assert_int_equal(d->min, 4992);
	assert_int_equal(d->max, 5023);
	free(h);
	free(prev);
	free(cur);
	free(d);
	free(want);
}

static void test_overflow(void **state)
{
	struct hist *h = hnew();

	(void)state;
	hist_add(h, UINT64_MAX / 4);
	hist_add(h, 0);
	assert_int_equal(h->count[HIST_BUCKETS - 1], 1);
	assert_int_equal(h->count[HIST_MIN_NS], 1);
	assert_int_equal(h->min, HIST_MIN_NS);
	assert_int_equal(h->max, UINT64_MAX / 4);
	assert_true(hist_percentile(h, 100) <= UINT64_MAX / 4);
	free(h);
}

/* A request the clock saw take 0 ns (it began and ended within one step
 * of a TSC that moves in 10 ns steps) took time: it is recorded as
 * HIST_MIN_NS, and no figure made of the histogram is 0: not the min,
 * not a percentile, not an interval's min, not the mean. */
static void test_below_resolution(void **state)
{
	struct hist *h = hnew(), *prev = hnew(), *acc = hnew();
	uint64_t sum;

	(void)state;
	for (int i = 0; i < 99; i++)
		hist_add(h, 0);
	hist_add(h, 40);
	assert_int_equal(h->n, 100);
	assert_int_equal(h->min, HIST_MIN_NS);
	assert_int_equal(h->count[0], 0);
	assert_int_equal(h->sum, 99 * HIST_MIN_NS + 40);
	assert_true(hist_percentile(h, 0) >= 1);
	assert_true(hist_percentile(h, 50) >= 1);
	assert_true(hist_mean(h) >= 1.0);
	assert_int_equal(hist_advance(acc, prev, h, &sum), 100);
	assert_true(acc->min >= 1);
	assert_true(hist_percentile(acc, 1) >= 1);
	free(h);
	free(prev);
	free(acc);
}

/* hist_take + hist_commit (the sampler takes at the sampling moment,
 * adds up in the row): what was taken, not what the writer added after;
 * a second take replaces the first; a commit without a take adds nothing
 * and leaves @prev alone; the next interval starts where the take was. */
static void test_stage(void **state)
{
	struct hist *w = hnew(), *prev = hnew(), *acc = hnew(), *want = hnew(), *at = hnew(), *d = hnew();
	struct hist_stage sg = { 0 };
	uint64_t sum;

	(void)state;
	for (int k = 0; k < 300; k++)
		hist_add(w, 100 + (uint64_t)k * 997);
	hist_snapshot(at, w);
	assert_int_equal(hist_take(&sg, prev, w), 0);
	/* Written after the take: the next interval's. */
	for (int k = 0; k < 50; k++)
		hist_add(w, 5000000 + (uint64_t)k);
	assert_int_equal(hist_commit(acc, prev, &sg, &sum), 300);
	assert_int_equal(acc->n, 300);
	assert_int_equal(sum, at->sum);
	assert_memory_equal(acc->count, at->count, sizeof(acc->count));
	assert_true(acc->max < 5000000);
	/* Committed once: a second commit adds nothing. */
	assert_int_equal(hist_commit(acc, prev, &sg, &sum), 0);
	assert_int_equal(sum, 0);
	/* The next interval: the 50, and a take repeated before its commit. */
	hist_clear(acc);
	assert_int_equal(hist_take(&sg, prev, w), 0);
	hist_add(w, 7);
	assert_int_equal(hist_take(&sg, prev, w), 0);
	assert_int_equal(hist_commit(acc, prev, &sg, &sum), 51);
	hist_diff(d, w, at);
	assert_memory_equal(acc->count, d->count, sizeof(acc->count));
	assert_int_equal(acc->min, d->min);
	assert_int_equal(acc->max, d->max);
	/* Nothing new: taken empty, adds nothing, prev unchanged. */
	hist_clear(acc);
	hist_snapshot(want, prev);
	assert_int_equal(hist_take(&sg, prev, w), 0);
	assert_int_equal(hist_commit(acc, prev, &sg, &sum), 0);
	assert_int_equal(acc->n, 0);
	assert_memory_equal(prev->count, want->count, sizeof(want->count));
	hist_stage_free(&sg);
	free(w);
	free(prev);
	free(acc);
	free(want);
	free(at);
	free(d);
}

/* hist_advance (the sampler's one pass, issue 27) agrees with the
 * snapshot, diff and merge it replaces: the same interval histograms,
 * counts, sums and bounds, interval after interval, for two writers
 * merged into one interval; and hist_clear empties what it filled. */
static void test_advance(void **state)
{
	struct hist *w[2] = { hnew(), hnew() }, *prev[2] = { hnew(), hnew() };
	struct hist *snap[2] = { hnew(), hnew() }, *old[2] = { hnew(), hnew() };
	struct hist *acc = hnew(), *want = hnew(), *d = hnew(), *empty = hnew();
	uint64_t x = 12345;

	(void)state;
	for (int round = 0; round < 6; round++) {
		uint64_t n = 0, sum;

		/* Round 2 adds nothing at all: an idle interval. */
		for (int k = 0; round != 2 && k < 500; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			/* Values from 50 ns to about 2^(20+round) ns. */
			hist_add(w[k & 1], 50 + ((x >> 33) % (1ull << (20 + round))));
		}
		hist_clear(acc);
		hist_init(want);
		for (int t = 0; t < 2; t++) {
			hist_snapshot(snap[t], w[t]);
			hist_diff(d, snap[t], old[t]);
			hist_merge(want, d);
			hist_snapshot(old[t], w[t]);
			n += hist_advance(acc, prev[t], w[t], &sum);
			assert_int_equal(sum, d->sum);
		}
		assert_int_equal(n, want->n);
		assert_int_equal(acc->n, want->n);
		assert_int_equal(acc->sum, want->sum);
		assert_memory_equal(acc->count, want->count, sizeof(acc->count));
		assert_int_equal(acc->min, want->min);
		assert_int_equal(acc->max, want->max);
		assert_int_equal(hist_percentile(acc, 99), hist_percentile(want, 99));
	}
	/* Cleared: as empty as hist_init leaves a histogram. */
	hist_clear(acc);
	assert_memory_equal(acc, empty, sizeof(*acc));
	/* A writer that has recorded nothing adds nothing. */
	{
		uint64_t sum = 1;

		hist_init(w[0]);
		hist_init(prev[0]);
		assert_int_equal(hist_advance(acc, prev[0], w[0], &sum), 0);
		assert_int_equal(sum, 0);
		assert_memory_equal(acc, empty, sizeof(*acc));
	}
	for (int t = 0; t < 2; t++) {
		free(w[t]);
		free(prev[t]);
		free(snap[t]);
		free(old[t]);
	}
	free(acc);
	free(want);
	free(d);
	free(empty);
}


/* A histogram hist_add filled: counts, and no group sums. */
static void assert_no_groups(const struct hist *h)
{
	for (unsigned g = 0; g < HIST_GROUPS; g++)
		assert_int_equal(h->group[g], 0);
}

/* The bucket of rank @rank, walking every bucket from the first. */
static unsigned rank_walk(const struct hist *h, uint64_t rank)
{
	uint64_t seen = 0;

	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (h->count[b] && seen >= rank)
			return b;
	}
	return HIST_BUCKETS;
}

/* The groups' sums, which let a reader skip what did not change, stay
 * those of their buckets through every way a histogram is made; an
 * interval whose values all lie below the run's old maximum is taken
 * whole (the reader stops at the last count n says is new, not
 * before); and percentiles found by skipping groups are the bucket
 * walk's. */
static void test_groups(void **state)
{
	struct hist *w = hnew(), *prev = hnew(), *acc = hnew(), *snap = hnew(), *old = hnew();
	struct hist *d = hnew(), *m = hnew(), *u = hnew();
	void *buf = malloc(sizeof(struct hist) * 2);

	(void)state;
	assert_non_null(buf);
	hist_add(w, 5000000);		/* an outlier far above the rest */
	for (int round = 0; round < 5; round++) {
		uint64_t sum, n;

		for (int k = 0; k < 300; k++)
			hist_add(w, 1000 + rnd() % (3000u << round));
		assert_no_groups(w);
		hist_clear(acc);
		hist_snapshot(snap, w);
		assert_groups(snap);
		hist_diff(d, snap, old);
		assert_groups(d);
		hist_snapshot(old, w);
		n = hist_advance(acc, prev, w, &sum);
		assert_int_equal(n, d->n);
		assert_memory_equal(acc->count, d->count, sizeof(d->count));
		assert_groups(acc);
		assert_groups(prev);
		hist_merge(m, d);
		assert_groups(m);
		assert_int_equal(hist_unpack(u, buf, hist_pack(m, buf)), hist_pack(m, NULL));
		assert_groups(u);
		for (double p = 0; p <= 100; p += 0.5) {
			uint64_t rank = (uint64_t)(p * (double)acc->n / 100.0 + 0.999999);
			uint64_t v = hist_percentile(acc, p);

			rank = rank < 1 ? 1 : rank > acc->n ? acc->n : rank;
			assert_true(v >= hist_bucket_low(rank_walk(acc, rank)) &&
				    v <= hist_bucket_high(rank_walk(acc, rank)));
			/* The worker's own, without group sums: the same. */
			rank = (uint64_t)(p * (double)w->n / 100.0 + 0.999999);
			rank = rank < 1 ? 1 : rank > w->n ? w->n : rank;
			v = hist_percentile(w, p);
			assert_true(v >= hist_bucket_low(rank_walk(w, rank)) &&
				    v <= hist_bucket_high(rank_walk(w, rank)));
		}
	}
	hist_clear(acc);
	assert_groups(acc);
	/* A merge of the worker's sums its groups from its buckets; a clear
	 * of it leaves no count behind. */
	hist_init(m);
	hist_merge(m, w);
	assert_groups(m);
	assert_memory_equal(m->count, w->count, sizeof(w->count));
	hist_clear(w);
	hist_init(m);
	assert_memory_equal(w->count, m->count, sizeof(w->count));
	assert_int_equal(w->n, 0);
	free(buf);
	free(w);
	free(prev);
	free(acc);
	free(snap);
	free(old);
	free(d);
	free(m);
	free(u);
}

/* A worker's ring (what the sampler reads each interval): interval
 * after interval, what hist_ring_commit adds is exactly the interval's
 * difference of the worker's histogram, whether its values fit the ring,
 * overflowed it into the spill (a fast worker) or were too large for it;
 * and the interval's extremes are the values' own where none spilled. */
static void ring_case(bool push)
{
	struct hist *w = hnew(), *at = hnew(), *now = hnew(), *d = hnew(), *acc = hnew(), *prev = hnew();
	struct hist_ring *r = calloc(1, sizeof(*r));
	struct hist_stage sg = { 0 };
	const unsigned per[] = { 0, 1, 100, HIST_RING, HIST_RING + 1, 3 * HIST_RING + 7, 5, 0, 40 };

	assert_non_null(r);
	hist_ring_attach(w, r, push);
	/* Without push the worker's histogram is left alone: no ring. */
	assert_true(push ? w->ring == r : w->ring == NULL);
	for (unsigned k = 0; k < sizeof(per) / sizeof(per[0]); k++) {
		uint64_t sum, max, want_max = 0, want_min = UINT64_MAX;

		for (unsigned i = 0; i < per[k]; i++) {
			uint64_t v = rnd() % 10 ? 1000 + rnd() % 3000 : rnd() % 5000000;

			if (k == 5 && i == 3)
				v = (1ull << 33) + 5;	/* over UINT32_MAX ns */
			hist_add(w, v);
			want_max = v > want_max ? v : want_max;
			want_min = v < want_min ? v : want_min;
		}
		assert_int_equal(hist_ring_take(&sg, prev, r), 0);
		/* After the take: the next interval's. */
		hist_snapshot(now, w);
		hist_add(w, 77);
		hist_clear(acc);
		assert_int_equal(hist_ring_commit(acc, prev, &sg, r, &sum, &max), per[k]);
		hist_diff(d, now, at);
		assert_int_equal(acc->n, per[k]);
		assert_int_equal(sum, d->sum);
		assert_memory_equal(acc->count, d->count, sizeof(acc->count));
		assert_memory_equal(acc->group, d->group, sizeof(acc->group));
		if (push && per[k] && per[k] <= HIST_RING && k != 5) {
			/* Exact: every value in the ring. */
			assert_int_equal(max, want_max);
			assert_int_equal(acc->max, want_max);
			assert_int_equal(acc->min, want_min);
		} else if (per[k]) {
			assert_true(max >= want_max && max <= hist_bucket_high(hist_bucket(want_max)));
		}
		/* The 77 belongs to the next interval: take it now. */
		hist_snapshot(at, now);
		assert_int_equal(hist_ring_take(&sg, prev, r), 0);
		hist_clear(acc);
		assert_int_equal(hist_ring_commit(acc, prev, &sg, r, &sum, &max), 1);
		assert_int_equal(max, 77);
		hist_snapshot(at, w);
	}
	/* Nothing new: nothing added, the cursor where it was. */
	{
		uint64_t sum, max;

		assert_int_equal(hist_ring_take(&sg, prev, r), 0);
		hist_clear(acc);
		assert_int_equal(hist_ring_commit(acc, prev, &sg, r, &sum, &max), 0);
		assert_int_equal(acc->n, 0);
		assert_int_equal(r->read, r->seq);
	}
	hist_stage_free(&sg);
	free(r);
	free(w);
	free(at);
	free(now);
	free(d);
	free(acc);
	free(prev);
}

static void test_ring(void **state)
{
	(void)state;
	ring_case(true);
}

/* The same reader, for a worker that appends nothing (few threads):
 * it diffs the worker's histogram itself, and gets the same intervals. */
static void test_ring_unpushed(void **state)
{
	(void)state;
	ring_case(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_tile),
		cmocka_unit_test(test_bucket_edges),
		cmocka_unit_test(test_add_bucket),
		cmocka_unit_test(test_bucket_width),
		cmocka_unit_test(test_percentile_error_sweep),
		cmocka_unit_test(test_percentile_rank),
		cmocka_unit_test(test_percentile_known),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_snapshot),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_advance),
		cmocka_unit_test(test_stage),
		cmocka_unit_test(test_below_resolution),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_ring_unpushed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
