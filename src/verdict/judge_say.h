/*
 * judge_say.h - what judge.c lends the files that write its other
 * evidence sentences (judge_pool.c): adding a sentence to a result, the
 * way numbers are written in them, and the run of an engine that the
 * evidence is taken from. For the judge's own files only.
 */
#ifndef FAULTLINE_JUDGE_SAY_H
#define FAULTLINE_JUDGE_SAY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* judge.h's types, by name only: judge.h's module (judge.c) includes
 * this, and a header that included judge.h back would be a cycle. */
struct judge_result;
struct judge_cell;
struct judge_engine_result;
struct judge_host;

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

/* judge_pool.c */
void judge_pool_evidence(struct judge_result *r, int e, json_t *doc,
			 const struct judge_host *h);
void judge_pool_tail_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
			      unsigned wi);

#endif
