/*
 * pace.c - the parts of a worker's pace that sleep or judge (pace.h):
 * thinktime's spin and sleep, and rate_min's check per rate_cycle.
 */
#include "run/pace.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>

#include "lib/stats.h"
#include "run/record.h"

/* A sleep wakes up to tens of microseconds late on a busy host, and a
 * paced request's latency counts from its due time: sleep until this
 * long before it, then spin (at 2000 IOPS about 12 % of a CPU). */
#define PACE_SPIN_NS 60000ull

bool pace_wait(const struct record *rc, uint64_t due)
{
	if (due > PACE_SPIN_NS && !record_wait(rc, due - PACE_SPIN_NS))
		return false;
	while (now_ns() < due)
		;
	return true;
}

bool pace_think(struct pace *p, const struct record *rc)
{
	uint64_t t0 = now_ns();

	p->think_count = 0;
	/* fio's usec_spin: busy on the CPU, as an application computing. */
	while (p->spin_ns && now_ns() - t0 < p->spin_ns)
		;
	if (p->think_ns > p->spin_ns)
		return record_wait(rc, t0 + p->think_ns);
	return true;
}

int pace_min_check(struct pace *p, const struct thread_stats *st, char *why, size_t n)
{
	uint64_t now = now_ns(), spent;
	int bad = 0;

	if (now < p->next_check_ns)
		return 0;
	spent = now - p->last_check_ns;
	for (unsigned d = 0; d < 2; d++) {
		uint64_t bytes = d ? STAT_LOAD(&st->wbytes) : STAT_LOAD(&st->rbytes);
		uint64_t ios = d ? STAT_LOAD(&st->wops) : STAT_LOAD(&st->rops);
		/* the first check only sets the baseline after the settle, as fio */
		bool first = p->last_check_ns == p->start_ns;

		/* fio checks only directions that have done something */
		if (!bytes)
			continue;
		uint64_t bps = spent ? (uint64_t)((unsigned __int128)(bytes - p->last_bytes[d]) *
						  1000000000ull / spent) : 0;
		uint64_t iops = spent ? (uint64_t)((unsigned __int128)(ios - p->last_ios[d]) *
						   1000000000ull / spent) : 0;

		if (!first && !bad && p->min_bps[d] && bps < p->min_bps[d]) {
			snprintf(why, n, "rate_min=%llu B/s of %s not met: %llu B/s over the last "
				 "%llu ms", (unsigned long long)p->min_bps[d], d ? "writes" : "reads",
				 (unsigned long long)bps, (unsigned long long)(spent / 1000000));
			bad = 1;
		}
		if (!first && !bad && p->min_iops[d] && iops < p->min_iops[d]) {
			snprintf(why, n, "rate_iops_min=%llu of %s not met: %llu IOPS over the last "
				 "%llu ms", (unsigned long long)p->min_iops[d], d ? "writes" : "reads",
				 (unsigned long long)iops, (unsigned long long)(spent / 1000000));
			bad = 1;
		}
		p->last_bytes[d] = bytes;
		p->last_ios[d] = ios;
	}
	p->last_check_ns = now;
	p->next_check_ns = now + p->cycle_ns;
	return bad;
}

/*
 * flow, one request at a time: hold until this thread is within its
 * share; false when a stop or the deadline came meanwhile. The wait is
 * no request's latency: the clock restarts after it.
 */
static bool flow_sync(struct pace *p, const struct record *rc, struct req_clock *clk)
{
	bool waited = false;

	while (pace_flow_ahead(p)) {
		waited = true;
		if (__atomic_load_n(rc->stop, __ATOMIC_RELAXED) ||
		    __atomic_load_n(rc->job_stop, __ATOMIC_RELAXED))
			return false;
		if (p->flow_sleep_ns) {
			if (!record_wait(rc, now_ns() + p->flow_sleep_ns))
				return false;
		} else if (now_ns() >= rc->deadline_ns) {
			return false;
		} else {
			/* fio spins; the thread it waits for may need this CPU */
			sched_yield();
		}
	}
	if (waited && clk->lat)
		clk->t0 = latclock_ticks();
	return true;
}

int pace_sync(struct pace *p, const struct record *rc, const struct thread_stats *st, unsigned d,
	      struct req_clock *clk, char *why, size_t n)
{
	uint64_t due, now;

	if (pace_min_check(p, st, why, n))
		return PACE_MIN_FAILED;
	if (p->flow && !flow_sync(p, rc, clk))
		return 0;
	due = pace_due(p, d);
	if (!due)
		return 1;
	now = now_ns();
	if (now < due) {
		if (!pace_wait(rc, due))
			return 0;
		now = now_ns();
	}
	if (clk->lat)
		clk->t0 = latclock_ticks() - latclock_ticks_of(now - due);
	return 1;
}

bool pace_sync_done(struct pace *p, const struct record *rc, struct req_clock *clk)
{
	if (!pace_completed(p))
		return true;
	if (!pace_think(p, rc))
		return false;
	if (clk->lat)
		clk->t0 = latclock_ticks();
	return true;
}

/* ---- latency_target (fio's io_u.c lat_target_*, read, not copied) --- */

static void lt_cycle(struct pace *p, uint64_t now)
{
	p->lt_cycle_ns = now;
	p->lt_ios = 0;
	p->lt_failed = 0;
}

/* A miss: lower the depth (false), or at depth 1 give up (true). */
static bool lt_down(struct pace *p, uint64_t now)
{
	if (p->qd == 1)
		return true;
	p->qd_high = p->qd;
	if (p->qd == p->qd_low)
		p->qd_low--;
	p->qd = (p->qd + p->qd_low) / 2;
	p->lt_stable = 0;
	/* what is in flight at the higher depth completes first */
	p->lt_quiesce = true;
	lt_cycle(p, now);
	return false;
}

/* A window within the target: deeper, or, where it would stay, one
 * last window at this depth and then the end (unless latency_run). */
static void lt_up(struct pace *p, uint64_t now)
{
	unsigned qd = p->qd;

	p->qd_low = p->qd;
	/* stuck one below a bad depth three windows running: try it again */
	if (p->qd + 1 == p->qd_high && ++p->lt_stable >= 3) {
		p->qd_high++;
		p->lt_stable = 0;
	}
	if (p->qd_high != p->qd_max)
		p->qd = (p->qd + p->qd_high) / 2;
	else
		p->qd *= 2;
	if (p->qd > p->qd_max)
		p->qd = p->qd_max;
	if (!p->lt_run && p->qd == qd) {
		if (p->lt_end_run) {
			p->lt_state = 1;
		} else {
			p->lt_quiesce = true;
			p->lt_end_run = true;
		}
	}
	lt_cycle(p, now);
}

void pace_lat(struct pace *p, uint64_t ns, uint64_t now)
{
	if (p->lt_state)
		return;
	p->lt_ios++;
	if (ns > p->lt_target) {
		if (p->lt_pct >= 100.0) {
			if (lt_down(p, now)) {
				p->lt_state = -1;
				p->lt_miss_ns = ns;
			}
			return;
		}
		p->lt_failed++;
	}
	if (now - p->lt_cycle_ns < p->lt_window || !p->lt_ios)
		return;
	if ((double)(p->lt_ios - p->lt_failed) * 100.0 / (double)p->lt_ios >= p->lt_pct)
		lt_up(p, now);
	else
		lt_down(p, now);
}

int pace_async(struct pace *p, const struct record *rc, const struct thread_stats *st, unsigned d,
	       unsigned inflight, bool lat, uint64_t *t, char *why, size_t n)
{
	uint64_t due, now;

	if (pace_min_check(p, st, why, n))
		return PACE_MIN_FAILED;
	/* latency_target: ended, draining after a lower depth, or full */
	if (p->lt) {
		if (p->lt_state < 0) {
			snprintf(why, n, "latency_target: a request took %llu us at queue depth 1, "
				 "over the target of %llu us (latency_percentile=100)",
				 (unsigned long long)(p->lt_miss_ns / 1000),
				 (unsigned long long)(p->lt_target / 1000));
			return PACE_MIN_FAILED;
		}
		if (p->lt_state > 0)
			return -1;
		if (p->lt_quiesce) {
			if (inflight) {
				p->drain = true;
				return 0;
			}
			p->lt_quiesce = false;
		}
		if (inflight >= p->qd)
			return 0;
	}
	/* flow: ahead of its share, the thread first completes what it has
	 * in flight when it is to sleep (fio quiesces so), else reaps one;
	 * with nothing in flight it sleeps flow_sleep, then the loop asks
	 * again (and sees a stop or its deadline). */
	if (p->flow && pace_flow_ahead(p)) {
		if (inflight) {
			p->drain = p->flow_sleep_ns != 0;
			return 0;
		}
		if (p->flow_sleep_ns && !record_wait(rc, now_ns() + p->flow_sleep_ns))
			return -1;
		if (!p->flow_sleep_ns)
			sched_yield();
		return 0;
	}
	if (p->think_due) {
		if (inflight) {
			p->drain = true;
			return 0;
		}
		p->think_due = false;
		if (!pace_think(p, rc))
			return -1;
		if (lat)
			*t = now_ns();
	}
	due = pace_due(p, d);
	if (!due)
		return 1;
	now = now_ns();
	if (now < due) {
		if (inflight) {
			p->drain = !p->offload;
			return 0;
		}
		if (!pace_wait(rc, due))
			return -1;
	}
	if (lat)
		*t = due;
	return 1;
}
