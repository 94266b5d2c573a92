/*
 * jobfile.h - fio-style job files and command-line jobs -> struct job.
 *
 * INI syntax, [global], k/m/g/t and time suffixes, ${VAR} from the
 * environment, fio's $pagesize/$mb_memory/$ncpus and arithmetic. Every
 * error names the file, line, option and value.
 */
#ifndef FAULTLINE_JOBFILE_H
#define FAULTLINE_JOBFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "lib/err.h"
#include "job/job.h"
#include "job/jobcheck.h"

struct joblist {
	unsigned n;
	struct job **jobs;
	/* Every option set in a [global] section (or on the command line
	 * before the first --name), as written, in order: fio's "global
	 * options". A bare boolean key has the value "1". */
	unsigned nglobals;
	struct job_opt *globals;
};

/*
 * Where the parse functions send warnings (iodepth>1 on a synchronous
 * engine, KiB meaning 1000 as in fio, ...): one process-wide hook, set
 * once by main before parsing; NULL (the default) drops them. A hook
 * rather than a parameter so the three parse functions keep fio-like
 * signatures; job_validate, called on its own, takes its own.
 */
void jobfile_set_warn(void (*warn)(const char *msg));

/*
 * Parse a job file; jobs are appended to @jl, all or none: on error @jl
 * is left as it was. Each file starts with fresh globals.
 */
int jobfile_parse_file(struct joblist *jl, const char *path, struct err *e);
/* Parse text already in memory (the embedded demo); @name is used in
 * messages in place of a file name. */
int jobfile_parse_text(struct joblist *jl, const char *name, const char *text,
		       struct err *e);
/*
 * fio-style command-line jobs: "--name=x --rw=randread --bs=4k ...";
 * options before the first --name go to a global section. @argv holds
 * only job options (main has taken its own). Appended to @jl.
 */
int jobfile_parse_args(struct joblist *jl, int argc, char **argv, struct err *e);


/* A job file: @text NULL reads the file @name; else @text, with @name
 * in messages (the embedded demo). */
struct jobfile_src {
	const char *name;
	const char *text;
};

/* fio's --section=NAME (repeatable): only the jobs so named run. */
struct jobfile_select {
	unsigned n;
	const char *const *names;
	bool *found;		/* n entries, the caller's: a job had that name */
};

/*
 * fio's command line with job files, in fio's order of precedence:
 * @argv's options before its first --name are globals beneath every
 * file's own, so a file's [global] and job sections override them (a
 * defined job's own options override its [global]); the command line's
 * jobs come first, then each source's in order. @sel, when not NULL
 * and not empty, keeps only the jobs it names ([global] sections are
 * always read) and refuses a name that matched none. Appended to @jl,
 * all or none.
 */
int jobfile_parse_cmdline(struct joblist *jl, int argc, char **argv, unsigned nsrc,
			  const struct jobfile_src *src, struct jobfile_select *sel,
			  struct err *e);

/* Frees every job and the array; @jl is empty afterwards. */
void joblist_free(struct joblist *jl);
/* Frees a job the parser allocated: its strings and the struct. */
void job_free(struct job *j);

#endif
