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

static void (*jobfile_warn)(const char *msg);

void jobfile_set_warn(void (*warn)(const char *msg))
{
	jobfile_warn = warn;
}

/* A section being filled, and the line each option was last set on. */
struct section {
	struct job job;
	int *line;		/* per option_table entry; 0 = not set here */
	bool any;		/* an option was given in this section */
};

struct parser {
	const char *file;	/* path, text name, or "command line" */
	bool cli;
	struct section global;
	struct section cur;	/* the job being filled, when in_job */
	struct section *sec;	/* where options go: &global, &cur or NULL */
	bool in_job;
	bool global_dirty;	/* [global] options no job has taken yet */
	struct joblist out;	/* this file's jobs, handed over on success */
};

/* ------------------------------------------------------------------ */
/* joblists */

void job_free(struct job *j)
{
	if (!j)
		return;
	option_release(j);
	free(j);
}

void joblist_free(struct joblist *jl)
{
	for (unsigned i = 0; i < jl->n; i++)
		job_free(jl->jobs[i]);
	free(jl->jobs);
	jl->jobs = NULL;
	jl->n = 0;
	for (unsigned i = 0; i < jl->nglobals; i++) {
		free(jl->globals[i].key);
		free(jl->globals[i].val);
	}
	free(jl->globals);
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
 * shell's form: SPEC 11's bundled jobs take sizes and thread counts from
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
	if (!ret && p->sec == &p->global &&
	    joblist_add_global(&p->out, key, v ? v : o->bare ? "" : "1"))
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
			      "before it)", s->job.name, s->job.src_file, s->job.src_line);
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
				      s->job.src_file, s->job.src_line);
		else
			s->job.stonewall = true;
	}
	j = ret ? NULL : malloc(sizeof(*j));
	if (!ret && !j)
		ret = err_set(e, ENOMEM, "out of memory");
	if (!ret) {
		*j = s->job;		/* the strings move with it */
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
	snprintf(p->cur.job.name, sizeof(p->cur.job.name), "%s", name);
	snprintf(p->cur.job.src_file, sizeof(p->cur.job.src_file), "%s", p->file);
	p->cur.job.src_line = line;
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
	if (!p->out.n)
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
	return option_line(p, s, line, e);
}

int jobfile_parse_text(struct joblist *jl, const char *name, const char *text,
		       struct err *e)
{
	struct parser p;
	char *buf = NULL;
	int line = 0, ret;

	if (parser_init(&p, name, false))
		return err_set(e, ENOMEM, "out of memory");
	for (const char *s = text; *s;) {
		size_t len = strcspn(s, "\n");
		char *nb = realloc(buf, len + 1);

		if (!nb) {
			ret = err_set(e, ENOMEM, "out of memory");
			goto out;
		}
		buf = nb;
		memcpy(buf, s, len);
		buf[len] = '\0';
		ret = parse_line(&p, buf, ++line, e);
		if (ret)
			goto out;
		s += len + (s[len] == '\n');
	}
	ret = parser_finish(&p, jl, e);
out:
	free(buf);
	parser_free(&p);
	return ret;
}

/* A job file larger than this is not a job file. */
#define JOBFILE_MAX (16u << 20)

int jobfile_parse_file(struct joblist *jl, const char *path, struct err *e)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t n;
	int ret;

	if (!f)
		return err_set(e, errno, "%s: %s", path, strerror(errno));
	text = malloc(JOBFILE_MAX + 1);
	if (!text) {
		ret = err_set(e, ENOMEM, "out of memory");
		goto out;
	}
	n = fread(text, 1, JOBFILE_MAX + 1, f);
	if (ferror(f)) {
		ret = err_set(e, EIO, "%s: read error", path);
		goto out;
	}
	if (n > JOBFILE_MAX) {
		ret = err_set(e, EFBIG, "%s: larger than %u MiB, not a job file", path,
			      JOBFILE_MAX >> 20);
		goto out;
	}
	if (memchr(text, '\0', n)) {
		ret = err_set(e, EINVAL, "%s: contains NUL bytes, not a job file", path);
		goto out;
	}
	text[n] = '\0';
	ret = jobfile_parse_text(jl, path, text, e);
out:
	free(text);
	fclose(f);
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
	if (!strcmp(key, "name"))
		ret = eq ? start_job(p, eq + 1, idx, e)
			 : err_set(e, EINVAL, "'--name' at %s:%d needs a value: write "
				   "--name=NAME", p->file, idx);
	else
		ret = set_option(p, key, eq ? eq + 1 : NULL, idx, e);
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

/* ------------------------------------------------------------------ */
/* --parse-only */

void job_print(FILE *f, const struct job *j)
{
	char buf[512];
	bool first = true;

	fprintf(f, "[%s]\n; from %s:%d\n", j->name, j->src_file, j->src_line);
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
		if (!(option_table[i].noop & j->fio_noops))
			continue;
		fprintf(f, "%s %s", first ? "; accepted, no effect here:" : "",
			option_table[i].name);
		first = false;
	}
	if (!first)
		fprintf(f, "\n");
	fprintf(f, "\n");
}
