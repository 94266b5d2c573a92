/*
 * test_reqcore.c - the worker's request loops on their failure paths,
 * through the real path: job_run_prepare lays out a scratch file for an
 * io_uring job, then the job runs with a scripted asynchronous engine in
 * io_uring's place. The engine pins every read it completes (as the
 * pools do) until release(), and fails the first completion of its
 * third reap, the third reap itself, or its twentieth queue().
 *
 * Checked: a request that completed without error is released whatever
 * the loop does next, also when the loop is stopping because another
 * request of the same reap failed, in a read job's loop and in a
 * writing job's alike (one rule for both); a failed reap fails the
 * worker and ends the loop (under ASan, without leaking what the loop
 * allocated); a failed queue() fails the worker, named for the engine,
 * and what was in flight then is reaped and released.
 *
 * And a time-bounded job whose worker first runs after its runtime has
 * ended (its clock started in the past, as on a starved host): every
 * loop, synchronous (the scripted engine completing each request inside
 * queue()) or asynchronous, still issues its first request(s), reaps
 * and counts them, and ends with nothing in flight.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engines/engine.h"
#include "lib/latclock.h"
#include "lib/stats.h"
#include "run/jobrun.h"
#include "run/worker.h"
#include "jobrig.h"
#include "testjob.h"
#include "scratchdir.h"

#define DEPTH 8


/* The scripted engine's state: one worker, so no atomics. */
static struct {
	struct io_req *queued[DEPTH];
	unsigned nq;
	bool held[DEPTH];
	int pins;		/* reads completed and not yet released */
	unsigned reaps;
	unsigned fail_reap;	/* this reap's first completion fails with EIO */
	unsigned fail_whole;	/* this reap returns -EIO */
	unsigned queues;
	unsigned fail_queue;	/* this queue() returns -EIO */
	unsigned released, bad_release;
} E;

static int fake_queue(struct engine_thread *et, struct io_req *r)
{
	(void)et;
	assert_true(E.nq < DEPTH);
	if (++E.queues == E.fail_queue)
		return -EIO;
	r->res = r->len;
	r->data = r->op == IO_READ ? r->buf : NULL;
	E.queued[E.nq++] = r;
	return ENGINE_QUEUED;
}

static int fake_reap(struct engine_thread *et, unsigned min, unsigned max, struct io_req **done)
{
	unsigned n = E.nq < max ? E.nq : max;

	(void)et;
	(void)min;
	if (++E.reaps == E.fail_whole)
		return -EIO;
	for (unsigned i = 0; i < n; i++) {
		struct io_req *r = E.queued[i];

		if (i == 0 && E.reaps == E.fail_reap) {
			r->res = -EIO;
			r->data = NULL;
		} else if (r->op == IO_READ) {
			/* Completed: pinned until release(), as a pool's read. */
			E.held[r->slot] = true;
			E.pins++;
		}
		done[i] = r;
	}
	memmove(E.queued, E.queued + n, (E.nq - n) * sizeof(*E.queued));
	E.nq -= n;
	return (int)n;
}

static void fake_release(struct engine_thread *et, struct io_req *r)
{
	(void)et;
	E.released++;
	if (!E.held[r->slot]) {
		E.bad_release++;
		return;
	}
	E.held[r->slot] = false;
	E.pins--;
}

static const struct engine_ops fake_engine = {
	.name = "scripted",
	.flags = ENGINE_F_ASYNC | ENGINE_F_BUFFERS,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH),
	.queue = fake_queue,
	.reap = fake_reap,
	.release = fake_release,
};

/* The synchronous one: each request completes inside queue(), a read
 * pinned until release() as the asynchronous one's. */
static int fake_sync_queue(struct engine_thread *et, struct io_req *r)
{
	(void)et;
	E.queues++;
	r->res = r->op == IO_FLUSH ? 0 : (int64_t)r->len;
	r->data = r->op == IO_READ ? r->buf : NULL;
	if (r->op == IO_READ) {
		E.held[r->slot] = true;
		E.pins++;
	}
	return ENGINE_DONE;
}

static const struct engine_ops fake_sync_engine = {
	.name = "scripted",
	.flags = ENGINE_F_BUFFERS,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH),
	.queue = fake_sync_queue,
	.release = fake_release,
};

/* One worker of an io_uring job over a scratch file, rw= @rw; with
 * @loop, an event loop (loop=2, iodepth=4: the same 8 slots) over two
 * slices of it, whose completions loop.c answers. */
static void rig_prepare(struct rig *g, const char *rw, bool loop, const char *runtime)
{
	char file[300];
	const char *opts[] = { "name", "reqcore", "filename", file, "size", "1m", "bs", "4k",
			       "rw", rw, "rwmixread", "100", "ioengine", "io_uring",
			       "iodepth", loop ? "4" : "8", "invalidate", "0",
			       "runtime", runtime ? runtime : "0",
			       loop ? "loop" : NULL, "2", NULL };

	snprintf(file, sizeof(file), "%s/f", scratch_dir);
	jobrig_prepare(g, opts);
	assert_int_equal(g->jr.crew.wk.ej.depth, DEPTH);
	assert_int_equal(g->job.loop, loop ? 2 : 0);
}

static void rig_run(struct rig *g, const char *rw, bool loop)
{
	rig_prepare(g, rw, loop, NULL);
	jobrig_go(g, &fake_engine);
}

/* A request fails; those completed with it are each released once. */
static void stop_releases(const char *rw, bool loop)
{
	struct rig g;

	memset(&E, 0, sizeof(E));
	E.fail_reap = 3;
	rig_run(&g, rw, loop);
	assert_int_equal(g.arena.ts[0].failed, 1);
	assert_int_equal(g.arena.ts[0].error.code, EIO);
	assert_true(E.reaps >= 3);
	assert_int_equal(E.bad_release, 0);
	assert_int_equal(E.pins, 0);
	jobrig_free(&g);
}

static void test_read_stop_releases(void **state)
{
	(void)state;
	stop_releases("randread", false);
}

/* rwmixread=100: every request a read, but through the writing loop. */
static void test_rw_stop_releases(void **state)
{
	(void)state;
	stop_releases("randrw", false);
}

/* A failed reap fails the worker, named, and ends its loop. */
static void reap_fails(const char *rw, bool loop)
{
	struct rig g;

	memset(&E, 0, sizeof(E));
	E.fail_whole = 3;
	rig_run(&g, rw, loop);
	assert_int_equal(g.arena.ts[0].failed, 1);
	assert_int_equal(g.arena.ts[0].error.code, EIO);
	assert_string_equal(g.arena.ts[0].error.what, "reap");
	assert_int_equal(E.reaps, 3);
	assert_int_equal(E.bad_release, 0);
	jobrig_free(&g);
}

static void test_read_reap_fails(void **state)
{
	(void)state;
	reap_fails("randread", false);
}

static void test_rw_reap_fails(void **state)
{
	(void)state;
	reap_fails("randrw", false);
}

/* queue() fails with requests in flight: they are reaped, released. */
static void queue_fails(const char *rw, bool loop)
{
	struct rig g;

	memset(&E, 0, sizeof(E));
	E.fail_queue = 20;
	rig_run(&g, rw, loop);
	assert_int_equal(g.arena.ts[0].failed, 1);
	assert_int_equal(g.arena.ts[0].error.code, EIO);
	assert_string_equal(g.arena.ts[0].error.what, "scripted");
	assert_int_equal(E.nq, 0);
	assert_int_equal(E.bad_release, 0);
	assert_int_equal(E.pins, 0);
	jobrig_free(&g);
}

static void test_read_queue_fails(void **state)
{
	(void)state;
	queue_fails("randread", false);
}

static void test_rw_queue_fails(void **state)
{
	(void)state;
	queue_fails("randrw", false);
}

/* The same three in the event loop (loop.c's asynchronous loop): its
 * completions answered as the core answers them. */
static void test_loop_stop_releases(void **state)
{
	(void)state;
	stop_releases("randread", true);
}

static void test_loop_reap_fails(void **state)
{
	(void)state;
	reap_fails("randread", true);
}

static void test_loop_queue_fails(void **state)
{
	(void)state;
	queue_fails("randread", true);
}

/* A 100 ms job whose clock started a second ago: its worker first runs
 * after its runtime has ended, and still completes its first
 * request(s), each counted and released, nothing left in flight. */
static void late_start(const char *rw, bool loop, const struct engine_ops *ops)
{
	struct rig g;
	const uint64_t now = now_ns();
	const struct thread_stats *st;

	memset(&E, 0, sizeof(E));
	rig_prepare(&g, rw, loop, "100ms");
	assert_int_equal(g.job.runtime_ns, 100000000ull);
	jobrig_go_at(&g, ops, now > 1000000000ull ? now - 1000000000ull : 0);
	st = &g.arena.ts[0];
	assert_int_equal(st->failed, 0);
	assert_true(E.queues >= 1);
	assert_true(st->rops >= 1);
	assert_int_equal(st->rops, E.released);
	assert_int_equal(E.nq, 0);
	assert_int_equal(E.bad_release, 0);
	assert_int_equal(E.pins, 0);
	jobrig_free(&g);
}

static void test_read_late_start(void **state)
{
	(void)state;
	late_start("randread", false, &fake_engine);
}

static void test_rw_late_start(void **state)
{
	(void)state;
	late_start("randrw", false, &fake_engine);
}

static void test_loop_late_start(void **state)
{
	(void)state;
	late_start("randread", true, &fake_engine);
}

/* The synchronous loops, which issue before they look at the clock:
 * the same rule. */
static void test_sync_late_start(void **state)
{
	(void)state;
	late_start("randread", false, &fake_sync_engine);
	late_start("randrw", false, &fake_sync_engine);
	late_start("randread", true, &fake_sync_engine);
}

/* A stop asked before the worker ran (a signal, exitall) is honoured at
 * once, deadline or not: no request at all, in every loop. */
static void stopped_first(const char *rw, bool loop, const struct engine_ops *ops)
{
	struct rig g;

	memset(&E, 0, sizeof(E));
	rig_prepare(&g, rw, loop, "100ms");
	g.stop = 1;
	jobrig_go_at(&g, ops, now_ns());
	assert_int_equal(g.arena.ts[0].failed, 0);
	assert_int_equal(E.queues, 0);
	assert_int_equal(g.arena.ts[0].rops, 0);
	jobrig_free(&g);
}

static void test_stop_before_first(void **state)
{
	(void)state;
	stopped_first("randread", false, &fake_engine);
	stopped_first("randrw", false, &fake_engine);
	stopped_first("randread", true, &fake_engine);
	stopped_first("randread", false, &fake_sync_engine);
	stopped_first("randrw", false, &fake_sync_engine);
	stopped_first("randread", true, &fake_sync_engine);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_stop_releases),
		cmocka_unit_test(test_rw_stop_releases),
		cmocka_unit_test(test_read_reap_fails),
		cmocka_unit_test(test_rw_reap_fails),
		cmocka_unit_test(test_read_queue_fails),
		cmocka_unit_test(test_rw_queue_fails),
		cmocka_unit_test(test_loop_stop_releases),
		cmocka_unit_test(test_loop_reap_fails),
		cmocka_unit_test(test_loop_queue_fails),
		cmocka_unit_test(test_read_late_start),
		cmocka_unit_test(test_rw_late_start),
		cmocka_unit_test(test_loop_late_start),
		cmocka_unit_test(test_sync_late_start),
		cmocka_unit_test(test_stop_before_first),
	};

	return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}
