/*
 * capout.h - what a capture leaves: DIR/capture.job, one job per stream,
 * and the summary of what was captured, lost and cannot be seen.
 */
#ifndef FAULTLINE_CAPOUT_H
#define FAULTLINE_CAPOUT_H

#include <stdint.h>
#include <stdio.h>

#include "capture/capstream.h"
#include "lib/err.h"

/* capture.job in @dirfd (the directory @dir, absolute), written whole
 * (a temporary file renamed into place). 0 or -errno with @e. */
int capout_job(int dirfd, const char *dir, const struct cap_state *s, const char *cmdline, const char *method,
	       struct err *e);

/* The summary: the method, streams, files, what was lost and what
 * cannot be seen. @unpositioned: preadv2/pwritev2 calls at offset -1. */
void capout_summary(FILE *out, const struct cap_state *s, const char *dir, double seconds, uint64_t lost,
		    uint64_t unpositioned, const char *method, bool pagecache, bool ext4);

#endif
