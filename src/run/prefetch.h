/*
 * prefetch.h - keep the next W bytes of each sequential stream requested
 * ahead of an mmap reader (prefetch=MODE:W).
 *
 * The reader calls prefetch_advance() with each request before it
 * touches the bytes. Per stream (a loop's stream, or one of a worker's
 * targets) the module remembers how far ahead it has asked for pages;
 * once the reader has eaten a quarter of the window, it asks for the
 * next quarter. How it asks is the mode:
 *
 *   willneed   madvise(MADV_WILLNEED) on the mapping, from the reader:
 *              starts readahead and returns without waiting for it
 *   readahead  readahead(2) on the file, from the reader: the same
 *              through the file descriptor
 *   populate   madvise(MADV_POPULATE_READ) (Linux 5.14+), which waits
 *              until the pages are read, so it runs on a helper thread
 *   touch      a helper thread reads one byte per page of the range,
 *              taking the faults (and their waits) the reader would
 *
 * The two helper modes hand ranges to one helper per worker through the
 * offload pool, fire and forget; when the helper is too far behind to
 * take another range, that step is skipped and counted.
 */
#ifndef FAULTLINE_PREFETCH_H
#define FAULTLINE_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "job/job.h"

struct target;
struct thread_stats;

struct prefetch_key {
	uint64_t lo, hi;	/* the stream's bytes: [lo, hi) of its target */
	uint64_t cur;		/* reader's last offset (the helper reads it) */
	uint64_t next;		/* requested up to here */
	unsigned target;
};

struct prefetch;

/* Helper threads one worker's prefetch runs: 1 for populate and touch. */
unsigned prefetch_helpers(const struct job *j);

/* What this kernel cannot do: MADV_POPULATE_READ before 5.14. Run at
 * prepare time, so the job is refused (exit 2) before anything runs. */
int prefetch_check(const struct job *j, struct err *e);

/*
 * For a reader of @targets (a worker of job @j, counting into
 * @reader_st), @nkeys streams; set each with prefetch_key_set before
 * the first advance. @helper_st: the helper's stats slot (helper modes),
 * else NULL. Runs in the worker's thread (the helper inherits its CPU
 * placement). -errno with @e filled.
 */
int prefetch_start(struct prefetch **pp, const struct job *j, const struct target *targets,
		   struct thread_stats *reader_st, unsigned nkeys,
		   struct thread_stats *helper_st, struct err *e);
void prefetch_key_set(struct prefetch *p, unsigned key, unsigned target, uint64_t lo,
		      uint64_t hi);
void prefetch_stop(struct prefetch *p);
/* Ranges handed to the helper and not done yet (those done are taken
 * back first): 0 once it has filled all it was asked to, so a caller can
 * wait for that rather than for a time. 0 without a helper. */
unsigned prefetch_pending(struct prefetch *p);

/* Rest of the hot path, out of line: a step to request or a jump. */
void prefetch_step(struct prefetch *p, struct prefetch_key *k, uint64_t off, uint32_t len);

/* The window, its step and the keys: what the inline check needs. */
struct prefetch_view {
	uint64_t window, step;
	struct prefetch_key *keys;
};

static inline const struct prefetch_view *prefetch_view(const struct prefetch *p)
{
	return (const struct prefetch_view *)p;
}

/* The reader is about to read [off, off+len) of stream @key. */
static inline void prefetch_advance(struct prefetch *p, unsigned key, uint64_t off, uint32_t len)
{
	const struct prefetch_view *v = prefetch_view(p);
	struct prefetch_key *k = &v->keys[key];

	/* Common case: in order, and less than a step eaten since the last
	 * request. One relaxed store publishes the cursor to the helper. */
	if (__builtin_expect(off >= k->cur && off <= k->next &&
			     off + len + v->window < k->next + v->step, 1)) {
		__atomic_store_n(&k->cur, off, __ATOMIC_RELAXED);
		return;
	}
	prefetch_step(p, k, off, len);
}

#endif
