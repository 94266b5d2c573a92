/*
 * json_out.h - the run's results as JSON, in fio's layout
 * wherever fio has the concept, so tools that read fio's JSON read
 * faultline's; everything fio lacks lives under "faultline" objects.
 * Field by field documentation: man/faultline.1, JSON OUTPUT.
 */
#ifndef FAULTLINE_JSON_OUT_H
#define FAULTLINE_JSON_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/err.h"
#include "out/results.h"

/* --output-format=json+: fio's latency histogram buckets ("bins") too. */
#define JSON_OUT_PLUS 0x1u

/* The whole document (@flags: JSON_OUT_*); NULL only when out of memory.
 * Caller json_decref()s. */
json_t *json_out_build(const struct run_result *r, unsigned flags);

/* The document as text, indented or (@compact) on one line; NULL only
 * when out of memory. Caller free()s. */
char *json_out_text(const struct run_result *r, unsigned flags, bool compact);

/* The document on @f, followed by a newline. 0 or -errno. */
int json_out_dump(FILE *f, const struct run_result *r, unsigned flags, struct err *e);

/*
 * The document into @path atomically: written to a temporary file in the
 * same directory, fsync'd, renamed over @path, the directory fsync'd. A
 * reader sees the old file or the complete new one, never a part; on
 * error no temporary file is left behind. 0 or -errno.
 */
int json_out_write_file(const struct run_result *r, const char *path, unsigned flags,
			struct err *e);
/* The same for a document built elsewhere (an MPI launch's, rankresult.c). */
int json_out_dump_doc(FILE *f, const json_t *doc, struct err *e);
int json_out_write_doc(const json_t *doc, const char *path, struct err *e);

#endif
