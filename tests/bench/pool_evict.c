/*
 * pool_evict.c - what a miss costs the thread that takes it when the
 * pool is full, in each pool, on a device that costs nothing (a memset):
 * the pools' own work, with no disk's tail over it. vmcache's missing
 * thread evicts a batch of pool_evict_batch pages inside that one request
 * (the clock's sweep, write-backs, one process_madvise or a madvise per
 * run), bufpool's takes one frame; the percentiles of the time per miss
 * show where that lands. A benchmark, not a test: it prints and never
 * fails.
 *
 *   make build/libfaultline.a
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -Isrc -o build/pool_evict tests/bench/pool_evict.c \
 *       build/libfaultline.a -lm -pthread
 *   build/pool_evict [pages [misses]]
 *
 * pages (131072, 512 MiB of 4 KiB) is the region, the pool an eighth of
 * it; every request is a miss on a page not resident (pages in turn, from
 * a shuffled order). Rows: bufpool; vmcache at batches 1, 4, 8, 16 and
 * 64, with process_madvise (as the pool does where the kernel has it)
 * and with a madvise per run (as before, and on older kernels).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engines/bufpool.h"
#include "engines/vmcache.h"

#include "poolbench.h"


static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentiles of @n times (sorted here), in microseconds. */
static void report(const char *name, uint64_t *t, uint64_t n, uint64_t total)
{
	qsort(t, n, sizeof(*t), cmp_u64);
	printf("%-26s %8.2f %8.2f %8.2f %8.2f %8.2f %9.1f\n", name, (double)total / (double)n / 1e3,
	       t[n / 2] / 1e3, t[n * 99 / 100] / 1e3, t[n * 999 / 1000] / 1e3, t[n - 1] / 1e3,
	       (double)n * 1e9 / (double)total);
}

int main(int argc, char **argv)
{
	const uint64_t npages = argc > 1 ? strtoull(argv[1], NULL, 0) : 131072;
	const uint64_t misses = argc > 2 ? strtoull(argv[2], NULL, 0) : 200000;
	const uint64_t cap = npages / 8;
	static const unsigned batches[] = { 1, 4, 8, 16, 64 };
	uint64_t *order = malloc(npages * sizeof(*order)), *t = malloc(misses * sizeof(*t));
	uint64_t x = 88172645463325252ull;
	struct err e;

	if (!order || !t)
		return 1;
	/* A shuffled order of the pages, visited in turn: every request
	 * misses once the pool is full. */
	for (uint64_t i = 0; i < npages; i++)
		order[i] = i;
	for (uint64_t i = npages - 1; i > 0; i--) {
		uint64_t j, tmp;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = x % (i + 1);
		tmp = order[i], order[i] = order[j], order[j] = tmp;
	}
	printf("%llu pages of 4 KiB, pool of %llu, %llu misses after it filled (us per miss)\n",
	       (unsigned long long)npages, (unsigned long long)cap, (unsigned long long)misses);
	printf("%-26s %8s %8s %8s %8s %8s %9s\n", "pool", "mean", "p50", "p99", "p99.9", "max",
	       "misses/s");
	{
		struct bufpool *bp;
		struct bufpool_io io = { .read = fill_bp, .write = no_write_bp };
		struct pool_counters c = { 0 };
		uint64_t total = 0;

		if (bufpool_create(&bp, cap * PAGE, PAGE, npages, &e)) {
			fprintf(stderr, "%s\n", e.msg);
			return 1;
		}
		for (uint64_t i = 0; i < cap + misses; i++) {
			uint64_t t0 = now(), dt;
			uint32_t ref;
			uint8_t *d;

			if (bufpool_get(bp, (uint32_t)order[i % npages], BUFPOOL_SHARED, &io, &c, &ref,
					&d))
				return 1;
			bufpool_unpin(bp, ref);
			dt = now() - t0;
			if (i >= cap) {
				t[i - cap] = dt;
				total += dt;
			}
		}
		report("bufpool", t, misses, total);
		bufpool_destroy(bp);
	}
	for (unsigned pm = 0; pm < 2; pm++)
		for (unsigned b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
			struct vmcache *vc;
			struct vmcache_io io = { .read = fill_vm, .write = no_write_vm };
			struct pool_counters c = { 0 };
			uint64_t total = 0;
			char name[64];

			if (vmcache_create(&vc, npages, PAGE, cap, batches[b], &e)) {
				fprintf(stderr, "%s\n", e.msg);
				return 1;
			}
			vc->batch_advise = pm == 0;
			for (uint64_t i = 0; i < cap + misses; i++) {
				uint64_t t0 = now(), dt;
				uint8_t *d;

				if (vmcache_get(vc, order[i % npages], VMCACHE_SHARED, &io, &c, &d))
					return 1;
				vmcache_unpin(vc, order[i % npages]);
				dt = now() - t0;
				if (i >= cap) {
					t[i - cap] = dt;
					total += dt;
				}
			}
			snprintf(name, sizeof(name), "vmcache %u, %s", batches[b],
				 pm == 0 ? (vc->batch_advise ? "process_madvise" : "(refused)")
					 : "madvise per run");
			report(name, t, misses, total);
			vmcache_destroy(vc);
		}
	free(order);
	free(t);
	return 0;
}
