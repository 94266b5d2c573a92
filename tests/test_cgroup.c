/*
 * test_cgroup.c - the stale-cgroup reaper and the job cgroup's name, on
 * a made-up /proc and /sys tree (FAULTLINE_PROC, FAULTLINE_SYS): which
 * faultline-* cgroups are removed, which are left, and that nothing
 * else is touched.
 */
#include <errno.h>
#include <signal.h>
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

/* What a killed member's cgroup held, in the files the kernel keeps:
 * the OOM killer named only when it counted a kill; v1 and v2 names. */
static void put(const char *dir, const char *file, const char *text)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_describe_kill(void **state)
{
	char dir[] = "/tmp/faultline-test-cgkill.XXXXXX", msg[320], cmd[300];
	struct cgroup cg = { .version = 1, .limit = 8ull << 20, .created = true };
	uint64_t v;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cg.path, sizeof(cg.path), "%s", dir);
	put(dir, "memory.max_usage_in_bytes", "8388608\n");
	put(dir, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
	cgroup_describe_kill(&cg, SIGKILL, msg, sizeof(msg));
	assert_string_equal(msg, "killed by the OOM killer of its memory cgroup: its memory cgroup held at most "
			    "8.0 MiB (memory.max_usage_in_bytes) of its 8.0 MiB limit");
	/* No kill counted: the signal, and what the cgroup held. */
	put(dir, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
	cgroup_describe_kill(&cg, SIGKILL, msg, sizeof(msg));
	assert_non_null(strstr(msg, "killed by signal 9"));
	assert_non_null(strstr(msg, "held at most 8.0 MiB"));
	assert_null(strstr(msg, "OOM"));
	/* v2: memory.peak and memory.events. */
	cg.version = 2;
	put(dir, "memory.peak", "4194304\n");
	put(dir, "memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n");
	cgroup_describe_kill(&cg, SIGKILL, msg, sizeof(msg));
	assert_non_null(strstr(msg, "OOM killer"));
	assert_non_null(strstr(msg, "4.0 MiB (memory.peak)"));
	/* Charge beyond file pages: anonymous, shared and kernel memory
	 * from the exact counters, not the usage (charged ahead per CPU). */
	put(dir, "memory.current", "10485760\n");
	put(dir, "memory.stat", "anon 1048576\nfile 9437184\nkernel 524288\nkernel_stack 1\nshmem 1048576\n");
	assert_int_equal(cgroup_charge_nonfile(&cg, &v), 0);
	assert_int_equal(v, (2u << 20) + (512u << 10));
	/* Before Linux 5.18 v2 had no "kernel": its parts. */
	put(dir, "memory.stat", "anon 1048576\nfile 9437184\nkernel_stack 16384\npagetables 4096\nshmem 0\n");
	assert_int_equal(cgroup_charge_nonfile(&cg, &v), 0);
	assert_int_equal(v, (1u << 20) + 20480);
	cg.version = 1;
	put(dir, "memory.usage_in_bytes", "10485760\n");
	put(dir, "memory.kmem.usage_in_bytes", "262144\n");
	put(dir, "memory.stat", "cache 1\nrss 2\ntotal_cache 8388608\ntotal_rss 1048576\ntotal_shmem 4096\n");
	assert_int_equal(cgroup_charge_nonfile(&cg, &v), 0);
	assert_int_equal(v, (1u << 20) + 4096 + 262144);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starttime),
		cmocka_unit_test(test_job_name),
		cmocka_unit_test(test_reap),
		cmocka_unit_test(test_describe_kill),
	};

	return cmocka_run_group_tests_name("cgroup", tests, setup, teardown);
}
