/*
 * outfile.h - an output file that is whole or absent.
 *
 * The summary and JSON files are written to a temporary file beside
 * the destination and renamed over it only when every byte, the close
 * and the fsync succeeded; on any failure the temporary file is removed
 * and the destination is left as it was. A full disk (ENOSPC), an I/O
 * error or a vanished directory therefore never leaves an empty or
 * half-written file where a reader expects results.
 */
#ifndef FAULTLINE_OUTFILE_H
#define FAULTLINE_OUTFILE_H

#include <stdio.h>

#include "lib/err.h"

struct outfile {
	char *path;		/* the destination */
	char *dir;		/* its directory, fsynced after the rename */
	char *tmp;		/* the temporary file being written */
	FILE *f;		/* write here between open and commit */
};

/* Before a run: would @path be writable, without creating it (its
 * directory is writable, and an existing @path is a writable regular
 * file)? 0 or -errno with a message naming @what ("--output"). */
int outfile_check(const char *path, const char *what, struct err *e);
/* Start writing @path: o->f is a temporary file in its directory. */
int outfile_open(struct outfile *o, const char *path, struct err *e);
/* Flush, fsync, give the temporary file the destination's mode and
 * rename it over @path. On failure the temporary file is removed and
 * -errno returned with a message; either way @o is released. */
int outfile_commit(struct outfile *o, struct err *e);
/* Give up: remove the temporary file, release @o. */
void outfile_abort(struct outfile *o);

#endif
