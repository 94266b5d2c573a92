/*
 * capino.h - files by inode, named from /proc: the pagecache method's
 * tracepoints say which inode a task read, not which descriptor, so the
 * files a followed process has open (/proc/PID/fd) or mapped
 * (/proc/PID/maps) are listed with their device and inode, at the
 * start and whenever an inode no list holds is read. Files mapped
 * executable (programs, libraries) and tmpfs files are listed as no
 * data: their faults are code run and shared memory used.
 *
 * Functions return 0 or -errno and never print.
 */
#ifndef FAULTLINE_CAPINO_H
#define FAULTLINE_CAPINO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct capino_ent {
	uint64_t ino;
	uint32_t dev;		/* the kernel's dev_t: major << 20 | minor */
	bool file;		/* a regular file on a filesystem that holds data (not tmpfs), not mapped executable */
	bool told;		/* the reader said what it is (CAP_NAME) */
	char *path;		/* NULL: /proc showed it nowhere */
};

struct capino {
	struct capino_ent *e;
	size_t n, cap;
};

/* Add what process @pid has open or mapped: 0, -ENOENT when it is gone,
 * -ENOMEM. */
int capino_scan(struct capino *c, int pid);
struct capino_ent *capino_find(const struct capino *c, uint32_t dev, uint64_t ino);
/* An inode /proc showed nowhere, listed so it is not looked for again:
 * 0 or -ENOMEM. */
int capino_unnamed(struct capino *c, uint32_t dev, uint64_t ino);
void capino_free(struct capino *c);

#endif
