/*
 * pool_pin.h - what the two buffer pools (bufpool.c, vmcache.c) share
 * of their latching: pins published in a reader's own cache line, the
 * waits for them, and the futex and spin helpers of their slow paths.
 *
 * A reader is one thread's published pins, on a cache line of its own.
 * Slot i names the page (as its pool numbers it) that the thread's
 * request slot i reads, or holds POOL_PIN_EMPTY. A page named in any
 * reader's slot counts as latched shared: the pool's evictor leaves it
 * and a writer waits for it, as for the shared count in the page's latch
 * word. Publishing writes only the thread's own line, where a shared
 * latch in the word is a locked instruction on a line the other threads
 * read: with two threads hitting one pool, that line went back and forth
 * between their CPUs on every hit.
 *
 * The pin and an evictor or writer pass each other as in Dekker's
 * algorithm: the reader publishes (pool_pin_publish), then looks at the
 * page's word; the other locks the word, then looks at the readers
 * (pool_pin_fence, then pool_pin_published). Each side needs a full
 * fence between its store and its load, so that at least one of them
 * sees the other and steps back. By default the reader's is its store
 * (sequentially consistent: a locked exchange on x86). That fence makes
 * every hit wait for the loads of the hit before it: in a loop of random
 * warm hits the CPU could otherwise have several pages' lines on their
 * way at once, as it does for an mmap hit. A pool whose readers are made
 * light (pool_pin_light, for a job that never writes, where pages are
 * locked only to evict them) publishes with a plain store instead, and
 * the locker pays for both sides: pool_pin_fence is membarrier(2)
 * (MEMBARRIER_CMD_PRIVATE_EXPEDITED), which runs a full fence on every
 * CPU running one of the process's threads, so a reader's store is
 * either visible after it or the reader's load comes after the lock.
 * That costs one system call (about 1-3 us here, with an IPI per CPU
 * running another thread), once per batch of evictions in vmcache and
 * once per eviction in bufpool, against the reads of 100 us that make
 * the room needed; a write job keeps the fenced store, since each of its
 * writes would pay the call.
 *
 * The constants, one set for both pools:
 * - POOL_PIN_SLOTS 8: a slot is 64 bits (vmcache numbers more pages than
 *   32 bits hold) and a reader one cache line, so a writer's or the
 *   clock's look at the readers reads one line per thread. A request slot
 *   past the eighth (iodepth above 8) latches through the word instead:
 *   still correct, a little dearer.
 * - POOL_PIN_READERS_MAX 1024: one reader per thread of the job, 64 KiB
 *   at most; a thread that finds none left latches through the word. The
 *   scan reads only the readers handed out, so the bound costs memory,
 *   not time.
 * - UINT64_MAX as the empty slot: no pool numbers a page that high, so a
 *   slot holds the number itself and the hit path stores it as it is (0
 *   as empty would need a +1 there, an instruction on every hit); the
 *   readers are filled with it once, when the pool is made
 *   (pool_pin_init, 64 KiB at most).
 * - POOL_SPIN 256 pause loops before sleeping or yielding (a few
 *   microseconds: a writer's memcpy or a reader's touch of a page, far
 *   shorter than a device read).
 * - A futex sleep lasts at most POOL_WAIT_SLICE_NS (100 ms), so that a
 *   waiter looks at the run's and the job's stop flags at least that
 *   often and a stop always completes.
 *
 * Functions return 0 or -errno and never print.
 */
#ifndef FAULTLINE_POOL_PIN_H
#define FAULTLINE_POOL_PIN_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"

#define POOL_PIN_SLOTS		8
#define POOL_PIN_READERS_MAX	1024
#define POOL_PIN_EMPTY		UINT64_MAX
#define POOL_SPIN		256
#define POOL_WAIT_SLICE_NS	(100 * 1000 * 1000)

struct pool_reader {
	uint64_t slot[POOL_PIN_SLOTS];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct pool_reader) == 64, "a reader is a cache line");

/* A pool's readers: max of them at @readers, the first n handed out. */
struct pool_pins {
	struct pool_reader *readers;
	uint32_t max;
	uint32_t n;
	bool light;	/* readers publish with a plain store (pool_pin_light) */
};

static inline void pool_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Whether one of the two flags at @stop (a run's and a job's stop flags,
 * each NULL for none; @stop NULL: no flags) is set: a wait gives up then,
 * holding nothing. */
static inline bool pool_stopped(const int *const *stop)
{
	return stop && ((stop[0] && __atomic_load_n(stop[0], __ATOMIC_RELAXED)) ||
			(stop[1] && __atomic_load_n(stop[1], __ATOMIC_RELAXED)));
}

/* Publish page @v in request slot @hs of @rd, one of @pp's readers; the
 * caller then looks at the page's word (the reader's half of the
 * handshake: fenced here, or by the locker's pool_pin_fence when @pp's
 * readers are light). */
static inline void pool_pin_publish(const struct pool_pins *pp, struct pool_reader *rd,
				    unsigned hs, uint64_t v)
{
	if (__builtin_expect(pp->light, 1)) {
		__atomic_store_n(&rd->slot[hs], v, __ATOMIC_RELAXED);
		/* Only the compiler is held: the store is before the load
		 * in the program, which is what the locker's fence needs. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	} else {
		__atomic_store_n(&rd->slot[hs], v, __ATOMIC_SEQ_CST);
	}
}

/* Give back what slot @hs of @rd published. */
static inline void pool_pin_clear(struct pool_reader *rd, unsigned hs)
{
	__atomic_store_n(&rd->slot[hs], POOL_PIN_EMPTY, __ATOMIC_RELEASE);
}

/* @max readers at @mem (max * sizeof(struct pool_reader) bytes, cache
 * line aligned), every slot empty, none handed out. */
void pool_pin_init(struct pool_pins *pp, void *mem, uint32_t max);

/* Make @pp's readers light (above): 0, or -errno when the kernel will
 * not run membarrier(2) for the process (the readers stay fenced). Call
 * it before any thread publishes, and only for a pool whose pages are
 * locked seldom. */
int pool_pin_light(struct pool_pins *pp);

/* The locker's half of the handshake, between locking page words and
 * looking at the readers (pool_pin_published): nothing when the readers
 * fence their own stores, else membarrier(2), one call for every word
 * locked before it. */
void pool_pin_fence(const struct pool_pins *pp);

/* A reader for one thread, or NULL when all are taken (that thread's
 * latches then go to the pages' words). Readers last as long as the pool. */
struct pool_reader *pool_pin_reader_new(struct pool_pins *pp);

/* Whether a reader has page @v published. Called by the thread that has
 * locked @v's word (sequentially consistent) and then called
 * pool_pin_fence, so a pin published before that lock is seen here, and
 * one published after sees the lock and is taken back. */
bool pool_pin_published(const struct pool_pins *pp, uint64_t v);

/* Page @v, locked by this thread to change it (pool_pin_fence is
 * called here): wait until no reader has it published (each holds it for one request: spin, then let the holder
 * run). 0, or -ECANCELED when one of @stop was set meanwhile. */
int pool_pin_wait(const struct pool_pins *pp, uint64_t v, const int *const *stop);

/* For tests, with no other thread in the pool: nothing published; 0 or
 * -EUCLEAN with @e naming the reader and slot (@who: the pool). */
int pool_pin_check(const struct pool_pins *pp, const char *who, struct err *e);

/* The slow paths' sleep on a 32-bit futex @word while it holds @val, for
 * one slice at most (the caller looks at its stop flags and the word
 * again), and the wake of every sleeper. The pools live in one process
 * (thread=0 with several workers is refused for them), so private
 * futexes. */
void pool_futex_wait(uint32_t *word, uint32_t val);
void pool_futex_wake_all(uint32_t *word);

#endif
