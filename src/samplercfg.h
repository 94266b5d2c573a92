/*
 * samplercfg.h - what the sampler is given: each job as it sees it and
 * the run's sampling settings. Filled by run.c; read by sampler.c and
 * samplerow.c.
 */
#ifndef FAULTLINE_SAMPLERCFG_H
#define FAULTLINE_SAMPLERCFG_H

#include <stdbool.h>
#include <stdint.h>

#include "job.h"
#include "stats.h"
#include "target.h"

/* What the sampler knows of one job. */
struct sampler_job {
	const struct job *job;
	const struct thread_stats *stats;	/* slots.total entries, laid out as slots */
	struct job_slots slots;
	unsigned nworkers;
	const struct target *targets;		/* whose devices it samples; */
	unsigned ntargets;			/* 0 for an engine without targets */
	bool pool;				/* the engine has a pool (bufpool): its
						 * counters fill the pool_* columns */
};

struct sampler_config {
	uint64_t interval_ns;
	const char *csv_path;		/* NULL = no CSV, "-" = stdout */
	bool status_line;		/* live line on stderr */
	int *stop;			/* set to stop the run */
	unsigned njobs;
	const struct sampler_job *jobs;	/* njobs, alive as long as the sampler */
};

#endif
