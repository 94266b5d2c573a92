/*
 * verdict_out.h - what a verdict (SPEC 16) hands its writers: the plan it
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
};

/* One run of the matrix. */
struct verdict_line {
	enum judge_workload w;
	enum judge_engine e;
	unsigned round;
	char name[64];			/* the job's name, also its CSV rows' */
	char *text;			/* the job file, exactly as run */
	json_t *doc;			/* the run's JSON (owned), NULL if none */
	double elapsed_s;		/* wall time of the run, set-up included */
	char skipped[128];		/* why it did not run, "" if it ran */
};

struct verdict_data {
	struct verdict_plan plan;
	struct judge_host host;
	json_t *checksys;		/* --check-system's findings (owned), may be NULL */
	unsigned nlines;
	struct verdict_line *lines;
	struct judge_result res[JW_NR];
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
