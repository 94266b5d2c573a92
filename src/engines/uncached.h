/*
 * uncached.h - uncached buffered reads (fio's uncached=1): RWF_DONTCACHE
 * (Linux 6.14+) reads through the page cache and drops the pages once
 * copied, so a file read once leaves no cache behind to evict: between
 * buffered reads and O_DIRECT, a choice a database engineer also faces.
 *
 * A kernel before 6.14 answers EINVAL for the unknown flag, and a
 * filesystem without support (FOP_DONTCACHE) answers EOPNOTSUPP; either
 * way the job is refused before anything runs, saying which.
 */
#ifndef FAULTLINE_UNCACHED_H
#define FAULTLINE_UNCACHED_H

#include <stdint.h>

#include "lib/err.h"

/* include/uapi/linux/fs.h of 6.14; Debian 12's headers predate it. */
#define UNCACHED_RWF_DONTCACHE 0x00000080

/* One uncached read of a byte at @off of @fd: 0, or -errno with @e
 * saying why uncached reads cannot be had for @path on this kernel. */
int uncached_probe(int fd, uint64_t off, const char *path, struct err *e);

/* The sentence for an uncached probe's -errno @err on kernel @release. */
int uncached_explain(int err, const char *release, const char *path, struct err *e);

#endif
