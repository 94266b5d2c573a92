/*
 * test_bufpool.c - the buffer pool (bufpool.c) on a fake device: hits,
 * misses and the clock's second chance on one thread; keys that share a
 * home bucket spill, and survive the deletion of their neighbours; a
 * page being loaded is waited for, not read twice; a full pool of pinned
 * frames is waited out; a writer is not starved by a stream of readers;
 * read and write-back failures leave the table
 * whole; and a stress run of several threads on a tiny pool, where every
 * page read carries its key and every write is counted, so a torn or
 * lost update shows (run under TSan by make check-tsan); a request
 * across pages is served page by page, even one longer than the pool.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "engines/bufpool.h"

#define PAGE 4096
#define DISK_PAGES 512

/*
 * The fake device: page k holds its key in its first 8 bytes and a
 * generation (how often it was written back with an increment) in the
 * next 8. Reads fill the rest with a byte of the key so a frame holding
 * another page's tail shows too.
 */
struct fakedev {
	uint64_t gen[DISK_PAGES];
	uint64_t reads, writes;		/* atomics: several threads */
	uint32_t fail_read_key, fail_write_key;	/* BUFPOOL_NONE: none */
	/* A gate for the loader test: the read announces itself and waits. */
	int gated, loading, open_gate;
};

static void stamp(uint8_t *frame, uint64_t key, uint64_t gen)
{
	memset(frame + 16, (int)(key & 0xff), PAGE - 16);
	memcpy(frame, &key, 8);
	memcpy(frame + 8, &gen, 8);
}

/* After stamp, which its span checks use. */
#include "pooltest.h"

static int fake_read(void *arg, uint32_t key, uint8_t *frame)
{
	struct fakedev *d = arg;
	uint64_t page = key;

	if (key == d->fail_read_key)
		return -EIO;
	if (__atomic_load_n(&d->gated, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&d->loading, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&d->open_gate, __ATOMIC_ACQUIRE))
			usleep(1000);
	}
	__atomic_add_fetch(&d->reads, 1, __ATOMIC_RELAXED);
	stamp(frame, key, page < DISK_PAGES ? __atomic_load_n(&d->gen[page], __ATOMIC_RELAXED) : 0);
	return 0;
}

static int fake_write(void *arg, uint32_t key, const uint8_t *frame)
{
	struct fakedev *d = arg;
	uint64_t page = key, k, g;

	if (key == d->fail_write_key)
		return -EIO;
	memcpy(&k, frame, 8);
	memcpy(&g, frame + 8, 8);
	/* A frame written back for the wrong page is a pool bug. */
	if (k != key || page >= DISK_PAGES)
		return -EUCLEAN;
	__atomic_store_n(&d->gen[page], g, __ATOMIC_RELAXED);
	__atomic_add_fetch(&d->writes, 1, __ATOMIC_RELAXED);
	return 0;
}

static struct fakedev *dev_new(void)
{
	struct fakedev *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	d->fail_read_key = d->fail_write_key = BUFPOOL_NONE;
	return d;
}

static struct bufpool_io io_of(struct fakedev *d)
{
	return (struct bufpool_io){ .read = fake_read, .write = fake_write, .arg = d };
}

static struct bufpool *pool_new(uint32_t frames)
{
	struct bufpool *bp = NULL;
	struct err e = { 0 };

	assert_int_equal(bufpool_create(&bp, (uint64_t)frames * PAGE, PAGE, 0, &e), 0);
	assert_int_equal(bp->nframes, frames);
	return bp;
}

static void pool_ok(struct bufpool *bp)
{
	struct err e = { 0 };
	int ret = bufpool_check(bp, &e);

	if (ret)
		fail_msg("pool inconsistent: %s", e.msg);
}

static uint64_t key_in(const uint8_t *data)
{
	uint64_t k;

	memcpy(&k, data, 8);
	return k;
}

/* get, check the frame holds @key, unpin. */
static void touch(struct bufpool *bp, struct bufpool_io *io, struct pool_counters *c,
		  uint32_t key)
{
	uint32_t ref = BUFPOOL_NONE;
	uint8_t *data = NULL;

	assert_int_equal(bufpool_get(bp, key, BUFPOOL_SHARED, io, c, &ref, &data), 0);
	assert_true(data >= bp->frames && data < bp->frames + (size_t)bp->nframes * PAGE);
	assert_true(key_in(data) == key);
	bufpool_unpin(bp, ref);
}

/* ---- one thread ---------------------------------------------------------- */

static void test_hit_and_miss(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(4);
	struct pool_counters c = { 0 };

	(void)state;
	touch(bp, &io, &c, 1);
	assert_int_equal(c.misses, 1);
	assert_int_equal(c.reads, 1);
	assert_int_equal(c.hits, 0);
	touch(bp, &io, &c, 1);
	touch(bp, &io, &c, 1);
	assert_int_equal(c.hits, 2);
	assert_int_equal(c.misses, 1);
	assert_int_equal(d->reads, 1);
	touch(bp, &io, &c, 2);
	assert_int_equal(c.misses, 2);
	assert_int_equal(bufpool_used(bp), 2);
	assert_int_equal(c.evictions, 0);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* Read-ahead: a page read into a frame taken outside the table enters
 * the pool unpinned, a hit from then on; one another thread loaded first
 * stays, and the frame read ahead is free again; a frame given back
 * after a failed read is free; the pool stays consistent throughout. */
static void test_read_ahead(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(4);
	struct pool_counters c = { 0 };
	uint32_t f, g;

	(void)state;
	assert_int_equal(bufpool_frame_take(bp, &io, &c, &f), 0);
	stamp(bufpool_frame(bp, f), 7, 0);
	assert_int_equal(bufpool_lookup(bp, 7), BUFPOOL_NONE);
	assert_int_equal(bufpool_insert(bp, 7, f, &c), 1);
	assert_int_equal(c.prefetches, 1);
	assert_int_equal(bufpool_lookup(bp, 7), f);
	pool_ok(bp);
	touch(bp, &io, &c, 7);
	assert_int_equal(c.hits, 1);
	assert_int_equal(c.misses, 0);
	assert_int_equal(d->reads, 0);
	/* Page 8 loaded by a miss while its read ahead was in flight. */
	assert_int_equal(bufpool_frame_take(bp, &io, &c, &g), 0);
	touch(bp, &io, &c, 8);
	assert_int_equal(bufpool_insert(bp, 8, g, &c), 0);
	assert_int_equal(c.prefetches, 1);
	assert_true(bufpool_lookup(bp, 8) != g);
	pool_ok(bp);
	/* A failed read: the frame goes back, and all four frames serve. */
	assert_int_equal(bufpool_frame_take(bp, &io, &c, &g), 0);
	bufpool_frame_give_back(bp, g);
	pool_ok(bp);
	for (uint32_t k = 20; k < 24; k++)
		touch(bp, &io, &c, k);
	assert_int_equal(bufpool_used(bp), 4);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/*
 * Four frames hold pages 0-3, all referenced by their load. Page 4: the
 * hand passes every frame once (clearing REF) and takes frame 0. Now
 * page 1 is used again; page 5 must skip it (second chance) and take
 * page 2's frame.
 */
static void test_clock_second_chance(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(4);
	struct pool_counters c = { 0 };

	(void)state;
	for (uint32_t p = 0; p < 4; p++)
		touch(bp, &io, &c, p);
	assert_int_equal(c.evictions, 0);
	touch(bp, &io, &c, 4);
	assert_int_equal(c.evictions, 1);
	assert_int_equal(bufpool_lookup(bp, 0), BUFPOOL_NONE);
	touch(bp, &io, &c, 1);
	assert_int_equal(c.hits, 1);
	touch(bp, &io, &c, 5);
	assert_int_equal(c.evictions, 2);
	assert_int_not_equal(bufpool_lookup(bp, 1), BUFPOOL_NONE);
	assert_int_equal(bufpool_lookup(bp, 2), BUFPOOL_NONE);
	assert_int_not_equal(bufpool_lookup(bp, 3), BUFPOOL_NONE);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* A pinned frame is never the victim. */
static void test_pinned_stays(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(2);
	struct pool_counters c = { 0 };
	uint32_t held;
	uint8_t *data;

	(void)state;
	assert_int_equal(bufpool_get(bp, 100, BUFPOOL_SHARED, &io, &c, &held, &data), 0);
	for (uint32_t p = 0; p < 50; p++) {
		touch(bp, &io, &c, p);
		assert_int_not_equal(bufpool_lookup(bp, 100), BUFPOOL_NONE);
	}
	assert_true(key_in(data) == 100);
	bufpool_unpin(bp, held);
	assert_int_equal(c.evictions, 49);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* A page pinned through a reader's slot is never the victim either,
 * and is taken once it is given back. */
static void test_published_stays(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(2);
	struct pool_reader *rd = bufpool_reader_new(bp);
	struct pool_counters c = { 0 };
	uint32_t held;
	uint8_t *data;

	(void)state;
	touch(bp, &io, &c, 100);
	assert_int_equal(bufpool_pin(bp, rd, 5, 100, &io, &c, &held, &data), 0);
	assert_true(held & BUFPOOL_REF_PUBLISHED);
	for (uint32_t p = 0; p < 50; p++) {
		touch(bp, &io, &c, p);
		assert_int_not_equal(bufpool_lookup(bp, 100), BUFPOOL_NONE);
	}
	assert_true(key_in(data) == 100);
	bufpool_release(bp, rd, 5, held);
	for (uint32_t p = 50; p < 53; p++)
		touch(bp, &io, &c, p);
	assert_int_equal(bufpool_lookup(bp, 100), BUFPOOL_NONE);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* A guess (bufpool_prefetch_page's entry) pins the page it names; one
 * gone stale (the page evicted, its entry reused by another) or none
 * still finds the right page, or reads it, and never pins another. */
static void test_pin_guess(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(2);
	struct pool_reader *rd = bufpool_reader_new(bp);
	struct pool_counters c = { 0 };
	uint32_t guess, stale, ref;
	uint8_t *data;

	(void)state;
	touch(bp, &io, &c, 7);
	guess = bufpool_prefetch_page(bp, 7);
	assert_int_not_equal(guess, BUFPOOL_NONE);
	assert_int_equal(bufpool_entry_at(bp, guess)->key, 7);
	assert_int_equal(bufpool_prefetch_page(bp, 8), BUFPOOL_NONE);
	assert_int_equal(bufpool_pin_guess(bp, rd, 0, 7, guess, &io, &c, &ref, &data), 0);
	assert_int_equal(ref, guess | BUFPOOL_REF_PUBLISHED);
	assert_true(key_in(data) == 7);
	bufpool_release(bp, rd, 0, ref);
	/* 7 evicted: its entry's guess is stale, whatever it holds now. */
	stale = guess;
	for (uint32_t p = 20; p < 30; p++)
		touch(bp, &io, &c, p);
	assert_int_equal(bufpool_lookup(bp, 7), BUFPOOL_NONE);
	c = (struct pool_counters){ 0 };
	assert_int_equal(bufpool_pin_guess(bp, rd, 0, 7, stale, &io, &c, &ref, &data), 0);
	assert_true(key_in(data) == 7);
	assert_int_equal(bufpool_entry_at(bp, ref & ~BUFPOOL_REF_PUBLISHED)->key, 7);
	assert_int_equal(c.misses, 1);
	bufpool_release(bp, rd, 0, ref);
	/* A guess naming another page's entry: that page is not pinned. */
	touch(bp, &io, &c, 29);
	guess = bufpool_prefetch_page(bp, 29);
	assert_int_not_equal(guess, BUFPOOL_NONE);
	assert_int_equal(bufpool_pin_guess(bp, rd, 0, 7, guess, &io, &c, &ref, &data), 0);
	assert_true(key_in(data) == 7);
	bufpool_release(bp, rd, 0, ref);
	assert_int_equal(bufpool_pin_guess(bp, rd, 0, 7, BUFPOOL_NONE, &io, &c, &ref, &data), 0);
	assert_true(key_in(data) == 7);
	bufpool_release(bp, rd, 0, ref);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* A pool has a reader for every two frames, at most POOL_PIN_READERS_MAX;
 * past those there are none, and a pin without one (or past the
 * reader's slots) goes to the pin count. */
static void test_readers_run_out(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(4);
	struct bufpool *big = pool_new(2 * POOL_PIN_READERS_MAX + 2);
	struct pool_reader *rd = NULL;
	struct pool_counters c = { 0 };
	uint32_t ref;
	uint8_t *data;

	(void)state;
	for (unsigned i = 0; i < POOL_PIN_READERS_MAX; i++)
		assert_non_null(bufpool_reader_new(big));
	assert_null(bufpool_reader_new(big));
	bufpool_destroy(big);
	for (unsigned i = 0; i < 4 / BUFPOOL_FRAMES_PER_READER; i++) {
		rd = bufpool_reader_new(bp);
		assert_non_null(rd);
		assert_int_equal(rd->slot[POOL_PIN_SLOTS - 1], POOL_PIN_EMPTY);
	}
	assert_null(bufpool_reader_new(bp));
	touch(bp, &io, &c, 9);
	assert_int_equal(bufpool_pin(bp, NULL, 0, 9, &io, &c, &ref, &data), 0);
	assert_false(ref & BUFPOOL_REF_PUBLISHED);
	assert_int_equal(bufpool_entry_at(bp, ref)->state & BUFPOOL_PIN_MASK, 1);
	bufpool_release(bp, NULL, 0, ref);
	assert_int_equal(bufpool_pin(bp, rd, POOL_PIN_SLOTS, 9, &io, &c, &ref, &data), 0);
	assert_false(ref & BUFPOOL_REF_PUBLISHED);
	bufpool_release(bp, rd, POOL_PIN_SLOTS, ref);
	assert_int_equal(c.hits, 2);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* Keys whose hash picks the same home bucket. */
static unsigned colliding_keys(const struct bufpool *bp, uint32_t home, uint32_t *out,
			       unsigned n, uint32_t from)
{
	unsigned got = 0;

	for (uint32_t k = from; got < n; k++)
		if (bufpool_home_of(bp, k) == home)
			out[got++] = k;
	return got;
}

/*
 * 20 keys with one home bucket (5 entries a bucket): 15 spill into the
 * next buckets. Evicting the first 10 leaves holes in the home bucket;
 * the spilled ones must still be found (a lookup does not stop at an
 * empty slot), without a read.
 */
static void test_collisions_and_delete(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(64);
	struct pool_counters c = { 0 };
	uint32_t col[20], other[64], fresh[10];
	unsigned nother = 0;

	(void)state;
	assert_int_equal(colliding_keys(bp, 5, col, 20, 1000), 20);
	for (uint32_t k = 1000000; nother < 44; k++)
		if (bufpool_home_of(bp, k) != 5)
			other[nother++] = k;
	for (unsigned i = 0; i < 20; i++)
		touch(bp, &io, &c, col[i]);
	for (unsigned i = 0; i < 44; i++)
		touch(bp, &io, &c, other[i]);
	pool_ok(bp);
	for (unsigned i = 0; i < 20; i++)
		assert_int_not_equal(bufpool_lookup(bp, col[i]), BUFPOOL_NONE);
	assert_int_equal(c.evictions, 0);

	/* One turn clears every REF, then frames 0-9 (col[0..9]) go. */
	for (unsigned i = 0; i < 10; i++)
		fresh[i] = 5000000 + i;
	for (unsigned i = 0; i < 10; i++)
		touch(bp, &io, &c, fresh[i]);
	assert_int_equal(c.evictions, 10);
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(bufpool_lookup(bp, col[i]), BUFPOOL_NONE);
	pool_ok(bp);
	{
		uint64_t reads = d->reads;

		for (unsigned i = 10; i < 20; i++)
			touch(bp, &io, &c, col[i]);
		assert_int_equal(d->reads, reads);
	}
	/* Everything else goes too; the spill counts come back to 0. */
	for (unsigned i = 0; i < 200; i++)
		touch(bp, &io, &c, 9000000 + i);
	for (unsigned i = 0; i < 20; i++)
		assert_int_equal(bufpool_lookup(bp, col[i]), BUFPOOL_NONE);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

static void test_read_error(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(4);
	struct pool_counters c = { 0 };
	uint32_t ref;
	uint8_t *data;

	(void)state;
	d->fail_read_key = 7;
	assert_int_equal(bufpool_get(bp, 7, BUFPOOL_SHARED, &io, &c, &ref, &data), -EIO);
	assert_int_equal(bufpool_lookup(bp, 7), BUFPOOL_NONE);
	assert_int_equal(bufpool_used(bp), 0);
	assert_int_equal(c.misses, 0);
	pool_ok(bp);
	d->fail_read_key = BUFPOOL_NONE;
	touch(bp, &io, &c, 7);
	assert_int_equal(c.misses, 1);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* Writes: exclusive latch, dirty, written back by flush and on eviction;
 * a failed write-back keeps the page and its changes. */
static void bump(struct bufpool *bp, struct bufpool_io *io, struct pool_counters *c,
		 uint32_t key)
{
	uint32_t ref;
	uint8_t *data;
	uint64_t g;

	assert_int_equal(bufpool_get(bp, key, BUFPOOL_EXCL, io, c, &ref, &data), 0);
	assert_true(key_in(data) == key);
	memcpy(&g, data + 8, 8);
	g++;
	memcpy(data + 8, &g, 8);
	bufpool_unlock(bp, ref, true);
}

static void test_writes_flush_and_evict(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(4);
	struct pool_counters c = { 0 };
	uint32_t ref;
	uint8_t *data;

	(void)state;
	bump(bp, &io, &c, 1);
	bump(bp, &io, &c, 1);
	bump(bp, &io, &c, 2);
	assert_int_equal(d->writes, 0);
	assert_int_equal(bufpool_flush(bp, &io, &c), 2);
	assert_int_equal(d->gen[1], 2);
	assert_int_equal(d->gen[2], 1);
	assert_int_equal(bufpool_flush(bp, &io, &c), 0);
	assert_int_equal(c.writebacks, 2);

	/* A flush of a key range writes that range only. */
	bump(bp, &io, &c, 1);
	bump(bp, &io, &c, 2);
	assert_int_equal(bufpool_flush_keys(bp, 2, 3, &io, &c), 1);
	assert_int_equal(d->gen[1], 2);
	assert_int_equal(d->gen[2], 2);
	assert_int_equal(bufpool_flush_keys(bp, 0, 2, &io, &c), 1);
	assert_int_equal(d->gen[1], 3);
	assert_int_equal(bufpool_flush(bp, &io, &c), 0);
	assert_int_equal(c.writebacks, 4);

	/* Dirty again; eviction writes it back before reusing the frame. */
	bump(bp, &io, &c, 3);
	for (uint32_t p = 10; p < 20; p++)
		touch(bp, &io, &c, p);
	assert_int_equal(bufpool_lookup(bp, 3), BUFPOOL_NONE);
	assert_int_equal(d->gen[3], 1);
	assert_int_equal(c.writebacks, 5);

	/* A whole-page overwrite of a missing page reads nothing. */
	{
		uint64_t reads = d->reads;

		assert_int_equal(bufpool_get(bp, 30, BUFPOOL_EXCL_NOREAD, &io, &c, &ref, &data), 0);
		assert_int_equal(d->reads, reads);
		stamp(data, 30, 41);
		bufpool_unlock(bp, ref, true);
		assert_int_equal(bufpool_flush(bp, &io, &c), 1);
		assert_int_equal(d->gen[30], 41);
	}

	/* Failing write-back on eviction: the get fails, the page stays. */
	bump(bp, &io, &c, 4);
	d->fail_write_key = 4;
	{
		int failed = 0;

		for (uint32_t p = 100; p < 110; p++) {
			int ret = bufpool_get(bp, p, BUFPOOL_SHARED, &io, &c, &ref, &data);

			if (ret == -EIO) {
				failed++;
				continue;
			}
			assert_int_equal(ret, 0);
			bufpool_unpin(bp, ref);
		}
		assert_true(failed >= 1);
	}
	assert_int_not_equal(bufpool_lookup(bp, 4), BUFPOOL_NONE);
	pool_ok(bp);
	assert_int_equal(bufpool_flush(bp, &io, &c), -EIO);
	d->fail_write_key = BUFPOOL_NONE;
	assert_int_equal(bufpool_flush(bp, &io, &c), 1);
	assert_int_equal(d->gen[4], 1);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

static void test_bad_create(void **state)
{
	struct bufpool *bp = NULL;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(bufpool_create(&bp, 1 << 20, 3000, 0, &e), -EINVAL);
	assert_int_equal(bufpool_create(&bp, 2048, 4096, 0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "frames"));
	assert_null(bp);
}

/* The page table and headers stay near 1 % of the frames (SPEC 12:
 * pool_size plus under 2 %). */
static void test_overhead(void **state)
{
	struct bufpool *bp = pool_new(32768);

	(void)state;
	assert_true(bufpool_overhead(bp) * 50 < (size_t)bp->nframes * PAGE);
	bufpool_destroy(bp);
	/* A small pool: its readers grow with it, not a fixed 64 KiB. */
	bp = pool_new(1024);
	assert_true(bufpool_overhead(bp) * 50 < (size_t)bp->nframes * PAGE);
	bufpool_destroy(bp);
}

/* A pool larger than its keys gets a table for the keys: smaller, and
 * every key still finds room, twice over, with no eviction. */
static void test_table_for_keys(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct pool_counters c = { 0 };
	struct bufpool *big = pool_new(4096), *bp = NULL;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(bufpool_create(&bp, 4096ull * PAGE, PAGE, 300, &e), 0);
	assert_true(bufpool_overhead(bp) < bufpool_overhead(big));
	for (int round = 0; round < 2; round++)
		for (uint32_t k = 0; k < 300; k++)
			touch(bp, &io, &c, k);
	assert_int_equal(c.misses, 300);
	assert_int_equal(c.hits, 300);
	assert_int_equal(c.evictions, 0);
	assert_int_equal(bufpool_used(bp), 300);
	pool_ok(bp);
	bufpool_destroy(bp);
	bufpool_destroy(big);
	free(d);
}

/* ---- threads ------------------------------------------------------------- */

struct getter {
	struct bufpool *bp;
	struct bufpool_io io;
	struct pool_counters c;
	uint32_t key;
	bool pin;		/* through bufpool_pin (a reader of its own), not bufpool_get */
	int started;		/* set just before it asks for the page */
	int tid;		/* its thread id, set first */
	int done;
	uint8_t seen;		/* the page's byte PAGE - 3 while it held the page */
};

static void *get_one(void *arg)
{
	struct getter *g = arg;
	uint32_t ref;
	uint8_t *data;

	struct pool_reader *rd = g->pin ? bufpool_reader_new(g->bp) : NULL;

	__atomic_store_n(&g->tid, (int)gettid(), __ATOMIC_RELEASE);
	__atomic_store_n(&g->started, 1, __ATOMIC_RELEASE);
	if (g->pin)
		assert_int_equal(bufpool_pin(g->bp, rd, 0, g->key, &g->io, &g->c, &ref, &data), 0);
	else
		assert_int_equal(bufpool_get(g->bp, g->key, BUFPOOL_SHARED, &g->io, &g->c, &ref,
					     &data), 0);
	assert_true(key_in(data) == g->key);
	g->seen = data[PAGE - 3];
	bufpool_release(g->bp, rd, 0, ref);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Thread A is loading page 7 (its read is held at a gate); B asks for
 * page 7 too and must wait for A's load, not read it again. */
static void test_waits_for_loader(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool *bp = pool_new(8);
	struct getter a = { .bp = bp, .io = io_of(d), .key = 7 };
	struct getter b = { .bp = bp, .io = io_of(d), .key = 7 };
	pthread_t ta, tb;

	(void)state;
	d->gated = 1;
	assert_int_equal(pthread_create(&ta, NULL, get_one, &a), 0);
	while (!__atomic_load_n(&d->loading, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	assert_int_equal(pthread_create(&tb, NULL, get_one, &b), 0);
	wait_in_futex(&b.tid);
	assert_int_equal(__atomic_load_n(&b.done, __ATOMIC_ACQUIRE), 0);
	__atomic_store_n(&d->open_gate, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(d->reads, 1);
	assert_int_equal(a.c.misses, 1);
	assert_int_equal(b.c.misses, 0);
	assert_int_equal(b.c.hits, 1);
	assert_int_equal(b.c.waits, 1);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* Every frame pinned: a miss waits until one is let go. */
static void test_full_of_pins_waits(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool *bp = pool_new(2);
	struct bufpool_io io = io_of(d);
	struct pool_counters c = { 0 };
	struct getter g = { .bp = bp, .io = io_of(d), .key = 3 };
	uint32_t f0, f1;
	uint8_t *data;
	pthread_t t;

	(void)state;
	assert_int_equal(bufpool_get(bp, 1, BUFPOOL_SHARED, &io, &c, &f0, &data), 0);
	assert_int_equal(bufpool_get(bp, 2, BUFPOOL_SHARED, &io, &c, &f1, &data), 0);
	assert_int_equal(pthread_create(&t, NULL, get_one, &g), 0);
	sleep_ms(30);
	assert_int_equal(__atomic_load_n(&g.done, __ATOMIC_ACQUIRE), 0);
	bufpool_unpin(bp, f1);
	pthread_join(t, NULL);
	assert_int_equal(g.c.misses, 1);
	assert_int_not_equal(bufpool_lookup(bp, 1), BUFPOOL_NONE);
	bufpool_unpin(bp, f0);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/*
 * bufpool_pin, the inline hit path: 20 keys of one home bucket (15 of
 * them spilled into the next buckets) are found where bufpool_lookup
 * finds them, as hits, without a read; a key not in the pool goes on to
 * bufpool_get and is read once.
 */
static void test_pin_finds_spilled(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(32);
	struct pool_counters c = { 0 };
	struct pool_reader *rd = bufpool_reader_new(bp);
	uint32_t col[20], ref;
	uint8_t *data;

	(void)state;
	assert_non_null(rd);
	assert_int_equal(colliding_keys(bp, 3, col, 20, 1000), 20);
	for (unsigned i = 0; i < 20; i++)
		touch(bp, &io, &c, col[i]);
	memset(&c, 0, sizeof(c));
	for (unsigned i = 0; i < 20; i++) {
		assert_int_equal(bufpool_pin(bp, rd, 1, col[i], &io, &c, &ref, &data), 0);
		assert_true(key_in(data) == col[i]);
		assert_ptr_equal(data, bufpool_frame(bp, bufpool_lookup(bp, col[i])));
		/* Published in the reader's slot 1, not counted in the latch. */
		assert_true(ref & BUFPOOL_REF_PUBLISHED);
		assert_int_equal(rd->slot[1], ref & ~BUFPOOL_REF_PUBLISHED);
		assert_int_equal(bufpool_entry_at(bp, (uint32_t)rd->slot[1])->key, col[i]);
		assert_int_equal(bufpool_entry_at(bp, (uint32_t)rd->slot[1])->state &
				 BUFPOOL_PIN_MASK, 0);
		bufpool_release(bp, rd, 1, ref);
		assert_int_equal(rd->slot[1], POOL_PIN_EMPTY);
	}
	assert_int_equal(c.hits, 20);
	assert_int_equal(c.misses, 0);
	assert_int_equal(d->reads, 20);
	assert_int_equal(bufpool_pin(bp, rd, 0, 77, &io, &c, &ref, &data), 0);
	assert_true(key_in(data) == 77);
	bufpool_release(bp, rd, 0, ref);
	assert_int_equal(c.misses, 1);
	assert_int_equal(d->reads, 21);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* A page held exclusively (a writer): bufpool_pin does not pin it but
 * waits, through bufpool_get, and then sees the write. */
static void test_pin_waits_for_writer(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(8);
	struct pool_counters c = { 0 };
	struct getter g = { .bp = bp, .io = io_of(d), .key = 5, .pin = true };
	uint32_t ref;
	uint8_t *data;
	pthread_t t;

	(void)state;
	touch(bp, &io, &c, 5);
	assert_int_equal(bufpool_get(bp, 5, BUFPOOL_EXCL, &io, &c, &ref, &data), 0);
	assert_int_equal(pthread_create(&t, NULL, get_one, &g), 0);
	wait_in_futex(&g.tid);
	assert_int_equal(__atomic_load_n(&g.done, __ATOMIC_ACQUIRE), 0);
	data[PAGE - 2] = 0xab;
	bufpool_unlock(bp, ref, true);
	pthread_join(t, NULL);
	assert_int_equal(g.c.hits, 1);
	assert_int_equal(g.c.waits, 1);
	assert_int_equal(g.c.misses, 0);
	assert_int_equal(bufpool_frame(bp, bufpool_lookup(bp, 5))[PAGE - 2], 0xab);
	assert_int_equal(d->reads, 1);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

struct writer {
	struct bufpool *bp;
	struct bufpool_io io;
	struct pool_counters c;
	uint32_t key;
	int done;
};

static void *write_one(void *arg)
{
	struct writer *w = arg;
	uint32_t ref;
	uint8_t *data;

	assert_int_equal(bufpool_get(w->bp, w->key, BUFPOOL_EXCL, &w->io, &w->c, &ref, &data), 0);
	data[PAGE - 3] = 0xcd;
	bufpool_unlock(w->bp, ref, true);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A writer waits for a reader that published its pin, then writes. */
static void test_writer_waits_for_published(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(8);
	struct pool_reader *rd = bufpool_reader_new(bp);
	struct pool_counters c = { 0 };
	struct writer w = { .bp = bp, .io = io_of(d), .key = 6 };
	uint32_t ref;
	uint8_t *data;
	pthread_t t;

	(void)state;
	touch(bp, &io, &c, 6);
	assert_int_equal(bufpool_pin(bp, rd, 0, 6, &io, &c, &ref, &data), 0);
	assert_true(ref & BUFPOOL_REF_PUBLISHED);
	assert_int_equal(pthread_create(&t, NULL, write_one, &w), 0);
	sleep_ms(50);
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(data[PAGE - 3], 6 & 0xff);
	bufpool_release(bp, rd, 0, ref);
	pthread_join(t, NULL);
	assert_int_equal(bufpool_frame(bp, bufpool_lookup(bp, 6))[PAGE - 3], 0xcd);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/*
 * A writer is not starved by readers (issue 25): while it waits for a
 * pin to go, a reader that comes later (through either hit path) is not
 * let in before it, so readers that each pin before the last one
 * unpinned cannot keep it out for ever. Here: page 4 pinned, a writer
 * waits, two later readers wait too; the pin goes, the writer writes,
 * and both readers see its write.
 */
static void test_writer_not_starved(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool_io io = io_of(d);
	struct bufpool *bp = pool_new(8);
	struct pool_counters c = { 0 };
	struct writer w = { .bp = bp, .io = io_of(d), .key = 4 };
	struct getter g[2] = { { .bp = bp, .io = io_of(d), .key = 4, .pin = true },
			       { .bp = bp, .io = io_of(d), .key = 4 } };
	pthread_t tw, tg[2];
	uint32_t ref;
	uint8_t *data;

	(void)state;
	assert_int_equal(bufpool_get(bp, 4, BUFPOOL_SHARED, &io, &c, &ref, &data), 0);
	assert_int_equal(pthread_create(&tw, NULL, write_one, &w), 0);
	/* The writer has announced itself once XWANT is on the page. */
	for (int i = 0; i < 5000 && !(__atomic_load_n(&bufpool_entry_at(bp, ref)->state,
						       __ATOMIC_ACQUIRE) & BUFPOOL_F_XWANT); i++)
		sleep_ms(1);
	assert_true(__atomic_load_n(&bufpool_entry_at(bp, ref)->state, __ATOMIC_ACQUIRE) &
		    BUFPOOL_F_XWANT);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&tg[i], NULL, get_one, &g[i]), 0);
	/* Both readers are on their way in; then give them time to reach
	 * the page (on a loaded host a thread may still be late: then it
	 * finds the write done, and waits == 0 below). */
	for (int i = 0; i < 2; i++)
		for (int n = 0; n < 5000 && !__atomic_load_n(&g[i].started, __ATOMIC_ACQUIRE); n++)
			sleep_ms(1);
	sleep_ms(50);
	assert_int_equal(__atomic_load_n(&g[0].done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(__atomic_load_n(&g[1].done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	bufpool_unpin(bp, ref);
	pthread_join(tw, NULL);
	for (int i = 0; i < 2; i++) {
		pthread_join(tg[i], NULL);
		assert_int_equal(g[i].c.hits, 1);
		assert_true(g[i].c.waits <= 1);
		/* Not let in before the writer: each saw its write. */
		assert_int_equal(g[i].seen, 0xcd);
	}
	assert_int_equal(bufpool_frame(bp, bufpool_lookup(bp, 4))[PAGE - 3], 0xcd);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/*
 * The stress run: THREADS threads, a pool of 16 frames over 256 pages.
 * Each step picks a page: mostly a read (the frame must hold that page),
 * sometimes an increment of the page's generation under the exclusive
 * latch, sometimes a flush. At the end, after a flush, the device's
 * generation of every page equals the increments made to it: none lost
 * to a race between writers, eviction and flushes.
 */
#define THREADS 4
#define STRESS_FRAMES 16
#define STRESS_PAGES 256
#define STRESS_STEPS 40000

struct stresser {
	struct bufpool *bp;
	struct bufpool_io io;
	struct pool_reader *rd;
	struct pool_counters c;
	uint64_t *bumps;		/* per page, shared: atomic adds */
	uint64_t seed;
	int bad;
};

static uint64_t next_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void *stress(void *arg)
{
	struct stresser *s = arg;

	for (int i = 0; i < STRESS_STEPS && !s->bad; i++) {
		uint64_t r = next_rand(&s->seed);
		uint32_t key = (uint32_t)((r >> 8) % STRESS_PAGES);
		unsigned what = (unsigned)(r & 0xff);
		uint32_t ref;
		uint8_t *data;
		uint64_t k, g;

		if (what < 2) {
			if (bufpool_flush(s->bp, &s->io, &s->c) < 0)
				s->bad = 1;
			continue;
		}
		if (what < 40) {
			if (bufpool_get(s->bp, key, BUFPOOL_EXCL, &s->io, &s->c, &ref, &data)) {
				s->bad = 2;
				break;
			}
			memcpy(&k, data, 8);
			memcpy(&g, data + 8, 8);
			g++;
			memcpy(data + 8, &g, 8);
			bufpool_unlock(s->bp, ref, true);
			__atomic_add_fetch(&s->bumps[key], 1, __ATOMIC_RELAXED);
			if (k != key)
				s->bad = 3;
			continue;
		}
		/* Half the reads through the inline hit path, pinned by
		 * publishing the page in this thread's reader. */
		if ((what & 1 ? bufpool_pin(s->bp, s->rd, 2, key, &s->io, &s->c, &ref, &data) :
				bufpool_get(s->bp, key, BUFPOOL_SHARED, &s->io, &s->c, &ref, &data))) {
			s->bad = 4;
			break;
		}
		memcpy(&k, data, 8);
		if (k != key || data[PAGE - 1] != (uint8_t)(key & 0xff))
			s->bad = 5;
		bufpool_release(s->bp, s->rd, 2, ref);
	}
	return NULL;
}

static void test_stress(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool *bp = pool_new(STRESS_FRAMES);
	struct stresser s[THREADS];
	uint64_t *bumps = calloc(STRESS_PAGES, sizeof(*bumps));
	struct pool_counters all = { 0 }, c = { 0 };
	struct bufpool_io io = io_of(d);
	pthread_t t[THREADS];

	(void)state;
	assert_non_null(bumps);
	for (int i = 0; i < THREADS; i++) {
		s[i] = (struct stresser){ .bp = bp, .io = io_of(d), .bumps = bumps,
					  .rd = bufpool_reader_new(bp),
					  .seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) };
		assert_int_equal(pthread_create(&t[i], NULL, stress, &s[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(s[i].bad, 0);
		all.hits += s[i].c.hits;
		all.misses += s[i].c.misses;
		all.reads += s[i].c.reads;
		all.evictions += s[i].c.evictions;
	}
	assert_true(bufpool_flush(bp, &io, &c) >= 0);
	pool_ok(bp);
	for (unsigned p = 0; p < STRESS_PAGES; p++)
		if (d->gen[p] != bumps[p])
			fail_msg("page %u: %llu increments, %llu on the device", p,
				 (unsigned long long)bumps[p], (unsigned long long)d->gen[p]);
	/* Every miss read its page once; each miss added a page to the
	 * pool and each eviction took one out. */
	assert_int_equal(all.misses, all.reads);
	assert_int_equal(all.reads, d->reads);
	assert_int_equal(all.misses - all.evictions, bufpool_used(bp));
	assert_true(all.hits > 0);
	bufpool_destroy(bp);
	free(bumps);
	free(d);
}

/*
 * A stop always completes: with every frame pinned by a thread that does
 * not let go, a miss finds no frame to take. It waits until the stop
 * flag is set, then gives up holding nothing. (Before, it swept and
 * yielded for ever.)
 */
struct blocked_get {
	struct bufpool *bp;
	struct bufpool_io io;
	struct pool_counters c;
	int ret;
	int done;
};

static void *blocked_get_main(void *arg)
{
	struct blocked_get *g = arg;
	uint32_t ref;
	uint8_t *p;

	g->ret = bufpool_get(g->bp, 9, BUFPOOL_SHARED, &g->io, &g->c, &ref, &p);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_stop_ends_full_pool_wait(void **state)
{
	struct fakedev *d = dev_new();
	struct bufpool *bp = pool_new(4);
	struct pool_counters c = { 0 };
	struct blocked_get g = { .bp = bp, .io = io_of(d) };
	uint32_t ref[4];
	int stop = 0;
	pthread_t t;
	uint8_t *p;

	(void)state;
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(bufpool_get(bp, k, BUFPOOL_SHARED, &g.io, &c, &ref[k], &p), 0);
	g.io.stop[0] = &stop;
	assert_int_equal(pthread_create(&t, NULL, blocked_get_main, &g), 0);
	usleep(100000);
	assert_int_equal(__atomic_load_n(&g.done, __ATOMIC_ACQUIRE), 0);	/* waits, as it must */
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	/* A minute: a guard only (the thread may wait for a CPU that long
	 * on a loaded host); it returns within one look at the flag. */
	for (int i = 0; i < 60000 && !__atomic_load_n(&g.done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	if (!__atomic_load_n(&g.done, __ATOMIC_ACQUIRE))
		fail_msg("bufpool_get still waiting a minute after the stop flag was set");
	pthread_join(t, NULL);
	assert_int_equal(g.ret, -ECANCELED);
	for (uint32_t k = 0; k < 4; k++)
		bufpool_unpin(bp, ref[k]);
	pool_ok(bp);
	assert_int_equal(bufpool_get(bp, 9, BUFPOOL_SHARED, &g.io, &c, &ref[0], &p), 0);
	bufpool_unpin(bp, ref[0]);
	pool_ok(bp);
	bufpool_destroy(bp);
	free(d);
}

/* ---- requests across pages (pool_span.h) ------------------------------- */

/* The pool's span callbacks, as engine_bufpool.c latches a span's pages. */
struct span_pool {
	struct bufpool *bp;
	struct bufpool_io io;
	struct pool_counters c;
};

static int span_get(void *arg, uint64_t key, bool excl, bool whole, uint8_t **data, uint64_t *ref)
{
	struct span_pool *sp = arg;
	uint32_t r;
	int ret = bufpool_get(sp->bp, (uint32_t)key,
			      !excl ? BUFPOOL_SHARED : whole ? BUFPOOL_EXCL_NOREAD : BUFPOOL_EXCL,
			      &sp->io, &sp->c, &r, data);

	*ref = r;
	return ret < 0 ? ret : 0;
}

static void span_put(void *arg, uint64_t key, uint64_t ref, bool dirty)
{
	struct span_pool *sp = arg;

	(void)key;
	if (dirty)
		bufpool_unlock(sp->bp, (uint32_t)ref, true);
	else
		bufpool_unpin(sp->bp, (uint32_t)ref);
}

static void test_span_read_write(void **state)
{
	struct fakedev *d = dev_new();
	struct span_pool sp = { .bp = pool_new(16), .io = io_of(d) };
	struct pool_span_ops o = { .get = span_get, .put = span_put, .arg = &sp, .shift = 12 };
	struct span_counts sc = { &sp.c.hits, &sp.c.misses, &d->reads };

	(void)state;
	span_read_write(&o, &sc);
	pool_ok(sp.bp);
	assert_int_equal(bufpool_flush_keys(sp.bp, 20, 22, &sp.io, &sp.c), 2);
	pool_ok(sp.bp);
	bufpool_destroy(sp.bp);
	free(d);
}

static void test_span_longer_than_pool(void **state)
{
	struct fakedev *d = dev_new();
	struct span_pool sp = { .bp = pool_new(2), .io = io_of(d) };
	struct pool_span_ops o = { .get = span_get, .put = span_put, .arg = &sp, .shift = 12 };
	struct span_counts sc = { &sp.c.hits, &sp.c.misses, &d->reads };

	(void)state;
	span_longer_than_pool(&o, &sc, 5);
	assert_true(bufpool_used(sp.bp) <= 2);
	pool_ok(sp.bp);
	bufpool_destroy(sp.bp);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit_and_miss),
		cmocka_unit_test(test_clock_second_chance),
		cmocka_unit_test(test_read_ahead),
		cmocka_unit_test(test_pinned_stays),
		cmocka_unit_test(test_published_stays),
		cmocka_unit_test(test_readers_run_out),
		cmocka_unit_test(test_collisions_and_delete),
		cmocka_unit_test(test_read_error),
		cmocka_unit_test(test_writes_flush_and_evict),
		cmocka_unit_test(test_bad_create),
		cmocka_unit_test(test_overhead),
		cmocka_unit_test(test_table_for_keys),
		cmocka_unit_test(test_waits_for_loader),
		cmocka_unit_test(test_full_of_pins_waits),
		cmocka_unit_test(test_pin_finds_spilled),
		cmocka_unit_test(test_pin_waits_for_writer),
		cmocka_unit_test(test_writer_waits_for_published),
		cmocka_unit_test(test_writer_not_starved),
		cmocka_unit_test(test_stress),
		cmocka_unit_test(test_stop_ends_full_pool_wait),
		cmocka_unit_test(test_span_read_write),
		cmocka_unit_test(test_span_longer_than_pool),
		cmocka_unit_test(test_pin_guess),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
