/*
 * worker.h - one thread of a job, and what the threads of a job share.
 *
 * struct work is what every worker of one job reads while it runs: the
 * job, its engine and the engine's view of the job, where the counters
 * go, and when to stop. struct worker is one thread: its offsets, its
 * request slots and buffers, its engine state, its helpers.
 *
 * A request's life (drawn, queued, checked, consumed, released,
 * counted) is written once, below and in worker.c: a synchronous core
 * and an asynchronous one, which worker.c's loops and loop.c's event
 * loop (loop=) share. Who starts the threads, and in which process, is
 * crew.c's business; where the job runs (cgroup, worker process)
 * jobhost.c's.
 *
 * Workers write only their own thread_stats; the sampler and the
 * writers read those and nothing else of a worker.
 */
#ifndef FAULTLINE_WORKER_H
#define FAULTLINE_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <sys/types.h>

#include "engines/engine.h"
#include "lib/err.h"
#include "workload/gen.h"
#include "workload/iolog.h"
#include "workload/prio.h"
#include "workload/content.h"
#include "run/pace.h"
#include "run/record.h"
#include "run/reqclock.h"
#include "job/job.h"
#include "lib/stats.h"
#include "workload/writes.h"
#include "workload/touch.h"
#include "workload/workload.h"
#include "lib/latclock.h"

struct prefetch;
struct loop_rt;
struct loop_setup;
struct vstate;
struct worker_backlog;
struct pattern;

/* A dry start (jobhost_measure): each worker sets itself up, counts
 * itself in @ready and waits for @release, then leaves without a single
 * request, so what a set-up crew is charged can be read. Shared memory:
 * worker processes (thread=0) see it too. */
struct dry_gate {
	int ready;
	int release;
	int stop;		/* the dry crew's own stop flag */
};

/* What every worker of one job shares. Set up before the workers start;
 * only the stop flags and the clock change after that. */
struct work {
	const struct job *job;
	const struct engine_ops *ops;
	struct engine_job ej;		/* targets, request slots per thread, engine state */
	struct workload_job wj;		/* what the workload's modules read of the job */
	/* iodepth_batch_submit resolved: queued requests are pushed to the
	 * kernel every this many (1..ej.depth). */
	unsigned batch;
	/* iodepth_batch_complete_min/max resolved: a reap waits for
	 * reap_min completions (0: none) and takes at most reap_max. */
	unsigned reap_min, reap_max;
	uint64_t bs_stride;		/* slot buffer spacing: bs rounded up to 4 KiB */
	uint64_t seed;			/* the job's (drawn when randseed is unset) */
	struct thread_stats *stats;	/* the job's slots in the arena, laid out as slots */
	struct job_slots slots;
	struct loop_setup *loop;	/* loop=: the streams (loop.c), else NULL */
	/* read_iolog: the job's replays (workload/iolog.h), else NULL;
	 * worker i replays replay->r[i % replay->nr]. */
	const struct replay_set *replay;
	struct dry_gate *dry;		/* a dry start, else NULL */
	/* cmdprio_*: each request's priority (prio.on), counted per
	 * priority for log_prio (prio_count). */
	struct prio_plan prio;
	bool prio_count;
	/* flow: its flow_id's shared state (pace.h), set by the controller;
	 * NULL without flow. */
	struct pace_flow *flow;
	/* verify_state_load: the earlier run's state per worker (runverify.c),
	 * else NULL. */
	struct vstate *vstate;

	/* Set by the run controller; read by workers. */
	int *stop;			/* non-zero: stop at the next request */
	int *job_stop;			/* a worker failed: the job's others stop
					 * (in the arena: stats[0].job_stop) */
	uint32_t *bell;			/* rung as each worker's timed part ends
					 * (arena_bell_ring), else NULL */
	uint64_t start_ns;		/* CLOCK_MONOTONIC */
	uint64_t ramp_end_ns;		/* 0 = no ramp */
	uint64_t deadline_ns;		/* 0 = none */
	/* Last, after what the workers read as they run: the run's nice
	 * value, when its controller lowered its own to sample on time
	 * (run.c); the job's threads, which inherit the controller's, take
	 * this one back as they start. */
	bool renice;
	int nice;
};

/*
 * One worker. A job's workers sit side by side in one array
 * (worker_array_new), and each writes its generator's state and its sink
 * on every request while it reads its head (wk, tfirst, st) and its
 * engine slots. So a worker starts on a cache line and fills whole lines:
 * no line holds two workers. Without that, the line that takes worker 0's
 * per-request store to sink could also hold worker 1's head, which worker
 * 1 reads on every request: the line moved between the CPUs twice a
 * request. The 8 bytes bufpool added to engine_thread put the two there
 * in half of the heap's placements (tests/bench/README.md).
 */
struct worker {
	struct work *wk;
	unsigned id;			/* 0..numjobs-1 */
	unsigned tfirst, tcount;	/* this worker's targets: wk->ej.targets[tfirst..] */
	unsigned nshare;		/* workers that share these targets (1: scratch files) */
	struct thread_stats *st;
	struct gen gen;
	struct engine_thread et;	/* request slots and the engine's thread state */
	uint8_t *bufs;			/* depth * bs_stride, aligned, ENGINE_F_BUFFERS */
	uint8_t *copybuf;		/* touch=copy destination, bs bytes */
	/* Write jobs: the slots' blocks to write, each filled
	 * once with random data and stamped per write, a buffer for the
	 * verify read-back, and the mix, placement and flush state. */
	uint8_t *wbufs;			/* depth * bs_stride, aligned */
	uint8_t *vbuf;			/* verify=crc32c: bs bytes */
	struct writes wr;
	struct content content;		/* dedupe_percentage, buffer_compress_percentage */
	struct verify_reads *rv;	/* a read job with verify: its checks, else NULL */
	struct worker_backlog *bl;	/* verify_backlog: the last writes, else NULL */
	bool bl_due;			/* ... due a check once nothing is in flight */
	/* verify_pattern or buffer_pattern: written blocks' contents and,
	 * with verify=pattern, what blocks are checked against; else NULL */
	struct pattern *pat;
	uint8_t *sermap;		/* serialize_overlap: 1 per slot in flight, else NULL */
	unsigned coe;			/* continue_on_error: ENGINE_OP bits of the
					 * requests whose errors are counted and skipped */
	uint64_t sink;			/* touch results, so reads are not optimised out */
	struct prefetch *prefetch;	/* prefetch=, or NULL */
	struct loop_rt *loop;		/* loop=: the running loop's state (loop.c) */
	struct record rec;		/* read_iolog, write_iolog (record.h) */
	struct pace pace;		/* rate, rate_min, thinktime (pace.h) */
	uint64_t prio_rng[2];		/* cmdprio_*: the draws (xoroshiro128+) */
	pthread_t thread;
	pid_t pid;			/* thread=0: the worker's process */
	bool started;
} __attribute__((aligned(CACHELINE)));

/* @n workers, zeroed, each on lines of its own (above); free() frees
 * them. NULL when out of memory. */
struct worker *worker_array_new(unsigned n);

/* Where a job's counters sit in the arena (struct job_slots, stats.h). */
void worker_slots(const struct job *job, struct job_slots *s);
/* iodepth_batch_submit, resolved for @depth request slots. */
unsigned worker_batch_resolve(const struct job *job, unsigned depth);

/* In the worker's thread, before its loop: request slots, buffers and
 * the engine's thread state; undone by worker_teardown on any path. */
int worker_setup(struct worker *w, struct err *e);
/* prefetch= on an ordinary worker: one stream per target it reads. */
int worker_prefetch_start(struct worker *w, struct err *e);
void worker_teardown(struct worker *w);

/* The two plain loops: one request at a time (psync, mmap, null), or
 * iodepth requests in flight (io_uring, libaio). */
void worker_run_sync(struct worker *w);
void worker_run_async(struct worker *w);
/* The same two cores for a job that writes (its reads, if mixed, as
 * above), with a writing job's policy: a read job's loop carries none
 * of it. They end with end_fsync's flushes, when asked. */
void worker_run_sync_rw(struct worker *w);
void worker_run_async_rw(struct worker *w);

/*
 * The asynchronous core for a read job whose requests come from several
 * sources, one per request slot, rather than the worker's generator
 * (loop.c's event loop: a slot's requests are one stream's). Source s
 * draws from its own generator (one region), its requests go to its
 * target, prefetch= follows it under key s, and each read of it that
 * completes is counted in its counters too. The core issues from its
 * free slots in the order slot 0, 1, 2, ...; a completed request's slot
 * takes the same source's next request, and a slot whose source has no
 * more is left out. Data the core reads, not hooks it calls: the loop
 * then costs what the plain one does.
 */
struct worker_src {
	struct gen *gen;
	unsigned target;		/* index into the job's targets */
	uint64_t *ops, *bytes;		/* its reads completed, their bytes */
};
struct worker_async_src {
	const uint16_t *slot_src;	/* each request slot's source */
	const struct worker_src *src;
};
void worker_run_async_src(struct worker *w, const struct worker_async_src *src);
/* write_iolog's close lines and last write, after the loop; a log that
 * could not be written fails the worker. */
void worker_iolog_close(struct worker *w);
/* A write request in @r, at @off of the worker's target @tgt: placed,
 * stamped (or filled with the pattern), noted for verify_backlog. */
void worker_prep_write(struct worker *w, struct io_req *r, unsigned tgt, uint64_t off);
/* fio's trims (trimloop.c): one request at a time, each a trim and,
 * for trimwrite, the write of the same block after it. */
void worker_run_trim(struct worker *w);
/* verify=crc32c, after the loop (untimed): read back every block this
 * worker wrote and record what was found in its thread_stats. */
void worker_verify(struct worker *w);

/* runverify.c: what verify does beyond the end-of-job read-back.
 * worker_verify_setup (in worker_setup): a read job's checks, with the
 * state the controller loaded; worker_read_check: one read request
 * checked (consume's slow path); worker_verify_end (after
 * worker_verify): a read job's tally stored, a write job's state file
 * saved; worker_verify_free (in worker_teardown). */
int worker_verify_setup(struct worker *w, struct err *e);
void worker_read_check(struct worker *w, const struct io_req *r);
void worker_verify_end(struct worker *w);
void worker_verify_free(struct worker *w);
/* verify_backlog: the write in @r issued (prep_write); true when the
 * thread's last writes are due a check, which worker_backlog_check
 * then does once they have all completed (nothing in flight). */
bool worker_backlog_note(struct worker *w, const struct io_req *r);
/* verify_pattern, buffer_pattern: @r's block filled (and sealed with
 * the checksum of a checksum verify=), instead of faultline's stamp. */
void worker_pattern_write(struct worker *w, struct io_req *r);
/* The pattern blocks are checked against (verify=pattern), or NULL. */
const struct pattern *worker_check_pattern(const struct worker *w);
void worker_backlog_check(struct worker *w);
/* verify_state_load: each worker's state file read and matched to its
 * targets into wk->vstate, before the job runs; a missing or foreign
 * file is an error naming it. work_vstate_free undoes it. */
int work_vstate_load(struct work *wk, const struct worker *workers, unsigned nworkers,
		     struct err *e);
void work_vstate_free(struct work *wk, unsigned nworkers);

static inline bool worker_should_stop(const struct worker *w)
{
	return __atomic_load_n(w->wk->stop, __ATOMIC_RELAXED) ||
	       __atomic_load_n(w->wk->job_stop, __ATOMIC_RELAXED);
}

/* @r goes to the engine now: what the worker (whose counters are @st)
 * was last doing, for a job that does not stop (relaxed stores the
 * controller may read). */
static inline void worker_note(struct thread_stats *st, const struct io_req *r)
{
	__atomic_store_n(&st->last_off, r->off, __ATOMIC_RELAXED);
	__atomic_store_n(&st->last_len, r->len, __ATOMIC_RELAXED);
	__atomic_store_n(&st->last_target, r->target, __ATOMIC_RELAXED);
	__atomic_store_n(&st->last_op, (uint8_t)(r->op + 1), __ATOMIC_RELAXED);
}

/* Record why @w stopped (code: errno, either sign), unless it is an
 * engine's -ECANCELED for a stop, and stop its job. */
void worker_fail(struct worker *w, int code, unsigned target, uint64_t off, const char *what);
/* After a SIGBUS in @w's own thread: fail it with the target and offset
 * the faulting address belongs to. */
void worker_fail_bus(struct worker *w, const void *addr);

/*
 * After an asynchronous request is queued: push the queued requests to
 * the kernel once iodepth_batch_submit of them wait and @more requests
 * follow before the next reap. The last batch before a reap is left to
 * reap(), which pushes and waits in one call. *@pending counts the
 * requests queued since the last push; reap() empties the queue, so the
 * caller zeroes it after each reap (worker_reaped). @inflight: requests
 * queued or in flight, this one counted, for the iodepth distribution.
 */
static inline int worker_submit_step(struct worker *w, unsigned *pending, bool more,
				     unsigned inflight)
{
	const struct engine_ops *ops = w->wk->ops;

	if (++*pending < w->wk->batch || !more || !ops->submit)
		return 0;
	stats_mark_submit(w->st, *pending, inflight);
	*pending = 0;
	return ops->submit(&w->et);
}

/* Before a reap: what it pushes first (the @pending requests queued
 * since the last push, @inflight in flight), for the iodepth counts. */
static inline void worker_reaping(struct worker *w, unsigned pending, unsigned inflight)
{
	if (pending)
		stats_mark_submit(w->st, pending, inflight);
}

/* What a reap waits for with @inflight requests in flight, when the loop
 * is not draining (iodepth_batch_complete_min, at most what is there). */
static inline unsigned worker_reap_min(const struct worker *w, unsigned inflight)
{
	return w->wk->reap_min < inflight ? w->wk->reap_min : inflight;
}

/* serialize_overlap: whether @r overlaps a request of the thread in
 * flight (a flush, of no length, overlaps nothing). */
static inline bool worker_overlaps(const struct worker *w, const struct io_req *r)
{
	for (unsigned i = 0; i < w->wk->ej.depth; i++) {
		const struct io_req *q = &w->et.reqs[i];

		if (w->sermap[i] && q->target == r->target && q->off < r->off + r->len &&
		    r->off < q->off + q->len)
			return true;
	}
	return false;
}

/* After a reap that returned @got (>= 0) requests. */
static inline void worker_reaped(struct worker *w, int got)
{
	stats_mark_complete(w->st, (unsigned)got);
}

/*
 * ---- a request's life, written once --------------------------------
 *
 * Every loop (worker.c's, loop.c's) draws a request, hands it to the
 * engine, checks what came back, consumes a read, gives the engine's
 * memory back, and counts. The pieces below are those steps; the two
 * cores (worker_sync_core here, the asynchronous one in worker.c) put
 * them in order, and a loop differs only in the policy it passes.
 */

/* The engine's release hook (engine.h), read once per loop so that a
 * loop over an engine without one carries no trace of it. */
typedef void (*worker_release_fn)(struct engine_thread *et, struct io_req *r);

/* @r did not complete as asked (worker.c): continue_on_error counts and
 * skips it, else the worker fails, naming the request's kind. */
void worker_req_bad(struct worker *w, const struct io_req *r);

/* @r completed as asked? Else worker_req_bad; the caller then stops if
 * the worker failed, and goes on if not (continue_on_error). */
static inline bool worker_req_ok(struct worker *w, const struct io_req *r)
{
	if (__builtin_expect(r->res == (int64_t)r->len, 1))
		return true;
	worker_req_bad(w, r);
	return false;
}

/* A completed read's bytes consumed (touch), and checked when the job
 * verifies its reads. */
static inline void worker_consume(struct worker *w, const struct io_req *r)
{
	const struct job *j = w->wk->job;

	if (r->data)
		w->sink += touch_consume(j->touch, j->touch_stride, r->data, r->len, w->copybuf);
	if (__builtin_expect(w->rv != NULL, 0))
		worker_read_check(w, r);
}

/* A completed read: consumed, the engine's memory behind it back
 * (@rel: the engine's release hook, or NULL), counted in @st (w->st,
 * which a loop keeps at hand: a load fewer per request). */
static inline void worker_read_done(struct worker *w, struct thread_stats *st, worker_release_fn rel,
				    struct io_req *r)
{
	worker_consume(w, r);
	if (rel)
		rel(&w->et, r);
	stat_add(&st->rops, 1);
	stat_add(&st->rbytes, r->len);
}

/* A synchronous loop's completed read: as worker_read_done, and its
 * latency counted (@clk); true when the loop's deadline passed. Always
 * inlined, for the reason req_clock_done is. */
static inline __attribute__((always_inline)) bool
worker_sync_read_done(struct worker *w, struct thread_stats *st, worker_release_fn rel, struct io_req *r,
		      struct req_clock *clk)
{
	worker_read_done(w, st, rel, r);
	return req_clock_done(clk, &st->lat);
}

/* A request that completes while its loop stops after a failure: not
 * consumed nor counted, but what completed without error is released,
 * as the engine's contract asks, whatever the loop. */
static inline void worker_req_drop(struct worker *w, worker_release_fn rel, struct io_req *r)
{
	if (rel && r->res == (int64_t)r->len)
		rel(&w->et, r);
}

/*
 * The asynchronous loops' (worker.c's core, loop.c's) answer to one
 * completion, reaped or done inside queue(), by a loop that is
 * @stopping or not: 1 when it completed as asked, to be counted; 0 when
 * it is not counted (the loop stops after a failure: dropped, as
 * worker_req_drop; or continue_on_error counted it as an error);
 * -1 when it did not complete as asked and the worker failed: the loop
 * stops.
 */
static inline __attribute__((always_inline)) int
worker_async_completed(struct worker *w, worker_release_fn rel, struct io_req *r, bool stopping)
{
	if (stopping && w->st->failed) {
		worker_req_drop(w, rel, r);
		return 0;
	}
	if (worker_req_ok(w, r))
		return 1;
	return w->st->failed ? -1 : 0;
}

/* A request an engine completed inside queue(), with @inflight in
 * flight counting it: a push and a reap of one, for the iodepth
 * counts; then as worker_async_completed, never stopping. */
static inline __attribute__((always_inline)) int
worker_async_at_once(struct worker *w, worker_release_fn rel, struct io_req *r, unsigned inflight)
{
	stats_mark_submit(w->st, 1, inflight);
	stats_mark_complete(w->st, 1);
	return worker_async_completed(w, rel, r, false);
}

/* An asynchronous loop's completed read, @ns its latency: as
 * worker_read_done, and the latency counted when the job keeps it
 * (@lat). */
static inline __attribute__((always_inline)) void
worker_async_read_done(struct worker *w, worker_release_fn rel, struct io_req *r, bool lat, uint64_t ns)
{
	worker_read_done(w, w->st, rel, r);
	if (lat)
		hist_add(&w->st->lat, ns);
}

/* What a request of @r's kind is called in a failure. */
static inline const char *worker_req_what(const struct worker *w, const struct io_req *r)
{
	static const char *const what[] = { [IO_WRITE] = "write", [IO_FLUSH] = "flush", [IO_TRIM] = "trim" };

	return r->op == IO_READ ? w->wk->ops->name : what[r->op];
}

/*
 * One reap of an asynchronous loop with @inflight requests in flight
 * (*@pending of them queued since the last push), waiting for @min:
 * the count of completions in @done, 0 after an interrupted wait, -1
 * when the reap failed (the worker failed; what is still in flight is
 * the engine's to cancel at its exit).
 */
static inline int worker_reap(struct worker *w, unsigned *pending, unsigned inflight, unsigned min,
			      unsigned max, struct io_req **done)
{
	int got;

	worker_reaping(w, *pending, inflight);
	got = w->wk->ops->reap(&w->et, min, max, done);
	*pending = 0;
	if (got >= 0) {
		worker_reaped(w, got);
		return got;
	}
	if (got == -EINTR)
		return 0;
	worker_fail(w, got, w->tfirst, 0, "reap");
	return -1;
}

/* rate, rate_min, thinktime (pace.h) before a synchronous request of
 * direction @d: false when the worker stops (worker.c). */
bool worker_pace_sync(struct worker *w, unsigned d, struct req_clock *clk);

/* What a synchronous loop's draw returned besides 0 (none: the loop
 * ends), 1 and NEXT_WAITED: nothing to issue this time round (the draw
 * did the work itself, as a replay's logged flush), go on. */
#define WORKER_NEXT_SKIP (-1)

/*
 * What a synchronous loop varies. Each loop hands worker_sync_core a
 * static const one; the core is always inlined, so the hooks are called
 * (and inlined) directly, as if the loop had been written out by hand.
 *
 * next: the next request into *@r (target, off, len, op; the hook may
 * point *@r at another slot): 1, NEXT_WAITED when it waited for it
 * (its latency starts now), 0 when there is none, WORKER_NEXT_SKIP.
 * prep: @r is due now (after a paced wait, which may end the loop
 * instead): what must not happen to a request never issued, as a
 * write's placement, which marks its block written (optional).
 * done: @r completed as asked: consumed, released, counted (in @st, the
 * worker's counters); true when the loop ends there (its deadline
 * passed).
 * end: after the loop (optional).
 */
struct worker_sync_policy {
	int (*next)(struct worker *w, struct io_req **r, struct req_clock *clk, void *ctx);
	void (*prep)(struct worker *w, struct io_req *r, void *ctx);
	bool (*done)(struct worker *w, struct thread_stats *st, worker_release_fn rel, struct io_req *r,
		     struct req_clock *clk, void *ctx);
	void (*end)(struct worker *w, struct io_req *r, void *ctx);
};

/*
 * The synchronous core: one request at a time, each done when queue()
 * returns, one clock read per request (chained: the end of one is the
 * start of the next). @rel is the engine's release hook or a constant
 * NULL; @writes whether a request may be a write (its direction paces
 * it), a constant.
 */
static inline __attribute__((always_inline)) void
worker_sync_core(struct worker *w, const worker_release_fn rel, const struct worker_sync_policy *const P,
		 const bool writes, void *ctx)
{
	const struct work *wk = w->wk;
	const struct engine_ops *ops = wk->ops;
	struct thread_stats *const st = w->st;
	struct io_req *r = &w->et.reqs[0];
	const bool lat = wk->job->latency;
	struct req_clock clk;
	int ret, got;

	req_clock_start(&clk, lat, wk->deadline_ns ? wk->deadline_ns : UINT64_MAX);
	record_begin(&w->rec, wk->deadline_ns);
	pace_begin(&w->pace);
	while (!worker_should_stop(w) && (got = P->next(w, &r, &clk, ctx))) {
		unsigned dir;

		if (__builtin_expect(got != 1, 0)) {
			if (got == WORKER_NEXT_SKIP)
				continue;
			if (lat)	/* NEXT_WAITED: its latency starts now */
				clk.t0 = latclock_ticks();
		}
		dir = writes && r->op == IO_WRITE ? JOB_DIR_WRITE : JOB_DIR_READ;
		if (__builtin_expect(w->pace.on, 0) && !worker_pace_sync(w, dir, &clk))
			break;
		if (P->prep)
			P->prep(w, r, ctx);
		record_req(&w->rec, r);
		worker_note(st, r);
		ret = ops->queue(&w->et, r);
		if (ret < 0) {
			worker_fail(w, ret, r->target, r->off, worker_req_what(w, r));
			break;
		}
		if (!worker_req_ok(w, r)) {
			if (st->failed)
				break;
			continue;	/* continue_on_error: counted, skipped */
		}
		if (P->done(w, st, rel, r, &clk, ctx))
			break;
		/* rate counts what completed; thinktime follows it */
		if (__builtin_expect(w->pace.on, 0)) {
			pace_issued(&w->pace, dir, r->len);
			if (!pace_sync_done(&w->pace, &w->rec, &clk))
				break;
		}
	}
	if (P->end)
		P->end(w, r, ctx);
}

#endif
