/*
 * runstate.h - what the run controller keeps (struct run): the jobs, the
 * counter arena and its bases, the sampler's view, the stop flag and the
 * results. Its own header so that the controller's parts (run.c, which
 * runs the groups, and collect.c, which turns counters into results)
 * share it without including each other.
 */
#ifndef FAULTLINE_RUNSTATE_H
#define FAULTLINE_RUNSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/jobfile.h"
#include "out/results.h"
#include "run/jobrun.h"
#include "run/runctl.h"
#include "lib/stats.h"
#include "run/arena.h"

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
	struct arena arena;
	struct target_hooks hooks;
	int *stop;			/* set by SIGINT/SIGTERM; shared with worker processes */
	bool *job_started, *job_ended;
	uint64_t *job_base_ns;		/* start of the measured part */
	struct thread_stats *base;	/* per slot: counters at the start of the measured part */
	bool *base_taken;
	bool *rows_ended;		/* the sampler ended the job's rows */
	struct sampler_job *views;	/* what the sampler sees of each job */
	struct sampler *sampler;
	/* Under MPI: the exchange of rows and flags with the
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

#endif
