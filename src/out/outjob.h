/*
 * outjob.h - a job as the writers (summary, JSON, MPI's aggregate) see
 * it: the options they print, resolved once from struct job when the
 * run's results are collected (out_job_set), and the predicates they ask
 * (does it write, flush, ...) as plain flags. The names are struct job's,
 * so a field reads the same in the writers as in the option table.
 *
 * Not here: what the user wrote and the resolved option list in fio's
 * JSON ("job options" and jobs[].faultline.options). Those walk the
 * option table, which formats struct job itself, so job_result keeps the
 * job for them alone (job_result.options).
 */
#ifndef FAULTLINE_OUTJOB_H
#define FAULTLINE_OUTJOB_H

#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"

struct out_job {
	char name[JOB_NAME_MAX];
	char ioengine[32];
	enum rw_mode rw;
	uint64_t bs;
	unsigned iodepth, numjobs;
	bool direct, stonewall, delayacct;
	enum coe_mode continue_on_error;

	/* What the threads did with the bytes and the page cache. */
	enum touch_mode touch;
	uint64_t touch_stride;
	enum madv_mode madvise;
	enum fadv_mode fadvise;

	/* loop=, offload=, prefetch= */
	unsigned loop, offload_permits;
	enum prefetch_mode prefetch;
	uint64_t prefetch_window;

	/* Writes: the mix, the flush policy, verify. */
	unsigned rwmixread;
	unsigned fsync_every, fdatasync_every;
	uint64_t sync_interval_ns;
	bool end_fsync;
	enum sync_mode sync;
	enum verify_mode verify;

	/* bufpool, vmcache */
	uint64_t pool_size, pool_page;
	enum pool_io_mode pool_io;
	unsigned pool_prefetch;

	/* read_iolog, write_iolog: the strings live as long as the job */
	const char *read_iolog, *write_iolog, *replay_redirect;
	unsigned replay_time_scale;
	bool replay_no_stall;

	/* fio's run control: steady state, latency_target */
	enum ss_metric ss_metric;
	bool ss_slope, ss_pct;
	double ss_limit;
	uint64_t ss_dur_ns;
	uint64_t latency_target_ns, latency_window_ns;
	double latency_percentile;

	/* job/job.h's predicates, as the job answers them */
	bool reads, writes, writes_data, mixed, trims, flushes, flush_datasync, paced;
};

/* @o from @j's resolved options. */
void out_job_set(struct out_job *o, const struct job *j);

#endif
