/*
 * pooltest.h - what the two pools' tests (test_bufpool.c,
 * test_vmcache.c) share: a sleep of milliseconds; a wait until a thread
 * sleeps in a futex, where a pool puts a thread that waits for a page, a
 * latch or room; and the checks of a request across pages
 * (pool_span.h), which both pools serve the same way. Include it after
 * cmocka.h, with PAGE defined (the tests' page bytes) and a
 * stamp(page, k, gen) that fills page k as the tests' fake device does.
 */
#ifndef FAULTLINE_TESTS_POOLTEST_H
#define FAULTLINE_TESTS_POOLTEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <string.h>
#include <time.h>

#include "engines/pool_span.h"

static inline void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Until thread @tid (once it has published it) is asleep in a futex:
 * waiting for the pool, where a sleep of a fixed time would only guess
 * that it got there (on a loaded host it may not have started). Gives up
 * after a minute, for the checks that follow to say what went wrong. */
static inline void wait_in_futex(const int *tid)
{
	for (int n = 0; n < 60000; n++) {
		int t = __atomic_load_n(tid, __ATOMIC_ACQUIRE);
		char path[64], buf[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", t);
		f = t ? fopen(path, "r") : NULL;
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
			if (atol(buf) == SYS_futex)
				return;
		}
		sleep_ms(1);
	}
}

/* What a pool's span test counts: the pool's counters as its get
 * callback keeps them, and the fake device's reads. */
struct span_counts {
	const uint64_t *hits, *misses, *dev_reads;
};

/* @len bytes from byte @in_page of page @k on, as the device holds them
 * (every generation 0), into @want. */
static inline void span_want(uint8_t *want, uint64_t k, uint32_t in_page, uint32_t len)
{
	uint8_t page[PAGE];

	for (uint32_t done = 0; done < len; k++, in_page = 0) {
		uint32_t n = PAGE - in_page < len - done ? PAGE - in_page : len - done;

		stamp(page, k, 0);
		memcpy(want + done, page + in_page, n);
		done += n;
	}
}

/*
 * A read across three pages, from inside the first to inside the last:
 * the bytes are the device's, each page missed, then hit when read
 * again. A write across two, the first whole (not read first) and part
 * of the second (read first): read back as written, the rest of the
 * second page as it was. The pool holds nothing latched after either
 * (the caller checks).
 */
static inline void span_read_write(const struct pool_span_ops *o, const struct span_counts *sc)
{
	const uint32_t len = 2 * PAGE + 200;
	uint8_t got[3 * PAGE], want[3 * PAGE], w[PAGE + 50];
	uint64_t reads;

	span_want(want, 5, 100, len);
	assert_int_equal(pool_span_read(o, 5, 100, got, len), 0);
	assert_memory_equal(got, want, len);
	assert_int_equal(*sc->misses, 3);
	assert_int_equal(*sc->hits, 0);
	memset(got, 0, sizeof(got));
	assert_int_equal(pool_span_read(o, 5, 100, got, len), 0);
	assert_memory_equal(got, want, len);
	assert_int_equal(*sc->hits, 3);

	/* Each page keeps its number and generation in its first 16 bytes,
	 * which the fake device checks on a write-back. */
	memset(w, 0xab, sizeof(w));
	stamp(got, 20, 0);
	memcpy(w, got, 16);
	stamp(got, 21, 0);
	memcpy(w + PAGE, got, 16);
	reads = *sc->dev_reads;
	assert_int_equal(pool_span_write(o, 20, 0, w, sizeof(w)), 0);
	assert_int_equal(*sc->dev_reads, reads + 1);	/* page 21 only */
	assert_int_equal(pool_span_read(o, 20, 0, got, sizeof(w)), 0);
	assert_memory_equal(got, w, sizeof(w));
	span_want(want, 21, 50, PAGE - 50);
	assert_int_equal(pool_span_read(o, 21, 50, got, PAGE - 50), 0);
	assert_memory_equal(got, want, PAGE - 50);
}

/* A read across @n pages, more than the pool has room for: served page
 * by page (a pool that held the whole run would wait for room that
 * only it could give), every page missed. */
static inline void span_longer_than_pool(const struct pool_span_ops *o,
					 const struct span_counts *sc, unsigned n)
{
	uint8_t *got = malloc((size_t)n * PAGE), *want = malloc((size_t)n * PAGE);

	assert_non_null(got);
	assert_non_null(want);
	span_want(want, 10, 0, n * PAGE);
	assert_int_equal(pool_span_read(o, 10, 0, got, n * PAGE), 0);
	assert_memory_equal(got, want, (size_t)n * PAGE);
	assert_int_equal(*sc->misses, n);
	free(got);
	free(want);
}

#endif
