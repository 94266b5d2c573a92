/*
 * jobhost.h - where a job runs: the memory it holds back from the host
 * (reserve_mem), the memory cgroup it runs in (mem_limit), and the
 * worker process that joins that cgroup and runs the crew
 * (memory is charged per address space, so a thread alone cannot be
 * limited).
 *
 * The worker process is forked ready (in its cgroup, prewarmed) and
 * waits for its start time, so the jobs of a group start together
 * whether they run in threads or in a process. It dies with the run
 * (PR_SET_PDEATHSIG), even a run killed by SIGKILL.
 */
#ifndef FAULTLINE_JOBHOST_H
#define FAULTLINE_JOBHOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "telemetry/cgroup.h"
#include "run/crew.h"
#include "lib/err.h"
#include "run/reserve.h"

struct job_host {
	struct reserve reserve;		/* reserve_mem, held while the job runs */
	struct cgroup cg;		/* mem_limit */
	bool has_cg;
	pid_t child;			/* mem_limit: the process the crew runs in */
	int child_go;			/* its start pipe, open between ready and go */
	int child_status;
	bool child_reaped;
};

void jobhost_init(struct job_host *h);
/* mem_limit: create the job's cgroup below faultline's own. */
int jobhost_cgroup(struct job_host *h, const char *name, uint64_t limit, struct err *e);
/*
 * Fork the process @c will run in. It joins the cgroup, runs @prepare
 * (prewarm, so the pages are charged to the cgroup), says it is ready
 * and waits; jobhost_go hands it the crew's clock, then it runs the
 * crew and exits. Returns once the process is ready, or -errno with the
 * process gone.
 */
int jobhost_fork(struct job_host *h, struct crew *c,
		 int (*prepare)(void *arg, struct err *e), void *arg, struct err *e);
static inline bool jobhost_forked(const struct job_host *h)
{
	return h->child > 0;
}
/* Start the waiting worker process with @c's clock. */
int jobhost_go(struct job_host *h, const struct crew *c, struct err *e);
/* True once the worker process has exited (without blocking). */
bool jobhost_exited(struct job_host *h);
/* Wait for the worker process; one killed by a signal (the OOM killer)
 * fails the job in @c's first slot. Every slot then counts as done. */
void jobhost_wait(struct job_host *h, struct crew *c);
/*
 * What @c's worker process is charged once set up, file pages
 * excluded: a dry start in a cgroup @name with no limit, the crew at the
 * job's thread count (threads, or thread=0 processes) set up as for the
 * run, held, measured, and sent away without a request. Returns 0 with
 * *@charge in bytes, or -errno.
 */
int jobhost_measure(struct crew *c, const char *name, uint64_t *charge, struct err *e);
/* Give back what the job held: its cgroup, its reserved memory. */
void jobhost_release(struct job_host *h);

#endif
