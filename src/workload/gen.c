/*
 * gen.c - the offset generator; semantics in gen.h.
 *
 * gen_next is on every engine's hot path: no locks, no allocation, no
 * syscalls, no division per request. Divisions happen at init and once
 * per scan piece (a shared-cursor fetch-add), never per request.
 *
 * Random numbers: xoroshiro128+ seeded through splitmix64 from the job
 * seed and the worker index, so a seed, a worker index and a config give
 * the same sequence on every run. A block index in [0, n) is Lemire's
 * multiply-shift of a 64-bit draw: no modulo, bias below n / 2^64.
 *
 * Zipf: rejection-inversion (W. Hörmann, G. Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete distributions",
 * ACM TOMACS 1996), as in Apache Commons RNG's
 * RejectionInversionZipfSampler. Chosen over Gray et al.'s method
 * (fio's, "Quickly generating billion-record synthetic databases")
 * because that one needs zeta(n, theta), a sum over all n ranks (seconds
 * for 2^30 blocks, or an approximation that skews the head), and is only
 * defined for theta != 1; rejection-inversion is exact, needs O(1) setup
 * and memory for any n up to 2^53, takes any theta > 0 including 1, and
 * costs a log and an exp per draw (about 1.1 draws per sample).
 * Ranks are then scattered over the region by a keyed bijection
 * (gen_perm) so the hot blocks are spread out, as fio hashes its ranks;
 * the key comes from the job seed alone, so every worker of a job has the
 * same hot blocks.
 */
#include "workload/gen.h"
#include "lib/rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gen_target {
	uint64_t base, len;
	uint64_t nblocks;	/* ceil(len / bs) */
	uint32_t last_len;	/* length of block nblocks-1: bs, or the short tail */

	/* Sequential: the piece (shared) or slice (partitioned) being read,
	 * relative to base: next offset and end. */
	uint64_t pos, end;
	uint64_t slice_start;	/* partitioned: this worker's slice */
	uint64_t npieces;	/* shared: pieces per pass, ceil(len / chunk) */
	struct gen_cursor *cursor;
	bool pass_end;		/* the current piece/slice ends a pass */
	bool exhausted;		/* one pass: nothing left here for this worker */

	uint64_t visit;		/* randread, fst=sequential: requests this visit */
};

/* Rejection-inversion state for one target; names follow Commons RNG. */
struct zipf {
	double s;		/* exponent, zipf_theta */
	double h_x1;		/* hIntegral(1.5) - 1 */
	double h_n;		/* hIntegral(n + 0.5) */
	double s_coef;		/* 2 - hIntegralInverse(hIntegral(2.5) - h(2)) */
	double n;
	struct gen_perm perm;
};

/* ---- random numbers ------------------------------------------------ */


/* xoroshiro128+ (Blackman, Vigna 2018; rotations 24, 16, 37). Its low
 * bits are weak; every use below takes the high ones. */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t s0 = s[0], s1 = s[1], r = s0 + s1;

	s1 ^= s0;
	s[0] = rotl64(s0, 24) ^ s1 ^ (s1 << 16);
	s[1] = rotl64(s1, 37);
	return r;
}

/* Uniform in [0, n): Lemire's multiply-shift, no division. */
static inline uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(s) * n) >> 64);
}

/* Uniform in [0, 1) from the top 53 bits. */
static inline double rng_double(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1p-53;
}

/* ---- zipf scatter: a keyed bijection of [0, n) ---------------------- */

/*
 * Each round is a bijection of [0, 2^bits): multiply by an odd number and
 * add, both mod 2^bits, then xorshift right. Values that land in
 * [n, 2^bits) walk on through the permutation until they are back below
 * n (cycle walking), which keeps it a bijection of [0, n); since
 * 2^bits < 2n that takes under two rounds on average.
 */
void gen_perm_init(struct gen_perm *p, uint64_t n, uint64_t key)
{
	unsigned bits = 1;

	while (bits < 64 && (1ull << bits) < n)
		bits++;
	p->n = n;
	p->mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
	p->shift = bits / 2 ? bits / 2 : 1;
	for (unsigned i = 0; i < 3; i++) {
		p->mul[i] = (splitmix64(&key) | 1) & p->mask;
		p->add[i] = splitmix64(&key) & p->mask;
	}
}

static inline uint64_t perm_round(const struct gen_perm *p, uint64_t x)
{
	for (unsigned i = 0; i < 3; i++) {
		x = (x * p->mul[i] + p->add[i]) & p->mask;
		x ^= x >> p->shift;
	}
	return x;
}

uint64_t gen_perm_apply(const struct gen_perm *p, uint64_t x)
{
	do
		x = perm_round(p, x);
	while (x >= p->n);
	return x;
}

/* ---- zipf ranks: rejection-inversion --------------------------------- */

/* log1p(x)/x, and its series where that cancels. */
static double helper1(double x)
{
	if (fabs(x) > 1e-8)
		return log1p(x) / x;
	return 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

/* expm1(x)/x, and its series where that cancels. */
static double helper2(double x)
{
	if (fabs(x) > 1e-8)
		return expm1(x) / x;
	return 1 + x * 0.5 * (1 + x * (1.0 / 3) * (1 + 0.25 * x));
}

/* H(x) = ((x^(1-s)) - 1) / (1 - s), or log(x) when s = 1. */
static double zipf_hint(const struct zipf *z, double x)
{
	double lx = log(x);

	return helper2((1 - z->s) * lx) * lx;
}

/* h(x) = x^-s */
static double zipf_h(const struct zipf *z, double x)
{
	return exp(-z->s * log(x));
}

static double zipf_hint_inv(const struct zipf *z, double x)
{
	double t = x * (1 - z->s);

	if (t < -1)	/* rounding; keeps log1p defined */
		t = -1;
	return exp(helper1(t) * x);
}

static void zipf_init(struct zipf *z, uint64_t n, double theta, uint64_t key)
{
	z->s = theta;
	z->n = (double)n;
	z->h_x1 = zipf_hint(z, 1.5) - 1;
	z->h_n = zipf_hint(z, z->n + 0.5);
	z->s_coef = 2 - zipf_hint_inv(z, zipf_hint(z, 2.5) - zipf_h(z, 2));
	gen_perm_init(&z->perm, n, key);
}

/* A rank in [1, n], P(k) proportional to k^-s. */
static uint64_t zipf_rank(const struct zipf *z, uint64_t *rng)
{
	for (;;) {
		/* u uniform in (h_x1, h_n] */
		double u = z->h_n + rng_double(rng) * (z->h_x1 - z->h_n);
		double x = zipf_hint_inv(z, u);
		double k = floor(x + 0.5);

		if (!(k >= 1))		/* also NaN */
			k = 1;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->s_coef || u >= zipf_hint(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k;
	}
}

/* ---- setup ----------------------------------------------------------- */

/* Partitioned: this worker's slice, both ends rounded down to bs, so the
 * slices of all workers tile the region. */
static void slice_of(const struct gen_config *c, uint64_t len, uint64_t *start, uint64_t *end)
{
	uint64_t s = (uint64_t)((unsigned __int128)len * c->worker / c->nworkers);
	uint64_t en = (uint64_t)((unsigned __int128)len * (c->worker + 1) / c->nworkers);

	s -= s % c->bs;
	if (c->worker + 1 == c->nworkers)
		en = len;
	else
		en -= en % c->bs;
	*start = s;
	*end = en;
}

int gen_init(struct gen *g, const struct gen_config *c, unsigned ntargets,
	     const struct gen_region *regions, struct gen_cursor *cursors,
	     struct err *e)
{
	bool shared = c->rw == RW_READ && c->scan == SCAN_SHARED;
	uint64_t total = 0, x;

	memset(g, 0, sizeof(*g));
	if (ntargets == 0 || ntargets > 65536)
		return err_set(e, EINVAL, "gen: %u targets (1 to 65536 allowed)", ntargets);
	if (c->bs == 0 || c->bs > UINT32_MAX)
		return err_set(e, EINVAL, "gen: bs=%llu (1 to 4g-1 allowed)",
			       (unsigned long long)c->bs);
	if (c->nworkers == 0 || c->worker >= c->nworkers)
		return err_set(e, EINVAL, "gen: worker %u of %u", c->worker, c->nworkers);
	if (shared && (!cursors || c->scan_chunk == 0))
		return err_set(e, EINVAL, "gen: scan=shared needs cursors and scan_chunk > 0");
	if (c->rw == RW_RANDREAD && c->dist == DIST_ZIPF &&
	    !(c->zipf_theta > 0 && isfinite(c->zipf_theta)))
		return err_set(e, EINVAL, "gen: zipf theta %g (must be > 0)", c->zipf_theta);
	for (unsigned i = 0; i < ntargets; i++) {
		if (regions[i].len == 0 || regions[i].base + regions[i].len < regions[i].base)
			return err_set(e, EINVAL, "gen: target %u: region of %llu bytes at %llu",
				       i, (unsigned long long)regions[i].len,
				       (unsigned long long)regions[i].base);
		total += regions[i].len;
	}

	g->c = *c;
	if (shared)	/* pieces start on request boundaries */
		g->c.scan_chunk = (c->scan_chunk + c->bs - 1) / c->bs * c->bs;
	g->ntargets = ntargets;
	g->endless = c->wrap || c->io_limit;
	g->limit = c->wrap ? 0 : c->io_limit;
	g->pass_reqs = total / c->bs + (total % c->bs != 0);
	g->live = ntargets;

	x = c->seed + (uint64_t)c->worker * 0xd1342543de82ef95ull;
	g->rng[0] = splitmix64(&x);
	g->rng[1] = splitmix64(&x);
	if (!g->rng[0] && !g->rng[1])	/* the one state xoroshiro cannot leave */
		g->rng[1] = 1;

	g->t = calloc(ntargets, sizeof(*g->t));
	if (!g->t)
		return err_set(e, ENOMEM, "gen: out of memory");
	for (unsigned i = 0; i < ntargets; i++) {
		struct gen_target *t = &g->t[i];
		uint64_t tail;

		t->base = regions[i].base;
		t->len = regions[i].len;
		t->nblocks = t->len / c->bs;
		tail = t->len - t->nblocks * c->bs;
		if (tail)
			t->nblocks++;
		t->last_len = tail ? (uint32_t)tail : (uint32_t)c->bs;
		if (shared) {
			t->cursor = &cursors[i];
			t->npieces = t->len / g->c.scan_chunk + (t->len % g->c.scan_chunk != 0);
		} else {
			slice_of(c, t->len, &t->slice_start, &t->end);
			t->pos = t->slice_start;
			t->pass_end = true;
		}
	}

	if (c->rw == RW_RANDREAD && c->dist == DIST_ZIPF) {
		struct zipf *z = calloc(ntargets, sizeof(*z));

		if (!z) {
			gen_free(g);
			return err_set(e, ENOMEM, "gen: out of memory");
		}
		/* Keyed by the job seed only: one hot set per job. */
		for (unsigned i = 0; i < ntargets; i++)
			zipf_init(&z[i], g->t[i].nblocks, c->zipf_theta,
				  c->seed ^ 0x5a1f5eedull ^ ((uint64_t)i << 32));
		g->zipf = z;
	}
	return 0;
}

void gen_free(struct gen *g)
{
	free(g->zipf);
	free(g->t);
	g->zipf = NULL;
	g->t = NULL;
	g->done = true;
}

/* ---- the hot path ---------------------------------------------------- */

static inline unsigned next_index(const struct gen *g, unsigned i)
{
	return i + 1 == g->ntargets ? 0 : i + 1;
}

static int next_random(struct gen *g, unsigned *target, uint64_t *off, uint32_t *len)
{
	struct gen_target *t;
	unsigned ti = 0;
	uint64_t b;

	if (!g->endless && g->reqs >= g->pass_reqs) {
		g->done = true;
		return 0;
	}
	if (g->ntargets > 1) {
		switch (g->c.fst) {
		case FST_ROUNDROBIN:
			ti = g->cur;
			g->cur = next_index(g, ti);
			break;
		case FST_RANDOM:
			ti = (unsigned)rng_below(g->rng, g->ntargets);
			break;
		case FST_SEQUENTIAL:
			ti = g->cur;
			if (++g->t[ti].visit == g->t[ti].nblocks) {
				g->t[ti].visit = 0;
				g->cur = next_index(g, ti);
			}
			break;
		}
	}
	t = &g->t[ti];
	if (g->zipf) {
		const struct zipf *z = (const struct zipf *)g->zipf + ti;

		b = gen_perm_apply(&z->perm, zipf_rank(z, g->rng) - 1);
	} else {
		b = rng_below(g->rng, t->nblocks);
	}
	*target = ti;
	*off = t->base + b * g->c.bs;
	*len = b + 1 == t->nblocks ? t->last_len : (uint32_t)g->c.bs;
	g->reqs++;
	g->issued += *len;
	return 1;
}

static void exhaust(struct gen *g, struct gen_target *t)
{
	t->exhausted = true;
	g->live--;
}

/*
 * Give @t a fresh piece (shared) or restart its slice (partitioned).
 * False when a one-pass worker has nothing left there.
 */
static bool seq_refill(struct gen *g, struct gen_target *t)
{
	uint64_t chunk = g->c.scan_chunk, piece;

	if (t->exhausted)
		return false;
	if (g->c.scan == SCAN_PARTITIONED) {
		if (!g->endless || t->slice_start == t->end) {
			exhaust(g, t);
			return false;
		}
		t->pos = t->slice_start;
		t->pass_end = true;
		return true;
	}
	piece = __atomic_fetch_add(&t->cursor->next, chunk, __ATOMIC_RELAXED) / chunk;
	if (piece >= t->npieces) {
		if (!g->endless) {
			exhaust(g, t);
			return false;
		}
		piece %= t->npieces;
	}
	t->pos = piece * chunk;
	t->end = t->len - t->pos < chunk ? t->len : t->pos + chunk;
	t->pass_end = piece + 1 == t->npieces;
	return true;
}

/* The next live target after @ti, or @ti itself when it is the only one. */
static unsigned next_live(const struct gen *g, unsigned ti)
{
	for (unsigned i = 0; i < g->ntargets; i++) {
		ti = next_index(g, ti);
		if (!g->t[ti].exhausted)
			break;
	}
	return ti;
}

static int next_seq(struct gen *g, unsigned *target, uint64_t *off, uint32_t *len)
{
	struct gen_target *t;
	unsigned ti;
	uint64_t left;

	for (;;) {
		if (!g->live) {
			g->done = true;
			return 0;
		}
		ti = g->cur;
		if (g->ntargets > 1) {
			switch (g->c.fst) {
			case FST_ROUNDROBIN:
				if (g->t[ti].exhausted)
					ti = next_live(g, ti);
				g->cur = next_index(g, ti);
				break;
			case FST_RANDOM:
				ti = (unsigned)rng_below(g->rng, g->ntargets);
				if (g->t[ti].exhausted)
					ti = next_live(g, ti);
				break;
			case FST_SEQUENTIAL:
				t = &g->t[ti];
				if (t->exhausted || (t->pos == t->end && t->pass_end && g->endless)) {
					/* This target's pass is over: on to the next,
					 * which the refill below starts afresh. */
					ti = next_live(g, ti);
					g->cur = ti;
				}
				break;
			}
		}
		t = &g->t[ti];
		if (t->pos < t->end || seq_refill(g, t))
			break;
	}
	left = t->end - t->pos;
	*target = ti;
	*off = t->base + t->pos;
	*len = left < g->c.bs ? (uint32_t)left : (uint32_t)g->c.bs;
	t->pos += *len;
	g->issued += *len;
	return 1;
}

int gen_next(struct gen *g, unsigned *target, uint64_t *off, uint32_t *len)
{
	if (g->done)
		return 0;
	if (g->limit && g->issued >= g->limit) {
		g->done = true;
		return 0;
	}
	if (g->c.rw == RW_RANDREAD)
		return next_random(g, target, off, len);
	return next_seq(g, target, off, len);
}
