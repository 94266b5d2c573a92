/*
 * explain_out.h - how the summary and the JSON show what explains a job
 * (struct explain_result: residency, cost per page, the cache-full
 * moment and its phases). report.c and json_out.c call these; the
 * field-by-field description is in the man page.
 */
#ifndef FAULTLINE_EXPLAIN_OUT_H
#define FAULTLINE_EXPLAIN_OUT_H

#include <stdio.h>

#include <jansson.h>

#include "out/results.h"

/* The summary lines (indented four spaces, as the job's others). */
void explain_report(FILE *f, const struct job_result *jr);

/* jobs[].faultline members: "residency", "cost", "phases". */
void explain_json(json_t *faultline_job, const struct job_result *jr);

/* A source of the explanation that cannot be read (explain.h's why
 * strings), said once on @f: its CSV cells stay empty. Empties @why. */
void explain_warn(FILE *f, char *why);
/* A note of the explanation's (a figure read less often), once. */
void explain_note(FILE *f, char *note);

#endif
