/*
 * engine_posixaio.c - reads and writes through POSIX AIO, glibc's
 * aio(3): aio_read, aio_write, aio_error, aio_return, aio_suspend.
 *
 * The portable asynchronous engine fio's users meet on systems without
 * libaio or io_uring, and the one their own regression job t0017 uses.
 * glibc implements it in user space: each request is handed to a pool of
 * helper threads that run pread/pwrite (at most aio_init's aio_threads
 * at once, 20 by default, whatever iodepth says), so "in flight" means
 * queued to those threads, not to the kernel. The comparison with libaio
 * and io_uring shows what that costs (man page: ENGINES).
 *
 * queue() prepares the slot's aiocb; submit() hands each waiting one to
 * glibc (aio_read/aio_write: one call each, there is no batch verb that
 * reports each request's failure); reap() looks at every request in
 * flight with aio_error and sleeps in aio_suspend until one finishes
 * when it must wait. A flush is fsync(2) or fdatasync(2) from the
 * worker's thread inside queue(): without ENGINE_F_ORDERED_FLUSH the
 * worker has drained every request first, so it covers the writes
 * before it.
 */
#include <aio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/engine.h"
#include "lib/latclock.h"

/*
 * How long reap() looks at the oldest request before it sleeps in
 * aio_suspend. glibc runs the requests of one descriptor one after the
 * other on one helper thread, so a worker that reaps as soon as one
 * completes finds none done at its next look and sleeps, and the helper
 * then wakes it: a futex wait and a wake per request (2.5 futex calls a
 * read under strace where fio, slower between looks, made 0.6). A warm
 * read is done within a few microseconds. With direct=1 every read goes
 * to the device and takes far longer, so the worker does not look: it
 * sleeps at once (looking tripled its CPU time per O_DIRECT read). A
 * buffered read that misses the page cache costs it at most this long.
 */
#define PAIO_SPIN_NS 5000ull

struct paio {
	struct engine_aio c;		/* targets, depth; those glibc refused */
	struct aiocb *cbs;		/* one per slot */
	struct io_req **queued;		/* prepared, not yet handed to glibc */
	unsigned nqueued;
	struct io_req **inflight;	/* handed to glibc, not yet reaped */
	unsigned ninflight;
	const struct aiocb **wait;	/* aio_suspend's list */
};

static void paio_free(struct paio *p)
{
	engine_aio_free(&p->c);
	free(p->cbs);
	free(p->queued);
	free(p->inflight);
	free(p->wait);
	free(p);
}

/* atomic=1: aio_write is a plain pwrite on a helper thread, with no
 * RWF_ATOMIC to carry; refused rather than quietly not atomic. */
static int paio_prepare(struct engine_job *ej, struct err *e)
{
	if (ej->atomic)
		return err_set(e, EINVAL, "job '%s': atomic=1 with ioengine=posixaio: glibc's "
			       "aio_write has no RWF_ATOMIC (io_uring, libaio and psync carry it)",
			       ej->name);
	return 0;
}

static int paio_init(struct engine_thread *et, struct err *e)
{
	struct paio *p = calloc(1, sizeof(*p));
	unsigned depth;

	if (!p || engine_aio_init(&p->c, et) < 0) {
		free(p);
		return err_set(e, ENOMEM, "posixaio: out of memory");
	}
	depth = p->c.depth;
	p->cbs = calloc(depth, sizeof(*p->cbs));
	p->queued = calloc(depth, sizeof(*p->queued));
	p->inflight = calloc(depth, sizeof(*p->inflight));
	p->wait = calloc(depth, sizeof(*p->wait));
	if (!p->cbs || !p->queued || !p->inflight || !p->wait) {
		paio_free(p);
		return err_set(e, ENOMEM, "posixaio: out of memory");
	}
	et->priv = p;
	return 0;
}

static void paio_exit(struct engine_thread *et)
{
	struct paio *p = et->priv;

	if (!p)
		return;
	/* The buffers must outlive glibc's helpers: wait for every one. */
	while (p->ninflight) {
		unsigned n = 0;

		for (unsigned i = 0; i < p->ninflight; i++)
			if (aio_error(&p->cbs[p->inflight[i]->slot]) == EINPROGRESS)
				p->inflight[n++] = p->inflight[i];
			else
				(void)aio_return(&p->cbs[p->inflight[i]->slot]);
		p->ninflight = n;
		for (unsigned i = 0; i < n; i++)
			p->wait[i] = &p->cbs[p->inflight[i]->slot];
		if (n)
			aio_suspend(p->wait, (int)n, NULL);
	}
	paio_free(p);
	et->priv = NULL;
}

static int paio_queue(struct engine_thread *et, struct io_req *r)
{
	struct paio *p = et->priv;
	struct aiocb *cb = &p->cbs[r->slot];
	const struct target *t = &p->c.targets[r->target];

	if (__builtin_expect(r->op == IO_TRIM, 0))
		return engine_trim(t, r);
	if (__builtin_expect(r->op == IO_FLUSH, 0))
		return engine_flush(t, r);
	memset(cb, 0, sizeof(*cb));
	cb->aio_fildes = engine_aio_fd(&p->c, t);
	cb->aio_offset = (off_t)r->off;
	cb->aio_nbytes = r->len;
	cb->aio_buf = r->op == IO_WRITE ? r->wbuf : r->buf;
	cb->aio_sigevent.sigev_notify = SIGEV_NONE;
	p->queued[p->nqueued++] = r;
	return ENGINE_QUEUED;
}

/* Hand every prepared request to glibc. One it refuses completes with
 * that error (res), so the worker names its target and offset. */
static int paio_submit(struct engine_thread *et)
{
	struct paio *p = et->priv;

	for (unsigned i = 0; i < p->nqueued; i++) {
		struct io_req *r = p->queued[i];
		struct aiocb *cb = &p->cbs[r->slot];
		int ret = r->op == IO_WRITE ? aio_write(cb) : aio_read(cb);

		if (ret < 0) {
			/* glibc out of memory for its queue (EAGAIN) or a bad
			 * request: it completes with that error */
			engine_aio_refused(&p->c, r, -errno);
			continue;
		}
		p->inflight[p->ninflight++] = r;
	}
	p->nqueued = 0;
	return 0;
}

/* Move every finished request of the in-flight list to @done (at most
 * @max); the rest stay, in order. */
static unsigned paio_collect(struct paio *p, unsigned max, struct io_req **done)
{
	unsigned got = 0, n = 0;

	for (unsigned i = 0; i < p->ninflight; i++) {
		struct io_req *r = p->inflight[i];
		struct aiocb *cb = &p->cbs[r->slot];
		int err;

		if (got == max) {
			p->inflight[n++] = r;
			continue;
		}
		err = aio_error(cb);
		if (err == EINPROGRESS) {
			p->inflight[n++] = r;
			continue;
		}
		r->res = err ? -err : (int64_t)aio_return(cb);
		if (err)
			(void)aio_return(cb);
		r->data = r->buf;
		done[got++] = r;
	}
	p->ninflight = n;
	return got;
}

/* True when the oldest request in flight finished within PAIO_SPIN_NS:
 * the one glibc runs first, its queue being one per descriptor, in
 * order. aio_error is a load of the request's error field. */
static bool paio_spin(struct paio *p)
{
	const struct aiocb *cb = &p->cbs[p->inflight[0]->slot];
	uint64_t end = 0;

	if (p->c.direct)
		return false;
	for (unsigned n = 0;; n++) {
		if (aio_error(cb) != EINPROGRESS)
			return true;
		if (!(n & 15)) {
			uint64_t t = now_ns();

			if (!end)
				end = t + PAIO_SPIN_NS;
			else if (t >= end)
				return false;
		}
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

static int paio_reap(struct engine_thread *et, unsigned min, unsigned max, struct io_req **done)
{
	struct paio *p = et->priv;
	unsigned got = 0;

	if (min > max)
		min = max;
	paio_submit(et);
	got = engine_aio_take_refused(&p->c, done, got, max);
	for (;;) {
		got += paio_collect(p, max - got, done + got);
		if (got >= min || !p->ninflight || got == max)
			return (int)got;
		if (paio_spin(p))
			continue;
		for (unsigned i = 0; i < p->ninflight; i++)
			p->wait[i] = &p->cbs[p->inflight[i]->slot];
		/* EINTR (a signal) and EAGAIN (woken with none done): look again */
		if (aio_suspend(p->wait, (int)p->ninflight, NULL) < 0 && errno != EINTR &&
		    errno != EAGAIN)
			return got ? (int)got : -errno;
	}
}

const struct engine_ops engine_posixaio = {
	.name = "posixaio",
	.help = "POSIX AIO (glibc's aio(3)): iodepth reads or writes queued per thread to glibc's "
		"helper threads (aio_read/aio_write, aio_suspend); fsync(2) from the thread to flush",
	.flags = ENGINE_F_ASYNC | ENGINE_F_BUFFERS,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH) | ENGINE_OP(IO_TRIM),
	.prepare = paio_prepare,
	.init = paio_init,
	.exit = paio_exit,
	.queue = paio_queue,
	.submit = paio_submit,
	.reap = paio_reap,
};
