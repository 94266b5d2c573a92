/*
 * capture.c - faultline --capture: the request checked, the traced
 * tasks found, the ring buffers read ten times a second until the
 * capture stops; see capture.h.
 *
 * Records reach us per CPU; a thread that moved between CPUs has its
 * requests in two buffers. Each read is sorted by time, and the records
 * of its last HOLD_NS stay for the next read: one just written on
 * another CPU may still be on its way into its page, and would otherwise
 * come after a later request of the same thread.
 */
#include "capture/capture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/capbpf.h"
#include "capture/capout.h"
#include "capture/capstream.h"
#include "capture/captrace.h"

/* How often the buffers are read, and how much of the newest end of
 * each read waits for the next. */
#define POLL_NS 100000000ull
#define HOLD_NS 10000000ull

struct live {
	int dirfd;
	char dir[PATH_MAX];
};

/* ---- the environment capstream asks ----------------------------------- */

static bool pseudo_fs(const char *link)
{
	struct statfs sf;

	return statfs(link, &sf) == 0 && cap_pseudo_fs((unsigned long)sf.f_type);
}

static int fd_info(void *arg, int tid, int tgid, int fd, struct cap_fdinfo *out)
{
	char link[64];
	struct stat st;
	ssize_t n;

	(void)arg;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", tgid, fd);
	n = readlink(link, out->path, sizeof(out->path) - 1);
	if (n < 0) {
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", tid, fd);
		n = readlink(link, out->path, sizeof(out->path) - 1);
	}
	if (n < 0)
		return -errno;
	out->path[n] = '\0';
	if (stat(link, &st) < 0)
		return -errno;
	out->file = (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) && !pseudo_fs(link);
	/* The kernel's dev_t, as the page-cache tracepoint gives it. */
	out->dev = (uint64_t)major(st.st_dev) << 20 | (minor(st.st_dev) & 0xfffff);
	out->ino = (uint64_t)st.st_ino;
	return 0;
}

static int task_info(void *arg, int tid, int *tgid, char comm[16])
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT;
	buf[n] = '\0';
	p = strstr(buf, "Tgid:");
	if (!p || strncmp(buf, "Name:\t", 6))
		return -EBADMSG;
	*tgid = atoi(p + 5);
	p = buf + 6;
	n = (ssize_t)strcspn(p, "\n");
	if (n > 15)
		n = 15;
	memcpy(comm, p, (size_t)n);
	comm[n] = '\0';
	return 0;
}

static int write_log(void *arg, const char *name, const char *buf, size_t len)
{
	struct live *lv = arg;
	int fd = openat(lv->dirfd, name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int ret = n < 0 ? -errno : -EIO;

			close(fd);
			return ret;
		}
		buf += n;
		len -= (size_t)n;
	}
	return close(fd) < 0 ? -errno : 0;
}

/* ---- the request, checked ---------------------------------------------- */

static int check_pids(const struct capture_opts *o, struct err *e)
{
	for (unsigned i = 0; i < o->npids; i++) {
		int pid = o->pids[i];

		if (pid == getpid())
			return err_set(e, EINVAL, "--pid=%d is faultline itself", pid);
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return err_set(e, ESRCH, "--pid=%d: no such process", pid);
		if (kill(pid, 0) < 0)
			return err_set(e, EPERM, "--pid=%d: not ours to trace (%s)", pid, strerror(errno));
	}
	return 0;
}

/* DIR: made when missing (its parent must exist), refused when it holds
 * a capture. *made says we made it, to remove on failure. */
static int check_dir(const char *dir, bool *made, struct err *e)
{
	struct dirent *d;
	DIR *dh;

	*made = false;
	if (mkdir(dir, 0755) == 0) {
		*made = true;
		return 0;
	}
	if (errno != EEXIST)
		return err_set(e, errno, "--capture=%s: %s", dir, strerror(errno));
	dh = opendir(dir);
	if (!dh)
		return err_set(e, errno, "--capture=%s: %s", dir, strerror(errno));
	while ((d = readdir(dh))) {
		size_t n = strlen(d->d_name);

		if (!strcmp(d->d_name, "capture.job") || (n > 6 && !strcmp(d->d_name + n - 6, ".iolog"))) {
			/* The name lives in the directory stream: said before it closes. */
			err_set(e, EEXIST, "--capture=%s holds an earlier capture (%s): never overwritten; "
				"name another directory", dir, d->d_name);
			closedir(dh);
			return -EEXIST;
		}
	}
	closedir(dh);
	return 0;
}

/* ---- tasks to follow --------------------------------------------------- */

struct ids {
	int *v;
	unsigned n, cap;
};

static int ids_add(struct ids *s, int id)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->v[i] == id)
			return 0;
	if (s->n == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 64;
		int *p = realloc(s->v, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = cap;
	}
	s->v[s->n++] = id;
	return 0;
}

static int parent_of(int pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": the name may hold anything, even ')'. */
	p = strrchr(buf, ')');
	if (p && sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = 0;
	return ppid;
}

/* @procs and their descendants (processes), then every thread of each
 * into @tids. */
static int tasks_below(const int *procs, unsigned n, struct ids *tids)
{
	struct ids ps = { 0 };
	struct dirent *d;
	bool grew = true;
	int ret = 0;

	for (unsigned i = 0; i < n && !ret; i++)
		ret = ids_add(&ps, procs[i]);
	while (grew && !ret) {
		DIR *dh = opendir("/proc");

		grew = false;
		if (!dh)
			break;
		while ((d = readdir(dh)) && !ret) {
			int pid = atoi(d->d_name), pp, before = (int)ps.n;

			if (pid <= 0 || !(pp = parent_of(pid)))
				continue;
			for (unsigned i = 0; i < ps.n && !ret; i++)
				if (ps.v[i] == pp)
					ret = ids_add(&ps, pid);
			grew |= (int)ps.n != before;
		}
		closedir(dh);
	}
	for (unsigned i = 0; i < ps.n && !ret; i++) {
		char path[64];
		DIR *dh;

		snprintf(path, sizeof(path), "/proc/%d/task", ps.v[i]);
		dh = opendir(path);
		if (!dh)
			continue;
		while ((d = readdir(dh)) && !ret)
			if (atoi(d->d_name) > 0)
				ret = ids_add(tids, atoi(d->d_name));
		closedir(dh);
	}
	free(ps.v);
	return ret;
}

/* The command, started stopped on a pipe until the trace follows it. */
static int start_command(char *const *argv, int *gate, pid_t *child, struct err *e)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return err_set(e, errno, "pipe: %s", strerror(errno));
	*child = fork();
	if (*child < 0) {
		close(p[0]);
		close(p[1]);
		return err_set(e, errno, "fork: %s", strerror(errno));
	}
	if (*child == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);	/* the capture gave up before starting */
		/* faultline ignores SIGPIPE; the command gets the default. */
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "faultline: --capture: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*gate = p[1];
	return 0;
}

struct batch {
	struct cap_event *ev;
	size_t n, cap;
	uint32_t seq;
};

/* ---- the kernel's side: bpf, or the tracepoints -------------------------- */

struct source {
	enum capture_method m;		/* what serves: never CAPTURE_AUTO */
	struct capbpf *bpf;
	struct captrace *tp;
	bool mounted;			/* tracefs mounted for us */
	char why[400];			/* auto: why bpf could not serve */
};

/* The one asked for; auto: the file I/O path's programs where they
 * load, else the syscall programs, else the tracepoints through tracefs
 * (cheapest first: tests/bench/README.md). */
static int src_open(struct source *src, enum capture_method m, struct err *e)
{
	int ret = -ENOTSUP;
	size_t used;

	src->why[0] = '\0';
	if (m == CAPTURE_AUTO || m == CAPTURE_PAGECACHE) {
		ret = capbpf_open(&src->bpf, CAPBPF_PAGECACHE, e);
		if (!ret || m == CAPTURE_PAGECACHE) {
			src->m = CAPTURE_PAGECACHE;
			return ret;
		}
		snprintf(src->why, sizeof(src->why), "pagecache: %s", e->msg);
	}
	if (m == CAPTURE_AUTO || m == CAPTURE_BPF) {
		ret = capbpf_open(&src->bpf, CAPBPF_SYSCALLS, e);
		if (!ret || m == CAPTURE_BPF) {
			src->m = CAPTURE_BPF;
			return ret;
		}
		used = strlen(src->why);
		snprintf(src->why + used, sizeof(src->why) - used, "; bpf: %s", e->msg);
	}
	src->m = CAPTURE_TRACEPOINT;
	ret = captrace_open(&src->tp, &src->mounted, e);
	if (ret && src->why[0]) {
		char msg[sizeof(e->msg)];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		err_set(e, -ret, "%s; and bpf could not load either: %s", msg, src->why);
	}
	return ret;
}

static int src_follow(struct source *src, const int *tids, unsigned n, struct err *e)
{
	return src->bpf ? capbpf_follow(src->bpf, tids, n, e) : captrace_follow(src->tp, tids, n, e);
}

static int src_comm(struct source *src, const char *comm, struct err *e)
{
	return src->bpf ? capbpf_comm(src->bpf, comm, e) : captrace_comm(src->tp, comm, e);
}

static int src_start(struct source *src, struct err *e)
{
	return src->bpf ? capbpf_start(src->bpf, e) : captrace_start(src->tp, e);
}

static void src_stop(struct source *src)
{
	if (src->bpf)
		capbpf_stop(src->bpf);
	else
		captrace_stop(src->tp);
}

static int src_read(struct source *src, struct batch *b)
{
	return src->bpf ? capbpf_read(src->bpf, &b->ev, &b->n, &b->cap, &b->seq)
			: captrace_read(src->tp, &b->ev, &b->n, &b->cap, &b->seq);
}

static uint64_t src_lost(struct source *src)
{
	return src->bpf ? capbpf_lost(src->bpf) : captrace_lost(src->tp);
}

static void src_close(struct source *src)
{
	capbpf_close(src->bpf);
	if (src->tp || src->mounted)
		captrace_close(src->tp, src->mounted);
}

/* What capture.job's head and the summary say of the method. */
static void src_describe(const struct source *src, char *buf, size_t cap)
{
	if (src->m == CAPTURE_PAGECACHE)
		snprintf(buf, cap, "pagecache (BPF programs on the page cache's, iomap's%s tracepoints: no system "
			 "call hooked; files named by inode from /proc; buffered reads at page granularity)",
			 capbpf_ext4(src->bpf) ? " and ext4's" : "");
	else if (src->m == CAPTURE_BPF)
		snprintf(buf, cap, "bpf (programs on the raw system-call tracepoints, filtered by call and task "
			 "in the kernel, binary records through a BPF ring buffer)");
	else if (src->why[0])
		snprintf(buf, cap, "tracepoint (the syscall tracepoints through tracefs; bpf could not serve: %s)",
			 src->why);
	else
		snprintf(buf, cap, "tracepoint (the syscall tracepoints through tracefs, as asked)");
}

/* ---- the loop ---------------------------------------------------------- */

static int ev_cmp(const void *a, const void *b)
{
	const struct cap_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}


/* Read what the buffers hold and hand capstream all but the newest
 * HOLD_NS (everything when @drain). */
static int poll_once(struct source *t, struct cap_state *s, struct batch *b, bool drain)
{
	uint64_t cut = captrace_now() - HOLD_NS;
	size_t k = 0;
	int ret = src_read(t, b);

	if (ret)
		return ret;
	if (b->n)
		qsort(b->ev, b->n, sizeof(*b->ev), ev_cmp);
	if (drain)
		k = b->n;
	else
		while (k < b->n && b->ev[k].ts < cut)
			k++;
	ret = capstate_feed(s, b->ev, b->n, k);
	cap_event_release(b->ev, k);
	if (k && k < b->n)
		memmove(b->ev, b->ev + k, (b->n - k) * sizeof(*b->ev));
	b->n -= k;
	return ret;
}

static bool any_alive(const struct capture_opts *o)
{
	for (unsigned i = 0; i < o->npids; i++)
		if (kill(o->pids[i], 0) == 0 || errno != ESRCH)
			return true;
	return false;
}

/* Until a signal, the runtime, the command's exit or (--pid) the end of
 * every process named. */
static int run_loop(const struct capture_opts *o, struct source *t, struct cap_state *s, struct batch *b,
		    pid_t child, struct capture_result *res, uint64_t t0)
{
	int ret = 0;

	while (!ret) {
		struct timespec ts = { 0, (long)POLL_NS };
		int status;

		if (*o->stop || (o->runtime_ns && captrace_now() - t0 >= o->runtime_ns))
			break;
		if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
			res->cmd_status = status;
			break;
		}
		if (o->npids && !o->comm && !any_alive(o))
			break;
		nanosleep(&ts, NULL);
		ret = poll_once(t, s, b, false);
	}
	return ret;
}

static int begin(const struct capture_opts *o, struct source *t, pid_t *child, int *gate, struct err *e)
{
	struct ids tids = { 0 };
	int ret = 0;

	if (o->comm)
		return src_comm(t, o->comm, e);
	if (o->argv) {
		ret = start_command(o->argv, gate, child, e);
		return ret ? ret : src_follow(t, child, 1, e);
	}
	ret = tasks_below(o->pids, o->npids, &tids);
	if (!ret)
		ret = src_follow(t, tids.v, tids.n, e);
	else
		err_set(e, -ret, "listing the tasks of the processes named: %s", strerror(-ret));
	free(tids.v);
	return ret;
}

/* After tracing is on: threads and children made between the listing
 * and the start (event-fork follows only those made after). */
static void catch_up(const struct capture_opts *o, struct source *t)
{
	struct ids tids = { 0 };
	struct err e = { 0 };

	if (o->npids && !o->comm && !tasks_below(o->pids, o->npids, &tids))
		src_follow(t, tids.v, tids.n, &e);
	free(tids.v);
}

static int capture_live(const struct capture_opts *o, struct source *t, struct live *lv, FILE *out,
			struct capture_result *res, struct err *e)
{
	struct cap_env env = { .arg = lv, .fd_info = fd_info, .task_info = task_info, .write = write_log };
	struct batch b = { 0 };
	struct cap_state s;
	pid_t child = -1;
	int gate = -1, ret;
	uint64_t t0, t1, lost0;
	char method[512];

	ret = begin(o, t, &child, &gate, e);
	t0 = captrace_now();
	capstate_init(&s, t0, &env);
	if (!ret)
		ret = src_start(t, e);
	lost0 = src_lost(t);
	if (gate >= 0) {
		/* Go, or (on failure) end: the child exits on a closed pipe. */
		if (!ret && write(gate, "g", 1) != 1)
			ret = err_set(e, errno, "starting %s: %s", o->argv[0], strerror(errno));
		close(gate);
	}
	if (ret) {
		if (child > 0)
			waitpid(child, NULL, 0);
		capstate_free(&s);
		return ret;
	}
	res->started = true;
	catch_up(o, t);
	fprintf(out, "capture: recording %s%s%s into %s; Ctrl-C or SIGTERM stops it%s\n",
		o->comm ? "every task named " : o->argv ? "the command " : "the processes named, their threads and "
		"children", o->comm ? o->comm : o->argv ? o->argv[0] : "", "", lv->dir,
		o->runtime_ns ? " (or --runtime)" : "");
	fflush(out);
	ret = run_loop(o, t, &s, &b, child, res, t0);
	src_stop(t);
	t1 = captrace_now();
	if (!ret)
		ret = poll_once(t, &s, &b, true);
	if (ret)
		err_set(e, -ret, "reading the trace: %s", strerror(-ret));
	/* The logs and the job, whole, even after a failure to read. */
	res->write_err = capstate_finish(&s);
	src_describe(t, method, sizeof(method));
	if (!ret)
		ret = capout_job(lv->dirfd, lv->dir, &s, o->cmdline, method, e);
	capout_summary(out, &s, lv->dir, (double)(t1 - t0) / 1e9, src_lost(t) - lost0,
		       t->bpf ? capbpf_unpositioned(t->bpf) : captrace_unpositioned(t->tp), method,
		       t->m == CAPTURE_PAGECACHE, t->m == CAPTURE_PAGECACHE && capbpf_ext4(t->bpf));
	/* Stopped before the command ended: it is the user's, and goes on. */
	if (child > 0 && res->cmd_status < 0 && waitpid(child, &res->cmd_status, WNOHANG) != child)
		res->cmd_status = -1;
	res->cmd_pid = child > 0 ? child : 0;
	capstate_free(&s);
	cap_event_release(b.ev, b.n);
	free(b.ev);
	return ret;
}

static int method_parse(const char *v, enum capture_method *m)
{
	static const char *const names[] = { [CAPTURE_AUTO] = "auto", [CAPTURE_BPF] = "bpf",
					      [CAPTURE_TRACEPOINT] = "tracepoint", [CAPTURE_PAGECACHE] = "pagecache" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(v, names[i])) {
			*m = (enum capture_method)i;
			return 0;
		}
	return -EINVAL;
}

int capture_run(const struct capture_opts *o, FILE *out, struct capture_result *res, struct err *e)
{
	enum capture_method method = CAPTURE_AUTO;
	struct source src = { 0 };
	struct live lv = { .dirfd = -1 };
	bool made = false;
	int ret;

	res->cmd_status = -1;
	res->write_err = 0;
	res->started = false;
	res->cmd_pid = 0;
	if (geteuid() != 0)
		return err_set(e, EPERM, "--capture traces other programs' system calls (by BPF or through "
			       "tracefs), which needs root; faultline runs as uid %d", (int)geteuid());
	if (o->method && method_parse(o->method, &method) < 0)
		return err_set(e, EINVAL, "--capture_method=%s: expected pagecache, bpf, tracepoint or auto", o->method);
	ret = check_pids(o, e);
	if (!ret)
		ret = check_dir(o->dir, &made, e);
	if (ret)
		return ret;
	ret = src_open(&src, method, e);
	if (!ret && (!realpath(o->dir, lv.dir) || (lv.dirfd = open(lv.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0))
		ret = err_set(e, errno, "--capture=%s: %s", o->dir, strerror(errno));
	if (!ret)
		ret = capture_live(o, &src, &lv, out, res, e);
	if (lv.dirfd >= 0)
		close(lv.dirfd);
	src_close(&src);
	if (ret && made)
		rmdir(o->dir);	/* nothing left behind: it only goes if empty */
	return ret;
}

int capture_parse_pids(const char *v, int **pids, unsigned *n)
{
	char *end;

	*n = 0;
	*pids = calloc(strlen(v) / 2 + 1, sizeof(int));
	if (!*pids)
		return -ENOMEM;
	for (const char *p = v;; p = end + 1) {
		long pid = strtol(p, &end, 10);

		if (end == p || pid <= 0 || pid > 0x3fffffff || (*end && *end != ','))
			return -EINVAL;
		(*pids)[(*n)++] = (int)pid;
		if (!*end)
			return 0;
	}
}
