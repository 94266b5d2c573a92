/* stats.c - the shared counter arena; see stats.h. */
#include "stats.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

int stats_arena_create(struct stats_arena *a, unsigned n)
{
	void *p;

	a->n = n;
	a->bytes = (size_t)(n ? n : 1) * sizeof(struct thread_stats);
	/* Shared, so a worker process forked for mem_limit writes counters
	 * the parent's sampler can read. */
	p = mmap(NULL, a->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	a->ts = p;
	for (unsigned i = 0; i < n; i++)
		hist_init(&a->ts[i].lat);
	return 0;
}

void stats_arena_destroy(struct stats_arena *a)
{
	if (a->ts)
		munmap(a->ts, a->bytes);
	a->ts = NULL;
	a->n = 0;
}
