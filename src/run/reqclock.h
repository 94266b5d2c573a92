/*
 * reqclock.h - a synchronous loop's request clock: one read of the
 * latency clock (lib/latclock.h) ends a request and starts the next, and
 * the deadline is looked at only now and then. The request cores of
 * worker.c and the loops beside them (loop.c, trimloop.c, pace.c) use
 * it; nothing outside run/ does.
 */
#ifndef FAULTLINE_REQCLOCK_H
#define FAULTLINE_REQCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/histogram.h"
#include "lib/latclock.h"

/* With latency off a synchronous loop reads the clock only every this
 * many requests to notice the deadline: about a microsecond of work at
 * the fastest engine, so a run ends within microseconds of it. */
#define DEADLINE_CHECK_EVERY 64
/* With latency on it looks at the deadline (CLOCK_MONOTONIC, like the
 * run controller's) once this much latency-clock time has passed. */
#define DEADLINE_CHECK_NS 100000ull

/* A synchronous loop's request clock (req_clock_done). */
struct req_clock {
	bool lat;
	uint64_t deadline;	/* CLOCK_MONOTONIC ns; UINT64_MAX = none */
	uint64_t t0;		/* lat: latency-clock ticks when the request began */
	uint64_t next_check;	/* lat: ticks of the next deadline check */
	uint64_t check_ticks;	/* lat: DEADLINE_CHECK_NS in ticks */
	uint64_t n;		/* no lat: requests so far */
};

static inline void req_clock_start(struct req_clock *c, bool lat, uint64_t deadline)
{
	c->lat = lat;
	c->deadline = deadline;
	c->n = 0;
	c->check_ticks = latclock_ticks_of(DEADLINE_CHECK_NS);
	c->t0 = latclock_ticks();
	c->next_check = c->t0 + c->check_ticks;
}

/*
 * The end of one synchronous request: with latency on, one read of the
 * latency clock that both ends this request (its latency goes into
 * @lat_hist) and starts the next, and a look at the deadline every
 * DEADLINE_CHECK_NS; with it off, a clock read every DEADLINE_CHECK_EVERY
 * requests. True when the deadline has passed. Always inlined, as
 * hist_add in it: with it, it is larger than the compiler inlines by
 * itself, and a call here costs what inlining hist_add saved.
 */
static inline __attribute__((always_inline)) bool req_clock_done(struct req_clock *c, struct hist *lat_hist)
{
	if (c->lat) {
		uint64_t t1 = latclock_ticks();

		hist_add(lat_hist, latclock_ns(t1 - c->t0));
		c->t0 = t1;
		if (t1 < c->next_check)
			return false;
		c->next_check = t1 + c->check_ticks;
		return now_ns() >= c->deadline;
	}
	return ++c->n % DEADLINE_CHECK_EVERY == 0 && now_ns() >= c->deadline;
}

#endif
