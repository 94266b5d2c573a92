/*
 * collect.c - what a job's run leaves in its result: the counters at the
 * start of the measured part (the base every total is taken against),
 * then at the end the totals, the iodepth and fio figures, the run
 * control's windows and the errors kept for the summary. The controller
 * (run.c) calls these; nothing here waits or runs a job.
 */
#include "run/collect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job/optdef.h"
#include "lib/latclock.h"
#include "run/loop.h"
#include "run/runwrites.h"
#include "sample/sampler.h"
#include "workload/verify.h"

/* A worker's iodepth counts, read while it runs (single writer). */
static void depth_snapshot(struct fiostat_depth *dst, const struct fiostat_depth *src)
{
	for (unsigned i = 0; i < FIOSTAT_DEPTH_BUCKETS; i++) {
		dst->level[i] = __atomic_load_n(&src->level[i], __ATOMIC_RELAXED);
		dst->submit[i] = __atomic_load_n(&src->submit[i], __ATOMIC_RELAXED);
		dst->complete[i] = __atomic_load_n(&src->complete[i], __ATOMIC_RELAXED);
	}
}

/* Start of the measured part: after ramp_time, counters copied so the
 * totals exclude the ramp. */
void collect_base(struct run *r, unsigned j, uint64_t now)
{
	const struct job_run *jr = &r->jrs[j];
	unsigned n = job_run_nstats(jr->job);

	for (unsigned i = 0; i < n; i++) {
		struct thread_stats *b = &r->base[r->stat_first[j] + i];
		const struct thread_stats *s = &r->arena.ts[r->stat_first[j] + i];

		b->rops = STAT_LOAD(&s->rops);
		b->rbytes = STAT_LOAD(&s->rbytes);
		b->probe_units = STAT_LOAD(&s->probe_units);
		b->pool.hits = STAT_LOAD(&s->pool.hits);
		b->pool.misses = STAT_LOAD(&s->pool.misses);
		b->pool.waits = STAT_LOAD(&s->pool.waits);
		b->pool.evictions = STAT_LOAD(&s->pool.evictions);
		b->pool.reads = STAT_LOAD(&s->pool.reads);
		b->pool.writebacks = STAT_LOAD(&s->pool.writebacks);
		b->pool.prefetches = STAT_LOAD(&s->pool.prefetches);
		b->pool.evict_batches = STAT_LOAD(&s->pool.evict_batches);
		b->pool.madvise_calls = STAT_LOAD(&s->pool.madvise_calls);
		hist_snapshot(&b->lat, &s->lat);
		depth_snapshot(&b->depth, &s->depth);
		if (job_writes(jr->job)) {
			b->wops = STAT_LOAD(&s->wops);
			b->wbytes = STAT_LOAD(&s->wbytes);
			b->syncs = STAT_LOAD(&s->syncs);
			hist_snapshot(&b->wlat, &s->wlat);
			hist_snapshot(&b->slat, &s->slat);
		}
	}
	/* The loop's streams with the job's counters, before the slower
	 * reads below: the two totals then start at one moment. */
	loop_take_base(r->jrs[j].crew.wk.loop);
	/* Each running worker's CPU, wait and sleeps at this moment, read
	 * from /proc, so the reader's shares (collect_concurrency) cover
	 * the measured window, not the ramp before it. */
	for (unsigned i = 0; i < jr->crew.nworkers; i++) {
		struct thread_stats *b = &r->base[r->stat_first[j] + i];
		const struct thread_stats *s = &r->arena.ts[r->stat_first[j] + i];
		pid_t pid = STAT_LOAD(&s->pid), tid = STAT_LOAD(&s->tid);

		b->sched_ok = STAT_LOAD(&s->running) && pid > 0 && tid > 0 &&
			      stats_task_sched(pid, tid, &b->start_cpu_ns, &b->start_wait_ns,
					       &b->start_nvcsw) == 0;
		b->start_ns = now;
	}
	r->job_base_ns[j] = now;
	r->base_taken[j] = true;
	sampler_job_measure_start(r->sampler, j, now);
}

/* loop=, offload=, prefetch=: streams, helpers, how often the readers
 * slept. Faults of the helpers come from the sampler. */
static void collect_concurrency(struct run *r, unsigned j)
{
	const struct job_run *jr = &r->jrs[j];
	const struct crew *c = &jr->crew;
	const struct loop_setup *L = c->wk.loop;
	struct job_result *res = &r->res.jobs[j];
	const struct job_slots sl = c->wk.slots;

	res->offload_helpers = sl.noffload;
	res->prefetch_helpers = sl.nprefetch;
	res->sleeps_ok = res->sched_ok = c->nworkers > 0;
	for (unsigned i = 0; i < c->nworkers; i++) {
		const struct thread_stats *s = &c->wk.stats[i];
		const struct thread_stats *b = &r->base[r->stat_first[j] + i];
		/* From the ramp's end when the worker was running then (its
		 * readings taken by take_base), else from its own start. */
		const bool from_base = b->sched_ok && b->start_ns > s->start_ns;
		uint64_t from = from_base ? b->start_ns : s->start_ns;
		uint64_t wall = s->end_ns > from ? s->end_ns - from : 0;
		uint64_t cpu0 = from_base ? b->start_cpu_ns : s->start_cpu_ns;
		uint64_t wait0 = from_base ? b->start_wait_ns : s->start_wait_ns;
		uint64_t cpu = s->exit_cpu_ns > cpu0 ? s->exit_cpu_ns - cpu0 : 0;
		uint64_t wait = s->exit_wait_ns > wait0 ? s->exit_wait_ns - wait0 : 0;
		uint64_t nv0 = from_base ? b->start_nvcsw : s->start_nvcsw;

		if (!s->done || !s->rusage_ok)
			res->sleeps_ok = false;
		else
			res->reader_sleeps += s->exit_nvcsw > nv0 ? s->exit_nvcsw - nv0 : 0;
		if (!s->done || !s->sched_ok) {
			res->sched_ok = false;
		} else {
			res->reader_cpu_ns += cpu;
			/* schedstat and the loop's clock are read a moment
			 * apart: never below zero. */
			res->reader_blocked_ns += wall > cpu + wait ? wall - cpu - wait : 0;
		}
		res->prefetch_reqs += s->prefetch_reqs;
		res->prefetch_bytes += s->prefetch_bytes;
		res->prefetch_skipped += s->prefetch_skipped;
	}
	if (!L)
		return;
	res->streams = calloc(L->n, sizeof(*res->streams));
	if (!res->streams)
		return;
	res->nstreams = L->n;
	for (unsigned i = 0; i < L->n; i++) {
		struct stream_result *sr = &res->streams[i];

		sr->target = L->streams[i].target;
		sr->base = L->streams[i].base;
		sr->len = L->streams[i].len;
		sr->ops = L->stats[i].ops - L->base[i].ops;
		sr->bytes = L->stats[i].bytes - L->base[i].bytes;
	}
}

/*
 * fio's per-job figures: CPU time, context switches and run time of the
 * job's threads (workers and helpers; the cpu probe is a measuring
 * device, not the job), and the iodepth counts of the measured part.
 * A job whose workers counted no push at all ran a synchronous loop:
 * fio counts each of its requests as a push and a reap of one at
 * depth 1, and so does this.
 */
static void collect_fio(struct run *r, unsigned j)
{
	const struct crew *c = &r->jrs[j].crew;
	const struct job_slots sl = c->wk.slots;
	struct job_result *res = &r->res.jobs[j];
	struct fiostat_depth *d = &res->depth;
	/* fio counts a flush as a request too (an io_u of its own). */
	uint64_t pushed = 0, ios = res->rops + (res->w ? res->w->ops + res->w->syncs : 0);

	res->cpu_ok = c->nworkers > 0;
	for (unsigned i = 0; i < sl.total; i++) {
		const struct thread_stats *s = &c->wk.stats[i];
		const struct thread_stats *b = &r->base[r->stat_first[j] + i];

		if (sl.nprobe && i == sl.probe)
			continue;
		if (i < c->nworkers) {
			/* Measured from the end of the ramp or the thread's
			 * start (startdelay), whichever is later. */
			uint64_t from = s->start_ns > r->job_base_ns[j] ? s->start_ns : r->job_base_ns[j];

			res->thread_ns += s->end_ns > from ? s->end_ns - from : 0;
			for (unsigned k = 0; k < FIOSTAT_DEPTH_BUCKETS; k++) {
				d->level[k] += s->depth.level[k] - b->depth.level[k];
				d->submit[k] += s->depth.submit[k] - b->depth.submit[k];
				d->complete[k] += s->depth.complete[k] - b->depth.complete[k];
				pushed += s->depth.submit[k] - b->depth.submit[k];
			}
		}
		if (!s->done || !s->cpu_ok || !s->rusage_ok) {
			res->cpu_ok = false;
			continue;
		}
		res->cpu_thread_ns += s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
		res->usr_ns += s->exit_utime_ns - s->start_utime_ns;
		res->sys_ns += s->exit_stime_ns - s->start_stime_ns;
		res->ctx += (s->exit_nvcsw - s->start_nvcsw) + (s->exit_nivcsw - s->start_nivcsw);
	}
	if (!pushed && ios) {
		d->level[0] = ios;
		d->submit[1] = ios;
		d->complete[1] = ios;
	}
}

static void collect_runctl(struct run *r, unsigned j)
{
	struct runctl_result *rc = &r->res.jobs[j].rc;
	const struct ss_state *ss = &r->ss[j];

	rc->ran = r->job_started[j];
	/* latency_target: each thread searched alone; the shallowest depth */
	for (unsigned i = 0; i < r->jrs[j].crew.nworkers; i++) {
		const struct thread_stats *s = &r->jrs[j].crew.wk.stats[i];

		if (s->lat_depth && (!rc->lat_depth || s->lat_depth < rc->lat_depth))
			rc->lat_depth = s->lat_depth;
		if (s->lat_done && !rc->stopped_by)
			rc->stopped_by = "latency_target";
	}
	if (!r->jrs[j].job->ss_dur_ns)
		return;
	rc->ss = true;
	rc->ss_attained = ss->attained;
	rc->ss_criterion = ss->criterion;
	rc->ss_slope = ss->slope;
	rc->ss_deviation = ss->deviation;
	if (!ss->on || !ss->count)
		return;
	rc->ss_iops = calloc(ss->count, sizeof(uint64_t));
	rc->ss_bw = calloc(ss->count, sizeof(uint64_t));
	rc->ss_lat = calloc(ss->count, sizeof(uint64_t));
	if (!rc->ss_iops || !rc->ss_bw || !rc->ss_lat)
		return;
	ss_window(ss, ss->iops, rc->ss_iops);
	ss_window(ss, ss->bw, rc->ss_bw);
	rc->ss_n = ss_window(ss, ss->lat, rc->ss_lat);
}

/* error_dump: thread @s's kept errors, each a line of the summary. A
 * dump that cannot grow is cut short: the count stands without it. */
static void keep_errors(struct job_result *res, const struct job_run *jr,
			const struct thread_stats *s)
{
	static const char *const ops[] = { "read", "write", "flush", "trim" };
	unsigned n = s->io_errors < STATS_ERR_KEEP ? (unsigned)s->io_errors : STATS_ERR_KEEP;
	char (*d)[360] = realloc(res->dumped, (res->ndumped + n) * sizeof(*d));

	if (!d)
		return;
	res->dumped = d;
	for (unsigned i = 0; i < n; i++) {
		const struct stats_errrec *e = &s->errs[i];

		snprintf(d[res->ndumped++], sizeof(*d), "%s %s offset %llu: %s",
			 e->op < 4 ? ops[e->op] : "request",
			 e->target < jr->ntargets ? jr->targets[e->target].path : "?",
			 (unsigned long long)e->off, strerror(e->err));
	}
}

void collect_job(struct run *r, unsigned j)
{
	const struct job_run *jr = &r->jrs[j];
	const struct crew *c = &jr->crew;
	const struct job *job = jr->job;
	struct job_result *res = &r->res.jobs[j];
	uint64_t end = 0, start = r->job_base_ns[j];
	struct hist tmp;

	out_job_set(&res->job, job);
	res->options = job;
	res->nthreads = c->nworkers;
	res->batch = c->wk.batch;
	res->lat_ok = job->latency;
	res->pool_ok = (c->wk.ops->flags & ENGINE_F_POOL) != 0;
	res->pool_batches_ok = (c->wk.ops->flags & ENGINE_F_REGION) != 0;
	hist_init(&res->lat);
	for (unsigned i = 0; i < c->nworkers; i++) {
		const struct thread_stats *s = &c->wk.stats[i];
		const struct thread_stats *b = &r->base[r->stat_first[j] + i];

		res->rops += s->rops - b->rops;
		res->rbytes += s->rbytes - b->rbytes;
		res->pool.hits += s->pool.hits - b->pool.hits;
		res->pool.misses += s->pool.misses - b->pool.misses;
		res->pool.waits += s->pool.waits - b->pool.waits;
		res->pool.evictions += s->pool.evictions - b->pool.evictions;
		res->pool.reads += s->pool.reads - b->pool.reads;
		res->pool.writebacks += s->pool.writebacks - b->pool.writebacks;
		res->pool.prefetches += s->pool.prefetches - b->pool.prefetches;
		res->pool.evict_batches += s->pool.evict_batches - b->pool.evict_batches;
		res->pool.madvise_calls += s->pool.madvise_calls - b->pool.madvise_calls;
		hist_diff(&tmp, &s->lat, &b->lat);
		hist_merge(&res->lat, &tmp);
		if (s->end_ns > end)
			end = s->end_ns;
		if (s->io_errors) {
			if (!res->io_errors) {
				res->first_error = s->first_error;
				snprintf(res->first_error_at, sizeof(res->first_error_at), "%s offset %llu",
					 s->first_error_target < jr->ntargets ?
						jr->targets[s->first_error_target].path : "?",
					 (unsigned long long)s->first_error_off);
			}
			if (jr->job->error_dump)
				keep_errors(res, jr, s);
			res->io_errors += s->io_errors;
		}
		if (s->failed && !res->error) {
			res->error = s->error.code;
			if (s->error.target == WORKER_ERROR_SETUP || s->error.target >= jr->ntargets)
				snprintf(res->errmsg, sizeof(res->errmsg), "%s", s->error.what);
			else
				snprintf(res->errmsg, sizeof(res->errmsg), "%s: offset %llu: %s: %s",
					 jr->targets[s->error.target].path,
					 (unsigned long long)s->error.offset, s->error.what,
					 strerror(s->error.code));
		}
	}
	/* Exact totals: the min/max the workers saw, not bucket bounds. */
	res->lat.min = UINT64_MAX;
	res->lat.max = 0;
	for (unsigned i = 0; i < c->nworkers && res->lat.n; i++) {
		const struct thread_stats *s = &c->wk.stats[i];

		if (s->lat.n && s->lat.min < res->lat.min)
			res->lat.min = s->lat.min;
		if (s->lat.max > res->lat.max)
			res->lat.max = s->lat.max;
	}
	if (!res->lat.n)
		res->lat.min = 0;
	res->runtime_ns = end > start ? end - start : 0;
	if (c->probe && res->runtime_ns) {
		uint64_t units = c->probe->probe_units - r->base[r->stat_first[j] + c->wk.slots.probe].probe_units;

		res->probe_ok = true;
		res->probe_per_s = (double)units * 1e9 / (double)res->runtime_ns;
	}
	/* A read job with verify has its checks' tally there too. */
	if (job_writes(job) || job_read_verifies(job))
		run_collect_writes(&r->jrs[j], &r->base[r->stat_first[j]], &r->res.jobs[j]);
	res->ntargets = jr->ntargets;
	res->targets = calloc(jr->ntargets ? jr->ntargets : 1, sizeof(*res->targets));
	for (unsigned i = 0; res->targets && i < jr->ntargets; i++) {
		const struct target *t = &jr->targets[i];
		struct target_result *tr = &res->targets[i];

		snprintf(tr->path, sizeof(tr->path), "%s", t->path);
		tr->is_blkdev = t->is_blkdev;
		tr->base = t->base;
		tr->len = t->len;
		tr->sparse = t->sparse;
	}
	collect_concurrency(r, j);
	collect_fio(r, j);
	collect_runctl(r, j);
}
