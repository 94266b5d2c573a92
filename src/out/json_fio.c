/*
 * json_fio.c - jobs[] and "global options" in fio's layout; see
 * json_fio.h.
 *
 * A job, in fio 3.33's order:
 *   jobname, groupid, error, eta, elapsed, job options,
 *   read, write, trim: { io_bytes ... total_ios, short_ios, drop_ios,
 *                        slat_ns, clat_ns, lat_ns,
 *                        bw_min ... bw_samples, iops_min ... iops_samples },
 *   sync: { total_ios, lat_ns } (the flushes: fsync=, fdatasync=,
 *         sync_interval=, end_fsync=),
 *   job_runtime, usr_cpu, sys_cpu, ctx, majf, minf,
 *   iodepth_level, iodepth_submit, iodepth_complete,
 *   latency_ns, latency_us, latency_ms,
 *   latency_depth, latency_target, latency_percentile, latency_window
 *
 * A direction's object is filled from a struct dir_view, so reads and
 * writes go through the same code. A direction the job does not issue
 * is fio's all-zero form (runtime 0, N = 0), as fio writes the read
 * object of a write job.
 *
 * Latency: faultline times a request from its issue to its completion,
 * with no separate submission part. That is fio's lat_ns; fio keeps its
 * percentiles in clat_ns by default, so clat_ns carries the same figures
 * and slat_ns is fio's "not measured" form (N = 0). A measurement that
 * was not taken (latency=0) is null, never a made-up 0.
 */
#include "out/json_fio.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/fiostat.h"
#include "job/options.h"
#include "out/jsonbuild.h"

/* fio 3.33's default percentile_list, keys printed as "%f". */
static const double fio_percentiles[] = {
	1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0,
	95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
};

/*
 * fio's latency_{ns,us,ms} bins (stat.c): key k[i] holds the share of
 * requests with k[i-1] <= latency < k[i] in that unit; ms adds ">=2000".
 */
static const unsigned lat_bin_edges[] = { 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 };
#define LAT_BINS_NS 10
#define LAT_BINS_US 10
#define LAT_BINS_MS 12

/* fio's keys of its iodepth distributions (fiostat.h has the buckets). */
static const char *const level_keys[FIOSTAT_DEPTH_BUCKETS] = {
	"1", "2", "4", "8", "16", "32", ">=64",
};
static const char *const batch_keys[FIOSTAT_DEPTH_BUCKETS] = {
	"0", "4", "8", "16", "32", "64", ">=64",
};

/* What fio writes for a job run without latency_target. */
#define FIO_LATENCY_PERCENTILE 100.0

static uint64_t ns_to_ms(uint64_t ns)
{
	return (ns + 500000) / 1000000;
}

/* A direction's runtime, rounded up as fio rounds it: a direction that
 * moved data in under half a millisecond still has a time to divide by. */
static uint64_t ns_to_ms_up(uint64_t ns)
{
	return (ns + 999999) / 1000000;
}

/* ------------------------------------------------------------------ */
/* options */

json_t *json_fio_job_options(const struct job_src *src)
{
	json_t *o = json_object();

	for (unsigned i = 0; o && i < src->nopts; i++) {
		if (!src->opts[i].val)
			continue;
		if (json_object_set_new(o, src->opts[i].key, json_string(src->opts[i].val))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

json_t *json_fio_job_resolved(const struct job *j)
{
	json_t *o = json_object();
	char buf[512];

	if (!o)
		return NULL;
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *d = &option_table[i];

		if (!option_format(j, d, buf, sizeof(buf)))
			continue;
		if (json_object_set_new(o, d->name, json_string(buf))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

json_t *json_fio_global_options(const struct run_result *r)
{
	json_t *o = json_object();

	for (unsigned i = 0; o && i < r->nglobals && r->globals; i++) {
		if (json_object_set_new(o, r->globals[i].key, json_string(r->globals[i].val))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* ------------------------------------------------------------------ */
/* latency */

/* The value a bucket stands for: its midpoint, inside the observed range. */
static uint64_t bucket_value(const struct hist *h, unsigned b)
{
	uint64_t lo = hist_bucket_low(b), hi = hist_bucket_high(b);
	uint64_t v = lo + (hi - lo) / 2;

	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

/*
 * Sample standard deviation (n - 1, as fio), from bucket midpoints
 * around the exact mean: approximate, the error is bounded by the
 * bucket width (under 1 % of each value).
 */
static double hist_stddev(const struct hist *h)
{
	double mean = hist_mean(h), acc = 0;

	if (h->n < 2)
		return 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		double d;

		if (!h->count[b])
			continue;
		d = (double)bucket_value(h, b) - mean;
		acc += d * d * (double)h->count[b];
	}
	return sqrt(acc / (double)(h->n - 1));
}

static json_t *percentiles(const struct hist *h)
{
	json_t *o = json_object();
	char key[32];

	for (size_t i = 0; i < sizeof(fio_percentiles) / sizeof(fio_percentiles[0]); i++) {
		snprintf(key, sizeof(key), "%f", fio_percentiles[i]);
		put(o, key, ju64(hist_percentile(h, fio_percentiles[i])));
	}
	return o;
}

/*
 * fio's json+ "bins": each non-empty bucket, keyed by the value it
 * stands for in ns (its midpoint, as fio keys a bin by its bucket's
 * value), with its count; the counts add up to N.
 */
static json_t *bins(const struct hist *h)
{
	json_t *o = json_object();
	char key[32];

	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		uint64_t lo, hi;

		if (!h->count[b])
			continue;
		lo = hist_bucket_low(b);
		hi = hist_bucket_high(b);
		snprintf(key, sizeof(key), "%llu", (unsigned long long)(lo + (hi - lo) / 2));
		put(o, key, ju64(h->count[b]));
	}
	return o;
}

/* fio's all-zero statistics object: no samples (N = 0). */
static json_t *zero_lat_object(void)
{
	json_t *o = json_object();

	put(o, "min", json_integer(0));
	put(o, "max", json_integer(0));
	put(o, "mean", json_real(0));
	put(o, "stddev", json_real(0));
	put(o, "N", json_integer(0));
	return o;
}

/* ------------------------------------------------------------------ */
/* a direction */

/*
 * One direction of a job as fio reports it. @lat is NULL for a
 * direction the job never issued (fio's all-zero objects); with @lat_ok
 * false latency was not measured.
 */
struct dir_view {
	uint64_t ops, bytes, runtime_ns;
	bool lat_ok;
	const struct hist *lat;
	const struct fiostat_series *iops;	/* per interval; NULL: none */
	const struct fiostat_series *bw;	/* KiB/s per interval */
};

/* fio's data directions in its order: read, write. */
enum { DIR_READ, DIR_WRITE, DIRS };

/*
 * Direction @dir of @jr. fio gives a direction a runtime only when it
 * moved bytes (backend.c's update_runtime), so a direction without any
 * has runtime 0 and rates 0, as in fio.
 */
static void dir_view(const struct job_result *jr, unsigned dir, struct dir_view *d)
{
	const struct write_result *w = jr->w;

	*d = (struct dir_view){ 0 };
	if (dir == DIR_READ && jr->job.reads)
		*d = (struct dir_view){
			.ops = jr->rops, .bytes = jr->rbytes, .lat_ok = jr->lat_ok, .lat = &jr->lat,
			.iops = &jr->read_iops, .bw = &jr->read_bw,
		};
	else if (dir == DIR_WRITE && w && jr->job.writes)
		*d = (struct dir_view){
			.ops = w->ops, .bytes = w->bytes, .lat_ok = jr->lat_ok, .lat = &w->lat,
			.iops = &jr->write_iops, .bw = &jr->write_bw,
		};
	d->runtime_ns = d->bytes ? jr->runtime_ns : 0;
}

/* fio's {min, max, mean, stddev, N[, percentile[, bins]]}. */
static json_t *lat_object(const struct dir_view *d, bool with_bins)
{
	json_t *o;
	const struct hist *h = d->lat;

	if (!h)
		return zero_lat_object();
	o = json_object();
	if (!d->lat_ok || h->n == 0) {
		/* latency=0, or no request completed: nothing measured. */
		put(o, "min", json_null());
		put(o, "max", json_null());
		put(o, "mean", json_null());
		put(o, "stddev", json_null());
		put(o, "N", json_integer(0));
		return o;
	}
	put(o, "min", ju64(h->min));
	put(o, "max", ju64(h->max));
	put(o, "mean", jdbl(hist_mean(h)));
	put(o, "stddev", jdbl(hist_stddev(h)));
	put(o, "N", ju64(h->n));
	put(o, "percentile", percentiles(h));
	if (with_bins)
		put(o, "bins", bins(h));
	return o;
}

/* @group_bytes_s: the aggregate bandwidth of the job's reporting group
 * in this direction, for bw_agg. */
static json_t *direction_object(const struct dir_view *d, double group_bytes_s, bool with_bins)
{
	static const struct fiostat_series none;
	const struct fiostat_series *bw = d->bw ? d->bw : &none;
	const struct fiostat_series *iops = d->iops ? d->iops : &none;
	json_t *o = json_object();
	uint64_t bwb = d->runtime_ns ? (uint64_t)((double)d->bytes * 1e9 / (double)d->runtime_ns) : 0;

	put(o, "io_bytes", ju64(d->bytes));
	put(o, "io_kbytes", ju64(d->bytes / 1024));
	put(o, "bw_bytes", ju64(bwb));
	put(o, "bw", ju64(bwb / 1024));
	put(o, "iops", jdbl(d->runtime_ns ? (double)d->ops * 1e9 / (double)d->runtime_ns : 0.0));
	put(o, "runtime", ju64(ns_to_ms_up(d->runtime_ns)));
	put(o, "total_ios", ju64(d->ops));
	put(o, "short_ios", json_integer(0));
	put(o, "drop_ios", json_integer(0));
	put(o, "slat_ns", zero_lat_object());
	put(o, "clat_ns", lat_object(d, with_bins));
	put(o, "lat_ns", lat_object(d, with_bins));
	/* Per-interval statistics; all 0 without samples, as fio's. */
	put(o, "bw_min", ju64(bw->min));
	put(o, "bw_max", ju64(bw->max));
	put(o, "bw_agg", jdbl(bw->samples ? fiostat_bw_agg(bw->mean, group_bytes_s) : 0.0));
	put(o, "bw_mean", jdbl(bw->mean));
	put(o, "bw_dev", jdbl(fiostat_series_stddev(bw)));
	put(o, "bw_samples", ju64(bw->samples));
	put(o, "iops_min", ju64(iops->min));
	put(o, "iops_max", ju64(iops->max));
	put(o, "iops_mean", jdbl(iops->mean));
	put(o, "iops_stddev", jdbl(fiostat_series_stddev(iops)));
	put(o, "iops_samples", ju64(iops->samples));
	return o;
}

/* ------------------------------------------------------------------ */
/* job-wide figures */

unsigned json_fio_group(const struct run_result *r, unsigned idx)
{
	unsigned g = 0;

	/* Jobs before the first stonewall, and a stonewall on the very
	 * first job, are group 0. */
	for (unsigned i = 1; i <= idx && i < r->njobs; i++)
		if (r->jobs[i].job.stonewall)
			g++;
	return g;
}

/* The jobs [*first, *last) of job @idx's reporting group: a stonewall
 * starts a new one (a stonewall on the very first job does not). */
static void group_bounds(const struct run_result *r, unsigned idx, unsigned *first, unsigned *last)
{
	unsigned a = idx, b = idx + 1;

	while (a > 0 && !(r->jobs[a].job.stonewall))
		a--;
	while (b < r->njobs && !(r->jobs[b].job.stonewall))
		b++;
	*first = a;
	*last = b;
}

/* fio's rs->agg[dir]: the bytes the group's jobs moved in direction
 * @dir over the group's longest runtime in it, in bytes per second.
 * Only the group's own jobs are visited: a run of 2000 jobs writes its
 * document in milliseconds, not in the minute a walk of every job per
 * job per group took. */
static double group_bytes_s(const struct run_result *r, unsigned idx, unsigned dir)
{
	uint64_t bytes = 0, longest = 0;
	unsigned first, last;
	struct dir_view d;

	group_bounds(r, idx, &first, &last);
	for (unsigned i = first; i < last; i++) {
		dir_view(&r->jobs[i], dir, &d);
		bytes += d.bytes;
		if (d.runtime_ns > longest)
			longest = d.runtime_ns;
	}
	return longest ? (double)bytes * 1e9 / (double)longest : 0.0;
}

/*
 * fio's sync object: its flushes, counted and timed as it times them
 * (lat_ns, from issue to completion; percentiles and json+ bins only
 * when any were timed). A job that does not flush has fio's empty form.
 */
static json_t *sync_object(const struct job_result *jr, bool with_bins)
{
	json_t *o = json_object();
	struct dir_view d = { 0 };

	if (jr->w && jr->w->syncs) {
		d.ops = jr->w->syncs;
		d.lat_ok = jr->lat_ok;
		d.lat = &jr->w->sync_lat;
	}
	put(o, "total_ios", ju64(d.ops));
	put(o, "lat_ns", lat_object(&d, with_bins));
	return o;
}

/* Which fio latency bin a latency falls in: unit 0 ns, 1 us, 2 ms. */
static void lat_bin(uint64_t ns, unsigned *unit, unsigned *idx)
{
	uint64_t v;
	unsigned i;

	if (ns < 1000) {
		*unit = 0;
		v = ns;
	} else if (ns < 1000000) {
		*unit = 1;
		v = ns / 1000;
	} else {
		*unit = 2;
		v = ns / 1000000;
	}
	for (i = 0; i < sizeof(lat_bin_edges) / sizeof(lat_bin_edges[0]); i++)
		if (v < lat_bin_edges[i])
			break;
	if (*unit == 2 && i == LAT_BINS_MS - 2 && v >= 2000)
		i = LAT_BINS_MS - 1;	/* ">=2000" */
	*idx = i;
}

/*
 * fio's latency_ns / latency_us / latency_ms: % of requests per bin,
 * reads and writes together (fio's io_u_mark_latency counts both, not
 * flushes), each bucket counted at its midpoint. Null values when not
 * measured.
 */
static void put_lat_bins(json_t *job, const struct job_result *jr)
{
	static const char *const names[3] = { "latency_ns", "latency_us", "latency_ms" };
	static const unsigned nbins[3] = { LAT_BINS_NS, LAT_BINS_US, LAT_BINS_MS };
	double pct[3][LAT_BINS_MS] = { { 0 } };
	const struct hist *hs[DIRS] = { &jr->lat, jr->w ? &jr->w->lat : NULL };
	uint64_t n = 0;
	bool have;
	char key[16];

	for (unsigned d = 0; d < DIRS; d++)
		n += hs[d] ? hs[d]->n : 0;
	have = jr->lat_ok && n > 0;
	for (unsigned d = 0; have && d < DIRS; d++) {
		const struct hist *h = hs[d];

		for (unsigned b = 0; h && b < HIST_BUCKETS; b++) {
			unsigned u, i;

			if (!h->count[b])
				continue;
			lat_bin(bucket_value(h, b), &u, &i);
			pct[u][i] += 100.0 * (double)h->count[b] / (double)n;
		}
	}
	for (unsigned u = 0; u < 3; u++) {
		json_t *o = json_object();

		for (unsigned i = 0; i < nbins[u]; i++) {
			if (i == LAT_BINS_MS - 1)
				snprintf(key, sizeof(key), ">=2000");
			else if (i == LAT_BINS_MS - 2)
				snprintf(key, sizeof(key), "2000");
			else
				snprintf(key, sizeof(key), "%u", lat_bin_edges[i]);
			put(o, key, have ? jdbl(pct[u][i]) : json_null());
		}
		put(job, names[u], o);
	}
}

/* One iodepth distribution: percentages keyed as fio keys them. */
static json_t *depth_object(const uint64_t *count, const char *const *keys)
{
	json_t *o = json_object();
	double pct[FIOSTAT_DEPTH_BUCKETS];
	uint64_t total = 0;

	for (unsigned i = 0; i < FIOSTAT_DEPTH_BUCKETS; i++)
		total += count[i];
	fiostat_dist_pct(count, total, pct);
	for (unsigned i = 0; i < FIOSTAT_DEPTH_BUCKETS; i++)
		put(o, keys[i], jdbl(pct[i]));
	return o;
}

/* usr_cpu, sys_cpu, ctx: the job's threads' CPU time in percent of
 * their run time, summed over threads as fio sums a group's. */
static void put_cpu(json_t *o, const struct job_result *jr)
{
	double t = (double)jr->cpu_thread_ns;

	if (!jr->cpu_ok) {
		put(o, "usr_cpu", json_null());
		put(o, "sys_cpu", json_null());
		put(o, "ctx", json_null());
		return;
	}
	put(o, "usr_cpu", jdbl(t > 0 ? (double)jr->usr_ns * 100.0 / t : 0.0));
	put(o, "sys_cpu", jdbl(t > 0 ? (double)jr->sys_ns * 100.0 / t : 0.0));
	put(o, "ctx", ju64(jr->ctx));
}

/*
 * fio's "steadystate" object, for a job with ss_dur (fio's stat.c): the
 * criterion as fio prints it, the window in seconds, whether it was
 * attained, the last judgement, and the window's samples, oldest first
 * (bw in bytes/s; lat, for the lat criteria, in ns).
 */
static json_t *steadystate_object(const struct job_result *jr)
{
	const struct runctl_result *rc = &jr->rc;
	const struct out_job *j = &jr->job;
	static const char *const m[] = { "iops", "bw", "lat" };
	json_t *o = json_object(), *data = json_object(), *iops = json_array(), *bw = json_array();
	uint64_t si = 0, sb = 0, sl = 0;
	char buf[96];

	snprintf(buf, sizeof(buf), "%s%s:%f%s", m[j->ss_metric], j->ss_slope ? "_slope" : "",
		 (float)j->ss_limit, j->ss_pct ? "%" : "");
	put(o, "ss", json_string(buf));
	put(o, "duration", ju64(j->ss_dur_ns / 1000000000ull));
	put(o, "attained", json_integer(rc->ss_attained));
	snprintf(buf, sizeof(buf), "%f%s", (float)rc->ss_criterion, j->ss_pct ? "%" : "");
	put(o, "criterion", json_string(buf));
	put(o, "max_deviation", jdbl(rc->ss_deviation));
	put(o, "slope", jdbl(rc->ss_slope));
	for (unsigned i = 0; i < rc->ss_n; i++) {
		json_array_append_new(iops, ju64(rc->ss_iops[i]));
		json_array_append_new(bw, ju64(rc->ss_bw[i]));
		si += rc->ss_iops[i];
		sb += rc->ss_bw[i];
		sl += rc->ss_lat[i];
	}
	/* No sample taken: no mean (fio writes 0). */
	put(data, "bw_mean", rc->ss_n ? ju64(sb / rc->ss_n) : json_null());
	put(data, "iops_mean", rc->ss_n ? ju64(si / rc->ss_n) : json_null());
	if (j->ss_metric == SS_LAT) {
		json_t *lat = json_array();

		for (unsigned i = 0; i < rc->ss_n; i++)
			json_array_append_new(lat, ju64(rc->ss_lat[i]));
		put(data, "lat_mean", rc->ss_n ? ju64(sl / rc->ss_n) : json_null());
		put(data, "lat_ns", lat);
	}
	put(data, "iops", iops);
	put(data, "bw", bw);
	put(o, "data", data);
	return o;
}

json_t *json_fio_job(const struct run_result *r, unsigned idx, bool with_bins)
{
	const struct job_result *jr = &r->jobs[idx];
	json_t *o = json_object(), *opts;
	struct dir_view d;

	build_failures = 0;
	put(o, "jobname", json_string(jr->job.name));
	put(o, "groupid", json_integer(json_fio_group(r, idx)));
	put(o, "error", json_integer(jr->error));
	/* fio writes these two only with continue_on_error */
	if (jr->job.continue_on_error != COE_NONE) {
		put(o, "total_err", ju64(jr->io_errors));
		put(o, "first_error", json_integer(jr->first_error));
	}
	/* Written when the run is over: nothing remains. elapsed is whole
	 * seconds since the run began, rounded up, as fio's. */
	put(o, "eta", json_integer(0));
	put(o, "elapsed", ju64((r->duration_ns / 1000000 + 999) / 1000));
	/* fio leaves "job options" out when the job's section set nothing. */
	opts = json_fio_job_options(&jr->options->src);
	if (opts && !json_object_size(opts))
		json_decref(opts);
	else
		put(o, "job options", opts);
	dir_view(jr, DIR_READ, &d);
	put(o, "read", direction_object(&d, group_bytes_s(r, idx, DIR_READ), with_bins));
	dir_view(jr, DIR_WRITE, &d);
	put(o, "write", direction_object(&d, group_bytes_s(r, idx, DIR_WRITE), with_bins));
	d = (struct dir_view){ 0 };
	/* fio's trims: counts and latency, no per-interval series */
	if (jr->w && jr->job.trims)
		d = (struct dir_view){ .ops = jr->w->trims, .bytes = jr->w->trim_bytes,
				       .lat_ok = jr->lat_ok, .lat = &jr->w->trim_lat,
				       .runtime_ns = jr->w->trim_bytes ? jr->runtime_ns : 0 };
	put(o, "trim", direction_object(&d, 0, with_bins));
	put(o, "sync", sync_object(jr, with_bins));
	put(o, "job_runtime", ju64(ns_to_ms(jr->thread_ns)));
	put_cpu(o, jr);
	put(o, "majf", jr->faults_ok ? ju64(jr->majflt) : json_null());
	put(o, "minf", jr->faults_ok ? ju64(jr->minflt) : json_null());
	put(o, "iodepth_level", depth_object(jr->depth.level, level_keys));
	put(o, "iodepth_submit", depth_object(jr->depth.submit, batch_keys));
	put(o, "iodepth_complete", depth_object(jr->depth.complete, batch_keys));
	put_lat_bins(o, jr);
	/* latency_target: the depth the search ended at (the shallowest of
	 * the job's threads), the target in ns and the window in us, as
	 * fio writes them; without one, fio's figures for a job without
	 * (its depth is the job's iodepth). */
	if (jr->job.latency_target_ns) {
		put(o, "latency_depth", json_integer(jr->rc.lat_depth ? jr->rc.lat_depth : jr->job.iodepth));
		put(o, "latency_target", ju64(jr->job.latency_target_ns));
		put(o, "latency_percentile", jdbl(jr->job.latency_percentile));
		put(o, "latency_window", ju64(jr->job.latency_window_ns / 1000));
	} else {
		put(o, "latency_depth", json_integer(jr->job.iodepth));
		put(o, "latency_target", json_integer(0));
		put(o, "latency_percentile", json_real(FIO_LATENCY_PERCENTILE));
		put(o, "latency_window", json_integer(0));
	}
	if (jr->rc.ss)
		put(o, "steadystate", steadystate_object(jr));
	if (build_failures) {
		json_decref(o);
		return NULL;
	}
	return o;
}
