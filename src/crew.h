/*
 * crew.h - who runs a job: its worker threads and the CPU probe.
 *
 * A crew is started and joined in one process: the run's own, or the
 * worker process of a mem_limit job (jobhost.c), which calls the same
 * two functions inside its cgroup. Workers as processes (fio's
 * thread=0) would be a second way to start a crew, here.
 */
#ifndef FAULTLINE_CREW_H
#define FAULTLINE_CREW_H

#include <pthread.h>
#include <stdbool.h>

#include "err.h"
#include "stats.h"
#include "worker.h"

struct crew {
	struct work wk;			/* what the workers share */
	unsigned nworkers;
	struct worker *workers;
	struct thread_stats *probe;	/* cpu_probe thread's slot, or NULL */
	pthread_t probe_thread;
	bool probe_started;
	int probe_stop;
};

/* Start every worker (and the probe) in the calling process; they run
 * until done, the stop flags or wk.deadline_ns. A worker that cannot be
 * started fails the job; those never started count as done. */
int crew_spawn(struct crew *c, struct err *e);
/* Wait for every thread crew_spawn started. */
void crew_join(struct crew *c);
/* True once every worker has published done (the sampler's view). */
bool crew_done(const struct crew *c);
/* Mark every slot of the job done: its worker process has gone. */
void crew_mark_done(struct crew *c);

#endif
