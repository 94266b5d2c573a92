/*
 * capture.h - faultline --capture=DIR: what running programs read,
 * write and sync, recorded as one fio iolog stream per thread and a job
 * file that replays them together.
 *
 *   --pid=PID[,PID...]   these processes, their threads, their children
 *                        (those there already and those they start)
 *   --comm=NAME          every task of that name, as they come and go
 *   -- COMMAND [ARGS]    a command started for it, and its children
 *
 * capture.c checks the request and runs the capture, capbpf.c (BPF) or
 * captrace.c (tracefs) is the kernel's side, capstream.c turns events into streams,
 * capout.c writes capture.job and prints what was seen, lost and
 * unseeable. Functions return 0 or -errno with @e; only the summary is
 * printed, to @out.
 */
#ifndef FAULTLINE_CAPTURE_H
#define FAULTLINE_CAPTURE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/err.h"

/* --capture_method: how the kernel's side records. */
enum capture_method {
	CAPTURE_AUTO,		/* pagecache where it loads, else bpf, else the tracepoints */
	CAPTURE_BPF,		/* BPF on the raw syscall tracepoints (capbpf.c), or fail */
	CAPTURE_TRACEPOINT,	/* the syscall tracepoints through tracefs (captrace.c) */
	CAPTURE_PAGECACHE,	/* BPF on the file I/O path's tracepoints, no syscall (capbpf.c), or fail */
};

struct capture_opts {
	const char *dir;
	const int *pids;		/* --pid */
	unsigned npids;
	const char *comm;		/* --comm */
	char *const *argv;		/* -- COMMAND ARGS, NULL-terminated */
	uint64_t runtime_ns;		/* 0: until stopped */
	volatile sig_atomic_t *stop;	/* set by a signal */
	const char *cmdline;		/* for capture.job's head */
	const char *method;		/* --capture_method: auto (NULL), pagecache, bpf or tracepoint */
};

/* What became of it: the capture ran (0) but may have lost records or
 * failed to write a log (err). */
struct capture_result {
	int cmd_status;			/* the command's wait status, or -1: it goes on */
	int cmd_pid;			/* the command's pid, or 0 */
	int write_err;			/* a log that could not be written: -errno */
	bool started;			/* tracing began: an error after it is no bad input */
};

/*
 * Check @o (before anything is made: -EINVAL bad input, -ESRCH a pid
 * that does not exist, -EPERM not root or a pid not ours, -EEXIST a DIR
 * holding a capture, -ENOENT no tracefs; DIR is left as it was), then
 * capture until stopped, write the logs and capture.job, and print the
 * summary to @out.
 */
int capture_run(const struct capture_opts *o, FILE *out, struct capture_result *res, struct err *e);

/* --pid's value, "PID[,PID...]", into a new array *@pids of *@n: 0,
 * -EINVAL (anything but positive decimal ids, comma-separated) or
 * -ENOMEM. The caller frees *@pids on either. */
int capture_parse_pids(const char *v, int **pids, unsigned *n);

#endif
