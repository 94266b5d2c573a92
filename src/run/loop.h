/*
 * loop.h - one thread driving many streams, as an event loop does
 * (loop=N).
 *
 * A stream is a sequential scan (or random reads) over its own file, or
 * over its own slice of a single target. The loop thread serves them in
 * turn, and how much they overlap is the engine's doing:
 *
 *   io_uring, libaio   iodepth requests of every stream in flight at once
 *                      (one each by default): true concurrency
 *   psync, mmap, null  one request at a time, stream after stream: a
 *                      pread or a page fault stops every stream (the
 *                      async hazard)
 *   ... with offload   each request goes to a helper thread and the loop
 *                      waits for completions, one request per stream in
 *                      flight, at most offload_permits at once
 *
 * Per-stream counters live in a shared mapping made at prepare time, so
 * a loop running in a mem_limit child process publishes them as threads
 * do; only the loop thread writes them.
 */
#ifndef FAULTLINE_LOOP_H
#define FAULTLINE_LOOP_H

#include <stdint.h>

#include "lib/err.h"
#include "workload/gen.h"
#include "job/job.h"

struct worker;
struct target;

/* One stream's progress: written by the loop thread only. */
struct stream_stats {
	uint64_t ops;
	uint64_t bytes;
};

struct loop_stream {
	struct gen gen;
	unsigned target;	/* index into the job's targets */
	uint64_t base, len;	/* the stream's region of that target */
};

struct loop_setup {
	unsigned n;
	struct loop_stream *streams;
	struct stream_stats *stats;	/* n entries, MAP_SHARED */
	struct stream_stats *base;	/* the controller's copy at measure start */
};

/* Build the streams of a loop job (after its targets are open, before
 * anything runs): one per target, or slices of the only one. */
int loop_prepare(struct loop_setup **lp, const struct job *j, const struct target *targets,
		 unsigned tfirst, unsigned tcount, uint64_t seed, struct err *e);
void loop_destroy(struct loop_setup *L);

/* The controller: stream counters at the start of the measured part, so
 * per-stream totals exclude ramp_time as the job's do. */
void loop_take_base(struct loop_setup *L);

/* In the worker thread, around loop_run: start and stop the offload
 * helpers and the prefetcher (their start-up is not timed). */
int loop_worker_init(struct worker *w, struct err *e);
void loop_worker_exit(struct worker *w);
/* The loop itself; failures go to the worker's stats. */
void loop_run(struct worker *w);

#endif
