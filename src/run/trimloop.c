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

/* Latency-clock ticks since *@t, into @h (when timed); *@t moves on. */
static void timed(bool lat, uint64_t *t, struct hist *h)
{
	uint64_t now;

	if (!lat)
		return;
	now = latclock_ticks();
	hist_add(h, latclock_ns(now - *t));
	*t = now;
}

void worker_run_trim(struct worker *w)
{
	const struct job *j = w->wk->job;
	struct thread_stats *st = w->st;
	struct io_req *r = &w->et.reqs[0];
	const bool lat = j->latency;
	const uint64_t deadline = w->wk->deadline_ns ? w->wk->deadline_ns : UINT64_MAX;
	uint64_t t = lat ? latclock_ticks() : 0, n = 0;
	unsigned tgt;
	uint64_t off;
	uint32_t len;
	int ret;

	while (!worker_should_stop(w) && gen_next_dir(&w->gen, JOB_DIR_WRITE, &tgt, &off, &len)) {
		r->target = (uint16_t)(w->tfirst + tgt);
		r->len = len;
		r->off = writes_place(&w->wr, tgt, off);
		r->op = IO_TRIM;
		ret = issue_one(w, r);
		if (ret) {
			worker_fail(w, ret, r->target, r->off, "trim");
			break;
		}
		stat_add(&st->tops, 1);
		stat_add(&st->tbytes, len);
		timed(lat, &t, &st->tlat);
		if (job_trimwrites(j)) {
			worker_prep_write(w, r, tgt, r->off);
			ret = issue_one(w, r);
			if (ret) {
				worker_fail(w, ret, r->target, r->off, "write");
				break;
			}
			stat_add(&st->wops, 1);
			stat_add(&st->wbytes, len);
			timed(lat, &t, &st->wlat);
		}
		/* the deadline every few requests: each is a system call */
		if (++n % 16 == 0 && now_ns() >= deadline)
			break;
	}
}
