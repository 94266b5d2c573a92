/*
 * test_content.c - fio's dedupe and compressible write buffers
 * (workload/content.c): the share of repeated contents in each mode, the
 * zeros of each chunk, and the working set shared under dedupe_global.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testjob.h"

#include "job/options.h"
#include "workload/content.h"

#define N 4000
#define BS 4096

/* Distinct contents among N writes (first 8 bytes stand for a block:
 * 64 random bits). */
static unsigned distinct(struct content *c, uint64_t *firsts)
{
	uint8_t *b = malloc(BS);
	unsigned d = 0;

	for (unsigned i = 0; i < N; i++) {
		bool seen = false;
		uint64_t v;

		content_fill(c, b, BS);
		memcpy(&v, b, 8);
		for (unsigned k = 0; k < d && !seen; k++)
			seen = firsts[k] == v;
		if (!seen)
			firsts[d++] = v;
	}
	free(b);
	return d;
}

static void test_repeat_share(void **state)
{
	static const char *const o[] = { "dedupe_percentage", "30", NULL };
	uint64_t *f = calloc(N, sizeof(*f));
	struct content c;
	struct job j;
	unsigned d;

	(void)state;
	job_of(&j, o);
	content_init(&c, wl_of(&j), 0, 42, 1 << 20);
	d = distinct(&c, f);
	assert_in_range(d, N * 67 / 100, N * 73 / 100);
	free(f);
	option_release(&j);
}

/* working_set: the repeats come from the set; with dedupe_global two
 * jobs (different seeds) share it, without it they do not. */
static void test_working_set_global(void **state)
{
	static const char *const g[] = { "dedupe_percentage", "100", "dedupe_mode", "working_set",
					 "dedupe_working_set_percentage", "1", "dedupe_global", "1",
					 NULL };
	static const char *const l[] = { "dedupe_percentage", "100", "dedupe_mode", "working_set",
					 "dedupe_working_set_percentage", "1", NULL };
	uint64_t *a = calloc(N, sizeof(*a)), *b = calloc(N, sizeof(*b));
	struct content ca, cb;
	unsigned da, db, common = 0;
	struct job j;

	(void)state;
	job_of(&j, g);
	content_init(&ca, wl_of(&j), 0, 1, 1000);	/* a set of 10 */
	content_init(&cb, wl_of(&j), 0, 2, 1000);
	da = distinct(&ca, a);
	db = distinct(&cb, b);
	assert_int_equal(da, 10);
	assert_int_equal(db, 10);
	for (unsigned x = 0; x < da; x++)
		for (unsigned y = 0; y < db; y++)
			common += a[x] == b[y];
	assert_int_equal(common, 10);
	option_release(&j);

	job_of(&j, l);
	content_init(&ca, wl_of(&j), 0, 1, 1000);
	content_init(&cb, wl_of(&j), 0, 2, 1000);
	da = distinct(&ca, a);
	db = distinct(&cb, b);
	common = 0;
	for (unsigned x = 0; x < da; x++)
		for (unsigned y = 0; y < db; y++)
			common += a[x] == b[y];
	assert_int_equal(common, 0);
	free(a);
	free(b);
	option_release(&j);
}

static void test_compress_zeros(void **state)
{
	static const char *const o[] = { "buffer_compress_percentage", "25", "buffer_compress_chunk",
					 "1k", NULL };
	uint8_t *b = malloc(BS), zero[256] = { 0 };
	struct content c;
	struct job j;

	(void)state;
	job_of(&j, o);
	content_init(&c, wl_of(&j), 0, 9, 100);
	content_fill(&c, b, BS);
	for (unsigned s = 0; s < BS; s += 1024) {
		assert_memory_equal(b + s + 768, zero, 256);
		assert_memory_not_equal(b + s + 512, zero, 256);
	}
	free(b);
	option_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeat_share),
		cmocka_unit_test(test_working_set_global),
		cmocka_unit_test(test_compress_zeros),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
