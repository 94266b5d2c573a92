/*
 * runwrites.c - what a job that writes did, into its result: writes,
 * flushes and their latencies (with the workers' exact extremes), and
 * the read-back's tally (verify), which fails the job unless
 * continue_on_error says otherwise. Split from run.c, which collects the
 * rest of a job's result.
 */
#include "run/runwrites.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/verify.h"

/* The exact extremes the workers saw, not bucket bounds, into @h. */
static void exact_extremes(struct hist *h, const struct crew *c, size_t off)
{
	h->min = UINT64_MAX;
	h->max = 0;
	for (unsigned i = 0; i < c->nworkers && h->n; i++) {
		const struct hist *s = (const struct hist *)((const char *)&c->wk.stats[i] + off);

		if (s->n && s->min < h->min)
			h->min = s->min;
		if (s->max > h->max)
			h->max = s->max;
	}
	if (!h->n)
		h->min = 0;
}

/* Writes, flushes and the read-back of a job that writes. */
void run_collect_writes(const struct job_run *jr, const struct thread_stats *base,
			struct job_result *res)
{
	const struct crew *c = &jr->crew;
	struct write_result *w;
	struct hist tmp;

	w = res->w = calloc(1, sizeof(*res->w));
	if (!w)
		return;
	hist_init(&w->lat);
	hist_init(&w->sync_lat);
	hist_init(&w->trim_lat);
	w->verify = job_verifies(jr->job);
	w->verify_complete = w->verify;
	for (unsigned i = 0; i < c->nworkers; i++) {
		const struct thread_stats *s = &c->wk.stats[i];
		const struct thread_stats *b = &base[i];

		w->ops += s->wops - b->wops;
		w->bytes += s->wbytes - b->wbytes;
		w->syncs += s->syncs - b->syncs;
		hist_diff(&tmp, &s->wlat, &b->wlat);
		hist_merge(&w->lat, &tmp);
		hist_diff(&tmp, &s->slat, &b->slat);
		hist_merge(&w->sync_lat, &tmp);
		w->trims += s->tops - b->tops;
		w->trim_bytes += s->tbytes - b->tbytes;
		hist_diff(&tmp, &s->tlat, &b->tlat);
		hist_merge(&w->trim_lat, &tmp);
		if (!w->verify)
			continue;
		if (!STAT_LOAD(&s->verify_done))
			w->verify_complete = false;
		w->verify_blocks += s->verify.blocks;
		if (s->verify.bad && (!w->verify_bad || s->verify.first_target < w->verify_first_target ||
				      (s->verify.first_target == w->verify_first_target &&
				       s->verify.first_off < w->verify_first_off))) {
			w->verify_first_target = s->verify.first_target;
			w->verify_first_off = s->verify.first_off;
			w->verify_first_code = s->verify.first_code;
		}
		w->verify_bad += s->verify.bad;
	}
	exact_extremes(&w->lat, c, offsetof(struct thread_stats, wlat));
	exact_extremes(&w->sync_lat, c, offsetof(struct thread_stats, slat));
	exact_extremes(&w->trim_lat, c, offsetof(struct thread_stats, tlat));
	/* A block that did not read back as written fails the job (as fio's
	 * verify does, with its errno EILSEQ), unless it failed already. */
	if (w->verify_bad && !res->error && jr->job->continue_on_error != COE_VERIFY &&
	    jr->job->continue_on_error != COE_ALL) {
		res->error = EILSEQ;
		snprintf(res->errmsg, sizeof(res->errmsg),
			 "verify: %llu of %llu blocks read back bad; the first: %s offset %llu: %s",
			 (unsigned long long)w->verify_bad, (unsigned long long)w->verify_blocks,
			 w->verify_first_target < jr->ntargets ? jr->targets[w->verify_first_target].path : "?",
			 (unsigned long long)w->verify_first_off, verify_code_name(w->verify_first_code));
	}
}

/* What run control did to job @j: ran at all, steady state's window. */
