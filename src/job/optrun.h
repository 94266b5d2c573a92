/*
 * optrun.h - the parsers and table entries of fio's run-control
 * options: steadystate (ss, ss_dur, ss_ramp, ss_interval), exitall,
 * exitall_on_error and exit_what, flow (flow_id, flow_sleep,
 * flow_watermark) and latency_target (latency_window,
 * latency_percentile, latency_run). What they do is run/runctl.h (the
 * controller's part) and run/pace.h (the workers' part).
 *
 * Separate from options.c only to keep files short: OPTRUN_TABLE is
 * expanded inside option_table, so there is still one table.
 */
#ifndef FAULTLINE_OPTRUN_H
#define FAULTLINE_OPTRUN_H

#include <stddef.h>

#include "engines/engine.h"
#include "job/optdef.h"
#include "lib/err.h"
#include "job/job.h"

opt_parse_fn optrun_ss;
opt_parse_fn optrun_pct;
opt_parse_fn optrun_noop;
/* A value as a job file says it, for the options above (1), else -1. */
int optrun_fmt(const struct job *j, const struct option_def *o, char *buf, size_t len);
/* What the options need of each other and of the engine (job_check). */
int optrun_check(const struct job *j, const struct engine_ops *eng, struct err *e);

extern const char *const optrun_exit_what_names[];

/* fio's FLOW_MAX_WEIGHT. */
#define OPTRUN_FLOW_MAX 1000

#define OPTRUN_OFF(f) offsetof(struct job, f)

/* Entries of option_table (options.c). */
#define OPTRUN_TABLE \
	{ .name = "exitall", .type = OPT_BOOL, .off = OPTRUN_OFF(exitall), .def = "0", \
	  .help = "when one job's thread ends, stop the others exit_what names (fio: set in any job, it holds for all)" }, \
	{ .name = "exitall_on_error", .type = OPT_BOOL, .off = OPTRUN_OFF(exitall_on_error), .def = "0", \
	  .help = "when this job fails, stop the others exit_what names" }, \
	{ .name = "exit_what", .type = OPT_ENUM, .off = OPTRUN_OFF(exit_what), .def = "group", \
	  .values = optrun_exit_what_names, \
	  .help = "what exitall stops: the jobs of this job's group (new_group, stonewall), every running job (stonewall; the next stonewall group still runs), or the whole run (all)" }, \
	{ .name = "steadystate", .aliases = "ss", .type = OPT_STR, .off = OPTRUN_OFF(src.ss), \
	  .def = "iops_slope:0.01%", .parse = optrun_ss, \
	  .syntax = "iops|iops_slope|bw|bw_slope|lat|lat_slope:LIMIT[%]", \
	  .help = "with ss_dur: end the job once every sample of the window is within LIMIT of their mean (or their slope is below LIMIT)" }, \
	{ .name = "steadystate_duration", .aliases = "ss_dur", .type = OPT_TIME, \
	  .off = OPTRUN_OFF(ss_dur_ns), .def = "0", \
	  .help = "the rolling window steady state is judged over (0: no detection; bare number: seconds)" }, \
	{ .name = "steadystate_ramp_time", .aliases = "ss_ramp", .type = OPT_TIME, \
	  .off = OPTRUN_OFF(ss_ramp_ns), .def = "0", \
	  .help = "run this long before the first steady-state sample" }, \
	{ .name = "steadystate_check_interval", .aliases = "ss_interval", .type = OPT_TIME, \
	  .off = OPTRUN_OFF(ss_interval_ns), .def = "1", \
	  .help = "time between steady-state samples (at least 1s; ss_dur a multiple of it)" }, \
	{ .name = "flow", .type = OPT_INT, .off = OPTRUN_OFF(flow), .def = "0", .max = OPTRUN_FLOW_MAX, \
	  .help = "weight in fio's token flow control: the threads of jobs sharing a flow_id issue requests in the ratio of their weights (0: none)" }, \
	{ .name = "flow_id", .type = OPT_INT, .off = OPTRUN_OFF(flow_id), .def = "0", \
	  .help = "the flow this job's weight counts in" }, \
	{ .name = "flow_sleep", .type = OPT_INT, .off = OPTRUN_OFF(flow_sleep_us), .def = "0", \
	  .syntax = "usec", \
	  .help = "microseconds a thread held back by flow sleeps before trying again (0: it tries at once)" }, \
	{ .name = "flow_watermark", .type = OPT_CUSTOM, .parse = optrun_noop, .syntax = "int", \
	  .noop = FIO_NOOP_FLOW_WATERMARK, \
	  .help = "fio's; accepted, no effect: deprecated in fio, where it has none either" }, \
	{ .name = "latency_target", .type = OPT_U64, .off = OPTRUN_OFF(latency_target_ns), .def = "0", \
	  .parse = optshape_usec, .syntax = "time (bare: microseconds)", \
	  .help = "io_uring, libaio: search for the deepest queue (up to iodepth) whose latency meets this target, as fio (0: off)" }, \
	{ .name = "latency_window", .type = OPT_U64, .off = OPTRUN_OFF(latency_window_ns), .def = "0", \
	  .parse = optshape_usec, .syntax = "time (bare: microseconds)", \
	  .help = "with latency_target: how long each queue depth is tried" }, \
	{ .name = "latency_percentile", .type = OPT_CUSTOM, .off = OPTRUN_OFF(latency_percentile), \
	  .def = "100", .parse = optrun_pct, .syntax = "float", \
	  .help = "with latency_target: the % of requests that must meet it (100: one miss lowers the depth at once)" }, \
	{ .name = "latency_run", .type = OPT_BOOL, .off = OPTRUN_OFF(latency_run), .def = "0", \
	  .help = "with latency_target: keep adjusting the depth for the whole run, instead of ending after one window at the depth found" },

#endif
