/*
 * crew.c - a job's threads: each worker's thread around its loop, and
 * the CPU probe.
 *
 * A worker thread publishes who it is, applies the job's placement,
 * sets up its slots and engine, starts its helpers (loop, prefetch),
 * waits out startdelay, then runs one of the three loops with SIGBUS
 * armed, and takes its fault and scheduler counters on both sides of
 * the loop so its totals survive it.
 */
#include "crew.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "latclock.h"
#include "loop.h"
#include "placement.h"
#include "prefetch.h"
#include "sigbus.h"

/* ---- the CPU probe (SPEC 2 cpu_probe) -------------------------------- */

/* One work unit: a fixed chain of integer mixing, about a microsecond
 * of pure CPU with no memory traffic, so its rate shows how much CPU the
 * I/O threads leave over. */
#define PROBE_ROUNDS_PER_UNIT 1024

static void *probe_main(void *arg)
{
	struct crew *c = arg;
	struct thread_stats *st = c->probe;
	uint64_t x = 0x9e3779b97f4a7c15ull, n = 0;

	STAT_STORE(&st->tid, gettid());
	st->start_ns = now_ns();
	STAT_STORE(&st->running, 1);
	while (!__atomic_load_n(&c->probe_stop, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(c->wk.stop, __ATOMIC_RELAXED)) {
		for (int i = 0; i < PROBE_ROUNDS_PER_UNIT; i++) {
			x += 0x9e3779b97f4a7c15ull;
			x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
			x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
		}
		stat_add(&st->probe_units, 1);
		n++;
	}
	STAT_STORE(&st->end_ns, now_ns());
	STAT_STORE(&st->running, 0);
	STAT_STORE(&st->done, 1);
	/* Publish the result so the loop cannot be optimised away. */
	st->pad_hot[0] = x + n;
	return NULL;
}

/* ---- a worker thread ------------------------------------------------- */

static void sleep_until(const struct worker *w, uint64_t when)
{
	while (!worker_should_stop(w)) {
		uint64_t now = now_ns();
		struct timespec ts;
		uint64_t left;

		if (now >= when)
			return;
		/* Sleep in slices so Ctrl-C is noticed. */
		left = when - now < 50000000ull ? when - now : 50000000ull;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left;
		nanosleep(&ts, NULL);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct work *wk = w->wk;
	struct thread_stats *st = w->st;
	sigjmp_buf jb;
	struct err e = { 0 };
	int ret;

	/* pid first: the sampler reads it once it sees the tid. */
	STAT_STORE(&st->pid, getpid());
	STAT_STORE(&st->tid, gettid());
	ret = placement_apply(wk->job, &e);
	if (!ret)
		ret = worker_setup(w, &e);
	if (!ret && wk->ops->init)
		ret = wk->ops->init(&w->et, &e);
	if (ret) {
		worker_fail(w, ret, WORKER_ERROR_SETUP, 0, e.msg);
		goto out_free;
	}
	/* Helper threads start here, untimed, and inherit the placement. */
	if (wk->loop)
		ret = loop_worker_init(w, &e);
	else if (wk->job->prefetch != PREFETCH_NONE)
		ret = worker_prefetch_start(w, &e);
	if (ret) {
		worker_fail(w, ret, WORKER_ERROR_SETUP, 0, e.msg);
		goto out_exit;
	}
	if (wk->job->startdelay_ns)
		sleep_until(w, wk->start_ns + wk->job->startdelay_ns);

	stats_thread_usage(&st->start_majflt, &st->start_minflt, &st->start_nvcsw);
	st->sched_ok = stats_thread_sched(&st->start_cpu_ns, &st->start_wait_ns) == 0;
	st->start_ns = now_ns();
	STAT_STORE(&st->running, 1);
	if (sigsetjmp(jb, 1)) {
		sigbus_arm(NULL);
		worker_fail_bus(w, sigbus_addr());
		goto out_stop;
	}
	sigbus_arm(&jb);
	if (wk->loop)
		loop_run(w);
	else if (job_writes(wk->job) && (wk->ops->flags & ENGINE_F_ASYNC))
		worker_run_async_rw(w);
	else if (job_writes(wk->job))
		worker_run_sync_rw(w);
	else if (wk->ops->flags & ENGINE_F_ASYNC)
		worker_run_async(w);
	else
		worker_run_sync(w);
	sigbus_arm(NULL);
out_stop:
	STAT_STORE(&st->end_ns, now_ns());
	st->rusage_ok = stats_thread_usage(&st->exit_majflt, &st->exit_minflt, &st->exit_nvcsw) == 0;
	if (st->sched_ok)
		st->sched_ok = stats_thread_sched(&st->exit_cpu_ns, &st->exit_wait_ns) == 0;
	STAT_STORE(&st->running, 0);
	/* An engine holding writes of its own hands them to the target
	 * first, so verify and any later reader see every write. */
	if (job_writes(wk->job) && wk->ops->writeback) {
		ret = wk->ops->writeback(&w->et);
		if (ret && !st->failed)
			worker_fail(w, ret, w->tfirst, 0, "write-back at the end of the job");
	}
	/* verify=crc32c: after the job's timed part, so its reads count in
	 * no rate; the sampler has stopped giving the job rows. */
	worker_verify(w);
out_exit:
	/* Helpers first: they may still use the engine and the buffers. */
	loop_worker_exit(w);
	prefetch_stop(w->prefetch);
	w->prefetch = NULL;
	if (wk->ops->exit)
		wk->ops->exit(&w->et);
out_free:
	STAT_STORE(&st->done, 1);
	worker_teardown(w);
	return NULL;
}

/* ---- starting and joining -------------------------------------------- */

int crew_spawn(struct crew *c, struct err *e)
{
	pthread_attr_t attr;
	int ret;

	sigbus_install();
	/* Workers are ordinary threads whatever the controller runs as
	 * (it may hold a real-time priority to sample on time). */
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &(struct sched_param){ .sched_priority = 0 });

	for (unsigned i = 0; i < c->nworkers; i++) {
		struct worker *w = &c->workers[i];

		ret = pthread_create(&w->thread, &attr, worker_main, w);
		if (ret) {
			err_set(e, ret, "starting worker %u of job %s: %s", i, c->wk.job->name, strerror(ret));
			__atomic_store_n(&c->wk.job_stop, 1, __ATOMIC_RELAXED);
			pthread_attr_destroy(&attr);
			/* The ones that never started count as done. */
			for (unsigned k = i; k < c->nworkers; k++)
				STAT_STORE(&c->wk.stats[k].done, 1);
			return -ret;
		}
		w->started = true;
	}
	if (c->probe) {
		ret = pthread_create(&c->probe_thread, &attr, probe_main, c);
		if (ret == 0)
			c->probe_started = true;
		else
			STAT_STORE(&c->probe->done, 1);
	}
	pthread_attr_destroy(&attr);
	return 0;
}

void crew_join(struct crew *c)
{
	for (unsigned i = 0; i < c->nworkers; i++) {
		if (c->workers[i].started)
			pthread_join(c->workers[i].thread, NULL);
		c->workers[i].started = false;
	}
	if (c->probe_started) {
		__atomic_store_n(&c->probe_stop, 1, __ATOMIC_RELAXED);
		pthread_join(c->probe_thread, NULL);
		c->probe_started = false;
	}
}

bool crew_done(const struct crew *c)
{
	for (unsigned i = 0; i < c->nworkers; i++)
		if (!STAT_LOAD(&c->wk.stats[i].done))
			return false;
	return true;
}

void crew_mark_done(struct crew *c)
{
	for (unsigned i = 0; i < c->wk.slots.total; i++)
		STAT_STORE(&c->wk.stats[i].done, 1);
}
