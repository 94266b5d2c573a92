/*
 * readfile.h - a small file (a /proc or /sys entry) read whole into a
 * caller's buffer, for the readers that open it once and are done.
 * The sampler's sources, re-read every interval, keep their descriptor
 * instead (telemetry/procfs.h, struct procfs_src).
 */
#ifndef FAULTLINE_READFILE_H
#define FAULTLINE_READFILE_H

#include <stddef.h>

/* Up to @cap - 1 bytes of @path into @buf, NUL-terminated: how many, or
 * -errno. One read(2): what such a file holds comes in one. */
int readfile_small(const char *path, char *buf, size_t cap);

#endif
