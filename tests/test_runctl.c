/*
 * test_runctl.c - fio's run-control options: steadystate's parsing, its
 * judgement (deviation and slope, absolute and %, fio's steadystate.c
 * worked by hand), its window of readings (rates over intervals, the
 * ring, ss_ramp), and the other options' values and refusals.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "job/jobcheck.h"
#include "job/options.h"
#include "run/pace.h"
#include "run/runctl.h"

#define SEC 1000000000ull

static void job_of(struct job *j, const char *const *opts)
{
	struct err e = { 0 };

	option_defaults(j);
	snprintf(j->name, sizeof(j->name), "t");
	for (unsigned i = 0; opts[i]; i += 2)
		if (option_set(j, opts[i], opts[i + 1], &e))
			fail_msg("%s=%s: %s", opts[i], opts[i + 1], e.msg);
}

static int set_fails(const char *name, const char *val)
{
	struct job j;
	struct err e = { 0 };
	int ret;

	option_defaults(&j);
	ret = option_set(&j, name, val, &e);
	option_release(&j);
	return ret;
}

static void ss_parse(void **state)
{
	struct job j;

	(void)state;
	/* fio's default: iops_slope:0.01% */
	option_defaults(&j);
	assert_int_equal(j.ss_metric, SS_IOPS);
	assert_true(j.ss_slope);
	assert_true(j.ss_pct);
	assert_true(fabs(j.ss_limit - 0.01) < 1e-12);
	assert_int_equal(j.ss_dur_ns, 0);
	assert_int_equal(j.ss_interval_ns, SEC);
	option_release(&j);

	job_of(&j, (const char *const[]){ "ss", "bw_slope:1%", "ss_dur", "10", "ss_ramp", "5s", NULL });
	assert_int_equal(j.ss_metric, SS_BW);
	assert_true(j.ss_slope && j.ss_pct);
	assert_true(fabs(j.ss_limit - 1) < 1e-12);
	assert_int_equal(j.ss_dur_ns, 10 * SEC);
	assert_int_equal(j.ss_ramp_ns, 5 * SEC);
	option_release(&j);

	/* absolute limits: IOPS a float, bw a size, lat a time (bare: us) */
	job_of(&j, (const char *const[]){ "steadystate", "iops:2.5", NULL });
	assert_false(j.ss_pct || j.ss_slope);
	assert_true(fabs(j.ss_limit - 2.5) < 1e-12);
	option_release(&j);
	job_of(&j, (const char *const[]){ "ss", "bw:10m", NULL });
	assert_true(fabs(j.ss_limit - 10485760.0) < 1e-6);
	option_release(&j);
	job_of(&j, (const char *const[]){ "ss", "lat:500", NULL });
	assert_int_equal(j.ss_metric, SS_LAT);
	assert_true(fabs(j.ss_limit - 500000.0) < 1e-6);
	option_release(&j);
	job_of(&j, (const char *const[]){ "ss", "lat_slope:2ms", NULL });
	assert_true(j.ss_slope);
	assert_true(fabs(j.ss_limit - 2000000.0) < 1e-6);
	option_release(&j);

	assert_int_not_equal(set_fails("ss", "iops"), 0);	/* no limit */
	assert_int_not_equal(set_fails("ss", "tput:5%"), 0);
	assert_int_not_equal(set_fails("ss", "iops:x%"), 0);
	assert_int_not_equal(set_fails("ss", "iops:-1"), 0);
}

static void other_values(void **state)
{
	struct job j;

	(void)state;
	job_of(&j, (const char *const[]){ "exitall", "1", "exit_what", "stonewall", NULL });
	assert_true(j.exitall);
	assert_int_equal(j.exit_what, EXIT_WHAT_STONEWALL);
	option_release(&j);
	option_defaults(&j);
	assert_false(j.exitall || j.exitall_on_error);
	assert_int_equal(j.exit_what, EXIT_WHAT_GROUP);
	option_release(&j);
	assert_int_not_equal(set_fails("exit_what", "some"), 0);

	job_of(&j, (const char *const[]){ "flow", "8", "flow_id", "3", "flow_sleep", "1000",
					   "flow_watermark", "5", NULL });
	assert_int_equal(j.flow, 8);
	assert_int_equal(j.flow_id, 3);
	assert_int_equal(j.flow_sleep_us, 1000);
	option_release(&j);
	assert_int_not_equal(set_fails("flow", "1001"), 0);	/* fio's FLOW_MAX_WEIGHT */

	job_of(&j, (const char *const[]){ "latency_target", "500000", "latency_window", "5000000",
					   "latency_percentile", "99.9", NULL });
	assert_int_equal(j.latency_target_ns, 500 * 1000000ull);	/* 500000 us */
	assert_int_equal(j.latency_window_ns, 5 * SEC);
	assert_true(fabs(j.latency_percentile - 99.9) < 1e-9);
	assert_false(j.latency_run);
	option_release(&j);
	assert_int_not_equal(set_fails("latency_percentile", "0"), 0);
	assert_int_not_equal(set_fails("latency_percentile", "101"), 0);
}

/*
 * fio's flow: threads offered turns in any order issue in the ratio of
 * their weights; one that leaves takes its requests and weight along,
 * and the one left alone is never held back.
 */
static void flow(void **state)
{
	struct pace_flow f = { .count = 1 };
	struct job ja, jb;
	struct pace a, b;
	unsigned na = 2, nb = 3, x = 12345;

	(void)state;
	job_of(&ja, (const char *const[]){ "flow", "1", NULL });
	job_of(&jb, (const char *const[]){ "flow", "3", NULL });
	pace_init(&a, &ja, 0, 1);
	pace_init(&b, &jb, 0, 1);
	assert_false(a.on);
	/* the controller counts both weights before either starts */
	pace_flow_join(&f, 1, 1, false);
	pace_flow_join(&f, 3, 1, false);
	assert_int_equal(f.weight, 4);
	pace_flow_init(&a, &ja, &f);
	pace_flow_init(&b, &jb, &f);
	assert_true(a.on && b.on);
	/* a, first: one request, then it waits for b's three */
	assert_false(pace_flow_ahead(&a));
	assert_true(pace_flow_ahead(&a));
	for (unsigned i = 0; i < 3; i++)
		assert_false(pace_flow_ahead(&b));
	assert_false(pace_flow_ahead(&a));
	pace_begin(&a);
	pace_begin(&b);
	/* turns at random, a offered three times as often as b */
	for (unsigned i = 0; i < 40000; i++) {
		x = x * 1103515245u + 12345u;
		if ((x >> 16) % 4)
			na += !pace_flow_ahead(&a);
		else
			nb += !pace_flow_ahead(&b);
	}
	assert_int_equal(na, a.flow_count);
	assert_int_equal(nb, b.flow_count);
	assert_int_equal(f.count, 1 + na + nb);
	/* within a request of 1:3 */
	assert_true(nb >= 3 * na - 3 && nb <= 3 * na + 3);
	assert_true(na > 1000);
	pace_end(&b);
	assert_int_equal(f.weight, 1);
	assert_int_equal(f.count, 1 + na);
	for (unsigned i = 0; i < 100; i++)
		assert_false(pace_flow_ahead(&a));
	pace_end(&a);
	pace_end(&a);	/* once only */
	assert_int_equal(f.weight, 0);
	assert_int_equal(f.count, 1);
	option_release(&ja);
	option_release(&jb);
}

/* fio's rules: ss_interval >= 1s, ss_dur a multiple, longer. */
static void checks(void **state)
{
	struct job j;
	struct err e = { 0 };

	(void)state;
	job_of(&j, (const char *const[]){ "ioengine", "null", "size", "1m", "ss_dur", "3", NULL });
	assert_int_equal(job_validate(&j, NULL, &e), 0);
	option_release(&j);
	job_of(&j, (const char *const[]){ "ioengine", "null", "size", "1m", "ss_dur", "3",
					   "ss_interval", "2", NULL });
	assert_int_not_equal(job_validate(&j, NULL, &e), 0);
	option_release(&j);
	job_of(&j, (const char *const[]){ "ioengine", "null", "size", "1m", "ss_dur", "1", NULL });
	assert_int_not_equal(job_validate(&j, NULL, &e), 0);
	option_release(&j);
	job_of(&j, (const char *const[]){ "ioengine", "null", "size", "1m", "ss_dur", "2",
					   "ss_interval", "500ms", NULL });
	assert_int_not_equal(job_validate(&j, NULL, &e), 0);
	option_release(&j);
	/* latency_target searches an asynchronous engine's depth */
	job_of(&j, (const char *const[]){ "ioengine", "psync", "size", "1m", "latency_target", "1ms", NULL });
	assert_int_not_equal(job_validate(&j, NULL, &e), 0);
	assert_non_null(strstr(e.msg, "latency_target"));
	option_release(&j);
}

/* The judgement on samples worked by hand. */
static void judge(void **state)
{
	struct job j;
	double c, slope, dev;
	const uint64_t flat[] = { 100, 110, 90, 100 };	/* mean 100, max dev 10 */
	const uint64_t rising[] = { 100, 200, 300, 400 };	/* slope 100/sample, mean 250 */

	(void)state;
	job_of(&j, (const char *const[]){ "ss", "iops:10%", NULL });
	/* 10 % of the mean 100 is 10: not below it */
	assert_false(ss_judge(&j, flat, 4, &c, &slope, &dev));
	assert_true(fabs(c - 10.0) < 1e-9);
	assert_true(fabs(dev - 10.0) < 1e-9);
	option_release(&j);
	job_of(&j, (const char *const[]){ "ss", "iops:10.5%", NULL });
	assert_true(ss_judge(&j, flat, 4, &c, &slope, &dev));
	option_release(&j);
	job_of(&j, (const char *const[]){ "ss", "iops:11", NULL });
	assert_true(ss_judge(&j, flat, 4, &c, &slope, &dev));
	option_release(&j);

	job_of(&j, (const char *const[]){ "ss", "iops_slope:40%", NULL });
	/* slope 100 is 40 % of the mean 250: not below */
	assert_false(ss_judge(&j, rising, 4, &c, &slope, &dev));
	assert_true(fabs(slope - 100.0) < 1e-9);
	assert_true(fabs(c - 40.0) < 1e-9);
	option_release(&j);
	job_of(&j, (const char *const[]){ "ss", "iops_slope:41%", NULL });
	assert_true(ss_judge(&j, rising, 4, &c, &slope, &dev));
	option_release(&j);
	/* a falling series: the slope's size counts */
	{
		const uint64_t falling[] = { 400, 300, 200, 100 };

		job_of(&j, (const char *const[]){ "ss", "bw_slope:101", NULL });
		assert_true(ss_judge(&j, falling, 4, &c, &slope, &dev));
		assert_true(fabs(slope + 100.0) < 1e-9);
		option_release(&j);
		job_of(&j, (const char *const[]){ "ss", "bw_slope:99", NULL });
		assert_false(ss_judge(&j, falling, 4, &c, &slope, &dev));
		option_release(&j);
	}
	/* a flat line's slope is 0, never below a limit of 0 */
	{
		const uint64_t same[] = { 5, 5, 5 };

		job_of(&j, (const char *const[]){ "ss", "iops_slope:0", NULL });
		assert_false(ss_judge(&j, same, 3, &c, &slope, &dev));
		option_release(&j);
	}
}

/* Readings become rates over intervals; the window rolls. */
static void readings(void **state)
{
	struct job j;
	struct ss_state s;
	uint64_t w[3];

	(void)state;
	job_of(&j, (const char *const[]){ "ss", "iops:5%", "ss_dur", "3", "ss_ramp", "2", NULL });
	assert_int_equal(ss_init(&s, &j, 10 * SEC), 0);
	assert_int_equal(s.n, 3);
	/* nothing before the ramp's end */
	assert_int_equal(ss_due(&s), 12 * SEC);
	assert_false(ss_reading(&s, &j, 11 * SEC, 0, 0, 0, 0));
	assert_int_equal(s.count, 0);
	/* the base */
	assert_false(ss_reading(&s, &j, 12 * SEC, 1000, 4096000, 1000, 1000000));
	assert_int_equal(s.count, 0);
	/* 2000 requests in 1 s, then 1000 in 1 s: unsteady */
	assert_false(ss_reading(&s, &j, 13 * SEC, 3000, 3 * 4096000, 3000, 3000000));
	assert_int_equal(s.iops[0], 2000);
	assert_int_equal(s.bw[0], 2 * 4096000);
	assert_int_equal(s.lat[0], 1000);
	assert_false(ss_reading(&s, &j, 14 * SEC, 4000, 4 * 4096000, 4000, 6000000));
	assert_int_equal(s.lat[1], 3000);
	/* a reading before its time is skipped */
	assert_false(ss_reading(&s, &j, 14 * SEC + 1, 9000, 0, 0, 0));
	assert_false(ss_reading(&s, &j, 15 * SEC, 5000, 5 * 4096000, 5000, 7000000));
	assert_int_equal(s.count, 3);
	assert_false(s.attained);
	/* one more of 1000: the 2000 rolls out, 1000 1000 1000 deviates by
	 * 0, below 5 %: steady */
	assert_true(ss_reading(&s, &j, 16 * SEC, 6000, 6 * 4096000, 6000, 8000000));
	assert_true(s.attained);
	assert_int_equal(ss_window(&s, s.iops, w), 3);
	assert_int_equal(w[0], 1000);
	assert_int_equal(w[1], 1000);
	assert_int_equal(w[2], 1000);
	assert_int_equal(ss_window(&s, s.lat, w), 3);
	assert_int_equal(w[0], 3000);
	assert_int_equal(w[2], 1000);
	/* once attained, no more readings */
	assert_int_equal(ss_due(&s), UINT64_MAX);
	assert_false(ss_reading(&s, &j, 17 * SEC, 7000, 7 * 4096000, 7000, 9000000));
	ss_free(&s);
	option_release(&j);

	/* no ss_dur: off */
	job_of(&j, (const char *const[]){ "ss", "iops:5%", NULL });
	assert_int_equal(ss_init(&s, &j, 0), 0);
	assert_false(s.on);
	assert_int_equal(ss_due(&s), UINT64_MAX);
	option_release(&j);
}

/* One window of @n completions of latency @ns, the last at its end,
 * *@t + 100 ms (the others half-way). */
static void lt_window(struct pace *p, unsigned n, uint64_t ns, uint64_t *t)
{
	for (unsigned i = 0; i + 1 < n; i++)
		pace_lat(p, ns, (*t + 50) * 1000000ull);
	*t += 100;
	pace_lat(p, ns, *t * 1000000ull);
}

/*
 * latency_target's search, as fio's io_u.c: doubling from 1 while every
 * window is good, bisecting after a miss, one last window at the depth
 * that stays, then the end; at depth 1 a miss with percentile 100 fails.
 */
static void latency_target(void **state)
{
	struct job j;
	struct pace p;
	uint64_t t = 0;
	const unsigned want[] = { 2, 4, 8, 16, 16 };

	(void)state;
	job_of(&j, (const char *const[]){ "ioengine", "libaio", "iodepth", "16", "latency_target", "1ms",
					   "latency_window", "100ms", NULL });
	pace_init(&p, &j, 0, 1);
	assert_true(p.on && p.lt);
	assert_int_equal(p.qd, 1);
	p.lt_cycle_ns = 0;
	/* good windows: 1 2 4 8 16, then 16 again: the last window */
	for (unsigned i = 0; i < 5; i++) {
		lt_window(&p, 10, 500000, &t);
		assert_int_equal(p.qd, want[i]);
		assert_int_equal(p.lt_state, 0);
	}
	assert_true(p.lt_end_run && p.lt_quiesce);
	lt_window(&p, 10, 500000, &t);
	assert_int_equal(p.lt_state, 1);
	assert_int_equal(p.qd, 16);
	option_release(&j);

	/* a miss at 8 (percentile 100): down to (8+4)/2 = 6 at once;
	 * good at 6: up to (6+8)/2 = 7; good at 7 three times: 8 is tried
	 * again (fio's stable count) */
	job_of(&j, (const char *const[]){ "ioengine", "libaio", "iodepth", "16", "latency_target", "1ms",
					   "latency_window", "100ms", NULL });
	pace_init(&p, &j, 0, 1);
	p.lt_cycle_ns = 0;
	t = 0;
	lt_window(&p, 10, 500000, &t);	/* 2 */
	lt_window(&p, 10, 500000, &t);	/* 4 */
	lt_window(&p, 10, 500000, &t);	/* 8 */
	assert_int_equal(p.qd, 8);
	pace_lat(&p, 2000000, t * 1000000ull);
	assert_int_equal(p.qd, 6);
	assert_int_equal(p.qd_high, 8);
	assert_true(p.lt_quiesce);
	lt_window(&p, 10, 500000, &t);
	assert_int_equal(p.qd, 7);
	lt_window(&p, 10, 500000, &t);	/* stable 1: 7 + 8 / 2 = 7 */
	assert_int_equal(p.qd, 7);
	assert_int_equal(p.lt_state, 0);
	lt_window(&p, 10, 500000, &t);	/* stable 2, and the last window at 7 begins */
	assert_int_equal(p.qd, 7);
	option_release(&j);

	/* percentile 99: a miss is counted, the window judges */
	job_of(&j, (const char *const[]){ "ioengine", "libaio", "iodepth", "16", "latency_target", "1ms",
					   "latency_window", "100ms", "latency_percentile", "90", NULL });
	pace_init(&p, &j, 0, 1);
	p.lt_cycle_ns = 0;
	t = 0;
	lt_window(&p, 10, 500000, &t);	/* 2 */
	lt_window(&p, 10, 500000, &t);	/* 4 */
	pace_lat(&p, 2000000, t * 1000000ull);	/* 1 miss: counted, no change */
	assert_int_equal(p.qd, 4);
	lt_window(&p, 9, 500000, &t);	/* 9 of 10 within: 90 % >= 90: up */
	assert_int_equal(p.qd, 8);
	for (unsigned i = 0; i < 2; i++)
		pace_lat(&p, 2000000, t * 1000000ull);
	lt_window(&p, 8, 500000, &t);	/* 8 of 10: down to (8+4)/2 */
	assert_int_equal(p.qd, 6);
	option_release(&j);

	/* depth 1 and a miss at percentile 100: the job fails */
	job_of(&j, (const char *const[]){ "ioengine", "libaio", "iodepth", "16", "latency_target", "1us",
					   NULL });
	pace_init(&p, &j, 0, 1);
	p.lt_cycle_ns = 0;
	pace_lat(&p, 5000, 1000);
	assert_int_equal(p.lt_state, -1);
	assert_int_equal(p.lt_miss_ns, 5000);
	option_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ss_parse),
		cmocka_unit_test(other_values),
		cmocka_unit_test(flow),
		cmocka_unit_test(latency_target),
		cmocka_unit_test(checks),
		cmocka_unit_test(judge),
		cmocka_unit_test(readings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
