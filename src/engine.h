/*
 * engine.h - the interface an I/O engine fills in.
 *
 * An engine only decides how bytes arrive. The worker loop (worker.c),
 * the offset generator (gen.c), the consumer (touch.c) and the
 * statistics are shared by all engines. Adding an engine is one source
 * file defining a `const struct engine_ops` and one line in engines.c.
 *
 * A synchronous engine implements queue() only and completes every
 * request inside it. An asynchronous engine queues in queue(), pushes
 * what is queued to the kernel in submit() and hands back completions in
 * reap(). reap() first pushes anything still queued, so the worker calls
 * submit() only in the middle of a batch (iodepth_batch_submit): the
 * last requests before a wait go to the kernel with the wait.
 * Functions return 0 or -errno (positive counts where noted) and never
 * print.
 */
#ifndef FAULTLINE_ENGINE_H
#define FAULTLINE_ENGINE_H

#include <stdint.h>

#include "err.h"

struct worker;
struct job_run;

struct io_req {
	uint64_t off;		/* absolute byte offset in the target */
	uint32_t len;
	uint16_t target;	/* index into the job's targets */
	uint16_t slot;		/* index in the worker's request array */
	uint8_t *buf;		/* this slot's aligned buffer (ENGINE_F_BUFFERS) */
	const uint8_t *data;	/* set at completion: where the bytes are */
	int64_t res;		/* set at completion: bytes read or -errno */
	uint64_t t_issue;	/* ns, CLOCK_MONOTONIC; owned by the worker */
};

/* queue() return values besides -errno. */
#define ENGINE_QUEUED	0
#define ENGINE_DONE	1

/* engine_ops.flags */
#define ENGINE_F_ASYNC		(1u << 0)	/* iodepth > 1 means requests in flight */
#define ENGINE_F_NO_TARGET	(1u << 1)	/* needs no file (null) */
#define ENGINE_F_NO_DIRECT	(1u << 2)	/* direct=1 is a contradiction (mmap) */
#define ENGINE_F_BUFFERS	(1u << 3)	/* worker gives each slot an aligned bs buffer */
#define ENGINE_F_MAPPED		(1u << 4)	/* requests are accesses to the target's mapping
						 * (mmap): consuming the bytes is the I/O */

struct engine_ops {
	const char *name;
	const char *help;	/* one line for --cmdhelp=ioengine */
	unsigned flags;

	/* Once per job before workers start / after they end (optional):
	 * state every thread of the job shares, e.g. mmap's mappings. */
	int (*job_setup)(struct job_run *jr, struct err *e);
	void (*job_teardown)(struct job_run *jr);

	/* Per worker, in the worker's own thread (optional). */
	int (*init)(struct worker *w, struct err *e);
	void (*exit)(struct worker *w);

	int (*queue)(struct worker *w, struct io_req *r);
	int (*submit)(struct worker *w);
	/* Push what is still queued, then wait for at least @min
	 * completions; put up to @max in @done; return how many, or
	 * -errno. */
	int (*reap)(struct worker *w, unsigned min, unsigned max, struct io_req **done);
};

/* engines.c: the table. Aliases (pread, sync) resolve to their engine. */
const struct engine_ops *engine_find(const char *name);
/* NULL-terminated list of every engine, for --cmdhelp and the man test. */
const struct engine_ops *const *engine_list(void);
/* Canonical name for @name (alias resolved), or NULL when unknown. */
const char *engine_canonical(const char *name);

#endif
