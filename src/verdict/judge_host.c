/*
 * judge_host.c - the verdict's host facts: what the host alone
 * says that bears on the answer (read_ahead_kb, few CPUs, a virtual
 * machine, a rotational device, THP, DAMON's pageout, a memory limit by
 * reserve_mem), each with the number it rests on. Pure, as judge.c, and
 * tested with it (tests/test_judge.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "verdict/judge_host.h"
#include "verdict/judge_matrix.h"

static void host_say(struct judge_sentence *out, unsigned *n, unsigned max, const char *key,
		     double v, double thr, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void host_say(struct judge_sentence *out, unsigned *n, unsigned max, const char *key,
		     double v, double thr, const char *fmt, ...)
{
	va_list ap;

	if (*n >= max)
		return;
	snprintf(out[*n].key, sizeof(out[*n].key), "%s", key);
	out[*n].value = v;
	out[*n].threshold = thr;
	snprintf(out[*n].source, sizeof(out[*n].source), "host");
	va_start(ap, fmt);
	vsnprintf(out[*n].text, sizeof(out[*n].text), fmt, ap);
	va_end(ap);
	(*n)++;
}

unsigned judge_host_facts(const struct judge_host *h, const struct judge_result *r, unsigned nr,
			  struct judge_sentence *out, unsigned max)
{
	const struct judge_result *u = NULL;
	unsigned n = 0;

	for (unsigned i = 0; i < nr && !u; i++)
		if (r[i].ran && r[i].wl.kind == JW_UNIFORM)
			u = &r[i];
	if (h->read_ahead_kb >= JUDGE_RA_KB && h->dev[0]) {
		if (u && u->e[JE_MMAP_NORMAL].ok && u->e[JE_MMAP_RANDOM].ok)
			host_say(out, &n, max, "read_ahead_kb", h->read_ahead_kb, JUDGE_RA_KB,
				 "%s has read_ahead_kb=%d: mmap with madvise=normal reads that much around "
				 "each fault; here it gave %.0f IOPS against %.0f with madvise=random on "
				 "uniform random reads.", h->dev, h->read_ahead_kb,
				 u->e[JE_MMAP_NORMAL].median, u->e[JE_MMAP_RANDOM].median);
		else
			host_say(out, &n, max, "read_ahead_kb", h->read_ahead_kb, JUDGE_RA_KB,
				 "%s has read_ahead_kb=%d: mmap with madvise=normal reads that much around "
				 "each fault.", h->dev, h->read_ahead_kb);
	}
	if (h->ncpus && h->ncpus <= JUDGE_FEW_CPUS)
		host_say(out, &n, max, "ncpus", h->ncpus, JUDGE_FEW_CPUS,
			 "%u CPUs: a TLB shootdown interrupts at most %u other CPU%s, and one thread per "
			 "CPU is %u threads; the paper's mmap collapse came with many cores, so expect "
			 "mmap to fare worse on a larger host.", h->ncpus, h->ncpus - 1,
			 h->ncpus == 2 ? "" : "s", h->ncpus);
	if (h->virt[0] && strcmp(h->virt, "none"))
		host_say(out, &n, max, "virtualisation", NAN, NAN,
			 "a virtual machine (%s): shootdown IPIs and device interrupts go through the "
			 "hypervisor, and the device's latency is the host's.", h->virt);
	if (h->rotational == 1 && h->dev[0])
		host_say(out, &n, max, "rotational", 1, NAN,
			 "%s says it is rotational%s: random reads are then seek-bound and a cache's hit "
			 "ratio decides everything.", h->dev,
			 h->virt[0] && strcmp(h->virt, "none") ? " (a virtual disk often says so whatever "
			 "backs it)" : "");
	if (!strcmp(h->thp, "always"))
		host_say(out, &n, max, "thp", NAN, NAN,
			 "transparent huge pages are 'always': the buffer pool's anonymous frames may "
			 "be huge pages (fewer TLB misses) while a file mapping stays in 4 KiB pages.");
	if (h->damon_pageout == 1) {
		char idle[48] = "";

		if (!isnan(h->damon_idle_s))
			snprintf(idle, sizeof(idle), " for %.0f s", h->damon_idle_s);
		host_say(out, &n, max, "damon_pageout", h->damon_idle_s, NAN,
			 "DAMON pages out memory left idle%s, with no memory pressure: an mmap'd file "
			 "that sits idle that long is read from the device again, and neither kswapd nor "
			 "the reclaim counters show it; the buffer pool's frames are anonymous memory, %s.",
			 idle, h->swap == 0 ? "which it cannot page out without swap (none here), so a "
			 "buffer pool keeps its cache" : h->swap == 1 ? "which it pages out too, to swap" :
			 "which it can page out only to swap (whether there is any could not be read)");
	}
	if (!h->cgroup)
		host_say(out, &n, max, "memory", (double)h->mem_budget, NAN,
			 "no memory cgroup here: mmap's memory was limited with reserve_mem, so the whole "
			 "host ran short and kswapd, not the job's threads, evicted.");
	return n;
}
