/*
 * jobfile.c - fio job files and fio-style command-line jobs -> struct job.
 *
 * The syntax is fio's: [global] and [job] sections, key=value lines, ;
 * and # comments, bare boolean keys, ${VAR} from the environment. Values
 * go through the option table (options.c), which owns their meaning.
 * What this file adds is where things are: each section remembers the
 * line every option was set on, so an error names the file, the line,
 * the option and its value, and a contradiction between two options
 * names both lines.
 *
 * Options in [global] apply to the jobs after it: a job starts as a copy
 * of the globals at its header. Several [global] sections accumulate, as
 * in fio. Each file (and the command line) starts with fresh globals.
 */
#include "job/jobfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/blockdata.h"
#include "engines/engine.h"
#include "job/jobcheck.h"
#include "job/optshape.h"
#include "job/options.h"
#include "job/optval.h"

static void (*jobfile_warn)(const char *msg);

void jobfile_set_warn(void (*warn)(const char *msg))
{
	jobfile_warn = warn;
}

/*
 * A section being filled, and the line each option was last set on: a
 * line of the file, or minus the argument's index for a command-line
 * global a file's job inherited (jobcheck_where names it).
 */
struct section {
	struct job job;
	int *line;		/* per option_table entry; 0 = not set here */
	bool any;		/* an option was given in this section */
	/* What this job section itself set, as fio lists it ("job
	 * options"): the option's own name, the text after ${VAR} and
	 * keywords; a bare key has no text (fio lists none for it). */
	unsigned nopts;
	struct job_opt *opts;
};

struct parser {
	const char *file;	/* path, text name, or "command line" */
	bool cli;
	struct section global;
	struct section cur;	/* the job being filled, when in_job */
	struct section *sec;	/* where options go: &global, &cur or NULL */
	bool in_job;
	bool global_dirty;	/* [global] options no job has taken yet */
	bool skipping;		/* in a job --section leaves out */
	bool may_be_empty;	/* no job is no error (see parser_finish) */
	struct jobfile_select *sel;	/* --section's names, or NULL */
	struct joblist out;	/* this file's jobs, handed over on success */
};

/* ------------------------------------------------------------------ */
/* joblists */

static void opts_free(struct job_opt *o, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		free(o[i].key);
		free(o[i].val);
	}
	free(o);
}

void job_free(struct job *j)
{
	if (!j)
		return;
	option_release(j);
	opts_free(j->src.opts, j->src.nopts);
	free(j);
}

void joblist_free(struct joblist *jl)
{
	for (unsigned i = 0; i < jl->n; i++)
		job_free(jl->jobs[i]);
	free(jl->jobs);
	jl->jobs = NULL;
	jl->n = 0;
	opts_free(jl->globals, jl->nglobals);
	jl->globals = NULL;
	jl->nglobals = 0;
}

/* Remember a [global] option as written, for fio's "global options". */
static int joblist_add_global(struct joblist *jl, const char *key, const char *val)
{
	struct job_opt *n = realloc(jl->globals, (jl->nglobals + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	jl->globals = n;
	n[jl->nglobals].key = strdup(key);
	n[jl->nglobals].val = strdup(val);
	if (!n[jl->nglobals].key || !n[jl->nglobals].val) {
		free(n[jl->nglobals].key);
		free(n[jl->nglobals].val);
		return -ENOMEM;
	}
	jl->nglobals++;
	return 0;
}

static int joblist_add(struct joblist *jl, struct job *j)
{
	struct job **n = realloc(jl->jobs, (jl->n + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	jl->jobs = n;
	jl->jobs[jl->n++] = j;
	return 0;
}

/* Move @from's jobs and global options to the end of @to's. */
static int joblist_splice(struct joblist *to, struct joblist *from)
{
	struct job **n = realloc(to->jobs, (to->n + from->n) * sizeof(*n));
	struct job_opt *g;

	if (!n && to->n + from->n)
		return -ENOMEM;
	to->jobs = n;
	g = realloc(to->globals, (to->nglobals + from->nglobals) * sizeof(*g));
	if (!g && to->nglobals + from->nglobals)
		return -ENOMEM;
	to->globals = g;
	if (from->n)	/* a command line of globals alone has no jobs */
		memcpy(to->jobs + to->n, from->jobs, from->n * sizeof(*n));
	to->n += from->n;
	free(from->jobs);
	from->jobs = NULL;
	from->n = 0;
	if (from->nglobals)
		memcpy(to->globals + to->nglobals, from->globals, from->nglobals * sizeof(*g));
	to->nglobals += from->nglobals;
	free(from->globals);
	from->globals = NULL;
	from->nglobals = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* values */

/*
 * ${NAME} -> its value, or @def when unset or empty ("${NAME:-def}", the
 * shell's form: the bundled jobs take sizes and thread counts from
 * the environment with defaults; fio has no such form). Unlike fio, an
 * unset variable without a default is an error, not "".
 */
static int env_lookup(const char *ref, size_t len, const char *where, const char **val,
		      size_t *vlen, struct err *e)
{
	const char *colon = memchr(ref, ':', len), *env;
	char name[256];

	snprintf(name, sizeof(name), "%.*s", (int)(colon ? colon - ref : (long)len), ref);
	env = getenv(name);
	if (colon && (colon + 1 == ref + len || colon[1] != '-'))
		return err_set(e, EINVAL, "${%.*s} at %s: expected ${%s} or ${%s:-DEFAULT}",
			       (int)len, ref, where, name, name);
	if (colon && (!env || !*env)) {
		*val = colon + 2;
		*vlen = (size_t)(ref + len - *val);
		return 0;
	}
	if (!env)
		return err_set(e, EINVAL, "${%s} at %s: environment variable %s is not set "
			       "(${%s:-DEFAULT} gives a default)", name, where, name, name);
	*val = env;
	*vlen = strlen(env);
	return 0;
}

static int expand_env(const char *val, const char *where, char **out, struct err *e)
{
	size_t cap = strlen(val) + 1, n = 0;
	char *s = malloc(cap);
	int ret;

	if (!s)
		return err_set(e, ENOMEM, "out of memory");
	for (const char *p = val; *p;) {
		const char *add = p, *close;
		size_t len = 1;

		if (p[0] == '$' && p[1] == '{') {
			close = strchr(p, '}');
			if (!close) {
				free(s);
				return err_set(e, EINVAL, "'%s' at %s: '${' without '}'", val, where);
			}
			ret = env_lookup(p + 2, (size_t)(close - p - 2), where, &add, &len, e);
			if (ret) {
				free(s);
				return ret;
			}
			p = close + 1;
		} else {
			p++;
		}
		if (n + len + 1 > cap) {
			char *g;

			cap = (n + len + 1) * 2;
			g = realloc(s, cap);
			if (!g) {
				free(s);
				return err_set(e, ENOMEM, "out of memory");
			}
			s = g;
		}
		memcpy(s + n, add, len);
		n += len;
	}
	s[n] = '\0';
	*out = s;
	return 0;
}

/* Unknown names: fio's own (unsupported here) or a typo. */
static int unknown_option(const char *key, const char *where, struct err *e)
{
	const char *near;

	if (fio_option_known(key))
		return err_set(e, EINVAL, "'%s' at %s is an fio option faultline does not "
			       "support", key, where);
	near = option_suggest(key);
	if (near)
		return err_set(e, EINVAL, "unknown option '%s' at %s, did you mean '%s'?",
			       key, where, near);
	return err_set(e, EINVAL, "unknown option '%s' at %s (faultline's options: "
		       "--cmdhelp)", key, where);
}

/* @key's setting in @s's own list (@text NULL: a bare key), in place of
 * an earlier one. */
static int section_note(struct section *s, const char *key, const char *text)
{
	unsigned i = 0;

	while (i < s->nopts && strcmp(s->opts[i].key, key))
		i++;
	if (i == s->nopts) {
		struct job_opt *n = realloc(s->opts, (s->nopts + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->opts = n;
		n[i].val = NULL;
		if (!(n[i].key = strdup(key)))
			return -ENOMEM;
		s->nopts++;
	}
	free(s->opts[i].val);
	s->opts[i].val = text ? strdup(text) : NULL;
	return text && !s->opts[i].val ? -ENOMEM : 0;
}

/*
 * fio's lists of what was set, under the option's own name (an alias
 * is listed as the option it stands for) with the text as fio keeps it:
 * after ${VAR} and its keywords ($pagesize: "4096"), before arithmetic.
 * A bare key has no text, and fio lists none for it.
 */
static int note_option(struct parser *p, const struct option_def *o, const char *v)
{
	char text[4096];
	const char *t = v && !optval_keywords(v, text, sizeof(text)) ? text : v;

	if (p->sec == &p->global)
		return t ? joblist_add_global(&p->out, o->name, t) : 0;
	return section_note(p->sec, o->name, t);
}

/* key[=val] on @line of the current section. */
static int set_option(struct parser *p, const char *key, const char *val, int line,
		      struct err *e)
{
	const struct option_def *o = option_find(key);
	struct option_ctx c = { .global = p->sec == &p->global, .warn = jobfile_warn };
	char where[300], *v = NULL;
	int ret;

	snprintf(where, sizeof(where), "%s:%d", p->file, line);
	if (!o)
		return unknown_option(key, where, e);
	if (!p->sec)
		return err_set(e, EINVAL, "'%s' at %s is outside any [section] (put it under "
			       "[global] or a [job])", key, where);
	if (p->cli && !val && !option_is_bool(o))
		return err_set(e, EINVAL, "'--%s' at %s needs a value: write --%s=VALUE",
			       key, where, key);
	if (val) {
		ret = expand_env(val, where, &v, e);
		if (ret)
			return ret;
	}
	c.where = where;
	ret = option_set_ctx(&p->sec->job, key, v, &c, e);
	if (!ret && note_option(p, o, v))
		ret = err_set(e, ENOMEM, "out of memory");
	free(v);
	if (ret)
		return ret;
	p->sec->line[o - option_table] = line;
	p->sec->any = true;
	if (p->sec == &p->global)
		p->global_dirty = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* sections */

static int section_init(struct section *s)
{
	memset(s, 0, sizeof(*s));
	s->line = calloc(option_count, sizeof(*s->line));
	if (!s->line)
		return -ENOMEM;
	option_defaults(&s->job);
	return 0;
}

static void section_free(struct section *s)
{
	option_release(&s->job);
	free(s->line);
	s->line = NULL;
	opts_free(s->opts, s->nopts);
	s->opts = NULL;
	s->nopts = 0;
}

static int parser_init(struct parser *p, const char *file, bool cli)
{
	memset(p, 0, sizeof(*p));
	p->file = file;
	p->cli = cli;
	return section_init(&p->global);
}

static void parser_free(struct parser *p)
{
	section_free(&p->global);
	if (p->in_job)
		section_free(&p->cur);
	joblist_free(&p->out);
}

/*
 * An engine with a pool of its own (bufpool) reads with O_DIRECT, so the
 * job is direct=1 whether it says so or not; direct=0 (or buffered=1)
 * said out loud contradicts it: through the page cache every page would
 * be held twice, and pool_size would no longer be the job's memory.
 */
static int resolve_direct(struct job *j, const int *line, struct err *e)
{
	const struct engine_ops *eng = engine_find(j->ioengine);
	char w[300], w2[300];

	if (!eng || !(eng->flags & ENGINE_F_POOL) || j->direct)
		return 0;
	if (jobcheck_given(line, "direct"))
		return err_set(e, EINVAL, "direct=0 at %s contradicts ioengine=%s at %s: the pool "
			       "reads its misses with O_DIRECT, so that pool_size is all the memory "
			       "its pages take; leave direct out (or set it to 1)",
			       jobcheck_where(j, line, "direct", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)));
	j->direct = true;
	return 0;
}

/* The current job is complete: check it and keep it. */
static int finish_job(struct parser *p, struct err *e)
{
	struct section *s = &p->cur;
	struct job *j;
	int ret;

	if (!p->in_job)
		return 0;
	p->in_job = false;
	p->sec = NULL;
	/* A bare [job] inheriting [global] is common fio; one with nothing
	 * at all to run on is a slip. */
	if (!s->any && !p->global.any)
		ret = err_set(e, EINVAL, "job '%s' at %s:%d has no options (and no [global] "
			      "before it)", s->job.name, s->job.src.file, s->job.src.line);
	else
		ret = resolve_direct(&s->job, s->line, e);
	optshape_resolve(&s->job);
	if (!ret)
		ret = job_check(&s->job, s->line, jobfile_warn, e);
	/* fio's wait_for=NAME: an earlier job's name; it starts a stonewall
	 * group, so the job waits for NAME (and every other earlier job). */
	if (!ret && s->job.wait_for) {
		bool found = false;

		for (unsigned i = 0; i < p->out.n && !found; i++)
			found = !strcmp(p->out.jobs[i]->name, s->job.wait_for);
		if (!found)
			ret = err_set(e, EINVAL, "wait_for=%s in job '%s' at %s:%d: no earlier job "
				      "has that name", s->job.wait_for, s->job.name,
				      s->job.src.file, s->job.src.line);
		else
			s->job.stonewall = true;
	}
	j = ret ? NULL : malloc(sizeof(*j));
	if (!ret && !j)
		ret = err_set(e, ENOMEM, "out of memory");
	if (!ret) {
		*j = s->job;		/* the strings move with it */
		j->src.opts = s->opts;
		j->src.nopts = s->nopts;
		s->opts = NULL;
		s->nopts = 0;
		free(s->line);
		s->line = NULL;
		ret = joblist_add(&p->out, j);
		if (ret)
			job_free(j);
		return ret ? err_set(e, ENOMEM, "out of memory") : 0;
	}
	section_free(s);
	return ret;
}

static int name_check(const char *name, const char *where, struct err *e)
{
	if (!*name)
		return err_set(e, EINVAL, "empty job name at %s", where);
	if (strlen(name) >= JOB_NAME_MAX)
		return err_set(e, EINVAL, "job name '%.40s...' at %s is longer than %d "
			       "characters", name, where, JOB_NAME_MAX - 1);
	/* It names scratch files: <dir>/<job>.<n>.<file>. */
	if (strchr(name, '/'))
		return err_set(e, EINVAL, "job name '%s' at %s contains '/' (job names "
			       "name scratch files)", name, where);
	return 0;
}

static int start_job(struct parser *p, const char *name, int line, struct err *e)
{
	char where[300];
	int ret;

	snprintf(where, sizeof(where), "%s:%d", p->file, line);
	ret = name_check(name, where, e);
	if (!ret)
		ret = finish_job(p, e);
	if (ret)
		return ret;
	p->cur.line = calloc(option_count, sizeof(*p->cur.line));
	if (!p->cur.line || option_copy(&p->cur.job, &p->global.job)) {
		free(p->cur.line);
		return err_set(e, ENOMEM, "out of memory");
	}
	memcpy(p->cur.line, p->global.line, option_count * sizeof(*p->cur.line));
	p->cur.any = false;
	p->cur.opts = NULL;
	p->cur.nopts = 0;
	snprintf(p->cur.job.name, sizeof(p->cur.job.name), "%s", name);
	snprintf(p->cur.job.src.file, sizeof(p->cur.job.src.file), "%s", p->file);
	p->cur.job.src.line = line;
	p->in_job = true;
	p->sec = &p->cur;
	p->global_dirty = false;
	return 0;
}

/* All jobs parsed: hand them to @jl. */
static int parser_finish(struct parser *p, struct joblist *jl, struct err *e)
{
	int ret = finish_job(p, e);

	if (ret)
		return ret;
	if (!p->out.n && !p->may_be_empty)
		return err_set(e, EINVAL, p->cli ? "%s: options but no --name=NAME to start a job"
			       : "%s: no jobs (a job file needs at least one [job] section)",
			       p->file);
	if (p->global_dirty)
		jobcheck_warnf(jobfile_warn, "%s: [global] options after the last job apply to no job",
		      p->file);
	return joblist_splice(jl, &p->out) ? err_set(e, ENOMEM, "out of memory") : 0;
}

/* ------------------------------------------------------------------ */
/* job files */

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* fio ends a line at ';' or '#'; here only where one starts a word, so
 * a path such as /data/run#3 survives. */
static void strip_comment(char *s)
{
	for (char *p = s; *p; p++) {
		if ((*p == ';' || *p == '#') && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			return;
		}
	}
}

/* fio's --section: whether the job @name is left out; a name kept is
 * marked found. */
static bool section_skipped(struct parser *p, const char *name)
{
	if (!p->sel || !p->sel->n)
		return false;
	for (unsigned i = 0; i < p->sel->n; i++) {
		if (!strcmp(p->sel->names[i], name)) {
			p->sel->found[i] = true;
			return false;
		}
	}
	return true;
}

static int header_line(struct parser *p, char *s, int line, struct err *e)
{
	char *close = strchr(s, ']'), *rest, *name;

	if (!close)
		return err_set(e, EINVAL, "unterminated section header '%s' at %s:%d "
			       "(missing ']')", s, p->file, line);
	*close = '\0';
	rest = trim(close + 1);
	if (*rest && *rest != ';' && *rest != '#')
		return err_set(e, EINVAL, "text '%s' after section header [%s] at %s:%d",
			       rest, s + 1, p->file, line);
	name = trim(s + 1);
	p->skipping = strcmp(name, "global") && section_skipped(p, name);
	if (p->skipping) {
		p->sec = NULL;
		return finish_job(p, e);
	}
	if (strcmp(name, "global"))
		return start_job(p, name, line, e);
	if (finish_job(p, e))
		return -EINVAL;
	p->sec = &p->global;
	return 0;
}

static int option_line(struct parser *p, char *s, int line, struct err *e)
{
	char *eq, *key, *val = NULL;

	strip_comment(s);
	eq = strchr(s, '=');
	if (eq) {
		*eq = '\0';
		val = trim(eq + 1);
	}
	key = trim(s);
	if (!eq && strpbrk(key, " \t")) {
		char *rest;

		key[strcspn(key, " \t")] = '\0';
		rest = trim(key + strlen(key) + 1);
		if (option_find(key) || !fio_option_known(key))
			return err_set(e, EINVAL, "'%s %s' at %s:%d: expected key=value", key,
				       rest, p->file, line);
	}
	if (!*key)
		return err_set(e, EINVAL, "'=%s' at %s:%d: no option name before '='",
			       val ? val : "", p->file, line);
	return set_option(p, key, val, line, e);
}

static int parse_line(struct parser *p, char *s, int line, struct err *e)
{
	s = trim(s);
	if (!*s || *s == ';' || *s == '#')
		return 0;
	if (*s == '[')
		return header_line(p, s, line, e);
	/* fio reads nothing of a job --section leaves out. */
	if (p->skipping)
		return 0;
	return option_line(p, s, line, e);
}

static int parse_text(struct parser *p, const char *text, struct err *e)
{
	char *buf = NULL;
	int line = 0, ret = 0;

	for (const char *s = text; *s && !ret;) {
		size_t len = strcspn(s, "\n");
		char *nb = realloc(buf, len + 1);

		if (!nb) {
			ret = err_set(e, ENOMEM, "out of memory");
			break;
		}
		buf = nb;
		memcpy(buf, s, len);
		buf[len] = '\0';
		ret = parse_line(p, buf, ++line, e);
		s += len + (s[len] == '\n');
	}
	free(buf);
	return ret;
}

int jobfile_parse_text(struct joblist *jl, const char *name, const char *text,
		       struct err *e)
{
	struct parser p;
	int ret;

	if (parser_init(&p, name, false))
		return err_set(e, ENOMEM, "out of memory");
	ret = parse_text(&p, text, e);
	if (!ret)
		ret = parser_finish(&p, jl, e);
	parser_free(&p);
	return ret;
}

/* A job file larger than this is not a job file. */
#define JOBFILE_MAX (16u << 20)

/* @path's text, in *@text (the caller frees it). */
static int read_jobfile(const char *path, char **text, struct err *e)
{
	FILE *f = fopen(path, "r");
	size_t n;
	int ret = 0;

	*text = NULL;
	if (!f)
		return err_set(e, errno, "%s: %s", path, strerror(errno));
	*text = malloc(JOBFILE_MAX + 1);
	if (!*text) {
		ret = err_set(e, ENOMEM, "out of memory");
		goto out;
	}
	n = fread(*text, 1, JOBFILE_MAX + 1, f);
	if (ferror(f)) {
		ret = err_set(e, EIO, "%s: read error", path);
		goto out;
	}
	if (n > JOBFILE_MAX) {
		ret = err_set(e, EFBIG, "%s: larger than %u MiB, not a job file", path,
			      JOBFILE_MAX >> 20);
		goto out;
	}
	if (memchr(*text, '\0', n)) {
		ret = err_set(e, EINVAL, "%s: contains NUL bytes, not a job file", path);
		goto out;
	}
	(*text)[n] = '\0';
out:
	if (ret) {
		free(*text);
		*text = NULL;
	}
	fclose(f);
	return ret;
}

int jobfile_parse_file(struct joblist *jl, const char *path, struct err *e)
{
	char *text;
	int ret = read_jobfile(path, &text, e);

	if (!ret)
		ret = jobfile_parse_text(jl, path, text, e);
	free(text);
	return ret;
}

/* ------------------------------------------------------------------ */
/* command line */

static int arg_option(struct parser *p, const char *arg, int idx, struct err *e)
{
	char *key, *eq;
	int ret;

	if (strncmp(arg, "--", 2) || !arg[2])
		return err_set(e, EINVAL, "'%s' at %s:%d: expected --option=value", arg,
			       p->file, idx);
	key = strdup(arg + 2);
	if (!key)
		return err_set(e, ENOMEM, "out of memory");
	eq = strchr(key, '=');
	if (eq)
		*eq = '\0';
	if (!strcmp(key, "name") && !eq)
		ret = err_set(e, EINVAL, "'--name' at %s:%d needs a value: write --name=NAME",
			      p->file, idx);
	else if (!strcmp(key, "name") && (p->skipping = section_skipped(p, eq + 1)))
		ret = finish_job(p, e);		/* its options are skipped with it */
	else if (!strcmp(key, "name"))
		ret = start_job(p, eq + 1, idx, e) ? -EINVAL
		      /* fio lists a command-line job's name among its options */
		      : section_note(&p->cur, "name", eq + 1) ? err_set(e, ENOMEM, "out of memory")
		      : 0;
	else
		ret = p->skipping ? 0 : set_option(p, key, eq ? eq + 1 : NULL, idx, e);
	free(key);
	return ret;
}

int jobfile_parse_args(struct joblist *jl, int argc, char **argv, struct err *e)
{
	struct parser p;
	int ret = 0;

	if (parser_init(&p, "command line", true))
		return err_set(e, ENOMEM, "out of memory");
	/* Options before the first --name form the global section, as fio. */
	p.sec = &p.global;
	for (int i = 0; i < argc && !ret; i++)
		ret = arg_option(&p, argv[i], i + 1, e);
	if (!ret)
		ret = parser_finish(&p, jl, e);
	parser_free(&p);
	return ret;
}

/* A job file's globals start as the command line's, as fio's job files
 * start from the globals its command line set (def_thread). */
static int parser_inherit(struct parser *p, const struct section *g)
{
	option_release(&p->global.job);
	if (option_copy(&p->global.job, &g->job))
		return -ENOMEM;
	for (size_t i = 0; i < option_count; i++)
		p->global.line[i] = g->line[i] > 0 ? -g->line[i] : g->line[i];
	p->global.any = g->any;
	return 0;
}

/* One job file (or the embedded demo) beneath the command line's globals. */
static int parse_source(struct joblist *all, const struct jobfile_src *src,
			const struct section *cliglob, struct jobfile_select *sel, struct err *e)
{
	struct parser p;
	char *text = NULL;
	int ret;

	if (!src->text && read_jobfile(src->name, &text, e))
		return -EINVAL;
	if (parser_init(&p, src->name, false) || parser_inherit(&p, cliglob)) {
		free(text);
		parser_free(&p);
		return err_set(e, ENOMEM, "out of memory");
	}
	p.sel = sel;
	p.may_be_empty = sel && sel->n;
	ret = parse_text(&p, src->text ? src->text : text, e);
	if (!ret)
		ret = parser_finish(&p, all, e);
	parser_free(&p);
	free(text);
	return ret;
}

/* Every name --section gave matched a job. */
static int select_check(const struct jobfile_select *sel, unsigned njobs, struct err *e)
{
	for (unsigned i = 0; sel && i < sel->n; i++)
		if (!sel->found[i])
			return err_set(e, EINVAL, "--section=%s: no job of that name in the job "
				       "files or on the command line", sel->names[i]);
	if (!njobs)
		return err_set(e, EINVAL, "no jobs given (a job file, --name=... options, or "
			       "--demo; see --help)");
	return 0;
}

int jobfile_parse_cmdline(struct joblist *jl, int argc, char **argv, unsigned nsrc,
			  const struct jobfile_src *src, struct jobfile_select *sel,
			  struct err *e)
{
	struct joblist all = { 0 };
	struct parser p;
	int ret = 0;

	if (parser_init(&p, "command line", true))
		return err_set(e, ENOMEM, "out of memory");
	p.sec = &p.global;
	p.sel = sel;
	/* Beside job files, options without a --name are theirs. */
	p.may_be_empty = nsrc > 0;
	for (int i = 0; i < argc && !ret; i++)
		ret = arg_option(&p, argv[i], i + 1, e);
	if (!ret && nsrc)
		p.global_dirty = false;
	/* fio runs the command line's jobs first, then the files'. */
	if (!ret)
		ret = parser_finish(&p, &all, e);
	for (unsigned i = 0, first = 0; i < nsrc && !ret; i++) {
		unsigned before = all.n;

		ret = parse_source(&all, &src[i], &p.global, sel, e);
		/* fio separates job files by a stonewall: the first job of
		 * every file after the first waits for all before it. */
		if (!ret && all.n > before && first++)
			all.jobs[before]->stonewall = true;
	}
	parser_free(&p);
	if (!ret)
		ret = select_check(sel, all.n, e);
	if (!ret && joblist_splice(jl, &all))
		ret = err_set(e, ENOMEM, "out of memory");
	joblist_free(&all);
	return ret;
}

