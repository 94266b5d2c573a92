/*
 * placement.h - where a worker runs and where its memory comes from:
 * cpus_allowed (sched_setaffinity), numa_cpu_nodes and numa_mem_policy
 * (libnuma), applied by each worker to itself before it allocates.
 */
#ifndef FAULTLINE_PLACEMENT_H
#define FAULTLINE_PLACEMENT_H

#include <sched.h>

#include "lib/err.h"
#include "job/job.h"

/* Parse a CPU list ("0-3,6,8-9") into @set. -EINVAL with message. */
int placement_parse_cpus(const char *list, cpu_set_t *set, struct err *e);
/* Check the job's placement options against this host (CPUs and nodes
 * that exist, libnuma available). Run before anything starts. */
int placement_check(const struct job *j, struct err *e);
/* Apply to the calling thread. */
int placement_apply(const struct job *j, struct err *e);

#endif
