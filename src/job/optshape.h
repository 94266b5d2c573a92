/*
 * optshape.h - the parsers and table entries of fio's workload-shape
 * options (the man page's "Workload shapes and replay"): request sizes
 * (bssplit, bsrange, blockalign, blocksize_unaligned), offsets
 * (random_distribution's fio forms, percentage_random, rw=...:N,
 * rw_sequencer, random_generator), amounts (loops, number_ios), pace
 * (rate, rate_iops, rate_min, rate_process, rate_cycle, thinktime) and
 * ends (exitall, exitall_on_error, continue_on_error).
 *
 * Separate from options.c only to keep files short: OPTSHAPE_TABLE is
 * expanded inside option_table, so there is still one table.
 * Per-direction values follow fio's blocksize rule: "a" is every
 * direction, "a,b" reads then writes (a third value, fio's trims, is
 * read and dropped), and an empty part leaves that direction unset.
 */
#ifndef FAULTLINE_OPTSHAPE_H
#define FAULTLINE_OPTSHAPE_H

#include <stddef.h>

#include "lib/err.h"
#include "job/job.h"
#include "job/optdef.h"
#include "engines/engine.h"

opt_parse_fn optshape_bssplit;
/* bs=R[,W[,T]], fio's: a value not ended by a comma holds for the
 * directions after it; an empty one is 4k. */
opt_parse_fn optshape_bs;
/* After a section is parsed: bs's write (or, for a trim job, trim) size
 * into the write direction, unless bsrange or bssplit say otherwise. */
void optshape_resolve(struct job *j);
opt_parse_fn optshape_bsrange;
opt_parse_fn optshape_blockalign;
opt_parse_fn optshape_perc_random;
opt_parse_fn optshape_rate;
opt_parse_fn optshape_usec;
opt_parse_fn optshape_coe;
/* random_distribution's fio forms (pareto, normal, gauss, zoned,
 * zoned_abs); 1 when @val is none of them (options.c goes on), else 0 or
 * -EINVAL. */
int optshape_dist(struct job *j, const char *val, const struct option_ctx *c, struct err *e);
/* rw=...:N's postfix, after rw itself is set; @nr the text after ':'. */
int optshape_rw_postfix(struct job *j, const char *val, const char *nr, const struct option_ctx *c,
			struct err *e);
/* random_distribution's value as a job file says it, for the fio forms
 * (1), else 0. */
int optshape_fmt_dist(const struct job *j, char *buf, size_t len);
int optshape_fmt(const struct job *j, const struct option_def *o, char *buf, size_t len);

/*
 * What the shape options need of each other and of the job, with the
 * lines they were set on (jobcheck.c's job_check calls it). @line as
 * job_check's.
 */
int optshape_check(const struct job *j, const struct engine_ops *eng, const int *line,
		   struct err *e);
/* A pool engine serves a request from one frame: with several sizes or
 * a blockalign, every request must lie within a pool_page. */
int optshape_check_pool(const struct job *j, const int *line, struct err *e);

extern const char *const optshape_rw_seq_names[];
extern const char *const optshape_rate_process_names[];
extern const char *const optshape_generator_names[];
extern const char *const optshape_submit_names[];

#define OPTSHAPE_OFF(f) offsetof(struct job, f)

/* Entries of option_table (options.c). */
#define OPTSHAPE_TABLE \
	{ .name = "bssplit", .type = OPT_STR, .off = OPTSHAPE_OFF(src.bssplit), \
	  .parse = optshape_bssplit, .syntax = "bs/pct:bs/pct...[,writes]", \
	  .help = "request sizes and each one's share of requests, per direction, as fio (sorted by share; a size without a share splits what is left)" }, \
	{ .name = "bsrange", .aliases = "blocksize_range", .type = OPT_STR, \
	  .off = OPTSHAPE_OFF(src.bsrange), .parse = optshape_bsrange, .syntax = "min-max[,min-max]", \
	  .help = "request sizes drawn between min and max, multiples of min, per direction, as fio" }, \
	{ .name = "blockalign", .aliases = "ba", .type = OPT_STR, .off = OPTSHAPE_OFF(src.blockalign), \
	  .parse = optshape_blockalign, .syntax = "size[,size]", \
	  .help = "random offsets are multiples of this (default: the smallest request size), per direction" }, \
	{ .name = "blocksize_unaligned", .aliases = "bs_unaligned", .type = OPT_BOOL, \
	  .off = OPTSHAPE_OFF(bs_unaligned), .def = "0", \
	  .help = "bsrange/bssplit sizes need not be multiples of the smallest size" }, \
	{ .name = "percentage_random", .type = OPT_STR, .off = OPTSHAPE_OFF(src.perc_random), \
	  .def = "100", .parse = optshape_perc_random, .syntax = "pct[,pct]", \
	  .help = "random jobs: this % of requests at a random offset, the rest continue sequentially, per direction (100)" }, \
	{ .name = "rw_sequencer", .type = OPT_ENUM, .off = OPTSHAPE_OFF(rw_seq), .def = "sequential", \
	  .values = optshape_rw_seq_names, \
	  .help = "with rw=randread:N, the N-1 requests between random ones: the next offset (sequential) or the same one (identical)" }, \
	{ .name = "random_generator", .type = OPT_ENUM, .off = OPTSHAPE_OFF(random_generator), \
	  .def = "tausworthe", .values = optshape_generator_names, \
	  .help = "fio's generator names, accepted; faultline always draws with xoroshiro128+ (man page)" }, \
	{ .name = "loops", .type = OPT_INT, .off = OPTSHAPE_OFF(loops), .def = "1", .min = 1, \
	  .max = 1000000000, .help = "passes over the region (without time_based)" }, \
	{ .name = "number_ios", .type = OPT_U64, .off = OPTSHAPE_OFF(number_ios), .def = "0", \
	  .help = "stop a thread after this many requests, if nothing ends it earlier (0: no limit)" },

/* Pace and ends: entries of option_table (options.c). */
#define OPTPACE_TABLE \
	{ .name = "rate", .type = OPT_STR, .off = OPTSHAPE_OFF(src.rate), .parse = optshape_rate, \
	  .syntax = "bytes/s[,bytes/s]", \
	  .help = "pace each thread to this many bytes per second, per direction (latency then counts from when each request was due)" }, \
	{ .name = "rate_iops", .type = OPT_STR, .off = OPTSHAPE_OFF(src.rate_iops), .parse = optshape_rate, \
	  .syntax = "iops[,iops]", \
	  .help = "pace each thread to this many requests per second, per direction (latency then counts from when each request was due)" }, \
	{ .name = "rate_min", .aliases = "ratemin", .type = OPT_STR, .off = OPTSHAPE_OFF(src.rate_min), \
	  .parse = optshape_rate, .syntax = "bytes/s[,bytes/s]", \
	  .help = "fail the job when a thread does fewer bytes per second than this over a rate_cycle (after 2 s)" }, \
	{ .name = "rate_iops_min", .type = OPT_STR, .off = OPTSHAPE_OFF(src.rate_iops_min), \
	  .parse = optshape_rate, .syntax = "iops[,iops]", \
	  .help = "fail the job when a thread does fewer requests per second than this over a rate_cycle (after 2 s)" }, \
	{ .name = "rate_process", .type = OPT_ENUM, .off = OPTSHAPE_OFF(rate_process), .def = "linear", \
	  .values = optshape_rate_process_names, \
	  .help = "paced requests evenly spaced (linear) or a Poisson process of the same mean rate (poisson)" }, \
	{ .name = "rate_cycle", .aliases = "ratecycle", .type = OPT_INT, .off = OPTSHAPE_OFF(rate_cycle_ms), \
	  .def = "1000", .min = 1, .help = "milliseconds over which rate_min and rate_iops_min are averaged" }, \
	{ .name = "thinktime", .type = OPT_U64, .off = OPTSHAPE_OFF(thinktime_ns), .def = "0", \
	  .parse = optshape_usec, .syntax = "time (bare: microseconds)", \
	  .help = "stall this long after every thinktime_blocks requests, as an application computing" }, \
	{ .name = "thinktime_spin", .type = OPT_U64, .off = OPTSHAPE_OFF(thinktime_spin_ns), .def = "0", \
	  .parse = optshape_usec, .syntax = "time (bare: microseconds)", \
	  .help = "of each thinktime, spend this much busy on the CPU before sleeping the rest" }, \
	{ .name = "thinktime_blocks", .type = OPT_INT, .off = OPTSHAPE_OFF(thinktime_blocks), .def = "1", \
	  .min = 1, .help = "requests completed between thinktime stalls" }, \
	{ .name = "io_submit_mode", .type = OPT_ENUM, .off = OPTSHAPE_OFF(io_submit_mode), .def = "inline", \
	  .values = optshape_submit_names, \
	  .help = "paced io_uring/libaio: inline drains in-flight requests before waiting for the next due one (fio's inline); offload keeps them in flight" },

#endif
