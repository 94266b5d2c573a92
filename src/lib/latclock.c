/*
 * latclock.c - deciding and calibrating the latency clock (latclock.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "lib/latclock.h"

#if LATCLOCK_HAVE_TSC
#include <cpuid.h>
#endif

struct latclock latclock;

/* Calibration window: the error is the clock reads' jitter (tens of ns)
 * over this, a few parts in 10^5; the histogram's buckets are 1 %. */
#define CALIBRATE_NS	2000000ull

#if LATCLOCK_HAVE_TSC
/* The kernel keeps time with the TSC only once it has found it invariant
 * and synchronised across CPUs; that is the test. */
static bool kernel_trusts_tsc(void)
{
	char buf[64];
	unsigned a, b, c, d;

	ssize_t n;
	int fd;

	/* The real /sys, not FAULTLINE_SYS: this is the clock we run on. */
	fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 3 || strncmp(buf, "tsc", 3) || (n > 3 && buf[3] != '\n'))
		return false;
	/* Invariant TSC: CPUID 0x80000007, EDX bit 8. */
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d))
		return false;
	return d & (1u << 8);
}

/* One (TSC, ns) pair: the clock read between two TSC reads, the TSC taken
 * as their midpoint; the narrowest of a few tries. */
static void pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t t0 = __rdtsc(), n = latclock_mono_ns(), t1 = __rdtsc();

		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}
#endif

const char *latclock_init(void)
{
#if LATCLOCK_HAVE_TSC
	const char *force = getenv("FAULTLINE_LATCLOCK");
	uint64_t tsc0, ns0, tsc1, ns1;
	struct timespec ts = { 0, (long)CALIBRATE_NS };

	latclock.tsc = false;
	if ((force && !strcmp(force, "monotonic")) || !kernel_trusts_tsc())
		return "monotonic";
	pair(&tsc0, &ns0);
	nanosleep(&ts, NULL);
	pair(&tsc1, &ns1);
	if (tsc1 <= tsc0 || ns1 - ns0 < CALIBRATE_NS / 2)
		return "monotonic";
	latclock.ns_mult = (uint64_t)(((unsigned __int128)(ns1 - ns0) << 32) / (tsc1 - tsc0));
	latclock.tick_mult = (uint64_t)(((unsigned __int128)(tsc1 - tsc0) << 32) / (ns1 - ns0));
	if (!latclock.ns_mult || !latclock.tick_mult)
		return "monotonic";
	latclock.tsc = true;
	return "tsc";
#else
	latclock.tsc = false;
	return "monotonic";
#endif
}
