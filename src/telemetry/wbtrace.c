/*
 * wbtrace.c - the job's own writes against the kernel's write-back, from
 * tracepoints; see wbtrace.h.
 *
 * One tracefs instance per run ("faultline-<pid>"), so that nothing of
 * the host's own tracing is touched: its own events, filters, buffer and
 * clock. The sampler reads it every interval (consuming, so the buffer
 * only has to hold one interval) and counts each record for the jobs
 * whose window holds its timestamp.
 */
#include "telemetry/wbtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <tracefs/tracefs.h>

#include "telemetry/tracefmt.h"

/* The names in the kernel's enum wb_reason print table. */
static const char *const reason_label[WBTRACE_NREASONS] = {
	[WBTRACE_BACKGROUND] = "background",
	[WBTRACE_VMSCAN] = "vmscan",
	[WBTRACE_PERIODIC] = "periodic",
	[WBTRACE_SYNC] = "sync",
	[WBTRACE_OTHER] = "other",
};

const char *wbtrace_reason_key(enum wbtrace_reason r)
{
	return r < WBTRACE_NREASONS ? reason_label[r] : "?";
}

static const char *const event_sys[WBTRACE_NKINDS] = { "block", "writeback", "writeback" };
static const char *const event_name[WBTRACE_NKINDS] = {
	"block_bio_queue", "writeback_single_inode", "writeback_start"
};

void wbtrace_counts_sub(struct wbtrace_counts *c, const struct wbtrace_counts *b)
{
	c->own_bytes -= b->own_bytes;
	c->kernel_bytes -= b->kernel_bytes;
	for (int r = 0; r < WBTRACE_NREASONS; r++)
		c->reason_bytes[r] -= b->reason_bytes[r];
	c->dev_bytes -= b->dev_bytes;
	c->aged_bytes -= b->aged_bytes;
	c->age_ms_bytes -= b->age_ms_bytes;
	c->lost -= b->lost;
}

/* ---- decoding ---------------------------------------------------------- */

uint32_t wbtrace_kdev(dev_t d)
{
	/* include/linux/kdev_t.h: MINORBITS 20 */
	return (uint32_t)(major(d) << 20 | (minor(d) & 0xfffff));
}

uint32_t wbtrace_bdi_dev(const char *name)
{
	unsigned ma, mi;
	char tail;

	if (sscanf(name, "%u:%u%c", &ma, &mi, &tail) != 2 || ma >= 4096 || mi > 0xfffff)
		return 0;
	return ma << 20 | mi;
}

static bool arg_has_field(const struct tep_print_arg *a, const char *name)
{
	if (!a)
		return false;
	switch (a->type) {
	case TEP_PRINT_FIELD:
		return !strcmp(a->field.name, name);
	case TEP_PRINT_TYPE:
		return arg_has_field(a->typecast.item, name);
	case TEP_PRINT_OP:
		return arg_has_field(a->op.left, name) || arg_has_field(a->op.right, name);
	default:
		return false;
	}
}

/* The HZ in "(jiffies - REC->dirtied_when) / 250", single_inode's age. */
static unsigned find_hz(const struct tep_print_arg *a)
{
	for (; a; a = a->next) {
		if (a->type == TEP_PRINT_OP && !strcmp(a->op.op, "/") && a->op.right &&
		    a->op.right->type == TEP_PRINT_ATOM && arg_has_field(a->op.left, "dirtied_when")) {
			char *end;
			unsigned long hz = strtoul(a->op.right->atom.atom, &end, 0);

			if (!*end && hz >= 24 && hz <= 100000)
				return (unsigned)hz;
		}
		if (a->type == TEP_PRINT_OP) {
			unsigned hz = find_hz(a->op.left);

			if (!hz)
				hz = find_hz(a->op.right);
			if (hz)
				return hz;
		}
	}
	return 0;
}

int wbtrace_fmt_init(struct wbtrace_fmt *f, struct tep_handle *tep, struct err *e)
{
	struct {
		struct tep_format_field **where;
		enum wbtrace_kind k;
		const char *name;
	} fields[] = {
		{ &f->bio_dev, WBTRACE_BIO, "dev" },
		{ &f->bio_sectors, WBTRACE_BIO, "nr_sector" },
		{ &f->bio_rwbs, WBTRACE_BIO, "rwbs" },
		{ &f->bio_comm, WBTRACE_BIO, "comm" },
		{ &f->ino_name, WBTRACE_INODE, "name" },
		{ &f->ino_ino, WBTRACE_INODE, "ino" },
		{ &f->ino_wrote, WBTRACE_INODE, "wrote" },
		{ &f->ino_dirtied, WBTRACE_INODE, "dirtied_when" },
		{ &f->start_reason, WBTRACE_START, "reason" },
	};

	memset(f, 0, sizeof(*f));
	for (int k = 0; k < WBTRACE_NKINDS; k++) {
		f->ev[k] = tep_find_event_by_name(tep, event_sys[k], event_name[k]);
		if (!f->ev[k])
			return err_set(e, ENOENT, "no tracepoint %s:%s on this kernel", event_sys[k], event_name[k]);
	}
	for (unsigned i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		*fields[i].where = tep_find_field(f->ev[fields[i].k], fields[i].name);
		if (!*fields[i].where)
			return err_set(e, ENOENT, "this kernel's %s:%s has no field %s", event_sys[fields[i].k],
				       event_name[fields[i].k], fields[i].name);
	}
	for (int r = 0; r < WBTRACE_NREASONS; r++)
		if (r == WBTRACE_OTHER ||
		    tracefmt_symbol(f->ev[WBTRACE_START], "reason", reason_label[r], &f->reason_value[r]) < 0)
			f->reason_value[r] = -1;
	f->hz = find_hz(f->ev[WBTRACE_INODE]->print_fmt.args);
	return 0;
}

static int field_u64(const struct tep_format_field *fl, const struct tep_record *rec, uint64_t *v)
{
	unsigned long long x;

	if ((int)(fl->offset + fl->size) > rec->size ||
	    tep_read_number_field((struct tep_format_field *)fl, rec->data, &x) < 0)
		return -EBADMSG;
	*v = x;
	return 0;
}

static int field_str(const struct tep_format_field *fl, const struct tep_record *rec, char *buf, size_t cap)
{
	size_t n = (size_t)fl->size < cap - 1 ? (size_t)fl->size : cap - 1;

	if ((int)(fl->offset + fl->size) > rec->size)
		return -EBADMSG;
	memcpy(buf, (const char *)rec->data + fl->offset, n);
	buf[n] = '\0';
	return 0;
}

int wbtrace_decode(const struct wbtrace_fmt *f, struct tep_handle *tep, struct tep_record *rec,
		   struct wbtrace_rec *out)
{
	int id = tep_data_type(tep, rec);
	uint64_t v;
	char s[32];

	memset(out, 0, sizeof(*out));
	out->ts = rec->ts;
	out->pid = tep_data_pid(tep, rec);
	if (id == f->ev[WBTRACE_BIO]->id) {
		out->kind = WBTRACE_BIO;
		if (field_u64(f->bio_dev, rec, &v) < 0)
			return -EBADMSG;
		out->dev = (uint32_t)v;
		if (field_str(f->bio_rwbs, rec, s, sizeof(s)) < 0 ||
		    field_str(f->bio_comm, rec, out->comm, sizeof(out->comm)) < 0 ||
		    field_u64(f->bio_sectors, rec, &v) < 0)
			return -EBADMSG;
		/* rwbs: 'W' for a write ("W", "WS", "FWS", "WM"...); a
		 * flush alone is "FN", a read "R". */
		out->bytes = strchr(s, 'W') ? v * 512 : 0;
	} else if (id == f->ev[WBTRACE_INODE]->id) {
		out->kind = WBTRACE_INODE;
		if (field_str(f->ino_name, rec, s, sizeof(s)) < 0 || field_u64(f->ino_ino, rec, &out->ino) < 0 ||
		    field_u64(f->ino_wrote, rec, &out->pages) < 0 ||
		    field_u64(f->ino_dirtied, rec, &out->dirtied_when) < 0)
			return -EBADMSG;
		out->bdi = wbtrace_bdi_dev(s);
	} else if (id == f->ev[WBTRACE_START]->id) {
		out->kind = WBTRACE_START;
		if (field_u64(f->start_reason, rec, &v) < 0)
			return -EBADMSG;
		out->reason = WBTRACE_OTHER;
		for (int r = 0; r < WBTRACE_OTHER; r++)
			if (f->reason_value[r] >= 0 && (uint64_t)f->reason_value[r] == (uint32_t)v)
				out->reason = r;
	} else {
		return -ENOENT;
	}
	return 0;
}

/* ---- attribution ------------------------------------------------------- */

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

bool wbtrace_job_add_task(struct wbtrace_job *jb, int tid)
{
	unsigned i;

	if (tid <= 0 || bsearch(&tid, jb->task, jb->ntask, sizeof(int), int_cmp))
		return true;
	if (jb->ntask >= WBTRACE_MAX_TASKS)
		return false;
	for (i = jb->ntask; i > 0 && jb->task[i - 1] > tid; i--)
		jb->task[i] = jb->task[i - 1];
	jb->task[i] = tid;
	jb->ntask++;
	return true;
}

/* A job's task, or an io_uring worker one of them made: io-wq names its
 * threads "iou-wrk-<tid of the ring's task>" (io_uring/io-wq.c), and
 * they are created apart from fork, so no table of ours lists them. */
bool wbtrace_job_has_task(const struct wbtrace_job *jb, int pid, const char *comm)
{
	char *end;
	long owner;

	if (bsearch(&pid, jb->task, jb->ntask, sizeof(int), int_cmp))
		return true;
	if (!comm || strncmp(comm, "iou-wrk-", 8))
		return false;
	owner = strtol(comm + 8, &end, 10);
	if (*end || owner <= 0 || owner > INT_MAX)
		return false;
	{
		int o = (int)owner;

		return bsearch(&o, jb->task, jb->ntask, sizeof(int), int_cmp) != NULL;
	}
}

static bool in_window(const struct wbtrace_job *jb, uint64_t ts)
{
	return jb->traced && jb->from_ns && ts >= jb->from_ns && (!jb->to_ns || ts < jb->to_ns);
}

static int flusher_reason(const struct wbtrace_state *s, int pid)
{
	for (unsigned i = 0; i < s->nflusher; i++)
		if (s->flusher[i].pid == pid)
			return s->flusher[i].reason;
	return WBTRACE_OTHER;
}

static void set_flusher(struct wbtrace_state *s, int pid, int reason)
{
	for (unsigned i = 0; i < s->nflusher; i++)
		if (s->flusher[i].pid == pid) {
			s->flusher[i].reason = reason;
			return;
		}
	/* The oldest worker gives way: kworkers come and go. */
	s->flusher[s->next_flusher].pid = pid;
	s->flusher[s->next_flusher].reason = reason;
	s->next_flusher = (s->next_flusher + 1) % WBTRACE_FLUSHERS;
	if (s->nflusher < WBTRACE_FLUSHERS)
		s->nflusher++;
}

static void feed_inode(struct wbtrace_state *s, const struct wbtrace_rec *r)
{
	for (unsigned j = 0; j < s->njobs; j++) {
		struct wbtrace_job *jb = &s->jobs[j];
		uint64_t bytes = r->pages * s->page_size;
		bool mine = false;

		if (!in_window(jb, r->ts) || wbtrace_job_has_task(jb, r->pid, NULL))
			continue;
		for (unsigned i = 0; i < jb->nino && !mine; i++)
			mine = jb->ino[i].ino == r->ino && jb->ino[i].bdi == r->bdi;
		if (!mine)
			continue;
		jb->c.kernel_bytes += bytes;
		jb->c.reason_bytes[flusher_reason(s, r->pid)] += bytes;
		if (s->clock_ok && s->hz) {
			/* The inode's oldest dirty data: jiffies now (from the
			 * record's time) less when the inode was dirtied. */
			double jn = (double)s->j0 + ((double)r->ts - (double)s->t0) * s->hz / 1e9;
			double age = (jn - (double)r->dirtied_when) * 1000.0 / s->hz;

			if (age < 0)
				age = 0;
			jb->c.aged_bytes += bytes;
			jb->c.age_ms_bytes += age * (double)bytes;
			if ((uint64_t)age > jb->c.age_max_ms)
				jb->c.age_max_ms = (uint64_t)age;
		}
	}
}

void wbtrace_feed(struct wbtrace_state *s, const struct wbtrace_rec *r)
{
	switch (r->kind) {
	case WBTRACE_START:
		set_flusher(s, r->pid, r->reason);
		break;
	case WBTRACE_INODE:
		feed_inode(s, r);
		break;
	case WBTRACE_BIO:
		if (!r->bytes)
			break;
		for (unsigned j = 0; j < s->njobs; j++) {
			struct wbtrace_job *jb = &s->jobs[j];
			bool dev = false;

			if (!in_window(jb, r->ts))
				continue;
			for (unsigned i = 0; i < jb->ndev && !dev; i++)
				dev = jb->dev[i] == r->dev;
			if (!dev)
				continue;
			jb->c.dev_bytes += r->bytes;
			if (wbtrace_job_has_task(jb, r->pid, r->comm))
				jb->c.own_bytes += r->bytes;
		}
		break;
	default:
		break;
	}
}

int wbtrace_parse_timer_list(const char *buf, size_t len, uint64_t *now_ns, uint64_t *jiffies)
{
	const char *p = memmem(buf, len, "now at ", 7), *q = memmem(buf, len, "\njiffies: ", 10);
	unsigned long long a, b;

	if (!p || !q || sscanf(p + 7, "%llu nsecs", &a) != 1 || sscanf(q + 10, "%llu", &b) != 1)
		return -EBADMSG;
	*now_ns = a;
	*jiffies = b;
	return 0;
}

/* ---- the live trace ---------------------------------------------------- */

/* Per CPU: room for a few seconds of 4 KiB write bios at disk speed
 * (a record is about 72 bytes) although it is emptied every interval. */
#define BUFFER_KB_PER_CPU 4096

struct wbtrace {
	struct tracefs_instance *inst;
	struct tep_handle *tep;
	struct wbtrace_fmt fmt;
	struct wbtrace_state st;
	struct wbtrace_rec *batch;
	size_t n, cap;
	int ncpus;
	uint64_t lost_seen;		/* overrun + dropped, summed over CPUs */
	uint64_t polled_ns;		/* when the buffer was last read */
	bool started, broken;
	char age_why[160];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int batch_cb(struct tep_event *ev, struct tep_record *rec, int cpu, void *arg)
{
	struct wbtrace *w = arg;
	struct wbtrace_rec r;

	(void)ev;
	(void)cpu;
	if (wbtrace_decode(&w->fmt, w->tep, rec, &r) < 0)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 4096;
		struct wbtrace_rec *b = realloc(w->batch, cap * sizeof(*b));

		if (!b) {
			w->broken = true;
			return 1;
		}
		w->batch = b;
		w->cap = cap;
	}
	w->batch[w->n++] = r;
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct wbtrace_rec *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* /proc/timer_list lists every CPU's timers before its "jiffies:"
 * line: tens of KiB on a busy host with many CPUs. */
#define TIMER_LIST_MAX (1 << 20)

static void read_clock(struct wbtrace *w)
{
	size_t len = 0, cap = 65536;
	char *buf = NULL;
	ssize_t n = 0;
	int fd;

	if (!w->fmt.hz) {
		snprintf(w->age_why, sizeof(w->age_why),
			 "this kernel's writeback_single_inode gives no HZ in its age");
		return;
	}
	fd = open("/proc/timer_list", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(w->age_why, sizeof(w->age_why), "/proc/timer_list (jiffies now): %s", strerror(errno));
		return;
	}
	/* Read until the first "jiffies:" is in: it and "now at" are
	 * taken within a few microseconds of each other. */
	while (cap <= TIMER_LIST_MAX) {
		char *b = realloc(buf, cap);

		if (!b)
			break;
		buf = b;
		while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
			len += (size_t)n;
		if (len < cap || memmem(buf, len, "\njiffies: ", 10))
			break;
		cap *= 2;
	}
	close(fd);
	if (!buf || wbtrace_parse_timer_list(buf, len, &w->st.t0, &w->st.j0) < 0)
		snprintf(w->age_why, sizeof(w->age_why), "/proc/timer_list has no jiffies");
	else {
		w->st.hz = w->fmt.hz;
		w->st.clock_ok = true;
	}
	free(buf);
}

/*
 * The three events' formats and the ring buffer's page header, as this
 * kernel gives them: what reading the raw buffer needs. Not
 * tracefs_local_events_system, which also loads /proc/kallsyms (several
 * MiB, read in 4 KiB reallocs) and every event of both systems: 0.2 s
 * of every write job's start, 3 s under AddressSanitizer.
 */
static int wb_events(const char *dir, struct tep_handle **out, struct err *e)
{
	struct tep_handle *tep;
	char events[PATH_MAX];
	int ret;

	*out = NULL;
	snprintf(events, sizeof(events), "%s/events", dir);
	ret = tracefmt_tep(events, &tep, e);
	if (ret)
		return ret;
	for (int k = 0; k < WBTRACE_NKINDS; k++) {
		struct tep_event *ev;

		ret = tracefmt_load(tep, events, event_sys[k], event_name[k], &ev);
		if (ret) {
			ret = err_set(e, -ret, "reading the tracepoint %s:%s's format in %s failed",
				      event_sys[k], event_name[k], events);
			goto out;
		}
	}
out:
	if (ret)
		tep_free(tep);
	else
		*out = tep;
	return ret;
}

int wbtrace_create(struct wbtrace **wp, unsigned njobs, struct err *e)
{
	const char *dir = NULL;
	struct wbtrace *w;
	char name[64];
	int ret;

	*wp = NULL;
	if (geteuid() != 0)
		return err_set(e, EPERM, "tracefs is root's, and faultline runs as uid %d", (int)geteuid());
	ret = tracefs_tracing_dir_is_mounted(false, &dir);
	if (ret <= 0)
		return err_set(e, ENOENT, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing, "
			       "or run faultline --mount-tracefs)");
	w = calloc(1, sizeof(*w));
	if (!w)
		return err_set(e, ENOMEM, "out of memory");
	w->st.njobs = njobs;
	w->st.jobs = calloc(njobs ? njobs : 1, sizeof(*w->st.jobs));
	w->st.page_size = (unsigned)sysconf(_SC_PAGESIZE);
	w->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (!w->st.jobs) {
		free(w);
		return err_set(e, ENOMEM, "out of memory");
	}
	ret = wb_events(dir, &w->tep, e);
	if (ret)
		goto out_free;
	ret = wbtrace_fmt_init(&w->fmt, w->tep, e);
	if (ret)
		goto out_free;
	tracefmt_remove_stale("faultline-");
	snprintf(name, sizeof(name), "faultline-%d", (int)getpid());
	w->inst = tracefs_instance_create(name);
	if (!w->inst) {
		ret = err_set(e, errno ? errno : EIO, "creating the tracefs instance %s failed", name);
		goto out_free;
	}
	if (tracefs_instance_file_write(w->inst, "trace_clock", "mono") < 0 ||
	    tracefs_instance_set_buffer_size(w->inst, BUFFER_KB_PER_CPU, -1) < 0) {
		ret = err_set(e, EIO, "setting up the tracefs instance %s failed", name);
		goto out_destroy;
	}
	read_clock(w);
	*wp = w;
	return 0;

out_destroy:
	tracefs_instance_destroy(w->inst);
	tracefs_instance_free(w->inst);
out_free:
	if (w->tep)
		tep_free(w->tep);
	free(w->st.jobs);
	free(w);
	return ret;
}

/* The bdi of a device: its disk's (a partition's parent's) "major:minor". */
static uint32_t bdi_of(dev_t dev)
{
	char path[PATH_MAX], real[PATH_MAX], buf[32];
	unsigned ma, mi;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	if (!realpath(path, real))
		return wbtrace_kdev(dev);
	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK) != 0)
		return wbtrace_kdev(dev);
	snprintf(path, sizeof(path), "%s/../dev", real);
	f = fopen(path, "r");
	if (!f)
		return wbtrace_kdev(dev);
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%u:%u", &ma, &mi) != 2) {
		fclose(f);
		return wbtrace_kdev(dev);
	}
	fclose(f);
	return ma << 20 | mi;
}

int wbtrace_job_target(struct wbtrace *w, unsigned j, dev_t dev, ino_t ino, bool blkdev, struct err *e)
{
	struct wbtrace_job *jb;
	uint32_t kd = wbtrace_kdev(dev);
	bool have = false;

	if (j >= w->st.njobs)
		return err_set(e, EINVAL, "no job %u", j);
	jb = &w->st.jobs[j];
	if (blkdev)
		return err_set(e, EOPNOTSUPP, "a block device's page cache belongs to an inode of the kernel's "
			       "own, which user space cannot name: write-back to it cannot be told apart");
	for (unsigned i = 0; i < jb->ndev; i++)
		have |= jb->dev[i] == kd;
	if (!have) {
		if (jb->ndev >= WBTRACE_MAX_DEVS)
			return err_set(e, ENOSPC, "more than %d target devices", WBTRACE_MAX_DEVS);
		jb->dev[jb->ndev++] = kd;
	}
	if (jb->nino >= WBTRACE_MAX_INODES)
		return err_set(e, ENOSPC, "more than %d target files", WBTRACE_MAX_INODES);
	jb->ino[jb->nino].bdi = bdi_of(dev);
	jb->ino[jb->nino++].ino = (uint64_t)ino;
	jb->traced = true;
	return 0;
}

/* "(dev == 7340032 || dev == ...) && rwbs ~ \"*W*\"" */
static int set_filters(struct wbtrace *w, struct err *e)
{
	char bio[1024], ino[1024];
	size_t nb = 0, ni = 0;
	uint32_t devs[64];
	unsigned nd = 0;

	for (unsigned j = 0; j < w->st.njobs; j++) {
		const struct wbtrace_job *jb = &w->st.jobs[j];

		for (unsigned i = 0; i < jb->ndev; i++) {
			bool have = false;

			for (unsigned k = 0; k < nd; k++)
				have |= devs[k] == jb->dev[i];
			if (!have && nd < sizeof(devs) / sizeof(devs[0])) {
				devs[nd++] = jb->dev[i];
				nb += (size_t)snprintf(bio + nb, sizeof(bio) - nb, "%sdev == %u", nd > 1 ? " || " : "(",
						       jb->dev[i]);
			}
		}
		for (unsigned i = 0; i < jb->nino; i++)
			ni += (size_t)snprintf(ino + ni, sizeof(ino) - ni, "%sino == %llu", ni ? " || " : "(",
					       (unsigned long long)jb->ino[i].ino);
	}
	if (!nd)
		return err_set(e, ENOENT, "no job has a file to follow");
	if (nb + 32 >= sizeof(bio) || ni + 32 >= sizeof(ino))
		return err_set(e, E2BIG, "too many targets for one tracepoint filter");
	snprintf(bio + nb, sizeof(bio) - nb, ") && rwbs ~ \"*W*\"");
	snprintf(ino + ni, sizeof(ino) - ni, ") && wrote > 0");
	if (tracefs_event_file_write(w->inst, "block", "block_bio_queue", "filter", bio) < 0)
		return err_set(e, EINVAL, "the kernel refused the filter '%s' on block_bio_queue", bio);
	if (tracefs_event_file_write(w->inst, "writeback", "writeback_single_inode", "filter", ino) < 0)
		return err_set(e, EINVAL, "the kernel refused the filter '%s' on writeback_single_inode", ino);
	return 0;
}

int wbtrace_start(struct wbtrace *w, struct err *e)
{
	int ret = set_filters(w, e);

	if (ret)
		return ret;
	/* The event's own enable file, written directly: tracefs_event_enable
	 * matches names as regular expressions, and libtracefs 1.6 leaks the
	 * compiled ones (LeakSanitizer saw it on every write job). */
	for (int k = 0; k < WBTRACE_NKINDS; k++) {
		char file[128];

		snprintf(file, sizeof(file), "events/%s/%s/enable", event_sys[k], event_name[k]);
		if (tracefs_instance_file_write(w->inst, file, "1") < 0)
			return err_set(e, errno ? errno : EIO, "enabling %s:%s failed", event_sys[k], event_name[k]);
	}
	if (tracefs_trace_on(w->inst) < 0)
		return err_set(e, EIO, "tracing_on in the instance failed");
	w->lost_seen = tracefmt_lost(w->inst, w->ncpus);
	w->polled_ns = mono_ns();
	w->started = true;
	return 0;
}

void wbtrace_job_window(struct wbtrace *w, unsigned j, uint64_t from, uint64_t to)
{
	if (j < w->st.njobs) {
		w->st.jobs[j].from_ns = from;
		w->st.jobs[j].to_ns = to;
	}
}

void wbtrace_job_task(struct wbtrace *w, unsigned j, int tid)
{
	if (j < w->st.njobs && !wbtrace_job_add_task(&w->st.jobs[j], tid))
		w->st.jobs[j].c.lost++;	/* a task we cannot follow: its writes would be miscounted */
}

int wbtrace_poll(struct wbtrace *w)
{
	uint64_t lost, now = mono_ns();

	if (!w->started)
		return -EINVAL;
	w->n = 0;
	if (tracefs_iterate_raw_events(w->tep, w->inst, NULL, 0, batch_cb, w) < 0 || w->broken)
		return -EIO;
	/* Per CPU the records come in order; across CPUs they do not, and
	 * a flusher's start must come before the inodes it writes. */
	qsort(w->batch, w->n, sizeof(*w->batch), rec_cmp);
	for (size_t i = 0; i < w->n; i++)
		wbtrace_feed(&w->st, &w->batch[i]);
	lost = tracefmt_lost(w->inst, w->ncpus);
	if (lost > w->lost_seen) {
		/* Lost somewhere in this interval: every job that was open
		 * then has figures it cannot trust. */
		for (unsigned j = 0; j < w->st.njobs; j++) {
			struct wbtrace_job *jb = &w->st.jobs[j];

			if (jb->traced && jb->from_ns && jb->from_ns < now &&
			    (!jb->to_ns || jb->to_ns > w->polled_ns))
				jb->c.lost += lost - w->lost_seen;
		}
		w->lost_seen = lost;
	}
	w->polled_ns = now;
	return 0;
}

void wbtrace_job_counts(const struct wbtrace *w, unsigned j, struct wbtrace_counts *out)
{
	if (j < w->st.njobs)
		*out = w->st.jobs[j].c;
	else
		memset(out, 0, sizeof(*out));
}

const char *wbtrace_age_why(const struct wbtrace *w)
{
	return w->age_why;
}

void wbtrace_destroy(struct wbtrace *w)
{
	if (!w)
		return;
	if (w->inst) {
		tracefs_instance_destroy(w->inst);
		tracefs_instance_free(w->inst);
	}
	if (w->tep)
		tep_free(w->tep);
	free(w->batch);
	free(w->st.jobs);
	free(w);
}
