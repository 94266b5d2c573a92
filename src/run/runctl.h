/*
 * runctl.h - the run controller's part of fio's run control: steady
 * state (steadystate, ss_dur, ss_ramp, ss_interval), judged on a job's
 * counters as the run goes. exitall and exit_what are run.c's (which
 * jobs to stop); flow and latency_target act in the workers (pace.h).
 *
 * Steady state is fio's (steadystate.c, read, not copied): every
 * ss_interval after ss_ramp the job's IOPS, bytes per second and mean
 * completion latency over the interval are sampled into a window of
 * ss_dur / ss_interval samples; once the window is full, the job ends
 * when every sample lies within the limit of the window's mean
 * (iops, bw, lat: the largest deviation from the mean) or when the
 * least-squares slope of the samples is below the limit (the _slope
 * forms), a limit with % being that percentage of the mean. The job is
 * all its threads together (fio's group_reporting, which faultline
 * always does). The controller reads the counters the sampler reads:
 * nothing is added to the workers' loops.
 */
#ifndef FAULTLINE_RUNCTL_H
#define FAULTLINE_RUNCTL_H

#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"

struct ss_state {
	bool on;			/* ss_dur set */
	bool attained;
	bool based;			/* the first reading (after ss_ramp) taken */
	unsigned n;			/* samples in a full window */
	unsigned count;			/* samples taken, capped at n */
	unsigned head;			/* the oldest sample, once full */
	uint64_t *iops, *bw, *lat;	/* n each, a ring */
	uint64_t *scratch;		/* n: the window in time order, for the judgement */
	uint64_t next_ns;		/* the next reading */
	uint64_t prev_ns, prev_ios, prev_bytes, prev_lat_n, prev_lat_sum;
	double criterion, slope, deviation;	/* the last judgement */
};

/* Of @j, starting (its first request) at @start_ns; 0 or -ENOMEM. */
int ss_init(struct ss_state *s, const struct job *j, uint64_t start_ns);
void ss_free(struct ss_state *s);

/* When the next reading is due (CLOCK_MONOTONIC ns); UINT64_MAX if none. */
static inline uint64_t ss_due(const struct ss_state *s)
{
	return s->on && !s->attained ? s->next_ns : UINT64_MAX;
}

/*
 * A reading of the job's totals at @now (requests and bytes of both
 * directions, completed-latency count and sum): a sample of the rates
 * since the last reading. True when steady state is attained (once).
 */
bool ss_reading(struct ss_state *s, const struct job *j, uint64_t now, uint64_t ios,
		uint64_t bytes, uint64_t lat_n, uint64_t lat_sum);

/*
 * The judgement itself, on @n samples in time order: the criterion
 * (deviation or slope, per @j; a percentage of the mean with %), the
 * slope per sample and the largest deviation from the mean. True when
 * the criterion is below @j's limit.
 */
bool ss_judge(const struct job *j, const uint64_t *y, unsigned n, double *criterion,
	      double *slope, double *deviation);

/* The window's samples in time order into @out (n values); how many. */
unsigned ss_window(const struct ss_state *s, const uint64_t *ring, uint64_t *out);

#endif
