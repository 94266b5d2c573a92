/*
 * checksys_out.h - `faultline --check-system`'s report: which telemetry
 * sources and features this host offers, their current totals, and why
 * any is not (telemetry/checksys.h gathers them).
 */
#ifndef FAULTLINE_CHECKSYS_OUT_H
#define FAULTLINE_CHECKSYS_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "lib/err.h"

/* The findings for @target (NULL: none) on @f, as text, or as JSON when
 * @json. */
int checksys_out(FILE *f, const char *target, bool json, struct err *e);

#endif
