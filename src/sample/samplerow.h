/*
 * samplerow.h - one CSV row per job per interval (samplerow.c), and what
 * the sampler's other files lend it: sampler.c (the lifecycle) and
 * samplerend.c (totals, a sample's cost). The state is samplebase.h's.
 */
#ifndef FAULTLINE_SAMPLEROW_H
#define FAULTLINE_SAMPLEROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample/samplebase.h"

/* What a sample cost (samplerend.c): the calling thread's use now and
 * since @from (added into @acc); a sample at boundary @now that took
 * @wall_ns, @used of the thread's, recorded for the run's totals. */
void sampler_self_now(struct sampler_self *u);
void sampler_self_since(struct sampler_self *acc, const struct sampler_self *from);
void sampler_cost_add(struct sampler *s, uint64_t now, uint64_t wall_ns, const struct sampler_self *used);
/* One CSV line, whole or not at all (csvout.c): gathered with the
 * sample's others until sampler_flush. */
void sampler_csv_write(struct sampler *s, const char *line, size_t len);
/* Per-thread task files: their buffers are made with the sampler. */
#define SAMPLER_TASK_BUF 1024		/* a task's stat line is ~350 bytes */
#define SAMPLER_SCHED_BUF 128		/* schedstat: three numbers */

/* Job @j's devices (sampler.devs, added once each): its targets'
 * primary devices, then md members. At set-up. */
void sampler_resolve_job_devices(struct sampler *s, unsigned j);
/* The job's devices' counters now; zeros for a device that cannot be read. */
void sampler_read_job_devs(struct sampler *s, struct job_samp *js, struct devinfo_blkstat *out);
/* Every primary device of the job readable (and it has one). */
bool sampler_job_devs_ok(const struct sampler *s, const struct job_samp *js);

/* A thread's fault counters now: its exit figures once it has exited,
 * else its /proc task stat. false when neither can be had. Its CPU
 * time since it began goes to ts->cpu_ns (ts->cpu_ok when known). */
bool sampler_thread_faults(struct sampler *s, struct thread_samp *ts, const struct thread_stats *st,
			   uint64_t *maj, uint64_t *min);
/* A thread's CPU time since it began now into ts->cpu_ns (ts->cpu_ok):
 * its exit figure once it has exited, else its CPU clock (a thread of
 * this process) or its schedstat (a worker process's). */
bool sampler_thread_cpu(struct sampler *s, struct thread_samp *ts, const struct thread_stats *st);
/* Job @j's cells the same in every row (samplecols_job_cells): after
 * its devices and write-back tracing are set up, and again once its
 * kernel counters are open or known not to be (sampler_job_ready). */
void sampler_job_cells(struct sampler *s, unsigned j);
/* Start a sampling moment at @now (a no-op when one at @now is under
 * way): devices and residency are read afresh when next asked. */
void sampler_moment(struct sampler *s, uint64_t now);
/* End of job @j's last row: @end, or, when the job counted requests
 * since its last row less than a millisecond (dt_s's resolution) before
 * @end, the millisecond after that row, so a row holds them; 0 when no
 * last row is due (samplerend.c). */
uint64_t sampler_last_row_end(const struct sampler *s, unsigned j, uint64_t end);
/* Job @j gets no row at this sample (reading back): its previous
 * reading becomes its own copy, before the sampler's is reused. */
void sampler_keep_ps(struct sampler *s, unsigned j);
/* Job @j's threads' counters now, for its next row. */
void sampler_job_snap(struct sampler *s, unsigned j);
/* The tests' hooks the environment asks for (FAULTLINE_SAMPLER_DELAY_US:
 * each row held up; FAULTLINE_SAMPLER_STALL_US: one pass over the
 * counters held up once), at sampler_create. */
void sampler_test_hooks(struct sampler *s);
/* Prefetch what job @j's row reads (samplerow.c), or with @pass its
 * counters' pass: @stage 0 three rows ahead, 1 two, 2 the next. */
void sampler_row_prefetch(const struct sampler *s, unsigned j, int stage, bool pass);
/* One CSV row for job @j covering [its previous row, now), from the
 * counters of its last sampler_job_snap; its rates
 * for the status line in @mib_s_out and @iops_out when not NULL. */
void sampler_job_row(struct sampler *s, unsigned j, uint64_t now, const struct sys_snap *sys,
		     double *mib_s_out, double *iops_out);

#endif
