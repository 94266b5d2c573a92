/*
 * json_fio.h - the parts of faultline's JSON that are fio's:
 * each jobs[] entry with every field fio 3.33 writes for a job, in its
 * order, names and units, and the top-level "global options". Checked
 * field by field against `fio --output-format=json` and json+ of the
 * same jobs (tests/e2e/fio-json.sh). json_out.c adds what fio lacks.
 */
#ifndef FAULTLINE_JSON_FIO_H
#define FAULTLINE_JSON_FIO_H

#include <stdbool.h>

#include <jansson.h>

#include "job/job.h"
#include "out/results.h"

/*
 * jobs[@idx] of @r in fio's layout. @bins: fio's json+, the latency
 * histograms' buckets as clat_ns.bins and lat_ns.bins. NULL only when
 * out of memory. Caller json_decref()s.
 */
json_t *json_fio_job(const struct run_result *r, unsigned idx, bool bins);

/* fio's reporting group of job @idx: a stonewall starts a new one. */
unsigned json_fio_group(const struct run_result *r, unsigned idx);

/* fio's "job options": what the job's own section (or its --name on the
 * command line) set, as fio lists it (@src, what the user wrote); not
 * [global]'s, nor a bare key. NULL only when out of memory. */
json_t *json_fio_job_options(const struct job_src *src);

/* Every option of the table that has a value in @j, as a string keyed by
 * the option's name, formatted by option_format() ("4k", "10s",
 * "stride:64"): what the job ran with, for faultline's own part of the
 * JSON. NULL only when out of memory. */
json_t *json_fio_job_resolved(const struct job *j);

/* fio's "global options": what the command line before its first --name
 * and the [global] sections set, as fio lists them (the option's own
 * name, the text after ${VAR} and keywords, no bare key); a key set twice
 * keeps its last value. NULL only when out of memory. */
json_t *json_fio_global_options(const struct run_result *r);

#endif
