/*
 * test_capstream.c - events to per-thread iolog streams (capstream.c),
 * driven by made-up events and a made-up /proc: what each descriptor
 * is, asked only when it must be and never guessed; one stream per
 * thread, whole lines, add/open before a file's first request and close
 * at the end; small streams merged; page-cache pages matched to files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sched.h>

#include "capture/capstream.h"

#define T0 1000000000ull	/* the capture's start, trace clock */
#define US(u) (T0 + (uint64_t)(u) * 1000)

/* ---- a made-up /proc ------------------------------------------------------ */

struct fakefd {
	int tgid, fd;
	const char *path;
	uint64_t dev, ino;
	int file;		/* 1 a file, 0 something else, -1 closed */
};

struct fakelog {
	char name[64];
	char *text;
	size_t len;
	unsigned writes;
	bool partial;		/* a write that did not end a line */
};

struct fake {
	struct fakefd fd[16];
	unsigned nfd;
	unsigned asked;		/* fd_info calls */
	struct fakelog log[16];
	unsigned nlog;
};

static struct fakefd *fake_fd(struct fake *f, int tgid, int fd)
{
	for (unsigned i = 0; i < f->nfd; i++)
		if (f->fd[i].tgid == tgid && f->fd[i].fd == fd)
			return &f->fd[i];
	return NULL;
}

static void set_fd(struct fake *f, int tgid, int fd, const char *path, uint64_t dev, uint64_t ino, int file)
{
	struct fakefd *d = fake_fd(f, tgid, fd);

	if (!d)
		d = &f->fd[f->nfd++];
	*d = (struct fakefd){ tgid, fd, path, dev, ino, file };
}

static int fd_info(void *arg, int tid, int tgid, int fd, struct cap_fdinfo *out)
{
	struct fake *f = arg;
	struct fakefd *d = fake_fd(f, tgid, fd);

	(void)tid;
	f->asked++;
	if (!d || d->file < 0)
		return -2;
	snprintf(out->path, sizeof(out->path), "%s", d->path);
	out->dev = d->dev;
	out->ino = d->ino;
	out->file = d->file == 1;
	return 0;
}

/* Tasks 100-199 belong to process 100, 200-299 to 200; all "db". */
static int task_info(void *arg, int tid, int *tgid, char comm[16])
{
	(void)arg;
	*tgid = tid / 100 * 100;
	snprintf(comm, 16, "db");
	return 0;
}

static int write_log(void *arg, const char *name, const char *buf, size_t len)
{
	struct fake *f = arg;
	struct fakelog *l = NULL;

	for (unsigned i = 0; i < f->nlog; i++)
		if (!strcmp(f->log[i].name, name))
			l = &f->log[i];
	if (!l) {
		l = &f->log[f->nlog++];
		snprintf(l->name, sizeof(l->name), "%s", name);
	}
	l->text = realloc(l->text, l->len + len + 1);
	memcpy(l->text + l->len, buf, len);
	l->len += len;
	l->text[l->len] = '\0';
	l->writes++;
	l->partial |= !len || buf[len - 1] != '\n';
	return 0;
}

static const char *logtext(struct fake *f, const char *name)
{
	for (unsigned i = 0; i < f->nlog; i++)
		if (!strcmp(f->log[i].name, name))
			return f->log[i].text;
	return NULL;
}

static void fake_free(struct fake *f)
{
	for (unsigned i = 0; i < f->nlog; i++)
		free(f->log[i].text);
}

static void start(struct cap_state *s, struct fake *f)
{
	struct cap_env env = { .arg = f, .fd_info = fd_info, .task_info = task_info, .write = write_log };

	memset(f, 0, sizeof(*f));
	capstate_init(s, T0, &env);
}

static struct cap_event ev(uint64_t us, int tid, enum cap_kind k, int fd, uint64_t off, uint64_t len)
{
	static uint32_t seq;

	return (struct cap_event){ .ts = US(us), .tid = tid, .kind = (uint8_t)k, .fd = fd, .off = off,
				   .len = len, .seq = seq++ };
}

/* A request or a name by inode (the pagecache method): @dev, @ino. */
static struct cap_event ev_ino(uint64_t us, int tid, enum cap_kind k, uint64_t off, uint64_t len,
			       uint64_t dev, uint64_t ino)
{
	struct cap_event e = ev(us, tid, k, CAP_FD_INODE, off, len);

	e.dev = dev;
	e.ino = ino;
	return e;
}

/* What an open or a name says it is, as the methods that know hand it
 * over (malloc'd: the event owns it). */
static struct cap_fdinfo *fdinfo(const char *path, uint64_t dev, uint64_t ino, bool file)
{
	struct cap_fdinfo *fi = calloc(1, sizeof(*fi));

	assert_non_null(fi);
	snprintf(fi->path, sizeof(fi->path), "%s", path);
	fi->dev = dev;
	fi->ino = ino;
	fi->file = file;
	return fi;
}

static void feed(struct cap_state *s, struct cap_event *e, size_t n)
{
	assert_int_equal(capstate_feed(s, e, n, n), 0);
}

/* ---- tests ------------------------------------------------------------------ */

static void test_line(void **state)
{
	char buf[128];
	size_t n;

	(void)state;
	n = cap_line(buf, sizeof(buf), 12, "/d/f", CAP_READ, 8192, 4096);
	assert_int_equal(n, strlen(buf));
	assert_string_equal(buf, "12 /d/f read 8192 4096\n");
	cap_line(buf, sizeof(buf), 13, "/d/f", CAP_DATASYNC, 5, 6);
	assert_string_equal(buf, "13 /d/f datasync 0 0\n");	/* as fio writes a sync */
	assert_int_equal(cap_line(buf, 10, 13, "/d/f", CAP_WRITE, 0, 1), 0);
}

/* Two threads of one process: one question for the shared descriptor,
 * a stream each, whole logs. */
static void test_threads(void **state)
{
	struct cap_state s;
	struct fake f;
	struct cap_event e[4];

	(void)state;
	start(&s, &f);
	set_fd(&f, 100, 7, "/db/rel", 8, 42, 1);
	e[0] = ev(10, 101, CAP_READ, 7, 0, 8192);
	e[1] = ev(20, 102, CAP_READ, 7, 8192, 8192);
	e[2] = ev(30, 101, CAP_WRITE, 7, 16384, 8192);
	e[3] = ev(40, 101, CAP_SYNC, 7, 0, 0);
	feed(&s, e, 4);
	assert_int_equal(capstate_finish(&s), 0);
	assert_int_equal(f.asked, 1);
	assert_int_equal(s.nstreams, 2);
	assert_string_equal(logtext(&f, "db-101.iolog"),
			    "fio version 3 iolog\n10 /db/rel add\n10 /db/rel open\n10 /db/rel read 0 8192\n"
			    "30 /db/rel write 16384 8192\n40 /db/rel sync 0 0\n40 /db/rel close\n");
	assert_string_equal(logtext(&f, "db-102.iolog"),
			    "fio version 3 iolog\n20 /db/rel add\n20 /db/rel open\n20 /db/rel read 8192 8192\n"
			    "20 /db/rel close\n");
	assert_int_equal(s.nfiles, 1);
	assert_int_equal(s.files[0].reads, 2);
	assert_int_equal(s.files[0].writes, 1);
	assert_int_equal(s.files[0].syncs, 1);
	assert_int_equal(s.files[0].read_bytes, 16384);
	capstate_free(&s);
	fake_free(&f);
}

/* A descriptor closed and opened again later in what was read: what it
 * is now says nothing of what it was, so the request is counted, not
 * named; a known one stays known until its close is taken. */
static void test_changed_later(void **state)
{
	struct cap_state s;
	struct fake f;
	struct cap_event e[5];

	(void)state;
	start(&s, &f);
	set_fd(&f, 100, 3, "/db/b", 8, 2, 1);	/* what fd 3 is by the time we ask */
	e[0] = ev(1, 100, CAP_READ, 3, 0, 4096);	/* was /db/a, now gone */
	e[1] = ev(2, 100, CAP_CLOSE, 3, 0, 0);
	e[2] = ev(3, 100, CAP_OPEN, 3, 0, 0);
	e[3] = ev(4, 100, CAP_READ, 3, 4096, 4096);
	/* Taken in two steps: the first sees the rest as read, not taken. */
	assert_int_equal(capstate_feed(&s, e, 4, 2), 0);
	assert_int_equal(s.unnamed, 1);
	assert_int_equal(s.unnamed_op[CAP_READ], 1);
	assert_int_equal(f.asked, 0);
	assert_int_equal(capstate_feed(&s, e + 2, 2, 2), 0);
	assert_int_equal(f.asked, 1);
	assert_int_equal(s.requests, 1);
	assert_string_equal(s.files[0].path, "/db/b");
	/* Known, then closed and reopened as another file: asked again. */
	set_fd(&f, 100, 3, "/db/c", 8, 3, 1);
	e[0] = ev(5, 100, CAP_CLOSE, 3, 0, 0);
	e[1] = ev(6, 100, CAP_OPEN, 3, 0, 0);
	e[2] = ev(7, 100, CAP_READ, 3, 0, 4096);
	feed(&s, e, 3);
	assert_int_equal(f.asked, 2);
	assert_int_equal(s.nfiles, 2);
	assert_string_equal(s.files[1].path, "/db/c");
	capstate_free(&s);
	fake_free(&f);
}

/* An open that says what it opened (the bpf method): a file opened,
 * read and closed between two reads of the trace, gone from /proc when
 * its events are taken, is named all the same, and /proc is not asked;
 * an open of something that is no file counts its requests as such. */
static void test_named_open(void **state)
{
	struct cap_fdinfo *a = fdinfo("/db/short", 8, 9, true), *p = fdinfo("/proc/self/stat", 0, 0, false);
	struct cap_state s;
	struct fake f;
	struct cap_event e[6];

	(void)state;
	start(&s, &f);
	e[0] = ev(1, 100, CAP_OPEN, 5, 0, 0);
	e[0].fi = a;
	e[1] = ev(2, 100, CAP_READ, 5, 0, 4096);
	e[2] = ev(3, 100, CAP_CLOSE, 5, 0, 0);
	e[3] = ev(4, 100, CAP_OPEN, 5, 0, 0);
	e[3].fi = p;
	e[4] = ev(5, 100, CAP_READ, 5, 0, 100);
	e[5] = ev(6, 100, CAP_CLOSE, 5, 0, 0);
	feed(&s, e, 6);
	cap_event_release(e, 6);
	assert_null(e[0].fi);
	assert_int_equal(capstate_finish(&s), 0);
	assert_int_equal(f.asked, 0);
	assert_int_equal(s.unnamed, 0);
	assert_int_equal(s.notfile, 1);
	assert_int_equal(s.requests, 1);
	assert_int_equal(s.nfiles, 1);
	assert_int_equal(s.files[0].ino, 9);
	assert_string_equal(logtext(&f, "db-100.iolog"),
			    "fio version 3 iolog\n2 /db/short add\n2 /db/short open\n2 /db/short read 0 4096\n"
			    "2 /db/short close\n");
	capstate_free(&s);
	fake_free(&f);
}

/* Requests by inode (the pagecache method): logged on the file a
 * CAP_NAME named, whichever task asks and without asking /proc;
 * counted as unnamed before any name, as not a file when named so. */
static void test_by_inode(void **state)
{
	struct cap_fdinfo *a = fdinfo("/db/rel", 8, 9, true), *p = fdinfo("/sys/x", 8, 10, false);
	struct cap_state s;
	struct fake f;
	struct cap_event e[7];

	(void)state;
	start(&s, &f);
	e[0] = ev_ino(1, 100, CAP_READ, 0, 4096, 8, 9);
	e[1] = ev_ino(2, 100, CAP_NAME, 0, 0, 8, 9);
	e[1].fi = a;
	e[2] = ev_ino(2, 100, CAP_READ, 8192, 8192, 8, 9);
	e[3] = ev_ino(3, 201, CAP_WRITE, 0, 4096, 8, 9);
	e[4] = ev_ino(4, 100, CAP_NAME, 0, 0, 8, 10);
	e[4].fi = p;
	e[5] = ev_ino(5, 100, CAP_READ, 0, 100, 8, 10);
	/* Another device, same inode: not the named file. */
	e[6] = ev_ino(6, 100, CAP_DATASYNC, 0, 0, 9, 9);
	feed(&s, e, 7);
	cap_event_release(e, 7);
	assert_int_equal(capstate_finish(&s), 0);
	assert_int_equal(f.asked, 0);
	assert_int_equal(s.unnamed, 2);
	assert_int_equal(s.unnamed_ino, 2);
	assert_int_equal(s.unnamed_op[CAP_READ], 1);
	assert_int_equal(s.unnamed_op[CAP_DATASYNC], 1);
	assert_int_equal(s.notfile, 1);
	assert_int_equal(s.requests, 2);
	assert_int_equal(s.files[0].reads, 1);
	assert_int_equal(s.files[0].writes, 1);
	assert_string_equal(logtext(&f, "db-100.iolog"),
			    "fio version 3 iolog\n2 /db/rel add\n2 /db/rel open\n2 /db/rel read 8192 8192\n"
			    "2 /db/rel close\n");
	assert_string_equal(logtext(&f, "db-201.iolog"),
			    "fio version 3 iolog\n3 /db/rel add\n3 /db/rel open\n3 /db/rel write 0 4096\n"
			    "3 /db/rel close\n");
	capstate_free(&s);
	fake_free(&f);
}

/* A child process starts with its parent's descriptors; a thread shares
 * them; an exec drops them. */
static void test_fork_exec(void **state)
{
	struct cap_state s;
	struct fake f;
	struct cap_event e[8];

	(void)state;
	start(&s, &f);
	set_fd(&f, 100, 5, "/db/shared", 8, 9, 1);
	e[0] = ev(1, 100, CAP_READ, 5, 0, 512);
	e[1] = ev(2, 100, CAP_NEWTASK, 200, 0, 0x11);		/* fork: SIGCHLD */
	e[2] = ev(3, 100, CAP_NEWTASK, 150, 0, CLONE_VM | CLONE_FILES | CLONE_THREAD);
	e[3] = ev(4, 200, CAP_READ, 5, 512, 512);		/* the copy */
	e[4] = ev(5, 150, CAP_READ, 5, 1024, 512);		/* the thread's */
	feed(&s, e, 5);
	assert_int_equal(f.asked, 1);
	assert_int_equal(s.nstreams, 3);
	/* After an exec, fd 5 of process 200 is asked for again (it is
	 * gone: the request cannot be named). */
	e[0] = ev(6, 200, CAP_EXEC, 0, 0, 0);
	e[1] = ev(7, 200, CAP_READ, 5, 0, 512);
	feed(&s, e, 2);
	assert_int_equal(f.asked, 2);
	assert_int_equal(s.unnamed, 1);
	assert_int_equal(s.requests, 3);
	capstate_free(&s);
	fake_free(&f);
}

/* A process whose leader ended takes its descriptors along: a new
 * process with the same pid is asked about its own. */
static void test_pid_reuse(void **state)
{
	struct cap_state s;
	struct fake f;
	struct cap_event e[3];

	(void)state;
	start(&s, &f);
	set_fd(&f, 100, 3, "/db/a", 8, 1, 1);
	e[0] = ev(1, 100, CAP_READ, 3, 0, 512);
	e[1] = ev(2, 100, CAP_EXIT, 0, 0, 0);
	feed(&s, e, 2);
	set_fd(&f, 100, 3, "/db/b", 8, 2, 1);
	e[0] = ev(3, 100, CAP_READ, 3, 0, 512);
	feed(&s, e, 1);
	assert_int_equal(f.asked, 2);
	assert_int_equal(s.nfiles, 2);
	assert_int_equal(s.files[1].reads, 1);
	assert_int_equal(s.nstreams, 2);	/* another task, another stream */
	assert_string_equal(s.streams[1].name, "db-100~2");
	capstate_free(&s);
	fake_free(&f);
}

/* Sockets and pseudo files are no data; blanks cannot be in a log. */
static void test_not_logged(void **state)
{
	struct cap_state s;
	struct fake f;
	struct cap_event e[3];

	(void)state;
	start(&s, &f);
	set_fd(&f, 100, 4, "socket:[123]", 0, 0, 0);
	set_fd(&f, 100, 6, "/db/old file (deleted)", 8, 5, 1);
	e[0] = ev(1, 100, CAP_WRITE, 4, 0, 10);
	e[1] = ev(2, 100, CAP_WRITE, 4, 0, 10);
	e[2] = ev(3, 100, CAP_READ, 6, 0, 10);
	feed(&s, e, 3);
	assert_int_equal(capstate_finish(&s), 0);
	assert_int_equal(f.asked, 2);
	assert_int_equal(s.notfile, 2);
	assert_int_equal(s.unloggable, 1);
	assert_int_equal(s.requests, 0);
	assert_int_equal(s.nstreams, 0);
	assert_int_equal(f.nlog, 0);
	assert_int_equal(s.files[0].reads, 1);	/* counted for the summary */
	capstate_free(&s);
	fake_free(&f);
}

/* A busy thread's log goes out in whole lines as it grows; threads with
 * a handful of requests are merged into one stream, in time order. */
static void test_flush_and_merge(void **state)
{
	struct cap_state s;
	struct fake f;
	static struct cap_event e[3000];
	size_t n = 0;
	const char *m;

	(void)state;
	start(&s, &f);
	set_fd(&f, 100, 3, "/db/big", 8, 1, 1);
	for (int i = 0; i < 2900; i++)
		e[n++] = ev(100 + (uint64_t)i, 101, CAP_READ, 3, (uint64_t)i * 8192, 8192);
	e[n++] = ev(50, 102, CAP_READ, 3, 1, 1);
	e[n++] = ev(60, 103, CAP_READ, 3, 2, 2);
	e[n++] = ev(55, 102, CAP_WRITE, 3, 3, 3);
	/* In time order, as capture.c hands them over. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && e[j].ts < e[j - 1].ts; j--) {
			struct cap_event t = e[j];

			e[j] = e[j - 1];
			e[j - 1] = t;
		}
	feed(&s, e, n);
	assert_true(f.nlog >= 1);
	assert_true(f.log[0].writes >= 1);	/* written before the end */
	assert_int_equal(capstate_finish(&s), 0);
	assert_int_equal(s.merged, 2);
	for (unsigned i = 0; i < f.nlog; i++)
		assert_false(f.log[i].partial);
	assert_null(logtext(&f, "db-102.iolog"));
	m = logtext(&f, "merged.iolog");
	assert_non_null(m);
	assert_string_equal(m, "fio version 3 iolog\n50 /db/big add\n50 /db/big open\n50 /db/big read 1 1\n"
			    "55 /db/big write 3 3\n60 /db/big read 2 2\n60 /db/big close\n");
	{
		const char *big = logtext(&f, "db-101.iolog");
		unsigned lines = 0;

		for (const char *p = big; *p; p++)
			lines += *p == '\n';
		assert_int_equal(lines, 1 + 2 + 2900 + 1);	/* header, add+open, requests, close */
	}
	capstate_free(&s);
	fake_free(&f);
}

/* Page-cache additions land on the file of their device and inode;
 * shared mappings are counted per file, private ones apart. */
static void test_pages_and_maps(void **state)
{
	struct cap_state s;
	struct fake f;
	struct cap_event e[9];

	(void)state;
	start(&s, &f);
	set_fd(&f, 100, 3, "/db/mapped", 8, 77, 1);
	e[0] = ev(1, 100, CAP_MMAP, 3, 0x01, 1 << 20);		/* MAP_SHARED */
	e[1] = ev(2, 100, CAP_MMAP, 3, 0x02, 4096);		/* MAP_PRIVATE */
	e[2] = ev(3, 100, CAP_PGADD, 8, 77, 1);
	e[3] = ev(4, 100, CAP_PGADD, 8, 77, 4);
	e[4] = ev(5, 100, CAP_PGADD, 8, 78, 2);
	e[5] = ev(6, 100, CAP_URING, 0, 0, 32);
	e[6] = ev(7, 100, CAP_FAULT, 8, 77, 1);
	e[7] = ev(8, 100, CAP_FAULT, 8, 77, 1);
	e[8] = ev(9, 100, CAP_FAULT, 8, 79, 1);		/* a library, say */
	feed(&s, e, 9);
	assert_int_equal(capstate_finish(&s), 0);
	assert_int_equal(s.files[0].shared_maps, 1);
	assert_int_equal(s.files[0].mapped_bytes, 1 << 20);
	assert_int_equal(s.private_maps, 1);
	assert_true(s.files[0].pgadd_seen);
	assert_int_equal(s.files[0].pgadd, 5);
	assert_int_equal(s.pg_other, 2);
	assert_int_equal(s.files[0].faults, 2);
	assert_int_equal(s.flt_other, 1);
	assert_int_equal(s.uring_calls, 1);
	assert_int_equal(s.uring_sqes, 32);
	capstate_free(&s);
	fake_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_changed_later),
		cmocka_unit_test(test_named_open),
		cmocka_unit_test(test_by_inode),
		cmocka_unit_test(test_fork_exec),
		cmocka_unit_test(test_pid_reuse),
		cmocka_unit_test(test_not_logged),
		cmocka_unit_test(test_flush_and_merge),
		cmocka_unit_test(test_pages_and_maps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
