/*
 * test_taskstats.c - the taskstats reply parsers on recorded answers
 * (fixtures/taskstats, README there) and the split of a job's time into
 * shares (timeshare.c).
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
#include <linux/netlink.h>

#include "telemetry/taskstats.h"
#include "telemetry/timeshare.h"

#ifndef FIXTURES
#error "build with -DFIXTURES=\"<abs path to tests/fixtures>\""
#endif

static size_t load(const char *name, unsigned char *buf, size_t cap)
{
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), FIXTURES "/taskstats/%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static void test_family(void **state)
{
	unsigned char buf[TASKSTATS_BUF];
	size_t n = load("family.bin", buf, sizeof(buf));
	uint16_t id = 0;

	(void)state;
	assert_int_equal(taskstats_parse_family(buf, n, &id), 0);
	assert_int_equal(id, 31);
}

static void test_reply(void **state)
{
	unsigned char buf[TASKSTATS_BUF];
	size_t n = load("reply.bin", buf, sizeof(buf));
	struct taskstats_delays d;

	(void)state;
	assert_int_equal(taskstats_parse_reply(buf, n, 29145, &d), 0);
	assert_int_equal(d.version, 16);
	assert_int_equal(d.have, (1u << TASKSTATS_NDELAYS) - 1);
	assert_int_equal(d.ns[TASKSTATS_RUNQ], 60097327);
	assert_int_equal(d.ns[TASKSTATS_BLKIO], 109690688);
	assert_int_equal(d.ns[TASKSTATS_SWAPIN], 0);
	assert_int_equal(d.ns[TASKSTATS_RECLAIM], 0);
	assert_int_equal(d.ns[TASKSTATS_THRASH], 0);
	assert_int_equal(d.ns[TASKSTATS_COMPACT], 0);
	assert_true(d.age_ns > d.ns[TASKSTATS_BLKIO]);
	/* Another task's answer is not this one's. */
	assert_int_equal(taskstats_parse_reply(buf, n, 29146, &d), -EBADMSG);
}

/* Every shorter answer is refused or read in part, never overrun. */
static void test_reply_truncated(void **state)
{
	unsigned char buf[TASKSTATS_BUF];
	size_t n = load("reply.bin", buf, sizeof(buf));

	(void)state;
	for (size_t len = 0; len < n; len++) {
		unsigned char *copy = malloc(len ? len : 1);
		struct taskstats_delays d;

		memcpy(copy, buf, len);
		/* A cut message: its own length no longer fits. */
		assert_int_not_equal(taskstats_parse_reply(copy, len, 29145, &d), 0);
		free(copy);
	}
}

/* An older kernel's shorter struct: the fields it lacks are absent. */
static void test_reply_old_struct(void **state)
{
	unsigned char buf[TASKSTATS_BUF];
	size_t n = load("reply.bin", buf, sizeof(buf));
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct taskstats_delays d;
	/* nlmsghdr, genlmsghdr, the AGGR_PID nest, the PID attribute, then
	 * the STATS attribute's header: cut the struct to version 1's 328
	 * bytes (up to ac_... before freepages). */
	size_t nest = NLMSG_HDRLEN + 4, stats = nest + 4 + 8;
	uint16_t cut = 4 + 320, old;

	(void)state;
	assert_true(n > stats + 4);
	memcpy(&old, buf + stats, 2);
	memcpy(buf + stats, &cut, 2);
	{
		uint16_t nl;

		memcpy(&nl, buf + nest, 2);
		nl = (uint16_t)(nl - (old - cut));
		memcpy(buf + nest, &nl, 2);
	}
	nlh->nlmsg_len -= (uint32_t)(old - cut);
	assert_int_equal(taskstats_parse_reply(buf, nlh->nlmsg_len, 29145, &d), 0);
	assert_true(d.have & (1u << TASKSTATS_BLKIO));
	assert_false(d.have & (1u << TASKSTATS_RECLAIM));
	assert_false(d.have & (1u << TASKSTATS_THRASH));
	assert_int_equal(d.ns[TASKSTATS_THRASH], 0);
}

static void test_gone(void **state)
{
	unsigned char buf[TASKSTATS_BUF];
	size_t n = load("esrch.bin", buf, sizeof(buf));
	struct taskstats_delays d;

	(void)state;
	assert_int_equal(taskstats_parse_reply(buf, n, 999999, &d), -ESRCH);
}

static unsigned sum(const unsigned *t)
{
	unsigned s = 0;

	for (unsigned k = 0; k < TIMESHARE_NPARTS; k++)
		s += t[k];
	return s;
}

static void test_split(void **state)
{
	/* 2 threads x 1 s: 0.1 s CPU, 0.02 s runq, 1.5 s block I/O of
	 * which 0.3 s thrashing, 0.1 s reclaim. */
	struct timeshare_ns in = { .ns = {
		[TIMESHARE_CPU] = 100000000, [TIMESHARE_RUNQ] = 20000000,
		[TIMESHARE_BLKIO] = 1500000000, [TIMESHARE_THRASH] = 300000000,
		[TIMESHARE_RECLAIM] = 100000000 } };
	unsigned t[TIMESHARE_NPARTS];

	(void)state;
	assert_true(timeshare_split(&in, 2000000000ull, t));
	assert_int_equal(sum(t), 1000);
	assert_int_equal(t[TIMESHARE_THRASH], 150);
	assert_int_equal(t[TIMESHARE_BLKIO], 600);	/* 1.5 s - 0.3 s thrashing */
	assert_int_equal(t[TIMESHARE_RECLAIM], 50);
	assert_int_equal(t[TIMESHARE_CPU], 0);		/* reclaim was its CPU time */
	assert_int_equal(t[TIMESHARE_RUNQ], 10);
	/* Reclaim beyond the CPU time comes out of the wait for a CPU. */
	in.ns[TIMESHARE_RECLAIM] = 110000000;
	assert_true(timeshare_split(&in, 2000000000ull, t));
	assert_int_equal(t[TIMESHARE_RUNQ], 5);
	assert_int_equal(t[TIMESHARE_BLKIO], 600);
	assert_int_equal(sum(t), 1000);
	in.ns[TIMESHARE_RECLAIM] = 100000000;
	assert_int_equal(t[TIMESHARE_OTHER], 190);
	/* An empty window has no shares. */
	assert_false(timeshare_split(&in, 0, t));
}

/* Readings that overrun the window are scaled down, never above 100 %. */
static void test_split_overrun(void **state)
{
	struct timeshare_ns in = { .ns = { [TIMESHARE_CPU] = 700, [TIMESHARE_BLKIO] = 700,
					   [TIMESHARE_RUNQ] = 1 } };
	unsigned t[TIMESHARE_NPARTS];

	(void)state;
	assert_true(timeshare_split(&in, 1000, t));
	assert_int_equal(sum(t), 1000);
	assert_true(t[TIMESHARE_CPU] + t[TIMESHARE_BLKIO] + t[TIMESHARE_RUNQ] <= 1000);
	assert_true(t[TIMESHARE_CPU] >= 499 && t[TIMESHARE_CPU] <= 500);
	/* Reclaim beyond all CPU and waits still fits. */
	memset(&in, 0, sizeof(in));
	in.ns[TIMESHARE_RECLAIM] = 5000;
	assert_true(timeshare_split(&in, 1000, t));
	assert_int_equal(t[TIMESHARE_RECLAIM], 1000);
	assert_int_equal(t[TIMESHARE_OTHER], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_reply_truncated),
		cmocka_unit_test(test_reply_old_struct),
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_overrun),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
