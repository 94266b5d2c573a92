/* test_touch.c - each touch mode against sums computed by hand, and the
 * reads really happen (page faults on a fresh mapping). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "workload/touch.h"

#define BUF (64 * 1024 + 64)

static uint8_t *data;
static uint8_t *copy;

static int setup(void **state)
{
	uint64_t x = 0x2545f4914f6cdd1dull;

	(void)state;
	data = malloc(BUF);
	copy = malloc(BUF);
	for (size_t i = 0; i < BUF; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		data[i] = (uint8_t)(x >> 56) | 0x80;	/* never 0: a skipped byte shows */
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(data);
	free(copy);
	return 0;
}

static void test_copy(void **state)
{
	static const size_t lens[] = { 1, 7, 4096, 4097, 65536 };

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(copy, 0, BUF);
		assert_int_equal(touch_consume(TOUCH_COPY, 0, data + 3, lens[i], copy), data[3]);
		assert_memory_equal(copy, data + 3, lens[i]);
		assert_int_equal(copy[lens[i]], 0);	/* and not a byte more */
	}
	assert_int_equal(touch_consume(TOUCH_COPY, 0, data, 0, copy), 0);
}

static void test_page(void **state)
{
	(void)state;
	/* 3 pages and 10 bytes: bytes 0, 4096, 8192, 12288 */
	assert_int_equal(touch_consume(TOUCH_PAGE, 0, data, 3 * 4096 + 10, NULL),
			 (uint64_t)data[0] + data[4096] + data[8192] + data[12288]);
	/* exactly 3 pages: the 4th byte is out */
	assert_int_equal(touch_consume(TOUCH_PAGE, 0, data, 3 * 4096, NULL),
			 (uint64_t)data[0] + data[4096] + data[8192]);
	assert_int_equal(touch_consume(TOUCH_PAGE, 0, data + 1, 3 * 4096 + 1, NULL),
			 (uint64_t)data[1] + data[4097] + data[8193] + data[12289]);
	/* shorter than a page: byte 0 */
	assert_int_equal(touch_consume(TOUCH_PAGE, 0, data + 5, 512, NULL), data[5]);
	assert_int_equal(touch_consume(TOUCH_PAGE, 0, data + 5, 1, NULL), data[5]);
	assert_int_equal(touch_consume(TOUCH_PAGE, 0, data, 0, NULL), 0);
}

static void test_stride(void **state)
{
	static const uint64_t strides[] = { 1, 2, 3, 64, 512, 4096, 5000, 100000 };

	(void)state;
	for (size_t s = 0; s < sizeof(strides) / sizeof(strides[0]); s++) {
		for (size_t len = 0; len <= 9000; len += 1499) {
			uint64_t want = 0;

			for (size_t i = 0; i < len; i += strides[s])
				want += data[i];
			assert_int_equal(touch_consume(TOUCH_STRIDE, strides[s], data, len, NULL), want);
		}
	}
	/* stride 0 is taken as 1 */
	assert_int_equal(touch_consume(TOUCH_STRIDE, 0, data, 3, NULL),
			 (uint64_t)data[0] + data[1] + data[2]);
}

/* Native-endian 64-bit words, then the tail's bytes. */
static uint64_t all_by_hand(const uint8_t *p, size_t len)
{
	uint64_t sum = 0, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		w = 0;
		for (int b = 0; b < 8; b++)	/* little-endian hosts only */
			w |= (uint64_t)p[i + b] << (8 * b);
		sum += w;
	}
	for (; i < len; i++)
		sum += p[i];
	return sum;
}

static void test_all(void **state)
{
	(void)state;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (size_t off = 0; off < 9; off++) {
		for (size_t len = 0; len <= 300; len++)
			assert_int_equal(touch_consume(TOUCH_ALL, 0, data + off, len, NULL),
					 all_by_hand(data + off, len));
		assert_int_equal(touch_consume(TOUCH_ALL, 0, data + off, 65536, NULL),
				 all_by_hand(data + off, 65536));
		assert_int_equal(touch_consume(TOUCH_ALL, 0, data + off, 4096 + 13, NULL),
				 all_by_hand(data + off, 4096 + 13));
	}
#endif
	/* every byte counts: changing any one changes the sum */
	for (size_t i = 0; i < 100; i++) {
		uint64_t a = touch_consume(TOUCH_ALL, 0, data, 100, NULL), b;

		data[i] ^= 1;
		b = touch_consume(TOUCH_ALL, 0, data, 100, NULL);
		data[i] ^= 1;
		assert_true(a != b);
	}
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

/* The reads happen: on a fresh anonymous mapping each mode faults in
 * every page it must read. */
static void test_reads_fault(void **state)
{
	enum { PAGES = 64 };
	static const enum touch_mode modes[] = { TOUCH_PAGE, TOUCH_STRIDE, TOUCH_ALL, TOUCH_COPY };
	uint8_t *dst = malloc(PAGES * 4096);

	(void)state;
	memset(dst, 1, PAGES * 4096);	/* its own faults out of the way */
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		uint8_t *p = mmap(NULL, PAGES * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long before, after;

		assert_true(p != MAP_FAILED);
		madvise(p, PAGES * 4096, MADV_NOHUGEPAGE);
		before = minflt();
		(void)touch_consume(modes[m], 4096, p, PAGES * 4096, dst);
		after = minflt();
		munmap(p, PAGES * 4096);
		if (after - before < PAGES)
			fail_msg("mode %zu: %ld faults for %d pages", m, after - before, PAGES);
	}
	free(dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_stride),
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_reads_fault),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
