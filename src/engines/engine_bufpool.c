/*
 * engine_bufpool.c - reads and writes through a buffer pool of the job's
 * own (bufpool.c), the other answer to "mmap or a buffer pool?".
 *
 * The job's threads share one pool of pool_size bytes of pool_page
 * frames, built in job_setup (and filled there when prewarm=1). A
 * request names bytes inside one pool page (jobfile.c refuses a bs that
 * does not divide pool_page), so a read is served in place: the page is
 * pinned, r->data points into its frame (no copy, as with mmap), the
 * worker's touch consumes it and release() unpins it (a replayed log's
 * request may span pages: each is pinned in turn and copied out, or
 * latched in turn and copied in, as vmcache does it: pool_span.h). A page
 * missing from the pool is read by the thread that misses it, with
 * O_DIRECT, through its own I/O (pagedev.c, as vmcache's):
 * pool_io=io_uring, a ring of its own with the targets and the frames
 * registered (one read in flight, waited for at once), or pool_io=psync,
 * pread(2). A thread that finds the page being read by another waits
 * for that read.
 *
 * Writes copy the worker's stamped block (r->wbuf) into the frame under
 * the page's exclusive latch and mark it dirty (a whole-page write reads
 * nothing first). Dirty frames go back to the device, with O_DIRECT
 * through the same I/O, when the clock evicts them; on a flush of a
 * target (fsync=N, fdatasync=N, sync_interval, end_fsync), which writes
 * every dirty frame of that target and then calls fsync or fdatasync on
 * it, as the job asks; and at the end of a write job (writeback), so the
 * file holds every write when the job is over. A page is written back up
 * to the end of the job's region, rounded up to the logical block size
 * O_DIRECT needs.
 *
 * Read-ahead (pool_prefetch=N, read jobs, pool_io=io_uring): after each
 * read the thread keeps the N pages after it requested through its ring,
 * each into a frame outside the table (bufpool.h), and puts a page in the
 * pool when its completion is reaped: before each request, and in any
 * wait of its own ring. A request for a page the thread has in flight
 * waits for that read; nobody else ever waits for one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "engines/bufpool.h"
#include "engines/engine.h"
#include "engines/pagedev.h"
#include "engines/pool_span.h"

/*
 * The pool's keys are pagedev's page numbers of the job's regions
 * (target t's page p, counted from its region's start, which offset=
 * puts on a pool_page boundary, is key first[t] + p); bp_prepare checks
 * that the total fits in a key.
 */
struct bp_job {
	struct bufpool *pool;
	uint64_t *first;	/* pagedev_layout's */
};

/* A page read ahead, in flight. */
struct pf_slot {
	uint32_t key;
	uint32_t frame;
	bool busy;
};

/* user_data of a page read ahead: its slot + 1 (pagedev's own request
 * is 0). */

struct bp_thread {
	const struct engine_job *ej;
	struct bufpool *pool;
	const uint64_t *first;		/* bp_job's */
	struct pool_counters *ctr;
	struct bufpool_io io;
	struct pool_reader *rd;	/* where this thread publishes its pins */
	/* bp_prefetch's guesses: the entry that held page guess_key[i]
	 * when it was hinted (BUFPOOL_NONE: none), [0] for the request
	 * queued next, [1] for the one after. */
	uint32_t guess_key[2], guess[2];
	uint32_t *held;			/* per request slot: the page it pinned */
	/* A read across pages (a replayed log's): per slot, ej->req_max
	 * bytes it is copied into; NULL when no request spans. */
	uint8_t *span;
	struct pool_span_ops span_ops;
	unsigned shift;			/* log2(pool_page) */
	struct pagedev dev;		/* the thread's I/O (pool_io), its ring shared by pf */
	/* pool_prefetch: pf slots, pf_n of them in flight; keys below
	 * pf_next (up to the end of target pf_ti's pages) were looked at. */
	unsigned pf, pf_n;
	struct pf_slot *pf_slot;
	uint64_t pf_next;
	unsigned pf_ti;
};

/* ---- the device side ---------------------------------------------------- */

static int bp_read(void *arg, uint32_t key, uint8_t *frame)
{
	struct bp_thread *bt = arg;

	return pagedev_read(&bt->dev, key, frame);
}

static int bp_write(void *arg, uint32_t key, const uint8_t *frame)
{
	struct bp_thread *bt = arg;

	return pagedev_write(&bt->dev, key, frame);
}

/* ---- read-ahead ---------------------------------------------------------- */

/* A page read ahead has come back: into the pool when whole (a short
 * read may only end the file), else its frame goes back. */
static void pf_complete(struct bp_thread *bt, struct io_uring_cqe *cqe)
{
	struct pf_slot *s = &bt->pf_slot[cqe->user_data - 1];
	int res = cqe->res;

	io_uring_cqe_seen(&bt->dev.ring, cqe);
	if (pagedev_read_done(&bt->dev, s->key, bufpool_frame(bt->pool, s->frame), res) == 0) {
		bufpool_insert(bt->pool, s->key, s->frame, bt->ctr);
	} else {
		bufpool_frame_give_back(bt->pool, s->frame);
	}
	s->busy = false;
	bt->pf_n--;
}

static struct pf_slot *pf_find(struct bp_thread *bt, uint32_t key)
{
	for (unsigned i = 0; i < bt->pf; i++)
		if (bt->pf_slot[i].busy && bt->pf_slot[i].key == key)
			return &bt->pf_slot[i];
	return NULL;
}

/* pagedev's callback for a completion on the ring that is not its own. */
static void pf_other(void *arg, struct io_uring_cqe *cqe)
{
	pf_complete(arg, cqe);
}

/* Before a request for @key: what came back goes into the pool, and a
 * read ahead of @key itself is waited for. */
static void pf_before(struct bp_thread *bt, uint32_t key)
{
	struct io_uring_cqe *cqe;
	struct pf_slot *s;

	while (bt->pf_n && io_uring_peek_cqe(&bt->dev.ring, &cqe) == 0)
		pf_complete(bt, cqe);
	s = pf_find(bt, key);
	while (s && s->busy) {
		if (io_uring_wait_cqe(&bt->dev.ring, &cqe) < 0)
			continue;	/* EINTR */
		pf_complete(bt, cqe);
	}
}

/* Every read ahead back (the thread's end). */
static void pf_drain(struct bp_thread *bt)
{
	struct io_uring_cqe *cqe;

	while (bt->pf_n) {
		int ret = io_uring_wait_cqe(&bt->dev.ring, &cqe);

		if (ret == -EINTR)
			continue;
		if (ret < 0)
			break;
		pf_complete(bt, cqe);
	}
}

/* After a read of @key: the pages after it, up to pool_prefetch of them
 * and the end of its target's region, requested unless in the pool or in
 * flight already. */
static void pf_issue(struct bp_thread *bt, uint32_t key)
{
	const unsigned ti = pagedev_target(&bt->dev, key);
	const uint64_t lim64 = (uint64_t)key + 1 + bt->pf;
	const uint64_t lim = lim64 < bt->first[ti + 1] ? lim64 : bt->first[ti + 1];
	uint64_t k = (uint64_t)key + 1;
	unsigned queued = 0;

	/* Keys up to pf_next were looked at after an earlier request. */
	if (bt->pf_ti == ti && bt->pf_next > k && bt->pf_next <= lim)
		k = bt->pf_next;
	for (; k < lim && bt->pf_n < bt->pf; k++) {
		struct pf_slot *s = NULL;
		uint32_t f;

		if (bufpool_lookup(bt->pool, (uint32_t)k) != BUFPOOL_NONE || pf_find(bt, (uint32_t)k))
			continue;
		for (unsigned i = 0; i < bt->pf && !s; i++)
			if (!bt->pf_slot[i].busy)
				s = &bt->pf_slot[i];
		if (!s || bufpool_frame_take(bt->pool, &bt->io, bt->ctr, &f) < 0)
			break;
		if (pagedev_queue_read(&bt->dev, k, bufpool_frame(bt->pool, f),
				       (uint64_t)(s - bt->pf_slot) + 1) < 0) {
			bufpool_frame_give_back(bt->pool, f);
			break;
		}
		*s = (struct pf_slot){ .key = (uint32_t)k, .frame = f, .busy = true };
		bt->pf_n++;
		queued++;
	}
	bt->pf_next = k;
	bt->pf_ti = ti;
	if (queued)
		io_uring_submit(&bt->dev.ring);
}

/* ---- requests ---------------------------------------------------------- */

/* A flush of target @ti: its dirty frames written back, whoever wrote
 * them, then the target made durable (fdatasync or fsync, as the request
 * says, as psync does). */
static int bp_flush(struct bp_thread *bt, unsigned ti, bool datasync)
{
	int ret = bufpool_flush_keys(bt->pool, (uint32_t)bt->first[ti], (uint32_t)bt->first[ti + 1],
				     &bt->io, bt->ctr);

	return ret < 0 ? ret : pagedev_sync(bt->ej, ti, datasync);
}

/* pool_span's latches: through the latch words, one page at a time; a
 * page read is one a read ahead may follow, as a one-page read's is. */
static int span_get(void *arg, uint64_t key, bool excl, bool whole, uint8_t **data, uint64_t *ref)
{
	struct bp_thread *bt = arg;
	uint32_t r;
	int ret;

	if (!excl && bt->pf)
		pf_before(bt, (uint32_t)key);
	ret = bufpool_get(bt->pool, (uint32_t)key,
			  !excl ? BUFPOOL_SHARED : whole ? BUFPOOL_EXCL_NOREAD : BUFPOOL_EXCL, &bt->io,
			  bt->ctr, &r, data);
	*ref = r;
	return ret < 0 ? ret : 0;
}

static void span_put(void *arg, uint64_t key, uint64_t ref, bool dirty)
{
	struct bp_thread *bt = arg;

	if (dirty) {
		bufpool_unlock(bt->pool, (uint32_t)ref, true);
		return;
	}
	bufpool_unpin(bt->pool, (uint32_t)ref);
	if (bt->pf)
		pf_issue(bt, (uint32_t)key);
}

/* A replayed log's request across pages (pool_span.h). */
static int bp_span(struct bp_thread *bt, struct io_req *r, uint32_t key, uint32_t in_page)
{
	uint8_t *dst = bt->span + (size_t)r->slot * bt->ej->req_max;
	int ret;

	r->data = NULL;
	if (r->op == IO_WRITE) {
		ret = pool_span_write(&bt->span_ops, key, in_page, r->wbuf, r->len);
	} else if (!bt->span || r->len > bt->ej->req_max) {
		ret = -EINVAL;
	} else {
		ret = pool_span_read(&bt->span_ops, key, in_page, dst, r->len);
		if (ret == 0)
			r->data = dst;
	}
	r->res = ret < 0 ? ret : (int64_t)r->len;
	return ENGINE_DONE;
}

/* The key of the page holding @r's first byte. */
static inline uint32_t bp_key(const struct bp_thread *bt, const struct io_req *r)
{
	return (uint32_t)(bt->first[r->target] +
			  ((r->off - bt->ej->targets[r->target].base) >> bt->shift));
}

static int bp_queue(struct engine_thread *et, struct io_req *r)
{
	struct bp_thread *bt = et->priv;
	struct bufpool *bp = bt->pool;
	const uint32_t key = bp_key(bt, r);
	const uint32_t in_page = (uint32_t)(r->off & (bp->page - 1));
	uint32_t ref;
	uint8_t *page;
	int ret;

	if (__builtin_expect(r->op == IO_READ, 1)) {
		if (__builtin_expect(in_page + r->len > bp->page, 0))
			return bp_span(bt, r, key, in_page);
		if (bt->pf)
			pf_before(bt, key);
		ret = bufpool_pin_guess(bp, bt->rd, r->slot, key,
					bt->guess_key[0] == key ? bt->guess[0] : BUFPOOL_NONE, &bt->io,
					bt->ctr, &ref, &page);
		if (ret < 0) {
			r->res = ret;
			return ENGINE_DONE;
		}
		if (bt->pf)
			pf_issue(bt, key);
		/* Pinned until release(), after the worker consumed it. */
		bt->held[r->slot] = ref;
		r->data = page + in_page;
		r->res = r->len;
		return ENGINE_DONE;
	}
	if (r->op == IO_WRITE) {
		enum bufpool_mode mode = r->len == bp->page ? BUFPOOL_EXCL_NOREAD : BUFPOOL_EXCL;

		if (__builtin_expect(in_page + r->len > bp->page, 0))
			return bp_span(bt, r, key, in_page);

		ret = bufpool_get(bp, key, mode, &bt->io, bt->ctr, &ref, &page);
		if (ret < 0) {
			r->res = ret;
			return ENGINE_DONE;
		}
		memcpy(page + in_page, r->wbuf, r->len);
		bufpool_unlock(bp, ref, true);
		r->data = NULL;
		r->res = r->len;
		return ENGINE_DONE;
	}
	ret = bp_flush(bt, r->target, r->datasync);
	r->data = NULL;
	r->res = ret < 0 ? ret : (int64_t)r->len;
	return ENGINE_DONE;
}

/*
 * The next requests' lines on their way (engine.h's prefetch): a hit is
 * a chain of misses (the bucket's line, then the frame's), and a warm
 * random read is nothing but hits, so each request would wait for its
 * chain alone. Told two requests ahead, the one after next gets its
 * bucket's line asked for, and the next one, whose bucket line was
 * asked for a request ago, its page's: each hit then finds both in
 * cache. The entry found for the next one is kept as a guess, so that
 * its pin need not search for it again (bufpool_pin_guess). A read
 * across pages (a replay's) only warms its first page.
 */
static void bp_prefetch(struct engine_thread *et, const struct io_req *next,
			const struct io_req *after)
{
	struct bp_thread *bt = et->priv;

	if (after)
		bufpool_prefetch_bucket(bt->pool, bp_key(bt, after));
	/* The hint comes before the queue() of the request ahead of
	 * @next: that one's guess was made a hint ago. */
	bt->guess_key[0] = bt->guess_key[1];
	bt->guess[0] = bt->guess[1];
	bt->guess_key[1] = bp_key(bt, next);
	bt->guess[1] = bufpool_prefetch_page(bt->pool, bt->guess_key[1]);
}

static void bp_release(struct engine_thread *et, struct io_req *r)
{
	struct bp_thread *bt = et->priv;
	uint32_t ref = bt->held[r->slot];

	if (ref != BUFPOOL_NONE) {
		bufpool_release(bt->pool, bt->rd, r->slot, ref);
		bt->held[r->slot] = BUFPOOL_NONE;
	}
}

/* The end of a write job's thread: every dirty frame written back, the
 * other threads' too (a page another thread is changing is waited for). */
static int bp_writeback(struct engine_thread *et)
{
	struct bp_thread *bt = et->priv;
	int ret = bufpool_flush(bt->pool, &bt->io, bt->ctr);

	return ret < 0 ? ret : 0;
}

/* ---- a thread: its counters, slots and I/O ----------------------------- */

static void bt_free(struct bp_thread *bt)
{
	free(bt->pf_slot);
	free(bt->span);
	free(bt->held);
	free(bt);
}

static int bp_init(struct engine_thread *et, struct err *e)
{
	const struct engine_job *ej = et->ej;
	struct bp_job *pj = ej->priv;
	struct bp_thread *bt;
	int ret;

	if (!et->pool)
		return err_set(e, EINVAL, "bufpool: no counters for this thread");
	bt = calloc(1, sizeof(*bt));
	if (!bt)
		return err_set(e, ENOMEM, "bufpool: out of memory");
	bt->held = malloc(sizeof(*bt->held) * ej->depth);
	/* Only a replay's requests may span pages (jobcheck refuses a bs
	 * that does not divide pool_page). */
	if (ej->replay && ej->req_max)
		bt->span = malloc((size_t)ej->depth * ej->req_max);
	/* jobcheck.c allows read-ahead only for read jobs through io_uring. */
	bt->pf = ej->pool.uring && !ej->writes ? ej->pool.prefetch : 0;
	if (bt->pf)
		bt->pf_slot = calloc(bt->pf, sizeof(*bt->pf_slot));
	if (!bt->held || (ej->replay && ej->req_max && !bt->span) || (bt->pf && !bt->pf_slot)) {
		bt_free(bt);
		return err_set(e, ENOMEM, "bufpool: out of memory");
	}
	for (unsigned i = 0; i < ej->depth; i++)
		bt->held[i] = BUFPOOL_NONE;
	bt->ej = ej;
	bt->pool = pj->pool;
	bt->first = pj->first;
	bt->ctr = et->pool;
	bt->rd = bufpool_reader_new(pj->pool);
	bt->guess[0] = bt->guess[1] = BUFPOOL_NONE;
	bt->shift = pj->pool->page_shift;
	bt->span_ops = (struct pool_span_ops){ .get = span_get, .put = span_put, .arg = bt,
					       .shift = bt->shift };
	bt->io = (struct bufpool_io){ .read = bp_read, .write = bp_write, .arg = bt,
				      .stop = { et->stop[0], et->stop[1] } };
	ret = pagedev_open(&bt->dev, ej, pj->first, bt->shift, pj->pool->frames,
			   pj->pool->frames_len, bt->pf, "bufpool", e);
	if (ret < 0) {
		bt_free(bt);
		return ret;
	}
	bt->dev.other = pf_other;
	bt->dev.other_arg = bt;
	et->priv = bt;
	return 0;
}

static void bp_exit(struct engine_thread *et)
{
	struct bp_thread *bt = et->priv;

	if (!bt)
		return;
	for (unsigned i = 0; i < bt->ej->depth; i++)
		if (bt->held[i] != BUFPOOL_NONE)
			bufpool_release(bt->pool, bt->rd, i, bt->held[i]);
	if (bt->pf)
		pf_drain(bt);
	pagedev_close(&bt->dev);
	bt_free(bt);
	et->priv = NULL;
}

/* ---- the job: checks, the pool, prewarm --------------------------------- */

static int bp_prepare(struct engine_job *ej, struct err *e)
{
	return pagedev_prepare(ej, "bufpool", (uint64_t)BUFPOOL_KEY_MAX + 1, ej->pool.size, e);
}

static int prewarm_read(void *arg, uint32_t key, uint8_t *frame)
{
	return pagedev_prewarm_read(arg, key, frame);
}

static int prewarm_write(void *arg, uint32_t key, const uint8_t *frame)
{
	(void)arg, (void)key, (void)frame;
	return -EINVAL;		/* nothing is dirty before the job */
}

/*
 * Fill the pool with the job's regions, target after target, until the
 * regions end or every frame holds a page (nothing is evicted: a region
 * larger than the pool starts with its first pool_size bytes in it).
 */
static int prewarm(struct engine_job *ej, struct bufpool *bp, const uint64_t *first,
		   struct err *e)
{
	struct pagedev_prewarm pw;
	struct bufpool_io io = { .read = prewarm_read, .write = prewarm_write, .arg = &pw };
	struct pool_counters c = { 0 };
	int ret = pagedev_prewarm_open(&pw, ej, first, bp->page_shift, e);

	if (ret)
		return ret;
	for (unsigned i = 0; i < ej->ntargets && c.misses < bp->nframes; i++) {
		for (uint64_t key = first[i]; key < first[i + 1] && c.misses < bp->nframes; key++) {
			uint32_t ref;
			uint8_t *page;

			ret = bufpool_get(bp, (uint32_t)key, BUFPOOL_SHARED, &io, &c, &ref, &page);
			if (ret < 0) {
				err_set(e, -ret, "bufpool: prewarm: reading %s at %llu: %s",
					ej->targets[i].path,
					(unsigned long long)pagedev_offset(ej, first, i, key,
									   bp->page_shift),
					strerror(-ret));
				goto out;
			}
			bufpool_unpin(bp, ref);
		}
	}
out:
	pagedev_prewarm_close(&pw);
	return ret;
}

static void bp_job_teardown(struct engine_job *ej)
{
	struct bp_job *pj = ej->priv;

	if (!pj)
		return;
	bufpool_destroy(pj->pool);
	free(pj->first);
	free(pj);
	ej->priv = NULL;
}

static int bp_job_setup(struct engine_job *ej, struct err *e)
{
	struct bp_job *pj = calloc(1, sizeof(*pj));
	int ret;

	if (!pj)
		return err_set(e, ENOMEM, "bufpool: out of memory");
	/* bp_prepare checked that every key fits. */
	ret = pagedev_layout(ej, (unsigned)__builtin_ctzll(ej->pool.page), &pj->first, e);
	if (ret) {
		free(pj);
		return ret;
	}
	ret = bufpool_create(&pj->pool, ej->pool.size, (uint32_t)ej->pool.page,
			     pj->first[ej->ntargets], e);
	if (ret) {
		free(pj->first);
		free(pj);
		return ret;
	}
	ej->priv = pj;
	/* A job that never writes locks pages only to evict them: its
	 * hits publish with a plain store (pool_pin.h). Where membarrier(2)
	 * is refused they stay fenced, as correct and a little slower. */
	if (!ej->writes)
		(void)pool_pin_light(&pj->pool->pins);
	if (ej->prewarm) {
		ret = prewarm(ej, pj->pool, pj->first, e);
		if (ret) {
			bp_job_teardown(ej);
			return ret;
		}
	}
	return 0;
}

const struct engine_ops engine_bufpool = {
	.name = "bufpool",
	.help = "a buffer pool of pool_size bytes shared by the job's threads: page table, "
		"clock eviction, misses read with O_DIRECT (pool_io); writes dirty a frame, "
		"written back on eviction, by a flush (then fsync or fdatasync) and at the end",
	.flags = ENGINE_F_POOL,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH),
	.prepare = bp_prepare,
	.job_setup = bp_job_setup,
	.job_teardown = bp_job_teardown,
	.init = bp_init,
	.exit = bp_exit,
	.queue = bp_queue,
	.release = bp_release,
	.prefetch = bp_prefetch,
	.writeback = bp_writeback,
};
