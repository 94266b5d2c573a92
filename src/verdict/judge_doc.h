/*
 * judge_doc.h - how the judge reads a run's JSON document (judge_doc.c):
 * numbers by path, a run's seconds, and the kernel's figures the
 * evidence sentences rest on, each with where it came from. For judge.c
 * only.
 */
#ifndef FAULTLINE_JUDGE_DOC_H
#define FAULTLINE_JUDGE_DOC_H

#include <stdbool.h>

#include <jansson.h>

/* A figure, and where it came from. */
struct judge_ev {
	bool ok;
	double v;
	const char *src;	/* "the job's threads", "system-wide", ... */
	const char *key;	/* "job", "system", "device" */
};

/* "jobs.0.faultline.pool.hit_ratio": keys and array indexes by dots. */
json_t *judge_jpath(json_t *o, const char *path);
/* A number at @path; false when absent or null (a source not read). */
bool judge_jnum(json_t *doc, const char *path, double *v);
double judge_run_seconds(json_t *doc);	/* NAN unknown */
double judge_job_seconds(json_t *doc);	/* NAN unknown */
/* Reads and writes per second. */
bool judge_doc_iops(json_t *doc, double *v);
/* The p99 of the job's reads (of its writes when it read nothing), us. */
bool judge_doc_p99_us(json_t *doc, double *v);

struct judge_ev judge_ev_tlb(json_t *doc);		/* TLB shootdowns/s */
struct judge_ev judge_ev_direct(json_t *doc, bool *pages);	/* reclaim not by kswapd */
struct judge_ev judge_ev_kswapd(json_t *doc);		/* kswapd CPU % */
struct judge_ev judge_ev_read_amp(json_t *doc);		/* bytes brought in / asked */
struct judge_ev judge_ev_majflt_per_op(json_t *doc);	/* major faults per request */

#endif
