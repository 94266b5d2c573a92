/*
 * gen.h - the offset generator every engine shares.
 *
 * Given a worker's targets (each a byte region), yields (target, offset)
 * pairs: sequential scans with one shared cursor per target that all of
 * a job's workers take scan_chunk pieces from (the paper's scan), or a
 * private slice per worker (partitioned); random reads uniform or zipf.
 * The same seed gives the same sequence. file_service_type picks the
 * target for each request. No locks; the shared cursor is one atomic
 * fetch-add per chunk, not per request. Zipf ranks come from
 * rejection-inversion sampling (O(1) setup and memory for any number of
 * blocks; why in gen.c), scattered over the region by gen_perm.
 */
#ifndef FAULTLINE_GEN_H
#define FAULTLINE_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "workload/workload.h"

/* A target's region: offsets handed out lie in [base, base+len). */
struct gen_region {
	uint64_t base;
	uint64_t len;
};

/* One per target per job for scan=shared, zeroed before workers start. */
struct gen_cursor {
	uint64_t next;		/* bytes handed out so far (fetch-add) */
} __attribute__((aligned(64)));

struct gen_config {
	enum rw_mode rw;
	enum scan_mode scan;
	enum fst_mode fst;
	enum dist_mode dist;
	double zipf_theta;
	uint64_t bs;
	uint64_t scan_chunk;
	uint64_t seed;		/* the job's seed, used as given (the caller draws
				 * one when randseed is unset); mixed with
				 * worker, so workers differ */
	unsigned worker;	/* this worker's index in its job */
	unsigned nworkers;	/* workers in the job (partitioned slices) */
	bool wrap;		/* time_based: start over when a pass ends */
	uint64_t io_limit;	/* bytes this worker may issue; 0 = one pass */
	unsigned passes;	/* loops: passes instead of one (0 or 1 = one) */

	/*
	 * fio's shapes (gen_config_shape fills them from a job; all zero is
	 * the plain generator above, whose fast paths they leave alone).
	 * With any of them the worker's requests follow fio's io_u.c: sizes
	 * per direction (bssplit, bsrange, blockalign), random offsets of
	 * blockalign units (pareto, normal, zoned, zoned_abs besides
	 * uniform and zipf; percentage_random; rw=randread:N), sequential
	 * ones with rw=read:N's gaps or steps back, each worker walking its
	 * own slice; a pass ends when it has issued the region's bytes, as
	 * fio's does. number_ios caps the requests.
	 */
	const struct job_dir *dirs;	/* [2]: reads, writes; NULL = bs for both */
	unsigned dir;		/* gen_next's direction (a write-only job: 1) */
	bool bs_unaligned;
	double pareto_h, gauss_dev;
	unsigned seq_nr;	/* 0 or 1: every random request random */
	int64_t seq_add;
	enum rw_seq_mode rw_seq;
	uint64_t number_ios;
	/* random_distribution=sequence (fio's): block indices of min bs in
	 * turn, each direction counting its own requests; with seq_stride
	 * each cycle moves one sequence length on, and a block past the
	 * region ends the worker. */
	const uint32_t *seq;
	unsigned nseq;
	bool seq_stride;
	/* zonemode=strided (fio's): zone_size bytes issued in a zone of
	 * zone_range bytes at zone_off, then the zone moves on zone_range +
	 * zone_skip (back to the region's start past its end); random
	 * offsets are drawn uniformly within the zone. 0 = off. */
	uint64_t zone_size, zone_range, zone_skip;
};

/* The shape fields of @c from @wj (the rest is the caller's). */
void gen_config_shape(struct gen_config *c, const struct workload_job *wj);
/* Whether @c asks for the shaped generator. */
bool gen_config_shaped(const struct gen_config *c);
/* Whether job @wj uses any of fio's shapes (or loops). */
bool gen_job_shaped(const struct workload_job *wj);


struct gen_target;
struct gen_shape;

struct gen {
	struct gen_config c;	/* scan_chunk rounded up to a multiple of bs */
	unsigned ntargets;
	unsigned cur;		/* target in use */
	struct gen_target *t;	/* ntargets entries */
	uint64_t rng[2];	/* xoroshiro128+ state */
	uint64_t issued;	/* bytes handed out */
	bool done;
	void *zipf;		/* private zipf state, NULL unless dist=zipf */

	bool endless;		/* wrap or io_limit: a pass end starts another */
	uint64_t limit;		/* io_limit unless wrap (which wins, as in fio) */
	uint64_t reqs;		/* requests handed out (randread pass count) */
	uint64_t pass_reqs;	/* randread one pass: ceil(sum of lengths / bs) */
	unsigned live;		/* targets not yet exhausted (sequential, one pass) */
	struct gen_shape *shape;	/* fio's shapes, NULL for a plain job */
};

/*
 * @cursors: ntargets shared cursors (used when rw=read, scan=shared).
 * One pass means: randread, ceil(total length of the worker's targets /
 * bs) requests; partitioned, the worker's slice of each target once;
 * shared, each target's cursor reaching its length (the job together
 * reads each target once).
 *
 * wrap (time_based) never stops, even with io_limit, as fio's
 * time_based ignores io_size. io_limit without wrap: pass after pass
 * until the worker has issued at least io_limit bytes (the last request
 * is not shortened, so a limit that is not a multiple of bs is passed by
 * less than one request, as fio's is). With fio's shapes, a request that
 * would cross the end of a pass is cut to it (fio's random map ends each
 * pass on the region's bytes), so a limit of whole passes is exact.
 *
 * Partitioned: worker w of n gets [len*w/n, len*(w+1)/n) of each target,
 * both ends rounded down to a multiple of bs, the last worker up to len.
 * Shared: scan_chunk is rounded up to a multiple of bs; a pass is
 * ceil(len / scan_chunk) pieces, the last one short when len is not a
 * multiple, and piece i of the cursor is piece i mod that of the region
 * (the pieces of every pass tile it). cursor->next counts pieces taken
 * times scan_chunk.
 *
 * file_service_type=sequential with wrap or io_limit moves to the next
 * target when the worker finishes the piece or slice that ends a pass;
 * for randread, after ceil(len / bs) requests on a target.
 *
 * Region lengths must be > 0; errors: -EINVAL with @e filled, -ENOMEM.
 */
int gen_init(struct gen *g, const struct gen_config *c, unsigned ntargets,
	     const struct gen_region *regions, struct gen_cursor *cursors,
	     struct err *e);
void gen_free(struct gen *g);

/* 1 and a request in *target, *off (absolute, bs-aligned from base,
 * never crossing base+len: the last request of a region may be short and
 * its length goes in *len); 0 when the worker has nothing more to do. */
int gen_next(struct gen *g, unsigned *target, uint64_t *off, uint32_t *len);
/* The same for direction @dir (0 reads, 1 writes), which a shaped job's
 * sizes and zones may depend on; a mixed job's loop draws the direction
 * first. */
int gen_next_dir(struct gen *g, unsigned dir, unsigned *target, uint64_t *off, uint32_t *len);

#endif
