/*
 * test_capbpfdec.c - the bpf method's ring-buffer records to events
 * (capbpfdec.c), on records built as capture.bpf.c builds them: each
 * kind to its event, an open's path and inode to what the descriptor
 * is (a file, or something a replay cannot read), the record cut after
 * the path's NUL, and malformed records counted, never taken.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capbpfdec.h"
#include "capture/capbpfrec.h"

static struct capbpf_rec rec(uint32_t kind, int tid, int fd, uint64_t off, uint64_t len)
{
	return (struct capbpf_rec){ .ts = 5000, .kind = kind, .tid = tid, .fd = fd, .off = off, .len = len };
}

/* @r, a record of its own length, decoded into one event. */
static struct cap_event decoded(struct capbpf_rec r, uint64_t *bad)
{
	struct cap_event ev;

	assert_int_equal(capbpf_decode(&r, sizeof(r), &ev, bad), 1);
	return ev;
}

/* An open's record, as long as the program sends it. */
static size_t open_rec(struct capbpf_open *o, int fd, int dfd, const char *path, uint32_t mode, uint64_t magic)
{
	memset(o, 0xa5, sizeof(*o));	/* what the scratch held before */
	o->h = rec(CAPBPF_OPEN, 7, fd, 1234, (8ull << 20) | 1);
	o->dfd = dfd;
	o->mode = mode;
	o->magic = magic;
	strcpy(o->path, path);
	return offsetof(struct capbpf_open, path) + strlen(path) + 1;
}

static void test_requests(void **state)
{
	struct cap_event ev;
	uint64_t bad = 0;

	(void)state;
	ev = decoded(rec(CAPBPF_READ, 7, 3, 8192, 4096), &bad);
	assert_int_equal(ev.kind, CAP_READ);
	assert_int_equal(ev.ts, 5000);
	assert_int_equal(ev.tid, 7);
	assert_int_equal(ev.fd, 3);
	assert_int_equal(ev.off, 8192);
	assert_int_equal(ev.len, 4096);
	assert_null(ev.fi);
	assert_int_equal(decoded(rec(CAPBPF_DATASYNC, 7, 3, 0, 0), &bad).kind, CAP_DATASYNC);
	assert_int_equal(decoded(rec(CAPBPF_WRITE, 8, 4, 0, 512), &bad).kind, CAP_WRITE);
	assert_int_equal(bad, 0);
}

/* The fork's "same process" becomes the CLONE_THREAD capstream reads;
 * a dup is an open that says nothing. */
static void test_tasks_and_dups(void **state)
{
	struct cap_event ev;
	uint64_t bad = 0;

	(void)state;
	ev = decoded(rec(CAPBPF_NEWTASK, 7, 9, 0, 1), &bad);
	assert_int_equal(ev.kind, CAP_NEWTASK);
	assert_int_equal(ev.fd, 9);
	assert_true(ev.len & CLONE_THREAD);
	assert_false(decoded(rec(CAPBPF_NEWTASK, 7, 10, 0, 0), &bad).len & CLONE_THREAD);
	ev = decoded(rec(CAPBPF_DUP, 7, 11, 0, 0), &bad);
	assert_int_equal(ev.kind, CAP_OPEN);
	assert_int_equal(ev.fd, 11);
	assert_null(ev.fi);
	ev = decoded(rec(CAPBPF_PGADD, 7, 0x800001, 99, 4), &bad);
	assert_int_equal(ev.kind, CAP_PGADD);
	assert_int_equal(ev.len, 4);
}

static void test_open(void **state)
{
	struct capbpf_open *o = malloc(sizeof(*o));
	struct cap_event ev;
	uint64_t bad = 0;
	size_t n;

	(void)state;
	n = open_rec(o, 5, AT_FDCWD, "base/16384/2662", S_IFREG | 0600, 0xef53);
	assert_int_equal(capbpf_decode(o, n, &ev, &bad), 1);
	assert_int_equal(ev.kind, CAP_OPEN);
	assert_int_equal(ev.fd, 5);
	assert_int_equal((int64_t)ev.off, AT_FDCWD);	/* relative to the cwd */
	assert_non_null(ev.fi);
	assert_string_equal(ev.fi->path, "base/16384/2662");	/* not a byte of the scratch after it */
	assert_int_equal(ev.fi->ino, 1234);
	assert_int_equal(ev.fi->dev, (8ull << 20) | 1);
	assert_true(ev.fi->file);
	free(ev.fi);
	/* /proc's files and a socket's are no files to replay. */
	n = open_rec(o, 6, 4, "/proc/self/stat", S_IFREG | 0444, 0x9fa0);
	assert_int_equal(capbpf_decode(o, n, &ev, &bad), 1);
	assert_int_equal((int64_t)ev.off, 4);
	assert_false(ev.fi->file);
	free(ev.fi);
	n = open_rec(o, 6, AT_FDCWD, "/dev/null", S_IFCHR | 0666, 0x1021994);
	assert_int_equal(capbpf_decode(o, n, &ev, &bad), 1);
	assert_false(ev.fi->file);
	free(ev.fi);
	/* The kernel's side unread (mode 0) or no path: nothing said. */
	n = open_rec(o, 6, AT_FDCWD, "/db/x", 0, 0);
	assert_int_equal(capbpf_decode(o, n, &ev, &bad), 1);
	assert_null(ev.fi);
	n = open_rec(o, 6, AT_FDCWD, "", S_IFREG, 0xef53);
	assert_int_equal(capbpf_decode(o, n, &ev, &bad), 1);
	assert_null(ev.fi);
	assert_int_equal(bad, 0);
	free(o);
}

static void test_malformed(void **state)
{
	struct capbpf_rec r = rec(CAPBPF_READ, 7, 3, 0, 1);
	struct cap_event ev;
	uint64_t bad = 0;

	(void)state;
	assert_int_equal(capbpf_decode(&r, sizeof(r) - 1, &ev, &bad), 0);
	r.kind = CAPBPF_NKINDS;
	assert_int_equal(capbpf_decode(&r, sizeof(r), &ev, &bad), 0);
	r.kind = 0;
	assert_int_equal(capbpf_decode(&r, sizeof(r), &ev, &bad), 0);
	r.kind = CAPBPF_OPEN;	/* an open cut before its path */
	assert_int_equal(capbpf_decode(&r, sizeof(r), &ev, &bad), 0);
	assert_int_equal(bad, 4);
}

/* The pagecache method's records: the file by inode and device, a
 * page range (inclusive) as bytes, O_DIRECT and writes in bytes. */
static void test_by_inode(void **state)
{
	struct capbpf_inorec r = { .h = rec(CAPBPF_PC_READ, 7, (8 << 20) | 1, 3, 4), .ino = 4242 };
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), bad = 0;
	struct cap_event ev;

	(void)state;
	assert_int_equal(capbpf_decode(&r, sizeof(r), &ev, &bad), 1);
	assert_int_equal(ev.kind, CAP_READ);
	assert_int_equal(ev.fd, CAP_FD_INODE);
	assert_int_equal(ev.dev, (8 << 20) | 1);
	assert_int_equal(ev.ino, 4242);
	assert_int_equal(ev.off, 3 * page);
	assert_int_equal(ev.len, 2 * page);
	assert_null(ev.fi);
	r.h = rec(CAPBPF_PC_MAP, 7, 1, 5, 5);
	assert_int_equal(capbpf_decode(&r, sizeof(r), &ev, &bad), 1);
	assert_int_equal(ev.kind, CAP_READ);
	assert_int_equal(ev.off, 5 * page);
	assert_int_equal(ev.len, page);
	r.h = rec(CAPBPF_INO_WRITE, 7, 1, 1000, 10);
	assert_int_equal(capbpf_decode(&r, sizeof(r), &ev, &bad), 1);
	assert_int_equal(ev.kind, CAP_WRITE);
	assert_int_equal(ev.off, 1000);
	assert_int_equal(ev.len, 10);
	r.h = rec(CAPBPF_INO_DATASYNC, 7, 1, 0, 0);
	assert_int_equal(capbpf_decode(&r, sizeof(r), &ev, &bad), 1);
	assert_int_equal(ev.kind, CAP_DATASYNC);
	assert_int_equal(ev.ino, 4242);
	assert_int_equal(bad, 0);
	/* Cut before the inode, or a range that ends before it starts. */
	assert_int_equal(capbpf_decode(&r, sizeof(r.h), &ev, &bad), 0);
	r.h = rec(CAPBPF_PC_READ, 7, 1, 5, 4);
	assert_int_equal(capbpf_decode(&r, sizeof(r), &ev, &bad), 0);
	assert_int_equal(bad, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_tasks_and_dups),
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_by_inode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
