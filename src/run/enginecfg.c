/*
 * enginecfg.c - a job's options as its engine reads them; see enginecfg.h.
 *
 * Engines read struct engine_job and nothing of struct job: what each
 * needs is resolved here once, so an engine's hot path reads the same
 * fields it would have read from the job, one pointer closer.
 */
#include <stddef.h>
#include <sys/mman.h>

#include "run/enginecfg.h"

unsigned enginecfg_ops(const struct job *j)
{
	unsigned ops = 0;

	if (job_reads(j))
		ops |= ENGINE_OP(IO_READ);
	if (job_writes_data(j))
		ops |= ENGINE_OP(IO_WRITE);
	if (job_trims(j))
		ops |= ENGINE_OP(IO_TRIM);
	if (job_writes(j) && job_flushes(j))
		ops |= ENGINE_OP(IO_FLUSH);
	return ops;
}

static int madvise_advice(enum madv_mode m)
{
	switch (m) {
	case ADV_RANDOM:
		return MADV_RANDOM;
	case ADV_SEQUENTIAL:
		return MADV_SEQUENTIAL;
	case ADV_WILLNEED:
		return MADV_WILLNEED;
	case ADV_HUGEPAGE:
		return MADV_HUGEPAGE;
	case ADV_NORMAL:
		break;
	}
	return MADV_NORMAL;
}

void enginecfg_resolve(struct engine_job *ej, const struct job *j)
{
	ej->name = j->name;
	ej->req_max = job_bs_largest(j);
	ej->direct = j->direct;
	ej->uncached = j->uncached;
	ej->atomic = j->atomic;
	ej->writes = job_writes(j);
	ej->flushes = job_flushes(j);
	ej->replay = j->read_iolog != NULL;
	ej->prewarm = j->prewarm;
	ej->madvise = madvise_advice(j->madvise);
	ej->pool = (struct engine_pool_cfg){
		.size = j->pool_size,
		.page = j->pool_page,
		.uring = j->pool_io == POOL_IO_URING,
		.prefetch = j->pool_prefetch,
		.evict_batch = j->pool_evict_batch,
	};
	ej->filename = j->filename;
	ej->directory = j->directory;
	ej->numjobs = j->numjobs;
	ej->nrfiles = j->nrfiles;
}
