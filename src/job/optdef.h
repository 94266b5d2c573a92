/*
 * optdef.h - what an option is: its type, where a value comes from, and
 * the table entry that options.c's option_table is made of. Separate so
 * that optset.c (setting a value by type) needs neither the table nor
 * options.c.
 */
#ifndef FAULTLINE_OPTDEF_H
#define FAULTLINE_OPTDEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "job/job.h"

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
/* (1u << 0) was thread, which now has an effect. */
#define FIO_NOOP_GROUP_REPORTING	(1u << 1)
#define FIO_NOOP_NEW_GROUP		(1u << 2)
#define FIO_NOOP_NORANDOMMAP		(1u << 3)
#define FIO_NOOP_RANDREPEAT		(1u << 4)
#define FIO_NOOP_DESCRIPTION		(1u << 5)
#define FIO_NOOP_NAME			(1u << 6)	/* name= in [global] only */
#define FIO_NOOP_THREADS		(1u << 7)
#define FIO_NOOP_FLOW_WATERMARK		(1u << 8)

/* Where a value comes from, for messages and warnings. */
struct option_ctx {
	const char *where;		/* "job.fio:7", "command line:3" or NULL */
	bool global;			/* setting the [global] section */
	void (*warn)(const char *msg);	/* NULL: warnings are dropped */
	const char *key;		/* set by option_set_ctx: the name as written */
};

struct option_def;

/* An option's parser: @val (NULL for a bare option) into @j's field(s)
 * for @o; 0, or -EINVAL with @e naming the option and where @c says it
 * was given. */
typedef int opt_parse_fn(struct job *j, const struct option_def *o, const char *val,
			 const struct option_ctx *c, struct err *e);

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
	opt_parse_fn *parse;
	const char *syntax;		/* --cmdhelp's value syntax when the type says too little */
	uint32_t noop;			/* FIO_NOOP_* bit of an accepted fio no-op, else 0 */
	bool bare;			/* may stand alone without meaning 1 (write_bw_log) */
	const char *help;
};

#endif
