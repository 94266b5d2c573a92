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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
/* Largest exponent kept: 2^42 ns is more than an hour; slower lands in the
 * last bucket. */
#define HIST_MAX_EXP 42
#define HIST_BUCKETS ((HIST_MAX_EXP - HIST_SUB_BITS + 2) * HIST_SUB)
/* Buckets are summed by groups of 2^HIST_GROUP_BITS (two cache lines of
 * counts): a reader that wants what changed since its last look (the
 * sampler, every interval, for thousands of jobs) compares the groups'
 * sums and reads only the buckets of the groups that moved, and a
 * percentile skips whole groups; walking every bucket between a run's
 * extremes was most of a sample's cost per job.
 *
 * Every histogram keeps them but one a worker fills with hist_add,
 * whose request loops it would cost a third cache line a request (two
 * warm mmap threads ran 1.4-3.5 % slower with it): the sampler reads a
 * worker's values from its ring and spill (hist_ring_*, which keep
 * their sums), and below ARENA_RING_THREADS diffs its few workers'
 * histograms bucket by bucket. Every function here answers alike with
 * or without them: those that skip by groups fall back to the buckets
 * where a histogram has counts but no group sums, and those that make
 * a histogram from another (snapshot, diff, merge, pack) sum its groups
 * from the buckets. */
#define HIST_GROUP_BITS 4
#define HIST_GROUPS (HIST_BUCKETS >> HIST_GROUP_BITS)

struct hist_ring;

struct hist {
	uint64_t n;
	uint64_t sum;			/* ns, for the mean */
	uint64_t min;			/* UINT64_MAX when empty */
	uint64_t max;
	/* A worker's histogram the sampler follows: every value added is
	 * also appended here (hist_ring_push). NULL for every other
	 * histogram; hist_init clears it, and no copy, merge nor diff
	 * carries it. */
	struct hist_ring *ring;
	uint64_t group[HIST_GROUPS];	/* sum of each group's counts */
	uint64_t count[HIST_BUCKETS];
};

/*
 * The values a worker recorded since its reader's last look, in order:
 * what the sampler needs each interval is those values, and finding
 * them by diffing the whole histogram against a copy of it touched
 * some 70 cold cache lines a job (the buckets that moved, in both),
 * against a few contiguous lines here. One writer (the worker) appends
 * while fewer than HIST_RING values are unread; a value that finds the
 * ring full of unread ones (a fast worker, more than HIST_RING values
 * an interval), or is over UINT32_MAX ns, goes to @spill instead, which
 * the reader diffs as before. Every value is in exactly one of the two.
 * The reader alone moves @read, once it has used the values before it.
 */
#define HIST_RING 512u
struct hist_ring {
	uint64_t seq;			/* values appended, ever (the worker's) */
	/* What the reader diffs for the values not in the ring: @spill, or,
	 * when the worker appends nothing (hist_ring_attach's @push false),
	 * the worker's whole histogram, as a reader did before rings. */
	const struct hist *diff;
	uint64_t read __attribute__((aligned(64)));	/* values used (the reader's) */
	uint32_t v[HIST_RING] __attribute__((aligned(64)));	/* ns */
	struct hist spill;
};

void hist_init(struct hist *h);

/* The bucket of @v. The branch on @v < HIST_SUB is kept: a value
 * below it (every latency of a fast engine, null's 20 ns) then costs no
 * bsr, which a branch-free form ran on every request: null, one
 * thread, at 0.92x 7c1d926 against 0.98x with the branch. */
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

/* The shortest latency recorded (ns). A request that completed took
 * time, but one that began and ended within one step of the clock reads
 * 0: the TSC of some virtual CPUs moves in 10 ns steps, and a null
 * request takes less. It is recorded as this, the unit of every output,
 * so that no figure built on a histogram shows 0 for a request done. */
#define HIST_MIN_NS 1u

/* Latencies in microseconds in a CSV cell: to the nanosecond, so that the
 * shortest (HIST_MIN_NS) does not round to 0. */
#define HIST_US_DECIMALS 3

/* Append @v (at least HIST_MIN_NS, in bucket @b) to @r: a load of the
 * reader's cursor (a line it writes once an interval), one store of the
 * value and one of the count, in sequence. When the ring is full of
 * unread values, or @v too large for it, the spill's bucket, group, sum
 * and count instead (its extremes are not kept: a reader takes a
 * spilled value's bucket bounds). A call: only the workers of a run of
 * ARENA_RING_THREADS threads or more have rings (run/arena.h), and every
 * loop that inlines hist_add would otherwise carry this too. */
void hist_ring_push(struct hist_ring *r, uint64_t v, unsigned b);

/* Single-writer add: load + store, no read-modify-write instruction.
 * @v below HIST_MIN_NS is recorded as HIST_MIN_NS. A histogram with a
 * ring appends @v to it too. It keeps no group sums, so a histogram it
 * fills is filled by it alone: one also merged or committed into would
 * hold sums of part of its counts, and its percentiles would trust
 * them. Always inlined: it runs once a request in every loop, and when
 * it grew past what the compiler inlines by itself, it became a call
 * (ten instructions a request more on a warm mmap hit, 264 against
 * 254). */
static inline __attribute__((always_inline)) void hist_add(struct hist *h, uint64_t v)
{
	unsigned b;

	if (v < HIST_MIN_NS)
		v = HIST_MIN_NS;
	b = hist_bucket(v);

	/* The bucket before n: a reader that sees n grow finds the bucket.
	 * No group sum (HIST_GROUP_BITS says why). */
	HIST_STORE(&h->count[b], HIST_LOAD(&h->count[b]) + 1);
	HIST_STORE(&h->n, HIST_LOAD(&h->n) + 1);
	HIST_STORE(&h->sum, HIST_LOAD(&h->sum) + v);
	if (v < HIST_LOAD(&h->min))
		HIST_STORE(&h->min, v);
	if (v > HIST_LOAD(&h->max))
		HIST_STORE(&h->max, v);
	if (__builtin_expect(h->ring != NULL, 0))
		hist_ring_push(h->ring, v, b);
}

/* Lowest and highest value that land in bucket @b. */
uint64_t hist_bucket_low(unsigned b);
uint64_t hist_bucket_high(unsigned b);

/* Copy @src into @dst with relaxed loads (a consistent-enough snapshot of
 * a histogram another thread is writing); dst->n is the sum of the
 * copied counts, so it always agrees with them. */
void hist_snapshot(struct hist *dst, const struct hist *src);
/* dst += src */
void hist_merge(struct hist *dst, const struct hist *src);
/* out = cur - prev, for an interval (@prev an earlier snapshot of the
 * same histogram); n is the sum of the count differences. The interval's
 * true extremes are unknown, so min is the low bound of the lowest
 * non-empty bucket of the difference, raised to cur->min when that lies
 * in the bucket, and max the high bound of the highest, lowered to
 * cur->max when that lies in the bucket: within one bucket (< 1 %) of
 * the truth, exact when the interval set a new overall extreme. An empty
 * difference has n 0, min UINT64_MAX, max 0. */
void hist_diff(struct hist *out, const struct hist *cur, const struct hist *prev);

/*
 * One interval of a histogram another thread is writing, in one pass
 * (the sampler's per-interval step): the counts @src gained
 * since @prev (an earlier state of it that only this function updates,
 * from a hist_init) are added into @acc, and @prev is brought up to
 * @src. Only the buckets between @src's min and max are visited (@src
 * is a worker's, filled by hist_add: no group sums), and no further
 * than the last that holds the counts @src's n says are new: a count
 * whose n or extremes the writer has not stored yet is taken at the
 * next call. Returns the interval's count, its sum of values in *@sum.
 */
uint64_t hist_advance(struct hist *acc, struct hist *prev, const struct hist *src, uint64_t *sum);

/*
 * hist_advance in two steps, for a reader that must take a histogram at
 * one moment and add it up later (the sampler reads every job's counters
 * and histograms at the sampling moment, then the slower sources, then
 * writes the rows: a request is in a row's counts exactly when its
 * latency is in the row's histogram). hist_take reads the buckets of
 * @src that gained counts since @prev into @sg, changing nothing else;
 * hist_commit adds them into @acc and brings @prev up to them, as
 * hist_advance does, and returns the same. A stage taken again before
 * its commit replaces the first take. hist_take is 0, or -ENOMEM when
 * @sg could not grow (it is then empty: the interval adds nothing).
 */
struct hist_stage {
	uint32_t *bucket;	/* buckets whose count grew, ascending */
	uint64_t *count;	/* their counts as read */
	unsigned n, cap;
	uint64_t sum, min, max;	/* @src's, as read */
	bool taken;
	/* hist_ring_take: the ring's count at the take */
	uint64_t seq;
	bool seq_taken;
	/* hist_ring_*: its @prev_spill's n after the last commit, so a
	 * take whose spill did not grow reads nothing of @prev_spill (a
	 * 40 KB histogram: a cold line and page a thread a sample at
	 * thousands of threads). 0 for a new stage, whose @prev_spill is
	 * empty; set again where the caller empties @prev_spill. */
	uint64_t spill_n;
};
int hist_take(struct hist_stage *sg, const struct hist *prev, const struct hist *src);
uint64_t hist_commit(struct hist *acc, struct hist *prev, struct hist_stage *sg, uint64_t *sum);
/* Room for @cap buckets, written once so that its pages are the
 * process's now: a reader that must not allocate nor fault once a run is
 * under way (the sampler) reserves HIST_BUCKETS, and hist_take then never
 * grows it. 0 or -ENOMEM. */
int hist_stage_reserve(struct hist_stage *sg, unsigned cap);
/* The largest value of the interval @sg held (its highest grown bucket's
 * bound, exact where the source's own maximum lies in that bucket, as
 * hist_commit's extremes), still valid after hist_commit; 0 when none. */
uint64_t hist_stage_max(const struct hist_stage *sg);
void hist_stage_free(struct hist_stage *sg);

/*
 * A reader of a worker's ring (the sampler), in the same two steps as
 * hist_take and hist_commit: hist_ring_take, at the sampling moment,
 * notes in @sg how many values @r holds and takes its spill's grown
 * buckets (against @prev_spill, the spill as last committed; nothing
 * read when its n did not move); hist_ring_commit adds the values
 * noted and the spill's into @acc, moves the ring's cursor and
 * @prev_spill on, and returns how many, their sum in *@sum and the
 * largest in *@max (exact, but for a spilled one's bucket bound, as
 * hist_stage_max); 0 when nothing was taken. @acc's extremes are the
 * values' own (a spilled one's bucket bound, as hist_commit's). A stage taken again
 * before its commit replaces the first take. hist_ring_take is 0 or
 * -ENOMEM as hist_take.
 */
int hist_ring_take(struct hist_stage *sg, const struct hist *prev_spill, const struct hist_ring *r);
uint64_t hist_ring_commit(struct hist *acc, struct hist *prev_spill, struct hist_stage *sg,
			  struct hist_ring *r, uint64_t *sum, uint64_t *max);
/* Make @r (zeroed memory) ready for a reader of @h. With @push, @h's
 * values are appended to it (and spilled); without, @h is left as it
 * is (hist_add pays nothing) and the reader diffs @h itself: for a
 * worker that would spill nearly every value (more than HIST_RING an
 * interval), that is a second histogram written for nothing. */
void hist_ring_attach(struct hist *h, struct hist_ring *r, bool push);

/* Empty @h as hist_init does, writing only the groups of buckets
 * between its min and max that hold counts. */
void hist_clear(struct hist *h);

/* Value at percentile @p (0..100): the sample of rank ceil(p/100 * n)
 * (at least 1) is found in its bucket and the bucket's midpoint returned,
 * clamped to [min, max]; ranks 1 and n return min and max. 0 for an
 * empty histogram. */
uint64_t hist_percentile(const struct hist *h, double p);
double hist_mean(const struct hist *h);

/* A sparse copy to send to another process (under MPI rank 0 merges the
 * ranks' histograms): n, sum, min, max, then a (bucket, count) pair per
 * non-empty bucket, native byte order. hist_pack returns the bytes it
 * wrote to @buf, or would write when @buf is NULL. hist_unpack fills @h
 * from @len bytes at @buf and returns the bytes it read, or 0 when they
 * are not a packed histogram. */
size_t hist_pack(const struct hist *h, void *buf);
size_t hist_unpack(struct hist *h, const void *buf, size_t len);

#endif
