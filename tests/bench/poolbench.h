/*
 * poolbench.h - what tests/bench/pool_hit.c and pool_evict.c share: the
 * clock, and the pools' device side in memory (a page's bytes are its
 * number; writes are refused, the benches only read).
 */
#ifndef FAULTLINE_BENCH_POOLBENCH_H
#define FAULTLINE_BENCH_POOLBENCH_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define PAGE 4096u

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int fill_vm(void *arg, uint64_t pid, uint8_t *page)
{
	(void)arg;
	memset(page, (int)(pid & 0xff), PAGE);
	return 0;
}

static int fill_bp(void *arg, uint32_t key, uint8_t *frame)
{
	(void)arg;
	memset(frame, (int)(key & 0xff), PAGE);
	return 0;
}

static int no_write_vm(void *arg, uint64_t pid, const uint8_t *page)
{
	(void)arg, (void)pid, (void)page;
	return -EINVAL;
}

static int no_write_bp(void *arg, uint32_t key, const uint8_t *frame)
{
	(void)arg, (void)key, (void)frame;
	return -EINVAL;
}

#endif
