/*
 * wbtrace.h - who wrote a write job's data to its device: the
 * job itself (its writes, and its fsync, fdatasync and msync with the
 * write-back they wait for) or the kernel on its own, before any flush
 * of the job asked (reclaim waking the flusher threads, the flushers on
 * dirty_expire_centisecs or dirty_background_*, a sync(2) of someone
 * else). The paper's problem #1: through a mapping the kernel may write
 * a dirty page at any moment, and nothing tells the database.
 *
 * The source is three tracepoints, enabled in a tracefs instance of the
 * run's own (libtracefs) and decoded with libtraceevent, every number
 * (ids, field offsets, reason values, HZ) from this kernel's format files:
 *
 *   block:block_bio_queue      each write bio to a target's device, in
 *                              the context of the task that submitted it:
 *                              the job's own when that task is one of the
 *                              job's threads, or an io_uring worker of one
 *                              ("iou-wrk-<tid>"). Filtered in the kernel
 *                              by device and direction.
 *   writeback:writeback_single_inode  pages of one inode a flusher wrote
 *                              (wrote) and when the inode was dirtied
 *                              (dirtied_when, jiffies): the kernel's share,
 *                              matched to the job by (bdi, inode number)
 *   writeback:writeback_start  why that flusher worker is writing (reason:
 *                              background, vmscan, periodic, sync, ...)
 *
 * Reclaim does not write a file's dirty pages itself on this kernel
 * (6.18): it wakes the flushers with reason vmscan, which is how it
 * shows. A record counts for a job when its timestamp (trace clock mono,
 * the CLOCK_MONOTONIC of now_ns()) falls in the job's window.
 *
 * The pure parts (decoding a record with a format, attributing records
 * to jobs) take no system call, so tests run them on recorded formats
 * and records. Functions return 0 or -errno and never print.
 */
#ifndef FAULTLINE_WBTRACE_H
#define FAULTLINE_WBTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

struct tep_handle;
struct tep_record;
struct tep_event;
struct tep_format_field;

/* Why the kernel wrote: enum wb_reason's labels in the format file. */
enum wbtrace_reason {
	WBTRACE_BACKGROUND,	/* over dirty_background_* */
	WBTRACE_VMSCAN,		/* reclaim met dirty pages */
	WBTRACE_PERIODIC,	/* older than dirty_expire_centisecs */
	WBTRACE_SYNC,		/* a sync(2)/syncfs(2), someone's */
	WBTRACE_OTHER,		/* laptop mode, free space, ...; or unknown */
	WBTRACE_NREASONS
};

const char *wbtrace_reason_key(enum wbtrace_reason r);

/* One job's figures so far. */
struct wbtrace_counts {
	uint64_t own_bytes;		/* write bios to the targets' devices from the job's tasks */
	uint64_t kernel_bytes;		/* the targets' pages a flusher wrote */
	uint64_t reason_bytes[WBTRACE_NREASONS];
	uint64_t dev_bytes;		/* write bios to the targets' devices, anyone's */
	uint64_t aged_bytes;		/* kernel bytes with an age */
	double age_ms_bytes;		/* sum of age (ms) x bytes, over aged_bytes */
	uint64_t age_max_ms;
	uint64_t lost;			/* events the trace buffer lost while the job ran */
};

/* @c less @base (the ramp's): the age's maximum stays the whole job's. */
void wbtrace_counts_sub(struct wbtrace_counts *c, const struct wbtrace_counts *base);

/* ---- decoding (pure: a format and a record) ---- */

enum wbtrace_kind { WBTRACE_BIO, WBTRACE_INODE, WBTRACE_START, WBTRACE_NKINDS };

struct wbtrace_rec {
	enum wbtrace_kind kind;
	uint64_t ts;			/* ns, trace clock */
	int pid;			/* the task in whose context it fired */
	char comm[16];			/* block_bio_queue's comm */
	uint32_t dev;			/* bio: the device, kernel dev_t (major << 20 | minor) */
	uint64_t bytes;			/* bio: its size */
	uint32_t bdi;			/* inode: its bdi "major:minor", the same encoding */
	uint64_t ino;
	uint64_t pages;			/* inode: pages written */
	uint64_t dirtied_when;		/* inode: jiffies */
	int reason;			/* start: enum wbtrace_reason */
};

/* The three events as this kernel describes them. */
struct wbtrace_fmt {
	struct tep_event *ev[WBTRACE_NKINDS];
	struct tep_format_field *bio_dev, *bio_sectors, *bio_rwbs, *bio_comm;
	struct tep_format_field *ino_name, *ino_ino, *ino_wrote, *ino_dirtied;
	struct tep_format_field *start_reason;
	long reason_value[WBTRACE_NREASONS];	/* the kernel's number per reason, -1 none */
	unsigned hz;			/* from the age in single_inode's print fmt; 0 unknown */
};

/* Find the events and fields in @tep (events parsed from format files).
 * -ENOENT with @e naming what is missing. */
int wbtrace_fmt_init(struct wbtrace_fmt *f, struct tep_handle *tep, struct err *e);
/* One record; -ENOENT when it is none of the three, -EBADMSG when a field
 * cannot be read. A bio that is not a write gets kind WBTRACE_BIO and
 * bytes 0. */
int wbtrace_decode(const struct wbtrace_fmt *f, struct tep_handle *tep, struct tep_record *rec,
		   struct wbtrace_rec *out);
/* "7:0" as a kernel dev_t; 0 when malformed. */
uint32_t wbtrace_bdi_dev(const char *name);
/* A dev_t as the kernel's trace records carry it. */
uint32_t wbtrace_kdev(dev_t d);

/* ---- attribution (pure) ---- */

#define WBTRACE_MAX_DEVS 8
#define WBTRACE_MAX_INODES 16
#define WBTRACE_MAX_TASKS 1024
#define WBTRACE_FLUSHERS 64		/* flusher workers whose reason is remembered */

struct wbtrace_job {
	bool traced;
	uint64_t from_ns, to_ns;	/* the window; both 0 = not begun, to 0 = open */
	unsigned ndev, nino, ntask;
	uint32_t dev[WBTRACE_MAX_DEVS];
	struct {
		uint32_t bdi;
		uint64_t ino;
	} ino[WBTRACE_MAX_INODES];
	int task[WBTRACE_MAX_TASKS];	/* sorted */
	struct wbtrace_counts c;
};

struct wbtrace_state {
	unsigned njobs;
	struct wbtrace_job *jobs;
	struct {
		int pid;
		int reason;
	} flusher[WBTRACE_FLUSHERS];
	unsigned nflusher, next_flusher;
	unsigned page_size;
	/* jiffies at trace time ts: j0 + (ts - t0) * hz / 1e9 */
	bool clock_ok;
	uint64_t j0, t0;
	unsigned hz;
};

/* Add a task (thread id) to job @j; false when the job's table is full. */
bool wbtrace_job_add_task(struct wbtrace_job *jb, int tid);
bool wbtrace_job_has_task(const struct wbtrace_job *jb, int pid, const char *comm);
/* Count one record for the jobs whose window holds it. */
void wbtrace_feed(struct wbtrace_state *s, const struct wbtrace_rec *r);
/* /proc/timer_list's "now at N nsecs" and first "jiffies: J". 0 or -EBADMSG. */
int wbtrace_parse_timer_list(const char *buf, size_t len, uint64_t *now_ns, uint64_t *jiffies);

/* ---- the live trace ---- */

struct wbtrace;

/*
 * A tracefs instance for @njobs jobs. Needs root (tracefs is root's) and
 * tracefs mounted; -errno with @e saying why not.
 */
int wbtrace_create(struct wbtrace **wp, unsigned njobs, struct err *e);
/* A target of job @j: on device @dev (st_dev, or st_rdev of a block
 * device), inode @ino of a file (0 for a block device). */
int wbtrace_job_target(struct wbtrace *w, unsigned j, dev_t dev, ino_t ino, bool blkdev, struct err *e);
/* Filters from every job's targets, then the events on. */
int wbtrace_start(struct wbtrace *w, struct err *e);
/* Job @j's window, in now_ns() time; @to 0 while it runs. */
void wbtrace_job_window(struct wbtrace *w, unsigned j, uint64_t from, uint64_t to);
void wbtrace_job_task(struct wbtrace *w, unsigned j, int tid);
/* Read what the buffer holds and count it. */
int wbtrace_poll(struct wbtrace *w);
void wbtrace_job_counts(const struct wbtrace *w, unsigned j, struct wbtrace_counts *out);
/* Whether ages can be given, and if not why ("" when they can). */
const char *wbtrace_age_why(const struct wbtrace *w);
void wbtrace_destroy(struct wbtrace *w);

#endif
