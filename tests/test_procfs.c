/*
 * test_procfs.c - /proc parsers and sources against recorded fixtures.
 *
 * Every expected number below was read off the fixture files (this-host:
 * recorded on the development VM) or computed by
 * tests/fixtures/make-synthetic.py --sums (the reconstructed hosts).
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
#include <sys/resource.h>
#include <unistd.h>

#include "telemetry/procfs.h"

#ifndef FIXTURES
#error "build with -DFIXTURES=\"<abs path to tests/fixtures>\""
#endif

#define THIS_HOST FIXTURES "/this-host/proc"
#define X86_256 FIXTURES "/x86-256cpu/proc"
#define NUMA2 FIXTURES "/numa-2node/proc"
#define ARM64 FIXTURES "/arm64/proc"

/* Read a whole fixture file through a source, as the sampler does. */
static struct procfs_src open_read(const char *root, const char *rel)
{
	struct procfs_src src;

	assert_int_equal(procfs_src_open(&src, root, rel), 0);
	assert_true(procfs_src_read(&src) > 0);
	return src;
}

static int tlb_of(const char *s, uint64_t *total, unsigned *ncpu)
{
	return procfs_parse_tlb(s, strlen(s), total, ncpu);
}

/* ---- TLB shootdowns ---- */

static void test_tlb_this_host(void **state)
{
	struct procfs_src src = open_read(THIS_HOST, "interrupts");
	uint64_t total = 0;
	unsigned ncpu = 0;

	(void)state;
	/* "TLB:      17629      14113   TLB shootdowns" */
	assert_int_equal(procfs_parse_tlb(src.buf, src.len, &total, &ncpu), 0);
	assert_int_equal(ncpu, 2);
	assert_int_equal(total, 17629 + 14113);
	procfs_src_close(&src);
}

static void test_tlb_256cpu(void **state)
{
	struct procfs_src src = open_read(X86_256, "interrupts");
	uint64_t total = 0;
	unsigned ncpu = 0;

	(void)state;
	/* Sum of 15000000 + (j * 104729) % 20000000 for j < 256: more than
	 * 2^32, so a 32-bit accumulator would be caught. */
	assert_int_equal(procfs_parse_tlb(src.buf, src.len, &total, &ncpu), 0);
	assert_int_equal(ncpu, 256);
	assert_int_equal(total, 5958354560ull);
	assert_true(total > UINT32_MAX);
	procfs_src_close(&src);
}

static void test_tlb_arm64_absent(void **state)
{
	struct procfs_src src = open_read(ARM64, "interrupts");
	uint64_t total = 12345;

	(void)state;
	assert_int_equal(procfs_parse_tlb(src.buf, src.len, &total, NULL), -ENOENT);
	/* Nothing made up. */
	assert_int_equal(total, 12345);
	procfs_src_close(&src);
}

static void test_tlb_any_position(void **state)
{
	/* TLB right after the header, before device lines whose action
	 * names mention TLB, and an offline CPU (no CPU1 column). */
	const char *s =
		"           CPU0       CPU2       CPU3\n"
		"TLB:          5          6          7   TLB shootdowns\n"
		" 30:          1          2          3  IO-APIC  5-edge  TLB: fake\n"
		"NMI:          0          0          0   Non-maskable interrupts\n";
	const char *last =
		"           CPU0       CPU1\n"
		" 30:          1          2  IO-APIC  5-edge  ttyS0\n"
		"NMI:          0          0   Non-maskable interrupts\n"
		"TLB: 4294967295 4294967295";	/* last line, no newline, u32 max */
	uint64_t total;
	unsigned ncpu;

	(void)state;
	assert_int_equal(tlb_of(s, &total, &ncpu), 0);
	assert_int_equal(ncpu, 3);
	assert_int_equal(total, 18);
	assert_int_equal(tlb_of(last, &total, &ncpu), 0);
	assert_int_equal(total, 2ull * 4294967295ull);
}

static void test_tlb_malformed(void **state)
{
	uint64_t total;

	(void)state;
	assert_int_equal(procfs_parse_tlb("", 0, &total, NULL), -EBADMSG);
	/* No CPU header. */
	assert_int_equal(tlb_of("TLB: 1 2 TLB shootdowns\n", &total, NULL), -EBADMSG);
	/* Fewer values than CPU columns. */
	assert_int_equal(tlb_of("  CPU0 CPU1\nTLB: 1   TLB shootdowns\n", &total, NULL),
			 -EBADMSG);
	/* A value that does not fit in 64 bits. */
	assert_int_equal(tlb_of("  CPU0\nTLB: 99999999999999999999\n", &total, NULL), -EBADMSG);
}

/* ---- vmstat ---- */

static void test_vmstat_this_host(void **state)
{
	struct procfs_src src = open_read(THIS_HOST, "vmstat");
	struct procfs_vmstat vm;
	int k;

	(void)state;
	assert_int_equal(procfs_parse_vmstat(src.buf, src.len, &vm), 0);
	for (k = 0; k < PROCFS_VM_NR; k++)
		assert_true(procfs_vm_has(&vm, k));
	/* An idle VM: no reclaim, but the keys exist (zero, not absent). */
	assert_int_equal(vm.v[PROCFS_VM_PGSCAN_KSWAPD], 0);
	assert_int_equal(vm.v[PROCFS_VM_PGSCAN_DIRECT], 0);
	assert_int_equal(vm.v[PROCFS_VM_PGSTEAL_KSWAPD], 0);
	assert_int_equal(vm.v[PROCFS_VM_PGSTEAL_DIRECT], 0);
	assert_int_equal(vm.v[PROCFS_VM_PGMAJFAULT], 1189);
	assert_int_equal(vm.v[PROCFS_VM_PGFAULT], 39928018);
	assert_int_equal(vm.v[PROCFS_VM_PGPGIN], 2251141);
	assert_int_equal(vm.v[PROCFS_VM_WORKINGSET_REFAULT_FILE], 112855);
	procfs_src_close(&src);
}

static void test_vmstat_under_reclaim(void **state)
{
	struct procfs_src src = open_read(NUMA2, "vmstat");
	struct procfs_vmstat vm;

	(void)state;
	/* pgscan_khugepaged, _proactive, _direct_throttle, _anon and _file
	 * sit next to these keys and must not be added in. */
	assert_int_equal(procfs_parse_vmstat(src.buf, src.len, &vm), 0);
	assert_int_equal(vm.v[PROCFS_VM_PGSCAN_KSWAPD], 2913847211ull);
	assert_int_equal(vm.v[PROCFS_VM_PGSCAN_DIRECT], 18234411);
	assert_int_equal(vm.v[PROCFS_VM_PGSTEAL_KSWAPD], 2876512093ull);
	assert_int_equal(vm.v[PROCFS_VM_PGSTEAL_DIRECT], 17902211);
	assert_int_equal(vm.v[PROCFS_VM_PGMAJFAULT], 48123456);
	assert_int_equal(vm.v[PROCFS_VM_PGFAULT], 51234567890ull);
	procfs_src_close(&src);
}

static void test_vmstat_missing_key_is_absent(void **state)
{
	const char *s = "pgfault 100\npgmajfault 7\npgscan_kswapd 40\n"
			"pgscan_direct_throttle 9\npgsteal_kswapd 30\n";
	struct procfs_vmstat vm;

	(void)state;
	assert_int_equal(procfs_parse_vmstat(s, strlen(s), &vm), 0);
	assert_true(procfs_vm_has(&vm, PROCFS_VM_PGSCAN_KSWAPD));
	assert_int_equal(vm.v[PROCFS_VM_PGSCAN_KSWAPD], 40);
	/* pgscan_direct_throttle is another counter, not pgscan_direct. */
	assert_false(procfs_vm_has(&vm, PROCFS_VM_PGSCAN_DIRECT));
	assert_false(procfs_vm_has(&vm, PROCFS_VM_PGSTEAL_DIRECT));
	assert_false(procfs_vm_has(&vm, PROCFS_VM_PGPGIN));
	assert_string_equal(procfs_vm_name(PROCFS_VM_PGSCAN_DIRECT), "pgscan_direct");
}

static void test_vmstat_legacy_per_zone(void **state)
{
	/* Kernels before 4.8 split reclaim counters by zone. */
	const char *s = "pgsteal_kswapd_dma 1\npgsteal_kswapd_dma32 20\npgsteal_kswapd_normal 300\n"
			"pgsteal_kswapd_movable 0\npgscan_kswapd_dma 2\npgscan_kswapd_dma32 40\n"
			"pgscan_kswapd_normal 600\npgscan_kswapd_movable 0\n"
			"pgscan_direct_dma 0\npgscan_direct_normal 77\npgscan_direct_throttle 5\n";
	struct procfs_vmstat vm;

	(void)state;
	assert_int_equal(procfs_parse_vmstat(s, strlen(s), &vm), 0);
	assert_int_equal(vm.v[PROCFS_VM_PGSTEAL_KSWAPD], 321);
	assert_int_equal(vm.v[PROCFS_VM_PGSCAN_KSWAPD], 642);
	assert_int_equal(vm.v[PROCFS_VM_PGSCAN_DIRECT], 77);
	assert_false(procfs_vm_has(&vm, PROCFS_VM_PGSTEAL_DIRECT));
}

/* ---- meminfo ---- */

static void test_meminfo_this_host(void **state)
{
	struct procfs_src src = open_read(THIS_HOST, "meminfo");
	struct procfs_meminfo mi;
	int k;

	(void)state;
	assert_int_equal(procfs_parse_meminfo(src.buf, src.len, &mi), 0);
	for (k = 0; k < PROCFS_MEM_NR; k++)
		assert_true(procfs_mem_has(&mi, k));
	assert_int_equal(mi.bytes[PROCFS_MEM_TOTAL], 24684084ull * 1024);
	assert_int_equal(mi.bytes[PROCFS_MEM_FREE], 23612756ull * 1024);
	assert_int_equal(mi.bytes[PROCFS_MEM_AVAILABLE], 24089512ull * 1024);
	assert_int_equal(mi.bytes[PROCFS_MEM_BUFFERS], 5956ull * 1024);
	assert_int_equal(mi.bytes[PROCFS_MEM_CACHED], 634904ull * 1024);
	assert_int_equal(mi.bytes[PROCFS_MEM_DIRTY], 1156ull * 1024);
	assert_int_equal(mi.bytes[PROCFS_MEM_WRITEBACK], 0);
	procfs_src_close(&src);
}

static void test_meminfo_absent_and_cached_not_swapcached(void **state)
{
	/* A 3.10 kernel: no MemAvailable. SwapCached must not be read as
	 * Cached. */
	const char *s = "MemTotal:        8000000 kB\nMemFree:          100000 kB\n"
			"Buffers:            2000 kB\nSwapCached:        12345 kB\n"
			"Cached:           500000 kB\nDirty:                 8 kB\n";
	struct procfs_meminfo mi;

	(void)state;
	assert_int_equal(procfs_parse_meminfo(s, strlen(s), &mi), 0);
	assert_false(procfs_mem_has(&mi, PROCFS_MEM_AVAILABLE));
	assert_false(procfs_mem_has(&mi, PROCFS_MEM_WRITEBACK));
	assert_int_equal(mi.bytes[PROCFS_MEM_CACHED], 500000ull * 1024);
	assert_int_equal(mi.bytes[PROCFS_MEM_DIRTY], 8 * 1024);
}

/* Taken while the page cache was writing back: Writeback, not its
 * WritebackTmp neighbour, nor Dirty. */
static void test_meminfo_writeback(void **state)
{
	struct procfs_src src = open_read(FIXTURES "/writeback/proc", "meminfo");
	struct procfs_meminfo mi;
	const char *s = "Dirty:              12 kB\nWritebackTmp:      99 kB\nWriteback:          7 kB\n";

	(void)state;
	assert_int_equal(procfs_parse_meminfo(src.buf, src.len, &mi), 0);
	assert_true(procfs_mem_has(&mi, PROCFS_MEM_WRITEBACK));
	assert_int_equal(mi.bytes[PROCFS_MEM_WRITEBACK], 4096ull * 1024);
	assert_int_equal(mi.bytes[PROCFS_MEM_DIRTY], 1904ull * 1024);
	procfs_src_close(&src);

	assert_int_equal(procfs_parse_meminfo(s, strlen(s), &mi), 0);
	assert_int_equal(mi.bytes[PROCFS_MEM_WRITEBACK], 7 * 1024);
	assert_int_equal(mi.bytes[PROCFS_MEM_DIRTY], 12 * 1024);
}

/* ---- /proc/stat ---- */

static void test_stat_this_host(void **state)
{
	struct procfs_src src = open_read(THIS_HOST, "stat");
	struct procfs_cpu c;

	(void)state;
	/* "cpu  21704 0 18984 95699 2696 0 262 122 0 0" */
	assert_int_equal(procfs_parse_stat(src.buf, src.len, &c), 0);
	assert_int_equal(c.user, 21704);
	assert_int_equal(c.nice, 0);
	assert_int_equal(c.system, 18984);
	assert_int_equal(c.idle, 95699);
	assert_int_equal(c.iowait, 2696);
	assert_int_equal(c.irq, 0);
	assert_int_equal(c.softirq, 262);
	assert_int_equal(c.steal, 122);
	assert_int_equal(c.ncpu, 2);
	procfs_src_close(&src);
}

static void test_stat_256cpu(void **state)
{
	struct procfs_src src = open_read(X86_256, "stat");
	struct procfs_cpu c;

	(void)state;
	assert_int_equal(procfs_parse_stat(src.buf, src.len, &c), 0);
	assert_int_equal(c.ncpu, 256);
	assert_int_equal(c.user, 90939280);
	assert_int_equal(c.nice, 8800);
	assert_int_equal(c.system, 35877440);
	assert_int_equal(c.idle, 1368706720);
	assert_int_equal(c.iowait, 2813840);
	assert_int_equal(c.softirq, 647880);
	procfs_src_close(&src);
}

/* ---- task stat ---- */

static void test_task_stat_hostile_comm(void **state)
{
	struct procfs_src src;
	struct procfs_task t;

	(void)state;
	/* Recorded: a bash that named itself "db) worker (1". */
	assert_int_equal(procfs_task_open(&src, THIS_HOST, 0, 27383), 0);
	assert_int_equal(procfs_task_read(&src, &t), 0);
	assert_int_equal(t.minflt, 216);
	assert_int_equal(t.majflt, 0);
	assert_int_equal(t.utime, 0);
	assert_int_equal(t.stime, 0);
	assert_int_equal(t.flags, 4194304);
	procfs_src_close(&src);
}

/* The sampler's sources: buffers made first, files attached later into
 * them (nothing allocated then), a file longer than the buffer still
 * read whole, and a missing file an error that leaves the buffer. */
static void test_task_attach_prealloc(void **state)
{
	struct procfs_src src;
	struct procfs_task t;
	char *buf;

	(void)state;
	assert_int_equal(procfs_src_prealloc(&src, 1024), 0);
	assert_int_equal(src.fd, -1);
	buf = src.buf;
	assert_int_equal(procfs_task_attach(&src, THIS_HOST, 0, 27383, "stat"), 0);
	assert_ptr_equal(src.buf, buf);
	assert_int_equal(procfs_task_read(&src, &t), 0);
	assert_ptr_equal(src.buf, buf);
	assert_int_equal(t.minflt, 216);
	assert_int_equal(procfs_task_attach(&src, THIS_HOST, 0, 1, "stat"), -ENOENT);
	assert_int_equal(src.fd, -1);
	assert_ptr_equal(src.buf, buf);
	procfs_src_close(&src);
	assert_null(src.buf);

	/* Too small a buffer grows as procfs_src_open's does. */
	assert_int_equal(procfs_src_prealloc(&src, 8), 0);
	assert_int_equal(procfs_task_attach(&src, THIS_HOST, 0, 27383, "stat"), 0);
	assert_int_equal(procfs_task_read(&src, &t), 0);
	assert_int_equal(t.minflt, 216);
	procfs_src_close(&src);
}

static void test_task_stat_fields(void **state)
{
	/* Fields 10, 12, 14, 15 distinct, comm with ") 9 9 9 9" inside,
	 * negative tty/tpgid. */
	const char *s = "4321 (x) 9 9 9 9 9 (y)) S -1 2 3 -4 -1 64 1000 1 22 2 333 44 5 6 20 0 1\n";
	struct procfs_task t;

	(void)state;
	assert_int_equal(procfs_parse_task_stat(s, strlen(s), &t), 0);
	assert_int_equal(t.flags, 64);
	assert_int_equal(t.minflt, 1000);
	assert_int_equal(t.majflt, 22);
	assert_int_equal(t.utime, 333);
	assert_int_equal(t.stime, 44);
}

static void test_task_stat_live_thread(void **state)
{
	struct procfs_src src;
	struct procfs_task t;

	(void)state;
	/* A python thread that touched 8 MiB: 2054 minor faults. */
	assert_int_equal(procfs_task_open(&src, THIS_HOST, 0, 27482), 0);
	assert_int_equal(procfs_task_read(&src, &t), 0);
	assert_int_equal(t.minflt, 2054);
	assert_int_equal(t.majflt, 0);
	procfs_src_close(&src);
}

static void test_task_stat_malformed(void **state)
{
	const char *noparen = "12 foo S 1 2 3 4 5 6 7 8 9 10 11 12\n";
	const char *cut = "12 (foo) S 1 2 3 4 5 6 7 8\n";
	struct procfs_task t;

	(void)state;
	assert_int_equal(procfs_parse_task_stat(noparen, strlen(noparen), &t), -EBADMSG);
	assert_int_equal(procfs_parse_task_stat(cut, strlen(cut), &t), -EBADMSG);
	assert_int_equal(procfs_parse_task_stat("", 0, &t), -EBADMSG);
}

/* ---- kswapd ---- */

static void test_kswapd_one_node(void **state)
{
	pid_t pids[4];
	char names[4][PROCFS_COMM_MAX];
	struct procfs_kswapd k;
	uint64_t ticks = 99;

	(void)state;
	assert_int_equal(procfs_kswapd_find(THIS_HOST, pids, names, 4), 1);
	assert_int_equal(pids[0], 45);
	assert_string_equal(names[0], "kswapd0");
	assert_int_equal(procfs_kswapd_open(&k, THIS_HOST), 0);
	assert_int_equal(procfs_kswapd_read(&k, &ticks), 0);
	/* Idle VM: kswapd never ran (recorded 0 utime, 0 stime). */
	assert_int_equal(ticks, 0);
	procfs_kswapd_close(&k);
}

static void test_kswapd_two_nodes(void **state)
{
	pid_t pids[4];
	char names[4][PROCFS_COMM_MAX];
	struct procfs_kswapd k;
	uint64_t ticks;

	(void)state;
	/* kswapd-watch (pid 4242) is a user process: not counted. */
	assert_int_equal(procfs_kswapd_find(NUMA2, pids, names, 4), 2);
	assert_int_equal(pids[0], 187);
	assert_string_equal(names[0], "kswapd0");
	assert_int_equal(pids[1], 188);
	assert_string_equal(names[1], "kswapd1");

	assert_int_equal(procfs_kswapd_open(&k, NUMA2), 0);
	assert_int_equal(k.n, 2);
	assert_int_equal(procfs_kswapd_read(&k, &ticks), 0);
	/* kswapd0 12 + 184523, kswapd1 9 + 171140 */
	assert_int_equal(k.t[0].ticks, 184535);
	assert_int_equal(k.t[1].ticks, 171149);
	assert_int_equal(ticks, 355684);
	procfs_kswapd_close(&k);
}

static void test_kswapd_find_truncates_to_max(void **state)
{
	pid_t pids[1] = { 0 };

	(void)state;
	/* The count is the number found, even when only @max are filled. */
	assert_int_equal(procfs_kswapd_find(NUMA2, pids, NULL, 1), 2);
	assert_int_equal(pids[0], 187);
}

static void test_kswapd_none(void **state)
{
	struct procfs_kswapd k;

	(void)state;
	/* The arm64 fixture has no PID directories (as in a PID namespace). */
	assert_int_equal(procfs_kswapd_find(ARM64, NULL, NULL, 0), 0);
	assert_int_equal(procfs_kswapd_open(&k, ARM64), -ENOENT);
	assert_int_equal(procfs_kswapd_open(&k, FIXTURES "/no-such-host"), -ENOENT);
}

/* ---- sources ---- */

static void test_src_grows_for_large_file(void **state)
{
	struct procfs_src src;
	ssize_t n;

	(void)state;
	/* 128804 bytes, lines of 2889 bytes: the 4 KiB first buffer must
	 * grow, and a second read at offset 0 must give the same text. */
	assert_int_equal(procfs_src_open(&src, X86_256, "interrupts"), 0);
	assert_int_equal(src.cap, 4096);
	n = procfs_src_read(&src);
	assert_int_equal(n, 128804);
	assert_int_equal(src.len, 128804);
	assert_true(src.cap > 128804);
	assert_int_equal(src.buf[src.len], '\0');
	assert_string_equal(src.buf + src.len - 6, "event\n");
	assert_int_equal(procfs_src_read(&src), 128804);
	procfs_src_close(&src);
	procfs_src_close(&src);	/* idempotent */
}

static void test_src_reads_past_seq_file_short_reads(void **state)
{
	struct procfs_src maps, smaps;
	unsigned vmas = 0, rss = 0;
	const char *p;

	(void)state;
	/* A seq_file hands out about a page per read(); smaps of any process
	 * is several pages. Every VMA in maps must have its Rss: in smaps. */
	if (procfs_src_open(&smaps, "/proc", "self/smaps"))
		skip();
	assert_int_equal(procfs_src_open(&maps, "/proc", "self/maps"), 0);
	assert_true(procfs_src_read(&smaps) > 0);
	assert_true(procfs_src_read(&maps) > 0);
	assert_true(smaps.len > 4096);
	for (p = maps.buf; (p = strchr(p, '\n')); p++)
		vmas++;
	for (p = smaps.buf; (p = strstr(p, "\nRss:")); p++)
		rss++;
	assert_int_equal(rss, vmas);
	procfs_src_close(&maps);
	procfs_src_close(&smaps);
}

/* One record in one read where it fits; read on where it fills the
 * buffer; the same text as reading to the end, live and recorded. */
static void test_src_read_record(void **state)
{
	struct procfs_src a, b;
	ssize_t n;

	(void)state;
	assert_int_equal(procfs_src_open(&a, "/proc", "thread-self/stat"), 0);
	assert_int_equal(procfs_src_open(&b, "/proc", "thread-self/stat"), 0);
	n = procfs_src_read_record(&a);
	assert_true(n > 0 && procfs_src_read(&b) > 0);
	/* Times move between the reads: the pid and name do not. */
	assert_memory_equal(a.buf, b.buf, (size_t)(strchr(b.buf, ')') - b.buf));
	assert_int_equal(a.buf[a.len - 1], '\n');
	procfs_src_close(&a);
	procfs_src_close(&b);
	/* 8 bytes: the record fills them and is read on to its end. */
	assert_int_equal(procfs_src_prealloc(&a, 8), 0);
	assert_int_equal(procfs_task_attach(&a, THIS_HOST, 0, 27383, "stat"), 0);
	assert_int_equal(procfs_src_open(&b, THIS_HOST, "self/task/27383/stat"), 0);
	n = procfs_src_read(&b);
	assert_true(n > 8);
	assert_int_equal(procfs_src_read_record(&a), n);
	assert_string_equal(a.buf, b.buf);
	procfs_src_close(&a);
	procfs_src_close(&b);
}

static void test_src_missing_file(void **state)
{
	struct procfs_src src;

	(void)state;
	assert_int_equal(procfs_src_open(&src, ARM64, "vmstat"), -ENOENT);
	assert_int_equal(src.fd, -1);
	assert_int_equal(procfs_src_read(&src), -EBADF);
	procfs_src_close(&src);
}

static void test_root_from_environment(void **state)
{
	(void)state;
	unsetenv("FAULTLINE_PROC");
	assert_string_equal(procfs_root(), "/proc");
	setenv("FAULTLINE_PROC", THIS_HOST, 1);
	assert_string_equal(procfs_root(), THIS_HOST);
	unsetenv("FAULTLINE_PROC");
	assert_true(procfs_clk_tck() > 0);
}

/* ---- probe ---- */

static void test_probe_this_host(void **state)
{
	struct procfs_probe *p = calloc(1, sizeof(*p));

	(void)state;
	assert_non_null(p);
	assert_int_equal(procfs_probe(THIS_HOST, 100, 27383, p), 0);
	assert_int_equal(p->tlb.err, 0);
	assert_string_equal(p->tlb.why, "");
	assert_int_equal(p->tlb_total, 31742);
	assert_int_equal(p->ncpu, 2);
	assert_int_equal(p->kswapd.err, 0);
	assert_int_equal(p->nkswapd, 1);
	assert_int_equal(p->kswapd_t[0].pid, 45);
	assert_string_equal(p->kswapd_t[0].name, "kswapd0");
	assert_true(p->kswapd_t[0].cpu_s == 0.0);
	assert_int_equal(p->vmstat.err, 0);
	assert_int_equal(p->vm.v[PROCFS_VM_PGMAJFAULT], 1189);
	assert_int_equal(p->meminfo.err, 0);
	assert_int_equal(p->stat.err, 0);
	assert_int_equal(p->cpu.ncpu, 2);
	assert_int_equal(p->task.err, 0);
	assert_int_equal(p->self.minflt, 216);
	free(p);
}

static void test_probe_numa_kswapd_seconds(void **state)
{
	struct procfs_probe *p = calloc(1, sizeof(*p));

	(void)state;
	assert_non_null(p);
	assert_int_equal(procfs_probe(NUMA2, 100, 1, p), 0);
	assert_int_equal(p->nkswapd, 2);
	assert_string_equal(p->kswapd_t[1].name, "kswapd1");
	assert_true(p->kswapd_t[0].cpu_s > 1845.34 && p->kswapd_t[0].cpu_s < 1845.36);
	assert_true(p->kswapd_t[1].cpu_s > 1711.48 && p->kswapd_t[1].cpu_s < 1711.50);
	/* This fixture has no interrupts file: the reason names it. */
	assert_int_equal(p->tlb.err, -ENOENT);
	assert_non_null(strstr(p->tlb.why, "interrupts"));
	free(p);
}

static void test_probe_arm64_says_why(void **state)
{
	struct procfs_probe *p = calloc(1, sizeof(*p));

	(void)state;
	assert_non_null(p);
	assert_int_equal(procfs_probe(ARM64, 100, 1, p), 0);
	assert_int_equal(p->tlb.err, -ENOENT);
	assert_string_equal(p->tlb.why, PROCFS_TLB_ABSENT_WHY);
	assert_int_equal(p->kswapd.err, -ENOENT);
	assert_non_null(strstr(p->kswapd.why, "kswapd"));
	assert_int_equal(p->vmstat.err, -ENOENT);
	assert_non_null(strstr(p->vmstat.why, "/arm64/proc/vmstat"));
	assert_int_equal(p->task.err, -ENOENT);
	free(p);
}

static void test_schedstat(void **state)
{
	struct procfs_src src;
	uint64_t ns = 0;

	(void)state;
	/* Recorded: "597013237 1090015698 1936" (a bash thread). */
	assert_int_equal(procfs_src_open(&src, THIS_HOST, "self/task/27383/schedstat"), 0);
	assert_true(procfs_src_read(&src) > 0);
	assert_int_equal(procfs_parse_schedstat(src.buf, src.len, &ns), 0);
	assert_int_equal(ns, 597013237ull);
	procfs_src_close(&src);
	assert_int_equal(procfs_parse_schedstat("12", 2, &ns), -EBADMSG);
	assert_int_equal(procfs_parse_schedstat("", 0, &ns), -EBADMSG);
	assert_int_equal(procfs_parse_schedstat("x 1 2", 5, &ns), -EBADMSG);
}

/* The descriptor table's size, from /proc/self/status (FDSize). */
static long fd_table_size(void)
{
	char line[256];
	long n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "FDSize: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Room made for n more descriptors: the table holds them now, so no
 * later open (a task file's, in a sample) has to grow it. */
static void test_fd_room(void **state)
{
	struct rlimit rl;
	long before = fd_table_size(), want = 3000;

	(void)state;
	assert_true(before > 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)want + 16 > rl.rlim_cur)
		want = (long)rl.rlim_cur - 16;
	assert_int_equal(procfs_fd_room((unsigned)want), 0);
	assert_true(fd_table_size() >= want);
	assert_true(fd_table_size() >= before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tlb_this_host),
		cmocka_unit_test(test_tlb_256cpu),
		cmocka_unit_test(test_tlb_arm64_absent),
		cmocka_unit_test(test_tlb_any_position),
		cmocka_unit_test(test_tlb_malformed),
		cmocka_unit_test(test_vmstat_this_host),
		cmocka_unit_test(test_vmstat_under_reclaim),
		cmocka_unit_test(test_vmstat_missing_key_is_absent),
		cmocka_unit_test(test_vmstat_legacy_per_zone),
		cmocka_unit_test(test_meminfo_this_host),
		cmocka_unit_test(test_meminfo_absent_and_cached_not_swapcached),
		cmocka_unit_test(test_meminfo_writeback),
		cmocka_unit_test(test_stat_this_host),
		cmocka_unit_test(test_stat_256cpu),
		cmocka_unit_test(test_task_stat_hostile_comm),
		cmocka_unit_test(test_task_attach_prealloc),
		cmocka_unit_test(test_task_stat_fields),
		cmocka_unit_test(test_task_stat_live_thread),
		cmocka_unit_test(test_task_stat_malformed),
		cmocka_unit_test(test_kswapd_one_node),
		cmocka_unit_test(test_kswapd_two_nodes),
		cmocka_unit_test(test_kswapd_find_truncates_to_max),
		cmocka_unit_test(test_kswapd_none),
		cmocka_unit_test(test_src_grows_for_large_file),
		cmocka_unit_test(test_src_reads_past_seq_file_short_reads),
		cmocka_unit_test(test_src_read_record),
		cmocka_unit_test(test_src_missing_file),
		cmocka_unit_test(test_root_from_environment),
		cmocka_unit_test(test_probe_this_host),
		cmocka_unit_test(test_probe_numa_kswapd_seconds),
		cmocka_unit_test(test_probe_arm64_says_why),
		cmocka_unit_test(test_schedstat),
		cmocka_unit_test(test_fd_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
