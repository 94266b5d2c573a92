/*
 * test_latclock.c - the latency clock: its conversions agree with
 * CLOCK_MONOTONIC over the same interval, and the fallback is the
 * identity (a synchronous loop's request clock: test_reqclock.c).
 *
 * No assertion here is about speed: each compares two clocks over one
 * interval, which a busy machine stretches for both alike.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lib/latclock.h"

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

/* A tick read between two monotonic reads, the monotonic time taken as
 * their middle: of 200 tries, the narrowest pair (on a loaded host a
 * thread can be preempted between two reads, for milliseconds). *width
 * is how far the middle can be from the tick's moment. */
static void read_both(uint64_t *ns, uint64_t *ticks, uint64_t *width)
{
	*width = UINT64_MAX;
	for (int i = 0; i < 200 && *width > 2000; i++) {
		uint64_t a = latclock_mono_ns(), k = latclock_ticks(), b = latclock_mono_ns();

		if (b - a < *width) {
			*width = b - a;
			*ns = a + (b - a) / 2;
			*ticks = k;
		}
	}
}

/* One interval read on both clocks: converted ticks within 0.1 % of the
 * monotonic nanoseconds, plus how uncertain the two readings are. */
static void check_interval(uint64_t sleep)
{
	uint64_t n0, k0, w0, n1, k1, w1, ns, conv, diff;

	read_both(&n0, &k0, &w0);
	sleep_ns(sleep);
	read_both(&n1, &k1, &w1);
	ns = n1 - n0;
	conv = latclock_ns(k1 - k0);
	diff = conv > ns ? conv - ns : ns - conv;
	if (diff > ns / 1000 + w0 + w1 + 1000)
		fail_msg("%s: %llu ticks are %llu ns, CLOCK_MONOTONIC says %llu ns",
			 latclock.tsc ? "tsc" : "monotonic", (unsigned long long)(k1 - k0),
			 (unsigned long long)conv, (unsigned long long)ns);
}

static void test_tsc_or_monotonic(void **state)
{
	const char *src;

	(void)state;
	unsetenv("FAULTLINE_LATCLOCK");
	src = latclock_init();
	assert_true(!strcmp(src, "tsc") || !strcmp(src, "monotonic"));
	assert_int_equal(latclock.tsc, !strcmp(src, "tsc"));
	check_interval(20000000ull);
	check_interval(200000000ull);
	/* The two conversions invert each other, to the rounding of a tick
	 * and of the 32.32 factors (parts in 10^9). */
	for (uint64_t ns = 1000; ns < 100000000000ull; ns *= 7) {
		uint64_t back = latclock_ns(latclock_ticks_of(ns));
		uint64_t diff = back > ns ? back - ns : ns - back;

		assert_true(diff <= ns / 100000000 + 2);
	}
	/* A TSC faster than 1 GHz has more ticks than ns: saturates. */
	if (!latclock.tsc || latclock.tick_mult >= (1ull << 32))
		assert_int_equal(latclock_ticks_of(UINT64_MAX), UINT64_MAX);
}

static void test_forced_monotonic(void **state)
{
	uint64_t a, b, c;

	(void)state;
	setenv("FAULTLINE_LATCLOCK", "monotonic", 1);
	assert_string_equal(latclock_init(), "monotonic");
	assert_false(latclock.tsc);
	assert_int_equal(latclock_ns(123456789), 123456789);
	assert_int_equal(latclock_ticks_of(987654321), 987654321);
	/* Ticks are CLOCK_MONOTONIC nanoseconds. */
	a = latclock_mono_ns();
	b = latclock_ticks();
	c = latclock_mono_ns();
	assert_true(a <= b && b <= c);
	check_interval(20000000ull);
	unsetenv("FAULTLINE_LATCLOCK");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tsc_or_monotonic),
		cmocka_unit_test(test_forced_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
