/*
 * samplerend.c - the sampler at the run's end: the host's totals over
 * the run, what sampling cost, each job's totals from its rows' sources;
 * see sampler.h (sampler_end).
 */
#include "out/notes.h"
#include "sample/sampler.h"

#include <numa.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sample/samplerow.h"
#include "sample/samplertime.h"
#include "sample/samplesys.h"
#include "telemetry/wbtrace.h"

static void fill_host(struct host_result *h, const struct sys_snap *sys)
{
	struct utsname u;

	if (gethostname(h->hostname, sizeof(h->hostname)) < 0)
		h->hostname[0] = '\0';
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s %s %s", u.sysname, u.release, u.machine);
	h->ncpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	h->numa_nodes = numa_available() < 0 ? 1 : (unsigned)numa_num_configured_nodes();
	h->mem_total = sys->mem_ok && procfs_mem_has(&sys->mem, PROCFS_MEM_TOTAL)
			       ? sys->mem.bytes[PROCFS_MEM_TOTAL]
			       : (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The calling thread's CPU clock and context switches now: two system
 * calls, a microsecond or two a sample. Fields it cannot read stay 0. */
void sampler_self_now(struct sampler_self *u)
{
	struct timespec ts;
	struct rusage ru;

	memset(u, 0, sizeof(*u));
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		u->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		u->nivcsw = ru.ru_nivcsw;
		u->nvcsw = ru.ru_nvcsw;
	}
}

/* @acc += what the thread used since @from. */
void sampler_self_since(struct sampler_self *acc, const struct sampler_self *from)
{
	struct sampler_self u;

	sampler_self_now(&u);
	acc->cpu_ns += u.cpu_ns - from->cpu_ns;
	acc->nivcsw += u.nivcsw - from->nivcsw;
	acc->nvcsw += u.nvcsw - from->nvcsw;
}

void sampler_cost_add(struct sampler *s, uint64_t now, uint64_t wall_ns, const struct sampler_self *used)
{
	hist_add(&s->tick_cost, wall_ns);
	hist_add(&s->tick_cpu, used->cpu_ns);
	s->tick_preempted += used->nivcsw > 0;
	s->tick_blocked += used->nvcsw > 0;
	if (s->snap_t > now && s->snap_t - now > s->snap_skew_max)
		s->snap_skew_max = s->snap_t - now;
	if (wall_ns > s->cfg.interval_ns / 4)
		s->over_quarter++;
}

/* The sampler's own time per sample; a warning when it took a large
 * part of the interval, the instrument then being a bottleneck. */
static void sampler_cost(struct sampler *s, struct run_result *res)
{
	struct sampler_result *c = &res->sampler;
	const struct hist *h = &s->tick_cost;

	memset(c, 0, sizeof(*c));
	c->samples = h->n;
	if (!h->n)
		return;
	c->p50_ms = (double)hist_percentile(h, 50) / 1e6;
	c->p99_ms = (double)hist_percentile(h, 99) / 1e6;
	c->max_ms = (double)h->max / 1e6;
	c->mean_ms = hist_mean(h) / 1e6;
	c->skew_max_ms = (double)s->snap_skew_max / 1e6;
	c->cpu_p50_ms = (double)hist_percentile(&s->tick_cpu, 50) / 1e6;
	c->cpu_max_ms = (double)s->tick_cpu.max / 1e6;
	c->preempted = s->tick_preempted;
	c->blocked = s->tick_blocked;
	c->over_quarter = s->over_quarter;
	c->retaken = s->snap_retaken;
	c->delay_queries = s->da_queries;
	c->delay_query_ns = s->da_query_ns;
	c->counters_every = s->ev_every;
	c->counter_reads = s->ev_reads;
	c->counter_read_ns = s->ev_read_ns;
	if (s->over_quarter)
		notes_warning("the sampler took more than a quarter of the %.0f ms "
			"interval in %u of %llu samples (median %.1f ms, longest %.1f ms, for %u jobs): "
			"it is a bottleneck of this run; a longer --interval lightens it",
			(double)s->cfg.interval_ns / 1e6, s->over_quarter, (unsigned long long)c->samples,
			c->p50_ms, c->max_ms, s->cfg.njobs);
}

/*
 * A job's last row. A row shorter than a millisecond would print a dt_s
 * of 0.000 (three decimals), so a job that ends that close after a
 * boundary usually has no last row: its boundary row holds everything.
 * Not when it counted requests after that row's reading: an async job
 * that reaps its queue at the end of its runtime (iodepth 16, two jobs:
 * 32 requests) while the boundary's pass reads its counters. Those
 * requests are in its totals, so they get a row, of the millisecond
 * after the boundary's, and the rows add up to the totals.
 */
uint64_t sampler_last_row_end(const struct sampler *s, unsigned j, uint64_t end)
{
	const struct job_samp *js = &s->jobs[j];

	if (end > js->last_t + 1000000ull)
		return end;
	for (unsigned i = 0; i < js->nthreads; i++) {
		const struct thread_samp *ts = &js->th[i];

		if (ts->rops != ts->prev_ops || ts->rbytes != ts->prev_bytes ||
		    (ts->prev_w && (ts->wops != ts->prev_wops || ts->wbytes != ts->prev_wbytes ||
				    ts->syncs != ts->prev_syncs)))
			return js->last_t + 1000000ull;
	}
	return 0;
}

void sampler_end(struct sampler *s, uint64_t now, struct run_result *res)
{
	struct sys_snap end;
	struct sys_result *sr = &res->sys;

	sampler_read_sys(s, &end, now);
	sampler_flush(s);
	res->csv_error = s->have_csv && s->csv.broken ? s->csv.error : 0;
	if (s->cfg.status_line && s->status_len)
		notes_status_end();
	sr->tlb_ok = s->begin.tlb_ok && end.tlb_ok;
	if (sr->tlb_ok) {
		sr->tlb_total = end.tlb - s->begin.tlb;
		/* A run shorter than one interval has no interval rate: its
		 * average is the best peak there is. */
		sr->tlb_peak_per_s = s->tlb_peak_ok ? s->tlb_peak
				     : (double)sr->tlb_total * 1e9 / (double)(now - s->t0);
	}
	sr->kswapd_ok = s->begin.ksw_ok && end.ksw_ok;
	if (sr->kswapd_ok)
		sr->kswapd_cpu_s = (double)(end.ksw_ticks - s->begin.ksw_ticks) / (double)s->hz;
	sr->vm_ok = s->begin.vm_ok && end.vm_ok;
	if (sr->vm_ok) {
		sr->pgscan_kswapd = vm_get(&end, PROCFS_VM_PGSCAN_KSWAPD) - vm_get(&s->begin, PROCFS_VM_PGSCAN_KSWAPD);
		sr->pgscan_direct = vm_get(&end, PROCFS_VM_PGSCAN_DIRECT) - vm_get(&s->begin, PROCFS_VM_PGSCAN_DIRECT);
		sr->pgsteal_kswapd = vm_get(&end, PROCFS_VM_PGSTEAL_KSWAPD) - vm_get(&s->begin, PROCFS_VM_PGSTEAL_KSWAPD);
		sr->pgsteal_direct = vm_get(&end, PROCFS_VM_PGSTEAL_DIRECT) - vm_get(&s->begin, PROCFS_VM_PGSTEAL_DIRECT);
		sr->pgmajfault = vm_get(&end, PROCFS_VM_PGMAJFAULT) - vm_get(&s->begin, PROCFS_VM_PGMAJFAULT);
		sr->pgscan_all_ok = vm_has_all(&end) && vm_has_all(&s->begin);
		if (sr->pgscan_all_ok) {
			sr->pgscan_all = pgscan(&end) - pgscan(&s->begin);
			sr->pgsteal_all = pgsteal(&end) - pgsteal(&s->begin);
		}
	}
	sr->cache_ok = s->begin.mem_ok && end.mem_ok;
	if (sr->cache_ok) {
		sr->cache_start = s->begin.mem.bytes[PROCFS_MEM_CACHED];
		sr->cache_end = end.mem.bytes[PROCFS_MEM_CACHED];
	}
	fill_host(&res->host, &end);
	sampler_cost(s, res);
	res->events = s->plan;
	if (s->ev_skipped)
		notes_warning("per-job kernel counters not opened for %u of %u jobs: "
			"each needs %u file descriptors and RLIMIT_NOFILE is too low (raise the hard limit, "
			"as root: ulimit -Hn); their job_* cells stay empty",
			s->ev_skipped, s->cfg.njobs, s->plan->nev);

	for (unsigned j = 0; j < s->cfg.njobs && j < res->njobs; j++) {
		struct job_samp *js = &s->jobs[j];
		const struct sampler_job *sj = &s->cfg.jobs[j];
		struct job_result *jres = &res->jobs[j];
		bool ok = true;

		sampler_time_result(s, j, jres);
		jres->read_iops = js->fio_r.iops;
		jres->read_bw = js->fio_r.bw;
		jres->write_iops = js->fio_w.iops;
		jres->write_bw = js->fio_w.bw;

		/* Faults of the measured part: exit figures minus the base. */
		jres->majflt = jres->minflt = 0;
		for (unsigned i = 0; i < sj->nworkers; i++) {
			const struct thread_stats *st = &sj->stats[i];
			const struct thread_samp *ts = &js->th[i];
			uint64_t bmaj = ts->base_from_start ? st->start_majflt : ts->base_maj;
			uint64_t bmin = ts->base_from_start ? st->start_minflt : ts->base_min;

			if (!st->done || !st->rusage_ok) {
				ok = false;
				continue;
			}
			jres->majflt += st->exit_majflt - bmaj;
			jres->minflt += st->exit_minflt - bmin;
		}
		jres->faults_ok = ok && sj->nworkers;

		/* Kernel counters of the measured part. */
		for (int c = 0; c < PERFEV_NR; c++) {
			jres->events.ok[c] = js->ev_ended && js->ev_end.ok[c] && js->ev_base.ok[c] &&
					     js->ev_end.v[c] >= js->ev_base.v[c];
			jres->events.v[c] = jres->events.ok[c] ? js->ev_end.v[c] - js->ev_base.v[c] : 0;
		}
		snprintf(jres->events_why, sizeof(jres->events_why), "%s", js->ev_why);

		/* Helper threads (offload, prefetch): apart from the workers,
		 * whose faults are the ones that blocked the reader. */
		{
			const struct job_slots sl = sj->slots;

			jres->helper_majflt = jres->helper_minflt = 0;
			jres->helper_faults_ok = sl.noffload + sl.nprefetch > 0;
			for (unsigned i = sl.offload; i < sl.prefetch + sl.nprefetch; i++) {
				const struct thread_stats *st = &sj->stats[i];
				const struct thread_samp *ts = &js->th[i];
				uint64_t bmaj = ts->base_from_start ? st->start_majflt : ts->base_maj;
				uint64_t bmin = ts->base_from_start ? st->start_minflt : ts->base_min;

				if (!st->done || !st->rusage_ok) {
					jres->helper_faults_ok = false;
					continue;
				}
				jres->helper_majflt += st->exit_majflt - bmaj;
				jres->helper_minflt += st->exit_minflt - bmin;
			}
		}

		if (!js->dev_end_taken)
			sampler_read_job_devs(s, js, js->dev_end);
		jres->ndevs = 0;
		for (unsigned i = 0; i < js->ndev && i < RESULT_MAX_DEVS; i++) {
			const struct dev_src *ds = &s->devs[js->dev[i]];
			struct dev_result *dr = &jres->devs[jres->ndevs++];

			*dr = ds->facts;
			snprintf(dr->name, sizeof(dr->name), "%s", ds->name);
			snprintf(dr->role, sizeof(dr->role), "%s", i < js->nprimary ? ds->role : "md-member");
			dr->ok = ds->ok;
			if (ds->ok) {
				dr->read_bytes = devinfo_read_bytes(&js->dev_end[i]) - devinfo_read_bytes(&js->dev_base[i]);
				dr->read_ios = js->dev_end[i].read_ios - js->dev_base[i].read_ios;
				dr->write_bytes = devinfo_write_bytes(&js->dev_end[i]) -
						  devinfo_write_bytes(&js->dev_base[i]);
				dr->write_ios = js->dev_end[i].write_ios - js->dev_base[i].write_ios;
			}
		}
		jres->dev_ok = sampler_job_devs_ok(s, js);
		jres->dev_read_bytes = jres->dev_write_bytes = jres->dev_write_ios = 0;
		for (unsigned i = 0; jres->dev_ok && i < js->nprimary; i++) {
			jres->dev_read_bytes += jres->devs[i].read_bytes;
			jres->dev_write_bytes += jres->devs[i].write_bytes;
			jres->dev_write_ios += jres->devs[i].write_ios;
		}
		jres->read_amp = jres->dev_ok && jres->rbytes ? (double)jres->dev_read_bytes / (double)jres->rbytes : 0;
		explain_result(&js->x, &jres->x);
		jres->wb.state = (enum wb_state)js->wb;
		snprintf(jres->wb.why, sizeof(jres->wb.why), "%s", js->wb_why);
		if (js->wb == WB_TRACED) {
			wbtrace_job_counts(s->wb, j, &jres->wb.c);
			wbtrace_counts_sub(&jres->wb.c, &js->wb_base);
			snprintf(jres->wb.age_why, sizeof(jres->wb.age_why), "%s", wbtrace_age_why(s->wb));
		}
		for (unsigned t = 0; t < jres->ntargets && jres->targets; t++)
			if (js->nprimary)
				snprintf(jres->targets[t].device, sizeof(jres->targets[t].device), "%s",
					 s->devs[js->dev[t < js->nprimary ? t : 0]].name);
	}
}

