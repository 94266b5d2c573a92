/*
 * pace.h - a worker's pace: fio's rate, rate_iops and
 * rate_process, rate_min and rate_iops_min over rate_cycle, and
 * thinktime with thinktime_spin and thinktime_blocks.
 *
 * The schedule is fio's (backend.c usec_for_io): with rate_process=
 * linear the request that follows B bytes of a direction is due B / rate
 * seconds after the loop began (rate_iops: rate = rate_iops times the
 * smallest size); with poisson each gap is exponential with mean
 * 1 / iops. A worker ahead of its schedule sleeps until the next request
 * is due; one behind issues at once. Either way the request's latency
 * counts from when it was due, not from when it was issued, so a stalled
 * worker's backlog shows in the percentiles (coordinated omission); the
 * summary, JSON (jobs[].faultline.latency_from) and CSV (lat_from) say
 * so. Thinktime stalls after every thinktime_blocks completions; it is
 * no request's latency.
 *
 * fio's flow (flow, flow_id, flow_sleep; fio's flow.c) rides on the same
 * branch: the threads of the jobs sharing a flow_id share a counter of
 * requests (struct pace_flow, in memory shared with worker processes)
 * and the sum of their weights; a thread whose share of the requests
 * exceeds its share of the weights is held back (it sleeps flow_sleep
 * microseconds, or tries again at once) until the others catch up, so
 * the jobs' requests go in the ratio of their weights. The weights of a
 * stonewall group's threads are counted by the controller before any of
 * them starts (as fio counts every job's at set-up), so a thread that
 * starts first cannot run ahead alone; each thread leaves with its
 * requests and weight when it ends, as fio's do. The wait is no
 * request's latency.
 *
 * fio's latency_target (latency_window, latency_percentile,
 * latency_run; fio's io_u.c lat_target_*) too, for the asynchronous
 * loops: the thread keeps at most qd requests in flight, starting at 1;
 * a request over the target counts as a miss (with latency_percentile
 * 100 it lowers the depth at once, and at depth 1 fails the job with
 * ETIMEDOUT, as fio); after each latency_window the depth goes up when
 * the share of requests within the target reached latency_percentile
 * (doubling until the first miss, then bisecting between the last good
 * and the first bad depth), else down; when it would stay where it is,
 * one more window runs at that depth and the thread ends (unless
 * latency_run). Whenever the depth goes down, what is in flight
 * completes first.
 *
 * A plain job's loops pay one predictable branch per request (pace.on).
 */
#ifndef FAULTLINE_PACE_H
#define FAULTLINE_PACE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"
#include "lib/latclock.h"
#include "run/reqclock.h"
#include "lib/rng.h"

/* One flow_id's shared state, on a line of its own. */
struct pace_flow {
	uint64_t count;			/* requests of its threads, plus 1 (fio's start) */
	uint64_t weight;		/* the weights of the threads now in it */
} __attribute__((aligned(64)));

struct pace {
	bool on;			/* any rate, rate_min, thinktime or flow */
	bool rated[2];			/* a schedule for reads, writes */
	bool offload;			/* io_submit_mode=offload: no drain before a wait */
	bool poisson;
	uint64_t bps[2];		/* bytes per second */
	uint64_t mean_ns[2];		/* poisson: 1e9 / iops */
	uint64_t bytes[2];		/* linear: bytes issued */
	uint64_t next_ns[2];		/* poisson: the next due time, from start */
	uint64_t start_ns;
	uint64_t rng;

	/* thinktime */
	uint64_t think_ns, spin_ns;
	unsigned think_blocks, think_count;
	bool think_due;			/* async: thinktime once nothing is in flight */
	bool drain;			/* async: reap everything in flight before the next wait */

	/* rate_min / rate_iops_min, checked once per rate_cycle */
	uint64_t min_bps[2], min_iops[2];
	uint64_t cycle_ns, next_check_ns;
	uint64_t last_bytes[2], last_ios[2], last_check_ns;

	/* latency_target */
	bool lt;			/* on */
	bool lt_run, lt_end_run, lt_quiesce;
	int lt_state;			/* 0 searching, 1 found (the thread ends), -1 failed */
	unsigned qd, qd_low, qd_high, qd_max, lt_stable;
	uint64_t lt_target, lt_window, lt_cycle_ns, lt_ios, lt_failed, lt_miss_ns;
	double lt_pct;

	/* flow */
	struct pace_flow *flow;		/* NULL: no flow */
	uint64_t flow_weight, flow_count;	/* this thread's weight and requests */
	uint64_t flow_sleep_ns;
	bool flow_joined;
};

/* For worker @worker of @j with @seed (the job's). */
static inline void pace_init(struct pace *p, const struct job *j, unsigned worker, uint64_t seed)
{
	uint64_t x = seed ^ 0x7061636500ull ^ ((uint64_t)worker << 40);

	*p = (struct pace){ 0 };
	p->rng = splitmix64(&x) | 1;
	p->poisson = j->rate_process == RATE_POISSON;
	p->offload = j->io_submit_mode == 1;
	for (unsigned d = 0; d < 2; d++) {
		const struct job_dir *dd = &j->dir[d];
		uint64_t min_bs = job_bs_min(j, d);

		p->bps[d] = dd->rate ? dd->rate : dd->rate_iops * min_bs;
		p->rated[d] = p->bps[d] != 0;
		if (p->rated[d]) {
			uint64_t iops = p->bps[d] / min_bs;

			p->mean_ns[d] = 1000000000ull / (iops ? iops : 1);
		}
		p->min_bps[d] = dd->rate_min;
		p->min_iops[d] = dd->rate_iops_min;
	}
	p->think_ns = j->thinktime_ns;
	p->spin_ns = j->thinktime_spin_ns;
	p->think_blocks = j->thinktime_blocks ? j->thinktime_blocks : 1;
	p->cycle_ns = (uint64_t)(j->rate_cycle_ms ? j->rate_cycle_ms : 1000) * 1000000ull;
	if (j->latency_target_ns) {
		p->lt = true;
		p->lt_target = j->latency_target_ns;
		p->lt_window = j->latency_window_ns;
		p->lt_pct = j->latency_percentile;
		p->lt_run = j->latency_run;
		p->qd = p->qd_low = 1;
		p->qd_high = p->qd_max = j->iodepth ? j->iodepth : 1;
	}
	p->on = p->rated[0] || p->rated[1] || p->think_ns || p->min_bps[0] || p->min_bps[1] ||
		p->min_iops[0] || p->min_iops[1] || p->lt;
}

/* flow: the job's flow_id's shared state (NULL: the job has no flow). */
static inline void pace_flow_init(struct pace *p, const struct job *j, struct pace_flow *f)
{
	if (!f || !j->flow)
		return;
	p->flow = f;
	p->flow_weight = j->flow;
	p->flow_sleep_ns = (uint64_t)j->flow_sleep_us * 1000;
	/* Its weight is in already (pace_flow_join, by the controller). */
	p->flow_joined = true;
	p->on = true;
}

/* The controller: @n threads of weight @w join (or, negative, leave)
 * flow @f before they start (or when they never will). */
static inline void pace_flow_join(struct pace_flow *f, unsigned w, unsigned n, bool leave)
{
	if (!f || !w || !n)
		return;
	if (leave)
		__atomic_sub_fetch(&f->weight, (uint64_t)w * n, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&f->weight, (uint64_t)w * n, __ATOMIC_RELAXED);
}

/* flow: the thread has ended (its loop, or its set-up); its requests and
 * weight leave the flow (fio's flow_exit_job). Once. */
static inline void pace_end(struct pace *p)
{
	if (!p->flow_joined)
		return;
	__atomic_sub_fetch(&p->flow->count, p->flow_count, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&p->flow->weight, p->flow_weight, __ATOMIC_RELAXED);
	p->flow_joined = false;
}

/* The loop begins: the schedule counts from here (fio: 2 s settle
 * before rate_min is first checked). */
#define PACE_MIN_SETTLE_NS 2000000000ull

static inline void pace_begin(struct pace *p)
{
	p->start_ns = now_ns();
	p->lt_cycle_ns = p->start_ns;
	p->last_check_ns = p->start_ns;
	p->next_check_ns = p->start_ns + PACE_MIN_SETTLE_NS;
}

/* When the next request of direction @d is due (CLOCK_MONOTONIC ns);
 * 0 when the direction is unpaced. */
static inline uint64_t pace_due(const struct pace *p, unsigned d)
{
	if (!p->rated[d])
		return 0;
	if (p->poisson)
		return p->start_ns + p->next_ns[d];
	return p->start_ns + (uint64_t)((unsigned __int128)p->bytes[d] * 1000000000ull / p->bps[d]);
}

/* A request of @len bytes of direction @d was issued. */
static inline void pace_issued(struct pace *p, unsigned d, uint32_t len)
{
	if (!p->rated[d])
		return;
	if (p->poisson) {
		uint64_t x = p->rng;
		double u;

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		p->rng = x;
		u = (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
		/* fio: mean 1/iops times -ln(u), u in (0, 1] */
		p->next_ns[d] += (uint64_t)((double)p->mean_ns[d] * -log(1.0 - u));
	} else {
		p->bytes[d] += len;
	}
}

/* A completion: true when thinktime is due now (the caller drains its
 * requests in flight, then calls pace_think). */
static inline bool pace_completed(struct pace *p)
{
	return p->think_ns && ++p->think_count >= p->think_blocks;
}

/* latency_target: a completion of latency @ns at @now (pace.c). */
void pace_lat(struct pace *p, uint64_t ns, uint64_t now);

/* An asynchronous loop's completion of latency @ns at @now (a paced
 * loop's, pace.on): latency_target's sample, thinktime's count. */
static inline void pace_done_async(struct pace *p, uint64_t ns, uint64_t now)
{
	if (p->lt)
		pace_lat(p, ns, now);
	if (pace_completed(p))
		p->think_due = true;
}

struct record;
struct req_clock;
struct thread_stats;

/*
 * flow: is this thread ahead of its share (fio's flow_threshold_exceeded:
 * its requests over the flow's exceed its weight over the flow's)? When
 * not, the request it is about to issue is counted.
 */
static inline bool pace_flow_ahead(struct pace *p)
{
	uint64_t count = __atomic_load_n(&p->flow->count, __ATOMIC_RELAXED);
	uint64_t weight = __atomic_load_n(&p->flow->weight, __ATOMIC_RELAXED);

	if ((unsigned __int128)p->flow_count * weight > (unsigned __int128)p->flow_weight * count)
		return true;
	__atomic_add_fetch(&p->flow->count, 1, __ATOMIC_RELAXED);
	p->flow_count++;
	return false;
}

/* pace_sync, pace_async: rate_min was not met (the reason in @why). */
#define PACE_MIN_FAILED (-2)

/*
 * A synchronous loop's request of direction @d is next: wait for its due
 * time and start its latency there (coordinated omission: a late
 * request's wait counts). 1 to issue it, 0 when a stop came,
 * PACE_MIN_FAILED.
 */
int pace_sync(struct pace *p, const struct record *rc, const struct thread_stats *st, unsigned d,
	      struct req_clock *clk, char *why, size_t n);

/* After a synchronous request completed: thinktime when due; the stall
 * is no request's latency. False when a stop came meanwhile. */
bool pace_sync_done(struct pace *p, const struct record *rc, struct req_clock *clk);

/*
 * An asynchronous loop's next request of direction @d: 1 to issue it
 * (*@t, its latency's start, becomes its due time), 0 to reap first
 * (requests in flight while it is not due, or thinktime due: p->drain
 * says all of them, as fio quiesces with io_submit_mode=inline), -1 to
 * stop, PACE_MIN_FAILED.
 */
int pace_async(struct pace *p, const struct record *rc, const struct thread_stats *st, unsigned d,
	       unsigned inflight, bool lat, uint64_t *t, char *why, size_t n);

/* Until @due (CLOCK_MONOTONIC ns), sleeping, then spinning the last
 * stretch; false when a stop came meanwhile. */
bool pace_wait(const struct record *rc, uint64_t due);

/* thinktime: thinktime_spin busy, the rest asleep. False when a stop
 * came meanwhile. */
bool pace_think(struct pace *p, const struct record *rc);

/*
 * rate_min, rate_iops_min: after the 2 s settle, once per rate_cycle,
 * whether the thread's bytes or requests of each direction over the
 * cycle fell below the minimum; then 1 and the reason in @why.
 */
int pace_min_check(struct pace *p, const struct thread_stats *st, char *why, size_t n);

#endif
