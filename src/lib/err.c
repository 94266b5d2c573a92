/* err.c - filling struct err; see err.h. */
#include "lib/err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int err_set(struct err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (code < 0)
		code = -code;
	if (code == 0)
		code = EINVAL;
	if (e) {
		e->code = code;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return -code;
}

int err_wrap(struct err *e, const char *fmt, ...)
{
	char old[ERR_MSG_MAX];
	size_t n;
	va_list ap;
	int w;

	if (!e)
		return -EINVAL;
	memcpy(old, e->msg, sizeof(old));
	va_start(ap, fmt);
	w = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	n = w < 0 ? 0 : (size_t)w;
	if (n + 2 < sizeof(e->msg)) {
		/* "prefix: old", truncated to fit */
		e->msg[n] = ':';
		e->msg[n + 1] = ' ';
		strncpy(e->msg + n + 2, old, sizeof(e->msg) - n - 3);
		e->msg[sizeof(e->msg) - 1] = '\0';
	}
	return -(e->code ? e->code : EINVAL);
}
