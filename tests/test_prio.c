/*
 * test_prio.c - I/O priorities (workload/prio.c, job/optio.c): the
 * option forms fio takes, the table of distinct ioprio values, and the
 * draw's shares (fio's engines/cmdprio.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "testjob.h"

#include "job/options.h"
#include "workload/prio.h"

/* prioclass/prio as fio's ioprio_value: class 0 is best effort. */
static void test_job_value(void **state)
{
	static const char *const a[] = { "prio", "5", NULL };
	static const char *const b[] = { "prioclass", "3", NULL };
	static const char *const none[] = { NULL };
	struct job j;

	(void)state;
	job_of(&j, none);
	assert_int_equal(prio_job_value(wl_of(&j)), 0);
	option_release(&j);
	job_of(&j, a);
	assert_int_equal(prio_job_value(wl_of(&j)), 2 << 13 | 5);
	option_release(&j);
	job_of(&j, b);
	assert_int_equal(prio_job_value(wl_of(&j)), 3 << 13);
	assert_false(prio_job_realtime(wl_of(&j)));
	option_release(&j);
}

/* cmdprio_percentage per direction, with the default realtime class. */
static void test_percentage(void **state)
{
	static const char *const o[] = { "prioclass", "3", "cmdprio_percentage", "20,50",
					 "cmdprio", "4", NULL };
	struct job j;
	struct prio_plan p;
	struct err e = { 0 };
	uint64_t rng[2] = { 1, 2 };
	unsigned hit[2] = { 0 }, N = 100000;

	(void)state;
	job_of(&j, o);
	assert_true(prio_job_realtime(wl_of(&j)));
	assert_int_equal(prio_plan_build(&p, wl_of(&j), &e), 0);
	assert_true(p.on);
	assert_int_equal(p.n, 2);
	assert_int_equal(p.val[0], 3 << 13);
	assert_int_equal(p.val[1], 1 << 13 | 4);
	for (unsigned d = 0; d < 2; d++)
		for (unsigned i = 0; i < N; i++)
			hit[d] += prio_pick(&p, d, 4096, rng) == 1;
	assert_in_range(hit[0], N * 19 / 100, N * 21 / 100);
	assert_in_range(hit[1], N * 49 / 100, N * 51 / 100);
	option_release(&j);
}

/* cmdprio_bssplit's two forms (examples/cmdprio-bssplit.fio): a size's
 * share at cmdprio_class/cmdprio, or shares at priorities of their own;
 * a size not listed keeps the job's. */
static void test_bssplit(void **state)
{
	static const char *const o[] = { "cmdprio_bssplit",
					 "64k/25/1/1:64k/75/3/2:1024k/0,1024k/10", "cmdprio_class", "2",
					 NULL };
	struct job j;
	struct prio_plan p;
	struct err e = { 0 };
	uint64_t rng[2] = { 3, 4 };
	unsigned n[PRIO_TABLE_MAX] = { 0 }, N = 100000;

	(void)state;
	job_of(&j, o);
	assert_int_equal(prio_plan_build(&p, wl_of(&j), &e), 0);
	/* 0, 1<<13|1, 3<<13|2, and the writes' 1024k at cmdprio_class 2 */
	assert_int_equal(p.n, 4);
	assert_int_equal(p.val[1], 1 << 13 | 1);
	assert_int_equal(p.val[2], 3 << 13 | 2);
	assert_int_equal(p.val[3], 2 << 13);
	for (unsigned i = 0; i < N; i++)
		n[prio_pick(&p, 0, 65536, rng)]++;
	assert_int_equal(n[0], 0);	/* 25 + 75: every 64k read has one */
	assert_in_range(n[1], N * 24 / 100, N * 26 / 100);
	assert_int_equal(prio_pick(&p, 0, 1 << 20, rng), 0);	/* 1024k/0 */
	assert_int_equal(prio_pick(&p, 0, 4096, rng), 0);	/* not listed */
	memset(n, 0, sizeof(n));
	for (unsigned i = 0; i < N; i++)
		n[prio_pick(&p, 1, 1 << 20, rng)]++;
	assert_in_range(n[3], N * 9 / 100, N * 11 / 100);
	option_release(&j);
}

static void test_parse_errors(void **state)
{
	static const char *const bad[][2] = {
		{ "prio", "8" },
		{ "prioclass", "4" },
		{ "cmdprio_percentage", "101" },
		{ "cmdprio_class", "0" },
		{ "cmdprio", "8" },
		{ "cmdprio_bssplit", "64k/60:64k/50" },		/* one size's shares over 100 */
		{ "cmdprio_bssplit", "64k/10/4/0" },		/* class 4 */
		{ "cmdprio_bssplit", "64k/10/1" },		/* class without level */
		{ "cmdprio_bssplit", "64k" },
	};
	struct job j;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct err e = { 0 };

		option_defaults(&j);
		if (option_set(&j, bad[i][0], bad[i][1], &e) != -EINVAL)
			fail_msg("%s=%s accepted", bad[i][0], bad[i][1]);
		option_release(&j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_value),
		cmocka_unit_test(test_percentage),
		cmocka_unit_test(test_bssplit),
		cmocka_unit_test(test_parse_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
