/*
 * bufpool.h - a database-style buffer pool: a fixed set of frames, a
 * concurrent page table, clock eviction and a latch per page
 * (ioengine=bufpool; SPEC 3). It knows nothing of files: its user reads
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
 * Thread safety: any number of threads may call bufpool_get, _unpin,
 * _unlock and _flush at once, each with its own counters and I/O
 * callbacks. There is no pool-wide lock: a hit reads one cache line of
 * the page table (the page's key, latch word and frame sit together)
 * and takes one atomic compare-and-swap there, and the unpin one atomic
 * subtract; a miss latches one bucket of the table for the few stores
 * of its insert and takes frames from a shared clock hand.
 *
 * Functions return 0 or -errno and never print.
 */
#ifndef FAULTLINE_BUFPOOL_H
#define FAULTLINE_BUFPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "stats.h"

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
};

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

struct bufpool_bucket;

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
	void *meta;			/* one mapping for buckets and owner */
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

/* Bytes the pool holds beyond its frames (the page table). */
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
 * or owned by one page, nothing is latched, the spill counts add up;
 * 0 or -EUCLEAN with @e saying what is wrong. */
int bufpool_check(const struct bufpool *bp, struct err *e);

#endif
