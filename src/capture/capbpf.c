/*
 * capbpf.c - loading capture.bpf.c and reading its ring buffer; see
 * capbpf.h. The program's skeleton (capture.skel.h) is generated at
 * build time by bpftool from the object clang made; a build without it
 * (no BTF on the build host, FAULTLINE_NO_BPF) has only the tracepoint
 * method.
 */
#include "capture/capbpf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "capture/capbpfdec.h"
#include "capture/capbpfrec.h"
#include "capture/capino.h"
#include "capture/cappc.h"

#ifdef FAULTLINE_NO_BPF

/* Only capbpf_open is ever called: it fails, and the capture falls back
 * on the tracepoints (or, asked for bpf, stops there). */
int capbpf_open(struct capbpf **out, enum capbpf_mode mode, struct err *e)
{
	(void)mode;
	*out = NULL;
	return err_set(e, ENOTSUP, "this faultline was built without BPF (no BTF on the build host)");
}
int capbpf_follow(struct capbpf *t, const int *tids, unsigned n, struct err *e)
{ return (void)t, (void)tids, (void)n, err_set(e, ENOTSUP, "no BPF"); }
int capbpf_comm(struct capbpf *t, const char *comm, struct err *e)
{ return (void)t, (void)comm, err_set(e, ENOTSUP, "no BPF"); }
int capbpf_start(struct capbpf *t, struct err *e)
{ return (void)t, err_set(e, ENOTSUP, "no BPF"); }
void capbpf_stop(struct capbpf *t)
{ (void)t; }
int capbpf_read(struct capbpf *t, struct cap_event **ev, size_t *n, size_t *cap, uint32_t *seq)
{ return (void)t, (void)ev, (void)n, (void)cap, (void)seq, -ENOTSUP; }
uint64_t capbpf_lost(struct capbpf *t)
{ return (void)t, 0; }
uint64_t capbpf_unpositioned(const struct capbpf *t)
{ return (void)t, 0; }
bool capbpf_ext4(const struct capbpf *t)
{ return (void)t, false; }
void capbpf_close(struct capbpf *t)
{ (void)t; }

#else

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "capture.skel.h"

/* Where the kernel's own type information is (CONFIG_DEBUG_INFO_BTF). */
#define BTF_VMLINUX "/sys/kernel/btf/vmlinux"

/* A task's working directory, as its parent's when it was made. */
struct task_cwd {
	int tid;
	char *cwd;
};

struct capbpf {
	struct capture_bpf *skel;
	struct ring_buffer *rb;
	uint64_t bad;			/* records that could not be decoded */
	enum capbpf_mode mode;
	bool ext4;			/* pagecache: ext4's writes and syncs hooked */
	struct cappc reads;		/* pagecache: each task's last buffered read */
	struct capino files;		/* pagecache: inodes named from /proc */
	/* Tasks made while the capture runs, until they end: a short-lived
	 * one (a connection's backend) is gone from /proc by the time its
	 * opens are read, and its relative paths need a directory. */
	struct task_cwd *cwds;
	unsigned ncwd, capcwd;
	/* The batch being read. */
	struct cap_event **out;
	size_t *n, *cap;
	uint32_t *seq;
	int err;
};

/* libbpf's first complaint (the cause; what follows it says what failed
 * because of it), for the message of a load that failed: functions here
 * never print. */
static char first_msg[256];

static int keep_first(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[256];
	size_t n;

	if (level == LIBBPF_DEBUG || first_msg[0])
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strcspn(line, "\n");
	line[n] = '\0';
	if (n)
		memcpy(first_msg, line, n + 1);
	return 0;
}

/* The calls a capture watches, by this architecture's numbers. */
static const struct {
	long nr;
	uint8_t kind;
} calls[] = {
	{ SYS_pread64, CAPBPF_NR_PREAD },	{ SYS_pwrite64, CAPBPF_NR_PWRITE },
	{ SYS_preadv, CAPBPF_NR_PREADV },	{ SYS_preadv2, CAPBPF_NR_PREADV },
	{ SYS_pwritev, CAPBPF_NR_PWRITEV },	{ SYS_pwritev2, CAPBPF_NR_PWRITEV },
	{ SYS_fsync, CAPBPF_NR_FSYNC },		{ SYS_fdatasync, CAPBPF_NR_FDATASYNC },
#ifdef SYS_open
	{ SYS_open, CAPBPF_NR_OPEN },
#endif
#ifdef SYS_creat
	{ SYS_creat, CAPBPF_NR_OPEN },
#endif
	{ SYS_openat, CAPBPF_NR_OPENAT },	{ SYS_openat2, CAPBPF_NR_OPENAT },
	{ SYS_dup, CAPBPF_NR_DUP },
#ifdef SYS_dup2
	{ SYS_dup2, CAPBPF_NR_DUP },
#endif
	{ SYS_dup3, CAPBPF_NR_DUP },		{ SYS_fcntl, CAPBPF_NR_FCNTL },
	{ SYS_close, CAPBPF_NR_CLOSE },		{ SYS_mmap, CAPBPF_NR_MMAP },
	{ SYS_io_uring_enter, CAPBPF_NR_URING }, { SYS_io_submit, CAPBPF_NR_AIO },
};

static int fill_calls(struct capbpf *t, struct err *e)
{
	int fd = bpf_map__fd(t->skel->maps.nr_kind);

	for (unsigned i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		uint32_t nr = (uint32_t)calls[i].nr;

		if (nr >= CAPBPF_NR_MAX)
			return err_set(e, ERANGE, "system call %u is past the BPF program's table", nr);
		if (bpf_map_update_elem(fd, &nr, &calls[i].kind, BPF_ANY) < 0)
			return err_set(e, errno, "filling the BPF program's table of calls: %s", strerror(errno));
	}
	return 0;
}

/* Whether this kernel has tracepoint @name (its BTF has the typedef
 * the tp_btf program attaches by), in vmlinux or a module. */
static bool has_tracepoint(const char *name)
{
	char type[128], mod[64];
	struct btf *btf = btf__load_vmlinux_btf();
	bool ok;

	snprintf(type, sizeof(type), "btf_trace_%s", name);
	ok = btf && btf__find_by_name_kind(btf, type, BTF_KIND_TYPEDEF) >= 0;
	btf__free(btf);
	snprintf(mod, sizeof(mod), "/sys/kernel/btf/%.*s", (int)strcspn(name, "_"), name);
	return ok || access(mod, R_OK) == 0;
}

/* Which programs load: the system calls' or the file I/O path's; the
 * scheduler's task events in both. */
static void choose(struct capbpf *t)
{
	struct capture_bpf *k = t->skel;
	bool pc = t->mode == CAPBPF_PAGECACHE;
	struct bpf_program *sys[] = { k->progs.sys_enter, k->progs.sys_exit, k->progs.pgadd, k->progs.fault };
	struct bpf_program *path[] = { k->progs.pc_get_pages, k->progs.pc_map_pages, k->progs.pc_fault,
				       k->progs.pc_dio };
	struct bpf_program *ext4[] = { k->progs.pc_ext4_da_write, k->progs.pc_ext4_write, k->progs.pc_ext4_sync };

	t->ext4 = pc && has_tracepoint("ext4_da_write_begin") && has_tracepoint("ext4_write_begin") &&
		  has_tracepoint("ext4_sync_file_enter");
	for (unsigned i = 0; i < 4; i++) {
		bpf_program__set_autoload(sys[i], !pc);
		bpf_program__set_autoload(path[i], pc);
	}
	for (unsigned i = 0; i < 3; i++)
		bpf_program__set_autoload(ext4[i], t->ext4);
}

int capbpf_open(struct capbpf **out, enum capbpf_mode mode, struct err *e)
{
	struct capbpf *t;
	int ret;

	*out = NULL;
	if (access(BTF_VMLINUX, R_OK) < 0)
		return err_set(e, errno, "this kernel has no BTF (%s: %s): the BPF programs cannot be fitted to "
			       "it", BTF_VMLINUX, strerror(errno));
	libbpf_set_print(keep_first);
	first_msg[0] = '\0';
	t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(e, ENOMEM, "out of memory");
	t->mode = mode;
	t->skel = capture_bpf__open();
	if (!t->skel) {
		ret = errno ? errno : EINVAL;
		free(t);
		return err_set(e, ret, "opening the BPF programs failed: %s%s%s", strerror(ret),
			       first_msg[0] ? ": " : "", first_msg);
	}
	choose(t);
	ret = capture_bpf__load(t->skel);
	if (ret) {
		capture_bpf__destroy(t->skel);
		free(t);
		return err_set(e, -ret, "loading the BPF programs failed (the kernel's BTF, CAP_BPF and its "
			       "verifier are needed): %s%s%s", strerror(-ret), first_msg[0] ? ": " : "", first_msg);
	}
	ret = fill_calls(t, e);
	if (ret) {
		capture_bpf__destroy(t->skel);
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int capbpf_follow(struct capbpf *t, const int *tids, unsigned n, struct err *e)
{
	int fd = bpf_map__fd(t->skel->maps.tids);
	uint8_t one = 1;

	for (unsigned i = 0; i < n; i++) {
		uint32_t tid = (uint32_t)tids[i];

		if (bpf_map_update_elem(fd, &tid, &one, BPF_ANY) < 0)
			return err_set(e, errno, "adding task %d to the traced tasks failed: %s", tids[i],
				       strerror(errno));
		/* The files it has now: named however soon it closes them. */
		if (t->mode == CAPBPF_PAGECACHE && capino_scan(&t->files, tids[i]) == -ENOMEM)
			return err_set(e, ENOMEM, "out of memory");
	}
	return 0;
}

int capbpf_comm(struct capbpf *t, const char *comm, struct err *e)
{
	if (strlen(comm) > 15)
		return err_set(e, EINVAL, "--comm=%s: a task name is at most 15 characters", comm);
	memset(t->skel->bss->want_comm, 0, sizeof(t->skel->bss->want_comm));
	memcpy(t->skel->bss->want_comm, comm, strlen(comm));
	t->skel->bss->by_comm = 1;
	return 0;
}

static int push(struct capbpf *t, const struct cap_event *ev)
{
	return cap_event_push(t->out, t->n, t->cap, t->seq, ev);
}

static struct task_cwd *cwd_of(struct capbpf *t, int tid)
{
	for (unsigned i = 0; i < t->ncwd; i++)
		if (t->cwds[i].tid == tid)
			return &t->cwds[i];
	return NULL;
}

static void cwd_forget(struct capbpf *t, int tid)
{
	struct task_cwd *c = cwd_of(t, tid);

	if (c) {
		free(c->cwd);
		*c = t->cwds[--t->ncwd];
	}
}

/* Task @child starts in @parent's directory (chdir is not traced: a
 * wrong guess fails resolve's inode check, and is not kept). */
static void cwd_inherit(struct capbpf *t, int parent, int child)
{
	struct task_cwd *p = cwd_of(t, parent);
	char link[64], dir[PATH_MAX], *copy;
	ssize_t n;

	if (p) {
		copy = strdup(p->cwd);
	} else {
		snprintf(link, sizeof(link), "/proc/%d/cwd", parent);
		n = readlink(link, dir, sizeof(dir) - 1);
		if (n <= 0)
			return;
		dir[n] = '\0';
		copy = strdup(dir);
	}
	if (!copy)
		return;
	cwd_forget(t, child);
	if (t->ncwd == t->capcwd) {
		unsigned cap = t->capcwd ? t->capcwd * 2 : 64;
		struct task_cwd *q = realloc(t->cwds, cap * sizeof(*q));

		if (!q) {
			free(copy);
			return;
		}
		t->cwds = q;
		t->capcwd = cap;
	}
	t->cwds[t->ncwd++] = (struct task_cwd){ .tid = child, .cwd = copy };
}

/*
 * An open's path as the program passed it, made absolute (against its
 * working directory or the descriptor it was relative to, as /proc
 * shows them now) and kept only when it is still the file the kernel
 * opened (same device and inode): otherwise /proc is asked at the first
 * request, as the tracepoint method does.
 */
static void resolve(struct capbpf *t, struct cap_event *ev)
{
	struct task_cwd *known = cwd_of(t, ev->tid);
	struct cap_fdinfo *fi = ev->fi;
	int dfd = (int)(int64_t)ev->off;
	char base[64], dir[PATH_MAX], full[sizeof(fi->path)];
	struct stat st;
	ssize_t n;

	if (fi->path[0] != '/') {
		if (dfd == AT_FDCWD)
			snprintf(base, sizeof(base), "/proc/%d/cwd", ev->tid);
		else
			snprintf(base, sizeof(base), "/proc/%d/fd/%d", ev->tid, dfd);
		n = readlink(base, dir, sizeof(dir) - 1);
		if (n <= 0 && dfd == AT_FDCWD && known)
			n = (ssize_t)snprintf(dir, sizeof(dir), "%s", known->cwd);
		if (n <= 0 || (size_t)n + 1 + strlen(fi->path) >= sizeof(full))
			goto drop;
		dir[n] = '\0';
		snprintf(full, sizeof(full), "%s/%s", strcmp(dir, "/") ? dir : "", fi->path);
		memcpy(fi->path, full, sizeof(full));
	}
	if (stat(fi->path, &st) < 0 || (uint64_t)st.st_ino != fi->ino ||
	    ((uint64_t)major(st.st_dev) << 20 | (minor(st.st_dev) & 0xfffff)) != fi->dev)
		goto drop;
	/* The path as /proc would give it: no "..", no symlinks. */
	if (realpath(fi->path, full))
		memcpy(fi->path, full, sizeof(full));
	return;
drop:
	free(fi);
	ev->fi = NULL;
}

/*
 * A request by inode: the first of a file is preceded by what the file
 * is (CAP_NAME), from the lists of /proc taken so far or, for an inode
 * they do not hold, a new look at the task's process. 0, 1: a batch of
 * the read before, dropped; -ENOMEM.
 */
static int by_inode(struct capbpf *t, const void *data, struct cap_event *ev)
{
	struct capbpf_rec r;
	struct capino_ent *f;
	struct cap_event name;
	int ret;

	memcpy(&r, data, sizeof(r));
	if (r.kind == CAPBPF_PC_READ) {
		ret = cappc_read(&t->reads, ev->tid, ev->dev, ev->ino, r.off, r.len);
		if (ret <= 0)
			return ret < 0 ? ret : 1;
	}
	f = capino_find(&t->files, ev->dev, ev->ino);
	if (!f && capino_scan(&t->files, ev->tid) == -ENOMEM)
		return -ENOMEM;
	f = f ? f : capino_find(&t->files, ev->dev, ev->ino);
	if (!f && capino_unnamed(&t->files, ev->dev, ev->ino) < 0)
		return -ENOMEM;
	if (!f || f->told || !f->path)
		return 0;
	f->told = true;
	name = (struct cap_event){ .ts = ev->ts, .tid = ev->tid, .fd = CAP_FD_INODE, .dev = ev->dev,
				   .ino = ev->ino, .kind = CAP_NAME };
	name.fi = calloc(1, sizeof(*name.fi));
	if (!name.fi)
		return -ENOMEM;
	snprintf(name.fi->path, sizeof(name.fi->path), "%s", f->path);
	name.fi->dev = ev->dev;
	name.fi->ino = ev->ino;
	name.fi->file = f->file;
	if (push(t, &name) < 0) {
		free(name.fi);
		return -ENOMEM;
	}
	return 0;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct capbpf *t = ctx;
	struct cap_event ev;
	int ret = capbpf_decode(data, len, &ev, &t->bad);

	if (ret == 1 && ev.fd == CAP_FD_INODE) {
		ret = by_inode(t, data, &ev);
		if (ret)
			return ret < 0 ? (t->err = ret) : 0;
		ret = 1;
	}
	if (ret == 1 && ev.kind == CAP_EXIT)
		cappc_forget(&t->reads, ev.tid);
	if (ret == 1 && ev.fi)
		resolve(t, &ev);
	if (ret == 1 && ev.kind == CAP_NEWTASK)
		cwd_inherit(t, ev.tid, ev.fd);
	if (ret == 1 && ev.kind == CAP_EXIT)
		cwd_forget(t, ev.tid);

	if (ret == 1 && push(t, &ev) < 0) {
		free(ev.fi);
		ret = -ENOMEM;
	}
	if (ret < 0)
		t->err = ret;
	return ret < 0 ? ret : 0;
}

int capbpf_start(struct capbpf *t, struct err *e)
{
	int ret;

	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_record, t, NULL);
	if (!t->rb)
		return err_set(e, errno, "the BPF ring buffer cannot be read: %s", strerror(errno));
	first_msg[0] = '\0';
	ret = capture_bpf__attach(t->skel);
	if (ret)
		return err_set(e, -ret, "attaching the BPF programs failed: %s%s%s", strerror(-ret),
			       first_msg[0] ? ": " : "", first_msg);
	return 0;
}

void capbpf_stop(struct capbpf *t)
{
	capture_bpf__detach(t->skel);
}

int capbpf_read(struct capbpf *t, struct cap_event **ev, size_t *n, size_t *cap, uint32_t *seq)
{
	int ret;

	t->out = ev;
	t->n = n;
	t->cap = cap;
	t->seq = seq;
	t->err = 0;
	ret = ring_buffer__consume(t->rb);
	if (t->err)
		return t->err;
	return ret < 0 ? ret : 0;
}

uint64_t capbpf_lost(struct capbpf *t)
{
	return __atomic_load_n(&t->skel->bss->dropped, __ATOMIC_RELAXED) + t->bad;
}

uint64_t capbpf_unpositioned(const struct capbpf *t)
{
	return __atomic_load_n(&t->skel->bss->unpositioned, __ATOMIC_RELAXED);
}

bool capbpf_ext4(const struct capbpf *t)
{
	return t->ext4;
}

void capbpf_close(struct capbpf *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	capture_bpf__destroy(t->skel);
	cappc_free(&t->reads);
	capino_free(&t->files);
	while (t->ncwd)
		cwd_forget(t, t->cwds[0].tid);
	free(t->cwds);
	free(t);
}

#endif
