/*
 * sampler.c - per-interval telemetry: job counters next to the kernel's
 * evidence, as CSV rows, the live status line and the run's totals.
 *
 * Each /proc and /sys file is opened once and re-read with pread. A
 * source that cannot be read leaves its CSV cells empty and warns once;
 * nothing unmeasured is ever written as a zero.
 *
 * Per-job rates are computed over the job's own interval (from its
 * previous row to now), so a job that ends mid-interval gets a final
 * short row with its real dt_s, and system-wide deltas on that row cover
 * exactly the same span.
 */
#include "sample/sampler.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "telemetry/cgroup.h"
#include "out/csvout.h"
#include "out/explain_out.h"
#include "telemetry/devinfo.h"
#include "out/fiolog.h"
#include "out/notes.h"
#include "lib/fiostat.h"
#include "lib/latclock.h"
#include "telemetry/perfev.h"
#include "telemetry/procfs.h"
#include "sample/samplerow.h"
#include "sample/samplertime.h"
#include "sample/samplesys.h"
#include "telemetry/wbtrace.h"

const char *sampler_csv_header(void)
{
	return samplecols_header();
}

/* ---- who wrote the data ----------------------------------- */

/* What the kernel may write of job @j's data on its own: nothing when
 * its writes bypass the page cache (O_DIRECT, a pool's frames). */
static enum wb_state wb_kind(const struct sampler_job *sj, char *why, size_t cap)
{
	if (!job_writes(sj->job) || !sj->ntargets)
		return WB_NONE;
	if (sj->pool) {
		snprintf(why, cap, "a buffer pool writes its frames with O_DIRECT when it chooses: "
			 "no page cache, so the kernel writes nothing of the job's on its own");
		return WB_BY_CONSTRUCTION;
	}
	if (sj->job->direct && strcmp(sj->job->ioengine, "mmap")) {
		snprintf(why, cap, "O_DIRECT: every write goes to the device when issued, none stays "
			 "in the page cache for the kernel to write");
		return WB_BY_CONSTRUCTION;
	}
	return WB_UNREAD;
}

static void wb_setup(struct sampler *s)
{
	struct err e = { 0 };
	bool any = false;
	int ret;

	for (unsigned j = 0; j < s->cfg.njobs; j++) {
		struct job_samp *js = &s->jobs[j];

		js->wb = wb_kind(&s->cfg.jobs[j], js->wb_why, sizeof(js->wb_why));
		any |= js->wb == WB_UNREAD;
	}
	if (!any)
		return;
	ret = wbtrace_create(&s->wb, s->cfg.njobs, &e);
	for (unsigned j = 0; !ret && j < s->cfg.njobs; j++) {
		const struct sampler_job *sj = &s->cfg.jobs[j];
		struct job_samp *js = &s->jobs[j];
		struct err te = { 0 };

		if (js->wb != WB_UNREAD)
			continue;
		for (unsigned i = 0; i < sj->ntargets && !te.code; i++) {
			const struct target *t = &sj->targets[i];
			struct stat st;

			if (fstat(t->fd, &st) < 0)
				err_set(&te, errno, "%s: %s", t->path, strerror(errno));
			else
				wbtrace_job_target(s->wb, j, t->dev, t->is_blkdev ? 0 : st.st_ino, t->is_blkdev, &te);
		}
		if (te.code)
			snprintf(js->wb_why, sizeof(js->wb_why), "%s", te.msg);
		else
			js->wb = WB_TRACED;
	}
	if (!ret)
		ret = wbtrace_start(s->wb, &e);
	if (ret) {
		wbtrace_destroy(s->wb);
		s->wb = NULL;
		for (unsigned j = 0; j < s->cfg.njobs; j++)
			if (s->jobs[j].wb == WB_UNREAD || s->jobs[j].wb == WB_TRACED) {
				s->jobs[j].wb = WB_UNREAD;
				snprintf(s->jobs[j].wb_why, sizeof(s->jobs[j].wb_why), "%s", e.msg);
			}
	}
}

/* The job's tasks as they are known now: its leader's, and each
 * thread's once it has published its id. */
static void wb_tasks(struct sampler *s, unsigned j)
{
	const struct sampler_job *sj = &s->cfg.jobs[j];

	for (unsigned i = 0; i < sj->slots.total; i++) {
		pid_t tid = STAT_LOAD(&sj->stats[i].tid);

		if (tid > 0)
			wbtrace_job_task(s->wb, j, tid);
	}
}

/* Read the trace; a failure ends the figures of every job it follows. */
static void wb_poll(struct sampler *s)
{
	if (!s->wb || wbtrace_poll(s->wb) == 0)
		return;
	for (unsigned j = 0; j < s->cfg.njobs; j++)
		if (s->jobs[j].wb == WB_TRACED) {
			s->jobs[j].wb = WB_UNREAD;
			snprintf(s->jobs[j].wb_why, sizeof(s->jobs[j].wb_why), "reading the trace buffer failed");
		}
}

/* ---- lifecycle ------------------------------------------------------ */

static void fiolog_warn(const char *msg)
{
	notes_warning("%s", msg);
}

/* fio's log files, made now so a bad prefix fails before the run. */
static int open_fiolog(struct sampler *s, struct err *e)
{
	struct fiolog_job *fj = calloc(s->cfg.njobs ? s->cfg.njobs : 1, sizeof(*fj));
	int ret;

	if (!fj)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned j = 0; j < s->cfg.njobs; j++) {
		fj[j].job = s->cfg.jobs[j].job;
		fj[j].nthreads = s->cfg.jobs[j].nworkers;
	}
	ret = fiolog_create(&s->fiolog, fj, s->cfg.njobs, s->cfg.interval_ns, fiolog_warn, e);
	free(fj);
	return ret;
}

static uint64_t planned_ns(const struct sampler_config *c);

/* Worker threads' stat files a sample may read: one read (the kernel
 * formats some fifty fields) took 4.7-6 us with 500 busy threads on the
 * 2-vCPU guest, so 250 were over a millisecond of the 2 ms a sample of
 * 2000 jobs may cost; 50 are about 0.25 ms. */
#define TASK_READS_PER_SAMPLE 50

/* Worker threads' CPU clocks a sample may read: one clock_gettime of
 * another thread's CPU clock is a system call of 0.55-0.65 us with 500
 * busy psync jobs, 1.2 ms at 2000 threads of the 2 ms a sample may
 * cost, so 250 are about 0.15 ms. */
#define CPU_READS_PER_SAMPLE 250

static void task_budget(struct sampler *s)
{
	unsigned threads = 0;

	for (unsigned j = 0; j < s->cfg.njobs; j++)
		threads += s->cfg.jobs[j].nworkers;
	s->task_every = s->cpu_every = 1;
	if (threads > TASK_READS_PER_SAMPLE / 2)
		s->task_every = (2 * threads + TASK_READS_PER_SAMPLE - 1) / TASK_READS_PER_SAMPLE;
	if (threads > CPU_READS_PER_SAMPLE / 2)
		s->cpu_every = (2 * threads + CPU_READS_PER_SAMPLE - 1) / CPU_READS_PER_SAMPLE;
	if (s->task_every > 1)
		notes_note("per-thread fault counters of %u threads: each job's are "
			"read over one interval in %u (a read costs microseconds); its other rows' "
			"majflt_per_s and minflt_per_s cells stay empty", threads, s->task_every);
	if (s->cpu_every > 1)
		notes_note("per-thread CPU time of %u threads: each job's is "
			"read over one interval in %u (a read is a system call); its other rows' "
			"cpu_us_per_4k cells stay empty", threads, s->cpu_every);
}

/* Jobs' counter sets a sample may read: one read of a job's set (every
 * event of its tasks, an IPI to each CPU where one runs) took 4 to 25 us
 * on the 2-vCPU guest under load, 5-8 us with 200-500 psync jobs (50:
 * 0.25-0.4 ms a sample, the largest budgeted read), so 24 are ~0.15 ms. */
#define EV_READS_PER_SAMPLE 24

/* Rows reserved per job at most: 1024 rows of 104 bytes (a run of 100 s
 * at 100 ms) is 104 KB a job, 208 MB at 2000 jobs, touched at set-up;
 * a longer run grows them as it goes (a doubling now and then). */
#define SAMPLER_ROWS_RESERVE_MAX 1024

/* Every job's threads' state in one array, walked in order by every
 * sample, and their lat spills' copies in another: no memory until a
 * worker spills (hist_ring_push), and then the pages it spills into
 * (sampler_map_zeroed). 0 or -ENOMEM. */
static int threads_alloc(struct sampler *s)
{
	size_t total = 0;

	for (unsigned j = 0; j < s->cfg.njobs; j++)
		total += s->cfg.jobs[j].slots.total;
	s->th_all = sampler_calloc_lines(total ? total : 1, sizeof(*s->th_all));
	s->nspill = total ? total : 1;
	s->spill_all = sampler_map_zeroed(s->nspill * sizeof(*s->spill_all));
	return s->th_all && s->spill_all ? 0 : -ENOMEM;
}

/* Job @j's state, its threads' from @k on in the run's arrays: the
 * task files' buffers, the histogram stages the counters' pass fills,
 * its devices, explain's rows (@rows) and the devices' readings, all
 * made now so that no sample allocates. 0 or -ENOMEM. */
static int job_setup(struct sampler *s, unsigned j, unsigned k, size_t rows)
{
	const struct sampler_config *cfg = &s->cfg;
	struct job_samp *js = &s->jobs[j];

	js->nthreads = cfg->jobs[j].slots.total;
	js->lat = cfg->jobs[j].job->latency;
	js->log_prio = cfg->jobs[j].job->log_prio;
	js->delayacct = cfg->jobs[j].job->delayacct;
	js->verifies = job_verifies(cfg->jobs[j].job);
	js->stats = cfg->jobs[j].stats;
	js->nworkers = cfg->jobs[j].nworkers;
	js->pool = cfg->jobs[j].pool;
	js->pool_batches = cfg->jobs[j].pool_batches;
	js->th = s->th_all + k;
	for (unsigned i = 0; i < js->nthreads; i++)
		js->th[i].prev_spill = &s->spill_all[k + i];
	for (unsigned i = 0; i < js->nthreads; i++)
		if (procfs_src_prealloc(&js->th[i].task, SAMPLER_TASK_BUF) < 0 ||
		    procfs_src_prealloc(&js->th[i].sched, SAMPLER_SCHED_BUF) < 0)
			return -ENOMEM;
	/* The stages the pass over the counters fills, whole and
	 * touched now: growing one in that pass took the heap's lock
	 * behind a preempted worker and held a pass up 0.9 s. */
	for (unsigned i = 0; cfg->jobs[j].job->latency && i < cfg->jobs[j].nworkers; i++)
		if (hist_stage_reserve(&js->th[i].stage, HIST_BUCKETS) < 0)
			return -ENOMEM;
	/* Only a write job's workers have write histograms to follow. */
	for (unsigned i = 0; job_writes(cfg->jobs[j].job) && i < cfg->jobs[j].nworkers; i++) {
		js->th[i].prev_w = sampler_map_zeroed(2 * sizeof(struct hist));
		if (!js->th[i].prev_w)
			return -ENOMEM;
		for (unsigned d = 0; cfg->jobs[j].job->latency && d < 2; d++)
			if (hist_stage_reserve(&js->th[i].wstage[d], HIST_BUCKETS) < 0)
				return -ENOMEM;
	}
	sampler_resolve_job_devices(s, j);
	if (explain_job_init(&js->x, cfg->jobs[j].job, cfg->jobs[j].targets,
			     cfg->jobs[j].ntargets, &s->regions) < 0 ||
	    explain_job_reserve(&js->x, rows) < 0)
		return -ENOMEM;
	explain_warn(stderr, js->x.why);
	explain_note(stderr, js->x.note);
	js->dev_last = sampler_calloc_lines(RESULT_MAX_DEVS, sizeof(*js->dev_last));
	js->dev_base = calloc(RESULT_MAX_DEVS, sizeof(*js->dev_base));
	js->dev_end = calloc(RESULT_MAX_DEVS, sizeof(*js->dev_end));
	if (!js->dev_last || !js->dev_base || !js->dev_end)
		return -ENOMEM;
	js->faults_ok = true;
	js->share = calloc(cfg->jobs[j].nworkers ? cfg->jobs[j].nworkers : 1, sizeof(*js->share));
	if (!js->share)
		return -ENOMEM;
	return 0;
}

int sampler_create(struct sampler **sp, const struct sampler_config *cfg, struct err *e)
{
	struct sampler *s = calloc(1, sizeof(*s));
	size_t rows;

	*sp = NULL;
	if (!s)
		return err_set(e, ENOMEM, "out of memory");
	s->cfg = *cfg;
	s->proc = procfs_root();
	s->hz = procfs_clk_tck();
	s->self = getpid();
	s->jobs = sampler_calloc_lines(cfg->njobs ? cfg->njobs : 1, sizeof(*s->jobs));
	if (!s->jobs) {
		free(s);
		return err_set(e, ENOMEM, "out of memory");
	}
	if (cfg->csv_path) {
		int ret = csvout_open(&s->csv, cfg->csv_path, e);

		if (ret) {
			free(s->jobs);
			free(s);
			return ret;
		}
		s->have_csv = true;
		/* A sample's rows go out in one write (csvout.h): room for
		 * 2000 rows of up to 512 bytes, touched now so that filling it
		 * faults in no page while jobs run. Without it, a row a write. */
		{
			size_t cap = (size_t)(cfg->njobs ? cfg->njobs : 1) * 512;

			cap = cap < (64u << 10) ? 64u << 10 : cap > (1u << 20) ? 1u << 20 : cap;
			if (csvout_buffer(&s->csv, cap) == 0)
				memset(s->csv.buf, 0, cap);
		}
	}
	sampler_open_sys(s);
	residency_set_init(&s->regions);
	/* A target region a sample reads whole: 64 pages per ms of the
	 * interval (25 MiB at 100 ms, 250 MiB at 1 s), at the 30 to 200 ns
	 * a page cachestat took on the loaded 2-vCPU guest: 0.2-0.26 ms of a
	 * 100 ms sample with 500 busy threads, 2-3 ms of a 1 s one. A quarter
	 * of that was tried for the 2000-job sample and did not lower its
	 * median (tests/bench/README.md), while a 64 MiB file at the default
	 * 1 s lost its residency every other row. A larger region is read a
	 * part per interval. */
	s->regions.pages_per_sample = cfg->interval_ns / 1000000ull * 64;
	if (!s->regions.pages_per_sample)
		s->regions.pages_per_sample = 1;
	sampler_test_hooks(s);
	s->host_cells = samplecols_cache_new();
	if (!s->host_cells)
		return err_set(e, ENOMEM, "out of memory");
	hist_init(&s->tick_cost);
	hist_init(&s->tick_cpu);
	s->snap_skew_max = 0;
	s->plan = malloc(sizeof(*s->plan));
	if (!s->plan)
		return err_set(e, ENOMEM, "out of memory");
	/* The kernel's own counters: the live host's, whatever recorded
	 * tree FAULTLINE_SYS or FAULTLINE_PROC name. */
	perfev_probe(s->plan, "/sys", "/proc");
	/* Workers open rings and pidfds, the sampler a task file per thread:
	 * counters give way, and the table is grown for all now (procfs.h). */
	s->ev_reserve = 256;
	for (unsigned j = 0; j < cfg->njobs; j++)
		s->ev_reserve += 2 * cfg->jobs[j].slots.total;
	procfs_fd_room(s->ev_reserve + cfg->njobs * s->plan->nev);
	/* Read in pairs of boundaries, as delayacct's threads are. */
	s->ev_every = 1;
	if (cfg->njobs > EV_READS_PER_SAMPLE / 2)
		s->ev_every = (2 * cfg->njobs + EV_READS_PER_SAMPLE - 1) / EV_READS_PER_SAMPLE;
	task_budget(s);
	/* Rows for the planned run, a row per interval plus ramp and
	 * startdelay: only a longer run grows them while it runs. */
	{
		uint64_t plan = planned_ns(cfg);

		rows = plan ? (size_t)(plan / cfg->interval_ns) + 8 : 64;
		if (rows > SAMPLER_ROWS_RESERVE_MAX)
			rows = SAMPLER_ROWS_RESERVE_MAX;
	}
	s->tick_mib = calloc(cfg->njobs ? cfg->njobs : 1, sizeof(double));
	s->tick_iops = calloc(cfg->njobs ? cfg->njobs : 1, sizeof(double));
	s->tick_row = calloc(cfg->njobs ? cfg->njobs : 1, sizeof(bool));
	if (!s->tick_mib || !s->tick_iops || !s->tick_row)
		return err_set(e, ENOMEM, "out of memory");
	hist_init(&s->interval);
	hist_init(&s->winterval);
	hist_init(&s->sinterval);
	if (threads_alloc(s) < 0)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned j = 0, k = 0; j < cfg->njobs; k += cfg->jobs[j].slots.total, j++)
		if (job_setup(s, j, k, rows) < 0)
			return err_set(e, ENOMEM, "out of memory");
	wb_setup(s);
	for (unsigned j = 0; j < cfg->njobs; j++)
		sampler_job_cells(s, j);
	if (sampler_time_setup(s) < 0)
		return err_set(e, ENOMEM, "out of memory");
	*sp = s;
	return open_fiolog(s, e);
}

static uint64_t job_planned_ns(const struct job *j)
{
	if (!j->runtime_ns)
		return 0;
	return j->startdelay_ns + j->ramp_ns + j->runtime_ns;
}

/* Planned length of the run for the status line: stonewall groups run
 * one after another, the jobs of a group together. 0 = unknown (a job
 * without runtime runs until its I/O is done). */
static uint64_t planned_ns(const struct sampler_config *c)
{
	uint64_t total = 0, group = 0;

	for (unsigned j = 0; j < c->njobs; j++) {
		const struct job *job = c->jobs[j].job;

		if (!job_planned_ns(job))
			return 0;
		if (job->stonewall && j) {
			total += group;
			group = 0;
		}
		if (job_planned_ns(job) > group)
			group = job_planned_ns(job);
	}
	return total + group;
}

void sampler_begin(struct sampler *s, uint64_t now)
{
	struct timeval tv;

	s->t0 = now;
	gettimeofday(&tv, NULL);
	s->epoch0_ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
	sampler_read_sys(s, &s->begin, now);
	s->last_tick = s->begin;
	s->last_tick_ok = true;
	s->status_total_ns = planned_ns(&s->cfg);
	if (s->have_csv) {
		/* Anything stdio holds for stdout goes first (--csv=-). */
		fflush(stdout);
		sampler_csv_write(s, sampler_csv_header(), strlen(sampler_csv_header()));
		sampler_flush(s);
	}
}

void sampler_set_epoch0(struct sampler *s, uint64_t epoch0_ms)
{
	s->epoch0_ms = epoch0_ms;
}

void sampler_job_ready(struct sampler *s, unsigned j, pid_t leader)
{
	struct job_samp *js = &s->jobs[j];

	/* Counters on the leader before it starts anything: every task of
	 * the job is counted, and none of another job's. Hosts that offer
	 * none say so in --check-system, not once per run. */
	if (leader > 0 && perfev_any(s->plan)) {
		struct err e = { 0 };
		struct rlimit rl;

		js->ev_open = perfev_open(&js->ev, s->plan, leader, &e) == 0;
		/* Counters are what gives way when descriptors run short.
		 * They are handed out lowest first: the highest tells how
		 * many are in use. */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    (e.code == EMFILE || (js->ev_open && (rlim_t)perfev_highest_fd(&js->ev) + s->ev_reserve >= rl.rlim_cur))) {
			perfev_close(&js->ev);
			js->ev_open = false;
			snprintf(js->ev_why, sizeof(js->ev_why), "not opened: out of file descriptors "
				 "(RLIMIT_NOFILE %llu, %u per job)", (unsigned long long)rl.rlim_cur, s->plan->nev);
			s->ev_skipped++;
		} else if (e.code) {
			snprintf(js->ev_why, sizeof(js->ev_why), "%s", e.msg);
			sampler_warn_once(&s->warned_ev, "job %s: per-job kernel counters: %s",
				  s->cfg.jobs[j].job->name, e.msg);
		}
		if (js->ev_open && perfev_read(&js->ev, &js->ev_last) < 0)
			memset(js->ev_last.ok, 0, sizeof(js->ev_last.ok));
		js->ev_last_any = js->ev_open;	/* at worst, the next row looks */
		if (js->ev_open && s->ev_every > 1 && !s->noted_ev) {
			s->noted_ev = true;
			notes_note("per-job kernel counters of %u jobs: each job's are "
				"read over one interval in %u (a read costs microseconds); its other rows' "
				"job_* cells stay empty", s->cfg.njobs, s->ev_every);
		}
		js->ev_base = js->ev_last;
	}
	/* Without counters now, its job_* cells are empty in every row. */
	js->ev_decided = true;
	sampler_job_cells(s, j);
	if (js->wb == WB_TRACED && leader > 0)
		wbtrace_job_task(s->wb, j, leader);
	/* One snapshot for all the jobs of a group (readied together, then
	 * started together), so their first rows' system-wide cells agree
	 * as every later row's do. */
	if (!s->group_sys_taken) {
		uint64_t now = now_ns();

		/* The group's devices, too, are read once. */
		sampler_moment(s, now);
		sampler_read_sys(s, &s->group_sys, now);
	}
	s->group_sys_taken = true;
	js->last_sys = s->group_sys;
	js->ps_slot = -1;
	sampler_read_job_devs(s, js, js->dev_last);
	memcpy(js->dev_base, js->dev_last, RESULT_MAX_DEVS * sizeof(*js->dev_base));
}

void sampler_job_started(struct sampler *s, unsigned j, uint64_t start_ns,
			 uint64_t ramp_end_ns, struct cgroup *cg)
{
	struct job_samp *js = &s->jobs[j];

	s->group_sys_taken = false;	/* the next group takes its own */
	js->active = true;
	js->start_ns = start_ns;
	js->ramp_end_ns = ramp_end_ns;
	js->cg = cg;
	explain_job_cgroup(&js->x, cg);
	js->measure_ns = ramp_end_ns ? ramp_end_ns : start_ns + s->cfg.jobs[j].job->startdelay_ns;
	js->ending = false;
	if (js->wb == WB_TRACED)
		wbtrace_job_window(s->wb, j, js->measure_ns, 0);
	memset(&js->wb_last, 0, sizeof(js->wb_last));
	memset(&js->wb_base, 0, sizeof(js->wb_base));
	js->last_t = start_ns;
	js->last_sys.t = start_ns;
	sampler_time_start(s, j, start_ns);
	for (unsigned i = 0; i < js->nthreads; i++) {
		struct thread_samp *ts = &js->th[i];

		/* Only the buckets hist_commit used, and none of a
		 * fresh one: its untouched pages cost no memory. */
		hist_clear(ts->prev_spill);
		ts->ring_read = 0;
		ts->prev_ops = ts->prev_bytes = ts->prev_probe = 0;
		ts->prev_wops = ts->prev_wbytes = ts->prev_syncs = 0;
		ts->stage.taken = ts->stage.seq_taken = false;
		ts->stage.spill_n = 0;	/* prev_spill emptied above, prev_w below */
		for (unsigned k = 0; k < 2; k++) {
			ts->wstage[k].taken = ts->wstage[k].seq_taken = false;
			ts->wstage[k].spill_n = 0;
		}
		ts->prev_hits = ts->prev_misses = ts->prev_evictions = ts->prev_batches = 0;
		if (ts->prev_w) {
			hist_init(&ts->prev_w[0]);
			hist_init(&ts->prev_w[1]);
		}
		/* A new thread starts with zero faults of its own. */
		ts->prev_maj = ts->prev_min = 0;
		js->flt_read = true;
		js->cpu_read = true;
		ts->cpu_ns = ts->prev_cpu = 0;
		ts->cpu_ok = false;
		ts->base_from_start = true;
	}
}

static bool reading_back(const struct sampler *s, unsigned j);
static void moment_sys(struct sampler *s, uint64_t now, struct sys_snap *out);

void sampler_job_measure_start(struct sampler *s, unsigned j, uint64_t now)
{
	struct job_samp *js = &s->jobs[j];
	const struct sampler_job *sj = &s->cfg.jobs[j];

	/* One window per row: the row that would straddle the
	 * ramp's end ends here, a ramp row, and the measured rows start
	 * here, so they add up to the job's totals, which start here too. */
	if (js->active && now > js->last_t + 1000000ull && !reading_back(s, j)) {
		struct sys_snap sys;

		sampler_moment(s, now);
		moment_sys(s, now, &sys);
		sampler_job_snap(s, j);
		sampler_job_row(s, j, now, &sys, NULL, NULL);
		sampler_flush(s);
	}
	if (js->ramp_end_ns)
		js->ramp_end_ns = now;
	js->measure_ns = now;
	if (js->wb == WB_TRACED) {
		/* What came before is the ramp's: read it out first. */
		wb_tasks(s, j);
		wb_poll(s);
		wbtrace_job_window(s->wb, j, now, 0);
		wbtrace_job_counts(s->wb, j, &js->wb_base);
	}
	sampler_moment(s, now);
	sampler_read_job_devs(s, js, js->dev_base);
	if (js->ev_open && perfev_read(&js->ev, &js->ev_base) < 0)
		memset(js->ev_base.ok, 0, sizeof(js->ev_base.ok));
	for (unsigned i = 0; i < js->nthreads; i++) {
		struct thread_samp *ts = &js->th[i];
		const struct thread_stats *st = &sj->stats[i];

		ts->base_from_start = true;
		if (STAT_LOAD(&st->running) &&
		    sampler_thread_faults(s, ts, st, &ts->base_maj, &ts->base_min))
			ts->base_from_start = false;
	}
}

static void status_line(struct sampler *s, uint64_t now, const struct sys_snap *sys,
			const double *mib, const double *iops)
{
	char buf[1024];
	int n;

	if (!s->cfg.status_line)
		return;
	n = snprintf(buf, sizeof(buf), "[%.0fs", (double)(now - s->t0) / 1e9);
	if (s->status_total_ns)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "/%.0fs", (double)s->status_total_ns / 1e9);
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "]");
	for (unsigned j = 0; j < s->cfg.njobs && n < (int)sizeof(buf) - 80; j++)
		if (s->jobs[j].active)
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %s: %.1f MiB/s %.0f IOPS",
				      s->cfg.jobs[j].job->name, mib[j], iops[j]);
	if (sys->tlb_ok && s->last_tick_ok && s->last_tick.tlb_ok)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, " | TLB %.0f/s",
			      (double)(sys->tlb - s->last_tick.tlb) * 1e9 / (double)(now - s->last_tick.t));
	if (sys->ksw_ok && s->last_tick.ksw_ok)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, " | kswapd %.1f%%",
			      (double)(sys->ksw_ticks - s->last_tick.ksw_ticks) / (double)s->hz * 1e11 /
				      (double)(now - s->last_tick.t));
	notes_status(buf, s->status_len);
	s->status_len = (size_t)n;
}

/*
 * verify=crc32c: every worker has ended its timed part and reads its
 * blocks back. Those seconds are no part of the job's rates, so they
 * get no rows; the job's last row ends where its work did
 * (sampler_job_ended).
 */
static bool reading_back(const struct sampler *s, unsigned j)
{
	/* The flag in the job's head (the pass's line): its struct job is a
	 * cold line of its own, one miss a job at every boundary. */
	const struct job_samp *js = &s->jobs[j];

	if (!js->verifies || !js->nworkers)
		return false;
	for (unsigned i = 0; i < js->nworkers; i++)
		if (STAT_LOAD(&js->stats[i].running) || !STAT_LOAD(&js->stats[i].end_ns))
			return false;
	return true;
}

/* The host's files, read once per sampling moment. */
static void moment_sys(struct sampler *s, uint64_t now, struct sys_snap *out)
{
	if (!s->moment_sys_ok)
		sampler_read_sys(s, &s->moment_sys, now);
	s->moment_sys_ok = true;
	*out = s->moment_sys;
}

/*
 * A sample, in two passes: first every job's counters, a few
 * loads per thread, so all rows' counts end at this boundary; then the
 * slower sources (the host's files, each device and target region once,
 * each thread's task files, each job's kernel counters and histograms)
 * and the rows. Its own time is kept for the summary and JSON.
 *
 * The rows end where the first pass began, so that pass must be quick:
 * one held up (the controller preempted among 200 busy workers, on a
 * loaded host for a second) would put the I/O its later jobs did
 * meanwhile into rows that end before it. A pass that took over a
 * tenth of the interval is taken again from a new moment, at most
 * three times; the rows end where the pass kept began.
 */
/* The first rows' prefetches (sampler_row_prefetch's pipeline), and
 * at row @j those of the rows after it. */
static void rows_prefetch_start(const struct sampler *s, bool pass)
{
	for (unsigned j = 0; j < 3; j++)
		sampler_row_prefetch(s, j, 0, pass);
	for (unsigned j = 0; j < 2; j++)
		sampler_row_prefetch(s, j, 1, pass);
	sampler_row_prefetch(s, 0, 2, pass);
}

static void prefetch_ahead(const struct sampler *s, unsigned j, bool pass)
{
	sampler_row_prefetch(s, j + 3, 0, pass);
	sampler_row_prefetch(s, j + 2, 1, pass);
	sampler_row_prefetch(s, j + 1, 2, pass);
}

uint64_t sampler_tick_begin(struct sampler *s, uint64_t now)
{
	uint64_t tol = s->cfg.interval_ns / 10, t_in = now_ns();
	struct sampler_self u0;

	sampler_self_now(&u0);

	if (tol < 1000000ull)
		tol = 1000000ull;
	for (unsigned tries = 0;; tries++) {
		sampler_moment(s, now);
		s->snap_any = false;
		rows_prefetch_start(s, true);
		for (unsigned j = 0; j < s->cfg.njobs; j++) {
			prefetch_ahead(s, j, true);
			s->tick_row[j] = s->jobs[j].active && !reading_back(s, j);
			if (s->jobs[j].active && !s->tick_row[j])
				sampler_keep_ps(s, j);
			if (s->tick_row[j]) {
				sampler_job_snap(s, j);
				s->snap_any = true;
			}
			if (s->test_pass_hook && s->snap_any && j == s->cfg.njobs / 2)
				s->test_pass_hook(s);
		}
		s->snap_t = now_ns();
		if (tries == 2 || s->snap_t - now <= tol)
			break;
		s->snap_retaken++;
		now = now_ns();
	}
	s->snap_now = now;
	s->snap_cost = s->snap_t - t_in;
	memset(&s->snap_self, 0, sizeof(s->snap_self));
	sampler_self_since(&s->snap_self, &u0);
	return now;
}

void sampler_tick(struct sampler *s, uint64_t now)
{
	struct sys_snap *sys;
	double *mib = s->tick_mib, *iops = s->tick_iops;
	bool *row = s->tick_row;
	uint64_t t_in = now_ns(), t_out, cost = 0;
	struct sampler_self u0, used = { 0 };

	sampler_self_now(&u0);
	/* A sample's cost is the sampler's own: its pass over the counters
	 * and this, not what the controller did between them (ending jobs:
	 * at a run's end, joining 2000 threads that wait for a CPU took 0.3
	 * to 0.9 s of a "sample" counted from the pass). */
	if (s->snap_now != now || !s->snap_t) {
		now = sampler_tick_begin(s, now);
	} else {
		cost = s->snap_cost;
		used = s->snap_self;
	}
	/* Kept for the next rows' previous reading (sampler_job_row). */
	s->sys_cur = (s->sys_cur + 1) % SAMPLER_SYS_KEEP;
	sys = &s->sys_keep[s->sys_cur];
	moment_sys(s, now, sys);
	s->group_sys_taken = false;
	if (s->wb) {
		for (unsigned j = 0; j < s->cfg.njobs; j++)
			if (s->jobs[j].active && s->jobs[j].wb == WB_TRACED)
				wb_tasks(s, j);
		wb_poll(s);
	}
	rows_prefetch_start(s, false);
	for (unsigned j = 0; j < s->cfg.njobs; j++) {
		mib[j] = iops[j] = 0;
		prefetch_ahead(s, j, false);
		/* A job that ended since the snapshot had its last row. */
		if (row[j] && s->jobs[j].active)
			sampler_job_row(s, j, now, sys, &mib[j], &iops[j]);
	}
	if (sys->tlb_ok && s->last_tick.tlb_ok && now > s->last_tick.t) {
		double rate = (double)(sys->tlb - s->last_tick.tlb) * 1e9 / (double)(now - s->last_tick.t);

		if (!s->tlb_peak_ok || rate > s->tlb_peak)
			s->tlb_peak = rate;
		s->tlb_peak_ok = true;
	}
	sampler_flush(s);
	status_line(s, now, sys, mib, iops);
	s->last_tick = *sys;
	t_out = now_ns();
	sampler_self_since(&used, &u0);
	/* A boundary with no job running costs nothing worth counting. */
	if (s->snap_any)
		sampler_cost_add(s, now, cost + t_out - t_in, &used);
	s->snap_t = 0;
}

/*
 * The job's counters at its end. With inherit, one read sums the tasks
 * still alive and those that exited (their counts folded into ours as
 * they went). A read that fails leaves its counters null, with why,
 * rather than 0.
 */
static void ev_read_end(struct job_samp *js)
{
	int ret = perfev_read(&js->ev, &js->ev_end);

	if (ret < 0 && !js->ev_why[0])
		snprintf(js->ev_why, sizeof(js->ev_why), "reading the counters at the job's end failed: %s",
			 strerror(-ret));
}

void sampler_job_ended(struct sampler *s, unsigned j, uint64_t now)
{
	struct job_samp *js = &s->jobs[j];
	struct sys_snap sys;
	uint64_t end = 0, row_end;
	bool row;

	if (!js->active)
		return;
	/* The job's work ended when its last worker stopped, not when the
	 * controller noticed: the last row ends there, so it is not a
	 * stretch of idle time that reads as a collapse in throughput. */
	for (unsigned i = 0; i < s->cfg.jobs[j].nworkers; i++) {
		uint64_t e = STAT_LOAD(&s->cfg.jobs[j].stats[i].end_ns);

		if (e > end)
			end = e;
	}
	if (!end || end > now)
		end = now;
	/* Jobs that end together share one reading of the host's files and
	 * devices: 2000 jobs ending at their runtime read them once. */
	sampler_moment(s, now);
	moment_sys(s, now, &sys);
	sys.t = end;
	sampler_job_snap(s, j);
	if (js->wb == WB_TRACED) {
		/* Everything up to its end, nothing after. */
		wb_tasks(s, j);
		wbtrace_job_window(s->wb, j, js->measure_ns, end);
		wb_poll(s);
	}
	/* A final row only for a real remainder: a job that ends right on
	 * an interval boundary already has its last row, unless it counted
	 * requests since (sampler_last_row_end). */
	js->ending = true;
	row_end = sampler_last_row_end(s, j, end);
	row = row_end != 0;
	if (row) {
		end = sys.t = row_end;
		sampler_job_row(s, j, end, &sys, NULL, NULL);
	}
	fiolog_job_end(s->fiolog, j, end > js->measure_ns ? (end - js->measure_ns) / 1000000ull : 0);
	memcpy(js->dev_end, js->dev_last, RESULT_MAX_DEVS * sizeof(*js->dev_end));
	js->dev_end_taken = true;
	if (js->ev_open) {
		/* The rows end here, so do the totals: the final row's read,
		 * or one made now. Not the last row's when there is no final
		 * one: a job shorter than that remainder (thread=0 with the
		 * null engine: under a millisecond) would have its totals
		 * from sampler_job_ready, before any of its tasks ran, and
		 * report 0 for everything its processes did. */
		if (row)
			js->ev_end = js->ev_last;
		else
			ev_read_end(js);
		js->ev_ended = true;
		perfev_close(&js->ev);
		js->ev_open = false;
	}
	js->active = false;
	js->cg = NULL;		/* the controller removes it next */
	explain_job_cgroup(&js->x, NULL);
}

/* ---- tests' hooks --------------------------------------------------- */

static void sleep_ns(uint64_t ns)
{
	struct timespec d = { .tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull) };

	nanosleep(&d, NULL);
}

static void test_row_delay(const struct sampler *s)
{
	sleep_ns(s->test_delay_ns);
}

static void test_pass_stall(struct sampler *s)
{
	sleep_ns(s->test_stall_ns);
	s->test_pass_hook = NULL;	/* once */
}

void sampler_test_hooks(struct sampler *s)
{
	const char *d = getenv("FAULTLINE_SAMPLER_DELAY_US");

	s->test_delay_ns = d ? strtoull(d, NULL, 10) * 1000ull : 0;
	d = getenv("FAULTLINE_SAMPLER_STALL_US");
	s->test_stall_ns = d ? strtoull(d, NULL, 10) * 1000ull : 0;
	s->test_row_hook = s->test_delay_ns ? test_row_delay : NULL;
	s->test_pass_hook = s->test_stall_ns ? test_pass_stall : NULL;
}

void sampler_destroy(struct sampler *s)
{
	if (!s)
		return;
	if (s->have_csv)
		csvout_close(&s->csv);
	fiolog_close(s->fiolog);
	sampler_time_close(s);
	procfs_src_close(&s->interrupts);
	procfs_src_close(&s->vmstat);
	procfs_src_close(&s->meminfo);
	procfs_src_close(&s->stat);
	if (s->have_ksw)
		procfs_kswapd_close(&s->ksw);
	explain_host_close(&s->psi);
	for (unsigned i = 0; i < s->ndevs; i++)
		procfs_src_close(&s->devs[i].src);
	for (unsigned j = 0; j < s->cfg.njobs; j++) {
		struct job_samp *js = &s->jobs[j];

		if (js->ev_open)
			perfev_close(&js->ev);
		/* Every thread's buffers were made at once, fd -1 until
		 * opened; a thread past the first failure has neither. */
		for (unsigned i = 0; js->th && i < js->nthreads; i++) {
			if (js->th[i].task.buf)
				procfs_src_close(&js->th[i].task);
			if (js->th[i].sched.buf)
				procfs_src_close(&js->th[i].sched);
		}
		for (unsigned i = 0; js->th && i < js->nthreads; i++) {
			sampler_unmap(js->th[i].prev_w, 2 * sizeof(struct hist));
			hist_stage_free(&js->th[i].stage);
			for (unsigned k = 0; k < 2; k++)
				hist_stage_free(&js->th[i].wstage[k]);
		}
		explain_job_free(&js->x);
		free(js->share);
		free(js->dev_last);
		free(js->dev_base);
		free(js->dev_end);
	}
	residency_set_free(&s->regions);
	samplecols_cache_free(s->host_cells);
	free(s->tick_mib);
	free(s->tick_iops);
	free(s->tick_row);
	free(s->th_all);
	sampler_unmap(s->spill_all, s->nspill * sizeof(*s->spill_all));
	free(s->jobs);
	if (s->plan)
		perfev_plan_release(s->plan);
	free(s->plan);
	wbtrace_destroy(s->wb);
	free(s);
}
