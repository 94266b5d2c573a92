/*
 * report.c - the human summary; see report.h.
 *
 *   psync-rand: (engine=psync, rw=randread, bs=4096, threads=1, iodepth=1, touch=copy, advice=normal/normal)
 *     target /data/f: 1.00GiB at 0, on vda1 on vda
 *     read: IOPS=123k, BW=480MiB/s (503MB/s)(4.69GiB/10.0s), ops=1228800
 *       lat (usec): min=1.2, p50=3.1, p90=4.0, p99=9.8, p99.9=20.1, max=812.0, mean=3.3
 *       faults: major=0, minor=12
 *       device vda: read 512MiB in 131072 requests; read amplification 1.07x
 *     error: ... (only if the job failed)
 *
 * A job that writes shows its read line only when it reads
 * (rw, randrw), then
 *     write: IOPS=..., BW=..., ops=...
 *       lat (usec): ...
 *     sync: 312 flushes (fsync), lat (usec): min=..., p50=..., p99=..., max=...
 *     verify: 1895 blocks read back (crc32c), 0 mismatches   (verify=crc64: "(crc64)")
 * and its device lines say what was written too.
 *
 * then the system-wide block and, with several jobs, a comparison table.
 * A figure whose source could not be read prints as "n/a (unreadable)"
 * (in the table "n/a"), never as 0: a zero would be a made-up
 * measurement.
 */
#include "out/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "engines/engine.h"
#include "job/optval.h"
#include "out/explain_out.h"
#include "workload/checksum.h"
#include "workload/verify.h"

static const char *const rw_names[] = { "read", "randread", "write", "randwrite", "rw", "randrw",
					"trim", "randtrim", "trimwrite", "randtrimwrite" };
static const char *const touch_names[] = { "copy", "page", "stride", "all" };
static const char *const madv_names[] = { "normal", "random", "sequential", "willneed", "hugepage" };
static const char *const fadv_names[] = { "normal", "random", "sequential" };

#define NAME_OF(tab, v) ((unsigned)(v) < sizeof(tab) / sizeof(tab[0]) ? tab[(v)] : "?")
#define UNREADABLE "n/a (unreadable)"

/* Room for any number this file formats, with its unit. */
#define NUMBUF 32

/* Counts as fio writes IOPS: 3628, 12.3k, 123k, 1228k, 12.3M. */
static const char *fmt_count(char *buf, double v)
{
	if (v < 10000)
		snprintf(buf, NUMBUF, "%.0f", v);
	else if (v < 100000)
		snprintf(buf, NUMBUF, "%.1fk", v / 1e3);
	else if (v < 1e7)
		snprintf(buf, NUMBUF, "%.0fk", v / 1e3);
	else if (v < 1e8)
		snprintf(buf, NUMBUF, "%.1fM", v / 1e6);
	else
		snprintf(buf, NUMBUF, "%.0fM", v / 1e6);
	return buf;
}

/* Bytes with three significant figures: 512B, 4.00KiB, 480MiB, 4.69GiB
 * (binary), or with @base 1000: 503MB. */
static const char *fmt_bytes(char *buf, double v, unsigned base)
{
	static const char *const bin[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	static const char *const dec[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	const char *const *u = base == 1000 ? dec : bin;
	unsigned i = 0;

	while (v >= base && i < 5) {
		v /= base;
		i++;
	}
	if (i == 0)
		snprintf(buf, NUMBUF, "%.0f%s", v, u[i]);
	else if (v >= 100)
		snprintf(buf, NUMBUF, "%.0f%s", v, u[i]);
	else if (v >= 10)
		snprintf(buf, NUMBUF, "%.1f%s", v, u[i]);
	else
		snprintf(buf, NUMBUF, "%.2f%s", v, u[i]);
	return buf;
}

static const char *fmt_duration(char *buf, uint64_t ns)
{
	double s = (double)ns / 1e9;

	if (ns < 1000000)
		snprintf(buf, NUMBUF, "%.0fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, NUMBUF, "%.1fms", (double)ns / 1e6);
	else if (s < 10)
		snprintf(buf, NUMBUF, "%.2fs", s);
	else
		snprintf(buf, NUMBUF, "%.1fs", s);
	return buf;
}

static const char *fmt_touch(char *buf, const struct out_job *j)
{
	if (j->touch == TOUCH_STRIDE)
		snprintf(buf, NUMBUF, "stride:%" PRIu64, j->touch_stride);
	else
		snprintf(buf, NUMBUF, "%s", NAME_OF(touch_names, j->touch));
	return buf;
}

/* "EIO", or the number when glibc has no name for it. */
static const char *errno_name(char *buf, int code)
{
	const char *n = strerrorname_np(code);

	if (n)
		return n;
	snprintf(buf, NUMBUF, "errno %d", code);
	return buf;
}

static double iops_of(const struct job_result *jr)
{
	return jr->runtime_ns ? (double)jr->rops * 1e9 / (double)jr->runtime_ns : 0.0;
}

static double bw_of(const struct job_result *jr)
{
	return jr->runtime_ns ? (double)jr->rbytes * 1e9 / (double)jr->runtime_ns : 0.0;
}

static bool has_lat(const struct job_result *jr)
{
	return jr->lat_ok && jr->lat.n > 0;
}

static bool has_amp(const struct job_result *jr)
{
	return jr->dev_ok && jr->rbytes > 0;
}

/* ------------------------------------------------------------------ */

static void print_header(FILE *f, const struct run_result *r)
{
	const struct host_result *h = &r->host;
	char b1[NUMBUF], b2[NUMBUF];

	if (r->interrupted)
		fprintf(f, "*** run interrupted (Ctrl-C or SIGTERM): figures cover the time until the stop ***\n");
	fprintf(f, "faultline");
	if (r->version)
		fprintf(f, " %s", r->version);
	if (h->hostname[0])
		fprintf(f, " on %s", h->hostname);
	if (h->kernel[0])
		fprintf(f, " (%s", h->kernel);
	else
		fprintf(f, " (kernel %s", UNREADABLE);
	if (h->ncpus)
		fprintf(f, ", %u CPUs", h->ncpus);
	if (h->numa_nodes)
		fprintf(f, ", %u NUMA node%s", h->numa_nodes, h->numa_nodes == 1 ? "" : "s");
	if (h->mem_total)
		fprintf(f, ", %s memory", fmt_bytes(b1, (double)h->mem_total, 1024));
	fprintf(f, "), run %s%s\n", fmt_duration(b2, r->duration_ns),
		r->interrupted ? " (interrupted)" : "");
	fputc('\n', f);
}

/* ", name=v" in the unit @div at @prec decimals, with more decimals for
 * a latency that would show as 0: every latency is at least 1 ns. */
static void put_lat(FILE *f, const char *sep, const char *name, double v, double div, int prec)
{
	while (v > 0 && prec < 6 && v / div < 0.5 * pow(10, -prec))
		prec++;
	fprintf(f, "%s%s=%.*f", sep, name, prec, v / div);
}

/* nsec only when nearly everything is under a microsecond, msec when the
 * median is 10 ms or more, else usec. */
static void print_lat_of(FILE *f, bool lat_ok, const struct hist *h)
{
	static const double pcts[] = { 50, 90, 99, 99.9 };
	static const char *const names[] = { "p50", "p90", "p99", "p99.9" };
	uint64_t p50;
	const char *unit;
	double div;
	int prec;

	if (!lat_ok) {
		fprintf(f, "    lat: off (latency=0)\n");
		return;
	}
	if (!h->n) {
		fprintf(f, "    lat: no request completed\n");
		return;
	}
	p50 = hist_percentile(h, 50);
	if (hist_percentile(h, 99) < 1000) {
		unit = "nsec", div = 1, prec = 0;
	} else if (p50 < 10000000) {
		unit = "usec", div = 1e3, prec = 1;
	} else {
		unit = "msec", div = 1e6, prec = 2;
	}
	fprintf(f, "    lat (%s): ", unit);
	put_lat(f, "", "min", (double)h->min, div, prec);
	for (unsigned i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		put_lat(f, ", ", names[i], (double)hist_percentile(h, pcts[i]), div, prec);
	put_lat(f, ", ", "max", (double)h->max, div, prec);
	put_lat(f, ", ", "mean", hist_mean(h), div, prec);
	fputc('\n', f);
}

static void print_lat(FILE *f, const struct job_result *jr)
{
	print_lat_of(f, jr->lat_ok, &jr->lat);
}

static void print_devices(FILE *f, const struct job_result *jr)
{
	char b1[NUMBUF], b2[NUMBUF], b3[NUMBUF];
	unsigned n = jr->ndevs < RESULT_MAX_DEVS ? jr->ndevs : RESULT_MAX_DEVS;

	if (n == 0) {
		if (jr->dev_ok)
			fprintf(f, "    device: none (no block device under the targets)\n");
		else
			fprintf(f, "    device: %s\n", UNREADABLE);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct dev_result *d = &jr->devs[i];

		fprintf(f, "    device %s", d->name);
		if (n > 1 && d->role[0])
			fprintf(f, " (%s)", d->role);
		if (!d->ok)
			fprintf(f, ": %s", UNREADABLE);
		else
			fprintf(f, ": read %s in %" PRIu64 " requests",
				fmt_bytes(b1, (double)d->read_bytes, 1024), d->read_ios);
		if (d->ok && jr->w && jr->job.writes)
			fprintf(f, ", wrote %s in %" PRIu64 " requests",
				fmt_bytes(b1, (double)d->write_bytes, 1024), d->write_ios);
		if (n == 1) {
			if (has_amp(jr))
				fprintf(f, "; read amplification %.2fx", jr->read_amp);
			else if (!jr->dev_ok)
				fprintf(f, "; read amplification %s", UNREADABLE);
		}
		fputc('\n', f);
	}
	if (n > 1) {
		if (has_amp(jr))
			fprintf(f, "    read amplification %.2fx (%s from the devices for %s requested)\n",
				jr->read_amp, fmt_bytes(b2, (double)jr->dev_read_bytes, 1024),
				fmt_bytes(b3, (double)jr->rbytes, 1024));
		else if (!jr->dev_ok)
			fprintf(f, "    read amplification %s\n", UNREADABLE);
	}
}

/* loop=, offload=, prefetch=: one line each when used. */
static void print_concurrency(FILE *f, const struct job_result *jr)
{
	static const char *const pf_names[] = { "none", "willneed", "populate", "touch", "readahead" };
	const struct out_job *j = &jr->job;
	char b1[NUMBUF], b2[NUMBUF];

	if (j->loop) {
		fprintf(f, "    loop: %u streams", jr->nstreams);
		if (jr->offload_helpers)
			fprintf(f, ", offloaded to %u helpers (%u permits)", jr->offload_helpers,
				j->offload_permits ? j->offload_permits : jr->offload_helpers);
		fputc('\n', f);
	}
	if (j->prefetch != PREFETCH_NONE)
		fprintf(f, "    prefetch=%s:%s: %" PRIu64 " requests, %s, %" PRIu64 " skipped\n",
			NAME_OF(pf_names, j->prefetch),
			fmt_bytes(b1, (double)j->prefetch_window, 1024), jr->prefetch_reqs,
			fmt_bytes(b2, (double)jr->prefetch_bytes, 1024), jr->prefetch_skipped);
	if (!j->loop && j->prefetch == PREFETCH_NONE)
		return;
	if (jr->sched_ok && jr->sleeps_ok)
		fprintf(f, "    reader: asleep %s (%" PRIu64 " times), on CPU %s\n",
			fmt_duration(b1, jr->reader_blocked_ns), jr->reader_sleeps,
			fmt_duration(b2, jr->reader_cpu_ns));
	if (jr->offload_helpers + jr->prefetch_helpers) {
		if (jr->helper_faults_ok)
			fprintf(f, "    helpers (%u): faults major=%" PRIu64 ", minor=%" PRIu64 "\n",
				jr->offload_helpers + jr->prefetch_helpers, jr->helper_majflt,
				jr->helper_minflt);
		else
			fprintf(f, "    helpers: faults %s\n", UNREADABLE);
	}
}

/* ioengine=bufpool, vmcache: the pool and how it served the job. */
static void print_pool(FILE *f, const struct job_result *jr)
{
	const struct out_job *j = &jr->job;
	const struct pool_counters *p = &jr->pool;
	const uint64_t acc = p->hits + p->misses;
	char b1[NUMBUF], b2[NUMBUF];
	double ipi;

	if (!jr->pool_ok)
		return;
	fprintf(f, "    pool: %s of %s pages (%" PRIu64 " %s): hits=%" PRIu64,
		fmt_bytes(b1, (double)j->pool_size, 1024), fmt_bytes(b2, (double)j->pool_page, 1024),
		j->pool_page ? j->pool_size / j->pool_page : 0,
		jr->pool_batches_ok ? "resident at most" : "frames", p->hits);
	if (acc)
		fprintf(f, " (%.2f%%)", (double)p->hits * 100.0 / (double)acc);
	fprintf(f, ", misses=%" PRIu64 ", evictions=%" PRIu64 ", pages read=%" PRIu64
		", written back=%" PRIu64 ", waited for another thread's read=%" PRIu64 "\n",
		p->misses, p->evictions, p->reads, p->writebacks, p->waits);
	if (jr->pool_batches_ok) {
		const uint64_t pages = result_pool_pages(jr);

		fprintf(f, "    vmcache: region %s (%" PRIu64 " pages at fixed addresses%s), page "
			"states %s (%.2f%% of it); evicted in %" PRIu64 " batches", fmt_bytes(b1,
			(double)(pages * j->pool_page), 1024), pages,
			result_vmcache_huge(jr) ? ", in huge pages: the pool holds it all" : "",
			fmt_bytes(b2, (double)(pages * sizeof(uint64_t)), 1024),
			j->pool_page ? 100.0 * sizeof(uint64_t) / (double)j->pool_page : 0,
			p->evict_batches);
		if (p->evict_batches)
			fprintf(f, " (%.1f pages each) with %" PRIu64 " madvise calls (%.1f per batch)",
				(double)p->evictions / (double)p->evict_batches, p->madvise_calls,
				(double)p->madvise_calls / (double)p->evict_batches);
		fputc('\n', f);
	}
	if (result_pool_ipi_per_evict(jr, &ipi))
		fprintf(f, "    eviction cost: %.3f TLB shootdown IPIs per evicted page (the job's "
			"tlb_ipi / evictions)\n", ipi);
}

/* The job's own kernel counters: what was counted, then what
 * was not and why, each reason once. */
static void print_events(FILE *f, const struct job_result *jr, const struct perfev_plan *p)
{
	static const int line[] = { PERFEV_TLB_IPI, PERFEV_TLB_LOCAL, PERFEV_TLB_REMOTE,
				    PERFEV_TLB_WRONG_CPU, PERFEV_DIRECT_RECLAIM,
				    PERFEV_MEMCG_RECLAIM, PERFEV_CSW, PERFEV_MIGRATIONS, PERFEV_FAULTS,
				    PERFEV_MAJFLT, PERFEV_DTLB_MISS, PERFEV_CYCLES };
	const struct perfev_values *ev = &jr->events;
	bool said[PERFEV_NR] = { false };
	char b1[NUMBUF];
	int n = 0;

	if (!p)
		return;
	for (unsigned i = 0; i < sizeof(line) / sizeof(line[0]); i++) {
		if (!ev->ok[line[i]])
			continue;
		fprintf(f, "%s%s=%" PRIu64, n++ ? ", " : "    kernel events: ", perfev_label(line[i]),
			ev->v[line[i]]);
	}
	if (n)
		fputc('\n', f);
	if (ev->ok[PERFEV_PGCACHE_ADD]) {
		double bytes = (double)ev->v[PERFEV_PGCACHE_ADD] * p->page_size;

		fprintf(f, "    page cache: %" PRIu64 " pages added (%s)", ev->v[PERFEV_PGCACHE_ADD],
			fmt_bytes(b1, bytes, 1024));
		if (jr->rbytes)
			fprintf(f, ", %.2fx the bytes requested", bytes / (double)jr->rbytes);
		fputc('\n', f);
	}
	for (int c = 0; c < PERFEV_NR; c++) {
		const char *why;

		if (ev->ok[c] || said[c])
			continue;
		why = !p->avail[c] ? p->why[c] : jr->events_why[0] ? jr->events_why : "not measured";
		fprintf(f, "    not counted: %s", perfev_label(c));
		for (int k = c + 1; k < PERFEV_NR; k++) {
			const char *wk = !p->avail[k] ? p->why[k] : jr->events_why[0] ? jr->events_why : "not measured";

			if (!ev->ok[k] && !said[k] && !strcmp(wk, why)) {
				fprintf(f, ", %s", perfev_label(k));
				said[k] = true;
			}
		}
		fprintf(f, " (%s)\n", why);
	}
}

/* A write job's mix and flush policy, inside its header's parentheses. */
static void print_policy(FILE *f, const struct out_job *j)
{
	char b[NUMBUF];

	if (j->mixed)
		fprintf(f, ", rwmixread=%u", j->rwmixread);
	if (j->fsync_every)
		fprintf(f, ", fsync=%u", j->fsync_every);
	if (j->fdatasync_every)
		fprintf(f, ", fdatasync=%u", j->fdatasync_every);
	if (j->sync_interval_ns)
		fprintf(f, ", sync_interval=%s", fmt_duration(b, j->sync_interval_ns));
	if (j->end_fsync)
		fprintf(f, ", end_fsync=1");
	if (j->sync != SYNC_NONE)
		fprintf(f, ", sync=%s", j->sync == SYNC_SYNC ? "sync (O_SYNC)" : "dsync (O_DSYNC)");
}

/* verify: what the read-back (or, in a job that only reads, the check of
 * every block read) found. */
static void print_verify(FILE *f, const struct job_result *jr)
{
	const struct write_result *w = jr->w;
	const struct out_job *j = &jr->job;

	if (!w->verify)
		return;
	fprintf(f, "  verify: %" PRIu64 " blocks %s (%s), %" PRIu64 " mismatches%s\n",
		w->verify_blocks, j->writes ? "read back" : "checked as read",
		checksum_name(j->verify), w->verify_bad,
		w->verify_complete ? "" : " (not complete: the job stopped first)");
	if (w->verify_bad)
		fprintf(f, "    first bad block: %s offset %" PRIu64 ": %s\n",
			w->verify_first_target < jr->ntargets && jr->targets
				? jr->targets[w->verify_first_target].path : "?",
			w->verify_first_off, verify_code_name(w->verify_first_code));
}

/* Writes, flushes and the read-back of a job that writes. */
static void print_writes(FILE *f, const struct job_result *jr)
{
	const struct write_result *w = jr->w;
	const struct out_job *j = &jr->job;
	const struct engine_ops *eng = engine_find(j->ioengine);
	double secs = (double)jr->runtime_ns / 1e9;
	double iops = jr->runtime_ns ? (double)w->ops / secs : 0, bw = jr->runtime_ns ? (double)w->bytes / secs : 0;
	char b1[NUMBUF], b2[NUMBUF], b3[NUMBUF], b4[NUMBUF], b5[NUMBUF];

	if (j->trims) {
		double ti = jr->runtime_ns ? (double)w->trims / secs : 0;
		double tb = jr->runtime_ns ? (double)w->trim_bytes / secs : 0;

		fprintf(f, "  trim: IOPS=%s, BW=%s/s (%s/s)(%s/%s), ops=%" PRIu64 "\n",
			fmt_count(b1, ti), fmt_bytes(b2, tb, 1024), fmt_bytes(b3, tb, 1000),
			fmt_bytes(b4, (double)w->trim_bytes, 1024), fmt_duration(b5, jr->runtime_ns),
			w->trims);
		print_lat_of(f, jr->lat_ok, &w->trim_lat);
	}
	if (j->writes_data) {
		fprintf(f, "  write: IOPS=%s, BW=%s/s (%s/s)(%s/%s), ops=%" PRIu64 "\n",
			fmt_count(b1, iops), fmt_bytes(b2, bw, 1024), fmt_bytes(b3, bw, 1000),
			fmt_bytes(b4, (double)w->bytes, 1024), fmt_duration(b5, jr->runtime_ns), w->ops);
		print_lat_of(f, jr->lat_ok, &w->lat);
	}
	if (j->flushes) {
		fprintf(f, "  sync: %" PRIu64 " flushes (%s)\n", w->syncs,
			eng && (eng->flags & ENGINE_F_MAPPED) ? "msync" :
			j->flush_datasync ? "fdatasync" : "fsync");
		print_lat_of(f, jr->lat_ok, &w->sync_lat);
	}
	print_verify(f, jr);
}

/*
 * Who wrote the job's data to the device:
 *   written: 251.7 MiB to the device for the job's files: own 53.7 MiB
 *     (its writes and flushes), kernel 198.0 MiB (79%: reclaim 198.0 MiB),
 *     dirty data 462 ms old on average when the kernel took it (max 1977 ms)
 */
static void print_writeback(FILE *f, const struct job_result *jr)
{
	const struct wb_result *wb = &jr->wb;
	const struct wbtrace_counts *c = &wb->c;
	static const char *const said[WBTRACE_NREASONS] = {
		[WBTRACE_BACKGROUND] = "dirty_background", [WBTRACE_VMSCAN] = "reclaim",
		[WBTRACE_PERIODIC] = "dirty_expire", [WBTRACE_SYNC] = "someone's sync",
		[WBTRACE_OTHER] = "other",
	};
	char b1[NUMBUF], b2[NUMBUF], b3[NUMBUF];
	const char *sep = ": ";

	switch (wb->state) {
	case WB_NONE:
		return;
	case WB_BY_CONSTRUCTION:
		fprintf(f, "  written by the kernel on its own: none by construction (%s)\n", wb->why);
		return;
	case WB_UNREAD:
		fprintf(f, "  written by the kernel on its own: n/a (%s)\n", wb->why);
		return;
	case WB_TRACED:
		break;
	}
	if (c->lost) {
		fprintf(f, "  written by the kernel on its own: n/a (the trace buffer lost %llu events)\n",
			(unsigned long long)c->lost);
		return;
	}
	fprintf(f, "  written: %s to the device for the job's files: own %s (its writes and flushes), "
		"kernel %s", fmt_bytes(b1, (double)(c->own_bytes + c->kernel_bytes), 1024),
		fmt_bytes(b2, (double)c->own_bytes, 1024), fmt_bytes(b3, (double)c->kernel_bytes, 1024));
	if (c->own_bytes + c->kernel_bytes)
		fprintf(f, " (%.0f%%", 100.0 * (double)c->kernel_bytes / (double)(c->own_bytes + c->kernel_bytes));
	for (int r = 0; c->own_bytes + c->kernel_bytes && r < WBTRACE_NREASONS; r++)
		if (c->reason_bytes[r]) {
			fprintf(f, "%s%s %s", sep, said[r], fmt_bytes(b1, (double)c->reason_bytes[r], 1024));
			sep = ", ";
		}
	fprintf(f, "%s\n", c->own_bytes + c->kernel_bytes ? ")" : "");
	if (c->aged_bytes)
		fprintf(f, "    dirty data %.0f ms old on average when the kernel took it (max %llu ms)\n",
			c->age_ms_bytes / (double)c->aged_bytes, (unsigned long long)c->age_max_ms);
	else if (c->kernel_bytes && wb->age_why[0])
		fprintf(f, "    age of the dirty data: n/a (%s)\n", wb->age_why);
}

/* fio's run control: a job that never ran, what ended one early, its
 * steady state (as fio's "steadystate  :" line), the depth found. */
static void print_runctl(FILE *f, const struct job_result *jr)
{
	static const char *const m[] = { "iops", "bw", "lat" };
	const struct runctl_result *rc = &jr->rc;
	const struct out_job *j = &jr->job;
	char b1[NUMBUF], b2[NUMBUF];

	if (!rc->ran)
		fprintf(f, "  not run: exit_what=all ended the run before this job's group\n");
	if (rc->stopped_by && rc->stopped_by_job[0])
		fprintf(f, "  stopped by %s: job '%s' ended\n", rc->stopped_by, rc->stopped_by_job);
	else if (rc->stopped_by)
		fprintf(f, "  stopped by %s\n", rc->stopped_by);
	if (rc->ss && !rc->ss_n) {
		fprintf(f, "  steadystate: attained=no, no sample taken (ss_ramp + ss_interval is longer than the job ran)\n");
	} else if (rc->ss) {
		uint64_t si = 0, sb = 0;

		for (unsigned i = 0; i < rc->ss_n; i++) {
			si += rc->ss_iops[i];
			sb += rc->ss_bw[i];
		}
		fprintf(f, "  steadystate: attained=%s, bw=%s/s, iops=%s over the last %u samples, %s%s=%.3f%s\n",
			rc->ss_attained ? "yes" : "no",
			fmt_bytes(b1, rc->ss_n ? (double)sb / rc->ss_n : 0.0, 1024),
			fmt_count(b2, rc->ss_n ? (double)si / rc->ss_n : 0.0), rc->ss_n,
			m[j->ss_metric], j->ss_slope ? " slope" : " mean dev", rc->ss_criterion,
			j->ss_pct ? "%" : "");
	}
	if (j->latency_target_ns && rc->lat_depth)
		fprintf(f, "  latency_target: depth=%u of iodepth=%u (target %.1f us for %g%% of requests, "
			"window %.0f ms)\n", rc->lat_depth, j->iodepth, (double)j->latency_target_ns / 1e3,
			j->latency_percentile, (double)j->latency_window_ns / 1e6);
}

/* delayacct=1: one line, the shares of the workers' measured time (the
 * three every thread has, then those that are not zero). */
static void print_time(FILE *f, const struct job_result *jr)
{
	unsigned nw = jr->time_threads ? jr->time_threads : 1;

	if (!jr->job.delayacct)
		return;
	if (!jr->time_ok) {
		fprintf(f, "    where the time went: unknown (%s)\n", jr->time_why);
		return;
	}
	fprintf(f, "    where the time went (%u thread%s x %.3g s", nw, nw == 1 ? "" : "s",
		(double)jr->time_window_ns / nw / 1e9);
	if (jr->time_every > 1)
		fprintf(f, ", read over one interval in %u", jr->time_every);
	fprintf(f, "):");
	for (unsigned k = 0; k < TIMESHARE_NPARTS; k++) {
		unsigned t = jr->time_tenths[k];

		if (k > TIMESHARE_BLKIO && t < 5)
			continue;
		fprintf(f, "%s %u %% %s", k ? "," : "", (t + 5) / 10, timeshare_words[k]);
	}
	fputc('\n', f);
}

static void print_job(FILE *f, const struct job_result *jr, const struct perfev_plan *plan)
{
	const struct out_job *j = &jr->job;
	char b1[NUMBUF], b2[NUMBUF], b3[NUMBUF], b4[NUMBUF], b5[NUMBUF];

	fprintf(f, "%s: (engine=%s, rw=%s, bs=%" PRIu64 ", threads=%u, iodepth=%u, touch=%s, advice=%s/%s%s",
		j->name, j->ioengine, NAME_OF(rw_names, j->rw), j->bs, jr->nthreads, j->iodepth,
		fmt_touch(b1, j), NAME_OF(madv_names, j->madvise), NAME_OF(fadv_names, j->fadvise),
		j->direct ? ", direct=1" : "");
	if (j->writes)
		print_policy(f, j);
	fprintf(f, ")\n");
	/* A replay's requests are the log's: rw= and bs= did not make them. */
	if (j->read_iolog) {
		fprintf(f, "  replay of %s%s%s: each logged %s once, ", j->read_iolog,
			j->replay_redirect ? " onto " : "", j->replay_redirect ? j->replay_redirect : "",
			j->writes ? "read, write and sync" : "read");
		if (j->replay_no_stall)
			fprintf(f, "as fast as possible");
		else if (j->replay_time_scale && j->replay_time_scale != 100)
			fprintf(f, "at %u %% of the log's rate", j->replay_time_scale);
		else
			fprintf(f, "at the log's times");
		fprintf(f, " (rw= and bs= not used)\n");
	}
	if (j->write_iolog)
		fprintf(f, "  every request recorded in %s%s (fio iolog v3)\n", j->write_iolog,
			j->numjobs > 1 ? ".N" : "");
	print_runctl(f, jr);

	for (unsigned i = 0; i < jr->ntargets && jr->targets; i++) {
		const struct target_result *t = &jr->targets[i];

		fprintf(f, "  target %s: %s at %" PRIu64, t->path,
			fmt_bytes(b1, (double)t->len, 1024), t->base);
		if (t->device[0])
			fprintf(f, ", on %s", t->device);
		if (t->sparse)
			fprintf(f, " (SPARSE: holes read without I/O, results not representative)");
		fputc('\n', f);
	}

	if (j->reads) {
		fprintf(f, "  read: IOPS=%s, BW=%s/s (%s/s)(%s/%s), ops=%" PRIu64 "\n",
			fmt_count(b1, iops_of(jr)), fmt_bytes(b2, bw_of(jr), 1024),
			fmt_bytes(b3, bw_of(jr), 1000), fmt_bytes(b4, (double)jr->rbytes, 1024),
			fmt_duration(b5, jr->runtime_ns), jr->rops);
		print_lat(f, jr);
	}
	if (jr->w && j->writes)
		print_writes(f, jr);
	else if (jr->w)
		print_verify(f, jr);
	/* A paced job's latency is from the schedule (run/pace.h). */
	if (j->paced && jr->lat_ok)
		fprintf(f, "    lat is from each request's due time (rate): a late start counts "
			"(coordinated omission)\n");
	print_writeback(f, jr);
	if (jr->faults_ok)
		fprintf(f, "    faults: major=%" PRIu64 ", minor=%" PRIu64 "\n", jr->majflt, jr->minflt);
	else
		fprintf(f, "    faults: %s\n", UNREADABLE);
	print_time(f, jr);
	print_concurrency(f, jr);
	print_pool(f, jr);
	print_devices(f, jr);
	print_events(f, jr, plan);
	if (j->reads)
		explain_report(f, jr);
	if (jr->probe_ok)
		fprintf(f, "    cpu probe: %s work units/s\n", fmt_count(b1, jr->probe_per_s));
	if (j->continue_on_error != COE_NONE)
		fprintf(f, "  errors gone on after (continue_on_error): %" PRIu64 "%s%s%s%s\n",
			jr->io_errors, jr->io_errors ? "; the first: " : "",
			jr->io_errors ? strerror(jr->first_error) : "", jr->io_errors ? " at " : "",
			jr->io_errors ? jr->first_error_at : "");
	/* error_dump (fio's default): each error gone on after, as kept */
	for (unsigned i = 0; i < jr->ndumped; i++)
		fprintf(f, "    error gone on after: %s\n", jr->dumped[i]);
	if (jr->ndumped && jr->ndumped < jr->io_errors)
		fprintf(f, "    (%" PRIu64 " more not kept: %u a thread)\n",
			jr->io_errors - jr->ndumped, STATS_ERR_KEEP);
	if (jr->error || jr->errmsg[0])
		fprintf(f, "  error: %s (%s)\n",
			jr->errmsg[0] ? jr->errmsg : strerror(jr->error),
			jr->error ? errno_name(b1, jr->error) : "no errno");
	fputc('\n', f);
}

static void print_system(FILE *f, const struct sys_result *s)
{
	char b1[NUMBUF], b2[NUMBUF];

	fprintf(f, "system:\n");
	if (s->tlb_ok)
		fprintf(f, "  TLB shootdowns: %" PRIu64 " total, peak %s/s\n", s->tlb_total,
			fmt_count(b1, s->tlb_peak_per_s));
	else
		fprintf(f, "  TLB shootdowns: n/a (unreadable; see --check-system)\n");
	if (s->kswapd_ok)
		fprintf(f, "  kswapd CPU: %.2f s\n", s->kswapd_cpu_s);
	else
		fprintf(f, "  kswapd CPU: %s\n", UNREADABLE);
	if (s->vm_ok)
		fprintf(f, "  pages scanned: kswapd=%" PRIu64 ", direct=%" PRIu64
			"; stolen: kswapd=%" PRIu64 ", direct=%" PRIu64
			"; major faults (all processes)=%" PRIu64 "\n",
			s->pgscan_kswapd, s->pgscan_direct, s->pgsteal_kswapd, s->pgsteal_direct,
			s->pgmajfault);
	else
		fprintf(f, "  pages scanned/stolen: %s\n", UNREADABLE);
	if (s->pgscan_all_ok)
		fprintf(f, "  all reclaim (cgroup reclaim included): scanned=%" PRIu64 ", stolen=%" PRIu64 "\n",
			s->pgscan_all, s->pgsteal_all);
	if (s->cache_ok)
		fprintf(f, "  page cache: %s -> %s\n", fmt_bytes(b1, (double)s->cache_start, 1024),
			fmt_bytes(b2, (double)s->cache_end, 1024));
	else
		fprintf(f, "  page cache: %s\n", UNREADABLE);
}

/* The instrument's own cost: a sample's time against the
 * interval, so a user sees when the sampler is the bottleneck. */
static void print_sampler(FILE *f, const struct sampler_result *c, uint64_t interval_ns)
{
	if (!c->samples) {
		fprintf(f, "  sampler: no interval boundary fell inside the run\n");
		return;
	}
	fprintf(f, "  sampler: %" PRIu64 " samples, %.2f ms each (median; p99 %.2f, longest %.2f) of a %.0f ms interval; "
		"its thread's CPU %.2f ms (median; longest %.2f), preempted in %" PRIu64 " samples, waiting in %" PRIu64 "; "
		"counters read within %.2f ms of each boundary%s\n",
		c->samples, c->p50_ms, c->p99_ms, c->max_ms, (double)interval_ns / 1e6, c->cpu_p50_ms, c->cpu_max_ms,
		c->preempted, c->blocked, c->skew_max_ms,
		c->over_quarter ? "; OVER a quarter of the interval: the sampler is a bottleneck" : "");
}

/* One line per job; "n/a" for an unreadable source, "off" for latency=0. */
static void print_table(FILE *f, const struct run_result *r)
{
	int w = 3;	/* strlen("job") */
	char b1[NUMBUF], b3[NUMBUF];

	for (unsigned i = 0; i < r->njobs; i++) {
		int l = (int)strlen(r->jobs[i].job.name);

		if (l > w)
			w = l;
	}
	fprintf(f, "\ncomparison:\n");
	fprintf(f, "%-*s  %-8s  %-9s  %5s  %7s  %7s  %7s  %8s  %7s  %8s  %9s  %9s  %9s  %8s  %8s  %s\n",
		w, "job", "engine", "rw", "bs", "threads", "iodepth", "IOPS", "MiB/s", "wIOPS",
		"wMiB/s", "p50(usec)", "p99(usec)", "wp99(usec)", "majflt", "read-amp", "error");
	for (unsigned i = 0; i < r->njobs; i++) {
		const struct job_result *jr = &r->jobs[i];
		const struct out_job *j = &jr->job;
		char p50[NUMBUF], p99[NUMBUF], maj[NUMBUF], amp[NUMBUF];
		char riops[NUMBUF], rmib[NUMBUF], wiops[NUMBUF], wmib[NUMBUF], wp99[NUMBUF];

		if (has_lat(jr)) {
			snprintf(p50, sizeof(p50), "%.1f", (double)hist_percentile(&jr->lat, 50) / 1e3);
			snprintf(p99, sizeof(p99), "%.1f", (double)hist_percentile(&jr->lat, 99) / 1e3);
		} else {
			snprintf(p50, sizeof(p50), "%s", jr->lat_ok ? "-" : "off");
			snprintf(p99, sizeof(p99), "%s", jr->lat_ok ? "-" : "off");
		}
		if (jr->faults_ok)
			snprintf(maj, sizeof(maj), "%" PRIu64, jr->majflt);
		else
			snprintf(maj, sizeof(maj), "n/a");
		if (has_amp(jr))
			snprintf(amp, sizeof(amp), "%.2fx", jr->read_amp);
		else
			snprintf(amp, sizeof(amp), jr->dev_ok ? "-" : "n/a");

		/* A direction the job never issues is "-", not a measured 0. */
		if (j->reads) {
			fmt_count(riops, iops_of(jr));
			snprintf(rmib, sizeof(rmib), "%.1f", bw_of(jr) / 1048576.0);
		} else {
			snprintf(riops, sizeof(riops), "-");
			snprintf(rmib, sizeof(rmib), "-");
		}
		snprintf(wiops, sizeof(wiops), "-");
		snprintf(wmib, sizeof(wmib), "-");
		snprintf(wp99, sizeof(wp99), "-");
		if (jr->w && j->writes && jr->runtime_ns) {
			double secs = (double)jr->runtime_ns / 1e9;

			fmt_count(wiops, (double)jr->w->ops / secs);
			snprintf(wmib, sizeof(wmib), "%.1f", (double)jr->w->bytes / secs / 1048576.0);
		}
		if (jr->w && j->writes && jr->lat_ok && jr->w->lat.n)
			snprintf(wp99, sizeof(wp99), "%.1f", (double)hist_percentile(&jr->w->lat, 99) / 1e3);
		else if (jr->w && j->writes && !jr->lat_ok)
			snprintf(wp99, sizeof(wp99), "off");

		optval_fmt_size(b1, NUMBUF, j->bs);
		fprintf(f, "%-*s  %-8s  %-9s  %5s  %7u  %7u  %7s  %8s  %7s  %8s  %9s  %9s  %9s  %8s  %8s  %s\n",
			w, j->name, j->ioengine, NAME_OF(rw_names, j->rw), b1,
			jr->nthreads, j->iodepth, riops, rmib, wiops, wmib,
			p50, p99, wp99, maj, amp, jr->error ? errno_name(b3, jr->error) : "-");
	}
}

int report_normal(FILE *f, const struct run_result *r)
{
	print_header(f, r);
	for (unsigned i = 0; i < r->njobs; i++)
		print_job(f, &r->jobs[i], r->events);
	print_system(f, &r->sys);
	print_sampler(f, &r->sampler, r->interval_ns);
	if (r->njobs > 1)
		print_table(f, r);
	if (fflush(f) == EOF || ferror(f))
		return -EIO;
	return 0;
}

int report_jobs(FILE *f, const struct run_result *r)
{
	for (unsigned i = 0; i < r->njobs; i++)
		print_job(f, &r->jobs[i], r->events);
	if (r->njobs > 1)
		print_table(f, r);
	if (fflush(f) == EOF || ferror(f))
		return -EIO;
	return 0;
}

void report_failures(FILE *f, const struct run_result *r, const char *who)
{
	for (unsigned i = 0; i < r->njobs; i++) {
		const struct job_result *jr = &r->jobs[i];

		if (!jr->error)
			continue;
		if (jr->stuck)
			fprintf(f, "faultline: %sjob '%s' given up%s: %s\n", who, jr->job.name,
				jr->stuck_killed ? " (its worker processes killed)" :
				" (its threads left to end with faultline)", jr->errmsg);
		else
			fprintf(f, "faultline: %sjob '%s' failed: %s\n", who, jr->job.name, jr->errmsg);
	}
}
