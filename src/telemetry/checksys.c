/*
 * checksys.c - `faultline --check-system [--target=PATH]`: what telemetry
 * and features this host offers, the totals it reads now, and for each
 * source that cannot be used, why.
 *
 * One jansson object holds the findings; out/checksys_out.c prints the
 * text form from that same object, so the two outputs cannot disagree.
 */
#include "telemetry/checksys.h"
#include "telemetry/delayacct.h"
#include "telemetry/taskstats.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <numa.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "telemetry/cgroup.h"
#include "telemetry/checkexplain.h"
#include "telemetry/devinfo.h"
#include "telemetry/perfev.h"
#include "telemetry/procfs.h"

static json_t *src_json(const struct procfs_probe_src *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "readable", json_boolean(s->err == 0));
	json_object_set_new(o, "why", s->err ? json_string(s->why) : json_null());
	return o;
}

static json_t *vm_json(const struct procfs_vmstat *vm)
{
	json_t *o = json_object();

	for (int k = 0; k < PROCFS_VM_NR; k++)
		json_object_set_new(o, procfs_vm_name(k),
				    procfs_vm_has(vm, k) ? json_integer((json_int_t)vm->v[k]) : json_null());
	return o;
}

static json_t *dev_json(const struct devinfo *d)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", json_string(d->name));
	json_object_set_new(o, "kind", json_string(devinfo_kind_name(d->kind)));
	json_object_set_new(o, "disk", json_string(d->disk));
	json_object_set_new(o, "major", json_integer(d->major));
	json_object_set_new(o, "minor", json_integer(d->minor));
	json_object_set_new(o, "size_bytes", json_integer((json_int_t)d->size_bytes));
	json_object_set_new(o, "model", d->model[0] ? json_string(d->model) : json_null());
	json_object_set_new(o, "scheduler", d->scheduler[0] ? json_string(d->scheduler) : json_null());
	json_object_set_new(o, "rotational", d->rotational < 0 ? json_null() : json_boolean(d->rotational));
	json_object_set_new(o, "logical_block_size",
			    d->logical_block_size ? json_integer(d->logical_block_size) : json_null());
	json_object_set_new(o, "stat", json_string(d->stat_path));
	if (d->md_level[0]) {	/* an md array, or a partition of one */
		json_t *md = json_object();

		json_object_set_new(md, "level", json_string(d->md_level));
		json_object_set_new(md, "chunk_bytes", json_integer((json_int_t)d->md_chunk_bytes));
		json_object_set_new(md, "raid_disks", json_integer(d->md_raid_disks));
		json_object_set_new(md, "array_state", json_string(d->md_array_state));
		json_object_set_new(o, "md", md);
	}
	if (d->kind == DEVINFO_LOOP) {
		json_object_set_new(o, "backing_file", json_string(d->backing_file));
		json_object_set_new(o, "backing", d->backing ? dev_json(d->backing) : json_null());
		if (!d->backing)
			json_object_set_new(o, "backing_why", json_string(d->backing_why));
	}
	if (d->nmembers) {
		json_t *m = json_array();

		for (unsigned i = 0; i < d->nmembers; i++)
			json_array_append_new(m, dev_json(&d->members[i]));
		json_object_set_new(o, "members", m);
	}
	return o;
}

/* The per-job kernel counters (perfev.h): one entry per source, what it gives and
 * whether it can be had here, and why not. */
static const struct {
	const char *source;		/* as perfev_source() names it, once per line */
	int first, last;		/* its counters */
} event_sources[] = {
	{ "software events", PERFEV_FAULTS, PERFEV_MAJFLT },
	{ "software events", PERFEV_CSW, PERFEV_MIGRATIONS },
	{ "tlb:tlb_flush", PERFEV_TLB_IPI, PERFEV_TLB_REMOTE },
	{ "tlb:tlb_flush", PERFEV_TLB_WRONG_CPU, PERFEV_TLB_WRONG_CPU },
	{ "filemap:mm_filemap_add_to_page_cache", PERFEV_PGCACHE_ADD, PERFEV_PGCACHE_ADD },
	{ "vmscan:mm_vmscan_direct_reclaim_begin", PERFEV_DIRECT_RECLAIM, PERFEV_DIRECT_RECLAIM },
	{ "vmscan:mm_vmscan_memcg_reclaim_begin", PERFEV_MEMCG_RECLAIM, PERFEV_MEMCG_RECLAIM },
	{ "PMU", PERFEV_DTLB_MISS, PERFEV_CYCLES },
};

static json_t *events_json(void)
{
	static const char *const tracefs_state[] = {
		[PERFEV_TRACEFS_OK] = "mounted", [PERFEV_TRACEFS_UNMOUNTED] = "not mounted",
		[PERFEV_TRACEFS_DENIED] = "not readable", [PERFEV_TRACEFS_ABSENT] = "absent",
	};
	struct perfev_plan *p = malloc(sizeof(*p));
	json_t *o = json_object(), *a = json_array(), *c;
	char detail[256];

	if (!p)
		return o;
	perfev_probe(p, devinfo_sysroot(), procfs_root());
	json_object_set_new(o, "perf_event_paranoid", p->paranoid == INT_MIN ? json_null() : json_integer(p->paranoid));
	json_object_set_new(o, "kernel_events_allowed", json_boolean(p->privileged));
	json_object_set_new(o, "tracefs", json_string(tracefs_state[p->tracefs]));
	json_object_set_new(o, "tracefs_path", json_string(p->tracefs_dir));
	json_object_set_new(o, "pmus", json_string(p->pmus));
	json_object_set_new(o, "tried", json_boolean(!p->recorded));
	/* The tracepoint filters, with the numbers this kernel uses. */
	c = json_object();
	for (unsigned i = 0; i < p->nev; i++)
		if (p->ev[i].filter[0] && p->ev[i].counter != PERFEV_PGCACHE_ADD)
			json_object_set_new(c, perfev_key(p->ev[i].counter), json_string(p->ev[i].filter));
	json_object_set_new(o, "filters", c);
	json_object_set_new(o, "pgcache_max_order", p->pgcache_orders ? json_integer(p->max_order) : json_null());
	for (unsigned i = 0; i < sizeof(event_sources) / sizeof(event_sources[0]); i++) {
		const int f = event_sources[i].first, l = event_sources[i].last;
		json_t *s = json_object(), *k = json_array();
		bool avail = true;
		const char *why = NULL;

		json_object_set_new(s, "source", json_string(event_sources[i].source));
		for (int n = f; n <= l; n++) {
			json_array_append_new(k, json_string(perfev_key(n)));
			avail = avail && p->avail[n];
			if (!why && p->why[n][0])
				why = p->why[n];
		}
		json_object_set_new(s, "counters", k);
		json_object_set_new(s, "available", json_boolean(avail));
		json_object_set_new(s, avail ? "note" : "why", why ? json_string(why) : json_null());
		/* How the numbers are found, for a reader who checks them. */
		if (avail && (f == PERFEV_TLB_IPI || f == PERFEV_TLB_WRONG_CPU)) {
			size_t n = (size_t)snprintf(detail, sizeof(detail), "filters from its format file:");
			const char *sep = " ";

			for (unsigned e = 0; e < p->nev; e++)
				if (p->ev[e].counter >= f && p->ev[e].counter <= l && n < sizeof(detail)) {
					n += (size_t)snprintf(detail + n, sizeof(detail) - n, "%s%s: %s", sep,
							      perfev_key(p->ev[e].counter), p->ev[e].filter);
					sep = "; ";
				}
			json_object_set_new(s, "how", json_string(detail));
		} else if (avail && f == PERFEV_PGCACHE_ADD && p->pgcache_orders) {
			snprintf(detail, sizeof(detail), "a counter per folio order 0 to %u (the last also counts "
				 "larger ones): pages = sum of count << order", p->max_order);
			json_object_set_new(s, "how", json_string(detail));
		}
		json_array_append_new(a, s);
	}
	json_object_set_new(o, "sources", a);
	perfev_plan_release(p);
	free(p);
	return o;
}

static json_t *features_json(void)
{
	json_t *o = json_object();
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(4, &ring, 0);
	json_object_set_new(o, "io_uring", json_boolean(ret == 0));
	if (ret == 0)
		io_uring_queue_exit(&ring);
	else
		json_object_set_new(o, "io_uring_why", json_string(strerror(-ret)));
	json_object_set_new(o, "drop_caches", json_boolean(access("/proc/sys/vm/drop_caches", W_OK) == 0));
	json_object_set_new(o, "numa", json_boolean(numa_available() >= 0));
	json_object_set_new(o, "numa_nodes",
			    json_integer(numa_available() >= 0 ? numa_num_configured_nodes() : 1));
	return o;
}

/* <sys>/dev/block/MAJ:MIN links to every block device, partitions too:
 * find the one whose directory is called @name; its dev file in @path. */
static int find_by_name(const char *name, char *path, size_t cap)
{
	char dir[PATH_MAX], link[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret = -ENOENT;

	snprintf(dir, sizeof(dir), "%s/dev/block", devinfo_sysroot());
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		ssize_t n;
		char *base;

		snprintf(path, cap, "%s/%s", dir, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		base = strrchr(link, '/');
		if (strcmp(base ? base + 1 : link, name))
			continue;
		snprintf(path, cap, "%s/%s/dev", dir, de->d_name);
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

/*
 * --target is a path (its device is resolved), or the kernel name of a
 * block device ("md0", "sda2") looked up in <sys>/class/block, which is
 * also how a recorded sysfs tree (FAULTLINE_SYS) is examined.
 */
static int resolve_target(const char *target, struct devinfo *d, struct err *e)
{
	char path[PATH_MAX], buf[64];
	unsigned maj, min;
	ssize_t n;
	int fd;

	if (access(target, F_OK) == 0 || strchr(target, '/'))
		return devinfo_resolve_path(devinfo_sysroot(), target, d, e);
	snprintf(path, sizeof(path), "%s/class/block/%s/dev", devinfo_sysroot(), target);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(path, sizeof(path), "%s/block/%s/dev", devinfo_sysroot(), target);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0 && find_by_name(target, path, sizeof(path)) == 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, ENOENT, "--target=%s: no such file, and no block device of that name in %s",
			       target, devinfo_sysroot());
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || (buf[n] = '\0', sscanf(buf, "%u:%u", &maj, &min) != 2))
		return err_set(e, EBADMSG, "%s: not MAJ:MIN", path);
	return devinfo_resolve(devinfo_sysroot(), makedev(maj, min), d, e);
}

/* Where the time went (--delayacct): the kernel's switch, and whether
 * taskstats answers this user. Usable: on now, or off and faultline
 * is root (it turns it on for a run). */
static json_t *delayacct_json(void)
{
	json_t *o = json_object();
	char why[200], tswhy[ERR_MSG_MAX] = "";
	int state = delayacct_state(procfs_root(), why, sizeof(why));
	struct taskstats_sock *ts = malloc(sizeof(*ts));
	struct taskstats_delays d;
	struct err e = { 0 };
	int q = -ENOMEM;

	if (ts && (q = taskstats_open(ts, &e)) == 0) {
		q = taskstats_query(ts, gettid(), &d);
		taskstats_close(ts);
	}
	free(ts);
	if (q == -EPERM)
		snprintf(tswhy, sizeof(tswhy), "taskstats answers only CAP_NET_ADMIN (root)");
	else if (q)
		snprintf(tswhy, sizeof(tswhy), "%s", e.msg[0] ? e.msg : strerror(-q));
	json_object_set_new(o, "state", json_string(state == 1 ? "on" : state == 0 ? "off" : "absent"));
	json_object_set_new(o, "taskstats", json_boolean(q == 0));
	json_object_set_new(o, "readable", json_boolean(q == 0 && (state == 1 || (state == 0 && !geteuid()))));
	if (q)
		json_object_set_new(o, "why", json_string(tswhy));
	else
		json_object_set_new(o, "why", json_string(why));
	return o;
}

json_t *checksys_build(const char *target, struct err *e)
{
	struct procfs_probe *p = calloc(1, sizeof(*p));
	struct cgroup_info ci;
	json_t *root = json_object(), *o, *a;
	struct utsname u;

	if (!p || !root)
		return err_set(e, ENOMEM, "out of memory"), NULL;
	procfs_probe(procfs_root(), procfs_clk_tck(), gettid(), p);

	if (uname(&u) == 0) {
		o = json_object();
		json_object_set_new(o, "kernel", json_string(u.release));
		json_object_set_new(o, "machine", json_string(u.machine));
		json_object_set_new(o, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
		json_object_set_new(o, "proc_root", json_string(procfs_root()));
		json_object_set_new(o, "sys_root", json_string(devinfo_sysroot()));
		json_object_set_new(o, "root", json_boolean(geteuid() == 0));
		json_object_set_new(root, "host", o);
	}

	o = src_json(&p->tlb);
	json_object_set_new(o, "total", p->tlb.err ? json_null() : json_integer((json_int_t)p->tlb_total));
	json_object_set_new(o, "cpus", p->tlb.err ? json_null() : json_integer(p->ncpu));
	json_object_set_new(root, "tlb_shootdowns", o);

	o = src_json(&p->kswapd);
	a = json_array();
	for (unsigned i = 0; i < p->nkswapd && i < PROCFS_PROBE_KSWAPD_MAX; i++) {
		json_t *t = json_object();

		json_object_set_new(t, "name", json_string(p->kswapd_t[i].name));
		json_object_set_new(t, "pid", json_integer(p->kswapd_t[i].pid));
		json_object_set_new(t, "cpu_s", json_real(p->kswapd_t[i].cpu_s));
		json_array_append_new(a, t);
	}
	json_object_set_new(o, "threads", a);
	json_object_set_new(root, "kswapd", o);

	o = src_json(&p->vmstat);
	json_object_set_new(o, "counters", p->vmstat.err ? json_null() : vm_json(&p->vm));
	json_object_set_new(root, "vmstat", o);

	o = src_json(&p->meminfo);
	for (int k = 0; k < PROCFS_MEM_NR && !p->meminfo.err; k++)
		json_object_set_new(o, procfs_mem_name(k),
				    procfs_mem_has(&p->mem, k) ? json_integer((json_int_t)p->mem.bytes[k])
							       : json_null());
	json_object_set_new(root, "meminfo", o);

	o = src_json(&p->stat);
	json_object_set_new(o, "cpus", p->stat.err ? json_null() : json_integer(p->cpu.ncpu));
	json_object_set_new(root, "cpu_times", o);

	o = src_json(&p->task);
	json_object_set_new(root, "thread_faults", o);
	json_object_set_new(root, "delay_accounting", delayacct_json());

	cgroup_probe(&ci, true);
	o = json_object();
	json_object_set_new(o, "version", ci.version ? json_integer(ci.version) : json_null());
	json_object_set_new(o, "own", ci.self[0] ? json_string(ci.self) : json_null());
	json_object_set_new(o, "can_create_child", json_boolean(ci.can_create));
	json_object_set_new(o, "why", ci.can_create ? json_null() : json_string(ci.why));
	json_object_set_new(root, "memory_cgroup", o);

	json_object_set_new(root, "job_events", events_json());
	json_object_set_new(root, "features", features_json());
	checkexplain_json(root, &ci, target);

	if (target) {
		struct devinfo d;
		struct err de = { 0 };

		o = json_object();
		json_object_set_new(o, "path", json_string(target));
		memset(&d, 0, sizeof(d));
		if (resolve_target(target, &d, &de) == 0) {
			json_object_set_new(o, "device", dev_json(&d));
			devinfo_free(&d);
		} else if (de.code == ENOENT) {
			/* No such path or device: a command-line error. */
			json_decref(o);
			json_decref(root);
			free(p);
			return err_set(e, ENOENT, "%s", de.msg), NULL;
		} else {
			json_object_set_new(o, "device", json_null());
			json_object_set_new(o, "why", json_string(de.msg));
		}
		json_object_set_new(root, "target", o);
	}
	free(p);
	return root;
}
