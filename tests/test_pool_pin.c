/*
 * test_pool_pin.c - the pools' published pins (pool_pin.c): readers are
 * handed out up to their bound and start empty (page 0 is not seen as
 * published by a fresh reader); a published page is seen until it is
 * cleared; a wait for it returns once another thread clears it, and is
 * called off by a stop flag (-ECANCELED); the check names a slot left
 * behind; light readers and a locker never go on at once.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engines/pool_pin.h"

#define NREADERS 4

static struct pool_reader *readers_new(struct pool_pins *pp, uint32_t max)
{
	struct pool_reader *mem = aligned_alloc(64, max * sizeof(*mem));

	assert_non_null(mem);
	/* What a fresh mapping holds: a reader never filled would name page 0. */
	memset(mem, 0, max * sizeof(*mem));
	pool_pin_init(pp, mem, max);
	return mem;
}

static void test_readers_start_empty(void **state)
{
	struct pool_pins pp;
	struct pool_reader *mem = readers_new(&pp, NREADERS);
	struct err e = { 0 };

	(void)state;
	for (unsigned i = 0; i < NREADERS; i++) {
		struct pool_reader *rd = pool_pin_reader_new(&pp);

		assert_ptr_equal(rd, &mem[i]);
		for (unsigned j = 0; j < POOL_PIN_SLOTS; j++)
			assert_true(rd->slot[j] == POOL_PIN_EMPTY);
	}
	assert_null(pool_pin_reader_new(&pp));
	assert_false(pool_pin_published(&pp, 0));
	assert_int_equal(pool_pin_check(&pp, "test", &e), 0);
	free(mem);
}

static void test_publish_and_clear(void **state)
{
	struct pool_pins pp;
	struct pool_reader *mem = readers_new(&pp, NREADERS);
	struct pool_reader *a = pool_pin_reader_new(&pp), *b = pool_pin_reader_new(&pp);
	struct err e = { 0 };

	(void)state;
	pool_pin_publish(&pp, a, 0, 0);
	pool_pin_publish(&pp, b, POOL_PIN_SLOTS - 1, 77);
	assert_true(pool_pin_published(&pp, 0));
	assert_true(pool_pin_published(&pp, 77));
	assert_false(pool_pin_published(&pp, 1));
	assert_int_equal(pool_pin_check(&pp, "test", &e), -EUCLEAN);
	assert_non_null(strstr(e.msg, "slot 0"));
	pool_pin_clear(a, 0);
	assert_false(pool_pin_published(&pp, 0));
	assert_int_equal(pool_pin_wait(&pp, 0, NULL), 0);
	pool_pin_clear(b, POOL_PIN_SLOTS - 1);
	assert_false(pool_pin_published(&pp, 77));
	assert_int_equal(pool_pin_check(&pp, "test", &e), 0);
	free(mem);
}

struct clearer {
	struct pool_reader *rd;
	int waiting;
};

static void *clearer_main(void *arg)
{
	struct clearer *c = arg;

	/* Let the waiter get into its wait first (not required: it returns
	 * either way once the slot is clear). */
	while (!__atomic_load_n(&c->waiting, __ATOMIC_ACQUIRE))
		;
	usleep(10000);
	pool_pin_clear(c->rd, 3);
	return NULL;
}

static void test_wait_for_a_clear(void **state)
{
	struct pool_pins pp;
	struct pool_reader *mem = readers_new(&pp, NREADERS);
	struct clearer c = { .rd = pool_pin_reader_new(&pp) };
	int stop = 0;
	const int *stops[2] = { &stop, NULL };
	pthread_t t;

	(void)state;
	pool_pin_publish(&pp, c.rd, 3, 5);
	assert_int_equal(pthread_create(&t, NULL, clearer_main, &c), 0);
	__atomic_store_n(&c.waiting, 1, __ATOMIC_RELEASE);
	assert_int_equal(pool_pin_wait(&pp, 5, stops), 0);
	assert_false(pool_pin_published(&pp, 5));
	pthread_join(t, NULL);
	free(mem);
}

static void test_stop_calls_a_wait_off(void **state)
{
	struct pool_pins pp;
	struct pool_reader *mem = readers_new(&pp, NREADERS);
	struct pool_reader *rd = pool_pin_reader_new(&pp);
	int run_stop = 0, job_stop = 0;
	const int *stops[2] = { &run_stop, &job_stop };

	(void)state;
	pool_pin_publish(&pp, rd, 1, 9);
	job_stop = 1;
	assert_int_equal(pool_pin_wait(&pp, 9, stops), -ECANCELED);
	job_stop = 0;
	run_stop = 1;
	assert_int_equal(pool_pin_wait(&pp, 9, stops), -ECANCELED);
	assert_true(pool_pin_published(&pp, 9));	/* the pin is the reader's to give back */
	pool_pin_clear(rd, 1);
	assert_int_equal(pool_pin_wait(&pp, 9, stops), 0);
	free(mem);
}

/*
 * Light readers (pool_pin_light) against a locker, as a hit and an
 * evictor meet: the reader publishes with a plain store and then looks
 * at the word; the locker locks the word, fences (membarrier) and looks
 * at the readers. Both may never go on at once. Each side, once in,
 * says so and looks for the other with sequentially consistent
 * operations, so an overlap is seen whenever it happens.
 */
struct dekker {
	struct pool_pins *pp;
	struct pool_reader *rd;
	uint64_t word;
	int reader_in, locker_in, done;
	unsigned long overlaps, reader_went, locker_went;
};

static void *light_reader(void *arg)
{
	struct dekker *d = arg;
	static uint8_t lines[64 * 4096];
	unsigned n = 0;

	while (!__atomic_load_n(&d->done, __ATOMIC_RELAXED)) {
		/* Stores to lines far apart, just before the publish, as a
		 * worker's stores to its counters and histogram are: queued
		 * before it, they hold it back from the other CPUs while the
		 * load after it has long been done, the window a missing
		 * fence lets an evictor through. */
		for (unsigned k = 0; k < 16; k++, n++)
			__atomic_store_n(&lines[(n * 4160u) % sizeof(lines)], (uint8_t)n,
					 __ATOMIC_RELAXED);
		pool_pin_publish(d->pp, d->rd, 0, 7);
		if (__atomic_load_n(&d->word, __ATOMIC_SEQ_CST) == 0) {
			__atomic_store_n(&d->reader_in, 1, __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&d->locker_in, __ATOMIC_SEQ_CST))
				__atomic_add_fetch(&d->overlaps, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&d->reader_in, 0, __ATOMIC_SEQ_CST);
			d->reader_went++;
		}
		pool_pin_clear(d->rd, 0);
	}
	return NULL;
}

static void test_light_readers_and_a_locker(void **state)
{
	struct pool_pins pp;
	struct pool_reader *mem = readers_new(&pp, NREADERS);
	struct dekker d = { .pp = &pp };
	pthread_t t;

	(void)state;
	if (pool_pin_light(&pp) < 0) {
		free(mem);
		skip();		/* membarrier(2) refused here: readers stay fenced */
	}
	d.rd = pool_pin_reader_new(&pp);
	assert_int_equal(pthread_create(&t, NULL, light_reader, &d), 0);
	for (unsigned i = 0; i < 200000; i++) {
		uint64_t unlocked = 0;

		if (!__atomic_compare_exchange_n(&d.word, &unlocked, 1, false, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			continue;
		pool_pin_fence(&pp);
		if (!pool_pin_published(&pp, 7)) {
			__atomic_store_n(&d.locker_in, 1, __ATOMIC_SEQ_CST);
			/* Held a while, as an eviction holds its page: a reader
			 * that wrongly went on is then in at the same time. */
			for (unsigned k = 0; k < 64; k++) {
				if (__atomic_load_n(&d.reader_in, __ATOMIC_SEQ_CST))
					__atomic_add_fetch(&d.overlaps, 1, __ATOMIC_RELAXED);
				pool_cpu_relax();
			}
			__atomic_store_n(&d.locker_in, 0, __ATOMIC_SEQ_CST);
			d.locker_went++;
		}
		__atomic_store_n(&d.word, 0, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&d.done, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	assert_int_equal(d.overlaps, 0);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readers_start_empty),
		cmocka_unit_test(test_publish_and_clear),
		cmocka_unit_test(test_wait_for_a_clear),
		cmocka_unit_test(test_stop_calls_a_wait_off),
		cmocka_unit_test(test_light_readers_and_a_locker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
