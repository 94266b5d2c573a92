/*
 * offload.c - the helper pool; see offload.h.
 *
 * Each helper has two single-producer/single-consumer rings: requests in
 * (the owner produces, the helper consumes) and completions out (the
 * reverse). A ring is a power-of-two array of request pointers with a
 * free-running head and tail, each written by one side only and read by
 * the other with acquire loads; each side keeps a cached copy of the
 * other's index, so a push or pop touches the other side's cache line
 * only when its cached copy says the ring is full or empty.
 *
 * Sleeping: a thread with nothing to do sets its `asleep` word, looks
 * once more, and waits on the word with FUTEX_WAIT. Whoever gives it
 * work publishes the work, then looks at `asleep` and wakes it only if
 * set. Both sides' store and then load are sequentially consistent (the
 * Dekker pattern: on x86 the store is an xchg, which is also the full
 * fence this needs; explicit fences would do the same but ThreadSanitizer
 * cannot follow them), so either the sleeper sees the work or the
 * producer sees the sleeper: no wake-up is lost, and a thread that is
 * awake costs its producer no system call.
 */
#include "run/offload.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/latclock.h"

struct ring {
	/* The producer's line. */
	uint32_t head __attribute__((aligned(CACHELINE)));
	uint32_t tail_seen;
	/* The consumer's line. */
	uint32_t tail __attribute__((aligned(CACHELINE)));
	uint32_t head_seen;
	/* Read-only once made. */
	uint32_t mask __attribute__((aligned(CACHELINE)));
	struct io_req **slot;
};

struct sleeper {
	uint32_t asleep __attribute__((aligned(CACHELINE)));
};

struct helper {
	struct offload_pool *pool;
	unsigned index;
	struct thread_stats *st;
	struct ring in;		/* owner -> helper */
	struct ring out;	/* helper -> owner */
	struct sleeper sleep;
	pthread_t thread;
	bool started;
} __attribute__((aligned(CACHELINE)));

struct offload_pool {
	struct offload_config c;
	struct helper *h;
	unsigned *busy;		/* per helper: submitted, not reaped (owner only) */
	unsigned outstanding;	/* owner only */
	unsigned next;		/* where the owner's search starts */
	int stop;
	struct sleeper owner;
};

/* ---- rings ----------------------------------------------------------- */

static int ring_init(struct ring *q, unsigned cap)
{
	unsigned n = 2;

	while (n < cap)
		n <<= 1;
	q->slot = calloc(n, sizeof(*q->slot));
	if (!q->slot)
		return -ENOMEM;
	q->mask = n - 1;
	return 0;
}

static inline bool ring_push(struct ring *q, struct io_req *r)
{
	uint32_t h = q->head;

	if (h - q->tail_seen > q->mask) {
		q->tail_seen = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
		if (h - q->tail_seen > q->mask)
			return false;
	}
	q->slot[h & q->mask] = r;
	/* Sequentially consistent: the first half of the wake-up check. */
	__atomic_store_n(&q->head, h + 1, __ATOMIC_SEQ_CST);
	return true;
}

static inline struct io_req *ring_pop(struct ring *q)
{
	uint32_t t = q->tail;
	struct io_req *r;

	if (t == q->head_seen) {
		q->head_seen = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
		if (t == q->head_seen)
			return NULL;
	}
	r = q->slot[t & q->mask];
	__atomic_store_n(&q->tail, t + 1, __ATOMIC_RELEASE);
	return r;
}

/* Consumer side, after announcing sleep: anything to pop? */
static inline bool ring_ready(struct ring *q)
{
	return q->tail != __atomic_load_n(&q->head, __ATOMIC_SEQ_CST);
}

/* ---- sleeping and waking ------------------------------------------- */

static void futex_wait(uint32_t *w, uint32_t val)
{
	/* EAGAIN (already woken), EINTR: the caller looks again anyway. */
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* After publishing work for @s's thread (a sequentially consistent
 * store). */
static inline void sleeper_wake(struct sleeper *s)
{
	if (__atomic_load_n(&s->asleep, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&s->asleep, 0, __ATOMIC_RELAXED);
		syscall(SYS_futex, &s->asleep, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

/* Announce sleep; the caller then looks for work once more (loads
 * that are sequentially consistent) before it waits. */
static inline void sleeper_announce(struct sleeper *s)
{
	__atomic_store_n(&s->asleep, 1, __ATOMIC_SEQ_CST);
}

static inline void sleeper_wait(struct sleeper *s)
{
	futex_wait(&s->asleep, 1);
	__atomic_store_n(&s->asleep, 0, __ATOMIC_RELAXED);
}

static inline void sleeper_cancel(struct sleeper *s)
{
	__atomic_store_n(&s->asleep, 0, __ATOMIC_RELAXED);
}

/* ---- a helper -------------------------------------------------------- */

static void usage_now(uint64_t *maj, uint64_t *min, uint64_t *nvcsw, int *ok)
{
	*ok = stats_thread_usage(maj, min, nvcsw) == 0;
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	struct offload_pool *p = h->pool;
	struct thread_stats *st = h->st;
	int ok;

	if (st) {
		STAT_STORE(&st->pid, getpid());
		STAT_STORE(&st->tid, gettid());
		usage_now(&st->start_majflt, &st->start_minflt, &st->start_nvcsw, &ok);
		st->cpu_ok = stats_thread_cpu(&st->start_utime_ns, &st->start_stime_ns,
					      &st->start_nivcsw) == 0;
		st->start_ns = now_ns();
		STAT_STORE(&st->running, 1);
	}
	for (;;) {
		struct io_req *r = ring_pop(&h->in);

		if (!r) {
			if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
				break;
			sleeper_announce(&h->sleep);
			if (ring_ready(&h->in) || __atomic_load_n(&p->stop, __ATOMIC_SEQ_CST)) {
				sleeper_cancel(&h->sleep);
				continue;
			}
			sleeper_wait(&h->sleep);
			continue;
		}
		if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE) && !p->c.notify)
			r->res = -ECANCELED;	/* prefetch at the end: not worth doing */
		else
			p->c.run(p->c.arg, h->index, r);
		/* Rings hold max_outstanding: never full. */
		ring_push(&h->out, r);
		if (p->c.notify)
			sleeper_wake(&p->owner);
	}
	if (st) {
		usage_now(&st->exit_majflt, &st->exit_minflt, &st->exit_nvcsw, &ok);
		st->rusage_ok = ok;
		if (st->cpu_ok)
			st->cpu_ok = stats_thread_cpu(&st->exit_utime_ns, &st->exit_stime_ns,
						      &st->exit_nivcsw) == 0;
		STAT_STORE(&st->end_ns, now_ns());
		STAT_STORE(&st->running, 0);
		STAT_STORE(&st->done, 1);
	}
	return NULL;
}

/* ---- the owner's side ---------------------------------------------- */

static void pool_free(struct offload_pool *p)
{
	for (unsigned i = 0; p->h && i < p->c.nhelpers; i++) {
		free(p->h[i].in.slot);
		free(p->h[i].out.slot);
	}
	free(p->h);
	free(p->busy);
	free(p);
}

int offload_start(struct offload_pool **pp, const struct offload_config *c, struct err *e)
{
	struct offload_pool *p;
	int ret;

	*pp = NULL;
	if (!c->nhelpers || !c->max_outstanding || !c->run)
		return err_set(e, EINVAL, "offload: %u helpers, %u outstanding: both must be > 0",
			       c->nhelpers, c->max_outstanding);
	p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(e, ENOMEM, "offload: out of memory");
	p->c = *c;
	p->h = aligned_alloc(CACHELINE, sizeof(*p->h) * c->nhelpers);
	p->busy = calloc(c->nhelpers, sizeof(*p->busy));
	if (!p->h || !p->busy) {
		free(p->h);
		p->h = NULL;
		pool_free(p);
		return err_set(e, ENOMEM, "offload: out of memory");
	}
	memset(p->h, 0, sizeof(*p->h) * c->nhelpers);
	for (unsigned i = 0; i < c->nhelpers; i++) {
		struct helper *h = &p->h[i];

		h->pool = p;
		h->index = i;
		h->st = c->stats ? &c->stats[i] : NULL;
		if (ring_init(&h->in, c->max_outstanding) || ring_init(&h->out, c->max_outstanding)) {
			pool_free(p);
			return err_set(e, ENOMEM, "offload: out of memory");
		}
	}
	/* Helpers inherit the owner's CPU affinity, memory policy and
	 * (ordinary) scheduling class. */
	for (unsigned i = 0; i < c->nhelpers; i++) {
		ret = pthread_create(&p->h[i].thread, NULL, helper_main, &p->h[i]);
		if (ret) {
			err_set(e, ret, "offload: starting helper %u of %u: %s", i, c->nhelpers,
				strerror(ret));
			offload_stop(p);
			return -ret;
		}
		p->h[i].started = true;
	}
	*pp = p;
	return 0;
}

int offload_submit(struct offload_pool *p, struct io_req *r)
{
	unsigned n = p->c.nhelpers, best = p->next;
	struct helper *h;

	if (p->outstanding >= p->c.max_outstanding)
		return -EBUSY;
	/* The least busy helper, searching from after the last one used
	 * so equal ones take turns. */
	for (unsigned k = 0, i = p->next; k < n && p->busy[best]; k++, i = i + 1 == n ? 0 : i + 1)
		if (p->busy[i] < p->busy[best])
			best = i;
	h = &p->h[best];
	if (!ring_push(&h->in, r))
		return -EBUSY;
	p->busy[best]++;
	p->outstanding++;
	p->next = best + 1 == n ? 0 : best + 1;
	sleeper_wake(&h->sleep);
	return 0;
}

static unsigned collect(struct offload_pool *p, struct io_req **done, unsigned max)
{
	unsigned got = 0;

	for (unsigned i = 0; i < p->c.nhelpers && got < max; i++) {
		struct io_req *r;

		if (!p->busy[i])
			continue;
		while (got < max && (r = ring_pop(&p->h[i].out))) {
			done[got++] = r;
			p->busy[i]--;
			p->outstanding--;
		}
	}
	return got;
}

unsigned offload_reap(struct offload_pool *p, struct io_req **done, unsigned max, bool wait)
{
	for (;;) {
		unsigned got = collect(p, done, max);
		bool ready = false;

		if (got || !wait || !p->outstanding)
			return got;
		sleeper_announce(&p->owner);
		for (unsigned i = 0; i < p->c.nhelpers && !ready; i++)
			ready = p->busy[i] && ring_ready(&p->h[i].out);
		if (ready)
			sleeper_cancel(&p->owner);
		else
			sleeper_wait(&p->owner);
	}
}

unsigned offload_outstanding(const struct offload_pool *p)
{
	return p->outstanding;
}

void offload_stop(struct offload_pool *p)
{
	if (!p)
		return;
	__atomic_store_n(&p->stop, 1, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < p->c.nhelpers; i++)
		sleeper_wake(&p->h[i].sleep);
	for (unsigned i = 0; i < p->c.nhelpers; i++)
		if (p->h[i].started)
			pthread_join(p->h[i].thread, NULL);
	pool_free(p);
}
