/*
 * prefetch.c - reading ahead of an mmap reader; see prefetch.h.
 *
 * Why a quarter of the window per step: one request per step keeps the
 * system calls (willneed, readahead) or hand-offs (populate, touch) to
 * four per window whatever bs is, while the reader never has less than
 * three quarters of the window requested ahead of it.
 */
#include "run/prefetch.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "run/offload.h"
#include "run/sigbus.h"
#include "lib/stats.h"
#include "engines/target.h"

/* Linux 5.14's uapi value; older headers lack the name. */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define PF_PAGE 4096ull
/* Ranges a helper may hold per stream: a window is four steps, and a
 * little slack for a helper that has just fallen behind. */
#define PF_ITEMS_PER_KEY 6

struct prefetch {
	struct prefetch_view v;		/* first: prefetch_advance reads it */
	enum prefetch_mode mode;
	unsigned nkeys;
	const struct target *targets;	/* the job's */
	struct thread_stats *st;	/* the reader's: counters */

	/* populate, touch: ranges handed to the helper. */
	struct offload_pool *pool;
	struct io_req *items;
	unsigned nitems;
	unsigned *freeq;		/* free item indices */
	unsigned nfree;
	struct io_req **done;
	uint64_t sink;			/* touch: the helper's reads */
};

unsigned prefetch_helpers(const struct job *j)
{
	return j->prefetch == PREFETCH_POPULATE || j->prefetch == PREFETCH_TOUCH ? 1 : 0;
}

int prefetch_check(const struct job *j, struct err *e)
{
	struct utsname u;
	void *p;
	int ret = 0;

	if (j->prefetch != PREFETCH_POPULATE)
		return 0;
	/* Ask the kernel: a private anonymous page it can populate. */
	p = mmap(NULL, PF_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return err_set(e, errno, "prefetch=populate: mmap: %s", strerror(errno));
	if (madvise(p, PF_PAGE, MADV_POPULATE_READ) < 0) {
		int err = errno;

		if (uname(&u) < 0)
			snprintf(u.release, sizeof(u.release), "?");
		ret = err_set(e, err == EINVAL ? ENOTSUP : err,
			      "prefetch=populate needs MADV_POPULATE_READ (Linux 5.14 or later); "
			      "this kernel (%s) answers %s: use willneed, readahead or touch",
			      u.release, strerror(err));
	}
	munmap(p, PF_PAGE);
	return ret;
}

/* ---- the helper ------------------------------------------------------ */

static void helper_touch(struct prefetch *p, struct io_req *r, const uint8_t *map)
{
	const struct prefetch_key *k = &p->v.keys[r->target];
	uint64_t off = r->off, end = r->off + r->len;
	uint64_t sink = 0;

	for (unsigned n = 0; off < end; off += PF_PAGE, n++) {
		/* Pages the reader has passed are its own already. */
		if (n % 64 == 0) {
			uint64_t cur = __atomic_load_n(&k->cur, __ATOMIC_RELAXED);

			if (cur > off)
				off = cur & ~(PF_PAGE - 1);
			if (off >= end)
				break;
		}
		sink += *(const volatile uint8_t *)(map + off);
	}
	p->sink += sink;
	r->res = 0;
}

static void helper_populate(struct prefetch *p, struct io_req *r, const uint8_t *map)
{
	const struct prefetch_key *k = &p->v.keys[r->target];
	uint64_t off = r->off, end = r->off + r->len;
	uint64_t cur = __atomic_load_n(&k->cur, __ATOMIC_RELAXED) & ~(PF_PAGE - 1);

	if (cur > off)
		off = cur;
	if (off >= end) {
		r->res = 0;
		return;
	}
	r->res = madvise((void *)(map + off), (size_t)(end - off), MADV_POPULATE_READ) < 0 ? -errno : 0;
}

/* Runs in the helper thread. A SIGBUS while touching (the file shrank)
 * ends this range only: the reader meets the same page and reports it. */
static void helper_run(void *arg, unsigned helper, struct io_req *r)
{
	struct prefetch *p = arg;
	const uint8_t *map = p->targets[p->v.keys[r->target].target].map;
	sigjmp_buf jb;

	(void)helper;
	if (p->mode == PREFETCH_POPULATE) {
		helper_populate(p, r, map);
		return;
	}
	if (sigsetjmp(jb, 0)) {
		sigbus_recover();
		r->res = -EFAULT;
		return;
	}
	sigbus_arm(&jb);
	helper_touch(p, r, map);
	sigbus_arm(NULL);
}

/* ---- the reader's side --------------------------------------------- */

static void recycle(struct prefetch *p)
{
	unsigned n = offload_reap(p->pool, p->done, p->nitems, false);

	for (unsigned i = 0; i < n; i++)
		p->freeq[p->nfree++] = p->done[i]->slot;
}

/* Ask for [from, from+n) of @k's target. 0, or -EBUSY when the helper
 * holds all it may. */
static int request(struct prefetch *p, struct prefetch_key *k, uint64_t from, uint64_t n)
{
	const struct target *t = &p->targets[k->target];
	uint64_t a = from & ~(PF_PAGE - 1);
	struct io_req *r;

	switch (p->mode) {
	case PREFETCH_WILLNEED:
		/* Hints: a failure costs the reader its faults, nothing else. */
		madvise((uint8_t *)t->map + a, (size_t)(from + n - a), MADV_WILLNEED);
		return 0;
	case PREFETCH_READAHEAD:
		readahead(t->fd, (off64_t)a, (size_t)(from + n - a));
		return 0;
	case PREFETCH_POPULATE:
	case PREFETCH_TOUCH:
		if (!p->nfree)
			recycle(p);
		if (!p->nfree)
			return -EBUSY;
		r = &p->items[p->freeq[--p->nfree]];
		r->target = (uint16_t)(k - p->v.keys);
		r->off = a;
		r->len = (uint32_t)(from + n - a);
		if (offload_submit(p->pool, r) < 0) {
			p->freeq[p->nfree++] = r->slot;
			return -EBUSY;
		}
		return 0;
	case PREFETCH_NONE:
		break;
	}
	return 0;
}

void prefetch_step(struct prefetch *p, struct prefetch_key *k, uint64_t off, uint32_t len)
{
	struct thread_stats *st = p->st;
	uint64_t want;

	/* Out of order (a new piece of a shared scan, a wrap): start the
	 * window again here. */
	if (off < k->cur || off > k->next)
		k->next = off;
	__atomic_store_n(&k->cur, off, __ATOMIC_RELAXED);
	want = off + len + p->v.window;
	if (want > k->hi)
		want = k->hi;
	if (want <= k->next || (want - k->next < p->v.step && want < k->hi))
		return;
	if (request(p, k, k->next, want - k->next) < 0) {
		stat_add(&st->prefetch_skipped, 1);
		return;
	}
	stat_add(&st->prefetch_reqs, 1);
	stat_add(&st->prefetch_bytes, want - k->next);
	k->next = want;
}

void prefetch_key_set(struct prefetch *p, unsigned key, unsigned target, uint64_t lo, uint64_t hi)
{
	struct prefetch_key *k = &p->v.keys[key];

	k->target = target;
	k->lo = lo;
	k->hi = hi;
	k->cur = lo;
	k->next = lo;
}

int prefetch_start(struct prefetch **pp, const struct job *j, const struct target *targets,
		   struct thread_stats *reader_st, unsigned nkeys,
		   struct thread_stats *helper_st, struct err *e)
{
	struct prefetch *p;
	int ret;

	*pp = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(e, ENOMEM, "prefetch: out of memory");
	p->mode = j->prefetch;
	p->targets = targets;
	p->st = reader_st;
	p->nkeys = nkeys;
	p->v.window = j->prefetch_window;
	p->v.step = (j->prefetch_window / 4) & ~(PF_PAGE - 1);
	if (p->v.step < PF_PAGE)
		p->v.step = PF_PAGE;
	p->v.keys = calloc(nkeys, sizeof(*p->v.keys));
	if (!p->v.keys)
		goto out_nomem;
	if (prefetch_helpers(j)) {
		struct offload_config c = {
			.nhelpers = 1,
			.run = helper_run,
			.arg = p,
			.stats = helper_st,
			.notify = false,
		};

		p->nitems = nkeys * PF_ITEMS_PER_KEY;
		p->items = calloc(p->nitems, sizeof(*p->items));
		p->freeq = calloc(p->nitems, sizeof(*p->freeq));
		p->done = calloc(p->nitems, sizeof(*p->done));
		if (!p->items || !p->freeq || !p->done)
			goto out_nomem;
		for (unsigned i = 0; i < p->nitems; i++) {
			p->items[i].slot = (uint16_t)i;
			p->freeq[p->nfree++] = p->nitems - 1 - i;
		}
		c.max_outstanding = p->nitems;
		ret = offload_start(&p->pool, &c, e);
		if (ret) {
			prefetch_stop(p);
			return err_wrap(e, "prefetch");
		}
	}
	*pp = p;
	return 0;
out_nomem:
	prefetch_stop(p);
	return err_set(e, ENOMEM, "prefetch: out of memory");
}

unsigned prefetch_pending(struct prefetch *p)
{
	if (!p->pool)
		return 0;
	recycle(p);
	return offload_outstanding(p->pool);
}

void prefetch_stop(struct prefetch *p)
{
	if (!p)
		return;
	offload_stop(p->pool);
	free(p->items);
	free(p->freeq);
	free(p->done);
	free(p->v.keys);
	free(p);
}
