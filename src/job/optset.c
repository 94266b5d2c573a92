/*
 * optset.c - setting one option's value by its type, for options.c: the
 * message naming the option, its value and where it was written, numbers
 * through optval.c, booleans, enums, strings and bounds.
 */
#include "job/optset.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ */
/* messages */

/*
 * "bs=0 at job.fio:7: must be at least 1": the option as the user wrote
 * it, its value, where, and what is allowed.
 */
int opt_fail(const struct option_ctx *c, const char *val, struct err *e,
	     const char *fmt, ...)
{
	char why[ERR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (val)
		return err_set(e, EINVAL, "%s=%s%s%s: %s", c->key, val,
			       c->where ? " at " : "", c->where ? c->where : "", why);
	return err_set(e, EINVAL, "'%s'%s%s: %s", c->key,
		       c->where ? " at " : "", c->where ? c->where : "", why);
}

void opt_warn(const struct option_ctx *c, const char *val, const char *fmt, ...)
{
	char why[ERR_MSG_MAX / 2], msg[ERR_MSG_MAX];
	va_list ap;

	if (!c->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s=%s%s%s: %s", c->key, val ? val : "1",
		 c->where ? " at " : "", c->where ? c->where : "", why);
	c->warn(msg);
}

/* ------------------------------------------------------------------ */
/* numbers */

/*
 * Any numeric value, read by optval.c; here the failure gets the
 * option's name and place, and fio's KiB-is-1000 surprise is said.
 * @pct: NULL when % is not allowed.
 */
int num_parse(const struct option_ctx *c, const char *val, enum optval_mode mode,
		     uint64_t *out, bool *pct, struct err *e)
{
	char why[256];
	struct optval p;

	if (!val)
		return opt_fail(c, val, e, "needs a value (%s=VALUE)", c->key);
	if (pct)
		*pct = false;
	if (optval_parse(val, mode, pct != NULL, &p, why, sizeof(why)))
		return opt_fail(c, val, e, "%s", why);
	if (p.si)
		opt_warn(c, val, "fio's default kb_base=1024 reads KiB, MiB, ... as powers of 1000 "
			 "and so does faultline (%s = %llu bytes); write k, m, g for powers of 1024",
			 val, (unsigned long long)p.v);
	if (pct)
		*pct = p.pct;
	*out = p.v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* setters by type */

void *opt_field(struct job *j, const struct option_def *o)
{
	return (char *)j + o->off;
}

const char *opt_bound_str(const struct option_def *o, long long v, char *buf, size_t len)
{
	if (o->type == OPT_SIZE)
		optval_fmt_size(buf, len, (uint64_t)v);
	else
		snprintf(buf, len, "%lld", v);
	return buf;
}

int set_u64_bounded(struct job *j, const struct option_def *o, const char *val,
			   const struct option_ctx *c, enum optval_mode mode, struct err *e)
{
	char b[32];
	uint64_t v;
	int ret = num_parse(c, val, mode, &v, NULL, e);

	if (ret)
		return ret;
	if (v < (uint64_t)o->min)
		return opt_fail(c, val, e, "must be at least %s", opt_bound_str(o, o->min, b, sizeof(b)));
	if (o->max && v > (uint64_t)o->max)
		return opt_fail(c, val, e, "must be at most %s", opt_bound_str(o, o->max, b, sizeof(b)));
	if (o->type == OPT_INT && v > UINT_MAX)
		return opt_fail(c, val, e, "must be at most %u", UINT_MAX);
	if (o->type == OPT_INT)
		*(unsigned *)opt_field(j, o) = (unsigned)v;
	else
		*(uint64_t *)opt_field(j, o) = v;
	return 0;
}

int bool_parse(const struct option_ctx *c, const char *val, bool *out, struct err *e)
{
	static const char *const yes[] = { "1", "true", "yes", "on", NULL };
	static const char *const no[] = { "0", "false", "no", "off", NULL };

	*out = true;
	if (!val)
		return 0;
	for (int i = 0; yes[i]; i++) {
		if (!strcasecmp(val, yes[i]))
			return 0;
		if (!strcasecmp(val, no[i])) {
			*out = false;
			return 0;
		}
	}
	return opt_fail(c, val, e, "expected 0 or 1 (a bare '%s' means 1)", c->key);
}

static void values_list(const char *const *v, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; v && v[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", v[i]);
}

int enum_parse(const struct option_def *o, const struct option_ctx *c,
		      const char *val, int *out, struct err *e)
{
	char list[256];

	for (int i = 0; val && o->values[i]; i++) {
		if (!strcmp(val, o->values[i])) {
			*out = i;
			return 0;
		}
	}
	values_list(o->values, list, sizeof(list));
	return opt_fail(c, val, e, "expected one of: %s", list);
}

int set_str(struct job *j, const struct option_def *o, const char *val,
		   const struct option_ctx *c, struct err *e)
{
	char **p = opt_field(j, o), *s;

	if (!val || !*val)
		return opt_fail(c, val, e, "needs a value (%s=VALUE)", c->key);
	s = strdup(val);
	if (!s)
		return err_set(e, ENOMEM, "out of memory");
	free(*p);
	*p = s;
	return 0;
}

int set_by_type(struct job *j, const struct option_def *o, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	bool b;
	int v, ret;

	switch (o->type) {
	case OPT_STR:
		return set_str(j, o, val, c, e);
	case OPT_CUSTOM:
		break;		/* always has ->parse */
	case OPT_NAME:
		if (!val || !*val || strlen(val) >= JOB_NAME_MAX)
			return opt_fail(c, val, e, "a name of 1 to %d characters", JOB_NAME_MAX - 1);
		snprintf(opt_field(j, o), JOB_NAME_MAX, "%s", val);
		return 0;
	case OPT_INT:
	case OPT_U64:
	case OPT_SIZE:
		return set_u64_bounded(j, o, val, c, OPTVAL_SIZE, e);
	case OPT_TIME:
		return set_u64_bounded(j, o, val, c, OPTVAL_TIME, e);
	case OPT_BOOL:
		ret = bool_parse(c, val, &b, e);
		if (!ret)
			*(bool *)opt_field(j, o) = o->inverse ? !b : b;
		return ret;
	case OPT_ENUM:
		ret = enum_parse(o, c, val, &v, e);
		if (!ret)
			*(int *)opt_field(j, o) = v;
		return ret;
	}
	return opt_fail(c, val, e, "internal error: bad option type");
}

