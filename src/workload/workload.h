/*
 * workload.h - what the workload layer sees of a job (struct
 * workload_job): the options its modules act on, resolved once from the
 * job by the layer that owns it (job/workloadcfg.c), as an engine sees
 * struct engine_job. Nothing in workload/ reads more of a job; a module
 * here that needs another option gets a field here and a line in the
 * resolver.
 *
 * Pointers point into the job, which outlives every reader (a job is
 * immutable once parsed).
 *
 * Here too is the workload's vocabulary, which the job file's options
 * are parsed into and the job itself (job/job.h) is typed with: the
 * access pattern, the distributions, the checksums, a direction's
 * request shape and its per-request priorities.
 */
#ifndef FAULTLINE_WORKLOAD_H
#define FAULTLINE_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

/* Reads first, then the writes and mixes (job/job.h's job_writes()),
 * then fio's trims (job_trims(); they change the target, so job_writes()
 * holds for them too: safety checks, O_RDWR, the writing loops' state). */
enum rw_mode { RW_READ, RW_RANDREAD, RW_WRITE, RW_RANDWRITE, RW_RW, RW_RANDRW,
	       RW_TRIM, RW_RANDTRIM, RW_TRIMWRITE, RW_RANDTRIMWRITE };
enum scan_mode { SCAN_SHARED, SCAN_PARTITIONED };
enum touch_mode { TOUCH_COPY, TOUCH_PAGE, TOUCH_STRIDE, TOUCH_ALL };

/* random_distribution (fio's names; gauss is normal). */
enum dist_mode { DIST_RANDOM, DIST_ZIPF, DIST_PARETO, DIST_GAUSS, DIST_ZONED, DIST_ZONED_ABS,
		 DIST_SEQUENCE };

/* rw_sequencer: what the requests between rw=randread:N's random ones do. */
enum rw_seq_mode { RW_SEQ_SEQUENTIAL, RW_SEQ_IDENTICAL };

enum fst_mode { FST_ROUNDROBIN, FST_RANDOM, FST_SEQUENTIAL };

/* verify=: fio's checksums (checksum.h); the value is also the type
 * byte of a written block's header (blockdata.h), so never reorder. */
enum verify_mode { VERIFY_NONE, VERIFY_CRC32C, VERIFY_CRC64, VERIFY_CRC32, VERIFY_CRC16,
		   VERIFY_CRC7, VERIFY_MD5, VERIFY_SHA1, VERIFY_SHA256, VERIFY_SHA512,
		   VERIFY_SHA3_224, VERIFY_SHA3_256, VERIFY_SHA3_384, VERIFY_SHA3_512,
		   VERIFY_XXHASH, VERIFY_MODES };
/* verify=pattern (or verify_pattern alone, as fio): blocks hold
 * verify_pattern and no header, and are checked byte for byte. Never a
 * header's type byte, so it sits past the checksums. */
#define VERIFY_PATTERN ((enum verify_mode)VERIFY_MODES)

/* fio's limits: BSSPLIT_MAX, ZONESPLIT_MAX. */
#define JOB_BSSPLIT_MAX	64
#define JOB_ZONES_MAX	256

/* Directions of the per-direction options (fio's DDIR_READ, DDIR_WRITE;
 * fio's third value, for trims, is parsed and dropped). */
#define JOB_DIR_READ	0
#define JOB_DIR_WRITE	1

/* cmdprio_bssplit: for requests of @bs, which share gets which ioprio
 * (fio's cmdprio_bsprio). */
#define JOB_CMDPRIO_BS_MAX	16
#define JOB_CMDPRIO_PRIOS_MAX	8
struct job_bsprio {
	uint64_t bs;
	unsigned n;
	unsigned tot;				/* the shares added up (<= 100) */
	uint8_t perc[JOB_CMDPRIO_PRIOS_MAX];
	int32_t prio[JOB_CMDPRIO_PRIOS_MAX];	/* ioprio value, -1: cmdprio_class/cmdprio */
};

/* One direction's per-request priority (fio's cmdprio options). */
struct job_cmdprio {
	unsigned perc;			/* cmdprio_percentage (0: none) */
	unsigned cls, level;		/* cmdprio_class (0: fio's default, 1 realtime), cmdprio */
	unsigned nbs;			/* cmdprio_bssplit entries, by size */
	struct job_bsprio bs[JOB_CMDPRIO_BS_MAX];
};

struct job_bssplit {
	uint64_t bs;
	unsigned perc;
};

/* A zone of random_distribution=zoned (size_pct) or zoned_abs (size). */
struct job_zone {
	unsigned access;	/* % of the accesses */
	unsigned size_pct;	/* zoned: % of the region */
	uint64_t size;		/* zoned_abs: bytes */
};

/* One direction's request shape (gen.c) and pace (run/pace.c). */
struct job_dir {
	uint64_t bs_min, bs_max;	/* bsrange or bssplit; 0 = bs */
	uint64_t ba;			/* blockalign; 0 = the smallest size */
	unsigned nsplit;		/* bssplit entries, sorted by share (as fio) */
	struct job_bssplit split[JOB_BSSPLIT_MAX];
	unsigned nzones;		/* zoned, zoned_abs */
	struct job_zone zones[JOB_ZONES_MAX];
	unsigned perc_random;		/* percentage_random (100) */
	uint64_t rate, rate_iops;	/* bytes/s, requests/s per thread; 0 = unpaced */
	uint64_t rate_min, rate_iops_min;	/* below this per rate_cycle: the job fails */
};

/* What a job's rw= asks for. */
static inline bool job_rw_random(enum rw_mode rw)
{
	return rw == RW_RANDREAD || rw == RW_RANDWRITE || rw == RW_RANDRW || rw == RW_RANDTRIM ||
	       rw == RW_RANDTRIMWRITE;
}

/* What the workload layer sees of one job. */
struct workload_job {
	const char *name;		/* the job's name, for messages and scratch files */

	/* The requests. */
	enum rw_mode rw;
	bool writes;			/* the job changes its targets (writes, mixes, trims) */
	bool mixed;			/* rw=rw, randrw: each request reads or writes */
	uint64_t bs;
	uint64_t write_bs_max;		/* the largest write (bs, or the write
					 * direction's bsrange/bssplit top) */

	/* fio's shapes (gen.c's shaped path; gen_config_shape): all zero
	 * or NULL is the plain generator. */
	enum dist_mode dist;		/* random_distribution */
	const struct job_dir *dirs;	/* [2]: sizes, zones, percentage_random
					 * per direction (reads, writes) */
	bool bs_unaligned;
	double pareto_h, gauss_dev;
	unsigned seq_nr;		/* rw=randread:N */
	int64_t seq_add;		/* rw=read:N */
	enum rw_seq_mode rw_seq;
	uint64_t number_ios;
	unsigned loops;
	/* random_distribution=sequence's block indices; NULL and 0 under
	 * any other distribution. */
	const uint32_t *seq;
	unsigned nseq;
	bool seq_stride;
	/* zonemode=strided (or zonesize alone, with zonemode unset);
	 * zone_range is zonesize when zonerange is unset; 0 = off. */
	uint64_t zone_size, zone_range, zone_skip;

	/* I/O priorities (prio.c). */
	bool prio_set;			/* prioclass or prio given */
	unsigned prio_class, prio_level;
	const struct job_cmdprio *cmdprio;	/* [2]: per direction */

	/* fio's write contents (content.c); both percentages 0: none. */
	unsigned dedupe_pct;		/* dedupe_percentage */
	bool dedupe_working_set;	/* dedupe_mode=working_set, else repeat */
	unsigned dedupe_ws_pct;		/* dedupe_working_set_percentage */
	bool dedupe_global;
	unsigned compress_pct;		/* buffer_compress_percentage */
	uint64_t compress_chunk;	/* buffer_compress_chunk; 0: 512 */

	/* Writes and their check (writes.c, verify.c). */
	unsigned rwmixread;		/* % of a mixed job's requests that read */
	unsigned flush_every;		/* fsync=N, else fdatasync=N; 0 = neither */
	enum verify_mode verify;	/* verify=: the checksum written blocks carry */
	bool verifies;			/* verify= with do_verify: blocks are checked */
	bool verify_state_save;		/* a state file names the blocks written */
	const char *verify_pattern;	/* as written, or NULL */

	/* Where the job's targets are, as a run resolves them (faultline
	 * --verify reads them back without a run). */
	const char *ioengine;
	const char *filename;		/* "a:b:c", or NULL for scratch files */
	const char *directory;		/* the scratch files' directory, NULL: "." */
	unsigned numjobs, nrfiles;
	uint64_t offset;
	uint64_t size;			/* 0 = the whole target */
	unsigned size_pct;		/* size=N%, 0 = unused */
	uint64_t filesize;		/* a scratch file's, 0 = size / nrfiles */
};

#endif
