/*
 * tests/testjob.h - a job from option lines, for the unit tests: the
 * defaults first, then each NAME, VALUE pair as a job file gives it
 * (option_set), failing the test on a refusal. Include after cmocka.h;
 * the caller releases the job (option_release).
 */
#ifndef FAULTLINE_TESTJOB_H
#define FAULTLINE_TESTJOB_H

#include "job/options.h"
#include "job/workloadcfg.h"
#include "lib/err.h"
#include "job/job.h"

/* @opts: NAME, VALUE, NAME, VALUE, ..., NULL. */
static inline void job_of(struct job *j, const char *const *opts)
{
	struct err e = { 0 };

	option_defaults(j);
	for (unsigned i = 0; opts[i]; i += 2)
		if (option_set(j, opts[i], opts[i + 1], &e))
			fail_msg("%s=%s: %s", opts[i], opts[i + 1], e.msg);
}

/* What the workload layer sees of @j, resolved as a run resolves it.
 * One struct per test file, filled again by each call: the workload's
 * functions copy what they keep, so a call's result lives until the
 * next call. */
static inline const struct workload_job *wl_of(const struct job *j)
{
	static struct workload_job wj;

	workloadcfg_resolve(&wj, j);
	return &wj;
}

#endif
