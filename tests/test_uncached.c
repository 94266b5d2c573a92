/*
 * test_uncached.c - uncached=1's check: the refusals name the kernel or
 * the filesystem, a tmpfs file is refused (shmem has no RWF_DONTCACHE on
 * any kernel), and where the kernel and filesystem have it, a read
 * leaves its page out of the page cache (cachestat says so).
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
#include <sys/uio.h>
#include <unistd.h>

#include "telemetry/residency.h"
#include "engines/uncached.h"

static int make_file(char *path, size_t cap, const char *dir, size_t bytes)
{
	char *buf = malloc(bytes);
	int fd;

	snprintf(path, cap, "%s/faultline-test-uncached.XXXXXX", dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	for (size_t i = 0; i < bytes; i++)
		buf[i] = (char)(rand() >> 5);
	assert_int_equal(write(fd, buf, bytes), (ssize_t)bytes);
	free(buf);
	assert_int_equal(fdatasync(fd), 0);
	return fd;
}

static void test_explain_names_kernel_and_filesystem(void **state)
{
	struct err e = { 0 };

	(void)state;
	assert_int_equal(uncached_explain(0, "6.1.0", "/x", &e), 0);
	assert_int_equal(uncached_explain(-EINVAL, "6.1.0-18-amd64", "/x", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "Linux 6.1.0-18-amd64"));
	assert_non_null(strstr(e.msg, "6.14"));
	assert_int_equal(uncached_explain(-EOPNOTSUPP, "6.14.2", "/mnt/f", &e), -EOPNOTSUPP);
	assert_non_null(strstr(e.msg, "/mnt/f"));
	assert_non_null(strstr(e.msg, "filesystem"));
	assert_int_equal(uncached_explain(-EIO, "6.14.2", "/mnt/f", &e), -EIO);
	assert_non_null(strstr(e.msg, strerror(EIO)));
}

static void test_tmpfs_refused(void **state)
{
	char path[128];
	struct err e = { 0 };
	int fd, ret;

	(void)state;
	if (access("/dev/shm", W_OK) != 0) {
		print_message("no writable /dev/shm\n");
		skip();
	}
	fd = make_file(path, sizeof(path), "/dev/shm", 4096);
	ret = uncached_probe(fd, 0, path, &e);
	/* Before 6.14: the flag is unknown (EINVAL); since: shmem lacks it. */
	assert_true(ret == -EOPNOTSUPP || ret == -EINVAL);
	assert_non_null(strstr(e.msg, "uncached=1"));
	close(fd);
	unlink(path);
}

static void test_read_leaves_no_page_behind(void **state)
{
	char path[128], buf[4096];
	struct err e = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct residency r;
	int fd, ret;

	(void)state;
	fd = make_file(path, sizeof(path), "/var/tmp", 64 * 4096);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	ret = uncached_probe(fd, 0, path, &e);
	/* Where the kernel or the filesystem lacks the flag, or the kernel
	 * cachestat (before 6.5), nothing here can be checked: skipped, so
	 * that it does not count as a pass. The file is removed first, as
	 * skip() does not come back. */
	if (ret || residency_cachestat(fd, 0, 64 * 4096, &r) != 0) {
		close(fd);
		unlink(path);
		if (ret) {
			print_message("no uncached reads here: %s\n", e.msg);
			assert_true(ret == -EINVAL || ret == -EOPNOTSUPP);
		} else {
			print_message("no cachestat(2) here to see the page cache with\n");
		}
		skip();
	}
	for (int i = 0; i < 64; i++)
		assert_int_equal(preadv2(fd, &iov, 1, (off_t)i * 4096, UNCACHED_RWF_DONTCACHE), 4096);
	/* Buffered reads of 64 pages cache 64; uncached drops them. */
	assert_int_equal(residency_cachestat(fd, 0, 64 * 4096, &r), 0);
	assert_true(r.cached < 8);
	for (int i = 0; i < 64; i++)
		assert_int_equal(pread(fd, buf, sizeof(buf), (off_t)i * 4096), 4096);
	assert_int_equal(residency_cachestat(fd, 0, 64 * 4096, &r), 0);
	assert_int_equal(r.cached, 64);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explain_names_kernel_and_filesystem),
		cmocka_unit_test(test_tmpfs_refused),
		cmocka_unit_test(test_read_leaves_no_page_behind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
