/*
 * captrace.h - the kernel side of faultline --capture: a private
 * tracefs instance with the syscall tracepoints of positioned reads and
 * writes, syncs, the calls that bind and unbind descriptors, and the
 * scheduler's task events, filtered in the kernel (by task, following
 * forks, or by name), read from the per-CPU ring buffers as binary
 * records through libtracefs and libtraceevent and decoded into
 * struct cap_event.
 *
 * Only the enter tracepoints of pread64, pwrite64, fsync and fdatasync
 * are used: they carry descriptor, size and offset, and every event
 * recorded is a cost the traced program pays. A read's length is the
 * length asked for. The vectored calls carry no length on entry (it is
 * in the iovecs), so theirs is the result, from their exit.
 *
 * Functions return 0 or -errno (with @e) and never print.
 */
#ifndef FAULTLINE_CAPTRACE_H
#define FAULTLINE_CAPTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capstream.h"
#include "lib/err.h"

struct captrace;

/*
 * Root, tracefs (mounted at /sys/kernel/tracing when it is nowhere:
 * *mounted says so, for captrace_close to undo), every event's format,
 * and an instance of our own, not yet recording. Errors: -EPERM not
 * root, -ENOENT no tracefs or a tracepoint this kernel lacks.
 */
int captrace_open(struct captrace **out, bool *mounted, struct err *e);

/* Record tasks @tids and every task they start (set_event_pid with
 * event-fork); more may be added while recording. */
int captrace_follow(struct captrace *t, const int *tids, unsigned n, struct err *e);
/* Record every task named @comm (a filter on each event). */
int captrace_comm(struct captrace *t, const char *comm, struct err *e);

/* Start recording. */
int captrace_start(struct captrace *t, struct err *e);
/* Stop recording; what is in the buffers can still be read. */
void captrace_stop(struct captrace *t);

/*
 * Append every record the buffers hold to @ev (grown as needed, *n
 * records, *cap room), as the ring buffers give them; @seq numbers them.
 * 0 or -errno.
 */
int captrace_read(struct captrace *t, struct cap_event **ev, size_t *n, size_t *cap, uint32_t *seq);

/* Records the buffers lost so far (overrun and dropped, every CPU). */
uint64_t captrace_lost(struct captrace *t);
/* Vectored calls that read or wrote at the file's own position
 * (preadv2 with offset -1): no offset to log. */
uint64_t captrace_unpositioned(const struct captrace *t);

/* The trace clock now (CLOCK_MONOTONIC, which trace_clock=mono is). */
uint64_t captrace_now(void);

/* Remove the instance, and unmount tracefs if @mounted. */
void captrace_close(struct captrace *t, bool mounted);

#endif
