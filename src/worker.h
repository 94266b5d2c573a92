/*
 * worker.h - a running job and its workers.
 *
 * struct job_run is what a job becomes once its targets are open: the
 * immutable struct job, its targets, the engine, and one struct worker
 * per thread. Workers write only their own thread_stats; the sampler and
 * the writers read those and nothing else of a worker.
 */
#ifndef FAULTLINE_WORKER_H
#define FAULTLINE_WORKER_H

#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "err.h"
#include "cgroup.h"
#include "gen.h"
#include "job.h"
#include "latclock.h"
#include "reserve.h"
#include "stats.h"
#include "engine.h"
#include "target.h"

struct prefetch;
struct loop_rt;
struct loop_setup;

struct worker {
	struct job_run *jr;
	unsigned id;			/* 0..numjobs-1 */
	unsigned tfirst, tcount;	/* this worker's targets: jr->targets[tfirst..] */
	struct thread_stats *st;
	struct gen gen;
	struct io_req *reqs;		/* iodepth slots */
	uint8_t *bufs;			/* iodepth * bs, aligned, ENGINE_F_BUFFERS */
	uint8_t *copybuf;		/* touch=copy destination, bs bytes */
	void *engine_priv;
	uint64_t sink;			/* touch results, so reads are not optimised out */
	struct prefetch *prefetch;	/* prefetch=, or NULL */
	struct loop_rt *loop;		/* loop=: the running loop's state (loop.c) */
	pthread_t thread;
	bool started;
};

struct job_run {
	const struct job *job;
	unsigned index;			/* position in the run */
	const struct engine_ops *ops;
	unsigned ntargets;
	struct target *targets;
	struct gen_cursor *cursors;	/* ntargets, scan=shared */
	unsigned nworkers;
	struct worker *workers;
	struct thread_stats *stats;	/* nworkers entries in the run's arena */
	struct thread_stats *probe;	/* cpu_probe thread's entry, or NULL */
	void *engine_priv;		/* job_setup's state */
	bool setup_done;
	struct reserve reserve;		/* reserve_mem, held while the job runs */
	struct cgroup cg;		/* mem_limit */
	bool has_cg;
	pid_t child;			/* mem_limit: the process the workers run in */
	int child_go;			/* its start pipe, open between ready and go */
	int child_status;
	bool child_reaped;
	pthread_t probe_thread;
	bool probe_started;
	int probe_stop;

	uint64_t bs_stride;		/* slot buffer spacing: bs rounded up to 4 KiB */
	/* Request slots per worker: iodepth for an async engine, 1 for a
	 * sync one; a loop has its streams' (loop x iodepth, or loop). 0 in
	 * a hand-built job_run means iodepth: see job_run_depth. */
	unsigned depth;
	/* iodepth_batch_submit resolved: queued requests are pushed to the
	 * kernel every this many (1..depth; 0 in a hand-built job_run means
	 * depth: see job_run_batch). */
	unsigned batch;
	struct loop_setup *loop;	/* loop=: the streams (loop.c), else NULL */
	const struct target_hooks *hooks;

	/* Set by the run controller; read by workers. */
	int *stop;			/* non-zero: stop at the next request */
	int job_stop;			/* a worker failed: the job's others stop */
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC; 0 = none */
	uint64_t start_ns;
	uint64_t ramp_end_ns;		/* 0 = no ramp */
};

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* With latency off a synchronous loop reads the clock only every this
 * many requests to notice the deadline: about a microsecond of work at
 * the fastest engine, so a run ends within microseconds of it. */
#define DEADLINE_CHECK_EVERY 64
/* With latency on it looks at the deadline (CLOCK_MONOTONIC, like the
 * run controller's) once this much latency-clock time has passed. */
#define DEADLINE_CHECK_NS 100000ull

/* A synchronous loop's clock state (sync_request_done). */
struct req_clock {
	bool lat;
	uint64_t deadline;	/* CLOCK_MONOTONIC ns; UINT64_MAX = none */
	uint64_t t0;		/* lat: latency-clock ticks when the request began */
	uint64_t next_check;	/* lat: ticks of the next deadline check */
	uint64_t check_ticks;	/* lat: DEADLINE_CHECK_NS in ticks */
	uint64_t n;		/* no lat: requests so far */
};

static inline void req_clock_start(struct req_clock *c, bool lat, uint64_t deadline)
{
	c->lat = lat;
	c->deadline = deadline;
	c->n = 0;
	c->check_ticks = latclock_ticks_of(DEADLINE_CHECK_NS);
	c->t0 = latclock_ticks();
	c->next_check = c->t0 + c->check_ticks;
}

/*
 * The end of one synchronous request: with latency on, one read of the
 * latency clock (latclock.h) that both ends this request and starts the
 * next, and a look at the deadline every DEADLINE_CHECK_NS; with it off,
 * a clock read every DEADLINE_CHECK_EVERY requests. True when the
 * deadline has passed.
 */
static inline bool sync_request_done(struct hist *lat_hist, struct req_clock *c)
{
	if (c->lat) {
		uint64_t t1 = latclock_ticks();

		hist_add(lat_hist, latclock_ns(t1 - c->t0));
		c->t0 = t1;
		if (t1 < c->next_check)
			return false;
		c->next_check = t1 + c->check_ticks;
		return now_ns() >= c->deadline;
	}
	return ++c->n % DEADLINE_CHECK_EVERY == 0 && now_ns() >= c->deadline;
}

static inline unsigned job_run_depth(const struct job_run *jr)
{
	return jr->depth ? jr->depth : jr->job->iodepth;
}

unsigned job_batch_resolve(const struct job *job, unsigned depth);

static inline unsigned job_run_batch(const struct job_run *jr)
{
	return jr->batch ? jr->batch : job_run_depth(jr);
}

/*
 * After an asynchronous request is queued: push the queued requests to
 * the kernel once iodepth_batch_submit of them wait and @more requests
 * follow before the next reap. The last batch before a reap is left to
 * reap(), which pushes and waits in one call. *@pending counts the
 * requests queued since the last push; reap() empties the queue, so the
 * caller zeroes it after each reap.
 */
static inline int submit_step(struct worker *w, unsigned *pending, bool more)
{
	const struct engine_ops *ops = w->jr->ops;

	if (++*pending < job_run_batch(w->jr) || !more || !ops->submit)
		return 0;
	*pending = 0;
	return ops->submit(w);
}

/*
 * A job's slots in the run's counter arena, in this order: its workers,
 * the cpu probe, the offload helpers (loop=, offload=K), and one prefetch
 * helper per worker (prefetch=populate|touch). Helpers publish their
 * tid and faults there; their ops stay 0.
 */
struct job_slots {
	unsigned workers;
	unsigned probe, nprobe;
	unsigned offload, noffload;
	unsigned prefetch, nprefetch;
	unsigned total;
};
void job_run_slots(const struct job *job, struct job_slots *s);

/* Prepare a job: open (and lay out) its targets, check contradictions that
 * need the targets (lbs, device end), build workers. Nothing runs yet. */
int job_run_prepare(struct job_run *jr, const struct job *job, unsigned index,
		    struct thread_stats *stats, int *stop,
		    const struct target_hooks *hooks, struct err *e);
/* How many thread_stats slots a job needs (job_slots.total). */
unsigned job_run_nstats(const struct job *job);
/*
 * Starting is two steps so that the jobs of a group start at one moment:
 * job_run_ready does everything before the first request (cache
 * invalidation, reserve_mem, engine set-up, cgroup and worker process,
 * prewarm); job_run_go sets the job's clock to @start_ns and lets the
 * workers run until done, *stop, or the deadline. Either undoes itself
 * on failure. job_run_start is both, starting now.
 */
int job_run_ready(struct job_run *jr, struct err *e);
int job_run_go(struct job_run *jr, uint64_t start_ns, struct err *e);
int job_run_start(struct job_run *jr, struct err *e);
/* True once every worker has exited (the sampler's view). */
bool job_run_finished(struct job_run *jr);
/* Wait for every worker of the job. */
void job_run_join(struct job_run *jr);
void job_run_destroy(struct job_run *jr);

/* For the loop and its helpers (loop.c, offload.c, prefetch.c). */
static inline bool worker_should_stop(const struct worker *w)
{
	return __atomic_load_n(w->jr->stop, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&w->jr->job_stop, __ATOMIC_RELAXED);
}
/* Record why @w stopped (code: errno, either sign) and stop its job. */
void worker_fail(struct worker *w, int code, unsigned target, uint64_t off, const char *what);
/* Where a SIGBUS in the calling thread jumps (NULL: nowhere, a real bug
 * that kills the process). A helper that touches a mapping arms its
 * own; after the jump SIGBUS is still blocked in that thread. */
void worker_bus_arm(sigjmp_buf *jb);
/* In a helper, just after its sigsetjmp returned from a SIGBUS: disarm,
 * unblock SIGBUS for the next request, and fail @r with -EFAULT. */
void worker_bus_caught(struct io_req *r);

#endif
