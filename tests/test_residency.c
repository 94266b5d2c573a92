/*
 * test_residency.c - cachestat(2) and the mincore fallback against each
 * other and against what a test puts into the page cache: a small file
 * of real data, dropped from the cache (POSIX_FADV_DONTNEED), then every
 * other page read back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "telemetry/residency.h"

#define NPAGES 64

static int make_file(char *path, size_t cap, long ps)
{
	unsigned char *buf = malloc((size_t)ps);
	int fd;

	snprintf(path, cap, "/var/tmp/faultline-test-residency.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_non_null(buf);
	for (int i = 0; i < NPAGES; i++) {
		for (long k = 0; k < ps; k++)
			buf[k] = (unsigned char)(rand() >> 7);
		assert_int_equal(pwrite(fd, buf, (size_t)ps, (off_t)i * ps), ps);
	}
	free(buf);
	assert_int_equal(fdatasync(fd), 0);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	return fd;
}

static void read_every_other(int fd, long ps)
{
	char c;

	for (int i = 0; i < NPAGES; i += 2)
		assert_int_equal(pread(fd, &c, 1, (off_t)i * ps), 1);
}

static void test_cachestat_and_mincore_agree(void **state)
{
	long ps = sysconf(_SC_PAGESIZE);
	char path[64];
	int fd = make_file(path, sizeof(path), ps);
	unsigned char vec[NPAGES];
	struct residency a, b;
	int ret;

	(void)state;
	read_every_other(fd, ps);
	assert_int_equal(residency_mincore(fd, 0, (uint64_t)NPAGES * ps, vec, NPAGES, &b), 0);
	assert_false(b.full);
	/* Read-around may bring a neighbour in; never fewer than read. */
	assert_true(b.cached >= NPAGES / 2 && b.cached <= NPAGES);
	ret = residency_cachestat(fd, 0, (uint64_t)NPAGES * ps, &a);
	if (ret == -ENOSYS) {
		print_message("cachestat: this kernel has none; mincore only\n");
	} else {
		assert_int_equal(ret, 0);
		assert_true(a.full);
		assert_int_equal(a.cached, b.cached);
		assert_int_equal(a.dirty, 0);
	}
	/* A sub-range: the second quarter. */
	assert_int_equal(residency_mincore(fd, (uint64_t)16 * ps, (uint64_t)16 * ps, vec, NPAGES, &b), 0);
	assert_true(b.cached >= 8 && b.cached <= 16);
	if (ret == 0) {
		assert_int_equal(residency_cachestat(fd, (uint64_t)16 * ps, (uint64_t)16 * ps, &a), 0);
		assert_int_equal(a.cached, b.cached);
	}
	/* In windows of 5 pages (the last one short): the same count. */
	{
		struct residency c;

		assert_int_equal(residency_mincore(fd, 0, (uint64_t)NPAGES * ps, vec, NPAGES, &b), 0);
		assert_int_equal(residency_mincore(fd, 0, (uint64_t)NPAGES * ps, vec, 5, &c), 0);
		assert_int_equal(c.cached, b.cached);
		assert_int_equal(residency_mincore(fd, 0, (uint64_t)NPAGES * ps, vec, 0, &c), -EINVAL);
	}
	/* Dropped again: nothing cached, and no eviction counted (an
	 * invalidation leaves no shadow entry). */
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	assert_int_equal(residency_mincore(fd, 0, (uint64_t)NPAGES * ps, vec, NPAGES, &b), 0);
	assert_int_equal(b.cached, 0);
	close(fd);
	unlink(path);
}

static void test_source_picks_and_falls_back(void **state)
{
	long ps = sysconf(_SC_PAGESIZE);
	char path[64], why[128];
	int fd = make_file(path, sizeof(path), ps);
	struct residency_src s;
	struct residency r;

	(void)state;
	read_every_other(fd, ps);
	assert_int_equal(residency_open(&s, fd, 0, (uint64_t)NPAGES * ps), 0);
	assert_int_equal(residency_read(&s, &r), 0);
	assert_true(r.cached >= NPAGES / 2);
	if (s.method == RESIDENCY_CACHESTAT)
		assert_int_equal(residency_probe(fd, why, sizeof(why)), RESIDENCY_CACHESTAT);
	residency_close(&s);

	/* The fallback, forced: what an older kernel gets. */
	setenv("FAULTLINE_NO_CACHESTAT", "1", 1);
	assert_int_equal(residency_open(&s, fd, 0, (uint64_t)NPAGES * ps), 0);
	assert_int_equal(s.method, RESIDENCY_MINCORE);
	assert_string_equal(residency_method_name(s.method), "mincore");
	assert_int_equal(residency_read(&s, &r), 0);
	assert_false(r.full);
	assert_true(r.cached >= NPAGES / 2);
	residency_close(&s);
	assert_int_equal(residency_probe(fd, why, sizeof(why)), RESIDENCY_MINCORE);
	assert_non_null(strstr(why, "FAULTLINE_NO_CACHESTAT"));
	unsetenv("FAULTLINE_NO_CACHESTAT");

	assert_int_equal(residency_pages(0, (uint64_t)ps), 1);
	assert_int_equal(residency_pages(1, (uint64_t)ps), 2);
	assert_int_equal(residency_cachestat(fd, 0, 0, &r), -EINVAL);
	close(fd);
	unlink(path);
	/* A closed descriptor: an error, not a count. */
	assert_true(residency_cachestat(fd, 0, (uint64_t)ps, &r) < 0);
}

/* Regions shared among jobs (issue 27): one region per file and range
 * whatever the descriptor, read once per sample, and still readable
 * after the descriptor it was added with is closed. */
static void test_set_shares_regions(void **state)
{
	long ps = sysconf(_SC_PAGESIZE);
	char path[64];
	int fd = make_file(path, sizeof(path), ps);
	int fd2 = open(path, O_RDONLY);
	uint64_t len = (uint64_t)NPAGES * ps;
	struct residency_set set;
	struct residency a, b;
	int i, k, h;

	(void)state;
	assert_true(fd2 >= 0);
	read_every_other(fd, ps);
	residency_set_init(&set);
	i = residency_set_add(&set, fd, 0, len);
	assert_int_equal(i, 0);
	/* Another job's descriptor on the same file and range: the same. */
	assert_int_equal(residency_set_add(&set, fd2, 0, len), i);
	/* Another range of it: a region of its own. */
	h = residency_set_add(&set, fd2, 0, len / 2);
	assert_int_equal(h, 1);
	assert_int_equal(set.n, 2);
	assert_int_equal(residency_set_open_error(&set, (unsigned)i), 0);
	close(fd2);

	/* One read per region per sample, however often it is asked. */
	residency_set_next(&set);
	for (k = 0; k < 100; k++)
		assert_int_equal(residency_set_read(&set, (unsigned)i, &a), 0);
	assert_int_equal(set.reads, 1);
	assert_true(a.cached >= NPAGES / 2);
	assert_int_equal(residency_set_read(&set, (unsigned)h, &b), 0);
	assert_int_equal(set.reads, 2);
	assert_true(b.cached <= a.cached);
	/* The next sample reads afresh: the pages dropped meanwhile show. */
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	assert_int_equal(residency_set_read(&set, (unsigned)i, &a), 0);
	assert_true(a.cached >= NPAGES / 2);	/* the same sample: the same answer */
	residency_set_next(&set);
	assert_int_equal(residency_set_read(&set, (unsigned)i, &a), 0);
	assert_int_equal(a.cached, 0);
	assert_int_equal(set.reads, 3);
	assert_int_equal(residency_set_read(&set, 7, &a), -EINVAL);
	residency_set_free(&set);
	close(fd);
	unlink(path);
}

/* A region larger than a sample may read is read in N parts, one a
 * sample (N = ceil(pages / pages_per_sample)), their sum the reading of
 * the sample ending each pass, and whole whenever forced (a job's end). */
static void test_large_region_read_less_often(void **state)
{
	long ps = sysconf(_SC_PAGESIZE);
	char path[64];
	int fd = make_file(path, sizeof(path), ps);
	uint64_t len = (uint64_t)NPAGES * ps;
	struct residency_set set;
	struct residency a, b;
	unsigned got = 0;
	int i, small;

	(void)state;
	read_every_other(fd, ps);
	residency_set_init(&set);
	set.pages_per_sample = NPAGES / 4;
	i = residency_set_add(&set, fd, 0, len);
	small = residency_set_add(&set, fd, 0, len / 4);
	assert_int_equal(residency_set_every(&set, (unsigned)i), 4);
	assert_int_equal(residency_set_every(&set, (unsigned)small), 1);
	for (int k = 0; k < 8; k++) {
		int ret;

		residency_set_next(&set);
		assert_int_equal(residency_set_read(&set, (unsigned)small, &b), 0);
		ret = residency_set_read(&set, (unsigned)i, &a);
		assert_int_equal(ret, k % 4 == 3 ? 0 : -EAGAIN);
		got += ret == 0;
	}
	assert_int_equal(got, 2);
	assert_int_equal(set.reads, 8 + 8);
	/* The parts add up to the whole (nothing touches the file). */
	{
		struct residency whole;

		assert_int_equal(residency_read(&set.r[i].src, &whole), 0);
		assert_int_equal(a.cached, whole.cached);
	}
	/* Forced: read now, and the sample's other askers get that reading. */
	residency_set_next(&set);
	if (residency_set_read(&set, (unsigned)i, &a) == -EAGAIN) {
		assert_int_equal(residency_set_read_due(&set, (unsigned)i, true, &a), 0);
		assert_int_equal(residency_set_read(&set, (unsigned)i, &a), 0);
	}
	residency_set_free(&set);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cachestat_and_mincore_agree),
		cmocka_unit_test(test_source_picks_and_falls_back),
		cmocka_unit_test(test_set_shares_regions),
		cmocka_unit_test(test_large_region_read_less_often),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
