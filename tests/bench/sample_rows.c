/*
 * sample_rows.c - what a sample costs per job, without the jobs: N fake
 * psync jobs of one worker each (counters and latency histograms set by
 * hand, as tests/test_sampler.c does), sampled as the controller samples
 * them, interval after interval, and the row's steps timed alone on the
 * same data. A benchmark, not a test: it prints and never fails.
 *
 *   make build/libfaultline.a
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -Isrc -o build/sample_rows tests/bench/sample_rows.c \
 *       build/libfaultline.a $(pkg-config --libs liburing jansson numa libisal blkid zlib \
 *       libtracefs libtraceevent nettle libxxhash libmnl libbpf) -laio -lm -ldl -pthread
 *   build/sample_rows [JOBS [INTERVALS [REQUESTS]]]
 *
 * Each interval every worker records REQUESTS latencies (default 100: a
 * 2000-job psync run on the 2-vCPU host does 0.5-2 M IOPS, 25-100 a job
 * an interval of 100 ms) drawn from a warm
 * page-cache read's shape: a body of 1-4 us, a tail to 60 us, an
 * outlier to 5 ms now and then. Between intervals the bench walks a
 * 32 MiB buffer, so that the jobs' state is as cold as after 2000
 * workers ran. The fake workers' thread ids are the bench's own thread,
 * so a row's CPU clock read is the real system call.
 *
 * Printed, ns per job, median over the intervals: "pass" (the counters'
 * pass, sampler_tick_begin), "rows" (every row, sampler_tick), and the
 * row's steps alone on copies of the same histograms: "hist" (take and
 * commit of a worker's interval by diffing its whole histogram: what a
 * row did before the workers' rings, and what it still does for a
 * worker that spilled), "pct" (p50 and p99 of the interval),
 * "cpu" (the thread's CPU clock), "cells" (the column table writing a
 * row). Not in it: devices (the jobs have no target), perf counters
 * (no leader), residency, taskstats.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "job/jobfile.h"
#include "lib/histogram.h"
#include "lib/latclock.h"
#include "lib/stats.h"
#include "run/arena.h"
#include "run/worker.h"
#include "sample/samplecols.h"
#include "sample/sampler.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A warm page-cache read of 4 KiB, in ns. */
static uint64_t lat_draw(void)
{
	uint64_t u = next() % 10000;

	if (u < 9700)
		return 1000 + next() % 3000;
	if (u < 9995)
		return 4000 + next() % 56000;
	return 60000 + next() % 5000000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median(uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n ? (double)v[n / 2] : 0;
}

static volatile uint64_t sink;

static void chill(void)
{
	static char *buf;
	const size_t len = 32u << 20;

	if (!buf)
		buf = calloc(1, len);
	for (size_t i = 0; i < len; i += 64)
		buf[i]++;
	sink += (uint64_t)buf[len / 2];
}

int main(int argc, char **argv)
{
	unsigned njobs = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
	unsigned nint = argc > 2 ? (unsigned)atoi(argv[2]) : 30;
	unsigned nreq = argc > 3 ? (unsigned)atoi(argv[3]) : 100;
	size_t cap = 256 + (size_t)njobs * 16;
	char *text = malloc(cap), *p = text, csv[] = "/tmp/fl-sample-rows-XXXXXX";
	struct joblist jl = { 0 };
	struct err e = { 0 };
	struct arena a = { 0 };
	struct sampler_job *view = calloc(njobs, sizeof(*view));
	struct sampler *s;
	int stop = 0, fd = mkstemp(csv);
	uint64_t *t_pass = calloc(nint, 8), *t_rows = calloc(nint, 8), *t_hist = calloc(nint, 8);
	uint64_t *t_pct = calloc(nint, 8), *t_cpu = calloc(nint, 8), *t_cells = calloc(nint, 8);
	const uint64_t iv = 100000000ull;
	uint64_t t0, now;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (fd < 0 || !text || !view)
		return 1;
	close(fd);
	p += sprintf(p, "[global]\nioengine=psync\nrw=randread\nbs=4k\nfilename=/dev/null\nsize=1m\n");
	for (unsigned j = 0; j < njobs; j++)
		p += sprintf(p, "[j%u]\n", j);
	if (jobfile_parse_text(&jl, "rows.fio", text, &e) || jl.n != njobs || arena_create(&a, njobs)) {
		fprintf(stderr, "sample_rows: set-up failed: %s\n", e.msg);
		return 1;
	}
	for (unsigned j = 0; j < njobs; j++) {
		view[j].job = jl.jobs[j];
		worker_slots(view[j].job, &view[j].slots);
		view[j].slots.total = view[j].slots.workers = 1;
		view[j].nworkers = 1;
		view[j].stats = &a.ts[j];
		STAT_STORE(&a.ts[j].tid, tid);
		STAT_STORE(&a.ts[j].pid, getpid());
	}
	{
		struct sampler_config cfg = { .interval_ns = iv, .csv_path = csv, .stop = &stop,
					      .njobs = njobs, .jobs = view };

		if (sampler_create(&s, &cfg, &e)) {
			fprintf(stderr, "sample_rows: %s\n", e.msg);
			return 1;
		}
	}
	t0 = now_ns();
	sampler_begin(s, t0);
	for (unsigned j = 0; j < njobs; j++)
		sampler_job_ready(s, j, 0);
	for (unsigned j = 0; j < njobs; j++)
		sampler_job_started(s, j, t0, 0, NULL);

	/* The steps alone: each job's histogram as the sampler keeps it. */
	struct hist *prev = calloc(njobs, sizeof(*prev)), *acc = malloc(sizeof(*acc)), *none = malloc(sizeof(*none));
	struct hist_stage sg = { 0 };
	struct sys_snap sys = { 0 };
	struct sample_row row = { 0 };
	char line[2048];
	struct samplecols_cache *hc = samplecols_cache_new();

	hist_init(acc);
	hist_init(none);
	hist_stage_reserve(&sg, HIST_BUCKETS);
	for (unsigned j = 0; j < njobs; j++)
		hist_init(&prev[j]);
	now = t0;
	for (unsigned k = 0; k < nint; k++) {
		uint64_t a0, a1;

		for (unsigned j = 0; j < njobs; j++)
			for (unsigned r = 0; r < nreq; r++) {
				stat_add(&a.ts[j].rops, 1);
				stat_add(&a.ts[j].rbytes, 4096);
				hist_add(&a.ts[j].lat, lat_draw());
			}
		now += iv;
		chill();
		a0 = now_ns();
		now = sampler_tick_begin(s, now);
		a1 = now_ns();
		sampler_tick(s, now);
		t_pass[k] = a1 - a0;
		t_rows[k] = now_ns() - a1;

		chill();
		a0 = now_ns();
		for (unsigned j = 0; j < njobs; j++) {
			uint64_t sum;

			hist_clear(acc);
			hist_take(&sg, &prev[j], &a.ts[j].lat);
			hist_commit(acc, &prev[j], &sg, &sum);
			sink += acc->n;
		}
		t_hist[k] = now_ns() - a0;
		a0 = now_ns();
		for (unsigned j = 0; j < njobs; j++)
			sink += hist_percentile(acc, 50) + hist_percentile(acc, 99);
		t_pct[k] = now_ns() - a0;
		a0 = now_ns();
		for (unsigned j = 0; j < njobs; j++) {
			clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 4 | 2);
			struct timespec ts;

			clock_gettime(id, &ts);
			sink += (uint64_t)ts.tv_nsec;
		}
		t_cpu[k] = now_ns() - a0;
		row = (struct sample_row){
			.sj = &view[0], .t0 = t0, .hz = 100, .rlat = acc, .wlat = none, .slat = none,
			.sys = &sys, .ps = &sys, .now = now, .dt = 0.1, .rops = 91234, .rbytes = 91234ull * 4096,
			.lat = true, .p50 = 2.345, .p99 = 31.234, .cpu_ok = true, .cpu_ns = 81234567,
		};
		a0 = now_ns();
		for (unsigned j = 0; j < njobs; j++) {
			row.sj = &view[j];
			row.rops += j;
			sink += (uint64_t)(samplecols_write(&row, hc, line, line + sizeof(line)) - line);
		}
		t_cells[k] = now_ns() - a0;
	}
	printf("# %u jobs, %u intervals, %u requests a job an interval; ns per job, median (min-max)\n",
	       njobs, nint, nreq);
	{
		const char *name[] = { "pass", "rows", "hist", "pct", "cpu", "cells" };
		uint64_t *v[] = { t_pass, t_rows, t_hist, t_pct, t_cpu, t_cells };

		/* The first interval is a cold start: its pages fault in. */
		for (unsigned i = 0; i < 6; i++) {
			double m = median(v[i] + 1, nint - 1);

			printf("%-6s %8.0f (%.0f-%.0f)\n", name[i], m / njobs, (double)v[i][1] / njobs,
			       (double)v[i][nint - 1] / njobs);
		}
	}
	samplecols_cache_free(hc);
	sampler_destroy(s);
	unlink(csv);
	arena_destroy(&a);
	joblist_free(&jl);
	return 0;
}
