/*
 * test_fmtnum.c - fmt_fixed writes what snprintf("%.*f") writes, byte
 * for byte: exact halves (printf rounds them to even), values next to a
 * half, signs and zeros, large and non-finite values, short buffers, and
 * a million random values of every magnitude the sampler writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/fmtnum.h"

static void same(double v, int prec, size_t cap)
{
	char a[64], b[64];
	int na, nb;

	memset(a, 'x', sizeof(a));
	memset(b, 'x', sizeof(b));
	na = fmt_fixed(a, cap, v, prec);
	nb = snprintf(b, cap, "%.*f", prec, v);
	if (na != nb || memcmp(a, b, cap))
		fail_msg("%.17g at %d (cap %zu): \"%s\" (%d) != printf's \"%s\" (%d)", v, prec, cap,
			 cap ? a : "", na, cap ? b : "", nb);
}

static void test_edges(void **state)
{
	static const double v[] = {
		0, -0.0, 0.5, 1.5, 2.5, 0.125, 0.375, -0.125, 0.05, 0.15, 0.25, 0.35, 1.005, 2.675,
		1e-9, 123456.5, 999.95, 9.995, 99.5, 0.0049999999999999999, 4503599627370495.5,
		4503599627370497.0, 1e15, 1e16, 1e300, -1e300, 5e-324, INFINITY, -INFINITY, NAN,
		527000.123, 0.999999, 9.9999999999, 18446744073709551615.0,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (int p = 0; p <= 11; p++) {
			same(v[i], p, 64);
			same(nextafter(v[i], 1e308), p, 64);
			same(nextafter(v[i], -1e308), p, 64);
		}
}

static void test_short_buffers(void **state)
{
	(void)state;
	for (size_t cap = 0; cap < 12; cap++) {
		same(12345.678, 3, cap);
		same(-0.5, 1, cap);
	}
}

/* xorshift: the same million values on every run. */
static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_random(void **state)
{
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (int i = 0; i < 1000000; i++) {
		uint64_t r = next(&x);
		/* 10^-6 to 10^12, either sign, and every tenth one a few
		 * decimals long exactly (rates of whole counts over 0.1 s). */
		double v = ldexp((double)(r >> 11), -53) * pow(10, (double)(r % 19) - 6);

		if (i % 10 == 0)
			v = (double)(r % 100000000) / pow(10, (double)(r % 5));
		if (r & 1)
			v = -v;
		same(v, (int)(r >> 60) % 4, 64);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_short_buffers),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
