/*
 * test_target.c - target.c: layout with real data, no truncation, sparse
 * detection, rejections with context, O_DIRECT alignment, block devices
 * through a loop device, and page-cache invalidation checked by mincore.
 *
 * Scratch files live in a mkdtemp directory under $TMPDIR (or /tmp) and
 * are a few MiB each; the directory is removed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "engines/target.h"

#define MIB (1024ull * 1024)
#define BLK 4096

static char dir[256];

/* ---- helpers ---- */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_target.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *scratch(const char *name)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* A file of @size bytes of a known, non-zero pattern. */
static void make_file(const char *path, uint64_t size)
{
	char buf[BLK];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	for (uint64_t off = 0; off < size; off += BLK) {
		size_t n = size - off < BLK ? size - off : BLK;

		memset(buf, 'A' + (int)(off / BLK % 26), sizeof(buf));
		assert_int_equal(pwrite(fd, buf, n, (off_t)off), (ssize_t)n);
	}
	assert_int_equal(fsync(fd), 0);
	close(fd);
}

/* FNV-1a of the first @n bytes of a file. */
static uint64_t hash_file(const char *path, uint64_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned char buf[BLK];
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	for (uint64_t off = 0; off < n;) {
		ssize_t r = pread(fd, buf, n - off < BLK ? n - off : BLK, (off_t)off);

		assert_true(r > 0);
		for (ssize_t i = 0; i < r; i++)
			h = (h ^ buf[i]) * 0x100000001b3ull;
		off += (uint64_t)r;
	}
	close(fd);
	return h;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

/* Pages of [0, len) of @fd resident in the page cache. mincore looks at
 * the page cache without faulting anything in. */
static size_t resident_pages(int fd, uint64_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t npages = (len + (uint64_t)pg - 1) / (uint64_t)pg, n = 0;
	unsigned char *vec = malloc(npages);
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	assert_non_null(vec);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mincore(m, len, vec), 0);
	for (size_t i = 0; i < npages; i++)
		n += vec[i] & 1;
	munmap(m, len);
	free(vec);
	return n;
}

static void read_all(int fd, uint64_t len)
{
	char buf[64 * 1024];

	for (uint64_t off = 0; off < len; off += sizeof(buf))
		assert_true(pread(fd, buf, sizeof(buf), (off_t)off) > 0);
}

struct hook_log {
	int warns, progress;
	uint64_t last_done, last_total;
	char warn[ERR_MSG_MAX];
};

static void on_warn(void *arg, const char *msg)
{
	struct hook_log *l = arg;

	l->warns++;
	snprintf(l->warn, sizeof(l->warn), "%s", msg);
}

static void on_progress(void *arg, const char *path, uint64_t done, uint64_t total)
{
	struct hook_log *l = arg;

	(void)path;
	l->progress++;
	l->last_done = done;
	l->last_total = total;
}

#define HOOKS(log) { .warn = on_warn, .progress = on_progress, .arg = &(log) }

/* ---- regular files ---- */

static void test_create_missing_real_data(void **state)
{
	const char *p = scratch("new");
	const uint64_t base = 1 * MIB, len = 2 * MIB + BLK;
	struct hook_log log = { 0 };
	struct target_hooks h = HOOKS(log);
	struct target t;
	struct err e = { 0 };
	struct stat st;
	unsigned char *data;
	size_t count[256] = { 0 };
	uint64_t size = base + len, nblk = size / BLK;
	int fd;

	(void)state;
	assert_int_equal(target_open(&t, p, base, len, BLK, false, &h, &e), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, size);
	assert_true((uint64_t)st.st_blocks * 512 >= size);	/* not sparse */
	assert_false(t.sparse);
	assert_false(t.is_blkdev);
	assert_int_equal(t.dev_size, size);
	assert_int_equal(t.laid_out, size);
	assert_int_equal(t.len, len);
	assert_true(t.dev == st.st_dev);
	assert_true(t.lbs >= 512 && (t.lbs & (t.lbs - 1)) == 0);
	assert_true(t.fd >= 0);
	assert_int_equal(t.fd_direct, -1);
	assert_int_equal(log.warns, 0);
	assert_true(log.progress >= 1);
	assert_int_equal(log.last_done, size);
	assert_int_equal(log.last_total, size);
	target_close(&t);

	/* Incompressible: no block of zeros, no block repeated, and byte
	 * values spread evenly (each within 10 % of size/256). */
	data = malloc(size);
	assert_non_null(data);
	fd = open(p, O_RDONLY);
	assert_int_equal(pread(fd, data, size, 0), (ssize_t)size);
	close(fd);
	for (uint64_t b = 0; b < nblk; b++) {
		static const unsigned char zero[BLK];

		assert_true(memcmp(data + b * BLK, zero, BLK) != 0);
		if (b)
			assert_true(memcmp(data + b * BLK, data, BLK) != 0);
	}
	for (uint64_t i = 0; i < size; i++)
		count[data[i]]++;
	for (int v = 0; v < 256; v++) {
		assert_true(count[v] > size / 256 * 9 / 10);
		assert_true(count[v] < size / 256 * 11 / 10);
	}
	free(data);
	unlink(p);
}

/* A read job never writes a file it did not make (SPEC 8): a short file
 * is refused and left as it was, unless the job consents (TARGET_O_EXTEND,
 * overwrite=1); then only bytes past its end are written. */
static void test_extend_keeps_existing_bytes(void **state)
{
	const char *p = scratch("short");
	struct hook_log log = { 0 };
	struct target_hooks h = HOOKS(log);
	struct target t;
	struct err e = { 0 };
	uint64_t before;

	(void)state;
	make_file(p, 1 * MIB + 100);	/* odd end: append from there */
	before = hash_file(p, 1 * MIB + 100);
	assert_int_equal(target_open(&t, p, 0, 3 * MIB, BLK, false, &h, &e), -EPERM);
	assert_non_null(strstr(e.msg, "did not make it"));
	assert_int_equal(file_size(p), 1 * MIB + 100);
	assert_true(hash_file(p, 1 * MIB + 100) == before);

	assert_int_equal(target_open_for(&t, p, 0, 3 * MIB, BLK, false, TARGET_O_EXTEND,
					 &h, &e), 0);
	assert_int_equal(file_size(p), 3 * MIB);
	assert_int_equal(t.dev_size, 3 * MIB);
	assert_int_equal(t.laid_out, 2 * MIB - 100);
	assert_int_equal(log.last_done, 2 * MIB - 100);
	assert_false(t.sparse);
	target_close(&t);
	assert_true(hash_file(p, 1 * MIB + 100) == before);
	unlink(p);
}

/* A file target_open made itself (marked with TARGET_LAYOUT_XATTR) and
 * that is now short is completed without consent; where the filesystem
 * keeps no user xattrs it is refused like any other. */
static void test_own_file_completed(void **state)
{
	const char *p = scratch("own");
	struct hook_log log = { 0 };
	struct target_hooks h = HOOKS(log);
	struct target t;
	struct err e = { 0 };
	char mark[8];
	int r;

	(void)state;
	unlink(p);
	assert_int_equal(target_open(&t, p, 0, 1 * MIB, BLK, false, &h, &e), 0);
	target_close(&t);
	r = target_open(&t, p, 0, 2 * MIB, BLK, false, &h, &e);
	if (getxattr(p, TARGET_LAYOUT_XATTR, mark, sizeof(mark)) > 0) {
		assert_int_equal(r, 0);
		assert_int_equal(file_size(p), 2 * MIB);
		assert_int_equal(t.laid_out, 1 * MIB);
		target_close(&t);
	} else {
		assert_int_equal(r, -EPERM);
		assert_int_equal(file_size(p), 1 * MIB);
	}
	unlink(p);
}

static void test_longer_file_untouched(void **state)
{
	const char *p = scratch("long");
	struct hook_log log = { 0 };
	struct target_hooks h = HOOKS(log);
	struct target t;
	struct err e = { 0 };
	struct stat a, b;
	uint64_t before;

	(void)state;
	make_file(p, 4 * MIB);
	before = hash_file(p, 4 * MIB);
	assert_int_equal(stat(p, &a), 0);
	assert_int_equal(target_open(&t, p, 1 * MIB, 1 * MIB, BLK, false, &h, &e), 0);
	assert_int_equal(t.dev_size, 4 * MIB);
	assert_int_equal(t.laid_out, 0);
	assert_int_equal(log.progress, 0);
	target_close(&t);
	assert_int_equal(stat(p, &b), 0);
	assert_int_equal(b.st_size, 4 * MIB);
	assert_true(a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
		    a.st_mtim.tv_nsec == b.st_mtim.tv_nsec);
	assert_true(hash_file(p, 4 * MIB) == before);

	/* len 0: to the end of the file. */
	assert_int_equal(target_open(&t, p, 1 * MIB, 0, BLK, false, &h, &e), 0);
	assert_int_equal(t.len, 3 * MIB);
	target_close(&t);
	unlink(p);
}

static void test_sparse_file_warns(void **state)
{
	const char *p = scratch("sparse");
	struct hook_log log = { 0 };
	struct target_hooks h = HOOKS(log);
	struct target t;
	struct err e = { 0 };
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4 * MIB), 0);
	close(fd);
	assert_int_equal(target_open(&t, p, 0, 0, BLK, false, &h, &e), 0);
	assert_true(t.sparse);
	assert_int_equal(log.warns, 1);
	assert_non_null(strstr(log.warn, p));
	assert_non_null(strstr(log.warn, "sparse"));
	assert_non_null(strstr(log.warn, "invalid"));
	target_close(&t);
	unlink(p);
}

/* fallocate leaves unwritten extents: allocated, yet read without I/O. */
static void test_fallocated_file_warns(void **state)
{
	const char *p = scratch("falloc");
	struct hook_log log = { 0 };
	struct target_hooks h = HOOKS(log);
	struct target t;
	struct err e = { 0 };
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644), r;

	(void)state;
	assert_true(fd >= 0);
	r = fallocate(fd, 0, 0, 4 * MIB);
	close(fd);
	if (r) {
		unlink(p);
		skip();	/* filesystem without fallocate */
	}
	assert_int_equal(target_open(&t, p, 0, 0, BLK, false, &h, &e), 0);
	if (!t.sparse) {
		target_close(&t);
		unlink(p);
		skip();	/* fs reports unwritten extents as data to SEEK_HOLE */
	}
	assert_int_equal(log.warns, 1);
	assert_non_null(strstr(log.warn, "invalid"));
	target_close(&t);
	unlink(p);
}

static void test_directory_rejected(void **state)
{
	struct target t;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(target_open(&t, dir, 0, 1 * MIB, BLK, false, NULL, &e),
			 -EISDIR);
	assert_int_equal(e.code, EISDIR);
	assert_non_null(strstr(e.msg, dir));
	assert_non_null(strstr(e.msg, "directory"));
	target_close(&t);	/* harmless after a failed open */
	assert_int_equal(target_probe_size(dir, &(uint64_t){ 0 }, &e), -EISDIR);
}

static void test_fifo_rejected(void **state)
{
	const char *p = scratch("fifo");
	struct target t;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_true(target_open(&t, p, 0, 1 * MIB, BLK, false, NULL, &e) < 0);
	assert_non_null(strstr(e.msg, "FIFO"));
	assert_non_null(strstr(e.msg, p));
	unlink(p);
}

static int open_as_nobody(const char *p, char *msg, size_t n)
{
	int pfd[2], status;
	pid_t pid;
	ssize_t got;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct target t;
		struct err e = { 0 };
		int r = 0;

		close(pfd[0]);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		r = target_open(&t, p, 0, 1 * MIB, BLK, false, NULL, &e);
		if (write(pfd[1], e.msg, strlen(e.msg)) < 0)
			_exit(101);
		_exit(r < 0 ? -r : 0);
	}
	close(pfd[1]);
	got = read(pfd[0], msg, n - 1);
	msg[got > 0 ? got : 0] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_unreadable_rejected(void **state)
{
	const char *p = scratch("noread");
	struct target t;
	struct err e = { 0 };
	char msg[ERR_MSG_MAX];

	(void)state;
	make_file(p, 1 * MIB);
	assert_int_equal(chmod(p, 0200), 0);
	if (geteuid() != 0) {
		assert_int_equal(target_open(&t, p, 0, 1 * MIB, BLK, false, NULL, &e),
				 -EACCES);
		strcpy(msg, e.msg);
	} else {
		/* Root reads anything: test as nobody in a child. */
		assert_int_equal(chmod(dir, 0755), 0);
		assert_int_equal(open_as_nobody(p, msg, sizeof(msg)), EACCES);
		assert_int_equal(chmod(dir, 0700), 0);
	}
	assert_non_null(strstr(msg, "target: open "));
	assert_non_null(strstr(msg, p));
	assert_non_null(strstr(msg, "Permission denied"));
	unlink(p);
}

static void test_missing_without_size(void **state)
{
	const char *p = scratch("nosize");
	struct target t;
	struct err e = { 0 };
	uint64_t sz;

	(void)state;
	assert_int_equal(target_open(&t, p, 0, 0, BLK, false, NULL, &e), -ENOENT);
	assert_non_null(strstr(e.msg, p));
	assert_non_null(strstr(e.msg, "size"));
	assert_int_equal(access(p, F_OK), -1);	/* nothing created */
	assert_int_equal(target_probe_size(p, &sz, &e), -ENOENT);
}

/* A symlinked target is read through; a link to a missing file is named
 * as a link, with where it points, never "File exists", and nothing is
 * made at either end. */
static void test_symlink_target(void **state)
{
	char link[512], data[512], dangling[512], nowhere[512];
	struct target t;
	struct err e = { 0 };

	(void)state;
	snprintf(data, sizeof(data), "%s", scratch("linked.data"));
	snprintf(link, sizeof(link), "%s", scratch("linked.db"));
	snprintf(nowhere, sizeof(nowhere), "%s", scratch("nowhere.data"));
	snprintf(dangling, sizeof(dangling), "%s", scratch("dangling.db"));
	make_file(data, 1 * MIB);
	assert_int_equal(symlink(data, link), 0);
	assert_int_equal(target_open(&t, link, 0, 1 * MIB, BLK, false, NULL, &e), 0);
	assert_int_equal(t.dev_size, 1 * MIB);
	target_close(&t);
	assert_int_equal(symlink(nowhere, dangling), 0);
	assert_int_equal(target_open(&t, dangling, 0, 1 * MIB, BLK, false, NULL, &e), -ENOENT);
	assert_non_null(strstr(e.msg, dangling));
	assert_non_null(strstr(e.msg, "symbolic link to"));
	assert_non_null(strstr(e.msg, nowhere));
	assert_null(strstr(e.msg, "File exists"));
	assert_int_equal(access(nowhere, F_OK), -1);	/* nothing made through it */
	target_close(&t);
}

static void test_offset_past_end_of_file(void **state)
{
	const char *p = scratch("pastend");
	struct target t;
	struct err e = { 0 };

	(void)state;
	make_file(p, 1 * MIB);
	assert_int_equal(target_open(&t, p, 2 * MIB, 0, BLK, false, NULL, &e),
			 -EINVAL);
	assert_non_null(strstr(e.msg, "offset=2097152"));
	assert_int_equal(file_size(p), 1 * MIB);
	unlink(p);
}

static void test_direct_alignment(void **state)
{
	const char *p = scratch("direct");
	struct target t;
	struct err e = { 0 };
	char want[64];
	void *buf = NULL;

	(void)state;
	/* Rejected before layout: the file is not created. */
	assert_int_equal(target_open(&t, p, 0, 1 * MIB, 1000, true, NULL, &e),
			 -EINVAL);
	assert_non_null(strstr(e.msg, "bs=1000"));
	assert_non_null(strstr(e.msg, "logical block size"));
	assert_int_equal(access(p, F_OK), -1);

	assert_int_equal(target_open(&t, p, 0, 1 * MIB, BLK, true, NULL, &e), 0);
	assert_true(t.fd_direct >= 0);
	snprintf(want, sizeof(want), "logical block size %u", t.lbs);
	assert_true(BLK % t.lbs == 0);
	assert_int_equal(posix_memalign(&buf, BLK, BLK), 0);
	assert_int_equal(pread(t.fd_direct, buf, BLK, BLK), BLK);
	free(buf);
	target_close(&t);

	/* The lbs is named, and an unaligned offset is caught too. */
	assert_int_equal(target_open(&t, p, 1000, 4096, BLK, true, NULL, &e),
			 -EINVAL);
	assert_non_null(strstr(e.msg, "offset=1000"));
	assert_non_null(strstr(e.msg, want));
	/* direct=0 does not care. */
	assert_int_equal(target_open(&t, p, 1000, 4096, 1000, false, NULL, &e), 0);
	target_close(&t);
	assert_int_equal(file_size(p), 1 * MIB);
	unlink(p);
}

static void test_invalidate_drops_pages(void **state)
{
	const char *p = scratch("cache");
	const uint64_t size = 4 * MIB;
	struct target t;
	struct err e = { 0 };
	size_t all = size / (uint64_t)sysconf(_SC_PAGESIZE);

	(void)state;
	assert_int_equal(target_open(&t, p, 0, size, BLK, false, NULL, &e), 0);
	read_all(t.fd, size);
	assert_int_equal(resident_pages(t.fd, size), all);
	assert_int_equal(target_invalidate(&t, &e), 0);
	assert_int_equal(resident_pages(t.fd, size), 0);
	assert_false(t.flush_denied);
	target_close(&t);

	/* Only the region: pages outside [base, base+len) stay. */
	assert_int_equal(target_open(&t, p, 1 * MIB, 1 * MIB, BLK, false, NULL, &e), 0);
	read_all(t.fd, size);
	assert_int_equal(target_invalidate(&t, &e), 0);
	assert_int_equal(resident_pages(t.fd, size), all - all / 4);
	target_close(&t);
	unlink(p);
}

static void test_close_unmaps(void **state)
{
	const char *p = scratch("map");
	struct target t;
	struct err e = { 0 };
	unsigned char vec;
	void *m;

	(void)state;
	assert_int_equal(target_open(&t, p, 0, 1 * MIB, BLK, false, NULL, &e), 0);
	m = mmap(NULL, 1 * MIB, PROT_READ, MAP_SHARED, t.fd, 0);
	assert_true(m != MAP_FAILED);
	t.map = m;
	t.map_len = 1 * MIB;
	target_close(&t);
	assert_int_equal(mincore(m, 4096, &vec), -1);
	assert_int_equal(errno, ENOMEM);	/* no longer mapped */
	assert_int_equal(t.fd, -1);
	assert_null(t.path);
	unlink(p);
}

/* A thread's copy (issue 24): its own open file of the same file, with
 * the same flags (read only, or read-write for a write job), and the
 * job's descriptor untouched when the copy is closed. */
#define IO_FLAGS (O_ACCMODE | O_DIRECT | O_DSYNC | O_SYNC | O_APPEND | O_NONBLOCK)

static void test_reopen_own_files(void **state)
{
	const char *p = scratch("reopen");
	struct target t, c;
	struct err e = { 0 };
	struct stat a, b;
	char x[16], y[16];
	off_t pos;

	(void)state;
	for (int write = 0; write < 2; write++) {
		assert_int_equal(target_open_for(&t, p, 0, 1 * MIB, BLK, false,
						 write ? TARGET_O_WRITE : 0, NULL, &e), 0);
		assert_int_equal(target_reopen(&t, &c), 0);
		assert_true(c.fd >= 0);
		assert_int_not_equal(c.fd, t.fd);
		assert_int_equal(c.fd_direct, -1);
		assert_ptr_equal(c.path, t.path);
		assert_int_equal(fstat(t.fd, &a), 0);
		assert_int_equal(fstat(c.fd, &b), 0);
		assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
		assert_int_equal(fcntl(c.fd, F_GETFL) & O_ACCMODE, write ? O_RDWR : O_RDONLY);
		/* The flags that govern I/O (F_GETFL also shows how the
		 * name was opened: the magic link differs there). */
		assert_int_equal(fcntl(c.fd, F_GETFL) & IO_FLAGS, fcntl(t.fd, F_GETFL) & IO_FLAGS);
		/* Not a dup: a file position of its own. */
		pos = lseek(t.fd, 0, SEEK_CUR);
		assert_int_equal(lseek(c.fd, pos + 8192, SEEK_SET), pos + 8192);
		assert_int_equal(lseek(t.fd, 0, SEEK_CUR), pos);
		assert_int_equal(pread(c.fd, x, sizeof(x), 4096), sizeof(x));
		assert_int_equal(pread(t.fd, y, sizeof(y), 4096), sizeof(y));
		assert_memory_equal(x, y, sizeof(x));
		target_reopen_close(&c);
		assert_int_equal(c.fd, -1);
		assert_true(fcntl(t.fd, F_GETFD) >= 0);
		target_close(&t);
	}
	unlink(p);
}

/* A thread's table: its own targets reopened, the others the job's. */
static void test_reopen_range(void **state)
{
	const char *p = scratch("range");
	struct target ts[2], *c;
	struct err e = { 0 };

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(target_open(&ts[i], p, 0, 1 * MIB, BLK, false, NULL, &e), 0);
	c = targets_reopen(ts, 2, 1, 1);
	assert_non_null(c);
	assert_int_equal(c[0].fd, ts[0].fd);
	assert_true(c[1].fd >= 0);
	assert_int_not_equal(c[1].fd, ts[1].fd);
	targets_reopen_free(c, 1, 1);
	assert_null(targets_reopen(ts, 2, 1, 2));	/* past the table */
	assert_true(fcntl(ts[0].fd, F_GETFD) >= 0 && fcntl(ts[1].fd, F_GETFD) >= 0);
	for (int i = 0; i < 2; i++)
		target_close(&ts[i]);
	unlink(p);
}

static void test_probe_size_file(void **state)
{
	const char *p = scratch("probe");
	struct err e = { 0 };
	uint64_t sz = 0;

	(void)state;
	make_file(p, 1 * MIB + 3);
	assert_int_equal(target_probe_size(p, &sz, &e), 0);
	assert_int_equal(sz, 1 * MIB + 3);
	unlink(p);
}

/* ---- block device through a loop device ---- */

struct loopdev {
	char dev[64];
	char backing[512];
};

static int loop_setup(void **state)
{
	static struct loopdev ld;
	char cmd[700];
	FILE *f;

	memset(&ld, 0, sizeof(ld));
	snprintf(ld.backing, sizeof(ld.backing), "%s/loop.img", dir);
	make_file(ld.backing, 4 * MIB);
	snprintf(cmd, sizeof(cmd), "losetup -f --show '%s' 2>/dev/null", ld.backing);
	f = popen(cmd, "r");
	if (f) {
		if (!fgets(ld.dev, sizeof(ld.dev), f))
			ld.dev[0] = '\0';
		ld.dev[strcspn(ld.dev, "\n")] = '\0';
		pclose(f);
	}
	*state = &ld;
	return 0;
}

static int loop_teardown(void **state)
{
	struct loopdev *ld = *state;
	char cmd[128];

	if (ld->dev[0]) {
		snprintf(cmd, sizeof(cmd), "losetup -d '%s'", ld->dev);
		if (system(cmd) != 0)
			return -1;
	}
	unlink(ld->backing);
	return 0;
}

static void test_block_device(void **state)
{
	struct loopdev *ld = *state;
	struct hook_log log = { 0 };
	struct target_hooks h = HOOKS(log);
	struct target t;
	struct err e = { 0 };
	struct stat st;
	char sysp[128], want[64];
	unsigned lbs = 0;
	uint64_t before, sz;
	FILE *f;

	if (!ld->dev[0])
		skip();	/* no losetup, no loop devices, or not permitted */
	before = hash_file(ld->backing, 4 * MIB);
	snprintf(sysp, sizeof(sysp), "/sys/block/%s/queue/logical_block_size",
		 strrchr(ld->dev, '/') + 1);
	f = fopen(sysp, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%u", &lbs), 1);
	fclose(f);

	assert_int_equal(target_open(&t, ld->dev, 0, 0, 0, false, &h, &e), 0);
	assert_true(t.is_blkdev);
	assert_int_equal(t.dev_size, 4 * MIB);
	assert_int_equal(t.len, 4 * MIB);
	assert_int_equal(t.lbs, lbs);
	assert_int_equal(stat(ld->dev, &st), 0);
	assert_true(t.dev == st.st_rdev);
	assert_int_equal(fcntl(t.fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	assert_int_equal(t.laid_out, 0);
	assert_int_equal(log.progress + log.warns, 0);

	/* Invalidate drops the device's cached pages (fadvise + BLKFLSBUF). */
	read_all(t.fd, 4 * MIB);
	assert_true(resident_pages(t.fd, 4 * MIB) > 0);
	assert_int_equal(target_invalidate(&t, &e), 0);
	assert_int_equal(resident_pages(t.fd, 4 * MIB), 0);
	if (geteuid() == 0)
		assert_false(t.flush_denied);
	target_close(&t);

	/* O_DIRECT on the device. */
	assert_int_equal(target_open(&t, ld->dev, 0, 1 * MIB, BLK, true, NULL, &e), 0);
	assert_true(t.fd_direct >= 0);
	target_close(&t);

	/* A region past the end: never extended, named in the error. */
	assert_int_equal(target_open(&t, ld->dev, 1 * MIB, 4 * MIB, BLK, false,
				     NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, ld->dev));
	assert_non_null(strstr(e.msg, "past the end"));
	assert_non_null(strstr(e.msg, "5242880"));	/* requested end */
	assert_non_null(strstr(e.msg, "4194304"));	/* device size */

	/* Unaligned bs with direct=1 on the device. */
	snprintf(want, sizeof(want), "logical block size %u", lbs);
	assert_int_equal(target_open(&t, ld->dev, 0, 1 * MIB, lbs + lbs / 2, true,
				     NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, want));

	assert_int_equal(target_probe_size(ld->dev, &sz, &e), 0);
	assert_int_equal(sz, 4 * MIB);
	assert_true(hash_file(ld->backing, 4 * MIB) == before);	/* never written */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_missing_real_data),
		cmocka_unit_test(test_extend_keeps_existing_bytes),
		cmocka_unit_test(test_own_file_completed),
		cmocka_unit_test(test_longer_file_untouched),
		cmocka_unit_test(test_sparse_file_warns),
		cmocka_unit_test(test_fallocated_file_warns),
		cmocka_unit_test(test_directory_rejected),
		cmocka_unit_test(test_fifo_rejected),
		cmocka_unit_test(test_unreadable_rejected),
		cmocka_unit_test(test_missing_without_size),
		cmocka_unit_test(test_symlink_target),
		cmocka_unit_test(test_offset_past_end_of_file),
		cmocka_unit_test(test_direct_alignment),
		cmocka_unit_test(test_invalidate_drops_pages),
		cmocka_unit_test(test_close_unmaps),
		cmocka_unit_test(test_reopen_own_files),
		cmocka_unit_test(test_reopen_range),
		cmocka_unit_test(test_probe_size_file),
		cmocka_unit_test_setup_teardown(test_block_device, loop_setup,
						loop_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
