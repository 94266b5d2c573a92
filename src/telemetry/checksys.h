/*
 * checksys.h - `faultline --check-system`: which telemetry sources and
 * features this host offers, their current totals, and why any is not.
 */
#ifndef FAULTLINE_CHECKSYS_H
#define FAULTLINE_CHECKSYS_H

#include <jansson.h>

#include "lib/err.h"

/* The findings as JSON (also the source of the text form,
 * out/checksys_out.c). */
json_t *checksys_build(const char *target, struct err *e);

#endif
