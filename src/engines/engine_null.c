/*
 * engine_null.c - no I/O at all: every request completes at once and
 * nothing is consumed. What remains is faultline's own cost per request
 * (offset generation, statistics, the clock, and for writes the stamping
 * of each block), the ceiling every other engine's overhead can be read
 * against. Writes and flushes are counted and go nowhere.
 */
#include <stddef.h>

#include "engines/engine.h"

static int null_queue(struct engine_thread *et, struct io_req *r)
{
	(void)et;
	r->res = r->op == IO_FLUSH ? 0 : r->len;	/* a trim, too, is done */
	r->data = NULL;		/* nothing to touch */
	return ENGINE_DONE;
}

const struct engine_ops engine_null = {
	.name = "null",
	.help = "no I/O: requests (reads, writes, flushes) complete at once and are not consumed; "
		"measures faultline's own per-request cost",
	.flags = ENGINE_F_NO_TARGET,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE) | ENGINE_OP(IO_FLUSH) | ENGINE_OP(IO_TRIM),
	.queue = null_queue,
};
