/*
 * rng.h - the small pseudo-random helpers several modules share:
 * splitmix64 (Steele, Lea, Flood 2014) to seed and to fill, and a
 * rotate for the xoshiro/xoroshiro generators built on it, and
 * xoroshiro128+ itself with its uniform draws (gen.c, zipf.c, prio.c).
 */
#ifndef FAULTLINE_RNG_H
#define FAULTLINE_RNG_H

#include <stdint.h>

static inline uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

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

#endif
