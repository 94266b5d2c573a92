/*
 * tests/scratchdir.h - a scratch folder for the unit tests that need
 * files of their own: scratch_setup makes $TMPDIR (else /tmp)
 * /faultline-TEST-XXXXXX (TEST the program's name) into scratch_dir,
 * scratch_teardown removes it and all it holds; cmocka's setup and
 * teardown, for a group or for each test.
 */
#ifndef FAULTLINE_SCRATCHDIR_H
#define FAULTLINE_SCRATCHDIR_H

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static char scratch_dir[PATH_MAX];

static inline int scratch_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(scratch_dir, sizeof(scratch_dir), "%s/faultline-%s-XXXXXX", tmp ? tmp : "/tmp",
		 program_invocation_short_name);
	return mkdtemp(scratch_dir) ? 0 : -1;
}

static inline int scratch_remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline int scratch_teardown(void **state)
{
	(void)state;
	return nftw(scratch_dir, scratch_remove_one, 16, FTW_DEPTH | FTW_PHYS) ? -1 : 0;
}

#endif
