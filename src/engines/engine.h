/*
 * engine.h - the interface an I/O engine fills in.
 *
 * An engine only decides how bytes move. The worker loops (worker.c,
 * loop.c), the offset generator (gen.c), the consumer (touch.c) and the
 * statistics are shared by all engines. Adding an engine is one source
 * file defining a `const struct engine_ops` and one line in engines.c.
 *
 * An engine sees two things: its job (struct engine_job: the options
 * it acts on, resolved once, its targets, the request slots per thread,
 * and the state its job_setup made, shared by every thread) and one thread of it (struct
 * engine_thread: that thread's request slots and the state init made).
 * It never sees the worker, the run or the sampler.
 *
 * A request carries its operation (read, write, flush); an engine says
 * in .ops which it serves, and a job that needs another is refused
 * before it runs (engine_check_ops). A synchronous engine implements
 * queue() only and completes every request inside it. An asynchronous
 * engine queues in queue(), pushes what is queued to the kernel in
 * submit() and hands back completions in reap(). reap() first pushes
 * anything still queued, so the worker calls submit() only in the
 * middle of a batch (iodepth_batch_submit): the last requests before a
 * wait go to the kernel with the wait.
 *
 * An engine that lends the worker memory of its own (bufpool's frames:
 * r->data points into a frame the request pinned) takes it back in
 * release(), which the worker calls once it has consumed the bytes.
 * One that keeps writes of its own (bufpool's dirty frames) writes them
 * to the target in writeback(), after a write job's loop.
 *
 * Functions return 0 or -errno (positive counts where noted) and never
 * print.
 */
#ifndef FAULTLINE_ENGINE_H
#define FAULTLINE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "engines/target.h"

/* What a request asks for. */
enum io_op {
	IO_READ,	/* bring len bytes at off into buf (or name them: data) */
	IO_WRITE,	/* store len bytes from wbuf at off */
	IO_FLUSH,	/* make the target's written data durable (len 0, off unused):
			 * fdatasync when the request's datasync says, else fsync */
	IO_TRIM,	/* discard len bytes at off (engine_trim: a hole in a file,
			 * BLKDISCARD on a block device); res len when done */
	IO_NOPS
};

/* A job's targets at most: io_req.target numbers them in 16 bits
 * (jobcheck.c refuses a job with more, scratch files or filename=). */
#define IO_TARGETS_MAX 65536

/* engine_ops.ops: the operations an engine serves. */
#define ENGINE_OP(op)	(1u << (op))

struct io_req {
	uint64_t off;		/* absolute byte offset in the target */
	uint32_t len;
	uint16_t target;	/* index into the job's targets */
	uint16_t slot;		/* index in the thread's request array */
	uint8_t op;		/* enum io_op */
	uint8_t prio_idx;	/* the request's entry in the job's priorities
				 * (workload/prio.h), set by the worker */
	uint16_t ioprio;	/* its ioprio value (sqe->ioprio, aio_reqprio);
				 * 0: the thread's own. Async engines only */
	uint8_t datasync;	/* IO_FLUSH: fdatasync rather than fsync (the
				 * job's fdatasync=N, or a replayed datasync) */
	uint8_t *buf;		/* this slot's aligned buffer (ENGINE_F_BUFFERS) */
	uint8_t *wbuf;		/* write jobs: this slot's block to write, aligned,
				 * stamped by the worker before each write */
	const uint8_t *data;	/* set at completion: where the bytes are (reads) */
	int64_t res;		/* set at completion: bytes transferred, or -errno */
	uint64_t t_issue;	/* ns, CLOCK_MONOTONIC; owned by the worker */
};

/* A pool engine's options (ENGINE_F_POOL: bufpool, vmcache). */
struct engine_pool_cfg {
	uint64_t size;		/* pool_size: bytes of frames */
	uint64_t page;		/* pool_page: bytes per page, a power of two */
	bool uring;		/* pool_io=uring: misses (and read-ahead) through
				 * io_uring, else pread */
	unsigned prefetch;	/* pool_prefetch: pages read ahead of each read */
	unsigned evict_batch;	/* pool_evict_batch: vmcache's pages evicted together */
};

/*
 * What an engine sees of its job: the same for every thread. The
 * controller fills it once when the job is set up (run/enginecfg.c
 * resolves the options below from the job's); an engine reads nothing
 * else of the job (docs/design.md, The engine contract, says why).
 */
struct engine_job {
	const char *name;	/* the job's name, for messages */
	struct target *targets;
	unsigned ntargets;
	unsigned depth;		/* request slots per thread (iodepth, or a loop's) */
	uint64_t req_max;	/* the longest request: the largest bs, or a replay's
				 * longest (each slot's buffer holds it) */
	uint64_t mem_available;	/* the host's MemAvailable when the job was set
				 * up (run/jobrun.c reads it), 0 = unknown */
	bool direct;		/* direct=1: requests go through fd_direct */
	bool uncached;		/* uncached=1: reads with RWF_DONTCACHE */
	bool atomic;		/* atomic=1: writes with RWF_ATOMIC */
	bool writes;		/* the job changes its targets (writes, trims):
				 * they are open O_RDWR, mappings writable */
	bool flushes;		/* a flush policy is set: IO_FLUSH requests come */
	bool replay;		/* read_iolog: requests of any length at any
				 * offset, up to req_max */
	bool prewarm;		/* prewarm=1: a pool fills itself in job_setup */
	int madvise;		/* madvise(2)'s advice for mapped targets (MADV_*) */
	struct engine_pool_cfg pool;
	/* Where the job's files are, as its options name them (filecreate
	 * makes them): filename='s "a:b:c", else numjobs x nrfiles scratch
	 * names in directory (NULL: the working directory). */
	const char *filename;
	const char *directory;
	unsigned numjobs, nrfiles;
	void *priv;		/* job_setup's state */
};

struct pool_counters;

/* What an engine sees of one thread of the job. */
struct engine_thread {
	const struct engine_job *ej;
	struct io_req *reqs;	/* ej->depth slots, buffers set (ENGINE_F_BUFFERS) */
	void *priv;		/* init's state */
	struct pool_counters *pool;	/* the thread's own pool counters (stats.h),
					 * for ENGINE_F_POOL; written by it alone */
	const struct target *targets;	/* ej->ntargets: the job's targets with
					 * descriptors of this thread's own, or
					 * NULL (engine_targets) */
	/* The run's and the job's stop flags: an engine that can wait on
	 * other threads (a pool's page, latch or frame) looks at them
	 * while it waits, and gives the request up with -ECANCELED once
	 * one is set, which the worker takes as the stop, not a failure. */
	const int *stop[2];
};

/* The targets a thread reads through: when the job's threads share
 * them, copies with open files of the thread's own (target_reopen; the
 * worker makes them for an engine that reads through descriptors), else
 * the job's. */
static inline const struct target *engine_targets(const struct engine_thread *et)
{
	return et->targets ? et->targets : et->ej->targets;
}

/* queue() return values besides -errno. */
#define ENGINE_QUEUED	0
#define ENGINE_DONE	1

/* engine_ops.flags */
#define ENGINE_F_ASYNC		(1u << 0)	/* iodepth > 1 means requests in flight */
#define ENGINE_F_NO_TARGET	(1u << 1)	/* needs no file (null) */
#define ENGINE_F_NO_DIRECT	(1u << 2)	/* direct=1 is a contradiction (mmap) */
#define ENGINE_F_BUFFERS	(1u << 3)	/* the worker gives each slot an aligned bs buffer */
#define ENGINE_F_MAPPED		(1u << 4)	/* requests are accesses to the target's mapping
						 * (mmap): consuming the bytes is the I/O */
#define ENGINE_F_UNCACHED	(1u << 6)	/* serves uncached=1 (RWF_DONTCACHE reads) */
#define ENGINE_F_ORDERED_FLUSH	(1u << 5)	/* async: a flush queued after requests runs after
						 * they complete (io_uring: IOSQE_IO_DRAIN); without
						 * it the worker drains requests in flight first */
#define ENGINE_F_POOL		(1u << 7)	/* a cache of its own, pool_size bytes (bufpool):
						 * misses read with O_DIRECT, prewarm fills the
						 * pool (job_setup), not the page cache; it
						 * counts into engine_thread.pool */
#define ENGINE_F_REGION		(1u << 8)	/* with ENGINE_F_POOL: the pool is one address
						 * space's region of base pages (vmcache), so
						 * pool_page >= the base page, threads only */
#define ENGINE_F_CREATES	(1u << 9)	/* with ENGINE_F_NO_TARGET: a request creates one of
						 * the job's files (filecreate); the virtual target
						 * holds a bs block per file */
/* Each flag its own bit: branches that each took the next free one
 * collided once (bufpool and uncached both on bit 6). */
#define ENGINE_F_ALL_ (ENGINE_F_ASYNC | ENGINE_F_NO_TARGET | ENGINE_F_NO_DIRECT | ENGINE_F_BUFFERS | \
		       ENGINE_F_MAPPED | ENGINE_F_ORDERED_FLUSH | ENGINE_F_UNCACHED | ENGINE_F_POOL | \
		       ENGINE_F_REGION | ENGINE_F_CREATES)
_Static_assert(ENGINE_F_ALL_ == (ENGINE_F_ASYNC + ENGINE_F_NO_TARGET + ENGINE_F_NO_DIRECT + ENGINE_F_BUFFERS +
				 ENGINE_F_MAPPED + ENGINE_F_ORDERED_FLUSH + ENGINE_F_UNCACHED + ENGINE_F_POOL +
				 ENGINE_F_REGION + ENGINE_F_CREATES),
	       "two engine flags share a bit");

struct engine_thread;
struct io_req;
/* engine_ops.prefetch, below. */
typedef void (*engine_prefetch_fn)(struct engine_thread *et, const struct io_req *next,
				   const struct io_req *after);

struct engine_ops {
	const char *name;
	const char *help;	/* one line for --cmdhelp=ioengine */
	unsigned flags;
	unsigned ops;		/* ENGINE_OP(IO_READ) | ...: what it serves */

	/* Once per job when its targets are open, before anything runs
	 * (optional): what only the targets can tell (bufpool's pool_page
	 * against their logical block size). An error here is an invalid
	 * job: exit 2, nothing run. */
	int (*prepare)(struct engine_job *ej, struct err *e);

	/* Once per job before threads start / after they end (optional):
	 * state every thread of the job shares, e.g. mmap's mappings. */
	int (*job_setup)(struct engine_job *ej, struct err *e);
	void (*job_teardown)(struct engine_job *ej);

	/* Per thread, in that thread (optional). */
	int (*init)(struct engine_thread *et, struct err *e);
	void (*exit)(struct engine_thread *et);

	int (*queue)(struct engine_thread *et, struct io_req *r);
	int (*submit)(struct engine_thread *et);
	/* Push what is still queued, then wait for at least @min
	 * completions; put up to @max in @done; return how many, or
	 * -errno. */
	int (*reap)(struct engine_thread *et, unsigned min, unsigned max, struct io_req **done);
	/* After the worker consumed a completed request's bytes (optional):
	 * what backs r->data may go. Called for every request the engine
	 * completed without error, by the thread that queued it, before
	 * its slot is used again. (offload= is refused for such an engine:
	 * its helpers would queue and the loop consume.) */
	void (*release)(struct engine_thread *et, struct io_req *r);
	/* The requests a read job's thread will queue next, when the loop
	 * knows them early (optional; the synchronous core's read loop,
	 * generator or replay, calls it just before it queues each
	 * request): @next follows the request about to be queued, @after
	 * (NULL when not known) follows @next. Only target, off, len and
	 * op are set; neither is a slot. A hint, nothing more: the engine
	 * may start bringing the requests' memory in (cache lines, not
	 * I/O) but must change nothing a request, another thread or the
	 * results could see, since a request hinted may never be queued
	 * (the loop can stop first) and no answer is awaited. An engine
	 * without it runs a loop with no trace of it. */
	engine_prefetch_fn prefetch;
	/* A write job's thread, after its loop and untimed, before verify
	 * reads back (optional): hand the target what the engine still
	 * holds of the job's writes (bufpool's dirty frames), so that any
	 * reader of the target sees them. 0 or -errno. */
	int (*writeback)(struct engine_thread *et);
};

/* fio's trims, the same in every engine that serves them, from the
 * calling thread: fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)
 * on a file, ioctl(BLKDISCARD) on a block device (engines.c). Sets
 * r->res (len, or -errno) and r->data NULL; returns ENGINE_DONE. */
int engine_trim(const struct target *t, struct io_req *r);

/* A flush from the calling thread, for an engine with no flush verb of
 * its own: fdatasync(2) when r->datasync, else fsync(2), on the buffered
 * descriptor (O_DIRECT is about the data path, a flush about the file).
 * Sets r->res (0 or -errno) and r->data NULL; returns ENGINE_DONE. */
int engine_flush(const struct target *t, struct io_req *r);

/*
 * What libaio's and posixaio's threads keep alike: their targets, the
 * descriptor a request goes to, the depth, and the requests refused at
 * submission, each of which completes with its error (so the worker
 * names its target and offset) and is handed to reap() first.
 */
struct engine_aio {
	const struct target *targets;
	bool direct;
	unsigned depth;			/* the thread's iodepth, at least 1 */
	struct io_req **failed;		/* refused, res set: a stack */
	unsigned nfailed;
};

/* For @et's thread: 0, or -ENOMEM with nothing held. */
int engine_aio_init(struct engine_aio *a, struct engine_thread *et);
void engine_aio_free(struct engine_aio *a);

static inline int engine_aio_fd(const struct engine_aio *a, const struct target *t)
{
	return a->direct ? t->fd_direct : t->fd;
}

/* @r was refused at submission with @res (-errno). */
static inline void engine_aio_refused(struct engine_aio *a, struct io_req *r, int64_t res)
{
	r->res = res;
	r->data = r->buf;
	a->failed[a->nfailed++] = r;
}

/* The refused requests into @done[@got..@max); the new count. */
static inline unsigned engine_aio_take_refused(struct engine_aio *a, struct io_req **done, unsigned got,
					       unsigned max)
{
	while (a->nfailed && got < max)
		done[got++] = a->failed[--a->nfailed];
	return got;
}

/* filecreate's files: filename='s count, else numjobs x nrfiles. */
unsigned engine_filecreate_files(const struct engine_job *ej);

/* engines.c: the table. Aliases (pread, sync) resolve to their engine. */
const struct engine_ops *engine_find(const char *name);
/* NULL-terminated list of every engine, for --cmdhelp and the man test. */
const struct engine_ops *const *engine_list(void);
/* Canonical name for @name (alias resolved), or NULL when unknown. */
const char *engine_canonical(const char *name);
/* 0 when @ops serves every operation in @need (ENGINE_OP bits: what the
 * job issues), else -EINVAL with a message naming the engine and the
 * operation. */
int engine_check_ops(const struct engine_ops *ops, unsigned need, struct err *e);

#endif
