/*
 * fiolog.c - fio's per-interval log files; see fiolog.h.
 *
 * Checked against Debian's fio 3.33: with log_avg_msec set it writes,
 * per thread and per window, "500, 70400, 0, 0, 0" into <prefix>_bw.1.log
 * (KiB/s), the same shape into _iops (requests per second) and into _lat
 * and _clat (mean latency in ns), and leaves _slat empty for an engine
 * without a submission phase; per_job_logs=0 drops the ".1".
 */
#include "out/fiolog.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fiostat.h"
#include "job/workloadcfg.h"
#include "workload/prio.h"

enum log_kind { LOG_BW, LOG_IOPS, LOG_LAT, LOG_CLAT, LOG_SLAT, LOG_KINDS };

/* fio's file name infixes, by kind. */
static const char *const kind_names[LOG_KINDS] = { "bw", "iops", "lat", "clat", "slat" };

struct logfile {
	char *path;
	FILE *f;
	bool broken;		/* a write failed: warned once, no more entries */
};

/* A job as its logs need it, taken from its options once at
 * fiolog_create: the interval path reads nothing else of the job. */
struct job_logs {
	unsigned nthreads;
	unsigned first;		/* fio's number of its first thread, from 1 */
	uint64_t avg_ns;	/* log_avg_msec */
	/* Per kind and thread: index into fiolog.files, -1 for no log. */
	int *file;
	/* The window being averaged: its length and each thread's sums. */
	uint64_t window_ns;
	struct fiolog_sample *acc;
	/* log_prio: the priorities (the job's own first); split: an entry
	 * per priority (cmdprio_*). */
	struct prio_plan prio;
	bool split;
	/* An entry's columns: log_offset, log_issue_time, log_prio,
	 * log_window_value (enum log_window). */
	bool offset, issue_time, prio_col;
	enum log_window window_value;
};

struct fiolog {
	uint64_t interval_ns;
	void (*warn)(const char *msg);
	unsigned njobs;
	struct job_logs *jobs;
	unsigned nfiles;
	struct logfile *files;
};

static void say(const struct fiolog *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct fiolog *l, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	if (!l->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	l->warn(msg);
}

/* The prefix a log option names: its value, or the job's name. */
static const char *prefix_of(const struct job *j, enum log_kind k)
{
	const char *p = k == LOG_BW ? j->bw_log : k == LOG_IOPS ? j->iops_log : j->lat_log;

	if (!p)
		return NULL;
	return *p ? p : j->name;
}

/* The file for @path, opened (truncated) the first time it is named:
 * with per_job_logs=0 several threads, even several jobs, share one. */
static int file_index(struct fiolog *l, const char *path, struct err *e)
{
	struct logfile *n;

	for (unsigned i = 0; i < l->nfiles; i++)
		if (!strcmp(l->files[i].path, path))
			return (int)i;
	n = realloc(l->files, (l->nfiles + 1) * sizeof(*n));
	if (!n)
		return err_set(e, ENOMEM, "out of memory");
	l->files = n;
	n = &l->files[l->nfiles];
	memset(n, 0, sizeof(*n));
	n->path = strdup(path);
	if (!n->path)
		return err_set(e, ENOMEM, "out of memory");
	n->f = fopen(path, "w");
	if (!n->f) {
		int ret = err_set(e, errno, "fio log %s: %s", path, strerror(errno));

		free(n->path);
		return ret;
	}
	return (int)l->nfiles++;
}

static int job_setup(struct fiolog *l, struct job_logs *jl, const struct job *j, struct err *e)
{
	char path[4096];

	jl->file = malloc(LOG_KINDS * jl->nthreads * sizeof(*jl->file));
	jl->acc = calloc(jl->nthreads ? jl->nthreads : 1, sizeof(*jl->acc));
	if (!jl->file || !jl->acc)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned k = 0; k < LOG_KINDS; k++) {
		const char *pre = prefix_of(j, (enum log_kind)k);

		for (unsigned t = 0; t < jl->nthreads; t++) {
			int idx = -1;

			/* gtod_reduce and latency=0 time nothing: no latency
			 * logs, as fio makes none under gtod_reduce. */
			if (pre && (k < LOG_LAT || j->latency)) {
				if (j->per_job_logs)
					snprintf(path, sizeof(path), "%s_%s.%u.log", pre, kind_names[k],
						 jl->first + t);
				else
					snprintf(path, sizeof(path), "%s_%s.log", pre, kind_names[k]);
				idx = file_index(l, path, e);
				if (idx < 0)
					return err_wrap(e, "job '%s'", j->name);
			}
			jl->file[k * jl->nthreads + t] = idx;
		}
	}
	return 0;
}

int fiolog_create(struct fiolog **lp, const struct fiolog_job *jobs, unsigned njobs,
		  uint64_t interval_ns, void (*warn)(const char *msg), struct err *e)
{
	struct fiolog *l;
	unsigned thread = 1, any = 0;
	int ret;

	*lp = NULL;
	for (unsigned i = 0; i < njobs; i++)
		any += jobs[i].job->bw_log || jobs[i].job->iops_log || jobs[i].job->lat_log;
	if (!any)
		return 0;
	l = calloc(1, sizeof(*l));
	if (!l)
		return err_set(e, ENOMEM, "out of memory");
	l->interval_ns = interval_ns;
	l->warn = warn;
	l->jobs = calloc(njobs, sizeof(*l->jobs));
	if (!l->jobs) {
		free(l);
		return err_set(e, ENOMEM, "out of memory");
	}
	l->njobs = njobs;
	for (unsigned i = 0; i < njobs; i++) {
		struct job_logs *jl = &l->jobs[i];
		const struct job *j = jobs[i].job;

		jl->nthreads = jobs[i].nthreads;
		/* fio numbers every thread of the run, logged or not. */
		jl->first = thread;
		thread += jl->nthreads;
		jl->avg_ns = (uint64_t)j->log_avg_msec * 1000000ull;
		jl->offset = j->log_offset;
		jl->issue_time = j->log_issue_time;
		jl->prio_col = j->log_prio;
		jl->window_value = (enum log_window)j->log_window_value;
		if (!j->bw_log && !j->iops_log && !j->lat_log)
			continue;
		if (j->log_prio) {
			struct workload_job wj;

			workloadcfg_resolve(&wj, j);
			ret = prio_plan_build(&jl->prio, &wj, e);
			if (ret) {
				fiolog_close(l);
				return ret;
			}
			jl->split = jl->prio.on;
		}
		ret = job_setup(l, jl, j, e);
		if (ret) {
			fiolog_close(l);
			return ret;
		}
		if (jl->avg_ns < interval_ns)
			say(l, "job '%s': log_avg_msec=%u%s: each fio log entry averages one "
			    "sampling interval (%llu ms); faultline never logs each I/O "
			    "(--interval sets the interval)",
			    j->name, j->log_avg_msec, j->log_avg_msec ? " is below the interval" : "",
			    (unsigned long long)(interval_ns / 1000000ull));
	}
	*lp = l;
	return 0;
}

/* One line, as fio's flush_samples() writes an averaged entry: block
 * size and offset 0, priority 0 (log_prio: @prio). */
/* An entry's value columns: log_window_value=max puts @max in the
 * value column, both puts @v and then @max, as fio's val0 and val1. */
struct logval {
	uint64_t v, max;
	const struct job_logs *jl;
	bool issue;		/* log_issue_time's column (a latency log) */
};

static void put_line(struct fiolog *l, int idx, bool offset, uint64_t t_ms,
		     const struct logval *lv, unsigned dir, unsigned prio)
{
	const enum log_window win = lv->jl->window_value;
	char vals[48], tail[24] = "";
	struct logfile *f;
	int n;

	if (idx < 0)
		return;
	f = &l->files[idx];
	if (f->broken)
		return;
	if (win == LOG_WINDOW_BOTH)
		snprintf(vals, sizeof(vals), "%llu, %llu", (unsigned long long)lv->v,
			 (unsigned long long)lv->max);
	else
		snprintf(vals, sizeof(vals), "%llu",
			 (unsigned long long)(win == LOG_WINDOW_MAX ? lv->max : lv->v));
	/* an averaged entry's issue time is 0, as its offset (fio's too) */
	if (lv->issue && lv->jl->issue_time)
		snprintf(tail, sizeof(tail), ", 0");
	if (offset)
		n = fprintf(f->f, "%llu, %s, %u, 0, 0, %u%s\n", (unsigned long long)t_ms, vals, dir,
			    prio, tail);
	else
		n = fprintf(f->f, "%llu, %s, %u, 0, %u%s\n", (unsigned long long)t_ms, vals, dir,
			    prio, tail);
	if (n < 0) {
		f->broken = true;
		say(l, "fio log %s: write failed: %s; no more entries", f->path, strerror(errno));
	}
}

/* The window is over: one entry per thread and direction that completed
 * anything in it. Rates truncate as fio's (integer KiB/s and requests per
 * second); a mean latency rounds as fio's. A partial window (@whole
 * false, the job ended) has latency entries only: fio, too, averages the
 * latencies it has when a job exits, but takes no rate of a part window. */
/* Thread @t's entries of direction @d from @a, priority column @prio. */
static void put_entries(struct fiolog *l, struct job_logs *jl, unsigned t, unsigned d,
			const struct fiolog_dirsample *a, uint64_t t_ms, bool whole, unsigned prio)
{
	const bool off = jl->offset;
	const double secs = (double)jl->window_ns / 1e9;
	uint64_t ops = a->ops, n = a->lat_n;

	if (!ops)
		return;
	struct logval lv = { .jl = jl };

	if (whole) {
		/* one rate per window: its maximum is itself */
		lv.v = lv.max = (uint64_t)((double)a->bytes / 1024.0 / secs);
		put_line(l, jl->file[LOG_BW * jl->nthreads + t], off, t_ms, &lv, d, prio);
		lv.v = lv.max = (uint64_t)((double)ops / secs);
		put_line(l, jl->file[LOG_IOPS * jl->nthreads + t], off, t_ms, &lv, d, prio);
	}
	if (!n)
		return;
	lv.v = (a->lat_sum_ns + n / 2) / n;
	lv.max = a->lat_max_ns;
	lv.issue = true;
	put_line(l, jl->file[LOG_LAT * jl->nthreads + t], off, t_ms, &lv, d, prio);
	put_line(l, jl->file[LOG_CLAT * jl->nthreads + t], off, t_ms, &lv, d, prio);
}

static void flush_window(struct fiolog *l, struct job_logs *jl, uint64_t t_ms, bool whole)
{
	/* log_prio without cmdprio_*: every request has the job's own */
	const unsigned prio = jl->prio_col ? jl->prio.val[0] : 0;

	for (unsigned t = 0; t < jl->nthreads; t++) {
		const struct fiolog_sample *a = &jl->acc[t];

		for (unsigned d = 0; d < FIOLOG_DIRS; d++) {
			if (!jl->split) {
				put_entries(l, jl, t, d, &a->dir[d], t_ms, whole, prio);
				continue;
			}
			for (unsigned i = 0; i < jl->prio.n; i++)
				put_entries(l, jl, t, d, &a->prio[d][i], t_ms, whole, jl->prio.val[i]);
		}
	}
	memset(jl->acc, 0, jl->nthreads * sizeof(*jl->acc));
	jl->window_ns = 0;
}

static void flush_files(struct fiolog *l)
{
	for (unsigned i = 0; i < l->nfiles; i++) {
		struct logfile *f = &l->files[i];

		if (!f->broken && fflush(f->f)) {
			f->broken = true;
			say(l, "fio log %s: write failed: %s; no more entries", f->path,
			    strerror(errno));
		}
	}
}

static struct job_logs *logged_job(struct fiolog *l, unsigned job)
{
	if (!l || job >= l->njobs || !l->jobs[job].file)
		return NULL;
	return &l->jobs[job];
}

bool fiolog_logs(const struct fiolog *l, unsigned job)
{
	return l && job < l->njobs && l->jobs[job].file;
}

/* The length an entry averages: log_avg_msec, at least one interval. */
static uint64_t window_of(const struct fiolog *l, const struct job_logs *jl)
{
	return jl->avg_ns > l->interval_ns ? jl->avg_ns : l->interval_ns;
}

void fiolog_interval(struct fiolog *l, unsigned job, uint64_t t_ms, uint64_t dt_ns,
		     const struct fiolog_sample *th, bool last)
{
	struct job_logs *jl = logged_job(l, job);

	if (!jl)
		return;
	for (unsigned t = 0; t < jl->nthreads; t++) {
		for (unsigned d = 0; d < FIOLOG_DIRS; d++) {
			jl->acc[t].dir[d].ops += th[t].dir[d].ops;
			jl->acc[t].dir[d].bytes += th[t].dir[d].bytes;
			jl->acc[t].dir[d].lat_n += th[t].dir[d].lat_n;
			jl->acc[t].dir[d].lat_sum_ns += th[t].dir[d].lat_sum_ns;
			if (th[t].dir[d].lat_max_ns > jl->acc[t].dir[d].lat_max_ns)
				jl->acc[t].dir[d].lat_max_ns = th[t].dir[d].lat_max_ns;
			for (unsigned i = 0; jl->split && i < jl->prio.n; i++) {
				struct fiolog_dirsample *a = &jl->acc[t].prio[d][i];
				const struct fiolog_dirsample *b = &th[t].prio[d][i];

				a->ops += b->ops;
				a->bytes += b->bytes;
				a->lat_n += b->lat_n;
				a->lat_sum_ns += b->lat_sum_ns;
			}
		}
	}
	jl->window_ns += dt_ns;
	/* Every interval is an entry when log_avg_msec is no longer; else
	 * the window ends at the first interval boundary that makes it
	 * whole. An interval the sampler began late is shorter, not lost:
	 * its rates are over its own length. */
	if (last || (jl->avg_ns > l->interval_ns && !fiostat_whole(jl->window_ns, jl->avg_ns)))
		return;
	flush_window(l, jl, t_ms, true);
	flush_files(l);
}

void fiolog_job_end(struct fiolog *l, unsigned job, uint64_t t_ms)
{
	struct job_logs *jl = logged_job(l, job);

	if (!jl || !jl->window_ns)
		return;
	/* The job ended inside a window: its entry covers what there was,
	 * as fio writes a window's pending average when a job exits. */
	flush_window(l, jl, t_ms, fiostat_whole(jl->window_ns, window_of(l, jl)));
	flush_files(l);
}

void fiolog_close(struct fiolog *l)
{
	if (!l)
		return;
	for (unsigned i = 0; i < l->nfiles; i++) {
		if (l->files[i].f && fclose(l->files[i].f) && !l->files[i].broken)
			say(l, "fio log %s: write failed: %s", l->files[i].path, strerror(errno));
		free(l->files[i].path);
	}
	for (unsigned i = 0; i < l->njobs; i++) {
		free(l->jobs[i].file);
		free(l->jobs[i].acc);
	}
	free(l->files);
	free(l->jobs);
	free(l);
}
