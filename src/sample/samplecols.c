/*
 * samplecols.c - the CSV's columns, one table; see samplecols.h.
 *
 * A column's fill function reads only the gathered row: every source
 * was read once before (samplerow.c), so two columns of one source
 * always agree. Rates are per second of the row's own span (dt_s).
 */
#include "sample/samplecols.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fmtnum.h"
#include "lib/histogram.h"
#include "job/job.h"

#define FILL(fn) static bool fn(const struct sample_row *r, const struct sample_col *c, double *v, \
				const char **text)
#define UNUSED (void)c, (void)text

/* ---- the clock and the job ----------------------------------------- */

FILL(f_t)
{
	UNUSED;
	*v = (double)(r->now - r->t0) / 1e9;
	return true;
}

FILL(f_epoch)
{
	UNUSED;
	*v = (double)(r->epoch0_ms + (r->now - r->t0) / 1000000ull);
	return true;
}

FILL(f_dt)
{
	UNUSED;
	*v = r->dt;
	return true;
}

FILL(f_name)
{
	(void)c, (void)v;
	*text = r->sj->job->name;
	return true;
}

FILL(f_engine)
{
	(void)c, (void)v;
	*text = r->sj->job->ioengine;
	return true;
}

/* The CSV's rw column, by enum rw_mode. */
static const char *const rw_names[] = { "read", "randread", "write", "randwrite", "rw", "randrw",
					"trim", "randtrim", "trimwrite", "randtrimwrite" };

FILL(f_rw)
{
	(void)c, (void)v;
	*text = rw_names[r->sj->job->rw];
	return true;
}

FILL(f_threads)
{
	UNUSED;
	*v = r->sj->nworkers;
	return true;
}

FILL(f_ramp)
{
	UNUSED;
	*v = r->ramp ? 1 : 0;
	return true;
}

/* What the latency columns count from: a paced job's due times
 * (coordinated omission, run/pace.h), else each request's issue. */
FILL(f_lat_from)
{
	(void)c, (void)v;
	*text = job_paced(r->sj->job) ? "due" : "issue";
	return true;
}

/* ---- the workers' counters ------------------------------------------ */

/* Row fields by offset: a count per second, or bytes as MiB/s. */
#define ROW_U64(field) ((int)offsetof(struct sample_row, field))

static uint64_t row_u64(const struct sample_row *r, int off)
{
	uint64_t x;

	memcpy(&x, (const char *)r + off, sizeof(x));
	return x;
}

FILL(f_rate)
{
	UNUSED;
	*v = (double)row_u64(r, c->a) / r->dt;
	return true;
}

FILL(f_mib_s)
{
	UNUSED;
	*v = (double)row_u64(r, c->a) / MIB / r->dt;
	return true;
}

FILL(f_lat)
{
	UNUSED;
	if (!r->lat)
		return false;
	*v = c->a == 50 ? r->p50 : c->a == 99 ? r->p99 : r->pmax;
	return true;
}

/* Write and flush latencies: empty when none completed in the row, as
 * lat_p50_us is without reads. */
FILL(f_hist)
{
	const struct hist *h = c->b == 1 ? r->wlat : r->slat;

	UNUSED;
	/* The row's histogram first: a read job's is empty, and the job's
	 * options are a cold line. */
	if (!h->n || !r->sj->job->latency)
		return false;
	*v = (double)hist_percentile(h, c->a) / 1e3;
	return true;
}

FILL(f_probe)
{
	UNUSED;
	*v = (double)r->probe / r->dt;
	return r->sj->slots.nprobe > 0;
}

/* A pool's hit ratio of the row; empty for other engines, and when the
 * row saw no access at all. */
FILL(f_pool_hit)
{
	UNUSED;
	if (!r->sj->pool || !(r->hits + r->misses))
		return false;
	*v = (double)r->hits * 100.0 / (double)(r->hits + r->misses);
	return true;
}

FILL(f_pool_evict)
{
	UNUSED;
	*v = (double)r->evictions / r->dt;
	return r->sj->pool;
}

FILL(f_pool_batches)
{
	UNUSED;
	*v = (double)r->batches / r->dt;
	return r->sj->pool_batches;
}

/* ---- the worker threads' task figures -------------------------------- */

FILL(f_flt)
{
	UNUSED;
	*v = (double)(c->a ? r->majflt : r->minflt) / r->dt;
	return r->faults_ok;
}

/* ---- the host -------------------------------------------------------- */

FILL(f_tlb)
{
	UNUSED;
	*v = (double)(r->sys->tlb - r->ps->tlb) / r->dt;
	return r->sys->tlb_ok && r->ps->tlb_ok;
}

FILL(f_kswapd)
{
	UNUSED;
	*v = (double)(r->sys->ksw_ticks - r->ps->ksw_ticks) / (double)r->hz / r->dt * 100.0;
	return r->sys->ksw_ok && r->ps->ksw_ok;
}

FILL(f_reclaim)
{
	UNUSED;
	*v = c->a ? (double)(pgsteal(r->sys) - pgsteal(r->ps)) / r->dt
		  : (double)(pgscan(r->sys) - pgscan(r->ps)) / r->dt;
	return r->sys->vm_ok && r->ps->vm_ok;
}

/* A /proc/meminfo gauge: Cached, Dirty, Writeback. */
FILL(f_mem)
{
	const struct sys_snap *x = r->sys;

	UNUSED;
	*v = (double)x->mem.bytes[c->a] / MIB;
	return x->mem_ok && (c->a == PROCFS_MEM_CACHED || procfs_mem_has(&x->mem, (enum procfs_mem_key)c->a));
}

/* The host's CPU time by kind, percent of all of it over the row. */
FILL(f_cpu)
{
	const struct procfs_cpu *a = &r->ps->cpu, *b = &r->sys->cpu;
	double part[3], tot;

	UNUSED;
	if (!r->sys->cpu_ok || !r->ps->cpu_ok)
		return false;
	part[0] = (double)((b->user + b->nice) - (a->user + a->nice));
	part[1] = (double)((b->system + b->irq + b->softirq) - (a->system + a->irq + a->softirq));
	part[2] = (double)(b->iowait - a->iowait);
	tot = part[0] + part[1] + part[2] + (double)(b->idle - a->idle) + (double)(b->steal - a->steal);
	if (tot <= 0)
		return false;
	*v = part[c->a] * 100 / tot;
	return true;
}

/* ---- the job's cgroup, devices, counters, evidence --------------------- */

FILL(f_cgroup)
{
	UNUSED;
	*v = (double)r->cg_bytes / MIB;
	return r->cg_ok;
}

FILL(f_dev_mib_s)
{
	UNUSED;
	*v = (double)row_u64(r, c->a) / MIB / r->dt;
	return r->dev_ok;
}

FILL(f_dev_rate)
{
	UNUSED;
	*v = (double)row_u64(r, c->a) / r->dt;
	return r->dev_ok;
}

/* A job_* column: a counter, and a second one added to it (-1: none). */
FILL(f_ev)
{
	UNUSED;
	if (!r->ev_ok[c->a] || (c->b >= 0 && !r->ev_ok[c->b]))
		return false;
	*v = (double)(r->ev_d[c->a] + (c->b >= 0 ? r->ev_d[c->b] : 0)) / r->dt;
	return true;
}

/* A pool's shootdown IPIs per page it evicted in the row (empty
 * without the tracepoint, or with no eviction to divide by). */
FILL(f_ipi_per_evict)
{
	UNUSED;
	if (!r->sj->pool || !r->evictions || !r->ev_ok[PERFEV_TLB_IPI])
		return false;
	*v = (double)r->ev_d[PERFEV_TLB_IPI] / (double)r->evictions;
	return true;
}

FILL(f_explain)
{
	UNUSED;
	*v = r->x.v[c->a];
	return r->x.ok[c->a];
}

/* Who wrote the job's data: for O_DIRECT and pools the kernel's share
 * is 0 by construction and the job's own is what it wrote. */
FILL(f_wb)
{
	UNUSED;
	if (r->wb_zero)
		*v = c->a ? 0 : (double)r->wbytes / MIB / r->dt;
	else
		*v = (double)(c->a ? r->wb_kernel : r->wb_own) / MIB / r->dt;
	return r->wb_ok || r->wb_zero;
}

FILL(f_time)
{
	UNUSED;
	*v = (double)r->tenths[c->a] / 10;
	return r->time_ok;
}

/* ---- the table --------------------------------------------------------- */

#define NUM(n, u, src, p, f, a_, b_) { n, u, src, KIND_NUM, p, false, a_, b_, f }
#define HOST(n, u, src, p, f, a_) { n, u, src, KIND_NUM, p, true, a_, -1, f }
#define INT(n, u, src, f) { n, u, src, KIND_INT, 0, false, -1, -1, f }
#define TEXT(n, src, f) { n, "", src, KIND_TEXT, 0, false, -1, -1, f }
#define US HIST_US_DECIMALS

const struct sample_col samplecols[] = {
	HOST("t_s", "s", SRC_CLOCK, 3, f_t, -1),
	{ "epoch_ms", "ms", SRC_CLOCK, KIND_INT, 0, true, -1, -1, f_epoch },
	HOST("dt_s", "s", SRC_CLOCK, 3, f_dt, -1),
	TEXT("job", SRC_JOB, f_name),
	TEXT("engine", SRC_JOB, f_engine),
	TEXT("rw", SRC_JOB, f_rw),
	INT("threads", "", SRC_JOB, f_threads),
	INT("ramp", "", SRC_CLOCK, f_ramp),
	NUM("iops", "/s", SRC_ARENA, 1, f_rate, ROW_U64(rops), -1),
	NUM("mib_s", "MiB/s", SRC_ARENA, 3, f_mib_s, ROW_U64(rbytes), -1),
	NUM("lat_p50_us", "us", SRC_ARENA, US, f_lat, 50, -1),
	NUM("lat_p99_us", "us", SRC_ARENA, US, f_lat, 99, -1),
	NUM("lat_max_us", "us", SRC_ARENA, US, f_lat, 100, -1),
	NUM("majflt_per_s", "/s", SRC_TASK, 1, f_flt, 1, -1),
	NUM("minflt_per_s", "/s", SRC_TASK, 1, f_flt, 0, -1),
	HOST("tlb_shootdowns_per_s", "/s", SRC_HOST, 1, f_tlb, -1),
	HOST("kswapd_cpu_pct", "%", SRC_HOST, 2, f_kswapd, -1),
	HOST("pgscan_per_s", "/s", SRC_HOST, 1, f_reclaim, 0),
	HOST("pgsteal_per_s", "/s", SRC_HOST, 1, f_reclaim, 1),
	HOST("page_cache_mib", "MiB", SRC_HOST, 1, f_mem, PROCFS_MEM_CACHED),
	HOST("dirty_mib", "MiB", SRC_HOST, 1, f_mem, PROCFS_MEM_DIRTY),
	NUM("cgroup_mib", "MiB", SRC_CGROUP, 1, f_cgroup, -1, -1),
	NUM("dev_read_mib_s", "MiB/s", SRC_DEV, 3, f_dev_mib_s, ROW_U64(dev_rbytes), -1),
	NUM("dev_read_iops", "/s", SRC_DEV, 1, f_dev_rate, ROW_U64(dev_rios), -1),
	HOST("cpu_user_pct", "%", SRC_HOST, 1, f_cpu, 0),
	HOST("cpu_sys_pct", "%", SRC_HOST, 1, f_cpu, 1),
	HOST("cpu_iowait_pct", "%", SRC_HOST, 1, f_cpu, 2),
	NUM("cpu_probe_per_s", "/s", SRC_ARENA, 1, f_probe, -1, -1),
	/* A job that issues no writes measures none: 0 write and flush
	 * rates, like any interval without them. */
	NUM("w_iops", "/s", SRC_ARENA, 1, f_rate, ROW_U64(wops), -1),
	NUM("w_mib_s", "MiB/s", SRC_ARENA, 3, f_mib_s, ROW_U64(wbytes), -1),
	NUM("w_lat_p50_us", "us", SRC_ARENA, US, f_hist, 50, 1),
	NUM("w_lat_p99_us", "us", SRC_ARENA, US, f_hist, 99, 1),
	NUM("flush_per_s", "/s", SRC_ARENA, 1, f_rate, ROW_U64(syncs), -1),
	NUM("flush_lat_p99_us", "us", SRC_ARENA, US, f_hist, 99, 2),
	HOST("writeback_mib", "MiB", SRC_HOST, 1, f_mem, PROCFS_MEM_WRITEBACK),
	NUM("dev_write_mib_s", "MiB/s", SRC_DEV, 3, f_dev_mib_s, ROW_U64(dev_wbytes), -1),
	NUM("dev_write_iops", "/s", SRC_DEV, 1, f_dev_rate, ROW_U64(dev_wios), -1),
	NUM("pool_hit_pct", "%", SRC_ARENA, 2, f_pool_hit, -1, -1),
	NUM("pool_evict_per_s", "/s", SRC_ARENA, 1, f_pool_evict, -1, -1),
	/* Direct reclaim counts the job's threads entering reclaim
	 * themselves, globally or in their memory cgroup (the only kind a
	 * mem_limit job does). */
	NUM("job_tlb_ipi_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_TLB_IPI, -1),
	NUM("job_pgcache_add_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_PGCACHE_ADD, -1),
	NUM("job_direct_reclaim_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_DIRECT_RECLAIM, PERFEV_MEMCG_RECLAIM),
	NUM("job_csw_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_CSW, -1),
	NUM("job_dtlb_miss_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_DTLB_MISS, -1),
	NUM("job_tlb_local_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_TLB_LOCAL, -1),
	NUM("job_faults_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_FAULTS, -1),
	NUM("job_majflt_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_MAJFLT, -1),
	NUM("job_migrations_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_MIGRATIONS, -1),
	NUM("job_cycles_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_CYCLES, -1),
	NUM("job_tlb_recv_per_s", "/s", SRC_PERF, 1, f_ev, PERFEV_TLB_REMOTE, -1),
	NUM("pool_evict_batches_per_s", "/s", SRC_ARENA, 1, f_pool_batches, -1, -1),
	NUM("pool_ipi_per_evict", "", SRC_PERF, 3, f_ipi_per_evict, -1, -1),
	NUM("target_cached_mib", "MiB", SRC_RESIDENCY, 1, f_explain, EXPLAIN_TARGET_CACHED, -1),
	NUM("target_evicted_mib", "MiB", SRC_RESIDENCY, 1, f_explain, EXPLAIN_TARGET_EVICTED, -1),
	NUM("target_recent_evicted_mib", "MiB", SRC_RESIDENCY, 1, f_explain, EXPLAIN_TARGET_RECENT, -1),
	HOST("refault_per_s", "/s", SRC_HOST, 1, f_explain, EXPLAIN_REFAULT),
	HOST("psi_mem_some_pct", "%", SRC_PSI, 2, f_explain, EXPLAIN_PSI_MEM_SOME),
	HOST("psi_mem_full_pct", "%", SRC_PSI, 2, f_explain, EXPLAIN_PSI_MEM_FULL),
	HOST("psi_io_some_pct", "%", SRC_PSI, 2, f_explain, EXPLAIN_PSI_IO_SOME),
	HOST("psi_io_full_pct", "%", SRC_PSI, 2, f_explain, EXPLAIN_PSI_IO_FULL),
	NUM("cg_mem_some_pct", "%", SRC_PSI, 2, f_explain, EXPLAIN_CG_SOME, -1),
	NUM("cg_mem_full_pct", "%", SRC_PSI, 2, f_explain, EXPLAIN_CG_FULL, -1),
	NUM("read_amp", "", SRC_DEV, 3, f_explain, EXPLAIN_READ_AMP, -1),
	NUM("cpu_us_per_4k", "us", SRC_TASK, 2, f_explain, EXPLAIN_CPU_PER_4K, -1),
	NUM("wb_own_mib_s", "MiB/s", SRC_WBTRACE, 3, f_wb, 0, -1),
	NUM("wb_kernel_mib_s", "MiB/s", SRC_WBTRACE, 3, f_wb, 1, -1),
	TEXT("lat_from", SRC_JOB, f_lat_from),
	NUM("time_cpu_pct", "%", SRC_TASKSTATS, 1, f_time, TIMESHARE_CPU, -1),
	NUM("time_runq_pct", "%", SRC_TASKSTATS, 1, f_time, TIMESHARE_RUNQ, -1),
	NUM("time_blkio_pct", "%", SRC_TASKSTATS, 1, f_time, TIMESHARE_BLKIO, -1),
	NUM("time_reclaim_pct", "%", SRC_TASKSTATS, 1, f_time, TIMESHARE_RECLAIM, -1),
	NUM("time_thrash_pct", "%", SRC_TASKSTATS, 1, f_time, TIMESHARE_THRASH, -1),
	NUM("time_compact_pct", "%", SRC_TASKSTATS, 1, f_time, TIMESHARE_COMPACT, -1),
	NUM("time_swapin_pct", "%", SRC_TASKSTATS, 1, f_time, TIMESHARE_SWAPIN, -1),
	NUM("time_other_pct", "%", SRC_TASKSTATS, 1, f_time, TIMESHARE_OTHER, -1),
};

const size_t samplecols_n = sizeof(samplecols) / sizeof(samplecols[0]);

#define NCOLS (sizeof(samplecols) / sizeof(samplecols[0]))

const char *samplecols_header(void)
{
	static char header[2048];

	if (!header[0]) {
		char *p = header;

		for (size_t i = 0; i < NCOLS; i++) {
			size_t n = strlen(samplecols[i].name);

			if (i)
				*p++ = ',';
			memcpy(p, samplecols[i].name, n);
			p += n;
		}
		*p = '\0';
	}
	return header;
}

/* ---- writing a row ----------------------------------------------------- */

/* The host cells of the last row written, and what they were made of:
 * the same two host readings over the same span at the same moment give
 * the same cells, so 2000 jobs sampled together format them once. They
 * are kept in column order, one after the other, so a run of host
 * columns is one copy (@run: how many host columns from each on). */
struct samplecols_cache {
	bool valid;
	uint64_t sys_seq, ps_seq, now;
	double dt;
	unsigned char run[NCOLS];
	unsigned short off[NCOLS], end[NCOLS];
	unsigned used;
	char buf[NCOLS * 24];
};

struct samplecols_cache *samplecols_cache_new(void)
{
	struct samplecols_cache *hc = calloc(1, sizeof(struct samplecols_cache));

	for (size_t i = NCOLS; hc && i-- > 0;)
		hc->run[i] = !samplecols[i].host ? 0 : i + 1 < NCOLS ? hc->run[i + 1] + 1 : 1;
	return hc;
}

void samplecols_cache_free(struct samplecols_cache *hc)
{
	free(hc);
}

/* @n bytes, a cell or a run of them: as word moves, the last two
 * overlapping. A memcpy of a size the compiler cannot see was inlined
 * as "rep movsq", whose start-up a 2000-job sample felt (perf). */
static inline void copy_short(char *d, const char *s, size_t n)
{
	if (n > 64) {
		memcpy(d, s, n);	/* rare: a long name's run */
	} else if (n > 32) {
		memcpy(d, s, 32);
		memcpy(d + n - 32, s + n - 32, 32);
	} else if (n >= 16) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

static void cell_u(char **p, char *end, uint64_t v)
{
	char tmp[24], *q = tmp + sizeof(tmp);

	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	*--q = ',';
	if (end - *p > tmp + sizeof(tmp) - q) {
		copy_short(*p, q, (size_t)(tmp + sizeof(tmp) - q));
		*p += tmp + sizeof(tmp) - q;
	}
}

static void cell_s(char **p, char *end, const char *v)
{
	size_t n = strlen(v);

	if ((size_t)(end - *p) > n + 1) {
		**p = ',';
		copy_short(*p + 1, v, n);
		*p += n + 1;
	}
}

static void copy_span(char **p, char *end, const char *from, size_t n)
{
	if ((size_t)(end - *p) > n) {
		copy_short(*p, from, n);
		*p += n;
	}
}

/* A zero as "%.*f" writes it: a row of a read job has many (its write,
 * flush and fault rates), and copying one is a fraction of formatting. */
static const char *const zeros[] = { "0", "0.0", "0.00", "0.000", "0.0000", "0.00000", "0.000000" };

/* One cell, with its leading comma. */
static void write_cell(const struct sample_row *r, const struct sample_col *c, char **p, char *end)
{
	double v = 0;
	const char *text = "";
	bool ok = c->fill(r, c, &v, &text);

	if (c->kind == KIND_TEXT)
		cell_s(p, end, ok ? text : "");
	else if (c->kind == KIND_INT && ok)
		cell_u(p, end, (uint64_t)v);
	else if (ok && v == 0 && !signbit(v) && c->prec >= 0 && c->prec < (int)(sizeof(zeros) / sizeof(zeros[0])))
		cell_s(p, end, zeros[c->prec]);
	else
		fmt_cell(p, end, ok, v, c->prec);
}

/* Is column @c's cell the same in every row of job @sj (@idle: in
 * every idle row)? Each answer is what the column's fill function does
 * with the sources the job's options and set-up leave unread or at zero
 * (a read job's rows never count a write, a job without a pool has no
 * pool figures, an idle row's workers counted nothing, ...). */
static bool col_fixed(const struct sample_col *c, const struct sampler_job *sj,
		      const struct samplecols_fixed *fx, bool idle)
{
	bool w = c->a == ROW_U64(wops) || c->a == ROW_U64(wbytes) || c->a == ROW_U64(syncs);

	if (c->src == SRC_JOB || (idle && c->src == SRC_ARENA))
		return true;
	if (c->fill == f_hist || ((c->fill == f_rate || c->fill == f_mib_s) && w))
		return !fx->writes;
	if (c->fill == f_probe)
		return !sj->slots.nprobe;
	if (c->fill == f_pool_hit || c->fill == f_pool_evict || c->fill == f_ipi_per_evict)
		return !sj->pool;
	if (c->fill == f_pool_batches)
		return !sj->pool_batches;
	if (c->fill == f_ev)
		return !fx->ev;
	if (c->fill == f_cgroup || (c->fill == f_explain && (c->a == EXPLAIN_CG_SOME || c->a == EXPLAIN_CG_FULL)))
		return !fx->cgroup;
	if (c->fill == f_dev_mib_s || c->fill == f_dev_rate || (c->fill == f_explain && c->a == EXPLAIN_READ_AMP))
		return !fx->devs;
	if (c->fill == f_wb)
		return !fx->wb_traced && (!fx->wb_zero || !fx->writes);
	if (c->fill == f_time)
		return !fx->delayacct;
	return false;
}

bool samplecols_row_idle(const struct sample_row *r)
{
	return !(r->rops | r->rbytes | r->probe | r->wops | r->wbytes | r->syncs | r->hits | r->misses |
		 r->evictions | r->batches) &&
	       !r->lat && !r->rlat->n && !r->wlat->n && !r->slat->n;
}

/* The source without which column @c's cell is empty, whatever else. */
static enum samplecols_gate col_gate(const struct sample_col *c)
{
	return c->fill == f_flt ? GATE_FAULTS : c->fill == f_ev ? GATE_EV : GATE_NONE;
}

static bool gate_open(const struct sample_row *r, unsigned gate)
{
	if (gate == GATE_FAULTS)
		return r->faults_ok;
	if (gate == GATE_EV) {
		for (unsigned k = 0; k < PERFEV_NR; k++)
			if (r->ev_ok[k])
				return true;
		return false;
	}
	return true;
}

/* A plan while it is made: its segments and its own cells apart. */
struct plan_draft {
	unsigned nseg;
	struct samplecols_seg seg[SAMPLECOLS_PLAN_BYTES / sizeof(struct samplecols_seg)];
};

/* Segment @kind of columns [@i, @i + 1) after the draft's last: merged
 * into it when it is of the same kind and gate and ends at @i. False:
 * no room. */
static bool plan_add(struct plan_draft *d, enum samplecols_seg_kind kind, enum samplecols_gate gate, size_t i,
		     size_t len)
{
	struct samplecols_seg *g = d->nseg ? &d->seg[d->nseg - 1] : NULL;

	if (g && g->kind == kind && g->gate == gate && g->first + g->n == i && g->len + len <= 255) {
		g->n++;
		g->len = (unsigned char)(g->len + len);
		return true;
	}
	if (d->nseg == sizeof(d->seg) / sizeof(d->seg[0]))
		return false;
	d->seg[d->nseg++] = (struct samplecols_seg){ (unsigned char)kind, (unsigned char)i, 1, (unsigned char)len,
						     (unsigned char)gate };
	return true;
}

static void job_plan(struct samplecols_plan *pl, const struct sampler_job *sj, const struct samplecols_fixed *fx,
		     bool idle)
{
	static const struct hist none;	/* a row's empty histograms */
	/* A row of nothing: what the fixed columns' cells are in any row. */
	const struct sample_row r0 = {
		.sj = sj, .dt = 1, .wb_zero = fx->wb_zero, .rlat = &none, .wlat = &none, .slat = &none,
	};
	struct plan_draft d = { 0 };
	char text[SAMPLECOLS_PLAN_BYTES], *p = text, *end = text + sizeof(text);
	size_t segs;

	pl->nseg = 0;
	for (size_t i = 0; i < NCOLS; i++) {
		const struct sample_col *c = &samplecols[i];
		char *at = p;
		bool ok;

		if (c->host) {
			ok = plan_add(&d, SEG_HOST, GATE_NONE, i, 0);
		} else if (!col_fixed(c, sj, fx, idle)) {
			ok = plan_add(&d, SEG_CELL, col_gate(c), i, 0);
		} else {
			write_cell(&r0, c, &p, end);
			/* A cell that did not fit is left out: so is the plan. */
			ok = p > at && end - p > 0 && plan_add(&d, SEG_OWN, GATE_NONE, i, (size_t)(p - at));
		}
		if (!ok)
			return;
	}
	segs = d.nseg * sizeof(d.seg[0]);
	if (segs + (size_t)(p - text) > sizeof(pl->mem))
		return;		/* too long to keep: every cell made */
	memcpy(pl->mem, d.seg, segs);
	memcpy(pl->mem + segs, text, (size_t)(p - text));
	pl->nseg = (unsigned char)d.nseg;
}

void samplecols_job_cells(struct samplecols_job *jc, const struct sampler_job *sj,
			  const struct samplecols_fixed *fx)
{
	job_plan(&jc->plan[0], sj, fx, false);
	job_plan(&jc->plan[1], sj, fx, true);
}

/* A host cell made afresh, kept for the rows that share it. */
static void host_cell(const struct sample_row *r, struct samplecols_cache *hc, size_t i, char **p, char *end)
{
	char *at = *p;
	size_t n;

	write_cell(r, &samplecols[i], p, end);
	n = (size_t)(*p - at);
	if (hc->used + n > sizeof(hc->buf)) {
		hc->valid = false;	/* too long to keep: made afresh */
		return;
	}
	hc->off[i] = (unsigned short)hc->used;
	memcpy(hc->buf + hc->used, at, n);
	hc->used += n;
	hc->end[i] = (unsigned short)hc->used;
}

/* Host columns [@i, @i + @n): copied as one run when kept for the
 * sample (@keep), else made and kept. */
static void host_run(const struct sample_row *r, struct samplecols_cache *hc, bool keep, size_t i, size_t n,
		     char **p, char *end)
{
	if (keep) {
		copy_span(p, end, hc->buf + hc->off[i], (size_t)(hc->end[i + n - 1] - hc->off[i]));
		return;
	}
	for (size_t k = i; k < i + n; k++) {
		if (hc)
			host_cell(r, hc, k, p, end);
		else
			write_cell(r, &samplecols[k], p, end);
	}
}

/* Empty cells: at most a segment's. */
static const char commas[] = ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,";
_Static_assert(sizeof(commas) > NCOLS, "a comma per column");

/* The row by its job's plan: 10-20 segments. */
static char *write_plan(const struct sample_row *r, const struct samplecols_plan *pl, struct samplecols_cache *hc,
			bool keep, char *p, char *end)
{
	const struct samplecols_seg *seg = samplecols_plan_seg(pl);
	const char *own = (const char *)(seg + pl->nseg);

	for (unsigned k = 0; k < pl->nseg; k++) {
		const struct samplecols_seg *g = &seg[k];

		if (g->kind == SEG_OWN) {
			copy_span(&p, end, own, g->len);
			own += g->len;
		} else if (g->kind == SEG_CELL && !gate_open(r, g->gate)) {
			copy_span(&p, end, commas, g->n);
		} else if (g->kind == SEG_CELL) {
			for (unsigned i = g->first; i < (unsigned)g->first + g->n; i++)
				write_cell(r, &samplecols[i], &p, end);
		} else {
			host_run(r, hc, keep, g->first, g->n, &p, end);
		}
	}
	return p;
}

char *samplecols_write(const struct sample_row *r, struct samplecols_cache *hc, char *line, char *end)
{
	const struct samplecols_plan *pl = r->jc ? &r->jc->plan[samplecols_row_idle(r)] : NULL;
	char *p = line;
	bool keep = hc && hc->valid && hc->sys_seq == r->sys->seq && hc->ps_seq == r->ps->seq &&
		    hc->now == r->now && hc->dt == r->dt;

	if (hc && !keep) {
		hc->valid = true;
		hc->sys_seq = r->sys->seq;
		hc->ps_seq = r->ps->seq;
		hc->now = r->now;
		hc->dt = r->dt;
		hc->used = 0;
	}
	if (pl && pl->nseg) {
		p = write_plan(r, pl, hc, keep, p, end);
	} else {
		for (size_t i = 0; i < NCOLS;) {
			size_t n = samplecols[i].host && hc ? hc->run[i] : 1;

			if (samplecols[i].host)
				host_run(r, hc, keep, i, n, &p, end);
			else
				write_cell(r, &samplecols[i], &p, end);
			i += n;
		}
	}
	/* The first cell has no comma before it. */
	if (p > line && *line == ',') {
		memmove(line, line + 1, (size_t)(p - line - 1));
		p--;
	}
	return p;
}
