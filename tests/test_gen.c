/*
 * test_gen.c - the offset generator: exact sequences for a seed, every
 * block exactly once in one pass of partitioned and shared scans (many
 * workers simulated in one thread, their gen_next calls interleaved),
 * wrap, io_limit, the short last request, target choice, zipf skew.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include <cmocka.h>

#include "workload/gen.h"
#include "workload/zipf.h"

#define KB 1024ull
#define MB (1024ull * 1024)

static uint64_t xs = 0x9e3779b97f4a7c15ull;

/* The test's own interleaving choices, independent of gen's RNG. */
static uint64_t rnd(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}

static struct gen_config cfg(enum rw_mode rw, uint64_t bs)
{
	struct gen_config c = {
		.rw = rw,
		.scan = SCAN_SHARED,
		.fst = FST_ROUNDROBIN,
		.dist = DIST_RANDOM,
		.bs = bs,
		.scan_chunk = 128 * MB,
		.seed = 42,
		.worker = 0,
		.nworkers = 1,
	};
	return c;
}

static void init_ok(struct gen *g, const struct gen_config *c, unsigned n,
		    const struct gen_region *r, struct gen_cursor *cur)
{
	struct err e = { 0 };
	int ret = gen_init(g, c, n, r, cur, &e);

	if (ret)
		fail_msg("gen_init: %d %s", ret, e.msg);
}

/* ---- sequences ---- */

static void test_randread_exact_sequence(void **state)
{
	/* Computed outside faultline (a Python transcription of splitmix64,
	 * xoroshiro128+ and Lemire's mapping) for seed 42, worker 0, 256
	 * blocks. A change to the RNG, its seeding or the block mapping
	 * changes every run's offsets, breaking randseed's promise between
	 * versions. */
	static const uint64_t want[8] = {
		0xe6000, 0x13000, 0x87000, 0x52000, 0x78000, 0xf5000, 0xd6000, 0x95000,
	};
	struct gen_region r = { 0, 1 * MB };
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	struct gen g;
	unsigned t;
	uint64_t off;
	uint32_t len;

	(void)state;
	init_ok(&g, &c, 1, &r, NULL);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_int_equal(t, 0);
		assert_int_equal(len, 4096);
		if (off != want[i])
			fail_msg("request %u: 0x%llx, recorded 0x%llx", i,
				 (unsigned long long)off, (unsigned long long)want[i]);
	}
	gen_free(&g);
}

/* Same seed, worker and config: same sequence; another worker or seed:
 * another sequence. */
static void test_seed_repeatable(void **state)
{
	enum { N = 10000 };
	struct gen_region r = { 8192, 64 * MB };
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	uint64_t *a = calloc(N, 8), *b = calloc(N, 8);
	struct gen g;
	unsigned t;
	uint32_t len;
	unsigned same;

	(void)state;
	c.wrap = true;
	c.nworkers = 4;
	c.worker = 2;
	c.seed = 12345;
	init_ok(&g, &c, 1, &r, NULL);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(gen_next(&g, &t, &a[i], &len), 1);
	gen_free(&g);
	init_ok(&g, &c, 1, &r, NULL);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(gen_next(&g, &t, &b[i], &len), 1);
	gen_free(&g);
	assert_memory_equal(a, b, N * 8);

	c.worker = 3;
	init_ok(&g, &c, 1, &r, NULL);
	same = 0;
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(gen_next(&g, &t, &b[i], &len), 1);
		same += a[i] == b[i];
	}
	gen_free(&g);
	assert_true(same < 10);

	c.worker = 2;
	c.seed = 12346;
	init_ok(&g, &c, 1, &r, NULL);
	same = 0;
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(gen_next(&g, &t, &b[i], &len), 1);
		same += a[i] == b[i];
	}
	gen_free(&g);
	assert_true(same < 10);
	free(a);
	free(b);
}

/* ---- randread ---- */

/* One pass is ceil(len / bs) requests; offsets aligned from an unaligned
 * base; only the last block is short. */
static void test_randread_one_pass(void **state)
{
	struct gen_region r = { 1000, 1 * MB + 1000 };	/* 256 blocks + 1000 bytes */
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	struct gen g;
	unsigned t, n = 0, shorts = 0;
	uint64_t off;
	uint32_t len;

	(void)state;
	init_ok(&g, &c, 1, &r, NULL);
	while (gen_next(&g, &t, &off, &len)) {
		assert_true(off >= r.base && off + len <= r.base + r.len);
		assert_int_equal((off - r.base) % 4096, 0);
		if (off == r.base + 256 * 4096) {
			assert_int_equal(len, 1000);
			shorts++;
		} else {
			assert_int_equal(len, 4096);
		}
		n++;
	}
	assert_int_equal(n, 257);
	assert_int_equal(gen_next(&g, &t, &off, &len), 0);	/* stays done */
	gen_free(&g);
	(void)shorts;
}

/* Blocks are uniform: chi-square over 64 blocks. */
static void test_randread_uniform(void **state)
{
	enum { NB = 64, PER = 10000 };
	struct gen_region r = { 0, NB * 4 * KB };
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	unsigned count[NB] = { 0 }, t;
	struct gen g;
	uint64_t off;
	uint32_t len;
	double chi = 0;

	(void)state;
	c.wrap = true;
	init_ok(&g, &c, 1, &r, NULL);
	for (unsigned i = 0; i < NB * PER; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		count[off / 4096]++;
	}
	gen_free(&g);
	for (unsigned i = 0; i < NB; i++)
		chi += ((double)count[i] - PER) * ((double)count[i] - PER) / PER;
	/* 63 degrees of freedom: P(chi2 > 110) < 0.0002 */
	assert_true(chi < 110);
}

static unsigned count_requests(struct gen_config *c, unsigned n, const struct gen_region *r,
			       struct gen_cursor *cur, unsigned cap, uint64_t *bytes)
{
	struct gen g;
	unsigned k = 0, t;
	uint64_t off;
	uint32_t len;

	*bytes = 0;
	init_ok(&g, c, n, r, cur);
	while (k < cap && gen_next(&g, &t, &off, &len)) {
		*bytes += len;
		k++;
	}
	gen_free(&g);
	return k;
}

static void test_io_limit(void **state)
{
	struct gen_region r = { 0, 64 * KB };	/* 16 blocks */
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	struct gen_cursor cur = { 0 };
	uint64_t bytes;

	(void)state;
	c.io_limit = 40 * KB;
	assert_int_equal(count_requests(&c, 1, &r, NULL, 1000, &bytes), 10);
	c.io_limit = 40 * KB + 1;	/* passed by less than one request */
	assert_int_equal(count_requests(&c, 1, &r, NULL, 1000, &bytes), 11);
	c.io_limit = 3 * 64 * KB;	/* more than a pass: goes on */
	assert_int_equal(count_requests(&c, 1, &r, NULL, 1000, &bytes), 48);
	assert_int_equal(bytes, 3 * 64 * KB);
	c.wrap = true;			/* time_based ignores io_size, as fio */
	assert_int_equal(count_requests(&c, 1, &r, NULL, 1000, &bytes), 1000);

	/* sequential: partitioned and shared wrap around until the limit */
	c = cfg(RW_READ, 4 * KB);
	c.scan = SCAN_PARTITIONED;
	c.io_limit = 100 * KB;
	assert_int_equal(count_requests(&c, 1, &r, NULL, 1000, &bytes), 25);
	c.scan = SCAN_SHARED;
	c.scan_chunk = 16 * KB;
	assert_int_equal(count_requests(&c, 1, &r, &cur, 1000, &bytes), 25);
}

static void test_wrap_never_stops(void **state)
{
	struct gen_region r = { 0, 64 * KB };
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	struct gen_cursor cur = { 0 };
	uint64_t bytes;

	(void)state;
	c.wrap = true;
	assert_int_equal(count_requests(&c, 1, &r, NULL, 100000, &bytes), 100000);
	c.rw = RW_READ;
	assert_int_equal(count_requests(&c, 1, &r, &cur, 100000, &bytes), 100000);
	c.scan = SCAN_PARTITIONED;
	c.nworkers = 3;
	c.worker = 1;
	assert_int_equal(count_requests(&c, 1, &r, NULL, 100000, &bytes), 100000);
}

/* ---- sequential scans ---- */

struct sim {
	unsigned nw, nt;
	struct gen g[8];
	uint8_t *seen[4];	/* per target, per block: times read */
	uint64_t nblocks[4];
	struct gen_region r[4];
	struct gen_cursor cur[4];
	uint64_t last_end[8][4];	/* per worker, target: end of the last request */
	unsigned nreq;
};

static void sim_init(struct sim *s, struct gen_config c, unsigned nw, unsigned nt,
		     const struct gen_region *r)
{
	memset(s, 0, sizeof(*s));
	s->nw = nw;
	s->nt = nt;
	for (unsigned i = 0; i < nt; i++) {
		s->r[i] = r[i];
		s->nblocks[i] = (r[i].len + c.bs - 1) / c.bs;
		s->seen[i] = calloc(s->nblocks[i], 1);
	}
	c.nworkers = nw;
	for (unsigned w = 0; w < nw; w++) {
		c.worker = w;
		init_ok(&s->g[w], &c, nt, s->r, s->cur);
	}
}

/* Interleave the workers at random until all are done; check each
 * request and mark its block. */
static void sim_run(struct sim *s, unsigned cap)
{
	bool done[8] = { 0 };
	unsigned left = s->nw;

	while (left && s->nreq < cap) {
		unsigned w = (unsigned)(rnd() % s->nw), t;
		uint64_t off, rel, bs = s->g[w].c.bs;
		uint32_t len;

		if (done[w])
			continue;
		if (!gen_next(&s->g[w], &t, &off, &len)) {
			done[w] = true;
			left--;
			continue;
		}
		assert_true(t < s->nt);
		assert_true(off >= s->r[t].base);
		rel = off - s->r[t].base;
		assert_true(rel + len <= s->r[t].len);
		assert_int_equal(rel % bs, 0);
		if (rel + bs <= s->r[t].len)
			assert_int_equal(len, bs);
		else
			assert_int_equal(len, s->r[t].len - rel);
		s->seen[t][rel / bs]++;
		s->last_end[w][t] = rel + len;
		s->nreq++;
	}
}

static void sim_free(struct sim *s)
{
	for (unsigned w = 0; w < s->nw; w++)
		gen_free(&s->g[w]);
	for (unsigned i = 0; i < s->nt; i++)
		free(s->seen[i]);
}

static void assert_each_block(const struct sim *s, unsigned times)
{
	for (unsigned t = 0; t < s->nt; t++)
		for (uint64_t b = 0; b < s->nblocks[t]; b++)
			if (s->seen[t][b] != times)
				fail_msg("target %u block %llu read %u times, want %u", t,
					 (unsigned long long)b, s->seen[t][b], times);
}

/* One pass of a partitioned scan, 1..8 workers: every block once. */
static void test_partitioned_once(void **state)
{
	struct gen_region r[2] = { { 4096, 1000 * 4096 + 123 }, { 0, 37 * 4096 } };
	struct gen_config c = cfg(RW_READ, 4 * KB);
	struct sim s;

	(void)state;
	c.scan = SCAN_PARTITIONED;
	for (unsigned nw = 1; nw <= 8; nw++) {
		for (unsigned nt = 1; nt <= 2; nt++) {
			sim_init(&s, c, nw, nt, r);
			sim_run(&s, 1000000);
			assert_each_block(&s, 1);
			sim_free(&s);
		}
	}
}

/* A partitioned worker's requests stay in its slice, in order. */
static void test_partitioned_slices(void **state)
{
	struct gen_region r = { 0, 100 * 4096 };
	struct gen_config c = cfg(RW_READ, 4 * KB);
	struct gen g;
	unsigned t;
	uint64_t off, expect;
	uint32_t len;

	(void)state;
	c.scan = SCAN_PARTITIONED;
	c.nworkers = 3;
	for (unsigned w = 0; w < 3; w++) {
		/* 100/3 blocks: slices [0, 33), [33, 66), [66, 100) */
		static const uint64_t lo[3] = { 0, 33, 66 }, hi[3] = { 33, 66, 100 };

		c.worker = w;
		init_ok(&g, &c, 1, &r, NULL);
		expect = lo[w] * 4096;
		while (gen_next(&g, &t, &off, &len)) {
			assert_int_equal(off, expect);
			expect += 4096;
		}
		assert_int_equal(expect, hi[w] * 4096);
		gen_free(&g);
	}
}

/* One pass of a shared scan, 1..8 workers: every block once, with a
 * chunk that is not a multiple of bs (rounded up) nor a divisor of len. */
static void test_shared_once(void **state)
{
	struct gen_region r[2] = { { 8192, 1000 * 4096 + 123 }, { 0, 5 * 4096 } };
	struct gen_config c = cfg(RW_READ, 4 * KB);
	struct sim s;

	(void)state;
	c.scan_chunk = 3 * 4096 + 1;	/* -> 4 blocks a piece */
	for (unsigned nw = 1; nw <= 8; nw++) {
		for (unsigned nt = 1; nt <= 2; nt++) {
			sim_init(&s, c, nw, nt, r);
			sim_run(&s, 1000000);
			assert_each_block(&s, 1);
			/* pieces of 4 blocks: the cursor went past the end */
			assert_true(s.cur[0].next >= (1001 + 3) / 4 * 4 * 4096);
			sim_free(&s);
		}
	}
}

/* Shared, wrap: one worker reads the region in pieces, pass after pass;
 * the last piece of a pass is short. */
static void test_shared_wrap_sequence(void **state)
{
	struct gen_region r = { 0, 10 * 4096 };
	struct gen_config c = cfg(RW_READ, 4 * KB);
	struct gen_cursor cur = { 0 };
	struct gen g;
	unsigned t;
	uint64_t off;
	uint32_t len;

	(void)state;
	c.scan_chunk = 4 * 4096;
	c.wrap = true;
	init_ok(&g, &c, 1, &r, &cur);
	for (unsigned i = 0; i < 50; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_int_equal(off, (i % 10) * 4096ull);
	}
	/* 5 passes of 3 pieces (4 + 4 + 2 blocks) */
	assert_int_equal(cur.next, 15 * 4 * 4096);
	gen_free(&g);
}

/* Shared, wrap, several workers, one-request pieces: after k passes'
 * worth of requests every block was read exactly k times. */
static void test_shared_wrap_tiles(void **state)
{
	struct gen_region r = { 0, 77 * 4096 + 5 };
	struct gen_config c = cfg(RW_READ, 4 * KB);
	struct sim s;

	(void)state;
	c.scan_chunk = 4096;
	c.wrap = true;
	for (unsigned nw = 2; nw <= 8; nw += 3) {
		sim_init(&s, c, nw, 1, &r);
		sim_run(&s, 78 * 5);
		assert_each_block(&s, 5);
		sim_free(&s);
	}
}

/* Partitioned, wrap: each worker repeats its own slice. */
static void test_partitioned_wrap(void **state)
{
	struct gen_region r = { 0, 90 * 4096 };
	struct gen_config c = cfg(RW_READ, 4 * KB);
	struct gen g;
	unsigned t;
	uint64_t off;
	uint32_t len;

	(void)state;
	c.scan = SCAN_PARTITIONED;
	c.wrap = true;
	c.nworkers = 3;
	c.worker = 1;
	init_ok(&g, &c, 1, &r, NULL);
	for (unsigned i = 0; i < 100; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_int_equal(off, (30 + i % 30) * 4096ull);
	}
	gen_free(&g);
}

/* The last request of a region is short, in every mode. */
static void test_short_last(void **state)
{
	struct gen_region r = { 512, 10 * 4096 + 100 };
	struct gen_config c = cfg(RW_READ, 4 * KB);
	struct gen_cursor cur = { 0 };
	struct gen g;
	unsigned t, n;
	uint64_t off, last_off = 0;
	uint32_t len, last_len = 0;

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		c.scan = mode ? SCAN_PARTITIONED : SCAN_SHARED;
		cur.next = 0;
		init_ok(&g, &c, 1, &r, &cur);
		n = 0;
		while (gen_next(&g, &t, &off, &len)) {
			last_off = off;
			last_len = len;
			n++;
		}
		gen_free(&g);
		assert_int_equal(n, 11);
		assert_int_equal(last_off, 512 + 10 * 4096);
		assert_int_equal(last_len, 100);
	}
	/* bs larger than the region: one short request */
	r.len = 1000;
	c.bs = 4096;
	init_ok(&g, &c, 1, &r, &cur);
	cur.next = 0;
	assert_int_equal(gen_next(&g, &t, &off, &len), 1);
	assert_int_equal(off, 512);
	assert_int_equal(len, 1000);
	assert_int_equal(gen_next(&g, &t, &off, &len), 0);
	gen_free(&g);
}

/* ---- file_service_type ---- */

static void test_fst_roundrobin(void **state)
{
	struct gen_region r[3] = { { 0, 4 * 4096 }, { 0, 2 * 4096 }, { 0, 3 * 4096 } };
	struct gen_config c = cfg(RW_READ, 4 * KB);
	struct gen_cursor cur[3] = { { 0 } };
	/* t0 t1 t2 in turn, the shorter ones drop out when read */
	static const unsigned want_t[9] = { 0, 1, 2, 0, 1, 2, 0, 2, 0 };
	static const unsigned want_b[9] = { 0, 0, 0, 1, 1, 1, 2, 2, 3 };
	struct gen g;
	unsigned t, i = 0;
	uint64_t off;
	uint32_t len;

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		c.scan = mode ? SCAN_PARTITIONED : SCAN_SHARED;
		c.scan_chunk = 4096;
		memset(cur, 0, sizeof(cur));
		init_ok(&g, &c, 3, r, cur);
		for (i = 0; gen_next(&g, &t, &off, &len); i++) {
			assert_true(i < 9);
			assert_int_equal(t, want_t[i]);
			assert_int_equal(off, want_b[i] * 4096);
		}
		assert_int_equal(i, 9);
		gen_free(&g);
	}

	/* randread: strictly in turn */
	c = cfg(RW_RANDREAD, 4 * KB);
	init_ok(&g, &c, 3, r, NULL);
	for (i = 0; gen_next(&g, &t, &off, &len); i++)
		assert_int_equal(t, i % 3);
	assert_int_equal(i, 9);
	gen_free(&g);
}

static void test_fst_sequential(void **state)
{
	struct gen_region r[3] = { { 0, 4 * 4096 }, { 0, 2 * 4096 }, { 0, 3 * 4096 } };
	struct gen_config c = cfg(RW_READ, 4 * KB);
	struct gen_cursor cur[3];
	static const unsigned want_t[9] = { 0, 0, 0, 0, 1, 1, 2, 2, 2 };
	static const unsigned want_b[9] = { 0, 1, 2, 3, 0, 1, 0, 1, 2 };
	struct gen g;
	unsigned t, i;
	uint64_t off;
	uint32_t len;

	(void)state;
	c.fst = FST_SEQUENTIAL;
	for (int mode = 0; mode < 2; mode++) {
		c.scan = mode ? SCAN_PARTITIONED : SCAN_SHARED;
		c.scan_chunk = 2 * 4096;
		memset(cur, 0, sizeof(cur));
		init_ok(&g, &c, 3, r, cur);
		for (i = 0; gen_next(&g, &t, &off, &len); i++) {
			assert_true(i < 9);
			assert_int_equal(t, want_t[i]);
			assert_int_equal(off, want_b[i] * 4096);
		}
		assert_int_equal(i, 9);
		gen_free(&g);

		/* wrap: the same order, again and again */
		c.wrap = true;
		memset(cur, 0, sizeof(cur));
		init_ok(&g, &c, 3, r, cur);
		for (i = 0; i < 45; i++) {
			assert_int_equal(gen_next(&g, &t, &off, &len), 1);
			assert_int_equal(t, want_t[i % 9]);
			assert_int_equal(off, want_b[i % 9] * 4096);
		}
		gen_free(&g);
		c.wrap = false;
	}

	/* randread: a target's pass (its blocks' count), then the next */
	c = cfg(RW_RANDREAD, 4 * KB);
	c.fst = FST_SEQUENTIAL;
	c.wrap = true;
	init_ok(&g, &c, 3, r, NULL);
	for (i = 0; i < 45; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_int_equal(t, want_t[i % 9]);
		assert_true(off < r[t].len);
	}
	gen_free(&g);
}

static void test_fst_random(void **state)
{
	enum { N = 400000 };
	struct gen_region r[4] = { { 0, 1 * MB }, { 0, 1 * MB }, { 0, 2 * MB }, { 0, 1 * MB } };
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	struct gen_cursor cur[4] = { { 0 } };
	unsigned count[4] = { 0 }, repeats = 0, t, prev = 99, i;
	struct gen g;
	uint64_t off;
	uint32_t len;

	(void)state;
	c.fst = FST_RANDOM;
	c.wrap = true;
	init_ok(&g, &c, 4, r, NULL);
	for (i = 0; i < N; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_true(off < r[t].len);
		count[t]++;
		repeats += t == prev;
		prev = t;
	}
	gen_free(&g);
	for (t = 0; t < 4; t++)	/* uniform over targets, as fio */
		assert_true(fabs((double)count[t] / N - 0.25) < 0.01);
	assert_true(fabs((double)repeats / N - 0.25) < 0.01);

	/* sequential rw, one pass: random order, every block once */
	c = cfg(RW_READ, 4 * KB);
	c.fst = FST_RANDOM;
	c.scan_chunk = 4096;
	{
		struct sim s;

		sim_init(&s, c, 3, 4, r);
		sim_run(&s, 10000000);
		assert_each_block(&s, 1);
		sim_free(&s);
	}
	(void)cur;
}

/* ---- zipf ---- */

static void test_perm_bijective(void **state)
{
	struct gen_perm p;
	uint8_t *seen = calloc(1 << 20, 1);

	(void)state;
	for (uint64_t n = 1; n <= 300; n++) {
		gen_perm_init(&p, n, n * 7919);
		memset(seen, 0, n);
		for (uint64_t x = 0; x < n; x++) {
			uint64_t y = gen_perm_apply(&p, x);

			assert_true(y < n);
			assert_int_equal(seen[y], 0);
			seen[y] = 1;
		}
	}
	gen_perm_init(&p, 1000003, 1);
	memset(seen, 0, 1000003);
	for (uint64_t x = 0; x < 1000003; x++) {
		uint64_t y = gen_perm_apply(&p, x);

		assert_true(y < 1000003);
		assert_int_equal(seen[y], 0);
		seen[y] = 1;
	}
	/* the hottest ranks are not packed at the start */
	assert_true(gen_perm_apply(&p, 0) > 1000 || gen_perm_apply(&p, 1) > 1000);
	free(seen);
}

static const unsigned *zipf_counts;

static int cmp_desc(const void *a, const void *b)
{
	unsigned x = zipf_counts[*(const unsigned *)a], y = zipf_counts[*(const unsigned *)b];

	return x > y ? -1 : x < y;
}

/*
 * Against the exact distribution P(k) = k^-s / H(N, s): the ten hottest
 * blocks (ranks 1..10 are far enough apart to sort by count) each
 * within 5 sigma, and the top 1 % of blocks within 0.01 of
 * H(N/100, s) / H(N, s). The hot blocks are scattered, not at the start.
 */
static void check_zipf(double theta, uint64_t base)
{
	enum { NB = 10000, SAMPLES = 2000000 };
	struct gen_region r = { base, NB * 4 * KB };
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	unsigned *count = calloc(NB, sizeof(*count)), *idx = calloc(NB, sizeof(*idx));
	unsigned t, at_start = 0;
	double hn = 0, htop = 0, got = 0;
	struct gen g;
	uint64_t off;
	uint32_t len;

	c.dist = DIST_ZIPF;
	c.zipf_theta = theta;
	c.wrap = true;
	init_ok(&g, &c, 1, &r, NULL);
	for (unsigned i = 0; i < SAMPLES; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_true(off >= base && off < base + r.len);
		assert_int_equal((off - base) % 4096, 0);
		count[(off - base) / 4096]++;
	}
	gen_free(&g);
	for (unsigned k = 1; k <= NB; k++) {
		hn += pow(k, -theta);
		if (k <= NB / 100)
			htop += pow(k, -theta);
	}
	for (unsigned i = 0; i < NB; i++)
		idx[i] = i;
	zipf_counts = count;
	qsort(idx, NB, sizeof(*idx), cmp_desc);
	for (unsigned k = 0; k < 10; k++) {
		double want = pow(k + 1, -theta) / hn * SAMPLES;

		if (fabs(count[idx[k]] - want) > 5 * sqrt(want))
			fail_msg("theta %.2f: rank %u drew %u, want %.0f", theta, k + 1,
				 count[idx[k]], want);
	}
	for (unsigned k = 0; k < NB / 100; k++) {
		got += count[idx[k]];
		at_start += idx[k] < NB / 100;
	}
	got /= SAMPLES;
	if (fabs(got - htop / hn) > 0.01)
		fail_msg("theta %.2f: top 1 %% got %.4f of requests, want %.4f", theta, got,
			 htop / hn);
	assert_true(at_start < 10);
	free(count);
	free(idx);
}

static void test_zipf_skew(void **state)
{
	(void)state;
	check_zipf(1.2, 0);
	check_zipf(1.0, 4096);
	check_zipf(0.8, 12288);
	check_zipf(2.5, 0);
}

/* 2^30 blocks: setup does not walk the blocks (a walk of 2^30 takes
 * seconds of CPU: the bound is this thread's CPU time, which other
 * processes' load does not lengthen, at 50x under a walk), offsets in
 * range and aligned, and the head still has rank 1's share. */
static void test_zipf_huge(void **state)
{
	enum { SAMPLES = 1000000 };
	struct gen_region r = { 0, 4096ull << 30 };
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	struct timespec t0, t1;
	uint64_t off, hot = 0, hot_n = 0;
	struct gen g;
	unsigned t;
	uint32_t len;
	double zeta = 0, el;

	(void)state;
	c.dist = DIST_ZIPF;
	c.zipf_theta = 1.2;
	c.wrap = true;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	init_ok(&g, &c, 1, &r, NULL);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	assert_true(el < 0.2);
	for (unsigned i = 0; i < SAMPLES; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_true(off < r.len);
		assert_int_equal(off % 4096, 0);
		if (i == 0)
			hot = off;
	}
	gen_free(&g);
	/* count the first offset's block: most likely rank 1 or 2; find the
	 * mode among a second run's first 100 requests instead */
	init_ok(&g, &c, 1, &r, NULL);
	{
		uint64_t first[200];

		for (unsigned i = 0; i < 200; i++)
			gen_next(&g, &t, &first[i], &len);
		for (unsigned i = 0; i < 200; i++) {
			unsigned n = 0;

			for (unsigned j = 0; j < 200; j++)
				n += first[j] == first[i];
			if (n > hot_n) {
				hot_n = n;
				hot = first[i];
			}
		}
		hot_n = 0;
		for (unsigned i = 0; i < SAMPLES; i++) {
			gen_next(&g, &t, &off, &len);
			hot_n += off == hot;
		}
	}
	gen_free(&g);
	/* H(2^30, 1.2): the first 10^6 terms summed, the rest integrated */
	for (double k = 1; k <= 1e6; k++)
		zeta += pow(k, -1.2);
	zeta += (pow(1e6 + 0.5, -0.2) - pow((double)(1 << 30) + 0.5, -0.2)) / 0.2;
	assert_true(fabs((double)hot_n / SAMPLES - 1 / zeta) < 0.1 / zeta);
}

/* ---- errors ---- */

static void test_init_errors(void **state)
{
	struct gen_region r = { 0, 1 * MB }, z = { 0, 0 };
	struct gen_config c = cfg(RW_RANDREAD, 4 * KB);
	struct err e = { 0 };
	struct gen g;

	(void)state;
	c.bs = 0;
	assert_int_equal(gen_init(&g, &c, 1, &r, NULL, &e), -EINVAL);
	c = cfg(RW_RANDREAD, 4 * KB);
	assert_int_equal(gen_init(&g, &c, 1, &z, NULL, &e), -EINVAL);
	assert_int_equal(gen_init(&g, &c, 0, &r, NULL, &e), -EINVAL);
	c.dist = DIST_ZIPF;
	c.zipf_theta = 0;
	assert_int_equal(gen_init(&g, &c, 1, &r, NULL, &e), -EINVAL);
	c = cfg(RW_READ, 4 * KB);
	assert_int_equal(gen_init(&g, &c, 1, &r, NULL, &e), -EINVAL);	/* no cursors */
	c.worker = 1;
	c.scan = SCAN_PARTITIONED;
	assert_int_equal(gen_init(&g, &c, 1, &r, NULL, &e), -EINVAL);	/* worker >= n */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_randread_exact_sequence),
		cmocka_unit_test(test_seed_repeatable),
		cmocka_unit_test(test_randread_one_pass),
		cmocka_unit_test(test_randread_uniform),
		cmocka_unit_test(test_io_limit),
		cmocka_unit_test(test_wrap_never_stops),
		cmocka_unit_test(test_partitioned_once),
		cmocka_unit_test(test_partitioned_slices),
		cmocka_unit_test(test_shared_once),
		cmocka_unit_test(test_shared_wrap_sequence),
		cmocka_unit_test(test_shared_wrap_tiles),
		cmocka_unit_test(test_partitioned_wrap),
		cmocka_unit_test(test_short_last),
		cmocka_unit_test(test_fst_roundrobin),
		cmocka_unit_test(test_fst_sequential),
		cmocka_unit_test(test_fst_random),
		cmocka_unit_test(test_perm_bijective),
		cmocka_unit_test(test_zipf_skew),
		cmocka_unit_test(test_zipf_huge),
		cmocka_unit_test(test_init_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
