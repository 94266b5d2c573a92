/*
 * rankresult.h - the summary and JSON of an MPI launch: every
 * rank's results go to rank 0, which writes each rank's jobs (with that
 * rank's host facts and telemetry) and, per job, an aggregate over the
 * ranks whose latency percentiles come from the merged histograms.
 */
#ifndef FAULTLINE_RANKRESULT_H
#define FAULTLINE_RANKRESULT_H

#include <stdio.h>

#include <jansson.h>

#include "lib/err.h"
#include "out/results.h"

struct rank_outputs {
	int nranks;
	char **hosts;			/* per rank */
	bool *lost;			/* per rank: rank 0 stopped hearing from it */
	char **normal;			/* per rank: its summary text */
	json_t **json;			/* per rank: its JSON document */
	struct run_result agg;		/* the aggregate: one job per job of rank 0 */
	struct write_result *agg_w;	/* agg.jobs[j].w points in here */
	unsigned json_flags;		/* JSON_OUT_PLUS: json+ (every rank's and the aggregate's) */
};

/* Collective. With @want_normal / @want_json, each rank renders its own
 * summary / JSON (with @json_flags, json_out.h) for rank 0. Rank 0's @o
 * is filled; elsewhere it stays empty. */
int rankresult_gather(const struct run_result *mine, bool want_normal, bool want_json,
		      unsigned json_flags, struct rank_outputs *o, struct err *e);
/* Rank 0: every rank's summary, then the aggregate's jobs. */
int rankresult_report(FILE *f, const struct rank_outputs *o);
/* Rank 0: the merged JSON document (new reference), NULL when out of memory. */
json_t *rankresult_json(const struct rank_outputs *o);
void rankresult_free(struct rank_outputs *o);

/* The aggregate of @n ranks' results of one job into @out (@w: its
 * write side when the job writes, else NULL; @ranks and @hosts name each
 * input): counts summed, runtime the longest, histograms merged, the
 * first error named by its rank and host. Exposed for the unit test. */
void rankresult_merge_job(struct job_result *out, struct write_result *w,
			  const struct job_result *const *in, const int *ranks, const char *const *hosts,
			  unsigned n);

#endif
