/*
 * bufpool.h - a database-style buffer pool: a fixed set of frames, a
 * concurrent page table, clock eviction and a latch per page
 * (ioengine=bufpool). It knows nothing of files: its user reads
 * and writes pages through the callbacks of struct bufpool_io, so the
 * pool can be tested with a fake device (tests/test_bufpool.c).
 *
 * A page is named by a 32-bit key, which the user numbers densely (the
 * engine counts the pages of a job's regions from 0): the table then
 * needs only 4 bytes of it per page, and a smaller table is a faster
 * one (bufpool.c says why). bufpool_get finds the page, or brings it in,
 * and latches it: shared (a pin: any number of readers, no eviction, no
 * writer) or exclusive (one writer, no readers). A thread that finds its
 * page being loaded by another waits for that load instead of reading it
 * again. Every latch is given back with bufpool_unpin or bufpool_unlock,
 * naming the reference bufpool_get returned.
 *
 * Thread safety: any number of threads may call bufpool_get, _pin,
 * _release, _unpin, _unlock and _flush at once, each with its own
 * counters, I/O callbacks and reader. There is no pool-wide lock: a hit
 * through bufpool_pin reads one cache line of the page table (the page's
 * key, latch word and frame sit together) and publishes the pin in the
 * thread's own line, writing nothing other threads read; bufpool_get
 * pins with a compare-and-swap on the latch word instead. A miss latches
 * one bucket of the table for the few stores of its insert and takes
 * frames from a shared clock hand.
 *
 * Functions return 0 or -errno and never print.
 */
#ifndef FAULTLINE_BUFPOOL_H
#define FAULTLINE_BUFPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engines/pool_pin.h"
#include "lib/err.h"
#include "lib/stats.h"

/* No page, no frame, no reference. */
#define BUFPOOL_NONE UINT32_MAX
/* Keys are 0 .. BUFPOOL_KEY_MAX. */
#define BUFPOOL_KEY_MAX (UINT32_MAX - 1)

/* The page table's hash of a key: MurmurHash3's 32-bit finalizer
 * (fmix32), so neighbouring pages land far apart. */
static inline uint32_t bufpool_hash(uint32_t k)
{
	k ^= k >> 16;
	k *= 0x85ebca6bu;
	k ^= k >> 13;
	k *= 0xc2b2ae35u;
	k ^= k >> 16;
	return k;
}

/*
 * How a thread moves pages between the pool and the device. read fills
 * @frame (page bytes) with page @key; write stores it. Both return 0 or
 * -errno and are called with no pool latch held but the page's own.
 */
struct bufpool_io {
	int (*read)(void *arg, uint32_t key, uint8_t *frame);
	int (*write)(void *arg, uint32_t key, const uint8_t *frame);
	void *arg;
	/* Flags that call a wait off (a run's and a job's stop, NULL for
	 * none): once one is set, bufpool_get and bufpool_frame_take give
	 * up with -ECANCELED where they would wait for a page, a latch or
	 * a frame, holding nothing, so a stop always completes. */
	const int *stop[2];
};

static inline bool bufpool_io_stopped(const struct bufpool_io *io)
{
	return io && pool_stopped(io->stop);
}

enum bufpool_mode {
	BUFPOOL_SHARED,		/* pinned: read it; others may too */
	BUFPOOL_EXCL,		/* latched alone: modify it */
	BUFPOOL_EXCL_NOREAD,	/* alone, to overwrite all of it: a missing page is not read */
};

/* What the frames are made of. */
enum bufpool_mem {
	BUFPOOL_MEM_HUGETLB,	/* MAP_HUGETLB: reserved huge pages */
	BUFPOOL_MEM_THP,	/* ordinary memory advised MADV_HUGEPAGE */
	BUFPOOL_MEM_PAGES,	/* ordinary memory, no advice taken */
};

/*
 * The page table's layout, here for the inline hit path below; what it
 * means and who may change what is in bufpool.c. A bucket is one cache
 * line: a header word and BUFPOOL_WAYS entries, an entry a page in the
 * pool (its key, latch word and frame). A reference to an entry is its
 * bucket << BUFPOOL_WAY_BITS | its way.
 */
#define BUFPOOL_WAYS		5
#define BUFPOOL_WAY_BITS	3

/* The latch word (bufpool.c: pins in bits 0-23, then the flags). */
#define BUFPOOL_PIN_MASK	0x00ffffffu
#define BUFPOOL_F_REF		(1u << 24)
#define BUFPOOL_F_DIRTY		(1u << 25)
#define BUFPOOL_F_LOCKED	(1u << 26)
#define BUFPOOL_F_WAITERS	(1u << 27)
#define BUFPOOL_F_USED		(1u << 28)
#define BUFPOOL_F_XWANT		(1u << 29)
/* A bucket's header: the farthest its keys spilled, in buckets. */
#define BUFPOOL_H_REACH_MASK	0xffffu

struct bufpool_entry {
	uint32_t key;		/* BUFPOOL_NONE when free */
	uint32_t state;		/* the latch word */
	uint32_t frame;		/* the frame holding the page */
};

struct bufpool_bucket {
	uint32_t head;
	struct bufpool_entry e[BUFPOOL_WAYS];
};

_Static_assert(sizeof(struct bufpool_bucket) == 64, "a bucket is a cache line");

/*
 * Pins may be published in a thread's reader (pool_pin.h) instead of
 * counted in the latch word; the value published is the entry's
 * reference. A pool has a reader per thread, at most POOL_PIN_READERS_MAX
 * and no more than one for every this many frames, so a small pool's
 * readers cost what its table does per frame (a job's threads need two
 * frames each: jobcheck.c), not a fixed 64 KiB.
 */
#define BUFPOOL_FRAMES_PER_READER	2

/* A reference held through a reader's slot, not the pin count. */
#define BUFPOOL_REF_PUBLISHED	(1u << 31)

/* The pool. Fields are read by the inline helpers below and by tests;
 * only bufpool.c changes them. */
struct bufpool {
	uint8_t *frames;		/* nframes * page bytes */
	size_t frames_len;		/* as mapped */
	uint32_t nframes;
	uint32_t page;			/* bytes, a power of two */
	unsigned page_shift;
	enum bufpool_mem mem;
	struct bufpool_bucket *buckets;	/* the page table */
	uint32_t nbuckets;
	uint32_t *owner;		/* per frame: the entry holding it, or free/taken */
	struct pool_pins pins;		/* the readers */
	void *meta;			/* one mapping for buckets, owner and readers */
	size_t meta_len;
	/* The clock hand: frames examined so far, modulo nframes. Shared by
	 * every thread looking for a frame; on its own line. */
	uint64_t hand __attribute__((aligned(64)));
};

/* The bucket @key lives in, or failing room there, starts looking from:
 * the hash scaled to nbuckets (a multiply, no division). In the header
 * for the tests, which build colliding keys. */
static inline uint32_t bufpool_home_of(const struct bufpool *bp, uint32_t key)
{
	return (uint32_t)(((uint64_t)bufpool_hash(key) * bp->nbuckets) >> 32);
}

/*
 * A pool of @size bytes of @page-byte frames (page a power of two, size
 * at least one page; the rest of a partial page is not used), with its
 * page table sized for that many frames, or for @nkeys pages when the
 * user will never ask for more keys than that (0: no bound; a key of
 * @nkeys or more may then find no room: -ENOSPC). Frames come from huge
 * pages when the host has them reserved, else ordinary memory advised
 * MADV_HUGEPAGE; all of it is populated now, so no request faults it in.
 */
int bufpool_create(struct bufpool **bpp, uint64_t size, uint32_t page, uint64_t nkeys,
		   struct err *e);
void bufpool_destroy(struct bufpool *bp);

/* Bytes the pool holds beyond its frames (the page table, the frames' owners
 * and the readers). */
size_t bufpool_overhead(const struct bufpool *bp);

static inline uint8_t *bufpool_frame(const struct bufpool *bp, uint32_t f)
{
	return bp->frames + ((size_t)f << bp->page_shift);
}

/*
 * Page @key, latched in @mode: *@ref names the latch (for _unpin or
 * _unlock), *@data the page's bytes. On a hit the page is already there
 * (perhaps after waiting for another thread's load); on a miss a frame
 * is taken by the clock (a dirty victim written back first through
 * @io), and the page is read into it through @io (not for
 * BUFPOOL_EXCL_NOREAD). Counts into @c, which only this thread writes.
 * Errors: those of @io (a full pool of pinned frames is waited out).
 */
int bufpool_get(struct bufpool *bp, uint32_t key, enum bufpool_mode mode,
		const struct bufpool_io *io, struct pool_counters *c, uint32_t *ref,
		uint8_t **data);
/* Give back a shared latch. */
void bufpool_unpin(struct bufpool *bp, uint32_t ref);

/*
 * A reader for one thread (its slots all empty), or NULL when all the
 * pool's are taken: POOL_PIN_READERS_MAX, or one for every
 * BUFPOOL_FRAMES_PER_READER frames of a smaller pool (that thread's pins
 * then go to the pin count). Readers last as long as the pool.
 */
static inline struct pool_reader *bufpool_reader_new(struct bufpool *bp)
{
	return pool_pin_reader_new(&bp->pins);
}

static inline struct bufpool_entry *bufpool_entry_at(const struct bufpool *bp, uint32_t ref)
{
	return &bp->buckets[ref >> BUFPOOL_WAY_BITS].e[ref & ((1u << BUFPOOL_WAY_BITS) - 1)];
}

/* The ways of bucket @bk holding @key, a bit each (the first is the
 * entry, as a search way by way would find it). Built without a branch:
 * which way a page sits in is random, and a branch on it, mispredicted
 * one hit in two or more, would throw away what the CPU had begun of the
 * next requests (their pages' lines on their way), so that each hit
 * waited for the one before it (measured: 2-3x the hit's time in a loop
 * of random warm hits, tests/bench/pool_hit.c). */
static inline unsigned bufpool_match(const struct bufpool_bucket *bk, uint32_t key)
{
	unsigned m = 0;

#pragma GCC unroll 8
	for (unsigned i = 0; i < BUFPOOL_WAYS; i++)
		m |= (unsigned)(__atomic_load_n(&bk->e[i].key, __ATOMIC_ACQUIRE) == key) << i;
	return m;
}

/*
 * bufpool_get(BUFPOOL_SHARED) with its common case inline, for request
 * slot @hs of the thread whose reader is @rd: the page in the table,
 * neither locked, nor being loaded, nor wanted by a writer, pinned by
 * publishing it in the reader's slot. That writes nothing another thread reads (the page's
 * REF bit only when the clock cleared it), takes one locked instruction,
 * on the thread's own line, and a few dozen instructions: the fewer there
 * are between one request's miss on a page and the next request's, the
 * more of the two the CPU overlaps. Anything else (not in the table,
 * latched, a lost race, no reader or no slot @hs) goes to bufpool_get,
 * which pins with the pin count. Give the page back with
 * bufpool_release. How the pin and an evictor or writer pass each other
 * is in pool_pin.h.
 */
/* bufpool_pin's pin of entry @r (@en), found holding @key: 0 and the
 * page pinned, or 1 when the entry no longer serves (the caller goes to
 * bufpool_get). How it was found does not matter: whatever the entry
 * held then, the page is pinned only if, once the pin is published, the
 * entry is in use, unlatched and still holds @key. */
static inline int bufpool_pin_entry(struct bufpool *bp, struct pool_reader *rd, unsigned hs,
				    struct bufpool_entry *en, uint32_t r, uint32_t key,
				    struct pool_counters *c, uint32_t *ref, uint8_t **data)
{
	uint32_t s;

	/* The page's line is on its way meanwhile. */
	__builtin_prefetch(bufpool_frame(bp, __atomic_load_n(&en->frame, __ATOMIC_RELAXED)));
	pool_pin_publish(&bp->pins, rd, hs, r);
	s = __atomic_load_n(&en->state, __ATOMIC_SEQ_CST);
	if ((s & (BUFPOOL_F_USED | BUFPOOL_F_LOCKED | BUFPOOL_F_XWANT)) != BUFPOOL_F_USED ||
	    __atomic_load_n(&en->key, __ATOMIC_ACQUIRE) != key) {
		pool_pin_clear(rd, hs);
		return 1;
	}
	/* Pinned: the key and frame cannot change now. */
	if (__builtin_expect(!(s & BUFPOOL_F_REF), 0))
		__atomic_fetch_or(&en->state, BUFPOOL_F_REF, __ATOMIC_RELAXED);
	stat_add(&c->hits, 1);
	*ref = r | BUFPOOL_REF_PUBLISHED;
	*data = bufpool_frame(bp, __atomic_load_n(&en->frame, __ATOMIC_RELAXED));
	return 0;
}

static inline int bufpool_pin(struct bufpool *bp, struct pool_reader *rd, unsigned hs,
			      uint32_t key, const struct bufpool_io *io, struct pool_counters *c,
			      uint32_t *ref, uint8_t **data)
{
	const uint32_t home = bufpool_home_of(bp, key);
	uint32_t b = home, reach = 0;

	if (__builtin_expect(!rd || hs >= POOL_PIN_SLOTS, 0))
		goto slow;
	for (uint32_t d = 0;; d++) {
		const unsigned m = bufpool_match(&bp->buckets[b], key);

		if (__builtin_expect(m != 0, 1)) {
			const unsigned i = (unsigned)__builtin_ctz(m);

			if (bufpool_pin_entry(bp, rd, hs, &bp->buckets[b].e[i],
					      b << BUFPOOL_WAY_BITS | i, key, c, ref, data))
				goto slow;
			return 0;
		}
		/* Not at home: the keys that spilled went no farther than
		 * the home's reach (in its header, on the line just read). */
		if (d == 0)
			reach = __atomic_load_n(&bp->buckets[home].head, __ATOMIC_RELAXED) &
				BUFPOOL_H_REACH_MASK;
		if (d >= reach)
			break;
		b = b + 1 == bp->nbuckets ? 0 : b + 1;
	}
slow:
	return bufpool_get(bp, key, BUFPOOL_SHARED, io, c, ref, data);
}

/*
 * bufpool_pin with a guess: @guess, an entry bufpool_prefetch_page found
 * holding @key a request ago (BUFPOOL_NONE: none), is tried first, with
 * no hash and no search, then bufpool_pin's way. A guess since gone
 * stale costs only the search it would have saved: the entry is pinned
 * only if it still holds @key once the pin is published
 * (bufpool_pin_entry), as for an entry a search has just found.
 */
static inline int bufpool_pin_guess(struct bufpool *bp, struct pool_reader *rd, unsigned hs,
				    uint32_t key, uint32_t guess, const struct bufpool_io *io,
				    struct pool_counters *c, uint32_t *ref, uint8_t **data)
{
	if (guess != BUFPOOL_NONE && rd && hs < POOL_PIN_SLOTS) {
		struct bufpool_entry *en = bufpool_entry_at(bp, guess);

		if (__atomic_load_n(&en->key, __ATOMIC_ACQUIRE) == key &&
		    !bufpool_pin_entry(bp, rd, hs, en, guess, key, c, ref, data))
			return 0;
	}
	return bufpool_pin(bp, rd, hs, key, io, c, ref, data);
}

/*
 * Hints for a request that will come soon (a request core that knows
 * its next requests before it issues them, engine.h's prefetch hook):
 * the home bucket's line of @key on its way now, and, once that line is
 * at hand (a request later), the line of the page's frame it names, so
 * that the misses of consecutive hits overlap instead of queueing one
 * behind the other. Neither latches nor writes anything: the frame read
 * here may be stale by the time the request pins its page, and is only
 * ever handed to the CPU's prefetch, which never faults.
 */
static inline void bufpool_prefetch_bucket(const struct bufpool *bp, uint32_t key)
{
	__builtin_prefetch(&bp->buckets[bufpool_home_of(bp, key)]);
}

/* ... and the entry it found holding @key (a guess for
 * bufpool_pin_guess), or BUFPOOL_NONE. Its home bucket only: a key that
 * spilled (one in ten) is left to the search. The ways are tried one by
 * one, unlike bufpool_match: a branch mispredicted here throws away
 * only what follows the prefetches already issued, and the search ends
 * sooner (ten instructions fewer a request under callgrind). */
static inline uint32_t bufpool_prefetch_page(const struct bufpool *bp, uint32_t key)
{
	const uint32_t b = bufpool_home_of(bp, key);
	const struct bufpool_bucket *bk = &bp->buckets[b];

	for (unsigned i = 0; i < BUFPOOL_WAYS; i++) {
		if (__atomic_load_n(&bk->e[i].key, __ATOMIC_RELAXED) == key) {
			const uint32_t f = __atomic_load_n(&bk->e[i].frame, __ATOMIC_RELAXED);

			if (f < bp->nframes)
				__builtin_prefetch(bufpool_frame(bp, f));
			return b << BUFPOOL_WAY_BITS | i;
		}
	}
	return BUFPOOL_NONE;
}

/* Give back what bufpool_pin returned for slot @hs of @rd. */
static inline void bufpool_release(struct bufpool *bp, struct pool_reader *rd, unsigned hs,
				   uint32_t ref)
{
	if (ref & BUFPOOL_REF_PUBLISHED)
		pool_pin_clear(rd, hs);
	else
		bufpool_unpin(bp, ref);
}

/*
 * Read-ahead (pool_prefetch): a page read before anyone asks for it is
 * read into a frame that is not yet in the table, so no latch is held
 * while the read is in flight and nobody ever waits for it (a thread
 * that asks for the page meanwhile reads it itself, and the copy read
 * ahead is then dropped). bufpool_frame_take takes a frame as a miss
 * does (the clock, a dirty victim written back through @io); the caller
 * reads the page into it and hands it to bufpool_insert, or, when the
 * read failed, gives it back. bufpool_insert: 1 when the page entered
 * the pool (unpinned, referenced, counted in @c->prefetches), 0 when it
 * was there already (the frame is free again), -ENOSPC as bufpool_get.
 */
int bufpool_frame_take(struct bufpool *bp, const struct bufpool_io *io, struct pool_counters *c,
		       uint32_t *frame);
int bufpool_insert(struct bufpool *bp, uint32_t key, uint32_t frame, struct pool_counters *c);
void bufpool_frame_give_back(struct bufpool *bp, uint32_t frame);

/* Give back an exclusive latch; @dirty: the page was modified. */
void bufpool_unlock(struct bufpool *bp, uint32_t ref, bool dirty);

/* Write every dirty page with a key in [@lo, @hi) back through @io.
 * Pages written, or -errno (the first failure; that page stays dirty). */
int bufpool_flush_keys(struct bufpool *bp, uint32_t lo, uint32_t hi, const struct bufpool_io *io,
		       struct pool_counters *c);
/* ... every dirty page. */
static inline int bufpool_flush(struct bufpool *bp, const struct bufpool_io *io,
				struct pool_counters *c)
{
	return bufpool_flush_keys(bp, 0, BUFPOOL_KEY_MAX + 1, io, c);
}

/* For tests: the frame holding @key, or BUFPOOL_NONE, without latching
 * it (the answer may be stale at once). */
uint32_t bufpool_lookup(const struct bufpool *bp, uint32_t key);
/* Pages in the pool. */
uint32_t bufpool_used(const struct bufpool *bp);
/* For tests, with no other thread in the pool: every page in the table
 * owns its frame and sits within its home's reach, every frame is free
 * or owned by one page, nothing is latched or published, the spill
 * counts add up; 0 or -EUCLEAN with @e saying what is wrong. */
int bufpool_check(const struct bufpool *bp, struct err *e);

#endif
