/*
 * collect.h - a job's results taken from its workers' counters (collect.c).
 */
#ifndef FAULTLINE_COLLECT_H
#define FAULTLINE_COLLECT_H

#include <stdint.h>

#include "run/runstate.h"

/* The measured part of job @j starts at @now: its counters are copied so
 * that the totals leave the ramp out. */
void collect_base(struct run *r, unsigned j, uint64_t now);

/* Job @j has ended: its totals, figures and errors into r->res. */
void collect_job(struct run *r, unsigned j);

#endif
