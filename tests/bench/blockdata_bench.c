/*
 * blockdata_bench.c - what the written-block format costs on the write
 * hot path: ns per blockdata_stamp and per blockdata_check of one block
 * (4 KiB unless told), the buffer staying in cache as a write loop's
 * would. Also a plain CRC32C pass, the floor both sit on. Not built by
 * make:
 *
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -Isrc tests/bench/blockdata_bench.c \
 *       src/workload/blockdata.c -lisal -o build/blockdata_bench
 *   build/blockdata_bench [BS] [ITERATIONS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workload/blockdata.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint32_t bs = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 4096;
	long iters = argc > 2 ? strtol(argv[2], NULL, 0) : 2000000;
	uint8_t *buf = aligned_alloc(4096, (bs + 4095) / 4096 * 4096);
	volatile uint32_t sink = 0;
	double t0, stamp, check, crc;
	uint64_t gen;
	int bad = 0;

	if (!buf || bs < BLOCKDATA_HDR_SIZE || bs % 512 || iters <= 0) {
		fprintf(stderr, "usage: %s [BS (multiple of 512)] [ITERATIONS]\n", argv[0]);
		return 2;
	}
	blockdata_init(buf, bs, 1);
	/* Warm the caches and the branch predictors. */
	for (long i = 0; i < iters / 10; i++)
		blockdata_stamp(buf, bs, (uint64_t)i * bs, (uint64_t)i);

	t0 = now_ns();
	for (long i = 0; i < iters; i++)
		blockdata_stamp(buf, bs, (uint64_t)i * bs, (uint64_t)i);
	stamp = (now_ns() - t0) / iters;

	t0 = now_ns();
	for (long i = 0; i < iters; i++)
		bad |= blockdata_check(buf, bs, (uint64_t)(iters - 1) * bs, &gen);
	check = (now_ns() - t0) / iters;

	t0 = now_ns();
	for (long i = 0; i < iters; i++)
		sink ^= blockdata_crc32c((uint32_t)i, buf, bs);
	crc = (now_ns() - t0) / iters;

	printf("bs=%u iterations=%ld\n", bs, iters);
	printf("blockdata_stamp  %8.1f ns/op\n", stamp);
	printf("blockdata_check  %8.1f ns/op\n", check);
	printf("crc32c alone     %8.1f ns/op (%.1f GB/s)\n", crc, bs / crc);
	free(buf);
	return bad ? 1 : 0;
}
