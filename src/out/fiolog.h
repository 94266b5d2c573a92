/*
 * fiolog.h - fio's per-interval log files (write_bw_log, write_iops_log,
 * write_lat_log), so the scripts users keep for fio's logs read
 * faultline's.
 *
 * File names and lines are fio 3.33's: <prefix>_bw.<n>.log (or
 * <prefix>_bw.log with per_job_logs=0), where n numbers every worker
 * thread of the run from 1 in job order, as fio numbers its threads; a
 * line is "time_ms, value, direction, block size, priority" (with
 * log_offset=1 the offset comes before the priority). Values are fio's
 * units: KiB/s, IOPS, latency in ns.
 *
 * The sampler hands in each thread's share of each measured interval;
 * this module averages intervals into entries of log_avg_msec (at least
 * one interval: faultline samples per interval, it never logs each I/O)
 * and writes them as the run goes, so a killed run keeps its entries.
 * Like fio's windowed logs, an entry is an average, so its block size
 * and offset are 0, and a window in which a thread completed nothing
 * has no entry. With log_prio=1 the priority column holds an ioprio
 * value (fio's averaged entries hold 0): the job's own (prioclass/prio),
 * and with cmdprio_* a thread's window has an entry per priority its
 * requests carried, so each priority's share and latency show.
 */
#ifndef FAULTLINE_FIOLOG_H
#define FAULTLINE_FIOLOG_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "job/job.h"
#include "lib/stats.h"

struct fiolog;

/* A job as the sampler hands it to the logs: its options, read once
 * by fiolog_create (the intervals read only what it kept), and how many
 * worker threads. */
struct fiolog_job {
	const struct job *job;
	unsigned nthreads;
};

/* fio's data directions, numbered as its logs number them. */
enum fiolog_dir { FIOLOG_READ, FIOLOG_WRITE, FIOLOG_DIRS };

struct fiolog_dirsample {
	uint64_t ops, bytes;
	uint64_t lat_n;		/* requests timed (latency=1) */
	uint64_t lat_sum_ns;	/* their latencies, summed */
	uint64_t lat_max_ns;	/* the largest (log_window_value=max, both) */
};

/* One worker's share of one interval, per direction; with log_prio and
 * cmdprio_*, also per priority (entries of workload/prio.h's table). */
struct fiolog_sample {
	struct fiolog_dirsample dir[FIOLOG_DIRS];
	struct fiolog_dirsample prio[FIOLOG_DIRS][STATS_PRIO_MAX];
};

/*
 * Creates (truncates) every log file the jobs ask for, so a file that
 * cannot be made is an error before anything runs. *@lp is NULL when no
 * job logs. @interval_ns is the sampling period; a job whose
 * log_avg_msec is shorter draws one warning through @warn.
 */
int fiolog_create(struct fiolog **lp, const struct fiolog_job *jobs, unsigned njobs,
		  uint64_t interval_ns, void (*warn)(const char *msg), struct err *e);

/*
 * Job @job's measured interval of @dt_ns ending @t_ms after its measured
 * start: @th holds each of its threads' share. @last: the job's final
 * interval, cut short when it ended (fiolog_job_end writes its entries).
 * Writes the entries whose window is complete. A file that cannot be
 * written warns once and takes no more entries.
 */
void fiolog_interval(struct fiolog *l, unsigned job, uint64_t t_ms, uint64_t dt_ns,
		     const struct fiolog_sample *th, bool last);
/* Does job @job write any of fio's logs (its threads' shares are read)? */
bool fiolog_logs(const struct fiolog *l, unsigned job);

/* Job @job ended @t_ms after its measured start: the entries of its last
 * window, latency only when it is not a whole one. */
void fiolog_job_end(struct fiolog *l, unsigned job, uint64_t t_ms);

/* Closes every file; @l may be NULL. */
void fiolog_close(struct fiolog *l);

#endif
