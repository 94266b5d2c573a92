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
#include "run/runstate.h"

int run_prepare(struct run *r, const struct joblist *jl, const struct run_opts *o,
		struct err *e);
/* Runs every job; 0 when all ran (even if some failed: see results),
 * -errno when the run could not proceed at all. */
int run_execute(struct run *r, struct err *e);
/* Ask the run to stop (signal-safe: one store). */
void run_request_stop(struct run *r);
void run_destroy(struct run *r);

#endif
