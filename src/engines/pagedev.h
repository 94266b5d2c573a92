/*
 * pagedev.h - a pool engine's pages on the job's targets (bufpool's and
 * vmcache's): the targets' regions numbered as one run of pages, target
 * after target (target t's page p, counted from its region's start, is
 * page first[t] + p; first[ntargets] is the total), each page read and
 * written with O_DIRECT through the thread's own I/O: pool_io=io_uring,
 * a ring of its own with the targets (and, for a pool that has them,
 * its frames) registered, one request in flight and waited for at once,
 * or pool_io=psync, pread(2) and pwrite(2). A page is read up to the end
 * of its target's region (the rest of a short last page is zeroed) and
 * written up to there, rounded up to the logical block size O_DIRECT
 * needs. Also the checks a pool makes of its targets (prepare) and the
 * chunked reads of prewarm.
 *
 * A pool that reads ahead (bufpool's pool_prefetch) shares the ring:
 * it queues reads of its own (pagedev_queue_read, user_data not 0), and
 * a completion of one that comes while pagedev waits for its own request
 * is handed to the pool's callback.
 *
 * Functions return 0 or -errno and never print.
 */
#ifndef FAULTLINE_PAGEDEV_H
#define FAULTLINE_PAGEDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <liburing.h>

#include "engines/engine.h"
#include "lib/err.h"

struct pagedev {
	const struct engine_job *ej;
	const uint64_t *first;
	unsigned shift;			/* log2(page) */
	uint32_t page;
	bool uring;			/* pool_io=io_uring */
	bool fixed_files, fixed_bufs;
	uint8_t *bufs;			/* registered with the ring (fixed_bufs) */
	/* A completion on the ring that is not pagedev's own (user_data not
	 * 0): the callback takes it (and marks it seen). */
	void (*other)(void *arg, struct io_uring_cqe *cqe);
	void *other_arg;
	struct io_uring ring;
};

/* Pages of @t's region, counting a partial last one. */
static inline uint64_t pagedev_region_pages(const struct target *t, unsigned shift)
{
	return (t->len + (1ull << shift) - 1) >> shift;
}

/* *@first: the first page of each target, and the total (ntargets + 1
 * entries, malloc'd). */
int pagedev_layout(const struct engine_job *ej, unsigned shift, uint64_t **first,
		   struct err *e);

/*
 * What @engine (its name, for messages) needs of the job's targets:
 * O_DIRECT descriptors, pool_page a multiple of their logical block
 * size, at most @max_pages pages in all, and @mem bytes no more than the
 * host's MemAvailable. An error here is an invalid job.
 */
int pagedev_prepare(const struct engine_job *ej, const char *engine, uint64_t max_pages,
		    uint64_t mem, struct err *e);

/* One thread's I/O (pool_io), its buffers the @bufs_len bytes at @bufs
 * (registered with the ring when they are real frames), or any memory
 * (@bufs NULL: a region most of which is not there, never registered);
 * the ring has room for @more requests beyond pagedev's own (reads
 * ahead). */
int pagedev_open(struct pagedev *pd, const struct engine_job *ej, const uint64_t *first,
		 unsigned shift, uint8_t *bufs, size_t bufs_len, unsigned more, const char *who,
		 struct err *e);
void pagedev_close(struct pagedev *pd);

/* The target of page @key, by binary search (scratch files make
 * thousands), and its byte offset there. */
unsigned pagedev_target(const struct pagedev *pd, uint64_t key);
uint64_t pagedev_offset(const struct engine_job *ej, const uint64_t *first, unsigned ti,
			uint64_t key, unsigned shift);

/* Read page @key into @buf (page bytes); write it from @buf. */
int pagedev_read(struct pagedev *pd, uint64_t key, uint8_t *buf);
int pagedev_write(struct pagedev *pd, uint64_t key, const uint8_t *buf);

/* A read of page @key into @buf queued on the ring (pool_io=io_uring)
 * with @user_data (not 0), not submitted: -EBUSY when the ring is full.
 * pagedev_read_done: whether its completion @res brought the page (0,
 * the rest of a short last page zeroed) or not (-errno). */
int pagedev_queue_read(struct pagedev *pd, uint64_t key, uint8_t *buf, uint64_t user_data);
int pagedev_read_done(const struct pagedev *pd, uint64_t key, uint8_t *buf, int res);

/* Make target @ti durable once its pages are written: fdatasync when
 * @datasync (the request's), fsync otherwise (as psync does). */
int pagedev_sync(const struct engine_job *ej, unsigned ti, bool datasync);

/* prewarm: reads of PAGEDEV_PREWARM_CHUNK bytes at a time, each page
 * copied from there. */
struct pagedev_prewarm {
	const struct engine_job *ej;
	const uint64_t *first;
	uint8_t *buf;
	unsigned target;
	uint64_t buf_off;
	uint32_t buf_len;
	unsigned shift;
	uint32_t page;
};

int pagedev_prewarm_open(struct pagedev_prewarm *pw, const struct engine_job *ej,
			 const uint64_t *first, unsigned shift, struct err *e);
int pagedev_prewarm_read(struct pagedev_prewarm *pw, uint64_t key, uint8_t *page);
void pagedev_prewarm_close(struct pagedev_prewarm *pw);

#endif
