/*
 * cgroup.h - memory cgroups for mem_limit.
 *
 * faultline only ever creates a child of the memory cgroup it already
 * runs in, and removes it when the job ends. cgroup v2 (memory.max,
 * memory.current) and v1 (memory.limit_in_bytes, memory.usage_in_bytes)
 * are both handled; paths come from $FAULTLINE_SYS (default /sys) and
 * $FAULTLINE_PROC (default /proc) so --check-system can be tested on
 * recorded trees.
 */
#ifndef FAULTLINE_CGROUP_H
#define FAULTLINE_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

struct cgroup_info {
	int version;			/* 2, 1, or 0 = no memory controller */
	char self[PATH_MAX];		/* this process's memory cgroup directory */
	bool can_create;		/* a child can be made here (checked by trying) */
	char why[512];			/* why not, when !can_create or version 0 */
};

/* What this host offers; @try_create makes and removes a probe child. */
int cgroup_probe(struct cgroup_info *ci, bool try_create);

struct cgroup {
	int version;
	char path[PATH_MAX];
	int usage_fd;			/* memory.current / memory.usage_in_bytes */
	uint64_t limit;			/* bytes; 0 = none of its own */
	bool created;
};

/* Make <own cgroup>/<name> with a memory limit of @limit bytes (0: none
 * of its own, to measure what a process is charged). */
int cgroup_create(struct cgroup *cg, const char *name, uint64_t limit, struct err *e);
/* Move process @pid (0 = the caller) into it. */
int cgroup_enter(struct cgroup *cg, pid_t pid, struct err *e);
/* Current memory charged to it, bytes. */
int cgroup_usage(struct cgroup *cg, uint64_t *bytes);
/* What it is charged beyond file pages: its processes' anonymous and
 * shared memory and the kernel's memory for its tasks (stacks, page
 * tables, slabs), from the exact counters of memory.stat (v1: and
 * memory.kmem.usage_in_bytes). */
int cgroup_charge_nonfile(const struct cgroup *cg, uint64_t *bytes);
/* The most it was ever charged (v1 memory.max_usage_in_bytes, v2
 * memory.peak, named in @source). */
int cgroup_peak(const struct cgroup *cg, uint64_t *bytes, const char **source);
/* How many of its processes the OOM killer killed. */
int cgroup_oom_kills(const struct cgroup *cg, uint64_t *n);
/* A member killed by signal @sig, said with what the cgroup held and its
 * limit, and whether its OOM killer did it. @cg may be NULL. */
void cgroup_describe_kill(const struct cgroup *cg, int sig, char *buf, size_t len);
/* Remove it (its processes must have exited). Safe to call twice. */
int cgroup_destroy(struct cgroup *cg);

/*
 * The name of job @index's cgroup: faultline-PID-START-INDEX, where
 * START is this process's start time (<proc>/self/stat field 22). A
 * later run can then tell a cgroup whose owner is gone from one of a
 * live faultline, even after the pid was reused.
 */
int cgroup_job_name(char *buf, size_t len, unsigned index);

/*
 * At start: remove the faultline-* children of faultline's own memory
 * cgroup whose owner process is gone (a run killed by SIGKILL cannot
 * remove its own). Never touches a cgroup of a live owner, nor anything
 * outside its own cgroup. @say gets one sentence per cgroup removed, or
 * left because it still has processes. Returns how many were removed.
 * The older names faultline-PID-INDEX and faultline-probe-PID carry no
 * start time: they are removed only when no process PID exists at all.
 */
int cgroup_reap_stale(void (*say)(void *arg, const char *msg), void *arg);

#endif
