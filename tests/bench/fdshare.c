/*
 * fdshare.c - what two threads pay when their pread(2)s go through one
 * open file (one descriptor, as faultline's threads share a job's target)
 * instead of one each (as fio's jobs, processes that open the file
 * themselves): each pread takes and drops a reference on the struct file
 * (two atomics) and stores the file's readahead state (f_ra.prev_pos),
 * all on lines both threads write.
 *
 * Two threads, one per CPU, 4 KiB preads at random offsets of a warm
 * FILE; each thread times chunks of CHUNK requests and a chunk counts as
 * "together" when both threads were on their CPUs for all of it, as in
 * lineshare.c. Not built by make:
 *
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -pthread tests/bench/fdshare.c -o build/fdshare
 *   build/fdshare FILE [SECONDS_PER_RUN] [ROUNDS]
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 128		/* requests per timed chunk: about 150 us */
#define MAX_CHUNKS (1u << 20)

struct chunk {
	uint64_t t0, t1;	/* CLOCK_MONOTONIC */
	uint64_t c0, c1;	/* CLOCK_THREAD_CPUTIME_ID */
};

struct thr {
	int fd;
	uint64_t nblocks;
	int cpu;
	unsigned chunk;
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

static void *loop(void *arg)
{
	struct thr *t = arg;
	uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)t->cpu;
	char *buf = aligned_alloc(4096, 4096);
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
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (pread(t->fd, buf, 4096, (off_t)(x % t->nblocks) * 4096) != 4096)
				abort();
		}
		c->c1 = clk(CLOCK_THREAD_CPUTIME_ID);
		c->t1 = clk(CLOCK_MONOTONIC);
		if (c->t1 >= t->deadline)
			break;
	}
	free(buf);
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

static void run(const char *name, const char *path, int own, double secs)
{
	pthread_barrier_t start;
	struct thr t[2];
	pthread_t th[2];
	struct stat sb;
	int shared = open(path, O_RDONLY);
	double *tog = malloc(2 * MAX_CHUNKS * sizeof(double));
	double *alone = malloc(2 * MAX_CHUNKS * sizeof(double));
	unsigned ntog = 0, nalone = 0;

	if (shared < 0 || fstat(shared, &sb))
		abort();
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		t[i] = (struct thr){ .fd = own ? open(path, O_RDONLY) : shared, .nblocks = (uint64_t)sb.st_size / 4096,
				     .cpu = i, .chunk = CHUNK,
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
	printf("%-6s together: %7.1f ns/pread (%6u chunks)   alone: %7.1f ns/pread (%6u chunks)\n",
	       name, median(tog, ntog), ntog, median(alone, nalone), nalone);
	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		free(t[i].ch);
		if (own)
			close(t[i].fd);
	}
	close(shared);
	free(tog);
	free(alone);
	pthread_barrier_destroy(&start);
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 2;
	int rounds = argc > 3 ? atoi(argv[3]) : 3;

	if (argc < 2) {
		fprintf(stderr, "usage: fdshare FILE [SECONDS_PER_RUN] [ROUNDS]\n");
		return 2;
	}
	printf("fdshare: %d rounds of %.1f s per mode, 4 KiB random preads of %s\n", rounds, secs, argv[1]);
	for (int r = 0; r < rounds; r++) {
		run("shared", argv[1], 0, secs);
		run("own", argv[1], 1, secs);
	}
	return 0;
}
