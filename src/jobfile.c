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
#include "jobfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockdata.h"
#include "engine.h"
#include "options.h"

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

/* Move @from's jobs to the end of @to. */
static int joblist_splice(struct joblist *to, struct joblist *from)
{
	struct job **n = realloc(to->jobs, (to->n + from->n) * sizeof(*n));

	if (!n && to->n + from->n)
		return -ENOMEM;
	to->jobs = n;
	memcpy(to->jobs + to->n, from->jobs, from->n * sizeof(*n));
	to->n += from->n;
	free(from->jobs);
	from->jobs = NULL;
	from->n = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* validation */

/* Where option @name of @j was set: its line, else the job's header. */
static const char *opt_where(const struct job *j, const int *line, const char *name,
			     char *buf, size_t len)
{
	const struct option_def *o = option_find(name);
	int at = 0;

	/* buffered and direct share a field: the later line wins. */
	for (size_t i = 0; line && o && i < option_count; i++)
		if (option_table[i].off == o->off && line[i] > at)
			at = line[i];
	snprintf(buf, len, "%s:%d%s", j->src_file, at ? at : j->src_line,
		 at ? "" : " (default)");
	return buf;
}

/* Whether option @name (or an entry sharing its field: buffered for
 * direct) was set in this section or the [global] before it. */
static bool opt_given(const int *line, const char *name)
{
	const struct option_def *o = option_find(name);

	for (size_t i = 0; line && o && i < option_count; i++)
		if (option_table[i].off == o->off && line[i])
			return true;
	return false;
}

static void warnf(void (*warn)(const char *), const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warnf(void (*warn)(const char *), const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	if (!warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warn(msg);
}

/* Bounds the table enforces on parsing, for jobs built by hand. */
static int check_bounds(const struct job *j, const int *line, struct err *e)
{
	char w[300];

	if (!j->bs)
		return err_set(e, EINVAL, "bs=0 at %s: must be at least 1",
			       opt_where(j, line, "bs", w, sizeof(w)));
	if (!j->iodepth || j->iodepth > 4096)
		return err_set(e, EINVAL, "iodepth=%u at %s: must be 1 to 4096", j->iodepth,
			       opt_where(j, line, "iodepth", w, sizeof(w)));
	if (!j->numjobs)
		return err_set(e, EINVAL, "numjobs=0 at %s: must be at least 1",
			       opt_where(j, line, "numjobs", w, sizeof(w)));
	if (!j->nrfiles)
		return err_set(e, EINVAL, "nrfiles=0 at %s: must be at least 1",
			       opt_where(j, line, "nrfiles", w, sizeof(w)));
	if (!j->scan_chunk)
		return err_set(e, EINVAL, "scan_chunk=0 at %s: must be at least 1",
			       opt_where(j, line, "scan_chunk", w, sizeof(w)));
	if (j->random_distribution == DIST_ZIPF && !(j->zipf_theta > 0))
		return err_set(e, EINVAL, "random_distribution=zipf:%g at %s: theta must be > 0",
			       j->zipf_theta, opt_where(j, line, "random_distribution", w, sizeof(w)));
	return 0;
}

/* Scratch files are made by faultline, so it must know their size. */
static int check_target(const struct job *j, const struct engine_ops *eng, const int *line,
			struct err *e)
{
	char w[300];

	if (j->filename || (eng->flags & ENGINE_F_NO_TARGET))
		return 0;
	if (j->size_pct)
		return err_set(e, EINVAL, "size=%u%% at %s: a percentage needs filename= "
			       "(scratch files need a size such as size=1g)", j->size_pct,
			       opt_where(j, line, "size", w, sizeof(w)));
	if (!j->size && !j->filesize)
		return err_set(e, EINVAL, "job '%s' at %s:%d has no filename and no size: "
			       "scratch files need size= (or filename= for an existing file "
			       "or device)", j->name, j->src_file, j->src_line);
	if (!j->filesize && j->size / j->nrfiles == 0)
		return err_set(e, EINVAL, "size=%llu at %s split over nrfiles=%u leaves "
			       "empty files", (unsigned long long)j->size,
			       opt_where(j, line, "size", w, sizeof(w)), j->nrfiles);
	return 0;
}

/* Targets named in filename= ("a:b:c" is 3). */
static unsigned filename_count(const char *f)
{
	unsigned n = 1;

	for (; *f; f++)
		n += *f == ':';
	return n;
}

/* Most request slots a loop may hold: the engines' iodepth bound. */
#define LOOP_SLOTS_MAX 4096

/* loop, offload and prefetch (SPEC 9): what each needs of the others. */
static int check_concurrency(const struct job *j, const struct engine_ops *eng,
			     const int *line, struct err *e)
{
	char w[300], w2[300];

	if (j->loop) {
		unsigned nt = j->filename ? filename_count(j->filename) : j->nrfiles;

		if (j->numjobs != 1)
			return err_set(e, EINVAL, "loop=%u at %s needs numjobs=1 (numjobs=%u at %s): one "
				       "thread drives the streams; numjobs=N is the N-threads model",
				       j->loop, opt_where(j, line, "loop", w, sizeof(w)), j->numjobs,
				       opt_where(j, line, "numjobs", w2, sizeof(w2)));
		if (!(eng->flags & ENGINE_F_NO_TARGET) && nt != 1 && nt != j->loop)
			return err_set(e, EINVAL, "loop=%u at %s with %u %s: each stream reads its own "
				       "file, so give %u files, or one to cut into %u slices",
				       j->loop, opt_where(j, line, "loop", w, sizeof(w)), nt,
				       j->filename ? "files in filename=" : "scratch files (nrfiles)",
				       j->loop, j->loop);
		if ((eng->flags & ENGINE_F_ASYNC) && (uint64_t)j->loop * j->iodepth > LOOP_SLOTS_MAX)
			return err_set(e, EINVAL, "loop=%u at %s with iodepth=%u: %llu requests in flight, "
				       "at most %u", j->loop, opt_where(j, line, "loop", w, sizeof(w)),
				       j->iodepth, (unsigned long long)j->loop * j->iodepth,
				       LOOP_SLOTS_MAX);
	}
	if (j->offload && eng->release)
		return err_set(e, EINVAL, "offload=%u at %s contradicts ioengine=%s at %s: %s "
			       "lends the thread that queued a request its memory until that thread "
			       "has consumed it, and offload's helpers queue what the loop consumes",
			       j->offload, opt_where(j, line, "offload", w, sizeof(w)), eng->name,
			       opt_where(j, line, "ioengine", w2, sizeof(w2)), eng->name);
	if (j->offload) {
		if (!j->loop)
			return err_set(e, EINVAL, "offload=%u at %s needs loop=N: helpers run the "
				       "requests of a loop's streams", j->offload,
				       opt_where(j, line, "offload", w, sizeof(w)));
		if (eng->flags & ENGINE_F_ASYNC)
			return err_set(e, EINVAL, "offload=%u at %s contradicts ioengine=%s at %s: %s "
				       "is already asynchronous; offload hands psync, mmap or null "
				       "requests to helper threads", j->offload,
				       opt_where(j, line, "offload", w, sizeof(w)), eng->name,
				       opt_where(j, line, "ioengine", w2, sizeof(w2)), eng->name);
	}
	if (j->offload_permits && !j->offload)
		return err_set(e, EINVAL, "offload_permits=%u at %s needs offload=K (the helpers "
			       "the permits are for)", j->offload_permits,
			       opt_where(j, line, "offload_permits", w, sizeof(w)));
	if (j->offload_permits > j->offload)
		return err_set(e, EINVAL, "offload_permits=%u at %s exceeds offload=%u at %s: "
			       "at most one request runs per helper", j->offload_permits,
			       opt_where(j, line, "offload_permits", w, sizeof(w)), j->offload,
			       opt_where(j, line, "offload", w2, sizeof(w2)));
	if (j->prefetch != PREFETCH_NONE) {
		if (!(eng->flags & ENGINE_F_MAPPED))
			return err_set(e, EINVAL, "prefetch at %s contradicts ioengine=%s at %s: "
				       "prefetch keeps a mapping's pages ahead of the reader "
				       "(ioengine=mmap); for read(2) the kernel's readahead does it",
				       opt_where(j, line, "prefetch", w, sizeof(w)), eng->name,
				       opt_where(j, line, "ioengine", w2, sizeof(w2)));
		if (j->rw != RW_READ)
			return err_set(e, EINVAL, "prefetch at %s needs rw=read (at %s): it reads "
				       "ahead of sequential streams; random reads have no ahead",
				       opt_where(j, line, "prefetch", w, sizeof(w)),
				       opt_where(j, line, "rw", w2, sizeof(w2)));
	}
	return 0;
}

/* Each thread of a pool holds at most a page it reads and a frame it
 * loads another page into; with fewer frames than that for every
 * thread, threads would wait for each other's frames. */
#define POOL_PAGES_PER_THREAD 2

/* A power of two at least @n (the pool_page to suggest). */
static uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* ioengine=bufpool: its pool and what it asks of the requests. */
static int check_pool(const struct job *j, const struct engine_ops *eng, const int *line,
		      struct err *e)
{
	char w[300], w2[300];
	uint64_t frames = j->pool_page ? j->pool_size / j->pool_page : 0;
	uint64_t need = (uint64_t)POOL_PAGES_PER_THREAD * j->numjobs;

	if (!(eng->flags & ENGINE_F_POOL))
		return 0;
	if (!j->pool_size)
		return err_set(e, EINVAL, "ioengine=%s at %s needs pool_size= (the pool's memory, "
			       "e.g. pool_size=512m)", eng->name,
			       opt_where(j, line, "ioengine", w, sizeof(w)));
	if (!j->pool_page || (j->pool_page & (j->pool_page - 1)))
		return err_set(e, EINVAL, "pool_page=%llu at %s: must be a power of two (512, "
			       "4k, 8k, 16k, ...)", (unsigned long long)j->pool_page,
			       opt_where(j, line, "pool_page", w, sizeof(w)));
	if (frames < need)
		return err_set(e, EINVAL, "pool_size=%llu at %s holds %llu page%s of "
			       "pool_page=%llu; numjobs=%u threads need at least %llu (%u each: "
			       "a page it reads and one it loads), pool_size=%llu",
			       (unsigned long long)j->pool_size,
			       opt_where(j, line, "pool_size", w, sizeof(w)),
			       (unsigned long long)frames, frames == 1 ? "" : "s",
			       (unsigned long long)j->pool_page,
			       j->numjobs, (unsigned long long)need, POOL_PAGES_PER_THREAD,
			       (unsigned long long)(need * j->pool_page));
	if (j->bs > j->pool_page || j->pool_page % j->bs)
		return err_set(e, EINVAL, "bs=%llu at %s does not divide pool_page=%llu at %s: "
			       "bufpool serves a request in place from one frame (as mmap does); "
			       "use a bs that divides pool_page, or pool_page=%llu",
			       (unsigned long long)j->bs, opt_where(j, line, "bs", w, sizeof(w)),
			       (unsigned long long)j->pool_page,
			       opt_where(j, line, "pool_page", w2, sizeof(w2)),
			       (unsigned long long)pow2_at_least(j->bs));
	if (j->offset % j->pool_page)
		return err_set(e, EINVAL, "offset=%llu at %s is not a multiple of pool_page=%llu "
			       "at %s: the pool's pages start at multiples of pool_page in the "
			       "file, and so must the region", (unsigned long long)j->offset,
			       opt_where(j, line, "offset", w, sizeof(w)),
			       (unsigned long long)j->pool_page,
			       opt_where(j, line, "pool_page", w2, sizeof(w2)));
	if (j->mem_limit)
		return err_set(e, EINVAL, "mem_limit at %s contradicts ioengine=%s at %s: the "
			       "pool reads with O_DIRECT and its memory is pool_size; to compare "
			       "at equal memory, give mmap mem_limit=M and bufpool pool_size=M",
			       opt_where(j, line, "mem_limit", w, sizeof(w)), eng->name,
			       opt_where(j, line, "ioengine", w2, sizeof(w2)));
	if (j->sync != SYNC_NONE && job_writes(j))
		return err_set(e, EINVAL, "sync at %s contradicts ioengine=%s at %s: a write goes "
			       "into the pool, and O_DSYNC would only make its later write-back "
			       "synchronous; use fsync=1 (or fdatasync=1) for a flush after every write",
			       opt_where(j, line, "sync", w, sizeof(w)), eng->name,
			       opt_where(j, line, "ioengine", w2, sizeof(w2)));
	return 0;
}

/* Writes and durability (SPEC 10): what each option needs of the others. */
static int check_writes(const struct job *j, const struct engine_ops *eng, const int *line,
			void (*warn)(const char *), struct err *e)
{
	static const char *const rw_names[] = { "read", "randread", "write", "randwrite", "rw",
						"randrw" };
	const char *rw = rw_names[j->rw];
	char w[300], w2[300];

	if (!job_writes(j)) {
		if (j->verify != VERIFY_NONE)
			return err_set(e, EINVAL, "verify=crc32c at %s checks the blocks a job wrote, "
				       "and rw=%s at %s writes none (faultline --verify JOBFILE checks "
				       "what an earlier write job left)",
				       opt_where(j, line, "verify", w, sizeof(w)), rw,
				       opt_where(j, line, "rw", w2, sizeof(w2)));
		if (job_flushes(j) || j->sync != SYNC_NONE)
			warnf(warn, "job '%s' at %s:%d reads only (rw=%s): fsync, fdatasync, "
			      "sync_interval, end_fsync and sync have no effect", j->name,
			      j->src_file, j->src_line, rw);
		return 0;
	}
	if (j->bs % BLOCKDATA_SECTOR)
		return err_set(e, EINVAL, "bs=%llu at %s: a write job's bs must be a multiple of %u "
			       "(every written block carries a header and a stamp per sector)",
			       (unsigned long long)j->bs, opt_where(j, line, "bs", w, sizeof(w)),
			       BLOCKDATA_SECTOR);
	if (j->fsync_every && j->fdatasync_every)
		return err_set(e, EINVAL, "fsync=%u at %s and fdatasync=%u at %s: choose one flush "
			       "(fdatasync leaves the inode's timestamps out)", j->fsync_every,
			       opt_where(j, line, "fsync", w, sizeof(w)), j->fdatasync_every,
			       opt_where(j, line, "fdatasync", w2, sizeof(w2)));
	if (j->sync != SYNC_NONE && (eng->flags & ENGINE_F_MAPPED))
		return err_set(e, EINVAL, "sync at %s contradicts ioengine=%s at %s: stores into a "
			       "mapping have no O_DSYNC (the kernel writes dirty pages back when it "
			       "chooses); use fsync=1 for an msync after every write",
			       opt_where(j, line, "sync", w, sizeof(w)), eng->name,
			       opt_where(j, line, "ioengine", w2, sizeof(w2)));
	if (j->verify != VERIFY_NONE && (eng->flags & ENGINE_F_NO_TARGET))
		return err_set(e, EINVAL, "verify=crc32c at %s contradicts ioengine=%s at %s: it "
			       "writes nothing that could be read back",
			       opt_where(j, line, "verify", w, sizeof(w)), eng->name,
			       opt_where(j, line, "ioengine", w2, sizeof(w2)));
	if (j->loop)
		return err_set(e, EINVAL, "loop=%u at %s with rw=%s at %s: the event loop reads "
			       "only; run writes with numjobs threads, or an asynchronous engine "
			       "with iodepth", j->loop, opt_where(j, line, "loop", w, sizeof(w)), rw,
			       opt_where(j, line, "rw", w2, sizeof(w2)));
	return 0;
}

static void check_warnings(const struct job *j, const struct engine_ops *eng,
			   const int *line, void (*warn)(const char *))
{
	char w[300];
	static const char *const pool_opts[] = { "pool_page", "pool_io" };

	if (j->iodepth > 1 && !(eng->flags & ENGINE_F_ASYNC))
		warnf(warn, "iodepth=%u at %s has no effect with ioengine=%s, a synchronous "
		      "engine: one request in flight per thread (as fio)", j->iodepth,
		      opt_where(j, line, "iodepth", w, sizeof(w)), eng->name);
	if (j->iodepth_batch != IODEPTH_BATCH_AUTO && !(eng->flags & ENGINE_F_ASYNC))
		warnf(warn, "iodepth_batch_submit=%u at %s has no effect with ioengine=%s, a "
		      "synchronous engine", j->iodepth_batch,
		      opt_where(j, line, "iodepth_batch_submit", w, sizeof(w)), eng->name);
	if (j->random_distribution == DIST_ZIPF && !job_rw_random(j->rw))
		warnf(warn, "random_distribution=zipf:%g at %s has no effect with sequential "
		      "rw=read, write or rw", j->zipf_theta,
		      opt_where(j, line, "random_distribution", w, sizeof(w)));
	if (j->time_based && !j->runtime_ns)
		warnf(warn, "time_based at %s without runtime: job '%s' runs until interrupted",
		      opt_where(j, line, "time_based", w, sizeof(w)), j->name);
	if (j->filename && j->nrfiles > 1)
		warnf(warn, "nrfiles=%u at %s has no effect with filename= (the targets are "
		      "the files named)", j->nrfiles, opt_where(j, line, "nrfiles", w, sizeof(w)));
	if (!(eng->flags & ENGINE_F_POOL)) {
		if (j->pool_size)
			warnf(warn, "pool_size at %s has no effect with ioengine=%s: it is bufpool's "
			      "memory (mem_limit limits a job's page cache)",
			      opt_where(j, line, "pool_size", w, sizeof(w)), eng->name);
		for (size_t i = 0; i < sizeof(pool_opts) / sizeof(pool_opts[0]); i++)
			if (opt_given(line, pool_opts[i]))
				warnf(warn, "%s at %s has no effect with ioengine=%s (it is "
				      "bufpool's)", pool_opts[i],
				      opt_where(j, line, pool_opts[i], w, sizeof(w)), eng->name);
	}
}

static int check_job(const struct job *j, const int *line, void (*warn)(const char *),
		     struct err *e)
{
	const struct engine_ops *eng = engine_find(j->ioengine);
	char w[300], w2[300];
	int ret;

	if (!eng)
		return err_set(e, EINVAL, "ioengine=%s at %s: unknown engine (see "
			       "--cmdhelp=ioengine)", j->ioengine,
			       opt_where(j, line, "ioengine", w, sizeof(w)));
	ret = check_bounds(j, line, e);
	if (ret)
		return ret;
	if (j->direct && (eng->flags & ENGINE_F_NO_DIRECT))
		return err_set(e, EINVAL, "direct=1 at %s contradicts ioengine=%s at %s: "
			       "%s reads through the page cache; use psync, io_uring or libaio "
			       "for O_DIRECT, or direct=0",
			       opt_where(j, line, "direct", w, sizeof(w)), eng->name,
			       opt_where(j, line, "ioengine", w2, sizeof(w2)), eng->name);
	ret = check_target(j, eng, line, e);
	if (ret)
		return ret;
	ret = check_concurrency(j, eng, line, e);
	if (ret)
		return ret;
	ret = check_pool(j, eng, line, e);
	if (ret)
		return ret;
	ret = check_writes(j, eng, line, warn, e);
	if (ret)
		return ret;
	check_warnings(j, eng, line, warn);
	return 0;
}

int job_validate(const struct job *j, void (*warn)(const char *msg), struct err *e)
{
	return check_job(j, NULL, warn, e);
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
	if (opt_given(line, "direct"))
		return err_set(e, EINVAL, "direct=0 at %s contradicts ioengine=%s at %s: the pool "
			       "reads its misses with O_DIRECT, so that pool_size is all the memory "
			       "its pages take; leave direct out (or set it to 1)",
			       opt_where(j, line, "direct", w, sizeof(w)), eng->name,
			       opt_where(j, line, "ioengine", w2, sizeof(w2)));
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
	if (!ret)
		ret = check_job(&s->job, s->line, jobfile_warn, e);
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
		warnf(jobfile_warn, "%s: [global] options after the last job apply to no job",
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
