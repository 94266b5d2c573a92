/*
 * ranks.h - faultline as one rank of an MPI launch.
 *
 * `mpirun -n N faultline JOB` (or Slurm's srun) starts N copies; each
 * learns from its launcher's environment that it is a rank, loads
 * Open MPI's libmpi at run time (dlopen: a binary started without MPI
 * needs no MPI library and initialises nothing) and talks to the others
 * through the few collectives below. Without a launcher every function
 * here is a no-op and ranks_on() is false.
 *
 * Every exchange is point to point through rank 0, polled with short
 * sleeps, so a rank that waits leaves its CPU to the workers (Open MPI's
 * blocking calls spin), and a wait that should end within an interval
 * has a deadline. Past it, rank 0 names the ranks it did not hear from
 * as lost and goes on without them (the run then ends with what the
 * others have); another rank that does not hear from rank 0 says so and
 * ends.
 */
#ifndef FAULTLINE_RANKS_H
#define FAULTLINE_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "out/rankout.h"

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

/* What the exchanges have to say (a rank lost, rows that came damaged,
 * ...) goes to @fn, as it happens; nothing here prints. Without a hook
 * (the default) it is dropped. rankrows.c and rankresult.c hand theirs
 * over through ranks_note. */
void ranks_set_notes(void (*fn)(const struct rank_note *n));
void ranks_note(const struct rank_note *n);

/* End the whole launch now, with @code. */
void ranks_abort(int code) __attribute__((noreturn));
/* MPI_Finalize, once, when initialised; with a rank lost, MPI_Abort
 * with @status (1 if 0) instead, as MPI_Finalize would wait for it. */
void ranks_finalize(int status);

/* How many ranks rank 0 stopped waiting for (at another rank: as rank
 * 0 last said). A wait with a deadline that a rank misses makes rank 0
 * name it on stderr, leave it out of every later exchange and gather
 * (its length 0) and tell the others; the run then ends with what the
 * other ranks have. */
int ranks_lost(void);
/* Rank 0: was @rank lost? */
bool ranks_is_lost(int rank);
/* Rank 0: @rank's host name ("?" elsewhere). */
const char *ranks_host_of(int rank);

#endif
