/*
 * pool_pin.c - published pins and the waits of both pools; see
 * pool_pin.h.
 */
#include "engines/pool_pin.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void pool_pin_init(struct pool_pins *pp, void *mem, uint32_t max)
{
	pp->readers = mem;
	pp->max = max;
	pp->n = 0;
	pp->light = false;
	memset(mem, 0xff, (size_t)max * sizeof(struct pool_reader));
}

int pool_pin_light(struct pool_pins *pp)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) < 0)
		return -errno;
	pp->light = true;
	return 0;
}

void pool_pin_fence(const struct pool_pins *pp)
{
	/* Registered in pool_pin_light, the command cannot fail. */
	if (pp->light)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

struct pool_reader *pool_pin_reader_new(struct pool_pins *pp)
{
	uint32_t n = __atomic_load_n(&pp->n, __ATOMIC_RELAXED);

	do
		if (n >= pp->max)
			return NULL;
	while (!__atomic_compare_exchange_n(&pp->n, &n, n + 1, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED));
	return &pp->readers[n];
}

bool pool_pin_published(const struct pool_pins *pp, uint64_t v)
{
	const uint32_t n = __atomic_load_n(&pp->n, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++)
		for (unsigned j = 0; j < POOL_PIN_SLOTS; j++)
			if (__atomic_load_n(&pp->readers[i].slot[j], __ATOMIC_SEQ_CST) == v)
				return true;
	return false;
}

int pool_pin_wait(const struct pool_pins *pp, uint64_t v, const int *const *stop)
{
	pool_pin_fence(pp);
	for (unsigned i = 0; pool_pin_published(pp, v); i++) {
		if (i < POOL_SPIN) {
			pool_cpu_relax();
			continue;
		}
		if (pool_stopped(stop))
			return -ECANCELED;
		sched_yield();
	}
	return 0;
}

int pool_pin_check(const struct pool_pins *pp, const char *who, struct err *e)
{
	for (uint32_t i = 0; i < pp->n; i++)
		for (unsigned j = 0; j < POOL_PIN_SLOTS; j++)
			if (pp->readers[i].slot[j] != POOL_PIN_EMPTY)
				return err_set(e, EUCLEAN, "%s: reader %u still holds %llu in slot %u",
					       who, i,
					       (unsigned long long)pp->readers[i].slot[j], j);
	return 0;
}

void pool_futex_wait(uint32_t *word, uint32_t val)
{
	static const struct timespec slice = { .tv_sec = 0, .tv_nsec = POOL_WAIT_SLICE_NS };

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &slice, NULL, 0);
}

void pool_futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
