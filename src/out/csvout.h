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
};

/* @path "-" is standard output. */
int csvout_open(struct csvout *c, const char *path, struct err *e);
/* Write @len bytes of @line and a newline as one row. 0, or -errno the
 * first time a row could not be written (later calls do nothing). */
int csvout_row(struct csvout *c, const char *line, size_t len);
void csvout_close(struct csvout *c);

#endif
