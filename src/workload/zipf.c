/*
 * zipf.c - zipf ranks by rejection-inversion and the keyed scatter of
 * ranks over a region (gen_perm); why these, in gen.c's header.
 * Split from gen.c along its seam: nothing here knows of targets or
 * passes.
 */
#include "workload/zipf.h"
#include "lib/rng.h"

#include <math.h>

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

void zipf_init(struct zipf *z, uint64_t n, double theta, uint64_t key)
{
	z->s = theta;
	z->n = (double)n;
	z->h_x1 = zipf_hint(z, 1.5) - 1;
	z->h_n = zipf_hint(z, z->n + 0.5);
	z->s_coef = 2 - zipf_hint_inv(z, zipf_hint(z, 2.5) - zipf_h(z, 2));
	gen_perm_init(&z->perm, n, key);
}

/* A rank in [1, n], P(k) proportional to k^-s. */
uint64_t zipf_rank(const struct zipf *z, uint64_t *rng)
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
