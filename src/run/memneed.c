/* memneed.c - the smallest mem_limit a job can live within; see memneed.h. */
#include "run/memneed.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

void mem_need_windows(const struct job *j, bool mapped, bool page_cache, unsigned readers,
		      struct mem_need *m)
{
	m->windows = 0;
	m->prefetch = 0;
	if (!page_cache) {
		snprintf(m->why, sizeof(m->why), "%s", j->direct ? "direct=1 bypasses the page cache"
								   : "the engine reads no page cache");
		return;
	}
	if (mapped && j->madvise == ADV_RANDOM) {
		snprintf(m->why, sizeof(m->why), "madvise=random turns read-around off");
		return;
	}
	if (!mapped && j->fadvise == FADV_M_RANDOM) {
		snprintf(m->why, sizeof(m->why), "fadvise=random turns read-ahead off");
		return;
	}
	if (!readers)
		readers = 1;
	if (mapped && !j->thread) {
		m->windows = 2 * readers;
		snprintf(m->why, sizeof(m->why), "two per worker process mapping the target (%u)", readers);
	} else {
		m->windows = readers + 1;
		snprintf(m->why, sizeof(m->why), "one per reader (%u) and the next one read ahead", readers);
	}
	if (j->prefetch != PREFETCH_NONE)
		m->prefetch = j->prefetch_window * (j->loop ? j->loop : 1) * (j->numjobs ? j->numjobs : 1);
}

uint64_t mem_need_pagetables(uint64_t len, uint64_t page)
{
	uint64_t per_table = page / 8, pages = (len + page - 1) / page;
	uint64_t ptes = (pages + per_table - 1) / per_table;

	/* The level above: one table per per_table of those, at least one. */
	return (ptes + (ptes + per_table - 1) / per_table) * page;
}

/* include/linux/memcontrol.h */
#define MEMCG_CHARGE_BATCH 64u

uint64_t mem_need_stock(unsigned ncpus, unsigned tasks, uint64_t page)
{
	unsigned n = tasks + 1 < ncpus ? tasks + 1 : ncpus;

	return (uint64_t)(n ? n : 1) * MEMCG_CHARGE_BATCH * page;
}

uint64_t mem_need_total(const struct mem_need *m)
{
	return m->charge + m->stock + m->pagetables + (uint64_t)m->windows * m->window + m->prefetch + 4096;
}

/*
 * The charge is measured once per run, and a second measurement of the
 * same job differs by a few pages (the kernel's own allocations for the
 * tasks land on different slabs; seen: a need under 25 MiB named as 25m,
 * then 524 KiB measured and 25.01 MiB needed on the run at 25m, loaded). A
 * limit named at the need itself, rounded up to a MiB, is refused on the
 * next run whenever the need sat just under a MiB: the name carries a
 * quarter of the measured part, at least 256 KiB, above the need.
 */
uint64_t mem_need_named(const struct mem_need *m)
{
	uint64_t slack = (m->charge + m->stock) / 4;

	if (slack < 256 << 10)
		slack = 256 << 10;
	return (mem_need_total(m) + slack + (1 << 20) - 1) >> 20;
}

int mem_need_check(const struct job *j, const struct mem_need *m, struct err *e)
{
	uint64_t need = mem_need_total(m);
	char ra[256] = "", pt[96] = "", pf[96] = "";

	if (j->mem_limit >= need)
		return 0;
	if (m->pagetables)
		snprintf(pt, sizeof(pt), ", the page tables of its mappings %.0f KiB", m->pagetables / 1024.0);
	if (m->prefetch)
		snprintf(pf, sizeof(pf), ", prefetch windows %.1f MiB", m->prefetch / MIB);
	if (m->windows)
		snprintf(ra, sizeof(ra), "; the kernel's read-ahead window is %.1f MiB (read_ahead_kb=%llu of %s), "
			 "and %u can be in flight at once (%s), locked until the device answers: %.1f MiB",
			 m->window / MIB, (unsigned long long)(m->window >> 10), m->dev, m->windows, m->why,
			 (double)m->windows * m->window / MIB);
	else
		snprintf(ra, sizeof(ra), "; no read-ahead window counts (%s)", m->why);
	return err_set(e, EINVAL,
		       "mem_limit=%.1fMiB is too small for this job to run without the OOM killer: its worker "
		       "process is charged %.0f KiB (measured with its %u %s set up, and up to %.0f KiB "
		       "the kernel charges ahead on its CPUs)%s%s%s; the smallest limit that works is %.1f MiB; "
		       "with room for the charge to measure higher on the next run: mem_limit=%llum",
		       j->mem_limit / MIB, m->charge / 1024.0, m->tasks,
		       j->thread ? (m->tasks == 1 ? "thread" : "threads") : (m->tasks == 1 ? "process" : "processes"),
		       m->stock / 1024.0, pt, pf, ra, need / MIB, (unsigned long long)mem_need_named(m));
}
