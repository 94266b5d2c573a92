/*
 * report.h - the human summary (--output-format=normal): per
 * job its settings, throughput, latency, faults and device traffic with
 * read amplification; the system-wide block; and with several jobs a
 * one-line-per-job comparison table.
 */
#ifndef FAULTLINE_REPORT_H
#define FAULTLINE_REPORT_H

#include <stdio.h>

#include "out/results.h"

/* 0, or -EIO when @f reported a write error. */
int report_normal(FILE *f, const struct run_result *r);
/* The jobs of @r and their comparison table, without the header and the
 * system block (the aggregate of an MPI launch). */
int report_jobs(FILE *f, const struct run_result *r);
/* One line per failed job of @r on @f: "faultline: <who>job 'x' failed:
 * <why>", or given up, a job that did not stop (@who: "" or an MPI
 * rank's "rank N (host): "). */
void report_failures(FILE *f, const struct run_result *r, const char *who);

#endif
