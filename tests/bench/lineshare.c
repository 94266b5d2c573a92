/*
 * lineshare.c - what two workers pay when worker 0's per-request store
 * (its sink) lands on the cache line that holds worker 1's head, which
 * worker 1 reads on every request (issue 24; tests/bench/README.md).
 *
 * Two threads, one per CPU, each a stand-in for a worker's loop: per
 * "request" it loads its worker's wk and st, steps the generator's state
 * (gen.rng), does WORK steps of private arithmetic (the request itself),
 * loads wk again and adds to its sink: the stores and loads faultline's loops make on
 * struct worker, at struct worker's own offsets. The two workers sit
 * side by side as before the fix, worker 1 starting 40 bytes after
 * worker 0's sink (from 4278b3b to 7b893b4 sink was at 368 of 408
 * bytes), with worker 0's sink at the start of a line ("shared": worker
 * 1's head on the same line, as calloc placed them in the runs of the
 * issue) or 32 bytes into one ("apart": on the next line); and as today
 * ("aligned": sizeof(struct worker) apart, from a line's start).
 *
 * On a shared host the two threads run together only now and then, so
 * each thread times itself in chunks of about 150 us of requests (wall
 * and thread CPU time) and a chunk counts as "together" when neither thread was
 * off its CPU during it; "alone" chunks ran while the other thread
 * waited for a CPU. A line shared costs only while they run together.
 * Not built by make:
 *
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -pthread -Isrc tests/bench/lineshare.c \
 *       -o build/lineshare
 *   build/lineshare [SECONDS_PER_RUN] [ROUNDS] [WORK]
 */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/worker.h"

/* From worker 0's sink to worker 1 before the fix: sink and the 32 bytes
 * after it (prefetch, loop, thread, started), unaligned. */
#define OLD_STRIDE (offsetof(struct worker, sink) + 40)
/* Worker 0's base such that its sink sits @into bytes into a line. */
#define SINK_AT(into) ((64 - offsetof(struct worker, sink) % 64 + (into)) % 64)
/* Requests per timed chunk: about 150 us of them, short enough that both
 * threads often run through a whole one together on a busy host. */
#define CHUNK_STEPS 150000u
#define MAX_CHUNKS (1u << 20)

struct chunk {
	uint64_t t0, t1;	/* CLOCK_MONOTONIC */
	uint64_t c0, c1;	/* CLOCK_THREAD_CPUTIME_ID */
};

struct thr {
	uint8_t *w;		/* this worker's bytes */
	int cpu;
	unsigned work, chunk;
	uint64_t deadline;
	struct chunk *ch;
	unsigned nch;
	pthread_barrier_t *start;
};

static uint64_t clk(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define FIELD(w, member) ((volatile uint64_t *)((w) + offsetof(struct worker, member)))

static void *loop(void *arg)
{
	struct thr *t = arg;
	volatile uint64_t *wk = FIELD(t->w, wk), *st = FIELD(t->w, st);
	volatile uint64_t *rng = FIELD(t->w, gen.rng), *sink = FIELD(t->w, sink);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(t->start);
	while (t->nch < MAX_CHUNKS) {
		struct chunk *c = &t->ch[t->nch++];

		c->t0 = clk(CLOCK_MONOTONIC);
		c->c0 = clk(CLOCK_THREAD_CPUTIME_ID);
		for (unsigned i = 0; i < t->chunk; i++) {
			uint64_t x = *wk + *st + *rng;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			*rng = x;
			for (unsigned k = 0; k < t->work; k++)
				x = x * 6364136223846793005ull + 1442695040888963407ull;
			/* consume() reads w->wk again after the request */
			*sink += x + *wk;
		}
		c->c1 = clk(CLOCK_THREAD_CPUTIME_ID);
		c->t1 = clk(CLOCK_MONOTONIC);
		if (c->t1 >= t->deadline)
			break;
	}
	return NULL;
}

/* A chunk the thread spent on its CPU (its CPU time within 2 % of its
 * wall time). */
static int on_cpu(const struct chunk *c)
{
	return (c->c1 - c->c0) * 100 >= (c->t1 - c->t0) * 98;
}

/* Whether @o's on-CPU chunks cover [t0, t1] (consecutive ones leave gaps
 * of two clock reads, under 2 us). */
static int covered(const struct thr *o, uint64_t t0, uint64_t t1)
{
	uint64_t from = 0, to = 0;
	int open = 0;

	for (unsigned i = 0; i < o->nch; i++) {
		const struct chunk *c = &o->ch[i];

		if (!on_cpu(c)) {
			open = 0;
			continue;
		}
		if (!open || c->t0 > to + 2000) {
			from = c->t0;
			open = 1;
		}
		to = c->t1;
		if (from <= t0 && to >= t1)
			return 1;
		if (c->t0 > t1)
			break;
	}
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One run of @secs with worker 1 @stride bytes after worker 0 at @base;
 * prints ns per request of the chunks run together and alone. */
static void run(const char *name, uint8_t *base, size_t stride, double secs, unsigned work)
{
	pthread_barrier_t start;
	struct thr t[2];
	pthread_t th[2];
	double *tog = malloc(2 * MAX_CHUNKS * sizeof(double));
	double *alone = malloc(2 * MAX_CHUNKS * sizeof(double));
	unsigned ntog = 0, nalone = 0;

	memset(base, 0, 2 * stride + 64);
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		t[i] = (struct thr){ .w = base + (size_t)i * stride, .cpu = i, .work = work,
				     .chunk = work ? (CHUNK_STEPS / work > 16 ? CHUNK_STEPS / work : 16) : CHUNK_STEPS,
				     .deadline = clk(CLOCK_MONOTONIC) + (uint64_t)(secs * 1e9),
				     .ch = calloc(MAX_CHUNKS, sizeof(struct chunk)), .start = &start };
		pthread_create(&th[i], NULL, loop, &t[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		for (unsigned k = 0; k < t[i].nch; k++) {
			const struct chunk *c = &t[i].ch[k];
			double ns = (double)(c->t1 - c->t0) / t[i].chunk;

			if (!on_cpu(c))
				continue;
			if (covered(&t[1 - i], c->t0, c->t1))
				tog[ntog++] = ns;
			else
				alone[nalone++] = ns;
		}
	}
	printf("%-8s sink line %s worker 1's head   together: %7.1f ns/request (%6u chunks)   alone: %7.1f ns/request (%6u chunks)\n",
	       name,
	       ((uintptr_t)(base + offsetof(struct worker, sink)) / 64 == (uintptr_t)(base + stride) / 64) ? "=" : "!=",
	       median(tog, ntog), ntog, median(alone, nalone), nalone);
	fflush(stdout);
	for (int i = 0; i < 2; i++)
		free(t[i].ch);
	free(tog);
	free(alone);
	pthread_barrier_destroy(&start);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	unsigned work = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 150;
	uint8_t *mem = aligned_alloc(64, 4096);

	printf("lineshare: %d rounds of %.1f s per layout, %u steps of work per request, offsets: wk %zu, st %zu, gen.rng %zu, sink %zu\n",
	       rounds, secs, work, offsetof(struct worker, wk), offsetof(struct worker, st),
	       offsetof(struct worker, gen.rng), offsetof(struct worker, sink));
	for (int r = 0; r < rounds; r++) {
		run("apart", mem + SINK_AT(32), OLD_STRIDE, secs, work);
		run("shared", mem + SINK_AT(0), OLD_STRIDE, secs, work);
		run("aligned", mem + 0, sizeof(struct worker), secs, work);
	}
	free(mem);
	return 0;
}
