/*
 * judge_pool.h - the buffer pools' evidence (judge_pool.c): what a pool's
 * own counters say of its run, and why vmcache's tail is longer than
 * bufpool's when it is. Called by judge.c's evidence for each engine.
 */
#ifndef FAULTLINE_JUDGE_POOL_H
#define FAULTLINE_JUDGE_POOL_H

#include <jansson.h>

#include "verdict/judge_types.h"

/* Engine @e's (a pool's) run in @doc: its hit ratio and evictions, and
 * for vmcache the TLB flushes its madvise calls cost. */
void judge_pool_evidence(struct judge_result *r, int e, json_t *doc,
			 const struct judge_host *h);
/* Workload @wi's cells: when vmcache's p99 is JUDGE_POOL_TAIL or more
 * above bufpool's, why, from vmcache's own counters. */
void judge_pool_tail_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
			      unsigned wi);

#endif
