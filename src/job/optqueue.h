/*
 * optqueue.h - fio's options about how an asynchronous job's requests
 * are reaped and ordered in flight: iodepth_batch_complete_min (alias
 * iodepth_batch_complete), iodepth_batch_complete_max and
 * serialize_overlap. What they do: run/worker.c's asynchronous loops
 * (wk->reap_min, wk->reap_max; worker_overlaps, run/overlap.h).
 *
 * Separate from options.c only to keep files short: OPTQUEUE_TABLE is
 * expanded inside option_table, so there is still one table.
 */
#ifndef FAULTLINE_OPTQUEUE_H
#define FAULTLINE_OPTQUEUE_H

#include <stddef.h>

#include "job/optdef.h"
#include "job/job.h"

#define OPTQUEUE_OFF(f) offsetof(struct job, f)

/* Entries of option_table (options.c). */
#define OPTQUEUE_TABLE \
	{ .name = "iodepth_batch_complete_min", .aliases = "iodepth_batch_complete", .type = OPT_INT, \
	  .off = OPTQUEUE_OFF(iodepth_batch_complete_min), .def = "1", .max = 4096, \
	  .help = "io_uring, libaio, posixaio: a reap waits for at least this many completions (at most those in flight); 0 waits for none, polling the kernel, as fio" }, \
	{ .name = "iodepth_batch_complete_max", .type = OPT_INT, \
	  .off = OPTQUEUE_OFF(iodepth_batch_complete_max), .def = "0", .max = 4096, \
	  .help = "io_uring, libaio, posixaio: a reap takes at most this many completions (0: every one there, up to iodepth; below the min: the min, as fio)" }, \
	{ .name = "serialize_overlap", .type = OPT_BOOL, .off = OPTQUEUE_OFF(serialize_overlap), \
	  .def = "0", .help = "a write job's request that overlaps one of its thread's requests in flight waits until those have completed (io_uring, libaio, posixaio); threads never write the same blocks at once anyway" },

#endif
