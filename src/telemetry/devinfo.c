/*
 * devinfo.c - device chains and block statistics from sysfs; see devinfo.h.
 *
 * Everything goes through <sys>/dev/block/MAJ:MIN, a symlink the kernel
 * keeps for every block device into its /sys/devices directory. From
 * there the shape of the directory says what the device is: a
 * `partition` file (partition of the parent directory's disk), an `md/`
 * directory (md array), `dm/` (device-mapper), `loop/` (loop device);
 * `slaves/` lists what an md or dm device is built from.
 */
#include "telemetry/devinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* LOOP_MAJOR from include/uapi/linux/major.h: an unbound loop device has
 * no loop/ directory, but it is still a loop device. */
#define DEVINFO_LOOP_MAJOR 7

/* sysfs `size` files count 512-byte sectors (like the stat counters). */
#define DEVINFO_SIZE_UNIT 512

const char *devinfo_sysroot(void)
{
	const char *r = getenv("FAULTLINE_SYS");

	return r && *r ? r : "/sys";
}

int devinfo_read_ahead_kb(const char *sysroot, dev_t dev, char *name, size_t len)
{
	/* A partition has no queue/ of its own: its disk's is one up. */
	static const char *const where[] = { "dev/block/%u:%u/queue/read_ahead_kb",
					     "dev/block/%u:%u/../queue/read_ahead_kb",
					     "class/bdi/%u:%u/read_ahead_kb" };
	char rel[96], path[PATH_MAX], real[PATH_MAX], buf[32];
	int last = -ENOENT;

	for (unsigned i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		char *end, *s;
		long kb;
		int n;

		snprintf(rel, sizeof(rel), where[i], major(dev), minor(dev));
		snprintf(path, sizeof(path), "%s/%s", sysroot, rel);
		n = procfs_read_small(sysroot, rel, buf, sizeof(buf));
		if (n < 0) {
			last = n;
			continue;
		}
		kb = strtol(buf, &end, 10);
		if (end == buf || kb < 0)
			continue;
		/* The device's name: the directory that holds queue/. */
		if (realpath(path, real) && (s = strrchr(real, '/'))) {
			*s = '\0';
			/* .../vda/queue/read_ahead_kb, or .../bdi/0:42/read_ahead_kb */
			if (i < 2 && (s = strrchr(real, '/')))
				*s = '\0';
			s = strrchr(real, '/');
			snprintf(name, len, "%s", s ? s + 1 : real);
		} else {
			snprintf(name, len, "%u:%u", major(dev), minor(dev));
		}
		return (int)kb;
	}
	return last;
}

const char *devinfo_kind_name(enum devinfo_kind kind)
{
	switch (kind) {
	case DEVINFO_DISK:
		return "disk";
	case DEVINFO_PARTITION:
		return "partition";
	case DEVINFO_MD:
		return "md";
	case DEVINFO_DM:
		return "dm";
	case DEVINFO_LOOP:
		return "loop";
	}
	return "?";
}

/* snprintf that may truncate on purpose (messages, bounded names);
 * returns -ENAMETOOLONG when it did, for the callers that care. */
static int fmt(char *dst, size_t cap, const char *f, ...)
	__attribute__((format(printf, 3, 4)));

static int fmt(char *dst, size_t cap, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(dst, cap, f, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* ---- sysfs attributes ---- */

/* Read <dir>/<rel> into @buf, without trailing whitespace (SCSI and NVMe
 * pad their model strings with blanks). */
static int attr_u64(const char *dir, const char *rel, uint64_t *v)
{
	char buf[64];
	const char *p = buf;
	int ret;

	ret = procfs_read_small(dir, rel, buf, sizeof(buf));
	if (ret)
		return ret;
	ret = procfs_scan_u64(&p, buf + strlen(buf), v);
	if (ret || *p)
		return -EBADMSG;
	return 0;
}

static bool path_exists(const char *dir, const char *rel)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

/* "none [mq-deadline] kyber bfq" -> "mq-deadline"; a queue without a
 * choice (bio-based md, dm) shows just "none". */
static void active_scheduler(const char *s, char *out, size_t cap)
{
	const char *open = strchr(s, '['), *close = open ? strchr(open, ']') : NULL;

	if (open && close)
		snprintf(out, cap, "%.*s", (int)(close - open - 1), open + 1);
	else
		snprintf(out, cap, "%s", s);
}

/* ---- resolution ---- */

static int resolve_dev(const char *sysroot, unsigned major, unsigned minor,
		       struct devinfo *d, int depth, struct err *e);

static void basename_of(const char *path, char *out, size_t cap)
{
	const char *b = strrchr(path, '/');

	snprintf(out, cap, "%s", b ? b + 1 : path);
}

/* Queue, size and identity of the whole disk in @diskdir. Each is
 * optional: a missing attribute stays "unknown" rather than failing the
 * chain, since older kernels and virtual devices lack some of them. */
static void read_disk_props(const char *diskdir, struct devinfo *d)
{
	char buf[256];
	uint64_t v;

	if (procfs_read_small(diskdir, "device/model", d->model, sizeof(d->model)))
		d->model[0] = '\0';
	if (procfs_read_small(diskdir, "device/vendor", d->vendor, sizeof(d->vendor)))
		d->vendor[0] = '\0';
	if (!procfs_read_small(diskdir, "queue/scheduler", buf, sizeof(buf)))
		active_scheduler(buf, d->scheduler, sizeof(d->scheduler));
	d->rotational = -1;
	if (!attr_u64(diskdir, "queue/rotational", &v))
		d->rotational = v ? 1 : 0;
	if (!attr_u64(diskdir, "queue/logical_block_size", &v) && v <= UINT32_MAX)
		d->logical_block_size = (unsigned)v;
	if (!attr_u64(diskdir, "size", &v))
		d->disk_size_bytes = v * DEVINFO_SIZE_UNIT;
}

static int name_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);

	/* nvme2n1 before nvme10n1 */
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x, y);
}

/* Parse "MAJ:MIN" (a `dev` attribute). */
static int parse_majmin(const char *s, unsigned *major, unsigned *minor)
{
	uint64_t a, b;
	const char *p = s, *end = s + strlen(s);

	if (procfs_scan_u64(&p, end, &a) || p >= end || *p != ':')
		return -EBADMSG;
	p++;
	if (procfs_scan_u64(&p, end, &b) || p != end || a > UINT32_MAX || b > UINT32_MAX)
		return -EBADMSG;
	*major = (unsigned)a;
	*minor = (unsigned)b;
	return 0;
}

/* Resolve every entry of <diskdir>/slaves into d->members; an md
 * array's members also get their slot from <diskdir>/md/dev-NAME/slot. */
static int resolve_members(const char *sysroot, struct devinfo *d, const char *diskdir,
			   bool is_md, int depth, struct err *e)
{
	char dir[PATH_MAX], rel[PATH_MAX], buf[64];
	char **names = NULL, **nn;
	unsigned n = 0, cap = 0, i, major, minor;
	struct dirent *de;
	DIR *dh;
	int ret = 0;

	if (fmt(dir, sizeof(dir), "%s/slaves", diskdir))
		return err_set(e, ENAMETOOLONG, "devinfo: %s: path too long", diskdir);
	dh = opendir(dir);
	if (!dh) {
		if (errno == ENOENT)
			return 0;
		return err_set(e, errno, "devinfo: %s: %s", dir, strerror(errno));
	}
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			nn = realloc(names, cap * sizeof(*names));
			if (!nn) {
				ret = err_set(e, ENOMEM, "devinfo: out of memory");
				goto out;
			}
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			ret = err_set(e, ENOMEM, "devinfo: out of memory");
			goto out;
		}
		n++;
	}
	if (n == 0)
		goto out;
	qsort(names, n, sizeof(*names), name_cmp);
	d->members = calloc(n, sizeof(*d->members));
	if (!d->members) {
		ret = err_set(e, ENOMEM, "devinfo: out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct devinfo *m = &d->members[i];
		uint64_t slot;

		snprintf(rel, sizeof(rel), "slaves/%s/dev", names[i]);
		ret = procfs_read_small(diskdir, rel, buf, sizeof(buf));
		if (!ret)
			ret = parse_majmin(buf, &major, &minor);
		if (ret) {
			ret = err_set(e, ret, "devinfo: %s/%s: %s", diskdir, rel, strerror(-ret));
			goto out;
		}
		ret = resolve_dev(sysroot, major, minor, m, depth + 1, e);
		if (ret) {
			err_wrap(e, "member %s of %s", names[i], d->disk);
			goto out;
		}
		d->nmembers = i + 1;
		/* A spare's slot reads "none". */
		m->md_slot = -1;
		snprintf(rel, sizeof(rel), "md/dev-%s/slot", names[i]);
		if (is_md && !attr_u64(diskdir, rel, &slot) && slot <= INT32_MAX)
			m->md_slot = (int)slot;
	}
out:
	closedir(dh);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

static void resolve_backing(const char *sysroot, struct devinfo *d, int depth)
{
	struct err e2 = { 0 };
	struct stat st;
	dev_t dev;

	if (stat(d->backing_file, &st)) {
		fmt(d->backing_why, sizeof(d->backing_why),
		    "cannot stat backing file %s: %s", d->backing_file, strerror(errno));
		return;
	}
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	d->backing = calloc(1, sizeof(*d->backing));
	if (!d->backing) {
		snprintf(d->backing_why, sizeof(d->backing_why), "out of memory");
		return;
	}
	if (resolve_dev(sysroot, major(dev), minor(dev), d->backing, depth + 1, &e2)) {
		fmt(d->backing_why, sizeof(d->backing_why), "%s", e2.msg);
		devinfo_free(d->backing);
		free(d->backing);
		d->backing = NULL;
	}
}

static int resolve_dev(const char *sysroot, unsigned major, unsigned minor,
		       struct devinfo *d, int depth, struct err *e)
{
	char link[PATH_MAX], diskdir[PATH_MAX];
	uint64_t v;
	int ret;

	memset(d, 0, sizeof(*d));
	d->major = major;
	d->minor = minor;
	d->rotational = -1;
	d->md_slot = -1;
	if (depth > DEVINFO_DEPTH_MAX)
		return err_set(e, ELOOP, "devinfo: device %u:%u: chain deeper than %d devices",
			       major, minor, DEVINFO_DEPTH_MAX);
	if (major == 0)
		return err_set(e, ENODEV,
			       "device %u:%u is not a block device (tmpfs, overlayfs, NFS, "
			       "btrfs subvolume or another filesystem without one): "
			       "no device traffic to sample", major, minor);

	snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sysroot, major, minor);
	if (!realpath(link, d->sysdir)) {
		ret = errno;
		if (ret == ENOENT)
			return err_set(e, ret, "devinfo: %s does not exist: device %u:%u is "
				       "unknown to sysfs (is sysfs mounted at %s?)",
				       link, major, minor, sysroot);
		return err_set(e, ret, "devinfo: %s: %s", link, strerror(ret));
	}
	basename_of(d->sysdir, d->name, sizeof(d->name));
	if (fmt(d->stat_path, sizeof(d->stat_path), "%s/stat", d->sysdir))
		return err_set(e, ENAMETOOLONG, "devinfo: %s: path too long", d->sysdir);
	if (!attr_u64(d->sysdir, "size", &v))
		d->size_bytes = v * DEVINFO_SIZE_UNIT;

	if (path_exists(d->sysdir, "partition")) {
		/* A partition's directory sits inside its disk's. */
		d->kind = DEVINFO_PARTITION;
		snprintf(diskdir, sizeof(diskdir), "%s", d->sysdir);
		*strrchr(diskdir, '/') = '\0';
		basename_of(diskdir, d->disk, sizeof(d->disk));
	} else {
		snprintf(diskdir, sizeof(diskdir), "%s", d->sysdir);
		snprintf(d->disk, sizeof(d->disk), "%s", d->name);
		if (path_exists(d->sysdir, "md"))
			d->kind = DEVINFO_MD;
		else if (path_exists(d->sysdir, "dm"))
			d->kind = DEVINFO_DM;
		else if (path_exists(d->sysdir, "loop") || major == DEVINFO_LOOP_MAJOR)
			d->kind = DEVINFO_LOOP;
		else
			d->kind = DEVINFO_DISK;
	}
	read_disk_props(diskdir, d);

	/*
	 * What the whole disk is built from. A partition of an md array
	 * (md0p1) or of a loop device (loop0p1) reports its disk's array
	 * or backing file, so these read from diskdir, not sysdir.
	 */
	ret = 0;
	if (path_exists(diskdir, "md")) {
		if (procfs_read_small(diskdir, "md/level", d->md_level, sizeof(d->md_level)))
			d->md_level[0] = '\0';
		if (procfs_read_small(diskdir, "md/array_state", d->md_array_state,
			      sizeof(d->md_array_state)))
			d->md_array_state[0] = '\0';
		if (!attr_u64(diskdir, "md/chunk_size", &v))
			d->md_chunk_bytes = v;
		if (!attr_u64(diskdir, "md/raid_disks", &v) && v <= UINT32_MAX)
			d->md_raid_disks = (unsigned)v;
		ret = resolve_members(sysroot, d, diskdir, true, depth, e);
	} else if (path_exists(diskdir, "dm")) {
		if (procfs_read_small(diskdir, "dm/name", d->dm_name, sizeof(d->dm_name)))
			d->dm_name[0] = '\0';
		ret = resolve_members(sysroot, d, diskdir, false, depth, e);
	} else if (d->kind == DEVINFO_LOOP || path_exists(diskdir, "loop")) {
		if (procfs_read_small(diskdir, "loop/backing_file", d->backing_file,
			      sizeof(d->backing_file)))
			fmt(d->backing_why, sizeof(d->backing_why),
			    "loop device %s has no backing file", d->disk);
		else
			resolve_backing(sysroot, d, depth);
	}
	if (ret)
		devinfo_free(d);
	return ret;
}

int devinfo_resolve(const char *sysroot, dev_t dev, struct devinfo *out, struct err *e)
{
	return resolve_dev(sysroot, major(dev), minor(dev), out, 0, e);
}

int devinfo_resolve_path(const char *sysroot, const char *path, struct devinfo *out,
			 struct err *e)
{
	struct stat st;
	int ret;

	if (stat(path, &st))
		return err_set(e, errno, "devinfo: %s: %s", path, strerror(errno));
	ret = devinfo_resolve(sysroot, S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev, out, e);
	if (ret)
		err_wrap(e, "%s", path);
	return ret;
}

void devinfo_free(struct devinfo *d)
{
	unsigned i;

	for (i = 0; i < d->nmembers; i++)
		devinfo_free(&d->members[i]);
	free(d->members);
	d->members = NULL;
	d->nmembers = 0;
	if (d->backing) {
		devinfo_free(d->backing);
		free(d->backing);
		d->backing = NULL;
	}
}

/* ---- block statistics ---- */

/* Fill the fields of @out from a run of numbers; the field order is the
 * kernel's (block/genhd.c part_stat_show and diskstats_show). */
static int parse_stat_fields(const char *p, const char *end, struct devinfo_blkstat *out)
{
	uint64_t *f[] = {
		&out->read_ios, &out->read_merges, &out->read_sectors, &out->read_ticks,
		&out->write_ios, &out->write_merges, &out->write_sectors, &out->write_ticks,
		&out->in_flight, &out->io_ticks, &out->time_in_queue,
		&out->discard_ios, &out->discard_merges, &out->discard_sectors,
		&out->discard_ticks, &out->flush_ios, &out->flush_ticks,
	};
	unsigned i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (procfs_scan_u64(&p, end, f[i]))
			break;
	/* 11 fields since 2.6; fewer is not a stat file. */
	if (i < 11)
		return -EBADMSG;
	out->nfields = i;
	return 0;
}

int devinfo_parse_block_stat(const char *buf, size_t len, struct devinfo_blkstat *out)
{
	const char *end = buf + len, *nl = memchr(buf, '\n', len);

	return parse_stat_fields(buf, nl ? nl : end, out);
}

int devinfo_parse_diskstats(const char *buf, size_t len, const char *name,
			    struct devinfo_blkstat *out)
{
	const char *end = buf + len, *p, *le, *w;
	size_t nlen = strlen(name);
	uint64_t v;

	for (p = buf; p < end; p = le + (le < end)) {
		le = memchr(p, '\n', (size_t)(end - p));
		if (!le)
			le = end;
		/* "   8       2 sda2 ..." */
		if (procfs_scan_u64(&p, le, &v) || procfs_scan_u64(&p, le, &v))
			continue;
		while (p < le && (*p == ' ' || *p == '\t'))
			p++;
		w = p;
		while (p < le && *p != ' ' && *p != '\t')
			p++;
		if ((size_t)(p - w) != nlen || memcmp(w, name, nlen) != 0)
			continue;
		return parse_stat_fields(p, le, out);
	}
	return -ENOENT;
}

int devinfo_stat_open(struct procfs_src *src, const struct devinfo *d)
{
	return procfs_src_open(src, d->sysdir, "stat");
}

int devinfo_stat_read(struct procfs_src *src, struct devinfo_blkstat *out)
{
	ssize_t n = procfs_src_read(src);

	if (n < 0)
		return (int)n;
	return devinfo_parse_block_stat(src->buf, src->len, out);
}

/* @d is @in's member, or a partition of one. */
static bool member_of(const struct devinfo *d, const struct devinfo *in)
{
	for (unsigned m = 0; m < in->nmembers; m++)
		if (!strcmp(in->members[m].name, d->name) || !strcmp(in->members[m].name, d->disk))
			return true;
	return false;
}

unsigned devinfo_counted(const struct devinfo *const *devs, unsigned n, bool *count)
{
	unsigned total = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct devinfo *d = devs[i];
		bool inside = false;

		for (unsigned j = 0; j < n && !inside; j++) {
			const struct devinfo *o = devs[j];

			if (j == i)
				continue;
			if (!strcmp(o->name, d->name))
				inside = j < i;		/* the first of duplicates counts */
			else if (d->kind == DEVINFO_PARTITION && !strcmp(d->disk, o->name))
				inside = true;
			else if (member_of(d, o))
				inside = true;
		}
		count[i] = !inside;
		total += count[i];
	}
	return total;
}
