/*
 * psi.h - pressure stall information (Documentation/accounting/psi.rst):
 * the share of wall time in which some (or all) runnable tasks were
 * stalled waiting for memory or I/O.
 *
 * Each pressure file (/proc/pressure/memory, /proc/pressure/io, a cgroup
 * v2 memory.pressure) holds a "some" line and, for memory and io (and cpu
 * since 5.13), a "full" line, each with the running averages avg10,
 * avg60, avg300 and total=, the stall time in microseconds since boot.
 * faultline uses only total: the difference of two readings over the
 * wall time between them is the stall percent of exactly that interval,
 * where the averages would smear the interval into the last 10 s.
 *
 * Like procfs.h: the parser is a pure function on a buffer (fuzzed,
 * tested on recorded files), the source is opened once and re-read with
 * pread. Functions return 0 or -errno: -ENOENT when the file (the kernel
 * lacks CONFIG_PSI, or was booted psi=0) or a line does not exist,
 * -EBADMSG when the text is not in the kernel's format.
 */
#ifndef FAULTLINE_PSI_H
#define FAULTLINE_PSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "telemetry/procfs.h"

struct psi_totals {
	bool some_ok, full_ok;		/* the line was there */
	uint64_t some_us, full_us;	/* total= of each line */
};

/* Parse one pressure file's text. -EBADMSG unless at least "some" is
 * there and every line present is well formed. */
int psi_parse(const char *buf, size_t len, struct psi_totals *out);

/* Stall percent of wall time between two readings @dt_ns apart. */
/* When a reading was taken: CLOCK_MONOTONIC just before and just after
 * the read; the kernel's total is of some instant between the two. */
struct psi_span {
	uint64_t start_ns, end_ns;
};

/* The share of wall time, in %, stalled between two readings: over the
 * longest time they can span, so never above what the kernel counted. */
static inline double psi_pct(uint64_t before_us, uint64_t after_us,
			     const struct psi_span *before, const struct psi_span *after)
{
	uint64_t dt_ns = after->end_ns > before->start_ns ? after->end_ns - before->start_ns : 0;

	return dt_ns && after_us >= before_us ? (double)(after_us - before_us) * 1e5 / (double)dt_ns : 0;
}

/* Open <root>/<rel> ("pressure/memory" under /proc, or a cgroup's
 * "memory.pressure" under its directory) and read it with psi_read. */
int psi_open(struct procfs_src *src, const char *root, const char *rel);
int psi_read(struct procfs_src *src, struct psi_totals *out);

/* Why there is no system-wide PSI under @proc_root, or "" when it is
 * readable: for --check-system and the sampler's warning. */
void psi_why_absent(const char *proc_root, char *why, size_t cap);

#endif
