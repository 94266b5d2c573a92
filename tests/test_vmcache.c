/*
 * test_vmcache.c - the virtual-memory-assisted pool (vmcache.c) on a fake
 * device: a miss reads the page into its own address and a hit finds it
 * there; a full pool evicts in batches, gives the memory back (mincore
 * says so) with one madvise per run of consecutive pages, and never holds
 * more than its capacity; the clock gives a page in use a second chance;
 * dirty pages are written back before they go, and by a flush of their
 * range; a read error leaves nothing behind; a page being read is waited
 * for, not read twice; a page a reader published stays and a writer
 * waits for it; a writer is not starved by readers; a request across
 * pages is served page by page, even one longer than the pool; and a stress
 * run of several threads, where every read page carries its number and
 * every write is counted, so a torn or lost update shows.
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
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "engines/vmcache.h"

#define PAGE 4096
#define DISK_PAGES 512
#define NONE UINT64_MAX

/* The fake device: page k holds k in its first 8 bytes and a generation
 * (written back with each increment) in the next 8; the rest is a byte
 * of k, so a page holding another's tail shows. */
struct fakedev {
	uint64_t gen[DISK_PAGES];
	uint64_t reads, writes;		/* atomics: several threads */
	uint64_t fail_read;		/* NONE: none */
	int fail_writes;		/* every write-back fails */
	int gated, loading, open_gate;	/* the loader test's gate */
};

static void stamp(uint8_t *p, uint64_t k, uint64_t gen)
{
	memset(p + 16, (int)(k & 0xff), PAGE - 16);
	memcpy(p, &k, 8);
	memcpy(p + 8, &gen, 8);
}

/* After stamp, which its span checks use. */
#include "pooltest.h"

static int fake_read(void *arg, uint64_t pid, uint8_t *page)
{
	struct fakedev *d = arg;

	if (pid == d->fail_read)
		return -EIO;
	if (__atomic_load_n(&d->gated, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&d->loading, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&d->open_gate, __ATOMIC_ACQUIRE))
			sleep_ms(1);
	}
	__atomic_add_fetch(&d->reads, 1, __ATOMIC_RELAXED);
	stamp(page, pid, pid < DISK_PAGES ? __atomic_load_n(&d->gen[pid], __ATOMIC_RELAXED) : 0);
	return 0;
}

static int fake_write(void *arg, uint64_t pid, const uint8_t *page)
{
	struct fakedev *d = arg;
	uint64_t k, g;

	if (d->fail_writes)
		return -EIO;
	memcpy(&k, page, 8);
	memcpy(&g, page + 8, 8);
	/* A page written back with another's bytes is a pool bug. */
	if (k != pid || pid >= DISK_PAGES)
		return -EUCLEAN;
	__atomic_store_n(&d->gen[pid], g, __ATOMIC_RELAXED);
	__atomic_add_fetch(&d->writes, 1, __ATOMIC_RELAXED);
	return 0;
}

static struct fakedev *dev_new(void)
{
	struct fakedev *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	d->fail_read = NONE;
	return d;
}

static struct vmcache_io io_of(struct fakedev *d)
{
	return (struct vmcache_io){ .read = fake_read, .write = fake_write, .arg = d };
}

static struct vmcache *pool_new(uint64_t npages, uint64_t capacity, unsigned batch)
{
	struct vmcache *vc = NULL;
	struct err e = { 0 };

	assert_int_equal(vmcache_create(&vc, npages, PAGE, capacity, batch, &e), 0);
	return vc;
}

static void pool_ok(struct vmcache *vc)
{
	struct err e = { 0 };

	if (vmcache_check(vc, &e))
		fail_msg("pool inconsistent: %s", e.msg);
}

static uint64_t pid_in(const uint8_t *p)
{
	uint64_t k;

	memcpy(&k, p, 8);
	return k;
}

/* pin, check the page holds @pid at its own address, unpin. */
static void touch(struct vmcache *vc, struct vmcache_io *io, struct pool_counters *c, uint64_t pid)
{
	uint8_t *data = NULL;

	assert_int_equal(vmcache_pin(vc, pid, io, c, &data), 0);
	assert_ptr_equal(data, vc->region + pid * PAGE);
	assert_true(pid_in(data) == pid);
	assert_int_equal(data[PAGE - 1], pid & 0xff);
	vmcache_unpin(vc, pid);
}

/* Pages of the region the kernel holds now. */
static uint64_t resident_pages(struct vmcache *vc)
{
	size_t n = vc->region_len / (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *v = malloc(n);
	uint64_t r = 0;

	assert_non_null(v);
	assert_int_equal(mincore(vc->region, vc->region_len, v), 0);
	for (size_t i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	return r;
}

/* ---- one thread ---------------------------------------------------------- */

static void test_hit_and_miss(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache_io io = io_of(d);
	struct vmcache *vc = pool_new(64, 16, 4);
	struct pool_counters c = { 0 };

	(void)state;
	assert_int_equal(resident_pages(vc), 0);
	touch(vc, &io, &c, 3);
	touch(vc, &io, &c, 3);
	touch(vc, &io, &c, 63);
	assert_int_equal(c.misses, 2);
	assert_int_equal(c.reads, 2);
	assert_int_equal(c.hits, 1);
	assert_int_equal(d->reads, 2);
	assert_int_equal(vmcache_used(vc), 2);
	assert_int_equal(resident_pages(vc), 2);
	assert_int_equal(vmcache_st(vc->state[5]), VMCACHE_EVICTED);
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/* More pages than room: evictions in batches, the memory given back,
 * and every page read again holds its own bytes. */
static void test_evicts_in_batches(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache_io io = io_of(d);
	struct vmcache *vc = pool_new(256, 32, 8);
	struct pool_counters c = { 0 };

	(void)state;
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t p = 0; p < 256; p++) {
			touch(vc, &io, &c, p);
			assert_true(vmcache_used(vc) <= 32);
			assert_true(resident_pages(vc) <= 32);
		}
	assert_int_equal(c.hits + c.misses, 512);
	assert_int_equal(c.misses, c.reads);
	assert_int_equal(c.misses - c.evictions, vmcache_used(vc));
	assert_true(c.evictions >= 512 - 32 - 8);
	/* Batches of 8 (the last may be cut short by a lost candidate). */
	assert_true(c.evict_batches * 8 >= c.evictions);
	assert_true(c.evict_batches > 0 && c.evictions / c.evict_batches >= 4);
	/* One call per run: at least one per batch, at most one per page;
	 * a scan evicts runs of neighbours, so fewer calls than pages. */
	assert_true(c.madvise_calls >= c.evict_batches);
	assert_true(c.madvise_calls < c.evictions);
	assert_int_equal(resident_pages(vc), vmcache_used(vc));
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/* The clock's second chance: page 0, touched between every two misses,
 * is (nearly) never chosen, while the cold pages all go round. */
static void test_second_chance(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache_io io = io_of(d);
	struct vmcache *vc = pool_new(512, 16, 2);
	struct pool_counters c = { 0 }, hot = { 0 };

	(void)state;
	for (uint64_t p = 1; p < 512; p++) {
		touch(vc, &io, &c, p);
		touch(vc, &io, &hot, 0);
	}
	assert_true(c.misses == 511);
	/* Every cold page missed; the hot one once, and again only when
	 * the hand found every page touched since its last turn. */
	if (hot.misses > 511 / 16)
		fail_msg("the hot page was read %llu times in 511 misses",
			 (unsigned long long)hot.misses);
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/* A page held (latched) is never evicted; the rest go round it. */
static void test_pinned_stays(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache_io io = io_of(d);
	struct vmcache *vc = pool_new(128, 8, 2);
	struct pool_counters c = { 0 };
	uint8_t *data;

	(void)state;
	assert_int_equal(vmcache_pin(vc, 7, &io, &c, &data), 0);
	for (uint64_t p = 8; p < 128; p++)
		touch(vc, &io, &c, p);
	assert_int_equal(vmcache_st(vc->state[7]), 1);
	assert_true(pid_in(data) == 7);
	vmcache_unpin(vc, 7);
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/* A page a reader has published stays when the clock comes for it, and
 * gets its second chance; given back, it goes like the others. */
static void test_published_stays(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache_io io = io_of(d);
	struct vmcache *vc = pool_new(128, 8, 2);
	struct pool_reader *rd = vmcache_reader_new(vc);
	struct pool_counters c = { 0 };
	uint64_t ref;
	uint8_t *data;

	(void)state;
	assert_non_null(rd);
	touch(vc, &io, &c, 7);
	assert_int_equal(vmcache_read(vc, rd, 3, 7, &io, &c, &data, &ref), 0);
	assert_true(ref & VMCACHE_REF_PUBLISHED);
	assert_int_equal(rd->slot[3], 7);
	assert_int_equal(vmcache_st(vc->state[7]), VMCACHE_UNLOCKED);	/* no count */
	for (uint64_t p = 8; p < 128; p++)
		touch(vc, &io, &c, p);
	assert_int_not_equal(vmcache_st(vc->state[7]), VMCACHE_EVICTED);
	assert_true(pid_in(data) == 7 && data[PAGE - 1] == 7);
	vmcache_done(vc, rd, 3, ref);
	assert_int_equal(rd->slot[3], POOL_PIN_EMPTY);
	for (uint64_t p = 8; p < 128; p++)
		touch(vc, &io, &c, p);
	assert_int_equal(vmcache_st(vc->state[7]), VMCACHE_EVICTED);
	/* No slot for request slot 9, or an evicted page: through the
	 * word, a count and a miss. */
	assert_int_equal(vmcache_read(vc, rd, POOL_PIN_SLOTS + 1, 9, &io, &c, &data, &ref), 0);
	assert_false(ref & VMCACHE_REF_PUBLISHED);
	assert_int_equal(vmcache_st(vc->state[9]), 1);
	vmcache_done(vc, rd, POOL_PIN_SLOTS + 1, ref);
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/* Writes: a whole-page write reads nothing; a flush of a range writes
 * back its dirty pages only; eviction writes a dirty page back before
 * its memory goes, and a later read gets the write. */
static void test_writes_flush_and_evict(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache_io io = io_of(d);
	struct vmcache *vc = pool_new(64, 8, 4);
	struct pool_counters c = { 0 };
	uint8_t *data;

	(void)state;
	for (uint64_t p = 0; p < 4; p++) {
		assert_int_equal(vmcache_get(vc, p, VMCACHE_EXCL_NOREAD, &io, &c, &data), 0);
		stamp(data, p, 10 + p);
		vmcache_unlock(vc, p, true);
	}
	assert_int_equal(d->reads, 0);
	assert_int_equal(c.misses, 4);
	assert_int_equal(c.reads, 0);
	assert_true(vc->state[2] & VMCACHE_F_DIRTY);
	/* Pages 0 and 1 only. */
	assert_int_equal(vmcache_flush_range(vc, 0, 2, &io, &c), 2);
	assert_int_equal(d->gen[0], 10);
	assert_int_equal(d->gen[1], 11);
	assert_int_equal(d->gen[2], 0);
	assert_false(vc->state[1] & VMCACHE_F_DIRTY);
	/* Pages 2 and 3 are written back when the clock takes them. */
	for (uint64_t p = 8; p < 64; p++)
		touch(vc, &io, &c, p);
	assert_int_equal(d->gen[2], 12);
	assert_int_equal(d->gen[3], 13);
	assert_int_equal(d->writes, 4);
	assert_int_equal(c.writebacks, 4);
	assert_int_equal(vmcache_st(vc->state[3]), VMCACHE_EVICTED);
	/* A read-modify-write of a page read back. */
	assert_int_equal(vmcache_get(vc, 3, VMCACHE_EXCL, &io, &c, &data), 0);
	assert_true(pid_in(data) == 3);
	assert_int_equal(data[8], 13);
	data[8] = 14;
	vmcache_unlock(vc, 3, true);
	assert_int_equal(vmcache_flush_range(vc, 0, 64, &io, &c), 1);
	assert_int_equal(d->gen[3], 14);
	/* The resident set's walk (a range longer than the set). */
	assert_int_equal(vmcache_get(vc, 60, VMCACHE_EXCL, &io, &c, &data), 0);
	data[8] = 99;
	vmcache_unlock(vc, 60, true);
	assert_true(64 > vc->rs_slots);
	assert_int_equal(vmcache_flush_range(vc, 0, 64, &io, &c), 1);
	assert_int_equal(d->gen[60], 99);
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/* A failed read leaves the page evicted and the room free; a failed
 * write-back calls the batch off and keeps the page dirty. */
static void test_errors(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache_io io = io_of(d);
	struct vmcache *vc = pool_new(64, 4, 2);
	struct pool_counters c = { 0 };
	uint8_t *data;

	(void)state;
	d->fail_read = 9;
	assert_int_equal(vmcache_pin(vc, 9, &io, &c, &data), -EIO);
	assert_int_equal(vmcache_st(vc->state[9]), VMCACHE_EVICTED);
	assert_int_equal(vmcache_used(vc), 0);
	assert_int_equal(resident_pages(vc), 0);
	pool_ok(vc);
	d->fail_read = NONE;
	touch(vc, &io, &c, 9);

	vmcache_destroy(vc);
	/* Pages 0-3 dirty, the pool full; their write-backs fail. */
	vc = pool_new(64, 4, 2);
	for (uint64_t p = 0; p < 4; p++) {
		assert_int_equal(vmcache_get(vc, p, VMCACHE_EXCL_NOREAD, &io, &c, &data), 0);
		stamp(data, p, 5);
		vmcache_unlock(vc, p, true);
	}
	assert_int_equal(vmcache_used(vc), 4);
	d->fail_writes = 1;
	assert_int_equal(vmcache_pin(vc, 10, &io, &c, &data), -EIO);
	assert_int_equal(vmcache_st(vc->state[10]), VMCACHE_EVICTED);
	assert_int_equal(vmcache_used(vc), 4);
	for (uint64_t p = 0; p < 4; p++)
		assert_true(vc->state[p] & VMCACHE_F_DIRTY);
	pool_ok(vc);
	d->fail_writes = 0;
	touch(vc, &io, &c, 10);
	assert_int_equal(d->writes, 2);
	assert_int_equal(d->gen[0] + d->gen[1] + d->gen[2] + d->gen[3], 10);
	assert_true(vmcache_used(vc) <= 4);
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

static void test_bad_create(void **state)
{
	struct vmcache *vc = NULL;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(vmcache_create(&vc, 16, 512, 4, 2, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "base page"));
	assert_int_equal(vmcache_create(&vc, 16, 3 * PAGE, 4, 2, &e), -EINVAL);
	assert_int_equal(vmcache_create(&vc, 16, PAGE, 0, 2, &e), -EINVAL);
	assert_int_equal(vmcache_create(&vc, 0, PAGE, 4, 2, &e), -EINVAL);
}

/* The bookkeeping: a word per page, a set of 1.5x the capacity rounded
 * up to a power of two; a batch at most half the capacity; huge pages
 * for a region the pool holds whole. */
static void test_overhead(void **state)
{
	struct vmcache *vc = pool_new(1u << 18, 1u << 14, 64);

	(void)state;
	assert_int_equal(vc->state_len, (1u << 18) * 8);
	assert_int_equal(vc->rs_slots, 1u << 15);
	assert_int_equal(vmcache_overhead(vc), (1u << 18) * 8 + (1u << 15) * 8);
	assert_int_equal(vc->batch, 64);
	vmcache_destroy(vc);
	vc = pool_new(100, 6, 64);
	assert_int_equal(vc->batch, 3);
	assert_int_equal(vc->capacity, 6);
	vmcache_destroy(vc);
	vc = pool_new(4, 100, 64);
	assert_int_equal(vc->capacity, 4);
	vmcache_destroy(vc);
	/* Huge pages only when the pool holds the whole region (4 MiB). */
	vc = pool_new(1024, 1024, 64);
	assert_true(vc->huge);
	assert_int_equal((uintptr_t)vc->region & ((2u << 20) - 1), 0);
	vmcache_destroy(vc);
	vc = pool_new(1024, 1023, 64);
	assert_false(vc->huge);
	vmcache_destroy(vc);
}

/* ---- threads ------------------------------------------------------------- */

struct getter {
	struct vmcache *vc;
	struct vmcache_io io;
	struct pool_counters c;
	uint64_t pid;
	bool excl;
	int tid;		/* its thread id, set first */
	int done;
};

static void *get_one(void *arg)
{
	struct getter *g = arg;
	uint8_t *data;

	__atomic_store_n(&g->tid, (int)gettid(), __ATOMIC_RELEASE);
	if (g->excl) {
		assert_int_equal(vmcache_get(g->vc, g->pid, VMCACHE_EXCL, &g->io, &g->c, &data), 0);
		data[PAGE - 3] = 0xcd;
		vmcache_unlock(g->vc, g->pid, true);
	} else {
		assert_int_equal(vmcache_pin(g->vc, g->pid, &g->io, &g->c, &data), 0);
		assert_true(pid_in(data) == g->pid);
		g->excl = data[PAGE - 3] == 0xcd;	/* saw the writer's byte */
		vmcache_unpin(g->vc, g->pid);
	}
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A reads page 7 (held at a gate); B asks for it and waits for A's read. */
static void test_waits_for_loader(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache *vc = pool_new(64, 8, 2);
	struct getter a = { .vc = vc, .io = io_of(d), .pid = 7 };
	struct getter b = { .vc = vc, .io = io_of(d), .pid = 7 };
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
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/* A writer waiting for a reader's latch lets no later reader in before
 * it (XWANT): two readers that come after it see its write. */
static void test_writer_not_starved(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache_io io = io_of(d);
	struct vmcache *vc = pool_new(64, 8, 2);
	struct pool_counters c = { 0 };
	struct getter w = { .vc = vc, .io = io_of(d), .pid = 4, .excl = true };
	struct getter g[2] = { { .vc = vc, .io = io_of(d), .pid = 4 },
			       { .vc = vc, .io = io_of(d), .pid = 4 } };
	pthread_t tw, tg[2];
	uint8_t *data;

	(void)state;
	assert_int_equal(vmcache_pin(vc, 4, &io, &c, &data), 0);
	assert_int_equal(pthread_create(&tw, NULL, get_one, &w), 0);
	for (int i = 0; i < 5000 && !(__atomic_load_n(&vc->state[4], __ATOMIC_ACQUIRE) &
				      VMCACHE_F_XWANT); i++)
		sleep_ms(1);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&tg[i], NULL, get_one, &g[i]), 0);
	sleep_ms(50);
	assert_int_equal(__atomic_load_n(&g[0].done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(__atomic_load_n(&g[1].done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	vmcache_unpin(vc, 4);
	pthread_join(tw, NULL);
	for (int i = 0; i < 2; i++) {
		pthread_join(tg[i], NULL);
		assert_true(g[i].excl);		/* after the writer */
		assert_int_equal(g[i].c.hits, 1);
	}
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/* A writer waits for a reader that published the page, then writes. */
static void test_writer_waits_for_published(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache_io io = io_of(d);
	struct vmcache *vc = pool_new(64, 8, 2);
	struct pool_reader *rd = vmcache_reader_new(vc);
	struct pool_counters c = { 0 };
	struct getter w = { .vc = vc, .io = io_of(d), .pid = 6, .excl = true };
	uint64_t ref;
	uint8_t *data;
	pthread_t t;

	(void)state;
	touch(vc, &io, &c, 6);
	assert_int_equal(vmcache_read(vc, rd, 0, 6, &io, &c, &data, &ref), 0);
	assert_true(ref & VMCACHE_REF_PUBLISHED);
	assert_int_equal(pthread_create(&t, NULL, get_one, &w), 0);
	sleep_ms(50);
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(data[PAGE - 3], 6);
	vmcache_done(vc, rd, 0, ref);
	pthread_join(t, NULL);
	assert_int_equal(data[PAGE - 3], 0xcd);
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/*
 * The stress run: THREADS threads, 16 resident pages of 256, batches of
 * 4. Mostly reads (the page must hold its own number), some increments
 * of a page's generation under the exclusive latch, some flushes. At the
 * end, after a flush, the device's generation of every page equals the
 * increments made to it, and the pool's counts add up.
 */
#define THREADS 4
#define STRESS_CAP 16
#define STRESS_PAGES 256
#define STRESS_STEPS 40000

struct stresser {
	struct vmcache *vc;
	struct vmcache_io io;
	struct pool_reader *rd;
	struct pool_counters c;
	uint64_t *bumps;
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
		uint64_t pid = (r >> 8) % STRESS_PAGES, k, g;
		unsigned what = (unsigned)(r & 0xff);
		uint8_t *data;

		if (what < 2) {
			if (vmcache_flush_range(s->vc, 0, STRESS_PAGES, &s->io, &s->c) < 0)
				s->bad = 1;
			continue;
		}
		if (what < 40) {
			if (vmcache_get(s->vc, pid, VMCACHE_EXCL, &s->io, &s->c, &data)) {
				s->bad = 2;
				break;
			}
			memcpy(&k, data, 8);
			memcpy(&g, data + 8, 8);
			g++;
			memcpy(data + 8, &g, 8);
			vmcache_unlock(s->vc, pid, true);
			__atomic_add_fetch(&s->bumps[pid], 1, __ATOMIC_RELAXED);
			if (k != pid)
				s->bad = 3;
			continue;
		}
		/* Half the reads published in the thread's reader. */
		{
			uint64_t ref = pid;
			int ret = what & 1 ? vmcache_read(s->vc, s->rd, 2, pid, &s->io, &s->c, &data,
							  &ref)
					   : vmcache_pin(s->vc, pid, &s->io, &s->c, &data);

			if (ret) {
				s->bad = 4;
				break;
			}
			memcpy(&k, data, 8);
			if (k != pid || data[PAGE - 1] != (uint8_t)(pid & 0xff))
				s->bad = 5;
			vmcache_done(s->vc, s->rd, 2, ref);
		}
	}
	return NULL;
}

static void test_stress(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache *vc = pool_new(STRESS_PAGES, STRESS_CAP, 4);
	struct stresser s[THREADS];
	uint64_t *bumps = calloc(STRESS_PAGES, sizeof(*bumps));
	struct pool_counters all = { 0 }, c = { 0 };
	struct vmcache_io io = io_of(d);
	pthread_t t[THREADS];

	(void)state;
	assert_non_null(bumps);
	for (int i = 0; i < THREADS; i++) {
		s[i] = (struct stresser){ .vc = vc, .io = io_of(d), .bumps = bumps,
					  .rd = vmcache_reader_new(vc),
					  .seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) };
		assert_int_equal(pthread_create(&t[i], NULL, stress, &s[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		if (s[i].bad)
			fail_msg("thread %d: bad %d", i, s[i].bad);
		all.hits += s[i].c.hits;
		all.misses += s[i].c.misses;
		all.reads += s[i].c.reads;
		all.evictions += s[i].c.evictions;
		all.evict_batches += s[i].c.evict_batches;
	}
	assert_true(vmcache_flush_range(vc, 0, STRESS_PAGES, &io, &c) >= 0);
	pool_ok(vc);
	for (unsigned p = 0; p < STRESS_PAGES; p++)
		if (d->gen[p] != bumps[p])
			fail_msg("page %u: %llu increments, %llu on the device", p,
				 (unsigned long long)bumps[p], (unsigned long long)d->gen[p]);
	assert_int_equal(all.misses, all.reads);
	assert_int_equal(all.reads, d->reads);
	assert_int_equal(all.misses - all.evictions, vmcache_used(vc));
	assert_true(all.hits > 0 && all.evict_batches > 0);
	assert_true(resident_pages(vc) <= STRESS_CAP);
	vmcache_destroy(vc);
	free(bumps);
	free(d);
}

/*
 * A stop always completes: with every resident page latched by a thread
 * that does not let go (a read longer than the pool holds, latching its
 * pages one by one), a miss finds nothing to evict. It waits until the
 * stop flag is set, then gives up holding nothing. (Before, it swept
 * and yielded for ever: the livelock of a 128 KiB replayed read with
 * pool_size=64k.)
 */
struct blocked_get {
	struct vmcache *vc;
	struct vmcache_io io;
	struct pool_counters c;
	int ret;
	int done;
};

static void *blocked_get_main(void *arg)
{
	struct blocked_get *g = arg;
	uint8_t *p;

	g->ret = vmcache_get(g->vc, 7, VMCACHE_SHARED, &g->io, &g->c, &p);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_stop_ends_full_pool_wait(void **state)
{
	struct fakedev *d = dev_new();
	struct vmcache *vc = pool_new(16, 4, 2);
	struct pool_counters c = { 0 };
	struct blocked_get g = { .vc = vc, .io = io_of(d) };
	int stop = 0;
	pthread_t t;
	uint8_t *p;

	(void)state;
	for (uint64_t pid = 0; pid < 4; pid++)
		assert_int_equal(vmcache_get(vc, pid, VMCACHE_SHARED, &g.io, &c, &p), 0);
	g.io.stop[1] = &stop;
	assert_int_equal(pthread_create(&t, NULL, blocked_get_main, &g), 0);
	sleep_ms(100);
	assert_int_equal(__atomic_load_n(&g.done, __ATOMIC_ACQUIRE), 0);	/* waits, as it must */
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 5000 && !__atomic_load_n(&g.done, __ATOMIC_ACQUIRE); i++)
		sleep_ms(1);
	if (!__atomic_load_n(&g.done, __ATOMIC_ACQUIRE))
		fail_msg("vmcache_get still waiting 5 s after the stop flag was set");
	pthread_join(t, NULL);
	assert_int_equal(g.ret, -ECANCELED);
	for (uint64_t pid = 0; pid < 4; pid++)
		vmcache_unpin(vc, pid);
	pool_ok(vc);
	/* Nothing left behind: the page it wanted loads now. */
	assert_int_equal(vmcache_get(vc, 7, VMCACHE_SHARED, &g.io, &c, &p), 0);
	vmcache_unpin(vc, 7);
	pool_ok(vc);
	vmcache_destroy(vc);
	free(d);
}

/* ---- requests across pages (pool_span.h) ------------------------------- */

/* The pool's span callbacks, as engine_vmcache.c latches a span's pages. */
struct span_pool {
	struct vmcache *vc;
	struct vmcache_io io;
	struct pool_counters c;
};

static int span_get(void *arg, uint64_t pid, bool excl, bool whole, uint8_t **data, uint64_t *ref)
{
	struct span_pool *sp = arg;

	*ref = pid;
	if (!excl)
		return vmcache_pin(sp->vc, pid, &sp->io, &sp->c, data);
	return vmcache_get(sp->vc, pid, whole ? VMCACHE_EXCL_NOREAD : VMCACHE_EXCL, &sp->io, &sp->c,
			   data);
}

static void span_put(void *arg, uint64_t pid, uint64_t ref, bool dirty)
{
	struct span_pool *sp = arg;

	(void)ref;
	if (dirty)
		vmcache_unlock(sp->vc, pid, true);
	else
		vmcache_unpin(sp->vc, pid);
}

static void test_span_read_write(void **state)
{
	struct fakedev *d = dev_new();
	struct span_pool sp = { .vc = pool_new(64, 16, 2), .io = io_of(d) };
	struct pool_span_ops o = { .get = span_get, .put = span_put, .arg = &sp, .shift = 12 };
	struct span_counts sc = { &sp.c.hits, &sp.c.misses, &d->reads };

	(void)state;
	span_read_write(&o, &sc);
	pool_ok(sp.vc);
	assert_int_equal(vmcache_flush_range(sp.vc, 20, 22, &sp.io, &sp.c), 2);
	pool_ok(sp.vc);
	vmcache_destroy(sp.vc);
	free(d);
}

static void test_span_longer_than_pool(void **state)
{
	struct fakedev *d = dev_new();
	struct span_pool sp = { .vc = pool_new(64, 2, 1), .io = io_of(d) };
	struct pool_span_ops o = { .get = span_get, .put = span_put, .arg = &sp, .shift = 12 };
	struct span_counts sc = { &sp.c.hits, &sp.c.misses, &d->reads };

	(void)state;
	span_longer_than_pool(&o, &sc, 5);
	assert_true(vmcache_used(sp.vc) <= 2);
	pool_ok(sp.vc);
	vmcache_destroy(sp.vc);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit_and_miss),
		cmocka_unit_test(test_evicts_in_batches),
		cmocka_unit_test(test_second_chance),
		cmocka_unit_test(test_pinned_stays),
		cmocka_unit_test(test_published_stays),
		cmocka_unit_test(test_writes_flush_and_evict),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bad_create),
		cmocka_unit_test(test_overhead),
		cmocka_unit_test(test_waits_for_loader),
		cmocka_unit_test(test_writer_not_starved),
		cmocka_unit_test(test_writer_waits_for_published),
		cmocka_unit_test(test_stress),
		cmocka_unit_test(test_stop_ends_full_pool_wait),
		cmocka_unit_test(test_span_read_write),
		cmocka_unit_test(test_span_longer_than_pool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
