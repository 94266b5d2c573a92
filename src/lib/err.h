/*
 * err.h - how errors travel up to main.
 *
 * Everything below main returns 0 or -errno and, where the caller would
 * want context ("target.c: open /dev/sdb: Permission denied"), fills a
 * struct err. Only main prints and decides the exit status.
 */
#ifndef FAULTLINE_ERR_H
#define FAULTLINE_ERR_H

#include <stdarg.h>

/* Room for a path, an option, a value and a sentence about them. */
#define ERR_MSG_MAX 1024

struct err {
	int code;		/* positive errno, or 0 */
	char msg[ERR_MSG_MAX];
};

/* Fill @e (may be NULL) and return -code, so callers can write
 * "return err_set(e, EINVAL, "...", ...);". A code of 0 is taken as EINVAL. */
int err_set(struct err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepend context to an existing message: "ctx: old message". */
int err_wrap(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
