/*
 * judge.h - the verdict's reasoning: from the JSON documents
 * of the runs of a verdict's matrix, per workload the winner, its ratio
 * over the runner-up with the spread across rounds, and evidence
 * sentences built from the measured numbers and the thresholds below.
 * A replayed trace is judged by what its log can say: the time to replay
 * all of it (JB_TIME), and a timed one also at its own pace (JB_P99 at
 * the trace's rate); its depth cell is shown beside the answer, not in it.
 *
 * Pure: it reads only the documents and the host facts it is given, so
 * it is tested on recorded results. Where a job's own kernel counters
 * (jobs[].faultline.events) are in a document they are used;
 * otherwise the system-wide figures of the run (faultline.system), said
 * so in the sentence; a number whose source is missing is left out of
 * the text, never shown as zero.
 */
#ifndef FAULTLINE_JUDGE_H
#define FAULTLINE_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "verdict/judge_matrix.h"
#include "verdict/judge_types.h"

/* The number a cell is ranked by (IOPS, MiB/s, or its p99 latency in
 * microseconds); false with @why filled when the run has none (a job
 * error). */
bool judge_metric(const struct judge_wl *wl, json_t *doc, double *v, char *why, size_t whylen);

/* Whether @e is ranked for @r's answer: it has a number, held the rate
 * (at a rate some engine held), and is no what-if (a replay's depth cell). */
bool judge_ranked(const struct judge_result *r, int e);
/* Whether the better of @r's figures is the lower one (a time, a p99). */
bool judge_lower_better(const struct judge_result *r);

/* A workload that ran and got a number from none of its engines (every
 * run failed): the verdict has no answer for it. */
bool judge_unanswered(const struct judge_result *r);
/* Judge workload @wl, the cells given with .wl == @wi (others are
 * skipped). */
void judge_workload(const struct judge_wl *wl, unsigned wi, const struct judge_cell *cells,
		    unsigned ncells, const struct judge_host *h, struct judge_result *r);

#endif
