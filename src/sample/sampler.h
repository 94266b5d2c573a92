/*
 * sampler.h - every interval, the jobs' throughput next to the kernel's
 * evidence: one CSV row per running job, the live status line,
 * and at the end the telemetry totals of the summary and JSON.
 *
 * The run controller owns the clock and calls in at each interval
 * boundary (start + k * interval) and when a job ends. The sampler sees
 * a job only through struct sampler_job: its options, its counter slots
 * in the arena and its targets; it reads those counters and /proc and
 * /sys, and never stops or slows a worker. The one thing it may ask of
 * the run, to stop (its CSV reader went away), it asks through the stop
 * flag it is handed.
 */
#ifndef FAULTLINE_SAMPLER_H
#define FAULTLINE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "telemetry/cgroup.h"
#include "lib/err.h"
#include "job/job.h"
#include "out/results.h"
#include "sample/samplercfg.h"
#include "lib/stats.h"
#include "engines/target.h"

struct sampler;


/* Opens the CSV and every /proc and /sys source once. */
int sampler_create(struct sampler **sp, const struct sampler_config *cfg, struct err *e);
void sampler_begin(struct sampler *s, uint64_t now);
/* Under MPI: epoch_ms counts from rank 0's start, @epoch0_ms, so every
 * rank's rows carry the same wall clock. */
void sampler_set_epoch0(struct sampler *s, uint64_t epoch0_ms);
/* Job @job is ready to start: the system and device counters its first
 * row counts from, read before any of its requests, and its own kernel
 * counters opened on @leader, the task all its threads and processes
 * will descend from (0: none). */
void sampler_job_ready(struct sampler *s, unsigned job, pid_t leader);
/* Job @job started at @start_ns (its measured part begins at
 * @ramp_end_ns, or at once when 0); @cg is its mem_limit cgroup, or
 * NULL, valid until sampler_job_ended. */
void sampler_job_started(struct sampler *s, unsigned job, uint64_t start_ns,
			 uint64_t ramp_end_ns, struct cgroup *cg);
/* The measured part of job @job starts now (at the end of its ramp_time). */
void sampler_job_measure_start(struct sampler *s, unsigned job, uint64_t now);
/* An interval boundary at @now, first part: every running job's
 * counters, read together (a few loads per thread) before the
 * controller does anything slower in its pass, such as ending jobs.
 * Returns the moment the rows end: @now, or later when a held-up pass
 * was taken again. Optional: sampler_tick takes them itself when not
 * done at the moment it is given. */
uint64_t sampler_tick_begin(struct sampler *s, uint64_t now);
/* An interval boundary: a row for every job that ran in it, from the
 * counters read at sampler_tick_begin; the slower sources now. */
void sampler_tick(struct sampler *s, uint64_t now);
/* Job @job has ended (its workers joined): its last, partial row. */
void sampler_job_ended(struct sampler *s, unsigned job, uint64_t now);
/* The rows made since the last flush go out to the CSV now, in one
 * write: the controller calls it at the end of each pass (a tick
 * flushes its own). */
void sampler_flush(struct sampler *s);
/* Fill the telemetry parts of @res. */
void sampler_end(struct sampler *s, uint64_t now, struct run_result *res);
void sampler_destroy(struct sampler *s);

/* The CSV header, made from the column table (samplecols.c) that makes
 * every row: the man page's CSV COLUMNS, in order. */
const char *sampler_csv_header(void);

#endif
