/*
 * workloadcfg.c - a job's options as the workload layer reads them; see
 * workloadcfg.h.
 *
 * The workload's modules read struct workload_job and nothing of struct
 * job: what they need is resolved here once, including what an unset
 * option means to them (zonerange, the flush count, the distribution's
 * sequence), so each reads a value, not a rule.
 */
#include "job/workloadcfg.h"

static void resolve_shape(struct workload_job *wj, const struct job *j)
{
	wj->dist = j->random_distribution;
	wj->dirs = j->dir;
	wj->bs_unaligned = j->bs_unaligned;
	wj->pareto_h = j->pareto_h;
	wj->gauss_dev = j->gauss_dev;
	wj->seq_nr = j->seq_nr;
	wj->seq_add = j->seq_add;
	wj->rw_seq = j->rw_seq;
	wj->number_ios = j->number_ios;
	wj->loops = j->loops;
	if (j->random_distribution == DIST_SEQUENCE) {
		wj->seq = j->seq;
		wj->nseq = j->nseq;
		wj->seq_stride = j->seq_stride;
	}
	if (j->zonemode == ZONE_STRIDED || (j->zonemode == ZONE_UNSET && j->zone_size)) {
		wj->zone_size = j->zone_size;
		/* fio: zonerange unset is zonesize */
		wj->zone_range = j->zone_range ? j->zone_range : j->zone_size;
		wj->zone_skip = j->zone_skip;
	}
}

void workloadcfg_resolve(struct workload_job *wj, const struct job *j)
{
	*wj = (struct workload_job){
		.name = j->name,
		.rw = j->rw,
		.writes = job_writes(j),
		.mixed = job_mixed(j),
		.bs = j->bs,
		.write_bs_max = job_bs_max(j, JOB_DIR_WRITE),

		.prio_set = j->prio_set,
		.prio_class = j->prio_class,
		.prio_level = j->prio_level,
		.cmdprio = j->cmdprio,

		.dedupe_pct = j->dedupe_pct,
		.dedupe_working_set = j->dedupe_mode == DEDUPE_WORKING_SET,
		.dedupe_ws_pct = j->dedupe_ws_pct,
		.dedupe_global = j->dedupe_global,
		.compress_pct = j->compress_pct,
		.compress_chunk = j->compress_chunk,

		.rwmixread = j->rwmixread,
		.flush_every = j->fsync_every ? j->fsync_every : j->fdatasync_every,
		.verify = j->verify,
		.verifies = job_verifies(j),
		.verify_state_save = j->verify_state_save,
		.verify_pattern = j->verify_pattern,

		.ioengine = j->ioengine,
		.filename = j->filename,
		.directory = j->directory,
		.numjobs = j->numjobs,
		.nrfiles = j->nrfiles,
		.offset = j->offset,
		.size = j->size,
		.size_pct = j->size_pct,
		.filesize = j->filesize,
	};
	resolve_shape(wj, j);
}
