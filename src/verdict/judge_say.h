/*
 * judge_say.h - what the judge's files that write evidence sentences
 * share (judge_say.c): adding a sentence to a result, the way numbers
 * are written in them, and the run of an engine that the evidence is
 * taken from. For the judge's own files only (judge.c, judge_pool.c).
 */
#ifndef FAULTLINE_JUDGE_SAY_H
#define FAULTLINE_JUDGE_SAY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "verdict/judge_types.h"

/* One sentence of evidence: @key names the figure, @v its value and
 * @thr the threshold it passed (NAN: none), @src where it came from. */
__attribute__((format(printf, 6, 7)))
void judge_say(struct judge_result *r, const char *key, double v, double thr, const char *src,
	       const char *fmt, ...);
/* 2.35M, 12k, 345, 12.3, 1.23: as many digits as a reader needs. */
void judge_fmt_num(char *buf, size_t len, double v);
/* "32 MiB" */
void judge_mib(char *buf, size_t len, uint64_t b);
/* The document of engine @e's (enum judge_engine) round closest to its median: the evidence shown
 * belongs to a typical run, not the best or the worst. */
json_t *judge_typical_doc(const struct judge_cell *cells, unsigned ncells, unsigned wi,
			  int e, const struct judge_engine_result *er);

#endif
