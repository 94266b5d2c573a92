/*
 * test_pool_pin.c - the pools' published pins (pool_pin.c): readers are
 * handed out up to their bound and start empty (page 0 is not seen as
 * published by a fresh reader); a published page is seen until it is
 * cleared; a wait for it returns once another thread clears it, and is
 * called off by a stop flag (-ECANCELED); the check names a slot left
 * behind.
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
	pool_pin_publish(a, 0, 0);
	pool_pin_publish(b, POOL_PIN_SLOTS - 1, 77);
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
	pool_pin_publish(c.rd, 3, 5);
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
	pool_pin_publish(rd, 1, 9);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readers_start_empty),
		cmocka_unit_test(test_publish_and_clear),
		cmocka_unit_test(test_wait_for_a_clear),
		cmocka_unit_test(test_stop_calls_a_wait_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
