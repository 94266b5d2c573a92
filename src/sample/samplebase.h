/*
 * samplebase.h - the sampler's state (struct sampler, each job's and
 * thread's), laid out by the cache line, and the three helpers every
 * file of the sampler uses (samplebase.c): a warning once per source,
 * whether a budgeted source is due for a job at a boundary, and
 * line-aligned allocation. Only the sampler's files include it;
 * everyone else sees sampler.h.
 */
#ifndef FAULTLINE_SAMPLEBASE_H
#define FAULTLINE_SAMPLEBASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "out/csvout.h"
#include "telemetry/devinfo.h"
#include "telemetry/perfev.h"
#include "telemetry/explain.h"
#include "out/fiolog.h"
#include "lib/fiostat.h"
#include "telemetry/procfs.h"
#include "telemetry/residency.h"
#include "telemetry/taskstats.h"
#include "telemetry/timeshare.h"
#include "out/results.h"
#include "sample/samplecols.h"
#include "sample/samplercfg.h"
#include "lib/stats.h"

/* A block device some job reads from. */
struct dev_src {
	char name[DEVINFO_NAME_MAX];
	char role[16];
	struct dev_result facts;	/* model, scheduler, md geometry */
	bool ok;
	struct procfs_src src;
	struct devinfo_blkstat last;
	/* Read once per sampling moment, whatever the jobs on it. */
	uint64_t gen;
	struct devinfo_blkstat cur;
};

/*
 * A worker thread's sampler state. At thousands of jobs a row's time is
 * mostly its first loads of cold lines, so what every row of a read job
 * reads and writes comes first, in two lines (CACHELINE-aligned): the
 * counters at the sampling moment and at the previous row, the ring's
 * stage and the CPU time. What only write jobs, pools, the task files,
 * log_prio or delayacct=1 use follows, untouched by other rows.
 */
struct thread_samp {
	/* The thread's counters at the sampling moment (sampler_job_snap):
	 * read for every job before anything slower, so each row's counts
	 * belong to its interval however long the rest of a sample takes;
	 * and at the previous row. */
	uint64_t rops, rbytes, probe;
	uint64_t prev_ops, prev_bytes, prev_probe;
	uint64_t ring_read;		/* lat's ring read up to here (prefetch's guess) */
	struct hist *prev_spill;	/* lat's spill as last read, in sampler.spill_all */
	/* The latencies recorded since the previous row, read with the
	 * counters at the sampling moment (hist_ring_take: the worker's
	 * ring's count, and the buckets its spill grew) and added into the
	 * row (hist_ring_commit): reads here, writes and flushes in
	 * wstage. */
	struct hist_stage stage;
	struct hist *prev_w;		/* write jobs: wlat's and slat's spills as last read */
	/* Time on a CPU since the thread began: its CPU clock while it
	 * runs (its schedstat in a worker process, utime+stime ticks where
	 * neither can be read), its exit schedstat once it has ended. Now,
	 * and at the previous row. */
	uint64_t cpu_ns, prev_cpu;
	uint64_t prev_maj, prev_min;	/* at the previous row */
	bool cpu_ok;
	/* ---- below: not read by a read job's row ---- */
	uint64_t wops __attribute__((aligned(CACHELINE)));
	uint64_t wbytes, syncs, hits, misses, evictions, batches;
	uint64_t prev_wops, prev_wbytes, prev_syncs;
	uint64_t prev_hits, prev_misses, prev_evictions;	/* pool, at the previous row */
	uint64_t prev_batches;
	uint64_t base_maj, base_min;	/* at the start of the measured part */
	bool base_from_start;		/* take the worker's own start values */
	struct hist_stage wstage[2];	/* wlat's, slat's */
	/* Its task files, read over one row in many. */
	struct procfs_src task;
	bool task_open, task_failed;
	struct procfs_src sched;	/* its schedstat: CPU time in ns */
	bool sched_open, sched_failed;
	/* log_prio: the per-priority counters now and at the previous row */
	struct prio_counters prio, prev_prio;
	/* delayacct=1 (samplertime.c): its delays and CPU time at the job's
	 * last reading of them. */
	uint64_t da_prev[TASKSTATS_NDELAYS], da_prev_cpu;
} __attribute__((aligned(CACHELINE)));

/* fio's IOPS and KiB/s series of one direction (for the JSON). */
struct fio_series {
	struct fiostat_series iops, bw;
};

/*
 * A job's sampler state. As struct thread_samp, what every row reads
 * and writes comes first and packed (its flags, times, devices, the
 * reads' fio series, explain's own head), then its rows' plans (one of
 * two read by a row, asked for by the row's prefetch), and what a
 * row reads only when its figure is due or the job asks for it (its
 * kernel counters, explain's messages and cgroup pressure, the write
 * series, the write-back trace, the time breakdown, the host's reading
 * kept for a row made apart) follows, out of the lines a row touches.
 */
struct job_samp {
	bool active;
	/* The job's options every row reads, copied at set-up: its
	 * struct job is 14 KB, a cold line for each at thousands of jobs;
	 * and so is what a row reads of its struct sampler_job (below). */
	bool lat, log_prio, delayacct;
	bool verifies;			/* job_verifies: read back after its timed part */
	bool pool, pool_batches;
	bool ending;			/* the row being made is the job's last */
	bool idle_hint;			/* its workers counted nothing at the last pass: the
					 * plan its row will likely take (cells.plan[1]) */
	bool faults_ok;			/* every interval's faults were readable */
	bool flt_read;			/* its threads' faults read at its previous row */
	bool cpu_read;			/* ... and their CPU time */
	bool ev_open, ev_ended;
	bool ev_last_any;		/* some counter of ev_last is ok */
	bool da_read;			/* delayacct=1: its delays read at its previous row */
	/* Who wrote its data to the device (wbtrace.h): enum wb_state,
	 * why not when WB_UNREAD, the counts at the previous row. */
	int wb;
	/* The host's reading at its previous row: the sampler's kept one
	 * of a sample (sampler.sys_keep[ps_slot], while its seq is still
	 * ps_seq), shared by every job sampled then, or its own copy
	 * (ps_slot -1: its first row, a row made apart from a sample). */
	int ps_slot;
	unsigned nthreads;		/* workers + probe */
	unsigned nworkers;
	uint64_t ps_seq;
	uint64_t start_ns, ramp_end_ns;	/* the job's clock, from sampler_job_started */
	uint64_t last_t;
	uint64_t measure_ns;		/* the measured part's start */
	struct thread_samp *th;
	const struct thread_stats *stats;	/* the workers' counters (sampler_job.stats) */
	struct cgroup *cg;		/* mem_limit: its cgroup while it exists */
	/* Per dev, at the previous row: its reads' and writes' counts and
	 * sectors only (a row's and the job's result's figures). */
	struct devinfo_blkstat *dev_last;
	struct fiolog_sample *share;	/* each worker's share of the interval (fio logs) */
	/* Devices, as indices into sampler.devs: the job's primary devices
	 * (what its targets sit on) and, for md, the members. */
	unsigned ndev, nprimary;
	uint8_t dev[RESULT_MAX_DEVS];	/* sampler.devs has fewer than 256 */
	struct fio_series fio_r;	/* fio's per-interval figures of its reads */
	struct explain_job x;		/* residency, pressure, cost, phases: its head first */
	struct samplecols_job cells __attribute__((aligned(CACHELINE)));	/* its rows' plans, with its cells the same in every row */
	/* ---- below: read only when due, or asked for ---- */
	struct fio_series fio_w;	/* ... and of its writes */
	struct devinfo_blkstat *dev_base;	/* per dev, at measure start */
	struct devinfo_blkstat *dev_end;	/* per dev, at job end */
	bool dev_end_taken;
	uint64_t cgroup_peak;		/* highest cgroup usage sampled, bytes */
	/* Kernel counters of the job's own tasks (perfev.h), opened on its
	 * leader from ready until it ends: at the previous row, at the
	 * start of the measured part, at its end. */
	struct perfev_set ev;
	struct perfev_values ev_last, ev_base, ev_end;
	bool ev_decided;		/* sampler_job_ready tried to open them */
	char ev_why[PERFEV_WHY_MAX];
	char wb_why[256];
	struct wbtrace_counts wb_last, wb_base;	/* ... and at the measured part's start */
	/* delayacct=1 (samplertime.c): when its threads' delays were last
	 * read (a row has time_* cells when read at both its ends), and
	 * the measured rows' sums. */
	uint64_t da_read_t;
	struct timeshare_ns da_total;
	uint64_t da_window;
	/* ... and the measured rows it was due in but could not split: a
	 * thread unread, or a wait the kernel miscounted (da_bogus). */
	uint64_t da_lost;
	bool da_bogus;
	char da_why[160];
	struct sys_snap last_sys;	/* ps_slot -1 */
} __attribute__((aligned(CACHELINE)));

/* The controller thread's own use, at one moment (sampler.c). */
struct sampler_self {
	uint64_t cpu_ns;		/* its CPU clock */
	long nivcsw, nvcsw;		/* involuntary, voluntary switches */
};

struct sampler {
	struct sampler_config cfg;
	struct csvout csv;
	bool have_csv;
	const char *proc;
	long hz;
	pid_t self;			/* getpid(), once: glibc asks the kernel each time */
	struct procfs_src interrupts, vmstat, meminfo, stat;
	struct procfs_kswapd ksw;
	bool have_ksw;
	bool warned_tlb, warned_ksw, warned_vm, warned_mem, warned_cpu, warned_task, warned_ev;
	struct perfev_plan *plan;	/* the per-job counters this host offers */
	struct wbtrace *wb;		/* write-back tracepoints, when a job needs them */
	unsigned ev_reserve;		/* descriptors the counters leave to the rest */
	unsigned ev_skipped;		/* jobs whose counters did not fit */
	/* A job's counters are read over one interval in ev_every (a read
	 * costs microseconds: sampler_due), their reads and time. */
	unsigned ev_every;
	bool noted_ev;
	uint64_t ev_reads, ev_read_ns;
	/* Each job's threads' faults (their stat files) are read over one
	 * interval in task_every, their CPU clocks over one in cpu_every
	 * (and whenever their faults or delays are read). */
	unsigned task_every, cpu_every;
	struct sys_snap group_sys;	/* taken at the first job_ready of a group */
	bool group_sys_taken;
	struct explain_host psi;
	unsigned ndevs;
	struct dev_src devs[RESULT_MAX_DEVS * 4];	/* job_samp.dev: under 256 */
	struct job_samp *jobs;
	struct thread_samp *th_all;	/* every job's threads' (job_samp.th) */
	struct hist *spill_all;		/* ... and their lat spills' (thread_samp.prev_spill) */
	size_t nspill;			/* spill_all's length (sampler_map_zeroed) */
	uint64_t t0, epoch0_ms;
	struct sys_snap begin, last_tick;
	/* The host's reading of the last samples, each the previous
	 * reading of the rows of the next (job_samp.ps_slot): a row no
	 * longer copies it into its job's state. */
#define SAMPLER_SYS_KEEP 8
	struct sys_snap sys_keep[SAMPLER_SYS_KEEP];
	unsigned sys_cur;
	bool last_tick_ok;
	double tlb_peak;
	bool tlb_peak_ok;
	struct hist interval;		/* one job's interval */
	struct hist winterval;		/* ... of its writes */
	struct hist sinterval;		/* ... of its flushes */
	/* One sampling moment: the controller's pass at @moment_now (every
	 * call of one pass hands in the same now). Devices and residency
	 * are read once per moment (@gen), the host's files too (@moment_sys). */
	uint64_t gen, moment_now;
	struct sys_snap moment_sys;
	bool moment_sys_ok;
	struct residency_set regions;	/* every job's target regions, once each */
	/* What a sample costs the sampler itself: each tick's
	 * time, and how long after the boundary the last job's counters
	 * were read (the longest such wait: it may be 0, so no histogram,
	 * which records at least HIST_MIN_NS). */
	struct hist tick_cost;
	uint64_t snap_skew_max;
	uint64_t snap_now, snap_t;	/* the boundary snapped, and when it was done */
	uint64_t snap_cost;		/* ... and what that pass took */
	/* The same sample as the controller thread's own CPU time, and
	 * whether it was switched out during it: taken from (preempted) or
	 * waiting (blocked). The wall time above is what a sample costs the
	 * run's clock; these say how much of it was the sampler's work. */
	struct hist tick_cpu;
	struct sampler_self snap_self;	/* the pass's share */
	unsigned tick_preempted, tick_blocked;
	bool snap_any;			/* some job was running at it */
	unsigned over_quarter;		/* ticks longer than a quarter interval */
	unsigned snap_retaken;		/* first passes held up and taken again */
	/* A tick's per-job scratch, allocated with the sampler: nothing is
	 * allocated, nor the stack grown, while jobs run (procfs.h says why). */
	/* Tests' hooks (sampler_test_hooks, from the environment they
	 * set): called only when set, so a run pays one untaken branch. */
	void (*test_row_hook)(const struct sampler *s);		/* each row */
	void (*test_pass_hook)(struct sampler *s);		/* the counters' pass, once */
	uint64_t test_delay_ns, test_stall_ns;
	uint64_t sys_seq;		/* host readings made: sys_snap.seq */
	struct samplecols_cache *host_cells;
	double *tick_mib, *tick_iops;
	bool *tick_row;
	uint64_t status_total_ns;	/* estimated run length for the status line */
	size_t status_len;
	struct fiolog *fiolog;		/* write_bw_log and friends, or NULL */
	/* delayacct=1 (samplertime.c): the taskstats socket (NULL: no job
	 * asks, or the kernel cannot answer: da_why), how often a job is
	 * read (over one interval in da_every), what the queries cost. */
	struct taskstats_sock *tsk;
	char da_why[160];
	char da_fail[64];		/* what the last failed reading lacked */
	bool warned_da;
	unsigned da_every;
	uint64_t da_queries, da_query_ns;
};

/* The lines every row of a read job touches: its state up to these. */
#define THREAD_SAMP_HOT offsetof(struct thread_samp, wops)
#define JOB_SAMP_HOT (offsetof(struct job_samp, x) + offsetof(struct explain_job, cg_last))

/* A warning once per @flag, saying the source's cells stay empty. */
void sampler_warn_once(bool *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Is a source read one interval in @every due for job @j at the
 * boundary @now? Both ends of one row in every @every, jobs staggered,
 * and always at the job's end (its last row). */
bool sampler_due(const struct sampler *s, unsigned j, uint64_t now, unsigned every);
/* @n zeroed elements of @size on a cache line's boundary (free()d). */
void *sampler_calloc_lines(size_t n, size_t size);
/*
 * @bytes of zeroed memory for the histograms the sampler reads before it
 * writes them (a worker's spill as last read, thread_samp.prev_spill and
 * prev_w: hist_take reads a bucket range, hist_commit writes the buckets
 * that moved); NULL when none could be had, sampler_unmap()ped. Shared
 * anonymous memory, whose page first read is a page of its own, mapped
 * writable. Private memory maps the zero page on that read, and the
 * write after it faults again and flushes the TLB of every CPU the
 * process runs on: with 2000 workers running, an interrupt to the other
 * CPU for each, a third of a 2000-job sample's rows (tests/bench/README.md).
 * Pages never touched still cost nothing.
 */
void *sampler_map_zeroed(size_t bytes);
void sampler_unmap(void *p, size_t bytes);

#endif
