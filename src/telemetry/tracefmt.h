/*
 * tracefmt.h - tracepoints as this kernel describes them, through the
 * kernel's own tracing libraries: libtracefs finds (and, for
 * --mount-tracefs, mounts) tracefs, libtraceevent parses an event's
 * format file (its id, fields and print format). perfev.c and wbtrace.c
 * read every number they use (ids, field offsets, enum values) from
 * here, never assume one.
 *
 * Functions return 0 or -errno and never print.
 */
#ifndef FAULTLINE_TRACEFMT_H
#define FAULTLINE_TRACEFMT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct tep_handle;
struct tep_event;
struct tracefs_instance;

enum tracefmt_state {
	TRACEFMT_OK,
	TRACEFMT_UNMOUNTED,	/* the mount point exists, nothing on it */
	TRACEFMT_DENIED,	/* mounted, not readable by us */
	TRACEFMT_ABSENT,	/* no mount point: a kernel without tracing */
};

/*
 * Where the events are: below the live /sys (@sysroot "/sys"), wherever
 * libtracefs finds tracefs mounted; below a recorded tree, at
 * <sysroot>/kernel/tracing or <sysroot>/kernel/debug/tracing. @dir gets
 * the events directory, or the mount point looked for.
 */
enum tracefmt_state tracefmt_find(const char *sysroot, char *dir, size_t cap);

/* Parse events/<sys>/<name>/format below @events into @tep: 0 with *ev,
 * -ENOENT when the kernel has no such event, -EBADMSG when libtraceevent
 * cannot parse it, another -errno when it cannot be read. */
int tracefmt_load(struct tep_handle *tep, const char *events, const char *sys, const char *name,
		  struct tep_event **ev);

/*
 * A libtraceevent handle for reading this host's raw ring buffers: its
 * byte order, long and page size, and the ring buffer's page header
 * from @events/header_page. 0 with *tep (tep_free it), or -errno (with
 * @e). The events' formats are for the caller to load (tracefmt_load):
 * only those it reads, not every event tracefs_local_events would.
 */
int tracefmt_tep(const char *events, struct tep_handle **tep, struct err *e);

/*
 * Remove the tracefs instances named @prefix followed by a pid whose
 * process is gone (a run killed before it could remove its own): their
 * events stay enabled and their buffers allocated until someone does.
 * (A faultline in another PID namespace sharing this tracefs would
 * look gone too: not a setup this tool is run in.)
 */
void tracefmt_remove_stale(const char *prefix);

/* Records @inst's ring buffers lost so far over @ncpus CPUs: the
 * per-CPU stats' overrun (overwritten) and dropped events (refused
 * when full). */
uint64_t tracefmt_lost(struct tracefs_instance *inst, int ncpus);

/* The value __print_symbolic(REC-><field>, ...) of @ev's print format
 * maps to @label, compared without case: 0, or -ENOENT. */
int tracefmt_symbol(const struct tep_event *ev, const char *field, const char *label, long *value);

/*
 * --mount-tracefs: tracefs mounted where libtracefs mounts it
 * (/sys/kernel/tracing) when it is mounted nowhere. 1 when mounted now,
 * 0 when it already was, -errno (with @e) when it cannot be;
 * tracefmt_umount undoes a 1.
 */
int tracefmt_mount(struct err *e);
void tracefmt_umount(void);

#endif
