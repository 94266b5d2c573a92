/*
 * vmcache.c - the virtual-memory-assisted pool; what it promises is in
 * vmcache.h.
 *
 * A page's state word:
 *
 *   bits 56-63  state: 0 unlocked, 1-252 shared latches, 253 locked
 *               (exclusive: being read in, written to or evicted),
 *               254 marked (the clock passed it once since its last
 *               access), 255 evicted (not resident)
 *   bit     55  DIRTY     modified since it was last written back
 *   bit     54  WAITERS   a thread sleeps on the word (futex on its upper half)
 *   bit     53  XWANT     a writer waits for the shared latches to drain
 *   bits  0-52  version   bumped by every exclusive unlock, as in vmcache
 *
 * Who may change what:
 * - Evicted -> locked: the thread that will read the page in (a miss).
 *   It first reserves a place (used < capacity, else it evicts a batch),
 *   puts the page in the resident set, reads it into its address, then
 *   downgrades to one shared latch (a read) or keeps it (a write).
 * - Unlocked or marked -> shared: a reader (one compare-and-swap, inline
 *   in vmcache_pin). A reader that finds the page locked waits for it:
 *   another thread is reading it in, writing to it or evicting it.
 * - Unlocked or marked -> locked: a writer. One that finds shared
 *   latches sets XWANT, after which no reader is let in, and waits for
 *   those inside to leave (each holds its latch for one request): the
 *   wait is bounded by the longest of them, not by the stream behind.
 * - Unlocked -> marked: the clock. Marked -> locked -> evicted: an
 *   evicting thread, for a page nobody touched since it was marked (any
 *   latch clears the mark). A dirty candidate is latched shared and
 *   written back first, then locked only if no one else latched it
 *   meanwhile; its batch's pages are locked together, given back with
 *   madvise(MADV_DONTNEED), one call per run of consecutive page
 *   numbers (consecutive addresses), and leave the resident set.
 *
 * Waiting: spin a little, then sleep on the upper half of the word with
 * a futex, announced by WAITERS; every transition made by the slow paths
 * clears WAITERS and wakes the sleepers when it was set (they look again),
 * and the last shared latch out wakes a writer.
 *
 * The resident set is vmcache's: open addressing with linear probing over
 * 1.5x the capacity rounded up to a power of two, a slot holding a page
 * number, EMPTY or a TOMBSTONE (a removed page; inserts reuse them). It
 * is looked at only by misses (insert), evictions (remove) and the clock,
 * never by a hit.
 */
#include "engines/vmcache.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define ST_SHIFT	VMCACHE_ST_SHIFT
#define ST_MASK		(0xffull << ST_SHIFT)
#define ST_ONE		(1ull << ST_SHIFT)
#define UNLOCKED	VMCACHE_UNLOCKED
#define MAX_SHARED	VMCACHE_MAX_SHARED
#define LOCKED		VMCACHE_LOCKED
#define MARKED		VMCACHE_MARKED
#define EVICTED		VMCACHE_EVICTED
#define F_DIRTY		VMCACHE_F_DIRTY
#define F_WAITERS	VMCACHE_F_WAITERS
#define F_XWANT		VMCACHE_F_XWANT
#define VERSION		VMCACHE_VERSION_MASK

/* A huge page (x86-64, arm64 with 4 KiB base pages). */
#define HUGE_2M		(2ull << 20)

#define RS_EMPTY	UINT64_MAX
#define RS_TOMB		(UINT64_MAX - 1)

/* Evicting: candidates collected at most (the option's bound too). */
#define BATCH_MAX	VMCACHE_BATCH_MAX

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD_RLX(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define CAS(p, exp, v)	__atomic_compare_exchange_n((p), (exp), (v), false, \
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

static inline uint64_t st_of(uint64_t w)
{
	return w >> ST_SHIFT;
}

/* @w with state @st, flags and version kept (vmcache's sameVersion). */
static inline uint64_t same(uint64_t w, uint64_t st)
{
	return (w & ~ST_MASK) | st << ST_SHIFT;
}

/* ... and the version bumped (vmcache's nextVersion). */
static inline uint64_t next(uint64_t w, uint64_t st)
{
	return (w & ~(ST_MASK | VERSION)) | ((w + 1) & VERSION) | st << ST_SHIFT;
}

/* ---- futex waits -------------------------------------------------------- */

/* The futex is the upper half of the word, where the state and flags are. */
static inline uint32_t *hi_half(uint64_t *w)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint32_t *)w + 1;
#else
	return (uint32_t *)w;
#endif
}

static void wake_all(uint64_t *w)
{
	pool_futex_wake_all(hi_half(w));
}

/* Word @w was @seen, a state this thread cannot use: wait until it
 * changes (or a slice has passed). */
static void wait_change(uint64_t *w, uint64_t seen)
{
	for (int i = 0; i < POOL_SPIN; i++) {
		pool_cpu_relax();
		if (LOAD_RLX(w) != seen)
			return;
	}
	if (!(seen & F_WAITERS)) {
		uint64_t want = seen | F_WAITERS;

		if (!CAS(w, &seen, want))
			return;
		seen = want;
	}
	/* In slices, so that a waiter sees a stop flag (vmcache_get). */
	pool_futex_wait(hi_half(w), (uint32_t)(seen >> 32));
}

/* A transition of the slow paths: @w from *@old to @want (WAITERS
 * cleared); on success, whoever slept on the old word wakes, and *@old
 * is the new word (on failure, the word found, as a compare-and-swap). */
static bool move(uint64_t *w, uint64_t *old, uint64_t want)
{
	const uint64_t o = *old;

	want &= ~F_WAITERS;
	if (!CAS(w, old, want))
		return false;
	if (o & F_WAITERS)
		wake_all(w);
	*old = want;
	return true;
}

/* Set the word whatever it is now (the caller holds it locked). */
static void put(uint64_t *w, uint64_t (*f)(uint64_t, uint64_t), uint64_t st)
{
	uint64_t o = LOAD_RLX(w);

	while (!move(w, &o, f(o, st)))
		;
}

void vmcache_unpin_slow(struct vmcache *vc, uint64_t pid, uint64_t old)
{
	uint64_t *w = &vc->state[pid];

	/* The last latch out (a writer waits for none), or room under the
	 * most a word can count (a reader waits for one). */
	if (st_of(old) == 1 || st_of(old) == MAX_SHARED) {
		__atomic_fetch_and(w, ~F_WAITERS, __ATOMIC_RELAXED);
		wake_all(w);
	}
}

void vmcache_unlock(struct vmcache *vc, uint64_t pid, bool dirty)
{
	uint64_t *w = &vc->state[pid];
	uint64_t o = LOAD_RLX(w);

	while (!move(w, &o, next(o, UNLOCKED) | (dirty ? F_DIRTY : 0)))
		;
}

/* ---- the resident set ------------------------------------------------- */

/* A 64-bit mixer (the finalizer of MurmurHash3), so that neighbouring
 * pages land far apart. */
static inline uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

static void rs_insert(struct vmcache *vc, uint64_t pid)
{
	const uint64_t mask = vc->rs_slots - 1;

	for (uint64_t i = mix(pid) & mask;; i = (i + 1) & mask) {
		uint64_t cur = LOAD_RLX(&vc->resident[i]);

		if ((cur == RS_EMPTY || cur == RS_TOMB) && CAS(&vc->resident[i], &cur, pid))
			return;
	}
}

/* Remove @pid, which is in the set (no other thread removes it). */
static void rs_remove(struct vmcache *vc, uint64_t pid)
{
	const uint64_t mask = vc->rs_slots - 1;

	for (uint64_t i = mix(pid) & mask, n = 0; n < vc->rs_slots; i = (i + 1) & mask, n++) {
		uint64_t cur = LOAD_RLX(&vc->resident[i]);

		if (cur == pid && CAS(&vc->resident[i], &cur, RS_TOMB))
			return;
		if (cur == RS_EMPTY)
			return;
	}
}

/* ---- eviction ------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The clock: candidates for one batch, the clean ones in @clean (still
 * marked, not latched), the dirty ones in @dirty latched shared by this
 * thread. Sweeps until it has a batch, or has gone round twice and has
 * something; having nothing, it lets the threads that hold every page
 * run, then sweeps on, unless a stop flag of @io is set (-ECANCELED,
 * nothing collected).
 */
static int collect(struct vmcache *vc, const struct vmcache_io *io, uint64_t *clean, unsigned *nc,
		   uint64_t *dirty, unsigned *nd)
{
	const uint64_t mask = vc->rs_slots - 1;
	const unsigned want = vc->batch;
	uint64_t swept = 0;

	*nc = *nd = 0;
	while (*nc + *nd < want) {
		uint64_t pos = __atomic_fetch_add(&vc->hand, want, __ATOMIC_RELAXED);

		for (unsigned i = 0; i < want && *nc + *nd < want; i++) {
			uint64_t pid = LOAD(&vc->resident[(pos + i) & mask]), s;

			if (pid == RS_EMPTY || pid == RS_TOMB)
				continue;
			s = LOAD(&vc->state[pid]);
			if (s & F_XWANT)
				continue;
			if (st_of(s) == MARKED) {
				if (!(s & F_DIRTY))
					clean[(*nc)++] = pid;
				else if (move(&vc->state[pid], &s, same(s, 1)))
					dirty[(*nd)++] = pid;
			} else if (st_of(s) == UNLOCKED) {
				/* Second chance: marked now, evicted if still
				 * marked when the hand comes back. */
				move(&vc->state[pid], &s, same(s, MARKED));
			}
		}
		swept += want;
		if (swept >= 2 * vc->rs_slots) {
			if (*nc + *nd)
				return 0;
			/* Every page held: by threads that go on, or that
			 * wait for this one (a stop ends that). */
			if (vmcache_io_stopped(io))
				return -ECANCELED;
			sched_yield();
			swept = 0;
		}
	}
	return 0;
}

/* process_madvise(2)'s name for the calling process (Linux 6.14's
 * PIDFD_SELF_THREAD_GROUP), so no pidfd is kept open. */
#define PIDFD_SELF_PROCESS	(-10001)

/*
 * Release @n locked pages (sorted). One process_madvise(2) for the whole
 * batch, every run of consecutive pages an iovec: the kernel zaps them
 * all and flushes the TLB once (Linux 6.16 and later), where a madvise
 * per run flushes, and may send an IPI to every CPU running the job, once
 * per run: the batches' runs are mostly single pages, and the thread
 * that evicts pays it all inside the request that missed (64 madvise
 * calls took 83 us here with no other thread running, one
 * process_madvise 34 us). Where the kernel refuses it (before 6.13 for
 * MADV_DONTNEED, before 6.14 for the process's own name: EINVAL, EBADF
 * or ENOSYS), or advises less than all of it, the runs left get a
 * madvise each, and the pool stops asking. System calls made, or
 * -errno.
 */
static int64_t release(struct vmcache *vc, const uint64_t *pid, unsigned n)
{
	struct iovec iov[BATCH_MAX];
	unsigned runs = 0;
	int64_t calls = 0;
	size_t done = 0;

	for (unsigned i = 0; i < n;) {
		unsigned j = i + 1;

		while (j < n && pid[j] == pid[j - 1] + 1)
			j++;
		iov[runs++] = (struct iovec){ .iov_base = vmcache_addr(vc, pid[i]),
					      .iov_len = (size_t)(j - i) << vc->page_shift };
		i = j;
	}
	if (LOAD_RLX(&vc->batch_advise)) {
		ssize_t got = syscall(SYS_process_madvise, PIDFD_SELF_PROCESS, iov, runs,
				      MADV_DONTNEED, 0);

		if (got < 0) {
			__atomic_store_n(&vc->batch_advise, false, __ATOMIC_RELAXED);
		} else {
			done = (size_t)got;
			calls++;
		}
	}
	for (unsigned r = 0; r < runs; r++) {
		if (done >= iov[r].iov_len) {
			done -= iov[r].iov_len;
			continue;
		}
		/* What the batched call did not advise, a run at a time. */
		if (madvise((uint8_t *)iov[r].iov_base + done, iov[r].iov_len - done,
			    MADV_DONTNEED) < 0)
			return -errno;
		done = 0;
		calls++;
	}
	return calls;
}

/*
 * One batch out: candidates from the clock, dirty ones written back,
 * all of them locked (those that were touched meanwhile stay), given
 * back to the kernel and removed from the resident set. 0 (perhaps
 * having evicted nothing, when every candidate was taken back), or the
 * first write-back's error (its page stays dirty and resident).
 */
static int evict_batch(struct vmcache *vc, const struct vmcache_io *io, struct pool_counters *c)
{
	uint64_t clean[BATCH_MAX], dirty[BATCH_MAX];
	unsigned nc, nd, n = 0;
	int64_t calls;
	int ret = 0;

	ret = collect(vc, io, clean, &nc, dirty, &nd);
	if (ret < 0)
		return ret;
	/* 1. Dirty pages written back, latched shared: readers may go on,
	 * no writer can change them meanwhile. */
	for (unsigned i = 0; i < nd && ret == 0; i++) {
		uint64_t *w = &vc->state[dirty[i]];

		__atomic_fetch_and(w, ~F_DIRTY, __ATOMIC_ACQ_REL);
		ret = io->write(io->arg, dirty[i], vmcache_addr(vc, dirty[i]));
		if (ret < 0)
			__atomic_fetch_or(w, F_DIRTY, __ATOMIC_RELAXED);
		else
			stat_add(&c->writebacks, 1);
	}
	if (ret < 0) {
		/* The batch is called off; the written ones stay, clean. */
		for (unsigned i = 0; i < nd; i++)
			vmcache_unpin(vc, dirty[i]);
		nd = nc = 0;
	}
	/* 2. The clean ones locked, if nobody touched them since marked. */
	for (unsigned i = 0; i < nc; i++) {
		uint64_t s = LOAD(&vc->state[clean[i]]);

		if (st_of(s) == MARKED && !(s & (F_DIRTY | F_XWANT)) &&
		    move(&vc->state[clean[i]], &s, same(s, LOCKED)))
			clean[n++] = clean[i];
	}
	/* 3. The written ones locked, if ours is their only latch. */
	for (unsigned i = 0; i < nd; i++) {
		uint64_t s = LOAD(&vc->state[dirty[i]]);

		if (st_of(s) == 1 && !(s & (F_DIRTY | F_XWANT)) &&
		    move(&vc->state[dirty[i]], &s, same(s, LOCKED)))
			clean[n++] = dirty[i];
		else
			vmcache_unpin(vc, dirty[i]);
	}
	/* 4. A page a reader has published was used: it stays. One fence
	 * for the whole batch (pool_pin.h). */
	if (n)
		pool_pin_fence(&vc->pins);
	nc = n;
	n = 0;
	for (unsigned i = 0; i < nc; i++) {
		if (pool_pin_published(&vc->pins, clean[i]))
			put(&vc->state[clean[i]], same, UNLOCKED);
		else
			clean[n++] = clean[i];
	}
	if (n == 0)
		return ret;
	/* 5. Out of memory, then out of the set, evicted. */
	qsort(clean, n, sizeof(clean[0]), cmp_u64);
	/* Every page here is clean or written back: evicting them is safe
	 * even if the kernel refused to take their memory, which fails the
	 * job (the pool would no longer be its size). */
	calls = release(vc, clean, n);
	if (calls < 0)
		ret = (int)calls;
	for (unsigned i = 0; i < n; i++) {
		rs_remove(vc, clean[i]);
		put(&vc->state[clean[i]], next, EVICTED);
	}
	__atomic_fetch_sub(&vc->used, n, __ATOMIC_RELEASE);
	stat_add(&c->evictions, n);
	stat_add(&c->evict_batches, 1);
	if (calls > 0)
		stat_add(&c->madvise_calls, (uint64_t)calls);
	return ret;
}

/* A place for one more resident page: taken when there is one, else
 * made by evicting a batch. */
static int reserve_page(struct vmcache *vc, const struct vmcache_io *io, struct pool_counters *c)
{
	for (;;) {
		uint64_t u = LOAD_RLX(&vc->used);

		if (u < vc->capacity) {
			if (__atomic_compare_exchange_n(&vc->used, &u, u + 1, false, __ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED))
				return 0;
			continue;
		}
		int ret = evict_batch(vc, io, c);

		if (ret < 0)
			return ret;
	}
}

/* ---- get ------------------------------------------------------------------ */

/* Page @pid, locked by this thread from evicted: read it in. */
static int load(struct vmcache *vc, uint64_t pid, enum vmcache_mode mode,
		const struct vmcache_io *io, struct pool_counters *c)
{
	uint64_t *w = &vc->state[pid];
	uint8_t *addr = vmcache_addr(vc, pid);
	int ret = reserve_page(vc, io, c);

	if (ret < 0) {
		put(w, next, EVICTED);
		return ret;
	}
	rs_insert(vc, pid);
	if (mode != VMCACHE_EXCL_NOREAD) {
		ret = io->read(io->arg, pid, addr);
		if (ret < 0) {
			/* Whatever part of it arrived goes too. */
			madvise(addr, vc->page, MADV_DONTNEED);
			rs_remove(vc, pid);
			__atomic_fetch_sub(&vc->used, 1, __ATOMIC_RELEASE);
			put(w, next, EVICTED);
			return ret;
		}
		stat_add(&c->reads, 1);
	}
	stat_add(&c->misses, 1);
	if (mode == VMCACHE_SHARED)
		put(w, next, 1);
	return 0;
}

int vmcache_get(struct vmcache *vc, uint64_t pid, enum vmcache_mode mode,
		const struct vmcache_io *io, struct pool_counters *c, uint8_t **data)
{
	uint64_t *w = &vc->state[pid];
	bool waited = false, mine = false;
	uint64_t s = LOAD(w);

	*data = vmcache_addr(vc, pid);
	for (;;) {
		const uint64_t st = st_of(s);

		if (st == EVICTED) {
			/* Ours to read in, unless a writer waits (XWANT). */
			if ((s & F_XWANT) && !mine)
				goto wait;
			if (!move(w, &s, same(s & ~F_XWANT, LOCKED)))
				continue;
			return load(vc, pid, mode, io, c);
		}
		if (st == LOCKED || ((s & F_XWANT) && !mine))
			goto wait;
		if (mode == VMCACHE_SHARED) {
			if (st == MAX_SHARED)
				goto wait;
			if (!move(w, &s, st == MARKED ? same(s, 1) : s + ST_ONE))
				continue;
		} else if (st == UNLOCKED || st == MARKED) {
			if (!move(w, &s, same(s & ~F_XWANT, LOCKED)))
				continue;
			/* Alone, but for published readers: they finish the
			 * request they hold it for and go (and new ones see
			 * the lock and step back). */
			if (pool_pin_wait(&vc->pins, pid, io->stop) < 0) {
				put(w, same, UNLOCKED);	/* unchanged: its version stays */
				return -ECANCELED;
			}
		} else if (!(s & F_XWANT)) {
			/* Readers inside: let no more in, wait for them. */
			if (move(w, &s, s | F_XWANT))
				mine = true;
			continue;
		} else {
			goto wait;
		}
		stat_add(&c->hits, 1);
		if (waited)
			stat_add(&c->waits, 1);
		return 0;
wait:
		if (vmcache_io_stopped(io)) {
			/* Stopping: the readers this writer held off may go. */
			if (mine && (__atomic_fetch_and(w, ~(F_XWANT | F_WAITERS), __ATOMIC_ACQ_REL) & F_WAITERS))
				wake_all(w);
			return -ECANCELED;
		}
		/* A load (or write, or eviction) by another thread. */
		if (st == LOCKED)
			waited = true;
		wait_change(w, s);
		s = LOAD(w);
	}
}

/* ---- flush ------------------------------------------------------------------ */

/* Write page @pid back if dirty: 1 written, 0 not dirty, or -errno. */
static int flush_page(struct vmcache *vc, uint64_t pid, const struct vmcache_io *io,
		      struct pool_counters *c)
{
	uint64_t *w = &vc->state[pid];
	uint64_t s = LOAD(w), old;
	int ret;

	for (;;) {
		const uint64_t st = st_of(s);

		if (!(s & F_DIRTY) || st == EVICTED)
			return 0;	/* clean, or its evictor wrote it back */
		if (st == LOCKED || st == MAX_SHARED || (s & F_XWANT)) {
			/* A writer: wait for it, then write what it wrote. */
			wait_change(w, s);
			s = LOAD(w);
			continue;
		}
		if (move(w, &s, st == MARKED ? same(s, 1) : s + ST_ONE))
			break;
	}
	/* Latched shared: nobody can change it. DIRTY first, so that a
	 * write after the latch is given back is not lost. */
	old = __atomic_fetch_and(w, ~F_DIRTY, __ATOMIC_ACQ_REL);
	ret = 0;
	if (old & F_DIRTY) {
		ret = io->write(io->arg, pid, vmcache_addr(vc, pid));
		if (ret < 0)
			__atomic_fetch_or(w, F_DIRTY, __ATOMIC_RELAXED);
		else {
			stat_add(&c->writebacks, 1);
			ret = 1;
		}
	}
	vmcache_unpin(vc, pid);
	return ret;
}

int64_t vmcache_flush_range(struct vmcache *vc, uint64_t lo, uint64_t hi,
			    const struct vmcache_io *io, struct pool_counters *c)
{
	int64_t written = 0;
	int ret;

	if (hi > vc->npages)
		hi = vc->npages;
	if (lo >= hi)
		return 0;
	/* The shorter walk: the range's state words, or the resident set. */
	if (hi - lo <= vc->rs_slots) {
		for (uint64_t pid = lo; pid < hi; pid++) {
			if (!(LOAD_RLX(&vc->state[pid]) & F_DIRTY))
				continue;
			ret = flush_page(vc, pid, io, c);
			if (ret < 0)
				return ret;
			written += ret;
		}
		return written;
	}
	for (uint64_t i = 0; i < vc->rs_slots; i++) {
		uint64_t pid = LOAD(&vc->resident[i]);

		if (pid >= RS_TOMB || pid < lo || pid >= hi ||
		    !(LOAD_RLX(&vc->state[pid]) & F_DIRTY))
			continue;
		ret = flush_page(vc, pid, io, c);
		if (ret < 0)
			return ret;
		written += ret;
	}
	return written;
}

/* ---- introspection ------------------------------------------------------- */

uint64_t vmcache_used(const struct vmcache *vc)
{
	return LOAD(&vc->used);
}

size_t vmcache_overhead(const struct vmcache *vc)
{
	return vc->state_len + vc->rs_len;
}

int vmcache_check(const struct vmcache *vc, struct err *e)
{
	uint64_t in_set = 0, resident = 0;

	for (uint64_t i = 0; i < vc->rs_slots; i++) {
		uint64_t pid = vc->resident[i], s;

		if (pid == RS_EMPTY || pid == RS_TOMB)
			continue;
		if (pid >= vc->npages)
			return err_set(e, EUCLEAN, "resident set slot %llu holds page %llu of %llu",
				       (unsigned long long)i, (unsigned long long)pid,
				       (unsigned long long)vc->npages);
		s = vc->state[pid];
		if (st_of(s) != UNLOCKED && st_of(s) != MARKED)
			return err_set(e, EUCLEAN, "resident page %llu has state %llu",
				       (unsigned long long)pid, (unsigned long long)st_of(s));
		in_set++;
	}
	for (uint64_t pid = 0; pid < vc->npages; pid++) {
		uint64_t s = vc->state[pid];

		if (s & (F_WAITERS | F_XWANT))
			return err_set(e, EUCLEAN, "page %llu: flags %#llx left behind",
				       (unsigned long long)pid, (unsigned long long)s);
		if (st_of(s) == EVICTED) {
			if (s & F_DIRTY)
				return err_set(e, EUCLEAN, "page %llu evicted dirty",
					       (unsigned long long)pid);
			continue;
		}
		if (st_of(s) != UNLOCKED && st_of(s) != MARKED)
			return err_set(e, EUCLEAN, "page %llu is latched (state %llu)",
				       (unsigned long long)pid, (unsigned long long)st_of(s));
		resident++;
	}
	if (pool_pin_check(&vc->pins, "vmcache", e) < 0)
		return -EUCLEAN;
	if (resident != in_set || resident != vc->used || resident > vc->capacity)
		return err_set(e, EUCLEAN, "%llu pages resident, %llu in the set, used %llu, "
			       "capacity %llu", (unsigned long long)resident,
			       (unsigned long long)in_set, (unsigned long long)vc->used,
			       (unsigned long long)vc->capacity);
	return 0;
}

/* ---- memory ------------------------------------------------------------------ */

static void *map_anon(size_t len, int extra)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The region: address space only (MAP_NORESERVE). Base pages as a rule:
 * a huge page would make a 4 KiB read resident as 2 MiB, and a 4 KiB
 * release would split it. But when @mem (the pool) holds the whole
 * region rounded up to huge pages, nothing is ever evicted and the
 * memory cannot pass the pool: then the region is aligned to 2 MiB and
 * advised MADV_HUGEPAGE (*@huge), so a hit costs no more TLB misses than
 * an mmap of a file the page cache holds in large folios (measured: with
 * base pages a thread made about 0.6x the warm hits per CPU-second that
 * an mmap thread made, with huge pages 0.99x; tests/bench/README.md).
 */
static void *map_region(size_t len, uint64_t mem, bool *huge)
{
	const size_t h = HUGE_2M, want = (len + h - 1) & ~(h - 1);
	uint8_t *p, *a;

	*huge = false;
	if (want <= mem && len >= h) {
		p = map_anon(want + h, MAP_NORESERVE);
		if (!p)
			return NULL;
		a = (uint8_t *)(((uintptr_t)p + h - 1) & ~(uintptr_t)(h - 1));
		if (a > p)
			munmap(p, (size_t)(a - p));
		if (a + want < p + want + h)
			munmap(a + want, (size_t)(p + want + h - (a + want)));
		if (madvise(a, want, MADV_HUGEPAGE) == 0) {
			*huge = true;
			return a;
		}
		munmap(a, want);
	}
	p = map_anon(len, MAP_NORESERVE);
	if (p && madvise(p, len, MADV_NOHUGEPAGE) < 0 && errno != EINVAL) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

int vmcache_create(struct vmcache **vcp, uint64_t npages, uint32_t page, uint64_t capacity,
		   unsigned batch, struct err *e)
{
	const long base = sysconf(_SC_PAGESIZE);
	struct vmcache *vc;
	uint64_t slots = 1;
	void *readers;

	if (!page || (page & (page - 1)) || (base > 0 && page < (uint64_t)base))
		return err_set(e, EINVAL, "vmcache: page size %u is not a power of two of at least "
			       "the base page (%ld bytes), which madvise gives back", page, base);
	if (!npages || npages > (SIZE_MAX >> 1) / page || !capacity)
		return err_set(e, EINVAL, "vmcache: %llu pages of %u bytes, %llu resident",
			       (unsigned long long)npages, page, (unsigned long long)capacity);
	if (capacity > npages)
		capacity = npages;
	if (batch > capacity / 2)
		batch = (unsigned)(capacity / 2);
	if (batch > BATCH_MAX)
		batch = BATCH_MAX;
	if (!batch)
		batch = 1;
	/* The set at two thirds full or less, as vmcache sizes it. */
	while (slots < capacity + capacity / 2 + 1)
		slots <<= 1;

	vc = aligned_alloc(64, sizeof(*vc));
	if (!vc)
		return err_set(e, ENOMEM, "vmcache: out of memory");
	memset(vc, 0, sizeof(*vc));
	vc->npages = npages;
	vc->page = page;
	vc->page_shift = (unsigned)__builtin_ctz(page);
	vc->capacity = capacity;
	vc->batch = batch;
	vc->rs_slots = slots;
	vc->batch_advise = true;
	vc->region_len = (size_t)npages << vc->page_shift;
	vc->region = map_region(vc->region_len, (uint64_t)capacity << vc->page_shift, &vc->huge);
	if (!vc->region)
		goto nomem;
	vc->state_len = (size_t)npages * sizeof(uint64_t);
	vc->state = map_anon(vc->state_len, MAP_POPULATE);
	if (!vc->state)
		goto nomem;
	for (uint64_t i = 0; i < npages; i++)
		vc->state[i] = EVICTED << ST_SHIFT;
	vc->rs_len = (size_t)slots * sizeof(uint64_t);
	vc->resident = map_anon(vc->rs_len, MAP_POPULATE);
	if (!vc->resident)
		goto nomem;
	memset(vc->resident, 0xff, vc->rs_len);
	vc->readers_len = POOL_PIN_READERS_MAX * sizeof(struct pool_reader);
	readers = map_anon(vc->readers_len, 0);
	if (!readers)
		goto nomem;
	pool_pin_init(&vc->pins, readers, POOL_PIN_READERS_MAX);
	*vcp = vc;
	return 0;
nomem: {
	int err = errno ? errno : ENOMEM;

	vmcache_destroy(vc);
	return err_set(e, err, "vmcache: mapping %llu pages of %u bytes: %s",
		       (unsigned long long)npages, page, strerror(err));
}
}

void vmcache_destroy(struct vmcache *vc)
{
	if (!vc)
		return;
	if (vc->region)
		munmap(vc->region, vc->huge ? (vc->region_len + HUGE_2M - 1) & ~(HUGE_2M - 1)
					    : vc->region_len);
	if (vc->state)
		munmap(vc->state, vc->state_len);
	if (vc->resident)
		munmap(vc->resident, vc->rs_len);
	if (vc->pins.readers)
		munmap(vc->pins.readers, vc->readers_len);
	free(vc);
}
