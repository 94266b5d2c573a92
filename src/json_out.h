/*
 * json_out.h - the run's results as JSON (SPEC 7), in fio's layout
 * wherever fio has the concept, so tools that read fio's JSON read
 * faultline's; everything fio lacks lives under "faultline" objects.
 * Field by field documentation: man/json.1.in.
 */
#ifndef FAULTLINE_JSON_OUT_H
#define FAULTLINE_JSON_OUT_H

#include <stdio.h>

#include <jansson.h>

#include "err.h"
#include "job.h"
#include "results.h"

/* The whole document; NULL only when out of memory. Caller json_decref()s. */
json_t *json_out_build(const struct run_result *r);

/* fio's "job options": every option of the table that has a value, as a
 * string keyed by the option's name, formatted by option_format() ("4k",
 * "10s", "stride:64"). NULL only when out of memory. */
json_t *json_out_job_options(const struct job *j);

/* The document on @f, followed by a newline. 0 or -errno. */
int json_out_dump(FILE *f, const struct run_result *r, struct err *e);

/*
 * The document into @path atomically: written to a temporary file in the
 * same directory, fsync'd, renamed over @path, the directory fsync'd. A
 * reader sees the old file or the complete new one, never a part; on
 * error no temporary file is left behind. 0 or -errno.
 */
int json_out_write_file(const struct run_result *r, const char *path, struct err *e);
/* The same for a document built elsewhere (an MPI launch's, rankresult.c). */
int json_out_dump_doc(FILE *f, const json_t *doc, struct err *e);
int json_out_write_doc(const json_t *doc, const char *path, struct err *e);

#endif
