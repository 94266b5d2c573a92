/*
 * target.c - opening what a job reads or writes; see target.h.
 *
 * Regular files are laid out with pseudo-random data written for real:
 * a hole, a fallocated (unwritten) extent or a run of zeros on a
 * compressing/deduplicating device reads without any device I/O and
 * would make every number faultline prints a lie. A read job's block
 * devices and files are only ever opened read-only; only a write job
 * asks for O_RDWR.
 *
 * A read job writes nothing it did not make: a new file is
 * created with O_EXCL (which never follows a link), marked with
 * TARGET_LAYOUT_XATTR, and only a file so marked, owned by us and not
 * reached through a symlink, is ever appended to; any other short file
 * is refused before anything runs unless the job consents (overwrite=1).
 * In a sticky world-writable directory (/tmp) a symlink or another
 * user's file is refused outright: anyone could have planted it there.
 */
#include "engines/target.h"
#include "lib/latclock.h"
#include "lib/rng.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

/* Layout writes this much per pwrite: large enough that syscall cost
 * vanishes next to the copy, small enough to stay in L2/L3-ish sizes and
 * not to matter for memory. */
#define LAYOUT_CHUNK		(4u << 20)
/* Write-behind window: start writeback of each chunk as soon as it is
 * written and wait for the one this far behind, so dirty memory stays
 * bounded and the final fsync has little left to do (the streaming
 * write pattern of sync_file_range(2)). */
#define LAYOUT_WINDOW		(64u << 20)
/* progress() at most this often (4 per second). */
#define PROGRESS_PERIOD_NS	250000000ull
/* Fallback when the device's logical block size cannot be found. */
#define DEFAULT_LBS		512u

/* ---- pseudo-random data: xoshiro256**, seeded through splitmix64 ---- */

struct prng {
	uint64_t s[4];
};


static void prng_seed(struct prng *p, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		p->s[i] = splitmix64(&seed);
}

static void prng_fill(struct prng *p, uint64_t *w, size_t nwords)
{
	uint64_t s0 = p->s[0], s1 = p->s[1], s2 = p->s[2], s3 = p->s[3];

	for (size_t i = 0; i < nwords; i++) {
		uint64_t t = s1 << 17;

		w[i] = rotl64(s1 * 5, 7) * 9;
		s2 ^= s0;
		s3 ^= s1;
		s1 ^= s2;
		s0 ^= s3;
		s2 ^= t;
		s3 = rotl64(s3, 45);
	}
	p->s[0] = s0, p->s[1] = s1, p->s[2] = s2, p->s[3] = s3;
}

/* ---- small helpers ---- */

/* "4194304 bytes (4.0 MiB)" for messages. */
static const char *fmt_bytes(char *buf, size_t n, uint64_t v)
{
	static const char *unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double d = (double)v;
	int u = -1;

	while (d >= 1024.0 && u < 4) {
		d /= 1024.0;
		u++;
	}
	if (u < 0)
		snprintf(buf, n, "%llu bytes", (unsigned long long)v);
	else
		snprintf(buf, n, "%llu bytes (%.1f %s)", (unsigned long long)v,
			 d, unit[u]);
	return buf;
}

static const char *type_name(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISLNK(m))
		return "a symbolic link";
	return "not a regular file or block device";
}

static int reject_type(const char *path, mode_t m, struct err *e)
{
	if (S_ISDIR(m))
		return err_set(e, EISDIR, "target: %s is a directory; a target "
			       "is a regular file or a block device", path);
	return err_set(e, EINVAL, "target: %s is %s; a "
		       "target is a regular file or a block device", path,
		       type_name(m));
}

static void warnf(const struct target_hooks *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warnf(const struct target_hooks *h, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	if (!h || !h->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	h->warn(h->arg, msg);
}

static unsigned read_uint_file(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (unsigned)strtoul(buf, NULL, 10);
}

/*
 * Logical block size of the block device holding a filesystem, from
 * /sys/dev/block/MAJ:MIN/queue (a partition has no queue/ of its own: its
 * parent disk's is one directory up). 0 when there is none (tmpfs,
 * btrfs's anonymous devices, overlayfs).
 */
static unsigned sysfs_lbs(dev_t dev)
{
	char p[128];
	unsigned v;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/logical_block_size",
		 major(dev), minor(dev));
	v = read_uint_file(p);
	if (v)
		return v;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../queue/logical_block_size",
		 major(dev), minor(dev));
	return read_uint_file(p);
}

/*
 * Alignment O_DIRECT needs on this file. statx's DIOALIGN (Linux 6.1+)
 * is what the filesystem itself enforces; otherwise the device's logical
 * block size; otherwise 512.
 */
static unsigned file_lbs(int fd, dev_t dev)
{
	unsigned v;
#ifdef STATX_DIOALIGN
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
	    (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align)
		return sx.stx_dio_offset_align;
#endif
	v = sysfs_lbs(dev);
	return v ? v : DEFAULT_LBS;
}

static void target_reset(struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->fd_direct = -1;
}

/* base/bs alignment for direct=1, shared by files and devices. */
static int check_direct_align(const struct target *t, uint64_t bs, struct err *e)
{
	if (bs && bs % t->lbs)
		return err_set(e, EINVAL, "target: %s: bs=%llu is not a multiple "
			       "of the logical block size %u, which direct=1 "
			       "requires", t->path, (unsigned long long)bs,
			       t->lbs);
	if (t->base % t->lbs)
		return err_set(e, EINVAL, "target: %s: offset=%llu is not a "
			       "multiple of the logical block size %u, which "
			       "direct=1 requires", t->path,
			       (unsigned long long)t->base, t->lbs);
	return 0;
}

/* open(2) flags for a target's descriptors, from target_open_for's @how. */
static int open_mode(unsigned how)
{
	int m = (how & TARGET_O_WRITE) ? O_RDWR : O_RDONLY;

	if (how & TARGET_O_SYNC)
		m |= O_SYNC;
	else if (how & TARGET_O_DSYNC)
		m |= O_DSYNC;
	return m;
}

static int open_direct(struct target *t, struct err *e)
{
	struct stat a, b;

	t->fd_direct = open(t->path, open_mode(t->how) | O_DIRECT | O_CLOEXEC);
	if (t->fd_direct < 0) {
		if (errno == EINVAL)
			return err_set(e, EINVAL, "target: %s: the filesystem "
				       "does not support O_DIRECT (direct=1); "
				       "use direct=0 or a file on another "
				       "filesystem", t->path);
		return err_set(e, errno, "target: open %s with O_DIRECT: %s",
			       t->path, strerror(errno));
	}
	/* The name must still be the file we checked, not a replacement. */
	if (fstat(t->fd, &a) == 0 && fstat(t->fd_direct, &b) == 0 &&
	    (a.st_dev != b.st_dev || a.st_ino != b.st_ino))
		return err_set(e, ESTALE, "target: %s was replaced while "
			       "being opened", t->path);
	return 0;
}

/* ---- block devices ---- */

static int blkdev_open(struct target *t, uint64_t bs, bool direct,
		       const struct stat *st, struct err *e)
{
	char b1[64], b2[64];
	uint64_t size;
	int ss;

	t->is_blkdev = true;
	t->dev = st->st_rdev;
	if (ioctl(t->fd, BLKGETSIZE64, &size) < 0)
		return err_set(e, errno, "target: %s: BLKGETSIZE64: %s", t->path,
			       strerror(errno));
	if (ioctl(t->fd, BLKSSZGET, &ss) < 0)
		return err_set(e, errno, "target: %s: BLKSSZGET: %s", t->path,
			       strerror(errno));
	t->dev_size = size;
	t->lbs = ss > 0 ? (unsigned)ss : DEFAULT_LBS;

	if (t->len == 0) {
		if (t->base >= size)
			return err_set(e, EINVAL, "target: %s: offset=%llu is at "
				       "or past the end of the device (%s)",
				       t->path, (unsigned long long)t->base,
				       fmt_bytes(b1, sizeof(b1), size));
		t->len = size - t->base;
	} else if (t->base + t->len > size) {
		return err_set(e, EINVAL, "target: %s: offset+size ends at %s, "
			       "past the end of the device (%s)", t->path,
			       fmt_bytes(b1, sizeof(b1), t->base + t->len),
			       fmt_bytes(b2, sizeof(b2), size));
	}
	if (direct) {
		int r = check_direct_align(t, bs, e);

		if (r)
			return r;
		return open_direct(t, e);
	}
	return 0;
}

/* ---- regular files ---- */

static void report(const struct target_hooks *h, const char *path,
		   uint64_t done, uint64_t total)
{
	if (h && h->progress)
		h->progress(h->arg, path, done, total);
}

/*
 * Append incompressible data to @wfd from its current end to @end. The
 * caller holds an exclusive flock, so the end we see is the end there is.
 * Only bytes past the old end are ever written.
 */
static int layout(struct target *t, int wfd, uint64_t end,
		  const struct target_hooks *h, struct err *e)
{
	char b1[64], b2[64];
	struct statvfs vfs;
	struct stat st;
	struct prng rng;
	uint64_t *buf = NULL;
	uint64_t start, pos, total, last_report;
	int r = 0;

	if (fstat(wfd, &st) < 0)
		return err_set(e, errno, "target: stat %s: %s", t->path,
			       strerror(errno));
	start = (uint64_t)st.st_size;
	if (start >= end)
		return 0;	/* someone else extended it meanwhile */
	total = end - start;

	/* Refuse at once what cannot fit, rather than after writing GiBs. */
	if (fstatvfs(wfd, &vfs) == 0 && vfs.f_frsize &&
	    (uint64_t)vfs.f_bfree * vfs.f_frsize < total)
		return err_set(e, ENOSPC, "target: lay out %s: needs %s, the "
			       "filesystem has %s free", t->path,
			       fmt_bytes(b1, sizeof(b1), total),
			       fmt_bytes(b2, sizeof(b2),
					 (uint64_t)vfs.f_bfree * vfs.f_frsize));

	if (posix_memalign((void **)&buf, 4096, LAYOUT_CHUNK))
		return err_set(e, ENOMEM, "target: lay out %s: no memory for "
			       "a %u-byte buffer", t->path, LAYOUT_CHUNK);
	/* Different data in every file and every run: a deduplicating
	 * device must not get away with storing one copy. */
	prng_seed(&rng, now_ns() ^ ((uint64_t)getpid() << 32) ^
		  (uint64_t)st.st_ino ^ (uint64_t)(uintptr_t)buf);

	report(h, t->path, 0, total);
	last_report = now_ns();
	for (pos = start; pos < end;) {
		size_t n = end - pos < LAYOUT_CHUNK ? end - pos : LAYOUT_CHUNK;
		size_t off = 0;

		prng_fill(&rng, buf, (n + 7) / 8);
		while (off < n) {
			ssize_t w = pwrite(wfd, (char *)buf + off, n - off,
					   (off_t)(pos + off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				int err = w < 0 ? errno : EIO;

				r = err_set(e, err, "target: lay out %s: write at "
					    "offset %llu: %s (wrote %s of %s)",
					    t->path,
					    (unsigned long long)(pos + off),
					    strerror(err),
					    fmt_bytes(b1, sizeof(b1), pos + off - start),
					    fmt_bytes(b2, sizeof(b2), total));
				goto out;
			}
			off += (size_t)w;
		}
		/* Write-behind: start writeback of this chunk, wait for the
		 * one a window back. Failures here only cost speed; the
		 * fsync below reports real errors. */
		sync_file_range(wfd, (off64_t)pos, (off64_t)n,
				SYNC_FILE_RANGE_WRITE);
		if (pos - start >= LAYOUT_WINDOW)
			sync_file_range(wfd, (off64_t)(pos - LAYOUT_WINDOW),
					LAYOUT_CHUNK,
					SYNC_FILE_RANGE_WAIT_BEFORE |
					SYNC_FILE_RANGE_WRITE |
					SYNC_FILE_RANGE_WAIT_AFTER);
		pos += n;
		t->laid_out = pos - start;
		/* Ctrl-C: a file this run made goes (target_open_for); one
		 * it extends keeps what was appended, whole chunks of data,
		 * and the next run appends only the rest. */
		if (pos < end && h && h->stop && __atomic_load_n(h->stop, __ATOMIC_RELAXED)) {
			r = err_set(e, EINTR, "target: lay out %s: stopped by a signal after %s of %s", t->path,
				    fmt_bytes(b1, sizeof(b1), pos - start), fmt_bytes(b2, sizeof(b2), total));
			goto out;
		}

		if (pos < end && now_ns() - last_report >= PROGRESS_PERIOD_NS) {
			report(h, t->path, pos - start, total);
			last_report = now_ns();
		}
	}
	if (fsync(wfd) < 0) {
		r = err_set(e, errno, "target: lay out %s: fsync: %s", t->path,
			    strerror(errno));
		goto out;
	}
	report(h, t->path, total, total);
out:
	free(buf);
	return r;
}

/*
 * Holes and unwritten extents in the region read as zeros without I/O.
 * st_blocks catches a sparse file; SEEK_HOLE also catches fallocated
 * (unwritten) extents on filesystems that report them as holes (ext4,
 * xfs). Allocation below one filesystem block is ignored: tiny files may
 * live inline in the inode.
 */
static void check_sparse(struct target *t, const struct stat *st,
			 const struct target_hooks *h)
{
	char b1[64], b2[64];
	uint64_t alloc = (uint64_t)st->st_blocks * 512;
	uint64_t blk = st->st_blksize > 0 ? (uint64_t)st->st_blksize : 4096;
	uint64_t need = (uint64_t)st->st_size / blk * blk;
	off_t hole;

	if (alloc < need) {
		t->sparse = true;
		warnf(h, "target: %s is sparse (%s allocated of %s): holes "
		      "read as zeros without any I/O, so results for it are "
		      "invalid; remove it and let faultline lay it out",
		      t->path, fmt_bytes(b1, sizeof(b1), alloc),
		      fmt_bytes(b2, sizeof(b2), (uint64_t)st->st_size));
		return;
	}
	hole = lseek(t->fd, (off_t)t->base, SEEK_HOLE);
	if (hole >= 0 && (uint64_t)hole < t->base + t->len) {
		t->sparse = true;
		warnf(h, "target: %s has a hole or unwritten (fallocated) "
		      "extent at offset %lld inside the job's region: it reads "
		      "as zeros without any I/O, so results for it are "
		      "invalid; remove it and let faultline lay it out",
		      t->path, (long long)hole);
	}
}

/*
 * A target in a sticky, world-writable directory (/tmp, /var/tmp,
 * /dev/shm) that is a symlink, or a file another user owns, may have
 * been planted there under the name a job (or `make demo`) will use.
 * Refuse it rather than read, lay out or append through it.
 */
static int check_planted(const char *path, struct err *e)
{
	char dir[4096];
	struct stat ds, ls;
	const char *slash;
	size_t n;

	if (lstat(path, &ls) < 0)
		return 0;		/* missing: created with O_EXCL */
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else {
		n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= sizeof(dir))
			return 0;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	if (stat(dir, &ds) < 0 || !(ds.st_mode & S_ISVTX) ||
	    !(ds.st_mode & S_IWOTH))
		return 0;
	if (S_ISLNK(ls.st_mode))
		return err_set(e, EPERM, "target: %s is a symlink in the "
			       "world-writable directory %s: anyone could have "
			       "planted it there, so faultline does not follow it; "
			       "name the file it points to, or remove the link",
			       path, dir);
	if (ls.st_uid != geteuid() && !S_ISBLK(ls.st_mode))
		return err_set(e, EPERM, "target: %s belongs to uid %u, not to "
			       "this user (uid %u), in the world-writable "
			       "directory %s: anyone could have planted it there; "
			       "remove it or use a directory of your own",
			       path, (unsigned)ls.st_uid, (unsigned)geteuid(), dir);
	return 0;
}

/* Whether a read job may append to @path, open as @t->fd (@st): a file
 * faultline laid out itself (the xattr), ours and not behind a link, or
 * any file with the job's consent. Returns a descriptor for writing that
 * is the same file as @t->fd, or -errno with @e filled. */
static int open_to_extend(struct target *t, const struct stat *st, uint64_t end,
			  struct err *e)
{
	char b1[64], b2[64];
	struct stat ls, ws;
	char mark[8];
	bool made = fgetxattr(t->fd, TARGET_LAYOUT_XATTR, mark, sizeof(mark)) > 0 &&
		    st->st_uid == geteuid();
	int wfd;

	if (!made && !(t->how & TARGET_O_EXTEND))
		return err_set(e, EPERM, "target: %s is %s, shorter than "
			       "offset+size (%s), and faultline did not make it: "
			       "a read job never writes a file it did not make. "
			       "Give a size of at most the file's, remove it so "
			       "that a new one is laid out, or set overwrite=1 to "
			       "let faultline append to it", t->path,
			       fmt_bytes(b1, sizeof(b1), (uint64_t)st->st_size),
			       fmt_bytes(b2, sizeof(b2), end));
	if (lstat(t->path, &ls) == 0 && S_ISLNK(ls.st_mode))
		return err_set(e, EPERM, "target: %s is a symlink, and faultline "
			       "appends only to the file itself: name the file it "
			       "points to", t->path);
	wfd = open(t->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (wfd < 0)
		return err_set(e, errno, "target: %s is %s, shorter than "
			       "offset+size (%s), and cannot be extended: open "
			       "for writing: %s", t->path,
			       fmt_bytes(b1, sizeof(b1), (uint64_t)st->st_size),
			       fmt_bytes(b2, sizeof(b2), end), strerror(errno));
	/* The name may have been swapped since t->fd was opened. */
	if (fstat(wfd, &ws) < 0 || ws.st_dev != st->st_dev || ws.st_ino != st->st_ino) {
		close(wfd);
		return err_set(e, EPERM, "target: %s changed while it was being "
			       "opened; refusing to write it", t->path);
	}
	return wfd;
}

static int file_open(struct target *t, uint64_t bs, bool direct,
		     const struct target_hooks *h, int wfd, struct err *e)
{
	char b1[64], b2[64];
	struct stat st;
	uint64_t end;
	int r;

	if (fstat(t->fd, &st) < 0)
		return err_set(e, errno, "target: stat %s: %s", t->path,
			       strerror(errno));
	t->dev = st.st_dev;
	t->lbs = file_lbs(t->fd, st.st_dev);

	if (t->len == 0) {
		if (t->base >= (uint64_t)st.st_size)
			return err_set(e, EINVAL, "target: %s: offset=%llu is at "
				       "or past the end of the file (%s); give "
				       "a size to extend it",
				       t->path, (unsigned long long)t->base,
				       fmt_bytes(b1, sizeof(b1), st.st_size));
		t->len = (uint64_t)st.st_size - t->base;
	}
	end = t->base + t->len;

	/* Everything that can reject the job comes before the layout, so
	 * an invalid job never costs a multi-GiB write. */
	if (direct) {
		r = check_direct_align(t, bs, e);
		if (r)
			return r;
		r = open_direct(t, e);
		if (r)
			return r;
	}

	if ((uint64_t)st.st_size < end) {
		bool own = wfd >= 0;

		if (!own) {
			/* A write job writes its region anyway; a read job
			 * only what it made, or with consent. */
			if (!t->writable)
				wfd = open_to_extend(t, &st, end, e);
			else if ((wfd = open(t->path, O_WRONLY | O_CLOEXEC)) < 0)
				wfd = err_set(e, errno, "target: %s is %s, shorter than "
					      "offset+size (%s), and cannot be extended: "
					      "open for writing: %s", t->path,
					      fmt_bytes(b1, sizeof(b1), st.st_size),
					      fmt_bytes(b2, sizeof(b2), end), strerror(errno));
			if (wfd < 0)
				return wfd;
		}
		/* Two jobs naming one file must not both append. */
		while (flock(wfd, LOCK_EX) < 0 && errno == EINTR)
			;
		r = layout(t, wfd, end, h, e);
		if (!own)
			close(wfd);	/* also drops the lock */
		else
			flock(wfd, LOCK_UN);
		if (r)
			return r;
		if (fstat(t->fd, &st) < 0)
			return err_set(e, errno, "target: stat %s: %s", t->path,
				       strerror(errno));
	}
	t->dev_size = (uint64_t)st.st_size;
	check_sparse(t, &st, h);
	return 0;
}

/*
 * @path does not resolve: when it is a symbolic link (to a file that is
 * not there), say so and name where it points. faultline lays out a
 * missing file only under its own name (O_EXCL | O_NOFOLLOW, above), so
 * without this a link to nothing would read as "File exists".
 */
static int dangling_link(const char *path, struct err *e)
{
	char to[4096];
	struct stat ls;
	ssize_t n;

	if (lstat(path, &ls) < 0 || !S_ISLNK(ls.st_mode))
		return 0;
	n = readlink(path, to, sizeof(to) - 1);
	if (n < 0)
		return err_set(e, ENOENT, "target: %s is a symbolic link whose target does not "
			       "exist (readlink: %s)", path, strerror(errno));
	to[n] = '\0';
	return err_set(e, ENOENT, "target: %s is a symbolic link to %s, which does not exist; "
		       "faultline lays out a missing file only under its own name, never through "
		       "a link: create %s, or point the link at the data", path, to, to);
}

int target_open(struct target *t, const char *path, uint64_t base, uint64_t len,
		uint64_t bs, bool direct, const struct target_hooks *hooks,
		struct err *e)
{
	return target_open_for(t, path, base, len, bs, direct, 0, hooks, e);
}

int target_open_for(struct target *t, const char *path, uint64_t base, uint64_t len,
		    uint64_t bs, bool direct, unsigned how, const struct target_hooks *hooks,
		    struct err *e)
{
	struct stat st;
	bool created = false;
	int wfd = -1, r, tries = 0;

	target_reset(t);
	t->base = base;
	t->len = len;
	t->how = how;
	t->writable = how & TARGET_O_WRITE;
	if (base + len < base)
		return err_set(e, EINVAL, "target: %s: offset+size overflows",
			       path);
	t->path = strdup(path);
	if (!t->path)
		return err_set(e, ENOMEM, "target: %s: out of memory", path);

	r = check_planted(path, e);
	if (r)
		goto fail;
again:
	/* O_NONBLOCK so that a FIFO is rejected instead of hanging us. */
	t->fd = open(path, open_mode(how) | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0 && errno == ENOENT) {
		r = dangling_link(path, e);
		if (r)
			goto fail;
		if (len == 0) {
			r = err_set(e, ENOENT, "target: %s does not exist, and "
				    "creating it needs a size (size= or "
				    "filesize=)", path);
			goto fail;
		}
		if (how & TARGET_O_NOCREATE) {
			r = err_set(e, ENOENT, "target: %s does not exist, and "
				    "allow_file_create=0 forbids making it", path);
			goto fail;
		}
		/* O_EXCL fails on any existing name, a dangling symlink
		 * included: this creates a new file or nothing. */
		wfd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (wfd < 0 && errno == EEXIST && tries++ < 3)
			goto again;	/* made by someone else meanwhile */
		if (wfd < 0) {
			r = err_set(e, errno, "target: create %s: %s", path,
				    strerror(errno));
			goto fail;
		}
		created = true;
		/* Best effort: where the filesystem has no user xattrs, a
		 * file this run left short is refused next time instead. */
		fsetxattr(wfd, TARGET_LAYOUT_XATTR, "1", 1, 0);
		t->fd = open(path, open_mode(how) | O_NOFOLLOW | O_CLOEXEC);
	}
	if (t->fd < 0) {
		r = err_set(e, errno, "target: open %s: %s", path,
			    strerror(errno));
		goto fail;
	}
	if (fstat(t->fd, &st) < 0) {
		r = err_set(e, errno, "target: stat %s: %s", path,
			    strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		r = reject_type(path, st.st_mode, e);
		goto fail;
	}
	fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) & ~O_NONBLOCK);

	if (S_ISBLK(st.st_mode))
		r = blkdev_open(t, bs, direct, &st, e);
	else
		r = file_open(t, bs, direct, hooks, wfd, e);
	if (r)
		goto fail;
	if (wfd >= 0)
		close(wfd);
	return 0;

fail:
	if (wfd >= 0)
		close(wfd);
	if (created)
		unlink(path);
	if (r == -EINTR && e) {
		char msg[sizeof(e->msg)];

		memcpy(msg, e->msg, sizeof(msg));
		err_set(e, EINTR, created ? "%s; the file, made by this run, is removed" :
				  "%s; what it appended stays, and the next run appends only the rest", msg);
	}
	target_close(t);
	target_reset(t);
	t->base = base;
	t->len = len;
	t->how = how;
	t->writable = how & TARGET_O_WRITE;
	return r;
}

void target_close(struct target *t)
{
	if (t->map && t->map != MAP_FAILED)
		munmap(t->map, t->map_len);
	if (t->fd_direct >= 0)
		close(t->fd_direct);
	if (t->fd >= 0)
		close(t->fd);
	free(t->path);
	t->map = NULL;
	t->map_len = 0;
	t->fd = t->fd_direct = -1;
	t->path = NULL;
}

/* A new open file of @fd's file, with its flags; -1 for -1. */
static int reopen_fd(int fd)
{
	char name[sizeof("/proc/self/fd/") + 12];
	int fl, nfd;

	if (fd < 0)
		return -1;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	/* The magic link is a symlink: no O_NOFOLLOW here; and never
	 * anything that would create or cut the file. */
	nfd = open(name, (fl & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW)) | O_CLOEXEC);
	return nfd < 0 ? -errno : nfd;
}

int target_reopen(const struct target *t, struct target *copy)
{
	*copy = *t;
	copy->fd = reopen_fd(t->fd);
	if (copy->fd < -1) {
		int ret = copy->fd;

		copy->fd = -1;
		return ret;
	}
	copy->fd_direct = reopen_fd(t->fd_direct);
	if (copy->fd_direct < -1) {
		int ret = copy->fd_direct;

		copy->fd_direct = -1;
		target_reopen_close(copy);
		return ret;
	}
	return 0;
}

void target_reopen_close(struct target *copy)
{
	if (copy->fd_direct >= 0)
		close(copy->fd_direct);
	if (copy->fd >= 0)
		close(copy->fd);
	copy->fd = copy->fd_direct = -1;
}

struct target *targets_reopen(const struct target *ts, unsigned n, unsigned first, unsigned count)
{
	struct target *c;

	if (!n || first + count > n)
		return NULL;
	c = malloc(n * sizeof(*c));
	if (!c)
		return NULL;
	memcpy(c, ts, n * sizeof(*c));
	for (unsigned i = first; i < first + count; i++) {
		if (target_reopen(&ts[i], &c[i])) {
			targets_reopen_free(c, first, i - first);
			return NULL;
		}
	}
	return c;
}

void targets_reopen_free(struct target *copies, unsigned first, unsigned count)
{
	if (!copies)
		return;
	for (unsigned i = first; i < first + count; i++)
		target_reopen_close(&copies[i]);
	free(copies);
}

int target_invalidate(struct target *t, struct err *e)
{
	int r;

	t->flush_denied = false;
	/* Dirty pages survive DONTNEED, so a file another process has just
	 * written would stay cached (and, under mem_limit, charged to the
	 * wrong cgroup): write it back first. Nothing dirty: nearly free. */
	if (!t->is_blkdev && fdatasync(t->fd) < 0)
		return err_set(e, errno, "target: fdatasync %s: %s", t->path,
			       strerror(errno));
	r = posix_fadvise(t->fd, (off_t)t->base, (off_t)t->len,
			  POSIX_FADV_DONTNEED);
	if (r)
		return err_set(e, r, "target: drop %s from the page cache "
			       "(fadvise DONTNEED): %s", t->path, strerror(r));
	if (t->is_blkdev && ioctl(t->fd, BLKFLSBUF, 0) < 0) {
		if (errno == EACCES || errno == EPERM)
			t->flush_denied = true;
		else
			return err_set(e, errno, "target: %s: BLKFLSBUF: %s",
				       t->path, strerror(errno));
	}
	return 0;
}

int target_probe_size(const char *path, uint64_t *size, struct err *e)
{
	struct stat st;
	uint64_t sz;
	int fd, r = 0;

	if (stat(path, &st) < 0)
		return err_set(e, errno, "target: stat %s: %s", path,
			       strerror(errno));
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return 0;
	}
	if (!S_ISBLK(st.st_mode))
		return reject_type(path, st.st_mode, e);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, errno, "target: open %s: %s", path,
			       strerror(errno));
	if (ioctl(fd, BLKGETSIZE64, &sz) < 0)
		r = err_set(e, errno, "target: %s: BLKGETSIZE64: %s", path,
			    strerror(errno));
	else
		*size = sz;
	close(fd);
	return r;
}
