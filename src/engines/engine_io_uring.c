/*
 * engine_io_uring.c - reads and writes through one io_uring per worker
 * (liburing).
 *
 * What makes this fast is what it does not do per request: queue() only
 * fills an SQE (no syscall), and reap() hands the batch to the kernel
 * and waits for completions in a single io_uring_enter
 * (io_uring_submit_and_wait). submit() pushes without waiting, for the
 * worker to call mid-batch when iodepth_batch_submit is smaller than the
 * batch (direct=1 submits each read as its slot frees, by default). Completions are read straight
 * from the CQ ring and released with one cq_advance per batch. Files and
 * the worker's slot buffers are registered once, so the kernel takes no
 * file reference and pins no pages per request (IOSQE_FIXED_FILE,
 * IORING_OP_READ_FIXED); if registration is refused (RLIMIT_NOFILE,
 * RLIMIT_MEMLOCK) the engine falls back to plain reads, which only cost
 * speed.
 *
 * Ring setup flags, best first, each set dropped when the kernel answers
 * -EINVAL (older than the flag):
 *   SINGLE_ISSUER|DEFER_TASKRUN (6.1): only this thread submits, and the
 *	completion work the kernel defers (O_DIRECT end_io, async buffered
 *	page waits) runs when we enter to wait, not by interrupting us.
 *   COOP_TASKRUN (5.19): the same without deferral: no IPI to post task
 *	work, it runs at our next kernel transition.
 *   SUBMIT_ALL (5.18) with both: a bad SQE does not strand the SQEs
 *	behind it in the SQ ring; its error comes back as its own CQE.
 * SQPOLL is not used: it burns a second CPU to save the one syscall per
 * batch, which is not what a one-thread job is meant to measure.
 *
 * uncached=1 sets RWF_DONTCACHE in a read's rw_flags: the kernel drops
 * the pages once the data is copied (Linux 6.14+, checked before the
 * run by uncached_probe).
 *
 * Writes are IORING_OP_WRITE_FIXED from the slot's stamped block (a
 * write job registers its read and write buffers, slot i's write buffer
 * at index depth + i). A flush is IORING_OP_FSYNC (with
 * IORING_FSYNC_DATASYNC for a request that says datasync) marked IOSQE_IO_DRAIN: the
 * kernel starts it only once every request queued before it has
 * completed, and starts none queued after it until it has, so it makes
 * durable exactly the writes before it without the worker waiting for
 * them itself (ENGINE_F_ORDERED_FLUSH).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <liburing.h>

#include "engines/atomicw.h"
#include "engines/engine.h"
#include "engines/uncached.h"

/* io_uring refuses more registered buffers than this (IORING_MAX_REG_BUFFERS). */
#define URING_MAX_REG_BUFFERS	(1u << 14)

struct uring {
	struct io_uring ring;
	const struct target *targets;
	unsigned depth;		/* slots; a slot's write buffer is index depth + slot */
	bool direct;
	unsigned read_flags;	/* RWF_DONTCACHE for uncached=1 */
	bool fixed_files;	/* fd = index into the job's targets */
	bool fixed_bufs;	/* buf_index = slot */
};

static const unsigned uring_flag_sets[] = {
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SUBMIT_ALL,
	IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SUBMIT_ALL,
	IORING_SETUP_SUBMIT_ALL,
	0,
};

static unsigned roundup_pow2(unsigned n)
{
	unsigned p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int uring_register(struct engine_thread *et, struct uring *u)
{
	const struct engine_job *jr = et->ej;
	unsigned depth = jr->depth, i;
	/* A write job registers its write buffers after its read buffers. */
	unsigned nbufs = et->reqs[0].wbuf ? 2 * depth : depth;
	struct iovec *iov;
	int *fds;

	fds = malloc(sizeof(*fds) * (jr->ntargets ? jr->ntargets : 1));
	if (!fds)
		return -ENOMEM;
	for (i = 0; i < jr->ntargets; i++)
		fds[i] = u->direct ? engine_targets(et)[i].fd_direct : engine_targets(et)[i].fd;
	u->fixed_files = jr->ntargets > 0 &&
		io_uring_register_files(&u->ring, fds, jr->ntargets) == 0;
	free(fds);

	if (!depth || nbufs > URING_MAX_REG_BUFFERS || !et->reqs[0].buf)
		return 0;
	iov = malloc(sizeof(*iov) * nbufs);
	if (!iov)
		return -ENOMEM;
	for (i = 0; i < nbufs; i++) {
		iov[i].iov_base = i < depth ? et->reqs[i].buf : et->reqs[i - depth].wbuf;
		iov[i].iov_len = jr->req_max;
	}
	u->fixed_bufs = io_uring_register_buffers(&u->ring, iov, nbufs) == 0;
	free(iov);
	return 0;
}

static int uring_init(struct engine_thread *et, struct err *e)
{
	/* One SQE per request slot, so queue() never finds the SQ full. */
	unsigned entries = roundup_pow2(et->ej->depth);
	struct io_uring_params p;
	struct uring *u;
	size_t i;
	int ret = -EINVAL;

	u = calloc(1, sizeof(*u));
	if (!u)
		return err_set(e, ENOMEM, "io_uring: out of memory");
	u->targets = engine_targets(et);
	u->depth = et->ej->depth;
	u->direct = et->ej->direct;
	u->read_flags = et->ej->uncached ? UNCACHED_RWF_DONTCACHE : 0;

	/*
	 * A job that flushes queues each flush with IOSQE_IO_DRAIN. With
	 * DEFER_TASKRUN, O_DIRECT writes and a drained fsync in flight, the
	 * worker sometimes waited in io_uring_enter for completions that
	 * never came (Linux 6.18: 3 hangs in 6 one-second randrw runs,
	 * fsync=8, depth 16; none in 8 with COOP_TASKRUN). Whether the
	 * kernel or the wait for min_complete = in flight is at fault is
	 * not settled; such a job starts at the next set, and
	 * tests/e2e/writes.sh runs the case ten times.
	 */
	for (i = et->ej->flushes ? 1 : 0; i < sizeof(uring_flag_sets) / sizeof(uring_flag_sets[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = uring_flag_sets[i];
		ret = io_uring_queue_init_params(entries, &u->ring, &p);
		if (ret != -EINVAL)
			break;
	}
	if (ret < 0) {
		free(u);
		return err_set(e, -ret, "io_uring: setting up a ring of %u entries: %s%s",
			       entries, strerror(-ret),
			       ret == -EPERM ? " (kernel.io_uring_disabled?)" : "");
	}

	/* Saves the ring fd lookup in every io_uring_enter (5.18); optional. */
	io_uring_register_ring_fd(&u->ring);

	ret = uring_register(et, u);
	if (ret < 0) {
		io_uring_queue_exit(&u->ring);
		free(u);
		return err_set(e, -ret, "io_uring: registering files and buffers: %s",
			       strerror(-ret));
	}
	et->priv = u;
	return 0;
}

static void uring_exit(struct engine_thread *et)
{
	struct uring *u = et->priv;

	if (!u)
		return;
	io_uring_queue_exit(&u->ring);
	free(u);
	et->priv = NULL;
}

static inline void uring_prep(struct uring *u, struct io_uring_sqe *sqe,
			      struct io_req *r)
{
	const struct target *t = &u->targets[r->target];
	int fd = u->fixed_files ? r->target : (u->direct ? t->fd_direct : t->fd);

	if (__builtin_expect(r->op == IO_WRITE, 0)) {
		if (u->fixed_bufs)
			io_uring_prep_write_fixed(sqe, fd, r->wbuf, r->len, r->off, u->depth + r->slot);
		else
			io_uring_prep_write(sqe, fd, r->wbuf, r->len, r->off);
		if (t->atomic)
			sqe->rw_flags = RWF_ATOMIC;
	} else if (__builtin_expect(r->op == IO_FLUSH, 0)) {
		/* A flush is about the file: the registered descriptor
		 * serves, O_DIRECT or not. */
		io_uring_prep_fsync(sqe, fd, r->datasync ? IORING_FSYNC_DATASYNC : 0);
		sqe->flags |= IOSQE_IO_DRAIN;
	} else {
		if (u->fixed_bufs)
			io_uring_prep_read_fixed(sqe, fd, r->buf, r->len, r->off, r->slot);
		else
			io_uring_prep_read(sqe, fd, r->buf, r->len, r->off);
		sqe->rw_flags = u->read_flags;
	}
	if (u->fixed_files)
		sqe->flags |= IOSQE_FIXED_FILE;
	/* 0 unless cmdprio_* gave the request a priority: the thread's */
	sqe->ioprio = r->ioprio;
	io_uring_sqe_set_data(sqe, r);
}

static int uring_queue(struct engine_thread *et, struct io_req *r)
{
	struct uring *u = et->priv;
	struct io_uring_sqe *sqe;

	/* A trim from the thread, as every engine's (engine_trim) */
	if (__builtin_expect(r->op == IO_TRIM, 0))
		return engine_trim(&engine_targets(et)[r->target], r);
	sqe = io_uring_get_sqe(&u->ring);
	/* The ring has an entry per request slot and a request holds at
	 * most one of them, so this only fails on a worker bug. */
	if (!sqe)
		return -EBUSY;
	uring_prep(u, sqe, r);
	return ENGINE_QUEUED;
}

/* Push the SQEs queue() prepared without waiting: the worker calls this
 * mid-batch (iodepth_batch_submit); the batch's last SQEs go to the
 * kernel together with the wait, in reap(). */
static int uring_submit(struct engine_thread *et)
{
	struct uring *u = et->priv;
	int ret;

	if (!io_uring_sq_ready(&u->ring))
		return 0;
	ret = io_uring_submit(&u->ring);
	/* A signal, or the kernel short of memory or CQ room: reap()
	 * enters again with whatever is left. */
	if (ret == -EINTR || ret == -EAGAIN || ret == -EBUSY)
		return 0;
	return ret < 0 ? ret : 0;
}

/*
 * Move up to @max completions from the CQ ring to @done. A request that
 * came back -EAGAIN is prepared again and stays in flight; it is
 * submitted by the caller's next enter.
 */
static unsigned uring_harvest(struct uring *u, unsigned max, struct io_req **done)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0, n = 0;

	io_uring_for_each_cqe(&u->ring, head, cqe) {
		struct io_req *r = io_uring_cqe_get_data(cqe);

		if (n == max)
			break;
		seen++;
		if (__builtin_expect(cqe->res == -EAGAIN, 0)) {
			/* A slot freed by this CQE's SQE, so never NULL. */
			struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

			if (sqe) {
				uring_prep(u, sqe, r);
				continue;
			}
		}
		r->res = cqe->res;
		r->data = r->buf;
		done[n++] = r;
	}
	io_uring_cq_advance(&u->ring, seen);
	return n;
}

static int uring_reap(struct engine_thread *et, unsigned min, unsigned max, struct io_req **done)
{
	struct uring *u = et->priv;
	unsigned got = 0;
	int ret;

	if (min > max)
		min = max;
	if (!min) {
		/* iodepth_batch_complete_min=0: one look, no wait (fio's
		 * polling). Entering the kernel pushes what is queued and
		 * runs the completions DEFER_TASKRUN holds for this task. */
		ret = io_uring_submit_and_get_events(&u->ring);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			return ret;
		return (int)uring_harvest(u, max, done);
	}
	for (;;) {
		/* The kernel's min_complete counts every CQE not yet
		 * consumed, those already in the ring included. */
		unsigned ready = io_uring_cq_ready(&u->ring);
		unsigned want = got + ready >= min ? 0 : min - got;

		/* One syscall: push what queue() prepared and wait for the
		 * completions still missing. Nothing to push and enough
		 * already in the CQ ring: no syscall at all. */
		if (want || io_uring_sq_ready(&u->ring)) {
			ret = io_uring_submit_and_wait(&u->ring, want);
			/* EINTR: a signal; EAGAIN/EBUSY: the kernel is short
			 * of memory or CQ room; reaping what is there and
			 * entering again is the cure for all three. */
			if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
				return got ? (int)got : ret;
		}
		got += uring_harvest(u, max - got, done + got);
		if (got >= min)
			return got;
	}
}

const struct engine_ops engine_io_uring = {
	.name = "io_uring",
	.help = "io_uring (liburing): iodepth reads or writes in flight per thread, registered "
		"files and buffers, batched submit and reap; IORING_OP_FSYNC to flush",
	.flags = ENGINE_F_ASYNC | ENGINE_F_BUFFERS | ENGINE_F_ORDERED_FLUSH | ENGINE_F_UNCACHED,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH) | ENGINE_OP(IO_TRIM),
	.init = uring_init,
	.exit = uring_exit,
	.queue = uring_queue,
	.submit = uring_submit,
	.reap = uring_reap,
};
