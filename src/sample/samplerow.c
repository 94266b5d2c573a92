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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job/job.h"
#include "lib/latclock.h"
#include "telemetry/cgroup.h"
#include "out/notes.h"
#include "sample/samplerow.h"
#include "sample/samplertime.h"

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
		notes_warning("cannot read %s for device %s; device traffic stays empty",
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
	js->dev[js->ndev++] = (uint8_t)idx;
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
			notes_warning("%s: no block device to sample (%s); device traffic stays empty",
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

/* What job @j's options and set-up leave fixed in its rows. */
void sampler_job_cells(struct sampler *s, unsigned j)
{
	const struct sampler_job *sj = &s->cfg.jobs[j];
	struct job_samp *js = &s->jobs[j];
	struct samplecols_fixed fx = {
		.writes = job_writes(sj->job),
		.ev = js->ev_open || !js->ev_decided,
		.cgroup = sj->job->mem_limit != 0,
		.delayacct = js->delayacct,
		.devs = js->nprimary > 0,
		.wb_traced = js->wb == WB_TRACED,
		.wb_zero = js->wb == WB_BY_CONSTRUCTION,
	};

	samplecols_job_cells(&js->cells, sj, &fx);
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
		notes_say("the CSV reader closed the pipe; stopping the run");
		__atomic_store_n(s->cfg.stop, 1, __ATOMIC_RELAXED);
	} else {
		notes_warning("writing the CSV %s failed: %s; it ends at the last whole row",
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

/* ---- per-thread faults ---------------------------------------------- */

/* Its exit figures, published before done is set. */
static void exit_cpu(struct thread_samp *ts, const struct thread_stats *st)
{
	ts->cpu_ok = st->sched_ok;
	if (st->sched_ok && st->exit_cpu_ns > ts->cpu_ns)
		ts->cpu_ns = st->exit_cpu_ns;
}

/* A live thread of this process: its CPU clock, one clock_gettime
 * (the kernel's sum_exec_runtime, as schedstat's first figure). The
 * clock id is the kernel's encoding of a thread's scheduler clock. */
static bool clock_cpu(pid_t tid, uint64_t *ns)
{
	clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 4 | 2);
	struct timespec t;

	if (clock_gettime(id, &t) < 0)
		return false;
	*ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	return true;
}

/* A worker process's thread (thread=0): its schedstat. */
static bool sched_cpu(struct sampler *s, struct thread_samp *ts, pid_t pid, pid_t tid, uint64_t *ns)
{
	ssize_t n;

	if (!ts->sched_open && !ts->sched_failed) {
		ts->sched_open = procfs_task_attach(&ts->sched, s->proc, pid, tid, "schedstat") == 0;
		ts->sched_failed = !ts->sched_open;
	}
	n = ts->sched_open ? procfs_src_read_record(&ts->sched) : -EBADF;
	return n > 0 && procfs_parse_schedstat(ts->sched.buf, (size_t)n, ns) == 0;
}

/* The thread's pid as its task files name it: 0 for this process. */
static pid_t task_pid(const struct sampler *s, const struct thread_stats *st)
{
	pid_t pid = STAT_LOAD(&st->pid);

	return pid == s->self ? 0 : pid;
}

bool sampler_thread_cpu(struct sampler *s, struct thread_samp *ts, const struct thread_stats *st)
{
	pid_t tid = STAT_LOAD(&st->tid), pid;
	uint64_t ns;

	if (STAT_LOAD(&st->done)) {
		exit_cpu(ts, st);
		return ts->cpu_ok;
	}
	if (!tid)
		return false;
	pid = task_pid(s, st);
	if (pid ? sched_cpu(s, ts, pid, tid, &ns) : clock_cpu(tid, &ns)) {
		ts->cpu_ns = ns;
		ts->cpu_ok = true;
		return true;
	}
	/* It may have exited between the checks. */
	if (STAT_LOAD(&st->done)) {
		exit_cpu(ts, st);
		return ts->cpu_ok;
	}
	return false;
}

/* A thread's fault counters now: its exit figures once it has exited,
 * else its /proc task stat. false when neither can be had. Its CPU
 * time since it began goes to ts->cpu_ns (ts->cpu_ok when known). */
bool sampler_thread_faults(struct sampler *s, struct thread_samp *ts, const struct thread_stats *st,
			   uint64_t *maj, uint64_t *min)
{
	struct procfs_task pt;
	pid_t tid = STAT_LOAD(&st->tid);

	if (STAT_LOAD(&st->done)) {
		exit_cpu(ts, st);
		if (!st->rusage_ok)
			return false;
		*maj = st->exit_majflt;
		*min = st->exit_minflt;
		return true;
	}
	if (!tid)
		return false;
	if (!ts->task_open && !ts->task_failed) {
		if (procfs_task_attach(&ts->task, s->proc, task_pid(s, st), tid, "stat") < 0) {
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
			exit_cpu(ts, st);
			*maj = st->exit_majflt;
			*min = st->exit_minflt;
			return true;
		}
		return false;
	}
	*maj = pt.majflt;
	*min = pt.minflt;
	if (!sampler_thread_cpu(s, ts, st)) {
		/* Ticks where no finer clock can be read. */
		ts->cpu_ns = (pt.utime + pt.stime) * (1000000000ull / (uint64_t)s->hz);
		ts->cpu_ok = true;
	}
	return true;
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
		struct fio_series *f = d == FIOLOG_READ ? &js->fio_r : &js->fio_w;

		fiostat_series_add(&f->iops, (uint64_t)((double)ops[d] * 1e9 / (double)dt));
		fiostat_series_add(&f->bw, (uint64_t)((double)bytes[d] * 1e9 / (double)dt / 1024.0));
	}
	fiolog_interval(s->fiolog, j, now > js->measure_ns ? (now - js->measure_ns) / 1000000ull : 0,
			dt, js->share, js->ending);
}

void sampler_job_snap(struct sampler *s, unsigned j)
{
	struct job_samp *js = &s->jobs[j];
	bool moved = false;

	for (unsigned i = 0; i < js->nthreads; i++) {
		struct thread_samp *ts = &js->th[i];
		const struct thread_stats *st = &js->stats[i];

		/* The counts, then the latencies, then the counts again: a
		 * worker counts a request before it records its latency, so
		 * when no count moved in between, every request counted has
		 * its latency in the histograms taken, and no other request
		 * has. A count that moved is read again (three tries: a worker
		 * is never held up, and its next request is microseconds off). */
		for (unsigned tries = 0;; tries++) {
			ts->rops = STAT_LOAD(&st->rops);
			ts->rbytes = STAT_LOAD(&st->rbytes);
			ts->probe = STAT_LOAD(&st->probe_units);
			if (ts->prev_w) {
				ts->wops = STAT_LOAD(&st->wops);
				ts->wbytes = STAT_LOAD(&st->wbytes);
				ts->syncs = STAT_LOAD(&st->syncs);
			}
			if (!js->lat)
				break;
			if (i < js->nworkers)
				hist_ring_take(&ts->stage, ts->prev_spill, &st->lat_ring);
			if (ts->prev_w) {
				hist_ring_take(&ts->wstage[0], &ts->prev_w[0], &st->wlat_ring);
				hist_ring_take(&ts->wstage[1], &ts->prev_w[1], &st->slat_ring);
			}
			if (tries == 2 || (STAT_LOAD(&st->rops) == ts->rops &&
					   (!ts->prev_w || (STAT_LOAD(&st->wops) == ts->wops &&
							    STAT_LOAD(&st->syncs) == ts->syncs))))
				break;
		}
		moved = moved || ts->rops != ts->prev_ops || ts->probe != ts->prev_probe ||
			(ts->prev_w && (ts->wops != ts->prev_wops || ts->syncs != ts->prev_syncs));
		if (js->log_prio) {
			const uint64_t *src = &st->prio.ops[0][0];
			uint64_t *dst = &ts->prio.ops[0][0];

			for (size_t k = 0; k < sizeof(ts->prio) / sizeof(uint64_t); k++)
				dst[k] = STAT_LOAD(&src[k]);
		}
		if (js->pool) {
			ts->hits = STAT_LOAD(&st->pool.hits);
			ts->misses = STAT_LOAD(&st->pool.misses);
			ts->evictions = STAT_LOAD(&st->pool.evictions);
			if (js->pool_batches)
				ts->batches = STAT_LOAD(&st->pool.evict_batches);
		}
	}
	js->idle_hint = !moved;
}

/* The job's own kernel counters now (when due); none (every ok false)
 * when they cannot be read, so that neither this row nor the next has
 * cells. */
static void ev_read_row(struct sampler *s, unsigned j, struct perfev_values *ev)
{
	struct job_samp *js = &s->jobs[j];
	uint64_t t0;

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

/* A worker's ring: the sampler sees the workers' counters as const, but
 * the ring's read cursor is the sampler's own to move. */
static struct hist_ring *ring_of(const struct hist_ring *r)
{
	return (struct hist_ring *)r;
}

/* The workers' counters and latencies since the job's previous row into
 * @r, each thread's share for fio's logs, and the previous values moved
 * on. */
static void gather_counters(struct sampler *s, unsigned j, struct sample_row *r)
{
	struct job_samp *js = &s->jobs[j];

	/* Only the buckets the last row filled are written. */
	hist_clear(&s->interval);
	hist_clear(&s->winterval);
	hist_clear(&s->sinterval);
	/* Each worker's share, for fio's logs: only a job that writes them
	 * reads it (720 bytes a worker, written every row). */
	bool logs = fiolog_logs(s->fiolog, j);

	for (unsigned i = 0; i < js->nthreads; i++) {
		struct thread_samp *ts = &js->th[i];
		const struct thread_stats *st = &js->stats[i];
		struct fiolog_sample *sh = logs && i < js->nworkers ? &js->share[i] : NULL;

		if (sh) {
			memset(sh, 0, sizeof(*sh));
			sh->dir[FIOLOG_READ].ops = ts->rops - ts->prev_ops;
			sh->dir[FIOLOG_READ].bytes = ts->rbytes - ts->prev_bytes;
			if (js->log_prio)
				prio_share(sh, ts);
		}
		r->rops += ts->rops - ts->prev_ops;
		r->rbytes += ts->rbytes - ts->prev_bytes;
		r->probe += ts->probe - ts->prev_probe;
		ts->prev_ops = ts->rops;
		ts->prev_bytes = ts->rbytes;
		ts->prev_probe = ts->probe;
		if (js->pool) {
			r->hits += ts->hits - ts->prev_hits;
			r->misses += ts->misses - ts->prev_misses;
			r->evictions += ts->evictions - ts->prev_evictions;
			ts->prev_hits = ts->hits;
			ts->prev_misses = ts->misses;
			ts->prev_evictions = ts->evictions;
			if (js->pool_batches) {
				r->batches += ts->batches - ts->prev_batches;
				ts->prev_batches = ts->batches;
			}
		}
		/* The values the worker appended since the last row (a
		 * few contiguous lines), not its whole histogram. */
		if (js->lat && i < js->nworkers) {
			uint64_t sum, max, n;

			if (ts->stage.seq_taken)
				ts->ring_read = ts->stage.seq;
			n = hist_ring_commit(&s->interval, ts->prev_spill, &ts->stage,
					     ring_of(&st->lat_ring), &sum, &max);
			if (sh) {
				sh->dir[FIOLOG_READ].lat_n = n;
				sh->dir[FIOLOG_READ].lat_sum_ns = sum;
				sh->dir[FIOLOG_READ].lat_max_ns = max;
			}
		}
		if (!ts->prev_w)
			continue;
		if (sh) {
			sh->dir[FIOLOG_WRITE].ops = ts->wops - ts->prev_wops;
			sh->dir[FIOLOG_WRITE].bytes = ts->wbytes - ts->prev_wbytes;
		}
		r->wops += ts->wops - ts->prev_wops;
		r->wbytes += ts->wbytes - ts->prev_wbytes;
		r->syncs += ts->syncs - ts->prev_syncs;
		ts->prev_wops = ts->wops;
		ts->prev_wbytes = ts->wbytes;
		ts->prev_syncs = ts->syncs;
		if (js->lat) {
			uint64_t sum, max, n = hist_ring_commit(&s->winterval, &ts->prev_w[0], &ts->wstage[0],
								ring_of(&st->wlat_ring), &sum, &max);

			if (sh) {
				sh->dir[FIOLOG_WRITE].lat_n = n;
				sh->dir[FIOLOG_WRITE].lat_sum_ns = sum;
				sh->dir[FIOLOG_WRITE].lat_max_ns = max;
			}
			hist_ring_commit(&s->sinterval, &ts->prev_w[1], &ts->wstage[1], ring_of(&st->slat_ring),
					 &sum, &max);
		}
	}
	/* Each percentile once: the cost figures use them too. */
	r->lat = js->lat && s->interval.n;
	r->p50 = r->lat ? (double)hist_percentile(&s->interval, 50) / 1e3 : 0;
	r->p99 = r->lat ? (double)hist_percentile(&s->interval, 99) / 1e3 : 0;
	r->pmax = (double)s->interval.max / 1e3;
}

/* The worker threads' CPU time since the previous row and their faults,
 * each when due (a thread's stat file is the dearest read of a row, its
 * CPU clock a system call: each over one interval in task_every and
 * cpu_every at many threads, both ends of the row read; the CPU also
 * when the faults or the time breakdown are read); the probe's are not
 * the job's. */
static void gather_tasks(struct sampler *s, unsigned j, struct sample_row *r)
{
	struct job_samp *js = &s->jobs[j];
	bool flt = sampler_due(s, j, r->now, s->task_every), read = true;
	bool cpu = flt || sampler_due(s, j, r->now, s->cpu_every) ||
		   (js->delayacct && s->tsk && sampler_due(s, j, r->now, s->da_every));

	r->cpu_ok = cpu && js->cpu_read && js->nworkers > 0;
	js->cpu_read = cpu;
	for (unsigned i = 0; cpu && i < js->nworkers && i < js->nthreads; i++) {
		struct thread_samp *ts = &js->th[i];
		const struct thread_stats *st = &js->stats[i];
		uint64_t mj, mn;
		bool ok;

		if (flt && (ok = sampler_thread_faults(s, ts, st, &mj, &mn))) {
			r->majflt += mj - ts->prev_maj;
			r->minflt += mn - ts->prev_min;
			ts->prev_maj = mj;
			ts->prev_min = mn;
		} else {
			ok = !flt && sampler_thread_cpu(s, ts, st);
			if (flt && STAT_LOAD(&st->tid))
				read = false;
		}
		if (!ok) {
			if (STAT_LOAD(&st->tid))
				r->cpu_ok = false;
			continue;
		}
		/* Ticks and the exit schedstat differ in grain: a
		 * thread's time never runs backwards here. */
		r->cpu_ok = r->cpu_ok && ts->cpu_ok;
		r->cpu_ns += ts->cpu_ns > ts->prev_cpu ? ts->cpu_ns - ts->prev_cpu : 0;
		if (ts->cpu_ns > ts->prev_cpu)
			ts->prev_cpu = ts->cpu_ns;
	}
	/* Faults when read at both ends of the row. */
	r->faults_ok = flt && read && js->flt_read;
	if (flt && !read)
		js->faults_ok = false;
	js->flt_read = flt && read;
}

/* The job's primary devices' bytes and requests since its previous row. */
static void gather_devs(struct sampler *s, struct job_samp *js, struct sample_row *r,
			struct devinfo_blkstat *dcur)
{
	sampler_read_job_devs(s, js, dcur);
	r->dev_ok = sampler_job_devs_ok(s, js);
	for (unsigned i = 0; r->dev_ok && i < js->nprimary; i++) {
		const struct devinfo_blkstat *a = &js->dev_last[i], *b = &dcur[i];

		r->dev_rbytes += devinfo_read_bytes(b) - devinfo_read_bytes(a);
		r->dev_rios += b->read_ios - a->read_ios;
		r->dev_wbytes += devinfo_write_bytes(b) - devinfo_write_bytes(a);
		r->dev_wios += b->write_ios - a->write_ios;
	}
}

/* The job's own kernel counters, when due (empty where the host has no
 * such source or they could not be opened), as increases since the
 * previous reading. */
static void gather_ev(struct sampler *s, unsigned j, struct sample_row *r)
{
	struct job_samp *js = &s->jobs[j];
	struct perfev_values ev;
	bool due = js->ev_open && sampler_due(s, j, r->now, s->ev_every), any = false;

	/* Not due, and nothing read at the previous row: no cells, and
	 * the previous reading (two cold lines) stays as it is, unread. */
	if (!due && !js->ev_last_any)
		return;
	memset(ev.ok, 0, sizeof(ev.ok));
	if (due)
		ev_read_row(s, j, &ev);
	for (unsigned c = 0; c < PERFEV_NR; c++) {
		r->ev_ok[c] = ev.ok[c] && js->ev_last.ok[c];
		/* A scaled PMU estimate may step back a little. */
		r->ev_d[c] = r->ev_ok[c] && ev.v[c] > js->ev_last.v[c] ? ev.v[c] - js->ev_last.v[c] : 0;
		any = any || ev.ok[c];
	}
	js->ev_last = ev;
	js->ev_last_any = any;
}

/* What explains the row (explain.c): residency, pressure, cost. */
static void gather_explain(struct sampler *s, unsigned j, struct sample_row *r)
{
	const struct sys_snap *sys = r->sys, *ps = r->ps;
	bool vm = sys->vm_ok && ps->vm_ok;
	struct explain_in in = {
		.t_s = (double)(r->now - s->t0) / 1e9, .dt_s = r->dt,
		.ramp = r->ramp, .rops = r->rops, .rbytes = r->rbytes,
		.lat_ok = r->lat, .lat_p50_us = r->p50, .lat_p99_us = r->p99,
		.tlb_ok = sys->tlb_ok && ps->tlb_ok, .tlb = sys->tlb - ps->tlb,
		.flt_ok = r->faults_ok, .majflt = r->majflt,
		.steal_ok = vm, .pgsteal = vm ? pgsteal(sys) - pgsteal(ps) : 0,
		.refault_ok = vm && procfs_vm_has(&sys->vm, PROCFS_VM_WORKINGSET_REFAULT_FILE) &&
			      procfs_vm_has(&ps->vm, PROCFS_VM_WORKINGSET_REFAULT_FILE),
		.refaults = vm_get(sys, PROCFS_VM_WORKINGSET_REFAULT_FILE) -
			    vm_get(ps, PROCFS_VM_WORKINGSET_REFAULT_FILE),
		.host_cache_ok = sys->mem_ok, .host_cached = sys->mem.bytes[PROCFS_MEM_CACHED],
		/* The same reading as cgroup_mib's. */
		.cg_ok = r->cg_ok, .cg_bytes = r->cg_bytes,
		.dev_ok = r->dev_ok, .dev_bytes = r->dev_rbytes,
		.cpu_ok = r->cpu_ok, .cpu_ns = r->cpu_ns,
		.last_row = s->jobs[j].ending,
		.sys = &sys->psi, .prev_sys = &ps->psi,
	};

	explain_row(&s->jobs[j].x, &in, &r->x);
}

/*
 * Who wrote the job's data to the device (wbtrace.h): its own writes
 * and flushes, and the kernel on its own. Unknown where it is not
 * followed, or the trace lost events in the row. A read job has neither.
 */
static void gather_wb(struct sampler *s, unsigned j, struct sample_row *r)
{
	struct job_samp *js = &s->jobs[j];
	struct wbtrace_counts c = { 0 };

	r->wb_zero = js->wb == WB_BY_CONSTRUCTION;
	if (js->wb != WB_TRACED)
		return;
	wbtrace_job_counts(s->wb, j, &c);
	r->wb_ok = c.lost == js->wb_last.lost;
	r->wb_own = c.own_bytes - js->wb_last.own_bytes;
	r->wb_kernel = c.kernel_bytes - js->wb_last.kernel_bytes;
	js->wb_last = c;
}

/* The row goes to the CSV, or under MPI to rank 0 with its histograms
 * (for the percentiles of the all row). */
static void emit(struct sampler *s, unsigned j, const char *line, size_t len)
{
	if (s->have_csv) {
		sampler_csv_write(s, line, len);
	} else if (s->cfg.row_sink) {
		const struct job *job = s->cfg.jobs[j].job;
		const struct hist *lat[3] = {
			job->latency ? &s->interval : NULL,
			job->latency && job_writes(job) ? &s->winterval : NULL,
			job->latency && job_writes(job) ? &s->sinterval : NULL,
		};

		s->cfg.row_sink(s->cfg.row_sink_arg, line, len, lat);
	}
}

/*
 * Ask for the lines job @j's row will read before the row that reads
 * them, so that their misses overlap the rows before instead of
 * stalling this one: at 2000 jobs each row's own state (the job's
 * options, its sampler state, its worker's counters and ring) is cold
 * after the workers ran, and a row took 2-3 us mostly waiting for those
 * lines one after the other, each found through the one before. Three
 * stages, each reading only lines an earlier stage asked for: 0 (three
 * rows ahead) the arrays indexed by @j and the lines of the job's state
 * a row reads; 1 (two ahead) what their pointers lead to; 2 (the next
 * row) the ring's lines, located by what 1 brought. @pass: the same for
 * the counters' pass (sampler_job_snap), whose stage 1 is only the
 * threads' and 2 nothing. Prefetches never fault nor fail.
 */
#define PF(p) __builtin_prefetch((const void *)(p), 0, 3)
#define PFW(p) __builtin_prefetch((const void *)(p), 1, 3)
#define PF_THREADS 4u		/* a job's first threads; psync jobs have one */
#define SAMPLER_PLAN_PF 256	/* a plan's lines a psync job's row reads */

static void prefetch_job_state(const struct job_samp *js)
{
	/* Its head: what every row reads and writes (samplebase.h). */
	for (size_t off = 0; off < JOB_SAMP_HOT; off += 64)
		PFW((const char *)js + off);
}

void sampler_row_prefetch(const struct sampler *s, unsigned j, int stage, bool pass)
{
	const struct job_samp *js = &s->jobs[j];
	unsigned nt;

	if (j >= s->cfg.njobs)
		return;
	if (stage == 0) {
		if (pass) {
			PF(&js->active);
			PF(&js->th);
		} else {
			prefetch_job_state(js);
		}
		return;
	}
	nt = js->nthreads < PF_THREADS ? js->nthreads : PF_THREADS;
	if (stage == 2) {
		for (unsigned i = 0; !pass && i < nt && i < js->nworkers; i++) {
			const struct thread_samp *ts = &js->th[i];
			const struct hist_ring *ring = &js->stats[i].lat_ring;
			uint64_t from = ts->ring_read, to = ts->stage.seq;

			if (!ts->stage.seq_taken || to <= from)
				continue;
			if (to - from > HIST_RING)
				from = to - HIST_RING;
			for (uint64_t k = from; k < to; k += 16)
				PF(&ring->v[k % HIST_RING]);
			PF(&ring->v[(to - 1) % HIST_RING]);
		}
		return;
	}
	/* Stage 1: each thread's sampler state and the worker's counters
	 * and ring counts. */
	for (unsigned i = 0; i < nt; i++) {
		const struct thread_samp *ts = &js->th[i];
		const struct thread_stats *st = &js->stats[i];

		for (size_t off = 0; off < THREAD_SAMP_HOT; off += 64)
			PFW((const char *)ts + off);
		PF(st);
		PF(&st->lat_ring);
		PFW(&st->lat_ring.read);
		PF(&st->lat_ring.spill);
		if (!pass)
			PF(&st->tid);
	}
	if (pass)
		return;
	/* The plan its row will likely take (the pass saw whether its
	 * workers moved; a wrong guess costs the row its wait), and its
	 * state's own arrays. */
	for (size_t off = 0; off < SAMPLER_PLAN_PF; off += 64)
		PF((const char *)&js->cells.plan[js->idle_hint] + off);
	if (js->x.rows)
		PFW(&js->x.rows[js->x.nrows]);
	if (js->x.res)
		PF(js->x.res);
	PFW(js->dev_last);
}

/* A reading whose every source is unread: a row's host deltas empty. */
static const struct sys_snap sys_unread;

/* Job @j's previous reading of the host (job_samp.ps_slot). */
static const struct sys_snap *row_ps(const struct sampler *s, const struct job_samp *js)
{
	if (js->ps_slot < 0)
		return &js->last_sys;
	if (s->sys_keep[js->ps_slot].seq == js->ps_seq)
		return &s->sys_keep[js->ps_slot];
	/* Reused since (the job skipped SAMPLER_SYS_KEEP samples without
	 * sampler_keep_ps): no delta rather than a wrong one. */
	return &sys_unread;
}

void sampler_keep_ps(struct sampler *s, unsigned j)
{
	struct job_samp *js = &s->jobs[j];

	if (js->ps_slot >= 0)
		js->last_sys = *row_ps(s, js);
	js->ps_slot = -1;
}

/* One CSV row for job @j covering [js->last_t, now): every source read
 * once into one struct sample_row, then the column table writes it. */
void sampler_job_row(struct sampler *s, unsigned j, uint64_t now, const struct sys_snap *sys,
		     double *mib_s_out, double *iops_out)
{
	struct job_samp *js = &s->jobs[j];
	const struct sampler_job *sj = &s->cfg.jobs[j];
	struct devinfo_blkstat dcur[RESULT_MAX_DEVS];
	struct sample_row r = {
		.sj = sj, .jc = &js->cells, .t0 = s->t0, .epoch0_ms = s->epoch0_ms, .hz = s->hz,
		.rlat = &s->interval, .wlat = &s->winterval, .slat = &s->sinterval, .sys = sys, .ps = row_ps(s, js), .now = now,
		.dt = (double)(now - js->last_t) / 1e9,
		.ramp = js->ramp_end_ns && js->last_t < js->ramp_end_ns,
	};
	char line[2048], *p;

	if (r.dt <= 0)
		return;
	if (s->test_row_hook)
		s->test_row_hook(s);
	gather_counters(s, j, &r);
	gather_tasks(s, j, &r);
	gather_devs(s, js, &r, dcur);
	if (!r.ramp) {
		const uint64_t dops[FIOLOG_DIRS] = { r.rops, r.wops }, dbytes[FIOLOG_DIRS] = { r.rbytes, r.wbytes };

		fio_interval(s, j, now, dops, dbytes);
	}
	/* The status line shows both directions together. */
	if (mib_s_out)
		*mib_s_out = (double)(r.rbytes + r.wbytes) / MIB / r.dt;
	if (iops_out)
		*iops_out = (double)(r.rops + r.wops) / r.dt;
	/* cgroup usage: only jobs run under mem_limit have a cgroup. */
	r.cg_ok = js->cg && cgroup_usage(js->cg, &r.cg_bytes) == 0;
	if (r.cg_ok && r.cg_bytes > js->cgroup_peak)
		js->cgroup_peak = r.cg_bytes;
	gather_ev(s, j, &r);
	gather_explain(s, j, &r);
	gather_wb(s, j, &r);
	/* Where the workers' time went (samplertime.c). */
	r.time_ok = sampler_time_row(s, j, now, r.ramp, r.tenths);

	p = samplecols_write(&r, s->host_cells, line, line + sizeof(line));
	/* Only its devices, and of each only what a row and the job's
	 * result read (its first line): a reading is 144 bytes. */
	for (unsigned i = 0; i < js->ndev; i++) {
		js->dev_last[i].read_ios = dcur[i].read_ios;
		js->dev_last[i].read_sectors = dcur[i].read_sectors;
		js->dev_last[i].write_ios = dcur[i].write_ios;
		js->dev_last[i].write_sectors = dcur[i].write_sectors;
	}
	if (sys == &s->sys_keep[s->sys_cur]) {
		js->ps_slot = (int)s->sys_cur;
		js->ps_seq = sys->seq;
	} else {
		js->last_sys = *sys;
		js->ps_slot = -1;
	}
	js->last_t = now;
	emit(s, j, line, (size_t)(p - line));
}
