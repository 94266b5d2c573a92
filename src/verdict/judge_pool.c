/*
 * judge_pool.c - the evidence sentences of the two buffer pools: hit
 * ratio and evictions (vmcache's with the TLB flushes its madvise calls
 * cost), and, when vmcache's p99 is well above bufpool's, why, from its
 * own counters. Pure, tested with judge.c (tests/test_judge.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "verdict/judge_pool.h"
#include "verdict/judge_doc.h"
#include "verdict/judge_say.h"

#define MIB (1024.0 * 1024.0)

/* The bytes a run's targets span (its JSON's targets[].len), or 0 when it
 * names none: a job file's own files, or a replayed trace's. */
static uint64_t doc_target_bytes(json_t *doc)
{
	uint64_t sum = 0;
	char key[64];
	double len;

	for (unsigned i = 0; i < 65536; i++) {
		snprintf(key, sizeof(key), "jobs.0.faultline.targets.%u.len", i);
		if (!judge_jnum(doc, key, &len))
			break;
		sum += (uint64_t)len;
	}
	return sum;
}

void judge_pool_evidence(struct judge_result *r, int e, json_t *doc,
			  const struct judge_host *h)
{
	double hit, ev, s = judge_job_seconds(doc), ps, pf, pfn;
	char m[32], f[32], a[32];
	const char *name = e == JE_VMCACHE ? "vmcache" : "the buffer pool";

	if (!judge_jnum(doc, "jobs.0.faultline.pool.hit_ratio", &hit))
		return;
	judge_mib(f, sizeof(f), doc_target_bytes(doc) ? doc_target_bytes(doc) : h->file_size);
	if (!judge_jnum(doc, "jobs.0.faultline.pool.size", &ps))
		ps = (double)h->mem_budget;
	judge_mib(m, sizeof(m), (uint64_t)ps);
	if (judge_jnum(doc, "jobs.0.faultline.pool.evictions", &ev) && !isnan(s) && e == JE_VMCACHE) {
		/* vmcache gives its evicted pages back with madvise: each
		 * call flushes the TLB of the other CPUs running the job. */
		struct judge_ev tlb = judge_ev_tlb(doc);
		double ipi;
		char t[96] = "";

		judge_fmt_num(a, sizeof(a), ev / s);
		if (judge_jnum(doc, "jobs.0.faultline.pool.tlb_ipi_per_evicted_page", &ipi))
			snprintf(t, sizeof(t), ": %.2f TLB shootdown IPIs per evicted page", ipi);
		else if (tlb.ok)
			snprintf(t, sizeof(t), " (TLB shootdowns %.0f/s, %s)", tlb.v, tlb.src);
		judge_say(r, "pool_hit_ratio", hit, NAN, "job",
		    "%s: hit ratio %.1f%% with %s of pool over %s of file, %s evictions/s, given back "
		    "to the kernel with madvise, which flushes the other CPUs' TLBs%s; no reclaim.",
		    name, 100 * hit, m, f, a, t);
	} else if (judge_jnum(doc, "jobs.0.faultline.pool.evictions", &ev) && !isnan(s)) {
		judge_fmt_num(a, sizeof(a), ev / s);
		judge_say(r, "pool_hit_ratio", hit, NAN, "job",
		    "%s: hit ratio %.1f%% with %s of pool over %s of file, %s "
		    "evictions/s, none of them a TLB shootdown or a reclaim.", name, 100 * hit, m, f, a);
	} else {
		judge_say(r, "pool_hit_ratio", hit, NAN, "job",
		    "%s: hit ratio %.1f%% with %s of pool over %s of file.", name, 100 * hit, m, f);
	}
	if (judge_jnum(doc, "jobs.0.faultline.pool.prefetch", &pf) && pf > 0 &&
	    judge_jnum(doc, "jobs.0.faultline.pool.pages_prefetched", &pfn)) {
		judge_fmt_num(a, sizeof(a), pfn);
		judge_say(r, "pool_prefetched", pfn, NAN, "job",
		    "%s: %s pages read ahead (pool_prefetch=%.0f pages), so its hits include pages "
		    "read before they were asked for, as the kernel's read-ahead does for mmap.",
		    name, a, pf);
	}
}

/* vmcache's p99 well above the buffer pool's: the two costs a vmcache
 * miss pays that a bufpool miss does not, from its own counters. It
 * gives its evicted pages back to the kernel (madvise), so a miss
 * refills a page the kernel faults in zeroed first, and the miss that
 * finds the pool full evicts a whole batch before its read. */
void judge_pool_tail_evidence(struct judge_result *r, const struct judge_cell *cells, unsigned ncells,
			       unsigned wi)
{
	json_t *vd, *bd;
	double vp, bp, vmiss, bmiss, vflt, bflt, batches, ev, calls;
	char nb[32];

	if (!r->e[JE_VMCACHE].ok || !r->e[JE_BUFPOOL].ok)
		return;
	vd = judge_typical_doc(cells, ncells, wi, JE_VMCACHE, &r->e[JE_VMCACHE]);
	bd = judge_typical_doc(cells, ncells, wi, JE_BUFPOOL, &r->e[JE_BUFPOOL]);
	if (!vd || !bd || !judge_doc_p99_us(vd, &vp) || !judge_doc_p99_us(bd, &bp) || !(bp > 0) ||
	    vp < bp * JUDGE_POOL_TAIL)
		return;
	if (!judge_jnum(vd, "jobs.0.faultline.pool.misses", &vmiss) || !(vmiss > 0) ||
	    !judge_jnum(bd, "jobs.0.faultline.pool.misses", &bmiss) || !(bmiss > 0) ||
	    !judge_jnum(vd, "jobs.0.faultline.minor_faults", &vflt) ||
	    !judge_jnum(bd, "jobs.0.faultline.minor_faults", &bflt) ||
	    !judge_jnum(vd, "jobs.0.faultline.pool.evict_batches", &batches) ||
	    !judge_jnum(vd, "jobs.0.faultline.pool.evictions", &ev) ||
	    !judge_jnum(vd, "jobs.0.faultline.pool.madvise_calls", &calls)) {
		judge_say(r, "pool_tail_ratio", vp / bp, JUDGE_POOL_TAIL, "job",
		    "vmcache's p99 is %.2fx the buffer pool's (%.0f us against %.0f us); its eviction "
		    "and fault counters are not in its run's document to say why.", vp / bp, vp, bp);
		return;
	}
	judge_fmt_num(nb, sizeof(nb), batches);
	if (batches > 0)
		judge_say(r, "pool_tail_ratio", vp / bp, JUDGE_POOL_TAIL, "job",
		    "vmcache's p99 is %.2fx the buffer pool's (%.0f us against %.0f us): one miss in %.0f "
		    "evicted a batch of %.1f pages (%.1f madvise calls) before its read (%s batches), and a "
		    "miss faulted in %.2f pages given back to the kernel, zeroed, against the buffer "
		    "pool's %.2f: memory it returns, where the buffer pool keeps its frames.",
		    vp / bp, vp, bp, vmiss / batches, ev / batches, calls / batches, nb, vflt / vmiss,
		    bflt / bmiss);
	else
		judge_say(r, "pool_tail_ratio", vp / bp, JUDGE_POOL_TAIL, "job",
		    "vmcache's p99 is %.2fx the buffer pool's (%.0f us against %.0f us) with no eviction: "
		    "a miss faulted in %.2f pages, zeroed, against the buffer pool's %.2f.",
		    vp / bp, vp, bp, vflt / vmiss, bflt / bmiss);
}

