/*
 * test_psi.c - the pressure stall information parser and source, on
 * recorded (this-host) and reconstructed (psi-old, psi-cgroup, arm64)
 * files. Expected totals are read off the fixture files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>

#include "telemetry/psi.h"

#ifndef FIXTURES
#error "build with -DFIXTURES=\"<abs path to tests/fixtures>\""
#endif

static int parse(const char *s, struct psi_totals *t)
{
	return psi_parse(s, strlen(s), t);
}

static void test_this_host_memory_and_io(void **state)
{
	struct procfs_src src;
	struct psi_totals t;

	(void)state;
	assert_int_equal(psi_open(&src, FIXTURES "/this-host/proc", "pressure/memory"), 0);
	assert_int_equal(psi_read(&src, &t), 0);
	assert_true(t.some_ok && t.full_ok);
	assert_int_equal(t.some_us, 45395335);
	assert_int_equal(t.full_us, 29801575);
	procfs_src_close(&src);

	assert_int_equal(psi_open(&src, FIXTURES "/this-host/proc", "pressure/io"), 0);
	assert_int_equal(psi_read(&src, &t), 0);
	assert_int_equal(t.some_us, 794595665);
	assert_int_equal(t.full_us, 347724224);
	procfs_src_close(&src);
}

/* Before 5.13 cpu has no full line: some alone is a good file. */
static void test_old_kernel_cpu_without_full(void **state)
{
	struct procfs_src src;
	struct psi_totals t;

	(void)state;
	assert_int_equal(psi_open(&src, FIXTURES "/psi-old/proc", "pressure/cpu"), 0);
	assert_int_equal(psi_read(&src, &t), 0);
	assert_true(t.some_ok);
	assert_false(t.full_ok);
	assert_int_equal(t.some_us, 58761234);
	procfs_src_close(&src);
}

static void test_cgroup_v2_memory_pressure(void **state)
{
	struct procfs_src src;
	struct psi_totals t;

	(void)state;
	assert_int_equal(psi_open(&src, FIXTURES "/psi-cgroup", "memory.pressure"), 0);
	assert_int_equal(psi_read(&src, &t), 0);
	assert_int_equal(t.some_us, 7345112);
	assert_int_equal(t.full_us, 6120007);
	procfs_src_close(&src);

	assert_int_equal(psi_open(&src, FIXTURES "/psi-cgroup", "bad.pressure"), 0);
	assert_int_equal(psi_read(&src, &t), -EBADMSG);
	procfs_src_close(&src);
}

static void test_malformed(void **state)
{
	struct psi_totals t;

	(void)state;
	assert_int_equal(parse("", &t), -EBADMSG);
	assert_int_equal(parse("full avg10=0.00 total=5\n", &t), -EBADMSG);	/* no some */
	assert_int_equal(parse("some avg10=0.00 avg60=0.00\n", &t), -EBADMSG);	/* no total */
	assert_int_equal(parse("some total=\n", &t), -EBADMSG);
	assert_int_equal(parse("some total=12a\n", &t), -EBADMSG);
	assert_int_equal(parse("some total=99999999999999999999999\n", &t), -EBADMSG);
	assert_int_equal(parse("some total=1\nsome total=2\n", &t), -EBADMSG);
	assert_int_equal(parse("some total=1\nwhat total=2\n", &t), -EBADMSG);
	/* No trailing newline, extra blank line: still the kernel's text. */
	assert_int_equal(parse("some avg10=1.00 total=7\n\nfull total=3", &t), 0);
	assert_int_equal(t.some_us, 7);
	assert_int_equal(t.full_us, 3);
	/* A prefix of the key is not the key. */
	assert_int_equal(parse("some xtotal=5 total=6\n", &t), 0);
	assert_int_equal(t.some_us, 6);
}

static void test_pct(void **state)
{
	const struct psi_span t0 = { 0, 0 }, t1 = { 1000000000ull, 1000000000ull };
	const struct psi_span held0 = { 0, 20000000ull }, held1 = { 1000000000ull, 1020000000ull };

	(void)state;
	/* 250 ms stalled in a 1 s interval: 25 %. */
	assert_true(psi_pct(1000000, 1250000, &t0, &t1) > 24.999);
	assert_true(psi_pct(1000000, 1250000, &t0, &t1) < 25.001);
	assert_true(psi_pct(5, 5, &t0, &t0) == 0);
	/* Stalled the whole time, the second read held up 20 ms after its
	 * clock reading: the kernel's total may cover 1.02 s, and the share
	 * is over the longest span the two readings can have, never 102 %. */
	assert_true(psi_pct(0, 1020000, &t0, &held1) <= 100.0);
	assert_true(psi_pct(0, 1020000, &t0, &held1) > 99.999);
	/* The first read held up: its total may be of 20 ms in, so the span
	 * runs from its start. */
	assert_true(psi_pct(0, 1000000, &held0, &t1) <= 100.0);
	/* A total that went backwards (a reset cgroup) is no stall. */
	assert_true(psi_pct(7, 5, &t0, &t1) == 0);
}

/* arm64 fixture has no pressure directory: the reason says so. */
static void test_absent_says_why(void **state)
{
	char why[512];

	(void)state;
	psi_why_absent(FIXTURES "/arm64/proc", why, sizeof(why));
	assert_non_null(strstr(why, "CONFIG_PSI"));
	psi_why_absent(FIXTURES "/this-host/proc", why, sizeof(why));
	assert_string_equal(why, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_this_host_memory_and_io),
		cmocka_unit_test(test_old_kernel_cpu_without_full),
		cmocka_unit_test(test_cgroup_v2_memory_pressure),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_pct),
		cmocka_unit_test(test_absent_says_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
