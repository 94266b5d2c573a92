/*
 * offload.h - a pool of helper threads that run blocking requests for
 * one thread (offload=K).
 *
 * An event loop cannot wait inside a page fault or a pread without
 * stopping every stream it drives; handing the request to a helper and
 * waiting for completions instead is what async runtimes do with file
 * I/O (tokio's spawn_blocking, libuv's thread pool). The hand-off is one
 * single-producer/single-consumer ring per helper in each direction and
 * a futex per sleeper: no locks, no allocation, and a system call only
 * to wake a thread that went to sleep (which is the hand-off's cost, and
 * what an offloaded no-op's latency measures).
 *
 * One thread (the owner) submits and reaps; the pool does not order
 * requests, limit how many run (the owner does: offload_permits), or
 * look inside them: run() does the work.
 */
#ifndef FAULTLINE_OFFLOAD_H
#define FAULTLINE_OFFLOAD_H

#include <stdbool.h>

#include "engines/engine.h"
#include "lib/err.h"
#include "lib/stats.h"

struct offload_pool;

struct offload_config {
	unsigned nhelpers;
	/* Most requests the owner has submitted and not yet reaped; sizes
	 * the rings so a submit never finds one full. */
	unsigned max_outstanding;
	/* Runs in helper @helper; sets r->res (and r->data). */
	void (*run)(void *arg, unsigned helper, struct io_req *r);
	void *arg;
	/* nhelpers slots the helpers publish tid, running/done and their
	 * faults in (the sampler reads them), or NULL. */
	struct thread_stats *stats;
	/* true: helpers push completions back for offload_reap (offload);
	 * false: fire and forget, reaped without waiting (prefetch). */
	bool notify;
};

/* Start the helpers. -errno with @e filled; nothing left running. */
int offload_start(struct offload_pool **pp, const struct offload_config *c, struct err *e);

/* Hand @r to the least busy helper (waking it if it sleeps). 0, or
 * -EBUSY when max_outstanding requests are already out (a caller bug). */
int offload_submit(struct offload_pool *p, struct io_req *r);

/* Completed requests, at most @max, into @done; with @wait, sleeps until
 * there is at least one (the caller must have one outstanding). */
unsigned offload_reap(struct offload_pool *p, struct io_req **done, unsigned max, bool wait);

/* Requests submitted and not yet reaped. */
unsigned offload_outstanding(const struct offload_pool *p);

/* Let the helpers finish what they hold, stop and join them; frees @p. */
void offload_stop(struct offload_pool *p);

#endif
