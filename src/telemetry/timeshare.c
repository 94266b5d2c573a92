/*
 * timeshare.c - a job's threads' time split into shares (timeshare.h
 * says how the kernel's nested delays are taken apart).
 */
#include <string.h>

#include "telemetry/timeshare.h"

const char *const timeshare_names[TIMESHARE_NPARTS] = {
	"cpu", "runq", "blkio", "reclaim", "thrash", "compact", "swapin", "other",
};

const char *const timeshare_words[TIMESHARE_NPARTS] = {
	"on CPU", "waiting for a CPU", "waiting for the device", "reclaim", "thrashing",
	"compaction", "swap-in", "sleeping otherwise",
};

/* Take up to @want out of *@from; what could not be taken. */
static uint64_t take(uint64_t *from, uint64_t want)
{
	uint64_t t = want < *from ? want : *from;

	*from -= t;
	return want - t;
}

bool timeshare_split(const struct timeshare_ns *in, uint64_t window_ns, unsigned tenths[TIMESHARE_NPARTS])
{
	uint64_t p[TIMESHARE_NPARTS];
	double sum = 0, scale = 1;
	unsigned used = 0;

	memset(tenths, 0, sizeof(unsigned) * TIMESHARE_NPARTS);
	if (!window_ns)
		return false;
	memcpy(p, in->ns, sizeof(p));
	p[TIMESHARE_OTHER] = 0;
	/* Waits for a page's read are block-I/O waits too. */
	take(&p[TIMESHARE_BLKIO], p[TIMESHARE_THRASH]);
	take(&p[TIMESHARE_BLKIO], p[TIMESHARE_SWAPIN]);
	/* Reclaim and compaction: the task's own work, then its waits. */
	{
		uint64_t left = p[TIMESHARE_RECLAIM] + p[TIMESHARE_COMPACT];

		left = take(&p[TIMESHARE_CPU], left);
		left = take(&p[TIMESHARE_RUNQ], left);
		take(&p[TIMESHARE_BLKIO], left);
	}
	for (unsigned k = 0; k < TIMESHARE_OTHER; k++)
		sum += (double)p[k];
	if (sum > (double)window_ns)
		scale = (double)window_ns / sum;
	for (unsigned k = 0; k < TIMESHARE_OTHER; k++) {
		double t = (double)p[k] * scale * 1000.0 / (double)window_ns;

		tenths[k] = t >= 1000.0 ? 1000 : (unsigned)t;
		if (used + tenths[k] > 1000)
			tenths[k] = 1000 - used;
		used += tenths[k];
	}
	tenths[TIMESHARE_OTHER] = 1000 - used;
	return true;
}

void timeshare_add(struct timeshare_ns *a, const struct timeshare_ns *b)
{
	for (unsigned k = 0; k < TIMESHARE_NPARTS; k++)
		a->ns[k] += b->ns[k];
}
