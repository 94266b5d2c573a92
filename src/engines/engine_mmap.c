/*
 * engine_mmap.c - reads and writes through one shared MAP_SHARED mapping
 * per target per job, as a database's worker threads would share one
 * mapping of their data file. Read jobs map it PROT_READ; only a write
 * job maps it PROT_READ|PROT_WRITE (its targets are open O_RDWR).
 *
 * A read does no system call: it names bs bytes of the mapping, and the
 * worker's touch consumer reads them. A write is a store: the stamped
 * block copied into the mapping. Any page fault, and with it any I/O,
 * happens inside that access, on the worker's own thread. A SIGBUS there
 * (file truncated, device error) is caught by the worker (worker.c,
 * sigbus.c) and reported with the target and offset.
 *
 * A store dirties pages the kernel writes back whenever it chooses
 * (the CIDR 2022 paper's section 3.1): msync(MS_SYNC) is the only control
 * a program has. So each thread keeps, per target, the range it stored
 * into since its last flush, and a flush is msync(MS_SYNC) of that range
 * rounded out to pages (a no-op when the thread stored nothing there).
 * There is no data-only msync: fdatasync=N is msync too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engines/engine.h"

/* The madvise= option's name of an advice, for messages. */
static const char *madv_name(int advice)
{
	switch (advice) {
	case MADV_RANDOM:
		return "random";
	case MADV_SEQUENTIAL:
		return "sequential";
	case MADV_WILLNEED:
		return "willneed";
	case MADV_HUGEPAGE:
		return "hugepage";
	default:
		return "normal";
	}
}

static void mmap_job_teardown(struct engine_job *jr)
{
	for (unsigned i = 0; i < jr->ntargets; i++) {
		struct target *t = &jr->targets[i];

		if (t->map)
			munmap(t->map, t->map_len);
		t->map = NULL;
		t->map_len = 0;
	}
}

static int mmap_job_setup(struct engine_job *jr, struct err *e)
{
	for (unsigned i = 0; i < jr->ntargets; i++) {
		struct target *t = &jr->targets[i];
		/* Map from 0 so the advice range starts page-aligned whatever
		 * offset= is; only [base, base+len) is ever accessed. */
		size_t len = (size_t)(t->base + t->len);
		void *p;

		p = mmap(NULL, len, jr->writes ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
			 t->fd, 0);
		if (p == MAP_FAILED) {
			err_set(e, errno, "mmap %s (%zu bytes): %s%s", t->path, len, strerror(errno),
				errno == ENOMEM ? " (is the address space limited? see ulimit -v)" : "");
			goto fail;
		}
		t->map = p;
		t->map_len = len;
		if (madvise(p, len, jr->madvise) < 0) {
			err_set(e, errno, "madvise(%s) on %s: %s", madv_name(jr->madvise),
				t->path, strerror(errno));
			goto fail;
		}
	}
	return 0;
fail:
	mmap_job_teardown(jr);
	return -e->code;
}

/* A thread's stores since its last flush, per target: [lo, hi). */
struct dirty_range {
	uint64_t lo, hi;
};

static int mmap_init(struct engine_thread *et, struct err *e)
{
	const struct engine_job *ej = et->ej;
	struct dirty_range *d;

	if (!ej->writes)
		return 0;
	d = calloc(ej->ntargets ? ej->ntargets : 1, sizeof(*d));
	if (!d)
		return err_set(e, ENOMEM, "mmap: out of memory");
	for (unsigned i = 0; i < ej->ntargets; i++)
		d[i].lo = UINT64_MAX;
	et->priv = d;
	return 0;
}

static void mmap_exit(struct engine_thread *et)
{
	free(et->priv);
	et->priv = NULL;
}

static int mmap_flush(struct engine_thread *et, struct io_req *r)
{
	const struct target *t = &et->ej->targets[r->target];
	struct dirty_range *d = &((struct dirty_range *)et->priv)[r->target];
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo, hi;

	r->data = NULL;
	r->res = 0;
	if (d->lo >= d->hi)
		return ENGINE_DONE;	/* nothing stored since the last flush */
	lo = d->lo / page * page;
	hi = (d->hi + page - 1) / page * page;
	if (hi > t->map_len)
		hi = t->map_len;	/* the last page of the mapping may be partial */
	if (msync((uint8_t *)t->map + lo, hi - lo, MS_SYNC) < 0)
		r->res = -errno;
	d->lo = UINT64_MAX;
	d->hi = 0;
	return ENGINE_DONE;
}

static int mmap_queue(struct engine_thread *et, struct io_req *r)
{
	const struct target *t = &et->ej->targets[r->target];

	if (r->op == IO_READ) {
		r->data = (const uint8_t *)t->map + r->off;
		r->res = r->len;
		return ENGINE_DONE;
	}
	if (r->op == IO_WRITE) {
		struct dirty_range *d = &((struct dirty_range *)et->priv)[r->target];

		memcpy((uint8_t *)t->map + r->off, r->wbuf, r->len);
		if (r->off < d->lo)
			d->lo = r->off;
		if (r->off + r->len > d->hi)
			d->hi = r->off + r->len;
		r->data = NULL;
		r->res = r->len;
		return ENGINE_DONE;
	}
	/* A trim goes to the file (the hole MADV_REMOVE would make through
	 * the mapping); the kernel unmaps the range's pages with it, so
	 * later loads read zeros. A device's BLKDISCARD drops its cache. */
	if (r->op == IO_TRIM)
		return engine_trim(t, r);
	return mmap_flush(et, r);
}

const struct engine_ops engine_mmap = {
	.name = "mmap",
	.help = "loads from and stores into a shared MAP_SHARED mapping; faults (and I/O) happen "
		"inside the access; msync(MS_SYNC) of the range written to flush",
	.flags = ENGINE_F_NO_DIRECT | ENGINE_F_MAPPED,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH) | ENGINE_OP(IO_TRIM),
	.job_setup = mmap_job_setup,
	.job_teardown = mmap_job_teardown,
	.init = mmap_init,
	.exit = mmap_exit,
	.queue = mmap_queue,
};
