/*
 * crew.h - who runs a job: its workers (threads, or with thread=0
 * processes) and the CPU probe.
 *
 * Every worker of a job descends from one task, the crew's leader: a
 * thread of the run made ready before the job starts (crew_lead), or
 * the worker process of a mem_limit job (jobhost.c). The leader waits
 * for the start, then calls crew_spawn and crew_join. The per-job
 * kernel counters (perfev.h) are opened on the leader while it waits,
 * with inherit, so they count exactly the job's tasks; the CPU probe is
 * started by the run itself (crew_probe_start), outside that tree,
 * because its work is not the job's.
 *
 * With thread=0 (fio's default, not faultline's) crew_spawn forks one
 * process per worker. Each does its engine's job_setup itself (mmap:
 * its own mapping, in its own address space) and dies with the leader
 * (PR_SET_PDEATHSIG); counters, latency histograms and the job's stop
 * flag are in the shared arena (stats.h), which the sampler reads the
 * same way for threads and processes.
 */
#ifndef FAULTLINE_CREW_H
#define FAULTLINE_CREW_H

#include <pthread.h>
#include <stdbool.h>

#include "lib/err.h"
#include "lib/stats.h"
#include "run/worker.h"
#include "telemetry/cgroup.h"

struct crew {
	struct work wk;			/* what the workers share */
	/* mem_limit: the cgroup the crew runs in, to say what it held when
	 * a worker process is killed (set in the worker process). */
	const struct cgroup *cg;
	unsigned nworkers;
	struct worker *workers;
	struct thread_stats *probe;	/* cpu_probe thread's slot, or NULL */
	pthread_t probe_thread;
	bool probe_started;
	int probe_stop;
	/* The leader thread (crew_lead): none under mem_limit, where the
	 * worker process leads. */
	pthread_t leader;
	bool leader_started;
	pid_t leader_tid;
	/* Its start signal: a condition variable rather than a pipe, which
	 * worker processes forked meanwhile would inherit and hold open. */
	pthread_mutex_t lead_mu;
	pthread_cond_t lead_cv;
	int lead_state;
};

/* Start every worker in the calling process: threads, or with thread=0
 * processes. They run until done, the stop flags or wk.deadline_ns. A
 * worker that cannot be started fails the job; those never started
 * count as done. */
int crew_spawn(struct crew *c, struct err *e);
/* Wait for every worker crew_spawn started. A worker process killed by
 * a signal fails its slot, and stops the job's other workers. */
void crew_join(struct crew *c);

/* A leader thread in the calling process, waiting; c->leader_tid is its
 * thread id once this returns 0. crew_lead_go starts it (it spawns and
 * joins the crew, then ends); crew_lead_join waits for it, and one
 * never started just ends. */
int crew_lead(struct crew *c, struct err *e);
void crew_lead_go(struct crew *c);
void crew_lead_join(struct crew *c);

/* The CPU probe, in the calling process (cpu_probe=1; else no-ops). */
void crew_probe_start(struct crew *c);
void crew_probe_stop(struct crew *c);

/* Record @e as the job's failure (its first slot), from any process. */
void crew_fail(struct crew *c, const struct err *e);
/* True once every worker has published done (the sampler's view). */
bool crew_done(const struct crew *c);
/* Every worker has ended its timed part (a verify read-back or a final
 * write-back may still run). */
bool crew_timed_part_ended(const struct crew *c);
/* Mark every slot of the job done: its worker process has gone. */
void crew_mark_done(struct crew *c);

#endif
