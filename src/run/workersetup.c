/*
 * workersetup.c - a worker's set-up in its own thread (request slots,
 * buffers, the engine's thread state, a write job's blocks) and a job's
 * layout of workers and counters; the loops are worker.c's.
 */
#include "run/worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "workload/blockdata.h"
#include "lib/rng.h"
#include "run/prefetch.h"

/* Slot buffers are page-aligned so O_DIRECT and registered buffers
 * accept them. */
#define BUF_ALIGN 4096

/* ---- set-up in the worker's thread ----------------------------------- */

/*
 * A write job's buffers and state: each slot's block, filled once with
 * random data (different in every slot, worker and run: the job's seed
 * is fresh unless randseed is set) and stamped per write, so no two
 * writes carry the same bytes; the read-back buffer for verify; the mix,
 * placement and flush policy (writes.h).
 */
static int setup_writes(struct worker *w, struct err *e)
{
	const struct work *wk = w->wk;
	const struct job *j = wk->job;
	unsigned depth = wk->ej.depth;
	size_t bytes = (size_t)depth * wk->bs_stride;
	struct gen_region *regions;
	struct writes_config wc = {
		.wj = &wk->wj,
		.worker = w->id,
		.nworkers = w->nshare,
		.seed = wk->seed,
		.interval = latclock_ticks_of(j->sync_interval_ns),
	};
	/* A replay's writes are as long as its log says (req_max). */
	uint64_t fill = job_bs_max(j, JOB_DIR_WRITE) > wk->ej.req_max ? job_bs_max(j, JOB_DIR_WRITE)
								      : wk->ej.req_max;
	int ret;

	w->wbufs = aligned_alloc(BUF_ALIGN, bytes);
	if (!w->wbufs)
		return err_set(e, ENOMEM, "allocating %zu bytes of write buffers", bytes);
	for (unsigned i = 0; i < depth; i++) {
		uint64_t seed = wk->seed ^ ((uint64_t)w->id << 32) ^ ((uint64_t)i << 16) ^ 0x5772697465ull;

		w->et.reqs[i].wbuf = w->wbufs + (size_t)i * wk->bs_stride;
		blockdata_init(w->et.reqs[i].wbuf, (uint32_t)fill, seed);
	}
	if (job_verifies(j)) {
		w->vbuf = aligned_alloc(BUF_ALIGN, wk->bs_stride);
		if (!w->vbuf)
			return err_set(e, ENOMEM, "allocating the verify buffer");
	}
	regions = calloc(w->tcount ? w->tcount : 1, sizeof(*regions));
	if (!regions)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned i = 0; i < w->tcount; i++) {
		regions[i].base = wk->ej.targets[w->tfirst + i].base;
		regions[i].len = wk->ej.targets[w->tfirst + i].len;
	}
	if (content_wanted(&wk->wj)) {
		uint64_t blocks = 0;

		for (unsigned i = 0; i < w->tcount; i++)
			blocks += regions[i].len / job_bs_max(j, JOB_DIR_WRITE);
		content_init(&w->content, &wk->wj, w->id, wk->seed, blocks);
	}
	ret = writes_setup(&w->wr, &wc, regions, w->tcount, e);
	free(regions);
	return ret;
}

/* Workers that share their targets and read through descriptors (psync,
 * io_uring, libaio) read through open files of their own (target.h). */
static void own_files(struct worker *w)
{
	if (w->nshare > 1 && !(w->wk->ops->flags & (ENGINE_F_NO_TARGET | ENGINE_F_MAPPED | ENGINE_F_POOL)))
		w->et.targets = targets_reopen(w->wk->ej.targets, w->wk->ej.ntargets, w->tfirst, w->tcount);
}

int worker_setup(struct worker *w, struct err *e)
{
	const struct work *wk = w->wk;
	const struct job *j = wk->job;
	unsigned depth = wk->ej.depth;
	struct io_req *reqs;
	int ret;

	reqs = calloc(depth, sizeof(*reqs));
	if (!reqs)
		return err_set(e, ENOMEM, "allocating %u request slots", depth);
	w->et.ej = &wk->ej;
	w->et.reqs = reqs;
	pace_init(&w->pace, j, w->id, wk->seed);
	switch (j->continue_on_error) {
	case COE_READ:
		w->coe = ENGINE_OP(IO_READ);
		break;
	case COE_WRITE:
		w->coe = ENGINE_OP(IO_WRITE);
		break;
	case COE_IO:
		w->coe = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE);
		break;
	case COE_ALL:
		w->coe = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH);
		break;
	default:
		w->coe = 0;	/* none, or verify (the job's result: run.c) */
		break;
	}
	pace_flow_init(&w->pace, j, wk->flow);
	if (wk->prio.on) {
		uint64_t x = wk->seed ^ ((uint64_t)w->id << 32) ^ 0x70726f69ull;

		w->prio_rng[0] = splitmix64(&x);
		w->prio_rng[1] = splitmix64(&x);
	}
	/* A paced worker sleeps to its schedule: the default 50 us timer
	 * slack would be a tenth of a 2000 IOPS gap. */
	if (w->pace.on)
		prctl(PR_SET_TIMERSLACK, 1000ul, 0, 0, 0);
	w->et.pool = &w->st->pool;
	w->et.stop[0] = w->wk->stop;
	w->et.stop[1] = w->wk->job_stop;
	own_files(w);
	if (wk->ops->flags & ENGINE_F_BUFFERS) {
		size_t bytes = (size_t)depth * wk->bs_stride;

		w->bufs = aligned_alloc(BUF_ALIGN, bytes);
		if (!w->bufs)
			return err_set(e, ENOMEM, "allocating %zu bytes of I/O buffers", bytes);
		/* Fault the buffers in now, not inside the first timed reads. */
		memset(w->bufs, 0, bytes);
	}
	for (unsigned i = 0; i < depth; i++) {
		reqs[i].slot = (uint16_t)i;
		reqs[i].op = IO_READ;
		reqs[i].buf = w->bufs ? w->bufs + (size_t)i * wk->bs_stride : NULL;
	}
	if (j->touch == TOUCH_COPY) {
		w->copybuf = aligned_alloc(BUF_ALIGN, wk->bs_stride);
		if (!w->copybuf)
			return err_set(e, ENOMEM, "allocating the copy buffer");
		memset(w->copybuf, 0, wk->bs_stride);
	}
	ret = record_setup(&w->rec, j, w->id, wk->replay, wk->ej.targets, w->tfirst, w->tcount,
			   wk->ops->flags & ENGINE_F_NO_TARGET, wk->stop, wk->job_stop, e);
	if (ret)
		return ret;
	/* serialize_overlap: only a write job's asynchronous loop can have
	 * two requests of the thread in flight that race; a replay keeps
	 * its log's order (fio, too, leaves read_iolog alone) */
	if (j->serialize_overlap && job_writes(j) && (wk->ops->flags & ENGINE_F_ASYNC) &&
	    !j->read_iolog) {
		w->sermap = calloc(depth, 1);
		if (!w->sermap)
			return err_set(e, ENOMEM, "out of memory");
	}
	if (job_writes(j)) {
		ret = setup_writes(w, e);
		if (ret)
			return ret;
	}
	return worker_verify_setup(w, e);
}

int worker_prefetch_start(struct worker *w, struct err *e)
{
	const struct work *wk = w->wk;
	const struct job_slots *sl = &wk->slots;
	int ret;

	ret = prefetch_start(&w->prefetch, wk->job, wk->ej.targets, w->st, w->tcount,
			     sl->nprefetch ? &wk->stats[sl->prefetch + w->id] : NULL, e);
	if (ret)
		return ret;
	for (unsigned i = 0; i < w->tcount; i++) {
		const struct target *t = &wk->ej.targets[w->tfirst + i];

		prefetch_key_set(w->prefetch, i, w->tfirst + i, t->base, t->base + t->len);
	}
	return 0;
}

void worker_teardown(struct worker *w)
{
	targets_reopen_free((struct target *)w->et.targets, w->tfirst, w->tcount);
	w->et.targets = NULL;
	record_free(&w->rec);
	worker_verify_free(w);
	free(w->sermap);
	w->sermap = NULL;
	writes_free(&w->wr);
	free(w->vbuf);
	free(w->wbufs);
	w->vbuf = NULL;
	w->wbufs = NULL;
	free(w->copybuf);
	free(w->bufs);
	free(w->et.reqs);
	w->copybuf = NULL;
	w->bufs = NULL;
	w->et.reqs = NULL;
}

/* ---- a job's layout -------------------------------------------------- */

/* calloc aligns to 16 bytes only: the array must start on a line for
 * struct worker's own alignment to keep workers apart (worker.h). */
struct worker *worker_array_new(unsigned n)
{
	size_t bytes = (size_t)(n ? n : 1) * sizeof(struct worker);
	struct worker *w = aligned_alloc(CACHELINE, bytes);

	if (w)
		memset(w, 0, bytes);
	return w;
}

void worker_slots(const struct job *job, struct job_slots *s)
{
	unsigned n = 0;

	s->workers = job->numjobs;
	n += s->workers;
	s->probe = n;
	s->nprobe = job->cpu_probe ? 1 : 0;
	n += s->nprobe;
	s->offload = n;
	s->noffload = job->loop ? job->offload : 0;
	n += s->noffload;
	s->prefetch = n;
	s->nprefetch = prefetch_helpers(job) * job->numjobs;
	n += s->nprefetch;
	s->total = n;
}

/*
 * iodepth_batch_submit, resolved for @depth request slots. auto: with
 * direct=1 each request goes to the kernel as soon as its slot is free,
 * as fio does by default; a device fed one request at a time keeps its
 * queue evenly full, and on the virtio disk this was worth 7-10 % of
 * IOPS against whole batches (tests/bench/engines-async.md). Buffered
 * reads served from the page cache complete inside the submit call, so
 * there the whole batch goes in one call: one system call per batch,
 * not per read.
 */
unsigned worker_batch_resolve(const struct job *job, unsigned depth)
{
	unsigned b = job->iodepth_batch;

	if (b == IODEPTH_BATCH_AUTO)
		b = job->direct ? 1 : 0;
	return b == 0 || b > depth ? depth : b;
}
