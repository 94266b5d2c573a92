/*
 * async_engine_loop.c - an async engine alone, without the worker:
 * uniform random bs-sized reads of one file at a given depth for a given
 * time, the worker's fill/submit/reap loop in miniature with no stats,
 * no touch and no generator. The gap between this and ./faultline on
 * the same job is what the core costs; the gap between this and fio's
 * t/io_uring is what the engine costs. Not built by make; see
 * engines-async.md next to it.
 *
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -Isrc tests/bench/async_engine_loop.c \
 *       src/engines/engine_io_uring.c src/engines/engine_libaio.c src/lib/err.c -luring -laio \
 *       -o build/async_engine_loop
 *   build/async_engine_loop io_uring|libaio DEPTH FILE SECONDS [direct]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/engine.h"
#include "lib/latclock.h"
#include "run/enginecfg.h"

extern const struct engine_ops engine_io_uring;
extern const struct engine_ops engine_libaio;

#define BS	4096u

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	const struct engine_ops *ops;
	struct job job = { 0 };
	struct engine_job ej = { 0 };
	struct target t = { 0 };
	struct engine_thread w = { 0 };
	uint8_t *bufs;
	struct err e = { 0 };
	struct io_req **done;
	unsigned depth, *freeslots, nfree = 0, i;
	uint64_t seed = 88172645463325252ull, blocks, n = 0, sink = 0, t0, end;
	int secs;

	if (argc < 5) {
		fprintf(stderr, "usage: %s io_uring|libaio DEPTH FILE SECONDS [direct]\n", argv[0]);
		return 2;
	}
	ops = strcmp(argv[1], "libaio") ? &engine_io_uring : &engine_libaio;
	depth = (unsigned)atoi(argv[2]);
	secs = atoi(argv[4]);
	job.direct = argc > 5 && !strcmp(argv[5], "direct");
	job.bs = BS;
	job.iodepth = depth;
	t.fd = open(argv[3], O_RDONLY);
	t.fd_direct = job.direct ? open(argv[3], O_RDONLY | O_DIRECT) : -1;
	if (t.fd < 0 || (job.direct && t.fd_direct < 0)) {
		perror(argv[3]);
		return 1;
	}
	blocks = (uint64_t)lseek(t.fd, 0, SEEK_END) / BS;
	enginecfg_resolve(&ej, &job);
	ej.ntargets = 1;
	ej.targets = &t;
	ej.depth = depth;
	w.ej = &ej;
	w.reqs = calloc(depth, sizeof(*w.reqs));
	bufs = aligned_alloc(4096, (size_t)depth * BS);
	freeslots = calloc(depth, sizeof(*freeslots));
	done = calloc(depth, sizeof(*done));
	if (!w.reqs || !bufs || !freeslots || !done || !blocks)
		return 1;
	for (i = 0; i < depth; i++) {
		w.reqs[i].slot = (uint16_t)i;
		w.reqs[i].buf = bufs + (size_t)i * BS;
		freeslots[nfree++] = i;
	}
	if (ops->init(&w, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}

	t0 = now_ns();
	end = t0 + (uint64_t)secs * 1000000000ull;
	while (now_ns() < end) {
		int got;

		while (nfree) {
			struct io_req *r = &w.reqs[freeslots[--nfree]];

			r->target = 0;
			r->off = (xorshift(&seed) % blocks) * BS;
			r->len = BS;
			ops->queue(&w, r);
		}
		if (ops->submit)
			ops->submit(&w);
		got = ops->reap(&w, 1, depth, done);
		if (got < 0) {
			fprintf(stderr, "reap: %s\n", strerror(-got));
			return 1;
		}
		for (i = 0; i < (unsigned)got; i++) {
			if (done[i]->res != BS) {
				fprintf(stderr, "offset %llu: res %lld\n",
					(unsigned long long)done[i]->off, (long long)done[i]->res);
				return 1;
			}
			sink += done[i]->data[0];
			freeslots[nfree++] = done[i]->slot;
		}
		n += (unsigned)got;
	}
	printf("%s depth %u%s: %.0f IOPS (%llu)\n", ops->name, depth,
	       job.direct ? " direct" : "", n / ((now_ns() - t0) / 1e9),
	       (unsigned long long)(sink & 1));
	ops->exit(&w);	/* waits for what is still in flight */
	return 0;
}
