/*
 * writes.h - what one worker keeps to write: which request of
 * a mixed job writes, which block it writes, when to flush, and which
 * blocks to read back for verify=crc32c.
 *
 * All of it is the worker's own: nothing here is shared with another
 * thread, nothing on the hot path (the inline functions) allocates,
 * locks or makes a system call.
 *
 *   the mix        rw=rw/randrw: each request reads or writes, drawn from
 *                  the worker's own generator with rwmixread (xorshift64*,
 *                  seeded from the job's seed, so randseed repeats it)
 *   placement      the offset generator (gen.c) gives one offset stream for
 *                  reads and writes, as fio does. When several threads of a
 *                  job share a target and write at random, thread w of n
 *                  writes only the blocks b with b mod n == w (the block
 *                  drawn, moved to the nearest such block): two threads
 *                  never write one block at the same time, which would tear
 *                  it (mmap stores, blocks over several pages, O_DIRECT)
 *                  and fail verify for a reason that is the job's own
 *   the policy     fsync=N / fdatasync=N: a flush after every N writes of
 *                  the thread (counted alone, as fio's modulo); sync_interval:
 *                  a flush when that long has passed since the thread's last
 *                  flush of any kind and it wrote since
 *   targets        which targets the thread wrote since its last flush (a
 *                  flush makes each of them durable, one request each) and
 *                  at all (end_fsync flushes those once at the end)
 *   verify         a bit per bs block of each target, set when written
 */
#ifndef FAULTLINE_WRITES_H
#define FAULTLINE_WRITES_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "workload/gen.h"
#include "workload/workload.h"
#include "workload/verify.h"

/* writes_target.state */
#define WRITES_DIRTY	(1u << 0)	/* written since the last flush */
#define WRITES_WRITTEN	(1u << 1)	/* written at all */

struct writes_target {
	uint64_t base;			/* the region, as the generator's */
	uint64_t nblocks;		/* whole bs blocks in it */
	unsigned state;
	struct verify_map vmap;		/* verify=crc32c, else bits NULL */
};

/* The flush policy's state (pure: tested on its own). */
struct writes_flush {
	unsigned every;			/* fsync=N or fdatasync=N; 0 = off */
	unsigned count;			/* writes since the last every-N flush */
	uint64_t interval;		/* sync_interval in clock units; 0 = off */
	uint64_t last;			/* when the last flush was decided (or the start) */
};

struct writes {
	/* The mix: write when the draw is at or above rwmixread. */
	bool mixed;
	unsigned rwmixread;
	uint64_t mix;

	uint64_t gen;			/* generation stamped into the next block */
	uint32_t bs;
	unsigned bs_shift;		/* log2(bs) when a power of two, else 0 */
	unsigned own_n, own_w;		/* own_n > 1: write only blocks b % own_n == own_w */

	unsigned ntargets;		/* the worker's targets, counted from 0 */
	struct writes_target *t;
	unsigned *dirty;		/* targets with WRITES_DIRTY, ndirty of them */
	unsigned ndirty;

	struct writes_flush fl;
	bool verify;
	int sum;			/* verify=crc64, md5...: the header's checksum
					 * (blockdata_stamp_sum); 0: crc32c */
};

struct writes_config {
	const struct workload_job *wj;
	unsigned worker, nworkers;	/* this worker; threads sharing its targets */
	uint64_t seed;			/* the job's */
	uint64_t interval;		/* sync_interval in the caller's clock units */
};

/* For worker @c->worker over @ntargets regions (the generator's). Fails
 * with -EINVAL when a region has fewer blocks than threads share it,
 * -ENOMEM. Undone by writes_free on any path. */
int writes_setup(struct writes *ws, const struct writes_config *c,
		 const struct gen_region *regions, unsigned ntargets, struct err *e);
void writes_free(struct writes *ws);

/* The flush policy alone (writes_flush_*): start at @now. */
void writes_flush_init(struct writes_flush *f, unsigned every, uint64_t interval, uint64_t now);

/*
 * After a write at @now (any clock, the one interval is in; unused
 * without an interval): is a flush due? Counts the write. A flush that
 * is due restarts the interval from @now: sync_interval measures from
 * the last flush the thread decided on, of either kind.
 */
static inline bool writes_flush_due(struct writes_flush *f, uint64_t now)
{
	bool due = false;

	if (f->every && ++f->count >= f->every) {
		f->count = 0;
		due = true;
	}
	if (f->interval && now - f->last >= f->interval)
		due = true;
	if (due)
		f->last = now;
	return due;
}

/* True: this request writes; false: it reads. */
static inline bool writes_pick(struct writes *ws)
{
	uint64_t x = ws->mix;

	if (!ws->mixed)
		return true;
	/* xorshift64*: the top 32 bits of the product are uniform enough
	 * for a percentage, and a multiply-shift avoids a division. */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ws->mix = x;
	return (((x * 0x2545f4914f6cdd1dull) >> 32) * 100 >> 32) >= ws->rwmixread;
}

/* Block index of @off in target @t. */
static inline uint64_t writes_block(const struct writes *ws, const struct writes_target *t,
				    uint64_t off)
{
	uint64_t rel = off - t->base;

	return ws->bs_shift ? rel >> ws->bs_shift : rel / ws->bs;
}

/*
 * A write the generator placed at @off of target @t (the worker's index):
 * where it goes (moved to a block of this worker's when threads share
 * the target), recorded as dirty and, for verify, as written.
 */
/* Target @t is written: dirty until its next flush, and written at all. */
static inline void writes_mark(struct writes *ws, unsigned t)
{
	struct writes_target *wt = &ws->t[t];

	if (!(wt->state & WRITES_DIRTY)) {
		wt->state |= WRITES_DIRTY | WRITES_WRITTEN;
		ws->dirty[ws->ndirty++] = t;
	}
}

static inline uint64_t writes_place(struct writes *ws, unsigned t, uint64_t off)
{
	struct writes_target *wt = &ws->t[t];
	uint64_t blk = writes_block(ws, wt, off);

	if (ws->own_n > 1) {
		blk = blk - blk % ws->own_n + ws->own_w;
		if (blk >= wt->nblocks)
			blk -= ws->own_n;
		off = wt->base + blk * ws->bs;
	}
	writes_mark(ws, t);
	if (ws->verify)
		verify_map_set(&wt->vmap, blk);
	return off;
}

/* The dirty targets have been handed to flushes: none is dirty now. */
static inline void writes_clean(struct writes *ws)
{
	for (unsigned i = 0; i < ws->ndirty; i++)
		ws->t[ws->dirty[i]].state &= ~WRITES_DIRTY;
	ws->ndirty = 0;
}

#endif
