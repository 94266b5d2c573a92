/* fiostat.c - fio's statistics arithmetic; see fiostat.h. */
#include "lib/fiostat.h"

#include <math.h>

/* Welford's running mean and squared deviations, as fio's
 * add_stat_sample keeps them, so the result does not depend on summing
 * large squares. */
void fiostat_series_add(struct fiostat_series *s, uint64_t v)
{
	double x = (double)v, delta;

	if (!s->samples || v < s->min)
		s->min = v;
	if (!s->samples || v > s->max)
		s->max = v;
	s->samples++;
	delta = x - s->mean;
	s->mean += delta / (double)s->samples;
	s->m2 += delta * (x - s->mean);
}

double fiostat_series_stddev(const struct fiostat_series *s)
{
	if (s->samples < 2)
		return 0.0;
	return sqrt(s->m2 / (double)(s->samples - 1));
}

void fiostat_dist_pct(const uint64_t *count, uint64_t total, double *pct)
{
	for (unsigned i = 0; i < FIOSTAT_DEPTH_BUCKETS; i++) {
		pct[i] = total ? (double)count[i] * 100.0 / (double)total : 0.0;
		/* fio shows a bucket that holds anything as at least 0.1 %. */
		if (total && count[i] && pct[i] < 0.1)
			pct[i] = 0.1;
	}
}

double fiostat_bw_agg(double mean_kib, double group_bytes_s)
{
	double pct;

	if (group_bytes_s <= 1024.0)
		return 100.0;
	pct = floor(mean_kib) * 100.0 / (group_bytes_s / 1024.0);
	return pct > 100.0 ? 100.0 : pct;
}
