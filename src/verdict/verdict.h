/*
 * verdict.h - faultline --verdict: plan a host-sized matrix
 * within a time budget, run it through the run controller (run.c) one
 * job at a time, judge it (judge.c) and write the report (verdict_out.c).
 */
#ifndef FAULTLINE_VERDICT_H
#define FAULTLINE_VERDICT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/err.h"
#include "verdict/verdict_out.h"

struct run;

struct verdict_opts {
	const char *directory;		/* scratch file here (default ".") */
	const char *filename;		/* or read this file or device */
	uint64_t budget_ns;		/* default 10 minutes */
	bool write_probe;		/* write into --filename too */
	const char *outdir;		/* verdict.json and verdict.html (default ".") */
	const char *csv;		/* default <outdir>/verdict.csv */
	const char *cmdline;
	char **jobfiles;		/* faultline --verdict JOBFILE...: the user's jobs */
	unsigned njobfiles;
	bool status_line;
	struct run **current;		/* the run in progress, for main's signal handler */
	volatile sig_atomic_t *stop;	/* set by main on a signal */
	/* Set by verdict_main: workloads that ran and got no number from
	 * any engine (every run failed), so the answer is incomplete. */
	unsigned unanswered;
	/* Out: the error returned is an output not written whole (runs had
	 * begun), exit 1, rather than a refusal before anything ran. */
	bool write_failed;
};

/* What the planner needs to know of the host. */
struct verdict_hostinfo {
	unsigned ncpus;
	uint64_t mem_available;
	bool cgroup_ok;
	char cgroup_why[256];
	uint64_t target_size;		/* an existing --filename's size, 0 for a scratch file */
	bool scratch_exists;		/* the scratch file is already there at full size */
	bool vmcache;			/* the build has ioengine=vmcache: a cell more */
	/* A job-file verdict: its cells per round (0: the fixed matrix's),
	 * whether any job reads the scratch file, and the least it must hold. */
	unsigned cells;
	bool no_scratch;
	uint64_t file_min;
};

/* Size the matrix (pure; unit-tested). 0 or -errno. */
int verdict_plan_make(const struct verdict_hostinfo *hi, uint64_t budget_ns, bool writes,
		      const char *writes_why, struct verdict_plan *p, struct err *e);

/* The job file of one cell, into @buf. */
void verdict_job_text(const struct verdict_plan *p, enum judge_workload w, enum judge_engine e,
		      unsigned round, const char *name, char *buf, size_t len);

/* The whole verdict; prints plan and verdict on @out. 0 = it ran (see
 * the results), -errno when it could not start. */
int verdict_main(struct verdict_opts *o, FILE *out, struct err *e);

#endif
