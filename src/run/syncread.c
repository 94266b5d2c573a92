/*
 * syncread.c - a read job's synchronous loops: worker_sync_core
 * (worker.h) with the policy that draws from the generator or a
 * replay's log, and, for an engine with a prefetch hook, the one that
 * also tells it of the requests to come.
 */
#include "run/worker.h"

#include "run/prefetch.h"

/* A read job: the generator's next request, or the replay's. Always
 * inlined: called from two loops, the compiler would otherwise make it
 * a call in each, a dozen instructions a request more. */
static inline __attribute__((always_inline)) int read_next(struct worker *w, struct io_req **rp, struct req_clock *clk, void *ctx)
{
	struct io_req *r = *rp;
	unsigned tgt;
	uint64_t off;
	uint32_t len;
	int got = record_next(&w->rec, &w->gen, &tgt, &off, &len);

	(void)clk;
	(void)ctx;
	if (!got)
		return 0;
	/* The generator counts this worker's targets from 0. */
	r->target = (uint16_t)(w->tfirst + tgt);
	r->off = off;
	r->len = len;
	if (w->prefetch)
		prefetch_advance(w->prefetch, tgt, off, len);
	return got;
}

/* Always inlined too: in worker_run_sync, which holds the core three
 * times, the compiler otherwise split it into a call. */
static inline __attribute__((always_inline)) bool read_done(struct worker *w, struct thread_stats *st,
							    worker_release_fn rel, struct io_req *r,
							    struct req_clock *clk, void *ctx)
{
	(void)ctx;
	return worker_sync_read_done(w, st, rel, r, clk);
}

static const struct worker_sync_policy read_policy = {
	.next = read_next,
	.done = read_done,
};

/*
 * A read job on an engine with a prefetch hook (engine.h): the same
 * requests in the same order, but the loop knows the next two of them
 * when it issues one, and tells the engine, so
 * that their memory misses overlap this request's. The generator is
 * drawn two requests early (nothing else reads its state, and a
 * request drawn but never issued, when the loop stops, leaves no trace);
 * a replay's requests are looked at in its log without being taken,
 * since taking one may wait for its due time.
 */
struct read_ahead {
	/* Drawn, not issued: q[head] is next, q[head ^ 1] the one after;
	 * n of them (fewer at the generator's end). A ring, so that
	 * nothing is copied as the loop moves on. */
	struct io_req q[2];
	unsigned head, n;
	bool primed;
	engine_prefetch_fn hint;	/* the engine's prefetch hook */
};

/* The generator's next request into @q: false when there is none. */
static inline bool ahead_draw(struct worker *w, struct io_req *q)
{
	unsigned tgt;
	uint32_t len;

	if (!gen_next(&w->gen, &tgt, &q->off, &len))
		return false;
	q->target = (uint16_t)(w->tfirst + tgt);
	q->len = len;
	return true;
}

static inline int ahead_next(struct worker *w, struct io_req **rp, struct req_clock *clk, void *ctx)
{
	struct read_ahead *a = ctx;
	struct io_req *r = *rp, *c;

	if (__builtin_expect(w->rec.rp != NULL, 0))
		return read_next(w, rp, clk, NULL);
	if (__builtin_expect(!a->primed, 0)) {
		a->primed = true;
		a->n = ahead_draw(w, &a->q[0]);
		a->n += a->n && ahead_draw(w, &a->q[1]);
	}
	if (!a->n)
		return 0;
	c = &a->q[a->head];
	r->target = c->target;
	r->off = c->off;
	r->len = c->len;
	/* Only a full ring draws again: once the generator said no more,
	 * it is not asked again. */
	if (a->n == 2 && !ahead_draw(w, c))
		a->n = 1;
	else if (a->n == 1)
		a->n = 0;
	a->head ^= 1;
	if (w->prefetch)
		prefetch_advance(w->prefetch, r->target - w->tfirst, r->off, r->len);
	return 1;
}

/* Just before the request is queued (after any paced wait, so that
 * what the engine brings in is still there when its turn comes): the
 * requests after it, as hints. */
static inline void ahead_hint(struct worker *w, struct io_req *r, void *ctx)
{
	struct read_ahead *a = ctx;
	const struct record *rc = &w->rec;

	(void)r;
	if (__builtin_expect(rc->rp != NULL, 0)) {
		unsigned n = 0;

		for (size_t i = rc->next; i < rc->rp->n && n < 2; i++, n++) {
			const struct replay_req *l = &rc->rp->req[i];

			a->q[n].target = (uint16_t)(w->tfirst + l->target);
			a->q[n].off = l->off;
			a->q[n].len = l->len;
		}
		if (n)
			a->hint(&w->et, &a->q[0], n > 1 ? &a->q[1] : NULL);
		return;
	}
	if (a->n)
		a->hint(&w->et, &a->q[a->head], a->n > 1 ? &a->q[a->head ^ 1] : NULL);
}

static const struct worker_sync_policy read_ahead_policy = {
	.next = ahead_next,
	.prep = ahead_hint,
	.done = read_done,
};

/* Inlined three times: with the engine's release hook, and with a
 * constant NULL, so an engine without one runs a loop with no trace of
 * it; and for an engine with a prefetch hook (which has a release hook:
 * only the pools set one), the loop that looks ahead. */
void worker_run_sync(struct worker *w)
{
	const struct engine_ops *ops = w->wk->ops;

	if (ops->prefetch && ops->release) {
		struct read_ahead a = { .q = { { .op = IO_READ }, { .op = IO_READ } },
					.hint = ops->prefetch };

		worker_sync_core(w, ops->release, &read_ahead_policy, false, &a);
	} else if (ops->release) {
		worker_sync_core(w, ops->release, &read_policy, false, NULL);
	} else {
		worker_sync_core(w, NULL, &read_policy, false, NULL);
	}
}
