/*
 * worker.c - the request cores every loop shares (a worker's set-up in
 * its own thread and a job's layout: workersetup.c).
 *
 * A worker takes (target, offset) pairs from its generator (or a
 * replay's log), hands them to the engine, consumes the bytes with
 * touch, gives the engine's memory back, and counts. That life is
 * written once per way of waiting: the synchronous core
 * (worker_sync_core, worker.h: psync, mmap, null, the pools; one clock
 * read per request, chained so the end of one request is the start of
 * the next) and the asynchronous core (acore_run below: io_uring,
 * libaio; a batch of iodepth requests in flight, one clock read per
 * batch issued and per batch reaped). A read job's loop and a writing
 * job's are the same core with a different policy, fixed before the
 * loop starts: for the synchronous core the hooks of a static const
 * struct worker_sync_policy, for the asynchronous one a constant flag.
 * Both are always inlined where the loop is chosen, so each loop is
 * compiled as if written out by hand, and a read job's carries no trace
 * of writes (a read job's synchronous loops are in syncread.c). The
 * event loop (loop=, loop.c) runs its streams through
 * the same synchronous core and the same completion steps; the thread
 * around a loop is crew.c.
 *
 * Hot path rules: no locks, no shared atomics, no allocation, no system
 * call beyond the I/O itself. Counters go to the worker's own
 * thread_stats with plain (relaxed) stores.
 */
#include "run/worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/blockdata.h"
#include "lib/latclock.h"
#include "run/prefetch.h"

/* A request that returns no bytes at all is an error, but an engine
 * reporting a short read is treated the same way: the region was laid
 * out to be fully readable, so a short read means the target shrank. */

/* ---- errors ---------------------------------------------------------- */

void worker_fail(struct worker *w, int code, unsigned target, uint64_t off, const char *what)
{
	struct thread_stats *st = w->st;

	/* A request an engine called off because the worker is stopping
	 * (a pool's wait, engine.h) ends the loop as the stop does. */
	if ((code == ECANCELED || code == -ECANCELED) && worker_should_stop(w))
		return;
	st->error.code = code < 0 ? -code : code;
	st->error.target = target;
	st->error.offset = off;
	snprintf(st->error.what, sizeof(st->error.what), "%s", what);
	STAT_STORE(&st->failed, 1);
	/* The job is failed: its other workers stop too. */
	__atomic_store_n(w->wk->job_stop, 1, __ATOMIC_RELAXED);
}

void worker_fail_bus(struct worker *w, const void *addr)
{
	const struct engine_job *ej = &w->wk->ej;
	uintptr_t a = (uintptr_t)addr;

	for (unsigned i = w->tfirst; i < w->tfirst + w->tcount; i++) {
		const struct target *t = &ej->targets[i];
		uintptr_t lo = (uintptr_t)t->map;

		if (t->map && a >= lo && a < lo + t->map_len) {
			worker_fail(w, EIO, i, a - lo, "SIGBUS on mmap access (file truncated or read error)");
			return;
		}
	}
	worker_fail(w, EIO, w->tfirst, 0, "SIGBUS at an address outside the job's mappings");
}

/* ---- pace (pace.h): the slow paths behind one branch ------------------ */

/* pace.c's verdict on a request: false when the worker stops (a stop,
 * or rate_min not met, which fails the job). */
__attribute__((noinline)) bool worker_pace_sync(struct worker *w, unsigned d, struct req_clock *clk)
{
	char why[160];
	int ret = pace_sync(&w->pace, &w->rec, w->st, d, clk, why, sizeof(why));

	if (ret < 0)
		worker_fail(w, ETIMEDOUT, w->tfirst, 0, why);
	return ret > 0;
}

static __attribute__((noinline)) int pace_async_w(struct worker *w, unsigned d, unsigned inflight,
						  bool lat, uint64_t *t)
{
	char why[160];
	int ret = pace_async(&w->pace, &w->rec, w->st, d, inflight, lat, t, why, sizeof(why));

	if (ret == PACE_MIN_FAILED) {
		worker_fail(w, ETIMEDOUT, w->tfirst, 0, why);
		return -1;
	}
	return ret;
}

/* ---- a request that did not complete as asked ------------------------- */

/*
 * continue_on_error: a failed request of a kind the job goes on after
 * (w->coe: ENGINE_OP bits) is counted, the first one kept, and skipped;
 * true then. False: the worker fails as without the option.
 */
static bool coe_take(struct worker *w, const struct io_req *r)
{
	const struct job *j = w->wk->job;
	struct thread_stats *st = w->st;
	/* fio's kinds: a flush's error is a write's */
	const unsigned kind = r->op == IO_READ ? 0 : 1;
	const int err = r->res < 0 ? (int)-r->res : EIO;	/* a short transfer is EIO */
	bool listed = false;

	if (!(w->coe & ENGINE_OP(r->op)))
		return false;
	/* fio's td_non_fatal_error: the kind's ignore_error list, else
	 * EIO and EILSEQ */
	if (!j->ignore_nr[kind])
		listed = err == EIO || err == EILSEQ;
	for (unsigned i = 0; i < j->ignore_nr[kind] && !listed; i++)
		listed = j->ignore_err[kind][i] == err;
	if (!listed)
		return false;
	if (!st->io_errors) {
		st->first_error = err;
		st->first_error_target = r->target;
		st->first_error_off = r->off;
	}
	if (st->io_errors < STATS_ERR_KEEP)
		st->errs[st->io_errors] = (struct stats_errrec){ .err = err, .target = r->target,
								 .off = r->off, .op = r->op };
	STAT_STORE(&st->io_errors, st->io_errors + 1);
	return true;
}

/* A request that returns no bytes at all is an error, but an engine
 * reporting a short read is treated the same way: the region was laid
 * out to be fully readable, so a short read means the target shrank. */
__attribute__((noinline)) void worker_req_bad(struct worker *w, const struct io_req *r)
{
	if (__builtin_expect(w->coe != 0, 0) && coe_take(w, r))
		return;
	if (r->res == -EFAULT && r->op == IO_READ && (w->wk->ops->flags & ENGINE_F_MAPPED))
		/* offload=: a helper's access to the mapping faulted */
		worker_fail(w, EIO, r->target, r->off,
			    "SIGBUS on mmap access in an offload helper (file truncated or read error)");
	else if (r->res < 0)
		worker_fail(w, (int)-r->res, r->target, r->off, worker_req_what(w, r));
	else if (r->op == IO_READ)
		worker_fail(w, EIO, r->target, r->off, "short read (target shrank?)");
	else if (r->op == IO_WRITE)
		worker_fail(w, EIO, r->target, r->off, "short write (target full or shrank?)");
	else
		worker_fail(w, EIO, r->target, r->off, worker_req_what(w, r));
}

/* ---- what the loops count besides reads ------------------------------- */

/* cmdprio_*: the request's priority, drawn as fio's cmdprio.c does. */
static inline void prio_req(struct worker *w, struct io_req *r, unsigned dir)
{
	const struct prio_plan *p = &w->wk->prio;

	r->prio_idx = prio_pick(p, dir, r->len, w->prio_rng);
	r->ioprio = p->val[r->prio_idx];
}

/* log_prio: a completed request counted under its priority. */
static __attribute__((noinline)) void prio_count(struct worker *w, const struct io_req *r,
						 unsigned dir, bool lat, uint64_t ns)
{
	struct prio_counters *pc = &w->st->prio;
	unsigned i = r->prio_idx;

	stat_add(&pc->ops[dir][i], 1);
	stat_add(&pc->bytes[dir][i], r->len);
	if (lat) {
		stat_add(&pc->lat_n[dir][i], 1);
		/* As the histograms record it (hist_add), so that the
		 * log's mean and the JSON's agree. */
		stat_add(&pc->lat_sum[dir][i], ns < HIST_MIN_NS ? HIST_MIN_NS : ns);
	}
}

/* A completed write (@flush false) or flush counted; @ns its latency. */
static inline void count_write(struct worker *w, const struct io_req *r, bool lat, uint64_t ns)
{
	struct thread_stats *st = w->st;

	if (r->op == IO_WRITE) {
		stat_add(&st->wops, 1);
		stat_add(&st->wbytes, r->len);
		if (lat)
			hist_add(&st->wlat, ns);
	} else {
		stat_add(&st->syncs, 1);
		if (lat)
			hist_add(&st->slat, ns);
	}
}

/* ---- writes and flushes ------------------------------------------------ */

/* A write request in @r: placed, stamped, recorded. */
static inline void prep_write(struct worker *w, struct io_req *r, unsigned tgt, uint64_t off)
{
	if (__builtin_expect(w->rec.rp != NULL, 0))
		writes_mark(&w->wr, tgt);	/* a replay writes where its log says */
	else
		off = writes_place(&w->wr, tgt, off);
	r->op = IO_WRITE;
	r->off = off;
	if (__builtin_expect(w->pat != NULL, 0))
		worker_pattern_write(w, r);
	else if (__builtin_expect(w->content.on, 0))
		content_fill(&w->content, r->wbuf, r->len);
	else if (__builtin_expect(w->wr.sum != 0, 0))
		blockdata_stamp_sum(r->wbuf, r->len, off, ++w->wr.gen, w->wr.sum);
	else
		blockdata_stamp(r->wbuf, r->len, off, ++w->wr.gen);
	if (__builtin_expect(w->bl != NULL, 0) && worker_backlog_note(w, r))
		w->bl_due = true;
}

void worker_prep_write(struct worker *w, struct io_req *r, unsigned tgt, uint64_t off)
{
	prep_write(w, r, tgt, off);
}

/* @r, drawn as direction @wr at @off of the worker's target @tgt: a
 * read there, or a write placed and stamped. */
static inline void prep_req(struct worker *w, struct io_req *r, bool wr, unsigned tgt, uint64_t off)
{
	if (wr) {
		prep_write(w, r, tgt, off);
	} else {
		r->op = IO_READ;
		r->off = off;
	}
}

/*
 * One flush of target @tgt (fdatasync when @ds, else fsync) issued and
 * completed by this thread, timed from *@t (latency-clock ticks: when
 * the thread was ready to issue it) to its end, which goes back in *@t.
 * An asynchronous engine's flush is reaped here; the caller has nothing
 * else in flight. False when it failed (the worker is failed).
 */
static bool flush_one(struct worker *w, struct io_req *r, unsigned tgt, bool ds, bool lat, uint64_t *t)
{
	const struct engine_ops *ops = w->wk->ops;
	struct io_req *d[1];
	int ret;

	r->op = IO_FLUSH;
	r->datasync = ds;
	r->ioprio = 0;
	r->target = (uint16_t)tgt;
	r->off = 0;
	r->len = 0;
	record_req(&w->rec, r);
	worker_note(w->st, r);
	ret = ops->queue(&w->et, r);
	while (ret == ENGINE_QUEUED) {
		ret = ops->reap(&w->et, 1, 1, d);
		if (ret == -EINTR)
			ret = ENGINE_QUEUED;
		else if (ret > 0)
			ret = ENGINE_DONE;
	}
	if (ret < 0) {
		worker_fail(w, ret, tgt, 0, "flush");
		return false;
	}
	if (!worker_req_ok(w, r))
		return !w->st->failed;	/* continue_on_error: counted */
	stat_add(&w->st->syncs, 1);
	/* fio's iodepth counts, kept by the asynchronous loops (a
	 * synchronous one's are made up at the end): the flush went alone,
	 * nothing else in flight. */
	if (ops->flags & ENGINE_F_ASYNC) {
		stats_mark_submit(w->st, 1, 1);
		stats_mark_complete(w->st, 1);
	}
	if (lat) {
		uint64_t now = latclock_ticks();

		hist_add(&w->st->slat, latclock_ns(now - *t));
		*t = now;
	}
	return true;
}

/* Flush, one after another, every target written since the last flush. */
static bool flush_dirty(struct worker *w, struct io_req *r, bool lat, uint64_t *t)
{
	struct writes *ws = &w->wr;

	for (unsigned i = 0; i < ws->ndirty; i++)
		if (!flush_one(w, r, w->tfirst + ws->dirty[i], job_flush_datasync(w->wk->job), lat, t))
			return false;
	writes_clean(ws);
	return true;
}

/* end_fsync: one flush of every target the worker wrote, at its end. */
static void flush_end(struct worker *w, struct io_req *r, bool lat)
{
	struct writes *ws = &w->wr;
	uint64_t t = lat ? latclock_ticks() : 0;

	if (!w->wk->job->end_fsync || w->st->failed)
		return;
	for (unsigned i = 0; i < ws->ntargets; i++)
		if ((ws->t[i].state & WRITES_WRITTEN) &&
		    !flush_one(w, r, w->tfirst + i, job_flush_datasync(w->wk->job), lat, &t))
			return;
	writes_clean(ws);
}

/* The flush policy's clock: latency-clock ticks, read only when
 * sync_interval needs them. */
static inline bool flush_due(struct writes *ws)
{
	return writes_flush_due(&ws->fl, ws->fl.interval ? latclock_ticks() : 0);
}

/* ---- the synchronous loops: worker_sync_core's policies ---------------- */

/* A writing job: the direction first (a shaped job's sizes and zones
 * are the direction's), or what the replay's log says, in its order; a
 * logged flush is issued here. */
static inline int rw_next(struct worker *w, struct io_req **rp, struct req_clock *clk, void *ctx)
{
	struct io_req *r = *rp;
	unsigned tgt;
	uint64_t off;
	uint32_t len;
	bool wr;
	int got = 1;

	(void)ctx;
	if (__builtin_expect(w->rec.rp != NULL, 0)) {
		unsigned op;

		got = record_next_op(&w->rec, &op, &tgt, &off, &len);
		if (!got)
			return 0;
		if (got == NEXT_WAITED && clk->lat)
			clk->t0 = latclock_ticks();
		if (op >= IOLOG_SYNC)
			return flush_one(w, r, w->tfirst + tgt, op == IOLOG_DATASYNC, clk->lat, &clk->t0) ?
				       WORKER_NEXT_SKIP : 0;
		wr = op == IOLOG_WRITE;
	} else {
		wr = writes_pick(&w->wr);
		if (!gen_next_dir(&w->gen, wr, &tgt, &off, &len))
			return 0;
	}
	r->target = (uint16_t)(w->tfirst + tgt);
	r->len = len;
	r->op = wr ? IO_WRITE : IO_READ;
	r->off = off;
	return got;
}

/* A write is placed and stamped only once it is due: a write never
 * issued must not be marked written, or verify would read it back. */
static inline void rw_prep(struct worker *w, struct io_req *r, void *ctx)
{
	(void)ctx;
	if (r->op == IO_WRITE)
		prep_write(w, r, r->target - w->tfirst, r->off);
}

static inline bool rw_done(struct worker *w, struct thread_stats *st, worker_release_fn rel,
			   struct io_req *r, struct req_clock *clk, void *ctx)
{
	bool late;

	(void)ctx;
	if (r->op == IO_READ)
		return worker_sync_read_done(w, st, rel, r, clk);
	stat_add(&st->wops, 1);
	stat_add(&st->wbytes, r->len);
	late = req_clock_done(clk, &st->wlat);
	if (__builtin_expect(w->bl_due, 0))
		worker_backlog_check(w);
	/* The flush follows its write whatever the clock says, so a run
	 * always ends with floor(writes / N) of them. */
	if (flush_due(&w->wr) && !flush_dirty(w, r, clk->lat, &clk->t0))
		return true;
	return late;
}

static void rw_end(struct worker *w, struct io_req *r, void *ctx)
{
	(void)ctx;
	flush_end(w, r, w->wk->job->latency);
}

static const struct worker_sync_policy rw_policy = {
	.next = rw_next,
	.prep = rw_prep,
	.done = rw_done,
	.end = rw_end,
};

void worker_run_sync_rw(struct worker *w)
{
	struct writes *ws = &w->wr;

	writes_flush_init(&ws->fl, ws->fl.every, ws->fl.interval, latclock_ticks());
	worker_sync_core(w, w->wk->ops->release, &rw_policy, true, NULL);
}

/* ---- the asynchronous core --------------------------------------------- */

/*
 * One asynchronous loop's state: iodepth request slots, those free on a
 * stack, what the last reap returned. A writing job's loop (@writes in
 * the functions below, a constant: a read job's loop carries none of it)
 * also keeps its flushes: queued behind the writes when the engine keeps
 * order (fq), else issued once nothing is in flight (drain, a replay's
 * logged sync), and serialize_overlap's request held back.
 */
struct acore {
	worker_release_fn rel;
	unsigned live;		/* worker_run_async_src: slots not left out */
	struct io_req **done;
	uint16_t *freeslots;
	unsigned nfree, inflight, pending;
	bool lat, more, stopping;
	uint64_t deadline;
	uint64_t t;		/* when the requests being issued were ready (ns) */
	/* a writing job's */
	unsigned *fq;		/* ordered: targets whose flush is to be queued */
	unsigned nfq, fqh;
	bool ordered;
	bool drain;		/* not ordered: flush once nothing is in flight */
	int held;		/* pace: the direction drawn before a wait */
	int lsync;		/* a replay: the target of a logged sync, flushed
				 * once nothing is in flight (lsync_ds: datasync) */
	bool lsync_ds;
	struct io_req *ser_r;	/* serialize_overlap: prepared, waiting for the
				 * requests in flight to complete */
};

/* The loop's state lives in registers only if no function outside the
 * inlined loop sees its address: these are inlined too. */
static inline __attribute__((always_inline)) int
acore_setup(struct worker *w, struct acore *a, worker_release_fn rel, const bool writes)
{
	const unsigned depth = w->wk->ej.depth;

	*a = (struct acore){
		.rel = rel,
		.live = depth,
		.lat = w->wk->job->latency,
		.deadline = w->wk->deadline_ns ? w->wk->deadline_ns : UINT64_MAX,
		.more = true,
		.held = -1,
		.lsync = -1,
		.nfree = depth,
		.ordered = w->wk->ops->flags & ENGINE_F_ORDERED_FLUSH,
	};
	a->done = calloc(depth, sizeof(*a->done));
	a->freeslots = calloc(depth, sizeof(*a->freeslots));
	if (writes)
		a->fq = calloc(w->wr.ntargets ? w->wr.ntargets : 1, sizeof(*a->fq));
	if (!a->done || !a->freeslots || (writes && !a->fq)) {
		worker_fail(w, ENOMEM, w->tfirst, 0, "allocating request slots");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < depth; i++)
		a->freeslots[i] = (uint16_t)(depth - 1 - i);
	record_begin(&w->rec, w->wk->deadline_ns);
	pace_begin(&w->pace);
	if (writes)
		writes_flush_init(&w->wr.fl, w->wr.fl.every, w->wr.fl.interval, latclock_ticks());
	return 0;
}

/* Whatever the loop ends on (a failed reap too: these arrays are the
 * loop's own, and nothing in flight writes into them). */
static inline __attribute__((always_inline)) void acore_free(struct acore *a)
{
	free(a->done);
	free(a->freeslots);
	free(a->fq);
}

/* The loop stops after a failure: flushes decided are dropped. */
static inline void acore_fail_stop(struct acore *a)
{
	a->stopping = true;
	a->nfq = 0;
	a->drain = false;
}

/* A completed request of the loop, counted by what it was, @ns its
 * latency, at @now (ns; both 0 when the loop keeps no latency and is not
 * paced). */
static inline __attribute__((always_inline)) void
acore_count(struct worker *w, struct acore *a, struct io_req *r, uint64_t ns, uint64_t now,
	    const bool writes, const struct worker_async_src *const src)
{
	const bool rd = !writes || r->op == IO_READ;

	if (__builtin_expect(w->wk->prio_count, 0) && (rd || r->op == IO_WRITE))
		prio_count(w, r, rd ? JOB_DIR_READ : JOB_DIR_WRITE, a->lat, ns);
	if (rd) {
		worker_async_read_done(w, a->rel, r, a->lat, ns);
		if (src) {
			const struct worker_src *q = &src->src[src->slot_src[r->slot]];

			stat_add(q->ops, 1);
			stat_add(q->bytes, r->len);
		}
	} else {
		count_write(w, r, a->lat, ns);
	}
	if (__builtin_expect(w->pace.on, 0) && (rd || r->op == IO_WRITE))
		pace_done_async(&w->pace, ns, now);
}

/* Before issuing: a writing job's checks and flushes that wait for
 * nothing to be in flight. */
static inline __attribute__((always_inline)) void acore_quiet(struct worker *w, struct acore *a)
{
	struct thread_stats *st = w->st;

	if (w->bl_due && !a->inflight && !st->failed)
		worker_backlog_check(w);
	if (a->drain && !a->inflight) {
		/* Everything before the flush has completed: it now covers
		 * exactly those writes. */
		uint64_t tf = a->lat ? latclock_ticks() : 0;

		a->drain = false;
		if (!st->failed && !flush_dirty(w, &w->et.reqs[a->freeslots[a->nfree - 1]], a->lat, &tf))
			a->stopping = true;
	}
	if (a->lsync >= 0 && !a->inflight) {
		/* The log's sync comes after the requests before it have
		 * completed, so it covers them whatever the engine's order. */
		uint64_t tf = a->lat ? latclock_ticks() : 0;
		unsigned ti = w->tfirst + (unsigned)a->lsync;

		a->lsync = -1;
		if (!st->failed &&
		    !flush_one(w, &w->et.reqs[a->freeslots[a->nfree - 1]], ti, a->lsync_ds, a->lat, &tf))
			a->stopping = true;
	}
}

/* New requests may be drawn (not only flushes decided and a held one). */
static inline __attribute__((always_inline)) bool acore_may_draw(const struct worker *w,
								 const struct acore *a, const bool writes)
{
	return !a->stopping && a->more &&
	       !(writes && (a->drain || w->bl_due || a->lsync >= 0));
}

/* pace (pace.h) lets the next request of direction @d go now; else the
 * loop reaps first, or stops. */
static inline __attribute__((always_inline)) bool acore_paced(struct worker *w, struct acore *a,
								unsigned d)
{
	uint64_t t = a->t;
	int pw = pace_async_w(w, d, a->inflight, a->lat, &t);

	a->t = t;

	if (pw > 0)
		return true;
	a->stopping = a->stopping || pw < 0;
	return false;
}

/* A queued flush of the next target in fq, in a free slot. */
static inline __attribute__((always_inline)) struct io_req *acore_flush_req(struct worker *w,
										   struct acore *a)
{
	struct io_req *r = &w->et.reqs[a->freeslots[--a->nfree]];

	r->op = IO_FLUSH;
	r->datasync = job_flush_datasync(w->wk->job);
	r->ioprio = 0;
	r->target = (uint16_t)(w->tfirst + a->fq[a->fqh++]);
	r->off = 0;
	r->len = 0;
	r->t_issue = a->t;
	a->nfq--;
	return r;
}

/* A request drawn, of direction @wr, into @r: counted by the pace,
 * timed from the batch's start, given its priority. */
static inline __attribute__((always_inline)) struct io_req *acore_drawn(struct worker *w, struct acore *a,
									  struct io_req *r, bool wr)
{
	if (__builtin_expect(w->pace.on, 0))
		pace_issued(&w->pace, wr, r->len);
	r->t_issue = a->t;
	if (__builtin_expect(w->wk->prio.on, 0))
		prio_req(w, r, wr);
	return r;
}

/*
 * The next request to issue, or NULL (the loop reaps, or ends): the one
 * serialize_overlap held back once nothing is in flight, a flush queued
 * behind writes, else a new one from the replay or the generator, or
 * (worker_run_async_src) from the source of the free slot on top.
 */
static inline __attribute__((always_inline)) struct io_req *
acore_draw(struct worker *w, struct acore *a, const bool writes, const struct worker_async_src *const src)
{
	struct io_req *r;
	unsigned tgt;
	uint64_t off;
	uint32_t len;
	bool wr = false;

	if (writes && a->ser_r) {
		/* prepared already (placed, stamped): issued once nothing is
		 * in flight, stopping or not; never, after a failure */
		if (w->st->failed) {
			a->freeslots[a->nfree++] = a->ser_r->slot;
			a->ser_r = NULL;
			return NULL;
		}
		if (a->inflight)
			return NULL;
		r = a->ser_r;
		a->ser_r = NULL;
		return r;
	}
	if (writes && a->nfq)
		return acore_flush_req(w, a);
	/* acore_fill checked it before its first draw; only a writing
	 * job's issue changes it without ending the fill (a flush or a
	 * verify_backlog check due) */
	if (writes && !acore_may_draw(w, a, writes))
		return NULL;
	if (!writes && src) {
		/* The source of the slot on top: a slot whose source has no
		 * more is left out, and the next one tried. */
		if (__builtin_expect(w->pace.on, 0) && !acore_paced(w, a, JOB_DIR_READ))
			return NULL;
		do {
			unsigned s;

			if (!a->nfree)
				return NULL;
			r = &w->et.reqs[a->freeslots[--a->nfree]];
			s = src->slot_src[r->slot];
			if (gen_next(src->src[s].gen, &tgt, &off, &len)) {
				r->target = (uint16_t)src->src[s].target;
				r->off = off;
				r->len = len;
				if (w->prefetch)
					prefetch_advance(w->prefetch, s, off, len);
				return acore_drawn(w, a, r, false);
			}
		} while (--a->live);
		a->more = false;
		return NULL;
	}
	if (__builtin_expect(w->rec.rp != NULL, 0)) {
		/* A replay: what the log says, in its order. */
		unsigned op;
		int got;

		if (a->inflight && record_due_later(&w->rec))
			return NULL;
		/* a read job's replay holds only reads, whose pace is known */
		if (!writes && __builtin_expect(w->pace.on, 0) && !acore_paced(w, a, JOB_DIR_READ))
			return NULL;
		got = record_next_op(&w->rec, &op, &tgt, &off, &len);
		if (!got) {
			a->more = false;
			return NULL;
		}
		if (got == NEXT_WAITED && a->lat)
			a->t = now_ns();
		if (writes && op >= IOLOG_SYNC) {
			a->lsync = (int)tgt;
			a->lsync_ds = op == IOLOG_DATASYNC;
			return NULL;
		}
		wr = writes && op == IOLOG_WRITE;
	} else {
		/* A direction drawn before a wait is kept for after it, so
		 * the mix stays rwmixread's. */
		if (writes) {
			wr = a->held >= 0 ? a->held : writes_pick(&w->wr);
			a->held = -1;
		}
		if (__builtin_expect(w->pace.on, 0) && !acore_paced(w, a, wr)) {
			a->held = writes ? wr : -1;
			return NULL;
		}
		if (!(writes ? gen_next_dir(&w->gen, wr, &tgt, &off, &len) : gen_next(&w->gen, &tgt, &off, &len))) {
			a->more = false;
			return NULL;
		}
	}
	r = &w->et.reqs[a->freeslots[--a->nfree]];
	r->target = (uint16_t)(w->tfirst + tgt);
	r->len = len;
	if (writes)
		prep_req(w, r, wr, tgt, off);
	else
		r->off = off;
	acore_drawn(w, a, r, wr);
	if (writes && __builtin_expect(w->sermap != NULL, 0) && a->inflight && worker_overlaps(w, r)) {
		a->ser_r = r;
		return NULL;
	}
	return r;
}

/*
 * @r to the engine: 0 to go on issuing, -1 to stop issuing (the loop
 * reaps, or ends). An engine may complete a request inside queue(): it
 * is counted as a push and a reap of one.
 */
static inline __attribute__((always_inline)) int
acore_issue(struct worker *w, struct acore *a, struct io_req *r, const bool writes,
	    const struct worker_async_src *const src)
{
	const struct engine_ops *ops = w->wk->ops;
	int ret;

	record_req(&w->rec, r);
	worker_note(w->st, r);
	ret = ops->queue(&w->et, r);
	if (ret < 0) {
		worker_fail(w, ret, r->target, r->off, worker_req_what(w, r));
		a->freeslots[a->nfree++] = r->slot;
		acore_fail_stop(a);
		return -1;
	}
	if (ret == ENGINE_DONE) {
		int done;

		a->freeslots[a->nfree++] = r->slot;
		done = worker_async_at_once(w, a->rel, r, a->inflight + 1);
		if (done < 0) {
			acore_fail_stop(a);
			return -1;
		}
		if (!done)
			return 0;	/* continue_on_error */
		{
			uint64_t now = a->lat || w->pace.on ? now_ns() : 0;

			acore_count(w, a, r, now - a->t, now, writes, src);
		}
	} else {
		a->inflight++;
		if (writes && w->sermap)
			w->sermap[r->slot] = 1;
	}
	if (writes && r->op == IO_WRITE && flush_due(&w->wr)) {
		if (a->ordered) {
			memcpy(a->fq, w->wr.dirty, w->wr.ndirty * sizeof(*a->fq));
			a->nfq = w->wr.ndirty;
			a->fqh = 0;
			writes_clean(&w->wr);
		} else {
			a->drain = true;
		}
	}
	if (ret == ENGINE_DONE)
		return 0;
	ret = worker_submit_step(w, &a->pending, a->nfree > 0, a->inflight);
	if (ret < 0) {
		worker_fail(w, ret, w->tfirst, 0, "submit");
		acore_fail_stop(a);
		return -1;
	}
	return 0;
}

/* Issue while there are free slots and something to issue. Flushes
 * already decided are queued even when stopping: they belong to writes
 * already issued. */
static inline __attribute__((always_inline)) void
acore_fill(struct worker *w, struct acore *a, const bool writes, const struct worker_async_src *const src)
{
	if (!a->nfree && !(writes && a->ser_r))
		return;
	if (!(writes && (a->nfq || a->ser_r)) && !acore_may_draw(w, a, writes))
		return;
	a->t = a->lat ? now_ns() : 0;
	while (a->nfree || (writes && a->ser_r)) {
		struct io_req *r = acore_draw(w, a, writes, src);

		if (!r || acore_issue(w, a, r, writes, src) < 0)
			break;
	}
}

/* What the next reap waits for: all in flight when the loop stops or
 * must be quiet next, else iodepth_batch_complete_min. */
static inline __attribute__((always_inline)) unsigned acore_reap_min(struct worker *w, struct acore *a,
								     const bool writes)
{
	if (a->stopping || !a->more || w->pace.drain ||
	    (writes && (a->drain || w->bl_due || a->lsync >= 0 || a->ser_r)))
		return a->inflight;
	return worker_reap_min(w, a->inflight);
}

/* One reap and its completions; false when the reap failed. */
static inline __attribute__((always_inline)) bool
acore_reap(struct worker *w, struct acore *a, const bool writes, const struct worker_async_src *const src)
{
	int got = worker_reap(w, &a->pending, a->inflight, acore_reap_min(w, a, writes),
			      w->wk->reap_max, a->done);

	w->pace.drain = false;
	if (got < 0)
		return false;
	a->t = a->lat ? now_ns() : 0;
	for (int i = 0; i < got; i++) {
		struct io_req *r = a->done[i];
		int done;

		a->inflight--;
		a->freeslots[a->nfree++] = r->slot;
		if (writes && w->sermap)
			w->sermap[r->slot] = 0;
		done = worker_async_completed(w, a->rel, r, a->stopping);
		if (done < 0)
			acore_fail_stop(a);
		else if (done)
			acore_count(w, a, r, a->t - r->t_issue, a->t, writes, src);
	}
	return true;
}

/*
 * The asynchronous core: iodepth requests in flight, one clock read per
 * batch issued and per batch reaped. Keep the queue full while there is
 * work; drain at the end, so no buffer is freed under a request in
 * flight.
 *
 * The deadline is looked at only once the first batch is issued: a
 * thread that first runs after its job's runtime has ended (a starved
 * host) still issues its first batch, and reaps and counts it, as the
 * synchronous core issues its first request and as fio, whose clock
 * starts with the thread, does. A stop (a signal, exitall, a failure)
 * is honoured at once, before any request.
 */
static inline __attribute__((always_inline)) void
acore_run(struct worker *w, const worker_release_fn rel, const bool writes, const struct worker_async_src *src)
{
	struct acore a;
	bool filled = false;

	if (acore_setup(w, &a, rel, writes) < 0)
		goto out;
	for (;;) {
		if (!a.stopping && (worker_should_stop(w) || (filled && now_ns() >= a.deadline)))
			a.stopping = true;
		if (writes)
			acore_quiet(w, &a);
		acore_fill(w, &a, writes, src);
		filled = true;
		if (!a.inflight) {
			if (writes && (a.drain || w->bl_due) && !w->st->failed)
				continue;
			if (a.stopping || !a.more)
				break;
			continue;
		}
		if (!acore_reap(w, &a, writes, src))
			goto out;
	}
	if (writes && !w->st->failed)
		flush_end(w, &w->et.reqs[0], a.lat);
out:
	acore_free(&a);
}

void worker_run_async(struct worker *w)
{
	acore_run(w, w->wk->ops->release, false, NULL);
}

void worker_run_async_rw(struct worker *w)
{
	acore_run(w, w->wk->ops->release, true, NULL);
}

void worker_run_async_src(struct worker *w, const struct worker_async_src *src)
{
	acore_run(w, w->wk->ops->release, false, src);
}

/* ---- the end of a loop ------------------------------------------------ */

void worker_iolog_close(struct worker *w)
{
	struct err e = { 0 };
	int ret = record_close(&w->rec, &e);

	if (ret && !w->st->failed)
		worker_fail(w, ret, w->tfirst, 0, e.msg);
}
