/*
 * notes.c - what a run says on stderr while it runs; see notes.h.
 */
#include "out/notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void notes_warning(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "faultline: warning: %s\n", msg);
}

void notes_layout(const char *path, uint64_t done, uint64_t total)
{
	if (!isatty(2))
		return;
	fprintf(stderr, "\rfaultline: laying out %s: %llu/%llu MiB%s", path,
		(unsigned long long)(done >> 20), (unsigned long long)(total >> 20),
		done >= total ? "\n" : "");
}
