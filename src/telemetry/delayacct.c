/*
 * delayacct.c - kernel.task_delayacct on for a run and back after it
 * (delayacct.h says how runs share it).
 *
 * Two files: the record (the value found, one byte, or empty when no
 * run holds it), whose exclusive lock guards every change, and the
 * holders' file, on which each run holds a shared lock while it runs.
 * A run is the last when, after letting go of its own, it can take the
 * holders' lock exclusively without waiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/file.h>

#include "telemetry/delayacct.h"

#define RECORD "/run/faultline-delayacct"
#define HOLDERS "/run/faultline-delayacct.holders"
#define SYSCTL "/proc/" DELAYACCT_SYSCTL

static volatile sig_atomic_t held;
static int held_fd = -1;
static pid_t held_pid;

int delayacct_state(const char *proc_root, char *why, size_t cap)
{
	char path[256], c = 0;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", proc_root, DELAYACCT_SYSCTL);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			snprintf(why, cap, "the kernel has no delay accounting (%s absent: CONFIG_TASK_DELAY_ACCT off)",
				 path);
		else
			snprintf(why, cap, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = read(fd, &c, 1) == 1 ? 0 : -EIO;
	close(fd);
	if (ret) {
		snprintf(why, cap, "%s: unreadable", path);
		return ret;
	}
	if (c == '1') {
		snprintf(why, cap, "on (kernel.task_delayacct=1)");
		return 1;
	}
	snprintf(why, cap, "off (kernel.task_delayacct=0; --delayacct turns it on as root%s)",
		 geteuid() ? ", and this is not root" : "");
	return 0;
}

static int write_sysctl(char v)
{
	int fd = open(SYSCTL, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, &v, 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

static int read_sysctl(char *v)
{
	int fd = open(SYSCTL, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (read(fd, v, 1) != 1)
		ret = -EIO;
	close(fd);
	return ret;
}

/* Holding the record's lock: are there no holders at all? */
static bool no_holders(void)
{
	int fd = open(HOLDERS, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	bool none;

	if (fd < 0)
		return false;
	none = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return none;
}

/* Holding the record's lock, as the first holder: the value to restore,
 * recorded unless a run killed before it restored left one. */
static int record_found(int rfd)
{
	char was = 0;
	int ret;

	if (pread(rfd, &was, 1, 0) == 1 && (was == '0' || was == '1'))
		return 0;
	ret = read_sysctl(&was);
	if (ret)
		return ret;
	if (pwrite(rfd, &was, 1, 0) != 1 || ftruncate(rfd, 1) < 0)
		return -errno;
	return 0;
}

int delayacct_enable(struct err *e)
{
	sigset_t block, old;
	int rfd, hfd = -1, ret;

	if (held)
		return 0;
	/* A Ctrl-C now would restore from a record half made. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rfd = open(RECORD, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (rfd < 0 || flock(rfd, LOCK_EX) < 0) {
		ret = err_set(e, errno, "%s: %s", RECORD, strerror(errno));
		goto out;
	}
	if (no_holders()) {
		ret = record_found(rfd);
		if (ret) {
			err_set(e, -ret, "%s: %s", SYSCTL, strerror(-ret));
			goto out;
		}
	}
	hfd = open(HOLDERS, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (hfd < 0 || flock(hfd, LOCK_SH) < 0) {
		ret = err_set(e, errno, "%s: %s", HOLDERS, strerror(errno));
		goto out;
	}
	ret = write_sysctl('1');
	if (ret) {
		err_set(e, -ret, "cannot turn kernel.task_delayacct on: %s: %s", SYSCTL, strerror(-ret));
		goto out;
	}
	held_fd = hfd;
	held_pid = getpid();
	held = 1;
	hfd = -1;
out:
	if (hfd >= 0)
		close(hfd);
	if (rfd >= 0)
		close(rfd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

void delayacct_restore(void)
{
	int rfd;
	char was;

	/* A worker process (thread=0) inherits the handlers, not the hold. */
	if (!held || getpid() != held_pid)
		return;
	held = 0;
	rfd = open(RECORD, O_RDWR | O_CLOEXEC);
	if (rfd < 0 || flock(rfd, LOCK_EX) < 0) {
		if (rfd >= 0)
			close(rfd);
		close(held_fd);
		return;
	}
	close(held_fd);
	held_fd = -1;
	/* Where the value cannot be put back, the record stays: the next
	 * run that holds it restores the same value. */
	if (no_holders() && pread(rfd, &was, 1, 0) == 1 && (was == '0' || was == '1') &&
	    write_sysctl(was) == 0)
		while (ftruncate(rfd, 0) < 0 && errno == EINTR)
			;
	close(rfd);
}
