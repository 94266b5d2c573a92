/*
 * judge_matrix.h - the verdict's vocabulary (judge_matrix.c): what its
 * workloads and engines are called in the text and keyed in
 * verdict.json, the unit a workload is ranked in, and which engines each
 * workload of the fixed matrix runs.
 */
#ifndef FAULTLINE_JUDGE_MATRIX_H
#define FAULTLINE_JUDGE_MATRIX_H

#include <stdbool.h>

#include "verdict/judge_types.h"

const char *judge_workload_name(enum judge_workload w);	/* "uniform random 4k" */
const char *judge_workload_key(enum judge_workload w);		/* "uniform" */
const char *judge_engine_name(enum judge_engine e);		/* "mmap (madvise=random)" */
const char *judge_engine_key(enum judge_engine e);		/* "mmap-random" */
const char *judge_unit(const struct judge_wl *wl);		/* "IOPS", "MiB/s", "us p99" */
/* The fixed matrix's workload @w (not JW_JOB). */
void judge_wl_fixed(enum judge_workload w, struct judge_wl *wl);
/* Whether @e belongs to @wl's matrix. */
bool judge_engine_in(const struct judge_wl *wl, enum judge_engine e);

#endif
