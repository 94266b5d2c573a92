/*
 * perfev.h - kernel evidence per job: counters the kernel
 * keeps for one job's own tasks, through perf_event_open(2).
 *
 * System-wide counters cannot tell two concurrent jobs apart; these can.
 * The kernel counts and the sampler reads: nothing is added to the I/O
 * path. A job's counters are opened on its crew's leader (the task every
 * thread and process of the job descends from: a thread of the run, or
 * the mem_limit worker process) while it waits to start, with inherit,
 * so every task it starts afterwards (workers, loop, offload and
 * prefetch helpers, thread=0 worker processes) is counted, and one
 * read() sums them all, the exited ones included.
 *
 * What is counted, and from where:
 *   faults, major faults,              software events
 *   context switches, CPU migrations
 *   TLB flushes by reason              tracepoint tlb:tlb_flush, one counter
 *                                      per reason filter; the reason numbers
 *                                      come from the tracepoint's format file.
 *                                      Sent (IPIs) and local flushes are the
 *                                      job's own; a shootdown received is
 *                                      counted in whichever task the IPI
 *                                      interrupted
 *   page-cache additions               filemap:mm_filemap_add_to_page_cache,
 *                                      one counter per folio order, so that
 *                                      pages = sum of count << order
 *   reclaim entries                    vmscan:mm_vmscan_direct_reclaim_begin
 *                                      and mm_vmscan_memcg_reclaim_begin
 *   dTLB-load-misses, cycles           the hardware PMU, where there is one
 *
 * Host facts are read below two roots, so tests use recorded fixtures:
 * the sysfs root (tracefs wherever libtracefs finds it mounted for the
 * live /sys, at <sys>/kernel/tracing or <sys>/kernel/debug/tracing in a
 * recorded tree; every format parsed by libtraceevent, see tracefmt.h;
 * PMUs in <sys>/bus/event_source/devices,
 * the largest folio in <sys>/kernel/mm/transparent_hugepage) and the
 * procfs root (<proc>/sys/kernel/perf_event_paranoid).
 *
 * Functions return 0 or -errno and never print.
 */
#ifndef FAULTLINE_PERFEV_H
#define FAULTLINE_PERFEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

/* What a job reports: one total each. */
enum perfev_counter {
	PERFEV_FAULTS,		/* page faults, minor and major */
	PERFEV_MAJFLT,		/* major faults (the ones that waited for I/O) */
	PERFEV_CSW,		/* context switches */
	PERFEV_MIGRATIONS,	/* CPU migrations */
	PERFEV_TLB_IPI,		/* TLB flushes that sent shootdown IPIs */
	PERFEV_TLB_LOCAL,	/* TLB flushes done on the local CPU only */
	PERFEV_TLB_REMOTE,	/* shootdowns received and done while a task of the job ran */
	PERFEV_TLB_WRONG_CPU,	/* ... received for an address space not loaded there */
	PERFEV_PGCACHE_ADD,	/* base pages added to the page cache */
	PERFEV_DIRECT_RECLAIM,	/* entries into global direct reclaim */
	PERFEV_MEMCG_RECLAIM,	/* entries into memory-cgroup reclaim */
	PERFEV_DTLB_MISS,	/* dTLB-load-misses (PMU) */
	PERFEV_CYCLES,		/* CPU cycles (PMU) */
	PERFEV_NR
};

/* The counter's JSON key ("tlb_ipi") and what it is ("TLB shootdown
 * IPIs sent"). */
const char *perfev_key(enum perfev_counter c);
const char *perfev_label(enum perfev_counter c);
/* The kernel source behind it: "software event", "tlb:tlb_flush", ... */
const char *perfev_source(enum perfev_counter c);

/* ---- what the host offers: decided once per run ---- */

#define PERFEV_MAX_EVENTS 32
#define PERFEV_WHY_MAX 256

/* Groups read with one read(2) each: software events and tracepoints
 * are always counted; PMU events may be multiplexed and are scaled. */
enum perfev_group { PERFEV_GROUP_SW, PERFEV_GROUP_PMU, PERFEV_NGROUPS };

/* One perf event to open, and what its count adds to. */
struct perfev_event {
	uint32_t type;			/* PERF_TYPE_* */
	uint64_t config;
	bool exclude_kernel;		/* user-space only (perf_event_paranoid) */
	char filter[64];		/* tracepoint filter, "" for none */
	uint8_t counter;		/* enum perfev_counter */
	uint8_t shift;			/* count << shift (a folio's order) */
	uint8_t group;			/* enum perfev_group */
};

/* tracefmt_find's answer (tracefmt.h), in the same order. */
enum perfev_tracefs_state {
	PERFEV_TRACEFS_OK,
	PERFEV_TRACEFS_UNMOUNTED,	/* the mount point exists, nothing on it */
	PERFEV_TRACEFS_DENIED,		/* mounted, not readable by us */
	PERFEV_TRACEFS_ABSENT,		/* no mount point: a kernel without tracing */
};

struct perfev_plan {
	unsigned nev;
	struct perfev_event ev[PERFEV_MAX_EVENTS];
	bool avail[PERFEV_NR];
	/* Unavailable: why. Available: a note ("user-space faults only"),
	 * or "". */
	char why[PERFEV_NR][PERFEV_WHY_MAX];

	/* What was found, for --check-system. */
	int paranoid;			/* perf_event_paranoid, or INT_MIN unknown */
	bool privileged;		/* kernel events may be counted */
	enum perfev_tracefs_state tracefs;
	char tracefs_dir[256];		/* the events directory used, or looked for */
	bool pgcache_orders;		/* one counter per folio order */
	unsigned page_size;		/* bytes of a base page */
	unsigned max_order;		/* the largest folio order counted apart */
	char pmus[256];			/* event sources in <sys>/bus/event_source/devices */
	bool has_pmu;			/* a CPU PMU among them */
	bool recorded;			/* built from a recorded tree, not tried */

	/* One event per tracepoint kept open, disabled, by plan_verify
	 * until perfev_plan_release: while any perf event of a tracepoint
	 * is open, closing another is quick; closing the last one waits
	 * for an RCU grace period (the kernel's perf_trace_event_unreg),
	 * 20 to 50 ms each on this loaded 2-CPU VM. */
	unsigned nanchor;
	int anchor[PERFEV_MAX_EVENTS];
	uint64_t anchor_config[PERFEV_MAX_EVENTS];	/* the tracepoint's id */
};

/*
 * Read what the host says (tracefs, PMUs, perf_event_paranoid) below
 * @sysroot and @procroot and list the events to open; *no system call
 * besides file reads*, so unit tests run it on fixtures. @root is
 * whether the caller may count kernel events (perfev_privileged()).
 */
void perfev_plan_build(struct perfev_plan *p, const char *sysroot, const char *procroot,
		       bool root);
/* Open each planned event once on the calling thread to find out what
 * this kernel and these privileges allow; drop and explain the rest. */
void perfev_plan_verify(struct perfev_plan *p);
/* Close the plan's held events (plan_verify's), after the last job's
 * counters closed: a grace period each, one after another (the kernel
 * waits under its event mutex), about 4 x 40 ms here, after the
 * outputs are written. */
void perfev_plan_release(struct perfev_plan *p);
/* Both: the plan below these roots, verified when they are the live
 * /sys and /proc (a recorded tree's ids mean nothing to this kernel:
 * p->recorded says it was not tried). */
void perfev_probe(struct perfev_plan *p, const char *sysroot, const char *procroot);
/* True when the caller may count events in the kernel: root, or
 * CAP_PERFMON / CAP_SYS_ADMIN (perf_event_open's own test). */
bool perfev_privileged(void);
/* Any counter available at all. */
bool perfev_any(const struct perfev_plan *p);

/* ---- one job's counters ---- */

struct perfev_values {
	bool ok[PERFEV_NR];
	uint64_t v[PERFEV_NR];
};

struct perfev_set {
	const struct perfev_plan *plan;
	int fd[PERFEV_MAX_EVENTS];	/* per planned event, -1 = not open */
	int leader[PERFEV_NGROUPS];	/* each group's leader fd, -1 = empty */
	unsigned nmemb[PERFEV_NGROUPS];
	uint8_t memb[PERFEV_NGROUPS][PERFEV_MAX_EVENTS];	/* event indices, read order */
	bool ok[PERFEV_NR];		/* counters every event of which is open */
};

/*
 * Open the plan's events on task @tid (a thread id; 0 = the caller)
 * with inherit, so tasks it starts later are counted too. Counters that
 * cannot be opened are left out (set->ok); returns 0 when anything is
 * counted, else -errno with @e saying why.
 */
int perfev_open(struct perfev_set *s, const struct perfev_plan *p, pid_t tid, struct err *e);
/* The totals so far of every counter (exited tasks included). */
int perfev_read(const struct perfev_set *s, struct perfev_values *out);
void perfev_close(struct perfev_set *s);
/* The highest descriptor the set holds, -1 when none. */
int perfev_highest_fd(const struct perfev_set *s);

/*
 * Decode one group read (PERF_FORMAT_GROUP with TOTAL_TIME_ENABLED and
 * TOTAL_TIME_RUNNING: nr, enabled, running, then nr values in the order
 * the events joined) of @n bytes into @out, adding each value << shift
 * to its counter. A multiplexed group (running < enabled) is scaled by
 * enabled / running; one that never ran leaves its counters not ok.
 * 0 or -EBADMSG.
 */
int perfev_decode_group(const void *buf, size_t n, const struct perfev_plan *p,
			const uint8_t *memb, unsigned nmemb, struct perfev_values *out);

#endif
