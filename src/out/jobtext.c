/*
 * jobtext.c - the option table and a job as text; see jobtext.h.
 */
#include "out/jobtext.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engines/engine.h"
#include "job/options.h"
#include "job/optset.h"
#include "job/optval.h"

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
		fprintf(f, " (suffixes %s; fio arithmetic in parentheses)",
			optval_unit_hint(OPTVAL_SIZE));
	else if (o->type == OPT_TIME)
		fprintf(f, " (%s; fio arithmetic in parentheses)", optval_unit_hint(OPTVAL_TIME));
	fprintf(f, "\n  default: %s\n", o->def ? o->def : "none");
	opt_bound_str(o, o->min, lo, sizeof(lo));
	opt_bound_str(o, o->max, hi, sizeof(hi));
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
	if (!strcmp(o->name, "ioengine"))
		print_engines(f);
}

/* ---- --cmdhelp -------------------------------------------------------- */

int jobtext_cmdhelp(FILE *f, const char *name)
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

/* ---- --parse-only ---------------------------------------------------- */

void jobtext_job(FILE *f, const struct job *j)
{
	char buf[512];
	bool first = true;

	fprintf(f, "[%s]\n; from %s:%d\n", j->name, j->src.file, j->src.line);
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];

		if (o->noop || o->inverse || !strcmp(o->name, "name"))
			continue;
		if (option_format(j, o, buf, sizeof(buf)))
			fprintf(f, "%s=%s\n", o->name, buf);
		else if (o->type != OPT_CUSTOM)
			fprintf(f, "; %s not set\n", o->name);
	}
	for (size_t i = 0; i < option_count; i++) {
		if (!(option_table[i].noop & j->src.fio_noops))
			continue;
		fprintf(f, "%s %s", first ? "; accepted, no effect here:" : "",
			option_table[i].name);
		first = false;
	}
	if (!first)
		fprintf(f, "\n");
	fprintf(f, "\n");
}
