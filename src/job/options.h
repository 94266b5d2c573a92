/*
 * options.h - the one option table.
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

#include "lib/err.h"
#include "job/job.h"
#include "job/optdef.h"

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

/* The closest option name or alias to @name when it is close enough to
 * be a typo, else NULL (for "did you mean"). */
const char *option_suggest(const char *name);

/* fio option names faultline does not implement (fio_options.c), so an
 * error can say "fio option we do not support" instead of "unknown". */
bool fio_option_known(const char *name);

#endif
