/* fmtnum.c - "%.*f" without printf's general machinery; see fmtnum.h. */
#include "lib/fmtnum.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const double pow10s[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9 };

static int slow(char *buf, size_t cap, double v, int prec)
{
	return snprintf(buf, cap, "%.*f", prec, v);
}

int fmt_fixed(char *buf, size_t cap, double v, int prec)
{
	char tmp[48], *q = tmp + sizeof(tmp);
	double a, x, fl, half;
	uint64_t r;
	int n;

	if (prec < 0 || prec > 9 || !isfinite(v))
		return slow(buf, cap, v, prec);
	a = fabs(v);
	x = a * pow10s[prec];
	/* Below 2^52 a double's unit in the last place is under 1, and
	 * x * 2^-52 bounds it: the one rounding of the product moved x by at
	 * most half of that. printf rounds the exact value (to even at an
	 * exact half): when x is within a few such units of a half, the
	 * product's rounding may have crossed it, and printf decides. */
	if (x >= 4503599627370496.0)
		return slow(buf, cap, v, prec);
	fl = floor(x);
	half = x - fl - 0.5;
	if (fabs(half) <= x * 0x1p-50 + 0x1p-60)
		return slow(buf, cap, v, prec);
	r = (uint64_t)fl + (half > 0);
	/* Digits from the right: the decimals, the point, the integer part. */
	for (int k = 0; k < prec; k++) {
		*--q = (char)('0' + r % 10);
		r /= 10;
	}
	if (prec)
		*--q = '.';
	do {
		*--q = (char)('0' + r % 10);
		r /= 10;
	} while (r);
	if (signbit(v))
		*--q = '-';
	n = (int)(tmp + sizeof(tmp) - q);
	if (cap) {
		size_t c = (size_t)n < cap ? (size_t)n : cap - 1;

		memcpy(buf, q, c);
		buf[c] = '\0';
	}
	return n;
}

int fmt_append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	*at += n > 0 ? (size_t)n : 0;
	return 0;
}
