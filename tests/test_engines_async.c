/*
 * test_engines_async.c - the io_uring and libaio engines, driven the way
 * the worker drives them (queue a batch, submit, reap, reuse the slots),
 * without the worker: a hand-built job, job_run and worker over two
 * scratch files of random bytes whose contents the test keeps in memory.
 *
 * Each completion's bytes are compared with the file's, so a request
 * matched to the wrong slot, buffer, target or offset shows up as a
 * mismatch. Scratch files live in $TMPDIR (default /tmp) and are removed
 * at the end; O_DIRECT cases are skipped where that filesystem refuses
 * O_DIRECT.
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

#include "engines/engine.h"
#include "job/workloadcfg.h"
#include "run/enginecfg.h"
#include "run/worker.h"

extern const struct engine_ops engine_io_uring;
extern const struct engine_ops engine_libaio;
extern const struct engine_ops engine_posixaio;

/* The big file is the brief's 64 MiB; the small one ends 1000 bytes into
 * a 4k block so that a read there is short. */
#define BIG_SIZE	(64ull << 20)
#define SMALL_SIZE	((1ull << 20) + 1000)
#define NTARGETS	2
#define PAGE		4096u

static char fx_dir[256];

static struct {
	char path[NTARGETS][300];
	uint64_t size[NTARGETS];
	uint8_t *data[NTARGETS];	/* what the files hold */
	int fd[NTARGETS];
	int fd_direct[NTARGETS];	/* -1: O_DIRECT refused here */
} fx;

/* A worker with everything an engine may look at. */
struct rig {
	struct job job;
	struct work wk;
	struct target targets[NTARGETS];
	struct worker w;
	struct thread_stats st;		/* the worker's counters (iodepth counts) */
	const struct engine_ops *ops;
	unsigned *free_slots;
	unsigned nfree;
	struct io_req **done;
};

struct param {
	const struct engine_ops *ops;
	const bool direct;
};

static int fill_random(uint8_t *p, size_t n)
{
	while (n) {
		ssize_t got = getrandom(p, n > (1u << 25) ? (1u << 25) : n, 0);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

static int make_file(unsigned i, uint64_t size)
{
	int fd;

	snprintf(fx.path[i], sizeof(fx.path[i]), "%s/t%u", fx_dir, i);
	fx.size[i] = size;
	fx.data[i] = malloc(size);
	if (!fx.data[i] || fill_random(fx.data[i], size) < 0)
		return -1;
	fd = open(fx.path[i], O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, fx.data[i], size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	fsync(fd);
	close(fd);
	fx.fd[i] = open(fx.path[i], O_RDONLY);
	fx.fd_direct[i] = open(fx.path[i], O_RDONLY | O_DIRECT);
	return fx.fd[i] < 0 ? -1 : 0;
}

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	unsigned i;

	(void)state;
	snprintf(fx_dir, sizeof(fx_dir), "%s/faultline-engines-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(fx_dir))
		return -1;
	for (i = 0; i < NTARGETS; i++)
		fx.fd[i] = fx.fd_direct[i] = -1;
	if (make_file(0, BIG_SIZE) < 0 || make_file(1, SMALL_SIZE) < 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	unsigned i;

	(void)state;
	for (i = 0; i < NTARGETS; i++) {
		if (fx.fd[i] >= 0)
			close(fx.fd[i]);
		if (fx.fd_direct[i] >= 0)
			close(fx.fd_direct[i]);
		if (fx.path[i][0])
			unlink(fx.path[i]);
		free(fx.data[i]);
	}
	rmdir(fx_dir);
	return 0;
}

static bool direct_works(void)
{
	return fx.fd_direct[0] >= 0 && fx.fd_direct[1] >= 0;
}

/* What the worker does before init: slots, aligned buffers, targets. */
static void rig_init(struct rig *g, const struct engine_ops *ops, unsigned depth,
		     uint64_t bs, bool direct)
{
#if defined(__SANITIZE_THREAD__)
	/* posixaio under ThreadSanitizer: glibc's aio helper threads start
	 * more helper threads from inside libc, where TSan's interceptor never
	 * sees them, and its runtime crashes in them (a null thread state).
	 * Skipped there, said so; run everywhere else. */
	if (ops == &engine_posixaio)
		skip();
#endif
	size_t stride = (bs + PAGE - 1) / PAGE * PAGE;
	struct err e = { 0 };
	unsigned i;

	memset(g, 0, sizeof(*g));
	g->ops = ops;
	snprintf(g->job.name, sizeof(g->job.name), "t");
	g->job.rw = RW_RANDREAD;
	g->job.bs = bs;
	g->job.iodepth = depth;
	g->job.direct = direct;
	g->job.numjobs = 1;
	snprintf(g->job.ioengine, sizeof(g->job.ioengine), "%s", ops->name);

	for (i = 0; i < NTARGETS; i++) {
		struct target *t = &g->targets[i];

		t->path = fx.path[i];
		t->fd = fx.fd[i];
		t->fd_direct = direct ? fx.fd_direct[i] : -1;
		t->dev_size = fx.size[i];
		t->len = fx.size[i];
		t->lbs = 512;
	}
	g->w.st = &g->st;
	g->wk.job = &g->job;
	g->wk.ops = ops;
	enginecfg_resolve(&g->wk.ej, &g->job);
	workloadcfg_resolve(&g->wk.wj, &g->job);
	g->wk.ej.ntargets = NTARGETS;
	g->wk.ej.targets = g->targets;
	g->wk.ej.depth = depth;
	g->wk.batch = depth;

	g->w.wk = &g->wk;
	g->w.tcount = NTARGETS;
	g->w.et.ej = &g->wk.ej;
	g->w.et.reqs = calloc(depth, sizeof(*g->w.et.reqs));
	g->w.bufs = aligned_alloc(PAGE, stride * depth);
	g->free_slots = calloc(depth, sizeof(*g->free_slots));
	g->done = calloc(depth, sizeof(*g->done));
	assert_non_null(g->w.et.reqs);
	assert_non_null(g->w.bufs);
	assert_non_null(g->free_slots);
	assert_non_null(g->done);
	for (i = 0; i < depth; i++) {
		g->w.et.reqs[i].slot = (uint16_t)i;
		g->w.et.reqs[i].buf = g->w.bufs + i * stride;
		g->free_slots[g->nfree++] = depth - 1 - i;
	}
	if (ops->init && ops->init(&g->w.et, &e) < 0)
		fail_msg("%s init: %s", ops->name, e.msg);
}

static void rig_destroy(struct rig *g)
{
	if (g->ops->exit)
		g->ops->exit(&g->w.et);
	free(g->w.et.reqs);
	free(g->w.bufs);
	free(g->free_slots);
	free(g->done);
}

static struct io_req *rig_take(struct rig *g)
{
	assert_true(g->nfree > 0);
	return &g->w.et.reqs[g->free_slots[--g->nfree]];
}

static void rig_put(struct rig *g, struct io_req *r)
{
	g->free_slots[g->nfree++] = r->slot;
}

static int rig_queue(struct rig *g, unsigned target, uint64_t off, uint32_t len)
{
	struct io_req *r = rig_take(g);

	r->target = (uint16_t)target;
	r->off = off;
	r->len = len;
	r->res = INT64_MIN;
	r->data = NULL;
	return g->ops->queue(&g->w.et, r);
}

static void check_data(const struct io_req *r, int64_t want)
{
	if (r->res != want)
		fail_msg("target %u offset %llu len %u: res %lld, want %lld", r->target,
			 (unsigned long long)r->off, r->len, (long long)r->res,
			 (long long)want);
	assert_ptr_equal(r->data, r->buf);
	if (want > 0 && memcmp(r->data, fx.data[r->target] + r->off, (size_t)want))
		fail_msg("target %u offset %llu: bytes differ from the file", r->target,
			 (unsigned long long)r->off);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * The worker loop in miniature: fill every free slot, reap at least one,
 * check and recycle; drain at the end. Every 8th request goes to the
 * small file so both registered files are used. With @batch 0 the whole
 * fill is pushed by one submit() before the reap; otherwise submit_step
 * pushes every @batch requests mid-fill, as the worker does with
 * iodepth_batch_submit, and reap() pushes the rest.
 */
static void run_random(const struct engine_ops *ops, unsigned depth, uint64_t bs,
		       bool direct, unsigned total, unsigned batch)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ depth ^ bs;
	unsigned issued = 0, completed = 0, inflight = 0, pending = 0;
	struct rig g;

	rig_init(&g, ops, depth, bs, direct);
	g.wk.batch = batch ? batch : depth;
	while (completed < total) {
		int n, i;

		while (g.nfree && issued < total) {
			unsigned t = (issued % 8 == 7) ? 1 : 0;
			uint64_t blocks = (fx.size[t] / bs);
			uint64_t off = (xorshift(&seed) % blocks) * bs;

			assert_int_equal(rig_queue(&g, t, off, (uint32_t)bs), ENGINE_QUEUED);
			issued++;
			inflight++;
			if (batch)
				assert_int_equal(worker_submit_step(&g.w, &pending,
							     g.nfree && issued < total, inflight), 0);
		}
		if (!batch && ops->submit)
			assert_int_equal(ops->submit(&g.w.et), 0);
		/* Drain at the end, as the worker does. */
		n = ops->reap(&g.w.et, issued == total ? inflight : 1, depth, g.done);
		pending = 0;
		assert_true(n >= 1);
		assert_true((unsigned)n <= inflight);
		if (issued == total)
			assert_int_equal(n, inflight);
		for (i = 0; i < n; i++) {
			check_data(g.done[i], (int64_t)bs);
			rig_put(&g, g.done[i]);
		}
		inflight -= n;
		completed += n;
	}
	rig_destroy(&g);
}

static void test_random_reads(void **state)
{
	const struct param *p = *state;
	static const unsigned depths[] = { 1, 8, 32 };
	/* O_DIRECT reads go to the disk: fewer, so the test stays quick. */
	unsigned n = p->direct ? 1000 : 20000, i;

	if (p->direct && !direct_works())
		skip();
	for (i = 0; i < 3; i++)
		run_random(p->ops, depths[i], 4096, p->direct, n, 0);
	/* Larger and odd (but block-aligned) sizes: buffers are per slot. */
	run_random(p->ops, 16, 65536, p->direct, n / 4, 0);
	run_random(p->ops, 4, 512 * 3, p->direct, n / 4, 0);
}

/* iodepth_batch_submit: pushes in the middle of a fill (each request,
 * every 3, the whole depth) mixed with reap()'s own push lose and
 * repeat no request. */
static void test_batched_submit(void **state)
{
	const struct param *p = *state;
	static const unsigned batches[] = { 1, 3, 32 };
	unsigned n = p->direct ? 1000 : 20000, i;

	if (p->direct && !direct_works())
		skip();
	for (i = 0; i < 3; i++)
		run_random(p->ops, 32, 4096, p->direct, n, batches[i]);
}

/* auto is 1 with direct=1 and the depth otherwise; 0 and values above
 * the depth mean the depth. */
static void test_batch_resolve(void **state)
{
	struct job j = { 0 };

	(void)state;
	j.iodepth_batch = IODEPTH_BATCH_AUTO;
	j.direct = true;
	assert_int_equal(worker_batch_resolve(&j, 64), 1);
	j.direct = false;
	assert_int_equal(worker_batch_resolve(&j, 64), 64);
	j.iodepth_batch = 0;
	assert_int_equal(worker_batch_resolve(&j, 64), 64);
	j.iodepth_batch = 8;
	assert_int_equal(worker_batch_resolve(&j, 64), 8);
	j.direct = true;
	assert_int_equal(worker_batch_resolve(&j, 64), 8);
	j.iodepth_batch = 100;
	assert_int_equal(worker_batch_resolve(&j, 64), 64);
	/* A synchronous engine has one slot. */
	j.iodepth_batch = IODEPTH_BATCH_AUTO;
	assert_int_equal(worker_batch_resolve(&j, 1), 1);
}

/* reap() never hands back more than @max, and every request comes back
 * exactly once. */
static void test_reap_respects_max(void **state)
{
	const struct param *p = *state;
	unsigned seen[32] = { 0 }, got = 0, i;
	struct rig g;

	if (p->direct && !direct_works())
		skip();
	rig_init(&g, p->ops, 32, 4096, p->direct);
	for (i = 0; i < 32; i++)
		assert_int_equal(rig_queue(&g, 0, (uint64_t)i * 8192, 4096), ENGINE_QUEUED);
	if (p->ops->submit)
		assert_int_equal(p->ops->submit(&g.w.et), 0);
	while (got < 32) {
		int n = p->ops->reap(&g.w.et, 1, 3, g.done);
		int k;

		assert_true(n >= 1 && n <= 3);
		for (k = 0; k < n; k++) {
			check_data(g.done[k], 4096);
			seen[g.done[k]->slot]++;
		}
		got += n;
	}
	for (i = 0; i < 32; i++)
		assert_int_equal(seen[i], 1);
	rig_destroy(&g);
}

/* iodepth_batch_complete_min=0: a reap with min 0 never waits, and
 * polling it collects every request. With DEFER_TASKRUN (io_uring) the
 * completions run only when the task enters the kernel, so a reap that
 * looked at the ring alone would spin forever: the bound says it did. */
static void test_reap_polls(void **state)
{
	const struct param *p = *state;
	unsigned seen[16] = { 0 }, got = 0, i, polls = 0;
	struct rig g;

	if (p->direct && !direct_works())
		skip();
	rig_init(&g, p->ops, 16, 4096, p->direct);
	for (i = 0; i < 16; i++)
		assert_int_equal(rig_queue(&g, 0, (uint64_t)i * 8192, 4096), ENGINE_QUEUED);
	if (p->ops->submit)
		assert_int_equal(p->ops->submit(&g.w.et), 0);
	while (got < 16 && polls < 10000000) {
		int n = p->ops->reap(&g.w.et, 0, 16, g.done);

		assert_true(n >= 0 && n <= 16);
		for (int k = 0; k < n; k++) {
			check_data(g.done[k], 4096);
			seen[g.done[k]->slot]++;
		}
		got += (unsigned)n;
		polls++;
	}
	assert_int_equal(got, 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(seen[i], 1);
	rig_destroy(&g);
}

/* A buffered read across the end of a file is short, one past it is 0:
 * the engine reports res as the kernel gave it. */
static void test_short_read_at_eof(void **state)
{
	const struct param *p = *state;
	uint64_t end = fx.size[1];
	struct io_req *r0, *r1;
	struct rig g;
	int n;

	rig_init(&g, p->ops, 2, 4096, false);
	assert_int_equal(rig_queue(&g, 1, end - 1000, 4096), ENGINE_QUEUED);
	assert_int_equal(rig_queue(&g, 1, end + 4096, 4096), ENGINE_QUEUED);
	if (p->ops->submit)
		assert_int_equal(p->ops->submit(&g.w.et), 0);
	n = p->ops->reap(&g.w.et, 2, 2, g.done);
	assert_int_equal(n, 2);
	r0 = g.done[0]->off < end ? g.done[0] : g.done[1];
	r1 = g.done[0]->off < end ? g.done[1] : g.done[0];
	check_data(r0, 1000);
	assert_int_equal(r1->res, 0);
	rig_destroy(&g);
}

/* A request the kernel rejects (O_DIRECT at an offset that is not a
 * multiple of the block size) completes with -EINVAL instead of failing
 * reap(), and the requests around it still complete normally. */
static void test_rejected_request_completes(void **state)
{
	const struct param *p = *state;
	unsigned ok = 0, bad = 0;
	struct rig g;
	int n, k;

	if (!direct_works())
		skip();
	rig_init(&g, p->ops, 4, 4096, true);
	assert_int_equal(rig_queue(&g, 0, 8192, 4096), ENGINE_QUEUED);
	assert_int_equal(rig_queue(&g, 0, 100, 4096), ENGINE_QUEUED);
	assert_int_equal(rig_queue(&g, 0, 16384, 4096), ENGINE_QUEUED);
	if (p->ops->submit)
		assert_int_equal(p->ops->submit(&g.w.et), 0);
	n = p->ops->reap(&g.w.et, 3, 4, g.done);
	assert_int_equal(n, 3);
	for (k = 0; k < n; k++) {
		if (g.done[k]->off == 100) {
			assert_int_equal(g.done[k]->res, -EINVAL);
			bad++;
		} else {
			check_data(g.done[k], 4096);
			ok++;
		}
	}
	assert_int_equal(ok, 2);
	assert_int_equal(bad, 1);
	rig_destroy(&g);
}

/* init and exit leave nothing behind: rings in a row (io_destroy waits
 * for an RCU grace period, so not too many), and exit with
 * requests still queued but never reaped (a worker told to stop). */
static void test_init_exit_repeat(void **state)
{
	const struct param *p = *state;
	struct rig g;
	unsigned i;

	for (i = 0; i < 20; i++) {
		rig_init(&g, p->ops, 8, 4096, false);
		assert_int_equal(rig_queue(&g, 0, 0, 4096), ENGINE_QUEUED);
		if (i % 2 && p->ops->submit)
			assert_int_equal(p->ops->submit(&g.w.et), 0);
		rig_destroy(&g);
	}
}

static const struct param uring_buffered = { &engine_io_uring, false };
static const struct param uring_direct = { &engine_io_uring, true };
static const struct param aio_buffered = { &engine_libaio, false };
static const struct param aio_direct = { &engine_libaio, true };
static const struct param paio_buffered = { &engine_posixaio, false };
static const struct param paio_direct = { &engine_posixaio, true };

/* One test per engine and mode, named so a failure says which. */
#define CASE(fn, p, tag) \
	{ #fn "/" tag, fn, NULL, NULL, (void *)&(p) }
#define EACH(fn) \
	CASE(fn, uring_buffered, "io_uring"), \
	CASE(fn, uring_direct, "io_uring,direct"), \
	CASE(fn, aio_buffered, "libaio"), \
	CASE(fn, aio_direct, "libaio,direct"), \
	CASE(fn, paio_buffered, "posixaio"), \
	CASE(fn, paio_direct, "posixaio,direct")

int main(void)
{
	const struct CMUnitTest tests[] = {
		EACH(test_random_reads),
		EACH(test_reap_respects_max),
		EACH(test_reap_polls),
		EACH(test_batched_submit),
		cmocka_unit_test(test_batch_resolve),
		CASE(test_short_read_at_eof, uring_buffered, "io_uring"),
		CASE(test_short_read_at_eof, aio_buffered, "libaio"),
		CASE(test_short_read_at_eof, paio_buffered, "posixaio"),
		CASE(test_rejected_request_completes, uring_direct, "io_uring,direct"),
		CASE(test_rejected_request_completes, aio_direct, "libaio,direct"),
		CASE(test_rejected_request_completes, paio_direct, "posixaio,direct"),
		CASE(test_init_exit_repeat, uring_buffered, "io_uring"),
		CASE(test_init_exit_repeat, aio_buffered, "libaio"),
		CASE(test_init_exit_repeat, paio_buffered, "posixaio"),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
