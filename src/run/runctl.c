/*
 * runctl.c - steady state (runctl.h): the window of samples and fio's
 * two judgements of it.
 */
#include "run/runctl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ss_init(struct ss_state *s, const struct job *j, uint64_t start_ns)
{
	memset(s, 0, sizeof(*s));
	if (!j->ss_dur_ns || !j->ss_interval_ns)
		return 0;
	s->n = (unsigned)(j->ss_dur_ns / j->ss_interval_ns);
	s->iops = calloc(s->n, sizeof(uint64_t));
	s->bw = calloc(s->n, sizeof(uint64_t));
	s->lat = calloc(s->n, sizeof(uint64_t));
	s->scratch = calloc(s->n, sizeof(uint64_t));
	if (!s->iops || !s->bw || !s->lat || !s->scratch) {
		ss_free(s);
		return -ENOMEM;
	}
	s->on = true;
	/* The first reading only sets the base: samples are rates over
	 * the intervals that follow it. */
	s->next_ns = start_ns + j->ss_ramp_ns;
	return 0;
}

void ss_free(struct ss_state *s)
{
	free(s->iops);
	free(s->bw);
	free(s->lat);
	free(s->scratch);
	s->iops = s->bw = s->lat = s->scratch = NULL;
	s->on = false;
}

unsigned ss_window(const struct ss_state *s, const uint64_t *ring, uint64_t *out)
{
	unsigned first = s->count < s->n ? 0 : s->head;

	for (unsigned i = 0; i < s->count; i++)
		out[i] = ring[(first + i) % s->n];
	return s->count;
}

bool ss_judge(const struct job *j, const uint64_t *y, unsigned n, double *criterion,
	      double *slope, double *deviation)
{
	double mean = 0, sx = 0, sxx = 0, sxy = 0, dev = 0, c;

	*criterion = *slope = *deviation = 0;
	if (n < 2)
		return false;
	for (unsigned i = 0; i < n; i++)
		mean += (double)y[i];
	mean /= n;
	for (unsigned i = 0; i < n; i++) {
		double d = fabs((double)y[i] - mean);

		if (d > dev)
			dev = d;
		sx += i;
		sxx += (double)i * i;
		sxy += (double)i * (double)y[i];
	}
	/* Least squares: (sum xy - sum x sum y / n) / (sum x^2 - (sum x)^2 / n). */
	*slope = (sxy - sx * mean) / (sxx - sx * sx / n);
	*deviation = dev;
	c = j->ss_slope ? *slope : dev;
	if (j->ss_pct)
		c = mean > 0 ? 100.0 * c / mean : INFINITY;
	*criterion = c;
	return fabs(c) < j->ss_limit;
}

bool ss_reading(struct ss_state *s, const struct job *j, uint64_t now, uint64_t ios,
		uint64_t bytes, uint64_t lat_n, uint64_t lat_sum)
{
	uint64_t dt;
	const uint64_t *ring;
	unsigned at, n;
	bool ok;

	if (!s->on || s->attained || now < s->next_ns)
		return false;
	s->next_ns = now + j->ss_interval_ns;
	if (!s->based) {
		s->based = true;
		goto base;
	}
	dt = now - s->prev_ns;
	if (!dt)
		goto base;
	at = s->count < s->n ? s->count : s->head;
	s->iops[at] = (uint64_t)((double)(ios - s->prev_ios) * 1e9 / (double)dt + 0.5);
	s->bw[at] = (uint64_t)((double)(bytes - s->prev_bytes) * 1e9 / (double)dt + 0.5);
	s->lat[at] = lat_n > s->prev_lat_n ? (lat_sum - s->prev_lat_sum) / (lat_n - s->prev_lat_n) : 0;
	if (s->count < s->n)
		s->count++;
	else
		s->head = (s->head + 1) % s->n;
	ok = false;
	if (s->count == s->n) {
		ring = j->ss_metric == SS_IOPS ? s->iops : j->ss_metric == SS_BW ? s->bw : s->lat;
		n = ss_window(s, ring, s->scratch);
		ok = ss_judge(j, s->scratch, n, &s->criterion, &s->slope, &s->deviation);
		s->attained = ok;
	}
	s->prev_ns = now;
	s->prev_ios = ios;
	s->prev_bytes = bytes;
	s->prev_lat_n = lat_n;
	s->prev_lat_sum = lat_sum;
	return ok;
base:
	s->prev_ns = now;
	s->prev_ios = ios;
	s->prev_bytes = bytes;
	s->prev_lat_n = lat_n;
	s->prev_lat_sum = lat_sum;
	return false;
}
