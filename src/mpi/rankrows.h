/*
 * rankrows.h - the one time series of an MPI launch: every
 * rank's sampler hands its CSV rows here instead of writing them; at
 * each interval boundary the ranks exchange, and rank 0 writes every
 * rank's rows with `host` and `rank` appended, then one `rank=all` row
 * per job, and flushes them as the run goes (whole rows, csvout.c).
 *
 * The all row goes by column NAME, never by position, so columns added
 * to the sampler later merge by the rules of their names (rankrows.c,
 * and the man page's "Many hosts").
 */
#ifndef FAULTLINE_RANKROWS_H
#define FAULTLINE_RANKROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "out/csvout.h"
#include "lib/err.h"
#include "lib/histogram.h"

/* The interval histograms a row comes with: reads, writes, flushes. */
enum { RANKROWS_LAT_READ, RANKROWS_LAT_WRITE, RANKROWS_LAT_FLUSH, RANKROWS_NLAT };

struct rankrows {
	bool root;			/* rank 0: writes the CSV */
	int nranks;
	char **hosts;			/* rank 0: each rank's host name */
	const char *header;		/* the sampler's header, without host,rank */
	struct csvout csv;
	bool have_csv;
	int *stop;			/* set when the CSV's reader went away */
	char *buf;			/* this rank's row records since the last exchange */
	struct hist *acc;		/* rank 0: RANKROWS_NLAT + 1 (merging, unpacking) */
	size_t len, cap;
	bool dropped;			/* a row did not fit in memory */
	/* What the exchanges cost at rank 0 (FAULTLINE_MPI_STATS=1). */
	uint64_t nexch, rows, bytes, ns_sum, ns_max;
	uint64_t ns_work;		/* ... of which parsing, merging, writing */
};

/* Rank 0 creates the CSV (@csv_path NULL: none anywhere; the exchanges
 * then carry only the run's flags), before the ranks agree that every
 * one of them is ready: a CSV that cannot be made stops all. */
int rankrows_init(struct rankrows *rr, const char *csv_path, const char *header, int *stop,
		  struct err *e);
/* Collective, once the ranks agreed to run: every rank's host name to
 * rank 0, which writes the header. */
int rankrows_start(struct rankrows *rr, struct err *e);
/* The sampler's sink: one row (no newline) and its interval histograms
 * (NULL: none) for the next exchange. */
void rankrows_add(void *rr, const char *line, size_t len, const struct hist *const lat[RANKROWS_NLAT]);
/* Collective: rank 0 writes every rank's rows since the last exchange
 * and their all rows; then @flags[i] becomes the largest over ranks. */
int rankrows_exchange(struct rankrows *rr, int *flags, unsigned nflags, struct err *e);
/* The errno that cut the CSV short at rank 0, or 0. */
int rankrows_csv_error(const struct rankrows *rr);
void rankrows_close(struct rankrows *rr);

/*
 * The all row of one job from its @n rows (CSV lines under @header,
 * without host and rank), the ranks' hosts in @hosts and their interval
 * histograms merged in @lat (RANKROWS_NLAT of them, each NULL when not
 * every row had it; @lat NULL: none): into @out (no newline). Returns
 * its length, or -ENOSPC.
 */
int rankrows_merge(const char *header, unsigned n, const char *const *rows, const char *const *hosts,
		   const struct hist *const *lat, char *out, size_t cap);

#endif
