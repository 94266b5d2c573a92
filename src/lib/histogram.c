/*
 * histogram.c - the log-linear latency histogram; see histogram.h.
 *
 * Bucket layout (HIST_SUB = 128):
 *   b < 128:   exactly the value b (width 1).
 *   b >= 128:  shift = b/128 - 1, k = 128 + b%128, values
 *              [k << shift, ((k + 1) << shift) - 1] (width 2^shift,
 *              at most 1/128 of the value).
 * The last bucket also takes every value past 2^(HIST_MAX_EXP+1) - 1.
 *
 * Everything here runs in the sampler or the writers, never on the I/O
 * path; only hist_add (inline in the header) is hot.
 */
#include "lib/histogram.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t hist_bucket_low(unsigned b)
{
	unsigned shift;

	if (b < HIST_SUB)
		return b;
	if (b >= HIST_BUCKETS)
		b = HIST_BUCKETS - 1;
	shift = (b >> HIST_SUB_BITS) - 1;
	return (uint64_t)(HIST_SUB + (b & (HIST_SUB - 1))) << shift;
}

/* A bucket above the exact ones spans 2^shift values from its low bound. */
uint64_t hist_bucket_high(unsigned b)
{
	if (b < HIST_SUB)
		return b;
	if (b >= HIST_BUCKETS)
		b = HIST_BUCKETS - 1;
	return hist_bucket_low(b) + (1ull << ((b >> HIST_SUB_BITS) - 1)) - 1;
}

/*
 * The writer bumps a bucket before n, so a snapshot's n is recomputed
 * from the buckets it actually copied: percentiles then always find
 * their rank. sum, min and max may be a request ahead or behind; that is
 * the "consistent enough" of the header.
 */
void hist_snapshot(struct hist *dst, const struct hist *src)
{
	uint64_t n = 0;

	memset(dst->group, 0, sizeof(dst->group));
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		dst->count[b] = HIST_LOAD(&src->count[b]);
		dst->group[b >> HIST_GROUP_BITS] += dst->count[b];
		n += dst->count[b];
	}
	dst->n = n;
	dst->sum = HIST_LOAD(&src->sum);
	dst->min = HIST_LOAD(&src->min);
	dst->max = HIST_LOAD(&src->max);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	/* The groups summed again from the buckets: either may be a
	 * worker's, which has none (HIST_GROUP_BITS). */
	for (unsigned g = 0; g < HIST_GROUPS; g++) {
		uint64_t n = 0;

		for (unsigned b = g << HIST_GROUP_BITS; b < (g + 1) << HIST_GROUP_BITS; b++) {
			dst->count[b] += src->count[b];
			n += dst->count[b];
		}
		dst->group[g] = n;
	}
	dst->n += src->n;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

/*
 * The exact min and max of an interval are not recoverable from two
 * cumulative histograms, so they are bounded by buckets: max is the high
 * bound of the highest bucket that gained samples, min the low bound of
 * the lowest, each tightened by the cumulative max/min when that lies in
 * the same bucket (then it is the exact extreme whenever the cumulative
 * extreme was set in this interval). The error is at most one bucket
 * width, under 1 %.
 */
void hist_diff(struct hist *out, const struct hist *cur, const struct hist *prev)
{
	unsigned lo = HIST_BUCKETS, hi = 0;
	uint64_t n = 0;

	memset(out->group, 0, sizeof(out->group));
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		uint64_t c = cur->count[b], p = prev->count[b];

		/* Counts only grow; a smaller current one means @prev is not
		 * an earlier snapshot of the same histogram. Count nothing. */
		out->count[b] = c > p ? c - p : 0;
		out->group[b >> HIST_GROUP_BITS] += out->count[b];
		if (out->count[b]) {
			if (lo == HIST_BUCKETS)
				lo = b;
			hi = b;
			n += out->count[b];
		}
	}
	out->n = n;
	out->sum = cur->sum > prev->sum ? cur->sum - prev->sum : 0;
	if (!n) {
		out->min = UINT64_MAX;
		out->max = 0;
		return;
	}
	out->min = hist_bucket_low(lo);
	if (cur->min > out->min && cur->min <= hist_bucket_high(lo))
		out->min = cur->min;
	out->max = hist_bucket_high(hi);
	if (cur->max < out->max && cur->max >= hist_bucket_low(hi))
		out->max = cur->max;
}

/* The bucket holding the sample of rank @rank walking the buckets from
 * @b, for a histogram without group sums (a worker's). */
static unsigned rank_walk(const struct hist *h, unsigned b, uint64_t rank)
{
	uint64_t seen = 0;
	unsigned last = 0;

	for (; b < HIST_BUCKETS; b++) {
		if (!h->count[b])
			continue;
		seen += h->count[b];
		last = b;
		if (seen >= rank)
			return b;
	}
	return last;
}

/* The bucket holding the sample of rank @rank: whole groups skipped by
 * their sums, from the group of the lowest value (none below it). */
static unsigned rank_bucket(const struct hist *h, uint64_t rank)
{
	unsigned g = h->min != UINT64_MAX ? hist_bucket(h->min) >> HIST_GROUP_BITS : 0, last = 0;
	uint64_t seen = 0;
	bool any = false;

	for (; g < HIST_GROUPS; g++) {
		if (!h->group[g])
			continue;
		any = true;
		if (seen + h->group[g] < rank) {
			seen += h->group[g];
			last = g;
			continue;
		}
		for (unsigned b = g << HIST_GROUP_BITS; b < (g + 1) << HIST_GROUP_BITS; b++) {
			seen += h->count[b];
			if (h->count[b] && seen >= rank)
				return b;
		}
		last = g;
	}
	if (!any)
		return rank_walk(h, h->min != UINT64_MAX ? hist_bucket(h->min) : 0, rank);
	/* n larger than the buckets hold: the highest non-empty bucket. */
	for (unsigned b = (last + 1) << HIST_GROUP_BITS; b-- > last << HIST_GROUP_BITS;)
		if (h->count[b])
			return b;
	return 0;
}

/*
 * The sample of rank ceil(p/100 * n) (at least 1): walk the buckets to
 * the one holding it and answer its midpoint, clamped to the observed
 * [min, max]. The first and last samples answer min and max themselves
 * (when those lie in the bucket found), so p0 and p100 are exact.
 */
/* The rank of percentile @p (0..100) among @n samples: ceil(p/100 * n),
 * within [1, n]. */
static uint64_t pct_rank(uint64_t n, double p)
{
	uint64_t rank;
	double r;

	if (p < 0)
		p = 0;
	if (p > 100)
		p = 100;
	/* p * n first: exact for integer p, so p=7, n=100 is rank 7 and not
	 * 8 from 0.07 * 100 = 7.000000000000001. The slack absorbs the
	 * rounding of fractional p (99.9). */
	r = p * (double)n / 100.0;
	rank = (uint64_t)r;
	if ((double)rank < r - 1e-9 * r)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return rank;
}

/* What a percentile answers for the sample of rank @rank of @n, which
 * lies in bucket @b: the extremes themselves where they lie in it, else
 * the bucket's midpoint clamped to [min, max]. */
static uint64_t pct_answer(unsigned b, uint64_t rank, uint64_t n, uint64_t min, uint64_t max)
{
	uint64_t v;

	/* The extremes are known exactly. */
	if (rank == n && max >= hist_bucket_low(b) && max <= hist_bucket_high(b))
		return max;
	if (rank == 1 && min >= hist_bucket_low(b) && min <= hist_bucket_high(b))
		return min;
	v = hist_bucket_low(b) + (hist_bucket_high(b) - hist_bucket_low(b)) / 2;
	if (v < min)
		v = min;
	if (v > max)
		v = max;
	return v;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t rank;

	if (!h->n)
		return 0;
	rank = pct_rank(h->n, p);
	return pct_answer(rank_bucket(h, rank), rank, h->n, h->min, h->max);
}

double hist_mean(const struct hist *h)
{
	return h->n ? (double)h->sum / (double)h->n : 0.0;
}

/* Header: n, sum, min, max, number of pairs; a pair: bucket (u32 held
 * in a u64, so every field stays 8-byte sized) and count. */
#define PACK_HEAD 5
#define PACK_PAIR 2

size_t hist_pack(const struct hist *h, void *buf)
{
	uint64_t head[PACK_HEAD] = { h->n, h->sum, h->min, h->max, 0 };
	unsigned char *o = buf;
	size_t off = sizeof(head);

	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		uint64_t pair[PACK_PAIR] = { b, h->count[b] };

		if (!h->count[b])
			continue;
		if (o)
			memcpy(o + off, pair, sizeof(pair));
		off += sizeof(pair);
		head[4]++;
	}
	if (o)
		memcpy(o, head, sizeof(head));
	return off;
}

size_t hist_unpack(struct hist *h, const void *buf, size_t len)
{
	const unsigned char *in = buf;
	uint64_t head[PACK_HEAD];
	size_t off = sizeof(head);

	if (len < sizeof(head))
		return 0;
	memcpy(head, in, sizeof(head));
	if (head[4] > HIST_BUCKETS || len - off < head[4] * PACK_PAIR * sizeof(uint64_t))
		return 0;
	memset(h->count, 0, sizeof(h->count));
	memset(h->group, 0, sizeof(h->group));
	h->n = head[0];
	h->sum = head[1];
	h->min = head[2];
	h->max = head[3];
	for (uint64_t i = 0; i < head[4]; i++) {
		uint64_t pair[PACK_PAIR];

		memcpy(pair, in + off, sizeof(pair));
		off += sizeof(pair);
		if (pair[0] >= HIST_BUCKETS)
			return 0;
		h->count[pair[0]] = pair[1];
		h->group[pair[0] >> HIST_GROUP_BITS] += pair[1];
	}
	return off;
}

/* Both arrays of @sg to @cap entries, their contents kept. */
static int stage_resize(struct hist_stage *sg, unsigned cap)
{
	uint32_t *nb = realloc(sg->bucket, cap * sizeof(*nb));
	uint64_t *nc;

	if (!nb)
		return -ENOMEM;
	sg->bucket = nb;
	nc = realloc(sg->count, cap * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	sg->count = nc;
	sg->cap = cap;
	return 0;
}

static int stage_grow(struct hist_stage *sg)
{
	return stage_resize(sg, sg->cap ? 2 * sg->cap : 32);
}

/* Bucket @b of @src into @sg when it grew since @prev; *@got counts. */
static int take_bucket(struct hist_stage *sg, const struct hist *prev, const struct hist *src,
		       unsigned b, uint64_t *got)
{
	uint64_t c = HIST_LOAD(&src->count[b]);

	if (c <= prev->count[b])
		return 0;
	*got += c - prev->count[b];
	if (sg->n == sg->cap && stage_grow(sg) < 0) {
		sg->n = 0;
		return -ENOMEM;
	}
	sg->bucket[sg->n] = b;
	sg->count[sg->n++] = c;
	return 0;
}

/* hist_take, for @src with group sums (@grouped: a ring's spill, which
 * hist_ring_push keeps them for) or without (a worker's histogram,
 * walked bucket by bucket between its extremes). */
static int take(struct hist_stage *sg, const struct hist *prev, const struct hist *src, bool grouped)
{
	/* n first: the writer stores it after the bucket (and the group). */
	uint64_t n = HIST_LOAD(&src->n), min = HIST_LOAD(&src->min), max = HIST_LOAD(&src->max);
	uint64_t want = n > prev->n ? n - prev->n : 0, got = 0;

	sg->n = 0;
	sg->taken = false;
	if (min == UINT64_MAX || max < min)
		return 0;		/* nothing recorded yet */
	for (unsigned g = hist_bucket(min) >> HIST_GROUP_BITS, g1 = hist_bucket(max) >> HIST_GROUP_BITS;
	     g <= g1 && (!want || got < want); g++) {
		if (grouped && HIST_LOAD(&src->group[g]) <= prev->group[g])
			continue;
		for (unsigned b = g << HIST_GROUP_BITS; b < (g + 1) << HIST_GROUP_BITS; b++)
			if (take_bucket(sg, prev, src, b, &got) < 0)
				return -ENOMEM;
	}
	sg->sum = HIST_LOAD(&src->sum);
	sg->min = min;
	sg->max = max;
	sg->taken = true;
	return 0;
}

int hist_take(struct hist_stage *sg, const struct hist *prev, const struct hist *src)
{
	return take(sg, prev, src, false);
}

uint64_t hist_commit(struct hist *acc, struct hist *prev, struct hist_stage *sg, uint64_t *sum)
{
	uint64_t n = 0;

	*sum = 0;
	if (!sg->taken)
		return 0;
	sg->taken = false;
	for (unsigned i = 0; i < sg->n; i++) {
		const unsigned b = sg->bucket[i];
		const uint64_t d = sg->count[i] - prev->count[b];

		acc->count[b] += d;
		acc->group[b >> HIST_GROUP_BITS] += d;
		prev->count[b] = sg->count[i];
		prev->group[b >> HIST_GROUP_BITS] += d;
		n += d;
	}
	*sum = sg->sum > prev->sum ? sg->sum - prev->sum : 0;
	prev->sum = sg->sum;
	prev->n += n;
	prev->min = sg->min;
	prev->max = sg->max;
	if (!n)
		return 0;
	acc->n += n;
	acc->sum += *sum;
	/* As hist_diff: the bucket bounds, made exact where the run's own
	 * extreme lies in the interval's extreme bucket. */
	{
		const unsigned lo = sg->bucket[0], hi = sg->bucket[sg->n - 1];
		uint64_t lo_v = hist_bucket_low(lo), hi_v = hist_bucket_high(hi);

		if (sg->min > lo_v && sg->min <= hist_bucket_high(lo))
			lo_v = sg->min;
		if (sg->max < hi_v && sg->max >= hist_bucket_low(hi))
			hi_v = sg->max;
		if (lo_v < acc->min)
			acc->min = lo_v;
		if (hi_v > acc->max)
			acc->max = hi_v;
	}
	return n;
}

int hist_stage_reserve(struct hist_stage *sg, unsigned cap)
{
	if (cap <= sg->cap)
		return 0;
	if (stage_resize(sg, cap) < 0)
		return -ENOMEM;
	memset(sg->bucket, 0, cap * sizeof(*sg->bucket));
	memset(sg->count, 0, cap * sizeof(*sg->count));
	return 0;
}

void hist_stage_free(struct hist_stage *sg)
{
	free(sg->bucket);
	free(sg->count);
	memset(sg, 0, sizeof(*sg));
}

uint64_t hist_stage_max(const struct hist_stage *sg)
{
	unsigned hi;
	uint64_t v;

	if (!sg->n)
		return 0;
	hi = sg->bucket[sg->n - 1];
	v = hist_bucket_high(hi);
	if (sg->max < v && sg->max >= hist_bucket_low(hi))
		v = sg->max;
	return v;
}

uint64_t hist_advance(struct hist *acc, struct hist *prev, const struct hist *src, uint64_t *sum)
{
	struct hist_stage sg = { 0 };
	uint64_t n = 0;

	*sum = 0;
	if (hist_take(&sg, prev, src) == 0)
		n = hist_commit(acc, prev, &sg, sum);
	hist_stage_free(&sg);
	return n;
}

void hist_clear(struct hist *h)
{
	if (h->n && h->min != UINT64_MAX && h->max >= h->min) {
		unsigned b0 = hist_bucket(h->min), b1 = hist_bucket(h->max);

		/* Only the groups that hold counts: one outlier would
		 * otherwise make every row clear thousands of buckets. */
		bool any = false;

		for (unsigned g = b0 >> HIST_GROUP_BITS; g <= b1 >> HIST_GROUP_BITS; g++) {
			if (!h->group[g])
				continue;
			memset(&h->count[g << HIST_GROUP_BITS], 0, sizeof(h->count[0]) << HIST_GROUP_BITS);
			h->group[g] = 0;
			any = true;
		}
		/* A worker's: counts without group sums. */
		if (!any)
			memset(&h->count[b0], 0, sizeof(h->count[0]) * (b1 - b0 + 1));
	} else if (h->n) {
		memset(h->count, 0, sizeof(h->count));
		memset(h->group, 0, sizeof(h->group));
	}
	h->n = h->sum = h->max = 0;
	h->min = UINT64_MAX;
}

void hist_ring_push(struct hist_ring *r, uint64_t v, unsigned b)
{
	uint64_t seq = HIST_LOAD(&r->seq);

	if (__builtin_expect(seq - __atomic_load_n(&r->read, __ATOMIC_ACQUIRE) < HIST_RING &&
			     v <= UINT32_MAX, 1)) {
		HIST_STORE(&r->v[seq % HIST_RING], (uint32_t)v);
		/* Release: a reader that sees the count finds the value. */
		__atomic_store_n(&r->seq, seq + 1, __ATOMIC_RELEASE);
		return;
	}
	HIST_STORE(&r->spill.count[b], HIST_LOAD(&r->spill.count[b]) + 1);
	HIST_STORE(&r->spill.group[b >> HIST_GROUP_BITS], HIST_LOAD(&r->spill.group[b >> HIST_GROUP_BITS]) + 1);
	HIST_STORE(&r->spill.sum, HIST_LOAD(&r->spill.sum) + v);
	__atomic_store_n(&r->spill.n, HIST_LOAD(&r->spill.n) + 1, __ATOMIC_RELEASE);
}

void hist_ring_attach(struct hist *h, struct hist_ring *r, bool push)
{
	/* Only the spill's header: its buckets stay untouched (zero) pages
	 * until a worker spills into them. Its extremes are not kept
	 * (hist_ring_push): hist_take then walks its groups from the
	 * first, as far as the counts its n says are new. */
	r->seq = r->read = 0;
	r->spill.n = r->spill.sum = r->spill.min = 0;
	r->spill.max = UINT64_MAX;
	r->spill.ring = NULL;
	r->diff = push ? &r->spill : h;
	h->ring = push ? r : NULL;
}

int hist_ring_take(struct hist_stage *sg, const struct hist *prev_spill, const struct hist_ring *r)
{
	sg->seq = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
	sg->seq_taken = true;
	if (__atomic_load_n(&r->diff->n, __ATOMIC_ACQUIRE) != sg->spill_n)
		return take(sg, prev_spill, r->diff, r->diff == &r->spill);
	sg->n = 0;
	sg->taken = false;
	return 0;
}

uint64_t hist_ring_commit(struct hist *acc, struct hist *prev_spill, struct hist_stage *sg,
			  struct hist_ring *r, uint64_t *sum, uint64_t *max)
{
	uint64_t rd = HIST_LOAD(&r->read), n = 0, s = 0, lo = UINT64_MAX, hi = 0, spill_sum;

	*sum = *max = 0;
	if (!sg->seq_taken)
		return 0;
	sg->seq_taken = false;
	/* Plain adds: @acc is the reader's own. Not hist_add, whose
	 * single-writer stores and extremes' branches made this loop a
	 * row's largest part. */
	for (uint64_t i = rd; i < sg->seq; i++) {
		uint64_t v = HIST_LOAD(&r->v[i % HIST_RING]);
		unsigned b = hist_bucket(v);

		acc->count[b]++;
		acc->group[b >> HIST_GROUP_BITS]++;
		s += v;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	n = sg->seq - rd;
	/* Release: the worker reuses these slots only after it sees this. */
	__atomic_store_n(&r->read, sg->seq, __ATOMIC_RELEASE);
	acc->n += n;
	acc->sum += s;
	if (n && lo < acc->min)
		acc->min = lo;
	if (hi > acc->max)
		acc->max = hi;
	if (sg->taken) {
		uint64_t sn = hist_commit(acc, prev_spill, sg, &spill_sum);

		sg->spill_n = prev_spill->n;
		if (sn) {
			n += sn;
			s += spill_sum;
			if (hist_stage_max(sg) > hi)
				hi = hist_stage_max(sg);
		}
	}
	*sum = s;
	*max = hi;
	return n;
}
