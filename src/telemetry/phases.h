/*
 * phases.h - the cache-full moment of a job and its two phases.
 *
 * The paper's figures are read at one moment: the page cache (a memory
 * cgroup's, or the host's) reaches its ceiling, eviction begins, and
 * throughput, latency and TLB shootdowns change together. Given a job's
 * per-interval rows, phases_detect finds that interval and sums each side
 * of it. Pure functions over an array, so the rule is tested on recorded
 * series; the sampler keeps the rows, the writers print the result.
 *
 * The rule (documented in the man page):
 *   - under mem_limit the cache is the job's cgroup, its ceiling the
 *     limit, and the moment is the first row whose cgroup usage is at
 *     least PHASES_FULL_PCT % of it: a cgroup at its limit must reclaim
 *     for every page it adds, so eviction has begun;
 *   - otherwise the cache is the host's page cache (Cached), whose
 *     ceiling is not known in advance: it is the highest value reached
 *     during the job, and the moment is the first row at least
 *     PHASES_FULL_PCT % of it in which, or in the row after it, eviction
 *     is seen (the caller's evidence: explain.c counts the target's own
 *     evicted pages, by cachestat, and the host's reclaim only without
 *     it). A job that saw no eviction of its own has no moment;
 *     without any eviction source the gauge alone decides.
 *   - "before" is the measured rows up to and including that row (the
 *     cache filling), "after" the measured rows following it; ramp_time
 *     rows count for the moment but in neither phase.
 */
#ifndef FAULTLINE_PHASES_H
#define FAULTLINE_PHASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A row whose gauge is within 5 % of the ceiling is "at" it: a cgroup's
 * usage settles a few pages under its limit and the host's page cache
 * wobbles by the other processes' churn. */
#define PHASES_FULL_PCT 95
/* Eviction may first be seen one interval after the gauge reached the
 * ceiling: the row boundary can fall between the two. */
#define PHASES_EVICT_LAG 1

/* One interval of a job, as its CSV row has it, in counts (not rates). */
struct phase_row {
	/* Its flags together: a row is kept for every interval of every
	 * job, written by the sampler while it runs. */
	bool ramp, lat_ok, tlb_ok, flt_ok, cache_ok, evict_ok, dev_ok, cpu_ok;
	double t_s, dt_s;		/* end of the interval (run clock) and length */
	uint64_t ops, bytes;		/* reads and bytes read */
	double lat_p50_us, lat_p99_us;
	uint64_t tlb;			/* TLB shootdown IPIs (system-wide) */
	uint64_t majflt;		/* the job's major faults */
	uint64_t cache_bytes;		/* the gauge: cgroup usage (mem_limit) or host Cached */
	uint64_t evicted;		/* pages seen evicted in the interval */
	uint64_t dev_bytes;		/* device bytes read */
	uint64_t cpu_ns;		/* the job's threads on a CPU */
};

struct phase_stats {
	bool ok;			/* the phase has measured rows */
	unsigned rows;
	double secs;
	double iops, mib_s;
	bool lat_ok;			/* medians over the rows' interval percentiles */
	double lat_p50_us, lat_p99_us;
	bool tlb_ok;
	double tlb_per_s;
	bool ipi_ok;			/* tlb_ok and major faults were counted, > 0 */
	double ipi_per_majflt;
	bool flt_ok;
	double majflt_per_s;
	bool amp_ok;
	double read_amp;		/* device bytes per byte read */
	bool cpu_ok;
	double cpu_us_per_4k;		/* CPU microseconds per 4 KiB read */
};

struct phases {
	bool found;
	const char *why;		/* when !found: a sentence for the reader */
	unsigned row;			/* index of the row of the moment */
	double t_s;			/* its end on the run clock, as its CSV t_s */
	double t_job_s;			/* ... and since the job's first row began */
	uint64_t ceiling_bytes;		/* the limit, or the highest gauge value */
	bool by_limit;			/* the ceiling was the cgroup's limit */
	bool by_gauge_only;		/* host: no eviction source, the gauge alone decided */
	struct phase_stats before, after;
};

/* @limit: the cgroup's limit in bytes (mem_limit), 0 for the host's cache. */
void phases_detect(const struct phase_row *rows, size_t n, uint64_t limit, struct phases *out);

/* The sums of rows [from, to), measured rows only. Also the whole job's
 * cost per page (from 0 to n). */
void phases_sum(const struct phase_row *rows, size_t from, size_t to, struct phase_stats *out);

#endif
