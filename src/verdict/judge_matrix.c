/*
 * judge_matrix.c - the verdict's vocabulary: what its workloads
 * and engines are called in the text and keyed in verdict.json, the unit
 * a workload is ranked in, and which engines each workload of the fixed
 * matrix runs. Pure; judge.c and the writers use it.
 */
#include <stdio.h>
#include <string.h>

#include "verdict/judge_matrix.h"

static const char *const wl_names[JW_NR] = {
	[JW_UNIFORM] = "uniform random 4k reads",
	[JW_ZIPF] = "zipf random 4k reads",
	[JW_SCAN] = "scan",
	[JW_WRITE] = "write mix (fsync every 32 writes)",
	[JW_HAZARD] = "async hazard (one event loop, 8 streams)",
	[JW_JOB] = "a job of the user's file",
};
static const char *const wl_keys[JW_NR] = {
	[JW_UNIFORM] = "uniform", [JW_ZIPF] = "zipf", [JW_SCAN] = "scan",
	[JW_WRITE] = "write", [JW_HAZARD] = "hazard", [JW_JOB] = "job",
};
static const char *const eng_names[JE_NR] = {
	[JE_MMAP_NORMAL] = "mmap (madvise=normal)",
	[JE_MMAP_RANDOM] = "mmap (madvise=random)",
	[JE_BUFPOOL] = "the buffer pool (bufpool)",
	[JE_URING_DIRECT] = "io_uring O_DIRECT (no cache)",
	[JE_MMAP_MSYNC] = "mmap + msync",
	[JE_PWRITE] = "pwrite + fdatasync",
	[JE_MMAP_LOOP] = "an event loop over mmap",
	[JE_URING_LOOP] = "an event loop over io_uring",
	[JE_URING_DEPTH] = "io_uring O_DIRECT (no cache)",
	[JE_VMCACHE] = "vmcache",
	[JE_PSYNC] = "pwrite (buffered)",
};
static const char *const eng_keys[JE_NR] = {
	[JE_MMAP_NORMAL] = "mmap-normal", [JE_MMAP_RANDOM] = "mmap-random",
	[JE_BUFPOOL] = "bufpool", [JE_URING_DIRECT] = "io_uring-direct",
	[JE_MMAP_MSYNC] = "mmap-msync", [JE_PWRITE] = "pwrite-fdatasync",
	[JE_MMAP_LOOP] = "mmap-loop", [JE_URING_LOOP] = "io_uring-loop",
	[JE_URING_DEPTH] = "io_uring-depth", [JE_VMCACHE] = "vmcache", [JE_PSYNC] = "pwrite",
};

const char *judge_workload_name(enum judge_workload w) { return w < JW_NR ? wl_names[w] : "?"; }
const char *judge_workload_key(enum judge_workload w) { return w < JW_NR ? wl_keys[w] : "?"; }
const char *judge_engine_name(enum judge_engine e) { return e < JE_NR ? eng_names[e] : "?"; }
const char *judge_engine_key(enum judge_engine e) { return e < JE_NR ? eng_keys[e] : "?"; }

const char *judge_unit(const struct judge_wl *wl)
{
	return wl->by == JB_MIBS ? "MiB/s" : wl->by == JB_P99 ? "us p99" : wl->by == JB_TIME ? "s" : "IOPS";
}

#define BIT(e) (1u << (e))

void judge_wl_fixed(enum judge_workload w, struct judge_wl *wl)
{
	memset(wl, 0, sizeof(*wl));
	wl->kind = w;
	snprintf(wl->key, sizeof(wl->key), "%s", judge_workload_key(w));
	snprintf(wl->name, sizeof(wl->name), "%s", judge_workload_name(w));
	wl->by = w == JW_SCAN || w == JW_HAZARD ? JB_MIBS : JB_IOPS;
	wl->writes = w == JW_WRITE;
	wl->seq = w == JW_SCAN || w == JW_HAZARD;
	switch (w) {
	case JW_UNIFORM:
	case JW_ZIPF:
	case JW_SCAN:
		wl->engines = BIT(JE_MMAP_NORMAL) | BIT(JE_MMAP_RANDOM) | BIT(JE_BUFPOOL) |
			      BIT(JE_URING_DIRECT) | BIT(JE_URING_DEPTH);
		break;
	case JW_WRITE:
		wl->engines = BIT(JE_MMAP_MSYNC) | BIT(JE_BUFPOOL) | BIT(JE_PWRITE);
		break;
	case JW_HAZARD:
		wl->engines = BIT(JE_MMAP_LOOP) | BIT(JE_URING_LOOP);
		break;
	default:
		break;
	}
}

bool judge_engine_in(const struct judge_wl *wl, enum judge_engine e)
{
	return e < JE_NR && (wl->engines & BIT(e));
}
