/*
 * optio.h - the parsers and table entries of fio's options about where
 * and how each request goes beyond its shape (optshape.h): strided zones
 * (zonemode, zonesize, zonerange, zoneskip), the sequence distribution's
 * stride, and I/O priorities (prioclass, prio, cmdprio_percentage,
 * cmdprio_class, cmdprio, cmdprio_bssplit, log_prio).
 *
 * Separate from options.c only to keep files short: OPTIO_TABLE is
 * expanded inside option_table, so there is still one table.
 */
#ifndef FAULTLINE_OPTIO_H
#define FAULTLINE_OPTIO_H

#include <stddef.h>

#include "lib/err.h"
#include "job/job.h"
#include "job/optdef.h"
#include "engines/engine.h"
#include "job/optshape.h"

opt_parse_fn optio_zonemode;
opt_parse_fn optio_prio;
opt_parse_fn optio_cmdprio;
opt_parse_fn optio_cmdprio_bssplit;
extern const char *const optio_dedupe_names[];
extern const char *const optio_log_window_names[];
opt_parse_fn optio_log_window;

opt_parse_fn optio_ignore_error;

/* --parse-only's value of one of these options (1), or -1: not one. */
int optio_fmt(const struct job *j, const struct option_def *o, char *buf, size_t len);

/* What these options need of each other and of the job (job_check). */
int optio_check(const struct job *j, const struct engine_ops *eng, struct err *e);

/* zonemode=strided in effect (fio: zonesize alone means it). */
static inline bool job_zoned(const struct job *j)
{
	return j->zonemode == ZONE_STRIDED || (j->zonemode == ZONE_UNSET && j->zone_size);
}

#define OPTIO_OFF(f) offsetof(struct job, f)

/* Entries of option_table (options.c). */
#define OPTIO_TABLE \
	{ .name = "zonemode", .type = OPT_CUSTOM, .off = OPTIO_OFF(zonemode), \
	  .parse = optio_zonemode, .syntax = "none|strided", \
	  .help = "strided: zonesize bytes in a zone, then zoneskip bytes skipped, as fio (set by zonesize alone; zbd is not supported)" }, \
	{ .name = "zonesize", .type = OPT_SIZE, .off = OPTIO_OFF(zone_size), .def = "0", \
	  .help = "zonemode=strided: bytes issued in a zone before moving to the next (0: no zones)" }, \
	{ .name = "zonerange", .type = OPT_SIZE, .off = OPTIO_OFF(zone_range), .def = "0", \
	  .help = "zonemode=strided: the size of a zone, where its requests lie (0: zonesize)" }, \
	{ .name = "zoneskip", .type = OPT_SIZE, .off = OPTIO_OFF(zone_skip), .def = "0", \
	  .help = "zonemode=strided: bytes skipped after each zone" }, \
	{ .name = "random_sequence_stride", .type = OPT_BOOL, .off = OPTIO_OFF(seq_stride), .def = "0", \
	  .help = "random_distribution=sequence: each cycle of the sequence moves on by its length (0: the same blocks again)" },

#define OPTIO_PRIO_TABLE \
	{ .name = "prioclass", .type = OPT_INT, .off = OPTIO_OFF(prio_class), .parse = optio_prio, \
	  .max = 3, .help = "the job's I/O priority class (ioprio_set per thread): 1 realtime, 2 best effort, 3 idle (0: best effort)" }, \
	{ .name = "prio", .type = OPT_INT, .off = OPTIO_OFF(prio_level), .parse = optio_prio, \
	  .max = 7, .help = "the job's I/O priority level within its class, 0 highest, 7 lowest (ioprio_set per thread)" }, \
	{ .name = "cmdprio_percentage", .type = OPT_STR, .off = OPTIO_OFF(src.cmdprio_perc), \
	  .parse = optio_cmdprio, .syntax = "pct[,pct]", \
	  .help = "io_uring, libaio: this % of requests carry the priority cmdprio_class/cmdprio (sqe ioprio, aio_reqprio), per direction" }, \
	{ .name = "cmdprio_class", .type = OPT_STR, .off = OPTIO_OFF(src.cmdprio_class), \
	  .parse = optio_cmdprio, .syntax = "1-3[,1-3]", \
	  .help = "io_uring, libaio: the class of cmdprio_percentage's and cmdprio_bssplit's requests (1 realtime, the default)" }, \
	{ .name = "cmdprio", .type = OPT_STR, .off = OPTIO_OFF(src.cmdprio_level), \
	  .parse = optio_cmdprio, .syntax = "0-7[,0-7]", \
	  .help = "io_uring, libaio: the level of cmdprio_percentage's and cmdprio_bssplit's requests (0)" }, \
	{ .name = "cmdprio_bssplit", .type = OPT_STR, .off = OPTIO_OFF(src.cmdprio_bssplit), \
	  .parse = optio_cmdprio_bssplit, .syntax = "bs/pct[/class/level[/hint]]:...[,writes]", \
	  .help = "io_uring, libaio: per request size, the share of requests given a priority (cmdprio_class/cmdprio, or their own), as fio" }, \
	{ .name = "log_prio", .type = OPT_BOOL, .off = OPTIO_OFF(log_prio), .def = "0", \
	  .help = "fio logs: the priority column holds the ioprio value, and latency entries are split by priority" }, \
	{ .name = "log_window_value", .aliases = "log_max_value", .type = OPT_ENUM, \
	  .off = OPTIO_OFF(log_window_value), .def = "avg", .values = optio_log_window_names, \
	  .parse = optio_log_window, .syntax = "avg|max|both|0|1", \
	  .help = "fio logs: an entry holds its window's mean, its maximum, or both (a second value column); latency logs, as a rate's window has one value" }, \
	{ .name = "log_issue_time", .type = OPT_BOOL, .off = OPTIO_OFF(log_issue_time), .def = "0", \
	  .help = "fio latency logs: a last column, the issue time, 0 in faultline's averaged entries as fio writes it in its own (needs write_lat_log and log_offset)" },

/* Entries of option_table (options.c): fio's verify and atomic writes. */
#define OPTIO_VERIFY_TABLE \
	{ .name = "atomic", .type = OPT_BOOL, .off = OPTIO_OFF(atomic), .def = "0", \
	  .help = "writes carry RWF_ATOMIC (whole or not at all) where the target takes them (direct=1, statx's atomic unit sizes); elsewhere a warning and plain writes" }, \
	{ .name = "verify_write_sequence", .type = OPT_BOOL, .off = OPTIO_OFF(verify_write_sequence), \
	  .def = "1", .help = "fio's: check the header's write sequence; faultline checks each block's offset, length and checksum, never the order of writes (0 or 1 alike)" }, \
	{ .name = "continue_on_error", .type = OPT_CUSTOM, .off = OPTIO_OFF(continue_on_error), \
	  .def = "none", .parse = optshape_coe, .syntax = "none|read|write|io|verify|all|0|1", \
	  .help = "errors of these requests (EIO and EILSEQ, or ignore_error's) are counted (fio's total_err, first_error) and the thread goes on; verify: read-back mismatches do not fail the job" }, \
	{ .name = "ignore_error", .type = OPT_STR, .off = OPTIO_OFF(src.ignore_error), \
	  .parse = optio_ignore_error, .syntax = "READ_LIST,WRITE_LIST,VERIFY_LIST (errnos, ':'-separated)", \
	  .help = "the errnos continue_on_error goes on after, per kind (fio's; EIO and EILSEQ for a kind without a list)" }, \
	{ .name = "error_dump", .type = OPT_BOOL, .off = OPTIO_OFF(error_dump), .def = "1", \
	  .help = "each error continue_on_error goes on after is in the summary (the first 16 a thread; the rest counted); 0: only the count and the first, and the error that ended the job" }, \
	{ .name = "verify_fatal", .type = OPT_BOOL, .off = OPTIO_OFF(verify_fatal), .def = "0", \
	  .help = "the end-of-job read-back stops at a thread's first mismatch (the job fails either way)" }, \
	{ .name = "verify_dump", .type = OPT_BOOL, .off = OPTIO_OFF(verify_dump), .def = "0", \
	  .help = "each mismatching block as read goes to <target>.<offset>.received in the current directory (16 a thread at most)" }, \
	{ .name = "dedupe_percentage", .type = OPT_INT, .off = OPTIO_OFF(dedupe_pct), .def = "0", \
	  .max = 100, .help = "this % of writes repeat earlier content (dedupe_mode), as fio; their blocks carry no header" }, \
	{ .name = "dedupe_mode", .type = OPT_ENUM, .off = OPTIO_OFF(dedupe_mode), .def = "repeat", \
	  .values = optio_dedupe_names, \
	  .help = "repeat: a deduplicated write repeats the last unique one; working_set: one of a fixed set of contents" }, \
	{ .name = "dedupe_working_set_percentage", .type = OPT_INT, .off = OPTIO_OFF(dedupe_ws_pct), \
	  .def = "5", .min = 1, .max = 100, \
	  .help = "dedupe_mode=working_set: the set holds this % of the region's blocks" }, \
	{ .name = "dedupe_global", .type = OPT_BOOL, .off = OPTIO_OFF(dedupe_global), .def = "0", \
	  .help = "dedupe_mode=working_set: every job with it draws from one working set" }, \
	{ .name = "buffer_compress_percentage", .type = OPT_INT, .off = OPTIO_OFF(compress_pct), \
	  .def = "0", .max = 100, \
	  .help = "written data compresses to about this %: each buffer_compress_chunk ends in this % of zeros, as fio" }, \
	{ .name = "buffer_compress_chunk", .type = OPT_SIZE, .off = OPTIO_OFF(compress_chunk), \
	  .def = "512", .min = 1, .help = "the unit of buffer_compress_percentage's random bytes and zeros" },

#endif
