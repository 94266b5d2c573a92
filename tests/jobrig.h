/*
 * tests/jobrig.h - one job run for real by the run layer (job_run_*),
 * with an engine of the test's own: the job from option lines
 * (testjob.h), its counters' arena, prepared; the test may look at what
 * was prepared, then jobrig_go puts its engine in and runs the job to
 * its end. Include after cmocka.h; jobrig_free releases it all.
 */
#ifndef FAULTLINE_JOBRIG_H
#define FAULTLINE_JOBRIG_H

#include <string.h>

#include "engines/engine.h"
#include "lib/stats.h"
#include "run/arena.h"
#include "run/jobrun.h"
#include "testjob.h"

struct rig {
	struct job job;
	struct job_run jr;
	struct arena arena;
	int stop;
};

/* @opts: NAME, VALUE, ..., NULL, as job_of takes them. */
static inline void jobrig_prepare(struct rig *g, const char *const *opts)
{
	struct err e = { 0 };

	memset(g, 0, sizeof(*g));
	job_of(&g->job, opts);
	assert_int_equal(arena_create(&g->arena, job_run_nstats(&g->job)), 0);
	if (job_run_prepare(&g->jr, &g->job, 0, g->arena.ts, &g->stop, NULL, &e))
		fail_msg("prepare: %s", e.msg);
}

/* The job's workers run @ops instead of its engine, to their end. */
static inline void jobrig_go(struct rig *g, const struct engine_ops *ops)
{
	struct err e = { 0 };

	g->jr.crew.wk.ops = ops;
	assert_int_equal(job_run_start(&g->jr, &e), 0);
	job_run_join(&g->jr);
}

/* As jobrig_go, with the job's clock started at @start_ns (monotonic
 * ns) rather than now: one in the past stands for workers that first
 * ran that late (a starved host), its runtime perhaps over already. */
static inline void jobrig_go_at(struct rig *g, const struct engine_ops *ops, uint64_t start_ns)
{
	struct err e = { 0 };

	g->jr.crew.wk.ops = ops;
	assert_int_equal(job_run_ready(&g->jr, &e), 0);
	assert_int_equal(job_run_go(&g->jr, start_ns, &e), 0);
	job_run_join(&g->jr);
}

static inline void jobrig_free(struct rig *g)
{
	job_run_destroy(&g->jr);
	arena_destroy(&g->arena);
	option_release(&g->job);
}

#endif
