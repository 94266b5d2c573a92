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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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

		/* Die with the parent, even a parent killed by SIGKILL (SPEC 8);
		 * a parent that died before prctl took effect is noticed by
		 * the changed parent pid. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		close(ready[0]);
		close(go[1]);
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

		st->error.code = EINTR;
		snprintf(st->error.what, sizeof(st->error.what),
			 "worker process killed by signal %d (%s)%s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)),
			 WTERMSIG(status) == SIGKILL ? "; under mem_limit this is usually the OOM killer" : "");
		STAT_STORE(&st->failed, 1);
	}
	crew_mark_done(c);
	h->child = 0;
	h->child_reaped = false;
}

void jobhost_release(struct job_host *h)
{
	if (h->has_cg) {
		cgroup_destroy(&h->cg);
		h->has_cg = false;
	}
	reserve_release(&h->reserve);
}
