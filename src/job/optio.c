/*
 * optio.c - fio's strided zones and I/O priority options; see optio.h.
 *
 * The priority options follow fio's engines/cmdprio.c: an ioprio value
 * is class << 13 | hint << 3 | level; cmdprio_percentage gives that
 * share of a direction's requests the priority cmdprio_class/cmdprio,
 * cmdprio_bssplit gives each request size its own shares and,
 * optionally, priorities of their own.
 */
#include "job/optio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/optset.h"
#include "workload/content.h"
#include "workload/pattern.h"
#include "job/optverify.h"
#include "job/workloadcfg.h"

/* fio's limits (os/os-linux.h). */
#define IOPRIO_CLASS_MAX	3
#define IOPRIO_LEVEL_MAX	7
#define IOPRIO_HINT_MAX		1023

const char *const optio_dedupe_names[] = { "repeat", "working_set", NULL };
const char *const optio_log_window_names[] = { "avg", "max", "both", NULL };

/* log_window_value: fio's names, and its older 0 (avg) and 1 (max). */
int optio_log_window(struct job *j, const struct option_def *o, const char *val,
		     const struct option_ctx *c, struct err *e)
{
	(void)o;
	for (int i = 0; optio_log_window_names[i]; i++)
		if (val && !strcmp(val, optio_log_window_names[i])) {
			j->log_window_value = i;
			return 0;
		}
	if (val && (!strcmp(val, "0") || !strcmp(val, "1"))) {
		j->log_window_value = val[0] == '1' ? LOG_WINDOW_MAX : LOG_WINDOW_AVG;
		return 0;
	}
	return opt_fail(c, val, e, "expected avg, max, both, 0 (avg) or 1 (max)");
}

int optio_zonemode(struct job *j, const struct option_def *o, const char *val,
		   const struct option_ctx *c, struct err *e)
{
	(void)o;
	if (val && !strcmp(val, "none"))
		j->zonemode = ZONE_NONE;
	else if (val && !strcmp(val, "strided"))
		j->zonemode = ZONE_STRIDED;
	else if (val && !strcmp(val, "zbd"))
		return opt_fail(c, val, e, "zoned block devices (zonemode=zbd) are an fio option "
				"value faultline does not support: its targets are not zoned");
	else
		return opt_fail(c, val, e, "expected none or strided");
	return 0;
}

/* A plain decimal number, all of @s. */
static int plain(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

int optio_prio(struct job *j, const struct option_def *o, const char *val,
	       const struct option_ctx *c, struct err *e)
{
	uint64_t v;

	if (plain(val, &v) || v > (uint64_t)o->max)
		return opt_fail(c, val, e, "expected 0..%lld", o->max);
	*(unsigned *)((char *)j + o->off) = (unsigned)v;
	j->prio_set = true;
	return 0;
}

/* "a" or "a,b": each direction's number in [lo, hi]; a third (fio's
 * trims) is read and dropped. */
static int dir_numbers(const char *val, unsigned lo, unsigned hi, unsigned out[2],
		       const struct option_ctx *c, struct err *e)
{
	const char *p = val;

	for (unsigned d = 0; d < 3 && p; d++) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(p, &end, 10);
		if (end == p || errno || v < lo || v > hi || (*end && *end != ','))
			return opt_fail(c, val, e, "expected %u..%u, or one per direction (reads,writes)",
					lo, hi);
		if (d < 2)
			out[d] = (unsigned)v;
		if (d == 0)
			out[1] = (unsigned)v;
		p = *end ? end + 1 : NULL;
	}
	return 0;
}

int optio_cmdprio(struct job *j, const struct option_def *o, const char *val,
		  const struct option_ctx *c, struct err *e)
{
	unsigned v[2], lo = 0, hi = 100;
	char **text = (char **)((char *)j + o->off);
	char *copy;

	if (!val)
		return opt_fail(c, val, e, "needs a value");
	if (!strcmp(o->name, "cmdprio_class")) {
		lo = 1;
		hi = IOPRIO_CLASS_MAX;
	} else if (!strcmp(o->name, "cmdprio")) {
		hi = IOPRIO_LEVEL_MAX;
	}
	if (dir_numbers(val, lo, hi, v, c, e))
		return -EINVAL;
	copy = strdup(val);
	if (!copy)
		return err_set(e, ENOMEM, "out of memory");
	for (unsigned d = 0; d < 2; d++) {
		struct job_cmdprio *cp = &j->cmdprio[d];

		if (!strcmp(o->name, "cmdprio_class"))
			cp->cls = v[d];
		else if (!strcmp(o->name, "cmdprio"))
			cp->level = v[d];
		else
			cp->perc = v[d];
	}
	free(*text);
	*text = copy;
	return 0;
}

/* One entry "bs/pct[/class/level[/hint]]" into @cp, kept grouped by size. */
static int bsprio_entry(struct job_cmdprio *cp, char *tok, const char *val,
			const struct option_ctx *c, struct err *e)
{
	char *f[5] = { 0 }, *save = NULL;
	unsigned n = 0;
	uint64_t bs, x[4] = { 0 };
	struct job_bsprio *b = NULL;

	for (char *t = strtok_r(tok, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (n == 5)
			return opt_fail(c, val, e, "'%s': at most bs/pct/class/level/hint", tok);
		f[n++] = t;
	}
	if (n != 2 && n != 4 && n != 5)
		return opt_fail(c, val, e, "an entry is bs/pct or bs/pct/class/level[/hint]");
	if (num_parse(c, f[0], OPTVAL_SIZE, &bs, NULL, e))
		return -EINVAL;
	for (unsigned i = 1; i < n; i++)
		if (plain(f[i], &x[i - 1]))
			return opt_fail(c, val, e, "'%s' is not a number", f[i]);
	if (x[0] > 100 || (n >= 4 && (x[1] < 1 || x[1] > IOPRIO_CLASS_MAX || x[2] > IOPRIO_LEVEL_MAX)) ||
	    x[3] > IOPRIO_HINT_MAX)
		return opt_fail(c, val, e, "a share is 0..100, a class 1..3, a level 0..7, a hint 0..%d",
				IOPRIO_HINT_MAX);
	if (!x[0])
		return 0;	/* fio keeps no entry of a 0 share */
	for (unsigned i = 0; i < cp->nbs; i++)
		if (cp->bs[i].bs == bs)
			b = &cp->bs[i];
	if (!b) {
		if (cp->nbs == JOB_CMDPRIO_BS_MAX)
			return opt_fail(c, val, e, "more than %d sizes", JOB_CMDPRIO_BS_MAX);
		b = &cp->bs[cp->nbs++];
		b->bs = bs;
	}
	if (b->n == JOB_CMDPRIO_PRIOS_MAX)
		return opt_fail(c, val, e, "more than %d priorities for one size", JOB_CMDPRIO_PRIOS_MAX);
	b->tot += (unsigned)x[0];
	if (b->tot > 100)
		return opt_fail(c, val, e, "the shares of %llu-byte requests add up to more than 100%%",
				(unsigned long long)bs);
	b->perc[b->n] = (uint8_t)x[0];
	b->prio[b->n] = n >= 4 ? (int32_t)(x[1] << 13 | x[3] << 3 | x[2]) : -1;
	b->n++;
	return 0;
}

int optio_cmdprio_bssplit(struct job *j, const struct option_def *o, const char *val,
			  const struct option_ctx *c, struct err *e)
{
	struct job_cmdprio nc[2];
	char *copy, *dirs, *part, *dsave = NULL;
	unsigned d = 0;

	(void)o;
	if (!val || !*val)
		return opt_fail(c, val, e, "expected bs/pct:..., e.g. 64k/40:1m/10");
	memcpy(nc, j->cmdprio, sizeof(nc));
	nc[0].nbs = nc[1].nbs = 0;
	memset(nc[0].bs, 0, sizeof(nc[0].bs));
	memset(nc[1].bs, 0, sizeof(nc[1].bs));
	dirs = strdup(val);
	if (!dirs)
		return err_set(e, ENOMEM, "out of memory");
	/* "reads,writes[,trims]": one part is every direction. */
	for (part = strtok_r(dirs, ",", &dsave); part && d < 3; part = strtok_r(NULL, ",", &dsave), d++) {
		char *tsave = NULL;

		if (d == 2)
			break;
		for (char *t = strtok_r(part, ":", &tsave); t; t = strtok_r(NULL, ":", &tsave))
			if (bsprio_entry(&nc[d], t, val, c, e)) {
				free(dirs);
				return -EINVAL;
			}
	}
	free(dirs);
	if (d == 1)
		memcpy(nc[1].bs, nc[0].bs, sizeof(nc[0].bs)), nc[1].nbs = nc[0].nbs;
	copy = strdup(val);
	if (!copy)
		return err_set(e, ENOMEM, "out of memory");
	memcpy(j->cmdprio, nc, sizeof(nc));
	free(j->src.cmdprio_bssplit);
	j->src.cmdprio_bssplit = copy;
	return 0;
}

/* An errno by fio's symbol (ENOSPC) or number, or -1. */
static int errno_of(const char *s)
{
	char *end;
	long v;

	if (*s >= '0' && *s <= '9') {
		v = strtol(s, &end, 10);
		return *end || v < 1 || v > 4095 ? -1 : (int)v;
	}
	for (int i = 1; i < 4096; i++) {
		const char *n = strerrorname_np(i);

		if (n && !strcmp(n, s))
			return i;
	}
	return -1;
}

/* ignore_error=READ_LIST,WRITE_LIST,VERIFY_LIST, each ':'-separated
 * (fio's); an empty list keeps the kind's default. */
int optio_ignore_error(struct job *j, const struct option_def *o, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	unsigned nr[3] = { 0 };
	int errs[3][JOB_IGNORE_MAX];
	char *copy, *p, *part;
	unsigned k = 0;

	(void)o;
	if (!val)
		return opt_fail(c, val, e, "expected errno lists, e.g. EAGAIN,ENOSPC:122");
	copy = strdup(val);
	if (!copy)
		return err_set(e, ENOMEM, "out of memory");
	for (p = copy; (part = strsep(&p, ",")) != NULL; k++) {
		char *tok;

		if (k == 3) {
			free(copy);
			return opt_fail(c, val, e, "at most three lists: read, write, verify");
		}
		while ((tok = strsep(&part, ":")) != NULL) {
			int v;

			if (!*tok)
				continue;
			v = errno_of(tok);
			if (v < 0) {
				int ret = opt_fail(c, val, e, "'%s' is no errno name or number", tok);

				free(copy);
				return ret;
			}
			if (nr[k] == JOB_IGNORE_MAX) {
				free(copy);
				return opt_fail(c, val, e, "more than %d errnos in one list",
						JOB_IGNORE_MAX);
			}
			errs[k][nr[k]++] = v;
		}
	}
	free(copy);
	copy = strdup(val);
	if (!copy)
		return err_set(e, ENOMEM, "out of memory");
	memcpy(j->ignore_err, errs, sizeof(errs));
	memcpy(j->ignore_nr, nr, sizeof(nr));
	free(j->src.ignore_error);
	j->src.ignore_error = copy;
	return 0;
}

int optio_fmt(const struct job *j, const struct option_def *o, char *buf, size_t len)
{
	if (o->parse == optio_zonemode) {
		snprintf(buf, len, "%s", job_zoned(j) ? "strided" : "none");
		return 1;
	}
	return -1;
}

/* Any per-request priority asked for, in either direction. */
static bool cmdprio_on(const struct job *j)
{
	for (unsigned d = 0; d < 2; d++)
		if (j->cmdprio[d].perc || j->cmdprio[d].nbs)
			return true;
	return false;
}

int optio_check(const struct job *j, const struct engine_ops *eng, struct err *e)
{
	struct workload_job wj;

	workloadcfg_resolve(&wj, j);
	if (j->zonemode == ZONE_NONE && j->zone_size)
		return err_set(e, EINVAL, "job '%s': zonemode=none and zonesize=%llu contradict "
			       "each other (as fio says)", j->name, (unsigned long long)j->zone_size);
	if (j->zonemode == ZONE_STRIDED && !j->zone_size)
		return err_set(e, EINVAL, "job '%s': zonemode=strided needs zonesize", j->name);
	if (job_zoned(j)) {
		if (job_rw_random(j->rw) && j->random_distribution != DIST_RANDOM)
			return err_set(e, EINVAL, "job '%s': zonemode=strided draws random offsets "
				       "uniformly within a zone; random_distribution is not "
				       "supported with it", j->name);
		if (j->read_iolog || j->loop)
			return err_set(e, EINVAL, "job '%s': zonemode=strided with %s: the requests "
				       "come from %s, not from zones", j->name,
				       j->read_iolog ? "read_iolog" : "loop",
				       j->read_iolog ? "the log" : "the loop's streams");
	}
	if (j->random_distribution == DIST_SEQUENCE && !job_rw_random(j->rw))
		return err_set(e, EINVAL, "job '%s': random_distribution=sequence places random "
			       "requests; rw is sequential", j->name);
	if (j->atomic && (eng->flags & (ENGINE_F_MAPPED | ENGINE_F_POOL | ENGINE_F_NO_TARGET)))
		return err_set(e, EINVAL, "job '%s': atomic=1 asks for RWF_ATOMIC writes, and "
			       "ioengine=%s issues none (%s)", j->name, eng->name,
			       (eng->flags & ENGINE_F_MAPPED) ? "stores into a mapping" :
			       (eng->flags & ENGINE_F_POOL) ? "its pool writes frames back on its own" :
							      "no I/O at all");
	if (content_wanted(&wj) && j->verify != VERIFY_NONE)
		return err_set(e, EINVAL, "job '%s': verify with dedupe_percentage or "
			       "buffer_compress_percentage: such blocks carry no header of "
			       "their own (a repeated block cannot name its offset)", j->name);
	if (j->dedupe_global && j->dedupe_pct && j->dedupe_mode != DEDUPE_WORKING_SET)
		return err_set(e, EINVAL, "job '%s': dedupe_global=1 shares a working set: it "
			       "needs dedupe_mode=working_set (as fio)", j->name);
	if (content_wanted(&wj) && (eng->flags & ENGINE_F_NO_TARGET))
		return err_set(e, EINVAL, "job '%s': dedupe_percentage and "
			       "buffer_compress_percentage shape written data; ioengine=%s "
			       "writes none", j->name, eng->name);
	if (j->continue_on_error != COE_NONE && j->continue_on_error != COE_VERIFY &&
	    ((eng->flags & ENGINE_F_POOL) || j->loop || j->offload))
		return err_set(e, EINVAL, "job '%s': continue_on_error with %s: its requests "
			       "fail the job at the first error", j->name,
			       (eng->flags & ENGINE_F_POOL) ? "a pool engine" : "loop=");
	if (cmdprio_on(j)) {
		if (strcmp(eng->name, "io_uring") && strcmp(eng->name, "libaio"))
			return err_set(e, EINVAL, "job '%s': cmdprio_percentage and cmdprio_bssplit "
				       "set a priority per request, which io_uring and libaio carry "
				       "(as fio's engine options); ioengine=%s: use prioclass and "
				       "prio for the whole job", j->name, eng->name);
		for (unsigned d = 0; d < 2; d++)
			if (j->cmdprio[d].perc && j->cmdprio[d].nbs)
				return err_set(e, EINVAL, "job '%s': cmdprio_percentage and "
					       "cmdprio_bssplit both set (fio refuses both too)", j->name);
		if (j->loop || j->offload)
			return err_set(e, EINVAL, "job '%s': per-request priorities with loop=: the "
				       "event loop's requests carry none", j->name);
	}
	return 0;
}

int optverify_pattern(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	struct pattern *p = malloc(sizeof(*p));
	char why[300];
	int ret;

	if (!p)
		return err_set(e, ENOMEM, "out of memory");
	ret = pattern_parse(val, p, why, sizeof(why));
	if (!ret)
		pattern_free(p);
	free(p);
	if (ret)
		return opt_fail(c, val, e, "%s (fio's pattern: 0xHEX, a decimal, \"text\", 'file' "
				"and %%o, in any order)", why);
	ret = set_str(j, o, val, c, e);
	if (!ret && o->off == offsetof(struct job, verify_pattern) && j->verify == VERIFY_NONE)
		j->verify = VERIFY_PATTERN;
	return ret;
}
