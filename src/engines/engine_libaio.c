/*
 * engine_libaio.c - reads and writes through Linux native AIO (Debian's
 * libaio).
 *
 * One io_context per worker with room for iodepth requests. queue()
 * prepares the slot's iocb and adds it to the batch; submit() hands the
 * batch to the kernel in one io_submit (looping over partial
 * submissions); reap() takes completions. Buffered AIO reads are
 * performed inside io_submit on Linux, so on a warm cache the events are
 * already in the completion ring when io_submit returns: reap() reads
 * that ring from user space (the kernel maps it into our address space
 * and allows the consumer to advance its head) and calls io_getevents
 * only when it must wait. That leaves one syscall per batch instead of
 * fio's two.
 *
 * A request io_submit rejects outright (-EINVAL for a misaligned O_DIRECT
 * read, -EBADF) completes with that error, so the worker can name its
 * target and offset; -EAGAIN (no request slots until completions are
 * reaped) leaves the rest of the batch for the next reap().
 *
 * Writes are io_prep_pwrite from the slot's stamped block. A flush is
 * fsync(2) or fdatasync(2) from the worker's thread, inside queue()
 * without ENGINE_F_ORDERED_FLUSH the worker has drained every
 * request in flight first, so it covers exactly the writes before it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libaio.h>

/* linux/aio_abi.h's, which libaio.h does not carry: aio_reqprio is read. */
#ifndef IOCB_FLAG_IOPRIO
#define IOCB_FLAG_IOPRIO (1 << 1)
#endif

#include "engines/atomicw.h"
#include "engines/engine.h"

/*
 * The completion ring an io_context_t points at (fs/aio.c, unchanged ABI
 * since 2.6.x). User space may consume events when the magic matches and
 * no incompatible features are announced.
 */
struct aio_uring {
	unsigned id;
	unsigned nr;		/* events in the ring */
	unsigned head;		/* consumer: user space or io_getevents */
	unsigned tail;		/* producer: the kernel */
	unsigned magic;
	unsigned compat_features;
	unsigned incompat_features;
	unsigned header_length;
	struct io_event events[];
};

#define AIO_RING_MAGIC		0xa10a10a1
/* io_submit gives up after this many -EAGAINs with nothing to reap. */
#define AIO_EAGAIN_RETRIES	1000

struct aio {
	io_context_t ctx;
	struct aio_uring *ring;		/* NULL: reap only through io_getevents */
	const struct target *targets;
	bool direct;
	unsigned depth;
	struct iocb *iocbs;		/* one per slot */
	struct iocb **batch;		/* queued, waiting for io_submit */
	unsigned nbatch, nsubmitted;	/* batch[nsubmitted..nbatch) are waiting */
	unsigned inkernel;		/* submitted, not yet reaped */
	struct io_req **failed;		/* rejected by io_submit, res set */
	unsigned nfailed;
	struct io_event *events;	/* io_getevents output, depth entries */
};

static void aio_free(struct aio *a)
{
	free(a->iocbs);
	free(a->batch);
	free(a->failed);
	free(a->events);
	free(a);
}

static int aio_init(struct engine_thread *et, struct err *e)
{
	unsigned depth = et->ej->depth ? et->ej->depth : 1;
	struct aio *a;
	int ret;

	a = calloc(1, sizeof(*a));
	if (!a)
		return err_set(e, ENOMEM, "libaio: out of memory");
	a->depth = depth;
	a->targets = engine_targets(et);
	a->direct = et->ej->direct;
	a->iocbs = calloc(depth, sizeof(*a->iocbs));
	a->batch = calloc(depth, sizeof(*a->batch));
	a->failed = calloc(depth, sizeof(*a->failed));
	a->events = calloc(depth, sizeof(*a->events));
	if (!a->iocbs || !a->batch || !a->failed || !a->events) {
		aio_free(a);
		return err_set(e, ENOMEM, "libaio: out of memory");
	}

	ret = io_setup(depth, &a->ctx);
	if (ret < 0) {
		aio_free(a);
		return err_set(e, -ret, "libaio: io_setup(%u): %s%s", depth, strerror(-ret),
			       ret == -EAGAIN ? " (fs.aio-max-nr reached?)" : "");
	}
	a->ring = (struct aio_uring *)a->ctx;
	if (a->ring->magic != AIO_RING_MAGIC || a->ring->incompat_features)
		a->ring = NULL;
	et->priv = a;
	return 0;
}

static void aio_exit(struct engine_thread *et)
{
	struct aio *a = et->priv;

	if (!a)
		return;
	/* Waits for anything still in flight before the buffers go away. */
	io_destroy(a->ctx);
	aio_free(a);
	et->priv = NULL;
}

static int aio_queue(struct engine_thread *et, struct io_req *r)
{
	struct aio *a = et->priv;
	struct iocb *cb = &a->iocbs[r->slot];
	const struct target *t = &a->targets[r->target];

	if (__builtin_expect(r->op == IO_TRIM, 0))
		return engine_trim(t, r);
	if (__builtin_expect(r->op == IO_FLUSH, 0)) {
		int n = r->datasync ? fdatasync(t->fd) : fsync(t->fd);

		r->res = n < 0 ? -errno : 0;
		r->data = NULL;
		return ENGINE_DONE;
	}
	if (__builtin_expect(r->op == IO_WRITE, 0)) {
		io_prep_pwrite(cb, a->direct ? t->fd_direct : t->fd, r->wbuf, r->len, r->off);
		if (t->atomic)
			cb->aio_rw_flags = RWF_ATOMIC;
	}
	else
		io_prep_pread(cb, a->direct ? t->fd_direct : t->fd, r->buf, r->len, r->off);
	if (__builtin_expect(r->ioprio != 0, 0)) {
		/* cmdprio_*: the kernel reads aio_reqprio only with this flag */
		cb->u.c.flags |= IOCB_FLAG_IOPRIO;
		cb->aio_reqprio = (short)r->ioprio;
	}
	cb->data = r;
	a->batch[a->nbatch++] = cb;
	return ENGINE_QUEUED;
}

/* Push the waiting part of the batch; stop early on -EAGAIN when there
 * are completions to reap first. */
static int aio_flush(struct aio *a)
{
	unsigned eagain = 0;

	while (a->nsubmitted < a->nbatch) {
		int ret = io_submit(a->ctx, a->nbatch - a->nsubmitted,
				   a->batch + a->nsubmitted);

		if (ret > 0) {
			a->nsubmitted += ret;
			a->inkernel += ret;
		} else if (ret == -EINTR) {
			continue;
		} else if (ret == -EAGAIN || ret == 0) {
			if (a->inkernel)
				return 0;
			if (++eagain > AIO_EAGAIN_RETRIES)
				return -EAGAIN;
		} else {
			/* The first waiting iocb is bad: fail it alone. */
			struct io_req *r = a->batch[a->nsubmitted++]->data;

			r->res = ret;
			r->data = r->buf;
			a->failed[a->nfailed++] = r;
		}
	}
	a->nbatch = a->nsubmitted = 0;
	return 0;
}

static int aio_submit(struct engine_thread *et)
{
	return aio_flush(et->priv);
}

static inline void aio_complete(struct io_req *r, const struct io_event *ev)
{
	r->res = (long)ev->res;
	r->data = r->buf;
}

/* Take up to @max events from the mapped ring without a syscall. */
static unsigned aio_user_reap(struct aio *a, unsigned max, struct io_req **done)
{
	struct aio_uring *ring = a->ring;
	unsigned head = ring->head, tail, n = 0;

	tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	while (head != tail && n < max) {
		struct io_event *ev = &ring->events[head];
		struct io_req *r = ev->data;

		aio_complete(r, ev);
		done[n++] = r;
		if (++head == ring->nr)
			head = 0;
	}
	if (n)
		__atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
	return n;
}

static int aio_reap(struct engine_thread *et, unsigned min, unsigned max, struct io_req **done)
{
	struct aio *a = et->priv;
	unsigned got = 0, i;
	bool looked = false;	/* min 0: io_getevents asked once, without waiting */
	int ret;

	if (min > max)
		min = max;
	while (a->nfailed && got < max)
		done[got++] = a->failed[--a->nfailed];
	for (;;) {
		unsigned n;

		if (a->nsubmitted < a->nbatch) {
			ret = aio_flush(a);
			if (ret < 0)
				return got ? (int)got : ret;
			while (a->nfailed && got < max)
				done[got++] = a->failed[--a->nfailed];
		}
		if (a->ring && got < max) {
			n = aio_user_reap(a, max - got, done + got);
			a->inkernel -= n;
			got += n;
		}
		/* min 0 (iodepth_batch_complete_min=0) with nothing found and
		 * no user ring to look at: ask the kernel once, without waiting */
		if ((got >= min && (min || got || a->ring || looked)) || !a->inkernel)
			return got;
		looked = true;

		n = min - got < a->inkernel ? min - got : a->inkernel;
		ret = io_getevents(a->ctx, n, max - got < a->depth ? max - got : a->depth,
				   a->events, NULL);
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			return got ? (int)got : ret;
		for (i = 0; i < (unsigned)ret; i++) {
			struct io_req *r = a->events[i].data;

			aio_complete(r, &a->events[i]);
			done[got++] = r;
		}
		a->inkernel -= ret;
		if (got >= min)
			return got;
	}
}

const struct engine_ops engine_libaio = {
	.name = "libaio",
	.help = "Linux native AIO (libaio): iodepth reads or writes in flight per thread through "
		"io_submit/io_getevents; fsync(2) from the thread to flush",
	.flags = ENGINE_F_ASYNC | ENGINE_F_BUFFERS,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH) | ENGINE_OP(IO_TRIM),
	.init = aio_init,
	.exit = aio_exit,
	.queue = aio_queue,
	.submit = aio_submit,
	.reap = aio_reap,
};
