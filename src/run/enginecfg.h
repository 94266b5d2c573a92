/*
 * enginecfg.h - what an engine sees of a job (struct engine_job), made
 * from the job once when it is set up.
 */
#ifndef FAULTLINE_ENGINECFG_H
#define FAULTLINE_ENGINECFG_H

#include "engines/engine.h"
#include "job/job.h"

/* The operations @j issues (ENGINE_OP bits), for engine_check_ops. */
unsigned enginecfg_ops(const struct job *j);

/* Fill @ej's options from @j: the name, direct, uncached, atomic, what
 * the job issues, the pool's options, the files' names, and req_max as
 * the largest bs (a replay raises it later). Targets, depth and priv
 * are left as they are. */
void enginecfg_resolve(struct engine_job *ej, const struct job *j);

#endif
