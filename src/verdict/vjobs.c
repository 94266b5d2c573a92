/*
 * vjobs.c - faultline --verdict JOBFILE...: each job
 * of the user's files is a workload. Its options stay as written (rw and
 * the mix, bs or bssplit, the distribution, the rate, size, offsets,
 * threads, a read_iolog trace: whatever the job file says, including
 * options this file does not know), less what a verdict sets itself: the
 * engine and what belongs to one (VJOB_DROP below), the memory, the time
 * and the job's own logs. Each cell's job text is those lines, the
 * verdict's own (target, cold start, time, seed) and the engine's.
 *
 * The file is parsed twice: by jobfile.c, which validates it and resolves
 * each job (what it reads, how many threads, its mem_limit and
 * pool_size), and here, line by line, for the options as written, in
 * fio's order: a [global] section applies to the jobs after it.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/jobfile.h"
#include "job/optval.h"
#include "lib/fmtnum.h"
#include "verdict/vjobs.h"
#include "workload/iolog.h"

#define MIB (1024ull * 1024)
/* A pool page below this is not worth a pool's table entry per page. */
#define POOL_PAGE_MIN_VERDICT 4096
/* The blocks an O_DIRECT replay reads: a request of the trace becomes the
 * aligned blocks that hold it, as a database reading with O_DIRECT must
 * (4 KiB covers the logical block size of every device here). */
#define DIRECT_ALIGN 4096
/* The most logs a replay's streams may have (a capture's threads). */
#define VJOB_MAX_STREAMS 256

/* What the verdict sets for every cell, and so leaves out of a job's own
 * options (fio's aliases too). */
static const char *const drop[] = {
	"ioengine", "direct", "buffered", "iodepth", "iodepth_batch", "iodepth_batch_submit",
	"iodepth_batch_complete", "iodepth_batch_complete_min", "iodepth_batch_complete_max",
	"iodepth_low", "madvise", "fadvise", "fadvise_hint", "pool_size", "pool_page", "pool_io",
	"pool_prefetch", "pool_evict_batch", "mem_limit", "reserve_mem", "uncached", "prefetch",
	"offload", "offload_permits", "name", "stonewall", "wait_for_previous", "runtime",
	"timeout", "ramp_time", "time_based", "startdelay", "invalidate", "prewarm",
	"drop_caches", "write_bw_log", "write_iops_log", "write_lat_log", "write_iolog",
	"write_hist_log", "log_avg_msec", "per_job_logs", "log_offset", "thread",
	"registerfiles", "fixedbufs", "sqthread_poll", "hipri",
	/* A label only: streams that differ in it are still one program's. */
	"description",
};

static bool in(const char *key, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(key, list[i]))
			return true;
	return false;
}

#define IN(k, l) in((k), (l), sizeof(l) / sizeof((l)[0]))

/* A growing string. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static int sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->s, cap);

		if (!p)
			return -ENOMEM;
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

/* One section's options as written: "key=value" lines, and the few raw
 * values the verdict reads itself. */
struct sect {
	struct sbuf lines;
	char rate_iops[64], rate[64], bssplit[256], bsrange[64], read_iolog[256],
	     replay_no_stall[16], pool_page[32], randseed[32];
};

static void keep_raw(struct sect *s, const char *key, const char *val)
{
	static const struct { const char *key; size_t off, len; } raw[] = {
#define R(k, f) { k, offsetof(struct sect, f), sizeof(((struct sect *)0)->f) }
		R("rate_iops", rate_iops), R("rate", rate), R("bssplit", bssplit),
		R("bsrange", bsrange), R("blocksize_range", bsrange), R("read_iolog", read_iolog),
		R("replay_no_stall", replay_no_stall), R("pool_page", pool_page),
		R("randseed", randseed),
#undef R
	};

	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++)
		if (!strcasecmp(key, raw[i].key))
			snprintf((char *)s + raw[i].off, raw[i].len, "%s", val);
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* Add a "key=value" line of a job file to @s unless the verdict sets it. */
static int sect_add(struct sect *s, char *line)
{
	char *eq = strchr(line, '='), *key = line, *val = (char *)"1";
	char out[4096];
	int n;

	if (eq) {
		*eq = '\0';
		val = trim(eq + 1);
	}
	key = trim(key);
	if (IN(key, drop))
		return 0;
	keep_raw(s, key, val);
	/* Each cell names its trace itself (O_DIRECT's is aligned). */
	if (!strcasecmp(key, "read_iolog"))
		return 0;
	n = eq ? snprintf(out, sizeof(out), "%s=%s\n", key, val) : snprintf(out, sizeof(out), "%s\n", key);
	return sb_add(&s->lines, out, (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1);
}

/* The largest size in a bssplit or bsrange value ("4k/50:64k/50",
 * "4k-16k", "4k/10:8k/90,64k"), 0 when none parses. */
static uint64_t largest_size(const char *v)
{
	char buf[256], *save = NULL, *tok;
	uint64_t best = 0;

	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ":,-", &save); tok; tok = strtok_r(NULL, ":,-", &save)) {
		struct optval ov;
		char why[64], *slash = strchr(tok, '/');

		if (slash)
			*slash = '\0';
		if (*tok && !optval_parse(tok, OPTVAL_SIZE, false, &ov, why, sizeof(why)) && ov.v > best)
			best = ov.v;
	}
	return best;
}

static uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* The first number of a rate value, plus the second ("500,200": reads
 * and writes). */
static double rate_sum(const char *v)
{
	char *end;
	double a = strtod(v, &end), b = 0;

	if (*end == ',')
		b = strtod(end + 1, NULL);
	return a + b;
}

/* What the verdict needs of a replay's logs. */
struct trace_info {
	double ios;		/* requests its threads issue: reads, writes when it writes */
	uint64_t longest;	/* its longest read or write, bytes */
	bool timed;		/* every log has timestamps (version 3, blktrace) that move */
	char first[512];	/* the first file the logs name */
	char why[300];		/* a log that does not load, or a link to nothing */
};

/* @path, when it is a symbolic link to nothing, said in @why. */
static bool link_to_nothing(const char *path, char *why, size_t len)
{
	char to[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) || !S_ISLNK(st.st_mode) || !stat(path, &st))
		return false;
	n = readlink(path, to, sizeof(to) - 1);
	to[n > 0 ? n : 0] = '\0';
	snprintf(why, len, "its file %s is a symbolic link to %s, which does not exist", path, to);
	return true;
}

/* The requests of log @l a job @j replays (replay_skip and a read job's
 * leaving writes out count), and the microseconds they span. */
static double log_ios(const struct job *j, const struct iolog *l, bool writes, uint64_t *span,
		      uint64_t *longest)
{
	double n = 0;

	*span = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct iolog_entry *en = &l->ent[i];

		if (en->op != IOLOG_READ && en->op != IOLOG_WRITE)
			continue;
		if ((en->op == IOLOG_WRITE && !writes) || (j->replay_skip & IOLOG_SKIP(en->op)))
			continue;
		n++;
		if (en->len > *longest)
			*longest = en->len;
		if (l->version != 2 && en->t - l->t0 > *span)
			*span = en->t - l->t0;
	}
	return n;
}

/* The logs @logs ("a:b") as @threads threads replay them (thread N the
 * log N modulo their number). 0, or -errno with @ti->why. */
static int trace_info(const struct job *j, const char *logs, unsigned threads, bool writes,
		      struct trace_info *ti)
{
	char buf[sizeof(((struct verdict_wl *)0)->trace)], *save = NULL, *tok;
	double per[VJOB_MAX_STREAMS];
	unsigned n = 0;

	memset(ti, 0, sizeof(*ti));
	ti->timed = true;
	snprintf(buf, sizeof(buf), "%s", logs);
	for (tok = strtok_r(buf, ":", &save); tok && n < VJOB_MAX_STREAMS;
	     tok = strtok_r(NULL, ":", &save)) {
		struct iolog l = { 0 };
		struct err e = { 0 };
		uint64_t span;

		if (iolog_load(&l, tok, &e)) {
			snprintf(ti->why, sizeof(ti->why), "its trace: %s", e.msg);
			return -EINVAL;
		}
		per[n++] = log_ios(j, &l, writes, &span, &ti->longest);
		ti->timed &= l.version != 2 && span > 0;
		if (!ti->first[0] && l.nfiles)
			snprintf(ti->first, sizeof(ti->first), "%s", l.files[0]);
		for (unsigned f = 0; f < l.nfiles && !j->replay_redirect && !ti->why[0]; f++)
			link_to_nothing(l.files[f], ti->why, sizeof(ti->why));
		iolog_free(&l);
	}
	if (j->replay_redirect && !ti->why[0])
		link_to_nothing(j->replay_redirect, ti->why, sizeof(ti->why));
	for (unsigned t = 0; n && t < threads; t++)
		ti->ios += per[t % n];
	return ti->why[0] ? -ENOENT : 0;
}

/*
 * A timed trace's own pace over what a run of @bound_s seconds replays
 * of it: the requests due in the first min(its span, @bound_s) seconds
 * (replay_time_scale applied), over all @threads threads, per second.
 * A run that keeps up delivers that rate; 0 when it cannot be told.
 */
static double trace_pace(const struct job *j, const char *logs, unsigned threads, bool writes,
			 double bound_s)
{
	char buf[sizeof(((struct verdict_wl *)0)->trace)], *save = NULL, *tok;
	struct iolog *l = calloc(VJOB_MAX_STREAMS, sizeof(*l));
	double scale = j->replay_time_scale ? 100.0 / j->replay_time_scale : 1, win = 0, due = 0;
	uint64_t span = 0, longest = 0, sp;
	unsigned n = 0;

	if (!l)
		return 0;
	snprintf(buf, sizeof(buf), "%s", logs);
	for (tok = strtok_r(buf, ":", &save); tok && n < VJOB_MAX_STREAMS;
	     tok = strtok_r(NULL, ":", &save)) {
		struct err e = { 0 };

		if (iolog_load(&l[n], tok, &e))
			goto out;
		log_ios(j, &l[n], writes, &sp, &longest);
		if (sp > span)
			span = sp;
		n++;
	}
	win = fmin(span * scale / 1e6, bound_s);
	for (unsigned t = 0; n && win > 0 && t < threads; t++) {
		const struct iolog *x = &l[t % n];

		for (size_t i = 0; i < x->n; i++) {
			const struct iolog_entry *en = &x->ent[i];

			if ((en->op == IOLOG_READ || (en->op == IOLOG_WRITE && writes)) &&
			    !(j->replay_skip & IOLOG_SKIP(en->op)) && (en->t - x->t0) * scale / 1e6 <= win)
				due++;
		}
	}
out:
	for (unsigned i = 0; i < n; i++)
		iolog_free(&l[i]);
	free(l);
	return win > 0 ? due / win : 0;
}

/* @in as a log whose reads, writes and trims cover whole DIRECT_ALIGN
 * blocks, at @out: 0 or -errno with @e. */
static int align_trace(const char *in, const char *out, struct err *e)
{
	struct iolog l = { 0 };
	FILE *f;
	int ret = iolog_load(&l, in, e);
	bool v2 = l.version == 2;

	if (ret)
		return ret;
	f = fopen(out, "w");
	if (!f) {
		ret = err_set(e, errno, "verdict: %s: %s", out, strerror(errno));
		goto out;
	}
	fprintf(f, "fio version %d iolog\n", v2 ? 2 : 3);
	for (unsigned i = 0; i < l.nfiles; i++)
		fprintf(f, v2 ? "%s add\n" : "0 %s add\n", l.files[i]);
	for (size_t i = 0; i < l.n; i++) {
		const struct iolog_entry *en = &l.ent[i];
		uint64_t off = en->off, end = en->off + en->len;

		if (en->op == IOLOG_WAIT) {
			fprintf(f, "%s wait %llu 0\n", l.files[en->file], (unsigned long long)en->t);
			continue;
		}
		if (en->op == IOLOG_READ || en->op == IOLOG_WRITE || en->op == IOLOG_TRIM) {
			off = off / DIRECT_ALIGN * DIRECT_ALIGN;
			end = (end + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN;
		}
		if (!v2)
			fprintf(f, "%llu ", (unsigned long long)en->t);
		if (en->op == IOLOG_OPEN || en->op == IOLOG_CLOSE || en->op == IOLOG_SYNC ||
		    en->op == IOLOG_DATASYNC)
			fprintf(f, "%s %s\n", l.files[en->file], iolog_op_name(en->op));
		else
			fprintf(f, "%s %s %llu %llu\n", l.files[en->file], iolog_op_name(en->op),
				(unsigned long long)off, (unsigned long long)(end - off));
	}
	if (fclose(f))
		ret = err_set(e, errno, "verdict: %s: %s", out, strerror(errno));
out:
	iolog_free(&l);
	return ret;
}

int verdict_jobs_prepare(struct verdict_data *d, const char *jobdir, struct err *e)
{
	for (unsigned i = 0; i < d->nwl; i++) {
		struct verdict_wl *w = &d->wls[i];
		char buf[sizeof(w->trace)], *save = NULL, *tok;
		size_t at = 0;
		unsigned k = 0;

		if (!w->replay || w->skip[0])
			continue;
		if (w->jw.paced)
			w->jw.rate_iops = trace_pace(w->job, w->trace, w->threads, w->jw.writes,
						     d->plan.ramp_s + d->plan.runtime_s);
		/* A timed trace's copy (as fast as it goes) reads the blocks
		 * already written for the workload before it. */
		if (w->job_shared && i && !strcmp(d->wls[i - 1].trace, w->trace) &&
		    d->wls[i - 1].trace_direct[0]) {
			memcpy(w->trace_direct, d->wls[i - 1].trace_direct, sizeof(w->trace_direct));
			continue;
		}
		snprintf(buf, sizeof(buf), "%s", w->trace);
		for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save), k++) {
			char out[PATH_MAX];
			int ret;

			snprintf(out, sizeof(out), "%s/%s.%u.direct.iolog", jobdir, w->jw.key, k);
			ret = align_trace(tok, out, e);
			if (ret) {
				snprintf(w->skip, sizeof(w->skip), "its trace: %s", e->msg);
				break;
			}
			at += (size_t)snprintf(w->trace_direct + at, sizeof(w->trace_direct) - at, "%s%s",
					       k ? ":" : "", out);
		}
	}
	return 0;
}

static const char *rw_name(enum rw_mode rw)
{
	static const char *const names[] = { "read", "randread", "write", "randwrite", "rw", "randrw",
					"trim", "randtrim", "trimwrite", "randtrimwrite" };

	return (unsigned)rw < sizeof(names) / sizeof(names[0]) ? names[rw] : "?";
}

/* The workload a job makes. */
static int make_wl(bool write_probe, const char *file, struct job *j, struct sect *own,
		   const struct sect *glob, struct verdict_wl *w, bool vmcache, struct err *e)
{
	const struct sect *pick[2] = { glob, own };
	struct sect raw = { 0 };
	char bs[32], extra[96] = "";
	uint64_t maxbs = j->bs;
	double rate = 0;
	int ret;

	/* The raw values in force: the job's own over the globals'. */
	for (int k = 0; k < 2; k++) {
		const struct sect *s = pick[k];

#define TAKE(f) if (s->f[0]) snprintf(raw.f, sizeof(raw.f), "%s", s->f)
		TAKE(rate_iops); TAKE(rate); TAKE(bssplit); TAKE(bsrange); TAKE(read_iolog);
		TAKE(replay_no_stall); TAKE(pool_page); TAKE(randseed);
#undef TAKE
	}
	w->job = j;
	w->base = malloc(glob->lines.len + own->lines.len + 1);
	if (!w->base)
		return err_set(e, ENOMEM, "verdict: out of memory");
	memcpy(w->base, glob->lines.s ? glob->lines.s : "", glob->lines.len);
	memcpy(w->base + glob->lines.len, own->lines.s ? own->lines.s : "", own->lines.len + 1);
	if (!own->lines.s)
		w->base[glob->lines.len] = '\0';
	w->replay = raw.read_iolog[0] != '\0';
	/* A replay reads the files its trace names (or replay_redirect). */
	w->scratch = !j->filename && !w->replay;
	snprintf(w->trace, sizeof(w->trace), "%s", raw.read_iolog);
	w->mem_own = j->mem_limit || j->pool_size;
	w->mem = j->mem_limit ? j->mem_limit : j->pool_size;
	if (raw.bssplit[0] && largest_size(raw.bssplit) > maxbs)
		maxbs = largest_size(raw.bssplit);
	if (raw.bsrange[0] && largest_size(raw.bsrange) > maxbs)
		maxbs = largest_size(raw.bsrange);
	w->pool_page = raw.pool_page[0] && j->pool_page ? j->pool_page
			: pow2_at_least(maxbs > POOL_PAGE_MIN_VERDICT ? maxbs : POOL_PAGE_MIN_VERDICT);
	snprintf(w->randseed, sizeof(w->randseed), "%s", raw.randseed);

	/* The file read: the job's first, a replay's redirect or the first
	 * its trace names; "" for the scratch file. A replay's pool page
	 * holds its longest read. */
	if (j->filename) {
		snprintf(w->target, sizeof(w->target), "%s", j->filename);
		w->target[strcspn(w->target, ":")] = '\0';
	}
	w->pool_page_own = raw.pool_page[0] && j->pool_page;
	w->threads = j->numjobs;
	w->jw.kind = JW_JOB;
	w->jw.replay = w->replay;
	snprintf(w->jw.key, sizeof(w->jw.key), "%s", j->name);
	w->jw.writes = job_writes(j);
	w->jw.seq = !job_rw_random(j->rw) && !w->replay;
	w->jw.by = w->jw.seq && !w->jw.writes ? JB_MIBS : JB_IOPS;
	if (raw.rate_iops[0])
		rate = rate_sum(raw.rate_iops) * j->numjobs;
	else if (raw.rate[0] && j->bs)
		rate = rate_sum(raw.rate) / (double)j->bs * j->numjobs;
	if (rate > 0) {
		w->jw.by = JB_P99;
		w->jw.rate_iops = rate;
		snprintf(extra, sizeof(extra), ", rate %.0f IOPS", rate);
	}
	w->jw.engines = 1u << JE_MMAP_NORMAL | 1u << JE_MMAP_RANDOM | 1u << JE_BUFPOOL |
			1u << JE_URING_DIRECT | 1u << JE_URING_DEPTH;
	if (vmcache)
		w->jw.engines |= 1u << JE_VMCACHE;
	if (w->jw.writes)
		w->jw.engines |= 1u << JE_PSYNC;
	optval_fmt_size(bs, sizeof(bs), j->bs);
	ret = snprintf(w->jw.name, sizeof(w->jw.name), "job '%s' of %s (%s, %s%s, %u thread%s%s)",
		       j->name, file, rw_name(j->rw), raw.bssplit[0] ? "bssplit " : "bs ",
		       raw.bssplit[0] ? raw.bssplit : bs, j->numjobs, j->numjobs == 1 ? "" : "s", extra);
	(void)ret;
	if (w->jw.writes && j->filename && !write_probe)
		snprintf(w->skip, sizeof(w->skip), "it writes, and %s is the job's own file: a "
			 "verdict writes a file of yours only with --write-probe", j->filename);
	return 0;
}

static void sect_free(struct sect *s)
{
	free(s->lines.s);
	memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------ */
/* Replays: streams together, judged by what their logs can say */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/*
 * Whether @b, the job after @a's in one file, is another stream of the
 * same program: both replay one log in one thread with the same options
 * otherwise (a capture writes a job per traced thread), and @b does not
 * wait for @a (stonewall), so they ran together and replay together.
 */
static bool same_program(const struct verdict_wl *a, const struct verdict_wl *b)
{
	return a->replay && b->replay && !a->skip[0] && !b->skip[0] && a->job->numjobs == 1 &&
	       b->job->numjobs == 1 && !strchr(b->trace, ':') && !strchr(a->job->read_iolog, ':') &&
	       !b->job->stonewall && !b->job->wait_for && !strcmp(a->base, b->base) &&
	       strlen(a->trace) + strlen(b->trace) + 2 < sizeof(a->trace);
}

static void wl_free(struct verdict_wl *w)
{
	free(w->base);
	if (w->job && !w->job_shared)
		job_free(w->job);
	w->base = NULL;
	w->job = NULL;
}

/* A key no workload of @d has yet: @want, or @want-2, -3 ... */
static void unique_key(const struct verdict_data *d, const char *want, char *key, size_t len)
{
	for (unsigned n = 1;; n++) {
		bool taken = false;

		if (n == 1)
			snprintf(key, len, "%s", want);
		else
			snprintf(key, len, "%s-%u", want, n);
		for (unsigned i = 0; i < d->nwl && !taken; i++)
			taken = !strcmp(d->wls[i].jw.key, key);
		if (!taken)
			return;
	}
}

/* Join the streams after @d->wls[@i] into it; the file's name keys a
 * workload of several. */
static void join_streams(struct verdict_data *d, unsigned i, const char *path)
{
	struct verdict_wl *a = &d->wls[i];
	char key[sizeof(a->jw.key)], want[sizeof(a->jw.key)];

	while (i + 1 < d->nwl && same_program(a, &d->wls[i + 1])) {
		struct verdict_wl *b = &d->wls[i + 1];

		snprintf(a->trace + strlen(a->trace), sizeof(a->trace) - strlen(a->trace), ":%s", b->trace);
		a->threads++;
		wl_free(b);
		memmove(b, b + 1, (d->nwl - i - 2) * sizeof(*b));
		d->nwl--;
	}
	a->jw.streams = a->threads;
	if (a->threads == a->job->numjobs)
		return;		/* no other stream joined it: keyed by its job */
	snprintf(want, sizeof(want), "%s", base_name(path));
	if (strlen(want) > 4 && !strcmp(want + strlen(want) - 4, ".job"))
		want[strlen(want) - 4] = '\0';
	a->jw.key[0] = '\0';
	unique_key(d, want, key, sizeof(key));
	snprintf(a->jw.key, sizeof(a->jw.key), "%s", key);
}

static void replay_name(struct verdict_wl *w, const char *path, const char *how)
{
	if (w->threads != w->job->numjobs)
		snprintf(w->jw.name, sizeof(w->jw.name), "the %u streams of %s (replayed together, %s)",
			 w->threads, path, how);
	else
		snprintf(w->jw.name, sizeof(w->jw.name), "job '%s' of %s (a replay of %s, %u stream%s, %s)",
			 w->job->name, path, base_name(w->trace), w->threads, w->threads == 1 ? "" : "s", how);
}

/*
 * A replay's workload: judged by the time to replay all of it, each
 * stream at depth 1, when its logs have no time (fio iolog v2) or the job
 * says replay_no_stall=1; a timed trace is two workloads, the one at its
 * own pace (p99, and whether each engine keeps up; its pace is set once
 * the plan is, verdict_jobs_prepare) and a copy as fast as it goes.
 * 0 or -ENOMEM.
 */
static int replay_setup(struct verdict_data *d, unsigned i, const char *path)
{
	struct verdict_wl *w = &d->wls[i], *copy;
	struct trace_info ti;
	bool timed;

	if (trace_info(w->job, w->trace, w->threads, w->jw.writes, &ti) && !w->skip[0])
		snprintf(w->skip, sizeof(w->skip), "%s", ti.why);
	snprintf(w->target, sizeof(w->target), "%s",
		 w->job->replay_redirect ? w->job->replay_redirect : ti.first);
	if (!w->pool_page_own)
		w->pool_page = pow2_at_least(ti.longest > POOL_PAGE_MIN_VERDICT ? ti.longest
									 : POOL_PAGE_MIN_VERDICT);
	w->jw.replay = true;
	w->jw.seq = false;
	w->jw.trace_ios = ti.ios;
	w->jw.rate_iops = 0;
	w->jw.by = JB_TIME;
	w->fast = true;
	timed = ti.timed && !w->job->replay_no_stall;
	if (!timed) {
		replay_name(w, path, ti.timed ? "as fast as it goes: replay_no_stall=1"
				     : "as fast as it goes: an untimed log");
		return 0;
	}
	copy = realloc(d->wls, (d->nwl + 1) * sizeof(*d->wls));
	if (!copy)
		return -ENOMEM;
	d->wls = copy;
	w = &d->wls[i];
	memmove(w + 2, w + 1, (d->nwl - i - 1) * sizeof(*w));
	d->nwl++;
	copy = w + 1;
	*copy = *w;
	copy->base = strdup(w->base);
	if (!copy->base)
		return -ENOMEM;
	copy->job_shared = true;
	snprintf(copy->jw.key, sizeof(copy->jw.key), "%.58s-fast", w->jw.key);
	replay_name(copy, path, "as fast as it goes");
	/* At its own pace a depth cell adds nothing the pace lets it use. */
	w->fast = false;
	w->jw.by = JB_P99;
	w->jw.paced = true;
	w->jw.engines &= ~(1u << JE_URING_DEPTH);
	replay_name(w, path, "at its own pace");
	return 0;
}

/* The replays among @d->wls from @from on (one file's). */
static int replays_finish(struct verdict_data *d, unsigned from, const char *path, struct err *e)
{
	for (unsigned i = from; i < d->nwl; i++) {
		if (!d->wls[i].replay)
			continue;
		join_streams(d, i, path);
		if (replay_setup(d, i, path))
			return err_set(e, ENOMEM, "verdict: out of memory");
		if (d->wls[i].jw.paced)
			i++;	/* its copy, as fast as it goes */
	}
	return 0;
}

/* One file: its sections, and the jobs jobfile.c made of them. */
static int load_file(bool write_probe, const char *path, struct verdict_data *d,
		     bool vmcache, struct err *e)
{
	struct joblist jl = { 0 };
	struct sect glob = { 0 }, own = { 0 };
	FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0;
	unsigned k = 0;
	bool in_job = false, in_global = false;
	unsigned from = d->nwl;
	int ret;

	ret = jobfile_parse_file(&jl, path, e);
	if (ret)
		return ret;
	f = fopen(path, "r");
	if (!f) {
		ret = err_set(e, errno, "verdict: %s: %s", path, strerror(errno));
		goto out;
	}
	for (;;) {
		bool eof = getline(&line, &cap, f) < 0;
		char *l = eof ? NULL : trim(line);

		if (eof || *l == '[') {
			/* The end of a section: a job's makes a workload. */
			if (in_job) {
				struct verdict_wl *w;

				if (k >= jl.n) {
					ret = err_set(e, EINVAL, "verdict: %s: more sections than jobs", path);
					goto out;
				}
				w = realloc(d->wls, (d->nwl + 1) * sizeof(*d->wls));
				if (!w) {
					ret = err_set(e, ENOMEM, "verdict: out of memory");
					goto out;
				}
				d->wls = w;
				w = &d->wls[d->nwl++];
				memset(w, 0, sizeof(*w));
				ret = make_wl(write_probe, path, jl.jobs[k], &own, &glob, w, vmcache, e);
				if (ret)
					goto out;
				jl.jobs[k++] = NULL;	/* the workload owns it now */
				sect_free(&own);
			}
			if (eof)
				break;
			in_global = !strncasecmp(l, "[global]", 8);
			in_job = !in_global;
			continue;
		}
		if (!*l || *l == ';' || *l == '#' || (!in_job && !in_global))
			continue;
		ret = sect_add(in_job ? &own : &glob, l);
		if (ret) {
			err_set(e, -ret, "verdict: out of memory");
			goto out;
		}
	}
	if (k != jl.n)
		ret = err_set(e, EINVAL, "verdict: %s: %u job sections, %u jobs", path, k, jl.n);
	else
		ret = replays_finish(d, from, path, e);
out:
	if (f)
		fclose(f);
	free(line);
	sect_free(&glob);
	sect_free(&own);
	joblist_free(&jl);
	return ret;
}

int verdict_jobs_load(char *const *files, unsigned n, bool write_probe, struct verdict_data *d,
		      bool vmcache, struct err *e)
{
	for (unsigned i = 0; i < n; i++) {
		int ret = load_file(write_probe, files[i], d, vmcache, e);

		if (ret)
			return ret;
	}
	if (!d->nwl)
		return err_set(e, EINVAL, "verdict: %s has no job", n ? files[0] : "(no file)");
	return 0;
}

/* ------------------------------------------------------------------ */

size_t verdict_jobs_text_len(const struct verdict_wl *w)
{
	return strlen(w->base) + strlen(w->trace) + strlen(w->trace_direct) + 2048;
}

void verdict_jobs_text(const struct verdict_plan *p, const struct verdict_wl *w, enum judge_engine en,
		       unsigned round, const char *name, char *buf, size_t len)
{
	const struct job *j = w->job;
	unsigned long long mmib = w->mem / MIB;
	uint64_t frames = w->pool_page ? w->mem / w->pool_page : 0;
	size_t at = 0;

	fmt_append(buf, len, &at, "; faultline --verdict: %s, %s, round %u\n", w->jw.name,
		   judge_engine_name(en), round + 1);
	fmt_append(buf, len, &at, "[%s]\n%s", name, w->base);
	if (w->scratch)
		fmt_append(buf, len, &at, "filename=%s\n", p->target);
	if (w->replay)
		fmt_append(buf, len, &at, "read_iolog=%s\n",
			   (en == JE_URING_DIRECT || en == JE_URING_DEPTH) && w->trace_direct[0] ? w->trace_direct
			   : w->trace);
	/* A replay's streams, a thread each, as the program's threads ran. */
	if (w->threads != j->numjobs)
		fmt_append(buf, len, &at, "numjobs=%u\n", w->threads);
	if (w->fast)
		fmt_append(buf, len, &at, "replay_no_stall=1\n");
	fmt_append(buf, len, &at, "invalidate=1\n");
	/* Where the time went is evidence (judge.c). */
	fmt_append(buf, len, &at, "delayacct=1\n");
	/* A trace runs to its end (the runtime a bound); anything else for
	 * the plan's time. */
	if (w->replay)
		fmt_append(buf, len, &at, "runtime=%us\n", p->ramp_s + p->runtime_s);
	else
		fmt_append(buf, len, &at, "time_based\nramp_time=%us\nruntime=%us\n", p->ramp_s, p->runtime_s);
	if (!w->randseed[0])
		fmt_append(buf, len, &at, "randseed=%u\n", 4242 + round);
	switch (en) {
	case JE_MMAP_NORMAL:
	case JE_MMAP_RANDOM:
	case JE_PSYNC:
		if (en == JE_PSYNC)
			fmt_append(buf, len, &at, "ioengine=psync\n");
		else
			fmt_append(buf, len, &at, "ioengine=mmap\nmadvise=%s\n",
				   en == JE_MMAP_NORMAL ? "normal" : "random");
		if (p->cgroup)
			fmt_append(buf, len, &at, "mem_limit=%llum\n", mmib);
		else
			fmt_append(buf, len, &at, "reserve_mem=%llum\n",
				   (unsigned long long)((p->reserve + p->mem - w->mem) / MIB));
		break;
	case JE_BUFPOOL:
	case JE_VMCACHE:
		fmt_append(buf, len, &at, "ioengine=%s\npool_size=%llum\npool_page=%llu\n",
			   en == JE_BUFPOOL ? "bufpool" : "vmcache", mmib, (unsigned long long)w->pool_page);
		/* A sequential read job's pool reads ahead what the kernel would
		 * for mmap: the device's read-ahead, at most half the pool. */
		if (en == JE_BUFPOOL && w->jw.seq && !w->jw.writes && p->ra_bytes && frames >= 2 * j->numjobs) {
			uint64_t pf = p->ra_bytes / w->pool_page;

			if (pf > frames / 2 / j->numjobs)
				pf = frames / 2 / j->numjobs;
			fmt_append(buf, len, &at, "pool_prefetch=%llu\n", (unsigned long long)(pf ? pf : 1));
		}
		break;
	case JE_URING_DIRECT:
		fmt_append(buf, len, &at, "ioengine=io_uring\ndirect=1\niodepth=1\n");
		break;
	case JE_URING_DEPTH:
		/* The probed depth in all, the job's threads as written. */
		fmt_append(buf, len, &at, "ioengine=io_uring\ndirect=1\niodepth=%u\n",
			   (p->depth + w->threads - 1) / w->threads);
		break;
	default:
		break;
	}
}

void verdict_jobs_free(struct verdict_data *d)
{
	for (unsigned i = 0; i < d->nwl; i++)
		wl_free(&d->wls[i]);
	free(d->wls);
	d->wls = NULL;
	d->nwl = 0;
}
