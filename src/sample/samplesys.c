/*
 * samplesys.c - the host's own sources a sample reads (samplesys.h):
 * TLB shootdowns, kswapd's CPU time, reclaim, the page cache, CPU times
 * and pressure, each file opened once and re-read with pread. A source
 * that cannot be read is marked so in the snapshot and warned about
 * once; it is never a zero.
 */
#include "sample/samplesys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "out/explain_out.h"
#include "telemetry/procfs.h"

void sampler_open_sys(struct sampler *s)
{
	const char *root = s->proc;

	if (procfs_src_open(&s->interrupts, root, "interrupts") < 0)
		s->interrupts.fd = -1;
	if (procfs_src_open(&s->vmstat, root, "vmstat") < 0)
		s->vmstat.fd = -1;
	if (procfs_src_open(&s->meminfo, root, "meminfo") < 0)
		s->meminfo.fd = -1;
	if (procfs_src_open(&s->stat, root, "stat") < 0)
		s->stat.fd = -1;
	s->have_ksw = procfs_kswapd_open(&s->ksw, root) == 0;
	explain_host_open(&s->psi, root);
	explain_warn(stderr, s->psi.why);
}

void sampler_read_sys(struct sampler *s, struct sys_snap *o, uint64_t now)
{
	ssize_t n;
	int ret;

	memset(o, 0, sizeof(*o));
	o->t = now;
	o->seq = ++s->sys_seq;

	n = s->interrupts.fd >= 0 ? procfs_src_read(&s->interrupts) : -ENOENT;
	ret = n < 0 ? (int)n : procfs_parse_tlb(s->interrupts.buf, (size_t)n, &o->tlb, NULL);
	o->tlb_ok = ret == 0;
	if (!o->tlb_ok)
		sampler_warn_once(&s->warned_tlb, "TLB shootdowns unavailable: %s",
			  ret == -ENOENT ? PROCFS_TLB_ABSENT_WHY : strerror(-ret));

	if (s->have_ksw) {
		ret = procfs_kswapd_read(&s->ksw, &o->ksw_ticks);
		o->ksw_ok = ret == 0;
	}
	if (!o->ksw_ok)
		sampler_warn_once(&s->warned_ksw, "kswapd CPU time unavailable: %s",
			  s->have_ksw ? "its stat file could not be read" : "no kswapd thread found");

	n = s->vmstat.fd >= 0 ? procfs_src_read(&s->vmstat) : -ENOENT;
	ret = n < 0 ? (int)n : procfs_parse_vmstat(s->vmstat.buf, (size_t)n, &o->vm);
	o->vm_ok = ret == 0 && procfs_vm_has(&o->vm, PROCFS_VM_PGSCAN_KSWAPD) &&
		   procfs_vm_has(&o->vm, PROCFS_VM_PGSTEAL_KSWAPD);
	if (!o->vm_ok)
		sampler_warn_once(&s->warned_vm, "reclaim counters unavailable from %s/vmstat", s->proc);

	n = s->meminfo.fd >= 0 ? procfs_src_read(&s->meminfo) : -ENOENT;
	ret = n < 0 ? (int)n : procfs_parse_meminfo(s->meminfo.buf, (size_t)n, &o->mem);
	o->mem_ok = ret == 0 && procfs_mem_has(&o->mem, PROCFS_MEM_CACHED);
	if (!o->mem_ok)
		sampler_warn_once(&s->warned_mem, "page cache size unavailable from %s/meminfo", s->proc);

	n = s->stat.fd >= 0 ? procfs_src_read(&s->stat) : -ENOENT;
	ret = n < 0 ? (int)n : procfs_parse_stat(s->stat.buf, (size_t)n, &o->cpu);
	o->cpu_ok = ret == 0;
	if (!o->cpu_ok)
		sampler_warn_once(&s->warned_cpu, "CPU times unavailable from %s/stat", s->proc);
	explain_host_read(&s->psi, &o->psi);
	explain_warn(stderr, s->psi.why);
}
