/*
 * sampler.h - every interval, the jobs' throughput next to the kernel's
 * evidence (SPEC 6): one CSV row per running job, the live status line,
 * and at the end the telemetry totals of the summary and JSON.
 *
 * The run controller owns the clock and calls in at each interval
 * boundary (start + k * interval) and when a job ends. The sampler reads
 * only the workers' published counters and /proc and /sys; it never
 * stops or slows a worker.
 */
#ifndef FAULTLINE_SAMPLER_H
#define FAULTLINE_SAMPLER_H

#include <stdint.h>

#include "err.h"
#include "results.h"

struct run;
struct sampler;

/* Opens the CSV and every /proc and /sys source once. */
int sampler_create(struct sampler **sp, struct run *r, struct err *e);
void sampler_begin(struct sampler *s, uint64_t now);
/* Job @job is ready to start: the system and device counters its first
 * row counts from, read before any of its requests. */
void sampler_job_ready(struct sampler *s, unsigned job);
/* Job @job started at its start_ns; without ramp_time that is also the
 * start of its measured part. */
void sampler_job_started(struct sampler *s, unsigned job);
/* The measured part of job @job starts now (at the end of its ramp_time). */
void sampler_job_measure_start(struct sampler *s, unsigned job, uint64_t now);
/* An interval boundary: a row for every job that ran in it. */
void sampler_tick(struct sampler *s, uint64_t now);
/* Job @job has ended (its workers joined): its last, partial row. */
void sampler_job_ended(struct sampler *s, unsigned job, uint64_t now);
/* Fill the telemetry parts of @res. */
void sampler_end(struct sampler *s, uint64_t now, struct run_result *res);
void sampler_destroy(struct sampler *s);

/* The CSV header, exactly SPEC 7's columns in order. */
extern const char sampler_csv_header[];

#endif
