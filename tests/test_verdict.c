/*
 * test_verdict.c - the verdict's planner (verdict_plan_make) and its job
 * text: the memory budget and file follow the time budget and the host,
 * reserve_mem stands in for a cgroup where none can be made, a target too
 * small or a budget too short is refused, and the plan fits its budget.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "job/jobfile.h"
#include "verdict/verdict.h"

#define MIB (1024ull * 1024)
#define GIB (1024 * MIB)
#define S 1000000000ull

static const struct verdict_hostinfo big = { .ncpus = 2, .mem_available = 22 * GIB, .cgroup_ok = true };

static void test_sizes_follow_budget(void **state)
{
	struct verdict_plan p5, p10;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(verdict_plan_make(&big, 300 * S, true, "", &p5, &e), 0);
	assert_int_equal(verdict_plan_make(&big, 600 * S, true, "", &p10, &e), 0);
	assert_true(p5.cgroup);
	assert_int_equal(p5.file_size, 4 * p5.mem);
	assert_true(p10.mem > p5.mem);
	assert_int_equal(p5.threads, 2);
	assert_int_equal(p5.cells_per_round, 17);
	assert_true(p5.est_s <= 300);
	assert_true(p10.est_s <= 600);
	assert_true(p10.rounds >= p5.rounds);
	assert_true(p5.runtime_s >= 1);
}

static void test_reserve_mem_without_cgroup(void **state)
{
	struct verdict_hostinfo hi = big;
	struct verdict_plan p;
	struct err e = { 0 };

	(void)state;
	hi.cgroup_ok = false;
	strcpy(hi.cgroup_why, "no permission");
	assert_int_equal(verdict_plan_make(&hi, 600 * S, true, "", &p, &e), 0);
	assert_false(p.cgroup);
	/* reserve_mem leaves 1 GiB available: the budget is at least that. */
	assert_true(p.mem > GIB);
	assert_int_equal(p.reserve, hi.mem_available - p.mem);
	assert_non_null(strstr(p.memory_why, "no permission"));
	hi.mem_available = GIB;
	assert_int_not_equal(verdict_plan_make(&hi, 600 * S, true, "", &p, &e), 0);
}

static void test_existing_target(void **state)
{
	struct verdict_hostinfo hi = big;
	struct verdict_plan p;
	struct err e = { 0 };

	(void)state;
	hi.target_size = 200 * MIB;
	assert_int_equal(verdict_plan_make(&hi, 600 * S, false, "read only", &p, &e), 0);
	assert_true(p.file_size <= hi.target_size);
	assert_false(p.writes);
	assert_int_equal(p.cells_per_round, 14);
	assert_int_equal(p.layout_s, 0);
	hi.target_size = 64 * MIB;
	assert_int_not_equal(verdict_plan_make(&hi, 600 * S, false, "", &p, &e), 0);
}

static void test_budget_too_short(void **state)
{
	struct verdict_plan p;
	struct err e = { 0 };

	(void)state;
	assert_int_not_equal(verdict_plan_make(&big, 10 * S, true, "", &p, &e), 0);
	assert_non_null(strstr(e.msg, "give at least"));
}

/* Every cell's job text parses as a job file. */
static void test_job_text_parses(void **state)
{
	struct verdict_plan p;
	struct err e = { 0 };
	char buf[2048];

	(void)state;
	assert_int_equal(verdict_plan_make(&big, 300 * S, true, "", &p, &e), 0);
	strcpy(p.target, "/var/tmp/x.dat");
	for (int w = 0; w < JW_NR; w++)
		for (int en = 0; en < JE_NR; en++) {
			struct joblist jl = { 0 };

			if (!judge_engine_in(w, en))
				continue;
			verdict_job_text(&p, w, en, 0, "t", buf, sizeof(buf));
			if (jobfile_parse_text(&jl, "t", buf, &e))
				fail_msg("%s/%s: %s\n%s", judge_workload_key(w), judge_engine_key(en), e.msg, buf);
			assert_int_equal(jl.n, 1);
			joblist_free(&jl);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_follow_budget),
		cmocka_unit_test(test_reserve_mem_without_cgroup),
		cmocka_unit_test(test_existing_target),
		cmocka_unit_test(test_budget_too_short),
		cmocka_unit_test(test_job_text_parses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
