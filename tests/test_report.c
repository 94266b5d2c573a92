/*
 * test_report.c - the writers: JSON (json_out.c) and the human summary
 * (report.c), from a run_result built by hand.
 *
 * Two jobs: "psync-rand" ran fine with latency, faults and device
 * traffic; "mmap-fail" failed with EIO and every telemetry source of it
 * unreadable. Unreadable figures are deliberately left at 0 in the
 * structs, so a writer that ignores an _ok flag prints that 0 and fails.
 *
 * Jobs start from option_defaults(), so faultline's resolved options
 * are checked against the real option table; fio's "job options" lists
 * only what job_a's section set (job_a_opts).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "out/json_out.h"
#include "job/options.h"
#include "out/report.h"
#include "out/results.h"


#define MiB (1024ull * 1024)
#define NS_PER_S 1000000000ull

static struct job job_a, job_b;
static struct job_result jobs[2];
static struct target_result tgt_a = {
	.path = "/data/a", .base = 0, .len = 1024 * MiB, .device = "vda1 on vda",
};
static struct run_result res;
/* As the parser keeps them: a bare key has no text. */
static struct job_opt job_a_opts[] = {
	{ .key = "rw", .val = "randread" }, { .key = "bs", .val = "4k" },
	{ .key = "time_based", .val = NULL },
};
static struct job_opt globals[] = {
	{ .key = "bs", .val = "4k" }, { .key = "time_based", .val = "1" }, { .key = "bs", .val = "8k" },
};

/* As collect_job resolves it: the writers' view of @j, and @j for the
 * option lists. Again after a test changes a job's options. */
static void job_result_of(struct job_result *r, const struct job *j)
{
	out_job_set(&r->job, j);
	r->options = j;
}

static void build_result(void)
{
	struct job_result *a = &jobs[0], *b = &jobs[1];

	option_release(&job_a);
	option_release(&job_b);
	option_defaults(&job_a);
	snprintf(job_a.name, sizeof(job_a.name), "psync-rand");
	job_a.filename = strdup("/data/a");
	job_a.size = 1024 * MiB;
	job_a.rw = RW_RANDREAD;
	job_a.bs = 4096;
	snprintf(job_a.ioengine, sizeof(job_a.ioengine), "psync");
	job_a.runtime_ns = 10 * NS_PER_S;
	job_a.ramp_ns = 500000000;
	job_a.touch = TOUCH_STRIDE;
	job_a.touch_stride = 64;
	job_a.random_distribution = DIST_ZIPF;
	job_a.zipf_theta = 1.2;
	job_a.src.opts = job_a_opts;
	job_a.src.nopts = 3;

	assert_int_equal(option_copy(&job_b, &job_a), 0);
	job_b.src.opts = NULL;
	job_b.src.nopts = 0;
	snprintf(job_b.name, sizeof(job_b.name), "mmap-fail");
	snprintf(job_b.ioengine, sizeof(job_b.ioengine), "mmap");
	job_b.rw = RW_READ;
	job_b.bs = 128 * 1024;
	job_b.touch = TOUCH_PAGE;
	job_b.random_distribution = DIST_RANDOM;
	job_b.latency = false;
	job_b.stonewall = true;

	memset(jobs, 0, sizeof(jobs));
	job_result_of(a, &job_a);
	a->nthreads = 1;
	a->rops = 1228800;
	a->rbytes = a->rops * 4096;
	a->runtime_ns = 10 * NS_PER_S + 123456;
	a->lat_ok = true;
	hist_init(&a->lat);
	for (unsigned i = 0; i < 10000; i++)
		hist_add(&a->lat, 1200 + (uint64_t)i * 3);
	hist_add(&a->lat, 812000);
	a->faults_ok = true;
	a->majflt = 3;
	a->minflt = 12;
	a->ntargets = 1;
	a->targets = &tgt_a;
	a->ndevs = 1;
	snprintf(a->devs[0].name, sizeof(a->devs[0].name), "vda");
	snprintf(a->devs[0].role, sizeof(a->devs[0].role), "disk");
	a->devs[0].ok = true;
	a->devs[0].read_bytes = 5136 * MiB;
	a->devs[0].read_ios = 1314816;
	a->dev_ok = true;
	a->dev_read_bytes = 5136 * MiB;
	a->read_amp = 1.07;
	/* fio's per-job figures: 2.5 s user and 1 s system CPU over 10 s of
	 * one thread; four per-interval samples; an async job's depths. */
	a->thread_ns = 10 * NS_PER_S;
	a->cpu_ok = true;
	a->cpu_thread_ns = 10 * NS_PER_S;
	a->usr_ns = 2500000000ull;
	a->sys_ns = 1000000000ull;
	a->ctx = 4321;
	a->depth.level[2] = 1228000;
	a->depth.level[0] = 800;
	a->depth.submit[1] = 307200;
	a->depth.complete[1] = 307200;
	for (unsigned i = 0; i < 4; i++) {
		fiostat_series_add(&a->read_iops, 120000 + 1000 * i);
		fiostat_series_add(&a->read_bw, 480000 + 4000 * i);
	}

	/* Failed, and nothing about it readable: every figure left 0. */
	job_result_of(b, &job_b);
	b->nthreads = 2;
	b->rops = 1000;
	b->rbytes = 1000 * 128 * 1024;
	b->runtime_ns = 2 * NS_PER_S;
	b->lat_ok = false;
	hist_init(&b->lat);
	b->error = EIO;
	snprintf(b->errmsg, sizeof(b->errmsg), "target /data/b offset 4096: SIGBUS");
	b->faults_ok = false;
	b->ndevs = 1;
	snprintf(b->devs[0].name, sizeof(b->devs[0].name), "sdb");
	b->devs[0].ok = false;
	b->dev_ok = false;
	b->probe_ok = false;

	memset(&res, 0, sizeof(res));
	res.version = "0.1.0-test";
	res.globals = globals;
	res.nglobals = 3;
	res.interval_ns = NS_PER_S;
	res.start_epoch_ms = 1795314357499ull;
	res.duration_ns = 12 * NS_PER_S + 700000000;
	res.njobs = 2;
	res.jobs = jobs;
	res.sys.tlb_ok = false;
	res.sys.kswapd_ok = true;
	res.sys.kswapd_cpu_s = 1.25;
	res.sys.vm_ok = false;
	res.sys.cache_ok = true;
	res.sys.cache_start = 100 * MiB;
	res.sys.cache_end = 1124 * MiB;
	snprintf(res.host.hostname, sizeof(res.host.hostname), "testhost");
	snprintf(res.host.kernel, sizeof(res.host.kernel), "Linux 6.1.0 x86_64");
	res.host.ncpus = 2;
	res.host.numa_nodes = 1;
	res.host.mem_total = 0;	/* unreadable */
}

static int setup(void **state)
{
	(void)state;
	build_result();
	return 0;
}

/* The document as a consumer sees it: dumped with @flags, then parsed back. */
static json_t *dumped_with(unsigned flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct err e = { 0 };
	json_error_t je;
	json_t *doc;

	assert_non_null(f);
	assert_int_equal(json_out_dump(f, &res, flags, &e), 0);
	fclose(f);
	doc = json_loads(buf, 0, &je);
	if (!doc)
		fail_msg("JSON does not parse: %s at line %d", je.text, je.line);
	free(buf);
	return doc;
}

static json_t *dumped(void)
{
	return dumped_with(0);
}

static char *summary(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(report_normal(f, &res), 0);
	fclose(f);
	return buf;
}

static json_t *path_get(json_t *root, const char *path)
{
	char tmp[256], *save = NULL, *tok;
	json_t *cur = root;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (tok = strtok_r(tmp, "/", &save); tok && cur; tok = strtok_r(NULL, "/", &save)) {
		if (json_is_array(cur))
			cur = json_array_get(cur, strtoul(tok, NULL, 10));
		else
			cur = json_object_get(cur, tok);
	}
	if (!cur)
		fail_msg("JSON has no %s", path);
	return cur;
}

static double num_at(json_t *root, const char *path)
{
	json_t *v = path_get(root, path);

	if (!json_is_number(v))
		fail_msg("%s is not a number", path);
	return json_number_value(v);
}

static const char *str_at(json_t *root, const char *path)
{
	json_t *v = path_get(root, path);

	if (!json_is_string(v))
		fail_msg("%s is not a string", path);
	return json_string_value(v);
}

static void assert_null_at(json_t *root, const char *path)
{
	json_t *v = path_get(root, path);

	if (!json_is_null(v))
		fail_msg("%s should be null (unreadable), is %s", path,
			 json_is_number(v) ? "a number" : "not null");
}

static void assert_close(double a, double b)
{
	if (fabs(a - b) > 1e-9 * fabs(b) + 1e-9)
		fail_msg("%.17g != %.17g", a, b);
}

/* ------------------------------------------------------------------ */

static void test_json_top_level(void **state)
{
	json_t *doc = dumped();

	(void)state;
	assert_string_equal(str_at(doc, "faultline version"), "faultline-0.1.0-test");
	assert_true(json_is_integer(path_get(doc, "timestamp")));
	assert_int_equal(num_at(doc, "timestamp"), 1795314357);
	assert_true(json_is_integer(path_get(doc, "timestamp_ms")));
	assert_true(num_at(doc, "timestamp_ms") == 1795314357499.0);
	assert_true(strlen(str_at(doc, "time")) > 10);
	assert_int_equal(json_array_size(path_get(doc, "jobs")), 2);
	assert_string_equal(str_at(doc, "jobs/0/jobname"), "psync-rand");
	assert_string_equal(str_at(doc, "jobs/1/jobname"), "mmap-fail");
	/* stonewall on the second job starts a new reporting group */
	assert_int_equal(num_at(doc, "jobs/0/groupid"), 0);
	assert_int_equal(num_at(doc, "jobs/1/groupid"), 1);
	assert_string_equal(str_at(doc, "faultline/version"), "0.1.0-test");
	assert_string_equal(str_at(doc, "faultline/host/hostname"), "testhost");
	assert_int_equal(num_at(doc, "faultline/host/cpus"), 2);
	assert_false(json_is_true(path_get(doc, "faultline/interrupted")));
	assert_int_equal(num_at(doc, "faultline/duration_ms"), 12700);
	json_decref(doc);
}

static void test_json_read_figures(void **state)
{
	const struct job_result *a = &jobs[0];
	json_t *doc = dumped(), *pct;
	static const char *const keys[] = {
		"1.000000", "5.000000", "10.000000", "20.000000", "30.000000",
		"40.000000", "50.000000", "60.000000", "70.000000", "80.000000",
		"90.000000", "95.000000", "99.000000", "99.500000", "99.900000",
		"99.950000", "99.990000",
	};
	double iops = (double)a->rops * 1e9 / (double)a->runtime_ns;

	(void)state;
	assert_true(json_is_number(path_get(doc, "jobs/0/read/iops")));
	assert_close(num_at(doc, "jobs/0/read/iops"), iops);
	assert_true(num_at(doc, "jobs/0/read/io_bytes") == (double)a->rbytes);
	assert_true(num_at(doc, "jobs/0/read/io_kbytes") == (double)(a->rbytes / 1024));
	assert_true(num_at(doc, "jobs/0/read/total_ios") == (double)a->rops);
	/* 10 s and 123456 ns, rounded up to the millisecond as fio does */
	assert_int_equal(num_at(doc, "jobs/0/read/runtime"), 10001);
	assert_int_equal(num_at(doc, "jobs/0/read/bw"),
			 (uint64_t)((double)a->rbytes * 1e9 / (double)a->runtime_ns) / 1024);
	assert_int_equal(num_at(doc, "jobs/0/read/short_ios"), 0);

	assert_int_equal(num_at(doc, "jobs/0/read/lat_ns/min"), 1200);
	assert_int_equal(num_at(doc, "jobs/0/read/lat_ns/max"), 812000);
	assert_int_equal(num_at(doc, "jobs/0/read/lat_ns/N"), 10001);
	assert_close(num_at(doc, "jobs/0/read/lat_ns/mean"), hist_mean(&a->lat));
	assert_true(num_at(doc, "jobs/0/read/lat_ns/stddev") > 0);
	assert_int_equal(num_at(doc, "jobs/0/read/lat_ns/percentile/99.000000"),
			 hist_percentile(&a->lat, 99));
	assert_int_equal(num_at(doc, "jobs/0/read/clat_ns/percentile/50.000000"),
			 hist_percentile(&a->lat, 50));
	pct = path_get(doc, "jobs/0/read/lat_ns/percentile");
	assert_int_equal(json_object_size(pct), sizeof(keys) / sizeof(keys[0]));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(pct, keys[i]);

		if (!json_is_integer(v))
			fail_msg("percentile %s missing or not an integer", keys[i]);
	}
	/* fio's all-zero write object: we never write, so these are true. */
	assert_int_equal(num_at(doc, "jobs/0/write/io_bytes"), 0);
	assert_int_equal(num_at(doc, "jobs/0/write/lat_ns/N"), 0);

	assert_int_equal(num_at(doc, "jobs/0/majf"), 3);
	assert_int_equal(num_at(doc, "jobs/0/minf"), 12);
	assert_close(num_at(doc, "jobs/0/faultline/read_amplification"), 1.07);
	assert_true(num_at(doc, "jobs/0/faultline/dev_read_bytes") == 5136.0 * MiB);
	assert_string_equal(str_at(doc, "jobs/0/faultline/devices/0/name"), "vda");
	assert_string_equal(str_at(doc, "jobs/0/faultline/targets/0/path"), "/data/a");
	assert_string_equal(str_at(doc, "jobs/0/faultline/touch"), "stride:64");
	assert_int_equal(num_at(doc, "jobs/0/faultline/threads"), 1);
	assert_string_equal(str_at(doc, "disk_util/0/name"), "vda");
	assert_int_equal(num_at(doc, "disk_util/0/read_ios"), 1314816);
	/* latency bins sum to 100 % */
	{
		double sum = 0;
		const char *units[] = { "latency_ns", "latency_us", "latency_ms" };

		for (int u = 0; u < 3; u++) {
			const char *k;
			json_t *v;

			json_object_foreach(path_get(json_array_get(json_object_get(doc, "jobs"), 0), units[u]), k, v)
				sum += json_number_value(v);
		}
		assert_close(sum, 100.0);
	}
	json_decref(doc);
}

/* What fio's readers look for: its identification keys and the fields
 * fio writes per job, with faultline's measured values. */
static void test_json_fio_fields(void **state)
{
	const struct job_result *a = &jobs[0];
	json_t *doc = dumped();

	(void)state;
	assert_string_equal(str_at(doc, "fio version"), "faultline-0.1.0-test");
	/* [global] as written; the later bs wins */
	assert_string_equal(str_at(doc, "global options/bs"), "8k");
	assert_string_equal(str_at(doc, "global options/time_based"), "1");
	assert_int_equal(json_object_size(path_get(doc, "global options")), 2);
	assert_int_equal(num_at(doc, "jobs/0/eta"), 0);
	assert_int_equal(num_at(doc, "jobs/0/elapsed"), 13);
	assert_int_equal(num_at(doc, "jobs/0/job_runtime"), 10000);
	assert_close(num_at(doc, "jobs/0/usr_cpu"), 25.0);
	assert_close(num_at(doc, "jobs/0/sys_cpu"), 10.0);
	assert_int_equal(num_at(doc, "jobs/0/ctx"), 4321);
	assert_null_at(doc, "jobs/1/usr_cpu");
	assert_null_at(doc, "jobs/1/ctx");
	/* 800 of 1228800 requests at depth 1: shown as fio's 0.1 floor */
	assert_close(num_at(doc, "jobs/0/iodepth_level/1"), 0.1);
	assert_close(num_at(doc, "jobs/0/iodepth_level/4"), 100.0 * 1228000 / 1228800);
	assert_close(num_at(doc, "jobs/0/iodepth_level/>=64"), 0);
	assert_close(num_at(doc, "jobs/0/iodepth_submit/4"), 100);
	assert_close(num_at(doc, "jobs/0/iodepth_complete/0"), 0);
	/* per-interval statistics of the reads */
	assert_int_equal(num_at(doc, "jobs/0/read/iops_min"), 120000);
	assert_int_equal(num_at(doc, "jobs/0/read/iops_max"), 123000);
	assert_close(num_at(doc, "jobs/0/read/iops_mean"), 121500);
	assert_close(num_at(doc, "jobs/0/read/iops_stddev"), fiostat_series_stddev(&a->read_iops));
	assert_int_equal(num_at(doc, "jobs/0/read/iops_samples"), 4);
	assert_int_equal(num_at(doc, "jobs/0/read/bw_min"), 480000);
	assert_int_equal(num_at(doc, "jobs/0/read/bw_max"), 492000);
	assert_close(num_at(doc, "jobs/0/read/bw_mean"), 486000);
	assert_close(num_at(doc, "jobs/0/read/bw_dev"), fiostat_series_stddev(&a->read_bw));
	assert_int_equal(num_at(doc, "jobs/0/read/bw_samples"), 4);
	/* alone in its group: mean over the job's aggregate, capped */
	assert_close(num_at(doc, "jobs/0/read/bw_agg"),
		     fiostat_bw_agg(486000, (double)a->rbytes * 1e9 / (double)a->runtime_ns));
	/* no samples: fio's zeros */
	assert_int_equal(num_at(doc, "jobs/1/read/bw_samples"), 0);
	assert_close(num_at(doc, "jobs/1/read/bw_agg"), 0);
	assert_int_equal(num_at(doc, "jobs/0/write/iops_samples"), 0);
	/* no submission phase: fio's "not measured" */
	assert_int_equal(num_at(doc, "jobs/0/read/slat_ns/N"), 0);
	assert_int_equal(num_at(doc, "jobs/0/latency_depth"), 1);
	assert_int_equal(num_at(doc, "faultline/interval_ms"), 1000);
	/* bins only with json+ */
	assert_null(json_object_get(path_get(doc, "jobs/0/read/clat_ns"), "bins"));
	json_decref(doc);
}

/* json+: every non-empty bucket keyed by its midpoint in ns; the counts
 * add up to the requests, in clat_ns and lat_ns alike. */
static void test_json_plus_bins(void **state)
{
	const struct job_result *a = &jobs[0];
	json_t *doc = dumped_with(JSON_OUT_PLUS);
	const char *paths[] = { "jobs/0/read/clat_ns/bins", "jobs/0/read/lat_ns/bins" };

	(void)state;
	for (int p = 0; p < 2; p++) {
		json_t *bins = path_get(doc, paths[p]), *v;
		const char *k;
		uint64_t sum = 0;

		json_object_foreach(bins, k, v) {
			uint64_t ns = strtoull(k, NULL, 10);
			unsigned b = hist_bucket(ns);

			assert_true(json_is_integer(v));
			assert_int_equal(json_integer_value(v), a->lat.count[b]);
			assert_int_equal(ns, hist_bucket_low(b) + (hist_bucket_high(b) - hist_bucket_low(b)) / 2);
			sum += (uint64_t)json_integer_value(v);
		}
		assert_int_equal(sum, a->rops ? a->lat.n : 0);
	}
	/* latency off: no bins to give */
	assert_null(json_object_get(path_get(doc, "jobs/1/read/clat_ns"), "bins"));
	json_decref(doc);
}

/*
 * A write job, read the way fio's readers read fio's: job 0 becomes a
 * randrw job (reads and writes, each with its own per-interval series,
 * and flushes), job 1 a write-only job in the same group as... its own
 * (stonewall): its read object is fio's all-zero form, runtime 0.
 */
static struct write_result wr_a, wr_b;

static void make_write_jobs(void)
{
	struct job_result *a = &jobs[0], *b = &jobs[1];

	job_a.rw = RW_RANDRW;
	memset(&wr_a, 0, sizeof(wr_a));
	hist_init(&wr_a.lat);
	hist_init(&wr_a.sync_lat);
	wr_a.ops = 409600;
	wr_a.bytes = wr_a.ops * 4096;
	for (unsigned i = 0; i < 3000; i++)
		hist_add(&wr_a.lat, 300000 + (uint64_t)i * 50);
	wr_a.syncs = 50;
	for (unsigned i = 0; i < 50; i++)
		hist_add(&wr_a.sync_lat, 2000000 + (uint64_t)i * 1000);
	a->w = &wr_a;
	for (unsigned i = 0; i < 3; i++) {
		fiostat_series_add(&a->write_iops, 40000 + 500 * i);
		fiostat_series_add(&a->write_bw, 160000 + 2000 * i);
	}

	job_b.rw = RW_WRITE;
	memset(&wr_b, 0, sizeof(wr_b));
	hist_init(&wr_b.lat);
	hist_init(&wr_b.sync_lat);
	wr_b.ops = b->rops;
	wr_b.bytes = b->rbytes;
	b->rops = b->rbytes = 0;
	b->w = &wr_b;
	job_result_of(a, &job_a);
	job_result_of(b, &job_b);
}

static void test_json_write_job(void **state)
{
	const struct job_result *a = &jobs[0];
	json_t *doc, *bins, *v;
	const char *k;
	uint64_t sum = 0;
	double pct = 0;

	(void)state;
	make_write_jobs();
	doc = dumped_with(JSON_OUT_PLUS);
	/* the writes under fio's names, from the write side's own figures */
	assert_true(num_at(doc, "jobs/0/write/io_bytes") == (double)wr_a.bytes);
	assert_true(num_at(doc, "jobs/0/write/total_ios") == (double)wr_a.ops);
	assert_close(num_at(doc, "jobs/0/write/iops"), (double)wr_a.ops * 1e9 / (double)a->runtime_ns);
	assert_int_equal(num_at(doc, "jobs/0/write/runtime"), 10001);
	assert_int_equal(num_at(doc, "jobs/0/write/lat_ns/N"), 3000);
	assert_int_equal(num_at(doc, "jobs/0/write/clat_ns/min"), 300000);
	assert_int_equal(num_at(doc, "jobs/0/write/lat_ns/percentile/50.000000"),
			 hist_percentile(&wr_a.lat, 50));
	assert_int_equal(num_at(doc, "jobs/0/write/slat_ns/N"), 0);
	assert_int_equal(num_at(doc, "jobs/0/write/iops_min"), 40000);
	assert_int_equal(num_at(doc, "jobs/0/write/iops_max"), 41000);
	assert_int_equal(num_at(doc, "jobs/0/write/iops_samples"), 3);
	assert_close(num_at(doc, "jobs/0/write/bw_mean"), 162000);
	assert_close(num_at(doc, "jobs/0/write/bw_dev"), fiostat_series_stddev(&a->write_bw));
	assert_close(num_at(doc, "jobs/0/write/bw_agg"),
		     fiostat_bw_agg(162000, (double)wr_a.bytes * 1e9 / (double)a->runtime_ns));
	/* the reads keep theirs */
	assert_int_equal(num_at(doc, "jobs/0/read/iops_samples"), 4);
	assert_true(num_at(doc, "jobs/0/read/total_ios") == (double)a->rops);
	/* fio's sync object: the flushes, timed */
	assert_int_equal(num_at(doc, "jobs/0/sync/total_ios"), 50);
	assert_int_equal(num_at(doc, "jobs/0/sync/lat_ns/N"), 50);
	assert_int_equal(num_at(doc, "jobs/0/sync/lat_ns/min"), 2000000);
	assert_int_equal(num_at(doc, "jobs/0/sync/lat_ns/max"), 2049000);
	assert_true(json_is_object(path_get(doc, "jobs/0/sync/lat_ns/percentile")));
	/* json+ bins of writes and flushes add up to their counts */
	bins = path_get(doc, "jobs/0/write/clat_ns/bins");
	json_object_foreach(bins, k, v)
		sum += (uint64_t)json_integer_value(v);
	assert_int_equal(sum, 3000);
	sum = 0;
	json_object_foreach(path_get(doc, "jobs/0/sync/lat_ns/bins"), k, v)
		sum += (uint64_t)json_integer_value(v);
	assert_int_equal(sum, 50);
	/* latency_us/ms cover reads and writes (not flushes): the writes'
	 * 300-450 us are 3000 of 13001 requests, alone in the "500" us bin
	 * (250-499 us), and the 2 ms flushes are in no bin */
	assert_close(num_at(doc, "jobs/0/latency_us/500"), 100.0 * 3000 / 13001);
	assert_close(num_at(doc, "jobs/0/latency_ms/4"), 0);
	{
		const char *units[] = { "latency_ns", "latency_us", "latency_ms" };

		for (int u = 0; u < 3; u++)
			json_object_foreach(path_get(json_array_get(json_object_get(doc, "jobs"), 0), units[u]), k, v)
				pct += json_number_value(v);
		assert_close(pct, 100.0);
	}
	/* a write-only job's read object is fio's all-zero form */
	assert_int_equal(num_at(doc, "jobs/1/read/io_bytes"), 0);
	assert_int_equal(num_at(doc, "jobs/1/read/runtime"), 0);
	assert_int_equal(num_at(doc, "jobs/1/read/iops"), 0);
	assert_int_equal(num_at(doc, "jobs/1/read/lat_ns/N"), 0);
	assert_int_equal(num_at(doc, "jobs/1/read/lat_ns/min"), 0);
	assert_int_equal(num_at(doc, "jobs/1/write/runtime"), 2000);
	assert_true(num_at(doc, "jobs/1/write/io_bytes") == (double)wr_b.bytes);
	/* no flushes: fio's empty sync object */
	assert_int_equal(num_at(doc, "jobs/1/sync/total_ios"), 0);
	assert_int_equal(num_at(doc, "jobs/1/sync/lat_ns/N"), 0);
	assert_int_equal(num_at(doc, "jobs/1/sync/lat_ns/max"), 0);
	/* a read job's sync object is the empty one too */
	json_decref(doc);
	jobs[0].w = jobs[1].w = NULL;
	build_result();
	doc = dumped();
	assert_int_equal(num_at(doc, "jobs/0/sync/total_ios"), 0);
	assert_int_equal(num_at(doc, "jobs/0/sync/lat_ns/N"), 0);
	json_decref(doc);
}

static void test_json_options_and_error(void **state)
{
	json_t *doc = dumped();

	(void)state;
	/* fio's "job options": what the section set, a bare key left out,
	 * and no object at all for a job whose section set nothing */
	assert_int_equal(json_object_size(path_get(doc, "jobs/0/job options")), 2);
	assert_string_equal(str_at(doc, "jobs/0/job options/rw"), "randread");
	assert_string_equal(str_at(doc, "jobs/0/job options/bs"), "4k");
	assert_null(json_object_get(path_get(doc, "jobs/1"), "job options"));
	/* faultline's own: every option as the job ran with it */
	assert_true(json_is_object(path_get(doc, "jobs/0/faultline/options")));
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/bs"), "4k");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/rw"), "randread");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/ioengine"), "psync");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/touch"), "stride:64");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/random_distribution"), "zipf:1.2");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/runtime"), "10s");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/ramp_time"), "500ms");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/iodepth"), "1");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/direct"), "0");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/size"), "1g");
	assert_string_equal(str_at(doc, "jobs/1/faultline/options/bs"), "128k");
	assert_string_equal(str_at(doc, "jobs/1/faultline/options/touch"), "page");
	/* fully resolved: defaults the job never set are there too */
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/name"), "psync-rand");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/scan_chunk"), "128m");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/invalidate"), "1");
	assert_string_equal(str_at(doc, "jobs/0/faultline/options/latency"), "1");
	assert_string_equal(str_at(doc, "jobs/1/faultline/options/latency"), "0");
	/* one entry per table option with a value, under its own name */
	for (size_t i = 0; i < option_count; i++) {
		char buf[512];
		json_t *v = json_object_get(path_get(doc, "jobs/0/faultline/options"),
					    option_table[i].name);

		if (option_format(&job_a, &option_table[i], buf, sizeof(buf))) {
			if (!json_is_string(v) || strcmp(json_string_value(v), buf))
				fail_msg("job option %s: want \"%s\"", option_table[i].name, buf);
		} else if (v) {
			fail_msg("job option %s has no value but is present", option_table[i].name);
		}
	}
	/* every value in "job options" is a string, as in fio */
	{
		const char *k;
		json_t *v;

		json_object_foreach(path_get(doc, "jobs/0/faultline/options"), k, v)
			if (!json_is_string(v))
				fail_msg("job option %s is not a string", k);
	}
	assert_int_equal(num_at(doc, "jobs/0/error"), 0);
	assert_int_equal(num_at(doc, "jobs/1/error"), EIO);
	assert_null_at(doc, "jobs/0/faultline/errmsg");
	assert_string_equal(str_at(doc, "jobs/1/faultline/errmsg"),
			    "target /data/b offset 4096: SIGBUS");
	json_decref(doc);
}

static void test_json_unreadable_is_null(void **state)
{
	json_t *doc = dumped();

	(void)state;
	assert_null_at(doc, "jobs/1/majf");
	assert_null_at(doc, "jobs/1/minf");
	assert_null_at(doc, "jobs/1/faultline/major_faults");
	assert_null_at(doc, "jobs/1/faultline/dev_read_bytes");
	assert_null_at(doc, "jobs/1/faultline/read_amplification");
	assert_null_at(doc, "jobs/1/faultline/devices/0/read_bytes");
	assert_null_at(doc, "jobs/1/faultline/cpu_probe_per_s");
	assert_null_at(doc, "jobs/1/read/lat_ns/mean");
	assert_null_at(doc, "jobs/1/read/lat_ns/min");
	assert_int_equal(num_at(doc, "jobs/1/read/lat_ns/N"), 0);
	assert_null_at(doc, "jobs/1/latency_us/100");
	assert_null_at(doc, "disk_util/1/read_ios");
	assert_null_at(doc, "faultline/system/tlb_shootdowns");
	assert_null_at(doc, "faultline/system/tlb_peak_per_s");
	assert_null_at(doc, "faultline/system/pgscan_kswapd");
	assert_null_at(doc, "faultline/system/pgmajfault");
	assert_null_at(doc, "faultline/host/mem_total");
	/* and the readable ones are numbers */
	assert_close(num_at(doc, "faultline/system/kswapd_cpu_s"), 1.25);
	assert_true(num_at(doc, "faultline/system/page_cache_end") == 1124.0 * MiB);
	json_decref(doc);
}

/* ------------------------------------------------------------------ */

static char tmpdir[64];

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static json_t *load_file(const char *path)
{
	json_error_t je;
	json_t *doc = json_load_file(path, 0, &je);

	if (!doc)
		fail_msg("%s does not parse: %s", path, je.text);
	return doc;
}

static void test_write_file_atomic(void **state)
{
	char path[128];
	struct err e = { 0 };
	struct stat st;
	json_t *doc;
	FILE *f;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_report.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/out.json", tmpdir);

	/* fresh file */
	assert_int_equal(json_out_write_file(&res, path, 0, &e), 0);
	doc = load_file(path);
	assert_string_equal(str_at(doc, "jobs/0/jobname"), "psync-rand");
	json_decref(doc);
	assert_int_equal(count_entries(tmpdir), 1);

	/* replacing an existing file keeps its mode and leaves no temp */
	f = fopen(path, "w");
	fputs("old", f);
	fclose(f);
	chmod(path, 0640);
	assert_int_equal(json_out_write_file(&res, path, 0, &e), 0);
	doc = load_file(path);
	json_decref(doc);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_int_equal(count_entries(tmpdir), 1);

	/*
	 * A reader polling the file while it is rewritten again and again
	 * must parse every version it sees; a truncate-and-write writer
	 * shows it empty or half written.
	 */
	{
		pid_t pid = fork();
		int status, bad = 0;

		assert_true(pid >= 0);
		if (pid == 0) {
			for (int i = 0; i < 2000; i++) {
				json_t *d = json_load_file(path, 0, NULL);

				if (!d)
					_exit(1);
				json_decref(d);
			}
			_exit(0);
		}
		for (int i = 0; i < 300 && !bad; i++)
			bad = json_out_write_file(&res, path, 0, &e) != 0;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_false(bad);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("a reader saw a partial JSON file");
	}
	assert_int_equal(count_entries(tmpdir), 1);

	unlink(path);
	rmdir(tmpdir);
}

static void test_write_file_errors(void **state)
{
	struct err e = { 0 };
	char path[128];

	(void)state;
	/* the directory does not exist */
	assert_true(json_out_write_file(&res, "/nonexistent-faultline-dir/out.json", 0, &e) < 0);
	assert_int_equal(e.code, ENOENT);
	assert_non_null(strstr(e.msg, "/nonexistent-faultline-dir/out.json"));

	/* the "directory" is a file (root bypasses mode bits, this does not) */
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_report.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/file", tmpdir);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof(path), "%s/file/out.json", tmpdir);
	memset(&e, 0, sizeof(e));
	assert_true(json_out_write_file(&res, path, 0, &e) < 0);
	assert_int_equal(e.code, ENOTDIR);

	/* the target is a directory: rename fails, the temp file is removed */
	snprintf(path, sizeof(path), "%s/dir", tmpdir);
	assert_int_equal(mkdir(path, 0755), 0);
	memset(&e, 0, sizeof(e));
	assert_true(json_out_write_file(&res, path, 0, &e) < 0);
	assert_int_equal(count_entries(tmpdir), 2);	/* file, dir */

	rmdir(path);
	snprintf(path, sizeof(path), "%s/file", tmpdir);
	unlink(path);
	rmdir(tmpdir);
}

/* ------------------------------------------------------------------ */

static void assert_contains(const char *text, const char *what)
{
	if (!strstr(text, what))
		fail_msg("summary lacks \"%s\":\n%s", what, text);
}

static void assert_lacks(const char *text, const char *what)
{
	if (strstr(text, what))
		fail_msg("summary has \"%s\":\n%s", what, text);
}

/* The text from @from up to @to (or the end), as a new string. */
static char *section(const char *text, const char *from, const char *to)
{
	const char *s = strstr(text, from), *t;

	if (!s)
		fail_msg("summary lacks \"%s\"", from);
	t = to ? strstr(s, to) : NULL;
	return strndup(s, t ? (size_t)(t - s) : strlen(s));
}

static void test_summary(void **state)
{
	char *text = summary(), *a, *b, *sys, *table;
	char want[128];

	(void)state;
	a = section(text, "psync-rand: (", "mmap-fail: (");
	b = section(text, "mmap-fail: (", "system:");
	sys = section(text, "system:", "comparison:");
	table = section(text, "comparison:", NULL);

	assert_contains(a, "psync-rand: (engine=psync, rw=randread, bs=4096, threads=1, iodepth=1, touch=stride:64, advice=normal/normal)");
	assert_contains(a, "read: IOPS=123k, BW=");
	assert_contains(a, "ops=1228800");
	assert_contains(a, "lat (usec): min=1.2, p50=");
	snprintf(want, sizeof(want), "p99=%.1f", (double)hist_percentile(&jobs[0].lat, 99) / 1e3);
	assert_contains(a, want);
	assert_contains(a, "p99.9=");
	assert_contains(a, "max=812.0");
	assert_contains(a, "faults: major=3, minor=12");
	assert_contains(a, "device vda: read 5.02GiB in 1314816 requests; read amplification 1.07x");

	/* the failed job: error shown, nothing unreadable printed as 0 */
	assert_contains(b, "error: target /data/b offset 4096: SIGBUS (EIO)");
	assert_contains(b, "faults: n/a (unreadable)");
	assert_contains(b, "lat: off");
	assert_contains(b, "device sdb: n/a (unreadable)");
	assert_lacks(b, "major=0");
	assert_lacks(b, "minor=0");
	assert_lacks(b, "read 0");
	assert_lacks(b, "amplification 0");
	assert_lacks(b, "p50=0");

	assert_contains(sys, "TLB shootdowns: n/a (unreadable");
	assert_contains(sys, "kswapd CPU: 1.25 s");
	assert_contains(sys, "pages scanned/stolen: n/a (unreadable)");
	assert_contains(sys, "page cache: 100MiB -> 1.10GiB");
	assert_lacks(sys, "TLB shootdowns: 0");
	assert_lacks(sys, "kswapd=0");

	/* one line per job in the comparison table */
	assert_contains(table, "read-amp");
	{
		char *row_a = section(table, "psync-rand ", "\n");
		char *row_b = section(table, "mmap-fail ", "\n");

		assert_contains(row_a, "psync");
		assert_contains(row_a, "randread");
		assert_contains(row_a, "4k");
		assert_contains(row_a, "123k");
		assert_contains(row_a, "1.07x");
		assert_contains(row_b, "mmap");
		assert_contains(row_b, "128k");
		assert_contains(row_b, "EIO");
		assert_contains(row_b, "off");
		assert_contains(row_b, "n/a");
		assert_lacks(row_b, " 0 ");
		free(row_a);
		free(row_b);
	}
	/* the host's unreadable memory size is left out, not 0 */
	assert_lacks(text, "0B memory");
	assert_lacks(text, "interrupted");

	free(a);
	free(b);
	free(sys);
	free(table);
	free(text);
}

/* delayacct=1: the summary's line and the JSON's time object; a job
 * that could not be read says why, with no share made up. */
static void test_time(void **state)
{
	static const unsigned tenths[TIMESHARE_NPARTS] = { 40, 10, 810, 90, 50, 0, 0, 0 };
	char *text, *a, *b;
	json_t *doc;

	(void)state;
	job_a.delayacct = job_b.delayacct = true;
	job_result_of(&jobs[0], &job_a);
	job_result_of(&jobs[1], &job_b);
	jobs[0].time_ok = true;
	jobs[0].time_threads = 2;
	jobs[0].time_every = 1;
	jobs[0].time_window_ns = 16000000000ull;
	memcpy(jobs[0].time_tenths, tenths, sizeof(tenths));
	jobs[0].time_ns.ns[TIMESHARE_BLKIO] = 13000000000ull;
	snprintf(jobs[1].time_why, sizeof(jobs[1].time_why), "off (kernel.task_delayacct=0)");
	text = summary();
	a = section(text, "psync-rand: (", "mmap-fail: (");
	b = section(text, "mmap-fail: (", "system:");
	assert_contains(a, "where the time went (2 threads x 8 s): 4 % on CPU, 1 % waiting for a CPU, "
			   "81 % waiting for the device, 9 % reclaim, 5 % thrashing\n");
	assert_contains(b, "where the time went: unknown (off (kernel.task_delayacct=0))");
	doc = dumped();
	assert_close(num_at(doc, "jobs/0/faultline/time/blkio_pct"), 81.0);
	assert_close(num_at(doc, "jobs/0/faultline/time/other_pct"), 0.0);
	assert_close(num_at(doc, "jobs/0/faultline/time/blkio_ns"), 13e9);
	assert_close(num_at(doc, "jobs/0/faultline/time/window_ns"), 16e9);
	assert_null_at(doc, "jobs/1/faultline/time/blkio_pct");
	assert_string_equal(str_at(doc, "jobs/1/faultline/time/why"), "off (kernel.task_delayacct=0)");
	json_decref(doc);
	free(a);
	free(b);
	free(text);
}

static void test_summary_single_job_and_interrupt(void **state)
{
	char *text;

	(void)state;
	res.njobs = 1;
	res.interrupted = true;
	text = summary();
	assert_true(strncmp(text, "*** run interrupted", 19) == 0);
	assert_lacks(text, "comparison:");
	free(text);

	{
		json_t *doc = dumped();

		assert_true(json_is_true(path_get(doc, "faultline/interrupted")));
		assert_int_equal(json_array_size(path_get(doc, "jobs")), 1);
		json_decref(doc);
	}
	build_result();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_json_top_level, setup),
		cmocka_unit_test_setup(test_time, setup),
		cmocka_unit_test_setup(test_json_read_figures, setup),
		cmocka_unit_test_setup(test_json_fio_fields, setup),
		cmocka_unit_test_setup(test_json_plus_bins, setup),
		cmocka_unit_test_setup(test_json_write_job, setup),
		cmocka_unit_test_setup(test_json_options_and_error, setup),
		cmocka_unit_test_setup(test_json_unreadable_is_null, setup),
		cmocka_unit_test_setup(test_write_file_atomic, setup),
		cmocka_unit_test_setup(test_write_file_errors, setup),
		cmocka_unit_test_setup(test_summary, setup),
		cmocka_unit_test_setup(test_summary_single_job_and_interrupt, setup),
	};

	int ret = cmocka_run_group_tests(tests, NULL, NULL);

	option_release(&job_a);
	option_release(&job_b);
	return ret;
}
