/*
 * pool_span.h - how both buffer pools (bufpool.c, vmcache.c) serve a
 * request longer than one of their pages, or astride two: only a
 * replayed log's requests do (jobcheck.c refuses a bs that does not
 * divide pool_page).
 *
 * One policy for both: page by page, one latch held at a time. A read
 * latches each page shared in turn, copies its part out into a buffer of
 * the request's own and gives the latch back, as a database copies an
 * extent out of its pool; a write latches each page alone in turn (not
 * read first when the write covers it whole), copies its part in and
 * gives it back dirty. Every page counts a hit or a miss.
 *
 * Why not hold the whole run, serving the read in place as a one-page
 * read is: a thread holding some pages while it waits for the next one
 * waits on whoever waits on it. Two threads each holding a part of the
 * pool a writer or an evictor needs, or a span of more pages than the
 * pool has room for, never finish, or finish only when a stop calls
 * their waits off. Holding one page at a time, a span waits as a
 * one-page request does, for that page alone. The copy costs a memcpy
 * of the request's bytes, which a replay's spans (a database's 8 KiB
 * reads over 4 KiB pool pages) can afford.
 *
 * The pools differ only in how a page is latched and given back: the
 * two callbacks of struct pool_span_ops. Functions return 0 or -errno
 * and never print.
 */
#ifndef FAULTLINE_POOL_SPAN_H
#define FAULTLINE_POOL_SPAN_H

#include <stdbool.h>
#include <stdint.h>

struct pool_span_ops {
	/* Page @page latched: shared (@excl false), or alone to modify it
	 * (@excl true; @whole: all of it will be overwritten, so a missing
	 * page is not read first). *@data: its bytes; *@ref: what put
	 * takes back. 0 or -errno (nothing held then). */
	int (*get)(void *arg, uint64_t page, bool excl, bool whole, uint8_t **data,
		   uint64_t *ref);
	/* Give back what get returned for @page; @dirty: it was written. */
	void (*put)(void *arg, uint64_t page, uint64_t ref, bool dirty);
	void *arg;
	unsigned shift;		/* log2 of the pool's page bytes */
};

/* @len bytes from byte @in_page of page @page on, into @dst. 0, or the
 * first error of get (the bytes of the pages before it are copied). */
int pool_span_read(const struct pool_span_ops *o, uint64_t page, uint32_t in_page, uint8_t *dst,
		   uint32_t len);

/* @len bytes of @src written from byte @in_page of page @page on. 0, or
 * the first error of get (the pages before it are written, dirty). */
int pool_span_write(const struct pool_span_ops *o, uint64_t page, uint32_t in_page,
		    const uint8_t *src, uint32_t len);

#endif
