/*
 * options.c - the option table and the value parsers behind it.
 *
 * option_table is the single source of truth: jobfile.c parses through
 * it, option_defaults applies its defaults, out/jobtext.c prints it, json_out
 * and the man-page test iterate it. Numbers follow fio's rules (units,
 * arithmetic, $pagesize, $mb_memory, $ncpus) and are read by optval.c;
 * this file says which options take which kind and what is allowed.
 */
#include "job/options.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engines/engine.h"
#include "engines/vmcache.h"
#include "job/optio.h"
#include "job/optverify.h"
#include "job/optqueue.h"
#include "workload/checksum.h"
#include "job/optset.h"
#include "job/optrun.h"
#include "job/optshape.h"
#include "job/optval.h"
#include "job/suggest.h"
#include "workload/iolog.h"

/* Enum fields are stored through an int pointer. */
_Static_assert(sizeof(enum rw_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum madv_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum prefetch_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum sync_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum verify_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum pool_io_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum exit_what_mode) == sizeof(int), "enum size");

/* ------------------------------------------------------------------ */
/* custom parsers */

static const char *const rw_names[] = { "read", "randread", "write", "randwrite", "rw", "randrw",
				       "trim", "randtrim", "trimwrite", "randtrimwrite", NULL };
static const char *const fst_names[] = { "roundrobin", "random", "sequential", NULL };
static const char *const madv_names[] = { "normal", "random", "sequential", "willneed",
					  "hugepage", NULL };
static const char *const fadv_names[] = { "normal", "random", "sequential", NULL };
static const char *const touch_names[] = { "copy", "page", "stride:N", "all", NULL };
static const char *const scan_names[] = { "shared", "partitioned", NULL };
static const char *const dist_names[] = { "random", "zipf:THETA", "pareto:H", "normal:P",
					  "zoned:...", "zoned_abs:...", "sequence:...", NULL };
static const char *const prefetch_names[] = { "none", "willneed:W", "populate:W", "touch:W",
					      "readahead:W", NULL };
static const char *const pool_io_names[] = { "io_uring", "psync", NULL };

/* size=N or size=N% (a percentage of each target, as fio). */
static int parse_size(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	uint64_t v;
	bool pct;
	int ret = num_parse(c, val, OPTVAL_SIZE, &v, &pct, e);

	(void)o;
	if (ret)
		return ret;
	if (pct && (v < 1 || v > 100))
		return opt_fail(c, val, e, "a percentage must be 1%% to 100%%");
	j->size = pct ? 0 : v;
	j->size_pct = pct ? (unsigned)v : 0;
	return 0;
}

/* rw=: reads, writes and mixes, and fio's trims. */
static int parse_rw(struct job *j, const struct option_def *o, const char *val,
		    const struct option_ctx *c, struct err *e)
{
	const char *colon = NULL, *full = val;
	char base[32];
	int v;
	/* fio's offset modifier, rw=randread:8 or rw=read:-8k (optshape.c). */
	if (val && (colon = strchr(val, ':'))) {
		snprintf(base, sizeof(base), "%.*s", (int)(colon - val), val);
		val = base;
	}
	/* fio's value alias, as the option itself has one. */
	if (val && !strcmp(val, "readwrite"))
		val = "rw";
	if (enum_parse(o, c, val, &v, e))
		return -EINVAL;
	j->rw = (enum rw_mode)v;
	j->seq_nr = 1;
	j->seq_add = 0;
	if (colon)
		return optshape_rw_postfix(j, full, colon + 1, c, e);
	return 0;
}

/* rwmixwrite=N is fio's other way to say rwmixread=100-N. */
static int parse_rwmixwrite(struct job *j, const struct option_def *o, const char *val,
			    const struct option_ctx *c, struct err *e)
{
	uint64_t v;

	(void)o;
	if (num_parse(c, val, OPTVAL_SIZE, &v, NULL, e))
		return -EINVAL;
	if (v > 100)
		return opt_fail(c, val, e, "a percentage, 0 to 100");
	j->rwmixread = 100 - (unsigned)v;
	return 0;
}

/*
 * sync=: fio's values. sync=1 is the O_DSYNC open (every
 * write durable, data only); fio's sync=1 is O_SYNC, which also waits
 * for the inode's timestamps, and faultline gives that for the word
 * "sync", so a fio job that means O_SYNC can still say it.
 */
static int parse_sync(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	(void)o;
	if (val && (!strcmp(val, "0") || !strcmp(val, "none")))
		j->sync = SYNC_NONE;
	else if (!val || !strcmp(val, "1") || !strcmp(val, "dsync"))
		j->sync = SYNC_DSYNC;
	else if (!strcmp(val, "sync"))
		j->sync = SYNC_SYNC;
	else
		return opt_fail(c, val, e, "expected 0 (none), 1 or dsync (O_DSYNC), or sync (O_SYNC)");
	return 0;
}

/* verify=: fio's checksums (workload/checksum.h), crc32c-intel being
 * crc32c; meta, fio's header check, is what every verify here does (the
 * header's offset, generation and length are always checked), with
 * crc32c. fio's pattern and null modes are refused as fio's unknown
 * options are. */
static int parse_verify(struct job *j, const struct option_def *o, const char *val,
			const struct option_ctx *c, struct err *e)
{
	int m;

	(void)o;
	if (val && !strcmp(val, "meta")) {
		j->verify = VERIFY_CRC32C;
		return 0;
	}
	m = val ? checksum_by_name(val) : -1;
	if (m >= 0) {
		j->verify = (enum verify_mode)m;
		return 0;
	}
	if (val && !strcmp(val, "pattern")) {
		j->verify = VERIFY_PATTERN;
		return 0;
	}
	if (val && !strcmp(val, "null"))
		return opt_fail(c, val, e, "%s is an fio option value faultline does not "
				"support: faultline's blocks carry their own header and checksum", val);
	return opt_fail(c, val, e, "expected 0, crc32c (crc32c-intel), crc64, crc32, crc16, crc7, "
			"md5, sha1, sha256, sha512, sha3-224, sha3-256, sha3-384, sha3-512, "
			"xxhash, meta or pattern");
}

static int parse_ioengine(struct job *j, const struct option_def *o, const char *val,
			  const struct option_ctx *c, struct err *e)
{
	const struct engine_ops *const *l = engine_list();
	const char *canon = val ? engine_canonical(val) : NULL;
	char list[256];
	size_t off = 0;

	(void)o;
	if (canon) {
		snprintf(j->ioengine, sizeof(j->ioengine), "%s", canon);
		return 0;
	}
	list[0] = '\0';
	for (int i = 0; l[i] && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					i ? ", " : "", l[i]->name);
	return opt_fail(c, val, e, "unknown engine; faultline has %s (sync and pread "
			"are fio's names for psync)", list);
}

static int parse_touch(struct job *j, const struct option_def *o, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	struct option_ctx sub = *c;
	uint64_t n;
	int v;

	if (val && !strncmp(val, "stride:", 7)) {
		sub.key = "touch=stride:N, N";
		if (num_parse(&sub, val + 7, OPTVAL_SIZE, &n, NULL, e))
			return -EINVAL;
		if (n < 1)
			return opt_fail(c, val, e, "the stride must be at least 1 byte");
		j->touch = TOUCH_STRIDE;
		j->touch_stride = n;
		return 0;
	}
	if (val && !strcmp(val, "stride:N"))
		val = "";	/* the help's placeholder is not a value */
	if (enum_parse(o, c, val, &v, e))
		return -EINVAL;
	j->touch = (enum touch_mode)v;
	j->touch_stride = 0;
	return 0;
}

/* iodepth_batch_submit=auto|N (alias iodepth_batch): 0 means iodepth, as in fio. */
static int parse_batch(struct job *j, const struct option_def *o, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	uint64_t n;

	(void)o;
	if (val && !strcmp(val, "auto")) {
		j->iodepth_batch = IODEPTH_BATCH_AUTO;
		return 0;
	}
	if (num_parse(c, val, OPTVAL_SIZE, &n, NULL, e))
		return -EINVAL;
	if (n > 4096)
		return opt_fail(c, val, e, "must be auto or 0 to 4096 (0: iodepth)");
	j->iodepth_batch = (unsigned)n;
	return 0;
}

/* A prefetch window below a page prefetches nothing. */
#define PREFETCH_WINDOW_MIN 4096

/* prefetch=none or MODE:W, W a size. */
static int parse_prefetch(struct job *j, const struct option_def *o, const char *val,
			  const struct option_ctx *c, struct err *e)
{
	struct option_ctx sub = *c;
	const char *colon = val ? strchr(val, ':') : NULL;
	uint64_t w;

	if (val && !strcmp(val, "none")) {
		j->prefetch = PREFETCH_NONE;
		j->prefetch_window = 0;
		return 0;
	}
	for (int i = 1; val && o->values[i]; i++) {
		size_t n = strcspn(o->values[i], ":");

		if (strncmp(val, o->values[i], n) || (val[n] && val[n] != ':'))
			continue;
		if (!colon || !colon[1])
			return opt_fail(c, val, e, "needs a window: %.*s:W with W a size, e.g. %.*s:16m",
					(int)n, val, (int)n, val);
		sub.key = "prefetch window W";
		if (num_parse(&sub, colon + 1, OPTVAL_SIZE, &w, NULL, e))
			return -EINVAL;
		if (w < PREFETCH_WINDOW_MIN)
			return opt_fail(c, val, e, "the window must be at least 4k (one page)");
		j->prefetch = (enum prefetch_mode)i;
		j->prefetch_window = w;
		return 0;
	}
	return opt_fail(c, val, e, "expected none, willneed:W, populate:W, touch:W or readahead:W "
			"(W a size such as 16m)");
}

/* fio's default zipf theta when none is given (FIO_DEF_ZIPF). */
#define ZIPF_THETA_DEFAULT 1.1

static int parse_dist(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	double theta = ZIPF_THETA_DEFAULT;
	char *end;
	int ret;

	(void)o;
	if (val && !strcmp(val, "random")) {
		j->random_distribution = DIST_RANDOM;
		return 0;
	}
	if (val && !strncmp(val, "zipf", 4) && (!val[4] || val[4] == ':')) {
		if (val[4]) {
			errno = 0;
			theta = strtod(val + 5, &end);
			if (end == val + 5 || *end || errno)
				return opt_fail(c, val, e, "zipf:THETA needs a number THETA > 0, "
						"e.g. zipf:1.2 (fio's centre argument is not supported)");
		}
		/* gen.c's rejection-inversion sampler takes any theta > 0,
		 * 1 included (fio refuses 1 only for its own zeta method). */
		if (!(theta > 0) || !isfinite(theta))
			return opt_fail(c, val, e, "zipf theta must be > 0, e.g. zipf:1.2");
		j->random_distribution = DIST_ZIPF;
		j->zipf_theta = theta;
		return 0;
	}
	ret = optshape_dist(j, val, c, e);
	if (ret <= 0)
		return ret;
	return opt_fail(c, val, e, "expected random, zipf:THETA, pareto:H, normal:P (gauss:P), "
			"zoned:ACC/PCT:..., zoned_abs:ACC/SIZE:... or sequence:I,J,...");
}

static int parse_randseed(struct job *j, const struct option_def *o, const char *val,
			  const struct option_ctx *c, struct err *e)
{
	int ret = set_u64_bounded(j, o, val, c, OPTVAL_SIZE, e);

	if (!ret)
		j->randseed_set = true;
	return ret;
}

/* replay_skip=read,write,trim,sync (fio's list). */
static int parse_replay_skip(struct job *j, const struct option_def *o, const char *val,
			     const struct option_ctx *c, struct err *e)
{
	struct err pe = { 0 };

	(void)o;
	if (!val || replay_skip_parse(val, &j->replay_skip, &pe))
		return opt_fail(c, val, e, "expected a comma-separated list of read, write, trim, sync");
	return 0;
}

/* replay_align: a power of two, as fio requires (0: off). */
static int parse_replay_align(struct job *j, const struct option_def *o, const char *val,
			      const struct option_ctx *c, struct err *e)
{
	int ret = set_u64_bounded(j, o, val, c, OPTVAL_SIZE, e);

	if (!ret && (j->replay_align & (j->replay_align - 1)))
		return opt_fail(c, val, e, "expected a power of two (or 0: off)");
	return ret;
}

/* "0-3,5,8-9": numbers and ranges, as cpus_allowed and numa node lists. */
static bool id_list_ok(const char *s)
{
	char *end;

	if (!*s)
		return false;
	for (;;) {
		long a, b;

		if (!isdigit((unsigned char)*s))
			return false;
		a = strtol(s, &end, 10);
		b = a;
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				return false;
			b = strtol(s, &end, 10);
		}
		if (a > b || b > INT_MAX / 2)
			return false;
		if (!*end)
			return true;
		if (*end != ',')
			return false;
		s = end + 1;
	}
}

static int parse_cpus(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	if (!val || !id_list_ok(val))
		return opt_fail(c, val, e, "expected a CPU list such as 0-3,5 (ranges low-high)");
	return set_str(j, o, val, c, e);
}

static int parse_nodes(struct job *j, const struct option_def *o, const char *val,
		       const struct option_ctx *c, struct err *e)
{
	if (!val || (strcmp(val, "all") && !id_list_ok(val)))
		return opt_fail(c, val, e, "expected all or a node list such as 0-1,3");
	return set_str(j, o, val, c, e);
}

/* fio's numa_mem_policy: default, local, prefer:N, bind:LIST, interleave:LIST. */
static int parse_mempolicy(struct job *j, const struct option_def *o, const char *val,
			   const struct option_ctx *c, struct err *e)
{
	bool ok = false;

	if (val && (!strcmp(val, "default") || !strcmp(val, "local")))
		ok = true;
	else if (val && !strncmp(val, "prefer:", 7))
		ok = id_list_ok(val + 7) && !strpbrk(val + 7, ",-");
	else if (val && !strncmp(val, "bind:", 5))
		ok = id_list_ok(val + 5);
	else if (val && !strncmp(val, "interleave:", 11))
		ok = id_list_ok(val + 11);
	if (!ok)
		return opt_fail(c, val, e, "expected default, local, prefer:N, bind:NODES "
				"or interleave:NODES (NODES such as 0-1,3)");
	return set_str(j, o, val, c, e);
}

/*
 * fio options that change nothing for a read job here, accepted so fio
 * job files run unchanged and recorded so --parse-only can say so:
 *   group_reporting faultline reports a job's threads together anyway;
 *   new_group       it has no reporting groups to start
 *   norandommap     random offsets are drawn with replacement, never
 *                   from a map: what norandommap asks for
 *   randrepeat      offsets repeat only with randseed=N; a job without
 *                   it gets a fresh seed, whatever randrepeat says
 *   description     a comment
 * (name= in [global] is the seventh, see parse_name.) gtod_reduce is
 * not among them: it turns the latency histogram off.
 */
static int parse_noop(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	bool b = true;

	if (o->noop != FIO_NOOP_DESCRIPTION && o->noop != FIO_NOOP_THREADS &&
	    bool_parse(c, val, &b, e))
		return -EINVAL;
	j->src.fio_noops |= o->noop;
	return 0;
}

/* fio's gtod_reduce switches latency measurement off; so does it here. */
static int parse_gtod(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	bool b;

	(void)o;
	if (bool_parse(c, val, &b, e))
		return -EINVAL;
	if (b)
		j->latency = false;
	return 0;
}

/* name= renames a job (as fio); in [global] jobs take their section's
 * name anyway, so it is accepted there with no effect. */
static int parse_name(struct job *j, const struct option_def *o, const char *val,
		      const struct option_ctx *c, struct err *e)
{
	int ret;

	/* It names scratch files: <dir>/<job>.<n>.<file>. */
	if (strchr(val, '/'))
		return opt_fail(c, val, e, "a job name cannot contain '/' (it names scratch files)");
	ret = set_by_type(j, o, val, c, e);

	if (!ret && c->global)
		j->src.fio_noops |= FIO_NOOP_NAME;
	return ret;
}

/*
 * fio's write_bw_log, write_iops_log, write_lat_log: a file name prefix,
 * or a bare key for the job's name (kept as "", resolved when the files
 * are made, as a later name= may rename the job).
 */
static int parse_log_prefix(struct job *j, const struct option_def *o, const char *val,
			    const struct option_ctx *c, struct err *e)
{
	char **p = opt_field(j, o), *s;

	(void)c;
	s = strdup(val ? val : "");
	if (!s)
		return err_set(e, ENOMEM, "out of memory");
	free(*p);
	*p = s;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the table */

#define OFF(f) offsetof(struct job, f)

/* Upper bounds that catch a slipped unit (numjobs=1m) before it
 * becomes a million threads or files. */
#define THREADS_MAX 65536
#define FILES_MAX 65536
/* A loop's streams each hold request slots (uint16 slot numbers); as
 * many as iodepth allows. */
#define LOOP_MAX 4096
/* Requests carry a 32-bit length and Linux moves at most ~2 GiB per
 * read (MAX_RW_COUNT); 1 GiB keeps every request whole. */
#define BS_MAX (1ll << 30)
/* The smallest logical block size there is: a pool page below it
 * could never be read with O_DIRECT. */
#define POOL_PAGE_MIN 512
/* Pages a thread may read ahead (pool_prefetch): a ring's worth of reads
 * in flight; the pool must also hold them (jobcheck.c). */
#define POOL_PREFETCH_MAX 1024

const struct option_def option_table[] = {
	{ .name = "name", .type = OPT_NAME, .off = OFF(name), .parse = parse_name,
	  .noop = FIO_NOOP_NAME,
	  .help = "job name (the [section]'s; name= in a job renames it, in [global] it has no effect)" },
	{ .name = "filename", .type = OPT_STR, .off = OFF(filename), .syntax = "path[:path...]",
	  .help = "target: regular file or block device; several, separated by ':', are all used by every thread" },
	{ .name = "directory", .type = OPT_STR, .off = OFF(directory), .syntax = "dir",
	  .help = "where scratch files are made when filename is absent (default: current directory)" },
	{ .name = "nrfiles", .aliases = "nr_files", .type = OPT_INT, .off = OFF(nrfiles),
	  .def = "1", .min = 1, .max = FILES_MAX,
	  .help = "scratch files per thread" },
	{ .name = "filesize", .type = OPT_SIZE, .off = OFF(filesize), .def = "0",
	  .help = "size of each scratch file (0: size / nrfiles)" },
	{ .name = "file_service_type", .type = OPT_ENUM, .off = OFF(file_service_type),
	  .def = "roundrobin", .values = fst_names,
	  .help = "how a thread picks among its targets: in turn, at random, or one after another" },
	{ .name = "size", .type = OPT_SIZE, .off = OFF(size), .def = "0", .parse = parse_size,
	  .syntax = "size or N%",
	  .help = "bytes of each target used (0: whole file or device); required for scratch files" },
	{ .name = "offset", .aliases = "fileoffset", .type = OPT_SIZE, .off = OFF(offset),
	  .def = "0", .help = "start of the region used" },
	{ .name = "io_size", .aliases = "io_limit", .type = OPT_SIZE, .off = OFF(io_size),
	  .def = "0", .help = "stop a thread after this many bytes (0: one pass, or unlimited with time_based)" },
	{ .name = "runtime", .aliases = "timeout", .type = OPT_TIME, .off = OFF(runtime_ns),
	  .def = "0", .help = "stop after this long (0: when the I/O is done)" },
	{ .name = "time_based", .type = OPT_BOOL, .off = OFF(time_based), .def = "0",
	  .help = "run for runtime, starting over when a pass ends" },
	{ .name = "ramp_time", .type = OPT_TIME, .off = OFF(ramp_ns), .def = "0",
	  .help = "warm-up excluded from the totals (kept in the CSV with ramp=1)" },
	{ .name = "startdelay", .type = OPT_TIME, .off = OFF(startdelay_ns), .def = "0",
	  .help = "wait this long before starting the job" },
	{ .name = "rw", .aliases = "readwrite", .type = OPT_ENUM, .off = OFF(rw), .def = "read",
	  .values = rw_names, .parse = parse_rw,
	  .help = "sequential or random reads, writes, or a mix of both (rw, randrw; rwmixread)" },
	{ .name = "bs", .aliases = "blocksize", .type = OPT_SIZE, .off = OFF(bs), .def = "4k",
	  .min = 1, .max = BS_MAX, .parse = optshape_bs, .syntax = "size[,size[,size]]",
	  .help = "request size; READS,WRITES,TRIMS as fio (a size not ended by a comma holds for the directions after it)" },
	{ .name = "ioengine", .type = OPT_CUSTOM, .off = OFF(ioengine), .def = "psync",
	  .parse = parse_ioengine, .syntax = "engine (--cmdhelp=ioengine)",
	  .help = "how bytes arrive: mmap, psync, io_uring, libaio, null, bufpool (sync and pread mean psync)" },
	{ .name = "iodepth", .type = OPT_INT, .off = OFF(iodepth), .def = "1", .min = 1,
	  .max = 4096, .help = "requests in flight per thread (io_uring, libaio)" },
	{ .name = "iodepth_batch_submit", .aliases = "iodepth_batch", .type = OPT_CUSTOM,
	  .off = OFF(iodepth_batch), .def = "auto", .parse = parse_batch, .syntax = "auto|N",
	  .help = "requests handed to the kernel at once (io_uring, libaio); 0 is iodepth; "
		  "auto: 1 with direct=1, iodepth otherwise" },
	{ .name = "direct", .type = OPT_BOOL, .off = OFF(direct), .def = "0",
	  .help = "O_DIRECT for psync, io_uring and libaio; invalid with mmap" },
	{ .name = "buffered", .type = OPT_BOOL, .off = OFF(direct), .inverse = true,
	  .help = "fio's inverse of direct: buffered=0 is direct=1" },
	{ .name = "uncached", .type = OPT_BOOL, .off = OFF(uncached), .def = "0",
	  .help = "buffered reads whose pages are dropped once copied (RWF_DONTCACHE, Linux 6.14+); psync and io_uring" },
	{ .name = "numjobs", .type = OPT_INT, .off = OFF(numjobs), .def = "1", .min = 1,
	  .max = THREADS_MAX, .help = "threads running this job" },
	/* fio's default is processes; faultline's is threads sharing one
	 * mapping, as a database's workers do (man page: thread). */
	{ .name = "thread", .type = OPT_BOOL, .off = OFF(thread), .def = "1",
	  .help = "1: the job's workers are threads sharing one address space (faultline's default); 0: processes, each with its own mapping (fio's default)" },
	{ .name = "madvise", .type = OPT_ENUM, .off = OFF(madvise), .def = "normal",
	  .values = madv_names, .help = "advice on the mapping (mmap)" },
	{ .name = "fadvise", .type = OPT_ENUM, .off = OFF(fadvise), .def = "normal",
	  .values = fadv_names, .help = "posix_fadvise on buffered files (psync, io_uring, libaio)" },
	{ .name = "touch", .type = OPT_ENUM, .off = OFF(touch), .def = "copy",
	  .values = touch_names, .parse = parse_touch,
	  .help = "how data is consumed: memcpy, a byte per 4 KiB page, every Nth byte, or checksum all" },
	{ .name = "scan", .type = OPT_ENUM, .off = OFF(scan), .def = "shared",
	  .values = scan_names,
	  .help = "rw=read: threads share one wrapping cursor, or each scans its own slice" },
	{ .name = "scan_chunk", .type = OPT_SIZE, .off = OFF(scan_chunk), .def = "128m",
	  .min = 1, .help = "piece a thread takes from the shared cursor" },
	{ .name = "randseed", .type = OPT_U64, .off = OFF(randseed), .parse = parse_randseed,
	  .help = "seed: runs with the same seed issue the same offsets (default: a fresh one)" },
	{ .name = "random_distribution", .type = OPT_ENUM, .off = OFF(random_distribution),
	  .def = "random", .values = dist_names, .parse = parse_dist,
	  .syntax = "random|zipf[:THETA]|pareto[:H]|normal[:P]|gauss[:P]|zoned:A/P:...|zoned_abs:A/SIZE:...|sequence:I,J,...",
	  .help = "random offsets: uniform, zipf (theta > 0; 1.1 alone), pareto (0 < H < 1; 0.2), "
		  "normal (deviation P% of the region), zones taking a share of accesses each, "
		  "or a fixed sequence of block indices repeated, as fio" },
	{ .name = "latency", .type = OPT_BOOL, .off = OFF(latency), .def = "1",
	  .help = "per-request latency histogram (log-linear, 1 % precision)" },
	{ .name = "gtod_reduce", .type = OPT_CUSTOM, .parse = parse_gtod, .syntax = "bool",
	  .help = "fio's: gtod_reduce=1 turns latency off" },
	{ .name = "cpus_allowed", .type = OPT_STR, .off = OFF(cpus_allowed), .parse = parse_cpus,
	  .syntax = "CPU list", .help = "pin the job's threads to these CPUs, e.g. 0-3,5" },
	{ .name = "numa_cpu_nodes", .type = OPT_STR, .off = OFF(numa_cpu_nodes),
	  .parse = parse_nodes, .syntax = "node list",
	  .help = "run the job's threads on these NUMA nodes (libnuma)" },
	{ .name = "numa_mem_policy", .type = OPT_STR, .off = OFF(numa_mem_policy),
	  .parse = parse_mempolicy,
	  .syntax = "default|local|prefer:N|bind:NODES|interleave:NODES",
	  .help = "NUMA memory policy of the job's threads (libnuma), as fio" },
	{ .name = "mem_limit", .type = OPT_SIZE, .off = OFF(mem_limit), .def = "0",
	  .help = "run the job in a memory cgroup this large (0: none)" },
	{ .name = "reserve_mem", .type = OPT_SIZE, .off = OFF(reserve_mem), .def = "0",
	  .help = "lock this much anonymous memory while the job runs, so kswapd evicts (0: none)" },
	{ .name = "invalidate", .type = OPT_BOOL, .off = OFF(invalidate), .def = "1",
	  .help = "drop the target's pages from the page cache before the job (cold start)" },
	{ .name = "drop_caches", .type = OPT_BOOL, .off = OFF(drop_caches), .def = "0",
	  .help = "write 3 to /proc/sys/vm/drop_caches before the job (root)" },
	{ .name = "prewarm", .type = OPT_BOOL, .off = OFF(prewarm), .def = "0",
	  .help = "read the whole region once before timing starts (warm start)" },
	{ .name = "overwrite", .type = OPT_BOOL, .off = OFF(overwrite), .def = "0",
	  .help = "a read job may append data to an existing file shorter than offset+size that faultline did not make (default: refused)" },
	{ .name = "allow_file_create", .type = OPT_BOOL, .off = OFF(allow_file_create), .def = "1",
	  .help = "a missing target file may be created and laid out (0: a missing file is an error)" },
	{ .name = "cpu_probe", .type = OPT_BOOL, .off = OFF(cpu_probe), .def = "0",
	  .help = "one extra thread doing fixed CPU work, to show the CPU the I/O leaves" },
	{ .name = "delayacct", .type = OPT_BOOL, .off = OFF(delayacct), .def = "0",
	  .help = "where the threads' time went: the kernel's delay accounting per interval (turned on as root)" },
	{ .name = "wait_for", .type = OPT_STR, .off = OFF(wait_for), .syntax = "job name",
	  .help = "start after that earlier job has ended: a stonewall here, so after every earlier job" },
	{ .name = "stonewall", .aliases = "wait_for_previous", .type = OPT_BOOL,
	  .off = OFF(stonewall), .def = "0",
	  .help = "wait for every earlier job to finish before starting" },
	{ .name = "loop", .type = OPT_INT, .off = OFF(loop), .def = "0", .max = LOOP_MAX,
	  .help = "one thread drives N streams, one per file or N slices of one target, as an event loop (needs numjobs=1; 0: off)" },
	{ .name = "offload", .type = OPT_INT, .off = OFF(offload), .def = "0", .max = THREADS_MAX,
	  .help = "with loop: hand each psync/mmap request to a pool of N helper threads and wait for completions (0: the loop runs them)" },
	{ .name = "offload_permits", .type = OPT_INT, .off = OFF(offload_permits), .def = "0",
	  .max = THREADS_MAX,
	  .help = "with offload: at most N offloaded requests run at once, the permit strategy (0: offload's N)" },
	{ .name = "prefetch", .type = OPT_ENUM, .off = OFF(prefetch), .def = "none",
	  .values = prefetch_names, .parse = parse_prefetch,
	  .syntax = "none|willneed:W|populate:W|touch:W|readahead:W",
	  .help = "mmap, rw=read: keep W bytes ahead of each stream requested (MADV_WILLNEED, MADV_POPULATE_READ, a helper touching pages, readahead(2))" },
	{ .name = "pool_size", .type = OPT_SIZE, .off = OFF(pool_size), .def = "0",
	  .help = "bufpool, vmcache: the pool's memory, shared by the job's threads (required with ioengine=bufpool or vmcache)" },
	{ .name = "pool_page", .type = OPT_SIZE, .off = OFF(pool_page), .def = "4k",
	  .min = POOL_PAGE_MIN, .max = BS_MAX,
	  .help = "bufpool, vmcache: bytes per page, a power of two and a multiple of the logical block size (vmcache: of the base page too); bs must divide it" },
	{ .name = "pool_io", .type = OPT_ENUM, .off = OFF(pool_io), .def = "io_uring",
	  .values = pool_io_names,
	  .help = "bufpool, vmcache: how a miss is read with O_DIRECT: a ring per thread (io_uring) or pread(2) (psync)" },
	{ .name = "pool_prefetch", .type = OPT_INT, .off = OFF(pool_prefetch), .def = "0",
	  .max = POOL_PREFETCH_MAX,
	  .help = "bufpool, read jobs: keep the N pages after each read requested ahead through the thread's io_uring, as a database prefetches a scan's next leaves (0: none)" },
	{ .name = "pool_evict_batch", .type = OPT_INT, .off = OFF(pool_evict_batch), .def = "4",
	  .min = 1, .max = VMCACHE_BATCH_MAX,
	  .help = "vmcache: pages evicted together by the thread whose miss found the pool full, inside that request, their memory given back with one process_madvise(MADV_DONTNEED) (at most half the pool)" },
	{ .name = "rwmixread", .type = OPT_INT, .off = OFF(rwmixread), .def = "50", .max = 100,
	  .help = "rw=rw, randrw: percentage of requests that read, the rest write" },
	{ .name = "rwmixwrite", .type = OPT_CUSTOM, .parse = parse_rwmixwrite, .syntax = "int",
	  .help = "fio's other form: rwmixwrite=N is rwmixread=100-N" },
	{ .name = "fsync", .type = OPT_INT, .off = OFF(fsync_every), .def = "0",
	  .help = "flush after every N writes of a thread: fsync, IORING_OP_FSYNC, msync (0: never)" },
	{ .name = "fdatasync", .type = OPT_INT, .off = OFF(fdatasync_every), .def = "0",
	  .help = "as fsync, data only: fdatasync, IORING_FSYNC_DATASYNC, msync (0: never)" },
	{ .name = "sync_interval", .type = OPT_TIME, .off = OFF(sync_interval_ns), .def = "0",
	  .help = "flush when this long has passed since a thread's last flush, as a checkpointer (0: never)" },
	{ .name = "end_fsync", .type = OPT_BOOL, .off = OFF(end_fsync), .def = "0",
	  .help = "one flush of every target a thread wrote, at its end, timed and counted" },
	{ .name = "sync", .type = OPT_CUSTOM, .off = OFF(sync), .def = "0", .parse = parse_sync,
	  .syntax = "0|1|none|dsync|sync",
	  .help = "write jobs open targets O_DSYNC (1, dsync) or O_SYNC (sync); refused with mmap" },
	{ .name = "verify", .type = OPT_CUSTOM, .off = OFF(verify), .def = "0", .parse = parse_verify,
	  .syntax = "0|crc32c|crc64|crc32|crc16|crc7|md5|sha1|sha256|sha512|sha3-*|xxhash|meta|pattern",
	  .help = "read back every block the job wrote at its end, checked with this checksum (fio's names), count mismatches" },
	{ .name = "allow_destructive", .type = OPT_BOOL, .off = OFF(allow_destructive), .def = "0",
	  .help = "let a write job write a block device that carries a filesystem, partition table or RAID signature" },
	{ .name = "write_bw_log", .type = OPT_STR, .off = OFF(bw_log), .parse = parse_log_prefix,
	  .bare = true, .syntax = "[prefix]",
	  .help = "fio's bandwidth log: <prefix>_bw.<thread>.log, KiB/s per log_avg_msec (bare: the job's name)" },
	{ .name = "write_iops_log", .type = OPT_STR, .off = OFF(iops_log), .parse = parse_log_prefix,
	  .bare = true, .syntax = "[prefix]",
	  .help = "fio's IOPS log: <prefix>_iops.<thread>.log (bare: the job's name)" },
	{ .name = "write_lat_log", .type = OPT_STR, .off = OFF(lat_log), .parse = parse_log_prefix,
	  .bare = true, .syntax = "[prefix]",
	  .help = "fio's latency logs: <prefix>_lat, _clat (mean ns per entry) and _slat (empty) .<thread>.log" },
	{ .name = "log_avg_msec", .type = OPT_INT, .off = OFF(log_avg_msec), .def = "0",
	  .help = "ms each log entry averages; at least the sampling interval (0: one entry per interval; "
		  "faultline never logs each I/O)" },
	{ .name = "per_job_logs", .type = OPT_BOOL, .off = OFF(per_job_logs), .def = "1",
	  .help = "one log file per thread (<prefix>_bw.<thread>.log), else one per prefix (<prefix>_bw.log)" },
	{ .name = "log_offset", .type = OPT_BOOL, .off = OFF(log_offset), .def = "0",
	  .help = "add fio's offset column to the logs (0 in every entry: entries are averages, as fio's)" },
	{ .name = "write_iolog", .type = OPT_STR, .off = OFF(write_iolog), .syntax = "file",
	  .help = "record every request in fio's iolog version 3 (timestamps): FILE, or FILE.N per thread when numjobs > 1" },
	{ .name = "read_iolog", .type = OPT_STR, .off = OFF(read_iolog), .syntax = "file[:file...]",
	  .help = "replay fio iolog version 2 or 3 (or a blktrace file) once: its files are the targets; "
		  "several logs go to the threads in turn; its writes and syncs only with a writing rw=" },
	{ .name = "replay_no_stall", .type = OPT_BOOL, .off = OFF(replay_no_stall), .def = "0",
	  .help = "replay as fast as possible, in the log's order, ignoring its timestamps" },
	{ .name = "replay_time_scale", .type = OPT_INT, .off = OFF(replay_time_scale), .def = "100",
	  .min = 1, .max = 1000000,
	  .help = "replay at this percentage of the logged rate (200: twice as fast, 50: half)" },
	{ .name = "replay_redirect", .type = OPT_STR, .off = OFF(replay_redirect), .syntax = "path",
	  .help = "replay every request onto this one file or device (laid out when missing), whatever the log names" },
	{ .name = "replay_skip", .type = OPT_CUSTOM, .parse = parse_replay_skip, .syntax = "read,write,trim,sync",
	  .help = "leave these kinds of request out of the replay" },
	{ .name = "replay_align", .type = OPT_SIZE, .off = OFF(replay_align), .def = "0",
	  .parse = parse_replay_align,
	  .help = "round replayed offsets down to this power of two (blktrace: lengths up too), 0: off" },
	{ .name = "replay_scale", .type = OPT_U64, .off = OFF(replay_scale), .def = "1", .min = 1,
	  .help = "divide replayed offsets by this factor" },
	{ .name = "group_reporting", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "bool",
	  .noop = FIO_NOOP_GROUP_REPORTING,
	  .help = "fio's; accepted, no effect: a job's threads are always reported together" },
	{ .name = "new_group", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "bool",
	  .noop = FIO_NOOP_NEW_GROUP,
	  .help = "fio's; accepted, no effect: there are no reporting groups" },
	{ .name = "norandommap", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "bool",
	  .noop = FIO_NOOP_NORANDOMMAP,
	  .help = "fio's; accepted, no effect: random offsets never use a map" },
	{ .name = "randrepeat", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "bool",
	  .noop = FIO_NOOP_RANDREPEAT,
	  .help = "fio's; accepted, no effect: offsets repeat only with randseed=N" },
	{ .name = "threads", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "int",
	  .noop = FIO_NOOP_THREADS,
	  .help = "fio's; accepted, no effect: fio takes it silently outside its profiles (examples/steadystate.fio); thread= is the option" },
	{ .name = "description", .type = OPT_CUSTOM, .parse = parse_noop, .syntax = "text",
	  .noop = FIO_NOOP_DESCRIPTION, .help = "fio's; accepted, no effect: a comment" },
	OPTSHAPE_TABLE
	OPTPACE_TABLE
	OPTRUN_TABLE
	OPTIO_TABLE
	OPTIO_PRIO_TABLE
	OPTIO_VERIFY_TABLE
	OPTVERIFY_TABLE
	OPTQUEUE_TABLE
};

const size_t option_count = sizeof(option_table) / sizeof(option_table[0]);

/* ------------------------------------------------------------------ */
/* lookup and setting */

static bool alias_match(const char *aliases, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = aliases; p && *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && !strncmp(p, name, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

const struct option_def *option_find(const char *name)
{
	for (size_t i = 0; i < option_count; i++)
		if (!strcmp(option_table[i].name, name) ||
		    alias_match(option_table[i].aliases, name))
			return &option_table[i];
	return NULL;
}

bool option_is_bool(const struct option_def *o)
{
	return o->type == OPT_BOOL || o->bare || (o->syntax && !strcmp(o->syntax, "bool"));
}

int option_set_ctx(struct job *j, const char *name, const char *val,
		   const struct option_ctx *c, struct err *e)
{
	const struct option_def *o = option_find(name);
	struct option_ctx local = { 0 };

	if (c)
		local = *c;
	local.key = name;
	if (!o)
		return err_set(e, EINVAL, "unknown option '%s'%s%s", name,
			       local.where ? " at " : "", local.where ? local.where : "");
	if (!val && !option_is_bool(o))
		return opt_fail(&local, val, e, "needs a value (%s=VALUE); only boolean "
				"options may stand alone", name);
	if (o->parse)
		return o->parse(j, o, val, &local, e);
	return set_by_type(j, o, val, &local, e);
}

int option_set(struct job *j, const char *name, const char *val, struct err *e)
{
	return option_set_ctx(j, name, val, NULL, e);
}

void option_defaults(struct job *j)
{
	struct err e;

	memset(j, 0, sizeof(*j));
	for (size_t i = 0; i < option_count; i++) {
		int ret;

		if (!option_table[i].def)
			continue;
		ret = option_set(j, option_table[i].name, option_table[i].def, &e);
		assert(ret == 0 && "option_table default does not parse");
		(void)ret;
	}
}

void option_release(struct job *j)
{
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];

		if (o->type == OPT_STR) {
			char **p = opt_field(j, o);

			free(*p);
			*p = NULL;
		}
	}
}

int option_copy(struct job *dst, const struct job *src)
{
	memcpy(dst, src, sizeof(*dst));
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];
		char **p;

		if (o->type != OPT_STR)
			continue;
		p = opt_field(dst, o);
		if (*p && !(*p = strdup(*p)))
			goto out_nomem;
	}
	return 0;
out_nomem:
	/* Strings not yet copied still point into @src: forget them. */
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];
		char **p = opt_field(dst, o), *const *s = (char *const *)((const char *)src + o->off);

		if (o->type == OPT_STR && *p == *s)
			*p = NULL;
	}
	option_release(dst);
	return -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* formatting */

/* A write_*_log given as a bare key (kept as ""). */
static bool log_prefix_bare(const struct job *j, const struct option_def *o)
{
	const char *p = *(char *const *)((const char *)j + o->off);

	return p && !*p;
}

static int fmt_special(const struct job *j, const struct option_def *o, char *buf,
		       size_t len)
{
	if (o->parse == parse_touch && j->touch == TOUCH_STRIDE)
		snprintf(buf, len, "stride:%llu", (unsigned long long)j->touch_stride);
	else if (o->parse == parse_dist && j->random_distribution == DIST_ZIPF)
		snprintf(buf, len, "zipf:%g", j->zipf_theta);
	else if (o->parse == parse_dist && optshape_fmt_dist(j, buf, len))
		;
	else if (o->parse == parse_rw && j->seq_add) {
		char sz[32];

		optval_fmt_size(sz, sizeof(sz), j->seq_add < 0 ? (uint64_t)-j->seq_add : (uint64_t)j->seq_add);
		snprintf(buf, len, "%s:%s%s", rw_names[j->rw], j->seq_add < 0 ? "-" : "", sz);
	} else if (o->parse == parse_rw && j->seq_nr > 1)
		snprintf(buf, len, "%s:%u", rw_names[j->rw], j->seq_nr);
	else if (o->parse == parse_prefetch && j->prefetch != PREFETCH_NONE) {
		char w[32];

		optval_fmt_size(w, sizeof(w), j->prefetch_window);
		snprintf(buf, len, "%.*s:%s", (int)strcspn(prefetch_names[j->prefetch], ":"),
			 prefetch_names[j->prefetch], w);
	} else if (o->parse == parse_size && j->size_pct)
		snprintf(buf, len, "%u%%", j->size_pct);
	else if (o->parse == parse_randseed && !j->randseed_set)
		return 0;
	else if (o->parse == parse_ioengine)
		snprintf(buf, len, "%s", j->ioengine);
	else if (o->parse == parse_log_prefix && log_prefix_bare(j, o))
		snprintf(buf, len, "%s", j->name);	/* what a bare key means */
	else if (o->parse == parse_batch && j->iodepth_batch == IODEPTH_BATCH_AUTO)
		snprintf(buf, len, "auto");
	else if (o->parse == parse_batch)
		snprintf(buf, len, "%u", j->iodepth_batch);
	else if (o->parse == parse_sync)
		snprintf(buf, len, "%s", j->sync == SYNC_NONE ? "0" : j->sync == SYNC_DSYNC ? "dsync" : "sync");
	else if (o->parse == parse_verify)
		snprintf(buf, len, "%s", j->verify == VERIFY_NONE ? "0" : checksum_name(j->verify));
	else
		return -1;
	return 1;
}

int option_format(const struct job *j, const struct option_def *o, char *buf, size_t len)
{
	const void *p = (const char *)j + o->off;
	int ret = fmt_special(j, o, buf, len);

	if (ret >= 0)
		return ret;
	ret = optshape_fmt(j, o, buf, len);
	if (ret >= 0)
		return ret;
	ret = optrun_fmt(j, o, buf, len);
	if (ret >= 0)
		return ret;
	ret = optio_fmt(j, o, buf, len);
	if (ret >= 0)
		return ret;
	switch (o->type) {
	case OPT_STR:
		if (!*(char *const *)p)
			return 0;
		snprintf(buf, len, "%s", *(char *const *)p);
		return 1;
	case OPT_NAME:
		snprintf(buf, len, "%s", (const char *)p);
		return buf[0] != '\0';
	case OPT_INT:
		snprintf(buf, len, "%u", *(const unsigned *)p);
		return 1;
	case OPT_U64:
		snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)p);
		return 1;
	case OPT_SIZE:
		optval_fmt_size(buf, len, *(const uint64_t *)p);
		return 1;
	case OPT_TIME:
		optval_fmt_time(buf, len, *(const uint64_t *)p);
		return 1;
	case OPT_BOOL:
		snprintf(buf, len, "%d", o->inverse != *(const bool *)p);
		return 1;
	case OPT_ENUM:
		snprintf(buf, len, "%s", o->values[*(const int *)p]);
		return 1;
	case OPT_CUSTOM:
		return 0;	/* fio no-ops and gtod_reduce hold no value */
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* did you mean */

const char *option_suggest(const char *name)
{
	static char out[SUGGEST_LEN_MAX + 1];
	struct suggest s;

	suggest_init(&s, name);
	for (size_t i = 0; i < option_count; i++) {
		const char *a = option_table[i].aliases;

		suggest_offer(&s, option_table[i].name, strlen(option_table[i].name));
		while (a && *a) {
			size_t len = strcspn(a, ",");

			suggest_offer(&s, a, len);
			a += len + (a[len] == ',');
		}
	}
	return suggest_result(&s, out, sizeof(out));
}
