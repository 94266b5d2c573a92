/*
 * probe.c - the queue depth for io_uring O_DIRECT in a verdict: at
 * each depth, PROBE_STEP_S of random 4 KiB O_DIRECT reads of the
 * target, the first PROBE_WARM of it not counted; the depth picked is the
 * smallest within PROBE_NEAR of the best rate, so a device that overlaps
 * 64 reads gets 64, and one that overlaps none gets 1. Measured on the
 * development VM's virtio disk: 4-12k IOPS at depth 1, 106-122k at 64-256.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "verdict/probe.h"

#define PROBE_BS 4096
#define PROBE_STEP_S 0.2
#define PROBE_WARM 0.25
#define PROBE_NEAR 0.10

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

unsigned verdict_depth_pick(const unsigned *depths, const double *iops, unsigned n)
{
	double best = 0;

	for (unsigned i = 0; i < n; i++)
		if (iops[i] > best)
			best = iops[i];
	for (unsigned i = 0; i < n; i++)
		if (best > 0 && iops[i] >= best * (1 - PROBE_NEAR))
			return depths[i];
	return VERDICT_DEPTH_DEFAULT;
}

/* Reads per second at @depth, or -errno. */
static double at_depth(struct io_uring *ring, int fd, uint8_t *buf, uint64_t blocks, unsigned depth,
		       uint64_t *seed)
{
	double t0 = now_s(), end = t0 + PROBE_STEP_S, from = t0 + PROBE_STEP_S * PROBE_WARM, t;
	uint64_t done = 0, counted = 0;
	unsigned inflight = 0;
	int ret = 0;

	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;

		while (inflight < depth) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			if (!sqe)
				break;
			io_uring_prep_read(sqe, fd, buf + (size_t)inflight * PROBE_BS, PROBE_BS,
					   (next_rand(seed) % blocks) * PROBE_BS);
			inflight++;
		}
		ret = io_uring_submit_and_wait(ring, 1);
		if (ret < 0 && ret != -EINTR)
			break;
		io_uring_for_each_cqe(ring, head, cqe) {
			if (cqe->res < 0 && ret >= 0)
				ret = cqe->res;
			n++;
		}
		io_uring_cq_advance(ring, n);
		inflight -= n;
		done += n;
		if (ret < 0)
			break;
		t = now_s();
		if (!counted && t >= from) {
			counted = done ? done : 1;
			t0 = t;
		}
		if (t >= end)
			break;
	}
	while (inflight) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(ring, &cqe) < 0)
			break;
		io_uring_cqe_seen(ring, cqe);
		inflight--;
	}
	if (ret < 0)
		return ret;
	return (double)(done - counted) / (now_s() - t0);
}

int verdict_depth_probe(const char *path, uint64_t size, struct depth_probe *p, char *why,
			size_t whylen)
{
	struct io_uring ring;
	uint8_t *buf = NULL;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	double t0 = now_s();
	int fd, ret;

	memset(p, 0, sizeof(*p));
	p->depth = VERDICT_DEPTH_DEFAULT;
	if (size < (1u << 20)) {
		snprintf(why, whylen, "%s: too small to probe", path);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "%s: O_DIRECT: %s", path, strerror(errno));
		return ret;
	}
	ret = io_uring_queue_init(PROBE_DEPTH_MAX, &ring, 0);
	if (ret < 0) {
		snprintf(why, whylen, "io_uring: %s", strerror(-ret));
		close(fd);
		return ret;
	}
	if (posix_memalign((void **)&buf, PROBE_BS, (size_t)PROBE_BS * PROBE_DEPTH_MAX)) {
		ret = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	for (unsigned d = 1; d <= PROBE_DEPTH_MAX && p->n < sizeof(p->depths) / sizeof(p->depths[0]);
	     d *= 2) {
		double r = at_depth(&ring, fd, buf, size / PROBE_BS, d, &seed);

		if (r < 0) {
			ret = (int)r;
			snprintf(why, whylen, "%s: a read at depth %u: %s", path, d, strerror(-ret));
			goto out;
		}
		p->depths[p->n] = d;
		p->iops[p->n++] = r;
	}
	p->depth = verdict_depth_pick(p->depths, p->iops, p->n);
	ret = 0;
out:
	p->seconds = now_s() - t0;
	free(buf);
	io_uring_queue_exit(&ring);
	close(fd);
	return ret;
}
