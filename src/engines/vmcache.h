/*
 * vmcache.h - a buffer pool in the style of vmcache (Leis, Alhomssi,
 * Ziegler, Loeck, Dietrich: "Virtual-Memory Assisted Buffer Management",
 * SIGMOD 2023), behind ioengine=vmcache.
 *
 * Every page of the user's data has a fixed virtual address in one
 * anonymous MAP_NORESERVE region as large as all of it, so a resident
 * page is reached by address, as through mmap, with no page table of the
 * pool's own on the way. What is resident is the pool's decision, not
 * the kernel's: a page missing from memory is read into its own address
 * by the thread that needs it (through the callbacks of struct
 * vmcache_io: the engine reads with O_DIRECT), and pages leave in
 * batches, their memory given back with one process_madvise(MADV_DONTNEED)
 * over the batch's runs of pages (a madvise per run where the kernel
 * refuses it). At most `capacity` pages are resident at
 * any moment: that is the pool's physical memory.
 *
 * Each page has a 64-bit state word (vmcache.c draws it): its state in
 * the top byte (unlocked, a count of shared latches, locked, marked for
 * eviction, evicted) and a version below, which changes whenever the page
 * is unlocked after an exclusive latch. Resident pages are also in the
 * resident set, an open-addressing hash table of page numbers that the
 * clock sweeps for eviction candidates (second chance: an unlocked page
 * is marked; a page still marked when the hand comes back is evicted,
 * and any access in between clears the mark).
 *
 * It knows nothing of files (tests/test_vmcache.c drives it with a fake
 * device), nor of threads: any number may call every function at once,
 * each with its own counters and I/O callbacks. Functions return 0 or
 * -errno and never print.
 */
#ifndef FAULTLINE_VMCACHE_H
#define FAULTLINE_VMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engines/pool_pin.h"
#include "lib/err.h"
#include "lib/stats.h"

/* The state word: the state in bits 56-63 ... */
#define VMCACHE_ST_SHIFT	56
#define VMCACHE_UNLOCKED	0ull
#define VMCACHE_MAX_SHARED	252ull	/* shared latches: 1 .. 252 */
#define VMCACHE_LOCKED		253ull
#define VMCACHE_MARKED		254ull
#define VMCACHE_EVICTED		255ull
/* ... three flags below it, faultline's additions to vmcache's word:
 * DIRTY (modified since written back; vmcache keeps that in the page,
 * which here holds the user's bytes), WAITERS (a thread sleeps on the
 * word: whoever changes it next wakes it) and XWANT (a writer waits for
 * the shared latches to drain; no new one is granted meanwhile, so a
 * stream of readers cannot starve it) ... */
#define VMCACHE_F_DIRTY		(1ull << 55)
#define VMCACHE_F_WAITERS	(1ull << 54)
#define VMCACHE_F_XWANT		(1ull << 53)
/* ... and the version in bits 0-52. */
#define VMCACHE_VERSION_MASK	((1ull << 53) - 1)

/* Shared latches may be published in a thread's reader (pool_pin.h)
 * instead of taken in the state word, where a shared latch is a
 * compare-and-swap of the page's word: a locked instruction on a line
 * just missed, which also holds back the page's own load behind it
 * (measured: two such per hit made vmcache's hit ~0.6x an mmap hit). The
 * value published is the page number. */
/* A latch held through a reader's slot, not the state word. */
#define VMCACHE_REF_PUBLISHED	(1ull << 63)

/* Pages evicted together at most (pool_evict_batch's bound). */
#define VMCACHE_BATCH_MAX	1024

static inline uint64_t vmcache_st(uint64_t w)
{
	return w >> VMCACHE_ST_SHIFT;
}

/* How a thread moves a page between its address and the device: 0 or
 * -errno, called with the page latched exclusively (read) or shared
 * (write) by the caller. */
struct vmcache_io {
	int (*read)(void *arg, uint64_t pid, uint8_t *page);
	int (*write)(void *arg, uint64_t pid, const uint8_t *page);
	void *arg;
	/* Flags that call a wait off (a run's and a job's stop, NULL for
	 * none): once one is set, vmcache_get gives up with -ECANCELED
	 * where it would wait for a page, a latch or a place in the pool,
	 * holding nothing, so a stop always completes. */
	const int *stop[2];
};

static inline bool vmcache_io_stopped(const struct vmcache_io *io)
{
	return pool_stopped(io->stop);
}

enum vmcache_mode {
	VMCACHE_SHARED,		/* read it; others may too */
	VMCACHE_EXCL,		/* alone, to modify it */
	VMCACHE_EXCL_NOREAD,	/* alone, to overwrite all of it: a missing page is not read */
};

struct vmcache {
	uint8_t *region;		/* npages * page bytes of address space */
	size_t region_len;
	bool huge;			/* the region advised MADV_HUGEPAGE: the pool holds all of it */
	uint64_t npages;
	uint32_t page;			/* bytes, a power of two, a multiple of the base page */
	unsigned page_shift;
	uint64_t *state;		/* npages words */
	size_t state_len;		/* as mapped */
	uint64_t *resident;		/* the resident set: rs_slots page numbers */
	uint64_t rs_slots;		/* a power of two */
	size_t rs_len;
	uint64_t capacity;		/* resident pages at most */
	unsigned batch;			/* pages evicted together */
	bool batch_advise;		/* a batch goes back in one process_madvise(2) */
	struct pool_pins pins;		/* the readers */
	size_t readers_len;		/* as mapped */
	/* Resident pages, or about to be (a miss reserves its place
	 * first); shared by the threads, on a line of its own. */
	uint64_t used __attribute__((aligned(64)));
	/* The clock hand: the next slot of the resident set to look at. */
	uint64_t hand __attribute__((aligned(64)));
};

/*
 * A pool over @npages pages of @page bytes (a power of two, at least the
 * base page size) with room for @capacity of them resident (at least
 * one; more than @npages is @npages), evicting @batch at a time (at most
 * half the capacity, at least one). The region is address space only:
 * nothing is resident until it is read. The state words and the resident
 * set are populated now.
 */
int vmcache_create(struct vmcache **vcp, uint64_t npages, uint32_t page, uint64_t capacity,
		   unsigned batch, struct err *e);
void vmcache_destroy(struct vmcache *vc);

/* Bytes the pool holds beyond its resident pages: the state words and
 * the resident set. */
size_t vmcache_overhead(const struct vmcache *vc);

static inline uint8_t *vmcache_addr(const struct vmcache *vc, uint64_t pid)
{
	return vc->region + (pid << vc->page_shift);
}

/*
 * Page @pid latched in @mode, at *@data (its fixed address). A resident
 * page is a hit (perhaps after waiting for another thread's read of it or
 * for a writer); a missing one is read in by this thread through @io, a
 * miss, after making room when the pool is full (a batch evicted, dirty
 * pages written back first through @io). Counts into @c, which only
 * this thread writes. Errors: those of @io, and -ECANCELED when a stop
 * flag of @io was set while it had to wait.
 */
int vmcache_get(struct vmcache *vc, uint64_t pid, enum vmcache_mode mode,
		const struct vmcache_io *io, struct pool_counters *c, uint8_t **data);

/*
 * vmcache_get(VMCACHE_SHARED) with its common case inline: the page
 * resident and unlocked or shared, latched with one compare-and-swap on
 * its state word. Give it back with vmcache_unpin.
 */
static inline int vmcache_pin(struct vmcache *vc, uint64_t pid, const struct vmcache_io *io,
			      struct pool_counters *c, uint8_t **data)
{
	uint64_t *w = &vc->state[pid];
	uint64_t s;

	/* The page's line is on its way while the latch is taken: the
	 * compare-and-swap would otherwise hold the load back (a locked
	 * instruction lets nothing after it start). A prefetch of a page
	 * not there faults nothing. */
	__builtin_prefetch(vmcache_addr(vc, pid));
	s = __atomic_load_n(w, __ATOMIC_RELAXED);
	if (__builtin_expect(vmcache_st(s) < VMCACHE_MAX_SHARED && !(s & VMCACHE_F_XWANT), 1) &&
	    __atomic_compare_exchange_n(w, &s, s + (1ull << VMCACHE_ST_SHIFT), false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		stat_add(&c->hits, 1);
		*data = vmcache_addr(vc, pid);
		return 0;
	}
	return vmcache_get(vc, pid, VMCACHE_SHARED, io, c, data);
}

/* A reader for one thread, or NULL when all POOL_PIN_READERS_MAX are
 * taken (that thread's latches then go to the state words). */
static inline struct pool_reader *vmcache_reader_new(struct vmcache *vc)
{
	return pool_pin_reader_new(&vc->pins);
}

/*
 * vmcache_pin for request slot @hs of the thread whose reader is @rd,
 * its common case published instead: the page resident and not locked,
 * held by naming it in the reader's slot (a store to the thread's own
 * line) and then finding its word unlocked (pool_pin.h: how the reader
 * and an evictor or writer pass each other). Anything else (no reader or slot, locked, evicted,
 * marked: the mark is cleared by the slow path, which is how a published
 * reader gives its page a second chance) goes to vmcache_pin. *@ref is
 * what vmcache_done takes back.
 */
static inline int vmcache_read(struct vmcache *vc, struct pool_reader *rd, unsigned hs,
			       uint64_t pid, const struct vmcache_io *io, struct pool_counters *c,
			       uint8_t **data, uint64_t *ref)
{
	if (__builtin_expect(rd && hs < POOL_PIN_SLOTS, 1)) {
		uint64_t s;

		/* The page's line is on its way meanwhile (a prefetch of a
		 * page not there faults nothing). */
		__builtin_prefetch(vmcache_addr(vc, pid));
		pool_pin_publish(&vc->pins, rd, hs, pid);
		s = __atomic_load_n(&vc->state[pid], __ATOMIC_SEQ_CST);
		if (__builtin_expect(vmcache_st(s) < VMCACHE_MAX_SHARED && !(s & VMCACHE_F_XWANT), 1)) {
			stat_add(&c->hits, 1);
			*data = vmcache_addr(vc, pid);
			*ref = pid | VMCACHE_REF_PUBLISHED;
			return 0;
		}
		pool_pin_clear(rd, hs);
	}
	*ref = pid;
	return vmcache_pin(vc, pid, io, c, data);
}

/* Give back a shared latch. */
void vmcache_unpin_slow(struct vmcache *vc, uint64_t pid, uint64_t old);
static inline void vmcache_unpin(struct vmcache *vc, uint64_t pid)
{
	/* While a shared latch is held, the state changes only by other
	 * shared latches coming and going (and the flags), so a subtraction
	 * gives it back; the last one out wakes a waiting writer. */
	uint64_t old = __atomic_fetch_sub(&vc->state[pid], 1ull << VMCACHE_ST_SHIFT,
					  __ATOMIC_RELEASE);

	if (__builtin_expect((old & VMCACHE_F_WAITERS) != 0, 0))
		vmcache_unpin_slow(vc, pid, old);
}

/* Give back what vmcache_read returned for slot @hs of @rd. */
static inline void vmcache_done(struct vmcache *vc, struct pool_reader *rd, unsigned hs,
				uint64_t ref)
{
	if (ref & VMCACHE_REF_PUBLISHED)
		pool_pin_clear(rd, hs);
	else
		vmcache_unpin(vc, ref);
}

/* Give back an exclusive latch; @dirty: the page was modified. */
void vmcache_unlock(struct vmcache *vc, uint64_t pid, bool dirty);

/* Write every dirty resident page numbered in [@lo, @hi) back through
 * @io. Pages written, or -errno (the first failure; that page stays
 * dirty). */
int64_t vmcache_flush_range(struct vmcache *vc, uint64_t lo, uint64_t hi,
			    const struct vmcache_io *io, struct pool_counters *c);

/* Pages resident now (or being read in). */
uint64_t vmcache_used(const struct vmcache *vc);
/* For tests, with no other thread in the pool: nothing latched or
 * marked-and-latched, every page in the resident set resident and every
 * other one evicted, the set's count is `used`, at most `capacity`;
 * 0 or -EUCLEAN with @e saying what is wrong. */
int vmcache_check(const struct vmcache *vc, struct err *e);

#endif
