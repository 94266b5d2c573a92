/*
 * run.h - the run controller: prepares every job, runs them in
 * stonewall groups, wakes the sampler every interval on an absolute
 * clock, and turns counters into results for the writers.
 */
#ifndef FAULTLINE_RUN_H
#define FAULTLINE_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/err.h"
#include "job/jobfile.h"
#include "out/results.h"
#include "run/jobrun.h"
#include "run/runctl.h"
#include "lib/stats.h"

struct sampler;
struct sampler_job;
struct rankrows;

struct run_opts {
	uint64_t interval_ns;		/* sampling period */
	const char *csv_path;		/* NULL = no CSV, "-" = stdout */
	bool status_line;		/* live line on stderr */
	/* After a stop request, how long a job may take to stop before it
	 * is given up as stuck (run/stuck.h); 0: the default. */
	uint64_t stop_grace_ns;
};

struct run {
	struct run_opts opts;
	const struct joblist *jl;
	unsigned njobs;
	struct job_run *jrs;
	unsigned *stat_first;		/* each job's first slot in the arena */
	struct stats_arena arena;
	struct target_hooks hooks;
	int *stop;			/* set by SIGINT/SIGTERM; shared with worker processes */
	bool *job_started, *job_ended;
	uint64_t *job_base_ns;		/* start of the measured part */
	struct thread_stats *base;	/* per slot: counters at the start of the measured part */
	bool *base_taken;
	bool *rows_ended;		/* the sampler ended the job's rows */
	struct sampler_job *views;	/* what the sampler sees of each job */
	struct sampler *sampler;
	/* Under MPI (SPEC 14): the exchange of rows and flags with the
	 * other ranks; NULL otherwise. */
	struct rankrows *rows;
	uint64_t t0;			/* the run's start, the sampler's time zero */
	/* fio's run control (runctl.h): each job's fio group (new_group,
	 * stonewall), whether its end was acted on, its steady state, and
	 * whether exit_what=all ended the run. */
	unsigned *groupid;
	bool *exit_fired;
	struct ss_state *ss;
	bool exitall_any;		/* some job says exitall (fio: then it holds for all) */
	bool exit_all;
	struct pace_flow *flows;	/* flow: one per flow_id used, shared mapping */
	size_t flow_len;
	uint64_t stop_ns;		/* when the controller first saw *stop set */
	unsigned nabandoned;		/* stuck jobs left running (job_run.abandoned) */
	struct run_result res;
};

int run_prepare(struct run *r, const struct joblist *jl, const struct run_opts *o,
		struct err *e);
/* Runs every job; 0 when all ran (even if some failed: see results),
 * -errno when the run could not proceed at all. */
int run_execute(struct run *r, struct err *e);
/* Ask the run to stop (signal-safe: one store). */
void run_request_stop(struct run *r);
void run_destroy(struct run *r);

#endif
