/*
 * samplebase.c - the helpers every file of the sampler uses
 * (samplebase.h).
 */
#include "sample/samplebase.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "out/notes.h"

void sampler_warn_once(bool *flag, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (*flag)
		return;
	*flag = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	notes_warning("%s; its CSV cells stay empty", msg);
}

bool sampler_due(const struct sampler *s, unsigned j, uint64_t now, unsigned every)
{
	uint64_t k;

	if (every <= 1 || s->jobs[j].ending)
		return true;
	k = (now - s->t0 + s->cfg.interval_ns / 2) / s->cfg.interval_ns + j;
	return k % every == 0 || (k + 1) % every == 0;
}

/* Zeroed, on a cache line's boundary: the jobs' and threads' states
 * are laid out by the line (samplebase.h), which calloc's 16 bytes of
 * alignment would split. free() releases it. */
void *sampler_calloc_lines(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	if (posix_memalign(&p, CACHELINE, n * size))
		return NULL;
	memset(p, 0, n * size);
	return p;
}

void *sampler_map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void sampler_unmap(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes ? bytes : 1);
}
