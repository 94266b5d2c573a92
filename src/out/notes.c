/*
 * notes.c - what a run says on stderr while it runs; see notes.h.
 */
#include "out/notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* One line at once: a line that began with one call and ended with
 * another could have another thread's line in between. */
static void line(const char *kind, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "faultline: %s%s\n", kind, msg);
}

void notes_warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line("warning: ", fmt, ap);
	va_end(ap);
}

void notes_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line("note: ", fmt, ap);
	va_end(ap);
}

void notes_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line("", fmt, ap);
	va_end(ap);
}

void notes_status(const char *text, size_t prev_len)
{
	fprintf(stderr, "\r%-*s", (int)prev_len, text);
	fflush(stderr);
}

void notes_status_end(void)
{
	fprintf(stderr, "\n");
}

void notes_layout(const char *path, uint64_t done, uint64_t total)
{
	if (!isatty(2))
		return;
	fprintf(stderr, "\rfaultline: laying out %s: %llu/%llu MiB%s", path,
		(unsigned long long)(done >> 20), (unsigned long long)(total >> 20),
		done >= total ? "\n" : "");
}
