/* writes.c - a worker's write state, set up and freed; see writes.h. */
#include "workload/writes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"

void writes_flush_init(struct writes_flush *f, unsigned every, uint64_t interval, uint64_t now)
{
	f->every = every;
	f->count = 0;
	f->interval = interval;
	f->last = now;
}

int writes_setup(struct writes *ws, const struct writes_config *c,
		 const struct gen_region *regions, unsigned ntargets, struct err *e)
{
	const struct workload_job *wj = c->wj;
	uint64_t seed = c->seed ^ ((uint64_t)(c->worker + 1) * 0x9e3779b97f4a7c15ull);
	uint64_t bs;

	memset(ws, 0, sizeof(*ws));
	ws->mixed = wj->mixed;
	ws->rwmixread = wj->rwmixread;
	/* Never zero: xorshift would stay at zero. */
	ws->mix = splitmix64(&seed) | 1;
	/* With writes of several sizes, blocks of the largest: a write
	 * placed at the start of one of its owner's blocks stays in it. */
	bs = wj->write_bs_max;
	ws->bs = (uint32_t)bs;
	if ((bs & (bs - 1)) == 0)
		ws->bs_shift = (unsigned)__builtin_ctzll(bs);
	/* Only random writes need owners: sequential writers over shared
	 * targets each take their own slice (jobrun.c). */
	if (c->nworkers > 1 && job_rw_random(wj->rw)) {
		ws->own_n = c->nworkers;
		ws->own_w = c->worker;
	}
	/* The map of written blocks serves the read-back and the state file. */
	ws->verify = wj->verifies || (wj->verify != VERIFY_NONE && wj->verify_state_save);
	ws->sum = wj->verify > VERIFY_CRC32C && wj->verify != VERIFY_PATTERN ? (int)wj->verify : 0;
	writes_flush_init(&ws->fl, wj->flush_every, c->interval, 0);

	ws->ntargets = ntargets;
	ws->t = calloc(ntargets ? ntargets : 1, sizeof(*ws->t));
	ws->dirty = calloc(ntargets ? ntargets : 1, sizeof(*ws->dirty));
	if (!ws->t || !ws->dirty)
		return err_set(e, ENOMEM, "writes: out of memory");
	for (unsigned i = 0; i < ntargets; i++) {
		struct writes_target *t = &ws->t[i];

		t->base = regions[i].base;
		t->nblocks = regions[i].len / bs;
		if (ws->own_n > 1 && t->nblocks < ws->own_n)
			return err_set(e, EINVAL, "a region of %llu blocks of bs=%llu cannot give each "
				       "of numjobs=%u threads blocks of its own to write",
				       (unsigned long long)t->nblocks, (unsigned long long)bs,
				       ws->own_n);
		if (ws->verify && verify_map_init(&t->vmap, t->nblocks))
			return err_set(e, ENOMEM, "verify: no memory for a map of %llu blocks",
				       (unsigned long long)t->nblocks);
	}
	return 0;
}

void writes_free(struct writes *ws)
{
	for (unsigned i = 0; ws->t && i < ws->ntargets; i++)
		verify_map_free(&ws->t[i].vmap);
	free(ws->t);
	free(ws->dirty);
	ws->t = NULL;
	ws->dirty = NULL;
	ws->ntargets = 0;
}
