/*
 * ranks.h - faultline as one rank of an MPI launch (SPEC 14).
 *
 * `mpirun -n N faultline JOB` (or Slurm's srun) starts N copies; each
 * learns from its launcher's environment that it is a rank, loads
 * Open MPI's libmpi at run time (dlopen: a binary started without MPI
 * needs no MPI library and initialises nothing) and talks to the others
 * through the few collectives below. Without a launcher every function
 * here is a no-op and ranks_on() is false.
 *
 * Every wait is a non-blocking collective polled with short sleeps, so
 * a rank that waits leaves its CPU to the workers (Open MPI's blocking
 * calls spin), and a wait that should end within an interval has a
 * deadline: past it the rank aborts the whole launch (MPI_Abort) rather
 * than hang behind a rank that stopped answering.
 */
#ifndef FAULTLINE_RANKS_H
#define FAULTLINE_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* Is this process a rank of an MPI launch? (the environment only) */
bool ranks_detect(void);
/* Under a launcher: load libmpi, initialise MPI, set RANK, NRANKS and
 * HOSTNAME in the environment for the job files. 0 also when not under
 * one (nothing done). */
int ranks_init(struct err *e);
bool ranks_on(void);
int ranks_rank(void);
int ranks_size(void);
const char *ranks_host(void);
/* How long a wait that should end within an interval may take (ns):
 * FAULTLINE_MPI_TIMEOUT seconds, default max(30 s, 10 intervals). */
void ranks_set_interval(uint64_t interval_ns);

/* Every rank here; no deadline (other ranks may still be laying out or
 * prewarming their files). */
int ranks_barrier(struct err *e);
/* @len bytes of rank 0's @buf to every rank. */
int ranks_bcast(void *buf, size_t len, struct err *e);
/* @v[i] = the largest @v[i] over all ranks, on every rank. */
int ranks_max(int *v, unsigned n, struct err *e);
/* Every rank's @len bytes of @buf to rank 0: there *@all (malloc'd, the
 * ranks' buffers one after another) and @lens[r] (ranks_size() entries,
 * the caller's); elsewhere *@all is NULL. */
int ranks_gather(const void *buf, size_t len, char **all, size_t *lens, struct err *e);

/* End the whole launch now, with @code. */
void ranks_abort(int code) __attribute__((noreturn));
/* MPI_Finalize, once, when initialised. */
void ranks_finalize(void);

#endif
