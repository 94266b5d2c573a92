/*
 * trimloop.c - fio's trims (rw=trim, randtrim, trimwrite, randtrimwrite):
 * a worker's loop, one request at a time.
 *
 * Every engine trims from the worker's thread (engine_trim: a hole
 * punched in a file, BLKDISCARD on a block device), so a trim is
 * synchronous whatever the engine; trimwrite's write of the same block
 * follows it through the engine, waited for (depth 1). The offsets are
 * the generator's in the write direction (fio's third, trim, size is
 * parsed and dropped: trims take the writes' sizes), placed as writes
 * are (writes.h: threads sharing a target each trim their own blocks).
 * The loop is the synchronous core (worker.h) with the trims' policy.
 */
#include <errno.h>

#include "run/worker.h"

/* The engine's answer for @r, queued alone: done in queue(), or reaped. */
static int issue_one(struct worker *w, struct io_req *r)
{
	const struct engine_ops *ops = w->wk->ops;
	struct io_req *done;
	int ret;

	record_req(&w->rec, r);
	ret = ops->queue(&w->et, r);
	if (ret == ENGINE_QUEUED) {
		do
			ret = ops->reap(&w->et, 1, 1, &done);
		while (ret == -EINTR || ret == 0);
		if (ret > 0)
			ret = 0;
	}
	if (ret < 0)
		return ret;
	if (r->res == (int64_t)r->len)
		return 0;
	return r->res < 0 ? (int)r->res : -EIO;
}

/* worker_sync_core's draw: the writes' next offset and size, placed as
 * a write's, trimmed (*@ctx: the target, counted from the worker's
 * first, for trimwrite's write). */
static inline int trim_next(struct worker *w, struct io_req **rp, struct req_clock *clk, void *ctx)
{
	struct io_req *r = *rp;
	unsigned *tgt = ctx;
	uint64_t off;
	uint32_t len;

	(void)clk;
	if (!gen_next_dir(&w->gen, JOB_DIR_WRITE, tgt, &off, &len))
		return 0;
	r->target = (uint16_t)(w->tfirst + *tgt);
	r->len = len;
	r->off = writes_place(&w->wr, *tgt, off);
	r->op = IO_TRIM;
	return 1;
}

/* A trim done: counted, and for trimwrite the block written after it. */
static inline bool trim_done(struct worker *w, struct thread_stats *st, worker_release_fn rel,
			     struct io_req *r, struct req_clock *clk, void *ctx)
{
	const unsigned *tgt = ctx;
	bool late;
	int ret;

	(void)rel;
	stat_add(&st->tops, 1);
	stat_add(&st->tbytes, r->len);
	late = req_clock_done(clk, &st->tlat);
	if (!job_trimwrites(w->wk->job))
		return late;
	worker_prep_write(w, r, *tgt, r->off);
	ret = issue_one(w, r);
	if (ret) {
		worker_fail(w, ret, r->target, r->off, "write");
		return true;
	}
	stat_add(&st->wops, 1);
	stat_add(&st->wbytes, r->len);
	return req_clock_done(clk, &st->wlat) || late;
}

static const struct worker_sync_policy trim_policy = {
	.next = trim_next,
	.done = trim_done,
};

/* The synchronous core with the trims' policy (trims refuse rate,
 * thinktime and continue_on_error, so none of those apply). */
void worker_run_trim(struct worker *w)
{
	unsigned tgt = 0;

	worker_sync_core(w, NULL, &trim_policy, false, &tgt);
}
