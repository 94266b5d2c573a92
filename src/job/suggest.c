/*
 * suggest.c - "did you mean" for misspelt names (as in "unknown option
 * 'iodpeth' at job.job:7, did you mean 'iodepth'?").
 */
#include "job/suggest.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Optimal string alignment distance: a swapped pair ("iodpeth") is one edit. */
static unsigned osa_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned d[SUGGEST_LEN_MAX + 1][SUGGEST_LEN_MAX + 1];

	if (n > SUGGEST_LEN_MAX || m > SUGGEST_LEN_MAX)
		return UINT_MAX;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (size_t k = 0; k <= m; k++)
		d[0][k] = (unsigned)k;
	for (size_t i = 1; i <= n; i++) {
		for (size_t k = 1; k <= m; k++) {
			unsigned cost = a[i - 1] != b[k - 1];
			unsigned v = d[i - 1][k - 1] + cost;

			if (d[i - 1][k] + 1 < v)
				v = d[i - 1][k] + 1;
			if (d[i][k - 1] + 1 < v)
				v = d[i][k - 1] + 1;
			if (i > 1 && k > 1 && a[i - 1] == b[k - 2] && a[i - 2] == b[k - 1] &&
			    d[i - 2][k - 2] + 1 < v)
				v = d[i - 2][k - 2] + 1;
			d[i][k] = v;
		}
	}
	return d[n][m];
}

void suggest_init(struct suggest *s, const char *name)
{
	s->name = name;
	s->best = UINT_MAX;
	s->best_name = NULL;
	s->best_len = 0;
}

void suggest_offer(struct suggest *s, const char *cand, size_t len)
{
	char buf[SUGGEST_LEN_MAX + 1];
	unsigned dist;

	if (len > SUGGEST_LEN_MAX)
		return;
	memcpy(buf, cand, len);
	buf[len] = '\0';
	dist = osa_distance(s->name, buf);
	if (dist < s->best) {
		s->best = dist;
		s->best_name = cand;
		s->best_len = len;
	}
}

const char *suggest_result(const struct suggest *s, char *buf, size_t len)
{
	size_t n = strlen(s->name);
	/* Short names tolerate one slip, longer ones a slip per 4 letters. */
	unsigned limit = n <= 4 ? 1 : (unsigned)(n + 3) / 4;

	if (!s->best_name || s->best > limit || s->best == 0)
		return NULL;
	snprintf(buf, len, "%.*s", (int)s->best_len, s->best_name);
	return buf;
}
