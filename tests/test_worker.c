/* test_worker.c - a job's workers share no cache line (issue 24): each
 * starts on a line and the array of them is laid out whole lines apart,
 * for any count, zeroed. And the arena's bell, which a worker thread or
 * process rings as its timed part ends, wakes the controller waiting on
 * it (SPEC 8: the job's last row ends there). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/stats.h"
#include "run/arena.h"
#include "run/worker.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

static void *ring_later(void *arg)
{
	struct timespec d = { 0, 20000000 };

	nanosleep(&d, NULL);
	arena_bell_ring(arg);
	return NULL;
}

/* A wait with a deadline a minute away ends when the bell rings: from a
 * thread, from a forked process (the bell is in the shared arena), or
 * at once when it rang after the look (seen) and before the wait. The
 * bounds are the minute, not a latency: this host may be loaded. */
static void test_bell(void **state)
{
	struct arena a = { 0 };
	pthread_t th;
	uint32_t seen;
	uint64_t t0;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(arena_create(&a, 3), 0);
	assert_non_null(a.bell);
	assert_true((char *)a.bell >= (char *)&a.ts[3]);

	seen = arena_bell_seen(a.bell);
	t0 = mono_ns();
	assert_int_equal(pthread_create(&th, NULL, ring_later, a.bell), 0);
	while (arena_bell_seen(a.bell) == seen && mono_ns() - t0 < 60000000000ull)
		arena_bell_wait(a.bell, seen, t0 + 60000000000ull);
	assert_int_not_equal(arena_bell_seen(a.bell), seen);
	assert_true(mono_ns() - t0 < 30000000000ull);
	pthread_join(th, NULL);

	seen = arena_bell_seen(a.bell);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ring_later(a.bell);
		_exit(0);
	}
	t0 = mono_ns();
	while (arena_bell_seen(a.bell) == seen && mono_ns() - t0 < 60000000000ull)
		arena_bell_wait(a.bell, seen, t0 + 60000000000ull);
	assert_int_not_equal(arena_bell_seen(a.bell), seen);
	assert_true(mono_ns() - t0 < 30000000000ull);
	assert_int_equal(waitpid(pid, &st, 0), pid);

	seen = arena_bell_seen(a.bell);
	arena_bell_ring(a.bell);
	t0 = mono_ns();
	arena_bell_wait(a.bell, seen, t0 + 60000000000ull);
	assert_true(mono_ns() - t0 < 30000000000ull);
	arena_destroy(&a);
	assert_null(a.bell);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_array_apart),
		cmocka_unit_test(test_bell),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
