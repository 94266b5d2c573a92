/*
 * optshape.c - fio's workload-shape options: parsing with fio's rules
 * (options.c and parse.c of fio 3.33, read, not copied), printing back,
 * and what they need of each other. Semantics in optshape.h and the man
 * page; the generator that gives them effect is workload/gen.c, the pace
 * run/pace.h.
 */
#include "job/optshape.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/optset.h"
#include "job/optval.h"
#include "job/workloadcfg.h"
#include "workload/gen.h"

const char *const optshape_rw_seq_names[] = { "sequential", "identical", NULL };
const char *const optshape_rate_process_names[] = { "linear", "poisson", NULL };
const char *const optshape_generator_names[] = { "tausworthe", "lfsr", "tausworthe64", NULL };
const char *const optshape_submit_names[] = { "inline", "offload", NULL };

/* fio's defaults: FIO_DEF_PARETO; normal's deviation 0. */
#define PARETO_H_DEFAULT 0.2

/* The longest value kept per direction. */
#define PART_MAX 4096

/*
 * fio's per-direction split (str_split_parse): no comma, the value is
 * every direction's; "a,b[,c]": reads a, writes b (c, trims, dropped).
 * parts[d] NULL: not given for d. Returns -EINVAL on a value too long.
 */
static int split_dirs(const char *val, char parts[2][PART_MAX], bool given[2])
{
	const char *comma = strchr(val, ',');
	size_t n;

	if (strlen(val) >= PART_MAX)
		return -EINVAL;
	if (!comma) {
		strcpy(parts[0], val);
		strcpy(parts[1], val);
		given[0] = given[1] = *val != '\0';
		return 0;
	}
	n = (size_t)(comma - val);
	memcpy(parts[0], val, n);
	parts[0][n] = '\0';
	n = strcspn(comma + 1, ",");
	memcpy(parts[1], comma + 1, n);
	parts[1][n] = '\0';
	given[0] = *parts[0] != '\0';
	given[1] = *parts[1] != '\0';
	return 0;
}

/* The whole percentage after a '/' of bssplit or zoned (@s: what follows
 * it): 0 when nothing does, as in fio; -1 when it is no such number. */
static int share_of(const char *s, long *v)
{
	char *end;

	*v = 0;
	if (!*s)
		return 0;
	errno = 0;
	*v = strtol(s, &end, 10);
	return end == s || *end || errno || *v < 0 ? -1 : 0;
}

static int size_of(const struct option_ctx *c, const char *what, const char *s, uint64_t *v,
		   struct err *e)
{
	struct option_ctx sub = *c;

	sub.key = what;
	return num_parse(&sub, s, OPTVAL_SIZE, v, NULL, e);
}

/* ---- bssplit ---------------------------------------------------------- */

/* Sorted by share, ascending, as fio's qsort on perc (stable here, so
 * equal shares keep the order written). */
static void sort_split(struct job_bssplit *s, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		struct job_bssplit x = s[i];
		unsigned k = i;

		while (k && s[k - 1].perc > x.perc) {
			s[k] = s[k - 1];
			k--;
		}
		s[k] = x;
	}
}

/*
 * One direction's "bs/pct:bs/pct..." (fio's bssplit_ddir). Stricter than
 * fio 3.33 in three places, each a slip fio runs without a word: shares
 * written that add up to more than 100 % (fio refuses only when two or
 * more sizes lack a share, so 4k/60:8k/60 runs there with 8k drawn less
 * than written), an empty entry ("4k/50::8k/50") and a size of 0.
 */
static int bssplit_dir(struct job_dir *d, char *str, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	unsigned n = 0, perc = 0, missing = 0, written = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	char *tok, *rest = str;

	while ((tok = strsep(&rest, ":"))) {
		char *slash = strchr(tok, '/');
		unsigned p = UINT32_MAX;	/* fio's -1U: no share given */
		uint64_t bs;

		if (!*tok)
			return opt_fail(c, val, e, "an empty entry (between ':' or at an end): "
					"each is bs/pct, e.g. 4k/50:8k/50");
		if (n == JOB_BSSPLIT_MAX)
			return opt_fail(c, val, e, "at most %d sizes per direction (fio's limit)",
					JOB_BSSPLIT_MAX);
		if (slash) {
			long v;

			*slash = '\0';
			/* fio: "4k/" is a size without a share */
			if (share_of(slash + 1, &v))
				return opt_fail(c, val, e, "'%s' is not a share: bs/pct with pct "
						"a whole percentage, e.g. 4k/50:8k/50", slash + 1);
			written += v > 100 ? 101 : (unsigned)v;
			if (written > 100)
				return opt_fail(c, val, e, "the shares add up to more than 100%% "
						"(fio: bssplit percentages add to more than 100%%)");
			/* fio: 0 is "not given". */
			p = v ? (unsigned)v : UINT32_MAX;
		}
		if (size_of(c, "bssplit size", tok, &bs, e))
			return -EINVAL;
		if (bs == 0 || bs > (1ull << 30))
			return opt_fail(c, val, e, "'%s': a size of 1 to 1g", tok);
		d->split[n].bs = bs;
		d->split[n].perc = p;
		if (p == UINT32_MAX)
			missing++;
		else
			perc += p;
		lo = bs < lo ? bs : lo;
		hi = bs > hi ? bs : hi;
		n++;
	}
	if (missing) {
		if (missing == 1 && n == 1)
			perc = 100;
		for (unsigned i = 0; i < n; i++)
			if (d->split[i].perc == UINT32_MAX)
				d->split[i].perc = perc >= 100 ? 0 : (100 - perc) / missing;
	}
	d->nsplit = n;
	d->bs_min = lo;
	d->bs_max = hi;
	sort_split(d->split, n);
	return 0;
}

int optshape_bssplit(struct job *j, const struct option_def *o, const char *val,
		     const struct option_ctx *c, struct err *e)
{
	static char parts[2][PART_MAX];
	struct job_dir nd[2];
	bool given[2];

	if (!val || split_dirs(val, parts, given) || (!given[0] && !given[1]))
		return opt_fail(c, val, e, "expected bs/pct:bs/pct..., e.g. 4k/60:16k/40 "
				"(a second set after a comma is for writes)");
	memcpy(nd, j->dir, sizeof(nd));
	for (unsigned d = 0; d < 2; d++) {
		nd[d].nsplit = 0;
		if (given[d] && bssplit_dir(&nd[d], parts[d], val, c, e))
			return -EINVAL;
		if (!nd[d].nsplit && !j->src.bsrange)
			nd[d].bs_min = nd[d].bs_max = 0;
	}
	memcpy(j->dir, nd, sizeof(nd));
	return set_str(j, o, val, c, e);
}

/* ---- bs per direction ------------------------------------------------- */

/* fio's default block size, for a direction left empty (bs=,8k). */
#define BS_DEFAULT 4096

int optshape_bs(struct job *j, const struct option_def *o, const char *val,
		const struct option_ctx *c, struct err *e)
{
	uint64_t v[3] = { BS_DEFAULT, BS_DEFAULT, BS_DEFAULT };
	const char *p = val;
	unsigned n = 0;

	if (!val || !*val)
		return opt_fail(c, val, e, "needs a size (bs=4k, or bs=READS,WRITES,TRIMS)");
	for (; n < 3; n++) {
		size_t len = strcspn(p, ",");
		char part[PART_MAX];

		if (len >= sizeof(part))
			return opt_fail(c, val, e, "expected a size, or READS,WRITES,TRIMS");
		memcpy(part, p, len);
		part[len] = '\0';
		if (len && size_of(c, c->key ? c->key : "bs", part, &v[n], e))
			return -EINVAL;
		if (v[n] < (uint64_t)o->min)
			return opt_fail(c, val, e, "must be at least %lld", o->min);
		if (v[n] > (uint64_t)o->max)
			return opt_fail(c, val, e, "must be at most 1g");
		if (!p[len]) {
			/* not ended by a comma: the value holds for the rest */
			for (unsigned k = n + 1; k < 3; k++)
				v[k] = v[n];
			break;
		}
		p += len + 1;
		if (n == 2)
			return opt_fail(c, val, e, "at most three sizes: reads, writes, trims");
	}
	j->bs = v[0];
	j->bs_write = v[1] != v[0] ? v[1] : 0;
	j->bs_trim = v[2] != v[1] ? v[2] : 0;
	return 0;
}

void optshape_resolve(struct job *j)
{
	struct job_dir *w = &j->dir[JOB_DIR_WRITE];
	uint64_t v = job_trims(j) && j->bs_trim ? j->bs_trim : j->bs_write;

	if (v && !w->nsplit && !w->bs_min)
		w->bs_min = w->bs_max = v;
}

/* ---- bsrange, blockalign ---------------------------------------------- */

int optshape_bsrange(struct job *j, const struct option_def *o, const char *val,
		     const struct option_ctx *c, struct err *e)
{
	static char parts[2][PART_MAX];
	bool given[2];

	if (!val || split_dirs(val, parts, given) || (!given[0] && !given[1]))
		return opt_fail(c, val, e, "expected min-max, e.g. 1k-16k (a second range after "
				"a comma is for writes)");
	for (unsigned d = 0; d < 2; d++) {
		/* fio's separator is '-', or ':' where there is none (t0002) */
		char *dash = strchr(parts[d], '-') ? strchr(parts[d], '-') : strchr(parts[d], ':');
		uint64_t lo, hi;

		if (!given[d])
			continue;
		if (!dash)
			return opt_fail(c, val, e, "expected min-max, e.g. 1k-16k");
		*dash = '\0';
		if (size_of(c, "bsrange min", parts[d], &lo, e) ||
		    size_of(c, "bsrange max", dash + 1, &hi, e))
			return -EINVAL;
		if (lo > hi) {	/* fio swaps them */
			uint64_t t = lo;

			lo = hi;
			hi = t;
		}
		if (lo == 0 || hi > (1ull << 30))
			return opt_fail(c, val, e, "sizes must be 1 to 1g");
		/* bssplit wins over bsrange, as in fio (it sets the range). */
		if (!j->dir[d].nsplit) {
			j->dir[d].bs_min = lo;
			j->dir[d].bs_max = hi;
		}
	}
	return set_str(j, o, val, c, e);
}

/*
 * fio's per-direction number, "READ,WRITE" (either may be left out): each
 * part given parsed as a size, at most @max (else @over), into @v (0 for
 * a part not given). @expected: the message for a value of no such form.
 */
static int dir_values(const char *val, const struct option_ctx *c, const char *name, uint64_t max,
		      const char *expected, const char *over, uint64_t v[2], bool given[2],
		      struct err *e)
{
	static char parts[2][PART_MAX];

	if (!val || split_dirs(val, parts, given))
		return opt_fail(c, val, e, "%s", expected);
	for (unsigned d = 0; d < 2; d++) {
		v[d] = 0;
		if (!given[d])
			continue;
		if (size_of(c, name, parts[d], &v[d], e))
			return -EINVAL;
		if (v[d] > max)
			return opt_fail(c, val, e, "%s", over);
	}
	return 0;
}

int optshape_blockalign(struct job *j, const struct option_def *o, const char *val,
			const struct option_ctx *c, struct err *e)
{
	uint64_t v[2];
	bool given[2];

	if (dir_values(val, c, "blockalign", 1ull << 30,
		       "expected a size, e.g. 4k (a second after a comma is for writes)", "at most 1g",
		       v, given, e))
		return -EINVAL;
	for (unsigned d = 0; d < 2; d++)
		if (given[d])
			j->dir[d].ba = v[d];
	return set_str(j, o, val, c, e);
}

/* ---- percentage_random, rates ----------------------------------------- */

int optshape_perc_random(struct job *j, const struct option_def *o, const char *val,
			 const struct option_ctx *c, struct err *e)
{
	uint64_t v[2];
	bool given[2];

	if (dir_values(val, c, "percentage_random", 100,
		       "expected a percentage 0 to 100 (a second after a comma is for writes)",
		       "a percentage, 0 to 100", v, given, e))
		return -EINVAL;
	for (unsigned d = 0; d < 2; d++)
		if (given[d])
			j->dir[d].perc_random = (unsigned)v[d];
	return set_str(j, o, val, c, e);
}

/* rate, rate_iops, rate_min, rate_iops_min: which field o->off names. */
int optshape_rate(struct job *j, const struct option_def *o, const char *val,
		  const struct option_ctx *c, struct err *e)
{
	uint64_t v[2];
	bool given[2];

	if (dir_values(val, c, o->name, UINT64_MAX,
		       "expected a number per second, e.g. 1m or 2000 (a second after a comma is "
		       "for writes: rate=,500k paces writes only)", "", v, given, e))
		return -EINVAL;
	for (unsigned d = 0; d < 2; d++) {
		struct job_dir *dd = &j->dir[d];
		uint64_t *f;

		if (o->off == OPTSHAPE_OFF(src.rate))
			f = &dd->rate;
		else if (o->off == OPTSHAPE_OFF(src.rate_iops))
			f = &dd->rate_iops;
		else if (o->off == OPTSHAPE_OFF(src.rate_min))
			f = &dd->rate_min;
		else
			f = &dd->rate_iops_min;
		*f = v[d];
	}
	return set_str(j, o, val, c, e);
}

/* thinktime, thinktime_spin: fio's time with microseconds when bare. */
int optshape_usec(struct job *j, const struct option_def *o, const char *val,
		  const struct option_ctx *c, struct err *e)
{
	uint64_t *f = opt_field(j, o), v;
	const char *p = val;

	if (!val || !*val)
		return opt_fail(c, val, e, "expected a time, e.g. 100 (microseconds) or 2ms");
	while (isdigit((unsigned char)*p))
		p++;
	if (!*p) {
		if (size_of(c, o->name, val, &v, e))
			return -EINVAL;
		if (v > UINT64_MAX / 1000)
			return opt_fail(c, val, e, "too long");
		*f = v * 1000;
		return 0;
	}
	if (num_parse(c, val, OPTVAL_TIME, &v, NULL, e))
		return -EINVAL;
	*f = v;
	return 0;
}

/* continue_on_error: fio's names, and 0 / 1 for none / all. */
int optshape_coe(struct job *j, const struct option_def *o, const char *val,
		 const struct option_ctx *c, struct err *e)
{
	static const char *const names[] = { "none", "read", "write", "io", "verify", "all",
					     NULL };

	(void)o;
	if (val && !strcmp(val, "0"))
		val = "none";
	else if (!val || !strcmp(val, "1"))
		val = "all";
	for (int i = 0; names[i]; i++)
		if (!strcmp(val, names[i])) {
			j->continue_on_error = (enum coe_mode)i;
			return 0;
		}
	return opt_fail(c, val, e, "expected none, read, write, io, verify, all, 0 or 1");
}

/* ---- random_distribution ---------------------------------------------- */

/* One direction's zones, "acc/size:acc/size..." (fio's zone_split_ddir). */
static int zones_dir(struct job_dir *d, char *str, bool absolute, const char *val,
		     const struct option_ctx *c, struct err *e)
{
	unsigned n = 0, perc = 0, missing = 0, sperc = 0, smissing = 0;
	char *tok, *save = NULL;

	for (tok = strtok_r(str, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		char *slash = strchr(tok, '/'), *end;
		struct job_zone *z = &d->zones[n];
		long acc;

		if (n == JOB_ZONES_MAX)
			return opt_fail(c, val, e, "at most %d zones (fio's limit)", JOB_ZONES_MAX);
		if (slash)
			*slash = '\0';
		errno = 0;
		acc = strtol(tok, &end, 10);
		if (end == tok || *end || errno || acc < 0 || acc > 100)
			return opt_fail(c, val, e, "'%s' is not a share of accesses (0 to 100)", tok);
		z->access = (unsigned)acc;
		z->size = 0;
		z->size_pct = UINT32_MAX;
		if (slash && absolute) {
			if (size_of(c, "zoned_abs size", slash + 1, &z->size, e))
				return -EINVAL;
		} else if (slash) {
			long s;

			/* fio: "20/" is a zone without a size */
			if (share_of(slash + 1, &s))
				return opt_fail(c, val, e, "'%s' is not a share of the region", slash + 1);
			/* fio: above 100 is 100, 0 is "not given". */
			z->size_pct = s > 100 ? 100 : s ? (unsigned)s : UINT32_MAX;
		}
		perc += z->access;
		if (!absolute) {
			if (z->size_pct == UINT32_MAX)
				smissing++;
			else
				sperc += z->size_pct;
		}
		n++;
	}
	if (!n)
		return 0;
	(void)missing;
	if (perc > 100 || sperc > 100)
		return opt_fail(c, val, e, "the zones' percentages add up to more than 100%%");
	if (perc < 100)
		return opt_fail(c, val, e, "the shares of accesses add up to %u%%, not 100%%", perc);
	if (smissing) {
		if (smissing == 1 && n == 1)
			sperc = 100;
		for (unsigned i = 0; i < n; i++)
			if (d->zones[i].size_pct == UINT32_MAX)
				d->zones[i].size_pct = (100 - sperc) / smissing;
	}
	d->nzones = n;
	return 0;
}

static int parse_zoned(struct job *j, const char *spec, bool absolute, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	static char parts[2][PART_MAX];
	struct job_dir nd[2];
	bool given[2];

	if (split_dirs(spec, parts, given))
		return opt_fail(c, val, e, "too long");
	memcpy(nd, j->dir, sizeof(nd));
	for (unsigned d = 0; d < 2; d++) {
		nd[d].nzones = 0;
		if (given[d] && zones_dir(&nd[d], parts[d], absolute, val, c, e))
			return -EINVAL;
	}
	if (!nd[0].nzones && !nd[1].nzones)
		return opt_fail(c, val, e, "expected zones, e.g. %s:60/10:30/20:10/70 (accesses%%/%s)",
				absolute ? "zoned_abs" : "zoned", absolute ? "size" : "region%");
	memcpy(j->dir, nd, sizeof(nd));
	j->random_distribution = absolute ? DIST_ZONED_ABS : DIST_ZONED;
	return 0;
}

/* "NAME" or "NAME:number" with fio's default; no centre (",c"). */
static int dist_arg(const char *val, size_t n, double def, double *out,
		    const struct option_ctx *c, struct err *e)
{
	char *end;

	*out = def;
	if (!val[n])
		return 0;
	if (val[n] != ':')
		return 1;
	if (strchr(val + n + 1, ','))
		return opt_fail(c, val, e, "fio's centre argument (,C) is not supported");
	errno = 0;
	*out = strtod(val + n + 1, &end);
	if (end == val + n + 1 || *end || errno)
		return opt_fail(c, val, e, "'%s' is not a number", val + n + 1);
	return 0;
}

/* sequence:I,J,...: fio's fixed block indices, at most JOB_SEQ_MAX. */
static int parse_sequence(struct job *j, const char *val, const struct option_ctx *c,
			  struct err *e)
{
	const char *p = val + 8;
	unsigned n = 0;

	if (*p++ != ':' || !*p)
		return opt_fail(c, val, e, "expected block indices, e.g. sequence:2,0,1");
	while (*p) {
		char *end;
		unsigned long v;

		if (*p < '0' || *p > '9')
			return opt_fail(c, val, e, "'%s': a block index is a number >= 0", p);
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || v > UINT32_MAX || (*end && *end != ','))
			return opt_fail(c, val, e, "'%s': a block index is a number >= 0", p);
		if (n == JOB_SEQ_MAX)
			return opt_fail(c, val, e, "more than %d block indices (fio's limit)",
					JOB_SEQ_MAX);
		j->seq[n++] = (uint32_t)v;
		p = *end ? end + 1 : end;
	}
	j->nseq = n;
	j->random_distribution = DIST_SEQUENCE;
	return 0;
}

int optshape_dist(struct job *j, const char *val, const struct option_ctx *c, struct err *e)
{
	double v;
	int ret;

	if (!val)
		return 1;
	if (!strncmp(val, "zoned_abs:", 10))
		return parse_zoned(j, val + 10, true, val, c, e);
	if (!strncmp(val, "zoned:", 6))
		return parse_zoned(j, val + 6, false, val, c, e);
	if (!strcmp(val, "zoned") || !strcmp(val, "zoned_abs"))
		return opt_fail(c, val, e, "expected zones, e.g. zoned:60/10:30/20:10/70");
	if (!strncmp(val, "sequence", 8) && (!val[8] || val[8] == ':'))
		return parse_sequence(j, val, c, e);
	if (!strncmp(val, "pareto", 6)) {
		ret = dist_arg(val, 6, PARETO_H_DEFAULT, &v, c, e);
		if (ret)
			return ret < 0 ? ret : 1;
		if (!(v > 0 && v < 1))
			return opt_fail(c, val, e, "pareto:H needs 0 < H < 1 (as fio), e.g. pareto:0.2");
		j->random_distribution = DIST_PARETO;
		j->pareto_h = v;
		return 0;
	}
	if (!strncmp(val, "normal", 6) || !strncmp(val, "gauss", 5)) {
		size_t n = val[0] == 'n' ? 6 : 5;

		ret = dist_arg(val, n, 0.0, &v, c, e);
		if (ret)
			return ret < 0 ? ret : 1;
		if (!(v >= 0 && v < 100))
			return opt_fail(c, val, e, "normal:P needs 0 <= P < 100 (a deviation in %% of "
					"the region, as fio)");
		j->random_distribution = DIST_GAUSS;
		j->gauss_dev = v;
		return 0;
	}
	return 1;
}

/* rw=...:N: for random rw a new random offset every N requests (fio's
 * ddir_seq_nr), else N bytes skipped after each request (ddir_seq_add,
 * negative to step back). */
int optshape_rw_postfix(struct job *j, const char *val, const char *nr, const struct option_ctx *c,
			struct err *e)
{
	if (job_rw_random(j->rw)) {
		char *end;
		long v;

		errno = 0;
		v = strtol(nr, &end, 10);
		if (end == nr || *end || errno || v < 1 || v > INT32_MAX)
			return opt_fail(c, val, e, "rw=%s:N needs N >= 1: a new random offset every N "
					"requests", j->rw == RW_RANDREAD ? "randread" :
					j->rw == RW_RANDWRITE ? "randwrite" : "randrw");
		j->seq_nr = (unsigned)v;
		j->seq_add = 0;
		return 0;
	}
	{
		bool neg = *nr == '-';
		uint64_t v;

		if (size_of(c, "rw offset modifier", nr + neg, &v, e))
			return -EINVAL;
		if (v > INT64_MAX)
			return opt_fail(c, val, e, "too large");
		j->seq_add = neg ? -(int64_t)v : (int64_t)v;
		j->seq_nr = 1;
	}
	return 0;
}

/* ---- printing back ---------------------------------------------------- */

static size_t fmt_zones(const struct job_dir *d, bool absolute, char *buf, size_t len)
{
	size_t off = 0;

	for (unsigned i = 0; i < d->nzones && off < len; i++) {
		char sz[32];

		if (absolute)
			optval_fmt_size(sz, sizeof(sz), d->zones[i].size);
		else
			snprintf(sz, sizeof(sz), "%u", d->zones[i].size_pct);
		off += (size_t)snprintf(buf + off, len - off, "%s%u/%s", i ? ":" : "",
					d->zones[i].access, sz);
	}
	return off;
}

int optshape_fmt_dist(const struct job *j, char *buf, size_t len)
{
	bool absolute = j->random_distribution == DIST_ZONED_ABS;
	size_t off;

	switch (j->random_distribution) {
	case DIST_PARETO:
		snprintf(buf, len, "pareto:%g", j->pareto_h);
		return 1;
	case DIST_GAUSS:
		snprintf(buf, len, "normal:%g", j->gauss_dev);
		return 1;
	case DIST_SEQUENCE:
		off = (size_t)snprintf(buf, len, "sequence:");
		for (unsigned i = 0; i < j->nseq && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%u", i ? "," : "",
						j->seq[i]);
		return 1;
	case DIST_ZONED:
	case DIST_ZONED_ABS:
		off = (size_t)snprintf(buf, len, "%s:", absolute ? "zoned_abs" : "zoned");
		if (off < len)
			off += fmt_zones(&j->dir[0], absolute, buf + off, len - off);
		if (off < len && memcmp(&j->dir[0].zones, &j->dir[1].zones, sizeof(j->dir[0].zones))) {
			off += (size_t)snprintf(buf + off, len - off, ",");
			if (off < len)
				fmt_zones(&j->dir[1], absolute, buf + off, len - off);
		}
		return 1;
	default:
		return 0;
	}
}

int optshape_fmt(const struct job *j, const struct option_def *o, char *buf, size_t len)
{
	static const char *const coe[] = { "none", "read", "write", "io", "verify", "all" };

	if (o->parse == optshape_usec) {
		optval_fmt_time(buf, len, *(const uint64_t *)((const char *)j + o->off));
		return 1;
	}
	if (o->parse == optshape_bs) {
		char r[32], w[32], t[32];
		uint64_t wv = j->bs_write ? j->bs_write : j->bs;

		optval_fmt_size(r, sizeof(r), j->bs);
		optval_fmt_size(w, sizeof(w), wv);
		optval_fmt_size(t, sizeof(t), j->bs_trim ? j->bs_trim : wv);
		if (j->bs_trim)
			snprintf(buf, len, "%s,%s,%s", r, w, t);
		else if (j->bs_write)
			snprintf(buf, len, "%s,%s", r, w);
		else
			snprintf(buf, len, "%s", r);
		return 1;
	}
	if (o->parse == optshape_coe) {
		snprintf(buf, len, "%s", coe[j->continue_on_error]);
		return 1;
	}
	return -1;
}

/* ---- what the options need ------------------------------------------- */

int optshape_check_pool(const struct job *j, const int *line, struct err *e)
{
	(void)line;
	for (unsigned d = 0; d < 2; d++) {
		uint64_t ba = j->dir[d].ba ? j->dir[d].ba : job_bs_min(j, d);

		if ((d == JOB_DIR_READ && !job_reads(j)) || (d == JOB_DIR_WRITE && !job_writes(j)))
			continue;
		if (!job_rw_random(j->rw) || j->dir[d].perc_random < 100 || j->seq_nr > 1)
			return err_set(e, EINVAL, "job '%s': ioengine=%s serves a request from one "
				       "page of pool_page=%llu, and sequential requests of several "
				       "sizes (bssplit, bsrange) cross pages; use a random rw with "
				       "blockalign=%llu", j->name, j->ioengine,
				       (unsigned long long)j->pool_page,
				       (unsigned long long)j->pool_page);
		if (job_bs_max(j, d) > ba || j->pool_page % ba)
			return err_set(e, EINVAL, "job '%s': ioengine=%s serves a request from one "
				       "page of pool_page=%llu: random requests of up to %llu bytes "
				       "at multiples of blockalign=%llu may cross pages; give "
				       "blockalign a multiple of the largest size that divides "
				       "pool_page (e.g. blockalign=%llu)", j->name, j->ioengine,
				       (unsigned long long)j->pool_page,
				       (unsigned long long)job_bs_max(j, d), (unsigned long long)ba,
				       (unsigned long long)j->pool_page);
	}
	return 0;
}

int optshape_check(const struct job *j, const struct engine_ops *eng, const int *line,
		   struct err *e)
{
	struct workload_job wj;

	(void)line;
	workloadcfg_resolve(&wj, j);
	if (j->loop && (gen_job_shaped(&wj) || job_paced(j) || j->thinktime_ns))
		return err_set(e, EINVAL, "job '%s': loop=%u with fio's workload shapes or a "
			       "rate: the event loop's streams are plain scans and uniform "
			       "reads; run the shape with numjobs threads", j->name, j->loop);
	(void)eng;
	if (j->read_iolog && (job_paced(j) || j->thinktime_ns))
		return err_set(e, EINVAL, "job '%s': read_iolog with a rate or thinktime: a "
			       "replay keeps the log's own times (replay_time_scale, "
			       "replay_no_stall)", j->name);
	for (unsigned d = 0; d < 2; d++) {
		const struct job_dir *dd = &j->dir[d];
		const char *dn = d ? "writes" : "reads";

		if (dd->rate && dd->rate_iops)
			return err_set(e, EINVAL, "job '%s': rate and rate_iops both set for %s; "
				       "they are two ways to say one pace (fio refuses both too)",
				       j->name, dn);
		if ((dd->rate_min && dd->rate_iops_min))
			return err_set(e, EINVAL, "job '%s': rate_min and rate_iops_min both set for %s",
				       j->name, dn);
		if ((dd->rate && dd->rate_min > dd->rate) ||
		    (dd->rate_iops && dd->rate_iops_min > dd->rate_iops))
			return err_set(e, EINVAL, "job '%s': the minimum rate for %s is above its "
				       "rate: the job could only fail", j->name, dn);
	}
	if (j->thinktime_spin_ns > j->thinktime_ns && j->thinktime_ns)
		return err_set(e, EINVAL, "job '%s': thinktime_spin is longer than thinktime, of "
			       "which it is a part", j->name);
	return 0;
}
