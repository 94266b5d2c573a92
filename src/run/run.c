/*
 * run.c - the run controller.
 *
 * Jobs run in groups: a job with stonewall starts a new group, which
 * waits for every earlier job. The controller thread is also the
 * sampler's clock: it sleeps until start + k * interval (absolute, so
 * samples never drift), lets the sampler turn the interval into CSV rows,
 * and checks which jobs have finished (docs/design.md, The sampler's
 * clock, gives the order of a boundary's steps and why).
 */
#include "run/run.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "job/optdef.h"
#include "lib/latclock.h"
#include "run/collect.h"
#include "out/notes.h"
#include "run/loop.h"
#include "mpi/rankrows.h"
#include "mpi/ranks.h"
#include "run/runwrites.h"
#include "sample/sampler.h"
#include "run/stuck.h"
#include "workload/verify.h"

static void hooks_warn(void *arg, const char *msg)
{
	(void)arg;
	notes_warning("%s", msg);
}

static void hooks_progress(void *arg, const char *path, uint64_t done, uint64_t total)
{
	(void)arg;
	notes_layout(path, done, total);
}

/*
 * fio's groups, for exit_what=group: a job with stonewall or new_group
 * after some job starts the next one (fio's init.c). And exitall: fio
 * keeps one flag for the run, so set in any job it holds for every job.
 */
static void runctl_groups(struct run *r)
{
	unsigned g = 0, in_group = 0;

	for (unsigned i = 0; i < r->njobs; i++) {
		const struct job *j = r->jl->jobs[i];

		if ((j->stonewall || (j->src.fio_noops & FIO_NOOP_NEW_GROUP)) && in_group) {
			g++;
			in_group = 0;
		}
		r->groupid[i] = g;
		in_group++;
		if (j->exitall)
			r->exitall_any = true;
	}
}

/*
 * flow (pace.h): one shared slot per flow_id that some job uses, in
 * memory worker processes share (thread=0, mem_limit), each job's
 * workers pointed at theirs. Its count starts at 1, as fio's.
 */
static int flow_setup(struct run *r, struct err *e)
{
	unsigned n = 0, *ids;

	for (unsigned i = 0; i < r->njobs; i++)
		n += r->jl->jobs[i]->flow != 0;
	if (!n)
		return 0;
	r->flow_len = n * sizeof(struct pace_flow);
	r->flows = mmap(NULL, r->flow_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ids = calloc(n, sizeof(*ids));
	if (r->flows == MAP_FAILED || !ids) {
		if (r->flows == MAP_FAILED)
			r->flows = NULL;
		free(ids);
		return err_set(e, ENOMEM, "flow: out of memory");
	}
	n = 0;
	for (unsigned i = 0; i < r->njobs; i++) {
		const struct job *j = r->jl->jobs[i];
		unsigned k = 0;

		if (!j->flow)
			continue;
		while (k < n && ids[k] != j->flow_id)
			k++;
		if (k == n) {
			ids[n++] = j->flow_id;
			r->flows[k].count = 1;
		}
		r->jrs[i].crew.wk.flow = &r->flows[k];
	}
	free(ids);
	return 0;
}

int run_prepare(struct run *r, const struct joblist *jl, const struct run_opts *o,
		struct err *e)
{
	unsigned nstats = 0;
	int ret;

	memset(r, 0, sizeof(*r));
	r->opts = *o;
	if (!r->opts.stop_grace_ns)
		r->opts.stop_grace_ns = STUCK_GRACE_DEFAULT_NS;
	r->jl = jl;
	r->njobs = jl->n;
	r->hooks.warn = hooks_warn;
	r->hooks.progress = hooks_progress;
	/* Shared, so a mem_limit job's worker process sees a stop request. */
	r->stop = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r->stop == MAP_FAILED) {
		r->stop = NULL;
		return err_set(e, errno, "mmap: %s", strerror(errno));
	}
	r->hooks.stop = r->stop;	/* a layout (job_run_init) stops on Ctrl-C too */
	r->jrs = calloc(r->njobs, sizeof(*r->jrs));
	r->stat_first = calloc(r->njobs, sizeof(*r->stat_first));
	r->job_started = calloc(r->njobs, sizeof(bool));
	r->job_ended = calloc(r->njobs, sizeof(bool));
	r->job_base_ns = calloc(r->njobs, sizeof(uint64_t));
	r->groupid = calloc(r->njobs ? r->njobs : 1, sizeof(*r->groupid));
	r->exit_fired = calloc(r->njobs ? r->njobs : 1, sizeof(*r->exit_fired));
	r->ss = calloc(r->njobs ? r->njobs : 1, sizeof(*r->ss));
	if (!r->jrs || !r->stat_first || !r->job_started || !r->job_ended || !r->job_base_ns ||
	    !r->groupid || !r->exit_fired || !r->ss)
		return err_set(e, ENOMEM, "out of memory");
	runctl_groups(r);
	for (unsigned i = 0; i < r->njobs; i++) {
		r->stat_first[i] = nstats;
		nstats += job_run_nstats(jl->jobs[i]);
	}
	ret = arena_create(&r->arena, nstats);
	if (ret)
		return err_set(e, -ret, "allocating counters for %u threads: %s", nstats, strerror(-ret));
	r->base = calloc(nstats, sizeof(*r->base));
	r->base_taken = calloc(r->njobs, sizeof(bool));
	r->rows_ended = calloc(r->njobs, sizeof(bool));
	if (!r->base || !r->base_taken || !r->rows_ended)
		return err_set(e, ENOMEM, "out of memory");

	/* Every target of every job is opened (and laid out) before anything
	 * runs, so a bad target is an exit-2 error with nothing run. */
	for (unsigned i = 0; i < r->njobs; i++) {
		const struct job *j = jl->jobs[i];

		ret = job_run_prepare(&r->jrs[i], j, i, &r->arena.ts[r->stat_first[i]],
				      r->stop, &r->hooks, e);
		if (ret)
			return err_wrap(e, "%s:%d: job '%s'", j->src.file, j->src.line, j->name);
		r->jrs[i].crew.wk.bell = r->arena.bell;
	}
	ret = flow_setup(r, e);
	if (ret)
		return ret;
	r->views = calloc(r->njobs ? r->njobs : 1, sizeof(*r->views));
	if (!r->views)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned i = 0; i < r->njobs; i++) {
		const struct job_run *jr = &r->jrs[i];
		bool files = !(jr->crew.wk.ops->flags & ENGINE_F_NO_TARGET);

		r->views[i] = (struct sampler_job){
			.job = jr->job,
			.stats = jr->crew.wk.stats,
			.slots = jr->crew.wk.slots,
			.nworkers = jr->crew.nworkers,
			.targets = files ? jr->targets : NULL,
			.ntargets = files ? jr->ntargets : 0,
			.pool = (jr->crew.wk.ops->flags & ENGINE_F_POOL) != 0,
			.pool_batches = (jr->crew.wk.ops->flags & ENGINE_F_REGION) != 0,
		};
	}
	/* Under MPI the rows go to rank 0 (rankrows.c): its CSV is made
	 * here, the exchanges start once every rank has prepared. */
	if (ranks_on()) {
		r->rows = calloc(1, sizeof(*r->rows));
		if (!r->rows)
			return err_set(e, ENOMEM, "out of memory");
		ranks_set_interval(o->interval_ns);
		ret = rankrows_init(r->rows, o->csv_path, sampler_csv_header(), r->stop, e);
		if (ret)
			return ret;
	}
	{
		struct sampler_config sc = {
			.interval_ns = o->interval_ns,
			.csv_path = r->rows ? NULL : o->csv_path,
			.row_sink = r->rows && o->csv_path ? rankrows_add : NULL,
			.row_sink_arg = r->rows,
			.status_line = o->status_line && ranks_rank() == 0,
			.stop = r->stop,
			.njobs = r->njobs,
			.jobs = r->views,
		};

		ret = sampler_create(&r->sampler, &sc, e);
	}
	return ret;
}

void run_request_stop(struct run *r)
{
	if (r->stop)
		__atomic_store_n(r->stop, 1, __ATOMIC_RELAXED);
}

/* A job that could not start fails; the others of its group still run. */
static void start_failed(struct run *r, unsigned j, const struct err *e, int ret)
{
	struct thread_stats *st = &r->jrs[j].crew.wk.stats[0];

	st->error.code = -ret;
	st->error.target = WORKER_ERROR_SETUP;
	st->error.offset = 0;
	snprintf(st->error.what, sizeof(st->error.what), "%s", e->msg);
	st->failed = 1;
	r->base_taken[j] = true;
	r->job_base_ns[j] = now_ns();
	r->job_ended[j] = true;
}

/*
 * MPI: every rank starts the group together, after a barrier
 * (before the sampler's first readings, so a long wait for another rank
 * falls in no row), and on rank 0's grid: g0 is rank 0's start of the
 * group relative to the run's start (itself taken after a barrier), so
 * the boundaries, and the t_s of every rank's rows, are rank 0's.
 */
static int mpi_group_grid(struct run *r, uint64_t *g0, struct err *e)
{
	uint64_t off = *g0 - r->t0;
	int ret = ranks_bcast(&off, sizeof(off), e);

	if (ret)
		return ret;
	*g0 = r->t0 + off;
	return 0;
}

/*
 * MPI: the ranks exchange at each interval boundary (one exchange per
 * boundary crossed, so ranks stay in step when one wakes late), and at
 * once when this rank's last job of the group has just ended, or when
 * stopping with nothing left to run: ranks whose jobs end together (a
 * runtime) end the group together without waiting for a boundary, and a
 * Ctrl-C ends the run in time (Open MPI's mpirun kills its ranks a
 * second after the SIGTERM it sends them). An exchange carries this
 * rank's rows to rank 0 and returns, the same on every rank, whether any
 * rank still runs a job of the group and whether any was asked to stop.
 * The group ends on every rank after the same exchange.
 */
static int mpi_exchange(struct run *r, unsigned left, bool just_done, uint64_t crossed, bool *all_done,
			struct err *e)
{
	bool stopping = __atomic_load_n(r->stop, __ATOMIC_RELAXED) && !left;
	uint64_t n = crossed ? crossed : stopping || just_done;

	for (uint64_t k = 0; k < n && !*all_done; k++) {
		int flags[2] = { left > 0, __atomic_load_n(r->stop, __ATOMIC_RELAXED) != 0 };
		int ret = rankrows_exchange(r->rows, flags, 2, e);

		if (ret)
			return ret;
		/* A rank lost (mpi/ranks.h): the others end with what they have. */
		if (flags[1] || ranks_lost())
			run_request_stop(r);
		*all_done = !flags[0];
	}
	return 0;
}

/*
 * exitall, exitall_on_error (fio's backend.c, libfio.c): when a thread of
 * job @by has ended (and, for exitall_on_error alone, failed), stop the
 * jobs its exit_what names: those of its fio group, every job now
 * running (stonewall: this stonewall group; the next one still runs), or
 * the whole run (all: no later group starts). A job stopped so ends as
 * its runtime would end it: what it did is counted, and it is no error.
 */
static void exit_stop(struct run *r, unsigned first, unsigned last, unsigned by)
{
	const struct job *jb = r->jrs[by].job;

	for (unsigned k = first; k < last; k++) {
		struct runctl_result *rc = &r->res.jobs[k].rc;
		int *stop = r->jrs[k].crew.wk.job_stop;

		if (r->job_ended[k] || !r->job_started[k])
			continue;
		if (jb->exit_what == EXIT_WHAT_GROUP && r->groupid[k] != r->groupid[by])
			continue;
		if (__atomic_load_n(stop, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(stop, 1, __ATOMIC_RELAXED);
		if (k != by && !rc->stopped_by) {
			rc->stopped_by = "exitall";
			snprintf(rc->stopped_by_job, sizeof(rc->stopped_by_job), "%s", jb->name);
		}
	}
	if (jb->exit_what == EXIT_WHAT_ALL)
		r->exit_all = true;
}

/* Has a thread of job @j ended (fio acts at each thread's exit), and
 * does that stop others? */
static void exit_check(struct run *r, unsigned first, unsigned last, unsigned j)
{
	const struct crew *c = &r->jrs[j].crew;
	bool ended = false, failed = false;

	if (r->exit_fired[j] || (!r->exitall_any && !c->wk.job->exitall_on_error))
		return;
	for (unsigned i = 0; i < c->nworkers; i++) {
		if (STAT_LOAD(&c->wk.stats[i].done)) {
			ended = true;
			failed = failed || STAT_LOAD(&c->wk.stats[i].failed);
		}
	}
	if (!ended || (!r->exitall_any && !failed))
		return;
	r->exit_fired[j] = true;
	exit_stop(r, first, last, j);
}

/* steadystate: a reading of job @j's totals when one is due; the job
 * stops once its steady state is attained. */
static void ss_check(struct run *r, unsigned j, uint64_t now)
{
	struct ss_state *ss = &r->ss[j];
	const struct crew *c = &r->jrs[j].crew;
	uint64_t ios = 0, bytes = 0, lat_n = 0, lat_sum = 0;

	if (now < ss_due(ss))
		return;
	for (unsigned i = 0; i < c->nworkers; i++) {
		const struct thread_stats *s = &c->wk.stats[i];

		ios += STAT_LOAD(&s->rops) + STAT_LOAD(&s->wops);
		bytes += STAT_LOAD(&s->rbytes) + STAT_LOAD(&s->wbytes);
		lat_n += STAT_LOAD(&s->lat.n) + STAT_LOAD(&s->wlat.n);
		lat_sum += STAT_LOAD(&s->lat.sum) + STAT_LOAD(&s->wlat.sum);
	}
	if (ss_reading(ss, c->wk.job, now, ios, bytes, lat_n, lat_sum)) {
		struct runctl_result *rc = &r->res.jobs[j].rc;

		__atomic_store_n(c->wk.job_stop, 1, __ATOMIC_RELAXED);
		if (!rc->stopped_by)
			rc->stopped_by = "steadystate";
	}
}

/*
 * After a stop request, a job of [first, last) still running when the
 * grace period ends is stuck: it is named with what it was doing and
 * the processes running it are killed, to be reaped by its own wait;
 * one still running STUCK_REAP_NS later (or whose workers are threads,
 * which cannot be killed) is left to end with the process, its rows
 * and counters taken as they are. How many jobs were left now.
 */
static unsigned stuck_step(struct run *r, unsigned first, unsigned last, uint64_t now)
{
	const uint64_t grace = r->opts.stop_grace_ns;
	unsigned left = 0;

	if (!__atomic_load_n(r->stop, __ATOMIC_RELAXED))
		return 0;
	if (!r->stop_ns)
		r->stop_ns = now;
	if (now - r->stop_ns < grace)
		return 0;
	for (unsigned j = first; j < last; j++) {
		struct job_result *res = &r->res.jobs[j];
		int n;

		if (r->job_ended[j] || job_run_finished(&r->jrs[j]))
			continue;
		if (!res->stuck) {
			res->stuck = true;
			res->error = ETIMEDOUT;
			n = snprintf(res->errmsg, sizeof(res->errmsg), "stuck: not stopped %.1f s after the "
				     "stop request; ", (double)grace / 1e9);
			stuck_describe(&r->jrs[j], res->errmsg + n, sizeof(res->errmsg) - (size_t)n);
			res->stuck_killed = stuck_kill(&r->jrs[j]);
		}
		if (res->stuck_killed && now - r->stop_ns < grace + STUCK_REAP_NS)
			continue;
		if (!r->base_taken[j])
			collect_base(r, j, now);
		if (!r->rows_ended[j]) {
			sampler_job_ended(r->sampler, j, now);
			r->rows_ended[j] = true;
		}
		r->jrs[j].abandoned = true;
		r->job_ended[j] = true;
		r->nabandoned++;
		left++;
	}
	return left;
}

/* Run jobs [first, last) together until all are done. Every job is made
 * ready first (its cache dropped, its memory reserved, its files
 * prewarmed), so no job's set-up falls inside another's measurement;
 * then all start at one moment g0. Samples are due at g0 + k * interval,
 * so every full row of every job spans exactly one interval. */
/* Jobs [first, last) made ready: their counters' bases zeroed, their
 * workers waiting at the start. Returns how many could not be. */
static unsigned group_ready(struct run *r, unsigned first, unsigned last, struct err *e)
{
	unsigned failed = 0;
	int ret;

	for (unsigned j = first; j < last; j++) {
		/* Counters start at zero; a job without ramp_time measures
		 * from its first request, so its base is that zero, taken
		 * before any worker can count. */
		unsigned n = job_run_nstats(r->jrs[j].job);

		for (unsigned i = 0; i < n; i++) {
			struct thread_stats *b = &r->base[r->stat_first[j] + i];

			b->rops = b->rbytes = b->probe_units = 0;
			b->sched_ok = 0;	/* no ramp: the workers' own starts */
			/* Fresh from calloc the histogram is already empty:
			 * left untouched, its 38 KB stay unallocated pages
			 * (2000 jobs: 76 MB). hist_diff reads only
			 * its counts and sum. */
			if (b->lat.n || b->lat.sum)
				hist_init(&b->lat);
			memset(&b->depth, 0, sizeof(b->depth));
			if (job_writes(r->jrs[j].job)) {
				b->wops = b->wbytes = b->syncs = 0;
				stats_init_writes(b);
			}
		}
		ret = job_run_ready(&r->jrs[j], e);
		if (ret) {
			start_failed(r, j, e, ret);
			failed++;
		}
	}
	return failed;
}

/* The ready jobs of [first, last) started together at *@g0 (every rank's
 * at once under MPI). Lowers *@left by the jobs that failed to start. */
static int group_go(struct run *r, unsigned first, unsigned last, uint64_t *g0, unsigned *left,
		    struct err *e)
{
	int ret;

	if (r->rows) {
		ret = ranks_barrier(e);
		if (ret)
			return ret;
	}
	for (unsigned j = first; j < last; j++)
		if (!r->job_ended[j])
			sampler_job_ready(r->sampler, j, job_run_leader(&r->jrs[j]));
	*g0 = now_ns();
	if (r->rows) {
		ret = mpi_group_grid(r, g0, e);
		if (ret)
			return ret;
	}
	/* flow: every thread of the group is in its flow before any starts. */
	for (unsigned j = first; j < last; j++)
		if (!r->job_ended[j])
			pace_flow_join(r->jrs[j].crew.wk.flow, r->jrs[j].job->flow, r->jrs[j].crew.nworkers, false);
	for (unsigned j = first; j < last; j++) {
		if (r->job_ended[j])
			continue;
		ret = job_run_go(&r->jrs[j], *g0, e);
		if (ret) {
			pace_flow_join(r->jrs[j].crew.wk.flow, r->jrs[j].job->flow, r->jrs[j].crew.nworkers, true);
			start_failed(r, j, e, ret);
			(*left)--;
			continue;
		}
		r->job_started[j] = true;
		if (ss_init(&r->ss[j], r->jrs[j].job, r->jrs[j].crew.wk.start_ns + r->jrs[j].job->startdelay_ns))
			notes_warning("job '%s': no memory for steadystate's window: it runs without",
				      r->jrs[j].job->name);
		sampler_job_started(r->sampler, j, r->jrs[j].crew.wk.start_ns, r->jrs[j].crew.wk.ramp_end_ns,
				    r->jrs[j].host.has_cg ? &r->jrs[j].host.cg : NULL);
		if (!r->jrs[j].crew.wk.ramp_end_ns) {
			r->job_base_ns[j] = *g0;
			r->base_taken[j] = true;
		}
	}
	return 0;
}

/* At @now: each running job of [first, last) past its ramp, its run
 * control, its rows ended with its timed part, and joined once its
 * workers finished. Returns how many ended. */
static unsigned group_step(struct run *r, unsigned first, unsigned last, uint64_t now)
{
	unsigned ended = 0;

	for (unsigned j = first; j < last; j++)
		if (!r->job_ended[j] && !r->base_taken[j] && now >= r->jrs[j].crew.wk.ramp_end_ns)
			collect_base(r, j, now);
	for (unsigned j = first; j < last; j++) {
		if (r->job_ended[j])
			continue;
		ss_check(r, j, now);
		exit_check(r, first, last, j);
	}
	/* A job's rows end with its workers' timed part, while the
	 * readings of the host are of that moment: before a verify
	 * read-back or a pool's final write-back. */
	for (unsigned j = first; j < last; j++) {
		if (r->job_ended[j] || r->rows_ended[j] || !crew_timed_part_ended(&r->jrs[j].crew))
			continue;
		if (!r->base_taken[j])
			collect_base(r, j, now);	/* ended inside its ramp */
		sampler_job_ended(r->sampler, j, now);
		r->rows_ended[j] = true;
	}
	for (unsigned j = first; j < last; j++) {
		if (r->job_ended[j] || !job_run_finished(&r->jrs[j]))
			continue;
		/* Its workers may have finished since the look above. */
		exit_check(r, first, last, j);
		if (!r->base_taken[j])
			collect_base(r, j, now);	/* ended inside its ramp */
		/* The last row first: joining removes the job's cgroup. */
		if (!r->rows_ended[j])
			sampler_job_ended(r->sampler, j, now);
		job_run_join(&r->jrs[j]);
		r->job_ended[j] = true;
		ended++;
	}
	return ended;
}

static int run_group(struct run *r, unsigned first, unsigned last, struct err *e)
{
	const uint64_t iv = r->opts.interval_ns;
	unsigned left = last - first;
	uint64_t g0, tick = 0;
	uint32_t bell;
	bool all_done = false;
	int ret;

	left -= group_ready(r, first, last, e);
	ret = group_go(r, first, last, &g0, &left, e);
	if (ret)
		return ret;

	/* The sampling clock: a row per interval from g0, between which
	 * the controller sleeps on the workers' bell. */
	bell = arena_bell_seen(r->arena.bell);
	while (r->rows ? !all_done : left > 0) {
		uint64_t next = g0 + (tick + 1) * iv, now, crossed = 0;
		unsigned left_before = left;

		/* Wake early for a ramp end, so the measured part starts on
		 * time rather than at the next interval. */
		for (unsigned j = first; j < last; j++)
			if (!r->job_ended[j] && !r->base_taken[j] && r->jrs[j].crew.wk.ramp_end_ns < next)
				next = r->jrs[j].crew.wk.ramp_end_ns;
		/* A worker's end rings the bell; a finished job is looked
		 * for every 10 ms too (a worker process that died rings none). */
		now = now_ns();
		if (next > now + 10000000ull)
			next = now + 10000000ull;
		arena_bell_wait(r->arena.bell, bell, next);
		bell = arena_bell_seen(r->arena.bell);
		now = now_ns();
		left -= stuck_step(r, first, last, now);
		/* At a boundary, every job's counters before anything slower
		 * (2000 jobs ending take a while): its rows end at @now. */
		if (now >= g0 + (tick + 1) * iv)
			now = sampler_tick_begin(r->sampler, now);
		left -= group_step(r, first, last, now);
		/* Jobs that ended together: their last rows in one write. */
		sampler_flush(r->sampler);
		if (now >= g0 + (tick + 1) * iv) {
			sampler_tick(r->sampler, now);
			/* Overloaded host: skip the boundaries already past
			 * rather than emit rows of a few microseconds. */
			crossed = (now - g0) / iv - tick;
			tick = (now - g0) / iv;
		}
		if (r->rows) {
			ret = mpi_exchange(r, left, left_before && !left, crossed, &all_done, e);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * The controller is the sampler's clock and runs the samples. On a host
 * whose CPUs the workers saturate, an ordinary thread wakes late and is
 * preempted mid-sample: 200 and 400 busy psync jobs on the 2-vCPU guest
 * left it 2 or 3 samples of the 20 due, one of them 1-1.9 s long for
 * 2 ms of its CPU. A real-time priority of 1 (it sleeps nearly always
 * and takes a few % of one CPU at 2000 jobs: no runaway) keeps samples
 * on time and whole (20 of 20, 1 ms, none preempted). Without that
 * privilege (root, CAP_SYS_NICE or RLIMIT_RTPRIO), the lowest nice value
 * CAP_SYS_NICE or RLIMIT_NICE allows, the jobs' threads keeping the
 * run's (crew.c): at nice -20, 17 of 20 and 21 of 21 samples, 1.3 and
 * 0.8 ms. Else it stays an ordinary thread, and the sampler's figures
 * say how often it was preempted. What it got goes to the JSON.
 */
static bool controller_priority(char *policy, size_t cap, int *was)
{
	struct sched_param sp = { .sched_priority = 1 };
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct rlimit rl;
	int nice_now, floor = 20;

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0) {
		snprintf(policy, cap, "SCHED_FIFO 1");
		return false;
	}
	errno = 0;
	nice_now = getpriority(PRIO_PROCESS, (id_t)tid);
	if (errno)
		nice_now = 0;
	*was = nice_now;
	/* RLIMIT_NICE's ceiling is 20 - nice (setrlimit(2)); CAP_SYS_NICE
	 * (a container that refuses real-time time) any. */
	if (getrlimit(RLIMIT_NICE, &rl) == 0)
		floor = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 40 ? -20 : 20 - (int)rl.rlim_cur;
	if (setpriority(PRIO_PROCESS, (id_t)tid, -20) == 0)
		nice_now = -20;
	else if (floor < nice_now && setpriority(PRIO_PROCESS, (id_t)tid, floor) == 0)
		nice_now = floor;
	snprintf(policy, cap, "SCHED_OTHER nice %d", nice_now);
	return nice_now != *was;
}

int run_execute(struct run *r, struct err *e)
{
	char policy[32];
	int was = 0;
	uint64_t t0;
	struct timeval tv;
	unsigned first = 0;
	int ret = 0;

	r->res.njobs = r->njobs;
	r->res.nglobals = r->jl->nglobals;
	r->res.globals = r->jl->globals;
	r->res.interval_ns = r->opts.interval_ns;
	r->res.jobs = calloc(r->njobs ? r->njobs : 1, sizeof(*r->res.jobs));
	if (!r->res.jobs)
		return err_set(e, ENOMEM, "out of memory");
	/* The jobs' threads inherit the controller's nice: they take the
	 * run's back as they start (crew.c). */
	if (controller_priority(policy, sizeof(policy), &was))
		for (unsigned j = 0; j < r->njobs; j++) {
			r->jrs[j].crew.wk.renice = true;
			r->jrs[j].crew.wk.nice = was;
		}
	if (r->rows) {
		ret = rankrows_start(r->rows, e);
		if (!ret)
			ret = ranks_barrier(e);
		if (ret)
			return ret;
	}
	gettimeofday(&tv, NULL);
	r->res.start_epoch_ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
	t0 = r->t0 = now_ns();
	sampler_begin(r->sampler, t0);
	if (r->rows) {
		/* One wall clock for every rank's rows: rank 0's. */
		ret = ranks_bcast(&r->res.start_epoch_ms, sizeof(r->res.start_epoch_ms), e);
		if (ret)
			return ret;
		sampler_set_epoch0(r->sampler, r->res.start_epoch_ms);
	}

	while (first < r->njobs) {
		unsigned last = first + 1;
		int stop = __atomic_load_n(r->stop, __ATOMIC_RELAXED) != 0;

		/* Under MPI the ranks agree before each group, so a signal
		 * seen by one rank alone stops them all at the same place. */
		if (r->rows && ranks_max(&stop, 1, e) == 0 && (stop || ranks_lost())) {
			stop = 1;
			run_request_stop(r);
		}
		if (stop || r->exit_all)
			break;

		while (last < r->njobs && !r->jl->jobs[last]->stonewall)
			last++;
		ret = run_group(r, first, last, e);
		if (ret)
			break;
		first = last;
	}
	for (unsigned j = 0; j < r->njobs; j++)
		collect_job(r, j);
	r->res.duration_ns = now_ns() - t0;
	r->res.interrupted = __atomic_load_n(r->stop, __ATOMIC_RELAXED) != 0;
	sampler_end(r->sampler, now_ns(), &r->res);
	snprintf(r->res.sampler.policy, sizeof(r->res.sampler.policy), "%s", policy);
	if (r->rows)
		r->res.csv_error = rankrows_csv_error(r->rows);
	return ret;
}

void run_destroy(struct run *r)
{
	sampler_destroy(r->sampler);
	if (r->rows)
		rankrows_close(r->rows);
	free(r->rows);
	/* A stuck job's threads still run, on its jobs, counters, stop
	 * flag and targets: all of it stays until the process exits. */
	if (r->nabandoned)
		return;
	for (unsigned i = 0; r->jrs && i < r->njobs; i++)
		job_run_destroy(&r->jrs[i]);
	for (unsigned i = 0; r->res.jobs && i < r->res.njobs; i++) {
		free(r->res.jobs[i].targets);
		free(r->res.jobs[i].streams);
		free(r->res.jobs[i].w);
		free(r->res.jobs[i].dumped);
		free(r->res.jobs[i].rc.ss_iops);
		free(r->res.jobs[i].rc.ss_bw);
		free(r->res.jobs[i].rc.ss_lat);
	}
	free(r->res.jobs);
	free(r->jrs);
	free(r->views);
	free(r->stat_first);
	free(r->job_started);
	free(r->job_ended);
	free(r->job_base_ns);
	for (unsigned i = 0; r->ss && i < r->njobs; i++)
		ss_free(&r->ss[i]);
	free(r->ss);
	free(r->groupid);
	free(r->exit_fired);
	free(r->base);
	free(r->base_taken);
	free(r->rows_ended);
	arena_destroy(&r->arena);
	if (r->flows)
		munmap(r->flows, r->flow_len);
	if (r->stop)
		munmap(r->stop, sizeof(int));
	memset(r, 0, sizeof(*r));
}
