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
 * request may span pages: each is pinned in turn and copied out,
 * bp_read_span, or latched in turn and copied in, bp_write_span). A page
 * missing
 * from the pool is read by the thread that misses it, with O_DIRECT,
 * through its own I/O: pool_io=io_uring, a ring of its own with the
 * targets and the frames registered (one read in flight, waited for at
 * once), or pool_io=psync, pread(2). A thread that finds the page being
 * read by another waits for that read.
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
#include <sys/uio.h>
#include <unistd.h>

#include <liburing.h>

#include "engines/bufpool.h"
#include "engines/engine.h"

/* io_uring refuses a registered buffer larger than 1 GiB; the frames
 * are registered in pieces this large, so a frame's piece is its
 * offset >> this (pool_page divides it: both are powers of two, and
 * pool_page is at most BS_MAX = 1 GiB). */
#define REG_BUF_SHIFT 30
/* prewarm reads the region in pieces this large, not a page at a time. */
#define PREWARM_CHUNK (1u << 20)

/*
 * The pool's keys number the pages of the job's regions densely: target
 * t's page p (counted from its region's start, which offset= puts on a
 * pool_page boundary) is key first[t] + p; first[ntargets] is the
 * total. bp_prepare checks that the total fits in a key.
 */
struct bp_job {
	struct bufpool *pool;
	uint32_t *first;
};

/* A page read ahead, in flight. */
struct pf_slot {
	uint32_t key;
	uint32_t frame;
	bool busy;
};

/* user_data of the ring's own read or write: a page read ahead is its
 * slot + 1. */
#define UD_SYNC 0

struct bp_thread {
	const struct engine_job *ej;
	struct bufpool *pool;
	const uint32_t *first;		/* bp_job's */
	struct pool_counters *ctr;
	struct bufpool_io io;
	struct pool_reader *rd;	/* where this thread publishes its pins */
	uint32_t *held;			/* per request slot: the page it pinned */
	/* A read across pages (a replayed log's, bp_read_span): per slot,
	 * ej->req_max bytes it is copied into; NULL when no request spans. */
	uint8_t *span;
	unsigned shift;			/* log2(pool_page) */
	bool uring;			/* pool_io=io_uring */
	bool fixed_files, fixed_bufs;
	struct io_uring ring;
	/* pool_prefetch: pf slots, pf_n of them in flight; keys below
	 * pf_next (up to the end of target pf_ti's pages) were looked at. */
	unsigned pf, pf_n;
	struct pf_slot *pf_slot;
	uint32_t pf_next;
	unsigned pf_ti;
};

/* ---- the device side: one page at a time ----------------------------- */

/* Pages of @t's region, counting a partial last one. */
static uint64_t region_pages(const struct target *t, unsigned shift)
{
	return (t->len + (1ull << shift) - 1) >> shift;
}

/* Key @key's target (by binary search: scratch files make thousands)
 * and byte offset. */
static unsigned key_target(const uint32_t *first, unsigned ntargets, uint32_t key)
{
	unsigned lo = 0, hi = ntargets;

	/* The last t with first[t] <= key. */
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;

		if (first[mid] <= key)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t key_offset(const struct engine_job *ej, const uint32_t *first, unsigned ti,
			   uint32_t key, unsigned shift)
{
	return ej->targets[ti].base + ((uint64_t)(key - first[ti]) << shift);
}

/* Bytes of page @off that the job's region of @t covers: a read must
 * bring at least these (beyond them may be past the end of the file). */
static uint64_t page_need(const struct target *t, uint64_t off, uint32_t page)
{
	uint64_t end = t->base + t->len;

	if (off >= end)
		return 0;
	return end - off < page ? end - off : page;
}

static void pf_complete(struct bp_thread *bt, struct io_uring_cqe *cqe);

/* One read or write of @len bytes at @off through the thread's ring:
 * bytes moved, or -errno. Completions of pages read ahead that come
 * first are put in the pool on the way. */
static int64_t uring_rw(struct bp_thread *bt, bool write, unsigned ti, uint8_t *buf,
			uint32_t len, uint64_t off)
{
	const struct target *t = &bt->ej->targets[ti];
	int fd = bt->fixed_files ? (int)ti : t->fd_direct;
	struct io_uring_cqe *cqe;
	int ret;

	for (;;) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&bt->ring);
		unsigned idx = (unsigned)((size_t)(buf - bt->pool->frames) >> REG_BUF_SHIFT);

		/* One request at a time: the ring is never full. */
		if (!sqe)
			return -EBUSY;
		if (bt->fixed_bufs && !write)
			io_uring_prep_read_fixed(sqe, fd, buf, len, off, (int)idx);
		else if (bt->fixed_bufs)
			io_uring_prep_write_fixed(sqe, fd, buf, len, off, (int)idx);
		else if (!write)
			io_uring_prep_read(sqe, fd, buf, len, off);
		else
			io_uring_prep_write(sqe, fd, buf, len, off);
		if (bt->fixed_files)
			sqe->flags |= IOSQE_FIXED_FILE;
		io_uring_sqe_set_data64(sqe, UD_SYNC);
		do
			ret = io_uring_submit_and_wait(&bt->ring, 1);
		while (ret == -EINTR || ret == -EAGAIN || ret == -EBUSY);
		if (ret < 0)
			return ret;
		for (;;) {
			do
				ret = io_uring_wait_cqe(&bt->ring, &cqe);
			while (ret == -EINTR);
			if (ret < 0)
				return ret;
			if (cqe->user_data == UD_SYNC)
				break;
			pf_complete(bt, cqe);
		}
		ret = cqe->res;
		io_uring_cqe_seen(&bt->ring, cqe);
		if (ret != -EAGAIN && ret != -EINTR)
			return ret;
	}
}

static int64_t do_rw(struct bp_thread *bt, bool write, unsigned ti, uint8_t *buf, uint32_t len,
		     uint64_t off)
{
	const struct target *t = &bt->ej->targets[ti];
	ssize_t n;

	if (bt->uring)
		return uring_rw(bt, write, ti, buf, len, off);
	do
		n = write ? pwrite(t->fd_direct, buf, len, (off_t)off)
			  : pread(t->fd_direct, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static int bp_read(void *arg, uint32_t key, uint8_t *frame)
{
	struct bp_thread *bt = arg;
	const unsigned ti = key_target(bt->first, bt->ej->ntargets, key);
	const uint32_t page = bt->pool->page;
	const uint64_t off = key_offset(bt->ej, bt->first, ti, key, bt->shift);
	uint32_t got = 0;

	/* O_DIRECT may stop short only at the end of the file. */
	while (got < page) {
		int64_t n = do_rw(bt, false, ti, frame + got, page - got, off + got);

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		got += (uint32_t)n;
	}
	if (got < page_need(&bt->ej->targets[ti], off, page))
		return -EIO;	/* the target shrank under the job */
	if (got < page)
		memset(frame + got, 0, page - got);
	return 0;
}

static int bp_write(void *arg, uint32_t key, const uint8_t *frame)
{
	struct bp_thread *bt = arg;
	const unsigned ti = key_target(bt->first, bt->ej->ntargets, key);
	const struct target *t = &bt->ej->targets[ti];
	const uint64_t off = key_offset(bt->ej, bt->first, ti, key, bt->shift);
	uint64_t need = page_need(t, off, bt->pool->page);
	uint32_t len = (uint32_t)((need + t->lbs - 1) / t->lbs * t->lbs), done = 0;

	if (len > bt->pool->page)
		len = bt->pool->page;
	while (done < len) {
		int64_t n = do_rw(bt, true, ti, (uint8_t *)frame + done, len - done, off + done);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		done += (uint32_t)n;
	}
	return 0;
}

/* ---- read-ahead ---------------------------------------------------------- */

/* A page read ahead has come back: into the pool when whole (a short
 * read may only end the file), else its frame goes back. */
static void pf_complete(struct bp_thread *bt, struct io_uring_cqe *cqe)
{
	struct pf_slot *s = &bt->pf_slot[cqe->user_data - 1];
	const unsigned ti = key_target(bt->first, bt->ej->ntargets, s->key);
	const uint64_t off = key_offset(bt->ej, bt->first, ti, s->key, bt->shift);
	const uint32_t page = bt->pool->page;
	int res = cqe->res;

	io_uring_cqe_seen(&bt->ring, cqe);
	if (res >= 0 && (uint64_t)res >= page_need(&bt->ej->targets[ti], off, page)) {
		if ((uint32_t)res < page)
			memset(bufpool_frame(bt->pool, s->frame) + res, 0, page - (uint32_t)res);
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

/* Before a request for @key: what came back goes into the pool, and a
 * read ahead of @key itself is waited for. */
static void pf_before(struct bp_thread *bt, uint32_t key)
{
	struct io_uring_cqe *cqe;
	struct pf_slot *s;

	while (bt->pf_n && io_uring_peek_cqe(&bt->ring, &cqe) == 0)
		pf_complete(bt, cqe);
	s = pf_find(bt, key);
	while (s && s->busy) {
		if (io_uring_wait_cqe(&bt->ring, &cqe) < 0)
			continue;	/* EINTR */
		pf_complete(bt, cqe);
	}
}

/* Every read ahead back (the thread's end). */
static void pf_drain(struct bp_thread *bt)
{
	struct io_uring_cqe *cqe;

	while (bt->pf_n) {
		int ret = io_uring_wait_cqe(&bt->ring, &cqe);

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
	const struct engine_job *ej = bt->ej;
	const unsigned ti = key_target(bt->first, ej->ntargets, key);
	const uint64_t lim64 = (uint64_t)key + 1 + bt->pf;
	const uint32_t lim = lim64 < bt->first[ti + 1] ? (uint32_t)lim64 : bt->first[ti + 1];
	const uint32_t page = bt->pool->page;
	uint32_t k = key + 1;
	unsigned queued = 0;

	/* Keys up to pf_next were looked at after an earlier request. */
	if (bt->pf_ti == ti && bt->pf_next > k && bt->pf_next <= lim)
		k = bt->pf_next;
	for (; k < lim && bt->pf_n < bt->pf; k++) {
		struct io_uring_sqe *sqe;
		struct pf_slot *s = NULL;
		uint8_t *buf;
		uint32_t f;

		if (bufpool_lookup(bt->pool, k) != BUFPOOL_NONE || pf_find(bt, k))
			continue;
		for (unsigned i = 0; i < bt->pf && !s; i++)
			if (!bt->pf_slot[i].busy)
				s = &bt->pf_slot[i];
		sqe = io_uring_get_sqe(&bt->ring);
		if (!s || !sqe || bufpool_frame_take(bt->pool, &bt->io, bt->ctr, &f) < 0)
			break;
		buf = bufpool_frame(bt->pool, f);
		if (bt->fixed_bufs)
			io_uring_prep_read_fixed(sqe, bt->fixed_files ? (int)ti : ej->targets[ti].fd_direct,
						 buf, page, key_offset(ej, bt->first, ti, k, bt->shift),
						 (int)((size_t)(buf - bt->pool->frames) >> REG_BUF_SHIFT));
		else
			io_uring_prep_read(sqe, bt->fixed_files ? (int)ti : ej->targets[ti].fd_direct,
					   buf, page, key_offset(ej, bt->first, ti, k, bt->shift));
		if (bt->fixed_files)
			sqe->flags |= IOSQE_FIXED_FILE;
		io_uring_sqe_set_data64(sqe, (uint64_t)(s - bt->pf_slot) + 1);
		*s = (struct pf_slot){ .key = k, .frame = f, .busy = true };
		bt->pf_n++;
		queued++;
	}
	bt->pf_next = k;
	bt->pf_ti = ti;
	if (queued)
		io_uring_submit(&bt->ring);
}

/* ---- requests ---------------------------------------------------------- */

/* A flush of target @ti: its dirty frames written back, whoever wrote
 * them, then the target made durable (fdatasync or fsync, as the request
 * says, as psync does). */
static int bp_flush(struct bp_thread *bt, unsigned ti, bool datasync)
{
	const int fd = bt->ej->targets[ti].fd_direct;
	int ret = bufpool_flush_keys(bt->pool, bt->first[ti], bt->first[ti + 1], &bt->io, bt->ctr);

	if (ret < 0)
		return ret;
	ret = datasync ? fdatasync(fd) : fsync(fd);
	return ret < 0 ? -errno : 0;
}

/*
 * A read across pool pages (a replayed log's request longer than a page
 * or astride two): each page is pinned in turn, its part copied into the
 * slot's own buffer and the pin given back, as a database copies an
 * extent out of its pool. Every page counts a hit or a miss.
 */
static int bp_read_span(struct bp_thread *bt, struct io_req *r, uint32_t key, uint32_t in_page)
{
	struct bufpool *bp = bt->pool;
	uint8_t *dst = bt->span + (size_t)r->slot * bt->ej->req_max;
	uint32_t done = 0;

	if (!bt->span || r->len > bt->ej->req_max) {
		r->res = -EINVAL;
		return ENGINE_DONE;
	}
	while (done < r->len) {
		uint32_t n = bp->page - in_page < r->len - done ? bp->page - in_page : r->len - done;
		uint32_t ref;
		uint8_t *page;
		int ret;

		if (bt->pf)
			pf_before(bt, key);
		ret = bufpool_get(bp, key, BUFPOOL_SHARED, &bt->io, bt->ctr, &ref, &page);
		if (ret < 0) {
			r->res = ret;
			return ENGINE_DONE;
		}
		memcpy(dst + done, page + in_page, n);
		bufpool_unpin(bp, ref);
		if (bt->pf)
			pf_issue(bt, key);
		done += n;
		key++;
		in_page = 0;
	}
	r->data = dst;
	r->res = r->len;
	return ENGINE_DONE;
}

/*
 * A write across pool pages (a replayed log's, as bp_read_span's read):
 * each page latched exclusively in turn, its part copied in, and the
 * frame marked dirty; a page the write covers whole is not read first.
 */
static int bp_write_span(struct bp_thread *bt, struct io_req *r, uint32_t key, uint32_t in_page)
{
	struct bufpool *bp = bt->pool;
	uint32_t done = 0;

	while (done < r->len) {
		uint32_t n = bp->page - in_page < r->len - done ? bp->page - in_page : r->len - done;
		uint32_t ref;
		uint8_t *page;
		int ret = bufpool_get(bp, key, n == bp->page ? BUFPOOL_EXCL_NOREAD : BUFPOOL_EXCL, &bt->io,
				      bt->ctr, &ref, &page);

		if (ret < 0) {
			r->res = ret;
			return ENGINE_DONE;
		}
		memcpy(page + in_page, r->wbuf + done, n);
		bufpool_unlock(bp, ref, true);
		done += n;
		key++;
		in_page = 0;
	}
	r->data = NULL;
	r->res = r->len;
	return ENGINE_DONE;
}

static int bp_queue(struct engine_thread *et, struct io_req *r)
{
	struct bp_thread *bt = et->priv;
	struct bufpool *bp = bt->pool;
	const uint32_t key = bt->first[r->target] +
			     (uint32_t)((r->off - et->ej->targets[r->target].base) >> bt->shift);
	const uint32_t in_page = (uint32_t)(r->off & (bp->page - 1));
	uint32_t ref;
	uint8_t *page;
	int ret;

	if (__builtin_expect(r->op == IO_READ, 1)) {
		if (__builtin_expect(in_page + r->len > bp->page, 0))
			return bp_read_span(bt, r, key, in_page);
		if (bt->pf)
			pf_before(bt, key);
		ret = bufpool_pin(bp, bt->rd, r->slot, key, &bt->io, bt->ctr, &ref, &page);
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
			return bp_write_span(bt, r, key, in_page);

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

/* Register the targets' O_DIRECT descriptors and the frames with the
 * ring; refused (RLIMIT_MEMLOCK, RLIMIT_NOFILE), plain reads do. */
static void uring_register(struct bp_thread *bt)
{
	const struct engine_job *ej = bt->ej;
	struct bufpool *bp = bt->pool;
	size_t piece = (size_t)1 << REG_BUF_SHIFT;
	unsigned nbuf = (unsigned)((bp->frames_len + piece - 1) / piece);
	struct iovec *iov;
	int *fds;

	fds = malloc(sizeof(*fds) * ej->ntargets);
	if (fds) {
		for (unsigned i = 0; i < ej->ntargets; i++)
			fds[i] = ej->targets[i].fd_direct;
		bt->fixed_files = io_uring_register_files(&bt->ring, fds, ej->ntargets) == 0;
		free(fds);
	}
	iov = malloc(sizeof(*iov) * nbuf);
	if (!iov)
		return;
	for (unsigned i = 0; i < nbuf; i++) {
		size_t off = (size_t)i * piece;

		iov[i].iov_base = bp->frames + off;
		iov[i].iov_len = bp->frames_len - off < piece ? bp->frames_len - off : piece;
	}
	bt->fixed_bufs = io_uring_register_buffers(&bt->ring, iov, nbuf) == 0;
	free(iov);
}

/* Ring flags, best first (engine_io_uring.c says why each). */
static const unsigned ring_flag_sets[] = {
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_COOP_TASKRUN,
	0,
};

/* One read or write at a time, and a spare (and pool_prefetch more). */
#define RING_ENTRIES 2

static int bp_init(struct engine_thread *et, struct err *e)
{
	const struct engine_job *ej = et->ej;
	const struct job *job = ej->job;
	struct bp_job *pj = ej->priv;
	struct bp_thread *bt;
	int ret = -EINVAL;

	if (!et->pool)
		return err_set(e, EINVAL, "bufpool: no counters for this thread");
	bt = calloc(1, sizeof(*bt));
	if (!bt)
		return err_set(e, ENOMEM, "bufpool: out of memory");
	bt->held = malloc(sizeof(*bt->held) * ej->depth);
	if (!bt->held) {
		free(bt);
		return err_set(e, ENOMEM, "bufpool: out of memory");
	}
	for (unsigned i = 0; i < ej->depth; i++)
		bt->held[i] = BUFPOOL_NONE;
	/* Only a replay's requests may span pages (jobcheck refuses a bs
	 * that does not divide pool_page). */
	if (job->read_iolog && ej->req_max) {
		bt->span = malloc((size_t)ej->depth * ej->req_max);
		if (!bt->span) {
			free(bt->held);
			free(bt);
			return err_set(e, ENOMEM, "bufpool: out of memory");
		}
	}
	bt->ej = ej;
	bt->pool = pj->pool;
	bt->first = pj->first;
	bt->ctr = et->pool;
	bt->rd = bufpool_reader_new(pj->pool);
	bt->shift = pj->pool->page_shift;
	bt->io = (struct bufpool_io){ .read = bp_read, .write = bp_write, .arg = bt,
				      .stop = { et->stop[0], et->stop[1] } };
	bt->uring = job->pool_io == POOL_IO_URING;
	/* jobcheck.c allows read-ahead only for read jobs through io_uring. */
	bt->pf = bt->uring && !job_writes(job) ? job->pool_prefetch : 0;
	if (bt->pf) {
		bt->pf_slot = calloc(bt->pf, sizeof(*bt->pf_slot));
		if (!bt->pf_slot) {
			free(bt->span);
			free(bt->held);
			free(bt);
			return err_set(e, ENOMEM, "bufpool: out of memory");
		}
	}
	if (bt->uring) {
		for (size_t i = 0; i < sizeof(ring_flag_sets) / sizeof(ring_flag_sets[0]); i++) {
			struct io_uring_params p;

			memset(&p, 0, sizeof(p));
			p.flags = ring_flag_sets[i];
			ret = io_uring_queue_init_params(RING_ENTRIES + bt->pf, &bt->ring, &p);
			if (ret != -EINVAL)
				break;
		}
		if (ret < 0) {
			free(bt->pf_slot);
			free(bt->span);
			free(bt->held);
			free(bt);
			return err_set(e, -ret, "bufpool: pool_io=io_uring: setting up a ring: %s%s",
				       strerror(-ret), ret == -EPERM ? " (kernel.io_uring_disabled? "
				       "pool_io=psync does without)" : "");
		}
		io_uring_register_ring_fd(&bt->ring);
		uring_register(bt);
	}
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
	if (bt->uring) {
		pf_drain(bt);
		io_uring_queue_exit(&bt->ring);
	}
	free(bt->pf_slot);
	free(bt->span);
	free(bt->held);
	free(bt);
	et->priv = NULL;
}

/* ---- the job: checks, the pool, prewarm --------------------------------- */

static int bp_prepare(struct engine_job *ej, struct err *e)
{
	const struct job *j = ej->job;
	const unsigned shift = (unsigned)__builtin_ctzll(j->pool_page);
	uint64_t pages = 0;

	for (unsigned i = 0; i < ej->ntargets; i++) {
		const struct target *t = &ej->targets[i];

		/* jobfile.c sets direct=1 for bufpool; a job built another
		 * way may not have. */
		if (t->fd_direct < 0)
			return err_set(e, EINVAL, "ioengine=bufpool reads with O_DIRECT: it needs direct=1");
		if (j->pool_page % t->lbs)
			return err_set(e, EINVAL, "pool_page=%llu is not a multiple of the logical "
				       "block size %u of %s, which the pool's O_DIRECT reads need",
				       (unsigned long long)j->pool_page, t->lbs, t->path);
		pages += region_pages(t, shift);
	}
	if (pages > (uint64_t)BUFPOOL_KEY_MAX + 1)
		return err_set(e, EINVAL, "the job's regions hold %llu pages of pool_page=%llu; "
			       "bufpool numbers at most %llu (a larger pool_page makes fewer)",
			       (unsigned long long)pages, (unsigned long long)j->pool_page,
			       (unsigned long long)BUFPOOL_KEY_MAX + 1);
	/* A pool the host cannot hold would be populated into the OOM
	 * killer; MemAvailable says what fits (unreadable: not checked). */
	if (ej->mem_available && j->pool_size > ej->mem_available)
		return err_set(e, ENOMEM, "pool_size=%lluMiB is more than the %lluMiB of "
			       "memory available (MemAvailable)",
			       (unsigned long long)(j->pool_size >> 20),
			       (unsigned long long)(ej->mem_available >> 20));
	return 0;
}

/* prewarm's reads: a PREWARM_CHUNK piece at a time into a buffer, each
 * page copied from there into its frame. */
struct prewarm {
	const struct engine_job *ej;
	const uint32_t *first;
	uint8_t *buf;
	unsigned target;
	uint64_t buf_off;
	uint32_t buf_len;
	unsigned shift;
	uint32_t page;
};

static int prewarm_read(void *arg, uint32_t key, uint8_t *frame)
{
	struct prewarm *pw = arg;
	const unsigned ti = key_target(pw->first, pw->ej->ntargets, key);
	const struct target *t = &pw->ej->targets[ti];
	const uint64_t off = key_offset(pw->ej, pw->first, ti, key, pw->shift);
	uint32_t have;

	if (ti != pw->target || off < pw->buf_off || off >= pw->buf_off + pw->buf_len) {
		ssize_t n;

		do
			n = pread(t->fd_direct, pw->buf, PREWARM_CHUNK, (off_t)off);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		pw->target = ti;
		pw->buf_off = off;
		pw->buf_len = (uint32_t)n;
	}
	have = (uint32_t)(pw->buf_off + pw->buf_len - off);
	if (have > pw->page)
		have = pw->page;
	if (have < page_need(t, off, pw->page))
		return -EIO;
	memcpy(frame, pw->buf + (off - pw->buf_off), have);
	memset(frame + have, 0, pw->page - have);
	return 0;
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
static int prewarm(struct engine_job *ej, struct bufpool *bp, const uint32_t *first,
		   struct err *e)
{
	struct prewarm pw = { .ej = ej, .first = first, .target = UINT32_MAX,
			      .shift = bp->page_shift, .page = bp->page };
	struct bufpool_io io = { .read = prewarm_read, .write = prewarm_write, .arg = &pw };
	struct pool_counters c = { 0 };
	int ret = 0;

	pw.buf = aligned_alloc(PREWARM_CHUNK, PREWARM_CHUNK);
	if (!pw.buf)
		return err_set(e, ENOMEM, "bufpool: prewarm: out of memory");
	for (unsigned i = 0; i < ej->ntargets && c.misses < bp->nframes; i++) {
		const struct target *t = &ej->targets[i];

		for (uint32_t key = first[i]; key < first[i + 1] && c.misses < bp->nframes; key++) {
			uint32_t ref;
			uint8_t *page;

			ret = bufpool_get(bp, key, BUFPOOL_SHARED, &io, &c, &ref, &page);
			if (ret < 0) {
				err_set(e, -ret, "bufpool: prewarm: reading %s at %llu: %s", t->path,
					(unsigned long long)key_offset(ej, first, i, key, bp->page_shift),
					strerror(-ret));
				goto out;
			}
			bufpool_unpin(bp, ref);
		}
	}
out:
	free(pw.buf);
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
	const struct job *j = ej->job;
	struct bp_job *pj = calloc(1, sizeof(*pj));
	int ret;

	uint64_t key = 0;

	if (!pj)
		return err_set(e, ENOMEM, "bufpool: out of memory");
	pj->first = malloc(sizeof(*pj->first) * (ej->ntargets + 1));
	if (!pj->first) {
		free(pj);
		return err_set(e, ENOMEM, "bufpool: out of memory");
	}
	/* bp_prepare checked that every key fits. */
	for (unsigned i = 0; i < ej->ntargets; i++) {
		pj->first[i] = (uint32_t)key;
		key += region_pages(&ej->targets[i], (unsigned)__builtin_ctzll(j->pool_page));
	}
	pj->first[ej->ntargets] = (uint32_t)key;
	ret = bufpool_create(&pj->pool, j->pool_size, (uint32_t)j->pool_page, key, e);
	if (ret) {
		free(pj->first);
		free(pj);
		return ret;
	}
	ej->priv = pj;
	if (j->prewarm) {
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
	.writeback = bp_writeback,
};
