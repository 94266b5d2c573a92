/*
 * test_reqclock.c - a synchronous loop's request clock (run/reqclock.h)
 * stops at the deadline and not before, counting every request, on the
 * TSC and on the monotonic fallback.
 *
 * No assertion here is about speed: the latencies are compared with the
 * elapsed time of the same interval, which a busy machine stretches for
 * both alike.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run/reqclock.h"

/* Stops once the deadline has passed, never before; every request is
 * in the histogram; the latencies sum to the time spent. */
static void run_until_deadline(bool lat)
{
	struct hist *h = calloc(1, sizeof(*h));
	struct req_clock clk;
	uint64_t start, deadline, end, calls = 0;

	assert_non_null(h);
	hist_init(h);
	start = now_ns();
	deadline = start + 30000000ull;
	req_clock_start(&clk, lat, deadline);
	for (;;) {
		calls++;
		if (req_clock_done(&clk, h))
			break;
		if (calls % 4096 == 0)
			assert_true(now_ns() - start < 60000000000ull);
	}
	end = now_ns();
	assert_true(end >= deadline);
	if (lat) {
		assert_int_equal(h->n, calls);
		/* Within 1 % of the elapsed time, and half a nanosecond of
		 * rounding per (very short) request, plus the nanosecond a
		 * request shorter than the clock's step is recorded as. */
		assert_true(h->sum <= (end - start) + (end - start) / 100 + calls / 2 + calls);
		assert_true(h->sum + calls / 2 >= (deadline - start) - (deadline - start) / 100);
	} else {
		assert_int_equal(h->n, 0);
		assert_int_equal(calls % DEADLINE_CHECK_EVERY, 0);
	}
	free(h);
}

static void test_req_clock_deadline(void **state)
{
	(void)state;
	latclock_init();
	run_until_deadline(true);
	run_until_deadline(false);
	setenv("FAULTLINE_LATCLOCK", "monotonic", 1);
	latclock_init();
	run_until_deadline(true);
	unsetenv("FAULTLINE_LATCLOCK");
	latclock_init();
}

/* No deadline (UINT64_MAX): never stops on its own. */
static void test_req_clock_no_deadline(void **state)
{
	struct hist *h = calloc(1, sizeof(*h));
	struct req_clock clk;

	(void)state;
	assert_non_null(h);
	hist_init(h);
	latclock_init();
	req_clock_start(&clk, true, UINT64_MAX);
	for (int i = 0; i < 100000; i++)
		assert_false(req_clock_done(&clk, h));
	assert_int_equal(h->n, 100000);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_clock_deadline),
		cmocka_unit_test(test_req_clock_no_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
