/*
 * vstate.h - fio's verify state file (verify_state_save,
 * verify_state_load): which blocks each thread of a write job wrote, so
 * that a later run's read job checks exactly those and no block the
 * write never reached.
 *
 * One file per thread, named as fio names its own,
 * local-<job>-<thread>-verify.state in the current directory. The
 * contents are faultline's (fio's hold its I/O counters and random
 * state; faultline's blocks name their own offsets, so the map of
 * written blocks is all a later check needs): little-endian,
 *
 *   "FLVSTAT1"  u32 version (1)  u32 checksum (enum verify_mode)
 *   u32 name length, the job's name, u32 number of targets, and per
 *   target: u32 path length, the path, u64 base, u64 blocks, u32 bs,
 *   the map, a u64 per 64 blocks (bit b: block base + b * bs written)
 *   u32 CRC32C of all bytes before it
 *
 * Functions return 0 or -errno with a struct err, and never print.
 */
#ifndef FAULTLINE_VSTATE_H
#define FAULTLINE_VSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "workload/verify.h"

struct vstate_target {
	char *path;
	uint64_t base;
	uint32_t bs;
	struct verify_map map;
};

struct vstate {
	char *name;			/* the job's */
	int verify;			/* enum verify_mode it stamped */
	unsigned ntargets;
	struct vstate_target *t;
};

/* The file of thread @thread of job @job, in @buf. */
void vstate_file(char *buf, size_t len, const char *job, unsigned thread);

/* Write @vs to @file (replacing it). */
int vstate_save(const char *file, const struct vstate *vs, struct err *e);
/* Read @file into @vs (vstate_free it on success). A missing file is
 * -ENOENT, one that is not a faultline state file or fails its CRC
 * -EINVAL, each with a message naming the file. */
int vstate_load(const char *file, struct vstate *vs, struct err *e);
void vstate_free(struct vstate *vs);

#endif
