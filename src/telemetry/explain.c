/*
 * explain.c - residency, pressure and cost cells of each job's CSV row,
 * and at the job's end its cost per page and phases; see explain.h.
 */
#include "telemetry/explain.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/grow.h"

#define MIB (1024.0 * 1024.0)
/* "Per 4 KiB": the paper's page, whatever the host's page size. */
#define PAGE_4K 4096.0

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Asked once: every row of every job used to ask (a sysconf call a row,
 * 1 % of the rows' time in tests/bench/sample_rows.c at 2000 jobs). */
static uint64_t page_bytes(void)
{
	static uint64_t page;
	uint64_t p = __atomic_load_n(&page, __ATOMIC_RELAXED);

	if (!p) {
		long v = sysconf(_SC_PAGESIZE);

		p = v > 0 ? (uint64_t)v : 4096;
		__atomic_store_n(&page, p, __ATOMIC_RELAXED);
	}
	return p;
}

static void fig(struct explain_figs *f, enum explain_fig k, bool ok, double v)
{
	f->ok[k] = ok;
	f->v[k] = ok ? v : 0;
}

/* ---- host PSI ------------------------------------------------------- */

void explain_host_open(struct explain_host *h, const char *proc_root)
{
	memset(h, 0, sizeof(*h));
	if (psi_open(&h->mem, proc_root, "pressure/memory") < 0)
		h->mem.fd = -1;
	if (psi_open(&h->io, proc_root, "pressure/io") < 0)
		h->io.fd = -1;
	if (h->mem.fd < 0 || h->io.fd < 0) {
		char why[PROCFS_WHY_MAX + 64];

		psi_why_absent(proc_root, why, sizeof(why));
		snprintf(h->why, sizeof(h->why), "pressure stall information unavailable: %s",
			 why[0] ? why : "pressure/io cannot be read");
		h->warned = true;
	}
}

void explain_host_read(struct explain_host *h, struct explain_sys *out)
{
	memset(out, 0, sizeof(*out));
	out->mem_at.start_ns = mono_ns();
	out->mem_ok = h->mem.fd >= 0 && psi_read(&h->mem, &out->mem) == 0;
	out->mem_at.end_ns = out->io_at.start_ns = mono_ns();
	out->io_ok = h->io.fd >= 0 && psi_read(&h->io, &out->io) == 0;
	out->io_at.end_ns = mono_ns();
	if ((!out->mem_ok && h->mem.fd >= 0) || (!out->io_ok && h->io.fd >= 0)) {
		if (!h->warned)
			snprintf(h->why, sizeof(h->why), "a pressure file could not be read");
		h->warned = true;
	}
}

void explain_host_close(struct explain_host *h)
{
	procfs_src_close(&h->mem);
	procfs_src_close(&h->io);
}

/* ---- per job -------------------------------------------------------- */

int explain_job_init(struct explain_job *x, const struct job *job, const struct target *t, unsigned n,
		     struct residency_set *set)
{
	memset(x, 0, sizeof(*x));
	x->cg_psi.fd = -1;
	x->limit = job->mem_limit;
	x->set = set;
	if (job->direct)
		x->bypass = "direct=1: O_DIRECT reads bypass the page cache";
	else if (job->uncached)
		x->bypass = "uncached=1: each read's pages are dropped once copied";
	snprintf(x->cg_why, sizeof(x->cg_why), "the job has no mem_limit cgroup");
	if (!n)
		return 0;
	x->res = n == 1 ? &x->res_one : calloc(n, sizeof(*x->res));
	if (!x->res)
		return -ENOMEM;
	x->nres = n;
	x->res_ok = true;
	for (unsigned i = 0; i < n; i++) {
		int idx = residency_set_add(set, t[i].fd, t[i].base, t[i].len), ret = idx;
		struct residency_region *g = idx >= 0 ? &set->r[idx] : NULL;

		if (idx == -ENOMEM)
			return idx;
		x->res[i] = idx >= 0 ? (unsigned)idx : UINT_MAX;
		if (g)
			ret = g->open_ret;
		if (g && !ret && g->every > 1 && !g->noted) {
			g->noted = true;
			snprintf(x->note, sizeof(x->note), "%s: its page-cache residency (%llu MiB) is read a part "
				 "per interval, whole over %u intervals (a read walks every page of it), and whole at "
				 "the job's end; the target_* cells are those of the interval ending each pass, "
				 "empty in the others", t[i].path,
				 (unsigned long long)(t[i].len >> 20), g->every);
		}
		if (ret == 0)
			continue;
		x->res_ok = false;
		/* Once per region, not once per job reading it. */
		if (!x->warned && !(g && g->warned))
			snprintf(x->why, sizeof(x->why), "%s: page-cache residency unavailable "
				 "(cachestat and mincore: %s)", t[i].path, strerror(-ret));
		x->warned = true;
		if (g)
			g->warned = true;
	}
	return 0;
}

void explain_job_cgroup(struct explain_job *x, const struct cgroup *cg)
{
	if (x->cg_psi_open)
		procfs_src_close(&x->cg_psi);
	x->cg_psi_open = x->cg_last_ok = false;
	if (!cg)
		return;
	if (cg->version != 2) {
		snprintf(x->cg_why, sizeof(x->cg_why),
			 "memory cgroup v%d: memory.pressure exists only on cgroup v2", cg->version);
		return;
	}
	if (psi_open(&x->cg_psi, cg->path, "memory.pressure") < 0) {
		snprintf(x->cg_why, sizeof(x->cg_why), "%s/memory.pressure: %s", cg->path, strerror(errno));
		return;
	}
	x->cg_psi_open = true;
	x->cg_last_at.start_ns = mono_ns();
	x->cg_last_ok = psi_read(&x->cg_psi, &x->cg_last) == 0;
	x->cg_last_at.end_ns = mono_ns();
}

/* The targets' residency summed: 0, -EAGAIN when some region is not
 * read in this sample (a large one: residency.h), or why not. */
static int read_residency(struct explain_job *x, bool force, struct residency *sum)
{
	memset(sum, 0, sizeof(*sum));
	if (!x->nres || !x->res_ok)
		return -ENODATA;
	sum->full = true;
	for (unsigned i = 0; i < x->nres; i++) {
		struct residency r;
		int ret = residency_set_read_due(x->set, x->res[i], force, &r);

		if (ret < 0)
			return ret;
		sum->full = sum->full && r.full;
		sum->cached += r.cached;
		sum->dirty += r.dirty;
		sum->writeback += r.writeback;
		sum->evicted += r.evicted;
		sum->recently_evicted += r.recently_evicted;
	}
	return 0;
}

int explain_job_reserve(struct explain_job *x, size_t rows)
{
	struct phase_row *n;

	if (rows <= x->cap)
		return 0;
	n = realloc(x->rows, rows * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + x->cap, 0, (rows - x->cap) * sizeof(*n));
	x->rows = n;
	x->cap = rows;
	return 0;
}

static int push_row(struct explain_job *x, const struct phase_row *r)
{
	if (grow_one(x->rows, x->nrows, x->cap, 64))
		return -ENOMEM;
	x->rows[x->nrows++] = *r;
	return 0;
}

void explain_row(struct explain_job *x, const struct explain_in *in, struct explain_figs *out)
{
	const double pg = (double)page_bytes();
	const struct explain_sys *s = in->sys, *ps = in->prev_sys;
	struct residency r;
	int rr = read_residency(x, in->last_row, &r);
	bool res = rr == 0, skipped = rr == -EAGAIN;
	bool full = res && r.full;
	struct psi_totals cg = { 0 };
	struct psi_span cg_at = { 0 };
	bool cg_ok = false;
	bool sys = s && ps;
	struct phase_row pr = {
		.t_s = in->t_s, .dt_s = in->dt_s, .ramp = in->ramp,
		.ops = in->rops, .bytes = in->rbytes,
		.lat_ok = in->lat_ok, .lat_p50_us = in->lat_p50_us, .lat_p99_us = in->lat_p99_us,
		.tlb_ok = in->tlb_ok, .tlb = in->tlb,
		.flt_ok = in->flt_ok, .majflt = in->majflt,
		.dev_ok = in->dev_ok, .dev_bytes = in->dev_bytes,
		.cpu_ok = in->cpu_ok, .cpu_ns = in->cpu_ns,
	};

	/* The clock is read only around a read of the cgroup's pressure,
	 * not in every row of every job. */
	if (x->cg_psi_open && x->cg_last_ok) {
		cg_at.start_ns = mono_ns();
		cg_ok = psi_read(&x->cg_psi, &cg) == 0;
		cg_at.end_ns = mono_ns();
	}
	memset(out, 0, sizeof(*out));
	fig(out, EXPLAIN_TARGET_CACHED, res, (double)r.cached * pg / MIB);
	fig(out, EXPLAIN_TARGET_EVICTED, full, (double)r.evicted * pg / MIB);
	fig(out, EXPLAIN_TARGET_RECENT, full, (double)r.recently_evicted * pg / MIB);
	fig(out, EXPLAIN_REFAULT, in->refault_ok, (double)in->refaults / in->dt_s);
	fig(out, EXPLAIN_PSI_MEM_SOME, sys && s->mem_ok && ps->mem_ok,
	    sys ? psi_pct(ps->mem.some_us, s->mem.some_us, &ps->mem_at, &s->mem_at) : 0);
	fig(out, EXPLAIN_PSI_MEM_FULL, sys && s->mem_ok && ps->mem_ok && s->mem.full_ok && ps->mem.full_ok,
	    sys ? psi_pct(ps->mem.full_us, s->mem.full_us, &ps->mem_at, &s->mem_at) : 0);
	fig(out, EXPLAIN_PSI_IO_SOME, sys && s->io_ok && ps->io_ok,
	    sys ? psi_pct(ps->io.some_us, s->io.some_us, &ps->io_at, &s->io_at) : 0);
	fig(out, EXPLAIN_PSI_IO_FULL, sys && s->io_ok && ps->io_ok && s->io.full_ok && ps->io.full_ok,
	    sys ? psi_pct(ps->io.full_us, s->io.full_us, &ps->io_at, &s->io_at) : 0);
	fig(out, EXPLAIN_CG_SOME, cg_ok, psi_pct(x->cg_last.some_us, cg.some_us, &x->cg_last_at, &cg_at));
	fig(out, EXPLAIN_CG_FULL, cg_ok && cg.full_ok,
	    psi_pct(x->cg_last.full_us, cg.full_us, &x->cg_last_at, &cg_at));
	/* Ratios to the bytes read: no reads, no ratio (empty, not 0). */
	fig(out, EXPLAIN_READ_AMP, in->dev_ok && in->rbytes,
	    in->rbytes ? (double)in->dev_bytes / (double)in->rbytes : 0);
	fig(out, EXPLAIN_CPU_PER_4K, in->cpu_ok && in->rbytes,
	    in->rbytes ? (double)in->cpu_ns / 1e3 / ((double)in->rbytes / PAGE_4K) : 0);

	/* The row phases_detect reads: the cgroup's gauge under mem_limit,
	 * else the host's; eviction seen as the target's own evicted pages
	 * growing (cachestat), and only without cachestat as the host's
	 * reclaim stealing, which on a shared host is anyone's. */
	if (x->limit) {
		pr.cache_ok = in->cg_ok;
		pr.cache_bytes = in->cg_bytes;
	} else {
		pr.cache_ok = in->host_cache_ok;
		pr.cache_bytes = in->host_cached;
	}
	if (full && x->last_ok && x->last.full) {
		pr.evict_ok = true;
		pr.evicted = r.evicted > x->last.evicted ? r.evicted - x->last.evicted : 0;
	} else if (!full && !skipped && in->steal_ok) {
		pr.evict_ok = true;
		pr.evicted = in->pgsteal;
	}
	push_row(x, &pr);

	/* A row without a reading leaves the last one standing: the next
	 * reading's evictions count from it. */
	if (res)
		x->last = r;
	if (!skipped)
		x->last_ok = res;
	if (cg_ok) {
		x->cg_last = cg;
		x->cg_last_at = cg_at;
	}
	x->cg_last_ok = cg_ok;
}

void explain_result(struct explain_job *x, struct explain_result *e)
{
	memset(e, 0, sizeof(*e));
	e->page_size = page_bytes();
	e->res_ok = x->last_ok;
	if (x->nres)
		e->res_method = residency_method_name(residency_set_method(x->set, x->res[0]));
	if (e->res_ok) {
		e->res_full = x->last.full;
		e->cached = x->last.cached;
		e->dirty = x->last.dirty;
		e->writeback = x->last.writeback;
		e->evicted = x->last.evicted;
		e->recently_evicted = x->last.recently_evicted;
	}
	phases_sum(x->rows, 0, x->nrows, &e->cost);
	e->cgroup = x->limit != 0;
	phases_detect(x->rows, x->nrows, x->limit, &e->phases);
	if (x->bypass) {
		memset(&e->phases, 0, sizeof(e->phases));
		e->phases.why = x->bypass;
	}
}

void explain_job_free(struct explain_job *x)
{
	if (x->res != &x->res_one)
		free(x->res);
	if (x->cg_psi_open)
		procfs_src_close(&x->cg_psi);
	free(x->rows);
	memset(x, 0, sizeof(*x));
}
