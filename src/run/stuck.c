/*
 * stuck.c - see stuck.h: a job that did not stop when asked.
 */
#include "run/stuck.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "engines/engine.h"

static const char *const op_names[IO_NOPS] = { [IO_READ] = "read", [IO_WRITE] = "write",
						 [IO_FLUSH] = "flush", [IO_TRIM] = "trim" };

/* Where worker @i runs: its process (thread=0, or the mem_limit process
 * its threads run in), or 0 for a thread of this process. */
static pid_t worker_process(const struct job_run *jr, unsigned i)
{
	const struct thread_stats *st = &jr->crew.wk.stats[i];
	pid_t pid = STAT_LOAD(&st->pid);

	/* Not published yet (still setting up): the pid its leader forked,
	 * when that leader is a thread of this process. */
	if (pid <= 0 && !jr->job->thread && !jobhost_forked(&jr->host))
		pid = __atomic_load_n(&jr->crew.workers[i].pid, __ATOMIC_RELAXED);
	return pid > 0 && pid != getpid() ? pid : 0;
}

void stuck_describe(const struct job_run *jr, char *buf, size_t len)
{
	const struct crew *c = &jr->crew;
	unsigned first = c->nworkers, more = 0;
	int n;

	for (unsigned i = 0; i < c->nworkers; i++) {
		if (STAT_LOAD(&c->wk.stats[i].done))
			continue;
		if (first == c->nworkers)
			first = i;
		else
			more++;
	}
	if (first == c->nworkers) {
		snprintf(buf, len, "ioengine=%s, every worker ended meanwhile", c->wk.ops->name);
		return;
	}
	{
		const struct thread_stats *st = &c->wk.stats[first];
		const pid_t pid = worker_process(jr, first);
		const unsigned op = __atomic_load_n(&st->last_op, __ATOMIC_RELAXED);
		const unsigned tgt = __atomic_load_n(&st->last_target, __ATOMIC_RELAXED);
		const uint64_t off = __atomic_load_n(&st->last_off, __ATOMIC_RELAXED);
		const uint32_t rlen = __atomic_load_n(&st->last_len, __ATOMIC_RELAXED);
		const char *path = tgt < jr->ntargets ? jr->targets[tgt].path : "?";

		if (pid)
			n = snprintf(buf, len, "worker %u (process %d): ioengine=%s, ", first, (int)pid,
				     c->wk.ops->name);
		else
			n = snprintf(buf, len, "worker %u (thread %d): ioengine=%s, ", first,
				     (int)STAT_LOAD(&st->tid), c->wk.ops->name);
		if (n < 0 || (size_t)n >= len)
			return;
		if (!op || op > IO_NOPS)
			n += snprintf(buf + n, len - (size_t)n, "no request issued yet");
		else if (op - 1 == IO_FLUSH)
			n += snprintf(buf + n, len - (size_t)n, "last request: flush of %s", path);
		else
			n += snprintf(buf + n, len - (size_t)n, "last request: %s of %u bytes at offset %llu of %s",
				      op_names[op - 1], rlen, (unsigned long long)off, path);
	}
	if (more && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; %u more worker%s had not stopped", more,
			 more == 1 ? "" : "s");
}

unsigned stuck_kill(struct job_run *jr)
{
	const struct crew *c = &jr->crew;
	unsigned n = 0;

	for (unsigned i = 0; i < c->nworkers; i++) {
		pid_t pid = worker_process(jr, i);

		/* Ended workers' processes may be gone, their pids reused. */
		if (pid && pid != jr->host.child && !STAT_LOAD(&c->wk.stats[i].done) && kill(pid, SIGKILL) == 0)
			n++;
	}
	/* The mem_limit process: its worker processes die with it too
	 * (PR_SET_PDEATHSIG). */
	if (jobhost_forked(&jr->host) && !jr->host.child_reaped && kill(jr->host.child, SIGKILL) == 0)
		n++;
	return n;
}
