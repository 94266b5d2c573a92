/*
 * micro.c - nanoseconds per call of the per-request hot path: gen_next
 * in each mode, hist_add, touch_consume; and the three together. A
 * benchmark, not a test: it prints and never fails.
 *
 *   make build/libfaultline.a
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -Isrc -o build/micro tests/bench/micro.c \
 *       build/libfaultline.a -lm -pthread
 *   build/micro [iterations]
 *
 * Each figure is the best of five runs, so a noisy neighbour on a shared
 * VM inflates it less.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload/gen.h"
#include "lib/histogram.h"
#include "workload/touch.h"

#define GiB (1024ull * 1024 * 1024)
#define MiB (1024ull * 1024)
#define RUNS 5

static uint64_t sink;

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct gen_cursor cursor __attribute__((aligned(64)));

static void mkgen(struct gen *g, enum rw_mode rw, enum scan_mode scan, enum dist_mode dist)
{
	struct gen_region r = { 0, 64 * GiB };
	struct gen_config c = {
		.rw = rw, .scan = scan, .fst = FST_ROUNDROBIN, .dist = dist,
		.zipf_theta = 1.2, .bs = 4096, .scan_chunk = 128 * MiB, .seed = 1,
		.worker = 0, .nworkers = 1, .wrap = true,
	};
	struct err e;

	cursor.next = 0;
	if (gen_init(g, &c, 1, &r, &cursor, &e)) {
		fprintf(stderr, "gen_init: %s\n", e.msg);
		exit(1);
	}
}

static double bench_gen(const char *name, enum rw_mode rw, enum scan_mode scan,
			enum dist_mode dist, uint64_t n)
{
	double best = 1e9;

	for (int run = 0; run < RUNS; run++) {
		struct gen g;
		unsigned t;
		uint64_t off, acc = 0, t0;
		uint32_t len;

		mkgen(&g, rw, scan, dist);
		t0 = now();
		for (uint64_t i = 0; i < n; i++) {
			gen_next(&g, &t, &off, &len);
			acc += off;
		}
		t0 = now() - t0;
		sink += acc;
		gen_free(&g);
		if ((double)t0 / n < best)
			best = (double)t0 / n;
	}
	printf("gen_next %-22s %6.2f ns\n", name, best);
	return best;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 20000000;
	uint8_t *data = aligned_alloc(4096, 1 * MiB), *copybuf = aligned_alloc(4096, 4096);
	struct hist *h = malloc(sizeof(*h));
	uint64_t *lat = malloc(4096 * sizeof(*lat));
	static const struct { const char *name; enum touch_mode m; uint64_t stride; } tm[] = {
		{ "copy", TOUCH_COPY, 0 }, { "page", TOUCH_PAGE, 0 },
		{ "stride:64", TOUCH_STRIDE, 64 }, { "all", TOUCH_ALL, 0 },
	};
	double best;

	memset(data, 0x5a, 1 * MiB);
	/* latencies spread over 1 us .. 1 ms, so buckets and branches vary */
	for (unsigned i = 0; i < 4096; i++)
		lat[i] = 1000 + ((uint64_t)rand() * 977) % 1000000;

	bench_gen("randread uniform", RW_RANDREAD, SCAN_SHARED, DIST_RANDOM, n);
	bench_gen("randread zipf:1.2", RW_RANDREAD, SCAN_SHARED, DIST_ZIPF, n / 4);
	bench_gen("read shared", RW_READ, SCAN_SHARED, DIST_RANDOM, n);
	bench_gen("read partitioned", RW_READ, SCAN_PARTITIONED, DIST_RANDOM, n);

	best = 1e9;
	for (int run = 0; run < RUNS; run++) {
		uint64_t t0;

		hist_init(h);
		t0 = now();
		for (uint64_t i = 0; i < n; i++)
			hist_add(h, lat[i & 4095]);
		t0 = now() - t0;
		if ((double)t0 / n < best)
			best = (double)t0 / n;
	}
	sink += h->n;
	printf("hist_add                          %6.2f ns\n", best);

	/* touch on 4 KiB blocks cycling through 1 MiB (in L2) */
	for (size_t k = 0; k < sizeof(tm) / sizeof(tm[0]); k++) {
		uint64_t m = n / 20;

		best = 1e9;
		for (int run = 0; run < RUNS; run++) {
			uint64_t t0 = now();

			for (uint64_t i = 0; i < m; i++)
				sink += touch_consume(tm[k].m, tm[k].stride,
						      data + (i & 255) * 4096, 4096, copybuf);
			t0 = now() - t0;
			if ((double)t0 / m < best)
				best = (double)t0 / m;
		}
		printf("touch %-10s 4k                  %6.2f ns\n", tm[k].name, best);
	}

	/* all three, as the null engine's worker would call them */
	best = 1e9;
	for (int run = 0; run < RUNS; run++) {
		struct gen g;
		unsigned t;
		uint64_t off, t0, m = n / 10;
		uint32_t len;

		mkgen(&g, RW_RANDREAD, SCAN_SHARED, DIST_RANDOM);
		hist_init(h);
		t0 = now();
		for (uint64_t i = 0; i < m; i++) {
			gen_next(&g, &t, &off, &len);
			sink += touch_consume(TOUCH_COPY, 0, data + ((off >> 12) & 255) * 4096,
					      len, copybuf);
			hist_add(h, lat[i & 4095]);
		}
		t0 = now() - t0;
		gen_free(&g);
		if ((double)t0 / m < best)
			best = (double)t0 / m;
	}
	printf("gen_next + touch copy 4k + hist_add %6.2f ns\n", best);
	free(h);
	free(lat);
	free(data);
	free(copybuf);
	return sink == 42;	/* keeps sink live */
}
