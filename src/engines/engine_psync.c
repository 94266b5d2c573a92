/*
 * engine_psync.c - pread(2) into the worker's aligned buffer, pwrite(2)
 * from its stamped block, fsync(2)/fdatasync(2) for a flush; O_DIRECT
 * when direct=1 (and the O_DSYNC or O_SYNC of sync= is on the target's
 * descriptors); preadv2(RWF_DONTCACHE) when uncached=1. The simplest engine and the baseline for every other.
 */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engines/atomicw.h"
#include "engines/engine.h"
#include "engines/uncached.h"

static int psync_queue(struct engine_thread *et, struct io_req *r)
{
	const struct target *t = &engine_targets(et)[r->target];
	int fd = et->ej->direct ? t->fd_direct : t->fd;
	ssize_t n;

	if (__builtin_expect(r->op == IO_TRIM, 0))
		return engine_trim(t, r);
	switch (r->op) {
	case IO_READ:
		if (et->ej->uncached) {
			struct iovec iov = { .iov_base = r->buf, .iov_len = r->len };

			do
				n = preadv2(fd, &iov, 1, (off_t)r->off, UNCACHED_RWF_DONTCACHE);
			while (n < 0 && errno == EINTR);
		} else {
			do
				n = pread(fd, r->buf, r->len, (off_t)r->off);
			while (n < 0 && errno == EINTR);
		}
		r->data = r->buf;
		break;
	case IO_WRITE:
		if (t->atomic) {
			struct iovec iov = { .iov_base = r->wbuf, .iov_len = r->len };

			do
				n = pwritev2(fd, &iov, 1, (off_t)r->off, RWF_ATOMIC);
			while (n < 0 && errno == EINTR);
			r->data = NULL;
			break;
		}
		do
			n = pwrite(fd, r->wbuf, r->len, (off_t)r->off);
		while (n < 0 && errno == EINTR);
		r->data = NULL;
		break;
	default:
		/* The buffered descriptor: O_DIRECT is about the data path,
		 * a flush is about the file. */
		n = r->datasync ? fdatasync(t->fd) : fsync(t->fd);
		r->data = NULL;
		break;
	}
	r->res = n < 0 ? -errno : n;
	return ENGINE_DONE;
}

const struct engine_ops engine_psync = {
	.name = "psync",
	.help = "pread(2)/pwrite(2) with a private aligned buffer, one request at a time; "
		"fsync(2) or fdatasync(2) to flush (aliases: pread, sync)",
	.flags = ENGINE_F_BUFFERS | ENGINE_F_UNCACHED,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH) | ENGINE_OP(IO_TRIM),
	.queue = psync_queue,
};
