/*
 * latclock.h - the clock a synchronous loop reads once per request.
 *
 * At a million requests a second a request lasts under a microsecond,
 * and the vDSO's clock_gettime (17 ns here) alone would cost 2 % of it.
 * Where the kernel itself keeps time with the TSC (clocksource "tsc",
 * which it only picks when the counter is invariant and in step across
 * CPUs), the latency clock reads the TSC directly (8 ns) and converts
 * intervals to nanoseconds with a factor calibrated against
 * CLOCK_MONOTONIC at start-up; fio does the same (its clocksource=cpu).
 * Everywhere else, and until latclock_init() has run, ticks are
 * CLOCK_MONOTONIC nanoseconds.
 *
 * Ticks are only for intervals within one thread's loop: never compared
 * with now_ns() values.
 *
 * Also here: now_ns(), the CLOCK_MONOTONIC time every deadline, start
 * and sample is expressed in. A synchronous loop's request clock, which
 * ends one request and starts the next with a single read, is
 * run/reqclock.h.
 */
#ifndef FAULTLINE_LATCLOCK_H
#define FAULTLINE_LATCLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define LATCLOCK_HAVE_TSC 1
#else
#define LATCLOCK_HAVE_TSC 0
#endif

struct latclock {
	bool tsc;		/* ticks are TSC cycles */
	uint64_t ns_mult;	/* ns = ticks * ns_mult >> 32 */
	uint64_t tick_mult;	/* ticks = ns * tick_mult >> 32 */
};

extern struct latclock latclock;

/* Decide and calibrate (about 2 ms); once, before any worker starts.
 * FAULTLINE_LATCLOCK=monotonic forces the fallback. Returns the source's
 * name ("tsc" or "monotonic") for --debug output and tests. */
const char *latclock_init(void);

static inline uint64_t latclock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t latclock_ticks(void)
{
#if LATCLOCK_HAVE_TSC
	if (latclock.tsc)
		return __rdtsc();
#endif
	return latclock_mono_ns();
}

/* An interval in ticks as nanoseconds, rounded to nearest so that a sum
 * of many short intervals carries no bias. */
static inline uint64_t latclock_ns(uint64_t ticks)
{
	if (!latclock.tsc)
		return ticks;
	return (uint64_t)(((unsigned __int128)ticks * latclock.ns_mult + (1ull << 31)) >> 32);
}

/* Now, in CLOCK_MONOTONIC nanoseconds: the time of deadlines, starts and
 * samples, comparable across threads and processes. */
static inline uint64_t now_ns(void)
{
	return latclock_mono_ns();
}

/* An interval in nanoseconds as ticks, saturating. */
static inline uint64_t latclock_ticks_of(uint64_t ns)
{
	unsigned __int128 t;

	if (!latclock.tsc)
		return ns;
	t = ((unsigned __int128)ns * latclock.tick_mult) >> 32;
	return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
}

#endif
