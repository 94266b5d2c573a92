/*
 * probe.h - the queue depth the verdict gives io_uring O_DIRECT: a
 * short probe of the target's device, random 4 KiB O_DIRECT reads
 * through one ring at depths 1, 2, 4 ... PROBE_DEPTH_MAX, taking the
 * smallest depth within PROBE_NEAR of the best rate, as a database sizes
 * its outstanding reads to what the device can overlap.
 */
#ifndef FAULTLINE_PROBE_H
#define FAULTLINE_PROBE_H

#include <stddef.h>
#include <stdint.h>

/* When the probe cannot run (no io_uring, no O_DIRECT): fio's and the
 * paper's usual depth. */
#define VERDICT_DEPTH_DEFAULT 32
#define PROBE_DEPTH_MAX 256

struct depth_probe {
	unsigned depth;				/* chosen */
	unsigned n;				/* depths tried */
	unsigned depths[16];
	double iops[16];			/* measured at each */
	double seconds;				/* the probe's own time */
};

/* Probe @path's first @size bytes (at least a MiB). 0 with @p filled, or
 * -errno with @why saying why (then @p->depth is VERDICT_DEPTH_DEFAULT). */
int verdict_depth_probe(const char *path, uint64_t size, struct depth_probe *p, char *why,
			size_t whylen);

/* The rule, pure: the smallest of @n depths whose rate is within
 * PROBE_NEAR of the best. */
unsigned verdict_depth_pick(const unsigned *depths, const double *iops, unsigned n);

#endif
