/*
 * json_out.c - the run's results as JSON; see json_out.h.
 *
 * Layout: fio 3.33's where fio has the concept (checked against the
 * output of `fio --output-format=json` and json+), so fio-reading tools
 * work:
 *
 *   { "fio version" ("faultline-VERSION"), "faultline version",
 *     "timestamp", "timestamp_ms", "time", "global options",
 *     "jobs": [ { fio's fields (json_fio.c): read, write (fio's all-zero
 *                 form in a read job), trim (all zero: faultline never
 *                 trims), sync (the flushes), ...,
 *                 "faultline": { what fio lacks } } ],
 *     "disk_util": [ ... ],
 *     "faultline": { version, host, system, interrupted, duration_ms,
 *                    interval_ms } }
 *
 * A telemetry figure whose source could not be read (its _ok flag is
 * false) is JSON null, never 0. Zeros that remain are true: the write
 * direction of a read job, trims, short and dropped I/Os.
 */
#include "out/json_out.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engines/engine.h"
#include "out/explain_out.h"
#include "job/options.h"
#include "out/json_fio.h"
#include "out/jsonbuild.h"
#include "out/outfile.h"
#include "workload/checksum.h"

/* Digits enough that 1.07 prints as 1.07 and iops keeps 15 figures. */
#define JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(15))

static const char *const rw_names[] = { "read", "randread", "write", "randwrite", "rw", "randrw",
					"trim", "randtrim", "trimwrite", "randtrimwrite" };
static const char *const touch_names[] = { "copy", "page", "stride", "all" };
static const char *const madv_names[] = { "normal", "random", "sequential", "willneed", "hugepage" };
static const char *const fadv_names[] = { "normal", "random", "sequential" };
static const char *const prefetch_names[] = { "none", "willneed", "populate", "touch", "readahead" };

#define NAME_OF(tab, v) ((unsigned)(v) < sizeof(tab) / sizeof(tab[0]) ? tab[(v)] : "?")

/* A telemetry number: null when its source was unreadable. */
static json_t *ju64_ok(bool ok, uint64_t v)
{
	return ok ? ju64(v) : json_null();
}

static json_t *jdbl_ok(bool ok, double v)
{
	return ok ? jdbl(v) : json_null();
}

static json_t *jstr_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

/* ------------------------------------------------------------------ */
/* jobs */

static uint64_t ns_to_ms(uint64_t ns)
{
	return (ns + 500000) / 1000000;
}

static json_t *target_object(const struct target_result *t)
{
	json_t *o = json_object();

	put(o, "path", json_string(t->path));
	put(o, "blkdev", json_boolean(t->is_blkdev));
	put(o, "base", ju64(t->base));
	put(o, "len", ju64(t->len));
	put(o, "sparse", json_boolean(t->sparse));
	put(o, "device", jstr_or_null(t->device));
	return o;
}

static json_t *device_object(const struct dev_result *d)
{
	json_t *o = json_object();

	put(o, "name", json_string(d->name));
	put(o, "role", jstr_or_null(d->role));
	put(o, "read_bytes", ju64_ok(d->ok, d->read_bytes));
	put(o, "read_ios", ju64_ok(d->ok, d->read_ios));
	put(o, "write_bytes", ju64_ok(d->ok, d->write_bytes));
	put(o, "write_ios", ju64_ok(d->ok, d->write_ios));
	put(o, "model", jstr_or_null(d->model));
	put(o, "scheduler", jstr_or_null(d->scheduler));
	put(o, "rotational", d->rotational < 0 ? json_null() : json_boolean(d->rotational));
	put(o, "size_bytes", d->size_bytes ? json_integer((json_int_t)d->size_bytes) : json_null());
	if (d->md_level[0]) {
		json_t *md = json_object();

		put(md, "level", json_string(d->md_level));
		put(md, "chunk_bytes", json_integer((json_int_t)d->md_chunk_bytes));
		put(md, "raid_disks", json_integer(d->md_raid_disks));
		put(o, "md", md);
	} else {
		put(o, "md", json_null());
	}
	return o;
}

/* loop=, offload=, prefetch=: present for every job, so one
 * reader handles all; zeros and empty arrays when unused. */
static void put_concurrency(json_t *o, const struct job_result *jr)
{
	const struct out_job *j = &jr->job;
	json_t *a, *pf;

	put(o, "loop", json_integer(j->loop));
	put(o, "offload", json_integer(jr->offload_helpers));
	put(o, "offload_permits", json_integer(j->offload_permits ? j->offload_permits
								  : jr->offload_helpers));
	if (j->prefetch == PREFETCH_NONE) {
		put(o, "prefetch", json_null());
	} else {
		pf = json_object();
		put(pf, "mode", json_string(NAME_OF(prefetch_names, j->prefetch)));
		put(pf, "window", ju64(j->prefetch_window));
		put(pf, "requests", ju64(jr->prefetch_reqs));
		put(pf, "bytes", ju64(jr->prefetch_bytes));
		put(pf, "skipped", ju64(jr->prefetch_skipped));
		put(o, "prefetch", pf);
	}
	put(o, "reader_majflt", ju64_ok(jr->faults_ok, jr->majflt));
	put(o, "reader_minflt", ju64_ok(jr->faults_ok, jr->minflt));
	put(o, "reader_sleeps", ju64_ok(jr->sleeps_ok, jr->reader_sleeps));
	put(o, "reader_cpu_ns", ju64_ok(jr->sched_ok, jr->reader_cpu_ns));
	put(o, "reader_blocked_ns", ju64_ok(jr->sched_ok, jr->reader_blocked_ns));
	put(o, "helper_threads", json_integer(jr->offload_helpers + jr->prefetch_helpers));
	put(o, "helper_majflt", ju64_ok(jr->helper_faults_ok, jr->helper_majflt));
	put(o, "helper_minflt", ju64_ok(jr->helper_faults_ok, jr->helper_minflt));
	a = json_array();
	for (unsigned i = 0; i < jr->nstreams && jr->streams; i++) {
		const struct stream_result *sr = &jr->streams[i];
		json_t *so = json_object();

		put(so, "stream", json_integer(i));
		put(so, "target", json_string(sr->target < jr->ntargets && jr->targets
						      ? jr->targets[sr->target].path : "?"));
		put(so, "offset", ju64(sr->base));
		put(so, "len", ju64(sr->len));
		put(so, "ops", ju64(sr->ops));
		put(so, "bytes", ju64(sr->bytes));
		push(a, so);
	}
	put(o, "streams", a);
}

/* ioengine=bufpool, vmcache: null for the engines without a
 * pool; vmcache's batches and region null for bufpool. */
static json_t *pool_object(const struct job_result *jr)
{
	const struct out_job *j = &jr->job;
	const struct pool_counters *p = &jr->pool;
	const uint64_t acc = p->hits + p->misses;
	json_t *o;

	if (!jr->pool_ok)
		return json_null();
	o = json_object();
	put(o, "size", ju64(j->pool_size));
	put(o, "page", ju64(j->pool_page));
	put(o, "frames", ju64(j->pool_page ? j->pool_size / j->pool_page : 0));
	put(o, "io", json_string(j->pool_io == POOL_IO_PSYNC ? "psync" : "io_uring"));
	put(o, "hits", ju64(p->hits));
	put(o, "misses", ju64(p->misses));
	put(o, "hit_ratio", jdbl_ok(acc > 0, acc ? (double)p->hits / (double)acc : 0));
	put(o, "evictions", ju64(p->evictions));
	put(o, "pages_read", ju64(p->reads));
	put(o, "pages_written", ju64(p->writebacks));
	put(o, "waits", ju64(p->waits));
	put(o, "prefetch", ju64(j->pool_prefetch));
	put(o, "pages_prefetched", ju64(p->prefetches));
	{
		const bool vm = jr->pool_batches_ok;
		const uint64_t pages = result_pool_pages(jr);
		double ipi = 0;
		bool ipi_ok = result_pool_ipi_per_evict(jr, &ipi);

		put(o, "design", json_string(vm ? "vmcache" : "bufpool"));
		put(o, "evict_batches", ju64_ok(vm, p->evict_batches));
		put(o, "madvise_calls", ju64_ok(vm, p->madvise_calls));
		put(o, "madvise_calls_per_batch",
		    jdbl_ok(vm && p->evict_batches, p->evict_batches ?
			    (double)p->madvise_calls / (double)p->evict_batches : 0));
		put(o, "tlb_ipi_per_evicted_page", jdbl_ok(ipi_ok, ipi));
		put(o, "region_bytes", ju64_ok(vm, pages * j->pool_page));
		put(o, "page_states_bytes", ju64_ok(vm, pages * sizeof(uint64_t)));
		put(o, "huge_pages", vm ? json_boolean(result_vmcache_huge(jr)) : json_null());
	}
	return o;
}

/* The job's own kernel counters over the measured part, null
 * where not counted, with why under "unavailable" and caveats of the
 * counted ones under "notes". */
static json_t *events_object(const struct job_result *jr, const struct perfev_plan *p)
{
	const struct perfev_values *ev = &jr->events;
	json_t *o = json_object(), *why = json_object(), *notes = json_object();
	bool pc = ev->ok[PERFEV_PGCACHE_ADD] && p;
	double pc_bytes = pc ? (double)ev->v[PERFEV_PGCACHE_ADD] * p->page_size : 0;

	for (int c = 0; c < PERFEV_NR; c++) {
		put(o, perfev_key(c), ju64_ok(ev->ok[c], ev->v[c]));
		if (!ev->ok[c])
			put(why, perfev_key(c), json_string(p && !p->avail[c] ? p->why[c]
							    : jr->events_why[0] ? jr->events_why
							    : "not measured (the job did not start)"));
		else if (p && p->why[c][0])
			put(notes, perfev_key(c), json_string(p->why[c]));
	}
	put(o, "pgcache_add_bytes", ju64_ok(pc, (uint64_t)pc_bytes));
	put(o, "pgcache_read_amplification", jdbl_ok(pc && jr->rbytes, jr->rbytes ? pc_bytes / (double)jr->rbytes : 0));
	put(o, "unavailable", why);
	put(o, "notes", notes);
	return o;
}

/* What a write job did beyond fio's write and sync objects: its mix and
 * flush policy as resolved, and the read-back (null when not asked). */
static void put_writes(json_t *o, const struct job_result *jr)
{
	static const char *const sync_names[] = { "none", "dsync", "sync" };
	const struct out_job *j = &jr->job;
	const struct write_result *w = jr->w;
	const struct engine_ops *eng = engine_find(j->ioengine);
	json_t *v;

	put(o, "rwmixread", j->mixed ? json_integer(j->rwmixread) : json_null());
	put(o, "flush", !j->writes ? json_null() :
			json_string(eng && (eng->flags & ENGINE_F_MAPPED) ? "msync" :
				    j->flush_datasync ? "fdatasync" : "fsync"));
	put(o, "sync_open", json_string(NAME_OF(sync_names, j->sync)));
	if (!w || !w->verify) {
		put(o, "verify", json_null());
		return;
	}
	v = json_object();
	put(v, "mode", json_string(checksum_name(j->verify)));
	put(v, "complete", json_boolean(w->verify_complete));
	put(v, "blocks_checked", ju64(w->verify_blocks));
	put(v, "mismatches", ju64(w->verify_bad));
	put(v, "first_bad_target", w->verify_bad && w->verify_first_target < jr->ntargets && jr->targets
					   ? json_string(jr->targets[w->verify_first_target].path)
					   : json_null());
	put(v, "first_bad_offset", w->verify_bad ? ju64(w->verify_first_off) : json_null());
	put(o, "verify", v);
}

/*
 * Who wrote the job's data to the device: null for a read
 * job; numbers null, with why, where the trace could not be read or
 * lost events while the job ran.
 */
static json_t *writeback_object(const struct job_result *jr)
{
	const struct wb_result *wb = &jr->wb;
	const struct wbtrace_counts *c = &wb->c;
	bool traced = wb->state == WB_TRACED && !c->lost;
	json_t *o, *r;
	char why[320];

	if (wb->state == WB_NONE)
		return json_null();
	o = json_object();
	if (wb->state == WB_BY_CONSTRUCTION) {
		put(o, "source", json_string("by construction"));
		put(o, "why", json_string(wb->why));
		put(o, "own_bytes", ju64_ok(jr->w != NULL, jr->w ? jr->w->bytes : 0));
		put(o, "kernel_bytes", ju64(0));
		put(o, "kernel_share", jdbl(0));
		put(o, "device_bytes", json_null());
		put(o, "other_bytes", json_null());
		put(o, "kernel_by_reason", json_null());
		put(o, "age_ms", json_null());
		put(o, "lost_events", json_null());
		return o;
	}
	if (wb->state == WB_TRACED && c->lost)
		snprintf(why, sizeof(why), "the trace buffer lost %llu events while the job ran",
			 (unsigned long long)c->lost);
	else
		snprintf(why, sizeof(why), "%s", wb->state == WB_TRACED ? "" : wb->why);
	put(o, "source", json_string(wb->state == WB_TRACED ? "tracepoints" : "none"));
	put(o, "why", jstr_or_null(why));
	put(o, "own_bytes", ju64_ok(traced, c->own_bytes));
	put(o, "kernel_bytes", ju64_ok(traced, c->kernel_bytes));
	put(o, "kernel_share", jdbl_ok(traced && c->own_bytes + c->kernel_bytes,
				       (double)c->kernel_bytes / (double)(c->own_bytes + c->kernel_bytes)));
	put(o, "device_bytes", ju64_ok(traced, c->dev_bytes));
	put(o, "other_bytes", traced ? json_integer((json_int_t)c->dev_bytes - (json_int_t)c->own_bytes -
						   (json_int_t)c->kernel_bytes)
				     : json_null());
	if (traced) {
		r = json_object();
		for (int k = 0; k < WBTRACE_NREASONS; k++)
			put(r, wbtrace_reason_key(k), ju64(c->reason_bytes[k]));
		put(o, "kernel_by_reason", r);
	} else {
		put(o, "kernel_by_reason", json_null());
	}
	if (traced && c->aged_bytes) {
		r = json_object();
		put(r, "mean", jdbl(c->age_ms_bytes / (double)c->aged_bytes));
		put(r, "max", ju64(c->age_max_ms));
		put(o, "age_ms", r);
	} else {
		put(o, "age_ms", json_null());
	}
	put(o, "age_why", jstr_or_null(traced && !c->aged_bytes && c->kernel_bytes ? wb->age_why : ""));
	put(o, "lost_events", ju64_ok(wb->state == WB_TRACED, c->lost));
	return o;
}

/* delayacct=1: where the workers' time went over the measured rows
 * read, as shares (they add to 100) and the nanoseconds the kernel
 * counted; null for a job that did not ask. */
static json_t *time_object(const struct job_result *jr)
{
	json_t *o;
	char key[32];

	if (!jr->job.delayacct)
		return json_null();
	o = json_object();
	for (unsigned k = 0; k < TIMESHARE_NPARTS; k++) {
		snprintf(key, sizeof(key), "%s_pct", timeshare_names[k]);
		put(o, key, jdbl_ok(jr->time_ok, (double)jr->time_tenths[k] / 10.0));
	}
	for (unsigned k = 0; k < TIMESHARE_OTHER; k++) {
		snprintf(key, sizeof(key), "%s_ns", timeshare_names[k]);
		put(o, key, ju64_ok(jr->time_ok, jr->time_ns.ns[k]));
	}
	put(o, "window_ns", ju64_ok(jr->time_ok, jr->time_window_ns));
	put(o, "threads", ju64(jr->time_threads));
	put(o, "read_every", ju64(jr->time_every));
	put(o, "why", jstr_or_null(jr->time_ok ? NULL : jr->time_why));
	return o;
}

static json_t *faultline_job_object(const struct job_result *jr, const struct perfev_plan *plan)
{
	const struct out_job *j = &jr->job;
	json_t *o = json_object(), *a;
	char buf[64];

	/* Every option as the job ran with it (defaults too); fio's "job
	 * options" lists only what the job file or command line set. */
	put(o, "options", json_fio_job_resolved(jr->options));
	put(o, "engine", json_string(j->ioengine));
	put(o, "rw", json_string(NAME_OF(rw_names, j->rw)));
	put(o, "bs", ju64(j->bs));
	put(o, "threads", json_integer(jr->nthreads));
	put(o, "iodepth", json_integer(j->iodepth));
	put(o, "iodepth_batch_submit", json_integer(jr->batch));
	put(o, "direct", json_boolean(j->direct));
	if (j->touch == TOUCH_STRIDE)
		snprintf(buf, sizeof(buf), "stride:%" PRIu64, j->touch_stride);
	else
		snprintf(buf, sizeof(buf), "%s", NAME_OF(touch_names, j->touch));
	put(o, "touch", json_string(buf));
	put(o, "madvise", json_string(NAME_OF(madv_names, j->madvise)));
	put(o, "fadvise", json_string(NAME_OF(fadv_names, j->fadvise)));
	put(o, "latency", json_boolean(jr->lat_ok));
	/* A paced job's latency counts from each request's due time
	 * (coordinated omission, run/pace.h), else from its issue. */
	put(o, "latency_from", json_string(j->paced ? "due" : "issue"));
	put(o, "ops", ju64(jr->rops));
	put(o, "bytes", ju64(jr->rbytes));
	put(o, "runtime_ns", ju64(jr->runtime_ns));
	/* fio's run control: did the job run, and what ended it early. */
	put(o, "ran", json_boolean(jr->rc.ran));
	put(o, "stopped_by", jstr_or_null(jr->rc.stopped_by ? jr->rc.stopped_by : ""));
	put(o, "stopped_by_job", jstr_or_null(jr->rc.stopped_by_job));
	put(o, "error", json_integer(jr->error));
	/* Given up after the stop's grace period: errmsg says what it did. */
	put(o, "stuck", json_boolean(jr->stuck));
	if (jr->errmsg[0])
		put(o, "errmsg", json_string(jr->errmsg));
	else
		put(o, "errmsg", jr->error ? json_string(strerror(jr->error)) : json_null());
	put(o, "major_faults", ju64_ok(jr->faults_ok, jr->majflt));
	put(o, "minor_faults", ju64_ok(jr->faults_ok, jr->minflt));

	a = json_array();
	for (unsigned i = 0; i < jr->ntargets && jr->targets; i++)
		push(a, target_object(&jr->targets[i]));
	put(o, "targets", a);

	a = json_array();
	for (unsigned i = 0; i < jr->ndevs && i < RESULT_MAX_DEVS; i++)
		push(a, device_object(&jr->devs[i]));
	put(o, "devices", a);

	put(o, "dev_read_bytes", ju64_ok(jr->dev_ok, jr->dev_read_bytes));
	put(o, "read_amplification", jdbl_ok(jr->dev_ok && jr->rbytes, jr->read_amp));
	put(o, "dev_write_bytes", ju64_ok(jr->dev_ok, jr->dev_write_bytes));
	put(o, "dev_write_ios", ju64_ok(jr->dev_ok, jr->dev_write_ios));
	put_writes(o, jr);
	put(o, "cpu_probe_per_s", jdbl_ok(jr->probe_ok, jr->probe_per_s));
	put(o, "pool", pool_object(jr));
	put_concurrency(o, jr);
	put(o, "events", events_object(jr, plan));
	put(o, "writeback", writeback_object(jr));
	put(o, "time", time_object(jr));
	explain_json(o, jr);
	return o;
}

/* fio's job object with faultline's own beside it. */
static json_t *job_object(const struct run_result *r, unsigned idx, unsigned flags)
{
	json_t *o = json_fio_job(r, idx, flags & JSON_OUT_PLUS);

	if (!o) {
		build_failures++;
		return NULL;
	}
	put(o, "faultline", faultline_job_object(&r->jobs[idx], r->events));
	return o;
}

/* ------------------------------------------------------------------ */
/* disk_util */

/*
 * fio reports each device once for the whole run; faultline measures a
 * device over each job's window. Jobs of one stonewall group run at the
 * same time, so their windows overlap: take the largest figure within a
 * group and add the groups up. Approximate when concurrent jobs start
 * and end at different times.
 */
static json_t *disk_util(const struct run_result *r)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < r->njobs; i++) {
		const struct job_result *jr = &r->jobs[i];

		for (unsigned d = 0; d < jr->ndevs && d < RESULT_MAX_DEVS; d++) {
			const char *name = jr->devs[d].name;
			uint64_t bytes = 0, ios = 0, wbytes = 0, wios = 0;
			bool seen = false, ok = true;
			json_t *o;

			/* First time this name appears? */
			for (unsigned pi = 0; pi <= i && !seen; pi++) {
				unsigned lim = pi == i ? d : r->jobs[pi].ndevs;

				for (unsigned pd = 0; pd < lim && pd < RESULT_MAX_DEVS; pd++)
					if (!strcmp(r->jobs[pi].devs[pd].name, name))
						seen = true;
			}
			if (seen)
				continue;

			/* Groups are runs of consecutive jobs: one pass from
			 * the first job naming the device, the group's maxima
			 * added up as each group closes. */
			{
				uint64_t gb = 0, gi = 0, gwb = 0, gwi = 0;

				for (unsigned k = i; k <= r->njobs; k++) {
					const struct job_result *kr = k < r->njobs ? &r->jobs[k] : NULL;

					if (!kr || (k > i && kr->job.stonewall)) {
						bytes += gb;
						ios += gi;
						wbytes += gwb;
						wios += gwi;
						gb = gi = gwb = gwi = 0;
					}
					if (!kr)
						break;
					for (unsigned kd = 0; kd < kr->ndevs && kd < RESULT_MAX_DEVS; kd++) {
						const struct dev_result *dv = &kr->devs[kd];

						if (strcmp(dv->name, name))
							continue;
						if (!dv->ok)
							ok = false;
						if (dv->read_bytes > gb)
							gb = dv->read_bytes;
						if (dv->read_ios > gi)
							gi = dv->read_ios;
						if (dv->write_bytes > gwb)
							gwb = dv->write_bytes;
						if (dv->write_ios > gwi)
							gwi = dv->write_ios;
					}
				}
			}
			o = json_object();
			put(o, "name", json_string(name));
			put(o, "read_ios", ju64_ok(ok, ios));
			put(o, "read_sectors", ju64_ok(ok, bytes / 512));
			put(o, "write_ios", ju64_ok(ok, wios));
			put(o, "write_sectors", ju64_ok(ok, wbytes / 512));
			push(a, o);
		}
	}
	return a;
}

/* ------------------------------------------------------------------ */
/* top level */

static json_t *host_object(const struct host_result *h)
{
	json_t *o = json_object();

	/* No _ok flags here: an empty name or a zero count cannot be a real
	 * host's, so it means "could not be read". */
	put(o, "hostname", jstr_or_null(h->hostname));
	put(o, "kernel", jstr_or_null(h->kernel));
	put(o, "cpus", h->ncpus ? json_integer(h->ncpus) : json_null());
	put(o, "numa_nodes", h->numa_nodes ? json_integer(h->numa_nodes) : json_null());
	put(o, "mem_total", h->mem_total ? ju64(h->mem_total) : json_null());
	return o;
}

static json_t *system_object(const struct sys_result *s)
{
	json_t *o = json_object();

	put(o, "tlb_shootdowns", ju64_ok(s->tlb_ok, s->tlb_total));
	put(o, "tlb_peak_per_s", jdbl_ok(s->tlb_ok, s->tlb_peak_per_s));
	put(o, "kswapd_cpu_s", jdbl_ok(s->kswapd_ok, s->kswapd_cpu_s));
	put(o, "pgscan_kswapd", ju64_ok(s->vm_ok, s->pgscan_kswapd));
	put(o, "pgscan_direct", ju64_ok(s->vm_ok, s->pgscan_direct));
	put(o, "pgsteal_kswapd", ju64_ok(s->vm_ok, s->pgsteal_kswapd));
	put(o, "pgsteal_direct", ju64_ok(s->vm_ok, s->pgsteal_direct));
	put(o, "pgmajfault", ju64_ok(s->vm_ok, s->pgmajfault));
	put(o, "pgscan_all", ju64_ok(s->pgscan_all_ok, s->pgscan_all));
	put(o, "pgsteal_all", ju64_ok(s->pgscan_all_ok, s->pgsteal_all));
	put(o, "page_cache_start", ju64_ok(s->cache_ok, s->cache_start));
	put(o, "page_cache_end", ju64_ok(s->cache_ok, s->cache_end));
	return o;
}

/* What sampling cost the sampler itself; null times, with
 * why, when no interval boundary was sampled. */
static json_t *sampler_object(const struct sampler_result *c)
{
	json_t *o = json_object();
	bool ok = c->samples > 0;

	put(o, "samples", ju64(c->samples));
	put(o, "time_median_ms", jdbl_ok(ok, c->p50_ms));
	put(o, "time_p99_ms", jdbl_ok(ok, c->p99_ms));
	put(o, "time_max_ms", jdbl_ok(ok, c->max_ms));
	put(o, "time_mean_ms", jdbl_ok(ok, c->mean_ms));
	put(o, "read_skew_max_ms", jdbl_ok(ok, c->skew_max_ms));
	put(o, "cpu_median_ms", jdbl_ok(ok, c->cpu_p50_ms));
	put(o, "cpu_max_ms", jdbl_ok(ok, c->cpu_max_ms));
	put(o, "samples_preempted", ju64(c->preempted));
	put(o, "samples_blocked", ju64(c->blocked));
	put(o, "thread_policy", json_string(c->policy[0] ? c->policy : "unknown"));
	put(o, "over_quarter_interval", ju64(c->over_quarter));
	put(o, "reads_retaken", ju64(c->retaken));
	put(o, "delay_queries", ju64(c->delay_queries));
	put(o, "delay_query_ns", ju64(c->delay_query_ns));
	put(o, "job_counters_read_every", ju64(c->counters_every));
	put(o, "job_counter_reads", ju64(c->counter_reads));
	put(o, "job_counter_read_ns", ju64(c->counter_read_ns));
	if (!ok)
		put(o, "why", json_string("no interval boundary fell inside the run"));
	return o;
}

json_t *json_out_build(const struct run_result *r, unsigned flags)
{
	json_t *root = json_object(), *jobs, *fl;
	char buf[128];
	time_t t = (time_t)(r->start_epoch_ms / 1000);
	struct tm tm;

	if (!root)
		return NULL;
	build_failures = 0;

	/* fio's readers recognise its JSON by "fio version" (and "global
	 * options", "jobs"): it names faultline, so no one mistakes whose. */
	snprintf(buf, sizeof(buf), "faultline-%s", r->version ? r->version : "unknown");
	put(root, "fio version", json_string(buf));
	put(root, "faultline version", json_string(buf));
	put(root, "timestamp", ju64(r->start_epoch_ms / 1000));
	put(root, "timestamp_ms", ju64(r->start_epoch_ms));
	/* fio's "time": ctime(3) of the start, local time, no newline. */
	if (localtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Y", &tm))
		put(root, "time", json_string(buf));
	else
		put(root, "time", json_null());
	/* fio leaves "global options" out when nothing was set globally. */
	if (r->nglobals)
		put(root, "global options", json_fio_global_options(r));

	jobs = json_array();
	for (unsigned i = 0; i < r->njobs; i++)
		push(jobs, job_object(r, i, flags));
	put(root, "jobs", jobs);
	put(root, "disk_util", disk_util(r));

	fl = json_object();
	put(fl, "version", jstr_or_null(r->version));
	put(fl, "host", host_object(&r->host));
	put(fl, "system", system_object(&r->sys));
	put(fl, "interrupted", json_boolean(r->interrupted));
	put(fl, "duration_ms", ju64(ns_to_ms(r->duration_ns)));
	put(fl, "interval_ms", ju64(ns_to_ms(r->interval_ns)));
	put(fl, "sampler", sampler_object(&r->sampler));
	put(root, "faultline", fl);

	if (build_failures) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* ------------------------------------------------------------------ */
/* writing */

char *json_out_text(const struct run_result *r, unsigned flags, bool compact)
{
	json_t *doc = json_out_build(r, flags);
	char *s;

	if (!doc)
		return NULL;
	s = json_dumps(doc, compact ? JSON_COMPACT : JSON_FLAGS);
	json_decref(doc);
	return s;
}

static int dump_text(FILE *f, char *s, struct err *e)
{
	int ret = 0;

	if (!s)
		return err_set(e, ENOMEM, "JSON output: out of memory");
	if (fputs(s, f) == EOF || fputc('\n', f) == EOF || fflush(f) == EOF)
		ret = err_set(e, errno ? errno : EIO, "JSON output: write: %s",
			      strerror(errno ? errno : EIO));
	free(s);
	return ret;
}

static int write_text(char *s, const char *path, struct err *e)
{
	struct outfile o;
	int ret;

	if (!s)
		return err_set(e, ENOMEM, "JSON output %s: out of memory", path);
	ret = outfile_open(&o, path, e);
	if (ret) {
		free(s);
		return err_wrap(e, "JSON output");
	}
	fputs(s, o.f);
	fputc('\n', o.f);
	free(s);
	ret = outfile_commit(&o, e);
	return ret ? err_wrap(e, "JSON output") : 0;
}

int json_out_dump(FILE *f, const struct run_result *r, unsigned flags, struct err *e)
{
	return dump_text(f, json_out_text(r, flags, false), e);
}

int json_out_write_file(const struct run_result *r, const char *path, unsigned flags,
			struct err *e)
{
	return write_text(json_out_text(r, flags, false), path, e);
}

int json_out_dump_doc(FILE *f, const json_t *doc, struct err *e)
{
	return dump_text(f, doc ? json_dumps(doc, JSON_FLAGS) : NULL, e);
}

int json_out_write_doc(const json_t *doc, const char *path, struct err *e)
{
	return write_text(doc ? json_dumps(doc, JSON_FLAGS) : NULL, path, e);
}
