/*
 * devsafety.c - the destructive-write checks; see devsafety.h.
 *
 * "In use" is asked of the kernel and explained from /proc and /sys:
 * open(O_EXCL) on a block device fails with EBUSY while another holder
 * has claimed it (a mount, swap, a dm or md device), in any mount
 * namespace, but says nothing about who. So the same device and each of
 * its partitions are first looked up in /proc/self/mountinfo, /proc/swaps
 * and /sys/class/block/NAME/holders, and the message names what was
 * found; O_EXCL catches the rest. Opening the whole disk O_EXCL succeeds
 * while only a partition is claimed, which is why partitions are looked
 * at one by one.
 *
 * "Carries data" is libblkid's answer, the probe wipefs(8) uses: every
 * superblock (filesystem, RAID, LVM, LUKS, swap; also ones with a bad
 * checksum) and partition table signature, on the device and on each
 * partition the kernel knows (probed through the device's own descriptor
 * at the partition's offset, so a missing /dev node does not hide one).
 */
#include "engines/devsafety.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <blkid.h>

/* The partitions of one device we look at; a disk has at most 128 GPT
 * entries by default, and more are reported as "and others". */
#define MAX_PARTS	128
/* sysfs "start" and "size" count 512-byte sectors whatever the device's
 * logical block size. */
#define SYSFS_SECTOR	512ull
/* What a refusal says it found, at most this many signatures. */
#define MAX_FINDINGS	4

struct part {
	char name[64];		/* kernel name: loop3p1, sda2 */
	dev_t dev;
	unsigned long long start, size;	/* bytes */
};

struct blkdev {
	const char *path;
	char name[64];		/* kernel name of the device itself */
	dev_t dev;
	struct part parts[MAX_PARTS];
	int nparts;
	bool more_parts;	/* past MAX_PARTS */
};

/* ---- small readers ---- */

static int read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -errno;
	buf[r] = '\0';
	return 0;
}

/* A whole /proc file (they report size 0), NUL-terminated; NULL if it
 * cannot be read. */
static char *slurp(const char *path)
{
	size_t cap = 16384, len = 0;
	char *buf = NULL, *nb;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	for (;;) {
		if (!buf || len + 1 >= cap) {
			cap *= buf ? 2 : 1;
			nb = realloc(buf, cap);
			if (!nb)
				goto fail;
			buf = nb;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

/* Copy the next space-separated field of @s into @out (n bytes),
 * decoding the octal escapes (\040 for a space) /proc uses in paths;
 * returns the rest of the line, or NULL at its end. */
static const char *field(const char *s, char *out, size_t n)
{
	size_t k = 0;

	while (*s == ' ')
		s++;
	if (*s == '\0' || *s == '\n')
		return NULL;
	while (*s && *s != ' ' && *s != '\n') {
		char c = *s++;

		if (c == '\\' && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' &&
		    s[1] <= '7' && s[2] >= '0' && s[2] <= '7') {
			c = (char)((s[0] - '0') << 6 | (s[1] - '0') << 3 | (s[2] - '0'));
			s += 3;
		}
		if (k + 1 < n)
			out[k++] = c;
	}
	if (n)
		out[k] = '\0';
	return s;
}

static const char *next_line(const char *s)
{
	s = strchr(s, '\n');
	return s ? s + 1 : NULL;
}

/* ---- mounts, swap, holders ---- */

int devsafety_find_mount(const char *mountinfo, dev_t dev, const char *name,
			 struct devsafety_mount *m)
{
	char devname[80] = "";

	if (name)
		snprintf(devname, sizeof(devname), "/dev/%s", name);
	for (const char *l = mountinfo; l && *l; l = next_line(l)) {
		/* ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPER */
		char tok[512], point[sizeof(m->point)];
		unsigned maj, mnr;
		const char *s = l;
		bool match;

		if (!(s = field(s, tok, sizeof(tok))) || !(s = field(s, tok, sizeof(tok))) ||
		    !(s = field(s, tok, sizeof(tok))))
			continue;
		match = sscanf(tok, "%u:%u", &maj, &mnr) == 2 &&
			makedev(maj, mnr) == dev;
		if (!(s = field(s, tok, sizeof(tok))) || !(s = field(s, point, sizeof(point))))
			continue;
		do
			s = field(s, tok, sizeof(tok));
		while (s && strcmp(tok, "-") != 0);
		if (!s || !(s = field(s, m->fstype, sizeof(m->fstype))) ||
		    !field(s, m->source, sizeof(m->source)))
			continue;
		if (match || (devname[0] && strcmp(m->source, devname) == 0)) {
			memcpy(m->point, point, sizeof(m->point));
			return 0;
		}
	}
	return -ENOENT;
}

/* Is @dev an active swap device? /proc/swaps names it by path. */
static bool is_swap(const char *swaps, dev_t dev)
{
	char path[PATH_MAX];
	struct stat st;

	/* The first line is the column header. */
	for (const char *l = swaps ? next_line(swaps) : NULL; l && *l; l = next_line(l))
		if (field(l, path, sizeof(path)) && stat(path, &st) == 0 &&
		    S_ISBLK(st.st_mode) && st.st_rdev == dev)
			return true;
	return false;
}

/* The first holder (dm-0, md127) of the device named @name, if any. */
static bool holder_of(const char *name, char *holder, size_t n)
{
	char p[PATH_MAX];
	struct dirent *d;
	bool found = false;
	DIR *dir;

	snprintf(p, sizeof(p), "/sys/class/block/%s/holders", name);
	dir = opendir(p);
	if (!dir)
		return false;
	while (!found && (d = readdir(dir)))
		if (d->d_name[0] != '.') {
			snprintf(holder, n, "%s", d->d_name);
			found = true;
		}
	closedir(dir);
	return found;
}

/* The kernel's name for @dev and its partitions, from sysfs. Without
 * sysfs the device is still checked, by its own name and O_EXCL. */
static void find_parts(struct blkdev *b)
{
	char p[PATH_MAX], link[PATH_MAX], v[64];
	struct dirent *d;
	ssize_t n;
	DIR *dir;

	snprintf(b->name, sizeof(b->name), "%s", strrchr(b->path, '/') ?
		 strrchr(b->path, '/') + 1 : b->path);
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", major(b->dev), minor(b->dev));
	n = readlink(p, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	if (strrchr(link, '/'))
		snprintf(b->name, sizeof(b->name), "%s", strrchr(link, '/') + 1);

	dir = opendir(p);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		struct part *pt = &b->parts[b->nparts];
		unsigned maj, mnr;
		char q[PATH_MAX];

		if (d->d_name[0] == '.' || strncmp(d->d_name, b->name, strlen(b->name)))
			continue;
		snprintf(q, sizeof(q), "%s/%s/partition", p, d->d_name);
		if (access(q, F_OK))
			continue;
		if (b->nparts == MAX_PARTS) {
			b->more_parts = true;
			break;
		}
		snprintf(pt->name, sizeof(pt->name), "%s", d->d_name);
		snprintf(q, sizeof(q), "%s/%s/dev", p, d->d_name);
		if (read_small(q, v, sizeof(v)) || sscanf(v, "%u:%u", &maj, &mnr) != 2)
			continue;
		pt->dev = makedev(maj, mnr);
		snprintf(q, sizeof(q), "%s/%s/start", p, d->d_name);
		if (read_small(q, v, sizeof(v)) || sscanf(v, "%llu", &pt->start) != 1)
			continue;
		snprintf(q, sizeof(q), "%s/%s/size", p, d->d_name);
		if (read_small(q, v, sizeof(v)) || sscanf(v, "%llu", &pt->size) != 1)
			continue;
		pt->start *= SYSFS_SECTOR;
		pt->size *= SYSFS_SECTOR;
		b->nparts++;
	}
	closedir(dir);
}

/*
 * Mounted, swap or held, for the device @path itself (@what "") or one
 * of its partitions (@what ": its partition loop3p1"): -EBUSY with the
 * reason, or 0.
 */
static int busy_one(const char *path, const char *what, dev_t dev, const char *name,
		    const char *mountinfo, const char *swaps, struct err *e)
{
	struct devsafety_mount m;
	char holder[64];

	if (mountinfo && devsafety_find_mount(mountinfo, dev, name, &m) == 0)
		return err_set(e, EBUSY, "devsafety: %s%s is mounted on %s (%s): "
			       "refusing to write to it; allow_destructive=1 "
			       "does not override this", path, what, m.point,
			       m.fstype);
	if (is_swap(swaps, dev))
		return err_set(e, EBUSY, "devsafety: %s%s is in use as swap: "
			       "refusing to write to it; allow_destructive=1 "
			       "does not override this", path, what);
	if (holder_of(name, holder, sizeof(holder)))
		return err_set(e, EBUSY, "devsafety: %s%s is held by %s (a "
			       "device-mapper, md or other stacked device "
			       "built on it): refusing to write to it; "
			       "allow_destructive=1 does not override this",
			       path, what, holder);
	return 0;
}

/* The kernel's own answer for a partition, when its node is in /dev. */
static int excl_busy(const char *node, dev_t dev)
{
	struct stat st;
	int fd;

	if (stat(node, &st) || !S_ISBLK(st.st_mode) || st.st_rdev != dev)
		return 0;
	fd = open(node, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0)
		return errno == EBUSY ? -EBUSY : 0;
	close(fd);
	return 0;
}

static int check_busy(struct blkdev *b, int *fdp, struct err *e)
{
	char *mountinfo = slurp("/proc/self/mountinfo");
	char *swaps = slurp("/proc/swaps");
	char what[96], node[128];
	int r, fd;

	r = busy_one(b->path, "", b->dev, b->name, mountinfo, swaps, e);
	for (int i = 0; !r && i < b->nparts; i++) {
		snprintf(what, sizeof(what), ": its partition %s", b->parts[i].name);
		r = busy_one(b->path, what, b->parts[i].dev, b->parts[i].name,
			     mountinfo, swaps, e);
		snprintf(node, sizeof(node), "/dev/%s", b->parts[i].name);
		if (!r && excl_busy(node, b->parts[i].dev))
			r = err_set(e, EBUSY, "devsafety: %s: its partition %s is "
				    "in use (the kernel has another exclusive "
				    "holder: a mount in another namespace, a "
				    "RAID, LVM or dm member, or swap): refusing "
				    "to write to it; allow_destructive=1 does "
				    "not override this", b->path, b->parts[i].name);
	}
	free(mountinfo);
	free(swaps);
	if (r)
		return r;

	fd = open(b->path, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0 && errno == EBUSY)
		return err_set(e, EBUSY, "devsafety: %s is in use (the kernel has "
			       "another exclusive holder: a mount in another "
			       "namespace, a RAID, LVM or dm member, or swap): "
			       "refusing to write to it; allow_destructive=1 "
			       "does not override this", b->path);
	if (fd < 0)
		return err_set(e, errno, "devsafety: open %s: %s", b->path,
			       strerror(errno));
	*fdp = fd;
	return 0;
}

/* ---- signatures ---- */

/* What the probes found, as the middle of the refusal: " carries A and
 * B; its partition sda1 carries C". */
struct findings {
	char text[ERR_MSG_MAX / 2];
	int n;
	bool more;
};

static const char *article(const char *word)
{
	return strchr("aeiouAEIOU", word[0]) ? "an" : "a";
}

static void add_finding(struct findings *f, const char *region, bool first,
			blkid_probe pr)
{
	const char *type = NULL, *usage = NULL, *uuid = NULL, *label = NULL;
	char ids[160] = "";
	const char *kind;
	size_t len = strlen(f->text);

	if (f->n == MAX_FINDINGS) {
		f->more = true;
		return;
	}
	if (blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0) {
		blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
		blkid_probe_lookup_value(pr, "UUID", &uuid, NULL);
		blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
		if (usage && !strcmp(usage, "filesystem"))
			kind = "filesystem";
		else if (usage && !strcmp(usage, "raid"))
			kind = "RAID or volume-manager superblock";
		else if (usage && !strcmp(usage, "crypto"))
			kind = "encrypted-volume header";
		else
			kind = "signature";
	} else if (blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL) == 0) {
		blkid_probe_lookup_value(pr, "PTUUID", &uuid, NULL);
		kind = "partition table";
	} else {
		return;
	}
	if (uuid && label)
		snprintf(ids, sizeof(ids), " (UUID %s, label \"%s\")", uuid, label);
	else if (uuid)
		snprintf(ids, sizeof(ids), " (UUID %s)", uuid);
	else if (label)
		snprintf(ids, sizeof(ids), " (label \"%s\")", label);
	snprintf(f->text + len, sizeof(f->text) - len, "%s%s %s %s%s",
		 first ? region : " and", article(type), type, kind, ids);
	f->n++;
}

/* Every signature libblkid knows in [off, off+size) of @fd (size 0: to
 * the end), added to @f after @region (" carries ") for the first. */
static int probe_region(int fd, unsigned long long off, unsigned long long size,
			const char *region, struct findings *f)
{
	blkid_probe pr = blkid_new_probe();
	bool first = true;
	int r;

	if (!pr)
		return -ENOMEM;
	if (blkid_probe_set_device(pr, fd, (blkid_loff_t)off, (blkid_loff_t)size)) {
		blkid_free_probe(pr);
		return -EIO;
	}
	blkid_probe_enable_superblocks(pr, 1);
	/* BADCSUM: a damaged filesystem is still somebody's data. */
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
					  BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL |
					  BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_FORCE_GPT);
	while ((r = blkid_do_probe(pr)) == 0) {
		int n = f->n;

		add_finding(f, region, first, pr);
		first = first && f->n == n;
	}
	blkid_free_probe(pr);
	return r < 0 ? -EIO : 0;
}

static int check_signatures(const struct blkdev *b, int fd, struct err *e)
{
	struct findings f = { .text = "" };
	char region[96];

	if (probe_region(fd, 0, 0, " carries ", &f))
		return err_set(e, EIO, "devsafety: %s: libblkid could not probe it "
			       "for filesystems and partition tables: refusing "
			       "to write to it; allow_destructive=1 overrides",
			       b->path);
	for (int i = 0; i < b->nparts; i++) {
		snprintf(region, sizeof(region), "%sits partition %s carries ",
			 f.n ? "; " : ": ", b->parts[i].name);
		if (probe_region(fd, b->parts[i].start, b->parts[i].size, region, &f))
			return err_set(e, EIO, "devsafety: %s: libblkid could not "
				       "probe its partition %s: refusing to write "
				       "to it; allow_destructive=1 overrides",
				       b->path, b->parts[i].name);
	}
	if (!f.n && !b->nparts)
		return 0;
	/* Partitions the kernel still knows, though nothing marks them now
	 * (a table wiped without a re-read): someone made them. */
	if (!f.n)
		return err_set(e, EEXIST, "devsafety: %s has %d partition%s "
			       "(%s%s%s): refusing to write to it; "
			       "allow_destructive=1 overrides", b->path,
			       b->nparts, b->nparts > 1 ? "s" : "",
			       b->parts[0].name, b->nparts > 1 ? ", ..." : "",
			       b->more_parts ? " and more" : "");
	return err_set(e, EEXIST, "devsafety: %s%s%s: refusing to write to it; "
		       "allow_destructive=1 overrides", b->path, f.text,
		       f.more ? " and more" : "");
}

/* ---- the check ---- */

int devsafety_check(const char *path, bool allow_destructive, struct err *e)
{
	struct blkdev *b;
	struct stat st;
	int fd = -1, r;

	if (stat(path, &st))
		return err_set(e, errno, "devsafety: %s: %s", path, strerror(errno));
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISDIR(st.st_mode))
		return err_set(e, EISDIR, "devsafety: %s is a directory; a target "
			       "is a regular file or a block device", path);
	if (!S_ISBLK(st.st_mode))
		return err_set(e, EINVAL, "devsafety: %s is neither a regular file "
			       "nor a block device", path);

	b = calloc(1, sizeof(*b));
	if (!b)
		return err_set(e, ENOMEM, "devsafety: %s: out of memory", path);
	b->path = path;
	b->dev = st.st_rdev;
	find_parts(b);
	r = check_busy(b, &fd, e);
	if (!r && !allow_destructive)
		r = check_signatures(b, fd, e);
	if (fd >= 0)
		close(fd);
	free(b);
	return r;
}
