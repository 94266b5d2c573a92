/*
 * test_samplecols.c - the CSV's column table (sample/samplecols.c): the
 * header is the table's names in order, each name says its unit, each
 * is in the man page's CSV COLUMNS section, a row has a cell per column
 * and no more, and the host cells kept for a sample's later rows are
 * those a row would make afresh, and made afresh when the host readings
 * differ, and a job's plans (its fixed cells copied in runs, for a
 * row with work and for an idle row) make the rows its rows would make
 * cell by cell.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sample/samplecols.h"

static void test_header_is_the_table(void **state)
{
	const char *h = samplecols_header();
	size_t off = 0;

	(void)state;
	assert_true(samplecols_n > 60);
	for (size_t i = 0; i < samplecols_n; i++) {
		size_t n = strlen(samplecols[i].name);

		assert_memory_equal(h + off, samplecols[i].name, n);
		off += n;
		assert_int_equal(h[off], i + 1 < samplecols_n ? ',' : '\0');
		off++;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(samplecols[k].name, samplecols[i].name))
				fail_msg("column %s twice", samplecols[i].name);
	}
	assert_string_equal(samplecols[0].name, "t_s");
}

static bool ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* A name's suffix is its unit's: the CSV's readers go by the name. */
static void test_units_match_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < samplecols_n; i++) {
		const struct sample_col *c = &samplecols[i];
		const char *want = ends(c->name, "_per_s") || ends(c->name, "iops") ? "/s"
				 : ends(c->name, "mib_s") ? "MiB/s"
				 : ends(c->name, "_mib") ? "MiB"
				 : ends(c->name, "_pct") ? "%"
				 : ends(c->name, "_us") || ends(c->name, "_per_4k") ? "us"
				 : ends(c->name, "_ms") ? "ms"
				 : ends(c->name, "_s") ? "s" : "";

		if (strcmp(c->unit, want))
			fail_msg("%s: unit \"%s\", its name says \"%s\"", c->name, c->unit, want);
		assert_non_null(c->fill);
		assert_true(c->src < SRC_NR);
	}
}

static void test_man_page_lists_every_column(void **state)
{
	FILE *f = fopen(FIXTURES "/../../man/faultline.1", "r");
	char line[4096], *sec = NULL;
	size_t len = 0;
	bool in = false;

	(void)state;
	if (!f)
		fail_msg("%s: cannot open", FIXTURES "/../../man/faultline.1");
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, ".SH ", 4))
			in = !strncmp(line, ".SH CSV COLUMNS", 15);
		else if (in) {
			sec = realloc(sec, len + strlen(line) + 1);
			assert_non_null(sec);
			strcpy(sec + len, line);
			len += strlen(line);
		}
	}
	fclose(f);
	assert_non_null(sec);
	for (size_t i = 0; i < samplecols_n; i++)
		if (!strstr(sec, samplecols[i].name))
			fail_msg("%s is not in the man page's CSV COLUMNS", samplecols[i].name);
	free(sec);
}

/* A row of a read job at one moment, against a sampler made by hand. */
struct fixture {
	struct hist lat[3];
	struct job job;
	struct sampler_job sj;
	struct sys_snap sys, ps;
	struct sample_row r;
};

static void fixture(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	for (unsigned k = 0; k < 3; k++)
		hist_init(&f->lat[k]);
	snprintf(f->job.name, sizeof(f->job.name), "j");
	snprintf(f->job.ioengine, sizeof(f->job.ioengine), "psync");
	f->sj.job = &f->job;
	f->sj.nworkers = 1;
	f->sys.seq = 2;
	f->ps.seq = 1;
	f->sys.mem_ok = f->ps.mem_ok = true;
	f->sys.mem.bytes[PROCFS_MEM_CACHED] = 512ull << 20;
	f->sys.mem.present = 1u << PROCFS_MEM_CACHED;
	f->r = (struct sample_row){ .sj = &f->sj, .t0 = 1000000000ull, .hz = 100,
				    .rlat = &f->lat[0], .wlat = &f->lat[1], .slat = &f->lat[2],
				    .sys = &f->sys, .ps = &f->ps,
				    .now = 2000000000ull, .dt = 1.0, .rops = 100, .rbytes = 409600 };
}

static size_t commas(const char *p, const char *end)
{
	size_t n = 0;

	for (; p < end; p++)
		n += *p == ',';
	return n;
}

static void test_row_has_a_cell_per_column(void **state)
{
	struct fixture *f = malloc(sizeof(*f));
	char line[2048], *end;

	(void)state;
	fixture(f);
	end = samplecols_write(&f->r, NULL, line, line + sizeof(line));
	assert_int_equal(commas(line, end), samplecols_n - 1);
	*end = '\0';
	/* t_s, epoch_ms, dt_s, job, engine, rw, threads, ramp, iops, mib_s */
	assert_memory_equal(line, "1.000,1000,1.000,j,psync,read,1,0,100.0,0.391,", 46);
	free(f);
}

static void test_host_cells_kept_only_for_their_readings(void **state)
{
	struct fixture *f = malloc(sizeof(*f));
	struct samplecols_cache *hc = samplecols_cache_new();
	char a[2048], b[2048], c[2048], *ea, *eb, *ec;

	(void)state;
	fixture(f);
	ea = samplecols_write(&f->r, NULL, a, a + sizeof(a));
	eb = samplecols_write(&f->r, hc, b, b + sizeof(b));
	assert_int_equal(ea - a, eb - b);
	assert_memory_equal(a, b, (size_t)(ea - a));
	/* Another host reading under the same seq would be a bug the
	 * cache hides: a new reading has a new seq, and is formatted anew. */
	f->sys.mem.bytes[PROCFS_MEM_CACHED] = 1024ull << 20;
	f->sys.seq = 3;
	ec = samplecols_write(&f->r, hc, c, c + sizeof(c));
	*ec = '\0';
	assert_non_null(strstr(c, ",1024.0,"));
	*eb = '\0';
	assert_non_null(strstr(b, ",512.0,"));
	samplecols_cache_free(hc);
	free(f);
}

/* Every source of the row read and moving, but what @fx says the job
 * has not (a read job counts no write, ...). */
static void busy_row(struct fixture *f, const struct samplecols_fixed *fx)
{
	struct sample_row *r = &f->r;

	r->ramp = false;
	r->faults_ok = r->cpu_ok = true;
	r->majflt = 3, r->minflt = 70, r->cpu_ns = 123456789;
	r->probe = f->sj.slots.nprobe ? 17 : 0;
	for (unsigned k = 0; k < 3; k++)
		hist_add(&f->lat[0], 1500 + 1000 * k);
	r->lat = true, r->p50 = 2.5, r->p99 = 3.5, r->pmax = 3.5;
	if (fx->writes) {
		r->wops = 40, r->wbytes = 40 * 4096, r->syncs = 2;
		hist_add(&f->lat[1], 9000);
		hist_add(&f->lat[2], 250000);
	}
	if (f->sj.pool)
		r->hits = 90, r->misses = 10, r->evictions = 5;
	if (f->sj.pool_batches)
		r->batches = 2;
	r->cg_ok = fx->cgroup, r->cg_bytes = fx->cgroup ? 64ull << 20 : 0;
	r->dev_ok = fx->devs;
	if (fx->devs)
		r->dev_rbytes = 8192, r->dev_rios = 2, r->dev_wbytes = 4096, r->dev_wios = 1;
	for (unsigned c = 0; c < PERFEV_NR; c++) {
		r->ev_ok[c] = fx->ev;
		r->ev_d[c] = fx->ev ? 11 * (c + 1) : 0;
	}
	for (unsigned k = 0; k < EXPLAIN_NFIGS; k++) {
		r->x.ok[k] = true;
		r->x.v[k] = 1.25 * (k + 1);
	}
	r->x.ok[EXPLAIN_CG_SOME] = r->x.ok[EXPLAIN_CG_FULL] = fx->cgroup;
	r->x.ok[EXPLAIN_READ_AMP] = fx->devs;
	r->wb_zero = fx->wb_zero;
	r->wb_ok = fx->wb_traced;
	r->wb_own = fx->wb_traced ? 1 << 20 : 0, r->wb_kernel = fx->wb_traced ? 3 << 20 : 0;
	r->time_ok = fx->delayacct;
	for (unsigned k = 0; fx->delayacct && k < TIMESHARE_NPARTS; k++)
		r->tenths[k] = 10 * k + 3;
}

/* Row f->r made by plan @jc (the host's cells made, then kept) is the
 * row made cell by cell; and so with its sources' gates closed one by
 * one: faults unread, a single kernel counter read, none. */
static void same_rows(struct fixture *f, const struct samplecols_fixed *fx, const struct samplecols_job *jc,
		      struct samplecols_cache *hc)
{
	char a[2048], b[2048], c[2048], *ea, *eb, *ec;

	for (unsigned v = 0; v < 4; v++) {
		if (v == 1)
			f->r.faults_ok = false;
		/* (a job without counters has none read) */
		if (v >= 2)
			for (unsigned k = 0; k < PERFEV_NR; k++)
				f->r.ev_ok[k] = fx->ev && v == 2 && k == PERFEV_CSW;
		f->r.jc = NULL;
		ea = samplecols_write(&f->r, NULL, a, a + sizeof(a));
		f->r.jc = jc;
		f->sys.seq += 2;
		eb = samplecols_write(&f->r, hc, b, b + sizeof(b));
		ec = samplecols_write(&f->r, hc, c, c + sizeof(c));
		*ea = *eb = *ec = '\0';
		assert_string_equal(a, b);
		assert_string_equal(a, c);
		assert_int_equal(commas(a, ea), samplecols_n - 1);
	}
}

/* A job's cells kept as fixed runs (samplecols_job_cells) are what its
 * rows make afresh: jobs of every kind, the host's cells kept or not. */
static void test_fixed_cells_are_the_rows(void **state)
{
	const struct samplecols_fixed kinds[] = {
		{ .ev = true, .devs = true },				/* psync read */
		{ .devs = true },					/* ... without counters */
		{ .writes = true, .devs = true, .wb_traced = true, .ev = true },
		{ .writes = true, .wb_zero = true, .cgroup = true, .delayacct = true },
		{ .wb_zero = true, .delayacct = true },			/* O_DIRECT read */
	};
	struct fixture *f = malloc(sizeof(*f));
	struct samplecols_job *jc = malloc(sizeof(*jc));
	struct samplecols_cache *hc = samplecols_cache_new();

	(void)state;
	for (unsigned k = 0; k <= sizeof(kinds) / sizeof(kinds[0]); k++)
		for (unsigned pool = 0; pool < 3; pool++) {
			bool long_name = k == sizeof(kinds) / sizeof(kinds[0]);
			const struct samplecols_fixed *fx = &kinds[long_name ? 0 : k];

			fixture(f);
			/* Last, a name too long to keep: every cell made. */
			if (long_name)
				memset(f->job.name, 'n', sizeof(f->job.name) - 1);
			f->job.rw = fx->writes ? RW_RANDRW : RW_RANDREAD;
			f->sj.pool = pool > 0;
			f->sj.pool_batches = pool > 1;
			f->sj.slots.nprobe = pool == 1;
			busy_row(f, fx);
			samplecols_job_cells(jc, &f->sj, fx);
			/* A long name may not fit: then no plan, every cell made. */
			assert_true(long_name ? jc->plan[0].nseg != 1 : jc->plan[0].nseg > 2);
			assert_false(samplecols_row_idle(&f->r));
			same_rows(f, fx, jc, hc);
		}
	samplecols_cache_free(hc);
	free(jc);
	free(f);
}

/* How many of a row's cells a plan makes from the row. */
static unsigned made(const struct samplecols_plan *pl)
{
	unsigned n = 0;

	for (unsigned k = 0; k < pl->nseg; k++)
		n += samplecols_plan_seg(pl)[k].kind == SEG_CELL ? samplecols_plan_seg(pl)[k].n : 0;
	return n;
}

/* An idle row: the job's workers counted nothing since its last row,
 * every other source read and moving. */
static void idle_row(struct fixture *f, const struct samplecols_fixed *fx)
{
	struct sample_row *r = &f->r;

	busy_row(f, fx);
	r->rops = r->rbytes = r->probe = r->wops = r->wbytes = r->syncs = 0;
	r->hits = r->misses = r->evictions = r->batches = 0;
	r->lat = false, r->p50 = r->p99 = r->pmax = 0;
	for (unsigned k = 0; k < 3; k++)
		hist_clear(&f->lat[k]);
}

/* An idle row by the idle plan is the row made cell by cell, for jobs
 * of every kind; and a row in which any one of the workers' figures
 * moved is not idle, so it takes the other plan and its cell shows. */
static void test_idle_plan_is_the_rows(void **state)
{
	const struct samplecols_fixed kinds[] = {
		{ .ev = true, .devs = true },
		{ .writes = true, .devs = true, .wb_traced = true, .ev = true },
		{ .writes = true, .wb_zero = true, .cgroup = true, .delayacct = true },
	};
	/* One figure at a time moved from idle: the row must not be. */
	static const size_t moved[] = {
		offsetof(struct sample_row, rops), offsetof(struct sample_row, rbytes),
		offsetof(struct sample_row, probe), offsetof(struct sample_row, wops),
		offsetof(struct sample_row, wbytes), offsetof(struct sample_row, syncs),
		offsetof(struct sample_row, hits), offsetof(struct sample_row, misses),
		offsetof(struct sample_row, evictions), offsetof(struct sample_row, batches),
	};
	struct fixture *f = malloc(sizeof(*f));
	struct samplecols_job *jc = malloc(sizeof(*jc));
	struct samplecols_cache *hc = samplecols_cache_new();

	(void)state;
	for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (unsigned pool = 0; pool < 3; pool++)
			for (size_t m = 0; m <= sizeof(moved) / sizeof(moved[0]) + 1; m++) {
				const struct samplecols_fixed *fx = &kinds[k];

				fixture(f);
				f->job.rw = fx->writes ? RW_RANDRW : RW_RANDREAD;
				f->sj.pool = pool > 0;
				f->sj.pool_batches = pool > 1;
				f->sj.slots.nprobe = pool == 1;
				f->job.latency = true;
				idle_row(f, fx);
				samplecols_job_cells(jc, &f->sj, fx);
				assert_true(jc->plan[1].nseg > 2);
				assert_true(made(&jc->plan[1]) < made(&jc->plan[0]));
				if (m < sizeof(moved) / sizeof(moved[0])) {
					uint64_t one = 4096;
					size_t at = moved[m];

					/* Only what the job can count: a read job's
					 * rows never count a write, ... */
					if (((at == offsetof(struct sample_row, wops) ||
					      at == offsetof(struct sample_row, wbytes) ||
					      at == offsetof(struct sample_row, syncs)) && !fx->writes) ||
					    (at == offsetof(struct sample_row, probe) && !f->sj.slots.nprobe) ||
					    (at >= offsetof(struct sample_row, hits) &&
					     at <= offsetof(struct sample_row, evictions) && !f->sj.pool) ||
					    (at == offsetof(struct sample_row, batches) && !f->sj.pool_batches))
						continue;
					memcpy((char *)&f->r + at, &one, sizeof(one));
				} else if (m == sizeof(moved) / sizeof(moved[0])) {
					if (!fx->writes)
						continue;
					hist_add(&f->lat[1 + pool % 2], 7000);	/* a write's or a flush's latency */
				}
				assert_int_equal(samplecols_row_idle(&f->r), m > sizeof(moved) / sizeof(moved[0]));
				same_rows(f, fx, jc, hc);
			}
	samplecols_cache_free(hc);
	free(jc);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_is_the_table),
		cmocka_unit_test(test_units_match_names),
		cmocka_unit_test(test_man_page_lists_every_column),
		cmocka_unit_test(test_row_has_a_cell_per_column),
		cmocka_unit_test(test_host_cells_kept_only_for_their_readings),
		cmocka_unit_test(test_fixed_cells_are_the_rows),
		cmocka_unit_test(test_idle_plan_is_the_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
