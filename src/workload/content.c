/*
 * content.c - fio's dedupe and compressible write buffers; see content.h.
 */
#include "workload/content.h"
#include "lib/rng.h"

#include <string.h>

/* The working set's key under dedupe_global=1: the same for every job,
 * so their deduplicated writes share contents. */
#define CONTENT_GLOBAL_KEY 0x6465647570656b79ull

void content_init(struct content *c, const struct workload_job *wj, unsigned worker,
		  uint64_t seed, uint64_t region_blocks)
{
	uint64_t x = seed ^ ((uint64_t)worker << 40) ^ 0x636f6e74ull;

	memset(c, 0, sizeof(*c));
	c->on = content_wanted(wj);
	c->dedupe_pct = wj->dedupe_pct;
	c->compress_pct = wj->compress_pct;
	c->chunk = wj->compress_chunk ? (uint32_t)wj->compress_chunk : 512;
	c->working_set = wj->dedupe_working_set;
	c->ws_n = region_blocks * wj->dedupe_ws_pct / 100;
	if (!c->ws_n)
		c->ws_n = 1;
	if (wj->dedupe_global) {
		c->ws_key = CONTENT_GLOBAL_KEY;
	} else {
		uint64_t k = seed ^ 0x77736574ull;

		c->ws_key = splitmix64(&k);
	}
	c->rng[0] = splitmix64(&x);
	c->rng[1] = splitmix64(&x);
	c->next = splitmix64(&x);
}

/* The block from @seed, then each chunk's compressible tail zeroed. */
static void fill_from(const struct content *c, uint8_t *buf, uint32_t len, uint64_t seed)
{
	uint32_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = splitmix64(&seed);

		memcpy(buf + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = splitmix64(&seed);

		memcpy(buf + i, &v, len - i);
	}
	if (!c->compress_pct)
		return;
	for (uint32_t s = 0; s < len; s += c->chunk) {
		uint32_t n = len - s < c->chunk ? len - s : c->chunk;
		uint32_t keep = (uint32_t)((uint64_t)n * (100 - c->compress_pct) / 100);

		memset(buf + s + keep, 0, n - keep);
	}
}

void content_fill(struct content *c, uint8_t *buf, uint32_t len)
{
	uint64_t seed;

	if (c->dedupe_pct && rng_below(c->rng, 100) < c->dedupe_pct &&
	    (c->working_set || c->have_last)) {
		if (c->working_set) {
			/* member i's seed: the key stepped i times (splitmix's
			 * own increment), so two keys' sets do not overlap */
			uint64_t k = c->ws_key + rng_below(c->rng, c->ws_n) * 0x9e3779b97f4a7c15ull;

			seed = splitmix64(&k);
		} else {
			seed = c->last;
		}
	} else {
		seed = splitmix64(&c->next);
		c->last = seed;
		c->have_last = true;
	}
	fill_from(c, buf, len, seed);
}
