/*
 * job.h - a resolved job: what the job file and command line asked for,
 * with defaults applied and contradictions rejected.
 *
 * The parser (jobfile.c) produces these from the option table
 * (options.c); after that a struct job is immutable for the whole run.
 * The stages above job/ read it (the run, the sampler, the writers);
 * those below see a structure of their own resolved from it once: an
 * engine struct engine_job (run/enginecfg.c), the workload struct
 * workload_job (workloadcfg.c), whose header holds the workload's
 * vocabulary the job's fields are typed with.
 */
#ifndef FAULTLINE_JOB_H
#define FAULTLINE_JOB_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "workload/workload.h"

enum madv_mode { ADV_NORMAL, ADV_RANDOM, ADV_SEQUENTIAL, ADV_WILLNEED, ADV_HUGEPAGE };
enum fadv_mode { FADV_M_NORMAL, FADV_M_RANDOM, FADV_M_SEQUENTIAL };
/* zonemode: fio's strided zones (zbd is refused); unset follows zonesize. */
enum zone_mode { ZONE_UNSET, ZONE_NONE, ZONE_STRIDED };
enum rate_process_mode { RATE_LINEAR, RATE_POISSON };
/* continue_on_error: which errors a worker counts and goes on after. */
enum coe_mode { COE_NONE, COE_READ, COE_WRITE, COE_IO, COE_VERIFY, COE_ALL };
/* exit_what: which jobs a job's end stops when exitall is set (fio's). */
enum exit_what_mode { EXIT_WHAT_GROUP, EXIT_WHAT_STONEWALL, EXIT_WHAT_ALL };
/* steadystate's measure (fio's iops, bw, lat; _slope and % are flags). */
enum ss_metric { SS_IOPS, SS_BW, SS_LAT };
/* sync=: how write jobs open their targets. */
enum sync_mode { SYNC_NONE, SYNC_DSYNC, SYNC_SYNC };
enum prefetch_mode { PREFETCH_NONE, PREFETCH_WILLNEED, PREFETCH_POPULATE, PREFETCH_TOUCH,
		     PREFETCH_READAHEAD };
enum pool_io_mode { POOL_IO_URING, POOL_IO_PSYNC };
enum dedupe_mode { DEDUPE_REPEAT, DEDUPE_WORKING_SET };
/* log_window_value: what a log entry of a window holds (fio's). */
enum log_window { LOG_WINDOW_AVG, LOG_WINDOW_MAX, LOG_WINDOW_BOTH };

/* fio's random_distribution=sequence: up to 64 block indices. */
#define JOB_SEQ_MAX	64
/* ignore_error: errnos per kind. */
#define JOB_IGNORE_MAX	16


/* Longest job name kept (fio truncates similarly); longer is an error. */
#define JOB_NAME_MAX 128

/* iodepth_batch_submit=auto. */
#define IODEPTH_BATCH_AUTO	UINT_MAX

/* An option as a job file wrote it ("blocksize", "8k"); a bare key's
 * value is "1". fio's JSON lists the [global] ones as "global options". */
struct job_opt {
	char *key;
	char *val;
};

/*
 * What the user wrote, kept as written: for fio's "job options" in the
 * JSON, for --parse-only, and for messages that say where a value came
 * from. The run reads the resolved values (the rest of struct job); an
 * option whose value is parsed into several of them (bssplit, rate,
 * cmdprio, ignore_error, steadystate) keeps its text here.
 */
struct job_src {
	/* The options the job's own section (or its --name and what follows
	 * on the command line) set, as fio lists them in "job options":
	 * the option's name, the text after ${VAR} and keywords; val NULL
	 * for a bare key (fio lists none). Not the [global] ones. */
	unsigned nopts;
	struct job_opt *opts;

	/* Where the job was defined. */
	char file[256];
	int line;

	/* Options parsed into resolved values, as written. */
	char *bssplit;
	char *bsrange;
	char *blockalign;
	char *perc_random;
	char *rate;
	char *rate_iops;
	char *rate_min;
	char *rate_iops_min;
	char *cmdprio_perc;
	char *cmdprio_class;
	char *cmdprio_level;
	char *cmdprio_bssplit;
	char *ignore_error;
	char *ss;			/* steadystate ("iops_slope:0.01%") */

	/* fio options accepted because they change nothing here (a bit per
	 * option, see job/options.c): --parse-only shows them; new_group
	 * also starts a group for exit_what=group. */
	uint32_t fio_noops;
};

struct job {
	char name[JOB_NAME_MAX];

	/* What the user wrote, as written. */
	struct job_src src;

	/* Targets. */
	char *filename;			/* raw "a:b:c", or NULL for scratch files */
	char *directory;		/* scratch directory, NULL = cwd */
	unsigned nrfiles;
	uint64_t filesize;		/* 0 = size / nrfiles */
	enum fst_mode file_service_type;
	uint64_t size;			/* 0 = whole target */
	unsigned size_pct;		/* size=N%: percent of each target, 0 = unused */
	uint64_t offset;
	uint64_t io_size;		/* 0 = one pass (or unlimited if time_based) */

	/* Time, all in nanoseconds; 0 = not set. */
	uint64_t runtime_ns;
	uint64_t ramp_ns;
	uint64_t startdelay_ns;
	bool time_based;

	/* The I/O. */
	enum rw_mode rw;
	uint64_t bs;
	char ioengine[32];		/* canonical engine name, aliases resolved */
	unsigned iodepth;
	/* iodepth_batch_submit: requests handed to the kernel at once;
	 * 0 = iodepth (as fio), IODEPTH_BATCH_AUTO = 1 with direct=1,
	 * iodepth otherwise. Resolved in job_run_init (jr->batch). */
	unsigned iodepth_batch;
	bool direct;
	bool uncached;			/* reads with RWF_DONTCACHE (uncached.h) */
	unsigned numjobs;
	bool thread;			/* workers are threads (1) or processes (0) */
	enum madv_mode madvise;
	enum fadv_mode fadvise;
	enum touch_mode touch;
	uint64_t touch_stride;		/* touch=stride:N */
	enum scan_mode scan;
	uint64_t scan_chunk;
	uint64_t randseed;
	bool randseed_set;
	enum dist_mode random_distribution;
	double zipf_theta;
	double pareto_h;		/* pareto:H, 0 < H < 1 */
	double gauss_dev;		/* normal:P, 0 <= P < 100 */

	/* Workload shapes (workload/shape.h): per direction. */
	struct job_dir dir[2];
	bool bs_unaligned;
	/* bs=R,W,T (fio's per-direction sizes): the writes' and trims' when
	 * they differ from bs (0: bs; a trim job's writes and trims take T,
	 * optshape_resolve). */
	uint64_t bs_write, bs_trim;
	unsigned seq_nr;		/* rw=randread:N: a new random offset every N requests (1) */
	int64_t seq_add;		/* rw=read:N: bytes skipped (or, negative, stepped back) after each request */
	enum rw_seq_mode rw_seq;
	int random_generator;		/* fio's generator names, accepted; faultline's own is said in the man page */
	unsigned loops;			/* passes over the region (1) */
	/* random_distribution=sequence:I,J,...: these block indices in turn
	 * (random_sequence_stride: each cycle one sequence further). */
	unsigned nseq;
	uint32_t seq[JOB_SEQ_MAX];
	bool seq_stride;
	/* zonemode=strided: zonesize bytes in a zone of zonerange, then
	 * zoneskip bytes skipped (fio's meaning; gen.c). */
	enum zone_mode zonemode;
	uint64_t zone_size, zone_range, zone_skip;
	uint64_t number_ios;		/* stop a thread after this many requests; 0 = no limit */

	/* I/O priority (fio's prioclass, prio, cmdprio*, log_prio; run/prio.h). */
	bool prio_set;			/* prioclass or prio given: ioprio_set per thread */
	unsigned prio_class, prio_level;	/* class 0: best effort, as fio */
	struct job_cmdprio cmdprio[2];	/* per direction */
	bool log_prio;			/* fio logs' priority column holds the ioprio */

	/* Pace (run/pace.h). */
	enum rate_process_mode rate_process;
	unsigned rate_cycle_ms;		/* rate_min's averaging window (fio: ms) */
	uint64_t thinktime_ns;		/* stall after thinktime_blocks requests */
	uint64_t thinktime_spin_ns;	/* of which spent busy */
	unsigned thinktime_blocks;
	int io_submit_mode;		/* 0 inline, 1 offload: a paced async job does not drain before it waits */

	char *wait_for;			/* fio's: start once this earlier job ended (a stonewall here) */

	/* Ends and errors. */
	bool exitall;			/* fio's: a job's end stops others (exit_what) */
	bool exitall_on_error;		/* a job's failure stops others (exit_what) */
	enum exit_what_mode exit_what;	/* which others */

	/* Run control (fio's; run/runctl.h): steady state, flow, latency target. */
	enum ss_metric ss_metric;
	bool ss_slope;			/* least-squares slope, else max deviation from the mean */
	bool ss_pct;			/* ss_limit is a percentage of the window's mean */
	double ss_limit;		/* IOPS, bytes/s or ns (lat); or % */
	uint64_t ss_dur_ns;		/* the window; 0: no steady-state detection */
	uint64_t ss_ramp_ns;		/* before the first sample counts */
	uint64_t ss_interval_ns;	/* between samples (1 s) */
	unsigned flow;			/* weight among the jobs of flow_id; 0: none */
	unsigned flow_id;
	unsigned flow_sleep_us;		/* held back: sleep this long before trying again */
	uint64_t latency_target_ns;	/* 0: none */
	uint64_t latency_window_ns;
	double latency_percentile;	/* % of requests within the target (100) */
	bool latency_run;		/* keep adjusting the depth, do not end at the found one */
	enum coe_mode continue_on_error;
	/* ignore_error: per kind (read, write, verify) the errnos that
	 * continue_on_error goes on after; none listed: fio's EIO and EILSEQ. */
	unsigned ignore_nr[3];
	int ignore_err[3][JOB_IGNORE_MAX];
	bool error_dump;		/* each error gone on after is in the summary */
	bool latency;

	/* Placement. NULL = not set. */
	char *cpus_allowed;
	char *numa_cpu_nodes;
	char *numa_mem_policy;

	/* Memory and cache control. */
	uint64_t mem_limit;		/* 0 = none */
	uint64_t reserve_mem;		/* 0 = none */
	bool invalidate;
	bool drop_caches;
	bool prewarm;
	bool overwrite;			/* a read job may append to a short file it did not make */
	bool allow_file_create;		/* a missing file may be created and laid out */
	bool cpu_probe;
	bool delayacct;			/* time_*_pct: the kernel's delay accounting */
	bool stonewall;

	/* Concurrency models and prefetch (loop.c, offload.c,
	 * prefetch.c). */
	unsigned loop;			/* streams one thread drives; 0 = off */
	unsigned offload;		/* helpers a loop hands sync requests to; 0 = none */
	unsigned offload_permits;	/* offloaded requests running at once; 0 = offload */
	enum prefetch_mode prefetch;
	uint64_t prefetch_window;	/* bytes kept requested ahead of each stream */

	/* fio's per-interval log files (fiolog.c): the file name prefix of
	 * each log, NULL for none, "" for the job's name (a bare key); one
	 * entry per log_avg_msec, at least per sampling interval. */
	char *bw_log;
	char *iops_log;
	char *lat_log;
	unsigned log_avg_msec;
	bool per_job_logs;		/* <prefix>_bw.<thread>.log, else <prefix>_bw.log */
	bool log_offset;		/* the offset column (always 0: entries are averages) */
	int log_window_value;		/* LOG_WINDOW_*: an entry's mean, maximum or both */
	bool log_issue_time;		/* latency logs' issue-time column (0: averages) */

	/* Writes and durability (writes.c, verify.c). */
	unsigned rwmixread;		/* % of a mixed job's requests that read */
	unsigned fsync_every;		/* fsync=N: flush after every N writes; 0 = off */
	unsigned fdatasync_every;	/* fdatasync=N: the same, data only */
	uint64_t sync_interval_ns;	/* flush when this long passed since the last; 0 = off */
	bool end_fsync;			/* one timed flush per written target at the end */
	enum sync_mode sync;		/* O_DSYNC / O_SYNC opens */
	enum verify_mode verify;	/* read every written block back at the end */
	bool atomic;			/* writes with RWF_ATOMIC where the target takes them */
	bool verify_write_sequence;	/* fio's; accepted (job/optio.h says what it means here) */
	bool verify_fatal;		/* the read-back stops at the first mismatch */
	bool verify_dump;		/* each bad block read is written to a file */
	/* fio's verify phases (job/optverify.h says what each means here). */
	bool do_verify;			/* check what was written or read (1); 0: stamp only */
	bool experimental_verify;	/* fio's; the same check here */
	bool verify_state_save;		/* a write job leaves a state file of what it wrote */
	bool verify_state_load;		/* a read job checks only what a state file names */
	unsigned verify_backlog;	/* check after every N blocks written; 0: at the end */
	unsigned verify_backlog_batch;	/* blocks checked each time (0: verify_backlog) */
	/* fio's reaping and ordering in flight (job/optqueue.h). */
	unsigned iodepth_batch_complete_min;	/* a reap waits for this many (1; 0: polls) */
	unsigned iodepth_batch_complete_max;	/* and takes at most this many (0: iodepth) */
	bool serialize_overlap;		/* no two overlapping requests of a thread in flight */
	char *verify_pattern;		/* fio's pattern syntax (workload/pattern.h), as written */
	char *buffer_pattern;		/* the same, filling written blocks without verify */
	bool allow_destructive;		/* write a block device that carries data */
	/* fio's write buffer contents (workload/content.h); 0: faultline's
	 * fresh stamped blocks. */
	unsigned dedupe_pct;		/* dedupe_percentage */
	enum dedupe_mode dedupe_mode;
	unsigned dedupe_ws_pct;		/* dedupe_working_set_percentage */
	bool dedupe_global;
	unsigned compress_pct;		/* buffer_compress_percentage */
	uint64_t compress_chunk;	/* buffer_compress_chunk */

	/* ioengine=bufpool and vmcache (engine_bufpool.c,
	 * engine_vmcache.c). */
	uint64_t pool_size;		/* bytes of frames; 0 = not set (required) */
	uint64_t pool_page;		/* bytes per page, a power of two */
	enum pool_io_mode pool_io;	/* how misses are read */
	unsigned pool_prefetch;		/* pages read ahead of each read, through io_uring; 0 = none */
	unsigned pool_evict_batch;	/* vmcache: pages evicted together */

	/* Recording and replay (fio's iolog; workload/iolog.h). */
	char *write_iolog;		/* record every request (version 3), or NULL */
	char *read_iolog;		/* replay these ':'-separated logs, or NULL */
	char *replay_redirect;		/* every replayed request to this file */
	bool replay_no_stall;		/* as fast as possible, in order */
	unsigned replay_time_scale;	/* percent of the logged rate (100) */
	unsigned replay_skip;		/* IOLOG_SKIP bits of ops not replayed */
	uint64_t replay_align;		/* offsets rounded down to this power of two */
	uint64_t replay_scale;		/* offsets divided by this (1) */
};

/* The job changes its targets: writes, mixes and trims. */
static inline bool job_writes(const struct job *j)
{
	return j->rw >= RW_WRITE;
}

static inline bool job_mixed(const struct job *j)
{
	return j->rw == RW_RW || j->rw == RW_RANDRW;
}

static inline bool job_reads(const struct job *j)
{
	return j->rw <= RW_RANDREAD || job_mixed(j);
}

/* fio's trims: rw=trim, randtrim, trimwrite, randtrimwrite. */
static inline bool job_trims(const struct job *j)
{
	return j->rw >= RW_TRIM;
}

/* trimwrite, randtrimwrite: each block trimmed, then written. */
static inline bool job_trimwrites(const struct job *j)
{
	return j->rw >= RW_TRIMWRITE;
}

/* Whether the job writes data (not only trims). */
static inline bool job_writes_data(const struct job *j)
{
	return job_writes(j) && (!job_trims(j) || job_trimwrites(j));
}

/* Direction @d's smallest and largest request (bs unless bsrange or
 * bssplit says otherwise). */
static inline uint64_t job_bs_min(const struct job *j, unsigned d)
{
	return j->dir[d].bs_min ? j->dir[d].bs_min : j->bs;
}

static inline uint64_t job_bs_max(const struct job *j, unsigned d)
{
	return j->dir[d].bs_max ? j->dir[d].bs_max : j->bs;
}

/* The largest request the job issues in a direction it uses (buffers). */
static inline uint64_t job_bs_largest(const struct job *j)
{
	uint64_t r = job_reads(j) ? job_bs_max(j, JOB_DIR_READ) : 0;
	uint64_t w = job_writes(j) ? job_bs_max(j, JOB_DIR_WRITE) : 0;

	return r > w ? r : w;
}

/* The smallest request the job issues in a direction it uses. */
static inline uint64_t job_bs_smallest(const struct job *j)
{
	uint64_t r = job_reads(j) ? job_bs_min(j, JOB_DIR_READ) : UINT64_MAX;
	uint64_t w = job_writes(j) ? job_bs_min(j, JOB_DIR_WRITE) : UINT64_MAX;

	return r < w ? r : w;
}

/* Requests of more than one size in direction @d. */
static inline bool job_bs_varies(const struct job *j, unsigned d)
{
	return job_bs_min(j, d) != job_bs_max(j, d);
}

/* A rate is set for some direction. */
static inline bool job_paced(const struct job *j)
{
	for (unsigned d = 0; d < 2; d++)
		if (j->dir[d].rate || j->dir[d].rate_iops)
			return true;
	return false;
}

/* verify= with do_verify: written blocks are read back, read blocks
 * checked as they arrive. verify= alone only stamps the checksum. */
static inline bool job_verifies(const struct job *j)
{
	return j->verify != VERIFY_NONE && j->do_verify;
}

/* A read-only job that checks every block it reads (fio's read verify). */
static inline bool job_read_verifies(const struct job *j)
{
	return job_verifies(j) && !job_writes(j);
}

/* A flush policy is set: some flush requests will be issued. */
static inline bool job_flushes(const struct job *j)
{
	return j->fsync_every || j->fdatasync_every || j->sync_interval_ns || j->end_fsync;
}

/* A flush is fdatasync (fdatasync=N), else fsync (fsync=N, sync_interval,
 * end_fsync). */
static inline bool job_flush_datasync(const struct job *j)
{
	return j->fdatasync_every != 0;
}

#endif
