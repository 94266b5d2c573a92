/*
 * optval.h - the numbers in option values: sizes and times with fio's
 * units and arithmetic, parsed and printed back.
 *
 * Below options.c and unaware of the option table: it says what a value
 * is worth or why it is not a number, and options.c names the option.
 */
#ifndef FAULTLINE_OPTVAL_H
#define FAULTLINE_OPTVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum optval_mode {
	OPTVAL_SIZE,	/* bytes; k m g t p are powers of 1024 */
	OPTVAL_TIME,	/* nanoseconds; a bare number is seconds */
};

struct optval {
	uint64_t v;	/* bytes or ns; the percentage when pct */
	bool pct;	/* ended in % */
	bool si;	/* used a kib..pib unit, which fio reads as 1000^n */
};

/*
 * "4k", "1.5g", "500ms", "50%", "(16*1024*1024)", "$mb_memory/8": fio
 * arithmetic when @s starts with '(' or uses a $keyword, else a number
 * and one unit. @pct_ok: "N%" is allowed. 0, or -EINVAL with the reason
 * in @why ("unknown unit 'x' (...)", "bad expression: ...").
 */
int optval_parse(const char *s, enum optval_mode mode, bool pct_ok, struct optval *out,
		 char *why, size_t whylen);
/*
 * @s with fio's keywords ($pagesize, $mb_memory, $ncpus) replaced by
 * their values, as fio substitutes them before parsing (and so lists
 * them in its JSON's "job options"). -ENAMETOOLONG when @len is short.
 */
int optval_keywords(const char *s, char *out, size_t len);
/* The units a value may take, for messages and --cmdhelp. */
const char *optval_unit_hint(enum optval_mode mode);
/* 4096 -> "4k", 1 GiB -> "1g", 1000 -> "1000": exact, as a user writes it. */
void optval_fmt_size(char *buf, size_t len, uint64_t v);
/* ns -> "10s", "500ms", "250us": the largest exact unit. */
void optval_fmt_time(char *buf, size_t len, uint64_t ns);

#endif
