/*
 * samplertime.c - where a delayacct=1 job's threads' time went, per
 * interval: each worker's delays over taskstats netlink (telemetry/
 * taskstats.h) and its CPU time from schedstat (read for the fault
 * columns), split by telemetry/timeshare.c into the time_*_pct cells of
 * its row, and summed over the measured rows for the summary and JSON.
 *
 * A row has cells when the job's threads were read at both its ends.
 * One query per thread costs microseconds (tests/bench/many-jobs), so
 * with more threads than DA_QUERIES_PER_SAMPLE a job is read at two
 * boundaries in a row once every da_every intervals, jobs staggered,
 * and its other rows' cells stay empty; the warning and the JSON say so.
 * A thread that has ended gives the figures it published as it exited
 * (crew.c): its task is gone by the job's last row.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "lib/latclock.h"
#include "out/notes.h"
#include "sample/samplertime.h"
#include "telemetry/delayacct.h"

/* Queries a sample may make: 0.3-1.2 ms at the 6-24 us one took on the
 * 2-vCPU guest under load (tests/bench/README.md, many-jobs), within the
 * 2 ms a sample of 2000 jobs may cost. */
#define DA_QUERIES_PER_SAMPLE 50

static bool any_job_asks(const struct sampler *s, unsigned *threads)
{
	bool any = false;

	*threads = 0;
	for (unsigned j = 0; j < s->cfg.njobs; j++)
		if (s->cfg.jobs[j].job->delayacct) {
			any = true;
			*threads += s->cfg.jobs[j].nworkers;
		}
	return any;
}

int sampler_time_setup(struct sampler *s)
{
	struct taskstats_delays d;
	struct err e = { 0 };
	unsigned threads;
	int ret;

	s->da_every = 1;
	if (!any_job_asks(s, &threads))
		return 0;
	/* Read in pairs of boundaries: every other pair is no saving. */
	if (threads > DA_QUERIES_PER_SAMPLE)
		s->da_every = (2 * threads + DA_QUERIES_PER_SAMPLE - 1) / DA_QUERIES_PER_SAMPLE;
	if (delayacct_state(procfs_root(), s->da_why, sizeof(s->da_why)) != 1)
		return 0;
	s->tsk = malloc(sizeof(*s->tsk));
	if (!s->tsk)
		return -ENOMEM;
	ret = taskstats_open(s->tsk, &e);
	/* The kernel asks CAP_NET_ADMIN of every query: ask once now. */
	if (!ret)
		ret = taskstats_query(s->tsk, (pid_t)syscall(SYS_gettid), &d);
	if (ret == -EPERM)
		snprintf(e.msg, sizeof(e.msg), "taskstats: the kernel answers only CAP_NET_ADMIN (root)");
	else if (ret && !e.msg[0])
		snprintf(e.msg, sizeof(e.msg), "taskstats: %s", strerror(-ret));
	if (ret) {
		snprintf(s->da_why, sizeof(s->da_why), "%s", e.msg);
		taskstats_close(s->tsk);
		free(s->tsk);
		s->tsk = NULL;
		return 0;
	}
	s->da_why[0] = '\0';
	if (s->da_every > 1)
		notes_note("delay accounting of %u threads: each job is read over "
			"one interval in %u (a query per thread costs microseconds); its other rows' "
			"time_*_pct cells stay empty", threads, s->da_every);
	return 0;
}

void sampler_time_close(struct sampler *s)
{
	if (!s->tsk)
		return;
	taskstats_close(s->tsk);
	free(s->tsk);
	s->tsk = NULL;
}

void sampler_time_start(struct sampler *s, unsigned j, uint64_t start_ns)
{
	struct job_samp *js = &s->jobs[j];

	/* Its threads are new: like their faults and CPU time, their
	 * delays count from zero. */
	for (unsigned i = 0; i < js->nthreads; i++) {
		memset(js->th[i].da_prev, 0, sizeof(js->th[i].da_prev));
		js->th[i].da_prev_cpu = 0;
	}
	js->da_read_t = start_ns;
	js->da_read = true;
}

/* A worker's delays now and its age: its exit figures once it has
 * ended. false when they cannot be had, or it has not begun (*absent). */
static bool thread_delays(struct sampler *s, const struct thread_stats *st, uint64_t *out, uint64_t *age,
			  bool *absent)
{
	struct taskstats_delays d;
	pid_t tid = STAT_LOAD(&st->tid);
	uint64_t t0;
	int ret;

	*age = UINT64_MAX;
	if (STAT_LOAD(&st->done)) {
		memcpy(out, st->exit_delay_ns, sizeof(st->exit_delay_ns));
		*age = st->exit_age_ns;
		return st->delay_ok;
	}
	/* Not begun (on a loaded host a thread can wait seconds for its
	 * first run): nothing to read, and no share to make up for it. */
	if (!tid) {
		*absent = true;
		return false;
	}
	t0 = now_ns();
	ret = taskstats_query(s->tsk, tid, &d);
	s->da_query_ns += now_ns() - t0;
	s->da_queries++;
	/* It may have exited since done was read. */
	if (ret == -ESRCH && STAT_LOAD(&st->done)) {
		memcpy(out, st->exit_delay_ns, sizeof(st->exit_delay_ns));
		*age = st->exit_age_ns;
		return st->delay_ok;
	}
	if (ret) {
		snprintf(s->da_fail, sizeof(s->da_fail), "taskstats: %s", strerror(-ret));
		return false;
	}
	memcpy(out, d.ns, sizeof(d.ns));
	*age = d.age_ns;
	return true;
}


/* A wait the kernel counted from a start it never recorded: seen on
 * Linux 6.18, a thread's first block-I/O wait counted as the time since
 * boot. No wait is longer than the thread's life (plus the microseconds
 * its age is rounded to). */
#define DA_AGE_SLACK_NS 1000000ull

/* Said once a process (only the controller, which samples, writes it). */
static bool warned_bogus;

/* The job's workers' delays and CPU time since its last reading into
 * @row; false when some worker's could not be read, has not begun
 * (*absent), or counted a wait longer than its life (*bogus). Moves the
 * readings on. */
static bool read_job(struct sampler *s, unsigned j, struct timeshare_ns *row, bool *bogus, bool *absent)
{
	const struct sampler_job *sj = &s->cfg.jobs[j];
	struct job_samp *js = &s->jobs[j];
	uint64_t now_d[STATS_DELAYS], age;
	bool ok = true;

	*bogus = *absent = false;
	memset(row, 0, sizeof(*row));
	for (unsigned i = 0; i < sj->nworkers; i++) {
		struct thread_samp *ts = &js->th[i];

		if (!ts->cpu_ok && STAT_LOAD(&sj->stats[i].tid)) {
			snprintf(s->da_fail, sizeof(s->da_fail), "its CPU time (schedstat)");
			ok = false;
			continue;
		}
		if (!thread_delays(s, &sj->stats[i], now_d, &age, absent)) {
			ok = false;
			continue;
		}
		/* A thread's counts never run backwards; a reading that
		 * seems to (its exit figures against a later live one) adds
		 * nothing. */
		for (unsigned k = 0; k < TASKSTATS_NDELAYS; k++) {
			static const enum timeshare_part part[TASKSTATS_NDELAYS] = {
				[TASKSTATS_RUNQ] = TIMESHARE_RUNQ, [TASKSTATS_BLKIO] = TIMESHARE_BLKIO,
				[TASKSTATS_SWAPIN] = TIMESHARE_SWAPIN, [TASKSTATS_RECLAIM] = TIMESHARE_RECLAIM,
				[TASKSTATS_THRASH] = TIMESHARE_THRASH, [TASKSTATS_COMPACT] = TIMESHARE_COMPACT,
			};

			if (age < UINT64_MAX / 2 && now_d[k] > ts->da_prev[k] + age + DA_AGE_SLACK_NS)
				*bogus = true;
			if (now_d[k] > ts->da_prev[k])
				row->ns[part[k]] += now_d[k] - ts->da_prev[k];
			ts->da_prev[k] = now_d[k] > ts->da_prev[k] ? now_d[k] : ts->da_prev[k];
		}
		if (ts->cpu_ns > ts->da_prev_cpu) {
			row->ns[TIMESHARE_CPU] += ts->cpu_ns - ts->da_prev_cpu;
			ts->da_prev_cpu = ts->cpu_ns;
		}
	}
	return ok && !*bogus;
}

bool sampler_time_row(struct sampler *s, unsigned j, uint64_t now, bool ramp, unsigned *tenths)
{
	const struct sampler_job *sj = &s->cfg.jobs[j];
	struct job_samp *js = &s->jobs[j];
	struct timeshare_ns row;
	bool had, ok, bogus, absent;

	if (!js->delayacct || !s->tsk || !sj->nworkers) {
		if (js->delayacct && !js->da_why[0])
			snprintf(js->da_why, sizeof(js->da_why), "%s", sj->nworkers ? s->da_why : "no workers");
		if (js->delayacct && s->da_why[0])
			sampler_warn_once(&s->warned_da, "delay accounting (delayacct=1): %s", s->da_why);
		return false;
	}
	if (!sampler_due(s, j, now, s->da_every)) {
		js->da_read = false;
		return false;
	}
	had = js->da_read && js->da_read_t == js->last_t;
	ok = read_job(s, j, &row, &bogus, &absent);
	js->da_read = ok || bogus;
	js->da_read_t = now;
	/* Once a process: a verdict's every run would say it again. */
	if (bogus && !warned_bogus) {
		warned_bogus = true;
		notes_note("job %s: the kernel counted a thread a wait longer than "
			"its life (a miscount of delay accounting); such a row's time_*_pct cells stay empty",
			sj->job->name);
	} else if (!ok && !bogus && !absent) {
		sampler_warn_once(&s->warned_da, "job %s: a thread's time could not be read (%s) in some row",
				  sj->job->name, s->da_fail);
	}
	if ((bogus || (!ok && !absent)) && had && !ramp) {
		js->da_lost += (uint64_t)sj->nworkers * (now - js->last_t);
		js->da_bogus |= bogus;
	}
	if (!ok || !had || !timeshare_split(&row, (uint64_t)sj->nworkers * (now - js->last_t), tenths))
		return false;
	if (!ramp) {
		timeshare_add(&js->da_total, &row);
		js->da_window += (uint64_t)sj->nworkers * (now - js->last_t);
	}
	return true;
}

void sampler_time_result(const struct sampler *s, unsigned j, struct job_result *r)
{
	const struct job_samp *js = &s->jobs[j];

	r->time_every = s->da_every;
	r->time_threads = s->cfg.jobs[j].nworkers;
	r->time_ns = js->da_total;
	r->time_window_ns = js->da_window;
	r->time_ok = s->cfg.jobs[j].job->delayacct && s->tsk &&
		     timeshare_split(&js->da_total, js->da_window, r->time_tenths);
	/* What is left after the rows that could not be split must be
	 * most of what was due, or the job's shares would be those of a
	 * moment (a 1 s job whose one full row was dropped would be judged
	 * on its last millisecond). */
	if (r->time_ok && js->da_lost > js->da_window) {
		r->time_ok = false;
		snprintf(r->time_why, sizeof(r->time_why),
			 "%s in rows covering %.3g of the %.3g thread-seconds read; the %.3g left are too few to split",
			 js->da_bogus ? "the kernel counted a thread a wait longer than its life"
				      : "a thread's time could not be read",
			 (double)js->da_lost / 1e9, (double)(js->da_lost + js->da_window) / 1e9,
			 (double)js->da_window / 1e9);
		return;
	}
	if (!s->cfg.jobs[j].job->delayacct)
		r->time_why[0] = '\0';
	else if (!r->time_ok)
		snprintf(r->time_why, sizeof(r->time_why), "%s",
			 js->da_why[0] ? js->da_why : s->da_why[0] ? s->da_why : "no measured interval was read");
}
