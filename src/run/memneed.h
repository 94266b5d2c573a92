/*
 * memneed.h - the smallest mem_limit a job's cgroup can live within
 * so a limit the kernel cannot keep is refused before anything
 * runs instead of ending in the OOM killer.
 *
 * Two parts the cgroup is charged and cannot reclaim while the job runs:
 *  - the worker process itself: its private memory, its threads' stacks,
 *    its page tables and the kernel's memory for its tasks, measured at
 *    the job's thread count by a dry start (jobhost_measure), plus the
 *    page tables its mappings will fill (mmap), computed;
 *  - page cache under read: pages the kernel's read-ahead has added and
 *    locked until the device answers, which reclaim must skip. A window
 *    is the target device's read_ahead_kb; how many can be in flight at
 *    once was measured on this project's host (tests/bench/README.md,
 *    "mem_limit: read-ahead windows in flight"): one per reader plus the
 *    next window read asynchronously, and with worker processes two per
 *    process (mmap: pages mapped in several address spaces are kept
 *    active by reclaim).
 * Pure: the measuring is jobhost.c's, the refusal's words are here.
 */
#ifndef FAULTLINE_MEMNEED_H
#define FAULTLINE_MEMNEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "job/job.h"

struct mem_need {
	uint64_t charge;	/* measured: the worker process(es), file pages excluded */
	unsigned tasks;		/* threads and processes it was measured at */
	uint64_t pagetables;	/* mmap: page tables of the job's mappings, computed */
	uint64_t stock;		/* charged ahead per CPU (memcg batches), computed */
	uint64_t window;	/* bytes of one read-ahead window (read_ahead_kb) */
	int window_known;	/* 0: no read_ahead_kb could be read */
	unsigned windows;	/* windows that may be in flight at once */
	uint64_t prefetch;	/* prefetch=...:W, W per stream kept requested */
	char dev[32];		/* where read_ahead_kb was read */
	char why[160];		/* why that many windows (or none) */
};

/*
 * The read-ahead part of @j's need: how many windows its reads can have
 * in flight (0 when they bypass read-ahead: direct=1, random advice, no
 * page cache at all), and why. @mapped: the engine maps its targets;
 * @page_cache: its reads go through the page cache; @readers: tasks that
 * read the targets at once (workers and their offload and prefetch
 * helpers).
 */
void mem_need_windows(const struct job *j, bool mapped, bool page_cache, unsigned readers,
		      struct mem_need *m);

/* Page tables a mapping of @len bytes fills when every page is touched:
 * one 8-byte entry per page, in tables of a page each, plus the level
 * above (x86-64 and arm64 4 KiB pages). */
uint64_t mem_need_pagetables(uint64_t len, uint64_t page);

/* What the kernel charges a cgroup ahead of use: a batch of 64 pages
 * (MEMCG_CHARGE_BATCH) per CPU its @tasks charge from, so a reading of
 * the charge can be that far from the next one. */
uint64_t mem_need_stock(unsigned ncpus, unsigned tasks, uint64_t page);

/* The smallest limit that works: every part, plus one page. */
uint64_t mem_need_total(const struct mem_need *m);

/* The limit a refusal names, in MiB: the need, plus room for the next
 * run's measurement of the charge to come out a few pages higher,
 * rounded up. */
uint64_t mem_need_named(const struct mem_need *m);

/* 0 when @j's mem_limit is above the need, else -EINVAL with a message
 * that names the worker's charge, the read-ahead window and the
 * smallest limit that works. */
int mem_need_check(const struct job *j, const struct mem_need *m, struct err *e);

#endif
