/*
 * test_cgroup.c - the stale-cgroup reaper and the job cgroup's name, on
 * a made-up /proc and /sys tree (FAULTLINE_PROC, FAULTLINE_SYS): which
 * faultline-* cgroups are removed, which are left, and that nothing
 * else is touched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "telemetry/cgroup.h"
#include "telemetry/procfs.h"

static char root[256];
static char grp[512];
static unsigned said;

/* A /proc/PID/stat line with @start as field 22; comm has a space and a
 * ')' to prove the parser looks for the last one. */
static void put_stat(const char *pid, unsigned long long start)
{
	char dir[600], path[700];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/proc/%s", root, pid);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/stat", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s (fault line) x) S 1 1 1 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 3 0 %llu "
		"12345 678 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		pid, start);
	fclose(f);
}

static void mk(const char *name)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", grp, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

static bool exists(const char *name)
{
	char path[700];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", grp, name);
	return stat(path, &st) == 0;
}

static void say(void *arg, const char *msg)
{
	(void)arg;
	said++;
	assert_non_null(strstr(msg, "removed the stale cgroup"));
}

static int setup(void **state)
{
	char path[600];
	FILE *f;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/test_cgroup.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/self", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/self/cgroup", root);
	f = fopen(path, "w");
	fprintf(f, "12:pids:/x\n5:memory:/grp\n0::/x\n");
	fclose(f);
	snprintf(grp, sizeof(grp), "%s/sys/fs/cgroup/memory/grp", root);
	snprintf(path, sizeof(path), "mkdir -p %s", grp);
	if (system(path))
		return -1;
	snprintf(path, sizeof(path), "%s/proc", root);
	setenv("FAULTLINE_PROC", path, 1);
	snprintf(path, sizeof(path), "%s/sys", root);
	setenv("FAULTLINE_SYS", path, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	unsetenv("FAULTLINE_PROC");
	unsetenv("FAULTLINE_SYS");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) ? -1 : 0;
}

static void test_starttime(void **state)
{
	const char *line = "42 (a) b) c) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0\n";
	uint64_t start = 0;

	(void)state;
	assert_int_equal(procfs_parse_starttime(line, strlen(line), &start), 0);
	assert_int_equal(start, 987654);
	assert_int_equal(procfs_parse_starttime("42 (a) R 1 2", 12, &start), -EBADMSG);
	assert_int_equal(procfs_parse_starttime("no paren", 8, &start), -EBADMSG);
}

static void test_job_name(void **state)
{
	char name[64], want[64];

	(void)state;
	put_stat("self", 4242);
	assert_int_equal(cgroup_job_name(name, sizeof(name), 3), 0);
	snprintf(want, sizeof(want), "faultline-%d-4242-3", (int)getpid());
	assert_string_equal(name, want);
}

static void test_reap(void **state)
{
	(void)state;
	put_stat("100", 555);		/* alive, started at 555 */
	put_stat("400", 7);		/* alive */
	mk("faultline-100-555-0");	/* its live owner */
	mk("faultline-100-444-1");	/* pid 100 reused since: stale */
	mk("faultline-200-1-0");	/* pid 200 gone: stale */
	mk("faultline-100-0");		/* old name, pid alive: cannot tell, kept */
	mk("faultline-300-2");		/* old name, pid gone: stale */
	mk("faultline-probe-300");	/* a checksys probe of a dead run */
	mk("faultline-probe-400");	/* of a live one */
	mk("faultline-notanumber");	/* not ours to judge */
	mk("postgres-100-444-1");	/* someone else's */
	said = 0;
	assert_int_equal(cgroup_reap_stale(say, NULL), 4);
	assert_int_equal(said, 4);
	assert_true(exists("faultline-100-555-0"));
	assert_false(exists("faultline-100-444-1"));
	assert_false(exists("faultline-200-1-0"));
	assert_true(exists("faultline-100-0"));
	assert_false(exists("faultline-300-2"));
	assert_false(exists("faultline-probe-300"));
	assert_true(exists("faultline-probe-400"));
	assert_true(exists("faultline-notanumber"));
	assert_true(exists("postgres-100-444-1"));
	/* A second run finds nothing more to do. */
	assert_int_equal(cgroup_reap_stale(say, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starttime),
		cmocka_unit_test(test_job_name),
		cmocka_unit_test(test_reap),
	};

	return cmocka_run_group_tests_name("cgroup", tests, setup, teardown);
}
