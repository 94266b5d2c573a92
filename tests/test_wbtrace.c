/*
 * test_wbtrace.c - who wrote a job's data: decoding recorded tracepoint
 * records with their recorded formats (libtraceevent), and attributing
 * them to jobs by task, device, inode and time.
 *
 * The fixtures (tests/fixtures/wbtrace, see its README) come from the
 * development VM, Linux 6.18.44: a dd that wrote 8 KiB and fdatasync'ed
 * them, and a sync(2) after which the flusher wrote 3 pages of the same
 * file, with the journal's writes between.
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
#include <sys/sysmacros.h>

#include <traceevent/event-parse.h>

#include "telemetry/tracefmt.h"
#include "telemetry/wbtrace.h"

#ifndef FIXTURES
#error "build with -DFIXTURES=\"<abs path to tests/fixtures>\""
#endif

#define DIR FIXTURES "/wbtrace/"
#define LOOP0 (7u << 20)	/* loop0, kernel dev_t */
#define DD 17380		/* the dd that fdatasync'ed */
#define FLUSHER 28425
#define NREC 11

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(65536);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 65535, f);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static struct tep_handle *load_formats(void)
{
	static const char *const files[][2] = {
		{ "block", "block_bio_queue" },
		{ "writeback", "writeback_single_inode" },
		{ "writeback", "writeback_start" },
	};
	struct tep_handle *tep = tep_alloc();

	assert_non_null(tep);
	for (unsigned i = 0; i < 3; i++) {
		char path[512];
		size_t len;
		char *buf;

		snprintf(path, sizeof(path), DIR "%s.format", files[i][1]);
		buf = slurp(path, &len);
		struct tep_event *ev = NULL;

		assert_int_equal(tep_parse_format(tep, &ev, buf, len, files[i][0]), 0);
		free(buf);
	}
	return tep;
}

struct recorded {
	unsigned n;
	struct tep_record rec[NREC];
	unsigned char data[NREC][256];
};

static void load_records(struct recorded *r)
{
	FILE *f = fopen(DIR "records", "r");
	char name[64], hex[600];
	unsigned long long ts;

	assert_non_null(f);
	memset(r, 0, sizeof(*r));
	while (r->n < NREC && fscanf(f, "%63s %llu %599s", name, &ts, hex) == 3) {
		struct tep_record *x = &r->rec[r->n];
		size_t len = strlen(hex) / 2;

		assert_true(len <= sizeof(r->data[0]));
		for (size_t i = 0; i < len; i++)
			assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &r->data[r->n][i]), 1);
		x->ts = ts;
		x->data = r->data[r->n];
		x->size = (int)len;
		r->n++;
	}
	fclose(f);
	assert_int_equal(r->n, NREC);
}

static void decode_all(struct wbtrace_rec *out)
{
	struct tep_handle *tep = load_formats();
	struct wbtrace_fmt f;
	struct recorded r;
	struct err e = { 0 };

	assert_int_equal(wbtrace_fmt_init(&f, tep, &e), 0);
	load_records(&r);
	for (unsigned i = 0; i < NREC; i++)
		assert_int_equal(wbtrace_decode(&f, tep, &r.rec[i], &out[i]), 0);
	tep_free(tep);
}

/* The numbers come from this kernel's format files: the reason values
 * of enum wb_reason, and HZ from the age in single_inode's print. */
static void test_formats(void **state)
{
	struct tep_handle *tep = load_formats();
	struct wbtrace_fmt f;
	struct err e = { 0 };
	long v;

	(void)state;
	assert_int_equal(wbtrace_fmt_init(&f, tep, &e), 0);
	assert_int_equal(f.reason_value[WBTRACE_BACKGROUND], 0);
	assert_int_equal(f.reason_value[WBTRACE_VMSCAN], 1);
	assert_int_equal(f.reason_value[WBTRACE_SYNC], 2);
	assert_int_equal(f.reason_value[WBTRACE_PERIODIC], 3);
	assert_int_equal(f.reason_value[WBTRACE_OTHER], -1);
	assert_int_equal(f.hz, 250);
	assert_int_equal(tracefmt_symbol(f.ev[WBTRACE_START], "reason", "FOREIGN_FLUSH", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(tracefmt_symbol(f.ev[WBTRACE_START], "reason", "no such reason", &v), -ENOENT);
	assert_int_equal(tracefmt_symbol(f.ev[WBTRACE_START], "sync_mode", "background", &v), -ENOENT);
	tep_free(tep);
}

/* A kernel without one of the events: said, by name. */
static void test_formats_missing(void **state)
{
	struct tep_handle *tep = tep_alloc();
	struct wbtrace_fmt f;
	struct err e = { 0 };
	size_t len;
	char *buf = slurp(DIR "block_bio_queue.format", &len);

	(void)state;
	struct tep_event *ev = NULL;

	assert_int_equal(tep_parse_format(tep, &ev, buf, len, "block"), 0);
	assert_int_equal(wbtrace_fmt_init(&f, tep, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "writeback:writeback_single_inode"));
	free(buf);
	tep_free(tep);
}

static void test_decode(void **state)
{
	struct wbtrace_rec x[NREC];

	(void)state;
	decode_all(x);
	/* dd's 8 KiB write, then its fdatasync's flush (no data). */
	assert_int_equal(x[0].kind, WBTRACE_BIO);
	assert_int_equal(x[0].pid, DD);
	assert_string_equal(x[0].comm, "dd");
	assert_int_equal(x[0].dev, LOOP0);
	assert_int_equal(x[0].bytes, 8192);
	assert_int_equal(x[0].ts, 1132568799888ull);
	assert_int_equal(x[1].kind, WBTRACE_BIO);
	assert_int_equal(x[1].bytes, 0);
	/* The flusher, for the sync, writing inode 12 of bdi 7:0. */
	assert_int_equal(x[2].kind, WBTRACE_START);
	assert_int_equal(x[2].pid, FLUSHER);
	assert_int_equal(x[2].reason, WBTRACE_SYNC);
	assert_int_equal(x[3].bytes, 12288);
	assert_string_equal(x[3].comm, "kworker/u8:4");
	assert_int_equal(x[4].kind, WBTRACE_INODE);
	assert_int_equal(x[4].bdi, LOOP0);
	assert_int_equal(x[4].ino, 12);
	assert_int_equal(x[4].pages, 3);
	assert_int_equal(x[4].dirtied_when, 4295175372ull);
	assert_int_equal(x[6].reason, WBTRACE_PERIODIC);
	/* The journal. */
	assert_string_equal(x[7].comm, "jbd2/loop0-8");
	assert_int_equal(x[7].bytes, 4096);
}

/* A record of another event is none of ours. */
static void test_decode_other(void **state)
{
	struct tep_handle *tep = load_formats();
	struct wbtrace_fmt f;
	struct wbtrace_rec out;
	struct recorded r;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(wbtrace_fmt_init(&f, tep, &e), 0);
	load_records(&r);
	r.data[0][0] ^= 0x40;	/* common_type: no such event */
	assert_int_equal(wbtrace_decode(&f, tep, &r.rec[0], &out), -ENOENT);
	r.data[0][0] ^= 0x40;
	r.rec[0].size = 20;	/* cut short */
	assert_int_equal(wbtrace_decode(&f, tep, &r.rec[0], &out), -EBADMSG);
	tep_free(tep);
}

static void job_init(struct wbtrace_job *jb, uint64_t from, uint64_t to)
{
	memset(jb, 0, sizeof(*jb));
	jb->traced = true;
	jb->from_ns = from;
	jb->to_ns = to;
	jb->ndev = 1;
	jb->dev[0] = LOOP0;
	jb->nino = 1;
	jb->ino[0].bdi = LOOP0;
	jb->ino[0].ino = 12;
	assert_true(wbtrace_job_add_task(jb, DD));
}

/* dd's own 8 KiB, the flusher's 12 KiB for the sync, and 16 KiB of
 * others (the journal, sync's own superblock write) on the device. */
static void test_attribution(void **state)
{
	struct wbtrace_rec x[NREC];
	struct wbtrace_job jobs[2];
	struct wbtrace_state s;

	(void)state;
	decode_all(x);
	memset(&s, 0, sizeof(s));
	s.njobs = 2;
	s.jobs = jobs;
	s.page_size = 4096;
	job_init(&jobs[0], 1, 0);
	/* Ended before any of it. */
	job_init(&jobs[1], 1, 1132568799888ull);
	/* The flusher wrote at 1132573635070 ns an inode dirtied at jiffies
	 * 4295175372: say that was one second (250 jiffies) before. */
	s.clock_ok = true;
	s.hz = 250;
	s.t0 = 1132573635070ull;
	s.j0 = 4295175372ull + 250;
	for (unsigned i = 0; i < NREC; i++)
		wbtrace_feed(&s, &x[i]);
	assert_int_equal(jobs[0].c.own_bytes, 8192);
	assert_int_equal(jobs[0].c.kernel_bytes, 12288);
	assert_int_equal(jobs[0].c.reason_bytes[WBTRACE_SYNC], 12288);
	assert_int_equal(jobs[0].c.reason_bytes[WBTRACE_PERIODIC], 0);
	assert_int_equal(jobs[0].c.dev_bytes, 8192 + 12288 + 4 * 4096);
	assert_int_equal(jobs[0].c.aged_bytes, 12288);
	assert_int_equal(jobs[0].c.age_max_ms, 1000);
	assert_true(jobs[0].c.age_ms_bytes / 12288 > 999.9 && jobs[0].c.age_ms_bytes / 12288 < 1000.1);
	assert_int_equal(jobs[1].c.own_bytes + jobs[1].c.kernel_bytes + jobs[1].c.dev_bytes, 0);
}

/* Write-back by one of the job's own tasks is its own, not the kernel's:
 * were dd the flusher, nothing would be the kernel's. And an inode of
 * the same number on another bdi is another file. */
static void test_attribution_own_inode(void **state)
{
	struct wbtrace_rec x[NREC];
	struct wbtrace_job jb;
	struct wbtrace_state s;

	(void)state;
	decode_all(x);
	memset(&s, 0, sizeof(s));
	s.njobs = 1;
	s.jobs = &jb;
	s.page_size = 4096;
	job_init(&jb, 1, 0);
	assert_true(wbtrace_job_add_task(&jb, FLUSHER));
	wbtrace_feed(&s, &x[4]);
	assert_int_equal(jb.c.kernel_bytes, 0);
	job_init(&jb, 1, 0);
	jb.ino[0].bdi = 254u << 20;
	wbtrace_feed(&s, &x[4]);
	assert_int_equal(jb.c.kernel_bytes, 0);
	/* Without a clock, no age, and still the bytes. */
	job_init(&jb, 1, 0);
	wbtrace_feed(&s, &x[4]);
	assert_int_equal(jb.c.kernel_bytes, 12288);
	assert_int_equal(jb.c.reason_bytes[WBTRACE_OTHER], 12288);	/* no start seen */
	assert_int_equal(jb.c.aged_bytes, 0);
}

/* io_uring workers are the job's when named for one of its threads. */
static void test_tasks(void **state)
{
	struct wbtrace_job jb;

	(void)state;
	memset(&jb, 0, sizeof(jb));
	assert_true(wbtrace_job_add_task(&jb, 300));
	assert_true(wbtrace_job_add_task(&jb, 100));
	assert_true(wbtrace_job_add_task(&jb, 200));
	assert_true(wbtrace_job_add_task(&jb, 200));
	assert_int_equal(jb.ntask, 3);
	assert_int_equal(jb.task[0], 100);
	assert_int_equal(jb.task[2], 300);
	assert_true(wbtrace_job_has_task(&jb, 200, NULL));
	assert_false(wbtrace_job_has_task(&jb, 201, "kworker/u8:1"));
	assert_true(wbtrace_job_has_task(&jb, 999, "iou-wrk-300"));
	assert_false(wbtrace_job_has_task(&jb, 999, "iou-wrk-301"));
	assert_false(wbtrace_job_has_task(&jb, 999, "iou-wrk-300x"));
	for (int t = 1000; jb.ntask < WBTRACE_MAX_TASKS; t++)
		assert_true(wbtrace_job_add_task(&jb, t));
	assert_false(wbtrace_job_add_task(&jb, 5));
}

static void test_small_parsers(void **state)
{
	uint64_t now, j;
	size_t len;
	char *buf = slurp(DIR "timer_list", &len);
	struct wbtrace_counts a = { 0 }, b = { 0 };

	(void)state;
	assert_int_equal(wbtrace_parse_timer_list(buf, len, &now, &j), 0);
	assert_int_equal(now, 1152673707175ull);
	assert_int_equal(j, 4295180398ull);
	assert_int_equal(wbtrace_parse_timer_list("now at 5 nsecs\n", 15, &now, &j), -EBADMSG);
	free(buf);
	assert_int_equal(wbtrace_bdi_dev("7:0"), 7u << 20);
	assert_int_equal(wbtrace_bdi_dev("254:16"), 254u << 20 | 16);
	assert_int_equal(wbtrace_bdi_dev("vda"), 0);
	assert_int_equal(wbtrace_bdi_dev("7:0x"), 0);
	assert_int_equal(wbtrace_kdev(makedev(259, 3)), 259u << 20 | 3);
	a.own_bytes = 10;
	a.kernel_bytes = 7;
	a.reason_bytes[WBTRACE_VMSCAN] = 7;
	b.own_bytes = 4;
	b.kernel_bytes = 2;
	b.reason_bytes[WBTRACE_VMSCAN] = 2;
	wbtrace_counts_sub(&a, &b);
	assert_int_equal(a.own_bytes, 6);
	assert_int_equal(a.kernel_bytes, 5);
	assert_int_equal(a.reason_bytes[WBTRACE_VMSCAN], 5);
	assert_string_equal(wbtrace_reason_key(WBTRACE_PERIODIC), "periodic");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_formats_missing),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_other),
		cmocka_unit_test(test_attribution),
		cmocka_unit_test(test_attribution_own_inode),
		cmocka_unit_test(test_tasks),
		cmocka_unit_test(test_small_parsers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
