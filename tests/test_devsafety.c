/*
 * test_devsafety.c - devsafety.c: regular files pass, missing and odd
 * paths are refused with context, mountinfo is read right, and on a real
 * loop device (root only): a filesystem, a partition table and a
 * filesystem on a partition are refused unless allow_destructive=1, a
 * mounted device or partition is refused even then, a wiped device
 * passes, and a user who cannot open the device gets EACCES.
 *
 * The loop device sits on a 64 MiB file of random bytes in a mkdtemp
 * directory under /var/tmp (a disk, as the e2e tests use); the teardown
 * unmounts, detaches and removes whatever the test got to, pass or fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "engines/devsafety.h"

static char dir[256];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/var/tmp/test_devsafety.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Run a shell command built from @fmt; its exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

static bool have(const char *tool)
{
	return sh("command -v %s >/dev/null 2>&1", tool) == 0;
}

/* ---- without a device ---- */

static void test_regular_file(void **state)
{
	struct err e = { 0 };
	char p[300];

	(void)state;
	snprintf(p, sizeof(p), "%s/file", dir);
	assert_int_equal(sh("head -c 1048576 /dev/urandom > '%s'", p), 0);
	assert_int_equal(devsafety_check(p, false, &e), 0);
	assert_int_equal(devsafety_check(p, true, &e), 0);
	unlink(p);
}

static void test_missing_path(void **state)
{
	struct err e = { 0 };
	char p[300];

	(void)state;
	snprintf(p, sizeof(p), "%s/no-such-target", dir);
	assert_int_equal(devsafety_check(p, false, &e), -ENOENT);
	assert_int_equal(e.code, ENOENT);
	assert_non_null(strstr(e.msg, p));
	assert_non_null(strstr(e.msg, "No such file"));
}

static void test_other_types(void **state)
{
	struct err e = { 0 };

	(void)state;
	assert_int_equal(devsafety_check(dir, false, &e), -EISDIR);
	assert_non_null(strstr(e.msg, dir));
	assert_int_equal(devsafety_check("/dev/null", true, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "/dev/null"));
}

static void test_find_mount(void **state)
{
	/* Shaped like a Debian 12 VM's /proc/self/mountinfo, with a space
	 * in a mount point and a btrfs mount (anonymous 0:NN device). */
	static const char mi[] =
		"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
		"27 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
		"95 27 7:3 / /mnt/my\\040disk rw,relatime shared:50 master:2 - ext4 /dev/loop3 rw\n"
		"garbage line\n"
		"96 27 0:52 /@home /home rw,relatime shared:51 - btrfs /dev/sdb2 rw,space_cache=v2\n"
		"97 27 259:0 / /srv rw - xfs /dev/nvme0n1p1 rw";
	struct devsafety_mount m;

	(void)state;
	assert_int_equal(devsafety_find_mount(mi, makedev(7, 3), "loop3", &m), 0);
	assert_string_equal(m.point, "/mnt/my disk");
	assert_string_equal(m.fstype, "ext4");
	assert_string_equal(m.source, "/dev/loop3");
	/* By MAJ:MIN alone. */
	assert_int_equal(devsafety_find_mount(mi, makedev(254, 1), NULL, &m), 0);
	assert_string_equal(m.point, "/");
	/* The last line, without a newline. */
	assert_int_equal(devsafety_find_mount(mi, makedev(259, 0), NULL, &m), 0);
	assert_string_equal(m.point, "/srv");
	/* btrfs: only the source names the device. */
	assert_int_equal(devsafety_find_mount(mi, makedev(8, 18), "sdb2", &m), 0);
	assert_string_equal(m.point, "/home");
	assert_string_equal(m.fstype, "btrfs");
	assert_int_equal(devsafety_find_mount(mi, makedev(8, 18), NULL, &m), -ENOENT);
	assert_int_equal(devsafety_find_mount(mi, makedev(7, 4), "loop4", &m), -ENOENT);
	assert_int_equal(devsafety_find_mount("", makedev(7, 3), "loop3", &m), -ENOENT);
}

/* ---- a loop device ---- */

struct loopdev {
	char img[300];
	char mnt[300];
	char dev[64];
};

static struct loopdev ld;

static int loop_setup(void **state)
{
	FILE *f;
	char cmd[400];

	memset(&ld, 0, sizeof(ld));
	*state = &ld;
	if (geteuid() != 0 || !have("losetup"))
		return 0;
	snprintf(ld.img, sizeof(ld.img), "%s/loop.img", dir);
	snprintf(ld.mnt, sizeof(ld.mnt), "%s/mnt", dir);
	if (mkdir(ld.mnt, 0755) ||
	    sh("head -c %d /dev/urandom > '%s'", 64 << 20, ld.img))
		return -1;
	snprintf(cmd, sizeof(cmd), "losetup -f --show -P '%s' 2>/dev/null", ld.img);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (!fgets(ld.dev, sizeof(ld.dev), f))
		ld.dev[0] = '\0';
	ld.dev[strcspn(ld.dev, "\n")] = '\0';
	pclose(f);
	return 0;
}

static int loop_teardown(void **state)
{
	(void)state;
	if (ld.mnt[0])
		sh("umount -q '%s' 2>/dev/null; rmdir '%s' 2>/dev/null", ld.mnt, ld.mnt);
	if (ld.dev[0] && sh("losetup -d '%s'", ld.dev))
		return -1;
	if (ld.img[0])
		unlink(ld.img);
	return 0;
}

/* A device needs root, losetup and loop devices; say which is missing. */
static void need_loop(const char *tools)
{
	char t[128], *tok, *save;

	if (geteuid() != 0) {
		print_message("skipped: needs root to attach a loop device\n");
		skip();
	}
	if (!ld.dev[0]) {
		print_message("skipped: losetup missing or no loop device\n");
		skip();
	}
	snprintf(t, sizeof(t), "%s", tools);
	for (tok = strtok_r(t, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (!have(tok)) {
			print_message("skipped: needs %s\n", tok);
			skip();
		}
}

static void expect(int want, bool allow, const char *has1, const char *has2)
{
	struct err e = { 0 };
	int r = devsafety_check(ld.dev, allow, &e);

	if (r != want)
		fail_msg("devsafety_check(%s, %d) = %d, wanted %d: %s", ld.dev,
			 allow, r, want, e.msg);
	if (has1 && !strstr(e.msg, has1))
		fail_msg("message lacks '%s': %s", has1, e.msg);
	if (has2 && !strstr(e.msg, has2))
		fail_msg("message lacks '%s': %s", has2, e.msg);
	if (r)
		assert_non_null(strstr(e.msg, ld.dev));
}

static void test_filesystem_then_mounted_then_wiped(void **state)
{
	(void)state;
	need_loop("mkfs.ext4 mount umount wipefs");
	expect(0, false, NULL, NULL);	/* random bytes: nothing to lose */

	assert_int_equal(sh("mkfs.ext4 -q -L fltest '%s'", ld.dev), 0);
	expect(-EEXIST, false, "ext4 filesystem", "allow_destructive=1 overrides");
	expect(-EEXIST, false, "UUID ", "label \"fltest\"");
	expect(0, true, NULL, NULL);

	assert_int_equal(sh("mount '%s' '%s'", ld.dev, ld.mnt), 0);
	expect(-EBUSY, false, "mounted on", ld.mnt);
	expect(-EBUSY, true, "mounted on", "does not override");
	assert_int_equal(sh("umount '%s'", ld.mnt), 0);

	assert_int_equal(sh("wipefs -q -a '%s'", ld.dev), 0);
	expect(0, false, NULL, NULL);
}

static void test_partitions(void **state)
{
	char p1[80];

	(void)state;
	need_loop("sfdisk partx mkfs.ext4 mount umount");
	/* An MBR with two partitions; partx adds them to the kernel (a
	 * loop device may not rescan on sfdisk's BLKRRPART). */
	assert_int_equal(sh("printf 'label: dos\\n,16M,L\\n,,L\\n' | sfdisk -q '%s' "
			    ">/dev/null && partx -u '%s'", ld.dev, ld.dev), 0);
	expect(-EEXIST, false, "dos partition table", NULL);
	expect(0, true, NULL, NULL);

	snprintf(p1, sizeof(p1), "%sp1", ld.dev);
	if (access(p1, F_OK)) {
		print_message("skipped: no %s node after partx\n", p1);
		skip();
	}
	assert_int_equal(sh("mkfs.ext4 -q '%s'", p1), 0);
	expect(-EEXIST, false, "dos partition table", "partition ");
	expect(-EEXIST, false, "p1 carries an ext4 filesystem", NULL);

	/* A mounted partition: the whole disk's O_EXCL open would succeed. */
	assert_int_equal(sh("mount '%s' '%s'", p1, ld.mnt), 0);
	expect(-EBUSY, true, "p1 is mounted on", ld.mnt);
	assert_int_equal(sh("umount '%s'", ld.mnt), 0);

	/* The table's boot signature gone, the kernel's partitions still
	 * there: the filesystem on the partition is still found. */
	assert_int_equal(sh("printf '\\000\\000' | dd of='%s' bs=1 seek=510 "
			    "conv=notrunc status=none", ld.dev), 0);
	expect(-EEXIST, false, "p1 carries an ext4 filesystem", NULL);
	assert_int_equal(sh("wipefs -q -a '%s'", p1), 0);
	/* Nothing on disk, but partitions the kernel knows. */
	expect(-EEXIST, false, "partitions", NULL);
	assert_int_equal(sh("partx -d '%s'", ld.dev), 0);
	expect(0, false, NULL, NULL);
}

static void test_unprivileged(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	need_loop("");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct err e = { 0 };
		int r;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		r = devsafety_check(ld.dev, false, &e);
		_exit(r == -EACCES && strstr(e.msg, ld.dev) ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular_file),
		cmocka_unit_test(test_missing_path),
		cmocka_unit_test(test_other_types),
		cmocka_unit_test(test_find_mount),
		cmocka_unit_test_setup_teardown(test_filesystem_then_mounted_then_wiped,
						loop_setup, loop_teardown),
		cmocka_unit_test_setup_teardown(test_partitions, loop_setup,
						loop_teardown),
		cmocka_unit_test_setup_teardown(test_unprivileged, loop_setup,
						loop_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
