/*
 * test_csvout.c - the CSV's rows, written one by one or gathered in a
 * buffer: the file always ends on a whole row, a gathered row waits for
 * csvout_flush (or for a row that would not fit), a row larger than the
 * buffer still goes out whole, in order, and a failed write is reported
 * once and stops the rows after it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "out/csvout.h"

static char path[64];

static size_t slurp(char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

static void row(struct csvout *c, char ch, size_t len, char *want)
{
	char line[256];
	size_t n;

	memset(line, ch, len);
	assert_int_equal(csvout_row(c, line, len), 0);
	n = strlen(want);
	memcpy(want + n, line, len);
	want[n + len] = '\n';
	want[n + len + 1] = '\0';
}

static void test_buffered(void **state)
{
	struct csvout c;
	struct err e = { 0 };
	char want[1024] = "", got[1024];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_csvout.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(csvout_open(&c, path, &e), 0);
	assert_int_equal(csvout_buffer(&c, 64), 0);
	row(&c, 'a', 10, want);
	row(&c, 'b', 30, want);
	/* Both wait in the buffer. */
	assert_int_equal(slurp(got, sizeof(got)), 0);
	/* 41 more bytes do not fit: the two go out first, whole. */
	row(&c, 'c', 40, want);
	assert_int_equal(slurp(got, sizeof(got)), 42);
	assert_memory_equal(got, want, 42);
	/* Larger than the buffer: what waits, then it, at once. */
	row(&c, 'd', 100, want);
	assert_int_equal(slurp(got, sizeof(got)), strlen(want));
	row(&c, 'e', 5, want);
	assert_int_equal(csvout_flush(&c), 0);
	assert_int_equal(slurp(got, sizeof(got)), strlen(want));
	assert_string_equal(got, want);
	/* Closing flushes what is left. */
	row(&c, 'f', 7, want);
	csvout_close(&c);
	slurp(got, sizeof(got));
	assert_string_equal(got, want);
	unlink(path);
}

/* A device with no room: the flush fails with ENOSPC, once. */
static void test_full(void **state)
{
	struct csvout c;
	struct err e = { 0 };

	(void)state;
	if (access("/dev/full", W_OK))
		skip();
	assert_int_equal(csvout_open(&c, "/dev/full", &e), 0);
	assert_int_equal(csvout_buffer(&c, 64), 0);
	assert_int_equal(csvout_row(&c, "x,y", 3), 0);
	assert_int_equal(csvout_flush(&c), -ENOSPC);
	assert_true(c.broken);
	assert_int_equal(c.error, ENOSPC);
	assert_int_equal(csvout_row(&c, "x,y", 3), 0);
	assert_int_equal(csvout_flush(&c), 0);
	csvout_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffered),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
