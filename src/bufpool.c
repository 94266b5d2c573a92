/*
 * bufpool.c - the buffer pool; what it promises is in bufpool.h.
 *
 * Each frame has a header: the key of the page it holds (or none) and a
 * 32-bit latch word:
 *
 *   bits  0-23  pins: threads reading the page (shared latches)
 *   bit     24  REF: accessed since the clock hand last passed
 *   bit     25  DIRTY: modified since it was last written back
 *   bit     26  LOCKED: one thread has it alone (loading the page,
 *               writing to it, or evicting it); nobody may pin it
 *   bit     27  WAITERS: a thread sleeps on this word (futex)
 *
 * The page table is open addressing over 64-byte buckets of 7 entries;
 * an entry is a frame number and 32 bits of the key's hash (a tag, so
 * a lookup reads the headers of the frames that probably match, not of
 * all 7). A key lives in its home bucket (hash & mask) or, when that is
 * full, in one of the following ones; the home bucket counts such
 * spilled entries and how far the farthest went (reach), so a lookup
 * scans home .. home + reach and no more.
 *
 * Who may change what:
 * - A key enters or leaves the table only under its home bucket's
 *   latch, so two threads missing on one page cannot both insert it: the
 *   second finds the first's entry under the latch and waits for its
 *   load. Lookups take no latch: they read entries and headers with
 *   acquire loads, and a lookup that finds nothing is retried under the
 *   latch before anything is loaded. An entry claims a free slot with a
 *   compare-and-swap, since latch holders of different homes may spill
 *   into one bucket.
 * - A frame's key changes only while the frame is LOCKED, so a pin
 *   (a compare-and-swap that refuses LOCKED) that then re-reads the key
 *   it looked up holds that page for as long as it is pinned.
 * - The clock takes a frame only with no pins and not LOCKED, turning it
 *   LOCKED; a frame with REF gets a second chance (REF cleared).
 *
 * A thread never holds two bucket latches, nor a bucket latch while it
 * waits for a frame or does I/O: the victim is freed (written back,
 * removed from its key's bucket) before the new key's bucket is latched.
 *
 * Waiting (a page being loaded, a writer waiting for readers to unpin):
 * spin a little, then sleep on the latch word with a futex, announced by
 * WAITERS so that whoever changes the word next wakes the sleepers.
 */
#include "bufpool.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PIN_MASK	0x00ffffffu
#define F_REF		(1u << 24)
#define F_DIRTY		(1u << 25)
#define F_LOCKED	(1u << 26)
#define F_WAITERS	(1u << 27)

#define KEY_NONE	UINT64_MAX

struct bufpool_frame {
	uint64_t key;		/* KEY_NONE when free; changes only while LOCKED */
	uint32_t state;		/* the latch word above */
	uint32_t pad;
};

/* A bucket is one cache line: its latch and spill counts, then entries. */
#define BUCKET_SLOTS 7

struct bufpool_bucket {
	uint32_t latch;		/* 0 free, 1 held: inserts and deletes of its keys */
	uint16_t spill;		/* entries homed here that sit in later buckets */
	uint16_t reach;		/* the farthest of them, in buckets past this one */
	uint64_t slot[BUCKET_SLOTS];	/* 0 empty; else tag << 32 | (frame + 1) */
};

_Static_assert(sizeof(struct bufpool_bucket) == 64, "a bucket is a cache line");

/* Page table load: at most 2 of a bucket's 7 entries used on average
 * when every frame holds a page, so spills stay rare (a bucket holds
 * more than 7 of a Poisson(2) spread about once in 1000). */
#define ENTRIES_PER_BUCKET 2

/* Huge pages, for the alignment that lets THP back the frames, and the
 * base page below which nothing is worth rounding up to one. */
#define HUGE_2M (2ull << 20)
#define SMALL_PAGE 4096

/* Waiting: this many pause loops before sleeping on the futex (a few
 * microseconds: long enough for a writer's memcpy or a reader's touch,
 * far shorter than the device read a loader is in). */
#define SPIN_WAIT 256
/* Bucket latches are held for a few stores; past this many spins the
 * holder was preempted, so yield the CPU to it. */
#define SPIN_LATCH 64

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_RLX(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define CAS(p, exp, v)	__atomic_compare_exchange_n((p), (exp), (v), false, \
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Counters are this thread's own: plain relaxed stores (stats.h). */
static inline void count(uint64_t *c)
{
	stat_add(c, 1);
}

static inline uint64_t entry_of(uint64_t h, uint32_t f)
{
	return (h & 0xffffffff00000000ull) | ((uint64_t)f + 1);
}

/* ---- futex waits ------------------------------------------------------ */

/* The pool is private to the process (ioengine=bufpool runs its threads
 * in one), so private futexes. */
static void futex_wait(uint32_t *word, uint32_t val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/*
 * The latch word of @fr was @seen, a state this thread cannot use: wait
 * until it changes. Spins first; then sets WAITERS (only if the word is
 * still @seen) and sleeps on it.
 */
static void wait_change(struct bufpool_frame *fr, uint32_t seen)
{
	for (int i = 0; i < SPIN_WAIT; i++) {
		cpu_relax();
		if (LOAD_RLX(&fr->state) != seen)
			return;
	}
	if (!(seen & F_WAITERS)) {
		uint32_t want = seen | F_WAITERS;

		if (!CAS(&fr->state, &seen, want))
			return;
		seen = want;
	}
	futex_wait(&fr->state, seen);
}

/* After an update that returned @old: wake the sleepers it announced. */
static inline void wake_if(struct bufpool_frame *fr, uint32_t old)
{
	if (__builtin_expect(old & F_WAITERS, 0))
		futex_wake_all(&fr->state);
}

/* ---- bucket latches --------------------------------------------------- */

static void bucket_lock(struct bufpool_bucket *b)
{
	for (unsigned i = 0;; i++) {
		if (!LOAD_RLX(&b->latch) &&
		    !__atomic_exchange_n(&b->latch, 1, __ATOMIC_ACQUIRE))
			return;
		if (i >= SPIN_LATCH)
			sched_yield();
		else
			cpu_relax();
	}
}

static void bucket_unlock(struct bufpool_bucket *b)
{
	__atomic_store_n(&b->latch, 0, __ATOMIC_RELEASE);
}

/* ---- the page table ---------------------------------------------------- */

static inline struct bufpool_bucket *bucket_at(const struct bufpool *bp, uint64_t i)
{
	return &bp->buckets[i & bp->bucket_mask];
}

/* The frame holding @key (hash @h), or BUFPOOL_NONE. Without the home
 * latch the answer may be out of date; with it, it is exact. */
static uint32_t table_find(const struct bufpool *bp, uint64_t key, uint64_t h)
{
	const uint32_t tag = (uint32_t)(h >> 32);
	struct bufpool_bucket *home = bucket_at(bp, h);
	unsigned reach = LOAD_RLX(&home->reach);

	for (unsigned d = 0; d <= reach; d++) {
		struct bufpool_bucket *b = bucket_at(bp, h + d);

		for (int i = 0; i < BUCKET_SLOTS; i++) {
			uint64_t s = LOAD(&b->slot[i]);
			uint32_t f;

			if ((uint32_t)(s >> 32) != tag || !s)
				continue;
			f = (uint32_t)s - 1;
			if (LOAD(&bp->fr[f].key) == key)
				return f;
		}
	}
	return BUFPOOL_NONE;
}

/* Under the home latch: enter frame @f for the key of hash @h. */
static int table_insert(struct bufpool *bp, uint64_t h, uint32_t f)
{
	struct bufpool_bucket *home = bucket_at(bp, h);
	const uint64_t entry = entry_of(h, f);

	for (uint64_t d = 0; d <= bp->bucket_mask && d <= UINT16_MAX; d++) {
		struct bufpool_bucket *b = bucket_at(bp, h + d);

		for (int i = 0; i < BUCKET_SLOTS; i++) {
			uint64_t empty = 0;

			if (LOAD_RLX(&b->slot[i]) || !CAS(&b->slot[i], &empty, entry))
				continue;
			if (d) {
				__atomic_store_n(&home->spill, (uint16_t)(home->spill + 1),
						 __ATOMIC_RELAXED);
				if (d > home->reach)
					__atomic_store_n(&home->reach, (uint16_t)d, __ATOMIC_RELAXED);
			}
			return 0;
		}
	}
	/* At most half the slots are ever used: only a broken hash gets here. */
	return -ENOSPC;
}

/* Under the home latch: remove frame @f's entry for the key of hash @h. */
static void table_delete(struct bufpool *bp, uint64_t h, uint32_t f)
{
	struct bufpool_bucket *home = bucket_at(bp, h);
	const uint64_t entry = entry_of(h, f);

	for (unsigned d = 0; d <= home->reach; d++) {
		struct bufpool_bucket *b = bucket_at(bp, h + d);

		for (int i = 0; i < BUCKET_SLOTS; i++) {
			if (LOAD_RLX(&b->slot[i]) != entry)
				continue;
			STORE(&b->slot[i], 0);
			if (d) {
				uint16_t s = (uint16_t)(home->spill - 1);

				__atomic_store_n(&home->spill, s, __ATOMIC_RELAXED);
				if (!s)
					__atomic_store_n(&home->reach, 0, __ATOMIC_RELAXED);
			}
			return;
		}
	}
}

/* ---- latches on frames -------------------------------------------------- */

/*
 * Latch frame @f, found for @key, in @mode. Returns true with the latch
 * held and the frame still holding @key; false when the frame was given
 * to another page meanwhile (nothing held: look again). *@waited is set
 * when another thread's load (or write) had to be waited for.
 */
static bool latch_frame(struct bufpool *bp, uint32_t f, uint64_t key, enum bufpool_mode mode,
			bool *waited)
{
	struct bufpool_frame *fr = &bp->fr[f];
	const uint32_t busy = mode == BUFPOOL_SHARED ? F_LOCKED : F_LOCKED | PIN_MASK;
	uint32_t s = LOAD_RLX(&fr->state);

	for (;;) {
		uint32_t want;

		if (s & busy) {
			wait_change(fr, s);
			*waited = true;
			if (LOAD(&fr->key) != key)
				return false;
			s = LOAD_RLX(&fr->state);
			continue;
		}
		want = mode == BUFPOOL_SHARED ? (s + 1) | F_REF : s | F_LOCKED | F_REF;
		if (CAS(&fr->state, &s, want))
			break;
	}
	/* Latched: the key cannot change now. Was it still ours? */
	if (__builtin_expect(LOAD(&fr->key) == key, 1))
		return true;
	if (mode == BUFPOOL_SHARED)
		bufpool_unpin(bp, f);
	else
		bufpool_unlock(bp, f, false);
	return false;
}

void bufpool_unpin(struct bufpool *bp, uint32_t f)
{
	struct bufpool_frame *fr = &bp->fr[f];
	uint32_t old = __atomic_fetch_sub(&fr->state, 1, __ATOMIC_RELEASE);

	/* The last reader out wakes a writer or evictor waiting for it. */
	if (__builtin_expect(old & F_WAITERS, 0) && (old & PIN_MASK) == 1) {
		__atomic_fetch_and(&fr->state, ~F_WAITERS, __ATOMIC_RELAXED);
		futex_wake_all(&fr->state);
	}
}

void bufpool_unlock(struct bufpool *bp, uint32_t f, bool dirty)
{
	struct bufpool_frame *fr = &bp->fr[f];
	uint32_t s = LOAD_RLX(&fr->state), want;

	do
		want = (s & ~(F_LOCKED | F_WAITERS)) | F_REF | (dirty ? F_DIRTY : 0);
	while (!CAS(&fr->state, &s, want));
	wake_if(fr, s);
}

/* A LOCKED frame that holds no page becomes free: no key, no REF, so
 * the clock takes it first. */
static void frame_free(struct bufpool *bp, uint32_t f)
{
	struct bufpool_frame *fr = &bp->fr[f];
	uint32_t old;

	STORE(&fr->key, KEY_NONE);
	old = __atomic_exchange_n(&fr->state, 0, __ATOMIC_ACQ_REL);
	wake_if(fr, old);
}

/* ---- the clock ------------------------------------------------------------ */

/*
 * A frame for a new page, LOCKED by this thread and holding nothing: the
 * next one the clock hand finds unpinned, unlocked and not referenced
 * since its last pass (a referenced one loses its REF and is passed
 * over). Its old page, if any, is written back when dirty and removed
 * from the table.
 */
static int take_victim(struct bufpool *bp, const struct bufpool_io *io,
		       struct pool_counters *c, uint32_t *out)
{
	uint64_t looked = 0;
	uint32_t f, s;

	for (;;) {
		uint64_t t = __atomic_fetch_add(&bp->hand, 1, __ATOMIC_RELAXED);
		struct bufpool_frame *fr;

		f = (uint32_t)(t % bp->nframes);
		fr = &bp->fr[f];
		s = LOAD_RLX(&fr->state);
		if (!(s & (F_LOCKED | PIN_MASK))) {
			if (s & F_REF)
				__atomic_fetch_and(&fr->state, ~F_REF, __ATOMIC_RELAXED);
			else if (CAS(&fr->state, &s, s | F_LOCKED))
				break;
		}
		/* Two full turns found every frame latched: they belong to
		 * threads between two steps of their own; let them run. */
		if (++looked % (2ull * bp->nframes) == 0)
			sched_yield();
	}

	{
		struct bufpool_frame *fr = &bp->fr[f];
		uint64_t old = LOAD_RLX(&fr->key);

		if (old != KEY_NONE) {
			uint64_t h = bufpool_hash(old);
			struct bufpool_bucket *home = bucket_at(bp, h);

			if (s & F_DIRTY) {
				int ret = io->write(io->arg, old, bufpool_frame(bp, f));

				if (ret < 0) {
					bufpool_unlock(bp, f, true);
					return ret;
				}
				count(&c->writebacks);
				__atomic_fetch_and(&fr->state, ~F_DIRTY, __ATOMIC_RELAXED);
			}
			bucket_lock(home);
			table_delete(bp, h, f);
			bucket_unlock(home);
			STORE(&fr->key, KEY_NONE);
			count(&c->evictions);
		}
	}
	*out = f;
	return 0;
}

/* ---- get ---------------------------------------------------------------- */

int bufpool_get(struct bufpool *bp, uint64_t key, enum bufpool_mode mode,
		const struct bufpool_io *io, struct pool_counters *c, uint32_t *frame)
{
	const uint64_t h = bufpool_hash(key);
	struct bufpool_bucket *home = bucket_at(bp, h);
	bool waited = false;
	uint32_t f, v;
	int ret;

	for (;;) {
		f = table_find(bp, key, h);
		if (f != BUFPOOL_NONE) {
			if (!latch_frame(bp, f, key, mode, &waited))
				continue;
			count(&c->hits);
			if (waited)
				count(&c->waits);
			*frame = f;
			return 0;
		}

		/* A miss, unless another thread is inserting it right now:
		 * take a frame, then look again under the home latch. */
		ret = take_victim(bp, io, c, &v);
		if (ret)
			return ret;
		bucket_lock(home);
		if (table_find(bp, key, h) != BUFPOOL_NONE) {
			bucket_unlock(home);
			frame_free(bp, v);
			continue;
		}
		STORE(&bp->fr[v].key, key);
		ret = table_insert(bp, h, v);
		bucket_unlock(home);
		if (ret) {
			frame_free(bp, v);
			return ret;
		}
		break;
	}

	/* Frame v is in the table for key, LOCKED: whoever looks it up now
	 * waits for the load. */
	if (mode != BUFPOOL_EXCL_NOREAD) {
		ret = io->read(io->arg, key, bufpool_frame(bp, v));
		if (ret < 0) {
			bucket_lock(home);
			table_delete(bp, h, v);
			bucket_unlock(home);
			frame_free(bp, v);
			return ret;
		}
		count(&c->reads);
	}
	count(&c->misses);
	if (mode == BUFPOOL_SHARED) {
		/* Pinned by us, REF, unlocked: waiters may pin it now. */
		uint32_t old = __atomic_exchange_n(&bp->fr[v].state, 1u | F_REF, __ATOMIC_ACQ_REL);

		wake_if(&bp->fr[v], old);
	} else {
		__atomic_fetch_or(&bp->fr[v].state, F_REF, __ATOMIC_RELAXED);
	}
	*frame = v;
	return 0;
}

/* ---- flush -------------------------------------------------------------- */

int bufpool_flush(struct bufpool *bp, const struct bufpool_io *io, struct pool_counters *c)
{
	int written = 0;

	for (uint32_t f = 0; f < bp->nframes; f++) {
		struct bufpool_frame *fr = &bp->fr[f];
		uint64_t key;
		bool waited = false;
		uint32_t old;
		int ret;

		if (!(LOAD_RLX(&fr->state) & F_DIRTY))
			continue;
		key = LOAD(&fr->key);
		/* A writer holds it, or it is being evicted (the evictor
		 * writes it back): the pin waits, then sees which. */
		if (key == KEY_NONE || !latch_frame(bp, f, key, BUFPOOL_SHARED, &waited))
			continue;
		/* Pinned: no writer can change it while it is written. DIRTY
		 * goes first, so a write after this pin's end is not lost. */
		old = __atomic_fetch_and(&fr->state, ~F_DIRTY, __ATOMIC_ACQ_REL);
		if (old & F_DIRTY) {
			ret = io->write(io->arg, key, bufpool_frame(bp, f));
			if (ret < 0) {
				__atomic_fetch_or(&fr->state, F_DIRTY, __ATOMIC_RELAXED);
				bufpool_unpin(bp, f);
				return ret;
			}
			count(&c->writebacks);
			written++;
		}
		bufpool_unpin(bp, f);
	}
	return written;
}

/* ---- introspection ------------------------------------------------------ */

uint32_t bufpool_lookup(const struct bufpool *bp, uint64_t key)
{
	return table_find(bp, key, bufpool_hash(key));
}

uint32_t bufpool_used(const struct bufpool *bp)
{
	uint32_t n = 0;

	for (uint32_t f = 0; f < bp->nframes; f++)
		n += LOAD(&bp->fr[f].key) != KEY_NONE;
	return n;
}

size_t bufpool_overhead(const struct bufpool *bp)
{
	return bp->meta_len;
}

int bufpool_check(const struct bufpool *bp, struct err *e)
{
	uint64_t nb = bp->bucket_mask + 1, entries = 0;

	for (uint64_t i = 0; i < nb; i++) {
		const struct bufpool_bucket *b = &bp->buckets[i];

		if (b->latch)
			return err_set(e, EUCLEAN, "bucket %llu is latched", (unsigned long long)i);
		for (int k = 0; k < BUCKET_SLOTS; k++) {
			uint64_t s = b->slot[k], key, h;
			uint32_t f;
			uint64_t d;

			if (!s)
				continue;
			entries++;
			f = (uint32_t)s - 1;
			if (f >= bp->nframes)
				return err_set(e, EUCLEAN, "bucket %llu names frame %u of %u",
					       (unsigned long long)i, f, bp->nframes);
			key = bp->fr[f].key;
			h = bufpool_hash(key);
			if (key == KEY_NONE || entry_of(h, f) != s)
				return err_set(e, EUCLEAN, "bucket %llu: frame %u holds another key",
					       (unsigned long long)i, f);
			d = (i - h) & bp->bucket_mask;
			if (d > bucket_at(bp, h)->reach)
				return err_set(e, EUCLEAN, "frame %u sits %llu buckets past its home, "
					       "reach %u", f, (unsigned long long)d,
					       bucket_at(bp, h)->reach);
		}
	}
	for (uint32_t f = 0; f < bp->nframes; f++) {
		const struct bufpool_frame *fr = &bp->fr[f];

		if (fr->state & (F_LOCKED | PIN_MASK | F_WAITERS))
			return err_set(e, EUCLEAN, "frame %u is latched (state %#x)", f, fr->state);
		if (fr->key == KEY_NONE)
			continue;
		if (table_find(bp, fr->key, bufpool_hash(fr->key)) != f)
			return err_set(e, EUCLEAN, "frame %u (key %#llx) is not found in the table",
				       f, (unsigned long long)fr->key);
		entries--;
	}
	if (entries)
		return err_set(e, EUCLEAN, "%llu table entries name no frame",
			       (unsigned long long)entries);
	return 0;
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

int bufpool_create(struct bufpool **bpp, uint64_t size, uint32_t page, struct err *e)
{
	struct bufpool *bp;
	uint64_t nframes = page ? size / page : 0, nbuckets = 1;
	size_t fr_len, meta_len;
	enum bufpool_mem meta_mem;

	if (!page || (page & (page - 1)))
		return err_set(e, EINVAL, "bufpool: page size %u is not a power of two", page);
	if (nframes == 0 || nframes >= BUFPOOL_NONE)
		return err_set(e, EINVAL, "bufpool: %llu bytes make %llu frames of %u bytes",
			       (unsigned long long)size, (unsigned long long)nframes, page);
	while (nbuckets * ENTRIES_PER_BUCKET < nframes)
		nbuckets <<= 1;

	bp = aligned_alloc(64, sizeof(*bp));
	if (!bp)
		return err_set(e, ENOMEM, "bufpool: out of memory");
	memset(bp, 0, sizeof(*bp));
	bp->nframes = (uint32_t)nframes;
	bp->page = page;
	bp->page_shift = (unsigned)__builtin_ctz(page);
	bp->bucket_mask = nbuckets - 1;

	/* Headers and buckets in one mapping: bucket array first (64-byte
	 * aligned by the mapping), then the frame headers. */
	fr_len = (size_t)nframes * sizeof(struct bufpool_frame);
	meta_len = (size_t)nbuckets * sizeof(struct bufpool_bucket) + fr_len;
	bp->meta_len = meta_len;
	bp->meta = mem_map(&bp->meta_len, false, &meta_mem);
	if (!bp->meta) {
		free(bp);
		return err_set(e, ENOMEM, "bufpool: %zu bytes for the page table: %s", meta_len,
			       strerror(errno));
	}
	bp->buckets = bp->meta;
	bp->fr = (struct bufpool_frame *)((uint8_t *)bp->meta +
					   (size_t)nbuckets * sizeof(struct bufpool_bucket));
	for (uint64_t f = 0; f < nframes; f++)
		bp->fr[f].key = KEY_NONE;

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
