/*
 * verdict_out.c - the verdict's writers: the plan and the
 * verdict as text, verdict.json with every number the text rests on and
 * every run's job text and command, and verdict.html, which a Python
 * helper (plot/verdict-html) draws from verdict.json and the CSV so the
 * figures come from matplotlib like faultline-plot's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "out/outfile.h"
#include "verdict/verdict_out.h"

#define MIB (1024.0 * 1024.0)

void verdict_out_command(const struct verdict_data *d, const struct verdict_line *l, char *buf,
			 size_t len)
{
	snprintf(buf, len, "%s --output-format=json %s.job", d->self, l->name);
}

/* "mem_limit 32 MiB, 2 threads x depth 1": what a cell runs. */
static void cell_ran(const struct verdict_line *l, char *buf, size_t len)
{
	char mem[64];

	if (!l->ran.known) {
		snprintf(buf, len, "?");
		return;
	}
	if (!strcmp(l->ran.mem_kind, "reserve_mem"))
		snprintf(mem, sizeof(mem), "reserve_mem leaving %.0f MiB", l->ran.mem / MIB);
	else if (l->ran.mem_kind[0])
		snprintf(mem, sizeof(mem), "%s %.0f MiB", l->ran.mem_kind, l->ran.mem / MIB);
	else
		snprintf(mem, sizeof(mem), "no cache");
	snprintf(buf, len, "%s, %u thread%s x depth %u", mem, l->ran.threads,
		 l->ran.threads == 1 ? "" : "s", l->ran.depth);
}

/* Per workload, what each of its cells runs (the first round's; every
 * round runs the same). */
static void plan_cells(FILE *f, const struct verdict_data *d, unsigned wi)
{
	const char *sep = "";

	fprintf(f, "plan:   cells:");
	for (unsigned i = 0; i < d->nlines; i++) {
		const struct verdict_line *l = &d->lines[i];
		char ran[128];

		if (l->wl != wi || l->round)
			continue;
		cell_ran(l, ran, sizeof(ran));
		fprintf(f, "%s %s [%s]", sep, judge_engine_key(l->e), ran);
		sep = ";";
	}
	fprintf(f, "\n");
}

static const char *judged_by(const struct judge_wl *wl)
{
	if (wl->by == JB_TIME)
		return "judged by the time to replay all of it, each stream at depth 1 as traced";
	if (wl->paced)
		return "judged at the trace's own pace: p99 latency among the engines that keep up";
	return wl->by == JB_P99 ? "judged by p99 latency at its rate" :
	       wl->by == JB_MIBS ? "judged by MiB/s" : "judged by IOPS";
}

void verdict_out_plan(FILE *f, const struct verdict_data *d)
{
	const struct verdict_plan *p = &d->plan;

	fprintf(f, "faultline verdict: mmap or a buffer pool, on this host\n");
	if (p->jobfile && !p->target_ours)
		/* No scratch file: each job reads its own (the cells say how
		 * much memory each has). */
		fprintf(f, "plan: budget %.0f s; memory budget %.0f MiB for jobs that set none, %s; "
			"targets: each job's own files (%s first)\n", p->budget_ns / 1e9, p->mem / MIB,
			p->cgroup ? "a memory cgroup (mem_limit) for mmap and buffered writes" : "reserve_mem",
			p->target);
	else
		fprintf(f, "plan: budget %.0f s; memory budget %.0f MiB, %s; target %s, %.0f MiB read%s\n",
			p->budget_ns / 1e9, p->mem / MIB,
			p->cgroup ? "a memory cgroup (mem_limit) for mmap and buffered writes" : "reserve_mem",
			p->target, p->file_size / MIB,
			p->target_ours ? (p->target_existed ? " (scratch file, reused)"
							    : " (scratch file, laid out first)")
				       : " (read-only)");
	if (!p->cgroup)
		fprintf(f, "plan: reserve_mem=%.0f MiB instead of a cgroup: %s\n", p->reserve / MIB,
			p->memory_why);
	if (p->jobfile) {
		fprintf(f, "plan: the jobs of %s, each a workload with its options as written (a file's "
			"trace streams one, replayed together); %u cells "
			"per round: mmap normal, mmap random, bufpool%s, io_uring O_DIRECT at depth 1 per "
			"thread and at the probed depth, and pwrite for jobs that write\n", p->jobfile,
			p->cells_per_round, p->vmcache ? ", vmcache" : "");
		for (unsigned i = 0; i < d->nwl; i++) {
			const struct verdict_wl *w = &d->wls[i];

			if (w->skip[0]) {
				fprintf(f, "plan: %s: not judged: %s\n", w->jw.name, w->skip);
				continue;
			}
			fprintf(f, "plan: %s: memory %.0f MiB (%s), %s\n", w->jw.name, w->mem / MIB,
				w->mem_own ? "the job's own" : "the verdict's", judged_by(&w->jw));
			plan_cells(f, d, i);
		}
	} else {
		fprintf(f, "plan: %u thread%s (one per CPU); %u cells per round: uniform, zipf and scan x "
			"{mmap normal, mmap random, bufpool%s, io_uring O_DIRECT at depth 1 per thread, "
			"io_uring O_DIRECT at the probed depth in one thread}%s, the async-hazard loop x "
			"{mmap, io_uring}\n", p->threads, p->threads == 1 ? "" : "s", p->cells_per_round,
			p->vmcache ? ", vmcache" : "",
			p->writes ? ", the write mix x {mmap+msync, bufpool, pwrite+fdatasync}" : "");
		for (unsigned i = 0; i < d->nwl; i++)
			if (!d->wls[i].skip[0]) {
				fprintf(f, "plan: %s:\n", d->wls[i].jw.name);
				plan_cells(f, d, i);
			}
		if (!p->writes)
			fprintf(f, "plan: no write mix: %s\n", p->writes_why);
		fprintf(f, "plan: the scan's buffer pool reads %u pages of 128 KiB ahead (%.0f KiB, the "
			"device's read-ahead for mmap, at most half the pool)\n", p->pool_prefetch,
			p->ra_bytes / 1024.0);
	}
	fprintf(f, "plan: %u round%s (engines in alternating order), each run %u s ramp + %u s "
		"measured; estimated %.0f s (%.1f s set-up per run, %.0f s to lay out the file, "
		"%.1f s to probe the device's queue depth, %.0f s for the report, assumed)\n",
		p->rounds, p->rounds == 1 ? "" : "s", p->ramp_s, p->runtime_s, p->est_s,
		p->overhead_s, p->layout_s, p->probe_s, p->post_s);
	fflush(f);
}

void verdict_out_text(FILE *f, const struct verdict_data *d)
{
	fprintf(f, "\n== the verdict (%.0f s)%s\n", d->elapsed_s,
		d->interrupted ? " - interrupted, from the runs that finished" : "");
	/* The answer first, a line per workload; then what it rests on. */
	for (unsigned w = 0; w < d->nwl; w++)
		if (d->res[w].ran)
			fprintf(f, "%s\n", d->res[w].headline);
		else if (d->wls[w].skip[0])
			fprintf(f, "%s: not judged: %s.\n", d->wls[w].jw.name, d->wls[w].skip);
	for (unsigned w = 0; w < d->nwl; w++) {
		const struct judge_result *r = &d->res[w];

		if (!r->ran)
			continue;
		fprintf(f, "\n-- %s\n", r->wl.name);
		for (int e = 0; e < JE_NR; e++)
			if (r->e[e].ok)
				fprintf(f, "    %-30s %-32s %10.*f %s (median of %u%s)%s%s%s%s\n",
					judge_engine_name(e), r->e[e].conc, r->wl.by == JB_TIME ? 2 : 0,
					r->e[e].median, judge_unit(&r->wl), r->e[e].n,
					r->e[e].n > 1 ? " rounds" : " round",
					r->e[e].behind ? (r->wl.paced ? ", did not keep up" : ", behind the rate") : "",
					r->e[e].ncut ? ", cut short: estimated from its rate" : "",
					r->e[e].mark[0] ? ", not in the answer: " : "", r->e[e].mark);
		for (unsigned i = 0; i < r->nsent; i++)
			fprintf(f, "  - %s\n", r->sent[i].text);
	}
	if (d->nfacts) {
		fprintf(f, "\nhost facts that change the answer:\n");
		for (unsigned i = 0; i < d->nfacts; i++)
			fprintf(f, "  - %s\n", d->facts[i].text);
	}
	fprintf(f, "\nfiles: %s, %s, %s\n", d->json_path, d->csv_path, d->html_path);
	fflush(f);
}

static json_t *jnum_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *sentences(const struct judge_sentence *s, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:o, s:o, s:s, s:s}", "key", s[i].key,
						   "value", jnum_or_null(s[i].value),
						   "threshold", jnum_or_null(s[i].threshold),
						   "source", s[i].source, "text", s[i].text));
	return a;
}

static json_t *plan_object(const struct verdict_plan *p)
{
	json_t *o = json_pack("{s:f, s:I, s:I, s:s, s:I, s:s, s:i, s:i, s:i, s:i, s:i, s:b, s:s, s:f, s:f, s:f, s:s, s:b}",
			 "budget_s", p->budget_ns / 1e9, "memory_budget_bytes", (json_int_t)p->mem,
			 "file_bytes", (json_int_t)p->file_size,
			 "memory_limit", p->cgroup ? "mem_limit" : "reserve_mem",
			 "reserve_mem_bytes", (json_int_t)(p->cgroup ? 0 : p->reserve),
			 "memory_why", p->memory_why, "threads", p->threads, "rounds", p->rounds,
			 "ramp_s", p->ramp_s, "runtime_s", p->runtime_s,
			 "cells_per_round", p->cells_per_round, "writes", p->writes,
			 "writes_why", p->writes_why, "overhead_s_assumed", p->overhead_s,
			 "layout_s_assumed", p->layout_s, "estimated_s", p->est_s,
			 "target", p->target, "scratch", p->target_ours);

	if (!o)
		return NULL;
	json_object_set_new(o, "io_uring_depth", json_integer(p->depth));
	json_object_set_new(o, "io_uring_depth_why", json_string(p->depth_why));
	json_object_set_new(o, "pool_prefetch", json_integer(p->pool_prefetch));
	json_object_set_new(o, "probe_s_assumed", json_real(p->probe_s));
	json_object_set_new(o, "vmcache", json_boolean(p->vmcache));
	json_object_set_new(o, "jobfile", p->jobfile ? json_string(p->jobfile) : json_null());
	/* With job files each cell's threads are its job's (the cells say). */
	if (p->jobfile)
		json_object_set_new(o, "threads", json_null());
	return o;
}

/* What each cell ran, the first round's (every round runs the same). */
static json_t *cells_array(const struct verdict_data *d)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < d->nlines; i++) {
		const struct verdict_line *l = &d->lines[i];

		if (l->round)
			continue;
		json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}",
			"workload", d->wls[l->wl].jw.key, "engine", judge_engine_key(l->e),
			"memory_limit", l->ran.known && l->ran.mem_kind[0] ? json_string(l->ran.mem_kind)
									   : json_null(),
			"memory_bytes", l->ran.known && l->ran.mem_kind[0] ? json_integer((json_int_t)l->ran.mem)
									   : json_null(),
			"threads", l->ran.known ? json_integer(l->ran.threads) : json_null(),
			"iodepth", l->ran.known ? json_integer(l->ran.depth) : json_null()));
	}
	return a;
}

static json_t *host_object(const struct judge_host *h)
{
	json_t *o = json_object();

	json_object_set_new(o, "cpus", json_integer(h->ncpus));
	json_object_set_new(o, "thp", h->thp[0] ? json_string(h->thp) : json_null());
	json_object_set_new(o, "read_ahead_kb", h->read_ahead_kb >= 0 ? json_integer(h->read_ahead_kb)
								      : json_null());
	json_object_set_new(o, "device", h->dev[0] ? json_string(h->dev) : json_null());
	json_object_set_new(o, "rotational", h->rotational < 0 ? json_null() : json_boolean(h->rotational));
	json_object_set_new(o, "virtualisation", h->virt[0] ? json_string(h->virt) : json_null());
	return o;
}

static const char *by_name(enum judge_by by)
{
	return by == JB_P99 ? "p99_us" : by == JB_MIBS ? "mib_s" : by == JB_TIME ? "time_s" : "iops";
}

/* An engine's figures by the measure that decided (rank_unit). */
static json_t *rank_object(const struct judge_result *r, const struct judge_engine_result *er)
{
	bool iops = r->wl.by == JB_P99 && r->none_held;
	double lo = INFINITY, hi = -INFINITY;
	json_t *v = json_array();

	for (unsigned k = 0; k < r->rounds && k < JUDGE_MAX_ROUNDS; k++) {
		double x = iops ? er->iops[k] : er->v[k];

		json_array_append_new(v, jnum_or_null(x));
		if (!isnan(x)) {
			lo = fmin(lo, x);
			hi = fmax(hi, x);
		}
	}
	return json_pack("{s:o, s:o, s:o, s:o}", "median", jnum_or_null(iops ? er->iops_median : er->median),
			 "lo", jnum_or_null(lo), "hi", jnum_or_null(hi), "per_round", v);
}

static json_t *workload_object(const struct verdict_data *d, const struct verdict_wl *vw,
			       const struct judge_result *r)
{
	json_t *o = json_object(), *eng = json_object();
	const struct judge_wl *wl = &vw->jw;

	json_object_set_new(o, "key", json_string(wl->key));
	json_object_set_new(o, "name", json_string(wl->name));
	json_object_set_new(o, "source", json_string(wl->kind == JW_JOB ? "job" : "matrix"));
	json_object_set_new(o, "unit", json_string(judge_unit(wl)));
	json_object_set_new(o, "by", json_string(by_name(wl->by)));
	json_object_set_new(o, "better", json_string(judge_lower_better(r) ? "lower" : "higher"));
	json_object_set_new(o, "paced", json_boolean(wl->paced));
	json_object_set_new(o, "streams", wl->replay ? json_integer(wl->streams ? wl->streams : 1) : json_null());
	json_object_set_new(o, "trace_ios", wl->replay && wl->trace_ios > 0 ? json_real(wl->trace_ios)
									    : json_null());
	/* The measure that decided: with a rate no engine held, delivered
	 * IOPS; else the workload's own. */
	json_object_set_new(o, "rank_unit", json_string(wl->by == JB_P99 && r->none_held ? "IOPS"
											  : judge_unit(wl)));
	json_object_set_new(o, "rate_iops", wl->by == JB_P99 ? jnum_or_null(r->rate) : json_null());
	json_object_set_new(o, "rate_held_by_none", json_boolean(r->none_held));
	json_object_set_new(o, "memory_budget_bytes", json_integer((json_int_t)vw->mem));
	json_object_set_new(o, "skipped", vw->skip[0] ? json_string(vw->skip) : json_null());
	json_object_set_new(o, "rounds", json_integer(r->rounds));
	json_object_set_new(o, "winner", r->winner >= 0 ? json_string(judge_engine_key(r->winner)) : json_null());
	json_object_set_new(o, "runner_up", r->runner_up >= 0 ? json_string(judge_engine_key(r->runner_up))
							    : json_null());
	json_object_set_new(o, "ratio", r->runner_up >= 0 ? jnum_or_null(r->ratio) : json_null());
	json_object_set_new(o, "ratio_lo", r->runner_up >= 0 ? jnum_or_null(r->ratio_lo) : json_null());
	json_object_set_new(o, "ratio_hi", r->runner_up >= 0 ? jnum_or_null(r->ratio_hi) : json_null());
	json_object_set_new(o, "ratio_rounds", json_integer(r->ratio_n));
	json_object_set_new(o, "tie", json_boolean(r->tie));
	json_object_set_new(o, "headline", json_string(r->headline));
	for (int e = 0; e < JE_NR; e++) {
		const struct judge_engine_result *er = &r->e[e];
		json_t *v, *x;

		if (!judge_engine_in(wl, e))
			continue;
		v = json_array();
		for (unsigned k = 0; k < r->rounds && k < JUDGE_MAX_ROUNDS; k++)
			json_array_append_new(v, jnum_or_null(er->v[k]));
		x = json_pack("{s:s, s:b, s:o, s:o, s:o, s:o, s:o}", "name", judge_engine_name(e),
			      "ok", er->ok, "median", er->ok ? jnum_or_null(er->median) : json_null(),
			      "lo", er->ok ? jnum_or_null(er->lo) : json_null(),
			      "hi", er->ok ? jnum_or_null(er->hi) : json_null(), "per_round", v,
			      "error", er->ok || !er->err[0] ? json_null() : json_string(er->err));
		json_object_set_new(x, "concurrency", er->conc[0] ? json_string(er->conc) : json_null());
		json_object_set_new(x, "ranked", json_boolean(judge_ranked(r, e)));
		json_object_set_new(x, "whatif", er->mark[0] ? json_string(er->mark) : json_null());
		json_object_set_new(x, "rounds_cut_short", json_integer(er->ncut));
		json_object_set_new(x, "rank", er->ok ? rank_object(r, er) : json_null());
		json_object_set_new(x, "iops", er->ok ? jnum_or_null(er->iops_median) : json_null());
		if (wl->by == JB_P99 && er->ok && er->behind) {
			char b[96];

			snprintf(b, sizeof(b), "%s: %.0f of %.0f IOPS, %.0f%% short",
				 wl->paced ? "did not keep up with the trace" : "behind the rate",
				 er->iops_median, r->rate, er->short_pct);
			json_object_set_new(x, "behind", json_string(b));
		} else {
			json_object_set_new(x, "behind", json_null());
		}
		json_object_set_new(eng, judge_engine_key(e), x);
	}
	json_object_set_new(o, "engines", eng);
	json_object_set_new(o, "evidence", sentences(r->sent, r->nsent));
	(void)d;
	return o;
}

static json_t *line_object(const struct verdict_data *d, const struct verdict_line *l)
{
	char cmd[1024], why[200];
	double v = NAN;
	json_t *o;

	const struct judge_wl *wl = &d->wls[l->wl].jw;

	verdict_out_command(d, l, cmd, sizeof(cmd));
	if (!l->skipped[0] && !judge_metric(wl, l->doc, &v, why, sizeof(why)))
		v = NAN;
	o = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:o, s:s, s:o}",
		      "job", l->name, "workload", wl->key, "engine", judge_engine_key(l->e),
		      "round", l->round + 1, "job_text", l->text ? l->text : "", "command", cmd,
		      "unit", judge_unit(wl), "value", jnum_or_null(v),
		      "skipped", l->skipped, "elapsed_s", l->skipped[0] ? json_null() : json_real(l->elapsed_s));
	/* The run's own document, as `faultline --output-format=json` gives it. */
	json_object_set(o, "result", l->doc ? l->doc : json_null());
	return o;
}

static json_t *build(const struct verdict_data *d)
{
	json_t *doc = json_object(), *w = json_array(), *lines = json_array();

	json_object_set_new(doc, "command", json_string(d->cmdline));
	json_object_set_new(doc, "elapsed_s", json_real(d->elapsed_s));
	json_object_set_new(doc, "interrupted", json_boolean(d->interrupted));
	json_object_set_new(doc, "plan", plan_object(&d->plan));
	json_object_set_new(json_object_get(doc, "plan"), "cells", cells_array(d));
	json_object_set_new(doc, "host", host_object(&d->host));
	json_object_set_new(doc, "check_system", d->checksys ? json_incref(d->checksys) : json_null());
	for (unsigned i = 0; i < d->nwl; i++)
		if (d->res[i].ran || d->wls[i].skip[0])
			json_array_append_new(w, workload_object(d, &d->wls[i], &d->res[i]));
	json_object_set_new(doc, "workloads", w);
	json_object_set_new(doc, "host_facts", sentences(d->facts, d->nfacts));
	for (unsigned i = 0; i < d->nlines; i++)
		json_array_append_new(lines, line_object(d, &d->lines[i]));
	json_object_set_new(doc, "lines", lines);
	json_object_set_new(doc, "csv", json_string(d->csv_path));
	return doc;
}

int verdict_out_json(const struct verdict_data *d, struct err *e)
{
	struct outfile o = { 0 };
	json_t *doc = build(d);
	int ret;

	if (!doc)
		return err_set(e, ENOMEM, "verdict.json: out of memory");
	ret = outfile_open(&o, d->json_path, e);
	if (ret) {
		json_decref(doc);
		return ret;
	}
	if (json_dumpf(doc, o.f, JSON_INDENT(1) | JSON_REAL_PRECISION(8)) || fputc('\n', o.f) == EOF) {
		json_decref(doc);
		outfile_abort(&o);
		return err_set(e, EIO, "%s: write failed", d->json_path);
	}
	json_decref(doc);
	return outfile_commit(&o, e);
}

int verdict_out_html(const struct verdict_data *d, const char *plot_dir, struct err *e)
{
	char helper[1024];
	pid_t pid;
	int st;

	snprintf(helper, sizeof(helper), "%s/verdict-html", plot_dir);
	if (access(helper, X_OK))
		return err_set(e, errno, "%s: %s (the HTML report's helper)", helper, strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return err_set(e, errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		execl(helper, helper, d->json_path, d->csv_path, "-o", d->html_path, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return err_set(e, errno, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return err_set(e, EIO, "%s failed (status %d): %s not written", helper,
			       WIFEXITED(st) ? WEXITSTATUS(st) : -1, d->html_path);
	return 0;
}
