/*
 * test_loop.c - the event-loop worker (loop.c) through the real path:
 * job_run_prepare lays out scratch files and builds the streams, then
 * the job runs with a recording engine swapped in for psync, so the test
 * sees every request the loop issues, in order, and from which thread.
 *
 * Checked: streams are one per file or slices that tile one target; a
 * synchronous loop serves streams strictly in turn (a finished stream
 * drops out, the others keep their order); with offload every request
 * runs exactly once, on a helper, and offload_permits bounds how many run
 * at once; per-stream counters add up to the job's.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "engines/engine.h"
#include "run/loop.h"
#include "job/options.h"
#include "lib/stats.h"
#include "run/arena.h"
#include "run/jobrun.h"
#include "run/worker.h"
#include "scratchdir.h"

#define MAXREC 65536


static struct {
	struct { unsigned target; uint64_t off; pid_t tid; } rec[MAXREC];
	unsigned n;
	int running, max_running;
	unsigned delay_us;
} R;

static int rec_queue(struct engine_thread *w, struct io_req *r)
{
	unsigned i = __atomic_fetch_add(&R.n, 1, __ATOMIC_SEQ_CST);
	int now = __atomic_add_fetch(&R.running, 1, __ATOMIC_SEQ_CST);
	int seen = __atomic_load_n(&R.max_running, __ATOMIC_SEQ_CST);

	(void)w;
	while (now > seen &&
	       !__atomic_compare_exchange_n(&R.max_running, &seen, now, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST))
		;
	if (i < MAXREC) {
		R.rec[i].target = r->target;
		R.rec[i].off = r->off;
		R.rec[i].tid = gettid();
	}
	if (R.delay_us) {
		struct timespec ts = { 0, (long)R.delay_us * 1000 };

		nanosleep(&ts, NULL);
	}
	r->res = r->len;
	r->data = r->buf;
	__atomic_sub_fetch(&R.running, 1, __ATOMIC_SEQ_CST);
	return ENGINE_DONE;
}

static const struct engine_ops rec_engine = {
	.name = "recorder",
	.flags = ENGINE_F_BUFFERS,
	.ops = ENGINE_OP(IO_READ),
	.queue = rec_queue,
};

struct rig {
	struct job job;
	struct job_run jr;
	struct arena arena;
	int stop;
};

static void rig_job(struct rig *g, const char *files, uint64_t size, uint64_t bs, unsigned loop)
{
	char names[1024] = "";

	memset(g, 0, sizeof(*g));
	memset(&R, 0, sizeof(R));
	option_defaults(&g->job);
	snprintf(g->job.name, sizeof(g->job.name), "loop");
	snprintf(g->job.src.file, sizeof(g->job.src.file), "test");
	for (const char *p = files; *p; p++) {
		size_t n = strlen(names);

		snprintf(names + n, sizeof(names) - n, "%s%s/%c", n ? ":" : "", scratch_dir, *p);
	}
	g->job.filename = strdup(names);
	g->job.size = size;
	g->job.bs = bs;
	g->job.loop = loop;
	g->job.touch = TOUCH_PAGE;
	g->job.invalidate = false;
}

static int rig_prepare(struct rig *g, struct err *e)
{
	assert_int_equal(arena_create(&g->arena, job_run_nstats(&g->job)), 0);
	return job_run_prepare(&g->jr, &g->job, 0, g->arena.ts, &g->stop, NULL, e);
}

/* Run with the recording engine in psync's place. */
static void rig_run(struct rig *g)
{
	struct err e = { 0 };

	g->jr.crew.wk.ops = &rec_engine;
	assert_int_equal(job_run_start(&g->jr, &e), 0);
	job_run_join(&g->jr);
	if (g->arena.ts[0].failed)
		fail_msg("worker failed: %s", g->arena.ts[0].error.what);
}

static void rig_free(struct rig *g)
{
	job_run_destroy(&g->jr);
	arena_destroy(&g->arena);
	option_release(&g->job);
}

static void test_streams_one_per_file(void **state)
{
	struct rig g;
	struct err e = { 0 };

	(void)state;
	rig_job(&g, "abc", 64 << 10, 4096, 3);
	assert_int_equal(rig_prepare(&g, &e), 0);
	assert_non_null(g.jr.crew.wk.loop);
	assert_int_equal(g.jr.crew.wk.loop->n, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(g.jr.crew.wk.loop->streams[i].target, i);
		assert_int_equal(g.jr.crew.wk.loop->streams[i].base, 0);
		assert_int_equal(g.jr.crew.wk.loop->streams[i].len, 64 << 10);
	}
	/* Request slots: one per stream. */
	assert_int_equal(g.jr.crew.wk.ej.depth, 3);
	rig_free(&g);
}

static void test_streams_slice_one_target(void **state)
{
	struct rig g;
	struct err e = { 0 };
	uint64_t at = 0;

	(void)state;
	/* 1 MiB + 3 blocks over 7 streams: slices on bs boundaries. */
	rig_job(&g, "s", (1 << 20) + 3 * 8192, 8192, 7);
	assert_int_equal(rig_prepare(&g, &e), 0);
	for (unsigned i = 0; i < 7; i++) {
		const struct loop_stream *s = &g.jr.crew.wk.loop->streams[i];

		assert_int_equal(s->target, 0);
		assert_int_equal(s->base, at);
		assert_true(s->len > 0);
		assert_int_equal(s->base % 8192, 0);
		assert_int_equal(s->len % 8192, 0);
		at += s->len;
	}
	assert_int_equal(at, (1 << 20) + 3 * 8192);
	rig_free(&g);
}

static void test_streams_mismatch_refused(void **state)
{
	struct rig g;
	struct err e = { 0 };

	(void)state;
	rig_job(&g, "ab", 64 << 10, 4096, 3);
	assert_int_equal(rig_prepare(&g, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "loop=3"));
	arena_destroy(&g.arena);
	option_release(&g.job);
}

/* Streams of 4, 2 and 3 blocks: 0 1 2 | 0 1 2 | 0 2 | 0 (in turn, a
 * finished stream drops out). */
static void test_sync_round_robin(void **state)
{
	static const struct { unsigned t; uint64_t blk; } want[] = {
		{ 0, 0 }, { 1, 0 }, { 2, 0 }, { 0, 1 }, { 1, 1 }, { 2, 1 },
		{ 0, 2 }, { 2, 2 }, { 0, 3 },
	};
	struct rig g;
	struct err e = { 0 };

	(void)state;
	/* Files of 4, 2 and 3 blocks, laid out by one-file jobs. */
	rig_job(&g, "q", 4 * 4096, 4096, 1);
	assert_int_equal(rig_prepare(&g, &e), 0);
	rig_free(&g);
	rig_job(&g, "r", 2 * 4096, 4096, 1);
	assert_int_equal(rig_prepare(&g, &e), 0);
	rig_free(&g);
	rig_job(&g, "u", 3 * 4096, 4096, 1);
	assert_int_equal(rig_prepare(&g, &e), 0);
	rig_free(&g);

	rig_job(&g, "qru", 0, 4096, 3);
	assert_int_equal(rig_prepare(&g, &e), 0);
	rig_run(&g);
	assert_int_equal(R.n, sizeof(want) / sizeof(want[0]));
	for (unsigned i = 0; i < R.n; i++) {
		if (R.rec[i].target != want[i].t || R.rec[i].off != want[i].blk * 4096)
			fail_msg("request %u: target %u offset %llu, wanted target %u offset %llu", i,
				 R.rec[i].target, (unsigned long long)R.rec[i].off, want[i].t,
				 (unsigned long long)(want[i].blk * 4096));
		/* The loop thread ran them all itself. */
		assert_int_equal(R.rec[i].tid, R.rec[0].tid);
	}
	assert_int_equal(g.arena.ts[0].rops, 9);
	assert_int_equal(g.jr.crew.wk.loop->stats[0].ops, 4);
	assert_int_equal(g.jr.crew.wk.loop->stats[1].ops, 2);
	assert_int_equal(g.jr.crew.wk.loop->stats[2].ops, 3);
	assert_int_equal(g.jr.crew.wk.loop->stats[2].bytes, 3 * 4096);
	rig_free(&g);
}

/* offload: 16 streams over 8 helpers; every block of every stream is
 * requested once, on a helper thread, never on the loop's. */
static void test_offload_exactly_once(void **state)
{
	const unsigned nstreams = 16, blocks = 64;
	struct rig g;
	struct err e = { 0 };
	unsigned *seen;
	uint64_t total = 0;

	(void)state;
	rig_job(&g, "o", (uint64_t)nstreams * blocks * 4096, 4096, nstreams);
	g.job.offload = 8;
	assert_int_equal(rig_prepare(&g, &e), 0);
	rig_run(&g);
	seen = calloc(nstreams * blocks, sizeof(*seen));
	assert_non_null(seen);
	assert_int_equal(R.n, nstreams * blocks);
	for (unsigned i = 0; i < R.n; i++) {
		assert_int_equal(R.rec[i].off % 4096, 0);
		seen[R.rec[i].off / 4096]++;
		assert_int_not_equal(R.rec[i].tid, g.arena.ts[0].tid);
	}
	for (unsigned b = 0; b < nstreams * blocks; b++)
		if (seen[b] != 1)
			fail_msg("block %u requested %u times", b, seen[b]);
	for (unsigned s = 0; s < nstreams; s++) {
		assert_int_equal(g.jr.crew.wk.loop->stats[s].ops, blocks);
		total += g.jr.crew.wk.loop->stats[s].bytes;
	}
	assert_int_equal(total, g.arena.ts[0].rbytes);
	assert_int_equal(g.arena.ts[0].rops, nstreams * blocks);
	/* The helpers' slots follow the worker's; each one ran and ended. */
	for (unsigned h = 0; h < 8; h++) {
		assert_true(g.arena.ts[1 + h].tid > 0);
		assert_int_equal(g.arena.ts[1 + h].done, 1);
		assert_int_equal(g.arena.ts[1 + h].rops, 0);
	}
	free(seen);
	rig_free(&g);
}

static void run_permits(unsigned helpers, unsigned permits, int *max_running)
{
	struct rig g;
	struct err e = { 0 };

	rig_job(&g, "p", 16 * 8 * 4096, 4096, 16);
	g.job.offload = helpers;
	g.job.offload_permits = permits;
	assert_int_equal(rig_prepare(&g, &e), 0);
	R.delay_us = 500;
	rig_run(&g);
	assert_int_equal(R.n, 16 * 8);
	*max_running = R.max_running;
	rig_free(&g);
}

/* Sleeping requests on 8 helpers: with 2 permits never more than 2 at
 * once; without a limit, more than that. */
static void test_permits_bound_concurrency(void **state)
{
	int with2, with1, without;

	(void)state;
	run_permits(8, 2, &with2);
	run_permits(8, 1, &with1);
	run_permits(8, 0, &without);
	assert_true(with2 >= 1 && with2 <= 2);
	assert_int_equal(with1, 1);
	assert_true(without > 2);
}

/* Measured part: ramp excluded from stream totals like the job's. */
static void test_stream_base(void **state)
{
	struct rig g;
	struct err e = { 0 };

	(void)state;
	rig_job(&g, "x", 8 * 4096, 4096, 2);
	assert_int_equal(rig_prepare(&g, &e), 0);
	rig_run(&g);
	loop_take_base(g.jr.crew.wk.loop);
	assert_int_equal(g.jr.crew.wk.loop->base[0].ops, 4);
	assert_int_equal(g.jr.crew.wk.loop->base[1].bytes, 4 * 4096);
	rig_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams_one_per_file),
		cmocka_unit_test(test_streams_slice_one_target),
		cmocka_unit_test(test_streams_mismatch_refused),
		cmocka_unit_test(test_sync_round_robin),
		cmocka_unit_test(test_offload_exactly_once),
		cmocka_unit_test(test_permits_bound_concurrency),
		cmocka_unit_test(test_stream_base),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
