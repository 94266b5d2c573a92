/*
 * prio.c - a job's table of I/O priorities and its per-direction plan;
 * see prio.h.
 */
#include "workload/prio.h"

#include <errno.h>

#include "lib/stats.h"

_Static_assert(PRIO_TABLE_MAX == STATS_PRIO_MAX, "the counters hold one entry per priority");

uint16_t prio_job_value(const struct workload_job *wj)
{
	if (!wj->prio_set)
		return 0;
	return (uint16_t)((wj->prio_class ? wj->prio_class : PRIO_CLASS_BE) << PRIO_CLASS_SHIFT |
			  wj->prio_level);
}

/* cmdprio_class/cmdprio of direction @d: fio's default class is the
 * highest, realtime. */
static uint16_t cmdprio_value(const struct job_cmdprio *cp)
{
	return (uint16_t)((cp->cls ? cp->cls : PRIO_CLASS_RT) << PRIO_CLASS_SHIFT | cp->level);
}

bool prio_job_realtime(const struct workload_job *wj)
{
	if (wj->prio_set && wj->prio_class == PRIO_CLASS_RT)
		return true;
	for (unsigned d = 0; d < 2; d++) {
		const struct job_cmdprio *cp = &wj->cmdprio[d];

		if (cp->perc && cmdprio_value(cp) >> PRIO_CLASS_SHIFT == PRIO_CLASS_RT)
			return true;
		for (unsigned i = 0; i < cp->nbs; i++)
			for (unsigned k = 0; k < cp->bs[i].n; k++) {
				int32_t v = cp->bs[i].prio[k] < 0 ? cmdprio_value(cp) : cp->bs[i].prio[k];

				if (v >> PRIO_CLASS_SHIFT == PRIO_CLASS_RT)
					return true;
			}
	}
	return false;
}

/* @v's entry in the table, added when new. */
static int entry(struct prio_plan *p, uint16_t v, uint8_t *idx, const struct workload_job *wj,
		 struct err *e)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->val[i] == v) {
			*idx = (uint8_t)i;
			return 0;
		}
	if (p->n == PRIO_TABLE_MAX)
		return err_set(e, EINVAL, "job '%s': more than %d distinct I/O priorities", wj->name,
			       PRIO_TABLE_MAX);
	p->val[p->n] = v;
	*idx = (uint8_t)p->n++;
	return 0;
}

int prio_plan_build(struct prio_plan *p, const struct workload_job *wj, struct err *e)
{
	*p = (struct prio_plan){ .n = 1, .val = { prio_job_value(wj) } };
	for (unsigned d = 0; d < 2; d++) {
		const struct job_cmdprio *cp = &wj->cmdprio[d];
		struct prio_dir *pd = &p->d[d];

		if (cp->perc) {
			pd->perc = cp->perc;
			if (entry(p, cmdprio_value(cp), &pd->perc_idx, wj, e))
				return -EINVAL;
			p->on = true;
		}
		for (unsigned i = 0; i < cp->nbs; i++) {
			pd->bs[i].bs = cp->bs[i].bs;
			pd->bs[i].n = cp->bs[i].n;
			for (unsigned k = 0; k < cp->bs[i].n; k++) {
				uint16_t v = cp->bs[i].prio[k] < 0 ? cmdprio_value(cp)
								   : (uint16_t)cp->bs[i].prio[k];

				pd->bs[i].perc[k] = cp->bs[i].perc[k];
				if (entry(p, v, &pd->bs[i].idx[k], wj, e))
					return -EINVAL;
			}
			p->on = true;
		}
		pd->nbs = cp->nbs;
	}
	return 0;
}
