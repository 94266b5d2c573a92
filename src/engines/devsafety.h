/*
 * devsafety.h - may a write job write to this target?
 *
 * A write job must not destroy what someone else uses or keeps: a block
 * device that is mounted or held by the kernel for someone else is never
 * written; one that carries a filesystem, a partition table or a RAID or
 * volume-manager superblock (probed with libblkid, on the device and on
 * each of its partitions) only with allow_destructive=1. Read jobs never
 * call this: they never open a target for writing.
 */
#ifndef FAULTLINE_DEVSAFETY_H
#define FAULTLINE_DEVSAFETY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/err.h"

/*
 * For a write job's target @path. A regular file: 0 (writes stay inside
 * offset..offset+size, the caller's business). A block device: -EBUSY if
 * it or one of its partitions is mounted (the message says where), swap,
 * held by a dm/md device, or cannot be opened O_EXCL because the kernel
 * has another exclusive holder; -EEXIST if libblkid finds a filesystem,
 * partition table or RAID superblock on it or on one of its partitions,
 * naming what it found. With @allow_destructive only the -EBUSY checks
 * remain: a mounted filesystem's device is never written. Otherwise
 * -errno with @e filled: -ENOENT for a missing path (the caller creates a
 * regular file there), -EACCES, -EISDIR, -EINVAL for other file types,
 * -EIO when libblkid cannot read the device.
 */
int devsafety_check(const char *path, bool allow_destructive, struct err *e);

/* Where a block device is mounted, from /proc/self/mountinfo. */
struct devsafety_mount {
	char point[512];	/* mount point, unescaped */
	char fstype[64];
	char source[256];	/* mount source, e.g. /dev/loop3 */
};

/*
 * Find in @mountinfo (the text of a /proc/PID/mountinfo) a mount of the
 * device @dev: a line whose MAJ:MIN is @dev, or whose source is
 * /dev/@name when @name is not NULL (btrfs reports an anonymous MAJ:MIN).
 * 0 with @m filled, -ENOENT when there is none.
 */
int devsafety_find_mount(const char *mountinfo, dev_t dev, const char *name,
			 struct devsafety_mount *m);

#endif
