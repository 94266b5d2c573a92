/*
 * optval.c - numbers in option values, as fio reads and writes them.
 *
 * Sizes take k m g t p (powers of 1024, as fio's default kb_base=1024),
 * times are seconds unless suffixed, and a value may be fio arithmetic
 * "(16*1024*1024)" using $pagesize, $mb_memory and $ncpus. options.c
 * decides which options take which kind of number and turns a failure
 * into a message naming the option; nothing here knows the table.
 */
#include "job/optval.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MIB (1024ull * 1024)

/* ------------------------------------------------------------------ */
/* units */

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

static const struct unit *unit_find(enum optval_mode mode, const char *s, size_t n)
{
	const struct unit *u = mode == OPTVAL_TIME ? time_units : size_units;

	for (; u->name; u++)
		if (strlen(u->name) == n && !strncasecmp(u->name, s, n))
			return u;
	return NULL;
}

const char *optval_unit_hint(enum optval_mode mode)
{
	if (mode == OPTVAL_TIME)
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

int optval_keywords(const char *s, char *out, size_t len)
{
	size_t at = 0;

	while (*s) {
		long long v;
		bool mb = false;
		size_t n = kw_value(s, &v, &mb);
		int w = n ? snprintf(out + at, len - at, "%lld", v)
			  : snprintf(out + at, len - at, "%c", *s);

		if (w < 0 || (size_t)w >= len - at)
			return -ENAMETOOLONG;
		at += (size_t)w;
		s += n ? n : 1;
	}
	if (!len)
		return -ENAMETOOLONG;
	out[at] = '\0';
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
	enum optval_mode mode;
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
				 x->mode == OPTVAL_TIME ? "us, ms, s, m, h, d" : "k, m, g, t, p");
	x->p += len;
	x->units = true;
	/* Expressions count time in microseconds, as fio's. */
	if (x->mode == OPTVAL_TIME) {
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
 * Evaluate @s to bytes (OPTVAL_SIZE) or nanoseconds (OPTVAL_TIME). As in fio,
 * a time expression without a unit is in seconds and one with units
 * counts bare numbers in microseconds. A size expression that uses
 * $mb_memory without a unit is in MiB: fio's HOWTO promises
 * "size=8*$mb_memory" is 8 times the memory, and the man page says that
 * "size=$mb_memory/8" is an eighth of it (fio 3.33 itself, piping the
 * text to bc, would take the result as bytes).
 */
static int expr_eval(const char *s, enum optval_mode mode, uint64_t *out, char *why,
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
	if (mode == OPTVAL_SIZE && x.mb && !x.units && __builtin_mul_overflow(*out, MIB, out))
		ret = -ERANGE;
	if (mode == OPTVAL_TIME && !x.units && __builtin_mul_overflow(*out, 1000000ull, out))
		ret = -ERANGE;
	if (mode == OPTVAL_TIME && __builtin_mul_overflow(*out, 1000ull, out))
		ret = -ERANGE;
	if (ret) {
		snprintf(why, whylen, "result too large");
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* plain numbers */

static int plain_hex(const char *s, struct optval *p, char *why, size_t whylen)
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
static int plain_scale(const char *s, bool decimal, uint64_t mult, enum optval_mode mode,
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
				 mode == OPTVAL_TIME ? "nanoseconds" : "bytes");
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
static int plain_parse(const char *s, enum optval_mode mode, bool pct_ok, struct optval *p,
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
		snprintf(why, whylen, "expected a number (%s)", optval_unit_hint(mode));
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
		snprintf(why, whylen, "unknown unit '%s' (%s)", suf, optval_unit_hint(mode));
		return -EINVAL;
	}
	p->si = u->si;
	return plain_scale(s, nf > 0, u->mult, mode, &p->v, why, whylen);
}

/*
 * Any numeric value: fio arithmetic when it starts with '(' or uses a
 * $keyword (fio evaluates keyword math without parentheses), else a
 * plain number.
 */
int optval_parse(const char *s, enum optval_mode mode, bool pct_ok, struct optval *out,
		 char *why, size_t whylen)
{
	char ewhy[256];		/* struct expr's reason, or a shorter one */

	memset(out, 0, sizeof(*out));
	if (s[0] == '(' || strchr(s, '$')) {
		if (expr_eval(s, mode, &out->v, ewhy, sizeof(ewhy))) {
			snprintf(why, whylen, "bad expression: %s", ewhy);
			return -EINVAL;
		}
		return 0;
	}
	return plain_parse(s, mode, pct_ok, out, why, whylen);
}

/* ------------------------------------------------------------------ */
/* formatting */

/* 4096 -> "4k", 1 GiB -> "1g", 1000 -> "1000": exact, as a user writes it. */
void optval_fmt_size(char *buf, size_t len, uint64_t v)
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
void optval_fmt_time(char *buf, size_t len, uint64_t ns)
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
