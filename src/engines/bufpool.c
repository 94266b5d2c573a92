/*
 * bufpool.c - the buffer pool; what it promises is in bufpool.h.
 *
 * The page table is open addressing over 64-byte buckets: a header word
 * and five 12-byte entries. An entry is a page in the pool: its key, its
 * latch word and the frame holding its bytes, on one cache line with its
 * neighbours, so a hit reads that line and the page and nothing else.
 * On a virtual machine every cache line in a page the TLB does not hold
 * costs a walk of two page tables, so the table is kept small: first
 * measured with the key and latch in a separate frame header (that
 * header's miss cost as much as the page's own), then with 16-byte
 * entries half used (three quarters used was a quarter faster); hence
 * 32-bit keys and three in four entries used when the pool is full.
 *
 * The latch word:
 *
 *   bits  0-23  pins: threads reading the page (shared latches)
 *   bit     24  REF: accessed since the clock hand last passed
 *   bit     25  DIRTY: modified since it was last written back
 *   bit     26  LOCKED: one thread has it alone (loading the page,
 *               writing to it, or evicting it); nobody may pin it
 *   bit     27  WAITERS: a thread sleeps on this word (futex)
 *   bit     28  USED: the entry holds a page (0 with no key: free)
 *   bit     29  XWANT: a writer waits for the pins to go; no new pin is
 *               given meanwhile, so a stream of readers, each pinning
 *               before the last one unpinned, cannot starve it (its wait
 *               is bounded by the longest pin held when it came)
 *
 * A key lives in its home bucket or, when that is full, in one of the
 * following ones. The home's header word holds the latch of its keys'
 * inserts and deletes, how many of them spilled and how far the farthest
 * went (reach), so a lookup that does not find its key at home scans
 * home .. home + reach and no more.
 *
 * A pin is either counted in the latch word (bufpool_get) or published
 * in the pinning thread's reader (bufpool_pin, bufpool.h): a thread that
 * locks a page to evict or change it looks at every reader's slots after
 * locking, and passes the page over (the clock) or waits (a writer).
 *
 * Frames are found by the clock through owner[], per frame: the entry
 * whose page it holds, or free, or taken (a thread is between evicting
 * it and giving it to a new page). An entry's reference is its bucket
 * times 8 plus its way, so decoding it is a shift.
 *
 * Who may change what:
 * - A key enters or leaves the table only under its home's latch, so
 *   two threads missing on one page cannot both insert it: the second
 *   finds the first's entry under the latch and waits for its load.
 *   Lookups take no latch: they read keys with acquire loads, and a
 *   lookup that finds nothing is retried under the latch before anything
 *   is loaded. A free entry is claimed with a compare-and-swap of its
 *   latch word, since latch holders of different homes may spill into
 *   one bucket.
 * - An entry's key and frame change only while it is LOCKED (or free),
 *   so a pin (a compare-and-swap that refuses LOCKED) that then re-reads
 *   the key it looked up holds that page, in that frame, while pinned.
 * - The clock takes a page only with no pins and not LOCKED, turning it
 *   LOCKED; one with REF gets a second chance (REF cleared).
 *
 * A thread never holds two home latches, nor a home latch while it
 * waits for a page or does I/O: the victim is freed (written back,
 * removed from its key's home) before the new key's home is latched.
 *
 * Waiting (a page being loaded, a writer waiting for readers to unpin):
 * spin a little, then sleep on the latch word with a futex, announced by
 * WAITERS so that whoever changes the word next wakes the sleepers.
 */
#include "engines/bufpool.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PIN_MASK	BUFPOOL_PIN_MASK
#define F_REF		BUFPOOL_F_REF
#define F_DIRTY		BUFPOOL_F_DIRTY
#define F_LOCKED	BUFPOOL_F_LOCKED
#define F_WAITERS	BUFPOOL_F_WAITERS
#define F_USED		BUFPOOL_F_USED
#define F_XWANT		BUFPOOL_F_XWANT

#define KEY_NONE	BUFPOOL_NONE

/* owner[] of a frame that holds no page: free for the clock to take,
 * or taken by a thread that will give it to one. */
#define FRAME_FREE	UINT32_MAX
#define FRAME_TAKEN	(UINT32_MAX - 1)

#define WAYS		BUFPOOL_WAYS
#define WAY_BITS	BUFPOOL_WAY_BITS

/* The bucket's header word. */
#define H_LATCH		(1u << 31)	/* inserts and deletes of its keys */
#define H_SPILL_SHIFT	16		/* bits 16-30: keys homed here, in later buckets */
#define H_SPILL_MAX	0x7fffu
#define H_REACH_MASK	BUFPOOL_H_REACH_MASK	/* bits 0-15: the farthest of them, in buckets */

/* Page table load when every frame holds a page: three quarters of the
 * entries (a key whose home is full goes on to the next bucket, the
 * next cache line, nearly always in the same page). */
#define LOAD_NUM 3
#define LOAD_DEN 4

/* Huge pages, for the alignment that lets THP back the frames, and the
 * base page below which nothing is worth rounding up to one. */
#define HUGE_2M (2ull << 20)
#define SMALL_PAGE 4096

/* Home latches are held for a few stores; past this many spins the
 * holder was preempted, so yield the CPU to it. */
#define SPIN_LATCH 64

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_RLX(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define STORE_RLX(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
/* Sequentially consistent: an evictor's or writer's lock of a latch word
 * is half of the handshake with bufpool_pin's published pins (bufpool.h);
 * on x86 and arm64 it is the same instruction as acquire-release. */
#define CAS(p, exp, v)	__atomic_compare_exchange_n((p), (exp), (v), false, \
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)

/* Counters are this thread's own: plain relaxed stores (stats.h). */
static inline void count(uint64_t *c)
{
	stat_add(c, 1);
}

static inline struct bufpool_entry *entry_at(const struct bufpool *bp, uint32_t ref)
{
	return bufpool_entry_at(bp, ref);
}

static inline uint32_t ref_of(uint32_t bucket, unsigned way)
{
	return bucket << WAY_BITS | way;
}

/* ---- futex waits ------------------------------------------------------ */

/*
 * The latch word of @en was @seen, a state this thread cannot use: wait
 * until it changes. Spins first; then sets WAITERS (only if the word is
 * still @seen) and sleeps on it.
 */
static void wait_change(struct bufpool_entry *en, uint32_t seen)
{
	for (int i = 0; i < POOL_SPIN; i++) {
		pool_cpu_relax();
		if (LOAD_RLX(&en->state) != seen)
			return;
	}
	if (!(seen & F_WAITERS)) {
		uint32_t want = seen | F_WAITERS;

		if (!CAS(&en->state, &seen, want))
			return;
		seen = want;
	}
	pool_futex_wait(&en->state, seen);
}

/* After an update that returned @old: wake the sleepers it announced. */
static inline void wake_if(struct bufpool_entry *en, uint32_t old)
{
	if (__builtin_expect(old & F_WAITERS, 0))
		pool_futex_wake_all(&en->state);
}

/* ---- home latches ----------------------------------------------------- */

/* Latch bucket @b as a home; returns its header word (latched). */
static uint32_t home_lock(struct bufpool_bucket *b)
{
	for (unsigned i = 0;; i++) {
		uint32_t h = LOAD_RLX(&b->head);

		if (!(h & H_LATCH) && CAS(&b->head, &h, h | H_LATCH))
			return h | H_LATCH;
		if (i >= SPIN_LATCH)
			sched_yield();
		else
			pool_cpu_relax();
	}
}

/* Give the latch back with the header @h (spill and reach as updated). */
static void home_unlock(struct bufpool_bucket *b, uint32_t h)
{
	STORE(&b->head, h & ~H_LATCH);
}

/* ---- the page table ---------------------------------------------------- */

static inline uint32_t next_bucket(const struct bufpool *bp, uint32_t b)
{
	return b + 1 == bp->nbuckets ? 0 : b + 1;
}

static inline uint32_t find_in(const struct bufpool *bp, uint32_t b, uint32_t key)
{
	const struct bufpool_entry *en = bp->buckets[b].e;

	for (unsigned i = 0; i < WAYS; i++)
		if (LOAD(&en[i].key) == key)
			return ref_of(b, i);
	return BUFPOOL_NONE;
}

/*
 * The entry of @key (home bucket @home), or BUFPOOL_NONE. Without the
 * home latch the answer may be out of date; with it, it is exact. The
 * reach is in the home's own cache line, read only when the key is not
 * at home.
 */
static inline uint32_t table_find(const struct bufpool *bp, uint32_t key, uint32_t home)
{
	uint32_t e = find_in(bp, home, key), b = home;
	unsigned reach;

	if (__builtin_expect(e != BUFPOOL_NONE, 1))
		return e;
	reach = LOAD_RLX(&bp->buckets[home].head) & H_REACH_MASK;
	for (unsigned d = 1; d <= reach; d++) {
		b = next_bucket(bp, b);
		e = find_in(bp, b, key);
		if (e != BUFPOOL_NONE)
			return e;
	}
	return BUFPOOL_NONE;
}

/*
 * Under @home's latch (its header word in *@h, updated here): a free
 * entry for @key, claimed LOCKED, holding frame @f; its reference, or
 * BUFPOOL_NONE when no free entry is within reach of a header (never:
 * the table has a third more entries than there are frames).
 */
static uint32_t table_insert(struct bufpool *bp, uint32_t key, uint32_t home, uint32_t *h,
			     uint32_t f)
{
	uint32_t b = home;

	for (uint32_t d = 0; d < bp->nbuckets && d <= H_REACH_MASK; d++, b = next_bucket(bp, b)) {
		struct bufpool_entry *en = bp->buckets[b].e;

		for (unsigned i = 0; i < WAYS; i++) {
			uint32_t free_state = 0;
			uint32_t spill = *h >> H_SPILL_SHIFT & H_SPILL_MAX;

			if (d && spill == H_SPILL_MAX)
				return BUFPOOL_NONE;
			if (LOAD_RLX(&en[i].state) ||
			    !CAS(&en[i].state, &free_state, F_USED | F_LOCKED))
				continue;
			/* Frame first: a lookup that sees the key finds it
			 * LOCKED and waits, then reads the frame. */
			STORE_RLX(&en[i].frame, f);
			STORE(&en[i].key, key);
			if (d) {
				uint32_t reach = *h & H_REACH_MASK;

				*h = (*h & H_LATCH) | (spill + 1) << H_SPILL_SHIFT |
				     (d > reach ? d : reach);
				/* Before the key can be looked for past home. */
				STORE(&bp->buckets[home].head, *h);
			}
			return ref_of(b, i);
		}
	}
	return BUFPOOL_NONE;
}

/* Under the home latch of entry @ref's key (header *@h), the entry held
 * LOCKED by this thread: it becomes free, and whoever waited on it
 * wakes. */
static void table_delete(struct bufpool *bp, uint32_t ref, uint32_t home, uint32_t *h)
{
	struct bufpool_entry *en = entry_at(bp, ref);
	uint32_t d = ((ref >> WAY_BITS) + bp->nbuckets - home) % bp->nbuckets;
	uint32_t old;

	if (d) {
		uint32_t spill = (*h >> H_SPILL_SHIFT & H_SPILL_MAX) - 1;

		*h = (*h & H_LATCH) | spill << H_SPILL_SHIFT | (spill ? (*h & H_REACH_MASK) : 0);
	}
	STORE(&en->key, KEY_NONE);
	old = __atomic_exchange_n(&en->state, 0, __ATOMIC_ACQ_REL);
	wake_if(en, old);
}

/* ---- latches on pages --------------------------------------------------- */

/*
 * Latch entry @ref, found for @key, in @mode. Returns 1 with the latch
 * held and the entry still holding @key; 0 when it was given to another
 * page or freed meanwhile (nothing held: look again); -ECANCELED when a
 * stop flag of @io (NULL: none) was set while it had to wait (nothing
 * held). *@waited is set when another thread's load (or write) had to
 * be waited for.
 */
static int latch_entry(struct bufpool *bp, uint32_t ref, uint32_t key, enum bufpool_mode mode,
		       const struct bufpool_io *io, bool *waited)
{
	struct bufpool_entry *en = entry_at(bp, ref);
	const bool shared = mode == BUFPOOL_SHARED;
	uint32_t s = LOAD_RLX(&en->state);
	bool mine = false;	/* this writer set XWANT */

	/* The page's first line is on its way while the latch is taken. */
	__builtin_prefetch(bufpool_frame(bp, LOAD_RLX(&en->frame)));
	for (;;) {
		uint32_t want;

		if (!(s & F_USED))
			return 0;
		if (!shared && !(s & (F_LOCKED | F_XWANT)) && (s & PIN_MASK)) {
			/* Pinned: no new pins from now on, then wait for
			 * these to go. */
			if (CAS(&en->state, &s, s | F_XWANT)) {
				mine = true;
				s |= F_XWANT;
			}
			continue;
		}
		if ((s & F_LOCKED) || (s & F_XWANT && !mine) || (!shared && (s & PIN_MASK))) {
			if (bufpool_io_stopped(io)) {
				/* Stopping: the readers this writer held off may go. */
				if (mine && LOAD(&en->key) == key)
					wake_if(en, __atomic_fetch_and(&en->state, ~(F_XWANT | F_WAITERS),
								       __ATOMIC_ACQ_REL));
				return -ECANCELED;
			}
			wait_change(en, s);
			*waited = true;
			if (LOAD(&en->key) != key)
				return 0;	/* freed meanwhile: XWANT went with it */
			s = LOAD_RLX(&en->state);
			continue;
		}
		want = shared ? (s + 1) | F_REF : (s & ~F_XWANT) | F_LOCKED | F_REF;
		if (CAS(&en->state, &s, want))
			break;
	}
	/* Latched: the key cannot change now. Was it still ours? */
	if (__builtin_expect(LOAD(&en->key) == key, 1)) {
		/* Alone, but for readers of published pins: they finish
		 * the request they hold it for and go. */
		if (mode != BUFPOOL_SHARED && pool_pin_wait(&bp->pins, ref, io ? io->stop : NULL) < 0) {
			bufpool_unlock(bp, ref, false);
			return -ECANCELED;
		}
		return 1;
	}
	if (mode == BUFPOOL_SHARED)
		bufpool_unpin(bp, ref);
	else
		bufpool_unlock(bp, ref, false);
	return 0;
}

void bufpool_unpin(struct bufpool *bp, uint32_t ref)
{
	struct bufpool_entry *en = entry_at(bp, ref);
	uint32_t old = __atomic_fetch_sub(&en->state, 1, __ATOMIC_RELEASE);

	/* The last reader out wakes a writer or evictor waiting for it. */
	if (__builtin_expect(old & F_WAITERS, 0) && (old & PIN_MASK) == 1) {
		__atomic_fetch_and(&en->state, ~F_WAITERS, __ATOMIC_RELAXED);
		pool_futex_wake_all(&en->state);
	}
}

void bufpool_unlock(struct bufpool *bp, uint32_t ref, bool dirty)
{
	struct bufpool_entry *en = entry_at(bp, ref);
	uint32_t s = LOAD_RLX(&en->state), want;

	do
		want = (s & ~(F_LOCKED | F_WAITERS)) | F_REF | (dirty ? F_DIRTY : 0);
	while (!CAS(&en->state, &s, want));
	wake_if(en, s);
}

/* ---- the clock ------------------------------------------------------------ */

/*
 * Entry @ref, this thread's LOCKED: the page leaves the pool (written
 * back first when @dirty) and its frame stays this thread's (owner
 * TAKEN).
 */
static int evict(struct bufpool *bp, uint32_t ref, bool dirty, const struct bufpool_io *io,
		 struct pool_counters *c)
{
	struct bufpool_entry *en = entry_at(bp, ref);
	const uint32_t key = LOAD_RLX(&en->key);
	const uint32_t f = LOAD_RLX(&en->frame);
	const uint32_t home = bufpool_home_of(bp, key);
	struct bufpool_bucket *hb = &bp->buckets[home];
	uint32_t h;

	if (dirty) {
		int ret = io->write(io->arg, key, bufpool_frame(bp, f));

		if (ret < 0) {
			bufpool_unlock(bp, ref, true);
			return ret;
		}
		count(&c->writebacks);
		__atomic_fetch_and(&en->state, ~F_DIRTY, __ATOMIC_RELAXED);
	}
	STORE(&bp->owner[f], FRAME_TAKEN);
	h = home_lock(hb);
	table_delete(bp, ref, home, &h);
	home_unlock(hb, h);
	count(&c->evictions);
	return 0;
}

/*
 * A frame for a new page, taken by this thread and holding nothing: the
 * next one the clock hand finds free, or holding a page that is
 * unpinned, unlocked and not referenced since the hand last passed (a
 * referenced one loses its REF and is passed over). That page is
 * written back when dirty and leaves the pool.
 */
static int take_frame(struct bufpool *bp, const struct bufpool_io *io,
		      struct pool_counters *c, uint32_t *out)
{
	uint64_t looked = 0;

	for (;;) {
		uint64_t t = __atomic_fetch_add(&bp->hand, 1, __ATOMIC_RELAXED);
		uint32_t f = (uint32_t)(t % bp->nframes);
		uint32_t o = LOAD(&bp->owner[f]);

		if (o == FRAME_FREE) {
			if (CAS(&bp->owner[f], &o, FRAME_TAKEN)) {
				*out = f;
				return 0;
			}
		} else if (o != FRAME_TAKEN) {
			struct bufpool_entry *en = entry_at(bp, o);
			uint32_t s = LOAD_RLX(&en->state);

			if ((s & F_USED) && !(s & (F_LOCKED | PIN_MASK))) {
				if (s & F_REF) {
					__atomic_fetch_and(&en->state, ~F_REF, __ATOMIC_RELAXED);
				} else if (CAS(&en->state, &s, s | F_LOCKED)) {
					/* Locked: is it still frame f's page, or
					 * was the entry reused since owner[] was
					 * read? And is no reader's published pin
					 * on it (a pinned page stays)? */
					pool_pin_fence(&bp->pins);
					if (LOAD_RLX(&en->frame) == f && LOAD(&bp->owner[f]) == o &&
					    !pool_pin_published(&bp->pins, o)) {
						int ret = evict(bp, o, s & F_DIRTY, io, c);

						if (ret)
							return ret;
						*out = f;
						return 0;
					}
					bufpool_unlock(bp, o, false);
				}
			}
		}
		/* Two full turns found every frame latched: they belong to
		 * threads between two steps of their own, or waiting for
		 * this one (a stop ends that); let them run. */
		if (++looked % (2ull * bp->nframes) == 0) {
			if (bufpool_io_stopped(io))
				return -ECANCELED;
			sched_yield();
		}
	}
}

/* ---- get ---------------------------------------------------------------- */

int bufpool_get(struct bufpool *bp, uint32_t key, enum bufpool_mode mode,
		const struct bufpool_io *io, struct pool_counters *c, uint32_t *ref,
		uint8_t **data)
{
	const uint32_t home = bufpool_home_of(bp, key);
	struct bufpool_bucket *hb = &bp->buckets[home];
	struct bufpool_entry *en;
	bool waited = false;
	uint32_t e, f = BUFPOOL_NONE, h;
	int ret;

	for (;;) {
		e = table_find(bp, key, home);
		if (__builtin_expect(e != BUFPOOL_NONE, 1)) {
			ret = latch_entry(bp, e, key, mode, io, &waited);
			if (ret < 0)
				return ret;
			if (!ret)
				continue;
			count(&c->hits);
			if (waited)
				count(&c->waits);
			*ref = e;
			*data = bufpool_frame(bp, LOAD_RLX(&entry_at(bp, e)->frame));
			return 0;
		}

		/* A miss, unless another thread is inserting it right now:
		 * take a frame, then look again under the home latch. */
		ret = take_frame(bp, io, c, &f);
		if (ret)
			return ret;
		h = home_lock(hb);
		if (table_find(bp, key, home) != BUFPOOL_NONE) {
			home_unlock(hb, h);
			STORE(&bp->owner[f], FRAME_FREE);
			continue;
		}
		e = table_insert(bp, key, home, &h, f);
		home_unlock(hb, h);
		if (e == BUFPOOL_NONE) {
			STORE(&bp->owner[f], FRAME_FREE);
			return -ENOSPC;
		}
		break;
	}

	/* Entry e is in the table, LOCKED: whoever looks it up now waits
	 * for the load. Frame f is its; the clock may see it from now on. */
	en = entry_at(bp, e);
	STORE(&bp->owner[f], e);
	if (mode != BUFPOOL_EXCL_NOREAD) {
		ret = io->read(io->arg, key, bufpool_frame(bp, f));
		if (ret < 0) {
			STORE(&bp->owner[f], FRAME_TAKEN);
			h = home_lock(hb);
			table_delete(bp, e, home, &h);
			home_unlock(hb, h);
			STORE(&bp->owner[f], FRAME_FREE);
			return ret;
		}
		count(&c->reads);
	}
	count(&c->misses);
	if (mode == BUFPOOL_SHARED) {
		/* Pinned by us, REF, unlocked: waiters may pin it now. */
		uint32_t old = __atomic_exchange_n(&en->state, F_USED | F_REF | 1u, __ATOMIC_ACQ_REL);

		wake_if(en, old);
	} else {
		__atomic_fetch_or(&en->state, F_REF, __ATOMIC_RELAXED);
	}
	*ref = e;
	*data = bufpool_frame(bp, f);
	return 0;
}

/* ---- read-ahead ----------------------------------------------------------- */

int bufpool_frame_take(struct bufpool *bp, const struct bufpool_io *io, struct pool_counters *c,
		       uint32_t *frame)
{
	return take_frame(bp, io, c, frame);
}

void bufpool_frame_give_back(struct bufpool *bp, uint32_t frame)
{
	STORE(&bp->owner[frame], FRAME_FREE);
}

int bufpool_insert(struct bufpool *bp, uint32_t key, uint32_t frame, struct pool_counters *c)
{
	const uint32_t home = bufpool_home_of(bp, key);
	struct bufpool_bucket *hb = &bp->buckets[home];
	uint32_t e, h, old;

	h = home_lock(hb);
	if (table_find(bp, key, home) != BUFPOOL_NONE) {
		/* Another thread brought it in meanwhile: its copy stays. */
		home_unlock(hb, h);
		STORE(&bp->owner[frame], FRAME_FREE);
		return 0;
	}
	e = table_insert(bp, key, home, &h, frame);
	home_unlock(hb, h);
	if (e == BUFPOOL_NONE) {
		STORE(&bp->owner[frame], FRAME_FREE);
		return -ENOSPC;
	}
	STORE(&bp->owner[frame], e);
	/* Unpinned and referenced: the clock gives it a turn before it
	 * may go; whoever looked it up meanwhile waited on LOCKED. */
	old = __atomic_exchange_n(&entry_at(bp, e)->state, F_USED | F_REF, __ATOMIC_ACQ_REL);
	wake_if(entry_at(bp, e), old);
	count(&c->prefetches);
	return 1;
}

/* ---- flush -------------------------------------------------------------- */

int bufpool_flush_keys(struct bufpool *bp, uint32_t lo, uint32_t hi, const struct bufpool_io *io,
		       struct pool_counters *c)
{
	int written = 0;

	for (uint32_t b = 0; b < bp->nbuckets; b++) {
		for (unsigned i = 0; i < WAYS; i++) {
			struct bufpool_entry *en = &bp->buckets[b].e[i];
			const uint32_t ref = ref_of(b, i);
			bool waited = false;
			uint32_t key, old;
			int ret;

			if (!(LOAD_RLX(&en->state) & F_DIRTY))
				continue;
			key = LOAD(&en->key);
			if (key < lo || key >= hi)
				continue;
			/* A writer holds it, or it is being evicted (the
			 * evictor writes it back): the pin waits, then sees
			 * which. */
			if (key == KEY_NONE || latch_entry(bp, ref, key, BUFPOOL_SHARED, NULL, &waited) <= 0)
				continue;
			/* Pinned: no writer can change it while it is
			 * written. DIRTY goes first, so a write after this
			 * pin's end is not lost. */
			old = __atomic_fetch_and(&en->state, ~F_DIRTY, __ATOMIC_ACQ_REL);
			if (old & F_DIRTY) {
				ret = io->write(io->arg, key, bufpool_frame(bp, LOAD_RLX(&en->frame)));
				if (ret < 0) {
					__atomic_fetch_or(&en->state, F_DIRTY, __ATOMIC_RELAXED);
					bufpool_unpin(bp, ref);
					return ret;
				}
				count(&c->writebacks);
				written++;
			}
			bufpool_unpin(bp, ref);
		}
	}
	return written;
}

/* ---- introspection ------------------------------------------------------ */

uint32_t bufpool_lookup(const struct bufpool *bp, uint32_t key)
{
	uint32_t e = table_find(bp, key, bufpool_home_of(bp, key));

	return e == BUFPOOL_NONE ? BUFPOOL_NONE : LOAD(&entry_at(bp, e)->frame);
}

uint32_t bufpool_used(const struct bufpool *bp)
{
	uint32_t n = 0;

	for (uint32_t b = 0; b < bp->nbuckets; b++)
		for (unsigned i = 0; i < WAYS; i++)
			n += (LOAD(&bp->buckets[b].e[i].state) & F_USED) != 0;
	return n;
}

size_t bufpool_overhead(const struct bufpool *bp)
{
	return bp->meta_len;
}

/* bufpool_check on one entry; @spill counts, per home, what spilled. */
static int check_entry(const struct bufpool *bp, uint32_t b, unsigned i, uint32_t *spill,
		       uint64_t *used, struct err *e)
{
	const struct bufpool_entry *en = &bp->buckets[b].e[i];
	const uint32_t ref = ref_of(b, i);
	uint32_t home, d;

	if (!(en->state & F_USED)) {
		if (en->state || en->key != KEY_NONE)
			return err_set(e, EUCLEAN, "free entry %#x: state %#x, key %u", ref,
				       en->state, en->key);
		return 0;
	}
	(*used)++;
	if (en->state & (F_LOCKED | PIN_MASK | F_WAITERS | F_XWANT))
		return err_set(e, EUCLEAN, "entry %#x is latched (state %#x)", ref, en->state);
	if (en->frame >= bp->nframes || bp->owner[en->frame] != ref)
		return err_set(e, EUCLEAN, "entry %#x: frame %u is not its own", ref, en->frame);
	home = bufpool_home_of(bp, en->key);
	d = (b + bp->nbuckets - home) % bp->nbuckets;
	if (d > (bp->buckets[home].head & H_REACH_MASK))
		return err_set(e, EUCLEAN, "entry %#x sits %u buckets past its home, reach %u",
			       ref, d, bp->buckets[home].head & H_REACH_MASK);
	if (d)
		spill[home]++;
	if (table_find(bp, en->key, home) != ref)
		return err_set(e, EUCLEAN, "entry %#x (key %u) is not what a lookup finds", ref,
			       en->key);
	return 0;
}

int bufpool_check(const struct bufpool *bp, struct err *e)
{
	uint64_t used = 0, owned = 0;
	uint32_t *spill = calloc(bp->nbuckets, sizeof(*spill));
	int ret = 0;

	if (!spill)
		return err_set(e, ENOMEM, "out of memory");
	for (uint32_t b = 0; b < bp->nbuckets && !ret; b++)
		for (unsigned i = 0; i < WAYS && !ret; i++)
			ret = check_entry(bp, b, i, spill, &used, e);
	for (uint32_t b = 0; b < bp->nbuckets && !ret; b++) {
		uint32_t h = bp->buckets[b].head;

		if ((h & H_LATCH) || (h >> H_SPILL_SHIFT & H_SPILL_MAX) != spill[b])
			ret = err_set(e, EUCLEAN, "bucket %u: header %#x, %u spilled", b, h, spill[b]);
	}
	for (uint32_t f = 0; f < bp->nframes && !ret; f++) {
		uint32_t o = bp->owner[f];

		if (o == FRAME_FREE)
			continue;
		if (o == FRAME_TAKEN || (o >> WAY_BITS) >= bp->nbuckets ||
		    (o & ((1u << WAY_BITS) - 1)) >= WAYS || entry_at(bp, o)->frame != f)
			ret = err_set(e, EUCLEAN, "frame %u: owner %#x does not hold it", f, o);
		owned++;
	}
	if (!ret && owned != used)
		ret = err_set(e, EUCLEAN, "%llu pages in the table, %llu frames owned",
			      (unsigned long long)used, (unsigned long long)owned);
	if (!ret)
		ret = pool_pin_check(&bp->pins, "bufpool", e);
	free(spill);
	return ret;
}

/* ---- memory ------------------------------------------------------------- */

/*
 * @len bytes of zeroed, populated memory: huge pages when @hugetlb and
 * the host has them reserved, else ordinary memory aligned to 2 MiB and
 * advised MADV_HUGEPAGE (which transparent huge pages take when enabled).
 * *@len is set to what was mapped.
 */
static void *mem_map(size_t *len, bool hugetlb, enum bufpool_mem *mem)
{
	size_t want = (*len + HUGE_2M - 1) & ~(HUGE_2M - 1);
	uint8_t *p, *aligned;

	/* Less than a huge page: ordinary pages, rounded to the base page. */
	if (*len < HUGE_2M) {
		want = (*len + SMALL_PAGE - 1) & ~(SMALL_PAGE - 1);
		p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		*len = want;
		*mem = BUFPOOL_MEM_PAGES;
		goto populate;
	}
	if (hugetlb) {
		p = mmap(NULL, want, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p != MAP_FAILED) {
			*mem = BUFPOOL_MEM_HUGETLB;
			*len = want;
			goto populate;
		}
	}
	p = mmap(NULL, want + HUGE_2M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Trim to a 2 MiB boundary so whole huge pages fit. */
	aligned = (uint8_t *)(((uintptr_t)p + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	if (aligned + want < p + want + HUGE_2M)
		munmap(aligned + want, (size_t)(p + want + HUGE_2M - (aligned + want)));
	p = aligned;
	*len = want;
	*mem = madvise(p, want, MADV_HUGEPAGE) == 0 ? BUFPOOL_MEM_THP : BUFPOOL_MEM_PAGES;
populate:
	/* Fault it all in now, not inside the first requests. */
#ifdef MADV_POPULATE_WRITE
	if (madvise(p, *len, MADV_POPULATE_WRITE) == 0)
		return p;
#endif
	for (size_t off = 0; off < *len; off += SMALL_PAGE)
		p[off] = 0;
	return p;
}

int bufpool_create(struct bufpool **bpp, uint64_t size, uint32_t page, uint64_t nkeys,
		   struct err *e)
{
	struct bufpool *bp;
	uint64_t nframes = page ? size / page : 0, nbuckets, most;
	uint32_t nreaders;
	size_t tab_len, own_len, meta_len;
	enum bufpool_mem meta_mem;

	if (!page || (page & (page - 1)))
		return err_set(e, EINVAL, "bufpool: page size %u is not a power of two", page);
	/* References are bucket << WAY_BITS | way in 32 bits. */
	if (nframes == 0 || nframes >= (FRAME_TAKEN >> WAY_BITS))
		return err_set(e, EINVAL, "bufpool: %llu bytes make %llu frames of %u bytes",
			       (unsigned long long)size, (unsigned long long)nframes, page);
	/* The table never holds more pages than there are frames, nor more
	 * than there are keys: a pool larger than its region gets a table
	 * for the region (a smaller table is a faster one). */
	most = nkeys && nkeys < nframes ? nkeys : nframes;
	nbuckets = (most * LOAD_DEN + WAYS * LOAD_NUM - 1) / (WAYS * LOAD_NUM);

	bp = aligned_alloc(64, sizeof(*bp));
	if (!bp)
		return err_set(e, ENOMEM, "bufpool: out of memory");
	memset(bp, 0, sizeof(*bp));
	bp->nframes = (uint32_t)nframes;
	bp->page = page;
	bp->page_shift = (unsigned)__builtin_ctz(page);
	bp->nbuckets = (uint32_t)nbuckets;

	/* One mapping: the buckets first (cache-line aligned by the
	 * mapping), then owner[], then the readers, from a line of their own. */
	tab_len = (size_t)nbuckets * sizeof(struct bufpool_bucket);
	own_len = ((size_t)nframes * sizeof(uint32_t) + 63) & ~(size_t)63;
	nreaders = nframes / BUFPOOL_FRAMES_PER_READER < POOL_PIN_READERS_MAX ?
		   (uint32_t)(nframes / BUFPOOL_FRAMES_PER_READER) : POOL_PIN_READERS_MAX;
	if (!nreaders)
		nreaders = 1;
	meta_len = tab_len + own_len + nreaders * sizeof(struct pool_reader);
	/* A table of more than half a huge page is mapped as a whole one:
	 * each hit reads a random bucket, and in base pages that is a TLB
	 * miss nearly every time. */
	bp->meta_len = meta_len > HUGE_2M / 2 && meta_len < HUGE_2M ? HUGE_2M : meta_len;
	bp->meta = mem_map(&bp->meta_len, false, &meta_mem);
	if (!bp->meta) {
		free(bp);
		return err_set(e, ENOMEM, "bufpool: %zu bytes for the page table: %s", meta_len,
			       strerror(errno));
	}
	bp->buckets = bp->meta;
	bp->owner = (uint32_t *)((uint8_t *)bp->meta + tab_len);
	pool_pin_init(&bp->pins, (uint8_t *)bp->meta + tab_len + own_len, nreaders);
	for (uint64_t b = 0; b < nbuckets; b++)
		for (unsigned i = 0; i < WAYS; i++)
			bp->buckets[b].e[i].key = KEY_NONE;
	for (uint64_t f = 0; f < nframes; f++)
		bp->owner[f] = FRAME_FREE;

	bp->frames_len = (size_t)nframes * page;
	bp->frames = mem_map(&bp->frames_len, true, &bp->mem);
	if (!bp->frames) {
		int err = errno;

		munmap(bp->meta, bp->meta_len);
		free(bp);
		return err_set(e, err, "bufpool: %llu bytes of frames: %s",
			       (unsigned long long)nframes * page, strerror(err));
	}
	*bpp = bp;
	return 0;
}

void bufpool_destroy(struct bufpool *bp)
{
	if (!bp)
		return;
	munmap(bp->frames, bp->frames_len);
	munmap(bp->meta, bp->meta_len);
	free(bp);
}
