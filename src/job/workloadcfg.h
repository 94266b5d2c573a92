/*
 * workloadcfg.h - what the workload layer sees of a job (struct
 * workload_job, workload/workload.h), made from the job once by whoever
 * holds it: the run when it prepares the job, a check of the job file,
 * faultline --verify.
 */
#ifndef FAULTLINE_WORKLOADCFG_H
#define FAULTLINE_WORKLOADCFG_H

#include "job/job.h"
#include "workload/workload.h"

/* Fill all of @wj from @j; its pointers point into @j. */
void workloadcfg_resolve(struct workload_job *wj, const struct job *j);

#endif
