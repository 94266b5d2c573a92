/*
 * samplecols.h - the CSV's columns as one table: each column's name, its
 * unit, the source its figure comes from and the function that fills
 * its cell from one gathered row (struct sample_row, below). The
 * header and every row are made from the table, so their order cannot
 * drift apart; the man page's CSV COLUMNS section lists the same names
 * (tests/test_samplecols.c and the docs e2e suite check it).
 */
#ifndef FAULTLINE_SAMPLECOLS_H
#define FAULTLINE_SAMPLECOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/histogram.h"
#include "sample/samplercfg.h"
#include "telemetry/explain.h"
#include "telemetry/perfev.h"
#include "telemetry/procfs.h"
#include "telemetry/timeshare.h"

#define MIB (1024.0 * 1024.0)

/* One snapshot of every system-wide source. */
struct sys_snap {
	uint64_t t;
	uint64_t seq;			/* which reading: copies share it (host cells' key) */
	bool tlb_ok, ksw_ok, vm_ok, mem_ok, cpu_ok;
	uint64_t tlb;
	uint64_t ksw_ticks;
	struct procfs_vmstat vm;
	struct procfs_meminfo mem;
	struct procfs_cpu cpu;
	struct explain_sys psi;		/* memory and io pressure (explain.c) */
};

static inline uint64_t vm_get(const struct sys_snap *x, enum procfs_vm_key k)
{
	return procfs_vm_has(&x->vm, k) ? x->vm.v[k] : 0;
}

/* Pages scanned and stolen by all reclaim. Kernels since 5.8 count every
 * reclaim, cgroup reclaim included, in pgscan_anon/file; the older
 * kswapd/direct pair misses reclaim inside a mem_limit cgroup. */
static inline bool vm_has_all(const struct sys_snap *x)
{
	return procfs_vm_has(&x->vm, PROCFS_VM_PGSCAN_ANON) && procfs_vm_has(&x->vm, PROCFS_VM_PGSCAN_FILE) &&
	       procfs_vm_has(&x->vm, PROCFS_VM_PGSTEAL_ANON) && procfs_vm_has(&x->vm, PROCFS_VM_PGSTEAL_FILE);
}

static inline uint64_t pgscan(const struct sys_snap *x)
{
	if (vm_has_all(x))
		return vm_get(x, PROCFS_VM_PGSCAN_ANON) + vm_get(x, PROCFS_VM_PGSCAN_FILE);
	return vm_get(x, PROCFS_VM_PGSCAN_KSWAPD) + vm_get(x, PROCFS_VM_PGSCAN_DIRECT);
}

static inline uint64_t pgsteal(const struct sys_snap *x)
{
	if (vm_has_all(x))
		return vm_get(x, PROCFS_VM_PGSTEAL_ANON) + vm_get(x, PROCFS_VM_PGSTEAL_FILE);
	return vm_get(x, PROCFS_VM_PGSTEAL_KSWAPD) + vm_get(x, PROCFS_VM_PGSTEAL_DIRECT);
}

/*
 * One row of a job, gathered from each source once (samplerow.c):
 * the interval's counts and figures, before the column table
 * (samplecols.c) turns them into cells. cgroup usage, say, is read once
 * and serves both cgroup_mib and the cost figures.
 */
/*
 * A job's rows as a plan made once at set-up (samplecols_job_cells):
 * the columns as segments, each a copy of the job's own cells, a run of
 * host cells, or cells made from the row. Its own cells are the
 * same in all its rows: its SRC_JOB columns (name, engine, rw, threads,
 * lat_from: making them reads the job's options, cold lines at
 * thousands of jobs), and what its options leave fixed (a read job's
 * write and flush cells, a non-pool job's pool cells, the time
 * breakdown's without delayacct=1, ...: struct samplecols_fixed),
 * neighbours merged into one copy. A job has two plans: one for a row
 * in which its workers did something, one for an idle row (no request
 * counted, no latency: samplecols_row_idle), whose workers' cells are
 * its own too; at thousands of jobs most rows of most jobs are idle. A
 * walk of 10-20 segments instead of every column, and a row's own cells
 * read from one place. nseg 0: none kept (too long), every cell made.
 */
enum samplecols_seg_kind {
	SEG_OWN,		/* @len bytes of the plan's text: columns [first, first + n) */
	SEG_HOST,		/* host columns [first, first + n), kept per sample */
	SEG_CELL,		/* columns [first, first + n), each made from the row */
};
/* A SEG_CELL's cells are all empty in a row without this source:
 * written as commas, their fill functions not called. */
enum samplecols_gate {
	GATE_NONE,
	GATE_FAULTS,		/* the threads' faults read at both ends (f_flt) */
	GATE_EV,		/* some kernel counter of the job's read (f_ev) */
};
struct samplecols_seg {
	unsigned char kind, first, n, len, gate;
};
/* A plan packed: its segments, then their SEG_OWN cells in order (each
 * with its leading comma), the lines a row reads one after the other
 * (two to four of them for a psync job). */
#define SAMPLECOLS_PLAN_BYTES 319
struct samplecols_plan {
	unsigned char nseg;
	unsigned char mem[SAMPLECOLS_PLAN_BYTES];
};
static inline const struct samplecols_seg *samplecols_plan_seg(const struct samplecols_plan *pl)
{
	return (const struct samplecols_seg *)pl->mem;
}
struct samplecols_job {
	struct samplecols_plan plan[2];		/* a row with work, an idle row */
};

/* What a job's options and set-up leave fixed in all its rows. */
struct samplecols_fixed {
	bool writes;		/* it writes: its write and flush cells vary */
	bool ev;		/* it may have its own kernel counters (job_*) */
	bool cgroup;		/* it runs in a cgroup (mem_limit) */
	bool delayacct;		/* its time_* cells */
	bool devs;		/* it has primary devices to read */
	bool wb_traced, wb_zero;	/* its wb_* cells: traced, or 0 by construction */
};

struct sample_row {
	const struct sampler_job *sj;
	const struct samplecols_job *jc;	/* NULL: every cell made here */
	uint64_t t0, epoch0_ms;		/* the run's start, on both clocks */
	long hz;			/* clock ticks per second (kswapd's CPU time) */
	/* The row's latencies: reads, writes, flushes. */
	const struct hist *rlat, *wlat, *slat;
	const struct sys_snap *sys, *ps;	/* the host now and at the job's previous row */
	uint64_t now;
	double dt;			/* seconds since the job's previous row */
	bool ramp;
	/* the workers' counters over the row */
	uint64_t rops, rbytes, probe, wops, wbytes, syncs;
	uint64_t hits, misses, evictions, batches;
	bool lat;			/* reads' latencies measured and some completed */
	double p50, p99, pmax;		/* us */
	/* the worker threads' task figures */
	bool faults_ok, cpu_ok;
	uint64_t majflt, minflt, cpu_ns;
	bool cg_ok;
	uint64_t cg_bytes;
	bool dev_ok;
	uint64_t dev_rbytes, dev_rios, dev_wbytes, dev_wios;
	/* the job's kernel counters: each one's increase (ok in both readings) */
	bool ev_ok[PERFEV_NR];
	uint64_t ev_d[PERFEV_NR];
	struct explain_figs x;
	bool wb_ok, wb_zero;		/* traced, or 0 by construction */
	uint64_t wb_own, wb_kernel;	/* bytes over the row */
	bool time_ok;
	unsigned tenths[TIMESHARE_NPARTS];
};


/* Where a column's figure comes from: a row reads each source once,
 * whatever the number of columns that use it. */
enum sample_src {
	SRC_CLOCK,		/* the sampling clock */
	SRC_JOB,		/* the job's options */
	SRC_ARENA,		/* the workers' counters and latency histograms */
	SRC_TASK,		/* each worker thread's faults and CPU time */
	SRC_HOST,		/* /proc: interrupts, kswapd, vmstat, meminfo, stat */
	SRC_CGROUP,		/* the job's mem_limit cgroup's usage */
	SRC_DEV,		/* the devices its targets sit on */
	SRC_PERF,		/* the job's own kernel counters (perfev.h) */
	SRC_RESIDENCY,		/* its targets' page-cache residency */
	SRC_PSI,		/* pressure stall information, host and cgroup */
	SRC_WBTRACE,		/* who wrote its data (wbtrace.h) */
	SRC_TASKSTATS,		/* delayacct=1: where its threads' time went */
	SRC_NR
};

/* How a cell is written. */
enum sample_kind {
	KIND_NUM,		/* a number with prec decimals ("%.*f") */
	KIND_INT,		/* a whole number */
	KIND_TEXT,		/* a word */
};

struct sample_col {
	const char *name;
	const char *unit;	/* "s", "ms", "/s", "MiB", "MiB/s", "%", "us", "" */
	enum sample_src src;
	enum sample_kind kind;
	int prec;		/* KIND_NUM's decimals */
	/* The same for every job sampled at one moment over the same span
	 * (the host's figures, the clock's): formatted once per sample. */
	bool host;
	int a, b;		/* what fill reads: a figure's index, or -1 */
	/* The figure; false leaves the cell empty (never a 0 for a source
	 * that could not be read). KIND_TEXT columns set *text instead. */
	bool (*fill)(const struct sample_row *r, const struct sample_col *c, double *v, const char **text);
};

extern const struct sample_col samplecols[];
extern const size_t samplecols_n;

/* The header line ("t_s,epoch_ms,..."), made from the table once. */
const char *samplecols_header(void);

/* Host cells kept between the rows of one sample (samplecols.c). */
struct samplecols_cache;

/* Is @r a row in which the job's workers did nothing: no request
 * counted in any direction, no latency, no pool access? Its workers'
 * cells are then the same in every such row. */
bool samplecols_row_idle(const struct sample_row *r);
/* Row @r's cells into [line, end): the first without a leading comma.
 * Returns the end of what was written. @hc holds the host columns'
 * cells of the rows sharing their key (NULL: none kept). With r->jc,
 * by the job's plan for the row (idle or not). */
char *samplecols_write(const struct sample_row *r, struct samplecols_cache *hc, char *line, char *end);
/* Job @sj's plans into @jc, given @fx (a plan's nseg 0 when it does not
 * fit). */
void samplecols_job_cells(struct samplecols_job *jc, const struct sampler_job *sj,
			  const struct samplecols_fixed *fx);

struct samplecols_cache *samplecols_cache_new(void);
void samplecols_cache_free(struct samplecols_cache *hc);

#endif
