/*
 * results.h - what a run produced, in the form the writers (summary,
 * JSON) read. Filled by the run controller (run.c) from the workers'
 * counters and the sampler's telemetry; writers never reach back into
 * workers.
 *
 * Every telemetry figure has an _ok flag: false means the source could
 * not be read, and writers print nothing (JSON null), never a zero.
 */
#ifndef FAULTLINE_RESULTS_H
#define FAULTLINE_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/fiostat.h"
#include "lib/histogram.h"
#include "job/job.h"
#include "out/outjob.h"
#include "lib/stats.h"
#include "telemetry/perfev.h"
#include "telemetry/explain.h"
#include "telemetry/phases.h"
#include "telemetry/timeshare.h"
#include "telemetry/wbtrace.h"

#define RESULT_MAX_DEVS 16

/* A block device a job's targets reach, with the traffic it saw while
 * the job ran (all traffic on the device, not only the job's). */
struct dev_result {
	char name[64];		/* "vda", "md0", "nvme0n1" */
	char role[16];		/* "disk", "partition", "md", "md-member", "loop" */
	bool ok;		/* its stat file was readable */
	uint64_t read_bytes;
	uint64_t read_ios;
	uint64_t write_bytes;
	uint64_t write_ios;
	/* What sysfs says of it (of its whole disk for a partition); empty
	 * strings and -1/0 where sysfs does not say. */
	char model[64];
	char scheduler[32];
	int rotational;		/* 1, 0, -1 unknown */
	uint64_t size_bytes;
	char md_level[16];	/* "" unless an md array (or a partition of one) */
	uint64_t md_chunk_bytes;
	unsigned md_raid_disks;
};

/* One target of a job, as opened. */
struct target_result {
	char path[256];
	bool is_blkdev;
	uint64_t base, len;
	bool sparse;
	char device[64];	/* resolved device ("vda2 on vda"), "" if none */
};

/* A loop's stream (loop=N): its region and what it read. */
struct stream_result {
	unsigned target;		/* index into job_result.targets */
	uint64_t base, len;
	uint64_t ops, bytes;		/* measured part, as the job's */
};

/* A job's writes, flushes and read-back, measured part only. */
struct write_result {
	uint64_t ops, bytes;		/* writes */
	struct hist lat;		/* ns, merged over threads (valid with job_result.lat_ok) */
	uint64_t syncs;			/* flushes: fsync, fdatasync, msync, end_fsync's */
	struct hist sync_lat;
	uint64_t trims, trim_bytes;	/* fio's trims (rw=trim...) */
	struct hist trim_lat;
	/* verify=crc32c: every block the job wrote, read back at its end. */
	bool verify;
	bool verify_complete;		/* every worker read all its blocks back */
	uint64_t verify_blocks, verify_bad;
	unsigned verify_first_target;	/* the first bad block (lowest target, offset) */
	uint64_t verify_first_off;
	int verify_first_code;		/* blockdata_check's answer for it */
};

/* Who wrote a write job's data to the device (wbtrace.h). */
enum wb_state {
	WB_NONE,		/* a read job */
	WB_BY_CONSTRUCTION,	/* O_DIRECT or a pool: no page cache, the kernel's share is 0 */
	WB_TRACED,		/* counted from tracepoints: c */
	WB_UNREAD,		/* a job the kernel may write for, and no source: why */
};

struct wb_result {
	enum wb_state state;
	char why[256];			/* UNREAD: why; BY_CONSTRUCTION: how */
	struct wbtrace_counts c;	/* TRACED: over the measured part */
	char age_why[160];		/* TRACED without ages: why */
};

/*
 * fio's run control (run/runctl.h, run.c): what ended a job early, its
 * steady state, the queue depth latency_target found.
 */
struct runctl_result {
	bool ran;			/* false: exit_what=all ended the run before its group */
	const char *stopped_by;		/* NULL (it ended by itself), "exitall", "steadystate" */
	char stopped_by_job[JOB_NAME_MAX];	/* exitall: the job whose end it was */
	/* steadystate: with ss_dur */
	bool ss;
	bool ss_attained;
	double ss_criterion, ss_slope, ss_deviation;	/* the last judgement */
	unsigned ss_n;			/* samples in the window (fewer: never full) */
	uint64_t *ss_iops, *ss_bw, *ss_lat;	/* ss_n each, in time order; bytes/s, ns */
	/* latency_target: the depth the search ended at (0: none) */
	unsigned lat_depth;
};

struct job_result {
	struct out_job job;		/* its options, as the writers read them */
	/* The job itself, for fio's "job options" (what the user wrote, its
	 * src) and the resolved option list (the option table formats struct
	 * job): json_fio_job_options and json_fio_job_resolved only. */
	const struct job *options;
	struct runctl_result rc;
	unsigned nthreads;
	unsigned batch;			/* iodepth_batch_submit as resolved */

	/* Reads, measured part only: ramp_time excluded (writes: wr). */
	uint64_t rops;
	uint64_t rbytes;
	uint64_t runtime_ns;
	bool lat_ok;			/* latency=1 */
	struct hist lat;		/* ns, merged over threads */

	/* Had not stopped within the grace period after the run was asked
	 * to stop (run/stuck.h): given up, errmsg says what it was doing;
	 * how many of its processes were killed. */
	bool stuck;
	unsigned stuck_killed;
	int error;			/* 0, or a positive errno */
	char errmsg[512];		/* "target /x offset 123: SIGBUS ...", "" */
	/* continue_on_error: errors counted and gone on after (fio's
	 * total_err), the first one's errno (first_error) and place. */
	uint64_t io_errors;
	int first_error;
	char first_error_at[300];	/* "/x offset 123", "" */
	/* error_dump: each error kept (STATS_ERR_KEEP a thread), as
	 * "read /x offset 123: Input/output error"; NULL when none. */
	char (*dumped)[360];
	unsigned ndumped;

	bool faults_ok;
	uint64_t majflt, minflt;	/* the job's own threads */

	unsigned ntargets;
	struct target_result *targets;

	unsigned ndevs;
	struct dev_result devs[RESULT_MAX_DEVS];
	bool dev_ok;
	uint64_t dev_read_bytes;	/* over the job's devices (md members not double counted) */
	double read_amp;		/* dev_read_bytes / bytes; valid when dev_ok && bytes */
	uint64_t dev_write_bytes, dev_write_ios;	/* the same for writes */

	/* The write side, for a job that writes; NULL for a read job. */
	struct write_result *w;

	bool probe_ok;			/* cpu_probe=1 */
	double probe_per_s;

	/* Concurrency models and prefetch. */
	unsigned nstreams;		/* loop=N: N, else 0 */
	struct stream_result *streams;
	unsigned offload_helpers, prefetch_helpers;
	bool helper_faults_ok;		/* every helper's faults were readable */
	uint64_t helper_majflt, helper_minflt;
	bool sleeps_ok;
	uint64_t reader_sleeps;		/* voluntary context switches of the workers */
	bool sched_ok;
	uint64_t reader_cpu_ns;		/* the workers' time on a CPU */
	uint64_t reader_blocked_ns;	/* ... and asleep: wall - on CPU - waiting for one */
	uint64_t prefetch_reqs, prefetch_bytes, prefetch_skipped;

	/* ioengine=bufpool: the pool's counters over the measured
	 * part, summed over the workers. pool_ok: the engine has a pool. */
	bool pool_ok;
	/* ioengine=vmcache: evictions go in batches given back with madvise
	 * (pool.evict_batches and pool.madvise_calls count). */
	bool pool_batches_ok;
	struct pool_counters pool;
	/* Kernel counters of the job's own tasks over the measured part
	 * (perfev.h); why they could not be opened for this job,
	 * or "". What the host does not offer at all: run_result.events. */
	struct perfev_values events;
	char events_why[PERFEV_WHY_MAX];
	struct explain_result x;
	struct wb_result wb;
	/* delayacct=1: where the workers' time went over the measured rows
	 * that have time_* cells (sample/samplertime.c): what the kernel
	 * counted (ns; OTHER unused), the window they are shares of
	 * (workers x seconds, ns) and the shares in tenths of a percent.
	 * time_why: why not (time_ok false), "" when the job did not ask. */
	bool time_ok;
	struct timeshare_ns time_ns;
	uint64_t time_window_ns;
	unsigned time_tenths[TIMESHARE_NPARTS];
	unsigned time_every;		/* read over one interval in this many */
	unsigned time_threads;		/* the workers whose time it is */
	char time_why[160];
	/* fio's per-job figures. The job's threads are its workers
	 * and helpers, not the cpu probe; their CPU time and context
	 * switches cover each thread's whole loop, ramp_time included. */
	uint64_t thread_ns;		/* the workers' measured time, summed: fio's job_runtime */
	bool cpu_ok;			/* every thread's usage was read */
	uint64_t cpu_thread_ns;		/* run time of the threads whose CPU is counted, summed */
	uint64_t usr_ns, sys_ns;	/* their user and system CPU time */
	uint64_t ctx;			/* their voluntary + involuntary context switches */
	/* iodepth distributions of the measured part; a synchronous job
	 * (every request alone, at depth 1) is counted as such. */
	struct fiostat_depth depth;
	/* fio's per-interval statistics of each direction, one sample per
	 * measured sampler interval that moved anything in it (samplerow.c). */
	struct fiostat_series read_iops;	/* requests per second */
	struct fiostat_series read_bw;		/* KiB per second */
	struct fiostat_series write_iops, write_bw;	/* the same of the writes */
};

struct sys_result {
	bool tlb_ok;
	uint64_t tlb_total;		/* shootdowns during the run */
	double tlb_peak_per_s;		/* highest interval rate */
	bool kswapd_ok;
	double kswapd_cpu_s;		/* summed over kswapd threads */
	bool vm_ok;
	uint64_t pgscan_kswapd, pgscan_direct, pgsteal_kswapd, pgsteal_direct;
	uint64_t pgmajfault;
	/* Every reclaim, cgroup reclaim included (pgscan/pgsteal_anon+file,
	 * Linux 5.8+); the kswapd/direct pair above excludes cgroup reclaim. */
	bool pgscan_all_ok;
	uint64_t pgscan_all, pgsteal_all;
	bool cache_ok;
	uint64_t cache_start, cache_end;	/* bytes, /proc/meminfo Cached */
};

/*
 * What sampling cost the sampler itself: each sample's time
 * (one interval boundary: every job's counters, the host's files, the
 * devices, the target regions, every thread's task files, every job's
 * kernel counters, the rows), and how long after the boundary the last
 * job's counters were read: a row's counts end there, not at its t_s.
 */
struct sampler_result {
	uint64_t samples;
	double p50_ms, p99_ms, max_ms, mean_ms;
	double skew_max_ms;
	/* The same samples as the sampling thread's CPU time, and how many
	 * had it switched out: taken from it (another task, or a higher
	 * priority), or waiting (a lock, a page fault's I/O). */
	double cpu_p50_ms, cpu_max_ms;
	uint64_t preempted, blocked;
	/* The sampling thread's scheduling: "SCHED_FIFO 1", or where that
	 * is not permitted "SCHED_OTHER nice N" (run.c says why). */
	char policy[32];
	unsigned over_quarter;		/* samples longer than a quarter interval */
	unsigned retaken;		/* counter passes held up and taken again */
	/* delayacct=1: the taskstats queries the samples made (one per
	 * thread read) and their time, ns. */
	uint64_t delay_queries, delay_query_ns;
	/* Each job's kernel counters read over one interval in
	 * counters_every; the reads the samples made and their time, ns. */
	unsigned counters_every;
	uint64_t counter_reads, counter_read_ns;
};

struct host_result {
	char hostname[256];
	char kernel[256];		/* uname -sr plus machine */
	unsigned ncpus;
	unsigned numa_nodes;
	uint64_t mem_total;		/* bytes */
};

struct run_result {
	const char *version;
	/* fio's "global options": what the [global] sections said (job.h). */
	unsigned nglobals;
	const struct job_opt *globals;
	uint64_t interval_ns;		/* the sampling period */
	uint64_t start_epoch_ms;
	uint64_t duration_ns;
	bool interrupted;		/* Ctrl-C / SIGTERM */
	int csv_error;			/* errno that cut the CSV short, 0 = whole */
	unsigned njobs;
	struct job_result *jobs;
	struct sys_result sys;
	struct sampler_result sampler;
	struct host_result host;
	/* The per-job counters this host offers, and why not the others
	 * (NULL: never probed). */
	const struct perfev_plan *events;
};

/* A pool job's pages of pool_page over its target regions laid end to
 * end (vmcache's region; bufpool numbers the same pages). */
static inline uint64_t result_pool_pages(const struct job_result *jr)
{
	const uint64_t pg = jr->job.pool_page;
	uint64_t n = 0;

	for (unsigned i = 0; pg && i < jr->ntargets; i++)
		n += (jr->targets[i].len + pg - 1) / pg;
	return n;
}

/* vmcache's region in huge pages: the pool holds all of it, rounded up to
 * 2 MiB (vmcache.c's map_region, the same rule). */
static inline bool result_vmcache_huge(const struct job_result *jr)
{
	const uint64_t h = 2ull << 20, pg = jr->job.pool_page;
	const uint64_t len = result_pool_pages(jr) * pg;

	return pg && len >= h && ((len + h - 1) & ~(h - 1)) <= jr->job.pool_size / pg * pg;
}

/* The job's TLB shootdown IPIs (job_tlb_ipi) per page its pool evicted:
 * false when not counted, or nothing was evicted. */
static inline bool result_pool_ipi_per_evict(const struct job_result *jr, double *v)
{
	if (!jr->pool_ok || !jr->pool.evictions || !jr->events.ok[PERFEV_TLB_IPI])
		return false;
	*v = (double)jr->events.v[PERFEV_TLB_IPI] / (double)jr->pool.evictions;
	return true;
}

#endif
