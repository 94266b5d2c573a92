/*
 * explain_out.c - residency, cost per page and phases in the summary and
 * the JSON; see explain_out.h. A figure whose source could not be read
 * is left out of the summary ("n/a") and null in the JSON, never 0.
 */
#include "out/explain_out.h"

#include <math.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static json_t *num(bool ok, double v)
{
	return ok && isfinite(v) ? json_real(v) : json_null();
}

static json_t *cnt(bool ok, uint64_t v)
{
	return ok ? json_integer((json_int_t)v) : json_null();
}

static void put(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v ? v : json_null());
}

static json_t *phase_json(const struct phase_stats *p)
{
	json_t *o = json_object();

	put(o, "intervals", json_integer(p->rows));
	put(o, "seconds", num(p->ok, p->secs));
	put(o, "iops", num(p->ok, p->iops));
	put(o, "bw_mib_s", num(p->ok, p->mib_s));
	put(o, "lat_p50_us", num(p->lat_ok, p->lat_p50_us));
	put(o, "lat_p99_us", num(p->lat_ok, p->lat_p99_us));
	put(o, "tlb_shootdowns_per_s", num(p->tlb_ok, p->tlb_per_s));
	put(o, "major_faults_per_s", num(p->flt_ok, p->majflt_per_s));
	put(o, "ipi_per_major_fault", num(p->ipi_ok, p->ipi_per_majflt));
	put(o, "dev_bytes_per_byte", num(p->amp_ok, p->read_amp));
	put(o, "cpu_us_per_4k", num(p->cpu_ok, p->cpu_us_per_4k));
	return o;
}

void explain_json(json_t *fj, const struct job_result *jr)
{
	const struct explain_result *x = &jr->x;
	const struct phases *ph = &x->phases;
	json_t *r = json_object(), *c, *p;
	double pg = (double)x->page_size;

	put(r, "method", x->res_method ? json_string(x->res_method) : json_null());
	put(r, "page_size", json_integer((json_int_t)x->page_size));
	put(r, "cached_pages", cnt(x->res_ok, x->cached));
	put(r, "cached_mib", num(x->res_ok, (double)x->cached * pg / MIB));
	put(r, "dirty_pages", cnt(x->res_full, x->dirty));
	put(r, "writeback_pages", cnt(x->res_full, x->writeback));
	put(r, "evicted_pages", cnt(x->res_full, x->evicted));
	put(r, "recently_evicted_pages", cnt(x->res_full, x->recently_evicted));
	put(fj, "residency", r);

	c = phase_json(&x->cost);
	put(fj, "cost", c);

	p = json_object();
	put(p, "cache", json_string(x->cgroup ? "cgroup" : "host"));
	put(p, "rule", json_string(ph->by_limit ? "limit" : ph->by_gauge_only ? "peak" : "peak+eviction"));
	put(p, "full_pct", json_integer(PHASES_FULL_PCT));
	put(p, "ceiling_mib", num(ph->ceiling_bytes > 0, (double)ph->ceiling_bytes / MIB));
	put(p, "cache_full", json_boolean(ph->found));
	put(p, "why", ph->found || !ph->why ? json_null() : json_string(ph->why));
	put(p, "t_s", num(ph->found, ph->t_s));
	put(p, "t_job_s", num(ph->found, ph->t_job_s));
	put(p, "interval", ph->found ? json_integer(ph->row + 1) : json_null());
	put(p, "before", ph->found ? phase_json(&ph->before) : json_null());
	put(p, "after", ph->found ? phase_json(&ph->after) : json_null());
	put(fj, "phases", p);
}

/* "1.2k", "38.1", "n/a" */
static const char *fmt(char *buf, size_t cap, bool ok, double v, const char *unit)
{
	if (!ok || !isfinite(v))
		snprintf(buf, cap, "n/a");
	else if (v >= 1e6)
		snprintf(buf, cap, "%.2fM%s", v / 1e6, unit);
	else if (v >= 1e4)
		snprintf(buf, cap, "%.1fk%s", v / 1e3, unit);
	else if (v >= 100)
		snprintf(buf, cap, "%.0f%s", v, unit);
	else
		snprintf(buf, cap, "%.2f%s", v, unit);
	return buf;
}

static void print_phase(FILE *f, const char *name, const struct phase_stats *p)
{
	char a[32], b[32], c[32], d[32], e[32], g[32];

	if (p->ipi_ok)
		snprintf(g, sizeof(g), "%.3f", p->ipi_per_majflt);
	else
		snprintf(g, sizeof(g), "n/a");
	fprintf(f, "      %-6s %5.1f s: IOPS=%s, BW=%s, lat p50=%s p99=%s, TLB shootdowns %s, "
		"IPIs per major fault %s\n", name, p->secs,
		fmt(a, sizeof(a), p->ok, p->iops, ""), fmt(b, sizeof(b), p->ok, p->mib_s, "MiB/s"),
		fmt(c, sizeof(c), p->lat_ok, p->lat_p50_us, "us"),
		fmt(d, sizeof(d), p->lat_ok, p->lat_p99_us, "us"),
		fmt(e, sizeof(e), p->tlb_ok, p->tlb_per_s, "/s"), g);
}

void explain_report(FILE *f, const struct job_result *jr)
{
	const struct explain_result *x = &jr->x;
	const struct phase_stats *c = &x->cost;
	const struct phases *ph = &x->phases;
	double pg = (double)x->page_size;
	char a[32], b[32], d[32];

	fprintf(f, "    cost per page: %s TLB shootdown IPIs per major fault, %s device bytes per byte "
		"read, %s CPU per 4 KiB read\n",
		c->ipi_ok ? (snprintf(a, sizeof(a), "%.3f", c->ipi_per_majflt), a) : "n/a",
		c->amp_ok ? (snprintf(b, sizeof(b), "%.3f", c->read_amp), b) : "n/a",
		fmt(d, sizeof(d), c->cpu_ok, c->cpu_us_per_4k, "us"));
	if (x->res_ok) {
		fprintf(f, "    residency (%s, at the last interval): %.1fMiB of the region cached",
			x->res_method, (double)x->cached * pg / MIB);
		if (x->res_full)
			fprintf(f, ", %.1fMiB evicted (%.1fMiB recently), %.1fMiB dirty",
				(double)x->evicted * pg / MIB, (double)x->recently_evicted * pg / MIB,
				(double)x->dirty * pg / MIB);
		fputc('\n', f);
	}
	if (!ph->found) {
		fprintf(f, "    cache full: not seen (%s cache): %s\n", x->cgroup ? "cgroup" : "host",
			ph->why ? ph->why : "?");
		return;
	}
	if (ph->by_limit)
		fprintf(f, "    cache full at t=%.2f s (%.2f s into the job), interval %u: the cgroup reached "
			"%d%% of its %.0fMiB limit\n", ph->t_s, ph->t_job_s, ph->row + 1, PHASES_FULL_PCT,
			(double)ph->ceiling_bytes / MIB);
	else
		fprintf(f, "    cache full at t=%.2f s (%.2f s into the job), interval %u: the host's page "
			"cache reached %d%% of its %.0fMiB peak%s\n", ph->t_s, ph->t_job_s, ph->row + 1,
			PHASES_FULL_PCT,
			(double)ph->ceiling_bytes / MIB,
			ph->by_gauge_only ? "" : " and eviction began");
	print_phase(f, "before", &ph->before);
	if (ph->after.ok)
		print_phase(f, "after", &ph->after);
	else
		fprintf(f, "      after: no measured interval\n");
}

void explain_warn(FILE *f, char *why)
{
	if (!why[0])
		return;
	fprintf(f, "faultline: warning: %s; its CSV cells stay empty\n", why);
	why[0] = '\0';
}

void explain_note(FILE *f, char *note)
{
	if (!note[0])
		return;
	fprintf(f, "faultline: note: %s\n", note);
	note[0] = '\0';
}
