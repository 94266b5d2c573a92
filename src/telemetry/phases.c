/*
 * phases.c - the cache-full moment and the phases around it; see
 * phases.h for the rule.
 */
#include "telemetry/phases.h"

#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)
/* The unit of "per page": the paper's page, whatever the host's. */
#define PAGE_4K 4096.0

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of @v (sorted in place); @n > 0. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void phases_sum(const struct phase_row *rows, size_t from, size_t to, struct phase_stats *out)
{
	uint64_t ops = 0, bytes = 0, tlb = 0, flt = 0, dev = 0, cpu = 0, tlb_flt = 0;
	double secs = 0, tsecs = 0, fsecs = 0;
	bool tlb_ok = true, flt_ok = true, dev_ok = true, cpu_ok = true;
	double *p50 = NULL, *p99 = NULL;
	size_t nlat = 0;

	memset(out, 0, sizeof(*out));
	if (to > from) {
		p50 = malloc((to - from) * sizeof(*p50));
		p99 = malloc((to - from) * sizeof(*p99));
	}
	for (size_t i = from; i < to; i++) {
		const struct phase_row *r = &rows[i];

		if (r->ramp)
			continue;
		out->rows++;
		secs += r->dt_s;
		ops += r->ops;
		bytes += r->bytes;
		if (r->lat_ok && p50 && p99) {
			p50[nlat] = r->lat_p50_us;
			p99[nlat++] = r->lat_p99_us;
		}
		tlb_ok = tlb_ok && r->tlb_ok;
		flt_ok = flt_ok && r->flt_ok;
		if (r->tlb_ok) {
			tlb += r->tlb;
			tsecs += r->dt_s;
		}
		if (r->flt_ok) {
			flt += r->majflt;
			fsecs += r->dt_s;
		}
		if (r->tlb_ok && r->flt_ok)
			tlb_flt += r->tlb;
		dev_ok = dev_ok && r->dev_ok;
		dev += r->dev_bytes;
		cpu_ok = cpu_ok && r->cpu_ok;
		cpu += r->cpu_ns;
	}
	if (!out->rows || secs <= 0)
		goto out;
	out->ok = true;
	out->secs = secs;
	out->iops = (double)ops / secs;
	out->mib_s = (double)bytes / MIB / secs;
	if (nlat) {
		out->lat_ok = true;
		out->lat_p50_us = median(p50, nlat);
		out->lat_p99_us = median(p99, nlat);
	}
	/* A rate over the rows that had the source; a ratio only when every
	 * row had both sides, so numerator and denominator cover one span. */
	out->tlb_ok = tsecs > 0;
	out->tlb_per_s = out->tlb_ok ? (double)tlb / tsecs : 0;
	out->flt_ok = fsecs > 0;
	out->majflt_per_s = out->flt_ok ? (double)flt / fsecs : 0;
	out->ipi_ok = tlb_ok && flt_ok && flt > 0;
	out->ipi_per_majflt = out->ipi_ok ? (double)tlb_flt / (double)flt : 0;
	out->amp_ok = dev_ok && bytes > 0;
	out->read_amp = out->amp_ok ? (double)dev / (double)bytes : 0;
	out->cpu_ok = cpu_ok && bytes > 0;
	out->cpu_us_per_4k = out->cpu_ok ? (double)cpu / 1e3 / ((double)bytes / PAGE_4K) : 0;
out:
	free(p50);
	free(p99);
}

static bool at_ceiling(const struct phase_row *r, uint64_t ceil)
{
	return r->cache_ok && (double)r->cache_bytes * 100.0 >= (double)ceil * PHASES_FULL_PCT;
}

static void found_at(const struct phase_row *rows, size_t n, size_t i, struct phases *out)
{
	out->found = true;
	out->why = NULL;
	out->row = (unsigned)i;
	out->t_s = rows[i].t_s;
	out->t_job_s = rows[i].t_s - (rows[0].t_s - rows[0].dt_s);
	phases_sum(rows, 0, i + 1, &out->before);
	phases_sum(rows, i + 1, n, &out->after);
}

void phases_detect(const struct phase_row *rows, size_t n, uint64_t limit, struct phases *out)
{
	bool any_gauge = false, any_evict_src = false, any_evict = false;
	uint64_t ceil = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (rows[i].cache_ok) {
			any_gauge = true;
			if (rows[i].cache_bytes > ceil)
				ceil = rows[i].cache_bytes;
		}
		if (rows[i].evict_ok) {
			any_evict_src = true;
			any_evict = any_evict || rows[i].evicted > 0;
		}
	}
	if (limit) {
		out->by_limit = true;
		out->ceiling_bytes = limit;
		for (size_t i = 0; i < n; i++)
			if (at_ceiling(&rows[i], limit)) {
				found_at(rows, n, i, out);
				return;
			}
		out->why = any_gauge ? "the cgroup never came within 5 % of its limit: the region fits "
				       "in it, or the job read less than that"
				     : "the cgroup's usage could not be read";
		return;
	}
	out->ceiling_bytes = ceil;
	if (!any_gauge || !ceil) {
		out->why = "the host's page cache size could not be read (/proc/meminfo Cached)";
		return;
	}
	if (any_evict_src && !any_evict) {
		out->why = "nothing of the job's was evicted: the cache never filled for it";
		return;
	}
	out->by_gauge_only = !any_evict_src;
	for (size_t i = 0; i < n; i++) {
		bool evicting = out->by_gauge_only;

		if (!at_ceiling(&rows[i], ceil))
			continue;
		for (size_t k = i; !evicting && k < n && k <= i + PHASES_EVICT_LAG; k++)
			evicting = rows[k].evict_ok && rows[k].evicted > 0;
		if (evicting) {
			found_at(rows, n, i, out);
			return;
		}
	}
	out->why = "the cache was near its peak only where nothing was evicted";
}
