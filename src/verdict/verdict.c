/*
 * verdict.c - faultline --verdict. Sizes a memory budget and a
 * file about four times larger, plans a fixed matrix (uniform, zipf and
 * scan reads through mmap normal/random, bufpool and io_uring O_DIRECT;
 * a write mix with flushes every 32 writes; the async-hazard loop) in
 * rounds that fit the time budget, and runs every cell as its own job
 * file through the run controller, exactly as `faultline FILE.job`
 * would: one job per run, so the run's system-wide telemetry belongs to
 * that job alone. The judge reads the runs' JSON; the writers report.
 * With job files (faultline --verdict JOBFILE...), the workloads are the
 * user's jobs instead (vjobs.c), planned and run the same way.
 *
 * The asynchronous side gets a fair fight: io_uring O_DIRECT
 * runs at depth 1 per thread and, beside it, at the depth a short probe
 * of the device finds (probe.c), and the buffer pool reads ahead on
 * sequential runs what the kernel reads ahead for mmap.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "telemetry/cgroup.h"
#include "telemetry/checksys.h"
#include "telemetry/damon.h"
#include "job/jobfile.h"
#include "out/json_out.h"
#include "engines/engine.h"
#include "run/run.h"
#include "verdict/judge_host.h"
#include "verdict/probe.h"
#include "verdict/verdict.h"
#include "lib/fmtnum.h"
#include "lib/datadir.h"
#include "verdict/vjobs.h"

#define MIB (1024ull * 1024)
#define GIB (1024 * MIB)

/* The memory budget: a power of two of about half a MiB per second of
 * budget (128 MiB for 5 minutes), so the file (FILE_FACTOR times it) is
 * laid out and its cache filled in a small part of the time; never
 * below MEM_MIN (a mem_limit cgroup much smaller than that holds little
 * more than the worker's own memory), never above an eighth of
 * MemAvailable or MEM_MAX. */
#define MEM_PER_S (MIB / 2)
#define MEM_MIN (32 * MIB)
#define MEM_MAX (4 * GIB)
#define FILE_FACTOR 4
/* reserve_mem leaves at least 1 GiB available, so without a
 * cgroup the budget is that floor and some room. */
#define RESERVE_MEM_FLOOR (GIB + 256 * MIB)
/* Assumed, printed as such: set-up per run (cgroup, cache drop, threads,
 * pool), laying out the file, and the report at the end (matplotlib). */
#define OVERHEAD_S 1.0
#define LAYOUT_MIB_S 100.0
#define POST_S_MAX 20.0
/* The share of the budget the plan fills; the rest absorbs a slow host. */
#define PLAN_SHARE 0.88
/* A round beyond the first only when each run gets this much. */
#define ROUND_MIN_S 6.0
#define HAZARD_STREAMS 8
#define ZIPF_THETA "0.9"
#define FLUSH_EVERY 32
/* Assumed for the depth probe (probe.c: 9 depths of 0.2 s, and opening). */
#define PROBE_S 2.5
/* The scan's pages and requests. */
#define SCAN_BS (128 * 1024)
/* The device's read-ahead when it cannot be read: the kernel's default. */
#define RA_DEFAULT (128 * 1024)

static const enum judge_workload order[] = { JW_UNIFORM, JW_ZIPF, JW_SCAN, JW_WRITE, JW_HAZARD };

/* A fixed workload, vmcache beside bufpool where the build has it. */
static void fixed_wl(enum judge_workload w, bool vmcache, struct judge_wl *wl)
{
	judge_wl_fixed(w, wl);
	if (vmcache && (wl->engines & (1u << JE_BUFPOOL)) && !wl->writes)
		wl->engines |= 1u << JE_VMCACHE;
}

static unsigned cells_in(enum judge_workload w, bool vmcache)
{
	struct judge_wl wl;
	unsigned n = 0;

	fixed_wl(w, vmcache, &wl);
	for (int e = 0; e < JE_NR; e++)
		n += judge_engine_in(&wl, e);
	return n;
}

int verdict_plan_make(const struct verdict_hostinfo *hi, uint64_t budget_ns, bool writes,
		      const char *writes_why, struct verdict_plan *p, struct err *e)
{
	double budget_s = budget_ns / 1e9, avail, t;
	uint64_t mem = MEM_MIN;

	memset(p, 0, sizeof(*p));
	p->budget_ns = budget_ns;
	while (mem * 2 <= (uint64_t)(budget_s * MEM_PER_S) && mem * 2 <= MEM_MAX)
		mem *= 2;
	while (mem > MEM_MIN && mem > hi->mem_available / 8)
		mem /= 2;
	p->cgroup = hi->cgroup_ok;
	if (!p->cgroup) {
		snprintf(p->memory_why, sizeof(p->memory_why), "%s", hi->cgroup_why);
		if (mem < RESERVE_MEM_FLOOR)
			mem = RESERVE_MEM_FLOOR;
		if (hi->mem_available <= mem)
			return err_set(e, ENOMEM, "verdict: no memory cgroup here (%s) and MemAvailable "
				       "(%llu MiB) too small to reserve down to %llu MiB",
				       hi->cgroup_why, (unsigned long long)(hi->mem_available / MIB),
				       (unsigned long long)(mem / MIB));
		p->reserve = hi->mem_available - mem;
	}
	if (hi->target_size) {
		/* An existing target: at most a quarter of it as memory. */
		while (mem > MEM_MIN && mem * FILE_FACTOR > hi->target_size)
			mem /= 2;
		if (mem * FILE_FACTOR > hi->target_size)
			return err_set(e, EINVAL, "verdict: the target has %llu MiB; it needs at least %llu MiB",
				       (unsigned long long)(hi->target_size / MIB),
				       (unsigned long long)(MEM_MIN * FILE_FACTOR / MIB));
	}
	p->mem = mem;
	p->file_size = mem * FILE_FACTOR;
	/* A job-file verdict's scratch file holds every job's region. */
	if (hi->file_min > p->file_size)
		p->file_size = (hi->file_min + MIB - 1) / MIB * MIB;
	p->threads = hi->ncpus ? hi->ncpus : 1;
	p->writes = writes;
	p->vmcache = hi->vmcache;
	snprintf(p->writes_why, sizeof(p->writes_why), "%s", writes ? "" : writes_why);
	if (hi->cells)
		p->cells_per_round = hi->cells;
	else
		for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++)
			if (order[i] != JW_WRITE || writes)
				p->cells_per_round += cells_in(order[i], hi->vmcache);
	p->depth = VERDICT_DEPTH_DEFAULT;
	snprintf(p->depth_why, sizeof(p->depth_why), "not probed yet");
	p->overhead_s = OVERHEAD_S;
	p->probe_s = PROBE_S;
	p->layout_s = hi->target_size || hi->scratch_exists || hi->no_scratch ? 0
		      : p->file_size / MIB / LAYOUT_MIB_S;
	p->post_s = fmin(POST_S_MAX, budget_s * 0.1);
	avail = budget_s * PLAN_SHARE - p->layout_s - p->post_s - p->probe_s;
	for (p->rounds = 3; p->rounds > 1; p->rounds--)
		if (avail / (p->cells_per_round * p->rounds) - OVERHEAD_S >= ROUND_MIN_S)
			break;
	t = avail / (p->cells_per_round * p->rounds) - OVERHEAD_S;
	if (t < 1)
		return err_set(e, EINVAL, "verdict: a budget of %.0f s leaves %.1f s per run of %u; "
			       "give at least %.0f s", budget_s, t, p->cells_per_round,
			       ceil((p->cells_per_round * (1 + OVERHEAD_S) + p->layout_s + p->probe_s) /
				    PLAN_SHARE + p->post_s));
	p->ramp_s = (unsigned)(t / 3);
	p->runtime_s = (unsigned)(t - p->ramp_s);
	p->est_s = p->layout_s + p->post_s + p->probe_s +
		   p->cells_per_round * p->rounds * (p->ramp_s + p->runtime_s + OVERHEAD_S);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Job text */

static void memory_line(const struct verdict_plan *p, char *buf, size_t len, size_t *at)
{
	if (p->cgroup)
		fmt_append(buf, len, at, "mem_limit=%llum\n", (unsigned long long)(p->mem / MIB));
	else
		fmt_append(buf, len, at, "reserve_mem=%llum\n", (unsigned long long)(p->reserve / MIB));
}

void verdict_job_text(const struct verdict_plan *p, enum judge_workload w, enum judge_engine e,
		      unsigned round, const char *name, char *buf, size_t len)
{
	size_t at = 0;
	unsigned long long fmib = p->file_size / MIB, mmib = p->mem / MIB;

	fmt_append(buf, len, &at, "; faultline --verdict: %s, %s, round %u\n", judge_workload_name(w),
		   judge_engine_name(e), round + 1);
	fmt_append(buf, len, &at, "[%s]\nfilename=%s\nsize=%llum\ninvalidate=1\ndelayacct=1\ntime_based\n"
		   "ramp_time=%us\nruntime=%us\nrandseed=%u\n", name, p->target, fmib, p->ramp_s,
		   p->runtime_s, 4242 + round);
	/* io_uring at the probed depth: one thread, as the paper's libaio
	 * baseline (the report names each cell's concurrency). */
	if (w != JW_HAZARD)
		fmt_append(buf, len, &at, "numjobs=%u\n", e == JE_URING_DEPTH ? 1 : p->threads);
	switch (w) {
	case JW_UNIFORM:
	case JW_ZIPF:
		fmt_append(buf, len, &at, "rw=randread\nbs=4k\ntouch=page\nrandom_distribution=%s\n",
			   w == JW_ZIPF ? "zipf:" ZIPF_THETA : "random");
		break;
	case JW_SCAN:
		fmt_append(buf, len, &at, "rw=read\nbs=128k\ntouch=page\nscan=shared\nscan_chunk=%llum\n",
			   fmib / 8 ? fmib / 8 : 1);
		break;
	case JW_WRITE:
		fmt_append(buf, len, &at, "rw=randrw\nrwmixread=50\nbs=4k\ntouch=page\n");
		break;
	case JW_HAZARD:
		fmt_append(buf, len, &at, "rw=read\nbs=128k\ntouch=stride:512\nnumjobs=1\nloop=%u\n",
			   HAZARD_STREAMS);
		break;
	default:
		break;
	}
	switch (e) {
	case JE_MMAP_NORMAL:
	case JE_MMAP_RANDOM:
		fmt_append(buf, len, &at, "ioengine=mmap\nmadvise=%s\n",
			   e == JE_MMAP_NORMAL ? "normal" : "random");
		memory_line(p, buf, len, &at);
		break;
	case JE_MMAP_MSYNC:
		fmt_append(buf, len, &at, "ioengine=mmap\nmadvise=random\nfsync=%d\n", FLUSH_EVERY);
		memory_line(p, buf, len, &at);
		break;
	case JE_BUFPOOL:
	case JE_VMCACHE:
		/* A pool page holds a whole request: the scan's pages are its
		 * 128k reads, read ahead as the kernel reads ahead for mmap. */
		fmt_append(buf, len, &at, "ioengine=%s\npool_size=%llum\npool_page=%s\n",
			   e == JE_BUFPOOL ? "bufpool" : "vmcache", mmib, w == JW_SCAN ? "128k" : "4k");
		if (w == JW_WRITE)
			fmt_append(buf, len, &at, "fsync=%d\n", FLUSH_EVERY);
		if (w == JW_SCAN && e == JE_BUFPOOL && p->pool_prefetch)
			fmt_append(buf, len, &at, "pool_prefetch=%u\n", p->pool_prefetch);
		break;
	case JE_URING_DIRECT:
		fmt_append(buf, len, &at, "ioengine=io_uring\ndirect=1\niodepth=1\n");
		break;
	case JE_URING_DEPTH:
		fmt_append(buf, len, &at, "ioengine=io_uring\ndirect=1\niodepth=%u\n", p->depth);
		break;
	case JE_PWRITE:
		fmt_append(buf, len, &at, "ioengine=psync\nfdatasync=%d\n", FLUSH_EVERY);
		memory_line(p, buf, len, &at);
		break;
	case JE_MMAP_LOOP:
		fmt_append(buf, len, &at, "ioengine=mmap\n");
		memory_line(p, buf, len, &at);
		break;
	case JE_URING_LOOP:
		fmt_append(buf, len, &at, "ioengine=io_uring\n");
		memory_line(p, buf, len, &at);
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------ */
/* The host */

static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static const char *root(const char *env, const char *def)
{
	const char *r = getenv(env);

	return r && *r ? r : def;
}

static uint64_t mem_available(void)
{
	char path[PATH_MAX], line[256];
	unsigned long long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/meminfo", root("FAULTLINE_PROC", "/proc"));
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/* THP mode, the target's device (read_ahead_kb, rotational), and
 * whether this is a virtual machine: the facts that change the answer. */
static void host_facts(struct judge_host *h, const char *target)
{
	const char *sys = root("FAULTLINE_SYS", "/sys"), *proc = root("FAULTLINE_PROC", "/proc");
	char path[PATH_MAX], buf[512], real[PATH_MAX];
	struct stat st;
	char *s, *end;

	h->read_ahead_kb = -1;
	h->rotational = -1;
	h->ncpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(path, sizeof(path), "%s/kernel/mm/transparent_hugepage/enabled", sys);
	if (!read_small(path, buf, sizeof(buf)) && (s = strchr(buf, '[')) && (end = strchr(s, ']'))) {
		*end = '\0';
		snprintf(h->thp, sizeof(h->thp), "%s", s + 1);
	}
	if (stat(target, &st) == 0) {
		dev_t d = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;

		for (int up = 0; up < 2 && h->read_ahead_kb < 0; up++) {
			snprintf(path, sizeof(path), "%s/dev/block/%u:%u%s/queue/read_ahead_kb", sys,
				 major(d), minor(d), up ? "/.." : "");
			if (!read_small(path, buf, sizeof(buf))) {
				h->read_ahead_kb = atoi(buf);
				snprintf(path, sizeof(path), "%s/dev/block/%u:%u%s/queue/rotational", sys,
					 major(d), minor(d), up ? "/.." : "");
				if (!read_small(path, buf, sizeof(buf)))
					h->rotational = atoi(buf);
				snprintf(path, sizeof(path), "%s/dev/block/%u:%u%s", sys, major(d), minor(d),
					 up ? "/.." : "");
				if (realpath(path, real) && (s = strrchr(real, '/')))
					snprintf(h->dev, sizeof(h->dev), "%s", s + 1);
			}
		}
	}
	/* DAMON: no refresh of its stats, only what it is set to do. */
	{
		struct damon_info *dm = calloc(1, sizeof(*dm));
		int ret = dm ? damon_probe(sys, false, dm) : -ENOMEM;

		h->damon_pageout = ret == 0 ? damon_reclaims(dm) : ret == -ENOENT ? 0 : -1;
		h->damon_idle_s = ret == 0 ? damon_pageout_idle_s(dm) : NAN;
		free(dm);
	}
	h->swap = -1;
	snprintf(path, sizeof(path), "%s/meminfo", proc);
	{
		FILE *f = fopen(path, "r");
		char line[256];
		unsigned long long kb;

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "SwapTotal: %llu kB", &kb) == 1) {
				h->swap = kb > 0;
				break;
			}
		if (f)
			fclose(f);
	}
	snprintf(path, sizeof(path), "%s/cpuinfo", proc);
	{
		FILE *f = fopen(path, "r");
		char line[4096];
		bool hv = false, seen = false;

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "flags", 5)) {
				seen = true;
				hv = strstr(line, " hypervisor") != NULL;
				break;
			}
		if (f)
			fclose(f);
		if (seen && !hv)
			snprintf(h->virt, sizeof(h->virt), "none");
		if (hv) {
			snprintf(path, sizeof(path), "%s/class/dmi/id/sys_vendor", sys);
			if (read_small(path, buf, sizeof(buf)) || !buf[0])
				snprintf(buf, sizeof(buf), "unnamed hypervisor");
			snprintf(h->virt, sizeof(h->virt), "%s", buf);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Running */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Append @from's rows (its header too when @to is empty) to @to: 0, or
 * -errno when @from could not be read or @to not written (a full disk's
 * -ENOSPC shows at the flush, buffered writes having succeeded). A run
 * that failed before its first row left no @from: it adds no rows, and
 * its line says why it failed. */
static int csv_append(const char *from, FILE *to, bool *have_header)
{
	FILE *f = fopen(from, "r");
	char *line = NULL;
	size_t cap = 0;
	bool first = true;
	int ret = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	errno = 0;
	while (getline(&line, &cap, f) > 0) {
		if (first && *have_header) {
			first = false;
			continue;
		}
		first = false;
		if (fputs(line, to) == EOF) {
			ret = errno ? -errno : -EIO;
			break;
		}
	}
	if (!ret && ferror(f))
		ret = errno ? -errno : -EIO;
	*have_header = true;
	free(line);
	fclose(f);
	errno = 0;
	if (fflush(to) == EOF && !ret)
		ret = errno ? -errno : -EIO;
	if (!ret && ferror(to))
		ret = -EIO;
	return ret;
}

static void run_line(const struct verdict_opts *o, struct verdict_line *l, const char *csv_tmp,
		     const char *jobdir)
{
	struct joblist jl = { 0 };
	struct run run = { 0 };
	bool left_running = false;
	struct run_opts ro = { .interval_ns = 1000000000ull, .csv_path = csv_tmp,
			       .status_line = o->status_line };
	struct err e = { 0 };
	char path[PATH_MAX];
	double t0 = now_s();
	FILE *f;

	/* The job file beside the outputs, so the command in the report runs. */
	snprintf(path, sizeof(path), "%s/%s.job", jobdir, l->name);
	f = fopen(path, "w");
	if (f) {
		fputs(l->text, f);
		fclose(f);
	}
	if (jobfile_parse_text(&jl, l->name, l->text, &e)) {
		l->doc = json_pack("{s:[{s:i, s:{s:s}}]}", "jobs", "error", e.code ? e.code : EINVAL,
				   "faultline", "errmsg", e.msg);
		goto out;
	}
	if (run_prepare(&run, &jl, &ro, &e)) {
		l->doc = json_pack("{s:[{s:i, s:{s:s}}]}", "jobs", "error", e.code ? e.code : EINVAL,
				   "faultline", "errmsg", e.msg);
		run_destroy(&run);
		goto out;
	}
	*o->current = &run;
	if (*o->stop)
		run_request_stop(&run);
	if (run_execute(&run, &e))
		fprintf(stderr, "faultline: verdict: %s: %s\n", l->name, e.msg);
	*o->current = NULL;
	l->doc = json_out_build(&run.res, 0);
	/* A stuck job's threads still read its job: they end with the
	 * process (run_destroy keeps the rest). */
	left_running = run.nabandoned > 0;
	run_destroy(&run);
out:
	if (!left_running)
		joblist_free(&jl);
	l->elapsed_s = now_s() - t0;
}

static int target_size(const char *path, uint64_t *size, struct err *e)
{
	struct stat st;
	int fd;

	if (stat(path, &st))
		return err_set(e, errno, "verdict: %s: %s", path, strerror(errno));
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return 0;
	}
	if (!S_ISBLK(st.st_mode))
		return err_set(e, EINVAL, "verdict: %s is neither a file nor a block device", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, size)) {
		int ret = err_set(e, errno, "verdict: %s: %s", path, strerror(errno));

		if (fd >= 0)
			close(fd);
		return ret;
	}
	close(fd);
	return 0;
}

/* The workloads: the fixed matrix's, or the user's jobs (loaded already);
 * each job's memory budget and what its cells need of the plan. */
static void job_plan_needs(const struct verdict_opts *o, struct verdict_data *d,
			   struct verdict_hostinfo *hi)
{
	hi->no_scratch = true;
	for (unsigned i = 0; i < d->nwl; i++) {
		const struct verdict_wl *w = &d->wls[i];
		const struct job *j = w->job;

		if (w->skip[0])
			continue;
		for (int e = 0; e < JE_NR; e++)
			hi->cells += judge_engine_in(&w->jw, e);
		if (w->scratch) {
			hi->no_scratch = false;
			if (j->offset + j->size > hi->file_min)
				hi->file_min = j->offset + j->size;
		}
	}
	(void)o;
}

static int setup(const struct verdict_opts *o, struct verdict_data *d, struct err *e)
{
	struct verdict_hostinfo hi = { 0 };
	struct cgroup_info ci;
	const char *dir = o->directory ? o->directory : ".";
	const char *why = "", *facts_at = NULL;
	char path[PATH_MAX], own[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	int ret;

	hi.ncpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	hi.mem_available = mem_available();
	hi.vmcache = engine_find("vmcache") != NULL;
	cgroup_probe(&ci, true);
	hi.cgroup_ok = ci.can_create;
	snprintf(hi.cgroup_why, sizeof(hi.cgroup_why), "%s", ci.why[0] ? ci.why : "no memory controller");
	if (o->njobfiles) {
		ret = verdict_jobs_load(o->jobfiles, o->njobfiles, o->write_probe, d, hi.vmcache, e);
		if (ret)
			return ret;
		job_plan_needs(o, d, &hi);
		if (!hi.cells)
			return err_set(e, EINVAL, "verdict: no job of %s can be judged: %s",
				       o->jobfiles[0], d->wls[0].skip);
	}
	if (o->filename) {
		ret = target_size(o->filename, &hi.target_size, e);
		if (ret)
			return ret;
		if (!o->write_probe)
			why = "--filename is read only unless --write-probe is given";
	} else if (!hi.no_scratch || !o->njobfiles) {
		if (statfs(dir, &sfs))
			return err_set(e, errno, "verdict: --directory=%s: %s", dir, strerror(errno));
		if (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC)
			return err_set(e, EINVAL, "verdict: --directory=%s is in memory (tmpfs): no "
				       "device to read and no O_DIRECT; give a directory on a disk", dir);
	}
	ret = verdict_plan_make(&hi, o->budget_ns, !o->filename || o->write_probe, why, &d->plan, e);
	if (ret)
		return ret;
	d->plan.jobfile = o->njobfiles ? o->jobfiles[0] : NULL;
	/* The plan is made afresh above: name its target after it. */
	if (o->filename)
		snprintf(d->plan.target, sizeof(d->plan.target), "%s", o->filename);
	if (!o->filename && !hi.no_scratch) {
		snprintf(path, sizeof(path), "%s/faultline-verdict.%llum.dat", dir,
			 (unsigned long long)(d->plan.file_size / MIB));
		snprintf(d->plan.target, sizeof(d->plan.target), "%s", path);
		d->plan.target_ours = true;
		d->plan.target_existed = stat(path, &st) == 0 && (uint64_t)st.st_size >= d->plan.file_size;
		if (d->plan.target_existed) {
			d->plan.est_s -= d->plan.layout_s;
			d->plan.layout_s = 0;
		}
	}
	/* Host facts of the device read: the first job's own file, or the
	 * scratch file's directory, or --filename. */
	for (unsigned i = 0; i < d->nwl && !facts_at; i++)
		if (!d->wls[i].skip[0] && d->wls[i].target[0]) {
			snprintf(own, sizeof(own), "%s", d->wls[i].target);
			facts_at = own;
		}
	if (!facts_at)
		facts_at = o->filename ? o->filename : dir;
	if (hi.no_scratch && o->njobfiles)
		snprintf(d->plan.target, sizeof(d->plan.target), "%s", facts_at);
	for (unsigned i = 0; i < d->nwl; i++)
		if (!d->wls[i].mem_own)
			d->wls[i].mem = d->plan.mem;
	d->host.mem_budget = d->nwl ? d->wls[0].mem : d->plan.mem;
	d->host.file_size = d->plan.file_size;
	d->host.cgroup = d->plan.cgroup;
	host_facts(&d->host, facts_at);
	/* The pools read ahead what the kernel reads ahead for mmap: the
	 * device's window, at most half the scan's pool. */
	d->plan.ra_bytes = d->host.read_ahead_kb > 0 ? (uint64_t)d->host.read_ahead_kb * 1024 : RA_DEFAULT;
	d->plan.pool_prefetch = (unsigned)(d->plan.ra_bytes / SCAN_BS);
	if (d->plan.pool_prefetch > d->plan.mem / SCAN_BS / 2 / d->plan.threads)
		d->plan.pool_prefetch = (unsigned)(d->plan.mem / SCAN_BS / 2 / d->plan.threads);
	d->checksys = checksys_build(facts_at, NULL);
	return 0;
}

/* The fixed matrix's workloads (the write mix said to be left out when it is). */
static int fixed_wls(struct verdict_data *d)
{
	d->wls = calloc(sizeof(order) / sizeof(order[0]), sizeof(*d->wls));
	if (!d->wls)
		return -ENOMEM;
	for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct verdict_wl *w = &d->wls[d->nwl++];

		fixed_wl(order[i], d->plan.vmcache, &w->jw);
		w->mem = d->plan.mem;
		if (order[i] == JW_WRITE && !d->plan.writes)
			snprintf(w->skip, sizeof(w->skip), "no write mix: %s", d->plan.writes_why);
	}
	return 0;
}

/* What @l's job text runs (the plan's table shows it), read back from
 * the text as the run will read it. */
static void line_ran(const struct verdict_data *d, struct verdict_line *l)
{
	struct joblist jl = { 0 };
	struct err e = { 0 };
	const struct job *j;

	memset(&l->ran, 0, sizeof(l->ran));
	if (jobfile_parse_text(&jl, l->name, l->text, &e) || !jl.n)
		goto out;
	j = jl.jobs[0];
	l->ran.known = true;
	l->ran.threads = j->numjobs;
	l->ran.depth = j->iodepth ? j->iodepth : 1;
	if (j->mem_limit) {
		snprintf(l->ran.mem_kind, sizeof(l->ran.mem_kind), "mem_limit");
		l->ran.mem = j->mem_limit;
	} else if (j->pool_size) {
		snprintf(l->ran.mem_kind, sizeof(l->ran.mem_kind), "pool_size");
		l->ran.mem = j->pool_size;
	} else if (j->reserve_mem) {
		/* What it leaves of MemAvailable: the budget. */
		snprintf(l->ran.mem_kind, sizeof(l->ran.mem_kind), "reserve_mem");
		l->ran.mem = d->plan.reserve + d->plan.mem - j->reserve_mem;
	}
out:
	joblist_free(&jl);
}

/* The job text of @l, as the plan now stands (the depth once probed). */
static void line_text(const struct verdict_data *d, struct verdict_line *l)
{
	const struct verdict_wl *w = &d->wls[l->wl];

	if (w->jw.kind == JW_JOB)
		verdict_jobs_text(&d->plan, w, l->e, l->round, l->name, l->text, l->textlen);
	else
		verdict_job_text(&d->plan, w->jw.kind, l->e, l->round, l->name, l->text, l->textlen);
	line_ran(d, l);
}

/* A job's name as a file name: letters, digits, '.', '_' and '-'. */
static void safe_name(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = isalnum((unsigned char)s[i]) || strchr("._-", s[i]) ? s[i] : '_';
	buf[i] = '\0';
}

static int make_lines(struct verdict_data *d)
{
	const struct verdict_plan *p = &d->plan;

	d->lines = calloc((size_t)p->cells_per_round * p->rounds, sizeof(*d->lines));
	if (!d->lines)
		return -ENOMEM;
	for (unsigned r = 0; r < p->rounds; r++)
		for (unsigned i = 0; i < d->nwl; i++) {
			const struct verdict_wl *w = &d->wls[i];
			enum judge_engine es[JE_NR];
			unsigned n = 0;
			char key[48];

			if (w->skip[0])
				continue;
			for (int e = 0; e < JE_NR; e++)
				if (judge_engine_in(&w->jw, e))
					es[n++] = e;
			safe_name(w->jw.key, key, sizeof(key));
			for (unsigned k = 0; k < n; k++) {
				struct verdict_line *l = &d->lines[d->nlines++];

				/* Odd rounds run the engines in reverse: whoever
				 * runs after whom (a warm device, another job's
				 * writeback) changes sides. */
				l->wl = i;
				l->e = es[r % 2 ? n - 1 - k : k];
				l->round = r;
				snprintf(l->name, sizeof(l->name), "v-%s-%s-r%u", key,
					 judge_engine_key(l->e), r + 1);
				l->textlen = w->jw.kind == JW_JOB ? verdict_jobs_text_len(w) : 2048;
				l->text = malloc(l->textlen);
				if (!l->text)
					return -ENOMEM;
				line_text(d, l);
			}
		}
	return 0;
}

/* Before the first cell at depth: the device probed, every cell's text
 * made again with the depth it found. */
static void probe_depth(struct verdict_data *d, FILE *out)
{
	struct verdict_plan *p = &d->plan;
	struct depth_probe dp;
	char why[160] = "";
	struct stat st;
	uint64_t size = 0;

	if (!stat(p->target, &st))
		size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : p->file_size;
	if (size > p->file_size && p->target_ours)
		size = p->file_size;
	if (!size)
		snprintf(why, sizeof(why), "%s: not there to probe", p->target);
	if (size && !verdict_depth_probe(p->target, size, &dp, why, sizeof(why))) {
		size_t at = 0;

		p->depth = dp.depth;
		at += snprintf(p->depth_why, sizeof(p->depth_why), "probed in %.1f s:", dp.seconds);
		for (unsigned i = 0; i < dp.n && at < sizeof(p->depth_why); i++)
			at += snprintf(p->depth_why + at, sizeof(p->depth_why) - at, " %u:%.0fk",
				       dp.depths[i], dp.iops[i] / 1000);
	} else {
		p->depth = VERDICT_DEPTH_DEFAULT;
		snprintf(p->depth_why, sizeof(p->depth_why), "not probed (%s): the default", why);
	}
	fprintf(out, "probe: io_uring O_DIRECT at depth %u (%s)\n", p->depth, p->depth_why);
	fflush(out);
	for (unsigned i = 0; i < d->nlines; i++)
		line_text(d, &d->lines[i]);
}

/* The scratch file this verdict laid out, removed (one it found is kept:
 * a later verdict reuses it). */
static void remove_scratch(const struct verdict_data *d)
{
	if (d->plan.target_ours && !d->plan.target_existed)
		unlink(d->plan.target);
}

/* The plan's runs, one after another while the budget lasts (or until
 * a stop), each one's rows appended to @csv. 0, or -errno when the CSV
 * could not be written (o->write_failed). */
static int run_lines(struct verdict_opts *o, struct verdict_data *d, FILE *csv, const char *csv_tmp,
		     const char *jobdir, double t0, FILE *out, struct err *e)
{
	double deadline = t0 + d->plan.budget_ns / 1e9 - d->plan.post_s, per_run_extra = OVERHEAD_S;
	bool have_header = false, probed = false;
	int ret;

	for (unsigned i = 0; i < d->nlines; i++) {
		struct verdict_line *l = &d->lines[i];
		double need = d->plan.ramp_s + d->plan.runtime_s + per_run_extra;

		if (*o->stop) {
			snprintf(l->skipped, sizeof(l->skipped), "interrupted");
			d->interrupted = true;
			continue;
		}
		/* The first run also lays out the file. */
		if (i == 0)
			need += d->plan.layout_s;
		if (now_s() + need > deadline) {
			snprintf(l->skipped, sizeof(l->skipped), "not run: %.0f s left of the budget, "
				 "it needs %.0f s", fmax(0, deadline - now_s()), need);
			continue;
		}
		if (l->e == JE_URING_DEPTH && !probed) {
			probe_depth(d, out);
			probed = true;
		}
		fprintf(out, "[%3.0f s] %s (%s, %s, round %u)\n", now_s() - t0, l->name,
			d->wls[l->wl].jw.name, judge_engine_name(l->e), l->round + 1);
		fflush(out);
		unlink(csv_tmp);
		run_line(o, l, csv_tmp, jobdir);
		ret = csv_append(csv_tmp, csv, &have_header);
		unlink(csv_tmp);
		/* A CSV cut short is not written: no further run is worth
		 * its time once the verdict cannot be kept whole. */
		if (ret) {
			o->write_failed = true;
			return err_set(e, -ret, "verdict: --csv=%s: %s", d->csv_path, strerror(-ret));
		}
		/* What set-up really costs here, for the runs still to come. */
		if (i > 0)
			per_run_extra = fmax(per_run_extra, l->elapsed_s - d->plan.ramp_s - d->plan.runtime_s);
	}
	return 0;
}

/* Each workload judged on the cells that ran (or left a document):
 * d->res, and o->unanswered counted. @cells has room for every line. */
static void judge_lines(struct verdict_opts *o, struct verdict_data *d, struct judge_cell *cells)
{
	unsigned ncells = 0;

	for (unsigned i = 0; i < d->nlines; i++)
		if (!d->lines[i].skipped[0] || d->lines[i].doc)
			cells[ncells++] = (struct judge_cell){ d->lines[i].wl, d->lines[i].e, d->lines[i].round,
							       d->lines[i].doc };
	for (unsigned w = 0; w < d->nwl; w++) {
		struct judge_host h = d->host;

		/* A job's own memory budget is its sentences' budget. */
		h.mem_budget = d->wls[w].mem;
		judge_workload(&d->wls[w].jw, w, cells, ncells, &h, &d->res[w]);
		if (judge_unanswered(&d->res[w]))
			o->unanswered++;
	}
}

int verdict_main(struct verdict_opts *o, FILE *out, struct err *e)
{
	struct verdict_data d = { 0 };
	struct judge_cell *cells = NULL;
	const char *outdir = o->outdir ? o->outdir : ".";
	char csv_tmp[PATH_MAX], jobdir[PATH_MAX], pd[PATH_MAX];
	double t0 = now_s();
	FILE *csv = NULL;
	int ret;

	d.cmdline = o->cmdline;
	ret = setup(o, &d, e);
	if (!ret && !o->njobfiles)
		ret = fixed_wls(&d) ? err_set(e, ENOMEM, "verdict: out of memory") : 0;
	if (ret)
		goto out;
	snprintf(d.json_path, sizeof(d.json_path), "%s/verdict.json", outdir);
	snprintf(d.html_path, sizeof(d.html_path), "%s/verdict.html", outdir);
	snprintf(d.csv_path, sizeof(d.csv_path), "%s", o->csv ? o->csv : "");
	if (!o->csv)
		snprintf(d.csv_path, sizeof(d.csv_path), "%s/verdict.csv", outdir);
	snprintf(jobdir, sizeof(jobdir), "%s/verdict-jobs", outdir);
	snprintf(csv_tmp, sizeof(csv_tmp), "%s/.verdict-run.%d.csv", outdir, (int)getpid());
	d.self = "faultline";
	/* --output names a folder, made if it does not exist yet (its
	 * parent must). */
	if ((mkdir(outdir, 0755) && errno != EEXIST) || (mkdir(jobdir, 0755) && errno != EEXIST)) {
		ret = err_set(e, errno, "verdict: --output=%s: %s", outdir, strerror(errno));
		goto out;
	}
	if (o->njobfiles) {
		ret = verdict_jobs_prepare(&d, jobdir, e);
		if (ret)
			goto out;
	}
	ret = make_lines(&d);
	if (ret) {
		err_set(e, -ret, "verdict: out of memory");
		goto out;
	}
	csv = fopen(d.csv_path, "w");
	if (!csv) {
		ret = err_set(e, errno, "verdict: --csv=%s: %s", d.csv_path, strerror(errno));
		goto out;
	}
	verdict_out_plan(out, &d);
	ret = run_lines(o, &d, csv, csv_tmp, jobdir, t0, out, e);
	if (ret)
		goto out;
	ret = fclose(csv) ? -errno : 0;
	csv = NULL;
	if (ret) {
		err_set(e, -ret, "verdict: --csv=%s: %s", d.csv_path, strerror(-ret));
		o->write_failed = true;
		goto out;
	}

	cells = calloc(d.nlines ? d.nlines : 1, sizeof(*cells));
	d.res = calloc(d.nwl, sizeof(*d.res));
	if (!cells || !d.res) {
		ret = err_set(e, ENOMEM, "verdict: out of memory");
		goto out;
	}
	judge_lines(o, &d, cells);
	d.nfacts = judge_host_facts(&d.host, d.res, d.nwl, d.facts, sizeof(d.facts) / sizeof(d.facts[0]));
	remove_scratch(&d);
	d.elapsed_s = now_s() - t0;
	verdict_out_text(out, &d);
	ret = verdict_out_json(&d, e);
	if (ret) {
		o->write_failed = true;
		goto out;
	}
	if (verdict_out_html(&d, datadir_plot(pd, sizeof(pd), NULL), e))
		fprintf(stderr, "faultline: verdict: %s\n", e->msg);
	d.elapsed_s = now_s() - t0;
	fprintf(out, "verdict: done in %.0f s of a %.0f s budget%s\n", d.elapsed_s,
		d.plan.budget_ns / 1e9, d.plan.target_ours && !d.plan.target_existed ?
		"; the scratch file was removed (the job files lay it out again)" : "");
	ret = 0;
out:
	if (csv)
		fclose(csv);
	if (ret)
		remove_scratch(&d);
	free(cells);
	for (unsigned i = 0; i < d.nlines; i++) {
		free(d.lines[i].text);
		json_decref(d.lines[i].doc);
	}
	free(d.lines);
	free(d.res);
	json_decref(d.checksys);
	if (o->njobfiles)
		verdict_jobs_free(&d);
	else
		free(d.wls);
	return ret;
}
