/*
 * samplercfg.h - what the sampler is given: each job as it sees it and
 * the run's sampling settings. Filled by run.c; read by sampler.c and
 * samplerow.c.
 */
#ifndef FAULTLINE_SAMPLERCFG_H
#define FAULTLINE_SAMPLERCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/job.h"
#include "lib/stats.h"
#include "engines/target.h"

/* What the sampler knows of one job. */
struct sampler_job {
	const struct job *job;
	const struct thread_stats *stats;	/* slots.total entries, laid out as slots */
	struct job_slots slots;
	unsigned nworkers;
	const struct target *targets;		/* whose devices it samples; */
	unsigned ntargets;			/* 0 for an engine without targets */
	bool pool;				/* the engine has a pool (bufpool, vmcache):
						 * its counters fill the pool_* columns */
	bool pool_batches;			/* ... evicting in batches (vmcache) */
};

struct sampler_config {
	uint64_t interval_ns;
	const char *csv_path;		/* NULL = no CSV, "-" = stdout */
	/* Under MPI rows go here instead of to a CSV of this
	 * process's own (rankrows.c), with the row's interval histograms
	 * (reads, writes, flushes; NULL where the job measures none) for
	 * the percentiles of the all row; NULL otherwise. */
	void (*row_sink)(void *arg, const char *line, size_t len, const struct hist *const lat[3]);
	void *row_sink_arg;
	bool status_line;		/* live line on stderr */
	int *stop;			/* set to stop the run */
	unsigned njobs;
	const struct sampler_job *jobs;	/* njobs, alive as long as the sampler */
};

#endif
