/*
 * residency.c - page-cache residency of a target's region: cachestat(2),
 * or mincore(2) on a mapping where the kernel lacks it. See residency.h.
 */
#include "telemetry/residency.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/grow.h"

/*
 * Debian 12's kernel headers (6.1) predate cachestat: its number and
 * structures, from include/uapi/linux/mman.h of Linux 6.5. 451 is the
 * number in the generic syscall table every architecture shares since
 * 5.x (arch/x86/entry/syscalls/syscall_64.tbl agrees).
 */
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif

struct fl_cachestat_range {
	uint64_t off;
	uint64_t len;
};

struct fl_cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

int residency_cachestat(int fd, uint64_t off, uint64_t len, struct residency *out)
{
	struct fl_cachestat_range r = { .off = off, .len = len };
	struct fl_cachestat cs;

	memset(&cs, 0, sizeof(cs));
	/* len 0 would mean "to the end of the file": never ask for that. */
	if (!len)
		return -EINVAL;
	if (syscall(SYS_cachestat, fd, &r, &cs, 0) < 0)
		return -errno;
	out->full = true;
	out->cached = cs.nr_cache;
	out->dirty = cs.nr_dirty;
	out->writeback = cs.nr_writeback;
	out->evicted = cs.nr_evicted;
	out->recently_evicted = cs.nr_recently_evicted;
	return 0;
}

size_t residency_pages(uint64_t off, uint64_t len)
{
	size_t ps = page_size();
	uint64_t start = off / ps * ps;

	return (size_t)((off + len - start + ps - 1) / ps);
}

int residency_mincore(int fd, uint64_t off, uint64_t len, unsigned char *vec, size_t vec_len,
		      struct residency *out)
{
	size_t ps = page_size();
	uint64_t pos = off / ps * ps, end = off + len;

	if (!len || !vec_len)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	while (pos < end) {
		size_t maplen = end - pos > (uint64_t)vec_len * ps ? vec_len * ps : (size_t)(end - pos);
		size_t n = (maplen + ps - 1) / ps;
		void *m;
		int ret = 0;

		/* Mapping does not read the file, and mincore does not fault. */
		m = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, (off_t)pos);
		if (m == MAP_FAILED)
			return -errno;
		if (mincore(m, maplen, vec) < 0)
			ret = -errno;
		munmap(m, maplen);
		if (ret)
			return ret;
		for (size_t i = 0; i < n; i++)
			out->cached += vec[i] & 1;
		pos += maplen;
	}
	return 0;
}

static bool cachestat_forced_off(void)
{
	const char *v = getenv("FAULTLINE_NO_CACHESTAT");

	return v && *v && strcmp(v, "0");
}

int residency_open(struct residency_src *s, int fd, uint64_t off, uint64_t len)
{
	struct residency r;
	int ret;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->off = off;
	s->len = len;
	if (!cachestat_forced_off()) {
		ret = residency_cachestat(fd, off, len, &r);
		if (ret == 0) {
			s->method = RESIDENCY_CACHESTAT;
			return 0;
		}
		if (ret != -ENOSYS)
			return ret;
	}
	s->vec_len = residency_pages(off, len);
	if (s->vec_len > RESIDENCY_VEC_MAX)
		s->vec_len = RESIDENCY_VEC_MAX;
	s->vec = malloc(s->vec_len ? s->vec_len : 1);
	if (!s->vec)
		return -ENOMEM;
	ret = residency_mincore(fd, off, len, s->vec, s->vec_len, &r);
	if (ret) {
		free(s->vec);
		s->vec = NULL;
		return ret;
	}
	s->method = RESIDENCY_MINCORE;
	return 0;
}

/* [off, off+len) of the source's region, by its method. */
static int read_range(struct residency_src *s, uint64_t off, uint64_t len, struct residency *out)
{
	switch (s->method) {
	case RESIDENCY_CACHESTAT:
		return residency_cachestat(s->fd, off, len, out);
	case RESIDENCY_MINCORE:
		return residency_mincore(s->fd, off, len, s->vec, s->vec_len, out);
	default:
		return -EBADF;
	}
}

int residency_read(struct residency_src *s, struct residency *out)
{
	return read_range(s, s->off, s->len, out);
}

void residency_close(struct residency_src *s)
{
	free(s->vec);
	s->vec = NULL;
	s->method = RESIDENCY_NONE;
}

const char *residency_method_name(enum residency_method m)
{
	switch (m) {
	case RESIDENCY_CACHESTAT:
		return "cachestat";
	case RESIDENCY_MINCORE:
		return "mincore";
	default:
		return "none";
	}
}

enum residency_method residency_probe(int fd, char *why, size_t cap)
{
	struct residency r;
	unsigned char vec[1];
	int ret;

	why[0] = '\0';
	if (cachestat_forced_off()) {
		snprintf(why, cap, "FAULTLINE_NO_CACHESTAT is set");
	} else {
		ret = residency_cachestat(fd, 0, (uint64_t)page_size(), &r);
		if (ret == 0)
			return RESIDENCY_CACHESTAT;
		snprintf(why, cap, "%s", ret == -ENOSYS
			 ? "cachestat(2) needs Linux 6.5+; this kernel answers ENOSYS"
			 : strerror(-ret));
	}
	return residency_mincore(fd, 0, (uint64_t)page_size(), vec, 1, &r) == 0 ? RESIDENCY_MINCORE
										 : RESIDENCY_NONE;
}

/* ---- regions shared among jobs ---------------------------------------- */

void residency_set_init(struct residency_set *set)
{
	memset(set, 0, sizeof(*set));
	set->gen = 1;
}

int residency_set_add(struct residency_set *set, int fd, uint64_t off, uint64_t len)
{
	struct residency_region *g;
	struct stat st;
	int dfd;

	if (fstat(fd, &st) < 0)
		return -errno;
	for (unsigned i = 0; i < set->n; i++) {
		g = &set->r[i];
		if (g->dev == st.st_dev && g->ino == st.st_ino && g->off == off && g->len == len)
			return (int)i;
	}
	if (grow_one(set->r, set->n, set->cap, 8))
		return -ENOMEM;
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	g = &set->r[set->n];
	memset(g, 0, sizeof(*g));
	g->dev = st.st_dev;
	g->ino = st.st_ino;
	g->off = off;
	g->len = len;
	/* On failure too the source keeps dfd, which the set closes. */
	g->open_ret = residency_open(&g->src, dfd, off, len);
	g->every = 1;
	if (set->pages_per_sample) {
		uint64_t pages = residency_pages(off, len);

		g->every = (unsigned)((pages + set->pages_per_sample - 1) / set->pages_per_sample);
		if (g->every < 1)
			g->every = 1;
	}
	return (int)set->n++;
}

int residency_set_open_error(const struct residency_set *set, unsigned i)
{
	return i < set->n ? set->r[i].open_ret : -EINVAL;
}

enum residency_method residency_set_method(const struct residency_set *set, unsigned i)
{
	return i < set->n ? set->r[i].src.method : RESIDENCY_NONE;
}

void residency_set_next(struct residency_set *set)
{
	set->gen++;
}

/* The next part of a region read in parts: true when it completed a
 * pass, whose sum is then g->last (or its error g->read_ret). */
static bool read_part(struct residency_region *g)
{
	uint64_t ps = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t chunk = (g->len + g->every - 1) / g->every;
	uint64_t off, len;
	struct residency r;
	int ret;

	chunk = (chunk + ps - 1) / ps * ps;
	if (g->part_n == 0) {
		memset(&g->part, 0, sizeof(g->part));
		g->part.full = true;
		g->part_ret = 0;
	}
	off = (uint64_t)g->part_n * chunk;
	len = off < g->len ? (g->len - off < chunk ? g->len - off : chunk) : 0;
	ret = len ? read_range(&g->src, g->off + off, len, &r) : 0;
	if (ret < 0)
		g->part_ret = ret;
	else if (len) {
		g->part.full = g->part.full && r.full;
		g->part.cached += r.cached;
		g->part.dirty += r.dirty;
		g->part.writeback += r.writeback;
		g->part.evicted += r.evicted;
		g->part.recently_evicted += r.recently_evicted;
	}
	if (++g->part_n < g->every)
		return false;
	g->part_n = 0;
	g->read_ret = g->part_ret;
	if (!g->read_ret)
		g->last = g->part;
	return true;
}

int residency_set_read_due(struct residency_set *set, unsigned i, bool force, struct residency *out)
{
	struct residency_region *g;

	if (i >= set->n)
		return -EINVAL;
	g = &set->r[i];
	if (g->open_ret)
		return g->open_ret;
	if (g->gen != set->gen) {
		g->gen = set->gen;
		set->reads++;
		g->have = true;
		if (force || g->every <= 1) {
			g->read_ret = residency_read(&g->src, &g->last);
			g->part_n = 0;
		} else {
			g->have = read_part(g);
		}
	} else if (force && !g->have) {
		/* Asked whole after a part was read in this sample. */
		g->read_ret = residency_read(&g->src, &g->last);
		g->part_n = 0;
		g->have = true;
		set->reads++;
	}
	if (!g->have)
		return -EAGAIN;
	if (!g->read_ret)
		*out = g->last;
	return g->read_ret;
}

int residency_set_read(struct residency_set *set, unsigned i, struct residency *out)
{
	return residency_set_read_due(set, i, false, out);
}

unsigned residency_set_every(const struct residency_set *set, unsigned i)
{
	return i < set->n && set->r[i].every ? set->r[i].every : 1;
}

void residency_set_free(struct residency_set *set)
{
	for (unsigned i = 0; i < set->n; i++) {
		int fd = set->r[i].src.fd;

		residency_close(&set->r[i].src);
		if (fd >= 0)
			close(fd);
	}
	free(set->r);
	memset(set, 0, sizeof(*set));
}
