/*
 * jobcheck.c - whether a job makes sense: bounds, a target that
 * exists, contradictions between options (each named with the line it
 * was set on), what a pool, a write or a concurrency model needs, and
 * the warnings for options that have no effect. jobfile.c calls it on
 * every job it parses; job_validate on a job built by hand.
 */
#include "job/jobcheck.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload/blockdata.h"
#include "engines/engine.h"
#include "job/options.h"
#include "job/optrun.h"
#include "job/optio.h"
#include "job/optverify.h"
#include "job/optshape.h"

/* Where option @name of @j was set: its line, else the job's header. */
const char *jobcheck_where(const struct job *j, const int *line, const char *name, char *buf,
			   size_t len)
{
	const struct option_def *o = option_find(name);
	int at = 0;

	/* buffered and direct share a field: the later setting wins. A
	 * negative line is a command-line argument a job file's job
	 * inherited: any line of the file came after it. */
	for (size_t i = 0; line && o && i < option_count; i++) {
		int l = line[i];

		if (option_table[i].off != o->off || !l)
			continue;
		if (!at || (l > 0 && (at < 0 || l > at)) || (l < 0 && at < 0 && l < at))
			at = l;
	}
	if (at < 0)
		snprintf(buf, len, "command line:%d", -at);
	else
		snprintf(buf, len, "%s:%d%s", j->src.file, at ? at : j->src.line,
			 at ? "" : " (default)");
	return buf;
}

/* Whether option @name (or an entry sharing its field: buffered for
 * direct) was set in this section or the [global] before it. */
bool jobcheck_given(const int *line, const char *name)
{
	const struct option_def *o = option_find(name);

	for (size_t i = 0; line && o && i < option_count; i++)
		if (option_table[i].off == o->off && line[i])
			return true;
	return false;
}

void jobcheck_warnf(void (*warn)(const char *), const char *fmt, ...)
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
			       jobcheck_where(j, line, "bs", w, sizeof(w)));
	if (!j->iodepth || j->iodepth > 4096)
		return err_set(e, EINVAL, "iodepth=%u at %s: must be 1 to 4096", j->iodepth,
			       jobcheck_where(j, line, "iodepth", w, sizeof(w)));
	if (!j->numjobs)
		return err_set(e, EINVAL, "numjobs=0 at %s: must be at least 1",
			       jobcheck_where(j, line, "numjobs", w, sizeof(w)));
	if (!j->nrfiles)
		return err_set(e, EINVAL, "nrfiles=0 at %s: must be at least 1",
			       jobcheck_where(j, line, "nrfiles", w, sizeof(w)));
	if (!j->scan_chunk)
		return err_set(e, EINVAL, "scan_chunk=0 at %s: must be at least 1",
			       jobcheck_where(j, line, "scan_chunk", w, sizeof(w)));
	if (j->random_distribution == DIST_ZIPF && !(j->zipf_theta > 0))
		return err_set(e, EINVAL, "random_distribution=zipf:%g at %s: theta must be > 0",
			       j->zipf_theta, jobcheck_where(j, line, "random_distribution", w, sizeof(w)));
	return 0;
}

/* Scratch files are made by faultline, so it must know their size. */
static int check_target(const struct job *j, const struct engine_ops *eng, const int *line,
			struct err *e)
{
	char w[300];

	if (j->filename || j->read_iolog || (eng->flags & ENGINE_F_NO_TARGET))
		return 0;
	if (j->size_pct)
		return err_set(e, EINVAL, "size=%u%% at %s: a percentage needs filename= "
			       "(scratch files need a size such as size=1g)", j->size_pct,
			       jobcheck_where(j, line, "size", w, sizeof(w)));
	if (!j->size && !j->filesize)
		return err_set(e, EINVAL, "job '%s' at %s:%d has no filename and no size: "
			       "scratch files need size= (or filename= for an existing file "
			       "or device)", j->name, j->src.file, j->src.line);
	if (!j->filesize && j->size / j->nrfiles == 0)
		return err_set(e, EINVAL, "size=%llu at %s split over nrfiles=%u leaves "
			       "empty files", (unsigned long long)j->size,
			       jobcheck_where(j, line, "size", w, sizeof(w)), j->nrfiles);
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

/*
 * The targets a job opens: each worker's nrfiles scratch files, or the
 * files of filename=. A request names its target in 16 bits, so past
 * IO_TARGETS_MAX a worker's files would alias another's (and a write
 * job write into them).
 */
static int check_target_count(const struct job *j, const struct engine_ops *eng, const int *line,
			      struct err *e)
{
	char w[300], w2[300];

	if (j->read_iolog || (eng->flags & ENGINE_F_NO_TARGET))
		return 0;
	if (j->filename && filename_count(j->filename) > IO_TARGETS_MAX)
		return err_set(e, EINVAL, "filename= at %s names %u files; a job reads at most %u",
			       jobcheck_where(j, line, "filename", w, sizeof(w)),
			       filename_count(j->filename), IO_TARGETS_MAX);
	if (!j->filename && (uint64_t)j->numjobs * j->nrfiles > IO_TARGETS_MAX)
		return err_set(e, EINVAL, "numjobs=%u at %s with nrfiles=%u at %s: %llu scratch files "
			       "(each worker has nrfiles of its own); a job has at most %u, so "
			       "numjobs times nrfiles must stay within it",
			       j->numjobs, jobcheck_where(j, line, "numjobs", w, sizeof(w)), j->nrfiles,
			       jobcheck_where(j, line, "nrfiles", w2, sizeof(w2)),
			       (unsigned long long)j->numjobs * j->nrfiles, IO_TARGETS_MAX);
	return 0;
}

/*
 * read_iolog and write_iolog: a replay issues each logged request once,
 * on the files the log names: its reads, and its writes and syncs only
 * when rw= says the job writes (a read job never writes); a loop's
 * streams have generators of their own, neither replayed nor recorded.
 */
static int check_replay(const struct job *j, const int *line, void (*warn)(const char *msg),
			struct err *e)
{
	char w[300], w2[300];

	if (j->loop && (j->read_iolog || j->write_iolog))
		return err_set(e, EINVAL, "%s at %s contradicts loop=%u at %s: a loop's streams are "
			       "neither replayed nor recorded", j->read_iolog ? "read_iolog" : "write_iolog",
			       jobcheck_where(j, line, j->read_iolog ? "read_iolog" : "write_iolog", w, sizeof(w)),
			       j->loop, jobcheck_where(j, line, "loop", w2, sizeof(w2)));
	if (!j->read_iolog)
		return 0;
	if (j->verify != VERIFY_NONE)
		return err_set(e, EINVAL, "read_iolog at %s contradicts verify at %s: verify reads back the "
			       "blocks faultline's own offsets wrote, and a replay's are the log's",
			       jobcheck_where(j, line, "read_iolog", w, sizeof(w)),
			       jobcheck_where(j, line, "verify", w2, sizeof(w2)));
	if (j->time_based)
		return err_set(e, EINVAL, "read_iolog at %s contradicts time_based at %s: a replay issues "
			       "each logged request once (runtime= may cut it short)",
			       jobcheck_where(j, line, "read_iolog", w, sizeof(w)),
			       jobcheck_where(j, line, "time_based", w2, sizeof(w2)));
	if (j->offset || j->size_pct)
		return err_set(e, EINVAL, "read_iolog at %s contradicts %s at %s: a replay's offsets are "
			       "the log's (replay_scale and replay_align change them)",
			       jobcheck_where(j, line, "read_iolog", w, sizeof(w)), j->offset ? "offset" : "size",
			       jobcheck_where(j, line, j->offset ? "offset" : "size", w2, sizeof(w2)));
	if (j->filename)
		jobcheck_warnf(warn, "filename= at %s is not used with read_iolog at %s (as in fio): the "
			      "log names the files; replay_redirect=PATH sends every request to one",
			      jobcheck_where(j, line, "filename", w, sizeof(w)),
			      jobcheck_where(j, line, "read_iolog", w2, sizeof(w2)));
	return 0;
}

/* Most request slots a loop may hold: the engines' iodepth bound. */
#define LOOP_SLOTS_MAX 4096

/* loop, offload and prefetch: what each needs of the others. */
static int check_concurrency(const struct job *j, const struct engine_ops *eng,
			     const int *line, struct err *e)
{
	char w[300], w2[300];

	if (j->loop) {
		unsigned nt = j->filename ? filename_count(j->filename) : j->nrfiles;

		if (j->numjobs != 1)
			return err_set(e, EINVAL, "loop=%u at %s needs numjobs=1 (numjobs=%u at %s): one "
				       "thread drives the streams; numjobs=N is the N-threads model",
				       j->loop, jobcheck_where(j, line, "loop", w, sizeof(w)), j->numjobs,
				       jobcheck_where(j, line, "numjobs", w2, sizeof(w2)));
		if (!(eng->flags & ENGINE_F_NO_TARGET) && nt != 1 && nt != j->loop)
			return err_set(e, EINVAL, "loop=%u at %s with %u %s: each stream reads its own "
				       "file, so give %u files, or one to cut into %u slices",
				       j->loop, jobcheck_where(j, line, "loop", w, sizeof(w)), nt,
				       j->filename ? "files in filename=" : "scratch files (nrfiles)",
				       j->loop, j->loop);
		if ((eng->flags & ENGINE_F_ASYNC) && (uint64_t)j->loop * j->iodepth > LOOP_SLOTS_MAX)
			return err_set(e, EINVAL, "loop=%u at %s with iodepth=%u: %llu requests in flight, "
				       "at most %u", j->loop, jobcheck_where(j, line, "loop", w, sizeof(w)),
				       j->iodepth, (unsigned long long)j->loop * j->iodepth,
				       LOOP_SLOTS_MAX);
	}
	if (j->offload && eng->release)
		return err_set(e, EINVAL, "offload=%u at %s contradicts ioengine=%s at %s: %s "
			       "lends the thread that queued a request its memory until that thread "
			       "has consumed it, and offload's helpers queue what the loop consumes",
			       j->offload, jobcheck_where(j, line, "offload", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)), eng->name);
	if (j->offload) {
		if (!j->loop)
			return err_set(e, EINVAL, "offload=%u at %s needs loop=N: helpers run the "
				       "requests of a loop's streams", j->offload,
				       jobcheck_where(j, line, "offload", w, sizeof(w)));
		if (eng->flags & ENGINE_F_ASYNC)
			return err_set(e, EINVAL, "offload=%u at %s contradicts ioengine=%s at %s: %s "
				       "is already asynchronous; offload hands psync, mmap or null "
				       "requests to helper threads", j->offload,
				       jobcheck_where(j, line, "offload", w, sizeof(w)), eng->name,
				       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)), eng->name);
	}
	if (j->offload_permits && !j->offload)
		return err_set(e, EINVAL, "offload_permits=%u at %s needs offload=K (the helpers "
			       "the permits are for)", j->offload_permits,
			       jobcheck_where(j, line, "offload_permits", w, sizeof(w)));
	if (j->offload_permits > j->offload)
		return err_set(e, EINVAL, "offload_permits=%u at %s exceeds offload=%u at %s: "
			       "at most one request runs per helper", j->offload_permits,
			       jobcheck_where(j, line, "offload_permits", w, sizeof(w)), j->offload,
			       jobcheck_where(j, line, "offload", w2, sizeof(w2)));
	if (j->prefetch != PREFETCH_NONE) {
		if (!(eng->flags & ENGINE_F_MAPPED))
			return err_set(e, EINVAL, "prefetch at %s contradicts ioengine=%s at %s: "
				       "prefetch keeps a mapping's pages ahead of the reader "
				       "(ioengine=mmap); for read(2) the kernel's readahead does it",
				       jobcheck_where(j, line, "prefetch", w, sizeof(w)), eng->name,
				       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)));
		if (j->rw != RW_READ)
			return err_set(e, EINVAL, "prefetch at %s needs rw=read (at %s): it reads "
				       "ahead of sequential streams; random reads have no ahead",
				       jobcheck_where(j, line, "prefetch", w, sizeof(w)),
				       jobcheck_where(j, line, "rw", w2, sizeof(w2)));
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

static const char *rw_name(enum rw_mode rw)
{
	static const char *const names[] = { "read", "randread", "write", "randwrite", "rw", "randrw",
					"trim", "randtrim", "trimwrite", "randtrimwrite" };

	return (unsigned)rw < sizeof(names) / sizeof(names[0]) ? names[rw] : "?";
}

/* ioengine=bufpool and vmcache: the pool and what it asks of the requests. */
static int check_pool(const struct job *j, const struct engine_ops *eng, const int *line,
		      struct err *e)
{
	char w[300], w2[300];
	uint64_t frames = j->pool_page ? j->pool_size / j->pool_page : 0;
	uint64_t need = (uint64_t)POOL_PAGES_PER_THREAD * j->numjobs;
	int ret;

	if (!(eng->flags & ENGINE_F_POOL))
		return 0;
	if (!j->pool_size)
		return err_set(e, EINVAL, "ioengine=%s at %s needs pool_size= (the pool's memory, "
			       "e.g. pool_size=512m)", eng->name,
			       jobcheck_where(j, line, "ioengine", w, sizeof(w)));
	if (!j->pool_page || (j->pool_page & (j->pool_page - 1)))
		return err_set(e, EINVAL, "pool_page=%llu at %s: must be a power of two (512, "
			       "4k, 8k, 16k, ...)", (unsigned long long)j->pool_page,
			       jobcheck_where(j, line, "pool_page", w, sizeof(w)));
	if (frames < need)
		return err_set(e, EINVAL, "pool_size=%llu at %s holds %llu page%s of "
			       "pool_page=%llu; numjobs=%u threads need at least %llu (%u each: "
			       "a page it reads and one it loads), pool_size=%llu",
			       (unsigned long long)j->pool_size,
			       jobcheck_where(j, line, "pool_size", w, sizeof(w)),
			       (unsigned long long)frames, frames == 1 ? "" : "s",
			       (unsigned long long)j->pool_page,
			       j->numjobs, (unsigned long long)need, POOL_PAGES_PER_THREAD,
			       (unsigned long long)(need * j->pool_page));
	if (job_bs_largest(j) != job_bs_smallest(j) || j->dir[0].ba || j->dir[1].ba) {
		/* A request is served from one frame: every request must lie
		 * within a page (optshape_check_pool). */
		ret = optshape_check_pool(j, line, e);
		if (ret)
			return ret;
	} else if (j->bs > j->pool_page || j->pool_page % j->bs)
		return err_set(e, EINVAL, "bs=%llu at %s does not divide pool_page=%llu at %s: "
			       "%s serves a request in place from one page (as mmap does); "
			       "use a bs that divides pool_page, or pool_page=%llu",
			       (unsigned long long)j->bs, jobcheck_where(j, line, "bs", w, sizeof(w)),
			       (unsigned long long)j->pool_page,
			       jobcheck_where(j, line, "pool_page", w2, sizeof(w2)), eng->name,
			       (unsigned long long)pow2_at_least(j->bs));
	if (j->pool_prefetch && job_writes(j))
		return err_set(e, EINVAL, "pool_prefetch at %s reads pages ahead for a read job; "
			       "with writes (rw=%s at %s) a page read ahead could miss a write "
			       "made meanwhile", jobcheck_where(j, line, "pool_prefetch", w, sizeof(w)),
			       rw_name(j->rw), jobcheck_where(j, line, "rw", w2, sizeof(w2)));
	if (j->pool_prefetch && j->pool_io != POOL_IO_URING)
		return err_set(e, EINVAL, "pool_prefetch at %s reads ahead through the thread's "
			       "io_uring: it needs pool_io=io_uring, not psync (at %s)",
			       jobcheck_where(j, line, "pool_prefetch", w, sizeof(w)),
			       jobcheck_where(j, line, "pool_io", w2, sizeof(w2)));
	/* The pages read ahead hold frames too: at most half the pool. */
	if (j->pool_prefetch && (uint64_t)j->pool_prefetch * j->numjobs * 2 > frames)
		return err_set(e, EINVAL, "pool_prefetch=%u at %s: numjobs=%u threads reading %u "
			       "pages ahead hold up to %llu of the pool's %llu frames; read ahead "
			       "takes at most half the pool, pool_prefetch=%llu or fewer",
			       j->pool_prefetch, jobcheck_where(j, line, "pool_prefetch", w, sizeof(w)),
			       j->numjobs, j->pool_prefetch,
			       (unsigned long long)j->pool_prefetch * j->numjobs,
			       (unsigned long long)frames,
			       (unsigned long long)(frames / 2 / j->numjobs));
	if (j->offset % j->pool_page)
		return err_set(e, EINVAL, "offset=%llu at %s is not a multiple of pool_page=%llu "
			       "at %s: the pool's pages start at multiples of pool_page in the "
			       "file, and so must the region", (unsigned long long)j->offset,
			       jobcheck_where(j, line, "offset", w, sizeof(w)),
			       (unsigned long long)j->pool_page,
			       jobcheck_where(j, line, "pool_page", w2, sizeof(w2)));
	if (j->mem_limit)
		return err_set(e, EINVAL, "mem_limit at %s contradicts ioengine=%s at %s: the "
			       "pool reads with O_DIRECT and its memory is pool_size; to compare "
			       "at equal memory, give mmap mem_limit=M and %s pool_size=M",
			       jobcheck_where(j, line, "mem_limit", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)), eng->name);
	if (eng->flags & ENGINE_F_REGION) {
		long base = sysconf(_SC_PAGESIZE);

		if (base > 0 && j->pool_page < (uint64_t)base)
			return err_set(e, EINVAL, "pool_page=%llu at %s is smaller than the base page "
				       "(%ld bytes): ioengine=%s gives a page's memory back with "
				       "madvise, which works in base pages; pool_page=%ld or more",
				       (unsigned long long)j->pool_page,
				       jobcheck_where(j, line, "pool_page", w, sizeof(w)), base,
				       eng->name, base);
		if (j->pool_prefetch)
			return err_set(e, EINVAL, "pool_prefetch at %s is bufpool's: ioengine=%s reads "
				       "each page when a request asks for it",
				       jobcheck_where(j, line, "pool_prefetch", w, sizeof(w)), eng->name);
		if (!j->thread && j->numjobs > 1)
			return err_set(e, EINVAL, "thread=0 at %s with numjobs=%u: ioengine=%s is one "
				       "pool in one address space (its region, page states and "
				       "resident set), shared by the job's threads; as processes each "
				       "worker would have a pool of its own, numjobs times pool_size, "
				       "and none shared. Use thread=1 (the default), or numjobs=1",
				       jobcheck_where(j, line, "thread", w, sizeof(w)), j->numjobs,
				       eng->name);
	}
	if (j->sync != SYNC_NONE && job_writes(j))
		return err_set(e, EINVAL, "sync at %s contradicts ioengine=%s at %s: a write goes "
			       "into the pool, and O_DSYNC would only make its later write-back "
			       "synchronous; use fsync=1 (or fdatasync=1) for a flush after every write",
			       jobcheck_where(j, line, "sync", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)));
	return 0;
}

/* Writes and durability: what each option needs of the others. */
static int check_writes(const struct job *j, const struct engine_ops *eng, const int *line,
			void (*warn)(const char *), struct err *e)
{
	static const char *const rw_names[] = { "read", "randread", "write", "randwrite", "rw",
						"randrw", "trim", "randtrim", "trimwrite", "randtrimwrite" };
	const char *rw = rw_names[j->rw];
	char w[300], w2[300];

	if (!job_writes(j)) {
		if (job_flushes(j) || j->sync != SYNC_NONE)
			jobcheck_warnf(warn, "job '%s' at %s:%d reads only (rw=%s): fsync, fdatasync, "
			      "sync_interval, end_fsync and sync have no effect", j->name,
			      j->src.file, j->src.line, rw);
		return 0;
	}
	if (job_bs_min(j, JOB_DIR_WRITE) % BLOCKDATA_SECTOR)
		return err_set(e, EINVAL, "bs=%llu at %s: a write job's bs must be a multiple of %u "
			       "(every written block carries a header and a stamp per sector)",
			       (unsigned long long)job_bs_min(j, JOB_DIR_WRITE),
			       jobcheck_where(j, line, job_bs_varies(j, JOB_DIR_WRITE) ? "bssplit" : "bs",
					      w, sizeof(w)), BLOCKDATA_SECTOR);
	if (job_bs_varies(j, JOB_DIR_WRITE) && j->bs_unaligned)
		return err_set(e, EINVAL, "blocksize_unaligned at %s with a write job: written "
			       "blocks are whole sectors (each carries a stamp per sector)",
			       jobcheck_where(j, line, "blocksize_unaligned", w, sizeof(w)));
	if (job_bs_varies(j, JOB_DIR_WRITE) && j->verify != VERIFY_NONE)
		return err_set(e, EINVAL, "verify at %s with writes of several sizes (bssplit or "
			       "bsrange): a block is checked as written whole, and writes of "
			       "different sizes overlap (fio, too, limits verify here)",
			       jobcheck_where(j, line, "verify", w, sizeof(w)));
	if (j->fsync_every && j->fdatasync_every)
		return err_set(e, EINVAL, "fsync=%u at %s and fdatasync=%u at %s: choose one flush "
			       "(fdatasync leaves the inode's timestamps out)", j->fsync_every,
			       jobcheck_where(j, line, "fsync", w, sizeof(w)), j->fdatasync_every,
			       jobcheck_where(j, line, "fdatasync", w2, sizeof(w2)));
	if (j->sync != SYNC_NONE && (eng->flags & ENGINE_F_MAPPED))
		return err_set(e, EINVAL, "sync at %s contradicts ioengine=%s at %s: stores into a "
			       "mapping have no O_DSYNC (the kernel writes dirty pages back when it "
			       "chooses); use fsync=1 for an msync after every write",
			       jobcheck_where(j, line, "sync", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)));
	if (j->verify != VERIFY_NONE && (eng->flags & ENGINE_F_NO_TARGET))
		return err_set(e, EINVAL, "verify=crc32c at %s contradicts ioengine=%s at %s: it "
			       "writes nothing that could be read back",
			       jobcheck_where(j, line, "verify", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)));
	if (j->loop)
		return err_set(e, EINVAL, "loop=%u at %s with rw=%s at %s: the event loop reads "
			       "only; run writes with numjobs threads, or an asynchronous engine "
			       "with iodepth", j->loop, jobcheck_where(j, line, "loop", w, sizeof(w)), rw,
			       jobcheck_where(j, line, "rw", w2, sizeof(w2)));
	return 0;
}

/* fio's verify phases (job/optverify.h): what they need of each other. */
static const char *const vrw_names[] = { "read", "randread", "write", "randwrite", "rw", "randrw",
					"trim", "randtrim", "trimwrite", "randtrimwrite" };

/* A job that only reads: which of the options cannot apply to it. */
static int check_reader(const struct job *j, const struct engine_ops *eng, const int *line,
			struct err *e)
{
	char w[300], w2[300];

	if (j->verify_backlog)
		return err_set(e, EINVAL, "verify_backlog=%u at %s checks blocks while a job writes "
			       "them, and rw=%s at %s writes none", j->verify_backlog,
			       jobcheck_where(j, line, "verify_backlog", w, sizeof(w)), vrw_names[j->rw],
			       jobcheck_where(j, line, "rw", w2, sizeof(w2)));
	if (j->verify_state_save)
		return err_set(e, EINVAL, "verify_state_save=1 at %s records what a write job wrote, "
			       "and rw=%s at %s writes nothing (verify_state_load reads the state)",
			       jobcheck_where(j, line, "verify_state_save", w, sizeof(w)),
			       vrw_names[j->rw], jobcheck_where(j, line, "rw", w2, sizeof(w2)));
	if (j->verify_state_load && j->verify == VERIFY_NONE)
		return err_set(e, EINVAL, "verify_state_load=1 at %s needs verify= (the checksum the "
			       "earlier run stamped)",
			       jobcheck_where(j, line, "verify_state_load", w, sizeof(w)));
	if (!job_read_verifies(j))
		return 0;
	if (eng->flags & ENGINE_F_NO_TARGET)
		return err_set(e, EINVAL, "verify at %s contradicts ioengine=%s at %s: it reads "
			       "nothing that could be checked",
			       jobcheck_where(j, line, "verify", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)));
	if (j->loop || j->read_iolog)
		return err_set(e, EINVAL, "verify at %s with %s at %s: a read job checks each block "
			       "of its own plain loop as it reads it",
			       jobcheck_where(j, line, "verify", w, sizeof(w)),
			       j->loop ? "loop" : "read_iolog",
			       jobcheck_where(j, line, j->loop ? "loop" : "read_iolog", w2, sizeof(w2)));
	if (job_bs_varies(j, JOB_DIR_READ) && j->verify_state_load)
		return err_set(e, EINVAL, "verify_state_load at %s with reads of several sizes: the "
			       "state names blocks of one size",
			       jobcheck_where(j, line, "verify_state_load", w, sizeof(w)));
	return 0;
}

static int optverify_check(const struct job *j, const struct engine_ops *eng, const int *line,
		    struct err *e)
{
	char w[300], w2[300];

	if (j->verify == VERIFY_PATTERN && !j->verify_pattern)
		return err_set(e, EINVAL, "verify=pattern at %s needs verify_pattern (what the blocks "
			       "must hold; as fio says)", jobcheck_where(j, line, "verify", w, sizeof(w)));
	if ((j->verify_pattern || j->buffer_pattern) && (j->dedupe_pct || j->compress_pct))
		return err_set(e, EINVAL, "%s at %s with dedupe_percentage or "
			       "buffer_compress_percentage: a block holds one or the other",
			       j->verify_pattern ? "verify_pattern" : "buffer_pattern",
			       jobcheck_where(j, line, j->verify_pattern ? "verify_pattern" :
					      "buffer_pattern", w, sizeof(w)));
	if (j->verify_backlog_batch && !j->verify_backlog)
		return err_set(e, EINVAL, "verify_backlog_batch=%u at %s without verify_backlog: "
			       "it says how many blocks each backlog check reads",
			       j->verify_backlog_batch,
			       jobcheck_where(j, line, "verify_backlog_batch", w, sizeof(w)));
	if (!job_writes(j))
		return check_reader(j, eng, line, e);
	if (j->verify_state_load)
		return err_set(e, EINVAL, "verify_state_load=1 at %s with rw=%s at %s: a state file "
			       "is loaded by the job that checks what an earlier one wrote (rw=read)",
			       jobcheck_where(j, line, "verify_state_load", w, sizeof(w)),
			       vrw_names[j->rw], jobcheck_where(j, line, "rw", w2, sizeof(w2)));
	if (j->verify_state_save && j->verify == VERIFY_NONE)
		return err_set(e, EINVAL, "verify_state_save=1 at %s needs verify= (the checksum a "
			       "later verify_state_load checks)",
			       jobcheck_where(j, line, "verify_state_save", w, sizeof(w)));
	if (j->verify_backlog && !job_verifies(j))
		return err_set(e, EINVAL, "verify_backlog=%u at %s needs verify= with do_verify=1: "
			       "it says when written blocks are checked", j->verify_backlog,
			       jobcheck_where(j, line, "verify_backlog", w, sizeof(w)));
	return 0;
}

/* fio's trims: the one-request loop (run/trimloop.c) and what it lacks. */
static int check_trims(const struct job *j, const struct engine_ops *eng, const int *line,
		       struct err *e)
{
	static const struct { const char *opt; const char *why; } no[] = {
		{ "loop", "the event loop reads only" },
		{ "read_iolog", "a replay's trims are not replayed (replay_skip)" },
		{ "verify_backlog", "trims run their own loop, which checks at the end only" },
		{ "fsync", "trims run their own loop, without flushes" },
		{ "fdatasync", "trims run their own loop, without flushes" },
		{ "sync_interval", "trims run their own loop, without flushes" },
		{ "end_fsync", "trims run their own loop, without flushes" },
		{ "rate", "trims run their own loop, unpaced" },
		{ "rate_iops", "trims run their own loop, unpaced" },
		{ "thinktime", "trims run their own loop, unpaced" },
		{ "continue_on_error", "a failed trim ends the job" },
	};
	char w[300], w2[300];

	if ((eng->flags & ENGINE_F_CREATES) && (j->loop || j->read_iolog))
		return err_set(e, EINVAL, "ioengine=%s at %s with %s: its requests are the job's "
			       "files, one each, in the generator's order", eng->name,
			       jobcheck_where(j, line, "ioengine", w, sizeof(w)),
			       j->loop ? "loop=" : "read_iolog");
	if (!job_trims(j))
		return 0;
	if (!(eng->ops & ENGINE_OP(IO_TRIM)))
		return err_set(e, EINVAL, "rw=%s at %s: ioengine=%s at %s does not trim (its pages "
			       "live in its own pool)", vrw_names[j->rw],
			       jobcheck_where(j, line, "rw", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)));
	if (j->verify != VERIFY_NONE && !job_trimwrites(j))
		return err_set(e, EINVAL, "verify at %s with rw=%s at %s: a trimmed block holds no "
			       "data to check (trimwrite writes after each trim)",
			       jobcheck_where(j, line, "verify", w, sizeof(w)), vrw_names[j->rw],
			       jobcheck_where(j, line, "rw", w2, sizeof(w2)));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (jobcheck_given(line, no[i].opt) || (!line && !strcmp(no[i].opt, "loop") && j->loop))
			return err_set(e, EINVAL, "%s at %s with rw=%s at %s: %s",
				       no[i].opt, jobcheck_where(j, line, no[i].opt, w, sizeof(w)),
				       vrw_names[j->rw], jobcheck_where(j, line, "rw", w2, sizeof(w2)),
				       no[i].why);
	return 0;
}

/* fio's log options that need others (fio's own messages say the same). */
static int check_logs(const struct job *j, const int *line, struct err *e)
{
	char w[300];

	if (j->log_issue_time && (!j->lat_log || !j->log_offset))
		return err_set(e, EINVAL, "log_issue_time=1 at %s needs write_lat_log and "
			       "log_offset=1 (as fio says): it is a column of the latency logs, "
			       "after the offset's", jobcheck_where(j, line, "log_issue_time", w, sizeof(w)));
	if (j->log_window_value != LOG_WINDOW_AVG && j->log_prio &&
	    (j->cmdprio[0].perc || j->cmdprio[0].nbs || j->cmdprio[1].perc || j->cmdprio[1].nbs))
		return err_set(e, EINVAL, "log_window_value at %s with log_prio and cmdprio_*: the "
			       "entries split by priority keep each window's sum, not its maximum",
			       jobcheck_where(j, line, "log_window_value", w, sizeof(w)));
	return 0;
}

static void check_warnings(const struct job *j, const struct engine_ops *eng,
			   const int *line, void (*warn)(const char *))
{
	char w[300];
	static const char *const pool_opts[] = { "pool_page", "pool_io", "pool_prefetch",
						 "pool_evict_batch" };

	if (j->iodepth > 1 && !(eng->flags & ENGINE_F_ASYNC))
		jobcheck_warnf(warn, "iodepth=%u at %s has no effect with ioengine=%s, a synchronous "
		      "engine: one request in flight per thread (as fio)", j->iodepth,
		      jobcheck_where(j, line, "iodepth", w, sizeof(w)), eng->name);
	if ((jobcheck_given(line, "iodepth_batch_complete_min") ||
	     jobcheck_given(line, "iodepth_batch_complete_max")) &&
	    !(eng->flags & ENGINE_F_ASYNC))
		jobcheck_warnf(warn, "iodepth_batch_complete at %s has no effect with ioengine=%s: "
		      "a synchronous engine completes each request in its call",
		      jobcheck_where(j, line, jobcheck_given(line, "iodepth_batch_complete_min")
				     ? "iodepth_batch_complete_min" : "iodepth_batch_complete_max",
				     w, sizeof(w)), eng->name);
	if (j->iodepth > 1 && job_trims(j) && (eng->flags & ENGINE_F_ASYNC))
		jobcheck_warnf(warn, "iodepth=%u at %s: trims run one request at a time (each is a "
		      "system call from the thread in every engine; trimwrite's write follows it)",
		      j->iodepth, jobcheck_where(j, line, "iodepth", w, sizeof(w)));
	if (j->serialize_overlap && (!(eng->flags & ENGINE_F_ASYNC) || !job_writes(j) || j->loop))
		jobcheck_warnf(warn, "serialize_overlap=1 at %s has no effect here: only a write job's "
		      "io_uring or libaio requests can overlap in flight (a thread of a synchronous "
		      "engine has one, threads never write the same blocks at once, reads do not race)",
		      jobcheck_where(j, line, "serialize_overlap", w, sizeof(w)));
	if (j->iodepth_batch != IODEPTH_BATCH_AUTO && !(eng->flags & ENGINE_F_ASYNC))
		jobcheck_warnf(warn, "iodepth_batch_submit=%u at %s has no effect with ioengine=%s, a "
		      "synchronous engine", j->iodepth_batch,
		      jobcheck_where(j, line, "iodepth_batch_submit", w, sizeof(w)), eng->name);
	if (j->random_distribution == DIST_ZIPF && !job_rw_random(j->rw))
		jobcheck_warnf(warn, "random_distribution=zipf:%g at %s has no effect with sequential "
		      "rw=read, write or rw", j->zipf_theta,
		      jobcheck_where(j, line, "random_distribution", w, sizeof(w)));
	if (j->time_based && !j->runtime_ns)
		jobcheck_warnf(warn, "time_based at %s without runtime: job '%s' runs until interrupted",
		      jobcheck_where(j, line, "time_based", w, sizeof(w)), j->name);
	if (j->filename && j->nrfiles > 1)
		jobcheck_warnf(warn, "nrfiles=%u at %s has no effect with filename= (the targets are "
		      "the files named)", j->nrfiles, jobcheck_where(j, line, "nrfiles", w, sizeof(w)));
	if ((eng->flags & ENGINE_F_POOL) && j->pool_prefetch && job_rw_random(j->rw))
		jobcheck_warnf(warn, "pool_prefetch=%u at %s with rw=%s: every read brings the next "
		      "pages, which random reads seldom ask for (it is meant for scans)",
		      j->pool_prefetch, jobcheck_where(j, line, "pool_prefetch", w, sizeof(w)),
		      rw_name(j->rw));
	if ((eng->flags & ENGINE_F_POOL) && !(eng->flags & ENGINE_F_REGION) &&
	    jobcheck_given(line, "pool_evict_batch"))
		jobcheck_warnf(warn, "pool_evict_batch at %s has no effect with ioengine=%s (it is "
		      "vmcache's: %s evicts a page at a time)",
		      jobcheck_where(j, line, "pool_evict_batch", w, sizeof(w)), eng->name, eng->name);
	if (!(eng->flags & ENGINE_F_POOL)) {
		if (j->pool_size)
			jobcheck_warnf(warn, "pool_size at %s has no effect with ioengine=%s: it is a pool's "
			      "memory (mem_limit limits a job's page cache)",
			      jobcheck_where(j, line, "pool_size", w, sizeof(w)), eng->name);
		for (size_t i = 0; i < sizeof(pool_opts) / sizeof(pool_opts[0]); i++)
			if (jobcheck_given(line, pool_opts[i]))
				jobcheck_warnf(warn, "%s at %s has no effect with ioengine=%s (it is "
				      "bufpool's and vmcache's)", pool_opts[i],
				      jobcheck_where(j, line, pool_opts[i], w, sizeof(w)), eng->name);
	}
}

int job_check(const struct job *j, const int *line, void (*warn)(const char *),
		     struct err *e)
{
	const struct engine_ops *eng = engine_find(j->ioengine);
	char w[300], w2[300];
	int ret;

	if (!eng)
		return err_set(e, EINVAL, "ioengine=%s at %s: unknown engine (see "
			       "--cmdhelp=ioengine)", j->ioengine,
			       jobcheck_where(j, line, "ioengine", w, sizeof(w)));
	ret = check_bounds(j, line, e);
	if (ret)
		return ret;
	if (j->direct && (eng->flags & ENGINE_F_NO_DIRECT))
		return err_set(e, EINVAL, "direct=1 at %s contradicts ioengine=%s at %s: "
			       "%s reads through the page cache; use psync, io_uring or libaio "
			       "for O_DIRECT, or direct=0",
			       jobcheck_where(j, line, "direct", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)), eng->name);
	if (j->uncached && j->direct)
		return err_set(e, EINVAL, "uncached=1 at %s contradicts direct=1 at %s: uncached reads "
			       "go through the page cache and drop the pages after the copy; O_DIRECT "
			       "bypasses it. Choose one",
			       jobcheck_where(j, line, "uncached", w, sizeof(w)),
			       jobcheck_where(j, line, "direct", w2, sizeof(w2)));
	if (j->uncached && !(eng->flags & ENGINE_F_UNCACHED))
		return err_set(e, EINVAL, "uncached=1 at %s contradicts ioengine=%s at %s: RWF_DONTCACHE "
			       "is a flag of read calls, served by psync and io_uring",
			       jobcheck_where(j, line, "uncached", w, sizeof(w)), eng->name,
			       jobcheck_where(j, line, "ioengine", w2, sizeof(w2)));
	if (j->uncached && job_writes(j))
		return err_set(e, EINVAL, "uncached=1 at %s with rw=%s at %s: faultline reads uncached "
			       "only; write jobs keep the page cache's write-back",
			       jobcheck_where(j, line, "uncached", w, sizeof(w)),
			       (const char *[]){ "read", "randread", "write", "randwrite", "rw", "randrw",
						 "trim", "randtrim", "trimwrite", "randtrimwrite" }[j->rw],
			       jobcheck_where(j, line, "rw", w2, sizeof(w2)));
	ret = check_target(j, eng, line, e);
	if (!ret)
		ret = check_target_count(j, eng, line, e);
	if (ret)
		return ret;
	ret = check_concurrency(j, eng, line, e);
	if (ret)
		return ret;
	ret = check_replay(j, line, warn, e);
	if (ret)
		return ret;
	ret = check_pool(j, eng, line, e);
	if (ret)
		return ret;
	ret = check_writes(j, eng, line, warn, e);
	if (ret)
		return ret;
	ret = optshape_check(j, eng, line, e);
	if (!ret)
		ret = optrun_check(j, eng, e);
	if (ret)
		return ret;
	ret = optio_check(j, eng, e);
	if (!ret)
		ret = optverify_check(j, eng, line, e);
	if (!ret)
		ret = check_logs(j, line, e);
	if (!ret)
		ret = check_trims(j, eng, line, e);
	if (ret)
		return ret;
	check_warnings(j, eng, line, warn);
	return 0;
}

int job_validate(const struct job *j, void (*warn)(const char *msg), struct err *e)
{
	return job_check(j, NULL, warn, e);
}
