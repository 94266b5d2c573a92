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
 */
#ifndef FAULTLINE_WORKLOAD_H
#define FAULTLINE_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/job.h"

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
