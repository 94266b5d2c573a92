/*
 * test_reqahead.c - the synchronous read loop that tells an engine of
 * the requests to come (engine.h's prefetch hook), through the real
 * path: job_run_prepare lays out a scratch file for a psync job, then
 * the job runs with a recording synchronous engine in psync's place,
 * once without the hook and once with it.
 *
 * Checked: with the hook the loop queues the very same requests, in the
 * same order and to the same end (a random read job bounded by io_size,
 * whose generator says "no more" while the loop is still two requests
 * behind it), as without; each hint names exactly the request queued
 * next and the one after (none after the last, NULL once only one is
 * left); a queue() that fails still fails the worker, named for the
 * engine, and releases every request that completed.
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
#include "lib/stats.h"
#include "run/jobrun.h"
#include "run/worker.h"
#include "jobrig.h"
#include "testjob.h"

#define MAXREQ 1024

static char dir[256];

struct rec {
	uint64_t off;
	uint32_t len;
	uint16_t target;
};

/* The recording engine's state: one worker, so no atomics. */
static struct {
	struct rec q[MAXREQ];		/* queued, in order */
	unsigned nq;
	struct rec next[MAXREQ], after[MAXREQ];	/* hints given before queue i */
	bool has_after[MAXREQ];
	unsigned nhint;			/* hints given since the last queue() */
	bool hinted[MAXREQ];
	unsigned fail_queue;		/* this queue() fails with -EIO (0: none) */
	int pins;
	unsigned bad_hint;		/* a hint given twice before one queue() */
} E;

static struct rec rec_of(const struct io_req *r)
{
	return (struct rec){ .off = r->off, .len = r->len, .target = r->target };
}

static int rec_queue(struct engine_thread *et, struct io_req *r)
{
	(void)et;
	assert_true(E.nq < MAXREQ);
	if (E.fail_queue && E.nq + 1 == E.fail_queue)
		return -EIO;
	assert_int_equal(r->op, IO_READ);
	E.q[E.nq++] = rec_of(r);
	E.nhint = 0;
	r->res = r->len;
	r->data = r->buf;
	E.pins++;
	return ENGINE_DONE;
}

static void rec_release(struct engine_thread *et, struct io_req *r)
{
	(void)et;
	(void)r;
	E.pins--;
}

/* Given just before queue() number E.nq + 1: @next follows it. */
static void rec_prefetch(struct engine_thread *et, const struct io_req *next,
			 const struct io_req *after)
{
	const unsigned i = E.nq;

	(void)et;
	assert_true(i < MAXREQ);
	if (E.nhint++)
		E.bad_hint++;
	E.hinted[i] = true;
	E.next[i] = rec_of(next);
	E.has_after[i] = after != NULL;
	if (after)
		E.after[i] = rec_of(after);
}

static struct engine_ops rec_engine = {
	.name = "recording",
	.flags = ENGINE_F_BUFFERS,
	.ops = ENGINE_OP(IO_READ),
	.queue = rec_queue,
	.release = rec_release,
};

/* One worker of a psync randread job over a scratch file, @n requests
 * (io_size), the recording engine with the prefetch hook or without. */
static void rig_run(struct rig *g, unsigned n, bool hook)
{
	char file[300], io_size[32];
	const char *opts[] = { "name", "reqahead", "filename", file, "size", "1m", "bs", "4k",
			       "rw", "randread", "io_size", io_size, "ioengine", "psync",
			       "invalidate", "0", "randseed", "7", NULL };

	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(io_size, sizeof(io_size), "%u", n * 4096);
	jobrig_prepare(g, opts);
	rec_engine.prefetch = hook ? rec_prefetch : NULL;
	jobrig_go(g, &rec_engine);
}

static bool rec_eq(const struct rec *a, const struct rec *b)
{
	return a->off == b->off && a->len == b->len && a->target == b->target;
}

/* Same requests with the hook as without; each hint the truth. */
static void test_same_requests(void **state)
{
	static struct rec plain[MAXREQ];
	const unsigned n = 300;	/* more than the 256 blocks: the random map wraps */
	unsigned nplain;
	struct rig g;

	(void)state;
	memset(&E, 0, sizeof(E));
	rig_run(&g, n, false);
	assert_int_equal(g.arena.ts[0].failed, 0);
	nplain = E.nq;
	assert_int_equal(nplain, n);
	memcpy(plain, E.q, sizeof(plain));
	for (unsigned i = 0; i < nplain; i++)
		assert_false(E.hinted[i]);
	jobrig_free(&g);

	memset(&E, 0, sizeof(E));
	rig_run(&g, n, true);
	assert_int_equal(g.arena.ts[0].failed, 0);
	assert_int_equal(E.nq, nplain);
	assert_int_equal(E.pins, 0);
	assert_int_equal(E.bad_hint, 0);
	for (unsigned i = 0; i < nplain; i++) {
		assert_true(rec_eq(&E.q[i], &plain[i]));
		/* Before queue i: a hint for i + 1 and i + 2 where they exist. */
		assert_int_equal(E.hinted[i], i + 1 < nplain);
		if (i + 1 < nplain)
			assert_true(rec_eq(&E.next[i], &plain[i + 1]));
		assert_int_equal(E.has_after[i], i + 2 < nplain);
		if (i + 2 < nplain)
			assert_true(rec_eq(&E.after[i], &plain[i + 2]));
	}
	jobrig_free(&g);
}

/* A failed queue() with the hook: the worker fails, named, and what
 * completed was released; what was drawn ahead was never queued. */
static void test_queue_fails(void **state)
{
	struct rig g;

	(void)state;
	memset(&E, 0, sizeof(E));
	E.fail_queue = 20;
	rig_run(&g, 100, true);
	assert_int_equal(g.arena.ts[0].failed, 1);
	assert_int_equal(g.arena.ts[0].error.code, EIO);
	assert_string_equal(g.arena.ts[0].error.what, "recording");
	assert_int_equal(E.nq, 19);
	assert_int_equal(E.pins, 0);
	jobrig_free(&g);
}

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/faultline-reqahead-XXXXXX", tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[400];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_requests),
		cmocka_unit_test(test_queue_fails),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
