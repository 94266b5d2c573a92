/*
 * jobrun.c - a job's life at run time; see jobrun.h.
 *
 * Prepare opens and lays out the targets and builds the workers' offset
 * generators; ready drops the cache, reserves memory, sets up the
 * engine's shared state, creates the cgroup and its worker process and
 * prewarms; go starts the crew on the group's clock; join waits and
 * gives everything back.
 */
#include "run/jobrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "telemetry/cgroup.h"
#include "telemetry/devinfo.h"
#include "telemetry/procfs.h"
#include "engines/atomicw.h"
#include "engines/devsafety.h"
#include "engines/engine.h"
#include "lib/latclock.h"
#include "job/workloadcfg.h"
#include "run/enginecfg.h"
#include "run/loop.h"
#include "run/memneed.h"
#include "run/placement.h"
#include "run/prefetch.h"
#include "engines/uncached.h"

/* Slot buffers are page-aligned so O_DIRECT and registered buffers
 * accept them. */
#define BUF_ALIGN 4096

#define DROP_CACHES_PATH "/proc/sys/vm/drop_caches"

unsigned job_run_nstats(const struct job *job)
{
	struct job_slots s;

	worker_slots(job, &s);
	return s.total;
}

/* Bytes of target @t a job uses: size, size=N%, or the rest from offset. */
static int region_len(const struct job *j, const char *path, uint64_t *len, struct err *e)
{
	uint64_t dev_size;
	int ret;

	if (!j->size_pct) {
		*len = j->size;
		return 0;
	}
	ret = target_probe_size(path, &dev_size, e);
	if (ret)
		return ret;
	*len = dev_size > j->offset ? (dev_size - j->offset) / 100 * j->size_pct : 0;
	return 0;
}

/*
 * Target @path's region [@base, @base + @len). A write job's: a block
 * device only when devsafety clears it (not mounted or in use; no
 * filesystem, partition table or RAID signature unless
 * allow_destructive), then opened O_RDWR with sync='s O_DSYNC or O_SYNC.
 * A read job's: read-only, always, with its consents (overwrite,
 * allow_file_create).
 */
static int open_target(const struct job *j, struct target *t, const char *path, uint64_t base,
		       uint64_t len, const struct target_hooks *hooks, struct err *e)
{
	unsigned how = 0;
	int ret;

	if (job_writes(j)) {
		ret = devsafety_check(path, j->allow_destructive, e);
		/* Missing: a regular file target_open creates. */
		if (ret && ret != -ENOENT)
			return ret;
		how = TARGET_O_WRITE;
		if (j->sync == SYNC_DSYNC)
			how |= TARGET_O_DSYNC;
		else if (j->sync == SYNC_SYNC)
			how |= TARGET_O_SYNC;
	} else if (j->overwrite) {
		how = TARGET_O_EXTEND;
	}
	if (!j->allow_file_create)
		how |= TARGET_O_NOCREATE;
	return target_open_for(t, path, base, len, job_bs_smallest(j), j->direct, how, hooks, e);
}

/* The host's MemAvailable, for an engine that sizes memory of its own
 * (the pools); 0 when /proc/meminfo cannot say. */
static uint64_t mem_available(void)
{
	struct procfs_src src;
	struct procfs_meminfo mi;
	uint64_t v = 0;

	if (procfs_src_open(&src, procfs_root(), "meminfo") == 0) {
		ssize_t n = procfs_src_read(&src);

		if (n > 0 && procfs_parse_meminfo(src.buf, (size_t)n, &mi) == 0 &&
		    procfs_mem_has(&mi, PROCFS_MEM_AVAILABLE))
			v = mi.bytes[PROCFS_MEM_AVAILABLE];
		procfs_src_close(&src);
	}
	return v;
}

static int open_targets(struct job_run *jr, struct err *e)
{
	const struct job *j = jr->job;
	char path[4096];
	unsigned n = 0;
	int ret;

	if (jr->crew.wk.ops->flags & ENGINE_F_NO_TARGET) {
		/* One virtual target so the generator has a region. A null
		 * job with no size runs filesize x nrfiles (fio's size then),
		 * else one TiB of requests per pass; a replay's region
		 * reaches its furthest request. */
		jr->ntargets = 1;
		jr->targets = calloc(1, sizeof(*jr->targets));
		if (!jr->targets)
			return err_set(e, ENOMEM, "out of memory");
		jr->targets[0].path = strdup("(null engine)");
		jr->targets[0].fd = jr->targets[0].fd_direct = -1;
		jr->targets[0].base = jr->replaying ? 0 : j->offset;
		jr->targets[0].len = jr->replaying ? jr->replay.end[0] : j->size ? j->size :
				     j->filesize ? j->filesize * j->nrfiles : 1ull << 40;
		/* filecreate: a block of the requests' size per file */
		if (jr->crew.wk.ops->flags & ENGINE_F_CREATES)
			jr->targets[0].len = (uint64_t)engine_filecreate_files(&jr->crew.wk.ej) *
					     job_bs_min(j, job_writes(j) ? JOB_DIR_WRITE : JOB_DIR_READ);
		jr->targets[0].dev_size = jr->targets[0].base + jr->targets[0].len;
		return 0;
	}

	if (jr->replaying) {
		/* The files the logs name, each from 0 to its furthest
		 * request: an existing one must be that long, a missing one
		 * is laid out (replay_redirect to a scratch path). */
		jr->targets = calloc(jr->replay.npaths, sizeof(*jr->targets));
		if (!jr->targets)
			return err_set(e, ENOMEM, "out of memory");
		for (unsigned i = 0; i < jr->replay.npaths; i++) {
			ret = open_target(j, &jr->targets[i], jr->replay.paths[i], 0, jr->replay.end[i],
					  jr->hooks, e);
			if (ret)
				return err_wrap(e, "read_iolog");
			jr->ntargets = i + 1;
		}
		return 0;
	}

	if (j->filename) {
		const char *p = j->filename;

		for (const char *q = p; *q; q++)
			n += *q == ':';
		n++;
		jr->targets = calloc(n, sizeof(*jr->targets));
		if (!jr->targets)
			return err_set(e, ENOMEM, "out of memory");
		for (unsigned i = 0; i < n; i++) {
			const char *end = strchr(p, ':');
			size_t l = end ? (size_t)(end - p) : strlen(p);
			uint64_t len;

			if (l == 0 || l >= sizeof(path))
				return err_set(e, EINVAL, "filename: empty or overlong path in '%s'", j->filename);
			memcpy(path, p, l);
			path[l] = '\0';
			ret = region_len(j, path, &len, e);
			if (!ret)
				ret = open_target(j, &jr->targets[i], path, j->offset, len, jr->hooks, e);
			if (ret)
				return ret;
			jr->ntargets = i + 1;
			p = end ? end + 1 : p + l;
		}
		return 0;
	}

	/* Scratch files: each worker gets its own nrfiles, as in fio. */
	n = j->numjobs * j->nrfiles;
	jr->targets = calloc(n, sizeof(*jr->targets));
	if (!jr->targets)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned i = 0; i < n; i++) {
		uint64_t fsize = j->filesize ? j->filesize : j->size / j->nrfiles;

		snprintf(path, sizeof(path), "%s/%s.%u.%u", j->directory ? j->directory : ".",
			 j->name, i / j->nrfiles, i % j->nrfiles);
		ret = open_target(j, &jr->targets[i], path, j->offset, fsize, jr->hooks, e);
		if (ret)
			return ret;
		jr->ntargets = i + 1;
	}
	return 0;
}

static uint64_t pick_seed(const struct job *j)
{
	uint64_t seed;

	if (j->randseed_set)
		return j->randseed;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = now_ns();
	return seed;
}

/*
 * read_iolog: the logs, read and turned into requests before the targets
 * are opened (they are the files the logs name). Writes and syncs are
 * left out of a read job's replay, and trims out of every replay, with a
 * warning that counts them, as fio's read-only mode leaves writes out; a
 * job whose rw= writes replays the log's writes and syncs (fio's replay
 * takes its directions from the log; faultline asks for the consent).
 */
static int load_replay(struct job_run *jr, struct err *e)
{
	const struct job *j = jr->job;
	const bool null = jr->crew.wk.ops->flags & ENGINE_F_NO_TARGET;
	struct replay_opts o = {
		/* The null engine has one virtual target: every file is it. */
		.redirect = null ? "(null engine)" : j->replay_redirect,
		.skip = j->replay_skip,
		.align = j->replay_align,
		.scale = j->replay_scale,
		.time_scale = j->replay_time_scale,
		.no_stall = j->replay_no_stall,
		/* A job that writes (its rw= says so) replays the log's
		 * writes and syncs too; a read job never writes. */
		.writes = job_writes(j),
		/* vmcache serves a read in place, its pages latched at once. */
		.span_page = (jr->crew.wk.ops->flags & ENGINE_F_REGION) ? j->pool_page : 0,
	};
	char msg[300];
	size_t out[IOLOG_NOPS] = { 0 };
	int ret, w = 0;

	ret = replay_set_load(&jr->replay, j->read_iolog, &o, e);
	if (ret)
		return ret;
	jr->replaying = true;
	for (unsigned i = 0; i < jr->replay.nr; i++)
		for (unsigned op = 0; op < IOLOG_NOPS; op++)
			out[op] += jr->replay.r[i].left_out[op];
	for (unsigned op = 0; op <= IOLOG_DATASYNC; op++)
		if (out[op] && w < (int)sizeof(msg))
			w += snprintf(msg + w, sizeof(msg) - (size_t)w, "%s%zu %s", w ? ", " : "", out[op],
				      iolog_op_name(op));
	if (w && jr->hooks && jr->hooks->warn) {
		char line[600];

		snprintf(line, sizeof(line), "job '%s': read_iolog: left out of the replay: %s (%s)", j->name,
			 msg, job_writes(j) ? "no engine here trims; replay_skip leaves out what it names"
					    : "a read job replays the log's reads (a writing rw= replays its writes and "
					      "syncs); replay_skip leaves out what it names");
		jr->hooks->warn(jr->hooks->arg, line);
	}
	return 0;
}

/*
 * What only the targets can tell about a replay: with direct=1 every
 * request aligned to the logical block size. (A pool reads its pages
 * with O_DIRECT itself, whatever the request's alignment, and serves a
 * request across pages page by page.)
 */
static int check_replay(struct job_run *jr, struct err *e)
{
	const struct job *j = jr->job;
	const bool pool = jr->crew.wk.ops->flags & ENGINE_F_POOL;
	const uint64_t frames = j->pool_page ? j->pool_size / j->pool_page : 0;
	const uint64_t span = jr->replay.max_read_pages;

	/*
	 * vmcache latches every page of a read at once (one run of its
	 * region, served in place), and a thread that misses on the next
	 * page while holding the others needs a page the pool can give up.
	 * Each of numjobs threads may hold such a read and load one page
	 * more: unless the pool has that many, they can wait on each other
	 * for ever. (bufpool copies a long read out page by page, one pin
	 * at a time: jobcheck's two pages a thread are enough there.)
	 */
	if (span > 1 && (uint64_t)j->numjobs * (span + 1) > frames)
		return err_set(e, EINVAL, "read_iolog: %s reads %llu pages of pool_page=%llu, which "
			       "ioengine=%s holds at once; numjobs=%u thread%s each holding such a read "
			       "and loading one page more need %llu pages, and pool_size=%llu holds %llu: "
			       "pool_size=%llu or more, or a larger pool_page",
			       jr->replay.max_read_at, (unsigned long long)span,
			       (unsigned long long)j->pool_page, jr->crew.wk.ops->name, j->numjobs,
			       j->numjobs == 1 ? "" : "s", (unsigned long long)(j->numjobs * (span + 1)),
			       (unsigned long long)j->pool_size, (unsigned long long)frames,
			       (unsigned long long)(j->numjobs * (span + 1) * j->pool_page));
	if (!j->direct || pool)
		return 0;
	for (unsigned i = 0; i < jr->replay.nr; i++) {
		const struct replay *r = &jr->replay.r[i];

		for (size_t k = 0; k < r->n; k++) {
			const struct replay_req *q = &r->req[k];
			const struct target *t = &jr->targets[q->target];

			if (q->off % t->lbs || q->len % t->lbs)
				return err_set(e, EINVAL, "read_iolog: direct=1 needs requests aligned to %s's "
					       "logical block size %u; request %zu reads %u bytes at %llu "
					       "(replay_align=%u aligns offsets)", t->path, t->lbs, k + 1, q->len,
					       (unsigned long long)q->off, t->lbs);
		}
	}
	return 0;
}

/* Features that need permission are refused before anything runs. */
/* Whether this process may use the realtime I/O class (the kernel's
 * ioprio_check_cap: CAP_SYS_ADMIN or CAP_SYS_NICE). */
static bool may_realtime_io(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };

	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return (d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))) ||
	       (d[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32)));
}

static int check_privileges(const struct job *j, const struct workload_job *wj, struct err *e)
{
	if (prio_job_realtime(wj) && !may_realtime_io())
		return err_set(e, EPERM, "the realtime I/O priority class (prioclass=1, or "
			       "cmdprio_class 1, fio's default for cmdprio_percentage and "
			       "cmdprio_bssplit) needs CAP_SYS_ADMIN or CAP_SYS_NICE, which this "
			       "process lacks; the kernel would refuse every such request "
			       "(EPERM). Use class 2 (best effort) or 3 (idle)");
	if (j->mem_limit) {
		struct cgroup_info ci;

		cgroup_probe(&ci, true);
		if (!ci.can_create)
			return err_set(e, EPERM, "mem_limit=%lluMiB: cannot create a memory cgroup here: %s",
				       (unsigned long long)(j->mem_limit >> 20), ci.why);
	}
	if (j->drop_caches && access(DROP_CACHES_PATH, W_OK) < 0)
		return err_set(e, EPERM, "drop_caches=1: %s is not writable (%s); it needs root",
			       DROP_CACHES_PATH, strerror(errno));
	if (j->reserve_mem) {
		/* The job's own needs: its buffers, and a margin per thread
		 * for stacks and the engine's rings. */
		uint64_t needs = (uint64_t)j->numjobs * ((uint64_t)j->iodepth * job_bs_largest(j) + (16ull << 20));

		return reserve_check(j->reserve_mem, needs, e);
	}
	return 0;
}

/* The kernel's default read-ahead (VM_READAHEAD_PAGES, 128 KiB), for a
 * target whose device shows no read_ahead_kb. */
#define DEFAULT_READ_AHEAD (128u << 10)

/*
 * mem_limit: a limit the kernel cannot live within is refused here,
 * before anything runs (the parts are memneed.h's): the worker
 * process's charge, measured by a dry start at the job's thread count,
 * the page tables of its mappings, and the read-ahead windows its reads
 * can have in flight, from the largest read_ahead_kb of its targets'
 * devices.
 */
static int check_mem_limit(struct job_run *jr, struct err *e)
{
	const struct job *j = jr->job;
	const struct engine_ops *ops = jr->crew.wk.ops;
	const struct job_slots *sl = &jr->crew.wk.slots;
	const bool files = !(ops->flags & (ENGINE_F_NO_TARGET | ENGINE_F_POOL));
	const bool mapped = files && (ops->flags & ENGINE_F_MAPPED);
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct mem_need m = { 0 };
	char name[64], dev[sizeof(m.dev)];
	int ret;

	cgroup_job_name(name, sizeof(name), jr->index);
	ret = jobhost_measure(&jr->crew, name, &m.charge, e);
	if (ret)
		return ret;
	m.tasks = j->numjobs + sl->noffload + sl->nprefetch;
	m.stock = mem_need_stock((unsigned)sysconf(_SC_NPROCESSORS_ONLN), m.tasks, page);
	mem_need_windows(j, mapped, files && (mapped || !j->direct), m.tasks, &m);
	for (unsigned i = 0; files && i < jr->ntargets; i++) {
		int kb = devinfo_read_ahead_kb(devinfo_sysroot(), jr->targets[i].dev, dev, sizeof(dev));

		if (kb >= 0 && (!m.window_known || (uint64_t)kb << 10 > m.window)) {
			m.window = (uint64_t)kb << 10;
			m.window_known = 1;
			snprintf(m.dev, sizeof(m.dev), "%s", dev);
		}
		/* Each address space maps every target: one for threads, one
		 * per worker process. */
		if (mapped)
			m.pagetables += mem_need_pagetables(jr->targets[i].len, page) * (j->thread ? 1 : j->numjobs);
	}
	if (!m.window_known) {
		m.window = DEFAULT_READ_AHEAD;
		snprintf(m.dev, sizeof(m.dev), "none readable: the kernel's default");
	}
	return mem_need_check(j, &m, e);
}

/* The work every worker of the job shares: its engine and what the engine
 * sees, the depth, the batches it submits and reaps. */
static int prepare_work(struct job_run *jr, const struct job *job, struct thread_stats *stats,
			int *stop, struct err *e)
{
	struct crew *c = &jr->crew;
	struct work *wk = &c->wk;
	int ret;

	wk->job = job;
	wk->stop = stop;
	wk->stats = stats;
	wk->job_stop = &stats[0].job_stop;
	worker_slots(job, &wk->slots);
	wk->bs_stride = (job_bs_largest(job) + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN;
	enginecfg_resolve(&wk->ej, job);
	workloadcfg_resolve(&wk->wj, job);
	wk->ops = engine_find(job->ioengine);
	if (!wk->ops)
		return err_set(e, EINVAL, "ioengine=%s: no such engine", job->ioengine);
	ret = engine_check_ops(wk->ops, enginecfg_ops(job), e);
	if (ret)
		return ret;
	wk->ej.depth = (wk->ops->flags & ENGINE_F_ASYNC) ? job->iodepth : 1;
	if (job->loop)
		wk->ej.depth *= job->loop;
	/* A synchronous engine submits nothing: one request at a time. */
	wk->batch = (wk->ops->flags & ENGINE_F_ASYNC) ? worker_batch_resolve(job, wk->ej.depth) : 1;
	/* fio's: max below min is the min; faultline's unset max is the
	 * whole depth, where fio's is the min */
	wk->reap_min = job->iodepth_batch_complete_min < wk->ej.depth ? job->iodepth_batch_complete_min
								    : wk->ej.depth;
	wk->reap_max = job->iodepth_batch_complete_max ? job->iodepth_batch_complete_max : wk->ej.depth;
	if (wk->reap_max < wk->reap_min)
		wk->reap_max = wk->reap_min;
	if (wk->reap_max > wk->ej.depth || !wk->reap_max)
		wk->reap_max = wk->ej.depth;
	c->nworkers = job->numjobs;
	c->probe = job->cpu_probe ? &stats[wk->slots.probe] : NULL;

	ret = placement_check(job, e);
	if (ret)
		return ret;
	ret = check_privileges(job, &wk->wj, e);
	if (ret)
		return ret;
	ret = prio_plan_build(&wk->prio, &wk->wj, e);
	if (ret)
		return ret;
	wk->prio_count = wk->prio.on && job->log_prio;
	return prefetch_check(job, e);
}

/* atomic=1: RWF_ATOMIC where the target takes it, else a warning and
 * plain writes (the man page says so). */
static void probe_atomic(struct job_run *jr)
{
	const struct job *job = jr->job;

	for (unsigned i = 0; job->atomic && job_writes(job) && i < jr->ntargets; i++) {
		struct target *t = &jr->targets[i];
		char why[200];

		if (!job->direct || t->fd_direct < 0)
			snprintf(why, sizeof(why), "RWF_ATOMIC needs direct=1");
		else
			t->atomic = atomicw_probe(t->fd_direct, job_bs_max(job, JOB_DIR_WRITE), why,
						  sizeof(why));
		if (!t->atomic && jr->hooks && jr->hooks->warn) {
			char line[600];

			snprintf(line, sizeof(line), "job '%s': atomic=1: %s: %s; its writes go without "
				 "RWF_ATOMIC, untorn only as far as the device makes them", job->name,
				 t->path, why);
			jr->hooks->warn(jr->hooks->arg, line);
		}
	}
}

/* The targets, open and checked against what the job asks of them, and
 * the engine's own look at them (its prepare hook): everything that can
 * refuse a job does so before any job runs (docs/design.md, A run's
 * life). */
static int prepare_targets(struct job_run *jr, struct err *e)
{
	const struct job *job = jr->job;
	struct work *wk = &jr->crew.wk;
	int ret;

	if (job->read_iolog) {
		ret = load_replay(jr, e);
		if (ret)
			return ret;
		wk->replay = &jr->replay;
		/* Slot buffers hold the longest request. */
		if (jr->replay.max_len > wk->ej.req_max) {
			wk->ej.req_max = jr->replay.max_len;
			wk->bs_stride = ((uint64_t)jr->replay.max_len + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN;
		}
	}
	ret = open_targets(jr, e);
	if (ret)
		return ret;
	wk->ej.targets = jr->targets;
	wk->ej.ntargets = jr->ntargets;
	wk->ej.mem_available = mem_available();
	/* uncached=1 where the kernel or the filesystem lacks RWF_DONTCACHE:
	 * refused now, naming the kernel, before anything runs. */
	for (unsigned i = 0; job->uncached && i < jr->ntargets; i++) {
		ret = uncached_probe(jr->targets[i].fd, jr->targets[i].base, jr->targets[i].path, e);
		if (ret)
			return ret;
	}
	probe_atomic(jr);
	if (jr->replaying) {
		ret = check_replay(jr, e);
		if (ret)
			return ret;
	}
	/* Whole requests only: a region is used up to its last full block
	 * (of the smallest size, with several; a replay's requests are the
	 * log's, whatever their size). */
	for (unsigned i = 0; i < jr->ntargets && !jr->replaying; i++) {
		struct target *t = &jr->targets[i];
		uint64_t bs = job_bs_smallest(job);

		t->len -= t->len % bs;
		if (t->len == 0)
			return err_set(e, EINVAL, "%s: the region used (offset %llu) is smaller than bs=%llu",
				       t->path, (unsigned long long)job->offset,
				       (unsigned long long)bs);
	}
	return wk->ops->prepare ? wk->ops->prepare(&wk->ej, e) : 0;
}

/* Worker @i's offsets: its share of @regions, as the job's shape says. */
static int prepare_worker(struct job_run *jr, unsigned i, struct thread_stats *stats,
			  struct gen_region *regions, struct err *e)
{
	const struct job *job = jr->job;
	struct crew *c = &jr->crew;
	struct work *wk = &c->wk;
	struct worker *w = &c->workers[i];
	const bool scratch = !job->filename && !job->read_iolog && !(wk->ops->flags & ENGINE_F_NO_TARGET);
	struct gen_config gc = {
		/* The generator knows sequential and random; whether
		 * a request reads or writes is the worker's draw. */
		.rw = job_rw_random(job->rw) ? RW_RANDREAD : RW_READ,
		/* Sequential writers each take their own slice: two
		 * threads writing the same blocks at once would tear
		 * them (writes.h). */
		.scan = job_writes(job) ? SCAN_PARTITIONED : job->scan,
		.fst = job->file_service_type,
		.dist = job->random_distribution,
		.zipf_theta = job->zipf_theta,
		.bs = job->bs,
		.scan_chunk = job->scan_chunk,
		.seed = wk->seed,
		/* Scratch files belong to one worker: it is the only
		 * one slicing or scanning them. */
		.worker = scratch ? 0 : i,
		.nworkers = scratch ? 1 : c->nworkers,
		.wrap = job->time_based,
		/* fio's io_size is a loop's bytes. */
		.io_limit = job->io_size * (job->loops ? job->loops : 1),
		.passes = job->loops,
	};

	gen_config_shape(&gc, &wk->wj);
	w->wk = wk;
	w->id = i;
	w->st = &stats[i];
	w->tfirst = scratch ? i * job->nrfiles : 0;
	w->tcount = scratch ? job->nrfiles : jr->ntargets;
	w->nshare = scratch ? 1 : c->nworkers;
	if (job_writes(job))
		stats_init_writes(w->st);
	/* Scratch files are private to a worker: a shared cursor
	 * over them would be one worker's anyway. */
	return gen_init(&w->gen, &gc, w->tcount, regions + w->tfirst, jr->cursors + w->tfirst, e);
}

/* The workers and their offsets over the targets, the shared cursors,
 * the loop's streams, a verify state file's blocks. */
static int prepare_workers(struct job_run *jr, struct thread_stats *stats, struct err *e)
{
	const struct job *job = jr->job;
	struct crew *c = &jr->crew;
	struct work *wk = &c->wk;
	struct gen_region *regions;
	int ret = 0;

	/* Shared, so that worker processes (thread=0) take their pieces
	 * from one cursor as threads do; page-aligned, so line-aligned. */
	jr->cursors_len = (size_t)jr->ntargets * sizeof(*jr->cursors);
	jr->cursors = mmap(NULL, jr->cursors_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (jr->cursors == MAP_FAILED)
		jr->cursors = NULL;
	c->workers = worker_array_new(c->nworkers);
	regions = calloc(jr->ntargets, sizeof(*regions));
	if (!jr->cursors || !c->workers || !regions) {
		free(regions);
		return err_set(e, ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < jr->ntargets; i++) {
		regions[i].base = jr->targets[i].base;
		regions[i].len = jr->targets[i].len;
	}
	wk->seed = pick_seed(job);
	for (unsigned i = 0; i < c->nworkers && !ret; i++)
		ret = prepare_worker(jr, i, stats, regions, e);
	free(regions);
	if (ret)
		return ret;
	if (job->loop) {
		/* The loop's streams are worker 0's targets. */
		ret = loop_prepare(&wk->loop, job, jr->targets, c->workers[0].tfirst,
				   c->workers[0].tcount, wk->seed, e);
		if (ret)
			return ret;
	}
	return work_vstate_load(wk, c->workers, c->nworkers, e);
}

int job_run_prepare(struct job_run *jr, const struct job *job, unsigned index,
		    struct thread_stats *stats, int *stop,
		    const struct target_hooks *hooks, struct err *e)
{
	int ret;

	memset(jr, 0, sizeof(*jr));
	jobhost_init(&jr->host);
	jr->job = job;
	jr->index = index;
	jr->hooks = hooks;
	ret = prepare_work(jr, job, stats, stop, e);
	if (ret)
		return ret;
	ret = prepare_targets(jr, e);
	if (!ret)
		ret = prepare_workers(jr, stats, e);
	if (!ret && job->mem_limit)
		ret = check_mem_limit(jr, e);
	if (ret)
		job_run_destroy(jr);
	return ret;
}

/* Cold start and access-pattern advice, applied just before the job runs
 * (not at prepare time: an earlier stonewalled job may have warmed the
 * cache since). */
static int prepare_cache(struct job_run *jr, struct err *e)
{
	const struct job *j = jr->job;
	static const int fadv[] = {
		[FADV_M_NORMAL] = POSIX_FADV_NORMAL,
		[FADV_M_RANDOM] = POSIX_FADV_RANDOM,
		[FADV_M_SEQUENTIAL] = POSIX_FADV_SEQUENTIAL,
	};

	if (j->drop_caches) {
		int fd;

		sync();
		fd = open(DROP_CACHES_PATH, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "3", 1) != 1) {
			int err = errno;

			if (fd >= 0)
				close(fd);
			return err_set(e, err, "drop_caches: writing %s: %s", DROP_CACHES_PATH, strerror(err));
		}
		close(fd);
	}
	if (jr->crew.wk.ops->flags & ENGINE_F_NO_TARGET)
		return 0;
	for (unsigned i = 0; i < jr->ntargets; i++) {
		struct target *t = &jr->targets[i];
		struct err we = { 0 };

		if (j->invalidate && target_invalidate(t, &we) < 0 && jr->hooks && jr->hooks->warn)
			jr->hooks->warn(jr->hooks->arg, we.msg);
		if (j->fadvise != FADV_M_NORMAL)
			posix_fadvise(t->fd, (off_t)t->base, (off_t)t->len, fadv[j->fadvise]);
	}
	return 0;
}

/* prewarm: read every target's region once through the page cache, so
 * the job starts warm. Runs in the process the workers will run in, so
 * that under mem_limit the pages are charged to the job's cgroup. An
 * engine with a pool of its own fills that instead, in its job_setup. */
#define PREWARM_CHUNK (1u << 20)

static int prewarm(struct job_run *jr, struct err *e)
{
	uint8_t *buf;

	if (!jr->job->prewarm || (jr->crew.wk.ops->flags & (ENGINE_F_NO_TARGET | ENGINE_F_POOL)))
		return 0;
	buf = malloc(PREWARM_CHUNK);
	if (!buf)
		return err_set(e, ENOMEM, "prewarm: out of memory");
	for (unsigned i = 0; i < jr->ntargets; i++) {
		const struct target *t = &jr->targets[i];

		for (uint64_t off = 0; off < t->len && !*jr->crew.wk.stop;) {
			size_t n = t->len - off < PREWARM_CHUNK ? (size_t)(t->len - off) : PREWARM_CHUNK;
			ssize_t r = pread(t->fd, buf, n, (off_t)(t->base + off));

			if (r <= 0) {
				int err = r < 0 ? errno : EIO;

				free(buf);
				return err_set(e, err, "prewarm: reading %s at %llu: %s", t->path,
					       (unsigned long long)(t->base + off), strerror(err));
			}
			off += (uint64_t)r;
		}
	}
	free(buf);
	return 0;
}

/* prewarm, as jobhost_fork's @prepare: in the worker process. */
static int prewarm_cb(void *arg, struct err *e)
{
	return prewarm(arg, e);
}

int job_run_ready(struct job_run *jr, struct err *e)
{
	const struct job *j = jr->job;
	const struct engine_ops *ops = jr->crew.wk.ops;
	int ret;

	ret = prepare_cache(jr, e);
	if (ret)
		return ret;
	if (j->reserve_mem) {
		ret = reserve_take(&jr->host.reserve, j->reserve_mem, e);
		if (ret)
			return ret;
		if (jr->hooks && jr->hooks->warn) {
			char msg[160];

			snprintf(msg, sizeof(msg), "job '%s': reserve_mem=%lluMiB populated and locked in %.1f s (not part of the run)",
				 j->name, (unsigned long long)(j->reserve_mem >> 20),
				 (double)jr->host.reserve.populate_ns / 1e9);
			jr->hooks->warn(jr->hooks->arg, msg);
		}
	}
	/* With thread=0 each worker process sets up its own (crew.c). */
	if (ops->job_setup && j->thread) {
		ret = ops->job_setup(&jr->crew.wk.ej, e);
		if (ret)
			goto fail;
		jr->setup_done = true;
	}
	if (j->mem_limit) {
		char name[64];

		cgroup_job_name(name, sizeof(name), jr->index);
		ret = jobhost_cgroup(&jr->host, name, j->mem_limit, e);
		if (!ret)
			ret = jobhost_fork(&jr->host, &jr->crew, prewarm_cb, jr, e);
		if (ret)
			goto fail;
		return 0;
	}
	ret = prewarm(jr, e);
	if (!ret)
		ret = crew_lead(&jr->crew, e);
	if (ret)
		goto fail;
	return 0;
fail:
	job_run_join(jr);
	return ret;
}

static void set_clock(struct job_run *jr, uint64_t start_ns)
{
	const struct job *j = jr->job;
	struct work *wk = &jr->crew.wk;

	wk->start_ns = start_ns;
	/* startdelay is no part of the measured window either: the
	 * controller takes the job's base where both have passed. */
	if (j->ramp_ns || j->startdelay_ns)
		wk->ramp_end_ns = start_ns + j->startdelay_ns + j->ramp_ns;
	if (j->runtime_ns)
		wk->deadline_ns = start_ns + j->startdelay_ns + j->ramp_ns + j->runtime_ns;
}

int job_run_go(struct job_run *jr, uint64_t start_ns, struct err *e)
{
	int ret;

	set_clock(jr, start_ns);
	if (jobhost_forked(&jr->host)) {
		ret = jobhost_go(&jr->host, &jr->crew, e);
	} else {
		crew_lead_go(&jr->crew);
		ret = 0;
	}
	if (ret) {
		job_run_join(jr);
		return ret;
	}
	crew_probe_start(&jr->crew);
	return 0;
}

pid_t job_run_leader(const struct job_run *jr)
{
	return jobhost_forked(&jr->host) ? jr->host.child : jr->crew.leader_tid;
}

int job_run_start(struct job_run *jr, struct err *e)
{
	int ret = job_run_ready(jr, e);

	return ret ? ret : job_run_go(jr, now_ns(), e);
}

void job_run_join(struct job_run *jr)
{
	const struct engine_ops *ops = jr->crew.wk.ops;

	if (jobhost_forked(&jr->host))
		jobhost_wait(&jr->host, &jr->crew);
	else
		crew_lead_join(&jr->crew);
	crew_probe_stop(&jr->crew);
	if (jr->setup_done && ops->job_teardown)
		ops->job_teardown(&jr->crew.wk.ej);
	jr->setup_done = false;
	jobhost_release(&jr->host);
}

bool job_run_finished(struct job_run *jr)
{
	return jobhost_exited(&jr->host) || crew_done(&jr->crew);
}

void job_run_destroy(struct job_run *jr)
{
	struct crew *c = &jr->crew;

	loop_destroy(c->wk.loop);
	c->wk.loop = NULL;
	work_vstate_free(&c->wk, c->nworkers);
	if (c->workers) {
		for (unsigned i = 0; i < c->nworkers; i++)
			gen_free(&c->workers[i].gen);
		free(c->workers);
	}
	for (unsigned i = 0; i < jr->ntargets; i++)
		target_close(&jr->targets[i]);
	free(jr->targets);
	if (jr->cursors)
		munmap(jr->cursors, jr->cursors_len);
	replay_set_free(&jr->replay);
	jr->replaying = false;
	c->workers = NULL;
	jr->targets = NULL;
	jr->cursors = NULL;
	jr->ntargets = 0;
}
