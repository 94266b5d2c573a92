/*
 * options.h - the one option table (SPEC 2).
 *
 * Parser, defaults, validation, --cmdhelp and the man-page test all read
 * option_table. An entry names the option, its fio aliases, its type,
 * where it lands in struct job, its default and a line of help.
 */
#ifndef FAULTLINE_OPTIONS_H
#define FAULTLINE_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"
#include "job.h"

enum opt_type {
	OPT_STR,	/* char * (strdup'd) */
	OPT_NAME,	/* char[JOB_NAME_MAX] */
	OPT_INT,	/* unsigned, within [min, max] */
	OPT_U64,	/* uint64_t plain integer */
	OPT_SIZE,	/* uint64_t, k m g t suffixes (powers of 1024) */
	OPT_TIME,	/* uint64_t ns; bare number = seconds, ms s m h suffixes */
	OPT_BOOL,	/* bool; bare key = 1 */
	OPT_ENUM,	/* int, one of values[] */
	OPT_CUSTOM,	/* parsed by ->parse */
};

struct option_def {
	const char *name;
	const char *aliases;		/* comma-separated fio aliases, or NULL */
	enum opt_type type;
	size_t off;			/* offsetof(struct job, field) */
	const char *def;		/* default as the user would write it, or NULL */
	const char *const *values;	/* OPT_ENUM: NULL-terminated */
	long long min, max;		/* OPT_INT bounds */
	bool inverse;			/* alias with inverted meaning (buffered) is separate entry */
	int (*parse)(struct job *j, const struct option_def *o, const char *val,
		     struct err *e);
	const char *help;
};

extern const struct option_def option_table[];
extern const size_t option_count;

/* Look up by name or alias; NULL when unknown. */
const struct option_def *option_find(const char *name);
/* Set @name=@val on @j (val NULL for a bare key). -errno with message. */
int option_set(struct job *j, const char *name, const char *val, struct err *e);
/* A job with every default applied. */
void option_defaults(struct job *j);
/* --cmdhelp and --cmdhelp=NAME. -ENOENT when NAME is unknown. */
int option_print_help(FILE *f, const char *name);

/* fio option names faultline does not implement (fio_options.c), so an
 * error can say "fio option we do not support" instead of "unknown". */
bool fio_option_known(const char *name);

#endif
