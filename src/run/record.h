/*
 * record.h - a worker's replay and recording (read_iolog, write_iolog):
 * the two hooks the loops of worker.c call per request, and the
 * recorder's set-up around them. The logs themselves are
 * workload/iolog.c's.
 *
 * record_next() is where a loop's requests come from: the generator's,
 * or the replayed log's next one, which waits for its due time unless
 * replay_no_stall. record_req() records a request as it goes to the
 * engine. Without either option each costs one predictable branch.
 */
#ifndef FAULTLINE_RECORD_H
#define FAULTLINE_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "engines/engine.h"
#include "lib/err.h"
#include "job/job.h"
#include "lib/latclock.h"
#include "workload/gen.h"
#include "workload/iolog.h"

/* One worker's share. */
struct record {
	/* read_iolog: its log, the next request in it, and the loop's
	 * start, which the due times count from. */
	const struct replay *rp;
	size_t next;
	uint64_t start_ns;
	/* What ends a wait: the run's and the job's stop flags, the deadline. */
	const int *stop, *job_stop;
	uint64_t deadline_ns;
	/* write_iolog: the recorder, and the names it gives the worker's
	 * targets (indexed from tfirst). */
	struct iolog_writer *log;
	uint64_t t0_ticks;	/* the loop's start on the latency clock */
	const char **paths;
	unsigned tfirst;
};

/* record_next's value when it waited for a replayed request's due time:
 * the time waited is no request's latency, so the loop restarts its
 * clock. */
#define NEXT_WAITED 2

/* Sleep until @due (CLOCK_MONOTONIC ns), waking every 50 ms to see a
 * stop or the deadline. False when the worker is to stop instead. */
bool record_wait(const struct record *rc, uint64_t due);

/*
 * The replayed log's next request (rc->rp set), what the log says it is
 * in *@op (IOLOG_READ, IOLOG_WRITE, IOLOG_SYNC or IOLOG_DATASYNC: the
 * loops of a job that writes replay all four), its target in *@tgt
 * (from 0), *@off, *@len: 0 when there is none (or a stop came while
 * waiting for its due time), 1, or NEXT_WAITED when it slept first.
 */
static inline int record_next_op(struct record *rc, unsigned *op, unsigned *tgt, uint64_t *off,
				 uint32_t *len)
{
	const struct replay_req *q;
	int got = 1;

	if (rc->next == rc->rp->n)
		return 0;
	q = &rc->rp->req[rc->next++];
	if (q->due_ns && now_ns() < rc->start_ns + q->due_ns) {
		if (!record_wait(rc, rc->start_ns + q->due_ns))
			return 0;
		got = NEXT_WAITED;
	}
	*op = q->op;
	*tgt = q->target;
	*off = q->off;
	*len = q->len;
	return got;
}

/* The next request of a read loop: the generator's, or the replay's
 * (record_next_op, which a read job's replay_set holds only reads for). */
static inline int record_next(struct record *rc, struct gen *g, unsigned *tgt, uint64_t *off,
			      uint32_t *len)
{
	unsigned op;

	if (__builtin_expect(!rc->rp, 1))
		return gen_next(g, tgt, off, len);
	return record_next_op(rc, &op, tgt, off, len);
}

/* A replay whose next request is not due yet: an asynchronous loop
 * with requests in flight reaps them first rather than sleeping over
 * their completions (which would count the sleep in their latency). */
static inline bool record_due_later(const struct record *rc)
{
	const struct replay_req *q;

	if (__builtin_expect(!rc->rp, 1) || rc->next == rc->rp->n)
		return false;
	q = &rc->rp->req[rc->next];
	return q->due_ns && now_ns() < rc->start_ns + q->due_ns;
}

/* The start of a worker's loop: a replay's due times and a recording's
 * timestamps count from here; @deadline_ns (0: none) ends a wait. */
static inline void record_begin(struct record *rc, uint64_t deadline_ns)
{
	rc->start_ns = now_ns();
	rc->deadline_ns = deadline_ns ? deadline_ns : UINT64_MAX;
	if (rc->log) {
		rc->log->t0_ns = rc->start_ns;
		rc->t0_ticks = latclock_ticks();
	}
}

/* write_iolog: @r as it goes to the engine. */
static inline void record_req(struct record *rc, const struct io_req *r)
{
	enum iolog_op op = IOLOG_READ;

	if (__builtin_expect(!rc->log, 1))
		return;
	if (r->op == IO_WRITE)
		op = IOLOG_WRITE;
	else if (r->op == IO_FLUSH)
		op = r->datasync ? IOLOG_DATASYNC : IOLOG_SYNC;
	else if (r->op == IO_TRIM)
		op = IOLOG_TRIM;
	/* The latency clock (the TSC where it is usable): a clock_gettime
	 * per request was a sixth of a logging worker's time. */
	iolog_add(rc->log, latclock_ns(latclock_ticks() - rc->t0_ticks) / 1000, r->target - rc->tfirst, op,
		  r->off, r->len);
}

/*
 * In the worker's thread, at set-up: worker @id of @job, its targets
 * @targets[tfirst..tfirst+tcount) (@null: the null engine's virtual one,
 * logged as "null"), replaying @set's log for it (NULL: no replay) and
 * recording when the job says write_iolog.
 */
int record_setup(struct record *rc, const struct job *job, unsigned id, const struct replay_set *set,
		 const struct target *targets, unsigned tfirst, unsigned tcount, bool null,
		 const int *stop, const int *job_stop, struct err *e);
/* After the loop: the close lines and the last write; 0 or the error. */
int record_close(struct record *rc, struct err *e);
/* Whatever is still held, on any path. */
void record_free(struct record *rc);

#endif
