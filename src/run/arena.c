/* arena.c - the run's counters in one shared mapping; see arena.h. */
#include "run/arena.h"

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>

int arena_create(struct arena *a, unsigned n)
{
	void *p;

	a->n = n;
	a->bytes = (size_t)(n ? n : 1) * sizeof(struct thread_stats) + CACHELINE;
	/* Shared, so a worker process forked for mem_limit writes counters
	 * the parent's sampler can read. */
	p = mmap(NULL, a->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	a->ts = p;
	a->bell = (uint32_t *)((char *)p + (size_t)(n ? n : 1) * sizeof(struct thread_stats));
	for (unsigned i = 0; i < n; i++) {
		hist_init(&a->ts[i].lat);
		hist_ring_attach(&a->ts[i].lat, &a->ts[i].lat_ring, n >= ARENA_RING_THREADS);
	}
	return 0;
}

void arena_destroy(struct arena *a)
{
	if (a->ts)
		munmap(a->ts, a->bytes);
	a->ts = NULL;
	a->bell = NULL;
	a->n = 0;
}

/* Not FUTEX_PRIVATE: worker processes (mem_limit, thread=0) ring it too. */
void arena_bell_ring(uint32_t *bell)
{
	if (!bell)
		return;
	__atomic_add_fetch(bell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

uint32_t arena_bell_seen(const uint32_t *bell)
{
	return bell ? __atomic_load_n(bell, __ATOMIC_ACQUIRE) : 0;
}

void arena_bell_wait(uint32_t *bell, uint32_t seen, uint64_t until_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(until_ns / 1000000000ull),
			       .tv_nsec = (long)(until_ns % 1000000000ull) };

	if (!bell) {
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		return;
	}
	/* FUTEX_WAIT_BITSET: an absolute CLOCK_MONOTONIC deadline. A ring
	 * since @seen returns at once (EAGAIN); a signal returns early,
	 * which the caller's loop takes as one more look. */
	syscall(SYS_futex, bell, FUTEX_WAIT_BITSET, seen, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}
