/*
 * test_phases.c - the cache-full moment and the phases around it, on CSV
 * series (tests/fixtures/csv: the plot tests' series, and a run of the
 * paper's figure 2 job recorded on the development VM) and on small
 * made-up series that put each part of the rule on its edge. Columns
 * are found by name, as any reader of the CSV must.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "telemetry/phases.h"

#ifndef FIXTURES
#error "build with -DFIXTURES=\"<abs path to tests/fixtures>\""
#endif

#define MIB (1024.0 * 1024.0)
#define MAXCOL 128
#define MAXROWS 512

struct series {
	size_t n;
	struct phase_row r[MAXROWS];
};

/* Column @name's index in the header @cols, or -1. */
static int col(char cols[][48], int ncols, const char *name)
{
	for (int i = 0; i < ncols; i++)
		if (!strcmp(cols[i], name))
			return i;
	return -1;
}

static int split(char *line, char cells[][48], int max)
{
	int n = 0;
	char *p = line;

	line[strcspn(line, "\r\n")] = '\0';
	for (;;) {
		char *c = strchr(p, ',');

		if (n < max)
			snprintf(cells[n++], 48, "%.*s", c ? (int)(c - p) : (int)strlen(p), p);
		if (!c)
			return n;
		p = c + 1;
	}
}

static bool cellv(char cells[][48], int i, double *v)
{
	char *end;

	if (i < 0 || !cells[i][0])
		return false;
	*v = strtod(cells[i], &end);
	return *end == '\0';
}

/* The rows of job @job in CSV @file, turned back from rates into counts. */
static void load(const char *file, const char *job, struct series *s)
{
	static char hdr[MAXCOL][48], cells[MAXCOL][48];
	char line[8192];
	FILE *f = fopen(file, "r");
	int nh;

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	nh = split(line, hdr, MAXCOL);
	s->n = 0;
	while (fgets(line, sizeof(line), f) && s->n < MAXROWS) {
		struct phase_row *r = &s->r[s->n];
		double v = 0, dt = 0;

		split(line, cells, MAXCOL);
		if (strcmp(cells[col(hdr, nh, "job")], job))
			continue;
		memset(r, 0, sizeof(*r));
		assert_true(cellv(cells, col(hdr, nh, "t_s"), &r->t_s));
		assert_true(cellv(cells, col(hdr, nh, "dt_s"), &dt));
		r->dt_s = dt;
		r->ramp = cellv(cells, col(hdr, nh, "ramp"), &v) && v != 0;
		if (cellv(cells, col(hdr, nh, "iops"), &v))
			r->ops = (uint64_t)llround(v * dt);
		if (cellv(cells, col(hdr, nh, "mib_s"), &v))
			r->bytes = (uint64_t)llround(v * dt * MIB);
		r->lat_ok = cellv(cells, col(hdr, nh, "lat_p50_us"), &r->lat_p50_us) &&
			    cellv(cells, col(hdr, nh, "lat_p99_us"), &r->lat_p99_us);
		if ((r->tlb_ok = cellv(cells, col(hdr, nh, "tlb_shootdowns_per_s"), &v)))
			r->tlb = (uint64_t)llround(v * dt);
		if ((r->flt_ok = cellv(cells, col(hdr, nh, "majflt_per_s"), &v)))
			r->majflt = (uint64_t)llround(v * dt);
		if ((r->evict_ok = cellv(cells, col(hdr, nh, "pgsteal_per_s"), &v)))
			r->evicted = (uint64_t)llround(v * dt);
		if ((r->dev_ok = cellv(cells, col(hdr, nh, "dev_read_mib_s"), &v)))
			r->dev_bytes = (uint64_t)llround(v * dt * MIB);
		/* The gauge: the cgroup's when the job has one, else the host's. */
		if ((r->cache_ok = cellv(cells, col(hdr, nh, "cgroup_mib"), &v)) ||
		    (r->cache_ok = cellv(cells, col(hdr, nh, "page_cache_mib"), &v)))
			r->cache_bytes = (uint64_t)llround(v * MIB);
		s->n++;
	}
	fclose(f);
	assert_true(s->n > 0);
}

/* Host cache (no mem_limit): it reaches ~15 GiB at t=8 and reclaim starts
 * at t=9, where throughput falls from ~470k to ~80k IOPS. */
static void test_host_cache_x86_randread(void **state)
{
	static struct series s;
	struct phases p;

	(void)state;
	load(FIXTURES "/csv/x86-stonewall-randread.csv", "rand-mmap", &s);
	phases_detect(s.r, s.n, 0, &p);
	assert_true(p.found);
	assert_false(p.by_limit);
	assert_false(p.by_gauge_only);
	/* t=7 is at 98 % of the peak, but nothing is stolen until t=9:
	 * the first row at the ceiling with eviction within one row is 8. */
	assert_true(fabs(p.t_s - 8.0) < 1e-9);
	assert_true(fabs(p.t_job_s - 8.0) < 1e-9);	/* the first job: from 0 */
	assert_true(p.before.ok && p.after.ok);
	assert_int_equal(p.before.rows + p.after.rows, s.n);
	assert_true(p.before.iops > 400000 && p.after.iops < 100000);
	assert_true(p.after.tlb_ok && p.before.tlb_ok);
	/* A psync job on a full host cache evicts nothing: no moment. */
	load(FIXTURES "/csv/x86-stonewall-randread.csv", "rand-psync", &s);
	phases_detect(s.r, s.n, 0, &p);
	assert_false(p.found);
	assert_non_null(p.why);
}

/* Under mem_limit: the cgroup's limit is the ceiling (1 GiB here). */
static void test_cgroup_arm64_scan(void **state)
{
	static struct series s;
	struct phases p;

	(void)state;
	load(FIXTURES "/csv/arm64-memlimit-scan.csv", "scan-mmap", &s);
	phases_detect(s.r, s.n, 1024ull << 20, &p);
	assert_true(p.found);
	assert_true(p.by_limit);
	assert_true(fabs(p.t_s - 4.0) < 1e-9);
	/* arm64: no TLB line, so no IPIs per fault in either phase. */
	assert_false(p.before.tlb_ok);
	assert_false(p.after.ipi_ok);
	assert_true(p.before.mib_s > p.after.mib_s);
	/* A limit the cgroup never came near: no moment, and why. */
	phases_detect(s.r, s.n, 4096ull << 20, &p);
	assert_false(p.found);
	assert_non_null(strstr(p.why, "limit"));
}

/*
 * A recorded run (x86-fig2-memlimit-1g.csv, 1 GiB mem_limit): each mmap
 * job's moment is the first row whose cgroup_mib reaches 95 % of the
 * limit, read here from the same CSV, and the phases split its rows.
 */
static void test_recorded_fig2_moments_match_cgroup_column(void **state)
{
	static struct series s;
	static const char *const jobs[] = { "mmap-normal", "mmap-random", "mmap-sequential" };
	struct phases p;

	(void)state;
	for (unsigned k = 0; k < 3; k++) {
		size_t first = SIZE_MAX;

		load(FIXTURES "/csv/x86-fig2-memlimit-1g.csv", jobs[k], &s);
		for (size_t i = 0; i < s.n && first == SIZE_MAX; i++)
			if (s.r[i].cache_ok && (double)s.r[i].cache_bytes >= 0.95 * 1024 * MIB)
				first = i;
		assert_true(first != SIZE_MAX);
		phases_detect(s.r, s.n, 1024ull << 20, &p);
		assert_true(p.found);
		assert_int_equal(p.row, first);
		assert_true(fabs(p.t_s - s.r[first].t_s) < 1e-9);
		assert_int_equal(p.before.rows, first + 1);
		assert_int_equal(p.after.rows, s.n - first - 1);
		/* Every row had TLB and fault counts: IPIs per fault known. */
		assert_true(p.after.ipi_ok && p.after.tlb_ok);
	}
	/* The O_DIRECT job has no cgroup_mib, only the host's page cache. */
	load(FIXTURES "/csv/x86-fig2-memlimit-1g.csv", "io_uring-direct", &s);
	for (size_t i = 0; i < s.n; i++)
		assert_true(s.r[i].cache_ok);
}

/* Ramp rows count for the moment but in neither phase. */
static void test_ramp_rows_left_out(void **state)
{
	static struct series s;
	struct phases p;

	(void)state;
	load(FIXTURES "/csv/x86-ramp-seqscan.csv", "seq-mmap", &s);
	phases_detect(s.r, s.n, 0, &p);
	if (p.found) {
		unsigned ramp = 0;

		for (size_t i = 0; i < s.n; i++)
			ramp += s.r[i].ramp;
		assert_true(ramp > 0);
		assert_int_equal(p.before.rows + p.after.rows + ramp, s.n);
	}
	phases_sum(s.r, 0, s.n, &p.before);
	for (size_t i = 0; i < s.n; i++)
		s.r[i].ramp = true;
	phases_sum(s.r, 0, s.n, &p.after);
	assert_true(p.before.ok);
	assert_false(p.after.ok);
}

static void series(struct phase_row *r, size_t n, const double *cache_mib, const double *evicted)
{
	for (size_t i = 0; i < n; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].t_s = (double)(i + 1);
		r[i].dt_s = 1;
		r[i].ops = 1000;
		r[i].bytes = 1000 * 4096;
		r[i].cache_ok = true;
		r[i].cache_bytes = (uint64_t)(cache_mib[i] * MIB);
		r[i].evict_ok = evicted != NULL;
		r[i].evicted = evicted ? (uint64_t)evicted[i] : 0;
		r[i].tlb_ok = r[i].flt_ok = true;
		r[i].tlb = 300;
		r[i].majflt = 100;
	}
}

/* The edges of the rule, one at a time. */
static void test_rule_edges(void **state)
{
	struct phase_row r[8];
	struct phases p;
	const double fill[8] = { 100, 200, 300, 380, 399, 400, 400, 400 };
	const double late[8] = { 0, 0, 0, 0, 0, 0, 0, 50 };
	const double none[8] = { 0 };
	const double at5[8] = { 0, 0, 0, 0, 0, 7, 9, 9 };

	(void)state;
	/* 380 is 95 % of 400: the first row at the ceiling. */
	series(r, 8, fill, at5);
	phases_detect(r, 8, 0, &p);
	assert_true(p.found);
	assert_int_equal(p.row, 4);	/* 399 at row 4, eviction at row 5 */
	series(r, 8, fill, NULL);
	phases_detect(r, 8, 0, &p);
	assert_true(p.found && p.by_gauge_only);
	assert_int_equal(p.row, 3);	/* no eviction source: 380 decides */
	series(r, 8, fill, none);
	phases_detect(r, 8, 0, &p);
	assert_false(p.found);		/* a source, and nothing evicted */
	series(r, 8, fill, late);
	phases_detect(r, 8, 0, &p);
	assert_true(p.found);
	assert_int_equal(p.row, 6);	/* eviction at row 7: the row before */
	/* Under a 400 MiB limit, 380 is at it: row 3, eviction or not. */
	series(r, 8, fill, none);
	phases_detect(r, 8, 400ull << 20, &p);
	assert_true(p.found && p.by_limit);
	assert_int_equal(p.row, 3);
	assert_int_equal(p.before.rows, 4);
	assert_int_equal(p.after.rows, 4);
	/* 300 TLB IPIs over 100 major faults in every row. */
	assert_true(p.after.ipi_ok);
	assert_true(fabs(p.after.ipi_per_majflt - 3.0) < 1e-9);
	assert_true(fabs(p.after.iops - 1000.0) < 1e-9);
	/* A row without fault counts: no IPI ratio for its phase. */
	r[6].flt_ok = false;
	phases_sum(r, 4, 8, &p.after);
	assert_false(p.after.ipi_ok);
	assert_true(p.after.tlb_ok);
	/* No gauge at all. */
	for (int i = 0; i < 8; i++)
		r[i].cache_ok = false;
	phases_detect(r, 8, 0, &p);
	assert_false(p.found);
	phases_detect(r, 0, 0, &p);
	assert_false(p.found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_cache_x86_randread),
		cmocka_unit_test(test_cgroup_arm64_scan),
		cmocka_unit_test(test_ramp_rows_left_out),
		cmocka_unit_test(test_recorded_fig2_moments_match_cgroup_column),
		cmocka_unit_test(test_rule_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
