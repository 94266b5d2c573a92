/*
 * cappc.h - the pagecache method's buffered reads made requests: pure,
 * so tests/test_cappc.c drives it.
 *
 * The kernel's filemap_read takes a read's pages in batches and reports
 * each batch (mm_filemap_get_pages) as the pages left to read: from the
 * batch's first page to the read's last. A read of 64 pages that found
 * them in two batches reports 0-63, then 31-63. Consecutive reports of
 * one task on one file that end on the same page and start inside the
 * one before are one read; anything else is a new one. The rule cannot
 * tell a task's second read of the tail of what it just read (0-63,
 * then 40-63) from a batch of the first: that read is merged away.
 */
#ifndef FAULTLINE_CAPPC_H
#define FAULTLINE_CAPPC_H

#include <stddef.h>
#include <stdint.h>

struct cappc_last {
	int tid;
	uint32_t dev;
	uint64_t ino, first, last;	/* pages, inclusive */
};

struct cappc {
	struct cappc_last *t;
	size_t n, cap;
};

/* Task @tid reported pages @first..@last of inode @ino on device @dev:
 * 1 when it is a new read, 0 when it is a batch of the read before,
 * -ENOMEM. */
int cappc_read(struct cappc *m, int tid, uint32_t dev, uint64_t ino, uint64_t first, uint64_t last);
/* The task ended: its tid may come back as another. */
void cappc_forget(struct cappc *m, int tid);
void cappc_free(struct cappc *m);

#endif
