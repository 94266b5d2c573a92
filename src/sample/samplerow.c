/*
 * samplerow.c - one CSV row per job per interval (and the devices it reads), in the
 * header's order (the read columns, the write columns, bufpool's pool
 * columns, the job_* kernel counters): the job's counters and latency histograms since its
 * previous row, its threads' faults, its devices, and the system-wide
 * deltas over the same span. A cell whose source could not be read is
 * empty, never 0.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/fmtnum.h"
#include "lib/latclock.h"
#include "telemetry/cgroup.h"
#include "sample/samplerow.h"


void sampler_warn_once(bool *flag, const char *fmt, ...)
{
	va_list ap;

	if (*flag)
		return;
	*flag = true;
	fprintf(stderr, "faultline: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; its CSV cells stay empty\n");
}

/* ---- devices (resolved at set-up; read in sampler_read_job_devs) ---- */

static int dev_add(struct sampler *s, const char *name, const char *role, const struct devinfo *d)
{
	for (unsigned i = 0; i < s->ndevs; i++)
		if (!strcmp(s->devs[i].name, name))
			return (int)i;
	if (s->ndevs >= sizeof(s->devs) / sizeof(s->devs[0]))
		return -ENOSPC;

	struct dev_src *ds = &s->devs[s->ndevs];

	snprintf(ds->name, sizeof(ds->name), "%s", name);
	snprintf(ds->role, sizeof(ds->role), "%s", role);
	snprintf(ds->facts.model, sizeof(ds->facts.model), "%s%s%s", d->vendor,
		 d->vendor[0] && d->model[0] ? " " : "", d->model);
	snprintf(ds->facts.scheduler, sizeof(ds->facts.scheduler), "%s", d->scheduler);
	ds->facts.rotational = d->rotational;
	ds->facts.size_bytes = d->size_bytes;
	snprintf(ds->facts.md_level, sizeof(ds->facts.md_level), "%s", d->md_level);
	ds->facts.md_chunk_bytes = d->md_chunk_bytes;
	ds->facts.md_raid_disks = d->md_raid_disks;
	ds->ok = devinfo_stat_open(&ds->src, d) == 0 && devinfo_stat_read(&ds->src, &ds->last) == 0;
	if (!ds->ok)
		fprintf(stderr, "faultline: warning: cannot read %s for device %s; device traffic stays empty\n",
			d->stat_path, name);
	return (int)s->ndevs++;
}

static void job_add_dev(struct job_samp *js, int idx)
{
	if (idx < 0 || js->ndev >= RESULT_MAX_DEVS)
		return;
	for (unsigned i = 0; i < js->ndev; i++)
		if (js->dev[i] == (unsigned)idx)
			return;
	js->dev[js->ndev++] = (unsigned)idx;
}

/* The job's primary devices first (what its traffic is read from), then
 * md members (reported, not summed: the array already counts them). */
void sampler_resolve_job_devices(struct sampler *s, unsigned j)
{
	const struct sampler_job *sj = &s->cfg.jobs[j];
	struct job_samp *js = &s->jobs[j];
	const char *sys = devinfo_sysroot();
	struct devinfo di[RESULT_MAX_DEVS];
	const struct devinfo *use[RESULT_MAX_DEVS];
	bool count[RESULT_MAX_DEVS];
	unsigned nd = 0;

	for (unsigned i = 0; i < sj->ntargets && nd < RESULT_MAX_DEVS; i++) {
		struct err e = { 0 };
		const struct target *t = &sj->targets[i];

		memset(&di[nd], 0, sizeof(di[nd]));
		if (devinfo_resolve(sys, t->dev, &di[nd], &e) < 0) {
			fprintf(stderr, "faultline: warning: %s: no block device to sample (%s); device traffic stays empty\n",
				t->path, e.msg);
			continue;
		}
		/* A loop device's reads reach its backing file's device;
		 * sample that, where it resolved. */
		use[nd] = di[nd].kind == DEVINFO_LOOP && di[nd].backing ? di[nd].backing : &di[nd];
		nd++;
	}
	/* Summed: each device whose reads no other of the set already
	 * counts (a partition's disk, a member's array). */
	devinfo_counted(use, nd, count);
	for (unsigned i = 0; i < nd; i++)
		if (count[i])
			job_add_dev(js, dev_add(s, use[i]->name, devinfo_kind_name(use[i]->kind), use[i]));
	js->nprimary = js->ndev;
	for (unsigned i = 0; i < nd; i++) {
		const struct devinfo *d = di[i].kind == DEVINFO_LOOP && di[i].backing ? di[i].backing : &di[i];

		/* md0p1 is a partition but carries its array's members. */
		if (d->md_level[0])
			for (unsigned m = 0; m < d->nmembers; m++)
				job_add_dev(js, dev_add(s, d->members[m].name, "md-member", &d->members[m]));
		devinfo_free(&di[i]);
	}
}

void sampler_moment(struct sampler *s, uint64_t now)
{
	if (s->gen && now == s->moment_now)
		return;
	s->gen++;
	s->moment_now = now;
	s->moment_sys_ok = false;
	residency_set_next(&s->regions);
}

/* Each device once per moment, however many jobs read from it. */
void sampler_read_job_devs(struct sampler *s, struct job_samp *js, struct devinfo_blkstat *out)
{
	for (unsigned i = 0; i < js->ndev; i++) {
		struct dev_src *ds = &s->devs[js->dev[i]];

		if (ds->ok && ds->gen != s->gen) {
			if (devinfo_stat_read(&ds->src, &ds->cur) < 0)
				ds->ok = false;
			ds->gen = s->gen;
		}
		if (ds->ok)
			out[i] = ds->cur;
		else
			memset(&out[i], 0, sizeof(out[i]));
	}
}

bool sampler_job_devs_ok(const struct sampler *s, const struct job_samp *js)
{
	if (!js->nprimary)
		return false;
	for (unsigned i = 0; i < js->nprimary; i++)
		if (!s->devs[js->dev[i]].ok)
			return false;
	return true;
}

/* A CSV write that failed: the run stops when its reader left, else
 * the CSV ends at its last whole row (csvout.c). */
static void csv_failed(struct sampler *s, int ret)
{
	if (!ret)
		return;
	if (ret == -EPIPE) {
		/* The reader of --csv=- went away: nobody is watching, so
		 * end the run (cleanly). */
		fprintf(stderr, "faultline: the CSV reader closed the pipe; stopping the run\n");
		__atomic_store_n(s->cfg.stop, 1, __ATOMIC_RELAXED);
	} else {
		fprintf(stderr, "faultline: warning: writing the CSV %s failed: %s; it ends at the last whole row\n",
			s->csv.path, strerror(-ret));
	}
}

void sampler_csv_write(struct sampler *s, const char *line, size_t len)
{
	csv_failed(s, csvout_row(&s->csv, line, len));
}

void sampler_flush(struct sampler *s)
{
	if (s->have_csv)
		csv_failed(s, csvout_flush(&s->csv));
}

/* The job_* columns, in header order: a counter, and a second
 * one added to it (-1: none). Direct reclaim counts the job's threads
 * entering reclaim themselves, globally or in their memory cgroup (the
 * only kind a mem_limit job does). */
static const int8_t ev_cols[][2] = {
	{ PERFEV_TLB_IPI, -1 }, { PERFEV_PGCACHE_ADD, -1 },
	{ PERFEV_DIRECT_RECLAIM, PERFEV_MEMCG_RECLAIM }, { PERFEV_CSW, -1 },
	{ PERFEV_DTLB_MISS, -1 }, { PERFEV_TLB_LOCAL, -1 }, { PERFEV_FAULTS, -1 },
	{ PERFEV_MAJFLT, -1 }, { PERFEV_MIGRATIONS, -1 }, { PERFEV_CYCLES, -1 },
	{ PERFEV_TLB_REMOTE, -1 },
};

/* The CSV's rw column, by enum rw_mode. */
static const char *const rw_names[] = { "read", "randread", "write", "randwrite", "rw", "randrw",
					"trim", "randtrim", "trimwrite", "randtrimwrite" };

/* ---- per-thread faults ---------------------------------------------- */

/* A thread's fault counters now: its exit figures once it has exited,
 * else its /proc task stat. false when neither can be had. */
bool sampler_thread_faults(struct sampler *s, struct thread_samp *ts, const struct thread_stats *st,
			   uint64_t *maj, uint64_t *min)
{
	struct procfs_task pt;
	pid_t tid = STAT_LOAD(&st->tid);

	if (STAT_LOAD(&st->done)) {
		ts->cpu_ok = st->sched_ok;
		if (st->sched_ok && st->exit_cpu_ns > ts->cpu_ns)
			ts->cpu_ns = st->exit_cpu_ns;
		if (!st->rusage_ok)
			return false;
		*maj = st->exit_majflt;
		*min = st->exit_minflt;
		return true;
	}
	if (!tid)
		return false;
	if (!ts->task_open && !ts->task_failed) {
		pid_t pid = STAT_LOAD(&st->pid) == getpid() ? 0 : STAT_LOAD(&st->pid);

		if (procfs_task_attach(&ts->task, s->proc, pid, tid, "stat") < 0) {
			ts->task_failed = true;
			/* A thread that has already exited has no task file,
			 * and needs none: its exit figures follow below. */
			if (!STAT_LOAD(&st->done))
				sampler_warn_once(&s->warned_task,
					  "per-thread fault counters unavailable (%s/.../task/%d/stat)",
					  s->proc, (int)tid);
		} else {
			ts->task_open = true;
		}
	}
	if (!ts->task_open || procfs_task_read(&ts->task, &pt) < 0) {
		/* The thread may have exited between the checks: its exit
		 * figures are published before done is set. */
		if (STAT_LOAD(&st->done) && st->rusage_ok) {
			ts->cpu_ok = st->sched_ok;
			if (st->sched_ok && st->exit_cpu_ns > ts->cpu_ns)
				ts->cpu_ns = st->exit_cpu_ns;
			*maj = st->exit_majflt;
			*min = st->exit_minflt;
			return true;
		}
		return false;
	}
	*maj = pt.majflt;
	*min = pt.minflt;
	if (!ts->sched_open && !ts->sched_failed) {
		pid_t pid = STAT_LOAD(&st->pid) == getpid() ? 0 : STAT_LOAD(&st->pid);

		ts->sched_open = procfs_task_attach(&ts->sched, s->proc, pid, tid, "schedstat") == 0;
		ts->sched_failed = !ts->sched_open;
	}
	{
		uint64_t ns;
		ssize_t n = ts->sched_open ? procfs_src_read_record(&ts->sched) : -EBADF;

		if (n > 0 && procfs_parse_schedstat(ts->sched.buf, (size_t)n, &ns) == 0)
			ts->cpu_ns = ns;
		else
			ts->cpu_ns = (pt.utime + pt.stime) * (1000000000ull / (uint64_t)s->hz);
	}
	ts->cpu_ok = true;
	return true;
}

static void cell_f(char **p, char *end, bool ok, double v, int prec)
{
	fmt_cell(p, end, ok, v, prec);
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
		memcpy(*p, q, (size_t)(tmp + sizeof(tmp) - q));
		*p += tmp + sizeof(tmp) - q;
	}
}

static void cell_s(char **p, char *end, const char *v)
{
	size_t n = strlen(v);

	if ((size_t)(end - *p) > n + 1) {
		**p = ',';
		memcpy(*p + 1, v, n);
		*p += n + 1;
	}
}

/*
 * A measured interval of job @j, ending @now, for fio's figures: a
 * sample of its IOPS and KiB/s per direction (fio's add_stat_sample;
 * like fio, an interval without I/O in a direction adds none to it, nor
 * does the part of one left when the job ends, and rates truncate to
 * integers), and its threads' shares for the fio logs.
 */
static void fio_interval(struct sampler *s, unsigned j, uint64_t now, const uint64_t *ops,
			 const uint64_t *bytes)
{
	struct job_samp *js = &s->jobs[j];
	uint64_t dt = now - js->last_t;

	for (unsigned d = 0; d < FIOLOG_DIRS; d++) {
		if (!ops[d] || (js->ending && !fiostat_whole(dt, s->cfg.interval_ns)))
			continue;
		fiostat_series_add(&js->iops[d], (uint64_t)((double)ops[d] * 1e9 / (double)dt));
		fiostat_series_add(&js->bw[d], (uint64_t)((double)bytes[d] * 1e9 / (double)dt / 1024.0));
	}
	fiolog_interval(s->fiolog, j, now > js->measure_ns ? (now - js->measure_ns) / 1000000ull : 0,
			dt, js->share, js->ending);
}

void sampler_job_snap(struct sampler *s, unsigned j)
{
	struct job_samp *js = &s->jobs[j];
	const struct sampler_job *sj = &s->cfg.jobs[j];

	for (unsigned i = 0; i < js->nthreads; i++) {
		struct thread_samp *ts = &js->th[i];
		const struct thread_stats *st = &sj->stats[i];

		/* The counts, then the latencies, then the counts again: a
		 * worker counts a request before it records its latency, so
		 * when no count moved in between, every request counted has
		 * its latency in the histograms taken, and no other request
		 * has. A count that moved is read again (three tries: a worker
		 * is never held up, and its next request is microseconds off). */
		for (unsigned tries = 0;; tries++) {
			ts->ops = STAT_LOAD(&st->ops);
			ts->bytes = STAT_LOAD(&st->bytes);
			ts->probe = STAT_LOAD(&st->probe_units);
			if (ts->prev_w) {
				ts->wops = STAT_LOAD(&st->wops);
				ts->wbytes = STAT_LOAD(&st->wbytes);
				ts->syncs = STAT_LOAD(&st->syncs);
			}
			if (!sj->job->latency)
				break;
			if (i < sj->nworkers)
				hist_take(&ts->stage[0], &ts->prev_lat, &st->lat);
			if (ts->prev_w) {
				hist_take(&ts->stage[1], &ts->prev_w[0], &st->wlat);
				hist_take(&ts->stage[2], &ts->prev_w[1], &st->slat);
			}
			if (tries == 2 || (STAT_LOAD(&st->ops) == ts->ops &&
					   (!ts->prev_w || (STAT_LOAD(&st->wops) == ts->wops &&
							    STAT_LOAD(&st->syncs) == ts->syncs))))
				break;
		}
		if (sj->job->log_prio) {
			const uint64_t *src = &st->prio.ops[0][0];
			uint64_t *dst = &ts->prio.ops[0][0];

			for (size_t k = 0; k < sizeof(ts->prio) / sizeof(uint64_t); k++)
				dst[k] = STAT_LOAD(&src[k]);
		}
		if (sj->pool) {
			ts->hits = STAT_LOAD(&st->pool.hits);
			ts->misses = STAT_LOAD(&st->pool.misses);
			ts->evictions = STAT_LOAD(&st->pool.evictions);
			if (sj->pool_batches)
				ts->batches = STAT_LOAD(&st->pool.evict_batches);
		}
	}
}

bool sampler_due(const struct sampler *s, unsigned j, uint64_t now, unsigned every)
{
	uint64_t k;

	if (every <= 1 || s->jobs[j].ending)
		return true;
	k = (now - s->t0 + s->cfg.interval_ns / 2) / s->cfg.interval_ns + j;
	return k % every == 0 || (k + 1) % every == 0;
}

/* The job's own kernel counters now, when due; none (every ok false)
 * when not, so that neither this row nor the next has cells. */
static void ev_read_row(struct sampler *s, unsigned j, uint64_t now, struct perfev_values *ev)
{
	struct job_samp *js = &s->jobs[j];
	uint64_t t0;

	memset(ev->ok, 0, sizeof(ev->ok));
	if (!js->ev_open || !sampler_due(s, j, now, s->ev_every))
		return;
	t0 = now_ns();
	if (perfev_read(&js->ev, ev) < 0)
		memset(ev->ok, 0, sizeof(ev->ok));
	s->ev_read_ns += now_ns() - t0;
	s->ev_reads++;
}

/* log_prio: a worker's requests per priority since the last row. */
static void prio_share(struct fiolog_sample *sh, struct thread_samp *ts)
{
	for (unsigned d = 0; d < FIOLOG_DIRS; d++)
		for (unsigned i = 0; i < STATS_PRIO_MAX; i++) {
			struct fiolog_dirsample *p = &sh->prio[d][i];

			p->ops = ts->prio.ops[d][i] - ts->prev_prio.ops[d][i];
			p->bytes = ts->prio.bytes[d][i] - ts->prev_prio.bytes[d][i];
			p->lat_n = ts->prio.lat_n[d][i] - ts->prev_prio.lat_n[d][i];
			p->lat_sum_ns = ts->prio.lat_sum[d][i] - ts->prev_prio.lat_sum[d][i];
		}
	ts->prev_prio = ts->prio;
}

/* One CSV row for job @j covering [js->last_t, now). */
void sampler_job_row(struct sampler *s, unsigned j, uint64_t now, const struct sys_snap *sys,
		     double *mib_s_out, double *iops_out)
{
	struct job_samp *js = &s->jobs[j];
	const struct sampler_job *sj = &s->cfg.jobs[j];
	const struct job *job = sj->job;
	const struct sys_snap *ps = &js->last_sys;
	struct devinfo_blkstat dcur[RESULT_MAX_DEVS];
	double dt = (double)(now - js->last_t) / 1e9;
	uint64_t ops = 0, bytes = 0, probe = 0, maj = 0, min = 0, pmaj = 0, pmin = 0;
	uint64_t wops = 0, wbytes = 0, syncs = 0, cpu = 0, rb_dev = 0;
	uint64_t hits = 0, misses = 0, evictions = 0, batches = 0;
	bool faults_ok = true, cpu_ok = true, ramp, dev_ok, lat;
	double p50, p99;
	char line[2048], *p = line, *end = line + sizeof(line);

	if (dt <= 0)
		return;
	if (s->test_delay_ns) {
		struct timespec d = { .tv_sec = (time_t)(s->test_delay_ns / 1000000000ull),
				      .tv_nsec = (long)(s->test_delay_ns % 1000000000ull) };

		nanosleep(&d, NULL);
	}
	/* Only the buckets the last row filled are written. */
	hist_clear(&s->interval);
	hist_clear(&s->winterval);
	hist_clear(&s->sinterval);
	for (unsigned i = 0; i < js->nthreads; i++) {
		struct thread_samp *ts = &js->th[i];
		const struct thread_stats *st = &sj->stats[i];
		uint64_t o = ts->ops, b = ts->bytes, u = ts->probe;
		uint64_t mj, mn;

		if (i < sj->nworkers) {
			memset(&js->share[i], 0, sizeof(js->share[i]));
			js->share[i].dir[FIOLOG_READ].ops = o - ts->prev_ops;
			js->share[i].dir[FIOLOG_READ].bytes = b - ts->prev_bytes;
			if (job->log_prio)
				prio_share(&js->share[i], ts);
		}
		ops += o - ts->prev_ops;
		bytes += b - ts->prev_bytes;
		probe += u - ts->prev_probe;
		ts->prev_ops = o;
		ts->prev_bytes = b;
		ts->prev_probe = u;
		if (sj->pool) {
			uint64_t h = ts->hits, m = ts->misses, ev = ts->evictions;

			hits += h - ts->prev_hits;
			misses += m - ts->prev_misses;
			evictions += ev - ts->prev_evictions;
			ts->prev_hits = h;
			ts->prev_misses = m;
			ts->prev_evictions = ev;
			if (sj->pool_batches) {
				uint64_t bt = ts->batches;

				batches += bt - ts->prev_batches;
				ts->prev_batches = bt;
			}
		}
		/* One pass over the buckets the thread has used, not
		 * copies of its whole histogram. */
		if (job->latency && i < sj->nworkers) {
			uint64_t sum, n = hist_commit(&s->interval, &ts->prev_lat, &ts->stage[0], &sum);

			js->share[i].dir[FIOLOG_READ].lat_n = n;
			js->share[i].dir[FIOLOG_READ].lat_sum_ns = sum;
			js->share[i].dir[FIOLOG_READ].lat_max_ns = n ? hist_stage_max(&ts->stage[0]) : 0;
		}
		if (ts->prev_w) {
			uint64_t wo = ts->wops, wb = ts->wbytes, sy = ts->syncs;

			if (i < sj->nworkers) {
				js->share[i].dir[FIOLOG_WRITE].ops = wo - ts->prev_wops;
				js->share[i].dir[FIOLOG_WRITE].bytes = wb - ts->prev_wbytes;
			}
			wops += wo - ts->prev_wops;
			wbytes += wb - ts->prev_wbytes;
			syncs += sy - ts->prev_syncs;
			ts->prev_wops = wo;
			ts->prev_wbytes = wb;
			ts->prev_syncs = sy;
			if (job->latency) {
				uint64_t sum, n = hist_commit(&s->winterval, &ts->prev_w[0], &ts->stage[1], &sum);

				if (i < sj->nworkers) {
					js->share[i].dir[FIOLOG_WRITE].lat_n = n;
					js->share[i].dir[FIOLOG_WRITE].lat_sum_ns = sum;
					js->share[i].dir[FIOLOG_WRITE].lat_max_ns =
						n ? hist_stage_max(&ts->stage[1]) : 0;
				}
				hist_commit(&s->sinterval, &ts->prev_w[1], &ts->stage[2], &sum);
			}
		}
		if (i >= sj->nworkers)
			continue;	/* the probe's faults are not the job's */
		if (sampler_thread_faults(s, ts, st, &mj, &mn)) {
			maj += mj;
			min += mn;
			pmaj += ts->prev_maj;
			pmin += ts->prev_min;
			ts->prev_maj = mj;
			ts->prev_min = mn;
			/* Ticks and the exit schedstat differ in grain: a
			 * thread's time never runs backwards here. */
			cpu_ok = cpu_ok && ts->cpu_ok;
			cpu += ts->cpu_ns > ts->prev_cpu ? ts->cpu_ns - ts->prev_cpu : 0;
			if (ts->cpu_ns > ts->prev_cpu)
				ts->prev_cpu = ts->cpu_ns;
		} else if (STAT_LOAD(&st->tid)) {
			faults_ok = false;
			cpu_ok = false;
		}
	}
	if (!faults_ok)
		js->faults_ok = false;
	sampler_read_job_devs(s, js, dcur);

	ramp = js->ramp_end_ns && js->last_t < js->ramp_end_ns;
	if (!ramp) {
		const uint64_t dops[FIOLOG_DIRS] = { ops, wops }, dbytes[FIOLOG_DIRS] = { bytes, wbytes };

		fio_interval(s, j, now, dops, dbytes);
	}
	/* The row's first cells, without printf (fmtnum.h says why). */
	{
		int n = fmt_fixed(p, (size_t)(end - p), (double)(now - s->t0) / 1e9, 3);

		if (n > 0 && p + n < end)
			p += n;
	}
	cell_u(&p, end, s->epoch0_ms + (now - s->t0) / 1000000ull);
	cell_f(&p, end, true, dt, 3);
	cell_s(&p, end, job->name);
	cell_s(&p, end, job->ioengine);
	cell_s(&p, end, rw_names[job->rw]);
	cell_u(&p, end, sj->nworkers);
	cell_u(&p, end, ramp ? 1 : 0);
	cell_f(&p, end, true, (double)ops / dt, 1);
	cell_f(&p, end, true, (double)bytes / MIB / dt, 3);
	/* The status line shows both directions together. */
	if (mib_s_out)
		*mib_s_out = (double)(bytes + wbytes) / MIB / dt;
	if (iops_out)
		*iops_out = (double)(ops + wops) / dt;
	/* Each percentile once: the explain cells below use them too. */
	lat = job->latency && s->interval.n;
	p50 = lat ? (double)hist_percentile(&s->interval, 50) / 1e3 : 0;
	p99 = lat ? (double)hist_percentile(&s->interval, 99) / 1e3 : 0;
	cell_f(&p, end, lat, p50, HIST_US_DECIMALS);
	cell_f(&p, end, lat, p99, HIST_US_DECIMALS);
	cell_f(&p, end, lat, lat ? (double)s->interval.max / 1e3 : 0, HIST_US_DECIMALS);
	cell_f(&p, end, faults_ok, (double)(maj - pmaj) / dt, 1);
	cell_f(&p, end, faults_ok, (double)(min - pmin) / dt, 1);
	cell_f(&p, end, sys->tlb_ok && ps->tlb_ok, (double)(sys->tlb - ps->tlb) / dt, 1);
	cell_f(&p, end, sys->ksw_ok && ps->ksw_ok,
	       (double)(sys->ksw_ticks - ps->ksw_ticks) / (double)s->hz / dt * 100.0, 2);
	cell_f(&p, end, sys->vm_ok && ps->vm_ok, (double)(pgscan(sys) - pgscan(ps)) / dt, 1);
	cell_f(&p, end, sys->vm_ok && ps->vm_ok, (double)(pgsteal(sys) - pgsteal(ps)) / dt, 1);
	cell_f(&p, end, sys->mem_ok, (double)sys->mem.bytes[PROCFS_MEM_CACHED] / MIB, 1);
	cell_f(&p, end, sys->mem_ok && procfs_mem_has(&sys->mem, PROCFS_MEM_DIRTY),
	       (double)sys->mem.bytes[PROCFS_MEM_DIRTY] / MIB, 1);
	/* cgroup_mib: only jobs run under mem_limit have a cgroup. */
	{
		uint64_t cg = 0;
		bool ok = js->cg && cgroup_usage(js->cg, &cg) == 0;

		cell_f(&p, end, ok, (double)cg / MIB, 1);
		if (ok && cg > js->cgroup_peak)
			js->cgroup_peak = cg;
	}
	dev_ok = sampler_job_devs_ok(s, js);
	{
		uint64_t ri = 0;

		for (unsigned i = 0; dev_ok && i < js->nprimary; i++) {
			rb_dev += devinfo_read_bytes(&dcur[i]) - devinfo_read_bytes(&js->dev_last[i]);
			ri += dcur[i].read_ios - js->dev_last[i].read_ios;
		}
		cell_f(&p, end, dev_ok, (double)rb_dev / MIB / dt, 3);
		cell_f(&p, end, dev_ok, (double)ri / dt, 1);
	}
	{
		const struct procfs_cpu *a = &ps->cpu, *b = &sys->cpu;
		bool ok = sys->cpu_ok && ps->cpu_ok;
		double user = ok ? (double)((b->user + b->nice) - (a->user + a->nice)) : 0;
		double sy = ok ? (double)((b->system + b->irq + b->softirq) - (a->system + a->irq + a->softirq)) : 0;
		double io = ok ? (double)(b->iowait - a->iowait) : 0;
		double idle = ok ? (double)(b->idle - a->idle) : 0;
		double steal = ok ? (double)(b->steal - a->steal) : 0;
		double tot = user + sy + io + idle + steal;

		ok = ok && tot > 0;
		cell_f(&p, end, ok, ok ? user * 100 / tot : 0, 1);
		cell_f(&p, end, ok, ok ? sy * 100 / tot : 0, 1);
		cell_f(&p, end, ok, ok ? io * 100 / tot : 0, 1);
	}
	cell_f(&p, end, sj->slots.nprobe > 0, (double)probe / dt, 1);

	/*
	 * Writes. A job that issues no writes measures none: 0
	 * write and flush rates, like any interval without them; the
	 * latency cells are empty when no write (flush) completed in the
	 * interval, as lat_p50_us is without reads. Write-back and device
	 * writes are host- and device-wide: every job's row has them.
	 */
	cell_f(&p, end, true, (double)wops / dt, 1);
	cell_f(&p, end, true, (double)wbytes / MIB / dt, 3);
	{
		bool wl = job->latency && s->winterval.n, sl = job->latency && s->sinterval.n;

		cell_f(&p, end, wl, wl ? (double)hist_percentile(&s->winterval, 50) / 1e3 : 0, HIST_US_DECIMALS);
		cell_f(&p, end, wl, wl ? (double)hist_percentile(&s->winterval, 99) / 1e3 : 0, HIST_US_DECIMALS);
		cell_f(&p, end, true, (double)syncs / dt, 1);
		cell_f(&p, end, sl, sl ? (double)hist_percentile(&s->sinterval, 99) / 1e3 : 0, HIST_US_DECIMALS);
	}
	cell_f(&p, end, sys->mem_ok && procfs_mem_has(&sys->mem, PROCFS_MEM_WRITEBACK),
	       (double)sys->mem.bytes[PROCFS_MEM_WRITEBACK] / MIB, 1);
	{
		bool ok = sampler_job_devs_ok(s, js);
		uint64_t wb = 0, wi = 0;

		for (unsigned i = 0; ok && i < js->nprimary; i++) {
			wb += devinfo_write_bytes(&dcur[i]) - devinfo_write_bytes(&js->dev_last[i]);
			wi += dcur[i].write_ios - js->dev_last[i].write_ios;
		}
		cell_f(&p, end, ok, (double)wb / MIB / dt, 3);
		cell_f(&p, end, ok, (double)wi / dt, 1);
	}
	/* A pool's hit ratio of the interval; empty for other engines, and
	 * when the interval saw no access at all. */
	cell_f(&p, end, sj->pool && hits + misses,
	       hits + misses ? (double)hits * 100.0 / (double)(hits + misses) : 0, 2);
	cell_f(&p, end, sj->pool, (double)evictions / dt, 1);

	/* The job's own kernel counters: empty where the host
	 * has no such source or they could not be opened. */
	{
		struct perfev_values ev;

		ev_read_row(s, j, now, &ev);
		for (unsigned k = 0; k < sizeof(ev_cols) / sizeof(ev_cols[0]); k++) {
			bool ok = true;
			double d = 0;

			for (unsigned i = 0; i < 2 && ev_cols[k][i] >= 0; i++) {
				int c = ev_cols[k][i];

				ok = ok && ev.ok[c] && js->ev_last.ok[c];
				/* A scaled PMU estimate may step back a little. */
				if (ok && ev.v[c] > js->ev_last.v[c])
					d += (double)(ev.v[c] - js->ev_last.v[c]);
			}
			cell_f(&p, end, ok, d / dt, 1);
		}
		/* The eviction cost: vmcache's batches per second, and for
		 * a pool, the job's shootdown IPIs per page it evicted in
		 * the row (empty without the tracepoint, or with no
		 * eviction to divide by). */
		cell_f(&p, end, sj->pool_batches, (double)batches / dt, 1);
		{
			bool ok = sj->pool && evictions && ev.ok[PERFEV_TLB_IPI] &&
				  js->ev_last.ok[PERFEV_TLB_IPI] &&
				  ev.v[PERFEV_TLB_IPI] >= js->ev_last.v[PERFEV_TLB_IPI];

			cell_f(&p, end, ok, ok ? (double)(ev.v[PERFEV_TLB_IPI] -
							  js->ev_last.v[PERFEV_TLB_IPI]) /
						 (double)evictions : 0, 3);
		}
		js->ev_last = ev;
	}

	/* What explains the row (explain.c): residency, pressure, cost. */
	{
		bool vm = sys->vm_ok && ps->vm_ok;
		uint64_t cg = 0;
		bool cg_ok = js->cg && cgroup_usage(js->cg, &cg) == 0;
		struct explain_in in = {
			.t_s = (double)(now - s->t0) / 1e9, .dt_s = dt,
			.ramp = ramp, .ops = ops, .bytes = bytes,
			.lat_ok = lat,
			.lat_p50_us = p50,
			.lat_p99_us = p99,
			.tlb_ok = sys->tlb_ok && ps->tlb_ok, .tlb = sys->tlb - ps->tlb,
			.flt_ok = faults_ok, .majflt = maj - pmaj,
			.steal_ok = vm, .pgsteal = vm ? pgsteal(sys) - pgsteal(ps) : 0,
			.refault_ok = vm && procfs_vm_has(&sys->vm, PROCFS_VM_WORKINGSET_REFAULT_FILE) &&
				      procfs_vm_has(&ps->vm, PROCFS_VM_WORKINGSET_REFAULT_FILE),
			.refaults = vm_get(sys, PROCFS_VM_WORKINGSET_REFAULT_FILE) -
				    vm_get(ps, PROCFS_VM_WORKINGSET_REFAULT_FILE),
			.host_cache_ok = sys->mem_ok, .host_cached = sys->mem.bytes[PROCFS_MEM_CACHED],
			.cg_ok = cg_ok, .cg_bytes = cg,
			.dev_ok = dev_ok, .dev_bytes = rb_dev,
			.cpu_ok = cpu_ok && sj->nworkers,
			.cpu_ns = cpu,
			.sys = &sys->psi, .prev_sys = &ps->psi,
		};

		explain_row(&js->x, &in, &p, end);
	}

	/*
	 * Who wrote the job's data to the device (wbtrace.h): its own
	 * writes and flushes, and the kernel on its own. Empty where it is
	 * not followed, or the trace lost events in the interval; for O_DIRECT
	 * and pools the kernel's share is 0 by construction and the job's own
	 * is what it wrote. A read job has neither.
	 */
	{
		struct wbtrace_counts c = { 0 };
		bool traced = js->wb == WB_TRACED, zero = js->wb == WB_BY_CONSTRUCTION, ok;

		if (traced)
			wbtrace_job_counts(s->wb, j, &c);
		ok = traced && c.lost == js->wb_last.lost;
		cell_f(&p, end, ok || zero,
		       zero ? (double)wbytes / MIB / dt : (double)(c.own_bytes - js->wb_last.own_bytes) / MIB / dt, 3);
		cell_f(&p, end, ok || zero,
		       zero ? 0 : (double)(c.kernel_bytes - js->wb_last.kernel_bytes) / MIB / dt, 3);
		if (traced)
			js->wb_last = c;
	}
	/* What the latency columns count from: a paced job's due times
	 * (coordinated omission, run/pace.h), else each request's issue. */
	{
		int n = snprintf(p, (size_t)(end - p), ",%s", job_paced(job) ? "due" : "issue");

		if (n > 0 && p + n < end)
			p += n;
	}
	/* Where the workers' time went (samplertime.c). */
	sampler_time_cells(s, j, now, ramp, &p, end);

	memcpy(js->dev_last, dcur, sizeof(dcur));
	js->last_sys = *sys;
	js->last_t = now;
	if (s->have_csv)
		sampler_csv_write(s, line, (size_t)(p - line));
	else if (s->cfg.row_sink) {
		const struct hist *lat[3] = {
			job->latency ? &s->interval : NULL,
			job->latency && job_writes(job) ? &s->winterval : NULL,
			job->latency && job_writes(job) ? &s->sinterval : NULL,
		};

		s->cfg.row_sink(s->cfg.row_sink_arg, line, (size_t)(p - line), lat);
	}
}
