/*
 * stats.h - per-thread counters, written by one worker, read by anyone.
 *
 * All of a run's counters live in one shared anonymous mapping created
 * before any worker starts (run/arena.c), so workers that run in a
 * child process (mem_limit) publish them to the parent's sampler
 * exactly as threads do. Each worker's block starts on its own cache
 * line; its hot counters share that line with nothing another thread
 * writes.
 */
#ifndef FAULTLINE_STATS_H
#define FAULTLINE_STATS_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/fiostat.h"
#include "lib/histogram.h"

#define CACHELINE 64

/* worker_error.target of a failure not tied to a target or offset (the
 * job could not start): the message says it all. */
#define WORKER_ERROR_SETUP 0xffffffffu

/* error_dump: errors gone on after that a worker keeps each of. */
#define STATS_ERR_KEEP 16

/* Why a worker stopped early; 0 = it did not. */
struct worker_error {
	int code;			/* positive errno (EIO, ENXIO, EFAULT for SIGBUS...) */
	uint64_t offset;		/* byte offset in the target */
	unsigned target;		/* index into the job's targets */
	char what[160];			/* "SIGBUS", "pread", "io_uring read", ... */
};

/*
 * A buffer pool's counters (ioengine=bufpool and vmcache), per worker
 * thread, written only by that thread; the sampler reads them like the
 * rest. hits + misses is the pages the thread accessed: a hit found the
 * page in the pool (waits counts the hits that first waited for another
 * thread to finish loading it), a miss is a page this thread brought in.
 */
struct pool_counters {
	uint64_t hits;
	uint64_t misses;
	uint64_t waits;			/* hits that waited for another thread's load */
	uint64_t evictions;		/* frames taken from another page */
	uint64_t reads;			/* pages read from the device (misses that read) */
	uint64_t writebacks;		/* dirty pages written to the device */
	uint64_t prefetches;		/* pages read ahead into the pool (pool_prefetch) */
	/* vmcache: batches of evictions this thread made, and the
	 * madvise(MADV_DONTNEED) calls that gave their pages back. */
	uint64_t evict_batches;
	uint64_t madvise_calls;
};

/* What a write job's end-of-job read-back found (verify=crc32c, verify.c). */
struct verify_tally {
	uint64_t blocks;		/* blocks read back and checked */
	uint64_t bad;			/* ... that were not what was written */
	/* The first bad block: its target (index into the job's targets),
	 * offset and blockdata_check's answer (-EBADMSG, -ENOENT, ...). */
	unsigned first_target;
	uint64_t first_off;
	int first_code;
};

/* log_prio with cmdprio_*: a worker's requests per priority entry
 * (workload/prio.h's table, PRIO_TABLE_MAX entries) and direction. */
#define STATS_PRIO_MAX 8
struct prio_counters {
	uint64_t ops[2][STATS_PRIO_MAX];
	uint64_t bytes[2][STATS_PRIO_MAX];
	uint64_t lat_n[2][STATS_PRIO_MAX];	/* of them timed (latency=1) */
	uint64_t lat_sum[2][STATS_PRIO_MAX];	/* their latencies, ns */
};

/* The delays a thread publishes as it exits (TASKSTATS_NDELAYS). */
#define STATS_DELAYS 6

struct thread_stats {
	/* Hot: written by the worker on every request: reads, writes and
	 * flushes side by side on one line, which only this worker writes. */
	uint64_t rops;			/* reads completed */
	uint64_t rbytes;
	uint64_t probe_units;		/* cpu_probe thread's work units */
	uint64_t wops;			/* writes completed */
	uint64_t wbytes;
	uint64_t syncs;			/* flushes completed (fsync, msync, ...) */
	/* The request last handed to the engine (worker_note), so that a
	 * job that does not stop can say what it was doing: plain stores
	 * to this line, which the worker writes for every request anyway. */
	uint64_t last_off;
	uint32_t last_len;
	uint16_t last_target;		/* index into the job's targets */
	uint8_t last_op;		/* enum io_op plus one; 0: none yet */
	uint8_t probe_sink;		/* the CPU probe's result, published */

	/* ioengine=bufpool: on the hot path too, on a line of its own. */
	struct pool_counters pool __attribute__((aligned(CACHELINE)));

	/* Written once or rarely. */
	pid_t tid __attribute__((aligned(CACHELINE)));
	int running;			/* 1 while the worker loop runs */
	int done;			/* 1 once the worker has exited, on any path */
	/* A job's first slot only: a worker failed, the job's others stop.
	 * Here, in the shared arena, so that worker processes (thread=0)
	 * see it as threads do. */
	int job_stop;
	int failed;
	struct worker_error error;
	/* continue_on_error: the errors the worker counted and went on
	 * after, and the first of them (positive errno, target, offset). */
	uint64_t io_errors;
	/* Trims completed (fio's trim direction): a system call each, off
	 * the hot line. */
	uint64_t tops, tbytes;
	int first_error;
	unsigned first_error_target;
	uint64_t first_error_off;
	/* error_dump: the first STATS_ERR_KEEP of them, each (the rest are
	 * only counted). */
	struct stats_errrec {
		int err;		/* positive errno */
		unsigned target;
		uint64_t off;
		uint8_t op;		/* enum io_op */
	} errs[STATS_ERR_KEEP];
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC */
	pid_t pid;			/* process the worker runs in */
	/* The thread's own fault counters (getrusage RUSAGE_THREAD) when its
	 * loop starts and when it exits, so totals survive the thread. */
	int rusage_ok;
	uint64_t start_majflt, start_minflt;
	uint64_t exit_majflt, exit_minflt;
	/* Voluntary context switches (getrusage ru_nvcsw) at the same two
	 * moments: how often the thread went to sleep, on I/O or a wait. */
	uint64_t start_nvcsw, exit_nvcsw;
	/* /proc/thread-self/schedstat at the same moments: time on a CPU
	 * and time runnable but waiting for one. What is left of the
	 * thread's wall time is time it slept (sched_ok: both read). */
	int sched_ok;
	uint64_t start_cpu_ns, start_wait_ns, exit_cpu_ns, exit_wait_ns;
	/* delayacct=1: the kernel's delay accounting of the thread as it
	 * exits (telemetry/taskstats.h, in its enum's order), for the job's
	 * last row: by then the task is gone (delay_ok: read). */
	int delay_ok;
	uint64_t exit_delay_ns[STATS_DELAYS], exit_age_ns;
	/* prefetch= (prefetch.c): ranges requested ahead of the reader,
	 * their bytes, and ranges skipped because the helper was behind. */
	uint64_t prefetch_reqs, prefetch_bytes, prefetch_skipped;
	/* latency_target: the queue depth the worker's search ended at,
	 * and whether it ended the worker (the depth found, latency_run=0). */
	unsigned lat_depth;
	int lat_done;
	/* verify=crc32c: set once the worker has read its blocks back. */
	int verify_done;
	struct verify_tally verify;
	/* The thread's CPU time in user and kernel mode and its involuntary
	 * context switches (getrusage RUSAGE_THREAD) at the same two moments
	 * as the faults: fio's usr_cpu, sys_cpu and ctx (cpu_ok: both read). */
	int cpu_ok;
	uint64_t start_utime_ns, start_stime_ns, start_nivcsw;
	uint64_t exit_utime_ns, exit_stime_ns, exit_nivcsw;

	/* fio's iodepth distributions, counted by the asynchronous loops at
	 * each push to the kernel and each reap (stats_mark_submit,
	 * stats_mark_complete): once per batch, not per request, on a line
	 * of their own. */
	struct fiostat_depth depth __attribute__((aligned(CACHELINE)));

	/* log_prio with cmdprio_*, on lines of their own: a job without
	 * them never touches these. */
	struct prio_counters prio __attribute__((aligned(CACHELINE)));

	struct hist lat __attribute__((aligned(CACHELINE)));
	/* Write and flush latencies. Only a write job's slots are
	 * initialised and touched (stats_init_writes), so a read job's
	 * pages of them stay unallocated zero pages. */
	struct hist wlat;
	struct hist slat;
	struct hist tlat;		/* trims: a write job's, as wlat */
	/* What the sampler reads of lat, wlat and slat each interval: the
	 * values since its last row (histogram.h), attached to them. */
	struct hist_ring lat_ring, wlat_ring, slat_ring;
} __attribute__((aligned(CACHELINE)));

/* Publication: a store that makes everything the writer did before it
 * visible to a reader that loads it (release/acquire). Plain moves on
 * x86-64; on arm64 ldar/stlr. For flags and rarely written fields (tid,
 * running, done, failed, end_ns), which readers act upon. */
#define STAT_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STAT_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Single-writer increment of a hot counter: relaxed, no locked
 * instruction, no ordering constraint on the I/O path. */
static inline void stat_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/*
 * A job's slots in the run's counter arena, in this order: its workers,
 * the cpu probe, the offload helpers (loop=, offload=K), and one prefetch
 * helper per worker (prefetch=populate|touch). Helpers publish their
 * tid and faults there; their ops stay 0. worker_slots() lays them out.
 */
/* @n requests pushed to the kernel in one call, @inflight in flight
 * counting them (fio's io_u_mark_depth and io_u_mark_submit). */
static inline void stats_mark_submit(struct thread_stats *st, unsigned n, unsigned inflight)
{
	stat_add(&st->depth.level[fiostat_level_bucket(inflight)], n);
	stat_add(&st->depth.submit[fiostat_batch_bucket(n)], 1);
}

/* One reap returned @n requests (fio's io_u_mark_complete). */
static inline void stats_mark_complete(struct thread_stats *st, unsigned n)
{
	stat_add(&st->depth.complete[fiostat_batch_bucket(n)], 1);
}

struct job_slots {
	unsigned workers;
	unsigned probe, nprobe;
	unsigned offload, noffload;
	unsigned prefetch, nprefetch;
	unsigned total;
};

/* Make @st ready to count writes and flushes: their histograms emptied,
 * with rings as its read latencies have them.
 * Before the worker starts, for write jobs only. */
void stats_init_writes(struct thread_stats *st);
/* The calling thread's own major and minor faults and voluntary context
 * switches (getrusage RUSAGE_THREAD). 0 or -errno. */
int stats_thread_usage(uint64_t *majflt, uint64_t *minflt, uint64_t *nvcsw);
/* The calling thread's time on a CPU and waiting for one, in ns
 * (/proc/thread-self/schedstat). 0 or -errno. */
int stats_thread_sched(uint64_t *cpu_ns, uint64_t *wait_ns);
/* The same of another task, read by the run controller at a job's ramp
 * end (/proc/PID/task/TID/schedstat), and its voluntary context switches
 * (status). 0 or -errno. */
int stats_task_sched(pid_t pid, pid_t tid, uint64_t *cpu_ns, uint64_t *wait_ns, uint64_t *nvcsw);
/* The calling thread's user and system CPU time in ns and its
 * involuntary context switches (getrusage RUSAGE_THREAD). 0 or -errno. */
int stats_thread_cpu(uint64_t *utime_ns, uint64_t *stime_ns, uint64_t *nivcsw);

#endif
