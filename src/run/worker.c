/*
 * worker.c - the plain worker loops every engine shares (a worker's
 * set-up in its own thread and a job's layout: workersetup.c).
 *
 * A worker takes (target, offset) pairs from its generator, hands them
 * to the engine, consumes the bytes with touch, and counts. Two loops:
 * a synchronous one (psync, mmap, null: one clock read per request,
 * chained so the end of one request is the start of the next) and an
 * asynchronous one (io_uring, libaio: a batch of iodepth requests in
 * flight, one clock read per batch issued and per batch reaped). The
 * event loop (loop=) is loop.c; the thread around a loop is crew.c.
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
#include "workload/touch.h"

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

static inline bool should_stop(const struct worker *w)
{
	return worker_should_stop(w);
}

/* ---- pace (pace.h): the slow paths behind one branch ------------------ */

/* pace.c's verdict on a request: false when the worker stops (a stop,
 * or rate_min not met, which fails the job). */
static __attribute__((noinline)) bool pace_sync_w(struct worker *w, unsigned d, struct req_clock *clk)
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

/* ---- the loops ------------------------------------------------------- */

/*
 * continue_on_error: a failed request of a kind the job goes on after
 * (w->coe: ENGINE_OP bits) is counted, the first one kept, and skipped;
 * the caller sees false with the worker not failed. False here: the
 * worker fails as without the option.
 */
static __attribute__((noinline)) bool coe_take(struct worker *w, const struct io_req *r)
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

static inline bool complete_ok(struct worker *w, struct io_req *r)
{
	if (r->res == (int64_t)r->len)
		return true;
	if (__builtin_expect(w->coe != 0, 0) && coe_take(w, r))
		return false;
	if (r->res < 0)
		worker_fail(w, (int)-r->res, r->target, r->off, w->wk->ops->name);
	else
		worker_fail(w, EIO, r->target, r->off, "short read (target shrank?)");
	return false;
}

static inline void consume(struct worker *w, const struct io_req *r)
{
	const struct job *j = w->wk->job;

	if (r->data)
		w->sink += touch_consume(j->touch, j->touch_stride, r->data, r->len, w->copybuf);
	if (__builtin_expect(w->rv != NULL, 0))
		worker_read_check(w, r);
}

/* The engine's memory behind a consumed request goes back (bufpool's
 * pin); @fn is the engine's release hook, read once per loop. */
static inline void release(struct worker *w, void (*fn)(struct engine_thread *, struct io_req *),
			   struct io_req *r)
{
	if (fn)
		fn(&w->et, r);
}

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

/* The synchronous loop, inlined twice (worker_run_sync): with the
 * engine's release hook, and with @rel a constant NULL, so an engine
 * without one runs a loop with no trace of it. */
static inline __attribute__((always_inline)) void
run_sync(struct worker *w, void (*const rel)(struct engine_thread *, struct io_req *))
{
	const struct work *wk = w->wk;
	const struct engine_ops *ops = wk->ops;
	struct thread_stats *st = w->st;
	struct io_req *r = &w->et.reqs[0];
	const bool lat = wk->job->latency;
	const uint64_t deadline = wk->deadline_ns ? wk->deadline_ns : UINT64_MAX;
	struct req_clock clk;
	unsigned tgt;
	uint64_t off;
	uint32_t len;
	int ret, got;

	req_clock_start(&clk, lat, deadline);
	record_begin(&w->rec, w->wk->deadline_ns);
	pace_begin(&w->pace);
	while (!should_stop(w) && (got = record_next(&w->rec, &w->gen, &tgt, &off, &len))) {
		if (got == NEXT_WAITED && lat)
			clk.t0 = latclock_ticks();
		if (__builtin_expect(w->pace.on, 0) && !pace_sync_w(w, JOB_DIR_READ, &clk))
			break;
		/* The generator counts this worker's targets from 0. */
		r->target = (uint16_t)(w->tfirst + tgt);
		r->off = off;
		r->len = len;
		if (w->prefetch)
			prefetch_advance(w->prefetch, tgt, off, len);
		record_req(&w->rec, r);
		worker_note(w, r);
		ret = ops->queue(&w->et, r);
		if (ret < 0) {
			worker_fail(w, ret, r->target, off, ops->name);
			break;
		}
		if (!complete_ok(w, r)) {
			if (st->failed)
				break;
			continue;	/* continue_on_error: counted, skipped */
		}
		consume(w, r);
		release(w, rel, r);
		stat_add(&st->ops, 1);
		stat_add(&st->bytes, len);
		if (req_clock_done(&clk, &st->lat))
			break;
		if (__builtin_expect(w->pace.on, 0)) {
			pace_issued(&w->pace, JOB_DIR_READ, len);
			if (!pace_sync_done(&w->pace, &w->rec, &clk))
				break;
		}
	}
}

void worker_run_sync(struct worker *w)
{
	void (*rel)(struct engine_thread *, struct io_req *) = w->wk->ops->release;

	if (rel)
		run_sync(w, rel);
	else
		run_sync(w, NULL);
}

void worker_run_async(struct worker *w)
{
	const struct work *wk = w->wk;
	const struct engine_ops *ops = wk->ops;
	struct thread_stats *st = w->st;
	void (*const rel)(struct engine_thread *, struct io_req *) = ops->release;
	const bool lat = wk->job->latency;
	const uint64_t deadline = wk->deadline_ns ? wk->deadline_ns : UINT64_MAX;
	const unsigned depth = wk->ej.depth;
	struct io_req **done = NULL;
	uint16_t *freeslots = NULL;
	unsigned nfree = depth, inflight = 0, pending = 0;
	bool more = true, stopping = false;
	uint64_t t;
	int ret;

	done = calloc(depth, sizeof(*done));
	freeslots = calloc(depth, sizeof(*freeslots));
	if (!done || !freeslots) {
		worker_fail(w, ENOMEM, w->tfirst, 0, "allocating request slots");
		goto out;
	}
	for (unsigned i = 0; i < depth; i++)
		freeslots[i] = (uint16_t)(depth - 1 - i);

	record_begin(&w->rec, w->wk->deadline_ns);
	pace_begin(&w->pace);
	for (;;) {
		if (!stopping && (should_stop(w) || now_ns() >= deadline))
			stopping = true;
		if (!stopping && more && nfree) {
			t = lat ? now_ns() : 0;
			while (nfree) {
				struct io_req *r;
				unsigned tgt;
				uint64_t off;
				uint32_t len;
				int got;

				if (inflight && record_due_later(&w->rec))
					break;

				if (__builtin_expect(w->pace.on, 0)) {
					int pw = pace_async_w(w, JOB_DIR_READ, inflight, lat, &t);

					if (pw <= 0) {
						stopping = stopping || pw < 0;
						break;
					}
				}
				got = record_next(&w->rec, &w->gen, &tgt, &off, &len);
				if (!got) {
					more = false;
					break;
				}
				if (got == NEXT_WAITED && lat)
					t = now_ns();
				r = &w->et.reqs[freeslots[--nfree]];
				r->target = (uint16_t)(w->tfirst + tgt);
				r->off = off;
				r->len = len;
				r->t_issue = t;
				if (__builtin_expect(wk->prio.on, 0))
					prio_req(w, r, JOB_DIR_READ);
				record_req(&w->rec, r);
				worker_note(w, r);
				ret = ops->queue(&w->et, r);
				if (ret < 0) {
					worker_fail(w, ret, r->target, off, ops->name);
					freeslots[nfree++] = r->slot;
					stopping = true;
					break;
				}
				if (__builtin_expect(w->pace.on, 0))
					pace_issued(&w->pace, JOB_DIR_READ, len);
				if (ret == ENGINE_DONE) {
					/* Done inside queue(): a push and a reap of one. */
					stats_mark_submit(st, 1, inflight + 1);
					stats_mark_complete(st, 1);
					if (!complete_ok(w, r)) {
						freeslots[nfree++] = r->slot;
						if (!st->failed)
							continue;	/* continue_on_error */
						stopping = true;
						break;
					}
					consume(w, r);
					release(w, rel, r);
					stat_add(&st->ops, 1);
					stat_add(&st->bytes, r->len);
					if (lat)
						hist_add(&st->lat, now_ns() - t);
					if (__builtin_expect(wk->prio_count, 0))
						prio_count(w, r, JOB_DIR_READ, lat, lat ? now_ns() - t : 0);
					if (__builtin_expect(w->pace.on, 0)) {
						uint64_t nw = now_ns();

						pace_done_async(&w->pace, nw - t, nw);
					}
					freeslots[nfree++] = r->slot;
					continue;
				}
				inflight++;
				ret = worker_submit_step(w, &pending, nfree > 0, inflight);
				if (ret < 0) {
					worker_fail(w, ret, w->tfirst, 0, "submit");
					stopping = true;
					break;
				}
			}
		}
		if (!inflight) {
			if (stopping || !more)
				break;
			continue;
		}
		/* Keep the queue full while there is work; drain at the end
		 * so no buffer is freed under an in-flight read. */
		worker_reaping(w, pending, inflight);
		ret = ops->reap(&w->et, (stopping || !more || w->pace.drain) ? inflight :
					worker_reap_min(w, inflight), wk->reap_max, done);
		w->pace.drain = false;
		pending = 0;
		if (ret >= 0)
			worker_reaped(w, ret);
		if (ret < 0) {
			if (ret == -EINTR)
				continue;
			worker_fail(w, ret, w->tfirst, 0, "reap");
			/* Buffers may still be in flight: leave them allocated. */
			done = NULL;
			goto out_leak;
		}
		t = lat ? now_ns() : 0;
		for (int i = 0; i < ret; i++) {
			struct io_req *r = done[i];

			inflight--;
			freeslots[nfree++] = r->slot;
			if (stopping && st->failed) {
				if (r->res == (int64_t)r->len)
					release(w, rel, r);
				continue;
			}
			if (!complete_ok(w, r)) {
				stopping = stopping || st->failed;
				continue;
			}
			consume(w, r);
			release(w, rel, r);
			stat_add(&st->ops, 1);
			stat_add(&st->bytes, r->len);
			if (lat)
				hist_add(&st->lat, t - r->t_issue);
			if (__builtin_expect(wk->prio_count, 0))
				prio_count(w, r, JOB_DIR_READ, lat, t - r->t_issue);
			if (__builtin_expect(w->pace.on, 0))
				pace_done_async(&w->pace, t - r->t_issue, t);
		}
	}
out:
	free(done);
out_leak:
	free(freeslots);
}

/* ---- the loops of a job that writes ----------------------------------- */

/* A write or flush completed as asked? Else the worker fails, naming it. */
static bool complete_w(struct worker *w, const struct io_req *r)
{
	if (r->res == (int64_t)r->len)
		return true;
	if (__builtin_expect(w->coe != 0, 0) && coe_take(w, r))
		return false;
	if (r->res < 0)
		worker_fail(w, (int)-r->res, r->target, r->off, r->op == IO_FLUSH ? "flush" : "write");
	else
		worker_fail(w, EIO, r->target, r->off, "short write (target full or shrank?)");
	return false;
}

/* A completed request of a writing job, counted by what it was. */
static inline void count_done(struct worker *w, struct io_req *r, bool lat, uint64_t ns)
{
	struct thread_stats *st = w->st;

	if (__builtin_expect(w->wk->prio_count, 0) && r->op != IO_FLUSH)
		prio_count(w, r, r->op == IO_WRITE, lat, ns);

	switch (r->op) {
	case IO_READ:
		consume(w, r);
		release(w, w->wk->ops->release, r);
		stat_add(&st->ops, 1);
		stat_add(&st->bytes, r->len);
		if (lat)
			hist_add(&st->lat, ns);
		break;
	case IO_WRITE:
		stat_add(&st->wops, 1);
		stat_add(&st->wbytes, r->len);
		if (lat)
			hist_add(&st->wlat, ns);
		break;
	default:
		stat_add(&st->syncs, 1);
		if (lat)
			hist_add(&st->slat, ns);
		break;
	}
}

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

/*
 * One flush of target @tgt (fdatasync when @ds, else fsync) issued and
 * completed by this thread, timed
 * from *@t (latency-clock ticks: when the thread was ready to issue it)
 * to its end, which goes back in *@t. An asynchronous engine's flush is
 * reaped here; the caller has nothing else in flight. False when it
 * failed (the worker is failed).
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
	worker_note(w, r);
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
	if (!complete_w(w, r))
		return w->st->failed ? false : true;	/* continue_on_error: counted */
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

void worker_run_sync_rw(struct worker *w)
{
	const struct work *wk = w->wk;
	const struct engine_ops *ops = wk->ops;
	struct thread_stats *st = w->st;
	struct writes *ws = &w->wr;
	struct io_req *r = &w->et.reqs[0];
	const bool lat = wk->job->latency;
	const uint64_t deadline = wk->deadline_ns ? wk->deadline_ns : UINT64_MAX;
	struct req_clock clk;
	unsigned tgt;
	uint64_t off;
	uint32_t len;
	int ret;

	req_clock_start(&clk, lat, deadline);
	record_begin(&w->rec, w->wk->deadline_ns);
	pace_begin(&w->pace);
	writes_flush_init(&ws->fl, ws->fl.every, ws->fl.interval, latclock_ticks());
	for (;;) {
		bool late, wr;

		if (should_stop(w))
			break;
		if (__builtin_expect(w->rec.rp != NULL, 0)) {
			/* A replay: what the log says, in its order. */
			unsigned op;
			int got = record_next_op(&w->rec, &op, &tgt, &off, &len);

			if (!got)
				break;
			if (got == NEXT_WAITED && lat)
				clk.t0 = latclock_ticks();
			if (op >= IOLOG_SYNC) {
				if (!flush_one(w, r, w->tfirst + tgt, op == IOLOG_DATASYNC, lat, &clk.t0))
					break;
				continue;
			}
			wr = op == IOLOG_WRITE;
		} else {
			/* The direction first: a shaped job's sizes and zones
			 * are the direction's. */
			wr = writes_pick(ws);
			if (!gen_next_dir(&w->gen, wr, &tgt, &off, &len))
				break;
		}
		if (__builtin_expect(w->pace.on, 0)) {
			if (!pace_sync_w(w, wr, &clk))
				break;
			pace_issued(&w->pace, wr, len);
		}
		r->target = (uint16_t)(w->tfirst + tgt);
		r->len = len;
		if (!wr) {
			r->op = IO_READ;
			r->off = off;
			record_req(&w->rec, r);
			worker_note(w, r);
			ret = ops->queue(&w->et, r);
			if (ret < 0) {
				worker_fail(w, ret, r->target, off, ops->name);
				break;
			}
			if (!complete_ok(w, r)) {
				if (st->failed)
					break;
				continue;	/* continue_on_error */
			}
			consume(w, r);
			release(w, ops->release, r);
			stat_add(&st->ops, 1);
			stat_add(&st->bytes, len);
			if (req_clock_done(&clk, &st->lat))
				break;
			if (__builtin_expect(w->pace.on, 0) && !pace_sync_done(&w->pace, &w->rec, &clk))
				break;
			continue;
		}
		prep_write(w, r, tgt, off);
		record_req(&w->rec, r);
		worker_note(w, r);
		ret = ops->queue(&w->et, r);
		if (ret < 0) {
			worker_fail(w, ret, r->target, r->off, "write");
			break;
		}
		if (!complete_w(w, r)) {
			if (st->failed)
				break;
			continue;	/* continue_on_error */
		}
		stat_add(&st->wops, 1);
		stat_add(&st->wbytes, len);
		late = req_clock_done(&clk, &st->wlat);
		if (__builtin_expect(w->bl_due, 0))
			worker_backlog_check(w);
		/* The flush follows its write whatever the clock says, so
		 * a run always ends with floor(writes / N) of them. */
		if (flush_due(ws) && !flush_dirty(w, r, lat, &clk.t0))
			break;
		if (late)
			break;
		if (__builtin_expect(w->pace.on, 0) && !pace_sync_done(&w->pace, &w->rec, &clk))
			break;
	}
	flush_end(w, r, lat);
}

void worker_run_async_rw(struct worker *w)
{
	const struct work *wk = w->wk;
	const struct engine_ops *ops = wk->ops;
	struct thread_stats *st = w->st;
	struct writes *ws = &w->wr;
	const bool lat = wk->job->latency;
	const bool ordered = ops->flags & ENGINE_F_ORDERED_FLUSH;
	const uint64_t deadline = wk->deadline_ns ? wk->deadline_ns : UINT64_MAX;
	const unsigned depth = wk->ej.depth;
	struct io_req **done = NULL;
	uint16_t *freeslots = NULL;
	unsigned *fq = NULL;		/* ordered: targets whose flush is to be queued */
	unsigned nfree = depth, inflight = 0, pending = 0, nfq = 0, fqh = 0;
	bool drain = false;		/* not ordered: flush once nothing is in flight */
	int held = -1;			/* pace: the direction drawn before a wait */
	int lsync = -1;			/* a replay: the target of a logged sync, flushed
					 * once nothing is in flight (lsync_ds: datasync) */
	bool lsync_ds = false;
	struct io_req *ser_r = NULL;	/* serialize_overlap: prepared, waiting for the
					 * requests in flight to complete */
	bool more = true, stopping = false;
	uint64_t t;
	int ret;

	done = calloc(depth, sizeof(*done));
	freeslots = calloc(depth, sizeof(*freeslots));
	fq = calloc(ws->ntargets ? ws->ntargets : 1, sizeof(*fq));
	if (!done || !freeslots || !fq) {
		worker_fail(w, ENOMEM, w->tfirst, 0, "allocating request slots");
		goto out;
	}
	for (unsigned i = 0; i < depth; i++)
		freeslots[i] = (uint16_t)(depth - 1 - i);
	record_begin(&w->rec, w->wk->deadline_ns);
	pace_begin(&w->pace);
	writes_flush_init(&ws->fl, ws->fl.every, ws->fl.interval, latclock_ticks());

	for (;;) {
		if (!stopping && (should_stop(w) || now_ns() >= deadline))
			stopping = true;
		if (w->bl_due && !inflight && !st->failed)
			worker_backlog_check(w);
		if (drain && !inflight) {
			/* Everything before the flush has completed: it now
			 * covers exactly those writes. */
			uint64_t tf = lat ? latclock_ticks() : 0;

			drain = false;
			if (!st->failed && !flush_dirty(w, &w->et.reqs[freeslots[nfree - 1]], lat, &tf))
				stopping = true;
		}
		if (lsync >= 0 && !inflight) {
			/* The log's sync comes after the requests before it
			 * have completed, so it covers them whatever the
			 * engine's order. */
			uint64_t tf = lat ? latclock_ticks() : 0;
			unsigned ti = w->tfirst + (unsigned)lsync;

			lsync = -1;
			if (!st->failed && !flush_one(w, &w->et.reqs[freeslots[nfree - 1]], ti, lsync_ds, lat, &tf))
				stopping = true;
		}
		/* Flushes already decided are queued even when stopping:
		 * they belong to writes already issued. */
		if ((nfree || ser_r) && (nfq || ser_r || (!stopping && more && !drain && !w->bl_due && lsync < 0))) {
			t = lat ? now_ns() : 0;
			while (nfree || ser_r) {
				struct io_req *r;
				unsigned tgt;
				uint64_t off;
				uint32_t len;
				bool wr;

				if (ser_r) {
					/* prepared already (placed, stamped): issued
					 * once nothing is in flight, stopping or not */
					if (inflight || st->failed) {
						if (st->failed)	/* never issued: its slot is free */
							freeslots[nfree++] = ser_r->slot;
						ser_r = st->failed ? NULL : ser_r;
						break;
					}
					r = ser_r;
					ser_r = NULL;
					wr = r->op == IO_WRITE;
				} else if (nfq) {
					r = &w->et.reqs[freeslots[--nfree]];
					r->op = IO_FLUSH;
					r->datasync = job_flush_datasync(wk->job);
					r->ioprio = 0;
					r->target = (uint16_t)(w->tfirst + fq[fqh++]);
					r->off = 0;
					r->len = 0;
					r->t_issue = t;
					nfq--;
					wr = false;
				} else {
					if (stopping || !more || drain || w->bl_due || lsync >= 0)
						break;
					if (__builtin_expect(w->rec.rp != NULL, 0)) {
						/* A replay: what the log says, in its order. */
						unsigned op;
						int got;

						if (inflight && record_due_later(&w->rec))
							break;
						got = record_next_op(&w->rec, &op, &tgt, &off, &len);
						if (!got) {
							more = false;
							break;
						}
						if (got == NEXT_WAITED && lat)
							t = now_ns();
						if (op >= IOLOG_SYNC) {
							lsync = (int)tgt;
							lsync_ds = op == IOLOG_DATASYNC;
							break;
						}
						wr = op == IOLOG_WRITE;
					} else {
						/* A direction drawn before a wait is kept
						 * for after it, so the mix stays rwmixread's. */
						wr = held >= 0 ? held : writes_pick(ws);
						held = -1;
						if (__builtin_expect(w->pace.on, 0)) {
							int pw = pace_async_w(w, wr, inflight, lat, &t);

							if (pw <= 0) {
								held = wr;
								stopping = stopping || pw < 0;
								break;
							}
						}
						if (!gen_next_dir(&w->gen, wr, &tgt, &off, &len)) {
							more = false;
							break;
						}
					}
					if (__builtin_expect(w->pace.on, 0))
						pace_issued(&w->pace, wr, len);
					r = &w->et.reqs[freeslots[--nfree]];
					r->target = (uint16_t)(w->tfirst + tgt);
					r->len = len;
					r->t_issue = t;
					if (wr) {
						prep_write(w, r, tgt, off);
					} else {
						r->op = IO_READ;
						r->off = off;
					}
					if (__builtin_expect(wk->prio.on, 0))
						prio_req(w, r, wr);
					if (__builtin_expect(w->sermap != NULL, 0) && inflight &&
					    worker_overlaps(w, r)) {
						ser_r = r;
						break;
					}
				}
				record_req(&w->rec, r);
				worker_note(w, r);
				ret = ops->queue(&w->et, r);
				if (ret < 0) {
					worker_fail(w, ret, r->target, r->off, ops->name);
					freeslots[nfree++] = r->slot;
					stopping = true;
					nfq = 0;
					break;
				}
				if (ret == ENGINE_DONE) {
					/* Done inside queue(): a push and a reap of one. */
					stats_mark_submit(st, 1, inflight + 1);
					stats_mark_complete(st, 1);
					if (r->op == IO_READ ? !complete_ok(w, r) : !complete_w(w, r)) {
						freeslots[nfree++] = r->slot;
						if (!st->failed)
							continue;	/* continue_on_error */
						stopping = true;
						nfq = 0;
						break;
					}
					count_done(w, r, lat, lat ? now_ns() - t : 0);
					if (__builtin_expect(w->pace.on, 0) && r->op != IO_FLUSH) {
						uint64_t nw = now_ns();

						pace_done_async(&w->pace, nw - t, nw);
					}
					freeslots[nfree++] = r->slot;
				} else {
					inflight++;
					if (w->sermap)
						w->sermap[r->slot] = 1;
				}
				if (wr && flush_due(ws)) {
					if (ordered) {
						memcpy(fq, ws->dirty, ws->ndirty * sizeof(*fq));
						nfq = ws->ndirty;
						fqh = 0;
						writes_clean(ws);
					} else {
						drain = true;
					}
				}
				if (ret == ENGINE_DONE)
					continue;
				ret = worker_submit_step(w, &pending, nfree > 0, inflight);
				if (ret < 0) {
					worker_fail(w, ret, w->tfirst, 0, "submit");
					stopping = true;
					nfq = 0;
					break;
				}
			}
		}
		if (!inflight) {
			if ((drain || w->bl_due) && !st->failed)
				continue;
			if (stopping || !more)
				break;
			continue;
		}
		/* Keep the queue full while there is work; drain when
		 * stopping or before an unordered flush. */
		worker_reaping(w, pending, inflight);
		ret = ops->reap(&w->et, (stopping || !more || drain || w->bl_due || lsync >= 0 ||
					 ser_r || w->pace.drain) ? inflight : worker_reap_min(w, inflight),
				wk->reap_max, done);
		w->pace.drain = false;
		pending = 0;
		if (ret >= 0)
			worker_reaped(w, ret);
		if (ret < 0) {
			if (ret == -EINTR)
				continue;
			worker_fail(w, ret, w->tfirst, 0, "reap");
			/* Buffers may still be in flight: leave them allocated. */
			done = NULL;
			goto out_leak;
		}
		t = lat ? now_ns() : 0;
		for (int i = 0; i < ret; i++) {
			struct io_req *r = done[i];

			inflight--;
			freeslots[nfree++] = r->slot;
			if (w->sermap)
				w->sermap[r->slot] = 0;
			if (stopping && st->failed)
				continue;
			if (r->op == IO_READ ? !complete_ok(w, r) : !complete_w(w, r)) {
				if (st->failed) {
					stopping = true;
					nfq = 0;
					drain = false;
				}
				continue;
			}
			count_done(w, r, lat, t - r->t_issue);
			if (__builtin_expect(w->pace.on, 0) && r->op != IO_FLUSH)
				pace_done_async(&w->pace, t - r->t_issue, t);
		}
	}
	if (!st->failed)
		flush_end(w, &w->et.reqs[0], lat);
out:
	free(done);
out_leak:
	free(freeslots);
	free(fq);
}

/* ---- the end of a loop ------------------------------------------------ */

void worker_iolog_close(struct worker *w)
{
	struct err e = { 0 };
	int ret = record_close(&w->rec, &e);

	if (ret && !w->st->failed)
		worker_fail(w, ret, w->tfirst, 0, e.msg);
}
