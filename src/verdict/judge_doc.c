/*
 * judge_doc.c - the judge's reading of a run's JSON document:
 * numbers by path (a null is a source not read, never a zero), a run's
 * throughput and p99, and the kernel's figures
 * behind the evidence, taken from the job's own counters when
 * the document has them, else from the run's system-wide telemetry, each
 * saying which. Pure, tested with judge.c (tests/test_judge.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/judge_doc.h"


/* ------------------------------------------------------------------ */
/* Reading the documents */

/* "jobs.0.faultline.pool.hit_ratio": keys and array indexes by dots. */
json_t *judge_jpath(json_t *o, const char *path)
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
bool judge_jnum(json_t *doc, const char *path, double *v)
{
	json_t *x = judge_jpath(doc, path);

	if (!x || !json_is_number(x))
		return false;
	*v = json_number_value(x);
	return true;
}

double judge_run_seconds(json_t *doc)
{
	double ms;

	return judge_jnum(doc, "faultline.duration_ms", &ms) && ms > 0 ? ms / 1000.0 : NAN;
}

double judge_job_seconds(json_t *doc)
{
	double ns;

	return judge_jnum(doc, "jobs.0.faultline.runtime_ns", &ns) && ns > 0 ? ns / 1e9 : NAN;
}

/* Reads and writes per second. */
bool judge_doc_iops(json_t *doc, double *v)
{
	double r = 0, w = 0;
	bool ok = judge_jnum(doc, "jobs.0.read.iops", &r);

	ok |= judge_jnum(doc, "jobs.0.write.iops", &w);
	*v = r + w;
	return ok;
}

/* The p99 latency of the job's reads (of its writes when it read
 * nothing), microseconds. */
bool judge_doc_p99_us(json_t *doc, double *v)
{
	double n = 0;
	const char *dir = judge_jnum(doc, "jobs.0.read.total_ios", &n) && n > 0 ? "read" : "write";
	char path[64];
	json_t *p;

	snprintf(path, sizeof(path), "jobs.0.%s.lat_ns.percentile", dir);
	p = json_object_get(judge_jpath(doc, path), "99.000000");
	if (!json_is_number(p))
		return false;
	*v = json_number_value(p) / 1000.0;
	return true;
}

/* ------------------------------------------------------------------ */
/* Evidence: a number, where it came from */

/* TLB shootdowns per second: the IPIs the job's tasks sent,
 * else every shootdown on the host during the run (/proc/interrupts). */
struct judge_ev judge_ev_tlb(json_t *doc)
{
	struct judge_ev e = { 0 };
	double n, s;

	if (judge_jnum(doc, "jobs.0.faultline.events.tlb_ipi", &n) && !isnan(s = judge_job_seconds(doc))) {
		e = (struct judge_ev){ true, n / s, "sent by the job's threads", "job" };
	} else if (judge_jnum(doc, "faultline.system.tlb_shootdowns", &n) && !isnan(s = judge_run_seconds(doc))) {
		e = (struct judge_ev){ true, n / s, "system-wide, every process on the host", "system" };
	}
	return e;
}

/* Reclaim the job's own threads did: direct and cgroup reclaim entries
 * of its tasks, else pages scanned outside kswapd, host-wide
 * (pgscan_anon+file, cgroup reclaim included, less pgscan_kswapd). */
struct judge_ev judge_ev_direct(json_t *doc, bool *pages)
{
	struct judge_ev e = { 0 };
	double a, b, s;

	*pages = false;
	if (judge_jnum(doc, "jobs.0.faultline.events.direct_reclaim", &a) &&
	    judge_jnum(doc, "jobs.0.faultline.events.memcg_reclaim", &b) && !isnan(s = judge_job_seconds(doc)))
		return (struct judge_ev){ true, (a + b) / s, "entries into reclaim by the job's threads", "job" };
	s = judge_run_seconds(doc);
	if (isnan(s))
		return e;
	*pages = true;
	if (judge_jnum(doc, "faultline.system.pgscan_all", &a) && judge_jnum(doc, "faultline.system.pgscan_kswapd", &b))
		return (struct judge_ev){ true, (a > b ? a - b : 0) / s,
				    "pages scanned by direct and cgroup reclaim, system-wide", "system" };
	if (judge_jnum(doc, "faultline.system.pgscan_direct", &a))
		return (struct judge_ev){ true, a / s, "pages scanned by direct reclaim, system-wide", "system" };
	return e;
}

struct judge_ev judge_ev_kswapd(json_t *doc)
{
	double c, s = judge_run_seconds(doc);

	if (!judge_jnum(doc, "faultline.system.kswapd_cpu_s", &c) || isnan(s))
		return (struct judge_ev){ 0 };
	return (struct judge_ev){ true, 100.0 * c / s, "kswapd CPU, system-wide", "system" };
}

/* Bytes brought in per byte asked for: the job's page-cache additions
 * else the device's reads while it ran (every process's). */
struct judge_ev judge_ev_read_amp(json_t *doc)
{
	double a;

	if (judge_jnum(doc, "jobs.0.faultline.events.pgcache_read_amplification", &a))
		return (struct judge_ev){ true, a, "pages the job added to the page cache", "job" };
	if (judge_jnum(doc, "jobs.0.faultline.read_amplification", &a))
		return (struct judge_ev){ true, a, "device bytes read, every process's", "device" };
	return (struct judge_ev){ 0 };
}

struct judge_ev judge_ev_majflt_per_op(json_t *doc)
{
	double m, ops;

	if (judge_jnum(doc, "jobs.0.faultline.events.major_faults", &m) && judge_jnum(doc, "jobs.0.faultline.ops", &ops) && ops > 0)
		return (struct judge_ev){ true, m / ops, "the job's threads", "job" };
	if (judge_jnum(doc, "jobs.0.faultline.major_faults", &m) && judge_jnum(doc, "jobs.0.faultline.ops", &ops) && ops > 0)
		return (struct judge_ev){ true, m / ops, "the job's threads (/proc)", "job" };
	return (struct judge_ev){ 0 };
}
