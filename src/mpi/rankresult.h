/*
 * rankresult.h - the summary and JSON of an MPI launch: every
 * rank's results go to rank 0, which gathers each rank's jobs (with that
 * rank's host facts and telemetry) and, per job, an aggregate over the
 * ranks whose latency percentiles come from the merged histograms, for
 * out/rankout.c to write.
 */
#ifndef FAULTLINE_RANKRESULT_H
#define FAULTLINE_RANKRESULT_H

#include <stdbool.h>

#include "lib/err.h"
#include "out/rankout.h"
#include "out/results.h"

/* Collective. With @want_normal / @want_json, each rank renders its own
 * summary / JSON (with @json_flags, json_out.h) for rank 0. Rank 0's @o
 * is filled; elsewhere it stays empty. */
int rankresult_gather(const struct run_result *mine, bool want_normal, bool want_json,
		      unsigned json_flags, struct rank_outputs *o, struct err *e);
/* Rank 0's outputs are written by out/rankout.h's rankout_report and
 * rankout_json, and freed by rankout_free. */

/* The aggregate of @n ranks' results of one job into @out (@w: its
 * write side when the job writes, else NULL; @ranks and @hosts name each
 * input): counts summed, runtime the longest, histograms merged, the
 * first error named by its rank and host. Exposed for the unit test. */
void rankresult_merge_job(struct job_result *out, struct write_result *w,
			  const struct job_result *const *in, const int *ranks, const char *const *hosts,
			  unsigned n);

#endif
