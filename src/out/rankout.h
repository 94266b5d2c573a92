/*
 * rankout.h - what rank 0 of an MPI launch writes: every rank's summary
 * and the aggregate's jobs (rankout_report), the merged JSON document
 * (rankout_json), and, on stderr, what the ranks' exchanges have to say
 * (rankout_note): a rank lost, rows or results that came damaged, a CSV
 * that could not be written. mpi/ gathers the outputs and hands over the
 * notes as they happen (ranks_set_notes); the words are all here.
 */
#ifndef FAULTLINE_RANKOUT_H
#define FAULTLINE_RANKOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

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

/* Rank 0: every rank's summary, then the aggregate's jobs. */
int rankout_report(FILE *f, const struct rank_outputs *o);
/* Rank 0: the merged JSON document (new reference), NULL when out of memory. */
json_t *rankout_json(const struct rank_outputs *o);
void rankout_free(struct rank_outputs *o);

/* What happened in an exchange between ranks, for the user. */
enum rank_note_kind {
	RANK_NOTE_LOST,			/* rank 0 gave up waiting for @rank (@host): @secs, @what */
	RANK_NOTE_ROOT_GONE,		/* this rank heard nothing from rank 0 for @secs while
					 * @what; it ends in @end_secs */
	RANK_NOTE_TOO_BIG,		/* this rank had @bytes to send at once: the launch ends */
	RANK_NOTE_ROOT_TOO_BIG,		/* rank 0 was sent @bytes at once: the launch ends */
	RANK_NOTE_ROWS_OOM,		/* rank 0 could not merge the rows: the launch ends */
	RANK_NOTE_ROWS_DAMAGED,		/* @rank's rows came damaged: left out */
	RANK_NOTE_ROWS_DROPPED,		/* @rank ran out of memory holding rows: some missing */
	RANK_NOTE_CSV_PIPE,		/* the CSV's reader closed the pipe: the run stops */
	RANK_NOTE_CSV_FAILED,		/* writing the CSV @path failed with @err */
	RANK_NOTE_RESULTS_OOM,		/* @rank ran out of memory sending its results */
	RANK_NOTE_RESULTS_DAMAGED,	/* @rank's results came incomplete: left out */
	RANK_NOTE_STATS,		/* FAULTLINE_MPI_STATS=1: what the exchanges cost (@stats) */
};

/* What the row exchanges cost at rank 0. */
struct rank_stats {
	int nranks;
	uint64_t nexch, rows, bytes, ns_sum, ns_max;
	uint64_t ns_work;		/* ... of which parsing, merging, writing */
};

struct rank_note {
	enum rank_note_kind kind;
	int rank;
	const char *host;
	const char *what;		/* the exchange a wait was part of */
	double secs, end_secs;
	size_t bytes;
	const char *path;
	int err;			/* a positive errno */
	const struct rank_stats *stats;
};

/* @n as one line on @f. */
void rankout_note(FILE *f, const struct rank_note *n);

#endif
