/*
 * target.h - what a job reads or writes: regular files (created and laid
 * out with real data when missing or short) and block devices. A read
 * job's targets are only ever opened read-only; a write job's are opened
 * O_RDWR (target_open_for), after devsafety has cleared them.
 *
 * A target knows its size, its logical block size and the device the
 * reads reach (st_dev for a file, st_rdev for a block device); devinfo.c
 * turns that into the sysfs chain used for device telemetry.
 */
#ifndef FAULTLINE_TARGET_H
#define FAULTLINE_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

struct target {
	char *path;
	int fd;			/* O_RDONLY (a write job: O_RDWR + sync=), buffered */
	int fd_direct;		/* the same with O_DIRECT, or -1 when direct=0 */
	bool writable;		/* opened for a write job */
	unsigned how;		/* TARGET_O_* it was opened with */
	bool is_blkdev;
	uint64_t dev_size;	/* bytes in the file or device */
	uint64_t base;		/* job offset= */
	uint64_t len;		/* bytes of the region used, from base */
	unsigned lbs;		/* logical block size (512 for files on most fs) */
	dev_t dev;		/* device the reads reach: st_dev or st_rdev */
	bool sparse;		/* fewer blocks allocated than its size, or a hole or
				 * unwritten extent in the region: reads do no I/O */
	void *map;		/* the mmap engine's mapping of [0, base+len), or NULL */
	uint64_t map_len;
	uint64_t laid_out;	/* bytes target_open wrote to create/extend the file */
	bool flush_denied;	/* last target_invalidate could not BLKFLSBUF
				 * (no CAP_SYS_ADMIN): only fadvise was used */
	bool atomic;		/* atomic=1 and it takes them: writes carry
				 * RWF_ATOMIC (atomicw.h) */
};

/* Hooks for progress and warnings while targets are prepared; both may
 * be NULL. progress() reports bytes written of bytes to write while a
 * file is laid out: once at 0, at most a few times a second, and once
 * with done == total after the data is on disk. warn() gets a whole
 * sentence starting "target: ". */
struct target_hooks {
	void (*warn)(void *arg, const char *msg);
	void (*progress)(void *arg, const char *path, uint64_t done, uint64_t total);
	void *arg;
	const int *stop;	/* set: a layout stops after its current chunk */
};

/*
 * Open @path for reading a region of @len bytes at @base (len 0 = to the
 * end of the target). A regular file that is missing or shorter than
 * base+len is created/extended with incompressible data (never
 * fallocate/truncate); a longer one is left alone. @direct also opens an
 * O_DIRECT descriptor. Rejects directories, unreadable targets, a region
 * past the end of a block device, and (with @direct) a base or @bs not a
 * multiple of the logical block size.
 *
 * On failure returns -errno with @e filled, leaves nothing open and
 * removes a file it created; target_close() on it is then harmless.
 */
int target_open(struct target *t, const char *path, uint64_t base, uint64_t len,
		uint64_t bs, bool direct, const struct target_hooks *hooks,
		struct err *e);

/* target_open_for's @how: a write job's target. */
#define TARGET_O_WRITE	(1u << 0)	/* O_RDWR instead of O_RDONLY */
#define TARGET_O_DSYNC	(1u << 1)	/* and O_DSYNC (sync=1) */
#define TARGET_O_SYNC	(1u << 2)	/* and O_SYNC (sync=sync) */
/* A read job's consent to append to an existing file faultline did not
 * make (overwrite=1), and its refusal to create one (allow_file_create=0). */
#define TARGET_O_EXTEND	(1u << 3)
#define TARGET_O_NOCREATE	(1u << 4)

/* The extended attribute that marks a file faultline laid out itself: a
 * read job completes such a file when it is short (an interrupted
 * layout, a larger size), and no other without TARGET_O_EXTEND. */
#define TARGET_LAYOUT_XATTR	"user.faultline.layout"

/* target_open, with the descriptors opened as @how says (TARGET_O_*);
 * target_open is this with 0. The caller has checked a block device
 * with devsafety_check before asking for TARGET_O_WRITE. */
int target_open_for(struct target *t, const char *path, uint64_t base, uint64_t len,
		    uint64_t bs, bool direct, unsigned how, const struct target_hooks *hooks,
		    struct err *e);
void target_close(struct target *t);

/*
 * @t for one thread of a job: a copy whose descriptors are open files of
 * their own (reopened through /proc/self/fd with @t's flags). Every
 * pread, and every buffered read through io_uring or libaio, writes the
 * kernel's state of the open file (its reference count, its readahead's
 * last position): threads that share one descriptor move that line
 * between their CPUs on every request, where fio's jobs, processes that
 * open the file each, do not. Only the descriptors differ
 * from @t; target_reopen_close closes them. 0 or -errno, with nothing
 * left open.
 */
int target_reopen(const struct target *t, struct target *copy);
void target_reopen_close(struct target *copy);
/* One thread's copy of a job's @n targets, those in [@first, @first +
 * @count) reopened (target_reopen), or NULL when anything failed (the
 * thread then reads through the job's). Best effort, never an error. */
struct target *targets_reopen(const struct target *ts, unsigned n, unsigned first, unsigned count);
/* Undo targets_reopen (NULL: nothing). */
void targets_reopen_free(struct target *copies, unsigned first, unsigned count);

/* Drop the target's pages from the page cache: POSIX_FADV_DONTNEED on
 * the region, and BLKFLSBUF for a block device where permitted. Without
 * the privilege for BLKFLSBUF it still returns 0 and sets
 * t->flush_denied, so the caller can warn once. Pages mapped by a live
 * mapping (t->map, touched) are not dropped: invalidate before mapping. */
int target_invalidate(struct target *t, struct err *e);

/* Size of a target that already exists, without creating it: 0 and
 * *size set, or -errno. Block devices via BLKGETSIZE64. */
int target_probe_size(const char *path, uint64_t *size, struct err *e);

#endif
