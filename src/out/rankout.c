/*
 * rankout.c - what rank 0 of an MPI launch writes; see rankout.h.
 */
#include "out/rankout.h"

#include <stdlib.h>
#include <string.h>

#include "out/json_out.h"
#include "out/report.h"

static int nlost(const struct rank_outputs *o)
{
	int n = 0;

	for (int r = 0; o->lost && r < o->nranks; r++)
		n += o->lost[r];
	return n;
}

int rankout_report(FILE *f, const struct rank_outputs *o)
{
	for (int r = 0; r < o->nranks; r++) {
		fprintf(f, "==== rank %d of %d, on %s ====\n", r, o->nranks, o->hosts[r]);
		if (o->lost && o->lost[r])
			fputs("(lost: rank 0 stopped hearing from it; its rows end there)\n", f);
		else
			fputs(o->normal[r] ? o->normal[r] : "(no summary reached rank 0)\n", f);
		fputc('\n', f);
	}
	if (nlost(o))
		fprintf(f, "==== all %d ranks but the %d lost: counts", o->nranks, nlost(o));
	else
		fprintf(f, "==== all %d ranks: counts", o->nranks);
	fprintf(f, " and rates summed, runtime the longest, "
		"latency from the merged histograms ====\n");
	return report_jobs(f, &o->agg);
}

static void tag(json_t *job, json_t *rank, const char *host)
{
	json_t *fl = json_object_get(job, "faultline");

	if (!json_is_object(fl)) {
		fl = json_object();
		json_object_set_new(job, "faultline", fl);
	}
	json_object_set_new(fl, "rank", rank);
	json_object_set_new(fl, "host", host ? json_string(host) : json_null());
}

json_t *rankout_json(const struct rank_outputs *o)
{
	json_t *root, *jobs, *ranks, *disks, *agg, *fl, *lost;
	size_t i;
	json_t *v;

	root = o->json[0] ? json_deep_copy(o->json[0]) : json_object();
	jobs = json_array();
	ranks = json_array();
	disks = json_array();
	lost = json_array();
	if (!root || !jobs || !ranks || !disks || !lost)
		goto oom;
	for (int r = 0; r < o->nranks; r++) {
		json_t *doc = o->json[r], *rk = json_object(), *rfl;

		if (!rk)
			goto oom;
		json_object_set_new(rk, "rank", json_integer(r));
		json_object_set_new(rk, "host", json_string(o->hosts[r]));
		rfl = doc ? json_object_get(doc, "faultline") : NULL;
		json_object_set(rk, "host_facts", rfl ? json_object_get(rfl, "host") : json_null());
		json_object_set(rk, "system", rfl ? json_object_get(rfl, "system") : json_null());
		json_object_set(rk, "interrupted", rfl ? json_object_get(rfl, "interrupted") : json_null());
		json_object_set_new(rk, "lost", json_boolean(o->lost && o->lost[r]));
		json_array_append_new(ranks, rk);
		if (o->lost && o->lost[r])
			json_array_append_new(lost, json_pack("{s:i, s:s}", "rank", r, "host", o->hosts[r]));
		if (!doc)
			continue;
		json_array_foreach(json_object_get(doc, "jobs"), i, v) {
			json_t *c = json_deep_copy(v);

			tag(c, json_integer(r), o->hosts[r]);
			json_array_append_new(jobs, c);
		}
		json_array_foreach(json_object_get(doc, "disk_util"), i, v) {
			json_t *c = json_deep_copy(v);

			json_object_set_new(c, "rank", json_integer(r));
			json_object_set_new(c, "host", json_string(o->hosts[r]));
			json_array_append_new(disks, c);
		}
	}
	agg = json_out_build(&o->agg, o->json_flags);
	if (!agg)
		goto oom;
	json_array_foreach(json_object_get(agg, "jobs"), i, v) {
		json_t *c = json_deep_copy(v);

		tag(c, json_string("all"), NULL);
		json_object_set_new(json_object_get(c, "faultline"), "nranks", json_integer(o->nranks));
		json_array_append_new(jobs, c);
	}
	json_decref(agg);
	json_object_set_new(root, "jobs", jobs);
	json_object_set_new(root, "disk_util", disks);
	fl = json_object_get(root, "faultline");
	if (!json_is_object(fl)) {
		fl = json_object();
		json_object_set_new(root, "faultline", fl);
	}
	json_object_set_new(fl, "nranks", json_integer(o->nranks));
	json_object_set_new(fl, "ranks", ranks);
	json_object_set_new(fl, "lost_ranks", lost);
	return root;
oom:
	json_decref(root);
	json_decref(jobs);
	json_decref(ranks);
	json_decref(disks);
	json_decref(lost);
	return NULL;
}

void rankout_free(struct rank_outputs *o)
{
	for (int r = 0; r < o->nranks; r++) {
		if (o->hosts)
			free(o->hosts[r]);
		if (o->normal)
			free(o->normal[r]);
		if (o->json)
			json_decref(o->json[r]);
	}
	free(o->hosts);
	free(o->lost);
	free(o->normal);
	free(o->json);
	free(o->agg.jobs);
	free(o->agg_w);
	memset(o, 0, sizeof(*o));
}

void rankout_note(FILE *f, const struct rank_note *n)
{
	const struct rank_stats *s = n->stats;

	switch (n->kind) {
	case RANK_NOTE_LOST:
		fprintf(f, "faultline: rank %d (%s) lost: no answer within %.0f s while %s; "
			"the run ends with what the other ranks have\n", n->rank, n->host, n->secs, n->what);
		break;
	case RANK_NOTE_ROOT_GONE:
		fprintf(f, "faultline: rank %d (%s): lost contact with rank 0: no answer within %.0f s "
			"while %s; this rank ends in %.0f s (rank 0 writes the outputs of the ranks it "
			"hears)\n", n->rank, n->host, n->secs, n->what, n->end_secs);
		break;
	case RANK_NOTE_TOO_BIG:
		fprintf(f, "faultline: rank %d (%s): %zu bytes to send at once, more than MPI counts; "
			"ending the launch\n", n->rank, n->host, n->bytes);
		break;
	case RANK_NOTE_ROOT_TOO_BIG:
		fprintf(f, "faultline: rank 0: the ranks sent %zu bytes at once, more than MPI counts\n",
			n->bytes);
		break;
	case RANK_NOTE_ROWS_OOM:
		fprintf(f, "faultline: rank 0: out of memory merging the ranks' rows; ending the launch\n");
		break;
	case RANK_NOTE_ROWS_DAMAGED:
		fprintf(f, "faultline: rank %d's rows reached rank 0 damaged; left out\n", n->rank);
		break;
	case RANK_NOTE_ROWS_DROPPED:
		fprintf(f, "faultline: rank %d: out of memory holding CSV rows; some are missing\n", n->rank);
		break;
	case RANK_NOTE_CSV_PIPE:
		fprintf(f, "faultline: the CSV reader closed the pipe; stopping the run\n");
		break;
	case RANK_NOTE_CSV_FAILED:
		fprintf(f, "faultline: warning: writing the CSV %s failed: %s; it ends at the last whole "
			"row\n", n->path, strerror(n->err));
		break;
	case RANK_NOTE_RESULTS_OOM:
		fprintf(f, "faultline: rank %d: out of memory sending results to rank 0\n", n->rank);
		break;
	case RANK_NOTE_RESULTS_DAMAGED:
		fprintf(f, "faultline: rank %d's results reached rank 0 incomplete; left out of the "
			"aggregate\n", n->rank);
		break;
	case RANK_NOTE_STATS:
		if (!s || !s->nexch)
			break;
		fprintf(f, "faultline: mpi: %d ranks, %llu exchanges: %.1f rows and %.0f bytes each, "
			"%.3f ms mean, %.3f ms max at rank 0, of which merging and writing %.3f ms mean\n",
			s->nranks, (unsigned long long)s->nexch, (double)s->rows / (double)s->nexch,
			(double)s->bytes / (double)s->nexch, (double)s->ns_sum / (double)s->nexch / 1e6,
			(double)s->ns_max / 1e6, (double)s->ns_work / (double)s->nexch / 1e6);
		break;
	}
}
