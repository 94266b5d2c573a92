/*
 * test_prefetch.c - reading ahead of an mmap reader (prefetch.c): the
 * window arithmetic (how much is requested, when, and again after a
 * jump), and that the helper modes really bring a cold file's pages into
 * the page cache ahead of the reader (mincore), from their own thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "job/options.h"
#include "run/prefetch.h"
#include "lib/stats.h"
#include "engines/target.h"

#define FILE_SIZE (8u << 20)
#define PAGE 4096u

static char path[300];

struct rig {
	struct job job;
	struct target t;
	struct thread_stats *st;	/* [0] the worker, [1] the helper */
	struct prefetch *p;
};

/* The test file at @path, written anew: a new inode, so no page of an
 * earlier test's file, and no read of it still in flight, belongs to it. */
static int write_file(void)
{
	uint8_t *buf = malloc(FILE_SIZE);
	int fd, ret = -1;

	if (!buf || getrandom(buf, FILE_SIZE, 0) < 0)
		goto out;
	unlink(path);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
	if (fd < 0)
		goto out;
	if (write(fd, buf, FILE_SIZE) == FILE_SIZE && fsync(fd) == 0)
		ret = 0;
	close(fd);
out:
	free(buf);
	return ret;
}

static void rig_init(struct rig *g, enum prefetch_mode mode, uint64_t window)
{
	struct err e = { 0 };

	memset(g, 0, sizeof(*g));
	option_defaults(&g->job);
	g->job.prefetch = mode;
	g->job.prefetch_window = window;
	g->t.path = path;
	g->t.fd = open(path, O_RDONLY);
	assert_true(g->t.fd >= 0);
	g->t.fd_direct = -1;
	g->t.len = FILE_SIZE;
	g->t.map = mmap(NULL, FILE_SIZE, PROT_READ, MAP_SHARED, g->t.fd, 0);
	assert_true(g->t.map != MAP_FAILED);
	g->t.map_len = FILE_SIZE;
	g->st = aligned_alloc(CACHELINE, 2 * sizeof(*g->st));
	memset(g->st, 0, 2 * sizeof(*g->st));
	assert_int_equal(prefetch_start(&g->p, &g->job, &g->t, &g->st[0], 1,
				       prefetch_helpers(&g->job) ? &g->st[1] : NULL, &e), 0);
}

static void rig_free(struct rig *g)
{
	prefetch_stop(g->p);
	munmap(g->t.map, FILE_SIZE);
	close(g->t.fd);
	free(g->st);
	option_release(&g->job);
}

/* Pages of [0, len) of the file in the page cache. */
static unsigned resident(const struct rig *g, uint64_t len)
{
	unsigned char vec[FILE_SIZE / PAGE];
	unsigned n = 0;

	assert_int_equal(mincore(g->t.map, len, vec), 0);
	for (uint64_t i = 0; i < len / PAGE; i++)
		n += vec[i] & 1;
	return n;
}

/* The whole file out of the page cache, checked. A page still being read
 * (an earlier test's readahead) is not dropped, so the drop is asked
 * again until none is left, as that I/O ends (the limit only keeps a
 * page that never goes from hanging the test). */
static void make_cold(const struct rig *g)
{
	struct timespec ts = { 0, 1000 * 1000 };

	for (unsigned n = 0; resident(g, FILE_SIZE) && n < 60000; n++) {
		posix_fadvise(g->t.fd, 0, 0, POSIX_FADV_DONTNEED);
		if (resident(g, FILE_SIZE))
			nanosleep(&ts, NULL);
	}
	assert_int_equal(resident(g, FILE_SIZE), 0);
}

/* 16k window, 4k steps, over a 64k stream read in 4k requests: the
 * first request asks for 20k, then one 4k step per request until the
 * end, 64k in all; the reader always has at least 3/4 of the window
 * requested ahead of it. */
static void test_window_steps(void **state)
{
	struct rig g;
	const uint64_t W = 16384, hi = 65536;

	(void)state;
	rig_init(&g, PREFETCH_READAHEAD, W);
	prefetch_key_set(g.p, 0, 0, 0, hi);
	for (uint64_t off = 0; off < hi; off += 4096) {
		uint64_t ahead_min = off + 4096 + W * 3 / 4;

		prefetch_advance(g.p, 0, off, 4096);
		if (off == 0)
			assert_int_equal(g.st[0].prefetch_bytes, 4096 + W);
		assert_true(prefetch_view(g.p)->keys[0].next >= (ahead_min < hi ? ahead_min : hi));
	}
	assert_int_equal(g.st[0].prefetch_bytes, hi);
	assert_int_equal(g.st[0].prefetch_reqs, 1 + (hi - 4096 - W) / 4096);
	assert_int_equal(g.st[0].prefetch_skipped, 0);
	rig_free(&g);
}

/* Going back (a wrap, a new piece) starts a fresh window there. */
static void test_jump_restarts_window(void **state)
{
	struct rig g;

	(void)state;
	rig_init(&g, PREFETCH_WILLNEED, 1 << 20);
	prefetch_key_set(g.p, 0, 0, 0, FILE_SIZE);
	for (uint64_t off = 0; off < (4u << 20); off += 65536)
		prefetch_advance(g.p, 0, off, 65536);
	{
		uint64_t before = g.st[0].prefetch_bytes;

		prefetch_advance(g.p, 0, 0, 65536);
		assert_int_equal(g.st[0].prefetch_bytes - before, 65536 + (1 << 20));
		/* Far ahead: also a jump. */
		before = g.st[0].prefetch_bytes;
		prefetch_advance(g.p, 0, 6u << 20, 65536);
		assert_int_equal(g.st[0].prefetch_bytes - before, 65536 + (1 << 20));
	}
	rig_free(&g);
}

/* A helper mode on a cold file: the window fills up without the reader
 * touching anything, and the faults are the helper's. The file is first
 * checked cold (else a fill proves nothing), and the fill is looked at
 * once the helper says it has done what it was given, not after a time
 * (the limit only keeps a broken helper from hanging the test). */
static void helper_fills(enum prefetch_mode mode)
{
	struct rig g;
	const struct thread_stats *h;
	struct timespec ts = { 0, 1000 * 1000 };
	unsigned waited = 0;

	/* A file of its own: an earlier test's readahead of the old one can
	 * still be in flight, and its pages would land after the drop (a
	 * loaded fresh clone: 256 pages back after make_cold saw none). */
	assert_int_equal(write_file(), 0);
	rig_init(&g, mode, 4u << 20);
	make_cold(&g);
	prefetch_key_set(g.p, 0, 0, 0, FILE_SIZE);
	prefetch_advance(g.p, 0, 0, PAGE);
	assert_int_equal(g.st[0].prefetch_bytes, PAGE + (4u << 20));
	while (prefetch_pending(g.p) && waited++ < 600000)
		nanosleep(&ts, NULL);
	assert_int_equal(prefetch_pending(g.p), 0);
	assert_int_equal(resident(&g, 4u << 20), (4u << 20) / PAGE);
	prefetch_stop(g.p);
	g.p = NULL;
	/* The helper ran in its own thread (its exit is published once it
	 * is joined), and faulted the pages in. */
	h = &g.st[1];
	assert_true(h->exit_majflt + h->exit_minflt > h->start_majflt + h->start_minflt);
	rig_free(&g);
}

static void test_touch_helper(void **state)
{
	(void)state;
	helper_fills(PREFETCH_TOUCH);
}

static void test_populate_helper(void **state)
{
	struct job j;
	struct err e = { 0 };

	(void)state;
	option_defaults(&j);
	j.prefetch = PREFETCH_POPULATE;
	if (prefetch_check(&j, &e) < 0) {
		option_release(&j);
		skip();	/* kernel before 5.14: the check's message says so */
	}
	option_release(&j);
	helper_fills(PREFETCH_POPULATE);
}

static void test_helper_count(void **state)
{
	struct job j;

	(void)state;
	option_defaults(&j);
	j.prefetch = PREFETCH_WILLNEED;
	assert_int_equal(prefetch_helpers(&j), 0);
	j.prefetch = PREFETCH_READAHEAD;
	assert_int_equal(prefetch_helpers(&j), 0);
	j.prefetch = PREFETCH_TOUCH;
	assert_int_equal(prefetch_helpers(&j), 1);
	j.prefetch = PREFETCH_POPULATE;
	assert_int_equal(prefetch_helpers(&j), 1);
	option_release(&j);
}

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(path, sizeof(path), "%s/faultline-prefetch-%d", tmp ? tmp : "/var/tmp", (int)getpid());
	return write_file();
}

static int group_teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_steps),
		cmocka_unit_test(test_jump_restarts_window),
		cmocka_unit_test(test_touch_helper),
		cmocka_unit_test(test_populate_helper),
		cmocka_unit_test(test_helper_count),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
