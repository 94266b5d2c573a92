/*
 * rankresult.c - the summary and JSON of an MPI launch; see rankresult.h.
 *
 * Each rank sends rank 0 one message: its host name, its own summary
 * and JSON as text (rendered by report.c and json_out.c exactly as a
 * run without MPI would write them), and per job the counts and packed
 * histograms the aggregate is made of. Rank 0 tags every rank's JSON jobs
 * with `faultline.rank` and `faultline.host` and appends, per job, the
 * aggregate built by json_out.c from a merged struct job_result, tagged
 * `faultline.rank` = "all".
 */
#include "mpi/rankresult.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "out/json_out.h"
#include "mpi/ranks.h"
#include "out/report.h"

/* ---- a flat message ------------------------------------------------- */

struct msg {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct msg *m, const void *v, size_t n)
{
	if (m->oom || !n)
		return;
	if (m->len + n > m->cap) {
		size_t cap = (m->len + n) * 2 + 256;
		char *g = realloc(m->p, cap);

		if (!g) {
			m->oom = true;
			return;
		}
		m->p = g;
		m->cap = cap;
	}
	memcpy(m->p + m->len, v, n);
	m->len += n;
}

static void put_u64(struct msg *m, uint64_t v)
{
	put(m, &v, sizeof(v));
}

static void put_str(struct msg *m, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_u64(m, n);
	put(m, s, n);
}

static void put_hist(struct msg *m, const struct hist *h)
{
	size_t n = hist_pack(h, NULL);

	if (m->oom || m->len + n > m->cap) {
		char *tmp = malloc(n);

		if (!tmp) {
			m->oom = true;
			return;
		}
		hist_pack(h, tmp);
		put(m, tmp, n);
		free(tmp);
		return;
	}
	hist_pack(h, m->p + m->len);
	m->len += n;
}

struct rd {
	const char *p;
	size_t left;
	bool bad;
};

static uint64_t get_u64(struct rd *r)
{
	uint64_t v = 0;

	if (r->left < sizeof(v)) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, sizeof(v));
	r->p += sizeof(v);
	r->left -= sizeof(v);
	return v;
}

/* A string of the message, malloc'd. */
static char *get_str(struct rd *r)
{
	uint64_t n = get_u64(r);
	char *s;

	if (r->bad || n > r->left) {
		r->bad = true;
		return NULL;
	}
	s = malloc(n + 1);
	if (!s) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, r->p, n);
	s[n] = '\0';
	r->p += n;
	r->left -= n;
	return s;
}

static void get_hist(struct rd *r, struct hist *h)
{
	size_t n = r->bad ? 0 : hist_unpack(h, r->p, r->left);

	if (!n) {
		r->bad = true;
		hist_init(h);
		return;
	}
	r->p += n;
	r->left -= n;
}

static double u2d(uint64_t v)
{
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

static uint64_t d2u(double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	return v;
}

/* What the aggregate needs of one rank's job. */
static void put_job(struct msg *m, const struct job_result *jr)
{
	put_str(m, jr->job.name);
	put_u64(m, jr->nthreads);
	put_u64(m, jr->rops);
	put_u64(m, jr->rbytes);
	put_u64(m, jr->runtime_ns);
	put_u64(m, jr->lat_ok);
	put_hist(m, &jr->lat);
	put_u64(m, (uint64_t)jr->error);
	put_str(m, jr->errmsg);
	put_u64(m, jr->faults_ok);
	put_u64(m, jr->majflt);
	put_u64(m, jr->minflt);
	put_u64(m, jr->probe_ok);
	put_u64(m, d2u(jr->probe_per_s));
	put_u64(m, jr->w != NULL);
	if (jr->w) {
		put_u64(m, jr->w->ops);
		put_u64(m, jr->w->bytes);
		put_u64(m, jr->w->syncs);
		put_hist(m, &jr->w->lat);
		put_hist(m, &jr->w->sync_lat);
		put_u64(m, jr->w->trims);
		put_u64(m, jr->w->trim_bytes);
		put_hist(m, &jr->w->trim_lat);
	}
}

/* One rank's job as sent; @name and @w are the caller's to free. */
struct rjob {
	char *name;
	struct job_result r;
	struct write_result w;
};

static void get_job(struct rd *rd, struct rjob *j)
{
	char *msg;

	memset(j, 0, sizeof(*j));
	j->name = get_str(rd);
	j->r.nthreads = (unsigned)get_u64(rd);
	j->r.rops = get_u64(rd);
	j->r.rbytes = get_u64(rd);
	j->r.runtime_ns = get_u64(rd);
	j->r.lat_ok = get_u64(rd);
	get_hist(rd, &j->r.lat);
	j->r.error = (int)get_u64(rd);
	msg = get_str(rd);
	snprintf(j->r.errmsg, sizeof(j->r.errmsg), "%s", msg ? msg : "");
	free(msg);
	j->r.faults_ok = get_u64(rd);
	j->r.majflt = get_u64(rd);
	j->r.minflt = get_u64(rd);
	j->r.probe_ok = get_u64(rd);
	j->r.probe_per_s = u2d(get_u64(rd));
	/* Where the time went (delayacct=1) is not sent: each rank's CSV
	 * rows have it. */
	j->r.time_ok = false;
	snprintf(j->r.time_why, sizeof(j->r.time_why), "not sent between ranks: each rank's CSV rows have it");
	if (get_u64(rd)) {
		j->r.w = &j->w;
		j->w.ops = get_u64(rd);
		j->w.bytes = get_u64(rd);
		j->w.syncs = get_u64(rd);
		get_hist(rd, &j->w.lat);
		get_hist(rd, &j->w.sync_lat);
		j->w.trims = get_u64(rd);
		j->w.trim_bytes = get_u64(rd);
		get_hist(rd, &j->w.trim_lat);
		/* Who wrote its data is not sent: null, said so. */
		j->r.wb.state = WB_UNREAD;
		snprintf(j->r.wb.why, sizeof(j->r.wb.why), "not sent between ranks: the rank's own run has it");
	}
}

/* ---- the aggregate -------------------------------------------------- */

/* Merge @src into @dst, leaving out an empty histogram (whose min of 0,
 * as results carry it, would become everyone's minimum). */
static void merge_nonempty(struct hist *dst, const struct hist *src)
{
	if (src->n)
		hist_merge(dst, src);
}

void rankresult_merge_job(struct job_result *out, struct write_result *w,
			  const struct job_result *const *in, const int *ranks, const char *const *hosts,
			  unsigned n)
{
	out->nthreads = 0;
	out->rops = out->rbytes = out->runtime_ns = 0;
	out->lat_ok = n > 0;
	hist_init(&out->lat);
	out->error = 0;
	out->errmsg[0] = '\0';
	out->faults_ok = n > 0;
	out->majflt = out->minflt = 0;
	out->probe_ok = n > 0;
	out->probe_per_s = 0;
	out->w = NULL;
	if (w) {
		memset(w, 0, sizeof(*w));
		hist_init(&w->lat);
		hist_init(&w->sync_lat);
		hist_init(&w->trim_lat);
	}
	for (unsigned i = 0; i < n; i++) {
		const struct job_result *r = in[i];

		out->nthreads += r->nthreads;
		out->rops += r->rops;
		out->rbytes += r->rbytes;
		if (r->runtime_ns > out->runtime_ns)
			out->runtime_ns = r->runtime_ns;
		out->lat_ok = out->lat_ok && r->lat_ok;
		merge_nonempty(&out->lat, &r->lat);
		if (r->error && !out->error) {
			out->error = r->error;
			snprintf(out->errmsg, sizeof(out->errmsg), "rank %d (%s): %s", ranks[i], hosts[i],
				 r->errmsg);
		}
		out->faults_ok = out->faults_ok && r->faults_ok;
		out->majflt += r->majflt;
		out->minflt += r->minflt;
		out->probe_ok = out->probe_ok && r->probe_ok;
		out->probe_per_s += r->probe_per_s;
		if (w && r->w) {
			w->ops += r->w->ops;
			w->bytes += r->w->bytes;
			w->syncs += r->w->syncs;
			merge_nonempty(&w->lat, &r->w->lat);
			merge_nonempty(&w->sync_lat, &r->w->sync_lat);
			w->trims += r->w->trims;
			w->trim_bytes += r->w->trim_bytes;
			merge_nonempty(&w->trim_lat, &r->w->trim_lat);
		}
	}
	/* As collect_job reports an empty histogram. */
	if (!out->lat.n)
		out->lat.min = 0;
	if (w) {
		if (!w->lat.n)
			w->lat.min = 0;
		if (!w->sync_lat.n)
			w->sync_lat.min = 0;
		if (!w->trim_lat.n)
			w->trim_lat.min = 0;
		out->w = w;
	}
	/* Each rank's split is its own file's: no sum of them is made. */
	memset(&out->wb, 0, sizeof(out->wb));
	out->time_ok = false;
	snprintf(out->time_why, sizeof(out->time_why), "not added up over ranks: each rank's CSV rows have it");
	if (w) {
		out->wb.state = WB_UNREAD;
		snprintf(out->wb.why, sizeof(out->wb.why), "not added up over ranks: each rank's job has its own");
	}
}

/* ---- gathering ------------------------------------------------------ */

static char *render_normal(const struct run_result *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	report_normal(f, r);
	fclose(f);
	return text;
}

static int build_agg(struct rank_outputs *o, const struct run_result *mine, struct rjob **rj,
		     const unsigned *njobs, struct err *e)
{
	struct run_result *a = &o->agg;
	const struct job_result *in[o->nranks];
	const char *hosts[o->nranks];
	int rank[o->nranks];

	*a = *mine;
	a->host.hostname[0] = '\0';
	memset(&a->sys, 0, sizeof(a->sys));
	a->jobs = calloc(mine->njobs ? mine->njobs : 1, sizeof(*a->jobs));
	o->agg_w = calloc(mine->njobs ? mine->njobs : 1, sizeof(*o->agg_w));
	if (!a->jobs || !o->agg_w)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned j = 0; j < mine->njobs; j++) {
		unsigned n = 0;
		bool writes = false;

		/* Ranks run the same job files; a rank whose job j differs
		 * (a ${RANK}-made job list) is left out of j's aggregate. */
		for (int r = 0; r < o->nranks; r++) {
			if (j >= njobs[r] || strcmp(rj[r][j].name ? rj[r][j].name : "", mine->jobs[j].job.name))
				continue;
			writes |= rj[r][j].r.w != NULL;
			hosts[n] = o->hosts[r];
			rank[n] = r;
			in[n++] = &rj[r][j].r;
		}
		a->jobs[j].job = mine->jobs[j].job;
		a->jobs[j].options = mine->jobs[j].options;
		a->jobs[j].batch = mine->jobs[j].batch;
		rankresult_merge_job(&a->jobs[j], writes ? &o->agg_w[j] : NULL, in, rank, hosts, n);
	}
	return 0;
}

int rankresult_gather(const struct run_result *mine, bool want_normal, bool want_json,
		      unsigned json_flags, struct rank_outputs *o, struct err *e)
{
	struct msg m = { 0 };
	char *text, *all = NULL;
	int nr = ranks_size(), ret;
	size_t *lens = calloc((size_t)nr, sizeof(size_t));
	struct rjob **rj = NULL;
	unsigned *njobs = NULL;

	memset(o, 0, sizeof(*o));
	o->json_flags = json_flags;
	if (!lens)
		return err_set(e, ENOMEM, "out of memory");
	put_str(&m, ranks_host());
	text = want_normal ? render_normal(mine) : NULL;
	put_str(&m, text);
	free(text);
	text = want_json ? json_out_text(mine, json_flags, true) : NULL;
	put_str(&m, text);
	free(text);
	put_u64(&m, mine->njobs);
	for (unsigned j = 0; j < mine->njobs; j++)
		put_job(&m, &mine->jobs[j]);
	if (m.oom) {
		/* Still take part in the gather, with nothing. */
		m.len = 0;
		ranks_note(&(struct rank_note){ .kind = RANK_NOTE_RESULTS_OOM, .rank = ranks_rank() });
	}
	ret = ranks_gather(m.p, m.len, &all, lens, e);
	free(m.p);
	if (ret || ranks_rank() != 0)
		goto out;

	o->nranks = nr;
	o->hosts = calloc((size_t)nr, sizeof(char *));
	o->lost = calloc((size_t)nr, sizeof(bool));
	o->normal = calloc((size_t)nr, sizeof(char *));
	o->json = calloc((size_t)nr, sizeof(json_t *));
	rj = calloc((size_t)nr, sizeof(*rj));
	njobs = calloc((size_t)nr, sizeof(*njobs));
	if (!o->hosts || !o->lost || !o->normal || !o->json || !rj || !njobs) {
		ret = err_set(e, ENOMEM, "out of memory");
		goto out;
	}
	{
		size_t off = 0;

		for (int r = 0; r < nr; r++) {
			struct rd rd = { all + off, lens[r], false };
			char *js;

			off += lens[r];
			if (ranks_is_lost(r)) {
				/* Nothing of it came: named, left out of the aggregate. */
				o->lost[r] = true;
				o->hosts[r] = strdup(ranks_host_of(r));
				njobs[r] = 0;
				rj[r] = calloc(1, sizeof(**rj));
				if (!rj[r] || !o->hosts[r]) {
					ret = err_set(e, ENOMEM, "out of memory");
					goto out;
				}
				continue;
			}
			o->hosts[r] = get_str(&rd);
			o->normal[r] = get_str(&rd);
			js = get_str(&rd);
			if (js && *js)
				o->json[r] = json_loads(js, 0, NULL);
			free(js);
			njobs[r] = (unsigned)get_u64(&rd);
			if (rd.bad || njobs[r] > 1000000)
				njobs[r] = 0;
			rj[r] = calloc(njobs[r] ? njobs[r] : 1, sizeof(**rj));
			if (!rj[r]) {
				ret = err_set(e, ENOMEM, "out of memory");
				goto out;
			}
			for (unsigned j = 0; j < njobs[r] && !rd.bad; j++)
				get_job(&rd, &rj[r][j]);
			if (rd.bad) {
				ranks_note(&(struct rank_note){ .kind = RANK_NOTE_RESULTS_DAMAGED,
								.rank = r });
				njobs[r] = 0;
			}
			if (!o->hosts[r])
				o->hosts[r] = strdup("?");
		}
	}
	ret = build_agg(o, mine, rj, njobs, e);
out:
	for (int r = 0; rj && r < nr; r++) {
		for (unsigned j = 0; rj[r] && j < njobs[r]; j++)
			free(rj[r][j].name);
		free(rj[r]);
	}
	free(rj);
	free(njobs);
	free(all);
	free(lens);
	return ret;
}
