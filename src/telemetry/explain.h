/*
 * explain.h - the numbers that explain a run, per job and
 * interval: how much of its targets sits in the page cache (cachestat,
 * or mincore on older kernels), memory and I/O pressure (PSI, host-wide
 * and of its mem_limit cgroup on cgroup v2), device bytes and CPU time
 * per byte it read, and at its end the cache-full moment with the phases
 * before and after it (phases.h) and its cost per page.
 *
 * The sampler (sample/samplerow.c) hands each interval's counts in; this
 * module owns the sources it adds, works out the row's figures (the
 * sampler's column table formats them) and keeps the rows phases_detect
 * reads at the end. It never sees the sampler: what it needs comes in
 * struct explain_in. It prints nothing: what could not be read is said
 * in the why strings the sampler hands to out/explain_out.c.
 */
#ifndef FAULTLINE_EXPLAIN_H
#define FAULTLINE_EXPLAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"
#include "telemetry/cgroup.h"
#include "telemetry/phases.h"
#include "telemetry/procfs.h"
#include "telemetry/psi.h"
#include "telemetry/residency.h"
#include "engines/target.h"

/* The figures this module adds to each row, in the CSV's order (the
 * sampler's column table names and formats them). */
enum explain_fig {
	EXPLAIN_TARGET_CACHED,		/* MiB of the targets in the page cache */
	EXPLAIN_TARGET_EVICTED,		/* MiB evicted (cachestat's shadow entries) */
	EXPLAIN_TARGET_RECENT,		/* ... of them evicted recently */
	EXPLAIN_REFAULT,		/* host workingset refaults per second */
	EXPLAIN_PSI_MEM_SOME,		/* host pressure, percent of the row */
	EXPLAIN_PSI_MEM_FULL,
	EXPLAIN_PSI_IO_SOME,
	EXPLAIN_PSI_IO_FULL,
	EXPLAIN_CG_SOME,		/* the job's mem_limit cgroup's memory pressure */
	EXPLAIN_CG_FULL,
	EXPLAIN_READ_AMP,		/* device bytes read per byte the job read */
	EXPLAIN_CPU_PER_4K,		/* the workers' CPU microseconds per 4 KiB read */
	EXPLAIN_NFIGS
};

/* One row's figures: ok[k] false leaves its cell empty. */
struct explain_figs {
	bool ok[EXPLAIN_NFIGS];
	double v[EXPLAIN_NFIGS];
};

/* What explains the job's numbers (explain.c): its targets' page-cache
 * residency at its last row, its cost per page over the measured part,
 * and the cache-full moment with the phases around it. */
struct explain_result {
	bool res_ok;			/* residency read at the last row */
	bool res_full;			/* cachestat: dirty..recently_evicted known */
	const char *res_method;		/* "cachestat", "mincore" */
	uint64_t page_size;
	uint64_t cached, dirty, writeback, evicted, recently_evicted;	/* pages */
	struct phase_stats cost;	/* the whole measured part */
	bool cgroup;			/* the cache gauge was its mem_limit cgroup */
	struct phases phases;
};

/* Host-wide pressure at one sample (the sampler's snapshot holds one). */
struct explain_sys {
	/* CLOCK_MONOTONIC just before and just after each file's read: a
	 * stall percent is over the longest time two readings of one file
	 * can span (the first's start to the second's end), so a reader
	 * held up around a read cannot make a share over 100 %; and each
	 * file has its own stamps, so one file's delay is not lent to the
	 * other. */
	struct psi_span mem_at, io_at;
	bool mem_ok, io_ok;
	struct psi_totals mem, io;
};

/* The host's PSI files, opened once. @why: a warning for the caller to
 * give (once: the caller empties it), "" when none. */
struct explain_host {
	struct procfs_src mem, io;
	bool warned;
	char why[PROCFS_WHY_MAX + 128];
};

void explain_host_open(struct explain_host *h, const char *proc_root);
void explain_host_read(struct explain_host *h, struct explain_sys *out);
void explain_host_close(struct explain_host *h);

/* One interval of a job, as the sampler counted it. */
struct explain_in {
	double t_s, dt_s;
	bool ramp;
	uint64_t rops, rbytes;		/* reads */
	bool lat_ok;
	double lat_p50_us, lat_p99_us;
	bool tlb_ok;
	uint64_t tlb;
	bool flt_ok;
	uint64_t majflt;
	bool steal_ok;
	uint64_t pgsteal;		/* all reclaim, host-wide */
	bool refault_ok;
	uint64_t refaults;		/* workingset_refault_file, host-wide */
	bool host_cache_ok;
	uint64_t host_cached;		/* /proc/meminfo Cached, bytes */
	bool cg_ok;
	uint64_t cg_bytes;		/* mem_limit cgroup usage */
	bool dev_ok;
	uint64_t dev_bytes;		/* device bytes read */
	bool cpu_ok;
	uint64_t cpu_ns;		/* the job's workers on a CPU */
	bool last_row;			/* the job's last: its targets' residency read whatever
					 * their every, for its result */
	const struct explain_sys *sys, *prev_sys;
};

struct explain_job {
	/* What every row reads and writes first, packed: at thousands of
	 * jobs a row's time is its first loads of cold lines. */
	uint64_t limit;			/* mem_limit bytes, 0 = the host's cache */
	const char *bypass;		/* why the job's reads fill no cache (direct=1,
					 * uncached=1): it has no cache-full moment */
	struct residency_set *set;	/* the sampler's, shared by every job */
	unsigned *res;			/* one region of @set per target */
	unsigned nres;
	unsigned res_one;		/* @res of a job of one target: no line apart */
	bool res_ok;			/* every target's residency could be read */
	bool last_ok;
	bool warned;
	bool cg_psi_open, cg_last_ok;
	struct phase_row *rows;
	size_t nrows, cap;
	struct residency last;		/* summed over targets, at the last row */
	/* Read only under mem_limit, or when there is something to say. */
	struct psi_totals cg_last;
	struct psi_span cg_last_at;
	struct procfs_src cg_psi;	/* cgroup v2 memory.pressure */
	char cg_why[160];		/* why its cells are empty */
	char why[PROCFS_WHY_MAX + 128];	/* a warning for the caller to give, "" when none */
	char note[PROCFS_WHY_MAX + 256];	/* ... and a note (a target's residency read less often) */
};

/* The job's target regions, added to @set (shared with the other jobs,
 * read once per sample: residency_set_next). 0 or -ENOMEM; a target
 * whose residency cannot be read leaves the cells empty (warned once
 * per region). */
int explain_job_init(struct explain_job *x, const struct job *job, const struct target *t, unsigned n,
		     struct residency_set *set);
/* Room for @rows rows, allocated and touched now, so the rows of a run
 * of the planned length allocate nothing while it runs. 0 or -ENOMEM. */
int explain_job_reserve(struct explain_job *x, size_t rows);
/* The job's cgroup now exists (@cg) or is gone (NULL). */
void explain_job_cgroup(struct explain_job *x, const struct cgroup *cg);
/* The job's figures of one interval into @out; the row is kept for
 * phases_detect. */
void explain_row(struct explain_job *x, const struct explain_in *in, struct explain_figs *out);
/* Residency at the last row, cost per page and phases into @res. */
void explain_result(struct explain_job *x, struct explain_result *e);
void explain_job_free(struct explain_job *x);

#endif
