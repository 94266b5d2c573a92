/*
 * captrace.c - the capture's tracefs instance and its records; see
 * captrace.h.
 *
 * The instance is "faultline-capture-<pid>": its own events, filters,
 * buffer and clock, so nothing of the host's own tracing is touched.
 * The buffer does not overwrite: when the reader falls behind, new
 * records are dropped and counted by the kernel (per-CPU "dropped
 * events"), never silently.
 */
#include "capture/captrace.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <tracefs/tracefs.h>

#include "telemetry/tracefmt.h"

/* Per CPU, what 2 s of a busy database's requests need (a record is
 * 40 to 64 bytes; 100k requests/s per CPU is 6 MB/s) while the reader
 * empties it ten times a second; at most 256 MiB over all CPUs. */
#define BUFFER_KB_PER_CPU 8192
#define BUFFER_KB_ALL (256 * 1024)

/* How a record becomes an event. */
enum dec {
	DEC_PREAD, DEC_PWRITE,		/* fd, count, pos */
	DEC_VEC_READ, DEC_VEC_WRITE,	/* fd, pos_l: waits for its exit */
	DEC_VEC_EXIT,			/* ret */
	DEC_FSYNC, DEC_FDATASYNC,	/* fd */
	DEC_BIND,			/* an exit whose ret is a new descriptor */
	DEC_CLOSE,			/* fd */
	DEC_NEWTASK,			/* pid, clone_flags */
	DEC_EXIT, DEC_EXEC,
	DEC_MMAP,			/* fd, len, flags */
	DEC_URING,			/* to_submit */
	DEC_AIO,			/* nr */
	DEC_PGADD,			/* i_ino, s_dev, order */
	DEC_FAULT,			/* i_ino, s_dev */
};

static const struct tp {
	const char *sys, *name;
	enum dec dec;
	bool optional;			/* a kernel without it loses only that call */
	const char *f[3];		/* its fields, in the decoder's order */
} tps[] = {
	{ "syscalls", "sys_enter_pread64", DEC_PREAD, false, { "fd", "count", "pos" } },
	{ "syscalls", "sys_enter_pwrite64", DEC_PWRITE, false, { "fd", "count", "pos" } },
	{ "syscalls", "sys_enter_preadv", DEC_VEC_READ, false, { "fd", "pos_l" } },
	{ "syscalls", "sys_exit_preadv", DEC_VEC_EXIT, false, { "ret" } },
	{ "syscalls", "sys_enter_preadv2", DEC_VEC_READ, false, { "fd", "pos_l" } },
	{ "syscalls", "sys_exit_preadv2", DEC_VEC_EXIT, false, { "ret" } },
	{ "syscalls", "sys_enter_pwritev", DEC_VEC_WRITE, false, { "fd", "pos_l" } },
	{ "syscalls", "sys_exit_pwritev", DEC_VEC_EXIT, false, { "ret" } },
	{ "syscalls", "sys_enter_pwritev2", DEC_VEC_WRITE, false, { "fd", "pos_l" } },
	{ "syscalls", "sys_exit_pwritev2", DEC_VEC_EXIT, false, { "ret" } },
	{ "syscalls", "sys_enter_fsync", DEC_FSYNC, false, { "fd" } },
	{ "syscalls", "sys_enter_fdatasync", DEC_FDATASYNC, false, { "fd" } },
	{ "syscalls", "sys_exit_openat", DEC_BIND, false, { "ret" } },
	{ "syscalls", "sys_exit_open", DEC_BIND, true, { "ret" } },
	{ "syscalls", "sys_exit_openat2", DEC_BIND, true, { "ret" } },
	{ "syscalls", "sys_exit_creat", DEC_BIND, true, { "ret" } },
	{ "syscalls", "sys_exit_dup", DEC_BIND, true, { "ret" } },
	{ "syscalls", "sys_exit_dup2", DEC_BIND, true, { "ret" } },
	{ "syscalls", "sys_exit_dup3", DEC_BIND, true, { "ret" } },
	{ "syscalls", "sys_enter_close", DEC_CLOSE, false, { "fd" } },
	{ "task", "task_newtask", DEC_NEWTASK, false, { "pid", "clone_flags" } },
	{ "sched", "sched_process_exit", DEC_EXIT, false, { 0 } },
	{ "sched", "sched_process_exec", DEC_EXEC, false, { 0 } },
	{ "syscalls", "sys_enter_mmap", DEC_MMAP, true, { "fd", "len", "flags" } },
	{ "syscalls", "sys_enter_io_uring_enter", DEC_URING, true, { "to_submit" } },
	{ "syscalls", "sys_enter_io_submit", DEC_AIO, true, { "nr" } },
	{ "filemap", "mm_filemap_add_to_page_cache", DEC_PGADD, true, { "i_ino", "s_dev", "order" } },
	{ "filemap", "mm_filemap_fault", DEC_FAULT, true, { "i_ino", "s_dev" } },
};
#define NTPS (sizeof(tps) / sizeof(tps[0]))

struct vec_pending {
	int tid;
	int fd;
	uint64_t pos;
	uint8_t kind;
};

struct captrace {
	struct tracefs_instance *inst;
	struct tep_handle *tep;
	struct tep_event *ev[NTPS];	/* NULL: an optional one this kernel lacks */
	struct tep_format_field *fld[NTPS][3];
	int ncpus;
	/* Vectored calls between their entry and their exit. */
	struct vec_pending *vec;
	unsigned nvec, capvec;
	uint64_t unpositioned;
	/* The batch being read. */
	struct cap_event **out;
	size_t *n, *cap;
	uint32_t *seq;
	int err;
};

uint64_t captrace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The ring buffer's page header and every event's format, as this
 * kernel gives them. */
static int load_events(struct captrace *t, const char *dir, struct err *e)
{
	char events[PATH_MAX];
	int ret;

	snprintf(events, sizeof(events), "%s/events", dir);
	ret = tracefmt_tep(events, &t->tep, e);
	if (ret)
		return ret;
	for (unsigned i = 0; i < NTPS; i++) {
		int ret = tracefmt_load(t->tep, events, tps[i].sys, tps[i].name, &t->ev[i]);

		if (ret && tps[i].optional) {
			t->ev[i] = NULL;
			continue;
		}
		if (ret)
			return err_set(e, ret == -ENOENT ? ENOENT : -ret,
				       "this kernel has no tracepoint %s:%s (%s/%s/%s): %s", tps[i].sys,
				       tps[i].name, events, tps[i].sys, tps[i].name, strerror(-ret));
		for (unsigned f = 0; f < 3 && tps[i].f[f]; f++) {
			t->fld[i][f] = tep_find_field(t->ev[i], tps[i].f[f]);
			if (!t->fld[i][f])
				return err_set(e, ENOENT, "this kernel's %s:%s has no field %s", tps[i].sys,
					       tps[i].name, tps[i].f[f]);
		}
	}
	return 0;
}

static int make_instance(struct captrace *t, struct err *e)
{
	long kb = BUFFER_KB_PER_CPU;
	char name[64];

	tracefmt_remove_stale("faultline-capture-");
	snprintf(name, sizeof(name), "faultline-capture-%d", (int)getpid());
	t->inst = tracefs_instance_create(name);
	if (!t->inst)
		return err_set(e, errno ? errno : EIO, "creating the tracefs instance %s failed", name);
	if (t->ncpus > 0 && kb * t->ncpus > BUFFER_KB_ALL)
		kb = BUFFER_KB_ALL / t->ncpus;
	if (kb < 1024)
		kb = 1024;
	if (tracefs_trace_off(t->inst) < 0 || tracefs_instance_file_write(t->inst, "trace_clock", "mono") < 0 ||
	    tracefs_instance_set_buffer_size(t->inst, (size_t)kb, -1) < 0 ||
	    tracefs_option_disable(t->inst, TRACEFS_OPTION_OVERWRITE) < 0)
		return err_set(e, EIO, "setting up the tracefs instance %s (clock, %ld KiB per CPU, no "
			       "overwrite) failed", name, kb);
	return 0;
}

int captrace_open(struct captrace **out, bool *mounted, struct err *e)
{
	struct captrace *t;
	const char *dir = NULL;
	int ret;

	*out = NULL;
	*mounted = false;
	if (geteuid() != 0)
		return err_set(e, EPERM, "tracing other programs' system calls needs root (tracefs is root's), "
			       "and faultline runs as uid %d", (int)geteuid());
	ret = tracefmt_mount(e);
	if (ret < 0)
		return err_set(e, ENOENT, "no tracefs: %s", e->msg);
	*mounted = ret == 1;
	if (tracefs_tracing_dir_is_mounted(false, &dir) <= 0 || !dir) {
		if (*mounted)
			tracefmt_umount();
		*mounted = false;
		return err_set(e, ENOENT, "no tracefs: it is not mounted, and mounting it at /sys/kernel/tracing "
			       "did not make it appear");
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(e, ENOMEM, "out of memory");
	t->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	ret = load_events(t, dir, e);
	if (!ret)
		ret = make_instance(t, e);
	if (ret) {
		captrace_close(t, *mounted);
		*mounted = false;
		return ret;
	}
	*out = t;
	return 0;
}

int captrace_follow(struct captrace *t, const int *tids, unsigned n, struct err *e)
{
	char buf[16];

	if (tracefs_option_enable(t->inst, TRACEFS_OPTION_EVENT_FORK) < 0)
		return err_set(e, EIO, "the tracefs option event-fork cannot be set");
	for (unsigned i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%d", tids[i]);
		/* Appending: writing replaces the list. */
		if (tracefs_instance_file_append(t->inst, "set_event_pid", buf) < 0 && kill(tids[i], 0) == 0)
			return err_set(e, EIO, "adding task %d to set_event_pid failed", tids[i]);
	}
	return 0;
}

int captrace_comm(struct captrace *t, const char *comm, struct err *e)
{
	char filter[64];

	if (strchr(comm, '"') || strchr(comm, '\\') || strlen(comm) > 15)
		return err_set(e, EINVAL, "--comm=%s: a task name is at most 15 characters, without quotes or "
			       "backslashes", comm);
	snprintf(filter, sizeof(filter), "comm == \"%s\"", comm);
	for (unsigned i = 0; i < NTPS; i++)
		if (t->ev[i] && tracefs_event_file_write(t->inst, tps[i].sys, tps[i].name, "filter", filter) < 0)
			return err_set(e, EINVAL, "the kernel refused the filter '%s' on %s:%s", filter,
				       tps[i].sys, tps[i].name);
	return 0;
}

int captrace_start(struct captrace *t, struct err *e)
{
	/* The event's own enable file, written directly (as wbtrace.c:
	 * tracefs_event_enable matches names as regular expressions). */
	for (unsigned i = 0; i < NTPS; i++) {
		char file[128];

		if (!t->ev[i])
			continue;
		snprintf(file, sizeof(file), "events/%s/%s/enable", tps[i].sys, tps[i].name);
		if (tracefs_instance_file_write(t->inst, file, "1") < 0)
			return err_set(e, errno ? errno : EIO, "enabling %s:%s failed", tps[i].sys, tps[i].name);
	}
	if (tracefs_trace_on(t->inst) < 0)
		return err_set(e, EIO, "tracing_on in the instance failed");
	return 0;
}

void captrace_stop(struct captrace *t)
{
	tracefs_trace_off(t->inst);
}

/* ---- reading -------------------------------------------------------- */

static uint64_t field(const struct captrace *t, unsigned i, unsigned f, const struct tep_record *rec)
{
	unsigned long long v = 0;
	struct tep_format_field *fl = t->fld[i][f];

	if (!fl || (int)(fl->offset + fl->size) > rec->size ||
	    tep_read_number_field(fl, rec->data, &v) < 0)
		return 0;
	return v;
}

static int push(struct captrace *t, const struct cap_event *ev)
{
	return cap_event_push(t->out, t->n, t->cap, t->seq, ev);
}

static int vec_enter(struct captrace *t, int tid, int fd, uint64_t pos, uint8_t kind)
{
	unsigned i;

	for (i = 0; i < t->nvec && t->vec[i].tid != tid; i++)
		;
	if (i == t->nvec) {
		if (t->nvec == t->capvec) {
			unsigned cap = t->capvec ? t->capvec * 2 : 16;
			struct vec_pending *p = realloc(t->vec, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			t->vec = p;
			t->capvec = cap;
		}
		t->nvec++;
	}
	t->vec[i] = (struct vec_pending){ .tid = tid, .fd = fd, .pos = pos, .kind = kind };
	return 0;
}

/* A vectored call's exit: its request, with the bytes it moved. */
static int vec_exit(struct captrace *t, struct cap_event *ev, int64_t ret)
{
	for (unsigned i = 0; i < t->nvec; i++) {
		if (t->vec[i].tid != ev->tid)
			continue;
		ev->kind = t->vec[i].kind;
		ev->fd = t->vec[i].fd;
		ev->off = t->vec[i].pos;
		ev->len = ret > 0 ? (uint64_t)ret : 0;
		t->vec[i] = t->vec[--t->nvec];
		return ret > 0;
	}
	return 0;
}

/* @ev from record @rec of tracepoint @i: 1 to keep it, 0 to drop it. */
static int decode(struct captrace *t, unsigned i, const struct tep_record *rec, struct cap_event *ev)
{
	switch (tps[i].dec) {
	case DEC_PREAD:
	case DEC_PWRITE:
		ev->kind = tps[i].dec == DEC_PREAD ? CAP_READ : CAP_WRITE;
		ev->fd = (int32_t)field(t, i, 0, rec);
		ev->len = field(t, i, 1, rec);
		ev->off = field(t, i, 2, rec);
		return ev->len > 0 && (int64_t)ev->off >= 0;
	case DEC_VEC_READ:
	case DEC_VEC_WRITE: {
		uint64_t pos = field(t, i, 1, rec);

		if ((int64_t)pos < 0) {
			t->unpositioned++;
			return 0;
		}
		if (vec_enter(t, ev->tid, (int32_t)field(t, i, 0, rec), pos,
			      tps[i].dec == DEC_VEC_READ ? CAP_READ : CAP_WRITE) < 0)
			t->err = -ENOMEM;
		return 0;
	}
	case DEC_VEC_EXIT:
		return vec_exit(t, ev, (int64_t)field(t, i, 0, rec));
	case DEC_FSYNC:
	case DEC_FDATASYNC:
		ev->kind = tps[i].dec == DEC_FSYNC ? CAP_SYNC : CAP_DATASYNC;
		ev->fd = (int32_t)field(t, i, 0, rec);
		return 1;
	case DEC_BIND:
		ev->kind = CAP_OPEN;
		ev->fd = (int32_t)field(t, i, 0, rec);
		return ev->fd >= 0;
	case DEC_CLOSE:
		ev->kind = CAP_CLOSE;
		ev->fd = (int32_t)field(t, i, 0, rec);
		return 1;
	case DEC_NEWTASK:
		ev->kind = CAP_NEWTASK;
		ev->fd = (int32_t)field(t, i, 0, rec);
		ev->len = field(t, i, 1, rec);
		return 1;
	case DEC_EXIT:
		ev->kind = CAP_EXIT;
		return 1;
	case DEC_EXEC:
		ev->kind = CAP_EXEC;
		return 1;
	case DEC_MMAP:
		ev->kind = CAP_MMAP;
		ev->fd = (int32_t)field(t, i, 0, rec);
		ev->len = field(t, i, 1, rec);
		ev->off = field(t, i, 2, rec);
		/* MAP_ANONYMOUS: no file behind it. */
		return ev->fd >= 0 && !(ev->off & MAP_ANONYMOUS);
	case DEC_URING:
	case DEC_AIO:
		ev->kind = tps[i].dec == DEC_URING ? CAP_URING : CAP_AIO;
		ev->len = field(t, i, 0, rec);
		return 1;
	case DEC_PGADD:
		ev->kind = CAP_PGADD;
		ev->off = field(t, i, 0, rec);
		ev->fd = (int32_t)field(t, i, 1, rec);
		ev->len = 1ull << (field(t, i, 2, rec) & 31);
		return 1;
	case DEC_FAULT:
		ev->kind = CAP_FAULT;
		ev->off = field(t, i, 0, rec);
		ev->fd = (int32_t)field(t, i, 1, rec);
		ev->len = 1;
		return 1;
	}
	return 0;
}

static int record_cb(struct tep_event *event, struct tep_record *rec, int cpu, void *arg)
{
	struct captrace *t = arg;
	struct cap_event ev = { 0 };

	(void)cpu;
	for (unsigned i = 0; i < NTPS; i++) {
		if (t->ev[i] != event && !(t->ev[i] && event && t->ev[i]->id == event->id))
			continue;
		ev.ts = rec->ts;
		ev.tid = tep_data_pid(t->tep, rec);
		if (decode(t, i, rec, &ev) == 1 && push(t, &ev) < 0)
			t->err = -ENOMEM;
		break;
	}
	return t->err ? 1 : 0;
}

int captrace_read(struct captrace *t, struct cap_event **ev, size_t *n, size_t *cap, uint32_t *seq)
{
	t->out = ev;
	t->n = n;
	t->cap = cap;
	t->seq = seq;
	t->err = 0;
	if (tracefs_iterate_raw_events(t->tep, t->inst, NULL, 0, record_cb, t) < 0 && !t->err)
		return -EIO;
	return t->err;
}

uint64_t captrace_lost(struct captrace *t)
{
	return tracefmt_lost(t->inst, t->ncpus);
}

uint64_t captrace_unpositioned(const struct captrace *t)
{
	return t->unpositioned;
}

void captrace_close(struct captrace *t, bool mounted)
{
	if (t) {
		if (t->inst) {
			tracefs_trace_off(t->inst);
			tracefs_instance_destroy(t->inst);
			tracefs_instance_free(t->inst);
		}
		if (t->tep)
			tep_free(t->tep);
		free(t->vec);
		free(t);
	}
	if (mounted)
		tracefmt_umount();
}
