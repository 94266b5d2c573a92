/* test_worker.c - a job's workers share no cache line (issue 24): each
 * starts on a line and the array of them is laid out whole lines apart,
 * for any count, zeroed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "run/worker.h"

/* The line of a byte's address. */
static uintptr_t line_of(const void *p)
{
	return (uintptr_t)p / CACHELINE;
}

static void test_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct worker) % CACHELINE, 0);
	assert_true(_Alignof(struct worker) >= CACHELINE);
}

/* Between the allocations the heap is left at every 16-byte phase a
 * line can have, so an array that only calloc's alignment placed would
 * land across a line in some of them. */
static void test_array_apart(void **state)
{
	(void)state;
	for (unsigned phase = 0; phase < CACHELINE / 16; phase++) {
		void *skew = malloc(16 * phase + 8);

		for (unsigned n = 1; n <= 5; n++) {
			struct worker *w = worker_array_new(n);

			assert_non_null(w);
			for (unsigned i = 0; i < n; i++) {
				const unsigned char *b = (const unsigned char *)&w[i];

				assert_int_equal((uintptr_t)&w[i] % CACHELINE, 0);
				for (size_t k = 0; k < sizeof(*w); k++)
					assert_int_equal(b[k], 0);
				if (i + 1 < n) {
					/* Worker i's last byte (its sink, pid, started)
					 * and worker i+1's first (its wk, st, gen). */
					assert_true(line_of(b + sizeof(*w) - 1) < line_of(&w[i + 1]));
					assert_true(line_of(&w[i].sink) != line_of(&w[i + 1].wk));
				}
			}
			free(w);
		}
		free(skew);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_array_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
