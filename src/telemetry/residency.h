/*
 * residency.h - how much of a target's region sits in the page cache.
 *
 * cachestat(2) (Linux 6.5+) answers for a file range in one call: pages
 * cached, dirty, under writeback, evicted (the kernel still holds a
 * shadow entry for them) and recently evicted (evicted so recently that
 * reading them again counts as a refault: the working set does not fit).
 * Older kernels have only mincore(2) on a mapping of the range, which
 * tells cached pages and nothing else; the other counts are then absent.
 *
 * The method is chosen once per source: cachestat, unless the kernel
 * answers ENOSYS (or $FAULTLINE_NO_CACHESTAT is set, which is how the
 * fallback is tested on a kernel that has cachestat). Functions return
 * 0 or -errno and never print.
 */
#ifndef FAULTLINE_RESIDENCY_H
#define FAULTLINE_RESIDENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum residency_method { RESIDENCY_NONE, RESIDENCY_CACHESTAT, RESIDENCY_MINCORE };

/* Pages of the range. With mincore only cached is known (full false). */
struct residency {
	bool full;			/* dirty..recently_evicted are known */
	uint64_t cached, dirty, writeback, evicted, recently_evicted;
};

struct residency_src {
	int fd;				/* the target's, not owned */
	uint64_t off, len;		/* the region, bytes */
	enum residency_method method;
	unsigned char *vec;		/* mincore's answer, one byte per page */
	size_t vec_len;
};

/* cachestat(2) of [off, off+len) of @fd. -ENOSYS on a kernel without it. */
int residency_cachestat(int fd, uint64_t off, uint64_t len, struct residency *out);
/* mincore(2) of read-only shared mappings of the range, @vec_len pages
 * at a time (one byte of @vec each), so a 2 TB region needs no 512 MB
 * vector. Only cached is filled. */
int residency_mincore(int fd, uint64_t off, uint64_t len, unsigned char *vec, size_t vec_len,
		      struct residency *out);
/* The vector a source keeps: a 4 GiB window of 4 KiB pages at most. */
#define RESIDENCY_VEC_MAX (1u << 20)
/* Pages a mapping of [off, off+len) spans (off rounded down to a page). */
size_t residency_pages(uint64_t off, uint64_t len);

/* Pick the method for @fd's region; -errno when neither works. */
int residency_open(struct residency_src *s, int fd, uint64_t off, uint64_t len);
int residency_read(struct residency_src *s, struct residency *out);
void residency_close(struct residency_src *s);

const char *residency_method_name(enum residency_method m);

/*
 * Regions shared among jobs. 2000 jobs reading one file ask
 * about one region: a set holds each distinct region (file and range)
 * once, opened on a duplicate of the first job's descriptor (so it
 * outlives that job's own), and reads it at most once per sample: a
 * caller starts a sample with residency_set_next, and every job asking
 * about the region in it gets the same answer. Linear in the regions
 * per sample, whatever the number of jobs.
 */
struct residency_region {
	dev_t dev;
	ino_t ino;
	uint64_t off, len;
	struct residency_src src;	/* src.fd is the set's own duplicate */
	int open_ret;			/* 0, or why residency_open failed */
	uint64_t gen;			/* sample of the last read, 0 = none */
	int read_ret;
	struct residency last;
	/* Read in @every parts, one per sample (1: whole each sample): a
	 * large region's read walks its every page (cachestat took 4 to
	 * 27 ms for 512 MiB on the loaded 2-vCPU guest), more than a sample
	 * of 2000 jobs may cost. The parts' sum is its reading when the
	 * pass ends (@have in that sample). From the set's pages_per_sample
	 * when added. */
	unsigned every, part_n;
	struct residency part;
	int part_ret;
	bool have;			/* a reading for the current sample */
	bool noted;			/* a user has been told */
	bool warned;			/* the caller's: its failure was said */
};

struct residency_set {
	unsigned n;
	size_t cap;
	struct residency_region *r;
	uint64_t gen;			/* the current sample, from 1 */
	uint64_t reads;			/* residency_read calls made, for tests */
	/* Pages a sample may read of one region; a larger region is read
	 * over one sample in ceil(pages / pages_per_sample). 0: no bound. */
	uint64_t pages_per_sample;
};

void residency_set_init(struct residency_set *set);
/* The index of @fd's region [off, off+len), added (and opened) when the
 * set has no such region yet; -errno when it cannot be added (fstat,
 * dup, out of memory). A region that cannot be read is still added: its
 * reads return its open error. */
int residency_set_add(struct residency_set *set, int fd, uint64_t off, uint64_t len);
/* The open result of region @i: 0 or -errno. */
int residency_set_open_error(const struct residency_set *set, unsigned i);
enum residency_method residency_set_method(const struct residency_set *set, unsigned i);
/* A new sample: every region is read afresh when next asked about. */
void residency_set_next(struct residency_set *set);
/* Region @i in the current sample: read once, then the same answer.
 * A region read in parts gives -EAGAIN in the samples that do not end
 * a pass, unless @force (read whole now: a job's end). */
int residency_set_read(struct residency_set *set, unsigned i, struct residency *out);
int residency_set_read_due(struct residency_set *set, unsigned i, bool force, struct residency *out);
/* Over how many samples region @i is read whole once. */
unsigned residency_set_every(const struct residency_set *set, unsigned i);
void residency_set_free(struct residency_set *set);

/* What this kernel offers, probed on @fd (a file): the method, and in
 * @why the reason cachestat is not used when it is not. */
enum residency_method residency_probe(int fd, char *why, size_t cap);

#endif
