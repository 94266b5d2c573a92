/*
 * vjobs.h - the user's own workloads for faultline --verdict JOBFILE...
 * each job of the files a workload (struct verdict_wl), and
 * each of its cells' job text.
 */
#ifndef FAULTLINE_VJOBS_H
#define FAULTLINE_VJOBS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "verdict/verdict_out.h"

/* Every job of the @n @files appended to @d->wls (vmcache judged when
 * the build has it; a job writing its own file only with @write_probe).
 * 0, or -errno with @e (a job file that does not parse says why, as
 * `faultline FILE` would). */
int verdict_jobs_load(char *const *files, unsigned n, bool write_probe, struct verdict_data *d,
		      bool vmcache, struct err *e);
/* The job file of @w's cell through engine @en, round @round, into @buf
 * (verdict_jobs_text_len bytes are enough). */
void verdict_jobs_text(const struct verdict_plan *p, const struct verdict_wl *w, enum judge_engine en,
		       unsigned round, const char *name, char *buf, size_t len);
size_t verdict_jobs_text_len(const struct verdict_wl *w);
/* For each replay, its trace with every request widened to whole 4 KiB
 * blocks, for the O_DIRECT cells, written into @jobdir (a workload whose
 * trace does not load is not judged, saying why). 0 or -errno. */
int verdict_jobs_prepare(struct verdict_data *d, const char *jobdir, struct err *e);
void verdict_jobs_free(struct verdict_data *d);

#endif
