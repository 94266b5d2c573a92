/*
 * judge.c - winners, ratios and evidence sentences of the verdict
 * (SPEC 16), from the runs' JSON documents. Every sentence is built from
 * numbers read out of the documents, and only when a number passes its
 * threshold (judge.h; faultline(1), THE VERDICT lists them). A figure is
 * taken from the job's own counters (jobs[].faultline.events) when the
 * document has them, else from the run's system-wide telemetry, and the
 * sentence says which; a missing source leaves its sentence out.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/judge.h"

#define MIB (1024.0 * 1024.0)

static const char *const wl_names[JW_NR] = {
	[JW_UNIFORM] = "uniform random 4k reads",
	[JW_ZIPF] = "zipf random 4k reads",
	[JW_SCAN] = "scan",
	[JW_WRITE] = "write mix (fsync every 32 writes)",
	[JW_HAZARD] = "async hazard (one event loop, 8 streams)",
};
static const char *const wl_keys[JW_NR] = {
	[JW_UNIFORM] = "uniform", [JW_ZIPF] = "zipf", [JW_SCAN] = "scan",
	[JW_WRITE] = "write", [JW_HAZARD] = "hazard",
};
static const char *const eng_names[JE_NR] = {
	[JE_MMAP_NORMAL] = "mmap (madvise=normal)",
	[JE_MMAP_RANDOM] = "mmap (madvise=random)",
	[JE_BUFPOOL] = "the buffer pool (bufpool)",
	[JE_URING_DIRECT] = "io_uring O_DIRECT (no cache)",
	[JE_MMAP_MSYNC] = "mmap + msync",
	[JE_PWRITE] = "pwrite + fdatasync",
	[JE_MMAP_LOOP] = "an event loop over mmap",
	[JE_URING_LOOP] = "an event loop over io_uring",
};
static const char *const eng_keys[JE_NR] = {
	[JE_MMAP_NORMAL] = "mmap-normal", [JE_MMAP_RANDOM] = "mmap-random",
	[JE_BUFPOOL] = "bufpool", [JE_URING_DIRECT] = "io_uring-direct",
	[JE_MMAP_MSYNC] = "mmap-msync", [JE_PWRITE] = "pwrite-fdatasync",
	[JE_MMAP_LOOP] = "mmap-loop", [JE_URING_LOOP] = "io_uring-loop",
};

const char *judge_workload_name(enum judge_workload w) { return w < JW_NR ? wl_names[w] : "?"; }
const char *judge_workload_key(enum judge_workload w) { return w < JW_NR ? wl_keys[w] : "?"; }
const char *judge_engine_name(enum judge_engine e) { return e < JE_NR ? eng_names[e] : "?"; }
const char *judge_engine_key(enum judge_engine e) { return e < JE_NR ? eng_keys[e] : "?"; }

const char *judge_unit(enum judge_workload w)
{
	return w == JW_SCAN || w == JW_HAZARD ? "MiB/s" : "IOPS";
}

bool judge_engine_in(enum judge_workload w, enum judge_engine e)
{
	switch (w) {
	case JW_UNIFORM:
	case JW_ZIPF:
	case JW_SCAN:
		return e <= JE_URING_DIRECT;
	case JW_WRITE:
		return e == JE_MMAP_MSYNC || e == JE_BUFPOOL || e == JE_PWRITE;
	case JW_HAZARD:
		return e == JE_MMAP_LOOP || e == JE_URING_LOOP;
	default:
		return false;
	}
}

/* ------------------------------------------------------------------ */
/* Reading the documents */

/* "jobs.0.faultline.pool.hit_ratio": keys and array indexes by dots. */
static json_t *jpath(json_t *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		path += n + (path[n] == '.');
		if (json_is_array(o))
			o = json_array_get(o, strtoul(key, NULL, 10));
		else
			o = json_object_get(o, key);
	}
	return o;
}

/* A number at @path; false when absent or null (a source not read). */
static bool jnum(json_t *doc, const char *path, double *v)
{
	json_t *x = jpath(doc, path);

	if (!x || !json_is_number(x))
		return false;
	*v = json_number_value(x);
	return true;
}

static double run_seconds(json_t *doc)
{
	double ms;

	return jnum(doc, "faultline.duration_ms", &ms) && ms > 0 ? ms / 1000.0 : NAN;
}

static double job_seconds(json_t *doc)
{
	double ns;

	return jnum(doc, "jobs.0.faultline.runtime_ns", &ns) && ns > 0 ? ns / 1e9 : NAN;
}

bool judge_metric(enum judge_workload w, json_t *doc, double *v, char *why, size_t whylen)
{
	double err = 0, r = 0, wr = 0;
	json_t *msg;

	if (!doc || !jpath(doc, "jobs.0")) {
		snprintf(why, whylen, "no result (the run did not produce one)");
		return false;
	}
	if (jnum(doc, "jobs.0.error", &err) && err != 0) {
		msg = jpath(doc, "jobs.0.faultline.errmsg");
		snprintf(why, whylen, "the job failed: %s",
			 json_is_string(msg) ? json_string_value(msg) : "(no message)");
		return false;
	}
	if (w == JW_SCAN || w == JW_HAZARD) {
		if (!jnum(doc, "jobs.0.read.bw_bytes", &r))
			goto none;
		*v = r / MIB;
	} else {
		if (!jnum(doc, "jobs.0.read.iops", &r))
			goto none;
		if (w == JW_WRITE && jnum(doc, "jobs.0.write.iops", &wr))
			r += wr;
		*v = r;
	}
	if (*v <= 0) {
		snprintf(why, whylen, "the job did no I/O in its measured time");
		return false;
	}
	return true;
none:
	snprintf(why, whylen, "the result has no throughput");
	return false;
}

/* ------------------------------------------------------------------ */
/* Evidence: a number, where it came from */

struct ev {
	bool ok;
	double v;
	const char *src;	/* "the job's threads", "system-wide", ... */
	const char *key;	/* "job", "system", "device" */
};

/* TLB shootdowns per second: the IPIs the job's tasks sent (SPEC 15),
 * else every shootdown on the host during the run (/proc/interrupts). */
static struct ev ev_tlb(json_t *doc)
{
	struct ev e = { 0 };
	double n, s;

	if (jnum(doc, "jobs.0.faultline.events.tlb_ipi", &n) && !isnan(s = job_seconds(doc))) {
		e = (struct ev){ true, n / s, "sent by the job's threads", "job" };
	} else if (jnum(doc, "faultline.system.tlb_shootdowns", &n) && !isnan(s = run_seconds(doc))) {
		e = (struct ev){ true, n / s, "system-wide, every process on the host", "system" };
	}
	return e;
}

/* Reclaim the job's own threads did: direct and cgroup reclaim entries
 * of its tasks (SPEC 15), else pages scanned outside kswapd, host-wide
 * (pgscan_anon+file, cgroup reclaim included, less pgscan_kswapd). */
static struct ev ev_direct(json_t *doc, bool *pages)
{
	struct ev e = { 0 };
	double a, b, s;

	*pages = false;
	if (jnum(doc, "jobs.0.faultline.events.direct_reclaim", &a) &&
	    jnum(doc, "jobs.0.faultline.events.memcg_reclaim", &b) && !isnan(s = job_seconds(doc)))
		return (struct ev){ true, (a + b) / s, "entries into reclaim by the job's threads", "job" };
	s = run_seconds(doc);
	if (isnan(s))
		return e;
	*pages = true;
	if (jnum(doc, "faultline.system.pgscan_all", &a) && jnum(doc, "faultline.system.pgscan_kswapd", &b))
		return (struct ev){ true, (a > b ? a - b : 0) / s,
				    "pages scanned by direct and cgroup reclaim, system-wide", "system" };
	if (jnum(doc, "faultline.system.pgscan_direct", &a))
		return (struct ev){ true, a / s, "pages scanned by direct reclaim, system-wide", "system" };
	return e;
}

static struct ev ev_kswapd(json_t *doc)
{
	double c, s = run_seconds(doc);

	if (!jnum(doc, "faultline.system.kswapd_cpu_s", &c) || isnan(s))
		return (struct ev){ 0 };
	return (struct ev){ true, 100.0 * c / s, "kswapd CPU, system-wide", "system" };
}

/* Bytes brought in per byte asked for: the job's page-cache additions
 * (SPEC 15), else the device's reads while it ran (every process's). */
static struct ev ev_read_amp(json_t *doc)
{
	double a;

	if (jnum(doc, "jobs.0.faultline.events.pgcache_read_amplification", &a))
		return (struct ev){ true, a, "pages the job added to the page cache", "job" };
	if (jnum(doc, "jobs.0.faultline.read_amplification", &a))
		return (struct ev){ true, a, "device bytes read, every process's", "device" };
	return (struct ev){ 0 };
}

static struct ev ev_majflt_per_op(json_t *doc)
{
	double m, ops;

	if (jnum(doc, "jobs.0.faultline.events.major_faults", &m) && jnum(doc, "jobs.0.faultline.ops", &ops) && ops > 0)
		return (struct ev){ true, m / ops, "the job's threads", "job" };
	if (jnum(doc, "jobs.0.faultline.major_faults", &m) && jnum(doc, "jobs.0.faultline.ops", &ops) && ops > 0)
		return (struct ev){ true, m / ops, "the job's threads (/proc)", "job" };
	return (struct ev){ 0 };
}

/* ------------------------------------------------------------------ */
/* Sentences */

static void fmt_num(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 10000)
		snprintf(buf, len, "%.0fk", v / 1000);
	else if (v >= 100)
		snprintf(buf, len, "%.0f", v);
	else if (v >= 10)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.2f", v);
}

__attribute__((format(printf, 6, 7)))
static void say(struct judge_result *r, const char *key, double v, double thr, const char *src,
		const char *fmt, ...)
{
	struct judge_sentence *s;
	va_list ap;

	if (r->nsent >= JUDGE_MAX_SENT)
		return;
	s = &r->sent[r->nsent++];
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->value = v;
	s->threshold = thr;
	snprintf(s->source, sizeof(s->source), "%s", src);
	va_start(ap, fmt);
	vsnprintf(s->text, sizeof(s->text), fmt, ap);
	va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The middle per-round ratio, taken in logarithms so that a over b is
 * exactly the inverse of b over a also with an even count (2x and 0.5x
 * give 1x, not 1.25x). */
static double median_ratio(const double *r, unsigned n)
{
	double l[JUDGE_MAX_ROUNDS], m;

	for (unsigned i = 0; i < n; i++)
		l[i] = log(r[i]);
	qsort(l, n, sizeof(*l), cmp_double);
	m = n % 2 ? l[n / 2] : (l[n / 2 - 1] + l[n / 2]) / 2;
	return exp(m);
}

static double median(const double *v, unsigned n)
{
	double s[JUDGE_MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The document of @e's round closest to its median: the evidence shown
 * belongs to a typical run, not the best or the worst. */
static json_t *typical_doc(const struct judge_cell *cells, unsigned ncells, enum judge_workload w,
			   enum judge_engine e, const struct judge_engine_result *er)
{
	json_t *best = NULL;
	double bestd = INFINITY;

	for (unsigned i = 0; i < ncells; i++) {
		double d;

		if (cells[i].w != w || cells[i].e != e || cells[i].round >= JUDGE_MAX_ROUNDS)
			continue;
		if (isnan(er->v[cells[i].round]))
			continue;
		d = fabs(er->v[cells[i].round] - er->median);
		if (d < bestd) {
			bestd = d;
			best = cells[i].doc;
		}
	}
	return best;
}

static void mib(char *buf, size_t len, uint64_t b)
{
	snprintf(buf, len, "%.0f MiB", (double)b / MIB);
}

/* The ratio sentence between two engines of @w: "a is 2.1x faster than
 * b (1.9-2.3x over 3 rounds)". */
static void compare(struct judge_result *r, enum judge_engine a, enum judge_engine b,
		    const char *key, const char *extra)
{
	const struct judge_engine_result *ea = &r->e[a], *eb = &r->e[b];
	double lo = INFINITY, hi = 0, ratios[JUDGE_MAX_ROUNDS], ratio;
	unsigned n = 0;
	char spread[96] = "";

	if (!ea->ok || !eb->ok)
		return;
	for (unsigned k = 0; k < r->rounds && k < JUDGE_MAX_ROUNDS; k++) {
		if (isnan(ea->v[k]) || isnan(eb->v[k]))
			continue;
		ratios[n] = ea->v[k] / eb->v[k];
		lo = fmin(lo, ratios[n]);
		hi = fmax(hi, ratios[n]);
		n++;
	}
	if (!n)
		return;
	ratio = median_ratio(ratios, n);
	if (n > 1)
		snprintf(spread, sizeof(spread), " (%.2f-%.2fx over %u rounds)", lo, hi, n);
	if (ratio >= 1)
		say(r, key, ratio, NAN, "measured", "%s: %s is %.2fx faster than %s%s%s.",
		    judge_workload_name(r->w), judge_engine_name(a), ratio, judge_engine_name(b),
		    spread, extra);
	else
		say(r, key, ratio, NAN, "measured", "%s: %s is %.2fx slower than %s%s%s.",
		    judge_workload_name(r->w), judge_engine_name(a), 1 / ratio, judge_engine_name(b),
		    spread, extra);
}

/* What the kernel did while an mmap job ran. */
/* A system-wide figure on a shared host includes everyone's: the same
 * figure in a run of the workload that maps nothing (io_uring O_DIRECT,
 * or the buffer pool for the write mix) is the host's background. */
static void background(const struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
		       struct ev (*get)(json_t *), char *buf, size_t len)
{
	enum judge_engine base = r->w == JW_WRITE ? JE_BUFPOOL : JE_URING_DIRECT;
	json_t *doc;
	struct ev b;
	char n[32];

	buf[0] = '\0';
	if (!judge_engine_in(r->w, base) || !r->e[base].ok)
		return;
	doc = typical_doc(cells, ncells, r->w, base, &r->e[base]);
	if (!doc)
		return;
	b = get(doc);
	if (!b.ok || strcmp(b.key, "system"))
		return;
	fmt_num(n, sizeof(n), b.v);
	snprintf(buf, len, "; %s, which maps nothing, saw %s/s", judge_engine_name(base), n);
}

static struct ev ev_direct_any(json_t *doc)
{
	bool pages;

	return ev_direct(doc, &pages);
}

static void mmap_evidence(struct judge_result *r, enum judge_engine e, json_t *doc,
			  const struct judge_host *h, const struct judge_cell *cells, unsigned ncells)
{
	char bg[160];
	const char *name = judge_engine_name(e);
	struct ev tlb = ev_tlb(doc), ks = ev_kswapd(doc), amp = ev_read_amp(doc), mf = ev_majflt_per_op(doc);
	bool pages;
	struct ev dr = ev_direct(doc, &pages);
	char a[32], b[32];

	if (tlb.ok && tlb.v >= JUDGE_TLB_PER_S) {
		fmt_num(a, sizeof(a), tlb.v);
		if (!strcmp(tlb.key, "system"))
			background(r, cells, ncells, ev_tlb, bg, sizeof(bg));
		else
			bg[0] = '\0';
		say(r, "tlb_per_s", tlb.v, JUDGE_TLB_PER_S, tlb.key,
		    "%s: %s TLB shootdowns/s (%s%s): each page the kernel evicts from a shared "
		    "mapping interrupts the other CPUs.", name, a, tlb.src, bg);
	}
	if (dr.ok && dr.v >= (pages ? JUDGE_RECLAIM_PER_S : 1.0)) {
		fmt_num(a, sizeof(a), dr.v);
		if (pages)
			background(r, cells, ncells, ev_direct_any, bg, sizeof(bg));
		else
			bg[0] = '\0';
		say(r, "direct_reclaim_per_s", dr.v, pages ? JUDGE_RECLAIM_PER_S : 1.0, dr.key,
		    "%s: %s %s per second%s%s.", name, a, dr.src, bg,
		    h->cgroup ? "; under mem_limit that reclaim runs in the faulting threads themselves"
			      : "");
	}
	if (ks.ok && ks.v >= JUDGE_KSWAPD_PCT)
		say(r, "kswapd_cpu_pct", ks.v, JUDGE_KSWAPD_PCT, ks.key,
		    "%s: kswapd used %.0f%% of a CPU (%s).", name, ks.v, ks.src);
	if (amp.ok && amp.v >= JUDGE_READ_AMP) {
		fmt_num(a, sizeof(a), amp.v);
		if (e == JE_MMAP_NORMAL && h->read_ahead_kb >= 0 && h->dev[0]) {
			fmt_num(b, sizeof(b), (double)h->read_ahead_kb);
			say(r, "read_amp", amp.v, JUDGE_READ_AMP, amp.key,
			    "%s: read amplification %sx (%s): %s's read_ahead_kb is %s, so a fault "
			    "under MADV_NORMAL reads up to %d KiB around the page; madvise=random reads "
			    "only the page.", name, a, amp.src, h->dev, b, h->read_ahead_kb);
		} else {
			say(r, "read_amp", amp.v, JUDGE_READ_AMP, amp.key,
			    "%s: read amplification %sx (%s).", name, a, amp.src);
		}
	}
	if (mf.ok && mf.v >= JUDGE_MAJFLT_PER_OP && r->w != JW_SCAN)
		say(r, "majflt_per_op", mf.v, JUDGE_MAJFLT_PER_OP, mf.key,
		    "%s: %.2f major faults per request: the thread waits for the device inside "
		    "the page fault.", name, mf.v);
}

static void pool_evidence(struct judge_result *r, json_t *doc, const struct judge_host *h)
{
	double hit, ev, s = job_seconds(doc), ps;
	char m[32], f[32], a[32];

	if (!jnum(doc, "jobs.0.faultline.pool.hit_ratio", &hit))
		return;
	mib(m, sizeof(m), h->mem_budget);
	mib(f, sizeof(f), h->file_size);
	if (!jnum(doc, "jobs.0.faultline.pool.size", &ps))
		ps = (double)h->mem_budget;
	mib(m, sizeof(m), (uint64_t)ps);
	if (jnum(doc, "jobs.0.faultline.pool.evictions", &ev) && !isnan(s)) {
		fmt_num(a, sizeof(a), ev / s);
		say(r, "pool_hit_ratio", hit, NAN, "job",
		    "the buffer pool: hit ratio %.1f%% with %s of pool over %s of file, %s "
		    "evictions/s, none of them a TLB shootdown or a reclaim.", 100 * hit, m, f, a);
	} else {
		say(r, "pool_hit_ratio", hit, NAN, "job",
		    "the buffer pool: hit ratio %.1f%% with %s of pool over %s of file.", 100 * hit, m, f);
	}
}

static void flush_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells)
{
	double p99[JE_NR], lo = INFINITY, hi = 0;
	int ilo = -1, ihi = -1;

	for (int e = 0; e < JE_NR; e++) {
		json_t *doc, *pct;
		double n;

		p99[e] = NAN;
		if (!judge_engine_in(JW_WRITE, e) || !r->e[e].ok)
			continue;
		doc = typical_doc(cells, ncells, JW_WRITE, e, &r->e[e]);
		if (!doc || !jnum(doc, "jobs.0.sync.total_ios", &n) || n <= 0 ||
		    !json_is_number(pct = json_object_get(jpath(doc, "jobs.0.sync.lat_ns.percentile"),
							      "99.000000")))
			continue;
		p99[e] = json_number_value(pct);
		say(r, "flush_p99_ms", p99[e] / 1e6, NAN, "job",
		    "%s: %.0f flushes, p99 %.2f ms each.", judge_engine_name(e), n, p99[e] / 1e6);
		if (p99[e] < lo) {
			lo = p99[e];
			ilo = e;
		}
		if (p99[e] > hi) {
			hi = p99[e];
			ihi = e;
		}
	}
	if (ilo >= 0 && ihi >= 0 && ilo != ihi && lo > 0 && hi / lo >= JUDGE_FLUSH_RATIO)
		say(r, "flush_p99_ratio", hi / lo, JUDGE_FLUSH_RATIO, "job",
		    "a flush of %s takes %.1fx as long (p99) as one of %s.", judge_engine_name(ihi),
		    hi / lo, judge_engine_name(ilo));
}

/*
 * What the kernel wrote of the job's file on its own, before any flush
 * asked (jobs[].faultline.writeback, issue 28), once it is a share worth
 * a sentence. Through a mapping that is the paper's problem #1: a store
 * is not a decision, and the kernel may write a page the database has
 * not yet decided may reach the disk. With pwrite the database handed
 * the data over itself: the kernel only chose when.
 */
static void writeback_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells)
{
	for (int e = 0; e < JE_NR; e++) {
		static const char *const why[] = { "background", "vmscan", "periodic", "sync", "other" };
		static const char *const said[] = { "dirty_background", "reclaim", "dirty_expire",
						    "a sync", "other" };
		double share, k, own, v;
		char by[160] = "", a[32], b[32];
		size_t n = 0;
		json_t *doc;

		if (!judge_engine_in(JW_WRITE, e) || !r->e[e].ok)
			continue;
		doc = typical_doc(cells, ncells, JW_WRITE, e, &r->e[e]);
		if (!doc || !jnum(doc, "jobs.0.faultline.writeback.kernel_share", &share) ||
		    !jnum(doc, "jobs.0.faultline.writeback.kernel_bytes", &k) ||
		    !jnum(doc, "jobs.0.faultline.writeback.own_bytes", &own) || share < JUDGE_KERNEL_WRITE_SHARE)
			continue;
		for (unsigned i = 0; i < sizeof(why) / sizeof(why[0]); i++) {
			char path[96];

			snprintf(path, sizeof(path), "jobs.0.faultline.writeback.kernel_by_reason.%s", why[i]);
			if (jnum(doc, path, &v) && v > 0 && n < sizeof(by))
				n += (size_t)snprintf(by + n, sizeof(by) - n, "%s%s %.0f MiB", n ? ", " : "; ",
						      said[i], v / MIB);
		}
		mib(a, sizeof(a), (uint64_t)k);
		mib(b, sizeof(b), (uint64_t)(k + own));
		say(r, "kernel_write_share", share, JUDGE_KERNEL_WRITE_SHARE, "job",
		    "%s: the kernel wrote %.0f%% of what reached the device of the file on its own, "
		    "before any flush asked (%s of %s%s)%s", judge_engine_name(e), 100 * share, a, b, by,
		    e == JE_MMAP_MSYNC ? ": through a mapping a store is not a decision, and a page may "
					 "reach the disk before the database decided it may."
				       : ": the data was handed over by the write itself; the kernel "
					 "chose only when.");
	}
}

static void hazard_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells)
{
	for (int e = JE_MMAP_LOOP; e <= JE_URING_LOOP; e++) {
		json_t *doc;
		double blocked, s;

		if (!r->e[e].ok)
			continue;
		doc = typical_doc(cells, ncells, JW_HAZARD, e, &r->e[e]);
		if (!doc || !jnum(doc, "jobs.0.faultline.reader_blocked_ns", &blocked) ||
		    isnan(s = job_seconds(doc)))
			continue;
		blocked = 100 * blocked / 1e9 / s;
		say(r, "loop_blocked_pct", blocked, JUDGE_BLOCKED_PCT, "job",
		    "%s: the loop thread was asleep %.0f%% of the time%s.", judge_engine_name(e), blocked,
		    blocked >= JUDGE_BLOCKED_PCT ?
		    (e == JE_MMAP_LOOP ? ", inside page faults: every stream waited for each one"
				       : ", waiting for completions of all streams at once") : "");
	}
}

static void winner(struct judge_result *r)
{
	double best = -1, second = -1, lo = INFINITY, hi = 0, ratios[JUDGE_MAX_ROUNDS];
	unsigned n = 0;
	char vw[32], vr[32], spread[96] = "";

	r->winner = r->runner_up = -1;
	for (int e = 0; e < JE_NR; e++) {
		if (!r->e[e].ok)
			continue;
		if (r->e[e].median > best) {
			second = best;
			r->runner_up = r->winner;
			best = r->e[e].median;
			r->winner = e;
		} else if (r->e[e].median > second) {
			second = r->e[e].median;
			r->runner_up = e;
		}
	}
	if (r->winner < 0) {
		snprintf(r->headline, sizeof(r->headline), "%s: no engine gave a result.",
			 judge_workload_name(r->w));
		return;
	}
	fmt_num(vw, sizeof(vw), best);
	if (r->runner_up < 0) {
		snprintf(r->headline, sizeof(r->headline), "%s: only %s gave a result (%s %s); no verdict.",
			 judge_workload_name(r->w), judge_engine_name(r->winner), vw, judge_unit(r->w));
		return;
	}
	for (unsigned k = 0; k < r->rounds && k < JUDGE_MAX_ROUNDS; k++) {
		double a = r->e[r->winner].v[k], b = r->e[r->runner_up].v[k];

		if (isnan(a) || isnan(b))
			continue;
		ratios[n++] = a / b;
		lo = fmin(lo, a / b);
		hi = fmax(hi, a / b);
	}
	r->ratio = best / second;
	r->ratio_n = n;
	r->ratio_lo = n ? lo : r->ratio;
	r->ratio_hi = n ? hi : r->ratio;
	if (n)
		r->ratio = median_ratio(ratios, n);
	r->tie = n >= 2 ? r->ratio_lo < 1 + JUDGE_TIE_ROUNDS : r->ratio < 1 + JUDGE_TIE_SINGLE;
	fmt_num(vr, sizeof(vr), second);
	if (n >= 2)
		snprintf(spread, sizeof(spread), ", %.2f-%.2fx across %u rounds", r->ratio_lo, r->ratio_hi, n);
	else
		snprintf(spread, sizeof(spread), ", one round: spread not measured");
	if (r->tie)
		snprintf(r->headline, sizeof(r->headline),
			 "%s: a tie within noise between %s and %s (%.2fx%s; a tie is under %.0f%%).",
			 judge_workload_name(r->w), judge_engine_name(r->winner),
			 judge_engine_name(r->runner_up), r->ratio, spread,
			 100 * (n >= 2 ? JUDGE_TIE_ROUNDS : JUDGE_TIE_SINGLE));
	else
		snprintf(r->headline, sizeof(r->headline), "%s: %s wins, %.2fx %s (%s vs %s %s%s).",
			 judge_workload_name(r->w), judge_engine_name(r->winner), r->ratio,
			 judge_engine_name(r->runner_up), vw, vr, judge_unit(r->w), spread);
}

bool judge_unanswered(const struct judge_result *r)
{
	return r->ran && r->winner < 0;
}

void judge_workload(enum judge_workload w, const struct judge_cell *cells, unsigned ncells,
		    const struct judge_host *h, struct judge_result *r)
{
	char extra[96];

	memset(r, 0, sizeof(*r));
	r->w = w;
	for (int e = 0; e < JE_NR; e++) {
		for (unsigned k = 0; k < JUDGE_MAX_ROUNDS; k++)
			r->e[e].v[k] = NAN;
		r->e[e].median = r->e[e].lo = r->e[e].hi = NAN;
	}
	for (unsigned i = 0; i < ncells; i++) {
		const struct judge_cell *c = &cells[i];
		struct judge_engine_result *er;
		double v;

		if (c->w != w || c->e >= JE_NR || !judge_engine_in(w, c->e) || c->round >= JUDGE_MAX_ROUNDS)
			continue;
		r->ran = true;
		if (c->round + 1 > r->rounds)
			r->rounds = c->round + 1;
		er = &r->e[c->e];
		if (judge_metric(w, c->doc, &v, er->err, sizeof(er->err)))
			er->v[c->round] = v;
	}
	if (!r->ran)
		return;
	for (int e = 0; e < JE_NR; e++) {
		struct judge_engine_result *er = &r->e[e];
		double vals[JUDGE_MAX_ROUNDS];

		for (unsigned k = 0; k < r->rounds; k++)
			if (!isnan(er->v[k]))
				vals[er->n++] = er->v[k];
		if (!er->n)
			continue;
		er->ok = true;
		er->err[0] = '\0';
		er->median = median(vals, er->n);
		qsort(vals, er->n, sizeof(*vals), cmp_double);
		er->lo = vals[0];
		er->hi = vals[er->n - 1];
	}
	winner(r);

	/* The question the verdict is for: mmap or a buffer pool, at the
	 * same memory. */
	snprintf(extra, sizeof(extra), " at the same %.0f MiB of memory", (double)h->mem_budget / MIB);
	if (w == JW_UNIFORM || w == JW_ZIPF || w == JW_SCAN) {
		enum judge_engine m = JE_MMAP_NORMAL;

		if (r->e[JE_MMAP_RANDOM].ok &&
		    (!r->e[JE_MMAP_NORMAL].ok || r->e[JE_MMAP_RANDOM].median > r->e[JE_MMAP_NORMAL].median))
			m = JE_MMAP_RANDOM;
		compare(r, m, JE_BUFPOOL, "mmap_vs_pool", extra);
	} else if (w == JW_WRITE) {
		compare(r, JE_MMAP_MSYNC, JE_BUFPOOL, "mmap_vs_pool", extra);
		compare(r, JE_PWRITE, JE_BUFPOOL, "pwrite_vs_pool", "");
	} else if (w == JW_HAZARD) {
		compare(r, JE_URING_LOOP, JE_MMAP_LOOP, "uring_vs_mmap_loop", "");
	}

	for (int e = 0; e < JE_NR; e++) {
		json_t *doc;

		if (!judge_engine_in(w, e))
			continue;
		if (!r->e[e].ok) {
			say(r, "no_result", NAN, NAN, "run", "%s: no result: %s.", judge_engine_name(e),
			    r->e[e].err[0] ? r->e[e].err : "not run");
			continue;
		}
		doc = typical_doc(cells, ncells, w, e, &r->e[e]);
		if (!doc)
			continue;
		if (e == JE_MMAP_NORMAL || e == JE_MMAP_RANDOM || e == JE_MMAP_MSYNC)
			mmap_evidence(r, e, doc, h, cells, ncells);
		else if (e == JE_BUFPOOL)
			pool_evidence(r, doc, h);
	}
	if (w == JW_WRITE) {
		flush_evidence(r, cells, ncells);
		writeback_evidence(r, cells, ncells);
	}
	if (w == JW_HAZARD)
		hazard_evidence(r, cells, ncells);
}

static void host_say(struct judge_sentence *out, unsigned *n, unsigned max, const char *key,
		     double v, double thr, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void host_say(struct judge_sentence *out, unsigned *n, unsigned max, const char *key,
		     double v, double thr, const char *fmt, ...)
{
	va_list ap;

	if (*n >= max)
		return;
	snprintf(out[*n].key, sizeof(out[*n].key), "%s", key);
	out[*n].value = v;
	out[*n].threshold = thr;
	snprintf(out[*n].source, sizeof(out[*n].source), "host");
	va_start(ap, fmt);
	vsnprintf(out[*n].text, sizeof(out[*n].text), fmt, ap);
	va_end(ap);
	(*n)++;
}

unsigned judge_host_facts(const struct judge_host *h, const struct judge_result *r,
			  struct judge_sentence *out, unsigned max)
{
	const struct judge_result *u = &r[JW_UNIFORM];
	unsigned n = 0;

	if (h->read_ahead_kb >= JUDGE_RA_KB && h->dev[0]) {
		if (u->e[JE_MMAP_NORMAL].ok && u->e[JE_MMAP_RANDOM].ok)
			host_say(out, &n, max, "read_ahead_kb", h->read_ahead_kb, JUDGE_RA_KB,
				 "%s has read_ahead_kb=%d: mmap with madvise=normal reads that much around "
				 "each fault; here it gave %.0f IOPS against %.0f with madvise=random on "
				 "uniform random reads.", h->dev, h->read_ahead_kb,
				 u->e[JE_MMAP_NORMAL].median, u->e[JE_MMAP_RANDOM].median);
		else
			host_say(out, &n, max, "read_ahead_kb", h->read_ahead_kb, JUDGE_RA_KB,
				 "%s has read_ahead_kb=%d: mmap with madvise=normal reads that much around "
				 "each fault.", h->dev, h->read_ahead_kb);
	}
	if (h->ncpus && h->ncpus <= JUDGE_FEW_CPUS)
		host_say(out, &n, max, "ncpus", h->ncpus, JUDGE_FEW_CPUS,
			 "%u CPUs: a TLB shootdown interrupts at most %u other CPU%s, and one thread per "
			 "CPU is %u threads; the paper's mmap collapse came with many cores, so expect "
			 "mmap to fare worse on a larger host.", h->ncpus, h->ncpus - 1,
			 h->ncpus == 2 ? "" : "s", h->ncpus);
	if (h->virt[0] && strcmp(h->virt, "none"))
		host_say(out, &n, max, "virtualisation", NAN, NAN,
			 "a virtual machine (%s): shootdown IPIs and device interrupts go through the "
			 "hypervisor, and the device's latency is the host's.", h->virt);
	if (h->rotational == 1 && h->dev[0])
		host_say(out, &n, max, "rotational", 1, NAN,
			 "%s says it is rotational%s: random reads are then seek-bound and a cache's hit "
			 "ratio decides everything.", h->dev,
			 h->virt[0] && strcmp(h->virt, "none") ? " (a virtual disk often says so whatever "
			 "backs it)" : "");
	if (!strcmp(h->thp, "always"))
		host_say(out, &n, max, "thp", NAN, NAN,
			 "transparent huge pages are 'always': the buffer pool's anonymous frames may "
			 "be huge pages (fewer TLB misses) while a file mapping stays in 4 KiB pages.");
	if (h->damon_pageout == 1) {
		char idle[48] = "";

		if (!isnan(h->damon_idle_s))
			snprintf(idle, sizeof(idle), " for %.0f s", h->damon_idle_s);
		host_say(out, &n, max, "damon_pageout", h->damon_idle_s, NAN,
			 "DAMON pages out memory left idle%s, with no memory pressure: an mmap'd file "
			 "that sits idle that long is read from the device again, and neither kswapd nor "
			 "the reclaim counters show it; the buffer pool's frames are anonymous memory, %s.",
			 idle, h->swap == 0 ? "which it cannot page out without swap (none here), so a "
			 "buffer pool keeps its cache" : h->swap == 1 ? "which it pages out too, to swap" :
			 "which it can page out only to swap (whether there is any could not be read)");
	}
	if (!h->cgroup)
		host_say(out, &n, max, "memory", (double)h->mem_budget, NAN,
			 "no memory cgroup here: mmap's memory was limited with reserve_mem, so the whole "
			 "host ran short and kswapd, not the job's threads, evicted.");
	return n;
}
