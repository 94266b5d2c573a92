/*
 * arena.h - the run's counters in one shared mapping: every worker's
 * struct thread_stats (lib/stats.h) side by side, made before any worker
 * starts, so that workers in a child process (mem_limit, thread=0)
 * publish them to the controller and the sampler exactly as threads do,
 * and the bell a worker rings when its timed part ends. Only run/ makes
 * and frees one; the sampler reads the counters it holds.
 */
#ifndef FAULTLINE_ARENA_H
#define FAULTLINE_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "lib/stats.h"

struct arena {
	unsigned n;
	size_t bytes;
	struct thread_stats *ts;	/* n entries, MAP_SHARED|MAP_ANONYMOUS */
	uint32_t *bell;			/* after them, on a line of its own */
};

/*
 * The arena's bell, a futex word in the shared mapping: a worker thread
 * or process rings it when its timed part ends, and the run controller,
 * waiting on it between samples, sees the end at once rather than at its
 * next poll. So a job's last row, and the host-wide readings it divides
 * by its dt_s, end where its work did (one window per figure).
 * arena_bell_seen before looking at what the workers did; then
 * arena_bell_wait returns at @until_ns (CLOCK_MONOTONIC) or as soon as a
 * ring came after that look, whichever is first.
 */
void arena_bell_ring(uint32_t *bell);
uint32_t arena_bell_seen(const uint32_t *bell);
void arena_bell_wait(uint32_t *bell, uint32_t seen, uint64_t until_ns);

/* @n threads' counters. Their latencies go through rings
 * (hist_ring_attach) only from ARENA_RING_THREADS threads on: that is
 * where the sampler's reading of whole histograms weighed (some 3 us a
 * thread, 6 ms a sample at 2000); below, a fast worker would spill
 * nearly every request into a second histogram for nothing (the null
 * engine ran 12 % slower with rings). */
#define ARENA_RING_THREADS 64
int arena_create(struct arena *a, unsigned n);
void arena_destroy(struct arena *a);

#endif
