/* err.c - filling struct err; see err.h. */
#include "err.h"

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
	char prefix[ERR_MSG_MAX], old[ERR_MSG_MAX];
	va_list ap;

	if (!e)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	snprintf(old, sizeof(old), "%s", e->msg);
	snprintf(e->msg, sizeof(e->msg), "%s: %s", prefix, old);
	return -(e->code ? e->code : EINVAL);
}
