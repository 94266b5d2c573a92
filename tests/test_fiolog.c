/*
 * test_fiolog.c - fio's log files from handed-in intervals: fio 3.33's
 * names and line format, windows of log_avg_msec made of whole intervals,
 * no entry for an idle thread, latency-only entries for a job's partial
 * last window, per_job_logs=0, no latency logs without latency.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out/fiolog.h"
#include "job/options.h"
#include "scratchdir.h"

#define MS 1000000ull
#define IV (100 * MS)		/* the sampling interval */

static char warned[1024];

static void warn(const char *msg)
{
	snprintf(warned, sizeof(warned), "%s", msg);
}

/* A job named @name logging to the scratch folder's @prefix (NULL: its name, bare key). */
static void job_init(struct job *j, const char *name, const char *prefix)
{
	char p[PATH_MAX];

	option_defaults(j);
	snprintf(j->name, sizeof(j->name), "%s", name);
	snprintf(p, sizeof(p), "%s/%s", scratch_dir, prefix ? prefix : name);
	j->bw_log = strdup(p);
	j->iops_log = strdup(p);
	j->lat_log = strdup(p);
}

static char *slurp(const char *name)
{
	char path[PATH_MAX];
	static char buf[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", scratch_dir, name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("no file %s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void share(struct fiolog_sample *s, uint64_t ops, uint64_t lat_ns)
{
	memset(s, 0, sizeof(*s));
	s->dir[FIOLOG_READ].ops = ops;
	s->dir[FIOLOG_READ].bytes = ops * 4096;
	s->dir[FIOLOG_READ].lat_n = lat_ns ? ops : 0;
	s->dir[FIOLOG_READ].lat_sum_ns = ops * lat_ns;
}

/* Two threads, one entry per interval: KiB/s, IOPS, mean latency; the
 * second thread idle in one interval has no entry there; an interval the
 * sampler began late (60 ms) is an entry of its own; the job's last 30 ms
 * have latency entries only; slat empty. */
static void test_per_interval(void **state)
{
	struct job j;
	struct fiolog_job fj = { .job = &j, .nthreads = 2 };
	struct fiolog_sample th[2];
	struct fiolog *l;
	struct err e = { 0 };

	(void)state;
	job_init(&j, "a", NULL);
	assert_int_equal(fiolog_create(&l, &fj, 1, IV, warn, &e), 0);
	assert_non_null(l);
	/* log_avg_msec=0: fio's every I/O, here every interval, said so. */
	assert_non_null(strstr(warned, "never logs each I/O"));
	share(&th[0], 1000, 2000);
	share(&th[1], 500, 4000);
	fiolog_interval(l, 0, 100, IV, th, false);
	share(&th[1], 0, 0);
	fiolog_interval(l, 0, 200, IV, th, false);
	share(&th[0], 600, 3000);
	fiolog_interval(l, 0, 260, 60 * MS, th, false);
	share(&th[0], 10, 5000);
	fiolog_interval(l, 0, 290, 30 * MS, th, true);
	fiolog_job_end(l, 0, 290);
	fiolog_close(l);
	/* 1000 requests of 4 KiB in 0.1 s: 40000 KiB/s, 10000 IOPS. */
	assert_string_equal(slurp("a_bw.1.log"), "100, 40000, 0, 0, 0\n200, 40000, 0, 0, 0\n"
			    "260, 40000, 0, 0, 0\n");
	assert_string_equal(slurp("a_iops.1.log"), "100, 10000, 0, 0, 0\n200, 10000, 0, 0, 0\n"
			    "260, 10000, 0, 0, 0\n");
	assert_string_equal(slurp("a_bw.2.log"), "100, 20000, 0, 0, 0\n");
	assert_string_equal(slurp("a_lat.2.log"), "100, 4000, 0, 0, 0\n");
	assert_string_equal(slurp("a_clat.1.log"), "100, 2000, 0, 0, 0\n200, 2000, 0, 0, 0\n"
			    "260, 3000, 0, 0, 0\n290, 5000, 0, 0, 0\n");
	assert_string_equal(slurp("a_slat.1.log"), "");
	option_release(&j);
}

/* log_avg_msec=250 over 100 ms intervals: an entry every 3 intervals
 * (the first boundary past 9/10 of 250 ms), averaged over them; the
 * job's 2 remaining intervals and its last 10 ms are a partial window
 * (210 ms): latency only. */
static void test_windows(void **state)
{
	struct job j;
	struct fiolog_job fj = { .job = &j, .nthreads = 1 };
	struct fiolog_sample th;
	struct fiolog *l;
	struct err e = { 0 };

	(void)state;
	job_init(&j, "w", NULL);
	j.log_avg_msec = 250;
	j.log_offset = true;
	warned[0] = '\0';
	assert_int_equal(fiolog_create(&l, &fj, 1, IV, warn, &e), 0);
	assert_string_equal(warned, "");
	for (unsigned i = 1; i <= 5; i++) {
		share(&th, i * 100, i * 1000);
		fiolog_interval(l, 0, i * 100, IV, &th, false);
	}
	share(&th, 0, 0);
	fiolog_interval(l, 0, 510, 10 * MS, &th, true);
	fiolog_job_end(l, 0, 510);
	fiolog_close(l);
	/* 600 requests in 0.3 s; latency (100*1000+200*2000+300*3000)/600. */
	assert_string_equal(slurp("w_iops.1.log"), "300, 2000, 0, 0, 0, 0\n");
	assert_string_equal(slurp("w_lat.1.log"),
			    "300, 2333, 0, 0, 0, 0\n510, 4556, 0, 0, 0, 0\n");
	option_release(&j);
}

/* A mixed job: each entry time has a read line (direction 0) and a
 * write line (direction 1), each from its own direction's share; an
 * interval with no writes has no write line. */
static void test_read_and_write(void **state)
{
	struct job j;
	struct fiolog_job fj = { .job = &j, .nthreads = 1 };
	struct fiolog_sample th;
	struct fiolog *l;
	struct err e = { 0 };

	(void)state;
	job_init(&j, "m", NULL);
	j.rw = RW_RANDRW;
	assert_int_equal(fiolog_create(&l, &fj, 1, IV, warn, &e), 0);
	share(&th, 700, 2000);
	th.dir[FIOLOG_WRITE].ops = 300;
	th.dir[FIOLOG_WRITE].bytes = 300 * 4096;
	th.dir[FIOLOG_WRITE].lat_n = 300;
	th.dir[FIOLOG_WRITE].lat_sum_ns = 300 * 9000;
	fiolog_interval(l, 0, 100, IV, &th, false);
	share(&th, 1000, 1000);
	fiolog_interval(l, 0, 200, IV, &th, false);
	fiolog_job_end(l, 0, 200);
	fiolog_close(l);
	assert_string_equal(slurp("m_iops.1.log"), "100, 7000, 0, 0, 0\n100, 3000, 1, 0, 0\n"
			    "200, 10000, 0, 0, 0\n");
	assert_string_equal(slurp("m_bw.1.log"), "100, 28000, 0, 0, 0\n100, 12000, 1, 0, 0\n"
			    "200, 40000, 0, 0, 0\n");
	assert_string_equal(slurp("m_lat.1.log"), "100, 2000, 0, 0, 0\n100, 9000, 1, 0, 0\n"
			    "200, 1000, 0, 0, 0\n");
	option_release(&j);
}

/* per_job_logs=0: every thread into <prefix>_bw.log; two jobs naming the
 * same prefix share the file; thread numbers count earlier jobs' threads. */
static void test_shared_and_numbering(void **state)
{
	struct job a, b, c;
	struct fiolog_job fj[3] = {
		{ .job = &a, .nthreads = 2 }, { .job = &b, .nthreads = 1 }, { .job = &c, .nthreads = 1 },
	};
	struct fiolog_sample th[2];
	struct fiolog *l;
	struct err e = { 0 };

	(void)state;
	job_init(&a, "s1", "shared");
	job_init(&b, "s2", "shared");
	a.per_job_logs = b.per_job_logs = false;
	job_init(&c, "third", NULL);
	assert_int_equal(fiolog_create(&l, fj, 3, IV, NULL, &e), 0);
	share(&th[0], 100, 0);
	share(&th[1], 200, 0);
	fiolog_interval(l, 0, 100, IV, th, false);
	fiolog_interval(l, 1, 100, IV, th, false);
	fiolog_interval(l, 2, 100, IV, th, false);
	fiolog_close(l);
	assert_string_equal(slurp("shared_iops.log"),
			    "100, 1000, 0, 0, 0\n100, 2000, 0, 0, 0\n100, 1000, 0, 0, 0\n");
	/* The third job's thread is the run's 4th. */
	assert_string_equal(slurp("third_iops.4.log"), "100, 1000, 0, 0, 0\n");
	/* Latency not handed in (0 timed): no latency entries. */
	assert_string_equal(slurp("third_lat.4.log"), "");
	option_release(&a);
	option_release(&b);
	option_release(&c);
}

/* latency=0 (gtod_reduce): no latency files at all, as fio; a prefix in
 * a missing directory fails before anything runs. */
static void test_no_latency_and_bad_prefix(void **state)
{
	struct job j;
	struct fiolog_job fj = { .job = &j, .nthreads = 1 };
	struct fiolog *l;
	struct err e = { 0 };
	char path[PATH_MAX];

	(void)state;
	job_init(&j, "nolat", NULL);
	j.latency = false;
	assert_int_equal(fiolog_create(&l, &fj, 1, IV, NULL, &e), 0);
	fiolog_close(l);
	snprintf(path, sizeof(path), "%s/nolat_lat.1.log", scratch_dir);
	assert_int_not_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/nolat_bw.1.log", scratch_dir);
	assert_int_equal(access(path, F_OK), 0);
	option_release(&j);

	option_defaults(&j);
	snprintf(j.name, sizeof(j.name), "bad");
	snprintf(path, sizeof(path), "%s/no/such/scratch_dir/x", scratch_dir);
	j.bw_log = strdup(path);
	assert_true(fiolog_create(&l, &fj, 1, IV, NULL, &e) < 0);
	assert_null(l);
	assert_non_null(strstr(e.msg, "no/such/scratch_dir/x_bw.1.log"));
	option_release(&j);

	/* No job logs: no state at all. */
	option_defaults(&j);
	assert_int_equal(fiolog_create(&l, &fj, 1, IV, NULL, &e), 0);
	assert_null(l);
	fiolog_interval(l, 0, 100, IV, NULL, false);
	fiolog_close(l);
	option_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_interval),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_read_and_write),
		cmocka_unit_test(test_shared_and_numbering),
		cmocka_unit_test(test_no_latency_and_bad_prefix),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
