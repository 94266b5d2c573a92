/*
 * capstream.h - what a capture does with the events it reads: the
 * pure half of faultline --capture (capture.c is the live half).
 *
 * Events come in in time order (struct cap_event, decoded from the
 * kernel's syscall and scheduler tracepoints). Each traced thread's
 * requests become its own stream, fio's iolog version 3 text: a header,
 * an "add" and an "open" line before a file's first request, one line
 * per request ("USEC FILE read|write|sync|datasync OFFSET LENGTH", the
 * microseconds counted from the capture's start), "close" lines at the
 * end. Descriptors are named per process (threads share their table, a
 * forked child starts with a copy of its parent's, an exec drops it):
 * an openat or close forgets what a descriptor was, and the next
 * request on it asks the environment (struct cap_env: /proc, live) what
 * it is now. A request whose descriptor changed again later in the
 * events already read cannot be named that way and is counted, never
 * guessed.
 *
 * The environment also takes each stream's text (whole lines only) and
 * tells a task's process and name. Nothing here does I/O or prints:
 * tests/test_capstream.c drives it with made-up events.
 */
#ifndef FAULTLINE_CAPSTREAM_H
#define FAULTLINE_CAPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cap_kind {
	CAP_READ,		/* pread64, preadv, preadv2: fd, off, len */
	CAP_WRITE,		/* pwrite64, pwritev, pwritev2: fd, off, len */
	CAP_SYNC,		/* fsync: fd */
	CAP_DATASYNC,		/* fdatasync: fd */
	CAP_OPEN,		/* openat returned fd */
	CAP_CLOSE,		/* close: fd */
	CAP_NEWTASK,		/* a task made @child with clone flags @len */
	CAP_EXIT,		/* the task ended */
	CAP_EXEC,		/* the task's process ran a new program */
	CAP_MMAP,		/* mmap of fd, @len bytes, mmap flags @off */
	CAP_URING,		/* io_uring_enter submitting @len requests */
	CAP_AIO,		/* io_submit of @len requests */
	CAP_PGADD,		/* @len pages of inode @off on device @fd into the page cache */
	CAP_FAULT,		/* a page fault on a mapping of inode @off on device @fd */
	CAP_NAME,		/* file @fi is inode @ino on device @dev (the pagecache method) */
	CAP_NKINDS
};

/* What a descriptor is, as the environment finds it (or as the open
 * itself said, with the bpf method). */
struct cap_fdinfo {
	char path[4096];
	uint64_t dev, ino;	/* the kernel's dev_t (major << 20 | minor) and inode */
	bool file;		/* a regular file or a block device */
};

/* A request's fd when it names its file by inode (@dev, @ino), as the
 * pagecache method's tracepoints do: a CAP_NAME before it says which. */
#define CAP_FD_INODE (-2)

struct cap_event {
	uint64_t ts;		/* nanoseconds, the trace's clock */
	uint64_t off;
	uint64_t len;
	uint64_t ino;		/* fd CAP_FD_INODE, CAP_NAME: the file's inode */
	uint32_t dev;		/* and its device */
	int32_t tid;
	int32_t fd;		/* CAP_NEWTASK: the child's tid; CAP_PGADD: the device (kernel's dev_t) */
	uint32_t seq;		/* order of reading: ties keep it */
	uint8_t kind;		/* enum cap_kind */
	/* CAP_OPEN: what the open named when the kernel said (the bpf
	 * method), else NULL and /proc is asked at the first request.
	 * Owned by whoever holds the event (cap_event_release). */
	struct cap_fdinfo *fi;
};

/* Append @e to @ev (*n events, *cap room, grown as needed), numbered
 * *seq (then counted on): 0, or -ENOMEM. */
int cap_event_push(struct cap_event **ev, size_t *n, size_t *cap, uint32_t *seq, const struct cap_event *e);

/* Free what @ev[0..n) own. */
void cap_event_release(struct cap_event *ev, size_t n);

/* Filesystems that hold the kernel's state, not data (/proc, /sys and
 * kin, by statfs's f_type or the superblock's s_magic): a replay cannot
 * read them back as they were. */
bool cap_pseudo_fs(unsigned long magic);

struct cap_env {
	void *arg;
	/* What @fd of task @tid (process @tgid) is now: 0 with @out, or
	 * -errno (-ENOENT: closed, or the task is gone). */
	int (*fd_info)(void *arg, int tid, int tgid, int fd, struct cap_fdinfo *out);
	/* Task @tid's process and name: 0, or -errno when it is gone. */
	int (*task_info)(void *arg, int tid, int *tgid, char comm[16]);
	/* Append @len bytes (whole lines) to stream @name's log; 0 or -errno. */
	int (*write)(void *arg, const char *name, const char *buf, size_t len);
};

/* A stream with at most this many requests may be merged with others
 * like it (capstate_finish): a thread that made a handful of requests
 * is not worth a replay thread of its own. */
#define CAP_SMALL_STREAM 256
/* Bytes of a stream's text kept before it goes to its log. */
#define CAP_STREAM_BUF 16384

struct cap_file {
	char *path;
	uint64_t dev, ino;
	uint64_t reads, writes, syncs;
	uint64_t read_bytes, written_bytes;
	uint64_t shared_maps, mapped_bytes;	/* MAP_SHARED mappings of it */
	uint64_t pgadd;			/* pages it brought into the page cache */
	bool pgadd_seen;
	uint64_t faults;		/* page faults on mappings of it */
	bool loggable;			/* no blank in its path (fio's logs split on blanks) */
};

struct cap_req {
	uint64_t us;
	uint64_t off;
	uint64_t len;
	uint32_t file;
	uint32_t seq;		/* its place before a merge's sort: ties keep it */
	uint8_t op;		/* CAP_READ..CAP_DATASYNC */
};

struct cap_stream {
	char name[48];		/* "<comm>-<tid>", or "merged" */
	int tid, tgid;
	uint64_t requests, reads, writes, syncs;
	uint64_t first_us, last_us;
	uint32_t *files;	/* files it named, in order */
	unsigned nfiles, capfiles;
	char *buf;
	size_t len, cap;
	bool flushed;		/* some of its text went to its log */
	bool merged;		/* capstate_finish merged it away */
	struct cap_req *small;	/* its requests while it is small */
	unsigned nsmall;
};

struct cap_task {
	int tid, tgid;
	int stream;		/* index into streams, or -1 before its first request */
	char comm[16];
};

struct cap_map {
	uint64_t *key;		/* 0: empty */
	int64_t *val;
	size_t n, cap;
};

struct cap_state {
	uint64_t t0;		/* the capture's start, trace clock */
	struct cap_env env;
	struct cap_map tasks;	/* tid -> index into task */
	struct cap_map fds;	/* (tgid, fd) -> file index, or -1: not a file */
	struct cap_map pg;	/* (dev, inode) -> pages, until matched to files */
	struct cap_map flt;	/* (dev, inode) -> page faults, the same */
	struct cap_map inodes;	/* (dev, inode) -> file index, as CAP_NAME said */
	struct cap_task *task;
	size_t ntask, captask;
	struct cap_file *files;
	unsigned nfiles, capfiles;
	struct cap_stream *streams;
	unsigned nstreams, capstreams;
	/* What could not be logged, and what cannot be seen. */
	uint64_t requests;		/* logged */
	uint64_t unnamed;		/* a descriptor that changed before it could be named */
	uint64_t unnamed_op[CAP_DATASYNC + 1];	/* the same, per kind of request */
	uint64_t unnamed_ino;		/* by inode, on a file /proc did not show */
	uint64_t notfile;		/* on sockets, pipes and the like */
	uint64_t unloggable;		/* on a file whose path has a blank, or is deleted */
	uint64_t uring_calls, uring_sqes;
	uint64_t aio_calls, aio_iocbs;
	uint64_t private_maps;		/* MAP_PRIVATE file mappings (libraries, mostly) */
	uint64_t pg_other;		/* page-cache pages of files no request named */
	uint64_t flt_other;		/* page faults on files no request or mapping named */
	unsigned merged;		/* streams merged into "merged" */
	int err;			/* the first write error (-errno) */
};

void capstate_init(struct cap_state *s, uint64_t t0, const struct cap_env *env);
void capstate_free(struct cap_state *s);

/*
 * Take @ev[0..nemit) (sorted by ts, then seq). @ev[nemit..n) are events
 * read already but not yet taken (they may still be joined by earlier
 * ones): only looked at, to know whether a descriptor changes after a
 * request on it. 0, or -ENOMEM.
 */
int capstate_feed(struct cap_state *s, const struct cap_event *ev, size_t n, size_t nemit);

/*
 * The end: small streams merged (at most CAP_SMALL_STREAM requests and
 * under 1 % of the capture's, when two or more are), each stream's
 * close lines written, every stream's text handed to env.write, the
 * page-cache pages matched to files. 0, or the first write error.
 */
int capstate_finish(struct cap_state *s);

/* One request as its log line, "USEC FILE ACTION OFFSET LENGTH\n",
 * into @buf (@cap bytes): its length, or 0 when it does not fit. */
size_t cap_line(char *buf, size_t cap, uint64_t us, const char *path, enum cap_kind op, uint64_t off,
		uint64_t len);

/* A stream's log's name: "<name>.iolog". */
void cap_stream_file(const struct cap_stream *st, char *buf, size_t cap);

#endif
