/*
 * loop.c - the event-loop worker; see loop.h.
 *
 * Three loops, one per concurrency model, each serving the streams in a
 * fixed rotation so that "in turn" means the same everywhere:
 *
 *   loop_turns      psync, mmap, null: the loop thread runs each request
 *                   itself, stream 0, 1, ..., N-1, 0, ...
 *   loop_async      io_uring, libaio: every stream keeps iodepth requests
 *                   in flight; a completion is answered with that
 *                   stream's next request
 *   loop_offload    psync, mmap, null with offload=K: requests go to the
 *                   helper pool, up to offload_permits at once, one per
 *                   stream; streams queue for a permit in turn
 *
 * With offload, what a helper does is what the loop thread would have
 * blocked in: the pread (the loop then consumes the buffer, as an async
 * task consumes what its read returned), or for mmap the access itself,
 * which is where the page faults are, so the helper also consumes.
 *
 * A request's life is worker.h's, as in the plain loops: loop_turns is
 * the synchronous core with the streams as its source, loop_async the
 * asynchronous core with them as its source (worker_run_async_src),
 * and loop_offload, whose requests the helpers run, answers a
 * completion with the core's own functions (worker_async_completed,
 * worker_async_read_done); what is theirs is the rotation and the
 * streams' own counters.
 *
 * Hot path rules as in worker.c: no locks, no allocation, counters in
 * the worker's own thread_stats and in its streams' shared counters.
 */
#include "run/loop.h"

#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "run/offload.h"
#include "run/prefetch.h"
#include "lib/latclock.h"
#include "run/sigbus.h"
#include "workload/touch.h"
#include "run/worker.h"

/* Runtime state of one loop, private to its thread. */
struct loop_rt {
	struct worker *w;
	struct loop_setup *L;
	struct offload_pool *pool;
	unsigned permits;
	bool helper_consumes;	/* no buffer (mmap, null): the helper's access is the read */
	bool mapped;		/* mmap: a helper's access may SIGBUS */
	unsigned *turn;		/* streams waiting for their turn (ring of n) */
	uint16_t *slot_stream;	/* loop_async: each request slot's stream */
	struct worker_src *src;	/* loop_async: the streams as the core's sources */
	unsigned thead, tlen;
	struct io_req **done;
	struct helper_priv {
		uint8_t *copybuf;
		uint64_t sink;
	} __attribute__((aligned(CACHELINE))) *hp;
};

/* ---- prepare (the controller, before anything runs) ----------------- */

int loop_prepare(struct loop_setup **lp, const struct job *j, const struct target *targets,
		 unsigned tfirst, unsigned tcount, uint64_t seed, struct err *e)
{
	unsigned n = j->loop, nt = tcount;
	struct loop_setup *L;
	size_t bytes;
	int ret;

	if (nt != n && nt != 1)
		return err_set(e, EINVAL, "loop=%u with %u targets: give %u files, or one to cut "
			       "into %u slices", n, nt, n, n);
	L = calloc(1, sizeof(*L));
	if (!L)
		return err_set(e, ENOMEM, "loop: out of memory");
	*lp = L;
	L->n = n;
	L->streams = calloc(n, sizeof(*L->streams));
	L->base = calloc(n, sizeof(*L->base));
	bytes = (size_t)n * sizeof(*L->stats);
	/* Shared: under mem_limit the loop runs in a child process. */
	L->stats = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (L->stats == MAP_FAILED) {
		L->stats = NULL;
		return err_set(e, errno, "loop: mapping stream counters: %s", strerror(errno));
	}
	if (!L->streams || !L->base)
		return err_set(e, ENOMEM, "loop: out of memory");

	for (unsigned i = 0; i < n; i++) {
		struct loop_stream *s = &L->streams[i];
		const struct target *t;
		struct gen_region reg;
		struct gen_config gc = {
			.rw = j->rw,
			/* A stream scans its whole region: worker 0 of 1. */
			.scan = SCAN_PARTITIONED,
			.fst = FST_ROUNDROBIN,
			.dist = j->random_distribution,
			.zipf_theta = j->zipf_theta,
			.bs = j->bs,
			.scan_chunk = j->scan_chunk,
			/* Streams of one job draw different offsets. */
			.seed = seed + (uint64_t)i * 0x9e3779b97f4a7c15ull,
			.worker = 0,
			.nworkers = 1,
			.wrap = j->time_based,
			/* io_size is the thread's: shared out among streams. */
			.io_limit = j->io_size ? (j->io_size + n - 1) / n : 0,
		};

		s->target = tfirst + (nt == n ? i : 0);
		t = &targets[s->target];
		if (nt == n) {
			s->base = t->base;
			s->len = t->len;
		} else {
			/* Slices on request boundaries; the last takes the rest. */
			uint64_t lo = t->len / n * i, hi = i + 1 == n ? t->len : t->len / n * (i + 1);

			lo -= lo % j->bs;
			if (i + 1 < n)
				hi -= hi % j->bs;
			s->base = t->base + lo;
			s->len = hi > lo ? hi - lo : 0;
			if (!s->len)
				return err_set(e, EINVAL, "loop=%u: %s is too small to cut into %u slices "
					       "of at least bs=%llu", n, t->path, n,
					       (unsigned long long)j->bs);
		}
		reg.base = s->base;
		reg.len = s->len;
		ret = gen_init(&s->gen, &gc, 1, &reg, NULL, e);
		if (ret)
			return err_wrap(e, "loop stream %u", i);
	}
	return 0;
}

void loop_destroy(struct loop_setup *L)
{
	if (!L)
		return;
	for (unsigned i = 0; L->streams && i < L->n; i++)
		gen_free(&L->streams[i].gen);
	if (L->stats)
		munmap(L->stats, (size_t)L->n * sizeof(*L->stats));
	free(L->streams);
	free(L->base);
	free(L);
}

void loop_take_base(struct loop_setup *L)
{

	for (unsigned i = 0; L && i < L->n; i++) {
		L->base[i].ops = STAT_LOAD(&L->stats[i].ops);
		L->base[i].bytes = STAT_LOAD(&L->stats[i].bytes);
	}
}

/* ---- shared pieces of the loops ------------------------------------ */

/* A completed read of stream @s counted for the stream (the job's
 * counters are the caller's). */
static inline void stream_count(struct worker *w, const struct io_req *r, unsigned s)
{
	struct stream_stats *ss = &w->wk->loop->stats[s];

	stat_add(&ss->ops, 1);
	stat_add(&ss->bytes, r->len);
}

/* A completed read of stream @s in loop_offload, @ns its latency:
 * consumed (unless a helper did: @consumed), released, counted for the
 * job as the asynchronous core counts a read, and for the stream. */
static inline void
stream_done(struct worker *w, worker_release_fn rel, struct io_req *r, unsigned s, bool consumed, uint64_t ns)
{
	const bool lat = w->wk->job->latency;

	if (consumed) {
		stat_add(&w->st->rops, 1);
		stat_add(&w->st->rbytes, r->len);
		if (lat)
			hist_add(&w->st->lat, ns);
	} else {
		worker_async_read_done(w, rel, r, lat, ns);
	}
	stream_count(w, r, s);
}

/* Next request of stream @s into @r; false when the stream is done. */
static inline bool stream_next(struct worker *w, unsigned s, struct io_req *r)
{
	struct loop_stream *st = &w->wk->loop->streams[s];
	unsigned tgt;
	uint64_t off;
	uint32_t len;

	if (!gen_next(&st->gen, &tgt, &off, &len))
		return false;
	r->target = (uint16_t)st->target;
	r->off = off;
	r->len = len;
	if (w->prefetch)
		prefetch_advance(w->prefetch, s, off, len);
	return true;
}

/* A completion of stream @s reaped at @t (ns; 0 without latency), by
 * a loop *@stopping or not (worker_async_completed; a failure sets it):
 * true when the stream may go on with its next request. */
static inline bool
stream_reaped(struct worker *w, worker_release_fn rel, struct io_req *r, unsigned s, uint64_t t, bool consumed,
	      bool *stopping)
{
	int done = worker_async_completed(w, rel, r, *stopping);

	if (done > 0)
		stream_done(w, rel, r, s, consumed, t - r->t_issue);
	else if (done < 0)
		*stopping = true;
	return !*stopping;
}

/* After a reap at @t (ns, read when the loop keeps latency): whether the
 * loop stops (asked, its job failed, or its deadline passed). */
static inline bool loop_stop_due(struct worker *w, uint64_t t)
{
	const uint64_t deadline = w->wk->deadline_ns ? w->wk->deadline_ns : UINT64_MAX;

	return worker_should_stop(w) || (w->wk->job->latency ? t : now_ns()) >= deadline;
}

/* ---- psync, mmap, null: the loop runs each request itself ---------- */

/* The streams still running, in turn: live[i] is next. */
struct turns {
	unsigned *live;
	unsigned nlive, i;
	unsigned s;		/* the stream of the request in flight */
};

/* worker_sync_core's draw: the next stream's next request, in its own
 * slot; a finished stream drops out, the others keep their order. */
static inline int turns_next(struct worker *w, struct io_req **rp, struct req_clock *clk, void *ctx)
{
	struct turns *T = ctx;

	(void)clk;
	while (T->nlive) {
		unsigned s = T->live[T->i];

		if (stream_next(w, s, &w->et.reqs[s])) {
			*rp = &w->et.reqs[s];
			T->s = s;
			if (++T->i == T->nlive)
				T->i = 0;
			return 1;
		}
		memmove(T->live + T->i, T->live + T->i + 1, (T->nlive - T->i - 1) * sizeof(*T->live));
		if (--T->nlive && T->i == T->nlive)
			T->i = 0;
	}
	return 0;
}

static inline bool turns_done(struct worker *w, struct thread_stats *st, worker_release_fn rel,
			      struct io_req *r, struct req_clock *clk, void *ctx)
{
	const struct turns *T = ctx;

	stream_count(w, r, T->s);
	return worker_sync_read_done(w, st, rel, r, clk);
}

static const struct worker_sync_policy turns_policy = {
	.next = turns_next,
	.done = turns_done,
};

static void loop_turns(struct worker *w, struct loop_rt *rt)
{
	struct turns T = { .live = rt->turn, .nlive = rt->L->n };

	for (unsigned k = 0; k < T.nlive; k++)
		T.live[k] = k;
	worker_sync_core(w, w->wk->ops->release, &turns_policy, false, &T);
}

/* ---- io_uring, libaio: every stream's requests in flight ------------ */

/* The asynchronous core with the streams as its sources
 * (worker_run_async_src): slot i's requests are stream i % N's
 * (loop_worker_init), so that the core, which first issues from slot 0,
 * 1, 2, ..., puts one request of every stream in flight before a
 * second of any. */
static void loop_async(struct worker *w, struct loop_rt *rt)
{
	const struct worker_async_src src = { .slot_src = rt->slot_stream, .src = rt->src };

	worker_run_async_src(w, &src);
}

/* ---- offload: the helpers run the requests ------------------------- */

/* In helper @h: what the loop thread would have blocked in. */
static void offload_run(void *arg, unsigned h, struct io_req *r)
{
	struct loop_rt *rt = arg;
	struct worker *w = rt->w;
	const struct job *j = w->wk->job;
	struct helper_priv *hp = &rt->hp[h];
	sigjmp_buf jb;
	int ret;

	if (rt->mapped) {
		/* Only this request fails: the loop reports it. */
		if (sigsetjmp(jb, 0)) {
			sigbus_recover();
			r->res = -EFAULT;
			return;
		}
		sigbus_arm(&jb);
	}
	ret = w->wk->ops->queue(&w->et, r);
	if (ret < 0)
		r->res = ret;
	else if (rt->helper_consumes && r->data && r->res == (int64_t)r->len)
		hp->sink += touch_consume(j->touch, j->touch_stride, r->data, r->len, hp->copybuf);
	if (rt->mapped)
		sigbus_arm(NULL);
}

/* Up to offload_permits requests handed to the helpers, streams taking
 * permits in turn; *@inflight counts them. False when the loop stops. */
static bool offload_issue(struct worker *w, struct loop_rt *rt, uint64_t t, unsigned *inflight)
{
	const unsigned n = rt->L->n;

	while (*inflight < rt->permits && rt->tlen) {
		unsigned s = rt->turn[rt->thead];
		struct io_req *r = &w->et.reqs[s];

		rt->thead = rt->thead + 1 == n ? 0 : rt->thead + 1;
		rt->tlen--;
		if (!stream_next(w, s, r))
			continue;	/* finished: out of the rotation */
		r->t_issue = t;
		worker_note(w->st, r);
		if (offload_submit(rt->pool, r) < 0) {
			worker_fail(w, EBUSY, r->target, r->off, "offload: no helper could take a request");
			return false;
		}
		/* Handed to a helper: a push of one, for the iodepth counts,
		 * the helpers standing in for the kernel. */
		stats_mark_submit(w->st, 1, ++*inflight);
	}
	return true;
}

static void loop_offload(struct worker *w, struct loop_rt *rt)
{
	/* NULL: offload= is refused for an engine with a release hook
	 * (engine.h), but the loop keeps the rule every loop keeps. */
	const worker_release_fn rel = w->wk->ops->release;
	const unsigned n = rt->L->n;
	const bool lat = w->wk->job->latency;
	unsigned inflight = 0;
	bool stopping = false;

	rt->thead = 0;
	rt->tlen = n;
	for (unsigned k = 0; k < n; k++)
		rt->turn[k] = k;
	for (;;) {
		unsigned got;
		uint64_t t;

		if (!stopping && !offload_issue(w, rt, lat ? now_ns() : 0, &inflight))
			stopping = true;
		if (!inflight)
			break;
		got = offload_reap(rt->pool, rt->done, n, true);
		stats_mark_complete(w->st, got);
		t = lat ? now_ns() : 0;
		stopping = stopping || loop_stop_due(w, t);
		for (unsigned i = 0; i < got; i++) {
			struct io_req *r = rt->done[i];

			inflight--;
			if (stream_reaped(w, rel, r, r->slot, t, rt->helper_consumes, &stopping))
				rt->turn[(rt->thead + rt->tlen++) % n] = r->slot;
		}
	}
}

/* ---- set-up in the worker thread ----------------------------------- */

int loop_worker_init(struct worker *w, struct err *e)
{
	const struct work *wk = w->wk;
	const struct job *j = wk->job;
	const struct job_slots *sl = &wk->slots;
	struct loop_setup *L = wk->loop;
	struct loop_rt *rt;
	int ret;

	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return err_set(e, ENOMEM, "loop: out of memory");
	w->loop = rt;
	rt->w = w;
	rt->L = L;
	rt->turn = calloc(L->n, sizeof(*rt->turn));
	rt->done = calloc(L->n, sizeof(*rt->done));
	if (!rt->turn || !rt->done)
		return err_set(e, ENOMEM, "loop: out of memory");
	if (wk->ops->flags & ENGINE_F_ASYNC) {
		rt->slot_stream = calloc(wk->ej.depth, sizeof(*rt->slot_stream));
		rt->src = calloc(L->n, sizeof(*rt->src));
		if (!rt->slot_stream || !rt->src)
			return err_set(e, ENOMEM, "loop: out of memory");
		for (unsigned i = 0; i < wk->ej.depth; i++)
			rt->slot_stream[i] = (uint16_t)(i % L->n);
		for (unsigned s = 0; s < L->n; s++)
			rt->src[s] = (struct worker_src){ .gen = &L->streams[s].gen,
							  .target = L->streams[s].target,
							  .ops = &L->stats[s].ops,
							  .bytes = &L->stats[s].bytes };
	}

	if (j->prefetch != PREFETCH_NONE) {
		ret = prefetch_start(&w->prefetch, j, wk->ej.targets, w->st, L->n,
				     sl->nprefetch ? &wk->stats[sl->prefetch + w->id] : NULL, e);
		if (ret)
			return ret;
		for (unsigned s = 0; s < L->n; s++)
			prefetch_key_set(w->prefetch, s, L->streams[s].target, L->streams[s].base,
					 L->streams[s].base + L->streams[s].len);
	}
	if (j->offload) {
		struct offload_config c = {
			.nhelpers = j->offload,
			.max_outstanding = L->n,
			.run = offload_run,
			.arg = rt,
			.notify = true,
		};

		c.stats = &wk->stats[sl->offload];
		rt->permits = j->offload_permits ? j->offload_permits : j->offload;
		rt->helper_consumes = !(wk->ops->flags & ENGINE_F_BUFFERS);
		rt->mapped = wk->ops->flags & ENGINE_F_MAPPED;
		rt->hp = aligned_alloc(CACHELINE, sizeof(*rt->hp) * j->offload);
		if (!rt->hp)
			return err_set(e, ENOMEM, "loop: out of memory");
		memset(rt->hp, 0, sizeof(*rt->hp) * j->offload);
		for (unsigned h = 0; rt->helper_consumes && j->touch == TOUCH_COPY && h < j->offload; h++) {
			rt->hp[h].copybuf = aligned_alloc(4096, wk->bs_stride);
			if (!rt->hp[h].copybuf)
				return err_set(e, ENOMEM, "loop: out of memory");
			memset(rt->hp[h].copybuf, 0, wk->bs_stride);
		}
		ret = offload_start(&rt->pool, &c, e);
		if (ret)
			return ret;
	}
	return 0;
}

void loop_run(struct worker *w)
{
	struct loop_rt *rt = w->loop;

	if (w->wk->ops->flags & ENGINE_F_ASYNC)
		loop_async(w, rt);
	else if (rt->pool)
		loop_offload(w, rt);
	else
		loop_turns(w, rt);
}

void loop_worker_exit(struct worker *w)
{
	struct loop_rt *rt = w->loop;

	if (!rt)
		return;
	/* Helpers finish what they hold before they stop, so no request
	 * outlives the buffers it reads into. */
	offload_stop(rt->pool);
	prefetch_stop(w->prefetch);
	w->prefetch = NULL;
	for (unsigned h = 0; rt->hp && h < w->wk->job->offload; h++) {
		w->sink += rt->hp[h].sink;
		free(rt->hp[h].copybuf);
	}
	free(rt->hp);
	free(rt->turn);
	free(rt->slot_stream);
	free(rt->src);
	free(rt->done);
	free(rt);
	w->loop = NULL;
}
