/*
 * procfs.h - the kernel's own evidence, read from /proc.
 *
 * Two layers. Parsers are pure functions on a buffer (no I/O, no
 * allocation, no NUL terminator needed) so they can be tested on recorded
 * files and fuzzed. Sources open a file once and re-read it with pread at
 * offset 0 every sample, because an fopen per sample per file would cost
 * more than the sampler is allowed to (under 2 % of the interval).
 *
 * Every path is built from a root directory: procfs_root() is
 * $FAULTLINE_PROC or "/proc", and tests pass a fixture root instead.
 *
 * All functions return 0 (or a count) on success and -errno on failure:
 * -ENOENT when the thing looked for does not exist on this kernel (no TLB
 * line on arm64), -EBADMSG when the text is not in the kernel's format.
 * A counter that was not found is reported absent, never as zero.
 */
#ifndef FAULTLINE_PROCFS_H
#define FAULTLINE_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* $FAULTLINE_PROC, or "/proc". */
const char *procfs_root(void);

/* Kernel ticks per second for utime/stime (sysconf(_SC_CLK_TCK)). */
long procfs_clk_tck(void);

/* ---- sources: open once, pread every sample ---- */

struct procfs_src {
	int fd;
	char *buf;		/* NUL-terminated after a read */
	size_t cap;
	size_t len;		/* bytes of the last read */
};

/* Open <root>/<relpath> read-only; *src is zeroed first (fd -1 on error). */
int procfs_src_open(struct procfs_src *src, const char *root, const char *relpath);

/* Re-read the whole file into src->buf, growing it until the file fits.
 * Returns the length read or -errno. */
ssize_t procfs_src_read(struct procfs_src *src);

/* The same for a file of one record (a task's stat or schedstat: the
 * kernel makes the whole text in one go), in one read where it fits the
 * buffer instead of reading on until the end: the sampler reads two such
 * files per thread per interval, 4000 reads a sample at 2000 jobs. */
ssize_t procfs_src_read_record(struct procfs_src *src);

/* Safe on a zeroed or already closed source. */
void procfs_src_close(struct procfs_src *src);
/*
 * For a reader that must not allocate once a run is under way (the
 * sampler: a heap that grows takes the address-space lock for writing,
 * which can wait seconds behind a worker preempted in a page fault when
 * thousands of threads share two CPUs): the buffer at set-up
 * with procfs_src_prealloc (fd -1), the file later with
 * procfs_src_attach, which keeps that buffer. procfs_src_close frees it
 * either way.
 */
int procfs_src_prealloc(struct procfs_src *src, size_t cap);
int procfs_src_attach(struct procfs_src *src, const char *root, const char *relpath);

/* Read the small text file <dir>/<rel> (a sysfs attribute, a comm) with
 * one open and read, trailing whitespace removed. 0 or -errno. Shared by
 * procfs.c, devinfo.c and cgroup.c. */
int procfs_read_small(const char *dir, const char *rel, char *buf, size_t cap);

/* ---- scanning helper, shared with devinfo.c ---- */

/* Skip blanks (not newlines), then parse one unsigned decimal from
 * [*p, end); advance *p past it. -EBADMSG if there is none or it does not
 * fit in 64 bits. */
int procfs_scan_u64(const char **p, const char *end, uint64_t *v);

/* ---- /proc/interrupts ---- */

/*
 * Sum the TLB: line of /proc/interrupts over all CPU columns (x86 TLB
 * shootdown IPIs). The column count is the number of CPUn tokens in the
 * header; the TLB line may sit anywhere. @ncpu (may be NULL) gets the
 * column count. -ENOENT without a TLB line (arm64: invalidations are
 * broadcast in hardware, see PROCFS_TLB_ABSENT_WHY).
 */
int procfs_parse_tlb(const char *buf, size_t len, uint64_t *total, unsigned *ncpu);

#define PROCFS_TLB_ABSENT_WHY \
	"no TLB: line in /proc/interrupts; arm64 broadcasts TLB invalidations " \
	"in hardware (TLBI), so there are no shootdown IPIs to count"

/* ---- /proc/vmstat ---- */

enum procfs_vm_key {
	PROCFS_VM_PGSCAN_KSWAPD,
	PROCFS_VM_PGSCAN_DIRECT,
	PROCFS_VM_PGSTEAL_KSWAPD,
	PROCFS_VM_PGSTEAL_DIRECT,
	PROCFS_VM_PGMAJFAULT,
	PROCFS_VM_PGFAULT,
	PROCFS_VM_PGPGIN,		/* KiB read from block devices */
	PROCFS_VM_WORKINGSET_REFAULT_FILE, /* evicted file pages read again */
	/* All reclaim by page type (5.8+): unlike pgscan_kswapd/direct these
	 * include reclaim inside memory cgroups (mem_limit), which the
	 * kernel keeps out of the global kswapd/direct counters. */
	PROCFS_VM_PGSCAN_ANON,
	PROCFS_VM_PGSCAN_FILE,
	PROCFS_VM_PGSTEAL_ANON,
	PROCFS_VM_PGSTEAL_FILE,
	PROCFS_VM_NR
};

struct procfs_vmstat {
	uint64_t v[PROCFS_VM_NR];
	uint32_t present;		/* bit (1u << key) when the key was found */
};

/* The /proc/vmstat name of @key ("pgscan_kswapd"). */
const char *procfs_vm_name(enum procfs_vm_key key);

static inline bool procfs_vm_has(const struct procfs_vmstat *vm, enum procfs_vm_key key)
{
	return vm->present & (1u << key);
}

/* Fill @out from /proc/vmstat text. Kernels before 4.8 count reclaim
 * per zone (pgscan_kswapd_normal, ...): those are summed into the key. */
int procfs_parse_vmstat(const char *buf, size_t len, struct procfs_vmstat *out);

/* ---- /proc/meminfo ---- */

enum procfs_mem_key {
	PROCFS_MEM_TOTAL,		/* MemTotal */
	PROCFS_MEM_FREE,		/* MemFree */
	PROCFS_MEM_AVAILABLE,		/* MemAvailable (3.14+) */
	PROCFS_MEM_BUFFERS,		/* Buffers */
	PROCFS_MEM_CACHED,		/* Cached */
	PROCFS_MEM_DIRTY,		/* Dirty */
	PROCFS_MEM_WRITEBACK,		/* Writeback */
	PROCFS_MEM_NR
};

struct procfs_meminfo {
	uint64_t bytes[PROCFS_MEM_NR];	/* converted from kB */
	uint32_t present;
};

const char *procfs_mem_name(enum procfs_mem_key key);

static inline bool procfs_mem_has(const struct procfs_meminfo *mi, enum procfs_mem_key key)
{
	return mi->present & (1u << key);
}

int procfs_parse_meminfo(const char *buf, size_t len, struct procfs_meminfo *out);

/* ---- /proc/stat ---- */

/* The aggregate "cpu" line, in ticks (USER_HZ). */
struct procfs_cpu {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
	unsigned ncpu;			/* cpuN lines: online CPUs */
};

int procfs_parse_stat(const char *buf, size_t len, struct procfs_cpu *out);

/* ---- /proc/PID/stat and /proc/PID/task/TID/stat ---- */

struct procfs_task {
	uint64_t minflt, majflt;	/* fields 10 and 12 */
	uint64_t utime, stime;		/* fields 14 and 15, ticks */
	unsigned flags;			/* field 9, PF_* */
};

/* comm (field 2) may hold spaces and ')', so fields are counted from the
 * LAST ')' in the buffer. */
int procfs_parse_task_stat(const char *buf, size_t len, struct procfs_task *out);
/* Field 22 of a <proc>/PID/stat line: the process's start time in clock
 * ticks after boot. With the pid it names a process for good: a pid is
 * reused, a (pid, start time) pair is not. */
int procfs_parse_starttime(const char *buf, size_t len, uint64_t *start);

/* Open the stat file of thread @tid of process @pid (0: "self"). */
int procfs_task_open(struct procfs_src *src, const char *root, pid_t pid, pid_t tid);

/* /proc/PID/task/TID/schedstat: "on-CPU-ns wait-ns timeslices". Its
 * first field is the thread's CPU time in nanoseconds, where the stat
 * file's utime+stime come in 10 ms ticks: too coarse for one interval
 * of a thread that mostly waits on I/O. */
int procfs_parse_schedstat(const char *buf, size_t len, uint64_t *cpu_ns);
int procfs_schedstat_open(struct procfs_src *src, const char *root, pid_t pid, pid_t tid);
/* The same two files opened into a procfs_src_prealloc'd source:
 * @file is "stat" or "schedstat". */
int procfs_task_attach(struct procfs_src *src, const char *root, pid_t pid, pid_t tid, const char *file);
/* Room in the process's descriptor table for @n more descriptors, made
 * now (up to RLIMIT_NOFILE): the kernel grows the table as descriptors
 * are opened, and growing it in a process of many threads waits for an
 * RCU grace period, milliseconds. 0 or -errno. */
int procfs_fd_room(unsigned n);
int procfs_task_read(struct procfs_src *src, struct procfs_task *out);

/* ---- kswapd threads (one per NUMA node) ---- */

#define PROCFS_COMM_MAX 16		/* TASK_COMM_LEN */

struct procfs_kswapd_thread {
	pid_t pid;
	char name[PROCFS_COMM_MAX];	/* "kswapd0" */
	uint64_t ticks;			/* utime+stime at the last read */
	struct procfs_src src;		/* <root>/PID/stat */
};

struct procfs_kswapd {
	unsigned n;
	struct procfs_kswapd_thread *t;	/* sorted by node: kswapd0, kswapd1, ... */
};

/*
 * Find kernel threads whose comm starts with "kswapd" by scanning
 * <root>/[0-9]*\/comm. User processes that merely call themselves kswapd
 * are skipped (PF_KTHREAD not set in their stat). Fills at most @max
 * entries of @pids and @names (either may be NULL) in node order and
 * returns how many threads exist (may exceed @max), or -errno.
 */
int procfs_kswapd_find(const char *root, pid_t *pids,
		       char (*names)[PROCFS_COMM_MAX], unsigned max);

/* Find the threads and open a source on each. -ENOENT when there are none. */
int procfs_kswapd_open(struct procfs_kswapd *k, const char *root);

/* Re-read every thread; *ticks gets the sum of utime+stime. */
int procfs_kswapd_read(struct procfs_kswapd *k, uint64_t *ticks);

void procfs_kswapd_close(struct procfs_kswapd *k);

/* ---- --check-system: what can be read here, and why not ---- */

#define PROCFS_WHY_MAX 256
#define PROCFS_PROBE_KSWAPD_MAX 64	/* NUMA nodes reported by name */

struct procfs_probe_src {
	int err;			/* 0 readable, else -errno */
	char why[PROCFS_WHY_MAX];	/* why not, "" when readable */
};

struct procfs_probe {
	struct procfs_probe_src tlb;	/* /proc/interrupts TLB: */
	uint64_t tlb_total;
	unsigned ncpu;

	struct procfs_probe_src kswapd;
	unsigned nkswapd;		/* threads found (may exceed the array) */
	struct {
		pid_t pid;
		char name[PROCFS_COMM_MAX];
		double cpu_s;
	} kswapd_t[PROCFS_PROBE_KSWAPD_MAX];

	struct procfs_probe_src vmstat;
	struct procfs_vmstat vm;

	struct procfs_probe_src meminfo;
	struct procfs_meminfo mem;

	struct procfs_probe_src stat;
	struct procfs_cpu cpu;

	struct procfs_probe_src task;	/* <root>/self/task/TID/stat */
	struct procfs_task self;
};

/*
 * Read every source once under @root; @hz converts kswapd ticks to
 * seconds and @tid names the thread whose fault counters are probed
 * (the caller's gettid()). Only data: the caller formats it. Returns 0
 * even when sources are unreadable (that is what the probe reports).
 */
int procfs_probe(const char *root, long hz, pid_t tid, struct procfs_probe *out);

#endif
