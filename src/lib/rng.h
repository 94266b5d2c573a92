/*
 * rng.h - the small pseudo-random helpers several modules share:
 * splitmix64 (Steele, Lea, Flood 2014) to seed and to fill, and a
 * rotate for the xoshiro/xoroshiro generators built on it.
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

#endif
