/*
 * gen.h - the offset generator every engine shares.
 *
 * Given a worker's targets (each a byte region), yields (target, offset)
 * pairs: sequential scans with one shared cursor per target that all of
 * a job's workers take scan_chunk pieces from (the paper's scan), or a
 * private slice per worker (partitioned); random reads uniform or zipf.
 * The same seed gives the same sequence. file_service_type picks the
 * target for each request. No locks; the shared cursor is one atomic
 * fetch-add per chunk, not per request.
 */
#ifndef FAULTLINE_GEN_H
#define FAULTLINE_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "job.h"

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
	uint64_t seed;
	unsigned worker;	/* this worker's index in its job */
	unsigned nworkers;	/* workers in the job (partitioned slices) */
	bool wrap;		/* time_based: start over when a pass ends */
	uint64_t io_limit;	/* bytes this worker may issue; 0 = one pass */
};

struct gen_target;

struct gen {
	struct gen_config c;
	unsigned ntargets;
	unsigned cur;		/* target in use */
	struct gen_target *t;	/* ntargets entries */
	uint64_t rng[2];	/* xoroshiro128+ state */
	uint64_t issued;	/* bytes handed out */
	bool done;
	void *zipf;		/* private zipf state, NULL unless dist=zipf */
};

/*
 * @cursors: ntargets shared cursors (used when rw=read, scan=shared).
 * One pass means: randread, the worker's targets' total length in
 * requests; partitioned, the worker's slice of each target once; shared,
 * each target's cursor reaching its length (the job together reads each
 * target once).
 */
int gen_init(struct gen *g, const struct gen_config *c, unsigned ntargets,
	     const struct gen_region *regions, struct gen_cursor *cursors,
	     struct err *e);
void gen_free(struct gen *g);

/* 1 and a request in *target, *off (absolute, bs-aligned from base,
 * never crossing base+len: the last request of a region may be short and
 * its length goes in *len); 0 when the worker has nothing more to do. */
int gen_next(struct gen *g, unsigned *target, uint64_t *off, uint32_t *len);

#endif
