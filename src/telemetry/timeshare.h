/*
 * timeshare.h - where a job's threads' time went: their time on a CPU
 * (schedstat) and the kernel's delay accounting (taskstats.h) split
 * into shares of the threads' wall time, threads x interval, that add
 * to 100 % and never more.
 *
 * The kernel's delays are spans of wall time that can nest, so they
 * are not summed as they come:
 *  - a thrashing wait (a page read back after it was evicted) and a
 *    swap-in are block-I/O waits too (the task sleeps in io_schedule
 *    for the read): they are taken out of the block-I/O delay;
 *  - direct reclaim and compaction are work the task does itself,
 *    on a CPU and waiting for one: they are taken out of its CPU time
 *    first, then its wait for a CPU, then its block-I/O wait.
 * What is left of the window once every part is counted is time the
 * threads slept by choice or on anything the kernel does not account
 * (pacing, thinktime, a lock, a futex). When the parts exceed the window
 * (readings a few microseconds apart), they are scaled down together.
 * Pure functions: tested in test_taskstats.c.
 */
#ifndef FAULTLINE_TIMESHARE_H
#define FAULTLINE_TIMESHARE_H

#include <stdbool.h>
#include <stdint.h>

/* The parts, in the order of the CSV's time_* columns. */
enum timeshare_part {
	TIMESHARE_CPU,
	TIMESHARE_RUNQ,
	TIMESHARE_BLKIO,
	TIMESHARE_RECLAIM,
	TIMESHARE_THRASH,
	TIMESHARE_COMPACT,
	TIMESHARE_SWAPIN,
	TIMESHARE_OTHER,
	TIMESHARE_NPARTS
};

/* Names for the JSON ("cpu", "runq", ...) and words for the summary. */
extern const char *const timeshare_names[TIMESHARE_NPARTS];
extern const char *const timeshare_words[TIMESHARE_NPARTS];

/* What the kernel counted for some threads over some window, in ns:
 * every part but OTHER, as read (CPU from schedstat, the rest from
 * taskstats). */
struct timeshare_ns {
	uint64_t ns[TIMESHARE_NPARTS];
};

/*
 * Split @window_ns (threads x seconds, in ns) by @in into tenths of a
 * percent in @tenths: every part rounded down, OTHER the rest, so they
 * add to exactly 1000. false (and all zero) for an empty window.
 */
bool timeshare_split(const struct timeshare_ns *in, uint64_t window_ns, unsigned tenths[TIMESHARE_NPARTS]);

/* @a += @b, part by part. */
void timeshare_add(struct timeshare_ns *a, const struct timeshare_ns *b);

#endif
