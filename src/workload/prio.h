/*
 * prio.h - the I/O priority each request carries (fio's prioclass,
 * prio, cmdprio_percentage, cmdprio_class, cmdprio, cmdprio_bssplit).
 *
 * A job's priorities are a small table of ioprio values (class << 13 |
 * hint << 3 | level, as ioprio_set and the kernel's sqe->ioprio and
 * aio_reqprio take them): entry 0 is the job's own (prioclass/prio, or 0:
 * the thread's), the others the cmdprio options' values. A request draws
 * its entry as fio's engines/cmdprio.c does: a number of 0..99 against
 * cmdprio_percentage, or against the shares its size has in
 * cmdprio_bssplit. The plan is built once per job; the draw is one
 * branch and, for the requests that may get a priority, one random
 * number.
 */
#ifndef FAULTLINE_PRIO_H
#define FAULTLINE_PRIO_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "workload/workload.h"
#include "lib/rng.h"

/* Distinct priorities of one job, its own included. */
#define PRIO_TABLE_MAX 8

/* ioprio_set's classes (linux/ioprio.h). */
#define PRIO_CLASS_RT	1
#define PRIO_CLASS_BE	2
#define PRIO_CLASS_SHIFT 13

struct prio_dir {
	unsigned perc;			/* cmdprio_percentage, or 0 */
	uint8_t perc_idx;		/* its table entry */
	unsigned nbs;			/* cmdprio_bssplit sizes */
	struct {
		uint64_t bs;
		unsigned n;
		uint8_t perc[JOB_CMDPRIO_PRIOS_MAX];
		uint8_t idx[JOB_CMDPRIO_PRIOS_MAX];
	} bs[JOB_CMDPRIO_BS_MAX];
};

struct prio_plan {
	bool on;			/* some request may carry a priority of its own */
	unsigned n;			/* table entries */
	uint16_t val[PRIO_TABLE_MAX];
	struct prio_dir d[2];
};

/* The job's own ioprio value: prioclass/prio as fio makes it (class 0
 * is best effort), or 0 when neither is set. */
uint16_t prio_job_value(const struct workload_job *wj);
/* Whether any priority the job asks for is realtime (needs
 * CAP_SYS_ADMIN or CAP_SYS_NICE). */
bool prio_job_realtime(const struct workload_job *wj);
/* @p from @wj; -EINVAL when the job asks for more than PRIO_TABLE_MAX distinct
 * priorities. */
int prio_plan_build(struct prio_plan *p, const struct workload_job *wj, struct err *e);

/* The table entry for a request of direction @dir and @len bytes. */
static inline uint8_t prio_pick(const struct prio_plan *p, unsigned dir, uint64_t len,
				uint64_t *rng)
{
	const struct prio_dir *d = &p->d[dir];
	unsigned r, sum = 0;

	if (d->perc) {
		if (rng_below(rng, 100) < d->perc)
			return d->perc_idx;
		return 0;
	}
	for (unsigned i = 0; i < d->nbs; i++) {
		if (d->bs[i].bs != len)
			continue;
		r = (unsigned)rng_below(rng, 100);
		for (unsigned k = 0; k < d->bs[i].n; k++) {
			sum += d->bs[i].perc[k];
			if (r < sum)
				return d->bs[i].idx[k];
		}
		break;
	}
	return 0;
}

#endif
