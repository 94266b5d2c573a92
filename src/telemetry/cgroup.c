/* cgroup.c - child memory cgroups below our own; see cgroup.h. */
#include "telemetry/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "telemetry/devinfo.h"
#include "telemetry/procfs.h"

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * Find this process's memory cgroup from <proc>/self/cgroup: a v1 line
 * "N:...memory...:/path" wins (on hybrid hosts v2 lacks the memory
 * controller); else the v2 line "0::/path" if the unified hierarchy has
 * the memory controller.
 */
int cgroup_probe(struct cgroup_info *ci, bool try_create)
{
	char buf[8192], path[PATH_MAX], v2rel[PATH_MAX] = "";
	const char *sys = devinfo_sysroot();
	char *line, *save;
	int n;

	memset(ci, 0, sizeof(*ci));
	snprintf(path, sizeof(path), "%s/self/cgroup", procfs_root());
	n = procfs_read_small(procfs_root(), "self/cgroup", buf, sizeof(buf));
	if (n < 0) {
		snprintf(ci->why, sizeof(ci->why), "cannot read %s: %s", path, strerror(-n));
		return 0;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		if (c2 == c1 + 1) {
			snprintf(v2rel, sizeof(v2rel), "%s", c2 + 1);
			continue;
		}
		for (char *tok = c1 + 1, *sv, *t = strtok_r(tok, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
			if (!strcmp(t, "memory")) {
				ci->version = 1;
				snprintf(ci->self, sizeof(ci->self), "%s/fs/cgroup/memory%s", sys, c2 + 1);
			}
		}
	}
	if (!ci->version && v2rel[0]) {
		char ctl[512];

		snprintf(path, sizeof(path), "%s/fs/cgroup", sys);
		if (procfs_read_small(path, "cgroup.controllers", ctl, sizeof(ctl)) == 0 &&
		    strstr(ctl, "memory")) {
			ci->version = 2;
			snprintf(ci->self, sizeof(ci->self), "%s/fs/cgroup%s", sys, v2rel);
		}
	}
	if (!ci->version) {
		snprintf(ci->why, sizeof(ci->why),
			 "no memory cgroup controller (neither a v1 'memory' hierarchy nor a v2 hierarchy with 'memory' in cgroup.controllers)");
		return 0;
	}
	if (access(ci->self, W_OK) < 0) {
		snprintf(ci->why, sizeof(ci->why), "own memory cgroup %s is not writable: %s", ci->self,
			 strerror(errno));
		return 0;
	}
	if (try_create) {
		struct cgroup cg;
		struct err e = { 0 };
		char name[64];

		snprintf(name, sizeof(name), "faultline-probe-%d", (int)getpid());
		if (cgroup_create(&cg, name, 64ull << 20, &e) < 0) {
			snprintf(ci->why, sizeof(ci->why), "%s", e.msg);
			return 0;
		}
		cgroup_destroy(&cg);
	}
	ci->can_create = true;
	return 0;
}

int cgroup_create(struct cgroup *cg, const char *name, uint64_t limit, struct err *e)
{
	struct cgroup_info ci;
	char file[PATH_MAX + 64], val[32];
	int ret;

	memset(cg, 0, sizeof(*cg));
	cg->usage_fd = -1;
	cgroup_probe(&ci, false);
	if (!ci.version || !ci.self[0])
		return err_set(e, ENOTSUP, "mem_limit: %s", ci.why);
	if (snprintf(cg->path, sizeof(cg->path), "%s/%s", ci.self, name) >= (int)sizeof(cg->path))
		return err_set(e, ENAMETOOLONG, "mem_limit: cgroup path too long");
	cg->version = ci.version;
	if (mkdir(cg->path, 0755) < 0)
		return err_set(e, errno, "mem_limit: cannot create cgroup %s: %s", cg->path, strerror(errno));
	cg->created = true;
	cg->limit = limit;
	snprintf(val, sizeof(val), "%llu", (unsigned long long)limit);
	snprintf(file, sizeof(file), "%s/%s", cg->path,
		 cg->version == 2 ? "memory.max" : "memory.limit_in_bytes");
	/* 0: no limit of its own (a measuring cgroup, jobhost_measure). */
	ret = limit ? write_str(file, val) : 0;
	if (ret < 0) {
		err_set(e, -ret, "mem_limit: cannot set %s to %s: %s", file, val, strerror(-ret));
		cgroup_destroy(cg);
		return ret;
	}
	/* No swapping the job's memory out instead of dropping page cache:
	 * v2 memory.swap.max, v1 has swappiness per group. */
	snprintf(file, sizeof(file), "%s/%s", cg->path,
		 cg->version == 2 ? "memory.swap.max" : "memory.swappiness");
	write_str(file, "0");
	snprintf(file, sizeof(file), "%s/%s", cg->path,
		 cg->version == 2 ? "memory.current" : "memory.usage_in_bytes");
	cg->usage_fd = open(file, O_RDONLY | O_CLOEXEC);
	return 0;
}

int cgroup_enter(struct cgroup *cg, pid_t pid, struct err *e)
{
	char file[PATH_MAX + 32], val[32];
	int ret;

	snprintf(file, sizeof(file), "%s/cgroup.procs", cg->path);
	snprintf(val, sizeof(val), "%d", pid ? (int)pid : (int)getpid());
	ret = write_str(file, val);
	if (ret < 0)
		return err_set(e, -ret, "mem_limit: cannot move pid %s into %s: %s", val, cg->path,
			       strerror(-ret));
	return 0;
}

int cgroup_usage(struct cgroup *cg, uint64_t *bytes)
{
	char buf[64];
	ssize_t n;

	if (cg->usage_fd < 0)
		return -EBADF;
	n = pread(cg->usage_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	*bytes = strtoull(buf, NULL, 10);
	return 0;
}

/* The value of @key in <cg>/@file ("key value" lines), or -errno. */
static int stat_value(const struct cgroup *cg, const char *file, const char *key, uint64_t *v)
{
	char buf[8192], *p;
	size_t klen = strlen(key);
	int n = procfs_read_small(cg->path, file, buf, sizeof(buf));

	if (n < 0)
		return n;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			*v = strtoull(p + klen + 1, NULL, 10);
			return 0;
		}
	return -ENOENT;
}

static int file_value(const struct cgroup *cg, const char *file, uint64_t *v)
{
	char buf[64];
	int n = procfs_read_small(cg->path, file, buf, sizeof(buf));

	if (n < 0)
		return n;
	*v = strtoull(buf, NULL, 10);
	return 0;
}

int cgroup_charge_nonfile(const struct cgroup *cg, uint64_t *bytes)
{
	/* From the exact counters, not the usage: the usage includes what
	 * the kernel charged ahead on each CPU (a batch of pages), which
	 * differs from one reading to the next. */
	static const char *const v2_kernel[] = { "kernel_stack", "pagetables", "percpu", "slab", "sock" };
	uint64_t anon = 0, shmem = 0, kernel = 0, v;
	int ret;

	if (cg->version == 2) {
		ret = stat_value(cg, "memory.stat", "anon", &anon);
		if (!ret)
			ret = stat_value(cg, "memory.stat", "shmem", &shmem);
		/* "kernel" sums them since Linux 5.18; before, the parts. */
		if (!ret && stat_value(cg, "memory.stat", "kernel", &kernel) < 0)
			for (unsigned i = 0; i < sizeof(v2_kernel) / sizeof(v2_kernel[0]); i++)
				if (stat_value(cg, "memory.stat", v2_kernel[i], &v) == 0)
					kernel += v;
	} else {
		/* v1: page tables, stacks and slabs are kernel memory. */
		ret = stat_value(cg, "memory.stat", "total_rss", &anon);
		if (!ret)
			ret = stat_value(cg, "memory.stat", "total_shmem", &shmem);
		if (!ret)
			ret = file_value(cg, "memory.kmem.usage_in_bytes", &kernel);
	}
	if (ret)
		return ret;
	*bytes = anon + shmem + kernel;
	return 0;
}

int cgroup_peak(const struct cgroup *cg, uint64_t *bytes, const char **source)
{
	*source = cg->version == 2 ? "memory.peak" : "memory.max_usage_in_bytes";
	return file_value(cg, *source, bytes);
}

int cgroup_oom_kills(const struct cgroup *cg, uint64_t *n)
{
	/* v1 memory.oom_control has "oom_kill N" since Linux 4.13. */
	return stat_value(cg, cg->version == 2 ? "memory.events" : "memory.oom_control", "oom_kill", n);
}

void cgroup_describe_kill(const struct cgroup *cg, int sig, char *buf, size_t len)
{
	const char *src = "";
	uint64_t peak = 0, kills = 0;
	char held[192];

	if (!cg || !cg->created) {
		snprintf(buf, len, "killed by signal %d (%s)", sig, strsignal(sig));
		return;
	}
	if (cgroup_peak(cg, &peak, &src) == 0)
		snprintf(held, sizeof(held), "its memory cgroup held at most %.1f MiB (%s) of its %.1f MiB limit",
			 peak / (1024.0 * 1024.0), src, cg->limit / (1024.0 * 1024.0));
	else
		snprintf(held, sizeof(held), "its memory cgroup's peak is unreadable (%s), its limit %.1f MiB",
			 src, cg->limit / (1024.0 * 1024.0));
	if (sig == SIGKILL && cgroup_oom_kills(cg, &kills) == 0 && kills)
		snprintf(buf, len, "killed by the OOM killer of its memory cgroup: %s", held);
	else
		snprintf(buf, len, "killed by signal %d (%s); %s", sig, strsignal(sig), held);
}

int cgroup_destroy(struct cgroup *cg)
{
	int ret = 0;

	if (cg->usage_fd >= 0)
		close(cg->usage_fd);
	cg->usage_fd = -1;
	if (!cg->created)
		return 0;
	/* The kernel may take a moment to let go of an exited member's
	 * charge; retry briefly (EBUSY) rather than leave the group. */
	for (int i = 0; i < 100; i++) {
		if (rmdir(cg->path) == 0 || errno == ENOENT) {
			cg->created = false;
			return 0;
		}
		ret = -errno;
		if (errno != EBUSY)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	return ret;
}

/* Start time of process @pid (0 = ourselves), or -errno (-ENOENT: none). */
static int proc_start(pid_t pid, uint64_t *start)
{
	char rel[64], buf[1024];
	int n;

	if (pid)
		snprintf(rel, sizeof(rel), "%d/stat", (int)pid);
	else
		snprintf(rel, sizeof(rel), "self/stat");
	n = procfs_read_small(procfs_root(), rel, buf, sizeof(buf));
	if (n < 0)
		return n;
	return procfs_parse_starttime(buf, strlen(buf), start);
}

int cgroup_job_name(char *buf, size_t len, unsigned index)
{
	uint64_t start = 0;
	int ret = proc_start(0, &start);

	snprintf(buf, len, "faultline-%d-%" PRIu64 "-%u", (int)getpid(), start, index);
	return ret;
}

/* Is the owner named by @name alive? 1 yes, 0 no, -1 not ours to judge. */
static int owner_alive(const char *name)
{
	unsigned long long a, b, c;
	char tail;
	uint64_t start;
	int n, ret;

	if (sscanf(name, "faultline-probe-%llu%c", &a, &tail) == 1) {
		ret = proc_start((pid_t)a, &start);
		return ret == -ENOENT ? 0 : 1;
	}
	n = sscanf(name, "faultline-%llu-%llu-%llu%c", &a, &b, &c, &tail);
	if (n == 3) {
		ret = proc_start((pid_t)a, &start);
		if (ret == -ENOENT)
			return 0;
		/* A pid alive with another start time was reused. */
		return ret == 0 && start != b ? 0 : 1;
	}
	if (n == 2) {
		ret = proc_start((pid_t)a, &start);
		return ret == -ENOENT ? 0 : 1;
	}
	return -1;
}

int cgroup_reap_stale(void (*say)(void *arg, const char *msg), void *arg)
{
	struct cgroup_info ci;
	struct dirent *d;
	char path[PATH_MAX + 256], msg[PATH_MAX + 512];
	int reaped = 0;
	DIR *dir;

	cgroup_probe(&ci, false);
	if (!ci.version || !ci.self[0])
		return 0;
	dir = opendir(ci.self);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "faultline-", 10) || owner_alive(d->d_name) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", ci.self, d->d_name);
		if (rmdir(path) == 0) {
			reaped++;
			snprintf(msg, sizeof(msg), "removed the stale cgroup %s: the faultline run that made it is gone", path);
		} else if (errno == EBUSY) {
			snprintf(msg, sizeof(msg), "left the stale cgroup %s: its owner is gone but it still has processes", path);
		} else if (errno == ENOENT) {
			continue;	/* another run reaped it first */
		} else {
			snprintf(msg, sizeof(msg), "cannot remove the stale cgroup %s: %s", path, strerror(errno));
		}
		if (say)
			say(arg, msg);
	}
	closedir(dir);
	return reaped;
}
