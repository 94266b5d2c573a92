/*
 * csvout.h - the time-series CSV as it is written: one whole row at a
 * time, or nothing.
 *
 * Each row goes out in one write(2), so a run killed at any moment
 * leaves only whole rows behind (the kernel does not split a write to a
 * regular file between a kill and its completion). A write that fails
 * or comes up short (ENOSPC, EIO) is cut back to the last whole row with
 * ftruncate, no more rows are written, and the error is kept for the
 * run's exit status: the CSV is then incomplete, never torn.
 *
 * A writer of many rows at once (the sampler: 2000 jobs' rows each
 * interval) may give it a buffer: rows then gather in it, whole, and go
 * out together in one write(2) at csvout_flush or when the next row
 * would not fit; a write of whole rows ends on a row, so the file does
 * too.
 */
#ifndef FAULTLINE_CSVOUT_H
#define FAULTLINE_CSVOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/err.h"

struct csvout {
	int fd;
	bool is_stdout;
	bool broken;		/* a write failed: no more rows */
	int error;		/* its errno (EPIPE: the reader of stdout left) */
	off_t good;		/* bytes of whole rows written so far */
	const char *path;
	char *buf;		/* csvout_buffer's, or NULL: a write per row */
	size_t cap, len;
};

/* @path "-" is standard output. */
int csvout_open(struct csvout *c, const char *path, struct err *e);
/* Write @len bytes of @line and a newline as one row. 0, or -errno the
 * first time a row could not be written (later calls do nothing). */
int csvout_row(struct csvout *c, const char *line, size_t len);
/* Gather rows in a buffer of @cap bytes until csvout_flush (0, or
 * -ENOMEM: rows then go out one by one, as before). */
int csvout_buffer(struct csvout *c, size_t cap);
/* Write out the rows gathered: 0, or -errno as csvout_row. */
int csvout_flush(struct csvout *c);
/* Flushes, then closes. */
void csvout_close(struct csvout *c);

#endif
