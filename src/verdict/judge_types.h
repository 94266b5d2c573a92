/*
 * judge_types.h - the verdict's types and thresholds (judge.h's
 * reasoning): the workloads and engines of its matrix, a cell's run, the
 * host's facts, a result with its evidence sentences. Apart from the
 * functions so that the files writing sentences (judge_say.c,
 * judge_pool.c) sit below judge.c, which calls them.
 */
#ifndef FAULTLINE_JUDGE_TYPES_H
#define FAULTLINE_JUDGE_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/* The fixed matrix's workloads, and JW_JOB: a job of the user's file
 * (faultline --verdict JOBFILE), described by its struct judge_wl. */
enum judge_workload { JW_UNIFORM, JW_ZIPF, JW_SCAN, JW_WRITE, JW_HAZARD, JW_JOB, JW_NR };

enum judge_engine {
	JE_MMAP_NORMAL,		/* mmap, madvise=normal */
	JE_MMAP_RANDOM,		/* mmap, madvise=random */
	JE_BUFPOOL,		/* bufpool, misses O_DIRECT through io_uring */
	JE_URING_DIRECT,	/* io_uring O_DIRECT, no cache at all */
	JE_MMAP_MSYNC,		/* writes: mmap stores, msync every 32 */
	JE_PWRITE,		/* writes: pwrite, fdatasync every 32 */
	JE_MMAP_LOOP,		/* async hazard: one loop thread over mmap */
	JE_URING_LOOP,		/* ... and over io_uring */
	JE_URING_DEPTH,		/* io_uring O_DIRECT, one thread at a probed queue depth */
	JE_VMCACHE,		/* vmcache, where the build has it */
	JE_PSYNC,		/* a job's writes: pwrite, its own flush options */
	JE_NR
};

/* What a workload is ranked by. */
enum judge_by {
	JB_IOPS,		/* higher is better (reads + writes for a mix) */
	JB_MIBS,		/* higher is better */
	JB_P99,			/* lower is better, among the engines that held the rate */
	JB_TIME,		/* a replay: the seconds to replay all of it, lower is better */
};

/* A workload as the judge sees it: the fixed matrix's from
 * judge_wl_fixed, a user's job's from the verdict. */
struct judge_wl {
	enum judge_workload kind;
	char key[64];		/* "uniform", or the job's name */
	char name[160];		/* "uniform random 4k reads", "job 'mine' (randread, ...)" */
	enum judge_by by;
	bool writes;		/* it writes: IOPS count reads and writes */
	bool seq;		/* sequential: major faults are not a sentence */
	bool replay;		/* a trace replayed: each engine's elapsed time is said */
	double trace_ios;	/* ... the requests its replay issues (reads, and writes
				 * when it writes, over all its threads), 0 unknown */
	unsigned streams;	/* ... its traced streams, replayed together (0: one) */
	bool paced;		/* ... at the trace's own pace (JB_P99, rate_iops the pace) */
	double rate_iops;	/* JB_P99: the rate asked for, or a timed trace's own pace;
				 * 0 = the fastest engine's */
	uint32_t engines;	/* bit (1u << enum judge_engine) per engine judged */
};

/*
 * Thresholds, each documented in faultline(1), THE VERDICT. A ratio is
 * a tie when some round had the two within JUDGE_TIE_ROUNDS of each
 * other (or the other ahead); with one round, within JUDGE_TIE_SINGLE.
 */
#define JUDGE_TIE_ROUNDS 0.05
#define JUDGE_TIE_SINGLE 0.10
#define JUDGE_TLB_PER_S 100.0		/* shootdowns/s worth a sentence */
#define JUDGE_RECLAIM_PER_S 1000.0	/* pages scanned/s (4 MiB/s of 4k pages) */
#define JUDGE_KSWAPD_PCT 5.0		/* kswapd CPU % */
#define JUDGE_READ_AMP 2.0		/* read amplification worth a sentence */
#define JUDGE_MAJFLT_PER_OP 0.1		/* major faults per request (mmap) */
#define JUDGE_FLUSH_RATIO 2.0		/* flush p99 differences worth a sentence */
#define JUDGE_POOL_TAIL 1.10		/* vmcache's p99 over bufpool's worth the why */
#define JUDGE_KERNEL_WRITE_SHARE 0.2	/* of the data written, the kernel's own */
#define JUDGE_BLOCKED_PCT 50.0		/* the loop thread asleep this share of its time */
#define JUDGE_RA_KB 512			/* read_ahead_kb at or above: a host fact */
#define JUDGE_RATE_SHORT 0.05		/* delivered this far below the rate: fell behind */
#define JUDGE_FEW_CPUS 4		/* at or below: a host fact */

#define JUDGE_MAX_ROUNDS 8
#define JUDGE_MAX_SENT 16
#define JUDGE_SENT_LEN 480

/* One run of the matrix: a workload, an engine, a round and the run's
 * whole JSON document (json_out_build's; borrowed, not owned). */
struct judge_cell {
	unsigned wl;		/* which workload: an index the caller gives */
	enum judge_engine e;
	unsigned round;		/* 0-based */
	json_t *doc;
};

/* What the host says that changes the answer; -1 / "" where unknown. */
struct judge_host {
	unsigned ncpus;
	char thp[16];		/* "always", "madvise", "never", "" */
	int read_ahead_kb;	/* the target's device, -1 unknown */
	char dev[32];		/* its name, "" unknown */
	int rotational;		/* 1, 0, -1 */
	char virt[32];		/* "kvm", "none", "" unknown */
	uint64_t mem_budget;	/* the verdict's memory budget, bytes */
	uint64_t file_size;	/* the region read, bytes */
	bool cgroup;		/* the budget is a memory cgroup (else reserve_mem) */
	int damon_pageout;	/* DAMON pages out idle memory (damon.h): 1, 0, -1 unknown */
	double damon_idle_s;	/* after that long idle; NAN unknown */
	int swap;		/* the host has swap: 1, 0, -1 unknown */
};

/* A sentence and the number it rests on (verdict.json keeps both). */
struct judge_sentence {
	char key[32];		/* "tlb_per_s", "read_amp", ... */
	double value;
	double threshold;	/* the one it passed, NAN when none applies */
	char source[64];	/* "job" (its own perf counters), "system", "device", ... */
	char text[JUDGE_SENT_LEN];
};

struct judge_engine_result {
	bool ok;		/* at least one round gave a number */
	unsigned n;		/* rounds with a number */
	double v[JUDGE_MAX_ROUNDS];	/* per round, NAN where missing */
	double median, lo, hi;
	char err[200];		/* why not, when !ok */
	char conc[64];		/* its concurrency: "2 threads x depth 1", "" unknown */
	/* JB_P99: the IOPS delivered (median over rounds), and whether that
	 * fell short of the rate by more than JUDGE_RATE_SHORT, by how much. */
	double iops[JUDGE_MAX_ROUNDS];
	double iops_median;
	bool behind;
	double short_pct;
	/* JB_TIME: rounds the plan's bound cut short, whose time is the
	 * rate it kept over the whole trace (an estimate). */
	bool cut[JUDGE_MAX_ROUNDS];
	unsigned ncut;
	/* A cell shown beside the answer but not in it: a replay's depth
	 * cell, "if the program could have had 32 reads in flight". */
	char mark[96];
};

struct judge_result {
	struct judge_wl wl;
	bool ran;			/* some cell of it was given */
	unsigned rounds;
	struct judge_engine_result e[JE_NR];
	int winner, runner_up;		/* enum judge_engine, -1 = none */
	double ratio, ratio_lo, ratio_hi;	/* winner over runner-up: median, per-round range */
	unsigned ratio_n;		/* rounds with both */
	bool tie;
	double rate;			/* JB_P99: the rate judged at */
	bool none_held;			/* JB_P99: no engine held it (ranked by IOPS) */
	char headline[JUDGE_SENT_LEN];
	unsigned nsent;
	struct judge_sentence sent[JUDGE_MAX_SENT];
};

#endif
