/*
 * optverify.h - fio's options around verify's phases: do_verify,
 * experimental_verify, verify_state_save, verify_state_load,
 * verify_backlog and verify_backlog_batch. What they do is
 * workload/verify.h (the checks), workload/vstate.h (the state file)
 * and run/runverify.c (when a worker checks); what they need of each
 * other, job/jobcheck.c.
 *
 * Separate from options.c only to keep files short: OPTVERIFY_TABLE is
 * expanded inside option_table, so there is still one table.
 */
#ifndef FAULTLINE_OPTVERIFY_H
#define FAULTLINE_OPTVERIFY_H

#include <stddef.h>

#include "engines/engine.h"
#include "job/optdef.h"
#include "lib/err.h"
#include "job/job.h"

/* verify_backlog keeps this many of a thread's last writes (16 bytes
 * each, 16 MiB at most): fio's own bound is memory, not a number. */
#define VERIFY_BACKLOG_MAX (1u << 20)

/* verify_pattern, buffer_pattern: the text checked with
 * workload/pattern.h's parser (a quoted file is read now) and kept as
 * written; verify_pattern alone means verify=pattern, as in fio. */
opt_parse_fn optverify_pattern;

#define OPTVERIFY_OFF(f) offsetof(struct job, f)

/* Entries of option_table (options.c). */
#define OPTVERIFY_TABLE \
	{ .name = "do_verify", .type = OPT_BOOL, .off = OPTVERIFY_OFF(do_verify), .def = "1", \
	  .help = "with verify: check what was written (at the end, or every verify_backlog blocks) or, in a job that only reads, every block as it is read; 0: blocks are stamped with the checksum, nothing is checked" }, \
	{ .name = "experimental_verify", .type = OPT_BOOL, .off = OPTVERIFY_OFF(experimental_verify), \
	  .def = "0", .help = "fio's: verify by replaying the write offsets instead of keeping them; faultline's check needs neither (each block's header names what it should hold), so 0 and 1 check the same" }, \
	{ .name = "verify_state_save", .type = OPT_BOOL, .off = OPTVERIFY_OFF(verify_state_save), \
	  .def = "0", .help = "a write job with verify leaves local-<job>-<thread>-verify.state in the current directory: which blocks each thread wrote, for a later verify_state_load (fio's default is 1)" }, \
	{ .name = "verify_state_load", .type = OPT_BOOL, .off = OPTVERIFY_OFF(verify_state_load), \
	  .def = "0", .help = "a read job with verify checks only the blocks an earlier run's state file says it wrote (the file must exist and describe this job's targets)" }, \
	{ .name = "verify_backlog", .type = OPT_INT, .off = OPTVERIFY_OFF(verify_backlog), .def = "0", \
	  .max = VERIFY_BACKLOG_MAX, .help = "with verify: a thread reads back and checks the blocks it wrote after every N writes, while it writes (0: only at its end)" }, \
	{ .name = "verify_backlog_batch", .type = OPT_INT, .off = OPTVERIFY_OFF(verify_backlog_batch), \
	  .def = "0", .max = VERIFY_BACKLOG_MAX, .help = "with verify_backlog: how many of the thread's last writes each check reads back (0: verify_backlog's N; more than N checks some twice, fewer leaves some to the end)" }, \
	{ .name = "verify_pattern", .type = OPT_STR, .off = OPTVERIFY_OFF(verify_pattern), \
	  .parse = optverify_pattern, .syntax = "0xHEX|DECIMAL|\"text\"|'file'|%o...", \
	  .help = "written blocks are this pattern repeated (%o: the block's offset); verify=pattern (its meaning alone) checks it byte for byte, a checksum verify= seals it with a header" }, \
	{ .name = "buffer_pattern", .type = OPT_STR, .off = OPTVERIFY_OFF(buffer_pattern), \
	  .parse = optverify_pattern, .syntax = "0xHEX|DECIMAL|\"text\"|'file'|%o...", \
	  .help = "written blocks are this pattern repeated, with no header of faultline's (with a checksum verify=, one over it); verify_pattern wins when both are set" },

#endif
