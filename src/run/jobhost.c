/*
 * jobhost.c - see jobhost.h: the mem_limit worker process, the job's
 * cgroup and its reserved memory.
 */
#include "run/jobhost.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/latclock.h"
#include "run/arena.h"

void jobhost_init(struct job_host *h)
{
	memset(h, 0, sizeof(*h));
	h->child_go = -1;
}

int jobhost_cgroup(struct job_host *h, const char *name, uint64_t limit, struct err *e)
{
	int ret = cgroup_create(&h->cg, name, limit, e);

	if (!ret)
		h->has_cg = true;
	return ret;
}

int jobhost_fork(struct job_host *h, struct crew *c,
		 int (*prepare)(void *arg, struct err *e), void *arg, struct err *e)
{
	int ready[2], go[2];
	uint64_t clock[3];
	pid_t parent = getpid();
	char ch;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return err_set(e, errno, "mem_limit: pipe: %s", strerror(errno));
	if (pipe2(go, O_CLOEXEC) < 0) {
		close(ready[0]);
		close(ready[1]);
		return err_set(e, errno, "mem_limit: pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(ready[0]);
		close(ready[1]);
		close(go[0]);
		close(go[1]);
		return err_set(e, err, "mem_limit: fork: %s", strerror(err));
	}
	if (pid == 0) {
		struct err ce = { 0 };
		int ok;

		/* Die with the parent, even a parent killed by SIGKILL;
		 * a parent that died before prctl took effect is noticed by
		 * the changed parent pid. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		close(ready[0]);
		close(go[1]);
		c->cg = &h->cg;
		ok = cgroup_enter(&h->cg, 0, &ce) == 0 && (!prepare || prepare(arg, &ce) == 0);
		if (!ok)
			crew_fail(c, &ce);
		ch = ok ? 'r' : 'f';
		if (write(ready[1], &ch, 1) != 1 || !ok ||
		    read(go[0], clock, sizeof(clock)) != sizeof(clock))
			_exit(1);
		c->wk.start_ns = clock[0];
		c->wk.ramp_end_ns = clock[1];
		c->wk.deadline_ns = clock[2];
		if (crew_spawn(c, &ce) < 0)
			crew_fail(c, &ce);
		crew_join(c);
		_exit(0);
	}
	h->child = pid;
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &ch, 1) != 1 || ch != 'r') {
		const struct thread_stats *st = &c->wk.stats[0];

		close(ready[0]);
		close(go[1]);
		waitpid(pid, NULL, 0);
		h->child = 0;
		if (st->failed)
			return err_set(e, st->error.code ? st->error.code : EIO, "%s", st->error.what);
		return err_set(e, EIO, "mem_limit: the worker process died before starting");
	}
	close(ready[0]);
	h->child_go = go[1];
	return 0;
}

/* Hand the waiting child its clock; closing the pipe unblocks it. */
int jobhost_go(struct job_host *h, const struct crew *c, struct err *e)
{
	uint64_t clock[3] = { c->wk.start_ns, c->wk.ramp_end_ns, c->wk.deadline_ns };
	int ok = write(h->child_go, clock, sizeof(clock)) == sizeof(clock);
	int err = errno;

	close(h->child_go);
	h->child_go = -1;
	if (!ok) {
		kill(h->child, SIGKILL);
		waitpid(h->child, NULL, 0);
		h->child = 0;
		return err_set(e, err, "mem_limit: cannot start the worker process: %s", strerror(err));
	}
	return 0;
}

bool jobhost_exited(struct job_host *h)
{
	/* A worker process that died (OOM killer) sets no done flags:
	 * notice its exit instead of waiting for them forever. */
	if (h->child > 0 && !h->child_reaped &&
	    waitpid(h->child, &h->child_status, WNOHANG) == h->child)
		h->child_reaped = true;
	return h->child_reaped;
}

void jobhost_wait(struct job_host *h, struct crew *c)
{
	int status = h->child_status;

	if (h->child_go >= 0) {
		/* Ready but never started (run_group starts every job it
		 * readied, so only a caller that gives up between the two
		 * steps): the child reads EOF and exits, once no worker
		 * process forked after it still holds the pipe's end. */
		close(h->child_go);
		h->child_go = -1;
	}
	if (h->child <= 0)
		return;
	while (!h->child_reaped && waitpid(h->child, &status, 0) < 0 && errno == EINTR)
		;
	/* A worker process killed by a signal (the OOM killer under a
	 * tight mem_limit) is a job failure, said plainly. */
	if (WIFSIGNALED(status) && !c->wk.stats[0].failed) {
		struct thread_stats *st = &c->wk.stats[0];
		char how[320];

		/* What the cgroup held and its limit, and whether its OOM
		 * killer did it (read before jobhost_release removes it). */
		cgroup_describe_kill(h->has_cg ? &h->cg : NULL, WTERMSIG(status), how, sizeof(how));
		st->error.code = strstr(how, "OOM killer") ? ENOMEM : EINTR;
		st->error.target = WORKER_ERROR_SETUP;
		st->error.offset = 0;
		snprintf(st->error.what, sizeof(st->error.what), "worker process %s", how);
		STAT_STORE(&st->failed, 1);
	}
	crew_mark_done(c);
	h->child = 0;
	h->child_reaped = false;
}

/* How long a dry start may take to set up before it is given up. */
#define MEASURE_TIMEOUT_NS (30ull * 1000000000ull)

/* In the measuring child: set the crew up against its own counters and
 * stop flag, hold it at the gate, say so on @ready, wait for @go. */
static int measure_child(struct crew *c, struct cgroup *cg, struct arena *a,
			 struct dry_gate *g, int ready, int go)
{
	struct work *wk = &c->wk;
	struct err ce = { 0 };
	bool setup = false;
	uint64_t t0;
	char ch = 'm';
	int rc = 0;

	if (cgroup_enter(cg, 0, &ce) < 0)
		return 1;
	wk->stats = a->ts;
	wk->job_stop = &a->ts[0].job_stop;
	wk->stop = &g->stop;
	wk->dry = g;
	wk->flow = NULL;	/* no request: no flow (the run's is shared) */
	for (unsigned i = 0; i < c->nworkers; i++)
		c->workers[i].st = &a->ts[i];
	/* Threads share the engine's job state, made here as job_run_ready
	 * makes it; worker processes make their own. */
	if (wk->ops->job_setup && wk->job->thread) {
		if (wk->ops->job_setup(&wk->ej, &ce) < 0)
			return 1;
		setup = true;
	}
	if (crew_spawn(c, &ce) < 0)
		rc = 1;
	t0 = now_ns();
	for (;;) {
		unsigned done = 0;

		for (unsigned i = 0; i < c->nworkers; i++)
			done += STAT_LOAD(&a->ts[i].done) != 0;
		if ((unsigned)__atomic_load_n(&g->ready, __ATOMIC_ACQUIRE) + done >= c->nworkers ||
		    now_ns() - t0 > MEASURE_TIMEOUT_NS)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	if (write(ready, &ch, 1) != 1 || read(go, &ch, 1) < 0)
		rc = 1;
	__atomic_store_n(&g->release, 1, __ATOMIC_RELEASE);
	crew_join(c);
	if (setup && wk->ops->job_teardown)
		wk->ops->job_teardown(&wk->ej);
	return rc;
}

int jobhost_measure(struct crew *c, const char *name, uint64_t *charge, struct err *e)
{
	struct arena a = { 0 };
	struct dry_gate *g;
	struct cgroup cg;
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 };
	pid_t parent = getpid(), pid;
	char ch;
	int ret;

	ret = cgroup_create(&cg, name, 0, e);
	if (ret)
		return ret;
	/* Counters of their own, initialised here as run_prepare does the
	 * real ones, so the dry crew touches the same pages the real one
	 * will, and nothing the sampler reads. */
	ret = arena_create(&a, c->wk.slots.total);
	g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ret || g == MAP_FAILED || pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		ret = err_set(e, ret ? -ret : errno, "mem_limit: measuring the worker process: %s",
			      strerror(ret ? -ret : errno));
		goto out;
	}
	memset(g, 0, sizeof(*g));
	if (job_writes(c->wk.job))
		for (unsigned i = 0; i < c->nworkers; i++)
			stats_init_writes(&a.ts[i]);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = err_set(e, errno, "mem_limit: measuring the worker process: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		close(ready[0]);
		close(go[1]);
		_exit(measure_child(c, &cg, &a, g, ready[1], go[0]));
	}
	close(ready[1]);
	close(go[0]);
	ready[1] = go[0] = -1;
	if (read(ready[0], &ch, 1) != 1) {
		ret = err_set(e, EIO, "mem_limit: the process measuring the worker's memory died");
	} else {
		ret = cgroup_charge_nonfile(&cg, charge);
		if (ret)
			err_set(e, -ret, "mem_limit: reading what %s is charged: %s", cg.path, strerror(-ret));
	}
	close(go[1]);
	go[1] = -1;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
out:
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (go[i] >= 0)
			close(go[i]);
	}
	if (g != MAP_FAILED && g)
		munmap(g, sizeof(*g));
	arena_destroy(&a);
	cgroup_destroy(&cg);
	return ret;
}

void jobhost_release(struct job_host *h)
{
	if (h->has_cg) {
		cgroup_destroy(&h->cg);
		h->has_cg = false;
	}
	reserve_release(&h->reserve);
}
