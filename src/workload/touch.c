/*
 * touch.c - consuming a request's bytes; see touch.h.
 *
 * Every mode returns something computed from the bytes it read, so the
 * reads cannot be optimised away (the caller folds the result into a
 * sink); no volatile is needed, and none is used, so `all` vectorises.
 *
 * What each returns (the tests recompute these by hand):
 *   copy    copybuf[0] after the memcpy (0 for len 0)
 *   page    sum of the bytes at 0, 4096, 8192, ... < len
 *   stride  sum of the bytes at 0, N, 2N, ... < len (N = 0 is taken as 1)
 *   all     sum mod 2^64 of the native-endian 64-bit words at 0, 8, 16, ...
 *           below len rounded down to 8, plus each byte of the tail
 */
#include "workload/touch.h"

#include <string.h>

static uint64_t touch_stride(const uint8_t *data, size_t len, size_t stride)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < len; i += stride)
		sum += data[i];
	return sum;
}

/*
 * 16-byte vectors (SSE2 on x86-64, NEON on arm64), four accumulators
 * over 64-byte steps so the adds do not wait on each other. Written with
 * GCC vector types because -O2 does not vectorise a plain loop. memcpy
 * is the portable unaligned load; it compiles to one move.
 */
typedef uint64_t u64x2 __attribute__((vector_size(16)));

static uint64_t touch_all(const uint8_t *data, size_t len)
{
	u64x2 a = { 0, 0 }, b = a, c = a, d = a, x0, x1, x2, x3;
	uint64_t sum, w;
	size_t i = 0;

	for (; i + 64 <= len; i += 64) {
		memcpy(&x0, data + i, 16);
		memcpy(&x1, data + i + 16, 16);
		memcpy(&x2, data + i + 32, 16);
		memcpy(&x3, data + i + 48, 16);
		a += x0;
		b += x1;
		c += x2;
		d += x3;
	}
	a += b + c + d;
	sum = a[0] + a[1];
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, data + i, sizeof(w));
		sum += w;
	}
	for (; i < len; i++)
		sum += data[i];
	return sum;
}

uint64_t touch_consume(enum touch_mode m, uint64_t stride, const uint8_t *data,
		       size_t len, uint8_t *copybuf)
{
	switch (m) {
	case TOUCH_COPY:
		if (!len)
			return 0;
		memcpy(copybuf, data, len);
		return copybuf[0];
	case TOUCH_PAGE:
		return touch_stride(data, len, TOUCH_PAGE_SIZE);
	case TOUCH_STRIDE:
		return touch_stride(data, len, stride ? (size_t)stride : 1);
	case TOUCH_ALL:
		return touch_all(data, len);
	}
	return 0;
}
