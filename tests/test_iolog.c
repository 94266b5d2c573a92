/*
 * test_iolog.c - fio's iolog: versions 2 and 3 and blktrace parsed into
 * the entries fio would replay; malformed lines refused with the log's
 * name and line; a replay's targets, due times, skips, alignment and
 * scale; the writer's output read back, across many buffer flushes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "workload/iolog.h"

static int parse(struct iolog *l, const char *text, struct err *e)
{
	return iolog_parse(l, text, strlen(text), "t.log", e);
}

static void v3_basic(void **state)
{
	struct iolog l;
	struct err e = { 0 };
	const char *text = "fio version 3 iolog\n"
			   "24 /d/a add\n"
			   "392 /d/a open\n"
			   "398 /d/a read 61440 4096\n"
			   "638 /d/a write 8192 512\n"
			   "700 /d/a sync 0 0\n"
			   "710 /d/a datasync\n"
			   "\n"
			   "942 /d/a trim 4096 4096\r\n"
			   "2045 /d/a close\n";

	(void)state;
	assert_int_equal(parse(&l, text, &e), 0);
	assert_int_equal(l.version, 3);
	assert_int_equal(l.nfiles, 1);
	assert_string_equal(l.files[0], "/d/a");
	assert_int_equal(l.t0, 24);
	/* open, read, write, sync, datasync, trim, close: add is not kept */
	assert_int_equal(l.n, 7);
	assert_int_equal(l.ent[0].op, IOLOG_OPEN);
	assert_int_equal(l.ent[1].op, IOLOG_READ);
	assert_int_equal(l.ent[1].t, 398);
	assert_int_equal(l.ent[1].off, 61440);
	assert_int_equal(l.ent[1].len, 4096);
	assert_int_equal(l.ent[1].line, 4);
	assert_int_equal(l.ent[2].op, IOLOG_WRITE);
	assert_int_equal(l.ent[3].op, IOLOG_SYNC);
	assert_int_equal(l.ent[4].op, IOLOG_DATASYNC);
	assert_int_equal(l.ent[5].op, IOLOG_TRIM);
	assert_int_equal(l.ent[5].line, 9);
	assert_int_equal(l.ent[6].op, IOLOG_CLOSE);
	iolog_free(&l);
}

static void v2_wait_and_files(void **state)
{
	struct iolog l;
	struct err e = { 0 };
	const char *text = "fio version 2 iolog\n"
			   "/d/a add\n"
			   "/d/b add\n"
			   "/d/a read 0 4096\n"
			   "/d/b wait 500 0\n"
			   "/d/b read 8192 8192\n"
			   "/d/c read 1 2\n";	/* never added: added now */

	(void)state;
	assert_int_equal(parse(&l, text, &e), 0);
	assert_int_equal(l.version, 2);
	assert_int_equal(l.nfiles, 3);
	assert_string_equal(l.files[2], "/d/c");
	assert_int_equal(l.n, 4);
	assert_int_equal(l.ent[1].op, IOLOG_WAIT);
	assert_int_equal(l.ent[1].t, 500);
	assert_int_equal(l.ent[2].file, 1);
	assert_int_equal(l.ent[3].file, 2);
	iolog_free(&l);
}

/* Each malformed log fails naming t.log and the line. */
static void malformed(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "fio version 1 iolog\n/d/a read 0 1\n", "t.log:1: not an fio iolog" },
		{ "", "t.log: empty log" },
		{ "fio version 3 iolog trailing\n0 /a read 0 1\n", "t.log:1: text after" },
		{ "fio version 3 iolog\n0 /a add\n1 /a reed 0 4096\n", "t.log:3: unknown action" },
		{ "fio version 3 iolog\n0 /a add\n1 /a read 0\n", "t.log:3: expected 'TIME FILE ACTION'" },
		{ "fio version 3 iolog\n0 /a read 0 4096 9\n", "t.log:2: expected" },
		{ "fio version 3 iolog\nx /a read 0 4096\n", "t.log:2: the timestamp" },
		{ "fio version 3 iolog\n0 /a read -1 4096\n", "t.log:2: offset is not" },
		{ "fio version 3 iolog\n0 /a read 0 4294967296\n", "t.log:2: length is not" },
		{ "fio version 3 iolog\n0 /a read 0 0\n", "t.log:2: a request of length 0" },
		{ "fio version 3 iolog\n0 /a read 18446744073709551615 2\n", "t.log:2: offset + length" },
		{ "fio version 3 iolog\n0 /a wait 10 0\n", "t.log:2: 'wait' is not allowed" },
		{ "fio version 3 iolog\n0 /a read\n", "t.log:2: this action needs" },
		{ "fio version 3 iolog\n0 /a add 0 1\n", "t.log:2: a file action takes no" },
		{ "fio version 2 iolog\n/a read 0 1\n\n/a read x 1\n", "t.log:4: offset is not" },
		{ "fio version 2 iolog\n/a add\n", "t.log: no request in the log" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iolog l;
		struct err e = { 0 };

		assert_int_equal(iolog_parse(&l, cases[i].text, strlen(cases[i].text), "t.log", &e), -EINVAL);
		if (!strstr(e.msg, cases[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, cases[i].want);
		assert_null(l.ent);
	}
}

/* A NUL byte inside a line is refused, not read as its end. */
static void nul_byte(void **state)
{
	const char text[] = "fio version 3 iolog\n0 /a re\0d 0 1\n";
	struct iolog l;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(iolog_parse(&l, text, sizeof(text) - 1, "t.log", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "t.log:2:"));
}

/* ---- blktrace ---------------------------------------------------------- */

struct bt {
	uint32_t magic, sequence;
	uint64_t time, sector;
	uint32_t bytes, action, pid, device, cpu;
	uint16_t error, pdu_len;
};

#define QUEUE(cat) (1u | ((cat) << 16))

static size_t bt_put(uint8_t *p, uint64_t t, uint64_t sector, uint32_t bytes, uint32_t action, uint16_t pdu)
{
	struct bt ev = { .magic = 0x65617407, .time = t, .sector = sector, .bytes = bytes,
			 .action = action, .device = (8u << 20) | 16, .pdu_len = pdu };

	memcpy(p, &ev, sizeof(ev));
	memset(p + sizeof(ev), 0xab, pdu);
	return sizeof(ev) + pdu;
}

static void blktrace(void **state)
{
	uint8_t buf[1024];
	size_t n = 0;
	struct iolog l;
	struct err e = { 0 };

	(void)state;
	n += bt_put(buf + n, 5000000, 8, 4096, QUEUE((1u << 4) | 1), 0);	/* queue read */
	n += bt_put(buf + n, 5000500, 8, 4096, 8u | (((1u << 7) | 1) << 16), 0);	/* complete: not replayed */
	n += bt_put(buf + n, 6000000, 0, 0, QUEUE(1u << 10), 12);	/* notify with a payload */
	n += bt_put(buf + n, 7000000, 16, 8192, QUEUE((1u << 4) | 2), 0);	/* write */
	n += bt_put(buf + n, 8000000, 32, 4096, QUEUE(1u << 13), 0);	/* discard */
	n += bt_put(buf + n, 9000000, 0, 0, QUEUE(1u << 2), 0);	/* flush */
	n += bt_put(buf + n, 9500000, 64, 0, QUEUE(1), 0);	/* zero bytes: dropped */
	assert_int_equal(iolog_parse(&l, (const char *)buf, n, "t.bin", &e), 0);
	assert_int_equal(l.version, IOLOG_BLKTRACE);
	assert_int_equal(l.nfiles, 1);
	assert_string_equal(l.files[0], "/dev/block/8:16");
	assert_int_equal(l.n, 4);
	assert_int_equal(l.ent[0].op, IOLOG_READ);
	assert_int_equal(l.ent[0].off, 4096);
	assert_int_equal(l.ent[0].t, 5000);
	assert_int_equal(l.ent[1].op, IOLOG_WRITE);
	assert_int_equal(l.ent[1].len, 8192);
	assert_int_equal(l.ent[2].op, IOLOG_TRIM);
	assert_int_equal(l.ent[3].op, IOLOG_SYNC);
	assert_int_equal(l.t0, 5000);
	iolog_free(&l);

	/* Cut short, and a payload past the end. */
	assert_int_equal(iolog_parse(&l, (const char *)buf, n - 10, "t.bin", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "t.bin: blktrace event 7: cut short"));
	n = bt_put(buf, 1, 1, 512, QUEUE(1), 200);
	assert_int_equal(iolog_parse(&l, (const char *)buf, 60, "t.bin", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "payload"));
}

/* A trace taken on a machine of the other byte order. */
static void blktrace_swapped(void **state)
{
	struct bt ev = { .magic = __builtin_bswap32(0x65617407), .time = __builtin_bswap64(2000),
			 .sector = __builtin_bswap64(3), .bytes = __builtin_bswap32(512),
			 .action = __builtin_bswap32(QUEUE(1)), .device = __builtin_bswap32(1u << 20) };
	struct iolog l;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(iolog_parse(&l, (const char *)&ev, sizeof(ev), "t.bin", &e), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.ent[0].off, 1536);
	assert_int_equal(l.ent[0].len, 512);
	assert_string_equal(l.files[0], "/dev/block/1:0");
	iolog_free(&l);
}

/* ---- replay -------------------------------------------------------------- */

static const char *const name1[] = { "t.log" };

static void replay_timing(void **state)
{
	const char *text = "fio version 3 iolog\n"
			   "100 /a add\n"
			   "100 /a open\n"
			   "100 /a read 0 4096\n"
			   "1100 /a read 4096 4096\n"
			   "600 /a read 8192 100\n"	/* out of order: before the previous */
			   "2100 /a write 0 4096\n"
			   "2200 /a close\n";
	struct replay_opts o = { .time_scale = 100 };
	struct replay_set s;
	struct iolog l;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(parse(&l, text, &e), 0);
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.nr, 1);
	assert_int_equal(s.npaths, 1);
	assert_int_equal(s.r[0].n, 3);			/* the write left out */
	assert_int_equal(s.r[0].left_out[IOLOG_WRITE], 1);
	assert_true(s.r[0].timed);
	assert_int_equal(s.r[0].req[0].due_ns, 0);
	assert_int_equal(s.r[0].req[1].due_ns, 1000000);	/* 1000 us after the first line */
	assert_int_equal(s.r[0].req[2].due_ns, 500000);
	assert_int_equal(s.end[0], 8292);
	assert_int_equal(s.max_len, 4096);
	assert_int_equal(s.requests, 3);
	replay_set_free(&s);

	/* Twice as fast; and no stall at all. */
	o.time_scale = 200;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.r[0].req[1].due_ns, 500000);
	replay_set_free(&s);
	o.time_scale = 50;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.r[0].req[1].due_ns, 2000000);
	replay_set_free(&s);
	o.no_stall = true;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_false(s.r[0].timed);
	assert_int_equal(s.r[0].req[1].due_ns, 0);
	replay_set_free(&s);
	/* A job that writes keeps the write. */
	o.writes = true;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.r[0].n, 4);
	assert_int_equal(s.r[0].req[3].op, IOLOG_WRITE);
	replay_set_free(&s);
	iolog_free(&l);
}

/* A version 2 wait: what follows is due that many ms after the start. */
static void replay_v2_wait(void **state)
{
	const char *text = "fio version 2 iolog\n/a read 0 1\n/a wait 500 0\n/a read 1 1\n";
	struct replay_opts o = { .time_scale = 100 };
	struct replay_set s;
	struct iolog l;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(parse(&l, text, &e), 0);
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.r[0].n, 2);
	assert_int_equal(s.r[0].req[0].due_ns, 0);
	assert_int_equal(s.r[0].req[1].due_ns, 500000000ull);
	replay_set_free(&s);
	o.no_stall = true;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.r[0].req[1].due_ns, 0);
	replay_set_free(&s);
	iolog_free(&l);
}

static void replay_redirect_skip_align(void **state)
{
	const char *text = "fio version 3 iolog\n"
			   "0 /a read 5000 4096\n"
			   "1 /b read 100000 512\n"
			   "2 /b read 9000 100\n"
			   "3 /a trim 0 4096\n"
			   "4 /a sync 0 0\n";
	struct replay_opts o = { .time_scale = 100 };
	struct replay_set s;
	struct iolog l;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(parse(&l, text, &e), 0);
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.npaths, 2);
	assert_int_equal(s.end[0], 9096);
	assert_int_equal(s.end[1], 100512);
	assert_int_equal(s.r[0].req[1].target, 1);
	assert_int_equal(s.r[0].left_out[IOLOG_TRIM], 1);
	assert_int_equal(s.r[0].left_out[IOLOG_SYNC], 1);
	replay_set_free(&s);

	o.redirect = "/scratch";
	o.align = 4096;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.npaths, 1);
	assert_string_equal(s.paths[0], "/scratch");
	assert_int_equal(s.r[0].req[0].off, 4096);
	assert_int_equal(s.r[0].req[1].off, 98304);
	assert_int_equal(s.r[0].req[1].len, 512);	/* a text log's lengths stay */
	assert_int_equal(s.r[0].req[2].off, 8192);
	assert_int_equal(s.r[0].req[1].target, 0);
	assert_int_equal(s.end[0], 98304 + 512);
	replay_set_free(&s);

	o.align = 0;
	o.scale = 10;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.r[0].req[0].off, 500);
	replay_set_free(&s);

	o.scale = 0;
	assert_int_equal(replay_skip_parse("read", &o.skip, &e), 0);
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "nothing to replay"));
	assert_non_null(strstr(e.msg, "3 read"));
	o.skip = 0;
	o.align = 3000;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), -EINVAL);
	iolog_free(&l);
}

static void skip_parse(void **state)
{
	unsigned bits;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(replay_skip_parse("write,trim", &bits, &e), 0);
	assert_int_equal(bits, IOLOG_SKIP(IOLOG_WRITE) | IOLOG_SKIP(IOLOG_TRIM));
	assert_int_equal(replay_skip_parse("sync", &bits, &e), 0);
	assert_int_equal(bits, IOLOG_SKIP(IOLOG_SYNC) | IOLOG_SKIP(IOLOG_DATASYNC));
	assert_int_equal(replay_skip_parse("read,flush", &bits, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "'flush'"));
}

/* Two logs share their targets; each keeps its own requests. */
static void two_logs(void **state)
{
	const char *t1 = "fio version 3 iolog\n0 /a read 0 1\n0 /b read 0 1\n";
	const char *t2 = "fio version 2 iolog\n/b read 10 1\n/c read 0 1\n";
	const char *const names[] = { "1.log", "2.log" };
	struct replay_opts o = { .time_scale = 100 };
	struct iolog l[2];
	struct replay_set s;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(parse(&l[0], t1, &e), 0);
	assert_int_equal(parse(&l[1], t2, &e), 0);
	assert_int_equal(replay_set_build(&s, l, names, 2, &o, &e), 0);
	assert_int_equal(s.npaths, 3);
	assert_int_equal(s.r[1].req[0].target, 1);
	assert_int_equal(s.r[1].req[1].target, 2);
	assert_int_equal(s.end[1], 11);
	assert_int_equal(s.requests, 4);
	replay_set_free(&s);
	iolog_free(&l[0]);
	iolog_free(&l[1]);
}

/* ---- writing --------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* 100000 requests (several 1 MiB buffers) read back as written. */
static void writer_round_trip(void **state)
{
	char path[] = "/tmp/test_iolog.XXXXXX";
	const char *const paths[] = { "/d/first", "/d/second" };
	struct iolog_writer w;
	struct iolog l;
	struct err e = { 0 };
	const unsigned n = 100000;
	size_t len;
	char *text;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(iolog_writer_open(&w, path, paths, 2, 1000, &e), 0);
	for (unsigned i = 0; i < n; i++)
		iolog_add(&w, (uint64_t)i * 1500 / 1000, i % 2, i % 7 ? IOLOG_READ : IOLOG_WRITE,
			  (uint64_t)i * 4096 + (i % 3), 4096 + i % 5);
	iolog_add(&w, (uint64_t)n * 1500 / 1000, 0, IOLOG_DATASYNC, 0, 0);
	assert_int_equal(iolog_writer_close(&w, 1000 + (uint64_t)n * 2000, &e), 0);
	text = slurp(path, &len);
	assert_true(len > 2 * IOLOG_WBUF);
	assert_memory_equal(text, "fio version 3 iolog\n0 /d/first add\n0 /d/second add\n0 /d/first open\n", 67);
	assert_int_equal(iolog_parse(&l, text, len, path, &e), 0);
	assert_int_equal(l.version, 3);
	assert_int_equal(l.nfiles, 2);
	/* 2 opens, n requests, the datasync, 2 closes */
	assert_int_equal(l.n, n + 5);
	for (unsigned i = 0; i < n; i++) {
		const struct iolog_entry *en = &l.ent[2 + i];

		assert_int_equal(en->op, i % 7 ? IOLOG_READ : IOLOG_WRITE);
		assert_int_equal(en->file, i % 2);
		assert_int_equal(en->off, (uint64_t)i * 4096 + (i % 3));
		assert_int_equal(en->len, 4096 + i % 5);
		assert_int_equal(en->t, (uint64_t)i * 1500 / 1000);
	}
	assert_int_equal(l.ent[n + 2].op, IOLOG_DATASYNC);
	assert_int_equal(l.ent[n + 4].op, IOLOG_CLOSE);
	assert_int_equal(l.ent[n + 4].t, (uint64_t)n * 2);
	iolog_free(&l);
	free(text);
	unlink(path);
}

static void writer_refuses(void **state)
{
	const char *const blank[] = { "/d/with space" };
	const char *const ok[] = { "/d/a" };
	struct iolog_writer w;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(iolog_writer_open(&w, "/tmp/test_iolog.never", blank, 1, 0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "/d/with space"));
	assert_int_equal(access("/tmp/test_iolog.never", F_OK), -1);
	assert_int_equal(iolog_writer_open(&w, "/nonexistent-dir/x.log", ok, 1, 0, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "write_iolog: /nonexistent-dir/x.log"));
}

/* A write that fails (a full device) is reported at close. */
static void writer_full(void **state)
{
	const char *const ok[] = { "/d/a" };
	struct iolog_writer w;
	struct err e = { 0 };

	(void)state;
	if (access("/dev/full", W_OK))
		skip();
	assert_int_equal(iolog_writer_open(&w, "/dev/full", ok, 1, 0, &e), 0);
	for (unsigned i = 0; i < 50000; i++)
		iolog_add(&w, i, 0, IOLOG_READ, i, 1);
	assert_int_equal(iolog_writer_close(&w, 0, &e), -ENOSPC);
	assert_non_null(strstr(e.msg, "write_iolog: /dev/full"));
}

/* With span_page, the most pages of that size a read covers and where
 * it is: a read astride pages counts each page it touches; writes and
 * a longer but aligned read do not outrank it. */
static void replay_read_pages(void **state)
{
	const char *text = "fio version 2 iolog\n"
			   "/a add\n"
			   "/a open\n"
			   "/a read 0 8192\n"		/* 2 pages */
			   "/a read 6144 8192\n"	/* astride: pages 1, 2 and 3 */
			   "/a write 0 65536\n"		/* a write: latched a page at a time */
			   "/a read 16384 12288\n"	/* 3 pages, not more than the one before */
			   "/a close\n";
	struct replay_opts o = { .time_scale = 100, .writes = true, .span_page = 4096 };
	struct replay_set s;
	struct iolog l;
	struct err e = { 0 };

	(void)state;
	assert_int_equal(parse(&l, text, &e), 0);
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.max_read_pages, 3);
	assert_string_equal(s.max_read_at, "t.log:5");
	replay_set_free(&s);
	/* Off: nothing counted. */
	o.span_page = 0;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), 0);
	assert_int_equal(s.max_read_pages, 0);
	replay_set_free(&s);
	o.span_page = 3000;
	assert_int_equal(replay_set_build(&s, &l, name1, 1, &o, &e), -EINVAL);
	iolog_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(v3_basic),
		cmocka_unit_test(v2_wait_and_files),
		cmocka_unit_test(malformed),
		cmocka_unit_test(nul_byte),
		cmocka_unit_test(blktrace),
		cmocka_unit_test(blktrace_swapped),
		cmocka_unit_test(replay_timing),
		cmocka_unit_test(replay_v2_wait),
		cmocka_unit_test(replay_redirect_skip_align),
		cmocka_unit_test(skip_parse),
		cmocka_unit_test(two_logs),
		cmocka_unit_test(writer_round_trip),
		cmocka_unit_test(writer_refuses),
		cmocka_unit_test(writer_full),
		cmocka_unit_test(replay_read_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
