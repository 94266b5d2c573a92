/*
 * judge_say.c - what the judge's files share to write their evidence
 * (judge_say.h): adding a sentence to a result, the way numbers are
 * written in them, and the run of an engine the evidence is taken from.
 * Below judge.c and judge_pool.c, which both use it.
 */
#include "verdict/judge_say.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#define MIB (1024.0 * 1024.0)

void judge_fmt_num(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 10000)
		snprintf(buf, len, "%.0fk", v / 1000);
	else if (v >= 100)
		snprintf(buf, len, "%.0f", v);
	else if (v >= 10)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.2f", v);
}

void judge_say(struct judge_result *r, const char *key, double v, double thr, const char *src,
	       const char *fmt, ...)
{
	struct judge_sentence *s;
	va_list ap;

	if (r->nsent >= JUDGE_MAX_SENT)
		return;
	s = &r->sent[r->nsent++];
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->value = v;
	s->threshold = thr;
	snprintf(s->source, sizeof(s->source), "%s", src);
	va_start(ap, fmt);
	vsnprintf(s->text, sizeof(s->text), fmt, ap);
	va_end(ap);
}

/* The document of @e's round closest to its median: the evidence shown
 * belongs to a typical run, not the best or the worst. */
json_t *judge_typical_doc(const struct judge_cell *cells, unsigned ncells, unsigned wi,
			  int e, const struct judge_engine_result *er)
{
	json_t *best = NULL;
	double bestd = INFINITY;

	for (unsigned i = 0; i < ncells; i++) {
		double d;

		if (cells[i].wl != wi || (int)cells[i].e != e || cells[i].round >= JUDGE_MAX_ROUNDS)
			continue;
		if (isnan(er->v[cells[i].round]))
			continue;
		d = fabs(er->v[cells[i].round] - er->median);
		if (d < bestd) {
			bestd = d;
			best = cells[i].doc;
		}
	}
	return best;
}

void judge_mib(char *buf, size_t len, uint64_t b)
{
	snprintf(buf, len, "%.0f MiB", (double)b / MIB);
}
