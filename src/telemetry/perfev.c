/*
 * perfev.c - per-job kernel counters through perf_event_open; see
 * perfev.h.
 *
 * A plan is made once per run: which events this host offers, with the
 * numbers (tracepoint ids, reason values) read from tracefs rather than
 * assumed, and for each counter that cannot be had, why. Each job then
 * opens the plan on its leader task and reads it every interval: two
 * read(2) calls, one per group, whatever the number of events.
 */
#include "telemetry/perfev.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <traceevent/event-parse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "telemetry/procfs.h"
#include "telemetry/tracefmt.h"

static const struct {
	const char *key, *label, *source;
} counters[PERFEV_NR] = {
	[PERFEV_FAULTS] = { "faults", "page faults", "software event" },
	[PERFEV_MAJFLT] = { "major_faults", "major faults", "software event" },
	[PERFEV_CSW] = { "context_switches", "context switches", "software event" },
	[PERFEV_MIGRATIONS] = { "cpu_migrations", "CPU migrations", "software event" },
	[PERFEV_TLB_IPI] = { "tlb_ipi", "TLB shootdown IPIs sent", "tlb:tlb_flush" },
	[PERFEV_TLB_LOCAL] = { "tlb_local", "local TLB flushes", "tlb:tlb_flush" },
	[PERFEV_TLB_REMOTE] = { "tlb_remote", "TLB shootdowns received", "tlb:tlb_flush" },
	[PERFEV_TLB_WRONG_CPU] = { "tlb_remote_wrong_cpu", "shootdowns received for another address space",
				   "tlb:tlb_flush" },
	[PERFEV_PGCACHE_ADD] = { "pgcache_add_pages", "pages added to the page cache",
				 "filemap:mm_filemap_add_to_page_cache" },
	[PERFEV_DIRECT_RECLAIM] = { "direct_reclaim", "direct reclaim entries",
				    "vmscan:mm_vmscan_direct_reclaim_begin" },
	[PERFEV_MEMCG_RECLAIM] = { "memcg_reclaim", "memory cgroup reclaim entries",
				   "vmscan:mm_vmscan_memcg_reclaim_begin" },
	[PERFEV_DTLB_MISS] = { "dtlb_load_misses", "dTLB-load-misses", "PMU" },
	[PERFEV_CYCLES] = { "cycles", "cycles", "PMU" },
};

const char *perfev_key(enum perfev_counter c)
{
	return c < PERFEV_NR ? counters[c].key : "?";
}

const char *perfev_label(enum perfev_counter c)
{
	return c < PERFEV_NR ? counters[c].label : "?";
}

const char *perfev_source(enum perfev_counter c)
{
	return c < PERFEV_NR ? counters[c].source : "?";
}

/* ---- the plan -------------------------------------------------------- */

/*
 * The tlb:tlb_flush counters and the reasons of enum tlb_flush_reason
 * each sums, as the tracepoint prints them (include/trace/events/tlb.h,
 * arch/x86/mm/tlb.c): the initiator traces "remote IPI send" when it
 * interrupts other CPUs, and "local shootdown" or "local MM shootdown"
 * for its own flush; a CPU interrupted traces "remote shootdown" when
 * it flushes, or since 6.x "remote wrong CPU" when the address space is
 * no longer loaded there (it only leaves the mm's cpumask). Kernels
 * from before that reason print "local mm shootdown" and "remote ipi
 * send", hence a match without case.
 */
static const struct {
	enum perfev_counter c;
	const char *reason[2];
} tlb_reasons[] = {
	{ PERFEV_TLB_IPI, { "remote IPI send", NULL } },
	{ PERFEV_TLB_LOCAL, { "local shootdown", "local MM shootdown" } },
	{ PERFEV_TLB_REMOTE, { "remote shootdown", NULL } },
	{ PERFEV_TLB_WRONG_CPU, { "remote wrong CPU", NULL } },
};

/* MAX_PAGECACHE_ORDER (include/linux/pagemap.h) is the PMD order with
 * THP, else 8, and never above MAX_XAS_ORDER, 11. */
#define ORDER_NO_THP 8
#define ORDER_CAP 11

struct tp {
	const char *sys, *name;
	int err;			/* reading it: 0, or -errno */
	struct tep_event *ev;		/* its format, parsed (libtraceevent) */
};

static void set_why(struct perfev_plan *p, enum perfev_counter c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_why(struct perfev_plan *p, enum perfev_counter c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why[c], sizeof(p->why[c]), fmt, ap);
	va_end(ap);
}

static void unavailable(struct perfev_plan *p, enum perfev_counter c, const char *why)
{
	p->avail[c] = false;
	snprintf(p->why[c], sizeof(p->why[c]), "%s", why);
}

static struct perfev_event *add_event(struct perfev_plan *p, enum perfev_counter c,
				      uint32_t type, uint64_t config, bool exclude_kernel)
{
	struct perfev_event *ev;

	if (p->nev >= PERFEV_MAX_EVENTS)
		return NULL;
	ev = &p->ev[p->nev++];
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->config = config;
	ev->exclude_kernel = exclude_kernel;
	ev->counter = (uint8_t)c;
	ev->group = c == PERFEV_DTLB_MISS || c == PERFEV_CYCLES ? PERFEV_GROUP_PMU : PERFEV_GROUP_SW;
	return ev;
}

static void read_tp(struct tp *t, struct tep_handle *tep, const char *events)
{
	t->err = tep ? tracefmt_load(tep, events, t->sys, t->name, &t->ev) : -ENOMEM;
}

static unsigned max_folio_order(const char *sys)
{
	char buf[32];
	unsigned long long pmd;
	long page = sysconf(_SC_PAGESIZE);
	unsigned order = 0;

	if (procfs_read_small(sys, "kernel/mm/transparent_hugepage/hpage_pmd_size", buf, sizeof(buf)) ||
	    sscanf(buf, "%llu", &pmd) != 1 || page <= 0 || pmd < (unsigned long long)page)
		return ORDER_NO_THP;
	while (((unsigned long long)page << (order + 1)) <= pmd)
		order++;
	return order > ORDER_CAP ? ORDER_CAP : order;
}

/* The event sources the kernel registered, and whether a CPU PMU is
 * among them: "cpu" on x86, Power and RISC-V ("cpu_core"/"cpu_atom" on
 * hybrid x86), armv8_* on arm64, cpum_* on s390. */
static bool is_cpu_pmu(const char *name)
{
	return !strcmp(name, "cpu") || !strncmp(name, "cpu_", 4) || !strncmp(name, "armv", 4) ||
	       !strncmp(name, "cpum_", 5);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_pmus(struct perfev_plan *p, const char *sys)
{
	char path[PATH_MAX], *names[64];
	unsigned n = 0;
	size_t len = 0;
	struct dirent *de;
	DIR *d;

	p->pmus[0] = '\0';
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", sys);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) && n < sizeof(names) / sizeof(names[0]))
		if (de->d_name[0] != '.' && (names[n] = strdup(de->d_name)))
			n++;
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	for (unsigned i = 0; i < n; i++) {
		if (len < sizeof(p->pmus))
			len += (size_t)snprintf(p->pmus + len, sizeof(p->pmus) - len, "%s%s",
						len ? ", " : "", names[i]);
		p->has_pmu |= is_cpu_pmu(names[i]);
		free(names[i]);
	}
}

static const char *paranoid_text(const struct perfev_plan *p, char *buf, size_t cap)
{
	if (p->paranoid == INT_MIN)
		snprintf(buf, cap, "perf_event_paranoid could not be read");
	else
		snprintf(buf, cap, "perf_event_paranoid is %d", p->paranoid);
	return buf;
}

/* Why a kernel-side event cannot be counted without privilege. */
static void why_kernel(struct perfev_plan *p, enum perfev_counter c, const char *what)
{
	char pt[64];

	set_why(p, c, "%s and faultline runs without root or CAP_PERFMON: only user-space events "
		"may be counted, and %s in the kernel", paranoid_text(p, pt, sizeof(pt)), what);
	p->avail[c] = false;
}

static void plan_tracepoint(struct perfev_plan *p, enum perfev_counter c, struct tp *t)
{
	if (p->tracefs != PERFEV_TRACEFS_OK)
		return;		/* said once for all, below */
	if (t->err == -ENOENT) {
		set_why(p, c, "no tracepoint %s:%s on this kernel (%s/%s/%s)", t->sys, t->name,
			p->tracefs_dir, t->sys, t->name);
		p->avail[c] = false;
	} else if (t->err == -EBADMSG) {
		set_why(p, c, "libtraceevent cannot parse %s/%s/%s/format", p->tracefs_dir, t->sys, t->name);
		p->avail[c] = false;
	} else if (t->err) {
		set_why(p, c, "%s/%s/%s: %s", p->tracefs_dir, t->sys, t->name, strerror(-t->err));
		p->avail[c] = false;
	} else if (!p->privileged) {
		why_kernel(p, c, "a tracepoint fires");
	}
}

static void tracefs_why(struct perfev_plan *p, enum perfev_counter c)
{
	char pt[64], also[160] = "";

	if (p->tracefs == PERFEV_TRACEFS_OK)
		return;
	if (!p->privileged)
		snprintf(also, sizeof(also), "; and without root or CAP_PERFMON kernel events are refused "
			 "anyway (%s)", paranoid_text(p, pt, sizeof(pt)));
	switch (p->tracefs) {
	case PERFEV_TRACEFS_UNMOUNTED:
		set_why(p, c, "tracefs is not mounted at %s (mount -t tracefs nodev /sys/kernel/tracing, "
			"or run faultline --mount-tracefs, as root)%s", p->tracefs_dir, also);
		break;
	case PERFEV_TRACEFS_DENIED:
		set_why(p, c, "tracefs (%s) is readable by root only, and faultline runs as uid %d%s",
			p->tracefs_dir, (int)geteuid(), also);
		break;
	default:
		set_why(p, c, "no tracefs on this kernel (%s is missing: CONFIG_TRACING off?)",
			p->tracefs_dir);
		break;
	}
	p->avail[c] = false;
}

/* A tlb:tlb_flush counter: a filter on the reason numbers its labels
 * have in this kernel's format file. */
static void plan_tlb(struct perfev_plan *p, enum perfev_counter c, const char *const *labels,
		     struct tp *tlb)
{
	struct perfev_event *ev;
	char filter[64] = "";
	size_t n = 0;
	long v;

	plan_tracepoint(p, c, tlb);
	if (!p->avail[c])
		return;
	for (unsigned k = 0; k < 2 && labels[k]; k++) {
		if (tracefmt_symbol(tlb->ev, "reason", labels[k], &v) < 0) {
			set_why(p, c, "this kernel's tlb:tlb_flush has no '%s' reason", labels[k]);
			p->avail[c] = false;
			return;
		}
		n += (size_t)snprintf(filter + n, sizeof(filter) - n, "%sreason == %ld", k ? " || " : "", v);
	}
	ev = add_event(p, c, PERF_TYPE_TRACEPOINT, (uint64_t)tlb->ev->id, false);
	if (ev)
		snprintf(ev->filter, sizeof(ev->filter), "%s", filter);
}

void perfev_plan_build(struct perfev_plan *p, const char *sysroot, const char *procroot,
		       bool root)
{
	struct tp tps[] = {
		{ .sys = "tlb", .name = "tlb_flush" },
		{ .sys = "filemap", .name = "mm_filemap_add_to_page_cache" },
		{ .sys = "vmscan", .name = "mm_vmscan_direct_reclaim_begin" },
		{ .sys = "vmscan", .name = "mm_vmscan_memcg_reclaim_begin" },
	};
	struct tp *tlb = &tps[0], *fm = &tps[1], *dr = &tps[2], *mr = &tps[3];
	struct tep_handle *tep = NULL;
	char buf[32], pt[64];
	bool ek;

	memset(p, 0, sizeof(*p));
	for (int c = 0; c < PERFEV_NR; c++)
		p->avail[c] = true;
	p->page_size = sysconf(_SC_PAGESIZE) > 0 ? (unsigned)sysconf(_SC_PAGESIZE) : 4096;
	p->paranoid = INT_MIN;
	if (procfs_read_small(procroot, "sys/kernel/perf_event_paranoid", buf, sizeof(buf)) == 0)
		p->paranoid = atoi(buf);
	/* perf_event_open's own rule: above 1, counting in the kernel needs
	 * CAP_PERFMON; an unreadable setting is tried as it comes. */
	p->privileged = root || p->paranoid == INT_MIN || p->paranoid <= 1;
	ek = !p->privileged;

	/* Software events. */
	add_event(p, PERFEV_FAULTS, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, ek);
	add_event(p, PERFEV_MAJFLT, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, ek);
	if (ek) {
		set_why(p, PERFEV_FAULTS, "user-space faults only (%s; faults taken inside system calls "
			"are not counted)", paranoid_text(p, pt, sizeof(pt)));
		snprintf(p->why[PERFEV_MAJFLT], sizeof(p->why[0]), "%s", p->why[PERFEV_FAULTS]);
		why_kernel(p, PERFEV_CSW, "a context switch happens");
		why_kernel(p, PERFEV_MIGRATIONS, "a migration happens");
	} else {
		add_event(p, PERFEV_CSW, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false);
		add_event(p, PERFEV_MIGRATIONS, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false);
	}

	/* Tracepoints. */
	p->tracefs = (enum perfev_tracefs_state)tracefmt_find(sysroot, p->tracefs_dir, sizeof(p->tracefs_dir));
	if (p->tracefs == PERFEV_TRACEFS_OK)
		tep = tep_alloc();
	for (unsigned i = 0; p->tracefs == PERFEV_TRACEFS_OK && i < sizeof(tps) / sizeof(tps[0]); i++)
		read_tp(&tps[i], tep, p->tracefs_dir);
	for (int c = PERFEV_TLB_IPI; c <= PERFEV_MEMCG_RECLAIM; c++)
		tracefs_why(p, c);

	for (unsigned i = 0; i < sizeof(tlb_reasons) / sizeof(tlb_reasons[0]); i++)
		plan_tlb(p, tlb_reasons[i].c, tlb_reasons[i].reason, tlb);

	plan_tracepoint(p, PERFEV_PGCACHE_ADD, fm);
	if (p->avail[PERFEV_PGCACHE_ADD]) {
		/* A folio of order k is 2^k pages: one counter per order, so
		 * the sum is exact. */
		p->pgcache_orders = tep_find_field(fm->ev, "order") != NULL;
		p->max_order = p->pgcache_orders ? max_folio_order(sysroot) : 0;
		if (!p->pgcache_orders)
			set_why(p, PERFEV_PGCACHE_ADD, "this kernel's event has no folio order: folios are "
				"counted as pages (exact only without large folios)");
		for (unsigned k = 0; k <= p->max_order; k++) {
			struct perfev_event *ev = add_event(p, PERFEV_PGCACHE_ADD, PERF_TYPE_TRACEPOINT,
							    (uint64_t)fm->ev->id, false);

			if (!ev)
				break;
			ev->shift = (uint8_t)k;
			if (p->pgcache_orders)
				snprintf(ev->filter, sizeof(ev->filter), "order %s %u",
					 k == p->max_order ? ">=" : "==", k);
		}
	}

	plan_tracepoint(p, PERFEV_DIRECT_RECLAIM, dr);
	if (p->avail[PERFEV_DIRECT_RECLAIM])
		add_event(p, PERFEV_DIRECT_RECLAIM, PERF_TYPE_TRACEPOINT, (uint64_t)dr->ev->id, false);
	plan_tracepoint(p, PERFEV_MEMCG_RECLAIM, mr);
	if (p->avail[PERFEV_MEMCG_RECLAIM])
		add_event(p, PERFEV_MEMCG_RECLAIM, PERF_TYPE_TRACEPOINT, (uint64_t)mr->ev->id, false);

	/* The PMU. */
	list_pmus(p, sysroot);
	if (!p->has_pmu) {
		char why[PERFEV_WHY_MAX];

		if (p->pmus[0])
			snprintf(why, sizeof(why), "no hardware PMU: %s/bus/event_source/devices lists %s but no cpu, "
				 "as in a virtual machine without a virtual PMU", sysroot, p->pmus);
		else
			snprintf(why, sizeof(why), "no hardware PMU: no event source in %s/bus/event_source/devices",
				 sysroot);
		unavailable(p, PERFEV_DTLB_MISS, why);
		unavailable(p, PERFEV_CYCLES, why);
	} else {
		add_event(p, PERFEV_DTLB_MISS, PERF_TYPE_HW_CACHE,
			  PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
				  (PERF_COUNT_HW_CACHE_RESULT_MISS << 16), ek);
		add_event(p, PERFEV_CYCLES, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, ek);
		if (ek) {
			set_why(p, PERFEV_DTLB_MISS, "user space only (%s)", paranoid_text(p, pt, sizeof(pt)));
			snprintf(p->why[PERFEV_CYCLES], sizeof(p->why[0]), "%s", p->why[PERFEV_DTLB_MISS]);
		}
	}
	if (tep)
		tep_free(tep);	/* the events with it */
}

static int event_open(const struct perfev_event *ev, pid_t tid, int group_fd, bool inherit)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = ev->type;
	a.config = ev->config;
	a.exclude_kernel = ev->exclude_kernel;
	a.exclude_hv = 1;
	a.inherit = inherit;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ev->filter[0] && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, ev->filter) < 0) {
		int err = errno;

		close(fd);
		/* EINVAL from the filter is not EINVAL from the open. */
		return err == EINVAL ? -EBADR : -err;
	}
	return fd;
}

/* Why perf_event_open refused an event. */
static void why_open(struct perfev_plan *p, const struct perfev_event *ev, int err)
{
	enum perfev_counter c = ev->counter;
	char pt[64];

	p->avail[c] = false;
	switch (err) {
	case EACCES:
	case EPERM:
		if (p->paranoid > 2)
			set_why(p, c, "%s: perf_event_open is refused to users without CAP_PERFMON",
				paranoid_text(p, pt, sizeof(pt)));
		else
			set_why(p, c, "perf_event_open: %s (%s)", strerror(err), paranoid_text(p, pt, sizeof(pt)));
		break;
	case ENOSYS:
		set_why(p, c, "perf_event_open(2) is not available (a kernel without CONFIG_PERF_EVENTS, "
			"or a seccomp filter)");
		break;
	case EBADR:
		set_why(p, c, "the kernel refused the tracepoint filter '%s'", ev->filter);
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (ev->group == PERFEV_GROUP_PMU) {
			set_why(p, c, "the CPU's PMU does not count it (perf_event_open: %s)", strerror(err));
			break;
		}
		/* fall through */
	default:
		set_why(p, c, "perf_event_open: %s", strerror(err));
	}
}

/* A tracepoint event of @ev's tracepoint is already held open. */
static bool held(const struct perfev_plan *p, const struct perfev_event *ev)
{
	for (unsigned i = 0; i < p->nanchor; i++)
		if (p->anchor_config[i] == ev->config)
			return true;
	return false;
}

void perfev_plan_release(struct perfev_plan *p)
{
	for (unsigned i = 0; i < p->nanchor; i++)
		close(p->anchor[i]);
	p->nanchor = 0;
}

void perfev_plan_verify(struct perfev_plan *p)
{
	unsigned n = 0;

	for (unsigned i = 0; i < p->nev; i++) {
		struct perfev_event *ev = &p->ev[i];
		int fd;

		if (!p->avail[ev->counter])
			continue;
		fd = event_open(ev, 0, -1, false);
		if (fd == -EACCES && !ev->exclude_kernel && ev->counter <= PERFEV_MAJFLT) {
			/* perf_event_paranoid unreadable: faults still count
			 * in user space. */
			ev->exclude_kernel = true;
			fd = event_open(ev, 0, -1, false);
			if (fd >= 0)
				set_why(p, ev->counter, "user-space faults only (faults taken inside system "
					"calls are not counted)");
		}
		if (fd < 0) {
			why_open(p, ev, -fd);
		} else if (ev->type == PERF_TYPE_TRACEPOINT && !held(p, ev)) {
			/* The first of its tracepoint: held, so that closing
			 * every later one (here, and each job's when it ends)
			 * is quick. Disabled: it counts nothing. */
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
			p->anchor[p->nanchor] = fd;
			p->anchor_config[p->nanchor++] = ev->config;
		} else {
			close(fd);
		}
	}
	/* Keep the events of the counters that survived, in order. */
	for (unsigned i = 0; i < p->nev; i++)
		if (p->avail[p->ev[i].counter])
			p->ev[n++] = p->ev[i];
	p->nev = n;
}

bool perfev_privileged(void)
{
	char buf[4096], *cap;
	unsigned long long eff;

	if (geteuid() == 0)
		return true;
	/* CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in the effective set. */
	if (procfs_read_small(procfs_root(), "self/status", buf, sizeof(buf)) ||
	    !(cap = strstr(buf, "CapEff:")) || sscanf(cap + 7, "%llx", &eff) != 1)
		return false;
	return (eff >> 38 & 1) || (eff >> 21 & 1);
}

void perfev_probe(struct perfev_plan *p, const char *sysroot, const char *procroot)
{
	perfev_plan_build(p, sysroot, procroot, perfev_privileged());
	if (strcmp(sysroot, "/sys") || strcmp(procroot, "/proc"))
		p->recorded = true;
	else
		perfev_plan_verify(p);
}

bool perfev_any(const struct perfev_plan *p)
{
	return p->nev > 0;
}

/* ---- a job's set ----------------------------------------------------- */

int perfev_open(struct perfev_set *s, const struct perfev_plan *p, pid_t tid, struct err *e)
{
	int first_err = 0;
	bool bad[PERFEV_NR] = { false };

	memset(s, 0, sizeof(*s));
	s->plan = p;
	for (unsigned i = 0; i < PERFEV_MAX_EVENTS; i++)
		s->fd[i] = -1;
	for (unsigned g = 0; g < PERFEV_NGROUPS; g++)
		s->leader[g] = -1;
	for (unsigned i = 0; i < p->nev; i++) {
		const struct perfev_event *ev = &p->ev[i];
		int fd = event_open(ev, tid, s->leader[ev->group], true);

		if (fd < 0) {
			bad[ev->counter] = true;
			if (!first_err) {
				first_err = -fd;
				err_set(e, -fd, "perf_event_open (%s) on task %d: %s", perfev_label(ev->counter),
					(int)tid, strerror(-fd));
			}
			continue;
		}
		s->fd[i] = fd;
		if (s->leader[ev->group] < 0)
			s->leader[ev->group] = fd;
		s->memb[ev->group][s->nmemb[ev->group]++] = (uint8_t)i;
	}
	for (unsigned i = 0; i < p->nev; i++)
		if (s->fd[i] >= 0 && !bad[p->ev[i].counter])
			s->ok[p->ev[i].counter] = true;
	for (int c = 0; c < PERFEV_NR; c++)
		if (s->ok[c])
			return 0;
	if (!first_err)
		return err_set(e, ENOENT, "no kernel event is available here");
	return -first_err;
}

int perfev_decode_group(const void *buf, size_t n, const struct perfev_plan *p,
			const uint8_t *memb, unsigned nmemb, struct perfev_values *out)
{
	const uint64_t *v = buf;
	uint64_t nr, enabled, running;

	if (n < 3 * sizeof(uint64_t) || n % sizeof(uint64_t))
		return -EBADMSG;
	nr = v[0];
	enabled = v[1];
	running = v[2];
	if (nr != nmemb || n < (3 + nr) * sizeof(uint64_t))
		return -EBADMSG;
	for (unsigned i = 0; i < nmemb; i++) {
		const struct perfev_event *ev = &p->ev[memb[i]];
		uint64_t x = v[3 + i];

		if (running == 0 && enabled > 0) {
			/* Never on the PMU (others held it): not a zero. */
			out->ok[ev->counter] = false;
			continue;
		}
		if (running < enabled) {
			double s = (double)x * (double)enabled / (double)running + 0.5;

			x = s < 18446744073709549568.0 ? (uint64_t)s : UINT64_MAX;
		}
		out->v[ev->counter] += x << ev->shift;
	}
	return 0;
}

/*
 * A group read sums the leader's counts and every inherited copy's. A
 * thread that is exiting takes its copy of the group apart one event
 * at a time, and a read that meets a copy half taken apart fails with
 * ECHILD (the kernel refuses to sum groups of different shapes). The
 * copy is gone a few microseconds later and the next read succeeds, so
 * ECHILD is tried again, for a while: a job's threads all exit at its
 * end, right when its last row is read, and a busy host can hold the
 * exiting thread off the CPU for a scheduler tick or more.
 */
#define PERFEV_ECHILD_SPIN 64		/* tries at once */
#define PERFEV_ECHILD_WAIT_NS 100000	/* then this far apart, */
#define PERFEV_ECHILD_WAITS 1000	/* this many times: 100 ms */

static ssize_t read_group(int fd, uint64_t *buf, size_t size)
{
	const struct timespec pause = { 0, PERFEV_ECHILD_WAIT_NS };
	ssize_t n;

	for (unsigned i = 0;; i++) {
		n = read(fd, buf, size);
		if (n >= 0 || errno != ECHILD || i >= PERFEV_ECHILD_SPIN + PERFEV_ECHILD_WAITS)
			return n;
		if (i >= PERFEV_ECHILD_SPIN)
			nanosleep(&pause, NULL);
	}
}

int perfev_read(const struct perfev_set *s, struct perfev_values *out)
{
	uint64_t buf[3 + PERFEV_MAX_EVENTS];
	int ret = 0;

	memset(out, 0, sizeof(*out));
	memcpy(out->ok, s->ok, sizeof(out->ok));
	for (unsigned g = 0; g < PERFEV_NGROUPS; g++) {
		ssize_t n;

		if (s->leader[g] < 0)
			continue;
		n = read_group(s->leader[g], buf, sizeof(buf));
		if (n < 0 || perfev_decode_group(buf, (size_t)n, s->plan, s->memb[g], s->nmemb[g], out) < 0) {
			ret = n < 0 ? -errno : -EBADMSG;
			for (unsigned i = 0; i < s->nmemb[g]; i++)
				out->ok[s->plan->ev[s->memb[g][i]].counter] = false;
		}
	}
	return ret;
}

int perfev_highest_fd(const struct perfev_set *s)
{
	int hi = -1;

	for (unsigned i = 0; i < PERFEV_MAX_EVENTS; i++)
		if (s->fd[i] > hi)
			hi = s->fd[i];
	return hi;
}

void perfev_close(struct perfev_set *s)
{
	for (unsigned i = 0; i < PERFEV_MAX_EVENTS; i++) {
		if (s->fd[i] >= 0)
			close(s->fd[i]);
		s->fd[i] = -1;
	}
	for (unsigned g = 0; g < PERFEV_NGROUPS; g++) {
		s->leader[g] = -1;
		s->nmemb[g] = 0;
	}
	memset(s->ok, 0, sizeof(s->ok));
}
