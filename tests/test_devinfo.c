/*
 * test_devinfo.c - device chains and block statistics against recorded
 * sysfs trees.
 *
 * this-host was recorded on the development VM; md-raid0 and
 * partitioned are reconstructed by tests/fixtures/make-synthetic.py,
 * whose --sums prints the sizes asserted here.
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "telemetry/devinfo.h"

#ifndef FIXTURES
#error "build with -DFIXTURES=\"<abs path to tests/fixtures>\""
#endif

#define THIS_HOST FIXTURES "/this-host/sys"
#define MD_RAID0 FIXTURES "/md-raid0/sys"
#define PARTED FIXTURES "/partitioned/sys"

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static struct devinfo_blkstat read_stat(const struct devinfo *d)
{
	struct procfs_src src;
	struct devinfo_blkstat st;

	assert_int_equal(devinfo_stat_open(&src, d), 0);
	assert_int_equal(devinfo_stat_read(&src, &st), 0);
	procfs_src_close(&src);
	return st;
}

/* ---- chains ---- */

static void test_virtio_disk(void **state)
{
	struct devinfo d;
	struct devinfo_blkstat st;

	(void)state;
	assert_int_equal(devinfo_resolve(THIS_HOST, makedev(254, 0), &d, NULL), 0);
	assert_int_equal(d.kind, DEVINFO_DISK);
	assert_string_equal(d.name, "vda");
	assert_string_equal(d.disk, "vda");
	assert_int_equal(d.major, 254);
	assert_int_equal(d.minor, 0);
	/* virtio-blk has no model attribute, only the PCI vendor. */
	assert_string_equal(d.model, "");
	assert_string_equal(d.vendor, "0x1af4");
	assert_string_equal(d.scheduler, "mq-deadline");
	assert_int_equal(d.rotational, 1);
	assert_int_equal(d.logical_block_size, 512);
	assert_int_equal(d.size_bytes, 536870912ull * 512);
	assert_int_equal(d.disk_size_bytes, 536870912ull * 512);
	assert_true(ends_with(d.stat_path, "/virtio1/block/vda/stat"));
	assert_int_equal(d.nmembers, 0);

	st = read_stat(&d);
	assert_int_equal(st.nfields, 17);
	assert_int_equal(st.read_ios, 187682);
	assert_int_equal(st.read_merges, 9197);
	assert_int_equal(st.read_sectors, 4651982);
	assert_int_equal(st.read_ticks, 42639);
	assert_int_equal(devinfo_read_bytes(&st), 4651982ull * 512);
	devinfo_free(&d);
}

static void test_partition_to_disk(void **state)
{
	struct devinfo d;
	struct devinfo_blkstat st;

	(void)state;
	/* A file on sda2 has st_dev 8:2. */
	assert_int_equal(devinfo_resolve(PARTED, makedev(8, 2), &d, NULL), 0);
	assert_int_equal(d.kind, DEVINFO_PARTITION);
	assert_string_equal(d.name, "sda2");
	assert_string_equal(d.disk, "sda");
	/* The disk's properties, trimmed of SCSI's blank padding. */
	assert_string_equal(d.model, "ST4000NM0035-1V4");
	assert_string_equal(d.vendor, "ATA");
	assert_string_equal(d.scheduler, "mq-deadline");
	assert_int_equal(d.rotational, 1);
	assert_int_equal(d.logical_block_size, 512);
	assert_int_equal(d.size_bytes, 4000248233984ull);
	assert_int_equal(d.disk_size_bytes, 4000787030016ull);
	/* The partition's own counters, not the disk's. */
	assert_true(ends_with(d.stat_path, "/block/sda/sda2/stat"));
	st = read_stat(&d);
	assert_int_equal(st.read_ios, 3518223);
	assert_int_equal(st.read_sectors, 903211844);
	assert_int_equal(st.in_flight, 2);
	devinfo_free(&d);
}

static void test_whole_disk_counts_its_partitions(void **state)
{
	struct devinfo d;
	struct devinfo_blkstat st;

	(void)state;
	assert_int_equal(devinfo_resolve(PARTED, makedev(8, 0), &d, NULL), 0);
	assert_int_equal(d.kind, DEVINFO_DISK);
	assert_string_equal(d.name, "sda");
	st = read_stat(&d);
	/* sda1 412 + sda2 3518223 + 9 partition-table reads */
	assert_int_equal(st.read_ios, 3518644);
	assert_int_equal(st.read_sectors, 9321 + 903211844 + 72);
	devinfo_free(&d);
}

static void test_md_raid0_members(void **state)
{
	static const uint64_t member_reads[4] = { 2296505, 2297116, 2296847, 2296889 };
	struct devinfo d;
	struct devinfo_blkstat st;
	uint64_t sum = 0;
	char want[16];
	unsigned i;

	(void)state;
	assert_int_equal(devinfo_resolve(MD_RAID0, makedev(9, 0), &d, NULL), 0);
	assert_int_equal(d.kind, DEVINFO_MD);
	assert_string_equal(d.name, "md0");
	assert_string_equal(d.md_level, "raid0");
	assert_int_equal(d.md_chunk_bytes, 512 * 1024);
	assert_int_equal(d.md_raid_disks, 4);
	assert_string_equal(d.md_array_state, "clean");
	/* 4 x ((7501476528 - 262144) rounded down to 1024) sectors */
	assert_int_equal(d.size_bytes, 15362485649408ull);
	/* md is bio-based: no elevator to choose. */
	assert_string_equal(d.scheduler, "none");
	assert_int_equal(d.rotational, 0);
	st = read_stat(&d);
	assert_int_equal(st.read_ios, 9187341);
	assert_int_equal(st.read_sectors, 9187341ull * 8);

	assert_int_equal(d.nmembers, 4);
	for (i = 0; i < 4; i++) {
		const struct devinfo *m = &d.members[i];

		snprintf(want, sizeof(want), "nvme%un1", i);
		assert_string_equal(m->name, want);
		assert_int_equal(m->kind, DEVINFO_DISK);
		assert_int_equal(m->major, 259);
		assert_int_equal(m->minor, i);
		assert_int_equal(m->md_slot, (int)i);
		assert_string_equal(m->model, "SAMSUNG MZQL23T8HCLS-00A07");
		assert_string_equal(m->scheduler, "none");
		assert_int_equal(m->rotational, 0);
		assert_int_equal(m->size_bytes, 3840755982336ull);
		st = read_stat(m);
		assert_int_equal(st.read_ios, member_reads[i]);
		sum += st.read_ios;
	}
	/* The members served md0's reads plus 4 superblock reads each. */
	assert_int_equal(sum, 9187341 + 16);
	devinfo_free(&d);
	assert_null(d.members);
}

static void test_md_partition_carries_array(void **state)
{
	struct devinfo d;
	struct devinfo_blkstat st;

	(void)state;
	/* A file on md0p1: sample md0p1, describe md0's geometry. */
	assert_int_equal(devinfo_resolve(MD_RAID0, makedev(259, 4), &d, NULL), 0);
	assert_int_equal(d.kind, DEVINFO_PARTITION);
	assert_string_equal(d.name, "md0p1");
	assert_string_equal(d.disk, "md0");
	assert_string_equal(d.md_level, "raid0");
	assert_int_equal(d.md_chunk_bytes, 524288);
	assert_int_equal(d.md_raid_disks, 4);
	assert_int_equal(d.nmembers, 4);
	assert_string_equal(d.members[3].name, "nvme3n1");
	assert_int_equal(d.members[3].md_slot, 3);
	assert_int_equal(d.size_bytes, 15362483552256ull);
	assert_int_equal(d.disk_size_bytes, 15362485649408ull);
	assert_true(ends_with(d.stat_path, "/md0/md0p1/stat"));
	st = read_stat(&d);
	/* md0's 9187341 reads less its 6 partition-table reads */
	assert_int_equal(st.read_ios, 9187335);
	devinfo_free(&d);
}

static void test_md_member_alone(void **state)
{
	struct devinfo d;

	(void)state;
	/* A member resolved by itself is a plain disk, not in a slot. */
	assert_int_equal(devinfo_resolve(MD_RAID0, makedev(259, 2), &d, NULL), 0);
	assert_int_equal(d.kind, DEVINFO_DISK);
	assert_string_equal(d.name, "nvme2n1");
	assert_int_equal(d.md_slot, -1);
	devinfo_free(&d);
}

static void test_loop_backing_file_recorded(void **state)
{
	struct devinfo d;
	struct devinfo_blkstat st;

	(void)state;
	/* The image was deleted after recording: the name is kept, the
	 * backing device is not made up. */
	assert_int_equal(devinfo_resolve(THIS_HOST, makedev(7, 0), &d, NULL), 0);
	assert_int_equal(d.kind, DEVINFO_LOOP);
	assert_string_equal(d.name, "loop0");
	assert_string_equal(d.backing_file, "/work/faultline-fixture-loop.img");
	if (access(d.backing_file, F_OK) != 0) {
		assert_null(d.backing);
		assert_non_null(strstr(d.backing_why, "cannot stat backing file"));
	}
	assert_int_equal(d.size_bytes, 32768 * 512);
	assert_string_equal(d.scheduler, "none");
	st = read_stat(&d);
	assert_int_equal(st.read_ios, 40);
	assert_int_equal(st.read_sectors, 34816);
	devinfo_free(&d);
}

/* Write @text to <dir>/<rel>, creating directories. */
static void put(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX], *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (s = path + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_loop_backing_file_resolves(void **state)
{
	char tmpl[] = "/var/tmp/faultline-devinfo-XXXXXX", sys[256], img[256];
	char rel[PATH_MAX], dev[64];
	struct devinfo d;
	struct stat st;

	(void)state;
	/* A sysfs tree made here, whose loop0 is backed by a real file:
	 * the file's st_dev must lead to the tree's disk for that dev. */
	if (!mkdtemp(tmpl))
		skip();
	snprintf(img, sizeof(img), "%s/backing.img", tmpl);
	put(tmpl, "backing.img", "data");
	assert_int_equal(stat(img, &st), 0);
	if (major(st.st_dev) == 0) {
		rm_rf(tmpl);
		skip();	/* /var/tmp on tmpfs or overlay: no block device */
	}
	snprintf(sys, sizeof(sys), "%s/sys", tmpl);
	put(sys, "devices/virtual/block/loop0/loop/backing_file", img);
	put(sys, "devices/virtual/block/loop0/dev", "7:0\n");
	put(sys, "devices/virtual/block/loop0/size", "0\n");
	snprintf(dev, sizeof(dev), "%u:%u\n", major(st.st_dev), minor(st.st_dev));
	put(sys, "devices/platform/disk/block/fakedisk/dev", dev);
	put(sys, "devices/platform/disk/block/fakedisk/size", "2048\n");
	put(sys, "dev/block/.keep", "");
	snprintf(rel, sizeof(rel), "%s/dev/block/7:0", sys);
	assert_int_equal(symlink("../../devices/virtual/block/loop0", rel), 0);
	snprintf(rel, sizeof(rel), "%s/dev/block/%u:%u", sys, major(st.st_dev), minor(st.st_dev));
	assert_int_equal(symlink("../../devices/platform/disk/block/fakedisk", rel), 0);

	assert_int_equal(devinfo_resolve(sys, makedev(7, 0), &d, NULL), 0);
	assert_int_equal(d.kind, DEVINFO_LOOP);
	assert_string_equal(d.backing_file, img);
	assert_non_null(d.backing);
	assert_string_equal(d.backing->name, "fakedisk");
	assert_int_equal(d.backing->size_bytes, 2048 * 512);
	devinfo_free(&d);
	assert_null(d.backing);
	rm_rf(tmpl);
}

static void test_dm_members(void **state)
{
	char tmpl[] = "/tmp/faultline-dm-XXXXXX", sys[256], rel[512];
	static const char *const disks[] = { "vdb", "vdc" };
	struct devinfo d;
	unsigned i;

	(void)state;
	/* An LVM volume striped over two disks, made here in the layout of
	 * drivers/md/dm-sysfs.c (dm/name) and block/holder.c (slaves/). */
	if (!mkdtemp(tmpl))
		skip();
	snprintf(sys, sizeof(sys), "%s/sys", tmpl);
	put(sys, "devices/virtual/block/dm-0/dev", "253:0\n");
	put(sys, "devices/virtual/block/dm-0/dm/name", "vg0-data\n");
	put(sys, "devices/virtual/block/dm-0/queue/scheduler", "none\n");
	put(sys, "dev/block/.keep", "");
	put(sys, "devices/virtual/block/dm-0/slaves/.keep", "");
	snprintf(rel, sizeof(rel), "%s/dev/block/253:0", sys);
	assert_int_equal(symlink("../../devices/virtual/block/dm-0", rel), 0);
	for (i = 0; i < 2; i++) {
		char dir[96], dev[16], tgt[128];

		snprintf(dir, sizeof(dir), "devices/pci0000:00/virtio%u/block/%s", i + 5, disks[i]);
		snprintf(dev, sizeof(dev), "252:%u\n", 16 * (i + 1));
		snprintf(rel, sizeof(rel), "%s/dev", dir);
		put(sys, rel, dev);
		snprintf(rel, sizeof(rel), "%s/dev/block/252:%u", sys, 16 * (i + 1));
		snprintf(tgt, sizeof(tgt), "../../%s", dir);
		assert_int_equal(symlink(tgt, rel), 0);
		snprintf(rel, sizeof(rel), "%s/devices/virtual/block/dm-0/slaves/%s", sys, disks[i]);
		snprintf(tgt, sizeof(tgt), "../../../../%s", dir + strlen("devices/"));
		assert_int_equal(symlink(tgt, rel), 0);
	}

	assert_int_equal(devinfo_resolve(sys, makedev(253, 0), &d, NULL), 0);
	assert_int_equal(d.kind, DEVINFO_DM);
	assert_string_equal(d.dm_name, "vg0-data");
	assert_string_equal(d.md_level, "");
	assert_int_equal(d.nmembers, 2);
	assert_string_equal(d.members[0].name, "vdb");
	assert_string_equal(d.members[1].name, "vdc");
	assert_int_equal(d.members[1].minor, 32);
	assert_int_equal(d.members[0].md_slot, -1);
	devinfo_free(&d);
	rm_rf(tmpl);
}

static void test_anonymous_dev_is_enodev(void **state)
{
	struct err e = { 0 };
	struct devinfo d;

	(void)state;
	/* tmpfs, overlayfs, btrfs subvolumes: st_dev 0:N. */
	assert_int_equal(devinfo_resolve(THIS_HOST, makedev(0, 45), &d, &e), -ENODEV);
	assert_int_equal(e.code, ENODEV);
	assert_non_null(strstr(e.msg, "0:45"));
	assert_non_null(strstr(e.msg, "not a block device"));
}

static void test_unknown_dev_says_where_it_looked(void **state)
{
	struct err e = { 0 };
	struct devinfo d;

	(void)state;
	assert_int_equal(devinfo_resolve(PARTED, makedev(8, 16), &d, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "/dev/block/8:16"));
}

static void test_resolve_path_uses_rdev_of_block_device(void **state)
{
	char tmpl[] = "/tmp/faultline-devnode-XXXXXX", node[PATH_MAX];
	struct devinfo d;

	(void)state;
	if (!mkdtemp(tmpl))
		skip();
	snprintf(node, sizeof(node), "%s/vda", tmpl);
	if (mknod(node, S_IFBLK | 0600, makedev(254, 0))) {
		rmdir(tmpl);
		skip();	/* not root, or nodev */
	}
	/* st_rdev (254:0) names the device, not the directory's st_dev. */
	assert_int_equal(devinfo_resolve_path(THIS_HOST, node, &d, NULL), 0);
	assert_string_equal(d.name, "vda");
	devinfo_free(&d);
	unlink(node);
	rmdir(tmpl);
}

static void test_resolve_path_missing(void **state)
{
	struct err e = { 0 };
	struct devinfo d;

	(void)state;
	assert_int_equal(devinfo_resolve_path(THIS_HOST, "/no/such/target", &d, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "/no/such/target"));
}

/* ---- block statistics ---- */

static void test_block_stat_versions(void **state)
{
	/* 4.17 (11 fields), 5.4 (15: discard), 6.x (17: flush) */
	const char *s11 = "     100        2      800       50        7        0       56        9        0       60       59\n";
	const char *s15 = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n";
	const char *s17 = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n";
	struct devinfo_blkstat st;

	(void)state;
	assert_int_equal(devinfo_parse_block_stat(s11, strlen(s11), &st), 0);
	assert_int_equal(st.nfields, 11);
	assert_int_equal(st.read_ios, 100);
	assert_int_equal(st.read_merges, 2);
	assert_int_equal(st.read_sectors, 800);
	assert_int_equal(st.read_ticks, 50);
	assert_int_equal(st.write_ios, 7);
	assert_int_equal(st.time_in_queue, 59);
	assert_int_equal(st.discard_ios, 0);
	assert_int_equal(devinfo_parse_block_stat(s15, strlen(s15), &st), 0);
	assert_int_equal(st.nfields, 15);
	assert_int_equal(st.discard_ticks, 15);
	assert_int_equal(st.flush_ios, 0);
	assert_int_equal(devinfo_parse_block_stat(s17, strlen(s17), &st), 0);
	assert_int_equal(st.nfields, 17);
	assert_int_equal(st.flush_ticks, 17);
}

static void test_block_stat_bytes_are_512_sectors(void **state)
{
	/* One 4 KiB read on a 4Kn disk: the kernel still counts 8 sectors. */
	const char *s = "1 0 8 1 0 0 0 0 0 1 1\n";
	struct devinfo_blkstat st;

	(void)state;
	assert_int_equal(devinfo_parse_block_stat(s, strlen(s), &st), 0);
	assert_int_equal(devinfo_read_bytes(&st), 4096);
}

/* Recorded while a write job ran: the write counters, as bytes too. */
static void test_block_stat_writes(void **state)
{
	char buf[512];
	struct devinfo_blkstat st;
	ssize_t n;
	int fd = open(FIXTURES "/writeback/sys/block/vda/stat", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > 0);
	assert_int_equal(devinfo_parse_block_stat(buf, (size_t)n, &st), 0);
	assert_int_equal(st.nfields, 17);
	assert_int_equal(st.write_ios, 383731);
	assert_int_equal(st.write_sectors, 57251112);
	assert_int_equal(devinfo_write_bytes(&st), 57251112ull * 512);
	assert_int_equal(st.read_ios, 19310361);
}

static void test_block_stat_malformed(void **state)
{
	const char *short_ = "1 2 3 4 5 6 7 8 9 10\n";
	const char *junk = "abc\n";
	struct devinfo_blkstat st;

	(void)state;
	assert_int_equal(devinfo_parse_block_stat(short_, strlen(short_), &st), -EBADMSG);
	assert_int_equal(devinfo_parse_block_stat(junk, strlen(junk), &st), -EBADMSG);
	assert_int_equal(devinfo_parse_block_stat("", 0, &st), -EBADMSG);
}

static void test_diskstats_matches_sysfs(void **state)
{
	static const char *const names[] = { "nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1" };
	struct procfs_src ds;
	struct devinfo d;
	struct devinfo_blkstat a, b;
	unsigned i;

	(void)state;
	assert_int_equal(procfs_src_open(&ds, FIXTURES "/md-raid0/proc", "diskstats"), 0);
	assert_true(procfs_src_read(&ds) > 0);
	assert_int_equal(devinfo_resolve(MD_RAID0, makedev(9, 0), &d, NULL), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(devinfo_parse_diskstats(ds.buf, ds.len, names[i], &a), 0);
		b = read_stat(&d.members[i]);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	assert_int_equal(devinfo_parse_diskstats(ds.buf, ds.len, "md0", &a), 0);
	assert_int_equal(a.read_ios, 9187341);
	/* "nvme0n1" must not match a prefix such as "nvme0". */
	assert_int_equal(devinfo_parse_diskstats(ds.buf, ds.len, "nvme0", &a), -ENOENT);
	devinfo_free(&d);
	procfs_src_close(&ds);
}

static void test_diskstats_this_host(void **state)
{
	struct procfs_src ds;
	struct devinfo_blkstat a;

	(void)state;
	assert_int_equal(procfs_src_open(&ds, FIXTURES "/this-host/proc", "diskstats"), 0);
	assert_true(procfs_src_read(&ds) > 0);
	assert_int_equal(devinfo_parse_diskstats(ds.buf, ds.len, "vda", &a), 0);
	assert_int_equal(a.read_ios, 187682);
	assert_int_equal(a.read_sectors, 4651982);
	assert_int_equal(a.nfields, 17);
	assert_int_equal(devinfo_parse_diskstats(ds.buf, ds.len, "loop0", &a), 0);
	assert_int_equal(a.read_ios, 40);
	procfs_src_close(&ds);
}

static void test_sysroot_from_environment(void **state)
{
	(void)state;
	unsetenv("FAULTLINE_SYS");
	assert_string_equal(devinfo_sysroot(), "/sys");
	setenv("FAULTLINE_SYS", MD_RAID0, 1);
	assert_string_equal(devinfo_sysroot(), MD_RAID0);
	unsetenv("FAULTLINE_SYS");
	assert_string_equal(devinfo_kind_name(DEVINFO_MD), "md");
	assert_string_equal(devinfo_kind_name(DEVINFO_PARTITION), "partition");
}

/* Device traffic summed over a job's devices counts nothing twice. */
static void test_counted_partition_and_its_disk(void **state)
{
	struct devinfo sda, sda2, sda1, sda2b;
	const struct devinfo *set[4];
	bool count[4];

	(void)state;
	assert_int_equal(devinfo_resolve(PARTED, makedev(8, 0), &sda, NULL), 0);
	assert_int_equal(devinfo_resolve(PARTED, makedev(8, 2), &sda2, NULL), 0);
	assert_int_equal(devinfo_resolve(PARTED, makedev(8, 1), &sda1, NULL), 0);
	assert_int_equal(devinfo_resolve(PARTED, makedev(8, 2), &sda2b, NULL), 0);
	/* Two partitions alone: both counted (their stats are disjoint). */
	set[0] = &sda2;
	set[1] = &sda1;
	assert_int_equal(devinfo_counted(set, 2, count), 2);
	assert_true(count[0] && count[1]);
	/* With their disk: only the disk, which includes both. */
	set[2] = &sda;
	assert_int_equal(devinfo_counted(set, 3, count), 1);
	assert_false(count[0]);
	assert_false(count[1]);
	assert_true(count[2]);
	/* The same partition twice (two files on it): once. */
	set[0] = &sda2;
	set[1] = &sda2b;
	assert_int_equal(devinfo_counted(set, 2, count), 1);
	assert_true(count[0]);
	assert_false(count[1]);
	devinfo_free(&sda);
	devinfo_free(&sda1);
	devinfo_free(&sda2);
	devinfo_free(&sda2b);
}

static void test_counted_md_array_and_members(void **state)
{
	struct devinfo md0, md0p1, nvme1, nvme2;
	const struct devinfo *set[3];
	bool count[3];

	(void)state;
	assert_int_equal(devinfo_resolve(MD_RAID0, makedev(9, 0), &md0, NULL), 0);
	assert_int_equal(devinfo_resolve(MD_RAID0, makedev(259, 4), &md0p1, NULL), 0);
	assert_int_equal(devinfo_resolve(MD_RAID0, makedev(259, 1), &nvme1, NULL), 0);
	assert_int_equal(devinfo_resolve(MD_RAID0, makedev(259, 2), &nvme2, NULL), 0);
	/* Members read directly, no array in the set: each counted. */
	set[0] = &nvme1;
	set[1] = &nvme2;
	assert_int_equal(devinfo_counted(set, 2, count), 2);
	/* A member next to its array: the array counts its reads; the
	 * member is not added on top (it stays a device of its own). */
	set[0] = &md0;
	set[1] = &nvme1;
	assert_int_equal(devinfo_counted(set, 2, count), 1);
	assert_true(count[0]);
	assert_false(count[1]);
	/* The same through the array's partition md0p1 (it carries the
	 * members); and md0p1 with md0: the array, once. */
	set[0] = &nvme2;
	set[1] = &md0p1;
	set[2] = &md0;
	assert_int_equal(devinfo_counted(set, 3, count), 1);
	assert_false(count[0]);
	assert_false(count[1]);
	assert_true(count[2]);
	/* The array is never folded into its members either: md0 alone is
	 * one counted device, and its members are listed apart. */
	assert_int_equal(devinfo_counted(&set[2], 1, count), 1);
	assert_true(md0.nmembers == 4);
	devinfo_free(&md0);
	devinfo_free(&md0p1);
	devinfo_free(&nvme1);
	devinfo_free(&nvme2);
}

/* read_ahead_kb: a partition's is its disk's, a filesystem without a
 * block device has its bdi's, and none is -ENOENT (a tree made here,
 * not a recorded one: only the lookup's order is under test). */
static void put_file(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_read_ahead_kb(void **state)
{
	(void)state;
	char root[] = "/tmp/faultline-test-ra.XXXXXX", cmd[600], name[32];

	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir -p devices/x/block/sda/sda1 devices/x/block/sda/queue "
		 "dev/block class/bdi/0:42 && ln -s ../../devices/x/block/sda dev/block/8:0 && "
		 "ln -s ../../devices/x/block/sda/sda1 dev/block/8:1", root);
	assert_int_equal(system(cmd), 0);
	put_file(root, "devices/x/block/sda/queue/read_ahead_kb", "4096\n");
	put_file(root, "class/bdi/0:42/read_ahead_kb", "128\n");
	assert_int_equal(devinfo_read_ahead_kb(root, makedev(8, 0), name, sizeof(name)), 4096);
	assert_string_equal(name, "sda");
	name[0] = '\0';
	assert_int_equal(devinfo_read_ahead_kb(root, makedev(8, 1), name, sizeof(name)), 4096);
	assert_string_equal(name, "sda");
	assert_int_equal(devinfo_read_ahead_kb(root, makedev(0, 42), name, sizeof(name)), 128);
	assert_string_equal(name, "0:42");
	assert_int_equal(devinfo_read_ahead_kb(root, makedev(9, 9), name, sizeof(name)), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_virtio_disk),
		cmocka_unit_test(test_read_ahead_kb),
		cmocka_unit_test(test_partition_to_disk),
		cmocka_unit_test(test_whole_disk_counts_its_partitions),
		cmocka_unit_test(test_md_raid0_members),
		cmocka_unit_test(test_md_partition_carries_array),
		cmocka_unit_test(test_md_member_alone),
		cmocka_unit_test(test_loop_backing_file_recorded),
		cmocka_unit_test(test_loop_backing_file_resolves),
		cmocka_unit_test(test_dm_members),
		cmocka_unit_test(test_anonymous_dev_is_enodev),
		cmocka_unit_test(test_unknown_dev_says_where_it_looked),
		cmocka_unit_test(test_resolve_path_uses_rdev_of_block_device),
		cmocka_unit_test(test_resolve_path_missing),
		cmocka_unit_test(test_block_stat_versions),
		cmocka_unit_test(test_block_stat_bytes_are_512_sectors),
		cmocka_unit_test(test_block_stat_writes),
		cmocka_unit_test(test_block_stat_malformed),
		cmocka_unit_test(test_diskstats_matches_sysfs),
		cmocka_unit_test(test_counted_partition_and_its_disk),
		cmocka_unit_test(test_counted_md_array_and_members),
		cmocka_unit_test(test_diskstats_this_host),
		cmocka_unit_test(test_sysroot_from_environment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
