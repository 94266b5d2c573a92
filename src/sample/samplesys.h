/*
 * samplesys.h - the host's own sources a sample reads (samplesys.c), in
 * a snapshot stamped with the sample's time: the sampler's rows, the
 * moments jobs end at and the run's totals take their system-wide
 * figures from two of these.
 */
#ifndef FAULTLINE_SAMPLESYS_H
#define FAULTLINE_SAMPLESYS_H

#include <stdint.h>

#include "sample/samplebase.h"

/* Open every system-wide source once (those that cannot be opened are
 * left closed and read as unavailable). */
void sampler_open_sys(struct sampler *s);
/* Every system-wide source now, stamped @now. */
void sampler_read_sys(struct sampler *s, struct sys_snap *o, uint64_t now);

#endif
