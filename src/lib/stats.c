/* stats.c - the shared counter arena; see stats.h. */
#include "lib/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <limits.h>
#include <linux/futex.h>
#include <time.h>

#include "lib/readfile.h"

int stats_arena_create(struct stats_arena *a, unsigned n)
{
	void *p;

	a->n = n;
	a->bytes = (size_t)(n ? n : 1) * sizeof(struct thread_stats) + CACHELINE;
	/* Shared, so a worker process forked for mem_limit writes counters
	 * the parent's sampler can read. */
	p = mmap(NULL, a->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	a->ts = p;
	a->bell = (uint32_t *)((char *)p + (size_t)(n ? n : 1) * sizeof(struct thread_stats));
	for (unsigned i = 0; i < n; i++) {
		hist_init(&a->ts[i].lat);
		hist_ring_attach(&a->ts[i].lat, &a->ts[i].lat_ring, n >= STATS_RING_THREADS);
	}
	return 0;
}

void stats_init_writes(struct thread_stats *st)
{
	hist_init(&st->wlat);
	hist_init(&st->slat);
	hist_init(&st->tlat);
	hist_ring_attach(&st->wlat, &st->wlat_ring, st->lat.ring != NULL);
	hist_ring_attach(&st->slat, &st->slat_ring, st->lat.ring != NULL);
}

void stats_arena_destroy(struct stats_arena *a)
{
	if (a->ts)
		munmap(a->ts, a->bytes);
	a->ts = NULL;
	a->bell = NULL;
	a->n = 0;
}

/* Not FUTEX_PRIVATE: worker processes (mem_limit, thread=0) ring it too. */
void stats_bell_ring(uint32_t *bell)
{
	if (!bell)
		return;
	__atomic_add_fetch(bell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

uint32_t stats_bell_seen(const uint32_t *bell)
{
	return bell ? __atomic_load_n(bell, __ATOMIC_ACQUIRE) : 0;
}

void stats_bell_wait(uint32_t *bell, uint32_t seen, uint64_t until_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(until_ns / 1000000000ull),
			       .tv_nsec = (long)(until_ns % 1000000000ull) };

	if (!bell) {
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		return;
	}
	/* FUTEX_WAIT_BITSET: an absolute CLOCK_MONOTONIC deadline. A ring
	 * since @seen returns at once (EAGAIN); a signal returns early,
	 * which the caller's loop takes as one more look. */
	syscall(SYS_futex, bell, FUTEX_WAIT_BITSET, seen, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
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
