/*
 * outjob.c - a job as the writers see it; see outjob.h.
 */
#include "out/outjob.h"

#include <string.h>

void out_job_set(struct out_job *o, const struct job *j)
{
	memset(o, 0, sizeof(*o));
	memcpy(o->name, j->name, sizeof(o->name));
	memcpy(o->ioengine, j->ioengine, sizeof(o->ioengine));
	o->rw = j->rw;
	o->bs = j->bs;
	o->iodepth = j->iodepth;
	o->numjobs = j->numjobs;
	o->direct = j->direct;
	o->stonewall = j->stonewall;
	o->delayacct = j->delayacct;
	o->continue_on_error = j->continue_on_error;

	o->touch = j->touch;
	o->touch_stride = j->touch_stride;
	o->madvise = j->madvise;
	o->fadvise = j->fadvise;

	o->loop = j->loop;
	o->offload_permits = j->offload_permits;
	o->prefetch = j->prefetch;
	o->prefetch_window = j->prefetch_window;

	o->rwmixread = j->rwmixread;
	o->fsync_every = j->fsync_every;
	o->fdatasync_every = j->fdatasync_every;
	o->sync_interval_ns = j->sync_interval_ns;
	o->end_fsync = j->end_fsync;
	o->sync = j->sync;
	o->verify = j->verify;

	o->pool_size = j->pool_size;
	o->pool_page = j->pool_page;
	o->pool_io = j->pool_io;
	o->pool_prefetch = j->pool_prefetch;

	o->read_iolog = j->read_iolog;
	o->write_iolog = j->write_iolog;
	o->replay_redirect = j->replay_redirect;
	o->replay_time_scale = j->replay_time_scale;
	o->replay_no_stall = j->replay_no_stall;

	o->ss_metric = j->ss_metric;
	o->ss_slope = j->ss_slope;
	o->ss_pct = j->ss_pct;
	o->ss_limit = j->ss_limit;
	o->ss_dur_ns = j->ss_dur_ns;
	o->latency_target_ns = j->latency_target_ns;
	o->latency_window_ns = j->latency_window_ns;
	o->latency_percentile = j->latency_percentile;

	o->reads = job_reads(j);
	o->writes = job_writes(j);
	o->writes_data = job_writes_data(j);
	o->mixed = job_mixed(j);
	o->trims = job_trims(j);
	o->flushes = job_flushes(j);
	o->flush_datasync = job_flush_datasync(j);
	o->paced = job_paced(j);
}
