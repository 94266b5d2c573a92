/*
 * test_genshape.c - fio's workload shapes in the offset generator
 * (gen.c's shaped path): bssplit and bsrange shares and alignment,
 * zoned and zoned_abs shares per zone, pareto's hot share, normal's
 * concentration, percentage_random, rw=...:N steps and rw_sequencer,
 * loops and number_ios counts, per-direction sizes. Each figure is the
 * one fio's io_u.c and lib/ give for the same job (worked out in the
 * comments); tests/e2e/shapes.sh compares with fio's own write_iolog.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "testjob.h"

#include "job/jobcheck.h"
#include "job/options.h"
#include "workload/gen.h"

#define KB 1024ull
#define MB (1024ull * 1024)

static void gen_of(struct gen *g, const struct job *j, uint64_t len)
{
	struct gen_region r = { .base = 0, .len = len };
	struct gen_cursor cur = { 0 };
	struct gen_config c = {
		.rw = job_rw_random(j->rw) ? RW_RANDREAD : RW_READ,
		.scan = SCAN_PARTITIONED,
		.fst = FST_ROUNDROBIN,
		.dist = j->random_distribution,
		.zipf_theta = j->zipf_theta,
		.bs = j->bs,
		.scan_chunk = 128 * MB,
		.seed = 42,
		.worker = 0,
		.nworkers = 1,
		.wrap = j->time_based,
		.io_limit = j->io_size * j->loops,
		.passes = j->loops,
	};
	struct err e = { 0 };

	gen_config_shape(&c, wl_of(j));
	if (gen_init(g, &c, 1, &r, &cur, &e))
		fail_msg("gen_init: %s", e.msg);
}

/* The offsets (per 4k block, in @cnt) and sizes (per 4k, up to 64k, in
 * @sizes when not NULL) of @nios requests of a job of @opts over @blocks
 * blocks; how many it gave. */
static unsigned gen_counts(const char *const *opts, uint64_t blocks, unsigned nios,
			   unsigned *cnt, unsigned *sizes);

/* ---- sizes ------------------------------------------------------------ */

static void test_bssplit_shares(void **state)
{
	static const char *const o[] = { "rw", "randread", "bssplit", "4k/50:16k/30:64k/20",
					 "time_based", "1", NULL };
	struct job j;
	struct gen g;
	unsigned n4 = 0, n16 = 0, n64 = 0, N = 200000;

	(void)state;
	job_of(&j, o);
	gen_of(&g, &j, 256 * MB);
	for (unsigned i = 0; i < N; i++) {
		unsigned t;
		uint64_t off;
		uint32_t len;

		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_true(off % (4 * KB) == 0);	/* blockalign = the smallest size */
		assert_true(off + len <= 256 * MB);
		n4 += len == 4 * KB;
		n16 += len == 16 * KB;
		n64 += len == 64 * KB;
	}
	assert_int_equal(n4 + n16 + n64, N);
	assert_true(fabs(n4 / (double)N - 0.50) < 0.01);
	assert_true(fabs(n16 / (double)N - 0.30) < 0.01);
	assert_true(fabs(n64 / (double)N - 0.20) < 0.01);
	gen_free(&g);
	option_release(&j);
}

/* A size without a share takes what is left: 8k/40:16k -> 16k 60 %. The
 * second set is for writes. */
static void test_bssplit_missing_and_dirs(void **state)
{
	static const char *const o[] = { "rw", "randrw", "bssplit", "8k/40:16k,64k",
					 "time_based", "1", NULL };
	struct job j;
	struct gen g;
	unsigned n8 = 0, nw = 0, N = 100000;

	(void)state;
	job_of(&j, o);
	assert_int_equal(j.dir[0].nsplit, 2);
	assert_int_equal(j.dir[0].split[0].perc, 40);	/* sorted by share */
	assert_int_equal(j.dir[0].split[1].perc, 60);
	assert_int_equal(job_bs_max(&j, JOB_DIR_WRITE), 64 * KB);
	gen_of(&g, &j, 64 * MB);
	for (unsigned i = 0; i < N; i++) {
		unsigned t;
		uint64_t off;
		uint32_t len;

		assert_int_equal(gen_next_dir(&g, 0, &t, &off, &len), 1);
		assert_true(len == 8 * KB || len == 16 * KB);
		n8 += len == 8 * KB;
		assert_int_equal(gen_next_dir(&g, 1, &t, &off, &len), 1);
		nw += len == 64 * KB;
	}
	assert_true(fabs(n8 / (double)N - 0.40) < 0.01);
	assert_int_equal(nw, N);
	gen_free(&g);
	option_release(&j);
}

/* fio's bsrange: min + max * u, down to a multiple of min, at most max:
 * 4k-16k gives 4k, 8k, 12k, 16k a quarter each ([4k, 20k) in 4k steps,
 * 16k and above held at 16k). */
static void test_bsrange(void **state)
{
	static const char *const o[] = { "rw", "randread", "bsrange", "4k-16k",
					 "time_based", "1", NULL };
	struct job j;
	struct gen g;
	unsigned n[5] = { 0 }, N = 100000;

	(void)state;
	job_of(&j, o);
	gen_of(&g, &j, 64 * MB);
	for (unsigned i = 0; i < N; i++) {
		unsigned t;
		uint64_t off;
		uint32_t len;

		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_true(len % (4 * KB) == 0 && len >= 4 * KB && len <= 16 * KB);
		n[len / (4 * KB)]++;
	}
	for (unsigned k = 1; k <= 4; k++)
		assert_true(fabs(n[k] / (double)N - 0.25) < 0.01);
	gen_free(&g);
	option_release(&j);
}

/* fio's ':' separator where there is no '-' (its t0002 has 512:1M). */
static void test_bsrange_colon(void **state)
{
	static const char *const o[] = { "rw", "randread", "bsrange", "512:1M", NULL };
	struct job j;

	(void)state;
	job_of(&j, o);
	assert_int_equal(j.dir[JOB_DIR_READ].bs_min, 512);
	assert_int_equal(j.dir[JOB_DIR_READ].bs_max, 1 << 20);
	option_release(&j);
}

static void test_blockalign(void **state)
{
	static const char *const o[] = { "rw", "randread", "bs", "4k", "blockalign", "64k",
					 "time_based", "1", NULL };
	struct job j;
	struct gen g;

	(void)state;
	job_of(&j, o);
	gen_of(&g, &j, 16 * MB);
	for (unsigned i = 0; i < 10000; i++) {
		unsigned t;
		uint64_t off;
		uint32_t len;

		assert_int_equal(gen_next(&g, &t, &off, &len), 1);
		assert_int_equal(off % (64 * KB), 0);
		assert_int_equal(len, 4 * KB);
	}
	gen_free(&g);
	option_release(&j);
}

/* ---- distributions ---------------------------------------------------- */

static void test_zoned_shares(void **state)
{
	static const char *const o[] = { "rw", "randread", "random_distribution",
					 "zoned:60/10:30/20:10/70", "time_based", "1", NULL };
	const uint64_t len = 100 * MB;
	struct job j;
	struct gen g;
	unsigned z[3] = { 0 }, N = 200000;

	(void)state;
	job_of(&j, o);
	gen_of(&g, &j, len);
	for (unsigned i = 0; i < N; i++) {
		unsigned t;
		uint64_t off;
		uint32_t l;

		assert_int_equal(gen_next(&g, &t, &off, &l), 1);
		z[off < len / 10 ? 0 : off < len * 3 / 10 ? 1 : 2]++;
	}
	assert_true(fabs(z[0] / (double)N - 0.60) < 0.01);
	assert_true(fabs(z[1] / (double)N - 0.30) < 0.01);
	assert_true(fabs(z[2] / (double)N - 0.10) < 0.01);
	gen_free(&g);
	option_release(&j);
}

static void test_zoned_abs(void **state)
{
	static const char *const o[] = { "rw", "randread", "random_distribution",
					 "zoned_abs:70/1m:30/3m", "time_based", "1", NULL };
	static const char *const big[] = { "rw", "randread", "random_distribution",
					   "zoned_abs:70/1m:30/30m", NULL };
	struct gen_region r = { .base = 0, .len = 16 * MB };
	struct gen_cursor cur = { 0 };
	struct job j;
	struct gen g;
	unsigned a = 0, b = 0, N = 100000;

	(void)state;
	job_of(&j, o);
	gen_of(&g, &j, 16 * MB);
	for (unsigned i = 0; i < N; i++) {
		unsigned t;
		uint64_t off;
		uint32_t l;

		assert_int_equal(gen_next(&g, &t, &off, &l), 1);
		assert_true(off < 4 * MB);
		a += off < 1 * MB;
		b += off >= 1 * MB;
	}
	assert_true(fabs(a / (double)N - 0.70) < 0.01);
	gen_free(&g);

	/* Zones past the region: refused, as fio refuses them. */
	option_release(&j);
	job_of(&j, big);
	{
		struct gen_config c = { .rw = RW_RANDREAD, .scan = SCAN_PARTITIONED,
					.dist = j.random_distribution, .bs = 4 * KB,
					.scan_chunk = MB, .seed = 1, .nworkers = 1 };
		struct err e = { 0 };

		gen_config_shape(&c, wl_of(&j));
		assert_int_equal(gen_init(&g, &c, 1, &r, &cur, &e), -EINVAL);
		assert_non_null(strstr(e.msg, "zoned_abs"));
	}
	(void)b;
	option_release(&j);
}

/* Share of the accesses that went to the hottest @frac of @n blocks. */
static double hot_share(const unsigned *cnt, uint64_t n, double frac, unsigned total)
{
	unsigned *c = malloc(n * sizeof(*c));
	uint64_t top = (uint64_t)(n * frac), sum = 0;

	memcpy(c, cnt, n * sizeof(*c));
	/* counting sort by count, descending */
	for (uint64_t k = 0; k < top; k++) {
		uint64_t best = k;

		for (uint64_t i = k + 1; i < n; i++)
			if (c[i] > c[best])
				best = i;
		unsigned x = c[k];
		c[k] = c[best];
		c[best] = x;
		sum += c[k];
	}
	free(c);
	return (double)sum / total;
}

/* pareto:0.2 is fio's 80/20 in ranks: P((n-1) u^(log .2/log .8) < n/5)
 * = .2^(log .8/log .2) = .8; fio's scatter (not a bijection) can only
 * concentrate it further: the hottest 20 % of blocks take at least 80 %
 * (fio's own figure, 0.87 here, is test_vs_fio_pareto_normal's). */
static void test_pareto_hot_share(void **state)
{
	static const char *const o[] = { "rw", "randread", "random_distribution", "pareto:0.2",
					 "time_based", "1", NULL };
	const uint64_t n = 1000;
	unsigned *cnt = calloc(n, sizeof(*cnt)), N = 200000;

	(void)state;
	assert_int_equal(gen_counts(o, n, N, cnt, NULL), N);
	assert_true(hot_share(cnt, n, 0.2, N) > 0.80 - 0.01);
	assert_true(hot_share(cnt, n, 0.2, N) < 0.95);
	free(cnt);
}

/* normal: fio's mean of 12 uniform draws has a standard deviation of
 * n / sqrt(12 * 12) = n / 12; about 68 % of accesses fall on the n / 6
 * ranks within one sigma, and at least that on the hottest n / 6 blocks
 * after fio's scatter. */
static void test_normal_concentration(void **state)
{
	static const char *const o[] = { "rw", "randread", "random_distribution", "normal",
					 "time_based", "1", NULL };
	const uint64_t n = 1200;
	unsigned *cnt = calloc(n, sizeof(*cnt)), N = 200000;

	(void)state;
	assert_int_equal(gen_counts(o, n, N, cnt, NULL), N);
	assert_true(hot_share(cnt, n, 1.0 / 6, N) > 0.683 - 0.02);
	free(cnt);
}

/* ---- offsets: percentage_random, :N, rw_sequencer --------------------- */

static void test_percentage_random(void **state)
{
	static const char *const o[] = { "rw", "randread", "percentage_random", "25",
					 "time_based", "1", NULL };
	struct job j;
	struct gen g;
	uint64_t prev_end = 0;
	unsigned seq = 0, N = 100000;

	(void)state;
	job_of(&j, o);
	gen_of(&g, &j, 1024 * MB);
	for (unsigned i = 0; i < N; i++) {
		unsigned t;
		uint64_t off;
		uint32_t l;

		assert_int_equal(gen_next(&g, &t, &off, &l), 1);
		seq += i && off == prev_end;
		prev_end = off + l;
	}
	/* 75 % continue where the last one ended (a random one lands
	 * there by chance about never in 256k blocks). */
	assert_true(fabs(seq / (double)N - 0.75) < 0.01);
	gen_free(&g);
	option_release(&j);
}

/* rw=read:4k with bs=4k: 0, 8k, 16k, ... (a 4k hole after each). */
static void test_seq_holes(void **state)
{
	static const char *const o[] = { "rw", "read:4k", "bs", "4k", NULL };
	struct job j;
	struct gen g;
	unsigned t, n = 0;
	uint64_t off;
	uint32_t l;

	(void)state;
	job_of(&j, o);
	assert_int_equal(j.seq_add, 4096);
	gen_of(&g, &j, 64 * KB);
	while (gen_next(&g, &t, &off, &l)) {
		/* fio wraps to the start past the end, and ends after the
		 * region's bytes: 16 requests, 0, 8k, ..., 56k twice. */
		assert_int_equal(off, (n % 8) * 8 * KB);
		n++;
	}
	assert_int_equal(n, 16);
	gen_free(&g);
	option_release(&j);
}

/* rw=read:-8k with bs=4k (fio's backwards-read.fio): 0, then from
 * the end backwards: 56k, 52k, ..., 0 (fio's sequence exactly). */
static void test_seq_backwards(void **state)
{
	static const char *const o[] = { "rw", "read:-8k", "bs", "4k", NULL };
	struct job j;
	struct gen g;
	unsigned t, n = 0;
	uint64_t off, want[16];
	uint32_t l;

	(void)state;
	want[0] = 0;
	for (unsigned i = 1; i < 16; i++)
		want[i] = 64 * KB - 8 * KB - (i - 1) * 4 * KB;
	job_of(&j, o);
	gen_of(&g, &j, 64 * KB);
	while (gen_next(&g, &t, &off, &l)) {
		assert_true(n < 16);
		assert_int_equal(off, want[n]);
		n++;
	}
	assert_int_equal(n, 16);
	gen_free(&g);
	option_release(&j);
}

/* rw=randread:8: runs of 8, each run starting at a random offset and
 * going on sequentially; rw_sequencer=identical repeats the offset. */
static void test_rand_every_n(void **state)
{
	static const char *const o[] = { "rw", "randread:8", "time_based", "1", NULL };
	static const char *const id[] = { "rw", "randread:8", "rw_sequencer", "identical",
					  "time_based", "1", NULL };
	struct job j;
	struct gen g;
	unsigned t;
	uint64_t off, prev = 0, start = 0;
	uint32_t l;

	(void)state;
	job_of(&j, o);
	gen_of(&g, &j, 1024 * MB);
	for (unsigned i = 0; i < 8 * 1000; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &l), 1);
		/* as fio's iolog shows: requests 1, 9, 17, ... are random,
		 * the 7 after each continue from it */
		if (i % 8 != 0)
			assert_int_equal(off, prev + 4 * KB);
		prev = off;
	}
	gen_free(&g);

	option_release(&j);
	job_of(&j, id);
	gen_of(&g, &j, 1024 * MB);
	for (unsigned i = 0; i < 8 * 1000; i++) {
		assert_int_equal(gen_next(&g, &t, &off, &l), 1);
		if (i % 8 == 0)
			start = off;
		else
			assert_int_equal(off, start);
	}
	gen_free(&g);
	option_release(&j);
}

/* ---- amounts: loops, number_ios --------------------------------------- */

/* Every request a job of @opts gives over @len bytes: how many, and
 * their bytes in *@bytes. */
static unsigned count_all(const char *const *opts, uint64_t len, uint64_t *bytes)
{
	unsigned t, n = 0;
	uint64_t off;
	uint32_t l;
	struct job j;
	struct gen g;

	job_of(&j, opts);
	gen_of(&g, &j, len);
	*bytes = 0;
	while (gen_next(&g, &t, &off, &l)) {
		n++;
		*bytes += l;
	}
	gen_free(&g);
	option_release(&j);
	return n;
}

static void test_loops_number_ios(void **state)
{
	static const char *const seq[] = { "rw", "read", "loops", "3", NULL };
	static const char *const rnd[] = { "rw", "randread", "loops", "2", "bssplit",
					   "4k/50:8k/50", NULL };
	static const char *const rnd_io[] = { "rw", "randread", "io_size", "2m", "bssplit",
					      "4k/50:64k/50", NULL };
	static const char *const nios[] = { "rw", "randread", "number_ios", "1000", NULL };
	uint64_t bytes;

	(void)state;
	/* loops=3 on the plain path: three passes of 256 requests */
	assert_int_equal(count_all(seq, MB, &bytes), 3 * 256);
	assert_int_equal(bytes, 3 * MB);
	/* shaped: a pass moves exactly the region's bytes, as fio's (its
	 * random map cuts the request that would run past them) */
	count_all(rnd, MB, &bytes);
	assert_int_equal(bytes, 2 * MB);
	/* io_size of two passes: each pass ends on the region's bytes, so
	 * the limit is met exactly */
	count_all(rnd_io, MB, &bytes);
	assert_int_equal(bytes, 2 * MB);
	assert_int_equal(count_all(nios, 64 * MB, &bytes), 1000);
}

/* A plain job (no shape) keeps the plain generator. */
static void test_plain_not_shaped(void **state)
{
	static const char *const o[] = { "rw", "randread", "random_distribution", "zipf:1.1",
					 NULL };
	struct job j;
	struct gen g;

	(void)state;
	job_of(&j, o);
	assert_false(gen_job_shaped(wl_of(&j)));
	gen_of(&g, &j, MB);
	assert_null(g.shape);
	gen_free(&g);
	option_release(&j);
}

/* fio's "20/" (rand-zones.fio): a zone without a size splits what is
 * left; "16k/" in bssplit likewise. */
static void test_parse_empty_share(void **state)
{
	static const char *const o[] = { "random_distribution", "zoned:50/5:30/15:20/",
					 "bssplit", "4k/60:16k/", NULL };
	struct job j;

	(void)state;
	job_of(&j, o);
	assert_int_equal(j.dir[0].nzones, 3);
	assert_int_equal(j.dir[0].zones[2].size_pct, 80);
	assert_int_equal(j.dir[0].split[0].perc, 40);	/* 16k: the rest, sorted first */
	option_release(&j);
	option_release(&j);
}

/* --parse-only prints the offset modifier as a job file says it. */
static void test_format_rw_postfix(void **state)
{
	static const char *const o[] = { "rw", "read:-8k", NULL };
	static const char *const r[] = { "rw", "randread:8", "random_distribution", "pareto:0.3",
					 NULL };
	char buf[64];
	struct job j;

	(void)state;
	job_of(&j, o);
	assert_int_equal(option_format(&j, option_find("rw"), buf, sizeof(buf)), 1);
	assert_string_equal(buf, "read:-8k");
	option_release(&j);
	job_of(&j, r);
	option_format(&j, option_find("rw"), buf, sizeof(buf));
	assert_string_equal(buf, "randread:8");
	option_format(&j, option_find("random_distribution"), buf, sizeof(buf));
	assert_string_equal(buf, "pareto:0.3");
	option_release(&j);
}

static void test_parse_errors(void **state)
{
	static const char *const bad[][2] = {
		{ "bssplit", "4k/60:8k/50:16k:32k" },	/* fio: > 100 with two missing */
		{ "bssplit", "4k/60:8k/60" },		/* > 100 (fio 3.33 runs it) */
		{ "bssplit", "4k/150" },
		{ "bssplit", "4k/50,4k/50:8k/60" },	/* the writes' over 100 */
		{ "bssplit", ":" },
		{ "bssplit", "," },
		{ "bssplit", "4k/50::8k/50" },		/* an empty entry */
		{ "bssplit", "4k/50:" },
		{ "bssplit", "0/50:4k/50" },		/* a size of 0 */
		{ "bssplit", "4k/50,0" },
		{ "random_distribution", "zoned:50/10:30/20" },	/* accesses add to 80 */
		{ "random_distribution", "pareto:1.5" },
		{ "random_distribution", "normal:100" },
		{ "rw", "randread:0" },
		{ "percentage_random", "101" },
		{ "bsrange", "4k" },
		{ "bsrange", "," },			/* no range at all */
		{ "bsrange", "0-4k" },
		{ "zonemode", "zbd" },			/* zoned block devices: refused */
		{ "random_distribution", "sequence:" },
		{ "random_distribution", "sequence:1,-2" },
		{ "random_distribution", "sequence:1,,2" },
	};
	struct job j;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct err e = { 0 };

		option_defaults(&j);
		if (option_set(&j, bad[i][0], bad[i][1], &e) != -EINVAL)
			fail_msg("%s=%s accepted", bad[i][0], bad[i][1]);
		option_release(&j);
	}
}

/* ---- against fio's own write_iolog ------------------------------------ */

/*
 * fio's offsets for @shape (job lines) over @blocks blocks of 4k, from
 * the iolog of fio's null engine: counts per block, sizes counted into
 * @sizes (index size / 4k, up to 16). Returns the requests logged, or 0
 * when fio is not installed (the test is then skipped).
 */
static unsigned fio_counts(const char *shape, uint64_t blocks, unsigned nios, unsigned *cnt,
			   unsigned *sizes)
{
	char dir[] = "/tmp/genshape.XXXXXX", job[128], log[128], cmd[512], line[256];
	unsigned n = 0;
	FILE *f;

	if (system("command -v fio >/dev/null 2>&1"))
		return 0;
	if (!mkdtemp(dir))
		fail_msg("mkdtemp");
	snprintf(job, sizeof(job), "%s/j.fio", dir);
	snprintf(log, sizeof(log), "%s/j.log", dir);
	f = fopen(job, "w");
	/* norandommap: faultline draws with replacement; io_size: fio's
	 * number_ios never extends a pass, so the bytes of @nios requests
	 * of 4k make the passes. */
	fprintf(f, "[j]\nioengine=null\nsize=%llu\nio_size=%llu\nbs=4k\nnorandommap\n"
		"write_iolog=%s\n%s\n", (unsigned long long)(blocks * 4 * KB),
		(unsigned long long)nios * 4 * KB, log, shape);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "fio --output=/dev/null %s", job);
	if (system(cmd))
		fail_msg("%s failed", cmd);
	f = fopen(log, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long ts, off, len;
		char name[128], act[16];

		/* v3: "time file action offset length" */
		if (sscanf(line, "%llu %127s %15s %llu %llu", &ts, name, act, &off, &len) != 5 ||
		    strcmp(act, "read"))
			continue;
		cnt[off / (4 * KB)]++;
		if (sizes && len / (4 * KB) <= 16)
			sizes[len / (4 * KB)]++;
		n++;
	}
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fail_msg("rm");
	return n;
}

static unsigned gen_counts(const char *const *opts, uint64_t blocks, unsigned nios,
			   unsigned *cnt, unsigned *sizes)
{
	struct job j;
	struct gen g;
	unsigned t, n = 0;
	uint64_t off;
	uint32_t l;

	job_of(&j, opts);
	j.number_ios = nios;
	j.time_based = true;	/* passes until number_ios */
	gen_of(&g, &j, blocks * 4 * KB);
	while (gen_next(&g, &t, &off, &l)) {
		cnt[off / (4 * KB)]++;
		if (sizes && l / (4 * KB) <= 16)
			sizes[l / (4 * KB)]++;
		n++;
	}
	gen_free(&g);
	option_release(&j);
	return n;
}

static double zone_share(const unsigned *cnt, uint64_t lo, uint64_t hi, unsigned n)
{
	uint64_t s = 0;

	for (uint64_t b = lo; b < hi; b++)
		s += cnt[b];
	return (double)s / n;
}

/* The same shares of accesses in the same zones as fio, within 2 points. */
static void test_vs_fio_zoned(void **state)
{
	static const char *const o[] = { "rw", "randread", "random_distribution",
					 "zoned:60/10:30/20:10/70", NULL };
	const uint64_t B = 25600;
	unsigned *a = calloc(B, sizeof(*a)), *b = calloc(B, sizeof(*b)), na, nb;

	(void)state;
	na = fio_counts("rw=randread\nrandom_distribution=zoned:60/10:30/20:10/70", B, 100000,
			a, NULL);
	if (!na) {
		free(a);
		free(b);
		skip();
	}
	nb = gen_counts(o, B, 100000, b, NULL);
	/* fio ends its zoned job after one pass whatever io_size says:
	 * shares are compared, counts need not match. */
	assert_true(na >= 20000);
	assert_int_equal(nb, 100000);
	assert_true(fabs(zone_share(a, 0, B / 10, na) - zone_share(b, 0, B / 10, nb)) < 0.02);
	assert_true(fabs(zone_share(a, B / 10, B * 3 / 10, na) -
			 zone_share(b, B / 10, B * 3 / 10, nb)) < 0.02);
	assert_true(fabs(zone_share(a, B * 3 / 10, B, na) - zone_share(b, B * 3 / 10, B, nb)) < 0.02);
	free(a);
	free(b);
}

/* The same hot share as fio for pareto:0.2 and normal, within 3 points. */
static void test_vs_fio_pareto_normal(void **state)
{
	static const char *const par[] = { "rw", "randread", "random_distribution", "pareto:0.2",
					   NULL };
	static const char *const nor[] = { "rw", "randread", "random_distribution", "normal:10",
					   NULL };
	const uint64_t B = 2000;
	unsigned *a = calloc(B, sizeof(*a)), *b = calloc(B, sizeof(*b)), na, nb;

	(void)state;
	na = fio_counts("rw=randread\nrandom_distribution=pareto:0.2", B, 100000, a, NULL);
	if (!na) {
		free(a);
		free(b);
		skip();
	}
	nb = gen_counts(par, B, 100000, b, NULL);
	print_message("pareto:0.2 hottest 20%%: fio %.3f, faultline %.3f; 5%%: %.3f, %.3f\n",
		      hot_share(a, B, 0.2, na), hot_share(b, B, 0.2, nb),
		      hot_share(a, B, 0.05, na), hot_share(b, B, 0.05, nb));
	assert_true(fabs(hot_share(a, B, 0.2, na) - hot_share(b, B, 0.2, nb)) < 0.03);
	assert_true(fabs(hot_share(a, B, 0.05, na) - hot_share(b, B, 0.05, nb)) < 0.03);
	memset(a, 0, B * sizeof(*a));
	memset(b, 0, B * sizeof(*b));
	na = fio_counts("rw=randread\nrandom_distribution=normal:10", B, 100000, a, NULL);
	nb = gen_counts(nor, B, 100000, b, NULL);
	print_message("normal:10 hottest 1/6: fio %.3f, faultline %.3f\n",
		      hot_share(a, B, 1.0 / 6, na), hot_share(b, B, 1.0 / 6, nb));
	assert_true(fabs(hot_share(a, B, 1.0 / 6, na) - hot_share(b, B, 1.0 / 6, nb)) < 0.03);
	free(a);
	free(b);
}

/* bssplit's and bsrange's shares of sizes as fio's, within 2 points. */
static void test_vs_fio_sizes(void **state)
{
	static const char *const bss[] = { "rw", "randread", "bssplit", "4k/10:8k/55:16k/35",
					   NULL };
	static const char *const bsr[] = { "rw", "randread", "bsrange", "4k-16k", NULL };
	const uint64_t B = 25600;
	unsigned *a = calloc(B, sizeof(*a)), *b = calloc(B, sizeof(*b)), na, nb;
	unsigned sa[17] = { 0 }, sb[17] = { 0 };

	(void)state;
	na = fio_counts("rw=randread\nbssplit=4k/10:8k/55:16k/35", B, 100000, a, sa);
	if (!na) {
		free(a);
		free(b);
		skip();
	}
	nb = gen_counts(bss, B, 100000, b, sb);
	for (unsigned k = 1; k <= 16; k++)
		assert_true(fabs(sa[k] / (double)na - sb[k] / (double)nb) < 0.02);
	memset(sa, 0, sizeof(sa));
	memset(sb, 0, sizeof(sb));
	na = fio_counts("rw=randread\nbsrange=4k-16k", B, 100000, a, sa);
	nb = gen_counts(bsr, B, 100000, b, sb);
	for (unsigned k = 1; k <= 16; k++)
		assert_true(fabs(sa[k] / (double)na - sb[k] / (double)nb) < 0.02);
	free(a);
	free(b);
}


/* ---- zonemode=strided and random_distribution=sequence -------------- */

/* Offsets (KiB) of the first @n requests. */
static void offsets_kib(struct gen *g, uint64_t *out, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned t;
		uint64_t off;
		uint32_t len;

		assert_int_equal(gen_next(g, &t, &off, &len), 1);
		out[i] = off / KB;
	}
}

/* fio 3.33's write_iolog for size=1m bs=4k rw=read zonemode=strided
 * zonesize=16k zoneskip=48k starts 0 4 8 12 64 ...; with zonesize=32k
 * zonerange=16k zoneskip=16k each zone is read twice before the skip. */
static void test_strided_zones(void **state)
{
	static const char *const a[] = { "rw", "read", "zonemode", "strided", "zonesize", "16k",
					 "zoneskip", "48k", NULL };
	static const char *const b[] = { "rw", "read", "zonesize", "32k", "zonerange", "16k",
					 "zoneskip", "16k", NULL };
	static const uint64_t wa[] = { 0, 4, 8, 12, 64, 68, 72, 76, 128, 132 };
	static const uint64_t wb[] = { 0, 4, 8, 12, 0, 4, 8, 12, 32, 36, 40, 44, 32, 36 };
	uint64_t got[16];
	unsigned t, n = 0;
	uint64_t off;
	uint32_t len;
	struct job j;
	struct gen g;

	(void)state;
	job_of(&j, a);
	gen_of(&g, &j, 1 * MB);
	offsets_kib(&g, got, 10);
	assert_memory_equal(got, wa, sizeof(wa));
	/* one pass is the region's bytes, as fio's io_size: 256 requests,
	 * the zones wrapping to the start after 1 MiB */
	while (gen_next(&g, &t, &off, &len))
		n++;
	assert_int_equal(n + 10, 256);
	gen_free(&g);
	option_release(&j);

	job_of(&j, b);
	gen_of(&g, &j, 1 * MB);
	offsets_kib(&g, got, 14);
	assert_memory_equal(got, wb, sizeof(wb));
	gen_free(&g);
	option_release(&j);
}

/* Random offsets stay in the zone: zonesize=8k zonerange=32k
 * zoneskip=32k, each pair of requests in the zone [64k*i, 64k*i+32k). */
static void test_strided_random(void **state)
{
	static const char *const o[] = { "rw", "randread", "zonesize", "8k", "zonerange", "32k",
					 "zoneskip", "32k", NULL };
	uint64_t got[32];
	struct job j;
	struct gen g;

	(void)state;
	job_of(&j, o);
	gen_of(&g, &j, 1 * MB);
	offsets_kib(&g, got, 32);
	for (unsigned i = 0; i < 32; i++) {
		uint64_t zone = (i / 2) * 64 % 1024;

		assert_true(got[i] >= zone && got[i] < zone + 32);
	}
	gen_free(&g);
	option_release(&j);
}

/* What zones and sequences refuse: zonemode=none with a zonesize (fio's
 * own error), strided without one, non-uniform offsets in zones, a
 * sequence on a sequential job. */
static void test_zone_contradictions(void **state)
{
	static const char *const bad[][6] = {
		{ "zonemode", "none", "zonesize", "16k", NULL, NULL },
		{ "zonemode", "strided", NULL, NULL, NULL, NULL },
		{ "rw", "randread", "zonesize", "16k", "random_distribution", "zipf:1.2" },
		{ "rw", "read", "random_distribution", "sequence:1,0", NULL, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *o[8] = { "size", "1m", bad[i][0], bad[i][1], bad[i][2], bad[i][3],
				     bad[i][4], bad[i][5] };
		struct err e = { 0 };
		struct job j;

		job_of(&j, o[6] ? (const char *const[]){ o[0], o[1], o[2], o[3], o[4], o[5], o[6],
							  o[7], NULL }
				: (const char *const[]){ o[0], o[1], o[2], o[3], o[4], o[5], NULL });
		if (job_validate(&j, NULL, &e) != -EINVAL)
			fail_msg("case %zu accepted", i);
		if (!strstr(e.msg, i == 3 ? "sequence" : "zone"))
			fail_msg("case %zu: refused for another reason: %s", i, e.msg);
		option_release(&j);
	}
}

/* fio's sequence distribution (examples/sequence-distribution.fio):
 * 2,0,1 repeated, or moving on by 3 blocks each cycle with the stride;
 * a block past the region ends the worker. */
static void test_sequence(void **state)
{
	static const char *const a[] = { "rw", "randread", "random_distribution", "sequence:2,0,1",
					 "io_size", "24k", NULL };
	static const char *const b[] = { "rw", "randread", "random_distribution", "sequence:2,0,1",
					 "random_sequence_stride", "1", NULL };
	static const uint64_t wa[] = { 8, 0, 4, 8, 0, 4 };
	static const uint64_t wb[] = { 8, 0, 4, 20, 12, 16, 32, 24, 28, 44, 36, 40 };
	uint64_t got[12];
	unsigned t;
	uint64_t off;
	uint32_t len;
	struct job j;
	struct gen g;

	(void)state;
	job_of(&j, a);
	gen_of(&g, &j, 48 * KB);
	offsets_kib(&g, got, 6);
	assert_memory_equal(got, wa, sizeof(wa));
	assert_int_equal(gen_next(&g, &t, &off, &len), 0);	/* io_size reached */
	gen_free(&g);
	option_release(&j);

	job_of(&j, b);
	j.time_based = true;	/* only the region's end stops it */
	gen_of(&g, &j, 48 * KB);
	offsets_kib(&g, got, 12);
	assert_memory_equal(got, wb, sizeof(wb));
	assert_int_equal(gen_next(&g, &t, &off, &len), 0);	/* block 14 is past 12 */
	gen_free(&g);
	option_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bssplit_shares),
		cmocka_unit_test(test_bssplit_missing_and_dirs),
		cmocka_unit_test(test_bsrange),
		cmocka_unit_test(test_bsrange_colon),
		cmocka_unit_test(test_blockalign),
		cmocka_unit_test(test_zoned_shares),
		cmocka_unit_test(test_zoned_abs),
		cmocka_unit_test(test_pareto_hot_share),
		cmocka_unit_test(test_normal_concentration),
		cmocka_unit_test(test_percentage_random),
		cmocka_unit_test(test_seq_holes),
		cmocka_unit_test(test_seq_backwards),
		cmocka_unit_test(test_rand_every_n),
		cmocka_unit_test(test_loops_number_ios),
		cmocka_unit_test(test_plain_not_shaped),
		cmocka_unit_test(test_parse_empty_share),
		cmocka_unit_test(test_format_rw_postfix),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_vs_fio_zoned),
		cmocka_unit_test(test_vs_fio_pareto_normal),
		cmocka_unit_test(test_vs_fio_sizes),
		cmocka_unit_test(test_strided_zones),
		cmocka_unit_test(test_strided_random),
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_zone_contradictions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
