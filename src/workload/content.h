/*
 * content.h - what a written block holds when fio's buffer options ask
 * for something other than faultline's fresh, stamped blocks
 * (blockdata.h): dedupe_percentage of the writes repeat earlier content
 * (dedupe_mode=repeat: the last unique write; working_set: one of a
 * fixed set of contents, dedupe_working_set_percentage of the region's
 * blocks, shared by every job with dedupe_global=1), and
 * buffer_compress_percentage of each buffer_compress_chunk is zeros
 * after random bytes, so the data compresses to about that share, as
 * fio's fill_random_buf_percentage makes it.
 *
 * Such blocks carry no header (a repeated block cannot name its own
 * offset), so verify is refused with them. The state is a worker's own;
 * each write costs one pass of a fast generator over the block.
 */
#ifndef FAULTLINE_CONTENT_H
#define FAULTLINE_CONTENT_H

#include <stdbool.h>
#include <stdint.h>

#include "workload/workload.h"

struct content {
	bool on;
	unsigned dedupe_pct, compress_pct;
	uint32_t chunk;			/* buffer_compress_chunk */
	bool working_set;
	uint64_t ws_n;			/* contents in the working set */
	uint64_t ws_key;		/* their seeds' key: the job's, or one for all (global) */
	uint64_t rng[2];		/* the draws */
	uint64_t next;			/* the next unique content's seed */
	uint64_t last;			/* the last unique write's seed (repeat) */
	bool have_last;
};

/* Whether job @wj asks for such content. */
static inline bool content_wanted(const struct workload_job *wj)
{
	return wj->dedupe_pct || wj->compress_pct;
}

/* Worker @worker of job @wj (seed @seed) writing a region of @region_blocks
 * blocks of its size. */
void content_init(struct content *c, const struct workload_job *wj, unsigned worker,
		  uint64_t seed, uint64_t region_blocks);
/* Fill @buf (@len bytes) with the next write's content. */
void content_fill(struct content *c, uint8_t *buf, uint32_t len);

#endif
