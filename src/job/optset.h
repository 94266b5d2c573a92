/*
 * optset.h - setting one option's value by its type (optset.c), shared
 * by the option table's own parsers in options.c. Not for other modules:
 * they set options through option_set and option_set_ctx.
 */
#ifndef FAULTLINE_OPTSET_H
#define FAULTLINE_OPTSET_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "job/job.h"
#include "job/optdef.h"
#include "job/optval.h"

/*
 * "bs=0 at job.fio:7: must be at least 1": the option as the user wrote
 * it, its value, where, and what is allowed. Returns -EINVAL.
 */
int opt_fail(const struct option_ctx *c, const char *val, struct err *e,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A warning through c->warn, dropped when there is none. */
void opt_warn(const struct option_ctx *c, const char *val, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Any numeric value, read by optval.c, a failure named with the option
 * and its place. @pct: NULL when % is not allowed, else set to whether
 * the value was a percentage.
 */
int num_parse(const struct option_ctx *c, const char *val, enum optval_mode mode,
	      uint64_t *out, bool *pct, struct err *e);
/* 1/true/yes/on or 0/false/no/off; no value is 1. */
int bool_parse(const struct option_ctx *c, const char *val, bool *out, struct err *e);
/* @val's index in o->values, or the list of values in the error. */
int enum_parse(const struct option_def *o, const struct option_ctx *c,
	       const char *val, int *out, struct err *e);

/* The job's field that @o sets. */
void *opt_field(struct job *j, const struct option_def *o);
/* A bound of @o as the user would write it, in range errors and
 * --cmdhelp alike: "1g" for a size, else digits. Returns @buf. */
const char *opt_bound_str(const struct option_def *o, long long v, char *buf, size_t len);
/* Setters: a number within o->min..o->max, a non-empty string, any type. */
int set_u64_bounded(struct job *j, const struct option_def *o, const char *val,
		    const struct option_ctx *c, enum optval_mode mode, struct err *e);
opt_parse_fn set_str;
opt_parse_fn set_by_type;

#endif
