/*
 * stuck.h - a job that has not stopped within the grace period after the
 * run was asked to stop (SIGTERM, the first Ctrl-C): what it was doing,
 * and the processes that run it killed. The run controller (run.c)
 * keeps the time; what cannot be killed (a worker thread) is left to
 * end with the process, as fio does after FIO_REAP_TIMEOUT.
 */
#ifndef FAULTLINE_STUCK_H
#define FAULTLINE_STUCK_H

#include <stddef.h>
#include <stdint.h>

#include "run/jobrun.h"

/* The grace period's default: short enough for timeout(1) users
 * (fio's FIO_REAP_TIMEOUT is 300 s), long enough for a request on a slow
 * device to complete. --stop-grace changes it. */
#define STUCK_GRACE_DEFAULT_NS (10ull * 1000000000ull)
/* After the kill: how long the killed processes get to be reaped by
 * the job's own wait before the job is left as it is (a process in
 * uninterruptible sleep dies only when its I/O returns). */
#define STUCK_REAP_NS (2ull * 1000000000ull)

/* What @jr's first worker still running was doing: "worker 0 (process
 * 1234): ioengine=psync, last request: read of 4096 bytes at offset 8192
 * of /x", and how many more had not stopped. */
void stuck_describe(const struct job_run *jr, char *buf, size_t len);
/* SIGKILL to every process running @jr's workers that has not ended:
 * its thread=0 worker processes, its mem_limit process. How many were
 * signalled (0: its workers are threads of this process). */
unsigned stuck_kill(struct job_run *jr);

#endif
