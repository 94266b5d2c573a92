/* stats.c - a worker's counters made ready for writes, and a thread's CPU
 * time, faults and scheduling as the kernel counts them; see stats.h. */
#include "lib/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <sys/resource.h>

#include "lib/readfile.h"

void stats_init_writes(struct thread_stats *st)
{
	hist_init(&st->wlat);
	hist_init(&st->slat);
	hist_init(&st->tlat);
	hist_ring_attach(&st->wlat, &st->wlat_ring, st->lat.ring != NULL);
	hist_ring_attach(&st->slat, &st->slat_ring, st->lat.ring != NULL);
}

int stats_thread_usage(uint64_t *majflt, uint64_t *minflt, uint64_t *nvcsw)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return -errno;
	*majflt = (uint64_t)ru.ru_majflt;
	*minflt = (uint64_t)ru.ru_minflt;
	*nvcsw = (uint64_t)ru.ru_nvcsw;
	return 0;
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

int stats_thread_cpu(uint64_t *utime_ns, uint64_t *stime_ns, uint64_t *nivcsw)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return -errno;
	*utime_ns = tv_ns(&ru.ru_utime);
	*stime_ns = tv_ns(&ru.ru_stime);
	*nivcsw = (uint64_t)ru.ru_nivcsw;
	return 0;
}

/* A small /proc file into @buf (NUL-terminated): 0, -errno, or -EIO
 * when it was empty. */
static int read_text(const char *path, char *buf, size_t cap)
{
	int n = readfile_small(path, buf, cap);

	return n > 0 ? 0 : n < 0 ? n : -EIO;
}

static int read_sched(const char *path, uint64_t *cpu_ns, uint64_t *wait_ns);

int stats_thread_sched(uint64_t *cpu_ns, uint64_t *wait_ns)
{
	return read_sched("/proc/thread-self/schedstat", cpu_ns, wait_ns);
}

int stats_task_sched(pid_t pid, pid_t tid, uint64_t *cpu_ns, uint64_t *wait_ns, uint64_t *nvcsw)
{
	char path[64], buf[4096], *p;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	ret = read_sched(path, cpu_ns, wait_ns);
	if (ret)
		return ret;
	/* The count getrusage's ru_nvcsw gives the thread itself. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	ret = read_text(path, buf, sizeof(buf));
	if (ret)
		return ret;
	p = strstr(buf, "\nvoluntary_ctxt_switches:");
	if (!p || sscanf(p + 25, "%" SCNu64, nvcsw) != 1)
		return -EIO;
	return 0;
}

static int read_sched(const char *path, uint64_t *cpu_ns, uint64_t *wait_ns)
{
	char buf[128];
	int ret = read_text(path, buf, sizeof(buf));

	if (ret)
		return ret;
	if (sscanf(buf, "%" SCNu64 " %" SCNu64, cpu_ns, wait_ns) != 2)
		return -EIO;
	return 0;
}
