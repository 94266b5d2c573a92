/*
 * jobcheck.h - whether a job makes sense (jobcheck.c).
 */
#ifndef FAULTLINE_JOBCHECK_H
#define FAULTLINE_JOBCHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "job/job.h"

/* Checks that need only the job (not its targets): bs=0, direct with
 * mmap, size missing for scratch files, ... Warnings (iodepth>1 on a
 * sync engine) go to @warn (may be NULL). The parse functions already
 * ran these, naming the line of each option. */
int job_validate(const struct job *j, void (*warn)(const char *msg), struct err *e);

/*
 * The same for a parsed job: @line is its section's line of every
 * option_table entry (0 = not set there, NULL = unknown), so a message
 * names where each option came from; @warn gets the warnings.
 */
int job_check(const struct job *j, const int *line, void (*warn)(const char *), struct err *e);

/* For the parser's own messages: where option @name of @j was set (its
 * line, else the job's header) in @buf; whether it was set at all. */
const char *jobcheck_where(const struct job *j, const int *line, const char *name, char *buf,
			   size_t len);
bool jobcheck_given(const int *line, const char *name);
/* A formatted warning to @warn (dropped when NULL). */
void jobcheck_warnf(void (*warn)(const char *), const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
