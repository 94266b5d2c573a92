/*
 * datadir.c - where faultline's own files are (datadir.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/datadir.h"

/* The Makefile passes $(PREFIX)/share/faultline. */
#ifndef FAULTLINE_DATADIR
#define FAULTLINE_DATADIR "/usr/local/share/faultline"
#endif

/* The folder of the running executable, in @buf; "" when unknown. */
static void exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *s;

	buf[n > 0 ? n : 0] = '\0';
	if ((s = strrchr(buf, '/')))
		*s = '\0';
}

/* The first of @rel under the executable's folder that is a folder we
 * can use, else FAULTLINE_DATADIR/@last. */
static const char *find(char *buf, size_t len, const char *const *rel, const char *last,
			int *which)
{
	char exe[PATH_MAX];

	exe_dir(exe, sizeof(exe));
	for (int i = 0; exe[0] && rel[i]; i++) {
		snprintf(buf, len, "%s/%s", exe, rel[i]);
		if (!access(buf, R_OK | X_OK)) {
			*which = i;
			return buf;
		}
	}
	*which = -1;
	snprintf(buf, len, "%s/%s", FAULTLINE_DATADIR, last);
	return buf;
}

const char *datadir_plot(char *buf, size_t len, bool *installed)
{
	/* A build tree's plot/ beside it or one folder up; an installed
	 * copy's share/faultline/plot. */
	static const char *const rel[] = { "plot", "../plot", "../share/faultline/plot", NULL };
	const char *env = getenv("FAULTLINE_PLOT_DIR");
	int which;

	if (env && *env) {
		if (installed)
			*installed = false;
		snprintf(buf, len, "%s", env);
		return buf;
	}
	find(buf, len, rel, "plot", &which);
	if (installed)
		*installed = which < 0 || which == 2;
	return buf;
}

const char *datadir_jobs(char *buf, size_t len)
{
	static const char *const rel[] = { "jobs", "../jobs", "../share/faultline/jobs", NULL };
	int which;

	return find(buf, len, rel, "jobs", &which);
}
