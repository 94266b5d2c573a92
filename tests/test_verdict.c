/*
 * test_verdict.c - the verdict's planner (verdict_plan_make) and its job
 * text: the memory budget and file follow the time budget and the host,
 * reserve_mem stands in for a cgroup where none can be made, a target too
 * small or a budget too short is refused, and the plan fits its budget;
 * a trace's streams are one workload, judged as its logs allow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/jobfile.h"
#include "verdict/probe.h"
#include "verdict/verdict.h"
#include "verdict/vjobs.h"

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
	assert_int_equal(p5.cells_per_round, 20);
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
	assert_int_equal(p.cells_per_round, 17);
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
	p.pool_prefetch = 8;
	for (int w = 0; w < JW_JOB; w++)
		for (int en = 0; en < JE_NR; en++) {
			struct joblist jl = { 0 };
			struct judge_wl wl;

			judge_wl_fixed(w, &wl);
			if (!judge_engine_in(&wl, en))
				continue;
			verdict_job_text(&p, w, en, 0, "t", buf, sizeof(buf));
			if (jobfile_parse_text(&jl, "t", buf, &e))
				fail_msg("%s/%s: %s\n%s", judge_workload_key(w), judge_engine_key(en), e.msg, buf);
			assert_int_equal(jl.n, 1);
			joblist_free(&jl);
		}
}

/* A user's job file: each job a workload with its options as written,
 * less what the verdict sets; its memory its own mem_limit or pool_size;
 * a write job on its own file not judged without --write-probe; every
 * cell's job text a job file that parses, with the engine's options. */
static void test_job_file(void **state)
{
	char path[] = "/tmp/test_verdict.XXXXXX", *files[1] = { path };
	struct verdict_data d = { 0 };
	struct verdict_plan p;
	struct err e = { 0 };
	char buf[8192];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	(void)state;
	assert_non_null(f);
	fputs("; my database\n[global]\nsize=64m\nioengine=mmap\nnumjobs=2\n"
	      "[lookups]\nrw=randread\nrandom_distribution=zipf:0.8\nmem_limit=48m\niodepth=8\n"
	      "# a scan\n[scan]\nrw=read\nbs=64k\nruntime=100s\n"
	      "[log]\nfilename=/tmp/nonexistent-verdict-target\nrw=write\n", f);
	fclose(f);
	assert_int_equal(verdict_jobs_load(files, 1, false, &d, false, &e), 0);
	unlink(path);
	assert_int_equal(d.nwl, 3);
	assert_string_equal(d.wls[0].jw.key, "lookups");
	assert_true(d.wls[0].mem_own);
	assert_int_equal(d.wls[0].mem, 48 * MIB);
	assert_false(d.wls[1].mem_own);
	assert_int_equal(d.wls[0].jw.by, JB_IOPS);
	assert_int_equal(d.wls[1].jw.by, JB_MIBS);
	assert_true(d.wls[1].jw.seq);
	assert_int_equal(d.wls[1].pool_page, 64 * 1024);
	assert_non_null(strstr(d.wls[0].base, "random_distribution=zipf:0.8"));
	assert_non_null(strstr(d.wls[0].base, "numjobs=2"));
	assert_null(strstr(d.wls[0].base, "ioengine"));
	assert_null(strstr(d.wls[0].base, "mem_limit"));
	assert_null(strstr(d.wls[0].base, "iodepth"));
	assert_null(strstr(d.wls[1].base, "runtime"));
	assert_non_null(strstr(d.wls[2].skip, "--write-probe"));
	assert_int_equal(verdict_plan_make(&big, 300 * S, true, "", &p, &e), 0);
	strcpy(p.target, "/var/tmp/x.dat");
	p.depth = 64;
	p.ra_bytes = 8 << 20;
	d.wls[1].mem = p.mem;
	for (unsigned w = 0; w < 2; w++)
		for (int en = 0; en < JE_NR; en++) {
			struct joblist jl = { 0 };

			if (!judge_engine_in(&d.wls[w].jw, en))
				continue;
			assert_true(verdict_jobs_text_len(&d.wls[w]) <= sizeof(buf));
			verdict_jobs_text(&p, &d.wls[w], en, 0, "t", buf, sizeof(buf));
			if (jobfile_parse_text(&jl, "t", buf, &e))
				fail_msg("%s/%s: %s\n%s", d.wls[w].jw.key, judge_engine_key(en), e.msg, buf);
			assert_int_equal(jl.n, 1);
			assert_int_equal(jl.jobs[0]->numjobs, 2);
			if (en == JE_URING_DEPTH)
				assert_int_equal(jl.jobs[0]->iodepth, 32);
			if (en == JE_BUFPOOL)
				assert_int_equal(jl.jobs[0]->pool_size, d.wls[w].mem);
			if (en == JE_BUFPOOL && w == 1)
				assert_true(jl.jobs[0]->pool_prefetch > 0);
			if (en == JE_MMAP_NORMAL)
				assert_int_equal(jl.jobs[0]->mem_limit, d.wls[w].mem);
			if (w == 0)
				assert_int_equal(jl.jobs[0]->random_distribution, DIST_ZIPF);
			joblist_free(&jl);
		}
	verdict_jobs_free(&d);
}

/* A log of @n 4 KiB reads of @file, version @v, @us apart. */
static void write_log(const char *path, const char *file, int v, unsigned n, unsigned us)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "fio version %d iolog\n", v);
	fprintf(f, v == 2 ? "%s add\n%s open\n" : "0 %s add\n0 %s open\n", file, file);
	for (unsigned i = 0; i < n; i++) {
		if (v == 3)
			fprintf(f, "%u ", i * us);
		fprintf(f, "%s read %u 4096\n", file, (i * 7 % 64) * 4096);
	}
	fclose(f);
}

/* A file of streams, as faultline --capture writes one (a job per traced
 * thread, each replaying its own log): one workload of them all, keyed by
 * the file, replayed together as one job's threads. Its timed logs make
 * it two workloads: at its own pace (p99, the trace's own rate once the
 * plan is made, no depth cell) and as fast as it goes (the time to replay
 * all of it, the depth cell beside). An untimed log (version 2) is only
 * the second; a stonewall keeps a job apart; a link to nothing is said. */
static void test_trace_streams(void **state)
{
	char dir[] = "/tmp/test_verdict.XXXXXX", path[256], data[256], a[256], b[256], c[256], gone[256];
	char buf[16384], *files[1] = { path };
	struct verdict_data d = { 0 };
	struct err e = { 0 };
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(data, sizeof(data), "%s/db", dir);
	snprintf(a, sizeof(a), "%s/a.iolog", dir);
	snprintf(b, sizeof(b), "%s/b.iolog", dir);
	snprintf(c, sizeof(c), "%s/c.iolog", dir);
	snprintf(gone, sizeof(gone), "%s/gone.iolog", dir);
	snprintf(path, sizeof(path), "%s/capture.job", dir);
	write_log(a, data, 3, 100, 1000);	/* 100 reads over 0.099 s */
	write_log(b, data, 3, 50, 1000);
	write_log(c, data, 2, 30, 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "[global]\nrw=read\n[pg-1]\nread_iolog=%s\n[pg-2]\nread_iolog=%s\n"
		"[later]\nstonewall\nread_iolog=%s\n", a, b, c);
	fclose(f);
	assert_int_equal(verdict_jobs_load(files, 1, false, &d, false, &e), 0);
	assert_int_equal(d.nwl, 3);
	/* The two streams: at their own pace, then as fast as they go. */
	assert_string_equal(d.wls[0].jw.key, "capture");
	assert_string_equal(d.wls[1].jw.key, "capture-fast");
	for (unsigned w = 0; w < 2; w++) {
		assert_int_equal(d.wls[w].threads, 2);
		assert_int_equal(d.wls[w].jw.streams, 2);
		assert_true(d.wls[w].jw.replay);
		assert_true(d.wls[w].jw.trace_ios == 150);
		assert_non_null(strstr(d.wls[w].trace, ":"));
		assert_string_equal(d.wls[w].target, data);
	}
	assert_int_equal(d.wls[0].jw.by, JB_P99);
	assert_true(d.wls[0].jw.paced);
	assert_false(judge_engine_in(&d.wls[0].jw, JE_URING_DEPTH));
	assert_non_null(strstr(d.wls[0].jw.name, "at its own pace"));
	assert_int_equal(d.wls[1].jw.by, JB_TIME);
	assert_true(judge_engine_in(&d.wls[1].jw, JE_URING_DEPTH));
	assert_non_null(strstr(d.wls[1].jw.name, "as fast as it goes"));
	/* The stonewalled job alone, untimed: by time only. */
	assert_string_equal(d.wls[2].jw.key, "later");
	assert_int_equal(d.wls[2].jw.by, JB_TIME);
	assert_int_equal(d.wls[2].threads, 1);
	/* The pace, once the plan is: both streams' reads over the longer's
	 * span (0.099 s), a bound well past it. */
	assert_int_equal(verdict_plan_make(&big, 300 * S, true, "", &d.plan, &e), 0);
	assert_int_equal(verdict_jobs_prepare(&d, dir, &e), 0);
	assert_true(fabs(d.wls[0].jw.rate_iops - 150 / 0.099) < 1e-6 * d.wls[0].jw.rate_iops);
	assert_true(d.wls[1].jw.rate_iops == 0);
	/* The O_DIRECT blocks are written once for both of them. */
	assert_non_null(strstr(d.wls[0].trace_direct, "capture.1.direct.iolog"));
	assert_string_equal(d.wls[1].trace_direct, d.wls[0].trace_direct);
	for (unsigned w = 0; w < 2; w++) {
		struct joblist jl = { 0 };

		d.wls[w].mem = d.plan.mem;	/* as setup gives a job that sets none */
		assert_true(verdict_jobs_text_len(&d.wls[w]) <= sizeof(buf));
		verdict_jobs_text(&d.plan, &d.wls[w], JE_BUFPOOL, 0, "t", buf, sizeof(buf));
		if (jobfile_parse_text(&jl, "t", buf, &e))
			fail_msg("%s: %s\n%s", d.wls[w].jw.key, e.msg, buf);
		assert_int_equal(jl.jobs[0]->numjobs, 2);
		assert_int_equal(jl.jobs[0]->replay_no_stall, w == 1);
		assert_non_null(strstr(jl.jobs[0]->read_iolog, ":"));
		joblist_free(&jl);
	}
	verdict_jobs_free(&d);
	/* A trace whose file is a link to nothing is not judged, and says so. */
	snprintf(data, sizeof(data), "%s/link", dir);
	assert_int_equal(symlink("nowhere", data), 0);
	write_log(gone, data, 2, 10, 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "[gone]\nread_iolog=%s\n", gone);
	fclose(f);
	memset(&d, 0, sizeof(d));
	assert_int_equal(verdict_jobs_load(files, 1, false, &d, false, &e), 0);
	assert_non_null(strstr(d.wls[0].skip, "is a symbolic link to nowhere, which does not exist"));
	verdict_jobs_free(&d);
	snprintf(buf, sizeof(buf), "rm -rf '%s'", dir);
	assert_int_equal(system(buf), 0);
}

/* The probe's rule: the smallest depth within 10 % of the best rate. */
static void test_depth_pick(void **state)
{
	const unsigned d[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
	const double iops[] = { 4275, 21028, 30073, 47158, 68624, 87336, 106733, 118048, 119877 };
	const double flat[] = { 100, 100, 100 };

	(void)state;
	assert_int_equal(verdict_depth_pick(d, iops, 9), 128);
	assert_int_equal(verdict_depth_pick(d, flat, 3), 1);
	assert_int_equal(verdict_depth_pick(d, flat, 0), VERDICT_DEPTH_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_follow_budget),
		cmocka_unit_test(test_reserve_mem_without_cgroup),
		cmocka_unit_test(test_existing_target),
		cmocka_unit_test(test_budget_too_short),
		cmocka_unit_test(test_job_text_parses),
		cmocka_unit_test(test_depth_pick),
		cmocka_unit_test(test_job_file),
		cmocka_unit_test(test_trace_streams),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
