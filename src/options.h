/*
 * options.h - the one option table (SPEC 2).
 *
 * Parser, defaults, validation, --cmdhelp and the man-page test all read
 * option_table. An entry names the option, its fio aliases, its type,
 * where it lands in struct job, its default and a line of help.
 */
#ifndef FAULTLINE_OPTIONS_H
#define FAULTLINE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/*
 * fio options accepted because they change nothing here (struct job
 * fio_noops). Each has its own table entry, so --cmdhelp and the man
 * page list them too.
 */
#define FIO_NOOP_THREAD			(1u << 0)
#define FIO_NOOP_GROUP_REPORTING	(1u << 1)
#define FIO_NOOP_NEW_GROUP		(1u << 2)
#define FIO_NOOP_NORANDOMMAP		(1u << 3)
#define FIO_NOOP_RANDREPEAT		(1u << 4)
#define FIO_NOOP_DESCRIPTION		(1u << 5)
#define FIO_NOOP_NAME			(1u << 6)	/* name= in [global] only */

/* Where a value comes from, for messages and warnings. */
struct option_ctx {
	const char *where;		/* "job.fio:7", "command line:3" or NULL */
	bool global;			/* setting the [global] section */
	void (*warn)(const char *msg);	/* NULL: warnings are dropped */
	const char *key;		/* set by option_set_ctx: the name as written */
};

struct option_def {
	const char *name;
	const char *aliases;		/* comma-separated fio aliases, or NULL */
	enum opt_type type;
	size_t off;			/* offsetof(struct job, field) */
	const char *def;		/* default as the user would write it, or NULL */
	const char *const *values;	/* OPT_ENUM: NULL-terminated, in enum order */
	long long min, max;		/* INT, U64, SIZE bounds; max 0 = none */
	bool inverse;			/* alias with inverted meaning (buffered) is separate entry */
	/* Overrides the type's parser when set (required for OPT_CUSTOM). */
	int (*parse)(struct job *j, const struct option_def *o, const char *val,
		     const struct option_ctx *c, struct err *e);
	const char *syntax;		/* --cmdhelp's value syntax when the type says too little */
	uint32_t noop;			/* FIO_NOOP_* bit of an accepted fio no-op, else 0 */
	bool bare;			/* may stand alone without meaning 1 (write_bw_log) */
	const char *help;
};

extern const struct option_def option_table[];
extern const size_t option_count;

/* Look up by name or alias; NULL when unknown. */
const struct option_def *option_find(const char *name);
/* True when the key may stand alone: a boolean ("direct", "time_based"),
 * where it means 1, or an option with .bare (fio's write_bw_log, where
 * it means the job's name). */
bool option_is_bool(const struct option_def *o);
/* Set @name=@val on @j (val NULL for a bare key). -errno with message. */
int option_set(struct job *j, const char *name, const char *val, struct err *e);
/* The same, with the value's origin for messages (the parser's entry). */
int option_set_ctx(struct job *j, const char *name, const char *val,
		   const struct option_ctx *c, struct err *e);
/* A job with every default applied. */
void option_defaults(struct job *j);
/* Deep copy of @src into @dst (strings duplicated). -ENOMEM. */
int option_copy(struct job *dst, const struct job *src);
/* Free the strings a job owns (every OPT_STR field) and NULL them. */
void option_release(struct job *j);
/* The value of @o in @j as a job file would say it ("4k", "10s",
 * "zipf:1.2"); 0 when unset (no filename), else 1. */
int option_format(const struct job *j, const struct option_def *o, char *buf,
		  size_t len);
/* --cmdhelp and --cmdhelp=NAME. -ENOENT when NAME is unknown. */
int option_print_help(FILE *f, const char *name);

/* The closest option name or alias to @name when it is close enough to
 * be a typo, else NULL (for "did you mean"). */
const char *option_suggest(const char *name);

/* fio option names faultline does not implement (fio_options.c), so an
 * error can say "fio option we do not support" instead of "unknown". */
bool fio_option_known(const char *name);

#endif
