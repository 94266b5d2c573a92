/*
 * test_damon.c - DAMON's kdamonds and schemes as damon.c reads them:
 * this development VM's own (a paddr pageout scheme, recorded), a
 * synthetic tree (modules, a kdamond off, a scheme that does not page
 * out, a stats file that is not a number), and a kernel without DAMON.
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
#include <math.h>
#include <sys/stat.h>

#include "telemetry/damon.h"

#ifndef FIXTURES
#error "build with -DFIXTURES=\"<abs path to tests/fixtures>\""
#endif

#define THIS_SYS FIXTURES "/this-host/sys"
#define MODULE_SYS FIXTURES "/damon-module/sys"
#define OLD_SYS FIXTURES "/linux-5.10/sys"

static time_t mtime(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mtime;
}

static void test_this_host(void **state)
{
	const char *st = THIS_SYS "/kernel/mm/damon/admin/kdamonds/0/state";
	struct damon_info d;
	const struct damon_context *c;
	const struct damon_scheme *s;
	time_t before = mtime(st);

	(void)state;
	assert_int_equal(damon_probe(THIS_SYS, false, &d), 0);
	assert_true(d.sysfs);
	assert_false(d.stats_refreshed);
	assert_false(d.reclaim_module);
	assert_false(d.lru_sort_module);
	assert_int_equal(d.nkdamonds, 1);
	assert_true(d.k[0].on);
	assert_int_equal(d.k[0].pid, 77);
	assert_int_equal(d.k[0].ncontexts, 1);
	c = &d.k[0].c[0];
	assert_string_equal(c->operations, "paddr");
	assert_true(c->intervals_ok);
	assert_int_equal(c->sample_us, 500000);
	assert_int_equal(c->aggr_us, 5000000);
	assert_int_equal(c->nschemes, 1);
	s = &c->s[0];
	assert_string_equal(s->action, "pageout");
	assert_int_equal(s->age_min, 6);
	assert_int_equal(s->nr_accesses_max, 1);
	assert_int_equal(s->quota_bytes, 2147483648ull);
	assert_int_equal(s->quota_ms, 800);
	assert_int_equal(s->quota_reset_ms, 1000);
	assert_true(s->stats_ok);
	assert_int_equal(s->nr_applied, 213779);
	assert_int_equal(s->sz_applied, 110867705856ull);
	assert_true(d.k[0].state_ok);
	assert_int_equal(damon_reclaims(&d), 1);
	/* 6 aggregations of 5 s. */
	assert_true(damon_pageout_idle_s(&d) == 30.0);
	/* The same scheme on a kdamond that is off takes nothing. */
	d.k[0].on = false;
	assert_int_equal(damon_reclaims(&d), 0);
	assert_true(isnan(damon_pageout_idle_s(&d)));
	/* A kdamond whose state stayed busy: whether it pages out is
	 * unknown, neither yes nor no. */
	d.k[0].state_ok = false;
	assert_int_equal(damon_reclaims(&d), -1);
	assert_true(isnan(damon_pageout_idle_s(&d)));
	/* Not asked to refresh: the recorded tree is not written. */
	assert_int_equal(mtime(st), before);
}

static void test_modules_and_other_schemes(void **state)
{
	struct damon_info d;
	const struct damon_scheme *s;

	(void)state;
	assert_int_equal(damon_probe(MODULE_SYS, false, &d), 0);
	assert_true(d.reclaim_module);
	assert_false(d.lru_sort_module);
	assert_int_equal(d.nkdamonds, 2);
	assert_true(d.k[0].state_ok);
	assert_false(d.k[0].on);
	assert_int_equal(d.k[0].pid, -1);
	assert_int_equal(d.k[0].ncontexts, 0);	/* no contexts/ at all: none */
	assert_true(d.k[1].on);
	assert_int_equal(d.k[1].pid, 4242);
	assert_int_equal(d.k[1].c[0].sample_us, 5000);
	s = &d.k[1].c[0].s[0];
	assert_string_equal(s->action, "cold");
	assert_int_equal(s->age_min, 10);
	assert_int_equal(s->quota_bytes, 0);
	/* One stats file is not a number: neither count is given. */
	assert_false(s->stats_ok);
	/* The module reclaims, though no kdamond's scheme pages out... */
	assert_int_equal(damon_reclaims(&d), 1);
	/* ...and without it, "cold" alone does not. */
	d.reclaim_module = false;
	assert_int_equal(damon_reclaims(&d), 0);
	/* A busy kdamond with only a cold scheme would not page out. */
	d.k[1].state_ok = d.k[1].on = false;
	assert_int_equal(damon_reclaims(&d), 0);
	assert_true(isnan(damon_pageout_idle_s(&d)));	/* a cold scheme */
}

static void test_no_damon(void **state)
{
	struct damon_info d;

	(void)state;
	assert_int_equal(damon_probe(OLD_SYS, false, &d), -ENOENT);
	assert_false(d.sysfs);
	assert_int_equal(d.nkdamonds, 0);
	assert_int_equal(damon_reclaims(&d), 0);
	assert_int_equal(damon_probe(FIXTURES "/no-such-tree", false, &d), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_this_host),
		cmocka_unit_test(test_modules_and_other_schemes),
		cmocka_unit_test(test_no_damon),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
