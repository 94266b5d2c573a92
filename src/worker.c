/*
 * worker.c - the one worker loop every engine shares.
 *
 * A worker takes (target, offset) pairs from its generator, hands them
 * to the engine, consumes the bytes with touch, and counts. Two loops:
 * a synchronous one (psync, mmap, null: one clock read per request,
 * chained so the end of one request is the start of the next) and an
 * asynchronous one (io_uring, libaio: a batch of iodepth requests in
 * flight, one clock read per batch issued and per batch reaped).
 *
 * Hot path rules: no locks, no shared atomics, no allocation, no system
 * call beyond the I/O itself. Counters go to the worker's own
 * thread_stats with plain (relaxed) stores.
 */
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loop.h"
#include "placement.h"
#include "prefetch.h"
#include "touch.h"

/* Slot buffers are page-aligned so O_DIRECT and registered buffers
 * accept them. */
#define BUF_ALIGN 4096

#define DROP_CACHES_PATH "/proc/sys/vm/drop_caches"

/* A request that returns no bytes at all is an error, but an engine
 * reporting a short read is treated the same way: the region was laid
 * out to be fully readable, so a short read means the target shrank. */

/* ---- SIGBUS: an mmap access whose page cannot be read ---------------- */

static __thread sigjmp_buf *bus_jmp;
static __thread void *bus_addr;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!bus_jmp) {
		/* Not inside a worker's access: a real bug, die loudly. */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	bus_addr = si->si_addr;
	siglongjmp(*bus_jmp, 1);
}

static void install_sigbus_once(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

void worker_bus_arm(sigjmp_buf *jb)
{
	bus_jmp = jb;
}

void worker_bus_caught(struct io_req *r)
{
	sigset_t s;

	bus_jmp = NULL;
	sigemptyset(&s);
	sigaddset(&s, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	r->res = -EFAULT;
}

static void install_sigbus(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install_sigbus_once);
}

/* ---- errors ---------------------------------------------------------- */

void worker_fail(struct worker *w, int code, unsigned target, uint64_t off, const char *what)
{
	struct thread_stats *st = w->st;

	st->error.code = code < 0 ? -code : code;
	st->error.target = target;
	st->error.offset = off;
	snprintf(st->error.what, sizeof(st->error.what), "%s", what);
	STAT_STORE(&st->failed, 1);
	/* The job is failed: its other workers stop too. */
	__atomic_store_n(&w->jr->job_stop, 1, __ATOMIC_RELAXED);
}

static void worker_fail_bus(struct worker *w)
{
	const struct job_run *jr = w->jr;
	uintptr_t a = (uintptr_t)bus_addr;

	for (unsigned i = w->tfirst; i < w->tfirst + w->tcount; i++) {
		const struct target *t = &jr->targets[i];
		uintptr_t lo = (uintptr_t)t->map;

		if (t->map && a >= lo && a < lo + t->map_len) {
			worker_fail(w, EIO, i, a - lo, "SIGBUS on mmap access (file truncated or read error)");
			return;
		}
	}
	worker_fail(w, EIO, w->tfirst, 0, "SIGBUS at an address outside the job's mappings");
}

static inline bool should_stop(const struct worker *w)
{
	return worker_should_stop(w);
}

/* ---- the loops ------------------------------------------------------- */

static inline bool complete_ok(struct worker *w, struct io_req *r)
{
	if (r->res == (int64_t)r->len)
		return true;
	if (r->res < 0)
		worker_fail(w, (int)-r->res, r->target, r->off, w->jr->ops->name);
	else
		worker_fail(w, EIO, r->target, r->off, "short read (target shrank?)");
	return false;
}

static inline void consume(struct worker *w, const struct io_req *r)
{
	const struct job *j = w->jr->job;

	if (r->data)
		w->sink += touch_consume(j->touch, j->touch_stride, r->data, r->len, w->copybuf);
}

static void loop_sync(struct worker *w)
{
	const struct job_run *jr = w->jr;
	const struct engine_ops *ops = jr->ops;
	struct thread_stats *st = w->st;
	struct io_req *r = &w->reqs[0];
	const bool lat = jr->job->latency;
	const uint64_t deadline = jr->deadline_ns ? jr->deadline_ns : UINT64_MAX;
	struct req_clock clk;
	unsigned tgt;
	uint64_t off;
	uint32_t len;
	int ret;

	req_clock_start(&clk, lat, deadline);
	while (!should_stop(w) && gen_next(&w->gen, &tgt, &off, &len)) {
		/* The generator counts this worker's targets from 0. */
		r->target = (uint16_t)(w->tfirst + tgt);
		r->off = off;
		r->len = len;
		if (w->prefetch)
			prefetch_advance(w->prefetch, tgt, off, len);
		ret = ops->queue(w, r);
		if (ret < 0) {
			worker_fail(w, ret, r->target, off, ops->name);
			break;
		}
		if (!complete_ok(w, r))
			break;
		consume(w, r);
		stat_add(&st->ops, 1);
		stat_add(&st->bytes, len);
		if (sync_request_done(&st->lat, &clk))
			break;
	}
}

static void loop_async(struct worker *w)
{
	const struct job_run *jr = w->jr;
	const struct engine_ops *ops = jr->ops;
	struct thread_stats *st = w->st;
	const bool lat = jr->job->latency;
	const uint64_t deadline = jr->deadline_ns ? jr->deadline_ns : UINT64_MAX;
	const unsigned depth = job_run_depth(jr);
	struct io_req **done = NULL;
	uint16_t *freeslots = NULL;
	unsigned nfree = depth, inflight = 0, pending = 0;
	bool more = true, stopping = false;
	uint64_t t;
	int ret;

	done = calloc(depth, sizeof(*done));
	freeslots = calloc(depth, sizeof(*freeslots));
	if (!done || !freeslots) {
		worker_fail(w, ENOMEM, w->tfirst, 0, "allocating request slots");
		goto out;
	}
	for (unsigned i = 0; i < depth; i++)
		freeslots[i] = (uint16_t)(depth - 1 - i);

	for (;;) {
		if (!stopping && (should_stop(w) || now_ns() >= deadline))
			stopping = true;
		if (!stopping && more && nfree) {
			t = lat ? now_ns() : 0;
			while (nfree) {
				struct io_req *r;
				unsigned tgt;
				uint64_t off;
				uint32_t len;

				if (!gen_next(&w->gen, &tgt, &off, &len)) {
					more = false;
					break;
				}
				r = &w->reqs[freeslots[--nfree]];
				r->target = (uint16_t)(w->tfirst + tgt);
				r->off = off;
				r->len = len;
				r->t_issue = t;
				ret = ops->queue(w, r);
				if (ret < 0) {
					worker_fail(w, ret, r->target, off, ops->name);
					freeslots[nfree++] = r->slot;
					stopping = true;
					break;
				}
				if (ret == ENGINE_DONE) {
					if (!complete_ok(w, r)) {
						stopping = true;
						freeslots[nfree++] = r->slot;
						break;
					}
					consume(w, r);
					stat_add(&st->ops, 1);
					stat_add(&st->bytes, r->len);
					if (lat)
						hist_add(&st->lat, now_ns() - t);
					freeslots[nfree++] = r->slot;
					continue;
				}
				inflight++;
				ret = submit_step(w, &pending, nfree > 0);
				if (ret < 0) {
					worker_fail(w, ret, w->tfirst, 0, "submit");
					stopping = true;
					break;
				}
			}
		}
		if (!inflight) {
			if (stopping || !more)
				break;
			continue;
		}
		/* Keep the queue full while there is work; drain at the end
		 * so no buffer is freed under an in-flight read. */
		ret = ops->reap(w, (stopping || !more) ? inflight : 1, depth, done);
		pending = 0;
		if (ret < 0) {
			if (ret == -EINTR)
				continue;
			worker_fail(w, ret, w->tfirst, 0, "reap");
			/* Buffers may still be in flight: leave them allocated. */
			done = NULL;
			goto out_leak;
		}
		t = lat ? now_ns() : 0;
		for (int i = 0; i < ret; i++) {
			struct io_req *r = done[i];

			inflight--;
			freeslots[nfree++] = r->slot;
			if (stopping && st->failed)
				continue;
			if (!complete_ok(w, r)) {
				stopping = true;
				continue;
			}
			consume(w, r);
			stat_add(&st->ops, 1);
			stat_add(&st->bytes, r->len);
			if (lat)
				hist_add(&st->lat, t - r->t_issue);
		}
	}
out:
	free(done);
out_leak:
	free(freeslots);
}

/* ---- the CPU probe (SPEC 2 cpu_probe) -------------------------------- */

/* One work unit: a fixed chain of integer mixing, about a microsecond
 * of pure CPU with no memory traffic, so its rate shows how much CPU the
 * I/O threads leave over. */
#define PROBE_ROUNDS_PER_UNIT 1024

static void *probe_main(void *arg)
{
	struct job_run *jr = arg;
	struct thread_stats *st = jr->probe;
	uint64_t x = 0x9e3779b97f4a7c15ull, n = 0;

	STAT_STORE(&st->tid, gettid());
	st->start_ns = now_ns();
	STAT_STORE(&st->running, 1);
	while (!__atomic_load_n(&jr->probe_stop, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(jr->stop, __ATOMIC_RELAXED)) {
		for (int i = 0; i < PROBE_ROUNDS_PER_UNIT; i++) {
			x += 0x9e3779b97f4a7c15ull;
			x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
			x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
		}
		stat_add(&st->probe_units, 1);
		n++;
	}
	STAT_STORE(&st->end_ns, now_ns());
	STAT_STORE(&st->running, 0);
	STAT_STORE(&st->done, 1);
	/* Publish the result so the loop cannot be optimised away. */
	st->pad_hot[0] = x + n;
	return NULL;
}

/* ---- a worker thread ------------------------------------------------- */

static void sleep_until(const struct worker *w, uint64_t when)
{
	while (!should_stop(w)) {
		uint64_t now = now_ns();
		struct timespec ts;
		uint64_t left;

		if (now >= when)
			return;
		/* Sleep in slices so Ctrl-C is noticed. */
		left = when - now < 50000000ull ? when - now : 50000000ull;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left;
		nanosleep(&ts, NULL);
	}
}

static int worker_alloc(struct worker *w, struct err *e)
{
	const struct job_run *jr = w->jr;
	const struct job *j = jr->job;
	unsigned depth = job_run_depth(jr);

	w->reqs = calloc(depth, sizeof(*w->reqs));
	if (!w->reqs)
		return err_set(e, ENOMEM, "allocating %u request slots", depth);
	if (jr->ops->flags & ENGINE_F_BUFFERS) {
		size_t bytes = (size_t)depth * jr->bs_stride;

		w->bufs = aligned_alloc(BUF_ALIGN, bytes);
		if (!w->bufs)
			return err_set(e, ENOMEM, "allocating %zu bytes of I/O buffers", bytes);
		/* Fault the buffers in now, not inside the first timed reads. */
		memset(w->bufs, 0, bytes);
	}
	for (unsigned i = 0; i < depth; i++) {
		w->reqs[i].slot = (uint16_t)i;
		w->reqs[i].buf = w->bufs ? w->bufs + (size_t)i * jr->bs_stride : NULL;
	}
	if (j->touch == TOUCH_COPY) {
		w->copybuf = aligned_alloc(BUF_ALIGN, jr->bs_stride);
		if (!w->copybuf)
			return err_set(e, ENOMEM, "allocating the copy buffer");
		memset(w->copybuf, 0, jr->bs_stride);
	}
	return 0;
}

/* prefetch= on an ordinary worker: one stream per target it reads. */
static int worker_prefetch_init(struct worker *w, struct err *e)
{
	const struct job_run *jr = w->jr;
	struct job_slots sl;
	int ret;

	job_run_slots(jr->job, &sl);
	ret = prefetch_start(&w->prefetch, w, w->tcount,
			     sl.nprefetch ? &jr->stats[sl.prefetch + w->id] : NULL, e);
	if (ret)
		return ret;
	for (unsigned i = 0; i < w->tcount; i++) {
		const struct target *t = &jr->targets[w->tfirst + i];

		prefetch_key_set(w->prefetch, i, w->tfirst + i, t->base, t->base + t->len);
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct job_run *jr = w->jr;
	struct thread_stats *st = w->st;
	sigjmp_buf jb;
	struct err e = { 0 };
	int ret;

	/* pid first: the sampler reads it once it sees the tid. */
	STAT_STORE(&st->pid, getpid());
	STAT_STORE(&st->tid, gettid());
	ret = placement_apply(jr->job, &e);
	if (!ret)
		ret = worker_alloc(w, &e);
	if (!ret && jr->ops->init)
		ret = jr->ops->init(w, &e);
	if (ret) {
		worker_fail(w, ret, WORKER_ERROR_SETUP, 0, e.msg);
		goto out_free;
	}
	/* Helper threads start here, untimed, and inherit the placement. */
	if (jr->loop)
		ret = loop_worker_init(w, &e);
	else if (jr->job->prefetch != PREFETCH_NONE)
		ret = worker_prefetch_init(w, &e);
	if (ret) {
		worker_fail(w, ret, WORKER_ERROR_SETUP, 0, e.msg);
		goto out_exit;
	}
	if (jr->job->startdelay_ns)
		sleep_until(w, jr->start_ns + jr->job->startdelay_ns);

	stats_thread_usage(&st->start_majflt, &st->start_minflt, &st->start_nvcsw);
	st->sched_ok = stats_thread_sched(&st->start_cpu_ns, &st->start_wait_ns) == 0;
	st->start_ns = now_ns();
	STAT_STORE(&st->running, 1);
	if (sigsetjmp(jb, 1)) {
		bus_jmp = NULL;
		worker_fail_bus(w);
		goto out_stop;
	}
	bus_jmp = &jb;
	if (jr->loop)
		loop_run(w);
	else if (jr->ops->flags & ENGINE_F_ASYNC)
		loop_async(w);
	else
		loop_sync(w);
	bus_jmp = NULL;
out_stop:
	STAT_STORE(&st->end_ns, now_ns());
	st->rusage_ok = stats_thread_usage(&st->exit_majflt, &st->exit_minflt, &st->exit_nvcsw) == 0;
	if (st->sched_ok)
		st->sched_ok = stats_thread_sched(&st->exit_cpu_ns, &st->exit_wait_ns) == 0;
	STAT_STORE(&st->running, 0);
out_exit:
	/* Helpers first: they may still use the engine and the buffers. */
	loop_worker_exit(w);
	prefetch_stop(w->prefetch);
	w->prefetch = NULL;
	if (jr->ops->exit)
		jr->ops->exit(w);
out_free:
	STAT_STORE(&st->done, 1);
	free(w->copybuf);
	free(w->bufs);
	free(w->reqs);
	w->copybuf = NULL;
	w->bufs = NULL;
	w->reqs = NULL;
	return NULL;
}

/* ---- preparing a job ------------------------------------------------- */

void job_run_slots(const struct job *job, struct job_slots *s)
{
	unsigned n = 0;

	s->workers = job->numjobs;
	n += s->workers;
	s->probe = n;
	s->nprobe = job->cpu_probe ? 1 : 0;
	n += s->nprobe;
	s->offload = n;
	s->noffload = job->loop ? job->offload : 0;
	n += s->noffload;
	s->prefetch = n;
	s->nprefetch = prefetch_helpers(job) * job->numjobs;
	n += s->nprefetch;
	s->total = n;
}

unsigned job_run_nstats(const struct job *job)
{
	struct job_slots s;

	job_run_slots(job, &s);
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

static int open_targets(struct job_run *jr, struct err *e)
{
	const struct job *j = jr->job;
	char path[4096];
	unsigned n = 0;
	int ret;

	if (jr->ops->flags & ENGINE_F_NO_TARGET) {
		/* One virtual target so the generator has a region. A null
		 * job with no size runs one TiB of requests per pass. */
		jr->ntargets = 1;
		jr->targets = calloc(1, sizeof(*jr->targets));
		if (!jr->targets)
			return err_set(e, ENOMEM, "out of memory");
		jr->targets[0].path = strdup("(null engine)");
		jr->targets[0].fd = jr->targets[0].fd_direct = -1;
		jr->targets[0].base = j->offset;
		jr->targets[0].len = j->size ? j->size : 1ull << 40;
		jr->targets[0].dev_size = j->offset + jr->targets[0].len;
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
				ret = target_open(&jr->targets[i], path, j->offset, len, j->bs, j->direct,
						  jr->hooks, e);
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
		ret = target_open(&jr->targets[i], path, j->offset, fsize, j->bs, j->direct,
				  jr->hooks, e);
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

/* Features that need permission are refused before anything runs. */
static int check_privileges(const struct job *j, struct err *e)
{
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
		uint64_t needs = (uint64_t)j->numjobs * ((uint64_t)j->iodepth * j->bs + (16ull << 20));

		return reserve_check(j->reserve_mem, needs, e);
	}
	return 0;
}

/*
 * iodepth_batch_submit, resolved for @depth request slots. auto: with
 * direct=1 each request goes to the kernel as soon as its slot is free,
 * as fio does by default; a device fed one request at a time keeps its
 * queue evenly full, and on the virtio disk this was worth 7-10 % of
 * IOPS against whole batches (tests/bench/engines-async.md). Buffered
 * reads served from the page cache complete inside the submit call, so
 * there the whole batch goes in one call: one system call per batch,
 * not per read.
 */
unsigned job_batch_resolve(const struct job *job, unsigned depth)
{
	unsigned b = job->iodepth_batch;

	if (b == IODEPTH_BATCH_AUTO)
		b = job->direct ? 1 : 0;
	return b == 0 || b > depth ? depth : b;
}

int job_run_prepare(struct job_run *jr, const struct job *job, unsigned index,
		    struct thread_stats *stats, int *stop,
		    const struct target_hooks *hooks, struct err *e)
{
	struct gen_region *regions = NULL;
	uint64_t seed;
	int ret;

	memset(jr, 0, sizeof(*jr));
	jr->child_go = -1;
	jr->job = job;
	jr->index = index;
	jr->stop = stop;
	jr->hooks = hooks;
	jr->stats = stats;
	jr->nworkers = job->numjobs;
	jr->probe = job->cpu_probe ? &stats[job->numjobs] : NULL;
	jr->bs_stride = (job->bs + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN;
	jr->ops = engine_find(job->ioengine);
	if (!jr->ops)
		return err_set(e, EINVAL, "ioengine=%s: no such engine", job->ioengine);
	jr->depth = (jr->ops->flags & ENGINE_F_ASYNC) ? job->iodepth : 1;
	if (job->loop)
		jr->depth *= job->loop;
	/* A synchronous engine submits nothing: one request at a time. */
	jr->batch = (jr->ops->flags & ENGINE_F_ASYNC) ? job_batch_resolve(job, jr->depth) : 1;

	ret = placement_check(job, e);
	if (ret)
		return ret;
	ret = check_privileges(job, e);
	if (ret)
		return ret;
	ret = prefetch_check(job, e);
	if (ret)
		return ret;
	ret = open_targets(jr, e);
	if (ret)
		goto fail;

	/* Whole requests only: a region is used up to its last full block. */
	for (unsigned i = 0; i < jr->ntargets; i++) {
		struct target *t = &jr->targets[i];

		t->len -= t->len % job->bs;
		if (t->len == 0) {
			ret = err_set(e, EINVAL, "%s: the region used (offset %llu) is smaller than bs=%llu",
				      t->path, (unsigned long long)job->offset,
				      (unsigned long long)job->bs);
			goto fail;
		}
	}

	jr->cursors = aligned_alloc(CACHELINE, (size_t)jr->ntargets * sizeof(*jr->cursors));
	jr->workers = calloc(jr->nworkers, sizeof(*jr->workers));
	regions = calloc(jr->ntargets, sizeof(*regions));
	if (!jr->cursors || !jr->workers || !regions) {
		ret = err_set(e, ENOMEM, "out of memory");
		goto fail;
	}
	memset(jr->cursors, 0, (size_t)jr->ntargets * sizeof(*jr->cursors));
	for (unsigned i = 0; i < jr->ntargets; i++) {
		regions[i].base = jr->targets[i].base;
		regions[i].len = jr->targets[i].len;
	}

	seed = pick_seed(job);
	for (unsigned i = 0; i < jr->nworkers; i++) {
		struct worker *w = &jr->workers[i];
		const bool scratch = !job->filename && !(jr->ops->flags & ENGINE_F_NO_TARGET);
		struct gen_config gc = {
			.rw = job->rw,
			.scan = job->scan,
			.fst = job->file_service_type,
			.dist = job->random_distribution,
			.zipf_theta = job->zipf_theta,
			.bs = job->bs,
			.scan_chunk = job->scan_chunk,
			.seed = seed,
			/* Scratch files belong to one worker: it is the only
			 * one slicing or scanning them. */
			.worker = scratch ? 0 : i,
			.nworkers = scratch ? 1 : jr->nworkers,
			.wrap = job->time_based,
			.io_limit = job->io_size,
		};

		w->jr = jr;
		w->id = i;
		w->st = &stats[i];
		w->tfirst = scratch ? i * job->nrfiles : 0;
		w->tcount = scratch ? job->nrfiles : jr->ntargets;
		/* Scratch files are private to a worker: a shared cursor
		 * over them would be one worker's anyway. */
		ret = gen_init(&w->gen, &gc, w->tcount, regions + w->tfirst,
			       jr->cursors + w->tfirst, e);
		if (ret)
			goto fail;
	}
	free(regions);
	regions = NULL;
	if (job->loop) {
		ret = loop_prepare(jr, seed, e);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	free(regions);
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
	if (jr->ops->flags & ENGINE_F_NO_TARGET)
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
 * that under mem_limit the pages are charged to the job's cgroup. */
#define PREWARM_CHUNK (1u << 20)

static int prewarm(struct job_run *jr, struct err *e)
{
	uint8_t *buf;

	if (!jr->job->prewarm || (jr->ops->flags & ENGINE_F_NO_TARGET))
		return 0;
	buf = malloc(PREWARM_CHUNK);
	if (!buf)
		return err_set(e, ENOMEM, "prewarm: out of memory");
	for (unsigned i = 0; i < jr->ntargets; i++) {
		const struct target *t = &jr->targets[i];

		for (uint64_t off = 0; off < t->len && !*jr->stop;) {
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

/* Start the worker threads (and the probe) in the calling process. */
static int spawn_threads(struct job_run *jr, struct err *e)
{
	pthread_attr_t attr;
	int ret;

	/* Workers are ordinary threads whatever the controller runs as
	 * (it may hold a real-time priority to sample on time). */
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &(struct sched_param){ .sched_priority = 0 });

	for (unsigned i = 0; i < jr->nworkers; i++) {
		struct worker *w = &jr->workers[i];

		ret = pthread_create(&w->thread, &attr, worker_main, w);
		if (ret) {
			err_set(e, ret, "starting worker %u of job %s: %s", i, jr->job->name, strerror(ret));
			__atomic_store_n(&jr->job_stop, 1, __ATOMIC_RELAXED);
			pthread_attr_destroy(&attr);
			/* The ones that never started count as done. */
			for (unsigned k = i; k < jr->nworkers; k++)
				STAT_STORE(&jr->stats[k].done, 1);
			return -ret;
		}
		w->started = true;
	}
	if (jr->probe) {
		ret = pthread_create(&jr->probe_thread, &attr, probe_main, jr);
		if (ret == 0)
			jr->probe_started = true;
		else
			STAT_STORE(&jr->probe->done, 1);
	}
	pthread_attr_destroy(&attr);
	return 0;
}

static void join_threads(struct job_run *jr)
{
	for (unsigned i = 0; i < jr->nworkers; i++) {
		if (jr->workers[i].started)
			pthread_join(jr->workers[i].thread, NULL);
		jr->workers[i].started = false;
	}
	if (jr->probe_started) {
		__atomic_store_n(&jr->probe_stop, 1, __ATOMIC_RELAXED);
		pthread_join(jr->probe_thread, NULL);
		jr->probe_started = false;
	}
}

static void set_clock(struct job_run *jr, uint64_t start_ns)
{
	const struct job *j = jr->job;

	jr->start_ns = start_ns;
	if (j->ramp_ns)
		jr->ramp_end_ns = jr->start_ns + j->startdelay_ns + j->ramp_ns;
	if (j->runtime_ns)
		jr->deadline_ns = jr->start_ns + j->startdelay_ns + j->ramp_ns + j->runtime_ns;
}

/* Record a failure of the child's set-up where the parent will find it. */
static void child_fail(struct job_run *jr, const struct err *e)
{
	struct thread_stats *st = &jr->stats[0];

	st->error.code = e->code;
	st->error.target = WORKER_ERROR_SETUP;
	st->error.offset = 0;
	snprintf(st->error.what, sizeof(st->error.what), "%s", e->msg);
	STAT_STORE(&st->failed, 1);
}

/*
 * mem_limit: memory is charged per address space, so the workers run in
 * a child process that joins the job's cgroup before its first I/O
 * (SPEC 5). Their counters already live in the shared arena. The child
 * prewarms inside the cgroup, says it is ready, and waits for the
 * parent's start time (child_go), so runtime and deadline mean the same
 * as for threads.
 */
static int child_ready(struct job_run *jr, struct err *e)
{
	int ready[2], go[2];
	uint64_t clock[3];
	pid_t parent = getpid();
	char c;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return err_set(e, errno, "mem_limit: pipe: %s", strerror(errno));
	if (pipe2(go, O_CLOEXEC) < 0) {
		close(ready[0]);
		close(ready[1]);
		return err_set(e, errno, "mem_limit: pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(ready[0]);
		close(ready[1]);
		close(go[0]);
		close(go[1]);
		return err_set(e, err, "mem_limit: fork: %s", strerror(err));
	}
	if (pid == 0) {
		struct err ce = { 0 };
		int ok;

		/* Die with the parent, even a parent killed by SIGKILL (SPEC 8);
		 * a parent that died before prctl took effect is noticed by
		 * the changed parent pid. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		close(ready[0]);
		close(go[1]);
		ok = cgroup_enter(&jr->cg, 0, &ce) == 0 && prewarm(jr, &ce) == 0;
		if (!ok)
			child_fail(jr, &ce);
		c = ok ? 'r' : 'f';
		if (write(ready[1], &c, 1) != 1 || !ok ||
		    read(go[0], clock, sizeof(clock)) != sizeof(clock))
			_exit(1);
		jr->start_ns = clock[0];
		jr->ramp_end_ns = clock[1];
		jr->deadline_ns = clock[2];
		if (spawn_threads(jr, &ce) < 0)
			child_fail(jr, &ce);
		join_threads(jr);
		_exit(0);
	}
	jr->child = pid;
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1 || c != 'r') {
		close(ready[0]);
		close(go[1]);
		waitpid(pid, NULL, 0);
		jr->child = 0;
		if (jr->stats[0].failed)
			return err_set(e, jr->stats[0].error.code ? jr->stats[0].error.code : EIO, "%s",
				       jr->stats[0].error.what);
		return err_set(e, EIO, "mem_limit: the worker process died before starting");
	}
	close(ready[0]);
	jr->child_go = go[1];
	return 0;
}

/* Hand the waiting child its clock; closing the pipe unblocks it. */
static int child_go(struct job_run *jr, struct err *e)
{
	uint64_t clock[3] = { jr->start_ns, jr->ramp_end_ns, jr->deadline_ns };
	int ok = write(jr->child_go, clock, sizeof(clock)) == sizeof(clock);
	int err = errno;

	close(jr->child_go);
	jr->child_go = -1;
	if (!ok) {
		kill(jr->child, SIGKILL);
		waitpid(jr->child, NULL, 0);
		jr->child = 0;
		return err_set(e, err, "mem_limit: cannot start the worker process: %s", strerror(err));
	}
	return 0;
}

int job_run_ready(struct job_run *jr, struct err *e)
{
	const struct job *j = jr->job;
	int ret;

	install_sigbus();
	ret = prepare_cache(jr, e);
	if (ret)
		return ret;
	if (j->reserve_mem) {
		ret = reserve_take(&jr->reserve, j->reserve_mem, e);
		if (ret)
			return ret;
		if (jr->hooks && jr->hooks->warn) {
			char msg[160];

			snprintf(msg, sizeof(msg), "job '%s': reserve_mem=%lluMiB populated and locked in %.1f s (not part of the run)",
				 j->name, (unsigned long long)(j->reserve_mem >> 20),
				 (double)jr->reserve.populate_ns / 1e9);
			jr->hooks->warn(jr->hooks->arg, msg);
		}
	}
	if (jr->ops->job_setup) {
		ret = jr->ops->job_setup(jr, e);
		if (ret)
			goto fail;
		jr->setup_done = true;
	}
	if (j->mem_limit) {
		char name[64];

		snprintf(name, sizeof(name), "faultline-%d-%u", (int)getpid(), jr->index);
		ret = cgroup_create(&jr->cg, name, j->mem_limit, e);
		if (ret)
			goto fail;
		jr->has_cg = true;
		ret = child_ready(jr, e);
		if (ret)
			goto fail;
		return 0;
	}
	ret = prewarm(jr, e);
	if (ret)
		goto fail;
	return 0;
fail:
	job_run_join(jr);
	return ret;
}

int job_run_go(struct job_run *jr, uint64_t start_ns, struct err *e)
{
	int ret;

	set_clock(jr, start_ns);
	ret = jr->child > 0 ? child_go(jr, e) : spawn_threads(jr, e);
	if (ret)
		job_run_join(jr);
	return ret;
}

int job_run_start(struct job_run *jr, struct err *e)
{
	int ret = job_run_ready(jr, e);

	return ret ? ret : job_run_go(jr, now_ns(), e);
}

void job_run_join(struct job_run *jr)
{
	if (jr->child_go >= 0) {
		/* Ready but never started (run_group starts every job it
		 * readied, so only a caller that gives up between the two
		 * steps): the child reads EOF and exits, once no worker
		 * process forked after it still holds the pipe's end. */
		close(jr->child_go);
		jr->child_go = -1;
	}
	if (jr->child > 0) {
		int status = jr->child_status;

		while (!jr->child_reaped && waitpid(jr->child, &status, 0) < 0 && errno == EINTR)
			;
		/* A worker process killed by a signal (the OOM killer under a
		 * tight mem_limit) is a job failure, said plainly. */
		if (WIFSIGNALED(status) && !jr->stats[0].failed) {
			struct thread_stats *st = &jr->stats[0];

			st->error.code = EINTR;
			snprintf(st->error.what, sizeof(st->error.what),
				 "worker process killed by signal %d (%s)%s", WTERMSIG(status),
				 strsignal(WTERMSIG(status)),
				 WTERMSIG(status) == SIGKILL ? "; under mem_limit this is usually the OOM killer" : "");
			STAT_STORE(&st->failed, 1);
		}
		for (unsigned i = 0; i < job_run_nstats(jr->job); i++)
			STAT_STORE(&jr->stats[i].done, 1);
		jr->child = 0;
		jr->child_reaped = false;
	} else {
		join_threads(jr);
	}
	if (jr->setup_done && jr->ops->job_teardown)
		jr->ops->job_teardown(jr);
	jr->setup_done = false;
	if (jr->has_cg) {
		cgroup_destroy(&jr->cg);
		jr->has_cg = false;
	}
	reserve_release(&jr->reserve);
}

bool job_run_finished(struct job_run *jr)
{
	/* A worker process that died (OOM killer) sets no done flags:
	 * notice its exit instead of waiting for them forever. */
	if (jr->child > 0 && !jr->child_reaped &&
	    waitpid(jr->child, &jr->child_status, WNOHANG) == jr->child)
		jr->child_reaped = true;
	if (jr->child_reaped)
		return true;
	for (unsigned i = 0; i < jr->nworkers; i++)
		if (!STAT_LOAD(&jr->stats[i].done))
			return false;
	return true;
}

void job_run_destroy(struct job_run *jr)
{
	loop_destroy(jr);
	if (jr->workers) {
		for (unsigned i = 0; i < jr->nworkers; i++)
			gen_free(&jr->workers[i].gen);
		free(jr->workers);
	}
	for (unsigned i = 0; i < jr->ntargets; i++)
		target_close(&jr->targets[i]);
	free(jr->targets);
	free(jr->cursors);
	jr->workers = NULL;
	jr->targets = NULL;
	jr->cursors = NULL;
	jr->ntargets = 0;
}
