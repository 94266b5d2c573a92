/*
 * engine_vmcache.c - reads and writes through a virtual-memory-assisted
 * buffer pool (vmcache.c): the buffer pool as its own designers now build
 * it (Leis et al., SIGMOD 2023), beside mmap and the classic bufpool.
 *
 * The job's targets are laid end to end in one anonymous MAP_NORESERVE
 * region of pool_page pages (pagedev.h numbers them), shared by the job's
 * threads and built in job_setup (filled there when prewarm=1, up to
 * pool_size). A request names bytes inside one page (jobcheck.c refuses a
 * bs that does not divide pool_page), so a read is served in place, as
 * with mmap: the page is latched shared, r->data points at its fixed
 * address, the worker's touch consumes it and release() gives the latch
 * back (a replayed log's request across pages is served page by page,
 * one latch at a time, and a read copied out into the slot's own buffer,
 * as bufpool serves it: pool_span.h). A page not resident is read into its own address by the thread
 * that needs it, with O_DIRECT, through its own I/O (pool_io, as
 * bufpool: a ring of its own with the targets registered, but not the
 * region, which is mostly not there; or pread(2)); a thread that finds it
 * being read waits for that read. When pool_size bytes of pages are
 * resident, the thread that needs room evicts a batch of
 * pool_evict_batch pages chosen by the clock, writing the dirty ones back
 * first and giving the memory back with one process_madvise(MADV_DONTNEED)
 * for the batch (or a madvise per run of consecutive pages where the
 * kernel refuses it).
 *
 * Writes copy the worker's stamped block into the page under its
 * exclusive latch and mark it dirty (a whole-page write reads nothing
 * first); dirty pages go back to the device when evicted, on a flush of
 * their target (fsync=N, fdatasync=N, sync_interval, end_fsync: the
 * target's dirty pages written, then fsync or fdatasync as the job asks)
 * and at the end of a write job (writeback), as bufpool's do.
 *
 * The pool is one address space's: with thread=0 the workers are
 * processes, so jobcheck.c refuses thread=0 with numjobs above one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engines/engine.h"
#include "engines/pagedev.h"
#include "engines/pool_span.h"
#include "engines/vmcache.h"

/* A request slot holding no latch. */
#define HELD_NONE UINT64_MAX
/* The most address space the region may take: the user half of x86-64's
 * 48-bit addresses (128 TiB), less what the process needs besides. */
#define REGION_MAX (1ull << 46)

struct vm_job {
	struct vmcache *pool;
	uint64_t *first;	/* pagedev_layout's: each target's first page */
};

struct vm_thread {
	const struct engine_job *ej;
	struct vmcache *pool;
	const uint64_t *first;
	struct pool_counters *ctr;
	struct vmcache_io io;
	struct pool_reader *rd;	/* where this thread publishes its latches */
	uint64_t *held;		/* per request slot: its latch (vmcache_read's ref) */
	/* A read across pages (a replayed log's): per slot, ej->req_max
	 * bytes it is copied into; NULL when no request spans. */
	uint8_t *span;
	struct pool_span_ops span_ops;
	unsigned shift;		/* log2(pool_page) */
	struct pagedev dev;	/* the thread's I/O (pool_io) */
};

static int vm_read(void *arg, uint64_t pid, uint8_t *page)
{
	struct vm_thread *vt = arg;

	return pagedev_read(&vt->dev, pid, page);
}

static int vm_write(void *arg, uint64_t pid, const uint8_t *page)
{
	struct vm_thread *vt = arg;

	return pagedev_write(&vt->dev, pid, page);
}

/* ---- requests ---------------------------------------------------------- */

/* pool_span's latches: through the state words, one page at a time. */
static int span_get(void *arg, uint64_t pid, bool excl, bool whole, uint8_t **data, uint64_t *ref)
{
	struct vm_thread *vt = arg;

	*ref = pid;
	if (!excl)
		return vmcache_pin(vt->pool, pid, &vt->io, vt->ctr, data);
	return vmcache_get(vt->pool, pid, whole ? VMCACHE_EXCL_NOREAD : VMCACHE_EXCL, &vt->io, vt->ctr,
			   data);
}

static void span_put(void *arg, uint64_t pid, uint64_t ref, bool dirty)
{
	struct vm_thread *vt = arg;

	(void)ref;
	if (dirty)
		vmcache_unlock(vt->pool, pid, true);
	else
		vmcache_unpin(vt->pool, pid);
}

/* A replayed log's request across pages (pool_span.h). */
static int vm_span(struct vm_thread *vt, struct io_req *r, uint64_t pid, uint32_t in_page)
{
	uint8_t *dst = vt->span + (size_t)r->slot * vt->ej->req_max;
	int ret;

	r->data = NULL;
	if (r->op == IO_WRITE) {
		ret = pool_span_write(&vt->span_ops, pid, in_page, r->wbuf, r->len);
	} else if (!vt->span || r->len > vt->ej->req_max) {
		ret = -EINVAL;
	} else {
		ret = pool_span_read(&vt->span_ops, pid, in_page, dst, r->len);
		if (ret == 0)
			r->data = dst;
	}
	r->res = ret < 0 ? ret : (int64_t)r->len;
	return ENGINE_DONE;
}

static int vm_queue(struct engine_thread *et, struct io_req *r)
{
	struct vm_thread *vt = et->priv;
	struct vmcache *vc = vt->pool;
	const uint64_t pid = vt->first[r->target] +
			     ((r->off - et->ej->targets[r->target].base) >> vt->shift);
	const uint32_t in_page = (uint32_t)(r->off & (vc->page - 1));
	uint8_t *page;
	int ret;

	if (__builtin_expect(r->op == IO_READ, 1)) {
		if (__builtin_expect(in_page + r->len > vc->page, 0))
			return vm_span(vt, r, pid, in_page);
		uint64_t ref;

		ret = vmcache_read(vc, vt->rd, r->slot, pid, &vt->io, vt->ctr, &page, &ref);
		if (ret < 0) {
			r->res = ret;
			return ENGINE_DONE;
		}
		/* Latched until release(), after the worker consumed it. */
		vt->held[r->slot] = ref;
		r->data = page + in_page;
		r->res = r->len;
		return ENGINE_DONE;
	}
	r->data = NULL;
	if (r->op == IO_WRITE) {
		if (__builtin_expect(in_page + r->len > vc->page, 0))
			return vm_span(vt, r, pid, in_page);
		ret = vmcache_get(vc, pid, r->len == vc->page ? VMCACHE_EXCL_NOREAD : VMCACHE_EXCL,
				  &vt->io, vt->ctr, &page);
		if (ret < 0) {
			r->res = ret;
			return ENGINE_DONE;
		}
		memcpy(page + in_page, r->wbuf, r->len);
		vmcache_unlock(vc, pid, true);
		r->res = r->len;
		return ENGINE_DONE;
	}
	/* A flush of the target: its dirty pages, whoever wrote them. */
	ret = (int)vmcache_flush_range(vc, vt->first[r->target], vt->first[r->target + 1], &vt->io,
				       vt->ctr);
	if (ret >= 0)
		ret = pagedev_sync(et->ej, r->target, r->datasync);
	r->res = ret < 0 ? ret : (int64_t)r->len;
	return ENGINE_DONE;
}

/*
 * The request after next on its way (engine.h's prefetch): its page's
 * state word and its page's first line, the two loads of a hit, which
 * then find both in cache two requests later, as bufpool's do. The next
 * request's were asked for a request ago, as the one after it then.
 */
static void vm_prefetch(struct engine_thread *et, const struct io_req *next,
			const struct io_req *after)
{
	const struct vm_thread *vt = et->priv;
	const struct io_req *q = after ? after : next;
	const uint64_t pid = vt->first[q->target] +
			     ((q->off - et->ej->targets[q->target].base) >> vt->shift);

	if (pid < vt->pool->npages) {
		__builtin_prefetch(&vt->pool->state[pid]);
		__builtin_prefetch(vmcache_addr(vt->pool, pid));
	}
}

static void vm_release(struct engine_thread *et, struct io_req *r)
{
	struct vm_thread *vt = et->priv;
	uint64_t pid = vt->held[r->slot];

	if (pid != HELD_NONE) {
		vmcache_done(vt->pool, vt->rd, r->slot, pid);
		vt->held[r->slot] = HELD_NONE;
	}
}

/* The end of a write job's thread: every dirty page written back, the
 * other threads' too. */
static int vm_writeback(struct engine_thread *et)
{
	struct vm_thread *vt = et->priv;
	int64_t ret = vmcache_flush_range(vt->pool, 0, vt->pool->npages, &vt->io, vt->ctr);

	return ret < 0 ? (int)ret : 0;
}

/* ---- a thread ------------------------------------------------------------ */

static int vm_init(struct engine_thread *et, struct err *e)
{
	const struct engine_job *ej = et->ej;
	struct vm_job *vj = ej->priv;
	struct vm_thread *vt;
	int ret;

	if (!et->pool)
		return err_set(e, EINVAL, "vmcache: no counters for this thread");
	vt = calloc(1, sizeof(*vt));
	if (!vt)
		return err_set(e, ENOMEM, "vmcache: out of memory");
	vt->held = malloc(sizeof(*vt->held) * ej->depth);
	/* Only a replay's requests may span pages (jobcheck refuses a bs
	 * that does not divide pool_page). */
	if (ej->replay && ej->req_max)
		vt->span = malloc((size_t)ej->depth * ej->req_max);
	if (!vt->held || (ej->replay && ej->req_max && !vt->span)) {
		free(vt->held);
		free(vt->span);
		free(vt);
		return err_set(e, ENOMEM, "vmcache: out of memory");
	}
	for (unsigned i = 0; i < ej->depth; i++)
		vt->held[i] = HELD_NONE;
	vt->ej = ej;
	vt->pool = vj->pool;
	vt->first = vj->first;
	vt->ctr = et->pool;
	vt->rd = vmcache_reader_new(vj->pool);
	vt->shift = vj->pool->page_shift;
	vt->span_ops = (struct pool_span_ops){ .get = span_get, .put = span_put, .arg = vt,
					       .shift = vt->shift };
	vt->io = (struct vmcache_io){ .read = vm_read, .write = vm_write, .arg = vt,
				      .stop = { et->stop[0], et->stop[1] } };
	ret = pagedev_open(&vt->dev, ej, vj->first, vt->shift, NULL, 0, 0, "vmcache", e);
	if (ret < 0) {
		free(vt->held);
		free(vt->span);
		free(vt);
		return ret;
	}
	et->priv = vt;
	return 0;
}

static void vm_exit(struct engine_thread *et)
{
	struct vm_thread *vt = et->priv;

	if (!vt)
		return;
	for (unsigned i = 0; i < vt->ej->depth; i++)
		if (vt->held[i] != HELD_NONE)
			vmcache_done(vt->pool, vt->rd, i, vt->held[i]);
	pagedev_close(&vt->dev);
	free(vt->held);
	free(vt->span);
	free(vt);
	et->priv = NULL;
}

/* ---- the job ------------------------------------------------------------- */

static int vm_prepare(struct engine_job *ej, struct err *e)
{
	const unsigned shift = (unsigned)__builtin_ctzll(ej->pool.page);
	uint64_t pages = 0;

	for (unsigned i = 0; i < ej->ntargets; i++)
		pages += pagedev_region_pages(&ej->targets[i], shift);
	/* The memory: the resident pages and a state word per page. */
	return pagedev_prepare(ej, "vmcache", REGION_MAX >> shift,
			       ej->pool.size + pages * sizeof(uint64_t), e);
}

static int prewarm_write(void *arg, uint64_t pid, const uint8_t *page)
{
	(void)arg, (void)pid, (void)page;
	return -EINVAL;		/* nothing is dirty before the job */
}

static int prewarm_read(void *arg, uint64_t pid, uint8_t *page)
{
	return pagedev_prewarm_read(arg, pid, page);
}

/* Fill the pool with the job's regions, target after target, until they
 * end or the pool is full (nothing is evicted). */
static int prewarm(struct engine_job *ej, struct vm_job *vj, struct err *e)
{
	struct vmcache *vc = vj->pool;
	struct pagedev_prewarm pw;
	struct vmcache_io io = { .read = prewarm_read, .write = prewarm_write, .arg = &pw };
	struct pool_counters c = { 0 };
	int ret = pagedev_prewarm_open(&pw, ej, vj->first, vc->page_shift, e);

	if (ret)
		return ret;
	for (uint64_t pid = 0; pid < vc->npages && c.misses < vc->capacity; pid++) {
		uint8_t *page;

		ret = vmcache_get(vc, pid, VMCACHE_SHARED, &io, &c, &page);
		if (ret < 0) {
			unsigned ti = 0;

			while (ti + 1 < ej->ntargets && vj->first[ti + 1] <= pid)
				ti++;
			err_set(e, -ret, "vmcache: prewarm: reading %s at %llu: %s",
				ej->targets[ti].path,
				(unsigned long long)pagedev_offset(ej, vj->first, ti, pid,
								   vc->page_shift),
				strerror(-ret));
			break;
		}
		vmcache_unpin(vc, pid);
	}
	pagedev_prewarm_close(&pw);
	return ret < 0 ? ret : 0;
}

static void vm_job_teardown(struct engine_job *ej)
{
	struct vm_job *vj = ej->priv;

	if (!vj)
		return;
	vmcache_destroy(vj->pool);
	free(vj->first);
	free(vj);
	ej->priv = NULL;
}

static int vm_job_setup(struct engine_job *ej, struct err *e)
{
	const unsigned shift = (unsigned)__builtin_ctzll(ej->pool.page);
	struct vm_job *vj = calloc(1, sizeof(*vj));
	int ret;

	if (!vj)
		return err_set(e, ENOMEM, "vmcache: out of memory");
	ret = pagedev_layout(ej, shift, &vj->first, e);
	if (ret) {
		free(vj);
		return ret;
	}
	ret = vmcache_create(&vj->pool, vj->first[ej->ntargets], (uint32_t)ej->pool.page,
			     ej->pool.size >> shift, ej->pool.evict_batch, e);
	if (ret) {
		free(vj->first);
		free(vj);
		return ret;
	}
	ej->priv = vj;
	/* A job that never writes locks pages only to evict them: its
	 * hits publish with a plain store (pool_pin.h). Where membarrier(2)
	 * is refused they stay fenced, as correct and a little slower. */
	if (!ej->writes)
		(void)pool_pin_light(&vj->pool->pins);
	if (ej->prewarm) {
		ret = prewarm(ej, vj, e);
		if (ret) {
			vm_job_teardown(ej);
			return ret;
		}
	}
	return 0;
}

const struct engine_ops engine_vmcache = {
	.name = "vmcache",
	.help = "a virtual-memory-assisted buffer pool (Leis et al., SIGMOD 2023) shared by the "
		"job's threads: the targets at fixed addresses in one MAP_NORESERVE region, "
		"pool_size of them resident, misses read in place with O_DIRECT (pool_io), "
		"eviction by clock in batches of pool_evict_batch released with MADV_DONTNEED",
	.flags = ENGINE_F_POOL | ENGINE_F_REGION,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH),
	.prepare = vm_prepare,
	.job_setup = vm_job_setup,
	.job_teardown = vm_job_teardown,
	.init = vm_init,
	.exit = vm_exit,
	.queue = vm_queue,
	.release = vm_release,
	.prefetch = vm_prefetch,
	.writeback = vm_writeback,
};
