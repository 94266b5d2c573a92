/*
 * judge.c - winners, ratios and evidence sentences of the verdict
 * from the runs' JSON documents. Every sentence is built from
 * numbers read out of the documents, and only when a number passes its
 * threshold (judge.h; faultline(1), THE VERDICT lists them). A figure is
 * taken from the job's own counters (jobs[].faultline.events) when the
 * document has them, else from the run's system-wide telemetry, and the
 * sentence says which; a missing source leaves its sentence out. How a
 * document is read, and where each figure comes from, is judge_doc.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/judge.h"
#include "verdict/judge_doc.h"
#include "verdict/judge_pool.h"
#include "verdict/judge_say.h"

#define MIB (1024.0 * 1024.0)

/*
 * JB_TIME: the seconds a run took to replay all of its trace, and how
 * many of the trace's requests it issued. A run the plan's bound cut
 * short is charged the time its own rate would have taken for the whole
 * trace (the time to replay all of it is what is judged, and a slower
 * engine is the one cut short); @cut says so.
 */
static bool replay_time(const struct judge_wl *wl, json_t *doc, double *v, double *done, bool *cut)
{
	double ns, r = 0, w = 0;

	if (!judge_jnum(doc, "jobs.0.faultline.runtime_ns", &ns) || ns <= 0)
		return false;
	judge_jnum(doc, "jobs.0.read.total_ios", &r);
	if (wl->writes)
		judge_jnum(doc, "jobs.0.write.total_ios", &w);
	*done = r + w;
	*cut = wl->trace_ios > *done;
	*v = ns / 1e9;
	if (*cut && *done > 0)
		*v *= wl->trace_ios / *done;
	return *done > 0;
}

bool judge_metric(const struct judge_wl *wl, json_t *doc, double *v, char *why, size_t whylen)
{
	double err = 0, r = 0, wr = 0;
	json_t *msg;

	if (!doc || !judge_jpath(doc, "jobs.0")) {
		snprintf(why, whylen, "no result (the run did not produce one)");
		return false;
	}
	if (judge_jnum(doc, "jobs.0.error", &err) && err != 0) {
		msg = judge_jpath(doc, "jobs.0.faultline.errmsg");
		snprintf(why, whylen, "the job failed: %s",
			 json_is_string(msg) ? json_string_value(msg) : "(no message)");
		return false;
	}
	if (wl->by == JB_TIME) {
		double done;
		bool cut;

		if (replay_time(wl, doc, v, &done, &cut))
			return true;
		snprintf(why, whylen, "the job replayed nothing in its time");
		return false;
	}
	if (wl->by == JB_P99) {
		if (!judge_doc_iops(doc, &r) || r <= 0) {
			snprintf(why, whylen, "the job did no I/O in its measured time");
			return false;
		}
		if (!judge_doc_p99_us(doc, v)) {
			snprintf(why, whylen, "the result has no latency percentiles (latency=0?)");
			return false;
		}
		return true;
	}
	if (wl->by == JB_MIBS) {
		bool ok = judge_jnum(doc, "jobs.0.read.bw_bytes", &r);

		if (wl->writes)
			ok |= judge_jnum(doc, "jobs.0.write.bw_bytes", &wr);
		if (!ok)
			goto none;
		*v = (r + wr) / MIB;
	} else {
		bool ok = judge_jnum(doc, "jobs.0.read.iops", &r);

		if (wl->writes)
			ok |= judge_jnum(doc, "jobs.0.write.iops", &wr);
		if (!ok)
			goto none;
		*v = r + wr;
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



bool judge_lower_better(const struct judge_result *r)
{
	return (r->wl.by == JB_P99 && !r->none_held) || r->wl.by == JB_TIME;
}

/* How many times @a is better than @b: higher throughput, or lower p99
 * or time. */
static double gain(const struct judge_result *r, double a, double b)
{
	return judge_lower_better(r) ? b / a : a / b;
}

/* An engine's name with its concurrency: "bufpool [2 threads]", and a
 * what-if cell marked as one. */
static const char *ename(const struct judge_result *r, enum judge_engine e, char *buf, size_t len)
{
	if (r->e[e].conc[0] && r->e[e].mark[0])
		snprintf(buf, len, "%s [%s, %s]", judge_engine_name(e), r->e[e].conc, r->e[e].mark);
	else if (r->e[e].conc[0])
		snprintf(buf, len, "%s [%s]", judge_engine_name(e), r->e[e].conc);
	else
		snprintf(buf, len, "%s", judge_engine_name(e));
	return buf;
}

/* The ratio sentence between two engines of @r: "a is 2.1x faster than
 * b (1.9-2.3x over 3 rounds)", or of their p99 at a rate; the range
 * always in the direction of the figure it follows ("1.2x slower
 * (1.1-1.3x ...)"), and a tie by the headline's rule (winner()) said as
 * a tie, not as a win or a loss. */
static void compare(struct judge_result *r, enum judge_engine a, enum judge_engine b,
		    const char *key, const char *extra)
{
	const struct judge_engine_result *ea = &r->e[a], *eb = &r->e[b];
	double lo = INFINITY, hi = 0, ratios[JUDGE_MAX_ROUNDS], ratio, fast, worst, best;
	unsigned n = 0;
	char spread[96] = "", na[160], nb[160];
	bool lat = r->wl.by == JB_P99 && !r->none_held;

	if (!ea->ok || !eb->ok || a == b)
		return;
	for (unsigned k = 0; k < r->rounds && k < JUDGE_MAX_ROUNDS; k++) {
		if (isnan(ea->v[k]) || isnan(eb->v[k]))
			continue;
		ratios[n] = gain(r, ea->v[k], eb->v[k]);
		lo = fmin(lo, ratios[n]);
		hi = fmax(hi, ratios[n]);
		n++;
	}
	if (!n)
		return;
	ratio = median_ratio(ratios, n);
	/* Seen from the better side: its ratio, its worst and best rounds. */
	fast = ratio >= 1 ? ratio : 1 / ratio;
	worst = ratio >= 1 ? lo : 1 / hi;
	best = ratio >= 1 ? hi : 1 / lo;
	if (n > 1)
		snprintf(spread, sizeof(spread), " (%.2f-%.2fx over %u rounds)", worst, best, n);
	ename(r, a, na, sizeof(na));
	ename(r, b, nb, sizeof(nb));
	if (n > 1 ? worst < 1 + JUDGE_TIE_ROUNDS : fast < 1 + JUDGE_TIE_SINGLE)
		judge_say(r, key, ratio, NAN, "measured",
		    "%s: %s and %s are a tie within noise%s: %s is %.2fx the other%s%s (a tie is under %.0f%%).",
		    r->wl.name, na, nb, extra, ratio >= 1 ? na : nb, fast, lat ? " in p99" : "", spread,
		    100 * (n > 1 ? JUDGE_TIE_ROUNDS : JUDGE_TIE_SINGLE));
	else if (lat)
		judge_say(r, key, ratio, NAN, "measured", "%s: %s's p99 is %.2fx %s than %s's%s%s.",
		    r->wl.name, na, fast, ratio >= 1 ? "lower" : "higher", nb, spread, extra);
	else if (ratio >= 1)
		judge_say(r, key, ratio, NAN, "measured", "%s: %s is %.2fx faster than %s%s%s.",
		    r->wl.name, na, ratio, nb, spread, extra);
	else
		judge_say(r, key, ratio, NAN, "measured", "%s: %s is %.2fx slower than %s%s%s.",
		    r->wl.name, na, fast, nb, spread, extra);
}

/* What the kernel did while an mmap job ran. */
/* A system-wide figure on a shared host includes everyone's: the same
 * figure in a run of the workload that maps nothing (io_uring O_DIRECT,
 * or the buffer pool for writes) is the host's background. */
static void background(const struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
		       unsigned wi, struct judge_ev (*get)(json_t *), char *buf, size_t len)
{
	enum judge_engine base = r->wl.writes ? JE_BUFPOOL : JE_URING_DIRECT;
	json_t *doc;
	struct judge_ev b;
	char n[32];

	buf[0] = '\0';
	if (!judge_engine_in(&r->wl, base) || !r->e[base].ok)
		return;
	doc = judge_typical_doc(cells, ncells, wi, base, &r->e[base]);
	if (!doc)
		return;
	b = get(doc);
	if (!b.ok || strcmp(b.key, "system"))
		return;
	judge_fmt_num(n, sizeof(n), b.v);
	snprintf(buf, len, "; %s, which maps nothing, saw %s/s", judge_engine_name(base), n);
}

static struct judge_ev ev_direct_any(json_t *doc)
{
	bool pages;

	return judge_ev_direct(doc, &pages);
}

static void mmap_evidence(struct judge_result *r, enum judge_engine e, json_t *doc,
			  const struct judge_host *h, const struct judge_cell *cells, unsigned ncells,
			  unsigned wi)
{
	char bg[160];
	const char *name = judge_engine_name(e);
	struct judge_ev tlb = judge_ev_tlb(doc), ks = judge_ev_kswapd(doc), amp = judge_ev_read_amp(doc), mf = judge_ev_majflt_per_op(doc);
	bool pages;
	struct judge_ev dr = judge_ev_direct(doc, &pages);
	char a[32], b[32];

	if (tlb.ok && tlb.v >= JUDGE_TLB_PER_S) {
		judge_fmt_num(a, sizeof(a), tlb.v);
		if (!strcmp(tlb.key, "system"))
			background(r, cells, ncells, wi, judge_ev_tlb, bg, sizeof(bg));
		else
			bg[0] = '\0';
		judge_say(r, "tlb_per_s", tlb.v, JUDGE_TLB_PER_S, tlb.key,
		    "%s: %s TLB shootdowns/s (%s%s): each page the kernel evicts from a shared "
		    "mapping interrupts the other CPUs.", name, a, tlb.src, bg);
	}
	if (dr.ok && dr.v >= (pages ? JUDGE_RECLAIM_PER_S : 1.0)) {
		judge_fmt_num(a, sizeof(a), dr.v);
		if (pages)
			background(r, cells, ncells, wi, ev_direct_any, bg, sizeof(bg));
		else
			bg[0] = '\0';
		judge_say(r, "direct_reclaim_per_s", dr.v, pages ? JUDGE_RECLAIM_PER_S : 1.0, dr.key,
		    "%s: %s %s per second%s%s.", name, a, dr.src, bg,
		    h->cgroup ? "; under mem_limit that reclaim runs in the faulting threads themselves"
			      : "");
	}
	if (ks.ok && ks.v >= JUDGE_KSWAPD_PCT)
		judge_say(r, "kswapd_cpu_pct", ks.v, JUDGE_KSWAPD_PCT, ks.key,
		    "%s: kswapd used %.0f%% of a CPU (%s).", name, ks.v, ks.src);
	if (amp.ok && amp.v >= JUDGE_READ_AMP) {
		judge_fmt_num(a, sizeof(a), amp.v);
		if (e == JE_MMAP_NORMAL && h->read_ahead_kb >= 0 && h->dev[0]) {
			judge_fmt_num(b, sizeof(b), (double)h->read_ahead_kb);
			judge_say(r, "read_amp", amp.v, JUDGE_READ_AMP, amp.key,
			    "%s: read amplification %sx (%s): %s's read_ahead_kb is %s, so a fault "
			    "under MADV_NORMAL reads up to %d KiB around the page; madvise=random reads "
			    "only the page.", name, a, amp.src, h->dev, b, h->read_ahead_kb);
		} else {
			judge_say(r, "read_amp", amp.v, JUDGE_READ_AMP, amp.key,
			    "%s: read amplification %sx (%s).", name, a, amp.src);
		}
	}
	if (mf.ok && mf.v >= JUDGE_MAJFLT_PER_OP && !r->wl.seq)
		judge_say(r, "majflt_per_op", mf.v, JUDGE_MAJFLT_PER_OP, mf.key,
		    "%s: %.2f major faults per request: the thread waits for the device inside "
		    "the page fault.", name, mf.v);
}

static void flush_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
			   unsigned wi)
{
	double p99[JE_NR], lo = INFINITY, hi = 0;
	int ilo = -1, ihi = -1;

	for (int e = 0; e < JE_NR; e++) {
		json_t *doc, *pct;
		double n;

		p99[e] = NAN;
		if (!judge_engine_in(&r->wl, e) || !r->e[e].ok)
			continue;
		doc = judge_typical_doc(cells, ncells, wi, e, &r->e[e]);
		if (!doc || !judge_jnum(doc, "jobs.0.sync.total_ios", &n) || n <= 0 ||
		    !json_is_number(pct = json_object_get(judge_jpath(doc, "jobs.0.sync.lat_ns.percentile"),
							      "99.000000")))
			continue;
		p99[e] = json_number_value(pct);
		judge_say(r, "flush_p99_ms", p99[e] / 1e6, NAN, "job",
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
		judge_say(r, "flush_p99_ratio", hi / lo, JUDGE_FLUSH_RATIO, "job",
		    "a flush of %s takes %.1fx as long (p99) as one of %s.", judge_engine_name(ihi),
		    hi / lo, judge_engine_name(ilo));
}

/*
 * What the kernel wrote of the job's file on its own, before any flush
 * asked (jobs[].faultline.writeback), once it is a share worth
 * a sentence. Through a mapping that is the paper's problem #1: a store
 * is not a decision, and the kernel may write a page the database has
 * not yet decided may reach the disk. With pwrite the database handed
 * the data over itself: the kernel only chose when.
 */
static void writeback_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
			       unsigned wi)
{
	for (int e = 0; e < JE_NR; e++) {
		static const char *const why[] = { "background", "vmscan", "periodic", "sync", "other" };
		static const char *const said[] = { "dirty_background", "reclaim", "dirty_expire",
						    "a sync", "other" };
		double share, k, own, v;
		char by[160] = "", a[32], b[32];
		size_t n = 0;
		json_t *doc;

		if (!judge_engine_in(&r->wl, e) || !r->e[e].ok)
			continue;
		doc = judge_typical_doc(cells, ncells, wi, e, &r->e[e]);
		if (!doc || !judge_jnum(doc, "jobs.0.faultline.writeback.kernel_share", &share) ||
		    !judge_jnum(doc, "jobs.0.faultline.writeback.kernel_bytes", &k) ||
		    !judge_jnum(doc, "jobs.0.faultline.writeback.own_bytes", &own) || share < JUDGE_KERNEL_WRITE_SHARE)
			continue;
		for (unsigned i = 0; i < sizeof(why) / sizeof(why[0]); i++) {
			char path[96];

			snprintf(path, sizeof(path), "jobs.0.faultline.writeback.kernel_by_reason.%s", why[i]);
			if (judge_jnum(doc, path, &v) && v > 0 && n < sizeof(by))
				n += (size_t)snprintf(by + n, sizeof(by) - n, "%s%s %.0f MiB", n ? ", " : "; ",
						      said[i], v / MIB);
		}
		judge_mib(a, sizeof(a), (uint64_t)k);
		judge_mib(b, sizeof(b), (uint64_t)(k + own));
		judge_say(r, "kernel_write_share", share, JUDGE_KERNEL_WRITE_SHARE, "job",
		    "%s: the kernel wrote %.0f%% of what reached the device of the file on its own, "
		    "before any flush asked (%s of %s%s)%s", judge_engine_name(e), 100 * share, a, b, by,
		    e == JE_MMAP_MSYNC || e == JE_MMAP_NORMAL || e == JE_MMAP_RANDOM ? ": through a mapping a store is not a decision, and a page may "
					 "reach the disk before the database decided it may."
				       : ": the data was handed over by the write itself; the kernel "
					 "chose only when.");
	}
}

/*
 * Where each engine's threads' time went (delayacct=1: JSON
 * jobs[].faultline.time), in one sentence: the wait for the device
 * (for mmap, inside its page faults, a thrashing wait included) and the
 * reclaim they did themselves, which throughput alone does not show.
 * Nothing is said when no engine's run could read it (not root).
 */
static void time_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
			  unsigned wi)
{
	/* What follows the engines' parts, and room for it. */
	static const char tail[] = " (the kernel's delay accounting).";
	char text[JUDGE_SENT_LEN], part[JUDGE_SENT_LEN], nb[96];
	size_t n = 0;
	double first = NAN;

	for (int e = 0; e < JE_NR; e++) {
		bool mm = e == JE_MMAP_NORMAL || e == JE_MMAP_RANDOM || e == JE_MMAP_MSYNC;
		double dev, thr, rec;
		json_t *doc;
		int k;

		if (!judge_engine_in(&r->wl, e) || !r->e[e].ok)
			continue;
		doc = judge_typical_doc(cells, ncells, wi, e, &r->e[e]);
		if (!doc || !judge_jnum(doc, "jobs.0.faultline.time.blkio_pct", &dev) ||
		    !judge_jnum(doc, "jobs.0.faultline.time.thrash_pct", &thr) ||
		    !judge_jnum(doc, "jobs.0.faultline.time.reclaim_pct", &rec))
			continue;
		k = snprintf(part, sizeof(part),
			     n ? "; %s's %.0f %% waiting for the device%s and %.0f %% reclaiming"
			       : "%s: its threads spent %.0f %% of their time waiting for the device%s "
				 "and %.0f %% reclaiming",
			     /* io_uring at depth 1 and at the probed depth share a name. */
			     e == JE_URING_DEPTH ? ename(r, e, nb, sizeof(nb)) : judge_engine_name(e),
			     dev + thr, mm ? " inside page faults" : "", rec);
		/* Every engine of the matrix would not fit one sentence: those
		 * that do, in the matrix's order (mmap's first). */
		if (k < 0 || n + (size_t)k + sizeof(tail) > sizeof(text))
			break;
		memcpy(text + n, part, (size_t)k + 1);
		n += (size_t)k;
		if (isnan(first))
			first = dev + thr;
	}
	if (!isnan(first))
		judge_say(r, "time_waiting_pct", first, NAN, "job", "%s%s", text, tail);
}

static void hazard_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
			    unsigned wi)
{
	for (int e = JE_MMAP_LOOP; e <= JE_URING_LOOP; e++) {
		json_t *doc;
		double blocked, s;

		if (!r->e[e].ok)
			continue;
		doc = judge_typical_doc(cells, ncells, wi, e, &r->e[e]);
		if (!doc || !judge_jnum(doc, "jobs.0.faultline.reader_blocked_ns", &blocked) ||
		    isnan(s = judge_job_seconds(doc)))
			continue;
		blocked = 100 * blocked / 1e9 / s;
		judge_say(r, "loop_blocked_pct", blocked, JUDGE_BLOCKED_PCT, "job",
		    "%s: the loop thread was asleep %.0f%% of the time%s.", judge_engine_name(e), blocked,
		    blocked >= JUDGE_BLOCKED_PCT ?
		    (e == JE_MMAP_LOOP ? ", inside page faults: every stream waited for each one"
				       : ", waiting for completions of all streams at once") : "");
	}
}

/* A replayed trace: how long each engine took to replay it, and for
 * one the plan's bound cut short, what it is charged. */
static void replay_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
			    unsigned wi)
{
	const char *what = r->wl.writes ? "requests" : "reads";

	for (int e = 0; e < JE_NR; e++) {
		json_t *doc;
		double ns, n, t;
		bool cut;
		char nb[160];

		if (!r->e[e].ok || !(doc = judge_typical_doc(cells, ncells, wi, e, &r->e[e])) ||
		    !judge_jnum(doc, "jobs.0.faultline.runtime_ns", &ns) ||
		    !replay_time(&r->wl, doc, &t, &n, &cut))
			continue;
		ename(r, e, nb, sizeof(nb));
		if (cut && r->wl.by == JB_TIME)
			judge_say(r, "replay_elapsed_s", ns / 1e9, NAN, "job", "%s replayed %.0f of the "
			    "trace's %.0f %s in %.2f s before the plan's time per run cut it short: at "
			    "that rate all of it takes about %.2f s, the time it is judged by.",
			    nb, n, r->wl.trace_ios, what, ns / 1e9, t);
		else if (cut)
			judge_say(r, "replay_elapsed_s", ns / 1e9, NAN, "job", "%s replayed %.0f of the "
			    "trace's %.0f %s in %.2f s (the plan's time per run cut it short).",
			    nb, n, r->wl.trace_ios, what, ns / 1e9);
		else
			judge_say(r, "replay_elapsed_s", ns / 1e9, NAN, "job", "%s replayed the trace's %.0f "
			    "%s in %.2f s.", nb, n, what, ns / 1e9);
	}
}

/* A run's options as they resolved, strings: faultline's own list;
 * documents written before it had one resolved them in "job options". */
static json_t *run_options(json_t *doc)
{
	json_t *o = judge_jpath(doc, "jobs.0.faultline.options");

	return o ? o : judge_jpath(doc, "jobs.0.job options");
}

/* The option @key of a run as it resolved. */
static long job_opt(json_t *doc, const char *key, long def)
{
	json_t *o = json_object_get(run_options(doc), key);

	return json_is_string(o) ? strtol(json_string_value(o), NULL, 10) : def;
}

/* Who issues how many requests at once: "2 threads x depth 1", "1
 * thread, 8 streams", "2 threads, 32 pages read ahead", from the run's
 * own options, so the comparison is read right; a replay's threads are
 * its streams, each replaying its own log. A replay's depth cell is
 * marked as what the traced program may never have done (@mark). */
static void concurrency(json_t *doc, const struct judge_wl *wl, enum judge_engine e,
			const struct judge_host *h, char *buf, size_t len, char *mark, size_t marklen)
{
	long t = job_opt(doc, "numjobs", 1), d = job_opt(doc, "iodepth", 1), loop = job_opt(doc, "loop", 0);
	long pf = job_opt(doc, "pool_prefetch", 0);
	const char *th = wl->replay ? (t == 1 ? "stream" : "streams") : t == 1 ? "thread" : "threads";

	buf[0] = mark[0] = '\0';
	if (wl->replay && e == JE_URING_DEPTH && d > 1)
		snprintf(mark, marklen, "if the program could have had %ld reads in flight%s", d,
			 t > 1 ? " per stream" : "");
	if (!doc || !run_options(doc))
		return;
	if (loop > 0)
		snprintf(buf, len, "%ld %s, %ld streams", t, th, loop);
	else if (e == JE_URING_DIRECT || e == JE_URING_DEPTH)
		snprintf(buf, len, "%ld %s x depth %ld", t, th, d);
	else if ((e == JE_BUFPOOL || e == JE_VMCACHE) && pf > 0)
		snprintf(buf, len, "%ld %s, %ld pages read ahead", t, th, pf);
	else if (e == JE_MMAP_NORMAL && h->read_ahead_kb > 0)
		snprintf(buf, len, "%ld %s, faults read up to %d KiB", t, th, h->read_ahead_kb);
	else
		snprintf(buf, len, "%ld %s", t, th);
}

/* JB_P99: the rate, and who fell behind it. */
static void rate_check(struct judge_result *r)
{
	double best = 0;
	unsigned held = 0;
	char rate[32], got[32], n[160];

	r->rate = r->wl.rate_iops;
	for (int e = 0; e < JE_NR; e++)
		if (r->e[e].ok && r->e[e].iops_median > best)
			best = r->e[e].iops_median;
	if (r->rate <= 0)
		r->rate = best;
	for (int e = 0; e < JE_NR; e++) {
		struct judge_engine_result *er = &r->e[e];

		if (!er->ok)
			continue;
		er->short_pct = r->rate > 0 ? 100 * (1 - er->iops_median / r->rate) : 0;
		er->behind = er->iops_median < r->rate * (1 - JUDGE_RATE_SHORT);
		held += !er->behind;
	}
	r->none_held = held == 0;
	judge_fmt_num(rate, sizeof(rate), r->rate);
	for (int e = 0; e < JE_NR; e++) {
		struct judge_engine_result *er = &r->e[e];

		if (!er->ok || !er->behind)
			continue;
		judge_fmt_num(got, sizeof(got), er->iops_median);
		if (r->wl.paced)
			judge_say(r, "rate_short_pct", er->short_pct, 100 * JUDGE_RATE_SHORT, "job",
			    "%s does not keep up with the trace: %s IOPS delivered of the trace's own "
			    "%s, %.0f%% short; its p99 is not comparable.", ename(r, e, n, sizeof(n)), got,
			    rate, er->short_pct);
		else
			judge_say(r, "rate_short_pct", er->short_pct, 100 * JUDGE_RATE_SHORT, "job",
			    "%s falls behind the rate: %s IOPS delivered of %s%s, %.0f%% short; its p99 "
			    "is not comparable.", ename(r, e, n, sizeof(n)), got, rate,
			    r->wl.rate_iops > 0 ? " asked" : " (the fastest engine's)", er->short_pct);
	}
}

/* Whether @e may win: with a rate, it held it (unless none did); a
 * replay's depth cell never (the trace was taken one read at a time per
 * stream, and that is what the answer replays). */
bool judge_ranked(const struct judge_result *r, int e)
{
	if (r->wl.replay && e == JE_URING_DEPTH)
		return false;
	return r->e[e].ok && (r->wl.by != JB_P99 || r->none_held || !r->e[e].behind);
}

/* The value @e is ranked by: with a rate none held, delivered IOPS. */
static double rank_value(const struct judge_result *r, int e)
{
	return r->wl.by == JB_P99 && r->none_held ? r->e[e].iops_median : r->e[e].median;
}

/* Of the engines that ran but fell behind the rate (a p99 workload that
 * some engine kept up with), the one that delivered most; -1 for none.
 * How many in @n. */
static int fastest_behind(const struct judge_result *r, unsigned *n)
{
	int best = -1;

	*n = 0;
	if (r->wl.by != JB_P99 || r->none_held)
		return -1;
	for (int e = 0; e < JE_NR; e++) {
		if (!r->e[e].ok || !r->e[e].behind || (r->wl.replay && e == JE_URING_DEPTH))
			continue;
		(*n)++;
		if (best < 0 || r->e[e].iops_median > r->e[best].iops_median)
			best = e;
	}
	return best;
}

static void winner(struct judge_result *r)
{
	double lo = INFINITY, hi = 0, ratios[JUDGE_MAX_ROUNDS], best = NAN, second = NAN;
	unsigned n = 0;
	char vw[32], vr[32], spread[96] = "", nw[160], nr[160], at[96] = "";
	const char *unit = judge_unit(&r->wl);

	r->winner = r->runner_up = -1;
	for (int e = 0; e < JE_NR; e++) {
		if (!judge_ranked(r, e))
			continue;
		if (r->winner < 0 || gain(r, rank_value(r, e), rank_value(r, r->winner)) > 1) {
			r->runner_up = r->winner;
			r->winner = e;
		} else if (r->runner_up < 0 || gain(r, rank_value(r, e), rank_value(r, r->runner_up)) > 1) {
			r->runner_up = e;
		}
	}
	if (r->wl.by == JB_P99) {
		judge_fmt_num(vw, sizeof(vw), r->rate);
		snprintf(at, sizeof(at), " at %s IOPS%s", vw, r->wl.paced ? " (the trace's own pace)" :
			 r->wl.rate_iops > 0 ? "" : " (the fastest engine's)");
		if (r->none_held) {
			snprintf(at + strlen(at), sizeof(at) - strlen(at), ", which no engine held");
			unit = "IOPS";
		}
	}
	if (r->winner < 0) {
		snprintf(r->headline, sizeof(r->headline), "%s: no engine gave a result.", r->wl.name);
		return;
	}
	best = rank_value(r, r->winner);
	judge_fmt_num(vw, sizeof(vw), best);
	ename(r, r->winner, nw, sizeof(nw));
	if (r->runner_up < 0) {
		unsigned nbehind;
		int behind = fastest_behind(r, &nbehind);

		/* The others ran and fell short of the rate: that is the
		 * answer, the one engine that keeps up, not a missing one. */
		if (behind >= 0) {
			judge_fmt_num(vr, sizeof(vr), r->e[behind].iops_median);
			ename(r, behind, nr, sizeof(nr));
			snprintf(r->headline, sizeof(r->headline),
				 "%s%s: only %s keeps up (p99 %.2f ms); %s delivered %s IOPS, %.0f%% short%s.",
				 r->wl.name, at, nw, best / 1000, nr, vr, r->e[behind].short_pct,
				 nbehind > 1 ? ", the closest of the others" : "");
			return;
		}
		snprintf(r->headline, sizeof(r->headline), "%s%s: only %s gave a result (%s %s); no verdict.",
			 r->wl.name, at, nw, vw, unit);
		return;
	}
	second = rank_value(r, r->runner_up);
	for (unsigned k = 0; k < r->rounds && k < JUDGE_MAX_ROUNDS; k++) {
		const struct judge_engine_result *a = &r->e[r->winner], *b = &r->e[r->runner_up];
		double va = r->none_held ? a->iops[k] : a->v[k], vb = r->none_held ? b->iops[k] : b->v[k];

		if (isnan(va) || isnan(vb))
			continue;
		ratios[n] = gain(r, va, vb);
		lo = fmin(lo, ratios[n]);
		hi = fmax(hi, ratios[n]);
		n++;
	}
	r->ratio = gain(r, best, second);
	r->ratio_n = n;
	r->ratio_lo = n ? lo : r->ratio;
	r->ratio_hi = n ? hi : r->ratio;
	if (n)
		r->ratio = median_ratio(ratios, n);
	/* Rounds that disagree (a noisy host): the per-round ratios, not the
	 * medians, say who is ahead, so the line never reads "0.7x". */
	if (r->ratio < 1) {
		int t = r->winner;
		double l = r->ratio_lo;

		r->winner = r->runner_up;
		r->runner_up = t;
		r->ratio = 1 / r->ratio;
		r->ratio_lo = 1 / r->ratio_hi;
		r->ratio_hi = 1 / l;
		best = rank_value(r, r->winner);
		second = rank_value(r, r->runner_up);
		judge_fmt_num(vw, sizeof(vw), best);
		ename(r, r->winner, nw, sizeof(nw));
	}
	r->tie = n >= 2 ? r->ratio_lo < 1 + JUDGE_TIE_ROUNDS : r->ratio < 1 + JUDGE_TIE_SINGLE;
	judge_fmt_num(vr, sizeof(vr), second);
	ename(r, r->runner_up, nr, sizeof(nr));
	if (n >= 2)
		snprintf(spread, sizeof(spread), ", %.2f-%.2fx across %u rounds", r->ratio_lo, r->ratio_hi, n);
	else
		snprintf(spread, sizeof(spread), ", one round: spread not measured");
	if (r->tie)
		snprintf(r->headline, sizeof(r->headline),
			 "%s%s: a tie within noise between %s and %s (%.2fx%s; a tie is under %.0f%%).",
			 r->wl.name, at, nw, nr, r->ratio, spread,
			 100 * (n >= 2 ? JUDGE_TIE_ROUNDS : JUDGE_TIE_SINGLE));
	else if (r->wl.by == JB_P99 && !r->none_held)
		snprintf(r->headline, sizeof(r->headline),
			 "%s%s: %s has the lower p99, %.2f ms against %.2f ms for %s (%.2fx%s).",
			 r->wl.name, at, nw, best / 1000, second / 1000, nr, r->ratio, spread);
	else if (r->wl.by == JB_TIME)
		snprintf(r->headline, sizeof(r->headline),
			 "%s: %s replays your trace %.2fx faster than %s (%.2f s%s against %.2f s%s%s).",
			 r->wl.name, nw, r->ratio, nr, best, r->e[r->winner].ncut ? ", estimated" : "",
			 second, r->e[r->runner_up].ncut ? ", estimated" : "", spread);
	else
		snprintf(r->headline, sizeof(r->headline), "%s%s: %s wins, %.2fx %s (%s vs %s %s%s).",
			 r->wl.name, at, nw, r->ratio, nr, vw, vr, unit, spread);
}

bool judge_unanswered(const struct judge_result *r)
{
	return r->ran && r->winner < 0;
}

/* The better of two engines of @r by median (-1 when neither has one). */
static int better_of(const struct judge_result *r, int a, int b)
{
	if (!r->e[a].ok)
		return r->e[b].ok ? b : -1;
	if (!r->e[b].ok)
		return a;
	return gain(r, r->e[b].median, r->e[a].median) > 1 ? b : a;
}

void judge_workload(const struct judge_wl *wl, unsigned wi, const struct judge_cell *cells,
		    unsigned ncells, const struct judge_host *h, struct judge_result *r)
{
	char extra[96];
	int m, pool;

	memset(r, 0, sizeof(*r));
	r->wl = *wl;
	for (int e = 0; e < JE_NR; e++) {
		for (unsigned k = 0; k < JUDGE_MAX_ROUNDS; k++)
			r->e[e].v[k] = r->e[e].iops[k] = NAN;
		r->e[e].median = r->e[e].lo = r->e[e].hi = r->e[e].iops_median = NAN;
	}
	for (unsigned i = 0; i < ncells; i++) {
		const struct judge_cell *c = &cells[i];
		struct judge_engine_result *er;
		double v;

		if (c->wl != wi || c->e >= JE_NR || !judge_engine_in(wl, c->e) || c->round >= JUDGE_MAX_ROUNDS)
			continue;
		r->ran = true;
		if (c->round + 1 > r->rounds)
			r->rounds = c->round + 1;
		er = &r->e[c->e];
		if (judge_metric(wl, c->doc, &v, er->err, sizeof(er->err))) {
			double done;
			bool cut = false;

			er->v[c->round] = v;
			if (wl->by == JB_TIME && replay_time(wl, c->doc, &v, &done, &cut) && cut) {
				er->cut[c->round] = true;
				er->ncut++;
			}
			if (judge_doc_iops(c->doc, &v))
				er->iops[c->round] = v;
		}
	}
	if (!r->ran)
		return;
	for (int e = 0; e < JE_NR; e++) {
		struct judge_engine_result *er = &r->e[e];
		double vals[JUDGE_MAX_ROUNDS], io[JUDGE_MAX_ROUNDS];
		unsigned nio = 0;
		json_t *doc;

		for (unsigned k = 0; k < r->rounds; k++) {
			if (!isnan(er->v[k]))
				vals[er->n++] = er->v[k];
			if (!isnan(er->iops[k]))
				io[nio++] = er->iops[k];
		}
		if (!er->n)
			continue;
		er->ok = true;
		er->err[0] = '\0';
		er->median = median(vals, er->n);
		qsort(vals, er->n, sizeof(*vals), cmp_double);
		er->lo = vals[0];
		er->hi = vals[er->n - 1];
		er->iops_median = nio ? median(io, nio) : NAN;
		doc = judge_typical_doc(cells, ncells, wi, e, er);
		concurrency(doc, wl, e, h, er->conc, sizeof(er->conc), er->mark, sizeof(er->mark));
	}
	if (wl->by == JB_P99)
		rate_check(r);
	winner(r);

	/* The question the verdict is for: mmap or a buffer pool, at the
	 * same memory. */
	snprintf(extra, sizeof(extra), " at the same %.0f MiB of memory", (double)h->mem_budget / MIB);
	m = better_of(r, JE_MMAP_NORMAL, JE_MMAP_RANDOM);
	pool = better_of(r, JE_BUFPOOL, JE_VMCACHE);
	if (wl->kind == JW_WRITE) {
		compare(r, JE_MMAP_MSYNC, JE_BUFPOOL, "mmap_vs_pool", extra);
		compare(r, JE_PWRITE, JE_BUFPOOL, "pwrite_vs_pool", "");
	} else if (wl->kind == JW_HAZARD) {
		compare(r, JE_URING_LOOP, JE_MMAP_LOOP, "uring_vs_mmap_loop", "");
	} else {
		if (m >= 0 && pool >= 0)
			compare(r, m, pool, "mmap_vs_pool", extra);
		if (wl->writes)
			compare(r, JE_PSYNC, JE_BUFPOOL, "pwrite_vs_pool", "");
		/* The fair fight: what the queue depth gives io_uring; for a
		 * replay a what-if beside the answer, not in it. */
		compare(r, JE_URING_DEPTH, JE_URING_DIRECT, "depth_vs_depth1", wl->replay ? "; the traced "
			"program had one read in flight per stream (its reads may each depend on the one "
			"before), so the depth cell is not in the answer" : "");
	}
	for (int e = 0; e < JE_NR; e++) {
		json_t *doc;

		if (!judge_engine_in(wl, e))
			continue;
		if (!r->e[e].ok) {
			judge_say(r, "no_result", NAN, NAN, "run", "%s: no result: %s.", judge_engine_name(e),
			    r->e[e].err[0] ? r->e[e].err : "not run");
			continue;
		}
		doc = judge_typical_doc(cells, ncells, wi, e, &r->e[e]);
		if (!doc)
			continue;
		if (e == JE_MMAP_NORMAL || e == JE_MMAP_RANDOM || e == JE_MMAP_MSYNC)
			mmap_evidence(r, e, doc, h, cells, ncells, wi);
		else if (e == JE_BUFPOOL || e == JE_VMCACHE)
			judge_pool_evidence(r, e, doc, h);
	}
	judge_pool_tail_evidence(r, cells, ncells, wi);
	time_evidence(r, cells, ncells, wi);
	if (wl->writes) {
		flush_evidence(r, cells, ncells, wi);
		writeback_evidence(r, cells, ncells, wi);
	}
	if (wl->kind == JW_HAZARD)
		hazard_evidence(r, cells, ncells, wi);
	if (wl->replay)
		replay_evidence(r, cells, ncells, wi);
}
