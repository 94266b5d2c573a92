/*
 * jobrun.h - a job at run time: what the immutable struct job becomes
 * once its targets are open.
 *
 * It has three parts, one per concern:
 *   what it reads   the targets and the shared scan cursors (here)
 *   who runs it     the crew: worker threads, their counter slots, the
 *                   CPU probe (crew.h); workers as processes go there
 *   where it runs   reserve_mem, the mem_limit cgroup and the worker
 *                   process (jobhost.h)
 * The run controller (run.c) prepares every job first, then readies and
 * starts the jobs of a stonewall group together; a barrier across hosts
 * belongs there, between job_run_ready and job_run_go.
 */
#ifndef FAULTLINE_JOBRUN_H
#define FAULTLINE_JOBRUN_H

#include <stdbool.h>
#include <stdint.h>

#include "run/crew.h"
#include "lib/err.h"
#include "workload/gen.h"
#include "job/job.h"
#include "run/jobhost.h"
#include "workload/iolog.h"
#include "lib/stats.h"
#include "engines/target.h"

struct job_run {
	const struct job *job;
	unsigned index;			/* position in the run */
	const struct target_hooks *hooks;

	/* What it reads. */
	unsigned ntargets;
	struct target *targets;
	struct gen_cursor *cursors;	/* ntargets, scan=shared; a shared mapping */
	size_t cursors_len;

	/* read_iolog: the logs' requests, and whether they were loaded;
	 * the targets are then the files the logs name (or the redirect). */
	struct replay_set replay;
	bool replaying;

	struct crew crew;		/* who runs it */
	struct job_host host;		/* where it runs */
	bool setup_done;		/* the engine's job_setup ran */
	/* Stuck (run/stuck.h): left running, never joined; nothing its
	 * workers may still touch is freed. */
	bool abandoned;
};

/* How many thread_stats slots a job needs (job_slots.total). */
unsigned job_run_nstats(const struct job *job);
/* Prepare a job: open (and lay out) its targets, check contradictions that
 * need the targets (lbs, device end), build workers. Nothing runs yet.
 * @stats: its job_run_nstats slots; @stop: the run's stop flag. */
int job_run_prepare(struct job_run *jr, const struct job *job, unsigned index,
		    struct thread_stats *stats, int *stop,
		    const struct target_hooks *hooks, struct err *e);
/*
 * Starting is two steps so that the jobs of a group start at one moment:
 * job_run_ready does everything before the first request (cache
 * invalidation, reserve_mem, engine set-up, cgroup and worker process,
 * prewarm); job_run_go sets the job's clock to @start_ns and lets the
 * workers run until done, *stop, or the deadline. Either undoes itself
 * on failure. job_run_start is both, starting now.
 */
int job_run_ready(struct job_run *jr, struct err *e);
int job_run_go(struct job_run *jr, uint64_t start_ns, struct err *e);
int job_run_start(struct job_run *jr, struct err *e);
/* Between ready and join: the task every thread and process of the job
 * descends from (the crew's leader thread, or the mem_limit worker
 * process), where per-job kernel counters are attached. */
pid_t job_run_leader(const struct job_run *jr);
/* True once every worker has exited (the sampler's view). */
bool job_run_finished(struct job_run *jr);
/* Wait for every worker of the job, and give back what it held. */
void job_run_join(struct job_run *jr);
void job_run_destroy(struct job_run *jr);

#endif
