/*
 * crew.c - a job's workers: each worker's thread (or, with thread=0,
 * process) around its loop, the leader they are started from, and the
 * CPU probe.
 *
 * A worker thread publishes who it is, applies the job's placement,
 * sets up its slots and engine, starts its helpers (loop, prefetch),
 * waits out startdelay, then runs one of the three loops with SIGBUS
 * armed, and takes its fault and scheduler counters on both sides of
 * the loop so its totals survive it.
 */
#include "run/crew.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* linux/ioprio.h's, which older headers lack. */
#ifndef IOPRIO_WHO_PROCESS
#define IOPRIO_WHO_PROCESS 1
#endif

#include "lib/latclock.h"
#include "run/arena.h"
#include "workload/prio.h"
#include "run/loop.h"
#include "run/placement.h"
#include "run/prefetch.h"
#include "run/sigbus.h"
#include "telemetry/taskstats.h"

/* ---- the CPU probe (cpu_probe) -------------------------------------- */

/* One work unit: a fixed chain of integer mixing, about a microsecond
 * of pure CPU with no memory traffic, so its rate shows how much CPU the
 * I/O threads leave over. */
#define PROBE_ROUNDS_PER_UNIT 1024

/* A thread of the job at the run's nice value, not its controller's
 * (struct work.renice): raising one's own nice is always permitted. */
static void ordinary_nice(const struct work *wk)
{
	if (wk->renice)
		setpriority(PRIO_PROCESS, 0, wk->nice);
}

static void *probe_main(void *arg)
{
	struct crew *c = arg;
	struct thread_stats *st = c->probe;
	uint64_t x = 0x9e3779b97f4a7c15ull, n = 0;

	ordinary_nice(&c->wk);
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
	st->probe_sink = (uint8_t)(x + n);
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

/* A dry start: set up, counted, held until the charge is read. */
static void dry_wait(struct dry_gate *g)
{
	__atomic_add_fetch(&g->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&g->release, __ATOMIC_ACQUIRE))
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
}

/* prioclass/prio: the thread's own I/O priority, as fio's
 * ioprio_set(IOPRIO_WHO_PROCESS, 0, ...) for each job's thread; every
 * request it issues without one of its own carries it. */
static int set_ioprio(const struct workload_job *wj, struct err *e)
{
	unsigned v = prio_job_value(wj);

	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, (int)v) < 0)
		return err_set(e, errno, "ioprio_set(class %u, level %u): %s", v >> PRIO_CLASS_SHIFT,
			       v & 7, strerror(errno));
	return 0;
}

/* delayacct=1: the socket a worker asks its own delays on as it ends,
 * opened before its timed part (a socket and a family lookup cost a
 * loaded host milliseconds; the one query at the end, microseconds).
 * NULL when the job does not ask or the kernel does not answer. */
static struct taskstats_sock *delays_open(const struct job *j)
{
	struct taskstats_sock *ts = j->delayacct ? malloc(sizeof(*ts)) : NULL;

	if (ts && taskstats_open(ts, NULL)) {
		free(ts);
		ts = NULL;
	}
	return ts;
}

/* The thread's delays as it ends, for the job's last row: the sampler
 * asks the kernel by tid, and this task is gone by then. */
static void exit_delays(struct thread_stats *st, struct taskstats_sock *ts)
{
	struct taskstats_delays d;

	_Static_assert(STATS_DELAYS == TASKSTATS_NDELAYS, "stats.h's exit_delay_ns is taskstats.h's delays");
	if (!ts || taskstats_query(ts, gettid(), &d))
		return;
	memcpy(st->exit_delay_ns, d.ns, sizeof(st->exit_delay_ns));
	st->exit_age_ns = d.age_ns;
	st->delay_ok = 1;
}

static void delays_close(struct taskstats_sock *ts)
{
	if (!ts)
		return;
	taskstats_close(ts);
	free(ts);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct work *wk = w->wk;
	struct thread_stats *st = w->st;
	sigjmp_buf jb;
	struct err e = { 0 };
	struct taskstats_sock *volatile tsk = NULL;	/* kept across the siglongjmp */
	int ret;

	/* pid first: the sampler reads it once it sees the tid. */
	STAT_STORE(&st->pid, getpid());
	STAT_STORE(&st->tid, gettid());
	ordinary_nice(wk);
	ret = placement_apply(wk->job, &e);
	if (!ret && wk->job->prio_set)
		ret = set_ioprio(&wk->wj, &e);
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
	if (wk->dry) {
		dry_wait(wk->dry);
		goto out_exit;
	}
	if (wk->job->startdelay_ns)
		sleep_until(w, wk->start_ns + wk->job->startdelay_ns);

	tsk = delays_open(wk->job);
	stats_thread_usage(&st->start_majflt, &st->start_minflt, &st->start_nvcsw);
	st->sched_ok = stats_thread_sched(&st->start_cpu_ns, &st->start_wait_ns) == 0;
	st->cpu_ok = stats_thread_cpu(&st->start_utime_ns, &st->start_stime_ns, &st->start_nivcsw) == 0;
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
	else if (job_trims(wk->job))
		worker_run_trim(w);
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
	/* flow: its requests and weight leave the flow (pace.h). */
	pace_end(&w->pace);
	/* latency_target: the depth its search ended at (pace.h). */
	if (w->pace.lt) {
		STAT_STORE(&st->lat_depth, w->pace.qd);
		STAT_STORE(&st->lat_done, w->pace.lt_state > 0);
	}
	arena_bell_ring(wk->bell);
	worker_iolog_close(w);
	st->rusage_ok = stats_thread_usage(&st->exit_majflt, &st->exit_minflt, &st->exit_nvcsw) == 0;
	if (st->sched_ok)
		st->sched_ok = stats_thread_sched(&st->exit_cpu_ns, &st->exit_wait_ns) == 0;
	if (st->cpu_ok)
		st->cpu_ok = stats_thread_cpu(&st->exit_utime_ns, &st->exit_stime_ns, &st->exit_nivcsw) == 0;
	exit_delays(st, tsk);
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
	worker_verify_end(w);
out_exit:
	/* Helpers first: they may still use the engine and the buffers. */
	loop_worker_exit(w);
	prefetch_stop(w->prefetch);
	w->prefetch = NULL;
	if (wk->ops->exit)
		wk->ops->exit(&w->et);
out_free:
	/* flow: a worker that ended before its loop leaves too. */
	pace_end(&w->pace);
	delays_close(tsk);
	STAT_STORE(&st->done, 1);
	worker_teardown(w);
	return NULL;
}

/* ---- workers as processes (thread=0) -------------------------------- */

/* In the worker's own process: the engine's job state made here (mmap:
 * a mapping in this address space alone, as fio's processes have),
 * then the worker on the process's one thread. */
static int process_main(struct crew *c, struct worker *w)
{
	struct work *wk = &c->wk;
	struct err e = { 0 };

	if (wk->ops->job_setup && wk->ops->job_setup(&wk->ej, &e) < 0) {
		worker_fail(w, e.code, WORKER_ERROR_SETUP, 0, e.msg);
		STAT_STORE(&w->st->done, 1);
		return 1;
	}
	worker_main(w);
	if (wk->ops->job_teardown)
		wk->ops->job_teardown(&wk->ej);
	return 0;
}

static int spawn_process(struct crew *c, struct worker *w, struct err *e)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return err_set(e, errno, "thread=0: forking worker %u of job %s: %s", w->id,
			       c->wk.job->name, strerror(errno));
	if (pid == 0) {
		/* Die with the task that forked us, even one killed by
		 * SIGKILL, as jobhost_fork's child does; a parent
		 * that died before prctl took effect shows as a changed
		 * parent pid. (The signal follows the forking thread, the
		 * leader, which outlives its workers in crew_join.) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		_exit(process_main(c, w));
	}
	__atomic_store_n(&w->pid, pid, __ATOMIC_RELAXED);	/* read by stuck.c meanwhile */
	return 0;
}

/* A worker process has exited with @status. Killed by a signal (the OOM
 * killer, under a tight mem_limit), it fails its slot and stops the
 * job, as a killed thread would have taken the job's process down. */
static void reaped(struct crew *c, struct worker *w, int status)
{
	struct thread_stats *st = w->st;

	if (WIFSIGNALED(status) && !STAT_LOAD(&st->failed)) {
		st->error.target = WORKER_ERROR_SETUP;
		st->error.offset = 0;
		char how[320];

		/* Under mem_limit, what the cgroup held and its limit, and
		 * whether its OOM killer did it; never the errno of a wait. */
		cgroup_describe_kill(c->cg, WTERMSIG(status), how, sizeof(how));
		st->error.code = c->cg && strstr(how, "OOM killer") ? ENOMEM : EINTR;
		snprintf(st->error.what, sizeof(st->error.what), "worker process %u %s", w->id, how);
		STAT_STORE(&st->failed, 1);
		__atomic_store_n(c->wk.job_stop, 1, __ATOMIC_RELAXED);
	}
	STAT_STORE(&st->done, 1);
	w->started = false;
}

/* Wait for every worker process, in the order they end (a pidfd each),
 * so the first to be killed stops the others at once. Without pidfds
 * (Linux < 5.3), in order. */
static void join_processes(struct crew *c)
{
	struct pollfd *pf = calloc(c->nworkers, sizeof(*pf));
	unsigned left = 0;
	int status;

	for (unsigned i = 0; i < c->nworkers; i++) {
		struct worker *w = &c->workers[i];

		if (pf)
			pf[i].fd = -1;
		if (!w->started)
			continue;
		left++;
		if (pf) {
			pf[i].fd = (int)syscall(SYS_pidfd_open, w->pid, 0);
			pf[i].events = POLLIN;
		}
		if (pf && pf[i].fd < 0) {
			for (unsigned k = 0; k < i; k++)
				if (pf[k].fd >= 0)
					close(pf[k].fd);
			free(pf);
			pf = NULL;
		}
	}
	while (left && pf) {
		if (poll(pf, c->nworkers, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (unsigned i = 0; i < c->nworkers; i++) {
			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			while (waitpid(c->workers[i].pid, &status, 0) < 0 && errno == EINTR)
				;
			reaped(c, &c->workers[i], status);
			close(pf[i].fd);
			pf[i].fd = -1;
			left--;
		}
	}
	for (unsigned i = 0; i < c->nworkers; i++) {
		struct worker *w = &c->workers[i];

		if (pf && pf[i].fd >= 0)
			close(pf[i].fd);
		if (!w->started)
			continue;
		while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
			;
		reaped(c, w, status);
	}
	free(pf);
	/* Their helpers went with them. */
	crew_mark_done(c);
}

/* ---- starting and joining -------------------------------------------- */

/* Workers, leaders and the probe are ordinary threads whatever the
 * controller runs as (it may hold a real-time priority to sample on
 * time). */
static void ordinary_attr(pthread_attr_t *attr)
{
	pthread_attr_init(attr);
	pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(attr, SCHED_OTHER);
	pthread_attr_setschedparam(attr, &(struct sched_param){ .sched_priority = 0 });
}

int crew_spawn(struct crew *c, struct err *e)
{
	pthread_attr_t attr;
	int ret = 0;

	sigbus_install();
	ordinary_attr(&attr);
	for (unsigned i = 0; i < c->nworkers; i++) {
		struct worker *w = &c->workers[i];

		if (c->wk.job->thread) {
			ret = -pthread_create(&w->thread, &attr, worker_main, w);
			if (ret)
				err_set(e, -ret, "starting worker %u of job %s: %s", i, c->wk.job->name,
					strerror(-ret));
		} else {
			ret = spawn_process(c, w, e);
		}
		if (ret) {
			__atomic_store_n(c->wk.job_stop, 1, __ATOMIC_RELAXED);
			/* The ones that never started count as done, and
			 * their flow weight (counted by the controller)
			 * goes. */
			for (unsigned k = i; k < c->nworkers; k++)
				STAT_STORE(&c->wk.stats[k].done, 1);
			pace_flow_join(c->wk.flow, c->wk.job->flow, c->nworkers - i, true);
			break;
		}
		w->started = true;
	}
	pthread_attr_destroy(&attr);
	return ret;
}

void crew_join(struct crew *c)
{
	if (!c->wk.job->thread) {
		join_processes(c);
		return;
	}
	for (unsigned i = 0; i < c->nworkers; i++) {
		if (c->workers[i].started)
			pthread_join(c->workers[i].thread, NULL);
		c->workers[i].started = false;
	}
}

void crew_probe_start(struct crew *c)
{
	pthread_attr_t attr;

	if (!c->probe || c->probe_started)
		return;
	ordinary_attr(&attr);
	if (pthread_create(&c->probe_thread, &attr, probe_main, c) == 0)
		c->probe_started = true;
	else
		STAT_STORE(&c->probe->done, 1);
	pthread_attr_destroy(&attr);
}

void crew_probe_stop(struct crew *c)
{
	if (!c->probe_started)
		return;
	__atomic_store_n(&c->probe_stop, 1, __ATOMIC_RELAXED);
	pthread_join(c->probe_thread, NULL);
	c->probe_started = false;
}

/* ---- the leader ------------------------------------------------------ */

enum { LEAD_WAIT, LEAD_GO, LEAD_ABORT };

static void *leader_main(void *arg)
{
	struct crew *c = arg;
	struct err e = { 0 };
	bool go;

	ordinary_nice(&c->wk);
	pthread_mutex_lock(&c->lead_mu);
	c->leader_tid = gettid();
	pthread_cond_broadcast(&c->lead_cv);
	while (c->lead_state == LEAD_WAIT)
		pthread_cond_wait(&c->lead_cv, &c->lead_mu);
	go = c->lead_state == LEAD_GO;
	pthread_mutex_unlock(&c->lead_mu);
	if (!go)
		return NULL;
	if (crew_spawn(c, &e) < 0)
		crew_fail(c, &e);
	crew_join(c);
	return NULL;
}

/* A leader does nothing but start and wait: a small stack will do. */
#define LEADER_STACK (256u << 10)

int crew_lead(struct crew *c, struct err *e)
{
	pthread_attr_t attr;
	int ret;

	pthread_mutex_init(&c->lead_mu, NULL);
	pthread_cond_init(&c->lead_cv, NULL);
	c->lead_state = LEAD_WAIT;
	c->leader_tid = 0;
	ordinary_attr(&attr);
	pthread_attr_setstacksize(&attr, LEADER_STACK);
	ret = pthread_create(&c->leader, &attr, leader_main, c);
	pthread_attr_destroy(&attr);
	if (ret) {
		pthread_cond_destroy(&c->lead_cv);
		pthread_mutex_destroy(&c->lead_mu);
		return err_set(e, ret, "starting job %s: %s", c->wk.job->name, strerror(ret));
	}
	c->leader_started = true;
	pthread_mutex_lock(&c->lead_mu);
	while (!c->leader_tid)
		pthread_cond_wait(&c->lead_cv, &c->lead_mu);
	pthread_mutex_unlock(&c->lead_mu);
	return 0;
}

static void lead_state(struct crew *c, int state)
{
	pthread_mutex_lock(&c->lead_mu);
	if (c->lead_state == LEAD_WAIT)
		c->lead_state = state;
	pthread_cond_broadcast(&c->lead_cv);
	pthread_mutex_unlock(&c->lead_mu);
}

void crew_lead_go(struct crew *c)
{
	if (c->leader_started)
		lead_state(c, LEAD_GO);
}

void crew_lead_join(struct crew *c)
{
	if (!c->leader_started)
		return;
	lead_state(c, LEAD_ABORT);	/* if it never started: end it */
	pthread_join(c->leader, NULL);
	pthread_cond_destroy(&c->lead_cv);
	pthread_mutex_destroy(&c->lead_mu);
	c->leader_started = false;
	c->leader_tid = 0;
}

void crew_fail(struct crew *c, const struct err *e)
{
	struct thread_stats *st = &c->wk.stats[0];

	if (STAT_LOAD(&st->failed))
		return;
	st->error.code = e->code;
	st->error.target = WORKER_ERROR_SETUP;
	st->error.offset = 0;
	snprintf(st->error.what, sizeof(st->error.what), "%s", e->msg);
	STAT_STORE(&st->failed, 1);
}

bool crew_timed_part_ended(const struct crew *c)
{
	for (unsigned i = 0; i < c->nworkers; i++)
		if (!STAT_LOAD(&c->wk.stats[i].end_ns))
			return false;
	return c->nworkers > 0;
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
	const struct job_slots *sl = &c->wk.slots;

	/* Not the probe: it runs in the run's process, and says so itself. */
	for (unsigned i = 0; i < sl->total; i++)
		if (!(sl->nprobe && i >= sl->probe && i < sl->probe + sl->nprobe))
			STAT_STORE(&c->wk.stats[i].done, 1);
}
