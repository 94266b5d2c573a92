/*
 * test_cappc.c - the pagecache method's buffered reads (cappc.c): the
 * kernel's report of each batch of a read (the pages left, to the
 * read's last) merged into the read, and a task's next read, however
 * close to the last, kept as a request of its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "capture/cappc.h"

static void test_batches_merge(void **state)
{
	struct cappc m = { 0 };

	(void)state;
	/* A read of pages 0-63 taken in batches of 31, 31 and 2. */
	assert_int_equal(cappc_read(&m, 10, 8, 77, 0, 63), 1);
	assert_int_equal(cappc_read(&m, 10, 8, 77, 31, 63), 0);
	assert_int_equal(cappc_read(&m, 10, 8, 77, 62, 63), 0);
	/* The next read, sequential: its own request. */
	assert_int_equal(cappc_read(&m, 10, 8, 77, 64, 65), 1);
	cappc_free(&m);
}

static void test_new_reads(void **state)
{
	struct cappc m = { 0 };

	(void)state;
	assert_int_equal(cappc_read(&m, 10, 8, 77, 4, 5), 1);
	/* The same pages again: a re-read, not a batch. */
	assert_int_equal(cappc_read(&m, 10, 8, 77, 4, 5), 1);
	/* Inside it but ending elsewhere: another read. */
	assert_int_equal(cappc_read(&m, 10, 8, 77, 5, 9), 1);
	/* The same range of another file, or device. */
	assert_int_equal(cappc_read(&m, 10, 8, 78, 6, 9), 1);
	assert_int_equal(cappc_read(&m, 10, 9, 78, 7, 9), 1);
	/* Before it. */
	assert_int_equal(cappc_read(&m, 10, 9, 78, 2, 9), 1);
	cappc_free(&m);
}

static void test_tasks_apart(void **state)
{
	struct cappc m = { 0 };

	(void)state;
	/* Two tasks reading the same file interleave: each its own. */
	assert_int_equal(cappc_read(&m, 10, 8, 77, 0, 63), 1);
	assert_int_equal(cappc_read(&m, 11, 8, 77, 31, 63), 1);
	assert_int_equal(cappc_read(&m, 10, 8, 77, 31, 63), 0);
	/* An ended task's tid, taken again, starts afresh. */
	cappc_forget(&m, 10);
	assert_int_equal(cappc_read(&m, 10, 8, 77, 62, 63), 1);
	assert_int_equal(cappc_read(&m, 11, 8, 77, 62, 63), 0);
	/* Many tasks: the table grows. */
	for (int t = 100; t < 200; t++)
		assert_int_equal(cappc_read(&m, t, 8, 77, 0, 1), 1);
	for (int t = 100; t < 200; t++)
		assert_int_equal(cappc_read(&m, t, 8, 77, 1, 1), 0);
	cappc_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batches_merge),
		cmocka_unit_test(test_new_reads),
		cmocka_unit_test(test_tasks_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
