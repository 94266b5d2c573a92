/*
 * test_engine_bufpool.c - ioengine=bufpool driven directly, the way the
 * worker drives a synchronous engine (queue, consume r->data, release),
 * over scratch files whose contents the test keeps in memory: reads come
 * from the right page of the right file, hits and misses add up, prewarm
 * fills the pool, writes land in the file after a flush of their target
 * (and only theirs), after an eviction and after the end-of-job
 * write-back, and prepare refuses what the targets cannot do. Both pool_io
 * modes; with pool_prefetch, pages read ahead hold the right bytes and
 * turn a scan's misses into hits. Scratch files live in $TMPDIR (default /var/tmp: O_DIRECT needs
 * a real filesystem) and are removed at the end; everything is skipped
 * where that filesystem refuses O_DIRECT.
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
#include <sys/random.h>
#include <unistd.h>

#include <cmocka.h>

#include "engines/bufpool.h"
#include "engines/engine.h"
#include "run/enginecfg.h"

extern const struct engine_ops engine_bufpool;

#define PAGE		4096u
#define NTARGETS	2
/* The second file ends inside a page: its last page is short. */
static const uint64_t file_size[NTARGETS] = { 4u << 20, (1u << 20) + 3 * 512 };

static char fx_dir[256];
/* pool_prefetch of the next rig. */
static unsigned rig_prefetch;

static struct {
	char path[NTARGETS][300];
	uint8_t *data[NTARGETS];	/* what the files should hold */
	bool direct_ok;
} fx;

/* A job, its targets, one thread of it. */
struct rig {
	struct job job;
	struct target targets[NTARGETS];
	struct engine_job ej;
	struct engine_thread et;
	struct io_req req;
	uint8_t *buf;
	struct pool_counters ctr;
};

static int make_file(unsigned i)
{
	uint64_t n = file_size[i];
	int fd;

	snprintf(fx.path[i], sizeof(fx.path[i]), "%s/t%u", fx_dir, i);
	fx.data[i] = malloc(n);
	if (!fx.data[i] || getrandom(fx.data[i], n, 0) != (ssize_t)n)
		return -1;
	fd = open(fx.path[i], O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0 || write(fd, fx.data[i], n) != (ssize_t)n)
		return -1;
	fsync(fd);
	close(fd);
	fd = open(fx.path[i], O_RDONLY | O_DIRECT);
	fx.direct_ok = fd >= 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(fx_dir, sizeof(fx_dir), "%s/faultline-bufpool-XXXXXX", tmp ? tmp : "/var/tmp");
	if (!mkdtemp(fx_dir))
		return -1;
	for (unsigned i = 0; i < NTARGETS; i++)
		if (make_file(i) < 0)
			return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (unsigned i = 0; i < NTARGETS; i++) {
		unlink(fx.path[i]);
		free(fx.data[i]);
	}
	rmdir(fx_dir);
	return 0;
}

/* The rig for a pool of @frames pages; read-write descriptors, as a
 * write job will have. */
static void rig_up(struct rig *r, uint32_t frames, enum pool_io_mode io, bool prewarm)
{
	struct err e = { 0 };

	if (!fx.direct_ok)
		skip();
	memset(r, 0, sizeof(*r));
	snprintf(r->job.name, sizeof(r->job.name), "bp");
	r->job.bs = PAGE;
	r->job.numjobs = 1;
	r->job.direct = true;
	r->job.pool_size = (uint64_t)frames * PAGE;
	r->job.pool_page = PAGE;
	r->job.pool_io = io;
	r->job.prewarm = prewarm;
	r->job.pool_prefetch = rig_prefetch;
	for (unsigned i = 0; i < NTARGETS; i++) {
		struct target *t = &r->targets[i];

		t->path = fx.path[i];
		t->fd = open(fx.path[i], O_RDWR);
		t->fd_direct = open(fx.path[i], O_RDWR | O_DIRECT);
		assert_true(t->fd >= 0 && t->fd_direct >= 0);
		t->base = 0;
		t->len = file_size[i];
		t->dev_size = file_size[i];
		t->lbs = 512;
	}
	r->ej = (struct engine_job){ .targets = r->targets, .ntargets = NTARGETS, .depth = 1 };
	enginecfg_resolve(&r->ej, &r->job);
	assert_int_equal(engine_bufpool.prepare(&r->ej, &e), 0);
	assert_int_equal(engine_bufpool.job_setup(&r->ej, &e), 0);
	r->buf = aligned_alloc(PAGE, PAGE);
	assert_non_null(r->buf);
	r->req.wbuf = r->buf;
	r->et = (struct engine_thread){ .ej = &r->ej, .reqs = &r->req, .pool = &r->ctr };
	if (engine_bufpool.init(&r->et, &e))
		fail_msg("init: %s", e.msg);
}

static void rig_down(struct rig *r)
{
	engine_bufpool.exit(&r->et);
	engine_bufpool.job_teardown(&r->ej);
	for (unsigned i = 0; i < NTARGETS; i++) {
		close(r->targets[i].fd);
		close(r->targets[i].fd_direct);
	}
	free(r->buf);
}

/* One request through the engine as the worker runs it. */
static void issue(struct rig *r, enum io_op op, unsigned target, uint64_t off, uint32_t len)
{
	r->req.op = (uint8_t)op;
	r->req.target = (uint16_t)target;
	r->req.off = off;
	r->req.len = len;
	r->req.data = NULL;
	assert_int_equal(engine_bufpool.queue(&r->et, &r->req), ENGINE_DONE);
	if (r->req.res != (int64_t)len)
		fail_msg("op %d target %u off %llu: res %lld", op, target,
			 (unsigned long long)off, (long long)r->req.res);
}

static void read_check(struct rig *r, unsigned target, uint64_t off, uint32_t len)
{
	issue(r, IO_READ, target, off, len);
	assert_non_null(r->req.data);
	if (memcmp(r->req.data, fx.data[target] + off, len))
		fail_msg("target %u offset %llu: wrong bytes", target, (unsigned long long)off);
	engine_bufpool.release(&r->et, &r->req);
}

static void reads(enum pool_io_mode io)
{
	struct rig r;
	uint64_t n = 0;

	rig_up(&r, 64, io, false);
	/* Every page of both files, twice, then sub-page pieces: the
	 * second round hits for what still fits (64 frames of 257 + 256
	 * pages: nothing does). */
	for (int round = 0; round < 2; round++)
		for (unsigned t = 0; t < NTARGETS; t++)
			for (uint64_t off = 0; off + PAGE <= file_size[t]; off += PAGE, n++)
				read_check(&r, t, off, PAGE);
	/* The short last page of file 1: 3 sectors. */
	read_check(&r, 1, file_size[1] - 3 * 512, 3 * 512);
	n++;
	/* Pieces of one page: one miss, then hits. */
	for (uint32_t in = 0; in < PAGE; in += 1024, n++)
		read_check(&r, 0, 40 * PAGE + in, 1024);
	assert_int_equal(r.ctr.hits + r.ctr.misses, n);
	assert_int_equal(r.ctr.reads, r.ctr.misses);
	assert_true(r.ctr.hits >= 3);
	assert_true(r.ctr.evictions > 0);
	rig_down(&r);
}

static void test_reads_uring(void **state)
{
	(void)state;
	reads(POOL_IO_URING);
}

static void test_reads_psync(void **state)
{
	(void)state;
	reads(POOL_IO_PSYNC);
}

/* pool_prefetch: a scan of both files, pages and pieces of pages, reads
 * the right bytes (the short last page too) and, but for the first page
 * of each file and a few the scan overtook, finds each page read ahead;
 * a scan backwards over what the pool no longer holds still reads right. */
static void test_reads_prefetch(void **state)
{
	struct rig r;
	uint64_t n = 0;

	(void)state;
	rig_prefetch = 8;
	rig_up(&r, 64, POOL_IO_URING, false);
	rig_prefetch = 0;
	for (unsigned t = 0; t < NTARGETS; t++)
		for (uint64_t off = 0; off + 1024 <= file_size[t]; off += 1024, n++)
			read_check(&r, t, off, 1024);
	read_check(&r, 1, file_size[1] - 3 * 512, 3 * 512);
	n++;
	assert_int_equal(r.ctr.hits + r.ctr.misses, n);
	assert_true(r.ctr.prefetches > 0);
	/* 513 pages: every one read once, ahead or on a miss. */
	assert_true(r.ctr.prefetches + r.ctr.reads >= 513);
	assert_true(r.ctr.misses < 513 / 4);
	for (unsigned t = 0; t < NTARGETS; t++)
		for (uint64_t off = file_size[t] / PAGE * PAGE; off >= PAGE; off -= PAGE)
			read_check(&r, t, off - PAGE, PAGE);
	rig_down(&r);
}

/* prewarm: the pool starts with the regions in it (they fit). */
static void test_prewarm(void **state)
{
	struct rig r;

	(void)state;
	rig_up(&r, 2048, POOL_IO_URING, true);
	for (unsigned t = 0; t < NTARGETS; t++)
		for (uint64_t off = 0; off + PAGE <= file_size[t]; off += 3 * PAGE)
			read_check(&r, t, off, PAGE);
	read_check(&r, 1, file_size[1] - 512, 512);
	assert_int_equal(r.ctr.misses, 0);
	assert_true(r.ctr.hits > 0);
	rig_down(&r);
}

/* What the file holds now, through the buffered descriptor (O_DIRECT
 * writes invalidated its cached pages). */
static void file_matches(const struct rig *r, unsigned target)
{
	uint8_t *now = malloc(file_size[target]);

	assert_non_null(now);
	assert_int_equal(pread(r->targets[target].fd, now, file_size[target], 0),
			 (ssize_t)file_size[target]);
	if (memcmp(now, fx.data[target], file_size[target]))
		fail_msg("target %u: the file is not what was written", target);
	free(now);
}

static void write_piece(struct rig *r, unsigned target, uint64_t off, uint32_t len)
{
	assert_int_equal(getrandom(r->buf, len, 0), (ssize_t)len);
	issue(r, IO_WRITE, target, off, len);
	memcpy(fx.data[target] + off, r->buf, len);
	engine_bufpool.release(&r->et, &r->req);
}

static void writes(enum pool_io_mode io)
{
	struct rig r;

	rig_up(&r, 16, io, false);
	/* Whole pages (not read first), pieces of pages (read, then
	 * changed), and the short page at the end of file 1. */
	write_piece(&r, 0, 0, PAGE);
	write_piece(&r, 0, 5 * PAGE + 512, 1024);
	write_piece(&r, 1, 7 * PAGE, PAGE);
	write_piece(&r, 1, file_size[1] - 2 * 512, 512);
	assert_int_equal(r.ctr.reads, 2);
	/* A flush is of one target: target 1's pages stay dirty. */
	issue(&r, IO_FLUSH, 0, 0, 0);
	assert_int_equal(r.ctr.writebacks, 2);
	file_matches(&r, 0);
	issue(&r, IO_FLUSH, 1, 0, 0);
	assert_int_equal(r.ctr.writebacks, 4);
	file_matches(&r, 1);
	/* The pool still serves what was written. */
	read_check(&r, 0, 5 * PAGE, PAGE);

	/* Dirty pages go back when the clock takes their frames. */
	write_piece(&r, 0, 9 * PAGE, PAGE);
	write_piece(&r, 0, 10 * PAGE + 2048, 512);
	for (uint64_t off = 100 * PAGE; off < 200 * PAGE; off += PAGE)
		read_check(&r, 0, off, PAGE);
	assert_int_equal(r.ctr.writebacks, 6);
	file_matches(&r, 0);
	/* Nothing left to write. */
	issue(&r, IO_FLUSH, 0, 0, 0);
	assert_int_equal(r.ctr.writebacks, 6);

	/* The end of a write job: whatever is dirty, of every target. */
	write_piece(&r, 0, 11 * PAGE, PAGE);
	write_piece(&r, 1, 3 * PAGE + 1024, 2048);
	assert_int_equal(engine_bufpool.writeback(&r.et), 0);
	assert_int_equal(r.ctr.writebacks, 8);
	file_matches(&r, 0);
	file_matches(&r, 1);
	assert_int_equal(engine_bufpool.writeback(&r.et), 0);
	assert_int_equal(r.ctr.writebacks, 8);
	rig_down(&r);
}

static void test_writes_uring(void **state)
{
	(void)state;
	writes(POOL_IO_URING);
}

static void test_writes_psync(void **state)
{
	(void)state;
	writes(POOL_IO_PSYNC);
}

/* prepare: a pool page the O_DIRECT reads cannot use, and a job that
 * was not given O_DIRECT descriptors. */
static void test_prepare_refuses(void **state)
{
	struct job job = { .bs = PAGE, .numjobs = 1, .pool_size = 64 * PAGE, .pool_page = 2048 };
	struct target t = { .path = "x", .fd = -1, .fd_direct = 7, .len = 1 << 20, .lbs = 4096 };
	struct engine_job ej = { .targets = &t, .ntargets = 1, .depth = 1 };
	struct err e = { 0 };

	(void)state;
	enginecfg_resolve(&ej, &job);
	assert_int_equal(engine_bufpool.prepare(&ej, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "pool_page=2048"));
	assert_non_null(strstr(e.msg, "4096"));
	t.fd_direct = -1;
	job.pool_page = 4096;
	enginecfg_resolve(&ej, &job);
	assert_int_equal(engine_bufpool.prepare(&ej, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "direct=1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_uring),
		cmocka_unit_test(test_reads_psync),
		cmocka_unit_test(test_reads_prefetch),
		cmocka_unit_test(test_prewarm),
		cmocka_unit_test(test_writes_uring),
		cmocka_unit_test(test_writes_psync),
		cmocka_unit_test(test_prepare_refuses),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
