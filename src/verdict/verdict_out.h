/*
 * verdict_out.h - what a verdict hands its writers: the plan it
 * followed, every run of the matrix with its job text and JSON, and the
 * judge's results; and the writers: the text on stdout, verdict.json,
 * and verdict.html (drawn by plot/verdict-html from verdict.json and the
 * CSV, figures embedded as data URIs).
 */
#ifndef FAULTLINE_VERDICT_OUT_H
#define FAULTLINE_VERDICT_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/err.h"
#include "job/job.h"
#include "verdict/judge.h"

/* The matrix as sized for this host and budget. */
struct verdict_plan {
	uint64_t budget_ns;
	uint64_t mem;			/* the memory budget, bytes */
	uint64_t file_size;		/* bytes of the target read (about 4x mem) */
	bool cgroup;			/* mem_limit=mem; else reserve_mem=reserve */
	uint64_t reserve;
	char memory_why[256];		/* why reserve_mem, when it is */
	unsigned threads;		/* one per CPU */
	unsigned rounds;
	unsigned ramp_s, runtime_s;	/* per run */
	unsigned cells_per_round;
	bool writes;			/* the write mix runs */
	char writes_why[128];		/* why not, when it does not */
	double overhead_s;		/* assumed per run, beyond ramp + runtime */
	double layout_s;		/* assumed for laying out the file, 0 if it exists */
	double post_s;			/* kept for the report at the end */
	double est_s;			/* the plan's estimated total */
	char target[512];		/* the file or device read */
	bool target_ours;		/* a scratch file this verdict made */
	bool target_existed;
	/* The fair fight: io_uring O_DIRECT's queue depth, from a
	 * short probe of the device (or VERDICT_DEPTH_DEFAULT, and why), and
	 * the pages the pools read ahead on sequential runs. */
	unsigned depth;
	char depth_why[160];
	unsigned pool_prefetch;		/* for pool_page=128k (the scan's) */
	uint64_t ra_bytes;		/* the device's read-ahead, what the pools read ahead */
	double probe_s;			/* assumed for the depth probe */
	bool vmcache;			/* the build has ioengine=vmcache */
	const char *jobfile;		/* the user's job file(s), NULL: the fixed matrix */
};

/* A workload: one of the fixed matrix's, or a job of the user's file. */
struct verdict_wl {
	struct judge_wl jw;
	/* A user's job: its options as written, less what the verdict sets
	 * (engine, memory, time); the job itself, resolved. */
	char *base;
	struct job *job;		/* owned */
	uint64_t mem;			/* its memory budget */
	bool mem_own;			/* ... the job's own mem_limit or pool_size */
	uint64_t pool_page;
	bool pool_page_own;		/* ... the job's own pool_page */
	bool scratch;			/* no filename: the verdict's scratch file */
	bool replay;			/* read_iolog */
	bool fast;			/* ... replayed as fast as it goes (replay_no_stall=1) */
	unsigned threads;		/* its threads: the job's, or a replay's streams */
	bool job_shared;		/* @job belongs to the workload before it (a timed
					 * trace judged both ways is two workloads) */
	char randseed[32];		/* the job's own, "" for the verdict's per round */
	char trace[4096];		/* read_iolog as written (a replay's streams: joined by ':') */
	char target[512];		/* the file it reads, "" for the scratch file */
	char trace_direct[8192];	/* ... its blocks, for O_DIRECT (vjobs.c) */
	char skip[200];			/* why it is not run, "" when it is */
};

/* One run of the matrix. */
struct verdict_line {
	unsigned wl;			/* index into verdict_data.wls */
	enum judge_engine e;
	unsigned round;
	char name[64];			/* the job's name, also its CSV rows' */
	char *text;			/* the job file, exactly as run */
	size_t textlen;			/* its buffer */
	json_t *doc;			/* the run's JSON (owned), NULL if none */
	double elapsed_s;		/* wall time of the run, set-up included */
	char skipped[128];		/* why it did not run, "" if it ran */
	/* What the cell runs, read back from its job text: its memory (the
	 * cgroup's limit, the pool, or what reserve_mem leaves: "mem_limit",
	 * "pool_size", "reserve_mem", "" none), threads and depth. */
	struct {
		bool known;
		char mem_kind[16];
		uint64_t mem;
		unsigned threads, depth;
	} ran;
};

struct verdict_data {
	struct verdict_plan plan;
	struct judge_host host;
	json_t *checksys;		/* --check-system's findings (owned), may be NULL */
	unsigned nlines;
	struct verdict_line *lines;
	unsigned nwl;
	struct verdict_wl *wls;
	struct judge_result *res;	/* nwl of them */
	unsigned nfacts;
	struct judge_sentence facts[8];
	const char *cmdline;		/* the command as given */
	const char *self;		/* the binary, for reproduce commands */
	char json_path[512], csv_path[512], html_path[512];
	double elapsed_s;
	bool interrupted;
};

/* The plan, before anything runs. */
void verdict_out_plan(FILE *f, const struct verdict_data *d);
/* The verdict per workload, its evidence, the host facts. */
void verdict_out_text(FILE *f, const struct verdict_data *d);
/* verdict.json, written atomically. 0 or -errno. */
int verdict_out_json(const struct verdict_data *d, struct err *e);
/* verdict.html through the helper in @plot_dir. 0 or -errno; the
 * helper's own complaint (no matplotlib) is in the HTML, not an error. */
int verdict_out_html(const struct verdict_data *d, const char *plot_dir, struct err *e);

/* "faultline --output-format=json <file>" for a line, into @buf. */
void verdict_out_command(const struct verdict_data *d, const struct verdict_line *l, char *buf,
			 size_t len);

#endif
