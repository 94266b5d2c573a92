/*
 * jobtext.h - the option table and a job as the user reads them:
 * --cmdhelp (every option of the table on a line, or one in full: type,
 * default, range, values, and the engines for ioengine) and
 * --parse-only (a resolved job, one option per line, fio-style, with
 * where it was defined and the fio options accepted as no-ops).
 */
#ifndef FAULTLINE_JOBTEXT_H
#define FAULTLINE_JOBTEXT_H

#include <stdio.h>

#include "job/job.h"

/* --cmdhelp (@name NULL) and --cmdhelp=NAME. -ENOENT when NAME is unknown. */
int jobtext_cmdhelp(FILE *f, const char *name);

/* --parse-only: @j resolved, one option per line. */
void jobtext_job(FILE *f, const struct job *j);

#endif
