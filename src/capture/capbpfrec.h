/*
 * capbpfrec.h - what capture.bpf.c and its reader share: the records it
 * sends through its BPF ring buffer, as binary structs, and the kinds
 * of system call the reader tells it to watch. Included by the BPF
 * program (over the kernel's vmlinux.h) and by capbpf.c and
 * capbpfdec.c, which decodes the records.
 *
 * Every record starts with struct capbpf_rec. An open that gave a
 * descriptor sends struct capbpf_open: the file's path as the kernel
 * puts it together from its directory entries (or, where it cannot, the
 * path as the program passed it, relative to dfd when not absolute) and
 * what the descriptor now is (inode, device, mode, filesystem), so the
 * reader names the descriptor however soon it is closed again. Its
 * length varies: the record ends after the path's NUL.
 */
#ifndef FAULTLINE_CAPBPFREC_H
#define FAULTLINE_CAPBPFREC_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* What a system call is to the capture: the reader fills the table
 * (syscall number -> kind) from its own <sys/syscall.h>, so the BPF
 * program carries no architecture's numbers. */
enum capbpf_nr {
	CAPBPF_NR_NONE,
	CAPBPF_NR_PREAD,	/* pread64(fd, buf, count, pos) */
	CAPBPF_NR_PWRITE,	/* pwrite64(fd, buf, count, pos) */
	CAPBPF_NR_PREADV,	/* preadv, preadv2(fd, iov, n, pos): the length at exit */
	CAPBPF_NR_PWRITEV,	/* pwritev, pwritev2 */
	CAPBPF_NR_FSYNC,	/* fsync(fd) */
	CAPBPF_NR_FDATASYNC,	/* fdatasync(fd) */
	CAPBPF_NR_OPEN,		/* open, creat(path, ...) */
	CAPBPF_NR_OPENAT,	/* openat, openat2(dfd, path, ...) */
	CAPBPF_NR_DUP,		/* dup, dup2, dup3: a descriptor at exit */
	CAPBPF_NR_FCNTL,	/* fcntl(fd, cmd): F_DUPFD and F_DUPFD_CLOEXEC are dups */
	CAPBPF_NR_CLOSE,	/* close(fd) */
	CAPBPF_NR_MMAP,		/* mmap(addr, len, prot, flags, fd, off) */
	CAPBPF_NR_URING,	/* io_uring_enter(fd, to_submit, ...) */
	CAPBPF_NR_AIO,		/* io_submit(ctx, nr, iocbs) */
};
/* Syscall numbers below this are looked up; every architecture's are. */
#define CAPBPF_NR_MAX 1024

enum capbpf_kind {
	CAPBPF_READ = 1,	/* fd, off, len */
	CAPBPF_WRITE,		/* fd, off, len */
	CAPBPF_SYNC,		/* fd */
	CAPBPF_DATASYNC,	/* fd */
	CAPBPF_OPEN,		/* struct capbpf_open: fd, and what it is */
	CAPBPF_DUP,		/* fd now stands for some file (a dup, fcntl F_DUPFD) */
	CAPBPF_CLOSE,		/* fd */
	CAPBPF_NEWTASK,		/* the task made task @fd; len: 1 when a thread of its process */
	CAPBPF_EXIT,
	CAPBPF_EXEC,
	CAPBPF_MMAP,		/* fd, len, off: mmap flags */
	CAPBPF_URING,		/* len: requests submitted */
	CAPBPF_AIO,		/* len: iocbs submitted */
	CAPBPF_PGADD,		/* off: inode, fd: device, len: pages */
	CAPBPF_FAULT,		/* off: inode, fd: device */
	/* The pagecache method's, each a struct capbpf_inorec: */
	CAPBPF_PC_READ,		/* a buffered read's pages: off to len (page indexes, inclusive) */
	CAPBPF_PC_MAP,		/* pages off to len mapped by a fault */
	CAPBPF_INO_READ,	/* off, len in bytes (O_DIRECT) */
	CAPBPF_INO_WRITE,	/* off, len in bytes */
	CAPBPF_INO_SYNC,
	CAPBPF_INO_DATASYNC,
	CAPBPF_NKINDS
};

struct capbpf_rec {
	__u64 ts;		/* CLOCK_MONOTONIC, ns (bpf_ktime_get_ns) */
	__u64 off;
	__u64 len;
	__s32 tid;
	__s32 fd;
	__u32 kind;		/* enum capbpf_kind */
	__u32 pad;
};

/* A request that names its file by inode, not by descriptor: fd is
 * the device (the kernel's dev_t, major << 20 | minor). */
struct capbpf_inorec {
	struct capbpf_rec h;
	__u64 ino;
};

/* The longest path read from the program's memory (PATH_MAX). */
#define CAPBPF_PATH_MAX 4096

struct capbpf_open {
	struct capbpf_rec h;	/* fd: the descriptor; off: inode; len: device (major << 20 | minor) */
	__s32 dfd;		/* what a relative path is relative to (AT_FDCWD: the cwd) */
	__u32 mode;		/* the inode's i_mode; 0: the kernel's side could not be read */
	__u64 magic;		/* its filesystem's s_magic */
	char path[CAPBPF_PATH_MAX];	/* NUL-terminated; the record ends after the NUL */
};

#endif
