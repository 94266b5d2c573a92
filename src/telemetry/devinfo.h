/*
 * devinfo.h - which block device a target's reads reach, and its traffic.
 *
 * A target's dev_t (st_dev of a file, st_rdev of a block device) is
 * resolved through <sys>/dev/block/MAJ:MIN into a chain: partition ->
 * whole disk, md array -> member devices, device-mapper -> its slaves,
 * loop device -> its backing file's device. Each link records what the
 * report and JSON show (names, model, scheduler, rotational flag, md
 * geometry) and the sysfs stat file the sampler reads for device traffic.
 *
 * Paths are built from a sysfs root: devinfo_sysroot() is $FAULTLINE_SYS
 * or "/sys", tests pass a fixture root. Functions return 0 or -errno and
 * fill a struct err with the reason; nothing here prints.
 */
#ifndef FAULTLINE_DEVINFO_H
#define FAULTLINE_DEVINFO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"
#include "telemetry/procfs.h"

/* $FAULTLINE_SYS, or "/sys". */
const char *devinfo_sysroot(void);

enum devinfo_kind {
	DEVINFO_DISK,		/* a whole disk: sda, nvme0n1, vda */
	DEVINFO_PARTITION,	/* sda2: its whole disk is in disk[] */
	DEVINFO_MD,		/* md RAID array: geometry and members */
	DEVINFO_DM,		/* device-mapper (LVM, dm-crypt): members */
	DEVINFO_LOOP,		/* loop device: backing file */
};

const char *devinfo_kind_name(enum devinfo_kind kind);

#define DEVINFO_NAME_MAX 32	/* kernel block device names are < 32 */
#define DEVINFO_DEPTH_MAX 8	/* loop on md on dm on partitions ... */

struct devinfo {
	enum devinfo_kind kind;
	unsigned major, minor;
	char name[DEVINFO_NAME_MAX];	/* this device: sda2, md0, loop0 */
	char disk[DEVINFO_NAME_MAX];	/* its whole disk: sda for sda2, else = name */
	char sysdir[PATH_MAX];		/* <sys>/devices/... of this device */
	char stat_path[PATH_MAX];	/* traffic source: <sysdir>/stat (the
					 * partition's own for a partition) */
	uint64_t size_bytes;		/* this device (partition or disk) */

	/* Of the whole disk; a partition has no queue/ of its own. */
	char model[64];			/* device/model, "" when absent */
	char vendor[64];		/* device/vendor, "" when absent */
	char scheduler[32];		/* active one, without brackets; "" unknown */
	int rotational;			/* 1, 0, or -1 unknown */
	unsigned logical_block_size;	/* bytes; 0 unknown */
	uint64_t disk_size_bytes;

	/*
	 * The md, dm and loop fields describe the whole disk, so a
	 * partition of an array (md0p1: kind PARTITION) carries the array's
	 * geometry and members too: test md_level[0], not kind, for "on md".
	 */

	/* md array */
	char md_level[16];		/* raid0, raid1, raid5, raid10, ... */
	uint64_t md_chunk_bytes;	/* 0 for levels without chunks (raid1) */
	unsigned md_raid_disks;
	char md_array_state[32];	/* clean, active, read-auto, inactive, ... */
	int md_slot;			/* as a member of an md array: its slot, -1 unknown */

	/* device-mapper */
	char dm_name[128];

	/* loop device */
	char backing_file[PATH_MAX];	/* as the kernel reports it */
	struct devinfo *backing;	/* its device, or NULL (see backing_why) */
	char backing_why[256];

	/* md, dm: slaves/, sorted by name, each resolved */
	unsigned nmembers;
	struct devinfo *members;
};

/*
 * Resolve @dev into @out. -ENODEV for an anonymous device (major 0:
 * tmpfs, overlayfs, NFS, btrfs subvolumes), which has no block device to
 * sample. A loop device whose backing file cannot be stat'ed (a fixture,
 * a deleted file) still resolves, with backing NULL and the reason in
 * backing_why. Free with devinfo_free.
 */
int devinfo_resolve(const char *sysroot, dev_t dev, struct devinfo *out, struct err *e);

/*
 * The kernel's read-ahead window for reads that reach @dev (a file's
 * st_dev or a device's st_rdev), in KiB: the device's
 * queue/read_ahead_kb, its whole disk's for a partition, else the
 * backing device info's (<sys>/class/bdi/MAJ:MIN, filesystems without a
 * block device). @name gets where it was read ("vda"). Returns the KiB,
 * or -errno when no source exists.
 */
int devinfo_read_ahead_kb(const char *sysroot, dev_t dev, char *name, size_t len);

/* Resolve the device under @path: st_rdev of a block device, else st_dev. */
int devinfo_resolve_path(const char *sysroot, const char *path, struct devinfo *out,
			 struct err *e);

/* Free what devinfo_resolve allocated (members, backing); not @d itself. */
void devinfo_free(struct devinfo *d);

/*
 * Which of a job's @n devices to sum for its device traffic, into
 * @count: a device is left out when another of the set already counts
 * its reads, so nothing is counted twice: the same device named twice
 * (the first counts), a partition whose whole disk is in the set (the
 * disk's counters include the partition's), and a member of an md array
 * (or dm device) in the set, whose reads the array counts at the array's
 * level; the members stay separate devices, reported each on its own,
 * never folded into the array. Returns how many are counted.
 */
unsigned devinfo_counted(const struct devinfo *const *devs, unsigned n, bool *count);

/* ---- block device statistics (Documentation/block/stat.rst) ---- */

/*
 * Sectors here are always 512 bytes, whatever the device's logical block
 * size: the kernel keeps these counters in 512-byte units (bio sectors),
 * so a 4Kn disk still reports 8 sectors per 4 KiB read.
 */
#define DEVINFO_SECTOR_BYTES 512

struct devinfo_blkstat {
	uint64_t read_ios, read_merges, read_sectors, read_ticks;
	uint64_t write_ios, write_merges, write_sectors, write_ticks;
	uint64_t in_flight, io_ticks, time_in_queue;
	uint64_t discard_ios, discard_merges, discard_sectors, discard_ticks; /* 4.18+ */
	uint64_t flush_ios, flush_ticks;				     /* 5.5+ */
	unsigned nfields;		/* 11, 15 or 17 depending on the kernel */
};

static inline uint64_t devinfo_read_bytes(const struct devinfo_blkstat *s)
{
	return s->read_sectors * DEVINFO_SECTOR_BYTES;
}

static inline uint64_t devinfo_write_bytes(const struct devinfo_blkstat *s)
{
	return s->write_sectors * DEVINFO_SECTOR_BYTES;
}

/* One /sys/block/DEV/stat text. -EBADMSG with fewer than 11 fields. */
int devinfo_parse_block_stat(const char *buf, size_t len, struct devinfo_blkstat *out);

/* The line of device @name in /proc/diskstats text; -ENOENT if none. */
int devinfo_parse_diskstats(const char *buf, size_t len, const char *name,
			    struct devinfo_blkstat *out);

/* Open d->stat_path once; read it every sample with devinfo_stat_read. */
int devinfo_stat_open(struct procfs_src *src, const struct devinfo *d);
int devinfo_stat_read(struct procfs_src *src, struct devinfo_blkstat *out);

#endif
