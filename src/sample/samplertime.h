/*
 * samplertime.h - where a delayacct=1 job's threads' time went
 * (samplertime.c, taskstats): its time_* cells of a row and its result.
 */
#ifndef FAULTLINE_SAMPLERTIME_H
#define FAULTLINE_SAMPLERTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "out/results.h"
#include "sample/samplebase.h"

/* delayacct=1: set-up at sampler_create (0 or -ENOMEM),
 * a job's start, its time_* figures of a row in @tenths (true when it
 * has them; after the faults loop, which reads its workers' CPU time),
 * its result, and the socket's end. */
int sampler_time_setup(struct sampler *s);
void sampler_time_start(struct sampler *s, unsigned j, uint64_t start_ns);
bool sampler_time_row(struct sampler *s, unsigned j, uint64_t now, bool ramp, unsigned *tenths);
void sampler_time_result(const struct sampler *s, unsigned j, struct job_result *r);
void sampler_time_close(struct sampler *s);

#endif
