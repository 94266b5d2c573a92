/*
 * optrun.c - fio's run-control options (optrun.h): steadystate's
 * criterion, latency_percentile, flow_watermark, their printing back,
 * and what they need of each other. fio's rules (options.c and init.c
 * of fio, read, not copied): a steady-state window of at least two
 * samples, a whole number of them, samples at least a second apart.
 */
#include "job/optrun.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/optset.h"
#include "job/optval.h"

const char *const optrun_exit_what_names[] = { "group", "stonewall", "all", NULL };

static const char *const ss_names[] = { "iops", "bw", "lat" };

/* A float, whole string; false when it is not one. */
static bool float_of(const char *s, double *v)
{
	char *end;

	if (!s || !*s)
		return false;
	*v = strtod(s, &end);
	while (*end == ' ')
		end++;
	return !*end && isfinite(*v);
}

/*
 * steadystate=METRIC[_slope]:LIMIT[%]. LIMIT: a percentage of the
 * window's mean, or an absolute: IOPS (a float), bytes per second (a
 * size: 10m), or for lat a time (bare: microseconds, as fio's times).
 */
int optrun_ss(struct job *j, const struct option_def *o, const char *val,
	      const struct option_ctx *c, struct err *e)
{
	static const char *const syn = "expected iops, iops_slope, bw, bw_slope, lat or lat_slope, "
				       "a colon and a limit: iops:10%, bw_slope:1%, lat:500us";
	const char *colon = val ? strchr(val, ':') : NULL;
	char metric[16], lim[64];
	enum ss_metric m;
	bool slope = false, pct = false;
	double limit;
	size_t n;

	if (!colon)
		return opt_fail(c, val, e, "%s (fio: the threshold must be given with the criterion)", syn);
	n = (size_t)(colon - val);
	if (n >= sizeof(metric) || strlen(colon + 1) >= sizeof(lim))
		return opt_fail(c, val, e, "%s", syn);
	memcpy(metric, val, n);
	metric[n] = '\0';
	if (n > 6 && !strcmp(metric + n - 6, "_slope")) {
		slope = true;
		metric[n - 6] = '\0';
	}
	if (!strcmp(metric, "iops"))
		m = SS_IOPS;
	else if (!strcmp(metric, "bw"))
		m = SS_BW;
	else if (!strcmp(metric, "lat"))
		m = SS_LAT;
	else
		return opt_fail(c, val, e, "%s", syn);
	snprintf(lim, sizeof(lim), "%s", colon + 1);
	n = strlen(lim);
	if (n && lim[n - 1] == '%') {
		pct = true;
		lim[n - 1] = '\0';
	}
	if (pct || m == SS_IOPS) {
		if (!float_of(lim, &limit) || limit < 0)
			return opt_fail(c, val, e, "the limit must be a number >= 0 (%s)", syn);
	} else {
		struct option_ctx sub = *c;
		uint64_t v;
		const char *p = lim;

		sub.key = "steadystate limit";
		if (m == SS_BW) {
			if (num_parse(&sub, lim, OPTVAL_SIZE, &v, NULL, e))
				return -EINVAL;
		} else {
			while (*p >= '0' && *p <= '9')
				p++;
			if (!*lim)
				return opt_fail(c, val, e, "%s", syn);
			if (!*p) {
				if (num_parse(&sub, lim, OPTVAL_SIZE, &v, NULL, e))
					return -EINVAL;
				v *= 1000;	/* bare: microseconds */
			} else if (num_parse(&sub, lim, OPTVAL_TIME, &v, NULL, e)) {
				return -EINVAL;
			}
		}
		limit = (double)v;
	}
	if (set_str(j, o, val, c, e))
		return -EINVAL;
	j->ss_metric = m;
	j->ss_slope = slope;
	j->ss_pct = pct;
	j->ss_limit = limit;
	return 0;
}

int optrun_pct(struct job *j, const struct option_def *o, const char *val,
	       const struct option_ctx *c, struct err *e)
{
	double v;

	(void)o;
	if (!float_of(val, &v) || v <= 0 || v > 100)
		return opt_fail(c, val, e, "expected a percentage above 0, at most 100, e.g. 99.9");
	j->latency_percentile = v;
	return 0;
}

int optrun_noop(struct job *j, const struct option_def *o, const char *val,
		const struct option_ctx *c, struct err *e)
{
	(void)val;
	(void)c;
	(void)e;
	j->src.fio_noops |= o->noop;
	return 0;
}

int optrun_fmt(const struct job *j, const struct option_def *o, char *buf, size_t len)
{
	if (o->parse == optrun_pct) {
		snprintf(buf, len, "%g", j->latency_percentile);
		return 1;
	}
	return -1;
}

/* A name of the metric, for messages. */
static const char *ss_name(const struct job *j)
{
	return ss_names[j->ss_metric];
}

int optrun_check(const struct job *j, const struct engine_ops *eng, struct err *e)
{
	if (j->ss_dur_ns) {
		if (j->ss_interval_ns < 1000000000ull)
			return err_set(e, EINVAL, "job '%s': ss_interval must be at least 1s, as fio's",
				       j->name);
		if (j->ss_dur_ns % j->ss_interval_ns || j->ss_dur_ns <= j->ss_interval_ns)
			return err_set(e, EINVAL, "job '%s': ss_dur must be a multiple of ss_interval, "
				       "and longer (a window of two samples or more), as fio's",
				       j->name);
		if (j->ss_metric == SS_LAT && !j->latency)
			return err_set(e, EINVAL, "job '%s': steadystate=%s judges latency, which "
				       "latency=0 (or gtod_reduce) switches off", j->name, ss_name(j));
	}
	if (j->flow && j->loop)
		return err_set(e, EINVAL, "job '%s': flow with loop=%u: the event loop's streams "
			       "are not paced; run the job with numjobs threads", j->name, j->loop);
	if (j->flow && j->read_iolog)
		return err_set(e, EINVAL, "job '%s': flow with read_iolog: a replay keeps the log's "
			       "own times", j->name);
	if (j->latency_target_ns) {
		if (!(eng->flags & ENGINE_F_ASYNC) || j->loop)
			return err_set(e, EINVAL, "job '%s': latency_target searches the queue depth "
				       "of an asynchronous engine (io_uring, libaio); ioengine=%s%s "
				       "issues one request at a time", j->name, eng->name,
				       j->loop ? " with loop=" : "");
		if (!j->latency)
			return err_set(e, EINVAL, "job '%s': latency_target needs the latency that "
				       "latency=0 (or gtod_reduce) switches off", j->name);
		if (j->read_iolog)
			return err_set(e, EINVAL, "job '%s': latency_target with read_iolog: a replay "
				       "keeps the log's own pace", j->name);
	}
	return 0;
}
