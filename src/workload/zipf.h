/*
 * zipf.h - zipf ranks for the offset generator (zipf.c): exact
 * rejection-inversion sampling, O(1) state per target.
 */
#ifndef FAULTLINE_ZIPF_H
#define FAULTLINE_ZIPF_H

#include <stdint.h>

/*
 * The zipf scatter: a keyed bijection of [0, n), so rank r (0 = hottest)
 * lands on block gen_perm_apply(p, r) and the hot blocks are spread over
 * the region instead of packed at its start. Exposed for the tests.
 */
struct gen_perm {
	uint64_t n;
	uint64_t mask;		/* 2^bits - 1, the smallest power-of-two domain >= n */
	unsigned shift;		/* xorshift distance, about bits / 2 */
	uint64_t mul[3], add[3];
};

void gen_perm_init(struct gen_perm *p, uint64_t n, uint64_t key);
uint64_t gen_perm_apply(const struct gen_perm *p, uint64_t x);

/* Rejection-inversion state for one target; names follow Commons RNG. */
struct zipf {
	double s;		/* exponent, zipf_theta */
	double h_x1;		/* hIntegral(1.5) - 1 */
	double h_n;		/* hIntegral(n + 0.5) */
	double s_coef;		/* 2 - hIntegralInverse(hIntegral(2.5) - h(2)) */
	double n;
	struct gen_perm perm;
};

/* Ranks of [1, @n] with exponent @theta, scattered by a permutation
 * keyed with @key. */
void zipf_init(struct zipf *z, uint64_t n, double theta, uint64_t key);
/* A rank in [1, n], P(k) proportional to k^-theta. */
uint64_t zipf_rank(const struct zipf *z, uint64_t *rng);

#endif
