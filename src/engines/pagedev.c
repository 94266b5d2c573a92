/*
 * pagedev.c - a pool engine's pages on the job's targets; see pagedev.h.
 */
#include "engines/pagedev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* io_uring refuses a registered buffer larger than 1 GiB; a pool's
 * frames are registered in pieces this large, so a frame's piece is its
 * offset >> this (pool_page divides it: both are powers of two, and
 * pool_page is at most BS_MAX = 1 GiB). */
#define REG_BUF_SHIFT 30
/* prewarm reads the region in pieces this large, not a page at a time. */
#define PREWARM_CHUNK (1u << 20)
/* One read or write at a time, and a spare (and a pool's reads ahead
 * more). */
#define RING_ENTRIES 2
/* user_data of pagedev's own request; a pool's reads ahead use others. */
#define UD_OWN 0

/* Ring flags, best first (engine_io_uring.c says why each). */
static const unsigned ring_flag_sets[] = {
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_COOP_TASKRUN,
	0,
};

/* ---- the layout ------------------------------------------------------------ */

int pagedev_layout(const struct engine_job *ej, unsigned shift, uint64_t **first,
		   struct err *e)
{
	uint64_t *f = malloc(sizeof(*f) * (ej->ntargets + 1)), key = 0;

	if (!f)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned i = 0; i < ej->ntargets; i++) {
		f[i] = key;
		key += pagedev_region_pages(&ej->targets[i], shift);
	}
	f[ej->ntargets] = key;
	*first = f;
	return 0;
}

unsigned pagedev_target(const struct pagedev *pd, uint64_t key)
{
	unsigned lo = 0, hi = pd->ej->ntargets;

	/* The last t with first[t] <= key. */
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;

		if (pd->first[mid] <= key)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uint64_t pagedev_offset(const struct engine_job *ej, const uint64_t *first, unsigned ti,
			uint64_t key, unsigned shift)
{
	return ej->targets[ti].base + ((key - first[ti]) << shift);
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

int pagedev_prepare(const struct engine_job *ej, const char *engine, uint64_t max_pages,
		    uint64_t mem, struct err *e)
{
	const unsigned shift = (unsigned)__builtin_ctzll(ej->pool.page);
	uint64_t pages = 0;

	for (unsigned i = 0; i < ej->ntargets; i++) {
		const struct target *t = &ej->targets[i];

		/* jobfile.c sets direct=1 for a pool; a job built another
		 * way may not have. */
		if (t->fd_direct < 0)
			return err_set(e, EINVAL, "ioengine=%s reads with O_DIRECT: it needs direct=1",
				       engine);
		if (ej->pool.page % t->lbs)
			return err_set(e, EINVAL, "pool_page=%llu is not a multiple of the logical "
				       "block size %u of %s, which the pool's O_DIRECT reads need",
				       (unsigned long long)ej->pool.page, t->lbs, t->path);
		pages += pagedev_region_pages(t, shift);
	}
	if (pages > max_pages)
		return err_set(e, EINVAL, "the job's regions hold %llu pages of pool_page=%llu; "
			       "%s numbers at most %llu (a larger pool_page makes fewer)",
			       (unsigned long long)pages, (unsigned long long)ej->pool.page, engine,
			       (unsigned long long)max_pages);
	/* A pool the host cannot hold would be populated into the OOM
	 * killer; MemAvailable says what fits (unreadable: not checked). */
	if (ej->mem_available && mem > ej->mem_available)
		return err_set(e, ENOMEM, "pool_size=%lluMiB is more than the %lluMiB of "
			       "memory available (MemAvailable)", (unsigned long long)(mem >> 20),
			       (unsigned long long)(ej->mem_available >> 20));
	return 0;
}

/* ---- one page at a time ---------------------------------------------------- */

/* The descriptor and registered buffer of a request on @ti's @buf. */
static void prep_rw(struct pagedev *pd, struct io_uring_sqe *sqe, bool write, unsigned ti,
		    uint8_t *buf, uint32_t len, uint64_t off)
{
	int fd = pd->fixed_files ? (int)ti : pd->ej->targets[ti].fd_direct;
	unsigned idx = pd->fixed_bufs ? (unsigned)((size_t)(buf - pd->bufs) >> REG_BUF_SHIFT) : 0;

	if (pd->fixed_bufs && !write)
		io_uring_prep_read_fixed(sqe, fd, buf, len, off, (int)idx);
	else if (pd->fixed_bufs)
		io_uring_prep_write_fixed(sqe, fd, buf, len, off, (int)idx);
	else if (!write)
		io_uring_prep_read(sqe, fd, buf, len, off);
	else
		io_uring_prep_write(sqe, fd, buf, len, off);
	if (pd->fixed_files)
		sqe->flags |= IOSQE_FIXED_FILE;
}

/* One read or write of @len bytes at @off through the thread's ring:
 * bytes moved, or -errno. Completions of a pool's own reads that come
 * first go to its callback on the way. */
static int64_t uring_rw(struct pagedev *pd, bool write, unsigned ti, uint8_t *buf, uint32_t len,
			uint64_t off)
{
	struct io_uring_cqe *cqe;
	int ret;

	for (;;) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&pd->ring);

		/* One request of pagedev's at a time: the ring is never full. */
		if (!sqe)
			return -EBUSY;
		prep_rw(pd, sqe, write, ti, buf, len, off);
		io_uring_sqe_set_data64(sqe, UD_OWN);
		do
			ret = io_uring_submit_and_wait(&pd->ring, 1);
		while (ret == -EINTR || ret == -EAGAIN || ret == -EBUSY);
		if (ret < 0)
			return ret;
		for (;;) {
			do
				ret = io_uring_wait_cqe(&pd->ring, &cqe);
			while (ret == -EINTR);
			if (ret < 0)
				return ret;
			if (cqe->user_data == UD_OWN || !pd->other)
				break;
			pd->other(pd->other_arg, cqe);
		}
		ret = cqe->res;
		io_uring_cqe_seen(&pd->ring, cqe);
		if (ret != -EAGAIN && ret != -EINTR)
			return ret;
	}
}

static int64_t do_rw(struct pagedev *pd, bool write, unsigned ti, uint8_t *buf, uint32_t len,
		     uint64_t off)
{
	const struct target *t = &pd->ej->targets[ti];
	ssize_t n;

	if (pd->uring)
		return uring_rw(pd, write, ti, buf, len, off);
	do
		n = write ? pwrite(t->fd_direct, buf, len, (off_t)off)
			  : pread(t->fd_direct, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* A read of page @off of target @ti into @buf brought @got bytes: all
 * the region has there (the rest zeroed), or -EIO: the target shrank
 * under the job. */
static int read_end(const struct pagedev *pd, unsigned ti, uint64_t off, uint8_t *buf,
		    uint32_t got)
{
	if (got < page_need(&pd->ej->targets[ti], off, pd->page))
		return -EIO;
	if (got < pd->page)
		memset(buf + got, 0, pd->page - got);
	return 0;
}

int pagedev_read(struct pagedev *pd, uint64_t key, uint8_t *buf)
{
	const unsigned ti = pagedev_target(pd, key);
	const uint32_t page = pd->page;
	const uint64_t off = pagedev_offset(pd->ej, pd->first, ti, key, pd->shift);
	uint32_t got = 0;

	/* O_DIRECT may stop short only at the end of the file. */
	while (got < page) {
		int64_t n = do_rw(pd, false, ti, buf + got, page - got, off + got);

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		got += (uint32_t)n;
	}
	return read_end(pd, ti, off, buf, got);
}

int pagedev_queue_read(struct pagedev *pd, uint64_t key, uint8_t *buf, uint64_t user_data)
{
	const unsigned ti = pagedev_target(pd, key);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&pd->ring);

	if (!sqe)
		return -EBUSY;
	prep_rw(pd, sqe, false, ti, buf, pd->page, pagedev_offset(pd->ej, pd->first, ti, key,
								    pd->shift));
	io_uring_sqe_set_data64(sqe, user_data);
	return 0;
}

int pagedev_read_done(const struct pagedev *pd, uint64_t key, uint8_t *buf, int res)
{
	const unsigned ti = pagedev_target(pd, key);

	/* A short read may only end the file. */
	if (res < 0)
		return res;
	return read_end(pd, ti, pagedev_offset(pd->ej, pd->first, ti, key, pd->shift), buf,
			(uint32_t)res);
}

int pagedev_write(struct pagedev *pd, uint64_t key, const uint8_t *buf)
{
	const unsigned ti = pagedev_target(pd, key);
	const struct target *t = &pd->ej->targets[ti];
	const uint64_t off = pagedev_offset(pd->ej, pd->first, ti, key, pd->shift);
	uint64_t need = page_need(t, off, pd->page);
	uint32_t len = (uint32_t)((need + t->lbs - 1) / t->lbs * t->lbs), done = 0;

	if (len > pd->page)
		len = pd->page;
	while (done < len) {
		int64_t n = do_rw(pd, true, ti, (uint8_t *)buf + done, len - done, off + done);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		done += (uint32_t)n;
	}
	return 0;
}

int pagedev_sync(const struct engine_job *ej, unsigned ti, bool datasync)
{
	const int fd = ej->targets[ti].fd_direct;
	int ret = datasync ? fdatasync(fd) : fsync(fd);

	return ret < 0 ? -errno : 0;
}

/* ---- a thread's I/O ---------------------------------------------------------- */

/* Register the targets' O_DIRECT descriptors (and the frames, when
 * there are) with the ring; refused (RLIMIT_MEMLOCK, RLIMIT_NOFILE),
 * plain reads do. */
static void uring_register(struct pagedev *pd, size_t bufs_len)
{
	const struct engine_job *ej = pd->ej;
	size_t piece = (size_t)1 << REG_BUF_SHIFT;
	unsigned nbuf = (unsigned)((bufs_len + piece - 1) / piece);
	struct iovec *iov;
	int *fds;

	fds = malloc(sizeof(*fds) * ej->ntargets);
	if (fds) {
		for (unsigned i = 0; i < ej->ntargets; i++)
			fds[i] = ej->targets[i].fd_direct;
		pd->fixed_files = io_uring_register_files(&pd->ring, fds, ej->ntargets) == 0;
		free(fds);
	}
	if (!pd->bufs)
		return;
	iov = malloc(sizeof(*iov) * nbuf);
	if (!iov)
		return;
	for (unsigned i = 0; i < nbuf; i++) {
		size_t off = (size_t)i * piece;

		iov[i].iov_base = pd->bufs + off;
		iov[i].iov_len = bufs_len - off < piece ? bufs_len - off : piece;
	}
	pd->fixed_bufs = io_uring_register_buffers(&pd->ring, iov, nbuf) == 0;
	free(iov);
}

int pagedev_open(struct pagedev *pd, const struct engine_job *ej, const uint64_t *first,
		 unsigned shift, uint8_t *bufs, size_t bufs_len, unsigned more, const char *who,
		 struct err *e)
{
	int ret = -EINVAL;

	memset(pd, 0, sizeof(*pd));
	pd->ej = ej;
	pd->first = first;
	pd->shift = shift;
	pd->page = 1u << shift;
	pd->bufs = bufs;
	pd->uring = ej->pool.uring;
	if (!pd->uring)
		return 0;
	for (size_t i = 0; i < sizeof(ring_flag_sets) / sizeof(ring_flag_sets[0]); i++) {
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		p.flags = ring_flag_sets[i];
		ret = io_uring_queue_init_params(RING_ENTRIES + more, &pd->ring, &p);
		if (ret != -EINVAL)
			break;
	}
	if (ret < 0) {
		pd->uring = false;
		return err_set(e, -ret, "%s: pool_io=io_uring: setting up a ring: %s%s", who,
			       strerror(-ret), ret == -EPERM ? " (kernel.io_uring_disabled? "
			       "pool_io=psync does without)" : "");
	}
	io_uring_register_ring_fd(&pd->ring);
	uring_register(pd, bufs_len);
	return 0;
}

void pagedev_close(struct pagedev *pd)
{
	if (pd->uring)
		io_uring_queue_exit(&pd->ring);
	pd->uring = false;
}

/* ---- prewarm ------------------------------------------------------------------ */

int pagedev_prewarm_open(struct pagedev_prewarm *pw, const struct engine_job *ej,
			 const uint64_t *first, unsigned shift, struct err *e)
{
	*pw = (struct pagedev_prewarm){ .ej = ej, .first = first, .target = UINT32_MAX,
					.shift = shift, .page = 1u << shift };
	pw->buf = aligned_alloc(PREWARM_CHUNK, PREWARM_CHUNK);
	if (!pw->buf)
		return err_set(e, ENOMEM, "prewarm: out of memory");
	return 0;
}

int pagedev_prewarm_read(struct pagedev_prewarm *pw, uint64_t key, uint8_t *page)
{
	const struct pagedev pd = { .ej = pw->ej, .first = pw->first };
	const unsigned ti = pagedev_target(&pd, key);
	const struct target *t = &pw->ej->targets[ti];
	const uint64_t off = pagedev_offset(pw->ej, pw->first, ti, key, pw->shift);
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
	memcpy(page, pw->buf + (off - pw->buf_off), have);
	memset(page + have, 0, pw->page - have);
	return 0;
}

void pagedev_prewarm_close(struct pagedev_prewarm *pw)
{
	free(pw->buf);
	pw->buf = NULL;
}
