// SPDX-License-Identifier: GPL-2.0
/*
 * capture.bpf.c - faultline --capture's kernel side when BPF can load:
 * programs on the raw system-call tracepoints (sys_enter, sys_exit) and
 * the scheduler's task events, filtered here by task and by call,
 * sending binary records (capbpfrec.h) through one BPF ring buffer.
 *
 * What this saves over the syscall tracepoints through tracefs: every
 * call of every task still takes the kernel's slow system-call path
 * (any syscall tracepoint enabled does that), but a call that is not
 * one a capture wants ends at one array lookup, a task not traced at
 * one hash lookup, and a request costs a 48-byte record that the reader
 * copies out, where tracefs wrote a record per enabled event and the
 * reader parsed each with libtraceevent. An open's record carries the
 * file's path, put together here, so a descriptor is named however soon
 * it is closed. fentry/fexit programs on the
 * kernel's read and write functions would spare the slow path too; they
 * are not used because kernels that lock down BPF trampolines refuse
 * them (EPERM at load) where these load.
 *
 * The pagecache method loads the programs at the end of this file
 * instead of the system calls' (the reader chooses by libbpf's autoload):
 * the same maps, task events and ring buffer.
 *
 * The ring buffer never overwrites: a record that finds no room is
 * counted in 'dropped', which the reader reports as lost.
 *
 * GPL: the tracing helpers are the kernel's GPL-only interfaces.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "capture/capbpfrec.h"

char LICENSE[] SEC("license") = "GPL";

/* The tasks followed: set by the reader, grown here as they fork. The
 * size bounds the threads a capture follows at once. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tids SEC(".maps");

/* Syscall number -> enum capbpf_nr, filled by the reader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CAPBPF_NR_MAX);
	__type(key, __u32);
	__type(value, __u8);
} nr_kind SEC(".maps");

/* A call whose record waits for its exit (its length or descriptor is
 * its result), per task: one call at a time. */
struct pend {
	__u64 pos;
	__u64 path;		/* the program's pointer to the path it opens */
	__s32 fd;
	__s32 dfd;
	__u32 nr;		/* enum capbpf_nr */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct pend);
} pending SEC(".maps");

/* A request's record is 48 bytes in the ring: 32 MiB hold 0.7 million,
 * 7 s of a database making 100k requests a second while the reader
 * empties it ten times a second. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 << 20);
} events SEC(".maps");

/* An open's record is built here: 4 KiB do not fit on the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct capbpf_open);
} scratch SEC(".maps");

/* A path is put together here from its last name back to the root: the
 * names are written backwards from the middle, each up to NAME_MAX past
 * where it starts, so twice PATH_MAX holds every write. */
struct pathbuf {
	char b[2 * CAPBPF_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pathbuf);
} pathbuf SEC(".maps");

/* Set by the reader: --comm follows every task of this name instead. */
char want_comm[16];
__u32 by_comm;
/* Records the ring buffer had no room for. */
__u64 dropped;
/* preadv2/pwritev2 at the file's own position (offset -1). */
__u64 unpositioned;

#define MAP_ANONYMOUS_ 0x20
#define NAME_MAX_ 255
/* Directories walked up from a file to its root, mount points crossed
 * included: deeper paths are left to the program's own string. */
#define PATH_DEPTH 40
#define AT_FDCWD_ (-100)
#define F_DUPFD_ 0
#define F_DUPFD_CLOEXEC_ 1030

static __always_inline bool traced(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (by_comm) {
		char c[16];

		bpf_get_current_comm(c, sizeof(c));
		for (int i = 0; i < 16; i++) {
			if (c[i] != want_comm[i])
				return false;
			if (!c[i])
				break;
		}
		return true;
	}
	return bpf_map_lookup_elem(&tids, &tid) != NULL;
}

static __always_inline void emit(__u32 kind, __s32 fd, __u64 off, __u64 len)
{
	struct capbpf_rec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		__sync_fetch_and_add(&dropped, 1);
		return;
	}
	r->ts = bpf_ktime_get_ns();
	r->tid = (__s32)(__u32)bpf_get_current_pid_tgid();
	r->kind = kind;
	r->fd = fd;
	r->off = off;
	r->len = len;
	r->pad = 0;
	bpf_ringbuf_submit(r, 0);
}

static __always_inline void wait_exit(__u32 nr, __s32 fd, __u64 pos, __s32 dfd, __u64 path)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pend p = { .pos = pos, .path = path, .fd = fd, .dfd = dfd, .nr = nr };

	bpf_map_update_elem(&pending, &tid, &p, BPF_ANY);
}

/*
 * @file's path from the root of the task's mount namespace, as /proc
 * shows a descriptor's, into @out: its length with the NUL, or 0 when it
 * cannot be put together (deeper than PATH_DEPTH, longer than PATH_MAX).
 * Taken at the open from the file itself, so a relative path needs no
 * working directory, and a task gone before its records are read still
 * names what it opened.
 */
/* The walk's state, one step per bpf_loop call (the verifier checks the
 * step once, not PATH_DEPTH times over). */
struct walk {
	struct dentry *d;
	struct vfsmount *vm;
	struct mount *m;
	struct pathbuf *pb;
	__u32 off;		/* where the path so far starts in pb */
	int fail;
};

static long walk_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	/* Each pointer taken out of the walk first: a CO-RE read of w->d
	 * itself would ask the kernel's BTF for struct walk. */
	struct dentry *d = w->d;
	struct vfsmount *vm = w->vm;
	struct mount *m = w->m, *mp;
	struct dentry *parent = BPF_CORE_READ(d, d_parent), *root = BPF_CORE_READ(vm, mnt_root);
	struct pathbuf *pb = w->pb;
	__u32 len, off = w->off;
	struct qstr q;

	if (d == root || d == parent) {
		mp = BPF_CORE_READ(m, mnt_parent);
		if (m == mp)
			return 1;	/* the namespace's root: done */
		w->d = BPF_CORE_READ(m, mnt_mountpoint);
		w->m = mp;
		w->vm = (void *)mp + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	if (i == PATH_DEPTH - 1) {
		w->fail = 1;
		return 1;
	}
	q = BPF_CORE_READ(d, d_name);
	len = q.len & NAME_MAX_;
	if (len + 1 > off) {
		w->fail = 1;
		return 1;
	}
	off -= len + 1;
	bpf_probe_read_kernel(&pb->b[(off + 1) & (CAPBPF_PATH_MAX - 1)], len, q.name);
	pb->b[off & (CAPBPF_PATH_MAX - 1)] = '/';
	w->off = off;
	w->d = parent;
	return 0;
}

static __always_inline long file_path(struct file *file, char *out)
{
	__u32 zero = 0, len;
	struct walk w = {
		.d = BPF_CORE_READ(file, f_path.dentry),
		.vm = BPF_CORE_READ(file, f_path.mnt),
		.off = CAPBPF_PATH_MAX - 1,
	};

	w.m = (void *)w.vm - bpf_core_field_offset(struct mount, mnt);
	w.pb = bpf_map_lookup_elem(&pathbuf, &zero);
	if (!w.pb)
		return 0;
	w.pb->b[CAPBPF_PATH_MAX - 1] = '\0';
	bpf_loop(PATH_DEPTH, walk_step, &w, 0);
	if (w.fail || w.off >= CAPBPF_PATH_MAX - 1)
		return 0;
	len = CAPBPF_PATH_MAX - w.off;
	bpf_probe_read_kernel(out, len & (CAPBPF_PATH_MAX - 1), &w.pb->b[w.off & (CAPBPF_PATH_MAX - 1)]);
	return len & (CAPBPF_PATH_MAX - 1);
}

/* What descriptor @fd of this task is, and the path it was opened by. */
static __always_inline void emit_open(int fd, const struct pend *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct capbpf_open *o;
	struct file **fds, *file = NULL;
	struct inode *ino;
	__u32 zero = 0;
	long n;

	o = bpf_map_lookup_elem(&scratch, &zero);
	if (!o)
		return;
	o->h.ts = bpf_ktime_get_ns();
	o->h.tid = (__s32)(__u32)bpf_get_current_pid_tgid();
	o->h.kind = CAPBPF_OPEN;
	o->h.fd = fd;
	o->h.pad = 0;
	o->h.off = 0;
	o->h.len = 0;
	o->dfd = p->dfd;
	o->mode = 0;
	o->magic = 0;
	fds = BPF_CORE_READ(task, files, fdt, fd);
	if (fds && (unsigned int)fd < BPF_CORE_READ(task, files, fdt, max_fds))
		bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	if (file) {
		ino = BPF_CORE_READ(file, f_inode);
		o->h.off = BPF_CORE_READ(ino, i_ino);
		o->h.len = BPF_CORE_READ(ino, i_sb, s_dev);
		o->mode = BPF_CORE_READ(ino, i_mode);
		o->magic = BPF_CORE_READ(ino, i_sb, s_magic);
	}
	n = file ? file_path(file, o->path) : 0;
	if (n > 0)
		o->dfd = AT_FDCWD_;	/* absolute */
	else
		n = bpf_probe_read_user_str(o->path, sizeof(o->path), (const void *)p->path);
	if (n <= 0) {
		o->path[0] = '\0';
		n = 1;
	}
	n &= CAPBPF_PATH_MAX - 1;
	if (bpf_ringbuf_output(&events, o, offsetof(struct capbpf_open, path) + n, 0))
		__sync_fetch_and_add(&dropped, 1);
}

/* ---- system calls ----------------------------------------------------- */

/* Arguments as the system call got them (x86-64: di, si, dx, r10, r8),
 * loaded directly: the tracepoint's regs is a pointer the verifier
 * knows (BTF), and a helper call per argument is what every system call
 * of the host would pay. */
#define ARG1(r) PT_REGS_PARM1_SYSCALL(r)
#define ARG2(r) PT_REGS_PARM2_SYSCALL(r)
#define ARG3(r) PT_REGS_PARM3_SYSCALL(r)
#define ARG4(r) PT_REGS_PARM4_SYSCALL(r)
#define ARG5(r) PT_REGS_PARM5_SYSCALL(r)

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	__u32 key = (__u32)id;
	__u8 *k;
	__s64 pos;

	if (id < 0 || id >= CAPBPF_NR_MAX)
		return 0;
	k = bpf_map_lookup_elem(&nr_kind, &key);
	if (!k || !*k || !traced())
		return 0;
	switch (*k) {
	case CAPBPF_NR_PREAD:
	case CAPBPF_NR_PWRITE:
		pos = (__s64)ARG4(regs);
		if (ARG3(regs) > 0 && pos >= 0)
			emit(*k == CAPBPF_NR_PREAD ? CAPBPF_READ : CAPBPF_WRITE, (__s32)ARG1(regs), (__u64)pos,
			     (__u64)ARG3(regs));
		break;
	case CAPBPF_NR_PREADV:
	case CAPBPF_NR_PWRITEV:
		pos = (__s64)ARG4(regs);
		if (pos < 0)
			__sync_fetch_and_add(&unpositioned, 1);
		else
			wait_exit(*k, (__s32)ARG1(regs), (__u64)pos, 0, 0);
		break;
	case CAPBPF_NR_FSYNC:
	case CAPBPF_NR_FDATASYNC:
		emit(*k == CAPBPF_NR_FSYNC ? CAPBPF_SYNC : CAPBPF_DATASYNC, (__s32)ARG1(regs), 0, 0);
		break;
	case CAPBPF_NR_OPEN:
		wait_exit(*k, -1, 0, AT_FDCWD_, ARG1(regs));
		break;
	case CAPBPF_NR_OPENAT:
		wait_exit(*k, -1, 0, (__s32)ARG1(regs), ARG2(regs));
		break;
	case CAPBPF_NR_DUP:
		wait_exit(*k, -1, 0, 0, 0);
		break;
	case CAPBPF_NR_FCNTL:
		if (ARG2(regs) == F_DUPFD_ || ARG2(regs) == F_DUPFD_CLOEXEC_)
			wait_exit(CAPBPF_NR_DUP, -1, 0, 0, 0);
		break;
	case CAPBPF_NR_CLOSE:
		emit(CAPBPF_CLOSE, (__s32)ARG1(regs), 0, 0);
		break;
	case CAPBPF_NR_MMAP:
		if ((__s32)ARG5(regs) >= 0 && !(ARG4(regs) & MAP_ANONYMOUS_))
			emit(CAPBPF_MMAP, (__s32)ARG5(regs), ARG4(regs), ARG2(regs));
		break;
	case CAPBPF_NR_URING:
		emit(CAPBPF_URING, -1, 0, (__u32)ARG2(regs));
		break;
	case CAPBPF_NR_AIO:
		emit(CAPBPF_AIO, -1, 0, ARG2(regs));
		break;
	}
	return 0;
}

/* Whether a call's exit can matter: every exit of every task passes
 * here, and the call's number (x86-64 keeps it in orig_ax) spares most
 * of them the hash lookup below. */
static __always_inline bool exit_wanted(struct pt_regs *regs)
{
#ifdef __TARGET_ARCH_x86
	__u32 key = (__u32)regs->orig_ax;
	__u8 *k;

	if (key >= CAPBPF_NR_MAX)
		return false;
	k = bpf_map_lookup_elem(&nr_kind, &key);
	return k && (*k == CAPBPF_NR_PREADV || *k == CAPBPF_NR_PWRITEV || *k == CAPBPF_NR_OPEN ||
		     *k == CAPBPF_NR_OPENAT || *k == CAPBPF_NR_DUP || *k == CAPBPF_NR_FCNTL);
#else
	return true;
#endif
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pend *p;

	if (!exit_wanted(regs))
		return 0;
	p = bpf_map_lookup_elem(&pending, &tid);
	if (!p)
		return 0;
	switch (p->nr) {
	case CAPBPF_NR_PREADV:
	case CAPBPF_NR_PWRITEV:
		if (ret > 0)
			emit(p->nr == CAPBPF_NR_PREADV ? CAPBPF_READ : CAPBPF_WRITE, p->fd, p->pos, (__u64)ret);
		break;
	case CAPBPF_NR_OPEN:
	case CAPBPF_NR_OPENAT:
		if (ret >= 0)
			emit_open((int)ret, p);
		break;
	case CAPBPF_NR_DUP:
		if (ret >= 0)
			emit(CAPBPF_DUP, (__s32)ret, 0, 0);
		break;
	}
	bpf_map_delete_elem(&pending, &tid);
	return 0;
}

/* ---- the page cache, for what mappings hide ------------------------------ */

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(pgadd, struct folio *folio)
{
	unsigned long fl = 0, f1 = 0;
	struct inode *host;
	__u64 pages = 1;

	if (!traced())
		return 0;
	host = BPF_CORE_READ(folio, mapping, host);
	if (!host)
		return 0;
	/* A large folio is a head page (PG_head) with its order in the
	 * low byte of the next page's flags, as folio_order reads it. */
	bpf_probe_read_kernel(&fl, sizeof(fl), &folio->flags);
	if (fl & (1ul << bpf_core_enum_value(enum pageflags, PG_head))) {
		bpf_probe_read_kernel(&f1, sizeof(f1), &folio->_flags_1);
		pages = 1ull << (f1 & 31);
	}
	emit(CAPBPF_PGADD, (__s32)BPF_CORE_READ(host, i_sb, s_dev), BPF_CORE_READ(host, i_ino), pages);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(fault, struct address_space *mapping, unsigned long index)
{
	struct inode *host;

	if (!traced())
		return 0;
	host = BPF_CORE_READ(mapping, host);
	if (host)
		emit(CAPBPF_FAULT, (__s32)BPF_CORE_READ(host, i_sb, s_dev), BPF_CORE_READ(host, i_ino), 1);
	return 0;
}

/* ---- tasks ------------------------------------------------------------------ */

/* A followed task's new task is followed too (as set_event_pid with
 * event-fork does for the tracepoint method). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ctid = (__u32)BPF_CORE_READ(child, pid);
	__u8 one = 1;

	if (!traced())
		return 0;
	if (!by_comm)
		bpf_map_update_elem(&tids, &ctid, &one, BPF_ANY);
	emit(CAPBPF_NEWTASK, (__s32)ctid, 0, BPF_CORE_READ(parent, tgid) == BPF_CORE_READ(child, tgid));
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (traced())
		emit(CAPBPF_EXEC, -1, 0, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(task_exit, struct task_struct *p)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&pending, &tid);
	if (!traced())
		return 0;
	emit(CAPBPF_EXIT, -1, 0, 0);
	/* Its tid may go to another task. */
	if (!by_comm)
		bpf_map_delete_elem(&tids, &tid);
	return 0;
}

/* ---- the pagecache method: the file I/O path, no system call hooked ---------
 *
 * A syscall tracepoint enabled sends every system call of every task
 * through the kernel's slow path; these fire only where a file is read,
 * mapped, written or synced, so a task the capture does not follow pays
 * one hash lookup per read of a file, and none per system call. What they
 * name is an inode, not a descriptor: the reader names it from /proc.
 */

static __always_inline void emit_ino(__u32 kind, struct inode *ino, __u64 off, __u64 len)
{
	struct capbpf_inorec *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		__sync_fetch_and_add(&dropped, 1);
		return;
	}
	r->h.ts = bpf_ktime_get_ns();
	r->h.tid = (__s32)(__u32)bpf_get_current_pid_tgid();
	r->h.kind = kind;
	r->h.fd = (__s32)BPF_CORE_READ(ino, i_sb, s_dev);
	r->h.off = off;
	r->h.len = len;
	r->h.pad = 0;
	r->ino = BPF_CORE_READ(ino, i_ino);
	bpf_ringbuf_submit(r, 0);
}

/* filemap_read (read, pread, readv, sendfile, splice, a buffered
 * io_uring read) gets each batch of pages here, cached or not: the
 * request's remaining pages, @index to @last inclusive. */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(pc_get_pages, struct address_space *mapping, unsigned long index, unsigned long last)
{
	if (traced())
		emit_ino(CAPBPF_PC_READ, BPF_CORE_READ(mapping, host), index, last);
	return 0;
}

/* A read fault on a mapping of a cached page: fault-around maps the
 * pages @index to @last that are in the cache. */
SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(pc_map_pages, struct address_space *mapping, unsigned long index, unsigned long last)
{
	if (traced())
		emit_ino(CAPBPF_PC_MAP, BPF_CORE_READ(mapping, host), index, last);
	return 0;
}

/* A fault on a mapped page fault-around did not map (not cached, or a
 * write fault). */
SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(pc_fault, struct address_space *mapping, unsigned long index)
{
	if (traced())
		emit_ino(CAPBPF_PC_MAP, BPF_CORE_READ(mapping, host), index, index);
	return 0;
}

/* O_DIRECT through iomap (ext4, xfs, btrfs...), however submitted:
 * pread, io_uring, libaio. */
SEC("tp_btf/iomap_dio_rw_begin")
int BPF_PROG(pc_dio, struct kiocb *iocb, struct iov_iter *iter, unsigned int dio_flags, size_t done_before)
{
	struct inode *ino;

	if (!traced())
		return 0;
	ino = BPF_CORE_READ(iocb, ki_filp, f_inode);
	emit_ino(BPF_CORE_READ(iter, data_source) ? CAPBPF_INO_WRITE : CAPBPF_INO_READ, ino,
		 (__u64)BPF_CORE_READ(iocb, ki_pos), BPF_CORE_READ(iter, count));
	return 0;
}

/* A buffered write, one call per folio it copies into (ext4's own
 * tracepoints: no generic one exists). */
SEC("tp_btf/ext4_da_write_begin")
int BPF_PROG(pc_ext4_da_write, struct inode *inode, loff_t pos, unsigned int len)
{
	if (traced())
		emit_ino(CAPBPF_INO_WRITE, inode, (__u64)pos, len);
	return 0;
}

SEC("tp_btf/ext4_write_begin")
int BPF_PROG(pc_ext4_write, struct inode *inode, loff_t pos, unsigned int len)
{
	if (traced())
		emit_ino(CAPBPF_INO_WRITE, inode, (__u64)pos, len);
	return 0;
}

SEC("tp_btf/ext4_sync_file_enter")
int BPF_PROG(pc_ext4_sync, struct file *file, int datasync)
{
	if (traced())
		emit_ino(datasync ? CAPBPF_INO_DATASYNC : CAPBPF_INO_SYNC, BPF_CORE_READ(file, f_inode), 0, 0);
	return 0;
}
