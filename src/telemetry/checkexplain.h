/*
 * checkexplain.h - the part of --check-system about what explains a
 * run: pressure stall information (host, and the mem_limit
 * cgroup's), page-cache residency (cachestat or mincore), uncached
 * reads (RWF_DONTCACHE), and for a --target file its residency by both
 * methods, side by side (what vmtouch shows).
 */
#ifndef FAULTLINE_CHECKEXPLAIN_H
#define FAULTLINE_CHECKEXPLAIN_H

#include <jansson.h>

#include "telemetry/cgroup.h"

/* Add "pressure", "residency", "uncached" (and "target_residency" when
 * @target is a regular file) to @root. */
void checkexplain_json(json_t *root, const struct cgroup_info *ci, const char *target);

#endif
