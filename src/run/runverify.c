/*
 * runverify.c - a worker's verify: the end-of-job read-back
 * (worker_verify), verify_backlog's checks while it writes, a read job's
 * check of every block it reads, the blocks' pattern (verify_pattern,
 * buffer_pattern), the state file a write job leaves (verify_state_save)
 * and the one a read job loads (verify_state_load). See worker.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/worker.h"
#include "workload/blockdata.h"
#include "workload/pattern.h"
#include "workload/vstate.h"

int work_vstate_load(struct work *wk, const struct worker *workers, unsigned nworkers,
		     struct err *e)
{
	const struct job *j = wk->job;
	char file[4096 + 64];
	int ret;

	if (!j->verify_state_load || !job_read_verifies(j))
		return 0;
	wk->vstate = calloc(nworkers ? nworkers : 1, sizeof(*wk->vstate));
	if (!wk->vstate)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned i = 0; i < nworkers; i++) {
		const struct worker *w = &workers[i];
		struct vstate *vs = &wk->vstate[i];

		vstate_file(file, sizeof(file), j->name, i);
		ret = vstate_load(file, vs, e);
		if (ret)
			return ret;
		if (strcmp(vs->name, j->name) || vs->ntargets != w->tcount)
			return err_set(e, EINVAL, "verify_state_load: %s was saved by job '%s' over "
				       "%u targets, not by this job '%s' over %u: a foreign state file",
				       file, vs->name, vs->ntargets, j->name, w->tcount);
		for (unsigned t = 0; t < w->tcount; t++) {
			const struct target *tg = &wk->ej.targets[w->tfirst + t];
			const struct vstate_target *st = &vs->t[t];

			if (strcmp(st->path, tg->path) || st->base != tg->base ||
			    st->bs != job_bs_min(j, JOB_DIR_READ))
				return err_set(e, EINVAL, "verify_state_load: %s describes %s from "
					       "offset %llu in blocks of %u, and this job reads %s from "
					       "offset %llu in blocks of %llu: a foreign state file",
					       file, st->path, (unsigned long long)st->base, st->bs,
					       tg->path, (unsigned long long)tg->base,
					       (unsigned long long)job_bs_min(j, JOB_DIR_READ));
		}
		if (vs->verify != (int)j->verify)
			return err_set(e, EINVAL, "verify_state_load: %s was saved with another "
				       "verify= checksum than this job's", file);
	}
	return 0;
}

void work_vstate_free(struct work *wk, unsigned nworkers)
{
	for (unsigned i = 0; wk->vstate && i < nworkers; i++)
		vstate_free(&wk->vstate[i]);
	free(wk->vstate);
	wk->vstate = NULL;
}

/* verify_backlog: a ring of the thread's last writes. */
struct worker_backlog {
	unsigned every;			/* verify_backlog */
	unsigned size;			/* verify_backlog_batch (or every): the ring */
	unsigned since;			/* writes since the last check */
	unsigned head, n;		/* the next slot; entries held */
	struct backlog_ent {
		uint64_t off;
		uint32_t len;
		uint16_t target;
	} *ring;
	struct verify_tally tally;
};

static int backlog_setup(struct worker *w, struct err *e)
{
	const struct job *j = w->wk->job;
	struct worker_backlog *bl;

	bl = calloc(1, sizeof(*bl));
	if (!bl)
		return err_set(e, ENOMEM, "verify_backlog: out of memory");
	w->bl = bl;
	bl->every = j->verify_backlog;
	bl->size = j->verify_backlog_batch ? j->verify_backlog_batch : j->verify_backlog;
	bl->ring = calloc(bl->size, sizeof(*bl->ring));
	if (!bl->ring)
		return err_set(e, ENOMEM, "verify_backlog: no memory for %u writes", bl->size);
	return 0;
}

bool worker_backlog_note(struct worker *w, const struct io_req *r)
{
	struct worker_backlog *bl = w->bl;

	bl->ring[bl->head] = (struct backlog_ent){ .off = r->off, .len = r->len, .target = r->target };
	bl->head = bl->head + 1 == bl->size ? 0 : bl->head + 1;
	if (bl->n < bl->size)
		bl->n++;
	return ++bl->since >= bl->every;
}

/* The ring's writes, oldest first, read back through the page cache (as
 * the end-of-job read-back reads) and checked; not the job's reads. */
void worker_backlog_check(struct worker *w)
{
	struct worker_backlog *bl = w->bl;
	const struct job *j = w->wk->job;
	unsigned first = (bl->head + bl->size - bl->n) % bl->size;

	w->bl_due = false;
	bl->since = 0;
	for (unsigned i = 0; i < bl->n; i++) {
		const struct backlog_ent *b = &bl->ring[(first + i) % bl->size];
		const struct target *tg = &w->wk->ej.targets[b->target];
		ssize_t got = pread(tg->fd, w->vbuf, b->len, (off_t)b->off);
		int code;

		if (got != (ssize_t)b->len) {
			worker_fail(w, got < 0 ? errno : EIO, b->target, b->off,
				    "verify_backlog: reading a written block back");
			return;
		}
		bl->tally.blocks++;
		code = verify_block(worker_check_pattern(w), w->vbuf, b->len, b->off);
		if (!code)
			continue;
		if (!bl->tally.bad || b->target < bl->tally.first_target ||
		    (b->target == bl->tally.first_target && b->off < bl->tally.first_off)) {
			bl->tally.first_target = b->target;
			bl->tally.first_off = b->off;
			bl->tally.first_code = code;
		}
		bl->tally.bad++;
		if (j->verify_fatal) {
			worker_fail(w, EILSEQ, b->target, b->off,
				    "verify_backlog with verify_fatal: a written block does not check");
			return;
		}
	}
	/* A batch smaller than the ring's capacity leaves the rest unchecked
	 * until the end; the next backlog starts from new writes. */
	bl->n = 0;
}

void worker_pattern_write(struct worker *w, struct io_req *r)
{
	const struct job *j = w->wk->job;

	pattern_fill(w->pat, r->wbuf, r->len, r->off);
	w->wr.gen++;
	if (j->verify != VERIFY_NONE && j->verify != VERIFY_PATTERN)
		blockdata_seal(r->wbuf, r->len, r->off, w->wr.gen, (int)j->verify);
}

const struct pattern *worker_check_pattern(const struct worker *w)
{
	return w->wk->job->verify == VERIFY_PATTERN ? w->pat : NULL;
}

/* The pattern of the job's writes, or of its checks (verify=pattern). */
static int pattern_setup(struct worker *w, struct err *e)
{
	const struct job *j = w->wk->job;
	const char *text = j->verify_pattern ? j->verify_pattern :
			   job_writes(j) ? j->buffer_pattern : NULL;
	char why[300];

	if (!text)
		return 0;
	w->pat = calloc(1, sizeof(*w->pat));
	if (!w->pat)
		return err_set(e, ENOMEM, "out of memory");
	if (pattern_parse(text, w->pat, why, sizeof(why)))
		return err_set(e, EINVAL, "%s: %s", j->verify_pattern ? "verify_pattern" :
			       "buffer_pattern", why);
	return 0;
}

int worker_verify_setup(struct worker *w, struct err *e)
{
	const struct work *wk = w->wk;
	const struct job *j = wk->job;
	struct verify_opts o = { .fatal = j->verify_fatal, .dump = j->verify_dump ? "" : NULL };
	struct verify_reads *rv;
	int ret;

	ret = pattern_setup(w, e);
	if (ret)
		return ret;
	o.pat = worker_check_pattern(w);
	if (job_writes(j) && j->verify_backlog && job_verifies(j))
		return backlog_setup(w, e);
	if (!job_read_verifies(j))
		return 0;
	rv = calloc(1, sizeof(*rv));
	if (!rv || verify_reads_init(rv, w->tcount, &o)) {
		free(rv);
		return err_set(e, ENOMEM, "verify: out of memory");
	}
	w->rv = rv;
	for (unsigned i = 0; i < w->tcount; i++) {
		const struct target *tg = &wk->ej.targets[w->tfirst + i];
		struct verify_read_target *rt = &rv->t[i];
		const struct verify_map *m = wk->vstate ? &wk->vstate[w->id].t[i].map : NULL;

		rt->base = tg->base;
		rt->bs = (uint32_t)job_bs_min(j, JOB_DIR_READ);
		rt->path = tg->path;
		if (!m)
			continue;
		if (verify_map_init(&rt->map, m->nblocks))
			return err_set(e, ENOMEM, "verify: out of memory");
		memcpy(rt->map.bits, m->bits, (size_t)((m->nblocks + 63) / 64) * sizeof(*m->bits));
	}
	return 0;
}

__attribute__((noinline)) void worker_read_check(struct worker *w, const struct io_req *r)
{
	if (!r->data || verify_read_check(w->rv, r->target - w->tfirst, r->target, r->data, r->len,
					  r->off))
		return;
	worker_fail(w, EILSEQ, r->target, r->off, "verify_fatal: a block read does not check");
}

/* verify=: after the loop (untimed), every block this worker wrote read
 * back and checked, into its thread_stats. */
void worker_verify(struct worker *w)
{
	const struct engine_job *ej = &w->wk->ej;
	struct writes *ws = &w->wr;
	struct thread_stats *st = w->st;
	struct verify_tally t = { 0 };
	bool complete = true;

	if (!job_verifies(w->wk->job) || !w->vbuf || st->failed)
		return;
	for (unsigned i = 0; i < ws->ntargets && complete && !(t.bad && w->wk->job->verify_fatal); i++) {
		const struct target *tg = &ej->targets[w->tfirst + i];
		const struct verify_opts o = { .fatal = w->wk->job->verify_fatal,
					       .pat = worker_check_pattern(w),
					       .dump = w->wk->job->verify_dump ? tg->path : NULL };
		struct err e = { 0 };
		int ret;

		ret = verify_readback(tg->fd, &ws->t[i].vmap, ws->t[i].base, ws->bs, w->vbuf,
				      w->tfirst + i, w->wk->stop, &t, &complete, &o, &e);
		if (ret) {
			worker_fail(w, ret, w->tfirst + i, 0, e.msg);
			return;
		}
	}
	st->verify = t;
	STAT_STORE(&st->verify_done, complete ? 1 : 0);
}

/* verify_state_save: the blocks this worker wrote, for a later run. */
static void save_state(struct worker *w)
{
	const struct work *wk = w->wk;
	const struct job *j = wk->job;
	struct writes *ws = &w->wr;
	struct vstate vs = { .name = (char *)j->name, .verify = (int)j->verify,
			     .ntargets = ws->ntargets };
	char file[4096 + 64];
	struct err e = { 0 };
	int ret;

	vs.t = calloc(ws->ntargets ? ws->ntargets : 1, sizeof(*vs.t));
	if (!vs.t) {
		worker_fail(w, ENOMEM, w->tfirst, 0, "verify_state_save: out of memory");
		return;
	}
	for (unsigned i = 0; i < ws->ntargets; i++) {
		vs.t[i].path = (char *)wk->ej.targets[w->tfirst + i].path;
		vs.t[i].base = ws->t[i].base;
		vs.t[i].bs = ws->bs;
		vs.t[i].map = ws->t[i].vmap;
	}
	vstate_file(file, sizeof(file), j->name, w->id);
	ret = vstate_save(file, &vs, &e);
	free(vs.t);
	if (ret)
		worker_fail(w, ret, w->tfirst, 0, e.msg);
}

void worker_verify_end(struct worker *w)
{
	const struct job *j = w->wk->job;
	struct thread_stats *st = w->st;

	if (w->rv) {
		st->verify = w->rv->tally;
		STAT_STORE(&st->verify_done, st->failed ? 0 : 1);
	}
	if (w->bl) {
		const struct verify_tally *b = &w->bl->tally;
		struct verify_tally *t = &st->verify;

		/* the backlog's checks, then the end's read-back of them all */
		if (b->bad && (!t->bad || b->first_target < t->first_target ||
			       (b->first_target == t->first_target && b->first_off < t->first_off))) {
			t->first_target = b->first_target;
			t->first_off = b->first_off;
			t->first_code = b->first_code;
		}
		t->blocks += b->blocks;
		t->bad += b->bad;
	}
	if (job_writes(j) && j->verify_state_save && w->wr.verify)
		save_state(w);
}

void worker_verify_free(struct worker *w)
{
	if (w->rv)
		verify_reads_free(w->rv);
	free(w->rv);
	w->rv = NULL;
	if (w->bl)
		free(w->bl->ring);
	free(w->bl);
	w->bl = NULL;
	if (w->pat)
		pattern_free(w->pat);
	free(w->pat);
	w->pat = NULL;
}
