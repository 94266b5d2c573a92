/*
 * reserve.h - reserve_mem: hold anonymous memory locked while a
 * job runs, so the whole host runs short of page cache and kswapd does
 * the eviction, as in the paper's setting.
 */
#ifndef FAULTLINE_RESERVE_H
#define FAULTLINE_RESERVE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* What must stay available after the reservation: the paper's host
 * still had room for its own processes; 1 GiB keeps this one usable. */
#define RESERVE_HEADROOM (1ull << 30)

struct reserve {
	void *p;
	size_t len;
	uint64_t populate_ns;		/* how long populating and locking took */
};

/* Check that @len can be reserved leaving RESERVE_HEADROOM + @needs of
 * MemAvailable, and that this process may lock it. Nothing is taken. */
int reserve_check(uint64_t len, uint64_t needs, struct err *e);
/* Map, populate and mlock @len bytes (slow on a VM: timed). */
int reserve_take(struct reserve *r, uint64_t len, struct err *e);
/* Give it back; safe on an empty reserve. */
void reserve_release(struct reserve *r);

#endif
