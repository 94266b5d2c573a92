/*
 * runwrites.h - a writing job's part of its result (runwrites.c).
 */
#ifndef FAULTLINE_RUNWRITES_H
#define FAULTLINE_RUNWRITES_H

#include "out/results.h"
#include "run/jobrun.h"

/* @jr's writes, flushes and verify tally into @res->w (and its error
 * when blocks read back bad), counted from @base (its workers' counters
 * at the ramp's end). */
void run_collect_writes(const struct job_run *jr, const struct thread_stats *base,
			struct job_result *res);

#endif
