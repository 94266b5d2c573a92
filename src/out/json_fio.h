/*
 * json_fio.h - the parts of faultline's JSON that are fio's (SPEC 7):
 * each jobs[] entry with every field fio 3.33 writes for a job, in its
 * order, names and units, and the top-level "global options". Checked
 * field by field against `fio --output-format=json` and json+ of the
 * same jobs (tests/e2e/fio-json.sh). json_out.c adds what fio lacks.
 */
#ifndef FAULTLINE_JSON_FIO_H
#define FAULTLINE_JSON_FIO_H

#include <stdbool.h>

#include <jansson.h>

#include "lib/job.h"
#include "out/results.h"

/*
 * jobs[@idx] of @r in fio's layout. @bins: fio's json+, the latency
 * histograms' buckets as clat_ns.bins and lat_ns.bins. NULL only when
 * out of memory. Caller json_decref()s.
 */
json_t *json_fio_job(const struct run_result *r, unsigned idx, bool bins);

/* fio's reporting group of job @idx: a stonewall starts a new one. */
unsigned json_fio_group(const struct run_result *r, unsigned idx);

/* fio's "job options": every option of the table that has a value, as a
 * string keyed by the option's name, formatted by option_format() ("4k",
 * "10s", "stride:64"). NULL only when out of memory. */
json_t *json_fio_job_options(const struct job *j);

/* fio's "global options": what the [global] sections said, as written;
 * a key set twice keeps its last value. NULL only when out of memory. */
json_t *json_fio_global_options(const struct run_result *r);

#endif
