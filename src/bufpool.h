/*
 * bufpool.h - a database-style buffer pool: a fixed set of frames, a
 * concurrent page table, clock eviction and a latch per frame
 * (ioengine=bufpool; SPEC 3). It knows nothing of files: its user reads
 * and writes pages through the callbacks of struct bufpool_io, so the
 * pool can be tested with a fake device (tests/test_bufpool.c).
 *
 * A page is named by a 64-bit key (bufpool_key: a target and a page
 * number). bufpool_get finds it, or brings it in, and latches it:
 * shared (a pin: any number of readers, no eviction, no writer) or
 * exclusive (one writer, no readers). A thread that finds its page being
 * loaded by another waits for that load instead of reading it again.
 * Every latch is given back with bufpool_unpin or bufpool_unlock.
 *
 * Thread safety: any number of threads may call bufpool_get, _unpin,
 * _unlock and _flush at once, each with its own counters and I/O
 * callbacks. There is no pool-wide lock: a hit takes one atomic
 * compare-and-swap on its frame (and the unpin one atomic subtract); a
 * miss latches one bucket of the page table for the few stores of its
 * insert and takes frames from a shared clock hand.
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

/* No frame. */
#define BUFPOOL_NONE UINT32_MAX

/* A key is a target index (16 bits, the engine's uint16 target) and a
 * page number in that target (48 bits: 2^48 pages of 512 bytes or more
 * is past any device). */
#define BUFPOOL_KEY_PAGE_BITS	48
#define BUFPOOL_KEY_PAGE_MASK	((1ull << BUFPOOL_KEY_PAGE_BITS) - 1)

static inline uint64_t bufpool_key(unsigned target, uint64_t page)
{
	return (uint64_t)target << BUFPOOL_KEY_PAGE_BITS | (page & BUFPOOL_KEY_PAGE_MASK);
}

static inline unsigned bufpool_key_target(uint64_t key)
{
	return (unsigned)(key >> BUFPOOL_KEY_PAGE_BITS);
}

static inline uint64_t bufpool_key_page(uint64_t key)
{
	return key & BUFPOOL_KEY_PAGE_MASK;
}

/* The page table's hash of a key: MurmurHash3's 64-bit finalizer
 * (fmix64), so page numbers that differ in a few low bits land far
 * apart; the low bits pick the bucket, the high 32 are the entry's tag.
 * In the header for the tests, which build colliding keys. */
static inline uint64_t bufpool_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/*
 * How a thread moves pages between the pool and the device. read fills
 * @frame (page bytes) with page @key; write stores it. Both return 0 or
 * -errno and are called with no pool latch held but the frame's own.
 */
struct bufpool_io {
	int (*read)(void *arg, uint64_t key, uint8_t *frame);
	int (*write)(void *arg, uint64_t key, const uint8_t *frame);
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

struct bufpool_frame;
struct bufpool_bucket;

/* The pool. Fields are read by the inline helpers below; only
 * bufpool.c changes them. */
struct bufpool {
	uint8_t *frames;		/* nframes * page bytes */
	size_t frames_len;		/* as mapped */
	uint32_t nframes;
	uint32_t page;			/* bytes, a power of two */
	unsigned page_shift;
	enum bufpool_mem mem;
	struct bufpool_frame *fr;	/* a header per frame: key, latch word */
	struct bufpool_bucket *buckets;	/* the page table */
	uint64_t bucket_mask;		/* buckets - 1 (a power of two) */
	void *meta;			/* one mapping for fr and buckets */
	size_t meta_len;
	/* The clock hand: frames examined so far, modulo nframes. Shared by
	 * every thread looking for a frame; on its own line. */
	uint64_t hand __attribute__((aligned(64)));
};

/*
 * A pool of @size bytes of @page-byte frames (page a power of two, size
 * at least one page; the rest of a partial page is not used), with its
 * page table sized for that many frames. Frames come from huge pages
 * when the host has them reserved, else ordinary memory advised
 * MADV_HUGEPAGE; all of it is populated now, so no request faults it in.
 */
int bufpool_create(struct bufpool **bpp, uint64_t size, uint32_t page, struct err *e);
void bufpool_destroy(struct bufpool *bp);

/* Bytes the pool holds beyond its frames (page table and frame headers). */
size_t bufpool_overhead(const struct bufpool *bp);

static inline uint8_t *bufpool_frame(const struct bufpool *bp, uint32_t f)
{
	return bp->frames + ((size_t)f << bp->page_shift);
}

/*
 * Page @key, latched in @mode: its frame in *@frame. On a hit the page is
 * already there (perhaps after waiting for another thread's load); on a
 * miss a frame is taken by the clock (a dirty victim written back first
 * through @io), and the page is read into it through @io (not for
 * BUFPOOL_EXCL_NOREAD). Counts into @c, which only this thread writes.
 * Errors: those of @io; -EBUSY never (a full pool of pinned frames is
 * waited out).
 */
int bufpool_get(struct bufpool *bp, uint64_t key, enum bufpool_mode mode,
		const struct bufpool_io *io, struct pool_counters *c, uint32_t *frame);
/* Give back a shared latch. */
void bufpool_unpin(struct bufpool *bp, uint32_t f);
/* Give back an exclusive latch; @dirty: the frame was modified. */
void bufpool_unlock(struct bufpool *bp, uint32_t f, bool dirty);

/* Write every dirty frame back through @io. Pages written, or -errno
 * (the first failure; that page stays dirty). */
int bufpool_flush(struct bufpool *bp, const struct bufpool_io *io, struct pool_counters *c);

/* For tests and prewarm: the frame holding @key, or BUFPOOL_NONE,
 * without latching it (the answer may be stale at once). */
uint32_t bufpool_lookup(const struct bufpool *bp, uint64_t key);
/* Frames holding a page. */
uint32_t bufpool_used(const struct bufpool *bp);
/* For tests, with no other thread in the pool: every table entry names
 * a frame holding that key, every such frame is in the table once, no
 * frame is latched; 0 or -EUCLEAN with @e saying what is wrong. */
int bufpool_check(const struct bufpool *bp, struct err *e);

#endif
