/*
 * test_verify.c - reading written blocks back (verify.c): a worker's
 * read-back of the blocks it recorded, and faultline --verify's scan of
 * a write job's regions, on files made here with blocks stamped,
 * corrupted, misplaced and never written.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testjob.h"

#include "workload/blockdata.h"
#include "job/options.h"
#include "workload/verify.h"

#define BS 4096u
#define NBLK 64u

static char dir[] = "/tmp/faultline-test-verify.XXXXXX";
static char path[256];

/* A file of NBLK blocks: random bytes, with blocks 3, 10, 11, 40 and 63
 * written as faultline writes them, then block 10 corrupted and block 40
 * replaced by block 11's (a misdirected write). */
static int make_file(void **state)
{
	uint8_t *buf = malloc(BS * NBLK);
	int fd;

	(void)state;
	if (!mkdtemp(dir) || !buf)
		return -1;
	snprintf(path, sizeof(path), "%s/target", dir);
	blockdata_init(buf, BS * NBLK, 7);	/* random, no headers */
	for (unsigned b = 0; b < NBLK; b++)
		buf[b * BS] ^= 0x5a;		/* no accidental magic */
	static const unsigned written[] = { 3, 10, 11, 40, 63 };
	for (unsigned i = 0; i < 5; i++) {
		unsigned b = written[i];

		blockdata_init(buf + b * BS, BS, 100 + b);
		blockdata_stamp(buf + b * BS, BS, (uint64_t)b * BS, 1);
	}
	buf[10 * BS + 1000] ^= 1;
	memcpy(buf + 40 * BS, buf + 11 * BS, BS);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, BS * NBLK) != (ssize_t)(BS * NBLK))
		return -1;
	close(fd);
	free(buf);
	return 0;
}

static int remove_file(void **state)
{
	char p[300];

	(void)state;
	unlink(path);
	snprintf(p, sizeof(p), "%s/w.0.0", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}

static void test_readback(void **state)
{
	struct verify_map m;
	struct verify_tally t = { 0 };
	uint8_t *buf = malloc(BS);
	struct err e = { 0 };
	bool complete;
	int fd = open(path, O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(verify_map_init(&m, NBLK), 0);
	verify_map_set(&m, 3);
	verify_map_set(&m, 63);
	assert_int_equal(verify_readback(fd, &m, 0, BS, buf, 5, NULL, &t, &complete, NULL, &e), 0);
	assert_true(complete);
	assert_int_equal(t.blocks, 2);
	assert_int_equal(t.bad, 0);

	/* the corrupted one, the misplaced one, and one the job says it
	 * wrote that has no header: all bad, the first is the lowest */
	verify_map_set(&m, 40);
	verify_map_set(&m, 10);
	verify_map_set(&m, 20);
	memset(&t, 0, sizeof(t));
	assert_int_equal(verify_readback(fd, &m, 0, BS, buf, 5, NULL, &t, &complete, NULL, &e), 0);
	assert_int_equal(t.blocks, 5);
	assert_int_equal(t.bad, 3);
	assert_int_equal(t.first_target, 5);
	assert_int_equal(t.first_off, 10 * BS);
	assert_int_equal(t.first_code, -EBADMSG);

	/* verify_fatal: the first bad block ends it (blocks 3 and 10 read);
	 * verify_dump: the bad block as read, in the current directory */
	{
		struct verify_opts o = { .fatal = true, .dump = "/some/dir/target.dat" };
		char cwd[4096], name[64];
		uint8_t *got = malloc(BS);
		FILE *f;

		assert_non_null(getcwd(cwd, sizeof(cwd)));
		assert_int_equal(chdir(dir), 0);
		memset(&t, 0, sizeof(t));
		assert_int_equal(verify_readback(fd, &m, 0, BS, buf, 5, NULL, &t, &complete, &o, &e), 0);
		assert_int_equal(t.blocks, 2);
		assert_int_equal(t.bad, 1);
		snprintf(name, sizeof(name), "target.dat.%d.received", 10 * BS);
		f = fopen(name, "r");
		assert_non_null(f);
		assert_int_equal(fread(got, 1, BS, f), BS);
		fclose(f);
		unlink(name);
		assert_int_equal(pread(fd, buf, BS, 10 * BS), BS);
		assert_memory_equal(got, buf, BS);
		assert_int_equal(chdir(cwd), 0);
		free(got);
	}
	/* stopped: not complete */
	{
		int stop = 1;

		memset(&t, 0, sizeof(t));
		assert_int_equal(verify_readback(fd, &m, 0, BS, buf, 5, &stop, &t, &complete, NULL, &e), 0);
		assert_false(complete);
	}
	/* a block past the end of the file: a read error, named */
	verify_map_free(&m);
	assert_int_equal(verify_map_init(&m, NBLK + 1), 0);
	verify_map_set(&m, NBLK);
	assert_int_equal(verify_readback(fd, &m, 0, BS, buf, 0, NULL, &t, &complete, NULL, &e), -EIO);
	assert_non_null(strstr(e.msg, "offset 262144"));
	verify_map_free(&m);
	close(fd);
	free(buf);
}

static void job_for(struct job *j, const char *filename)
{
	option_defaults(j);
	j->rw = RW_RANDWRITE;
	j->bs = BS;
	if (filename)
		j->filename = strdup(filename);
}

/* --verify: every block: valid, mismatched (named), never written. */
static void test_verify_job(void **state)
{
	struct verify_result r;
	struct err e = { 0 };
	struct job j;

	(void)state;
	job_for(&j, path);
	assert_int_equal(verify_job(wl_of(&j), &r, &e), 0);
	assert_int_equal(r.ntargets, 1);
	assert_string_equal(r.targets[0].path, path);
	assert_int_equal(r.targets[0].blocks, NBLK);
	assert_int_equal(r.targets[0].valid, 3);
	assert_int_equal(r.targets[0].bad, 2);
	assert_int_equal(r.targets[0].never, NBLK - 5);
	assert_int_equal(r.targets[0].nkept, 2);
	assert_int_equal(r.targets[0].kept[0].off, 10 * BS);
	assert_int_equal(r.targets[0].kept[0].code, -EBADMSG);
	assert_int_equal(r.targets[0].kept[1].off, 40 * BS);
	assert_int_equal(r.targets[0].kept[1].code, -EFAULT);
	verify_result_free(&r);

	/* offset and size: only the region */
	j.offset = 8 * BS;
	j.size = 8 * BS;
	assert_int_equal(verify_job(wl_of(&j), &r, &e), 0);
	assert_int_equal(r.targets[0].blocks, 8);
	assert_int_equal(r.targets[0].valid, 1);	/* 11; 10 is the bad one */
	assert_int_equal(r.targets[0].bad, 1);
	verify_result_free(&r);

	/* a region past the end of the file */
	j.offset = 0;
	j.size = 2 * BS * NBLK;
	assert_int_equal(verify_job(wl_of(&j), &r, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "truncated"));
	verify_result_free(&r);

	/* a read job: nothing to check */
	j.size = 0;
	j.rw = RW_READ;
	assert_int_equal(verify_job(wl_of(&j), &r, &e), 0);
	assert_int_equal(r.ntargets, 0);
	verify_result_free(&r);
	option_release(&j);
}

/* Scratch files: <directory>/<job>.<n>.<file>, never created. */
static void test_verify_scratch(void **state)
{
	struct verify_result r;
	struct err e = { 0 };
	struct job j;
	char p[300];

	(void)state;
	job_for(&j, NULL);
	snprintf(j.name, sizeof(j.name), "w");
	j.directory = strdup(dir);
	j.size = BS * NBLK;
	snprintf(p, sizeof(p), "%s/w.0.0", dir);
	assert_int_equal(verify_job(wl_of(&j), &r, &e), -ENOENT);
	assert_non_null(strstr(e.msg, p));
	assert_int_equal(access(p, F_OK), -1);
	verify_result_free(&r);
	assert_int_equal(link(path, p), 0);
	assert_int_equal(verify_job(wl_of(&j), &r, &e), 0);
	assert_int_equal(r.ntargets, 1);
	assert_int_equal(r.targets[0].bad, 2);
	verify_result_free(&r);
	option_release(&j);
}

static void test_code_names(void **state)
{
	(void)state;
	assert_non_null(strstr(verify_code_name(-EBADMSG), "crc"));
	assert_non_null(strstr(verify_code_name(-EFAULT), "another offset"));
	assert_non_null(strstr(verify_code_name(-ENOENT), "no header"));
	assert_non_null(strstr(verify_code_name(-EINVAL), "block size"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readback),
		cmocka_unit_test(test_verify_job),
		cmocka_unit_test(test_verify_scratch),
		cmocka_unit_test(test_code_names),
	};

	return cmocka_run_group_tests(tests, make_file, remove_file);
}
