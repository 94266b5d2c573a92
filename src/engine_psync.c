/*
 * engine_psync.c - pread(2) into the worker's aligned buffer; O_DIRECT
 * when direct=1. The simplest engine and the baseline for every other.
 */
#include <errno.h>
#include <unistd.h>

#include "engine.h"

static int psync_queue(struct engine_thread *et, struct io_req *r)
{
	const struct target *t = &et->ej->targets[r->target];
	int fd = et->ej->job->direct ? t->fd_direct : t->fd;
	ssize_t n;

	do
		n = pread(fd, r->buf, r->len, (off_t)r->off);
	while (n < 0 && errno == EINTR);
	r->res = n < 0 ? -errno : n;
	r->data = r->buf;
	return ENGINE_DONE;
}

const struct engine_ops engine_psync = {
	.name = "psync",
	.help = "pread(2) into a private aligned buffer, one request at a time (aliases: pread, sync)",
	.flags = ENGINE_F_BUFFERS,
	.ops = ENGINE_OP(IO_READ),
	.queue = psync_queue,
};
