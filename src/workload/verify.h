/*
 * verify.h - reading written blocks back and checking them.
 *
 * Two users: a write job with verify=crc32c, whose workers record which
 * blocks they wrote (struct verify_map, a bit per bs block of a target)
 * and read exactly those back at their end (verify_readback); and
 * `faultline --verify JOBFILE`, which knows nothing of a run and checks
 * every block of a write job's regions (verify_job): a block with a
 * valid header is verified, one with a header that does not check is a
 * mismatch, one without a header was never written by faultline.
 *
 * Both read through the page cache (the buffered descriptor): what any
 * reader of the target sees now. The block alone decides
 * (blockdata_check), so no record of the run is needed.
 *
 * Functions return 0 or -errno with a struct err, and never print.
 */
#ifndef FAULTLINE_VERIFY_H
#define FAULTLINE_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "workload/workload.h"
#include "lib/stats.h"
#include "workload/pattern.h"

/* A block's check: its header and checksum, or, with a verify=pattern
 * @pat, the pattern byte for byte (-EILSEQ when it differs). */
int verify_block(const struct pattern *pat, const uint8_t *buf, uint32_t len, uint64_t off);

/* The blocks of one target a worker wrote: bit b is the block at
 * base + b * bs. */
struct verify_map {
	uint64_t *bits;
	uint64_t nblocks;
};

/* Allocate an empty map of @nblocks blocks. 0 or -ENOMEM. */
int verify_map_init(struct verify_map *m, uint64_t nblocks);
void verify_map_free(struct verify_map *m);
/* Blocks marked. */
uint64_t verify_map_count(const struct verify_map *m);

static inline void verify_map_set(struct verify_map *m, uint64_t blk)
{
	m->bits[blk >> 6] |= 1ull << (blk & 63);
}

static inline bool verify_map_test(const struct verify_map *m, uint64_t blk)
{
	return (m->bits[blk >> 6] >> (blk & 63)) & 1;
}

/* What blockdata_check's answer @code means, for messages:
 * "crc mismatch (torn or corrupted)", "written for offset ...". */
const char *verify_code_name(int code);

/*
 * Read back every block marked in @m from @fd (the block at
 * @base + b * @bs for each bit b) into @buf (@bs bytes) and check it;
 * add to @t (@target names the target in t->first_target). A marked
 * block without a header counts as bad (-ENOENT: the write was lost).
 * Stops early when *@stop becomes non-zero: *@complete then false.
 * 0, or -errno with @e filled when a read fails.
 */
/* fio's verify_fatal and verify_dump for verify_readback (NULL: neither). */
struct verify_opts {
	bool fatal;		/* stop at the first mismatch */
	/* verify=pattern: blocks are this pattern, no header (NULL: the
	 * header and checksum decide) */
	const struct pattern *pat;
	const char *dump;	/* the target's path: each bad block read is written to
				 * <its base name>.<offset>.received in the current
				 * directory, at most VERIFY_DUMP_MAX a call; NULL: none */
};

#define VERIFY_DUMP_MAX 16

int verify_readback(int fd, const struct verify_map *m, uint64_t base, uint32_t bs,
		    uint8_t *buf, unsigned target, const int *stop, struct verify_tally *t,
		    bool *complete, const struct verify_opts *o, struct err *e);

/*
 * A job that only reads, with verify= (fio's read verify): every block
 * it reads is checked as it arrives, against its own header. With
 * verify_state_load a target carries the map of the blocks an earlier
 * run wrote (workload/vstate.h), and only those are checked; a read of
 * another size or place than a block of the map is not checked either.
 * The worker's own: no lock, no allocation once set up.
 */
struct verify_read_target {
	uint64_t base;
	uint32_t bs;			/* the map's block size */
	struct verify_map map;		/* bits NULL: check every read */
	const char *path;		/* for verify_dump */
};

struct verify_reads {
	unsigned ntargets;
	struct verify_read_target *t;
	struct verify_tally tally;
	unsigned dumps;
	struct verify_opts o;		/* dump: unused (each target's path) */
};

/* Empty checks for @ntargets targets (-ENOMEM); verify_reads_free undoes. */
int verify_reads_init(struct verify_reads *v, unsigned ntargets, const struct verify_opts *o);
void verify_reads_free(struct verify_reads *v);

/* A read of @len bytes at @off of the worker's target @t (@target: its
 * index in the job, for the tally) that returned @data. False: stop
 * (verify_fatal and a bad block). */
bool verify_read_check(struct verify_reads *v, unsigned t, unsigned target, const uint8_t *data,
		       uint32_t len, uint64_t off);

/* faultline --verify: at most this many mismatches are kept per target
 * with their offsets (all are counted). */
#define VERIFY_KEEP_BAD 20

struct verify_bad {
	uint64_t off;
	int code;		/* blockdata_check's answer */
};

struct verify_target {
	char path[4096];
	uint64_t base, len;	/* the region checked */
	uint64_t blocks;	/* bs blocks in it */
	uint64_t valid;		/* with a valid header for their offset */
	uint64_t bad;		/* with a header that does not check */
	uint64_t never;		/* without a header: never written by faultline */
	unsigned nkept;
	struct verify_bad kept[VERIFY_KEEP_BAD];
};

struct verify_result {
	unsigned ntargets;
	struct verify_target *targets;
};

/*
 * Check every bs block of every target region write job @wj uses, as a
 * run of it would resolve them (filename=, or its scratch files
 * <directory>/<job>.<n>.<file>; offset, size). Nothing is created or
 * written: a missing target is an error (-ENOENT). Fills @r (free it
 * with verify_result_free) even on error, with the targets done so far.
 */
int verify_job(const struct workload_job *wj, struct verify_result *r, struct err *e);
void verify_result_free(struct verify_result *r);

#endif
