/*
 * options.c - the option table (SPEC 2) and the value parsers behind it.
 *
 * option_table is the single source of truth: jobfile.c parses through
 * it, option_defaults applies its defaults, --cmdhelp prints it, json_out
 * and the man-page test iterate it. Values follow fio's rules: sizes take
 * k m g t p (powers of 1024, as fio's default kb_base=1024), times are
 * seconds unless suffixed, numeric values may be fio arithmetic
 * "(16*1024*1024)" and use $pagesize, $mb_memory and $ncpus.
 */
#include "options.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engine.h"

/* Enum fields are stored through an int pointer. */
_Static_assert(sizeof(enum rw_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum madv_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum prefetch_mode) == sizeof(int), "enum size");

#define MIB (1024ull * 1024)

/* ------------------------------------------------------------------ */
/* messages */

/*
 * "bs=0 at job.fio:7: must be at least 1": the option as the user wrote
 * it, its value, where, and what is allowed.
 */
static int opt_fail(const struct option_ctx *c, const char *val, struct err *e,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int opt_fail(const struct option_ctx *c, const char *val, struct err *e,
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

static void opt_warn(const struct option_ctx *c, const char *val, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void opt_warn(const struct option_ctx *c, const char *val, const char *fmt, ...)
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
/* units */

enum num_mode { NUM_SIZE, NUM_TIME };

struct unit {
	const char *name;
	uint64_t mult;
	bool si;		/* kib..pib: 1000^n under fio's kb_base=1024 */
};

/*
 * fio's default kb_base=1024 reads k/kb as 1024 and, "to avoid breaking
 * old scripts", KiB as 1000 (HOWTO, "int"). A job must mean here what it
 * means to fio, so faultline does the same and warns.
 */
static const struct unit size_units[] = {
	{ "", 1, false }, { "b", 1, false },
	{ "k", 1ull << 10, false }, { "kb", 1ull << 10, false },
	{ "m", 1ull << 20, false }, { "mb", 1ull << 20, false },
	{ "g", 1ull << 30, false }, { "gb", 1ull << 30, false },
	{ "t", 1ull << 40, false }, { "tb", 1ull << 40, false },
	{ "p", 1ull << 50, false }, { "pb", 1ull << 50, false },
	{ "kib", 1000ull, true }, { "mib", 1000000ull, true },
	{ "gib", 1000000000ull, true }, { "tib", 1000000000000ull, true },
	{ "pib", 1000000000000000ull, true },
	{ NULL, 0, false },
};

/* In nanoseconds; a bare number is seconds (fio's is_seconds options). */
static const struct unit time_units[] = {
	{ "", 1000000000ull, false },
	{ "us", 1000ull, false }, { "usec", 1000ull, false },
	{ "ms", 1000000ull, false }, { "msec", 1000000ull, false },
	{ "s", 1000000000ull, false }, { "sec", 1000000000ull, false },
	{ "m", 60000000000ull, false }, { "h", 3600000000000ull, false },
	{ "d", 86400000000000ull, false },
	{ NULL, 0, false },
};

static const struct unit *unit_find(enum num_mode mode, const char *s, size_t n)
{
	const struct unit *u = mode == NUM_TIME ? time_units : size_units;

	for (; u->name; u++)
		if (strlen(u->name) == n && !strncasecmp(u->name, s, n))
			return u;
	return NULL;
}

static const char *unit_hint(enum num_mode mode)
{
	if (mode == NUM_TIME)
		return "a number of seconds, or with us, ms, s, m, h, d";
	return "k, m, g, t, p: powers of 1024; a plain number is bytes";
}

/* ------------------------------------------------------------------ */
/* fio arithmetic */

/* fio's reserved keywords (HOWTO "Reserved keywords"). */
static uint64_t kw_mb_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / MIB : 0;
}

/* fio replaces keywords textually, so "$mb_memorym" is "<N>m": match
 * the keyword as a prefix. Returns its length, 0 when none matches. */
static size_t kw_value(const char *s, long long *v, bool *mb)
{
	if (!strncmp(s, "$pagesize", 9)) {
		*v = sysconf(_SC_PAGESIZE);
		return 9;
	}
	if (!strncmp(s, "$mb_memory", 10)) {
		*v = (long long)kw_mb_memory();
		*mb = true;
		return 10;
	}
	if (!strncmp(s, "$ncpus", 6)) {
		*v = sysconf(_SC_NPROCESSORS_ONLN);
		return 6;
	}
	return 0;
}

/*
 * A value of fio's expression grammar (exp/expression-parser.y): an
 * integer until a decimal enters, then a double; integer division
 * truncates, as in fio.
 */
struct num {
	long long i;
	double d;
	bool isd;
};

struct expr {
	const char *p;		/* next character */
	enum num_mode mode;
	bool units;		/* a unit suffix appeared: no implied unit */
	bool mb;		/* $mb_memory appeared */
	unsigned depth;		/* recursion, bounded so hostile input cannot
				 * exhaust the stack */
	char why[200];
};

/* Far beyond any real expression. */
#define EXPR_DEPTH_MAX 64

static int expr_fail(struct expr *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int expr_fail(struct expr *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->why, sizeof(x->why), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static double num_d(struct num n)
{
	return n.isd ? n.d : (double)n.i;
}

static void skip_ws(struct expr *x)
{
	while (*x->p == ' ' || *x->p == '\t')
		x->p++;
}

static int arith(struct expr *x, struct num *l, char op, struct num r)
{
	long long v = 0;
	bool ovf = false;

	if (l->isd || r.isd) {
		double a = num_d(*l), b = num_d(r);

		if (op == '%')
			return expr_fail(x, "%% of a decimal number");
		if (op == '/' && fabs(b) < 1e-20)
			return expr_fail(x, "division by zero");
		l->d = op == '+' ? a + b : op == '-' ? a - b : op == '*' ? a * b : a / b;
		l->isd = true;
		return 0;
	}
	switch (op) {
	case '+': ovf = __builtin_add_overflow(l->i, r.i, &v); break;
	case '-': ovf = __builtin_sub_overflow(l->i, r.i, &v); break;
	case '*': ovf = __builtin_mul_overflow(l->i, r.i, &v); break;
	case '/':
	case '%':
		if (r.i == 0)
			return expr_fail(x, "division by zero");
		v = op == '/' ? l->i / r.i : l->i % r.i;
		break;
	}
	if (ovf)
		return expr_fail(x, "result too large");
	l->i = v;
	return 0;
}

/* fio: integer ^ non-negative integer stays an integer. Square and
 * multiply, so 1^99999999999 is quick. */
static int power(struct expr *x, struct num *l, struct num r)
{
	long long v = 1, b = l->i, n = r.i;

	if (l->isd || r.isd) {
		l->d = pow(num_d(*l), num_d(r));
		l->isd = true;
		return 0;
	}
	if (n < 0) {
		/* b^-n is 1/b^n: whole only for b = +-1, and 0^-n divides by
		 * zero (pow() gives inf, which no long long holds). */
		if (b == 0)
			return expr_fail(x, "division by zero");
		l->i = (long long)pow((double)b, (double)n);
		return 0;
	}
	for (; n; n >>= 1) {
		if ((n & 1) && __builtin_mul_overflow(v, b, &v))
			return expr_fail(x, "result too large");
		if (n > 1 && __builtin_mul_overflow(b, b, &b))
			return expr_fail(x, "result too large");
	}
	l->i = v;
	return 0;
}

static int parse_sum(struct expr *x, struct num *out);

static int parse_number(struct expr *x, struct num *out)
{
	const char *s = x->p;
	char *end;

	memset(out, 0, sizeof(*out));
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		errno = 0;
		out->i = strtoll(s, &end, 16);
	} else {
		size_t n = strspn(s, "0123456789");

		if (s[n] == '.' && isdigit((unsigned char)s[n + 1])) {
			out->d = strtod(s, &end);
			out->isd = true;
			x->p = end;
			return 0;
		}
		errno = 0;
		out->i = strtoll(s, &end, 10);
	}
	if (end == s)
		return expr_fail(x, "expected a number at '%s'", s);
	if (errno == ERANGE)
		return expr_fail(x, "number too large");
	x->p = end;
	return 0;
}

static int parse_primary(struct expr *x, struct num *out)
{
	int ret;

	skip_ws(x);
	if (*x->p == '(') {
		x->p++;
		ret = parse_sum(x, out);
		if (ret)
			return ret;
		skip_ws(x);
		if (*x->p != ')')
			return expr_fail(x, "missing ')'");
		x->p++;
		return 0;
	}
	if (*x->p == '$') {
		size_t n;

		memset(out, 0, sizeof(*out));
		n = kw_value(x->p, &out->i, &x->mb);
		if (!n)
			return expr_fail(x, "unknown keyword '%.*s' (fio's are $pagesize, $mb_memory, $ncpus)",
					 (int)(1 + strspn(x->p + 1, "abcdefghijklmnopqrstuvwxyz_")), x->p);
		x->p += n;
		return 0;
	}
	if (isdigit((unsigned char)*x->p) || *x->p == '.')
		return parse_number(x, out);
	if (!*x->p)
		return expr_fail(x, "expression ends too early");
	return expr_fail(x, "unexpected '%c'", *x->p);
}

/* fio gives unary minus the highest precedence: -2^2 is 4. */
static int parse_unary(struct expr *x, struct num *out)
{
	int ret;

	skip_ws(x);
	if (*x->p != '-')
		return parse_primary(x, out);
	if (++x->depth > EXPR_DEPTH_MAX)
		return expr_fail(x, "nested too deeply");
	x->p++;
	ret = parse_unary(x, out);
	x->depth--;
	out->i = -out->i;
	out->d = -out->d;
	return ret;
}

/* fio binds % tighter than ^ (expression-parser.y declares it last). */
static int parse_mod(struct expr *x, struct num *out)
{
	struct num r;
	int ret = parse_unary(x, out);

	for (skip_ws(x); !ret && *x->p == '%'; skip_ws(x)) {
		x->p++;
		ret = parse_unary(x, &r);
		if (!ret)
			ret = arith(x, out, '%', r);
	}
	return ret;
}

static int parse_pow(struct expr *x, struct num *out)
{
	struct num r;
	int ret = parse_mod(x, out);

	skip_ws(x);
	if (ret || *x->p != '^')
		return ret;
	if (++x->depth > EXPR_DEPTH_MAX)
		return expr_fail(x, "nested too deeply");
	x->p++;
	ret = parse_pow(x, &r);
	x->depth--;
	return ret ? ret : power(x, out, r);
}

static int apply_unit(struct expr *x, struct num *n)
{
	size_t len = 0;
	const struct unit *u;

	while (isalpha((unsigned char)x->p[len]))
		len++;
	u = unit_find(x->mode, x->p, len);
	if (!u || !u->name[0])
		return expr_fail(x, "unknown unit '%.*s' (%s)", (int)len, x->p,
				 x->mode == NUM_TIME ? "us, ms, s, m, h, d" : "k, m, g, t, p");
	x->p += len;
	x->units = true;
	/* Expressions count time in microseconds, as fio's. */
	if (x->mode == NUM_TIME) {
		uint64_t us = u->mult / 1000;

		if (n->isd)
			n->d *= (double)us;
		else if (__builtin_mul_overflow(n->i, (long long)us, &n->i))
			return expr_fail(x, "result too large");
		return 0;
	}
	if (n->isd)
		n->d *= (double)u->mult;
	else if (__builtin_mul_overflow(n->i, (long long)u->mult, &n->i))
		return expr_fail(x, "result too large");
	return 0;
}

/*
 * A unit suffix binds looser than * and / but tighter than + and -, as
 * fio's %right SUFFIX: "2*4k" is (2*4)k, "1+2k" is 1+(2k).
 */
static int parse_prod(struct expr *x, struct num *out)
{
	struct num r;
	int ret = parse_pow(x, out);

	while (!ret) {
		char op;

		skip_ws(x);
		op = *x->p;
		if (isalpha((unsigned char)op)) {
			ret = apply_unit(x, out);
			continue;
		}
		if (op != '*' && op != '/')
			break;
		x->p++;
		ret = parse_pow(x, &r);
		if (!ret)
			ret = arith(x, out, op, r);
	}
	return ret;
}

static int parse_sum(struct expr *x, struct num *out)
{
	struct num r;
	int ret;

	if (++x->depth > EXPR_DEPTH_MAX)
		return expr_fail(x, "nested too deeply");
	ret = parse_prod(x, out);

	while (!ret) {
		char op;

		skip_ws(x);
		op = *x->p;
		if (op != '+' && op != '-')
			break;
		x->p++;
		ret = parse_prod(x, &r);
		if (!ret)
			ret = arith(x, out, op, r);
	}
	x->depth--;
	return ret;
}

/*
 * Evaluate @s to bytes (NUM_SIZE) or nanoseconds (NUM_TIME). As in fio,
 * a time expression without a unit is in seconds and one with units
 * counts bare numbers in microseconds. A size expression that uses
 * $mb_memory without a unit is in MiB: fio's HOWTO promises
 * "size=8*$mb_memory" is 8 times the memory and SPEC 2 that
 * "size=$mb_memory/8" is an eighth of it (fio 3.33 itself, piping the
 * text to bc, would take the result as bytes).
 */
static int expr_eval(const char *s, enum num_mode mode, uint64_t *out, char *why,
		     size_t whylen)
{
	struct expr x = { .p = s, .mode = mode };
	struct num n;
	long long v;
	int ret;

	ret = parse_sum(&x, &n);
	skip_ws(&x);
	if (!ret && *x.p)
		ret = expr_fail(&x, *x.p == ')' ? "unbalanced ')'" : "unexpected '%s'", x.p);
	if (!ret && n.isd && !(n.d > -9.2e18 && n.d < 9.2e18))
		ret = expr_fail(&x, "result out of range");
	if (ret) {
		snprintf(why, whylen, "%s", x.why);
		return ret;
	}
	v = n.isd ? (long long)n.d : n.i;
	if (v < 0) {
		snprintf(why, whylen, "the result %lld is negative", v);
		return -EINVAL;
	}
	*out = (uint64_t)v;
	if (mode == NUM_SIZE && x.mb && !x.units && __builtin_mul_overflow(*out, MIB, out))
		ret = -ERANGE;
	if (mode == NUM_TIME && !x.units && __builtin_mul_overflow(*out, 1000000ull, out))
		ret = -ERANGE;
	if (mode == NUM_TIME && __builtin_mul_overflow(*out, 1000ull, out))
		ret = -ERANGE;
	if (ret) {
		snprintf(why, whylen, "result too large");
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* plain numbers */

struct plain {
	uint64_t v;
	bool pct;		/* ended in % */
	bool si;		/* used a kib..pib unit */
};

static int plain_hex(const char *s, struct plain *p, char *why, size_t whylen)
{
	char *end;

	errno = 0;
	p->v = strtoull(s, &end, 16);
	if (end == s + 2 || *end || errno) {
		snprintf(why, whylen, "not a hexadecimal number");
		return -EINVAL;
	}
	return 0;
}

/* The number at @s times @mult: exact for integers; a decimal must come
 * out whole ("1.5k" is 1536 bytes, "0.1k" is an error). */
static int plain_scale(const char *s, bool decimal, uint64_t mult, enum num_mode mode,
		       uint64_t *v, char *why, size_t whylen)
{
	double d;

	if (!decimal) {
		errno = 0;
		*v = strtoull(s, NULL, 10);
		if (!errno && !__builtin_mul_overflow(*v, mult, v))
			return 0;
	} else {
		d = strtod(s, NULL) * (double)mult;
		if (d != floor(d)) {
			snprintf(why, whylen, "not a whole number of %s",
				 mode == NUM_TIME ? "nanoseconds" : "bytes");
			return -EINVAL;
		}
		if (d < 18446744073709551615.0) {
			*v = (uint64_t)d;
			return 0;
		}
	}
	snprintf(why, whylen, "too large");
	return -EINVAL;
}

/* "4k", "1.5g", "500ms", "50%": a number and one unit, nothing else. */
static int plain_parse(const char *s, enum num_mode mode, bool pct_ok, struct plain *p,
		       char *why, size_t whylen)
{
	size_t ni = strspn(s, "0123456789"), nf = 0;
	const struct unit *u;
	const char *suf;

	memset(p, 0, sizeof(*p));
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return plain_hex(s, p, why, whylen);
	if (s[ni] == '.')
		nf = 1 + strspn(s + ni + 1, "0123456789");
	if (ni == 0 && nf <= 1) {
		snprintf(why, whylen, "expected a number (%s)", unit_hint(mode));
		return -EINVAL;
	}
	suf = s + ni + nf;
	if (strpbrk(suf, "+-*/^()")) {
		snprintf(why, whylen, "arithmetic needs parentheses, as in fio: (%s)", s);
		return -EINVAL;
	}
	p->pct = pct_ok && !strcmp(suf, "%");
	u = p->pct ? &size_units[0] : unit_find(mode, suf, strlen(suf));
	if (!u) {
		snprintf(why, whylen, "unknown unit '%s' (%s)", suf, unit_hint(mode));
		return -EINVAL;
	}
	p->si = u->si;
	return plain_scale(s, nf > 0, u->mult, mode, &p->v, why, whylen);
}

/*
 * Any numeric value: fio arithmetic when it starts with '(' or uses a
 * $keyword (fio evaluates keyword math without parentheses), else a
 * plain number. @pct: NULL when % is not allowed.
 */
static int num_parse(const struct option_ctx *c, const char *val, enum num_mode mode,
		     uint64_t *out, bool *pct, struct err *e)
{
	char why[256];
	struct plain p;

	if (!val)
		return opt_fail(c, val, e, "needs a value (%s=VALUE)", c->key);
	if (pct)
		*pct = false;
	if (val[0] == '(' || strchr(val, '$')) {
		if (expr_eval(val, mode, out, why, sizeof(why)))
			return opt_fail(c, val, e, "bad expression: %s", why);
		return 0;
	}
	if (plain_parse(val, mode, pct != NULL, &p, why, sizeof(why)))
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

static void *field(struct job *j, const struct option_def *o)
{
	return (char *)j + o->off;
}

static void fmt_size(char *buf, size_t len, uint64_t v);

/* A bound as the user would write it: "1g" for a size, else digits. */
static const char *bound_str(const struct option_def *o, long long v, char *buf, size_t len)
{
	if (o->type == OPT_SIZE)
		fmt_size(buf, len, (uint64_t)v);
	else
		snprintf(buf, len, "%lld", v);
	return buf;
}

static int set_u64_bounded(struct job *j, const struct option_def *o, const char *val,
			   const struct option_ctx *c, enum num_mode mode, struct err *e)
{
	char b[32];
	uint64_t v;
	int ret = num_parse(c, val, mode, &v, NULL, e);

	if (ret)
		return ret;
	if (v < (uint64_t)o->min)
		return opt_fail(c, val, e, "must be at least %s", bound_str(o, o->min, b, sizeof(b)));
	if (o->max && v > (uint64_t)o->max)
		return opt_fail(c, val, e, "must be at most %s", bound_str(o, o->max, b, sizeof(b)));
	if (o->type == OPT_INT && v > UINT_MAX)
		return opt_fail(c, val, e, "must be at most %u", UINT_MAX);
	if (o->type == OPT_INT)
		*(unsigned *)field(j, o) = (unsigned)v;
	else
		*(uint64_t *)field(j, o) = v;
	return 0;
}

static int bool_parse(const struct option_ctx *c, const char *val, bool *out, struct err *e)
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

static int enum_parse(const struct option_def *o, const struct option_ctx *c,
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

static int set_str(struct job *j, const struct option_def *o, const char *val,
		   const struct option_ctx *c, struct err *e)
{
	char **p = field(j, o), *s;

	if (!val || !*val)
		return opt_fail(c, val, e, "needs a value (%s=VALUE)", c->key);
	s = strdup(val);
	if (!s)
		return err_set(e, ENOMEM, "out of memory");
	free(*p);
	*p = s;
	return 0;
}

static int set_by_type(struct job *j, const struct option_def *o, const char *val,
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
		snprintf(field(j, o), JOB_NAME_MAX, "%s", val);
		return 0;
	case OPT_INT:
	case OPT_U64:
	case OPT_SIZE:
		return set_u64_bounded(j, o, val, c, NUM_SIZE, e);
	case OPT_TIME:
		return set_u64_bounded(j, o, val, c, NUM_TIME, e);
	case OPT_BOOL:
		ret = bool_parse(c, val, &b, e);
		if (!ret)
			*(bool *)field(j, o) = o->inverse ? !b : b;
		return ret;
	case OPT_ENUM:
		ret = enum_parse(o, c, val, &v, e);
		if (!ret)
			*(int *)field(j, o) = v;
		return ret;
	}
	return opt_fail(c, val, e, "internal error: bad option type");
}

/* ------------------------------------------------------------------ */
/* custom parsers */

static const char *const rw_names[] = { "read", "randread", NULL };
static const char *const fst_names[] = { "roundrobin", "random", "sequential", NULL };
static const char *const madv_names[] = { "normal", "random", "sequential", "willneed",
					  "hugepage", NULL };
static const char *const fadv_names[] = { "normal", "random", "sequential", NULL };
static const char *const touch_names[] = { "copy", "page", "stride:N", "all", NULL };
static const char *const scan_names[] = { "shared", "partitioned", NULL };
static const char *const dist_names[] = { "random", "zipf:THETA", NULL };
static const char *const prefetch_names[] = { "none", "willneed:W", "populate:W", "touch:W",
					      "readahead:W", NULL };

/* size=N or size=N% (a percentage of each target, as fio). */
static int parse_size(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	uint64_t v;
	bool pct;
	int ret = num_parse(c, val, NUM_SIZE, &v, &pct, e);

	(void)o;
	if (ret)
		return ret;
	if (pct && (v < 1 || v > 100))
		return opt_fail(c, val, e, "a percentage must be 1%% to 100%%");
	j->size = pct ? 0 : v;
	j->size_pct = pct ? (unsigned)v : 0;
	return 0;
}

/* fio's other directions write or trim; they arrive with SPEC 10. */
static int parse_rw(struct job *j, const struct option_def *o, const char *val,
		    const struct option_ctx *c, struct err *e)
{
	static const char *const writes[] = { "write", "randwrite", "rw", "readwrite",
					      "randrw", "trim", "randtrim", "trimwrite",
					      "randtrimwrite", NULL };
	int v;

	for (int i = 0; val && writes[i]; i++)
		if (!strcmp(val, writes[i]))
			return opt_fail(c, val, e, "writes and trims are not supported yet; "
					"faultline reads: read, randread");
	if (val && strchr(val, ':'))
		return opt_fail(c, val, e, "fio's rw=...:N offset modifier is not supported; "
				"expected read or randread");
	if (enum_parse(o, c, val, &v, e))
		return -EINVAL;
	j->rw = (enum rw_mode)v;
	return 0;
}

static int parse_ioengine(struct job *j, const struct option_def *o, const char *val,
			  const struct option_ctx *c, struct err *e)
{
	const struct engine_ops *const *l = engine_list();
	const char *canon = val ? engine_canonical(val) : NULL;
	char list[256];
	size_t off = 0;

	(void)o;
	if (canon) {
		snprintf(j->ioengine, sizeof(j->ioengine), "%s", canon);
		return 0;
	}
	list[0] = '\0';
	for (int i = 0; l[i] && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					i ? ", " : "", l[i]->name);
	return opt_fail(c, val, e, "unknown engine; faultline has %s (sync and pread "
			"are fio's names for psync)", list);
}

static int parse_touch(struct job *j, const struct option_def *o, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	struct option_ctx sub = *c;
	uint64_t n;
	int v;

	if (val && !strncmp(val, "stride:", 7)) {
		sub.key = "touch=stride:N, N";
		if (num_parse(&sub, val + 7, NUM_SIZE, &n, NULL, e))
			return -EINVAL;
		if (n < 1)
			return opt_fail(c, val, e, "the stride must be at least 1 byte");
		j->touch = TOUCH_STRIDE;
		j->touch_stride = n;
		return 0;
	}
	if (val && !strcmp(val, "stride:N"))
		val = "";	/* the help's placeholder is not a value */
	if (enum_parse(o, c, val, &v, e))
		return -EINVAL;
	j->touch = (enum touch_mode)v;
	j->touch_stride = 0;
	return 0;
}

/* iodepth_batch_submit=auto|N (alias iodepth_batch): 0 means iodepth, as in fio. */
static int parse_batch(struct job *j, const struct option_def *o, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	uint64_t n;

	(void)o;
	if (val && !strcmp(val, "auto")) {
		j->iodepth_batch = IODEPTH_BATCH_AUTO;
		return 0;
	}
	if (num_parse(c, val, NUM_SIZE, &n, NULL, e))
		return -EINVAL;
	if (n > 4096)
		return opt_fail(c, val, e, "must be auto or 0 to 4096 (0: iodepth)");
	j->iodepth_batch = (unsigned)n;
	return 0;
}

/* A prefetch window below a page prefetches nothing. */
#define PREFETCH_WINDOW_MIN 4096

/* prefetch=none or MODE:W, W a size (SPEC 9). */
static int parse_prefetch(struct job *j, const struct option_def *o, const char *val,
			  const struct option_ctx *c, struct err *e)
{
	struct option_ctx sub = *c;
	const char *colon = val ? strchr(val, ':') : NULL;
	uint64_t w;

	if (val && !strcmp(val, "none")) {
		j->prefetch = PREFETCH_NONE;
		j->prefetch_window = 0;
		return 0;
	}
	for (int i = 1; val && o->values[i]; i++) {
		size_t n = strcspn(o->values[i], ":");

		if (strncmp(val, o->values[i], n) || (val[n] && val[n] != ':'))
			continue;
		if (!colon || !colon[1])
			return opt_fail(c, val, e, "needs a window: %.*s:W with W a size, e.g. %.*s:16m",
					(int)n, val, (int)n, val);
		sub.key = "prefetch window W";
		if (num_parse(&sub, colon + 1, NUM_SIZE, &w, NULL, e))
			return -EINVAL;
		if (w < PREFETCH_WINDOW_MIN)
			return opt_fail(c, val, e, "the window must be at least 4k (one page)");
		j->prefetch = (enum prefetch_mode)i;
		j->prefetch_window = w;
		return 0;
	}
	return opt_fail(c, val, e, "expected none, willneed:W, populate:W, touch:W or readahead:W "
			"(W a size such as 16m)");
}

/* fio's default zipf theta when none is given (FIO_DEF_ZIPF). */
#define ZIPF_THETA_DEFAULT 1.1

static int parse_dist(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	static const char *const fio_only[] = { "pareto", "normal", "gauss", "zoned",
						"zoned_abs", NULL };
	double theta = ZIPF_THETA_DEFAULT;
	char *end;

	(void)o;
	if (val && !strcmp(val, "random")) {
		j->random_distribution = DIST_RANDOM;
		return 0;
	}
	if (val && !strncmp(val, "zipf", 4) && (!val[4] || val[4] == ':')) {
		if (val[4]) {
			errno = 0;
			theta = strtod(val + 5, &end);
			if (end == val + 5 || *end || errno)
				return opt_fail(c, val, e, "zipf:THETA needs a number THETA > 0, "
						"e.g. zipf:1.2 (fio's centre argument is not supported)");
		}
		/* gen.c's rejection-inversion sampler takes any theta > 0,
		 * 1 included (fio refuses 1 only for its own zeta method). */
		if (!(theta > 0) || !isfinite(theta))
			return opt_fail(c, val, e, "zipf theta must be > 0, e.g. zipf:1.2");
		j->random_distribution = DIST_ZIPF;
		j->zipf_theta = theta;
		return 0;
	}
	for (int i = 0; val && fio_only[i]; i++)
		if (!strncmp(val, fio_only[i], strlen(fio_only[i])))
			return opt_fail(c, val, e, "fio's %s distribution is not supported; "
					"expected random or zipf:THETA", fio_only[i]);
	return opt_fail(c, val, e, "expected random or zipf:THETA (theta > 0, e.g. zipf:1.2)");
}

static int parse_randseed(struct job *j, const struct option_def *o, const char *val,
			  const struct option_ctx *c, struct err *e)
{
	int ret = set_u64_bounded(j, o, val, c, NUM_SIZE, e);

	if (!ret)
		j->randseed_set = true;
	return ret;
}

/* "0-3,5,8-9": numbers and ranges, as cpus_allowed and numa node lists. */
static bool id_list_ok(const char *s)
{
	char *end;

	if (!*s)
		return false;
	for (;;) {
		long a, b;

		if (!isdigit((unsigned char)*s))
			return false;
		a = strtol(s, &end, 10);
		b = a;
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				return false;
			b = strtol(s, &end, 10);
		}
		if (a > b || b > INT_MAX / 2)
			return false;
		if (!*end)
			return true;
		if (*end != ',')
			return false;
		s = end + 1;
	}
}

static int parse_cpus(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	if (!val || !id_list_ok(val))
		return opt_fail(c, val, e, "expected a CPU list such as 0-3,5 (ranges low-high)");
	return set_str(j, o, val, c, e);
}

static int parse_nodes(struct job *j, const struct option_def *o, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	if (!val || (strcmp(val, "all") && !id_list_ok(val)))
		return opt_fail(c, val, e, "expected all or a node list such as 0-1,3");
	return set_str(j, o, val, c, e);
}

/* fio's numa_mem_policy: default, local, prefer:N, bind:LIST, interleave:LIST. */
static int parse_mempolicy(struct job *j, const struct option_def *o, const char *val,
			   const struct option_ctx *c, struct err *e)
{
	bool ok = false;

	if (val && (!strcmp(val, "default") || !strcmp(val, "local")))
		ok = true;
	else if (val && !strncmp(val, "prefer:", 7))
		ok = id_list_ok(val + 7) && !strpbrk(val + 7, ",-");
	else if (val && !strncmp(val, "bind:", 5))
		ok = id_list_ok(val + 5);
	else if (val && !strncmp(val, "interleave:", 11))
		ok = id_list_ok(val + 11);
	if (!ok)
		return opt_fail(c, val, e, "expected default, local, prefer:N, bind:NODES "
				"or interleave:NODES (NODES such as 0-1,3)");
	return set_str(j, o, val, c, e);
}

/*
 * fio options that change nothing for a read job here, accepted so fio
 * job files run unchanged and recorded so --parse-only can say so:
 *   thread          faultline always runs threads (thread=0, processes,
 *                   is later work, SPEC 14: warned)
 *   group_reporting faultline reports a job's threads together anyway;
 *   new_group       it has no reporting groups to start
 *   norandommap     random offsets are drawn with replacement, never
 *                   from a map: what norandommap asks for
 *   randrepeat      offsets repeat only with randseed=N; a job without
 *                   it gets a fresh seed, whatever randrepeat says
 *   description     a comment
 * (name= in [global] is the seventh, see parse_name.) gtod_reduce is
 * not among them: it turns the latency histogram off.
 */
static int parse_noop(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	bool b = true;

	if (o->noop != FIO_NOOP_DESCRIPTION && bool_parse(c, val, &b, e))
		return -EINVAL;
	if (o->noop == FIO_NOOP_THREAD && !b)
		opt_warn(c, val, "faultline always runs threads (processes are later work); "
			 "accepted, no effect");
	j->fio_noops |= o->noop;
	return 0;
}

/* fio's gtod_reduce switches latency measurement off; so does it here. */
static int parse_gtod(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	bool b;

	(void)o;
	if (bool_parse(c, val, &b, e))
		return -EINVAL;
	if (b)
		j->latency = false;
	return 0;
}

/* name= renames a job (as fio); in [global] jobs take their section's
 * name anyway, so it is accepted there with no effect. */
static int parse_name(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	int ret;

	/* It names scratch files: <dir>/<job>.<n>.<file>. */
	if (strchr(val, '/'))
		return opt_fail(c, val, e, "a job name cannot contain '/' (it names scratch files)");
	ret = set_by_type(j, o, val, c, e);

	if (!ret && c->global)
		j->fio_noops |= FIO_NOOP_NAME;
	return ret;
}

/*
 * fio's write_bw_log, write_iops_log, write_lat_log: a file name prefix,
 * or a bare key for the job's name (kept as "", resolved when the files
 * are made, as a later name= may rename the job).
 */
static int parse_log_prefix(struct job *j, const struct option_def *o, const char *val,
			    const struct option_ctx *c, struct err *e)
{
	char **p = field(j, o), *s;

	(void)c;
	s = strdup(val ? val : "");
	if (!s)
		return err_set(e, ENOMEM, "out of memory");
	free(*p);
	*p = s;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the table */

#define OFF(f) offsetof(struct job, f)

/* Upper bounds that catch a slipped unit (numjobs=1m) before it
 * becomes a million threads or files. */
#define THREADS_MAX 65536
#define FILES_MAX 65536
/* A loop's streams each hold request slots (uint16 slot numbers); as
 * many as iodepth allows. */
#define LOOP_MAX 4096
/* Requests carry a 32-bit length and Linux moves at most ~2 GiB per
 * read (MAX_RW_COUNT); 1 GiB keeps every request whole. */
#define BS_MAX (1ll << 30)

const struct option_def option_table[] = {
	{ .name = "name", .type = OPT_NAME, .off = OFF(name), .parse = parse_name,
	  .noop = FIO_NOOP_NAME,
	  .help = "job name (the [section]'s; name= in a job renames it, in [global] it has no effect)" },
	{ .name = "filename", .type = OPT_STR, .off = OFF(filename), .syntax = "path[:path...]",
	  .help = "target: regular file or block device; several, separated by ':', are all used by every thread" },
	{ .name = "directory", .type = OPT_STR, .off = OFF(directory), .syntax = "dir",
	  .help = "where scratch files are made when filename is absent (default: current directory)" },
	{ .name = "nrfiles", .aliases = "nr_files", .type = OPT_INT, .off = OFF(nrfiles),
	  .def = "1", .min = 1, .max = FILES_MAX,
	  .help = "scratch files per thread" },
	{ .name = "filesize", .type = OPT_SIZE, .off = OFF(filesize), .def = "0",
	  .help = "size of each scratch file (0: size / nrfiles)" },
	{ .name = "file_service_type", .type = OPT_ENUM, .off = OFF(file_service_type),
	  .def = "roundrobin", .values = fst_names,
	  .help = "how a thread picks among its targets: in turn, at random, or one after another" },
	{ .name = "size", .type = OPT_SIZE, .off = OFF(size), .def = "0", .parse = parse_size,
	  .syntax = "size or N%",
	  .help = "bytes of each target used (0: whole file or device); required for scratch files" },
	{ .name = "offset", .aliases = "fileoffset", .type = OPT_SIZE, .off = OFF(offset),
	  .def = "0", .help = "start of the region used" },
	{ .name = "io_size", .aliases = "io_limit", .type = OPT_SIZE, .off = OFF(io_size),
	  .def = "0", .help = "stop a thread after this many bytes (0: one pass, or unlimited with time_based)" },
	{ .name = "runtime", .aliases = "timeout", .type = OPT_TIME, .off = OFF(runtime_ns),
	  .def = "0", .help = "stop after this long (0: when the I/O is done)" },
	{ .name = "time_based", .type = OPT_BOOL, .off = OFF(time_based), .def = "0",
	  .help = "run for runtime, starting over when a pass ends" },
	{ .name = "ramp_time", .type = OPT_TIME, .off = OFF(ramp_ns), .def = "0",
	  .help = "warm-up excluded from the totals (kept in the CSV with ramp=1)" },
	{ .name = "startdelay", .type = OPT_TIME, .off = OFF(startdelay_ns), .def = "0",
	  .help = "wait this long before starting the job" },
	{ .name = "rw", .aliases = "readwrite", .type = OPT_ENUM, .off = OFF(rw), .def = "read",
	  .values = rw_names, .parse = parse_rw,
	  .help = "sequential scan (read) or random reads (randread)" },
	{ .name = "bs", .aliases = "blocksize", .type = OPT_SIZE, .off = OFF(bs), .def = "4k",
	  .min = 1, .max = BS_MAX, .help = "request size" },
	{ .name = "ioengine", .type = OPT_CUSTOM, .off = OFF(ioengine), .def = "psync",
	  .parse = parse_ioengine, .syntax = "engine (--cmdhelp=ioengine)",
	  .help = "how bytes arrive: mmap, psync, io_uring, libaio, null (sync and pread mean psync)" },
	{ .name = "iodepth", .type = OPT_INT, .off = OFF(iodepth), .def = "1", .min = 1,
	  .max = 4096, .help = "requests in flight per thread (io_uring, libaio)" },
	{ .name = "iodepth_batch_submit", .aliases = "iodepth_batch", .type = OPT_CUSTOM,
	  .off = OFF(iodepth_batch), .def = "auto", .parse = parse_batch, .syntax = "auto|N",
	  .help = "requests handed to the kernel at once (io_uring, libaio); 0 is iodepth; "
		  "auto: 1 with direct=1, iodepth otherwise" },
	{ .name = "direct", .type = OPT_BOOL, .off = OFF(direct), .def = "0",
	  .help = "O_DIRECT for psync, io_uring and libaio; invalid with mmap" },
	{ .name = "buffered", .type = OPT_BOOL, .off = OFF(direct), .inverse = true,
	  .help = "fio's inverse of direct: buffered=0 is direct=1" },
	{ .name = "numjobs", .type = OPT_INT, .off = OFF(numjobs), .def = "1", .min = 1,
	  .max = THREADS_MAX, .help = "threads running this job" },
	{ .name = "madvise", .type = OPT_ENUM, .off = OFF(madvise), .def = "normal",
	  .values = madv_names, .help = "advice on the mapping (mmap)" },
	{ .name = "fadvise", .type = OPT_ENUM, .off = OFF(fadvise), .def = "normal",
	  .values = fadv_names, .help = "posix_fadvise on buffered files (psync, io_uring, libaio)" },
	{ .name = "touch", .type = OPT_ENUM, .off = OFF(touch), .def = "copy",
	  .values = touch_names, .parse = parse_touch,
	  .help = "how data is consumed: memcpy, a byte per 4 KiB page, every Nth byte, or checksum all" },
	{ .name = "scan", .type = OPT_ENUM, .off = OFF(scan), .def = "shared",
	  .values = scan_names,
	  .help = "rw=read: threads share one wrapping cursor, or each scans its own slice" },
	{ .name = "scan_chunk", .type = OPT_SIZE, .off = OFF(scan_chunk), .def = "128m",
	  .min = 1, .help = "piece a thread takes from the shared cursor" },
	{ .name = "randseed", .type = OPT_U64, .off = OFF(randseed), .parse = parse_randseed,
	  .help = "seed: runs with the same seed issue the same offsets (default: a fresh one)" },
	{ .name = "random_distribution", .type = OPT_ENUM, .off = OFF(random_distribution),
	  .def = "random", .values = dist_names, .parse = parse_dist,
	  .syntax = "random|zipf[:THETA]",
	  .help = "randread offsets: uniform, or zipf with theta > 0 (zipf alone: 1.1, as fio)" },
	{ .name = "latency", .type = OPT_BOOL, .off = OFF(latency), .def = "1",
	  .help = "per-request latency histogram (log-linear, 1 % precision)" },
	{ .name = "gtod_reduce", .type = OPT_CUSTOM, .parse = parse_gtod, .syntax = "bool",
	  .help = "fio's: gtod_reduce=1 turns latency off" },
	{ .name = "cpus_allowed", .type = OPT_STR, .off = OFF(cpus_allowed), .parse = parse_cpus,
	  .syntax = "CPU list", .help = "pin the job's threads to these CPUs, e.g. 0-3,5" },
	{ .name = "numa_cpu_nodes", .type = OPT_STR, .off = OFF(numa_cpu_nodes),
	  .parse = parse_nodes, .syntax = "node list",
	  .help = "run the job's threads on these NUMA nodes (libnuma)" },
	{ .name = "numa_mem_policy", .type = OPT_STR, .off = OFF(numa_mem_policy),
	  .parse = parse_mempolicy,
	  .syntax = "default|local|prefer:N|bind:NODES|interleave:NODES",
	  .help = "NUMA memory policy of the job's threads (libnuma), as fio" },
	{ .name = "mem_limit", .type = OPT_SIZE, .off = OFF(mem_limit), .def = "0",
	  .help = "run the job in a memory cgroup this large (0: none)" },
	{ .name = "reserve_mem", .type = OPT_SIZE, .off = OFF(reserve_mem), .def = "0",
	  .help = "lock this much anonymous memory while the job runs, so kswapd evicts (0: none)" },
	{ .name = "invalidate", .type = OPT_BOOL, .off = OFF(invalidate), .def = "1",
	  .help = "drop the target's pages from the page cache before the job (cold start)" },
	{ .name = "drop_caches", .type = OPT_BOOL, .off = OFF(drop_caches), .def = "0",
	  .help = "write 3 to /proc/sys/vm/drop_caches before the job (root)" },
	{ .name = "prewarm", .type = OPT_BOOL, .off = OFF(prewarm), .def = "0",
	  .help = "read the whole region once before timing starts (warm start)" },
	{ .name = "cpu_probe", .type = OPT_BOOL, .off = OFF(cpu_probe), .def = "0",
	  .help = "one extra thread doing fixed CPU work, to show the CPU the I/O leaves" },
	{ .name = "stonewall", .aliases = "wait_for_previous", .type = OPT_BOOL,
	  .off = OFF(stonewall), .def = "0",
	  .help = "wait for every earlier job to finish before starting" },
	{ .name = "loop", .type = OPT_INT, .off = OFF(loop), .def = "0", .max = LOOP_MAX,
	  .help = "one thread drives N streams, one per file or N slices of one target, as an event loop (needs numjobs=1; 0: off)" },
	{ .name = "offload", .type = OPT_INT, .off = OFF(offload), .def = "0", .max = THREADS_MAX,
	  .help = "with loop: hand each psync/mmap request to a pool of N helper threads and wait for completions (0: the loop runs them)" },
	{ .name = "offload_permits", .type = OPT_INT, .off = OFF(offload_permits), .def = "0",
	  .max = THREADS_MAX,
	  .help = "with offload: at most N offloaded requests run at once, the permit strategy (0: offload's N)" },
	{ .name = "prefetch", .type = OPT_ENUM, .off = OFF(prefetch), .def = "none",
	  .values = prefetch_names, .parse = parse_prefetch,
	  .syntax = "none|willneed:W|populate:W|touch:W|readahead:W",
	  .help = "mmap, rw=read: keep W bytes ahead of each stream requested (MADV_WILLNEED, MADV_POPULATE_READ, a helper touching pages, readahead(2))" },
	{ .name = "write_bw_log", .type = OPT_STR, .off = OFF(bw_log), .parse = parse_log_prefix,
	  .bare = true, .syntax = "[prefix]",
	  .help = "fio's bandwidth log: <prefix>_bw.<thread>.log, KiB/s per log_avg_msec (bare: the job's name)" },
	{ .name = "write_iops_log", .type = OPT_STR, .off = OFF(iops_log), .parse = parse_log_prefix,
	  .bare = true, .syntax = "[prefix]",
	  .help = "fio's IOPS log: <prefix>_iops.<thread>.log (bare: the job's name)" },
	{ .name = "write_lat_log", .type = OPT_STR, .off = OFF(lat_log), .parse = parse_log_prefix,
	  .bare = true, .syntax = "[prefix]",
	  .help = "fio's latency logs: <prefix>_lat, _clat (mean ns per entry) and _slat (empty) .<thread>.log" },
	{ .name = "log_avg_msec", .type = OPT_INT, .off = OFF(log_avg_msec), .def = "0",
	  .help = "ms each log entry averages; at least the sampling interval (0: one entry per interval; "
		  "faultline never logs each I/O)" },
	{ .name = "per_job_logs", .type = OPT_BOOL, .off = OFF(per_job_logs), .def = "1",
	  .help = "one log file per thread (<prefix>_bw.<thread>.log), else one per prefix (<prefix>_bw.log)" },
	{ .name = "log_offset", .type = OPT_BOOL, .off = OFF(log_offset), .def = "0",
	  .help = "add fio's offset column to the logs (0 in every entry: entries are averages, as fio's)" },
	{ .name = "thread", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "bool",
	  .noop = FIO_NOOP_THREAD, .help = "fio's; accepted, no effect: faultline always runs threads" },
	{ .name = "group_reporting", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "bool",
	  .noop = FIO_NOOP_GROUP_REPORTING,
	  .help = "fio's; accepted, no effect: a job's threads are always reported together" },
	{ .name = "new_group", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "bool",
	  .noop = FIO_NOOP_NEW_GROUP,
	  .help = "fio's; accepted, no effect: there are no reporting groups" },
	{ .name = "norandommap", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "bool",
	  .noop = FIO_NOOP_NORANDOMMAP,
	  .help = "fio's; accepted, no effect: random offsets never use a map" },
	{ .name = "randrepeat", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "bool",
	  .noop = FIO_NOOP_RANDREPEAT,
	  .help = "fio's; accepted, no effect: offsets repeat only with randseed=N" },
	{ .name = "description", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "text",
	  .noop = FIO_NOOP_DESCRIPTION, .help = "fio's; accepted, no effect: a comment" },
};

const size_t option_count = sizeof(option_table) / sizeof(option_table[0]);

/* ------------------------------------------------------------------ */
/* lookup and setting */

static bool alias_match(const char *aliases, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = aliases; p && *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && !strncmp(p, name, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

const struct option_def *option_find(const char *name)
{
	for (size_t i = 0; i < option_count; i++)
		if (!strcmp(option_table[i].name, name) ||
		    alias_match(option_table[i].aliases, name))
			return &option_table[i];
	return NULL;
}

bool option_is_bool(const struct option_def *o)
{
	return o->type == OPT_BOOL || o->bare || (o->syntax && !strcmp(o->syntax, "bool"));
}

int option_set_ctx(struct job *j, const char *name, const char *val,
		   const struct option_ctx *c, struct err *e)
{
	const struct option_def *o = option_find(name);
	struct option_ctx local = { 0 };

	if (c)
		local = *c;
	local.key = name;
	if (!o)
		return err_set(e, EINVAL, "unknown option '%s'%s%s", name,
			       local.where ? " at " : "", local.where ? local.where : "");
	if (!val && !option_is_bool(o))
		return opt_fail(&local, val, e, "needs a value (%s=VALUE); only boolean "
				"options may stand alone", name);
	if (o->parse)
		return o->parse(j, o, val, &local, e);
	return set_by_type(j, o, val, &local, e);
}

int option_set(struct job *j, const char *name, const char *val, struct err *e)
{
	return option_set_ctx(j, name, val, NULL, e);
}

void option_defaults(struct job *j)
{
	struct err e;

	memset(j, 0, sizeof(*j));
	for (size_t i = 0; i < option_count; i++) {
		int ret;

		if (!option_table[i].def)
			continue;
		ret = option_set(j, option_table[i].name, option_table[i].def, &e);
		assert(ret == 0 && "option_table default does not parse");
		(void)ret;
	}
}

void option_release(struct job *j)
{
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];

		if (o->type == OPT_STR) {
			char **p = field(j, o);

			free(*p);
			*p = NULL;
		}
	}
}

int option_copy(struct job *dst, const struct job *src)
{
	memcpy(dst, src, sizeof(*dst));
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];
		char **p;

		if (o->type != OPT_STR)
			continue;
		p = field(dst, o);
		if (*p && !(*p = strdup(*p)))
			goto out_nomem;
	}
	return 0;
out_nomem:
	/* Strings not yet copied still point into @src: forget them. */
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];
		char **p = field(dst, o), *const *s = (char *const *)((const char *)src + o->off);

		if (o->type == OPT_STR && *p == *s)
			*p = NULL;
	}
	option_release(dst);
	return -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* formatting */

/* 4096 -> "4k", 1 GiB -> "1g", 1000 -> "1000": exact, as a user writes it. */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char suffix[] = "kmgtp";
	int i = -1;

	while (v && v % 1024 == 0 && i < (int)sizeof(suffix) - 2) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, suffix[i]);
}

/* ns -> "10s", "500ms", "250us": the largest exact unit. */
static void fmt_time(char *buf, size_t len, uint64_t ns)
{
	static const struct { uint64_t div; const char *unit; } units[] = {
		{ 1000000000ull, "s" }, { 1000000ull, "ms" }, { 1000ull, "us" }, { 1, "ns" },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ns % units[i].div == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(ns / units[i].div),
				 ns ? units[i].unit : "");
			return;
		}
	}
}

/* A write_*_log given as a bare key (kept as ""). */
static bool log_prefix_bare(const struct job *j, const struct option_def *o)
{
	const char *p = *(char *const *)((const char *)j + o->off);

	return p && !*p;
}

static int fmt_special(const struct job *j, const struct option_def *o, char *buf,
		       size_t len)
{
	if (o->parse == parse_touch && j->touch == TOUCH_STRIDE)
		snprintf(buf, len, "stride:%llu", (unsigned long long)j->touch_stride);
	else if (o->parse == parse_dist && j->random_distribution == DIST_ZIPF)
		snprintf(buf, len, "zipf:%g", j->zipf_theta);
	else if (o->parse == parse_prefetch && j->prefetch != PREFETCH_NONE) {
		char w[32];

		fmt_size(w, sizeof(w), j->prefetch_window);
		snprintf(buf, len, "%.*s:%s", (int)strcspn(prefetch_names[j->prefetch], ":"),
			 prefetch_names[j->prefetch], w);
	} else if (o->parse == parse_size && j->size_pct)
		snprintf(buf, len, "%u%%", j->size_pct);
	else if (o->parse == parse_randseed && !j->randseed_set)
		return 0;
	else if (o->parse == parse_ioengine)
		snprintf(buf, len, "%s", j->ioengine);
	else if (o->parse == parse_log_prefix && log_prefix_bare(j, o))
		snprintf(buf, len, "%s", j->name);	/* what a bare key means */
	else if (o->parse == parse_batch && j->iodepth_batch == IODEPTH_BATCH_AUTO)
		snprintf(buf, len, "auto");
	else if (o->parse == parse_batch)
		snprintf(buf, len, "%u", j->iodepth_batch);
	else
		return -1;
	return 1;
}

int option_format(const struct job *j, const struct option_def *o, char *buf, size_t len)
{
	const void *p = (const char *)j + o->off;
	int ret = fmt_special(j, o, buf, len);

	if (ret >= 0)
		return ret;
	switch (o->type) {
	case OPT_STR:
		if (!*(char *const *)p)
			return 0;
		snprintf(buf, len, "%s", *(char *const *)p);
		return 1;
	case OPT_NAME:
		snprintf(buf, len, "%s", (const char *)p);
		return buf[0] != '\0';
	case OPT_INT:
		snprintf(buf, len, "%u", *(const unsigned *)p);
		return 1;
	case OPT_U64:
		snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)p);
		return 1;
	case OPT_SIZE:
		fmt_size(buf, len, *(const uint64_t *)p);
		return 1;
	case OPT_TIME:
		fmt_time(buf, len, *(const uint64_t *)p);
		return 1;
	case OPT_BOOL:
		snprintf(buf, len, "%d", o->inverse != *(const bool *)p);
		return 1;
	case OPT_ENUM:
		snprintf(buf, len, "%s", o->values[*(const int *)p]);
		return 1;
	case OPT_CUSTOM:
		return 0;	/* fio no-ops and gtod_reduce hold no value */
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* --cmdhelp */

static const char *type_name(const struct option_def *o, char *buf, size_t len)
{
	static const char *const names[] = {
		[OPT_STR] = "string", [OPT_NAME] = "name", [OPT_INT] = "int",
		[OPT_U64] = "int", [OPT_SIZE] = "size", [OPT_TIME] = "time",
		[OPT_BOOL] = "bool", [OPT_ENUM] = "", [OPT_CUSTOM] = "",
	};
	size_t off = 0;

	if (o->syntax)
		return o->syntax;
	if (o->type != OPT_ENUM)
		return names[o->type];
	buf[0] = '\0';
	for (int i = 0; o->values[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "|" : "", o->values[i]);
	return buf;
}

static void print_line(FILE *f, const struct option_def *o)
{
	char name[96], type[128];

	if (o->aliases)
		snprintf(name, sizeof(name), "%s (%s)", o->name, o->aliases);
	else
		snprintf(name, sizeof(name), "%s", o->name);
	fprintf(f, "%-28s %-24s %-10s %s\n", name, type_name(o, type, sizeof(type)),
		o->def ? o->def : "-", o->help);
}

static void print_engines(FILE *f)
{
	const struct engine_ops *const *l = engine_list();

	fprintf(f, "  engines:\n");
	for (int i = 0; l[i]; i++)
		fprintf(f, "    %-10s %s\n", l[i]->name, l[i]->help ? l[i]->help : "");
	fprintf(f, "    (fio's sync and pread are accepted as psync)\n");
}

static void print_detail(FILE *f, const struct option_def *o)
{
	char type[128], lo[32], hi[32];

	fprintf(f, "%s: %s\n", o->name, o->help);
	if (o->aliases)
		fprintf(f, "  aliases: %s\n", o->aliases);
	fprintf(f, "  type:    %s", type_name(o, type, sizeof(type)));
	if (o->type == OPT_SIZE || (o->type == OPT_INT && !o->syntax))
		fprintf(f, " (suffixes %s; fio arithmetic in parentheses)", unit_hint(NUM_SIZE));
	else if (o->type == OPT_TIME)
		fprintf(f, " (%s; fio arithmetic in parentheses)", unit_hint(NUM_TIME));
	fprintf(f, "\n  default: %s\n", o->def ? o->def : "none");
	bound_str(o, o->min, lo, sizeof(lo));
	bound_str(o, o->max, hi, sizeof(hi));
	if (o->max)
		fprintf(f, "  range:   %s to %s\n", lo, hi);
	else if (o->min)
		fprintf(f, "  range:   at least %s\n", lo);
	if (o->type == OPT_ENUM) {
		fprintf(f, "  values:");
		for (int i = 0; o->values[i]; i++)
			fprintf(f, " %s", o->values[i]);
		fprintf(f, "\n");
	}
	if (o->parse == parse_ioengine)
		print_engines(f);
}

int option_print_help(FILE *f, const char *name)
{
	const struct option_def *o;

	if (!name) {
		for (size_t i = 0; i < option_count; i++)
			print_line(f, &option_table[i]);
		return 0;
	}
	o = option_find(name);
	if (!o)
		return -ENOENT;
	print_detail(f, o);
	return 0;
}

/* ------------------------------------------------------------------ */
/* did you mean */

#define SUGGEST_LEN_MAX 64

/* Optimal string alignment distance: a swapped pair ("iodpeth") is one edit. */
static unsigned osa_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned d[SUGGEST_LEN_MAX + 1][SUGGEST_LEN_MAX + 1];

	if (n > SUGGEST_LEN_MAX || m > SUGGEST_LEN_MAX)
		return UINT_MAX;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (size_t k = 0; k <= m; k++)
		d[0][k] = (unsigned)k;
	for (size_t i = 1; i <= n; i++) {
		for (size_t k = 1; k <= m; k++) {
			unsigned cost = a[i - 1] != b[k - 1];
			unsigned v = d[i - 1][k - 1] + cost;

			if (d[i - 1][k] + 1 < v)
				v = d[i - 1][k] + 1;
			if (d[i][k - 1] + 1 < v)
				v = d[i][k - 1] + 1;
			if (i > 1 && k > 1 && a[i - 1] == b[k - 2] && a[i - 2] == b[k - 1] &&
			    d[i - 2][k - 2] + 1 < v)
				v = d[i - 2][k - 2] + 1;
			d[i][k] = v;
		}
	}
	return d[n][m];
}

static void consider(const char *cand, size_t len, const char *name, unsigned *best,
		     const char **best_name)
{
	char buf[SUGGEST_LEN_MAX + 1];
	unsigned dist;

	if (len > SUGGEST_LEN_MAX)
		return;
	memcpy(buf, cand, len);
	buf[len] = '\0';
	dist = osa_distance(name, buf);
	if (dist < *best) {
		*best = dist;
		*best_name = cand;
	}
}

const char *option_suggest(const char *name)
{
	static char out[SUGGEST_LEN_MAX + 1];
	size_t n = strlen(name);
	/* Short names tolerate one slip, longer ones a slip per 4 letters. */
	unsigned limit = n <= 4 ? 1 : (unsigned)(n + 3) / 4, best = UINT_MAX;
	const char *best_name = NULL;

	for (size_t i = 0; i < option_count; i++) {
		const char *a = option_table[i].aliases;

		consider(option_table[i].name, strlen(option_table[i].name), name, &best,
			 &best_name);
		while (a && *a) {
			size_t len = strcspn(a, ",");

			consider(a, len, name, &best, &best_name);
			a += len + (a[len] == ',');
		}
	}
	if (!best_name || best > limit || best == 0)
		return NULL;
	snprintf(out, sizeof(out), "%.*s", (int)strcspn(best_name, ","), best_name);
	return out;
}
