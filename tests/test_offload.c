/*
 * test_offload.c - the helper pool (offload.c) on its own: requests go
 * out through per-helper rings and come back exactly once, however many
 * helpers there are and however the owner interleaves submit and reap;
 * a fire-and-forget pool can be stopped with work queued; helpers publish
 * their thread ids and exit figures in their stats slots.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "run/offload.h"

#define NREQ 20000

struct counts {
	unsigned runs[NREQ];		/* by each helper, per request */
	unsigned helper_used[64];
	int running, max_running;
	unsigned delay_us;
};

static void count_run(void *arg, unsigned helper, struct io_req *r)
{
	struct counts *c = arg;
	int now = __atomic_add_fetch(&c->running, 1, __ATOMIC_SEQ_CST);
	int seen = __atomic_load_n(&c->max_running, __ATOMIC_SEQ_CST);

	while (now > seen &&
	       !__atomic_compare_exchange_n(&c->max_running, &seen, now, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	__atomic_add_fetch(&c->runs[r->off], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->helper_used[helper % 64], 1, __ATOMIC_RELAXED);
	if (c->delay_us) {
		struct timespec ts = { 0, (long)c->delay_us * 1000 };

		nanosleep(&ts, NULL);
	}
	r->res = r->len;
	__atomic_sub_fetch(&c->running, 1, __ATOMIC_SEQ_CST);
}

/* Push NREQ requests through @nhelpers with at most @out outstanding,
 * reaping in batches of up to @batch; each must come back once. */
static void run_all(unsigned nhelpers, unsigned out, unsigned batch)
{
	struct counts *c = calloc(1, sizeof(*c));
	struct io_req *reqs = calloc(out, sizeof(*reqs));
	struct io_req **done = calloc(batch, sizeof(*done));
	unsigned *freeq = calloc(out, sizeof(*freeq)), nfree = 0, next = 0, back = 0;
	struct offload_config cfg = {
		.nhelpers = nhelpers,
		.max_outstanding = out,
		.run = count_run,
		.notify = true,
	};
	struct offload_pool *p;
	struct err e = { 0 };

	assert_non_null(c);
	assert_non_null(reqs);
	cfg.arg = c;
	for (unsigned i = 0; i < out; i++) {
		reqs[i].slot = (uint16_t)i;
		freeq[nfree++] = i;
	}
	assert_int_equal(offload_start(&p, &cfg, &e), 0);
	while (back < NREQ) {
		while (nfree && next < NREQ) {
			struct io_req *r = &reqs[freeq[--nfree]];

			r->off = next++;
			r->len = 1;
			r->res = -1;
			assert_int_equal(offload_submit(p, r), 0);
		}
		/* Full: one more is refused. */
		if (!nfree && next < NREQ) {
			struct io_req extra = { .off = 0 };

			assert_int_equal(offload_submit(p, &extra), -EBUSY);
		}
		{
			unsigned got = offload_reap(p, done, batch, true);

			assert_true(got >= 1 && got <= batch);
			for (unsigned i = 0; i < got; i++) {
				assert_int_equal(done[i]->res, 1);
				freeq[nfree++] = done[i]->slot;
			}
			back += got;
		}
	}
	assert_int_equal(offload_outstanding(p), 0);
	/* Nothing left: a non-waiting reap returns at once. */
	assert_int_equal(offload_reap(p, done, batch, false), 0);
	offload_stop(p);
	for (unsigned i = 0; i < NREQ; i++)
		if (c->runs[i] != 1)
			fail_msg("request %u ran %u times", i, c->runs[i]);
	free(c);
	free(reqs);
	free(done);
	free(freeq);
}

static void test_one_helper(void **state)
{
	(void)state;
	run_all(1, 1, 1);
	run_all(1, 8, 8);
}

static void test_many_helpers_exactly_once(void **state)
{
	(void)state;
	run_all(8, 8, 8);
	run_all(32, 64, 5);
	run_all(3, 100, 100);
}

/* Helpers that sleep in their work run side by side: all of them can
 * be busy at once, and the least busy one gets the next request. */
static void test_helpers_run_concurrently(void **state)
{
	struct counts *c = calloc(1, sizeof(*c));
	struct io_req reqs[8];
	struct io_req *done[8];
	struct offload_config cfg = {
		.nhelpers = 8, .max_outstanding = 8, .run = count_run, .notify = true,
	};
	struct offload_pool *p;
	struct err e = { 0 };
	unsigned back = 0;

	(void)state;
	c->delay_us = 20000;
	cfg.arg = c;
	assert_int_equal(offload_start(&p, &cfg, &e), 0);
	memset(reqs, 0, sizeof(reqs));
	for (unsigned i = 0; i < 8; i++) {
		reqs[i].off = i;
		assert_int_equal(offload_submit(p, &reqs[i]), 0);
	}
	while (back < 8)
		back += offload_reap(p, done, 8, true);
	offload_stop(p);
	for (unsigned h = 0; h < 8; h++)
		assert_int_equal(c->helper_used[h], 1);
	assert_true(c->max_running >= 4);
	free(c);
}

/* Fire and forget: stop with requests still queued; helpers finish or
 * cancel them and exit; their stats slots say they ran and are done. */
static void test_stop_with_work_queued(void **state)
{
	struct counts *c = calloc(1, sizeof(*c));
	struct io_req reqs[64];
	struct thread_stats *st = aligned_alloc(CACHELINE, 2 * sizeof(*st));
	struct offload_config cfg = {
		.nhelpers = 2, .max_outstanding = 64, .run = count_run, .notify = false,
	};
	struct offload_pool *p;
	struct err e = { 0 };

	(void)state;
	memset(st, 0, 2 * sizeof(*st));
	c->delay_us = 1000;
	cfg.arg = c;
	cfg.stats = st;
	assert_int_equal(offload_start(&p, &cfg, &e), 0);
	memset(reqs, 0, sizeof(reqs));
	for (unsigned i = 0; i < 64; i++) {
		reqs[i].off = i;
		reqs[i].res = 7;
		assert_int_equal(offload_submit(p, &reqs[i]), 0);
	}
	offload_stop(p);
	for (unsigned i = 0; i < 64; i++) {
		assert_true(c->runs[i] <= 1);
		assert_true(reqs[i].res == reqs[i].len || reqs[i].res == -ECANCELED);
	}
	for (unsigned h = 0; h < 2; h++) {
		assert_true(st[h].tid > 0);
		assert_int_equal(st[h].done, 1);
		assert_int_equal(st[h].running, 0);
		assert_int_equal(st[h].rusage_ok, 1);
		assert_true(st[h].exit_nvcsw >= st[h].start_nvcsw);
	}
	free(st);
	free(c);
}

static void test_bad_config(void **state)
{
	struct offload_config cfg = { .nhelpers = 0, .max_outstanding = 1, .run = count_run };
	struct offload_pool *p = (void *)1;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(offload_start(&p, &cfg, &e), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(e.msg, "helpers"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_helper),
		cmocka_unit_test(test_many_helpers_exactly_once),
		cmocka_unit_test(test_helpers_run_concurrently),
		cmocka_unit_test(test_stop_with_work_queued),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
