/*
 * test_writes.c - a worker's write state (writes.c): the read/write mix,
 * where writes land when threads share a target, the flush policy's
 * counting, and the record of written blocks verify reads back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testjob.h"

#include "job/options.h"
#include "workload/writes.h"

#define KB 1024ull
#define MB (1024 * KB)

static struct job job;

static int setup(void **state)
{
	(void)state;
	option_defaults(&job);
	job.rw = RW_RANDWRITE;
	job.bs = 4 * KB;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	option_release(&job);
	return 0;
}

static void ws_setup(struct writes *ws, unsigned worker, unsigned nworkers,
		     const struct gen_region *r, unsigned n)
{
	struct writes_config c = { .wj = wl_of(&job), .worker = worker, .nworkers = nworkers,
				   .seed = 42 };
	struct err e = { 0 };

	if (writes_setup(ws, &c, r, n, &e))
		fail_msg("writes_setup: %s", e.msg);
}

/* rwmixread=R: about R % of requests read, the same sequence for the
 * same seed, and 0 and 100 are absolute. */
static void test_mix(void **state)
{
	static const unsigned pcts[] = { 0, 10, 50, 70, 100 };
	struct gen_region r = { 0, 1 * MB };

	(void)state;
	job.rw = RW_RANDRW;
	for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
		struct writes a, b;
		unsigned reads = 0, n = 100000;

		job.rwmixread = pcts[k];
		ws_setup(&a, 0, 1, &r, 1);
		ws_setup(&b, 0, 1, &r, 1);
		for (unsigned i = 0; i < n; i++) {
			bool wa = writes_pick(&a);

			assert_int_equal(wa, writes_pick(&b));
			reads += !wa;
		}
		if (pcts[k] == 0 || pcts[k] == 100)
			assert_int_equal(reads, pcts[k] * n / 100);
		else if (reads < (pcts[k] - 1) * n / 100 || reads > (pcts[k] + 1) * n / 100)
			fail_msg("rwmixread=%u: %u of %u read", pcts[k], reads, n);
		writes_free(&a);
		writes_free(&b);
	}
	/* another worker draws another sequence */
	{
		struct writes a, b;
		unsigned same = 0;

		job.rwmixread = 50;
		ws_setup(&a, 0, 1, &r, 1);
		ws_setup(&b, 1, 1, &r, 1);
		for (unsigned i = 0; i < 1000; i++)
			same += writes_pick(&a) == writes_pick(&b);
		assert_true(same < 600);
		writes_free(&a);
		writes_free(&b);
	}
	/* a job that only writes always writes */
	{
		struct writes a;

		job.rw = RW_WRITE;
		ws_setup(&a, 0, 1, &r, 1);
		for (unsigned i = 0; i < 1000; i++)
			assert_true(writes_pick(&a));
		writes_free(&a);
	}
}

/* Threads sharing a target: thread w of n writes only blocks b with
 * b mod n == w, near the block drawn, and never outside the region. */
static void test_placement_owned(void **state)
{
	/* 1003 blocks: the last group is short, so the fold-back is used. */
	struct gen_region r = { 64 * KB, 1003 * 4 * KB };
	const unsigned n = 3;

	(void)state;
	for (unsigned w = 0; w < n; w++) {
		struct writes ws;

		ws_setup(&ws, w, n, &r, 1);
		for (uint64_t b = 0; b < 1003; b++) {
			uint64_t off = writes_place(&ws, 0, r.base + b * 4 * KB);
			uint64_t nb = (off - r.base) / (4 * KB);

			assert_int_equal((off - r.base) % (4 * KB), 0);
			assert_true(off >= r.base && off + 4 * KB <= r.base + r.len);
			assert_int_equal(nb % n, w);
			assert_true(nb + n > b && nb < b + n);
		}
		writes_free(&ws);
	}
}

/* One thread (or per-thread scratch files): offsets are kept. */
static void test_placement_alone(void **state)
{
	struct gen_region r = { 0, 100 * 4 * KB };
	struct writes ws;

	(void)state;
	ws_setup(&ws, 0, 1, &r, 1);
	for (uint64_t b = 0; b < 100; b++)
		assert_int_equal(writes_place(&ws, 0, b * 4 * KB), b * 4 * KB);
	writes_free(&ws);

	/* sequential writers take slices (jobrun.c), not owned blocks */
	job.rw = RW_WRITE;
	ws_setup(&ws, 1, 2, &r, 1);
	assert_int_equal(writes_place(&ws, 0, 8 * KB), 8 * KB);
	writes_free(&ws);
}

/* A region with fewer blocks than threads sharing it is refused. */
static void test_placement_too_small(void **state)
{
	struct gen_region r = { 0, 2 * 4 * KB };
	struct writes_config c = { .wj = wl_of(&job), .worker = 0, .nworkers = 3, .seed = 1 };
	struct writes ws;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(writes_setup(&ws, &c, &r, 1, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "numjobs=3"));
	writes_free(&ws);
}

/* fsync=N: due after every Nth write, exactly floor(writes / N) times. */
static void test_flush_every(void **state)
{
	struct writes_flush f;
	unsigned due = 0;

	(void)state;
	writes_flush_init(&f, 8, 0, 0);
	for (unsigned i = 1; i <= 1003; i++) {
		bool d = writes_flush_due(&f, 0);

		assert_int_equal(d, i % 8 == 0);
		due += d;
	}
	assert_int_equal(due, 1003 / 8);

	writes_flush_init(&f, 1, 0, 0);
	for (unsigned i = 0; i < 10; i++)
		assert_true(writes_flush_due(&f, 0));

	writes_flush_init(&f, 0, 0, 0);
	for (unsigned i = 0; i < 1000; i++)
		assert_false(writes_flush_due(&f, 0));
}

/* sync_interval: due on the first write once the interval has passed
 * since the last flush of any kind; an every-N flush restarts it. */
static void test_flush_interval(void **state)
{
	struct writes_flush f;

	(void)state;
	writes_flush_init(&f, 0, 100, 1000);
	assert_false(writes_flush_due(&f, 1050));
	assert_false(writes_flush_due(&f, 1099));
	assert_true(writes_flush_due(&f, 1100));
	assert_false(writes_flush_due(&f, 1150));
	assert_false(writes_flush_due(&f, 1199));
	/* no write for a long time: the next write flushes, once */
	assert_true(writes_flush_due(&f, 5000));
	assert_false(writes_flush_due(&f, 5001));

	/* both: fsync=4 and an interval of 100 */
	writes_flush_init(&f, 4, 100, 0);
	assert_false(writes_flush_due(&f, 10));
	assert_false(writes_flush_due(&f, 20));
	assert_false(writes_flush_due(&f, 30));
	assert_true(writes_flush_due(&f, 40));		/* 4th write */
	assert_false(writes_flush_due(&f, 130));	/* 100 from 40 not reached */
	assert_true(writes_flush_due(&f, 140));		/* interval */
	assert_false(writes_flush_due(&f, 150));
	assert_true(writes_flush_due(&f, 160));		/* 4 writes since the 4th */
}

/* Dirty targets: listed once each, cleared by a flush; written stays. */
static void test_dirty_targets(void **state)
{
	struct gen_region r[3] = { { 0, 1 * MB }, { 0, 1 * MB }, { 0, 1 * MB } };
	struct writes ws;

	(void)state;
	ws_setup(&ws, 0, 1, r, 3);
	writes_place(&ws, 2, 0);
	writes_place(&ws, 0, 4 * KB);
	writes_place(&ws, 2, 8 * KB);
	assert_int_equal(ws.ndirty, 2);
	assert_int_equal(ws.dirty[0], 2);
	assert_int_equal(ws.dirty[1], 0);
	writes_clean(&ws);
	assert_int_equal(ws.ndirty, 0);
	assert_true(ws.t[2].state & WRITES_WRITTEN);
	assert_false(ws.t[2].state & WRITES_DIRTY);
	assert_false(ws.t[1].state & WRITES_WRITTEN);
	writes_place(&ws, 0, 0);
	assert_int_equal(ws.ndirty, 1);
	writes_free(&ws);
}

/* A replayed write (writes_mark): its target dirty and written, listed
 * once, and no offset moved: owned placement is the generator's. */
static void test_mark(void **state)
{
	struct gen_region r[2] = { { 0, 1 * MB }, { 0, 1 * MB } };
	struct writes ws;

	(void)state;
	ws_setup(&ws, 1, 4, r, 2);	/* worker 1 of 4: placement would move offsets */
	writes_mark(&ws, 1);
	writes_mark(&ws, 1);
	assert_int_equal(ws.ndirty, 1);
	assert_int_equal(ws.dirty[0], 1);
	assert_true(ws.t[1].state & WRITES_DIRTY);
	assert_true(ws.t[1].state & WRITES_WRITTEN);
	assert_false(ws.t[0].state & WRITES_WRITTEN);
	writes_clean(&ws);
	writes_mark(&ws, 0);
	assert_int_equal(ws.ndirty, 1);
	assert_int_equal(ws.dirty[0], 0);
	assert_true(ws.t[1].state & WRITES_WRITTEN);
	assert_false(ws.t[1].state & WRITES_DIRTY);
	writes_free(&ws);
}

/* verify=crc32c: the map holds exactly the blocks written. */
static void test_verify_map(void **state)
{
	struct gen_region r = { 4 * KB, 200 * 4 * KB };
	struct writes ws;

	(void)state;
	job.verify = VERIFY_CRC32C;
	ws_setup(&ws, 0, 1, &r, 1);
	writes_place(&ws, 0, r.base);
	writes_place(&ws, 0, r.base + 63 * 4 * KB);
	writes_place(&ws, 0, r.base + 64 * 4 * KB);
	writes_place(&ws, 0, r.base + 199 * 4 * KB);
	writes_place(&ws, 0, r.base + 64 * 4 * KB);
	assert_int_equal(verify_map_count(&ws.t[0].vmap), 4);
	assert_true(verify_map_test(&ws.t[0].vmap, 0));
	assert_true(verify_map_test(&ws.t[0].vmap, 63));
	assert_true(verify_map_test(&ws.t[0].vmap, 64));
	assert_true(verify_map_test(&ws.t[0].vmap, 199));
	assert_false(verify_map_test(&ws.t[0].vmap, 1));
	writes_free(&ws);

	/* not asked: no map */
	job.verify = VERIFY_NONE;
	ws_setup(&ws, 0, 1, &r, 1);
	assert_null(ws.t[0].vmap.bits);
	writes_free(&ws);
}

/* A block size that is not a power of two divides instead of shifting. */
static void test_odd_block_size(void **state)
{
	struct gen_region r = { 0, 30 * 3 * 512 };
	struct writes ws;

	(void)state;
	job.bs = 3 * 512;
	job.verify = VERIFY_CRC32C;
	ws_setup(&ws, 1, 2, &r, 1);
	assert_int_equal(ws.bs_shift, 0);
	for (uint64_t b = 0; b < 30; b++) {
		uint64_t off = writes_place(&ws, 0, b * 1536);

		assert_int_equal(off % 1536, 0);
		assert_int_equal(off / 1536 % 2, 1);
		assert_true(verify_map_test(&ws.t[0].vmap, off / 1536));
	}
	assert_int_equal(verify_map_count(&ws.t[0].vmap), 15);
	writes_free(&ws);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_owned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_too_small, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_every, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_interval, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirty_targets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_odd_block_size, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
