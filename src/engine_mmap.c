/*
 * engine_mmap.c - reads through one shared, read-only MAP_SHARED mapping
 * per target per job, as a database's worker threads would share one
 * mapping of their data file.
 *
 * A request does no system call: it names bs bytes of the mapping, and
 * the worker's touch consumer reads them. Any page fault, and with it
 * any I/O, happens inside that access, on the worker's own thread. A
 * SIGBUS there (file truncated, device error) is caught by the worker
 * (worker.c, sigbus.c) and reported with the target and offset.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "engine.h"

static const int madv_flags[] = {
	[ADV_NORMAL] = MADV_NORMAL,
	[ADV_RANDOM] = MADV_RANDOM,
	[ADV_SEQUENTIAL] = MADV_SEQUENTIAL,
	[ADV_WILLNEED] = MADV_WILLNEED,
	[ADV_HUGEPAGE] = MADV_HUGEPAGE,
};

static const char *const madv_names[] = {
	[ADV_NORMAL] = "normal",
	[ADV_RANDOM] = "random",
	[ADV_SEQUENTIAL] = "sequential",
	[ADV_WILLNEED] = "willneed",
	[ADV_HUGEPAGE] = "hugepage",
};

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
	const struct job *j = jr->job;

	for (unsigned i = 0; i < jr->ntargets; i++) {
		struct target *t = &jr->targets[i];
		/* Map from 0 so the advice range starts page-aligned whatever
		 * offset= is; only [base, base+len) is ever accessed. */
		size_t len = (size_t)(t->base + t->len);
		void *p;

		p = mmap(NULL, len, PROT_READ, MAP_SHARED, t->fd, 0);
		if (p == MAP_FAILED) {
			err_set(e, errno, "mmap %s (%zu bytes): %s%s", t->path, len, strerror(errno),
				errno == ENOMEM ? " (is the address space limited? see ulimit -v)" : "");
			goto fail;
		}
		t->map = p;
		t->map_len = len;
		if (madvise(p, len, madv_flags[j->madvise]) < 0) {
			err_set(e, errno, "madvise(%s) on %s: %s", madv_names[j->madvise],
				t->path, strerror(errno));
			goto fail;
		}
	}
	return 0;
fail:
	mmap_job_teardown(jr);
	return -e->code;
}

static int mmap_queue(struct engine_thread *et, struct io_req *r)
{
	const struct target *t = &et->ej->targets[r->target];

	r->data = (const uint8_t *)t->map + r->off;
	r->res = r->len;
	return ENGINE_DONE;
}

const struct engine_ops engine_mmap = {
	.name = "mmap",
	.help = "loads from a shared read-only MAP_SHARED mapping; faults (and I/O) happen inside the access",
	.flags = ENGINE_F_NO_DIRECT | ENGINE_F_MAPPED,
	.ops = ENGINE_OP(IO_READ),
	.job_setup = mmap_job_setup,
	.job_teardown = mmap_job_teardown,
	.queue = mmap_queue,
};
